/* Structure-aware fuzzing of the distributed-build API (issue 17).
 *
 *   fuzz_distributed corpus DIR
 *       writes a seed corpus from the library's own outputs: DIR/segment/
 *       (segment metadata of every index type) and DIR/model/ (models).
 *   fuzz_distributed run TARGET [--execs N] [--seconds S] [--seed N]
 *                    [--start EXEC | --only EXEC] [--corpus DIR] [--findings DIR]
 *       TARGET segment: lance_index_segment_metadata_parse and every getter
 *       TARGET model:   lance_vector_model_parse, info, fingerprint, centroid
 *                       and codebook export, and the byte-exact round trip
 *       TARGET commit:  commits of mutated real IVF_FLAT segments (and
 *                       splices with segments of other types and models)
 *
 * Coverage-guided fuzzing cannot see inside the Rust library as built (it
 * is not instrumented), so the mutations know the formats instead: the
 * protobuf wire format of the segment metadata, its Roaring fragment bitmap
 * and UUID, and the model layout behind its SHA-256 (re-signed, so the
 * edits reach the parser).  Execution N of a seed is reproducible alone
 * (--only N), and a run resumes after a crash with --start N+1.  A
 * finding (a crash, LANCE_ERR_INTERNAL, LANCE_ERR_PANIC or an undocumented
 * code, a broken invariant, an error message over 64 KiB, a dataset broken
 * by an accepted commit or moved by a refused one) is saved under the
 * findings directory and makes the exit status 1. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mutate.h"
#include "segment_params.h"
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/common_interface_defs.h>
#endif
#include "knn_kit.h"
#include "test_util.h"

#define MAX_INPUTS 64
#define K 10
/* Fragment ids the getter check fetches at most (a bitmap of a few bytes
   can claim 2^32). */
#define MAX_FETCHED_IDS (1u << 16)
/* An error message longer than this is a finding: it is for a person. */
#define MAX_MESSAGE_BYTES 65536

typedef struct {
    int count;
    FzBuf items[MAX_INPUTS];
    char names[MAX_INPUTS][64];
} Corpus;

typedef struct {
    const char* target;
    uint64_t seed;
    long execs;
    double seconds;
    long only;
    long start;
    const char* corpus_dir;
    const char* findings_dir;
} Options;

static Options opt;
static long findings;
/* Refusals counted by code: upstream's codes 0-9 in slots 0-9, this
 * library's codes 1000-1006 in slots 10-16, any other code in OTHER_CODE. */
#define CODE_SLOTS 18
#define OTHER_CODE (CODE_SLOTS - 1)
static long refused_by_code[CODE_SLOTS];

static int code_slot(int code) {
    if (code >= LANCE_OK && code <= LANCE_ERR_PANIC) return code;
    if (code >= LANCE_ERR_CANCELLED && code <= LANCE_ERR_INCOMPLETE_SEGMENT) return 10 + (code - LANCE_ERR_CANCELLED);
    return OTHER_CODE;
}
static long accepted;

/* ---- findings, and crashes saved by a signal handler (or the sanitizers) ---- */

static FzBuf current_input; /* what the running execution feeds the library */
static char crash_path[1024];

static void on_crash(int sig) {
    int fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, current_input.data, current_input.len);
        (void)w;
        close(fd);
    }
    static const char msg[] = "fuzz: crashed; the input is saved as ";
    ssize_t w = write(2, msg, sizeof msg - 1);
    w = write(2, crash_path, strlen(crash_path));
    w = write(2, "\n", 1);
    (void)w;
    if (sig) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

#ifdef __SANITIZE_ADDRESS__
static void save_input_on_death(void) { on_crash(0); }
#endif

static void begin_exec(long exec) {
    snprintf(crash_path, sizeof crash_path, "%s/crash-%s-seed%llu-exec%ld.bin", opt.findings_dir, opt.target,
             (unsigned long long)opt.seed, exec);
}

/* Records a finding with the error it came with (`msg` may be NULL): the
   input as .bin, what happened as .txt. */
static void finding_with_error(long exec, const FzLog* log, const char* what, LanceErrorCode code, const char* msg) {
    findings++;
    char path[1100];
    snprintf(path, sizeof path, "%s/%s-seed%llu-exec%ld", opt.findings_dir, opt.target, (unsigned long long)opt.seed,
             exec);
    size_t base = strlen(path);
    snprintf(path + base, sizeof path - base, ".bin");
    if (write_whole_file(path, current_input.data, current_input.len) != 0)
        fprintf(stderr, "fuzz: cannot write %s\n", path);
    snprintf(path + base, sizeof path - base, ".txt");
    FILE* f = fopen(path, "w");
    char text[4096];
    snprintf(
        text, sizeof text,
        "finding: %s\nlast error: [%d] %.1000s\nmutations: %s\nreproduce: fuzz_distributed run %s --seed %llu --only %ld\n",
        what, (int)code, msg ? msg : "(none)", log->text, opt.target, (unsigned long long)opt.seed, exec);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    fprintf(stderr, "fuzz: FINDING at exec %ld, saved as %s\n%s", exec, path, text);
}

/* Records a finding with this thread's pending error, which it takes (code
   first, then the message). */
