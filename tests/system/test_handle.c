/* A dataset handle shared between threads: reads never wait for a build
 * committing through the same handle, callbacks cannot re-enter the
 * library, and a scanner's stream can be written back through the library. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "test_util.h"

static TuData data;
static char* dir;

/* ---- reads during a one-shot build through the same handle ---- */

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int build_started;  /* the build reached its first progress event */
    int reads_done;     /* the reader finished its reads */
    int build_returned; /* the build call returned */
    int reader_timed_out;
    int build_rc;
} Rendezvous;

static Rendezvous rv = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0};

/* Waits until *flag is set, at most `seconds`; returns whether it was set. */
static int wait_flag(int* flag, int seconds) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += seconds;
    pthread_mutex_lock(&rv.lock);
    int rc = 0;
    while (!*flag && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&rv.changed, &rv.lock, &deadline);
    int set = *flag;
    pthread_mutex_unlock(&rv.lock);
    return set;
}

static void set_flag(int* flag) {
    pthread_mutex_lock(&rv.lock);
    *flag = 1;
    pthread_cond_broadcast(&rv.changed);
    pthread_mutex_unlock(&rv.lock);
}

/* The build holds still at its first event until the reader is done, so the
 * reads certainly happen while the build runs. */
static void hold_build(void* user, int32_t event, const char* stage, uint64_t total, const char* unit,
                       uint64_t completed) {
    (void)user, (void)event, (void)stage, (void)total, (void)unit, (void)completed;
    if (!rv.build_started) {
        set_flag(&rv.build_started);
        wait_flag(&rv.reads_done, 120);
    }
}

typedef struct {
    LanceDataset* ds;
} BuildArgs;

static void* run_build(void* arg) {
    BuildArgs* a = arg;
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 8;
    LanceIndexBuildControl control = {0};
    control.progress = hold_build;
    rv.build_rc = lance_dataset_create_vector_index_v2(a->ds, "vec", "vec_idx", &p, false,
                                                       &(LanceIndexCreateOptions){.control = &control});
    set_flag(&rv.build_returned);
    return NULL;
}

static void test_reads_do_not_wait_for_a_build(void) {
    char uri[600];
    snprintf(uri, sizeof uri, "%s/shared.lance", dir);
    LanceDataset* ds = tu_write(uri, &data, 0, data.rows, LANCE_WRITE_CREATE, 500);
    CHECK(ds != NULL);
    uint64_t before = lance_dataset_version(ds);

    pthread_t builder;
    BuildArgs args = {ds};
    pthread_create(&builder, NULL, run_build, &args);
    CHECK(wait_flag(&rv.build_started, 120));

    /* The build is running (held at its first event): reads through the same
     * handle complete, and see the snapshot from before the build. */
    CHECK(lance_dataset_version(ds) == before);
    CHECK(lance_dataset_count_rows(ds) == (uint64_t)data.rows);
    CHECK(lance_dataset_index_count(ds) == 0);
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK(s != NULL);
    const float* query = data.vectors + 17 * data.dim;
    CHECK_OK(lance_scanner_nearest(s, "vec", query, (size_t)data.dim, LANCE_DTYPE_FLOAT32, 5));
    int64_t got[5], truth[5];
    CHECK(tu_knn_ids(s, got, 5) == 5);
    tu_brute_force_knn(&data, query, 5, truth);
    CHECK(memcmp(got, truth, sizeof got) == 0);
    lance_scanner_close(s);
    CHECK(!rv.build_returned);
    set_flag(&rv.reads_done);

    pthread_join(builder, NULL);
    CHECK(rv.build_rc == 0);
    CHECK(lance_dataset_version(ds) == before + 1);
    CHECK(lance_dataset_index_count(ds) == 1);
    lance_dataset_close(ds);
}

/* ---- a progress callback cannot re-enter the library ---- */

typedef struct {
    LanceDataset* ds;
    LanceIndexBuildCancelToken* token;
    int calls;
    uint64_t version_seen;
    int version_code;
    int cancel_query_ok;
} Reentry;

