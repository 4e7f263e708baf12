/* test_cpu_level: a write, a count and an exact k-NN through the library.
 * CMake runs it natively, and test_cpu_level.sh runs it on emulated CPUs
 * (lance.h "CPU"): on one without a feature the library was compiled for,
 * it must never reach main. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define ROWS 600
#define DIM 8

static char* dir;
static char uri[600];

static void works(void) {
    TuData data = tu_make_data(ROWS, DIM, 4, 1.0f, 11);
    LanceDataset* ds = tu_write(uri, &data, 0, ROWS, LANCE_WRITE_CREATE, 200);
    CHECK(ds != NULL);
    if (ds) {
        CHECK(lance_dataset_count_rows(ds) == ROWS);
        const float* q = data.vectors + 17 * DIM;
        int64_t want[5], got[5];
        tu_brute_force_knn(&data, q, 5, want);
        const char* cols[] = {"id", NULL};
        LanceScanner* s = lance_scanner_new(ds, cols, NULL);
        CHECK(s != NULL);
        if (s) {
            CHECK_OK(lance_scanner_nearest(s, "vec", q, DIM, LANCE_DTYPE_FLOAT32, 5));
            CHECK(tu_knn_ids(s, got, 5) == 5);
            CHECK(memcmp(want, got, sizeof want) == 0);
            lance_scanner_close(s);
        }
        lance_dataset_close(ds);
    }
    tu_free_data(&data);
}

int main(void) {
    dir = tu_temp_dir("cpu-level");
    snprintf(uri, sizeof uri, "%s/d.lance", dir);
    RUN(works);
    tu_remove_tree(dir);
    free(dir);
    return tu_finish("test_cpu_level");
}
