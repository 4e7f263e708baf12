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

#include "rounds_kit.h"
#include "segment_kit.h"
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

/* ---- the bytes (src/floor/training.rs): an 8-byte magic, little-endian
 * fields, arrays as a u64 count and the values, then a SHA-256 of all that
 * comes before it ---- */

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
static void reseal(uint8_t* bytes, size_t len) { fz_sha256(bytes, len - 32, bytes + len - 32); }

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
    pos += 8 + 4 * tu_get_u64_le(b + pos); /* fragments */
    pos += 8;                              /* rows */
    l.at[SAMPLE_ROWS] = pos;
    l.count[SAMPLE_ROWS] = 1;
    pos += 8;
    pos += 8 + 8 * tu_get_u64_le(b + pos); /* keys */
    l.count[VECTORS] = tu_get_u64_le(b + pos);
    l.at[VECTORS] = pos + 8;
    pos += 8 + 4 * l.count[VECTORS];
    if (tu_get_u64_le(b + pos) > 0) {
        pos += 8;
        for (Field f = SUMS; f <= RADIUS; f++) {
            l.count[f] = tu_get_u64_le(b + pos);
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
            put_u64(p, e->add ? tu_get_u64_le(p) + e->u : e->u);
        }
    }
    reseal(bytes, len);
}

/* ---- rounds ---- */

static const uint32_t lo[] = {0, 1}, hi[] = {2, 3};

/* Reduces a copy of the round's statistics with `e` applied to worker 1's
 * (to both when `both`): refused with `code` and a message naming
 * `mention`, and the training is where it was, without a model. */
