/* Shared vector models (lance.h "Distributed index builds: shared
 * models"): the trainers (this library's and upstream's forms) and their
 * output shapes, models made from Arrow arrays, what a model holds, its
 * byte form (a round trip gives the same bytes, the same arrays and the
 * same fingerprint; truncated or corrupted bytes are refused), fingerprint
 * stability and sensitivity, the index type a model records, and every
 * refusal with its exact code. */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "files.h"
#include "segment_kit.h"
#include "test_util.h"
#include "../fuzz/mutate.h" /* fz_sha256(): the seal of model bytes */

#define ROWS 4000
#define DIM 32
#define FRAGS 8

static TuFixture fixture;
static LanceDataset* ds; /* fixture.ds */

static void test_training_functions(void) {
    struct ArrowArray cent, book;
    struct ArrowSchema cent_s, book_s;
    CHECK_OK(lance_index_train_ivf_model(ds, "vec", 4, LANCE_METRIC_L2, NULL, 0, &cent, &cent_s));
    CHECK(strcmp(cent_s.format, "+w:32") == 0 && cent.length == 4);
    /* Upstream's codebook: rows of one sub-vector (32 / 4), 4 x 256 of them. */
    CHECK_OK(lance_index_train_pq_model(ds, "vec", 4, 8, LANCE_METRIC_L2, NULL, 0, &cent, &cent_s, &book, &book_s));
    CHECK(strcmp(book_s.format, "+w:8") == 0 && book.length == 1024);

    /* Arrow arrays trained elsewhere make a model too, and a sliced centroid
       array is read from its offset: the fingerprint matches the unsliced copy. */
    LanceVectorModel* m = NULL;
    CHECK_OK(lance_vector_model_from_arrow(LANCE_METRIC_L2, &cent, &cent_s, 4, 8, &book, &book_s, &m));
    LanceVectorModel* sliced_model = NULL;
    struct ArrowArray cent2;
    struct ArrowSchema cent2_s;
    CHECK_OK(lance_vector_model_centroids(m, &cent2, &cent2_s));
    cent2.offset = 1;
    cent2.length = 3;
    const float* all = (const float*)cent.children[0]->buffers[1];
    struct ArrowArray three;
    struct ArrowSchema three_s;
    tu_f32_list(all + DIM, 3, DIM, -1, "f", &three, &three_s);
    LanceVectorModel* three_model = NULL;
    CHECK_OK(lance_vector_model_from_arrow(LANCE_METRIC_L2, &cent2, &cent2_s, 0, 0, NULL, NULL, &sliced_model));
    CHECK_OK(lance_vector_model_from_arrow(LANCE_METRIC_L2, &three, &three_s, 0, 0, NULL, NULL, &three_model));
    const char* f1 = lance_vector_model_fingerprint(sliced_model);
    const char* f2 = lance_vector_model_fingerprint(three_model);
    CHECK(f1 && f2 && strcmp(f1, f2) == 0);
    lance_free_string(f1);
    lance_free_string(f2);
    LanceVectorModelInfo info;
    CHECK_OK(lance_vector_model_info(sliced_model, &info));
    CHECK(info.num_partitions == 3 && !info.has_pq_codebook);
    struct ArrowArray tmp;
    struct ArrowSchema tmp_s;
    CHECK_ERR(lance_vector_model_codebook(sliced_model, &tmp, &tmp_s), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_OK(lance_vector_model_codebook(m, &tmp, &tmp_s));
    CHECK(tmp.length == 256);
    tmp.release(&tmp);
    tmp_s.release(&tmp_s);
    lance_vector_model_free(sliced_model);
    lance_vector_model_free(three_model);
    three.release(&three);
    three_s.release(&three_s);
    cent2.release(&cent2);
    cent2_s.release(&cent2_s);

    /* A null vector, a wrong element type, a wrong codebook size. */
    struct ArrowArray bad;
    struct ArrowSchema bad_s;
    LanceVectorModel* none = NULL;
    tu_f32_list(all, 4, DIM, 2, "f", &bad, &bad_s);
    CHECK_ERR(lance_vector_model_from_arrow(LANCE_METRIC_L2, &bad, &bad_s, 0, 0, NULL, NULL, &none),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("null"));
    bad.release(&bad);
    bad_s.release(&bad_s);
    tu_f32_list(all, 4, DIM, -1, "g", &bad, &bad_s);
    CHECK_ERR(lance_vector_model_from_arrow(LANCE_METRIC_L2, &bad, &bad_s, 0, 0, NULL, NULL, &none),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("float32"));
    CHECK_ERR(lance_vector_model_from_arrow(LANCE_METRIC_L2, &cent, &cent_s, 4, 8, &bad, &bad_s, &none),
              LANCE_ERR_INVALID_ARGUMENT);
    bad.release(&bad);
    bad_s.release(&bad_s);
    CHECK_ERR(lance_vector_model_from_arrow(LANCE_METRIC_L2, &cent, &cent_s, 4, 7, &book, &book_s, &none),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("codebook"));
    CHECK_ERR(lance_vector_model_from_arrow((LanceMetricType)8, &cent, &cent_s, 0, 0, NULL, NULL, &none),
              LANCE_ERR_INVALID_ARGUMENT);

    /* Training errors. */
    CHECK_ERR(lance_index_train_ivf_model(ds, "vec", 0, LANCE_METRIC_L2, NULL, 0, &tmp, &tmp_s),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_index_train_ivf_model(ds, "nope", 4, LANCE_METRIC_L2, NULL, 0, &tmp, &tmp_s), LANCE_ERR_NOT_FOUND);
    uint32_t bad_frags[] = {1, 42};
    CHECK_ERR(lance_index_train_ivf_model(ds, "vec", 4, LANCE_METRIC_L2, bad_frags, 2, &tmp, &tmp_s),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("fragment_ids[1] = 42"));
    CHECK_ERR(lance_index_train_pq_model(ds, "vec", 5, 8, LANCE_METRIC_L2, NULL, 0, &cent, &cent_s, &tmp, &tmp_s),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("num_sub_vectors = 5"));

    lance_vector_model_free(m);
    cent.release(&cent);
    cent_s.release(&cent_s);
    book.release(&book);
    book_s.release(&book_s);
}

static void test_model_bytes_errors(void) {
    LanceVectorModel* m = NULL;
    uint8_t garbage[64] = {1, 2, 3};
    CHECK_ERR(lance_vector_model_parse(garbage, sizeof garbage, &m), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_vector_model_parse(NULL, 0, &m), LANCE_ERR_INVALID_ARGUMENT);
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 2;
    CHECK_OK(lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &m));
    uint8_t* bytes;
    size_t len;
    CHECK_OK(lance_vector_model_serialize(m, &bytes, &len));
    LanceVectorModel* back = NULL;
    CHECK_ERR(lance_vector_model_parse(bytes, len - 1, &back), LANCE_ERR_INVALID_ARGUMENT);
    bytes[20] ^= 0x55;
    CHECK_ERR(lance_vector_model_parse(bytes, len, &back), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("checksum"));
    CHECK(back == NULL);
    lance_free_bytes(bytes);
    lance_vector_model_free(m);
    CHECK(lance_vector_model_fingerprint(NULL) == NULL && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_vector_model_serialize(NULL, &bytes, &len), LANCE_ERR_INVALID_ARGUMENT);
    lance_vector_model_free(NULL);
}

