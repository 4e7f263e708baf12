/* The k-NN kit (names kk_): nearest-neighbour searches on a dataset's
 * "vec" column projecting "id", and exact answers held against brute force
 * over the rows the test wrote (TuData, test_util.h). */
#ifndef LANCE_TEST_KNN_KIT_H
#define LANCE_TEST_KNN_KIT_H

#include <stdint.h>

#include "test_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The `k` nearest ids to `query` (dim floats), nearest first, into out[k],
 * probing `nprobes` partitions and refined by `refine` (each 0 = not set).
 * Returns how many ids were written (k expected), or -1 with the library's
 * error pending (not a check). */
int kk_ids(const LanceDataset* ds, const float* query, int32_t dim, int k, uint32_t nprobes, uint32_t refine,
           int64_t* out);

/* k-NN through the index, `nprobes` partitions probed (0 = not set), gives
 * exactly brute force's top `k` over `data` for `query`, in order. */
void kk_check_exact(const LanceDataset* ds, const TuData* data, const float* query, int k, uint32_t nprobes);

/* A LanceScanStatisticsCallback adding each report's index_comparisons to
 * the uint64_t at `ctx` (lance.h "Filters and scan statistics"). */
void kk_add_comparisons(void* ctx, const LanceScanStatistics* statistics);

/* The index comparisons a k-NN scan of "vec" for `query` (dim floats, the
 * `k` nearest, `nprobes` partitions probed) reports: none unless the
 * vector index answered it (IVF_FLAT compares the query with every row of
 * the partitions it probes).  Each step is a check. */
uint64_t kk_comparisons(const LanceDataset* ds, const float* query, int32_t dim, int k, uint32_t nprobes);

/* tu_recall() over the first `queries` rows of `data` as queries, every one
 * of `nprobes` partitions probed: recall 1.0 and no answer differing from
 * the exact top 10 in any position. */
void kk_check_recall_exact(LanceDataset* ds, const TuData* data, int queries, uint32_t nprobes);

#ifdef __cplusplus
}
#endif

#endif
