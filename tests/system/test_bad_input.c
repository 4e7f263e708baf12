#define _GNU_SOURCE
/* A catalogue of bad inputs for every function of the distributed API
 * (lance.h, from "Shared vector models" to the end, and the cleanup):
 * NULL handles and out pointers, (size_t)-1 counts, empty strings, unknown
 * columns, enum values out of range, fragments not in the dataset,
 * duplicates, models of the wrong dimension or kind, truncated and
 * corrupted bytes, and the refusals of the commit (issue 17).  Every case
 * asserts the exact code, and where lance.h promises it, what the message
 * names.  Every message must be for a user: no Rust source paths, no
 * `LanceError(...)` wrappers; and nothing may appear on stderr (a caught
 * panic included): stderr is captured for the whole catalogue.  Prints the
 * number of cases. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "segment_params.h"
#include "dataset_kit.h"
#include "knn_kit.h"
#include "progress_kit.h"
#include "segment_kit.h"
#include "test_util.h"
#include "uuid_hex.h"

#define ROWS 2000
#define DIM 16
#define FRAGS 8
#define PARTS 4
#define HUGE ((size_t)-1) /* a negative int passed by mistake */

static TuData data;
static char* dir;
static LanceDataset* ds;         /* FRAGS fragments at version 1, never committed to */
static LanceVectorModel* flat;   /* IVF_FLAT, PARTS partitions */
static LanceVectorModel* pq;     /* IVF_PQ, PARTS partitions, 4 sub-vectors */
static LanceVectorModel* other;  /* IVF_FLAT trained on fragments 0-3 only: another model */
static LanceVectorModel* narrow; /* IVF_FLAT of dimension 8 */
static int cases;
static int panic_seq;

static int verbose; /* LANCE_BAD_INPUT_VERBOSE=1: print every case's message */

/* The last error's message is for a user (issue item 9). */
static int clean_message(void) {
    const TuError* e = tu_last_error();
    const char* msg = e->message;
    int ok = msg != NULL && *msg && !strstr(msg, ".rs:") && !strstr(msg, "LanceError");
    if (!ok) fprintf(stderr, "    message not clean: %s\n", msg ? msg : "(none)");
    if (verbose) printf("    case %d [%d] %s\n", cases, (int)e->code, msg ? msg : "(none)");
    return ok;
}

/* A call returning -1 with `code`. */
#define BAD(call, code)         \
    do {                        \
        cases++;                \
        CHECK_ERR(call, code);  \
        CHECK(clean_message()); \
    } while (0)

/* The same, and the message names `needle`. */
#define BAD_MSG(call, code, needle)       \
    do {                                  \
        BAD(call, code);                  \
        CHECK(tu_error_mentions(needle)); \
    } while (0)

/* A call returning NULL (a handle or a string) or 0 (a getter) with `code`. */
#define BAD_VALUE(call, fail_value, code)         \
    do {                                          \
        cases++;                                  \
        CHECK((call) == (fail_value));            \
        CHECK(lance_last_error_code() == (code)); \
        CHECK(clean_message());                   \
    } while (0)

/* ---- fixtures ---- */

/* The parameters of the models: PARTS partitions, PQ with 4 sub-vectors. */
static const LanceVectorIndexParams flat_model_params = {.index_type = LANCE_INDEX_IVF_FLAT, .num_partitions = PARTS};
static const LanceVectorIndexParams pq_model_params = {
    .index_type = LANCE_INDEX_IVF_PQ, .num_partitions = PARTS, .num_sub_vectors = 4};

/* Options (mode AUTO) for a build of the `n` fragments `fragment_ids` under `uuid`
 * (NULL = generated); the model, if any, is set on the builder. */
static LanceIndexSegmentBuildOptions options(const uint32_t* fragment_ids, size_t n, const uint8_t* uuid) {
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = fragment_ids;
    o.fragment_count = n;
    o.index_uuid = uuid;
    return o;
}

static const uint32_t first_half[] = {0, 1, 2, 3}, second_half[] = {4, 5, 6, 7};

/* Builds one vector segment with `model` set (NULL = trained locally); NULL
 * (a failed check) on error. */
static uint8_t* segment(LanceDataset* d, LanceVectorIndexType type, const LanceVectorModel* model,
                        const uint32_t* fragment_ids, size_t n, const uint8_t* uuid, size_t* len) {
    LanceVectorIndexParams p = type == LANCE_INDEX_IVF_PQ ? pq_model_params : sk_params(type, PARTS, 0);
    LanceIndexSegmentBuildOptions o = options(fragment_ids, n, uuid);
    LanceIndexSegmentBuilder* b = vector_segment_builder_new(d, "vec", NULL, &p, &o, model);
    uint8_t* bytes = NULL;
    CHECK(b && lance_index_segment_builder_execute_uncommitted(b, &bytes, len) == 0);
    lance_index_segment_builder_free(b);
    return bytes;
}

/* A vector build with `model` set (NULL = none) whose builder is made and
 * given the model, and whose execute fails with `code` (nothing written). */
static void build_fails(LanceDataset* d, const LanceVectorIndexParams* p, const LanceIndexSegmentBuildOptions* o,
                        const LanceVectorModel* model, LanceErrorCode code) {
    cases++;
    LanceIndexSegmentBuilder* b = vector_segment_builder_new(d, "vec", NULL, p, o, model);
    CHECK(b != NULL);
    uint8_t* bytes = NULL;
    size_t len = 0;
    if (b) CHECK_ERR(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len), code);
    lance_index_segment_builder_free(b);
    CHECK(clean_message());
}

/* Commits `n` segments on `column` with only `replace` set and no result
 * asked for; the refusal cases pass them through here. */
static int commit_on(LanceDataset* d, const char* name, const char* column, const uint8_t* const* bytes,
                     const size_t* lens, size_t n, bool replace) {
    LanceCommitIndexOptions o = {0};
    o.replace = replace;
    return lance_dataset_commit_index_segments_v2(d, name, column, bytes, lens, n, &o, NULL);
}

static void uuid_of(const uint8_t* bytes, size_t len, char text[UUID_HEX_DASHED_LEN + 1]) {
    LanceIndexSegmentMetadata* m = NULL;
    uint8_t u[16] = {0};
    CHECK(lance_index_segment_metadata_parse(bytes, len, &m) == 0 && lance_index_segment_metadata_uuid(m, u) == 0);
    lance_index_segment_metadata_free(m);
    uuid_hex_format_dashed(u, text);
}

/* Releases an array and its schema that the caller owns. */
static void release(struct ArrowArray* a, struct ArrowSchema* s) {
    a->release(a);
    s->release(s);
}

/* ---- shared models ---- */

