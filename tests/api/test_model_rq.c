/* IVF_RQ segments from one shared model (lance.h "Distributed index builds:
 * shared models", its IVF_RQ paragraph): a model trained for IVF_RQ carries
 * its RaBitQ rotation, and its bits, in its bytes and its fingerprint; four
 * segments built from it over planned fragment groups commit, merge into one
 * and answer k-NN (every partition probed) with recall@10 within 0.02 of a
 * one-shot IVF_RQ build on the same data; segments of two models are refused
 * at merge and, unless allowed, at commit; model bytes of lance-c 0.4 (no
 * rotation) still parse, keep their fingerprint and build segments that
 * commit together but do not merge; every refusal with its exact code.
 * (test_commit_merge.c merges eight IVF_RQ segments too; test_training.c
 * has the rotation of a distributed training.) */
#include <string.h>

#include "dataset_kit.h"
#include "segment_kit.h"
#include "test_util.h"

#define ROWS 8000
#define DIM 32
#define FRAGS 16
#define GROUPS 4
#define PARTS 8
#define QUERIES 300
#define IA LANCE_ERR_INVALID_ARGUMENT

/* Many small clusters: neighbours stand apart, so recall@10 measures the
 * quantizer (about 0.95 at 5 bits) and varies little from build to build
 * (0.947-0.956 over six one-shot and six merged builds of pylance 14.0.2
 * on this data, 300 queries). */
static TuData data;
static char* dir;

static LanceVectorIndexParams rq_params(uint32_t num_bits) {
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_RQ;
    p.num_partitions = PARTS;
    p.num_bits = num_bits;
    return p;
}

/* The model's fingerprint equals `want` (want_same) or differs from it. */
static void check_fingerprint(const LanceVectorModel* m, const char* want, int want_same) {
    char* got = lance_vector_model_fingerprint(m);
    CHECK(got && strlen(got) == 64 && want && (strcmp(got, want) == 0) == want_same);
    lance_free_string(got);
}

/* The fingerprint a segment's metadata records equals the model's. */
static int records_model(const uint8_t* bytes, size_t len, const LanceVectorModel* model) {
    LanceIndexSegmentMetadata* meta = NULL;
    if (!bytes || lance_index_segment_metadata_parse(bytes, len, &meta) != 0) return 0;
    char* want = lance_vector_model_fingerprint(model);
    const char* got = lance_index_segment_metadata_model_fingerprint(meta);
    int same = want && got && strcmp(want, got) == 0;
    lance_free_string(want);
    lance_index_segment_metadata_free(meta);
    return same;
}

/* Serialized and parsed again: the same information, fingerprint and bytes. */
static void check_round_trip(const LanceVectorModel* m) {
    uint8_t *bytes = NULL, *again = NULL;
    size_t len = 0, again_len = 0;
    CHECK_OK(lance_vector_model_serialize(m, &bytes, &len));
    LanceVectorModel* parsed = NULL;
    CHECK_OK(lance_vector_model_parse(bytes, len, &parsed));
    if (!parsed) {
        lance_free_bytes(bytes);
        return;
    }
    LanceVectorModelInfo a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0xff, sizeof b);
    CHECK_OK(lance_vector_model_info(m, &a));
    CHECK_OK(lance_vector_model_info(parsed, &b));
    CHECK(a.metric == b.metric && a.dimension == b.dimension && a.num_partitions == b.num_partitions &&
          a.has_pq_codebook == b.has_pq_codebook && a.has_rq_rotation == b.has_rq_rotation &&
          a.num_sub_vectors == b.num_sub_vectors && a.num_bits == b.num_bits);
    int32_t type = -1;
    CHECK_OK(lance_vector_model_index_type(parsed, &type));
    CHECK(type == LANCE_INDEX_IVF_RQ);
    char* fp = lance_vector_model_fingerprint(m);
    check_fingerprint(parsed, fp, 1);
    lance_free_string(fp);
    CHECK_OK(lance_vector_model_serialize(parsed, &again, &again_len));
    CHECK(again_len == len && again && memcmp(again, bytes, len) == 0);
    lance_free_bytes(again);
    lance_free_bytes(bytes);
    lance_vector_model_free(parsed);
}

