/* lance-index's shared part: the command table's types, the exit codes and
 * the helpers the command files share.  lance_index.c holds main, the table
 * and these helpers; each command lives in the file of its group:
 * lance_index_coordinate.c (plan, merge, commit), lance_index_build.c
 * (train, build), lance_index_inspect.c (list, coverage, search),
 * lance_index_maintain.c (create, optimize, cleanup, plan-maintenance,
 * maintain) and lance_index_rounds.c (train-start, train-worker,
 * train-reduce, train-coordinator).  scripts/check_tool.sh (ctest's
 * test_tool_commands) holds this list, the table and docs/lance-index.md
 * to the commands the files define. */
#ifndef LANCE_INDEX_TOOL_H
#define LANCE_INDEX_TOOL_H

#define _POSIX_C_SOURCE 200809L /* strdup, nanosleep */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cancel_signal.h"
#include "die.h"
#include "f32_arrow.h"
#include "files.h"
#include "id_list.h"
#include "json.h"
#include "lance/lance.h"
#include "measure.h"
#include "progress_print.h"
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

/* One option a command takes: "--groups", and whether a value follows. */
typedef struct {
    const char* name;
    int takes_value;
} Option;

/* The most options one command may take (--help aside): Args keeps one
 * value per option of the command's table.  build takes the most, its own
 * beside VECTOR_OPTIONS and TRAINING_OPTIONS (scripts/check_tool.sh counts
 * every table and prints the largest); the rest is headroom.  OPTIONS_FIT(table), written
 * after each command's option table, fails the build when the table
 * outgrows MAX_OPTIONS, and main stops with a message naming the command
 * should a table lack that check. */
enum { MAX_OPTIONS = 32 };
#define OPTIONS_FIT(table)                                                \
    _Static_assert(sizeof(table) / sizeof((table)[0]) - 1 <= MAX_OPTIONS, \
                   #table " has more options than MAX_OPTIONS (tools/lance_index.h): raise it")

typedef struct Command Command;

/* A command's arguments as main parsed them for its handler. */
typedef struct {
    const Command* command;
    int argc; /* the whole command line, for an option given more than once */
    char** argv;
    const char* values[MAX_OPTIONS]; /* per command->options entry: its value ("" for a
                                        flag), NULL when not given */
    const char** pos;                /* the positional arguments */
    int npos;
} Args;

/* One row of the command table (lance_index.c), written beside its handler. */
struct Command {
    const char* name;             /* "plan" */
    int (*run)(const Args* args); /* returns the exit status */
    const char* synopsis;         /* its row in `lance-index help`: the arguments, */
    const char* summary;          /* and what it does */
    const char* usage;            /* `lance-index NAME --help` */
    const Option* options;        /* besides --help; ends with {NULL, 0} */
    int max_positional;           /* more positional arguments are a usage error */
};

extern const Command plan_command, merge_command, commit_command, train_command, build_command, list_command,
    coverage_command, search_command, create_command, optimize_command, cleanup_command, plan_maintenance_command,
    maintain_command, train_start_command, train_worker_command, train_reduce_command, train_coordinator_command;

/* The vector options every command that trains or builds takes. */
#define VECTOR_OPTIONS                                                                                               \
    {"--type", 1}, {"--metric", 1}, {"--partitions", 1}, {"--sub-vectors", 1}, {"--bits", 1}, {"--iterations", 1}, { \
        "--sample-rate", 1                                                                                           \
    }

/* The core's training options (LanceVectorTrainingOptions) train, create and
 * build take. */
#define TRAINING_OPTIONS                                                                             \
    {"--target-partition-size", 1}, {"--streaming-sample-rate", 1}, {"--streaming-coreset-rate", 1}, \
        {"--streaming-refine-passes", 1}, {                                                          \
        "--seed", 1                                                                                  \
    }

/* The --scalar names, every LanceScalarIndexType. */
#define SCALAR_NAMES "BTREE|BITMAP|LABEL_LIST|INVERTED|NGRAM|ZONEMAP|BLOOMFILTER|RTREE|MINHASHLSH"

/* --quiet: no progress, no timings on stderr. */
extern int quiet;

int exit_status(LanceErrorCode code);
int usage(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
int lib_error(const char* what);
void* must(void* p);
const char* arg(const Args* a, const char* name);
size_t arg_values(const Args* a, const char* name, const char** out);
long long number(const char* text);
int fragment_list(const char* option, const char* text, uint32_t** ids, size_t* count);
int write_output(const char* path, const uint8_t* bytes, size_t len);
int open_dataset(const char* uri, const char* version, LanceDataset** out);
int read_segments(const char* const* paths, size_t count, const uint8_t*** ptrs, size_t** lens);
void free_segments(const uint8_t** ptrs, size_t* lens, size_t count);
LanceIndexBuildControl build_control(void);
int vector_type(const char* name, LanceVectorIndexType* out);
const char* vector_type_name(int32_t type);
int uses_pq_codebook(LanceVectorIndexType type);
int metric(const char* name, LanceMetricType* out);
int vector_params(const Args* a, LanceVectorIndexParams* p);
int training_options(const Args* a, LanceVectorTrainingOptions* o, int* given);
int scalar_type(const char* name, LanceScalarIndexType* out);
int scalar_type_listed(const char* listed, LanceScalarIndexType* out);
int scalar_options(const Args* a, const char** scalar, LanceScalarIndexType* type, const char** params_json);
int build_model(const char* path, const char* type_given, int metric_given, LanceVectorIndexParams* p,
                LanceVectorModel** out);
int model_settings(const LanceVectorModel* model, const char* path, const char* type_given, int metric_given,
                   LanceVectorIndexParams* p);

#endif
