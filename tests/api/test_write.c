/* Writes (lance.h "Write"): each mode and each parameter, with the rows
 * read back exactly as written; every bad-input path; and
 * lance_write_fragments(), whose uncommitted files pylance commits
 * (tests/api/write_oracle.py) and finds exactly the rows of the same stream
 * written as a dataset.  Every consumed stream is released exactly once.
 *
 * Usage: test_write PYTHON ORACLE_SCRIPT (no Python is a failure). */
#include <string.h>

#include "oracle_pair.h"
#include "rows_text.h"
#include "streams.h"

#define ROWS TU_PAIR_ROWS
#define DIM TU_PAIR_DIM

static TuData data;   /* 2000 rows of dimension 16 */
static TuPairs pairs; /* the datasets lance_write_fragments adds files to */

/* ---- modes and parameters ---- */

/* Rows [first, first + n) of `data` as tu_scan_text() prints them. */
static char* expected_rows(int64_t first, int64_t n) {
    TuText t = {0};
    for (int64_t r = first; r < first + n; r++) {
        tu_text_append(&t, "id=%lld\tvec=", (long long)data.ids[r]);
        for (int32_t k = 0; k < data.dim; k++)
            tu_text_append(&t, "%s%.9g", k ? "," : "", (double)data.vectors[r * data.dim + k]);
        tu_text_append(&t, "\ttag=t%lld\n", (long long)(r % 7));
    }
    return tu_text_take(&t);
}

/* The rows of the dataset at `uri` (its latest version) are exactly the
 * given ranges of `data`, in that order; `version` is its version. */
static void check_rows(const char* uri, uint64_t version, int64_t first, int64_t n, int64_t first2, int64_t n2) {
    LanceDataset* ds = lance_dataset_open(uri, NULL, 0);
    CHECK(ds != NULL);
    if (!ds) return;
    CHECK(lance_dataset_version(ds) == version);
    CHECK(lance_dataset_count_rows(ds) == (uint64_t)(n + n2));
    char* a = expected_rows(first, n);
    char* b = expected_rows(first2, n2);
    TuText want = {0};
    tu_text_append(&want, "%s%s", a, b);
    char* expected = tu_text_take(&want);
    char* got = tu_scan_text(ds);
    tu_check_same_text(uri, got, expected);
    free(a);
    free(b);
    free(expected);
    free(got);
    lance_dataset_close(ds);
}

/* Writes rows [first, first + n) of `data` with `mode` and `params`; returns the call's result. */
static int write_rows(const char* uri, int64_t first, int64_t n, int32_t mode, const LanceWriteParams* params,
                      LanceDataset** out) {
    struct ArrowSchema schema;
    struct ArrowArrayStream stream;
    int releases = 0;
    tu_schema(data.dim, &schema);
    tu_rows_stream(&data, first, n, &releases, &stream);
    int rc = lance_dataset_write_with_params(uri, &schema, &stream, mode, params, NULL, out);
    CHECK(releases == 1);
    schema.release(&schema);
    return rc;
}

/* The row counts of the fragments of the dataset at `uri`, ascending by id, are `want`. */
static void check_fragment_rows(const char* uri, const uint64_t* want, size_t n) {
    LanceDataset* ds = lance_dataset_open(uri, NULL, 0);
    CHECK(ds != NULL && lance_dataset_fragment_count(ds) == n);
    uint64_t got[16] = {0};
    CHECK(n <= 16);
    if (ds && n <= 16) {
        CHECK_OK(lance_dataset_fragment_row_counts(ds, got, n));
        CHECK(memcmp(got, want, n * sizeof *want) == 0);
    }
    lance_dataset_close(ds);
}

