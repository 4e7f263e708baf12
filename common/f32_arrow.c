#define _POSIX_C_SOURCE 200809L
#include "f32_arrow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- the schema: "+w:<width>" with one float32 child ---- */

static void release_schema(struct ArrowSchema* s) {
    for (int64_t i = 0; i < s->n_children; i++) {
        struct ArrowSchema* child = s->children[i];
        if (child->release) child->release(child);
        free(child);
    }
    free(s->children);
    free((void*)s->format);
    free((void*)s->name);
    s->release = NULL;
}

/* ---- the array: the list owns its child, the child owns the values ---- */

typedef struct {
    const void* buffers[2];
    struct ArrowArray* child;
} ListOwner;

static void release_values(struct ArrowArray* a) {
    free((void*)a->buffers[1]);
    free(a->private_data);
    a->release = NULL;
}

static void release_list(struct ArrowArray* a) {
    ListOwner* owner = a->private_data;
    if (owner->child->release) owner->child->release(owner->child);
    free(owner->child);
    free(owner);
    a->release = NULL;
}

int f32_list_arrow(float* values, size_t count, int32_t width, struct ArrowArray* out_array,
                   struct ArrowSchema* out_schema) {
    if (width <= 0 || count == 0 || count % (size_t)width != 0) {
        free(values);
        errno = EINVAL;
        return -1;
    }
    char format[32];
    snprintf(format, sizeof format, "+w:%d", (int)width);
    ListOwner* owner = calloc(1, sizeof *owner);
    struct ArrowArray* child = calloc(1, sizeof *child);
    const void** child_buffers = calloc(2, sizeof *child_buffers);
    struct ArrowSchema** schema_children = calloc(1, sizeof *schema_children);
    struct ArrowSchema* item = calloc(1, sizeof *item);
    char* list_format = strdup(format);
    char* list_name = strdup("");
    char* item_format = strdup("f");
    char* item_name = strdup("item");
    if (!owner || !child || !child_buffers || !schema_children || !item || !list_format || !list_name ||
        !item_format || !item_name) {
        free(owner), free(child), free(child_buffers), free(schema_children), free(item);
        free(list_format), free(list_name), free(item_format), free(item_name);
        free(values);
        errno = ENOMEM;
        return -1;
    }
    /* No nulls anywhere: the validity buffers are NULL. */
    memset(child, 0, sizeof *child);
    child->length = (int64_t)count;
    child->n_buffers = 2;
    child_buffers[1] = values;
    child->buffers = child_buffers;
    child->private_data = child_buffers;
    child->release = release_values;

    memset(out_array, 0, sizeof *out_array);
    owner->child = child;
    out_array->length = (int64_t)(count / (size_t)width);
    out_array->n_buffers = 1;
    out_array->buffers = owner->buffers;
    out_array->n_children = 1;
    out_array->children = &owner->child;
    out_array->private_data = owner;
    out_array->release = release_list;

    memset(item, 0, sizeof *item);
    item->format = item_format;
    item->name = item_name;
    item->flags = ARROW_FLAG_NULLABLE;
    item->release = release_schema;
    memset(out_schema, 0, sizeof *out_schema);
    out_schema->format = list_format;
    out_schema->name = list_name;
    out_schema->flags = ARROW_FLAG_NULLABLE;
    out_schema->n_children = 1;
    schema_children[0] = item;
    out_schema->children = schema_children;
    out_schema->release = release_schema;
    return 0;
}