/* ---- byte form and fingerprints ---- */

/* The float32 values of a FixedSizeList<float32> array (from its offset). */
static const float* list_values(const struct ArrowArray* a, const struct ArrowSchema* s, int64_t* out_count) {
    int64_t width = atoll(s->format + 3);
    *out_count = a->length * width;
    return (const float*)a->children[0]->buffers[1] + (a->children[0]->offset + a->offset * width);
}

/* Both arrays hold the same FixedSizeList<float32> values, bit for bit. */
static int same_list(const struct ArrowArray* a, const struct ArrowSchema* as, const struct ArrowArray* b,
                     const struct ArrowSchema* bs) {
    if (strcmp(as->format, bs->format) != 0 || a->length != b->length) return 0;
    int64_t na, nb;
    const float* va = list_values(a, as, &na);
    const float* vb = list_values(b, bs, &nb);
    return na == nb && memcmp(va, vb, sizeof(float) * (size_t)na) == 0;
}

static int is_fingerprint(const char* fp) {
    if (!fp || strlen(fp) != 64) return 0;
    for (int i = 0; i < 64; i++)
        if (!isxdigit((unsigned char)fp[i]) || isupper((unsigned char)fp[i])) return 0;
    return 1;
}

/* The fingerprints of two models are equal (want_same) or differ. */
static void check_fingerprints(const LanceVectorModel* a, const LanceVectorModel* b, int want_same) {
    char* fa = lance_vector_model_fingerprint(a);
    char* fb = lance_vector_model_fingerprint(b);
    CHECK(is_fingerprint(fa) && is_fingerprint(fb));
    CHECK(fa && fb && (strcmp(fa, fb) == 0) == want_same);
    lance_free_string(fa);
    lance_free_string(fb);
}

