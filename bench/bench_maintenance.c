/* bench_maintenance: the maintenance of an index with hundreds of segments
 * (issue 43), on each store given, one after another in one process.
 *
 *   bench_maintenance [URI ...] [--fragments N] [--rows R] [--dim D]
 *                     [--append A] [--segments M] [--partitions P]
 *                     [--plan-calls C] [--queries Q] [--smoke]
 *
 * Per URI (a local path or an object store's URI such as s3://; none = a
 * new temporary directory), a dataset that must not exist yet:
 *   1. N fragments of R clustered vectors (float32 x D, common/demo_data.h;
 *      default 300 x 200 x 32) are written; one IVF_FLAT model with P
 *      partitions (16) is trained on them; one segment is built per
 *      fragment with the model, and the N segments are committed as index
 *      "vec_idx" in one call (timed: "commit_build_s");
 *   2. A more fragments (8) are appended; the dataset is opened again and
 *      lance_dataset_plan_index_maintenance() called C + 1 times (9 + 1)
 *      with the policy target_rows_per_segment = ceil(N x R / M),
 *      max_segments = M (16): "plan_first_ms" is the first call on the new
 *      handle, "plan_ms" the median of the C after it.  Every call must give
 *      the same plan, and the latest version must be the one planned from
 *      afterwards (the plan writes nothing);
 *   3. the plan's tasks run in this process, one after another: each merge
 *      reads its sources (lance_dataset_index_segment_metadata()) and merges
 *      them (lance_dataset_merge_index_segments()), timed together
 *      ("merge_s"); the bytes merged are the sources' files, their
 *      "size_bytes" in lance_dataset_index_segments_json(), and give
 *      "merge_mb_per_s" (10^6 bytes) and "merge_s_per_gb" (10^9 bytes);
 *      "merge_ms_per_segment" is merge_s over the segments merged (small
 *      segments cost a fixed time each, whatever their bytes); each
 *      build (a delta over appended fragments) is a segment built with the
 *      model ("delta_build_s"); then every segment is committed with
 *      replace in one call ("commit_s");
 *   4. checks: the index has the plan's segments_after segments, the
 *      coverage report lists no unindexed and no stale fragment, and Q
 *      k-NN queries (20, k = 10, every partition probed) answer exactly as
 *      brute force over every row.
 * Prints one JSON line of figures per URI on stdout (bench/s3_bench.sh
 * --maintenance puts the local disk and s3:// side by side), what it does
 * on stderr.  --smoke is the smallest shape that runs every step (24
 * fragments of 64 rows x 16, 2 appended, 4 segments, 8 partitions, 3 plan
 * calls, 5 queries), whose figures mean nothing.
 *
 * Storage options from LANCE_STORAGE_OPTIONS and --storage-option
 * key=value (common/storage_options.h).  Exit 0 ok, 1 a check or the
 * library failed (its message on stderr), 2 bad arguments. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_data.h"
#include "die.h"
#include "id_list.h"
#include "json.h"
#include "lance/lance.h"
#include "measure.h"
#include "segment_params.h"
#include "storage_options.h"
#include "temp_dir.h"

#define INDEX "vec_idx"

typedef struct {
    uint64_t fragments, rows, dim, append, segments, partitions, plan_calls, queries;
} Shape;

static const char* const* storage_opts;
static int failures;

static void check(int ok, const char* uri, const char* what) {
    if (ok) return;
    fprintf(stderr, "bench_maintenance: FAIL on %s: %s\n", uri, what);
    failures++;
}

/* For a listing or a plan that is not the JSON lance.h describes. */
static _Noreturn void bad_json(const char* what) {
    fprintf(stderr, "bench_maintenance: %s is not the JSON lance.h describes\n", what);
    exit(1);
}

static const JValue* member(const JValue* object, const char* key, JType type) {
    const JValue* v = json_get(object, key);
    return v && v->type == type ? v : NULL;
}

static double number(const JValue* object, const char* key) {
    const JValue* v = member(object, key, J_NUMBER);
    return v ? v->number : -1;
}

