/* The core's training options (LanceVectorTrainingOptions, lance.h) on
 * every path that trains.  A seeded one-node training is reproducible (the
 * same fingerprint and bytes for IVF_FLAT, IVF_PQ and IVF_RQ, over all
 * fragments or some, in this process or another) and another seed makes
 * another model; a distributed training is reproducible, a worker replaced
 * mid-training included; a target partition size sets the partition count
 * of a training, a one-shot build and
 * lance_dataset_recommended_num_partitions(); a seeded one-shot build and
 * seeded segment builds record the model the seeded training makes, and
 * their indices answer k-NN exactly; a seeded training reports the
 * training rounds' stages and stops at a cancel; streaming k-means runs
 * only below the sample rate (the core's log says so); every bad option
 * has its exact code.  Not covered: a seed with the HAMMING metric on a
 * uint8 column (no helper writes a uint8 vector column). */
#include <pthread.h>
#include <string.h>

#include "dataset_kit.h"
#include "json.h"
#include "knn_kit.h"
#include "progress_kit.h"
#include "rounds_kit.h"
#include "segment_kit.h"
#include "test_util.h"

#define ROWS 4000
#define DIM 16
#define FRAGS 8
#define K 10

#define IA LANCE_ERR_INVALID_ARGUMENT

static TuFixture fixture;
static LanceDataset* ds; /* fixture.ds: trained on, never committed to */

static const uint32_t lo[] = {0, 1, 2, 3}, hi[] = {4, 5, 6, 7}, odd[] = {1, 3, 5, 7};
static const uint32_t* const halves[] = {lo, hi};
static const size_t half_n[] = {4, 4};

/* Parameters whose sample (4 partitions x 16 rows, and 16 PQ centroids x
 * 16 rows) is far smaller than the table, so the seeded sampler draws:
 * IVF_PQ with 4 sub-vectors of 4 bits. */
static LanceVectorIndexParams sampled(LanceVectorIndexType type) {
    LanceVectorIndexParams p = sk_params(type, 4, type == LANCE_INDEX_IVF_PQ ? 4 : 0);
    p.sample_rate = 16;
    if (type == LANCE_INDEX_IVF_PQ) p.num_bits = 4;
    return p;
}

static LanceVectorTrainingOptions seeded(uint64_t seed) {
    LanceVectorTrainingOptions o = {0};
    o.use_seed = 1;
    o.seed = seed;
    return o;
}

/* lance_vector_model_train() on "vec" of `at`, no
 * control; the model (free it), NULL being a failed check. */
static LanceVectorModel* train(const LanceDataset* at, const LanceVectorIndexParams* p,
                               const LanceVectorTrainingOptions* o, const uint32_t* fragments, size_t n) {
    LanceVectorModel* m = NULL;
    CHECK_OK(lance_vector_model_train(at, "vec", p, fragments, n, &(LanceVectorModelTrainOptions){.training = o}, &m));
    CHECK(m != NULL);
    return m;
}

static LanceVectorModelInfo info_of(const LanceVectorModel* m) {
    LanceVectorModelInfo info;
    memset(&info, 0, sizeof info);
    CHECK(m && lance_vector_model_info(m, &info) == 0);
    return info;
}

/* A model's fingerprint, malloc'd (NULL is a failed check). */
static char* fingerprint_of(const LanceVectorModel* m) {
    const char* fp = m ? lance_vector_model_fingerprint(m) : NULL;
    CHECK(fp && strlen(fp) == 64);
    char* copy = fp ? strdup(fp) : NULL;
    lance_free_string(fp);
    return copy;
}

static int same_text(const char* a, const char* b) { return a && b && strcmp(a, b) == 0; }

/* Whether two models have one fingerprint. */
static int same_fingerprint(const LanceVectorModel* a, const LanceVectorModel* b) {
    char *fa = fingerprint_of(a), *fb = fingerprint_of(b);
    int same = same_text(fa, fb);
    free(fa);
    free(fb);
    return same;
}

/* Whether two models serialize to the same bytes. */
static int same_bytes(const LanceVectorModel* a, const LanceVectorModel* b) {
    uint8_t *ba = NULL, *bb = NULL;
    size_t la = 0, lb = 0;
    CHECK_OK(lance_vector_model_serialize(a, &ba, &la));
    CHECK_OK(lance_vector_model_serialize(b, &bb, &lb));
    int same = ba && bb && la > 0 && la == lb && memcmp(ba, bb, la) == 0;
    lance_free_bytes(ba);
    lance_free_bytes(bb);
    return same;
}

/* The model fingerprint segment metadata bytes record, malloc'd; NULL when
 * they record none. */
