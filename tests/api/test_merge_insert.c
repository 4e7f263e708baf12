/* Merge-insert (lance.h "Merge-insert"): lance_dataset_merge_insert() in
 * every mode, checked against pylance doing the same merge on a copy of the
 * same multi-fragment dataset (tests/api/merge_insert_oracle.py compares
 * schemas, rows and the inserted / updated / deleted counts); every bad
 * input with its exact code, the handle left at its version, and the
 * source stream released exactly once every time.
 *
 * Usage: test_merge_insert PYTHON ORACLE_SCRIPT (no Python is a failure). */
#include <string.h>

#include "oracle_pair.h"
#include "streams.h"

#define ROWS TU_PAIR_ROWS
#define DIM TU_PAIR_DIM

static TuPairs pairs;

/* The merge source: rows [first, first + rows) of `other`, also written as
 * a dataset for pylance to read. */
static void write_source(int64_t first, int64_t rows, char* src_uri) {
    pairs.serial++;
    snprintf(src_uri, 600, "%s/source-%d.lance", pairs.dir, pairs.serial);
    struct ArrowSchema schema;
    struct ArrowArrayStream stream;
    tu_schema(DIM, &schema);
    tu_stream(&pairs.other, first, rows, 128, &stream);
    CHECK_OK(lance_dataset_write(src_uri, &schema, &stream, LANCE_WRITE_CREATE, NULL, NULL));
    schema.release(&schema);
}

static const char* const ID_KEY[] = {"id"};

/* Merges rows [first, first + rows) of `other` into a fresh dataset through
 * lance-c, and has pylance do `c_case` on the copy. */
static void merge_case(const char* c_case, int64_t first, int64_t rows, const LanceMergeInsertParams* params,
                       uint64_t inserted, uint64_t updated, uint64_t deleted) {
    char c_uri[600], py_uri[600], src_uri[600];
    LanceDataset* ds = tu_pair_make(&pairs, c_case, c_uri, py_uri);
    write_source(first, rows, src_uri);
    int releases = 0;
    struct ArrowArrayStream source;
    tu_rows_stream(&pairs.other, first, rows, &releases, &source);
    LanceMergeInsertResult result;
    memset(&result, 0xff, sizeof result);
    CHECK_OK(lance_dataset_merge_insert(ds, ID_KEY, 1, &source, params, &result));
    CHECK(releases == 1);
    CHECK(result.num_inserted_rows == inserted);
    CHECK(result.num_updated_rows == updated);
    CHECK(result.num_deleted_rows == deleted);
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(lance_dataset_count_rows(ds) == ROWS + inserted - deleted);
    char extra[700];
    snprintf(extra, sizeof extra, "'%s' %llu %llu %llu", src_uri, (unsigned long long)result.num_inserted_rows,
             (unsigned long long)result.num_updated_rows, (unsigned long long)result.num_deleted_rows);
    CHECK(tu_pair_agrees(&pairs, c_case, c_uri, py_uri, extra));
    lance_dataset_close(ds);
}

static void test_merge_modes(void) {
    LanceMergeInsertParams p = {0};
    p.when_matched = LANCE_MERGE_WHEN_MATCHED_UPDATE_ALL;
    /* ids 500..699: 100 updated, 100 inserted. */
    merge_case("merge-upsert", 500, 200, &p, 100, 100, 0);
    /* NULL params: find-or-create; ids 550..649 insert 50, keep the rest. */
    merge_case("merge-find-or-create", 550, 100, NULL, 50, 0, 0);

    memset(&p, 0, sizeof p);
    p.when_matched = LANCE_MERGE_WHEN_MATCHED_DELETE;
    p.when_not_matched = LANCE_MERGE_WHEN_NOT_MATCHED_DO_NOTHING;
    merge_case("merge-delete", 100, 50, &p, 0, 0, 50);

    memset(&p, 0, sizeof p);
    p.when_matched = LANCE_MERGE_WHEN_MATCHED_UPDATE_IF;
    p.when_matched_expr = "target.id % 2 = 0";
    merge_case("merge-update-if", 500, 200, &p, 100, 50, 0);

    memset(&p, 0, sizeof p);
    p.when_matched = LANCE_MERGE_WHEN_MATCHED_UPDATE_ALL;
    p.when_not_matched_by_source = LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE_IF;
    p.when_not_matched_by_source_expr = "id < 100";
    merge_case("merge-delete-if", 500, 200, &p, 100, 100, 100);

    memset(&p, 0, sizeof p);
    p.when_not_matched = LANCE_MERGE_WHEN_NOT_MATCHED_DO_NOTHING;
    p.when_not_matched_by_source = LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE;
    /* ids 0..299 are in the source: 300 target rows are deleted. */
    merge_case("merge-by-source-delete", 0, 300, &p, 0, 0, 300);
}

/* A merge-insert that must fail with `code` and release its source once,
 * leaving the handle at its version. */
static void merge_refused(LanceDataset* ds, const char* const* on, size_t n_on, const LanceMergeInsertParams* p,
                          int32_t code, int line) {
    int releases = 0;
    struct ArrowArrayStream source;
    tu_rows_stream(&pairs.other, 500, 200, &releases, &source);
    uint64_t version = lance_dataset_version(ds);
    LanceMergeInsertResult result = {7, 7, 7};
    int rc = lance_dataset_merge_insert(ds, on, n_on, &source, p, &result);
    int got = lance_last_error_code();
    if (rc != -1 || got != code || releases != 1) {
        fprintf(stderr, "merge_refused at line %d: rc %d, code %d (want %d), releases %d\n", line, rc, got, code,
                releases);
    }
    CHECK(rc == -1);
    CHECK(got == code);
    CHECK(releases == 1);
    CHECK(result.num_inserted_rows == 7 && result.num_updated_rows == 7 && result.num_deleted_rows == 7);
    CHECK(lance_dataset_version(ds) == version);
}