static void finding(long exec, const FzLog* log, const char* what) {
    LanceErrorCode code = lance_last_error_code();
    const char* msg = lance_last_error_message();
    finding_with_error(exec, log, what, code, msg);
    lance_free_string(msg);
}

/* Takes this thread's pending error and records a finding when its message
   is longer than a person reads; returns whether it did. */
static int found_long_message(long exec, const FzLog* log, const char* what) {
    LanceErrorCode code = lance_last_error_code();
    const char* msg = lance_last_error_message();
    int too_long = msg && strlen(msg) > MAX_MESSAGE_BYTES;
    if (too_long) finding_with_error(exec, log, what, code, msg);
    lance_free_string(msg);
    return too_long;
}

/* A documented refusal: a LanceErrorCode other than OK, INTERNAL and PANIC. */
static int documented_refusal(int code) {
    return (code >= LANCE_ERR_INVALID_ARGUMENT && code <= LANCE_ERR_COMMIT_CONFLICT && code != LANCE_ERR_INTERNAL) ||
           (code >= LANCE_ERR_CANCELLED && code <= LANCE_ERR_INCOMPLETE_SEGMENT);
}

/* ---- corpus files ---- */

static int name_cmp(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static int load_corpus(const char* dir, const char* kind, Corpus* out) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, kind);
    DIR* d = opendir(path);
    if (!d) return -1;
    char* names[MAX_INPUTS];
    int n = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL && n < MAX_INPUTS) {
        size_t len = strlen(e->d_name);
        if (len > 4 && len < 64 && strcmp(e->d_name + len - 4, ".bin") == 0) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], name_cmp); /* readdir's order is not stable */
    for (int i = 0; i < n; i++) {
        char file[1200];
        snprintf(file, sizeof file, "%s/%s", path, names[i]);
        size_t len = 0;
        unsigned char* bytes = read_whole_file(file, &len);
        if (bytes) {
            fz_buf_set(&out->items[out->count], bytes, len);
            snprintf(out->names[out->count], sizeof out->names[0], "%s", names[i]);
            out->count++;
            free(bytes);
        }
        free(names[i]);
    }
    return out->count > 0 ? 0 : -1;
}

static void free_corpus(Corpus* c) {
    for (int i = 0; i < c->count; i++) fz_buf_free(&c->items[i]);
    c->count = 0;
}

/* ---- target (a): segment metadata ---- */

/* The execution's input starts as a corpus entry. */
static void start_from_corpus(FzRng* rng, const Corpus* corpus, FzLog* log) {
    int base = (int)fz_below(rng, (uint64_t)corpus->count);
    fz_log(log, "base %s", corpus->names[base]);
    fz_buf_set(&current_input, corpus->items[base].data, corpus->items[base].len);
}

/* A parser refused the input: documented as INVALID_ARGUMENT, no handle. */
static void parse_refused(long exec, const FzLog* log, int handle_written) {
    int code = lance_last_error_code();
    refused_by_code[code_slot(code)]++;
    if (code != LANCE_ERR_INVALID_ARGUMENT) finding(exec, log, "parse refused with a code other than INVALID_ARGUMENT");
    else if (handle_written) finding(exec, log, "parse failed but wrote a handle");
    else found_long_message(exec, log, "parse refused with an error message over 64 KiB");
}

/* Every getter on parsed metadata; the broken invariant, or NULL. */
static const char* check_metadata_getters(const LanceIndexSegmentMetadata* md) {
    uint8_t uuid[16];
    if (lance_index_segment_metadata_uuid(md, uuid) != 0) return "uuid getter failed";
    const char* name = lance_index_segment_metadata_name(md);
    const char* type = lance_index_segment_metadata_index_type_name(md);
    if (!name || !type) return "name or index_type is NULL";
    if (strlen(name) > current_input.len || strlen(type) > 64) return "name or index_type longer than possible";
    const char* fingerprint = lance_index_segment_metadata_model_fingerprint(md);
    if (!fingerprint && lance_last_error_code() != LANCE_OK) return "fingerprint NULL with an error";
    if (fingerprint && strlen(fingerprint) > current_input.len) return "fingerprint longer than the input";
    (void)lance_index_segment_metadata_dataset_version(md);
    if (lance_last_error_code() != LANCE_OK) return "dataset_version getter failed";
    /* -1 on error; a negative version the bytes record is returned as is, with LANCE_OK. */
    if (lance_index_segment_metadata_index_version(md) < 0 && lance_last_error_code() != LANCE_OK)
        return "index_version getter failed";
    int64_t ms;
    bool present;
    if (lance_index_segment_metadata_created_at_ms(md, &ms, &present) != 0) return "created_at getter failed";

    size_t count = 0, got = 0;
    if (lance_index_segment_metadata_field_ids(md, NULL, 0, &count) != 0) return "field_ids count failed";
    int32_t* fields = malloc(sizeof(int32_t) * (count ? count : 1));
    const char* broken = NULL;
    if (lance_index_segment_metadata_field_ids(md, fields, count, &got) != 0 || got != count)
        broken = "field_ids with exact capacity";
    else if (count && (lance_index_segment_metadata_field_ids(md, fields, count - 1, &got) != -1 ||
                       lance_last_error_code() != LANCE_ERR_INVALID_ARGUMENT))
        broken = "field_ids with short capacity is not INVALID_ARGUMENT";
    free(fields);
    if (broken) return broken;

    if (lance_index_segment_metadata_fragment_ids(md, NULL, 0, &count) != 0) return "fragment_ids count failed";
    if (count > MAX_FETCHED_IDS) return NULL; /* the count is all a caller could ask for */
    uint32_t* fragment_ids = malloc(sizeof(uint32_t) * (count ? count : 1));
    if (lance_index_segment_metadata_fragment_ids(md, fragment_ids, count, &got) != 0 || got != count)
        broken = "fragment_ids with exact capacity";
    for (size_t i = 1; !broken && i < count; i++)
        if (fragment_ids[i] <= fragment_ids[i - 1]) broken = "fragment_ids not strictly ascending";
    if (!broken && count &&
        (lance_index_segment_metadata_fragment_ids(md, fragment_ids, count - 1, &got) != -1 ||
         lance_last_error_code() != LANCE_ERR_INVALID_ARGUMENT))
        broken = "fragment_ids with short capacity is not INVALID_ARGUMENT";
    free(fragment_ids);
    if (broken) return broken;

    uint64_t files = lance_index_segment_metadata_file_count(md);
    if (lance_last_error_code() != LANCE_OK) return "file_count failed";
    for (uint64_t i = 0; i < files; i++) {
        const char* path = NULL;
        uint64_t size = 0;
        if (lance_index_segment_metadata_file_at(md, (size_t)i, &path, &size) != 0 || !path)
            return "file_at within the count failed";
        if (strlen(path) > current_input.len) return "file path longer than the input";
    }
    const char* path = NULL;
    uint64_t size = 0;
    if (lance_index_segment_metadata_file_at(md, (size_t)files, &path, &size) != -1 ||
        lance_last_error_code() != LANCE_ERR_INVALID_ARGUMENT)
        return "file_at past the count is not INVALID_ARGUMENT";
    return NULL;
}

