/* Version history, restore, data statistics, update and random access,
 * checked against pylance of the same Lance release reading (or changing a
 * copy of) the same multi-fragment dataset, plus every bad-input path.
 *
 * Usage: test_history <python with pylance> <python/history_oracle.py>.
 * Without them the test fails: it never skips. */
#include <dirent.h>
#include <string.h>

#include "test_util.h"

static TuData data;
static const char* python;
static const char* oracle_script;

/* Runs history_oracle.py with the NULL-terminated arguments; its stdout, or
 * NULL (a failed check) when it cannot run or exits with an error. */
#define oracle(...) tu_oracle(python, oracle_script, __VA_ARGS__)

/* Compares the C API's text with pylance's; prints both on a mismatch. */
static void check_same_text(const char* what, const char* ours, const char* theirs) {
    int same = ours && theirs && strcmp(ours, theirs) == 0;
    CHECK(same);
    if (!same) {
        fprintf(stderr, "%s differs\n--- lance-c ---\n%s--- pylance ---\n%s", what, ours ? ours : "(null)\n",
                theirs ? theirs : "(null)\n");
    }
}

/* ---- Arrow results as text, in history_oracle.py's row format ---- */

static int valid_at(const struct ArrowArray* a, int64_t i) {
    const uint8_t* bits = a->n_buffers > 0 ? a->buffers[0] : NULL;
    if (!bits || a->null_count == 0) return 1;
    int64_t j = a->offset + i;
    return (bits[j / 8] >> (j % 8)) & 1;
}

static void value_text(TuText* t, const struct ArrowSchema* s, const struct ArrowArray* a, int64_t i) {
    if (!valid_at(a, i)) {
        tu_text_append(t, "null");
        return;
    }
    int64_t j = a->offset + i;
    if (strcmp(s->format, "l") == 0) {
        tu_text_append(t, "%lld", (long long)((const int64_t*)a->buffers[1])[j]);
    } else if (strcmp(s->format, "L") == 0) {
        tu_text_append(t, "%llu", (unsigned long long)((const uint64_t*)a->buffers[1])[j]);
    } else if (strcmp(s->format, "u") == 0) {
        const int32_t* offsets = a->buffers[1];
        const char* chars = a->buffers[2];
        tu_text_append(t, "%.*s", (int)(offsets[j + 1] - offsets[j]), chars + offsets[j]);
    } else if (strncmp(s->format, "+w:", 3) == 0 && strcmp(s->children[0]->format, "f") == 0) {
        int64_t dim = atoll(s->format + 3);
        const struct ArrowArray* child = a->children[0];
        const float* values = (const float*)child->buffers[1] + child->offset;
        for (int64_t k = 0; k < dim; k++) tu_text_append(t, "%s%.9g", k ? "," : "", (double)values[j * dim + k]);
    } else {
        tu_text_append(t, "<format %s>", s->format);
    }
}

/* Reads a stream to its end (and releases it) as rows of text; also
 * counts the rows.  NULL when the stream fails. */
static char* stream_text(struct ArrowArrayStream* stream, int64_t* out_rows) {
    struct ArrowSchema schema;
    TuText t = {0};
    int64_t rows = 0;
    if (stream->get_schema(stream, &schema) != 0) {
        stream->release(stream);
        return NULL;
    }
    for (;;) {
        struct ArrowArray batch;
        if (stream->get_next(stream, &batch) != 0) {
            free(t.text);
            t.text = NULL;
            break;
        }
        if (!batch.release) break;
        for (int64_t r = 0; r < batch.length; r++) {
            for (int64_t c = 0; c < schema.n_children; c++) {
                tu_text_append(&t, "%s%s=", c ? "\t" : "", schema.children[c]->name);
                value_text(&t, schema.children[c], batch.children[c], batch.offset + r);
            }
            tu_text_append(&t, "\n");
        }
        rows += batch.length;
        batch.release(&batch);
    }
    schema.release(&schema);
    stream->release(stream);
    if (out_rows) *out_rows = rows;
    return tu_text_take(&t);
}

