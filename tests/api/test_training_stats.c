/* Distributed training (lance.h "Distributed index builds: distributed
 * training"): the coordinator checks statistics for what they carry, not
 * only for their seal.  A faulty worker seals what it sends, so every case
 * takes a worker's real statistics of a round, edits fields as such a
 * worker would, and seals them again (the SHA-256 the library appends):
 * an infinity or NaN in the sums, losses, radii or candidate vectors;
 * dimension 0; another dataset version, row count or dimension after the
 * first round; more rows assigned than sampled; sums and losses whose
 * reduction overflows 32-bit floats.  Each refusal has its documented code
 * and leaves the training where it was (same phase and round, no model),
 * and the training then finishes with the same model as an undisturbed
 * one, every value of it finite.  A request holding a NaN is refused like
 * corrupted bytes, by the coordinator and by a worker. */
#include <math.h>
#include <string.h>

#include "test_util.h"
#include "../fuzz/mutate.h" /* fz_sha256(): the seal */

#define ROWS 2000
#define DIM 16
#define FRAGS 4
#define PARTITIONS 8
#define SUB_VECTORS 4

static TuFixture fixture;
static LanceDataset* ds; /* fixture.ds */

#define IA LANCE_ERR_INVALID_ARGUMENT
#define MISMATCH LANCE_ERR_MODEL_MISMATCH

static LanceVectorIndexParams pq_params(void) {
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_PQ;
    p.metric = LANCE_METRIC_L2;
    p.num_partitions = PARTITIONS;
    p.num_sub_vectors = SUB_VECTORS;
    p.num_bits = 4;
    return p;
}

/* ---- the bytes (src/floor/training.rs): an 8-byte magic, little-endian
 * fields, arrays as a u64 count and the values, then a SHA-256 of all that
 * comes before it ---- */

static uint64_t get_u64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void put_u64(uint8_t* p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> 8 * i);
}

static void put_f64(uint8_t* p, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    put_u64(p, bits);
}

static void put_f32(uint8_t* p, float v) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(bits >> 8 * i);
}

/* Seals edited bytes again, as a worker (or a coordinator) seals its own. */
static void reseal(uint8_t* bytes, size_t len) {
    fz_sha256(bytes, len - 32, bytes + len - 32);
}

/* The fields of statistics bytes: the magic, a reserved u64, the 32-byte
 * fingerprint of the request they answer, version, total rows, dimension
 * (u64s), fragments (u32s), rows, sample rows (u64s), candidate keys
 * (u64s) and vectors (f32s), then per k-means problem its sums (f64s),
 * counts (u64s), losses (f64s) and radii (f32s).  Offsets of each field's
 * first value, and its count; problem 0's only (none in the initial rounds). */
typedef enum { VERSION, TOTAL_ROWS, DIMENSION, SAMPLE_ROWS, VECTORS, SUMS, COUNTS, LOSSES, RADIUS, FIELDS } Field;
static const char kinds[FIELDS] = {'u', 'u', 'u', 'u', 'f', 'd', 'u', 'd', 'f'};

typedef struct {
    size_t at[FIELDS];
    uint64_t count[FIELDS];
} Layout;

static Layout layout_of(const uint8_t* b, size_t len) {
    Layout l = {{0}, {0}};
    size_t pos = 8 + 8 + 32;
    for (Field f = VERSION; f <= DIMENSION; f++) {
        l.at[f] = pos;
        l.count[f] = 1;
        pos += 8;
    }
    pos += 8 + 4 * get_u64(b + pos); /* fragments */
    pos += 8;                        /* rows */
    l.at[SAMPLE_ROWS] = pos;
    l.count[SAMPLE_ROWS] = 1;
    pos += 8;
    pos += 8 + 8 * get_u64(b + pos); /* keys */
    l.count[VECTORS] = get_u64(b + pos);
    l.at[VECTORS] = pos + 8;
    pos += 8 + 4 * l.count[VECTORS];
    if (get_u64(b + pos) > 0) {
        pos += 8;
        for (Field f = SUMS; f <= RADIUS; f++) {
            l.count[f] = get_u64(b + pos);
            l.at[f] = pos + 8;
            pos += 8 + (kinds[f] == 'f' ? 4 : 8) * l.count[f];
        }
    }
    CHECK(pos <= len - 32);
    return l;
}

/* One edit a faulty worker makes: value `index` of `field` (every value
 * when ALL) set to `value` (a float field) or to `u` (a u64 field; plus
 * its current value when `add`). */
#define ALL SIZE_MAX
typedef struct {
    const char* what; /* for a failed check's report */
    Field field;
    size_t index;
    double value;
    uint64_t u;
    int add;
} Edit;

