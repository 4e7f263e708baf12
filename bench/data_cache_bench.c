/* data_cache_bench: what a session's data cache buys when a dataset on
 * object storage is read again (issue 23), measured side by side in one
 * process.
 *
 *   data_cache_bench setup URI ROWS DIM FRAGMENTS
 *       writes ROWS clustered vectors (float32 x DIM, column "vec") and an
 *       int64 "id" = 0..ROWS-1 in FRAGMENTS fragments, then builds the
 *       IVF_PQ index "vec_idx" (128 partitions, 16 sub-vectors) on them
 *   data_cache_bench run URI CACHE_DIR [--rounds N] [--queries Q] [--link TEXT]
 *       the measurement below, N rounds (default 3) of Q k-NN queries
 *       (default and most 50); CACHE_DIR is a local directory for the disk
 *       tier; TEXT describes the network path in the title
 *
 * Workloads, each run twice (pass 1 and pass 2), every pass through a new
 * dataset handle opened with the workload's session (so pass 2 is a second
 * open of the same dataset in the same session):
 *   full scan        every row of "id" and "vec"
 *   k-NN             Q queries (rows of the dataset), k = 10, nprobes 16,
 *                    index cache 1 GiB: pass 2 finds the index partitions
 *                    in the index cache
 *   k-NN, no index cache   the same with an index cache of 0 bytes, so
 *                    every query reads the index from storage again (and
 *                    the index list from the manifest, which is not a
 *                    file the data cache holds)
 * Caches, each with a session of its own per workload (metadata cache
 * 256 MiB in all of them):
 *   none             lance_session_new(): no data cache
 *   memory           a data cache of 512 MiB in memory (more than the data)
 *   memory + disk    8 MiB in memory and 1 GiB in CACHE_DIR
 * Before the measured passes one full scan and one round of the queries run
 * without a session, so every cache meets a store that has served the
 * files once (the store's own page cache is warm for all of them alike).
 * A round runs every workload with every cache, each with a new session;
 * the table gives the median over the rounds of each figure.
 *
 * Per pass: wall time from the open to the close; bytes the handle took
 * from the store and from the data cache
 * (lance_dataset_get_data_cache_statistics; zeros without a data cache);
 * and bytes this process's network namespace received (/proc/net/dev, all
 * interfaces but lo: HTTP included, and the same measure with or without a
 * cache; run it in a namespace of its own, as data_cache_bench.sh does).
 * Every pass must return the same rows: a scan the row count, the sum of a
 * hash of each id and the sum of a hash of each row's id and vector, equal
 * to what the generator wrote; a k-NN pass the same ids per query as the
 * warm-up round.  Any difference is reported and the exit status is 1.
 *
 * Storage options from LANCE_STORAGE_OPTIONS and --storage-option
 * key=value (common/storage_options.h).  Exit 0 ok, 1 a check failed or
 * the library failed (its message on stderr), 2 bad arguments. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_c.h"
#include "die.h"
#include "f32_arrow.h"
#include "id_list.h"
#include "lance/lance.h"
#include "measure.h"
#include "storage_options.h"

#define SEED 23
#define CLUSTERS 64
#define MAX_QUERIES 50
#define K 10
#define NPROBES 16
#define BATCH_ROWS 8192
#define MAX_ROUNDS 20
#define MIB (1024.0 * 1024.0)

static const char* const* storage_opts;
static int queries = MAX_QUERIES; /* --queries */

/* ---- the data: a pure function of (row, dimension) ---- */

