/* Random access (lance.h "Random access"): lance_dataset_take() by row
 * position and lance_dataset_take_rows() by row id, checked against
 * pylance's take and _take_rows on the same multi-fragment dataset with a
 * deletion (positions skip deleted rows, order and repeats are kept), plus
 * every bad-input path.
 *
 * Usage: test_take <python with pylance> <tests/api/take_oracle.py>.
 * Without them the test fails: it never skips. */
#include <string.h>

#include "dataset_kit.h"
#include "rows_text.h"

static TuData data;
static const char* python;
static const char* oracle_script;

/* Runs take_oracle.py with the NULL-terminated arguments; its stdout, or
 * NULL (a failed check) when it cannot run or exits with an error. */
#define oracle(...) tu_oracle(python, oracle_script, __VA_ARGS__)

/* Comma list of numbers, for the oracle's arguments. */
static char* numbers_text(const uint64_t* values, size_t n) {
    TuText t = {0};
    for (size_t i = 0; i < n; i++) tu_text_append(&t, "%s%llu", i ? "," : "", (unsigned long long)values[i]);
    return tu_text_take(&t);
}

static void check_take(LanceDataset* ds, const char* uri, int by_row_id, const uint64_t* ids, size_t n,
                       const char* const* columns, const char* columns_arg, int64_t expect_rows) {
    struct ArrowArrayStream stream;
    int rc = by_row_id ? lance_dataset_take_rows(ds, ids, n, columns, &stream)
                       : lance_dataset_take(ds, ids, n, columns, &stream);
    CHECK(rc == 0);
    if (rc != 0) return;
    int64_t rows = -1;
    char* ours = tu_stream_text(&stream, &rows);
    CHECK(rows == expect_rows);
    char* list = numbers_text(ids, n);
    char* theirs = oracle(by_row_id ? "take_rows" : "take", uri, dk_version_text(lance_dataset_version(ds)),
                          columns_arg, list, NULL);
    tu_check_same_text(by_row_id ? "take_rows" : "take", ours, theirs);
    free(ours);
    free(theirs);
    free(list);
}

static void test_take(void) {
    char* dir = tu_temp_dir("take");
    char uri[600];
    LanceDataset* ds = tu_history_dataset(&data, dir, "t.lance", uri, sizeof uri);

    /* Positions skip the deleted rows 10..19; order and repeats are kept. */
    const uint64_t indices[] = {389, 5, 5, 0, 10, 99, 290, 10};
    check_take(ds, uri, 0, indices, 8, NULL, "*", 8);
    const char* subset[] = {"tag", "id", NULL};
    check_take(ds, uri, 0, indices, 8, subset, "tag,id", 8);
    const char* with_row_id[] = {"id", "_rowid", NULL};
    check_take(ds, uri, 0, indices, 8, with_row_id, "id,_rowid", 8);
    check_take(ds, uri, 0, NULL, 0, subset, "tag,id", 0);

    /* Position 10 is the row with id 20. */
    struct ArrowArrayStream stream;
    const char* id_only[] = {"id", NULL};
    CHECK_OK(lance_dataset_take(ds, &indices[4], 1, id_only, &stream));
    char* text = tu_stream_text(&stream, NULL);
    CHECK(text && strcmp(text, "id=20\n") == 0);
    free(text);

    /* Row ids: fragment id << 32 | offset; 12 is deleted (id 12). */
    const uint64_t row_ids[] = {(3ULL << 32) | 99, 0, 0, (1ULL << 32) | 7, 12, 25};
    check_take(ds, uri, 1, row_ids, 6, NULL, "*", 5);
    check_take(ds, uri, 1, row_ids, 6, with_row_id, "id,_rowid", 5);
    check_take(ds, uri, 1, NULL, 0, NULL, "*", 0);

    /* Bad input. */
    const uint64_t past_end[] = {0, 390};
    CHECK_ERR(lance_dataset_take(ds, past_end, 2, NULL, &stream), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("indices[1] = 390"));
    CHECK_ERR(lance_dataset_take(ds, NULL, 2, NULL, &stream), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_take(ds, indices, 1, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_take(NULL, indices, 1, NULL, &stream), LANCE_ERR_INVALID_ARGUMENT);
    const char* unknown[] = {"id", "nope", NULL};
    CHECK_ERR(lance_dataset_take(ds, indices, 1, unknown, &stream), LANCE_ERR_NOT_FOUND);
    CHECK(tu_error_mentions("nope"));
    const char* no_columns[] = {NULL};
    CHECK_ERR(lance_dataset_take(ds, indices, 1, no_columns, &stream), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_take_rows(ds, NULL, 2, NULL, &stream), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_take_rows(ds, row_ids, 1, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_take_rows(NULL, row_ids, 1, NULL, &stream), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_take_rows(ds, row_ids, 1, unknown, &stream), LANCE_ERR_NOT_FOUND);
    CHECK_ERR(lance_dataset_take_rows(ds, row_ids, 1, no_columns, &stream), LANCE_ERR_INVALID_ARGUMENT);

    /* The stream holds its rows: it outlives the dataset handle. */
    CHECK_OK(lance_dataset_take(ds, indices, 3, id_only, &stream));
    lance_dataset_close(ds);
    text = tu_stream_text(&stream, NULL);
    CHECK(text && strcmp(text, "id=399\nid=5\nid=5\n") == 0);
    free(text);

    tu_remove_tree(dir);
    free(dir);
}

int main(int argc, char** argv) {
    if (!tu_history_begin(argc, argv, &python, &oracle_script, &data)) return 1;
    RUN(test_take);
    tu_free_data(&data);
    return tu_finish("test_take");
}