static void apply(uint8_t* bytes, size_t len, const Edit* e) {
    Layout l = layout_of(bytes, len);
    CHECK(l.count[e->field] > 0 && (e->index == ALL || e->index < l.count[e->field]));
    size_t first = e->index == ALL ? 0 : e->index;
    size_t last = e->index == ALL ? l.count[e->field] : e->index + 1;
    for (size_t i = first; i < last && i < l.count[e->field]; i++) {
        char kind = kinds[e->field];
        uint8_t* p = bytes + l.at[e->field] + i * (kind == 'f' ? 4 : 8);
        if (kind == 'f') {
            put_f32(p, (float)e->value);
        } else if (kind == 'd') {
            put_f64(p, e->value);
        } else {
            put_u64(p, e->add ? get_u64(p) + e->u : e->u);
        }
    }
    reseal(bytes, len);
}

/* ---- rounds ---- */

typedef struct {
    int count;
    uint8_t* bytes[2];
    size_t lens[2];
} Stats;

static const uint32_t lo[] = {0, 1}, hi[] = {2, 3};

static Stats run_round(LanceVectorTraining* t, LanceVectorTrainingWorker* const* w) {
    Stats s = {2, {0}, {0}};
    uint8_t* req = NULL;
    size_t req_len = 0;
    CHECK_OK(lance_vector_training_request(t, &req, &req_len));
    for (int g = 0; g < 2; g++) {
        CHECK_OK(lance_vector_training_worker_run(w[g], req, req_len, &s.bytes[g], &s.lens[g]));
    }
    lance_free_bytes(req);
    return s;
}

static int32_t reduce(LanceVectorTraining* t, const Stats* s) {
    return lance_vector_training_reduce(t, (const uint8_t* const*)s->bytes, s->lens, (size_t)s->count);
}

static LanceVectorTrainingInfo info_of(const LanceVectorTraining* t) {
    LanceVectorTrainingInfo info;
    CHECK_OK(lance_vector_training_info(t, &info));
    return info;
}

/* Reduces a copy of the round's statistics with `e` applied to worker 1's
 * (to both when `both`): refused with `code` and a message naming
 * `mention`, and the training is where it was, without a model. */
static void check_refused(LanceVectorTraining* t, const Stats* s, Edit e, int both, LanceErrorCode code,
                          const char* mention) {
    LanceVectorTrainingInfo before = info_of(t);
    Stats copy = *s;
    for (int g = 0; g < s->count; g++) {
        copy.bytes[g] = malloc(s->lens[g]);
        memcpy(copy.bytes[g], s->bytes[g], s->lens[g]);
        if (g == 1 || both) apply(copy.bytes[g], copy.lens[g], &e);
    }
    int32_t rc = reduce(t, &copy);
    LanceErrorCode got = lance_last_error_code();
    if (rc != -1 || got != code || !tu_error_mentions(mention)) {
        fprintf(stderr, "%s (%s): reduce gave %d, code %d; expected code %d mentioning \"%s\"\n", e.what,
                both ? "both workers" : "worker 1", rc, (int)got, (int)code, mention);
    }
    CHECK(rc == -1 && got == code && tu_error_mentions(mention));
    LanceVectorTrainingInfo after = info_of(t);
    CHECK(after.phase == before.phase && after.rounds == before.rounds && after.phase != LANCE_TRAINING_DONE);
    LanceVectorModel* m = NULL;
    CHECK_ERR(lance_vector_training_model(t, &m), IA);
    CHECK(m == NULL);
    for (int g = 0; g < s->count; g++) free(copy.bytes[g]);
}

/* Every value of a model's centroids (part 0) or codebook (part 1) is finite. */
static int all_finite(const LanceVectorModel* m, int part) {
    struct ArrowArray a;
    struct ArrowSchema sc;
    if ((part == 0 ? lance_vector_model_centroids(m, &a, &sc) : lance_vector_model_codebook(m, &a, &sc)) != 0) {
        return 0;
    }
    const struct ArrowArray* child = a.children[0];
    const float* v = (const float*)child->buffers[1] + child->offset;
    int ok = child->length > 0;
    for (int64_t i = 0; i < child->length; i++) ok = ok && isfinite(v[i]);
    a.release(&a);
    sc.release(&sc);
    return ok;
}

static char* fingerprint_of(LanceVectorModel* m) {
    char* f = lance_vector_model_fingerprint(m);
    CHECK(f && strlen(f) == 64);
    return f;
}