static void test_round_trip(void) {
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_PQ;
    p.num_partitions = 6;
    p.num_sub_vectors = 8;
    LanceVectorModel* model = NULL;
    const uint32_t sample[] = {2, 5};
    CHECK_OK(lance_vector_model_train(ds, "vec", &p, sample, 2, NULL, &model));
    if (!model) return;
    LanceVectorModelInfo info;
    memset(&info, 0xff, sizeof info);
    CHECK_OK(lance_vector_model_info(model, &info));
    CHECK(info.metric == LANCE_METRIC_L2 && info.dimension == DIM && info.num_partitions == 6);
    CHECK(info.has_pq_codebook && info.num_sub_vectors == 8 && info.num_bits == 8);

    /* The fingerprint is 64 lower-case hex digits and the same at every call. */
    check_fingerprints(model, model, 1);

    /* Serialized and parsed: the same information, arrays and fingerprint,
       and serialized again, the same bytes. */
    uint8_t* bytes = NULL;
    size_t len = 0;
    CHECK_OK(lance_vector_model_serialize(model, &bytes, &len));
    CHECK(bytes != NULL && len > (size_t)(6 * DIM + 256 * DIM) * sizeof(float));
    LanceVectorModel* parsed = NULL;
    CHECK_OK(lance_vector_model_parse(bytes, len, &parsed));
    if (!parsed) return;
    LanceVectorModelInfo again;
    memset(&again, 0, sizeof again);
    CHECK_OK(lance_vector_model_info(parsed, &again));
    CHECK(again.metric == info.metric && again.dimension == info.dimension &&
          again.num_partitions == info.num_partitions && again.has_pq_codebook == info.has_pq_codebook &&
          again.num_sub_vectors == info.num_sub_vectors && again.num_bits == info.num_bits);
    check_fingerprints(model, parsed, 1);
    uint8_t* bytes2 = NULL;
    size_t len2 = 0;
    CHECK_OK(lance_vector_model_serialize(parsed, &bytes2, &len2));
    CHECK(len2 == len && bytes2 && memcmp(bytes, bytes2, len) == 0);

    struct ArrowArray c1, c2, b1, b2;
    struct ArrowSchema c1s, c2s, b1s, b2s;
    CHECK_OK(lance_vector_model_centroids(model, &c1, &c1s));
    CHECK_OK(lance_vector_model_centroids(parsed, &c2, &c2s));
    CHECK(strcmp(c1s.format, "+w:32") == 0 && c1.length == 6);
    CHECK(same_list(&c1, &c1s, &c2, &c2s));
    CHECK_OK(lance_vector_model_codebook(model, &b1, &b1s));
    CHECK_OK(lance_vector_model_codebook(parsed, &b2, &b2s));
    CHECK(strcmp(b1s.format, "+w:32") == 0 && b1.length == 256);
    CHECK(same_list(&b1, &b1s, &b2, &b2s));

    /* The same arrays through lance_vector_model_from_arrow(): the same
       model, the same fingerprint; another metric, or one centroid value
       changed, another fingerprint. */
    LanceVectorModel* rebuilt = NULL;
    CHECK_OK(lance_vector_model_from_arrow(LANCE_METRIC_L2, &c1, &c1s, 8, 8, &b1, &b1s, &rebuilt));
    check_fingerprints(model, rebuilt, 1);
    LanceVectorModel* cosine = NULL;
    CHECK_OK(lance_vector_model_from_arrow(LANCE_METRIC_COSINE, &c1, &c1s, 8, 8, &b1, &b1s, &cosine));
    check_fingerprints(model, cosine, 0);
    int64_t n = 0;
    float* changed = malloc(sizeof(float) * 6 * DIM);
    memcpy(changed, list_values(&c1, &c1s, &n), sizeof(float) * 6 * DIM);
    changed[3 * DIM + 7] += 0.5f;
    struct ArrowArray cc;
    struct ArrowSchema ccs;
    tu_f32_list(changed, 6, DIM, -1, "f", &cc, &ccs);
    LanceVectorModel* other = NULL;
    CHECK_OK(lance_vector_model_from_arrow(LANCE_METRIC_L2, &cc, &ccs, 8, 8, &b1, &b1s, &other));
    check_fingerprints(model, other, 0);
    /* Without the codebook: an IVF-only model, another fingerprint. */
    LanceVectorModel* ivf_only = NULL;
    CHECK_OK(lance_vector_model_from_arrow(LANCE_METRIC_L2, &c1, &c1s, 0, 0, NULL, NULL, &ivf_only));
    memset(&again, 0xff, sizeof again);
    CHECK_OK(lance_vector_model_info(ivf_only, &again));
    CHECK(again.num_partitions == 6 && again.dimension == DIM && !again.has_pq_codebook);
    CHECK(again.num_sub_vectors == 0 && again.num_bits == 0);
    check_fingerprints(model, ivf_only, 0);

    free(changed);
    cc.release(&cc);
    ccs.release(&ccs);
    c1.release(&c1);
    c1s.release(&c1s);
    c2.release(&c2);
    c2s.release(&c2s);
    b1.release(&b1);
    b1s.release(&b1s);
    b2.release(&b2);
    b2s.release(&b2s);
    lance_vector_model_free(ivf_only);
    lance_vector_model_free(other);
    lance_vector_model_free(cosine);
    lance_vector_model_free(rebuilt);
    lance_vector_model_free(parsed);
    lance_vector_model_free(model);
    lance_free_bytes(bytes);
    lance_free_bytes(bytes2);
}

