/* The distributed index build as a program written for upstream lance-c
 * writes it: only upstream's functions, types and enum values
 * (../shared/lance-c-upstream-interface.md, section 3.17).  Models from
 * lance_index_train_ivf_model() / lance_index_train_pq_model(), disjoint
 * fragment groups, one lance_index_segment_builder_new_vector() per group
 * with upstream's options and build modes, the progress callback, the
 * metadata getters, and the 6-parameter commit with upstream's semantics:
 * coverage-driven replacement, independently trained segments accepted,
 * every problem with the set LANCE_ERR_INVALID_ARGUMENT.  One code is this
 * library's own: a build that reuses a committed segment's UUID is refused
 * with LANCE_ERR_DUPLICATE_SEGMENT (upstream has no such check).  The
 * helpers of test_util.h only make data, compute brute-force k-NN and
 * assert (tu_check_progress_events(): the progress contract). */
#include <pthread.h>
#include <string.h>

#include "knn_kit.h"
#include "progress_kit.h"
#include "segment_kit.h"
#include "test_util.h"

#define ROWS 4000
#define DIM 16
#define FRAGS 8
#define ROWS_PER_FRAG 500
#define K 10
#define PARTITIONS 8
#define SUB_VECTORS 4
#define BITS 8

static TuData data;
static char* dir;

/* Lance numbers top-level fields first: id = 0, vec = 1, tag = 2. */
#define ID_FIELD_ID 0
#define VEC_FIELD_ID 1

/* ---- the dataset ---- */

/* A fresh 8-fragment dataset of `data` at <dir>/<name>.lance (version 1). */
static LanceDataset* make_dataset(const char* name, uint32_t fragment_ids[FRAGS]) {
    char uri[700];
    snprintf(uri, sizeof uri, "%s/%s.lance", dir, name);
    LanceDataset* ds = tu_write(uri, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS_PER_FRAG);
    CHECK(ds != NULL);
    if (!ds) return NULL;
    CHECK(lance_dataset_version(ds) == 1);
    CHECK(lance_dataset_fragment_count(ds) == FRAGS);
    uint64_t ids[FRAGS];
    CHECK_OK(lance_dataset_fragment_ids(ds, ids));
    for (int i = 0; i < FRAGS; i++) fragment_ids[i] = (uint32_t)ids[i];
    return ds;
}

/* ---- progress: pk_record() is thread-safe, as upstream requires of the
 * callback; every finished build reports some progress ---- */

static PkRecorder* progress; /* made by main() */

/* ---- segments ---- */

typedef struct {
    uint8_t* bytes;
    size_t len;
    uint8_t uuid[16];
} Segment;

static void free_segment(Segment* s) {
    lance_free_bytes(s->bytes);
    s->bytes = NULL;
}

/* Builds one vector segment over `fragment_ids` with a progress callback; returns 0 or -1. */
static int build_vector(const LanceDataset* ds, const LanceVectorIndexSegmentParams* params,
                        LanceIndexSegmentBuildOptions* options, int uuid_seed, Segment* out) {
    memset(out, 0, sizeof *out);
    tu_uuid(uuid_seed, out->uuid);
    options->index_uuid = out->uuid;
    LanceIndexSegmentBuilder* builder = lance_index_segment_builder_new_vector(ds, "vec", "vec_idx", params, options);
    CHECK(builder != NULL);
    if (!builder) return -1;
    pk_recorder_reset(progress);
    CHECK_OK(lance_index_segment_builder_set_progress_callback(builder, pk_record, progress));
    int rc = lance_index_segment_builder_execute_uncommitted(builder, &out->bytes, &out->len);
    CHECK(rc == 0);
    if (rc == 0) {
        pk_check_events(progress, 1, 1);
        /* After an execute the setter is refused. */
        CHECK_ERR(lance_index_segment_builder_set_progress_callback(builder, pk_record, progress),
                  LANCE_ERR_INVALID_ARGUMENT);
    }
    lance_index_segment_builder_free(builder);
    return rc;
}

