#include "mutate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h" /* tu_get_u64_le() */

/* ---- random numbers ---- */

void fz_rng_init(FzRng* rng, uint64_t seed, uint64_t stream) {
    rng->state = (seed * 0x9E3779B97F4A7C15ull) ^ ((stream + 1) * 0xD1B54A32D192ED03ull);
    if (rng->state == 0) rng->state = 0x853C49E6748FEA9Bull;
    for (int i = 0; i < 4; i++) fz_next(rng);
}

uint64_t fz_next(FzRng* rng) {
    uint64_t x = rng->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng->state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

uint64_t fz_below(FzRng* rng, uint64_t n) { return n ? fz_next(rng) % n : 0; }

int fz_chance(FzRng* rng, int percent) { return (int)fz_below(rng, 100) < percent; }

/* ---- buffers and the log ---- */

void fz_buf_reserve(FzBuf* b, size_t cap) {
    if (cap <= b->cap) return;
    size_t n = b->cap ? b->cap : 64;
    while (n < cap) n *= 2;
    uint8_t* p = realloc(b->data, n);
    if (!p) abort();
    b->data = p;
    b->cap = n;
}

void fz_buf_set(FzBuf* b, const uint8_t* data, size_t len) {
    b->len = 0;
    fz_buf_append(b, data, len);
}

void fz_buf_append(FzBuf* b, const uint8_t* data, size_t len) {
    fz_buf_reserve(b, b->len + len + 1);
    if (len) memmove(b->data + b->len, data, len);
    b->len += len;
}

void fz_buf_free(FzBuf* b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void fz_log(FzLog* log, const char* fmt, ...) {
    if (log->len + 2 >= sizeof log->text) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(log->text + log->len, sizeof log->text - log->len, fmt, ap);
    va_end(ap);
    if (n > 0) log->len += (size_t)n < sizeof log->text - log->len ? (size_t)n : sizeof log->text - log->len - 1;
    if (log->len + 1 < sizeof log->text) log->text[log->len++] = ';', log->text[log->len] = '\0';
}

/* ---- byte-level havoc ---- */

static const uint8_t interesting_bytes[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x10, 0x12, 0x1a, 0x22};

/* Replaces [at, at+remove) of `b` with `len` bytes of `data`. */
static void splice_range(FzBuf* b, size_t at, size_t remove, const uint8_t* data, size_t len) {
    if (at > b->len) at = b->len;
    if (remove > b->len - at) remove = b->len - at;
    size_t tail = b->len - at - remove;
    fz_buf_reserve(b, b->len - remove + len + 1);
    memmove(b->data + at + len, b->data + at + remove, tail);
    if (len) memcpy(b->data + at, data, len);
    b->len = b->len - remove + len;
}

void fz_mutate_bytes(FzRng* rng, FzBuf* buf, const FzBuf* donor, FzLog* log) {
    int edits = 1 + (int)fz_below(rng, 4);
    for (int e = 0; e < edits; e++) {
        size_t at = buf->len ? (size_t)fz_below(rng, buf->len) : 0;
        switch (fz_below(rng, 10)) {
        case 0:
            if (!buf->len) break;
            buf->data[at] ^= (uint8_t)(1u << fz_below(rng, 8));
            fz_log(log, "bitflip@%zu", at);
            break;
        case 1:
            if (!buf->len) break;
            buf->data[at] = interesting_bytes[fz_below(rng, sizeof interesting_bytes)];
            fz_log(log, "byte@%zu=%02x", at, buf->data[at]);
            break;
        case 2: {
            uint8_t ins[8];
            size_t n = 1 + (size_t)fz_below(rng, sizeof ins);
            for (size_t i = 0; i < n; i++) ins[i] = (uint8_t)fz_next(rng);
            splice_range(buf, at, 0, ins, n);
            fz_log(log, "insert%zu@%zu", n, at);
            break;
        }
        case 3: {
            size_t n = 1 + (size_t)fz_below(rng, 16);
            splice_range(buf, at, n, NULL, 0);
            fz_log(log, "delete%zu@%zu", n, at);
            break;
        }
        case 4: {
            if (buf->len < 2) break;
            size_t from = (size_t)fz_below(rng, buf->len);
            size_t n = 1 + (size_t)fz_below(rng, buf->len - from);
            uint8_t* copy = malloc(n);
            memcpy(copy, buf->data + from, n);
            splice_range(buf, at, fz_chance(rng, 50) ? n : 0, copy, n);
            free(copy);
            fz_log(log, "copy%zu@%zu->%zu", n, from, at);
            break;
        }
        case 5:
            buf->len = buf->len ? (size_t)fz_below(rng, buf->len) : 0;
            fz_log(log, "truncate->%zu", buf->len);
            break;
        case 6:
            if (!donor || !donor->len) break;
            {
                size_t from = (size_t)fz_below(rng, donor->len);
                buf->len = at;
                fz_buf_append(buf, donor->data + from, donor->len - from);
                fz_log(log, "splice@%zu+donor@%zu", at, from);
            }
            break;
        case 7:
            if (!buf->len) break;
            buf->data[at] = (uint8_t)fz_next(rng);
            fz_log(log, "random@%zu", at);
            break;
        case 8:
            if (!donor || !donor->len) break;
            {
                size_t from = (size_t)fz_below(rng, donor->len);
                size_t n = 1 + (size_t)fz_below(rng, donor->len - from);
                splice_range(buf, at, 0, donor->data + from, n);
                fz_log(log, "insert-donor%zu@%zu", n, at);
            }
            break;
        default:
            if (!buf->len) break;
            buf->data[at] = (uint8_t)(buf->data[at] + (fz_chance(rng, 50) ? 1 : -1) * (int)(1 + fz_below(rng, 35)));
            fz_log(log, "arith@%zu", at);
            break;
        }
    }
}

/* ---- protobuf wire format ---- */

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5, MAX_FIELDS = 256 };

typedef struct {
    uint32_t number;
    uint32_t wire;
    size_t start;       /* of the key */
    size_t value_start; /* after the key (and the length prefix for WIRE_LEN) */
    size_t end;
    uint64_t value; /* the varint, or the payload length */
} PbField;

static int read_varint(const uint8_t* p, size_t len, size_t* pos, uint64_t* out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70 && *pos < len; shift += 7) {
        uint8_t b = p[(*pos)++];
        if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static void put_varint(FzBuf* b, uint64_t v) {
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) tmp[n] |= 0x80;
        n++;
    } while (v);
    fz_buf_append(b, tmp, n);
}

