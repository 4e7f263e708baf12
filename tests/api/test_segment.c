/* Distributed builds, worker side (lance.h "Distributed index builds:
 * uncommitted segments"): fragment-scoped uncommitted segments with a
 * shared model, given as Arrow arrays or as a handle through
 * lance_index_segment_builder_set_model(), what their metadata records,
 * scalar segments, every validation of the builders and of set_model, and
 * when an AUTO builder checks its partition count.  The models themselves
 * are test_model's, the metadata parser and getters test_metadata's. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "segment_params.h"
#include "knn_kit.h"
#include "segment_kit.h"
#include "test_util.h"

#define ROWS 4000
#define DIM 32
#define FRAGS 8
#define K 10

static TuData data;
static char* dir;
static char uri[600];
static LanceDataset* ds;

/* Lance numbers top-level fields first: id = 0, vec = 1, tag = 2 (vec.item = 3). */
#define VEC_FIELD_ID 1
#define ID_FIELD_ID 0
#define TAG_FIELD_ID 2

#define MODE_AUTO LANCE_INDEX_SEGMENT_BUILD_AUTO
#define MODE_LOCAL_TRAIN LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN
#define MODE_PRECOMPUTED LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED

/* Vector index parameters: `type` with `partitions` IVF partitions and
 * `sub_vectors` PQ sub-vectors, every other field 0 (the default). */
static LanceVectorIndexParams vector_params(LanceVectorIndexType type, uint32_t partitions, uint32_t sub_vectors) {
    LanceVectorIndexParams p = {0};
    p.index_type = type;
    p.num_partitions = partitions;
    p.num_sub_vectors = sub_vectors;
    return p;
}

/* Build options over the `n` fragments `fragment_ids` in `mode`, under `uuid`
 * (NULL = generated), without Arrow arrays. */
static LanceIndexSegmentBuildOptions fragment_options(const uint32_t* fragment_ids, size_t n, int32_t mode,
                                                      const uint8_t* uuid) {
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = fragment_ids;
    o.fragment_count = n;
    o.index_uuid = uuid;
    o.mode = mode;
    return o;
}

/* Commits segments on "vec" as a new index (replace = false); returns the
 * version the commit made, 0 when it failed or made none. */
static uint64_t commit_new(LanceDataset* d, const char* name, const uint8_t* const* ptrs, const size_t* lens,
                           size_t n) {
    LanceCommitIndexOptions o = {0};
    LanceCommitIndexResult r = {0};
    if (lance_dataset_commit_index_segments_v2(d, name, "vec", ptrs, lens, n, &o, &r) != 0) return 0;
    return r.already_committed ? 0 : r.version;
}

/* Whether a segment records exactly `fingerprint` (NULL: none). */
static int records_fingerprint(const uint8_t* bytes, size_t len, const char* fingerprint) {
    LanceIndexSegmentMetadata* m = NULL;
    if (!bytes || lance_index_segment_metadata_parse(bytes, len, &m) != 0) return 0;
    const char* fp = lance_index_segment_metadata_model_fingerprint(m);
    int same = fingerprint ? fp != NULL && strcmp(fp, fingerprint) == 0 : fp == NULL;
    lance_index_segment_metadata_free(m);
    return same;
}

/* Checks a segment's metadata against its assignment; its files are under
 * the dataset at `at`. */
static void check_metadata(const char* at, const uint8_t* bytes, size_t len, const uint8_t* uuid,
                           const uint32_t* fragment_ids, size_t nfrags, const char* type, int32_t field_id,
                           const char* fingerprint) {
    LanceIndexSegmentMetadata* m = NULL;
    CHECK_OK(lance_index_segment_metadata_parse(bytes, len, &m));
    if (!m) return;
    uint8_t got_uuid[16];
    CHECK_OK(lance_index_segment_metadata_uuid(m, got_uuid));
    if (uuid) CHECK(memcmp(got_uuid, uuid, 16) == 0);
    uint32_t got[64];
    size_t count = 0;
    CHECK_OK(lance_index_segment_metadata_fragment_ids(m, got, 64, &count));
    CHECK(count == nfrags);
    if (count == nfrags) CHECK(memcmp(got, fragment_ids, nfrags * sizeof(uint32_t)) == 0);
    CHECK(lance_index_segment_metadata_dataset_version(m) == 1);
    CHECK(strcmp(lance_index_segment_metadata_index_type_name(m), type) == 0);
    int32_t fields[4];
    CHECK_OK(lance_index_segment_metadata_field_ids(m, fields, 4, &count));
    CHECK(count == 1 && fields[0] == field_id);
    if (count == 1 && fields[0] != field_id) fprintf(stderr, "    field id %d, expected %d\n", fields[0], field_id);
    const char* fp = lance_index_segment_metadata_model_fingerprint(m);
    if (fingerprint) CHECK(fp != NULL && strcmp(fp, fingerprint) == 0);
    else CHECK(fp == NULL && lance_last_error_code() == LANCE_OK);
    int64_t ms = 0;
    bool present = false;
    CHECK_OK(lance_index_segment_metadata_created_at_ms(m, &ms, &present));
    CHECK(present && ms > 1600000000000LL);
    CHECK(lance_index_segment_metadata_index_version(m) >= 0);
    CHECK(strlen(lance_index_segment_metadata_name(m)) > 0);

    /* The files it lists are on disk under _indices/<uuid>/, with those sizes. */
    uint64_t nfiles = lance_index_segment_metadata_file_count(m);
    CHECK(nfiles > 0);
    char text[37];
    uuid_hex_format_dashed(got_uuid, text);
    for (uint64_t i = 0; i < nfiles; i++) {
        const char* path = NULL;
        uint64_t size = 0;
        CHECK_OK(lance_index_segment_metadata_file_at(m, (size_t)i, &path, &size));
        char full[1200];
        snprintf(full, sizeof full, "%s/_indices/%s/%s", at, text, path);
        CHECK(size > 0 && tu_file_size(full) == (int64_t)size);
    }
    const char* path;
    uint64_t size;
    CHECK_ERR(lance_index_segment_metadata_file_at(m, (size_t)nfiles, &path, &size), LANCE_ERR_INVALID_ARGUMENT);
    lance_index_segment_metadata_free(m);
}

