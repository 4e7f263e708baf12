#include "segment_kit.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "test_util.h"

LanceVectorIndexParams sk_params(LanceVectorIndexType type, uint32_t partitions, uint32_t sub_vectors) {
    LanceVectorIndexParams p = {0};
    p.index_type = type;
    p.num_partitions = partitions;
    p.num_sub_vectors = sub_vectors;
    return p;
}

LanceVectorIndexParams sk_pq_params(uint32_t partitions, uint32_t sub_vectors, uint32_t num_bits) {
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_PQ, partitions, sub_vectors);
    p.metric = LANCE_METRIC_L2;
    p.num_bits = num_bits;
    return p;
}

LanceVectorModel* sk_train(LanceDataset* ds, const LanceVectorIndexParams* p, const uint32_t* sample, size_t n) {
    LanceVectorModel* m = NULL;
    CHECK_OK(lance_vector_model_train(ds, "vec", p, sample, n, NULL, &m));
    return m;
}

uint8_t* sk_execute(LanceIndexSegmentBuilder* b, size_t* len, bool must_succeed) {
    if (must_succeed) CHECK(b != NULL);
    if (!b) return NULL;
    uint8_t* bytes = NULL;
    int rc = lance_index_segment_builder_execute_uncommitted(b, &bytes, len);
    if (must_succeed) CHECK(rc == 0);
    lance_index_segment_builder_free(b);
    return rc == 0 ? bytes : NULL;
}

int sk_execute_status(LanceIndexSegmentBuilder* b) {
    uint8_t* bytes = NULL;
    size_t len = 0;
    int rc = lance_index_segment_builder_execute_uncommitted(b, &bytes, &len);
    LanceErrorCode code = rc == 0 ? LANCE_OK : lance_last_error_code();
    lance_free_bytes(bytes);
    lance_index_segment_builder_free(b);
    return (int)code;
}

void sk_check_cancelled_first(LanceIndexSegmentBuilder* b) {
    CHECK(b != NULL);
    LanceIndexBuildCancelToken* token = lance_index_build_cancel_token_new();
    CHECK_OK(lance_index_build_cancel(token));
    CHECK_OK(lance_index_segment_builder_set_cancel_token(b, token));
    uint8_t* bytes = NULL;
    size_t len = 0;
    CHECK_ERR(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len), LANCE_ERR_CANCELLED);
    CHECK(bytes == NULL);
    lance_index_segment_builder_free(b);
    lance_index_build_cancel_token_free(token);
}

void sk_set_add(SkSet* s, uint8_t* bytes, const size_t* len_at) {
    size_t len = *len_at;
    CHECK(bytes != NULL && s->count < SK_SET_MAX);
    if (!bytes || s->count >= SK_SET_MAX) return;
    s->bytes[s->count] = bytes;
    s->lens[s->count] = len;
    s->ptrs[s->count] = bytes;
    s->count++;
}

void sk_set_free(SkSet* s) {
    for (int i = 0; i < s->count; i++) {
        if (s->malloced) free(s->bytes[i]);
        else lance_free_bytes(s->bytes[i]);
    }
    s->count = 0;
}

/* Segment w of a set, built over fragment_ids[0..n): its bytes, or NULL. */
typedef uint8_t* (*GroupBuild)(const void* how, int w, const uint32_t* fragment_ids, size_t n, size_t* len);

/* `count` segments over consecutive groups of `per` fragments, each built by `build`. */
static SkSet build_groups(int count, int per, GroupBuild build, const void* how) {
    SkSet s = {0};
    CHECK(count <= SK_SET_MAX && per <= 64);
    if (count > SK_SET_MAX || per > 64) return s;
    for (int w = 0; w < count; w++) {
        uint32_t fragment_ids[64];
        for (int i = 0; i < per; i++) fragment_ids[i] = (uint32_t)(w * per + i);
        size_t len = 0;
        sk_set_add(&s, build(how, w, fragment_ids, (size_t)per, &len), &len);
    }
    return s;
}

typedef struct {
    LanceDataset* ds;
    const LanceVectorIndexParams* p;
    const LanceVectorModel* model;
    int uuid_base;
} VectorGroups;

static uint8_t* vector_group(const void* how, int w, const uint32_t* fragment_ids, size_t n, size_t* len) {
    const VectorGroups* v = how;
    return tu_vector_segment(v->ds, v->p, v->model, fragment_ids, n, v->uuid_base + w, len);
}

SkSet sk_build_set(LanceDataset* ds, const LanceVectorIndexParams* p, const LanceVectorModel* model, int count, int per,
                   int uuid_base) {
    const VectorGroups v = {ds, p, model, uuid_base};
    return build_groups(count, per, vector_group, &v);
}

typedef struct {
    LanceDataset* ds;
    const char* column;
    int32_t type;
} ScalarGroups;

static uint8_t* scalar_group(const void* how, int w, const uint32_t* fragment_ids, size_t n, size_t* len) {
    (void)w;
    const ScalarGroups* g = how;
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = fragment_ids;
    o.fragment_count = n;
    return sk_execute(lance_index_segment_builder_new_scalar(g->ds, g->column, NULL, g->type, NULL, &o), len, true);
}

SkSet sk_build_scalar_set(LanceDataset* ds, const char* column, int32_t type, int count, int per) {
    const ScalarGroups g = {ds, column, type};
    return build_groups(count, per, scalar_group, &g);
}

int sk_commit(LanceDataset* ds, const char* name, const SkSet* s, const LanceCommitIndexOptions* options,
              LanceCommitIndexResult* result) {
    return lance_dataset_commit_index_segments_v2(ds, name, "vec", s->ptrs, s->lens, (size_t)s->count, options, result);
}