static void mutate_segment(FzRng* rng, FzBuf* buf, const Corpus* donors, FzLog* log) {
    int rounds = 1 + (int)fz_below(rng, 3);
    const FzBuf* donor = &donors->items[fz_below(rng, (uint64_t)donors->count)];
    for (int r = 0; r < rounds; r++) {
        if (fz_chance(rng, 70) && fz_mutate_protobuf(rng, buf, donors->items, donors->count, log) == 0) continue;
        fz_mutate_bytes(rng, buf, donor, log);
    }
}

/* ---- target (b): models ---- */

static const char* check_model(const LanceVectorModel* m) {
    LanceVectorModelInfo info;
    if (lance_vector_model_info(m, &info) != 0) return "info failed";
    if (info.dimension == 0 || info.num_partitions == 0) return "info: zero dimension or partitions";
    if ((uint64_t)info.dimension * info.num_partitions * 4 > current_input.len)
        return "info: more centroids than bytes";
    const char* fp = lance_vector_model_fingerprint(m);
    if (!fp) return "fingerprint failed";
    size_t fp_len = strlen(fp);
    int hex = fp_len == 64;
    for (size_t i = 0; hex && i < fp_len; i++) hex = strchr("0123456789abcdef", fp[i]) != NULL;
    lance_free_string(fp);
    if (!hex) return "fingerprint is not 64 hex digits";

    struct ArrowArray array;
    struct ArrowSchema schema;
    if (lance_vector_model_centroids(m, &array, &schema) != 0) return "centroids export failed";
    int shape = array.length == (int64_t)info.num_partitions && array.n_children == 1 &&
                array.children[0]->length == (int64_t)info.num_partitions * info.dimension;
    array.release(&array);
    schema.release(&schema);
    if (!shape) return "centroids export has the wrong shape";
    int rc = lance_vector_model_codebook(m, &array, &schema);
    if (info.has_pq_codebook) {
        if (rc != 0) return "codebook export failed on a model with a codebook";
        shape = info.num_bits < 31 && array.length == (int64_t)1 << info.num_bits && array.n_children == 1;
        array.release(&array);
        schema.release(&schema);
        if (!shape) return "codebook export has the wrong shape";
    } else if (rc != -1 || lance_last_error_code() != LANCE_ERR_INVALID_ARGUMENT) {
        return "codebook of a model without one is not INVALID_ARGUMENT";
    }
    uint8_t* bytes = NULL;
    size_t len = 0;
    if (lance_vector_model_serialize(m, &bytes, &len) != 0) return "serialize failed";
    int same = len == current_input.len && memcmp(bytes, current_input.data, len) == 0;
    lance_free_bytes(bytes);
    if (!same) return "serialize(parse(bytes)) differs from the bytes";
    return NULL;
}

/* One execution of target (a) or (b): a mutated corpus entry through the
   parser, then through every accessor when it is accepted. */
static void exec_parser(long exec, const Corpus* corpus, int is_model) {
    FzRng rng;
    fz_rng_init(&rng, opt.seed, (uint64_t)exec);
    FzLog log = {{0}, 0};
    start_from_corpus(&rng, corpus, &log);
    if (is_model) {
        const FzBuf* donor = &corpus->items[fz_below(&rng, (uint64_t)corpus->count)];
        int rounds = 1 + (int)fz_below(&rng, 2);
        for (int r = 0; r < rounds; r++) fz_mutate_model(&rng, &current_input, donor, &log);
    } else {
        mutate_segment(&rng, &current_input, corpus, &log);
    }
    LanceVectorModel* m = NULL;
    LanceIndexSegmentMetadata* md = NULL;
    int rc = is_model ? lance_vector_model_parse(current_input.data, current_input.len, &m)
                      : lance_index_segment_metadata_parse(current_input.data, current_input.len, &md);
    if (rc != 0) {
        parse_refused(exec, &log, m != NULL || md != NULL);
        return;
    }
    accepted++;
    const char* broken = is_model ? check_model(m) : check_metadata_getters(md);
    if (broken) finding(exec, &log, broken);
    lance_vector_model_free(m);
    lance_index_segment_metadata_free(md);
}