/* ---- upstream's trainers ---- */

static void test_upstream_trainers(void) {
    struct ArrowArray cent, book;
    struct ArrowSchema cent_s, book_s;
    CHECK_OK(lance_index_train_ivf_model(ds, "vec", 4, LANCE_METRIC_L2, NULL, 0, &cent, &cent_s));
    CHECK(strcmp(cent_s.format, "+w:32") == 0 && cent.length == 4);
    /* The codebook in upstream's shape: [dim / num_sub_vectors] per row,
       num_sub_vectors * 2^num_bits rows. */
    CHECK_OK(lance_index_train_pq_model(ds, "vec", 8, 8, LANCE_METRIC_L2, NULL, 0, &cent, &cent_s, &book, &book_s));
    CHECK(strcmp(book_s.format, "+w:4") == 0 && book.length == 8 * 256);
    CHECK(cent.release != NULL); /* borrowed, never released */
    book.release(&book);
    book_s.release(&book_s);
    const uint32_t fragment_ids[] = {0, 7};
    CHECK_OK(
        lance_index_train_pq_model(ds, "vec", 4, 4, LANCE_METRIC_L2, fragment_ids, 2, &cent, &cent_s, &book, &book_s));
    CHECK(strcmp(book_s.format, "+w:8") == 0 && book.length == 4 * 16);
    book.release(&book);
    book_s.release(&book_s);

    /* Refusals, each with its code. */
    struct ArrowArray tmp;
    struct ArrowSchema tmp_s;
    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    CHECK_ERR(lance_index_train_ivf_model(ds, "vec", 4, 99, NULL, 0, &tmp, &tmp_s), IA);
    CHECK_ERR(lance_index_train_ivf_model(ds, "vec", 0, LANCE_METRIC_L2, NULL, 0, &tmp, &tmp_s), IA);
    CHECK_ERR(lance_index_train_ivf_model(ds, "nope", 4, LANCE_METRIC_L2, NULL, 0, &tmp, &tmp_s), LANCE_ERR_NOT_FOUND);
    CHECK_ERR(lance_index_train_ivf_model(NULL, "vec", 4, LANCE_METRIC_L2, NULL, 0, &tmp, &tmp_s), IA);
    CHECK_ERR(lance_index_train_pq_model(ds, "vec", 0, 8, LANCE_METRIC_L2, NULL, 0, &cent, &cent_s, &tmp, &tmp_s), IA);
    CHECK_ERR(lance_index_train_pq_model(ds, "vec", 5, 8, LANCE_METRIC_L2, NULL, 0, &cent, &cent_s, &tmp, &tmp_s), IA);
    CHECK_ERR(lance_index_train_pq_model(ds, "vec", 8, 5, LANCE_METRIC_L2, NULL, 0, &cent, &cent_s, &tmp, &tmp_s), IA);
    CHECK_ERR(lance_index_train_pq_model(ds, "vec", 8, 8, 99, NULL, 0, &cent, &cent_s, &tmp, &tmp_s), IA);
    CHECK_ERR(lance_index_train_pq_model(ds, "vec", 8, 8, LANCE_METRIC_L2, NULL, 0, NULL, &cent_s, &tmp, &tmp_s), IA);
    cent.release(&cent);
    cent_s.release(&cent_s);
}