/* A test on a fresh dataset of `data`, the IVF_RQ parameters `p` (the
 * default bits) and a model trained with them on all of it. */
typedef void (*ModelTest)(LanceDataset* ds, const LanceVectorIndexParams* p, LanceVectorModel* model);

/* Makes the dataset and the model, runs `test` on them (not when the
 * training failed, a failed check), frees them. */
static void run_with_model(ModelTest test) {
    LanceDataset* ds = dk_fresh(dir, NULL, &data, ROWS / FRAGS, NULL, 0);
    LanceVectorIndexParams p = rq_params(0);
    LanceVectorModel* model = sk_train(ds, &p, NULL, 0);
    if (model) test(ds, &p, model);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
}
#define RUN_WITH_MODEL(test) RUN_CALL(#test, run_with_model(test))

/* ---- the model carries the rotation ---- */

static void test_model_carries_rotation(LanceDataset* ds, const LanceVectorIndexParams* p, LanceVectorModel* m1) {
    LanceVectorModel* m2 = sk_train(ds, p, NULL, 0);
    if (!m2) return;
    LanceVectorModelInfo info;
    memset(&info, 0xff, sizeof info);
    CHECK_OK(lance_vector_model_info(m1, &info));
    CHECK(info.metric == LANCE_METRIC_L2 && info.dimension == DIM && info.num_partitions == PARTS);
    CHECK(info.has_rq_rotation && !info.has_pq_codebook);
    CHECK(info.num_bits == 5 && info.num_sub_vectors == 0); /* 0 = Lance's default, 5 */

    /* Two models' bytes round trip, each with its own fingerprint; two
       trainings draw two rotations, so two fingerprints. */
    check_round_trip(m1);
    check_round_trip(m2);
    char* fp1 = lance_vector_model_fingerprint(m1);
    check_fingerprint(m2, fp1, 0);

    /* The rotation is part of the fingerprint: the same centroids without
       it (as Arrow arrays carry them) are another model. */
    LanceVectorModel* bare = sk_bare_model(m1);
    memset(&info, 0xff, sizeof info);
    CHECK(bare && lance_vector_model_info(bare, &info) == 0);
    CHECK(!info.has_rq_rotation && info.num_bits == 0);
    if (bare) check_fingerprint(bare, fp1, 0);
    lance_vector_model_free(bare);
    lance_free_string(fp1);

    /* Other bits per dimension: recorded and kept. */
    LanceVectorIndexParams three = rq_params(3);
    LanceVectorModel* m3 = sk_train(ds, &three, NULL, 0);
    memset(&info, 0, sizeof info);
    CHECK(m3 && lance_vector_model_info(m3, &info) == 0);
    CHECK(info.has_rq_rotation && info.num_bits == 3);
    if (m3) check_round_trip(m3);
    lance_vector_model_free(m3);

    /* Bits outside 1..9. */
    LanceVectorModel* none = NULL;
    LanceVectorIndexParams bad = rq_params(10);
    CHECK_ERR(lance_vector_model_train(ds, "vec", &bad, NULL, 0, NULL, &none), IA);
    CHECK(tu_error_mentions("params->num_bits = 10"));
    CHECK(none == NULL);
    lance_vector_model_free(m2);
}

/* ---- segments of one model: commit, merge, recall ---- */

