/* A program written against lance-c 0.1.6: it uses only functions, enums and
 * struct fields of that interface, in its calling conventions.  Its compiling
 * unchanged against this lance.h is the first half of the test; its running
 * correctly is the second. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int failed = 0;
#define EXPECT(c)                                                       \
    do {                                                                \
        if (!(c)) {                                                     \
            const char* m = lance_last_error_message();                 \
            fprintf(stderr, "%d: %s (%s)\n", __LINE__, #c, m ? m : ""); \
            lance_free_string(m);                                       \
            failed++;                                                   \
        }                                                               \
    } while (0)

/* ---- the async scan, as a 0.1.6 program drives it ---- */

typedef struct {
    TuLatch calls; /* the callbacks' calls */
    int waited;    /* the calls a wait has seen */
    int32_t status;
    struct ArrowArrayStream* stream;
} AsyncResult;

static void on_scan(void* ctx, int32_t status, void* result) {
    AsyncResult* r = ctx;
    r->status = status;
    r->stream = result;
    tu_latch_signal(&r->calls);
}

static void on_wake(void* ctx) {
    AsyncResult* r = ctx;
    tu_latch_signal(&r->calls);
}

/* Waits for the next callback (or takes those that came since the last wait). */
static void wait_call(AsyncResult* r) { r->waited = tu_latch_wait(&r->calls, r->waited + 1, 0); }

static int64_t stream_rows(struct ArrowArrayStream* s) {
    int64_t rows = 0;
    struct ArrowArray a;
    while (s->get_next(s, &a) == 0 && a.release != NULL) {
        rows += a.length;
        a.release(&a);
    }
    return rows;
}

/* Rows a scan with this filter yields. */
static int64_t filtered_rows(LanceDataset* ds, const char* filter) {
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, filter);
    struct ArrowArrayStream out;
    if (!s || lance_scanner_to_arrow_stream(s, &out) != 0) return -1;
    int64_t rows = stream_rows(&out);
    out.release(&out);
    lance_scanner_close(s);
    return rows;
}