/* The faults tried at the first round of `phase` (`s`: that round's statistics). */
static void faults_of_phase(LanceVectorTraining* t, const Stats* s, LanceVectorTrainingPhase phase) {
    const double huge = 1e300; /* finite as a double, far beyond a float */
    const Edit nan_vector = {"a NaN candidate value", VECTORS, 0, NAN, 0, 0};
    const Edit inf_vector = {"an infinite candidate value", VECTORS, ALL, -INFINITY, 0, 0};
    const Edit dim_zero = {"dimension 0", DIMENSION, 0, 0, 0, 0};
    const Edit next_version = {"the next dataset version", VERSION, 0, 0, 1, 1};
    const Edit more_rows = {"one row more in the dataset", TOTAL_ROWS, 0, 0, 1, 1};
    const Edit wider = {"one dimension more", DIMENSION, 0, 0, 1, 1};
    const Edit oversampled = {"more sample rows than rows", SAMPLE_ROWS, 0, 0, UINT64_MAX, 0};
    const Edit inf_sum = {"an infinite sum", SUMS, 0, INFINITY, 0, 0};
    const Edit nan_sum = {"a NaN sum", SUMS, ALL, NAN, 0, 0};
    const Edit inf_loss = {"an infinite loss", LOSSES, 1, INFINITY, 0, 0};
    const Edit nan_radius = {"a NaN radius", RADIUS, ALL, NAN, 0, 0};
    const Edit overcounted = {"a count above the sample", COUNTS, 0, 0, UINT64_MAX, 0};
    const Edit huge_sums = {"sums beyond the float range", SUMS, ALL, huge, 0, 0};
    const Edit huge_losses = {"losses beyond the float range", LOSSES, ALL, huge, 0, 0};

    switch (phase) {
        case LANCE_TRAINING_IVF_INIT:
        case LANCE_TRAINING_PQ_INIT:
            check_refused(t, s, nan_vector, 0, IA, "statistics #1 hold a non-finite value");
            check_refused(t, s, inf_vector, 0, IA, "non-finite value (the candidate vectors' values[0] = -inf)");
            check_refused(t, s, dim_zero, 1, IA, "dimension 0");
            check_refused(t, s, dim_zero, 0, IA, "statistics #1 claim vectors of dimension 0");
            check_refused(t, s, oversampled, 0, IA, "sampled");
            if (phase == LANCE_TRAINING_PQ_INIT) {
                check_refused(t, s, next_version, 1, MISMATCH, "the training samples version");
                check_refused(t, s, wider, 1, MISMATCH, "dimension 17");
            }
            break;
        case LANCE_TRAINING_IVF:
        case LANCE_TRAINING_PQ:
            check_refused(t, s, inf_sum, 0, IA, "non-finite value (k-means problem 0: sums[0] = inf)");
            check_refused(t, s, nan_sum, 0, IA, "sums[0] = NaN");
            check_refused(t, s, inf_loss, 0, IA, "losses[1] = inf");
            check_refused(t, s, nan_radius, 0, IA, "radius[0] = NaN");
            check_refused(t, s, overcounted, 0, IA, "assign more rows in k-means problem 0");
            check_refused(t, s, dim_zero, 1, IA, "dimension 0");
            /* Every worker agreeing on another version, row count or
               dimension: the training's own, pinned by round 0, decides. */
            check_refused(t, s, next_version, 1, MISMATCH, "the training samples version");
            check_refused(t, s, more_rows, 1, MISMATCH, "the training samples version");
            check_refused(t, s, wider, 1, MISMATCH, "dimension 17");
            /* Finite statistics whose reduction is not. */
            check_refused(t, s, huge_sums, 0, LANCE_ERR_INDEX, "overflows 32-bit floats");
            check_refused(t, s, huge_losses, 0, LANCE_ERR_INDEX, "loss or balance factor");
            break;
        case LANCE_TRAINING_DONE:
            break;
    }
}

/* Trains over the two halves; with `faults`, tries every fault at the first
 * round of each phase.  Returns the model. */
static LanceVectorModel* train(const LanceVectorIndexParams* p, uint64_t seed, int faults) {
    LanceVectorTraining* t = NULL;
    CHECK_OK(lance_vector_training_new("vec", p, seed, &t));
    LanceVectorTrainingWorker* w[2] = {NULL, NULL};
    CHECK_OK(lance_vector_training_worker_new(ds, lo, 2, &w[0]));
    CHECK_OK(lance_vector_training_worker_new(ds, hi, 2, &w[1]));
    int seen[LANCE_TRAINING_DONE] = {0};
    for (int guard = 0; guard < 300 && info_of(t).phase != LANCE_TRAINING_DONE; guard++) {
        LanceVectorTrainingPhase phase = info_of(t).phase;
        Stats s = run_round(t, w);
        if (faults && !seen[phase]) {
            faults_of_phase(t, &s, phase);
        }
        seen[phase]++;
        CHECK_OK(reduce(t, &s));
        for (int g = 0; g < 2; g++) lance_free_bytes(s.bytes[g]);
    }
    CHECK(seen[LANCE_TRAINING_IVF_INIT] && seen[LANCE_TRAINING_IVF] && seen[LANCE_TRAINING_PQ_INIT] &&
          seen[LANCE_TRAINING_PQ]);
    LanceVectorModel* m = NULL;
    CHECK_OK(lance_vector_training_model(t, &m));
    lance_vector_training_worker_free(w[0]);
    lance_vector_training_worker_free(w[1]);
    lance_vector_training_free(t);
    return m;
}

