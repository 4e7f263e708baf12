/* Sessions: datasets opened with one session share its caches (the second
 * open and repeated reads hit what the first loaded, an index search fills
 * the index cache), a zero-capacity session holds nothing, a dataset
 * outlives its closed session, and every bad-input path. */
#include <string.h>

#include "test_util.h"

static TuData data;
static char* dir;
static char uri[600];

static LanceSessionCacheStats stats_of(const LanceSession* session) {
    LanceSessionCacheStats s;
    memset(&s, 0xFF, sizeof s);
    CHECK_OK(lance_session_get_cache_stats(session, &s));
    return s;
}

/* Counters never go down; a cache holds bytes exactly when it holds entries. */
static void check_consistent(const LanceSessionCacheStats* before, const LanceSessionCacheStats* after) {
    CHECK(after->index_cache_hits >= before->index_cache_hits);
    CHECK(after->index_cache_misses >= before->index_cache_misses);
    CHECK(after->metadata_cache_hits >= before->metadata_cache_hits);
    CHECK(after->metadata_cache_misses >= before->metadata_cache_misses);
    CHECK((after->index_cache_entries > 0) == (after->index_cache_size_bytes > 0));
    CHECK((after->metadata_cache_entries > 0) == (after->metadata_cache_size_bytes > 0));
}

/* A k-NN search through the index; returns the number of rows found. */
static int search(LanceDataset* ds, int query_row) {
    LanceScanner* scanner = lance_scanner_new(ds, NULL, NULL);
    CHECK(scanner != NULL);
    if (!scanner) return -1;
    CHECK_OK(lance_scanner_nearest(scanner, "vec", data.vectors + (size_t)query_row * (size_t)data.dim,
                                   (size_t)data.dim, LANCE_DTYPE_FLOAT32, 10));
    CHECK_OK(lance_scanner_set_nprobes(scanner, 4));
    int64_t ids[10];
    int found = tu_knn_ids(scanner, ids, 10);
    lance_scanner_close(scanner);
    return found;
}

static int64_t scan_rows(LanceDataset* ds) {
    LanceScanner* scanner = lance_scanner_new(ds, NULL, NULL);
    CHECK(scanner != NULL);
    int64_t n = scanner ? tu_count_scan(scanner) : -1;
    lance_scanner_close(scanner);
    return n;
}

static void test_shared_caches(void) {
    LanceSession* session = lance_session_new(256u << 20, 256u << 20);
    CHECK(session != NULL);
    LanceSessionCacheStats fresh = stats_of(session);
    CHECK(fresh.index_cache_hits == 0 && fresh.index_cache_misses == 0 && fresh.index_cache_entries == 0 &&
          fresh.index_cache_size_bytes == 0);
    CHECK(fresh.metadata_cache_hits == 0 && fresh.metadata_cache_misses == 0 &&
          fresh.metadata_cache_entries == 0 && fresh.metadata_cache_size_bytes == 0);

    /* The first open and read load metadata into the session. */
    LanceDataset* a = lance_dataset_open_with_session(uri, NULL, 0, session);
    CHECK(a != NULL);
    CHECK(scan_rows(a) == data.rows);
    LanceSessionCacheStats first = stats_of(session);
    check_consistent(&fresh, &first);
    CHECK(first.metadata_cache_misses > 0);
    CHECK(first.metadata_cache_entries > 0);

    /* A second dataset with the same session finds it: hits grow, and the
       entries it reads are the ones already there. */
    LanceDataset* b = lance_dataset_open_with_session(uri, NULL, 0, session);
    CHECK(b != NULL);
    CHECK(scan_rows(b) == data.rows);
    LanceSessionCacheStats second = stats_of(session);
    check_consistent(&first, &second);
    CHECK(second.metadata_cache_hits > first.metadata_cache_hits);
    CHECK(second.metadata_cache_entries == first.metadata_cache_entries);

    /* An index search loads the index into the index cache; the same search through the
       other dataset hits it and adds nothing. */
    CHECK(search(a, 3) == 10);
    LanceSessionCacheStats searched = stats_of(session);
    check_consistent(&second, &searched);
    CHECK(searched.index_cache_entries > second.index_cache_entries);
    CHECK(searched.index_cache_size_bytes > second.index_cache_size_bytes);
    CHECK(searched.index_cache_misses > second.index_cache_misses);
    CHECK(search(b, 3) == 10);
    LanceSessionCacheStats again = stats_of(session);
    check_consistent(&searched, &again);
    CHECK(again.index_cache_hits > searched.index_cache_hits);
    CHECK(again.index_cache_entries == searched.index_cache_entries);
    CHECK(again.index_cache_size_bytes == searched.index_cache_size_bytes);

    /* A dataset opened without the session leaves its counters alone. */
    LanceDataset* own = lance_dataset_open(uri, NULL, 0);
    CHECK(own != NULL);
    CHECK(search(own, 3) == 10);
    LanceSessionCacheStats untouched = stats_of(session);
    CHECK(memcmp(&untouched, &again, sizeof again) == 0);
    lance_dataset_close(own);

    lance_dataset_close(a);
    lance_dataset_close(b);
    lance_session_close(session);
}

