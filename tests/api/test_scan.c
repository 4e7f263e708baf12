/* Scans: projection, filters, limit/offset, row ids, batch sizes, fragment
 * restriction, the two ways of reading, and bad input. */
#include <string.h>

#include "dataset_kit.h"
#include "test_util.h"

static TuData data;
static char* dir;
static char uri[600];
static LanceDataset* ds;

static void test_projection_and_filter(void) {
    const char* cols[] = {"id", "tag", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, "id >= 100 AND id < 200");
    CHECK(s != NULL);
    struct ArrowArrayStream stream;
    CHECK_OK(lance_scanner_to_arrow_stream(s, &stream));
    struct ArrowSchema schema;
    CHECK(stream.get_schema(&stream, &schema) == 0);
    CHECK(schema.n_children == 2);
    CHECK(strcmp(schema.children[0]->name, "id") == 0);
    CHECK(strcmp(schema.children[1]->name, "tag") == 0);
    schema.release(&schema);
    int64_t rows = 0, sum = 0;
    for (;;) {
        struct ArrowArray a;
        CHECK(stream.get_next(&stream, &a) == 0);
        if (a.release == NULL) break;
        const int64_t* v = (const int64_t*)a.children[0]->buffers[1];
        for (int64_t i = 0; i < a.length; i++) sum += v[a.children[0]->offset + i];
        rows += a.length;
        a.release(&a);
    }
    stream.release(&stream);
    CHECK(rows == 100);
    CHECK(sum == (100 + 199) * 100 / 2);

    /* The stream can be produced again, and the batch iterator is independent. */
    CHECK_OK(lance_scanner_to_arrow_stream(s, &stream));
    stream.release(&stream);
    CHECK(tu_count_scan(s) == 100);
    lance_scanner_close(s);

    /* String filter. */
    s = lance_scanner_new(ds, cols, "tag = 't3'");
    CHECK(s != NULL);
    int64_t expected = 0;
    for (int64_t i = 0; i < data.rows; i++) expected += (i % 7 == 3);
    CHECK(tu_count_scan(s) == expected);
    lance_scanner_close(s);
}

