/* Segment metadata (lance.h "Distributed index builds: segment metadata"):
 * the bytes of real vector and scalar segments parsed, and every getter
 * checked against what the build was asked for and what it wrote to disk
 * (UUID, name, type code and name, details type URL, model fingerprint,
 * dataset and index versions, creation time, field and fragment ids with
 * their count-only and too-small forms, the files and their sizes); bytes
 * that are not metadata, truncated at every length; and each getter's
 * refusals with their exact codes. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "segment_kit.h"
#include "test_util.h"

#define ROWS 1200
#define DIM 16
#define FRAGS 6

static TuFixture fixture;
static LanceDataset* ds; /* fixture.ds */

/* Lance numbers top-level fields first: id = 0, vec = 1, tag = 2. */
#define ID_FIELD 0
#define VEC_FIELD 1
#define TAG_FIELD 2

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static LanceIndexSegmentMetadata* parse(const uint8_t* bytes, size_t len) {
    LanceIndexSegmentMetadata* m = NULL;
    CHECK_OK(lance_index_segment_metadata_parse(bytes, len, &m));
    return m;
}

/* ---- the files of a segment's directory ---- */

static int disk_files;
static uint64_t disk_bytes;
static int claim_files; /* lance-c.claim: marks a caller-assigned UUID as taken */

static int count_file(const char* path, const struct stat* sb, int flag, struct FTW* ftw) {
    if (flag == FTW_F && strcmp(path + ftw->base, "lance-c.claim") == 0) {
        claim_files++;
    } else if (flag == FTW_F) {
        disk_files++;
        disk_bytes += (uint64_t)sb->st_size;
    }
    return 0;
}

/* The files the metadata lists are exactly those under _indices/<uuid>/,
 * each with its size, beside the claim file a caller-assigned UUID leaves
 * (and only then). */
static void check_files(const LanceIndexSegmentMetadata* m, const uint8_t uuid[16], bool caller_uuid) {
    char text[UUID_HEX_DASHED_LEN + 1];
    uuid_hex_format_dashed(uuid, text);
    char segment_dir[800];
    snprintf(segment_dir, sizeof segment_dir, "%s/_indices/%s", fixture.uri, text);
    disk_files = 0;
    disk_bytes = 0;
    claim_files = 0;
    CHECK(nftw(segment_dir, count_file, 8, FTW_PHYS) == 0);
    CHECK(claim_files == (caller_uuid ? 1 : 0));
    uint64_t n = lance_index_segment_metadata_file_count(m);
    CHECK(n > 0 && n == (uint64_t)disk_files);
    uint64_t listed_bytes = 0;
    for (uint64_t i = 0; i < n; i++) {
        const char* path = NULL;
        uint64_t size = 0;
        CHECK_OK(lance_index_segment_metadata_file_at(m, (size_t)i, &path, &size));
        char full[1200];
        snprintf(full, sizeof full, "%s/%s", segment_dir, path ? path : "");
        CHECK(path != NULL && size > 0 && tu_file_size(full) == (int64_t)size);
        listed_bytes += size;
    }
    CHECK(listed_bytes == disk_bytes);
    const char* path = NULL;
    uint64_t size = 0;
    CHECK_ERR(lance_index_segment_metadata_file_at(m, (size_t)n, &path, &size), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("out of range"));
    CHECK_ERR(lance_index_segment_metadata_file_at(m, 0, NULL, &size), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_index_segment_metadata_file_at(m, 0, &path, NULL), LANCE_ERR_INVALID_ARGUMENT);
}

/* ---- field and fragment ids ---- */

