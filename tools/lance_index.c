/* lance-index: every step of a distributed index build from a shell.
 *
 * The commands are the rows of the table `commands` below, each row
 * written beside its handler in the file of its group (lance_index.h
 * declares the rows and names each file's commands).  main parses a
 * command's options by its row and calls its handler; `lance-index help`
 * prints every row's synopsis and `lance-index COMMAND --help` the row's
 * usage, so no usage list is kept anywhere else in the code.
 * scripts/check_tool.sh (ctest's test_tool_commands) checks that the
 * table, lance_index.h and docs/lance-index.md (the manual, with the exit
 * codes) hold every command the files define, and nothing else.
 *
 * Every command takes --storage-option KEY=VALUE (repeated) and reads
 * LANCE_STORAGE_OPTIONS ("k=v,k=v"): the object-store settings of s3://
 * URIs (endpoint, region, credentials, allow_http).
 *
 * Written on lance.h and the shared helpers of common/ alone. */
#include "lance_index.h"

#include <ctype.h>

/* The commands, in the order `lance-index help` lists them: the one list. */
static const Command* const commands[] = {&plan_command,         &train_command,
                                          &train_start_command,  &train_worker_command,
                                          &train_reduce_command, &train_coordinator_command,
                                          &build_command,        &merge_command,
                                          &commit_command,       &list_command,
                                          &coverage_command,     &search_command,
                                          &create_command,       &optimize_command,
                                          &cleanup_command,      &plan_maintenance_command,
                                          &maintain_command};

/* The exit status for a failure of the library with `code` (table above). */
int exit_status(LanceErrorCode code) {
    int c = (int)code;
    if (c >= LANCE_ERR_INVALID_ARGUMENT && c <= LANCE_ERR_PANIC) return 10 + c;
    if (c >= LANCE_ERR_CANCELLED && c <= LANCE_ERR_INCOMPLETE_SEGMENT) return 20 + (c - LANCE_ERR_CANCELLED);
    return EXIT_UNKNOWN_ERROR;
}

int quiet;

/* The storage options of every dataset a command opens. */
static StorageOptions storage;

int usage(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "lance-index: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see lance-index help)\n");
    va_end(ap);
    return EXIT_USAGE;
}

/* Reports the library's last error and returns its exit code. */
int lib_error(const char* what) { return exit_status(report_lance_error(what)); }

/* The tool's own allocations: running out of memory ends it. */
void* must(void* p) {
    if (!p) {
        fprintf(stderr, "lance-index: out of memory\n");
        exit(EXIT_OUT_OF_MEMORY);
    }
    return p;
}

/* ---- command-line options ---- */

/* The index of option `name` in `c`'s table; -1 when it takes none such. */
static int option_index(const Command* c, const char* name) {
    for (int k = 0; k < MAX_OPTIONS && c->options[k].name; k++)
        if (!strcmp(c->options[k].name, name)) return k;
    return -1;
}

/* Parses argv[2..] into `a` by `c`'s options: a word starting with "--",
 * and -o, is an option; the rest are positional.  An option given twice
 * keeps its last value.  Returns 0, or EXIT_USAGE after saying why. */
static int parse_args(const Command* c, int argc, char** argv, Args* a, int* help_given) {
    memset(a, 0, sizeof *a);
    a->command = c;
    a->argc = argc;
    a->argv = argv;
    a->pos = must(calloc((size_t)argc, sizeof *a->pos));
    for (int i = 2; i < argc; i++) {
        const char* word = argv[i];
        if ((word[0] != '-' || word[1] != '-') && strcmp(word, "-o") != 0) {
            if (a->npos >= c->max_positional) return usage("too many arguments");
            a->pos[a->npos++] = word;
            continue;
        }
        if (!strcmp(word, "--help")) {
            *help_given = 1;
            continue;
        }
        int k = option_index(c, word);
        if (k < 0) return usage("unknown option %s", word);
        if (!c->options[k].takes_value) {
            a->values[k] = "";
        } else if (i + 1 >= argc) {
            return usage("%s needs a value", word);
        } else {
            a->values[k] = argv[++i];
        }
    }
    return 0;
}

