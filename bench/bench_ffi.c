/* bench_ffi: the FFI-cost comparisons with pylance in bench/suite.py.
 *
 *   bench_ffi URI CENTROIDS.f32 DIM FRAGMENTS(0,1,...)
 *   bench_ffi --train URI PARTITIONS SUB_VECTORS [MAX_ITERATIONS]
 *   bench_ffi --oneshot-train URI PARTITIONS SUB_VECTORS [MAX_ITERATIONS]
 *
 * The first form builds one IVF_FLAT segment through lance.h with the given
 * centroids (CENTROIDS.f32: raw little-endian float32, DIM per row); nothing
 * is committed.  The second trains an IVF_PQ model (IVF centroids, then the
 * PQ codebook: lance_vector_model_train) with the core's default
 * sample rate and MAX_ITERATIONS k-means iterations (absent or 0: the core's
 * default, 50), as pylance's IndicesBuilder.train_ivf and train_pq do with
 * max_iters.  The training runs twice and prints the second run's time in
 * seconds; the segment build runs 1 + 5 times and prints the median of the
 * last 5 (the first run warms the process up, as a
 * long-lived worker would be; a sub-second build needs several samples).
 * The third runs the one-shot IVF_PQ build (lance_dataset_create_vector_
 * index_with_control, replacing the index each time: URI should be a
 * scratch copy) twice and prints, for the second, its training phase (from
 * the call to the end of "train_quantizer", read from its progress events)
 * and the whole build, in seconds: what standalone training is compared
 * with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "die.h"
#include "f32_arrow.h"
#include "id_list.h"
#include "lance/lance.h"
#include "measure.h"

/* The arguments both training modes take, "MODE URI PARTITIONS SUB_VECTORS
 * [MAX_ITERATIONS]": the dataset (dies when it cannot open) and IVF_PQ params,
 * or NULL after printing the usage. */
static LanceDataset* train_args(int argc, char** argv, LanceVectorIndexParams* p) {
    uint64_t partitions = 0, subs = 0, iterations = 0;
    if ((argc != 5 && argc != 6) || decimal_parse(argv[3], INT32_MAX, &partitions) != 0 ||
        decimal_parse(argv[4], INT32_MAX, &subs) != 0 ||
        (argc == 6 && decimal_parse(argv[5], INT32_MAX, &iterations) != 0)) {
        fprintf(stderr, "usage: bench_ffi %s URI PARTITIONS SUB_VECTORS [MAX_ITERATIONS]\n",
                argc > 1 ? argv[1] : "--train");
        return NULL;
    }
    LanceDataset* ds = lance_dataset_open(argv[2], NULL, 0);
    if (!ds) die("open");
    memset(p, 0, sizeof *p);
    p->index_type = LANCE_INDEX_IVF_PQ;
    p->num_partitions = (uint32_t)partitions;
    p->num_sub_vectors = (uint32_t)subs;
    p->max_iterations = (uint32_t)iterations;
    return ds;
}

static int train(int argc, char** argv) {
    LanceVectorIndexParams p;
    LanceDataset* ds = train_args(argc, argv, &p);
    if (!ds) return 2;
    double took = 0;
    for (int round = 0; round < 2; round++) {
        double t0 = monotonic_seconds();
        LanceVectorModel* model = NULL;
        if (lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model) != 0) die("train");
        took = monotonic_seconds() - t0;
        lance_vector_model_free(model);
    }
    printf("%.4f\n", took);
    lance_dataset_close(ds);
    return 0;
}

/* When the one-shot build's quantizer training ended. */
static void on_progress(void* ctx, int32_t event, const char* stage, uint64_t total, const char* unit,
                        uint64_t completed) {
    (void)total;
    (void)unit;
    (void)completed;
    if (event == LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE && strcmp(stage, "train_quantizer") == 0) {
        *(double*)ctx = monotonic_seconds();
    }
}

static int oneshot_train(int argc, char** argv) {
    LanceVectorIndexParams p;
    LanceDataset* ds = train_args(argc, argv, &p);
    if (!ds) return 2;
    double trained = 0, t0 = 0, t1 = 0;
    for (int round = 0; round < 2; round++) {
        trained = 0;
        LanceIndexBuildControl control = {on_progress, &trained, NULL};
        t0 = monotonic_seconds();
        if (lance_dataset_create_vector_index_v2(ds, "vec", "bench_oneshot", &p, true,
                                                 &(LanceIndexCreateOptions){.control = &control}) != 0) {
            die("one-shot build");
        }
        t1 = monotonic_seconds();
        if (trained == 0) {
            fprintf(stderr, "bench_ffi: the one-shot build reported no end of \"train_quantizer\"\n");
            return 1;
        }
    }
    printf("%.4f %.4f\n", trained - t0, t1 - t0);
    lance_dataset_close(ds);
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && !strcmp(argv[1], "--train")) return train(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "--oneshot-train")) return oneshot_train(argc, argv);
    if (argc != 5) {
        fprintf(stderr, "usage: bench_ffi URI CENTROIDS.f32 DIM FRAGMENTS\n");
        return 2;
    }
    uint64_t dim = 0;
    if (decimal_parse(argv[3], INT32_MAX, &dim) != 0 || dim == 0) {
        fprintf(stderr, "bench_ffi: DIM \"%s\" is not a positive number\n", argv[3]);
        return 2;
    }
    uint32_t* frags = NULL;
    size_t n = 0;
    char why[160];
    if (id_list_parse(argv[4], ID_LIST_UNIQUE, &frags, &n, why, sizeof why) != 0) {
        fprintf(stderr, "bench_ffi: FRAGMENTS: %s\n", why);
        return 2;
    }
    size_t count = 0;
    float* centroids = read_f32_file(argv[2], &count);
    if (!centroids || count % dim != 0 || count / dim > UINT32_MAX) {
        fprintf(stderr, "bench_ffi: bad centroids file\n");
        return 2;
    }
    uint32_t k = (uint32_t)(count / dim);
    LanceDataset* ds = lance_dataset_open(argv[1], NULL, 0);
    if (!ds) die("open");
    /* The arrays take the values: releasing them frees the centroids. */
    struct ArrowArray arr;
    struct ArrowSchema sch;
    if (f32_list_arrow(centroids, count, (int32_t)dim, &arr, &sch) != 0) die_errno("the centroids as Arrow");
    LanceVectorIndexSegmentParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = k;
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = frags;
    o.fragment_count = n;
    o.ivf_centroids = &arr;
    o.ivf_centroids_schema = &sch;
    o.mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
    double took[6];
    for (int round = 0; round < 6; round++) {
        double t0 = monotonic_seconds();
        LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_vector(ds, "vec", NULL, &p, &o);
        uint8_t* bytes = NULL;
        size_t blen = 0;
        if (!b || lance_index_segment_builder_execute_uncommitted(b, &bytes, &blen) != 0) die("build");
        took[round] = monotonic_seconds() - t0;
        lance_free_bytes(bytes);
        lance_index_segment_builder_free(b);
    }
    sort_doubles(took + 1, 5);
    printf("%.4f\n", took[3]);
    arr.release(&arr);
    sch.release(&sch);
    lance_dataset_close(ds);
    free(frags);
    return 0;
}
