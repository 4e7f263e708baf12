/* The retraining advice of the maintenance plan (lance.h "Index
 * maintenance", LanceIndexMaintenanceOptions.drift_threshold and the plan's
 * "drift").
 *
 * A table of 2,000 rows (8 clusters in 16 dimensions, 10 fragments) gets
 * an IVF_FLAT index of 8 partitions from a model trained on it, as two
 * segments.  Then 1,000 rows are appended, in one copy of the table drawn
 * from the same clusters (other rows of the same data), in another shifted
 * by +6 in every dimension.  With a threshold of 1.5:
 *   - the same distribution: every row of each side sampled (both under
 *     4,096), each side's loss equal to the mean squared L2 distance to the
 *     nearest centroid computed here from the model's centroids (relative
 *     error under 1e-4), the ratio below 1.5, "retrain" false;
 *   - the shifted rows: the same exact losses, the ratio above 1.5,
 *     "retrain" true;
 *   - nothing appended: no new row sampled, "new_rows_loss" and "ratio"
 *     null, "retrain" false;
 *   - a threshold of 0, and a scalar index: "drift" null;
 *   - a negative, infinite or NaN threshold: LANCE_ERR_INVALID_ARGUMENT.
 *
 * Usage: test_drift */
#include <math.h>
#include <string.h>

#include "json.h"
#include "segment_kit.h"
#include "test_util.h"

#define DIM 16
#define FIRST 2000 /* rows indexed */
#define NEW 1000   /* rows appended */
#define PARTS 8
#define SHIFT 6.0f
#define THRESHOLD 1.5f

static TuData data;
static char* dir;
static float centroids[PARTS * DIM];

/* The table's first FIRST rows, 200 a fragment, indexed as vec_idx (two
 * segments of 5 fragments, from a model trained on the table, whose
 * centroids go to `centroids`). */
static LanceDataset* indexed_table(const char* name, char* uri, size_t cap) {
    snprintf(uri, cap, "%s/%s.lance", dir, name);
    LanceDataset* ds = tu_write(uri, &data, 0, FIRST, LANCE_WRITE_CREATE, 200);
    CHECK(ds != NULL);
    if (!ds) return NULL;
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, PARTS, 0);
    LanceVectorModel* model = sk_train(ds, &p, NULL, 0);
    struct ArrowArray a;
    struct ArrowSchema s;
    CHECK(model != NULL);
    if (model && lance_vector_model_centroids(model, &a, &s) == 0) {
        const struct ArrowArray* child = a.children[0];
        CHECK(child->length == PARTS * DIM);
        if (child->length == PARTS * DIM)
            memcpy(centroids, (const float*)child->buffers[1] + child->offset, sizeof centroids);
        a.release(&a);
        s.release(&s);
    }
    SkSet set = sk_build_set(ds, &p, model, 2, 5, 10);
    CHECK_OK(sk_commit(ds, "vec_idx", &set, NULL, NULL));
    sk_set_free(&set);
    lance_vector_model_free(model);
    return ds;
}

/* Appends rows [FIRST, FIRST + NEW) of the data, each value + shift, as 5
 * fragments; the handle at the new version (the old one closed). */
static LanceDataset* append(LanceDataset* ds, const char* uri, float shift) {
    TuData moved = data;
    size_t n = (size_t)data.rows * DIM;
    moved.vectors = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) moved.vectors[i] = data.vectors[i] + shift;
    LanceDataset* next = tu_write(uri, &moved, FIRST, NEW, LANCE_WRITE_APPEND, 200);
    CHECK(next != NULL);
    free(moved.vectors);
    lance_dataset_close(ds);
    return next;
}

/* The mean over rows [first, first + count) (+ shift) of the squared L2
 * distance to the nearest centroid. */
static double expected_loss(int64_t first, int64_t count, float shift) {
    double sum = 0;
    for (int64_t r = first; r < first + count; r++) {
        double best = INFINITY;
        for (int c = 0; c < PARTS; c++) {
            double d = 0;
            for (int j = 0; j < DIM; j++) {
                double x = (double)data.vectors[r * DIM + j] + shift - centroids[c * DIM + j];
                d += x * x;
            }
            if (d < best) best = d;
        }
        sum += best;
    }
    return sum / (double)count;
}

/* The plan of `index` with `threshold`, parsed; NULL is a failed check. */
static JValue* plan(LanceDataset* ds, const char* index, float threshold) {
    LanceIndexMaintenanceOptions o = {0};
    o.drift_threshold = threshold;
    char* text = lance_dataset_plan_index_maintenance(ds, index, &o);
    CHECK(text != NULL);
    JValue* v = text ? json_parse(text) : NULL;
    lance_free_string(text);
    CHECK(v != NULL);
    return v;
}