/* Every row of the handle's version, in scan order. */
static char* scan_text(LanceDataset* ds) {
    LanceScanner* scanner = lance_scanner_new(ds, NULL, NULL);
    CHECK(scanner != NULL);
    if (!scanner) return NULL;
    struct ArrowArrayStream stream;
    char* text = NULL;
    if (lance_scanner_to_arrow_stream(scanner, &stream) == 0) text = stream_text(&stream, NULL);
    lance_scanner_close(scanner);
    return text;
}

static char* version_text(uint64_t version) {
    static char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)version);
    return buf;
}

/* A dataset of 400 rows in 4 fragments at version 3: 300 rows written
 * 100 per fragment (v1), 100 appended (v2), rows 10..19 deleted (v3). */
static LanceDataset* make_dataset(const char* dir, const char* name, char* uri, size_t uri_size) {
    snprintf(uri, uri_size, "%s/%s", dir, name);
    LanceDataset* ds = tu_write(uri, &data, 0, 300, LANCE_WRITE_CREATE, 100);
    CHECK(ds != NULL);
    lance_dataset_close(ds);
    ds = tu_write(uri, &data, 300, 100, LANCE_WRITE_APPEND, 100);
    CHECK(ds != NULL);
    uint64_t deleted = 0;
    CHECK_OK(lance_dataset_delete(ds, "id >= 10 AND id < 20", &deleted));
    CHECK(deleted == 10);
    CHECK(lance_dataset_version(ds) == 3);
    CHECK(lance_dataset_fragment_count(ds) == 4);
    CHECK(lance_dataset_count_rows(ds) == 390);
    return ds;
}

/* ---- version history ---- */

static char* versions_text(const LanceVersions* versions) {
    TuText t = {0};
    uint64_t n = lance_versions_count(versions);
    for (uint64_t i = 0; i < n; i++) {
        tu_text_append(&t, "%llu %lld\n", (unsigned long long)lance_versions_id_at(versions, (size_t)i),
                    (long long)lance_versions_timestamp_ms_at(versions, (size_t)i));
    }
    return tu_text_take(&t);
}

static void test_versions(void) {
    char* dir = tu_temp_dir("history");
    char uri[600];
    LanceDataset* ds = make_dataset(dir, "v.lance", uri, sizeof uri);

    LanceVersions* versions = lance_dataset_versions(ds);
    CHECK(versions != NULL);
    CHECK(lance_last_error_code() == LANCE_OK);
    CHECK(lance_versions_count(versions) == 3);
    for (size_t i = 0; i < 3; i++) CHECK(lance_versions_id_at(versions, i) == i + 1);
    CHECK(lance_versions_timestamp_ms_at(versions, 0) > 1600000000000LL);
    CHECK(lance_versions_timestamp_ms_at(versions, 0) <= lance_versions_timestamp_ms_at(versions, 1));
    CHECK(lance_versions_timestamp_ms_at(versions, 1) <= lance_versions_timestamp_ms_at(versions, 2));
    char* ours = versions_text(versions);
    char* theirs = oracle("versions", uri, NULL);
    check_same_text("versions", ours, theirs);
    free(ours);
    free(theirs);

    /* Out of range and NULL: 0 and INVALID_ARGUMENT. */
    CHECK(lance_versions_id_at(versions, 3) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("index = 3"));
    CHECK(lance_versions_timestamp_ms_at(versions, 3) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_versions_timestamp_ms_at(versions, SIZE_MAX) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_versions_count(NULL) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_versions_id_at(NULL, 0) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_versions_timestamp_ms_at(NULL, 0) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_versions(NULL) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    /* A success clears the error. */
    CHECK(lance_versions_count(versions) == 3);
    CHECK(lance_last_error_code() == LANCE_OK);
    lance_versions_close(versions);
    lance_versions_close(NULL);

    /* A handle at an old version lists the whole history. */
    LanceDataset* old = lance_dataset_open(uri, NULL, 1);
    CHECK(old != NULL);
    versions = lance_dataset_versions(old);
    CHECK(lance_versions_count(versions) == 3);
    CHECK(lance_versions_id_at(versions, 2) == 3);
    lance_versions_close(versions);
    lance_dataset_close(old);

    lance_dataset_close(ds);
    tu_remove_tree(dir);
    free(dir);
}

/* ---- data statistics ---- */

/* Sum of the sizes of the data files under <uri>/data. */
static int64_t data_files_size(const char* uri) {
    char path[800];
    snprintf(path, sizeof path, "%s/data", uri);
    DIR* d = opendir(path);
    CHECK(d != NULL);
    if (!d) return -1;
    int64_t total = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char file[1100];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        total += tu_file_size(file);
    }
    closedir(d);
    return total;
}

