/* distributed_build: a distributed index build written against the installed
 * lance-c package alone (<lance/lance.h> and the library), as a project of
 * its own would write it: no helper from the lance-c source tree.
 *
 *   distributed_build DATASET_DIR [WORKERS]
 *
 * The coordinator (this process) writes a dataset of 4,000 ids in 4
 * fragments at DATASET_DIR (which must not exist yet), plans WORKERS
 * fragment groups (default 2, at most 4), and starts one worker process per
 * group: this program again, as
 *
 *   distributed_build --worker URI VERSION FRAGMENT_IDS OUT_FILE
 *
 * A worker opens the planned version, builds one BTREE segment of the index
 * "id_idx" over its fragments without committing, and writes the segment's
 * metadata bytes to OUT_FILE.  The coordinator commits every worker's
 * segment as one index in one new version, commits the same set again (a
 * retry after a lost reply: answered with the same version, nothing
 * written), and checks on a fresh handle that the index holds exactly the
 * workers' segments, each over the fragments planned for it, together
 * covering every fragment once, and that filtered scans find the ids.
 * Exit status 0 when all of that holds; 1 otherwise, after a message on
 * stderr; 2 for bad arguments. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lance/lance.h>

enum { ROWS = 4000, FRAGMENTS = 4, MAX_WORKERS = FRAGMENTS };
static const char* const INDEX_NAME = "id_idx";
static const char* const COLUMN = "id";

/* Prints what failed with the library's error code and message; returns 1. */
static int lance_failed(const char* what) {
    LanceErrorCode code = lance_last_error_code(); /* first: reading the message clears it */
    const char* message = lance_last_error_message();
    fprintf(stderr, "distributed_build: %s failed (%d): %s\n", what, (int)code, message ? message : "");
    lance_free_string(message);
    return 1;
}

static int check_failed(const char* what) {
    fprintf(stderr, "distributed_build: check failed: %s\n", what);
    return 1;
}

/* ---- the data: one non-nullable int64 column "id", as an Arrow stream ---- */

typedef struct {
    struct ArrowSchema id;
    struct ArrowSchema* children[1];
} SchemaParts;

/* The child is part of its parent's allocation: releasing it only marks it. */
static void release_child_schema(struct ArrowSchema* schema) { schema->release = NULL; }

static void release_schema(struct ArrowSchema* schema) {
    SchemaParts* parts = schema->private_data;
    if (parts->id.release) parts->id.release(&parts->id);
    free(parts);
    schema->release = NULL;
}

static int make_schema(struct ArrowSchema* out) {
    SchemaParts* parts = calloc(1, sizeof *parts);
    if (!parts) return ENOMEM;
    parts->id = (struct ArrowSchema){.format = "l", .name = "id", .release = release_child_schema};
    parts->children[0] = &parts->id;
    *out = (struct ArrowSchema){.format = "+s",
                                .name = "",
                                .n_children = 1,
                                .children = parts->children,
                                .release = release_schema,
                                .private_data = parts};
    return 0;
}

typedef struct {
    struct ArrowArray id;
    struct ArrowArray* children[1];
    const void* struct_buffers[1]; /* no validity bitmap */
    const void* id_buffers[2];     /* no validity bitmap; the values */
    int64_t values[];
} ArrayParts;

static void release_child_array(struct ArrowArray* array) { array->release = NULL; }

static void release_array(struct ArrowArray* array) {
    ArrayParts* parts = array->private_data;
    if (parts->id.release) parts->id.release(&parts->id);
    free(parts);
    array->release = NULL;
}

/* One batch of the ids first .. first + rows - 1. */
static int make_batch(int64_t first, int64_t rows, struct ArrowArray* out) {
    ArrayParts* parts = malloc(sizeof *parts + (size_t)rows * sizeof(int64_t));
    if (!parts) return ENOMEM;
    for (int64_t i = 0; i < rows; i++) parts->values[i] = first + i;
    parts->struct_buffers[0] = NULL;
    parts->id_buffers[0] = NULL;
    parts->id_buffers[1] = parts->values;
    parts->id = (struct ArrowArray){
        .length = rows, .n_buffers = 2, .buffers = parts->id_buffers, .release = release_child_array};
    parts->children[0] = &parts->id;
    *out = (struct ArrowArray){.length = rows,
                               .n_buffers = 1,
                               .n_children = 1,
                               .buffers = parts->struct_buffers,
                               .children = parts->children,
                               .release = release_array,
                               .private_data = parts};
    return 0;
}

