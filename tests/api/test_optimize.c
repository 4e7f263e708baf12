/* Index maintenance (lance.h "Index maintenance"):
 * lance_dataset_optimize_indices() and its _with_control form.  A table
 * indexed by an IVF_FLAT and a BTREE index gets rows appended (and
 * deleted); each optimize is repeated by pylance 14.0.2 on a copy
 * (tests/api/optimize_oracle.py), which must reach the same version and the
 * same segments, and whose filtered scan must return the rows lance-c's
 * does.  After every optimize: the coverage report covers every fragment
 * (or exactly the ones the call left alone), the segment counts are the
 * mode's (a delta segment with num_indices_to_merge = 0, one segment when
 * merging all), and k-NN probing every partition equals brute force over
 * the live rows.  Then a concurrent optimize's conflict, cancellation and
 * progress, and every refusal with its exact code.
 *
 * Usage: test_optimize PYTHON ORACLE_SCRIPT */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "json.h"
#include "rows_text.h"
#include "dataset_kit.h"
#include "knn_kit.h"
#include "progress_kit.h"
#include "segment_kit.h"
#include "test_util.h"

#define ROWS 1000
#define DIM 8
#define PARTITIONS 4
#define K 10
/* The filtered scan compared with pylance: old and appended rows. */
#define FILTER "id >= 150 AND id < 720"
#define FILTER_LO 150
#define FILTER_HI 720

static const char* python;
static const char* oracle_script;
static TuData data;
static char* dir;
static int serial;

/* A table under test and the rows it holds. */
typedef struct {
    char uri[600];
    LanceDataset* ds;
    bool live[ROWS];
} Table;

/* Rows [first, first + count) appended, 100 per fragment. */
static void append(Table* t, int64_t first, int64_t count) {
    LanceDataset* next = tu_write(t->uri, &data, first, count, LANCE_WRITE_APPEND, 100);
    CHECK(next != NULL);
    if (!next) return;
    lance_dataset_close(t->ds);
    t->ds = next;
    for (int64_t r = first; r < first + count; r++) t->live[r] = true;
}

/* Version 4: rows 0-599 in fragments 0-2 indexed by vec_idx (IVF_FLAT,
 * PARTITIONS partitions) and id_idx (BTREE), then rows 600-799 appended in
 * fragments 3 and 4, which neither index covers. */
static void make(Table* t) {
    memset(t, 0, sizeof *t);
    snprintf(t->uri, sizeof t->uri, "%s/t%d.lance", dir, serial++);
    t->ds = tu_write(t->uri, &data, 0, 600, LANCE_WRITE_CREATE, 200);
    CHECK(t->ds != NULL);
    if (!t->ds) return;
    for (int r = 0; r < 600; r++) t->live[r] = true;
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = PARTITIONS;
    CHECK_OK(lance_dataset_create_vector_index(t->ds, "vec", "vec_idx", &p, false));
    CHECK_OK(lance_dataset_create_scalar_index(t->ds, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, false));
    append(t, 600, 200);
    CHECK(lance_dataset_version(t->ds) == 4 && lance_dataset_fragment_count(t->ds) == 5);
}

static void drop(Table* t) {
    lance_dataset_close(t->ds);
    t->ds = NULL;
}

/* k-NN through the index, every partition probed, equals brute force over
 * the live rows, for 8 queries. */
static void check_knn(const Table* t) {
    TuData alive = {0, DIM, 0, 0, malloc(sizeof(float) * ROWS * DIM), malloc(sizeof(int64_t) * ROWS)};
    for (int64_t r = 0; r < ROWS; r++) {
        if (!t->live[r]) continue;
        memcpy(alive.vectors + alive.rows * DIM, data.vectors + r * DIM, sizeof(float) * DIM);
        alive.ids[alive.rows++] = r;
    }
    for (int q = 0; q < 8; q++)
        kk_check_exact(t->ds, &alive, data.vectors + (int64_t)(q * 113 + 7) * DIM, K, PARTITIONS);
    tu_free_data(&alive);
}

/* The coverage report of `name`: its segment count, and how many of the
 * version's fragments no segment covers (-1 when it cannot be read). */
static int coverage(LanceDataset* ds, const char* name, int* out_segments) {
    SkCoverage c;
    if (sk_coverage(ds, name, &c) != 0 || c.segments < 0 ||
        (uint64_t)(c.indexed + c.unindexed) != lance_dataset_fragment_count(ds))
        return -1;
    *out_segments = c.segments;
    return c.unindexed;
}

