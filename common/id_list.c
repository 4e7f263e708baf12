#include "id_list.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int refuse(char* error, size_t cap, const char* fmt, ...) {
    if (cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(error, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The offending item, quoted and shortened for the message. */
static void item_text(const char* start, char* out, size_t cap) {
    size_t n = strcspn(start, ",");
    if (n > 24) snprintf(out, cap, "\"%.20s...\"", start);
    else snprintf(out, cap, "\"%.*s\"", (int)n, start);
}

typedef struct {
    uint32_t id;
    size_t position;
} Entry;

static int entry_cmp(const void* a, const void* b) {
    const Entry* x = a;
    const Entry* y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return x->position < y->position ? -1 : x->position > y->position;
}

/* Finds an id given twice; -1 when out of memory, 1 when found, else 0. */
static int find_duplicate(const uint32_t* ids, size_t n, uint32_t* id, size_t* first, size_t* second) {
    Entry* e = malloc((n ? n : 1) * sizeof *e);
    if (!e) return -1;
    for (size_t i = 0; i < n; i++) e[i] = (Entry){ids[i], i};
    qsort(e, n, sizeof *e, entry_cmp);
    int found = 0;
    for (size_t i = 1; i < n && !found; i++)
        if (e[i].id == e[i - 1].id) {
            *id = e[i].id;
            *first = e[i - 1].position;
            *second = e[i].position;
            found = 1;
        }
    free(e);
    return found;
}

int id_list_parse(const char* text, int flags, uint32_t** out_ids, size_t* out_count, char* error, size_t error_cap) {
    if (!text || !*text) return refuse(error, error_cap, "the list is empty");
    size_t cap = 16, n = 0;
    uint32_t* ids = malloc(cap * sizeof *ids);
    if (!ids) return refuse(error, error_cap, "out of memory");
    const char* p = text;
    for (;;) {
        const char* start = p;
        char shown[40];
        if (*p == '-') {
            item_text(start, shown, sizeof shown);
            free(ids);
            return refuse(error, error_cap, "item %zu (%s) is negative", n + 1, shown);
        }
        if (*p < '0' || *p > '9') {
            free(ids);
            if (*p == ',' || !*p)
                return refuse(error, error_cap, "item %zu is empty (two commas, or a comma at an end)", n + 1);
            item_text(start, shown, sizeof shown);
            return refuse(error, error_cap, "item %zu (%s) is not a number", n + 1, shown);
        }
        uint64_t v = 0;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (uint64_t)(*p++ - '0');
            if (v > UINT32_MAX) {
                item_text(start, shown, sizeof shown);
                free(ids);
                return refuse(error, error_cap, "item %zu (%s) is larger than %lu", n + 1, shown,
                              (unsigned long)UINT32_MAX);
            }
        }
        if (*p && *p != ',') {
            item_text(start, shown, sizeof shown);
            free(ids);
            return refuse(error, error_cap, "item %zu (%s) is not a number", n + 1, shown);
        }
        if (n == cap) {
            uint32_t* grown = cap <= ((size_t)-1) / (2 * sizeof *ids) ? realloc(ids, 2 * cap * sizeof *ids) : NULL;
            if (!grown) {
                free(ids);
                return refuse(error, error_cap, "out of memory");
            }
            ids = grown;
            cap *= 2;
        }
        ids[n++] = (uint32_t)v;
        if (!*p) break;
        p++; /* the comma; an item must follow */
    }
    if (flags & ID_LIST_UNIQUE) {
        uint32_t id = 0;
        size_t first = 0, second = 0;
        int dup = find_duplicate(ids, n, &id, &first, &second);
        if (dup != 0) {
            free(ids);
            if (dup < 0) return refuse(error, error_cap, "out of memory");
            return refuse(error, error_cap, "id %lu is given twice (items %zu and %zu)", (unsigned long)id, first + 1,
                          second + 1);
        }
    }
    *out_ids = ids;
    *out_count = n;
    return 0;
}

int decimal_parse(const char* text, uint64_t max, uint64_t* out) {
    if (!text || !*text) return -1;
    uint64_t v = 0;
    for (const char* p = text; *p; p++) {
        if (*p < '0' || *p > '9') return -1;
        unsigned digit = (unsigned)(*p - '0');
        if (digit > max || v > (max - digit) / 10) return -1;
        v = v * 10 + digit;
    }
    *out = v;
    return 0;
}

char* id_list_format(const uint32_t* ids, size_t count) {
    /* At most 10 digits and a comma per id. */
    if (count > ((size_t)-1 - 1) / 11) return NULL;
    char* text = malloc(count * 11 + 1);
    if (!text) return NULL;
    size_t used = 0;
    for (size_t i = 0; i < count; i++)
        used += (size_t)sprintf(text + used, "%s%lu", i ? "," : "", (unsigned long)ids[i]);
    text[used] = 0;
    return text;
}
