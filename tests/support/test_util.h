/* Shared helpers for the C tests: a tiny assertion framework, Arrow arrays
 * built by hand (no Arrow library), clustered vector data, brute-force k-NN,
 * temporary directories, growing text, and other programs (Python oracles)
 * run for their output.  The helpers programs share live in common/: the
 * tu_ names of data, k-NN, scratch directories and the clock forward to
 * them (demo_data.h, temp_dir.h, measure.h), and the Arrow nodes are
 * arrow_c.h's. */
#ifndef LANCE_TEST_UTIL_H
#define LANCE_TEST_UTIL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lance/lance.h"
#include "arrow_flags.h"    /* ARROW_FLAG_NULLABLE, from common/ */
#include "demo_data.h"      /* the data, its writes and exact k-NN, from common/ */
#include "files.h"          /* read_whole_file(), from common/ */
#include "measure.h"        /* monotonic_seconds(), from common/ */
#include "segment_params.h" /* vector_segment_builder_new(), from common/ */
#include "temp_dir.h"       /* scratch directories, from common/ */
#include "uuid_hex.h"       /* UUID text, from common/ */

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
#define CHECK_ERR(call, code)                               \
    do {                                                    \
        CHECK((call) == -1);                                \
        CHECK((int)lance_last_error_code() == (int)(code)); \
    } while (0)

/* True when the message of tu_last_error() contains `needle`. */
int tu_error_mentions(const char* needle);

/* Runs `call` and reports it as the test `name`: a program whose tests
 * take what it sets up for them runs them as RUN_CALL(#test, with(test)). */
#define RUN_CALL(name, call)                                              \
    do {                                                                  \
        int before = tu_failures;                                         \
        call;                                                             \
        printf("%s %s\n", tu_failures == before ? "ok  " : "FAIL", name); \
    } while (0)

/* Runs one named test function and reports it. */
#define RUN(fn) RUN_CALL(#fn, fn())

/* Prints the summary line, frees the calling thread's kept error and
 * returns the process exit code. */
int tu_finish(const char* suite);

/* ---- data ---- */

/* common/demo_data.h's data with the tests' row ids: `rows`, `dim` and
 * `vectors` as in DemoData (row r of the dataset written from it has id r),
 * `ids[r]` the id the k-NN helpers report for row r (r itself, as made by
 * tu_make_data(); a test that copies some rows into a TuData of its own
 * sets each copy's original id, ascending with the rows), and the
 * arguments it was made with. */
typedef struct {
    int64_t rows;     /* total rows */
    int32_t dim;      /* vector dimension */
    int32_t clusters; /* number of cluster centres */
    uint64_t seed;
    float* vectors; /* rows * dim, row-major */
    int64_t* ids;   /* 0..rows-1 */
} TuData;

/* demo_data_make(): `clusters` centres in [-10,10]^dim, each row a centre
 * plus noise of scale `noise`; ids[r] = r.  Aborts when it cannot. */
TuData tu_make_data(int64_t rows, int32_t dim, int32_t clusters, float noise, uint64_t seed);
void tu_free_data(TuData* data);

/* The DemoData view of `data` (borrowing its vectors). */
static inline DemoData tu_demo_data(const TuData* data) {
    DemoData demo = {data->rows, data->dim, data->vectors};
    return demo;
}

/* The schema {id: int64 not null, vec: fixed_size_list<float32>[dim] not null,
 * tag: utf8 not null}.  Produced; release it. */
void tu_schema(int32_t dim, struct ArrowSchema* out);

/* A stream over rows [first_row, first_row + rows) of `data` in batches of
 * `batch_rows`, in tu_schema(); row i has id i and tag "t<i % 7>".  The
 * stream copies what it needs from `data`. */
void tu_stream(const TuData* data, int64_t first_row, int64_t rows, int64_t batch_rows, struct ArrowArrayStream* out);

/* demo_data_write(): rows [first, first+rows) to `uri` with `mode`,
 * `rows_per_file` rows per fragment, storage options `storage_opts`
 * (borrowed; NULL = none), for s3:// URIs.  Returns the handle at the new
 * version or NULL. */
static inline LanceDataset* tu_write_with_options(const char* uri, const TuData* data, int64_t first, int64_t rows,
                                                  int32_t mode, uint64_t rows_per_file,
                                                  const char* const* storage_opts) {
    DemoData demo = tu_demo_data(data);
    return demo_data_write(uri, &demo, first, rows, mode, rows_per_file, storage_opts);
}
static inline LanceDataset* tu_write(const char* uri, const TuData* data, int64_t first, int64_t rows, int32_t mode,
                                     uint64_t rows_per_file) {
    return tu_write_with_options(uri, data, first, rows, mode, rows_per_file, NULL);
}

