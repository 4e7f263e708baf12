/* Conformance with the upstream lance-c interface (0.1.9 era; the facts are
 * ../shared/lance-c-upstream-interface.md), the part this library shares
 * with it today: every function the facts mark "same" is checked against
 * its exact upstream type, every enum value and struct layout likewise.
 * Any drift fails the build.  This proves only what is listed here: the
 * functions, codes and layouts upstream has and this library lacks or
 * declares differently are open work (issue "drop-in for upstream lance-c"),
 * and are deliberately not claimed. */
#include <stddef.h>
#include <stdio.h>

#include "lance/lance.h"

/* A function whose type is not exactly `type` selects no association. */
#define SAME_SIGNATURE(fn, type) _Static_assert(_Generic(&fn, type: 1, default: 0), #fn " differs from upstream")
#define SAME_VALUE(name, value) _Static_assert((name) == (value), #name " differs from upstream")
#define SAME_LAYOUT(type, member, offset) \
    _Static_assert(offsetof(type, member) == (offset), #type "." #member " is not where upstream has it")

/* ---- functions: 57 of upstream's 127 ---- */
static void functions(void) {
    SAME_SIGNATURE(lance_last_error_code, LanceErrorCode (*)(void));
    SAME_SIGNATURE(lance_last_error_message, const char* (*)(void));
    SAME_SIGNATURE(lance_free_string, void (*)(const char*));
    SAME_SIGNATURE(lance_free_bytes, void (*)(uint8_t*));
    SAME_SIGNATURE(lance_dataset_open, LanceDataset* (*)(const char*, const char* const*, uint64_t));
    SAME_SIGNATURE(lance_dataset_close, void (*)(LanceDataset*));
    SAME_SIGNATURE(lance_dataset_version, uint64_t (*)(const LanceDataset*));
    SAME_SIGNATURE(lance_dataset_count_rows, uint64_t (*)(const LanceDataset*));
    SAME_SIGNATURE(lance_dataset_latest_version, uint64_t (*)(const LanceDataset*));
    SAME_SIGNATURE(lance_dataset_schema, int32_t (*)(const LanceDataset*, struct ArrowSchema*));
    SAME_SIGNATURE(lance_dataset_fragment_count, uint64_t (*)(const LanceDataset*));
    SAME_SIGNATURE(lance_dataset_fragment_ids, int32_t (*)(const LanceDataset*, uint64_t*));
    SAME_SIGNATURE(lance_dataset_delete, int32_t (*)(LanceDataset*, const char*, uint64_t*));
    SAME_SIGNATURE(lance_dataset_merge_insert, int32_t (*)(LanceDataset*, const char* const*, size_t, struct ArrowArrayStream*, const LanceMergeInsertParams*, LanceMergeInsertResult*));
    SAME_SIGNATURE(lance_dataset_drop_columns, int32_t (*)(LanceDataset*, const char* const*, size_t));
    SAME_SIGNATURE(lance_dataset_alter_columns, int32_t (*)(LanceDataset*, const LanceColumnAlteration*, size_t));
    SAME_SIGNATURE(lance_dataset_add_columns_sql, int32_t (*)(LanceDataset*, const LanceSqlColumn*, size_t, uint64_t));
    SAME_SIGNATURE(lance_dataset_add_columns_nulls, int32_t (*)(LanceDataset*, const struct ArrowSchema*));
    SAME_SIGNATURE(lance_dataset_add_columns_stream, int32_t (*)(LanceDataset*, struct ArrowArrayStream*, uint64_t));
    SAME_SIGNATURE(lance_write_fragments, int32_t (*)(const char*, const struct ArrowSchema*, struct ArrowArrayStream*, const char* const*));
    SAME_SIGNATURE(lance_scanner_new, LanceScanner* (*)(const LanceDataset*, const char* const*, const char*));
    SAME_SIGNATURE(lance_scanner_set_limit, int32_t (*)(LanceScanner*, int64_t));
    SAME_SIGNATURE(lance_scanner_set_offset, int32_t (*)(LanceScanner*, int64_t));
    SAME_SIGNATURE(lance_scanner_set_batch_size, int32_t (*)(LanceScanner*, int64_t));
    SAME_SIGNATURE(lance_scanner_with_row_id, int32_t (*)(LanceScanner*, bool));
    SAME_SIGNATURE(lance_scanner_set_fragment_ids, int32_t (*)(LanceScanner*, const uint64_t*, size_t));
    SAME_SIGNATURE(lance_scanner_close, void (*)(LanceScanner*));
    SAME_SIGNATURE(lance_scanner_to_arrow_stream, int32_t (*)(LanceScanner*, struct ArrowArrayStream*));
    SAME_SIGNATURE(lance_scanner_next, int32_t (*)(LanceScanner*, LanceBatch**));
    SAME_SIGNATURE(lance_batch_to_arrow, int32_t (*)(const LanceBatch*, struct ArrowArray*, struct ArrowSchema*));
    SAME_SIGNATURE(lance_batch_free, void (*)(LanceBatch*));
    SAME_SIGNATURE(lance_dataset_write, int32_t (*)(const char*, const struct ArrowSchema*, struct ArrowArrayStream*, int32_t, const char* const*, LanceDataset**));
    SAME_SIGNATURE(lance_dataset_write_with_params, int32_t (*)(const char*, const struct ArrowSchema*, struct ArrowArrayStream*, int32_t, const LanceWriteParams*, const char* const*, LanceDataset**));
    SAME_SIGNATURE(lance_dataset_create_vector_index, int32_t (*)(LanceDataset*, const char*, const char*, const LanceVectorIndexParams*, bool));
    SAME_SIGNATURE(lance_dataset_create_scalar_index, int32_t (*)(LanceDataset*, const char*, const char*, LanceScalarIndexType, const char*, bool));
    SAME_SIGNATURE(lance_dataset_drop_index, int32_t (*)(LanceDataset*, const char*));
    SAME_SIGNATURE(lance_dataset_index_count, uint64_t (*)(const LanceDataset*));
    SAME_SIGNATURE(lance_dataset_index_list_json, const char* (*)(const LanceDataset*));
    SAME_SIGNATURE(lance_dataset_index_segment_count, uint64_t (*)(const LanceDataset*, const char*));
    SAME_SIGNATURE(lance_dataset_index_segments, int32_t (*)(const LanceDataset*, const char*, uint8_t*, size_t, uint64_t*));
    SAME_SIGNATURE(lance_index_segment_builder_execute_uncommitted, int32_t (*)(LanceIndexSegmentBuilder*, uint8_t**, size_t*));
    SAME_SIGNATURE(lance_index_segment_builder_free, void (*)(LanceIndexSegmentBuilder*));
    SAME_SIGNATURE(lance_index_segment_metadata_parse, int32_t (*)(const uint8_t*, size_t, LanceIndexSegmentMetadata**));
    SAME_SIGNATURE(lance_index_segment_metadata_uuid, int32_t (*)(const LanceIndexSegmentMetadata*, uint8_t*));
    SAME_SIGNATURE(lance_index_segment_metadata_name, const char* (*)(const LanceIndexSegmentMetadata*));
    SAME_SIGNATURE(lance_index_segment_metadata_dataset_version, uint64_t (*)(const LanceIndexSegmentMetadata*));
    SAME_SIGNATURE(lance_index_segment_metadata_field_ids, int32_t (*)(const LanceIndexSegmentMetadata*, int32_t*, size_t, size_t*));
    SAME_SIGNATURE(lance_index_segment_metadata_fragment_ids, int32_t (*)(const LanceIndexSegmentMetadata*, uint32_t*, size_t, size_t*));
    SAME_SIGNATURE(lance_index_segment_metadata_free, void (*)(LanceIndexSegmentMetadata*));
    SAME_SIGNATURE(lance_scanner_nearest, int32_t (*)(LanceScanner*, const char*, const void*, size_t, LanceDataType, uint32_t));
    SAME_SIGNATURE(lance_scanner_set_nprobes, int32_t (*)(LanceScanner*, uint32_t));
    SAME_SIGNATURE(lance_scanner_set_refine_factor, int32_t (*)(LanceScanner*, uint32_t));
    SAME_SIGNATURE(lance_scanner_set_ef, int32_t (*)(LanceScanner*, uint32_t));
    SAME_SIGNATURE(lance_scanner_set_metric, int32_t (*)(LanceScanner*, LanceMetricType));
    SAME_SIGNATURE(lance_scanner_set_use_index, int32_t (*)(LanceScanner*, bool));
    SAME_SIGNATURE(lance_scanner_set_prefilter, int32_t (*)(LanceScanner*, bool));
    SAME_SIGNATURE(lance_scanner_set_index_segments, int32_t (*)(LanceScanner*, const uint8_t*, size_t));
}

/* ---- enums (the values upstream defines) ---- */
SAME_VALUE(LANCE_OK, 0);
SAME_VALUE(LANCE_ERR_INVALID_ARGUMENT, 1);
SAME_VALUE(LANCE_ERR_IO, 2);
SAME_VALUE(LANCE_ERR_NOT_FOUND, 3);
SAME_VALUE(LANCE_ERR_DATASET_ALREADY_EXISTS, 4);
SAME_VALUE(LANCE_ERR_INDEX, 5);
SAME_VALUE(LANCE_ERR_INTERNAL, 6);
SAME_VALUE(LANCE_ERR_NOT_SUPPORTED, 7);
SAME_VALUE(LANCE_ERR_COMMIT_CONFLICT, 8);
SAME_VALUE(LANCE_INDEX_IVF_FLAT, 101);
SAME_VALUE(LANCE_INDEX_IVF_SQ, 102);
SAME_VALUE(LANCE_INDEX_IVF_PQ, 103);
SAME_VALUE(LANCE_INDEX_IVF_HNSW_SQ, 104);
SAME_VALUE(LANCE_INDEX_IVF_HNSW_PQ, 105);
SAME_VALUE(LANCE_INDEX_IVF_HNSW_FLAT, 106);
SAME_VALUE(LANCE_SCALAR_BTREE, 1);
SAME_VALUE(LANCE_SCALAR_BITMAP, 2);
SAME_VALUE(LANCE_SCALAR_LABEL_LIST, 3);
SAME_VALUE(LANCE_SCALAR_INVERTED, 4);
SAME_VALUE(LANCE_METRIC_L2, 0);
SAME_VALUE(LANCE_METRIC_COSINE, 1);
SAME_VALUE(LANCE_METRIC_DOT, 2);
SAME_VALUE(LANCE_METRIC_HAMMING, 3);
SAME_VALUE(LANCE_DTYPE_FLOAT32, 0);
SAME_VALUE(LANCE_DTYPE_FLOAT16, 1);
SAME_VALUE(LANCE_DTYPE_FLOAT64, 2);
SAME_VALUE(LANCE_DTYPE_UINT8, 3);
SAME_VALUE(LANCE_DTYPE_INT8, 4);
SAME_VALUE(LANCE_WRITE_CREATE, 0);
SAME_VALUE(LANCE_WRITE_APPEND, 1);
SAME_VALUE(LANCE_WRITE_OVERWRITE, 2);
SAME_VALUE(LANCE_MERGE_WHEN_MATCHED_DO_NOTHING, 0);
SAME_VALUE(LANCE_MERGE_WHEN_MATCHED_UPDATE_ALL, 1);
SAME_VALUE(LANCE_MERGE_WHEN_MATCHED_UPDATE_IF, 2);
SAME_VALUE(LANCE_MERGE_WHEN_MATCHED_FAIL, 3);
SAME_VALUE(LANCE_MERGE_WHEN_MATCHED_DELETE, 4);
SAME_VALUE(LANCE_MERGE_WHEN_NOT_MATCHED_INSERT_ALL, 0);
SAME_VALUE(LANCE_MERGE_WHEN_NOT_MATCHED_DO_NOTHING, 1);
SAME_VALUE(LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_KEEP, 0);
SAME_VALUE(LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE, 1);
SAME_VALUE(LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE_IF, 2);
SAME_VALUE(LANCE_COLUMN_NULLABLE_UNCHANGED, 0);
SAME_VALUE(LANCE_COLUMN_NULLABLE_TRUE, 1);
SAME_VALUE(LANCE_COLUMN_NULLABLE_FALSE, 2);

/* ---- structs: field order, offsets and sizes on LP64 ---- */
_Static_assert(sizeof(LanceVectorIndexParams) == 36, "LanceVectorIndexParams size");
SAME_LAYOUT(LanceVectorIndexParams, index_type, 0);
SAME_LAYOUT(LanceVectorIndexParams, metric, 4);
SAME_LAYOUT(LanceVectorIndexParams, num_partitions, 8);
SAME_LAYOUT(LanceVectorIndexParams, num_sub_vectors, 12);
SAME_LAYOUT(LanceVectorIndexParams, num_bits, 16);
SAME_LAYOUT(LanceVectorIndexParams, max_iterations, 20);
SAME_LAYOUT(LanceVectorIndexParams, hnsw_m, 24);
SAME_LAYOUT(LanceVectorIndexParams, hnsw_ef_construction, 28);
SAME_LAYOUT(LanceVectorIndexParams, sample_rate, 32);
_Static_assert(sizeof(LanceCompactionMetrics) == 32, "LanceCompactionMetrics size");
SAME_LAYOUT(LanceCompactionMetrics, fragments_removed, 0);
SAME_LAYOUT(LanceCompactionMetrics, fragments_added, 8);
SAME_LAYOUT(LanceCompactionMetrics, files_removed, 16);
SAME_LAYOUT(LanceCompactionMetrics, files_added, 24);
_Static_assert(sizeof(LanceWriteParams) == 40, "LanceWriteParams size");
SAME_LAYOUT(LanceWriteParams, max_rows_per_file, 0);
SAME_LAYOUT(LanceWriteParams, max_rows_per_group, 8);
SAME_LAYOUT(LanceWriteParams, max_bytes_per_file, 16);
SAME_LAYOUT(LanceWriteParams, data_storage_version, 24);
SAME_LAYOUT(LanceWriteParams, enable_stable_row_ids, 32);
_Static_assert(sizeof(struct LanceMergeInsertParams) == 32, "LanceMergeInsertParams size");
SAME_LAYOUT(LanceMergeInsertParams, when_matched, 0);
SAME_LAYOUT(LanceMergeInsertParams, when_matched_expr, 8);
SAME_LAYOUT(LanceMergeInsertParams, when_not_matched, 16);
SAME_LAYOUT(LanceMergeInsertParams, when_not_matched_by_source, 20);
SAME_LAYOUT(LanceMergeInsertParams, when_not_matched_by_source_expr, 24);
_Static_assert(sizeof(struct LanceMergeInsertResult) == 24, "LanceMergeInsertResult size");
SAME_LAYOUT(LanceMergeInsertResult, num_inserted_rows, 0);
SAME_LAYOUT(LanceMergeInsertResult, num_updated_rows, 8);
SAME_LAYOUT(LanceMergeInsertResult, num_deleted_rows, 16);
_Static_assert(sizeof(struct LanceColumnAlteration) == 32, "LanceColumnAlteration size");
SAME_LAYOUT(LanceColumnAlteration, path, 0);
SAME_LAYOUT(LanceColumnAlteration, rename, 8);
SAME_LAYOUT(LanceColumnAlteration, nullable_mode, 16);
SAME_LAYOUT(LanceColumnAlteration, data_type, 24);
_Static_assert(sizeof(struct LanceSqlColumn) == 16, "LanceSqlColumn size");
SAME_LAYOUT(LanceSqlColumn, name, 0);
SAME_LAYOUT(LanceSqlColumn, expression, 8);
/* The merge and column enums are anonymous, as upstream's. */
static LanceMergeWhenMatched when_matched_value = LANCE_MERGE_WHEN_MATCHED_DO_NOTHING;
static LanceMergeWhenNotMatched when_not_matched_value = LANCE_MERGE_WHEN_NOT_MATCHED_INSERT_ALL;
static LanceMergeWhenNotMatchedBySource by_source_value = LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_KEEP;
static LanceColumnNullableMode nullable_value = LANCE_COLUMN_NULLABLE_UNCHANGED;

int main(void) {
    (void)functions;
    (void)when_matched_value, (void)when_not_matched_value, (void)by_source_value, (void)nullable_value;
    /* Everything above is checked by the compiler; reaching here means it held. */
    puts("upstream interface, shared part: 57 functions, 44 enum values, 7 structs conform");
    return 0;
}