int main(void) {
    TuData data = tu_make_data(1200, 8, 4, 0.5f, 16);
    char* dir = tu_temp_dir("compat");
    char uri[600];
    snprintf(uri, sizeof uri, "%s/c.lance", dir);

    struct ArrowSchema schema;
    struct ArrowArrayStream stream;
    tu_schema(8, &schema);
    tu_stream(&data, 0, 1200, 300, &stream);
    LanceWriteParams wp = {0};
    wp.max_rows_per_file = 400;
    LanceDataset* ds = NULL;
    EXPECT(lance_dataset_write_with_params(uri, &schema, &stream, LANCE_WRITE_CREATE, &wp, NULL, &ds) == 0);
    schema.release(&schema);

    tu_schema(8, &schema);
    tu_stream(&data, 0, 100, 100, &stream);
    EXPECT(lance_dataset_write(uri, &schema, &stream, LANCE_WRITE_APPEND, NULL, NULL) == 0);
    schema.release(&schema);
    lance_dataset_close(ds);

    ds = lance_dataset_open(uri, NULL, 0);
    EXPECT(ds != NULL);
    EXPECT(lance_dataset_version(ds) == 2);
    EXPECT(lance_dataset_latest_version(ds) == 2);
    EXPECT(lance_dataset_count_rows(ds) == 1300);
    uint64_t nfrag = lance_dataset_fragment_count(ds);
    EXPECT(nfrag == 4);
    uint64_t* frag_ids = calloc(nfrag, sizeof(uint64_t));
    EXPECT(lance_dataset_fragment_ids(ds, frag_ids) == 0);
    struct ArrowSchema ds_schema;
    EXPECT(lance_dataset_schema(ds, &ds_schema) == 0);
    ds_schema.release(&ds_schema);

    LanceVectorIndexParams params;
    memset(&params, 0, sizeof params);
    params.index_type = LANCE_INDEX_IVF_FLAT;
    params.metric = LANCE_METRIC_L2;
    params.num_partitions = 2;
    EXPECT(lance_dataset_create_vector_index(ds, "vec", NULL, &params, false) == 0);
    EXPECT(lance_dataset_create_scalar_index(ds, "id", "id_btree", LANCE_SCALAR_BTREE, NULL, false) == 0);
    EXPECT(lance_dataset_index_count(ds) == 2);
    const char* list = lance_dataset_index_list_json(ds);
    EXPECT(list != NULL && strstr(list, "\"vec_idx\"") != NULL);
    lance_free_string(list);
    uint64_t nseg = lance_dataset_index_segment_count(ds, "vec_idx");
    EXPECT(nseg == 1);
    uint8_t uuids[16];
    uint64_t written = 0;
    EXPECT(lance_dataset_index_segments(ds, "vec_idx", uuids, 1, &written) == 0 && written == 1);

    const char* columns[] = {"id", NULL};
    LanceScanner* scanner = lance_scanner_new(ds, columns, "id < 500");
    EXPECT(scanner != NULL);
    EXPECT(lance_scanner_set_limit(scanner, 50) == 0);
    EXPECT(lance_scanner_set_offset(scanner, 0) == 0);
    EXPECT(lance_scanner_set_batch_size(scanner, 16) == 0);
    EXPECT(lance_scanner_with_row_id(scanner, true) == 0);
    EXPECT(lance_scanner_set_fragment_ids(scanner, frag_ids, (size_t)nfrag) == 0);
    int32_t rc;
    LanceBatch* batch = NULL;
    uint64_t rows = 0;
    while ((rc = lance_scanner_next(scanner, &batch)) == 0) {
        struct ArrowArray array;
        struct ArrowSchema bschema;
        EXPECT(lance_batch_to_arrow(batch, &array, &bschema) == 0);
        rows += (uint64_t)array.length;
        array.release(&array);
        bschema.release(&bschema);
        lance_batch_free(batch);
    }
    EXPECT(rc == 1);
    EXPECT(rows == 50);
    lance_scanner_close(scanner);

    scanner = lance_scanner_new(ds, columns, NULL);
    float query[8];
    memcpy(query, data.vectors, sizeof query);
    EXPECT(lance_scanner_nearest(scanner, "vec", query, 8, LANCE_DTYPE_FLOAT32, 5) == 0);
    EXPECT(lance_scanner_set_nprobes(scanner, 2) == 0);
    EXPECT(lance_scanner_set_refine_factor(scanner, 1) == 0);
    EXPECT(lance_scanner_set_ef(scanner, 10) == 0);
    EXPECT(lance_scanner_set_metric(scanner, LANCE_METRIC_L2) == 0);
    EXPECT(lance_scanner_set_use_index(scanner, true) == 0);
    EXPECT(lance_scanner_set_prefilter(scanner, false) == 0);
    EXPECT(lance_scanner_set_index_segments(scanner, uuids, 1) == 0);
    struct ArrowArrayStream out;
    EXPECT(lance_scanner_to_arrow_stream(scanner, &out) == 0);
    struct ArrowArray first;
    EXPECT(out.get_next(&out, &first) == 0 && first.length == 5);
    first.release(&first);
    out.release(&out);
    lance_scanner_close(scanner);

    /* Merge-insert and schema evolution (0.1.6). */
    const char* const key[] = {"id"};
    LanceMergeInsertParams mp;
    memset(&mp, 0, sizeof mp);
    mp.when_matched = LANCE_MERGE_WHEN_MATCHED_UPDATE_ALL;
    mp.when_not_matched = LANCE_MERGE_WHEN_NOT_MATCHED_INSERT_ALL;
    mp.when_not_matched_by_source = LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_KEEP;
    LanceMergeInsertResult mr;
    tu_stream(&data, 1100, 100, 100, &stream);
    EXPECT(lance_dataset_merge_insert(ds, key, 1, &stream, &mp, &mr) == 0);
    EXPECT(mr.num_updated_rows == 100 && mr.num_inserted_rows == 0 && mr.num_deleted_rows == 0);
    LanceSqlColumn sql = {"id2", "id * 2"};
    EXPECT(lance_dataset_add_columns_sql(ds, &sql, 1, 0) == 0);
    LanceColumnAlteration alt = {"id2", "double_id", LANCE_COLUMN_NULLABLE_TRUE, NULL};
    EXPECT(lance_dataset_alter_columns(ds, &alt, 1) == 0);
    const char* const drop[] = {"double_id"};
    EXPECT(lance_dataset_drop_columns(ds, drop, 1) == 0);
    EXPECT(lance_dataset_add_columns_stream(ds, NULL, 0) == -1);
    EXPECT(lance_dataset_add_columns_nulls(ds, NULL) == -1);
    uint64_t before_fragments = lance_dataset_version(ds);
    tu_schema(8, &schema);
    tu_stream(&data, 0, 10, 10, &stream);
    EXPECT(lance_write_fragments(uri, &schema, &stream, NULL) == 0);
    schema.release(&schema);
    EXPECT(lance_dataset_latest_version(ds) == before_fragments);

    EXPECT(lance_dataset_drop_index(ds, "id_btree") == 0);
    EXPECT(lance_dataset_index_count(ds) == 1);

    /* Compaction in the 0.1.6 form: options given, then NULL (defaults). The
       small fragments (1300 rows) fit one target fragment. */
    uint64_t before = lance_dataset_version(ds);
    uint64_t fragments_before = lance_dataset_fragment_count(ds);
    EXPECT(fragments_before >= 4);
    LanceCompactionOptions copts;
    memset(&copts, 0, sizeof copts);
    copts.target_rows_per_fragment = 2000;
    LanceCompactionMetrics metrics;
    memset(&metrics, 0xff, sizeof metrics);
    EXPECT(lance_dataset_compact_files(ds, &copts, &metrics) == 0);
    /* The Lance core picks which small fragments to merge (here it leaves the
       fragment merge-insert wrote alone); the counts must add up. */
    EXPECT(metrics.fragments_removed >= 2 && metrics.fragments_added >= 1);
    EXPECT(metrics.files_removed >= metrics.fragments_removed && metrics.files_added >= 1);
    /* The handle moves to the latest version (the Lance core commits a
       fragment-id reservation before the rewrite: two versions). */
    uint64_t after = lance_dataset_version(ds);
    EXPECT(after > before && lance_dataset_latest_version(ds) == after);
    EXPECT(lance_dataset_fragment_count(ds) == fragments_before - metrics.fragments_removed + metrics.fragments_added);
    EXPECT(lance_dataset_count_rows(ds) == 1300);
    /* Nothing left to do: success, zeroed metrics, no new version. */
    memset(&metrics, 0xff, sizeof metrics);
    EXPECT(lance_dataset_compact_files(ds, NULL, &metrics) == 0);
    EXPECT(metrics.fragments_removed == 0 && metrics.fragments_added == 0);
    EXPECT(metrics.files_removed == 0 && metrics.files_added == 0);
    EXPECT(lance_dataset_version(ds) == after && lance_dataset_latest_version(ds) == after);
    LanceVersions* versions = lance_dataset_versions(ds);
    EXPECT(versions != NULL && lance_versions_count(versions) >= 2);
    EXPECT(lance_versions_id_at(versions, 0) == 1);
    EXPECT(lance_versions_timestamp_ms_at(versions, 0) > 0);
    lance_versions_close(versions);
    LanceDataStatistics* stats = lance_dataset_calculate_data_stats(ds);
    EXPECT(stats != NULL && lance_data_statistics_count(stats) >= 3);
    EXPECT(lance_data_statistics_field_id_at(stats, 0) == 0);
    EXPECT(lance_data_statistics_bytes_on_disk_at(stats, 0) > 0);
    lance_data_statistics_close(stats);
    const char* update_columns[] = {"tag"};
    const char* update_values[] = {"'x'"};
    uint64_t updated = 0;
    EXPECT(lance_dataset_update(ds, "id < 10", update_columns, update_values, 1, &updated) == 0);
    EXPECT(updated == 20);
    const uint64_t take_indices[] = {0, 1};
    struct ArrowArrayStream taken;
    EXPECT(lance_dataset_take(ds, take_indices, 2, columns, &taken) == 0);
    struct ArrowArray taken_rows;
    EXPECT(taken.get_next(&taken, &taken_rows) == 0 && taken_rows.length == 2);
    taken_rows.release(&taken_rows);
    taken.release(&taken);
    LanceDataset* restored = lance_dataset_restore(ds, 1);
    EXPECT(restored != NULL && lance_dataset_count_rows(restored) == 1200);
    lance_dataset_close(restored);
    /* The restore above committed a new latest version: continue there. */
    lance_dataset_close(ds);
    ds = lance_dataset_open(uri, NULL, 0);
    EXPECT(ds != NULL && lance_dataset_count_rows(ds) == 1200);

    /* Delete: the count is the rows that left. */
    uint64_t rows_before = lance_dataset_count_rows(ds);
    uint64_t deleted = 0;
    EXPECT(lance_dataset_delete(ds, "id >= 1190", &deleted) == 0);
    EXPECT(deleted > 0 && lance_dataset_count_rows(ds) == rows_before - deleted);

    /* Full-text search over an INVERTED index on `tag`: the hits are the
       rows whose tag is the term. */
    EXPECT(lance_dataset_create_scalar_index(ds, "tag", "tag_fts", LANCE_SCALAR_INVERTED, NULL, false) == 0);
    const char* id_only[] = {"id", NULL};
    LanceScanner* fts = lance_scanner_new(ds, id_only, NULL);
    EXPECT(fts != NULL && lance_scanner_full_text_search(fts, "t3", NULL, 0) == 0);
    struct ArrowArrayStream fts_out;
    EXPECT(lance_scanner_to_arrow_stream(fts, &fts_out) == 0);
    int64_t hits = stream_rows(&fts_out);
    fts_out.release(&fts_out);
    lance_scanner_close(fts);
    EXPECT(hits > 0 && hits == filtered_rows(ds, "tag = 't3'"));

    /* A Substrait filter that is not a Substrait message: refused as input. */
    LanceScanner* sub = lance_scanner_new(ds, id_only, NULL);
    const uint8_t not_substrait[4] = {1, 2, 3, 4};
    EXPECT(lance_scanner_set_substrait_filter(sub, not_substrait, sizeof not_substrait) == -1);
    EXPECT(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(sub);

    /* The async scan: one callback with a stream of every row. */
    AsyncResult r = {.status = -1};
    tu_latch_init(&r.calls);
    LanceScanner* as = lance_scanner_new(ds, id_only, NULL);
    lance_scanner_scan_async(as, on_scan, &r);
    wait_call(&r);
    EXPECT(r.status == 0 && r.stream != NULL);
    if (r.stream) {
        EXPECT(stream_rows(r.stream) == (int64_t)lance_dataset_count_rows(ds));
        lance_scanner_async_stream_free(r.stream);
    }
    lance_scanner_close(as);

    /* Polling: READY batches until FINISHED, waiting for the waker on PENDING. */
    LanceScanner* ps = lance_scanner_new(ds, id_only, NULL);
    int64_t polled = 0;
    for (;;) {
        LanceBatch* batch = NULL;
        LancePollStatus st = lance_scanner_poll_next(ps, on_wake, &r, &batch);
        if (st == LANCE_POLL_PENDING) {
            wait_call(&r);
            continue;
        }
        if (st != LANCE_POLL_READY) {
            EXPECT(st == LANCE_POLL_FINISHED);
            break;
        }
        struct ArrowArray pa;
        struct ArrowSchema psch;
        EXPECT(lance_batch_to_arrow(batch, &pa, &psch) == 0);
        polled += pa.length;
        pa.release(&pa);
        psch.release(&psch);
        lance_batch_free(batch);
    }
    EXPECT(polled == (int64_t)lance_dataset_count_rows(ds));
    lance_scanner_close(ps);
    tu_latch_destroy(&r.calls);

    EXPECT(lance_dataset_open("", NULL, 0) == NULL);
    LanceErrorCode code = lance_last_error_code();
    EXPECT(code == LANCE_ERR_INVALID_ARGUMENT);
    lance_dataset_close(ds);
    free(frag_ids);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    printf("test_compat_016: %d failed\n", failed);
    return failed == 0 ? 0 : 1;
}
