/* Conformance with upstream lance-c's C interface (the 0.1.9 line and the
 * three functions upstream's main branch adds to it, plus the data-cache
 * pair of upstream's feature line that Apache Doris calls; the facts are
 * ../shared/lance-c-upstream-interface.md, "the facts" below).
 *
 * A program written for upstream must compile and link against lance.h and
 * liblance_c unchanged.  This file states upstream's declarations, pasted
 * from the facts, and makes the compiler compare lance.h with them:
 *
 *   functions     the exact function type (return and parameter types, in
 *                 order), then a reference to each, so the link proves the
 *                 library exports it;
 *   enums         every enumerator's value, the typedef (and, where upstream
 *                 has one, the tag) and its size;
 *   structs       size on LP64, and for every field its offset and type;
 *   typedefs      callback signatures and opaque handle typedefs.
 *
 * Any drift in a checked item fails the BUILD (a _Static_assert names it).
 *
 * The limit of C: two types are "the same" here when they are compatible, so
 * a parameter declared as an enum on one side and as that enum's underlying
 * integer type (unsigned int for GCC's non-negative enums) on the other would
 * pass.  int32_t against an enum does not (int and unsigned int differ), nor
 * does any difference in pointer constness, width or signedness.
 *
 * Totals.  The lists hold all of upstream's interface: the 130 functions of
 * upstream main (0.1.9's 127 and main's 3) and the 2 of the data cache, 67
 * enumerator values, 18 structs (13 of upstream's own, the 2 of the data
 * cache and the 3 Arrow ones), 4 callback typedefs and 10 opaque handles;
 * static assertions keep them complete.
 */
#include <stddef.h>
#include <stdio.h>

#include "lance/lance.h"

/* ======================================================================== *
 * Functions
 * ======================================================================== */

/* The lists below stay as written, one X(...) entry a line (scripts/check_map.sh
   reads them), and so do the _Generic checks: no clang-format here. */
/* clang-format off */
/* Declared in lance.h: X(return type, name, (parameters)), upstream's
   declarations as the facts give them, by the facts' sections (the count of
   each section's functions here in brackets). */
