#include "dataset_kit.h"

#include <stdlib.h>
#include <string.h>

LanceDataset* dk_fresh(const char* dir, const char* name, const TuData* data, uint64_t rows_per_fragment, char* uri,
                       size_t cap) {
    static int seq; /* the N of ds<N>: each unnamed dataset of a process is new */
    char path[1200];
    if (name) snprintf(path, sizeof path, "%s/%s.lance", dir, name);
    else snprintf(path, sizeof path, "%s/ds%d.lance", dir, seq++);
    if (uri) snprintf(uri, cap, "%s", path);
    LanceDataset* ds = tu_write(path, data, 0, data->rows, LANCE_WRITE_CREATE, rows_per_fragment);
    CHECK(ds != NULL);
    return ds;
}

char* dk_temp_uri(const char* tag, const char* name, char* uri, size_t cap) {
    char* dir = tu_temp_dir(tag);
    snprintf(uri, cap, "%s/%s.lance", dir, name);
    return dir;
}

LanceDataset* dk_oracle_dataset(const char* python, const char* script, const char* uri) {
    char* out = tu_oracle(python, script, "make", uri, NULL);
    CHECK(out != NULL);
    free(out);
    LanceDataset* ds = out ? lance_dataset_open(uri, NULL, 0) : NULL;
    CHECK(ds != NULL);
    return ds;
}

int dk_next_arrow(LanceScanner* s, struct ArrowArray* out, struct ArrowSchema* out_schema) {
    LanceBatch* b = NULL;
    int rc = lance_scanner_next(s, &b);
    if (rc == 1) return 0;
    CHECK(rc == 0);
    if (rc != 0) return -1;
    rc = lance_batch_to_arrow(b, out, out_schema);
    CHECK(rc == 0);
    lance_batch_free(b);
    return rc == 0 ? 1 : -1;
}

int64_t dk_read_ids(LanceScanner* s, int64_t* ids, float* distances, int64_t cap) {
    return dk_read_ids_with(s, "_distance", ids, distances, cap);
}

int64_t dk_read_ids_with(LanceScanner* s, const char* column, int64_t* ids, float* distances, int64_t cap) {
    int64_t n = 0, nd = 0;
    for (;;) {
        LanceBatch* b = NULL;
        int rc = lance_scanner_next(s, &b);
        if (rc == 1) break;
        if (rc != 0) return -1;
        struct ArrowArray a;
        struct ArrowSchema sc;
        if (lance_batch_to_arrow(b, &a, &sc) != 0) {
            lance_batch_free(b);
            return -1;
        }
        int ok = tu_append_column(&a, &sc, "id", ids, sizeof *ids, cap, &n) == 0 &&
                 (!distances || tu_append_column(&a, &sc, column, distances, sizeof *distances, cap, &nd) == 0);
        a.release(&a);
        sc.release(&sc);
        lance_batch_free(b);
        if (!ok) return -1;
    }
    return distances && nd != n ? -1 : n;
}

int64_t dk_scan_ids(const LanceDataset* ds, const char* filter, int64_t* out, int64_t cap) {
    static const char* const columns[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, columns, filter);
    CHECK(s != NULL);
    int64_t n = s ? dk_read_ids(s, out, NULL, cap) : -1;
    CHECK(n >= 0);
    lance_scanner_close(s);
    return n;
}

char* dk_ids_text(LanceScanner* s, int64_t max_rows, int64_t* out_count) {
    int64_t* ids = malloc(sizeof(int64_t) * (size_t)(max_rows + 1));
    if (!ids) abort();
    int64_t n = s ? dk_read_ids(s, ids, NULL, max_rows) : -1;
    CHECK(n >= 0);
    if (out_count) *out_count = n;
    char* text = NULL;
    if (n >= 0) {
        qsort(ids, (size_t)n, sizeof *ids, dk_compare_i64);
        TuText t = {0};
        for (int64_t i = 0; i < n; i++) tu_text_append(&t, i ? ",%lld" : "%lld", (long long)ids[i]);
        text = tu_text_take(&t);
    }
    free(ids);
    return text;
}