/* `name` has `segments` segments and covers every fragment. */
static void check_covered(LanceDataset* ds, const char* name, int segments) {
    int got = -1;
    CHECK(coverage(ds, name, &got) == 0);
    CHECK(got == segments);
    CHECK(lance_dataset_index_segment_count(ds, name) == (uint64_t)segments);
}

/* The ids FILTER must select among the live rows, as dk_filter_ids() prints them. */
static char* live_filter_ids(const Table* t) {
    TuText text = {0};
    int n = 0;
    for (int r = FILTER_LO; r < FILTER_HI; r++)
        if (t->live[r]) tu_text_append(&text, "%s%d", n++ ? "," : "", r);
    return tu_text_take(&text);
}

/* Optimizes the table through lance-c with `o`, and a copy taken before
 * through pylance in the oracle's `mode`: the same version and segments,
 * and the rows FILTER selects are pylance's and the live rows'. */
static void optimize_both(Table* t, const LanceOptimizeIndicesOptions* o, const char* mode) {
    char py_uri[640];
    snprintf(py_uri, sizeof py_uri, "%s-py%d", t->uri, serial++);
    const char* copy[] = {"cp", "-r", t->uri, py_uri, NULL};
    free(tu_run_program(copy));
    CHECK_OK(lance_dataset_optimize_indices(t->ds, o));
    CHECK(lance_dataset_version(t->ds) == lance_dataset_latest_version(t->ds));
    char* theirs = tu_oracle(python, oracle_script, "optimize", t->uri, py_uri, mode, FILTER, NULL);
    size_t theirs_len = theirs ? strlen(theirs) : 0;
    if (theirs_len && theirs[theirs_len - 1] == '\n') theirs[theirs_len - 1] = 0; /* the oracle's line */
    char* ours = dk_filter_ids(t->ds, FILTER, ROWS, -1, NULL, NULL);
    char* live = live_filter_ids(t);
    tu_check_same_text(mode, ours, theirs);
    tu_check_same_text(mode, ours, live);
    free(theirs);
    free(ours);
    free(live);
}

static LanceOptimizeIndicesOptions merging(uint32_t n) {
    LanceOptimizeIndicesOptions o = {0};
    o.has_num_indices_to_merge = true;
    o.num_indices_to_merge = n;
    return o;
}

/* A delta segment per optimize with num_indices_to_merge = 0, nothing
 * committed when there is nothing to index, one segment when merging all. */
static void test_delta_then_merge(void) {
    Table t;
    make(&t);
    if (!t.ds) return;
    LanceOptimizeIndicesOptions delta = merging(0);
    optimize_both(&t, &delta, "merge:0");
    CHECK(lance_dataset_version(t.ds) == 5);
    check_covered(t.ds, "vec_idx", 2);
    check_covered(t.ds, "id_idx", 2);
    check_knn(&t);

    append(&t, 800, 100);
    CHECK(lance_dataset_version(t.ds) == 6);
    optimize_both(&t, &delta, "merge:0");
    CHECK(lance_dataset_version(t.ds) == 7);
    check_covered(t.ds, "vec_idx", 3);
    check_covered(t.ds, "id_idx", 3);
    check_knn(&t);

    /* Every fragment indexed: a delta has nothing to index. */
    optimize_both(&t, &delta, "merge:0");
    CHECK(lance_dataset_version(t.ds) == 7 && lance_dataset_latest_version(t.ds) == 7);

    LanceOptimizeIndicesOptions all = merging(100);
    optimize_both(&t, &all, "merge:100");
    CHECK(lance_dataset_version(t.ds) == 8);
    check_covered(t.ds, "vec_idx", 1);
    check_covered(t.ds, "id_idx", 1);
    check_knn(&t);
    drop(&t);
}

/* NULL options and zeroed options are the core's defaults: pylance's
 * optimize without arguments (Lance 14.0.2 merges each index into one
 * segment). */
static void test_defaults(void) {
    Table t;
    make(&t);
    if (!t.ds) return;
    optimize_both(&t, NULL, "default");
    CHECK(lance_dataset_version(t.ds) == 5);
    check_covered(t.ds, "vec_idx", 1);
    check_covered(t.ds, "id_idx", 1);
    check_knn(&t);
    drop(&t);

    make(&t);
    if (!t.ds) return;
    LanceOptimizeIndicesOptions zero = {0};
    optimize_both(&t, &zero, "default");
    check_covered(t.ds, "vec_idx", 1);
    check_covered(t.ds, "id_idx", 1);
    drop(&t);
}

