/* Indices (lance.h "Indices"): one-shot vector and scalar index creation,
 * the index list (exact JSON), segment counts and UUIDs, replace and drop,
 * LABEL_LIST on a list column, index-served scans returning exactly the
 * right rows, prewarming (against the session's cache counters), and every
 * bad input with its exact code. */
#include <string.h>

#include "dataset_kit.h"
#include "test_util.h"

#define ROWS 4000
#define DIM 32
#define K 10
#define PARTITIONS 8

static TuData data;
static char* dir;
static char uri[600];

static const float* query_of(int q) { return data.vectors + (int64_t)(q * 397 + 11) * DIM; }

/* ---- vector indices ---- */

static void test_vector_index_lifecycle(void) {
    LanceDataset* ds = dk_fresh(dir, "ivf_flat", &data, ROWS / 8, uri, sizeof uri);
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 8;
    CHECK_OK(lance_dataset_create_vector_index(ds, "vec", "vec_idx", &p, false));
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(lance_dataset_index_count(ds) == 1);

    /* The segment listing. */
    CHECK(lance_dataset_index_segment_count(ds, "vec_idx") == 1);
    uint8_t uuid[16];
    uint64_t count = 0;
    CHECK_OK(lance_dataset_index_segments(ds, "vec_idx", uuid, 1, &count));
    CHECK(count == 1);
    CHECK_ERR(lance_dataset_index_segments(ds, "vec_idx", uuid, 0, &count), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_index_segment_count(ds, "nope") == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);
    CHECK_ERR(lance_dataset_index_segments(ds, "nope", uuid, 1, &count), LANCE_ERR_NOT_FOUND);

    const char* json = lance_dataset_index_list_json(ds);
    CHECK(json != NULL);
    char uuid_text[UUID_HEX_DASHED_LEN + 1];
    uuid_hex_format_dashed(uuid, uuid_text);
    char expected[256];
    snprintf(
        expected, sizeof expected,
        "[{\"name\":\"vec_idx\",\"uuid\":\"%s\",\"columns\":[\"vec\"],\"type\":\"IVF_FLAT\",\"dataset_version\":1}]",
        uuid_text);
    CHECK(json && strcmp(json, expected) == 0);
    if (json && strcmp(json, expected) != 0) fprintf(stderr, "    got %s\n    want %s\n", json, expected);
    lance_free_string(json);

    /* Same name again without replace fails; with replace succeeds. */
    CHECK(lance_dataset_create_vector_index(ds, "vec", "vec_idx", &p, false) == -1);
    CHECK(lance_last_error_code() == LANCE_ERR_INDEX);
    CHECK(tu_error_mentions("vec_idx"));
    CHECK_OK(lance_dataset_create_vector_index(ds, "vec", "vec_idx", &p, true));
    CHECK(lance_dataset_index_count(ds) == 1);
    CHECK(lance_dataset_version(ds) == 3);

    /* Drop. */
    CHECK_OK(lance_dataset_drop_index(ds, "vec_idx"));
    CHECK(lance_dataset_index_count(ds) == 0 && lance_last_error_code() == LANCE_OK);
    CHECK_ERR(lance_dataset_drop_index(ds, "vec_idx"), LANCE_ERR_NOT_FOUND);
    CHECK_ERR(lance_dataset_drop_index(ds, NULL), LANCE_ERR_INVALID_ARGUMENT);
    json = lance_dataset_index_list_json(ds);
    CHECK(json && strcmp(json, "[]") == 0);
    lance_free_string(json);
    lance_dataset_close(ds);
}

