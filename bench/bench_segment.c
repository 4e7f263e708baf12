/* bench_segment: the cost of one worker's segment against a one-shot build.
 *
 * Writes N x 128 clustered vectors in 16 fragments, then times, side by side
 * in one run: a one-shot IVF_PQ build of the whole dataset; training the
 * shared model; one segment over a quarter of the fragments with that model
 * injected; and that segment trained locally.  Prints a table with ratios
 * against the one-shot build.  Usage: bench_segment [rows] [repeats] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_data.h"
#include "die.h"
#include "lance/lance.h"
#include "measure.h"
#include "segment_params.h"
#include "temp_dir.h"

int main(int argc, char** argv) {
    int64_t rows = argc > 1 ? atoll(argv[1]) : 100000;
    int repeats = argc > 2 ? atoi(argv[2]) : 3;
    const int dim = 128;
    char* dir = temp_dir_create("bench");
    if (!dir) die_errno("creating a temporary directory");
    char uri[600];
    snprintf(uri, sizeof uri, "%s/b.lance", dir);
    DemoData data;
    if (demo_data_make(&data, rows, dim, 64, 2.0f, 3) != 0) die_errno("generating the vectors");
    LanceDataset* ds = demo_data_write(uri, &data, 0, rows, LANCE_WRITE_CREATE, (uint64_t)(rows / 16), NULL);
    if (!ds) die("write");

    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_PQ;
    p.num_partitions = 64;
    p.num_sub_vectors = 16;
    uint32_t quarter[4] = {0, 1, 2, 3};

    double one_shot[16], train[16], seg_model[16], seg_local[16];
    for (int r = 0; r < repeats; r++) {
        /* Interleaved, so drift on a shared machine hits every column alike. */
        double t0 = monotonic_seconds();
        if (lance_dataset_create_vector_index(ds, "vec", "full", &p, true) != 0) die("one-shot build");
        double t1 = monotonic_seconds();
        LanceVectorModel* model = NULL;
        if (lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model) != 0) die("train");
        double t2 = monotonic_seconds();
        uint8_t* bytes;
        size_t len;
        if (vector_segment_build(ds, "vec", &p, model, quarter, 4, NULL, &bytes, &len) != 0) die("segment (model)");
        double t3 = monotonic_seconds();
        lance_free_bytes(bytes);
        if (vector_segment_build(ds, "vec", &p, NULL, quarter, 4, NULL, &bytes, &len) != 0) die("segment (local)");
        double t4 = monotonic_seconds();
        lance_free_bytes(bytes);
        lance_vector_model_free(model);
        one_shot[r] = t1 - t0;
        train[r] = t2 - t1;
        seg_model[r] = t3 - t2;
        seg_local[r] = t4 - t3;
    }
    sort_doubles(one_shot, (size_t)repeats);
    sort_doubles(train, (size_t)repeats);
    sort_doubles(seg_model, (size_t)repeats);
    sort_doubles(seg_local, (size_t)repeats);
    int m = repeats / 2;
    printf("bench_segment: %lld x %d float32, 16 fragments, IVF_PQ 64 partitions x 16 sub-vectors, "
           "median of %d interleaved runs\n",
           (long long)rows, dim, repeats);
    printf("| step | seconds | ratio to one-shot |\n|---|---|---|\n");
    printf("| one-shot build, whole dataset | %.2f | 1.00 |\n", one_shot[m]);
    printf("| train shared model (IVF + PQ) | %.2f | %.2f |\n", train[m], train[m] / one_shot[m]);
    printf("| segment over 1/4, injected model | %.2f | %.2f |\n", seg_model[m], seg_model[m] / one_shot[m]);
    printf("| segment over 1/4, trained locally | %.2f | %.2f |\n", seg_local[m], seg_local[m] / one_shot[m]);
    lance_dataset_close(ds);
    demo_data_free(&data);
    remove_tree(dir);
    free(dir);
    return 0;
}
