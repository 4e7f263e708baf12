/* k-NN search and one-shot indices: exact results against a brute-force
 * answer, every vector index type, scalar indices, the index lifecycle,
 * segment pinning, and bad input. */
#include <string.h>

#include "test_util.h"

#define ROWS 4000
#define DIM 32
#define K 10

static TuData data;
static char* dir;
static char uri[600];

static const float* query_of(int q) { return data.vectors + (int64_t)(q * 397 + 11) * DIM; }

/* Runs a k-NN search with the given nprobes (0 = not set: Lance's adaptive default) and compares with
 * brute force: returns the number of the K true neighbours found. */
static int knn_hits_refined(LanceDataset* ds, int q, uint32_t nprobes, uint32_t refine, bool use_index,
                            int64_t* got) {
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK(s != NULL);
    CHECK_OK(lance_scanner_nearest(s, "vec", query_of(q), DIM, LANCE_DTYPE_FLOAT32, K));
    if (nprobes) CHECK_OK(lance_scanner_set_nprobes(s, nprobes)); /* 0: Lance's adaptive default */
    CHECK_OK(lance_scanner_set_use_index(s, use_index));
    CHECK_OK(lance_scanner_set_refine_factor(s, refine));
    int n = tu_knn_ids(s, got, K);
    lance_scanner_close(s);
    CHECK(n == K);
    int64_t truth[K];
    tu_brute_force_knn(&data, query_of(q), K, truth);
    int hits = 0;
    for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++) hits += got[i] == truth[j];
    return hits;
}

static int knn_hits(LanceDataset* ds, int q, uint32_t nprobes, bool use_index, int64_t* got) {
    return knn_hits_refined(ds, q, nprobes, 0, use_index, got);
}

static int same_order_as_brute_force(LanceDataset* ds, int q, uint32_t nprobes, bool use_index) {
    int64_t got[K] = {0};
    knn_hits(ds, q, nprobes, use_index, got);
    int64_t truth[K];
    tu_brute_force_knn(&data, query_of(q), K, truth);
    return memcmp(got, truth, sizeof truth) == 0;
}

static LanceDataset* fresh_dataset(const char* name) {
    snprintf(uri, sizeof uri, "%s/%s.lance", dir, name);
    return tu_write(uri, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS / 8);
}

static void test_flat_search_is_exact(void) {
    LanceDataset* ds = fresh_dataset("flat");
    CHECK(ds != NULL && lance_dataset_fragment_count(ds) == 8);
    for (int q = 0; q < 5; q++) CHECK(same_order_as_brute_force(ds, q, 0, true));
    lance_dataset_close(ds);
}

static void test_ivf_flat_full_probe_is_exact(void) {
    LanceDataset* ds = fresh_dataset("ivf_flat");
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 8;
    CHECK_OK(lance_dataset_create_vector_index(ds, "vec", "vec_idx", &p, false));
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(lance_dataset_index_count(ds) == 1);
    for (int q = 0; q < 5; q++) CHECK(same_order_as_brute_force(ds, q, 8, true));
    /* use_index = false is an exact flat search too. */
    CHECK(same_order_as_brute_force(ds, 0, 0, false));

    /* The segment listing, and pinning the search to that segment. */
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
    snprintf(expected, sizeof expected,
             "[{\"columns\":[\"vec\"],\"dataset_version\":1,\"name\":\"vec_idx\",\"type\":\"IVF_FLAT\",\"uuid\":\"%s\"}]",
             uuid_text);
    CHECK(json && strcmp(json, expected) == 0);
    if (json && strcmp(json, expected) != 0) fprintf(stderr, "    got %s\n    want %s\n", json, expected);
    lance_free_string(json);

    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_nearest(s, "vec", query_of(1), DIM, LANCE_DTYPE_FLOAT32, K));
    CHECK_OK(lance_scanner_set_nprobes(s, 8));
    CHECK_OK(lance_scanner_set_index_segments(s, uuid, 1));
    int64_t got[K], truth[K];
    CHECK(tu_knn_ids(s, got, K) == K);
    tu_brute_force_knn(&data, query_of(1), K, truth);
    CHECK(memcmp(got, truth, sizeof truth) == 0);
    lance_scanner_close(s);
    /* A segment that is not part of the index. */
    s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_nearest(s, "vec", query_of(1), DIM, LANCE_DTYPE_FLOAT32, K));
    uint8_t bogus[16] = {1, 2, 3};
    CHECK(lance_scanner_set_index_segments(s, bogus, 1) == -1 || tu_knn_ids(s, got, K) == -1);
    CHECK(lance_last_error_code() != LANCE_OK);
    CHECK_ERR(lance_scanner_set_index_segments(s, NULL, 2), LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);

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

