/* bench_commit: the coordinator's side, measured side by side in one run.
 *
 * 1. Recall parity: N x 128 clustered vectors (default 50k) in 16 fragments,
 *    IVF_PQ 64 partitions x 16 sub-vectors.  Recall@10 against brute force
 *    of: the one-shot index (its own training); one segment over the whole
 *    dataset built from a shared model (= a one-shot build with that model);
 *    four segments from the same shared model.  At nprobes 16 without
 *    refinement (where a shared model should give the one-segment answers
 *    exactly) and with refine 5 (where four segments each contribute
 *    candidates).
 * 2. Commit time for 4 and for 64 segments (64 fragments, IVF_FLAT, the
 *    segments built beforehand; median of `repeats`).
 * Usage: bench_commit [rows] [repeats] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_data.h"
#include "die.h"
#include "lance/lance.h"
#include "measure.h"
#include "segment_params.h"
#include "temp_dir.h"

static uint8_t* segment(LanceDataset* ds, const LanceVectorIndexParams* p, const LanceVectorModel* m,
                        const uint32_t* fragment_ids, size_t n, size_t* len) {
    uint8_t* bytes = NULL;
    if (vector_segment_build(ds, "vec", p, m, fragment_ids, n, NULL, &bytes, len) != 0) die("segment");
    return bytes;
}

/* Commits `count` segments, each over `per` consecutive fragments. */
static void commit_groups(LanceDataset* ds, const LanceVectorIndexParams* p, const LanceVectorModel* m, int count,
                          int per, const char* name) {
    const uint8_t* ptrs[64];
    size_t lens[64];
    for (int g = 0; g < count; g++) {
        uint32_t fragment_ids[64];
        for (int i = 0; i < per; i++) fragment_ids[i] = (uint32_t)(g * per + i);
        ptrs[g] = segment(ds, p, m, fragment_ids, (size_t)per, &lens[g]);
    }
    if (lance_dataset_commit_index_segments_v2(ds, name, "vec", ptrs, lens, (size_t)count, NULL, NULL) != 0)
        die("commit");
    for (int g = 0; g < count; g++) lance_free_bytes((uint8_t*)ptrs[g]);
}

static double recall(LanceDataset* ds, const DemoData* data, uint32_t nprobes, uint32_t refine) {
    double r = demo_data_recall(ds, data, 100, nprobes, refine, NULL);
    if (r < 0) die("query");
    return r;
}

int main(int argc, char** argv) {
    int64_t rows = argc > 1 ? atoll(argv[1]) : 50000;
    int repeats = argc > 2 ? atoi(argv[2]) : 3;
    const int dim = 128;
    char* dir = temp_dir_create("bench-commit");
    if (!dir) die_errno("creating a temporary directory");
    DemoData data;
    if (demo_data_make(&data, rows, dim, 64, 2.0f, 7) != 0) die_errno("generating the vectors");

    /* ---- 1. recall parity ---- */
    char uri[3][600];
    LanceDataset* ds[3];
    for (int i = 0; i < 3; i++) {
        snprintf(uri[i], sizeof uri[i], "%s/r%d.lance", dir, i);
        ds[i] = demo_data_write(uri[i], &data, 0, rows, LANCE_WRITE_CREATE, (uint64_t)((rows + 15) / 16), NULL);
        if (!ds[i]) die("write");
    }
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_PQ;
    p.num_partitions = 64;
    p.num_sub_vectors = 16;
    double t0 = monotonic_seconds();
    if (lance_dataset_create_vector_index(ds[0], "vec", "idx", &p, false) != 0) die("one-shot");
    double t1 = monotonic_seconds();
    LanceVectorModel* model = NULL;
    if (lance_vector_model_train(ds[1], "vec", &p, NULL, 0, NULL, &model) != 0) die("train");
    commit_groups(ds[1], &p, model, 1, 16, "idx");
    commit_groups(ds[2], &p, model, 4, 4, "idx");
    printf("recall@10 over 100 queries, %lld x %d, IVF_PQ 64 x 16 (one-shot build %.2f s)\n", (long long)rows, dim,
           t1 - t0);
    printf("  %-34s %12s %12s\n", "index", "nprobes 16", "+ refine 5");
    const char* names[3] = {"one-shot (own training)", "1 segment, shared model", "4 segments, shared model"};
    double r[3][2];
    for (int i = 0; i < 3; i++) {
        r[i][0] = recall(ds[i], &data, 16, 0);
        r[i][1] = recall(ds[i], &data, 16, 5);
        printf("  %-34s %12.3f %12.3f\n", names[i], r[i][0], r[i][1]);
    }
    printf("  4 segments - one-shot:            %+12.3f %+12.3f\n", r[2][0] - r[0][0], r[2][1] - r[0][1]);
    printf("  4 segments - 1 segment (same model): %+9.3f %+12.3f\n", r[2][0] - r[1][0], r[2][1] - r[1][1]);
    for (int i = 0; i < 3; i++) lance_dataset_close(ds[i]);
    lance_vector_model_free(model);

    /* ---- 2. commit time, 4 and 64 segments ---- */
    int64_t small_rows = 64000;
    DemoData small;
    if (demo_data_make(&small, small_rows, 32, 16, 0.5f, 9) != 0) die_errno("generating the vectors");
    LanceVectorIndexParams f = {0};
    f.index_type = LANCE_INDEX_IVF_FLAT;
    f.num_partitions = 16;
    double c4[16], c64[16];
    for (int rep = 0; rep < repeats && rep < 16; rep++) {
        char u[600];
        snprintf(u, sizeof u, "%s/c%d.lance", dir, rep);
        LanceDataset* c = demo_data_write(u, &small, 0, small_rows, LANCE_WRITE_CREATE, 1000, NULL);
        if (!c) die("write");
        LanceVectorModel* m = NULL;
        if (lance_vector_model_train(c, "vec", &f, NULL, 0, NULL, &m) != 0) die("train");
        const int counts[2] = {4, 64};
        for (int k = 0; k < 2; k++) {
            int count = counts[k], per = 64 / count;
            const uint8_t* ptrs[64];
            size_t lens[64];
            for (int g = 0; g < count; g++) {
                uint32_t fragment_ids[64];
                for (int i = 0; i < per; i++) fragment_ids[i] = (uint32_t)(g * per + i);
                ptrs[g] = segment(c, &f, m, fragment_ids, (size_t)per, &lens[g]);
            }
            char name[32];
            snprintf(name, sizeof name, "idx%d", count);
            double a = monotonic_seconds();
            if (lance_dataset_commit_index_segments_v2(c, name, "vec", ptrs, lens, (size_t)count, NULL, NULL) != 0)
                die("commit");
            double b = monotonic_seconds();
            (k == 0 ? c4 : c64)[rep] = b - a;
            for (int g = 0; g < count; g++) lance_free_bytes((uint8_t*)ptrs[g]);
        }
        lance_vector_model_free(m);
        lance_dataset_close(c);
    }
    int n = repeats < 16 ? repeats : 16;
    double m4 = median_of(c4, (size_t)n), m64 = median_of(c64, (size_t)n);
    printf("commit time (median of %d): 4 segments %.1f ms, 64 segments %.1f ms (ratio %.2f)\n", n, m4 * 1000,
           m64 * 1000, m64 / m4);
    demo_data_free(&small);
    demo_data_free(&data);
    remove_tree(dir);
    free(dir);
    return 0;
}