static void test_write_modes(void) {
    char* dir = tu_temp_dir("modes");
    char uri[600];
    snprintf(uri, sizeof uri, "%s/m.lance", dir);
    LanceWriteParams p = {0};
    p.max_rows_per_file = 100;

    /* CREATE: version 1 with the rows in 3 fragments; no handle asked for. */
    CHECK_OK(write_rows(uri, 0, 250, LANCE_WRITE_CREATE, &p, NULL));
    check_rows(uri, 1, 0, 250, 0, 0);
    const uint64_t created[] = {100, 100, 50};
    check_fragment_rows(uri, created, 3);

    /* APPEND: version 2, the old rows then the new ones, in new fragments. */
    LanceDataset* ds = NULL;
    CHECK_OK(write_rows(uri, 250, 150, LANCE_WRITE_APPEND, &p, &ds));
    CHECK(ds != NULL && lance_dataset_version(ds) == 2 && lance_dataset_count_rows(ds) == 400);
    lance_dataset_close(ds);
    check_rows(uri, 2, 0, 250, 250, 150);
    const uint64_t appended[] = {100, 100, 50, 100, 50};
    check_fragment_rows(uri, appended, 5);

    /* OVERWRITE: version 3 holds the new rows only; version 2 is still there. */
    CHECK_OK(write_rows(uri, 100, 60, LANCE_WRITE_OVERWRITE, NULL, NULL));
    check_rows(uri, 3, 100, 60, 0, 0);
    LanceDataset* v2 = lance_dataset_open(uri, NULL, 2);
    CHECK(v2 != NULL && lance_dataset_count_rows(v2) == 400);
    lance_dataset_close(v2);

    /* CREATE over it: refused, nothing written, the out handle untouched. */
    LanceDataset* sentinel = (LanceDataset*)&p;
    ds = sentinel;
    CHECK_ERR(write_rows(uri, 0, 10, LANCE_WRITE_CREATE, NULL, &ds), LANCE_ERR_DATASET_ALREADY_EXISTS);
    CHECK(ds == sentinel);
    check_rows(uri, 3, 100, 60, 0, 0);

    /* OVERWRITE where nothing is: creates version 1. */
    char fresh[700];
    snprintf(fresh, sizeof fresh, "%s/fresh.lance", dir);
    CHECK_OK(write_rows(fresh, 500, 30, LANCE_WRITE_OVERWRITE, NULL, NULL));
    check_rows(fresh, 1, 500, 30, 0, 0);

    tu_remove_tree(dir);
    free(dir);
}

/* The _rowid column of a whole scan of the dataset at `uri`, in scan order. */
static int64_t row_ids(const char* uri, uint64_t* out, int64_t cap) {
    LanceDataset* ds = lance_dataset_open(uri, NULL, 0);
    CHECK(ds != NULL);
    if (!ds) return -1;
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_with_row_id(s, true));
    struct ArrowArrayStream stream;
    int64_t n = 0;
    CHECK_OK(lance_scanner_to_arrow_stream(s, &stream));
    struct ArrowSchema schema;
    CHECK_OK(stream.get_schema(&stream, &schema));
    struct ArrowArray batch;
    while (stream.get_next(&stream, &batch) == 0 && batch.release) {
        CHECK_OK(tu_append_column(&batch, &schema, "_rowid", out, sizeof *out, cap, &n));
        batch.release(&batch);
    }
    schema.release(&schema);
    stream.release(&stream);
    lance_scanner_close(s);
    lance_dataset_close(ds);
    return n;
}

static void test_write_params(void) {
    char* dir = tu_temp_dir("params");
    char uri[600];

    /* Rows per file decide the fragments. */
    LanceWriteParams p = {0};
    p.max_rows_per_file = 64;
    snprintf(uri, sizeof uri, "%s/per-file.lance", dir);
    CHECK_OK(write_rows(uri, 0, 200, LANCE_WRITE_CREATE, &p, NULL));
    const uint64_t per_file[] = {64, 64, 64, 8};
    check_fragment_rows(uri, per_file, 4);
    check_rows(uri, 1, 0, 200, 0, 0);

    /* Every storage version the core names writes the same rows. */
    const char* versions[] = {"2.0", "2.1", "stable", "legacy"};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        LanceWriteParams v = {0};
        v.data_storage_version = versions[i];
        v.max_rows_per_group = 16;
        snprintf(uri, sizeof uri, "%s/storage-%zu.lance", dir, i);
        CHECK_OK(write_rows(uri, 300, 120, LANCE_WRITE_CREATE, &v, NULL));
        check_rows(uri, 1, 300, 120, 0, 0);
    }

    /* Row ids: fragment id << 32 | offset by default; with stable row ids,
       0, 1, 2, ... across the fragments. */
    uint64_t ids[300];
    p.max_rows_per_file = 100;
    snprintf(uri, sizeof uri, "%s/addresses.lance", dir);
    CHECK_OK(write_rows(uri, 0, 250, LANCE_WRITE_CREATE, &p, NULL));
    CHECK(row_ids(uri, ids, 300) == 250);
    for (int64_t r = 0; r < 250; r++) CHECK(ids[r] == ((uint64_t)(r / 100) << 32 | (uint64_t)(r % 100)));
    p.enable_stable_row_ids = true;
    snprintf(uri, sizeof uri, "%s/stable.lance", dir);
    CHECK_OK(write_rows(uri, 0, 250, LANCE_WRITE_CREATE, &p, NULL));
    CHECK(row_ids(uri, ids, 300) == 250);
    for (int64_t r = 0; r < 250; r++) CHECK(ids[r] == (uint64_t)r);
    check_rows(uri, 1, 0, 250, 0, 0);

    tu_remove_tree(dir);
    free(dir);
}