static void test_every_vector_index_type(void) {
    LanceDataset* ds = fresh_dataset("types");
    struct {
        LanceVectorIndexType type;
        const char* name;
        const char* type_name;
        uint32_t refine; /* quantized codes are re-ranked by exact distance */
        int min_hits;    /* over 5 queries x K */
    } cases[] = {
        {LANCE_INDEX_IVF_PQ, "pq", "IVF_PQ", 5, 40},
        {LANCE_INDEX_IVF_SQ, "sq", "IVF_SQ", 0, 40},
        {LANCE_INDEX_IVF_HNSW_FLAT, "hnsw_flat", "IVF_HNSW_FLAT", 0, 40},
        {LANCE_INDEX_IVF_HNSW_SQ, "hnsw_sq", "IVF_HNSW_SQ", 0, 40},
        {LANCE_INDEX_IVF_HNSW_PQ, "hnsw_pq", "IVF_HNSW_PQ", 5, 40},
        {LANCE_INDEX_IVF_RQ, "rq", "IVF_RQ", 5, 40},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        LanceVectorIndexParams p = {0};
        p.index_type = cases[c].type;
        p.num_partitions = 4;
        p.num_sub_vectors = 8;
        CHECK_OK(lance_dataset_create_vector_index(ds, "vec", "vidx", &p, true));
        const char* json = lance_dataset_index_list_json(ds);
        char want[64];
        snprintf(want, sizeof want, "\"type\":\"%s\"", cases[c].type_name);
        CHECK(json && strstr(json, want) != NULL);
        if (json && !strstr(json, want)) fprintf(stderr, "    %s: %s\n", cases[c].name, json);
        lance_free_string(json);
        int hits = 0;
        for (int q = 0; q < 5; q++) {
            int64_t got[K];
            hits += knn_hits_refined(ds, q, 4, cases[c].refine, true, got);
        }
        CHECK(hits >= cases[c].min_hits);
        if (hits < cases[c].min_hits) fprintf(stderr, "    %s: %d of 50 true neighbours\n", cases[c].name, hits);
    }
    /* Cosine and dot metrics build and search. */
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 4;
    p.metric = LANCE_METRIC_COSINE;
    CHECK_OK(lance_dataset_create_vector_index(ds, "vec", "cos_idx", &p, false));
    p.metric = LANCE_METRIC_DOT;
    CHECK_OK(lance_dataset_create_vector_index(ds, "vec", "dot_idx", &p, false));
    CHECK(lance_dataset_index_count(ds) == 3);
    lance_dataset_close(ds);
}