static void test_trainers(void) {
    struct ArrowArray c;
    struct ArrowSchema cs;
    const uint32_t one[] = {0}, missing[] = {0, 99}, twice[] = {1, 1};
    const LanceMetricType l2 = LANCE_METRIC_L2;
    BAD_MSG(lance_index_train_ivf_model(NULL, "vec", PARTS, l2, NULL, 0, &c, &cs), LANCE_ERR_INVALID_ARGUMENT,
            "dataset");
    BAD_MSG(lance_index_train_ivf_model(ds, NULL, PARTS, l2, NULL, 0, &c, &cs), LANCE_ERR_INVALID_ARGUMENT, "column");
    BAD_MSG(lance_index_train_ivf_model(ds, "", PARTS, l2, NULL, 0, &c, &cs), LANCE_ERR_INVALID_ARGUMENT, "column");
    BAD_MSG(lance_index_train_ivf_model(ds, "nope", PARTS, l2, NULL, 0, &c, &cs), LANCE_ERR_NOT_FOUND, "nope");
    BAD(lance_index_train_ivf_model(ds, "tag", PARTS, l2, NULL, 0, &c, &cs), LANCE_ERR_INVALID_ARGUMENT);
    BAD_MSG(lance_index_train_ivf_model(ds, "vec", 0, l2, NULL, 0, &c, &cs), LANCE_ERR_INVALID_ARGUMENT,
            "num_partitions");
    BAD_MSG(lance_index_train_ivf_model(ds, "vec", PARTS, 7, NULL, 0, &c, &cs), LANCE_ERR_INVALID_ARGUMENT, "metric");
    BAD_MSG(lance_index_train_ivf_model(ds, "vec", PARTS, -1, NULL, 0, &c, &cs), LANCE_ERR_INVALID_ARGUMENT, "metric");
    BAD_MSG(lance_index_train_ivf_model(ds, "vec", PARTS, l2, NULL, 0, NULL, &cs), LANCE_ERR_INVALID_ARGUMENT,
            "out_array");
    BAD_MSG(lance_index_train_ivf_model(ds, "vec", PARTS, l2, NULL, 0, &c, NULL), LANCE_ERR_INVALID_ARGUMENT,
            "out_schema");
    BAD_MSG(lance_index_train_ivf_model(ds, "vec", PARTS, l2, NULL, 2, &c, &cs), LANCE_ERR_INVALID_ARGUMENT,
            "fragment_ids");
    BAD_MSG(lance_index_train_ivf_model(ds, "vec", PARTS, l2, one, 0, &c, &cs), LANCE_ERR_INVALID_ARGUMENT,
            "fragment_ids");
    BAD(lance_index_train_ivf_model(ds, "vec", PARTS, l2, one, HUGE, &c, &cs), LANCE_ERR_INVALID_ARGUMENT);
    BAD_MSG(lance_index_train_ivf_model(ds, "vec", PARTS, l2, missing, 2, &c, &cs), LANCE_ERR_INVALID_ARGUMENT,
            "fragment_ids[1] = 99");
    BAD_MSG(lance_index_train_ivf_model(ds, "vec", PARTS, l2, twice, 2, &c, &cs), LANCE_ERR_INVALID_ARGUMENT, "twice");
    /* Item 4: HAMMING on float32 vectors, more partitions than rows. */
    BAD(lance_index_train_ivf_model(ds, "vec", PARTS, LANCE_METRIC_HAMMING, NULL, 0, &c, &cs),
        LANCE_ERR_INVALID_ARGUMENT);
    BAD(lance_index_train_ivf_model(ds, "vec", ROWS + 1, l2, NULL, 0, &c, &cs), LANCE_ERR_INVALID_ARGUMENT);

    /* The PQ codebook, on centroids of the shared model. */
    struct ArrowArray good;
    struct ArrowSchema good_schema;
    CHECK_OK(lance_vector_model_centroids(flat, &good, &good_schema));
    struct ArrowArray thin;
    struct ArrowSchema thin_schema;
    CHECK_OK(lance_vector_model_centroids(narrow, &thin, &thin_schema));
    struct ArrowArray wide;
    struct ArrowSchema wide_schema;
    float values[PARTS * DIM] = {0};
    tu_f32_list(values, PARTS, DIM, -1, "g", &wide, &wide_schema); /* float64 elements claimed, float32 given */
    struct ArrowArray* g = &good;
    struct ArrowSchema* gs = &good_schema;
    BAD_MSG(lance_index_train_pq_model(NULL, "vec", 4, 8, l2, NULL, 0, g, gs, &c, &cs), LANCE_ERR_INVALID_ARGUMENT,
            "dataset");
    BAD_MSG(lance_index_train_pq_model(ds, NULL, 4, 8, l2, NULL, 0, g, gs, &c, &cs), LANCE_ERR_INVALID_ARGUMENT,
            "column");
    BAD_MSG(lance_index_train_pq_model(ds, "nope", 4, 8, l2, NULL, 0, g, gs, &c, &cs), LANCE_ERR_NOT_FOUND, "nope");
    BAD_MSG(lance_index_train_pq_model(ds, "vec", 4, 8, 9, NULL, 0, g, gs, &c, &cs), LANCE_ERR_INVALID_ARGUMENT,
            "metric");
    BAD_MSG(lance_index_train_pq_model(ds, "vec", 4, 8, l2, NULL, 0, NULL, gs, &c, &cs), LANCE_ERR_INVALID_ARGUMENT,
            "ivf_centroids");
    BAD_MSG(lance_index_train_pq_model(ds, "vec", 4, 8, l2, NULL, 0, g, NULL, &c, &cs), LANCE_ERR_INVALID_ARGUMENT,
            "ivf_centroids");
    BAD_MSG(lance_index_train_pq_model(ds, "vec", 4, 8, l2, NULL, 0, g, gs, NULL, &cs), LANCE_ERR_INVALID_ARGUMENT,
            "out_array");
    BAD_MSG(lance_index_train_pq_model(ds, "vec", 4, 8, l2, NULL, 0, g, gs, &c, NULL), LANCE_ERR_INVALID_ARGUMENT,
            "out_schema");
    BAD_MSG(lance_index_train_pq_model(ds, "vec", 5, 8, l2, NULL, 0, g, gs, &c, &cs), LANCE_ERR_INVALID_ARGUMENT,
            "num_sub_vectors");
    BAD_MSG(lance_index_train_pq_model(ds, "vec", 4, 8, l2, NULL, 0, &thin, &thin_schema, &c, &cs),
            LANCE_ERR_INVALID_ARGUMENT, "dimension");
    BAD(lance_index_train_pq_model(ds, "vec", 4, 8, l2, NULL, 0, &wide, &wide_schema, &c, &cs),
        LANCE_ERR_INVALID_ARGUMENT);
    BAD(lance_index_train_pq_model(ds, "vec", 4, 8, l2, one, HUGE, g, gs, &c, &cs), LANCE_ERR_INVALID_ARGUMENT);
    BAD_MSG(lance_index_train_pq_model(ds, "vec", 4, 8, l2, missing, 2, g, gs, &c, &cs), LANCE_ERR_INVALID_ARGUMENT,
            "99");
    cases++; /* (a codebook trained anyway is released) */
    int trained = lance_index_train_pq_model(ds, "vec", 4, 8, LANCE_METRIC_HAMMING, NULL, 0, g, gs, &c, &cs);
    CHECK(trained == -1 && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    if (trained == 0) release(&c, &cs);
    else CHECK(clean_message());

    /* The whole model. */
    LanceVectorModel* m = NULL;
    LanceVectorIndexParams p = flat_model_params;
    LanceVectorIndexParams bad = p;
    BAD_MSG(lance_vector_model_train(NULL, "vec", &p, NULL, 0, NULL, &m), LANCE_ERR_INVALID_ARGUMENT, "dataset");
    BAD_MSG(lance_vector_model_train(ds, NULL, &p, NULL, 0, NULL, &m), LANCE_ERR_INVALID_ARGUMENT, "column");
    BAD_MSG(lance_vector_model_train(ds, "", &p, NULL, 0, NULL, &m), LANCE_ERR_INVALID_ARGUMENT, "column");
    BAD_MSG(lance_vector_model_train(ds, "nope", &p, NULL, 0, NULL, &m), LANCE_ERR_NOT_FOUND, "nope");
    BAD_MSG(lance_vector_model_train(ds, "vec", NULL, NULL, 0, NULL, &m), LANCE_ERR_INVALID_ARGUMENT, "params");
    BAD_MSG(lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT, "out_model");
    bad.index_type = (LanceVectorIndexType)0;
    BAD_MSG(lance_vector_model_train(ds, "vec", &bad, NULL, 0, NULL, &m), LANCE_ERR_INVALID_ARGUMENT, "index_type");
    bad.index_type = (LanceVectorIndexType)108;
    BAD_MSG(lance_vector_model_train(ds, "vec", &bad, NULL, 0, NULL, &m), LANCE_ERR_INVALID_ARGUMENT, "index_type");
    bad = p;
    bad.metric = (LanceMetricType)5;
    BAD_MSG(lance_vector_model_train(ds, "vec", &bad, NULL, 0, NULL, &m), LANCE_ERR_INVALID_ARGUMENT, "metric");
    LanceVectorTrainingOptions reserved = {0};
    reserved.reserved = 1;
    LanceVectorModelTrainOptions with_reserved = {0};
    with_reserved.training = &reserved;
    BAD_MSG(lance_vector_model_train(ds, "vec", &p, NULL, 0, &with_reserved, &m), LANCE_ERR_INVALID_ARGUMENT,
            "reserved");
    bad = pq_model_params;
    bad.num_sub_vectors = 5;
    BAD_MSG(lance_vector_model_train(ds, "vec", &bad, NULL, 0, NULL, &m), LANCE_ERR_INVALID_ARGUMENT,
            "num_sub_vectors");
    BAD(lance_vector_model_train(ds, "vec", &p, one, HUGE, NULL, &m), LANCE_ERR_INVALID_ARGUMENT);
    BAD_MSG(lance_vector_model_train(ds, "vec", &p, missing, 2, NULL, &m), LANCE_ERR_INVALID_ARGUMENT, "99");
    BAD_MSG(lance_vector_model_train(ds, "vec", &p, twice, 2, NULL, &m), LANCE_ERR_INVALID_ARGUMENT, "twice");
    bad = p;
    bad.metric = LANCE_METRIC_HAMMING;
    BAD(lance_vector_model_train(ds, "vec", &bad, NULL, 0, NULL, &m), LANCE_ERR_INVALID_ARGUMENT);
    bad = p;
    bad.num_partitions = ROWS + 1;
    BAD(lance_vector_model_train(ds, "vec", &bad, NULL, 0, NULL, &m), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(m == NULL);
    release(&good, &good_schema);
    release(&thin, &thin_schema);
    release(&wide, &wide_schema);
}

static void test_model_functions(void) {
    struct ArrowArray c, cb;
    struct ArrowSchema cs, cbs;
    CHECK_OK(lance_vector_model_centroids(flat, &c, &cs));
    CHECK_OK(lance_vector_model_codebook(pq, &cb, &cbs));
    float values[PARTS * DIM] = {0};
    struct ArrowArray f64, with_null;
    struct ArrowSchema f64s, with_null_s;
    tu_f32_list(values, PARTS, DIM, -1, "g", &f64, &f64s);
    tu_f32_list(values, PARTS, DIM, 1, "f", &with_null, &with_null_s);
    LanceVectorModel* m = NULL;
    const LanceMetricType l2 = LANCE_METRIC_L2;
    BAD_MSG(lance_vector_model_from_arrow((LanceMetricType)9, &c, &cs, 0, 0, NULL, NULL, &m),
            LANCE_ERR_INVALID_ARGUMENT, "metric");
    BAD_MSG(lance_vector_model_from_arrow(l2, &c, &cs, 0, 0, NULL, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT,
            "out_model");
    BAD_MSG(lance_vector_model_from_arrow(l2, NULL, &cs, 0, 0, NULL, NULL, &m), LANCE_ERR_INVALID_ARGUMENT,
            "ivf_centroids");
    BAD_MSG(lance_vector_model_from_arrow(l2, &c, NULL, 0, 0, NULL, NULL, &m), LANCE_ERR_INVALID_ARGUMENT,
            "ivf_centroids");
    BAD(lance_vector_model_from_arrow(l2, &f64, &f64s, 0, 0, NULL, NULL, &m), LANCE_ERR_INVALID_ARGUMENT);
    BAD(lance_vector_model_from_arrow(l2, &with_null, &with_null_s, 0, 0, NULL, NULL, &m), LANCE_ERR_INVALID_ARGUMENT);
    /* A codebook of the wrong shape: the centroids passed as one. */
    BAD_MSG(lance_vector_model_from_arrow(l2, &c, &cs, 4, 8, &c, &cs, &m), LANCE_ERR_INVALID_ARGUMENT, "codebook");
    BAD_MSG(lance_vector_model_from_arrow(l2, &c, &cs, 0, 8, &cb, &cbs, &m), LANCE_ERR_INVALID_ARGUMENT,
            "num_sub_vectors");
    BAD_MSG(lance_vector_model_from_arrow(l2, &c, &cs, 5, 8, &cb, &cbs, &m), LANCE_ERR_INVALID_ARGUMENT,
            "num_sub_vectors");
    BAD_MSG(lance_vector_model_from_arrow(l2, &c, &cs, 4, 0, &cb, &cbs, &m), LANCE_ERR_INVALID_ARGUMENT, "num_bits");
    BAD_MSG(lance_vector_model_from_arrow(l2, &c, &cs, 4, 8, &cb, NULL, &m), LANCE_ERR_INVALID_ARGUMENT, "pq_codebook");
    CHECK(m == NULL);

    uint8_t* bytes = NULL;
    size_t len = 0;
    BAD_MSG(lance_vector_model_serialize(NULL, &bytes, &len), LANCE_ERR_INVALID_ARGUMENT, "model");
    BAD_MSG(lance_vector_model_serialize(flat, NULL, &len), LANCE_ERR_INVALID_ARGUMENT, "out_bytes");
    BAD_MSG(lance_vector_model_serialize(flat, &bytes, NULL), LANCE_ERR_INVALID_ARGUMENT, "out_len");
    CHECK_OK(lance_vector_model_serialize(pq, &bytes, &len));
    BAD_MSG(lance_vector_model_parse(NULL, 16, &m), LANCE_ERR_INVALID_ARGUMENT, "bytes");
    BAD_MSG(lance_vector_model_parse(bytes, len, NULL), LANCE_ERR_INVALID_ARGUMENT, "out_model");
    BAD(lance_vector_model_parse(bytes, 0, &m), LANCE_ERR_INVALID_ARGUMENT);
    BAD(lance_vector_model_parse(bytes, HUGE, &m), LANCE_ERR_INVALID_ARGUMENT);
    const size_t cuts[] = {1, 8, 40, len / 2, len - 33, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        BAD_MSG(lance_vector_model_parse(bytes, cuts[i], &m), LANCE_ERR_INVALID_ARGUMENT, "model bytes");
    uint8_t* copy = malloc(len + 1);
    const size_t flips[] = {0, 9, 20, len / 2, len - 1};
    for (size_t i = 0; i < sizeof flips / sizeof flips[0]; i++) {
        memcpy(copy, bytes, len);
        copy[flips[i]] ^= 0x40;
        BAD_MSG(lance_vector_model_parse(copy, len, &m), LANCE_ERR_INVALID_ARGUMENT, "model bytes");
    }
    memcpy(copy, bytes, len);
    copy[len] = 0;
    BAD_MSG(lance_vector_model_parse(copy, len + 1, &m), LANCE_ERR_INVALID_ARGUMENT, "model bytes");
    CHECK(m == NULL);
    free(copy);
    lance_free_bytes(bytes);

    LanceVectorModelInfo info;
    BAD_VALUE(lance_vector_model_fingerprint(NULL), NULL, LANCE_ERR_INVALID_ARGUMENT);
    BAD_MSG(lance_vector_model_info(NULL, &info), LANCE_ERR_INVALID_ARGUMENT, "model");
    BAD_MSG(lance_vector_model_info(flat, NULL), LANCE_ERR_INVALID_ARGUMENT, "out");
    struct ArrowArray a;
    struct ArrowSchema s;
    BAD_MSG(lance_vector_model_centroids(NULL, &a, &s), LANCE_ERR_INVALID_ARGUMENT, "model");
    BAD_MSG(lance_vector_model_centroids(flat, NULL, &s), LANCE_ERR_INVALID_ARGUMENT, "out_array");
    BAD_MSG(lance_vector_model_centroids(flat, &a, NULL), LANCE_ERR_INVALID_ARGUMENT, "out_schema");
    BAD_MSG(lance_vector_model_codebook(NULL, &a, &s), LANCE_ERR_INVALID_ARGUMENT, "model");
    BAD_MSG(lance_vector_model_codebook(flat, &a, &s), LANCE_ERR_INVALID_ARGUMENT, "codebook");
    BAD_MSG(lance_vector_model_codebook(pq, NULL, &s), LANCE_ERR_INVALID_ARGUMENT, "out_array");
    lance_vector_model_free(NULL);
    release(&c, &cs);
    release(&cb, &cbs);
    release(&f64, &f64s);
    release(&with_null, &with_null_s);
}

/* ---- segment builders ---- */

/* A vector builder on ds's "vec" that must be made (for set_model's cases). */
static LanceIndexSegmentBuilder* builder(const LanceVectorIndexParams* p, const LanceIndexSegmentBuildOptions* o) {
    LanceIndexSegmentBuilder* b = vector_segment_builder_new(ds, "vec", NULL, p, o, NULL);
    CHECK(b != NULL);
    return b;
}

/* set_model refuses `model` for the builder made from `p` and `o`. */
static void model_refused(const LanceVectorIndexParams* p, const LanceIndexSegmentBuildOptions* o,
                          const LanceVectorModel* model, const char* needle) {
    LanceIndexSegmentBuilder* b = builder(p, o);
    BAD_MSG(lance_index_segment_builder_set_model(b, model), LANCE_ERR_INVALID_ARGUMENT, needle);
    lance_index_segment_builder_free(b);
}

static void test_vector_builder(void) {
    const uint32_t two[] = {0, 1}, missing[] = {0, 99}, twice[] = {2, 2};
    LanceVectorIndexParams p = flat_model_params;
    const LanceVectorIndexSegmentParams sp = vector_segment_params(&p);
    LanceIndexSegmentBuildOptions o = options(two, 2, NULL);
    const LanceIndexSegmentBuilder* none = NULL;
    const LanceErrorCode invalid = LANCE_ERR_INVALID_ARGUMENT;
    BAD_VALUE(lance_index_segment_builder_new_vector(NULL, "vec", NULL, &sp, &o), none, invalid);
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, NULL, NULL, &sp, &o), none, invalid);
    CHECK(tu_error_mentions("column"));
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "", NULL, &sp, &o), none, invalid);
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "nope", NULL, &sp, &o), none, LANCE_ERR_NOT_FOUND);
    CHECK(tu_error_mentions("nope"));
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "tag", NULL, &sp, &o), none, invalid);
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", "", &sp, &o), none, invalid);
    CHECK(tu_error_mentions("index_name"));
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, NULL, &o), none, invalid);
    CHECK(tu_error_mentions("params"));

    const int types[] = {0, 100, 108, -101};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        LanceVectorIndexSegmentParams bad = sp;
        bad.index_type = types[i];
        BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &bad, &o), none, invalid);
        CHECK(tu_error_mentions("index_type"));
    }
    const int metrics[] = {4, -1};
    for (size_t i = 0; i < 2; i++) {
        LanceVectorIndexSegmentParams bad = sp;
        bad.metric = metrics[i];
        BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &bad, &o), none, invalid);
        CHECK(tu_error_mentions("metric"));
    }
    LanceIndexSegmentBuildOptions bo = o;
    bo.mode = 3;
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &sp, &bo), none, invalid);
    CHECK(tu_error_mentions("options->mode = 3"));
    bo.mode = -1;
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &sp, &bo), none, invalid);
    bo = options(NULL, 2, NULL);
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &sp, &bo), none, invalid);
    CHECK(tu_error_mentions("fragment_ids"));
    bo = options(two, 0, NULL);
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &sp, &bo), none, invalid);
    CHECK(tu_error_mentions("fragment_ids"));
    bo = options(two, HUGE, NULL);
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &sp, &bo), none, invalid);
    bo = options(missing, 2, NULL);
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &sp, &bo), none, invalid);
    CHECK(tu_error_mentions("fragment_ids[1] = 99 is not a fragment of dataset version 1"));
    bo = options(twice, 2, NULL);
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &sp, &bo), none, invalid);
    CHECK(tu_error_mentions("twice"));
    /* A worker that must never train and has no model: PRECOMPUTED without
       the arrays is refused when made, a NULL model by set_model. */
    bo = options(two, 2, NULL);
    bo.mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &sp, &bo), none, invalid);
    CHECK(tu_error_mentions("LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED but no model"));
    model_refused(&p, &o, NULL, "model must not be NULL");

    /* Models that do not fit: handles given to set_model, Arrow arrays in
       the options. */
    struct ArrowArray c, thin;
    struct ArrowSchema cs, thin_s;
    CHECK_OK(lance_vector_model_centroids(flat, &c, &cs));
    CHECK_OK(lance_vector_model_centroids(narrow, &thin, &thin_s));
    const int32_t with_arrays[] = {LANCE_INDEX_SEGMENT_BUILD_AUTO, LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED};
    for (size_t i = 0; i < 2; i++) {
        bo = options(two, 2, NULL);
        bo.ivf_centroids = &c;
        bo.ivf_centroids_schema = &cs;
        bo.mode = with_arrays[i];
        model_refused(&p, &bo, flat, "already hold a model");
    }
    LanceVectorIndexParams cosine = p;
    cosine.metric = LANCE_METRIC_COSINE;
    model_refused(&cosine, &o, flat, "metric");
    model_refused(&p, &o, narrow, "dimension 8");
    bo = options(two, 2, NULL);
    bo.ivf_centroids = &thin;
    bo.ivf_centroids_schema = &thin_s;
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &sp, &bo), none, invalid);
    CHECK(tu_error_mentions("dimension 8"));
    LanceVectorIndexParams more = p;
    more.num_partitions = PARTS * 2;
    model_refused(&more, &o, flat, "num_partitions");
    LanceVectorIndexParams pq_params = pq_model_params;
    model_refused(&pq_params, &o, flat, "codebook");
    model_refused(&p, &o, pq, "PQ");
    LanceVectorIndexParams pq8 = pq_params;
    pq8.num_sub_vectors = 8;
    model_refused(&pq8, &o, pq, "sub-vectors");
    struct ArrowArray cb;
    struct ArrowSchema cbs;
    CHECK_OK(lance_vector_model_codebook(pq, &cb, &cbs));
    bo = options(two, 2, NULL);
    bo.pq_codebook = &cb;
    bo.pq_codebook_schema = &cbs;
    const LanceVectorIndexSegmentParams pq_sp = vector_segment_params(&pq_params);
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &pq_sp, &bo), none, invalid);
    CHECK(tu_error_mentions("ivf_centroids"));
    LanceVectorIndexParams sq = sk_params(LANCE_INDEX_IVF_SQ, PARTS, 0);
    sq.num_bits = 70000;
    const LanceVectorIndexSegmentParams sq_sp = vector_segment_params(&sq);
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &sq_sp, &o), none, invalid);
    CHECK(tu_error_mentions("num_bits"));
    /* set_model without a builder, and on a LOCAL_TRAIN builder (which
       trains); a scalar builder's is test_scalar_builder's. */
    BAD_MSG(lance_index_segment_builder_set_model(NULL, flat), invalid, "builder");
    LanceIndexSegmentBuildOptions local_train = options(two, 2, NULL);
    local_train.mode = LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN;
    model_refused(&p, &local_train, flat, "LOCAL_TRAIN");

    /* Item 4: HAMMING on float32 vectors; more partitions than rows, which
       an AUTO builder (a model may still be set) refuses when it executes,
       a LOCAL_TRAIN builder when it is made. */
    LanceVectorIndexSegmentParams hamming = sp;
    hamming.metric = LANCE_METRIC_HAMMING;
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &hamming, &o), none, invalid);
    CHECK(tu_error_mentions("metric HAMMING needs binary vectors (uint8 elements); column 'vec' holds"));
    LanceVectorIndexParams crowded = p;
    crowded.num_partitions = ROWS + 1;
    LanceIndexSegmentBuilder* b = builder(&crowded, NULL);
    uint8_t* bytes = NULL;
    size_t len = 0;
    BAD_MSG(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len), invalid,
            "num_partitions = 2001 is more than the 2000 rows to train on");
    lance_index_segment_builder_free(b);
    LanceIndexSegmentBuildOptions whole_local = options(NULL, 0, NULL);
    whole_local.mode = LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN;
    const LanceVectorIndexSegmentParams crowded_sp = vector_segment_params(&crowded);
    BAD_VALUE(lance_index_segment_builder_new_vector(ds, "vec", NULL, &crowded_sp, &whole_local), none, invalid);
    CHECK(tu_error_mentions("num_partitions = 2001 is more than the 2000 rows to train on"));
    release(&c, &cs);
    release(&thin, &thin_s);
    release(&cb, &cbs);
}

