/* The datasets of the tests whose answer comes from a pylance oracle that
 * repeats the change: a fresh dataset that the test changes through
 * lance-c, and a copy of it taken before, which the oracle script
 * (tests/api/merge_insert_oracle.py, evolve_oracle.py, write_oracle.py)
 * changes the same way with pylance before comparing the two. */
#ifndef LANCE_TEST_ORACLE_PAIR_H
#define LANCE_TEST_ORACLE_PAIR_H

#include "test_util.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TU_PAIR_ROWS 600          /* the rows of every fresh dataset */
#define TU_PAIR_DIM 4             /* their vector dimension */
#define TU_PAIR_ROWS_PER_FILE 200 /* so 3 fragments */

typedef struct {
    const char* python; /* with pylance */
    const char* oracle; /* the oracle script */
    char* dir;          /* scratch directory */
    int serial;         /* makes every dataset name unique */
    TuData data;        /* TU_PAIR_ROWS + 300 rows; a fresh dataset holds the first TU_PAIR_ROWS */
    TuData other;       /* the same ids with other vectors */
} TuPairs;

/* Takes the arguments <python with pylance> <oracle script> and makes the
 * data and the scratch directory; returns 0 after printing the usage when
 * they are missing. */
int tu_pairs_begin(TuPairs* pairs, int argc, char** argv);

/* Removes the scratch directory and frees the data. */
void tu_pairs_end(TuPairs* pairs);

/* A fresh dataset of pairs->data's first TU_PAIR_ROWS rows (3 fragments)
 * and a copy of it, named after `tag`; their URIs are written to c_uri and
 * py_uri (600 bytes each).  Returns the handle of the first. */
LanceDataset* tu_pair_make(TuPairs* pairs, const char* tag, char* c_uri, char* py_uri);

/* Runs the oracle's case `c_case` on the pair (`extra`: further arguments,
 * already quoted for the shell, or NULL); true when pylance agrees. */
int tu_pair_agrees(const TuPairs* pairs, const char* c_case, const char* c_uri, const char* py_uri, const char* extra);

#ifdef __cplusplus
}
#endif

#endif