/* The id getters: the count alone, a buffer one too small, the ids. */
static void check_ids(const LanceIndexSegmentMetadata* m, int32_t field, const uint32_t* fragment_ids, size_t nfrags) {
    size_t count = 99;
    CHECK_OK(lance_index_segment_metadata_field_ids(m, NULL, 0, &count));
    CHECK(count == 1);
    CHECK(lance_index_segment_metadata_field_count(m) == 1);
    int32_t fields[2] = {-7, -7};
    CHECK_ERR(lance_index_segment_metadata_field_ids(m, fields, 0, &count), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_OK(lance_index_segment_metadata_field_ids(m, fields, 2, &count));
    CHECK(count == 1 && fields[0] == field && fields[1] == -7);

    count = 99;
    CHECK_OK(lance_index_segment_metadata_fragment_ids(m, NULL, 0, &count));
    CHECK(count == nfrags);
    CHECK(lance_index_segment_metadata_fragment_count(m) == nfrags);
    uint32_t got[FRAGS + 1];
    CHECK_ERR(lance_index_segment_metadata_fragment_ids(m, got, nfrags - 1, &count), LANCE_ERR_INVALID_ARGUMENT);
    memset(got, 0xff, sizeof got);
    CHECK_OK(lance_index_segment_metadata_fragment_ids(m, got, FRAGS + 1, &count));
    CHECK(count == nfrags && memcmp(got, fragment_ids, nfrags * sizeof *fragment_ids) == 0);
    CHECK(got[nfrags] == UINT32_MAX); /* nothing past the count */
    CHECK_ERR(lance_index_segment_metadata_fragment_ids(m, got, FRAGS + 1, NULL), LANCE_ERR_INVALID_ARGUMENT);
}

/* ---- a vector segment ---- */

static void test_vector_segment(void) {
    uint8_t uuid[16];
    tu_uuid(7, uuid);
    const uint32_t fragment_ids[] = {1, 3, 4};
    LanceVectorIndexSegmentParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.metric = LANCE_METRIC_L2;
    p.num_partitions = 4;
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = fragment_ids;
    o.fragment_count = 3;
    o.index_uuid = uuid;
    o.mode = LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN;
    int64_t before = now_ms();
    size_t len = 0;
    uint8_t* bytes = sk_execute(lance_index_segment_builder_new_vector(ds, "vec", "vec_segment", &p, &o), &len, true);
    int64_t after = now_ms();
    if (!bytes) return;
    LanceIndexSegmentMetadata* m = parse(bytes, len);
    if (!m) return;

    uint8_t got_uuid[16];
    CHECK_OK(lance_index_segment_metadata_uuid(m, got_uuid));
    CHECK(memcmp(got_uuid, uuid, 16) == 0);
    const char* name = lance_index_segment_metadata_name(m);
    CHECK(name && strcmp(name, "vec_segment") == 0);
    CHECK(lance_index_segment_metadata_index_type(m) == LANCE_INDEX_IVF_FLAT);
    const char* type = lance_index_segment_metadata_index_type_name(m);
    CHECK(type && strcmp(type, "IVF_FLAT") == 0);
    const char* url = lance_index_segment_metadata_index_details_type_url(m);
    CHECK(url && strcmp(url, "/lance.index.pb.VectorIndexDetails") == 0);
    /* Trained locally: no shared model, and no error. */
    CHECK(lance_index_segment_metadata_model_fingerprint(m) == NULL);
    CHECK(lance_last_error_code() == LANCE_OK);
    CHECK(lance_index_segment_metadata_dataset_version(m) == 1);
    CHECK(lance_index_segment_metadata_index_version(m) == 1);
    int64_t ms = 0;
    bool present = false;
    CHECK_OK(lance_index_segment_metadata_created_at_ms(m, &ms, &present));
    CHECK(present && ms >= before && ms <= after);
    if (!(ms >= before && ms <= after))
        fprintf(stderr, "    created at %lld, built between %lld and %lld\n", (long long)ms, (long long)before,
                (long long)after);
    check_ids(m, VEC_FIELD, fragment_ids, 3);
    check_files(m, uuid, true);

    /* The same bytes parse to the same description. */
    LanceIndexSegmentMetadata* again = parse(bytes, len);
    CHECK(again && strcmp(lance_index_segment_metadata_name(again), "vec_segment") == 0);
    CHECK(again && lance_index_segment_metadata_file_count(again) == lance_index_segment_metadata_file_count(m));
    lance_index_segment_metadata_free(again);
    lance_index_segment_metadata_free(m);
    lance_free_bytes(bytes);
}

/* Centroids given as Arrow arrays, or the model they make given as a
 * handle (lance_index_segment_builder_set_model()): either way the segment
 * records the fingerprint of that model. */
static void test_model_fingerprint(void) {
    struct ArrowArray cent;
    struct ArrowSchema cent_s;
    CHECK_OK(lance_index_train_ivf_model(ds, "vec", 4, LANCE_METRIC_L2, NULL, 0, &cent, &cent_s));
    LanceVectorModel* model = NULL;
    CHECK_OK(lance_vector_model_from_arrow(LANCE_METRIC_L2, &cent, &cent_s, 0, 0, NULL, NULL, &model));
    char* want = lance_vector_model_fingerprint(model);
    CHECK(want != NULL);

    const uint32_t fragment_ids[] = {0, 5};
    LanceVectorIndexSegmentParams p = {0};
    p.index_type = LANCE_INDEX_IVF_SQ;
    p.num_partitions = 4;
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = fragment_ids;
    o.fragment_count = 2;
    o.ivf_centroids = &cent;
    o.ivf_centroids_schema = &cent_s;
    o.mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
    size_t len = 0;
    uint8_t* bytes = sk_execute(lance_index_segment_builder_new_vector(ds, "vec", NULL, &p, &o), &len, true);
    LanceIndexSegmentMetadata* m = bytes ? parse(bytes, len) : NULL;
    if (m) {
        const char* fp = lance_index_segment_metadata_model_fingerprint(m);
        CHECK(fp && want && strcmp(fp, want) == 0);
        const char* name = lance_index_segment_metadata_name(m);
        CHECK(name && strcmp(name, "vec_idx") == 0); /* NULL index_name = "<column>_idx" */
        CHECK(lance_index_segment_metadata_index_type(m) == LANCE_INDEX_IVF_SQ);
        CHECK(strcmp(lance_index_segment_metadata_index_type_name(m), "IVF_SQ") == 0);
        check_ids(m, VEC_FIELD, fragment_ids, 2);
    }
    lance_index_segment_metadata_free(m);
    lance_free_bytes(bytes);

    const uint32_t others[] = {1, 4};
    LanceIndexSegmentBuildOptions by_handle = {0};
    by_handle.fragment_ids = others;
    by_handle.fragment_count = 2;
    LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_vector(ds, "vec", "by_handle", &p, &by_handle);
    CHECK(b != NULL);
    CHECK_OK(lance_index_segment_builder_set_model(b, model));
    bytes = sk_execute(b, &len, true);
    m = bytes ? parse(bytes, len) : NULL;
    if (m) {
        const char* fp = lance_index_segment_metadata_model_fingerprint(m);
        CHECK(fp && want && strcmp(fp, want) == 0);
        CHECK(strcmp(lance_index_segment_metadata_name(m), "by_handle") == 0);
        CHECK(lance_index_segment_metadata_index_type(m) == LANCE_INDEX_IVF_SQ);
        check_ids(m, VEC_FIELD, others, 2);
    }
    lance_index_segment_metadata_free(m);
    lance_free_bytes(bytes);
    lance_free_string(want);
    lance_vector_model_free(model);
    cent.release(&cent);
    cent_s.release(&cent_s);
}

/* ---- scalar segments ---- */

static void test_scalar_segments(void) {
    /* BTREE over the whole dataset (NULL options). */
    size_t len = 0;
    uint8_t* bytes =
        sk_execute(lance_index_segment_builder_new_scalar(ds, "id", NULL, LANCE_SCALAR_BTREE, NULL, NULL), &len, true);
    LanceIndexSegmentMetadata* m = bytes ? parse(bytes, len) : NULL;
    if (m) {
        CHECK(strcmp(lance_index_segment_metadata_name(m), "id_idx") == 0);
        CHECK(lance_index_segment_metadata_index_type(m) == LANCE_SCALAR_BTREE);
        CHECK(strcmp(lance_index_segment_metadata_index_type_name(m), "BTree") == 0);
        const char* url = lance_index_segment_metadata_index_details_type_url(m);
        CHECK(url && strcmp(url, "/lance.table.BTreeIndexDetails") == 0);
        CHECK(lance_index_segment_metadata_model_fingerprint(m) == NULL && lance_last_error_code() == LANCE_OK);
        CHECK(lance_index_segment_metadata_dataset_version(m) == 1);
        const uint32_t all[FRAGS] = {0, 1, 2, 3, 4, 5};
        check_ids(m, ID_FIELD, all, FRAGS);
        uint8_t uuid[16];
        CHECK_OK(lance_index_segment_metadata_uuid(m, uuid));
        check_files(m, uuid, false);
    }
    lance_index_segment_metadata_free(m);
    lance_free_bytes(bytes);

    /* BITMAP over two fragments, with a caller's UUID. */
    uint8_t uuid[16];
    tu_uuid(11, uuid);
    const uint32_t fragment_ids[] = {2, 5};
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = fragment_ids;
    o.fragment_count = 2;
    o.index_uuid = uuid;
    bytes = sk_execute(lance_index_segment_builder_new_scalar(ds, "tag", "tags", LANCE_SCALAR_BITMAP, NULL, &o), &len,
                       true);
    m = bytes ? parse(bytes, len) : NULL;
    if (m) {
        uint8_t got[16];
        CHECK_OK(lance_index_segment_metadata_uuid(m, got));
        CHECK(memcmp(got, uuid, 16) == 0);
        CHECK(strcmp(lance_index_segment_metadata_name(m), "tags") == 0);
        CHECK(lance_index_segment_metadata_index_type(m) == LANCE_SCALAR_BITMAP);
        CHECK(strcmp(lance_index_segment_metadata_index_type_name(m), "Bitmap") == 0);
        check_ids(m, TAG_FIELD, fragment_ids, 2);
        check_files(m, uuid, true);
    }
    lance_index_segment_metadata_free(m);
    lance_free_bytes(bytes);
    /* Nothing was committed. */
    CHECK(lance_dataset_latest_version(ds) == 1);
}

/* ---- bytes that are not metadata, and NULL handles ---- */

static void test_refusals(void) {
    /* Metadata bytes that are not metadata. */
    LanceIndexSegmentMetadata* m = NULL;
    uint8_t garbage[] = {0xff, 0xff, 0xff, 0x01, 0x02};
    CHECK_ERR(lance_index_segment_metadata_parse(garbage, sizeof garbage, &m), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_index_segment_metadata_parse(garbage, 0, &m), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_index_segment_metadata_parse(NULL, 0, &m), LANCE_ERR_INVALID_ARGUMENT);
    uint8_t empty_message[] = {0x12, 0x00}; /* a valid protobuf with no uuid */
    CHECK_ERR(lance_index_segment_metadata_parse(empty_message, sizeof empty_message, &m), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(m == NULL);

    /* A real segment's bytes, truncated at every length, never crash. */
    LanceVectorIndexSegmentParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 4;
    size_t len = 0;
    uint8_t* bytes = sk_execute(lance_index_segment_builder_new_vector(ds, "vec", NULL, &p, NULL), &len, true);
    CHECK(bytes != NULL);
    int refused = 0;
    for (size_t cut = 1; bytes && cut < len; cut++) {
        if (lance_index_segment_metadata_parse(bytes, cut, &m) == 0) {
            lance_index_segment_metadata_free(m);
            m = NULL;
        } else {
            refused += lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT;
        }
    }
    CHECK(refused > 0);
    CHECK_ERR(lance_index_segment_metadata_parse(bytes, len, NULL), LANCE_ERR_INVALID_ARGUMENT);
    m = bytes ? parse(bytes, len) : NULL;
    CHECK_ERR(lance_index_segment_metadata_uuid(m, NULL), LANCE_ERR_INVALID_ARGUMENT);
    int64_t ms;
    bool present;
    CHECK_ERR(lance_index_segment_metadata_created_at_ms(m, NULL, &present), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_index_segment_metadata_created_at_ms(m, &ms, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_index_segment_metadata_field_ids(m, NULL, 0, NULL), LANCE_ERR_INVALID_ARGUMENT);
    lance_index_segment_metadata_free(m);
    lance_free_bytes(bytes);

    /* NULL handles on the getters. */
    uint8_t u[16];
    size_t count;
    CHECK_ERR(lance_index_segment_metadata_uuid(NULL, u), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_index_segment_metadata_name(NULL) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_index_segment_metadata_index_type_name(NULL) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_index_segment_metadata_index_type(NULL) == -1);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_index_segment_metadata_index_details_type_url(NULL) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_index_segment_metadata_model_fingerprint(NULL) == NULL &&
          lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_index_segment_metadata_dataset_version(NULL) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_index_segment_metadata_file_count(NULL) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_index_segment_metadata_field_count(NULL) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_index_segment_metadata_fragment_count(NULL) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_index_segment_metadata_index_version(NULL) == -1);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_index_segment_metadata_created_at_ms(NULL, &ms, &present), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_index_segment_metadata_field_ids(NULL, NULL, 0, &count), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_index_segment_metadata_fragment_ids(NULL, NULL, 0, &count), LANCE_ERR_INVALID_ARGUMENT);
    const char* path;
    uint64_t size;
    CHECK_ERR(lance_index_segment_metadata_file_at(NULL, 0, &path, &size), LANCE_ERR_INVALID_ARGUMENT);
    lance_index_segment_metadata_free(NULL);
}

int main(void) {
    tu_fixture_begin(&fixture, "metadata", tu_make_data(ROWS, DIM, 8, 0.5f, 5), ROWS / FRAGS);
    ds = fixture.ds;
    CHECK(lance_dataset_fragment_count(ds) == FRAGS);
    RUN(test_vector_segment);
    RUN(test_model_fingerprint);
    RUN(test_scalar_segments);
    RUN(test_refusals);
    return tu_fixture_end(&fixture, "test_metadata");
}