/* ---- shared: a small dataset and real segments ---- */

#define ROWS 2000
#define DIM 8
#define FRAGS 4
#define PARTITIONS 4

static TuData data;

static LanceVectorModel* train_model(LanceDataset* ds, int32_t type, int32_t metric, uint32_t sub_vectors,
                                     uint32_t bits) {
    LanceVectorIndexParams p = {0};
    p.index_type = (LanceVectorIndexType)type;
    p.metric = (LanceMetricType)metric;
    p.num_partitions = PARTITIONS;
    p.num_sub_vectors = sub_vectors;
    p.num_bits = bits;
    LanceVectorModel* m = NULL;
    if (lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &m) != 0) return NULL;
    return m;
}

/* Runs and frees a builder (NULL = its creation failed); the metadata
   bytes go to `out`. */
static int execute_into(LanceIndexSegmentBuilder* b, FzBuf* out) {
    if (!b) return -1;
    uint8_t* bytes = NULL;
    size_t len = 0;
    int rc = lance_index_segment_builder_execute_uncommitted(b, &bytes, &len);
    lance_index_segment_builder_free(b);
    if (rc == 0) fz_buf_set(out, bytes, len);
    lance_free_bytes(bytes);
    return rc;
}

/* One uncommitted vector segment over `fragment_ids` (model NULL = trained locally). */
static int vector_segment(LanceDataset* ds, int32_t type, const LanceVectorModel* model, const uint32_t* fragment_ids,
                          size_t n, int uuid_seed, FzBuf* out) {
    LanceVectorIndexParams p = {0};
    p.index_type = (LanceVectorIndexType)type;
    p.num_partitions = PARTITIONS;
    p.num_sub_vectors = 2;
    if (model) {
        LanceVectorModelInfo info;
        if (lance_vector_model_info(model, &info) != 0) return -1;
        p.metric = info.metric;
        p.num_bits = info.num_bits;
    }
    uint8_t uuid[16];
    tu_uuid(uuid_seed, uuid);
    /* With a model the builder never trains; without one it trains locally. */
    LanceIndexSegmentBuildOptions o = {.fragment_ids = fragment_ids, .fragment_count = n, .index_uuid = uuid};
    return execute_into(vector_segment_builder_new(ds, "vec", NULL, &p, &o, model), out);
}

static int scalar_segment(LanceDataset* ds, const char* column, int32_t type, FzBuf* out) {
    return execute_into(lance_index_segment_builder_new_scalar(ds, column, NULL, type, NULL, NULL), out);
}

static int save_model(const LanceVectorModel* m, const char* path) {
    uint8_t* bytes = NULL;
    size_t len = 0;
    if (!m || lance_vector_model_serialize(m, &bytes, &len) != 0) return -1;
    int rc = write_whole_file(path, bytes, len);
    lance_free_bytes(bytes);
    return rc;
}

/* ---- mode: corpus ---- */