static void test_scalar_builder(void) {
    const uint32_t two[] = {0, 1}, missing[] = {99};
    const LanceIndexSegmentBuilder* none = NULL;
    const LanceErrorCode invalid = LANCE_ERR_INVALID_ARGUMENT;
    LanceIndexSegmentBuildOptions o = options(two, 2, NULL);
    const int32_t bitmap = LANCE_SCALAR_BITMAP;
    BAD_VALUE(lance_index_segment_builder_new_scalar(NULL, "id", NULL, bitmap, NULL, &o), none, invalid);
    BAD_VALUE(lance_index_segment_builder_new_scalar(ds, NULL, NULL, bitmap, NULL, &o), none, invalid);
    BAD_VALUE(lance_index_segment_builder_new_scalar(ds, "", NULL, bitmap, NULL, &o), none, invalid);
    BAD_VALUE(lance_index_segment_builder_new_scalar(ds, "nope", NULL, bitmap, NULL, &o), none, LANCE_ERR_NOT_FOUND);
    CHECK(tu_error_mentions("nope"));
    BAD_VALUE(lance_index_segment_builder_new_scalar(ds, "id", "", bitmap, NULL, &o), none, invalid);
    const int types[] = {0, 6, 7, 11, 13, -1};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        BAD_VALUE(lance_index_segment_builder_new_scalar(ds, "id", NULL, types[i], NULL, &o), none, invalid);
        CHECK(tu_error_mentions("index_type"));
    }
    BAD_VALUE(lance_index_segment_builder_new_scalar(ds, "id", NULL, bitmap, "{", &o), none, invalid);
    CHECK(tu_error_mentions("params_json"));
    BAD_VALUE(lance_index_segment_builder_new_scalar(ds, "id", NULL, bitmap, "[1, 2]", &o), none, invalid);
    CHECK(tu_error_mentions("params_json"));
    /* A vector model, in the options or set on the builder. */
    struct ArrowArray c;
    struct ArrowSchema cs;
    CHECK_OK(lance_vector_model_centroids(flat, &c, &cs));
    LanceIndexSegmentBuildOptions bo = options(two, 2, NULL);
    bo.ivf_centroids = &c;
    bo.ivf_centroids_schema = &cs;
    BAD_VALUE(lance_index_segment_builder_new_scalar(ds, "id", NULL, bitmap, NULL, &bo), none, invalid);
    CHECK(tu_error_mentions("vector model"));
    release(&c, &cs);
    LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_scalar(ds, "id", NULL, bitmap, NULL, &o);
    CHECK(b != NULL);
    BAD_MSG(lance_index_segment_builder_set_model(b, flat), invalid, "scalar");
    lance_index_segment_builder_free(b);
    bo = options(two, 2, NULL);
    bo.mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
    BAD_VALUE(lance_index_segment_builder_new_scalar(ds, "id", NULL, bitmap, NULL, &bo), none, invalid);
    bo.mode = 7;
    BAD_VALUE(lance_index_segment_builder_new_scalar(ds, "id", NULL, bitmap, NULL, &bo), none, invalid);
    uint8_t uuid[16];
    CHECK(uuid_random_v4(uuid) == 0);
    bo = options(two, 2, uuid);
    BAD_VALUE(lance_index_segment_builder_new_scalar(ds, "id", NULL, LANCE_SCALAR_BTREE, NULL, &bo), none,
              LANCE_ERR_NOT_SUPPORTED);
    CHECK(tu_error_mentions("index_uuid"));
    bo = options(two, HUGE, NULL);
    BAD_VALUE(lance_index_segment_builder_new_scalar(ds, "id", NULL, bitmap, NULL, &bo), none, invalid);
    bo = options(missing, 1, NULL);
    BAD_VALUE(lance_index_segment_builder_new_scalar(ds, "id", NULL, bitmap, NULL, &bo), none, invalid);
    CHECK(tu_error_mentions("99"));
}