static char* segment_fingerprint(const uint8_t* bytes, size_t len) {
    LanceIndexSegmentMetadata* m = NULL;
    CHECK_OK(lance_index_segment_metadata_parse(bytes, len, &m));
    const char* fp = m ? lance_index_segment_metadata_model_fingerprint(m) : NULL;
    char* copy = fp ? strdup(fp) : NULL;
    lance_index_segment_metadata_free(m);
    return copy;
}

/* The model fingerprint of the one committed segment of `name` (read back
 * with lance_dataset_index_segment_metadata()), malloc'd; NULL when it
 * records none.  More or fewer segments than one is a failed check. */
static char* committed_fingerprint(const LanceDataset* at, const char* name) {
    char* listing = lance_dataset_index_segments_json(at);
    JValue* all = listing ? json_parse(listing) : NULL;
    lance_free_string(listing);
    CHECK(all != NULL);
    char* fp = NULL;
    int segments = 0;
    for (size_t i = 0; all && i < all->count; i++) {
        const JValue *of = json_get(all->items[i], "name"), *uuid = json_get(all->items[i], "uuid");
        if (!of || !of->string || strcmp(of->string, name) != 0 || !uuid || !uuid->string) continue;
        segments++;
        uint8_t* bytes = NULL;
        size_t len = 0;
        CHECK_OK(lance_dataset_index_segment_metadata(at, name, uuid->string, &bytes, &len));
        if (bytes && !fp) fp = segment_fingerprint(bytes, len);
        lance_free_bytes(bytes);
    }
    json_free(all);
    CHECK(segments == 1);
    return fp;
}

static const float* row(int r) { return fixture.data.vectors + (size_t)r * DIM; }

/* The committed "vec" index of `at` has exactly `partitions` partitions:
 * IVF_FLAT compares the query with every row of the partitions it probes,
 * so probing `partitions` of them reaches every row and one fewer does not. */
static void check_partition_count(const LanceDataset* at, uint32_t partitions) {
    CHECK(kk_comparisons(at, row(5), DIM, K, partitions) == ROWS);
    CHECK(kk_comparisons(at, row(5), DIM, K, partitions - 1) < ROWS);
}

/* k-NN through the index of `at`, every one of `partitions` probed, is
 * brute force's answer for a few rows as queries. */
static void check_knn_exact(const LanceDataset* at, uint32_t partitions) {
    for (int q = 0; q < 4; q++) kk_check_exact(at, &fixture.data, row(q * 997 + 3), K, partitions);
}

/* ---- 1. a seeded one-node training ---- */

static void test_seeded_one_node(void) {
    const LanceVectorIndexType types[] = {LANCE_INDEX_IVF_FLAT, LANCE_INDEX_IVF_PQ, LANCE_INDEX_IVF_RQ};
    const LanceVectorTrainingOptions seven = seeded(7), eight = seeded(8);
    for (int i = 0; i < 3; i++) {
        LanceVectorIndexParams p = sampled(types[i]);
        LanceVectorModel* a = train(ds, &p, &seven, NULL, 0);
        LanceVectorModel* b = train(ds, &p, &seven, NULL, 0);
        LanceVectorModel* other = train(ds, &p, &eight, NULL, 0);
        CHECK(same_fingerprint(a, b) && same_bytes(a, b));
        CHECK(!same_fingerprint(a, other));

        LanceVectorModelInfo info = info_of(a);
        CHECK(info.metric == LANCE_METRIC_L2 && info.dimension == DIM && info.num_partitions == 4);
        CHECK(info.has_pq_codebook == (types[i] == LANCE_INDEX_IVF_PQ));
        CHECK(info.has_rq_rotation == (types[i] == LANCE_INDEX_IVF_RQ));
        if (types[i] == LANCE_INDEX_IVF_PQ) CHECK(info.num_sub_vectors == 4 && info.num_bits == 4);
        if (types[i] == LANCE_INDEX_IVF_RQ) CHECK(info.num_bits == 5); /* 0 = Lance's default */

        /* Over some fragments: reproducible too, and another sample than
           the whole table's. */
        LanceVectorModel* s1 = train(ds, &p, &seven, odd, 4);
        LanceVectorModel* s2 = train(ds, &p, &seven, odd, 4);
        CHECK(same_fingerprint(s1, s2) && same_bytes(s1, s2));
        CHECK(!same_fingerprint(s1, a));
        CHECK(info_of(s1).num_partitions == 4);

        lance_vector_model_free(a);
        lance_vector_model_free(b);
        lance_vector_model_free(other);
        lance_vector_model_free(s1);
        lance_vector_model_free(s2);
    }
}

/* The child's side of test_another_process(): the seeded IVF_PQ model of
 * the dataset at `uri`, its fingerprint printed. */