static void test_merge_bad_input(void) {
    char c_uri[600], py_uri[600];
    LanceDataset* ds = tu_pair_make(&pairs, "merge-bad", c_uri, py_uri);
    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    LanceMergeInsertParams p = {0};
    p.when_matched = LANCE_MERGE_WHEN_MATCHED_UPDATE_ALL;

    merge_refused(ds, ID_KEY, 0, &p, IA, __LINE__);
    merge_refused(ds, NULL, 1, &p, IA, __LINE__);
    const char* const empty_key[] = {""};
    merge_refused(ds, empty_key, 1, &p, IA, __LINE__);
    const char* const null_key[] = {NULL};
    merge_refused(ds, null_key, 1, &p, IA, __LINE__);
    const char* const unknown_key[] = {"nope"};
    merge_refused(ds, unknown_key, 1, &p, IA, __LINE__);

    /* Modes out of range. */
    LanceMergeInsertParams bad = p;
    bad.when_matched = 5;
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad.when_matched = -1;
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad = p;
    bad.when_not_matched = 2;
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad = p;
    bad.when_not_matched_by_source = 3;
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);

    /* Expressions: missing, extra, empty. */
    bad = p;
    bad.when_matched = LANCE_MERGE_WHEN_MATCHED_UPDATE_IF;
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    int releases = 0;
    struct ArrowArrayStream source;
    tu_rows_stream(&pairs.other, 500, 200, &releases, &source);
    CHECK_ERR(lance_dataset_merge_insert(ds, ID_KEY, 1, &source, &bad, NULL), IA);
    CHECK(tu_error_mentions("params->when_matched_expr"));
    bad.when_matched_expr = "";
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad.when_matched_expr = "target.id >"; /* bad SQL */
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad.when_matched_expr = "target.nope > 3"; /* unknown column */
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad = p;
    bad.when_matched_expr = "target.id > 3";
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad = p;
    bad.when_not_matched_by_source = LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE_IF;
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad.when_not_matched_by_source_expr = "";
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad.when_not_matched_by_source_expr = "id <";
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad = p;
    bad.when_not_matched_by_source = LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE;
    bad.when_not_matched_by_source_expr = "id < 100";
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);

    /* A configuration that changes nothing. */
    LanceMergeInsertParams nothing = {0};
    nothing.when_not_matched = LANCE_MERGE_WHEN_NOT_MATCHED_DO_NOTHING;
    merge_refused(ds, ID_KEY, 1, &nothing, IA, __LINE__);

    /* FAIL with matches: an error, and nothing committed. */
    LanceMergeInsertParams fail = {0};
    fail.when_matched = LANCE_MERGE_WHEN_MATCHED_FAIL;
    releases = 0;
    tu_rows_stream(&pairs.other, 500, 200, &releases, &source);
    CHECK(lance_dataset_merge_insert(ds, ID_KEY, 1, &source, &fail, NULL) == -1);
    /* The core reports the match as an execution error (LANCE_ERR_INTERNAL). */
    CHECK(lance_last_error_code() == LANCE_ERR_INTERNAL);
    CHECK(tu_error_mentions("found matching row"));
    CHECK(releases == 1);
    CHECK(lance_dataset_version(ds) == 1);
    /* FAIL without matches inserts. */
    releases = 0;
    tu_rows_stream(&pairs.other, 600, 10, &releases, &source);
    LanceMergeInsertResult r;
    CHECK_OK(lance_dataset_merge_insert(ds, ID_KEY, 1, &source, &fail, &r));
    CHECK(releases == 1 && r.num_inserted_rows == 10 && r.num_updated_rows == 0);
    CHECK(lance_dataset_version(ds) == 2);

    /* A source whose schema the dataset cannot take. */
    releases = 0;
    tu_int64_stream("x", 10, 1, &releases, &source);
    CHECK_ERR(lance_dataset_merge_insert(ds, ID_KEY, 1, &source, &p, NULL), IA);
    CHECK(releases == 1);

    /* NULL dataset: the source is still released. */
    releases = 0;
    tu_rows_stream(&pairs.other, 0, 10, &releases, &source);
    CHECK_ERR(lance_dataset_merge_insert(NULL, ID_KEY, 1, &source, &p, NULL), IA);
    CHECK(releases == 1);
    CHECK_ERR(lance_dataset_merge_insert(ds, ID_KEY, 1, NULL, &p, NULL), IA);
    /* A released source. */
    CHECK_ERR(lance_dataset_merge_insert(ds, ID_KEY, 1, &source, &p, NULL), IA);
    /* Keys match without regard to case. */
    releases = 0;
    tu_rows_stream(&pairs.other, 0, 10, &releases, &source);
    const char* const upper_key[] = {"ID"};
    CHECK_OK(lance_dataset_merge_insert(ds, upper_key, 1, &source, &p, &r));
    CHECK(releases == 1 && r.num_updated_rows == 10 && r.num_inserted_rows == 0);
    lance_dataset_close(ds);
}

int main(int argc, char** argv) {
    if (!tu_pairs_begin(&pairs, argc, argv)) return 2;
    RUN(test_merge_modes);
    RUN(test_merge_bad_input);
    tu_pairs_end(&pairs);
    return tu_finish("test_merge_insert");
}
