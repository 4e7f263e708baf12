/* Per-segment listing and coverage (RFC E6): checked by parsing the JSON. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include "segment_params.h"
#include "test_util.h"

#define ROWS 4000
#define DIM 16
#define FRAGS 8

static TuData data;
static char* dir;
static char uri[600];

static int64_t dir_bytes;
static int add_size(const char* path, const struct stat* sb, int flag, struct FTW* ftw) {
    (void)path;
    (void)ftw;
    if (flag == FTW_F) dir_bytes += sb->st_size;
    return 0;
}

static int64_t segment_dir_bytes(const char* uuid) {
    char path[800];
    snprintf(path, sizeof path, "%s/_indices/%s", uri, uuid);
    dir_bytes = 0;
    if (nftw(path, add_size, 8, FTW_PHYS) != 0) return -1;
    return dir_bytes;
}

static int is_int_array(const JValue* v, const uint32_t* want, size_t n) {
    if (!v || v->type != J_ARRAY || v->count != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (v->items[i]->type != J_NUMBER || v->items[i]->number != (double)want[i]) return 0;
    return 1;
}

static double num(const JValue* obj, const char* key) {
    const JValue* v = json_get(obj, key);
    return v && v->type == J_NUMBER ? v->number : -1;
}

static const char* str(const JValue* obj, const char* key) {
    const JValue* v = json_get(obj, key);
    return v && v->type == J_STRING ? v->string : NULL;
}

static void test_listing(void) {
    snprintf(uri, sizeof uri, "%s/list.lance", dir);
    LanceDataset* ds = tu_write(uri, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS / FRAGS);
    CHECK(ds != NULL);

    /* No indices yet. */
    const char* text = lance_dataset_index_segments_json(ds);
    JValue* doc = json_parse(text);
    CHECK(doc && doc->type == J_ARRAY && doc->count == 0);
    json_free(doc);
    lance_free_string(text);
    CHECK(lance_dataset_index_coverage_json(ds, "vec_idx") == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);

    /* Four segments from one shared model, two fragments each. */
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 4;
    LanceVectorModel* model = NULL;
    CHECK_OK(lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model));
    const char* fingerprint = lance_vector_model_fingerprint(model);
    uint8_t* bytes[4];
    size_t lens[4];
    uint32_t groups[4][2];
    for (int w = 0; w < 4; w++) {
        groups[w][0] = (uint32_t)(2 * w);
        groups[w][1] = (uint32_t)(2 * w + 1);
        LanceIndexSegmentBuildOptions o = {0};
        o.fragment_ids = groups[w];
        o.fragment_count = 2;
        LanceIndexSegmentBuilder* b = vector_segment_builder_new(ds, "vec", NULL, &p, &o, model);
        CHECK(b != NULL);
        CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &bytes[w], &lens[w]));
        lance_index_segment_builder_free(b);
    }
    const uint8_t* ptrs[4] = {bytes[0], bytes[1], bytes[2], bytes[3]};
    LanceCommitIndexOptions commit = {0}; /* replace = false */
    LanceCommitIndexResult committed = {0};
    CHECK_OK(lance_dataset_commit_index_segments_v2(ds, "vec_idx", "vec", ptrs, lens, 4, &commit, &committed));
    CHECK(committed.version == 2 && !committed.already_committed);

    text = lance_dataset_index_segments_json(ds);
    doc = json_parse(text);
    CHECK(doc && doc->type == J_ARRAY && doc->count == 4);
    double total_rows = 0;
    int matched[4] = {0};
    for (size_t i = 0; doc && i < doc->count; i++) {
        const JValue* e = doc->items[i];
        CHECK(str(e, "name") && strcmp(str(e, "name"), "vec_idx") == 0);
        CHECK(str(e, "type") && strcmp(str(e, "type"), "IVF_FLAT") == 0);
        CHECK(num(e, "dataset_version") == 1);
        CHECK(num(e, "index_version") >= 0);
        const JValue* cols = json_get(e, "columns");
        CHECK(cols && cols->type == J_ARRAY && cols->count == 1 && !strcmp(cols->items[0]->string, "vec"));
        CHECK(str(e, "created_at") != NULL);
        CHECK(str(e, "model_fingerprint") && strcmp(str(e, "model_fingerprint"), fingerprint) == 0);
        /* Each entry's fragments are exactly one worker's group. */
        for (int w = 0; w < 4; w++)
            if (is_int_array(json_get(e, "fragment_ids"), groups[w], 2)) matched[w]++;
        CHECK(num(e, "num_rows") == 2.0 * ROWS / FRAGS);
        total_rows += num(e, "num_rows");
        /* The recorded size is what the segment's directory holds. */
        double size = num(e, "size_bytes");
        CHECK(size > 0);
        CHECK(str(e, "uuid") && size == (double)segment_dir_bytes(str(e, "uuid")));
    }
    for (int w = 0; w < 4; w++) CHECK(matched[w] == 1);
    CHECK(total_rows == ROWS);
    json_free(doc);
    lance_free_string(text);

    /* The legacy listing keeps exactly its five keys. */
    text = lance_dataset_index_list_json(ds);
    doc = json_parse(text);
    CHECK(doc && doc->type == J_ARRAY && doc->count == 4);
    for (size_t i = 0; doc && i < doc->count; i++) {
        const JValue* e = doc->items[i];
        CHECK(e->type == J_OBJECT && e->count == 5);
        CHECK(json_get(e, "name") && json_get(e, "uuid") && json_get(e, "columns") && json_get(e, "type") &&
              json_get(e, "dataset_version"));
    }
    json_free(doc);
    lance_free_string(text);

    uint32_t all[FRAGS] = {0, 1, 2, 3, 4, 5, 6, 7};
    text = lance_dataset_index_coverage_json(ds, "vec_idx");
    doc = json_parse(text);
    CHECK(doc != NULL);
    CHECK(num(doc, "num_segments") == 4 && num(doc, "dataset_version") == 2);
    CHECK(is_int_array(json_get(doc, "indexed_fragments"), all, FRAGS));
    CHECK(is_int_array(json_get(doc, "unindexed_fragments"), NULL, 0));
    CHECK(is_int_array(json_get(doc, "stale_fragments"), NULL, 0));
    CHECK(num(doc, "indexed_rows") == ROWS && num(doc, "unindexed_rows") == 0);
    json_free(doc);
    lance_free_string(text);

    /* An append: the new fragments are reported unindexed, with their rows. */
    LanceDataset* appended = tu_write(uri, &data, 0, 600, LANCE_WRITE_APPEND, 300);
    CHECK(appended != NULL);
    text = lance_dataset_index_coverage_json(appended, "vec_idx");
    doc = json_parse(text);
    uint32_t fresh[2] = {8, 9};
    CHECK(doc && is_int_array(json_get(doc, "unindexed_fragments"), fresh, 2));
    CHECK(doc && is_int_array(json_get(doc, "indexed_fragments"), all, FRAGS));
    CHECK(num(doc, "unindexed_rows") == 600 && num(doc, "indexed_rows") == ROWS);
    json_free(doc);
    lance_free_string(text);

    /* A one-shot index is one segment over every fragment. */
    CHECK_OK(lance_dataset_create_scalar_index(appended, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, false));
    text = lance_dataset_index_segments_json(appended);
    doc = json_parse(text);
    CHECK(doc && doc->count == 5);
    int found = 0;
    for (size_t i = 0; doc && i < doc->count; i++) {
        const JValue* e = doc->items[i];
        if (!str(e, "name") || strcmp(str(e, "name"), "id_idx") != 0) continue;
        found++;
        uint32_t ten[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
        CHECK(is_int_array(json_get(e, "fragment_ids"), ten, 10));
        CHECK(num(e, "num_rows") == ROWS + 600);
        CHECK(strcmp(str(e, "type"), "BTree") == 0);
        const JValue* fp = json_get(e, "model_fingerprint");
        CHECK(fp && fp->type == J_NULL);
    }
    CHECK(found == 1);
    json_free(doc);
    lance_free_string(text);

    /* Bad input. */
    CHECK(lance_dataset_index_segments_json(NULL) == NULL && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_index_coverage_json(ds, NULL) == NULL && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_index_coverage_json(NULL, "x") == NULL &&
          lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);

    for (int w = 0; w < 4; w++) lance_free_bytes(bytes[w]);
    lance_free_string(fingerprint);
    lance_vector_model_free(model);
    lance_dataset_close(appended);
    lance_dataset_close(ds);
}

static void test_json_reader(void) {
    /* The reader used above refuses what is not JSON, so it cannot pass everything. */
    JValue* v = json_parse("[1, {\"a\": null}, \"x\\n\", true]");
    CHECK(v && v->count == 4);
    json_free(v);
    CHECK(json_parse("[1,") == NULL);
    CHECK(json_parse("{\"a\" 1}") == NULL);
    CHECK(json_parse("[] x") == NULL);
}

int main(void) {
    data = tu_make_data(ROWS, DIM, 8, 0.5f, 31);
    dir = tu_temp_dir("listing");
    RUN(test_json_reader);
    RUN(test_listing);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_listing");
}
