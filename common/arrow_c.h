/* The Arrow C data interface for programs without an Arrow library.
 *
 * Building: a schema or array node on the heap that owns what hangs from it
 * (its names or buffers, and its children) and frees it all in its release
 * callback, as the specification asks of a producer.  Each child is a node
 * with a release of its own, so a consumer may move one out (copy the
 * struct, then release the parent) as the specification allows.
 *
 * Reading: finding a struct's child by name. */
#ifndef LANCE_COMMON_ARROW_C_H
#define LANCE_COMMON_ARROW_C_H

#include <stdint.h>

#include "lance/lance.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Makes `out` a schema node with copies of `format` and `name` (NULL = no
 * name), `flags`, and `n_children` child structs, zeroed: set each up with
 * another arrow_schema_init() call.  Its release releases the children that
 * were set up (release != NULL) and frees everything.  Returns 0, or -1
 * with errno ENOMEM and *out zeroed (nothing to release). */
int arrow_schema_init(struct ArrowSchema* out, const char* format, const char* name, int64_t flags, int64_t n_children);

/* Makes `out` an array node of `length` rows, no nulls and offset 0, with
 * `n_buffers` buffer slots, all NULL, and `n_children` child structs,
 * zeroed: set each up with another arrow_array_init() call.  The node owns
 * the buffers put in its slots (malloc'd memory; its release frees them)
 * and releases its children that were set up.  Returns 0, or -1 with
 * errno ENOMEM and *out zeroed. */
int arrow_array_init(struct ArrowArray* out, int64_t length, int64_t n_buffers, int64_t n_children);

/* The index of the child of `schema` (a struct's) named `name`, or -1. */
int64_t arrow_child_index(const struct ArrowSchema* schema, const char* name);

#ifdef __cplusplus
}
#endif

#endif