/* The "size_bytes" of segment `uuid` of the index in a parsed
 * lance_dataset_index_segments_json(); -1 when it is not there or unknown. */
static double segment_bytes(const JValue* listing, const char* uuid) {
    for (size_t i = 0; listing && i < listing->count; i++) {
        const JValue* s = listing->items[i];
        const JValue* name = member(s, "name", J_STRING);
        const JValue* id = member(s, "uuid", J_STRING);
        if (name && id && !strcmp(name->string, INDEX) && !strcmp(id->string, uuid)) return number(s, "size_bytes");
    }
    return -1;
}

/* A task's "fragment_ids" as a malloc'd array (free it), their count in *count. */
static uint32_t* task_fragments(const JValue* task, size_t* count) {
    const JValue* f = member(task, "fragment_ids", J_ARRAY);
    *count = f ? f->count : 0;
    uint32_t* ids = calloc(*count + 1, sizeof *ids);
    if (!ids) die_errno("allocating fragment ids");
    for (size_t k = 0; k < *count; k++) ids[k] = (uint32_t)f->items[k]->number;
    return ids;
}

/* Segment bytes gathered for the closing commit. */
typedef struct {
    uint8_t** bytes;
    size_t* lens;
    size_t count, cap;
} Segments;

static void segments_push(Segments* s, uint8_t* bytes, size_t len) {
    if (s->count == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->bytes = realloc(s->bytes, s->cap * sizeof *s->bytes);
        s->lens = realloc(s->lens, s->cap * sizeof *s->lens);
        if (!s->bytes || !s->lens) die_errno("allocating segment lists");
    }
    s->bytes[s->count] = bytes;
    s->lens[s->count++] = len;
}

static void segments_clear(Segments* s) {
    for (size_t i = 0; i < s->count; i++) lance_free_bytes(s->bytes[i]);
    free(s->bytes);
    free(s->lens);
    memset(s, 0, sizeof *s);
}

