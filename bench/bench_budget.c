/* bench_budget: many index builds in one process, with and without a
 * process budget (lance.h "Process budget").
 *
 * A dataset of 8 fragments (default 100k x 128 vectors each) and one shared
 * IVF_PQ model (64 partitions x 16 sub-vectors) are made once; then each of
 * four runs, in a process of its own (a budget applies once per process),
 * builds the 8 segments, one per fragment, each with a cancel token (as an
 * engine's task would): in sequence or on 8 threads at once, with no budget
 * or with compute_threads = io_threads = 2.  Reports per run the wall time,
 * the most threads the process had (sampled every 2 ms; the host's own
 * threads, main, the sampler and the builders, subtracted) and its peak
 * RSS.  Every run checks its 8 segments commit.
 * Usage: bench_budget [--csv] [rows_per_fragment] [budget_threads]
 * (default 100000 and 2)
 *
 * --csv adds, after the human output, a line "# csv" and then one record per
 * run: budget,"RUN",SECONDS,LIBRARY_THREADS,PEAK_RSS_MB */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demo_data.h"
#include "die.h"
#include "files.h"
#include "lance/lance.h"
#include "measure.h"
#include "segment_params.h"
#include "temp_dir.h"

enum { FRAGMENTS = 8, DIM = 128 };

/* One build, as an engine's task: its fragment, and the cancel token the
 * engine keeps to stop it; the segment's metadata when it is done. */
typedef struct {
    LanceDataset* ds;
    const LanceVectorModel* model;
    const LanceVectorIndexParams* params;
    uint32_t fragment;
    LanceIndexBuildCancelToken* token;
    uint8_t* bytes;
    size_t len;
} Task;

static void* build(void* arg) {
    Task* t = arg;
    if (vector_segment_build(t->ds, "vec", t->params, t->model, &t->fragment, 1, t->token, &t->bytes, &t->len) != 0)
        die("building a segment");
    return NULL;
}

