/* bench_cancel: how fast a cancelled build returns, and what a progress
 * callback costs.
 *
 * An IVF_PQ segment build (64 partitions x 16 sub-vectors, trained locally)
 * over N x 128 vectors (default 100k).  First the build time with no
 * callback against a callback that does nothing, interleaved, median of
 * `repeats` each.  Then `cancels` builds, each cancelled from another thread
 * after a random delay in [0, build time): the latency is the time from
 * lance_index_build_cancel() to the build's return.  Reports the median and
 * worst latency, and the worst per stage the build was in.
 * Usage: bench_cancel [--csv] [rows] [repeats] [cancels]
 *
 * --csv adds, after the human output, a line "# csv" and then CSV records
 * (no header line; the first field names the record; SERIES is "trained
 * locally" or "injected model"; times in ms):
 *   cancel,"SERIES","STAGE",LATENCY_MS       one per cancelled build, in order
 *   summary,"SERIES",CANCELLED,FINISHED,MEDIAN_MS,WORST_MS
 * STAGE is the stage the build was in when cancelled ("NAME", "after NAME"
 * or "(start)"); MEDIAN_MS is the upper middle for an even count; a series
 * in which every build finished before its cancel has no summary. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "demo_data.h"
#include "die.h"
#include "lance/lance.h"
#include "measure.h"
#include "segment_params.h"
#include "temp_dir.h"

static LanceDataset* ds;
static LanceVectorIndexParams params;
static const LanceVectorModel* injected;

static void nothing(void* u, int32_t e, const char* s, uint64_t t, const char* un, uint64_t c) {
    (void)u, (void)e, (void)s, (void)t, (void)un, (void)c;
}

/* The stage the build is in, as the callback last saw it (caller's thread). */
static char current_stage[64];
static void track(void* u, int32_t e, const char* s, uint64_t t, const char* un, uint64_t c) {
    (void)u, (void)t, (void)un, (void)c;
    if (e == LANCE_INDEX_BUILD_PROGRESS_STAGE_START) snprintf(current_stage, sizeof current_stage, "%s", s);
    if (e == LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE) snprintf(current_stage, sizeof current_stage, "after %s", s);
}

/* One segment build over the whole dataset, with the shared model when one
 * is injected, else trained locally.  NULL fn = no progress callback. */
static int build(LanceIndexBuildProgressCallback fn, LanceIndexBuildCancelToken* token) {
    LanceIndexSegmentBuilder* b = vector_segment_builder_new(ds, "vec", NULL, &params, NULL, injected);
    if (!b) die("builder");
    if ((fn && lance_index_segment_builder_set_progress_callback(b, fn, NULL) != 0) ||
        (token && lance_index_segment_builder_set_cancel_token(b, token) != 0))
        die("builder settings");
    uint8_t* bytes = NULL;
    size_t len = 0;
    int rc = lance_index_segment_builder_execute_uncommitted(b, &bytes, &len);
    int code = rc == 0 ? 0 : (int)lance_last_error_code();
    lance_free_bytes(bytes);
    lance_index_segment_builder_free(b);
    return code;
}

typedef struct {
    LanceIndexBuildCancelToken* token;
    double delay;
    double cancelled_at;
    char stage[64];
} Cancel;

static void* cancel_later(void* arg) {
    Cancel* c = arg;
    struct timespec d = {(time_t)c->delay, (long)((c->delay - (double)(time_t)c->delay) * 1e9)};
    nanosleep(&d, NULL);
    snprintf(c->stage, sizeof c->stage, "%s", current_stage);
    c->cancelled_at = monotonic_seconds();
    lance_index_build_cancel(c->token);
    return NULL;
}

/* One series of cancels: every latency with the stage it landed in. */
typedef struct {
    const char* what;
    int n, finished;
    double lat[256];
    char stage[256][64];
} Series;