static void test_zero_capacity(void) {
    LanceSession* session = lance_session_new(0, 0);
    CHECK(session != NULL);
    LanceDataset* ds = lance_dataset_open_with_session(uri, NULL, 0, session);
    CHECK(ds != NULL);
    CHECK(scan_rows(ds) == data.rows);
    CHECK(search(ds, 5) == 10);
    CHECK(search(ds, 5) == 10);
    LanceSessionCacheStats s = stats_of(session);
    /* Lookups happened and missed; nothing was kept. */
    CHECK(s.metadata_cache_misses > 0 && s.index_cache_misses > 0);
    CHECK(s.index_cache_entries == 0 && s.index_cache_size_bytes == 0);
    CHECK(s.metadata_cache_entries == 0 && s.metadata_cache_size_bytes == 0);
    lance_dataset_close(ds);
    lance_session_close(session);
}

static void test_dataset_outlives_session(void) {
    LanceSession* session = lance_session_new(64u << 20, 64u << 20);
    LanceDataset* ds = lance_dataset_open_with_session(uri, NULL, 1, session);
    CHECK(ds != NULL);
    lance_session_close(session);
    CHECK(lance_dataset_version(ds) == 1);
    CHECK(lance_dataset_count_rows(ds) == (uint64_t)data.rows);
    CHECK(scan_rows(ds) == data.rows);
    /* Version 1 has no index: a flat search still answers. */
    CHECK(search(ds, 7) == 10);
    lance_dataset_close(ds);
}

static void test_bad_input(void) {
    const int IA = LANCE_ERR_INVALID_ARGUMENT;
    LanceSession* session = lance_session_new(1u << 20, 1u << 20);
    CHECK(session != NULL);
    LanceSessionCacheStats s;
    CHECK_ERR(lance_session_get_cache_stats(NULL, &s), IA);
    CHECK_ERR(lance_session_get_cache_stats(session, NULL), IA);

    CHECK(lance_dataset_open_with_session(uri, NULL, 0, NULL) == NULL);
    CHECK(lance_last_error_code() == IA);
    CHECK(tu_error_mentions("session"));
    CHECK(lance_dataset_open_with_session(NULL, NULL, 0, session) == NULL);
    CHECK(lance_last_error_code() == IA);
    CHECK(lance_dataset_open_with_session("", NULL, 0, session) == NULL);
    CHECK(lance_last_error_code() == IA);
    const char* odd[] = {"key_without_value", NULL};
    CHECK(lance_dataset_open_with_session(uri, odd, 0, session) == NULL);
    CHECK(lance_last_error_code() == IA);
    CHECK(lance_dataset_open_with_session(uri, NULL, 99, session) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);
    char missing[700];
    snprintf(missing, sizeof missing, "%s/no_such.lance", dir);
    CHECK(lance_dataset_open_with_session(missing, NULL, 0, session) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);

    lance_session_close(NULL);
    lance_session_close(session);
}

int main(void) {
    data = tu_make_data(4000, 16, 8, 0.5f, 42);
    dir = tu_temp_dir("session");
    snprintf(uri, sizeof uri, "%s/data.lance", dir);
    LanceDataset* ds = tu_write(uri, &data, 0, data.rows, LANCE_WRITE_CREATE, 1000);
    CHECK(ds != NULL);
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 8;
    CHECK_OK(lance_dataset_create_vector_index(ds, "vec", "vec_idx", &p, false));
    lance_dataset_close(ds);
    if (tu_failures == 0) {
        RUN(test_shared_caches);
        RUN(test_zero_capacity);
        RUN(test_dataset_outlives_session);
        RUN(test_bad_input);
    }
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_session");
}
