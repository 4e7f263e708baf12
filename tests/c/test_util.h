/* Shared helpers for the C tests: a tiny assertion framework, Arrow arrays
 * built by hand (no Arrow library), clustered vector data, brute-force k-NN,
 * temporary directories, growing text, and other programs (Python oracles)
 * run for their output.  The helpers programs share live in common/. */
#ifndef LANCE_TEST_UTIL_H
#define LANCE_TEST_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lance/lance.h"
#include "arrow_flags.h" /* ARROW_FLAG_NULLABLE, from common/ */
#include "files.h"    /* read_whole_file(), from common/ */
#include "uuid_hex.h" /* UUID text, from common/ */

#ifdef __cplusplus
extern "C" {
#endif

extern int tu_failures;
extern int tu_checks;

/* This thread's last error as the tests see it.  Reading the message takes
 * the error from the library (lance.h, "Errors and memory"), so what is taken
 * is kept here, per thread: every look at one error (several
 * tu_error_mentions(), then the report of a failed check) sees the same
 * message.  tu_last_error() takes a pending error (its code first, then its
 * message), replacing what was kept; with none pending it returns what was
 * kept, which may be an older error, so look right after the failing call.
 * LANCE_OK and NULL before the thread's first error. */
typedef struct {
    LanceErrorCode code;
    const char* message; /* owned by test_util; NULL when none */
} TuError;
const TuError* tu_last_error(void);

/* Records a failed check with its location and the library's last error. */
void tu_fail(const char* file, int line, const char* expr);

#define CHECK(cond)                                      \
    do {                                                 \
        tu_checks++;                                     \
        if (!(cond)) tu_fail(__FILE__, __LINE__, #cond); \
    } while (0)

/* A call that must succeed (return 0). */
#define CHECK_OK(call) CHECK((call) == 0)

/* A call that must fail with -1 and the given error code. */
#define CHECK_ERR(call, code)                          \
    do {                                               \
        CHECK((call) == -1);                           \
        CHECK((int)lance_last_error_code() == (int)(code)); \
    } while (0)

/* True when the message of tu_last_error() contains `needle`. */
int tu_error_mentions(const char* needle);

/* Runs one named test function and reports it. */
#define RUN(fn)                                          \
    do {                                                 \
        int before = tu_failures;                        \
        fn();                                            \
        printf("%s %s\n", tu_failures == before ? "ok  " : "FAIL", #fn); \
    } while (0)

/* Prints the summary line, frees the calling thread's kept error and
 * returns the process exit code. */
int tu_finish(const char* suite);

/* ---- data ---- */

typedef struct {
    int64_t rows;      /* total rows */
    int32_t dim;       /* vector dimension */
    int32_t clusters;  /* number of cluster centres */
    uint64_t seed;
    float* vectors;    /* rows * dim, row-major */
    int64_t* ids;      /* 0..rows-1 */
} TuData;

/* Deterministic clustered vectors: `clusters` centres in [-10,10]^dim, each
 * row a centre plus noise of scale `noise`. */
TuData tu_make_data(int64_t rows, int32_t dim, int32_t clusters, float noise, uint64_t seed);
void tu_free_data(TuData* data);

/* The schema {id: int64 not null, vec: fixed_size_list<float32>[dim] not null,
 * tag: utf8 not null}.  Produced; release it. */
void tu_schema(int32_t dim, struct ArrowSchema* out);

/* A stream over rows [0, data->rows) in batches of `batch_rows`; the tag of
 * row i is "t<i % 7>".  The stream copies what it needs from `data`. */
void tu_stream(const TuData* data, int64_t first_row, int64_t rows, int64_t batch_rows,
               struct ArrowArrayStream* out);

/* Writes rows [first, first+rows) to `uri` with `mode`, `rows_per_file` rows
 * per fragment.  Returns the handle at the new version or NULL. */
LanceDataset* tu_write(const char* uri, const TuData* data, int64_t first, int64_t rows,
                       int32_t mode, uint64_t rows_per_file);
/* tu_write() with storage options (borrowed; NULL = none), for s3:// URIs. */
LanceDataset* tu_write_with_options(const char* uri, const TuData* data, int64_t first, int64_t rows,
                                    int32_t mode, uint64_t rows_per_file, const char* const* storage_opts);

/* Exact k-NN by squared L2 over rows [0, data->rows): writes the ids of the
 * k nearest rows to out_ids, nearest first (ties by smaller id). */
void tu_brute_force_knn(const TuData* data, const float* query, int k, int64_t* out_ids);

/* Runs a k-NN scan and collects the `id` column of the result into out_ids
 * (up to k); returns the number of rows, or -1 on error. */
int tu_knn_ids(LanceScanner* scanner, int64_t* out_ids, int k);

/* Recall@10 of k-NN on column "vec" against brute force over `queries`
 * rows of `data` used as queries (nprobes 0 = not set, Lance's adaptive
 * default; refine 0 = none); -1 on error.
 * `out_mismatches` (nullable) receives how many answers differ from the
 * exact top 10 in any position. */
double tu_recall(LanceDataset* ds, const TuData* data, int queries, uint32_t nprobes, uint32_t refine,
                 int* out_mismatches);


/* Appends the values of the fixed-width column `name` (elem_size bytes each,
 * no nulls) of a struct array, as lance_batch_to_arrow() or a stream's
 * get_next gives it, to `out` at index *n (advanced); -1 when the column is
 * missing or `capacity` would be exceeded. */
int tu_append_column(const struct ArrowArray* array, const struct ArrowSchema* schema, const char* name,
                     void* out, size_t elem_size, int64_t capacity, int64_t* n);

/* Reads every batch of a scanner and returns the total number of rows, or -1. */
int64_t tu_count_scan(LanceScanner* scanner);

/* A FixedSizeList<float32>[n, dim] array over a copy of `values`; when
 * `null_row` >= 0 that row is marked null.  `element_format` is the child's
 * Arrow format ("f" for float32; others make deliberately wrong arrays). */
void tu_f32_list(const float* values, int64_t n, int32_t dim, int64_t null_row,
                 const char* element_format, struct ArrowArray* out, struct ArrowSchema* out_schema);

/* Size of a file in bytes, or -1. */
int64_t tu_file_size(const char* path);

/* A fresh temporary directory (malloc'd path) and recursive removal. */
char* tu_temp_dir(const char* tag);
void tu_remove_tree(const char* path);

/* A deterministic version-4 UUID: seeds that differ modulo 256 give
 * different UUIDs. */
void tu_uuid(int seed, uint8_t out[16]);

/* One uncommitted vector segment on column "vec" over `frags`, UUID from
 * `uuid_seed` (tu_uuid); model NULL = trained locally.  Returns the
 * metadata bytes (free with lance_free_bytes) or NULL on failure. */
uint8_t* tu_vector_segment(LanceDataset* ds, const LanceVectorIndexParams* p, const LanceVectorModel* model,
                           const uint32_t* frags, size_t n, int uuid_seed, size_t* len);

/* Seconds on a monotonic clock. */
double tu_now(void);

/* ---- growing text ---- */

/* A growing, always NUL-terminated text: start from `TuText t = {0};`,
 * append, then take the text (malloc'd; the caller frees it). */
typedef struct {
    char* text; /* NULL until something is appended */
    size_t len, cap;
} TuText;

/* Appends printf-style; aborts when out of memory. */
void tu_text_append(TuText* t, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void tu_text_vappend(TuText* t, const char* fmt, va_list args) __attribute__((format(printf, 2, 0)));

/* The text (t->text, which the caller frees): "" rather than NULL when
 * nothing was appended, so results can always be compared. */
char* tu_text_take(TuText* t);

/* ---- other programs, run through /bin/sh ---- */

/* Appends a space and `arg` in single quotes, safe for /bin/sh whatever it
 * holds (a ' becomes '\''). */
void tu_shell_quote(TuText* cmd, const char* arg);

/* Runs the shell command line `command` and reads all it writes to stdout;
 * stderr is left alone.  Returns that output (malloc'd, "" when none), or
 * NULL when the command could not be started.  `out_exit` (nullable)
 * receives the exit code, or -1 when it could not start or did not exit
 * normally (a signal). */
char* tu_shell_output(const char* command, int* out_exit);

/* Runs the program argv[0] with the arguments argv[1..] (NULL-terminated,
 * each quoted; argv[0] is looked up in PATH when it has no '/') and returns
 * its stdout (malloc'd), or NULL when it could not start or exited with
 * anything but 0: that is a failed check, and the command line is printed
 * to stderr. */
char* tu_run_program(const char* const* argv);

/* tu_run_program() of `python script args...`, the NULL-terminated `args`
 * given inline: how the tests ask a Python oracle (pylance) for the answer. */
char* tu_oracle(const char* python, const char* script, ...) __attribute__((sentinel));

#ifdef __cplusplus
}
#endif

#endif