static void test_vector_index_errors(void) {
    LanceDataset* ds = fresh_dataset("verr");
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
    CHECK(lance_last_error_code() != LANCE_OK);
    /* A vector index on a non-vector column. */
    p.num_sub_vectors = 0;
    CHECK(lance_dataset_create_vector_index(ds, "id", NULL, &p, false) == -1);
    CHECK(lance_last_error_code() != LANCE_OK);
    /* No failed call moved the dataset. */
    CHECK(lance_dataset_version(ds) == v);
    CHECK(lance_dataset_latest_version(ds) == v);

    /* Search errors. */
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK_ERR(lance_scanner_nearest(s, "vec", query_of(0), DIM - 1, LANCE_DTYPE_FLOAT32, K),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest(s, "nope", query_of(0), DIM, LANCE_DTYPE_FLOAT32, K),
              lance_last_error_code());
    CHECK(tu_error_mentions("nope"));
    CHECK_ERR(lance_scanner_nearest(s, "vec", query_of(0), DIM, LANCE_DTYPE_FLOAT32, 0), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest(s, "vec", NULL, DIM, LANCE_DTYPE_FLOAT32, K), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest(s, "vec", query_of(0), DIM, (LanceDataType)9, K), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest(s, NULL, query_of(0), DIM, LANCE_DTYPE_FLOAT32, K), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_metric(s, (LanceMetricType)7), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_OK(lance_scanner_set_metric(s, LANCE_METRIC_L2));
    CHECK_OK(lance_scanner_set_refine_factor(s, 2));
    CHECK_OK(lance_scanner_set_ef(s, 64));
    CHECK_OK(lance_scanner_set_prefilter(s, true));
    /* After the failures above, a valid query still works: no half-set state. */
    CHECK_OK(lance_scanner_nearest(s, "vec", query_of(0), DIM, LANCE_DTYPE_FLOAT32, K));
    int64_t got[K];
    CHECK(tu_knn_ids(s, got, K) == K);
    lance_scanner_close(s);
    CHECK_ERR(lance_scanner_nearest(NULL, "vec", query_of(0), DIM, LANCE_DTYPE_FLOAT32, K), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_nprobes(NULL, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_refine_factor(NULL, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_ef(NULL, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_metric(NULL, LANCE_METRIC_L2), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_use_index(NULL, true), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_prefilter(NULL, true), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_index_segments(NULL, NULL, 0), LANCE_ERR_INVALID_ARGUMENT);
    lance_dataset_close(ds);
}

static void test_filtered_search(void) {
    LanceDataset* ds = fresh_dataset("filtered");
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, "id < 2000");
    CHECK_OK(lance_scanner_nearest(s, "vec", query_of(3), DIM, LANCE_DTYPE_FLOAT32, K));
    CHECK_OK(lance_scanner_set_prefilter(s, true));
    int64_t got[K];
    CHECK(tu_knn_ids(s, got, K) == K);
    /* Brute force over the first 2000 rows only. */
    TuData half = data;
    half.rows = 2000;
    int64_t truth[K];
    tu_brute_force_knn(&half, query_of(3), K, truth);
    CHECK(memcmp(got, truth, sizeof truth) == 0);
    lance_scanner_close(s);
    lance_dataset_close(ds);
}

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
    LanceDataset* ds = fresh_dataset("scalar");
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
    CHECK_ERR(lance_dataset_create_scalar_index(ds, "id", "x", (LanceScalarIndexType)9, NULL, false),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("index_type = 9"));
    CHECK_ERR(lance_dataset_create_scalar_index(ds, "id", "x", LANCE_SCALAR_BTREE, "{not json", false),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("params_json"));
    CHECK_ERR(lance_dataset_create_scalar_index(ds, "id", "x", LANCE_SCALAR_BTREE, "[1]", false),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_create_scalar_index(ds, "nope", "x", LANCE_SCALAR_BTREE, NULL, false),
              LANCE_ERR_NOT_FOUND);
    /* LABEL_LIST needs a list column. */
    CHECK(lance_dataset_create_scalar_index(ds, "id", "x", LANCE_SCALAR_LABEL_LIST, NULL, false) == -1);
    CHECK(lance_last_error_code() != LANCE_OK);
    CHECK(lance_dataset_index_count(NULL) == 0 && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_index_list_json(NULL) == NULL);
    lance_dataset_close(ds);
}

int main(void) {
    data = tu_make_data(ROWS, DIM, 16, 1.0f, 2024);
    dir = tu_temp_dir("search");
    RUN(test_flat_search_is_exact);
    RUN(test_ivf_flat_full_probe_is_exact);
    RUN(test_every_vector_index_type);
    RUN(test_vector_index_errors);
    RUN(test_filtered_search);
    RUN(test_scalar_indices);
    RUN(test_label_list_index);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_search");
}