static int make_corpus(const char* out_dir) {
    char path[1200], uri[1100];
    snprintf(path, sizeof path, "%s/segment", out_dir);
    mkdir(out_dir, 0755);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/model", out_dir);
    mkdir(path, 0755);
    char* tmp = tu_temp_dir("fuzz-corpus");
    snprintf(uri, sizeof uri, "%s/ds.lance", tmp);
    LanceDataset* ds = tu_write(uri, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS / FRAGS);
    if (!ds) return -1;
    LanceVectorModel* flat = train_model(ds, LANCE_INDEX_IVF_FLAT, LANCE_METRIC_L2, 0, 0);
    LanceVectorModel* pq = train_model(ds, LANCE_INDEX_IVF_PQ, LANCE_METRIC_L2, 2, 8);
    LanceVectorModel* pq4 = train_model(ds, LANCE_INDEX_IVF_PQ, LANCE_METRIC_COSINE, 4, 4);
    LanceVectorModel* dot = train_model(ds, LANCE_INDEX_IVF_FLAT, LANCE_METRIC_DOT, 0, 0);
    int failed = 0;
    const struct {
        const char* name;
        const LanceVectorModel* model;
    } models[] = {{"ivf_flat_l2", flat}, {"ivf_pq_l2_2x8", pq}, {"ivf_pq_cosine_4x4", pq4}, {"ivf_flat_dot", dot}};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        snprintf(path, sizeof path, "%s/model/%s.bin", out_dir, models[i].name);
        failed |= save_model(models[i].model, path);
    }
    uint32_t f0[] = {0}, f1[] = {1}, f2[] = {2}, f3[] = {3}, f01[] = {0, 1};
    const struct {
        const char* name;
        int32_t type;
        const LanceVectorModel* model;
        const uint32_t* fragment_ids;
        size_t n;
    } vectors[] = {
        {"ivf_flat_shared_f0", LANCE_INDEX_IVF_FLAT, flat, f0, 1},
        {"ivf_flat_shared_f01", LANCE_INDEX_IVF_FLAT, flat, f01, 2},
        {"ivf_flat_local_f1", LANCE_INDEX_IVF_FLAT, NULL, f1, 1},
        {"ivf_pq_shared_f2", LANCE_INDEX_IVF_PQ, pq, f2, 1},
        {"ivf_sq_local_f3", LANCE_INDEX_IVF_SQ, NULL, f3, 1},
        {"ivf_hnsw_sq_local_f0", LANCE_INDEX_IVF_HNSW_SQ, NULL, f0, 1},
    };
    FzBuf buf = {0};
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        snprintf(path, sizeof path, "%s/segment/%s.bin", out_dir, vectors[i].name);
        if (vector_segment(ds, vectors[i].type, vectors[i].model, vectors[i].fragment_ids, vectors[i].n, 900 + (int)i,
                           &buf) != 0) {
            fprintf(stderr, "corpus: %s failed\n", vectors[i].name);
            failed = 1;
            continue;
        }
        failed |= write_whole_file(path, buf.data, buf.len) != 0;
    }
    const struct {
        const char* name;
        const char* column;
        int32_t type;
    } scalars[] = {{"btree_id", "id", LANCE_SCALAR_BTREE},
                   {"bitmap_tag", "tag", LANCE_SCALAR_BITMAP},
                   {"inverted_tag", "tag", LANCE_SCALAR_INVERTED}};
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        snprintf(path, sizeof path, "%s/segment/%s.bin", out_dir, scalars[i].name);
        if (scalar_segment(ds, scalars[i].column, scalars[i].type, &buf) != 0) {
            fprintf(stderr, "corpus: %s failed\n", scalars[i].name);
            failed = 1;
            continue;
        }
        failed |= write_whole_file(path, buf.data, buf.len) != 0;
    }
    fz_buf_free(&buf);
    lance_vector_model_free(flat);
    lance_vector_model_free(pq);
    lance_vector_model_free(pq4);
    lance_vector_model_free(dot);
    lance_dataset_close(ds);
    tu_remove_tree(tmp);
    free(tmp);
    if (!failed) printf("corpus written to %s\n", out_dir);
    return failed ? 2 : 0;
}

/* ---- target (c): commits of mutated segments ---- */

/* The seeds: real uncommitted segments of the template dataset. */
enum { SEED_SINGLE = 0, SEED_PAIR = 4, SEED_LOCAL = 6, SEED_PQ = 7, SEED_COUNT = 8 };

typedef struct {
    uint8_t uuid[16];
    uint32_t fragment_ids[FRAGS];
    size_t frag_count;
    int exact; /* IVF_FLAT: probing every partition is exact */
} Seed;

typedef struct {
    char template_uri[1100];
    char work_uri[1100];
    char* dir;
    Seed seeds[SEED_COUNT];
    FzBuf seed_bytes[SEED_COUNT]; /* seeds[i]'s metadata */
    uint64_t base_version;
} CommitWorld;

static CommitWorld world;

/* The work dataset back to the template: one version, no index. */
static int restore_work(void) {
    tu_remove_tree(world.work_uri);
    return tu_copy_tree(world.template_uri, world.work_uri);
}

static int describe_seed(Seed* s, const FzBuf* bytes) {
    LanceIndexSegmentMetadata* md = NULL;
    if (lance_index_segment_metadata_parse(bytes->data, bytes->len, &md) != 0) return -1;
    int rc = lance_index_segment_metadata_uuid(md, s->uuid);
    rc |= lance_index_segment_metadata_fragment_ids(md, s->fragment_ids, FRAGS, &s->frag_count);
    s->exact = strcmp(lance_index_segment_metadata_index_type_name(md), "IVF_FLAT") == 0;
    lance_index_segment_metadata_free(md);
    return rc;
}

static int setup_commit_world(void) {
    world.dir = tu_temp_dir("fuzz-commit");
    if (!world.dir) return -1;
    snprintf(world.template_uri, sizeof world.template_uri, "%s/template.lance", world.dir);
    snprintf(world.work_uri, sizeof world.work_uri, "%s/work.lance", world.dir);
    LanceDataset* ds = tu_write(world.template_uri, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS / FRAGS);
    if (!ds) return -1;
    world.base_version = lance_dataset_version(ds);
    LanceVectorModel* flat = train_model(ds, LANCE_INDEX_IVF_FLAT, LANCE_METRIC_L2, 0, 0);
    LanceVectorModel* pq = train_model(ds, LANCE_INDEX_IVF_PQ, LANCE_METRIC_L2, 2, 8);
    int rc = flat && pq ? 0 : -1;
    for (int i = 0; rc == 0 && i < FRAGS; i++) {
        uint32_t frag = (uint32_t)i;
        rc = vector_segment(ds, LANCE_INDEX_IVF_FLAT, flat, &frag, 1, 1 + i, &world.seed_bytes[SEED_SINGLE + i]);
    }
    uint32_t f01[] = {0, 1}, f23[] = {2, 3}, f1[] = {1}, f2[] = {2};
    if (rc == 0) rc = vector_segment(ds, LANCE_INDEX_IVF_FLAT, flat, f01, 2, 5, &world.seed_bytes[SEED_PAIR]);
    if (rc == 0) rc = vector_segment(ds, LANCE_INDEX_IVF_FLAT, flat, f23, 2, 6, &world.seed_bytes[SEED_PAIR + 1]);
    if (rc == 0) rc = vector_segment(ds, LANCE_INDEX_IVF_FLAT, NULL, f1, 1, 7, &world.seed_bytes[SEED_LOCAL]);
    if (rc == 0) rc = vector_segment(ds, LANCE_INDEX_IVF_PQ, pq, f2, 1, 8, &world.seed_bytes[SEED_PQ]);
    for (int i = 0; rc == 0 && i < SEED_COUNT; i++) rc = describe_seed(&world.seeds[i], &world.seed_bytes[i]);
    lance_vector_model_free(flat);
    lance_vector_model_free(pq);
    lance_dataset_close(ds);
    if (rc != 0) return -1;
    return restore_work();
}

