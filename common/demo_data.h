/* Demo data for the examples and the benchmarks: deterministic clustered
 * vectors, written as a Lance dataset, with the exact k-NN answers to check
 * an index's answers against.
 *
 * The dataset's schema is
 *   {id: int64 not null, vec: fixed_size_list<float32>[dim] not null, tag: utf8 not null}
 * row r has id r and tag "t<r % 7>", and the vectors are `clusters` centres
 * drawn uniformly from [-10, 10]^dim, each row a random centre plus uniform
 * noise in [-noise, noise] per dimension.  One seed gives the same vectors
 * on every host, so timings and recalls of different runs are comparable. */
#ifndef LANCE_COMMON_DEMO_DATA_H
#define LANCE_COMMON_DEMO_DATA_H

#include <stdint.h>

#include "lance/lance.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int64_t rows;
    int32_t dim;
    float* vectors; /* rows * dim, row-major; row r is the row of id r */
} DemoData;

/* Generates `rows` vectors (see above) into *out.  Returns 0, or -1 with
 * errno EINVAL (rows < 0, dim or clusters < 1, noise < 0) or ENOMEM, and
 * *out empty.  Free with demo_data_free(). */
int demo_data_make(DemoData* out, int64_t rows, int32_t dim, int32_t clusters, float noise, uint64_t seed);

/* Frees the vectors; *data is left empty.  An empty DemoData is a no-op. */
void demo_data_free(DemoData* data);

/* Writes rows [first, first + count) of `data` to `uri` (a LanceWriteMode
 * `mode`), at most `rows_per_file` rows per fragment (0 = Lance's default).
 * `storage_opts` as for lance_dataset_open() (NULL = none).  Returns the
 * handle at the new version (close it), or NULL: with the library's error
 * pending for this thread, or, when nothing reached the library, with no
 * error pending and errno EINVAL (a range outside the data) or ENOMEM. */
LanceDataset* demo_data_write(const char* uri, const DemoData* data, int64_t first, int64_t count, int32_t mode,
                              uint64_t rows_per_file, const char* const* storage_opts);

/* The q-th of the demo's query vectors: row (q * 7919 + 13) mod rows, so
 * that queries spread over every cluster.  Borrowed from `data`; `data`
 * must have rows. */
const float* demo_data_query(const DemoData* data, int q);

/* Exact k-NN of `query` (dim floats) by squared L2 distance over every row:
 * writes the ids of the min(k, rows) nearest rows to out_ids, nearest first
 * (ties by smaller id), and returns that count; -1 with errno ENOMEM. */
int demo_data_nearest(const DemoData* data, const float* query, int k, int64_t* out_ids);

/* Runs the scanner to its end and collects its int64 "id" column (the scan
 * must select it) into out_ids, at most `capacity` ids in the scan's order.
 * Returns the number collected, or -1: with the library's error pending, or
 * (no error pending) when the scan has no "id" column. */
int demo_scan_ids(LanceScanner* scanner, int64_t* out_ids, int capacity);

/* Recall@10 of k-NN through the index of column "vec" of `dataset` (written
 * from `data`): `queries` queries (demo_data_query()), each with nprobes
 * (0 = Lance's default) and refine factor (0 = none), against the exact
 * answers.  *out_mismatches (NULL = not wanted) receives the number of
 * queries whose answer is not exactly the exact top 10, in order.  Returns
 * the fraction of the exact top-10 ids found, or -1 (as demo_scan_ids(),
 * or errno ENOMEM). */
double demo_data_recall(const LanceDataset* dataset, const DemoData* data, int queries, uint32_t nprobes,
                        uint32_t refine, int* out_mismatches);

#ifdef __cplusplus
}
#endif

#endif