/* The value of option `name`: "" for a flag given, NULL when not given. */
const char* arg(const Args* a, const char* name) {
    int k = option_index(a->command, name);
    return k < 0 ? NULL : a->values[k];
}

/* Every value of option `name` in the order given (arg() has the last
 * one): the command line walked again as parse_args() walks it.  Returns
 * their count; `out` holds room for a->argc of them. */
size_t arg_values(const Args* a, const char* name, const char** out) {
    size_t n = 0;
    for (int i = 2; i < a->argc; i++) {
        int k = option_index(a->command, a->argv[i]);
        if (k < 0 || !a->command->options[k].takes_value || i + 1 >= a->argc) continue;
        if (!strcmp(a->argv[i], name)) out[n++] = a->argv[i + 1];
        i++;
    }
    return n;
}

/* A non-negative integer option; -1 when the text is not one. */
long long number(const char* text) {
    uint64_t v = 0;
    return decimal_parse(text, INT64_MAX, &v) == 0 ? (long long)v : -1;
}

/* A fragment-list option (see common/id_list.h).  Ids given twice are left
 * to the library, whose message names the fragment (exit 11).  Returns 0,
 * or the exit status after saying what is wrong. */
int fragment_list(const char* option, const char* text, uint32_t** ids, size_t* count) {
    char why[160];
    if (id_list_parse(text, 0, ids, count, why, sizeof why) != 0)
        return usage("%s: %s (expected fragment ids like 0,1,5)", option, why);
    return 0;
}

/* ---- files and datasets ---- */

int write_output(const char* path, const uint8_t* bytes, size_t len) {
    if (write_whole_file(path, bytes, len) == 0) return 0;
    fprintf(stderr, "lance-index: cannot write %s: %s\n", path, strerror(errno));
    return EXIT_USAGE;
}

/* Opens URI at --version V (0 or absent = latest).  Returns 0, or the exit
 * status after printing why. */
int open_dataset(const char* uri, const char* version, LanceDataset** out) {
    long long v = version ? number(version) : 0;
    if (v < 0) return usage("--version must be a number");
    *out = lance_dataset_open(uri, storage_options_array(&storage), (uint64_t)v);
    return *out ? 0 : lib_error("open");
}

/* Reads `count` files (segment metadata, training statistics).  Returns 0,
 * or the exit status after printing why; free with free_segments() either
 * way. */
int read_segments(const char* const* paths, size_t count, const uint8_t*** ptrs, size_t** lens) {
    *ptrs = must(calloc(count + 1, sizeof **ptrs));
    *lens = must(calloc(count + 1, sizeof **lens));
    for (size_t i = 0; i < count; i++) {
        (*ptrs)[i] = read_whole_file(paths[i], &(*lens)[i]);
        if (!(*ptrs)[i]) return usage("cannot read %s: %s", paths[i], strerror(errno));
    }
    return 0;
}

void free_segments(const uint8_t** ptrs, size_t* lens, size_t count) {
    for (size_t i = 0; ptrs && i < count; i++) free((void*)ptrs[i]);
    free(ptrs);
    free(lens);
}

/* ---- progress and cancel ---- */

static ProgressPrint progress;

/* A build's control: progress on stderr (none with --quiet), and SIGINT or
 * SIGTERM as its cancel (no token, with a warning, when signals cannot be
 * watched: the build still runs; cancel_signal_stop() after the build). */
LanceIndexBuildControl build_control(void) {
    LanceIndexBuildControl control = {NULL, &progress, cancel_signal_start()};
    if (!control.cancel_token)
        fprintf(stderr, "lance-index: warning: SIGINT and SIGTERM will not cancel this build (%s)\n", strerror(errno));
    if (!quiet) {
        progress_print_init(&progress, NULL, isatty(2));
        control.progress = progress_print_event;
    }
    return control;
}

/* ---- index parameters ---- */

