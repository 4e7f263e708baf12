/* k-NN search (lance.h "Scan and search"): exact results against a
 * brute-force answer, search through every vector index type, filtered
 * search, pinning a search to an index segment, distance ranges, batches of
 * queries (each group against the same query searched alone), and bad
 * input.  Creating, listing, dropping and prewarming indices are
 * test_index's. */
#include <math.h>
#include <string.h>

#include "dataset_kit.h"
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
static int knn_hits_refined(LanceDataset* ds, int q, uint32_t nprobes, uint32_t refine, bool use_index, int64_t* got) {
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

static void test_flat_search_is_exact(void) {
    LanceDataset* ds = dk_fresh(dir, "flat", &data, ROWS / 8, uri, sizeof uri);
    CHECK(ds != NULL && lance_dataset_fragment_count(ds) == 8);
    for (int q = 0; q < 5; q++) CHECK(same_order_as_brute_force(ds, q, 0, true));
    lance_dataset_close(ds);
}

static void test_ivf_flat_full_probe_is_exact(void) {
    LanceDataset* ds = dk_fresh(dir, "ivf_flat", &data, ROWS / 8, uri, sizeof uri);
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 8;
    CHECK_OK(lance_dataset_create_vector_index(ds, "vec", "vec_idx", &p, false));
    for (int q = 0; q < 5; q++) CHECK(same_order_as_brute_force(ds, q, 8, true));
    /* use_index = false is an exact flat search too. */
    CHECK(same_order_as_brute_force(ds, 0, 0, false));

    /* Pinning the search to the index's one segment. */
    uint8_t uuid[16];
    uint64_t count = 0;
    CHECK_OK(lance_dataset_index_segments(ds, "vec_idx", uuid, 1, &count));
    CHECK(count == 1);
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

    lance_dataset_close(ds);
}

static void test_every_vector_index_type(void) {
    LanceDataset* ds = dk_fresh(dir, "types", &data, ROWS / 8, uri, sizeof uri);
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

static void test_search_errors(void) {
    LanceDataset* ds = dk_fresh(dir, "serr", &data, ROWS / 8, uri, sizeof uri);
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK_ERR(lance_scanner_nearest(s, "vec", query_of(0), DIM - 1, LANCE_DTYPE_FLOAT32, K),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest(s, "nope", query_of(0), DIM, LANCE_DTYPE_FLOAT32, K), lance_last_error_code());
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
    LanceDataset* ds = dk_fresh(dir, "filtered", &data, ROWS / 8, uri, sizeof uri);
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

/* ---- k-NN results with distances, and brute force that keeps them ---- */

#define PARTITIONS 8
#define QUERIES 5
#define EVERY_THIRD "id % 3 = 1" /* the filter of the filtered searches */

/* One row of a k-NN result. */
typedef struct {
    int64_t id;
    float distance;
    int32_t query; /* query_index; -1 when the result has no such column */
} Hit;

static const char* column_format(const struct ArrowSchema* schema, const char* name) {
    for (int64_t i = 0; i < schema->n_children; i++)
        if (strcmp(schema->children[i]->name, name) == 0) return schema->children[i]->format;
    return NULL;
}

/* Reads every row of a k-NN scan: id, _distance and, when present,
 * query_index (which must then be int32).  The number of rows, or -1 on an
 * error or when more than `cap` rows come. */
static int read_hits(LanceScanner* s, Hit* out, int cap) {
    int n = 0;
    for (;;) {
        struct ArrowArray a;
        struct ArrowSchema sc;
        int got = dk_next_arrow(s, &a, &sc);
        if (got <= 0) return got == 0 ? n : -1;
        int64_t rows = a.length;
        int64_t* ids = malloc(sizeof(int64_t) * (size_t)(rows + 1));
        float* distances = malloc(sizeof(float) * (size_t)(rows + 1));
        int32_t* queries = malloc(sizeof(int32_t) * (size_t)(rows + 1));
        int64_t n_ids = 0, n_distances = 0, n_queries = 0;
        const char* query_format = column_format(&sc, "query_index");
        int ok = n + rows <= cap && tu_append_column(&a, &sc, "id", ids, sizeof *ids, rows, &n_ids) == 0 &&
                 tu_append_column(&a, &sc, "_distance", distances, sizeof *distances, rows, &n_distances) == 0 &&
                 strcmp(column_format(&sc, "_distance"), "f") == 0;
        if (ok && query_format) {
            ok = strcmp(query_format, "i") == 0 &&
                 tu_append_column(&a, &sc, "query_index", queries, sizeof *queries, rows, &n_queries) == 0;
        }
        for (int64_t i = 0; ok && i < rows; i++) {
            out[n].id = ids[i];
            out[n].distance = distances[i];
            out[n].query = query_format ? queries[i] : -1;
            n++;
        }
        free(ids);
        free(distances);
        free(queries);
        a.release(&a);
        sc.release(&sc);
        if (!ok) return -1;
    }
}

typedef struct {
    float distance;
    int64_t id;
} Ranked;

static int ranked_cmp(const void* a, const void* b) {
    const Ranked* x = a;
    const Ranked* y = b;
    if (x->distance != y->distance) return x->distance < y->distance ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Every row ranked by squared L2 distance to `query`, nearest first, ties
 * by id (the order tu_brute_force_knn() gives); `every_third` keeps only
 * the rows EVERY_THIRD selects.  Returns the number of rows ranked. */
static int rank_rows(const float* query, bool every_third, Ranked* out) {
    int n = 0;
    for (int64_t r = 0; r < data.rows; r++) {
        if (every_third && data.ids[r] % 3 != 1) continue;
        float sum = 0;
        for (int j = 0; j < DIM; j++) {
            float d = data.vectors[r * DIM + j] - query[j];
            sum += d * d;
        }
        out[n].distance = sum;
        out[n].id = data.ids[r];
        n++;
    }
    qsort(out, (size_t)n, sizeof *out, ranked_cmp);
    return n;
}

/* Distances computed in another order agree to float rounding. */
static int same_distance(float ours, float theirs) {
    float diff = ours > theirs ? ours - theirs : theirs - ours;
    return diff <= 1e-4f * (1.0f + theirs);
}

/* Asserts that `got` (n rows) is `want` (m rows): the same ids in the same order, the same distances. */
static void check_hits(const Hit* got, int n, const Ranked* want, int m, const char* what, int q) {
    int same = n == m;
    for (int i = 0; same && i < n; i++)
        same = got[i].id == want[i].id && same_distance(got[i].distance, want[i].distance);
    CHECK(same);
    if (!same) {
        fprintf(stderr, "    %s, query %d: %d rows, want %d\n", what, q, n, m);
        for (int i = 0; i < n || i < m; i++)
            fprintf(stderr, "      %2d: got %lld %.6g  want %lld %.6g\n", i, i < n ? (long long)got[i].id : -1LL,
                    i < n ? got[i].distance : 0.0f, i < m ? (long long)want[i].id : -1LL,
                    i < m ? want[i].distance : 0.0f);
    }
}

/* ---- lance_scanner_set_distance_range ---- */

/* A bound halfway between the distances of ranks i - 1 and i, or of the
 * first later pair whose gap is wide enough that no rounding of the
 * library's arithmetic can put a row on the other side.  *rank receives the
 * rank of the first row at or above the bound. */
static float bound_at(const Ranked* r, int n, int i, int* rank) {
    while (i < n - 1 && r[i].distance - r[i - 1].distance <= 1e-3f * (1.0f + r[i].distance)) i++;
    *rank = i;
    return (r[i - 1].distance + r[i].distance) / 2;
}

/* Brute force for a range search: the rows with lower <= distance < upper (a
 * NULL bound is absent), nearest first, at most k. */
static int in_range(const Ranked* r, int n, const float* lower, const float* upper, int k, Ranked* out) {
    int m = 0;
    for (int i = 0; i < n && m < k; i++)
        if ((!lower || r[i].distance >= *lower) && (!upper || r[i].distance < *upper)) out[m++] = r[i];
    return m;
}

/* A k-NN search for query q with a distance range, set before or after the
 * query: flat (use_index false), or through the index probing every
 * partition with a refine step, which is exact.  Returns the rows read. */
static int range_search(LanceDataset* ds, int q, const float* lower, const float* upper, bool indexed, bool range_first,
                        Hit* out, int cap) {
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK(s != NULL);
    if (!s) return -1;
    if (range_first) CHECK_OK(lance_scanner_set_distance_range(s, lower, upper));
    CHECK_OK(lance_scanner_nearest(s, "vec", query_of(q), DIM, LANCE_DTYPE_FLOAT32, K));
    if (!range_first) CHECK_OK(lance_scanner_set_distance_range(s, lower, upper));
    CHECK_OK(lance_scanner_set_use_index(s, indexed));
    if (indexed) {
        CHECK_OK(lance_scanner_set_nprobes(s, PARTITIONS));
        CHECK_OK(lance_scanner_set_refine_factor(s, 2));
    }
    int n = read_hits(s, out, cap);
    CHECK(n >= 0);
    lance_scanner_close(s);
    return n;
}

static void test_distance_range(void) {
    LanceDataset* ds = dk_fresh(dir, "range", &data, ROWS / 8, uri, sizeof uri);
    CHECK(ds != NULL && lance_dataset_fragment_count(ds) == 8);
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = PARTITIONS;
    CHECK_OK(lance_dataset_create_vector_index(ds, "vec", "vec_idx", &p, false));
    Ranked* ranked = malloc(sizeof(Ranked) * ROWS);
    Ranked want[K];
    Hit got[K + 1];
    for (int q = 0; q < 3; q++) {
        int n = rank_rows(query_of(q), false, ranked);
        int r_near, r_mid, r_far, r_farther;
        float near = bound_at(ranked, n, 3, &r_near);
        float mid = bound_at(ranked, n, r_near + 3, &r_mid);
        float far = bound_at(ranked, n, r_mid + 20, &r_far);
        float farther = bound_at(ranked, n, r_far + 100, &r_farther);
        const float zero = 0.0f;
        struct {
            const float* lower;
            const float* upper;
            int expected_rows; /* from the ranks above; -1 = not computed here */
            bool flat_only;    /* a bound at the query's own distance, 0: exact in the flat kernel only */
        } cases[] = {
            {&near, NULL, K, false},                                       /* the K nearest from rank r_near on */
            {NULL, &mid, r_mid < K ? r_mid : K, false},                    /* the nearest ones, maybe fewer than K */
            {&near, &mid, r_mid - r_near < K ? r_mid - r_near : K, false}, /* a band near the top */
            {&far, &farther, K, false},                                    /* a far band, cut to K */
            {&mid, &mid, 0, false},                                        /* [x, x) is empty */
            {&zero, NULL, K, true},                                        /* the query row itself (distance 0) is in */
            {NULL, &zero, 0, true},                                        /* and out of [.., 0) */
            {&farther, NULL, K, false},
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            int m = in_range(ranked, n, cases[c].lower, cases[c].upper, K, want);
            CHECK(m == cases[c].expected_rows);
            for (int indexed = 0; indexed < 2; indexed++) {
                if (indexed && cases[c].flat_only) continue;
                int got_n = range_search(ds, q, cases[c].lower, cases[c].upper, indexed, c % 2 == 1, got, K + 1);
                char what[64];
                snprintf(what, sizeof what, "range case %zu, %s", c, indexed ? "indexed" : "flat");
                check_hits(got, got_n, want, m, what, q);
            }
        }
        /* Both bounds NULL clears a range set before. */
        const char* cols[] = {"id", NULL};
        LanceScanner* s = lance_scanner_new(ds, cols, NULL);
        CHECK_OK(lance_scanner_nearest(s, "vec", query_of(q), DIM, LANCE_DTYPE_FLOAT32, K));
        CHECK_OK(lance_scanner_set_distance_range(s, &far, &farther));
        CHECK_OK(lance_scanner_set_distance_range(s, NULL, NULL));
        CHECK_OK(lance_scanner_set_use_index(s, false));
        check_hits(got, read_hits(s, got, K + 1), ranked, K, "cleared range", q);
        lance_scanner_close(s);
    }

    /* Bad bounds are refused and the range set before stays. */
    const float nan = NAN, inf = INFINITY, minus_inf = -INFINITY, one = 1.0f, two = 2.0f;
    const int IA = LANCE_ERR_INVALID_ARGUMENT;
    int n = rank_rows(query_of(4), false, ranked);
    int r_low;
    float low = bound_at(ranked, n, 5, &r_low);
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_nearest(s, "vec", query_of(4), DIM, LANCE_DTYPE_FLOAT32, K));
    CHECK_OK(lance_scanner_set_distance_range(s, &low, NULL));
    CHECK_ERR(lance_scanner_set_distance_range(s, &nan, NULL), IA);
    CHECK_ERR(lance_scanner_set_distance_range(s, NULL, &nan), IA);
    CHECK_ERR(lance_scanner_set_distance_range(s, &one, &nan), IA);
    CHECK_ERR(lance_scanner_set_distance_range(s, NULL, &inf), IA);
    CHECK_ERR(lance_scanner_set_distance_range(s, &inf, NULL), IA);
    CHECK_ERR(lance_scanner_set_distance_range(s, &minus_inf, NULL), IA);
    CHECK_ERR(lance_scanner_set_distance_range(s, &minus_inf, &one), IA);
    CHECK_ERR(lance_scanner_set_distance_range(s, &two, &one), IA);
    CHECK_ERR(lance_scanner_set_distance_range(NULL, &one, &two), IA);
    CHECK_OK(lance_scanner_set_use_index(s, false));
    int m = in_range(ranked, n, &low, NULL, K, want);
    check_hits(got, read_hits(s, got, K + 1), want, m, "range kept after refused bounds", 4);
    /* Once the scan has started: refused. */
    CHECK_ERR(lance_scanner_set_distance_range(s, &one, &two), IA);
    CHECK_ERR(lance_scanner_set_distance_range(s, NULL, NULL), IA);
    lance_scanner_close(s);

    /* A batch query refuses a range, in either order. */
    float queries[2 * DIM];
    memcpy(queries, query_of(0), sizeof(float) * DIM);
    memcpy(queries + DIM, query_of(1), sizeof(float) * DIM);
    s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_nearest_batch(s, "vec", queries, DIM, 2, LANCE_DTYPE_FLOAT32, K));
    CHECK_ERR(lance_scanner_set_distance_range(s, &one, &two), IA);
    CHECK_ERR(lance_scanner_set_distance_range(s, NULL, &two), IA);
    lance_scanner_close(s);
    s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_set_distance_range(s, &one, &two));
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, DIM, 2, LANCE_DTYPE_FLOAT32, K), IA);
    lance_scanner_close(s);
    free(ranked);
    lance_dataset_close(ds);
}