static void test_vector_index_errors(void) {
    LanceDataset* ds = dk_fresh(dir, "verr", &data, ROWS / 8, uri, sizeof uri);
    uint64_t v = lance_dataset_version(ds);
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_PQ;
    CHECK_ERR(lance_dataset_create_vector_index(ds, "vec", NULL, NULL, false), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_create_vector_index(NULL, "vec", NULL, &p, false), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_create_vector_index(ds, NULL, NULL, &p, false), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_create_vector_index(ds, "nope", NULL, &p, false), LANCE_ERR_NOT_FOUND);
    CHECK(tu_error_mentions("'nope'"));
    CHECK_ERR(lance_dataset_create_vector_index(ds, "vec", "", &p, false), LANCE_ERR_INVALID_ARGUMENT);
    p.index_type = (LanceVectorIndexType)99;
    CHECK_ERR(lance_dataset_create_vector_index(ds, "vec", NULL, &p, false), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("index_type = 99"));
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.metric = (LanceMetricType)9;
    CHECK_ERR(lance_dataset_create_vector_index(ds, "vec", NULL, &p, false), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("metric = 9"));
    /* PQ sub-vectors that do not divide the dimension. */
    p.metric = LANCE_METRIC_L2;
    p.index_type = LANCE_INDEX_IVF_PQ;
    p.num_sub_vectors = 5;
    CHECK(lance_dataset_create_vector_index(ds, "vec", NULL, &p, false) == -1);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    /* A vector index on a non-vector column. */
    p.num_sub_vectors = 0;
    CHECK(lance_dataset_create_vector_index(ds, "id", NULL, &p, false) == -1);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    /* The _v2 form refuses what upstream's does, and bad training options. */
    LanceIndexCreateOptions none = {0};
    CHECK_ERR(lance_dataset_create_vector_index_v2(ds, "id", NULL, &p, false, &none), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_create_vector_index_v2(NULL, "vec", NULL, &p, false, NULL), LANCE_ERR_INVALID_ARGUMENT);
    LanceVectorTrainingOptions reserved = {0};
    reserved.reserved = 1;
    LanceIndexCreateOptions bad_training = {0};
    bad_training.training = &reserved;
    p.index_type = LANCE_INDEX_IVF_FLAT;
    CHECK_ERR(lance_dataset_create_vector_index_v2(ds, "vec", NULL, &p, false, &bad_training),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("reserved"));
    /* No failed call moved the dataset. */
    CHECK(lance_dataset_version(ds) == v);
    CHECK(lance_dataset_latest_version(ds) == v);

    lance_dataset_close(ds);
}

/* ---- scalar indices ---- */

/* A one-column stream {labels: list<utf8>}: row i holds "l<i % 5>" and "l<(i + 1) % 5>". */
typedef struct {
    int64_t rows, done;
} LabelState;

static void release_plain_schema(struct ArrowSchema* s) {
    for (int64_t i = 0; i < s->n_children; i++) {
        release_plain_schema(s->children[i]);
        free(s->children[i]);
    }
    free(s->children);
    s->release = NULL;
}

static void label_schema(struct ArrowSchema* out) {
    static const char* formats[] = {"+s", "+l", "u"};
    static const char* names[] = {"", "labels", "item"};
    struct ArrowSchema* level = out;
    for (int i = 0; i < 3; i++) {
        memset(level, 0, sizeof *level);
        level->format = formats[i];
        level->name = names[i];
        level->flags = i == 2 ? ARROW_FLAG_NULLABLE : 0;
        level->release = release_plain_schema;
        if (i < 2) {
            level->n_children = 1;
            level->children = malloc(sizeof(struct ArrowSchema*));
            level->children[0] = malloc(sizeof(struct ArrowSchema));
            level = level->children[0];
        }
    }
}

static void release_label_array(struct ArrowArray* a) {
    for (int64_t i = 0; i < a->n_children; i++) {
        release_label_array(a->children[i]);
        free(a->children[i]);
    }
    free(a->children);
    for (int64_t i = 1; i < a->n_buffers; i++) free((void*)a->buffers[i]);
    free(a->buffers);
    a->release = NULL;
}

static struct ArrowArray* label_level(struct ArrowArray* a, int64_t length, int64_t n_buffers) {
    memset(a, 0, sizeof *a);
    a->length = length;
    a->n_buffers = n_buffers;
    a->buffers = calloc((size_t)n_buffers, sizeof(void*));
    a->release = release_label_array;
    return a;
}

static int label_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
    (void)s;
    label_schema(out);
    return 0;
}

