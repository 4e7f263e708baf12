/* The dataset kit (names dk_): datasets a test makes from its TuData and
 * what it reads back from them: the ids of a scan, in scan order or sorted
 * as text for an oracle to compare. */
#ifndef LANCE_TEST_DATASET_KIT_H
#define LANCE_TEST_DATASET_KIT_H

#include <stdbool.h>
#include <stdint.h>

#include "json.h"
#include "test_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes every row of `data` as a new dataset <dir>/<name>.lance, or, with
 * `name` NULL, <dir>/ds<N>.lance with N counting up from 0 in this process,
 * `rows_per_fragment` rows a fragment.  The URI goes to uri[0..cap) unless
 * `uri` is NULL.  The handle at version 1; NULL is a failed check. */
LanceDataset* dk_fresh(const char* dir, const char* name, const TuData* data, uint64_t rows_per_fragment, char* uri,
                       size_t cap);

/* The scanner's next batch as an Arrow struct array and its schema
 * (produced: release both), the batch itself freed.  1, or 0 at the end;
 * -1 when the scan or the conversion fails (a failed check). */
int dk_next_arrow(LanceScanner* s, struct ArrowArray* out, struct ArrowSchema* out_schema);

/* The dataset the oracle `script` (run by `python`) writes with
 * `script make <uri>`, opened at its latest version; NULL is a failed
 * check. */
LanceDataset* dk_oracle_dataset(const char* python, const char* script, const char* uri);

/* A new temporary directory for a program's datasets (tu_temp_dir(tag):
 * remove it with tu_remove_tree() and free it), the URI of the dataset
 * <it>/<name>.lance written to uri[0..cap). */
char* dk_temp_uri(const char* tag, const char* name, char* uri, size_t cap);

/* Reads a scanner to its end: its int64 "id" column into ids[0..cap) and,
 * unless `distances` is NULL, its float "_distance" column likewise.
 * Returns the row count, or -1 when the scan fails, a column is missing or
 * more than `cap` rows come (not a check). */
int64_t dk_read_ids(LanceScanner* s, int64_t* ids, float* distances, int64_t cap);

/* dk_read_ids() with the float column `column` (such as "_score") in the
 * place of "_distance". */
int64_t dk_read_ids_with(LanceScanner* s, const char* column, int64_t* ids, float* values, int64_t cap);

/* The ids of a scan of `ds` projecting "id" through `filter` (NULL = all
 * rows), in scan order, into out[0..cap); -1 when it fails (a failed
 * check). */
int64_t dk_scan_ids(const LanceDataset* ds, const char* filter, int64_t* out, int64_t cap);

/* The ids a scanner `s` (NULL: a scan that could not start) returns, at
 * most `max_rows` of them, ascending and comma-separated ("" for none;
 * malloc'd); their count to *out_count (NULL: not wanted; -1 when the scan
 * fails).  NULL when the scan fails (a failed check). */
char* dk_ids_text(LanceScanner* s, int64_t max_rows, int64_t* out_count);

/* What a table must hold, id by id (ids 0..max_id-1): whether the id is
 * live, and a live id's vector (borrowed from the TuData it came from). */
typedef struct {
    int max_id;
    int32_t dim;
    bool* live;
    const float** vector_of;
} DkRows;

/* No id live yet (free with dk_rows_free()). */
DkRows dk_rows_new(int max_id, int32_t dim);
void dk_rows_free(DkRows* r);

/* Ids [first, first + count) live, each with the vector of row `id` of
 * `source` (which must outlive `r`'s use). */
void dk_rows_mark(DkRows* r, int64_t first, int64_t count, const TuData* source);

/* How many ids are live. */
int dk_rows_count(const DkRows* r);

/* The live rows, ascending by id, as tu_brute_force_knn() takes them (free
 * with tu_free_data()). */
TuData dk_rows_data(const DkRows* r);

/* The live ids that `selects(filter, id)` accepts, ascending and
 * comma-separated as dk_filter_ids() writes them (malloc'd). */
char* dk_rows_ids(const DkRows* r, bool (*selects)(size_t filter, int id), size_t filter);

/* The ids `filter` selects, ascending, comma-separated ("" for none;
 * malloc'd), read with scalar indices on or off (`use_scalar_index` 1 or
 * 0; -1 = not set) and statistics to `on_statistics` (NULL = none).  NULL
 * when the scan fails (a failed check). */
char* dk_filter_ids(const LanceDataset* ds, const char* filter, int64_t max_rows, int use_scalar_index,
                    LanceScanStatisticsCallback on_statistics, void* statistics_ctx);

/* One live row of a blob dataset as the blob oracle's "write" printed it
 * ("<id> <row id> <size or null>"), with the bytes pylance was given. */
typedef struct {
    int64_t id;
    uint64_t row_id;
    int64_t size;         /* -1 = null */
    unsigned char* bytes; /* malloc'd; NULL for a null value */
} DkBlobRow;

/* Has the oracle `script` (run by `python`) write its blob dataset in `dir`
 * (<dir>/blobs.lance) and reads the rows it lists, up to `cap`, each value's
 * bytes from <dir>/expected/<id>.bin (their length must be its size).
 * Returns the rows read (stopping at the first that cannot be), or -1 when
 * the oracle failed. */
int dk_blob_rows(const char* python, const char* script, const char* dir, DkBlobRow* out, int cap);

/* qsort()'s order of int64_t values. */
int dk_compare_i64(const void* a, const void* b);
/* qsort comparison of C strings (an array of char*). */
int dk_compare_strings(const void* a, const void* b);
/* A JSON array of numbers appended to `t` as "1,5,9" (nothing for NULL). */
void dk_append_json_ids(TuText* t, const JValue* list);

/* A version number as decimal text, as an oracle takes it (valid until the
 * next call). */
const char* dk_version_text(uint64_t version);

#ifdef __cplusplus
}
#endif

#endif
