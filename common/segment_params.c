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
