#define _POSIX_C_SOURCE 200809L /* strdup */
#include "arrow_c.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A node's child structs live in one block, children[0] its start; the
 * children array points into it. */

static void schema_release(struct ArrowSchema* s) {
    for (int64_t i = 0; i < s->n_children; i++)
        if (s->children[i]->release) s->children[i]->release(s->children[i]);
    if (s->n_children > 0) free(s->children[0]);
    free(s->children);
    free((void*)s->format);
    free((void*)s->name);
    s->release = NULL;
}

int arrow_schema_init(struct ArrowSchema* out, const char* format, const char* name, int64_t flags,
                      int64_t n_children) {
    memset(out, 0, sizeof *out);
    size_t n = n_children > 0 ? (size_t)n_children : 0;
    char* format_copy = strdup(format);
    char* name_copy = name ? strdup(name) : NULL;
    struct ArrowSchema** children = n ? calloc(n, sizeof *children) : NULL;
    struct ArrowSchema* block = n ? calloc(n, sizeof *block) : NULL;
    if (!format_copy || (name && !name_copy) || (n && (!children || !block))) {
        free(block), free(children), free(name_copy), free(format_copy);
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < n; i++) children[i] = &block[i];
    out->format = format_copy;
    out->name = name_copy;
    out->flags = flags;
    out->n_children = (int64_t)n;
    out->children = children;
    out->release = schema_release;
    return 0;
}

/* An array node's private data is its buffer list. */
static void array_release(struct ArrowArray* a) {
    for (int64_t i = 0; i < a->n_children; i++)
        if (a->children[i]->release) a->children[i]->release(a->children[i]);
    if (a->n_children > 0) free(a->children[0]);
    free(a->children);
    const void** buffers = a->private_data;
    for (int64_t i = 0; i < a->n_buffers; i++) free((void*)buffers[i]);
    free(buffers);
    a->release = NULL;
}

int arrow_array_init(struct ArrowArray* out, int64_t length, int64_t n_buffers, int64_t n_children) {
    memset(out, 0, sizeof *out);
    size_t n = n_children > 0 ? (size_t)n_children : 0;
    /* At least one slot, so that a node without buffers still has a list. */
    const void** buffers = calloc(n_buffers > 0 ? (size_t)n_buffers : 1, sizeof *buffers);
    struct ArrowArray** children = n ? calloc(n, sizeof *children) : NULL;
    struct ArrowArray* block = n ? calloc(n, sizeof *block) : NULL;
    if (!buffers || (n && (!children || !block))) {
        free(block), free(children), free(buffers);
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < n; i++) children[i] = &block[i];
    out->length = length;
    out->n_buffers = n_buffers > 0 ? n_buffers : 0;
    out->buffers = buffers;
    out->n_children = (int64_t)n;
    out->children = children;
    out->private_data = buffers;
    out->release = array_release;
    return 0;
}

int64_t arrow_child_index(const struct ArrowSchema* schema, const char* name) {
    for (int64_t i = 0; i < schema->n_children; i++)
        if (schema->children[i]->name && strcmp(schema->children[i]->name, name) == 0) return i;
    return -1;
}
