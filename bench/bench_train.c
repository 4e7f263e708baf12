/* Distributed training against one-node training, one core per process.
 *
 *   bench_train --one-node URI PARTITIONS SUB_VECTORS [MODEL_OUT]
 *   bench_train URI WORKERS PARTITIONS SUB_VECTORS LANCE_INDEX [MODEL_OUT]
 *
 * The first trains the IVF_PQ model with lance_vector_model_train()
 * (run it under `taskset -c 0` with RAYON_NUM_THREADS=1 for one core) and
 * prints "SECONDS".  The second is a coordinator: it splits the fragments
 * into WORKERS groups of balanced rows, starts one `LANCE_INDEX train-worker`
 * process per group, pinned to core (i mod cores) with RAYON_NUM_THREADS=1,
 * and drives the rounds over their stdin/stdout, reducing in this process.
 * It prints "SECONDS ROUNDS BYTES IVF_LOSS PQ_LOSS MAX_ROUND_BYTES
 * REDUCE_S MAX_REDUCE_S IVF_S RSS_MIB...": the time from the first request
 * to the model (the workers' sampling included, their start not), the
 * rounds, the bytes exchanged (every request sent to every worker and every
 * statistics file), the final losses, the most bytes one round moved, the
 * coordinator's reductions (all rounds, and the longest), the time to the
 * end of the IVF phases, and each worker's peak resident set in MiB.  Both write the model to
 * MODEL_OUT when given (for a build and a recall measurement), and both cap
 * each k-means at BENCH_TRAIN_ITERATIONS iterations when it is set.
 *
 *   bench_train --values MODEL CENTROIDS_OUT CODEBOOK_OUT
 *
 * reads a model through the library (lance_vector_model_parse and its
 * Arrow exports) and writes its IVF centroids and PQ codebook as raw
 * little-endian float32 files (the codebook file empty for a model without
 * one; the files `lance-index build --ivf-centroids
 * --pq-codebook` reads: centroids row by row, the codebook sub-vector by
 * sub-vector, each 2^BITS codewords of DIMENSION / SUB_VECTORS values), and
 * prints "DIMENSION PARTITIONS SUB_VECTORS BITS": how the benchmarks read a
 * model, whatever its byte format. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "die.h"
#include "files.h"
#include "id_list.h"
#include "lance/lance.h"
#include "measure.h"
#include "temp_dir.h"
#include "training_rounds.h"

static LanceVectorIndexParams params(uint64_t partitions, uint64_t subs) {
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_PQ;
    p.metric = LANCE_METRIC_L2;
    p.num_partitions = (uint32_t)partitions;
    p.num_sub_vectors = (uint32_t)subs;
    p.num_bits = 8;
    /* BENCH_TRAIN_ITERATIONS caps each k-means at another iteration count
     * (0 or unset: the library's default). */
    const char* iterations = getenv("BENCH_TRAIN_ITERATIONS");
    uint64_t cap = 0;
    if (iterations && decimal_parse(iterations, INT32_MAX, &cap) != 0) die("BENCH_TRAIN_ITERATIONS is not a number");
    p.max_iterations = (uint32_t)cap;
    return p;
}

static void save_model(const LanceVectorModel* model, const char* path) {
    uint8_t* bytes = NULL;
    size_t len = 0;
    if (lance_vector_model_serialize(model, &bytes, &len) != 0) die("serialize");
    if (write_whole_file(path, bytes, len) != 0) die_errno(path);
    lance_free_bytes(bytes);
}

static int one_node(int argc, char** argv) {
    uint64_t partitions = 0, subs = 0;
    if ((argc != 5 && argc != 6) || decimal_parse(argv[3], INT32_MAX, &partitions) != 0 ||
        decimal_parse(argv[4], INT32_MAX, &subs) != 0) {
        fprintf(stderr, "usage: bench_train --one-node URI PARTITIONS SUB_VECTORS [MODEL_OUT]\n");
        return 2;
    }
    LanceDataset* ds = lance_dataset_open(argv[2], NULL, 0);
    if (!ds) die("open");
    LanceVectorIndexParams p = params(partitions, subs);
    LanceVectorModel* model = NULL;
    double t0 = monotonic_seconds();
    if (lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model) != 0) die("train");
    printf("%.4f\n", monotonic_seconds() - t0);
    if (argc == 6) save_model(model, argv[5]);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
    return 0;
}