/* ---- lance_scanner_nearest_batch ---- */

/* QUERIES query vectors, one after another: four rows of the data and a
 * point between two clusters that is no row. */
static void batch_queries(float* out) {
    for (int q = 0; q < QUERIES - 1; q++) memcpy(out + q * DIM, query_of(q), sizeof(float) * DIM);
    for (int j = 0; j < DIM; j++) out[(QUERIES - 1) * DIM + j] = (query_of(0)[j] + query_of(1)[j]) / 2;
}

typedef struct {
    const char* name;
    bool use_index;
    uint32_t nprobes; /* 0 = not set */
    uint32_t refine;
    bool filtered; /* EVERY_THIRD */
    bool prefilter;
    bool exact; /* brute force gives the answer */
} BatchCase;

static void apply_settings(LanceScanner* s, const BatchCase* c) {
    CHECK_OK(lance_scanner_set_use_index(s, c->use_index));
    if (c->nprobes) CHECK_OK(lance_scanner_set_nprobes(s, c->nprobes));
    if (c->refine) CHECK_OK(lance_scanner_set_refine_factor(s, c->refine));
    CHECK_OK(lance_scanner_set_prefilter(s, c->prefilter));
}

/* Brute force for one query under the case's filter: prefiltered, the k
 * nearest selected rows; post-filtered, the selected rows among the k
 * nearest of all. */
