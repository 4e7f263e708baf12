#include "segment_params.h"

LanceVectorIndexSegmentParams vector_segment_params(const LanceVectorIndexParams* params) {
    LanceVectorIndexSegmentParams out;
    out.index_type = (int32_t)params->index_type;
    out.metric = (int32_t)params->metric;
    out.num_partitions = params->num_partitions;
    out.num_sub_vectors = params->num_sub_vectors;
    out.num_bits = params->num_bits;
    out.max_iterations = params->max_iterations;
    out.hnsw_m = params->hnsw_m;
    out.hnsw_ef_construction = params->hnsw_ef_construction;
    out.sample_rate = params->sample_rate;
    return out;
}

LanceIndexSegmentBuilder* vector_segment_builder_new(const LanceDataset* dataset, const char* column,
                                                     const char* index_name, const LanceVectorIndexParams* params,
                                                     const LanceIndexSegmentBuildOptions* options,
                                                     const LanceVectorModel* model) {
    /* A NULL `params` is the library's to refuse, with its own message. */
    LanceVectorIndexSegmentParams converted;
    if (params) converted = vector_segment_params(params);
    LanceIndexSegmentBuilder* builder =
        lance_index_segment_builder_new_vector(dataset, column, index_name, params ? &converted : NULL, options);
    if (builder && model && lance_index_segment_builder_set_model(builder, model) != 0) {
        /* Freeing a handle leaves this thread's last error as it is. */
        lance_index_segment_builder_free(builder);
        return NULL;
    }
    return builder;
}

int vector_segment_build(const LanceDataset* dataset, const char* column, const LanceVectorIndexParams* params,
                         const LanceVectorModel* model, const uint32_t* fragment_ids, size_t fragment_count,
                         const LanceIndexBuildCancelToken* token, uint8_t** bytes, size_t* len) {
    LanceIndexSegmentBuildOptions options = {0};
    options.fragment_ids = fragment_ids;
    options.fragment_count = fragment_count;
    LanceIndexSegmentBuilder* builder = vector_segment_builder_new(dataset, column, NULL, params, &options, model);
    int rc = -1;
    if (builder && (!token || lance_index_segment_builder_set_cancel_token(builder, token) == 0) &&
        lance_index_segment_builder_execute_uncommitted(builder, bytes, len) == 0)
        rc = 0;
    lance_index_segment_builder_free(builder);
    return rc;
}
