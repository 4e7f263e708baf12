#include "streams.h"

#include <string.h>

/* Wraps a stream and counts how often it is released. */
typedef struct {
    struct ArrowArrayStream inner;
    int* releases;
} Counted;

static int counted_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
    Counted* c = s->private_data;
    return c->inner.get_schema(&c->inner, out);
}

static int counted_get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
    Counted* c = s->private_data;
    return c->inner.get_next(&c->inner, out);
}

static const char* counted_last_error(struct ArrowArrayStream* s) {
    Counted* c = s->private_data;
    return c->inner.get_last_error(&c->inner);
}

static void counted_release(struct ArrowArrayStream* s) {
    Counted* c = s->private_data;
    (*c->releases)++;
    c->inner.release(&c->inner);
    free(c);
    s->release = NULL;
}

void tu_counted_stream(struct ArrowArrayStream* inner, int* releases, struct ArrowArrayStream* out) {
    Counted* c = calloc(1, sizeof(Counted));
    c->inner = *inner;
    inner->release = NULL;
    c->releases = releases;
    out->get_schema = counted_get_schema;
    out->get_next = counted_get_next;
    out->get_last_error = counted_last_error;
    out->release = counted_release;
    out->private_data = c;
}

void tu_rows_stream(const TuData* src, int64_t first, int64_t rows, int* releases, struct ArrowArrayStream* out) {
    struct ArrowArrayStream inner;
    tu_stream(src, first, rows, 128, &inner);
    tu_counted_stream(&inner, releases, out);
}

/* One non-null int64 column `name` whose row i holds i * mult. */
typedef struct {
    char name[32];
    int64_t rows, mult, batch, done;
} Int64State;

static void release_struct_schema(struct ArrowSchema* s) {
    for (int64_t i = 0; i < s->n_children; i++) {
        s->children[i]->release(s->children[i]);
        free(s->children[i]);
    }
    free(s->children);
    free((void*)s->name);
    s->release = NULL;
}

void tu_release_leaf_schema(struct ArrowSchema* s) {
    free((void*)s->name);
    s->release = NULL;
}

void tu_struct_schema(int n, const char* const* names, const char* const* formats, const int* nullable,
                      struct ArrowSchema* out) {
    memset(out, 0, sizeof *out);
    out->format = "+s";
    out->name = strdup("");
    out->n_children = n;
    out->children = calloc((size_t)n, sizeof(struct ArrowSchema*));
    for (int i = 0; i < n; i++) {
        struct ArrowSchema* c = calloc(1, sizeof *c);
        c->format = formats[i];
        c->name = strdup(names[i]);
        c->flags = nullable[i] ? ARROW_FLAG_NULLABLE : 0;
        c->release = tu_release_leaf_schema;
        out->children[i] = c;
    }
    out->release = release_struct_schema;
}

static int int64_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
    Int64State* st = s->private_data;
    const char* names[] = {st->name};
    const char* formats[] = {"l"};
    const int nullable[] = {0};
    tu_struct_schema(1, names, formats, nullable, out);
    return 0;
}

static void release_int64_array(struct ArrowArray* a) {
    for (int64_t i = 0; i < a->n_children; i++) {
        if (a->children[i]->release) a->children[i]->release(a->children[i]);
        free(a->children[i]);
    }
    free(a->children);
    if (a->n_buffers == 2) free((void*)a->buffers[1]);
    free(a->buffers);
    a->release = NULL;
}

static int int64_get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
    Int64State* st = s->private_data;
    memset(out, 0, sizeof *out);
    if (st->done >= st->rows) return 0;
    int64_t n = st->rows - st->done < st->batch ? st->rows - st->done : st->batch;
    int64_t* values = malloc(sizeof(int64_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++) values[i] = (st->done + i) * st->mult;
    struct ArrowArray* child = calloc(1, sizeof *child);
    child->length = n;
    child->n_buffers = 2;
    child->buffers = calloc(2, sizeof(void*));
    child->buffers[1] = values;
    child->release = release_int64_array;
    out->length = n;
    out->n_buffers = 1;
    out->buffers = calloc(1, sizeof(void*));
    out->n_children = 1;
    out->children = calloc(1, sizeof(struct ArrowArray*));
    out->children[0] = child;
    out->release = release_int64_array;
    st->done += n;
    return 0;
}

static const char* int64_last_error(struct ArrowArrayStream* s) {
    (void)s;
    return NULL;
}

static void int64_release(struct ArrowArrayStream* s) {
    free(s->private_data);
    s->release = NULL;
}

void tu_int64_stream(const char* name, int64_t rows, int64_t mult, int* releases, struct ArrowArrayStream* out) {
    Int64State* st = calloc(1, sizeof *st);
    snprintf(st->name, sizeof st->name, "%s", name);
    st->rows = rows;
    st->mult = mult;
    st->batch = 128;
    struct ArrowArrayStream inner = {int64_get_schema, int64_get_next, int64_last_error, int64_release, st};
    tu_counted_stream(&inner, releases, out);
}