char* dk_filter_ids(const LanceDataset* ds, const char* filter, int64_t max_rows, int use_scalar_index,
                    LanceScanStatisticsCallback on_statistics, void* statistics_ctx) {
    static const char* const columns[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, columns, filter);
    int ready = s && (use_scalar_index < 0 || lance_scanner_set_use_scalar_index(s, use_scalar_index != 0) == 0) &&
                (!on_statistics || lance_scanner_set_statistics_callback(s, on_statistics, statistics_ctx) == 0);
    char* text = dk_ids_text(ready ? s : NULL, max_rows, NULL);
    lance_scanner_close(s);
    return text;
}

DkRows dk_rows_new(int max_id, int32_t dim) {
    DkRows r = {max_id, dim, calloc((size_t)max_id, sizeof(bool)), calloc((size_t)max_id, sizeof(float*))};
    if (!r.live || !r.vector_of) abort();
    return r;
}

void dk_rows_free(DkRows* r) {
    free(r->live);
    free(r->vector_of);
    r->live = NULL;
    r->vector_of = NULL;
}

void dk_rows_mark(DkRows* r, int64_t first, int64_t count, const TuData* source) {
    for (int64_t id = first; id < first + count; id++) {
        r->live[id] = true;
        r->vector_of[id] = source->vectors + id * r->dim;
    }
}

int dk_rows_count(const DkRows* r) {
    int n = 0;
    for (int id = 0; id < r->max_id; id++) n += r->live[id];
    return n;
}

TuData dk_rows_data(const DkRows* r) {
    TuData rows = {0,
                   r->dim,
                   0,
                   0,
                   malloc(sizeof(float) * (size_t)r->max_id * (size_t)r->dim),
                   malloc(sizeof(int64_t) * (size_t)r->max_id)};
    if (!rows.vectors || !rows.ids) abort();
    for (int id = 0; id < r->max_id; id++) {
        if (!r->live[id]) continue;
        memcpy(rows.vectors + rows.rows * r->dim, r->vector_of[id], sizeof(float) * (size_t)r->dim);
        rows.ids[rows.rows++] = id;
    }
    return rows;
}

char* dk_rows_ids(const DkRows* r, bool (*selects)(size_t filter, int id), size_t filter) {
    TuText t = {0};
    int n = 0;
    for (int id = 0; id < r->max_id; id++)
        if (r->live[id] && selects(filter, id)) tu_text_append(&t, n++ ? ",%d" : "%d", id);
    return tu_text_take(&t);
}

int dk_compare_i64(const void* a, const void* b) {
    int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
    return (x > y) - (x < y);
}

const char* dk_version_text(uint64_t version) {
    static char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)version);
    return text;
}

int dk_blob_rows(const char* python, const char* script, const char* dir, DkBlobRow* out, int cap) {
    char* listing = tu_oracle(python, script, "write", dir, NULL);
    if (!listing) return -1;
    int n = 0;
    for (char* line = listing; n < cap && *line;) {
        char* end = strchr(line, '\n');
        DkBlobRow* r = &out[n];
        char size[32];
        long long id;
        unsigned long long row_id;
        if (sscanf(line, "%lld %llu %31s", &id, &row_id, size) != 3) break;
        r->id = id;
        r->row_id = row_id;
        r->size = strcmp(size, "null") == 0 ? -1 : atoll(size);
        r->bytes = NULL;
        if (r->size >= 0) {
            char path[1200];
            snprintf(path, sizeof path, "%s/expected/%lld.bin", dir, id);
            size_t len = 0;
            r->bytes = read_whole_file(path, &len);
            if (!r->bytes || (int64_t)len != r->size) {
                free(r->bytes);
                break;
            }
        }
        n++;
        line = end ? end + 1 : line + strlen(line);
    }
    free(listing);
    return n;
}

int dk_compare_strings(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

void dk_append_json_ids(TuText* t, const JValue* list) {
    for (size_t i = 0; list && i < list->count; i++)
        tu_text_append(t, i ? ",%lld" : "%lld", (long long)list->items[i]->number);
}