static void put_key(FzBuf* b, uint32_t number, uint32_t wire) { put_varint(b, ((uint64_t)number << 3) | wire); }

static void put_len_field(FzBuf* b, uint32_t number, const uint8_t* data, size_t len) {
    put_key(b, number, WIRE_LEN);
    put_varint(b, len);
    fz_buf_append(b, data, len);
}

/* Splits a message into fields; the count, or -1 when it is not well formed. */
static int pb_parse(const uint8_t* p, size_t len, PbField* fields, int max) {
    size_t pos = 0;
    int n = 0;
    while (pos < len) {
        if (n == max) return -1;
        PbField* f = &fields[n];
        f->start = pos;
        uint64_t key;
        if (read_varint(p, len, &pos, &key) != 0 || (key >> 3) == 0 || (key >> 3) > 0x1fffffff) return -1;
        f->number = (uint32_t)(key >> 3);
        f->wire = (uint32_t)(key & 7);
        switch (f->wire) {
        case WIRE_VARINT:
            if (read_varint(p, len, &pos, &f->value) != 0) return -1;
            f->value_start = f->start;
            break;
        case WIRE_I64:
        case WIRE_I32: {
            size_t width = f->wire == WIRE_I64 ? 8 : 4;
            if (len - pos < width) return -1;
            f->value_start = pos;
            pos += width;
            break;
        }
        case WIRE_LEN:
            if (read_varint(p, len, &pos, &f->value) != 0 || f->value > len - pos) return -1;
            f->value_start = pos;
            pos += (size_t)f->value;
            break;
        default: return -1;
        }
        f->end = pos;
        n++;
    }
    return n;
}

