/* This library's own interface (beyond upstream lance-c's, which
 * upstream_interface.c checks), frozen: every function's exact type as
 * released, so a change to one is a deliberate edit here, never an accident
 * of a refactor.  A reference to each makes the link prove it is exported;
 * with upstream_interface.c this covers every function lance.h declares
 * (scripts/check_exports.sh checks that header and library agree).  The
 * structs of this library's own are frozen likewise, each field at its
 * offset with its type, and the size.  scripts/check_map.sh (ctest's
 * test_map) fails when lance.h declares a function, or defines a struct,
 * that neither this file nor upstream_interface.c freezes.
 */
#include <stddef.h>
#include <stdio.h>

#include "lance/lance.h"

/* The deprecated functions stay frozen at their types until the release that
   removes them (CHANGELOG.md lists them): naming them here is no use. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* The lists below stay as written, one X(...) entry a line (scripts/check_map.sh
   reads them), and so do the _Generic checks: no clang-format here. */
/* clang-format off */
/* X(return type, name, (parameters)) */
#define OWN_FUNCTIONS(X) \
    X(const char*, lance_version, (void)) \
    X(int32_t, lance_process_budget_set, (const LanceProcessBudget* budget)) \
    X(int32_t, lance_set_log_callback, (int32_t max_level, LanceLogCallback callback, void* ctx)) \
    X(int32_t, lance_scanner_minhash_search, (LanceScanner* scanner, const char* column, const char* text)) \
    X(int32_t, lance_dataset_abort_incomplete_uploads, (const LanceDataset* dataset, uint64_t older_than_seconds, uint64_t* out_aborted)) \
    X(int32_t, lance_dataset_fragment_ids_bounded, (const LanceDataset* dataset, uint64_t* out_ids, size_t capacity, size_t* out_count)) \
    X(int32_t, lance_dataset_fragment_row_counts, (const LanceDataset* dataset, uint64_t* out_row_counts, size_t capacity)) \
    X(int32_t, lance_dataset_cleanup_old_versions, (LanceDataset* dataset, uint64_t older_than_seconds, bool delete_unverified, LanceCleanupStats* out_stats)) \
    X(uint64_t, lance_batch_num_rows, (const LanceBatch* batch)) \
    X(int32_t, lance_dataset_train_ivf_centroids, (const LanceDataset* dataset, const char* column, uint32_t num_partitions, LanceMetricType metric, const uint32_t* sample_fragment_ids, size_t sample_fragment_count, struct ArrowArray* out_centroids, struct ArrowSchema* out_schema)) \
    X(int32_t, lance_dataset_train_pq_codebook, (const LanceDataset* dataset, const char* column, uint32_t num_sub_vectors, uint32_t num_bits, LanceMetricType metric, const struct ArrowArray* ivf_centroids, const struct ArrowSchema* ivf_centroids_schema, const uint32_t* sample_fragment_ids, size_t sample_fragment_count, struct ArrowArray* out_codebook, struct ArrowSchema* out_schema)) \
    X(int32_t, lance_vector_model_train, (const LanceDataset* dataset, const char* column, const LanceVectorIndexParams* params, const uint32_t* sample_fragment_ids, size_t sample_fragment_count, const LanceVectorModelTrainOptions* options, LanceVectorModel** out_model)) \
    X(int32_t, lance_dataset_train_vector_model, (const LanceDataset* dataset, const char* column, const LanceVectorIndexParams* params, const uint32_t* sample_fragment_ids, size_t sample_fragment_count, LanceVectorModel** out_model)) \
    X(int32_t, lance_dataset_train_vector_model_with_control, (const LanceDataset* dataset, const char* column, const LanceVectorIndexParams* params, const uint32_t* sample_fragment_ids, size_t sample_fragment_count, const LanceIndexBuildControl* control, LanceVectorModel** out_model)) \
    X(int32_t, lance_dataset_train_vector_model_with_options, (const LanceDataset* dataset, const char* column, const LanceVectorIndexParams* params, const LanceVectorTrainingOptions* options, const uint32_t* sample_fragment_ids, size_t sample_fragment_count, const LanceIndexBuildControl* control, LanceVectorModel** out_model)) \
    X(int32_t, lance_vector_model_from_arrow, (LanceMetricType metric, const struct ArrowArray* ivf_centroids, const struct ArrowSchema* ivf_centroids_schema, uint32_t num_sub_vectors, uint32_t num_bits, const struct ArrowArray* pq_codebook, const struct ArrowSchema* pq_codebook_schema, LanceVectorModel** out_model)) \
    X(int32_t, lance_dataset_read_vector_model, (const LanceDataset* dataset, const char* index_name, LanceVectorModel** out_model)) \
    X(int32_t, lance_vector_model_serialize, (const LanceVectorModel* model, uint8_t** out_bytes, size_t* out_len)) \
    X(int32_t, lance_vector_model_parse, (const uint8_t* bytes, size_t len, LanceVectorModel** out_model)) \
    X(char*, lance_vector_model_fingerprint, (const LanceVectorModel* model)) \
    X(int32_t, lance_vector_model_info, (const LanceVectorModel* model, LanceVectorModelInfo* out)) \
    X(int32_t, lance_vector_model_index_type, (const LanceVectorModel* model, int32_t* out_index_type)) \
    X(int32_t, lance_vector_model_centroids, (const LanceVectorModel* model, struct ArrowArray* out_array, struct ArrowSchema* out_schema)) \
    X(int32_t, lance_vector_model_codebook, (const LanceVectorModel* model, struct ArrowArray* out_array, struct ArrowSchema* out_schema)) \
    X(void, lance_vector_model_free, (LanceVectorModel* model)) \
    X(int32_t, lance_vector_training_new, (const char* column, const LanceVectorIndexParams* params, uint64_t seed, LanceVectorTraining** out_training)) \
    X(int32_t, lance_vector_training_resume, (const uint8_t* request, size_t len, LanceVectorTraining** out_training)) \
    X(int32_t, lance_vector_training_request, (const LanceVectorTraining* training, uint8_t** out_bytes, size_t* out_len)) \
    X(int32_t, lance_vector_training_reduce, (LanceVectorTraining* training, const uint8_t* const* stats, const size_t* stats_lens, size_t count)) \
    X(int32_t, lance_vector_training_info, (const LanceVectorTraining* training, LanceVectorTrainingInfo* out)) \
    X(int32_t, lance_vector_training_model, (const LanceVectorTraining* training, LanceVectorModel** out_model)) \
    X(void, lance_vector_training_free, (LanceVectorTraining* training)) \
    X(int32_t, lance_vector_training_worker_new, (const LanceDataset* dataset, const uint32_t* fragment_ids, size_t fragment_count, LanceVectorTrainingWorker** out_worker)) \
    X(int32_t, lance_vector_training_worker_answer, (LanceVectorTrainingWorker* worker, const uint8_t* request, size_t len, const LanceVectorTrainingAnswerOptions* options, uint8_t** out_stats, size_t* out_len)) \
    X(int32_t, lance_vector_training_worker_run, (LanceVectorTrainingWorker* worker, const uint8_t* request, size_t len, uint8_t** out_stats, size_t* out_len)) \
    X(int32_t, lance_vector_training_worker_run_with_control, (LanceVectorTrainingWorker* worker, const uint8_t* request, size_t len, const LanceIndexBuildControl* control, uint8_t** out_stats, size_t* out_len)) \
    X(void, lance_vector_training_worker_free, (LanceVectorTrainingWorker* worker)) \
    X(int32_t, lance_index_segment_builder_set_model, (LanceIndexSegmentBuilder* builder, const LanceVectorModel* model)) \
    X(int32_t, lance_index_segment_builder_set_training_options, (LanceIndexSegmentBuilder* builder, const LanceVectorTrainingOptions* options)) \
    X(LanceIndexBuildCancelToken*, lance_index_build_cancel_token_new, (void)) \
    X(void, lance_index_build_cancel_token_free, (LanceIndexBuildCancelToken* token)) \
    X(int32_t, lance_index_build_cancel, (const LanceIndexBuildCancelToken* token)) \
    X(bool, lance_index_build_cancel_requested, (const LanceIndexBuildCancelToken* token)) \
    X(int32_t, lance_index_segment_builder_set_cancel_token, (LanceIndexSegmentBuilder* builder, const LanceIndexBuildCancelToken* token)) \
    X(int32_t, lance_dataset_create_vector_index_v2, (LanceDataset* dataset, const char* column, const char* index_name, const LanceVectorIndexParams* params, bool replace, const LanceIndexCreateOptions* options)) \
    X(int32_t, lance_dataset_create_scalar_index_v2, (LanceDataset* dataset, const char* column, const char* index_name, LanceScalarIndexType index_type, const char* params_json, bool replace, const LanceIndexCreateOptions* options)) \
    X(int32_t, lance_dataset_create_vector_index_with_control, (LanceDataset* dataset, const char* column, const char* index_name, const LanceVectorIndexParams* params, bool replace, const LanceIndexBuildControl* control)) \
    X(int32_t, lance_dataset_create_scalar_index_with_control, (LanceDataset* dataset, const char* column, const char* index_name, LanceScalarIndexType index_type, const char* params_json, bool replace, const LanceIndexBuildControl* control)) \
    X(int32_t, lance_dataset_create_vector_index_with_options, (LanceDataset* dataset, const char* column, const char* index_name, const LanceVectorIndexParams* params, const LanceVectorTrainingOptions* options, bool replace, const LanceIndexBuildControl* control)) \
    X(int32_t, lance_dataset_recommended_num_partitions, (const LanceDataset* dataset, int32_t index_type, uint32_t target_partition_size, const uint32_t* fragment_ids, size_t fragment_count, uint32_t* out_num_partitions)) \
    X(const char*, lance_index_segment_metadata_index_type_name, (const LanceIndexSegmentMetadata* metadata)) \
    X(const char*, lance_index_segment_metadata_model_fingerprint, (const LanceIndexSegmentMetadata* metadata)) \
    X(int32_t, lance_index_segment_metadata_created_at_ms, (const LanceIndexSegmentMetadata* metadata, int64_t* out_ms, bool* out_present)) \
    X(uint64_t, lance_index_segment_metadata_file_count, (const LanceIndexSegmentMetadata* metadata)) \
    X(int32_t, lance_index_segment_metadata_file_at, (const LanceIndexSegmentMetadata* metadata, size_t index, const char** out_path, uint64_t* out_size_bytes)) \
    X(int32_t, lance_dataset_commit_index_segments_v2, (LanceDataset* dataset, const char* index_name, const char* column, const uint8_t* const* segment_metadata_bytes, const size_t* segment_metadata_lens, size_t segment_count, const LanceCommitIndexOptions* options, LanceCommitIndexResult* out_result)) \
    X(int32_t, lance_dataset_commit_index_segments_with_options, ( LanceDataset* dataset, const char* index_name, const char* column, const uint8_t* const* segment_metadata_bytes, const size_t* segment_metadata_lens, size_t segment_count, const LanceCommitIndexOptions* options, LanceCommitIndexResult* out_result)) \
    X(int32_t, lance_dataset_merge_index_segments, (const LanceDataset* dataset, const uint8_t* const* segment_metadata_bytes, const size_t* segment_metadata_lens, size_t segment_count, uint8_t** out_metadata_bytes, size_t* out_metadata_len)) \
    X(int32_t, lance_dataset_optimize_indices, (LanceDataset* dataset, const LanceOptimizeIndicesOptions* options)) \
    X(int32_t, lance_dataset_optimize_indices_with_control, (LanceDataset* dataset, const LanceOptimizeIndicesOptions* options, const LanceIndexBuildControl* control)) \
    X(char*, lance_dataset_plan_index_maintenance, (const LanceDataset* dataset, const char* index_name, const LanceIndexMaintenanceOptions* options)) \
    X(int32_t, lance_dataset_index_segment_metadata, (const LanceDataset* dataset, const char* index_name, const char* segment_uuid, uint8_t** out_metadata_bytes, size_t* out_metadata_len)) \
    X(int32_t, lance_dataset_plan_fragment_groups, (const LanceDataset* dataset, size_t group_count, LanceFragmentPlan** out_plan)) \
    X(size_t, lance_fragment_plan_group_count, (const LanceFragmentPlan* plan)) \
    X(uint64_t, lance_fragment_plan_dataset_version, (const LanceFragmentPlan* plan)) \
    X(int32_t, lance_fragment_plan_group, (const LanceFragmentPlan* plan, size_t group, const uint32_t** out_fragment_ids, size_t* out_fragment_count, uint64_t* out_rows)) \
    X(void, lance_fragment_plan_free, (LanceFragmentPlan* plan)) \
    X(char*, lance_dataset_index_segments_json, (const LanceDataset* dataset)) \
    X(char*, lance_dataset_index_coverage_json, (const LanceDataset* dataset, const char* index_name))