/* ---- execution, progress and cancellation ---- */

static void test_execute_progress_cancel(void) {
    const uint32_t two[] = {0, 1};
    LanceVectorIndexParams p = flat_model_params;
    LanceIndexSegmentBuildOptions o = options(two, 2, NULL);
    uint8_t* bytes = NULL;
    size_t len = 0;
    const LanceErrorCode invalid = LANCE_ERR_INVALID_ARGUMENT;
    BAD_MSG(lance_index_segment_builder_execute_uncommitted(NULL, &bytes, &len), invalid, "builder");
    LanceIndexSegmentBuilder* b = vector_segment_builder_new(ds, "vec", NULL, &p, &o, flat);
    CHECK(b != NULL);
    BAD_MSG(lance_index_segment_builder_execute_uncommitted(b, NULL, &len), invalid, "out_metadata_bytes");
    BAD_MSG(lance_index_segment_builder_execute_uncommitted(b, &bytes, NULL), invalid, "out_metadata_len");
    BAD_MSG(lance_index_segment_builder_set_progress_callback(NULL, pk_ignore, NULL), invalid, "builder");
    /* A builder's progress is set, never cleared. */
    BAD_MSG(lance_index_segment_builder_set_progress_callback(b, NULL, NULL), invalid, "callback must not be NULL");
    BAD_MSG(lance_index_segment_builder_set_cancel_token(NULL, NULL), invalid, "builder");
    CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len));
    lance_free_bytes(bytes);
    BAD_MSG(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len), invalid, "already executed");
    BAD_MSG(lance_index_segment_builder_set_progress_callback(b, pk_ignore, NULL), invalid, "already executed");
    BAD_MSG(lance_index_segment_builder_set_model(b, flat), invalid, "already executed");
    LanceIndexBuildCancelToken* token = lance_index_build_cancel_token_new();
    BAD_MSG(lance_index_segment_builder_set_cancel_token(b, token), invalid, "already executed");
    lance_index_segment_builder_free(b);
    lance_index_segment_builder_free(NULL);

    BAD_MSG(lance_index_build_cancel(NULL), invalid, "token");
    BAD_VALUE(lance_index_build_cancel_requested(NULL), false, invalid);
    lance_index_build_cancel_token_free(NULL);
    /* A token cancelled before the build starts: cancelled at once, nothing written. */
    CHECK_OK(lance_index_build_cancel(token));
    b = vector_segment_builder_new(ds, "vec", NULL, &p, &o, flat);
    CHECK_OK(lance_index_segment_builder_set_cancel_token(b, token));
    BAD(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len), LANCE_ERR_CANCELLED);
    lance_index_segment_builder_free(b);

    /* The one-shot creations with a control. */
    LanceIndexBuildControl control = {pk_ignore, NULL, NULL};
    BAD_MSG(lance_dataset_create_vector_index_v2(NULL, "vec", NULL, &p, false,
                                                 &(LanceIndexCreateOptions){.control = &control}),
            invalid, "dataset");
    BAD_MSG(lance_dataset_create_vector_index_v2(ds, NULL, NULL, &p, false,
                                                 &(LanceIndexCreateOptions){.control = &control}),
            invalid, "column");
    BAD_MSG(lance_dataset_create_vector_index_v2(ds, "nope", NULL, &p, false,
                                                 &(LanceIndexCreateOptions){.control = &control}),
            LANCE_ERR_NOT_FOUND, "nope");
    BAD_MSG(lance_dataset_create_vector_index_v2(ds, "vec", NULL, NULL, false,
                                                 &(LanceIndexCreateOptions){.control = &control}),
            invalid, "params");
    BAD_MSG(
        lance_dataset_create_vector_index_v2(ds, "vec", "", &p, false, &(LanceIndexCreateOptions){.control = &control}),
        invalid, "index_name");
    LanceVectorIndexParams bad = p;
    bad.index_type = (LanceVectorIndexType)7;
    BAD_MSG(lance_dataset_create_vector_index_v2(ds, "vec", NULL, &bad, false,
                                                 &(LanceIndexCreateOptions){.control = &control}),
            invalid, "index_type");
    BAD_MSG(lance_dataset_create_scalar_index_v2(NULL, "id", NULL, LANCE_SCALAR_BTREE, NULL, false,
                                                 &(LanceIndexCreateOptions){.control = &control}),
            invalid, "dataset");
    BAD_MSG(lance_dataset_create_scalar_index_v2(ds, "id", NULL, (LanceScalarIndexType)11, NULL, false,
                                                 &(LanceIndexCreateOptions){.control = &control}),
            invalid, "index_type");
    BAD_MSG(lance_dataset_create_scalar_index_v2(ds, "id", NULL, LANCE_SCALAR_BTREE, "not json", false,
                                                 &(LanceIndexCreateOptions){.control = &control}),
            invalid, "params_json");
    control.cancel_token = token;
    BAD(lance_dataset_create_vector_index_v2(ds, "vec", NULL, &p, false,
                                             &(LanceIndexCreateOptions){.control = &control}),
        LANCE_ERR_CANCELLED);
    BAD(lance_dataset_create_scalar_index_v2(ds, "id", NULL, LANCE_SCALAR_BTREE, NULL, false,
                                             &(LanceIndexCreateOptions){.control = &control}),
        LANCE_ERR_CANCELLED);
    CHECK(lance_dataset_latest_version(ds) == 1 && lance_dataset_index_count(ds) == 0);
    lance_index_build_cancel_token_free(token);
}