static void test_shared_model_segments(void) {
    const LanceVectorIndexParams p = vector_params(LANCE_INDEX_IVF_PQ, 8, 8);
    LanceVectorModel* model = NULL;
    uint32_t sample[] = {0, 3, 5};
    CHECK_OK(lance_vector_model_train(ds, "vec", &p, sample, 3, NULL, &model));
    if (!model) return;
    LanceVectorModelInfo info;
    CHECK_OK(lance_vector_model_info(model, &info));
    CHECK(info.dimension == DIM && info.num_partitions == 8 && info.has_pq_codebook);
    CHECK(info.num_sub_vectors == 8 && info.num_bits == 8 && info.metric == LANCE_METRIC_L2);
    const char* fingerprint = lance_vector_model_fingerprint(model);
    CHECK(fingerprint && strlen(fingerprint) == 64);

    /* The model crosses a process boundary as bytes. */
    uint8_t* model_bytes = NULL;
    size_t model_len = 0;
    CHECK_OK(lance_vector_model_serialize(model, &model_bytes, &model_len));
    LanceVectorModel* shipped = NULL;
    CHECK_OK(lance_vector_model_parse(model_bytes, model_len, &shipped));
    const char* fp2 = lance_vector_model_fingerprint(shipped);
    CHECK(fp2 && strcmp(fp2, fingerprint) == 0);
    lance_free_string(fp2);

    /* Four workers, two fragments each, pre-assigned UUIDs, the shipped
       model set on every builder: none trains. */
    uint8_t* bytes[4];
    size_t lens[4];
    uint8_t uuids[4][16];
    for (int w = 0; w < 4; w++) {
        for (int i = 0; i < 16; i++) uuids[w][i] = (uint8_t)(0x10 * w + i + 1);
        uuids[w][6] = 0x40 | (uuids[w][6] & 0x0f); /* version 4 */
        uuids[w][8] = 0x80 | (uuids[w][8] & 0x3f);
        uint32_t fragment_ids[2] = {(uint32_t)(2 * w), (uint32_t)(2 * w + 1)};
        const LanceIndexSegmentBuildOptions o = fragment_options(fragment_ids, 2, MODE_AUTO, uuids[w]);
        bytes[w] = sk_execute(vector_segment_builder_new(ds, "vec", NULL, &p, &o, shipped), &lens[w], false);
        CHECK(bytes[w] != NULL);
        if (bytes[w])
            check_metadata(uri, bytes[w], lens[w], uuids[w], fragment_ids, 2, "IVF_PQ", VEC_FIELD_ID, fingerprint);
    }
    /* Nothing was committed. */
    CHECK(lance_dataset_latest_version(ds) == 1);
    LanceDataset* again = lance_dataset_open(uri, NULL, 0);
    CHECK(lance_dataset_version(again) == 1 && lance_dataset_index_count(again) == 0);
    lance_dataset_close(again);

    /* Committed together, the segments form one index whose search finds the
       true neighbours (re-ranked by exact distance). */
    LanceDataset* coord = lance_dataset_open(uri, NULL, 0);
    const uint8_t* ptrs[4] = {bytes[0], bytes[1], bytes[2], bytes[3]};
    CHECK(commit_new(coord, "pq_idx", ptrs, lens, 4) == 2);
    CHECK(lance_dataset_version(coord) == 2);
    CHECK(lance_dataset_index_segment_count(coord, "pq_idx") == 4);
    int hits = 0;
    for (int q = 0; q < 5; q++) {
        const float* query = data.vectors + (int64_t)(q * 701 + 5) * DIM;
        int64_t got[K], truth[K];
        CHECK(kk_ids(coord, query, DIM, K, 8, 5, got) == K);
        tu_brute_force_knn(&data, query, K, truth);
        for (int i = 0; i < K; i++)
            for (int j = 0; j < K; j++) hits += got[i] == truth[j];
    }
    CHECK(hits >= 40); /* recall@10 >= 0.8: k-means starts at random, so not higher */
    lance_dataset_close(coord);

    for (int w = 0; w < 4; w++) lance_free_bytes(bytes[w]);
    lance_free_string(fingerprint);
    lance_free_bytes(model_bytes);
    lance_vector_model_free(shipped);
    lance_vector_model_free(model);
}

/* Queries d's "split_idx" (two partitions, centroids +100 and -100 on every
 * axis) with one probe: the answers must be exactly the brute-force
 * neighbours among the rows on the query's side. */
static void check_split_answers(LanceDataset* d) {
    int differs = 0;
    for (int q = 0; q < 8; q++) {
        const float* query = data.vectors + (int64_t)(q * 487 + 3) * DIM;
        float qsum = 0;
        for (int j = 0; j < DIM; j++) qsum += query[j];
        /* Brute force over the rows on the query's side. */
        TuData side = {0, DIM, 0, 0, malloc(sizeof(float) * ROWS * DIM), malloc(sizeof(int64_t) * ROWS)};
        for (int64_t r = 0; r < ROWS; r++) {
            float sum = 0;
            for (int j = 0; j < DIM; j++) sum += data.vectors[r * DIM + j];
            if ((sum > 0) == (qsum > 0)) {
                memcpy(side.vectors + side.rows * DIM, data.vectors + r * DIM, sizeof(float) * DIM);
                side.ids[side.rows++] = r;
            }
        }
        int64_t expected[K], unrestricted[K], got[K];
        tu_brute_force_knn(&side, query, K, expected);
        tu_brute_force_knn(&data, query, K, unrestricted);
        differs += memcmp(expected, unrestricted, sizeof expected) != 0;
        CHECK(kk_ids(d, query, DIM, K, 1, 0, got) == K);
        CHECK(memcmp(got, expected, sizeof got) == 0);
        tu_free_data(&side);
    }
    /* The test can fail: for some queries the partition hides true neighbours. */
    CHECK(differs > 0);
}

/* Injected centroids +100 and -100 on every axis split the rows by the sign
 * of their coordinate sum.  With one probe, an index that really uses them
 * returns exactly the brute-force neighbours among the rows on the query's
 * side; an index that trained its own centroids would not.  The centroids
 * go in as Arrow arrays (PRECOMPUTED) to one copy of the data, and as a
 * model handle set after another model to a second copy: a later set_model
 * replaces the earlier, and the build uses (and records) the later one. */