static void reenter(void* user, int32_t event, const char* stage, uint64_t total, const char* unit,
                    uint64_t completed) {
    (void)event, (void)stage, (void)total, (void)unit, (void)completed;
    Reentry* r = user;
    if (r->calls++ > 0) return;
    r->version_seen = lance_dataset_version(r->ds);
    r->version_code = lance_last_error_code();
    /* The two cancel-token calls are allowed. */
    r->cancel_query_ok = !lance_index_build_cancel_requested(r->token) && lance_last_error_code() == LANCE_OK;
}

static void test_callback_cannot_reenter(void) {
    char uri[600];
    snprintf(uri, sizeof uri, "%s/reentry.lance", dir);
    LanceDataset* ds = tu_write(uri, &data, 0, data.rows, LANCE_WRITE_CREATE, 500);
    CHECK(ds != NULL);
    Reentry r = {ds, lance_index_build_cancel_token_new(), 0, 99, -1, 0};
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 4;
    LanceIndexBuildControl control = {reenter, &r, r.token};
    CHECK_OK(lance_dataset_create_vector_index_v2(ds, "vec", NULL, &p, false,
                                                  &(LanceIndexCreateOptions){.control = &control}));
    CHECK(r.calls > 0);
    CHECK(r.version_seen == 0);
    CHECK(r.version_code == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(r.cancel_query_ok);
    /* Outside the callback the same call works again. */
    CHECK(lance_dataset_version(ds) == 2);
    lance_index_build_cancel_token_free(r.token);
    lance_dataset_close(ds);
}

/* ---- a scanner's stream written to another dataset ---- */

static void test_scanner_stream_written_back(void) {
    char src_uri[600], dst_uri[600];
    snprintf(src_uri, sizeof src_uri, "%s/source.lance", dir);
    snprintf(dst_uri, sizeof dst_uri, "%s/copy.lance", dir);
    LanceDataset* src = tu_write(src_uri, &data, 0, data.rows, LANCE_WRITE_CREATE, 700);
    CHECK(src != NULL);
    LanceScanner* s = lance_scanner_new(src, NULL, "id % 3 = 0");
    CHECK(s != NULL);
    CHECK_OK(lance_scanner_set_batch_size(s, 256));
    struct ArrowArrayStream stream;
    CHECK_OK(lance_scanner_to_arrow_stream(s, &stream));
    struct ArrowSchema schema;
    CHECK(stream.get_schema(&stream, &schema) == 0);
    LanceDataset* copy = NULL;
    CHECK_OK(lance_dataset_write(dst_uri, &schema, &stream, LANCE_WRITE_CREATE, NULL, &copy));
    schema.release(&schema);
    CHECK(copy != NULL);
    uint64_t expected = (uint64_t)(data.rows + 2) / 3;
    CHECK(lance_dataset_count_rows(copy) == expected);

    /* Every copied row is one the filter selects, each once. */
    const char* cols[] = {"id", NULL};
    LanceScanner* check = lance_scanner_new(copy, cols, NULL);
    CHECK(check != NULL);
    LanceBatch* batch;
    int64_t sum = 0, bad = 0, rows = 0;
    while (lance_scanner_next(check, &batch) == 0) {
        struct ArrowArray a;
        struct ArrowSchema sc;
        CHECK_OK(lance_batch_to_arrow(batch, &a, &sc));
        const int64_t* ids = (const int64_t*)a.children[0]->buffers[1] + a.children[0]->offset;
        for (int64_t i = 0; i < a.length; i++) {
            sum += ids[i];
            if (ids[i] % 3 != 0) bad++;
        }
        rows += a.length;
        a.release(&a);
        sc.release(&sc);
        lance_batch_free(batch);
    }
    int64_t n = (int64_t)expected, expected_sum = 3 * (n - 1) * n / 2;
    CHECK(rows == n);
    CHECK(bad == 0);
    CHECK(sum == expected_sum);
    lance_scanner_close(check);
    lance_scanner_close(s);
    lance_dataset_close(copy);
    lance_dataset_close(src);
}

/* ---- the bounded fragment-id listing ---- */

int main(void) {
    data = tu_make_data(6000, 16, 8, 0.5f, 7);
    dir = tu_temp_dir("handle");
    RUN(test_reads_do_not_wait_for_a_build);
    RUN(test_callback_cannot_reenter);
    RUN(test_scanner_stream_written_back);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_handle");
}
