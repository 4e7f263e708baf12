/* Arrow streams for the tests of functions that consume one: each counts
 * how often it is released (a consumed stream must be released exactly
 * once, on success and on every error), over the rows of test_util's
 * datasets or over one int64 column; and struct schemas built by hand. */
#ifndef LANCE_TEST_STREAMS_H
#define LANCE_TEST_STREAMS_H

#include "test_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Takes over `inner` (moved: its release is cleared) and counts the
 * releases of `out` in *releases. */
void tu_counted_stream(struct ArrowArrayStream* inner, int* releases, struct ArrowArrayStream* out);

/* A counted stream of rows [first, first + rows) of `src` (tu_schema()'s
 * schema), 128 rows per batch. */
void tu_rows_stream(const TuData* src, int64_t first, int64_t rows, int* releases, struct ArrowArrayStream* out);

/* A counted stream of one non-null int64 column `name` whose row i holds
 * i * mult, 128 rows per batch. */
void tu_int64_stream(const char* name, int64_t rows, int64_t mult, int* releases, struct ArrowArrayStream* out);

/* A struct schema of `n` fields {names[i]: formats[i], nullable[i]}.  The
 * formats are borrowed (string literals); release it. */
void tu_struct_schema(int n, const char* const* names, const char* const* formats, const int* nullable,
                      struct ArrowSchema* out);

/* Releases a schema without children whose name was strdup'd. */
void tu_release_leaf_schema(struct ArrowSchema* s);

#ifdef __cplusplus
}
#endif

#endif
