/* bench_merge: what merging segments buys at query time, and what it costs,
 * measured side by side in one run (issue 18).
 *
 * N x 128 clustered vectors (default 100k) in 64 fragments, IVF_PQ 64
 * partitions x 16 sub-vectors, every segment built from ONE shared model.
 * Index layouts: 1 segment over everything (a one-shot build with the
 * shared model), 4, 16 and 64 segments over disjoint fragment groups, and
 * the 16 and 64 segments merged (lance_dataset_merge_index_segments) into 1
 * and into 4.  Each layout is committed in turn to the same dataset (with
 * replace) and queried at its version: k-NN latency (median over the
 * queries after a warm-up pass, the best of 8 rounds in which the layouts
 * take turns; nprobes 16, no refine) and recall@10 against brute force.
 * Build time is the sum of the segments' build times (one worker building
 * them one after another); merge time is the merge calls'.
 * Usage: bench_merge [--csv] [rows] [queries]
 *
 * --csv adds, after the human table, a line "# csv" and then CSV records
 * (no header line; the first field names the record):
 *   run,ROWS,QUERIES,TRAIN_S
 *   layout,"LABEL",SEGMENTS,BUILD_S,MERGE_S,MEDIAN_MS,RECALL
 * one layout record per layout in the table's order (1, 4, 16, 64 segments,
 * 16 -> 1, 16 -> 4, 64 -> 1, 64 -> 4); MERGE_S is 0 for an unmerged layout,
 * and a merged layout's BUILD_S is the build time of its sources. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_data.h"
#include "die.h"
#include "lance/lance.h"
#include "measure.h"
#include "segment_params.h"
#include "temp_dir.h"

#define DIM 128
#define FRAGS 64
#define NPROBES 16
#define K 10
#define ROUNDS 8

typedef struct {
    const char* label;
    int count;
    uint8_t* bytes[FRAGS];
    size_t lens[FRAGS];
    double build_s; /* segment builds, summed */
    double merge_s; /* merges, summed (0 = not merged) */
    double median_ms;
    double recall;
} Layout;

static double build_layout(LanceDataset* ds, const LanceVectorIndexParams* p, const LanceVectorModel* m, Layout* l,
                           int count) {
    int per = FRAGS / count;
    l->count = count;
    double total = 0;
    for (int g = 0; g < count; g++) {
        uint32_t fragment_ids[FRAGS];
        for (int i = 0; i < per; i++) fragment_ids[i] = (uint32_t)(g * per + i);
        double t0 = monotonic_seconds();
        if (vector_segment_build(ds, "vec", p, m, fragment_ids, (size_t)per, NULL, &l->bytes[g], &l->lens[g]) != 0)
            die("segment");
        total += monotonic_seconds() - t0;
    }
    l->build_s = total;
    return total;
}

/* `into` segments, each the merge of a run of consecutive segments of `from`. */
static void merge_layout(LanceDataset* ds, const Layout* from, Layout* l, int into) {
    int per = from->count / into;
    l->count = into;
    l->build_s = from->build_s;
    double total = 0;
    for (int g = 0; g < into; g++) {
        const uint8_t* ptrs[FRAGS];
        for (int i = 0; i < per; i++) ptrs[i] = from->bytes[g * per + i];
        double t0 = monotonic_seconds();
        if (lance_dataset_merge_index_segments(ds, ptrs, from->lens + g * per, (size_t)per, &l->bytes[g],
                                               &l->lens[g]) != 0)
            die("merge");
        total += monotonic_seconds() - t0;
    }
    l->merge_s = total;
}

/* Commits the layout (replacing the previous one) and returns a handle at
 * the version that holds it. */
static LanceDataset* commit_layout(LanceDataset* ds, const char* uri, const Layout* l) {
    const uint8_t* ptrs[FRAGS];
    for (int i = 0; i < l->count; i++) ptrs[i] = l->bytes[i];
    LanceCommitIndexOptions replace = {0};
    replace.replace = true;
    if (lance_dataset_commit_index_segments_v2(ds, "idx", "vec", ptrs, l->lens, (size_t)l->count, &replace, NULL) != 0)
        die("commit");
    LanceDataset* at = lance_dataset_open(uri, NULL, lance_dataset_version(ds));
    if (!at || lance_dataset_index_segment_count(at, "idx") != (uint64_t)l->count) die("segment count");
    return at;
}

/* One pass over the queries: the median latency in ms; recall@10 into *recall. */
static double query_pass(LanceDataset* ds, const DemoData* data, int queries, const int64_t* truth, double* recall) {
    double* times = malloc(sizeof(double) * (size_t)queries);
    int hits = 0;
    for (int q = 0; q < queries; q++) {
        const float* query = demo_data_query(data, q);
        const char* cols[] = {"id", NULL};
        int64_t got[K];
        double t0 = monotonic_seconds();
        LanceScanner* s = lance_scanner_new(ds, cols, NULL);
        if (!s || lance_scanner_nearest(s, "vec", query, DIM, LANCE_DTYPE_FLOAT32, K) != 0 ||
            lance_scanner_set_nprobes(s, NPROBES) != 0)
            die("query");
        int n = demo_scan_ids(s, got, K);
        lance_scanner_close(s);
        times[q] = monotonic_seconds() - t0;
        if (n < 0) die("query");
        for (int i = 0; i < n; i++)
            for (int j = 0; j < K; j++) hits += got[i] == truth[q * K + j];
    }
    *recall = (double)hits / (queries * K);
    double median = median_of(times, (size_t)queries) * 1000;
    free(times);
    return median;
}

