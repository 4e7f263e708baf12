/* Rows as text, the way the pylance oracles tests/api/history_oracle.py,
 * take_oracle.py and dataset_update_oracle.py print them: one line per row
 * of "name=value" fields in column order joined by tabs; floats with 9
 * significant digits, vectors comma-separated, null as "null".  A test
 * prints what the C API returned the same way and compares the two texts.
 * Also the dataset those tests share. */
#ifndef LANCE_TEST_ROWS_TEXT_H
#define LANCE_TEST_ROWS_TEXT_H

#include "test_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A failed check unless both texts exist and are equal; prints both then. */
void tu_check_same_text(const char* what, const char* ours, const char* theirs);

/* Reads a stream to its end and releases it; returns its rows as text
 * (malloc'd), or NULL when the stream fails.  `out_rows` (nullable)
 * receives the row count. */
char* tu_stream_text(struct ArrowArrayStream* stream, int64_t* out_rows);

/* Every row of the handle's version, in scan order, as text (malloc'd); NULL
 * (a failed check) when the scan cannot run. */
char* tu_scan_text(LanceDataset* ds);

/* The dataset of the oracle tests: 400 rows of `data` (at least 400 rows)
 * at <dir>/<name> in 4 fragments at version 3: 300 rows written 100 per
 * fragment (v1), 100 appended (v2), rows 10..19 deleted (v3).  The URI is
 * written to `uri`; returns the handle at version 3. */
LanceDataset* tu_history_dataset(const TuData* data, const char* dir, const char* name, char* uri, size_t uri_size);

/* The start of a test of tu_history_dataset()'s rows: takes the arguments
 * <python with pylance> <oracle script> and makes the data (400 rows of
 * dimension 4); returns 0 after printing the usage when they are missing. */
int tu_history_begin(int argc, char** argv, const char** python, const char** script, TuData* data);

#ifdef __cplusplus
}
#endif

#endif