static void test_data_stats(void) {
    char* dir = tu_temp_dir("stats");
    char uri[600];
    LanceDataset* ds = make_dataset(dir, "s.lance", uri, sizeof uri);

    LanceDataStatistics* stats = lance_dataset_calculate_data_stats(ds);
    CHECK(stats != NULL);
    uint64_t n = lance_data_statistics_count(stats);
    CHECK(n >= 3);
    CHECK(lance_last_error_code() == LANCE_OK);

    TuText ids = {0};
    TuText entries = {0};
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t id = lance_data_statistics_field_id_at(stats, (size_t)i);
        CHECK(lance_last_error_code() == LANCE_OK);
        uint64_t bytes = lance_data_statistics_bytes_on_disk_at(stats, (size_t)i);
        CHECK(lance_last_error_code() == LANCE_OK);
        if (i > 0) CHECK(id > lance_data_statistics_field_id_at(stats, (size_t)i - 1));
        tu_text_append(&ids, "%u\n", id);
        tu_text_append(&entries, "%u %llu\n", id, (unsigned long long)bytes);
        total += bytes;
    }
    /* Every leaf column holds data; the files hold them plus their metadata. */
    CHECK(lance_data_statistics_bytes_on_disk_at(stats, 0) > 0);
    CHECK(total > 0);
    CHECK((int64_t)total <= data_files_size(uri));
    char* schema_ids = oracle("field_ids", uri, NULL);
    check_same_text("field ids", tu_text_take(&ids), schema_ids);
    char* theirs = oracle("stats", uri, NULL);
    check_same_text("data statistics", tu_text_take(&entries), theirs);
    free(schema_ids);
    free(theirs);
    free(ids.text);
    free(entries.text);

    CHECK(lance_data_statistics_field_id_at(stats, (size_t)n) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("out of range"));
    CHECK(lance_data_statistics_bytes_on_disk_at(stats, (size_t)n) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_data_statistics_count(NULL) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_data_statistics_field_id_at(NULL, 0) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_data_statistics_bytes_on_disk_at(NULL, 0) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_calculate_data_stats(NULL) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    lance_data_statistics_close(stats);
    lance_data_statistics_close(NULL);

    lance_dataset_close(ds);
    tu_remove_tree(dir);
    free(dir);
}

/* ---- restore ---- */