/* Executes (and frees) a builder that must fail with `code` before it
 * builds anything: no bytes, and the dataset still at `version`. */
static void check_refused_at_execute(const LanceDataset* ds, LanceIndexSegmentBuilder* builder, LanceErrorCode code,
                                     uint64_t version) {
    CHECK(builder != NULL);
    if (!builder) return;
    uint8_t* bytes = NULL;
    size_t len = 0;
    CHECK_ERR(lance_index_segment_builder_execute_uncommitted(builder, &bytes, &len), code);
    CHECK(bytes == NULL);
    lance_index_segment_builder_free(builder);
    CHECK(lance_dataset_latest_version(ds) == version);
}

/* The 6-parameter commit of `n` segments. */
static int32_t commit(LanceDataset* ds, const char* index_name, const char* column, const Segment* const* segments,
                      size_t n) {
    const uint8_t* bytes[8];
    size_t lens[8];
    for (size_t i = 0; i < n; i++) {
        bytes[i] = segments[i]->bytes;
        lens[i] = segments[i]->len;
    }
    return lance_dataset_commit_index_segments(ds, index_name, column, bytes, lens, n);
}

/* The committed segments of `index_name` are exactly the `n` UUIDs given (in any order). */
static void check_uuid_set(const LanceDataset* ds, const char* index_name, const Segment* const* expected, size_t n) {
    CHECK(lance_dataset_index_segment_count(ds, index_name) == n);
    uint8_t uuids[8 * 16];
    uint64_t count = 0;
    CHECK_OK(lance_dataset_index_segments(ds, index_name, uuids, 8, &count));
    CHECK(count == n);
    if (count != n) return;
    for (size_t i = 0; i < n; i++) {
        int found = 0;
        for (size_t j = 0; j < n; j++) found += memcmp(uuids + 16 * j, expected[i]->uuid, 16) == 0;
        CHECK(found == 1);
    }
}

/* ---- k-NN ---- */

static const int64_t query_rows[] = {3, 517, 1290, 2048, 2999, 3999};
#define QUERIES (int)(sizeof query_rows / sizeof query_rows[0])

static void query_of(int q, float* query) {
    for (int j = 0; j < DIM; j++) query[j] = data.vectors[query_rows[q] * DIM + j] + 0.01f * (float)(j % 3);
}

/* IVF_FLAT probing every partition: the top-k equals brute force for every query. */
static void check_exact_knn(const LanceDataset* ds, uint32_t all_partitions) {
    for (int q = 0; q < QUERIES; q++) {
        float query[DIM];
        query_of(q, query);
        kk_check_exact(ds, &data, query, K, all_partitions);
    }
}

/* The metadata getters against what the segment was built for. */
static void check_segment_metadata(const Segment* s, int32_t index_type, int32_t field_id, const uint32_t* fragment_ids,
                                   size_t fragment_count, uint64_t dataset_version, bool vector) {
    SkSegmentWant want = {.index_type = index_type,
                          .details_suffix = vector ? "VectorIndexDetails" : NULL,
                          .field_id = field_id,
                          .fragment_ids = fragment_ids,
                          .fragment_count = fragment_count,
                          .uuid = vector ? s->uuid : NULL,
                          .uuid_readable = true,
                          .dataset_version = dataset_version,
                          .index_version = true};
    sk_check_segment(s->bytes, s->len, &want);
}

/* ---- models ---- */

typedef struct {
    struct ArrowArray array;
    struct ArrowSchema schema;
} Model;

static void free_model(Model* m) {
    if (m->array.release) m->array.release(&m->array);
    if (m->schema.release) m->schema.release(&m->schema);
}

static int train_ivf(const LanceDataset* ds, uint32_t partitions, Model* out) {
    memset(out, 0, sizeof *out);
    int32_t rc =
        lance_index_train_ivf_model(ds, "vec", partitions, LANCE_METRIC_L2, NULL, 0, &out->array, &out->schema);
    CHECK(rc == 0);
    if (rc != 0) return -1;
    CHECK(out->array.length == partitions);
    CHECK(strcmp(out->schema.format, "+w:16") == 0);
    return 0;
}