static int label_get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
    LabelState* st = s->private_data;
    if (st->done == st->rows) {
        memset(out, 0, sizeof *out);
        return 0;
    }
    int64_t n = st->rows;
    label_level(out, n, 1);
    out->n_children = 1;
    out->children = malloc(sizeof(struct ArrowArray*));
    struct ArrowArray* list = label_level(out->children[0] = malloc(sizeof(struct ArrowArray)), n, 2);
    int32_t* list_offsets = malloc(sizeof(int32_t) * (size_t)(n + 1));
    for (int64_t i = 0; i <= n; i++) list_offsets[i] = (int32_t)(2 * i);
    list->buffers[1] = list_offsets;
    list->n_children = 1;
    list->children = malloc(sizeof(struct ArrowArray*));
    struct ArrowArray* items = label_level(list->children[0] = malloc(sizeof(struct ArrowArray)), 2 * n, 3);
    int32_t* offsets = malloc(sizeof(int32_t) * (size_t)(2 * n + 1));
    char* chars = malloc((size_t)(4 * n));
    for (int64_t i = 0; i < 2 * n; i++) {
        chars[2 * i] = 'l';
        chars[2 * i + 1] = (char)('0' + (i / 2 + i % 2) % 5);
        offsets[i] = (int32_t)(2 * i);
    }
    offsets[2 * n] = (int32_t)(4 * n);
    items->buffers[1] = offsets;
    items->buffers[2] = chars;
    st->done = n;
    return 0;
}

static const char* label_last_error(struct ArrowArrayStream* s) {
    (void)s;
    return NULL;
}

static void label_release(struct ArrowArrayStream* s) {
    free(s->private_data);
    s->release = NULL;
}

static void test_label_list_index(void) {
    char path[700];
    snprintf(path, sizeof path, "%s/labels.lance", dir);
    struct ArrowSchema schema;
    label_schema(&schema);
    LabelState* st = calloc(1, sizeof(LabelState));
    st->rows = 100;
    struct ArrowArrayStream stream = {label_get_schema, label_get_next, label_last_error, label_release, st};
    LanceDataset* ds = NULL;
    CHECK_OK(lance_dataset_write(path, &schema, &stream, LANCE_WRITE_CREATE, NULL, &ds));
    schema.release(&schema);
    if (!ds) return;
    CHECK_OK(lance_dataset_create_scalar_index(ds, "labels", NULL, LANCE_SCALAR_LABEL_LIST, NULL, false));
    const char* json = lance_dataset_index_list_json(ds);
    CHECK(json && strstr(json, "\"name\":\"labels_idx\"") && strstr(json, "\"type\":\"LabelList\""));
    lance_free_string(json);
    /* Rows i with i % 5 == 3 hold "l3", and so do rows with (i + 1) % 5 == 3. */
    LanceScanner* s = lance_scanner_new(ds, NULL, "array_has_any(labels, ['l3'])");
    CHECK(s != NULL);
    CHECK(tu_count_scan(s) == 40);
    lance_scanner_close(s);
    lance_dataset_close(ds);
}

static void test_scalar_indices(void) {
    LanceDataset* ds = dk_fresh(dir, "scalar", &data, ROWS / 8, uri, sizeof uri);
    CHECK_OK(lance_dataset_create_scalar_index(ds, "id", NULL, LANCE_SCALAR_BTREE, NULL, false));
    CHECK_OK(lance_dataset_create_scalar_index(ds, "tag", "tag_bitmap", LANCE_SCALAR_BITMAP, NULL, false));
    CHECK_OK(lance_dataset_create_scalar_index(ds, "tag", "tag_fts", LANCE_SCALAR_INVERTED,
                                               "{\"base_tokenizer\": \"whitespace\"}", false));
    CHECK(lance_dataset_index_count(ds) == 3);
    CHECK(lance_dataset_index_segment_count(ds, "id_idx") == 1);
    const char* json = lance_dataset_index_list_json(ds);
    CHECK(json && strstr(json, "\"name\":\"id_idx\"") && strstr(json, "\"type\":\"BTree\""));
    CHECK(json && strstr(json, "\"name\":\"tag_bitmap\"") && strstr(json, "\"type\":\"Bitmap\""));
    CHECK(json && strstr(json, "\"name\":\"tag_fts\"") && strstr(json, "\"type\":\"Inverted\""));
    lance_free_string(json);

    /* Scans that the indices serve return exactly the right rows. */
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, "id = 1234");
    int64_t got[2];
    CHECK(tu_knn_ids(s, got, 2) == 1 && got[0] == 1234);
    lance_scanner_close(s);
    s = lance_scanner_new(ds, cols, "tag = 't5'");
    int64_t expected = 0;
    for (int64_t i = 0; i < ROWS; i++) expected += (i % 7 == 5);
    CHECK(tu_count_scan(s) == expected);
    lance_scanner_close(s);

    /* Bad input. */
    CHECK_ERR(lance_dataset_create_scalar_index(ds, "id", "x", (LanceScalarIndexType)11, NULL, false),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("index_type = 11"));
    CHECK_ERR(lance_dataset_create_scalar_index(ds, "id", "x", LANCE_SCALAR_BTREE, "{not json", false),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("params_json"));
    CHECK_ERR(lance_dataset_create_scalar_index(ds, "id", "x", LANCE_SCALAR_BTREE, "[1]", false),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_create_scalar_index(ds, "nope", "x", LANCE_SCALAR_BTREE, NULL, false), LANCE_ERR_NOT_FOUND);
    /* LABEL_LIST needs a list column. */
    CHECK(lance_dataset_create_scalar_index(ds, "id", "x", LANCE_SCALAR_LABEL_LIST, NULL, false) == -1);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    /* The _v2 form: training options are refused for a scalar index; a
       zeroed options struct is upstream's call. */
    LanceVectorTrainingOptions training = {0};
    LanceIndexCreateOptions with_training = {0};
    with_training.training = &training;
    CHECK_ERR(lance_dataset_create_scalar_index_v2(ds, "id", "x", LANCE_SCALAR_BTREE, NULL, false, &with_training),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("options->training"));
    CHECK_ERR(lance_dataset_create_scalar_index_v2(ds, "nope", "x", LANCE_SCALAR_BTREE, NULL, false, NULL),
              LANCE_ERR_NOT_FOUND);
    uint64_t indices = lance_dataset_index_count(ds), version = lance_dataset_version(ds);
    LanceIndexCreateOptions zeroed = {0};
    CHECK_OK(lance_dataset_create_scalar_index_v2(ds, "id", NULL, LANCE_SCALAR_BTREE, NULL, true, &zeroed));
    CHECK(lance_dataset_index_count(ds) == indices && lance_dataset_version(ds) == version + 1);
    CHECK(lance_dataset_index_count(NULL) == 0 && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_index_list_json(NULL) == NULL);
    lance_dataset_close(ds);
}

