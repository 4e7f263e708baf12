/* Multivector k-NN (lance_scanner_nearest_multivector) against brute force
 * and pylance on the same data (a distance range refuses it), and the
 * segment-scoped scalar scan
 * (lance_scanner_set_scalar_index_segment) against the rows the filter
 * selects in the chosen fragments.
 *
 * Usage: test_scan_search_extras <python with pylance> <tests/api/multivector_oracle.py>. */
#include <math.h>
#include <string.h>

#include "dataset_kit.h"
#include "test_util.h"

#define DIM 4
#define ROWS 300

static const char* python;
static const char* oracle_script;
static LanceDataset* ds;
static char uri[600];

/* Every row's vectors, as read through the C API. */
static int64_t row_first[ROWS + 1]; /* row i's vectors: [row_first[i], row_first[i+1]) */
static float* vectors;              /* DIM floats per vector */

/* Reads id and mv of every row (ids are 0..ROWS-1, each once). */
static void load_rows(void) {
    const char* cols[] = {"id", "mv", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK(s != NULL);
    static int64_t counts[ROWS];
    static float* per_row[ROWS];
    struct ArrowArray a;
    struct ArrowSchema sc;
    while (dk_next_arrow(s, &a, &sc) == 1) {
        const struct ArrowArray* ids = a.children[0];
        const struct ArrowArray* mv = a.children[1];
        const int64_t* id_values = (const int64_t*)ids->buffers[1] + ids->offset;
        const int32_t* offsets = (const int32_t*)mv->buffers[1] + mv->offset;
        const struct ArrowArray* fsl = mv->children[0];
        const float* values = (const float*)fsl->children[0]->buffers[1] + fsl->children[0]->offset;
        for (int64_t i = 0; i < a.length; i++) {
            int64_t id = id_values[i];
            CHECK(id >= 0 && id < ROWS);
            int64_t n = offsets[i + 1] - offsets[i];
            counts[id] = n;
            per_row[id] = malloc((size_t)(n * DIM) * sizeof(float));
            memcpy(per_row[id], values + (fsl->offset + offsets[i]) * DIM, (size_t)(n * DIM) * sizeof(float));
        }
        a.release(&a);
        sc.release(&sc);
    }
    lance_scanner_close(s);
    row_first[0] = 0;
    for (int i = 0; i < ROWS; i++) row_first[i + 1] = row_first[i] + counts[i];
    vectors = malloc((size_t)(row_first[ROWS] * DIM) * sizeof(float));
    for (int i = 0; i < ROWS; i++) {
        memcpy(vectors + row_first[i] * DIM, per_row[i], (size_t)(counts[i] * DIM) * sizeof(float));
        free(per_row[i]);
    }
}

/* Sum over the query vectors of the smallest squared L2 distance to the row's vectors. */
static double row_distance(int row, const float* q, int nq) {
    double total = 0;
    for (int i = 0; i < nq; i++) {
        double best = INFINITY;
        for (int64_t v = row_first[row]; v < row_first[row + 1]; v++) {
            double d = 0;
            for (int j = 0; j < DIM; j++) {
                double diff = (double)q[i * DIM + j] - vectors[v * DIM + j];
                d += diff * diff;
            }
            if (d < best) best = d;
        }
        total += best;
    }
    return total;
}

static void brute_force(const float* q, int nq, int k, int64_t* out) {
    static double dist[ROWS];
    static int used[ROWS];
    for (int r = 0; r < ROWS; r++) {
        dist[r] = row_distance(r, q, nq);
        used[r] = 0;
    }
    for (int i = 0; i < k; i++) {
        int best = -1;
        for (int r = 0; r < ROWS; r++)
            if (!used[r] && (best < 0 || dist[r] < dist[best])) best = r;
        used[best] = 1;
        out[i] = best;
    }
}

static void test_multivector_matches(void) {
    load_rows();
    float q[3 * DIM];
    for (int i = 0; i < 3 * DIM; i++) q[i] = (float)sin(i * 1.7 + 0.3) * 0.8f;
    int ks[] = {1, 5, 12};
    for (int nq = 1; nq <= 3; nq++) {
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            int k = ks[ki];
            const char* cols[] = {"id", NULL};
            LanceScanner* s = lance_scanner_new(ds, cols, NULL);
            CHECK_OK(lance_scanner_nearest_multivector(s, "mv", q, DIM, (size_t)nq, LANCE_DTYPE_FLOAT32, (uint32_t)k));
            int64_t ours[16], want[16];
            CHECK(tu_knn_ids(s, ours, 16) == k);
            lance_scanner_close(s);
            brute_force(q, nq, k, want);
            for (int i = 0; i < k; i++) CHECK(ours[i] == want[i]);
            /* pylance on the same data. */
            char k_text[16], values[3 * DIM][32];
            const char* argv[5 + 3 * DIM + 1] = {python, oracle_script, "search", uri, k_text};
            snprintf(k_text, sizeof k_text, "%d", k);
            int argc = 5;
            for (int i = 0; i < nq * DIM; i++) {
                snprintf(values[i], sizeof values[i], "%.9g", q[i]);
                argv[argc++] = values[i];
            }
            argv[argc] = NULL;
            char* out = tu_run_program(argv);
            CHECK(out != NULL);
            if (!out) continue;
            const char* p = out;
            long long id;
            float d;
            int used, n = 0;
            while (sscanf(p, "%lld %f%n", &id, &d, &used) == 2) {
                CHECK(n < k && id == ours[n]);
                CHECK(fabs(d - row_distance((int)id, q, nq)) <= 1e-4 * (1 + fabs(d)));
                n++;
                p += used;
            }
            CHECK(n == k);
            free(out);
        }
    }
}

