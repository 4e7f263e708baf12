/* worker: builds one index segment of a distributed build, as a process of
 * its own, and hands the segment's metadata bytes back through a file.
 *
 *   lance_worker <dataset uri> <version> <model file> <segment uuid, 32 hex>
 *                <output file> <fragment ids, comma-separated> [index type]
 *
 * It opens the dataset at the version the coordinator pinned, reads the
 * shared model the coordinator trained, builds its segment over its
 * fragments with that model (never training), and writes the metadata to
 * <output file> atomically (a temporary file renamed into place), so the
 * coordinator never reads half a segment.  Exit status 0 on success.
 * Progress goes to stderr, one line per stage.  SIGTERM cancels the build
 * through a cancel token: the worker removes its partial segment and exits
 * with status 3. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lance/lance.h"
#include "read_whole_file.h"

static LanceIndexBuildCancelToken* token;
static volatile sig_atomic_t terminated;

/* A signal handler may only set a flag; a watcher thread turns it into a
 * cancel request (lance_index_build_cancel is callable from any thread). */
static void on_term(int sig) {
    (void)sig;
    terminated = 1;
}

static void* watch(void* arg) {
    (void)arg;
    while (!terminated) {
        struct timespec pause = {0, 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    lance_index_build_cancel(token);
    return NULL;
}

static int fail(const char* what) {
    const char* msg = lance_last_error_message();
    fprintf(stderr, "worker: %s failed [%d]: %s\n", what, (int)lance_last_error_code(), msg ? msg : "");
    lance_free_string(msg);
    return lance_last_error_code() == LANCE_ERR_CANCELLED ? 3 : 1;
}

static void progress(void* user, int32_t event, const char* stage, uint64_t total, const char* unit,
                     uint64_t completed) {
    const char* who = user;
    if (event == LANCE_PROGRESS_STAGE_START)
        fprintf(stderr, "worker %s: %s started (%llu %s)\n", who, stage, (unsigned long long)total, unit);
    else if (event == LANCE_PROGRESS_STAGE_COMPLETE)
        fprintf(stderr, "worker %s: %s done (%llu)\n", who, stage, (unsigned long long)completed);
}

static int parse_uuid(const char* hex, uint8_t out[16]) {
    if (strlen(hex) != 32) return -1;
    for (int i = 0; i < 16; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) return -1;
        out[i] = (uint8_t)v;
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: %s uri version model-file uuid-hex out-file frag,frag,... [IVF_FLAT|IVF_PQ]\n",
                argv[0]);
        return 2;
    }
    const char* uri = argv[1];
    uint64_t version = strtoull(argv[2], NULL, 10);
    uint8_t uuid[16];
    if (parse_uuid(argv[4], uuid) != 0) {
        fprintf(stderr, "worker: bad uuid %s\n", argv[4]);
        return 2;
    }
    uint32_t frags[4096];
    size_t nfrags = 0;
    for (char* p = argv[6]; *p && nfrags < 4096;) {
        frags[nfrags++] = (uint32_t)strtoul(p, &p, 10);
        if (*p == ',') p++;
    }
    LanceVectorIndexType type = argc > 7 && strcmp(argv[7], "IVF_FLAT") == 0 ? LANCE_INDEX_IVF_FLAT
                                                                             : LANCE_INDEX_IVF_PQ;

    token = lance_index_build_cancel_token_new();
    signal(SIGTERM, on_term);
    pthread_t watcher;
    pthread_create(&watcher, NULL, watch, NULL);
    pthread_detach(watcher);

    LanceDataset* ds = lance_dataset_open(uri, NULL, version);
    if (!ds) return fail("open");
    size_t model_len = 0;
    unsigned char* model_bytes = read_whole_file(argv[3], &model_len);
    if (!model_bytes) {
        fprintf(stderr, "worker: cannot read %s\n", argv[3]);
        return 1;
    }
    LanceVectorModel* model = NULL;
    if (lance_vector_model_parse(model_bytes, model_len, &model) != 0) return fail("model parse");
    free(model_bytes);
    LanceVectorModelInfo info;
    if (lance_vector_model_info(model, &info) != 0) return fail("model info");

    LanceVectorIndexParams params = {0};
    params.index_type = type;
    params.metric = info.metric;
    params.num_partitions = info.num_partitions;
    params.num_sub_vectors = info.num_sub_vectors;
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = frags;
    o.fragment_count = nfrags;
    o.index_uuid = uuid;
    o.model = model;
    o.train = LANCE_TRAIN_NEVER;
    LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_vector(ds, "vec", NULL, &params, &o);
    if (!b) return fail("builder");
    lance_index_segment_builder_set_progress(b, progress, argv[4]);
    lance_index_segment_builder_set_cancel_token(b, token);
    uint8_t* bytes = NULL;
    size_t len = 0;
    if (lance_index_segment_builder_execute_uncommitted(b, &bytes, &len) != 0) return fail("build");

    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[5]);
    FILE* f = fopen(tmp, "wb");
    if (!f || fwrite(bytes, 1, len, f) != len || fclose(f) != 0 || rename(tmp, argv[5]) != 0) {
        fprintf(stderr, "worker: cannot write %s\n", argv[5]);
        return 1;
    }
    lance_free_bytes(bytes);
    lance_index_segment_builder_free(b);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
    /* The token stays: the watcher thread may still use it until exit. */
    return 0;
}
