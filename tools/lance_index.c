/* lance-index: every step of a distributed index build from a shell.
 *
 *   lance-index plan     URI --groups N
 *   lance-index train    URI --column C [--type IVF_PQ] [--partitions K] ... -o model.bin
 *   lance-index train-start  --column C [--type IVF_PQ] [--partitions K] ... [--seed S] -o request.bin
 *   lance-index train-worker URI [--fragments 0,1,5]   (lines "REQUEST STATS" on stdin)
 *   lance-index train-reduce request.bin stats.bin... -o next.bin
 *   lance-index build    URI --column C [--fragments 0,1,5] [--model model.bin] -o seg.bin
 *                        [--ivf-centroids c.f32 --partitions K [--pq-codebook p.f32 --sub-vectors M]]
 *   lance-index merge    URI seg.bin seg.bin... -o merged.bin [--version V]
 *   lance-index commit   URI --name N --column C seg.bin... [--replace] [--job-id ID]
 *   lance-index list     URI [--json]
 *   lance-index coverage URI --name N [--json]
 *   lance-index search   URI --column C --query 0.1,0.2,... [--k 10] [--nprobes N]
 *   lance-index create   URI --column C [vector options | --scalar TYPE [--params JSON]]
 *   lance-index optimize URI [--index NAME]... [--merge N] [--retrain]
 *   lance-index cleanup  URI [--older-than S] [--delete-unverified]
 *
 * Every command takes --storage-option KEY=VALUE (repeated) and reads
 * LANCE_STORAGE_OPTIONS ("k=v,k=v"): the object-store settings of s3://
 * URIs (endpoint, region, credentials, allow_http).
 *
 * Written on lance.h and the shared helpers of common/ alone.
 * `lance-index help` and `lance-index CMD --help` describe each command;
 * docs/lance-index.md is the manual, with the exit codes. */
#include "lance_index.h"

/* The exit status for a failure of the library with `code` (table above). */
int exit_status(LanceErrorCode code) {
    int c = (int)code;
    if (c >= LANCE_ERR_INVALID_ARGUMENT && c <= LANCE_ERR_PANIC) return 10 + c;
    if (c >= LANCE_ERR_CANCELLED && c <= LANCE_ERR_INCOMPLETE_SEGMENT) return 20 + (c - LANCE_ERR_CANCELLED);
    return EXIT_UNKNOWN_ERROR;
}

int quiet;

/* The storage options of every dataset the command opens. */
StorageOptions storage;

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
int lib_error(const char* what) {
    return exit_status(report_lance_error(what));
}

/* The tool's own allocations: running out of memory ends it. */
void* must(void* p) {
    if (!p) {
        fprintf(stderr, "lance-index: out of memory\n");
        exit(EXIT_OUT_OF_MEMORY);
    }
    return p;
}

/* ---- command-line options ---- */


/* Parses argv[first..] into `opts`; the rest are positional (up to `cap`).
 * Returns the number of positionals, or -1 after printing an error. */
int parse(int argc, char** argv, int first, Opt* opts, int nopts, const char** pos, int cap) {
    int n = 0;
    for (int i = first; i < argc; i++) {
        const char* a = argv[i];
        if ((a[0] == '-' && a[1] == '-') || !strcmp(a, "-o")) {
            int k = 0;
            while (k < nopts && strcmp(opts[k].name, a) != 0) k++;
            if (k == nopts) {
                usage("unknown option %s", a);
                return -1;
            }
            opts[k].given = 1;
            if (opts[k].takes_value) {
                if (i + 1 >= argc) {
                    usage("%s needs a value", a);
                    return -1;
                }
                opts[k].value = argv[++i];
            }
        } else {
            if (n >= cap) {
                usage("too many arguments");
                return -1;
            }
            pos[n++] = a;
        }
    }
    return n;
}