static uint64_t mix(uint64_t x) { /* splitmix64's finalizer */
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* A value in [-1, 1) from 24 bits of a hash. */
static float unit(uint64_t h) { return (float)(h >> 40) / (float)(1 << 23) - 1.0f; }

/* Row `row`'s vector: a cluster centre (coordinates in [-4, 4)) plus noise
 * in [-1, 1) per coordinate. */
static void row_vector(int64_t row, int32_t dim, float* out) {
    uint64_t cluster = mix(SEED ^ (uint64_t)row) % CLUSTERS;
    uint64_t state = mix((uint64_t)row * 0x2545f4914f6cdd1dULL + SEED);
    for (int32_t j = 0; j < dim; j++) {
        float centre = 4.0f * unit(mix(cluster * 0x10001ULL + (uint64_t)j));
        state = mix(state);
        out[j] = centre + unit(state);
    }
}

/* A hash of one row's id and vector (the float bits, so a changed byte
 * shows). */
static uint64_t row_hash(int64_t id, const float* values, int32_t dim) {
    uint64_t h = mix((uint64_t)id);
    for (int32_t j = 0; j < dim; j++) {
        uint32_t bits;
        memcpy(&bits, &values[j], sizeof bits);
        h = (h ^ bits) * 0x100000001b3ULL;
    }
    return mix(h);
}

/* What a scan of every row returns; sums, so the order of rows does not
 * matter. */
typedef struct {
    uint64_t rows;
    uint64_t id_sum;  /* sum of mix(id) */
    uint64_t row_sum; /* sum of row_hash(id, vector) */
} ScanDigest;

static ScanDigest expected_digest(int64_t rows, int32_t dim) {
    ScanDigest d = {0};
    float* v = malloc(sizeof(float) * (size_t)dim);
    if (!v) exit(1);
    for (int64_t r = 0; r < rows; r++) {
        row_vector(r, dim, v);
        d.rows++;
        d.id_sum += mix((uint64_t)r);
        d.row_sum += row_hash(r, v, dim);
    }
    free(v);
    return d;
}

/* ---- writing: an Arrow stream of struct{id: int64, vec: fixed_size_list<float>[dim]} ---- */

typedef struct {
    struct ArrowSchema fields[3]; /* id, vec, vec's item */
    struct ArrowSchema* children[2];
    struct ArrowSchema* item[1];
    char vec_format[24];
} SchemaParts;

static void release_part(struct ArrowSchema* s) { s->release = NULL; } /* memory is the root's */

static void release_schema(struct ArrowSchema* s) {
    free(s->private_data);
    s->release = NULL;
}

static int make_schema(int32_t dim, struct ArrowSchema* out) {
    SchemaParts* p = calloc(1, sizeof *p);
    if (!p) return -1;
    snprintf(p->vec_format, sizeof p->vec_format, "+w:%d", (int)dim);
    p->fields[0] = (struct ArrowSchema){.format = "l", .name = "id", .release = release_part};
    p->fields[2] = (struct ArrowSchema){.format = "f", .name = "item", .flags = 2, .release = release_part};
    p->item[0] = &p->fields[2];
    p->fields[1] = (struct ArrowSchema){.format = p->vec_format,
                                        .name = "vec",
                                        .flags = 2,
                                        .n_children = 1,
                                        .children = p->item,
                                        .release = release_part};
    p->children[0] = &p->fields[0];
    p->children[1] = &p->fields[1];
    *out = (struct ArrowSchema){.format = "+s",
                                .name = "",
                                .n_children = 2,
                                .children = p->children,
                                .private_data = p,
                                .release = release_schema};
    return 0;
}

typedef struct {
    struct ArrowArray id, vec;
    struct ArrowArray* children[2];
    const void* struct_buffers[1];
    const void* id_buffers[2];
} BatchParts;

static void release_ids(struct ArrowArray* a) {
    free((void*)a->buffers[1]);
    a->release = NULL;
}

static void release_batch(struct ArrowArray* a) {
    BatchParts* p = a->private_data;
    for (int i = 0; i < 2; i++)
        if (p->children[i]->release) p->children[i]->release(p->children[i]);
    free(p);
    a->release = NULL;
}

typedef struct {
    int64_t next, end;
    int32_t dim;
} RowSource;

static int source_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
    return make_schema(((RowSource*)s->private_data)->dim, out) == 0 ? 0 : ENOMEM;
}