static void free_commit_world(void) {
    for (int i = 0; i < SEED_COUNT; i++) fz_buf_free(&world.seed_bytes[i]);
    if (world.dir) tu_remove_tree(world.dir);
    free(world.dir);
}

/* The seed a committed segment is, unchanged in what the search depends
   on (UUID, fragments, type, files), or -1 when the mutation changed it. */
static int faithful_seed(const FzBuf* bytes) {
    LanceIndexSegmentMetadata* md = NULL;
    if (lance_index_segment_metadata_parse(bytes->data, bytes->len, &md) != 0) return -1;
    uint8_t uuid[16];
    uint32_t fragment_ids[FRAGS + 1];
    size_t count = 0;
    int found = -1;
    if (lance_index_segment_metadata_uuid(md, uuid) == 0 &&
        lance_index_segment_metadata_fragment_ids(md, NULL, 0, &count) == 0 && count <= FRAGS &&
        lance_index_segment_metadata_fragment_ids(md, fragment_ids, FRAGS, &count) == 0) {
        for (int i = 0; i < SEED_COUNT; i++) {
            const Seed* s = &world.seeds[i];
            if (memcmp(s->uuid, uuid, 16) != 0 || s->frag_count != count ||
                memcmp(s->fragment_ids, fragment_ids, count * sizeof fragment_ids[0]) != 0)
                continue;
            LanceIndexSegmentMetadata* orig = NULL;
            if (lance_index_segment_metadata_parse(world.seed_bytes[i].data, world.seed_bytes[i].len, &orig) != 0)
                break;
            int same = strcmp(lance_index_segment_metadata_index_type_name(md),
                              lance_index_segment_metadata_index_type_name(orig)) == 0 &&
                       lance_index_segment_metadata_file_count(md) == lance_index_segment_metadata_file_count(orig);
            for (uint64_t f = 0; same && f < lance_index_segment_metadata_file_count(md); f++) {
                const char *pa, *pb;
                uint64_t sa, sb;
                same = lance_index_segment_metadata_file_at(md, (size_t)f, &pa, &sa) == 0 &&
                       lance_index_segment_metadata_file_at(orig, (size_t)f, &pb, &sb) == 0 && strcmp(pa, pb) == 0 &&
                       sa == sb;
            }
            lance_index_segment_metadata_free(orig);
            if (same) found = i;
            break;
        }
    }
    lance_index_segment_metadata_free(md);
    return found;
}

/* k-NN on the committed index: every query answers k rows; with `exact`
   (only faithful IVF_FLAT segments) they equal brute force.  Returns what
   is broken, or NULL. */
static const char* knn_broken(LanceDataset* ds, int exact, int* out_mismatches) {
    *out_mismatches = 0;
    for (int q = 0; q < 3; q++) {
        const float* query = data.vectors + (int64_t)((q * 611 + 17) % ROWS) * DIM;
        int64_t got[K], truth[K];
        int n = kk_ids(ds, query, DIM, K, 64, 0, got);
        if (n < 0) return "k-NN fails after an accepted commit";
        if (n != K) return "k-NN returns fewer than k rows after an accepted commit";
        tu_brute_force_knn(&data, query, K, truth);
        if (memcmp(got, truth, sizeof got) != 0) (*out_mismatches)++;
    }
    if (exact && *out_mismatches) return "k-NN differs from brute force after an accepted commit of faithful segments";
    const char* json = lance_dataset_index_coverage_json(ds, "vec_idx");
    if (!json) return "lance_dataset_index_coverage_json fails after an accepted commit";
    lance_free_string(json);
    json = lance_dataset_index_segments_json(ds);
    if (!json) return "lance_dataset_index_segments_json fails after an accepted commit";
    lance_free_string(json);
    return NULL;
}

static long accepted_unfaithful, accepted_unfaithful_wrong;

/* The set as one file: "LCFZSET1", the count, then each length and bytes. */
static void serialize_set(const FzBuf* set, int count) {
    uint8_t hdr[12] = {'L', 'C', 'F', 'Z', 'S', 'E', 'T', '1'};
    memcpy(hdr + 8, &count, 4);
    fz_buf_set(&current_input, hdr, sizeof hdr);
    for (int i = 0; i < count; i++) {
        uint32_t len = (uint32_t)set[i].len;
        fz_buf_append(&current_input, (const uint8_t*)&len, 4);
        fz_buf_append(&current_input, set[i].data, set[i].len);
    }
}