static void test_limit_offset_batch_rowid(void) {
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_set_limit(s, 25));
    CHECK_OK(lance_scanner_set_offset(s, 10));
    CHECK_OK(lance_scanner_set_batch_size(s, 7));
    CHECK_OK(lance_scanner_with_row_id(s, true));
    LanceBatch* b = NULL;
    CHECK(lance_scanner_next(s, &b) == 0);
    CHECK(b != NULL && lance_batch_num_rows(b) <= 7);
    struct ArrowArray a;
    struct ArrowSchema sc;
    CHECK_OK(lance_batch_to_arrow(b, &a, &sc));
    CHECK(sc.n_children == 2 && strcmp(sc.children[1]->name, "_rowid") == 0);
    CHECK(((const int64_t*)a.children[0]->buffers[1])[a.children[0]->offset] == 10);
    a.release(&a);
    sc.release(&sc);
    int64_t rows = (int64_t)lance_batch_num_rows(b);
    lance_batch_free(b);
    /* Settings are frozen once iteration started. */
    CHECK_ERR(lance_scanner_set_limit(s, 5), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("started"));
    int64_t rest = tu_count_scan(s);
    CHECK(rest >= 0 && rows + rest == 25);
    /* After the end, next keeps reporting the end. */
    CHECK(lance_scanner_next(s, &b) == 1 && b == NULL);
    lance_scanner_close(s);

    s = lance_scanner_new(ds, cols, NULL);
    CHECK_ERR(lance_scanner_set_limit(s, -2), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_offset(s, -1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_batch_size(s, -1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_OK(lance_scanner_set_limit(s, -1));
    CHECK_OK(lance_scanner_set_batch_size(s, 0));
    CHECK(tu_count_scan(s) == data.rows);
    lance_scanner_close(s);
}

static void test_fragments(void) {
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    uint64_t fragment_ids[] = {3, 1};
    CHECK_OK(lance_scanner_set_fragment_ids(s, fragment_ids, 2));
    int64_t ids[400];
    int64_t n = dk_read_ids(s, ids, NULL, 400);
    CHECK(n == 200);
    /* Fragment 3 first (ids 300..399), then fragment 1 (100..199). */
    CHECK(ids[0] == 300 && ids[99] == 399 && ids[100] == 100 && ids[199] == 199);
    lance_scanner_close(s);

    s = lance_scanner_new(ds, cols, NULL);
    uint64_t unknown[] = {0, 17};
    CHECK_ERR(lance_scanner_set_fragment_ids(s, unknown, 2), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("ids[1] = 17 is not a fragment of dataset version 1"));
    uint64_t dup[] = {2, 2};
    CHECK_ERR(lance_scanner_set_fragment_ids(s, dup, 2), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("ids[1] = 2"));
    uint64_t huge[] = {1ull << 40};
    CHECK_ERR(lance_scanner_set_fragment_ids(s, huge, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_fragment_ids(s, NULL, 3), LANCE_ERR_INVALID_ARGUMENT);
    /* Clearing the restriction scans everything again. */
    CHECK_OK(lance_scanner_set_fragment_ids(s, fragment_ids, 2));
    CHECK_OK(lance_scanner_set_fragment_ids(s, NULL, 0));
    CHECK(tu_count_scan(s) == data.rows);
    lance_scanner_close(s);
}

static void test_bad_scanners(void) {
    const char* bad_cols[] = {"id", "no_such_column", NULL};
    CHECK(lance_scanner_new(ds, bad_cols, NULL) == NULL);
    CHECK(lance_last_error_code() != LANCE_OK);
    CHECK(tu_error_mentions("no_such_column"));
    CHECK(lance_scanner_new(ds, NULL, "id >>>= 3") == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_scanner_new(ds, NULL, "missing_col > 3") == NULL);
    CHECK(tu_error_mentions("missing_col"));
    CHECK(lance_scanner_new(NULL, NULL, NULL) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);

    CHECK_ERR(lance_scanner_set_limit(NULL, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_offset(NULL, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_batch_size(NULL, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_with_row_id(NULL, true), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_fragment_ids(NULL, NULL, 0), LANCE_ERR_INVALID_ARGUMENT);
    struct ArrowArrayStream st;
    CHECK_ERR(lance_scanner_to_arrow_stream(NULL, &st), LANCE_ERR_INVALID_ARGUMENT);
    LanceBatch* b;
    CHECK_ERR(lance_scanner_next(NULL, &b), LANCE_ERR_INVALID_ARGUMENT);
    LanceScanner* s = lance_scanner_new(ds, NULL, NULL);
    CHECK_ERR(lance_scanner_next(s, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_to_arrow_stream(s, NULL), LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);
    lance_scanner_close(NULL);

    struct ArrowArray a;
    struct ArrowSchema sc;
    CHECK_ERR(lance_batch_to_arrow(NULL, &a, &sc), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_batch_num_rows(NULL) == 0 && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    lance_batch_free(NULL);
}

/* Every setter checks the scan it leads to when it is called; a refused
 * setting leaves the scanner as it was. */
static void test_settings_checked_when_made(void) {
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK(s != NULL);
    const float* query = data.vectors + 3 * data.dim;
    CHECK_OK(lance_scanner_nearest(s, "vec", query, (size_t)data.dim, LANCE_DTYPE_FLOAT32, 5));
    CHECK_ERR(lance_scanner_set_metric(s, LANCE_METRIC_HAMMING), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("hamming"));
    CHECK_ERR(lance_scanner_set_metric(s, 42), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_OK(lance_scanner_set_refine_factor(s, 2));
    CHECK_OK(lance_scanner_with_row_id(s, true));
    int64_t got[5], truth[5];
    CHECK(tu_knn_ids(s, got, 5) == 5);
    tu_brute_force_knn(&data, query, 5, truth);
    CHECK(memcmp(got, truth, sizeof got) == 0);
    lance_scanner_close(s);
}

int main(void) {
    data = tu_make_data(1000, 8, 4, 0.5f, 7);
    dir = tu_temp_dir("scan");
    snprintf(uri, sizeof uri, "%s/scan.lance", dir);
    ds = tu_write(uri, &data, 0, data.rows, LANCE_WRITE_CREATE, 100);
    CHECK(ds != NULL);
    if (ds) {
        RUN(test_projection_and_filter);
        RUN(test_limit_offset_batch_rowid);
        RUN(test_fragments);
        RUN(test_bad_scanners);
        RUN(test_settings_checked_when_made);
    }
    lance_dataset_close(ds);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_scan");
}