static uint64_t interesting_varint(FzRng* rng, uint64_t old) {
    static const uint64_t values[] = {0,          1,
                                      2,          3,
                                      4,          0x7f,
                                      0x80,       0xff,
                                      0x7fffffff, 0x80000000,
                                      0xffffffff, 0x100000000ull,
                                      INT64_MAX,  0x8000000000000000ull,
                                      UINT64_MAX};
    switch (fz_below(rng, 4)) {
    case 0: return old + 1;
    case 1: return old - 1;
    case 2: return fz_next(rng) >> fz_below(rng, 64);
    default: return values[fz_below(rng, sizeof values / sizeof values[0])];
    }
}

static int pick_field(FzRng* rng, const PbField* f, int n, int number, int wire) {
    int matches = 0, chosen = -1;
    for (int i = 0; i < n; i++) {
        if ((number < 0 || (int)f[i].number == number) && (wire < 0 || (int)f[i].wire == wire)) {
            matches++;
            if (fz_below(rng, (uint64_t)matches) == 0) chosen = i;
        }
    }
    return chosen;
}

/* Little-endian writes into `out` through a scratch `w`. */
#define PUT16(v) (w[0] = (uint8_t)(v), w[1] = (uint8_t)((v) >> 8), fz_buf_append(out, w, 2))
#define PUT32(v)                                                                                                \
    (w[0] = (uint8_t)(v), w[1] = (uint8_t)((v) >> 8), w[2] = (uint8_t)((v) >> 16), w[3] = (uint8_t)((v) >> 24), \
     fz_buf_append(out, w, 4))

void fz_roaring(const uint32_t* ids, size_t count, FzBuf* out) {
    /* No run containers: cookie 12346, the container count, (key,
       cardinality-1) pairs, the offsets, then sorted 16-bit arrays. */
    out->len = 0;
    size_t containers = 0;
    for (size_t i = 0; i < count; i++)
        if (i == 0 || (ids[i] >> 16) != (ids[i - 1] >> 16)) containers++;
    uint8_t w[4];
    PUT32(12346u);
    PUT32((uint32_t)containers);
    for (size_t i = 0; i < count;) {
        size_t j = i;
        while (j < count && (ids[j] >> 16) == (ids[i] >> 16)) j++;
        PUT16(ids[i] >> 16);
        PUT16((uint32_t)(j - i - 1));
        i = j;
    }
    uint32_t offset = (uint32_t)(8 + 8 * containers);
    for (size_t i = 0; i < count;) {
        size_t j = i;
        while (j < count && (ids[j] >> 16) == (ids[i] >> 16)) j++;
        PUT32(offset);
        offset += (uint32_t)(2 * (j - i));
        i = j;
    }
    for (size_t i = 0; i < count; i++) PUT16(ids[i] & 0xffff);
}

void fz_roaring_full_runs(uint32_t containers, FzBuf* out) {
    /* Run containers: cookie 12347 | (n-1) << 16, the run flags, (key,
       cardinality-1) pairs, offsets from 4 containers on, then per
       container one run [0, 65535]. */
    out->len = 0;
    uint8_t w[4];
    uint32_t cookie = 12347u | ((containers - 1) << 16);
    PUT32(cookie);
    for (uint32_t i = 0; i < (containers + 7) / 8; i++) fz_buf_append(out, (const uint8_t*)"\xff", 1);
    for (uint32_t k = 0; k < containers; k++) {
        PUT16(k);
        PUT16(0xffffu);
    }
    if (containers >= 4) {
        uint32_t offset = (uint32_t)out->len + 4 * containers;
        for (uint32_t k = 0; k < containers; k++) PUT32(offset + 6 * k);
    }
    for (uint32_t k = 0; k < containers; k++) {
        PUT16(1u);
        PUT16(0u);
        PUT16(0xffffu);
    }
}
#undef PUT16
#undef PUT32

