/* lance-index: every step of a distributed index build from a shell.
 *
 *   lance-index plan   URI --groups N
 *   lance-index train  URI --column C [--type IVF_PQ] [--partitions K] ... -o model.bin
 *   lance-index build  URI --column C [--fragments 0,1,5] [--model model.bin] -o seg.bin
 *   lance-index commit URI --name N --column C seg.bin... [--replace] [--job-id ID]
 *   lance-index list   URI [--json]
 *   lance-index search URI --column C --query 0.1,0.2,... [--k 10] [--nprobes N]
 *
 * Written on lance.h alone.  `lance-index help` and `lance-index CMD --help`
 * describe each command; README.md has the exit codes. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "read_whole_file.h"
#include "lance/lance.h"

/* Exit codes: 0 success; 2 bad command line or unreadable/unwritable local
 * file; 10 + LanceErrorCode for an error of the library (11 invalid
 * argument, 13 not found, 18 commit conflict, 19 cancelled, ...). */
#define EXIT_USAGE 2
#define EXIT_LIBRARY_BASE 10

static int quiet;

static int usage(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "lance-index: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see lance-index help)\n");
    va_end(ap);
    return EXIT_USAGE;
}

/* Reports the library's last error and returns its exit code. */
static int lib_error(const char* what) {
    LanceErrorCode code = lance_last_error_code();
    const char* msg = lance_last_error_message();
    fprintf(stderr, "lance-index: %s failed (error %d): %s\n", what, (int)code, msg ? msg : "(no message)");
    lance_free_string(msg);
    return EXIT_LIBRARY_BASE + (int)code;
}

/* ---- command-line options ---- */

typedef struct {
    const char* name;  /* "--groups" */
    int takes_value;
    const char* value; /* set when given */
    int given;
} Opt;

/* Parses argv[first..] into `opts`; the rest are positional (up to `cap`).
 * Returns the number of positionals, or -1 after printing an error. */