static const struct {
    const char* name;
    LanceVectorIndexType type;
} vector_types[] = {{"IVF_FLAT", LANCE_INDEX_IVF_FLAT},
                    {"IVF_SQ", LANCE_INDEX_IVF_SQ},
                    {"IVF_PQ", LANCE_INDEX_IVF_PQ},
                    {"IVF_HNSW_SQ", LANCE_INDEX_IVF_HNSW_SQ},
                    {"IVF_HNSW_PQ", LANCE_INDEX_IVF_HNSW_PQ},
                    {"IVF_HNSW_FLAT", LANCE_INDEX_IVF_HNSW_FLAT},
                    {"IVF_RQ", LANCE_INDEX_IVF_RQ}};

int vector_type(const char* name, LanceVectorIndexType* out) {
    for (size_t i = 0; i < sizeof vector_types / sizeof vector_types[0]; i++)
        if (!strcmp(vector_types[i].name, name)) {
            *out = vector_types[i].type;
            return 0;
        }
    return -1;
}

const char* vector_type_name(int32_t type) {
    for (size_t i = 0; i < sizeof vector_types / sizeof vector_types[0]; i++)
        if (vector_types[i].type == (LanceVectorIndexType)type) return vector_types[i].name;
    return "an unknown type";
}

/* The types whose segments use the model's PQ codebook. */
int uses_pq_codebook(LanceVectorIndexType type) {
    return type == LANCE_INDEX_IVF_PQ || type == LANCE_INDEX_IVF_HNSW_PQ;
}

int metric(const char* name, LanceMetricType* out) {
    if (!strcmp(name, "l2")) *out = LANCE_METRIC_L2;
    else if (!strcmp(name, "cosine")) *out = LANCE_METRIC_COSINE;
    else if (!strcmp(name, "dot")) *out = LANCE_METRIC_DOT;
    else return -1;
    return 0;
}

/* Sets fields[i] from option names[i] where given (a number up to
 * UINT32_MAX); *given counts those given.  Returns 0 or an exit code. */
static int number_options(const Args* a, const char* const* names, uint32_t* const* fields, size_t n, int* given) {
    for (size_t i = 0; i < n; i++) {
        const char* v = arg(a, names[i]);
        if (!v) continue;
        long long x = number(v);
        if (x < 0 || x > UINT32_MAX) return usage("%s must be a number", names[i]);
        *fields[i] = (uint32_t)x;
        ++*given;
    }
    return 0;
}

/* Fills params from the VECTOR_OPTIONS (type IVF_PQ when --type is
 * absent); returns 0 or an exit code. */
int vector_params(const Args* a, LanceVectorIndexParams* p) {
    memset(p, 0, sizeof *p);
    const char* type = arg(a, "--type");
    if (vector_type(type ? type : "IVF_PQ", &p->index_type) != 0) return usage("unknown --type %s", type);
    const char* m = arg(a, "--metric");
    if (m && metric(m, &p->metric) != 0) return usage("unknown --metric %s (l2, cosine, dot)", m);
    static const char* const names[] = {"--partitions", "--sub-vectors", "--bits", "--iterations", "--sample-rate"};
    uint32_t* const fields[] = {&p->num_partitions, &p->num_sub_vectors, &p->num_bits, &p->max_iterations,
                                &p->sample_rate};
    int given = 0;
    return number_options(a, names, fields, sizeof fields / sizeof fields[0], &given);
}

/* Fills o from the TRAINING_OPTIONS; *given says whether any was given.
 * Returns 0 or an exit code. */
int training_options(const Args* a, LanceVectorTrainingOptions* o, int* given) {
    memset(o, 0, sizeof *o);
    *given = 0;
    static const char* const names[] = {"--target-partition-size", "--streaming-sample-rate",
                                        "--streaming-coreset-rate", "--streaming-refine-passes"};
    uint32_t* const fields[] = {&o->target_partition_size, &o->streaming_sample_rate, &o->streaming_coreset_rate,
                                &o->streaming_refine_passes};
    int rc = number_options(a, names, fields, sizeof fields / sizeof fields[0], given);
    if (rc) return rc;
    const char* seed = arg(a, "--seed");
    if (seed) {
        if (decimal_parse(seed, UINT64_MAX, &o->seed) != 0) return usage("--seed must be a number");
        o->use_seed = 1;
        *given = 1;
    }
    return 0;
}

