#include "rows_text.h"

#include <string.h>

void tu_check_same_text(const char* what, const char* ours, const char* theirs) {
    int same = ours && theirs && strcmp(ours, theirs) == 0;
    CHECK(same);
    if (!same) {
        fprintf(stderr, "%s differs\n--- lance-c ---\n%s--- pylance ---\n%s", what, ours ? ours : "(null)\n",
                theirs ? theirs : "(null)\n");
    }
}

static void value_text(TuText* t, const struct ArrowSchema* s, const struct ArrowArray* a, int64_t i) {
    if (!tu_arrow_valid(a, i)) {
        tu_text_append(t, "null");
        return;
    }
    int64_t j = a->offset + i;
    if (strcmp(s->format, "l") == 0) {
        tu_text_append(t, "%lld", (long long)((const int64_t*)a->buffers[1])[j]);
    } else if (strcmp(s->format, "L") == 0) {
        tu_text_append(t, "%llu", (unsigned long long)((const uint64_t*)a->buffers[1])[j]);
    } else if (strcmp(s->format, "u") == 0) {
        const int32_t* offsets = a->buffers[1];
        const char* chars = a->buffers[2];
        tu_text_append(t, "%.*s", (int)(offsets[j + 1] - offsets[j]), chars + offsets[j]);
    } else if (strncmp(s->format, "+w:", 3) == 0 && strcmp(s->children[0]->format, "f") == 0) {
        int64_t dim = atoll(s->format + 3);
        const struct ArrowArray* child = a->children[0];
        const float* values = (const float*)child->buffers[1] + child->offset;
        for (int64_t k = 0; k < dim; k++) tu_text_append(t, "%s%.9g", k ? "," : "", (double)values[j * dim + k]);
    } else {
        tu_text_append(t, "<format %s>", s->format);
    }
}

char* tu_stream_text(struct ArrowArrayStream* stream, int64_t* out_rows) {
    struct ArrowSchema schema;
    TuText t = {0};
    int64_t rows = 0;
    if (stream->get_schema(stream, &schema) != 0) {
        stream->release(stream);
        return NULL;
    }
    for (;;) {
        struct ArrowArray batch;
        if (stream->get_next(stream, &batch) != 0) {
            free(t.text);
            t.text = NULL;
            break;
        }
        if (!batch.release) break;
        for (int64_t r = 0; r < batch.length; r++) {
            for (int64_t c = 0; c < schema.n_children; c++) {
                tu_text_append(&t, "%s%s=", c ? "\t" : "", schema.children[c]->name);
                value_text(&t, schema.children[c], batch.children[c], batch.offset + r);
            }
            tu_text_append(&t, "\n");
        }
        rows += batch.length;
        batch.release(&batch);
    }
    schema.release(&schema);
    stream->release(stream);
    if (out_rows) *out_rows = rows;
    return tu_text_take(&t);
}

char* tu_scan_text(LanceDataset* ds) {
    LanceScanner* scanner = lance_scanner_new(ds, NULL, NULL);
    CHECK(scanner != NULL);
    if (!scanner) return NULL;
    struct ArrowArrayStream stream;
    char* text = NULL;
    if (lance_scanner_to_arrow_stream(scanner, &stream) == 0) text = tu_stream_text(&stream, NULL);
    lance_scanner_close(scanner);
    return text;
}

LanceDataset* tu_history_dataset(const TuData* data, const char* dir, const char* name, char* uri, size_t uri_size) {
    snprintf(uri, uri_size, "%s/%s", dir, name);
    LanceDataset* ds = tu_write(uri, data, 0, 300, LANCE_WRITE_CREATE, 100);
    CHECK(ds != NULL);
    lance_dataset_close(ds);
    ds = tu_write(uri, data, 300, 100, LANCE_WRITE_APPEND, 100);
    CHECK(ds != NULL);
    uint64_t deleted = 0;
    CHECK_OK(lance_dataset_delete(ds, "id >= 10 AND id < 20", &deleted));
    CHECK(deleted == 10);
    CHECK(lance_dataset_version(ds) == 3);
    CHECK(lance_dataset_fragment_count(ds) == 4);
    CHECK(lance_dataset_count_rows(ds) == 390);
    return ds;
}

int tu_history_begin(int argc, char** argv, const char** python, const char** script, TuData* data) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s <python with pylance> <oracle script>\n", argv[0]);
        return 0;
    }
    *python = argv[1];
    *script = argv[2];
    *data = tu_make_data(400, 4, 4, 0.5f, 7);
    return 1;
}
