/* An engine linked with its own zstd and lz4 next to lance-c's static
 * archive (tests/link/check_link.sh links it in one command, the way an
 * engine's build does).  The engine's compression calls must reach its own
 * libraries, whose version numbers are the ones its headers name, and
 * lance-c must still write, index and search a dataset whose text columns
 * it compresses with the zstd and lz4 it carries itself. */
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "test_util.h"

/* 1 MiB of text that compresses well. */
static char* sample_text(size_t* len) {
    *len = 1u << 20;
    char* text = malloc(*len);
    for (size_t i = 0; i < *len; i++) text[i] = "the engine's own codecs "[i % 24] + (char)(i / 4096 % 3);
    return text;
}

static void test_own_zstd(void) {
    CHECK(ZSTD_versionNumber() == ZSTD_VERSION_NUMBER);
    size_t len;
    char* text = sample_text(&len);
    size_t bound = ZSTD_compressBound(len);
    char* packed = malloc(bound);
    char* unpacked = malloc(len);
    size_t packed_len = ZSTD_compress(packed, bound, text, len, 3);
    CHECK(!ZSTD_isError(packed_len) && packed_len < len / 20);
    CHECK(ZSTD_decompress(unpacked, len, packed, packed_len) == len);
    CHECK(memcmp(unpacked, text, len) == 0);
    free(text);
    free(packed);
    free(unpacked);
}

static void test_own_lz4(void) {
    CHECK(LZ4_versionNumber() == LZ4_VERSION_NUMBER);
    size_t len;
    char* text = sample_text(&len);
    int bound = LZ4_compressBound((int)len);
    char* packed = malloc((size_t)bound);
    char* unpacked = malloc(len);
    int packed_len = LZ4_compress_default(text, packed, (int)len, bound);
    CHECK(packed_len > 0 && (size_t)packed_len < len / 20);
    CHECK(LZ4_decompress_safe(packed, unpacked, packed_len, (int)len) == (int)len);
    CHECK(memcmp(unpacked, text, len) == 0);
    free(text);
    free(packed);
    free(unpacked);
}

/* ---- lance-c ---- */

/* Arrow field metadata {"lance-encoding:dict-values-compression": codec}, in
 * the C Data Interface's encoding: a pair count, then each key and value,
 * each led by its length (int32, native byte order).  "tag" holds 7
 * distinct values, so Lance dictionary-encodes it and compresses the
 * dictionary with this codec (lz4 when the key is absent). */
typedef struct {
    char bytes[96];
} FieldMetadata;

static FieldMetadata compression_metadata(const char* codec) {
    static const char key[] = "lance-encoding:dict-values-compression";
    FieldMetadata m;
    int32_t count = 1, key_len = (int32_t)strlen(key), value_len = (int32_t)strlen(codec);
    char* p = m.bytes;
    memcpy(p, &count, 4);
    memcpy(p + 4, &key_len, 4);
    memcpy(p + 8, key, (size_t)key_len);
    memcpy(p + 8 + key_len, &value_len, 4);
    memcpy(p + 12 + key_len, codec, (size_t)value_len);
    return m;
}

/* tu_stream() whose schema asks Lance to compress the "tag" column with a
 * codec: the write takes field metadata from the stream's schema. */
typedef struct {
    struct ArrowArrayStream inner;
    FieldMetadata metadata;
} CodecStream;

static int codec_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
    CodecStream* cs = s->private_data;
    int rc = cs->inner.get_schema(&cs->inner, out);
    if (rc == 0) out->children[2]->metadata = cs->metadata.bytes;
    return rc;
}

static int codec_get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
    CodecStream* cs = s->private_data;
    return cs->inner.get_next(&cs->inner, out);
}

static const char* codec_last_error(struct ArrowArrayStream* s) {
    CodecStream* cs = s->private_data;
    return cs->inner.get_last_error(&cs->inner);
}

static void codec_release(struct ArrowArrayStream* s) {
    CodecStream* cs = s->private_data;
    cs->inner.release(&cs->inner);
    free(cs);
    s->release = NULL;
}

/* Writes `data` to `uri` in fragments of 1000 rows, "tag" compressed with `codec`. */
static LanceDataset* write_with_codec(const char* uri, const TuData* data, const char* codec) {
    CodecStream* cs = calloc(1, sizeof(CodecStream));
    tu_stream(data, 0, data->rows, 500, &cs->inner);
    cs->metadata = compression_metadata(codec);
    struct ArrowArrayStream stream = {.get_schema = codec_get_schema,
                                      .get_next = codec_get_next,
                                      .get_last_error = codec_last_error,
                                      .release = codec_release,
                                      .private_data = cs};
    struct ArrowSchema schema;
    tu_schema(data->dim, &schema);
    LanceWriteParams params = {.max_rows_per_file = 1000};
    LanceDataset* ds = NULL;
    int rc = lance_dataset_write_with_params(uri, &schema, &stream, LANCE_WRITE_CREATE, &params, NULL, &ds);
    schema.release(&schema);
    return rc == 0 ? ds : NULL;
}

