/* The model after the build (lance.h "Distributed index builds: shared
 * models", lance_dataset_read_vector_model()): a shared model read back
 * from a committed vector index.
 *
 * For IVF_FLAT, IVF_PQ and IVF_RQ: a model trained on 8 fragments of 100
 * rows builds 4 segments, committed as one index; the model read back (on
 * the committing handle, and on a handle opened afresh, as a coordinator
 * that restarted) serializes to exactly the trained model's bytes, so it
 * has its fingerprint, index type, codebook and rotation.  Rows appended as
 * 2 fragments get a delta segment built from the read-back model: it
 * records the trained fingerprint, commits beside the others with replace,
 * the maintenance plan names that model and merges all 5 segments into
 * one, the core's merge takes them (for IVF_RQ only segments that share
 * one rotation merge), and the merged index reads back as the same model.
 * IVF_FLAT probed in every partition then answers k-NN exactly as brute
 * force, for queries at the new rows and the old.
 *
 * An index of the core's one-shot build (lance_dataset_create_vector_index)
 * read back: its shape is the build's, and its centroids are the ones
 * the core searches by, to the bit: a copy of the table indexed with one
 * segment built from the read-back model probes, with one partition per
 * query, exactly the rows the one-shot index probes and finds the same
 * neighbours.  Refusals: NULL arguments, an empty or unknown name, a scalar
 * index, an index whose segments come from two models, each with its code
 * and the out parameter untouched.
 *
 * Usage: test_model_readback */
#include <string.h>

#include "dataset_kit.h"
#include "json.h"
#include "knn_kit.h"
#include "segment_kit.h"
#include "test_util.h"
#include "uuid_hex.h"

#define ROWS 1000 /* 800 written first, 200 appended */
#define FIRST 800
#define DIM 32
#define PARTS 8
#define K 10
#define SEGMENTS 4 /* over fragments {0,1} ... {6,7} */
#define DELTA_SEED 90
#define IA LANCE_ERR_INVALID_ARGUMENT

static TuData data;
static char* dir;

/* A table of the first 800 rows, 100 a fragment, as <dir>/<name>.lance. */
static LanceDataset* table(const char* name, char* uri, size_t cap) {
    snprintf(uri, cap, "%s/%s.lance", dir, name);
    LanceDataset* ds = tu_write(uri, &data, 0, FIRST, LANCE_WRITE_CREATE, 100);
    CHECK(ds != NULL && lance_dataset_fragment_count(ds) == 8);
    return ds;
}

/* The serialized bytes of a model (free with lance_free_bytes()); NULL is a
 * failed check. */
static uint8_t* bytes_of(const LanceVectorModel* m, size_t* len) {
    uint8_t* bytes = NULL;
    *len = 0;
    CHECK(m != NULL);
    if (m) CHECK_OK(lance_vector_model_serialize(m, &bytes, len));
    return bytes;
}

/* The model of index `name` read back from `ds` serializes to exactly
 * `want[0..want_len)`. */
static void check_reads_back(const LanceDataset* ds, const char* name, const uint8_t* want, size_t want_len) {
    LanceVectorModel* m = NULL;
    CHECK_OK(lance_dataset_read_vector_model(ds, name, &m));
    size_t len = 0;
    uint8_t* got = bytes_of(m, &len);
    CHECK(got && want && len == want_len && memcmp(got, want, len) == 0);
    lance_free_bytes(got);
    lance_vector_model_free(m);
}

/* The fingerprint a segment's metadata records. */
static void check_records(const uint8_t* bytes, size_t len, const char* fingerprint) {
    LanceIndexSegmentMetadata* meta = NULL;
    CHECK_OK(lance_index_segment_metadata_parse(bytes, len, &meta));
    const char* got = meta ? lance_index_segment_metadata_model_fingerprint(meta) : NULL;
    CHECK(got && fingerprint && strcmp(got, fingerprint) == 0);
    lance_index_segment_metadata_free(meta);
}

/* The maintenance plan of vec_idx with the defaults: the model
 * `fingerprint`, and one task merging its 5 segments, the delta
 * `delta_uuid` among them.  The task's segments' bytes, merged by the core,
 * into *merged. */
