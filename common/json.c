#include "json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char* p;
    int ok;
} Parser;

static void skip_ws(Parser* ps) {
    while (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t') ps->p++;
}

static JValue* new_value(Parser* ps, JType t) {
    JValue* v = calloc(1, sizeof(JValue));
    if (!v) {
        ps->ok = 0;
        return NULL;
    }
    v->type = t;
    return v;
}

static JValue* parse_value(Parser* ps);

/* A growing byte buffer for string contents. */
typedef struct {
    char* bytes;
    size_t len, cap;
} Buf;

static int buf_put(Buf* b, char c) {
    if (b->len + 2 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        char* grown = realloc(b->bytes, cap);
        if (!grown) return -1;
        b->bytes = grown;
        b->cap = cap;
    }
    b->bytes[b->len++] = c;
    return 0;
}

/* Four hex digits of a \u escape; -1 when they are not. */
static long hex4(const char* p) {
    long v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* The code point of a \u escape at ps->p (past the "\u"), a surrogate pair
 * joined; -1 when malformed. */
static long code_point(Parser* ps) {
    long hi = hex4(ps->p);
    if (hi < 0) return -1;
    ps->p += 4;
    if (hi < 0xD800 || hi > 0xDFFF) return hi;
    if (hi > 0xDBFF || ps->p[0] != '\\' || ps->p[1] != 'u') return -1;
    long lo = hex4(ps->p + 2);
    if (lo < 0xDC00 || lo > 0xDFFF) return -1;
    ps->p += 6;
    return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
}

static int put_utf8(Buf* b, long cp) {
    if (cp < 0x80) return buf_put(b, (char)cp);
    if (cp < 0x800) return buf_put(b, (char)(0xC0 | (cp >> 6))) || buf_put(b, (char)(0x80 | (cp & 0x3F)));
    if (cp < 0x10000)
        return buf_put(b, (char)(0xE0 | (cp >> 12))) || buf_put(b, (char)(0x80 | ((cp >> 6) & 0x3F))) ||
               buf_put(b, (char)(0x80 | (cp & 0x3F)));
    return buf_put(b, (char)(0xF0 | (cp >> 18))) || buf_put(b, (char)(0x80 | ((cp >> 12) & 0x3F))) ||
           buf_put(b, (char)(0x80 | ((cp >> 6) & 0x3F))) || buf_put(b, (char)(0x80 | (cp & 0x3F)));
}

static char* parse_string_raw(Parser* ps) {
    if (*ps->p != '"') {
        ps->ok = 0;
        return NULL;
    }
    ps->p++;
    Buf b = {NULL, 0, 0};
    int ok = 1;
    while (ok && *ps->p && *ps->p != '"') {
        char c = *ps->p++;
        if (c == '\\') {
            char e = *ps->p;
            if (e) ps->p++; /* never past the end of the text */
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case '"':
            case '\\':
            case '/': c = e; break;
            case 'u': {
                long cp = code_point(ps);
                ok = cp > 0 && put_utf8(&b, cp) == 0; /* \u0000 would cut the C string: refused */
                continue;
            }
            default: ok = 0; continue;
            }
        } else if ((unsigned char)c < 0x20) {
            ok = 0;
            continue;
        }
        ok = buf_put(&b, c) == 0;
    }
    if (!ok || *ps->p != '"' || (!b.bytes && buf_put(&b, 0) != 0)) {
        ps->ok = 0;
        free(b.bytes);
        return NULL;
    }
    ps->p++;
    b.bytes[b.len] = 0;
    return b.bytes;
}

static int push(JValue* v, JValue* item, char* key) {
    JValue** items = realloc(v->items, sizeof(JValue*) * (v->count + 1));
    if (!items) return -1;
    v->items = items;
    if (v->type == J_OBJECT) {
        char** keys = realloc(v->keys, sizeof(char*) * (v->count + 1));
        if (!keys) return -1;
        v->keys = keys;
        v->keys[v->count] = key;
    }
    v->items[v->count++] = item;
    return 0;
}

static JValue* parse_container(Parser* ps, char close, JType type) {
    JValue* v = new_value(ps, type);
    if (!v) return NULL;
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        return v;
    }
    for (;;) {
        skip_ws(ps);
        char* key = NULL;
        if (type == J_OBJECT) {
            key = parse_string_raw(ps);
            skip_ws(ps);
            if (!ps->ok || *ps->p != ':') {
                ps->ok = 0;
                free(key);
                return v;
            }
            ps->p++;
        }
        JValue* item = parse_value(ps);
        if (push(v, item, key) != 0) {
            ps->ok = 0;
            json_free(item);
            free(key);
            return v;
        }
        if (!ps->ok) return v;
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            return v;
        }
        ps->ok = 0;
        return v;
    }
}

static JValue* parse_value(Parser* ps) {
    skip_ws(ps);
    const char* p = ps->p;
    if (*p == '{') return parse_container(ps, '}', J_OBJECT);
    if (*p == '[') return parse_container(ps, ']', J_ARRAY);
    if (*p == '"') {
        JValue* v = new_value(ps, J_STRING);
        if (v) v->string = parse_string_raw(ps);
        return v;
    }
    JValue* v = NULL;
    if (!strncmp(p, "null", 4)) {
        ps->p += 4;
        return new_value(ps, J_NULL);
    }
    if (!strncmp(p, "true", 4) || !strncmp(p, "false", 5)) {
        int truth = *p == 't';
        ps->p += truth ? 4 : 5;
        v = new_value(ps, J_BOOL);
        if (v) v->number = truth;
        return v;
    }
    char* end = NULL;
    double d = strtod(p, &end);
    if (end == p) {
        ps->ok = 0;
        return NULL;
    }
    ps->p = end;
    v = new_value(ps, J_NUMBER);
    if (v) v->number = d;
    return v;
}

JValue* json_parse(const char* text) {
    if (!text) return NULL;
    Parser ps = {text, 1};
    JValue* v = parse_value(&ps);
    if (ps.ok) skip_ws(&ps);
    if (!ps.ok || *ps.p) {
        json_free(v);
        return NULL;
    }
    return v;
}

void json_free(JValue* v) {
    if (!v) return;
    for (size_t i = 0; i < v->count; i++) {
        json_free(v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    free(v);
}

const JValue* json_get(const JValue* object, const char* key) {
    if (!object || object->type != J_OBJECT) return NULL;
    for (size_t i = 0; i < object->count; i++)
        if (object->keys[i] && !strcmp(object->keys[i], key)) return object->items[i];
    return NULL;
}

void json_write_string(FILE* out, const char* text) {
    fputc('"', out);
    for (const unsigned char* p = (const unsigned char*)text; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
        else if (*p < 0x20) fprintf(out, "\\u%04x", *p);
        else fputc(*p, out);
    }
    fputc('"', out);
}
