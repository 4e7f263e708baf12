#include "demo_data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_c.h"
#include "arrow_flags.h"

/* Rows per record batch of the write. */
#define BATCH_ROWS 1000

/* ---- the vectors: splitmix64, the same sequence on every host ---- */

static uint64_t splitmix64(uint64_t* state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1), from the top 24 bits. */
static float unit_interval(uint64_t* state) { return (float)((splitmix64(state) >> 40) * (1.0 / 16777216.0)); }

int demo_data_make(DemoData* out, int64_t rows, int32_t dim, int32_t clusters, float noise, uint64_t seed) {
    memset(out, 0, sizeof *out);
    if (rows < 0 || dim < 1 || clusters < 1 || !(noise >= 0)) {
        errno = EINVAL;
        return -1;
    }
    if ((uint64_t)rows > SIZE_MAX / sizeof(float) / (uint64_t)dim ||
        (uint64_t)clusters > SIZE_MAX / sizeof(float) / (uint64_t)dim) {
        errno = ENOMEM;
        return -1;
    }
    size_t centre_values = (size_t)clusters * (size_t)dim;
    float* centres = malloc(centre_values * sizeof *centres);
    float* vectors = malloc((rows ? (size_t)rows * (size_t)dim : 1) * sizeof *vectors);
    if (!centres || !vectors) {
        free(centres);
        free(vectors);
        errno = ENOMEM;
        return -1;
    }
    uint64_t state = seed;
    for (size_t i = 0; i < centre_values; i++) centres[i] = unit_interval(&state) * 20.0f - 10.0f;
    for (int64_t r = 0; r < rows; r++) {
        const float* centre = centres + (size_t)(splitmix64(&state) % (uint64_t)clusters) * (size_t)dim;
        float* row = vectors + (size_t)r * (size_t)dim;
        for (int32_t j = 0; j < dim; j++) row[j] = centre[j] + (unit_interval(&state) * 2.0f - 1.0f) * noise;
    }
    free(centres);
    out->rows = rows;
    out->dim = dim;
    out->vectors = vectors;
    return 0;
}

void demo_data_free(DemoData* data) {
    free(data->vectors);
    memset(data, 0, sizeof *data);
}

/* ---- the dataset: a stream of record batches over the borrowed vectors ---- */

static int demo_schema(int32_t dim, struct ArrowSchema* out) {
    char vec_format[32];
    snprintf(vec_format, sizeof vec_format, "+w:%d", (int)dim);
    if (arrow_schema_init(out, "+s", "", 0, 3) == 0 && arrow_schema_init(out->children[0], "l", "id", 0, 0) == 0 &&
        arrow_schema_init(out->children[1], vec_format, "vec", 0, 1) == 0 &&
        arrow_schema_init(out->children[1]->children[0], "f", "item", ARROW_FLAG_NULLABLE, 0) == 0 &&
        arrow_schema_init(out->children[2], "u", "tag", 0, 0) == 0)
        return 0;
    if (out->release) out->release(out);
    errno = ENOMEM;
    return -1;
}

/* Fills the batch of rows [first, first + n), n > 0.  Each buffer is put in
 * its node's slot as soon as it is allocated, so one release frees all. */
static int demo_batch(const DemoData* d, int64_t first, int64_t n, struct ArrowArray* out) {
    if (arrow_array_init(out, n, 1, 3) != 0) return -1;
    struct ArrowArray* id = out->children[0];
    struct ArrowArray* vec = out->children[1];
    struct ArrowArray* tag = out->children[2];
    size_t values = (size_t)n * (size_t)d->dim;
    int64_t* ids = NULL;
    float* floats = NULL;
    int32_t* offsets = NULL;
    char* chars = NULL;
    if (arrow_array_init(id, n, 2, 0) == 0 && (id->buffers[1] = ids = malloc((size_t)n * sizeof *ids)) &&
        arrow_array_init(vec, n, 1, 1) == 0 && arrow_array_init(vec->children[0], (int64_t)values, 2, 0) == 0 &&
        (vec->children[0]->buffers[1] = floats = malloc(values * sizeof *floats)) &&
        arrow_array_init(tag, n, 3, 0) == 0 &&
        (tag->buffers[1] = offsets = malloc(((size_t)n + 1) * sizeof *offsets)) &&
        (tag->buffers[2] = chars = malloc((size_t)n * 2))) {
        memcpy(floats, d->vectors + (size_t)first * (size_t)d->dim, values * sizeof *floats);
        offsets[0] = 0;
        for (int64_t i = 0; i < n; i++) {
            ids[i] = first + i;
            chars[2 * i] = 't';
            chars[2 * i + 1] = (char)('0' + (first + i) % 7);
            offsets[i + 1] = (int32_t)(2 * i + 2);
        }
        return 0;
    }
    out->release(out);
    errno = ENOMEM;
    return -1;
}

typedef struct {
    const DemoData* data;
    int64_t next, end;
} DemoSource;

static int source_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
    return demo_schema(((DemoSource*)s->private_data)->data->dim, out) == 0 ? 0 : ENOMEM;
}

static int source_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
    DemoSource* src = s->private_data;
    if (src->next >= src->end) {
        memset(out, 0, sizeof *out); /* release == NULL: the end of the stream */
        return 0;
    }
    int64_t n = src->end - src->next < BATCH_ROWS ? src->end - src->next : BATCH_ROWS;
    if (demo_batch(src->data, src->next, n, out) != 0) return ENOMEM;
    src->next += n;
    return 0;
}