static int batch_truth(const BatchCase* c, const float* query, int k, Ranked* ranked, Ranked* out) {
    int n = rank_rows(query, c->filtered && c->prefilter, ranked);
    int m = 0;
    for (int i = 0; i < n && i < k; i++)
        if (!c->filtered || ranked[i].id % 3 == 1) out[m++] = ranked[i];
    return m;
}

/* The batch search against each query searched alone with the same
 * settings (and against brute force when the case is exact). */
static void check_batch(LanceDataset* ds, const BatchCase* c, int k) {
    float queries[QUERIES * DIM];
    batch_queries(queries);
    const char* cols[] = {"id", NULL};
    const char* filter = c->filtered ? EVERY_THIRD : NULL;
    int cap = QUERIES * k + 1;
    Hit* batch = malloc(sizeof(Hit) * (size_t)cap);
    Hit* single = malloc(sizeof(Hit) * (size_t)cap);
    Ranked* ranked = malloc(sizeof(Ranked) * ROWS);
    Ranked* truth = malloc(sizeof(Ranked) * (size_t)k);

    LanceScanner* s = lance_scanner_new(ds, cols, filter);
    CHECK_OK(lance_scanner_nearest_batch(s, "vec", queries, DIM, QUERIES, LANCE_DTYPE_FLOAT32, (uint32_t)k));
    apply_settings(s, c);
    int n = read_hits(s, batch, cap);
    lance_scanner_close(s);
    CHECK(n > 0);
    int pos = 0;
    for (int q = 0; q < QUERIES && n > 0; q++) {
        /* The group of query q: the rows from pos on that name it. */
        int group = 0;
        while (pos + group < n && batch[pos + group].query == q) group++;
        s = lance_scanner_new(ds, cols, filter);
        CHECK_OK(lance_scanner_nearest(s, "vec", queries + q * DIM, DIM, LANCE_DTYPE_FLOAT32, (uint32_t)k));
        apply_settings(s, c);
        int m = read_hits(s, single, cap);
        lance_scanner_close(s);
        CHECK(m >= 0 && m <= k);
        if (!c->filtered || c->prefilter) CHECK(m == k);
        /* Same ids in the same order, same distances. */
        int same = group == m;
        for (int i = 0; same && i < m; i++)
            same = batch[pos + i].id == single[i].id && same_distance(batch[pos + i].distance, single[i].distance);
        CHECK(same);
        if (!same)
            fprintf(stderr, "    %s, k %d: query %d's group (%d rows) differs from its own search (%d rows)\n", c->name,
                    k, q, group, m);
        if (c->exact) {
            int t = batch_truth(c, queries + q * DIM, k, ranked, truth);
            check_hits(batch + pos, group, truth, t, c->name, q);
        }
        pos += group;
    }
    /* Every row belongs to a group, in query order. */
    CHECK(pos == n);
    if (pos != n) fprintf(stderr, "    %s: row %d has query_index %d\n", c->name, pos, pos < n ? batch[pos].query : -1);
    free(batch);
    free(single);
    free(ranked);
    free(truth);
}