static void check_refused(LanceVectorTraining* t, const RkStats* s, Edit e, int both, LanceErrorCode code,
                          const char* mention) {
    LanceVectorTrainingInfo before = rk_info(t);
    RkStats copy = *s;
    for (int g = 0; g < s->count; g++) {
        copy.bytes[g] = malloc(s->lens[g]);
        memcpy(copy.bytes[g], s->bytes[g], s->lens[g]);
        if (g == 1 || both) apply(copy.bytes[g], copy.lens[g], &e);
    }
    int32_t rc = rk_reduce(t, &copy);
    LanceErrorCode got = lance_last_error_code();
    if (rc != -1 || got != code || !tu_error_mentions(mention)) {
        fprintf(stderr, "%s (%s): reduce gave %d, code %d; expected code %d mentioning \"%s\"\n", e.what,
                both ? "both workers" : "worker 1", rc, (int)got, (int)code, mention);
    }
    CHECK(rc == -1 && got == code && tu_error_mentions(mention));
    LanceVectorTrainingInfo after = rk_info(t);
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
static void faults_of_phase(LanceVectorTraining* t, const RkStats* s, LanceVectorTrainingPhase phase) {
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

    /* Each fault: the edit, made to both workers' statistics (1) or to
       worker 1's (0), the refusal's code and words, and the phases (bit
       1 << phase) at whose first round it is tried, in this order. */
    const unsigned init = 1u << LANCE_TRAINING_IVF_INIT | 1u << LANCE_TRAINING_PQ_INIT;
    const unsigned pq_init = 1u << LANCE_TRAINING_PQ_INIT;
    const unsigned rounds = 1u << LANCE_TRAINING_IVF | 1u << LANCE_TRAINING_PQ;
    const struct {
        const Edit* edit;
        int both;
        LanceErrorCode code;
        const char* mention;
        unsigned phases;
    } faults[] = {
        {&nan_vector, 0, IA, "statistics #1 hold a non-finite value", init},
        {&inf_vector, 0, IA, "non-finite value (the candidate vectors' values[0] = -inf)", init},
        {&dim_zero, 1, IA, "dimension 0", init},
        {&dim_zero, 0, IA, "statistics #1 claim vectors of dimension 0", init},
        {&oversampled, 0, IA, "sampled", init},
        {&next_version, 1, MISMATCH, "the training samples version", pq_init},
        {&wider, 1, MISMATCH, "dimension 17", pq_init},
        {&inf_sum, 0, IA, "non-finite value (k-means problem 0: sums[0] = inf)", rounds},
        {&nan_sum, 0, IA, "sums[0] = NaN", rounds},
        {&inf_loss, 0, IA, "losses[1] = inf", rounds},
        {&nan_radius, 0, IA, "radius[0] = NaN", rounds},
        {&overcounted, 0, IA, "assign more rows in k-means problem 0", rounds},
        {&dim_zero, 1, IA, "dimension 0", rounds},
        /* Every worker agreeing on another version, row count or
           dimension: the training's own, pinned by round 0, decides. */
        {&next_version, 1, MISMATCH, "the training samples version", rounds},
        {&more_rows, 1, MISMATCH, "the training samples version", rounds},
        {&wider, 1, MISMATCH, "dimension 17", rounds},
        /* Finite statistics whose reduction is not. */
        {&huge_sums, 0, LANCE_ERR_INDEX, "overflows 32-bit floats", rounds},
        {&huge_losses, 0, LANCE_ERR_INDEX, "loss or balance factor", rounds},
    };
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        if (faults[i].phases & 1u << phase)
            check_refused(t, s, *faults[i].edit, faults[i].both, faults[i].code, faults[i].mention);
}

/* The rounds a training saw, by phase; with `faults`, every fault is
 * tried at the first round of each phase (rk_finish()'s hook). */
typedef struct {
    int faults;
    int seen[LANCE_TRAINING_DONE];
} Disturbance;

static void disturb(void* ctx, LanceVectorTraining* t, RkStats* s, LanceVectorTrainingPhase phase) {
    Disturbance* d = ctx;
    if (d->faults && !d->seen[phase]) faults_of_phase(t, s, phase);
    d->seen[phase]++;
}

/* Trains over the two halves, disturbed by `faults` or not; every phase
 * runs.  Returns the model. */
static LanceVectorModel* train_halves(const LanceVectorIndexParams* p, uint64_t seed, int faults) {
    const uint32_t* const halves[] = {lo, hi};
    const size_t half_n[] = {2, 2};
    Disturbance d = {faults, {0}};
    LanceVectorModel* m = rk_train(ds, p, seed, halves, half_n, 2, disturb, &d, NULL);
    CHECK(d.seen[LANCE_TRAINING_IVF_INIT] && d.seen[LANCE_TRAINING_IVF] && d.seen[LANCE_TRAINING_PQ_INIT] &&
          d.seen[LANCE_TRAINING_PQ]);
    return m;
}

static void test_faulty_statistics_refused(void) {
    LanceVectorIndexParams p = sk_pq_params(PARTITIONS, SUB_VECTORS, 4);
    LanceVectorModel* disturbed = train_halves(&p, 5, 1);
    LanceVectorModel* calm = train_halves(&p, 5, 0);
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
    pos += 8 + tu_get_u64_le(b + pos);
    pos += 4 + 5 * 4 + 8 + 4;
    pos += 1 + 4 + 5 * 8;
    pos += 8 + 4 * tu_get_u64_le(b + pos);
    pos += 8 + 4;
    CHECK(tu_get_u64_le(b + pos) == 1);
    pos += 8 + 16;
    CHECK(tu_get_u64_le(b + pos) == (uint64_t)PARTITIONS * DIM);
    pos += 8;
    CHECK(pos + 4 <= len - 32);
    return pos;
}

static void test_non_finite_request_refused(void) {
    LanceVectorIndexParams p = sk_pq_params(PARTITIONS, SUB_VECTORS, 4);
    p.index_type = LANCE_INDEX_IVF_FLAT;
    LanceVectorTraining* t = NULL;
    CHECK_OK(lance_vector_training_new("vec", &p, 9, &t));
    RkWorkers ws = rk_workers_new(ds, (const uint32_t* const[]){lo, hi}, (const size_t[]){2, 2}, 2);
    RkStats s = rk_run_round(t, ws.w, ws.count);
    CHECK_OK(rk_reduce(t, &s)); /* now in the IVF k-means, with centroids */
    rk_stats_free(&s);
    CHECK(rk_info(t).phase == LANCE_TRAINING_IVF);

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
        CHECK_ERR(lance_vector_training_worker_answer(ws.w[0], edited, len, NULL, &out, &out_len), IA);
        CHECK(tu_error_mentions(messages[i]) && out == NULL);
        free(edited);
    }
    /* The request as it was is whole. */
    LanceVectorTraining* resumed = NULL;
    CHECK_OK(lance_vector_training_resume(req, len, &resumed));
    lance_vector_training_free(resumed);
    lance_free_bytes(req);
    rk_workers_free(&ws);
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