static const char* source_error(struct ArrowArrayStream* s) {
    (void)s;
    return "out of memory while making a batch of demo data";
}

static void source_release(struct ArrowArrayStream* s) { s->release = NULL; }

LanceDataset* demo_data_write(const char* uri, const DemoData* data, int64_t first, int64_t count, int32_t mode,
                              uint64_t rows_per_file, const char* const* storage_opts) {
    if (first < 0 || count < 0 || first > data->rows || count > data->rows - first) {
        errno = EINVAL;
        return NULL;
    }
    struct ArrowSchema schema;
    if (demo_schema(data->dim, &schema) != 0) return NULL;
    /* The library consumes the stream before the write returns: it may
     * borrow the source and the vectors. */
    DemoSource source = {data, first, first + count};
    struct ArrowArrayStream stream = {source_schema, source_next, source_error, source_release, &source};
    LanceWriteParams params = {0};
    params.max_rows_per_file = rows_per_file;
    LanceDataset* dataset = NULL;
    int rc = lance_dataset_write_with_params(uri, &schema, &stream, mode, &params, storage_opts, &dataset);
    schema.release(&schema);
    return rc == 0 ? dataset : NULL;
}

/* ---- exact answers and recall ---- */

const float* demo_data_query(const DemoData* data, int q) {
    int64_t row = ((int64_t)q * 7919 + 13) % data->rows;
    return data->vectors + (size_t)row * (size_t)data->dim;
}

typedef struct {
    float distance;
    int64_t id;
} Neighbour;

int demo_data_nearest(const DemoData* data, const float* query, int k, int64_t* out_ids) {
    int want = k < 0 ? 0 : (int64_t)k < data->rows ? k : (int)data->rows;
    if (want == 0) return 0;
    Neighbour* best = malloc((size_t)want * sizeof *best); /* ascending by (distance, id) */
    if (!best) {
        errno = ENOMEM;
        return -1;
    }
    int held = 0;
    for (int64_t r = 0; r < data->rows; r++) {
        const float* row = data->vectors + (size_t)r * (size_t)data->dim;
        float distance = 0;
        for (int32_t j = 0; j < data->dim; j++) {
            float diff = row[j] - query[j];
            distance += diff * diff;
        }
        /* Rows come in id order: an equal distance never displaces a held
         * row, and goes after the held rows at that distance. */
        if (held == want && !(distance < best[want - 1].distance)) continue;
        int at = held < want ? held++ : want - 1;
        while (at > 0 && distance < best[at - 1].distance) {
            best[at] = best[at - 1];
            at--;
        }
        best[at] = (Neighbour){distance, r};
    }
    for (int i = 0; i < want; i++) out_ids[i] = best[i].id;
    free(best);
    return want;
}

int demo_scan_ids(LanceScanner* scanner, int64_t* out_ids, int capacity) {
    int n = 0;
    for (;;) {
        LanceBatch* batch = NULL;
        int rc = lance_scanner_next(scanner, &batch);
        if (rc == 1) return n; /* the end of the scan */
        if (rc != 0) return -1;
        struct ArrowArray array;
        struct ArrowSchema schema;
        rc = lance_batch_to_arrow(batch, &array, &schema);
        lance_batch_free(batch);
        if (rc != 0) return -1;
        int64_t column = arrow_child_index(&schema, "id");
        if (column >= 0) {
            const struct ArrowArray* ids = array.children[column];
            const int64_t* values = (const int64_t*)ids->buffers[1] + ids->offset;
            for (int64_t i = 0; i < ids->length && n < capacity; i++) out_ids[n++] = values[i];
        }
        array.release(&array);
        schema.release(&schema);
        if (column < 0) return -1;
    }
}

double demo_data_recall(const LanceDataset* dataset, const DemoData* data, int queries, uint32_t nprobes,
                        uint32_t refine, int* out_mismatches) {
    enum { K = 10 };
    static const char* const columns[] = {"id", NULL};
    int hits = 0, mismatches = 0;
    for (int q = 0; q < queries; q++) {
        const float* query = demo_data_query(data, q);
        LanceScanner* scanner = lance_scanner_new(dataset, columns, NULL);
        if (!scanner) return -1;
        int64_t got[K], exact[K];
        int n = -1;
        if (lance_scanner_nearest(scanner, "vec", query, (size_t)data->dim, LANCE_DTYPE_FLOAT32, K) == 0 &&
            (!nprobes || lance_scanner_set_nprobes(scanner, nprobes) == 0) &&
            (!refine || lance_scanner_set_refine_factor(scanner, refine) == 0))
            n = demo_scan_ids(scanner, got, K);
        lance_scanner_close(scanner);
        if (n < 0) return -1;
        int m = demo_data_nearest(data, query, K, exact);
        if (m < 0) return -1;
        if (n != m || memcmp(got, exact, (size_t)n * sizeof *got) != 0) mismatches++;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < m; j++) hits += got[i] == exact[j];
    }
    if (out_mismatches) *out_mismatches = mismatches;
    return queries > 0 ? (double)hits / ((double)queries * K) : 0;
}