static void test_nearest_batch(void) {
    LanceDataset* ds = dk_fresh(dir, "batch", &data, ROWS / 8, uri, sizeof uri);
    CHECK(ds != NULL && lance_dataset_fragment_count(ds) == 8);
    const BatchCase flat[] = {
        {"flat", false, 0, 0, false, false, true},
        {"flat, prefiltered", false, 0, 0, true, true, true},
        {"flat, post-filtered", false, 0, 0, true, false, true},
    };
    for (size_t c = 0; c < sizeof flat / sizeof flat[0]; c++) {
        check_batch(ds, &flat[c], K);
        check_batch(ds, &flat[c], 1);
    }
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = PARTITIONS;
    CHECK_OK(lance_dataset_create_vector_index(ds, "vec", "vec_idx", &p, false));
    const BatchCase indexed[] = {
        {"every partition", true, PARTITIONS, 0, false, false, true},
        {"every partition, refined", true, PARTITIONS, 3, false, false, true},
        {"one partition", true, 1, 0, false, false, false},
        {"two partitions, prefiltered", true, 2, 0, true, true, false},
        {"every partition, post-filtered", true, PARTITIONS, 0, true, false, true},
        {"index off", false, 0, 0, false, false, true},
    };
    for (size_t c = 0; c < sizeof indexed / sizeof indexed[0]; c++) {
        check_batch(ds, &indexed[c], K);
        check_batch(ds, &indexed[c], 37);
    }
    lance_dataset_close(ds);
}