static int source_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
    RowSource* src = s->private_data;
    if (src->next >= src->end) {
        memset(out, 0, sizeof *out); /* release == NULL: the end of the stream */
        return 0;
    }
    int64_t n = src->end - src->next < BATCH_ROWS ? src->end - src->next : BATCH_ROWS;
    BatchParts* p = calloc(1, sizeof *p);
    int64_t* ids = malloc(sizeof(int64_t) * (size_t)n);
    float* values = malloc(sizeof(float) * (size_t)n * (size_t)src->dim);
    if (!p || !ids || !values) {
        free(p), free(ids), free(values);
        return ENOMEM;
    }
    for (int64_t i = 0; i < n; i++) {
        ids[i] = src->next + i;
        row_vector(src->next + i, src->dim, values + i * src->dim);
    }
    struct ArrowSchema vec_schema;
    if (f32_list_arrow(values, (size_t)n * (size_t)src->dim, src->dim, &p->vec, &vec_schema) != 0) {
        free(p), free(ids);
        return ENOMEM;
    }
    vec_schema.release(&vec_schema); /* the stream's schema describes it */
    p->id_buffers[1] = ids;
    p->id = (struct ArrowArray){.length = n, .n_buffers = 2, .buffers = p->id_buffers, .release = release_ids};
    p->children[0] = &p->id;
    p->children[1] = &p->vec;
    *out = (struct ArrowArray){.length = n,
                               .n_buffers = 1,
                               .buffers = p->struct_buffers,
                               .n_children = 2,
                               .children = p->children,
                               .private_data = p,
                               .release = release_batch};
    src->next += n;
    return 0;
}

static const char* source_error(struct ArrowArrayStream* s) {
    (void)s;
    return "out of memory";
}

static void source_release(struct ArrowArrayStream* s) { s->release = NULL; }

static int cmd_setup(char** a) {
    uint64_t rows, dim, fragments;
    if (decimal_parse(a[1], INT32_MAX, &rows) || decimal_parse(a[2], 4096, &dim) ||
        decimal_parse(a[3], INT32_MAX, &fragments) || rows == 0 || dim == 0 || dim % 16 != 0 || fragments == 0) {
        fprintf(stderr, "data_cache_bench: setup needs ROWS > 0, DIM a multiple of 16, FRAGMENTS > 0\n");
        return 2;
    }
    RowSource src = {0, (int64_t)rows, (int32_t)dim};
    struct ArrowArrayStream stream = {source_schema, source_next, source_error, source_release, &src};
    struct ArrowSchema schema;
    if (make_schema((int32_t)dim, &schema) != 0) return 1;
    LanceWriteParams params = {0};
    params.max_rows_per_file = (rows + fragments - 1) / fragments;
    LanceDataset* ds = NULL;
    double t0 = monotonic_seconds();
    int32_t rc =
        lance_dataset_write_with_params(a[0], &schema, &stream, LANCE_WRITE_CREATE, &params, storage_opts, &ds);
    schema.release(&schema);
    if (rc != 0) die("write");
    double written = monotonic_seconds();
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_PQ;
    p.num_partitions = 128;
    p.num_sub_vectors = 16;
    if (lance_dataset_create_vector_index(ds, "vec", "vec_idx", &p, false) != 0) die("IVF_PQ index");
    printf("wrote %" PRIu64 " x %" PRIu64 " in %" PRIu64 " fragments in %.1f s; IVF_PQ 128 x 16 built in %.1f s\n",
           rows, dim, lance_dataset_fragment_count(ds), written - t0, monotonic_seconds() - written);
    lance_dataset_close(ds);
    return 0;
}

/* ---- reading ---- */

/* Runs the scanner's stream to its end; `on_batch` sees each batch with the
 * positions of "id" and "vec" (-1 when not projected).  -1 on an error
 * (reported), else 0. */
typedef void (*BatchFn)(const struct ArrowArray* batch, int64_t id_col, int64_t vec_col, int32_t dim, void* ctx);

static int drain(LanceScanner* scanner, int32_t dim, BatchFn on_batch, void* ctx) {
    struct ArrowArrayStream stream;
    if (lance_scanner_to_arrow_stream(scanner, &stream) != 0) return report_lance_error("scan"), -1;
    struct ArrowSchema schema;
    int rc = -1;
    if (stream.get_schema(&stream, &schema) != 0) {
        fprintf(stderr, "data_cache_bench: the scan's schema: %s\n", stream.get_last_error(&stream));
        stream.release(&stream);
        return -1;
    }
    int64_t id_col = arrow_child_index(&schema, "id"), vec_col = arrow_child_index(&schema, "vec");
    for (;;) {
        struct ArrowArray batch;
        if (stream.get_next(&stream, &batch) != 0) {
            const char* why = stream.get_last_error(&stream);
            fprintf(stderr, "data_cache_bench: the scan failed: %s\n", why ? why : "(no message)");
            break;
        }
        if (!batch.release) {
            rc = 0;
            break;
        }
        on_batch(&batch, id_col, vec_col, dim, ctx);
        batch.release(&batch);
    }
    schema.release(&schema);
    stream.release(&stream);
    return rc;
}