#define CHECK_FUNCTION(ret, name, params) \
    _Static_assert(_Generic(&name, ret(*) params: 1, default: 0), \
                   #name " changed its type: it was " #ret " " #name #params);
OWN_FUNCTIONS(CHECK_FUNCTION)

/* The control the options structs point to (and the deprecated
 * *_with_control functions take), frozen: each field at its released offset
 * (LP64) with its type; its callback is the type
 * lance_index_segment_builder_set_progress_callback() takes. */
#define CONTROL_FIELDS(X) \
    X(progress, 0, LanceIndexBuildProgressCallback) \
    X(progress_user_data, 8, void*) \
    X(cancel_token, 16, const LanceIndexBuildCancelToken*)

#define CHECK_CONTROL_FIELD(field, offset, type) \
    _Static_assert(offsetof(LanceIndexBuildControl, field) == (offset) && \
                       _Generic(((LanceIndexBuildControl*)0)->field, type: 1, default: 0), \
                   "LanceIndexBuildControl." #field " changed: it was " #type " at offset " #offset);
_Static_assert(sizeof(void*) == 8, "the offsets above are LP64's");
CONTROL_FIELDS(CHECK_CONTROL_FIELD)
_Static_assert(sizeof(LanceIndexBuildControl) == 24, "LanceIndexBuildControl changed its size: it was 24 bytes");

/* LanceVectorTrainingInfo, likewise. */
#define TRAINING_INFO_FIELDS(X) \
    X(phase, 0, LanceVectorTrainingPhase) \
    X(rounds, 4, uint32_t) \
    X(ivf_iterations, 8, uint32_t) \
    X(pq_iterations, 12, uint32_t) \
    X(dimension, 16, uint32_t) \
    X(reserved, 20, uint32_t) \
    X(ivf_sample_rows, 24, uint64_t) \
    X(pq_sample_rows, 32, uint64_t) \
    X(ivf_loss, 40, double) \
    X(pq_loss, 48, double)
#define CHECK_TRAINING_INFO_FIELD(field, offset, type) \
    _Static_assert(offsetof(LanceVectorTrainingInfo, field) == (offset) && \
                       _Generic(((LanceVectorTrainingInfo*)0)->field, type: 1, default: 0), \
                   "LanceVectorTrainingInfo." #field " changed: it was " #type " at offset " #offset);
TRAINING_INFO_FIELDS(CHECK_TRAINING_INFO_FIELD)
_Static_assert(sizeof(LanceVectorTrainingInfo) == 56, "LanceVectorTrainingInfo changed its size: it was 56 bytes");

/* LanceVectorTrainingOptions, likewise. */
#define TRAINING_OPTIONS_FIELDS(X) \
    X(target_partition_size, 0, uint32_t) \
    X(streaming_sample_rate, 4, uint32_t) \
    X(streaming_coreset_rate, 8, uint32_t) \
    X(streaming_refine_passes, 12, uint32_t) \
    X(use_seed, 16, uint32_t) \
    X(reserved, 20, uint32_t) \
    X(seed, 24, uint64_t)
#define CHECK_TRAINING_OPTIONS_FIELD(field, offset, type) \
    _Static_assert(offsetof(LanceVectorTrainingOptions, field) == (offset) && \
                       _Generic(((LanceVectorTrainingOptions*)0)->field, type: 1, default: 0), \
                   "LanceVectorTrainingOptions." #field " changed: it was " #type " at offset " #offset);
TRAINING_OPTIONS_FIELDS(CHECK_TRAINING_OPTIONS_FIELD)
_Static_assert(sizeof(LanceVectorTrainingOptions) == 32,
               "LanceVectorTrainingOptions changed its size: it was 32 bytes");

/* LanceProcessBudget, likewise. */
#define BUDGET_FIELDS(X) \
    X(compute_threads, 0, uint32_t) \
    X(io_threads, 4, uint32_t) \
    X(temp_dir, 8, const char*)
#define CHECK_BUDGET_FIELD(field, offset, type) \
    _Static_assert(offsetof(LanceProcessBudget, field) == (offset) && \
                       _Generic(((LanceProcessBudget*)0)->field, type: 1, default: 0), \
                   "LanceProcessBudget." #field " changed: it was " #type " at offset " #offset);
BUDGET_FIELDS(CHECK_BUDGET_FIELD)
_Static_assert(sizeof(LanceProcessBudget) == 16, "LanceProcessBudget changed its size: it was 16 bytes");

/* LanceOptimizeIndicesOptions, likewise. */
#define OPTIMIZE_FIELDS(X) \
    X(index_names, 0, const char* const*) \
    X(index_name_count, 8, size_t) \
    X(has_num_indices_to_merge, 16, bool) \
    X(num_indices_to_merge, 20, uint32_t) \
    X(retrain, 24, bool) \
    X(enable_partition_rebalancing, 25, bool) \
    X(max_rows_per_task, 32, uint64_t) \
    X(max_rows_per_segment, 40, uint64_t) \
    X(control, 48, const LanceIndexBuildControl*)
#define CHECK_OPTIMIZE_FIELD(field, offset, type) \
    _Static_assert(offsetof(LanceOptimizeIndicesOptions, field) == (offset) && \
                       _Generic(((LanceOptimizeIndicesOptions*)0)->field, type: 1, default: 0), \
                   "LanceOptimizeIndicesOptions." #field " changed: it was " #type " at offset " #offset);
OPTIMIZE_FIELDS(CHECK_OPTIMIZE_FIELD)
_Static_assert(sizeof(LanceOptimizeIndicesOptions) == 56,
               "LanceOptimizeIndicesOptions changed its size: it was 56 bytes");

/* LanceIndexMaintenanceOptions, likewise. */
#define MAINTENANCE_FIELDS(X) \
    X(target_rows_per_segment, 0, uint64_t) \
    X(small_segment_rows, 8, uint64_t) \
    X(max_segments, 16, uint32_t) \
    X(drift_threshold, 20, float)
#define CHECK_MAINTENANCE_FIELD(field, offset, type) \
    _Static_assert(offsetof(LanceIndexMaintenanceOptions, field) == (offset) && \
                       _Generic(((LanceIndexMaintenanceOptions*)0)->field, type: 1, default: 0), \
                   "LanceIndexMaintenanceOptions." #field " changed: it was " #type " at offset " #offset);
MAINTENANCE_FIELDS(CHECK_MAINTENANCE_FIELD)
_Static_assert(sizeof(LanceIndexMaintenanceOptions) == 24,
               "LanceIndexMaintenanceOptions changed its size: it was 24 bytes");

/* LanceCleanupStats, likewise. */
#define CLEANUP_FIELDS(X) \
    X(bytes_removed, 0, uint64_t) \
    X(old_versions, 8, uint64_t) \
    X(data_files_removed, 16, uint64_t) \
    X(transaction_files_removed, 24, uint64_t) \
    X(index_files_removed, 32, uint64_t) \
    X(deletion_files_removed, 40, uint64_t)
#define CHECK_CLEANUP_FIELD(field, offset, type) \
    _Static_assert(offsetof(LanceCleanupStats, field) == (offset) && \
                       _Generic(((LanceCleanupStats*)0)->field, type: 1, default: 0), \
                   "LanceCleanupStats." #field " changed: it was " #type " at offset " #offset);
CLEANUP_FIELDS(CHECK_CLEANUP_FIELD)
_Static_assert(sizeof(LanceCleanupStats) == 48, "LanceCleanupStats changed its size: it was 48 bytes");

/* LanceVectorModelInfo, likewise. */
#define MODEL_INFO_FIELDS(X) \
    X(metric, 0, LanceMetricType) \
    X(dimension, 4, uint32_t) \
    X(num_partitions, 8, uint32_t) \
    X(has_pq_codebook, 12, bool) \
    X(has_rq_rotation, 13, bool) \
    X(num_sub_vectors, 16, uint32_t) \
    X(num_bits, 20, uint32_t)
#define CHECK_MODEL_INFO_FIELD(field, offset, type) \
    _Static_assert(offsetof(LanceVectorModelInfo, field) == (offset) && \
                       _Generic(((LanceVectorModelInfo*)0)->field, type: 1, default: 0), \
                   "LanceVectorModelInfo." #field " changed: it was " #type " at offset " #offset);
MODEL_INFO_FIELDS(CHECK_MODEL_INFO_FIELD)
_Static_assert(sizeof(LanceVectorModelInfo) == 24, "LanceVectorModelInfo changed its size: it was 24 bytes");

/* LanceCommitIndexOptions and LanceCommitIndexResult, likewise. */
#define COMMIT_OPTIONS_FIELDS(X) \
    X(replace, 0, bool) \
    X(allow_independent_models, 1, bool) \
    X(job_id, 8, const char*) \
    X(attempt_id, 16, const char*)
#define CHECK_COMMIT_OPTIONS_FIELD(field, offset, type) \
    _Static_assert(offsetof(LanceCommitIndexOptions, field) == (offset) && \
                       _Generic(((LanceCommitIndexOptions*)0)->field, type: 1, default: 0), \
                   "LanceCommitIndexOptions." #field " changed: it was " #type " at offset " #offset);
COMMIT_OPTIONS_FIELDS(CHECK_COMMIT_OPTIONS_FIELD)
_Static_assert(sizeof(LanceCommitIndexOptions) == 24, "LanceCommitIndexOptions changed its size: it was 24 bytes");
#define COMMIT_RESULT_FIELDS(X) \
    X(version, 0, uint64_t) \
    X(already_committed, 8, bool)
#define CHECK_COMMIT_RESULT_FIELD(field, offset, type) \
    _Static_assert(offsetof(LanceCommitIndexResult, field) == (offset) && \
                       _Generic(((LanceCommitIndexResult*)0)->field, type: 1, default: 0), \
                   "LanceCommitIndexResult." #field " changed: it was " #type " at offset " #offset);
COMMIT_RESULT_FIELDS(CHECK_COMMIT_RESULT_FIELD)
_Static_assert(sizeof(LanceCommitIndexResult) == 16, "LanceCommitIndexResult changed its size: it was 16 bytes");

/* The options of the calls that take one per concept, likewise: each
 * control and training options by pointer, NULL = none. */
#define CHECK_OPTIONS_FIELD(type, field, offset, field_type) \
    _Static_assert(offsetof(type, field) == (offset) && _Generic(((type*)0)->field, field_type: 1, default: 0), \
                   #type "." #field " changed: it was " #field_type " at offset " #offset);
#define PER_CONCEPT_OPTIONS_FIELDS(X) \
    X(LanceIndexCreateOptions, control, 0, const LanceIndexBuildControl*) \
    X(LanceIndexCreateOptions, training, 8, const LanceVectorTrainingOptions*) \
    X(LanceVectorModelTrainOptions, control, 0, const LanceIndexBuildControl*) \
    X(LanceVectorModelTrainOptions, training, 8, const LanceVectorTrainingOptions*) \
    X(LanceVectorTrainingAnswerOptions, control, 0, const LanceIndexBuildControl*)
PER_CONCEPT_OPTIONS_FIELDS(CHECK_OPTIONS_FIELD)
_Static_assert(sizeof(LanceIndexCreateOptions) == 16, "LanceIndexCreateOptions changed its size: it was 16 bytes");
_Static_assert(sizeof(LanceVectorModelTrainOptions) == 16,
               "LanceVectorModelTrainOptions changed its size: it was 16 bytes");
_Static_assert(sizeof(LanceVectorTrainingAnswerOptions) == 8,
               "LanceVectorTrainingAnswerOptions changed its size: it was 8 bytes");

/* clang-format on */

typedef void (*AnyFunction)(void);
#define FUNCTION_ENTRY(ret, name, params) (AnyFunction) & name,
static const AnyFunction own_functions[] = {OWN_FUNCTIONS(FUNCTION_ENTRY)};

int main(void) {
    size_t n = sizeof own_functions / sizeof own_functions[0];
    for (size_t i = 0; i < n; i++)
        if (own_functions[i] == NULL) return 1;
    printf("own interface: %zu functions checked\n", n);
    return 0;
}