static int child_fingerprint(const char* uri) {
    LanceDataset* at = lance_dataset_open(uri, NULL, 0);
    LanceVectorIndexParams p = sampled(LANCE_INDEX_IVF_PQ);
    const LanceVectorTrainingOptions seven = seeded(7);
    LanceVectorModel* m = NULL;
    if (!at || lance_vector_model_train(at, "vec", &p, NULL, 0, &(LanceVectorModelTrainOptions){.training = &seven},
                                        &m) != 0) {
        lance_dataset_close(at);
        return 1;
    }
    const char* fp = lance_vector_model_fingerprint(m);
    printf("%s\n", fp ? fp : "");
    lance_free_string(fp);
    lance_vector_model_free(m);
    lance_dataset_close(at);
    return 0;
}

static const char* self; /* this program, run again as a child */

/* Another process, with its own sampler state, trains the same model. */
static void test_another_process(void) {
    LanceVectorIndexParams p = sampled(LANCE_INDEX_IVF_PQ);
    const LanceVectorTrainingOptions seven = seeded(7);
    LanceVectorModel* m = train(ds, &p, &seven, NULL, 0);
    char* ours = fingerprint_of(m);
    const char* argv[] = {self, "--fingerprint", fixture.uri, NULL};
    char* theirs = tu_run_program(argv);
    CHECK(ours && theirs && strlen(theirs) == 65 && strncmp(theirs, ours, 64) == 0 && theirs[64] == '\n');
    free(ours);
    free(theirs);
    lance_vector_model_free(m);
}

/* ---- 2. a distributed training ---- */

static void test_distributed_reproducible(void) {
    LanceVectorIndexParams p = sampled(LANCE_INDEX_IVF_FLAT);
    LanceVectorTrainingInfo i1, i2;
    memset(&i1, 0, sizeof i1);
    memset(&i2, 0, sizeof i2);
    LanceVectorModel* first = rk_train(ds, &p, 11, halves, half_n, 2, NULL, NULL, &i1);
    LanceVectorModel* second = rk_train(ds, &p, 11, halves, half_n, 2, NULL, NULL, &i2);
    /* 64 of the 4000 rows sampled: the workers drew from the seed. */
    CHECK(i1.ivf_sample_rows == 64 && i2.ivf_sample_rows == 64);
    CHECK(i1.rounds == i2.rounds && i1.ivf_iterations == i2.ivf_iterations);
    CHECK(same_fingerprint(first, second) && same_bytes(first, second));

    /* Worker 1 fails after two rounds; a new worker over its fragments
       draws the same sample, so the training ends with the same model. */
    LanceVectorTraining* t = NULL;
    CHECK_OK(lance_vector_training_new("vec", &p, 11, &t));
    RkWorkers ws = rk_workers_new(ds, halves, half_n, 2);
    rk_rounds(t, &ws, 2);
    CHECK(rk_info(t).phase == LANCE_TRAINING_IVF); /* mid-training */
    lance_vector_training_worker_free(ws.w[1]);
    ws.w[1] = NULL;
    CHECK_OK(lance_vector_training_worker_new(ds, hi, 4, &ws.w[1]));
    rk_finish(t, &ws, 500, NULL, NULL);
    LanceVectorModel* replaced = NULL;
    CHECK_OK(lance_vector_training_model(t, &replaced));
    CHECK(same_fingerprint(replaced, first) && same_bytes(replaced, first));

    lance_vector_model_free(replaced);
    rk_workers_free(&ws);
    lance_vector_training_free(t);
    lance_vector_model_free(first);
    lance_vector_model_free(second);
}

/* ---- 3. a target partition size ---- */

