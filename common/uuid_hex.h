/* Segment UUIDs as text: 32 hex digits, or the dashed 8-4-4-4-12 form that
 * names a segment's directory under _indices/. */
#ifndef LANCE_COMMON_UUID_HEX_H
#define LANCE_COMMON_UUID_HEX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UUID_HEX_LEN 32        /* "1b4e28ba2fa1471f8e2a0d9c3f5a6b7c" */
#define UUID_HEX_DASHED_LEN 36 /* "1b4e28ba-2fa1-471f-8e2a-0d9c3f5a6b7c" */

/* Writes 32 lower-case hex digits and a NUL to `out`. */
void uuid_hex_format(const uint8_t uuid[16], char out[UUID_HEX_LEN + 1]);

/* Writes the dashed form (as in _indices/<uuid>/) and a NUL to `out`. */
void uuid_hex_format_dashed(const uint8_t uuid[16], char out[UUID_HEX_DASHED_LEN + 1]);

/* Parses exactly 32 hex digits (either case), or the dashed 8-4-4-4-12
 * form; anything else, including a trailing character, is refused.
 * Returns 0, or -1 (nothing written to `out`). */
int uuid_hex_parse(const char* text, uint8_t out[16]);

/* A random version-4 UUID from /dev/urandom.  Returns 0, or -1 (errno). */
int uuid_random_v4(uint8_t out[16]);

#ifdef __cplusplus
}
#endif

#endif