static void run(const char* uri, const Shape* sh, const DemoData* data) {
    const int64_t base_rows = (int64_t)(sh->fragments * sh->rows);
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = (uint32_t)sh->partitions;
    fprintf(stderr, "== %s: %llu fragments x %llu rows x %llu, %llu appended\n", uri, (unsigned long long)sh->fragments,
            (unsigned long long)sh->rows, (unsigned long long)sh->dim, (unsigned long long)sh->append);

    /* 1. The index of one segment per fragment. */
    double t0 = monotonic_seconds();
    LanceDataset* ds = demo_data_write(uri, data, 0, base_rows, LANCE_WRITE_CREATE, sh->rows, storage_opts);
    if (!ds) die("writing the dataset");
    double write_s = monotonic_seconds() - t0;
    LanceVectorModel* model = NULL;
    t0 = monotonic_seconds();
    if (lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model) != 0) die("training");
    double train_s = monotonic_seconds() - t0;
    Segments built = {0};
    t0 = monotonic_seconds();
    for (uint32_t f = 0; f < sh->fragments; f++) {
        uint8_t* bytes = NULL;
        size_t len = 0;
        if (vector_segment_build(ds, "vec", &p, model, &f, 1, NULL, &bytes, &len) != 0) die("a segment build");
        segments_push(&built, bytes, len);
    }
    double build_s = monotonic_seconds() - t0;
    t0 = monotonic_seconds();
    if (lance_dataset_commit_index_segments_v2(ds, INDEX, "vec", (const uint8_t* const*)built.bytes, built.lens,
                                               built.count, NULL, NULL) != 0)
        die("the commit of the built segments");
    double commit_build_s = monotonic_seconds() - t0;
    segments_clear(&built);
    lance_dataset_close(ds);
    fprintf(stderr, "built and committed %llu segments (build %.1f s, commit %.2f s)\n",
            (unsigned long long)sh->fragments, build_s, commit_build_s);

    /* 2. An append, then the plan, from a handle opened as a coordinator would. */
    ds = demo_data_write(uri, data, base_rows, (int64_t)(sh->append * sh->rows), LANCE_WRITE_APPEND, sh->rows,
                         storage_opts);
    if (!ds) die("appending");
    lance_dataset_close(ds);
    t0 = monotonic_seconds();
    ds = lance_dataset_open(uri, storage_opts, 0);
    if (!ds) die("opening the dataset");
    double open_ms = (monotonic_seconds() - t0) * 1000;
    uint64_t planned_version = lance_dataset_version(ds);
    LanceIndexMaintenanceOptions policy = {0};
    policy.target_rows_per_segment = (sh->fragments * sh->rows + sh->segments - 1) / sh->segments;
    policy.max_segments = (uint32_t)sh->segments;
    t0 = monotonic_seconds();
    char* plan_text = lance_dataset_plan_index_maintenance(ds, INDEX, &policy);
    double plan_first_ms = (monotonic_seconds() - t0) * 1000;
    if (!plan_text) die("planning");
    double* plan_ms = calloc(sh->plan_calls, sizeof *plan_ms);
    if (!plan_ms) die_errno("allocating timings");
    int same = 1;
    for (uint64_t i = 0; i < sh->plan_calls; i++) {
        t0 = monotonic_seconds();
        char* again = lance_dataset_plan_index_maintenance(ds, INDEX, &policy);
        plan_ms[i] = (monotonic_seconds() - t0) * 1000;
        if (!again) die("planning again");
        same &= !strcmp(again, plan_text);
        lance_free_string(again);
    }
    double plan_median_ms = median_of(plan_ms, sh->plan_calls);
    free(plan_ms);
    check(same, uri, "the same version gave different plans");
    LanceDataset* latest = lance_dataset_open(uri, storage_opts, 0);
    if (!latest) die("opening the latest version");
    check(lance_dataset_version(latest) == planned_version, uri, "planning made a new version");
    lance_dataset_close(latest);

    JValue* plan = json_parse(plan_text);
    const JValue* tasks = member(plan, "tasks", J_ARRAY);
    if (!tasks) bad_json("the plan");
    size_t segments_before = (size_t)number(plan, "segments_before");
    size_t segments_after = (size_t)number(plan, "segments_after");
    check(segments_before == sh->fragments, uri, "segments_before is not the segments committed");

    /* 3. The tasks, then one commit. */
    char* listing_text = lance_dataset_index_segments_json(ds);
    if (!listing_text) die("listing the segments");
    JValue* listing = json_parse(listing_text);
    if (!listing || listing->type != J_ARRAY) bad_json("the segment listing");
    Segments out = {0};
    double merge_s = 0, delta_s = 0, merged_bytes = 0;
    size_t merges = 0, builds = 0, merged_sources = 0;
    for (size_t t = 0; t < tasks->count; t++) {
        const JValue* task = tasks->items[t];
        const JValue* kind = member(task, "kind", J_STRING);
        uint8_t* bytes = NULL;
        size_t len = 0;
        if (kind && !strcmp(kind->string, "merge")) {
            const JValue* uuids = member(task, "segment_uuids", J_ARRAY);
            size_t n = uuids ? uuids->count : 0;
            uint8_t** sources = calloc(n + 1, sizeof *sources);
            size_t* lens = calloc(n + 1, sizeof *lens);
            if (!sources || !lens) die_errno("allocating a merge");
            t0 = monotonic_seconds();
            for (size_t k = 0; k < n; k++)
                if (lance_dataset_index_segment_metadata(ds, INDEX, uuids->items[k]->string, &sources[k], &lens[k]) !=
                    0)
                    die("reading a segment to merge");
            if (lance_dataset_merge_index_segments(ds, (const uint8_t* const*)sources, lens, n, &bytes, &len) != 0)
                die("a merge");
            merge_s += monotonic_seconds() - t0;
            for (size_t k = 0; k < n; k++) {
                double size = segment_bytes(listing, uuids->items[k]->string);
                check(size >= 0, uri, "a merged segment has no size_bytes in the listing");
                merged_bytes += size;
                lance_free_bytes(sources[k]);
            }
            free(sources);
            free(lens);
            merges++;
            merged_sources += n;
        } else if (kind && !strcmp(kind->string, "build")) {
            size_t n = 0;
            uint32_t* ids = task_fragments(task, &n);
            t0 = monotonic_seconds();
            if (vector_segment_build(ds, "vec", &p, model, ids, n, NULL, &bytes, &len) != 0) die("a delta build");
            delta_s += monotonic_seconds() - t0;
            free(ids);
            builds++;
        } else {
            /* Nothing in this benchmark deletes or compacts: no rebuild. */
            check(0, uri, "the plan has a task that is neither merge nor build");
            continue;
        }
        segments_push(&out, bytes, len);
    }
    LanceCommitIndexOptions commit = {0};
    commit.replace = true;
    t0 = monotonic_seconds();
    if (lance_dataset_commit_index_segments_v2(ds, INDEX, "vec", (const uint8_t* const*)out.bytes, out.lens, out.count,
                                               &commit, NULL) != 0)
        die("the commit of the plan's segments");
    double commit_s = monotonic_seconds() - t0;
    segments_clear(&out);
    fprintf(stderr, "ran %zu merges of %zu segments (%.2f s) and %zu delta builds, committed in %.2f s\n", merges,
            merged_sources, merge_s, builds, commit_s);

    /* 4. The outcome. */
    uint64_t segments_now = lance_dataset_index_segment_count(ds, INDEX);
    check(segments_now == segments_after, uri, "the index's segment count is not the plan's segments_after");
    char* coverage_text = lance_dataset_index_coverage_json(ds, INDEX);
    if (!coverage_text) die("the coverage report");
    JValue* coverage = json_parse(coverage_text);
    const JValue* unindexed = member(coverage, "unindexed_fragments", J_ARRAY);
    const JValue* stale = member(coverage, "stale_fragments", J_ARRAY);
    check(unindexed && unindexed->count == 0, uri, "fragments left unindexed");
    check(stale && stale->count == 0, uri, "stale fragments");
    int mismatches = -1;
    if (demo_data_recall(ds, data, (int)sh->queries, (uint32_t)sh->partitions, 0, &mismatches) < 0) die("k-NN");
    check(mismatches == 0, uri, "k-NN through the index differs from brute force");

    /* The store: the URI's scheme ("s3"), or "local" for a path. */
    const char* scheme_end = strstr(uri, "://");
    int scheme_len = scheme_end ? (int)(scheme_end - uri) : 5;
    printf("{\"store\": \"%.*s\", \"uri\": ", scheme_len, scheme_end ? uri : "local");
    json_write_string(stdout, uri);
    printf(", \"fragments\": %llu, \"rows_per_fragment\": %llu, \"dim\": %llu, \"partitions\": %llu, "
           "\"write_s\": %.3f, \"train_s\": %.3f, \"build_s\": %.3f, \"commit_build_s\": %.3f, "
           "\"appended_fragments\": %llu, \"open_ms\": %.2f, \"plan_first_ms\": %.2f, \"plan_ms\": %.2f, "
           "\"plan_calls\": %llu, \"segments_before\": %zu, \"merges\": %zu, \"merged_segments\": %zu, "
           "\"merged_bytes\": %.0f, \"merge_s\": %.3f, \"merge_ms_per_segment\": %.2f, \"merge_mb_per_s\": %.2f, "
           "\"merge_s_per_gb\": %.1f, "
           "\"delta_builds\": %zu, \"delta_build_s\": %.3f, \"commit_s\": %.3f, \"segments_after\": %llu, "
           "\"knn_queries\": %llu, \"knn_mismatches\": %d, \"checks\": \"%s\"}\n",
           (unsigned long long)sh->fragments, (unsigned long long)sh->rows, (unsigned long long)sh->dim,
           (unsigned long long)sh->partitions, write_s, train_s, build_s, commit_build_s,
           (unsigned long long)sh->append, open_ms, plan_first_ms, plan_median_ms, (unsigned long long)sh->plan_calls,
           segments_before, merges, merged_sources, merged_bytes, merge_s,
           merged_sources ? merge_s * 1000 / (double)merged_sources : 0, merge_s > 0 ? merged_bytes / 1e6 / merge_s : 0,
           merged_bytes > 0 ? merge_s / (merged_bytes / 1e9) : 0, builds, delta_s, commit_s,
           (unsigned long long)segments_now, (unsigned long long)sh->queries, mismatches, failures ? "FAILED" : "ok");
    fflush(stdout);
    json_free(coverage);
    lance_free_string(coverage_text);
    json_free(listing);
    lance_free_string(listing_text);
    json_free(plan);
    lance_free_string(plan_text);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
}