static void test_target_partition_size(void) {
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, 0, 0);
    LanceVectorTrainingOptions o = {0};
    o.target_partition_size = 500;
    LanceVectorModel* m = train(ds, &p, &o, NULL, 0);
    CHECK(info_of(m).num_partitions == 8); /* 4000 / 500 */
    lance_vector_model_free(m);
    m = train(ds, &p, &o, odd, 4);
    CHECK(info_of(m).num_partitions == 4); /* 2000 / 500 */
    lance_vector_model_free(m);
    /* IVF_PQ over 2000 rows: the count and the codebook. */
    LanceVectorIndexParams pq = sk_pq_params(0, 4, 4);
    m = train(ds, &pq, &o, lo, 4);
    LanceVectorModelInfo info = info_of(m);
    CHECK(info.num_partitions == 4 && info.has_pq_codebook && info.num_sub_vectors == 4);
    lance_vector_model_free(m);

    uint32_t n = 99;
    CHECK_OK(lance_dataset_recommended_num_partitions(ds, LANCE_INDEX_IVF_PQ, 500, NULL, 0, &n));
    CHECK(n == 8);
    CHECK_OK(lance_dataset_recommended_num_partitions(ds, LANCE_INDEX_IVF_PQ, 0, NULL, 0, &n));
    CHECK(n == 1); /* 4000 / 8192, clamped to 1 */
    CHECK_OK(lance_dataset_recommended_num_partitions(ds, LANCE_INDEX_IVF_FLAT, 1000, odd, 4, &n));
    CHECK(n == 2);
    CHECK_OK(lance_dataset_recommended_num_partitions(ds, LANCE_INDEX_IVF_FLAT, 7, NULL, 0, &n));
    CHECK(n == 571); /* 4000 / 7, rounded down */
    n = 77;
    CHECK_ERR(lance_dataset_recommended_num_partitions(ds, 5, 500, NULL, 0, &n), IA);
    CHECK(n == 77);
    CHECK_ERR(lance_dataset_recommended_num_partitions(ds, LANCE_INDEX_IVF_PQ, 500, NULL, 0, NULL), IA);
    CHECK_ERR(lance_dataset_recommended_num_partitions(NULL, LANCE_INDEX_IVF_PQ, 500, NULL, 0, &n), IA);
    const uint32_t missing[] = {0, 99};
    CHECK_ERR(lance_dataset_recommended_num_partitions(ds, LANCE_INDEX_IVF_PQ, 500, missing, 2, &n), IA);
    CHECK(n == 77);

    /* num_partitions 0: the count is derived (4000 / 4096, clamped to 1),
       with NULL options too (the deprecated plain trainer refuses it:
       tests/api/test_deprecated.c). */
    m = NULL;
    CHECK_OK(lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &m));
    CHECK(info_of(m).num_partitions == 1);
    lance_vector_model_free(m);
    m = train(ds, &p, NULL, NULL, 0);
    CHECK(info_of(m).num_partitions == 1);
    lance_vector_model_free(m);
}

/* ---- 4. one-shot builds ---- */

/* The STAGE_PROGRESS events of `stage` in a record. */
static int stage_progress_events(const PkRecorder* r, const char* stage) {
    int n = 0;
    for (int i = 0; i < r->count; i++)
        n += r->events[i].event == LANCE_INDEX_BUILD_PROGRESS_STAGE_PROGRESS && strcmp(r->events[i].stage, stage) == 0;
    return n;
}

/* Every event of the seeded training ("training_..." stages) comes before
 * every event of the build, and there are both. */
static int training_stages_first(const PkRecorder* r) {
    int last_training = -1, first_build = -1;
    for (int i = 0; i < r->count; i++) {
        if (strncmp(r->events[i].stage, "training_", 9) == 0) last_training = i;
        else if (first_build < 0) first_build = i;
    }
    return last_training >= 0 && first_build > last_training;
}

static void test_one_shot(void) {
    LanceDataset* plain = dk_fresh(fixture.dir, "one_shot", &fixture.data, ROWS / FRAGS, NULL, 0);
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, 0, 0);
    LanceVectorTrainingOptions o = {0};
    o.target_partition_size = 1000;
    CHECK_OK(lance_dataset_create_vector_index_v2(plain, "vec", NULL, &p, false,
                                                  &(LanceIndexCreateOptions){.training = &o}));
    CHECK(lance_dataset_version(plain) == 2);
    check_partition_count(plain, 4); /* 4000 / 1000 */
    check_knn_exact(plain, 4);
    /* The core trained it: no shared model recorded. */
    char* fp = committed_fingerprint(plain, "vec_idx");
    CHECK(fp == NULL);
    free(fp);
    lance_dataset_close(plain);

    /* Seed 5 on two datasets of the same rows: one model, recorded by both
       indices, the one the seeded training makes. */
    LanceDataset* a = dk_fresh(fixture.dir, "seeded_a", &fixture.data, ROWS / FRAGS, NULL, 0);
    LanceDataset* b = dk_fresh(fixture.dir, "seeded_b", &fixture.data, ROWS / FRAGS, NULL, 0);
    p.sample_rate = 16;
    LanceVectorTrainingOptions s = seeded(5);
    s.target_partition_size = 1000;
    CHECK_OK(
        lance_dataset_create_vector_index_v2(a, "vec", NULL, &p, false, &(LanceIndexCreateOptions){.training = &s}));
    /* The second with progress: the training's stages, then the build's. */
    PkRecorder* r = pk_recorder_new();
    LanceIndexBuildControl control = {pk_record, r, NULL};
    CHECK_OK(lance_dataset_create_vector_index_v2(b, "vec", NULL, &p, false,
                                                  &(LanceIndexCreateOptions){.control = &control, .training = &s}));
    pk_check_returned(r);
    pk_check_events(r, 1, 1);
    CHECK(r->count > 0 && strcmp(r->events[0].stage, "training_sample") == 0);
    CHECK(pk_has_stage(r, "training_ivf_round") && pk_has_stage(r, "shuffle"));
    CHECK(training_stages_first(r));
    /* The core's build reports its IVF stage, but given the centroids it
       runs no k-means iteration. */
    CHECK(pk_has_stage(r, "train_ivf") && stage_progress_events(r, "train_ivf") == 0);
    pk_recorder_free(r);

    char* fa = committed_fingerprint(a, "vec_idx");
    char* fb = committed_fingerprint(b, "vec_idx");
    CHECK(fa && fb && strlen(fa) == 64 && strcmp(fa, fb) == 0);
    LanceVectorModel* m = train(a, &p, &s, NULL, 0);
    char* fm = fingerprint_of(m);
    CHECK(same_text(fm, fa));
    CHECK(info_of(m).num_partitions == 4);
    free(fm);
    lance_vector_model_free(m);
    free(fa);
    free(fb);
    check_partition_count(a, 4);
    check_knn_exact(a, 4);
    check_knn_exact(b, 4);
    lance_dataset_close(a);
    lance_dataset_close(b);
}

