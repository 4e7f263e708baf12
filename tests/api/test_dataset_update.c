/* lance_dataset_update() (lance.h "Datasets"), checked against pylance's
 * update of a copy of the same multi-fragment dataset with a deletion: the
 * count of updated rows and every row after it, for a predicate, for all
 * rows and for none; two columns at once; and every bad-input path, after
 * which the handle stays at its version.
 *
 * Usage: test_dataset_update <python with pylance> <tests/api/dataset_update_oracle.py>.
 * Without them the test fails: it never skips. */
#include <string.h>

#include "rows_text.h"

static TuData data;
static const char* python;
static const char* oracle_script;

/* Runs dataset_update_oracle.py with the NULL-terminated arguments; its
 * stdout, or NULL (a failed check) when it cannot run or exits with an error. */
#define oracle(...) tu_oracle(python, oracle_script, __VA_ARGS__)

/* Updates the dataset through the C API and a copy of it through pylance,
 * and compares the counts and the resulting rows. */
static void check_update_like_pylance(LanceDataset* ds, const char* uri, const char* copy, const char* predicate,
                                      const char* column, const char* value, uint64_t expect_updated) {
    char assignment[300];
    snprintf(assignment, sizeof assignment, "%s=%s", column, value);
    char* theirs = oracle("update", uri, copy, predicate ? predicate : "-", assignment, NULL);

    uint64_t before = lance_dataset_version(ds);
    const char* columns[] = {column};
    const char* values[] = {value};
    uint64_t updated = 12345;
    CHECK_OK(lance_dataset_update(ds, predicate, columns, values, 1, &updated));
    CHECK(updated == expect_updated);
    CHECK(lance_dataset_version(ds) == before + 1);
    CHECK(lance_dataset_latest_version(ds) == before + 1);

    TuText ours = {0};
    char* rows = tu_scan_text(ds);
    tu_text_append(&ours, "updated %llu\n%s", (unsigned long long)updated, rows ? rows : "");
    tu_check_same_text(value, tu_text_take(&ours), theirs);
    free(rows);
    free(ours.text);
    free(theirs);
}

static void test_update(void) {
    char* dir = tu_temp_dir("update");
    char uri[600], copy[700];
    LanceDataset* ds = tu_history_dataset(&data, dir, "u.lance", uri, sizeof uri);

    snprintf(copy, sizeof copy, "%s/copy1.lance", dir);
    check_update_like_pylance(ds, uri, copy, "id >= 50 AND id < 120", "tag", "concat('u', tag)", 70);
    /* The updated rows were rewritten at the end of the scan order. */
    const uint64_t last[] = {319, 389};
    const char* id_tag[] = {"id", "tag", NULL};
    struct ArrowArrayStream stream;
    CHECK_OK(lance_dataset_take(ds, last, 2, id_tag, &stream));
    char* text = tu_stream_text(&stream, NULL);
    CHECK(text && strcmp(text, "id=399\ttag=t0\nid=119\ttag=ut0\n") == 0);
    free(text);
    snprintf(copy, sizeof copy, "%s/copy2.lance", dir);
    check_update_like_pylance(ds, uri, copy, NULL, "id", "id * 2 + 1", 390);
    snprintf(copy, sizeof copy, "%s/copy3.lance", dir);
    check_update_like_pylance(ds, uri, copy, "id < 0", "tag", "'never'", 0);

    /* Two columns at once; the out count is optional. */
    const char* columns2[] = {"tag", "id"};
    const char* values2[] = {"'two'", "id + 1000000"};
    CHECK_OK(lance_dataset_update(ds, "id < 41", columns2, values2, 2, NULL));
    LanceScanner* scanner = lance_scanner_new(ds, NULL, "tag = 'two' AND id > 1000000");
    CHECK(tu_count_scan(scanner) == 10); /* ids 0..9 became 1, 3, ... 19 */
    lance_scanner_close(scanner);

    /* Bad input: the handle stays where it was. */
    uint64_t version = lance_dataset_version(ds);
    const char* tag[] = {"tag"};
    const char* value[] = {"'x'"};
    uint64_t updated = 77;
    CHECK_ERR(lance_dataset_update(ds, "", tag, value, 1, &updated), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("predicate"));
    CHECK_ERR(lance_dataset_update(ds, "id >>> 3", tag, value, 1, &updated), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_update(ds, "nope = 1", tag, value, 1, &updated), LANCE_ERR_INVALID_ARGUMENT);
    const char* nope[] = {"nope"};
    CHECK_ERR(lance_dataset_update(ds, NULL, nope, value, 1, &updated), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("columns[0] = \"nope\""));
    const char* bad_sql[] = {"1 +"};
    CHECK_ERR(lance_dataset_update(ds, NULL, tag, bad_sql, 1, &updated), LANCE_ERR_INVALID_ARGUMENT);
    const char* unknown_ref[] = {"nope || 'x'"};
    CHECK_ERR(lance_dataset_update(ds, NULL, tag, unknown_ref, 1, &updated), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_update(ds, NULL, tag, value, 0, &updated), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_update(ds, NULL, NULL, value, 1, &updated), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_update(ds, NULL, tag, NULL, 1, &updated), LANCE_ERR_INVALID_ARGUMENT);
    const char* null_column[] = {NULL};
    CHECK_ERR(lance_dataset_update(ds, NULL, null_column, value, 1, &updated), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("columns[0]"));
    const char* empty[] = {""};
    CHECK_ERR(lance_dataset_update(ds, NULL, empty, value, 1, &updated), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_update(ds, NULL, tag, empty, 1, &updated), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("values[0]"));
    const char* twice[] = {"tag", "tag"};
    const char* two_values[] = {"'a'", "'b'"};
    CHECK_ERR(lance_dataset_update(ds, NULL, twice, two_values, 2, &updated), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("columns[1] = \"tag\""));
    CHECK_ERR(lance_dataset_update(NULL, NULL, tag, value, 1, &updated), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(updated == 77);
    CHECK(lance_dataset_version(ds) == version);
    CHECK(lance_dataset_latest_version(ds) == version);

    lance_dataset_close(ds);
    tu_remove_tree(dir);
    free(dir);
}

int main(int argc, char** argv) {
    if (!tu_history_begin(argc, argv, &python, &oracle_script, &data)) return 1;
    RUN(test_update);
    tu_free_data(&data);
    return tu_finish("test_dataset_update");
}