static int usage(const char* why) {
    fprintf(stderr,
            "bench_maintenance: %s\n"
            "usage: bench_maintenance [URI ...] [--fragments N] [--rows R] [--dim D] [--append A]\n"
            "         [--segments M] [--partitions P] [--plan-calls C] [--queries Q] [--smoke]\n"
            "         [--storage-option key=value ...]\n",
            why);
    return 2;
}

int main(int argc, char** argv) {
    StorageOptions storage = {0};
    if (storage_options_init(&storage, &argc, argv, "bench_maintenance") != 0) return 2;
    storage_opts = storage_options_array(&storage);
    Shape sh = {300, 200, 32, 8, 16, 16, 9, 20};
    if (take_flag(&argc, argv, "--smoke")) sh = (Shape){24, 64, 16, 2, 4, 8, 3, 5};
    static const struct {
        const char* flag;
        size_t offset;
        uint64_t min, max;
    } numbers[] = {
        {"--fragments", offsetof(Shape, fragments), 2, 100000},
        {"--rows", offsetof(Shape, rows), 1, 100000000},
        {"--dim", offsetof(Shape, dim), 1, 4096},
        {"--append", offsetof(Shape, append), 0, 100000},
        {"--segments", offsetof(Shape, segments), 1, 100000},
        {"--partitions", offsetof(Shape, partitions), 1, 65536},
        {"--plan-calls", offsetof(Shape, plan_calls), 1, 10000},
        {"--queries", offsetof(Shape, queries), 1, 10000},
    };
    const char** uris = calloc((size_t)argc, sizeof *uris);
    if (!uris) die_errno("allocating");
    size_t nuris = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--", 2) != 0) {
            uris[nuris++] = argv[i];
            continue;
        }
        size_t k = 0;
        while (k < sizeof numbers / sizeof numbers[0] && strcmp(argv[i], numbers[k].flag)) k++;
        if (k == sizeof numbers / sizeof numbers[0]) return usage("unknown option");
        uint64_t v = 0;
        if (i + 1 >= argc || decimal_parse(argv[i + 1], numbers[k].max, &v) != 0 || v < numbers[k].min) {
            char why[128];
            snprintf(why, sizeof why, "%s needs a number from %llu to %llu", numbers[k].flag,
                     (unsigned long long)numbers[k].min, (unsigned long long)numbers[k].max);
            return usage(why);
        }
        *(uint64_t*)((char*)&sh + numbers[k].offset) = v;
        i++;
    }
    if (sh.partitions > sh.rows) return usage("--partitions must not exceed --rows (the model trains on them)");
    if (sh.segments >= sh.fragments) return usage("--segments must be below --fragments (there must be merges)");
    DemoData data;
    if (demo_data_make(&data, (int64_t)((sh.fragments + sh.append) * sh.rows), (int32_t)sh.dim, 16, 0.5f, 43) != 0)
        die_errno("generating the vectors");
    char* dir = NULL;
    char local[4096];
    if (nuris == 0) {
        dir = temp_dir_create("bench-maintenance");
        if (!dir) die_errno("creating a temporary directory");
        snprintf(local, sizeof local, "%s/maintenance.lance", dir);
        uris[nuris++] = local;
    }
    for (size_t u = 0; u < nuris; u++) run(uris[u], &sh, &data);
    if (dir) remove_tree(dir);
    free(dir);
    free(uris);
    demo_data_free(&data);
    storage_options_free(&storage);
    if (failures) fprintf(stderr, "bench_maintenance: %d checks failed\n", failures);
    return failures ? 1 : 0;
}
