/* Vector segment builders from the parameters a program already has: the
 * LanceVectorIndexParams it gives the one-shot build and the trainers, and
 * optionally a shared model handle.  lance_index_segment_builder_new_vector()
 * takes the same fields as LanceVectorIndexSegmentParams (enum fields as
 * int32_t); this is the one place that copies them across. */
#ifndef LANCE_COMMON_SEGMENT_PARAMS_H
#define LANCE_COMMON_SEGMENT_PARAMS_H

#include "lance/lance.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `params` in the segment builders' form, field by field. */
LanceVectorIndexSegmentParams vector_segment_params(const LanceVectorIndexParams* params);

/* lance_index_segment_builder_new_vector() with `params` converted, then,
 * when `model` is not NULL, lance_index_segment_builder_set_model(): the
 * builder never trains.  `options` may be NULL (all defaults); with a model
 * its mode must be AUTO (the zero value) and it must hold no Arrow arrays.
 * Every argument is borrowed.  Returns the builder (free it with
 * lance_index_segment_builder_free()), or NULL with the library's error of
 * the step that failed pending for this thread (a builder the model was
 * refused for is freed). */
LanceIndexSegmentBuilder* vector_segment_builder_new(const LanceDataset* dataset, const char* column,
                                                     const char* index_name, const LanceVectorIndexParams* params,
                                                     const LanceIndexSegmentBuildOptions* options,
                                                     const LanceVectorModel* model);

/* One uncommitted segment of column `column` over `fragment_count` fragments
 * (all of them when 0), built with `model` (NULL: the builder trains its
 * own), cancellable through `token` (NULL: none): the builder of
 * vector_segment_builder_new() run once and freed.  Every argument is
 * borrowed.  Returns 0 with the segment's metadata bytes in *bytes and *len
 * (free with lance_free_bytes()), or -1 with the library's error pending. */
int vector_segment_build(const LanceDataset* dataset, const char* column, const LanceVectorIndexParams* params,
                         const LanceVectorModel* model, const uint32_t* fragment_ids, size_t fragment_count,
                         const LanceIndexBuildCancelToken* token, uint8_t** bytes, size_t* len);

#ifdef __cplusplus
}
#endif

#endif