static void cancel_series(double t, int cancels, const char* what, Series* out) {
    out->what = what;
    out->n = out->finished = 0;
    srand(12345);
    struct {
        const char* stage;
        double worst;
        int count;
    } per[16];
    int stages = 0;
    for (int i = 0; i < cancels; i++) {
        Cancel c = {lance_index_build_cancel_token_new(), t * rand() / ((double)RAND_MAX + 1), 0, ""};
        current_stage[0] = 0;
        pthread_t th;
        pthread_create(&th, NULL, cancel_later, &c);
        int code = build(track, c.token);
        double returned = monotonic_seconds();
        pthread_join(th, NULL);
        lance_index_build_cancel_token_free(c.token);
        if (code == 0) {
            out->finished++;
            continue;
        }
        if (code != LANCE_ERR_CANCELLED) die("cancelled build");
        double l = returned - c.cancelled_at;
        char* stage = out->stage[out->n];
        snprintf(stage, sizeof out->stage[0], "%s", c.stage[0] ? c.stage : "(start)");
        out->lat[out->n++] = l;
        int s = 0;
        while (s < stages && strcmp(per[s].stage, stage) != 0) s++;
        if (s == stages && stages < 16) {
            per[stages].stage = stage;
            per[stages].worst = 0;
            per[stages].count = 0;
            stages++;
        }
        if (s < 16) {
            if (l > per[s].worst) per[s].worst = l;
            per[s].count++;
        }
    }
    if (lance_dataset_latest_version(ds) != 1) die("a cancelled build committed");
    double sorted[256];
    memcpy(sorted, out->lat, sizeof(double) * (size_t)out->n);
    sort_doubles(sorted, (size_t)out->n);
    int n = out->n;
    if (n > 0)
        printf("%s: cancel latency over %d cancels at random points (%d builds finished first): median %.0f ms, "
               "worst %.0f ms\n",
               what, n, out->finished, sorted[n / 2] * 1000, sorted[n - 1] * 1000);
    for (int s = 0; s < stages; s++)
        printf("  cancelled during %-24s %2d times, worst %.0f ms\n", per[s].stage, per[s].count, per[s].worst * 1000);
}

/* The --csv block (see the header comment). */
static void print_csv(const Series* series, int count) {
    printf("# csv\n");
    for (int i = 0; i < count; i++) {
        const Series* x = &series[i];
        for (int j = 0; j < x->n; j++) printf("cancel,\"%s\",\"%s\",%.3f\n", x->what, x->stage[j], x->lat[j] * 1000);
        if (x->n == 0) continue; /* no summary: there was nothing to measure */
        double sorted[256];
        memcpy(sorted, x->lat, sizeof(double) * (size_t)x->n);
        sort_doubles(sorted, (size_t)x->n);
        printf("summary,\"%s\",%d,%d,%.3f,%.3f\n", x->what, x->n, x->finished, sorted[x->n / 2] * 1000,
               sorted[x->n - 1] * 1000);
    }
}

int main(int argc, char** argv) {
    int csv = take_flag(&argc, argv, "--csv");
    int64_t rows = argc > 1 ? atoll(argv[1]) : 100000;
    int repeats = argc > 2 ? atoi(argv[2]) : 3;
    int cancels = argc > 3 ? atoi(argv[3]) : 20;
    if (repeats > 16) repeats = 16;
    if (cancels > 256) cancels = 256;
    char* dir = temp_dir_create("bench-cancel");
    if (!dir) die_errno("creating a temporary directory");
    char uri[600];
    snprintf(uri, sizeof uri, "%s/c.lance", dir);
    DemoData data;
    if (demo_data_make(&data, rows, 128, 64, 2.0f, 5) != 0) die_errno("generating the vectors");
    ds = demo_data_write(uri, &data, 0, rows, LANCE_WRITE_CREATE, (uint64_t)((rows + 15) / 16), NULL);
    if (!ds) die("write");
    params.index_type = LANCE_INDEX_IVF_PQ;
    params.num_partitions = 64;
    params.num_sub_vectors = 16;

    double plain[16], with_cb[16];
    for (int r = 0; r < repeats; r++) {
        double a = monotonic_seconds();
        if (build(NULL, NULL) != 0) die("build");
        double b = monotonic_seconds();
        if (build(nothing, NULL) != 0) die("build with callback");
        double c = monotonic_seconds();
        plain[r] = b - a;
        with_cb[r] = c - b;
    }
    sort_doubles(plain, (size_t)repeats);
    sort_doubles(with_cb, (size_t)repeats);
    double t = plain[repeats / 2];
    printf("IVF_PQ segment build, %lld x 128, median of %d: no callback %.2f s, no-op callback %.2f s, ratio %.3f\n",
           (long long)rows, repeats, t, with_cb[repeats / 2], with_cb[repeats / 2] / t);

    static Series series[2];
    cancel_series(t, cancels, "trained locally", &series[0]);
    LanceVectorModel* model = NULL;
    if (lance_vector_model_train(ds, "vec", &params, NULL, 0, NULL, &model) != 0) die("train");
    injected = model;
    double i0 = monotonic_seconds();
    if (build(NULL, NULL) != 0) die("build with the model");
    double ti = monotonic_seconds() - i0;
    printf("IVF_PQ segment build with an injected model: %.2f s\n", ti);
    cancel_series(ti, cancels, "injected model", &series[1]);
    if (csv) print_csv(series, 2);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
    demo_data_free(&data);
    remove_tree(dir);
    free(dir);
    return 0;
}