static void check_plan_merges(LanceDataset* ds, const char* fingerprint, const char* delta_uuid, uint8_t** merged,
                              size_t* merged_len) {
    char* text = lance_dataset_plan_index_maintenance(ds, "vec_idx", NULL);
    JValue* plan = text ? json_parse(text) : NULL;
    lance_free_string(text);
    CHECK(plan != NULL);
    const JValue* model = json_get(plan, "model_fingerprint");
    CHECK(model && model->type == J_STRING && strcmp(model->string, fingerprint) == 0);
    const JValue *before = json_get(plan, "segments_before"), *after = json_get(plan, "segments_after");
    CHECK(before && before->number == SEGMENTS + 1 && after && after->number == 1);
    const JValue* tasks = json_get(plan, "tasks");
    CHECK(tasks && tasks->count == 1);
    const JValue* task = tasks && tasks->count == 1 ? tasks->items[0] : NULL;
    const JValue* kind = json_get(task, "kind");
    const JValue* uuids = json_get(task, "segment_uuids");
    CHECK(kind && kind->string && strcmp(kind->string, "merge") == 0);
    CHECK(uuids && uuids->count == SEGMENTS + 1);
    uint8_t* sources[SEGMENTS + 1] = {0};
    size_t lens[SEGMENTS + 1] = {0};
    size_t n = 0;
    bool has_delta = false;
    for (; uuids && n < uuids->count && n < SEGMENTS + 1; n++) {
        has_delta |= strcmp(uuids->items[n]->string, delta_uuid) == 0;
        CHECK_OK(lance_dataset_index_segment_metadata(ds, "vec_idx", uuids->items[n]->string, &sources[n], &lens[n]));
    }
    CHECK(has_delta);
    CHECK_OK(lance_dataset_merge_index_segments(ds, (const uint8_t* const*)sources, lens, n, merged, merged_len));
    for (size_t s = 0; s < n; s++) lance_free_bytes(sources[s]);
    json_free(plan);
}

/* The queries: rows of the appended fragments and of the first ones. */
static const int QUERY_ROWS[] = {805, 877, 950, 999, 3, 420, 799};
#define QUERY_COUNT (int)(sizeof QUERY_ROWS / sizeof QUERY_ROWS[0])

static void check_exact(const LanceDataset* ds) {
    for (int q = 0; q < QUERY_COUNT; q++)
        kk_check_exact(ds, &data, data.vectors + (size_t)QUERY_ROWS[q] * DIM, K, PARTS);
}

/* One model of `type` through a build, a read-back and a delta. */
static void model_through_delta(const char* name, LanceVectorIndexType type) {
    char uri[600];
    LanceDataset* ds = table(name, uri, sizeof uri);
    if (!ds) return;
    LanceVectorIndexParams p = sk_params(type, PARTS, type == LANCE_INDEX_IVF_PQ ? 4 : 0);
    LanceVectorModel* trained = sk_train(ds, &p, NULL, 0);
    size_t trained_len = 0;
    uint8_t* trained_bytes = bytes_of(trained, &trained_len);
    char* fingerprint = trained ? lance_vector_model_fingerprint(trained) : NULL;
    CHECK(fingerprint != NULL);
    SkSet set = sk_build_set(ds, &p, trained, SEGMENTS, 2, 10);
    LanceCommitIndexResult r = {0};
    CHECK_OK(sk_commit(ds, "vec_idx", &set, NULL, &r));
    CHECK(r.version == 2);
    sk_set_free(&set);

    /* Read back on this handle, and on a coordinator's fresh handle. */
    check_reads_back(ds, "vec_idx", trained_bytes, trained_len);
    LanceDataset* restarted = lance_dataset_open(uri, NULL, 0);
    CHECK(restarted != NULL);
    LanceVectorModel* read = NULL;
    CHECK_OK(lance_dataset_read_vector_model(restarted, "vec_idx", &read));
    lance_dataset_close(restarted);
    char* read_fingerprint = read ? lance_vector_model_fingerprint(read) : NULL;
    CHECK(read_fingerprint && fingerprint && strcmp(read_fingerprint, fingerprint) == 0);
    int32_t read_type = 0;
    CHECK_OK(lance_vector_model_index_type(read, &read_type));
    CHECK(read_type == (int32_t)type);
    LanceVectorModelInfo info = {0};
    CHECK_OK(lance_vector_model_info(read, &info));
    CHECK(info.dimension == DIM && info.num_partitions == PARTS && info.metric == LANCE_METRIC_L2);
    CHECK(info.has_pq_codebook == (type == LANCE_INDEX_IVF_PQ) && info.has_rq_rotation == (type == LANCE_INDEX_IVF_RQ));

    /* Rows appended as fragments 8 and 9; their delta from the read-back model. */
    LanceDataset* next = tu_write(uri, &data, FIRST, ROWS - FIRST, LANCE_WRITE_APPEND, 100);
    CHECK(next != NULL && lance_dataset_version(next) == 3);
    lance_dataset_close(ds);
    ds = next;
    if (!ds) goto done;
    const uint32_t appended[] = {8, 9};
    size_t delta_len = 0;
    uint8_t* delta = tu_vector_segment(ds, &p, read, appended, 2, DELTA_SEED, &delta_len);
    CHECK(delta != NULL);
    if (!delta) goto done;
    check_records(delta, delta_len, fingerprint);
    uint8_t raw[16];
    char delta_uuid[UUID_HEX_DASHED_LEN + 1];
    tu_uuid(DELTA_SEED, raw);
    uuid_hex_format_dashed(raw, delta_uuid);
    SkSet deltas = {0};
    sk_set_add(&deltas, delta, &delta_len);
    LanceCommitIndexOptions replace = {0};
    replace.replace = true;
    CHECK_OK(sk_commit(ds, "vec_idx", &deltas, &replace, &r));
    CHECK(r.version == 4 && lance_dataset_index_segment_count(ds, "vec_idx") == SEGMENTS + 1);
    sk_set_free(&deltas);
    check_reads_back(ds, "vec_idx", trained_bytes, trained_len);
    if (type == LANCE_INDEX_IVF_FLAT) check_exact(ds);

    /* The plan merges the delta with the rest; the merge commits as one segment. */
    uint8_t* merged = NULL;
    size_t merged_len = 0;
    check_plan_merges(ds, fingerprint, delta_uuid, &merged, &merged_len);
    if (merged) {
        check_records(merged, merged_len, fingerprint);
        SkSet one = {0};
        sk_set_add(&one, merged, &merged_len);
        CHECK_OK(sk_commit(ds, "vec_idx", &one, &replace, &r));
        CHECK(r.version == 5 && lance_dataset_index_segment_count(ds, "vec_idx") == 1);
        sk_set_free(&one);
        check_reads_back(ds, "vec_idx", trained_bytes, trained_len);
        if (type == LANCE_INDEX_IVF_FLAT) check_exact(ds);
    }
done:
    lance_free_string(read_fingerprint);
    lance_vector_model_free(read);
    lance_free_string(fingerprint);
    lance_free_bytes(trained_bytes);
    lance_vector_model_free(trained);
    lance_dataset_close(ds);
}

