/* A small JSON reader: parses a whole document into a tree.  Used by the
 * lance-index tool (the library's listings are JSON) and by the tests. */
#ifndef LANCE_COMMON_JSON_H
#define LANCE_COMMON_JSON_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { J_NULL, J_BOOL, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT } JType;

typedef struct JValue {
    JType type;
    double number;         /* J_NUMBER, J_BOOL (0/1) */
    char* string;          /* J_STRING, UTF-8 (\u escapes decoded) */
    size_t count;          /* J_ARRAY, J_OBJECT */
    struct JValue** items; /* J_ARRAY, J_OBJECT values */
    char** keys;           /* J_OBJECT */
} JValue;

/* Parses `text`; NULL when it is not one complete JSON document (or memory
 * ran out).  Produced: free with json_free(). */
JValue* json_parse(const char* text);

/* Frees a tree from json_parse().  NULL is a no-op. */
void json_free(JValue* v);

/* The member `key` of an object, or NULL (also when `object` is not one). */
const JValue* json_get(const JValue* object, const char* key);

/* Writes `text` to `out` as a JSON string literal, quotes included. */
void json_write_string(FILE* out, const char* text);

#ifdef __cplusplus
}
#endif

#endif