static void exec_commit(long exec, const Corpus* foreign) {
    FzRng rng;
    fz_rng_init(&rng, opt.seed, (uint64_t)exec);
    FzLog log = {{0}, 0};
    int picks[FRAGS + 1], count = 0;
    switch (fz_below(&rng, 4)) {
    case 0:
    case 1: /* single-fragment segments */
        for (int i = 0; i < FRAGS; i++)
            if (fz_chance(&rng, 75)) picks[count++] = SEED_SINGLE + i;
        break;
    case 2: /* the two pairs */
        for (int i = 0; i < 2; i++)
            if (fz_chance(&rng, 80)) picks[count++] = SEED_PAIR + i;
        break;
    default: /* anything, overlaps and other models included */
        count = 1 + (int)fz_below(&rng, 4);
        for (int i = 0; i < count; i++) picks[i] = (int)fz_below(&rng, SEED_COUNT);
        break;
    }
    if (count == 0) picks[count++] = SEED_SINGLE + (int)fz_below(&rng, FRAGS);
    FzBuf set[FRAGS + 1] = {{0}};
    for (int i = 0; i < count; i++) {
        fz_log(&log, "seed%d", picks[i]);
        fz_buf_set(&set[i], world.seed_bytes[picks[i]].data, world.seed_bytes[picks[i]].len);
    }
    int control = fz_chance(&rng, 8); /* unmutated: the seeds themselves */
    for (int i = 0; !control && i < count; i++) {
        if (i > 0 && fz_chance(&rng, 50)) continue;
        fz_log(&log, "mutate %d:", i);
        int kind = (int)fz_below(&rng, 100);
        if (kind < 55) {
            int edits = 1 + (int)fz_below(&rng, 2);
            for (int e = 0; e < edits; e++)
                if (fz_mutate_protobuf(&rng, &set[i], world.seed_bytes, SEED_COUNT, &log) != 0)
                    fz_mutate_bytes(&rng, &set[i], NULL, &log);
        } else if (kind < 70) {
            if (fz_mutate_protobuf(&rng, &set[i], foreign->items, foreign->count, &log) != 0)
                fz_mutate_bytes(&rng, &set[i], NULL, &log);
        } else {
            fz_mutate_bytes(&rng, &set[i], &world.seed_bytes[fz_below(&rng, SEED_COUNT)], &log);
        }
    }
    LanceCommitIndexOptions o = {0};
    o.replace = fz_chance(&rng, 30);
    o.allow_independent_models = fz_chance(&rng, 30);
    if (fz_chance(&rng, 20)) o.job_id = "fuzz-job", o.attempt_id = "1";
    fz_log(&log, "replace=%d independent=%d job=%d", o.replace, o.allow_independent_models, o.job_id != NULL);
    serialize_set(set, count);

    const uint8_t* ptrs[FRAGS + 1];
    size_t lens[FRAGS + 1];
    for (int i = 0; i < count; i++) ptrs[i] = set[i].data, lens[i] = set[i].len;
    LanceDataset* ds = lance_dataset_open(world.work_uri, NULL, 0);
    if (!ds) {
        finding(exec, &log, "the work dataset does not open");
        restore_work();
        goto done;
    }
    LanceCommitIndexResult r = {0};
    int rc = lance_dataset_commit_index_segments_v2(ds, "vec_idx", "vec", ptrs, lens, (size_t)count, &o, &r);
    if (rc != 0) {
        int code = lance_last_error_code();
        refused_by_code[code_slot(code)]++;
        if (!documented_refusal(code)) {
            finding(exec, &log,
                    code == LANCE_ERR_INTERNAL ? "commit refused with LANCE_ERR_INTERNAL"
                    : code == LANCE_ERR_PANIC  ? "commit refused with LANCE_ERR_PANIC"
                                               : "commit refused with an undocumented code");
        } else if (!found_long_message(exec, &log, "commit refused with an error message over 64 KiB")) {
            LanceDataset* again = lance_dataset_open(world.work_uri, NULL, 0);
            if (!again || lance_dataset_version(again) != world.base_version) {
                finding(exec, &log, "a refused commit moved the dataset version");
                restore_work();
            }
            lance_dataset_close(again);
        }
    } else {
        accepted++;
        int exact = 1;
        for (int i = 0; i < count; i++) {
            int s = faithful_seed(&set[i]);
            exact &= s >= 0 && world.seeds[s].exact;
        }
        if (!exact) accepted_unfaithful++;
        int mismatches = 0;
        const char* broken = NULL;
        if (r.already_committed || r.version != world.base_version + 1)
            broken = "an accepted commit did not make exactly one new version";
        LanceDataset* fresh = lance_dataset_open(world.work_uri, NULL, 0);
        if (!broken && !fresh) broken = "the dataset does not open after an accepted commit";
        if (!broken) broken = knn_broken(fresh, exact, &mismatches);
        if (!exact && mismatches) {
            /* Metadata that lies about what the files hold (another
               fragment set, say) cannot be told from the truth without
               reading the index; counted and shown, not a finding. */
            accepted_unfaithful_wrong++;
            fprintf(stderr,
                    "fuzz: note: exec %ld: accepted with a mutated identity, k-NN differs from brute force: %s\n", exec,
                    log.text);
        }
        if (broken) finding(exec, &log, broken);
        lance_dataset_close(fresh);
        if (restore_work() != 0) {
            finding(exec, &log, "cannot restore the work dataset");
            opt.execs = exec; /* nothing after this can be trusted */
        }
    }
    lance_dataset_close(ds);
done:
    for (int i = 0; i < count; i++) fz_buf_free(&set[i]);
}