/* ---- 5. segment builders ---- */

/* A vector segment builder on "vec" of `at` over `fragments`, UUID
 * tu_uuid(uuid_seed), AUTO mode, no model. */
static LanceIndexSegmentBuilder* builder_over(const LanceDataset* at, const LanceVectorIndexParams* p,
                                              const uint32_t* fragments, size_t n, int uuid_seed, uint8_t uuid[16]) {
    LanceIndexSegmentBuilder* b = tu_vector_segment_builder(at, p, NULL, fragments, n, uuid_seed, uuid);
    CHECK(b != NULL);
    return b;
}

static void test_segment_builder(void) {
    LanceDataset* at = dk_fresh(fixture.dir, "segments", &fixture.data, ROWS / FRAGS, NULL, 0);
    LanceVectorIndexParams p = sampled(LANCE_INDEX_IVF_FLAT);
    LanceVectorTrainingOptions s = seeded(21);

    /* A segment over the low half, and its retry under another UUID: the
       same model, the seeded training's over those fragments. */
    uint8_t ua[16], ur[16], ud[16];
    SkSet pair = {0}, index = {0};
    size_t len = 0;
    LanceIndexSegmentBuilder* first = builder_over(at, &p, lo, 4, 301, ua);
    CHECK_OK(lance_index_segment_builder_set_training_options(first, &s));
    uint8_t* seg_a = sk_execute(first, &len, true);
    size_t len_a = len;
    LanceIndexSegmentBuilder* retry = builder_over(at, &p, lo, 4, 302, ur);
    CHECK_OK(lance_index_segment_builder_set_training_options(retry, &s));
    uint8_t* seg_r = sk_execute(retry, &len, true);
    size_t len_r = len;
    char* fa = seg_a ? segment_fingerprint(seg_a, len_a) : NULL;
    char* fr = seg_r ? segment_fingerprint(seg_r, len_r) : NULL;
    CHECK(fa && fr && strlen(fa) == 64 && strcmp(fa, fr) == 0);
    LanceVectorModel* model = train(at, &p, &s, lo, 4);
    char* fm = fingerprint_of(model);
    CHECK(same_text(fm, fa));
    free(fm);

    /* The retry and the first cover the same fragments: they never commit
       together (`pair` borrows the bytes `index` and seg_a own). */
    sk_set_add(&pair, seg_a, &len_a);
    sk_set_add(&pair, seg_r, &len_r);
    CHECK_ERR(sk_commit(at, "vec_idx", &pair, NULL, NULL), LANCE_ERR_OVERLAPPING_SEGMENTS);
    CHECK(lance_dataset_version(at) == 1);

    /* The retry and a segment over the high half built with the same
       model commit as one index that answers k-NN exactly. */
    uint8_t* seg_b = tu_vector_segment(at, &p, model, hi, 4, 303, &len);
    size_t len_b = len;
    char* fb = seg_b ? segment_fingerprint(seg_b, len_b) : NULL;
    CHECK(same_text(fb, fa));
    sk_set_add(&index, seg_r, &len_r);
    sk_set_add(&index, seg_b, &len_b);
    CHECK_OK(sk_commit(at, "vec_idx", &index, NULL, NULL));
    CHECK(lance_dataset_version(at) == 2);
    check_partition_count(at, 4);
    check_knn_exact(at, 4);
    kk_check_recall_exact(at, &fixture.data, 8, 4);
    sk_set_free(&index);
    lance_free_bytes(seg_a);
    free(fa);
    free(fr);
    free(fb);
    lance_vector_model_free(model);

    /* Refusals: a scalar builder, one already executed, none; NULL options
       are the defaults; bad options are refused here. */
    LanceIndexSegmentBuilder* scalar =
        lance_index_segment_builder_new_scalar(at, "id", NULL, LANCE_SCALAR_BTREE, NULL, NULL);
    CHECK(scalar != NULL);
    CHECK_ERR(lance_index_segment_builder_set_training_options(scalar, &s), IA);
    CHECK(tu_error_mentions("scalar"));
    lance_index_segment_builder_free(scalar);
    CHECK_ERR(lance_index_segment_builder_set_training_options(NULL, &s), IA);
    LanceIndexSegmentBuilder* done = builder_over(at, &p, lo, 4, 304, ud);
    CHECK_OK(lance_index_segment_builder_set_training_options(done, NULL));
    LanceVectorTrainingOptions bad = s;
    bad.reserved = 1;
    CHECK_ERR(lance_index_segment_builder_set_training_options(done, &bad), IA);
    CHECK(tu_error_mentions("options->reserved"));
    bad = s;
    bad.streaming_sample_rate = 32;
    CHECK_ERR(lance_index_segment_builder_set_training_options(done, &bad), LANCE_ERR_NOT_SUPPORTED);
    uint8_t* bytes = NULL;
    CHECK_OK(lance_index_segment_builder_execute_uncommitted(done, &bytes, &len));
    char* unseeded = bytes ? segment_fingerprint(bytes, len) : NULL;
    CHECK(unseeded == NULL); /* the defaults: the core trained it */
    free(unseeded);
    lance_free_bytes(bytes);
    CHECK_ERR(lance_index_segment_builder_set_training_options(done, &s), IA);
    lance_index_segment_builder_free(done);
    lance_dataset_close(at);
}