static void test_multivector_bad_input(void) {
    float q[2 * DIM] = {0};
    double q64[DIM] = {0};
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK_ERR(lance_scanner_nearest_multivector(NULL, "mv", q, DIM, 1, LANCE_DTYPE_FLOAT32, 5),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest_multivector(s, NULL, q, DIM, 1, LANCE_DTYPE_FLOAT32, 5),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest_multivector(s, "mv", NULL, DIM, 1, LANCE_DTYPE_FLOAT32, 5),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest_multivector(s, "mv", q, 0, 1, LANCE_DTYPE_FLOAT32, 5), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest_multivector(s, "mv", q, DIM, 0, LANCE_DTYPE_FLOAT32, 5),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest_multivector(s, "mv", q, DIM, 1, LANCE_DTYPE_FLOAT32, 0),
              LANCE_ERR_INVALID_ARGUMENT);
    static float big[129 * DIM];
    CHECK_ERR(lance_scanner_nearest_multivector(s, "mv", big, DIM, 129, LANCE_DTYPE_FLOAT32, 5),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest_multivector(s, "mv", big, DIM, 128, LANCE_DTYPE_FLOAT32, 1000),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest_multivector(s, "mv", q, DIM, 1, 9, 5), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest_multivector(s, "mv", q64, DIM, 1, LANCE_DTYPE_FLOAT64, 5),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest_multivector(s, "mv", q, 3, 1, LANCE_DTYPE_FLOAT32, 5), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest_multivector(s, "id", q, DIM, 1, LANCE_DTYPE_FLOAT32, 5),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_nearest_multivector(s, "nope", q, DIM, 1, LANCE_DTYPE_FLOAT32, 5), LANCE_ERR_NOT_FOUND);
    /* refine_factor * k is bounded too, and a refused setting is not kept. */
    CHECK_OK(lance_scanner_nearest_multivector(s, "mv", q, DIM, 2, LANCE_DTYPE_FLOAT32, 2));
    CHECK_ERR(lance_scanner_set_refine_factor(s, 60000), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_OK(lance_scanner_set_refine_factor(s, 50000));
    /* With a full-text search: refused. */
    CHECK_ERR(lance_scanner_full_text_search(s, "x", NULL, 0), LANCE_ERR_INVALID_ARGUMENT);
    int64_t ids[2];
    CHECK(tu_knn_ids(s, ids, 2) == 2);
    lance_scanner_close(s);

    /* A distance range and a multivector query refuse each other, in either order. */
    const float lower = 0.0f, upper = 1.0f;
    s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_nearest_multivector(s, "mv", q, DIM, 2, LANCE_DTYPE_FLOAT32, 3));
    CHECK_ERR(lance_scanner_set_distance_range(s, &lower, &upper), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_distance_range(s, NULL, &upper), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_knn_ids(s, ids, 2) == 2);
    lance_scanner_close(s);
    s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_set_distance_range(s, &lower, &upper));
    CHECK_ERR(lance_scanner_nearest_multivector(s, "mv", q, DIM, 2, LANCE_DTYPE_FLOAT32, 3),
              LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);
}