static const int64_t* id_values(const struct ArrowArray* batch, int64_t id_col) {
    const struct ArrowArray* ids = batch->children[id_col];
    return (const int64_t*)ids->buffers[1] + ids->offset + batch->offset;
}

static void digest_batch(const struct ArrowArray* batch, int64_t id_col, int64_t vec_col, int32_t dim, void* ctx) {
    ScanDigest* d = ctx;
    const int64_t* ids = id_values(batch, id_col);
    const struct ArrowArray* list = batch->children[vec_col];
    const struct ArrowArray* items = list->children[0];
    const float* values =
        (const float*)items->buffers[1] + items->offset + (list->offset + batch->offset) * (int64_t)dim;
    for (int64_t i = 0; i < batch->length; i++) {
        d->rows++;
        d->id_sum += mix((uint64_t)ids[i]);
        d->row_sum += row_hash(ids[i], values + i * dim, dim);
    }
}

static int full_scan(const LanceDataset* ds, int32_t dim, ScanDigest* out) {
    const char* columns[] = {"id", "vec", NULL};
    LanceScanner* s = lance_scanner_new(ds, columns, NULL);
    if (!s) return report_lance_error("scanner"), -1;
    *out = (ScanDigest){0};
    int rc = drain(s, dim, digest_batch, out);
    lance_scanner_close(s);
    return rc;
}

/* The ids of each query's top K, in the order returned. */
typedef struct {
    int64_t ids[MAX_QUERIES][K];
    int counts[MAX_QUERIES];
} KnnResult;

typedef struct {
    int64_t* ids;
    int* count;
} KnnSink;

static void collect_ids(const struct ArrowArray* batch, int64_t id_col, int64_t vec_col, int32_t dim, void* ctx) {
    (void)vec_col, (void)dim;
    KnnSink* sink = ctx;
    const int64_t* ids = id_values(batch, id_col);
    for (int64_t i = 0; i < batch->length; i++) {
        if (*sink->count < K) sink->ids[*sink->count] = ids[i];
        ++*sink->count; /* more than K shows as a count mismatch */
    }
}

static int knn_queries(const LanceDataset* ds, int32_t dim, int64_t rows, KnnResult* out) {
    float* query = malloc(sizeof(float) * (size_t)dim);
    if (!query) return -1;
    const char* columns[] = {"id", NULL};
    memset(out, 0, sizeof *out);
    for (int q = 0; q < queries; q++) {
        row_vector(((int64_t)q * 3989 + 17) % rows, dim, query);
        LanceScanner* s = lance_scanner_new(ds, columns, NULL);
        if (!s || lance_scanner_nearest(s, "vec", query, (size_t)dim, LANCE_DTYPE_FLOAT32, K) != 0 ||
            lance_scanner_set_nprobes(s, NPROBES) != 0) {
            report_lance_error("k-NN query");
            lance_scanner_close(s);
            free(query);
            return -1;
        }
        KnnSink sink = {out->ids[q], &out->counts[q]};
        int rc = drain(s, dim, collect_ids, &sink);
        lance_scanner_close(s);
        if (rc != 0) {
            free(query);
            return -1;
        }
    }
    free(query);
    return 0;
}

/* ---- passes ---- */

/* Bytes received by every interface of this network namespace but lo. */
static uint64_t namespace_rx_bytes(void) {
    FILE* f = fopen("/proc/net/dev", "r");
    if (!f) return 0;
    char line[512];
    uint64_t total = 0;
    while (fgets(line, sizeof line, f)) {
        char* colon = strchr(line, ':');
        if (!colon) continue; /* the two header lines */
        *colon = '\0';
        const char* name = line + strspn(line, " ");
        unsigned long long rx = 0;
        if (strcmp(name, "lo") != 0 && sscanf(colon + 1, "%llu", &rx) == 1) total += rx;
    }
    fclose(f);
    return total;
}

typedef enum { WORK_SCAN, WORK_KNN, WORK_KNN_NO_INDEX_CACHE, WORKLOADS } Workload;
typedef enum { CACHE_NONE, CACHE_MEMORY, CACHE_DISK, CACHES } CacheKind;

