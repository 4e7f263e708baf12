/* Many C threads calling the library at once: shared dataset handles,
 * per-thread error state, concurrent searches and writes. */
#include <pthread.h>
#include <string.h>

#include "test_util.h"

#define THREADS 8
#define ROUNDS 10

static TuData data;
static LanceDataset* shared;
static char* dir;

typedef struct {
    int index;
    int failures;
} Worker;

static void* worker(void* arg) {
    Worker* w = arg;
    for (int r = 0; r < ROUNDS; r++) {
        /* A search through the shared handle must equal brute force. */
        const float* query = data.vectors + (int64_t)((w->index * ROUNDS + r) * 13 % data.rows) * data.dim;
        const char* cols[] = {"id", NULL};
        LanceScanner* s = lance_scanner_new(shared, cols, NULL);
        if (!s || lance_scanner_nearest(s, "vec", query, (size_t)data.dim, LANCE_DTYPE_FLOAT32, 5) != 0) {
            w->failures++;
            lance_scanner_close(s);
            continue;
        }
        int64_t got[5], truth[5];
        if (tu_knn_ids(s, got, 5) != 5) w->failures++;
        tu_brute_force_knn(&data, query, 5, truth);
        if (memcmp(got, truth, sizeof got) != 0) w->failures++;
        lance_scanner_close(s);

        /* An error on this thread stays on this thread. */
        if (lance_dataset_open(NULL, NULL, 0) != NULL) w->failures++;
        if (lance_last_error_code() != LANCE_ERR_INVALID_ARGUMENT) w->failures++;
        if (lance_dataset_count_rows(shared) != (uint64_t)data.rows) w->failures++;
        if (lance_last_error_code() != LANCE_OK) w->failures++;
    }
    /* Each thread writes a dataset of its own. */
    char uri[600];
    snprintf(uri, sizeof uri, "%s/t%d.lance", dir, w->index);
    LanceDataset* own = tu_write(uri, &data, 0, 100 + w->index, LANCE_WRITE_CREATE, 50);
    if (!own || lance_dataset_count_rows(own) != (uint64_t)(100 + w->index)) w->failures++;
    lance_dataset_close(own);
    return NULL;
}

int main(void) {
    data = tu_make_data(1500, 16, 6, 0.5f, 99);
    dir = tu_temp_dir("threads");
    char uri[600];
    snprintf(uri, sizeof uri, "%s/shared.lance", dir);
    shared = tu_write(uri, &data, 0, data.rows, LANCE_WRITE_CREATE, 300);
    CHECK(shared != NULL);
    pthread_t threads[THREADS];
    Worker workers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i].index = i;
        workers[i].failures = 0;
        pthread_create(&threads[i], NULL, worker, &workers[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        tu_checks++;
        if (workers[i].failures) {
            fprintf(stderr, "thread %d: %d failures\n", i, workers[i].failures);
            tu_failures++;
        }
    }
    lance_dataset_close(shared);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_threads");
}