/* ---- refusals of the model functions ---- */

static void test_refusals(void) {
    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 4;
    LanceVectorModel* none = NULL;
    CHECK_ERR(lance_vector_model_train(NULL, "vec", &p, NULL, 0, NULL, &none), IA);
    CHECK_ERR(lance_vector_model_train(ds, NULL, &p, NULL, 0, NULL, &none), IA);
    CHECK_ERR(lance_vector_model_train(ds, "vec", NULL, NULL, 0, NULL, &none), IA);
    CHECK_ERR(lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, NULL), IA);
    CHECK_ERR(lance_vector_model_train(ds, "nope", &p, NULL, 0, NULL, &none), LANCE_ERR_NOT_FOUND);
    const uint32_t twice[] = {1, 1};
    CHECK_ERR(lance_vector_model_train(ds, "vec", &p, twice, 2, NULL, &none), IA);
    const uint32_t some[] = {1};
    CHECK_ERR(lance_vector_model_train(ds, "vec", &p, some, 0, NULL, &none), IA);
    LanceVectorIndexParams bad = p;
    bad.index_type = (LanceVectorIndexType)99;
    CHECK_ERR(lance_vector_model_train(ds, "vec", &bad, NULL, 0, NULL, &none), IA);
    bad = p;
    bad.metric = (LanceMetricType)9;
    CHECK_ERR(lance_vector_model_train(ds, "vec", &bad, NULL, 0, NULL, &none), IA);
    bad = p;
    bad.index_type = LANCE_INDEX_IVF_PQ;
    bad.num_sub_vectors = 5; /* does not divide 32 */
    CHECK_ERR(lance_vector_model_train(ds, "vec", &bad, NULL, 0, NULL, &none), IA);

    /* Each trainer names its own parameter: upstream's IVF trainer takes
       `fragment_ids`, this library's `sample_fragment_ids`. */
    struct ArrowArray ca;
    struct ArrowSchema cs;
    CHECK_ERR(lance_index_train_ivf_model(ds, "vec", 4, LANCE_METRIC_L2, some, 0, &ca, &cs), IA);
    const TuError* e = tu_last_error();
    CHECK(e->message && strstr(e->message, "fragment_ids") && !strstr(e->message, "sample_fragment_ids"));
    CHECK_ERR(lance_vector_model_train(ds, "vec", &p, some, 0, NULL, &none), IA);
    e = tu_last_error();
    CHECK(e->message && strstr(e->message, "sample_fragment_ids"));

    /* NULL models and out pointers. */
    LanceVectorModelInfo info;
    struct ArrowArray a;
    struct ArrowSchema s;
    CHECK_ERR(lance_vector_model_info(NULL, &info), IA);
    CHECK_ERR(lance_vector_model_centroids(NULL, &a, &s), IA);
    CHECK_ERR(lance_vector_model_codebook(NULL, &a, &s), IA);
    CHECK_OK(lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &none));
    CHECK_ERR(lance_vector_model_info(none, NULL), IA);
    CHECK_ERR(lance_vector_model_centroids(none, NULL, &s), IA);
    uint8_t* bytes = NULL;
    size_t len = 0;
    CHECK_ERR(lance_vector_model_serialize(none, NULL, &len), IA);
    CHECK_ERR(lance_vector_model_serialize(none, &bytes, NULL), IA);
    CHECK_OK(lance_vector_model_serialize(none, &bytes, &len));
    CHECK_ERR(lance_vector_model_parse(bytes, len, NULL), IA);
    /* Trailing bytes are not a model either. */
    uint8_t* longer = malloc(len + 1);
    memcpy(longer, bytes, len);
    longer[len] = 0;
    LanceVectorModel* back = NULL;
    CHECK_ERR(lance_vector_model_parse(longer, len + 1, &back), IA);
    free(longer);
    CHECK_ERR(lance_vector_model_from_arrow(LANCE_METRIC_L2, NULL, NULL, 0, 0, NULL, NULL, &back), IA);

    /* A model never holds an infinity or NaN: centroids or codebook values
       that carry one are refused, naming the value, from Arrow arrays and
       from bytes a sender sealed itself. */
    CHECK_OK(lance_vector_model_parse(bytes, len, &back));
    lance_vector_model_free(back);
    uint8_t* resealed = malloc(len);
    memcpy(resealed, bytes, len);
    /* The typed layout: magic (8), index type, metric, dimension and
       partitions (src/floor/vector_model.rs), then the float centroids. */
    size_t first_value = len - 32 - (size_t)4 * 4 * DIM - 1;
    const float nan_value = NAN;
    memcpy(resealed + first_value + 4 * 7, &nan_value, 4);
    fz_sha256(resealed, len - 32, resealed + len - 32);
    back = NULL;
    CHECK_ERR(lance_vector_model_parse(resealed, len, &back), IA);
    CHECK(back == NULL && tu_error_mentions("non-finite") && tu_error_mentions("centroids[7]"));
    free(resealed);
    float cents[4 * DIM];
    for (int i = 0; i < 4 * DIM; i++) cents[i] = (float)i;
    const float bad_values[] = {NAN, INFINITY, -INFINITY};
    for (int b = 0; b < 3; b++) {
        cents[DIM + 3] = bad_values[b];
        struct ArrowArray ba;
        struct ArrowSchema bs;
        tu_f32_list(cents, 4, DIM, -1, "f", &ba, &bs);
        back = NULL;
        CHECK_ERR(lance_vector_model_from_arrow(LANCE_METRIC_L2, &ba, &bs, 0, 0, NULL, NULL, &back), IA);
        CHECK(back == NULL && tu_error_mentions("ivf_centroids value 35 is not finite"));
        ba.release(&ba);
        bs.release(&bs);
    }
    cents[DIM + 3] = 1.0f;
    float book[256 * DIM];
    for (int i = 0; i < 256 * DIM; i++) book[i] = (float)(i % 97);
    book[5] = INFINITY;
    struct ArrowArray fa, fb;
    struct ArrowSchema fas, fbs;
    tu_f32_list(cents, 4, DIM, -1, "f", &fa, &fas);
    tu_f32_list(book, 256, DIM, -1, "f", &fb, &fbs);
    back = NULL;
    CHECK_ERR(lance_vector_model_from_arrow(LANCE_METRIC_L2, &fa, &fas, 4, 8, &fb, &fbs, &back), IA);
    CHECK(back == NULL && tu_error_mentions("pq_codebook value 5 is not finite (inf)"));
    fa.release(&fa);
    fas.release(&fas);
    fb.release(&fb);
    fbs.release(&fbs);
    lance_free_bytes(bytes);
    lance_vector_model_free(none);
}