static const char* const workload_names[WORKLOADS] = {"full scan", "k-NN", "k-NN, no index cache"};
static const char* const cache_names[CACHES] = {"none", "memory 512M", "8M + disk 1G"};

typedef struct {
    double seconds;
    LanceDataCacheStatistics cache;
    uint64_t rx_bytes;
    uint64_t rows;
    int ok;
} Pass;

typedef struct {
    const char* uri;
    int32_t dim;
    int64_t rows;
    ScanDigest scan_expected;
    KnnResult knn_expected;
    KnnResult knn; /* a pass's answers */
    int failures;
} Run;

static int knn_equal(const KnnResult* a, const KnnResult* b, uint64_t* rows) {
    int same = 1;
    *rows = 0;
    for (int q = 0; q < queries; q++) {
        *rows += (uint64_t)a->counts[q];
        if (a->counts[q] != b->counts[q]) same = 0;
        for (int i = 0; i < a->counts[q] && i < K; i++)
            if (a->ids[q][i] != b->ids[q][i]) same = 0;
    }
    return same;
}

/* One pass: open with `session`, run the workload, read the handle's
 * data-cache counters, close.  -1 when the library failed. */
static int run_pass(Run* run, Workload w, const LanceSession* session, Pass* out) {
    uint64_t rx0 = namespace_rx_bytes();
    double t0 = monotonic_seconds();
    LanceDataset* ds = lance_dataset_open_with_session(run->uri, storage_opts, 0, session);
    if (!ds) return report_lance_error("open"), -1;
    int rc;
    if (w == WORK_SCAN) {
        ScanDigest d;
        rc = full_scan(ds, run->dim, &d);
        out->rows = d.rows;
        out->ok = rc == 0 && d.rows == run->scan_expected.rows && d.id_sum == run->scan_expected.id_sum &&
                  d.row_sum == run->scan_expected.row_sum;
    } else {
        rc = knn_queries(ds, run->dim, run->rows, &run->knn);
        out->ok = rc == 0 && knn_equal(&run->knn, &run->knn_expected, &out->rows);
    }
    if (rc == 0 && lance_dataset_get_data_cache_statistics(ds, &out->cache) != 0) {
        report_lance_error("data cache statistics");
        rc = -1;
    }
    lance_dataset_close(ds);
    out->seconds = monotonic_seconds() - t0;
    out->rx_bytes = namespace_rx_bytes() - rx0;
    return rc;
}

static LanceSession* new_session(Workload w, CacheKind c, int round, const char* cache_dir, char* dir_buf,
                                 size_t dir_cap) {
    uint64_t index_cache = w == WORK_KNN_NO_INDEX_CACHE ? 0 : (uint64_t)1 << 30;
    uint64_t metadata_cache = (uint64_t)256 << 20;
    if (c == CACHE_NONE) return lance_session_new(index_cache, metadata_cache);
    LanceDataCacheOptions o = {0};
    if (c == CACHE_MEMORY) {
        o.memory_capacity_bytes = (uint64_t)512 << 20;
    } else {
        snprintf(dir_buf, dir_cap, "%s/workload-%d-round-%d", cache_dir, (int)w, round);
        o.directory = dir_buf;
        o.memory_capacity_bytes = (uint64_t)8 << 20;
        o.disk_capacity_bytes = (uint64_t)1 << 30;
    }
    return lance_session_new_with_data_cache(index_cache, metadata_cache, &o);
}

static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

static void print_mib(uint64_t bytes, int known) {
    if (known) printf(" %11.1f", (double)bytes / MIB);
    else printf(" %11s", "-");
}

/* The median over `rounds` passes of one figure. */
static double median_figure(const Pass* const* samples, int rounds, double (*figure)(const Pass*)) {
    double values[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) values[r] = figure(samples[r]);
    return median_of(values, (size_t)rounds);
}

static double pass_seconds(const Pass* x) { return x->seconds; }
static double pass_remote(const Pass* x) { return (double)x->cache.bytes_read_from_remote; }
static double pass_cached(const Pass* x) { return (double)x->cache.bytes_read_from_cache; }
static double pass_rx(const Pass* x) { return (double)x->rx_bytes; }