/* A fragment set worth committing: real fragments of the 4-fragment
   dataset, their neighbours, and ids far away. */
static size_t random_fragment_set(FzRng* rng, uint32_t* out, size_t cap) {
    static const uint32_t pool[] = {0, 1, 2, 3, 4, 5, 7, 100, 65535, 65536, 1u << 31, UINT32_MAX};
    size_t n = 0;
    int pool_only_real = fz_chance(rng, 60);
    for (uint32_t candidate = 0; candidate < sizeof pool / sizeof pool[0] && n < cap; candidate++) {
        if (pool_only_real && candidate > 3) break;
        if (fz_chance(rng, 40)) out[n++] = pool[candidate];
    }
    return n;
}

static int mutate_message(FzRng* rng, FzBuf* buf, const FzBuf* donors, int donor_count, int depth, FzLog* log);

/* Rewrites field `i` of `buf` as `replacement` (NULL = drop it). */
static void replace_field(FzBuf* buf, const PbField* f, const FzBuf* replacement) {
    splice_range(buf, f->start, f->end - f->start, replacement ? replacement->data : NULL,
                 replacement ? replacement->len : 0);
}

/* Puts `piece` in place of a field numbered `number`, or adds it (at the
   front or the end) when there is none. */
static void put_field(FzRng* rng, FzBuf* buf, const PbField* f, int n, uint32_t number, const FzBuf* piece, int front) {
    int at = pick_field(rng, f, n, (int)number, -1);
    if (at >= 0) replace_field(buf, &f[at], piece);
    else splice_range(buf, front ? 0 : buf->len, 0, piece->data, piece->len);
}