/* ---- bad input ---- */

static void test_write_errors(void) {
    char* dir = tu_temp_dir("wr");
    char uri[600];
    snprintf(uri, sizeof uri, "%s/w.lance", dir);
    struct ArrowSchema schema;
    struct ArrowArrayStream stream;

    /* Bad mode: the stream is still consumed (released). */
    tu_schema(data.dim, &schema);
    tu_stream(&data, 0, 10, 10, &stream);
    CHECK_ERR(lance_dataset_write(uri, &schema, &stream, 7, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("mode = 7"));
    CHECK(stream.release == NULL);

    /* NULL uri, NULL schema, NULL stream. */
    tu_stream(&data, 0, 10, 10, &stream);
    CHECK_ERR(lance_dataset_write(NULL, &schema, &stream, 0, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(stream.release == NULL);
    tu_stream(&data, 0, 10, 10, &stream);
    CHECK_ERR(lance_dataset_write(uri, NULL, &stream, 0, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(stream.release == NULL);
    CHECK_ERR(lance_dataset_write(uri, &schema, NULL, 0, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    /* An already released stream. */
    CHECK_ERR(lance_dataset_write(uri, &schema, &stream, 0, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);

    /* A schema that differs from the stream's. */
    struct ArrowSchema other;
    tu_schema(data.dim + 1, &other);
    tu_stream(&data, 0, 10, 10, &stream);
    CHECK_ERR(lance_dataset_write(uri, &other, &stream, 0, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("does not match"));
    other.release(&other);

    /* Bad storage version string. */
    LanceWriteParams params = {0};
    params.data_storage_version = "9.9";
    tu_stream(&data, 0, 10, 10, &stream);
    CHECK_ERR(lance_dataset_write_with_params(uri, &schema, &stream, 0, &params, NULL, NULL),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("9.9"));

    /* Valid parameters: storage version, stable row ids, rows per group. */
    params.data_storage_version = "2.1";
    params.enable_stable_row_ids = true;
    params.max_rows_per_group = 64;
    params.max_rows_per_file = 40;
    tu_stream(&data, 0, 100, 30, &stream);
    LanceDataset* ds = NULL;
    CHECK_OK(lance_dataset_write_with_params(uri, &schema, &stream, LANCE_WRITE_CREATE, &params, NULL, &ds));
    CHECK(ds != NULL && lance_dataset_count_rows(ds) == 100 && lance_dataset_fragment_count(ds) == 3);
    CHECK(lance_last_error_code() == LANCE_OK);
    lance_dataset_close(ds);

    /* Append with an incompatible schema. */
    tu_schema(data.dim + 1, &other);
    TuData wide = tu_make_data(10, data.dim + 1, 2, 0.1f, 3);
    tu_stream(&wide, 0, 10, 10, &stream);
    CHECK(lance_dataset_write(uri, &other, &stream, LANCE_WRITE_APPEND, NULL, NULL) == -1);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    other.release(&other);
    tu_free_data(&wide);

    schema.release(&schema);
    tu_remove_tree(dir);
    free(dir);
}

/* ---- lance_write_fragments ---- */

static void test_write_fragments(void) {
    char c_uri[600], py_uri[600], path[700];
    LanceDataset* ds = tu_pair_make(&pairs, "fragments", c_uri, py_uri);
    snprintf(path, sizeof path, "%s/data", c_uri);
    int files_before = tu_visible_entries(path);
    CHECK(files_before == 3);

    /* Rows 600..899 of `other` as new files next to the dataset's. */
    int releases = 0;
    struct ArrowSchema schema;
    struct ArrowArrayStream stream;
    tu_schema(DIM, &schema);
    tu_rows_stream(&pairs.other, ROWS, 300, &releases, &stream);
    CHECK_OK(lance_write_fragments(c_uri, &schema, &stream, NULL));
    CHECK(releases == 1);
    CHECK(schema.release != NULL); /* borrowed */
    CHECK(tu_visible_entries(path) > files_before);
    /* Nothing committed. */
    LanceDataset* reopened = lance_dataset_open(c_uri, NULL, 0);
    CHECK(reopened != NULL);
    CHECK(lance_dataset_latest_version(reopened) == 1);
    CHECK(lance_dataset_count_rows(reopened) == ROWS);
    lance_dataset_close(reopened);

    /* The same rows written as a dataset: what pylance must find once it
     * has committed the files. */
    char expected_uri[600];
    snprintf(expected_uri, sizeof expected_uri, "%s/fragments-expected.lance", pairs.dir);
    struct ArrowArrayStream plain;
    tu_stream(&pairs.other, ROWS, 300, 128, &plain);
    CHECK_OK(lance_dataset_write(expected_uri, &schema, &plain, LANCE_WRITE_CREATE, NULL, NULL));
    CHECK(tu_pair_agrees(&pairs, "commit-fragments", c_uri, expected_uri, NULL));

    /* Where no dataset is: files, and still no version. */
    char fresh[600];
    snprintf(fresh, sizeof fresh, "%s/fresh.lance", pairs.dir);
    releases = 0;
    tu_rows_stream(&pairs.data, 0, 100, &releases, &stream);
    CHECK_OK(lance_write_fragments(fresh, &schema, &stream, NULL));
    CHECK(releases == 1);
    snprintf(path, sizeof path, "%s/data", fresh);
    CHECK(tu_visible_entries(path) == 1);
    CHECK(lance_dataset_open(fresh, NULL, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);

    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    /* A stream of another schema than `schema`. */
    struct ArrowSchema wider;
    tu_schema(DIM * 2, &wider);
    releases = 0;
    tu_rows_stream(&pairs.data, 0, 100, &releases, &stream);
    CHECK_ERR(lance_write_fragments(c_uri, &wider, &stream, NULL), IA);
    CHECK(releases == 1);
    wider.release(&wider);
    /* A stream the dataset at `uri` cannot take. */
    struct ArrowSchema x_schema;
    const char* names[] = {"x"};
    const char* formats[] = {"l"};
    const int nullable[] = {0};
    tu_struct_schema(1, names, formats, nullable, &x_schema);
    releases = 0;
    tu_int64_stream("x", 10, 1, &releases, &stream);
    CHECK_ERR(lance_write_fragments(c_uri, &x_schema, &stream, NULL), IA);
    CHECK(releases == 1);
    x_schema.release(&x_schema);
    /* Bad arguments: the stream is released every time. */
    releases = 0;
    tu_rows_stream(&pairs.data, 0, 10, &releases, &stream);
    CHECK_ERR(lance_write_fragments(NULL, &schema, &stream, NULL), IA);
    CHECK(releases == 1);
    releases = 0;
    tu_rows_stream(&pairs.data, 0, 10, &releases, &stream);
    CHECK_ERR(lance_write_fragments("", &schema, &stream, NULL), IA);
    CHECK(releases == 1);
    releases = 0;
    tu_rows_stream(&pairs.data, 0, 10, &releases, &stream);
    CHECK_ERR(lance_write_fragments(c_uri, NULL, &stream, NULL), IA);
    CHECK(releases == 1);
    releases = 0;
    tu_rows_stream(&pairs.data, 0, 10, &releases, &stream);
    const char* const odd_opts[] = {"key", NULL};
    CHECK_ERR(lance_write_fragments(c_uri, &schema, &stream, odd_opts), IA);
    CHECK(releases == 1);
    CHECK_ERR(lance_write_fragments(c_uri, &schema, NULL, NULL), IA);
    schema.release(&schema);
    lance_dataset_close(ds);
}

int main(int argc, char** argv) {
    if (!tu_pairs_begin(&pairs, argc, argv)) return 2;
    data = tu_make_data(2000, 16, 8, 0.5f, 42);
    RUN(test_write_modes);
    RUN(test_write_params);
    RUN(test_write_errors);
    RUN(test_write_fragments);
    tu_free_data(&data);
    tu_pairs_end(&pairs);
    return tu_finish("test_write");
}