static const struct {
    const char* name;
    LanceScalarIndexType type;
} scalar_types[] = {{"BTREE", LANCE_SCALAR_BTREE},
                    {"BITMAP", LANCE_SCALAR_BITMAP},
                    {"LABEL_LIST", LANCE_SCALAR_LABEL_LIST},
                    {"INVERTED", LANCE_SCALAR_INVERTED},
                    {"NGRAM", LANCE_SCALAR_NGRAM},
                    {"ZONEMAP", LANCE_SCALAR_ZONEMAP},
                    {"BLOOMFILTER", LANCE_SCALAR_BLOOMFILTER},
                    {"RTREE", LANCE_SCALAR_RTREE},
                    {"MINHASHLSH", LANCE_SCALAR_MINHASHLSH}};

int scalar_type(const char* name, LanceScalarIndexType* out) {
    for (size_t i = 0; i < sizeof scalar_types / sizeof scalar_types[0]; i++)
        if (!strcmp(scalar_types[i].name, name)) {
            *out = scalar_types[i].type;
            return 0;
        }
    return -1;
}

/* The scalar type of a segment as the library's listings name it ("BTree",
 * "LabelList", "MinHashLsh": the core's names), which are the --scalar
 * names in another case, without the underscores.  Returns 0 or -1. */
int scalar_type_listed(const char* listed, LanceScalarIndexType* out) {
    for (size_t i = 0; i < sizeof scalar_types / sizeof scalar_types[0]; i++) {
        const char* a = scalar_types[i].name;
        const char* b = listed;
        for (;; a++, b++) {
            if (*a == '_') a++;
            if (toupper((unsigned char)*b) != *a || !*a) break;
        }
        if (!*a && !*b) {
            *out = scalar_types[i].type;
            return 0;
        }
    }
    return -1;
}

/* Reads --scalar and --params: *scalar NULL for a vector index.  A vector
 * option with --scalar, or --params without it, is a usage error.  Returns 0
 * or an exit code. */
int scalar_options(const Args* a, const char** scalar, LanceScalarIndexType* type, const char** params_json) {
    static const char* const vector_only[] = {"--type",
                                              "--metric",
                                              "--partitions",
                                              "--sub-vectors",
                                              "--bits",
                                              "--iterations",
                                              "--sample-rate",
                                              "--target-partition-size",
                                              "--streaming-sample-rate",
                                              "--streaming-coreset-rate",
                                              "--streaming-refine-passes",
                                              "--seed"};
    *scalar = arg(a, "--scalar");
    *params_json = arg(a, "--params");
    *type = LANCE_SCALAR_BTREE;
    if (!*scalar) return *params_json ? usage("--params is for scalar indices: give --scalar TYPE") : 0;
    if (scalar_type(*scalar, type) != 0) return usage("unknown --scalar %s (" SCALAR_NAMES ")", *scalar);
    for (size_t i = 0; i < sizeof vector_only / sizeof vector_only[0]; i++)
        if (arg(a, vector_only[i]))
            return usage("%s is for vector indices, not with --scalar %s", vector_only[i], *scalar);
    return 0;
}

/* ---- help, logging, main ---- */

/* The first command whose option table holds more than MAX_OPTIONS
 * options (Args has room for that many values; OPTIONS_FIT is the build's
 * check of each table), or NULL. */
static const Command* command_over_max_options(void) {
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        int n = 0;
        while (commands[i]->options[n].name) n++;
        if (n > MAX_OPTIONS) return commands[i];
    }
    return NULL;
}

