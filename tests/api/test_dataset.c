/* Datasets (lance.h "Datasets"): open at the latest and at an old version,
 * versions, row counts, schema, fragment ids and row counts (the bounded
 * listing never overruns), handles keeping their snapshot across appends
 * and overwrites; deleting rows, compacting fragments and cleaning up old
 * versions, each with its exact effect on rows, fragments, versions and
 * files, cleanup cutoffs at the limits of their type; and every bad-input
 * path. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dataset_kit.h"
#include "test_util.h"

static TuData data;
static char* dir;

/* Rows [0, rows) of `data` written as the new dataset dir/<name>.lance,
 * `rows_per_fragment` a fragment; its URI to uri[0..600).  NULL is a
 * failed check. */
static LanceDataset* create(const char* name, int64_t rows, uint64_t rows_per_fragment, char uri[600]) {
    snprintf(uri, 600, "%s/%s.lance", dir, name);
    LanceDataset* ds = tu_write(uri, &data, 0, rows, LANCE_WRITE_CREATE, rows_per_fragment);
    CHECK(ds != NULL);
    return ds;
}

static void test_write_open_fragments(void) {
    char uri[600];
    LanceDataset* ds = create("data", 1000, 100, uri);
    CHECK(lance_dataset_version(ds) == 1);
    CHECK(lance_dataset_latest_version(ds) == 1);
    CHECK(lance_dataset_count_rows(ds) == 1000);
    CHECK(lance_dataset_fragment_count(ds) == 10);

    uint64_t ids[10];
    CHECK_OK(lance_dataset_fragment_ids(ds, ids));
    for (int i = 0; i < 10; i++) CHECK(ids[i] == (uint64_t)i);

    uint64_t counts[10];
    CHECK_OK(lance_dataset_fragment_row_counts(ds, counts, 10));
    for (int i = 0; i < 10; i++) CHECK(counts[i] == 100);
    CHECK_ERR(lance_dataset_fragment_row_counts(ds, counts, 9), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("capacity = 9"));
    CHECK_ERR(lance_dataset_fragment_row_counts(ds, NULL, 10), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_fragment_ids(ds, NULL), LANCE_ERR_INVALID_ARGUMENT);

    struct ArrowSchema schema;
    CHECK_OK(lance_dataset_schema(ds, &schema));
    CHECK(strcmp(schema.format, "+s") == 0);
    CHECK(schema.n_children == 3);
    CHECK(strcmp(schema.children[0]->name, "id") == 0 && strcmp(schema.children[0]->format, "l") == 0);
    CHECK(strcmp(schema.children[1]->name, "vec") == 0 && strcmp(schema.children[1]->format, "+w:16") == 0);
    CHECK(strcmp(schema.children[2]->name, "tag") == 0 && strcmp(schema.children[2]->format, "u") == 0);
    schema.release(&schema);
    CHECK_ERR(lance_dataset_schema(ds, NULL), LANCE_ERR_INVALID_ARGUMENT);

    /* Append: a second handle at version 2; the first keeps its snapshot. */
    LanceDataset* ds2 = tu_write(uri, &data, 1000, 500, LANCE_WRITE_APPEND, 250);
    CHECK(ds2 != NULL);
    CHECK(lance_dataset_version(ds2) == 2);
    CHECK(lance_dataset_count_rows(ds2) == 1500);
    CHECK(lance_dataset_fragment_count(ds2) == 12);
    CHECK(lance_dataset_version(ds) == 1);
    CHECK(lance_dataset_count_rows(ds) == 1000);
    CHECK(lance_dataset_latest_version(ds) == 2);

    /* Open latest, and an old version. */
    LanceDataset* latest = lance_dataset_open(uri, NULL, 0);
    CHECK(latest != NULL && lance_dataset_version(latest) == 2);
    LanceDataset* v1 = lance_dataset_open(uri, NULL, 1);
    CHECK(v1 != NULL && lance_dataset_count_rows(v1) == 1000);
    CHECK(lance_dataset_open(uri, NULL, 99) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);

    /* Overwrite: one version more, the new data only. */
    LanceDataset* ds3 = tu_write(uri, &data, 0, 300, LANCE_WRITE_OVERWRITE, 0);
    CHECK(ds3 != NULL);
    CHECK(lance_dataset_version(ds3) == 3);
    CHECK(lance_dataset_count_rows(ds3) == 300);
    CHECK(lance_dataset_fragment_count(ds3) == 1);

    /* Create where a dataset exists. */
    CHECK(tu_write(uri, &data, 0, 10, LANCE_WRITE_CREATE, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_DATASET_ALREADY_EXISTS);

    lance_dataset_close(ds);
    lance_dataset_close(ds2);
    lance_dataset_close(ds3);
    lance_dataset_close(latest);
    lance_dataset_close(v1);
    lance_dataset_close(NULL);
}

static void test_open_errors(void) {
    CHECK(lance_dataset_open(NULL, NULL, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_open("", NULL, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_open("/nonexistent/lance-c/nothing.lance", NULL, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);
    CHECK(tu_error_mentions("nothing.lance"));

    const char* odd[] = {"key_without_value", NULL};
    CHECK(lance_dataset_open("/tmp/x.lance", odd, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("storage_opts"));

    const char bad_utf8[] = {'/', 't', (char)0xff, (char)0xfe, 0};
    CHECK(lance_dataset_open(bad_utf8, NULL, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("UTF-8"));

    /* NULL handles on every getter. */
    CHECK(lance_dataset_version(NULL) == 0 && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_latest_version(NULL) == 0 && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_count_rows(NULL) == 0 && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_fragment_count(NULL) == 0 && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    uint64_t ids[1];
    CHECK_ERR(lance_dataset_fragment_ids(NULL, ids), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_fragment_row_counts(NULL, ids, 1), LANCE_ERR_INVALID_ARGUMENT);
    struct ArrowSchema s;
    CHECK_ERR(lance_dataset_schema(NULL, &s), LANCE_ERR_INVALID_ARGUMENT);
}

static void test_fragment_ids_bounded(void) {
    char uri[600];
    LanceDataset* ds = create("fragments", 1000, 250, uri);
    size_t count = 99;
    CHECK_OK(lance_dataset_fragment_ids_bounded(ds, NULL, 0, &count));
    CHECK(count == 4);
    uint64_t ids[8] = {7, 7, 7, 7, 7, 7, 7, 7};
    count = 0;
    CHECK_ERR(lance_dataset_fragment_ids_bounded(ds, ids, 3, &count), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(count == 4);
    CHECK(ids[0] == 7 && ids[2] == 7); /* nothing written */
    CHECK_OK(lance_dataset_fragment_ids_bounded(ds, ids, 8, &count));
    CHECK(count == 4);
    uint64_t plain[4];
    CHECK_OK(lance_dataset_fragment_ids(ds, plain));
    CHECK(memcmp(ids, plain, sizeof plain) == 0);
    CHECK(ids[0] == 0 && ids[3] == 3);
    CHECK(ids[4] == 7);
    CHECK_ERR(lance_dataset_fragment_ids_bounded(ds, ids, 8, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_fragment_ids_bounded(ds, NULL, 8, &count), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_fragment_ids_bounded(NULL, ids, 8, &count), LANCE_ERR_INVALID_ARGUMENT);
    lance_dataset_close(ds);
}

static void test_delete_compact_cleanup(void) {
    char uri[600];
    LanceDataset* ds = create("m", 1000, 100, uri);
    if (!ds) return;
    CHECK(lance_dataset_fragment_count(ds) == 10);

    /* Delete: rows 150..299 go; fragment 2 (ids 200..299) leaves whole,
       fragment 1 keeps half. */
    uint64_t deleted = 0;
    CHECK_OK(lance_dataset_delete(ds, "id >= 150 AND id < 300", &deleted));
    CHECK(deleted == 150);
    CHECK(lance_dataset_version(ds) == 2 && lance_dataset_count_rows(ds) == 850);
    CHECK(lance_dataset_fragment_count(ds) == 9);
    uint64_t ids[9], counts[9];
    CHECK_OK(lance_dataset_fragment_ids(ds, ids));
    CHECK_OK(lance_dataset_fragment_row_counts(ds, counts, 9));
    const uint64_t want_ids[9] = {0, 1, 3, 4, 5, 6, 7, 8, 9};
    const uint64_t want_counts[9] = {100, 50, 100, 100, 100, 100, 100, 100, 100};
    CHECK(memcmp(ids, want_ids, sizeof ids) == 0);
    CHECK(memcmp(counts, want_counts, sizeof counts) == 0);
    int64_t got[1000];
    CHECK(dk_scan_ids(ds, NULL, got, 1000) == 850);
    for (int64_t i = 0; i < 850; i++) CHECK(got[i] == (i < 150 ? i : i + 150));
    /* Nothing matches: nothing deleted; the out count is optional. */
    deleted = 77;
    CHECK_OK(lance_dataset_delete(ds, "id < 0", &deleted));
    CHECK(deleted == 0 && lance_dataset_count_rows(ds) == 850);
    CHECK_OK(lance_dataset_delete(ds, "id = 999", NULL));
    CHECK(lance_dataset_count_rows(ds) == 849);
    uint64_t version = lance_dataset_version(ds);
    /* Bad input: the handle stays where it was. */
    CHECK_ERR(lance_dataset_delete(ds, "id >>> 3", &deleted), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_delete(ds, "nope = 1", &deleted), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_delete(ds, NULL, &deleted), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_delete(NULL, "id = 1", &deleted), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_version(ds) == version && lance_dataset_latest_version(ds) == version);

    /* Compaction: the nine small fragments and their two deletion files
       become one data file, with the same rows in the same order; the
       handle moves to the version it committed. */
    LanceCompactionOptions options = {0};
    options.target_rows_per_fragment = 2000;
    LanceCompactionMetrics metrics;
    memset(&metrics, 0xff, sizeof metrics);
    CHECK_OK(lance_dataset_compact_files(ds, &options, &metrics));
    CHECK(metrics.fragments_removed == 9 && metrics.fragments_added == 1);
    CHECK(metrics.files_removed == 11 && metrics.files_added == 1);
    uint64_t compacted = lance_dataset_version(ds);
    CHECK(compacted > version && lance_dataset_latest_version(ds) == compacted);
    CHECK(lance_dataset_fragment_count(ds) == 1 && lance_dataset_count_rows(ds) == 849);
    int64_t after[1000];
    CHECK(dk_scan_ids(ds, NULL, after, 1000) == 849);
    CHECK(memcmp(after, got, sizeof(int64_t) * 849) == 0);
    /* Nothing left to compact: zeroed metrics, no new version. */
    memset(&metrics, 0xff, sizeof metrics);
    CHECK_OK(lance_dataset_compact_files(ds, NULL, &metrics));
    CHECK(metrics.fragments_removed == 0 && metrics.fragments_added == 0);
    CHECK(metrics.files_removed == 0 && metrics.files_added == 0);
    CHECK(lance_dataset_version(ds) == compacted && lance_dataset_latest_version(ds) == compacted);
    CHECK_ERR(lance_dataset_compact_files(NULL, NULL, &metrics), LANCE_ERR_INVALID_ARGUMENT);

    /* Cleanup: every version but the latest goes, with the files only they
       used; the handle keeps its version and its rows. */
    LanceCleanupStats stats;
    memset(&stats, 0xff, sizeof stats);
    CHECK_OK(lance_dataset_cleanup_old_versions(ds, 0, true, &stats));
    CHECK(stats.old_versions == compacted - 1);
    CHECK(stats.transaction_files_removed == compacted - 1);
    CHECK(stats.data_files_removed == 10);
    CHECK(stats.deletion_files_removed == 2);
    CHECK(stats.index_files_removed == 0);
    CHECK(stats.bytes_removed > 0);
    CHECK(lance_dataset_version(ds) == compacted && lance_dataset_count_rows(ds) == 849);
    CHECK(lance_dataset_open(uri, NULL, 1) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);
    LanceDataset* latest = lance_dataset_open(uri, NULL, 0);
    CHECK(latest != NULL && lance_dataset_version(latest) == compacted);
    CHECK(latest && dk_scan_ids(latest, NULL, after, 1000) == 849 && memcmp(after, got, sizeof(int64_t) * 849) == 0);
    lance_dataset_close(latest);
    /* Again: nothing old left. */
    memset(&stats, 0xff, sizeof stats);
    CHECK_OK(lance_dataset_cleanup_old_versions(ds, 0, true, &stats));
    CHECK(stats.old_versions == 0 && stats.data_files_removed == 0 && stats.bytes_removed == 0);
    CHECK_ERR(lance_dataset_cleanup_old_versions(NULL, 0, true, &stats), LANCE_ERR_INVALID_ARGUMENT);
    /* The local file system has no incomplete uploads (tests/stores: s3://). */
    uint64_t aborted = 99;
    CHECK_OK(lance_dataset_abort_incomplete_uploads(ds, 0, &aborted));
    CHECK(aborted == 0);
    CHECK_OK(lance_dataset_abort_incomplete_uploads(ds, 0, NULL));
    CHECK_ERR(lance_dataset_abort_incomplete_uploads(NULL, 0, &aborted), LANCE_ERR_INVALID_ARGUMENT);
    lance_dataset_close(ds);
}

/* Cleanup cutoffs at the limits of uint64_t: a cutoff before the Unix
 * epoch (now minus more seconds than have passed since 1970, far beyond
 * what chrono's dates reach among them) is the epoch, so nothing goes and
 * every call succeeds; 1 removes exactly the version older than a second,
 * 0 every old one. */
static void test_cleanup_cutoffs(void) {
    char uri[600];
    lance_dataset_close(create("c", 500, 100, uri));
    LanceDataset* ds = tu_write(uri, &data, 500, 500, LANCE_WRITE_APPEND, 100);
    CHECK(ds != NULL && lance_dataset_version(ds) == 2);
    if (!ds) return;
    time_t written = time(NULL);

    static const uint64_t beyond_epoch[] = {
        4000000000u,       /* 127 years ago: before 1970 */
        8300000000000u,    /* within chrono's dates */
        8400000000000u,    /* past them (the core's date arithmetic panicked) */
        10000000000000u,   /* lance-index cleanup --older-than 10000000000000 */
        9200000000000000u, /* the most chrono's TimeDelta holds is 9.22e15 s */
        9300000000000000u, /* past it (the upload abort failed with LANCE_ERR_IO) */
        (uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX,
    };
    for (size_t i = 0; i < sizeof beyond_epoch / sizeof beyond_epoch[0]; i++) {
        for (int unverified = 0; unverified <= 1; unverified++) {
            LanceCleanupStats stats;
            memset(&stats, 0xff, sizeof stats);
            CHECK_OK(lance_dataset_cleanup_old_versions(ds, beyond_epoch[i], unverified, &stats));
            CHECK(stats.old_versions == 0 && stats.bytes_removed == 0 && stats.data_files_removed == 0 &&
                  stats.transaction_files_removed == 0 && stats.index_files_removed == 0 &&
                  stats.deletion_files_removed == 0);
        }
        uint64_t aborted = 99;
        CHECK_OK(lance_dataset_abort_incomplete_uploads(ds, beyond_epoch[i], &aborted));
        CHECK(aborted == 0);
    }
    LanceDataset* v1 = lance_dataset_open(uri, NULL, 1);
    CHECK(v1 != NULL && lance_dataset_count_rows(v1) == 500);
    lance_dataset_close(v1);

    /* 1: once version 1 is more than a second old, it goes (not the latest). */
    while (time(NULL) < written + 2) sleep(1);
    LanceCleanupStats stats;
    memset(&stats, 0xff, sizeof stats);
    CHECK_OK(lance_dataset_cleanup_old_versions(ds, 1, false, &stats));
    CHECK(stats.old_versions == 1 && stats.transaction_files_removed == 1 && stats.data_files_removed == 0);
    CHECK(lance_dataset_open(uri, NULL, 1) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);
    uint64_t aborted = 99;
    CHECK_OK(lance_dataset_abort_incomplete_uploads(ds, 1, &aborted));
    CHECK(aborted == 0);
    /* 0: nothing older left. */
    memset(&stats, 0xff, sizeof stats);
    CHECK_OK(lance_dataset_cleanup_old_versions(ds, 0, false, &stats));
    CHECK(stats.old_versions == 0 && stats.bytes_removed == 0);
    CHECK(lance_dataset_version(ds) == 2 && lance_dataset_count_rows(ds) == 1000);
    lance_dataset_close(ds);
}

int main(void) {
    data = tu_make_data(2000, 16, 8, 0.5f, 42);
    dir = tu_temp_dir("ds");
    RUN(test_write_open_fragments);
    RUN(test_open_errors);
    RUN(test_fragment_ids_bounded);
    RUN(test_delete_compact_cleanup);
    RUN(test_cleanup_cutoffs);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_dataset");
}