/* ---- segment metadata ---- */

static void test_metadata(void) {
    size_t len = 0;
    uint8_t* bytes = segment(ds, LANCE_INDEX_IVF_FLAT, flat, first_half, 4, NULL, &len);
    LanceIndexSegmentMetadata* m = NULL;
    const LanceErrorCode invalid = LANCE_ERR_INVALID_ARGUMENT;
    BAD_MSG(lance_index_segment_metadata_parse(NULL, 4, &m), invalid, "bytes");
    BAD_MSG(lance_index_segment_metadata_parse(bytes, len, NULL), invalid, "out");
    BAD_MSG(lance_index_segment_metadata_parse(bytes, 0, &m), invalid, "empty");
    BAD_MSG(lance_index_segment_metadata_parse(NULL, 0, &m), invalid, "empty");
    BAD(lance_index_segment_metadata_parse(bytes, HUGE, &m), invalid);
    BAD(lance_index_segment_metadata_parse((const uint8_t*)"hello, world", 12, &m), invalid);
    BAD(lance_index_segment_metadata_parse(bytes, 1, &m), invalid);
    BAD(lance_index_segment_metadata_parse(bytes, len - 1, &m), invalid);
    /* A created_at beyond any calendar: the core's conversion panics on it;
       caught, it is bad input, and nothing reaches stderr. */
    uint8_t* far = malloc(len + 10);
    memcpy(far, bytes, len);
    const uint8_t created_at[10] = {0x40, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40}; /* field 8 = 2^62 */
    memcpy(far + len, created_at, sizeof created_at);
    BAD(lance_index_segment_metadata_parse(far, len + 10, &m), invalid);
    const uint8_t* far_ptrs[] = {far};
    size_t far_len = len + 10;
    BAD(commit_on(ds, "far_idx", "vec", far_ptrs, &far_len, 1, false), invalid);
    free(far);
    CHECK(m == NULL);

    CHECK_OK(lance_index_segment_metadata_parse(bytes, len, &m));
    uint8_t uuid[16];
    int64_t ms;
    bool present;
    int32_t fields[4];
    uint32_t fragment_ids[FRAGS];
    size_t n = 0;
    const char* path = NULL;
    uint64_t size = 0;
    const LanceIndexSegmentMetadata* none = NULL;
    BAD_MSG(lance_index_segment_metadata_uuid(none, uuid), invalid, "metadata");
    BAD_MSG(lance_index_segment_metadata_uuid(m, NULL), invalid, "out_uuid");
    BAD_VALUE(lance_index_segment_metadata_name(none), NULL, invalid);
    BAD_VALUE(lance_index_segment_metadata_index_type_name(none), NULL, invalid);
    BAD_VALUE(lance_index_segment_metadata_model_fingerprint(none), NULL, invalid);
    BAD_VALUE(lance_index_segment_metadata_dataset_version(none), 0, invalid);
    BAD_VALUE(lance_index_segment_metadata_index_version(none), -1, invalid);
    BAD_VALUE(lance_index_segment_metadata_index_type(none), -1, invalid);
    BAD_VALUE(lance_index_segment_metadata_index_details_type_url(none), NULL, invalid);
    BAD_VALUE(lance_index_segment_metadata_field_count(none), 0, invalid);
    BAD_VALUE(lance_index_segment_metadata_fragment_count(none), 0, invalid);
    BAD_MSG(lance_index_segment_metadata_created_at_ms(none, &ms, &present), invalid, "metadata");
    BAD_MSG(lance_index_segment_metadata_created_at_ms(m, NULL, &present), invalid, "out_ms");
    BAD_MSG(lance_index_segment_metadata_created_at_ms(m, &ms, NULL), invalid, "out_present");
    BAD_MSG(lance_index_segment_metadata_field_ids(none, fields, 4, &n), invalid, "metadata");
    BAD_MSG(lance_index_segment_metadata_field_ids(m, fields, 4, NULL), invalid, "out_count");
    n = 0;
    BAD_MSG(lance_index_segment_metadata_field_ids(m, fields, 0, &n), invalid, "capacity");
    CHECK(n == 1); /* the count is still reported */
    BAD_MSG(lance_index_segment_metadata_field_ids(m, NULL, 4, &n), invalid, "out_field_ids");
    BAD_MSG(lance_index_segment_metadata_fragment_ids(none, fragment_ids, FRAGS, &n), invalid, "metadata");
    BAD_MSG(lance_index_segment_metadata_fragment_ids(m, fragment_ids, FRAGS, NULL), invalid, "out_count");
    BAD_MSG(lance_index_segment_metadata_fragment_ids(m, fragment_ids, 3, &n), invalid, "capacity");
    CHECK(n == 4);
    BAD_MSG(lance_index_segment_metadata_fragment_ids(m, NULL, FRAGS, &n), invalid, "out_fragment_ids");
    BAD_VALUE(lance_index_segment_metadata_file_count(none), 0, invalid);
    uint64_t files = lance_index_segment_metadata_file_count(m);
    CHECK(files >= 1);
    BAD_MSG(lance_index_segment_metadata_file_at(none, 0, &path, &size), invalid, "metadata");
    BAD_MSG(lance_index_segment_metadata_file_at(m, (size_t)files, &path, &size), invalid, "out of range");
    BAD_MSG(lance_index_segment_metadata_file_at(m, HUGE, &path, &size), invalid, "out of range");
    BAD_MSG(lance_index_segment_metadata_file_at(m, 0, NULL, &size), invalid, "out_path");
    BAD_MSG(lance_index_segment_metadata_file_at(m, 0, &path, NULL), invalid, "out_size_bytes");
    lance_index_segment_metadata_free(m);
    lance_index_segment_metadata_free(NULL);
    lance_free_bytes(bytes);
}

/* ---- commit ---- */