static int mutate_message(FzRng* rng, FzBuf* buf, const FzBuf* donors, int donor_count, int depth, FzLog* log) {
    PbField f[MAX_FIELDS];
    int n = pb_parse(buf->data, buf->len, f, MAX_FIELDS);
    if (n < 0) return -1;
    FzBuf piece = {0};
    int top = depth == 0;
    int op = (int)fz_below(rng, top ? 11 : 8);
    if (n == 0 && op != 6) op = 6;
    int i = n ? (int)fz_below(rng, (uint64_t)n) : -1;
    switch (op) {
    case 0: { /* a varint field to a boundary value */
        i = pick_field(rng, f, n, -1, WIRE_VARINT);
        if (i < 0) break;
        uint64_t v = interesting_varint(rng, f[i].value);
        put_key(&piece, f[i].number, WIRE_VARINT);
        put_varint(&piece, v);
        fz_log(log, "d%d:field%u=%llu", depth, f[i].number, (unsigned long long)v);
        replace_field(buf, &f[i], &piece);
        break;
    }
    case 1: { /* duplicate a field, right after it or at the end */
        fz_buf_set(&piece, buf->data + f[i].start, f[i].end - f[i].start);
        size_t at = fz_chance(rng, 50) ? f[i].end : buf->len;
        splice_range(buf, at, 0, piece.data, piece.len);
        fz_log(log, "d%d:dup-field%u", depth, f[i].number);
        break;
    }
    case 2: /* drop a field */
        fz_log(log, "d%d:drop-field%u", depth, f[i].number);
        replace_field(buf, &f[i], NULL);
        break;
    case 3: { /* move a field */
        fz_buf_set(&piece, buf->data + f[i].start, f[i].end - f[i].start);
        int j = (int)fz_below(rng, (uint64_t)n);
        size_t at = f[j].start;
        replace_field(buf, &f[i], NULL);
        if (at > f[i].start) at -= piece.len;
        splice_range(buf, at, 0, piece.data, piece.len);
        fz_log(log, "d%d:move-field%u", depth, f[i].number);
        break;
    }
    case 4: { /* renumber a field or change its wire type */
        static const uint32_t numbers[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 100, 0x1fffffff};
        uint32_t number = f[i].number, wire = f[i].wire;
        if (fz_chance(rng, 70)) number = numbers[fz_below(rng, sizeof numbers / sizeof numbers[0])];
        else wire = (uint32_t)fz_below(rng, 8);
        size_t key_end = f[i].start;
        uint64_t key;
        read_varint(buf->data, buf->len, &key_end, &key);
        put_key(&piece, number, wire);
        splice_range(buf, f[i].start, key_end - f[i].start, piece.data, piece.len);
        fz_log(log, "d%d:field%u->%u/wire%u", depth, f[i].number, number, wire);
        break;
    }
    case 5: { /* corrupt a length prefix, payload unchanged */
        i = pick_field(rng, f, n, -1, WIRE_LEN);
        if (i < 0) break;
        static const int64_t deltas[] = {-1, 1, 2, -2};
        uint64_t v =
            fz_chance(rng, 25) ? interesting_varint(rng, f[i].value) : f[i].value + (uint64_t)deltas[fz_below(rng, 4)];
        size_t len_start = f[i].start;
        uint64_t key;
        read_varint(buf->data, buf->len, &len_start, &key);
        put_varint(&piece, v);
        splice_range(buf, len_start, f[i].value_start - len_start, piece.data, piece.len);
        fz_log(log, "d%d:len-field%u=%llu", depth, f[i].number, (unsigned long long)v);
        break;
    }
    case 6: { /* edit inside a length-delimited field, or add a field */
        i = pick_field(rng, f, n, -1, WIRE_LEN);
        if (i < 0) {
            put_key(&piece, 1 + (uint32_t)fz_below(rng, 13), WIRE_VARINT);
            put_varint(&piece, interesting_varint(rng, 0));
            fz_buf_append(buf, piece.data, piece.len);
            fz_log(log, "d%d:add-varint", depth);
            break;
        }
        FzBuf inner = {0};
        fz_buf_set(&inner, buf->data + f[i].value_start, (size_t)f[i].value);
        if (depth >= 3 || fz_chance(rng, 30) || mutate_message(rng, &inner, NULL, 0, depth + 1, log) != 0) {
            fz_log(log, "d%d:bytes-in-field%u", depth, f[i].number);
            fz_mutate_bytes(rng, &inner, NULL, log);
        }
        put_len_field(&piece, f[i].number, inner.data, inner.len);
        fz_buf_free(&inner);
        replace_field(buf, &f[i], &piece);
        break;
    }
    case 7: { /* a field from a donor, replacing one of the same number */
        if (!donor_count) {
            fz_log(log, "d%d:drop-field%u", depth, f[i].number);
            replace_field(buf, &f[i], NULL);
            break;
        }
        const FzBuf* d = &donors[fz_below(rng, (uint64_t)donor_count)];
        PbField df[MAX_FIELDS];
        int dn = pb_parse(d->data, d->len, df, MAX_FIELDS);
        if (dn <= 0) break;
        int k = (int)fz_below(rng, (uint64_t)dn);
        fz_buf_set(&piece, d->data + df[k].start, df[k].end - df[k].start);
        int same = pick_field(rng, f, n, (int)df[k].number, -1);
        if (same >= 0) replace_field(buf, &f[same], &piece);
        else splice_range(buf, n ? f[i].start : 0, 0, piece.data, piece.len);
        fz_log(log, "d%d:donor-field%u", depth, df[k].number);
        break;
    }
    case 8: { /* IndexMetadata.fragment_bitmap (5): another fragment set */
        uint32_t ids[16];
        size_t count = 0;
        FzBuf bitmap = {0};
        if (fz_chance(rng, 10)) { /* a few bytes that claim up to 2^32 fragments */
            static const uint32_t containers[] = {1, 16, 256, 4096, 65536};
            uint32_t n = containers[fz_below(rng, 5)];
            fz_roaring_full_runs(n, &bitmap);
            count = (size_t)n << 16;
        } else {
            count = random_fragment_set(rng, ids, 16);
            fz_roaring(ids, count, &bitmap);
        }
        put_len_field(&piece, 5, bitmap.data, bitmap.len);
        fz_buf_free(&bitmap);
        put_field(rng, buf, f, n, 5, &piece, 0);
        fz_log(log, "bitmap{%zu ids}", count);
        break;
    }
    case 9: { /* IndexMetadata.uuid (1): another UUID, or a malformed one */
        uint8_t uuid[17];
        size_t len = 16;
        int at = pick_field(rng, f, n, 1, WIRE_LEN);
        PbField uf[4];
        int un = at >= 0 ? pb_parse(buf->data + f[at].value_start, (size_t)f[at].value, uf, 4) : -1;
        if (un == 1 && uf[0].value == 16) memcpy(uuid, buf->data + f[at].value_start + uf[0].value_start, 16);
        else memset(uuid, 0, sizeof uuid);
        switch (fz_below(rng, 4)) {
        case 0: uuid[fz_below(rng, 16)] ^= (uint8_t)(1u << fz_below(rng, 8)); break;
        case 1:
            for (int b = 0; b < 16; b++) uuid[b] = (uint8_t)fz_next(rng);
            break;
        case 2: memset(uuid, 0, sizeof uuid); break;
        default:
            len = fz_chance(rng, 50) ? 15 : 17;
            uuid[16] = 0xab;
            break;
        }
        FzBuf inner = {0};
        put_len_field(&inner, 1, uuid, len);
        put_len_field(&piece, 1, inner.data, inner.len);
        fz_buf_free(&inner);
        put_field(rng, buf, f, n, 1, &piece, 1);
        fz_log(log, "uuid(len %zu, byte0 %02x)", len, uuid[0]);
        break;
    }
    default: { /* IndexMetadata.fields (2): other field ids, packed */
        static const int64_t ids[] = {0, 1, 2, 3, -1, 1000, INT32_MAX, INT32_MIN};
        FzBuf packed = {0};
        size_t count = (size_t)fz_below(rng, 3);
        for (size_t k = 0; k < count; k++) put_varint(&packed, (uint64_t)ids[fz_below(rng, 8)]);
        put_len_field(&piece, 2, packed.data, packed.len);
        fz_buf_free(&packed);
        put_field(rng, buf, f, n, 2, &piece, 0);
        fz_log(log, "fields(%zu ids)", count);
        break;
    }
    }
    fz_buf_free(&piece);
    return 0;
}