/* ---- the index type a model was trained for ---- */

static void test_index_type_recorded(void) {
    /* Trained for IVF_SQ: recorded and kept through the bytes; not part of
     * the fingerprint (the same centroids from Arrow record none, and match). */
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_SQ;
    p.num_partitions = 4;
    LanceVectorModel* sq = NULL;
    CHECK_OK(lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &sq));
    if (!sq) return;
    int32_t type = -1;
    CHECK_OK(lance_vector_model_index_type(sq, &type));
    CHECK(type == LANCE_INDEX_IVF_SQ);
    uint8_t* bytes = NULL;
    size_t len = 0;
    CHECK_OK(lance_vector_model_serialize(sq, &bytes, &len));
    LanceVectorModel* parsed = NULL;
    CHECK_OK(lance_vector_model_parse(bytes, len, &parsed));
    type = -1;
    CHECK_OK(lance_vector_model_index_type(parsed, &type));
    CHECK(type == LANCE_INDEX_IVF_SQ);
    check_fingerprints(sq, parsed, 1);
    LanceVectorModel* untyped = sk_bare_model(sq);
    type = -1;
    CHECK_OK(lance_vector_model_index_type(untyped, &type));
    CHECK(type == 0);
    check_fingerprints(sq, untyped, 1);

    /* A builder builds the type it is given (the tool reads the record:
     * tests/system/test_cli.c); an IVF_PQ model's record is IVF_PQ. */
    const uint32_t fragment_ids[] = {0, 1};
    size_t seg_len = 0;
    uint8_t* seg = tu_vector_segment(ds, &p, sq, fragment_ids, 2, 902, &seg_len);
    CHECK(seg != NULL);
    LanceIndexSegmentMetadata* meta = NULL;
    if (seg) CHECK_OK(lance_index_segment_metadata_parse(seg, seg_len, &meta));
    CHECK(meta && lance_index_segment_metadata_index_type(meta) == LANCE_INDEX_IVF_SQ);
    lance_index_segment_metadata_free(meta);
    lance_free_bytes(seg);
    LanceVectorIndexParams pq = p;
    pq.index_type = LANCE_INDEX_IVF_HNSW_PQ;
    pq.num_sub_vectors = 8;
    LanceVectorModel* hnsw_pq = NULL;
    CHECK_OK(lance_vector_model_train(ds, "vec", &pq, NULL, 0, NULL, &hnsw_pq));
    type = -1;
    CHECK(hnsw_pq && lance_vector_model_index_type(hnsw_pq, &type) == 0 && type == LANCE_INDEX_IVF_HNSW_PQ);
    lance_vector_model_free(hnsw_pq);

    /* The getter's refusals. */
    CHECK_ERR(lance_vector_model_index_type(NULL, &type), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_vector_model_index_type(sq, NULL), LANCE_ERR_INVALID_ARGUMENT);
    lance_vector_model_free(untyped);
    lance_vector_model_free(parsed);
    lance_vector_model_free(sq);
    lance_free_bytes(bytes);
}