static void test_commit_arguments(void) {
    char uri[600];
    LanceDataset* d = dk_fresh(dir, NULL, &data, ROWS / FRAGS, uri, sizeof uri);
    size_t lens[2];
    uint8_t* seg[2];
    seg[0] = segment(d, LANCE_INDEX_IVF_FLAT, flat, first_half, 4, NULL, &lens[0]);
    seg[1] = segment(d, LANCE_INDEX_IVF_FLAT, flat, second_half, 4, NULL, &lens[1]);
    const uint8_t* ptrs[2] = {seg[0], seg[1]};
    const LanceErrorCode invalid = LANCE_ERR_INVALID_ARGUMENT;
    LanceCommitIndexOptions o = {0};
    LanceCommitIndexResult r;
#define COMMIT_WITH(dataset, name, column, p, l, n) \
    lance_dataset_commit_index_segments_v2(dataset, name, column, p, l, n, &o, &r)
    BAD_MSG(COMMIT_WITH(NULL, "i", "vec", ptrs, lens, 2), invalid, "dataset");
    BAD_MSG(COMMIT_WITH(d, NULL, "vec", ptrs, lens, 2), invalid, "index_name");
    BAD_MSG(COMMIT_WITH(d, "", "vec", ptrs, lens, 2), invalid, "index_name");
    BAD_MSG(COMMIT_WITH(d, "\xff\xfe", "vec", ptrs, lens, 2), invalid, "UTF-8");
    BAD_MSG(COMMIT_WITH(d, "i", NULL, ptrs, lens, 2), invalid, "column");
    BAD_MSG(COMMIT_WITH(d, "i", "", ptrs, lens, 2), invalid, "column");
    BAD_MSG(COMMIT_WITH(d, "i", "nope", ptrs, lens, 2), LANCE_ERR_NOT_FOUND, "nope");
    BAD(COMMIT_WITH(d, "i", "id", ptrs, lens, 2), invalid); /* vector segments on a scalar column */
    BAD(COMMIT_WITH(d, "i", "vec", ptrs, lens, 0), LANCE_ERR_NO_SEGMENTS);
    BAD(COMMIT_WITH(d, "i", "vec", NULL, NULL, 0), LANCE_ERR_NO_SEGMENTS);
    BAD(COMMIT_WITH(d, "i", "vec", ptrs, lens, HUGE), invalid);
    BAD_MSG(COMMIT_WITH(d, "i", "vec", NULL, lens, 2), invalid, "segment_metadata_bytes");
    BAD_MSG(COMMIT_WITH(d, "i", "vec", ptrs, NULL, 2), invalid, "segment_metadata_lens");
    const uint8_t* with_null[2] = {seg[0], NULL};
    BAD_MSG(COMMIT_WITH(d, "i", "vec", with_null, lens, 2), invalid, "segment_metadata_bytes[1]");
    size_t bad_lens[2] = {lens[0], 0};
    BAD_MSG(COMMIT_WITH(d, "i", "vec", ptrs, bad_lens, 2), invalid, "segment_metadata_bytes[1]");
    bad_lens[1] = lens[1] - 1;
    BAD_MSG(COMMIT_WITH(d, "i", "vec", ptrs, bad_lens, 2), invalid, "segment_metadata_bytes[1]");
    bad_lens[1] = HUGE;
    BAD(COMMIT_WITH(d, "i", "vec", ptrs, bad_lens, 2), invalid);
    const uint8_t* garbage[2] = {seg[0], (const uint8_t*)"\x08\x96\x01garbage"};
    size_t garbage_lens[2] = {lens[0], 10};
    BAD_MSG(COMMIT_WITH(d, "i", "vec", garbage, garbage_lens, 2), invalid, "segment_metadata_bytes[1]");
    o.job_id = "\xc3\x28";
    BAD_MSG(COMMIT_WITH(d, "i", "vec", ptrs, lens, 2), invalid, "job_id");
    o.job_id = NULL;
    o.attempt_id = "\xe2\x82";
    BAD_MSG(COMMIT_WITH(d, "i", "vec", ptrs, lens, 2), invalid, "attempt_id");
    o.attempt_id = NULL;
#undef COMMIT_WITH
    /* With only replace set, and no result asked for. */
    BAD_MSG(commit_on(NULL, "i", "vec", ptrs, lens, 2, false), invalid, "dataset");
    BAD(commit_on(d, "i", "vec", ptrs, lens, 0, false), LANCE_ERR_NO_SEGMENTS);
    BAD(commit_on(d, "i", "vec", ptrs, lens, HUGE, true), invalid);
    BAD_MSG(commit_on(d, "i", "nope", ptrs, lens, 2, false), LANCE_ERR_NOT_FOUND, "nope");
    CHECK(lance_dataset_latest_version(d) == 1);
    /* Still committable after all of it. */
    CHECK_OK(commit_on(d, "i", "vec", ptrs, lens, 2, false));
    kk_check_recall_exact(d, &data, 4, PARTS);
    lance_free_bytes(seg[0]);
    lance_free_bytes(seg[1]);
    lance_dataset_close(d);
}

static void test_commit_refusals(void) {
    char uri[600];
    LanceDataset* d = dk_fresh(dir, NULL, &data, ROWS / FRAGS, uri, sizeof uri);
    const uint32_t middle[] = {3, 4};
    size_t len[8];
    uint8_t* s[8];
    s[0] = segment(d, LANCE_INDEX_IVF_FLAT, flat, first_half, 4, NULL, &len[0]);
    s[1] = segment(d, LANCE_INDEX_IVF_FLAT, flat, second_half, 4, NULL, &len[1]);
    s[2] = segment(d, LANCE_INDEX_IVF_FLAT, flat, middle, 2, NULL, &len[2]);       /* overlaps both */
    s[3] = segment(d, LANCE_INDEX_IVF_FLAT, other, second_half, 4, NULL, &len[3]); /* another model */
    s[4] = segment(d, LANCE_INDEX_IVF_FLAT, NULL, first_half, 4, NULL, &len[4]);   /* trained locally */
    s[5] = segment(d, LANCE_INDEX_IVF_FLAT, NULL, second_half, 4, NULL, &len[5]);  /* trained locally */
    s[6] = segment(d, LANCE_INDEX_IVF_FLAT, flat, first_half, 4, NULL, &len[6]);
    s[7] = segment(d, LANCE_INDEX_IVF_FLAT, flat, second_half, 4, NULL, &len[7]);
    char t0[UUID_HEX_DASHED_LEN + 1], t2[UUID_HEX_DASHED_LEN + 1];
    uuid_of(s[0], len[0], t0);
    uuid_of(s[2], len[2], t2);
    const char* f_flat = lance_vector_model_fingerprint(flat);
    const char* f_other = lance_vector_model_fingerprint(other);
#define PAIR(a, b) (const uint8_t* const[]){s[a], s[b]}, (const size_t[]){len[a], len[b]}, 2
    BAD_MSG(commit_on(d, "r", "vec", PAIR(0, 0), false), LANCE_ERR_DUPLICATE_SEGMENT, "segments 0 and 1");
    CHECK(tu_error_mentions(t0));
    BAD_MSG(commit_on(d, "r", "vec", PAIR(0, 2), false), LANCE_ERR_OVERLAPPING_SEGMENTS, "fragments [3]");
    CHECK(tu_error_mentions(t0) && tu_error_mentions(t2));
    BAD_MSG(commit_on(d, "r", "vec", PAIR(0, 3), false), LANCE_ERR_MODEL_MISMATCH, f_flat);
    CHECK(tu_error_mentions(f_other));
    BAD_MSG(commit_on(d, "r", "vec", PAIR(4, 5), false), LANCE_ERR_MODEL_MISMATCH, "trained independently");
    CHECK(lance_dataset_latest_version(d) == 1);

    /* Committed as "r"; then the refusals that depend on it. */
    CHECK_OK(commit_on(d, "r", "vec", PAIR(0, 1), false));
    CHECK(lance_dataset_latest_version(d) == 2);
    BAD_MSG(commit_on(d, "r", "vec", PAIR(6, 7), false), LANCE_ERR_INDEX, "already exists");
    BAD_MSG(commit_on(d, "r2", "vec", PAIR(0, 7), false), LANCE_ERR_DUPLICATE_SEGMENT, "already committed");
    BAD_MSG(commit_on(d, "r2", "vec", PAIR(0, 1), false), LANCE_ERR_DUPLICATE_SEGMENT, "already committed");
    CHECK(lance_dataset_latest_version(d) == 2);
    kk_check_recall_exact(d, &data, 4, PARTS);

    /* Stale: a fragment deleted since the build. */
    uint64_t deleted = 0;
    CHECK_OK(lance_dataset_delete(d, "id >= 1500 AND id < 1750", &deleted)); /* fragment 6 */
    CHECK(deleted == ROWS / FRAGS);
    BAD_MSG(commit_on(d, "r3", "vec", PAIR(6, 7), false), LANCE_ERR_STALE_SEGMENT, "fragments [6]");
    CHECK(lance_dataset_latest_version(d) == 3);
#undef PAIR
    /* Scalar segments take no job id. */
    LanceIndexSegmentBuildOptions so = options(first_half, 4, NULL);
    LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_scalar(d, "id", NULL, LANCE_SCALAR_BITMAP, NULL, &so);
    uint8_t* scalar = NULL;
    size_t scalar_len = 0;
    CHECK(b && lance_index_segment_builder_execute_uncommitted(b, &scalar, &scalar_len) == 0);
    lance_index_segment_builder_free(b);
    LanceCommitIndexOptions o = {0};
    o.job_id = "job";
    const uint8_t* sp[] = {scalar};
    BAD_MSG(lance_dataset_commit_index_segments_v2(d, "s", "id", sp, &scalar_len, 1, &o, NULL), LANCE_ERR_NOT_SUPPORTED,
            "job");
    CHECK(lance_dataset_latest_version(d) == 3);
    lance_free_bytes(scalar);
    for (int i = 0; i < 8; i++) lance_free_bytes(s[i]);
    lance_free_string(f_flat);
    lance_free_string(f_other);
    lance_dataset_close(d);
}