static void test_faulty_statistics_refused(void) {
    LanceVectorIndexParams p = pq_params();
    LanceVectorModel* disturbed = train(&p, 5, 1);
    LanceVectorModel* calm = train(&p, 5, 0);
    CHECK(disturbed && calm);
    if (disturbed && calm) {
        char* fd = fingerprint_of(disturbed);
        char* fc = fingerprint_of(calm);
        CHECK(fd && fc && strcmp(fd, fc) == 0);
        lance_free_string(fd);
        lance_free_string(fc);
        CHECK(all_finite(disturbed, 0) && all_finite(disturbed, 1));
    }
    lance_vector_model_free(disturbed);
    lance_vector_model_free(calm);
}

/* The request's fields up to the first centroid of its first k-means
 * problem: the column (a u64 length and its bytes), metric, five u32
 * parameters, seed, index type, phase (u8), round (u32), dimension,
 * version, total rows, IVF and PQ sample rows (u64s), the final IVF
 * centroids (f32s), IVF loss (f64), IVF iterations (u32), the problems'
 * count, then problem 0's k and dimension (u64s) and its centroids. */
static size_t first_centroid(const uint8_t* b, size_t len) {
    size_t pos = 8;
    pos += 8 + get_u64(b + pos);
    pos += 4 + 5 * 4 + 8 + 4;
    pos += 1 + 4 + 5 * 8;
    pos += 8 + 4 * get_u64(b + pos);
    pos += 8 + 4;
    CHECK(get_u64(b + pos) == 1);
    pos += 8 + 16;
    CHECK(get_u64(b + pos) == (uint64_t)PARTITIONS * DIM);
    pos += 8;
    CHECK(pos + 4 <= len - 32);
    return pos;
}

static void test_non_finite_request_refused(void) {
    LanceVectorIndexParams p = pq_params();
    p.index_type = LANCE_INDEX_IVF_FLAT;
    LanceVectorTraining* t = NULL;
    CHECK_OK(lance_vector_training_new("vec", &p, 9, &t));
    LanceVectorTrainingWorker* w[2] = {NULL, NULL};
    CHECK_OK(lance_vector_training_worker_new(ds, lo, 2, &w[0]));
    CHECK_OK(lance_vector_training_worker_new(ds, hi, 2, &w[1]));
    Stats s = run_round(t, w);
    CHECK_OK(reduce(t, &s)); /* now in the IVF k-means, with centroids */
    for (int g = 0; g < 2; g++) lance_free_bytes(s.bytes[g]);
    CHECK(info_of(t).phase == LANCE_TRAINING_IVF);

    uint8_t* req = NULL;
    size_t len = 0;
    CHECK_OK(lance_vector_training_request(t, &req, &len));
    size_t at = first_centroid(req, len);
    /* A NaN in centroid 0, then an infinity in centroid 1 (value 16). */
    const float bad[] = {NAN, INFINITY};
    const char* messages[] = {"value 0 of k-means problem 0's centroids is not finite",
                              "value 16 of k-means problem 0's centroids is not finite"};
    for (int i = 0; i < 2; i++) {
        uint8_t* edited = malloc(len);
        memcpy(edited, req, len);
        put_f32(edited + at + 4 * (size_t)i * DIM, bad[i]);
        reseal(edited, len);
        LanceVectorTraining* resumed = NULL;
        CHECK_ERR(lance_vector_training_resume(edited, len, &resumed), IA);
        CHECK(tu_error_mentions(messages[i]) && resumed == NULL);
        uint8_t* out = NULL;
        size_t out_len = 0;
        CHECK_ERR(lance_vector_training_worker_run(w[0], edited, len, &out, &out_len), IA);
        CHECK(tu_error_mentions(messages[i]) && out == NULL);
        free(edited);
    }
    /* The request as it was is whole. */
    LanceVectorTraining* resumed = NULL;
    CHECK_OK(lance_vector_training_resume(req, len, &resumed));
    lance_vector_training_free(resumed);
    lance_free_bytes(req);
    lance_vector_training_worker_free(w[0]);
    lance_vector_training_worker_free(w[1]);
    lance_vector_training_free(t);
}

int main(void) {
    tu_fixture_begin(&fixture, "training_stats", tu_make_data(ROWS, DIM, PARTITIONS, 1.0f, 17), ROWS / FRAGS);
    ds = fixture.ds;
    CHECK(lance_dataset_fragment_count(ds) == FRAGS);
    RUN(test_faulty_statistics_refused);
    RUN(test_non_finite_request_refused);
    return tu_fixture_end(&fixture, "test_training_stats");
}