/* ---- lance_dataset_prewarm_index ---- */

static LanceSessionCacheStats cache_stats(const LanceSession* session) {
    LanceSessionCacheStats st;
    memset(&st, 0, sizeof st);
    CHECK_OK(lance_session_get_cache_stats(session, &st));
    return st;
}

/* A search for query q probing every partition, against brute force. */
static void exact_search(LanceDataset* ds, int q) {
    int64_t got[K] = {0};
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_nearest(s, "vec", query_of(q), DIM, LANCE_DTYPE_FLOAT32, K));
    CHECK_OK(lance_scanner_set_nprobes(s, PARTITIONS));
    CHECK(tu_knn_ids(s, got, K) == K);
    lance_scanner_close(s);
    int64_t truth[K];
    tu_brute_force_knn(&data, query_of(q), K, truth);
    CHECK(memcmp(got, truth, sizeof truth) == 0);
}

static void test_prewarm_index(void) {
    LanceDataset* writer = dk_fresh(dir, "prewarm", &data, ROWS / 8, uri, sizeof uri);
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = PARTITIONS;
    CHECK_OK(lance_dataset_create_vector_index(writer, "vec", "vec_idx", &p, false));
    CHECK_OK(lance_dataset_create_scalar_index(writer, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, false));
    uint64_t version = lance_dataset_version(writer);
    lance_dataset_close(writer);

    /* Without a prewarm the first search loads the index: misses, and the
       bytes of the partitions it probes (here every one). */
    LanceSession* cold = lance_session_new(256u << 20, 256u << 20);
    LanceDataset* ds = lance_dataset_open_with_session(uri, NULL, 0, cold);
    CHECK(ds != NULL);
    LanceSessionCacheStats opened = cache_stats(cold);
    exact_search(ds, 0);
    LanceSessionCacheStats searched = cache_stats(cold);
    uint64_t cold_misses = searched.index_cache_misses - opened.index_cache_misses;
    uint64_t cold_bytes = searched.index_cache_size_bytes - opened.index_cache_size_bytes;
    CHECK(cold_misses > 0 && cold_bytes > 0);
    lance_dataset_close(ds);
    lance_session_close(cold);

    /* With a prewarm those bytes are in the cache before any search ... */
    LanceSession* session = lance_session_new(256u << 20, 256u << 20);
    ds = lance_dataset_open_with_session(uri, NULL, 0, session);
    CHECK(ds != NULL);
    LanceSessionCacheStats before = cache_stats(session);
    CHECK(memcmp(&before, &opened, sizeof opened) == 0); /* the open itself caches the same either way */
    CHECK_OK(lance_dataset_prewarm_index(ds, "vec_idx"));
    LanceSessionCacheStats warm = cache_stats(session);
    CHECK(warm.index_cache_entries > before.index_cache_entries);
    CHECK(warm.index_cache_misses > before.index_cache_misses);
    CHECK((warm.index_cache_size_bytes - before.index_cache_size_bytes) * 100 >= cold_bytes * 99);
    CHECK(lance_dataset_version(ds) == version);
    CHECK(lance_dataset_latest_version(ds) == version);
    /* ... so the first search finds them there: it adds under 1% of the
       bytes and fewer misses than the same search on a cold cache (Lance
       14.0.2 still looks up a small entry that the prewarm does not load),
       and the searches after it miss nothing. */
    exact_search(ds, 0);
    LanceSessionCacheStats first = cache_stats(session);
    CHECK(first.index_cache_hits > warm.index_cache_hits);
    CHECK(first.index_cache_misses - warm.index_cache_misses < cold_misses);
    CHECK((first.index_cache_size_bytes - warm.index_cache_size_bytes) * 100 < cold_bytes);
    for (int q = 1; q < 4; q++) exact_search(ds, q);
    LanceSessionCacheStats after = cache_stats(session);
    CHECK(after.index_cache_hits > first.index_cache_hits);
    CHECK(after.index_cache_misses == first.index_cache_misses);
    CHECK(after.index_cache_entries == first.index_cache_entries);
    CHECK(after.index_cache_size_bytes == first.index_cache_size_bytes);
    if (first.index_cache_misses - warm.index_cache_misses >= cold_misses ||
        after.index_cache_misses != first.index_cache_misses)
        fprintf(stderr, "    misses: cold search %llu; after the prewarm: first search %llu, then %llu more\n",
                (unsigned long long)cold_misses,
                (unsigned long long)(first.index_cache_misses - warm.index_cache_misses),
                (unsigned long long)(after.index_cache_misses - first.index_cache_misses));

    /* Again: nothing new to load. */
    CHECK_OK(lance_dataset_prewarm_index(ds, "vec_idx"));
    LanceSessionCacheStats twice = cache_stats(session);
    CHECK(twice.index_cache_entries == after.index_cache_entries);
    CHECK(twice.index_cache_size_bytes == after.index_cache_size_bytes);
    CHECK(twice.index_cache_misses == after.index_cache_misses);

    /* A scalar index prewarms into the same cache. */
    CHECK_OK(lance_dataset_prewarm_index(ds, "id_idx"));
    LanceSessionCacheStats scalar = cache_stats(session);
    CHECK(scalar.index_cache_entries > twice.index_cache_entries);
    CHECK(lance_dataset_version(ds) == version);

    /* Bad input. */
    CHECK_ERR(lance_dataset_prewarm_index(ds, "nope"), LANCE_ERR_NOT_FOUND);
    CHECK(tu_error_mentions("nope"));
    CHECK_ERR(lance_dataset_prewarm_index(ds, "vec"), LANCE_ERR_NOT_FOUND); /* a column, not an index */
    CHECK_ERR(lance_dataset_prewarm_index(ds, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_prewarm_index(NULL, "vec_idx"), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_version(ds) == version);
    lance_dataset_close(ds);
    lance_session_close(session);

    /* An older version has no index of that name. */
    LanceDataset* version_1 = lance_dataset_open(uri, NULL, 1);
    CHECK(version_1 != NULL);
    CHECK_ERR(lance_dataset_prewarm_index(version_1, "vec_idx"), LANCE_ERR_NOT_FOUND);
    lance_dataset_close(version_1);

    /* Without a session the dataset's own caches take it. */
    LanceDataset* own = lance_dataset_open(uri, NULL, 0);
    CHECK(own != NULL);
    CHECK_OK(lance_dataset_prewarm_index(own, "vec_idx"));
    exact_search(own, 1);
    lance_dataset_close(own);
}

int main(void) {
    data = tu_make_data(ROWS, DIM, 16, 1.0f, 2024);
    dir = tu_temp_dir("index");
    RUN(test_vector_index_lifecycle);
    RUN(test_vector_index_errors);
    RUN(test_scalar_indices);
    RUN(test_label_list_index);
    RUN(test_prewarm_index);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_index");
}