#define UPSTREAM_FUNCTIONS_CHECKED(X) \
    /* 3.1 Errors and memory (4) */ \
    X(LanceErrorCode, lance_last_error_code, (void)) \
    X(const char*, lance_last_error_message, (void)) \
    X(void, lance_free_string, (const char* s)) \
    X(void, lance_free_bytes, (uint8_t* bytes)) \
    /* 3.3 Dataset lifecycle and metadata (8) */ \
    X(LanceDataset*, lance_dataset_open, (const char* uri, const char* const* storage_opts, uint64_t version)) \
    X(void, lance_dataset_close, (LanceDataset* dataset)) \
    X(uint64_t, lance_dataset_version, (const LanceDataset* dataset)) \
    X(uint64_t, lance_dataset_count_rows, (const LanceDataset* dataset)) \
    X(uint64_t, lance_dataset_latest_version, (const LanceDataset* dataset)) \
    X(int32_t, lance_dataset_schema, (const LanceDataset* dataset, struct ArrowSchema* out)) \
    X(uint64_t, lance_dataset_fragment_count, (const LanceDataset* dataset)) \
    X(int32_t, lance_dataset_fragment_ids, (const LanceDataset* dataset, uint64_t* out_ids)) \
    /* 3.7 Delete, update, merge_insert, compaction (2) */ \
    X(int32_t, lance_dataset_delete, (LanceDataset* dataset, const char* predicate, uint64_t* out_num_deleted)) \
    X(int32_t, lance_dataset_compact_files, (LanceDataset* dataset, const LanceCompactionOptions* options, LanceCompactionMetrics* out_metrics)) \
    /* 3.11 Scanner core (11) */ \
    X(LanceScanner*, lance_scanner_new, (const LanceDataset* dataset, const char* const* columns, const char* filter)) \
    X(int32_t, lance_scanner_set_limit, (LanceScanner* scanner, int64_t limit)) \
    X(int32_t, lance_scanner_set_offset, (LanceScanner* scanner, int64_t offset)) \
    X(int32_t, lance_scanner_set_batch_size, (LanceScanner* scanner, int64_t batch_size)) \
    X(int32_t, lance_scanner_with_row_id, (LanceScanner* scanner, bool enable)) \
    X(int32_t, lance_scanner_set_fragment_ids, (LanceScanner* scanner, const uint64_t* ids, size_t len)) \
    X(void, lance_scanner_close, (LanceScanner* scanner)) \
    X(int32_t, lance_scanner_to_arrow_stream, (LanceScanner* scanner, struct ArrowArrayStream* out)) \
    X(int32_t, lance_scanner_next, (LanceScanner* scanner, LanceBatch** out)) \
    X(int32_t, lance_batch_to_arrow, (const LanceBatch* batch, struct ArrowArray* out_array, struct ArrowSchema* out_schema)) \
    X(void, lance_batch_free, (LanceBatch* batch)) \
    /* 3.15 Writers (2) */ \
    X(int32_t, lance_dataset_write, (const char* uri, const struct ArrowSchema* schema, struct ArrowArrayStream* stream, int32_t mode, const char* const* storage_opts, LanceDataset** out_dataset)) \
    X(int32_t, lance_dataset_write_with_params, (const char* uri, const struct ArrowSchema* schema, struct ArrowArrayStream* stream, int32_t mode, const LanceWriteParams* params, const char* const* storage_opts, LanceDataset** out_dataset)) \
    /* 3.16 Indices: create, list, drop (7) */ \
    X(int32_t, lance_dataset_create_vector_index, (LanceDataset* dataset, const char* column, const char* index_name, const LanceVectorIndexParams* params, bool replace)) \
    X(int32_t, lance_dataset_create_scalar_index, (LanceDataset* dataset, const char* column, const char* index_name, LanceScalarIndexType index_type, const char* params_json, bool replace)) \
    X(int32_t, lance_dataset_drop_index, (LanceDataset* dataset, const char* name)) \
    X(uint64_t, lance_dataset_index_count, (const LanceDataset* dataset)) \
    X(const char*, lance_dataset_index_list_json, (const LanceDataset* dataset)) \
    X(uint64_t, lance_dataset_index_segment_count, (const LanceDataset* dataset, const char* index_name)) \
    X(int32_t, lance_dataset_index_segments, (const LanceDataset* dataset, const char* index_name, uint8_t* out_uuids, size_t capacity, uint64_t* out_count)) \
    /* 3.17 Index segment API (20) */ \
    X(LanceIndexSegmentBuilder*, lance_index_segment_builder_new_scalar, (const LanceDataset* dataset, const char* column, const char* index_name, int32_t index_type, const char* params_json, const LanceIndexSegmentBuildOptions* options)) \
    X(LanceIndexSegmentBuilder*, lance_index_segment_builder_new_vector, (const LanceDataset* dataset, const char* column, const char* index_name, const LanceVectorIndexSegmentParams* params, const LanceIndexSegmentBuildOptions* options)) \
    X(int32_t, lance_index_train_ivf_model, (const LanceDataset* dataset, const char* column, uint32_t num_partitions, int32_t metric, const uint32_t* fragment_ids, size_t fragment_count, struct ArrowArray* out_array, struct ArrowSchema* out_schema)) \
    X(int32_t, lance_index_train_pq_model, (const LanceDataset* dataset, const char* column, uint32_t num_sub_vectors, uint32_t num_bits, int32_t metric, const uint32_t* fragment_ids, size_t fragment_count, struct ArrowArray* ivf_centroids, const struct ArrowSchema* ivf_centroids_schema, struct ArrowArray* out_array, struct ArrowSchema* out_schema)) \
    X(int32_t, lance_index_segment_builder_execute_uncommitted, (LanceIndexSegmentBuilder* builder, uint8_t** out_bytes, size_t* out_len)) \
    X(int32_t, lance_index_segment_builder_set_progress_callback, (LanceIndexSegmentBuilder* builder, LanceIndexBuildProgressCallback callback, void* callback_ctx)) \
    X(void, lance_index_segment_builder_free, (LanceIndexSegmentBuilder* builder)) \
    X(int32_t, lance_index_segment_metadata_parse, (const uint8_t* bytes, size_t len, LanceIndexSegmentMetadata** out_metadata)) \
    X(int32_t, lance_index_segment_metadata_uuid, (const LanceIndexSegmentMetadata* metadata, uint8_t* out_uuid)) \
    X(const char*, lance_index_segment_metadata_name, (const LanceIndexSegmentMetadata* metadata)) \
    X(uint64_t, lance_index_segment_metadata_dataset_version, (const LanceIndexSegmentMetadata* metadata)) \
    X(int32_t, lance_index_segment_metadata_index_version, (const LanceIndexSegmentMetadata* metadata)) \
    X(int32_t, lance_index_segment_metadata_index_type, (const LanceIndexSegmentMetadata* metadata)) \
    X(const char*, lance_index_segment_metadata_index_details_type_url, (const LanceIndexSegmentMetadata* metadata)) \
    X(size_t, lance_index_segment_metadata_field_count, (const LanceIndexSegmentMetadata* metadata)) \
    X(int32_t, lance_index_segment_metadata_field_ids, (const LanceIndexSegmentMetadata* metadata, int32_t* out_field_ids, size_t capacity, size_t* out_count)) \
    X(size_t, lance_index_segment_metadata_fragment_count, (const LanceIndexSegmentMetadata* metadata)) \
    X(int32_t, lance_index_segment_metadata_fragment_ids, (const LanceIndexSegmentMetadata* metadata, uint32_t* out_fragment_ids, size_t capacity, size_t* out_count)) \
    X(void, lance_index_segment_metadata_free, (LanceIndexSegmentMetadata* metadata)) \
    X(int32_t, lance_dataset_commit_index_segments, (LanceDataset* dataset, const char* index_name, const char* column, const uint8_t* const* segment_metadata_bytes, const size_t* segment_metadata_lens, size_t segment_count)) \
    /* 3.18 Vector search (8) */ \
    X(int32_t, lance_scanner_nearest, (LanceScanner* scanner, const char* column, const void* query_data, size_t query_len, LanceDataType element_type, uint32_t k)) \
    X(int32_t, lance_scanner_set_nprobes, (LanceScanner* scanner, uint32_t nprobes)) \
    X(int32_t, lance_scanner_set_refine_factor, (LanceScanner* scanner, uint32_t f)) \
    X(int32_t, lance_scanner_set_ef, (LanceScanner* scanner, uint32_t e)) \
    X(int32_t, lance_scanner_set_metric, (LanceScanner* scanner, LanceMetricType metric)) \
    X(int32_t, lance_scanner_set_use_index, (LanceScanner* scanner, bool enable)) \
    X(int32_t, lance_scanner_set_prefilter, (LanceScanner* scanner, bool enable)) \
    X(int32_t, lance_scanner_set_index_segments, (LanceScanner* scanner, const uint8_t* segment_uuids, size_t len)) \
    X(LanceVersions*, lance_dataset_versions, (const LanceDataset* dataset)) \
    X(uint64_t, lance_versions_count, (const LanceVersions* versions)) \
    X(uint64_t, lance_versions_id_at, (const LanceVersions* versions, size_t index)) \
    X(int64_t, lance_versions_timestamp_ms_at, (const LanceVersions* versions, size_t index)) \
    X(void, lance_versions_close, (LanceVersions* versions)) \
    X(LanceDataStatistics*, lance_dataset_calculate_data_stats, (const LanceDataset* dataset)) \
    X(uint64_t, lance_data_statistics_count, (const LanceDataStatistics* stats)) \
    X(uint32_t, lance_data_statistics_field_id_at, (const LanceDataStatistics* stats, size_t index)) \
    X(uint64_t, lance_data_statistics_bytes_on_disk_at, (const LanceDataStatistics* stats, size_t index)) \
    X(void, lance_data_statistics_close, (LanceDataStatistics* stats)) \
    X(LanceDataset*, lance_dataset_restore, (const LanceDataset* dataset, uint64_t version)) \
    X(int32_t, lance_dataset_update, (LanceDataset* dataset, const char* predicate, const char* const* columns, const char* const* values, size_t num_updates, uint64_t* out_num_updated)) \
    X(int32_t, lance_dataset_take, (const LanceDataset* dataset, const uint64_t* indices, size_t num_indices, const char* const* columns, struct ArrowArrayStream* out)) \
    X(int32_t, lance_dataset_take_rows, (const LanceDataset* dataset, const uint64_t* row_ids, size_t num_row_ids, const char* const* columns, struct ArrowArrayStream* out)) \
    X(int32_t, lance_dataset_merge_insert, (LanceDataset* dataset, const char* const* on_columns, size_t num_on_columns, struct ArrowArrayStream* source, const LanceMergeInsertParams* params, LanceMergeInsertResult* out_result)) \
    X(int32_t, lance_dataset_drop_columns, (LanceDataset* dataset, const char* const* columns, size_t num_columns)) \
    X(int32_t, lance_dataset_alter_columns, (LanceDataset* dataset, const LanceColumnAlteration* alterations, size_t num_alterations)) \
    X(int32_t, lance_dataset_add_columns_sql, (LanceDataset* dataset, const LanceSqlColumn* columns, size_t num_columns, uint64_t batch_size)) \
    X(int32_t, lance_dataset_add_columns_nulls, (LanceDataset* dataset, const struct ArrowSchema* schema)) \
    X(int32_t, lance_dataset_add_columns_stream, (LanceDataset* dataset, struct ArrowArrayStream* stream, uint64_t batch_size)) \
    X(int32_t, lance_write_fragments, (const char* uri, const struct ArrowSchema* schema, struct ArrowArrayStream* stream, const char* const* storage_opts)) \
    X(int32_t, lance_scanner_set_batch_size_bytes, (LanceScanner* scanner, uint64_t batch_size_bytes)) \
    X(int32_t, lance_scanner_set_io_buffer_size, (LanceScanner* scanner, uint64_t io_buffer_size_bytes)) \
    X(int32_t, lance_scanner_set_batch_readahead, (LanceScanner* scanner, size_t batch_readahead)) \
    X(int32_t, lance_scanner_set_fragment_readahead, (LanceScanner* scanner, size_t fragment_readahead)) \
    X(int32_t, lance_scanner_set_target_parallelism, (LanceScanner* scanner, size_t target_parallelism)) \
    X(int32_t, lance_scanner_set_scan_in_order, (LanceScanner* scanner, bool scan_in_order)) \
    X(int32_t, lance_scanner_set_use_scalar_index, (LanceScanner* scanner, bool use_scalar_index)) \
    X(int32_t, lance_scanner_set_strict_batch_size, (LanceScanner* scanner, bool strict_batch_size)) \
    X(int32_t, lance_scanner_set_use_stats, (LanceScanner* scanner, bool use_stats)) \
    X(int32_t, lance_scanner_with_row_address, (LanceScanner* scanner, bool enable)) \
    X(int32_t, lance_scanner_set_include_deleted_rows, (LanceScanner* scanner, bool include_deleted_rows)) \
    X(int32_t, lance_scanner_set_substrait_filter, (LanceScanner* scanner, const uint8_t* bytes, size_t len)) \
    X(int32_t, lance_scanner_additional_sql_filter, (LanceScanner* scanner, const char* filter)) \
    X(int32_t, lance_scanner_set_statistics_callback, (LanceScanner* scanner, LanceScanStatisticsCallback callback, void* callback_ctx)) \
    X(int32_t, lance_scanner_set_minimum_nprobes, (LanceScanner* scanner, uint32_t minimum_nprobes)) \
    X(int32_t, lance_scanner_set_maximum_nprobes, (LanceScanner* scanner, uint32_t maximum_nprobes)) \
    X(int32_t, lance_scanner_set_approx_mode, (LanceScanner* scanner, LanceApproxMode approx_mode)) \
    X(int32_t, lance_scanner_set_query_parallelism, (LanceScanner* scanner, int32_t query_parallelism)) \
    X(LanceSession*, lance_session_new, (uint64_t index_cache_size_bytes, uint64_t metadata_cache_size_bytes)) \
    X(void, lance_session_close, (LanceSession* session)) \
    X(int32_t, lance_session_get_cache_stats, (const LanceSession* session, LanceSessionCacheStats* out_stats)) \
    X(LanceDataset*, lance_dataset_open_with_session, (const char* uri, const char* const* storage_opts, uint64_t version, const LanceSession* session)) \
    X(int32_t, lance_dataset_take_blobs, (const LanceDataset* dataset, const uint64_t* row_ids, size_t num_row_ids, const char* column, LanceBlobFile** out)) \
    X(int32_t, lance_dataset_take_blobs_by_indices, (const LanceDataset* dataset, const uint64_t* indices, size_t num_indices, const char* column, LanceBlobFile** out)) \
    X(uint64_t, lance_blob_file_size, (const LanceBlobFile* blob)) \
    X(int32_t, lance_blob_file_read, (LanceBlobFile* blob, uint8_t* dst, size_t dst_len)) \
    X(int32_t, lance_blob_file_read_up_to, (LanceBlobFile* blob, uint8_t* dst, size_t len, size_t* bytes_read)) \
    X(int32_t, lance_blob_file_read_range, (const LanceBlobFile* blob, uint64_t offset, uint8_t* dst, size_t len)) \
    X(int32_t, lance_blob_file_seek, (LanceBlobFile* blob, uint64_t pos)) \
    X(int32_t, lance_blob_file_tell, (const LanceBlobFile* blob, uint64_t* pos)) \
    X(void, lance_blob_file_close, (LanceBlobFile* blob)) \
    X(int32_t, lance_scanner_set_blob_handling, (LanceScanner* scanner, LanceBlobHandling handling)) \
    X(void, lance_scanner_scan_async, (const LanceScanner* scanner, LanceCallback callback, void* callback_ctx)) \
    X(void, lance_scanner_async_stream_free, (struct ArrowArrayStream* stream)) \
    X(LancePollStatus, lance_scanner_poll_next, (LanceScanner* scanner, LanceWaker waker, void* waker_ctx, LanceBatch** out)) \
    X(int32_t, lance_scanner_nearest_multivector, (LanceScanner* scanner, const char* column, const void* query_data, size_t dimension, size_t num_vectors, LanceDataType element_type, uint32_t k)) \
    X(int32_t, lance_scanner_set_scalar_index_segment, (LanceScanner* scanner, const uint8_t* segment_uuid)) \
    X(LanceFtsQueryContext*, lance_dataset_prepare_fts_query, (const LanceDataset* dataset, const char* column, const char* query, uint32_t max_fuzzy_distance, int32_t coverage_mode)) \
    X(LanceFtsQueryContext*, lance_dataset_prepare_fts_match_query, (const LanceDataset* dataset, const char* column, const char* query, int32_t match_operator, uint32_t max_fuzzy_distance, int32_t coverage_mode)) \
    X(LanceFtsQueryContext*, lance_dataset_prepare_fts_phrase_query, (const LanceDataset* dataset, const char* column, const char* query, int32_t slop, int32_t coverage_mode)) \
    X(void, lance_fts_query_context_close, (LanceFtsQueryContext* context)) \
    X(int32_t, lance_scanner_full_text_search, (LanceScanner* scanner, const char* query, const char* const* columns, uint32_t max_fuzzy_distance)) \
    X(int32_t, lance_scanner_set_fts_query_context, (LanceScanner* scanner, const LanceFtsQueryContext* context)) \
    X(int32_t, lance_scanner_set_fts_index_segments, (LanceScanner* scanner, const uint8_t* segment_uuids, size_t len)) \
    /* 9. Upstream main after 0.1.9 (3) */ \
    X(int32_t, lance_dataset_prewarm_index, (const LanceDataset* dataset, const char* index_name)) \
    X(int32_t, lance_scanner_set_distance_range, (LanceScanner* scanner, const float* lower, const float* upper)) \
    X(int32_t, lance_scanner_nearest_batch, (LanceScanner* scanner, const char* column, const void* query_data, size_t dimension, size_t num_queries, LanceDataType element_type, uint32_t k))