/* demo_data_nearest(): exact k-NN by squared L2 over rows [0, data->rows);
 * writes data->ids of the min(k, rows) nearest rows to out_ids, nearest
 * first (ties by smaller row, so by smaller id).  Aborts when out of memory. */
void tu_brute_force_knn(const TuData* data, const float* query, int k, int64_t* out_ids);

/* demo_scan_ids(): runs a k-NN scan to its end and collects its `id`
 * column into out_ids (up to k); returns the number collected, or -1. */
static inline int tu_knn_ids(LanceScanner* scanner, int64_t* out_ids, int k) {
    return demo_scan_ids(scanner, out_ids, k);
}

/* demo_data_recall(): recall@10 of k-NN on column "vec" against brute
 * force over `queries` rows of `data` used as queries (nprobes 0 = not
 * set, Lance's adaptive default; refine 0 = none), the dataset's ids being
 * its row numbers; -1 on error.  `out_mismatches` (nullable) receives how
 * many answers differ from the exact top 10 in any position. */
static inline double tu_recall(LanceDataset* ds, const TuData* data, int queries, uint32_t nprobes, uint32_t refine,
                               int* out_mismatches) {
    DemoData demo = tu_demo_data(data);
    return demo_data_recall(ds, &demo, queries, nprobes, refine, out_mismatches);
}

/* Appends the values of the fixed-width column `name` (elem_size bytes each,
 * no nulls) of a struct array, as lance_batch_to_arrow() or a stream's
 * get_next gives it, to `out` at index *n (advanced); -1 when the column is
 * missing or `capacity` would be exceeded. */
int tu_append_column(const struct ArrowArray* array, const struct ArrowSchema* schema, const char* name, void* out,
                     size_t elem_size, int64_t capacity, int64_t* n);

/* Whether slot `i` (counted from the array's offset) of an Arrow array is
 * valid: its validity bitmap's bit, or 1 when it has none. */
int tu_arrow_valid(const struct ArrowArray* a, int64_t i);

/* Reads every batch of a scanner and returns the total number of rows, or -1. */
int64_t tu_count_scan(LanceScanner* scanner);

/* A FixedSizeList<float32>[n, dim] array over a copy of `values`; when
 * `null_row` >= 0 that row is marked null.  `element_format` is the child's
 * Arrow format ("f" for float32; others make deliberately wrong arrays). */
void tu_f32_list(const float* values, int64_t n, int32_t dim, int64_t null_row, const char* element_format,
                 struct ArrowArray* out, struct ArrowSchema* out_schema);

/* Size of a file in bytes, or -1. */
int64_t tu_file_size(const char* path);

/* Entries of a directory, "." and ".." aside; -1 if it cannot be read. */
int tu_dir_entries(const char* path);

/* Entries of a directory whose names do not begin with '.'; -1 if it
 * cannot be read. */
int tu_visible_entries(const char* path);

/* tu_dir_entries(), each entry printed as a line "    <label><name>"
 * (label NULL: none printed). */
int tu_dir_entries_print(const char* path, const char* label);

/* The regular files of the tree under `root` (links not followed): how
 * many, their bytes, and their bytes each rounded up to whole `block`s. */
typedef struct {
    int64_t files, bytes, block_bytes;
} TuTreeCount;
TuTreeCount tu_tree_count(const char* root, int64_t block);

/* Copies the directory tree `from` to `to` (which must not exist yet):
 * directories and regular files, each file's bytes checked against its
 * size.  0, or -1 on any failure or any other kind of entry. */
int tu_copy_tree(const char* from, const char* to);

/* The little-endian uint64 at p[0..8). */
uint64_t tu_get_u64_le(const uint8_t* p);

/* This process's own directory of temporary files under `base`
 * (lance-c-process-<pid>-..., made by its first lance-c call that starts
 * the library) into `out`; 0 when found, -1 otherwise. */
int tu_process_dir(const char* base, char* out, size_t cap);

/* Runs the program `self` again with `args` (NULL-terminated, at most 6,
 * after the program name) in a child process, with TMPDIR = `tmpdir` (NULL
 * = unchanged) and stderr sent to `err_path` (NULL = unchanged): the way a
 * test gives a case a process of its own.  Returns its exit status, or -1
 * when it did not exit normally. */
int tu_run_self(const char* self, const char* const* args, const char* tmpdir, const char* err_path);

/* tu_run_self() as a check: the child exits with 0 (else its status is
 * printed).  With `err_dir` (NULL: stderr unchanged) its stderr goes to
 * <err_dir>/stderr-<args[0]>.txt, and with `expect_empty_stderr` it must
 * write nothing there (else what it wrote is printed). */
void tu_check_child(const char* self, const char* const* args, const char* tmpdir, const char* err_dir,
                    int expect_empty_stderr);