static void test_injected_centroids_decide_partitions(void) {
    float centroids[2 * DIM];
    for (int j = 0; j < DIM; j++) {
        centroids[j] = 100.0f;
        centroids[DIM + j] = -100.0f;
    }
    struct ArrowArray arr;
    struct ArrowSchema sch;
    tu_f32_list(centroids, 2, DIM, -1, "f", &arr, &sch);
    LanceVectorModel* halves = NULL;
    CHECK_OK(lance_vector_model_from_arrow(LANCE_METRIC_L2, &arr, &sch, 0, 0, NULL, NULL, &halves));
    const LanceVectorIndexParams p = vector_params(LANCE_INDEX_IVF_FLAT, 0, 0);
    const LanceVectorIndexSegmentParams sp = vector_segment_params(&p);

    char sub[700];
    snprintf(sub, sizeof sub, "%s/split.lance", dir);
    LanceDataset* split = tu_write(sub, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS / FRAGS);
    snprintf(sub, sizeof sub, "%s/split_by_model.lance", dir);
    LanceDataset* by_model = tu_write(sub, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS / FRAGS);
    /* Another model of two partitions, trained on the data: set first, then replaced. */
    const LanceVectorIndexParams two = vector_params(LANCE_INDEX_IVF_FLAT, 2, 0);
    LanceVectorModel* trained = NULL;
    CHECK_OK(lance_vector_model_train(by_model, "vec", &two, NULL, 0, NULL, &trained));
    const char* f_halves = lance_vector_model_fingerprint(halves);
    const char* f_trained = lance_vector_model_fingerprint(trained);
    CHECK(f_halves && f_trained && strcmp(f_halves, f_trained) != 0);

    uint8_t* bytes[2][2];
    size_t lens[2][2];
    for (int w = 0; w < 2; w++) {
        uint32_t fragment_ids[4];
        for (int i = 0; i < 4; i++) fragment_ids[i] = (uint32_t)(4 * w + i);
        LanceIndexSegmentBuildOptions o = fragment_options(fragment_ids, 4, MODE_PRECOMPUTED, NULL);
        o.ivf_centroids = &arr;
        o.ivf_centroids_schema = &sch;
        LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_vector(split, "vec", "split_idx", &sp, &o);
        CHECK(b != NULL);
        bytes[0][w] = sk_execute(b, &lens[0][w], false);
        CHECK(bytes[0][w] != NULL);

        const LanceIndexSegmentBuildOptions mo = fragment_options(fragment_ids, 4, MODE_AUTO, NULL);
        b = lance_index_segment_builder_new_vector(by_model, "vec", "split_idx", &sp, &mo);
        CHECK(b != NULL);
        CHECK_OK(lance_index_segment_builder_set_model(b, trained));
        CHECK_OK(lance_index_segment_builder_set_model(b, halves));
        bytes[1][w] = sk_execute(b, &lens[1][w], false);
        CHECK(bytes[1][w] != NULL);
        /* One model, given either way, is one fingerprint. */
        CHECK(records_fingerprint(bytes[0][w], lens[0][w], f_halves));
        CHECK(records_fingerprint(bytes[1][w], lens[1][w], f_halves));
    }
    arr.release(&arr);
    sch.release(&sch);
    const uint8_t* ptrs[2] = {bytes[0][0], bytes[0][1]};
    CHECK(commit_new(split, "split_idx", ptrs, lens[0], 2) == 2);
    check_split_answers(split);
    const uint8_t* model_ptrs[2] = {bytes[1][0], bytes[1][1]};
    CHECK(commit_new(by_model, "split_idx", model_ptrs, lens[1], 2) == 2);
    check_split_answers(by_model);

    for (int i = 0; i < 4; i++) lance_free_bytes(bytes[i / 2][i % 2]);
    lance_free_string(f_halves);
    lance_free_string(f_trained);
    lance_vector_model_free(trained);
    lance_vector_model_free(halves);
    lance_dataset_close(by_model);
    lance_dataset_close(split);
}

static void test_scalar_segments(void) {
    uint32_t fragment_ids[] = {1, 2, 6};
    LanceIndexSegmentBuildOptions o = fragment_options(fragment_ids, 3, MODE_AUTO, NULL);
    uint8_t* bytes = NULL;
    size_t len = 0;
    LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_scalar(ds, "id", NULL, LANCE_SCALAR_BTREE, NULL, &o);
    CHECK(b != NULL);
    CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len));
    check_metadata(uri, bytes, len, NULL, fragment_ids, 3, "BTree", ID_FIELD_ID, NULL);
    lance_free_bytes(bytes);
    /* Single use. */
    CHECK_ERR(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("single-use"));
    lance_index_segment_builder_free(b);

    /* BITMAP honours a caller UUID; BTREE refuses one for a fragment subset. */
    uint8_t uuid[16] = {0xaa, 0xbb, 0xcc, 0xdd, 1, 2, 0x41, 4, 0x85, 6, 7, 8, 9, 10, 11, 12};
    o.index_uuid = uuid;
    b = lance_index_segment_builder_new_scalar(ds, "tag", "tag_bitmap", LANCE_SCALAR_BITMAP, NULL, &o);
    CHECK(b != NULL);
    CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len));
    check_metadata(uri, bytes, len, uuid, fragment_ids, 3, "Bitmap", TAG_FIELD_ID, NULL);
    lance_free_bytes(bytes);
    lance_index_segment_builder_free(b);
    CHECK(lance_index_segment_builder_new_scalar(ds, "id", NULL, LANCE_SCALAR_BTREE, NULL, &o) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_SUPPORTED);
    CHECK(tu_error_mentions("UUID"));

    /* LOCAL_TRAIN means what AUTO means for a scalar index. */
    o.index_uuid = NULL;
    o.mode = MODE_LOCAL_TRAIN;
    b = lance_index_segment_builder_new_scalar(ds, "id", NULL, LANCE_SCALAR_BTREE, NULL, &o);
    CHECK(b != NULL);
    bytes = sk_execute(b, &len, false);
    CHECK(bytes != NULL);
    if (bytes) check_metadata(uri, bytes, len, NULL, fragment_ids, 3, "BTree", ID_FIELD_ID, NULL);
    lance_free_bytes(bytes);

    /* Scalar options that make no sense: a precomputed model (vector builds
       only), a mode or a type out of range, parameters that are not JSON. */
    o.mode = MODE_PRECOMPUTED;
    CHECK(lance_index_segment_builder_new_scalar(ds, "id", NULL, LANCE_SCALAR_BTREE, NULL, &o) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("precomputed model, which only vector builds take"));
    o.mode = 3;
    CHECK(lance_index_segment_builder_new_scalar(ds, "id", NULL, LANCE_SCALAR_BTREE, NULL, &o) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("options->mode = 3"));
    o.mode = MODE_AUTO;
    CHECK(lance_index_segment_builder_new_scalar(ds, "id", NULL, 77, NULL, &o) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_index_segment_builder_new_scalar(ds, "id", NULL, LANCE_SCALAR_BTREE, "{oops", &o) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_latest_version(ds) == 1);
}

