/* demo: writes a dataset of clustered vectors in many fragments, builds an
 * IVF_PQ index, and runs k-NN queries, printing results and timings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_data.h"
#include "die.h"
#include "lance/lance.h"
#include "measure.h"
#include "temp_dir.h"

int main(int argc, char** argv) {
    int64_t rows = argc > 1 ? atoll(argv[1]) : 100000;
    const int dim = 128;
    printf("lance-c %s (Lance core %s)\n", lance_version(), LANCE_CORE_VERSION_STRING);

    char* dir = temp_dir_create("demo");
    if (!dir) die_errno("creating a temporary directory");
    char uri[600];
    snprintf(uri, sizeof uri, "%s/vectors.lance", dir);

    double t0 = monotonic_seconds();
    DemoData data;
    if (demo_data_make(&data, rows, dim, 64, 2.0f, 1) != 0) die_errno("generating the vectors");
    LanceDataset* ds = demo_data_write(uri, &data, 0, rows, LANCE_WRITE_CREATE, (uint64_t)(rows / 16), NULL);
    if (!ds) die("write");
    double t1 = monotonic_seconds();
    printf("wrote %lld rows x %d dims in %llu fragments to %s: %.2f s\n", (long long)rows, dim,
           (unsigned long long)lance_dataset_fragment_count(ds), uri, t1 - t0);

    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_PQ;
    p.metric = LANCE_METRIC_L2;
    p.num_partitions = 64;
    p.num_sub_vectors = 16;
    if (lance_dataset_create_vector_index(ds, "vec", "vec_ivf_pq", &p, false) != 0) die("create index");
    double t2 = monotonic_seconds();
    printf("built IVF_PQ index (64 partitions, 16 sub-vectors): %.2f s\n", t2 - t1);

    const float* query = data.vectors + (rows / 3) * dim;
    const char* cols[] = {"id", "tag", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    if (!s) die("scanner");
    if (lance_scanner_nearest(s, "vec", query, dim, LANCE_DTYPE_FLOAT32, 10) != 0) die("nearest");
    lance_scanner_set_nprobes(s, 16);
    lance_scanner_set_refine_factor(s, 5);
    double t3 = monotonic_seconds();
    int64_t ids[10];
    int n = demo_scan_ids(s, ids, 10);
    double t4 = monotonic_seconds();
    if (n < 0) die("search");
    int64_t truth[10];
    int exact = demo_data_nearest(&data, query, 10, truth);
    if (exact < 0) die_errno("the exact answer");
    int hits = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < exact; j++) hits += ids[i] == truth[j];
    printf("k-NN query (k=10, nprobes=16, refine=5): %.1f ms\n", (t4 - t3) * 1000);
    printf("  ids:         ");
    for (int i = 0; i < n; i++) printf(" %lld", (long long)ids[i]);
    printf("\n  brute force: ");
    for (int i = 0; i < exact; i++) printf(" %lld", (long long)truth[i]);
    printf("\n  recall@10 = %.2f\n", hits / 10.0);
    lance_scanner_close(s);

    const char* json = lance_dataset_index_list_json(ds);
    printf("indices: %s\n", json ? json : "(error)");
    lance_free_string(json);
    lance_dataset_close(ds);
    demo_data_free(&data);
    remove_tree(dir);
    free(dir);
    return 0;
}
