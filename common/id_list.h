/* Numbers and comma-separated lists of fragment ids ("0,3,6") on command
 * lines, read strictly: what a person or a scheduler got wrong is refused
 * (with a message that says where), never truncated or read as something
 * else. */
#ifndef LANCE_COMMON_ID_LIST_H
#define LANCE_COMMON_ID_LIST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of id_list_parse(). */
#define ID_LIST_UNIQUE 1 /* an id given twice is an error */

/* Parses `text`: one or more decimal ids 0..UINT32_MAX separated by single
 * commas, of any length, nothing else (no signs, spaces, empty items or
 * trailing comma).  On success *out_ids is a malloc'd array (free it) of
 * *out_count ids in the order given, and 0 is returned.  On error -1 is
 * returned, nothing is allocated, and `error` (capacity `error_cap`, may be
 * 0) holds a message such as `item 3 ("x") is not a number`. */
int id_list_parse(const char* text, int flags, uint32_t** out_ids, size_t* out_count, char* error, size_t error_cap);

/* Parses all of `text` as a decimal number from 0 to `max` (no sign, space
 * or other character).  Returns 0, or -1 (nothing written to `out`). */
int decimal_parse(const char* text, uint64_t max, uint64_t* out);

/* "0,3,6" for `count` ids: a malloc'd string (free it); NULL when memory
 * runs out.  id_list_parse() reads it back unchanged. */
char* id_list_format(const uint32_t* ids, size_t count);

#ifdef __cplusplus
}
#endif

#endif
