/* bench_commit_scaling: commit time and listing time against the number of
 * segments of one index, 1 to 256, in one process (no start-up cost in the
 * figures).  Each count gets a fresh dataset of 256 fragments and its
 * segments (IVF_FLAT, one shared model) are built beforehand.
 * Prints CSV: segments,commit_ms,list_ms,coverage_ms
 * Usage: bench_commit_scaling [max_segments] */
#include <stdio.h>
#include <stdlib.h>

#include "demo_data.h"
#include "die.h"
#include "lance/lance.h"
#include "measure.h"
#include "segment_params.h"
#include "temp_dir.h"

int main(int argc, char** argv) {
    int max = argc > 1 ? atoi(argv[1]) : 256;
    const int fragments = 256, per_frag = 100;
    char* dir = temp_dir_create("bench-commit-scaling");
    if (!dir) die_errno("creating a temporary directory");
    DemoData data;
    if (demo_data_make(&data, fragments * per_frag, 16, 8, 0.5f, 4) != 0) die_errno("generating the vectors");
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 8;
    printf("segments,commit_ms,list_ms,coverage_ms\n");
    for (int count = 1; count <= max && count <= fragments; count *= 2) {
        char uri[600];
        snprintf(uri, sizeof uri, "%s/s%d.lance", dir, count);
        LanceDataset* ds = demo_data_write(uri, &data, 0, data.rows, LANCE_WRITE_CREATE, per_frag, NULL);
        if (!ds) die("write");
        LanceVectorModel* m = NULL;
        if (lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &m) != 0) die("train");
        const uint8_t** ptrs = calloc((size_t)count, sizeof *ptrs);
        size_t* lens = calloc((size_t)count, sizeof *lens);
        int per = fragments / count;
        for (int g = 0; g < count; g++) {
            uint32_t ids[256];
            for (int i = 0; i < per; i++) ids[i] = (uint32_t)(g * per + i);
            uint8_t* bytes = NULL;
            if (vector_segment_build(ds, "vec", &p, m, ids, (size_t)per, NULL, &bytes, &lens[g]) != 0) die("segment");
            ptrs[g] = bytes;
        }
        double t0 = monotonic_seconds();
        if (lance_dataset_commit_index_segments_v2(ds, "vec_idx", "vec", ptrs, lens, (size_t)count, NULL, NULL) != 0)
            die("commit");
        double t1 = monotonic_seconds();
        const char* list = lance_dataset_index_segments_json(ds);
        double t2 = monotonic_seconds();
        const char* cov = lance_dataset_index_coverage_json(ds, "vec_idx");
        double t3 = monotonic_seconds();
        if (!list || !cov) die("listing");
        printf("%d,%.2f,%.2f,%.2f\n", count, (t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000);
        fflush(stdout);
        lance_free_string(list);
        lance_free_string(cov);
        for (int g = 0; g < count; g++) lance_free_bytes((uint8_t*)ptrs[g]);
        free(ptrs);
        free(lens);
        lance_vector_model_free(m);
        lance_dataset_close(ds);
    }
    demo_data_free(&data);
    remove_tree(dir);
    free(dir);
    return 0;
}