/* Item 2: the commit verifies each segment's files first. */
static void test_incomplete_segments(void) {
    char uri[600];
    LanceDataset* d = dk_fresh(dir, NULL, &data, ROWS / FRAGS, uri, sizeof uri);
    const uint32_t a[] = {0, 1}, b[] = {2, 3}, c[] = {4, 5}, e[] = {6, 7};
    size_t len[5];
    uint8_t* s[5];
    s[0] = segment(d, LANCE_INDEX_IVF_FLAT, flat, a, 2, NULL, &len[0]);
    s[1] = segment(d, LANCE_INDEX_IVF_FLAT, flat, b, 2, NULL, &len[1]);
    s[2] = segment(d, LANCE_INDEX_IVF_FLAT, flat, c, 2, NULL, &len[2]);
    s[3] = segment(d, LANCE_INDEX_IVF_FLAT, flat, e, 2, NULL, &len[3]);
    char text[4][UUID_HEX_DASHED_LEN + 1];
    for (int i = 0; i < 4; i++) uuid_of(s[i], len[i], text[i]);
    LanceIndexSegmentMetadata* m = NULL;
    const char* file = NULL;
    uint64_t size = 0;
    CHECK_OK(lance_index_segment_metadata_parse(s[0], len[0], &m));
    CHECK_OK(lance_index_segment_metadata_file_at(m, 0, &file, &size));
    char name[256];
    snprintf(name, sizeof name, "%s", file);
    lance_index_segment_metadata_free(m);
    char path[1200];

    /* A file deleted. */
    snprintf(path, sizeof path, "%s/_indices/%s/%s", uri, text[0], name);
    CHECK(unlink(path) == 0);
    const uint8_t* one[] = {s[0]};
    BAD_MSG(commit_on(d, "inc", "vec", one, &len[0], 1, false), LANCE_ERR_INCOMPLETE_SEGMENT, text[0]);
    CHECK(tu_error_mentions(name));
    /* A file of another size than recorded. */
    snprintf(path, sizeof path, "%s/_indices/%s/%s", uri, text[1], name);
    FILE* f = fopen(path, "ab");
    CHECK(f && fputc(0, f) == 0 && fclose(f) == 0);
    const uint8_t* grown[] = {s[1]};
    BAD_MSG(commit_on(d, "inc", "vec", grown, &len[1], 1, false), LANCE_ERR_INCOMPLETE_SEGMENT, text[1]);
    CHECK(tu_error_mentions(name));
    /* A UUID corrupted in transit: the bytes name a segment that is not there. */
    uint8_t u[16];
    CHECK(uuid_hex_parse(text[2], u) == 0);
    uint8_t* corrupt = malloc(len[2]);
    memcpy(corrupt, s[2], len[2]);
    uint8_t* at = memmem(corrupt, len[2], u, 16);
    CHECK(at != NULL);
    if (at) at[15] ^= 0x01;
    char corrupt_text[UUID_HEX_DASHED_LEN + 1];
    uuid_of(corrupt, len[2], corrupt_text);
    const uint8_t* bent[] = {corrupt};
    BAD_MSG(commit_on(d, "inc", "vec", bent, &len[2], 1, false), LANCE_ERR_INCOMPLETE_SEGMENT, corrupt_text);
    /* A cleanup with delete_unverified between the build and the commit. */
    CHECK_OK(lance_dataset_cleanup_old_versions(d, 0, true, NULL));
    const uint8_t* swept[] = {s[3]};
    BAD_MSG(commit_on(d, "inc", "vec", swept, &len[3], 1, false), LANCE_ERR_INCOMPLETE_SEGMENT, text[3]);
    /* In a set, one incomplete segment refuses the whole set. */
    s[4] = segment(d, LANCE_INDEX_IVF_FLAT, flat, a, 2, NULL, &len[4]);
    const uint8_t* mixed[] = {s[4], s[3]};
    size_t mixed_lens[] = {len[4], len[3]};
    BAD_MSG(commit_on(d, "inc", "vec", mixed, mixed_lens, 2, false), LANCE_ERR_INCOMPLETE_SEGMENT, text[3]);
    CHECK(lance_dataset_latest_version(d) == 1 && lance_dataset_index_count(d) == 0);
    /* The whole segment commits, and answers. */
    const uint8_t* whole[] = {s[4]};
    CHECK_OK(commit_on(d, "inc", "vec", whole, &len[4], 1, false));
    kk_check_recall_exact(d, &data, 4, PARTS);
    free(corrupt);
    for (int i = 0; i < 5; i++) lance_free_bytes(s[i]);
    lance_dataset_close(d);
}

/* Item 1: a build into the UUID of a committed segment, or of a directory
 * that exists, is refused and writes nothing. */
static void test_duplicate_uuid_build(void) {
    char uri[600];
    LanceDataset* d = dk_fresh(dir, NULL, &data, ROWS / FRAGS, uri, sizeof uri);
    uint8_t u0[16], u1[16], u2[16];
    CHECK(uuid_random_v4(u0) == 0 && uuid_random_v4(u1) == 0 && uuid_random_v4(u2) == 0);
    size_t len[3];
    uint8_t* s[3];
    s[0] = segment(d, LANCE_INDEX_IVF_FLAT, flat, first_half, 4, u0, &len[0]);
    s[1] = segment(d, LANCE_INDEX_IVF_FLAT, flat, second_half, 4, u1, &len[1]);
    CHECK_OK(commit_on(d, "dup", "vec", (const uint8_t* const*)s, len, 2, false));
    /* The committed files as recorded. */
    LanceIndexSegmentMetadata* m = NULL;
    CHECK_OK(lance_index_segment_metadata_parse(s[0], len[0], &m));
    char text[UUID_HEX_DASHED_LEN + 1];
    uuid_hex_format_dashed(u0, text);

    LanceVectorIndexParams p = flat_model_params;
    LanceIndexSegmentBuildOptions o = options(first_half, 4, u0);
    build_fails(d, &p, &o, flat, LANCE_ERR_DUPLICATE_SEGMENT); /* committed, same fragments */
    o = options(second_half, 4, u0);
    build_fails(d, &p, &o, flat, LANCE_ERR_DUPLICATE_SEGMENT); /* committed, other fragments */
    o = options(first_half, 4, u1);
    build_fails(d, &p, &o, NULL, LANCE_ERR_DUPLICATE_SEGMENT); /* trained locally */
    /* The model as Arrow arrays (PRECOMPUTED). */
    struct ArrowArray c;
    struct ArrowSchema cs;
    CHECK_OK(lance_vector_model_centroids(flat, &c, &cs));
    o.ivf_centroids = &c;
    o.ivf_centroids_schema = &cs;
    o.mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
    build_fails(d, &p, &o, NULL, LANCE_ERR_DUPLICATE_SEGMENT);
    release(&c, &cs);
    LanceIndexSegmentBuildOptions scalar = options(NULL, 0, u1);
    LanceIndexSegmentBuilder* b =
        lance_index_segment_builder_new_scalar(d, "id", NULL, LANCE_SCALAR_BITMAP, NULL, &scalar);
    CHECK(b != NULL);
    uint8_t* bytes = NULL;
    size_t n = 0;
    BAD(lance_index_segment_builder_execute_uncommitted(b, &bytes, &n), LANCE_ERR_DUPLICATE_SEGMENT);
    lance_index_segment_builder_free(b);
    /* Uncommitted, but its directory exists. */
    s[2] = segment(d, LANCE_INDEX_IVF_FLAT, flat, first_half, 4, u2, &len[2]);
    o = options(first_half, 4, u2);
    build_fails(d, &p, &o, flat, LANCE_ERR_DUPLICATE_SEGMENT);
    /* Committed in an older version only (replaced since), still on storage. */
    LanceCommitIndexOptions replace = {0};
    replace.replace = true;
    const uint8_t* newer[] = {s[2]};
    CHECK_OK(lance_dataset_commit_index_segments_v2(d, "dup", "vec", newer, &len[2], 1, &replace, NULL));
    o = options(first_half, 4, u0);
    build_fails(d, &p, &o, flat, LANCE_ERR_DUPLICATE_SEGMENT);

    /* The committed segment's files are as recorded, and the index answers. */
    for (uint64_t i = 0; i < lance_index_segment_metadata_file_count(m); i++) {
        const char* file = NULL;
        uint64_t size = 0;
        CHECK_OK(lance_index_segment_metadata_file_at(m, (size_t)i, &file, &size));
        char path[1200];
        snprintf(path, sizeof path, "%s/_indices/%s/%s", uri, text, file);
        CHECK(tu_file_size(path) == (int64_t)size);
    }
    CHECK(lance_dataset_latest_version(d) == 3);
    LanceDataset* at2 = lance_dataset_open(uri, NULL, 2);
    CHECK(at2 != NULL);
    kk_check_recall_exact(at2, &data, 4, PARTS);
    kk_check_recall_exact(d, &data, 4, PARTS);
    lance_dataset_close(at2);
    lance_index_segment_metadata_free(m);
    for (int i = 0; i < 3; i++) lance_free_bytes(s[i]);
    lance_dataset_close(d);
}

/* Item 5: one name, two columns.  Item 6: two index types in one commit. */
static void test_mixed_commits(void) {
    char uri[600];
    LanceDataset* d = dk_fresh(dir, NULL, &data, ROWS / FRAGS, uri, sizeof uri);
    CHECK_OK(lance_dataset_create_scalar_index(d, "tag", "shared", LANCE_SCALAR_BITMAP, NULL, false));
    uint64_t version = lance_dataset_version(d);
    size_t len[4];
    uint8_t* s[4];
    s[0] = segment(d, LANCE_INDEX_IVF_FLAT, flat, first_half, 4, NULL, &len[0]);
    s[1] = segment(d, LANCE_INDEX_IVF_FLAT, flat, second_half, 4, NULL, &len[1]);
    s[2] = segment(d, LANCE_INDEX_IVF_SQ, flat, second_half, 4, NULL, &len[2]);
    for (int replace = 0; replace < 2; replace++) {
        BAD_MSG(commit_on(d, "shared", "vec", (const uint8_t* const*)s, len, 2, replace != 0),
                LANCE_ERR_INVALID_ARGUMENT, "tag");
        CHECK(tu_error_mentions("vec"));
    }
    const uint8_t* types[] = {s[0], s[2]};
    size_t type_lens[] = {len[0], len[2]};
    char t0[UUID_HEX_DASHED_LEN + 1], t2[UUID_HEX_DASHED_LEN + 1];
    uuid_of(s[0], len[0], t0);
    uuid_of(s[2], len[2], t2);
    BAD_MSG(commit_on(d, "mixed", "vec", types, type_lens, 2, false), LANCE_ERR_INVALID_ARGUMENT, "IVF_FLAT");
    CHECK(tu_error_mentions("IVF_SQ") && tu_error_mentions(t0) && tu_error_mentions(t2));
    CHECK(lance_dataset_latest_version(d) == version);
    for (int i = 0; i < 3; i++) lance_free_bytes(s[i]);
    lance_dataset_close(d);
}