/* ---- 6. progress and cancel of a seeded training ---- */

static void test_seeded_progress_and_cancel(void) {
    LanceVectorIndexParams p = sampled(LANCE_INDEX_IVF_PQ);
    LanceVectorTrainingOptions s = seeded(7);
    PkRecorder* r = pk_recorder_new();
    LanceIndexBuildControl control = {pk_record, r, NULL};
    LanceVectorModel* m = NULL;
    CHECK_OK(lance_vector_model_train(ds, "vec", &p, NULL, 0,
                                      &(LanceVectorModelTrainOptions){.control = &control, .training = &s}, &m));
    pk_check_returned(r);
    pk_check_events(r, 1, 1);
    /* The sample: the larger of IVF's (4 x 16 rows) and PQ's (16 x 16). */
    CHECK(r->count > 0 && strcmp(r->events[0].stage, "training_sample") == 0 && r->events[0].total == 256);
    CHECK(pk_has_stage(r, "training_ivf_round") && pk_has_stage(r, "training_residuals") &&
          pk_has_stage(r, "training_pq_round"));
    CHECK(!pk_has_stage(r, "train_ivf") && !pk_has_stage(r, "train_pq"));
    /* The control changes nothing of the model. */
    LanceVectorModel* quiet = train(ds, &p, &s, NULL, 0);
    CHECK(same_fingerprint(m, quiet));
    lance_vector_model_free(quiet);
    lance_vector_model_free(m);

    /* Cancelled at the first IVF round: no model, no event after. */
    LanceIndexBuildCancelToken* token = lance_index_build_cancel_token_new();
    pk_recorder_reset(r);
    r->cancel_stage = "training_ivf_round";
    r->cancel_event = LANCE_INDEX_BUILD_PROGRESS_STAGE_START;
    r->token = token;
    LanceIndexBuildControl cancelling = {pk_record, r, token};
    LanceVectorModel* untouched = (LanceVectorModel*)r;
    m = untouched;
    CHECK_ERR(lance_vector_model_train(ds, "vec", &p, NULL, 0,
                                       &(LanceVectorModelTrainOptions){.control = &cancelling, .training = &s}, &m),
              LANCE_ERR_CANCELLED);
    CHECK(m == untouched);
    CHECK(atomic_load(&r->reached) && r->calls_after_cancel == 0);
    pk_check_returned(r);
    pk_check_events(r, 0, 0);
    /* The token is cancelled: the next call stops before any event. */
    pk_recorder_reset(r);
    CHECK_ERR(lance_vector_model_train(ds, "vec", &p, NULL, 0,
                                       &(LanceVectorModelTrainOptions){.control = &cancelling, .training = &s}, &m),
              LANCE_ERR_CANCELLED);
    CHECK(m == untouched && r->calls == 0);
    lance_index_build_cancel_token_free(token);
    pk_recorder_free(r);
}

/* ---- 7. streaming k-means ---- */

/* The core's log records, counted on whatever thread they come from. */
typedef struct {
    pthread_mutex_t lock;
    int records;
    int streaming; /* messages with "Start streaming IVF training" */
} LogSeen;