static void help(void) {
    puts("lance-index: run the steps of a distributed Lance index build from a shell.\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        /* The summaries start at column 60 (one space at least). */
        int width = printf("  lance-index %-8s %s", commands[i]->name, commands[i]->synopsis);
        printf("%*s%s\n", width < 59 ? 60 - width : 1, "", commands[i]->summary);
    }
    puts("\n"
         "Object storage: every command takes --storage-option KEY=VALUE (repeated) and reads\n"
         "LANCE_STORAGE_OPTIONS=\"KEY=VALUE,KEY=VALUE\" (the command line's win), for example\n"
         "  lance-index list s3://bucket/vectors.lance --storage-option aws_endpoint=http://host:8333 \\\n"
         "      --storage-option aws_region=us-east-1 --storage-option allow_http=true \\\n"
         "      --storage-option aws_access_key_id=KEY --storage-option aws_secret_access_key=SECRET\n"
         "(docs/object-storage.md lists each object store's options.)\n"
         "LANCE_LOG=error|warn|info|debug|trace prints the Lance core's log records of that level\n"
         "and above on stderr (default: none).\n"
         "\n"
         "`lance-index COMMAND --help` describes a command.  --quiet silences progress (build).\n"
         "Exit status: 0 success; 1 out of memory; 2 bad command line or unreadable/unwritable\n"
         "file; for an error of the library, 10 + its code for codes 1-9 (11 invalid argument,\n"
         "12 I/O, 13 not found, 14 dataset already exists, 15 index, 16 internal, 17 not\n"
         "supported, 18 commit conflict (retry), 19 panic) and 20 + (code - 1000) for codes\n"
         "1000-1006 (20 cancelled, 21 no segments, 22 duplicate segment, 23 overlapping\n"
         "segments, 24 stale segment, 25 model mismatch, 26 incomplete segment); 29 any other\n"
         "code.  The library's message is on stderr.");
}

static const char* const LOG_LEVELS[] = {"off", "error", "warn", "info", "debug", "trace"};

/* One record of the core on stderr, one line (lance.h, "Logging"). */
static void log_to_stderr(void* ctx, int32_t level, const char* target, const char* message) {
    (void)ctx;
    fprintf(stderr, "lance-index: [%s %s] %s\n", LOG_LEVELS[level >= 1 && level <= 5 ? level : 0], target, message);
}

/* LANCE_LOG=<level>: the core's records of that level and above on stderr. */
static int log_from_env(void) {
    const char* level = getenv("LANCE_LOG");
    if (!level || !*level) return 0;
    for (int32_t i = 0; i < 6; i++)
        if (!strcmp(level, LOG_LEVELS[i]))
            return lance_set_log_callback(i, i ? log_to_stderr : NULL, NULL) == 0 ? 0 : lib_error("LANCE_LOG");
    return usage("LANCE_LOG=%s: expected off, error, warn, info, debug or trace", level);
}

/* Runs command `c` on argv[2..]: its --help, or its handler. */
static int run(const Command* c, int argc, char** argv) {
    Args a;
    int help_given = 0;
    int rc = parse_args(c, argc, argv, &a, &help_given);
    if (rc == 0 && help_given) {
        puts(c->usage);
    } else if (rc == 0) {
        quiet = arg(&a, "--quiet") != NULL;
        rc = c->run(&a);
    }
    free(a.pos);
    return rc;
}

int main(int argc, char** argv) {
    const Command* over = command_over_max_options();
    if (over) {
        fprintf(stderr,
                "lance-index: internal error: the command %s takes more options than MAX_OPTIONS (%d); "
                "raise it in tools/lance_index.h\n",
                over->name, (int)MAX_OPTIONS);
        abort();
    }
    char why[200];
    if (storage_options_from_command_line(&storage, &argc, argv, why, sizeof why) != 0) return usage("%s", why);
    int log_rc = log_from_env();
    if (log_rc != 0) return log_rc;
    if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        help();
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("lance-index (lance-c %s, Lance core %s)\n", lance_version(), LANCE_CORE_VERSION_STRING);
        return 0;
    }
    const Command* c = NULL;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0] && !c; i++)
        if (!strcmp(argv[1], commands[i]->name)) c = commands[i];
    int rc = c ? run(c, argc, argv) : usage("unknown command %s", argv[1]);
    storage_options_free(&storage);
    return rc;
}
