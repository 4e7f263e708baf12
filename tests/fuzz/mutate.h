/* Structure-aware mutation for the fuzz targets: a seeded PRNG, growable
 * byte buffers, byte-level havoc, protobuf wire-format edits (the segment
 * metadata is a prost-encoded pb::IndexMetadata), portable Roaring bitmaps
 * (its fragment_bitmap), and edits of the lance-c model layout re-signed
 * with SHA-256 so they reach the parser behind the checksum. */
#ifndef LANCE_FUZZ_MUTATE_H
#define LANCE_FUZZ_MUTATE_H

#include <stddef.h>
#include <stdint.h>

/* ---- deterministic random numbers (xorshift64*) ---- */

typedef struct {
    uint64_t state;
} FzRng;

/* One independent stream per (seed, stream): execution N of a run is
 * reproducible alone. */
void fz_rng_init(FzRng* rng, uint64_t seed, uint64_t stream);
uint64_t fz_next(FzRng* rng);
uint64_t fz_below(FzRng* rng, uint64_t n); /* [0, n), n > 0 */
int fz_chance(FzRng* rng, int percent);

/* ---- byte buffers ---- */

typedef struct {
    uint8_t* data;
    size_t len;
    size_t cap;
} FzBuf;

void fz_buf_reserve(FzBuf* b, size_t cap);
void fz_buf_set(FzBuf* b, const uint8_t* data, size_t len);
void fz_buf_append(FzBuf* b, const uint8_t* data, size_t len);
void fz_buf_free(FzBuf* b);

/* ---- the mutation log: what was done to an input, for findings ---- */

typedef struct {
    char text[1024];
    size_t len;
} FzLog;

void fz_log(FzLog* log, const char* fmt, ...);

/* ---- mutations ---- */

/* 1-4 byte-level edits: bit flips, interesting bytes, inserts, deletes,
 * range copies, truncation, and splices with `donor` (nullable). */
void fz_mutate_bytes(FzRng* rng, FzBuf* buf, const FzBuf* donor, FzLog* log);

/* One edit of a protobuf message on the wire: a varint field set to a
 * boundary value, a field duplicated, dropped, moved, renumbered, its
 * length prefix corrupted, a nested message edited recursively, a field
 * taken from a donor message, and for pb::IndexMetadata the fragment bitmap
 * and the UUID rewritten.  Returns -1 (buffer untouched) when `buf` is not
 * a well-formed message. */
int fz_mutate_protobuf(FzRng* rng, FzBuf* buf, const FzBuf* donors, int donor_count, FzLog* log);

/* A portable (serialized) Roaring bitmap of `count` ascending distinct ids. */
void fz_roaring(const uint32_t* ids, size_t count, FzBuf* out);

/* A Roaring bitmap of `containers` (1..65536) full run containers: the
 * ids [0, containers * 65536) in 10 bytes per container. */
void fz_roaring_full_runs(uint32_t containers, FzBuf* out);

/* One edit of a serialized lance-c vector model (header fields, floats,
 * the PQ section, the body's length), re-signed with its SHA-256 most of
 * the time.  Falls back to byte-level edits when the layout does not parse. */
void fz_mutate_model(FzRng* rng, FzBuf* buf, const FzBuf* donor, FzLog* log);

/* SHA-256 of `len` bytes into `out`. */
void fz_sha256(const uint8_t* data, size_t len, uint8_t out[32]);

#endif
