/* lance-index's shared part: the includes, the exit codes, the option
 * parser's type, and the helpers and commands one file of the tool uses
 * from another.  Each command lives in the file of its group:
 * lance_index.c (plan, commit, merge, help and main), lance_index_build.c
 * (train, build), lance_index_inspect.c (list, coverage, search),
 * lance_index_maintain.c (create, optimize, cleanup), lance_index_rounds.c
 * (train-start, train-worker, train-reduce). */
#ifndef LANCE_INDEX_TOOL_H
#define LANCE_INDEX_TOOL_H

#define _POSIX_C_SOURCE 200809L /* strdup, nanosleep */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cancel_signal.h"
#include "die.h"
#include "f32_arrow.h"
#include "files.h"
#include "id_list.h"
#include "json.h"
#include "lance/lance.h"
#include "measure.h"
#include "segment_params.h"
#include "storage_options.h"
#include "training_rounds.h"
#include "uuid_hex.h"

/* Exit codes (docs/lance-index.md, "Exit status", has the same table):
 *   0      success
 *   1      the tool itself ran out of memory
 *   2      bad command line, or an unreadable/unwritable local file
 *   11-19  10 + code for upstream lance-c's codes 1-9 (11 invalid argument,
 *          12 I/O, 13 not found, 14 dataset already exists, 15 index,
 *          16 internal, 17 not supported, 18 commit conflict, 19 panic)
 *   20-26  20 + (code - 1000) for this library's codes 1000-1006
 *          (20 cancelled, 21 no segments, 22 duplicate segment,
 *          23 overlapping segments, 24 stale segment, 25 model mismatch,
 *          26 incomplete segment)
 *   29     any other code (one this tool does not know) */
#define EXIT_OUT_OF_MEMORY 1
#define EXIT_USAGE 2
#define EXIT_UNKNOWN_ERROR 29

typedef struct {
    const char* name;  /* "--groups" */
    int takes_value;
    const char* value; /* set when given */
    int given;
} Opt;

/* The progress printer's state (lance_index.c, on_progress). */
typedef struct {
    int tty;
    char stage[64];
    uint64_t total;
    char unit[32];
    double started;
} Progress;

/* The vector options every command that trains or builds takes. */
#define VECTOR_OPTS                                                                              \
    {"--type", 1, NULL, 0}, {"--metric", 1, NULL, 0}, {"--partitions", 1, NULL, 0},              \
        {"--sub-vectors", 1, NULL, 0}, {"--bits", 1, NULL, 0}, {"--iterations", 1, NULL, 0},     \
        {"--sample-rate", 1, NULL, 0}

/* The --scalar names, every LanceScalarIndexType. */
#define SCALAR_NAMES "BTREE|BITMAP|LABEL_LIST|INVERTED|NGRAM|ZONEMAP|BLOOMFILTER|RTREE|MINHASHLSH"

/* -q/--quiet, and the storage options every command takes (lance_index.c). */
extern int quiet;
extern StorageOptions storage;
extern Progress progress_state;
extern atomic_int training_done;
extern double training_started;

int exit_status(LanceErrorCode code);
int usage(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
int lib_error(const char* what);
void* must(void* p);
int parse(int argc, char** argv, int first, Opt* opts, int nopts, const char** pos, int cap);
const char* opt(const Opt* opts, int nopts, const char* name);
long long number(const char* text);
int fragment_list(const char* option, const char* text, uint32_t** ids, size_t* count);
int write_output(const char* path, const uint8_t* bytes, size_t len);
int open_dataset(const char* uri, const char* version, LanceDataset** out);
LanceIndexBuildProgressCallback progress_fn(void);
const LanceIndexBuildCancelToken* cancel_on_signals(void);
void* show_elapsed(void* arg);
const char* vector_type_name(int32_t type);
int uses_pq_codebook(LanceVectorIndexType type);
int metric(const char* name, LanceMetricType* out);
int vector_params(const Opt* o, int n, LanceVectorIndexParams* p);
int prologue(int argc, char** argv, Opt* o, int no, const char** pos, int cap, const char* help, int* np);
int cmd_train(int argc, char** argv);
int scalar_options(const Opt* o, int n, const char** scalar, LanceScalarIndexType* type, const char** params_json);
int cmd_build(int argc, char** argv);
int read_segments(const char* const* paths, size_t count, const uint8_t*** ptrs, size_t** lens);
void free_segments(const uint8_t** ptrs, size_t* lens, size_t count);
int cmd_list(int argc, char** argv);
int cmd_coverage(int argc, char** argv);
int cmd_create(int argc, char** argv);
int cmd_optimize(int argc, char** argv);
int cmd_search(int argc, char** argv);
int cmd_train_start(int argc, char** argv);
int cmd_train_worker(int argc, char** argv);
int cmd_train_reduce(int argc, char** argv);
int cmd_cleanup(int argc, char** argv);

#endif