static int cmd_run(char** a, int rounds, const char* link) {
    Run run = {.uri = a[0]};
    const char* cache_dir = a[1];

    /* The shape of the data, from the dataset itself. */
    LanceDataset* ds = lance_dataset_open(run.uri, storage_opts, 0);
    if (!ds) die("open");
    struct ArrowSchema schema;
    if (lance_dataset_schema(ds, &schema) != 0) die("schema");
    int64_t vec_col = arrow_child_index(&schema, "vec");
    if (vec_col < 0 || sscanf(schema.children[vec_col]->format, "+w:%d", &run.dim) != 1 || run.dim <= 0) {
        fprintf(stderr, "data_cache_bench: %s has no FixedSizeList column \"vec\" (write it with setup)\n", run.uri);
        return 2;
    }
    schema.release(&schema);
    run.rows = (int64_t)lance_dataset_count_rows(ds);
    uint64_t fragments = lance_dataset_fragment_count(ds);
    run.scan_expected = expected_digest(run.rows, run.dim);

    /* Warm-up without a session: the reference k-NN answers, and one read
     * of every file by the store before any measured pass. */
    ScanDigest warm;
    if (full_scan(ds, run.dim, &warm) != 0) return 1;
    if (warm.rows != run.scan_expected.rows || warm.id_sum != run.scan_expected.id_sum ||
        warm.row_sum != run.scan_expected.row_sum) {
        fprintf(stderr,
                "FAIL: the warm-up scan returned %" PRIu64 " rows, not the %" PRId64 " rows written "
                "(or their ids or vectors differ)\n",
                warm.rows, run.rows);
        return 1;
    }
    if (knn_queries(ds, run.dim, run.rows, &run.knn_expected) != 0) return 1;
    lance_dataset_close(ds);

    static Pass samples[MAX_ROUNDS][WORKLOADS][CACHES][2];
    for (int r = 0; r < rounds; r++)
        for (int w = 0; w < WORKLOADS; w++)
            for (int c = 0; c < CACHES; c++) {
                char dir[4096];
                LanceSession* session = new_session((Workload)w, (CacheKind)c, r, cache_dir, dir, sizeof dir);
                if (!session) die("session");
                for (int p = 0; p < 2; p++) {
                    Pass* pass = &samples[r][w][c][p];
                    if (run_pass(&run, (Workload)w, session, pass) != 0) return 1;
                    if (!pass->ok) {
                        fprintf(stderr, "FAIL: %s, cache %s, round %d, pass %d: the rows differ from the %s\n",
                                workload_names[w], cache_names[c], r + 1, p + 1,
                                w == WORK_SCAN ? "rows written" : "warm-up round's");
                        run.failures++;
                    }
                }
                lance_session_close(session);
            }

    /* Medians over the rounds; a cell's check fails when any round's did. */
    Pass passes[WORKLOADS][CACHES][2];
    for (int w = 0; w < WORKLOADS; w++)
        for (int c = 0; c < CACHES; c++)
            for (int p = 0; p < 2; p++) {
                const Pass* of_cell[MAX_ROUNDS];
                Pass* m = &passes[w][c][p];
                *m = samples[0][w][c][p];
                for (int r = 0; r < rounds; r++) {
                    of_cell[r] = &samples[r][w][c][p];
                    m->ok &= of_cell[r]->ok && of_cell[r]->rows == m->rows;
                }
                m->seconds = median_figure(of_cell, rounds, pass_seconds);
                m->cache.bytes_read_from_remote = (uint64_t)median_figure(of_cell, rounds, pass_remote);
                m->cache.bytes_read_from_cache = (uint64_t)median_figure(of_cell, rounds, pass_cached);
                m->rx_bytes = (uint64_t)median_figure(of_cell, rounds, pass_rx);
            }

    printf("\ndata cache, %s: %" PRId64 " rows x %d float32 + int64 id, %" PRIu64 " fragments, %.1f MiB of "
           "vectors;\nlink: %s; medians of %d rounds; %d queries per k-NN pass\n",
           run.uri, run.rows, run.dim, fragments, (double)run.rows * run.dim * 4 / MIB, link, rounds, queries);
    printf("%-26s %-13s %4s %9s %11s %11s %11s %8s %5s\n", "workload", "data cache", "pass", "time (s)", "remote MiB",
           "cache MiB", "net rx MiB", "rows", "check");
    for (int w = 0; w < WORKLOADS; w++)
        for (int c = 0; c < CACHES; c++)
            for (int p = 0; p < 2; p++) {
                const Pass* x = &passes[w][c][p];
                printf("%-26s %-13s %4d %9.3f", workload_names[w], cache_names[c], p + 1, x->seconds);
                print_mib(x->cache.bytes_read_from_remote, c != CACHE_NONE);
                print_mib(x->cache.bytes_read_from_cache, c != CACHE_NONE);
                print_mib(x->rx_bytes, 1);
                printf(" %8" PRIu64 " %5s\n", x->rows, x->ok ? "same" : "DIFF");
            }
    printf("\nratios, measured in this run (time; network bytes received in parentheses)\n");
    printf("%-26s %-13s %19s %19s %19s\n", "workload", "data cache", "pass 2 / pass 1", "pass 1 / no cache",
           "pass 2 / no cache");
    for (int w = 0; w < WORKLOADS; w++)
        for (int c = 0; c < CACHES; c++) {
            const Pass* x = passes[w][c];
            const Pass* none = passes[w][CACHE_NONE];
            printf("%-26s %-13s %8.2f (%8.3f)", workload_names[w], cache_names[c], ratio(x[1].seconds, x[0].seconds),
                   ratio((double)x[1].rx_bytes, (double)x[0].rx_bytes));
            if (c == CACHE_NONE) {
                printf(" %19s %19s\n", "", "");
                continue;
            }
            printf(" %8.2f (%8.3f) %8.2f (%8.3f)\n", ratio(x[0].seconds, none[0].seconds),
                   ratio((double)x[0].rx_bytes, (double)none[0].rx_bytes), ratio(x[1].seconds, none[1].seconds),
                   ratio((double)x[1].rx_bytes, (double)none[1].rx_bytes));
        }
    printf("(every pass is a new handle opened with the workload's session; sessions: metadata cache 256 MiB,\n"
           " index cache 1 GiB, or 0 for \"no index cache\"; remote/cache MiB: "
           "lance_dataset_get_data_cache_statistics;\n net rx: bytes received by this host, HTTP included)\n");
    if (run.failures) fprintf(stderr, "FAIL: %d passes returned rows that differ\n", run.failures);
    return run.failures ? 1 : 0;
}