/* A constructor call that must return NULL with `code` and a message naming `text`. */
#define EXPECT_REFUSED(call, code, text)            \
    do {                                            \
        LanceIndexSegmentBuilder* refused = (call); \
        CHECK(refused == NULL);                     \
        CHECK(lance_last_error_code() == (code));   \
        CHECK(tu_error_mentions(text));             \
        lance_index_segment_builder_free(refused);  \
    } while (0)

/* A vector builder on "vec" with `sp` and `o`: refused with
 * LANCE_ERR_INVALID_ARGUMENT and a message naming `text`. */
static void check_vector_refused(const LanceVectorIndexSegmentParams* sp, const LanceIndexSegmentBuildOptions* o,
                                 const char* text) {
    EXPECT_REFUSED(lance_index_segment_builder_new_vector(ds, "vec", NULL, sp, o), LANCE_ERR_INVALID_ARGUMENT, text);
}

static void test_validation(void) {
    const LanceVectorIndexParams p = vector_params(LANCE_INDEX_IVF_FLAT, 4, 0);
    const LanceVectorIndexSegmentParams sp = vector_segment_params(&p);
    LanceIndexSegmentBuildOptions o = {0};

    /* A column that holds no vectors is named, with its type. */
    EXPECT_REFUSED(lance_index_segment_builder_new_vector(ds, "id", NULL, &sp, &o), LANCE_ERR_INVALID_ARGUMENT,
                   "column 'id' is not a vector column (a FixedSizeList, or a list of them); it holds Int64");

    uint32_t unknown[] = {0, 99};
    o.fragment_ids = unknown;
    o.fragment_count = 2;
    check_vector_refused(&sp, &o, "options->fragment_ids[1] = 99 is not a fragment of dataset version 1");
    uint32_t dup[] = {3, 4, 3};
    o.fragment_ids = dup;
    o.fragment_count = 3;
    check_vector_refused(&sp, &o, "options->fragment_ids[2] = 3 is listed twice");
    o.fragment_count = 0;
    check_vector_refused(&sp, &o, "empty list");
    o.fragment_ids = NULL;
    o.fragment_count = 3;
    check_vector_refused(&sp, &o, "NULL but its count is 3");
    o.fragment_count = 0;
    /* A worker that must never train: PRECOMPUTED without the model's
       arrays fails here instead of training. */
    o.mode = MODE_PRECOMPUTED;
    check_vector_refused(&sp, &o, "options->mode is LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED but no model is given");
    o.mode = 5;
    check_vector_refused(&sp, &o, "options->mode = 5");
    o.mode = MODE_AUTO;
    EXPECT_REFUSED(lance_index_segment_builder_new_vector(ds, "nope", NULL, &sp, &o), LANCE_ERR_NOT_FOUND, "'nope'");
    EXPECT_REFUSED(lance_index_segment_builder_new_vector(ds, "vec", NULL, NULL, &o), LANCE_ERR_INVALID_ARGUMENT,
                   "params");
    EXPECT_REFUSED(lance_index_segment_builder_new_vector(NULL, "vec", NULL, &sp, &o), LANCE_ERR_INVALID_ARGUMENT,
                   "dataset");
    EXPECT_REFUSED(lance_index_segment_builder_new_vector(ds, "vec", "", &sp, &o), LANCE_ERR_INVALID_ARGUMENT,
                   "index_name");

    /* Arrow arrays that do not make the model an IVF_PQ build needs (the
       models given to set_model are test_set_model_refusals'). */
    LanceVectorModel* model = NULL;
    const LanceVectorIndexParams mp = vector_params(LANCE_INDEX_IVF_PQ, 4, 8);
    const LanceVectorIndexSegmentParams smp = vector_segment_params(&mp);
    CHECK_OK(lance_vector_model_train(ds, "vec", &mp, NULL, 0, NULL, &model));
    struct ArrowArray arr, book;
    struct ArrowSchema sch, book_s;
    CHECK_OK(lance_vector_model_centroids(model, &arr, &sch));
    CHECK_OK(lance_vector_model_codebook(model, &book, &book_s));
    /* Centroids without the codebook an IVF_PQ build needs. */
    o.ivf_centroids = &arr;
    o.ivf_centroids_schema = &sch;
    check_vector_refused(&smp, &o, "needs its PQ codebook");
    /* A codebook without centroids. */
    o.ivf_centroids = NULL;
    o.pq_codebook = &book;
    o.pq_codebook_schema = &book_s;
    check_vector_refused(&smp, &o, "needs options->ivf_centroids");
    o.pq_codebook = NULL;
    /* Centroids of the wrong dimension, with a null row, of the wrong type. */
    const float wrong[4 * 16] = {0};
    const float* values = (const float*)arr.children[0]->buffers[1];
    const struct {
        const float* values;
        int32_t dim;
        int64_t null_row;
        const char* element_format;
        const char* named;
    } bad_centroids[] = {
        {wrong, 16, -1, "f", "dimension 16"},
        {values, DIM, 1, "f", "null"},
        {values, DIM, -1, "e", "float32"},
    };
    for (size_t i = 0; i < sizeof bad_centroids / sizeof bad_centroids[0]; i++) {
        struct ArrowArray w;
        struct ArrowSchema w_s;
        tu_f32_list(bad_centroids[i].values, 4, bad_centroids[i].dim, bad_centroids[i].null_row,
                    bad_centroids[i].element_format, &w, &w_s);
        o.ivf_centroids = &w;
        o.ivf_centroids_schema = &w_s;
        check_vector_refused(&sp, &o, bad_centroids[i].named);
        w.release(&w);
        w_s.release(&w_s);
    }
    /* A released array. */
    struct ArrowArray dead = arr;
    dead.release = NULL;
    o.ivf_centroids = &dead;
    o.ivf_centroids_schema = &sch;
    check_vector_refused(&sp, &o, "released");
    /* LOCAL_TRAIN trains: a model in its options is refused. */
    o.ivf_centroids = &arr;
    o.mode = MODE_LOCAL_TRAIN;
    check_vector_refused(&sp, &o, "LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN but the options hold a model");

    arr.release(&arr);
    sch.release(&sch);
    book.release(&book);
    book_s.release(&book_s);
    lance_vector_model_free(model);

    uint8_t* out;
    size_t out_len;
    CHECK_ERR(lance_index_segment_builder_execute_uncommitted(NULL, &out, &out_len), LANCE_ERR_INVALID_ARGUMENT);
    lance_index_segment_builder_free(NULL);
    CHECK(lance_dataset_latest_version(ds) == 1);
}