static void on_log(void* ctx, int32_t level, const char* target, const char* message) {
    LogSeen* seen = ctx;
    (void)level, (void)target;
    pthread_mutex_lock(&seen->lock);
    seen->records++;
    if (message && strstr(message, "Start streaming IVF training")) seen->streaming++;
    pthread_mutex_unlock(&seen->lock);
}

/* A training of 300 partitions (no seed, `sample_rate` sample rows a
 * partition, 0 = 256) with `streaming_sample_rate`: the log records whose
 * message announces streaming. */
static int streamed(uint32_t sample_rate, uint32_t streaming_sample_rate) {
    static LogSeen seen;
    memset(&seen, 0, sizeof seen);
    pthread_mutex_init(&seen.lock, NULL);
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, 300, 0);
    p.sample_rate = sample_rate;
    LanceVectorTrainingOptions o = {0};
    o.streaming_sample_rate = streaming_sample_rate;
    CHECK_OK(lance_set_log_callback(LANCE_LOG_INFO, on_log, &seen));
    LanceVectorModel* m = train(ds, &p, &o, NULL, 0);
    CHECK_OK(lance_set_log_callback(LANCE_LOG_OFF, NULL, NULL));
    CHECK(info_of(m).num_partitions == 300 && info_of(m).dimension == DIM);
    lance_vector_model_free(m);
    pthread_mutex_lock(&seen.lock);
    int records = seen.records, streaming = seen.streaming;
    pthread_mutex_unlock(&seen.lock);
    pthread_mutex_destroy(&seen.lock);
    CHECK(records > 0); /* the callback heard the training */
    return streaming;
}

static void test_streaming(void) {
    /* Above 256 partitions the core streams coresets: two chunks of 300 x
       4 rows (2400 of the 4000 rows). */
    CHECK(streamed(8, 4) >= 1);
    CHECK(streamed(8, 8) == 0); /* not below sample_rate: one in-memory sample */
    /* A table smaller than the sample (300 x 256 rows): the library lowers
       the sample rate to the whole chunks the 4000 rows hold, 13 rows a
       partition: 3 chunks of 4 (streamed), or one chunk of 32 (not below
       the lowered rate: one sample).  The core alone fails both with
       "Not enough training vectors for streaming". */
    CHECK(streamed(0, 4) >= 1);
    CHECK(streamed(0, 32) == 0);
    /* The same through a segment build over 2000 rows (6 a partition: one
       chunk of 4) and a one-shot build over 4000 (3 chunks of 4). */
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, 300, 0);
    LanceVectorTrainingOptions o = {0};
    o.streaming_sample_rate = 4;
    uint32_t half[] = {0, 1, 2, 3};
    LanceIndexSegmentBuildOptions bo = {0};
    bo.fragment_ids = half;
    bo.fragment_count = 4;
    LanceIndexSegmentBuilder* b = vector_segment_builder_new(ds, "vec", "streamed_idx", &p, &bo, NULL);
    CHECK(b != NULL);
    CHECK_OK(lance_index_segment_builder_set_training_options(b, &o));
    size_t len = 0;
    uint8_t* seg = sk_execute(b, &len, true);
    CHECK(seg != NULL && len > 0);
    lance_free_bytes(seg);
    LanceDataset* fresh = dk_fresh(fixture.dir, "streamed", &fixture.data, ROWS / FRAGS, NULL, 0);
    CHECK_OK(lance_dataset_create_vector_index_v2(fresh, "vec", NULL, &p, false,
                                                  &(LanceIndexCreateOptions){.training = &o}));
    CHECK(lance_dataset_index_count(fresh) == 1);
    lance_dataset_close(fresh);
}

/* ---- 8. bad options ---- */

/* Each bad option refused by the trainer and the one-shot build with
 * `code` and a message mentioning `named`; nothing trained or committed. */
static void check_refused(LanceDataset* fresh, const LanceVectorTrainingOptions* o, LanceErrorCode code,
                          const char* named) {
    LanceVectorIndexParams p = sampled(LANCE_INDEX_IVF_FLAT);
    LanceVectorModel* m = NULL;
    CHECK_ERR(lance_vector_model_train(ds, "vec", &p, NULL, 0, &(LanceVectorModelTrainOptions){.training = o}, &m),
              code);
    CHECK(tu_error_mentions(named));
    CHECK(m == NULL);
    CHECK_ERR(
        lance_dataset_create_vector_index_v2(fresh, "vec", NULL, &p, false, &(LanceIndexCreateOptions){.training = o}),
        code);
    CHECK(tu_error_mentions(named));
    CHECK(lance_dataset_version(fresh) == 1 && lance_dataset_latest_version(fresh) == 1);
}