int fz_mutate_protobuf(FzRng* rng, FzBuf* buf, const FzBuf* donors, int donor_count, FzLog* log) {
    return mutate_message(rng, buf, donors, donor_count, 0, log);
}

/* ---- SHA-256 (FIPS 180-4) ---- */

static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha_block(uint32_t h[8], const uint8_t* p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROTR(w[i - 15], 7) ^ ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROTR(w[i - 2], 17) ^ ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = hh + (ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25)) + ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
        uint32_t t2 = (ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

void fz_sha256(const uint8_t* data, size_t len, uint8_t out[32]) {
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    size_t full = len / 64 * 64;
    for (size_t i = 0; i < full; i += 64) sha_block(h, data + i);
    uint8_t tail[128] = {0};
    size_t rest = len - full;
    memcpy(tail, data + full, rest);
    tail[rest] = 0x80;
    size_t tail_len = rest + 9 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++) tail[tail_len - 1 - i] = (uint8_t)(bits >> (8 * i));
    for (size_t i = 0; i < tail_len; i += 64) sha_block(h, tail + i);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
}

/* ---- the lance-c model layout ----
 * "LANCEVM1", metric i32, dim u64, num_partitions u64, centroids f32[dim *
 * num_partitions], then 0, or 1 + num_sub_vectors u64, num_bits u64, count
 * u64, codebook f32[count]; then the SHA-256 of all of it.  Little-endian.
 * "LANCEVM2" (a model that records the index type it was trained for): the
 * same with an i32 index type after the magic, so every offset 4 later. */