/* ---- lance_index_segment_builder_set_model ---- */

static const uint32_t two_frags[] = {2, 5};

/* Options over fragments {2, 5} in `mode`, under `uuid` (NULL = generated). */
static LanceIndexSegmentBuildOptions on_two_frags(int32_t mode, const uint8_t* uuid) {
    return fragment_options(two_frags, 2, mode, uuid);
}

/* A vector builder on ds's "vec" that must be made. */
static LanceIndexSegmentBuilder* vector_builder(const LanceVectorIndexParams* p,
                                                const LanceIndexSegmentBuildOptions* o) {
    const LanceVectorIndexSegmentParams sp = vector_segment_params(p);
    LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_vector(ds, "vec", NULL, &sp, o);
    CHECK(b != NULL);
    return b;
}

/* Executes (and frees) a builder over fragments {2, 5} of ds and checks
 * what its segment records. */
static void check_builds(LanceIndexSegmentBuilder* b, const uint8_t* uuid, const char* type, int32_t field_id,
                         const char* fingerprint) {
    size_t len = 0;
    uint8_t* bytes = sk_execute(b, &len, false);
    CHECK(bytes != NULL);
    if (bytes) check_metadata(uri, bytes, len, uuid, two_frags, 2, type, field_id, fingerprint);
    lance_free_bytes(bytes);
}

/* set_model refuses with LANCE_ERR_INVALID_ARGUMENT and a message naming `text`. */
#define SET_MODEL_REFUSED(builder, model, text)                                                       \
    do {                                                                                              \
        CHECK_ERR(lance_index_segment_builder_set_model(builder, model), LANCE_ERR_INVALID_ARGUMENT); \
        CHECK(tu_error_mentions(text));                                                               \
    } while (0)

/* Every refusal of set_model, each leaving the builder as it was: a builder
 * that had no model still trains (its segment records no fingerprint), one
 * with a model keeps it, and the fragments, UUID and type are unchanged. */