static void test_bad_options(void) {
    LanceDataset* fresh = dk_fresh(fixture.dir, "refusals", &fixture.data, ROWS / FRAGS, NULL, 0);
    LanceVectorTrainingOptions o = {0};
    o.reserved = 1;
    check_refused(fresh, &o, IA, "options->reserved = 1");
    memset(&o, 0, sizeof o);
    o.streaming_coreset_rate = 64;
    check_refused(fresh, &o, IA, "options->streaming_coreset_rate = 64");
    memset(&o, 0, sizeof o);
    o.streaming_refine_passes = 2;
    check_refused(fresh, &o, IA, "options->streaming_refine_passes = 2");
    o = seeded(3);
    o.streaming_sample_rate = 32;
    check_refused(fresh, &o, LANCE_ERR_NOT_SUPPORTED, "options->use_seed");
    /* The core's own check when the training runs: a coreset rate above
       the sample rate (0 = 256). */
    memset(&o, 0, sizeof o);
    o.streaming_sample_rate = 32;
    o.streaming_coreset_rate = 512;
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, 4, 0);
    LanceVectorModel* m = NULL;
    CHECK_ERR(lance_vector_model_train(ds, "vec", &p, NULL, 0, &(LanceVectorModelTrainOptions){.training = &o}, &m),
              IA);
    CHECK(tu_error_mentions("streaming_coreset_rate (512)"));
    CHECK(m == NULL);
    CHECK_ERR(
        lance_dataset_create_vector_index_v2(fresh, "vec", NULL, &p, false, &(LanceIndexCreateOptions){.training = &o}),
        IA);
    CHECK(tu_error_mentions("streaming_coreset_rate (512)"));
    CHECK(lance_dataset_version(fresh) == 1 && lance_dataset_latest_version(fresh) == 1);

    /* The arguments every trainer checks. */
    LanceVectorTrainingOptions s = seeded(1);
    CHECK_ERR(lance_vector_model_train(NULL, "vec", &p, NULL, 0, &(LanceVectorModelTrainOptions){.training = &s}, &m),
              IA);
    CHECK_ERR(lance_vector_model_train(ds, "vec", NULL, NULL, 0, &(LanceVectorModelTrainOptions){.training = &s}, &m),
              IA);
    CHECK_ERR(lance_vector_model_train(ds, "vec", &p, NULL, 0, &(LanceVectorModelTrainOptions){.training = &s}, NULL),
              IA);
    CHECK_ERR(lance_vector_model_train(ds, "nope", &p, NULL, 0, &(LanceVectorModelTrainOptions){.training = &s}, &m),
              LANCE_ERR_NOT_FOUND);
    const uint32_t missing[] = {0, 99};
    CHECK_ERR(lance_vector_model_train(ds, "vec", &p, missing, 2, &(LanceVectorModelTrainOptions){.training = &s}, &m),
              IA);
    /* More partitions than the sampled fragments' rows, with a seed. */
    LanceVectorIndexParams many = sk_params(LANCE_INDEX_IVF_FLAT, 600, 0);
    const uint32_t one[] = {0};
    CHECK_ERR(lance_vector_model_train(ds, "vec", &many, one, 1, &(LanceVectorModelTrainOptions){.training = &s}, &m),
              IA);
    CHECK(m == NULL);
    CHECK_ERR(
        lance_dataset_create_vector_index_v2(NULL, "vec", NULL, &p, false, &(LanceIndexCreateOptions){.training = &s}),
        IA);
    CHECK_ERR(lance_dataset_create_vector_index_v2(fresh, "vec", NULL, NULL, false,
                                                   &(LanceIndexCreateOptions){.training = &s}),
              IA);
    CHECK(lance_dataset_version(fresh) == 1);
    lance_dataset_close(fresh);
}

int main(int argc, char** argv) {
    if (argc == 3 && strcmp(argv[1], "--fingerprint") == 0) return child_fingerprint(argv[2]);
    self = argv[0];
    tu_fixture_begin(&fixture, "training_options", tu_make_data(ROWS, DIM, 16, 1.0f, 41), ROWS / FRAGS);
    ds = fixture.ds;
    CHECK(lance_dataset_fragment_count(ds) == FRAGS);
    RUN(test_seeded_one_node);
    RUN(test_another_process);
    RUN(test_distributed_reproducible);
    RUN(test_target_partition_size);
    RUN(test_seeded_progress_and_cancel);
    RUN(test_streaming);
    RUN(test_bad_options);
    /* Training never commits. */
    CHECK(lance_dataset_latest_version(ds) == 1);
    RUN(test_one_shot);
    RUN(test_segment_builder);
    return tu_fixture_end(&fixture, "test_training_options");
}
