#define _POSIX_C_SOURCE 200809L
#include "f32_arrow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_c.h"
#include "arrow_flags.h"
#include "files.h"

float* read_f32_file(const char* path, size_t* count) {
    size_t len = 0;
    unsigned char* bytes = read_whole_file(path, &len);
    if (!bytes) return NULL;
    if (len == 0 || len % 4 != 0) {
        free(bytes);
        errno = EINVAL;
        return NULL;
    }
    float* values = malloc(len);
    if (!values) {
        free(bytes);
        errno = ENOMEM;
        return NULL;
    }
    /* Little-endian on every host, whatever its own byte order. */
    for (size_t i = 0; i < len / 4; i++) {
        const unsigned char* b = bytes + 4 * i;
        uint32_t bits = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        memcpy(&values[i], &bits, sizeof bits);
    }
    free(bytes);
    *count = len / 4;
    return values;
}

/* A FixedSizeList node over one float32 node; the values node owns `values`. */
int f32_list_arrow(float* values, size_t count, int32_t width, struct ArrowArray* out_array,
                   struct ArrowSchema* out_schema) {
    if (width <= 0 || count == 0 || count % (size_t)width != 0) {
        free(values);
        errno = EINVAL;
        return -1;
    }
    char format[32];
    snprintf(format, sizeof format, "+w:%d", (int)width);
    memset(out_array, 0, sizeof *out_array);
    memset(out_schema, 0, sizeof *out_schema);
    /* No nulls anywhere: the validity buffers stay NULL. */
    if (arrow_schema_init(out_schema, format, "", ARROW_FLAG_NULLABLE, 1) == 0 &&
        arrow_schema_init(out_schema->children[0], "f", "item", ARROW_FLAG_NULLABLE, 0) == 0 &&
        arrow_array_init(out_array, (int64_t)(count / (size_t)width), 1, 1) == 0 &&
        arrow_array_init(out_array->children[0], (int64_t)count, 2, 0) == 0) {
        out_array->children[0]->buffers[1] = values;
        return 0;
    }
    if (out_array->release) out_array->release(out_array);
    if (out_schema->release) out_schema->release(out_schema);
    free(values);
    errno = ENOMEM;
    return -1;
}