static void test_set_model_refusals(void) {
    const LanceVectorIndexParams fp = vector_params(LANCE_INDEX_IVF_FLAT, 4, 0);
    const LanceVectorIndexParams pp = vector_params(LANCE_INDEX_IVF_PQ, 4, 8);
    LanceVectorIndexParams cp = fp;
    cp.metric = LANCE_METRIC_COSINE;
    const uint32_t sample[] = {0, 1};
    const LanceVectorIndexParams pp4 = vector_params(LANCE_INDEX_IVF_PQ, 4, 4);
    LanceVectorModel *flat = NULL, *other = NULL, *pq = NULL, *pq4 = NULL, *cosine = NULL, *narrow = NULL;
    CHECK_OK(lance_vector_model_train(ds, "vec", &fp, NULL, 0, NULL, &flat));
    CHECK_OK(lance_vector_model_train(ds, "vec", &fp, sample, 2, NULL, &other)); /* another model, same shape */
    CHECK_OK(lance_vector_model_train(ds, "vec", &pp, NULL, 0, NULL, &pq));
    CHECK_OK(lance_vector_model_train(ds, "vec", &pp4, NULL, 0, NULL, &pq4));
    CHECK_OK(lance_vector_model_train(ds, "vec", &cp, NULL, 0, NULL, &cosine));
    /* A model of dimension 16, trained on a dataset of that dimension. */
    TuData sixteen = tu_make_data(400, 16, 4, 1.0f, 91);
    char sub[700];
    snprintf(sub, sizeof sub, "%s/narrow.lance", dir);
    LanceDataset* nd = tu_write(sub, &sixteen, 0, sixteen.rows, LANCE_WRITE_CREATE, 200);
    CHECK(nd != NULL);
    CHECK_OK(lance_vector_model_train(nd, "vec", &fp, NULL, 0, NULL, &narrow));
    lance_dataset_close(nd);
    tu_free_data(&sixteen);
    const char* f_flat = lance_vector_model_fingerprint(flat);
    const char* f_other = lance_vector_model_fingerprint(other);
    const char* f_pq = lance_vector_model_fingerprint(pq);
    const char* f_pq4 = lance_vector_model_fingerprint(pq4);
    CHECK(f_flat && f_other && f_pq && f_pq4 && strcmp(f_flat, f_other) != 0 && strcmp(f_pq, f_pq4) != 0);

    /* No builder. */
    SET_MODEL_REFUSED(NULL, flat, "builder must not be NULL");

    /* An AUTO IVF_FLAT builder: no model, or one of another metric, another
       dimension (another dataset's), or with a PQ codebook. */
    uint8_t uuid[16];
    tu_uuid(601, uuid);
    LanceIndexSegmentBuildOptions o = on_two_frags(MODE_AUTO, uuid);
    LanceIndexSegmentBuilder* b = vector_builder(&fp, &o);
    SET_MODEL_REFUSED(b, NULL, "model must not be NULL");
    SET_MODEL_REFUSED(b, cosine, "the model was trained for metric 1, the builder's params->metric is 0");
    SET_MODEL_REFUSED(b, narrow, "the model has dimension 16, column 'vec' has 32");
    SET_MODEL_REFUSED(b, pq, "the model has a PQ codebook but params->index_type = 101 does not use PQ");
    check_builds(b, uuid, "IVF_FLAT", VEC_FIELD_ID, NULL);

    /* params->num_partitions = 6, a model of 4. */
    LanceVectorIndexParams six = fp;
    six.num_partitions = 6;
    o = on_two_frags(MODE_AUTO, NULL);
    b = vector_builder(&six, &o);
    SET_MODEL_REFUSED(b, flat, "the model has 4 IVF partitions, params->num_partitions is 6");
    check_builds(b, NULL, "IVF_FLAT", VEC_FIELD_ID, NULL);

    /* IVF_PQ: a model without a codebook; PQ shapes that disagree with the
       params' non-zero fields; zero fields take the model's. */
    b = vector_builder(&pp, &o);
    SET_MODEL_REFUSED(b, flat, "an IVF_PQ or IVF_HNSW_PQ build with a given model needs its PQ codebook too");
    check_builds(b, NULL, "IVF_PQ", VEC_FIELD_ID, NULL);
    LanceVectorIndexParams shape = pp;
    shape.num_sub_vectors = 4;
    b = vector_builder(&shape, &o);
    SET_MODEL_REFUSED(b, pq, "the model's PQ shape (8 sub-vectors, 8 bits) disagrees with params (4, 0)");
    check_builds(b, NULL, "IVF_PQ", VEC_FIELD_ID, NULL);
    shape.num_sub_vectors = 0;
    shape.num_bits = 4;
    b = vector_builder(&shape, &o);
    SET_MODEL_REFUSED(b, pq, "the model's PQ shape (8 sub-vectors, 8 bits) disagrees with params (0, 4)");
    lance_index_segment_builder_free(b);
    shape.num_bits = 0;
    b = vector_builder(&shape, &o);
    CHECK_OK(lance_index_segment_builder_set_model(b, pq));
    check_builds(b, NULL, "IVF_PQ", VEC_FIELD_ID, f_pq);
    /* ... and a later model of another PQ shape replaces them: the params
       stay as the builder was made. */
    b = vector_builder(&shape, &o);
    CHECK_OK(lance_index_segment_builder_set_model(b, pq));
    CHECK_OK(lance_index_segment_builder_set_model(b, pq4));
    check_builds(b, NULL, "IVF_PQ", VEC_FIELD_ID, f_pq4);

    /* A scalar builder. */
    b = lance_index_segment_builder_new_scalar(ds, "tag", NULL, LANCE_SCALAR_BITMAP, NULL, &o);
    CHECK(b != NULL);
    SET_MODEL_REFUSED(b, flat, "a scalar segment builder takes no vector model");
    check_builds(b, NULL, "Bitmap", TAG_FIELD_ID, NULL);

    /* Options holding the model as Arrow arrays, PRECOMPUTED or AUTO: one
       model per builder, the arrays' stays. */
    struct ArrowArray arr;
    struct ArrowSchema sch;
    CHECK_OK(lance_vector_model_centroids(flat, &arr, &sch));
    const int32_t with_arrays[] = {MODE_PRECOMPUTED, MODE_AUTO};
    for (int i = 0; i < 2; i++) {
        o = on_two_frags(with_arrays[i], NULL);
        o.ivf_centroids = &arr;
        o.ivf_centroids_schema = &sch;
        b = vector_builder(&fp, &o);
        SET_MODEL_REFUSED(b, other, "the builder's options already hold a model (options->ivf_centroids)");
        check_builds(b, NULL, "IVF_FLAT", VEC_FIELD_ID, f_flat);
    }
    arr.release(&arr);
    sch.release(&sch);

    /* LOCAL_TRAIN trains and refuses a model. */
    o = on_two_frags(MODE_LOCAL_TRAIN, NULL);
    b = vector_builder(&fp, &o);
    SET_MODEL_REFUSED(b, flat, "the builder was made with LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN");
    check_builds(b, NULL, "IVF_FLAT", VEC_FIELD_ID, NULL);

    /* A later model replaces the earlier; a refused one leaves the model
       set before; once executed, the builder takes none. */
    o = on_two_frags(MODE_AUTO, NULL);
    b = vector_builder(&fp, &o);
    CHECK_OK(lance_index_segment_builder_set_model(b, flat));
    CHECK_OK(lance_index_segment_builder_set_model(b, other));
    SET_MODEL_REFUSED(b, cosine, "metric");
    SET_MODEL_REFUSED(b, narrow, "dimension");
    uint8_t* bytes = NULL;
    size_t len = 0;
    CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len));
    if (bytes) check_metadata(uri, bytes, len, NULL, two_frags, 2, "IVF_FLAT", VEC_FIELD_ID, f_other);
    lance_free_bytes(bytes);
    SET_MODEL_REFUSED(b, flat, "the segment builder was already executed");
    SET_MODEL_REFUSED(b, NULL, "the segment builder was already executed");
    lance_index_segment_builder_free(b);

    lance_free_string(f_flat);
    lance_free_string(f_other);
    lance_free_string(f_pq);
    lance_free_string(f_pq4);
    lance_vector_model_free(flat);
    lance_vector_model_free(other);
    lance_vector_model_free(pq);
    lance_vector_model_free(pq4);
    lance_vector_model_free(cosine);
    lance_vector_model_free(narrow);
    CHECK(lance_dataset_latest_version(ds) == 1);
}

/* The progress events of one build that tell whether it trained. */
typedef struct {
    int train_ivf[4];         /* the first events of stage "train_ivf" */
    int train_ivf_events;     /* all of them */
    int train_ivf_progress;   /* its STAGE_PROGRESS events (k-means iterations) */
    int completes;            /* STAGE_COMPLETE events of every stage */
    int completes_with_count; /* ... of them with completed != 0 */
} TrainEvents;

static void record_training(void* ctx, int32_t event, const char* stage, uint64_t total, const char* unit,
                            uint64_t completed) {
    TrainEvents* e = ctx;
    (void)total, (void)unit;
    if (strcmp(stage, "train_ivf") == 0) {
        if (e->train_ivf_events < 4) e->train_ivf[e->train_ivf_events] = event;
        e->train_ivf_events++;
        e->train_ivf_progress += event == LANCE_INDEX_BUILD_PROGRESS_STAGE_PROGRESS;
    }
    if (event == LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE) {
        e->completes++;
        e->completes_with_count += completed != 0;
    }
}

/* Nothing trained: "train_ivf" started and completed at once.  STAGE_COMPLETE
 * events carry completed = 0. */
static int trained_nothing(const TrainEvents* e) {
    return e->train_ivf_events == 2 && e->train_ivf[0] == LANCE_INDEX_BUILD_PROGRESS_STAGE_START &&
           e->train_ivf[1] == LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE && e->completes > 0 &&
           e->completes_with_count == 0;
}

/* A model given by set_model builds what the same model given as Arrow
 * arrays (its centroids and codebook exported) builds: two copies of the
 * data, each indexed by two IVF_PQ segments, one copy's through set_model,
 * the other's through PRECOMPUTED arrays.  Neither trains; both record the
 * model's fingerprint; committed, they answer every query with the same
 * ids. */