/* A stream of the ids 0 .. ROWS - 1 in one batch. */
typedef struct {
    bool sent;
} IdStream;

static int stream_get_schema(struct ArrowArrayStream* stream, struct ArrowSchema* out) {
    (void)stream;
    return make_schema(out);
}

static int stream_get_next(struct ArrowArrayStream* stream, struct ArrowArray* out) {
    IdStream* state = stream->private_data;
    if (state->sent) {
        out->release = NULL; /* the end of the stream */
        return 0;
    }
    state->sent = true;
    return make_batch(0, ROWS, out);
}

static const char* stream_get_last_error(struct ArrowArrayStream* stream) {
    (void)stream;
    return "out of memory";
}

static void stream_release(struct ArrowArrayStream* stream) {
    free(stream->private_data);
    stream->release = NULL;
}

static int make_stream(struct ArrowArrayStream* out) {
    IdStream* state = calloc(1, sizeof *state);
    if (!state) return ENOMEM;
    *out = (struct ArrowArrayStream){.get_schema = stream_get_schema,
                                     .get_next = stream_get_next,
                                     .get_last_error = stream_get_last_error,
                                     .release = stream_release,
                                     .private_data = state};
    return 0;
}

/* ---- files and ids ---- */

static int write_file(const char* path, const uint8_t* bytes, size_t len) {
    FILE* f = fopen(path, "wb");
    if (!f) return -1;
    size_t written = fwrite(bytes, 1, len, f);
    return fclose(f) == 0 && written == len ? 0 : -1;
}