/* ---- lance_vector_model_train ---- */

#define MAX_TRAIN_EVENTS 1024

typedef struct {
    TuProgressEvent events[MAX_TRAIN_EVENTS];
    int count;
    int dropped;
    /* Cancelled when stage `cancel_at` completes, if set. */
    const LanceIndexBuildCancelToken* token;
    const char* cancel_at;
} TrainEvents;

static TrainEvents train_events; /* large: static */

static void on_train_event(void* ctx, int32_t event, const char* stage, uint64_t total, const char* unit,
                           uint64_t completed) {
    TrainEvents* t = ctx;
    if (t->count < MAX_TRAIN_EVENTS) {
        tu_progress_event_set(&t->events[t->count++], event, stage, total, unit, completed);
    } else {
        t->dropped++;
    }
    if (t->cancel_at && event == LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE && strcmp(stage, t->cancel_at) == 0) {
        CHECK_OK(lance_index_build_cancel(t->token));
    }
}

static int stage_events(const TrainEvents* t, const char* stage, int32_t event) {
    int n = 0;
    for (int i = 0; i < t->count; i++) n += t->events[i].event == event && strcmp(t->events[i].stage, stage) == 0;
    return n;
}

static void test_train_with_control(void) {
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_PQ;
    p.num_partitions = 8;
    p.num_sub_vectors = 4;
    LanceIndexBuildCancelToken* token = lance_index_build_cancel_token_new();
    LanceIndexBuildControl control = {on_train_event, &train_events, token};

    /* Progress: "train_ivf" with one event per k-means iteration, then
       "train_pq", each started and completed, in lance.h's order. */
    memset(&train_events, 0, sizeof train_events);
    LanceVectorModel* m = NULL;
    CHECK_OK(
        lance_vector_model_train(ds, "vec", &p, NULL, 0, &(LanceVectorModelTrainOptions){.control = &control}, &m));
    CHECK(m != NULL && train_events.dropped == 0);
    CHECK(tu_check_progress_events(train_events.events, train_events.count, 1) >= 1);
    CHECK(stage_events(&train_events, "train_ivf", LANCE_INDEX_BUILD_PROGRESS_STAGE_START) == 1);
    CHECK(stage_events(&train_events, "train_ivf", LANCE_INDEX_BUILD_PROGRESS_STAGE_PROGRESS) >= 1);
    CHECK(stage_events(&train_events, "train_ivf", LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE) == 1);
    CHECK(stage_events(&train_events, "train_pq", LANCE_INDEX_BUILD_PROGRESS_STAGE_START) == 1);
    CHECK(stage_events(&train_events, "train_pq", LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE) == 1);
    CHECK(train_events.count > 0 && strcmp(train_events.events[0].stage, "train_ivf") == 0);
    LanceVectorModelInfo info;
    CHECK_OK(lance_vector_model_info(m, &info));
    CHECK(info.num_partitions == 8 && info.has_pq_codebook && info.num_sub_vectors == 4);
    lance_vector_model_free(m);

    /* NULL control: the plain trainer. */
    m = NULL;
    CHECK_OK(lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &m));
    CHECK(m != NULL);
    lance_vector_model_free(m);

    /* Cancelled when the IVF stage completes: the PQ stage never starts and
       no model comes out. */
    memset(&train_events, 0, sizeof train_events);
    train_events.token = token;
    train_events.cancel_at = "train_ivf";
    LanceVectorModel* untouched = (LanceVectorModel*)&train_events;
    m = untouched;
    CHECK_ERR(
        lance_vector_model_train(ds, "vec", &p, NULL, 0, &(LanceVectorModelTrainOptions){.control = &control}, &m),
        LANCE_ERR_CANCELLED);
    CHECK(m == untouched);
    CHECK(stage_events(&train_events, "train_ivf", LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE) == 1);
    CHECK(stage_events(&train_events, "train_pq", LANCE_INDEX_BUILD_PROGRESS_STAGE_START) == 0);

    /* A token cancelled before the call: refused at once, no event. */
    memset(&train_events, 0, sizeof train_events);
    CHECK_ERR(
        lance_vector_model_train(ds, "vec", &p, NULL, 0, &(LanceVectorModelTrainOptions){.control = &control}, &m),
        LANCE_ERR_CANCELLED);
    CHECK(m == untouched && train_events.count == 0);
    lance_index_build_cancel_token_free(token);

    /* Bad input is checked before the token: the same codes as the plain trainer. */
    LanceVectorIndexParams bad = p;
    bad.num_sub_vectors = 5;
    CHECK_ERR(lance_vector_model_train(ds, "vec", &bad, NULL, 0, NULL, &m), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_vector_model_train(ds, "nope", &p, NULL, 0, NULL, &m), LANCE_ERR_NOT_FOUND);
    CHECK_ERR(lance_vector_model_train(ds, "vec", NULL, NULL, 0, NULL, &m), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(m == untouched);
}