/* ---- planning, listing, cleanup, fragment ids ---- */

static void test_planning(void) {
    LanceFragmentPlan* plan = NULL;
    const LanceErrorCode invalid = LANCE_ERR_INVALID_ARGUMENT;
    BAD_MSG(lance_dataset_plan_fragment_groups(NULL, 2, &plan), invalid, "dataset");
    BAD_MSG(lance_dataset_plan_fragment_groups(ds, 2, NULL), invalid, "out_plan");
    BAD_MSG(lance_dataset_plan_fragment_groups(ds, 0, &plan), invalid, "group_count is 0");
    BAD_MSG(lance_dataset_plan_fragment_groups(ds, FRAGS + 1, &plan), invalid, "would be empty");
    BAD_MSG(lance_dataset_plan_fragment_groups(ds, HUGE, &plan), invalid, "would be empty");
    CHECK(plan == NULL);
    CHECK_OK(lance_dataset_plan_fragment_groups(ds, 2, &plan));
    const uint32_t* ids = NULL;
    size_t n = 0;
    uint64_t rows = 0;
    const LanceFragmentPlan* none = NULL;
    BAD_VALUE(lance_fragment_plan_group_count(none), 0, invalid);
    BAD_VALUE(lance_fragment_plan_dataset_version(none), 0, invalid);
    BAD_MSG(lance_fragment_plan_group(none, 0, &ids, &n, &rows), invalid, "plan");
    BAD_MSG(lance_fragment_plan_group(plan, 2, &ids, &n, &rows), invalid, "out of range");
    BAD_MSG(lance_fragment_plan_group(plan, HUGE, &ids, &n, &rows), invalid, "out of range");
    BAD_MSG(lance_fragment_plan_group(plan, 0, NULL, &n, &rows), invalid, "out_fragment_ids");
    BAD_MSG(lance_fragment_plan_group(plan, 0, &ids, NULL, &rows), invalid, "out_fragment_count");
    lance_fragment_plan_free(plan);
    lance_fragment_plan_free(NULL);
}

static void test_listing_and_cleanup(void) {
    const LanceErrorCode invalid = LANCE_ERR_INVALID_ARGUMENT;
    BAD_VALUE(lance_dataset_index_segments_json(NULL), NULL, invalid);
    BAD_VALUE(lance_dataset_index_coverage_json(NULL, "x"), NULL, invalid);
    BAD_VALUE(lance_dataset_index_coverage_json(ds, NULL), NULL, invalid);
    CHECK(tu_error_mentions("index_name"));
    BAD_VALUE(lance_dataset_index_coverage_json(ds, ""), NULL, invalid);
    BAD_VALUE(lance_dataset_index_coverage_json(ds, "nope"), NULL, LANCE_ERR_NOT_FOUND);
    CHECK(tu_error_mentions("nope"));
    LanceCleanupStats stats;
    BAD_MSG(lance_dataset_cleanup_old_versions(NULL, 0, true, &stats), invalid, "dataset");
    BAD_MSG(lance_dataset_cleanup_old_versions(NULL, 0, false, NULL), invalid, "dataset");

    /* Item 8: fragment ids into a bounded buffer. */
    uint64_t ids[FRAGS + 2];
    size_t count = 0;
    BAD_MSG(lance_dataset_fragment_ids_bounded(NULL, ids, FRAGS, &count), invalid, "dataset");
    BAD_MSG(lance_dataset_fragment_ids_bounded(ds, ids, FRAGS, NULL), invalid, "out_count");
    for (int i = 0; i < FRAGS + 2; i++) ids[i] = 12345;
    BAD(lance_dataset_fragment_ids_bounded(ds, ids, FRAGS - 1, &count), invalid);
    CHECK(count == FRAGS && ids[0] == 12345);
    BAD(lance_dataset_fragment_ids_bounded(ds, NULL, FRAGS, &count), invalid);
    count = 0;
    CHECK_OK(lance_dataset_fragment_ids_bounded(ds, NULL, 0, &count));
    CHECK(count == FRAGS);
    CHECK_OK(lance_dataset_fragment_ids_bounded(ds, ids, FRAGS + 2, &count));
    CHECK(count == FRAGS && ids[0] == 0 && ids[FRAGS - 1] == FRAGS - 1 && ids[FRAGS] == 12345);
}

/* ---- a panic in the Lance core, caught at the boundary ---- */

/* A stream whose one batch is a struct array with no children while its
   schema declares one column: Arrow's import in the core asserts on it (a
   panic, not an error), which the library must report as LANCE_ERR_PANIC. */
static struct ArrowSchema panic_child;
static struct ArrowSchema* panic_children[1];
static int panic_batches;
static void panic_release_schema(struct ArrowSchema* s) { s->release = NULL; }
static void panic_release_array(struct ArrowArray* a) { a->release = NULL; }
static void panic_release_stream(struct ArrowArrayStream* s) { s->release = NULL; }
static const char* panic_last_error(struct ArrowArrayStream* s) {
    (void)s;
    return "";
}
static int panic_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
    (void)s;
    memset(&panic_child, 0, sizeof panic_child);
    panic_child.format = "l";
    panic_child.name = "id";
    panic_child.release = panic_release_schema;
    panic_children[0] = &panic_child;
    memset(out, 0, sizeof *out);
    out->format = "+s";
    out->name = "";
    out->n_children = 1;
    out->children = panic_children;
    out->release = panic_release_schema;
    return 0;
}
static int panic_get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
    (void)s;
    static const void* buffers[1] = {NULL};
    memset(out, 0, sizeof *out);
    if (panic_batches++ > 0) return 0; /* end of stream */
    out->length = 3;
    out->n_buffers = 1;
    out->buffers = buffers;
    out->release = panic_release_array;
    return 0;
}

static void test_core_panic(void) {
    char uri[600];
    snprintf(uri, sizeof uri, "%s/panic%d.lance", dir, panic_seq++);
    struct ArrowArrayStream stream = {panic_get_schema, panic_get_next, panic_last_error, panic_release_stream, NULL};
    struct ArrowSchema schema;
    panic_get_schema(&stream, &schema);
    LanceDataset* out = NULL;
    cases++;
    CHECK_ERR(lance_dataset_write(uri, &schema, &stream, LANCE_WRITE_CREATE, NULL, &out), LANCE_ERR_PANIC);
    CHECK(tu_error_mentions("panic"));
    CHECK(out == NULL);
    CHECK(stream.release == NULL); /* consumed on this path too */
    /* The host and the library carry on: the shared dataset still reads. */
    CHECK(lance_dataset_count_rows(ds) == ROWS);
    CHECK(lance_last_error_code() == LANCE_OK);
}

int main(void) {
    verbose = getenv("LANCE_BAD_INPUT_VERBOSE") != NULL;
    data = tu_make_data(ROWS, DIM, 8, 0.5f, 29);
    dir = tu_temp_dir("bad-input");
    /* Everything the library might print on stderr is captured. */
    char capture[700];
    snprintf(capture, sizeof capture, "%s/stderr.txt", dir);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(capture, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);

    char uri[600];
    ds = dk_fresh(dir, NULL, &data, ROWS / FRAGS, uri, sizeof uri);
    flat = sk_train(ds, &flat_model_params, NULL, 0);
    pq = sk_train(ds, &pq_model_params, NULL, 0);
    other = sk_train(ds, &flat_model_params, first_half, 4);
    {
        TuData eight = tu_make_data(ROWS, 8, 4, 0.5f, 31);
        char narrow_uri[700];
        snprintf(narrow_uri, sizeof narrow_uri, "%s/narrow.lance", dir);
        LanceDataset* nd = tu_write(narrow_uri, &eight, 0, ROWS, LANCE_WRITE_CREATE, ROWS / FRAGS);
        narrow = sk_train(nd, &flat_model_params, NULL, 0);
        lance_dataset_close(nd);
        tu_free_data(&eight);
    }
    RUN(test_trainers);
    RUN(test_model_functions);
    RUN(test_vector_builder);
    RUN(test_scalar_builder);
    RUN(test_execute_progress_cancel);
    RUN(test_metadata);
    RUN(test_commit_arguments);
    RUN(test_commit_refusals);
    RUN(test_incomplete_segments);
    RUN(test_duplicate_uuid_build);
    RUN(test_mixed_commits);
    RUN(test_planning);
    RUN(test_listing_and_cleanup);
    RUN(test_core_panic);
    CHECK(lance_dataset_latest_version(ds) == 1);

    /* Item 7 (issue items 8, 9): nothing of the library's reached stderr. */
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    size_t len = 0;
    char* text = (char*)read_whole_file(capture, &len);
    CHECK(text != NULL);
    if (text && len) fprintf(stderr, "%s", text);
    CHECK(text && !strstr(text, "panicked") && !strstr(text, ".rs:"));
    free(text);

    printf("%d bad inputs catalogued\n", cases);
    lance_vector_model_free(flat);
    lance_vector_model_free(pq);
    lance_vector_model_free(other);
    lance_vector_model_free(narrow);
    lance_dataset_close(ds);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_bad_input");
}