static void test_ivf_flat(void) { model_through_delta("flat", LANCE_INDEX_IVF_FLAT); }
static void test_ivf_pq(void) { model_through_delta("pq", LANCE_INDEX_IVF_PQ); }
static void test_ivf_rq(void) { model_through_delta("rq", LANCE_INDEX_IVF_RQ); }

/* The one-shot IVF_FLAT index of table A, read back, builds table B's index
 * (a copy of A's rows) as one segment over every fragment: with one
 * partition probed, each query compares exactly as many rows through B's
 * index as through A's and finds the same neighbours.  A one-shot IVF_PQ
 * index reads back with its parameters' shape. */
static void test_one_shot(void) {
    char a_uri[600], b_uri[600], c_uri[600];
    LanceDataset* a = table("oneshot_a", a_uri, sizeof a_uri);
    LanceDataset* b = table("oneshot_b", b_uri, sizeof b_uri);
    LanceDataset* c = table("oneshot_c", c_uri, sizeof c_uri);
    if (!a || !b || !c) goto done;
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, PARTS, 0);
    CHECK_OK(lance_dataset_create_vector_index(a, "vec", "vec_idx", &p, false));
    LanceVectorModel* read = NULL;
    CHECK_OK(lance_dataset_read_vector_model(a, "vec_idx", &read));
    LanceVectorModelInfo info = {0};
    CHECK_OK(lance_vector_model_info(read, &info));
    CHECK(info.dimension == DIM && info.num_partitions == PARTS && info.metric == LANCE_METRIC_L2 &&
          !info.has_pq_codebook && !info.has_rq_rotation);
    int32_t type = 0;
    CHECK_OK(lance_vector_model_index_type(read, &type));
    CHECK(type == LANCE_INDEX_IVF_FLAT);

    const uint32_t all[] = {0, 1, 2, 3, 4, 5, 6, 7};
    size_t len = 0;
    SkSet set = {0};
    sk_set_add(&set, tu_vector_segment(b, &p, read, all, 8, 70, &len), &len);
    CHECK_OK(sk_commit(b, "vec_idx", &set, NULL, NULL));
    sk_set_free(&set);
    size_t read_len = 0;
    uint8_t* read_bytes = bytes_of(read, &read_len);
    check_reads_back(b, "vec_idx", read_bytes, read_len);
    lance_free_bytes(read_bytes);
    uint64_t probed = 0;
    for (int q = 0; q < 40; q++) {
        const float* query = data.vectors + (size_t)(q * 19) * DIM;
        uint64_t through_a = kk_comparisons(a, query, DIM, K, 1);
        CHECK(through_a > 0 && through_a == kk_comparisons(b, query, DIM, K, 1));
        probed += through_a;
        int64_t ids_a[K], ids_b[K];
        CHECK(kk_ids(a, query, DIM, K, 1, 0, ids_a) == K && kk_ids(b, query, DIM, K, 1, 0, ids_b) == K);
        CHECK(memcmp(ids_a, ids_b, sizeof ids_a) == 0);
    }
    CHECK(probed < 40u * FIRST); /* one partition of eight, not the table */
    lance_vector_model_free(read);

    /* 3 partitions: a one-shot build trains at most one per 256 rows with PQ. */
    LanceVectorIndexParams pq = sk_pq_params(3, 4, 8);
    CHECK_OK(lance_dataset_create_vector_index(c, "vec", "vec_idx", &pq, false));
    read = NULL;
    CHECK_OK(lance_dataset_read_vector_model(c, "vec_idx", &read));
    memset(&info, 0, sizeof info);
    CHECK_OK(lance_vector_model_info(read, &info));
    CHECK(info.dimension == DIM && info.num_partitions == 3 && info.metric == LANCE_METRIC_L2 && info.has_pq_codebook &&
          info.num_sub_vectors == 4 && info.num_bits == 8 && !info.has_rq_rotation);
    CHECK_OK(lance_vector_model_index_type(read, &type));
    CHECK(type == LANCE_INDEX_IVF_PQ);
    lance_vector_model_free(read);