/* A count of signals another thread waits for (a completion callback's
 * calls, a waker's wakes).  Init before use, destroy after. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int count; /* signals so far (read it after a wait) */
} TuLatch;
void tu_latch_init(TuLatch* latch);
void tu_latch_destroy(TuLatch* latch);

/* One more signal; wakes every waiter. */
void tu_latch_signal(TuLatch* latch);

/* Waits until `count` signals have come, or `seconds` have passed (0: no
 * limit).  Returns the signals so far. */
int tu_latch_wait(TuLatch* latch, int count, int seconds);

/* temp_dir_create() and remove_tree(): a fresh temporary directory
 * (malloc'd path, NULL when it cannot be made) and recursive removal. */
static inline char* tu_temp_dir(const char* tag) { return temp_dir_create(tag); }
static inline void tu_remove_tree(const char* path) { (void)remove_tree(path); }

/* A deterministic version-4 UUID: seeds that differ modulo 256 give
 * different UUIDs. */
void tu_uuid(int seed, uint8_t out[16]);

/* The builder tu_vector_segment() executes, unexecuted (so options can be
 * set first): column "vec", `fragment_ids`, UUID from `uuid_seed` written
 * to `uuid`, `model` set when not NULL.  NULL with the library's error
 * pending. */
LanceIndexSegmentBuilder* tu_vector_segment_builder(const LanceDataset* ds, const LanceVectorIndexParams* p,
                                                    const LanceVectorModel* model, const uint32_t* fragment_ids,
                                                    size_t n, int uuid_seed, uint8_t uuid[16]);

/* One uncommitted vector segment on column "vec" over `fragment_ids`, UUID from
 * `uuid_seed` (tu_uuid), built by vector_segment_builder_new(): with
 * `model` set on the builder (it never trains), or trained locally when
 * `model` is NULL.  Returns the metadata bytes (free with
 * lance_free_bytes) or NULL with the library's error pending. */
uint8_t* tu_vector_segment(LanceDataset* ds, const LanceVectorIndexParams* p, const LanceVectorModel* model,
                           const uint32_t* fragment_ids, size_t n, int uuid_seed, size_t* len);

/* monotonic_seconds(): seconds on a monotonic clock. */
static inline double tu_now(void) { return monotonic_seconds(); }

/* ---- progress events ---- */

/* One progress event as a LanceIndexBuildProgressCallback received it, its
 * strings copied (cut to fit; "(null)" for NULL). */
typedef struct {
    int32_t event;
    char stage[64];
    uint64_t total;
    char unit[32];
    uint64_t completed;
} TuProgressEvent;

/* Fills *out with a callback's arguments. */
void tu_progress_event_set(TuProgressEvent* out, int32_t event, const char* stage, uint64_t total, const char* unit,
                           uint64_t completed);

/* Checks the `count` events of one build against lance.h's contract
 * ("Build progress and cancellation"), upstream's too: one stage at a time,
 * each a STAGE_START (completed 0), STAGE_PROGRESS events of that stage
 * (total 0, unit "", completed never decreasing) and its STAGE_COMPLETE
 * (total 0, unit "", completed 0: the count is the last PROGRESS's); at
 * least one stage.  `finished`: the build succeeded, so its last stage
 * completed.  Returns the number of STAGE_PROGRESS events. */
int tu_check_progress_events(const TuProgressEvent* events, int count, int finished);

/* ---- a test program's dataset ---- */

/* The dataset a test program works on: `data` (taken over) written to a
 * fresh temporary directory as <tag>.lance, `rows_per_fragment` rows per
 * fragment.  `ds` is the handle at version 1, NULL (a failed check) when
 * the write failed. */
typedef struct {
    TuData data;
    char* dir;
    char uri[600];
    LanceDataset* ds;
} TuFixture;
void tu_fixture_begin(TuFixture* f, const char* tag, TuData data, uint64_t rows_per_fragment);

/* Closes the handle, removes the directory and frees the data; returns
 * tu_finish(suite). */
int tu_fixture_end(TuFixture* f, const char* suite);

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

/* The arguments of a test that asks a Python oracle: `<python with
 * pylance> <oracle script>` into *python and *script.  With any other
 * count it prints a usage line naming `script_name` and returns -1 (the
 * test then exits with 2: it never skips); else 0. */
int tu_oracle_args(int argc, char** argv, const char* script_name, const char** python, const char** script);

/* tu_run_program() of `python script args...`, the NULL-terminated `args`
 * given inline: how the tests ask a Python oracle (pylance) for the answer. */
char* tu_oracle(const char* python, const char* script, ...) __attribute__((sentinel));

#ifdef __cplusplus
}
#endif

#endif
