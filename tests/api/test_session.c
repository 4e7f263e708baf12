/* Sessions: datasets opened with one session share its caches (the second
 * open and repeated reads hit what the first loaded, an index search fills
 * the index cache), a zero-capacity session holds nothing, a dataset
 * outlives its closed session, the data cache (in memory and on disk, read
 * through file-object-store://, checked row by row against the data
 * written), and every bad-input path. */
#define _GNU_SOURCE /* kill() */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"

static TuData data;
static char* dir;
static char uri[600];

/* `p`, its `n` bytes set to 0xFF first, so that a field a getter leaves unset shows. */
static void* poisoned(void* p, size_t n) { return memset(p, 0xFF, n); }

static LanceSessionCacheStats stats_of(const LanceSession* session) {
    LanceSessionCacheStats s;
    CHECK_OK(lance_session_get_cache_stats(session, poisoned(&s, sizeof s)));
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
    CHECK(fresh.metadata_cache_hits == 0 && fresh.metadata_cache_misses == 0 && fresh.metadata_cache_entries == 0 &&
          fresh.metadata_cache_size_bytes == 0);

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
    const LanceErrorCode IA = LANCE_ERR_INVALID_ARGUMENT;
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

/* ---- the data cache ----
 * It serves reads of object storage only.  Lance's file-object-store://
 * scheme reads local files through the object-store layer, as s3:// would,
 * so the dataset written at `uri` is read through the cache as
 * file-object-store://<uri>. */

#define BLOCK (16u << 10) /* the block size of these tests' caches */

static char store_uri[700];

static LanceDataCacheStatistics data_stats(const LanceDataset* ds) {
    LanceDataCacheStatistics s;
    CHECK_OK(lance_dataset_get_data_cache_statistics(ds, poisoned(&s, sizeof s)));
    return s;
}

static int64_t child_of(const struct ArrowSchema* schema, const char* name) {
    for (int64_t i = 0; i < schema->n_children; i++)
        if (strcmp(schema->children[i]->name, name) == 0) return i;
    return -1;
}

/* Reads every row of the dataset and compares it with what was written: the
 * number of rows whose id, vector and tag are exactly the written ones, or
 * -1 when an id repeats, a column is missing or the scan fails. */
static int64_t matching_rows(LanceDataset* ds) {
    LanceScanner* scanner = lance_scanner_new(ds, NULL, NULL);
    CHECK(scanner != NULL);
    if (!scanner) return -1;
    char* seen = calloc((size_t)data.rows, 1);
    int64_t matching = 0;
    int ok = 1;
    for (;;) {
        LanceBatch* batch = NULL;
        int rc = lance_scanner_next(scanner, &batch);
        if (rc != 0) {
            ok &= rc == 1;
            break;
        }
        struct ArrowArray a;
        struct ArrowSchema sc;
        CHECK_OK(lance_batch_to_arrow(batch, &a, &sc));
        int64_t c_id = child_of(&sc, "id"), c_vec = child_of(&sc, "vec"), c_tag = child_of(&sc, "tag");
        ok &= c_id >= 0 && c_vec >= 0 && c_tag >= 0 && strcmp(sc.children[c_id]->format, "l") == 0 &&
              strcmp(sc.children[c_tag]->format, "u") == 0;
        for (int64_t r = 0; ok && r < a.length; r++) {
            const struct ArrowArray* ids = a.children[c_id];
            const struct ArrowArray* vec = a.children[c_vec];
            const struct ArrowArray* tag = a.children[c_tag];
            int64_t id = ((const int64_t*)ids->buffers[1])[ids->offset + a.offset + r];
            if (id < 0 || id >= data.rows || seen[id]) {
                ok = 0;
                break;
            }
            seen[id] = 1;
            const struct ArrowArray* values = vec->children[0];
            const float* v =
                (const float*)values->buffers[1] + values->offset + (vec->offset + a.offset + r) * data.dim;
            const int32_t* offsets = (const int32_t*)tag->buffers[1] + tag->offset + a.offset + r;
            char want_tag[8];
            snprintf(want_tag, sizeof want_tag, "t%d", (int)(id % 7));
            int tag_len = offsets[1] - offsets[0];
            matching += memcmp(v, data.vectors + id * data.dim, sizeof(float) * (size_t)data.dim) == 0 &&
                        tag_len == (int)strlen(want_tag) &&
                        memcmp((const char*)tag->buffers[2] + offsets[0], want_tag, (size_t)tag_len) == 0;
        }
        a.release(&a);
        sc.release(&sc);
        lance_batch_free(batch);
    }
    free(seen);
    lance_scanner_close(scanner);
    CHECK(ok);
    return ok ? matching : -1;
}

/* The last count of a tree's regular files (tu_tree_count()). */
static TuTreeCount tree;

static void test_data_cache_memory(void) {
    tree = tu_tree_count(uri, BLOCK);
    int64_t dataset_blocks_bytes = tree.block_bytes;
    LanceDataCacheOptions options = {0};
    options.read_block_size_bytes = BLOCK;
    LanceSession* session = lance_session_new_with_data_cache(256u << 20, 256u << 20, &options);
    CHECK(session != NULL);

    /* The first handle fetches what it reads from the store, each block
       once: never more than the dataset's files in whole blocks. */
    LanceDataset* a = lance_dataset_open_with_session(store_uri, NULL, 0, session);
    CHECK(a != NULL);
    if (!a) {
        lance_session_close(session);
        return;
    }
    CHECK(matching_rows(a) == data.rows);
    LanceDataCacheStatistics first = data_stats(a);
    CHECK(first.bytes_read_from_remote > 0);
    CHECK(first.bytes_read_from_remote <= (uint64_t)dataset_blocks_bytes);

    /* A second handle with the same session reads it all from the cache.
       The counters are the handle's own: the first handle's stay. */
    LanceDataset* b = lance_dataset_open_with_session(store_uri, NULL, 0, session);
    CHECK(b != NULL);
    CHECK(matching_rows(b) == data.rows);
    LanceDataCacheStatistics second = data_stats(b);
    CHECK(second.bytes_read_from_remote == 0);
    CHECK(second.bytes_read_from_cache > 0);
    LanceDataCacheStatistics a_now = data_stats(a);
    CHECK(memcmp(&a_now, &first, sizeof first) == 0);

    /* The first handle's second scan: from the cache too. */
    CHECK(matching_rows(a) == data.rows);
    LanceDataCacheStatistics again = data_stats(a);
    CHECK(again.bytes_read_from_remote == first.bytes_read_from_remote);
    CHECK(again.bytes_read_from_cache > first.bytes_read_from_cache);

    /* Index files go through it as well: the first search fetches the
       index, a search through another handle finds it cached. */
    CHECK(search(b, 3) == 10);
    LanceDataCacheStatistics b_searched = data_stats(b);
    CHECK(b_searched.bytes_read_from_remote > 0);
    LanceDataset* c = lance_dataset_open_with_session(store_uri, NULL, 0, session);
    CHECK(c != NULL);
    CHECK(search(c, 3) == 10);
    LanceDataCacheStatistics c_searched = data_stats(c);
    CHECK(c_searched.bytes_read_from_remote == 0);
    CHECK(c_searched.bytes_read_from_cache > 0);
    lance_dataset_close(c);

    /* The same dataset opened on the local file system bypasses the cache. */
    LanceDataset* local = lance_dataset_open_with_session(uri, NULL, 0, session);
    CHECK(local != NULL);
    CHECK(matching_rows(local) == data.rows);
    LanceDataCacheStatistics local_stats = data_stats(local);
    CHECK(local_stats.bytes_read_from_cache == 0 && local_stats.bytes_read_from_remote == 0);
    lance_dataset_close(local);

    lance_dataset_close(a);
    lance_dataset_close(b);
    lance_session_close(session);
}

static void test_data_cache_disk(void) {
    char cache_dir[700];
    snprintf(cache_dir, sizeof cache_dir, "%s/data_cache/blocks", dir); /* created by the cache */
    LanceDataCacheOptions options = {0};
    options.directory = cache_dir;
    options.memory_capacity_bytes = BLOCK; /* one block: the rest must come from disk */
    options.disk_capacity_bytes = 256u << 20;
    options.read_block_size_bytes = BLOCK;
    LanceSession* session = lance_session_new_with_data_cache(256u << 20, 256u << 20, &options);
    CHECK(session != NULL);
    if (!session) return;

    LanceDataset* a = lance_dataset_open_with_session(store_uri, NULL, 0, session);
    CHECK(a != NULL);
    CHECK(matching_rows(a) == data.rows);
    LanceDataCacheStatistics first = data_stats(a);
    CHECK(first.bytes_read_from_remote > 0);
    tree = tu_tree_count(cache_dir, BLOCK);
    CHECK(tree.files > 0);
    CHECK(tree.bytes > (int64_t)options.memory_capacity_bytes);

    /* Far more than the memory tier holds, and still nothing from the store. */
    LanceDataset* b = lance_dataset_open_with_session(store_uri, NULL, 0, session);
    CHECK(b != NULL);
    CHECK(matching_rows(b) == data.rows);
    LanceDataCacheStatistics second = data_stats(b);
    CHECK(second.bytes_read_from_remote == 0);
    CHECK(second.bytes_read_from_cache > options.memory_capacity_bytes);

    /* The files stay while a dataset uses the session, and go with its last user. */
    lance_session_close(session);
    CHECK(matching_rows(b) == data.rows);
    tree = tu_tree_count(cache_dir, BLOCK);
    CHECK(tree.files > 0);
    lance_dataset_close(a);
    lance_dataset_close(b);
    tree = tu_tree_count(cache_dir, BLOCK);
    CHECK(tree.files == 0);
    if (tree.files != 0) fprintf(stderr, "    %lld cache files left in %s\n", (long long)tree.files, cache_dir);
}

/* The disk tier is per process (lance.h "Data cache"): a process killed
 * with its session open leaves its own subdirectory, which the next
 * process neither reuses (its first read goes to the store) nor removes. */
static char self_path[700];

static int child_fills_cache(const char* cache_dir) {
    LanceDataCacheOptions options = {0};
    options.directory = cache_dir;
    options.disk_capacity_bytes = 256u << 20;
    options.read_block_size_bytes = BLOCK;
    LanceSession* session = lance_session_new_with_data_cache(256u << 20, 256u << 20, &options);
    LanceDataset* ds = session ? lance_dataset_open_with_session(store_uri, NULL, 0, session) : NULL;
    if (!ds || matching_rows(ds) != data.rows) return 1;
    kill(getpid(), SIGKILL); /* the session is never closed */
    return 1;
}

static void test_data_cache_per_process(void) {
    char cache_dir[700];
    snprintf(cache_dir, sizeof cache_dir, "%s/data_cache/restart", dir);
    pid_t child = fork();
    if (child == 0) execl(self_path, self_path, "--fill-cache", dir, cache_dir, (char*)NULL), _exit(127);
    int status = 0;
    CHECK(child > 0 && waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    char left[800];
    snprintf(left, sizeof left, "%s/lance-c-data-cache-%d-0", cache_dir, (int)child);
    tree = tu_tree_count(left, BLOCK);
    CHECK(tree.files > 0); /* the killed process's blocks stay */
    int64_t left_files = tree.files;

    LanceDataCacheOptions options = {0};
    options.directory = cache_dir;
    options.read_block_size_bytes = BLOCK;
    LanceSession* session = lance_session_new_with_data_cache(256u << 20, 256u << 20, &options);
    LanceDataset* ds = session ? lance_dataset_open_with_session(store_uri, NULL, 0, session) : NULL;
    CHECK(ds != NULL);
    if (ds) {
        CHECK(matching_rows(ds) == data.rows);
        CHECK(data_stats(ds).bytes_read_from_remote > 0); /* nothing reused */
        lance_dataset_close(ds);
    }
    lance_session_close(session);
    tree = tu_tree_count(left, BLOCK);
    CHECK(tree.files == left_files); /* and nothing reclaimed */
}

/* Datasets that do not read through a data cache report zeros. */
static void test_data_cache_zeros(void) {
    LanceDataset* plain = lance_dataset_open(store_uri, NULL, 0);
    CHECK(plain != NULL);
    CHECK(matching_rows(plain) == data.rows);
    LanceDataCacheStatistics s = data_stats(plain);
    CHECK(s.bytes_read_from_cache == 0 && s.bytes_read_from_remote == 0);
    lance_dataset_close(plain);

    LanceSession* session = lance_session_new(64u << 20, 64u << 20);
    LanceDataset* no_cache = lance_dataset_open_with_session(store_uri, NULL, 0, session);
    CHECK(no_cache != NULL);
    CHECK(matching_rows(no_cache) == data.rows);
    CHECK(search(no_cache, 2) == 10);
    s = data_stats(no_cache);
    CHECK(s.bytes_read_from_cache == 0 && s.bytes_read_from_remote == 0);
    lance_dataset_close(no_cache);
    lance_session_close(session);
}

static void test_data_cache_bad_input(void) {
    const LanceErrorCode IA = LANCE_ERR_INVALID_ARGUMENT;
    LanceDataCacheOptions o = {0};
    o.disk_capacity_bytes = 1u << 20; /* without a directory */
    CHECK(lance_session_new_with_data_cache(1u << 20, 1u << 20, &o) == NULL);
    CHECK(lance_last_error_code() == IA);
    CHECK(tu_error_mentions("disk_capacity_bytes"));
    const uint64_t bad_blocks[] = {1000, 4095, 4097, (64u << 20) + 4096, 128u << 20, UINT64_MAX - 4095};
    for (size_t i = 0; i < sizeof bad_blocks / sizeof bad_blocks[0]; i++) {
        memset(&o, 0, sizeof o);
        o.read_block_size_bytes = bad_blocks[i];
        CHECK(lance_session_new_with_data_cache(1u << 20, 1u << 20, &o) == NULL);
        CHECK(lance_last_error_code() == IA);
        if (i == 0) CHECK(tu_error_mentions("read_block_size_bytes"));
    }
    /* The bounds themselves, a multiple of 4096 in between, and all defaults. */
    const uint64_t good_blocks[] = {4096, 12288, 64u << 20};
    for (size_t i = 0; i < sizeof good_blocks / sizeof good_blocks[0]; i++) {
        memset(&o, 0, sizeof o);
        o.read_block_size_bytes = good_blocks[i];
        LanceSession* s = lance_session_new_with_data_cache(1u << 20, 1u << 20, &o);
        CHECK(s != NULL);
        lance_session_close(s);
    }
    LanceSession* defaults = lance_session_new_with_data_cache(1u << 20, 1u << 20, NULL);
    CHECK(defaults != NULL);
    memset(&o, 0, sizeof o);
    LanceSession* zeroed = lance_session_new_with_data_cache(1u << 20, 1u << 20, &o);
    CHECK(zeroed != NULL);
    lance_session_close(zeroed);

    /* A directory that cannot be created: its parent is a regular file. */
    char file[700], below[760];
    snprintf(file, sizeof file, "%s/regular_file", dir);
    FILE* f = fopen(file, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    snprintf(below, sizeof below, "%s/cache", file);
    memset(&o, 0, sizeof o);
    o.directory = below;
    CHECK(lance_session_new_with_data_cache(1u << 20, 1u << 20, &o) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_IO);

    /* The statistics getter: NULLs, and nothing written on failure. */
    LanceDataset* ds = lance_dataset_open_with_session(store_uri, NULL, 0, defaults);
    CHECK(ds != NULL);
    LanceDataCacheStatistics st;
    memset(&st, 0xAB, sizeof st);
    LanceDataCacheStatistics untouched = st;
    CHECK_ERR(lance_dataset_get_data_cache_statistics(NULL, &st), IA);
    CHECK(memcmp(&st, &untouched, sizeof st) == 0);
    CHECK_ERR(lance_dataset_get_data_cache_statistics(ds, NULL), IA);
    CHECK_OK(lance_dataset_get_data_cache_statistics(ds, &st));
    CHECK(memcmp(&st, &untouched, sizeof st) != 0);
    lance_dataset_close(ds);
    lance_session_close(defaults);
}

int main(int argc, char** argv) {
    data = tu_make_data(4000, 16, 8, 0.5f, 42);
    if (argc == 4 && strcmp(argv[1], "--fill-cache") == 0) {
        /* test_data_cache_per_process's child: argv[2] is the parent's directory. */
        snprintf(uri, sizeof uri, "%s/data.lance", argv[2]);
        snprintf(store_uri, sizeof store_uri, "file-object-store://%s", uri);
        return child_fills_cache(argv[3]);
    }
    snprintf(self_path, sizeof self_path, "%s", argv[0]);
    dir = tu_temp_dir("session");
    snprintf(uri, sizeof uri, "%s/data.lance", dir);
    snprintf(store_uri, sizeof store_uri, "file-object-store://%s", uri);
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
        RUN(test_data_cache_memory);
        RUN(test_data_cache_disk);
        RUN(test_data_cache_per_process);
        RUN(test_data_cache_zeros);
        RUN(test_data_cache_bad_input);
    }
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_session");
}
