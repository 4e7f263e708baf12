/* One owner per segment UUID: two builds given the same caller-assigned UUID
 * and started at the same moment (a retried task racing the original,
 * speculative execution) must not both write into _indices/<uuid>/.  Each
 * round starts both on a barrier; exactly one must succeed and the other
 * fail with LANCE_ERR_DUPLICATE_SEGMENT, and the winner's segment must commit
 * (its files complete) and answer k-NN exactly as brute force does. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_data.h"
#include "lance/lance.h"
#include "segment_params.h"
#include "temp_dir.h"
#include "uuid_hex.h"

enum { ROUNDS = 20, ROWS = 4000, DIM = 16, PARTITIONS = 4, K = 10, QUERIES = 5 };

static int failures = 0;
#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                   \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, " (last error %d: %s)\n", lance_last_error_code(),     \
                    lance_last_error_message() ? lance_last_error_message() : ""); \
            failures++;                                                            \
        }                                                                          \
    } while (0)

typedef struct {
    const LanceDataset* dataset;
    const LanceVectorModel* model;
    const LanceVectorIndexParams* params;
    const uint8_t* uuid;
    const uint32_t* fragments;
    size_t fragment_count;
    pthread_barrier_t* start;
    int rc;
    int code;
    uint8_t* bytes;
    size_t len;
} Attempt;

static void* run_attempt(void* arg) {
    Attempt* a = arg;
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = a->fragments;
    o.fragment_count = a->fragment_count;
    o.index_uuid = a->uuid;
    LanceIndexSegmentBuilder* b = vector_segment_builder_new(a->dataset, "vec", NULL, a->params, &o, a->model);
    pthread_barrier_wait(a->start);
    if (b == NULL) {
        a->rc = -1;
        a->code = lance_last_error_code();
        return NULL;
    }
    a->rc = lance_index_segment_builder_execute_uncommitted(b, &a->bytes, &a->len);
    a->code = a->rc == 0 ? LANCE_OK : lance_last_error_code();
    lance_index_segment_builder_free(b);
    return NULL;
}

int main(void) {
    char* dir = temp_dir_create("uuid-claim");
    CHECK(dir != NULL, "temp dir");
    if (!dir) return 1;
    char uri[4096];
    snprintf(uri, sizeof uri, "%s/ds", dir);
    DemoData data = {0};
    CHECK(demo_data_make(&data, ROWS, DIM, 8, 0.5f, 42) == 0, "demo data");
    LanceDataset* ds = demo_data_write(uri, &data, 0, ROWS, 0, ROWS / 4, NULL);
    CHECK(ds != NULL, "write");
    if (!ds) return 1;
    LanceVectorIndexParams params = {0};
    params.index_type = LANCE_INDEX_IVF_FLAT;
    params.metric = LANCE_METRIC_L2;
    params.num_partitions = PARTITIONS;
    LanceVectorModel* model = NULL;
    CHECK(lance_vector_model_train(ds, "vec", &params, NULL, 0, NULL, &model) == 0, "train");
    /* The whole dataset (4 fragments): options->fragment_ids NULL. */
    const uint32_t* fragments = NULL;
    size_t fragment_count = 0;
    CHECK(lance_dataset_fragment_count(ds) == 4, "4 fragments");

    int won = 0, duplicates = 0;
    for (int round = 0; round < ROUNDS; round++) {
        uint8_t uuid[16];
        for (int i = 0; i < 16; i++) uuid[i] = (uint8_t)(rand() & 0xff);
        uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40);
        uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, 2);
        Attempt attempts[2];
        pthread_t threads[2];
        for (int t = 0; t < 2; t++) {
            attempts[t] = (Attempt){ds, model, &params, uuid, fragments, fragment_count, &start, 0, 0, NULL, 0};
            pthread_create(&threads[t], NULL, run_attempt, &attempts[t]);
        }
        for (int t = 0; t < 2; t++) pthread_join(threads[t], NULL);
        pthread_barrier_destroy(&start);

        int ok = (attempts[0].rc == 0) + (attempts[1].rc == 0);
        CHECK(ok == 1, "round %d: exactly one attempt succeeds, got %d (codes %d, %d)", round, ok, attempts[0].code,
              attempts[1].code);
        Attempt* winner = attempts[0].rc == 0 ? &attempts[0] : &attempts[1];
        Attempt* loser = winner == &attempts[0] ? &attempts[1] : &attempts[0];
        CHECK(loser->code == LANCE_ERR_DUPLICATE_SEGMENT, "round %d: the other fails with DUPLICATE_SEGMENT, got %d",
              round, loser->code);
        won += ok == 1;
        duplicates += loser->code == LANCE_ERR_DUPLICATE_SEGMENT;
        if (ok != 1) {
            for (int t = 0; t < 2; t++) lance_free_bytes(attempts[t].bytes);
            continue;
        }

        /* The winner's segment is complete: it commits (the commit checks
         * every listed file and its size) as its own index. */
        char name[32];
        snprintf(name, sizeof name, "idx_%d", round);
        const uint8_t* ptrs[1] = {winner->bytes};
        size_t lens[1] = {winner->len};
        LanceCommitIndexResult result = {0};
        CHECK(lance_dataset_commit_index_segments_v2(ds, name, "vec", ptrs, lens, 1, NULL, &result) == 0,
              "round %d: commit", round);
        CHECK(!result.already_committed, "round %d: a new commit", round);
        lance_free_bytes(winner->bytes);
    }

    /* Every committed index answers exactly (IVF_FLAT, every partition
     * probed) as brute force. */
    int exact = 0;
    for (int q = 0; q < QUERIES; q++) {
        const float* query = demo_data_query(&data, q);
        int64_t want[K], got[K];
        CHECK(demo_data_nearest(&data, query, K, want) == K, "brute force");
        const char* cols[] = {"id", NULL};
        LanceScanner* s = lance_scanner_new(ds, cols, NULL);
        CHECK(s != NULL, "scanner");
        if (!s) continue;
        CHECK(lance_scanner_nearest(s, "vec", query, DIM, LANCE_DTYPE_FLOAT32, K) == 0, "nearest");
        CHECK(lance_scanner_set_nprobes(s, PARTITIONS) == 0, "nprobes");
        int n = demo_scan_ids(s, got, K);
        lance_scanner_close(s);
        CHECK(n == K && memcmp(want, got, sizeof want) == 0, "query %d: k-NN equals brute force", q);
        exact += n == K && memcmp(want, got, sizeof want) == 0;
    }

    printf("uuid claim: %d rounds, %d with exactly one winner, %d losers with DUPLICATE_SEGMENT; %d/%d queries exact\n",
           ROUNDS, won, duplicates, exact, QUERIES);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
    demo_data_free(&data);
    remove_tree(dir);
    free(dir);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    return 0;
}