/* 9. The data cache of upstream's feature line, which Doris calls (2). */
#define UPSTREAM_DATA_CACHE_FUNCTIONS_CHECKED(X) \
    X(LanceSession*, lance_session_new_with_data_cache, (uint64_t index_cache_size_bytes, uint64_t metadata_cache_size_bytes, const LanceDataCacheOptions* options)) \
    X(int32_t, lance_dataset_get_data_cache_statistics, (const LanceDataset* dataset, LanceDataCacheStatistics* out_stats))

/* A function whose type is not exactly upstream's selects no association. */
#define CHECK_FUNCTION(ret, name, params) \
    _Static_assert(_Generic(&name, ret(*) params: 1, default: 0), \
                   #name " is not declared as upstream declares it: " #ret " " #name #params);
UPSTREAM_FUNCTIONS_CHECKED(CHECK_FUNCTION)
UPSTREAM_DATA_CACHE_FUNCTIONS_CHECKED(CHECK_FUNCTION)

#define COUNT_ONE(ret, name, params) +1
enum {
    FUNCTIONS_CHECKED = 0 UPSTREAM_FUNCTIONS_CHECKED(COUNT_ONE),
    DATA_CACHE_FUNCTIONS_CHECKED = 0 UPSTREAM_DATA_CACHE_FUNCTIONS_CHECKED(COUNT_ONE)
};
_Static_assert(FUNCTIONS_CHECKED == 130, "upstream main has 130 functions");
_Static_assert(DATA_CACHE_FUNCTIONS_CHECKED == 2, "upstream's data cache has 2 functions");

/* References to every checked function: the link fails if one is not exported. */
typedef void (*AnyFunction)(void);
#define FUNCTION_ENTRY(ret, name, params) {#name, (AnyFunction)&name},
static const struct {
    const char* name;
    AnyFunction address;
} checked_functions[] = {UPSTREAM_FUNCTIONS_CHECKED(FUNCTION_ENTRY) UPSTREAM_DATA_CACHE_FUNCTIONS_CHECKED(FUNCTION_ENTRY)};

/* ======================================================================== *
 * Enums: X(enum typedef, enumerator, value)
 * ======================================================================== */

#define UPSTREAM_ENUM_VALUES_CHECKED(X) \
    X(LanceErrorCode, LANCE_OK, 0) \
    X(LanceErrorCode, LANCE_ERR_INVALID_ARGUMENT, 1) \
    X(LanceErrorCode, LANCE_ERR_IO, 2) \
    X(LanceErrorCode, LANCE_ERR_NOT_FOUND, 3) \
    X(LanceErrorCode, LANCE_ERR_DATASET_ALREADY_EXISTS, 4) \
    X(LanceErrorCode, LANCE_ERR_INDEX, 5) \
    X(LanceErrorCode, LANCE_ERR_INTERNAL, 6) \
    X(LanceErrorCode, LANCE_ERR_NOT_SUPPORTED, 7) \
    X(LanceErrorCode, LANCE_ERR_COMMIT_CONFLICT, 8) \
    X(LanceErrorCode, LANCE_ERR_PANIC, 9) \
    X(LanceVectorIndexType, LANCE_INDEX_IVF_FLAT, 101) \
    X(LanceVectorIndexType, LANCE_INDEX_IVF_SQ, 102) \
    X(LanceVectorIndexType, LANCE_INDEX_IVF_PQ, 103) \
    X(LanceVectorIndexType, LANCE_INDEX_IVF_HNSW_SQ, 104) \
    X(LanceVectorIndexType, LANCE_INDEX_IVF_HNSW_PQ, 105) \
    X(LanceVectorIndexType, LANCE_INDEX_IVF_HNSW_FLAT, 106) \
    X(LanceScalarIndexType, LANCE_SCALAR_BTREE, 1) \
    X(LanceScalarIndexType, LANCE_SCALAR_BITMAP, 2) \
    X(LanceScalarIndexType, LANCE_SCALAR_LABEL_LIST, 3) \
    X(LanceScalarIndexType, LANCE_SCALAR_INVERTED, 4) \
    X(LanceMetricType, LANCE_METRIC_L2, 0) \
    X(LanceMetricType, LANCE_METRIC_COSINE, 1) \
    X(LanceMetricType, LANCE_METRIC_DOT, 2) \
    X(LanceMetricType, LANCE_METRIC_HAMMING, 3) \
    X(LanceDataType, LANCE_DTYPE_FLOAT32, 0) \
    X(LanceDataType, LANCE_DTYPE_FLOAT16, 1) \
    X(LanceDataType, LANCE_DTYPE_FLOAT64, 2) \
    X(LanceDataType, LANCE_DTYPE_UINT8, 3) \
    X(LanceDataType, LANCE_DTYPE_INT8, 4) \
    X(LanceIndexSegmentBuildMode, LANCE_INDEX_SEGMENT_BUILD_AUTO, 0) \
    X(LanceIndexSegmentBuildMode, LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN, 1) \
    X(LanceIndexSegmentBuildMode, LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED, 2) \
    X(LanceIndexBuildProgressEvent, LANCE_INDEX_BUILD_PROGRESS_STAGE_START, 0) \
    X(LanceIndexBuildProgressEvent, LANCE_INDEX_BUILD_PROGRESS_STAGE_PROGRESS, 1) \
    X(LanceIndexBuildProgressEvent, LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE, 2) \
    X(LanceWriteMode, LANCE_WRITE_CREATE, 0) \
    X(LanceWriteMode, LANCE_WRITE_APPEND, 1) \
    X(LanceWriteMode, LANCE_WRITE_OVERWRITE, 2) \
    X(LanceMergeWhenMatched, LANCE_MERGE_WHEN_MATCHED_DO_NOTHING, 0) \
    X(LanceMergeWhenMatched, LANCE_MERGE_WHEN_MATCHED_UPDATE_ALL, 1) \
    X(LanceMergeWhenMatched, LANCE_MERGE_WHEN_MATCHED_UPDATE_IF, 2) \
    X(LanceMergeWhenMatched, LANCE_MERGE_WHEN_MATCHED_FAIL, 3) \
    X(LanceMergeWhenMatched, LANCE_MERGE_WHEN_MATCHED_DELETE, 4) \
    X(LanceMergeWhenNotMatched, LANCE_MERGE_WHEN_NOT_MATCHED_INSERT_ALL, 0) \
    X(LanceMergeWhenNotMatched, LANCE_MERGE_WHEN_NOT_MATCHED_DO_NOTHING, 1) \
    X(LanceMergeWhenNotMatchedBySource, LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_KEEP, 0) \
    X(LanceMergeWhenNotMatchedBySource, LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE, 1) \
    X(LanceMergeWhenNotMatchedBySource, LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE_IF, 2) \
    X(LanceColumnNullableMode, LANCE_COLUMN_NULLABLE_UNCHANGED, 0) \
    X(LanceColumnNullableMode, LANCE_COLUMN_NULLABLE_TRUE, 1) \
    X(LanceColumnNullableMode, LANCE_COLUMN_NULLABLE_FALSE, 2) \
    X(LanceApproxMode, LANCE_APPROX_MODE_FAST, 0) \
    X(LanceApproxMode, LANCE_APPROX_MODE_NORMAL, 1) \
    X(LanceApproxMode, LANCE_APPROX_MODE_ACCURATE, 2) \
    X(LanceScanMetricKind, LANCE_SCAN_METRIC_COUNT, 0) \
    X(LanceScanMetricKind, LANCE_SCAN_METRIC_TIME_NANOSECONDS, 1) \
    X(LanceBlobHandling, LANCE_BLOB_HANDLING_BLOBS_DESCRIPTIONS, 0) \
    X(LanceBlobHandling, LANCE_BLOB_HANDLING_ALL_BINARY, 1) \
    X(LanceBlobHandling, LANCE_BLOB_HANDLING_ALL_DESCRIPTIONS, 2) \
    X(LancePollStatus, LANCE_POLL_READY, 0) \
    X(LancePollStatus, LANCE_POLL_PENDING, 1) \
    X(LancePollStatus, LANCE_POLL_FINISHED, 2) \
    X(LancePollStatus, LANCE_POLL_ERROR, -1) \
    X(LanceFtsCoverageMode, LANCE_FTS_COVERAGE_STRICT, 0) \
    X(LanceFtsCoverageMode, LANCE_FTS_COVERAGE_INDEX_ONLY, 1) \
    X(LanceFtsMatchOperator, LANCE_FTS_MATCH_OPERATOR_OR, 0) \
    X(LanceFtsMatchOperator, LANCE_FTS_MATCH_OPERATOR_AND, 1)

/* The enumerator has upstream's value, and its enum typedef exists, int-sized. */
#define CHECK_ENUM_VALUE(type, name, value) \
    _Static_assert((name) == (value) && sizeof(type) == sizeof(int32_t), \
                   #type " " #name " differs from upstream (= " #value ")");
UPSTREAM_ENUM_VALUES_CHECKED(CHECK_ENUM_VALUE)

#define COUNT_ENUM(type, name, value) +1
enum { ENUM_VALUES_CHECKED = 0 UPSTREAM_ENUM_VALUES_CHECKED(COUNT_ENUM) };

/* Upstream's one tagged enum: `enum LanceIndexSegmentBuildMode` names the typedef's type. */
_Static_assert(_Generic((enum LanceIndexSegmentBuildMode)0, LanceIndexSegmentBuildMode: 1, default: 0) &&
                   sizeof(enum LanceIndexSegmentBuildMode) == sizeof(int32_t),
               "enum LanceIndexSegmentBuildMode is not the tag of LanceIndexSegmentBuildMode");

/* This library's own error codes stay clear of upstream's (sequential from 0). */
_Static_assert(LANCE_ERR_CANCELLED >= 1000 && LANCE_ERR_NO_SEGMENTS >= 1000 && LANCE_ERR_DUPLICATE_SEGMENT >= 1000 &&
                   LANCE_ERR_OVERLAPPING_SEGMENTS >= 1000 && LANCE_ERR_STALE_SEGMENT >= 1000 &&
                   LANCE_ERR_MODEL_MISMATCH >= 1000 && LANCE_ERR_INCOMPLETE_SEGMENT >= 1000,
               "an own error code collides with upstream's range");

/* ======================================================================== *
 * Structs: X(type, field, offset on LP64, field type), then sizes and tags
 * ======================================================================== */

_Static_assert(sizeof(void*) == 8 && sizeof(size_t) == 8, "the layouts below are upstream's on LP64");

#define UPSTREAM_FIELDS_CHECKED(X) \
    X(LanceVectorIndexParams, index_type, 0, LanceVectorIndexType) \
    X(LanceVectorIndexParams, metric, 4, LanceMetricType) \
    X(LanceVectorIndexParams, num_partitions, 8, uint32_t) \
    X(LanceVectorIndexParams, num_sub_vectors, 12, uint32_t) \
    X(LanceVectorIndexParams, num_bits, 16, uint32_t) \
    X(LanceVectorIndexParams, max_iterations, 20, uint32_t) \
    X(LanceVectorIndexParams, hnsw_m, 24, uint32_t) \
    X(LanceVectorIndexParams, hnsw_ef_construction, 28, uint32_t) \
    X(LanceVectorIndexParams, sample_rate, 32, uint32_t) \
    X(LanceVectorIndexSegmentParams, index_type, 0, int32_t) \
    X(LanceVectorIndexSegmentParams, metric, 4, int32_t) \
    X(LanceVectorIndexSegmentParams, num_partitions, 8, uint32_t) \
    X(LanceVectorIndexSegmentParams, num_sub_vectors, 12, uint32_t) \
    X(LanceVectorIndexSegmentParams, num_bits, 16, uint32_t) \
    X(LanceVectorIndexSegmentParams, max_iterations, 20, uint32_t) \
    X(LanceVectorIndexSegmentParams, hnsw_m, 24, uint32_t) \
    X(LanceVectorIndexSegmentParams, hnsw_ef_construction, 28, uint32_t) \
    X(LanceVectorIndexSegmentParams, sample_rate, 32, uint32_t) \
    X(LanceIndexSegmentBuildOptions, fragment_ids, 0, const uint32_t*) \
    X(LanceIndexSegmentBuildOptions, fragment_count, 8, size_t) \
    X(LanceIndexSegmentBuildOptions, index_uuid, 16, const uint8_t*) \
    X(LanceIndexSegmentBuildOptions, mode, 56, int32_t) \
    X(LanceCompactionOptions, target_rows_per_fragment, 0, uint64_t) \
    X(LanceCompactionOptions, max_rows_per_group, 8, uint64_t) \
    X(LanceCompactionOptions, max_bytes_per_file, 16, uint64_t) \
    X(LanceCompactionOptions, num_threads, 24, uint64_t) \
    X(LanceCompactionOptions, batch_size, 32, uint64_t) \
    X(LanceCompactionMetrics, fragments_removed, 0, uint64_t) \
    X(LanceCompactionMetrics, fragments_added, 8, uint64_t) \
    X(LanceCompactionMetrics, files_removed, 16, uint64_t) \
    X(LanceCompactionMetrics, files_added, 24, uint64_t) \
    X(LanceWriteParams, max_rows_per_file, 0, uint64_t) \
    X(LanceWriteParams, max_rows_per_group, 8, uint64_t) \
    X(LanceWriteParams, max_bytes_per_file, 16, uint64_t) \
    X(LanceWriteParams, data_storage_version, 24, const char*) \
    X(LanceWriteParams, enable_stable_row_ids, 32, bool) \
    X(LanceMergeInsertParams, when_matched, 0, int32_t) \
    X(LanceMergeInsertParams, when_matched_expr, 8, const char*) \
    X(LanceMergeInsertParams, when_not_matched, 16, int32_t) \
    X(LanceMergeInsertParams, when_not_matched_by_source, 20, int32_t) \
    X(LanceMergeInsertParams, when_not_matched_by_source_expr, 24, const char*) \
    X(LanceMergeInsertResult, num_inserted_rows, 0, uint64_t) \
    X(LanceMergeInsertResult, num_updated_rows, 8, uint64_t) \
    X(LanceMergeInsertResult, num_deleted_rows, 16, uint64_t) \
    X(LanceColumnAlteration, path, 0, const char*) \
    X(LanceColumnAlteration, rename, 8, const char*) \
    X(LanceColumnAlteration, nullable_mode, 16, int32_t) \
    X(LanceSqlColumn, name, 0, const char*) \
    X(LanceSqlColumn, expression, 8, const char*) \
    X(LanceScanMetric, name, 0, const char*) \
    X(LanceScanMetric, name_len, 8, size_t) \
    X(LanceScanMetric, kind, 16, LanceScanMetricKind) \
    X(LanceScanMetric, value, 24, uint64_t) \
    X(LanceScanStatistics, iops, 0, uint64_t) \
    X(LanceScanStatistics, requests, 8, uint64_t) \
    X(LanceScanStatistics, bytes_read, 16, uint64_t) \
    X(LanceScanStatistics, indices_loaded, 24, uint64_t) \
    X(LanceScanStatistics, index_partitions_loaded, 32, uint64_t) \
    X(LanceScanStatistics, index_comparisons, 40, uint64_t) \
    X(LanceScanStatistics, metrics, 48, const LanceScanMetric*) \
    X(LanceScanStatistics, metrics_len, 56, size_t) \
    X(LanceSessionCacheStats, index_cache_hits, 0, uint64_t) \
    X(LanceSessionCacheStats, index_cache_misses, 8, uint64_t) \
    X(LanceSessionCacheStats, index_cache_entries, 16, uint64_t) \
    X(LanceSessionCacheStats, index_cache_size_bytes, 24, uint64_t) \
    X(LanceSessionCacheStats, metadata_cache_hits, 32, uint64_t) \
    X(LanceSessionCacheStats, metadata_cache_misses, 40, uint64_t) \
    X(LanceSessionCacheStats, metadata_cache_entries, 48, uint64_t) \
    X(LanceSessionCacheStats, metadata_cache_size_bytes, 56, uint64_t) \
    X(LanceColumnAlteration, data_type, 24, const struct ArrowSchema*) \
    X(LanceIndexSegmentBuildOptions, ivf_centroids, 24, struct ArrowArray*) \
    X(LanceIndexSegmentBuildOptions, ivf_centroids_schema, 32, const struct ArrowSchema*) \
    X(LanceIndexSegmentBuildOptions, pq_codebook, 40, struct ArrowArray*) \
    X(LanceIndexSegmentBuildOptions, pq_codebook_schema, 48, const struct ArrowSchema*) \
    X(LanceDataCacheOptions, directory, 0, const char*) \
    X(LanceDataCacheOptions, memory_capacity_bytes, 8, uint64_t) \
    X(LanceDataCacheOptions, disk_capacity_bytes, 16, uint64_t) \
    X(LanceDataCacheOptions, read_block_size_bytes, 24, uint64_t) \
    X(LanceDataCacheStatistics, bytes_read_from_cache, 0, uint64_t) \
    X(LanceDataCacheStatistics, bytes_read_from_remote, 8, uint64_t) \
    X(struct ArrowSchema, format, 0, const char*) \
    X(struct ArrowSchema, name, 8, const char*) \
    X(struct ArrowSchema, metadata, 16, const char*) \
    X(struct ArrowSchema, flags, 24, int64_t) \
    X(struct ArrowSchema, n_children, 32, int64_t) \
    X(struct ArrowSchema, children, 40, struct ArrowSchema**) \
    X(struct ArrowSchema, dictionary, 48, struct ArrowSchema*) \
    X(struct ArrowSchema, release, 56, void (*)(struct ArrowSchema*)) \
    X(struct ArrowSchema, private_data, 64, void*) \
    X(struct ArrowArray, length, 0, int64_t) \
    X(struct ArrowArray, null_count, 8, int64_t) \
    X(struct ArrowArray, offset, 16, int64_t) \
    X(struct ArrowArray, n_buffers, 24, int64_t) \
    X(struct ArrowArray, n_children, 32, int64_t) \
    X(struct ArrowArray, buffers, 40, const void**) \
    X(struct ArrowArray, children, 48, struct ArrowArray**) \
    X(struct ArrowArray, dictionary, 56, struct ArrowArray*) \
    X(struct ArrowArray, release, 64, void (*)(struct ArrowArray*)) \
    X(struct ArrowArray, private_data, 72, void*) \
    X(struct ArrowArrayStream, get_schema, 0, int (*)(struct ArrowArrayStream*, struct ArrowSchema*)) \
    X(struct ArrowArrayStream, get_next, 8, int (*)(struct ArrowArrayStream*, struct ArrowArray*)) \
    X(struct ArrowArrayStream, get_last_error, 16, const char* (*)(struct ArrowArrayStream*)) \
    X(struct ArrowArrayStream, release, 24, void (*)(struct ArrowArrayStream*)) \
    X(struct ArrowArrayStream, private_data, 32, void*)

#define CHECK_FIELD(type, field, offset, field_type) \
    _Static_assert(offsetof(type, field) == (offset), #type "." #field " is not at upstream's offset " #offset); \
    _Static_assert(_Generic(((type*)0)->field, field_type: 1, default: 0), \
                   #type "." #field " is not of upstream's type " #field_type);
UPSTREAM_FIELDS_CHECKED(CHECK_FIELD)

/* X(type, size on LP64, number of fields): the size rules out a field upstream lacks. */
#define UPSTREAM_STRUCTS_CHECKED(X) \
    X(LanceVectorIndexParams, 36, 9) \
    X(LanceVectorIndexSegmentParams, 36, 9) \
    X(LanceIndexSegmentBuildOptions, 64, 8) \
    X(LanceCompactionOptions, 40, 5) \
    X(LanceCompactionMetrics, 32, 4) \
    X(LanceWriteParams, 40, 5) \
    X(LanceMergeInsertParams, 32, 5) \
    X(LanceMergeInsertResult, 24, 3) \
    X(LanceColumnAlteration, 32, 4) \
    X(LanceSqlColumn, 16, 2) \
    X(LanceScanMetric, 32, 4) \
    X(LanceScanStatistics, 64, 8) \
    X(LanceSessionCacheStats, 64, 8) \
    X(LanceDataCacheOptions, 32, 4) \
    X(LanceDataCacheStatistics, 16, 2) \
    X(struct ArrowSchema, 72, 9) \
    X(struct ArrowArray, 80, 10) \
    X(struct ArrowArrayStream, 40, 5)

#define CHECK_SIZE(type, size, fields) _Static_assert(sizeof(type) == (size), #type " is not upstream's size " #size);
UPSTREAM_STRUCTS_CHECKED(CHECK_SIZE)

#define COUNT_FIELD(type, field, offset, field_type) +1
#define COUNT_STRUCT_FIELDS(type, size, fields) +(fields)
#define COUNT_STRUCT(type, size, fields) +1
enum {
    FIELDS_CHECKED = 0 UPSTREAM_FIELDS_CHECKED(COUNT_FIELD),
    STRUCTS_CHECKED = 0 UPSTREAM_STRUCTS_CHECKED(COUNT_STRUCT)
};
_Static_assert(FIELDS_CHECKED == 0 UPSTREAM_STRUCTS_CHECKED(COUNT_STRUCT_FIELDS),
               "every field of every checked struct has a line in UPSTREAM_FIELDS_CHECKED");

/* Upstream declares these `typedef struct Name {...} Name;`: programs may write `struct Name`. */
#define UPSTREAM_STRUCT_TAGS_CHECKED(X) \
    X(LanceVectorIndexSegmentParams) \
    X(LanceIndexSegmentBuildOptions) \
    X(LanceCompactionOptions) \
    X(LanceCompactionMetrics) \
    X(LanceWriteParams) \
    X(LanceMergeInsertParams) \
    X(LanceMergeInsertResult) \
    X(LanceColumnAlteration) \
    X(LanceSqlColumn) \
    X(LanceSessionCacheStats)

/* Upstream's opaque handles, `typedef struct Name Name;`. */
#define UPSTREAM_HANDLES_CHECKED(X) \
    X(LanceDataset) \
    X(LanceScanner) \
    X(LanceBatch) \
    X(LanceIndexSegmentBuilder) \
    X(LanceIndexSegmentMetadata) \
    X(LanceVersions) \
    X(LanceDataStatistics) \
    X(LanceSession) \
    X(LanceBlobFile) \
    X(LanceFtsQueryContext)

#define CHECK_TAG(name) \
    _Static_assert(_Generic((struct name*)0, name*: 1, default: 0), "struct " #name " is not the type of " #name);
UPSTREAM_STRUCT_TAGS_CHECKED(CHECK_TAG)
UPSTREAM_HANDLES_CHECKED(CHECK_TAG)

#define COUNT_NAME(name) +1
enum {
    TAGS_CHECKED = 0 UPSTREAM_STRUCT_TAGS_CHECKED(COUNT_NAME),
    HANDLES_CHECKED = 0 UPSTREAM_HANDLES_CHECKED(COUNT_NAME)
};

#ifndef ARROW_C_DATA_INTERFACE
#error "lance.h must define the Arrow C Data Interface under the ARROW_C_DATA_INTERFACE guard, as upstream does"
#endif

/* ======================================================================== *
 * Callback typedefs: X(name, exact signature)
 * ======================================================================== */

#define UPSTREAM_CALLBACKS_CHECKED(X) \
    X(LanceIndexBuildProgressCallback, void (*)(void* callback_ctx, int32_t event, const char* stage, uint64_t total, const char* unit, uint64_t completed)) \
    X(LanceScanStatisticsCallback, void (*)(void* callback_ctx, const LanceScanStatistics* statistics)) \
    X(LanceCallback, void (*)(void* ctx, int32_t status, void* result)) \
    X(LanceWaker, void (*)(void* ctx))

#define CHECK_CALLBACK(name, type) \
    _Static_assert(_Generic((name)0, type: 1, default: 0), #name " is not upstream's " #type);
UPSTREAM_CALLBACKS_CHECKED(CHECK_CALLBACK)

#define COUNT_CALLBACK(name, type) +1
enum { CALLBACKS_CHECKED = 0 UPSTREAM_CALLBACKS_CHECKED(COUNT_CALLBACK) };

_Static_assert(ENUM_VALUES_CHECKED == 67, "upstream has 67 enumerators");
_Static_assert(CALLBACKS_CHECKED == 4, "upstream has 4 callback typedefs");
_Static_assert(HANDLES_CHECKED == 10, "upstream has 10 opaque handles");
_Static_assert(STRUCTS_CHECKED == 18, "upstream has 13 structs of its own, the data cache's 2 and the 3 Arrow ones");

/* clang-format on */

int main(void) {
    /* Everything above held, or this would not have compiled and linked. */
    size_t linked = 0;
    for (size_t i = 0; i < sizeof checked_functions / sizeof checked_functions[0]; i++)
        if (checked_functions[i].address != NULL) linked++;
    printf("upstream interface: %zu of %d functions (upstream main's %d and the data cache's %d), %d enumerators, "
           "%d structs with %d fields, %d callback typedefs, %d tagged structs, %d handles: all checked\n",
           linked, (int)(FUNCTIONS_CHECKED + DATA_CACHE_FUNCTIONS_CHECKED), (int)FUNCTIONS_CHECKED,
           (int)DATA_CACHE_FUNCTIONS_CHECKED, (int)ENUM_VALUES_CHECKED, (int)STRUCTS_CHECKED, (int)FIELDS_CHECKED,
           (int)CALLBACKS_CHECKED, (int)TAGS_CHECKED, (int)HANDLES_CHECKED);
    return linked == (size_t)(FUNCTIONS_CHECKED + DATA_CACHE_FUNCTIONS_CHECKED) ? 0 : 1;
}