static void test_restore(void) {
    char* dir = tu_temp_dir("restore");
    char uri[600];
    LanceDataset* ds = make_dataset(dir, "r.lance", uri, sizeof uri);

    LanceDataset* restored = lance_dataset_restore(ds, 1);
    CHECK(restored != NULL);
    CHECK(lance_dataset_version(restored) == 4);
    CHECK(lance_dataset_latest_version(restored) == 4);
    CHECK(lance_dataset_count_rows(restored) == 300);
    CHECK(lance_dataset_fragment_count(restored) == 3);
    /* The given handle keeps its version. */
    CHECK(lance_dataset_version(ds) == 3);
    CHECK(lance_dataset_count_rows(ds) == 390);

    /* Version 4 holds version 1's rows, as pylance reads both. */
    char* ours = scan_text(restored);
    char* v1 = oracle("rows", uri, "1", NULL);
    char* v4 = oracle("rows", uri, "4", NULL);
    check_same_text("restored rows vs version 1", ours, v1);
    check_same_text("restored rows vs version 4", ours, v4);
    free(ours);
    free(v1);
    free(v4);

    /* Restoring the latest version commits a new version too: version 4
       becomes version 5, with version 4's rows, as pylance's restore does
       on a copy of the same four versions. */
    char copy[700];
    snprintf(copy, sizeof copy, "%s/r-copy.lance", dir);
    char* theirs = oracle("restore", uri, copy, "4", NULL);
    LanceDataset* again = lance_dataset_restore(restored, 4);
    CHECK(again != NULL);
    CHECK(lance_dataset_version(again) == 5);
    CHECK(lance_dataset_latest_version(again) == 5);
    CHECK(lance_dataset_version(restored) == 4);
    LanceVersions* versions = lance_dataset_versions(again);
    CHECK(lance_versions_count(versions) == 5);
    CHECK(lance_versions_id_at(versions, 4) == 5);
    lance_versions_close(versions);
    char* rows = scan_text(again);
    TuText t = {0};
    tu_text_append(&t, "version %llu\n%s", (unsigned long long)lance_dataset_version(again), rows ? rows : "");
    ours = tu_text_take(&t);
    check_same_text("restore of the latest version vs pylance's", ours, theirs);
    v4 = oracle("rows", uri, "4", NULL);
    check_same_text("rows of version 5 vs version 4", rows, v4);
    free(rows);
    free(ours);
    free(theirs);
    free(v4);
    lance_dataset_close(again);

    /* Restoring from a stale handle: version 3 becomes version 6. */
    again = lance_dataset_restore(ds, 3);
    CHECK(again != NULL);
    CHECK(lance_dataset_version(again) == 6);
    CHECK(lance_dataset_count_rows(again) == 390);
    ours = scan_text(again);
    char* v3 = oracle("rows", uri, "3", NULL);
    check_same_text("rows of version 6 vs version 3", ours, v3);
    free(ours);
    free(v3);
    lance_dataset_close(again);

    CHECK(lance_dataset_restore(ds, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("version = 0"));
    CHECK(lance_dataset_restore(ds, 99) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);
    CHECK(tu_error_mentions("99"));
    CHECK(lance_dataset_restore(NULL, 1) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_latest_version(ds) == 6);

    lance_dataset_close(restored);
    lance_dataset_close(ds);
    tu_remove_tree(dir);
    free(dir);
}

/* ---- update ---- */

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
    char* rows = scan_text(ds);
    tu_text_append(&ours, "updated %llu\n%s", (unsigned long long)updated, rows ? rows : "");
    check_same_text(value, tu_text_take(&ours), theirs);
    free(rows);
    free(ours.text);
    free(theirs);
}

static void test_update(void) {
    char* dir = tu_temp_dir("update");
    char uri[600], copy[700];
    LanceDataset* ds = make_dataset(dir, "u.lance", uri, sizeof uri);

    snprintf(copy, sizeof copy, "%s/copy1.lance", dir);
    check_update_like_pylance(ds, uri, copy, "id >= 50 AND id < 120", "tag", "concat('u', tag)", 70);
    /* The updated rows were rewritten at the end of the scan order. */
    const uint64_t last[] = {319, 389};
    const char* id_tag[] = {"id", "tag", NULL};
    struct ArrowArrayStream stream;
    CHECK_OK(lance_dataset_take(ds, last, 2, id_tag, &stream));
    char* text = stream_text(&stream, NULL);
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

/* ---- take and take_rows ---- */

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
    char* ours = stream_text(&stream, &rows);
    CHECK(rows == expect_rows);
    char* list = numbers_text(ids, n);
    char* theirs = oracle(by_row_id ? "take_rows" : "take", uri, version_text(lance_dataset_version(ds)), columns_arg,
                          list, NULL);
    check_same_text(by_row_id ? "take_rows" : "take", ours, theirs);
    free(ours);
    free(theirs);
    free(list);
}

static void test_take(void) {
    char* dir = tu_temp_dir("take");
    char uri[600];
    LanceDataset* ds = make_dataset(dir, "t.lance", uri, sizeof uri);

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
    char* text = stream_text(&stream, NULL);
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
    text = stream_text(&stream, NULL);
    CHECK(text && strcmp(text, "id=399\nid=5\nid=5\n") == 0);
    free(text);

    tu_remove_tree(dir);
    free(dir);
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s <python with pylance> <history_oracle.py>\n", argv[0]);
        return 1;
    }
    python = argv[1];
    oracle_script = argv[2];
    data = tu_make_data(400, 4, 4, 0.5f, 7);
    RUN(test_versions);
    RUN(test_data_stats);
    RUN(test_restore);
    RUN(test_update);
    RUN(test_take);
    tu_free_data(&data);
    return tu_finish("test_history");
}
