/* bench_commit_scaling: commit time and listing time against the number of
 * segments of one index, 1 to 256, in one process (no start-up cost in the
 * figures).  Each count gets a fresh dataset of 256 fragments and its
 * segments (IVF_FLAT, one shared model) are built beforehand.
 * Prints CSV: segments,commit_ms,list_ms,coverage_ms
 * Usage: bench_commit_scaling [max_segments] */
#include <stdio.h>
#include <stdlib.h>

#include "die.h"
#include "test_util.h"

int main(int argc, char** argv) {
    int max = argc > 1 ? atoi(argv[1]) : 256;
    const int frags = 256, per_frag = 100;
    char* dir = tu_temp_dir("bench-commit-scaling");
    TuData data = tu_make_data(frags * per_frag, 16, 8, 0.5f, 4);
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 8;
    printf("segments,commit_ms,list_ms,coverage_ms\n");
    for (int count = 1; count <= max && count <= frags; count *= 2) {
        char uri[600];
        snprintf(uri, sizeof uri, "%s/s%d.lance", dir, count);
        LanceDataset* ds = tu_write(uri, &data, 0, data.rows, LANCE_WRITE_CREATE, per_frag);
        if (!ds) die("write");
        LanceVectorModel* m = NULL;
        if (lance_dataset_train_vector_model(ds, "vec", &p, NULL, 0, &m) != 0) die("train");
        const uint8_t** ptrs = calloc((size_t)count, sizeof *ptrs);
        size_t* lens = calloc((size_t)count, sizeof *lens);
        int per = frags / count;
        for (int g = 0; g < count; g++) {
            uint32_t ids[256];
            for (int i = 0; i < per; i++) ids[i] = (uint32_t)(g * per + i);
            LanceIndexSegmentBuildOptionsRfc o = {0};
            o.fragment_ids = ids;
            o.fragment_count = (size_t)per;
            o.model = m;
            o.train = LANCE_TRAIN_NEVER;
            LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_vector_rfc(ds, "vec", NULL, &p, &o);
            uint8_t* bytes = NULL;
            if (!b || lance_index_segment_builder_execute_uncommitted(b, &bytes, &lens[g]) != 0) die("segment");
            ptrs[g] = bytes;
            lance_index_segment_builder_free(b);
        }
        double t0 = tu_now();
        if (lance_dataset_commit_index_segments_rfc(ds, "vec_idx", "vec", ptrs, lens, (size_t)count, false) != 0)
            die("commit");
        double t1 = tu_now();
        const char* list = lance_dataset_index_segments_json(ds);
        double t2 = tu_now();
        const char* cov = lance_dataset_index_coverage_json(ds, "vec_idx");
        double t3 = tu_now();
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
    tu_free_data(&data);
    tu_remove_tree(dir);
    free(dir);
    return 0;
}