static void test_set_model_builds_as_arrow_arrays(void) {
    const LanceVectorIndexParams p = vector_params(LANCE_INDEX_IVF_PQ, 8, 8);
    LanceVectorModel* model = NULL;
    CHECK_OK(lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model));
    if (!model) return;
    const char* fingerprint = lance_vector_model_fingerprint(model);
    struct ArrowArray centroids, codebook;
    struct ArrowSchema centroids_s, codebook_s;
    CHECK_OK(lance_vector_model_centroids(model, &centroids, &centroids_s));
    CHECK_OK(lance_vector_model_codebook(model, &codebook, &codebook_s));
    const LanceVectorIndexSegmentParams sp = vector_segment_params(&p);

    const char* names[2] = {"by_handle", "by_arrays"};
    LanceDataset* copies[2];
    for (int c = 0; c < 2; c++) {
        char sub[700];
        snprintf(sub, sizeof sub, "%s/%s.lance", dir, names[c]);
        copies[c] = tu_write(sub, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS / FRAGS);
        CHECK(copies[c] != NULL);
        uint8_t* bytes[2];
        size_t lens[2];
        for (int w = 0; w < 2; w++) {
            uint32_t fragment_ids[4];
            for (int i = 0; i < 4; i++) fragment_ids[i] = (uint32_t)(4 * w + i);
            LanceIndexSegmentBuildOptions o =
                fragment_options(fragment_ids, 4, c == 1 ? MODE_PRECOMPUTED : MODE_AUTO, NULL);
            if (c == 1) {
                o.ivf_centroids = &centroids;
                o.ivf_centroids_schema = &centroids_s;
                o.pq_codebook = &codebook;
                o.pq_codebook_schema = &codebook_s;
            }
            LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_vector(copies[c], "vec", NULL, &sp, &o);
            CHECK(b != NULL);
            if (c == 0) CHECK_OK(lance_index_segment_builder_set_model(b, model));
            TrainEvents e = {{0}, 0, 0, 0, 0};
            CHECK_OK(lance_index_segment_builder_set_progress_callback(b, record_training, &e));
            bytes[w] = sk_execute(b, &lens[w], false);
            CHECK(bytes[w] != NULL);
            CHECK(records_fingerprint(bytes[w], lens[w], fingerprint));
            CHECK(trained_nothing(&e));
        }
        const uint8_t* ptrs[2] = {bytes[0], bytes[1]};
        CHECK(commit_new(copies[c], "pq_idx", ptrs, lens, 2) == 2);
        lance_free_bytes(bytes[0]);
        lance_free_bytes(bytes[1]);
    }
    /* Two probes of eight partitions, no refinement: each answer depends on
       the partitions and the PQ codes. */
    for (int q = 0; q < 10; q++) {
        const float* query = data.vectors + (int64_t)((q * 613 + 11) % ROWS) * DIM;
        int64_t by_handle[K], by_arrays[K];
        CHECK(kk_ids(copies[0], query, DIM, K, 2, 0, by_handle) == K);
        CHECK(kk_ids(copies[1], query, DIM, K, 2, 0, by_arrays) == K);
        CHECK(memcmp(by_handle, by_arrays, sizeof by_handle) == 0);
    }

    /* The check of training can fail: a build without a model reports its
       k-means iterations in "train_ivf". */
    LanceIndexSegmentBuildOptions o = on_two_frags(MODE_AUTO, NULL);
    LanceIndexSegmentBuilder* b = vector_builder(&p, &o);
    TrainEvents e = {{0}, 0, 0, 0, 0};
    CHECK_OK(lance_index_segment_builder_set_progress_callback(b, record_training, &e));
    size_t len = 0;
    uint8_t* bytes = sk_execute(b, &len, false);
    CHECK(bytes != NULL && records_fingerprint(bytes, len, NULL));
    CHECK(!trained_nothing(&e) && e.train_ivf_progress > 0 && e.completes_with_count == 0);
    lance_free_bytes(bytes);

    centroids.release(&centroids);
    centroids_s.release(&centroids_s);
    codebook.release(&codebook);
    codebook_s.release(&codebook_s);
    lance_free_string(fingerprint);
    lance_vector_model_free(model);
    lance_dataset_close(copies[0]);
    lance_dataset_close(copies[1]);
}

/* An AUTO builder over fragments holding fewer rows than num_partitions:
 * made, since a model may still be set; with one it builds, without one its
 * execute refuses before writing anything.  LOCAL_TRAIN is refused when
 * made. */
static void test_auto_checks_partitions_at_execute(void) {
    TuData tiny = tu_make_data(64, DIM, 4, 1.0f, 41);
    char at[700], indices[800];
    snprintf(at, sizeof at, "%s/tiny.lance", dir);
    snprintf(indices, sizeof indices, "%s/_indices", at);
    LanceDataset* t = tu_write(at, &tiny, 0, tiny.rows, LANCE_WRITE_CREATE, 8); /* 8 fragments of 8 rows */
    CHECK(t != NULL && lance_dataset_fragment_count(t) == 8);
    const LanceVectorIndexParams p = vector_params(LANCE_INDEX_IVF_FLAT, 16, 0);
    const LanceVectorIndexSegmentParams sp = vector_segment_params(&p);
    LanceVectorModel* model = NULL;
    CHECK_OK(lance_vector_model_train(t, "vec", &p, NULL, 0, NULL, &model)); /* on all 64 rows */
    const char* fingerprint = lance_vector_model_fingerprint(model);
    const char* too_few = "num_partitions = 16 is more than the 8 rows to train on (in the given fragments)";
    const uint32_t first[] = {0};
    uint8_t uuid[16];
    tu_uuid(611, uuid);
    LanceIndexSegmentBuildOptions o = fragment_options(first, 1, MODE_LOCAL_TRAIN, uuid);
    struct stat st;
    CHECK(stat(indices, &st) == -1 && errno == ENOENT); /* no index built here yet */

    /* LOCAL_TRAIN must train: refused when made. */
    EXPECT_REFUSED(lance_index_segment_builder_new_vector(t, "vec", NULL, &sp, &o), LANCE_ERR_INVALID_ARGUMENT,
                   too_few);
    /* AUTO: made; without a model, its execute refuses and writes nothing. */
    o.mode = MODE_AUTO;
    LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_vector(t, "vec", NULL, &sp, &o);
    CHECK(b != NULL);
    uint8_t* bytes = NULL;
    size_t len = 0;
    CHECK_ERR(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions(too_few));
    /* A builder runs once, even when it failed: too late for the model. */
    SET_MODEL_REFUSED(b, model, "the segment builder was already executed");
    lance_index_segment_builder_free(b);
    CHECK(stat(indices, &st) == -1 && errno == ENOENT);

    /* With the model, the same build (its UUID still free) is made. */
    b = lance_index_segment_builder_new_vector(t, "vec", NULL, &sp, &o);
    CHECK(b != NULL);
    CHECK_OK(lance_index_segment_builder_set_model(b, model));
    bytes = sk_execute(b, &len, false);
    CHECK(bytes != NULL);
    if (bytes) check_metadata(at, bytes, len, uuid, first, 1, "IVF_FLAT", VEC_FIELD_ID, fingerprint);
    /* Committed, probing every partition: exact k-NN over all 64 rows (the
       other fragments unindexed). */
    const uint8_t* ptrs[1] = {bytes};
    CHECK(commit_new(t, "tiny_idx", ptrs, &len, 1) == 2);
    int mismatches = -1;
    CHECK(tu_recall(t, &tiny, 8, 16, 0, &mismatches) == 1.0 && mismatches == 0);

    lance_free_bytes(bytes);
    lance_free_string(fingerprint);
    lance_vector_model_free(model);
    lance_dataset_close(t);
    tu_free_data(&tiny);
}