/* ---- main ---- */

static int usage(void) {
    fprintf(stderr, "usage: fuzz_distributed corpus DIR\n"
                    "       fuzz_distributed run segment|model|commit [--execs N] [--seconds S] [--seed N]\n"
                    "                        [--start EXEC | --only EXEC] [--corpus DIR] [--findings DIR]\n");
    return 2;
}

int main(int argc, char** argv) {
    if (argc < 3) return usage();
    data = tu_make_data(ROWS, DIM, 8, 1.0f, 11);
    if (strcmp(argv[1], "corpus") == 0) {
        int rc = make_corpus(argv[2]);
        tu_free_data(&data);
        return rc;
    }
    if (strcmp(argv[1], "run") != 0) return usage();
    opt.target = argv[2];
    opt.execs = -1;
    opt.only = -1;
    opt.seed = 1;
    opt.corpus_dir = "tests/fuzz/corpus";
    opt.findings_dir = "fuzz-findings";
    for (int i = 3; i < argc; i++) {
        if (i + 1 >= argc) return usage();
        const char* v = argv[++i];
        if (strcmp(argv[i - 1], "--execs") == 0) opt.execs = atol(v);
        else if (strcmp(argv[i - 1], "--seconds") == 0) opt.seconds = atof(v);
        else if (strcmp(argv[i - 1], "--seed") == 0) opt.seed = strtoull(v, NULL, 10);
        else if (strcmp(argv[i - 1], "--only") == 0) opt.only = atol(v);
        else if (strcmp(argv[i - 1], "--start") == 0) opt.start = atol(v);
        else if (strcmp(argv[i - 1], "--corpus") == 0) opt.corpus_dir = v;
        else if (strcmp(argv[i - 1], "--findings") == 0) opt.findings_dir = v;
        else return usage();
    }
    int is_segment = strcmp(opt.target, "segment") == 0, is_model = strcmp(opt.target, "model") == 0,
        is_commit = strcmp(opt.target, "commit") == 0;
    if (!is_segment && !is_model && !is_commit) return usage();
    if (opt.execs < 0 && opt.seconds <= 0 && opt.only < 0) opt.execs = 1000;
    mkdir(opt.findings_dir, 0755);
    Corpus corpus = {0};
    if (load_corpus(opt.corpus_dir, is_model ? "model" : "segment", &corpus) != 0) {
        fprintf(stderr, "fuzz: no corpus under %s/%s\n", opt.corpus_dir, is_model ? "model" : "segment");
        return 2;
    }
    if (is_commit && setup_commit_world() != 0) {
        fprintf(stderr, "fuzz: cannot build the commit target's dataset and segments\n");
        tu_fail(__FILE__, __LINE__, "setup_commit_world");
        return 2;
    }
#ifndef __SANITIZE_ADDRESS__
    /* An input that makes the library allocate without bound fails
       (an aborted allocation is a crash finding) instead of exhausting the
       machine.  ASan keeps its own limit (scripts/sanitize.sh). */
    struct rlimit limit = {(rlim_t)8 << 30, (rlim_t)8 << 30};
    setrlimit(RLIMIT_AS, &limit);
    int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) signal(signals[i], on_crash);
#else
    /* ASan and UBSan report faults themselves, then save the input. */
    __sanitizer_set_death_callback(save_input_on_death);
#endif

    double start = tu_now();
    long first = opt.only >= 0 ? opt.only : opt.start;
    long last = opt.only >= 0 ? opt.only + 1 : opt.execs >= 0 ? first + opt.execs : -1;
    long done = 0;
    for (long exec = first; last < 0 || exec < last; exec++) {
        if (opt.seconds > 0 && tu_now() - start >= opt.seconds) break;
        begin_exec(exec);
        if (is_commit) exec_commit(exec, &corpus);
        else exec_parser(exec, &corpus, is_model);
        done++;
    }
    double elapsed = tu_now() - start;
    printf("fuzz %s: seed %llu, %ld executions in %.1f s (%.0f/s), %ld accepted", opt.target,
           (unsigned long long)opt.seed, done, elapsed, elapsed > 0 ? done / elapsed : 0.0, accepted);
    if (is_commit)
        printf(" (%ld with mutated identity, %ld of those answering k-NN unlike brute force)", accepted_unfaithful,
               accepted_unfaithful_wrong);
    printf(", refused:");
    for (int c = 0; c < OTHER_CODE; c++)
        if (refused_by_code[c])
            printf(" code %d x%ld", c < 10 ? c : LANCE_ERR_CANCELLED + (c - 10), refused_by_code[c]);
    if (refused_by_code[OTHER_CODE]) printf(" other codes x%ld", refused_by_code[OTHER_CODE]);
    printf("; %ld findings\n", findings);
    if (is_commit) free_commit_world();
    free_corpus(&corpus);
    fz_buf_free(&current_input);
    tu_free_data(&data);
    return findings ? 1 : 0;
}
