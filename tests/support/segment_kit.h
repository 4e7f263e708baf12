/* The segment kit (names sk_): the steps of a distributed vector build as
 * the tests take them on a dataset's "vec" column: index parameters, a
 * model trained in one call, uncommitted segments collected into a set,
 * the set committed, and a segment's metadata checked against what it was
 * built for.  Every failure these helpers can see is a failed check unless
 * a function says it returns the error instead. */
#ifndef LANCE_TEST_SEGMENT_KIT_H
#define LANCE_TEST_SEGMENT_KIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lance/lance.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Vector index parameters: `type`, `partitions` IVF partitions and
 * `sub_vectors` (0 = the default; set whatever the type), every other
 * field zero (the library's defaults). */
LanceVectorIndexParams sk_params(LanceVectorIndexType type, uint32_t partitions, uint32_t sub_vectors);

/* IVF_PQ parameters with L2, `partitions`, `sub_vectors` and `num_bits`. */
LanceVectorIndexParams sk_pq_params(uint32_t partitions, uint32_t sub_vectors, uint32_t num_bits);

/* lance_vector_model_train() on "vec" over the fragments
 * `sample[0..n)` (NULL, 0 = all); the model (free it), NULL being a
 * failed check. */
LanceVectorModel* sk_train(LanceDataset* ds, const LanceVectorIndexParams* p, const uint32_t* sample, size_t n);

/* Executes the builder `b` once and frees it.  Returns the segment's
 * metadata bytes (free with lance_free_bytes()), or NULL when `b` is NULL
 * or the build failed, the error pending.  With `must_succeed` a NULL
 * builder or a failed build is a failed check. */
uint8_t* sk_execute(LanceIndexSegmentBuilder* b, size_t* len, bool must_succeed);

/* Executes the builder `b` (which must exist) once, then frees what it
 * produced and the builder.  Returns 0 on success, else the error code
 * the failed execute left (not a check). */
int sk_execute_status(LanceIndexSegmentBuilder* b);

/* A build whose cancel token was cancelled before execute: the builder `b`
 * (which must exist) takes the token and its execute fails with
 * LANCE_ERR_CANCELLED, producing nothing.  Frees the builder. */
void sk_check_cancelled_first(LanceIndexSegmentBuilder* b);

/* The segments one commit takes, kept with the arrays the commit functions
 * read.  Start from `SkSet s = {0};`. */
#define SK_SET_MAX 32
typedef struct {
    int count;
    uint8_t* bytes[SK_SET_MAX];
    size_t lens[SK_SET_MAX];
    const uint8_t* ptrs[SK_SET_MAX]; /* bytes[], as the commit takes them */
    bool malloced;                   /* the bytes came from malloc() (files read), not the library */
} SkSet;

/* Adds `bytes` of *len_at bytes (read after `bytes` was computed, so
 * `sk_set_add(&s, build(..., &len), &len)` works).  NULL bytes or a full
 * set is a failed check, and nothing is added. */
void sk_set_add(SkSet* s, uint8_t* bytes, const size_t* len_at);

/* Frees every segment (lance_free_bytes(), or free() when `malloced`) and
 * empties the set. */
void sk_set_free(SkSet* s);

/* `count` segments over consecutive fragment groups of `per` fragments
 * ({0..per-1}, {per..2per-1}, ...), segment w with the UUID
 * tu_uuid(uuid_base + w), built by tu_vector_segment() (with `model` set,
 * or trained locally when it is NULL). */
SkSet sk_build_set(LanceDataset* ds, const LanceVectorIndexParams* p, const LanceVectorModel* model, int count, int per,
                   int uuid_base);

/* `count` scalar segments of `type` (a LanceScalarIndexType) on `column`,
 * over the consecutive fragment groups of sk_build_set(), default
 * parameters and library-assigned UUIDs. */
SkSet sk_build_scalar_set(LanceDataset* ds, const char* column, int32_t type, int count, int per);

/* lance_dataset_commit_index_segments_v2() of the set on "vec"
 * as the index `name`; `options` and `result` may be NULL.  Returns what
 * the library returned (not a check). */
int sk_commit(LanceDataset* ds, const char* name, const SkSet* s, const LanceCommitIndexOptions* options,
              LanceCommitIndexResult* result);

/* One coordinator of a race to commit: its own handle `ds` (NULL: it does
 * not commit, rc -2), the index `name` on "vec", the set and `replace`;
 * the outcome is rc, the error code right after the call, and the result. */
typedef struct {
    LanceDataset* ds;
    const char* name;
    const SkSet* set;
    bool replace;
    int rc;
    LanceErrorCode code;
    LanceCommitIndexResult result;
} SkRacer;

/* One commit of `r` (rc, code and result set afresh); returns rc. */
int sk_racer_commit(SkRacer* r);

/* The `n` commits (at most 8) at once: each on a thread of its own, all
 * released together by one barrier; returns when every one has. */
void sk_race(SkRacer* racers, int n);

/* An index's coverage as lance_dataset_index_coverage_json() reports it. */
typedef struct {
    int segments;          /* "num_segments"; -1 when absent */
    int indexed;           /* how many fragments are covered */
    int unindexed;         /* not covered */
    int stale;             /* covered by a segment built before they changed; -1 when absent */
    uint64_t indexed_mask; /* bit f: fragment f (< 64) is covered */
} SkCoverage;

/* Reads the coverage of index `name`: 0, or -1 when the report cannot be
 * had or lacks its fragment lists (a failed check). */
int sk_coverage(LanceDataset* ds, const char* name, SkCoverage* out);

/* A model of `m`'s centroids alone, as Arrow arrays carry them
 * (lance_vector_model_from_arrow(), L2, no codebook): its PQ codebook,
 * rotation and type are not in it.  Free it; NULL is a failed check. */
LanceVectorModel* sk_bare_model(const LanceVectorModel* m);

/* What a segment's metadata must say; zero or NULL fields are not looked
 * at, except as said. */
typedef struct {
    int32_t index_type;           /* always checked */
    const char* type_name;        /* lance_index_segment_metadata_index_type_name() */
    const char* index_name;       /* exact name; NULL: any non-empty name */
    const char* details_url;      /* the details type URL, exactly */
    const char* details_suffix;   /* the details type URL ends with this */
    int32_t field_id;             /* the one field's id; -1: not checked (the count is always 1) */
    const uint32_t* fragment_ids; /* exactly these, in order (always checked) */
    size_t fragment_count;
    const uint8_t* uuid;      /* the segment's UUID */
    bool uuid_readable;       /* with uuid NULL: its UUID can be read */
    uint64_t dataset_version; /* the version it was built at */
    bool no_fingerprint;      /* it carries no model fingerprint */
    bool index_version;       /* its index version is >= 0 */
} SkSegmentWant;

/* Parses the metadata `bytes[0..len)` and checks it against `want`. */
void sk_check_segment(const uint8_t* bytes, size_t len, const SkSegmentWant* want);

#ifdef __cplusplus
}
#endif

#endif