/* The number member `key` of an object; -1 when it is not one. */
static double json_number(const JValue* o, const char* key) {
    const JValue* v = json_get(o, key);
    return v && v->type == J_NUMBER ? v->number : -1;
}

/* A number within 1e-4 of `want`, relatively. */
static bool near(const JValue* v, double want) {
    return v && v->type == J_NUMBER && fabs(v->number - want) <= 1e-4 * fabs(want);
}

/* The drift of a table with NEW rows appended (+ shift): exact losses, the
 * advice `retrain`. */
static void check_drift(const char* name, float shift, bool retrain) {
    char uri[600];
    LanceDataset* ds = indexed_table(name, uri, sizeof uri);
    if (!ds) return;
    ds = append(ds, uri, shift);
    JValue* p = ds ? plan(ds, "vec_idx", THRESHOLD) : NULL;
    const JValue* d = json_get(p, "drift");
    CHECK(d && d->type == J_OBJECT);
    double new_loss = expected_loss(FIRST, NEW, shift), indexed_loss = expected_loss(0, FIRST, 0);
    CHECK(json_number(d, "new_rows_sampled") == NEW && json_number(d, "indexed_rows_sampled") == FIRST);
    CHECK(near(json_get(d, "new_rows_loss"), new_loss) && near(json_get(d, "indexed_rows_loss"), indexed_loss));
    CHECK(near(json_get(d, "ratio"), new_loss / indexed_loss) && near(json_get(d, "threshold"), THRESHOLD));
    const JValue* r = json_get(d, "retrain");
    CHECK(r && r->type == J_BOOL && (r->number != 0) == retrain);
    CHECK(retrain ? new_loss / indexed_loss > THRESHOLD : new_loss / indexed_loss < THRESHOLD);
    printf("    %s: loss %.4f new against %.4f indexed, ratio %.3f\n", name, new_loss, indexed_loss,
           new_loss / indexed_loss);
    json_free(p);
    lance_dataset_close(ds);
}

static void test_same_distribution(void) { check_drift("same", 0, false); }
static void test_shifted_rows(void) { check_drift("shifted", SHIFT, true); }

static void test_nothing_new(void) {
    char uri[600];
    LanceDataset* ds = indexed_table("none", uri, sizeof uri);
    if (!ds) return;
    JValue* p = plan(ds, "vec_idx", THRESHOLD);
    const JValue* d = json_get(p, "drift");
    CHECK(d && d->type == J_OBJECT && json_number(d, "new_rows_sampled") == 0);
    CHECK(json_number(d, "indexed_rows_sampled") == FIRST &&
          near(json_get(d, "indexed_rows_loss"), expected_loss(0, FIRST, 0)));
    const JValue *loss = json_get(d, "new_rows_loss"), *ratio = json_get(d, "ratio"), *r = json_get(d, "retrain");
    CHECK(loss && loss->type == J_NULL && ratio && ratio->type == J_NULL);
    CHECK(r && r->type == J_BOOL && r->number == 0);
    json_free(p);

    /* No threshold, and a scalar index: no advice. */
    p = plan(ds, "vec_idx", 0);
    d = json_get(p, "drift");
    CHECK(d && d->type == J_NULL);
    json_free(p);
    CHECK_OK(lance_dataset_create_scalar_index(ds, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, false));
    p = plan(ds, "id_idx", THRESHOLD);
    d = json_get(p, "drift");
    CHECK(d && d->type == J_NULL);
    json_free(p);

    /* Thresholds that are no ratio. */
    const float bad[] = {-1.0f, INFINITY, NAN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        LanceIndexMaintenanceOptions o = {0};
        o.drift_threshold = bad[i];
        CHECK(lance_dataset_plan_index_maintenance(ds, "vec_idx", &o) == NULL);
        CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT && tu_error_mentions("drift_threshold"));
    }
    lance_dataset_close(ds);
}

int main(void) {
    double start = tu_now();
    data = tu_make_data(FIRST + NEW, DIM, PARTS, 1.0f, 4242);
    dir = tu_temp_dir("drift");
    CHECK(dir != NULL);
    if (dir) {
        RUN(test_same_distribution);
        RUN(test_shifted_rows);
        RUN(test_nothing_new);
        tu_remove_tree(dir);
    }
    printf("    %.1f s\n", tu_now() - start);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_drift");
}