/* Removes "NAME VALUE" from argv (argv[argc] stays NULL) and returns
 * VALUE; NULL when NAME is not there. */
static const char* take_option(int* argc, char** argv, const char* name) {
    for (int i = 1; i + 1 < *argc; i++)
        if (strcmp(argv[i], name) == 0) {
            const char* value = argv[i + 1];
            memmove(&argv[i], &argv[i + 2], sizeof *argv * (size_t)(*argc - i - 1));
            *argc -= 2;
            return value;
        }
    return NULL;
}

int main(int argc, char** argv) {
    StorageOptions storage = {0};
    if (storage_options_init(&storage, &argc, argv, "data_cache_bench") != 0) return 2;
    storage_opts = storage_options_array(&storage);
    const char* link = take_option(&argc, argv, "--link");
    const char* rounds_text = take_option(&argc, argv, "--rounds");
    const char* queries_text = take_option(&argc, argv, "--queries");
    uint64_t rounds = 3, query_count = MAX_QUERIES;
    int rc = 2;
    const char* cmd = argc > 1 ? argv[1] : "";
    if (rounds_text && (decimal_parse(rounds_text, MAX_ROUNDS, &rounds) != 0 || rounds == 0))
        fprintf(stderr, "data_cache_bench: --rounds %s: expected 1 to %d\n", rounds_text, MAX_ROUNDS);
    else if (queries_text && (decimal_parse(queries_text, MAX_QUERIES, &query_count) != 0 || query_count == 0))
        fprintf(stderr, "data_cache_bench: --queries %s: expected 1 to %d\n", queries_text, MAX_QUERIES);
    else if (!strcmp(cmd, "setup") && argc == 6) rc = cmd_setup(argv + 2);
    else if (!strcmp(cmd, "run") && argc == 4) {
        queries = (int)query_count;
        rc = cmd_run(argv + 2, (int)rounds, link ? link : "not described");
    } else
        fprintf(stderr, "usage: data_cache_bench setup URI ROWS DIM FRAGMENTS\n"
                        "       data_cache_bench run URI CACHE_DIR [--rounds N] [--queries Q] [--link TEXT]\n");
    storage_options_free(&storage);
    return rc;
}