static int distributed(int argc, char** argv) {
    uint64_t workers = 0, partitions = 0, subs = 0;
    if ((argc != 6 && argc != 7) || decimal_parse(argv[2], 64, &workers) != 0 || workers == 0 ||
        decimal_parse(argv[3], INT32_MAX, &partitions) != 0 || decimal_parse(argv[4], INT32_MAX, &subs) != 0) {
        fprintf(stderr, "usage: bench_train URI WORKERS PARTITIONS SUB_VECTORS LANCE_INDEX [MODEL_OUT]\n");
        return 2;
    }
    const char* uri = argv[1];
    LanceDataset* ds = lance_dataset_open(uri, NULL, 0);
    if (!ds) die("open");
    LanceFragmentPlan* plan = NULL;
    if (lance_dataset_plan_fragment_groups(ds, (size_t)workers, &plan) != 0) die("plan");
    size_t n = lance_fragment_plan_group_count(plan);
    cpu_set_t mine;
    int cores = sched_getaffinity(0, sizeof mine, &mine) == 0 ? CPU_COUNT(&mine) : 1;
    TrainingProcess* w = calloc(n, sizeof *w);
    if (!w) die("out of memory");
    for (size_t g = 0; g < n; g++) {
        const uint32_t* ids = NULL;
        size_t count = 0;
        uint64_t rows = 0;
        if (lance_fragment_plan_group(plan, g, &ids, &count, &rows) != 0) die("plan group");
        char* frags = id_list_format(ids, count);
        if (!frags) die("out of memory");
        char* args[] = {argv[5], "train-worker", (char*)uri, "--fragments", frags, NULL};
        if (training_process_start(args, (int)(g % (size_t)cores), &w[g]) != 0) die_errno("starting a worker");
        free(frags);
    }
    char* dir = temp_dir_create("bench-train");
    if (!dir) die_errno("temp dir");

    LanceVectorIndexParams p = params(partitions, subs);
    LanceVectorTraining* t = NULL;
    /* BENCH_TRAIN_SEED picks another seed (the initial centroids). */
    uint64_t seed = 1;
    const char* seed_text = getenv("BENCH_TRAIN_SEED");
    if (seed_text && decimal_parse(seed_text, UINT64_MAX, &seed) != 0) die("BENCH_TRAIN_SEED is not a number");
    if (lance_vector_training_new("vec", &p, seed, &t) != 0) die("training");
    TrainingFigures figures = {0};
    double t0 = monotonic_seconds();
    if (training_run(t, w, n, dir, &figures) != 0) return 1;
    LanceVectorTrainingInfo info;
    if (lance_vector_training_info(t, &info) != 0) die("info");
    double seconds = monotonic_seconds() - t0;
    if (argc == 7) {
        LanceVectorModel* model = NULL;
        if (lance_vector_training_model(t, &model) != 0) die("model");
        save_model(model, argv[6]);
        lance_vector_model_free(model);
    }
    if (training_processes_stop(w, n) != 0) fprintf(stderr, "bench_train: a worker did not exit cleanly\n");
    printf("%.4f %u %llu %.6g %.6g %llu %.4f %.4f %.4f", seconds, info.rounds, (unsigned long long)figures.bytes,
           info.ivf_loss, info.pq_loss, (unsigned long long)figures.max_round_bytes, figures.reduce_seconds,
           figures.max_reduce_seconds, figures.ivf_seconds);
    for (size_t g = 0; g < n; g++) printf(" %.0f", (double)w[g].peak_rss_kib / 1024.0);
    printf("\n");
    remove_tree(dir);
    free(dir);
    free(w);
    lance_vector_training_free(t);
    lance_fragment_plan_free(plan);
    lance_dataset_close(ds);
    return 0;
}

/* The float32 values of an exported FixedSizeList<float32> array, written
 * little-endian to `path`; releases the array and its schema. */
static void write_values(struct ArrowArray* array, struct ArrowSchema* schema, const char* path) {
    const struct ArrowArray* child = array->children[0];
    const float* values = (const float*)child->buffers[1] + child->offset;
    size_t n = (size_t)child->length;
    unsigned char* bytes = malloc(4 * n + 1);
    if (!bytes) die("out of memory");
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &values[i], sizeof bits);
        for (int b = 0; b < 4; b++) bytes[4 * i + (size_t)b] = (unsigned char)(bits >> (8 * b));
    }
    if (write_whole_file(path, bytes, 4 * n) != 0) die_errno(path);
    free(bytes);
    array->release(array);
    schema->release(schema);
}

static int model_values(int argc, char** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: bench_train --values MODEL CENTROIDS_OUT CODEBOOK_OUT\n");
        return 2;
    }
    size_t len = 0;
    unsigned char* bytes = read_whole_file(argv[2], &len);
    if (!bytes) die_errno(argv[2]);
    LanceVectorModel* model = NULL;
    if (lance_vector_model_parse(bytes, len, &model) != 0) die("parse the model");
    free(bytes);
    LanceVectorModelInfo info;
    if (lance_vector_model_info(model, &info) != 0) die("model info");
    struct ArrowArray array;
    struct ArrowSchema schema;
    if (lance_vector_model_centroids(model, &array, &schema) != 0) die("export the centroids");
    write_values(&array, &schema, argv[3]);
    if (info.has_pq_codebook) {
        if (lance_vector_model_codebook(model, &array, &schema) != 0) die("export the codebook");
        write_values(&array, &schema, argv[4]);
    } else if (write_whole_file(argv[4], "", 0) != 0) {
        die_errno(argv[4]); /* a model without a codebook: an empty file */
    }
    printf("%u %u %u %u\n", info.dimension, info.num_partitions, info.num_sub_vectors, info.num_bits);
    lance_vector_model_free(model);
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && !strcmp(argv[1], "--one-node")) return one_node(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "--values")) return model_values(argc, argv);
    return distributed(argc, argv);
}
