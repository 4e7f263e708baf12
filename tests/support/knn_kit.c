#include "knn_kit.h"

#include <stdlib.h>
#include <string.h>

int kk_ids(const LanceDataset* ds, const float* query, int32_t dim, int k, uint32_t nprobes, uint32_t refine,
           int64_t* out) {
    static const char* const columns[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, columns, NULL);
    int n = -1;
    if (s && lance_scanner_nearest(s, "vec", query, (size_t)dim, LANCE_DTYPE_FLOAT32, (uint32_t)k) == 0 &&
        (!nprobes || lance_scanner_set_nprobes(s, nprobes) == 0) &&
        (!refine || lance_scanner_set_refine_factor(s, refine) == 0))
        n = tu_knn_ids(s, out, k);
    lance_scanner_close(s);
    return n;
}

void kk_add_comparisons(void* ctx, const LanceScanStatistics* statistics) {
    *(uint64_t*)ctx += statistics->index_comparisons;
}

uint64_t kk_comparisons(const LanceDataset* ds, const float* query, int32_t dim, int k, uint32_t nprobes) {
    static const char* const columns[] = {"id", NULL};
    uint64_t comparisons = 0;
    int64_t* ids = malloc(sizeof(int64_t) * (size_t)k);
    if (!ids) abort();
    LanceScanner* s = lance_scanner_new(ds, columns, NULL);
    CHECK(s != NULL);
    CHECK(s && lance_scanner_nearest(s, "vec", query, (size_t)dim, LANCE_DTYPE_FLOAT32, (uint32_t)k) == 0);
    CHECK(s && lance_scanner_set_nprobes(s, nprobes) == 0);
    CHECK(s && lance_scanner_set_statistics_callback(s, kk_add_comparisons, &comparisons) == 0);
    CHECK(s && tu_knn_ids(s, ids, k) == k);
    lance_scanner_close(s);
    free(ids);
    return comparisons;
}

void kk_check_exact(const LanceDataset* ds, const TuData* data, const float* query, int k, uint32_t nprobes) {
    int64_t* want = malloc(sizeof(int64_t) * (size_t)k);
    int64_t* got = malloc(sizeof(int64_t) * (size_t)k);
    if (!want || !got) abort();
    tu_brute_force_knn(data, query, k, want);
    CHECK(kk_ids(ds, query, data->dim, k, nprobes, 0, got) == k);
    CHECK(memcmp(got, want, sizeof(int64_t) * (size_t)k) == 0);
    free(want);
    free(got);
}

void kk_check_recall_exact(LanceDataset* ds, const TuData* data, int queries, uint32_t nprobes) {
    int mismatches = -1;
    CHECK(tu_recall(ds, data, queries, nprobes, 0, &mismatches) == 1.0);
    CHECK(mismatches == 0);
}