int main(int argc, char** argv) {
    int csv = take_flag(&argc, argv, "--csv");
    int64_t rows = argc > 1 ? atoll(argv[1]) : 100000;
    int queries = argc > 2 ? atoi(argv[2]) : 100;
    if (rows < FRAGS * 64 || queries < 1) die("usage: bench_merge [--csv] [rows >= 4096] [queries >= 1]");
    char* dir = temp_dir_create("bench-merge");
    if (!dir) die_errno("creating a temporary directory");
    DemoData data;
    if (demo_data_make(&data, rows, DIM, 64, 2.0f, 7) != 0) die_errno("generating the vectors");
    char uri[600];
    snprintf(uri, sizeof uri, "%s/m.lance", dir);
    LanceDataset* ds =
        demo_data_write(uri, &data, 0, rows, LANCE_WRITE_CREATE, (uint64_t)((rows + FRAGS - 1) / FRAGS), NULL);
    if (!ds || lance_dataset_fragment_count(ds) != FRAGS) die("write");

    int64_t* truth = malloc(sizeof(int64_t) * (size_t)queries * K);
    if (!truth) die_errno("allocating the exact answers");
    for (int q = 0; q < queries; q++)
        if (demo_data_nearest(&data, demo_data_query(&data, q), K, truth + q * K) != K) die_errno("the exact answers");

    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_PQ;
    p.num_partitions = 64;
    p.num_sub_vectors = 16;
    LanceVectorModel* model = NULL;
    double t0 = monotonic_seconds();
    if (lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model) != 0) die("train");
    double train_s = monotonic_seconds() - t0;

    static const char* const labels[8] = {"1 segment (one-shot, shared model)",
                                          "4 segments",
                                          "16 segments",
                                          "64 segments",
                                          "16 merged -> 1",
                                          "16 merged -> 4",
                                          "64 merged -> 1",
                                          "64 merged -> 4"};
    static Layout l[8];
    for (int i = 0; i < 8; i++) l[i].label = labels[i];
    build_layout(ds, &p, model, &l[0], 1);
    build_layout(ds, &p, model, &l[1], 4);
    build_layout(ds, &p, model, &l[2], 16);
    build_layout(ds, &p, model, &l[3], 64);
    merge_layout(ds, &l[2], &l[4], 1);
    merge_layout(ds, &l[2], &l[5], 4);
    merge_layout(ds, &l[3], &l[6], 1);
    merge_layout(ds, &l[3], &l[7], 4);
    /* Every layout at its own version; the layouts take turns, ROUNDS times,
     * each round starting one layout further on (each goes first once), so
     * that load on the machine and the order of the queries fall on all of
     * them alike; the fastest round's median counts.  A warm-up pass first loads each index. */
    LanceDataset* at[8];
    for (int i = 0; i < 8; i++) {
        at[i] = commit_layout(ds, uri, &l[i]);
        query_pass(at[i], &data, queries, truth, &l[i].recall);
    }
    for (int round = 0; round < ROUNDS; round++)
        for (int j = 0; j < 8; j++) {
            int i = (j + round) % 8;
            double m = query_pass(at[i], &data, queries, truth, &l[i].recall);
            if (round == 0 || m < l[i].median_ms) l[i].median_ms = m;
        }
    for (int i = 0; i < 8; i++) lance_dataset_close(at[i]);

    printf("k-NN after merging, %lld x %d in %d fragments, IVF_PQ 64 x 16, one shared model (trained in %.2f s);\n"
           "%d queries, nprobes %d, k %d; latency = median (best of %d interleaved rounds), ratio = to the 1-segment "
           "build\n",
           (long long)rows, DIM, FRAGS, train_s, queries, NPROBES, K, ROUNDS);
    printf("  %-36s %9s %9s %9s %10s %10s %9s\n", "layout", "segments", "build s", "merge s", "median ms", "latency x",
           "recall@10");
    for (int i = 0; i < 8; i++) {
        char merge_s[16] = "-";
        if (l[i].merge_s > 0) snprintf(merge_s, sizeof merge_s, "%.2f", l[i].merge_s);
        printf("  %-36s %9d %9.2f %9s %10.2f %10.2f %9.3f\n", l[i].label, l[i].count, l[i].build_s, merge_s,
               l[i].median_ms, l[i].median_ms / l[0].median_ms, l[i].recall);
    }
    printf("merge time / build time of its sources: 16 -> 1 %.2f, 16 -> 4 %.2f, 64 -> 1 %.2f, 64 -> 4 %.2f\n",
           l[4].merge_s / l[2].build_s, l[5].merge_s / l[2].build_s, l[6].merge_s / l[3].build_s,
           l[7].merge_s / l[3].build_s);
    printf("merge time / 1-segment build: 16 -> 1 %.2f, 64 -> 1 %.2f\n", l[4].merge_s / l[0].build_s,
           l[6].merge_s / l[0].build_s);
    if (csv) {
        printf("# csv\nrun,%lld,%d,%.4f\n", (long long)rows, queries, train_s);
        for (int i = 0; i < 8; i++)
            printf("layout,\"%s\",%d,%.4f,%.4f,%.4f,%.4f\n", l[i].label, l[i].count, l[i].build_s, l[i].merge_s,
                   l[i].median_ms, l[i].recall);
    }

    for (int i = 0; i < 8; i++)
        for (int g = 0; g < l[i].count; g++) lance_free_bytes(l[i].bytes[g]);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
    free(truth);
    demo_data_free(&data);
    remove_tree(dir);
    free(dir);
    return 0;
}