static int parse(int argc, char** argv, int first, Opt* opts, int nopts, const char** pos, int cap) {
    int n = 0;
    for (int i = first; i < argc; i++) {
        const char* a = argv[i];
        if (a[0] == '-' && a[1] == '-') {
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
        } else if (!strcmp(a, "-o")) {
            int k = 0;
            while (k < nopts && strcmp(opts[k].name, "-o") != 0) k++;
            if (k == nopts || i + 1 >= argc) {
                usage("-o is not an option here, or has no value");
                return -1;
            }
            opts[k].given = 1;
            opts[k].value = argv[++i];
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

static const char* opt(const Opt* opts, int nopts, const char* name) {
    for (int k = 0; k < nopts; k++)
        if (!strcmp(opts[k].name, name)) return opts[k].given ? (opts[k].value ? opts[k].value : "") : NULL;
    return NULL;
}

/* A non-negative integer option; -1 when the text is not one. */
static long long number(const char* text) {
    if (!text || !*text) return -1;
    char* end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    return (*end || errno || v < 0) ? -1 : v;
}

/* "0,1,5" -> ids; returns the count, or -1. */
static long parse_ids(const char* text, uint32_t** out) {
    size_t cap = 16, n = 0;
    uint32_t* ids = malloc(cap * sizeof *ids);
    const char* p = text;
    while (*p) {
        char* end = NULL;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || v > UINT32_MAX) {
            free(ids);
            return -1;
        }
        if (n == cap) ids = realloc(ids, (cap *= 2) * sizeof *ids);
        ids[n++] = (uint32_t)v;
        p = end;
        if (*p == ',') p++;
        else if (*p) {
            free(ids);
            return -1;
        }
    }
    *out = ids;
    return (long)n;
}

/* Writes atomically: a temporary file renamed into place. */
static int write_file(const char* path, const uint8_t* bytes, size_t len) {
    size_t n = strlen(path) + 8;
    char* tmp = malloc(n);
    snprintf(tmp, n, "%s.tmp", path);
    FILE* f = fopen(tmp, "wb");
    int ok = f && fwrite(bytes, 1, len, f) == len;
    if (f && fclose(f) != 0) ok = 0;
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok) {
        fprintf(stderr, "lance-index: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return ok ? 0 : EXIT_USAGE;
}

static LanceDataset* open_dataset(const char* uri, const char* version) {
    long long v = version ? number(version) : 0;
    if (v < 0) {
        usage("--version must be a number");
        return NULL;
    }
    return lance_dataset_open(uri, NULL, (uint64_t)v);
}

/* ---- progress on stderr ---- */

typedef struct {
    int tty;
    char stage[64];
    uint64_t total;
    char unit[32];
    double started;
} Progress;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void on_progress(void* user, int32_t event, const char* stage, uint64_t total, const char* unit,
                        uint64_t completed) {
    Progress* p = user;
    if (event == LANCE_PROGRESS_STAGE_START) {
        snprintf(p->stage, sizeof p->stage, "%s", stage);
        snprintf(p->unit, sizeof p->unit, "%s", unit);
        p->total = total;
        p->started = now();
        if (!p->tty && total) fprintf(stderr, "%s: started (%llu %s)\n", stage, (unsigned long long)total, unit);
        else if (!p->tty) fprintf(stderr, "%s: started\n", stage);
        return;
    }
    double elapsed = now() - p->started;
    if (event == LANCE_PROGRESS_STAGE_PROGRESS && p->tty) {
        double rate = elapsed > 0 ? completed / elapsed : 0;
        if (p->total)
            fprintf(stderr, "\r%-18s %llu/%llu %s (%.0f/s)   ", stage, (unsigned long long)completed,
                    (unsigned long long)p->total, p->unit, rate);
        else
            fprintf(stderr, "\r%-18s %llu %s (%.0f/s)   ", stage, (unsigned long long)completed, p->unit, rate);
    } else if (event == LANCE_PROGRESS_STAGE_COMPLETE) {
        fprintf(stderr, p->tty ? "\r%-18s done in %.2f s%30s\n" : "%s: done in %.2f s%s\n", stage, elapsed, "");
    }
}

static Progress progress_state;

static LanceIndexBuildProgressFn progress_fn(void) {
    if (quiet) return NULL;
    progress_state.tty = isatty(2);
    return on_progress;
}

/* ---- training has no progress events: show the time it has taken ---- */

static atomic_int training_done;
static double training_started;

static void* show_elapsed(void* arg) {
    (void)arg;
    while (!atomic_load(&training_done)) {
        fprintf(stderr, "\rtraining the shared model: %.1f s", now() - training_started);
        struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    fprintf(stderr, "\r%50s\r", "");
    return NULL;
}

/* ---- SIGINT / SIGTERM: cancel the running build ---- */

static LanceIndexBuildCancelToken* cancel_token;

/* A handler may only set a flag; the library's progress hooks are not
 * signal-safe, so a small thread turns the flag into a cancel. */
static volatile sig_atomic_t interrupted;
static void on_signal(int sig) {
    (void)sig;
    interrupted = 1;
}

static void* watch_signals(void* arg) {
    (void)arg;
    while (!interrupted) {
        struct timespec pause = {0, 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    lance_index_build_cancel(cancel_token);
    return NULL;
}

static void cancel_on_signals(void) {
    cancel_token = lance_index_build_cancel_token_new();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    pthread_t t;
    pthread_create(&t, NULL, watch_signals, NULL);
    pthread_detach(t);
}

/* ---- vector parameters ---- */

static int vector_type(const char* name, LanceVectorIndexType* out) {
    static const struct {
        const char* name;
        LanceVectorIndexType type;
    } types[] = {{"IVF_FLAT", LANCE_INDEX_IVF_FLAT},       {"IVF_SQ", LANCE_INDEX_IVF_SQ},
                 {"IVF_PQ", LANCE_INDEX_IVF_PQ},           {"IVF_HNSW_SQ", LANCE_INDEX_IVF_HNSW_SQ},
                 {"IVF_HNSW_PQ", LANCE_INDEX_IVF_HNSW_PQ}, {"IVF_HNSW_FLAT", LANCE_INDEX_IVF_HNSW_FLAT},
                 {"IVF_RQ", LANCE_INDEX_IVF_RQ}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(types[i].name, name)) {
            *out = types[i].type;
            return 0;
        }
    return -1;
}

static int metric(const char* name, LanceMetricType* out) {
    if (!strcmp(name, "l2")) *out = LANCE_METRIC_L2;
    else if (!strcmp(name, "cosine")) *out = LANCE_METRIC_COSINE;
    else if (!strcmp(name, "dot")) *out = LANCE_METRIC_DOT;
    else return -1;
    return 0;
}

#define VECTOR_OPTS                                                                              \
    {"--type", 1, NULL, 0}, {"--metric", 1, NULL, 0}, {"--partitions", 1, NULL, 0},              \
        {"--sub-vectors", 1, NULL, 0}, {"--bits", 1, NULL, 0}, {"--iterations", 1, NULL, 0},     \
        {"--sample-rate", 1, NULL, 0}

/* Fills params from the VECTOR_OPTS; returns 0 or an exit code. */
static int vector_params(const Opt* o, int n, LanceVectorIndexParams* p) {
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
static int prologue(int argc, char** argv, Opt* o, int no, const char** pos, int cap, const char* help, int* np) {
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
    const char* pos[1];
    int np = 0;
    int done = prologue(argc, argv, o, 3, pos, 1,
                        "lance-index plan URI --groups N [--version V]\n"
                        "  Splits the fragments into N groups of balanced row counts and prints them as JSON:\n"
                        "  {\"dataset_version\": V, \"groups\": [{\"fragments\": [...], \"rows\": R}, ...]}", &np);
    if (done >= 0) return done;
    long long groups = number(opt(o, 3, "--groups"));
    if (np != 1 || groups < 0) return usage("plan needs URI and --groups N");
    LanceDataset* ds = open_dataset(pos[0], opt(o, 3, "--version"));
    if (!ds) return lib_error("open");
    LanceFragmentPlan* plan = NULL;
    if (lance_dataset_plan_fragment_groups(ds, (size_t)groups, &plan) != 0) {
        lance_dataset_close(ds);
        return lib_error("plan");
    }
    printf("{\"dataset_version\": %llu, \"groups\": [", (unsigned long long)lance_fragment_plan_dataset_version(plan));
    for (size_t g = 0; g < lance_fragment_plan_group_count(plan); g++) {
        const uint32_t* ids = NULL;
        size_t n = 0;
        uint64_t rows = 0;
        lance_fragment_plan_group(plan, g, &ids, &n, &rows);
        printf("%s{\"fragments\": [", g ? ", " : "");
        for (size_t i = 0; i < n; i++) printf("%s%u", i ? ", " : "", ids[i]);
        printf("], \"rows\": %llu}", (unsigned long long)rows);
    }
    printf("]}\n");
    lance_fragment_plan_free(plan);
    lance_dataset_close(ds);
    return 0;
}

static int cmd_train(int argc, char** argv) {
    Opt o[] = {VECTOR_OPTS,
               {"--column", 1, NULL, 0},
               {"--sample-fragments", 1, NULL, 0},
               {"--version", 1, NULL, 0},
               {"--quiet", 0, NULL, 0},
               {"-o", 1, NULL, 0},
               {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1];
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1,
                        "lance-index train URI --column C -o MODEL [--type IVF_PQ] [--metric l2|cosine|dot]\n"
                        "        [--partitions K] [--sub-vectors M] [--bits B] [--iterations I] [--sample-rate S]\n"
                        "        [--sample-fragments 0,1,...] [--version V] [--quiet]\n"
                        "  Trains the shared model (IVF centroids, and the PQ codebook for the PQ types) and\n"
                        "  writes it, serialized, to MODEL.  Prints the model's fingerprint.", &np);
    if (done >= 0) return done;
    quiet |= opt(o, no, "--quiet") != NULL;
    const char* column = opt(o, no, "--column");
    const char* out = opt(o, no, "-o");
    if (np != 1 || !column || !out) return usage("train needs URI, --column and -o");
    LanceVectorIndexParams p;
    int rc = vector_params(o, no, &p);
    if (rc) return rc;
    uint32_t* sample = NULL;
    long nsample = 0;
    const char* sf = opt(o, no, "--sample-fragments");
    if (sf && (nsample = parse_ids(sf, &sample)) <= 0) return usage("--sample-fragments must be like 0,1,5");
    LanceDataset* ds = open_dataset(pos[0], opt(o, no, "--version"));
    if (!ds) return lib_error("open");
    LanceVectorModel* model = NULL;
    double t0 = now();
    pthread_t ticker;
    int ticking = !quiet && isatty(2);
    training_started = t0;
    if (ticking) pthread_create(&ticker, NULL, show_elapsed, NULL);
    else if (!quiet) fprintf(stderr, "training the shared model...\n");
    int trained = lance_dataset_train_vector_model(ds, column, &p, sample, (size_t)nsample, &model);
    if (ticking) {
        atomic_store(&training_done, 1);
        pthread_join(ticker, NULL);
    }
    if (trained != 0) {
        free(sample);
        lance_dataset_close(ds);
        return lib_error("train");
    }
    uint8_t* bytes = NULL;
    size_t len = 0;
    rc = lance_vector_model_serialize(model, &bytes, &len) == 0 ? write_file(out, bytes, len) : lib_error("serialize");
    if (rc == 0) {
        const char* fp = lance_vector_model_fingerprint(model);
        if (!quiet) fprintf(stderr, "trained in %.2f s\n", now() - t0);
        printf("%s\n", fp);
        lance_free_string(fp);
    }
    lance_free_bytes(bytes);
    free(sample);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
    return rc;
}

static int parse_uuid(const char* hex, uint8_t out[16]) {
    size_t j = 0;
    for (size_t i = 0; hex[i] && j < 32; i++) {
        if (hex[i] == '-') continue;
        char c = hex[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (v < 0) return -1;
        out[j / 2] = (uint8_t)(j % 2 ? (out[j / 2] | v) : (v << 4));
        j++;
    }
    return j == 32 ? 0 : -1;
}

static int cmd_build(int argc, char** argv) {
    Opt o[] = {VECTOR_OPTS,
               {"--column", 1, NULL, 0},
               {"--fragments", 1, NULL, 0},
               {"--model", 1, NULL, 0},
               {"--uuid", 1, NULL, 0},
               {"--name", 1, NULL, 0},
               {"--scalar", 1, NULL, 0},
               {"--version", 1, NULL, 0},
               {"--quiet", 0, NULL, 0},
               {"-o", 1, NULL, 0},
               {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1];
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1,
                        "lance-index build URI --column C -o SEGMENT [--fragments 0,1,5] [--model MODEL]\n"
                        "        [--uuid HEX] [--version V] [--name N] [--quiet]\n"
                        "        [vector options as for train, or --scalar BTREE|BITMAP|LABEL_LIST|INVERTED]\n"
                        "  Builds one segment over the fragments WITHOUT committing and writes its metadata\n"
                        "  bytes to SEGMENT.  With --model the shared model is used and never retrained.\n"
                        "  SIGINT or SIGTERM cancels the build: its files are removed, exit status 19.", &np);
    if (done >= 0) return done;
    quiet |= opt(o, no, "--quiet") != NULL;
    const char* column = opt(o, no, "--column");
    const char* out = opt(o, no, "-o");
    if (np != 1 || !column || !out) return usage("build needs URI, --column and -o");
    LanceIndexSegmentBuildOptions bo;
    memset(&bo, 0, sizeof bo);
    uint32_t* frags = NULL;
    const char* ft = opt(o, no, "--fragments");
    long nfrags = 0;
    if (ft && (nfrags = parse_ids(ft, &frags)) <= 0) return usage("--fragments must be like 0,1,5");
    bo.fragment_ids = frags;
    bo.fragment_count = (size_t)nfrags;
    uint8_t uuid[16];
    const char* ut = opt(o, no, "--uuid");
    if (ut) {
        if (parse_uuid(ut, uuid) != 0) return usage("--uuid must be 32 hex digits (hyphens allowed)");
        bo.index_uuid = uuid;
    }
    const char* scalar = opt(o, no, "--scalar");
    LanceVectorModel* model = NULL;
    const char* mt = opt(o, no, "--model");
    LanceVectorIndexParams p;
    int rc = vector_params(o, no, &p);
    if (rc) return rc;
    if (mt) {
        size_t len = 0;
        unsigned char* bytes = read_whole_file(mt, &len);
        if (!bytes) return usage("cannot read %s", mt);
        int ok = lance_vector_model_parse(bytes, len, &model) == 0;
        free(bytes);
        if (!ok) return lib_error("reading the model");
        LanceVectorModelInfo info;
        lance_vector_model_info(model, &info);
        /* The model decides what the command line left open. */
        p.metric = opt(o, no, "--metric") ? p.metric : info.metric;
        if (!p.num_partitions) p.num_partitions = info.num_partitions;
        if (!p.num_sub_vectors && info.has_pq_codebook) p.num_sub_vectors = info.num_sub_vectors;
        bo.model = model;
        bo.train = LANCE_TRAIN_NEVER;
    }
    LanceDataset* ds = open_dataset(pos[0], opt(o, no, "--version"));
    if (!ds) return lib_error("open");
    LanceIndexSegmentBuilder* b;
    if (scalar) {
        LanceScalarIndexType st = !strcmp(scalar, "BTREE")        ? LANCE_SCALAR_BTREE
                                  : !strcmp(scalar, "BITMAP")     ? LANCE_SCALAR_BITMAP
                                  : !strcmp(scalar, "LABEL_LIST") ? LANCE_SCALAR_LABEL_LIST
                                  : !strcmp(scalar, "INVERTED")   ? LANCE_SCALAR_INVERTED
                                                                  : (LanceScalarIndexType)0;
        if (!st) return usage("unknown --scalar %s", scalar);
        b = lance_index_segment_builder_new_scalar(ds, column, opt(o, no, "--name"), st, NULL, &bo);
    } else {
        b = lance_index_segment_builder_new_vector(ds, column, opt(o, no, "--name"), &p, &bo);
    }
    if (!b) {
        rc = lib_error("preparing the build");
    } else {
        cancel_on_signals();
        lance_index_segment_builder_set_progress(b, progress_fn(), &progress_state);
        lance_index_segment_builder_set_cancel_token(b, cancel_token);
        uint8_t* bytes = NULL;
        size_t len = 0;
        double t0 = now();
        if (lance_index_segment_builder_execute_uncommitted(b, &bytes, &len) != 0) {
            rc = lib_error("build");
        } else {
            rc = write_file(out, bytes, len);
            if (rc == 0 && !quiet) fprintf(stderr, "segment built in %.2f s -> %s\n", now() - t0, out);
        }
        lance_free_bytes(bytes);
        lance_index_segment_builder_free(b);
    }
    free(frags);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
    return rc;
}

static int cmd_commit(int argc, char** argv) {
    Opt o[] = {{"--name", 1, NULL, 0},       {"--column", 1, NULL, 0},   {"--replace", 0, NULL, 0},
               {"--job-id", 1, NULL, 0},     {"--attempt-id", 1, NULL, 0}, {"--allow-independent-models", 0, NULL, 0},
               {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[4097];
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 4097,
                        "lance-index commit URI --name N --column C SEGMENT... [--replace] [--job-id ID]\n"
                        "        [--attempt-id ID] [--allow-independent-models]\n"
                        "  Commits the segments as one index in one new version and prints\n"
                        "  {\"version\": V, \"already_committed\": false|true}.  A retry of a commit that\n"
                        "  happened prints the version that holds the segments.", &np);
    if (done >= 0) return done;
    const char* name = opt(o, no, "--name");
    const char* column = opt(o, no, "--column");
    if (np < 1 || !name || !column) return usage("commit needs URI, --name, --column and segment files");
    int count = np - 1;
    const uint8_t** ptrs = calloc((size_t)count + 1, sizeof *ptrs);
    size_t* lens = calloc((size_t)count + 1, sizeof *lens);
    int rc = 0;
    for (int i = 0; i < count && rc == 0; i++) {
        ptrs[i] = read_whole_file(pos[i + 1], &lens[i]);
        if (!ptrs[i]) rc = usage("cannot read %s", pos[i + 1]);
    }
    LanceDataset* ds = rc ? NULL : lance_dataset_open(pos[0], NULL, 0);
    if (!rc && !ds) rc = lib_error("open");
    if (!rc) {
        LanceCommitIndexOptions c;
        memset(&c, 0, sizeof c);
        c.replace = opt(o, no, "--replace") != NULL;
        c.allow_independent_models = opt(o, no, "--allow-independent-models") != NULL;
        c.job_id = opt(o, no, "--job-id");
        c.attempt_id = opt(o, no, "--attempt-id");
        LanceCommitIndexResult r;
        if (lance_dataset_commit_index_segments_with_options(ds, name, column, ptrs, lens, (size_t)count, &c, &r) != 0)
            rc = lib_error("commit");
        else
            printf("{\"version\": %llu, \"already_committed\": %s}\n", (unsigned long long)r.version,
                   r.already_committed ? "true" : "false");
    }
    for (int i = 0; i < count; i++) free((void*)ptrs[i]);
    free(ptrs);
    free(lens);
    lance_dataset_close(ds);
    return rc;
}

static const char* jstr(const JValue* o, const char* key) {
    const JValue* v = json_get(o, key);
    return v && v->type == J_STRING ? v->string : "-";
}

static int cmd_list(int argc, char** argv) {
    Opt o[] = {{"--json", 0, NULL, 0}, {"--version", 1, NULL, 0}, {"--help", 0, NULL, 0}};
    const char* pos[1];
    int np = 0;
    int done = prologue(argc, argv, o, 3, pos, 1,
                        "lance-index list URI [--json] [--version V]\n"
                        "  One line per index segment: index, type, uuid, fragments, rows, size, model.\n"
                        "  --json prints the library's segment listing as it is.", &np);
    if (done >= 0) return done;
    if (np != 1) return usage("list needs URI");
    LanceDataset* ds = open_dataset(pos[0], opt(o, 3, "--version"));
    if (!ds) return lib_error("open");
    const char* text = lance_dataset_index_segments_json(ds);
    if (!text) {
        lance_dataset_close(ds);
        return lib_error("list");
    }
    if (opt(o, 3, "--json")) {
        printf("%s\n", text);
    } else {
        JValue* doc = json_parse(text);
        printf("%-16s %-12s %-36s %-24s %10s %12s %s\n", "index", "type", "segment", "fragments", "rows", "bytes",
               "model");
        for (size_t i = 0; doc && i < doc->count; i++) {
            const JValue* e = doc->items[i];
            char frags[25] = "";
            const JValue* f = json_get(e, "fragment_ids");
            size_t used = 0;
            for (size_t j = 0; f && j < f->count && used < sizeof frags; j++)
                used += (size_t)snprintf(frags + used, sizeof frags - used, "%s%.0f", j ? "," : "", f->items[j]->number);
            if (used >= sizeof frags - 1) memcpy(frags + sizeof frags - 4, "...", 4);
            const JValue* rows = json_get(e, "num_rows");
            const JValue* size = json_get(e, "size_bytes");
            const char* model = jstr(e, "model_fingerprint");
            printf("%-16s %-12s %-36s %-24s %10.0f %12.0f %.12s\n", jstr(e, "name"), jstr(e, "type"), jstr(e, "uuid"),
                   frags, rows && rows->type == J_NUMBER ? rows->number : -1,
                   size && size->type == J_NUMBER ? size->number : -1, model);
        }
        printf("%zu segments, dataset version %llu\n", doc ? doc->count : 0,
               (unsigned long long)lance_dataset_version(ds));
        json_free(doc);
    }
    lance_free_string(text);
    lance_dataset_close(ds);
    return 0;
}

/* Prints one batch's rows: every column, int64, float32 or utf8. */
static void print_batch(const struct ArrowArray* a, const struct ArrowSchema* s, int header) {
    if (header) {
        for (int64_t c = 0; c < s->n_children; c++) printf("%s%s", c ? "\t" : "", s->children[c]->name);
        printf("\n");
    }
    for (int64_t r = 0; r < a->length; r++) {
        for (int64_t c = 0; c < s->n_children; c++) {
            const struct ArrowArray* col = a->children[c];
            const char* fmt = s->children[c]->format;
            int64_t i = col->offset + r;
            printf("%s", c ? "\t" : "");
            if (!strcmp(fmt, "l")) printf("%lld", (long long)((const int64_t*)col->buffers[1])[i]);
            else if (!strcmp(fmt, "f")) printf("%g", ((const float*)col->buffers[1])[i]);
            else if (!strcmp(fmt, "u")) {
                const int32_t* off = col->buffers[1];
                printf("%.*s", (int)(off[i + 1] - off[i]), (const char*)col->buffers[2] + off[i]);
            } else printf("?");
        }
        printf("\n");
    }
}

static int cmd_create(int argc, char** argv) {
    Opt o[] = {VECTOR_OPTS, {"--column", 1, NULL, 0}, {"--name", 1, NULL, 0}, {"--replace", 0, NULL, 0},
               {"--quiet", 0, NULL, 0}, {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1];
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1,
                        "lance-index create URI --column C [--name N] [--replace] [--quiet] [vector options as for train]\n"
                        "  The one-shot build: trains, builds the whole dataset and commits, in this process.\n"
                        "  SIGINT or SIGTERM cancels it before it commits (exit status 19).", &np);
    if (done >= 0) return done;
    quiet |= opt(o, no, "--quiet") != NULL;
    const char* column = opt(o, no, "--column");
    if (np != 1 || !column) return usage("create needs URI and --column");
    LanceVectorIndexParams p;
    int rc = vector_params(o, no, &p);
    if (rc) return rc;
    LanceDataset* ds = lance_dataset_open(pos[0], NULL, 0);
    if (!ds) return lib_error("open");
    cancel_on_signals();
    LanceIndexBuildControl control = {progress_fn(), &progress_state, cancel_token};
    double t0 = now();
    if (lance_dataset_create_vector_index_with_control(ds, column, opt(o, no, "--name"), &p,
                                                       opt(o, no, "--replace") != NULL, &control) != 0) {
        rc = lib_error("create");
    } else {
        if (!quiet) fprintf(stderr, "built and committed in %.2f s\n", now() - t0);
        printf("{\"version\": %llu}\n", (unsigned long long)lance_dataset_version(ds));
    }
    lance_dataset_close(ds);
    return rc;
}

static int cmd_search(int argc, char** argv) {
    Opt o[] = {{"--column", 1, NULL, 0},  {"--query", 1, NULL, 0},   {"--k", 1, NULL, 0},
               {"--nprobes", 1, NULL, 0}, {"--refine", 1, NULL, 0},  {"--select", 1, NULL, 0},
               {"--metric", 1, NULL, 0},  {"--version", 1, NULL, 0}, {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1];
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1,
                        "lance-index search URI --column C --query 0.1,0.2,... [--k 10] [--nprobes N] [--refine R]\n"
                        "        [--metric l2|cosine|dot] [--select id,tag] [--version V]\n"
                        "  k-NN through the column's index: one tab-separated line per row, the selected\n"
                        "  columns (default: id) and _distance, nearest first.", &np);
    if (done >= 0) return done;
    const char* column = opt(o, no, "--column");
    const char* qt = opt(o, no, "--query");
    if (np != 1 || !column || !qt) return usage("search needs URI, --column and --query");
    size_t cap = 64, dim = 0;
    float* q = malloc(cap * sizeof *q);
    for (const char* p = qt; *p;) {
        char* end = NULL;
        float v = strtof(p, &end);
        if (end == p) {
            free(q);
            return usage("--query must be comma-separated numbers");
        }
        if (dim == cap) q = realloc(q, (cap *= 2) * sizeof *q);
        q[dim++] = v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') {
            free(q);
            return usage("--query must be comma-separated numbers");
        }
    }
    long long k = opt(o, no, "--k") ? number(opt(o, no, "--k")) : 10;
    long long nprobes = opt(o, no, "--nprobes") ? number(opt(o, no, "--nprobes")) : 0;
    long long refine = opt(o, no, "--refine") ? number(opt(o, no, "--refine")) : 0;
    if (k <= 0 || nprobes < 0 || refine < 0) {
        free(q);
        return usage("--k, --nprobes and --refine must be numbers (k > 0)");
    }
    LanceMetricType m = LANCE_METRIC_L2;
    const char* mt = opt(o, no, "--metric");
    if (mt && metric(mt, &m) != 0) {
        free(q);
        return usage("unknown --metric %s", mt);
    }
    /* --select a,b -> a NULL-terminated list. */
    char* select = strdup(opt(o, no, "--select") ? opt(o, no, "--select") : "id");
    const char* cols[64];
    int nc = 0;
    for (char* tok = strtok(select, ","); tok && nc < 63; tok = strtok(NULL, ",")) cols[nc++] = tok;
    cols[nc] = NULL;
    int rc = 0;
    LanceDataset* ds = open_dataset(pos[0], opt(o, no, "--version"));
    LanceScanner* s = ds ? lance_scanner_new(ds, cols, NULL) : NULL;
    if (!ds) rc = lib_error("open");
    else if (!s) rc = lib_error("scanner");
    else if (lance_scanner_nearest(s, column, q, dim, LANCE_DTYPE_FLOAT32, (size_t)k) != 0 ||
             (nprobes && lance_scanner_set_nprobes(s, (uint32_t)nprobes) != 0) ||
             (refine && lance_scanner_set_refine_factor(s, (uint32_t)refine) != 0) ||
             (mt && lance_scanner_set_metric(s, m) != 0))
        rc = lib_error("search settings");
    for (int header = 1; rc == 0;) {
        LanceBatch* batch = NULL;
        int next = lance_scanner_next(s, &batch);
        if (next == 1) break;
        if (next != 0) {
            rc = lib_error("search");
            break;
        }
        struct ArrowArray a;
        struct ArrowSchema sc;
        if (lance_batch_to_arrow(batch, &a, &sc) == 0) {
            print_batch(&a, &sc, header);
            header = 0;
            a.release(&a);
            sc.release(&sc);
        }
        lance_batch_free(batch);
    }
    lance_scanner_close(s);
    lance_dataset_close(ds);
    free(select);
    free(q);
    return rc;
}

static void help(void) {
    puts("lance-index: run the steps of a distributed Lance index build from a shell.\n"
         "\n"
         "  lance-index plan   URI --groups N                       balanced fragment groups (JSON)\n"
         "  lance-index train  URI --column C -o MODEL [options]    the shared model\n"
         "  lance-index build  URI --column C -o SEGMENT [options]  one uncommitted segment\n"
         "  lance-index commit URI --name N --column C SEGMENT...   one index, one new version\n"
         "  lance-index list   URI [--json]                         the segments of every index\n"
         "  lance-index search URI --column C --query V [options]   k-NN through the index\n"
         "  lance-index create URI --column C [options]             one-shot build and commit\n"
         "\n"
         "`lance-index COMMAND --help` describes a command.  --quiet silences progress (build).\n"
         "Exit status: 0 success; 2 bad command line or unreadable/unwritable file;\n"
         "10 + the library's error code otherwise (11 invalid argument, 12 I/O, 13 not found,\n"
         "15 index, 18 commit conflict (retry), 19 cancelled, 20 no segments, 21 duplicate segment,\n"
         "22 overlapping segments, 23 stale segment, 24 model mismatch).");
}

int main(int argc, char** argv) {
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
    } commands[] = {{"plan", cmd_plan},     {"train", cmd_train}, {"build", cmd_build},
                    {"commit", cmd_commit}, {"list", cmd_list},   {"search", cmd_search},
                    {"create", cmd_create}};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc, argv);
    return usage("unknown command %s", argv[1]);
}