/* Named indices only: the other keeps its segment and its unindexed
 * fragments, and k-NN still answers exactly (it scans them). */
static void test_named(void) {
    Table t;
    make(&t);
    if (!t.ds) return;
    const char* names[] = {"id_idx"};
    LanceOptimizeIndicesOptions o = {0};
    o.index_names = names;
    o.index_name_count = 1;
    optimize_both(&t, &o, "names:id_idx");
    CHECK(lance_dataset_version(t.ds) == 5);
    check_covered(t.ds, "id_idx", 1);
    int segments = 0;
    CHECK(coverage(t.ds, "vec_idx", &segments) == 2 && segments == 1);
    check_knn(&t);
    drop(&t);
}

/* Deleted rows, then an optimize: still exact, and pylance agrees; an
 * optimize with nothing to index after a further delete too. */
static void test_after_deletes(void) {
    Table t;
    make(&t);
    if (!t.ds) return;
    uint64_t deleted = 0;
    CHECK_OK(lance_dataset_delete(t.ds, "id % 10 = 3", &deleted));
    CHECK(deleted == 80 && lance_dataset_version(t.ds) == 5);
    for (int r = 3; r < 800; r += 10) t.live[r] = false;
    LanceOptimizeIndicesOptions delta = merging(0);
    optimize_both(&t, &delta, "merge:0");
    CHECK(lance_dataset_version(t.ds) == 6);
    check_covered(t.ds, "vec_idx", 2);
    check_covered(t.ds, "id_idx", 2);
    check_knn(&t);

    CHECK_OK(lance_dataset_delete(t.ds, "id >= 700 AND id < 760", &deleted));
    CHECK(deleted == 54);
    for (int r = 700; r < 760; r++) t.live[r] = false;
    optimize_both(&t, NULL, "default");
    check_covered(t.ds, "vec_idx", (int)lance_dataset_index_segment_count(t.ds, "vec_idx"));
    check_knn(&t);
    drop(&t);
}

/* Retraining rebuilds each vector index as one segment over every fragment. */
static void test_retrain(void) {
    Table t;
    make(&t);
    if (!t.ds) return;
    LanceOptimizeIndicesOptions o = {0};
    o.retrain = true;
    optimize_both(&t, &o, "retrain");
    CHECK(lance_dataset_version(t.ds) == 5);
    check_covered(t.ds, "vec_idx", 1);
    check_covered(t.ds, "id_idx", 1);
    check_knn(&t);
    drop(&t);
}

/* Row bounds (which pylance does not take): every new segment holds at
 * most max_rows_per_segment rows, and the index still covers everything
 * and answers exactly. */
static void test_row_bounds(void) {
    Table t;
    make(&t);
    if (!t.ds) return;
    LanceOptimizeIndicesOptions o = merging(0);
    o.max_rows_per_task = 100;
    o.max_rows_per_segment = 100;
    CHECK_OK(lance_dataset_optimize_indices(t.ds, &o));
    CHECK(lance_dataset_version(t.ds) == 5);
    int segments = 0;
    CHECK(coverage(t.ds, "vec_idx", &segments) == 0 && segments >= 2);
    char* text = lance_dataset_index_segments_json(t.ds);
    JValue* list = text ? json_parse(text) : NULL;
    lance_free_string(text);
    CHECK(list && list->type == J_ARRAY);
    for (size_t i = 0; list && i < list->count; i++) {
        const JValue* fragment_ids = json_get(list->items[i], "fragment_ids");
        const JValue* rows = json_get(list->items[i], "num_rows");
        CHECK(fragment_ids && rows);
        if (!fragment_ids || !rows) continue;
        /* The segments built before the call cover fragments 0-2. */
        bool original = fragment_ids->count == 3 && fragment_ids->items[0]->number == 0;
        CHECK(original ? rows->number == 600 : rows->number <= 100);
    }
    json_free(list);
    check_knn(&t);
    drop(&t);
}

/* Two handles at version 4 both optimize: the second commit conflicts,
 * commits nothing and leaves its handle where it was; opened again, the
 * dataset has nothing left to index. */