/* One run, in this (child) process: prints "SECONDS THREADS RSS_MB". */
static int run(const char* uri, const char* model_path, int concurrent, uint32_t budget_threads, const char* index) {
    if (budget_threads) {
        LanceProcessBudget budget = {budget_threads, budget_threads, NULL};
        if (lance_process_budget_set(&budget) != 0) die("setting the budget");
    }
    size_t len = 0;
    unsigned char* bytes = read_whole_file(model_path, &len);
    LanceVectorModel* model = NULL;
    if (!bytes || lance_vector_model_parse(bytes, len, &model) != 0) die("reading the model");
    free(bytes);
    LanceDataset* ds = lance_dataset_open(uri, NULL, 0);
    if (!ds) die("opening the dataset");
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_PQ;
    p.num_partitions = 64;
    p.num_sub_vectors = 16;
    Task tasks[FRAGMENTS];
    pthread_t threads[FRAGMENTS];
    int host = 2 + (concurrent ? FRAGMENTS : 0);
    ThreadPeak* peak = thread_peak_start();
    if (!peak) die_errno("starting the thread sampler");
    double start = monotonic_seconds();
    for (int i = 0; i < FRAGMENTS; i++) {
        tasks[i] = (Task){ds, model, &p, (uint32_t)i, lance_index_build_cancel_token_new(), NULL, 0};
        if (concurrent) pthread_create(&threads[i], NULL, build, &tasks[i]);
        else build(&tasks[i]);
    }
    if (concurrent)
        for (int i = 0; i < FRAGMENTS; i++) pthread_join(threads[i], NULL);
    double seconds = monotonic_seconds() - start;
    int threads_max = thread_peak_stop(peak);
    /* The 8 segments make one index (checked, not timed). */
    const uint8_t* ptrs[FRAGMENTS];
    size_t lens[FRAGMENTS];
    for (int i = 0; i < FRAGMENTS; i++) ptrs[i] = tasks[i].bytes, lens[i] = tasks[i].len;
    if (lance_dataset_commit_index_segments_v2(ds, index, "vec", ptrs, lens, FRAGMENTS, NULL, NULL) != 0)
        die("committing the segments");
    for (int i = 0; i < FRAGMENTS; i++) {
        lance_free_bytes(tasks[i].bytes);
        lance_index_build_cancel_token_free(tasks[i].token);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%.3f %d %.1f\n", seconds, threads_max - host, ru.ru_maxrss / 1024.0);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
    return 0;
}

int main(int argc, char** argv) {
    int csv = take_flag(&argc, argv, "--csv");
    if (argc >= 2 && strcmp(argv[1], "--run") == 0) {
        if (argc < 7) return 2;
        return run(argv[2], argv[3], atoi(argv[4]), (uint32_t)atoi(argv[5]), argv[6]);
    }
    int64_t rows = argc > 1 ? atoll(argv[1]) : 100000;
    int budget_threads = argc > 2 ? atoi(argv[2]) : 2;
    if (rows < 1000 || budget_threads < 1) {
        fprintf(stderr, "usage: bench_budget [--csv] [rows_per_fragment >= 1000] [budget_threads >= 1]\n");
        return 2;
    }
    char* dir = temp_dir_create("bench-budget");
    if (!dir) die_errno("creating a temporary directory");
    char uri[4200], model_path[4200];
    snprintf(uri, sizeof uri, "%s/data.lance", dir);
    snprintf(model_path, sizeof model_path, "%s/model.bin", dir);
    /* The data and the model are made in a child too: the parent never
     * starts the library (the runs must each start it under their budget). */
    pid_t maker = fork();
    if (maker == 0) {
        DemoData data;
        if (demo_data_make(&data, rows * FRAGMENTS, DIM, 64, 0.5f, 11) != 0) die_errno("making data");
        LanceDataset* ds = demo_data_write(uri, &data, 0, data.rows, LANCE_WRITE_CREATE, rows, NULL);
        if (!ds) die("writing the dataset");
        LanceVectorIndexParams p = {0};
        p.index_type = LANCE_INDEX_IVF_PQ;
        p.num_partitions = 64;
        p.num_sub_vectors = 16;
        LanceVectorModel* model = NULL;
        uint8_t* bytes = NULL;
        size_t len = 0;
        if (lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model) != 0 ||
            lance_vector_model_serialize(model, &bytes, &len) != 0)
            die("training the model");
        if (write_whole_file(model_path, bytes, len) != 0) die_errno("writing the model");
        _exit(0);
    }
    int status = 0;
    if (maker < 0 || waitpid(maker, &status, 0) != maker || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_budget: making the dataset failed\n");
        return 1;
    }
    printf("8 IVF_PQ segment builds (64 x 16, shared model), one per fragment of %lld x %d vectors, each with a "
           "cancel token; %ld cores\n",
           (long long)rows, DIM, sysconf(_SC_NPROCESSORS_ONLN));
    printf("%-34s %10s %16s %14s\n", "run", "time (s)", "library threads", "peak RSS (MB)");
    struct {
        const char* name;
        int concurrent, budget;
    } runs[] = {{"in sequence, no budget", 0, 0},
                {"8 at once, no budget", 1, 0},
                {"in sequence, budget", 0, budget_threads},
                {"8 at once, budget", 1, budget_threads}};
    char results[4][128];
    for (int r = 0; r < 4; r++) {
        char cmd[9000], concurrent[4], budget[16];
        snprintf(concurrent, sizeof concurrent, "%d", runs[r].concurrent);
        snprintf(budget, sizeof budget, "%d", runs[r].budget);
        snprintf(cmd, sizeof cmd, "'%s' --run '%s' '%s' %s %s idx%d", argv[0], uri, model_path, concurrent, budget, r);
        FILE* out = popen(cmd, "r");
        if (!out || !fgets(results[r], sizeof results[r], out) || pclose(out) != 0) {
            fprintf(stderr, "bench_budget: run '%s' failed\n", runs[r].name);
            return 1;
        }
        double seconds = 0, rss = 0;
        int threads = 0;
        sscanf(results[r], "%lf %d %lf", &seconds, &threads, &rss);
        char name[64];
        snprintf(name, sizeof name, "%s", runs[r].name);
        if (runs[r].budget) snprintf(name, sizeof name, "%s %d/%d", runs[r].name, runs[r].budget, runs[r].budget);
        printf("%-34s %10.2f %16d %14.1f\n", name, seconds, threads, rss);
    }
    if (csv) {
        printf("# csv\n");
        for (int r = 0; r < 4; r++) {
            double seconds = 0, rss = 0;
            int threads = 0;
            sscanf(results[r], "%lf %d %lf", &seconds, &threads, &rss);
            printf("budget,\"%s\",%.3f,%d,%.1f\n", runs[r].name, seconds, threads, rss);
        }
    }
    remove_tree(dir);
    free(dir);
    return 0;
}
