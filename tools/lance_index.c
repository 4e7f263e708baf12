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

/* The exit status for a failure of the library with `code` (table above). */
static int exit_status(LanceErrorCode code) {
    int c = (int)code;
    if (c >= LANCE_ERR_INVALID_ARGUMENT && c <= LANCE_ERR_PANIC) return 10 + c;
    if (c >= LANCE_ERR_CANCELLED && c <= LANCE_ERR_INCOMPLETE_SEGMENT) return 20 + (c - LANCE_ERR_CANCELLED);
    return EXIT_UNKNOWN_ERROR;
}

static int quiet;

/* The storage options of every dataset the command opens. */
static StorageOptions storage;

static int usage(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
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
    return exit_status(report_lance_error(what));
}

/* The tool's own allocations: running out of memory ends it. */
static void* must(void* p) {
    if (!p) {
        fprintf(stderr, "lance-index: out of memory\n");
        exit(EXIT_OUT_OF_MEMORY);
    }
    return p;
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

static const char* opt(const Opt* opts, int nopts, const char* name) {
    for (int k = 0; k < nopts; k++)
        if (!strcmp(opts[k].name, name)) return opts[k].given ? (opts[k].value ? opts[k].value : "") : NULL;
    return NULL;
}

/* A non-negative integer option; -1 when the text is not one. */
static long long number(const char* text) {
    uint64_t v = 0;
    return decimal_parse(text, INT64_MAX, &v) == 0 ? (long long)v : -1;
}

/* A fragment-list option (see common/id_list.h).  Ids given twice are left
 * to the library, whose message names the fragment (exit 11).  Returns 0,
 * or the exit status after saying what is wrong. */
static int fragment_list(const char* option, const char* text, uint32_t** ids, size_t* count) {
    char why[160];
    if (id_list_parse(text, 0, ids, count, why, sizeof why) != 0)
        return usage("%s: %s (expected fragment ids like 0,1,5)", option, why);
    return 0;
}

static int write_output(const char* path, const uint8_t* bytes, size_t len) {
    if (write_whole_file(path, bytes, len) == 0) return 0;
    fprintf(stderr, "lance-index: cannot write %s: %s\n", path, strerror(errno));
    return EXIT_USAGE;
}

/* Opens URI at --version V (0 or absent = latest).  Returns 0, or the exit
 * status after printing why. */
static int open_dataset(const char* uri, const char* version, LanceDataset** out) {
    long long v = version ? number(version) : 0;
    if (v < 0) return usage("--version must be a number");
    *out = lance_dataset_open(uri, storage_options_array(&storage), (uint64_t)v);
    return *out ? 0 : lib_error("open");
}

/* ---- progress on stderr ----
 * A stage's STAGE_START gives its total, its STAGE_PROGRESS events the
 * count so far; its STAGE_COMPLETE carries no count (completed = 0), so
 * the line that ends a stage says how long it took, never a count. */

typedef struct {
    int tty;
    char stage[64];
    uint64_t total;
    char unit[32];
    double started;
} Progress;

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

static Progress progress_state;

/* The progress callback, NULL with --quiet. */
static LanceIndexBuildProgressCallback progress_fn(void) {
    if (quiet) return NULL;
    progress_state.tty = isatty(2);
    return on_progress;
}

/* SIGINT / SIGTERM cancel the build given the returned token (NULL, with a
 * warning, when signals cannot be watched: the build still runs). */
static const LanceIndexBuildCancelToken* cancel_on_signals(void) {
    const LanceIndexBuildCancelToken* token = cancel_signal_start();
    if (!token)
        fprintf(stderr, "lance-index: warning: SIGINT and SIGTERM will not cancel this build (%s)\n",
                strerror(errno));
    return token;
}

/* ---- training has no progress events: show the time it has taken ---- */

static atomic_int training_done;
static double training_started;

static void* show_elapsed(void* arg) {
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

static const char* vector_type_name(int32_t type) {
    for (size_t i = 0; i < sizeof vector_types / sizeof vector_types[0]; i++)
        if (vector_types[i].type == (LanceVectorIndexType)type) return vector_types[i].name;
    return "an unknown type";
}

/* The types whose segments use the model's PQ codebook. */
static int uses_pq_codebook(LanceVectorIndexType type) {
    return type == LANCE_INDEX_IVF_PQ || type == LANCE_INDEX_IVF_HNSW_PQ;
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

/* Fills params from the VECTOR_OPTS (type IVF_PQ when --type is absent);
 * returns 0 or an exit code. */
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

static int cmd_train(int argc, char** argv) {
    Opt o[] = {VECTOR_OPTS,
               {"--column", 1, NULL, 0},
               {"--sample-fragments", 1, NULL, 0},
               {"--version", 1, NULL, 0},
               {"--quiet", 0, NULL, 0},
               {"-o", 1, NULL, 0},
               {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1] = {NULL};
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
    size_t nsample = 0;
    const char* sf = opt(o, no, "--sample-fragments");
    if (sf && (rc = fragment_list("--sample-fragments", sf, &sample, &nsample)) != 0) return rc;
    LanceDataset* ds = NULL;
    LanceVectorModel* model = NULL;
    uint8_t* bytes = NULL;
    size_t len = 0;
    const char* fingerprint = NULL;
    pthread_t ticker;
    int ticking = !quiet && isatty(2);
    double t0 = 0;
    if ((rc = open_dataset(pos[0], opt(o, no, "--version"), &ds)) != 0) goto done;
    t0 = monotonic_seconds();
    training_started = t0;
    if (ticking && pthread_create(&ticker, NULL, show_elapsed, NULL) != 0) ticking = 0;
    if (!ticking && !quiet) fprintf(stderr, "training the shared model...\n");
    int trained = lance_dataset_train_vector_model(ds, column, &p, sample, nsample, &model);
    if (ticking) {
        atomic_store(&training_done, 1);
        pthread_join(ticker, NULL);
    }
    if (trained != 0) {
        rc = lib_error("train");
    } else if (lance_vector_model_serialize(model, &bytes, &len) != 0) {
        rc = lib_error("serialize");
    } else if (!(fingerprint = lance_vector_model_fingerprint(model))) {
        rc = lib_error("fingerprint");
    } else if ((rc = write_output(out, bytes, len)) == 0) {
        if (!quiet) fprintf(stderr, "trained in %.2f s\n", monotonic_seconds() - t0);
        printf("%s\n", fingerprint);
    }
done:
    lance_free_string(fingerprint);
    lance_free_bytes(bytes);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
    free(sample);
    return rc;
}

/* The model in `path` for a build: parsed, its settings filling what the
 * command line left open.  Without --type the model decides the type: the
 * one it was trained for, or, for a model that records none (made from
 * Arrow arrays, or by lance-c before 0.4), IVF_PQ with a PQ codebook and
 * IVF_FLAT without.  A --type the model cannot build is a usage error
 * naming both.  Returns 0 or an exit status. */
static int build_model(const char* path, const char* type_given, int metric_given, LanceVectorIndexParams* p,
                       LanceVectorModel** out) {
    size_t len = 0;
    unsigned char* bytes = read_whole_file(path, &len);
    if (!bytes) return usage("cannot read %s: %s", path, strerror(errno));
    int parsed = lance_vector_model_parse(bytes, len, out);
    free(bytes);
    if (parsed != 0) return lib_error("reading the model");
    LanceVectorModelInfo info;
    if (lance_vector_model_info(*out, &info) != 0) return lib_error("reading the model's settings");
    int32_t trained_for = 0;
    if (lance_vector_model_index_type(*out, &trained_for) != 0) return lib_error("reading the model's index type");
    if (trained_for && type_given && p->index_type != (LanceVectorIndexType)trained_for)
        return usage("--type %s conflicts with the model %s, trained for %s; leave --type out to use the model's type",
                     type_given, path, vector_type_name(trained_for));
    const char* model_kind = info.has_pq_codebook ? "an IVF_PQ model (it has a PQ codebook)"
                                                  : "an IVF_FLAT model (it has no PQ codebook)";
    if (trained_for) p->index_type = (LanceVectorIndexType)trained_for;
    else if (!type_given) p->index_type = info.has_pq_codebook ? LANCE_INDEX_IVF_PQ : LANCE_INDEX_IVF_FLAT;
    else if (uses_pq_codebook(p->index_type) != (int)info.has_pq_codebook)
        return usage("--type %s conflicts with the model %s, %s; leave --type out to use the model's type",
                     type_given, path, model_kind);
    if (!metric_given) p->metric = info.metric;
    if (!p->num_partitions) p->num_partitions = info.num_partitions;
    if (!p->num_sub_vectors && info.has_pq_codebook) p->num_sub_vectors = info.num_sub_vectors;
    return 0;
}

/* A model trained elsewhere, as raw little-endian float32 files (the Lance
 * Java SDK's VectorTrainer output written as it is):
 *   centroids  [K][dim] row-major, K = --partitions;
 *   codebook   [M][2^bits][dim / M] (M = --sub-vectors, bits = --bits or 8),
 *              the order of lance_index_train_pq_model() and of the Lance
 *              core's flat codebook.
 * Checks the shapes and fills the two Arrow arrays of `options` (released by
 * the caller) with mode PRECOMPUTED.  Without --type the codebook decides
 * the type (IVF_PQ with one, IVF_FLAT without).  Returns 0 or an exit status. */
static int raw_model(const char* centroids_path, const char* codebook_path, const char* type_given,
                     LanceVectorIndexParams* p, struct ArrowArray arrays[2], struct ArrowSchema schemas[2],
                     LanceIndexSegmentBuildOptions* options) {
    if (!p->num_partitions)
        return usage("--ivf-centroids needs --partitions K, the number of centroids the file holds");
    if (!type_given) p->index_type = codebook_path ? LANCE_INDEX_IVF_PQ : LANCE_INDEX_IVF_FLAT;
    else if (uses_pq_codebook(p->index_type) != (codebook_path != NULL))
        return usage("--type %s %s --pq-codebook", type_given,
                     codebook_path ? "does not use a PQ codebook: leave out" : "needs a PQ codebook: add");
    size_t count = 0;
    float* centroids = read_f32_file(centroids_path, &count);
    if (!centroids)
        return usage("cannot read %s as little-endian float32 values: %s", centroids_path,
                     errno == EINVAL ? "empty, or its size is not a multiple of 4 bytes" : strerror(errno));
    if (count % p->num_partitions != 0 || count / p->num_partitions > INT32_MAX) {
        free(centroids);
        return usage("%s holds %zu floats, not --partitions %u rows of one dimension", centroids_path, count,
                     p->num_partitions);
    }
    size_t dim = count / p->num_partitions;
    if (f32_list_arrow(centroids, count, (int32_t)dim, &arrays[0], &schemas[0]) != 0) {
        fprintf(stderr, "lance-index: out of memory\n");
        exit(EXIT_OUT_OF_MEMORY);
    }
    options->ivf_centroids = &arrays[0];
    options->ivf_centroids_schema = &schemas[0];
    options->mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
    if (!codebook_path) return 0;
    if (!p->num_sub_vectors) return usage("--pq-codebook needs --sub-vectors M, the codebook's sub-vector count");
    uint32_t bits = p->num_bits ? p->num_bits : 8;
    if (bits > 16) return usage("--bits %u is not a PQ code width", bits);
    if (dim % p->num_sub_vectors != 0)
        return usage("--sub-vectors %u does not divide the centroids' dimension %zu", p->num_sub_vectors, dim);
    size_t sub_dim = dim / p->num_sub_vectors;
    size_t expected = (size_t)p->num_sub_vectors * ((size_t)1 << bits) * sub_dim;
    float* codebook = read_f32_file(codebook_path, &count);
    if (!codebook)
        return usage("cannot read %s as little-endian float32 values: %s", codebook_path,
                     errno == EINVAL ? "empty, or its size is not a multiple of 4 bytes" : strerror(errno));
    if (count != expected) {
        free(codebook);
        return usage("%s holds %zu floats; a codebook of %u sub-vectors x %u centroids x %zu dimensions holds %zu",
                     codebook_path, count, p->num_sub_vectors, 1u << bits, sub_dim, expected);
    }
    if (f32_list_arrow(codebook, count, (int32_t)sub_dim, &arrays[1], &schemas[1]) != 0) {
        fprintf(stderr, "lance-index: out of memory\n");
        exit(EXIT_OUT_OF_MEMORY);
    }
    options->pq_codebook = &arrays[1];
    options->pq_codebook_schema = &schemas[1];
    return 0;
}

/* The --scalar names, every LanceScalarIndexType. */
#define SCALAR_NAMES "BTREE|BITMAP|LABEL_LIST|INVERTED|NGRAM|ZONEMAP|BLOOMFILTER|RTREE|MINHASHLSH"

static int scalar_type(const char* name, LanceScalarIndexType* out) {
    static const struct {
        const char* name;
        LanceScalarIndexType type;
    } types[] = {{"BTREE", LANCE_SCALAR_BTREE},
                 {"BITMAP", LANCE_SCALAR_BITMAP},
                 {"LABEL_LIST", LANCE_SCALAR_LABEL_LIST},
                 {"INVERTED", LANCE_SCALAR_INVERTED},
                 {"NGRAM", LANCE_SCALAR_NGRAM},
                 {"ZONEMAP", LANCE_SCALAR_ZONEMAP},
                 {"BLOOMFILTER", LANCE_SCALAR_BLOOMFILTER},
                 {"RTREE", LANCE_SCALAR_RTREE},
                 {"MINHASHLSH", LANCE_SCALAR_MINHASHLSH}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(types[i].name, name)) {
            *out = types[i].type;
            return 0;
        }
    return -1;
}

/* Reads --scalar and --params: *scalar NULL for a vector index.  A vector
 * option with --scalar, or --params without it, is a usage error.  Returns 0
 * or an exit code. */
static int scalar_options(const Opt* o, int n, const char** scalar, LanceScalarIndexType* type,
                          const char** params_json) {
    static const char* const vector_only[] = {"--type", "--metric", "--partitions", "--sub-vectors",
                                              "--bits", "--iterations", "--sample-rate"};
    *scalar = opt(o, n, "--scalar");
    *params_json = opt(o, n, "--params");
    *type = LANCE_SCALAR_BTREE;
    if (!*scalar) return *params_json ? usage("--params is for scalar indices: give --scalar TYPE") : 0;
    if (scalar_type(*scalar, type) != 0) return usage("unknown --scalar %s (" SCALAR_NAMES ")", *scalar);
    for (size_t i = 0; i < sizeof vector_only / sizeof vector_only[0]; i++)
        if (opt(o, n, vector_only[i]))
            return usage("%s is for vector indices, not with --scalar %s", vector_only[i], *scalar);
    return 0;
}

static int cmd_build(int argc, char** argv) {
    Opt o[] = {VECTOR_OPTS,
               {"--column", 1, NULL, 0},
               {"--fragments", 1, NULL, 0},
               {"--model", 1, NULL, 0},
               {"--ivf-centroids", 1, NULL, 0},
               {"--pq-codebook", 1, NULL, 0},
               {"--uuid", 1, NULL, 0},
               {"--name", 1, NULL, 0},
               {"--scalar", 1, NULL, 0},
               {"--params", 1, NULL, 0},
               {"--version", 1, NULL, 0},
               {"--quiet", 0, NULL, 0},
               {"-o", 1, NULL, 0},
               {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1] = {NULL};
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1,
                        "lance-index build URI --column C -o SEGMENT [--fragments 0,1,5] [--model MODEL]\n"
                        "        [--uuid HEX] [--version V] [--name N] [--quiet]\n"
                        "        [vector options as for train, or --scalar TYPE [--params JSON]]\n"
                        "  Builds one segment over the fragments WITHOUT committing and writes its metadata\n"
                        "  bytes to SEGMENT.  With --model the shared model is used and never retrained, and\n"
                        "  the index type is the one it was trained for (a model that records none: IVF_PQ\n"
                        "  with a PQ codebook, else IVF_FLAT); --type may name only that one.\n"
                        "  --uuid takes 32 hex digits, or the dashed 8-4-4-4-12 form.\n"
                        "  --ivf-centroids FILE and --pq-codebook FILE take a model trained elsewhere (the Lance\n"
                        "  Java SDK's VectorTrainer) as raw little-endian float32, never retrained:\n"
                        "    centroids: K rows of dim floats, row-major [K][dim]; give --partitions K;\n"
                        "    codebook:  [M][2^B][dim/M]: for each of the M sub-vectors, 2^B centroids of\n"
                        "               dim/M floats (VectorTrainer.trainPqCodebook's float[] as it is);\n"
                        "               give --sub-vectors M (and --bits B when not 8).\n"
                        "  Without --type the type is IVF_PQ with a codebook, else IVF_FLAT.\n"
                        "  --scalar TYPE builds a scalar segment instead, TYPE one of\n"
                        "    " SCALAR_NAMES "\n"
                        "  with --params JSON the type's parameters, a JSON object (lance.h lists the keys\n"
                        "  at LanceScalarIndexType), e.g. --params '{\"rows_per_zone\": 1024}' for ZONEMAP.\n"
                        "  SIGINT or SIGTERM cancels the build: its files are removed, exit status 20.", &np);
    if (done >= 0) return done;
    quiet |= opt(o, no, "--quiet") != NULL;
    const char* column = opt(o, no, "--column");
    const char* out = opt(o, no, "-o");
    if (np != 1 || !column || !out) return usage("build needs URI, --column and -o");
    const char* scalar = NULL;
    const char* params_json = NULL;
    LanceScalarIndexType st = LANCE_SCALAR_BTREE;
    int rc = scalar_options(o, no, &scalar, &st, &params_json);
    if (rc) return rc;
    const char* model_path = opt(o, no, "--model");
    const char* centroids_path = opt(o, no, "--ivf-centroids");
    const char* codebook_path = opt(o, no, "--pq-codebook");
    if (scalar && (model_path || centroids_path || codebook_path))
        return usage("--model, --ivf-centroids and --pq-codebook are for vector indices, not with --scalar %s",
                     scalar);
    if (model_path && (centroids_path || codebook_path))
        return usage("--model or --ivf-centroids/--pq-codebook: one model, not both");
    if (codebook_path && !centroids_path) return usage("--pq-codebook needs --ivf-centroids");
    uint8_t uuid[16];
    const char* uuid_text = opt(o, no, "--uuid");
    if (uuid_text && uuid_hex_parse(uuid_text, uuid) != 0)
        return usage("--uuid %s: expected 32 hex digits, or the dashed 8-4-4-4-12 form", uuid_text);
    LanceVectorIndexParams p;
    if ((rc = vector_params(o, no, &p)) != 0) return rc;

    /* One options struct for every kind of build: the fragments and the
     * UUID, and for raw model files their Arrow arrays (mode PRECOMPUTED).
     * A --model file goes to the builder with set_model instead (mode AUTO):
     * either way the builder never trains. */
    LanceIndexSegmentBuildOptions bo;
    memset(&bo, 0, sizeof bo);
    struct ArrowArray raw_arrays[2];
    struct ArrowSchema raw_schemas[2];
    memset(raw_arrays, 0, sizeof raw_arrays);
    memset(raw_schemas, 0, sizeof raw_schemas);
    uint32_t* frags = NULL;
    size_t nfrags = 0;
    LanceVectorModel* model = NULL;
    LanceDataset* ds = NULL;
    LanceIndexSegmentBuilder* b = NULL;
    uint8_t* bytes = NULL;
    size_t len = 0;
    const LanceIndexBuildCancelToken* token = NULL;
    LanceIndexBuildProgressCallback callback = NULL;
    double t0 = 0;
    const char* ft = opt(o, no, "--fragments");
    if (ft && (rc = fragment_list("--fragments", ft, &frags, &nfrags)) != 0) goto done;
    bo.fragment_ids = frags;
    bo.fragment_count = nfrags;
    if (uuid_text) bo.index_uuid = uuid;
    if (centroids_path) {
        rc = raw_model(centroids_path, codebook_path, opt(o, no, "--type"), &p, raw_arrays, raw_schemas, &bo);
        if (rc) goto done;
    }
    if (model_path) {
        rc = build_model(model_path, opt(o, no, "--type"), opt(o, no, "--metric") != NULL, &p, &model);
        if (rc) goto done;
    }
    if ((rc = open_dataset(pos[0], opt(o, no, "--version"), &ds)) != 0) goto done;
    if (scalar)
        b = lance_index_segment_builder_new_scalar(ds, column, opt(o, no, "--name"), (int32_t)st, params_json, &bo);
    else
        b = vector_segment_builder_new(ds, column, opt(o, no, "--name"), &p, &bo, model);
    if (!b) {
        rc = lib_error("preparing the build");
        goto done;
    }
    token = cancel_on_signals();
    callback = progress_fn();
    if ((callback && lance_index_segment_builder_set_progress_callback(b, callback, &progress_state) != 0) ||
        lance_index_segment_builder_set_cancel_token(b, token) != 0) {
        rc = lib_error("preparing the build");
        goto done;
    }
    t0 = monotonic_seconds();
    if (lance_index_segment_builder_execute_uncommitted(b, &bytes, &len) != 0) {
        rc = lib_error("build");
    } else {
        rc = write_output(out, bytes, len);
        if (rc == 0 && !quiet) fprintf(stderr, "segment built in %.2f s -> %s\n", monotonic_seconds() - t0, out);
    }
done:
    lance_index_segment_builder_free(b);
    cancel_signal_stop();
    lance_free_bytes(bytes);
    lance_vector_model_free(model);
    for (int i = 0; i < 2; i++) {
        if (raw_arrays[i].release) raw_arrays[i].release(&raw_arrays[i]);
        if (raw_schemas[i].release) raw_schemas[i].release(&raw_schemas[i]);
    }
    lance_dataset_close(ds);
    free(frags);
    return rc;
}

/* Reads `count` segment metadata files.  Returns 0, or the exit status
 * after printing why; free with free_segments() either way. */
static int read_segments(const char* const* paths, size_t count, const uint8_t*** ptrs, size_t** lens) {
    *ptrs = must(calloc(count + 1, sizeof **ptrs));
    *lens = must(calloc(count + 1, sizeof **lens));
    for (size_t i = 0; i < count; i++) {
        (*ptrs)[i] = read_whole_file(paths[i], &(*lens)[i]);
        if (!(*ptrs)[i]) return usage("cannot read %s: %s", paths[i], strerror(errno));
    }
    return 0;
}

static void free_segments(const uint8_t** ptrs, size_t* lens, size_t count) {
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

static const char* jstr(const JValue* o, const char* key) {
    const JValue* v = json_get(o, key);
    return v && v->type == J_STRING ? v->string : "-";
}

/* The library's segment listing of `ds`, parsed; NULL with the exit status
 * in *rc. */
static JValue* segment_listing(const LanceDataset* ds, int* rc) {
    const char* text = lance_dataset_index_segments_json(ds);
    if (!text) {
        *rc = lib_error("listing the segments");
        return NULL;
    }
    JValue* doc = json_parse(text);
    lance_free_string(text);
    if (!doc || doc->type != J_ARRAY) {
        json_free(doc);
        fprintf(stderr, "lance-index: the library's segment listing is not a JSON array\n");
        *rc = exit_status(LANCE_ERR_INTERNAL);
        return NULL;
    }
    return doc;
}

static int cmd_list(int argc, char** argv) {
    Opt o[] = {{"--json", 0, NULL, 0}, {"--version", 1, NULL, 0}, {"--help", 0, NULL, 0}};
    const char* pos[1] = {NULL};
    int np = 0;
    int done = prologue(argc, argv, o, 3, pos, 1,
                        "lance-index list URI [--json] [--version V]\n"
                        "  One line per index segment: index, type, uuid, fragments, rows, size, model.\n"
                        "  --json prints the library's segment listing as it is.", &np);
    if (done >= 0) return done;
    if (np != 1) return usage("list needs URI");
    LanceDataset* ds = NULL;
    int rc = open_dataset(pos[0], opt(o, 3, "--version"), &ds);
    if (rc) return rc;
    if (opt(o, 3, "--json")) {
        const char* text = lance_dataset_index_segments_json(ds);
        if (!text) rc = lib_error("listing the segments");
        else printf("%s\n", text);
        lance_free_string(text);
    } else {
        JValue* doc = segment_listing(ds, &rc);
        if (doc) {
            printf("%-16s %-12s %-36s %-24s %10s %12s %s\n", "index", "type", "segment", "fragments", "rows",
                   "bytes", "model");
            for (size_t i = 0; i < doc->count; i++) {
                const JValue* e = doc->items[i];
                char frags[25] = "";
                const JValue* f = json_get(e, "fragment_ids");
                size_t used = 0;
                for (size_t j = 0; f && j < f->count && used < sizeof frags; j++)
                    used += (size_t)snprintf(frags + used, sizeof frags - used, "%s%.0f", j ? "," : "",
                                             f->items[j]->number);
                if (used >= sizeof frags - 1) memcpy(frags + sizeof frags - 4, "...", 4);
                const JValue* rows = json_get(e, "num_rows");
                const JValue* size = json_get(e, "size_bytes");
                printf("%-16s %-12s %-36s %-24s %10.0f %12.0f %.12s\n", jstr(e, "name"), jstr(e, "type"),
                       jstr(e, "uuid"), frags, rows && rows->type == J_NUMBER ? rows->number : -1,
                       size && size->type == J_NUMBER ? size->number : -1, jstr(e, "model_fingerprint"));
            }
            printf("%zu segments, dataset version %llu\n", doc->count, (unsigned long long)lance_dataset_version(ds));
            json_free(doc);
        }
    }
    lance_dataset_close(ds);
    return rc;
}

/* Prints a JSON array of numbers as "0,1,5", or "none" when empty. */
static void print_ids(const JValue* ids) {
    if (!ids || ids->type != J_ARRAY || ids->count == 0) {
        printf("none");
        return;
    }
    for (size_t i = 0; i < ids->count; i++) printf("%s%.0f", i ? "," : "", ids->items[i]->number);
}

static void print_rows(const JValue* rows) {
    if (rows && rows->type == J_NUMBER) printf(" (%.0f rows)", rows->number);
    else printf(" (rows not recorded)");
}

/* The next segment of index `name` in a segment listing at or after
 * *next (advanced past it); NULL after the last. */
static const JValue* next_segment_of(const JValue* listing, const char* name, size_t* next) {
    while (*next < listing->count) {
        const JValue* e = listing->items[(*next)++];
        const JValue* n = json_get(e, "name");
        if (n && n->type == J_STRING && !strcmp(n->string, name)) return e;
    }
    return NULL;
}

/* The library's coverage report `text` with a "segments" member first:
 * each segment of index `name` with its fragments. */
static void print_coverage_json(const char* text, const JValue* listing, const char* name) {
    /* `text` is one JSON object: the report's members follow the added one. */
    const char* rest = strchr(text, '{') + 1;
    while (*rest == ' ' || *rest == '\n' || *rest == '\t' || *rest == '\r') rest++;
    printf("{\"segments\": [");
    size_t next = 0, shown = 0;
    for (const JValue* e; (e = next_segment_of(listing, name, &next));) {
        printf("%s{\"uuid\": ", shown++ ? ", " : "");
        json_write_string(stdout, jstr(e, "uuid"));
        printf(", \"fragment_ids\": [");
        const JValue* f = json_get(e, "fragment_ids");
        for (size_t j = 0; f && j < f->count; j++) printf("%s%.0f", j ? ", " : "", f->items[j]->number);
        printf("]}");
    }
    printf("]%s%s\n", *rest == '}' ? "" : ", ", rest);
}

static void print_coverage_text(const JValue* report, const JValue* listing, const char* name) {
    const JValue* segments = json_get(report, "num_segments");
    const JValue* version = json_get(report, "dataset_version");
    printf("index %s, dataset version %.0f: %.0f segments\n", name,
           version && version->type == J_NUMBER ? version->number : -1,
           segments && segments->type == J_NUMBER ? segments->number : -1);
    size_t next = 0;
    for (const JValue* e; (e = next_segment_of(listing, name, &next));) {
        printf("  segment %s (%s): fragments ", jstr(e, "uuid"), jstr(e, "type"));
        print_ids(json_get(e, "fragment_ids"));
        printf("\n");
    }
    printf("indexed fragments:   ");
    print_ids(json_get(report, "indexed_fragments"));
    print_rows(json_get(report, "indexed_rows"));
    printf("\nunindexed fragments: ");
    print_ids(json_get(report, "unindexed_fragments"));
    print_rows(json_get(report, "unindexed_rows"));
    printf("\nstale fragments:     ");
    print_ids(json_get(report, "stale_fragments"));
    printf("\n");
}

static int cmd_coverage(int argc, char** argv) {
    Opt o[] = {{"--name", 1, NULL, 0}, {"--json", 0, NULL, 0}, {"--version", 1, NULL, 0}, {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1] = {NULL};
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1,
                        "lance-index coverage URI --name N [--json] [--version V]\n"
                        "  Which fragments of the dataset's version the index covers: each segment with its\n"
                        "  fragments, then the indexed fragments, the unindexed ones (appended since: the\n"
                        "  ones to index next) and the stale ones (covered, but no longer in the dataset).\n"
                        "  --json prints the library's coverage report with a \"segments\" member added:\n"
                        "  [{\"uuid\": U, \"fragment_ids\": [...]}, ...].", &np);
    if (done >= 0) return done;
    const char* name = opt(o, no, "--name");
    if (np != 1 || !name) return usage("coverage needs URI and --name");
    LanceDataset* ds = NULL;
    int rc = open_dataset(pos[0], opt(o, no, "--version"), &ds);
    if (rc) return rc;
    const char* text = lance_dataset_index_coverage_json(ds, name);
    JValue* report = NULL;
    JValue* listing = NULL;
    if (!text) {
        rc = lib_error("coverage");
    } else if (!(report = json_parse(text)) || report->type != J_OBJECT) {
        fprintf(stderr, "lance-index: the library's coverage report is not a JSON object\n");
        rc = exit_status(LANCE_ERR_INTERNAL);
    } else if ((listing = segment_listing(ds, &rc)) != NULL) {
        if (opt(o, no, "--json")) print_coverage_json(text, listing, name);
        else print_coverage_text(report, listing, name);
    }
    json_free(listing);
    json_free(report);
    lance_free_string(text);
    lance_dataset_close(ds);
    return rc;
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
               {"--scalar", 1, NULL, 0}, {"--params", 1, NULL, 0}, {"--quiet", 0, NULL, 0}, {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1] = {NULL};
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1,
                        "lance-index create URI --column C [--name N] [--replace] [--quiet]\n"
                        "        [vector options as for train, or --scalar TYPE [--params JSON]]\n"
                        "  The one-shot build: trains, builds the whole dataset and commits, in this process.\n"
                        "  --scalar TYPE builds a scalar index instead (" SCALAR_NAMES "),\n"
                        "  with --params JSON its parameters, as for build.\n"
                        "  SIGINT or SIGTERM cancels it before it commits (exit status 20).", &np);
    if (done >= 0) return done;
    quiet |= opt(o, no, "--quiet") != NULL;
    const char* column = opt(o, no, "--column");
    if (np != 1 || !column) return usage("create needs URI and --column");
    const char* scalar = NULL;
    const char* params_json = NULL;
    LanceScalarIndexType st = LANCE_SCALAR_BTREE;
    int rc = scalar_options(o, no, &scalar, &st, &params_json);
    if (rc) return rc;
    LanceVectorIndexParams p;
    if ((rc = vector_params(o, no, &p)) != 0) return rc;
    LanceDataset* ds = NULL;
    if ((rc = open_dataset(pos[0], NULL, &ds)) != 0) return rc;
    LanceIndexBuildControl control = {progress_fn(), &progress_state, cancel_on_signals()};
    double t0 = monotonic_seconds();
    const char* name = opt(o, no, "--name");
    bool replace = opt(o, no, "--replace") != NULL;
    if ((scalar ? lance_dataset_create_scalar_index_with_control(ds, column, name, st, params_json, replace, &control)
                : lance_dataset_create_vector_index_with_control(ds, column, name, &p, replace, &control)) != 0) {
        rc = lib_error("create");
    } else {
        if (!quiet) fprintf(stderr, "built and committed in %.2f s\n", monotonic_seconds() - t0);
        printf("{\"version\": %llu}\n", (unsigned long long)lance_dataset_version(ds));
    }
    cancel_signal_stop();
    lance_dataset_close(ds);
    return rc;
}

/* The values of option `name` in the order given, which parse() (keeping
 * the last) does not tell: argv[first..] walked as parse() walks it.
 * Returns their count; `out` holds room for argc of them. */
static size_t repeated_values(int argc, char** argv, int first, const Opt* opts, int nopts, const char* name,
                              const char** out) {
    size_t n = 0;
    for (int i = first; i < argc; i++) {
        int k = 0;
        while (k < nopts && strcmp(opts[k].name, argv[i]) != 0) k++;
        if (k == nopts || !opts[k].takes_value || i + 1 >= argc) continue;
        if (!strcmp(argv[i], name)) out[n++] = argv[i + 1];
        i++;
    }
    return n;
}

static int cmd_optimize(int argc, char** argv) {
    Opt o[] = {{"--index", 1, NULL, 0}, {"--merge", 1, NULL, 0}, {"--retrain", 0, NULL, 0},
               {"--quiet", 0, NULL, 0}, {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1] = {NULL};
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1,
                        "lance-index optimize URI [--index NAME]... [--merge N] [--retrain] [--quiet]\n"
                        "  Brings the indices up to date with the table, in this process (Lance's optimize):\n"
                        "  indexes the rows of the fragments they do not cover and commits one new version\n"
                        "  (none when there is nothing to do).  --index NAME, repeated, optimizes those indices\n"
                        "  only (default: every index).  --merge N makes the new rows and the N newest segments\n"
                        "  of each index one segment (--merge 0: a new delta segment beside the others); without\n"
                        "  it Lance decides.  --retrain trains each vector index's model again on the current\n"
                        "  rows and rebuilds the index as one segment.  Prints {\"version\": V, \"committed\": B}.\n"
                        "  SIGINT or SIGTERM cancels it at its next checkpoint, before it commits (exit status 20).",
                        &np);
    if (done >= 0) return done;
    quiet |= opt(o, no, "--quiet") != NULL;
    if (np != 1) return usage("optimize needs URI");
    LanceOptimizeIndicesOptions options = {0};
    const char* merge = opt(o, no, "--merge");
    uint64_t n = 0;
    if (merge && decimal_parse(merge, UINT32_MAX, &n) != 0)
        return usage("--merge must be a number of segments, at most 4294967295");
    options.has_num_indices_to_merge = merge != NULL;
    options.num_indices_to_merge = (uint32_t)n;
    options.retrain = opt(o, no, "--retrain") != NULL;
    const char** names = must(calloc((size_t)argc, sizeof *names));
    options.index_name_count = repeated_values(argc, argv, 2, o, no, "--index", names);
    options.index_names = options.index_name_count ? names : NULL;
    LanceDataset* ds = NULL;
    int rc = open_dataset(pos[0], NULL, &ds);
    if (rc) {
        free(names);
        return rc;
    }
    LanceIndexBuildControl control = {progress_fn(), &progress_state, cancel_on_signals()};
    uint64_t before = lance_dataset_version(ds);
    double t0 = monotonic_seconds();
    if (lance_dataset_optimize_indices_with_control(ds, &options, &control) != 0) {
        rc = lib_error("optimize");
    } else {
        uint64_t after = lance_dataset_version(ds);
        if (!quiet)
            fprintf(stderr, after != before ? "optimized and committed in %.2f s\n" : "nothing to optimize (%.2f s)\n",
                    monotonic_seconds() - t0);
        printf("{\"version\": %llu, \"committed\": %s}\n", (unsigned long long)after, after != before ? "true" : "false");
    }
    cancel_signal_stop();
    lance_dataset_close(ds);
    free(names);
    return rc;
}

/* "0.1,0.2,..." -> a malloc'd vector; NULL (after saying why) when the text
 * is not comma-separated numbers. */
static float* parse_query(const char* text, size_t* dim) {
    size_t cap = 64, n = 0;
    float* q = must(malloc(cap * sizeof *q));
    const char* p = text;
    for (;;) {
        char* end = NULL;
        float v = strtof(p, &end);
        if (end == p || (*end && *end != ',')) {
            free(q);
            usage("--query must be comma-separated numbers");
            return NULL;
        }
        if (n == cap) q = must(realloc(q, (cap *= 2) * sizeof *q));
        q[n++] = v;
        if (!*end) break;
        p = end + 1;
    }
    *dim = n;
    return q;
}

static int cmd_search(int argc, char** argv) {
    Opt o[] = {{"--column", 1, NULL, 0},  {"--query", 1, NULL, 0},   {"--k", 1, NULL, 0},
               {"--nprobes", 1, NULL, 0}, {"--refine", 1, NULL, 0},  {"--select", 1, NULL, 0},
               {"--metric", 1, NULL, 0},  {"--version", 1, NULL, 0}, {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1] = {NULL};
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
    long long k = opt(o, no, "--k") ? number(opt(o, no, "--k")) : 10;
    long long nprobes = opt(o, no, "--nprobes") ? number(opt(o, no, "--nprobes")) : 0;
    long long refine = opt(o, no, "--refine") ? number(opt(o, no, "--refine")) : 0;
    if (k <= 0 || nprobes < 0 || nprobes > UINT32_MAX || refine < 0 || refine > UINT32_MAX)
        return usage("--k, --nprobes and --refine must be numbers (k > 0)");
    LanceMetricType m = LANCE_METRIC_L2;
    const char* mt = opt(o, no, "--metric");
    if (mt && metric(mt, &m) != 0) return usage("unknown --metric %s", mt);
    size_t dim = 0;
    float* q = parse_query(qt, &dim);
    if (!q) return EXIT_USAGE;
    /* --select a,b -> a NULL-terminated list of every name given. */
    char* select = must(strdup(opt(o, no, "--select") ? opt(o, no, "--select") : "id"));
    size_t nc = 1;
    for (const char* c = select; *c; c++) nc += *c == ',';
    const char** cols = must(calloc(nc + 1, sizeof *cols));
    nc = 0;
    for (char* tok = strtok(select, ","); tok; tok = strtok(NULL, ",")) cols[nc++] = tok;
    LanceDataset* ds = NULL;
    LanceScanner* s = NULL;
    int rc = open_dataset(pos[0], opt(o, no, "--version"), &ds);
    if (rc == 0 && !(s = lance_scanner_new(ds, cols, NULL))) rc = lib_error("scanner");
    if (rc == 0 && (lance_scanner_nearest(s, column, q, dim, LANCE_DTYPE_FLOAT32, (size_t)k) != 0 ||
                    (nprobes && lance_scanner_set_nprobes(s, (uint32_t)nprobes) != 0) ||
                    (refine && lance_scanner_set_refine_factor(s, (uint32_t)refine) != 0) ||
                    (mt && lance_scanner_set_metric(s, m) != 0)))
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
        if (lance_batch_to_arrow(batch, &a, &sc) != 0) {
            rc = lib_error("reading the results");
        } else {
            print_batch(&a, &sc, header);
            header = 0;
            a.release(&a);
            sc.release(&sc);
        }
        lance_batch_free(batch);
    }
    lance_scanner_close(s);
    lance_dataset_close(ds);
    free(cols);
    free(select);
    free(q);
    return rc;
}

/* ---- distributed training: start, worker, reduce ---- */

static const char* phase_name(LanceVectorTrainingPhase phase) {
    switch (phase) {
        case LANCE_TRAINING_IVF_INIT: return "ivf_init";
        case LANCE_TRAINING_IVF: return "ivf";
        case LANCE_TRAINING_PQ_INIT: return "pq_init";
        case LANCE_TRAINING_PQ: return "pq";
        case LANCE_TRAINING_DONE: return "done";
    }
    return "unknown";
}

/* Prints where a training is, as one JSON line. */
static int print_training(const LanceVectorTraining* t) {
    LanceVectorTrainingInfo i;
    if (lance_vector_training_info(t, &i) != 0) return lib_error("training info");
    printf("{\"phase\": \"%s\", \"done\": %s, \"rounds\": %u, \"ivf_iterations\": %u, \"pq_iterations\": %u, "
           "\"dimension\": %u, \"ivf_sample_rows\": %llu, \"pq_sample_rows\": %llu, \"ivf_loss\": %.17g, "
           "\"pq_loss\": %.17g}\n",
           phase_name(i.phase), i.phase == LANCE_TRAINING_DONE ? "true" : "false", i.rounds, i.ivf_iterations,
           i.pq_iterations, i.dimension, (unsigned long long)i.ivf_sample_rows, (unsigned long long)i.pq_sample_rows,
           i.ivf_loss, i.pq_loss);
    return 0;
}

/* Writes the training's next request to `out`, or its model once done. */
static int write_training(const LanceVectorTraining* t, const char* out) {
    LanceVectorTrainingInfo i;
    if (lance_vector_training_info(t, &i) != 0) return lib_error("training info");
    uint8_t* bytes = NULL;
    size_t len = 0;
    LanceVectorModel* model = NULL;
    int rc = 0;
    if (i.phase != LANCE_TRAINING_DONE) {
        if (lance_vector_training_request(t, &bytes, &len) != 0) rc = lib_error("training request");
    } else if (lance_vector_training_model(t, &model) != 0) {
        rc = lib_error("training model");
    } else if (lance_vector_model_serialize(model, &bytes, &len) != 0) {
        rc = lib_error("serialize");
    }
    if (rc == 0) rc = write_output(out, bytes, len);
    if (rc == 0) rc = print_training(t);
    lance_free_bytes(bytes);
    lance_vector_model_free(model);
    return rc;
}

static int cmd_train_start(int argc, char** argv) {
    Opt o[] = {VECTOR_OPTS, {"--column", 1, NULL, 0}, {"--seed", 1, NULL, 0}, {"-o", 1, NULL, 0},
               {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1] = {NULL};
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1,
                        "lance-index train-start --column C -o REQUEST [--seed S] [--type IVF_PQ]\n"
                        "        [--metric l2|cosine|dot] [--partitions K] [--sub-vectors M] [--bits B]\n"
                        "        [--iterations I] [--sample-rate S]\n"
                        "  Starts a distributed training (no dataset needed): writes the first round's request\n"
                        "  to REQUEST and prints where the training is as JSON.  Send the request to every\n"
                        "  train-worker, then train-reduce their statistics.", &np);
    if (done >= 0) return done;
    const char* column = opt(o, no, "--column");
    const char* out = opt(o, no, "-o");
    if (np != 0 || !column || !out) return usage("train-start needs --column and -o");
    LanceVectorIndexParams p;
    int rc = vector_params(o, no, &p);
    if (rc) return rc;
    const char* seed_text = opt(o, no, "--seed");
    uint64_t seed = 0;
    if (seed_text && decimal_parse(seed_text, UINT64_MAX, &seed) != 0) return usage("--seed must be a number");
    LanceVectorTraining* t = NULL;
    if (lance_vector_training_new(column, &p, seed, &t) != 0) return lib_error("train-start");
    rc = write_training(t, out);
    lance_vector_training_free(t);
    return rc;
}

static int cmd_train_worker(int argc, char** argv) {
    Opt o[] = {{"--fragments", 1, NULL, 0}, {"--version", 1, NULL, 0}, {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1] = {NULL};
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1,
                        "lance-index train-worker URI [--fragments 0,1,...] [--version V]\n"
                        "  A distributed training's worker over some fragments (all without --fragments).\n"
                        "  Reads lines \"REQUEST STATS\" (two file paths) from stdin; for each, answers the\n"
                        "  request with this worker's statistics in STATS and prints \"ok\", or prints\n"
                        "  \"error EXIT MESSAGE\" (EXIT as the exit status table) and goes on.  Ends at the end\n"
                        "  of input.  It keeps its sample between lines: keep one running for the whole\n"
                        "  training (a new one over the same fragments can take over any round).\n"
                        "  SIGINT or SIGTERM during a round cancels it: \"error 20 ...\", exit status 20.", &np);
    if (done >= 0) return done;
    if (np != 1) return usage("train-worker needs URI");
    uint32_t* frags = NULL;
    size_t nfrags = 0;
    const char* ft = opt(o, no, "--fragments");
    int rc = 0;
    if (ft && (rc = fragment_list("--fragments", ft, &frags, &nfrags)) != 0) return rc;
    LanceDataset* ds = NULL;
    LanceVectorTrainingWorker* w = NULL;
    if ((rc = open_dataset(pos[0], opt(o, no, "--version"), &ds)) != 0) goto out;
    if (lance_vector_training_worker_new(ds, frags, nfrags, &w) != 0) {
        rc = lib_error("train-worker");
        goto out;
    }
    rc = training_serve(w, stdin, stdout, exit_status, EXIT_USAGE);
out:
    lance_vector_training_worker_free(w);
    lance_dataset_close(ds);
    free(frags);
    return rc;
}

static int cmd_train_reduce(int argc, char** argv) {
    Opt o[] = {{"-o", 1, NULL, 0}, {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    enum { MAX_STATS = 4096 };
    const char* pos[1 + MAX_STATS];
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1 + MAX_STATS,
                        "lance-index train-reduce REQUEST STATS... -o OUT\n"
                        "  Reduces one round: every worker's statistics for REQUEST.  Writes the next request\n"
                        "  to OUT or, when the training is done, the model (as lance-index train writes it,\n"
                        "  for build --model), and prints where the training is as JSON.  Statistics of\n"
                        "  another request exit 25, two covering one fragment 23, a worker's missing 11.", &np);
    if (done >= 0) return done;
    const char* out = opt(o, no, "-o");
    if (np < 2 || !out) return usage("train-reduce needs REQUEST, the statistics files and -o");
    size_t len = 0;
    uint8_t* request = read_whole_file(pos[0], &len);
    if (!request) return usage("cannot read %s: %s", pos[0], strerror(errno));
    LanceVectorTraining* t = NULL;
    const uint8_t** ptrs = NULL;
    size_t* lens = NULL;
    size_t n = (size_t)(np - 1);
    int rc = 0;
    if (lance_vector_training_resume(request, len, &t) != 0) {
        rc = lib_error("train-reduce");
    } else if ((rc = read_segments(pos + 1, n, &ptrs, &lens)) == 0) {
        if (lance_vector_training_reduce(t, ptrs, lens, n) != 0)
            rc = lib_error("train-reduce");
        else
            rc = write_training(t, out);
    }
    if (ptrs) free_segments(ptrs, lens, n);
    lance_vector_training_free(t);
    free(request);
    return rc;
}

static int cmd_cleanup(int argc, char** argv) {
    Opt o[] = {{"--older-than", 1, NULL, 0}, {"--delete-unverified", 0, NULL, 0}, {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1] = {NULL};
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1,
                        "lance-index cleanup URI [--older-than S] [--delete-unverified]\n"
                        "  Lance's cleanup: removes the versions older than S seconds (default 604800, 7 days;\n"
                        "  never the latest) and the files no remaining version references, among them the\n"
                        "  segments of builds that were never committed.  Unreferenced files younger than 7\n"
                        "  days are kept unless --delete-unverified is given: then no build of this dataset may\n"
                        "  be running, and on s3:// the incomplete multipart uploads under the dataset older\n"
                        "  than S (left by killed writers) are aborted too (\"uploads_aborted\"; null on stores\n"
                        "  where lance-c cannot list them: see docs/object-storage.md).  Prints what was removed\n"
                        "  as JSON.", &np);
    if (done >= 0) return done;
    if (np != 1) return usage("cleanup needs URI");
    const char* older = opt(o, no, "--older-than");
    /* Any uint64_t: a cutoff before 1970 removes nothing (lance.h). */
    uint64_t seconds = 7 * 24 * 3600;
    if (older && decimal_parse(older, UINT64_MAX, &seconds) != 0)
        return usage("--older-than must be a number of seconds, at most 18446744073709551615");
    LanceDataset* ds = NULL;
    int rc = open_dataset(pos[0], NULL, &ds);
    if (rc) return rc;
    LanceCleanupStats st;
    int unverified = opt(o, no, "--delete-unverified") != NULL;
    if (lance_dataset_cleanup_old_versions(ds, seconds, unverified, &st) != 0) {
        rc = lib_error("cleanup");
        lance_dataset_close(ds);
        return rc;
    }
    char uploads[32] = "0";
    uint64_t aborted = 0;
    if (!unverified) {
        snprintf(uploads, sizeof uploads, "null");
    } else if (lance_dataset_abort_incomplete_uploads(ds, seconds, &aborted) == 0) {
        snprintf(uploads, sizeof uploads, "%llu", (unsigned long long)aborted);
    } else if (lance_last_error_code() == LANCE_ERR_NOT_SUPPORTED) {
        const char* why = lance_last_error_message();
        fprintf(stderr, "lance-index: incomplete uploads not checked: %s\n", why ? why : "");
        lance_free_string(why);
        snprintf(uploads, sizeof uploads, "null");
    } else {
        rc = lib_error("aborting incomplete uploads");
    }
    if (rc == 0)
        printf("{\"bytes_removed\": %llu, \"old_versions\": %llu, \"data_files_removed\": %llu, "
               "\"transaction_files_removed\": %llu, \"index_files_removed\": %llu, \"deletion_files_removed\": %llu, "
               "\"uploads_aborted\": %s}\n",
               (unsigned long long)st.bytes_removed, (unsigned long long)st.old_versions,
               (unsigned long long)st.data_files_removed, (unsigned long long)st.transaction_files_removed,
               (unsigned long long)st.index_files_removed, (unsigned long long)st.deletion_files_removed, uploads);
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