enum { MODEL_METRIC = 8, MODEL_DIM = 12, MODEL_PARTITIONS = 20, MODEL_CENTROIDS = 28 };

static void set_u64(uint8_t* p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

typedef struct {
    size_t base;      /* 4 when an index type follows the magic, else 0 */
    size_t flag;      /* offset of the PQ flag byte */
    size_t floats[2]; /* offsets of centroids and codebook */
    size_t counts[2]; /* their float counts (codebook: 0 without PQ) */
} ModelLayout;

static int model_layout(const uint8_t* body, size_t len, ModelLayout* out) {
    if (len < 8) return -1;
    if (!memcmp(body, "LANCEVM1", 8)) out->base = 0;
    else if (!memcmp(body, "LANCEVM2", 8)) out->base = 4;
    else return -1;
    size_t b = out->base;
    if (len < b + MODEL_CENTROIDS + 1) return -1;
    uint64_t dim = tu_get_u64_le(body + b + MODEL_DIM), parts = tu_get_u64_le(body + b + MODEL_PARTITIONS);
    if (dim && parts > (len / 4) / dim) return -1;
    out->floats[0] = b + MODEL_CENTROIDS;
    out->counts[0] = (size_t)(dim * parts);
    out->flag = b + MODEL_CENTROIDS + 4 * out->counts[0];
    if (out->flag >= len) return -1;
    out->counts[1] = 0;
    out->floats[1] = out->flag + 1;
    if (body[out->flag] == 1) {
        if (len - out->flag < 25) return -1;
        uint64_t count = tu_get_u64_le(body + out->flag + 17);
        if (count > (len - out->flag - 25) / 4) return -1;
        out->floats[1] = out->flag + 25;
        out->counts[1] = (size_t)count;
    }
    return 0;
}

static float interesting_float(FzRng* rng) {
    static const uint32_t bits[] = {0x7fc00000, 0x7f800000, 0xff800000, 0x80000000,
                                    0x7f7fffff, 0x00000001, 0x00000000, 0x3f800000};
    uint32_t b = bits[fz_below(rng, sizeof bits / sizeof bits[0])];
    float f;
    memcpy(&f, &b, 4);
    return f;
}

void fz_mutate_model(FzRng* rng, FzBuf* buf, const FzBuf* donor, FzLog* log) {
    if (buf->len < 32 || fz_chance(rng, 10)) { /* the checksum's own path */
        fz_log(log, "unsigned");
        fz_mutate_bytes(rng, buf, donor, log);
        return;
    }
    buf->len -= 32; /* edit the body, then sign it again */
    ModelLayout m;
    if (model_layout(buf->data, buf->len, &m) != 0) {
        fz_mutate_bytes(rng, buf, NULL, log);
    } else {
        uint8_t* b = buf->data + m.base; /* the fields after the magic (and the index type) */
        switch (fz_below(rng, 9)) {
        case 0: {
            if (m.base && fz_chance(rng, 50)) { /* the index type, or the magic of the other layout */
                static const int32_t types[] = {0, 100, 101, 102, 103, 104, 105, 106, 107, 108, -1};
                int32_t v = types[fz_below(rng, 11)];
                memcpy(buf->data + 8, &v, 4);
                if (fz_chance(rng, 20)) memcpy(buf->data, "LANCEVM1", 8);
                fz_log(log, "index-type=%d", v);
                break;
            }
            static const int32_t metrics[] = {-1, 0, 1, 2, 3, 4, 5, 6, 100, INT32_MIN};
            int32_t v = metrics[fz_below(rng, 10)];
            memcpy(b + MODEL_METRIC, &v, 4);
            fz_log(log, "metric=%d", v);
            break;
        }
        case 1:
        case 2: {
            size_t at = fz_chance(rng, 50) ? MODEL_DIM : MODEL_PARTITIONS;
            uint64_t v = interesting_varint(rng, tu_get_u64_le(b + at));
            set_u64(b + at, v);
            fz_log(log, "%s=%llu", at == MODEL_DIM ? "dim" : "partitions", (unsigned long long)v);
            break;
        }
        case 3: { /* same values, another shape */
            uint64_t dim = tu_get_u64_le(b + MODEL_DIM), parts = tu_get_u64_le(b + MODEL_PARTITIONS);
            uint64_t total = dim * parts;
            uint64_t d = 1 + fz_below(rng, total ? total : 1);
            while (total && total % d) d--;
            set_u64(b + MODEL_DIM, d);
            set_u64(b + MODEL_PARTITIONS, d ? total / d : 0);
            fz_log(log, "reshape %llux%llu", (unsigned long long)(d ? total / d : 0), (unsigned long long)d);
            break;
        }
        case 4: {
            int which = m.counts[1] && fz_chance(rng, 50);
            if (!m.counts[which]) break;
            size_t k = (size_t)fz_below(rng, m.counts[which]);
            float v = interesting_float(rng);
            memcpy(buf->data + m.floats[which] + 4 * k, &v, 4);
            fz_log(log, "float%d[%zu]", which, k);
            break;
        }
        case 5:
            buf->data[m.flag] = (uint8_t[]){0, 1, 2, 255}[fz_below(rng, 4)];
            fz_log(log, "pq-flag=%u", buf->data[m.flag]);
            break;
        case 6: { /* a PQ section of another shape, or none */
            buf->len = m.flag;
            uint8_t flag = fz_chance(rng, 25) ? 0 : 1;
            fz_buf_append(buf, &flag, 1);
            if (flag) {
                static const uint64_t subs[] = {0, 1, 2, 3, 4, 8, 16};
                static const uint64_t nbits[] = {0, 1, 2, 4, 8, 16, 17};
                uint64_t dim = tu_get_u64_le(buf->data + m.base + MODEL_DIM);
                uint64_t sub = subs[fz_below(rng, 7)], bits = nbits[fz_below(rng, 7)];
                uint64_t count = bits <= 8 && dim <= 64 ? (1ull << bits) * dim : fz_below(rng, 64);
                if (fz_chance(rng, 20)) count = fz_below(rng, 64);
                uint8_t hdr[24];
                set_u64(hdr, sub);
                set_u64(hdr + 8, bits);
                set_u64(hdr + 16, count);
                fz_buf_append(buf, hdr, 24);
                for (uint64_t k = 0; k < count; k++) {
                    float v = (float)(int64_t)fz_below(rng, 2000) / 100.0f - 10.0f;
                    fz_buf_append(buf, (const uint8_t*)&v, 4);
                }
                fz_log(log, "pq sub %llu bits %llu count %llu", (unsigned long long)sub, (unsigned long long)bits,
                       (unsigned long long)count);
            } else {
                fz_log(log, "pq dropped");
            }
            break;
        }
        case 7:
            if (!m.counts[1]) break;
            {
                size_t at = m.flag + 1 + 8 * (size_t)fz_below(rng, 3);
                uint64_t v = interesting_varint(rng, tu_get_u64_le(buf->data + at));
                set_u64(buf->data + at, v);
                fz_log(log, "pq-header@%zu=%llu", at, (unsigned long long)v);
            }
            break;
        default:
            if (fz_chance(rng, 50)) {
                buf->len -= buf->len > 8 ? 1 + (size_t)fz_below(rng, 8) : 0;
                fz_log(log, "body-truncated");
            } else {
                uint8_t extra[8] = {0};
                fz_buf_append(buf, extra, 1 + (size_t)fz_below(rng, 8));
                fz_log(log, "body-extended");
            }
            break;
        }
    }
    uint8_t digest[32];
    fz_sha256(buf->data, buf->len, digest);
    fz_buf_append(buf, digest, 32);
}