/* ======================================================================== */

/* IVF_FLAT, one shared model, four workers, then upstream's commit rules. */
/* Options over fragment_ids[0..n) with the model: the centroids and, when
 * `codebook` is not NULL, the PQ codebook (both borrowed), and `mode`. */
static LanceIndexSegmentBuildOptions options_with_model(const uint32_t* fragment_ids, size_t n, Model* centroids,
                                                        Model* codebook, int32_t mode) {
    LanceIndexSegmentBuildOptions options;
    memset(&options, 0, sizeof options);
    options.fragment_ids = fragment_ids;
    options.fragment_count = n;
    options.ivf_centroids = &centroids->array;
    options.ivf_centroids_schema = &centroids->schema;
    if (codebook) {
        options.pq_codebook = &codebook->array;
        options.pq_codebook_schema = &codebook->schema;
    }
    options.mode = mode;
    return options;
}

static void test_ivf_flat_loop(void) {
    uint32_t fragment_ids[FRAGS];
    LanceDataset* ds = make_dataset("flat", fragment_ids);
    if (!ds) return;
    Model centroids;
    if (train_ivf(ds, PARTITIONS, &centroids) != 0) {
        lance_dataset_close(ds);
        return;
    }

    LanceVectorIndexSegmentParams params;
    memset(&params, 0, sizeof params);
    params.index_type = LANCE_INDEX_IVF_FLAT;
    params.metric = LANCE_METRIC_L2;
    params.num_partitions = PARTITIONS;

    /* Four disjoint groups of two fragments. */
    Segment segs[4];
    const Segment* all[4];
    for (int g = 0; g < 4; g++) {
        LanceIndexSegmentBuildOptions options =
            options_with_model(&fragment_ids[2 * g], 2, &centroids, NULL, LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED);
        CHECK_OK(build_vector(ds, &params, &options, 100 + g, &segs[g]));
        check_segment_metadata(&segs[g], LANCE_INDEX_IVF_FLAT, VEC_FIELD_ID, &fragment_ids[2 * g], 2, 1, true);
        all[g] = &segs[g];
    }
    /* The model stays the caller's and usable. */
    CHECK(centroids.array.release != NULL && centroids.schema.release != NULL);
    /* Building commits nothing. */
    CHECK(lance_dataset_latest_version(ds) == 1);

    CHECK_OK(commit(ds, "vec_idx", "vec", all, 4));
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(lance_dataset_latest_version(ds) == 2);
    check_uuid_set(ds, "vec_idx", all, 4);
    check_exact_knn(ds, PARTITIONS);

    /* A retry of the same set: success, no new version. */
    CHECK_OK(commit(ds, "vec_idx", "vec", all, 4));
    CHECK(lance_dataset_version(ds) == 2 && lance_dataset_latest_version(ds) == 2);

    /* A worker task run again with a committed segment's UUID: refused
       before it writes anything (upstream would overwrite the files the
       committed index reads). */
    LanceIndexSegmentBuildOptions again =
        options_with_model(&fragment_ids[0], 2, &centroids, NULL, LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED);
    again.index_uuid = segs[0].uuid;
    check_refused_at_execute(ds, lance_index_segment_builder_new_vector(ds, "vec", "vec_idx", &params, &again),
                             LANCE_ERR_DUPLICATE_SEGMENT, 2);
    check_exact_knn(ds, PARTITIONS); /* the committed segment's files are intact */

    /* Problems with the set are all LANCE_ERR_INVALID_ARGUMENT. */
    CHECK_ERR(lance_dataset_commit_index_segments(ds, "vec_idx", "vec", NULL, NULL, 0), LANCE_ERR_INVALID_ARGUMENT);
    Segment x, y, z;
    uint32_t x_frags[] = {fragment_ids[0], fragment_ids[1]};
    uint32_t y_frags[] = {fragment_ids[1], fragment_ids[2]};
    uint32_t z_frags[] = {fragment_ids[2]};
    struct {
        const uint32_t* ids;
        size_t count;
        Segment* out;
        int seed;
    } more[] = {{x_frags, 2, &x, 110}, {y_frags, 2, &y, 111}, {z_frags, 1, &z, 112}};
    for (int i = 0; i < 3; i++) {
        LanceIndexSegmentBuildOptions options =
            options_with_model(more[i].ids, more[i].count, &centroids, NULL, LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED);
        CHECK_OK(build_vector(ds, &params, &options, more[i].seed, more[i].out));
        check_segment_metadata(more[i].out, LANCE_INDEX_IVF_FLAT, VEC_FIELD_ID, more[i].ids, more[i].count, 2, true);
    }
    const Segment* repeated[] = {&x, &x};
    CHECK_ERR(commit(ds, "vec_idx", "vec", repeated, 2), LANCE_ERR_INVALID_ARGUMENT);
    const Segment* overlapping[] = {&x, &y};
    CHECK_ERR(commit(ds, "vec_idx", "vec", overlapping, 2), LANCE_ERR_INVALID_ARGUMENT);
    const Segment* just_x[] = {&x};
    CHECK_ERR(commit(ds, "id_vec_idx", "id", just_x, 1), LANCE_ERR_INVALID_ARGUMENT); /* built on "vec" */
    CHECK(lance_dataset_version(ds) == 2 && lance_dataset_latest_version(ds) == 2);

    /* New segments covering a subset of fragments replace exactly the
       segments they cover: x covers segs[0]'s fragments, the rest stay. */
    CHECK_OK(commit(ds, "vec_idx", "vec", just_x, 1));
    CHECK(lance_dataset_version(ds) == 3 && lance_dataset_latest_version(ds) == 3);
    const Segment* after[] = {&x, &segs[1], &segs[2], &segs[3]};
    check_uuid_set(ds, "vec_idx", after, 4);
    check_exact_knn(ds, PARTITIONS);

    /* z covers segs[1]'s fragments only in part. */
    const Segment* just_z[] = {&z};
    CHECK_ERR(commit(ds, "vec_idx", "vec", just_z, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_version(ds) == 3 && lance_dataset_latest_version(ds) == 3);
    check_uuid_set(ds, "vec_idx", after, 4);

    /* A retry of the replacing set: success, no new version. */
    CHECK_OK(commit(ds, "vec_idx", "vec", just_x, 1));
    CHECK(lance_dataset_version(ds) == 3 && lance_dataset_latest_version(ds) == 3);
    check_uuid_set(ds, "vec_idx", after, 4);

    for (int g = 0; g < 4; g++) free_segment(&segs[g]);
    free_segment(&x);
    free_segment(&y);
    free_segment(&z);
    free_model(&centroids);
    lance_dataset_close(ds);
}

/* IVF_PQ from a shared IVF model and PQ codebook, the build-mode rules, a
   switch of the index type, and a scalar segment. */
/* A vector builder whose options make no sense: refused with
 * LANCE_ERR_INVALID_ARGUMENT. */
static void check_builder_refused(const LanceDataset* ds, const LanceVectorIndexSegmentParams* params,
                                  const LanceIndexSegmentBuildOptions* options) {
    CHECK(lance_index_segment_builder_new_vector(ds, "vec", NULL, params, options) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
}

static void test_ivf_pq_and_modes(void) {
    uint32_t fragment_ids[FRAGS];
    LanceDataset* ds = make_dataset("pq", fragment_ids);
    if (!ds) return;
    Model centroids, codebook;
    memset(&codebook, 0, sizeof codebook);
    if (train_ivf(ds, PARTITIONS, &centroids) != 0) {
        lance_dataset_close(ds);
        return;
    }
    CHECK_OK(lance_index_train_pq_model(ds, "vec", SUB_VECTORS, BITS, LANCE_METRIC_L2, NULL, 0, &centroids.array,
                                        &centroids.schema, &codebook.array, &codebook.schema));
    /* Upstream's codebook shape: num_sub_vectors * 2^num_bits rows of dim / num_sub_vectors. */
    CHECK(codebook.array.length == SUB_VECTORS * (1 << BITS));
    CHECK(codebook.schema.format != NULL && strcmp(codebook.schema.format, "+w:4") == 0);
    CHECK(codebook.array.n_children == 1 &&
          codebook.array.children[0]->length == (int64_t)SUB_VECTORS * (1 << BITS) * (DIM / SUB_VECTORS));
    /* The centroids were borrowed. */
    CHECK(centroids.array.release != NULL && centroids.array.length == PARTITIONS);
    /* Trainer arguments are checked; a failed call leaves no output to release. */
    Model none;
    memset(&none, 0, sizeof none);
    CHECK_ERR(lance_index_train_ivf_model(ds, "vec", PARTITIONS, 9, NULL, 0, &none.array, &none.schema),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_index_train_pq_model(ds, "vec", SUB_VECTORS, 6, LANCE_METRIC_L2, NULL, 0, &centroids.array,
                                         &centroids.schema, &none.array, &none.schema),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_index_train_pq_model(ds, "vec", 3, BITS, LANCE_METRIC_L2, NULL, 0, &centroids.array,
                                         &centroids.schema, &none.array, &none.schema),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(none.array.release == NULL && none.schema.release == NULL);

    LanceVectorIndexSegmentParams params;
    memset(&params, 0, sizeof params);
    params.index_type = LANCE_INDEX_IVF_PQ;
    params.metric = LANCE_METRIC_L2;
    params.num_partitions = PARTITIONS;
    params.num_sub_vectors = SUB_VECTORS;
    params.num_bits = BITS;

    /* LOCAL_TRAIN with a model. */
    LanceIndexSegmentBuildOptions options =
        options_with_model(fragment_ids, 4, &centroids, &codebook, LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN);
    check_builder_refused(ds, &params, &options);
    /* A mode that is not a LanceIndexSegmentBuildMode. */
    options.mode = 7;
    check_builder_refused(ds, &params, &options);
    options.mode = -1;
    check_builder_refused(ds, &params, &options);
    /* PQ centroids without their codebook, whatever the mode. */
    options.pq_codebook = NULL;
    options.pq_codebook_schema = NULL;
    options.mode = LANCE_INDEX_SEGMENT_BUILD_AUTO;
    check_builder_refused(ds, &params, &options);
    options.mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
    check_builder_refused(ds, &params, &options);
    /* PRECOMPUTED without any model. */
    options.ivf_centroids = NULL;
    options.ivf_centroids_schema = NULL;
    check_builder_refused(ds, &params, &options);
    /* An index type outside LanceVectorIndexType. */
    LanceVectorIndexSegmentParams bad = params;
    bad.index_type = 100;
    options.mode = LANCE_INDEX_SEGMENT_BUILD_AUTO;
    check_builder_refused(ds, &bad, &options);

    /* The progress setter refuses a NULL callback. */
    LanceIndexSegmentBuilder* builder = lance_index_segment_builder_new_vector(ds, "vec", NULL, &params, NULL);
    CHECK(builder != NULL);
    CHECK_ERR(lance_index_segment_builder_set_progress_callback(builder, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    lance_index_segment_builder_free(builder);

    /* Two workers, four fragments each, the whole model given. */
    Segment segs[2];
    const Segment* all[2];
    for (int g = 0; g < 2; g++) {
        options =
            options_with_model(&fragment_ids[4 * g], 4, &centroids, &codebook, LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED);
        CHECK_OK(build_vector(ds, &params, &options, 200 + g, &segs[g]));
        check_segment_metadata(&segs[g], LANCE_INDEX_IVF_PQ, VEC_FIELD_ID, &fragment_ids[4 * g], 4, 1, true);
        all[g] = &segs[g];
    }
    CHECK(lance_dataset_latest_version(ds) == 1);
    CHECK_OK(commit(ds, "vec_idx", "vec", all, 2));
    CHECK(lance_dataset_version(ds) == 2 && lance_dataset_latest_version(ds) == 2);
    check_uuid_set(ds, "vec_idx", all, 2);

    /* Switching the index type needs every fragment covered: an IVF_FLAT
       segment over the first group's fragments only is refused. */
    LanceVectorIndexSegmentParams flat = params;
    flat.index_type = LANCE_INDEX_IVF_FLAT;
    flat.num_sub_vectors = 0;
    flat.num_bits = 0;
    memset(&options, 0, sizeof options);
    options.fragment_ids = fragment_ids;
    options.fragment_count = 4;
    options.ivf_centroids = &centroids.array;
    options.ivf_centroids_schema = &centroids.schema;
    options.mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
    Segment switched;
    CHECK_OK(build_vector(ds, &flat, &options, 210, &switched));
    check_segment_metadata(&switched, LANCE_INDEX_IVF_FLAT, VEC_FIELD_ID, fragment_ids, 4, 2, true);
    const Segment* just_switched[] = {&switched};
    CHECK_ERR(commit(ds, "vec_idx", "vec", just_switched, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_version(ds) == 2 && lance_dataset_latest_version(ds) == 2);
    check_uuid_set(ds, "vec_idx", all, 2);

    /* Every partition probed and the candidates re-ranked exactly: each
       query's nearest row is found. */
    for (int q = 0; q < QUERIES; q++) {
        float query[DIM];
        query_of(q, query);
        int64_t got[K], want[K];
        tu_brute_force_knn(&data, query, K, want);
        CHECK(kk_ids(ds, query, DIM, K, PARTITIONS, 20, got) == K);
        CHECK(got[0] == want[0]);
    }

    /* With the other group covered too, the switch is accepted: IVF_FLAT
       segments replace both IVF_PQ ones, and search is exact again. */
    options.fragment_ids = &fragment_ids[4];
    Segment switched2;
    CHECK_OK(build_vector(ds, &flat, &options, 211, &switched2));
    const Segment* both_switched[] = {&switched, &switched2};
    CHECK_OK(commit(ds, "vec_idx", "vec", both_switched, 2));
    CHECK(lance_dataset_version(ds) == 3 && lance_dataset_latest_version(ds) == 3);
    check_uuid_set(ds, "vec_idx", both_switched, 2);
    check_exact_knn(ds, PARTITIONS);
    free_segment(&switched);
    free_segment(&switched2);

    /* A scalar segment over the whole dataset, LOCAL_TRAIN (scalar builds
       take AUTO or LOCAL_TRAIN, and no model). */
    memset(&options, 0, sizeof options);
    options.mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
    CHECK(lance_index_segment_builder_new_scalar(ds, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, &options) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    options.mode = LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN;
    options.ivf_centroids = &centroids.array;
    options.ivf_centroids_schema = &centroids.schema;
    CHECK(lance_index_segment_builder_new_scalar(ds, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, &options) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    options.ivf_centroids = NULL;
    options.ivf_centroids_schema = NULL;
    CHECK(lance_index_segment_builder_new_scalar(ds, "id", "id_idx", 11, NULL, &options) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    builder = lance_index_segment_builder_new_scalar(ds, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, &options);
    CHECK(builder != NULL);
    Segment scalar;
    memset(&scalar, 0, sizeof scalar);
    if (builder) {
        CHECK_OK(lance_index_segment_builder_execute_uncommitted(builder, &scalar.bytes, &scalar.len));
        lance_index_segment_builder_free(builder);
    }
    if (scalar.bytes) {
        check_segment_metadata(&scalar, LANCE_SCALAR_BTREE, ID_FIELD_ID, fragment_ids, FRAGS, 3, false);
        LanceIndexSegmentMetadata* m = NULL;
        CHECK_OK(lance_index_segment_metadata_parse(scalar.bytes, scalar.len, &m));
        if (m) CHECK_OK(lance_index_segment_metadata_uuid(m, scalar.uuid));
        lance_index_segment_metadata_free(m);
        const Segment* just_scalar[] = {&scalar};
        CHECK_OK(commit(ds, "id_idx", "id", just_scalar, 1));
        CHECK(lance_dataset_version(ds) == 4 && lance_dataset_latest_version(ds) == 4);
        check_uuid_set(ds, "id_idx", just_scalar, 1);
        CHECK(lance_dataset_index_count(ds) == 2);
        const char* columns[] = {"id", NULL};
        LanceScanner* scanner = lance_scanner_new(ds, columns, "id = 1234");
        int64_t ids[K];
        CHECK(scanner != NULL && tu_knn_ids(scanner, ids, K) == 1 && ids[0] == 1234);
        lance_scanner_close(scanner);
        /* The scalar builder refuses the committed segment's UUID too. */
        memset(&options, 0, sizeof options);
        options.index_uuid = scalar.uuid;
        check_refused_at_execute(
            ds, lance_index_segment_builder_new_scalar(ds, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, &options),
            LANCE_ERR_DUPLICATE_SEGMENT, 4);
    }

    free_segment(&segs[0]);
    free_segment(&segs[1]);
    free_segment(&scalar);
    free_model(&codebook);
    free_model(&centroids);
    lance_dataset_close(ds);
}

/* Each group trains its own model (AUTO without a model, LOCAL_TRAIN):
   upstream's commit accepts them, and each segment is searched with its own. */
static void test_independent_segments(void) {
    uint32_t fragment_ids[FRAGS];
    LanceDataset* ds = make_dataset("independent", fragment_ids);
    if (!ds) return;
    LanceVectorIndexSegmentParams params;
    memset(&params, 0, sizeof params);
    params.index_type = LANCE_INDEX_IVF_FLAT;
    params.metric = LANCE_METRIC_L2;
    params.num_partitions = 4;
    Segment segs[2];
    const Segment* all[2];
    const int32_t modes[2] = {LANCE_INDEX_SEGMENT_BUILD_AUTO, LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN};
    for (int g = 0; g < 2; g++) {
        LanceIndexSegmentBuildOptions options;
        memset(&options, 0, sizeof options);
        options.fragment_ids = &fragment_ids[4 * g];
        options.fragment_count = 4;
        options.mode = modes[g];
        CHECK_OK(build_vector(ds, &params, &options, 300 + g, &segs[g]));
        check_segment_metadata(&segs[g], LANCE_INDEX_IVF_FLAT, VEC_FIELD_ID, &fragment_ids[4 * g], 4, 1, true);
        all[g] = &segs[g];
    }
    CHECK_OK(commit(ds, "vec_idx", "vec", all, 2));
    CHECK(lance_dataset_version(ds) == 2 && lance_dataset_latest_version(ds) == 2);
    check_uuid_set(ds, "vec_idx", all, 2);
    check_exact_knn(ds, 4);

    /* Training needs at least num_partitions rows in the segment's
       fragments: LOCAL_TRAIN is refused by the constructor, AUTO (whose
       model could still be given) by the execute, before anything is built. */
    params.num_partitions = ROWS_PER_FRAG + 1;
    LanceIndexSegmentBuildOptions one;
    memset(&one, 0, sizeof one);
    one.fragment_ids = &fragment_ids[0];
    one.fragment_count = 1;
    one.mode = LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN;
    CHECK(lance_index_segment_builder_new_vector(ds, "vec", NULL, &params, &one) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    one.mode = LANCE_INDEX_SEGMENT_BUILD_AUTO;
    check_refused_at_execute(ds, lance_index_segment_builder_new_vector(ds, "vec", NULL, &params, &one),
                             LANCE_ERR_INVALID_ARGUMENT, 2);
    free_segment(&segs[0]);
    free_segment(&segs[1]);
    lance_dataset_close(ds);
}

int main(void) {
    data = tu_make_data(ROWS, DIM, 8, 0.5f, 17);
    dir = tu_temp_dir("upstream-segment");
    progress = pk_recorder_new();
    RUN(test_ivf_flat_loop);
    RUN(test_ivf_pq_and_modes);
    RUN(test_independent_segments);
    pk_recorder_free(progress);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_upstream_segment");
}