done:
    lance_dataset_close(a);
    lance_dataset_close(b);
    lance_dataset_close(c);
}

/* Every refusal, with its code; the out parameter untouched. */
static void test_refusals(void) {
    char uri[600];
    LanceDataset* ds = table("refusals", uri, sizeof uri);
    if (!ds) return;
    CHECK_OK(lance_dataset_create_scalar_index(ds, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, false));
    /* Two models, their segments committed together as allowed. */
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, PARTS, 0);
    const uint32_t lo[] = {0, 1, 2, 3}, hi[] = {4, 5, 6, 7};
    LanceVectorModel* m1 = sk_train(ds, &p, lo, 4);
    LanceVectorModel* m2 = sk_train(ds, &p, hi, 4);
    SkSet set = {0};
    size_t len = 0;
    sk_set_add(&set, tu_vector_segment(ds, &p, m1, lo, 4, 80, &len), &len);
    sk_set_add(&set, tu_vector_segment(ds, &p, m2, hi, 4, 81, &len), &len);
    LanceCommitIndexOptions allow = {0};
    allow.allow_independent_models = true;
    CHECK_OK(sk_commit(ds, "mixed_idx", &set, &allow, NULL));
    sk_set_free(&set);

    uint8_t u1[16], u2[16];
    char t1[UUID_HEX_DASHED_LEN + 1], t2[UUID_HEX_DASHED_LEN + 1];
    tu_uuid(80, u1);
    tu_uuid(81, u2);
    uuid_hex_format_dashed(u1, t1);
    uuid_hex_format_dashed(u2, t2);
    static char sentinel_byte;
    LanceVectorModel* const sentinel = (LanceVectorModel*)&sentinel_byte;
    struct {
        const LanceDataset* at;
        const char* name;
        bool null_out;
        LanceErrorCode code;
        const char* mentions[2];
    } cases[] = {
        {NULL, "mixed_idx", false, IA, {"dataset", NULL}},
        {ds, NULL, false, IA, {"index_name", NULL}},
        {ds, "", false, IA, {"index_name", NULL}},
        {ds, "mixed_idx", true, IA, {"out_model", NULL}},
        {ds, "no_such_idx", false, LANCE_ERR_NOT_FOUND, {"no_such_idx", NULL}},
        {ds, "vec", false, LANCE_ERR_NOT_FOUND, {"vec", NULL}}, /* a column, no index */
        {ds, "id_idx", false, IA, {"id_idx", "not a vector index"}},
        {ds, "mixed_idx", false, IA, {t1, t2}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        LanceVectorModel* out = sentinel;
        CHECK_ERR(lance_dataset_read_vector_model(cases[i].at, cases[i].name, cases[i].null_out ? NULL : &out),
                  cases[i].code);
        for (int m = 0; m < 2; m++)
            if (cases[i].mentions[m]) CHECK(tu_error_mentions(cases[i].mentions[m]));
        CHECK(out == sentinel);
    }
    lance_vector_model_free(m1);
    lance_vector_model_free(m2);
    lance_dataset_close(ds);
}

int main(void) {
    double start = tu_now();
    data = tu_make_data(ROWS, DIM, 24, 0.5f, 5151);
    dir = tu_temp_dir("model-readback");
    CHECK(dir != NULL);
    if (dir) {
        RUN(test_ivf_flat);
        RUN(test_ivf_pq);
        RUN(test_ivf_rq);
        RUN(test_one_shot);
        RUN(test_refusals);
        tu_remove_tree(dir);
    }
    printf("    %.1f s\n", tu_now() - start);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_model_readback");
}