static void test_segments_merge(LanceDataset* ds, const LanceVectorIndexParams* p, LanceVectorModel* model) {
    LanceFragmentPlan* plan = NULL;
    CHECK_OK(lance_dataset_plan_fragment_groups(ds, GROUPS, &plan));
    if (!plan) return;
    uint8_t* segs[GROUPS] = {0};
    size_t lens[GROUPS] = {0};
    for (size_t g = 0; g < GROUPS; g++) {
        const uint32_t* ids = NULL;
        size_t n = 0;
        CHECK_OK(lance_fragment_plan_group(plan, g, &ids, &n, NULL));
        segs[g] = tu_vector_segment(ds, p, model, ids, n, 500 + (int)g, &lens[g]);
        CHECK(records_model(segs[g], lens[g], model));
    }
    lance_fragment_plan_free(plan);
    const uint8_t* ptrs[GROUPS] = {segs[0], segs[1], segs[2], segs[3]};

    /* The four segments commit as one index. */
    LanceCommitIndexOptions o = {0};
    CHECK_OK(lance_dataset_commit_index_segments_v2(ds, "vec_idx", "vec", ptrs, lens, GROUPS, &o, NULL));
    CHECK(lance_dataset_index_segment_count(ds, "vec_idx") == GROUPS);
    double r_segments = tu_recall(ds, &data, QUERIES, PARTS, 0, NULL);

    /* They merge into one, which records the model and replaces them. */
    uint8_t* merged = NULL;
    size_t merged_len = 0;
    int rc = lance_dataset_merge_index_segments(ds, ptrs, lens, GROUPS, &merged, &merged_len);
    CHECK(rc == 0);
    if (rc != 0) fprintf(stderr, "    merge: %s\n", tu_last_error()->message ? tu_last_error()->message : "");
    CHECK(records_model(merged, merged_len, model));
    const uint8_t* one[] = {merged};
    o.replace = true;
    CHECK_OK(lance_dataset_commit_index_segments_v2(ds, "vec_idx", "vec", one, &merged_len, 1, &o, NULL));
    CHECK(lance_dataset_index_segment_count(ds, "vec_idx") == 1);
    double r_merged = tu_recall(ds, &data, QUERIES, PARTS, 0, NULL);

    /* A one-shot IVF_RQ build of the same data, its own rotation. */
    LanceDataset* ds2 = dk_fresh(dir, NULL, &data, ROWS / FRAGS, NULL, 0);
    CHECK_OK(lance_dataset_create_vector_index(ds2, "vec", "vec_idx", p, false));
    double r_one = tu_recall(ds2, &data, QUERIES, PARTS, 0, NULL);
    printf("    IVF_RQ recall@10, %d queries, every partition: one-shot %.3f, %d segments %.3f, merged %.3f\n", QUERIES,
           r_one, GROUPS, r_segments, r_merged);
    CHECK(r_one > 0.85);
    CHECK(r_merged >= r_one - 0.02);
    CHECK(r_segments >= r_one - 0.02);

    lance_dataset_close(ds2);
    lance_free_bytes(merged);
    for (int g = 0; g < GROUPS; g++) lance_free_bytes(segs[g]);
}

/* ---- two models ---- */

static void test_two_models(LanceDataset* ds, const LanceVectorIndexParams* p, LanceVectorModel* m1) {
    LanceVectorModel* m2 = sk_train(ds, p, NULL, 0);
    const uint32_t lo[] = {0, 1, 2, 3, 4, 5, 6, 7}, hi[] = {8, 9, 10, 11, 12, 13, 14, 15};
    size_t len[2] = {0, 0};
    uint8_t* s1 = tu_vector_segment(ds, p, m1, lo, 8, 600, &len[0]);
    uint8_t* s2 = tu_vector_segment(ds, p, m2, hi, 8, 601, &len[1]);
    CHECK(s1 && s2);
    const uint8_t* ptrs[] = {s1, s2};
    uint8_t* out = NULL;
    size_t out_len = 0;
    CHECK_ERR(lance_dataset_merge_index_segments(ds, ptrs, len, 2, &out, &out_len), LANCE_ERR_MODEL_MISMATCH);
    CHECK(out == NULL);
    LanceCommitIndexOptions o = {0};
    CHECK_ERR(lance_dataset_commit_index_segments_v2(ds, "vec_idx", "vec", ptrs, len, 2, &o, NULL),
              LANCE_ERR_MODEL_MISMATCH);
    CHECK(lance_dataset_latest_version(ds) == 1);
    o.allow_independent_models = true;
    CHECK_OK(lance_dataset_commit_index_segments_v2(ds, "vec_idx", "vec", ptrs, len, 2, &o, NULL));
    CHECK(lance_dataset_index_segment_count(ds, "vec_idx") == 2);
    lance_free_bytes(s1);
    lance_free_bytes(s2);
    lance_vector_model_free(m2);
}