const char* opt(const Opt* opts, int nopts, const char* name) {
    for (int k = 0; k < nopts; k++)
        if (!strcmp(opts[k].name, name)) return opts[k].given ? (opts[k].value ? opts[k].value : "") : NULL;
    return NULL;
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

/* ---- progress on stderr ----
 * A stage's STAGE_START gives its total, its STAGE_PROGRESS events the
 * count so far; its STAGE_COMPLETE carries no count (completed = 0), so
 * the line that ends a stage says how long it took, never a count. */


static void on_progress(void* user, int32_t event, const char* stage, uint64_t total, const char* unit,
                        uint64_t completed) {
    Progress* p = user;
    if (event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START) {
        snprintf(p->stage, sizeof p->stage, "%s", stage);
        snprintf(p->unit, sizeof p->unit, "%s", unit);
        p->total = total;
        p->started = monotonic_seconds();
        if (!p->tty && total) fprintf(stderr, "%s: started (%llu %s)\n", stage, (unsigned long long)total, unit);
        else if (!p->tty) fprintf(stderr, "%s: started\n", stage);
        return;
    }
    double elapsed = monotonic_seconds() - p->started;
    if (event == LANCE_INDEX_BUILD_PROGRESS_STAGE_PROGRESS && p->tty) {
        double rate = elapsed > 0 ? completed / elapsed : 0;
        if (p->total)
            fprintf(stderr, "\r%-18s %llu/%llu %s (%.0f/s)   ", stage, (unsigned long long)completed,
                    (unsigned long long)p->total, p->unit, rate);
        else
            fprintf(stderr, "\r%-18s %llu %s (%.0f/s)   ", stage, (unsigned long long)completed, p->unit, rate);
    } else if (event == LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE) {
        fprintf(stderr, p->tty ? "\r%-18s done in %.2f s%30s\n" : "%s: done in %.2f s%s\n", stage, elapsed, "");
    }
}

Progress progress_state;

/* The progress callback, NULL with --quiet. */
LanceIndexBuildProgressCallback progress_fn(void) {
    if (quiet) return NULL;
    progress_state.tty = isatty(2);
    return on_progress;
}

/* SIGINT / SIGTERM cancel the build given the returned token (NULL, with a
 * warning, when signals cannot be watched: the build still runs). */
const LanceIndexBuildCancelToken* cancel_on_signals(void) {
    const LanceIndexBuildCancelToken* token = cancel_signal_start();
    if (!token)
        fprintf(stderr, "lance-index: warning: SIGINT and SIGTERM will not cancel this build (%s)\n",
                strerror(errno));
    return token;
}

/* ---- training has no progress events: show the time it has taken ---- */

atomic_int training_done;
double training_started;

void* show_elapsed(void* arg) {
    (void)arg;
    while (!atomic_load(&training_done)) {
        fprintf(stderr, "\rtraining the shared model: %.1f s", monotonic_seconds() - training_started);
        struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    fprintf(stderr, "\r%50s\r", "");
    return NULL;
}

/* ---- vector parameters ---- */

static const struct {
    const char* name;
    LanceVectorIndexType type;
} vector_types[] = {{"IVF_FLAT", LANCE_INDEX_IVF_FLAT},       {"IVF_SQ", LANCE_INDEX_IVF_SQ},
                    {"IVF_PQ", LANCE_INDEX_IVF_PQ},           {"IVF_HNSW_SQ", LANCE_INDEX_IVF_HNSW_SQ},
                    {"IVF_HNSW_PQ", LANCE_INDEX_IVF_HNSW_PQ}, {"IVF_HNSW_FLAT", LANCE_INDEX_IVF_HNSW_FLAT},
                    {"IVF_RQ", LANCE_INDEX_IVF_RQ}};

static int vector_type(const char* name, LanceVectorIndexType* out) {
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

/* Fills params from the VECTOR_OPTS (type IVF_PQ when --type is absent);
 * returns 0 or an exit code. */
int vector_params(const Opt* o, int n, LanceVectorIndexParams* p) {
    memset(p, 0, sizeof *p);
    const char* type = opt(o, n, "--type");
    if (vector_type(type ? type : "IVF_PQ", &p->index_type) != 0) return usage("unknown --type %s", type);
    const char* m = opt(o, n, "--metric");
    if (m && metric(m, &p->metric) != 0) return usage("unknown --metric %s (l2, cosine, dot)", m);
    const char* names[5] = {"--partitions", "--sub-vectors", "--bits", "--iterations", "--sample-rate"};
    uint32_t* fields[5] = {&p->num_partitions, &p->num_sub_vectors, &p->num_bits, &p->max_iterations,
                           &p->sample_rate};
    for (int i = 0; i < 5; i++) {
        const char* v = opt(o, n, names[i]);
        if (!v) continue;
        long long x = number(v);
        if (x < 0 || x > UINT32_MAX) return usage("%s must be a number", names[i]);
        *fields[i] = (uint32_t)x;
    }
    return 0;
}

/* Parses a command's arguments; prints its help for --help.  Returns -1 to
 * go on (with *np positionals), or the exit status to return at once. */
int prologue(int argc, char** argv, Opt* o, int no, const char** pos, int cap, const char* help, int* np) {
    *np = parse(argc, argv, 2, o, no, pos, cap);
    if (*np < 0) return EXIT_USAGE;
    if (opt(o, no, "--help")) {
        puts(help);
        return 0;
    }
    return -1;
}

/* ---- commands ---- */

static int cmd_plan(int argc, char** argv) {
    Opt o[] = {{"--groups", 1, NULL, 0}, {"--version", 1, NULL, 0}, {"--help", 0, NULL, 0}};
    const char* pos[1] = {NULL};
    int np = 0;
    int done = prologue(argc, argv, o, 3, pos, 1,
                        "lance-index plan URI --groups N [--version V]\n"
                        "  Splits the fragments into N ranges of consecutive fragments with balanced row counts\n"
                        "  (so that the segments built over them leave the table compactable) and prints them\n"
                        "  as JSON:\n"
                        "  {\"dataset_version\": V, \"groups\": [{\"fragments\": [...], \"rows\": R}, ...]}", &np);
    if (done >= 0) return done;
    long long groups = number(opt(o, 3, "--groups"));
    if (np != 1 || groups < 0) return usage("plan needs URI and --groups N");
    LanceDataset* ds = NULL;
    int rc = open_dataset(pos[0], opt(o, 3, "--version"), &ds);
    if (rc) return rc;
    LanceFragmentPlan* plan = NULL;
    if (lance_dataset_plan_fragment_groups(ds, (size_t)groups, &plan) != 0) {
        rc = lib_error("plan");
    } else {
        /* The whole document is checked before any of it is printed. */
        size_t count = lance_fragment_plan_group_count(plan);
        for (size_t g = 0; g < count && rc == 0; g++) {
            const uint32_t* ids = NULL;
            size_t n = 0;
            uint64_t rows = 0;
            if (lance_fragment_plan_group(plan, g, &ids, &n, &rows) != 0) rc = lib_error("plan group");
        }
        if (rc == 0) {
            printf("{\"dataset_version\": %llu, \"groups\": [",
                   (unsigned long long)lance_fragment_plan_dataset_version(plan));
            for (size_t g = 0; g < count; g++) {
                const uint32_t* ids = NULL;
                size_t n = 0;
                uint64_t rows = 0;
                lance_fragment_plan_group(plan, g, &ids, &n, &rows);
                printf("%s{\"fragments\": [", g ? ", " : "");
                for (size_t i = 0; i < n; i++) printf("%s%u", i ? ", " : "", ids[i]);
                printf("], \"rows\": %llu}", (unsigned long long)rows);
            }
            printf("]}\n");
        }
    }
    lance_fragment_plan_free(plan);
    lance_dataset_close(ds);
    return rc;
}

/* Reads `count` segment metadata files.  Returns 0, or the exit status
 * after printing why; free with free_segments() either way. */
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

static int cmd_commit(int argc, char** argv) {
    Opt o[] = {{"--name", 1, NULL, 0},       {"--column", 1, NULL, 0},   {"--replace", 0, NULL, 0},
               {"--job-id", 1, NULL, 0},     {"--attempt-id", 1, NULL, 0}, {"--allow-independent-models", 0, NULL, 0},
               {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char** pos = must(calloc((size_t)argc, sizeof *pos));
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, argc,
                        "lance-index commit URI --name N --column C SEGMENT... [--replace] [--job-id ID]\n"
                        "        [--attempt-id ID] [--allow-independent-models]\n"
                        "  Commits the segments as one index in one new version and prints\n"
                        "  {\"version\": V, \"already_committed\": false|true}.  A retry of a commit that\n"
                        "  happened prints the version that holds the segments.", &np);
    if (done >= 0) {
        free(pos);
        return done;
    }
    const char* name = opt(o, no, "--name");
    const char* column = opt(o, no, "--column");
    if (np < 1 || !name || !column) {
        free(pos);
        return usage("commit needs URI, --name, --column and segment files");
    }
    size_t count = (size_t)np - 1;
    const uint8_t** ptrs = NULL;
    size_t* lens = NULL;
    int rc = read_segments(pos + 1, count, &ptrs, &lens);
    LanceDataset* ds = NULL;
    if (rc == 0) rc = open_dataset(pos[0], NULL, &ds);
    if (rc == 0) {
        LanceCommitIndexOptions c;
        memset(&c, 0, sizeof c);
        c.replace = opt(o, no, "--replace") != NULL;
        c.allow_independent_models = opt(o, no, "--allow-independent-models") != NULL;
        c.job_id = opt(o, no, "--job-id");
        c.attempt_id = opt(o, no, "--attempt-id");
        LanceCommitIndexResult r;
        if (lance_dataset_commit_index_segments_with_options(ds, name, column, ptrs, lens, count, &c, &r) != 0)
            rc = lib_error("commit");
        else
            printf("{\"version\": %llu, \"already_committed\": %s}\n", (unsigned long long)r.version,
                   r.already_committed ? "true" : "false");
    }
    free_segments(ptrs, lens, count);
    free(pos);
    lance_dataset_close(ds);
    return rc;
}

static int cmd_merge(int argc, char** argv) {
    Opt o[] = {{"-o", 1, NULL, 0}, {"--version", 1, NULL, 0}, {"--quiet", 0, NULL, 0}, {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char** pos = must(calloc((size_t)argc, sizeof *pos));
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, argc,
                        "lance-index merge URI SEGMENT SEGMENT... -o MERGED [--version V] [--quiet]\n"
                        "  Merges two or more uncommitted segments (the metadata files `build` wrote)\n"
                        "  into one and writes its metadata to MERGED; nothing is committed: commit\n"
                        "  MERGED like any segment.  Vector segments must come from one shared model\n"
                        "  (their partitions are combined, not retrained); scalar segments of the\n"
                        "  types Lance merges are rebuilt.  Fewer segments make k-NN queries faster.\n"
                        "  --version V reads the segments' files at version V (default: latest).", &np);
    if (done >= 0) {
        free(pos);
        return done;
    }
    quiet |= opt(o, no, "--quiet") != NULL;
    const char* out = opt(o, no, "-o");
    if (np < 3 || !out) {
        free(pos);
        return usage("merge needs URI, at least two segment files and -o MERGED");
    }
    size_t count = (size_t)np - 1;
    const uint8_t** ptrs = NULL;
    size_t* lens = NULL;
    int rc = read_segments(pos + 1, count, &ptrs, &lens);
    LanceDataset* ds = NULL;
    if (rc == 0) rc = open_dataset(pos[0], opt(o, no, "--version"), &ds);
    uint8_t* bytes = NULL;
    size_t len = 0;
    if (rc == 0) {
        double t0 = monotonic_seconds();
        if (lance_dataset_merge_index_segments(ds, ptrs, lens, count, &bytes, &len) != 0)
            rc = lib_error("merge");
        else
            rc = write_output(out, bytes, len);
        if (rc == 0 && !quiet)
            fprintf(stderr, "%zu segments merged in %.2f s -> %s\n", count, monotonic_seconds() - t0, out);
    }
    lance_free_bytes(bytes);
    free_segments(ptrs, lens, count);
    free(pos);
    lance_dataset_close(ds);
    return rc;
}

static void help(void) {
    puts("lance-index: run the steps of a distributed Lance index build from a shell.\n"
         "\n"
         "  lance-index plan     URI --groups N                       balanced fragment ranges (JSON)\n"
         "  lance-index train    URI --column C -o MODEL [options]    the shared model\n"
         "  lance-index train-start --column C -o REQUEST [options]   the shared model, trained by\n"
         "  lance-index train-worker URI [--fragments F]              the workers together: rounds of\n"
         "  lance-index train-reduce REQUEST STATS... -o OUT          requests and statistics\n"
         "  lance-index build    URI --column C -o SEGMENT [options]  one uncommitted segment\n"
         "  lance-index merge    URI SEGMENT SEGMENT... -o MERGED     segments merged into one\n"
         "  lance-index commit   URI --name N --column C SEGMENT...   one index, one new version\n"
         "  lance-index list     URI [--json]                         the segments of every index\n"
         "  lance-index coverage URI --name N [--json]                indexed, unindexed, stale fragments\n"
         "  lance-index search   URI --column C --query V [options]   k-NN through the index\n"
         "  lance-index create   URI --column C [options]             one-shot build and commit\n"
         "  lance-index optimize URI [--index N]... [--merge N]       index new rows, merge segments\n"
         "  lance-index cleanup  URI [--older-than S]                 old versions, unreferenced files\n"
         "\n"
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
    fprintf(stderr, "lance-index: [%s %s] %s\n", LOG_LEVELS[level >= 1 && level <= 5 ? level : 0], target,
            message);
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

int main(int argc, char** argv) {
    char why[200];
    if (storage_options_from_env(&storage, why, sizeof why) != 0 ||
        storage_options_from_args(&storage, &argc, argv, why, sizeof why) != 0)
        return usage("%s", why);
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
    static const struct {
        const char* name;
        int (*run)(int, char**);
    } commands[] = {{"plan", cmd_plan},     {"train", cmd_train},       {"build", cmd_build},
                    {"merge", cmd_merge},   {"commit", cmd_commit},     {"list", cmd_list},
                    {"coverage", cmd_coverage}, {"search", cmd_search}, {"create", cmd_create},
                    {"cleanup", cmd_cleanup}, {"optimize", cmd_optimize}, {"train-start", cmd_train_start},
                    {"train-worker", cmd_train_worker}, {"train-reduce", cmd_train_reduce}};
    int rc = -1;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0] && rc < 0; i++)
        if (!strcmp(argv[1], commands[i].name)) rc = commands[i].run(argc, argv);
    if (rc < 0) rc = usage("unknown command %s", argv[1]);
    storage_options_free(&storage);
    return rc;
}