/* The whole file, malloc'ed; NULL when it cannot be read. */
static uint8_t* read_file(const char* path, size_t* out_len) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t* bytes = NULL;
    size_t len = 0, cap = 0, n = 0;
    do {
        if (len == cap) {
            cap = cap ? 2 * cap : 4096;
            uint8_t* grown = realloc(bytes, cap);
            if (!grown) break;
            bytes = grown;
        }
        n = fread(bytes + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    bool ok = !ferror(f) && len < cap;
    fclose(f);
    if (!ok) {
        free(bytes);
        return NULL;
    }
    *out_len = len;
    return bytes;
}

/* A decimal number no greater than `max` at *p, which moves past it; -1 when
 * there is none or it is greater. */
static int parse_number(const char** p, uint64_t max, uint64_t* out) {
    if (**p < '0' || **p > '9') return -1;
    char* end = NULL;
    errno = 0;
    unsigned long long n = strtoull(*p, &end, 10);
    if (errno || n > max) return -1;
    *p = end;
    *out = n;
    return 0;
}

/* "0,1,2" -> ids, at most `cap` of them; -1 on anything else. */
static int parse_ids(const char* text, uint32_t* ids, size_t cap, size_t* out_count) {
    size_t count = 0;
    const char* p = text;
    while (*p) {
        uint64_t id = 0;
        if (count == cap || parse_number(&p, UINT32_MAX, &id) != 0) return -1;
        ids[count++] = (uint32_t)id;
        if (*p == ',' && p[1]) p++;
        else if (*p) return -1;
    }
    *out_count = count;
    return count ? 0 : -1;
}

static void format_ids(const uint32_t* ids, size_t count, char* out, size_t cap) {
    size_t used = 0;
    out[0] = 0;
    for (size_t i = 0; i < count && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%" PRIu32, i ? "," : "", ids[i]);
}

static void format_uuid(const uint8_t uuid[16], char out[33]) {
    for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", uuid[i]);
}

/* ---- the worker ---- */

static int worker(int argc, char** argv) {
    uint32_t fragment_ids[FRAGMENTS];
    size_t fragment_count = 0;
    uint64_t version = 0;
    const char* version_text = argc == 6 ? argv[3] : "";
    if (argc != 6 || parse_number(&version_text, UINT64_MAX, &version) != 0 || *version_text || version == 0 ||
        parse_ids(argv[4], fragment_ids, FRAGMENTS, &fragment_count) != 0) {
        fprintf(stderr, "usage: %s --worker URI VERSION FRAGMENT_IDS OUT_FILE\n", argv[0]);
        return 2;
    }
    int rc = 0;
    LanceIndexSegmentBuilder* builder = NULL;
    uint8_t* bytes = NULL;
    size_t len = 0;
    /* The version the coordinator planned: its fragments are the ones named. */
    LanceDataset* dataset = lance_dataset_open(argv[2], NULL, version);
    if (!dataset) return lance_failed("worker: open");
    LanceIndexSegmentBuildOptions options = {0};
    options.fragment_ids = fragment_ids;
    options.fragment_count = fragment_count;
    /* A fragment-scoped BTREE segment gets the UUID the core picks (index_uuid
     * stays NULL); its metadata bytes carry it to the coordinator. */
    builder = lance_index_segment_builder_new_scalar(dataset, COLUMN, INDEX_NAME, LANCE_SCALAR_BTREE, NULL, &options);
    if (!builder) rc = lance_failed("worker: segment builder");
    else if (lance_index_segment_builder_execute_uncommitted(builder, &bytes, &len) != 0)
        rc = lance_failed("worker: segment build");
    else if (write_file(argv[5], bytes, len) != 0) {
        fprintf(stderr, "distributed_build: worker: cannot write %s: %s\n", argv[5], strerror(errno));
        rc = 1;
    }
    lance_free_bytes(bytes);
    lance_index_segment_builder_free(builder);
    lance_dataset_close(dataset);
    return rc;
}

/* ---- the coordinator ---- */

typedef struct {
    uint32_t fragment_ids[FRAGMENTS];
    size_t fragment_count;
    char fragments_text[64];
    char out_file[4096];
    pid_t pid;
    uint8_t* segment;
    size_t segment_len;
    uint8_t uuid[16];
} Worker;

static pid_t start_worker(const char* self, const char* uri, uint64_t version, const Worker* w) {
    char version_text[32];
    snprintf(version_text, sizeof version_text, "%" PRIu64, version);
    pid_t pid = fork();
    if (pid == 0) {
        char* args[] = {(char*)self,        "--worker", (char*)uri, version_text, (char*)w->fragments_text,
                        (char*)w->out_file, NULL};
        /* This program again, whatever directory it was started from. */
        execv("/proc/self/exe", args);
        fprintf(stderr, "distributed_build: cannot start a worker: %s\n", strerror(errno));
        _exit(127);
    }
    return pid;
}

/* The rows a filtered scan returns, or -1 after a message. */
static int64_t count_rows(const LanceDataset* dataset, const char* filter) {
    const char* columns[] = {COLUMN, NULL};
    LanceScanner* scanner = lance_scanner_new(dataset, columns, filter);
    if (!scanner) {
        lance_failed("scanner");
        return -1;
    }
    int64_t rows = 0;
    LanceBatch* batch = NULL;
    int32_t rc;
    while ((rc = lance_scanner_next(scanner, &batch)) == 0) {
        rows += (int64_t)lance_batch_num_rows(batch);
        lance_batch_free(batch);
    }
    if (rc < 0) {
        lance_failed("scan");
        rows = -1;
    }
    lance_scanner_close(scanner);
    return rows;
}

/* Checks the committed index on a fresh handle of the latest version. */
static int check_index(const char* uri, uint64_t committed_version, const Worker* workers, size_t worker_count) {
    int rc = 0;
    uint8_t uuids[MAX_WORKERS][16];
    uint64_t listed = 0;
    uint64_t all_fragments[FRAGMENTS];
    int covered[FRAGMENTS] = {0};
    LanceDataset* dataset = lance_dataset_open(uri, NULL, 0);
    if (!dataset) return lance_failed("open");
    if (lance_dataset_version(dataset) != committed_version) {
        rc = check_failed("the latest version is not the one the commit made");
    } else if (lance_dataset_fragment_count(dataset) != FRAGMENTS ||
               lance_dataset_fragment_ids(dataset, all_fragments) != 0) {
        rc = check_failed("the dataset does not have its 4 fragments");
    } else if (lance_dataset_index_segment_count(dataset, INDEX_NAME) != worker_count) {
        rc = check_failed("the index does not have one segment per worker");
    } else if (lance_dataset_index_segments(dataset, INDEX_NAME, &uuids[0][0], MAX_WORKERS, &listed) != 0) {
        rc = lance_failed("index segments");
    }
    /* Each worker's segment is in the index, over the fragments planned for
     * that worker. */
    for (size_t w = 0; rc == 0 && w < worker_count; w++) {
        uint64_t i = 0;
        while (i < listed && memcmp(uuids[i], workers[w].uuid, 16) != 0) i++;
        if (i == listed) {
            rc = check_failed("a worker's segment is not in the committed index");
            break;
        }
        char hex[33];
        format_uuid(uuids[i], hex);
        uint8_t* bytes = NULL;
        size_t len = 0;
        LanceIndexSegmentMetadata* metadata = NULL;
        uint32_t fragment_ids[FRAGMENTS];
        size_t count = 0;
        if (lance_dataset_index_segment_metadata(dataset, INDEX_NAME, hex, &bytes, &len) != 0)
            rc = lance_failed("committed segment metadata");
        else if (lance_index_segment_metadata_parse(bytes, len, &metadata) != 0)
            rc = lance_failed("segment metadata parse");
        else if (lance_index_segment_metadata_fragment_ids(metadata, fragment_ids, FRAGMENTS, &count) != 0)
            rc = lance_failed("segment fragment ids");
        else if (count != workers[w].fragment_count ||
                 memcmp(fragment_ids, workers[w].fragment_ids, count * sizeof(uint32_t)) != 0)
            rc = check_failed("a committed segment covers other fragments than its worker was given");
        for (size_t k = 0; rc == 0 && k < count; k++)
            for (size_t f = 0; f < FRAGMENTS; f++)
                if (all_fragments[f] == fragment_ids[k]) covered[f]++;
        lance_index_segment_metadata_free(metadata);
        lance_free_bytes(bytes);
    }
    for (size_t f = 0; rc == 0 && f < FRAGMENTS; f++)
        if (covered[f] != 1) rc = check_failed("a fragment is not covered by exactly one segment");
    /* The index answers queries: one id, and a range across two fragments. */
    if (rc == 0 && count_rows(dataset, "id = 2345") != 1) rc = check_failed("\"id = 2345\" does not find 1 row");
    if (rc == 0 && count_rows(dataset, "id >= 990 AND id < 1010") != 20)
        rc = check_failed("\"id >= 990 AND id < 1010\" does not find 20 rows");
    lance_dataset_close(dataset);
    return rc;
}

/* Writes the dataset: ROWS ids, ROWS / FRAGMENTS to a fragment.  NULL after
 * a message. */
static LanceDataset* write_dataset(const char* uri) {
    struct ArrowSchema schema;
    struct ArrowArrayStream stream;
    LanceDataset* dataset = NULL;
    if (make_schema(&schema) != 0) {
        check_failed("out of memory");
        return NULL;
    }
    if (make_stream(&stream) != 0) {
        schema.release(&schema);
        check_failed("out of memory");
        return NULL;
    }
    LanceWriteParams params = {0};
    params.max_rows_per_file = ROWS / FRAGMENTS;
    /* The stream is consumed whatever the result; the schema is only read. */
    if (lance_dataset_write_with_params(uri, &schema, &stream, LANCE_WRITE_CREATE, &params, NULL, &dataset) != 0)
        lance_failed("write");
    schema.release(&schema);
    return dataset;
}

/* Plans one fragment group per worker on the dataset's version (which it
 * returns in *out_version) and names each worker's output file. */
static int plan_groups(const LanceDataset* dataset, const char* uri, Worker* workers, size_t worker_count,
                       uint64_t* out_version) {
    LanceFragmentPlan* plan = NULL;
    int rc = 0;
    if (lance_dataset_plan_fragment_groups(dataset, worker_count, &plan) != 0) return lance_failed("plan");
    *out_version = lance_fragment_plan_dataset_version(plan);
    for (size_t w = 0; rc == 0 && w < worker_count; w++) {
        const uint32_t* ids = NULL;
        size_t count = 0;
        if (lance_fragment_plan_group(plan, w, &ids, &count, NULL) != 0 || count > FRAGMENTS) {
            rc = lance_failed("plan group");
            break;
        }
        /* The plan lends its arrays: copied before it is freed. */
        memcpy(workers[w].fragment_ids, ids, count * sizeof *ids);
        workers[w].fragment_count = count;
        format_ids(ids, count, workers[w].fragments_text, sizeof workers[w].fragments_text);
        snprintf(workers[w].out_file, sizeof workers[w].out_file, "%s.worker%zu.segment", uri, w);
    }
    lance_fragment_plan_free(plan);
    return rc;
}

/* Starts every worker at once, waits for them, and reads each one's segment
 * bytes and UUID. */
static int run_workers(const char* self, const char* uri, uint64_t version, Worker* workers, size_t worker_count) {
    int rc = 0;
    for (size_t w = 0; w < worker_count; w++) {
        workers[w].pid = start_worker(self, uri, version, &workers[w]);
        if (workers[w].pid < 0) {
            perror("distributed_build: fork");
            rc = 1;
        }
    }
    for (size_t w = 0; w < worker_count; w++) {
        int status = 0;
        if (workers[w].pid <= 0) continue;
        if (waitpid(workers[w].pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "distributed_build: worker %zu (fragments %s) failed\n", w, workers[w].fragments_text);
            rc = 1;
        }
    }
    for (size_t w = 0; rc == 0 && w < worker_count; w++) {
        LanceIndexSegmentMetadata* metadata = NULL;
        workers[w].segment = read_file(workers[w].out_file, &workers[w].segment_len);
        if (!workers[w].segment) {
            fprintf(stderr, "distributed_build: cannot read %s\n", workers[w].out_file);
            rc = 1;
        } else if (lance_index_segment_metadata_parse(workers[w].segment, workers[w].segment_len, &metadata) != 0 ||
                   lance_index_segment_metadata_uuid(metadata, workers[w].uuid) != 0) {
            rc = lance_failed("a worker's segment metadata");
        }
        lance_index_segment_metadata_free(metadata);
    }
    return rc;
}

/* Commits every worker's segment as one index in one new version, then the
 * same set again, as after a lost reply: that must be answered with the
 * first commit's version, nothing written. */
static int commit(LanceDataset* dataset, const Worker* workers, size_t worker_count, uint64_t* out_version) {
    const uint8_t* segments[MAX_WORKERS];
    size_t lens[MAX_WORKERS];
    for (size_t w = 0; w < worker_count; w++) {
        segments[w] = workers[w].segment;
        lens[w] = workers[w].segment_len;
    }
    LanceCommitIndexResult first, retry;
    if (lance_dataset_commit_index_segments_v2(dataset, INDEX_NAME, COLUMN, segments, lens, worker_count, NULL,
                                               &first) != 0)
        return lance_failed("commit");
    if (lance_dataset_commit_index_segments_v2(dataset, INDEX_NAME, COLUMN, segments, lens, worker_count, NULL,
                                               &retry) != 0)
        return lance_failed("retried commit");
    if (first.already_committed || !retry.already_committed || retry.version != first.version)
        return check_failed("the retried commit was not answered with the first commit's version");
    *out_version = first.version;
    return 0;
}

static int coordinator(const char* self, const char* uri, size_t worker_count) {
    Worker workers[MAX_WORKERS];
    memset(workers, 0, sizeof workers);
    uint64_t planned = 0, committed = 0;
    LanceDataset* dataset = write_dataset(uri);
    if (!dataset) return 1;
    int rc = plan_groups(dataset, uri, workers, worker_count, &planned);
    if (rc == 0) rc = run_workers(self, uri, planned, workers, worker_count);
    if (rc == 0) rc = commit(dataset, workers, worker_count, &committed);
    if (rc == 0) rc = check_index(uri, committed, workers, worker_count);
    if (rc == 0) {
        printf("distributed_build: lance-c %s: %d rows in %d fragments of version %" PRIu64 ", %zu workers\n",
               lance_version(), ROWS, FRAGMENTS, planned, worker_count);
        for (size_t w = 0; w < worker_count; w++) {
            char hex[33];
            format_uuid(workers[w].uuid, hex);
            printf("  worker %zu: segment %s over fragments %s\n", w, hex, workers[w].fragments_text);
        }
        printf("distributed_build: committed %zu segments as %s in version %" PRIu64
               " (a retry: the same version); each fragment indexed once; the filtered scans found their rows\n",
               worker_count, INDEX_NAME, committed);
    }
    for (size_t w = 0; w < worker_count; w++) {
        free(workers[w].segment);
        if (workers[w].out_file[0]) unlink(workers[w].out_file);
    }
    lance_dataset_close(dataset);
    return rc;
}

int main(int argc, char** argv) {
    if (argc > 1 && strcmp(argv[1], "--worker") == 0) return worker(argc, argv);
    unsigned long workers = 2;
    char* end = NULL;
    if (argc == 3) workers = strtoul(argv[2], &end, 10);
    if (argc < 2 || argc > 3 || argv[1][0] == '-' || (end && *end) || workers < 1 || workers > MAX_WORKERS) {
        fprintf(stderr, "usage: %s DATASET_DIR [WORKERS, 1-%d]\n", argv[0], MAX_WORKERS);
        return 2;
    }
    struct stat st;
    if (stat(argv[1], &st) == 0) {
        fprintf(stderr, "distributed_build: %s exists already; name a new directory\n", argv[1]);
        return 2;
    }
    return coordinator(argv[0], argv[1], (size_t)workers);
}