/* ---- model bytes of lance-c 0.4 ---- */

/* An IVF_RQ model (L2, dimension 32, 2 partitions, centroid value
 * (7p + d) % 11 - 5 at partition p, dimension d) in the layout lance-c 0.4
 * writes (src/floor/vector_model.rs before rotations), little-endian:
 * "LANCEVM2", the index type and the metric (u32 each), the dimension and
 * the partitions (u64 each), the centroids (f32, partition by partition),
 * a 0 byte for no codebook, then the SHA-256 of all before it, OLD_DIGEST
 * (computed by a script from that layout); OLD_FINGERPRINT is the
 * fingerprint lance-c 0.4 gives it. */
#define OLD_MODEL_LEN 321
static const uint8_t OLD_DIGEST[32] = {0x64, 0xa3, 0x8b, 0x2c, 0x7e, 0x28, 0xdc, 0x20, 0x63, 0x0f, 0x39,
                                       0xe4, 0xca, 0xec, 0xcc, 0x89, 0xd2, 0x36, 0x5c, 0xba, 0xab, 0x23,
                                       0xd5, 0xbc, 0xeb, 0x22, 0xc8, 0xc1, 0x97, 0x8d, 0xd0, 0xf2};
static const char OLD_FINGERPRINT[] = "5a83063ad8084c85b3e0297913b9e21ace378a36f13d5a37ef17092078f8ba51";

/* Writes the `bytes` low bytes of `value`, least significant first; returns the next position. */
static uint8_t* put_le(uint8_t* at, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; i++) *at++ = (uint8_t)(value >> (8 * i));
    return at;
}

/* The model's bytes as lance-c 0.4 wrote them (see OLD_DIGEST). */
static void old_model_bytes(uint8_t out[OLD_MODEL_LEN]) {
    memcpy(out, "LANCEVM2", 8);
    uint8_t* at = put_le(out + 8, LANCE_INDEX_IVF_RQ, 4);
    at = put_le(at, LANCE_METRIC_L2, 4);
    at = put_le(at, DIM, 8);
    at = put_le(at, 2, 8);
    for (int i = 0; i < 2 * DIM; i++) {
        float value = (float)((i / DIM * 7 + i % DIM) % 11) - 5.0f;
        uint32_t word;
        memcpy(&word, &value, sizeof word);
        at = put_le(at, word, 4);
    }
    *at++ = 0;
    memcpy(at, OLD_DIGEST, sizeof OLD_DIGEST);
}

