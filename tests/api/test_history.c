/* Version history, restore and data statistics, checked against pylance of
 * the same Lance release reading (or restoring a copy of) the same
 * multi-fragment dataset, plus every bad-input path.
 *
 * Usage: test_history <python with pylance> <tests/api/history_oracle.py>.
 * Without them the test fails: it never skips. */
#include <dirent.h>
#include <string.h>

#include "rows_text.h"

static TuData data;
static const char* python;
static const char* oracle_script;
static char* dir; /* the datasets' temporary directory */

/* Runs history_oracle.py with the NULL-terminated arguments; its stdout, or
 * NULL (a failed check) when it cannot run or exits with an error. */
#define oracle(...) tu_oracle(python, oracle_script, __VA_ARGS__)

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
    char uri[600];
    LanceDataset* ds = tu_history_dataset(&data, dir, "v.lance", uri, sizeof uri);

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
    tu_check_same_text("versions", ours, theirs);
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
    char uri[600];
    LanceDataset* ds = tu_history_dataset(&data, dir, "s.lance", uri, sizeof uri);

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
    tu_check_same_text("field ids", tu_text_take(&ids), schema_ids);
    char* theirs = oracle("stats", uri, NULL);
    tu_check_same_text("data statistics", tu_text_take(&entries), theirs);
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
}

/* ---- restore ---- */

static void test_restore(void) {
    char uri[600];
    LanceDataset* ds = tu_history_dataset(&data, dir, "r.lance", uri, sizeof uri);

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
    char* ours = tu_scan_text(restored);
    char* v1 = oracle("rows", uri, "1", NULL);
    char* v4 = oracle("rows", uri, "4", NULL);
    tu_check_same_text("restored rows vs version 1", ours, v1);
    tu_check_same_text("restored rows vs version 4", ours, v4);
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
    char* rows = tu_scan_text(again);
    TuText t = {0};
    tu_text_append(&t, "version %llu\n%s", (unsigned long long)lance_dataset_version(again), rows ? rows : "");
    ours = tu_text_take(&t);
    tu_check_same_text("restore of the latest version vs pylance's", ours, theirs);
    v4 = oracle("rows", uri, "4", NULL);
    tu_check_same_text("rows of version 5 vs version 4", rows, v4);
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
    ours = tu_scan_text(again);
    char* v3 = oracle("rows", uri, "3", NULL);
    tu_check_same_text("rows of version 6 vs version 3", ours, v3);
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
}

int main(int argc, char** argv) {
    if (!tu_history_begin(argc, argv, &python, &oracle_script, &data)) return 1;
    dir = tu_temp_dir("history");
    RUN(test_versions);
    RUN(test_data_stats);
    RUN(test_restore);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_history");
}