/* Every vector type the core builds over a fragment subset from a given
 * model, and a fragment-scoped INVERTED segment. */
static void test_other_segment_types(void) {
    const LanceVectorIndexParams fp = vector_params(LANCE_INDEX_IVF_FLAT, 4, 0);
    LanceVectorModel* model = NULL;
    CHECK_OK(lance_vector_model_train(ds, "vec", &fp, NULL, 0, NULL, &model));
    const char* fingerprint = lance_vector_model_fingerprint(model);
    struct {
        LanceVectorIndexType type;
        const char* name;
    } cases[] = {{LANCE_INDEX_IVF_FLAT, "IVF_FLAT"},
                 {LANCE_INDEX_IVF_SQ, "IVF_SQ"},
                 {LANCE_INDEX_IVF_HNSW_FLAT, "IVF_HNSW_FLAT"},
                 {LANCE_INDEX_IVF_HNSW_SQ, "IVF_HNSW_SQ"},
                 {LANCE_INDEX_IVF_RQ, "IVF_RQ"}};
    uint32_t fragment_ids[] = {2, 5};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        LanceVectorIndexParams p = fp;
        p.index_type = cases[c].type;
        const LanceIndexSegmentBuildOptions o = fragment_options(fragment_ids, 2, MODE_AUTO, NULL);
        size_t len = 0;
        uint8_t* bytes = sk_execute(vector_segment_builder_new(ds, "vec", NULL, &p, &o, model), &len, false);
        CHECK(bytes != NULL);
        if (bytes) check_metadata(uri, bytes, len, NULL, fragment_ids, 2, cases[c].name, VEC_FIELD_ID, fingerprint);
        else fprintf(stderr, "    %s segment failed\n", cases[c].name);
        lance_free_bytes(bytes);
    }
    lance_free_string(fingerprint);
    lance_vector_model_free(model);

    const LanceIndexSegmentBuildOptions o = fragment_options(fragment_ids, 2, MODE_AUTO, NULL);
    LanceIndexSegmentBuilder* b =
        lance_index_segment_builder_new_scalar(ds, "tag", "tag_fts", LANCE_SCALAR_INVERTED, NULL, &o);
    CHECK(b != NULL);
    uint8_t* bytes = NULL;
    size_t len = 0;
    CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len));
    if (bytes) check_metadata(uri, bytes, len, NULL, fragment_ids, 2, "Inverted", TAG_FIELD_ID, NULL);
    lance_free_bytes(bytes);
    lance_index_segment_builder_free(b);
    CHECK(lance_dataset_latest_version(ds) == 1);
}

static void test_whole_dataset_and_counts(void) {
    /* NULL options: the whole dataset, a generated UUID, local training. */
    const LanceVectorIndexParams p = vector_params(LANCE_INDEX_IVF_SQ, 4, 0);
    size_t len = 0;
    uint8_t* bytes = sk_execute(vector_segment_builder_new(ds, "vec", NULL, &p, NULL, NULL), &len, false);
    CHECK(bytes != NULL);
    uint32_t all[FRAGS];
    for (uint32_t i = 0; i < FRAGS; i++) all[i] = i;
    if (bytes) check_metadata(uri, bytes, len, NULL, all, FRAGS, "IVF_SQ", VEC_FIELD_ID, NULL);
    /* Asking for the fragment count only, then a buffer that is too small. */
    LanceIndexSegmentMetadata* m = NULL;
    CHECK_OK(lance_index_segment_metadata_parse(bytes, len, &m));
    size_t count = 0;
    CHECK_OK(lance_index_segment_metadata_fragment_ids(m, NULL, 0, &count));
    CHECK(count == FRAGS);
    uint32_t few[2];
    CHECK_ERR(lance_index_segment_metadata_fragment_ids(m, few, 2, &count), LANCE_ERR_INVALID_ARGUMENT);
    lance_index_segment_metadata_free(m);
    lance_free_bytes(bytes);
    CHECK(lance_dataset_latest_version(ds) == 1);
}

int main(void) {
    data = tu_make_data(ROWS, DIM, 16, 1.0f, 77);
    dir = tu_temp_dir("segment");
    snprintf(uri, sizeof uri, "%s/seg.lance", dir);
    ds = tu_write(uri, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS / FRAGS);
    CHECK(ds != NULL && lance_dataset_fragment_count(ds) == FRAGS);
    RUN(test_scalar_segments);
    RUN(test_validation);
    RUN(test_set_model_refusals);
    RUN(test_set_model_builds_as_arrow_arrays);
    RUN(test_auto_checks_partitions_at_execute);
    RUN(test_whole_dataset_and_counts);
    RUN(test_other_segment_types);
    /* The first commit to seg.lance (through another handle): last. */
    RUN(test_shared_model_segments);
    RUN(test_injected_centroids_decide_partitions);
    lance_dataset_close(ds);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_segment");
}