static void test_nearest_batch_bad_input(void) {
    const int IA = LANCE_ERR_INVALID_ARGUMENT;
    LanceDataset* ds = dk_fresh(dir, "batch_bad", &data, ROWS / 8, uri, sizeof uri);
    CHECK_OK(lance_dataset_create_scalar_index(ds, "tag", "tag_fts", LANCE_SCALAR_INVERTED,
                                               "{\"base_tokenizer\": \"whitespace\"}", false));
    /* 128 queries: the most one batch may hold. */
    float* queries = malloc(sizeof(float) * 129 * DIM);
    for (int q = 0; q < 129; q++) memcpy(queries + q * DIM, query_of(q % 10), sizeof(float) * DIM);
    double queries64[QUERIES * DIM] = {0};
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK_ERR(lance_scanner_nearest_batch(NULL, "vec", queries, DIM, QUERIES, LANCE_DTYPE_FLOAT32, K), IA);
    CHECK_ERR(lance_scanner_nearest_batch(s, NULL, queries, DIM, QUERIES, LANCE_DTYPE_FLOAT32, K), IA);
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", NULL, DIM, QUERIES, LANCE_DTYPE_FLOAT32, K), IA);
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, 0, QUERIES, LANCE_DTYPE_FLOAT32, K), IA);
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, DIM - 1, QUERIES, LANCE_DTYPE_FLOAT32, K), IA);
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, DIM + 1, QUERIES, LANCE_DTYPE_FLOAT32, K), IA);
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, DIM, 0, LANCE_DTYPE_FLOAT32, K), IA);
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, DIM, 129, LANCE_DTYPE_FLOAT32, K), IA);
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, DIM, QUERIES, LANCE_DTYPE_FLOAT32, 0), IA);
    /* 128 * 782 = 100096 results: more than 100000. */
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, DIM, 128, LANCE_DTYPE_FLOAT32, 782), IA);
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, DIM, 101, LANCE_DTYPE_FLOAT32, 1000), IA);
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, DIM, QUERIES, (LanceDataType)9, K), IA);
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, DIM, QUERIES, (LanceDataType)-1, K), IA);
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries64, DIM, QUERIES, LANCE_DTYPE_FLOAT64, K), IA);
    /* 128 queries of 131073 float32 elements: 67109376 bytes, over the 64 MiB a batch copies. */
    float* huge = calloc((size_t)128 * 131073, sizeof(float));
    CHECK(huge != NULL);
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", huge, 131073, 128, LANCE_DTYPE_FLOAT32, 1), IA);
    CHECK(tu_error_mentions("67109376"));
    free(huge);
    CHECK(lance_scanner_nearest_batch(s, "nope", queries, DIM, QUERIES, LANCE_DTYPE_FLOAT32, K) == -1);
    CHECK(lance_last_error_code() != LANCE_OK);
    CHECK(tu_error_mentions("nope"));
    CHECK(lance_scanner_nearest_batch(s, "id", queries, DIM, QUERIES, LANCE_DTYPE_FLOAT32, K) == -1);
    CHECK(lance_last_error_code() != LANCE_OK);
    /* The failures left nothing behind: the scanner is a plain scan still. */
    CHECK(tu_count_scan(s) == ROWS);
    lance_scanner_close(s);

    /* The limits themselves are allowed: 128 queries, and 100 * 1000 = 100000 results. */
    s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_nearest_batch(s, "vec", queries, DIM, 128, LANCE_DTYPE_FLOAT32, 1));
    Hit* hits = malloc(sizeof(Hit) * 100001);
    int n = read_hits(s, hits, 100001);
    CHECK(n == 128);
    for (int q = 0; q < 128 && n == 128; q++) CHECK(hits[q].query == q && hits[q].id == (q % 10) * 397 + 11);
    lance_scanner_close(s);
    s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_nearest_batch(s, "vec", queries, DIM, 100, LANCE_DTYPE_FLOAT32, 1000));
    CHECK(read_hits(s, hits, 100001) == 100000);
    lance_scanner_close(s);
    free(hits);

    /* A limit or an offset refuses the batch, and the batch refuses them. */
    s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_set_limit(s, 5));
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, DIM, QUERIES, LANCE_DTYPE_FLOAT32, K), IA);
    lance_scanner_close(s);
    s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_set_offset(s, 5));
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, DIM, QUERIES, LANCE_DTYPE_FLOAT32, K), IA);
    lance_scanner_close(s);
    s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_nearest_batch(s, "vec", queries, DIM, QUERIES, LANCE_DTYPE_FLOAT32, K));
    CHECK_ERR(lance_scanner_set_limit(s, 5), IA);
    CHECK_ERR(lance_scanner_set_offset(s, 5), IA);
    /* Refused settings are not kept: every query still has its K rows. */
    Hit got[QUERIES * K + 1];
    CHECK(read_hits(s, got, QUERIES * K + 1) == QUERIES * K);
    /* Once the scan has started: refused. */
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, DIM, QUERIES, LANCE_DTYPE_FLOAT32, K), IA);
    lance_scanner_close(s);

    /* A full-text search refuses the batch, and the batch refuses it. */
    s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_full_text_search(s, "t3", NULL, 0));
    CHECK_ERR(lance_scanner_nearest_batch(s, "vec", queries, DIM, QUERIES, LANCE_DTYPE_FLOAT32, K), IA);
    lance_scanner_close(s);
    s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_nearest_batch(s, "vec", queries, DIM, QUERIES, LANCE_DTYPE_FLOAT32, K));
    CHECK_ERR(lance_scanner_full_text_search(s, "t3", NULL, 0), IA);
    lance_scanner_close(s);
    free(queries);
    lance_dataset_close(ds);
}

int main(void) {
    data = tu_make_data(ROWS, DIM, 16, 1.0f, 2024);
    dir = tu_temp_dir("search");
    RUN(test_flat_search_is_exact);
    RUN(test_ivf_flat_full_probe_is_exact);
    RUN(test_every_vector_index_type);
    RUN(test_search_errors);
    RUN(test_filtered_search);
    RUN(test_distance_range);
    RUN(test_nearest_batch);
    RUN(test_nearest_batch_bad_input);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_scan_search");
}