/* Every row's "tag" reads back as tu_stream() wrote it ("t<id % 7>"). */
static void check_tags(LanceDataset* ds, int64_t rows) {
    const char* columns[] = {"id", "tag", NULL};
    LanceScanner* scanner = lance_scanner_new(ds, columns, NULL);
    CHECK(scanner != NULL);
    if (!scanner) return;
    int64_t seen = 0, wrong = 0;
    for (;;) {
        LanceBatch* batch = NULL;
        int rc = lance_scanner_next(scanner, &batch);
        if (rc != 0) {
            CHECK(rc == 1);
            break;
        }
        struct ArrowArray array;
        struct ArrowSchema schema;
        CHECK_OK(lance_batch_to_arrow(batch, &array, &schema));
        CHECK(strcmp(schema.children[1]->format, "u") == 0);
        const struct ArrowArray* ids = array.children[0];
        const struct ArrowArray* tags = array.children[1];
        const int32_t* offsets = (const int32_t*)tags->buffers[1] + tags->offset;
        const char* chars = tags->buffers[2];
        for (int64_t i = 0; i < array.length; i++) {
            int64_t id = ((const int64_t*)ids->buffers[1])[ids->offset + i];
            char want[8];
            snprintf(want, sizeof want, "t%d", (int)(id % 7));
            wrong += offsets[i + 1] - offsets[i] != (int32_t)strlen(want) ||
                     memcmp(chars + offsets[i], want, strlen(want)) != 0;
        }
        seen += array.length;
        array.release(&array);
        schema.release(&schema);
        lance_batch_free(batch);
    }
    lance_scanner_close(scanner);
    CHECK(seen == rows);
    CHECK(wrong == 0);
}

static void test_lance(void) {
    char* dir = tu_temp_dir("link");
    char zstd_uri[600], lz4_uri[600];
    snprintf(zstd_uri, sizeof zstd_uri, "%s/zstd.lance", dir);
    snprintf(lz4_uri, sizeof lz4_uri, "%s/lz4.lance", dir);
    TuData data = tu_make_data(4000, 16, 8, 1.0f, 24);

    LanceDataset* ds = write_with_codec(zstd_uri, &data, "zstd");
    CHECK(ds != NULL);
    LanceDataset* lz4_ds = write_with_codec(lz4_uri, &data, "lz4");
    CHECK(lz4_ds != NULL);
    if (!ds || !lz4_ds) goto done;
    CHECK(lance_dataset_fragment_count(ds) == 4);
    check_tags(ds, data.rows);
    check_tags(lz4_ds, data.rows);

    /* IVF_FLAT probing every partition is exact: the k-NN must equal brute force. */
    LanceVectorIndexParams params = {.index_type = LANCE_INDEX_IVF_FLAT, .num_partitions = 8};
    CHECK_OK(lance_dataset_create_vector_index(ds, "vec", "vec_idx", &params, false));
    CHECK(lance_dataset_index_count(ds) == 1);
    for (int q = 0; q < 5; q++) {
        const float* query = data.vectors + (int64_t)(q * 797 + 11) * data.dim;
        const char* columns[] = {"id", NULL};
        LanceScanner* scanner = lance_scanner_new(ds, columns, NULL);
        CHECK(scanner != NULL);
        if (!scanner) continue;
        CHECK_OK(lance_scanner_nearest(scanner, "vec", query, (size_t)data.dim, LANCE_DTYPE_FLOAT32, 10));
        CHECK_OK(lance_scanner_set_nprobes(scanner, 8));
        int64_t got[10], want[10];
        CHECK(tu_knn_ids(scanner, got, 10) == 10);
        tu_brute_force_knn(&data, query, 10, want);
        CHECK(memcmp(got, want, sizeof want) == 0);
        lance_scanner_close(scanner);
    }
done:
    lance_dataset_close(ds);
    lance_dataset_close(lz4_ds);
    tu_free_data(&data);
    tu_remove_tree(dir);
    free(dir);
}

int main(void) {
    printf("zstd %s, lz4 %s, lance-c %s\n", ZSTD_versionString(), LZ4_versionString(), lance_version());
    RUN(test_own_zstd);
    RUN(test_own_lz4);
    RUN(test_lance);
    return tu_finish("engine");
}