int sk_racer_commit(SkRacer* r) {
    memset(&r->result, 0, sizeof r->result);
    if (!r->ds) {
        r->rc = -2;
        r->code = LANCE_OK;
        return r->rc;
    }
    LanceCommitIndexOptions o = {0};
    o.replace = r->replace;
    r->rc = sk_commit(r->ds, r->name, r->set, &o, &r->result);
    r->code = lance_last_error_code();
    return r->rc;
}

typedef struct {
    SkRacer* racer;
    pthread_barrier_t* barrier;
} RaceStart;

static void* race_thread(void* arg) {
    RaceStart* start = arg;
    pthread_barrier_wait(start->barrier);
    sk_racer_commit(start->racer);
    return NULL;
}

void sk_race(SkRacer* racers, int n) {
    CHECK(n > 0 && n <= 8);
    if (n <= 0 || n > 8) return;
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)n);
    pthread_t threads[8];
    RaceStart starts[8];
    for (int i = 0; i < n; i++) {
        starts[i] = (RaceStart){&racers[i], &barrier};
        if (pthread_create(&threads[i], NULL, race_thread, &starts[i]) != 0) abort();
    }
    for (int i = 0; i < n; i++) pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&barrier);
}

int sk_coverage(LanceDataset* ds, const char* name, SkCoverage* out) {
    const char* text = lance_dataset_index_coverage_json(ds, name);
    CHECK(text != NULL);
    JValue* doc = text ? json_parse(text) : NULL;
    lance_free_string(text);
    const JValue* segments = json_get(doc, "num_segments");
    const JValue* indexed = json_get(doc, "indexed_fragments");
    const JValue* unindexed = json_get(doc, "unindexed_fragments");
    const JValue* stale = json_get(doc, "stale_fragments");
    int rc = indexed && unindexed ? 0 : -1;
    CHECK(rc == 0);
    *out = (SkCoverage){-1, 0, 0, -1, 0};
    if (rc == 0) {
        out->segments = segments ? (int)segments->number : -1;
        out->indexed = (int)indexed->count;
        out->unindexed = (int)unindexed->count;
        out->stale = stale ? (int)stale->count : -1;
        for (size_t i = 0; i < indexed->count; i++)
            if (indexed->items[i]->number < 64) out->indexed_mask |= 1ull << (int)indexed->items[i]->number;
    }
    json_free(doc);
    return rc;
}

LanceVectorModel* sk_bare_model(const LanceVectorModel* m) {
    struct ArrowArray centroids;
    struct ArrowSchema schema;
    LanceVectorModel* bare = NULL;
    CHECK_OK(lance_vector_model_centroids(m, &centroids, &schema));
    if (centroids.release) {
        CHECK_OK(lance_vector_model_from_arrow(LANCE_METRIC_L2, &centroids, &schema, 0, 0, NULL, NULL, &bare));
        centroids.release(&centroids);
        schema.release(&schema);
    }
    return bare;
}

static int ends_with(const char* text, const char* suffix) {
    size_t n = strlen(text), m = strlen(suffix);
    return n >= m && strcmp(text + n - m, suffix) == 0;
}

void sk_check_segment(const uint8_t* bytes, size_t len, const SkSegmentWant* want) {
    LanceIndexSegmentMetadata* m = NULL;
    CHECK_OK(lance_index_segment_metadata_parse(bytes, len, &m));
    if (!m) return;
    CHECK(lance_index_segment_metadata_index_type(m) == want->index_type);
    if (want->type_name) {
        const char* type_name = lance_index_segment_metadata_index_type_name(m);
        CHECK(type_name && strcmp(type_name, want->type_name) == 0);
    }
    const char* name = lance_index_segment_metadata_name(m);
    if (want->index_name) CHECK(name && strcmp(name, want->index_name) == 0);
    else CHECK(name && name[0] != 0);
    const char* url = lance_index_segment_metadata_index_details_type_url(m);
    if (want->details_url) CHECK(url && strcmp(url, want->details_url) == 0);
    if (want->details_suffix) CHECK(url && ends_with(url, want->details_suffix));
    if (want->index_version) CHECK(lance_index_segment_metadata_index_version(m) >= 0);
    if (want->dataset_version) CHECK(lance_index_segment_metadata_dataset_version(m) == want->dataset_version);
    if (want->no_fingerprint) CHECK(lance_index_segment_metadata_model_fingerprint(m) == NULL);
    CHECK(lance_index_segment_metadata_field_count(m) == 1);
    if (want->field_id >= 0) {
        int32_t fields[2] = {-1, -1};
        size_t count = 0;
        CHECK_OK(lance_index_segment_metadata_field_ids(m, fields, 2, &count));
        CHECK(count == 1 && fields[0] == want->field_id);
    }
    CHECK(lance_index_segment_metadata_fragment_count(m) == want->fragment_count);
    uint32_t* got = calloc(want->fragment_count + 1, sizeof *got);
    size_t count = 0;
    CHECK_OK(lance_index_segment_metadata_fragment_ids(m, got, want->fragment_count + 1, &count));
    CHECK(count == want->fragment_count && (count == 0 || memcmp(got, want->fragment_ids, count * sizeof *got) == 0));
    free(got);
    if (want->uuid || want->uuid_readable) {
        uint8_t uuid[16];
        CHECK_OK(lance_index_segment_metadata_uuid(m, uuid));
        if (want->uuid) CHECK(memcmp(uuid, want->uuid, 16) == 0);
    }
    lance_index_segment_metadata_free(m);
}