static void test_conflict(void) {
    Table t;
    make(&t);
    if (!t.ds) return;
    LanceDataset* other = lance_dataset_open(t.uri, NULL, 0);
    CHECK(other != NULL);
    LanceOptimizeIndicesOptions delta = merging(0);
    CHECK_OK(lance_dataset_optimize_indices(t.ds, &delta));
    CHECK(lance_dataset_version(t.ds) == 5);
    CHECK_ERR(lance_dataset_optimize_indices(other, &delta), LANCE_ERR_COMMIT_CONFLICT);
    CHECK(lance_dataset_version(other) == 4 && lance_dataset_latest_version(other) == 5);
    lance_dataset_close(other);
    other = lance_dataset_open(t.uri, NULL, 0);
    CHECK_OK(lance_dataset_optimize_indices(other, &delta));
    CHECK(lance_dataset_version(other) == 5 && lance_dataset_latest_version(other) == 5);
    lance_dataset_close(other);
    check_covered(t.ds, "vec_idx", 2);
    check_knn(&t);
    drop(&t);
}

/* ---- progress and cancellation ---- */

static void test_control(void) {
    Table t;
    make(&t);
    if (!t.ds) return;
    LanceOptimizeIndicesOptions delta = merging(0);

    /* Cancelled before the start: nothing written, nothing committed. */
    LanceIndexBuildCancelToken* token = lance_index_build_cancel_token_new();
    CHECK_OK(lance_index_build_cancel(token));
    PkRecorder* rec = pk_recorder_new();
    LanceIndexBuildControl control = {pk_record, rec, token};
    delta.control = &control;
    CHECK_ERR(lance_dataset_optimize_indices(t.ds, &delta), LANCE_ERR_CANCELLED);
    CHECK(rec->count == 0);
    CHECK(lance_dataset_version(t.ds) == 4 && lance_dataset_latest_version(t.ds) == 4);
    int segments = 0;
    CHECK(coverage(t.ds, "vec_idx", &segments) == 2 && segments == 1);
    lance_index_build_cancel_token_free(token);

    /* Cancelled from the first event: success exactly when it committed. */
    token = lance_index_build_cancel_token_new();
    pk_recorder_reset(rec);
    rec->cancel_at_call = 1;
    rec->token = token;
    control.cancel_token = token;
    int rc = lance_dataset_optimize_indices(t.ds, &delta);
    if (rc == 0) {
        CHECK(lance_dataset_latest_version(t.ds) == 5 && lance_dataset_version(t.ds) == 5);
    } else {
        CHECK(lance_last_error_code() == LANCE_ERR_CANCELLED);
        CHECK(lance_dataset_latest_version(t.ds) == 4 && lance_dataset_version(t.ds) == 4);
    }
    CHECK(rec->count >= 1 && rec->events[0].event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START);
    printf("    cancelled at the first event: %s\n", rc == 0 ? "committed (no checkpoint followed)" : "cancelled");
    lance_index_build_cancel_token_free(token);
    drop(&t);

    /* Progress: the call's own stage first, then the core's, on this thread. */
    make(&t);
    if (!t.ds) {
        pk_recorder_free(rec);
        return;
    }
    pk_recorder_reset(rec);
    control.cancel_token = NULL;
    CHECK_OK(lance_dataset_optimize_indices(t.ds, &delta));
    CHECK(lance_dataset_version(t.ds) == 5);
    pk_check_events(rec, 1, 0);
    CHECK(rec->count >= 2);
    const TuProgressEvent* first = &rec->events[0];
    CHECK(first->event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START && strcmp(first->stage, "optimize_indices") == 0 &&
          first->total == 2 && strcmp(first->unit, "indices") == 0);
    CHECK(rec->wrong_thread == 0);
    printf("    %d progress events; stages:", rec->count);
    for (int i = 0; i < rec->count; i++)
        if (rec->events[i].event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START) printf(" %s", rec->events[i].stage);
    printf("\n");
    check_covered(t.ds, "vec_idx", 2);
    check_knn(&t);

    /* A NULL control is the plain call. */
    append(&t, 800, 100);
    delta.control = NULL;
    CHECK_OK(lance_dataset_optimize_indices(t.ds, &delta));
    CHECK(lance_dataset_version(t.ds) == 7);
    check_covered(t.ds, "id_idx", 3);
    pk_recorder_free(rec);
    drop(&t);
}