/* Model bytes written by an earlier release (lance-c before 0.4, LANCEVM1:
 * the four in tests/fuzz/corpus/model/) parse, serialize back byte for
 * byte, and keep their fingerprint, the SHA-256 in their last 32 bytes
 * (docs/compatibility.md, "Model bytes across versions").  CMake gives the
 * corpus directory as LANCE_C_MODEL_CORPUS. */
static void test_earlier_release_bytes(void) {
    static const char* const names[] = {"ivf_flat_l2.bin", "ivf_flat_dot.bin", "ivf_pq_l2_2x8.bin",
                                        "ivf_pq_cosine_4x4.bin"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", LANCE_C_MODEL_CORPUS, names[i]);
        size_t len = 0;
        unsigned char* bytes = read_whole_file(path, &len);
        CHECK(bytes != NULL && len > 40 && memcmp(bytes, "LANCEVM1", 8) == 0);
        if (!bytes || len <= 40) {
            free(bytes);
            continue;
        }
        LanceVectorModel* m = NULL;
        CHECK_OK(lance_vector_model_parse(bytes, len, &m));
        uint8_t* out = NULL;
        size_t out_len = 0;
        if (m) CHECK_OK(lance_vector_model_serialize(m, &out, &out_len));
        CHECK(out != NULL && out_len == len && memcmp(out, bytes, len) == 0);
        char want[65];
        for (int k = 0; k < 32; k++) snprintf(want + 2 * k, 3, "%02x", bytes[len - 32 + k]);
        char* fp = m ? lance_vector_model_fingerprint(m) : NULL;
        CHECK(fp != NULL && strcmp(fp, want) == 0);
        lance_free_string(fp);
        lance_free_bytes(out);
        lance_vector_model_free(m);
        free(bytes);
    }
}

int main(void) {
    tu_fixture_begin(&fixture, "model", tu_make_data(ROWS, DIM, 16, 1.0f, 77), ROWS / FRAGS);
    ds = fixture.ds;
    CHECK(lance_dataset_fragment_count(ds) == FRAGS);
    RUN(test_training_functions);
    RUN(test_model_bytes_errors);
    RUN(test_round_trip);
    RUN(test_upstream_trainers);
    RUN(test_refusals);
    RUN(test_index_type_recorded);
    RUN(test_train_with_control);
    RUN(test_earlier_release_bytes);
    /* Training never commits. */
    CHECK(lance_dataset_latest_version(ds) == 1);
    return tu_fixture_end(&fixture, "test_model");
}