/* Fragment f holds ids [100 f, 100 f + 100) (written in order, 100 per file). */
static void test_scalar_index_segment(void) {
    CHECK_OK(lance_dataset_create_scalar_index(ds, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, false));
    uint8_t uuid[16];
    uint64_t count = 0;
    CHECK_OK(lance_dataset_index_segments(ds, "id_idx", uuid, 1, &count));
    CHECK(count == 1);
    const char* cols[] = {"id", NULL};
    uint64_t fragment_ids[] = {1, 2};
    static int64_t got[ROWS];
    int64_t n = 0;

    LanceScanner* s = lance_scanner_new(ds, cols, "id >= 50 AND id < 250");
    CHECK_OK(lance_scanner_set_scalar_index_segment(s, uuid));
    CHECK_OK(lance_scanner_set_fragment_ids(s, fragment_ids, 2));
    n = dk_read_ids(s, got, NULL, ROWS);
    CHECK(n == 150);
    for (int64_t i = 0; i < n; i++) CHECK(got[i] == 100 + i);
    lance_scanner_close(s);

    /* Limit and offset apply after the whole filter. */
    s = lance_scanner_new(ds, cols, "id >= 50 AND id < 250");
    CHECK_OK(lance_scanner_set_fragment_ids(s, fragment_ids, 2));
    CHECK_OK(lance_scanner_set_scalar_index_segment(s, uuid));
    CHECK_OK(lance_scanner_set_limit(s, 10));
    CHECK_OK(lance_scanner_set_offset(s, 5));
    n = dk_read_ids(s, got, NULL, ROWS);
    CHECK(n == 10);
    for (int64_t i = 0; i < n; i++) CHECK(got[i] == 105 + i);
    lance_scanner_close(s);

    /* Without fragment ids the stream is refused when it starts. */
    s = lance_scanner_new(ds, cols, "id < 10");
    CHECK_OK(lance_scanner_set_scalar_index_segment(s, uuid));
    LanceBatch* b = NULL;
    CHECK_ERR(lance_scanner_next(s, &b), LANCE_ERR_INVALID_ARGUMENT);
    struct ArrowArrayStream stream;
    CHECK_ERR(lance_scanner_to_arrow_stream(s, &stream), LANCE_ERR_INVALID_ARGUMENT);
    /* NULL clears it. */
    CHECK_OK(lance_scanner_set_scalar_index_segment(s, NULL));
    n = dk_read_ids(s, got, NULL, ROWS);
    CHECK(n == 10);
    lance_scanner_close(s);

    /* Unknown UUID, NULL scanner, combined with k-NN. */
    s = lance_scanner_new(ds, cols, NULL);
    uint8_t foreign[16];
    tu_uuid(77, foreign);
    CHECK_ERR(lance_scanner_set_scalar_index_segment(s, foreign), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_scalar_index_segment(NULL, uuid), LANCE_ERR_INVALID_ARGUMENT);
    float q[DIM] = {0};
    CHECK_OK(lance_scanner_nearest_multivector(s, "mv", q, DIM, 1, LANCE_DTYPE_FLOAT32, 3));
    CHECK_ERR(lance_scanner_set_scalar_index_segment(s, uuid), LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);
}

int main(int argc, char** argv) {
    if (tu_oracle_args(argc, argv, "multivector_oracle.py", &python, &oracle_script) != 0) return 2;
    char* dir = tu_temp_dir("search-extras");
    snprintf(uri, sizeof uri, "%s/ds", dir);
    ds = dk_oracle_dataset(python, oracle_script, uri);
    if (ds) {
        CHECK(lance_dataset_fragment_count(ds) == 3);
        RUN(test_multivector_matches);
        RUN(test_multivector_bad_input);
        RUN(test_scalar_index_segment);
    }
    lance_dataset_close(ds);
    free(vectors);
    tu_remove_tree(dir);
    free(dir);
    return tu_finish("test_scan_search_extras");
}