/* Every refusal with its code; none commits. */
static void test_refusals(void) {
    Table t;
    make(&t);
    if (!t.ds) return;
    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    LanceOptimizeIndicesOptions o = {0};
    CHECK_ERR(lance_dataset_optimize_indices(NULL, &o), IA);
    CHECK_ERR(lance_dataset_optimize_indices(NULL, NULL), IA);

    o.index_name_count = 2; /* names NULL */
    CHECK_ERR(lance_dataset_optimize_indices(t.ds, &o), IA);
    CHECK(tu_error_mentions("index_names is NULL but its count is 2"));
    const char* one[] = {"id_idx"};
    o.index_names = one;
    o.index_name_count = 0;
    CHECK_ERR(lance_dataset_optimize_indices(t.ds, &o), IA);
    CHECK(tu_error_mentions("empty list"));
    const char* unknown[] = {"id_idx", "no_such_idx"};
    o.index_names = unknown;
    o.index_name_count = 2;
    CHECK_ERR(lance_dataset_optimize_indices(t.ds, &o), LANCE_ERR_NOT_FOUND);
    CHECK(tu_error_mentions("index_names[1] = \"no_such_idx\""));
    LanceIndexBuildControl none = {0};
    o.control = &none;
    CHECK_ERR(lance_dataset_optimize_indices(t.ds, &o), LANCE_ERR_NOT_FOUND);
    o.control = NULL;
    const char* column[] = {"vec"}; /* a column, not an index */
    o.index_names = column;
    o.index_name_count = 1;
    CHECK_ERR(lance_dataset_optimize_indices(t.ds, &o), LANCE_ERR_NOT_FOUND);
    const char* twice[] = {"vec_idx", "id_idx", "vec_idx"};
    o.index_names = twice;
    o.index_name_count = 3;
    CHECK_ERR(lance_dataset_optimize_indices(t.ds, &o), IA);
    CHECK(tu_error_mentions("listed twice"));
    const char* empty[] = {""};
    o.index_names = empty;
    o.index_name_count = 1;
    CHECK_ERR(lance_dataset_optimize_indices(t.ds, &o), IA);
    const char* null_name[] = {NULL};
    o.index_names = null_name;
    CHECK_ERR(lance_dataset_optimize_indices(t.ds, &o), IA);
    const char* bad_utf8[] = {"\xff\xfe"};
    o.index_names = bad_utf8;
    CHECK_ERR(lance_dataset_optimize_indices(t.ds, &o), IA);

    LanceOptimizeIndicesOptions f = {0};
    f.num_indices_to_merge = 2; /* without has_num_indices_to_merge */
    CHECK_ERR(lance_dataset_optimize_indices(t.ds, &f), IA);
    CHECK(tu_error_mentions("has_num_indices_to_merge"));
    f = merging(1);
    f.retrain = true;
    CHECK_ERR(lance_dataset_optimize_indices(t.ds, &f), IA);
    CHECK(tu_error_mentions("retrain"));
    f = merging(0);
    f.enable_partition_rebalancing = true;
    CHECK_ERR(lance_dataset_optimize_indices(t.ds, &f), IA);
    CHECK(tu_error_mentions("enable_partition_rebalancing"));
    f = merging(1);
    f.enable_partition_rebalancing = true;
    f.max_rows_per_segment = 1000;
    CHECK_ERR(lance_dataset_optimize_indices(t.ds, &f), IA);
    CHECK(tu_error_mentions("max_rows_per_segment"));

    /* Nothing was committed; the handle is as it was. */
    CHECK(lance_dataset_version(t.ds) == 4 && lance_dataset_latest_version(t.ds) == 4);
    int segments = 0;
    CHECK(coverage(t.ds, "vec_idx", &segments) == 2 && segments == 1);
    CHECK(coverage(t.ds, "id_idx", &segments) == 2 && segments == 1);
    drop(&t);
}

int main(int argc, char** argv) {
    if (tu_oracle_args(argc, argv, "tests/api/optimize_oracle.py", &python, &oracle_script) != 0) return 2;
    data = tu_make_data(ROWS, DIM, 8, 0.5f, 43);
    dir = tu_temp_dir("optimize");
    RUN(test_delta_then_merge);
    RUN(test_defaults);
    RUN(test_named);
    RUN(test_after_deletes);
    RUN(test_retrain);
    RUN(test_row_bounds);
    RUN(test_conflict);
    RUN(test_control);
    RUN(test_refusals);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_optimize");
}
