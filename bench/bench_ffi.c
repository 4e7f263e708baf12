/* bench_ffi: one IVF_FLAT segment built through lance.h with given
 * centroids, for the FFI-cost comparison with pylance in bench/suite.py.
 *
 *   bench_ffi URI CENTROIDS.f32 DIM FRAGMENTS(0,1,...)
 *
 * CENTROIDS.f32 holds raw little-endian float32 centroids, DIM per row.
 * Builds twice and prints the second build's time in seconds (the first
 * warms the process up, as a long-lived worker would be); nothing is
 * committed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

int main(int argc, char** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: bench_ffi URI CENTROIDS.f32 DIM FRAGMENTS\n");
        return 2;
    }
    int dim = atoi(argv[3]);
    size_t len = 0;
    float* centroids = (float*)read_whole_file(argv[2], &len);
    if (!centroids || dim <= 0 || len % (sizeof(float) * (size_t)dim) != 0) {
        fprintf(stderr, "bench_ffi: bad centroids file\n");
        return 2;
    }
    int64_t k = (int64_t)(len / sizeof(float) / (size_t)dim);
    uint32_t frags[4096];
    size_t n = 0;
    for (char* p = argv[4]; *p && n < 4096;) {
        frags[n++] = (uint32_t)strtoul(p, &p, 10);
        if (*p == ',') p++;
    }
    LanceDataset* ds = lance_dataset_open(argv[1], NULL, 0);
    if (!ds) return 1;
    struct ArrowArray arr;
    struct ArrowSchema sch;
    tu_f32_list(centroids, k, dim, -1, "f", &arr, &sch);
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = (uint32_t)k;
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = frags;
    o.fragment_count = n;
    o.ivf_centroids = &arr;
    o.ivf_centroids_schema = &sch;
    o.train = LANCE_TRAIN_NEVER;
    double took = 0;
    for (int round = 0; round < 2; round++) {
        double t0 = tu_now();
        LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_vector(ds, "vec", NULL, &p, &o);
        uint8_t* bytes = NULL;
        size_t blen = 0;
        if (!b || lance_index_segment_builder_execute_uncommitted(b, &bytes, &blen) != 0) {
            const char* msg = lance_last_error_message();
            fprintf(stderr, "bench_ffi: %s\n", msg ? msg : "?");
            return 1;
        }
        took = tu_now() - t0;
        lance_free_bytes(bytes);
        lance_index_segment_builder_free(b);
    }
    printf("%.4f\n", took);
    arr.release(&arr);
    sch.release(&sch);
    lance_dataset_close(ds);
    free(centroids);
    return 0;
}
