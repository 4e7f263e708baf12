/* A small JSON reader for the tests: parses a document into a tree. */
#ifndef LANCE_TEST_JSON_H
#define LANCE_TEST_JSON_H

#include <stddef.h>

typedef enum { J_NULL, J_BOOL, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT } JType;

typedef struct JValue {
    JType type;
    double number;          /* J_NUMBER, J_BOOL (0/1) */
    char* string;           /* J_STRING */
    size_t count;           /* J_ARRAY, J_OBJECT */
    struct JValue** items;  /* J_ARRAY, J_OBJECT values */
    char** keys;            /* J_OBJECT */
} JValue;

/* Parses `text`; NULL when it is not one complete JSON document. */
JValue* json_parse(const char* text);
void json_free(JValue* v);
/* The member `key` of an object, or NULL. */
const JValue* json_get(const JValue* object, const char* key);

#endif