static void test_old_bytes(void) {
    uint8_t old_model[OLD_MODEL_LEN];
    old_model_bytes(old_model);
    LanceVectorModel* old = NULL;
    CHECK_OK(lance_vector_model_parse(old_model, sizeof old_model, &old));
    if (!old) return;
    int32_t type = -1;
    CHECK_OK(lance_vector_model_index_type(old, &type));
    CHECK(type == LANCE_INDEX_IVF_RQ);
    LanceVectorModelInfo info;
    memset(&info, 0xff, sizeof info);
    CHECK_OK(lance_vector_model_info(old, &info));
    CHECK(info.metric == LANCE_METRIC_L2 && info.dimension == DIM && info.num_partitions == 2);
    CHECK(!info.has_pq_codebook && !info.has_rq_rotation && info.num_bits == 0);
    check_fingerprint(old, OLD_FINGERPRINT, 1);
    struct ArrowArray cent;
    struct ArrowSchema cent_s;
    CHECK_OK(lance_vector_model_centroids(old, &cent, &cent_s));
    int same = cent.length == 2;
    const float* values = (const float*)cent.children[0]->buffers[1] + cent.children[0]->offset;
    for (int i = 0; same && i < 2 * DIM; i++) same = values[i] == (float)((i / DIM * 7 + i % DIM) % 11) - 5.0f;
    CHECK(same);
    cent.release(&cent);
    cent_s.release(&cent_s);
    /* A model without a rotation is written as lance-c 0.4 wrote it. */
    uint8_t* bytes = NULL;
    size_t len = 0;
    CHECK_OK(lance_vector_model_serialize(old, &bytes, &len));
    CHECK(len == sizeof old_model && bytes && memcmp(bytes, old_model, len) == 0);
    lance_free_bytes(bytes);

    /* Its IVF_RQ segments each draw their own rotation: they record its
       fingerprint and commit together, but the core merges no two of them. */
    LanceDataset* ds = dk_fresh(dir, NULL, &data, ROWS / FRAGS, NULL, 0);
    LanceVectorIndexParams p = rq_params(0);
    p.num_partitions = 2;
    const uint32_t lo[] = {0, 1, 2, 3, 4, 5, 6, 7}, hi[] = {8, 9, 10, 11, 12, 13, 14, 15};
    size_t lens[2] = {0, 0};
    uint8_t* s1 = tu_vector_segment(ds, &p, old, lo, 8, 700, &lens[0]);
    uint8_t* s2 = tu_vector_segment(ds, &p, old, hi, 8, 701, &lens[1]);
    CHECK(records_model(s1, lens[0], old) && records_model(s2, lens[1], old));
    const uint8_t* ptrs[] = {s1, s2};
    uint8_t* out = NULL;
    size_t out_len = 0;
    CHECK_ERR(lance_dataset_merge_index_segments(ds, ptrs, lens, 2, &out, &out_len), LANCE_ERR_MODEL_MISMATCH);
    CHECK(tu_error_mentions("rotation"));
    CHECK(out == NULL);
    CHECK_OK(lance_dataset_commit_index_segments_v2(ds, "vec_idx", "vec", ptrs, lens, 2, NULL, NULL));
    CHECK(lance_dataset_index_segment_count(ds, "vec_idx") == 2);
    lance_free_bytes(s1);
    lance_free_bytes(s2);
    lance_dataset_close(ds);
    lance_vector_model_free(old);
}

/* ---- what a builder refuses of a model with a rotation ---- */

static void test_refusals(LanceDataset* ds, const LanceVectorIndexParams* p, LanceVectorModel* model) {
    const uint32_t fragment_ids[] = {0, 1};
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = fragment_ids;
    o.fragment_count = 2;

    /* The rotation fits IVF_RQ only. */
    LanceVectorIndexParams flat = *p;
    flat.index_type = LANCE_INDEX_IVF_FLAT;
    CHECK(vector_segment_builder_new(ds, "vec", NULL, &flat, &o, model) == NULL);
    CHECK(lance_last_error_code() == IA && tu_error_mentions("rotation"));
    /* Other bits than the rotation's. */
    LanceVectorIndexParams three = rq_params(3);
    CHECK(vector_segment_builder_new(ds, "vec", NULL, &three, &o, model) == NULL);
    CHECK(lance_last_error_code() == IA && tu_error_mentions("num_bits"));
    /* Its own bits, named or not (0), are fine. */
    LanceVectorIndexParams five = rq_params(5);
    LanceIndexSegmentBuilder* b = vector_segment_builder_new(ds, "vec", NULL, &five, &o, model);
    CHECK(b != NULL);
    lance_index_segment_builder_free(b);
    b = vector_segment_builder_new(ds, "vec", NULL, p, &o, model);
    CHECK(b != NULL);
    lance_index_segment_builder_free(b);

    /* Nothing was built or committed. */
    CHECK(lance_dataset_latest_version(ds) == 1);
}

int main(void) {
    data = tu_make_data(ROWS, DIM, 2000, 1.0f, 41);
    dir = tu_temp_dir("model-rq");
    RUN_WITH_MODEL(test_model_carries_rotation);
    RUN_WITH_MODEL(test_segments_merge);
    RUN_WITH_MODEL(test_two_models);
    RUN(test_old_bytes);
    RUN_WITH_MODEL(test_refusals);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_model_rq");
}
