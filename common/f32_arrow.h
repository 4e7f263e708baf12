/* Raw little-endian float32 files as Arrow arrays: a vector model trained
 * where there is no Arrow (the Lance Java SDK's VectorTrainer returns
 * float[]), handed to the library's Arrow-taking functions. */
#ifndef LANCE_COMMON_F32_ARROW_H
#define LANCE_COMMON_F32_ARROW_H

#include <stddef.h>
#include <stdint.h>

#include "lance/lance.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The file's bytes as little-endian float32 values, in malloc'd memory (free
 * it), their count in *count.  NULL with errno set when the file cannot be
 * read, or EINVAL when it is empty or its size is not a multiple of 4. */
float* read_f32_file(const char* path, size_t* count);

/* A FixedSizeList<float32>[width] array of count / width rows over `values`
 * (row-major), and its schema.  The array takes `values` (its release frees
 * them); both are produced: release each.  `count` must be a positive
 * multiple of `width` > 0.  Returns 0, or -1 with errno set (EINVAL for the
 * shape, ENOMEM) and `values` freed. */
int f32_list_arrow(float* values, size_t count, int32_t width, struct ArrowArray* out_array,
                   struct ArrowSchema* out_schema);

#ifdef __cplusplus
}
#endif

#endif
