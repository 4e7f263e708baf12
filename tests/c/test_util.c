#define _GNU_SOURCE
#include "test_util.h"

#include <ftw.h>
#include <sys/stat.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure.h"

int tu_failures = 0;
int tu_checks = 0;

/* The kept error of each thread, freed when the thread exits (the main
 * thread's by tu_finish()). */
static pthread_key_t kept_error_key;
static pthread_once_t kept_error_once = PTHREAD_ONCE_INIT;

static void free_kept_error(void* kept) {
    TuError* e = kept;
    lance_free_string(e->message);
    free(e);
}

static void create_kept_error_key(void) {
    if (pthread_key_create(&kept_error_key, free_kept_error) != 0) abort();
}

/* Takes the pending error into the thread's slot; `took` says whether
 * there was one. */
static const TuError* take_error(int* took) {
    pthread_once(&kept_error_once, create_kept_error_key);
    TuError* kept = pthread_getspecific(kept_error_key);
    if (!kept) {
        kept = calloc(1, sizeof *kept);
        if (!kept || pthread_setspecific(kept_error_key, kept) != 0) abort();
    }
    LanceErrorCode code = lance_last_error_code();
    *took = code != LANCE_OK;
    if (*took) {
        lance_free_string(kept->message);
        kept->code = code;
        kept->message = lance_last_error_message();
    }
    return kept;
}

const TuError* tu_last_error(void) {
    int took;
    return take_error(&took);
}

void tu_fail(const char* file, int line, const char* expr) {
    tu_failures++;
    int took;
    const TuError* e = take_error(&took);
    fprintf(stderr, "%s:%d: check failed: %s\n    last error%s: [%d] %s\n", file, line, expr,
            !took && e->code != LANCE_OK ? " (taken before this check)" : "", (int)e->code,
            e->message ? e->message : "(none)");
}

int tu_error_mentions(const char* needle) {
    const char* msg = tu_last_error()->message;
    int found = msg != NULL && strstr(msg, needle) != NULL;
    if (!found) fprintf(stderr, "    expected the error to mention '%s', got: %s\n", needle, msg ? msg : "(none)");
    return found;
}

int tu_finish(const char* suite) {
    printf("%s: %d checks, %d failed\n", suite, tu_checks, tu_failures);
    pthread_once(&kept_error_once, create_kept_error_key);
    TuError* kept = pthread_getspecific(kept_error_key);
    if (kept) {
        free_kept_error(kept);
        pthread_setspecific(kept_error_key, NULL);
    }
    return tu_failures == 0 ? 0 : 1;
}

/* ---- deterministic random numbers (splitmix64) ---- */

static uint64_t next_u64(uint64_t* state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float uniform(uint64_t* state) { /* in [0, 1) */
    return (float)((next_u64(state) >> 40) * (1.0 / 16777216.0));
}

TuData tu_make_data(int64_t rows, int32_t dim, int32_t clusters, float noise, uint64_t seed) {
    TuData d = {rows, dim, clusters, seed, NULL, NULL};
    uint64_t state = seed;
    float* centres = malloc(sizeof(float) * (size_t)clusters * (size_t)dim);
    for (int64_t i = 0; i < (int64_t)clusters * dim; i++) centres[i] = uniform(&state) * 20.0f - 10.0f;
    d.vectors = malloc(sizeof(float) * (size_t)rows * (size_t)dim);
    d.ids = malloc(sizeof(int64_t) * (size_t)rows);
    for (int64_t r = 0; r < rows; r++) {
        int64_t c = (int64_t)(next_u64(&state) % (uint64_t)clusters);
        for (int32_t j = 0; j < dim; j++)
            d.vectors[r * dim + j] = centres[c * dim + j] + (uniform(&state) * 2.0f - 1.0f) * noise;
        d.ids[r] = r;
    }
    free(centres);
    return d;
}

void tu_free_data(TuData* data) {
    free(data->vectors);
    free(data->ids);
    data->vectors = NULL;
    data->ids = NULL;
}

/* ---- Arrow schemas ---- */

static void release_schema(struct ArrowSchema* s) {
    for (int64_t i = 0; i < s->n_children; i++) {
        struct ArrowSchema* child = s->children[i];
        if (child->release) child->release(child);
        free(child);
    }
    free(s->children);
    free((void*)s->format);
    free((void*)s->name);
    s->release = NULL;
}

static void init_schema(struct ArrowSchema* s, const char* format, const char* name, int64_t flags,
                        int64_t n_children) {
    memset(s, 0, sizeof(*s));
    s->format = strdup(format);
    s->name = name ? strdup(name) : NULL;
    s->flags = flags;
    s->n_children = n_children;
    s->children = n_children ? calloc((size_t)n_children, sizeof(struct ArrowSchema*)) : NULL;
    for (int64_t i = 0; i < n_children; i++) s->children[i] = calloc(1, sizeof(struct ArrowSchema));
    s->release = release_schema;
}

void tu_schema(int32_t dim, struct ArrowSchema* out) {
    char list_format[32];
    snprintf(list_format, sizeof list_format, "+w:%d", dim);
    init_schema(out, "+s", "", 0, 3);
    init_schema(out->children[0], "l", "id", 0, 0);
    init_schema(out->children[1], list_format, "vec", 0, 1);
    init_schema(out->children[1]->children[0], "f", "item", ARROW_FLAG_NULLABLE, 0);
    init_schema(out->children[2], "u", "tag", 0, 0);
}

/* ---- Arrow arrays: every array owns a malloc'd buffer list ---- */

typedef struct {
    const void** buffers;
    int64_t n_buffers;
} ArrayOwner;

static void release_array(struct ArrowArray* a) {
    for (int64_t i = 0; i < a->n_children; i++) {
        struct ArrowArray* child = a->children[i];
        if (child->release) child->release(child);
        free(child);
    }
    free(a->children);
    ArrayOwner* owner = a->private_data;
    for (int64_t i = 0; i < owner->n_buffers; i++) free((void*)owner->buffers[i]);
    free(owner->buffers);
    free(owner);
    a->release = NULL;
}

/* buffers[0] (validity) is always NULL: no nulls anywhere. */
static void init_array(struct ArrowArray* a, int64_t length, int64_t n_buffers, int64_t n_children) {
    memset(a, 0, sizeof(*a));
    ArrayOwner* owner = calloc(1, sizeof(ArrayOwner));
    owner->n_buffers = n_buffers;
    owner->buffers = calloc((size_t)n_buffers, sizeof(void*));
    a->length = length;
    a->n_buffers = n_buffers;
    a->buffers = owner->buffers;
    a->n_children = n_children;
    a->children = n_children ? calloc((size_t)n_children, sizeof(struct ArrowArray*)) : NULL;
    for (int64_t i = 0; i < n_children; i++) a->children[i] = calloc(1, sizeof(struct ArrowArray));
    a->private_data = owner;
    a->release = release_array;
}

static void make_batch(const float* vectors, int32_t dim, int64_t first_id, int64_t n,
                       struct ArrowArray* out) {
    init_array(out, n, 1, 3);
    struct ArrowArray* ids = out->children[0];
    init_array(ids, n, 2, 0);
    int64_t* id_values = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) id_values[i] = first_id + i;
    ids->buffers[1] = id_values;

    struct ArrowArray* vec = out->children[1];
    init_array(vec, n, 1, 1);
    init_array(vec->children[0], n * dim, 2, 0);
    float* values = malloc(sizeof(float) * (size_t)(n * dim > 0 ? n * dim : 1));
    memcpy(values, vectors, sizeof(float) * (size_t)(n * dim));
    vec->children[0]->buffers[1] = values;

    struct ArrowArray* tag = out->children[2];
    init_array(tag, n, 3, 0);
    int32_t* offsets = malloc(sizeof(int32_t) * (size_t)(n + 1));
    char* chars = malloc((size_t)(n * 2 + 1));
    offsets[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        chars[i * 2] = 't';
        chars[i * 2 + 1] = (char)('0' + (first_id + i) % 7);
        offsets[i + 1] = (int32_t)(i * 2 + 2);
    }
    tag->buffers[1] = offsets;
    tag->buffers[2] = chars;
}

void tu_f32_list(const float* values, int64_t n, int32_t dim, int64_t null_row,
                 const char* element_format, struct ArrowArray* out, struct ArrowSchema* out_schema) {
    char format[32];
    snprintf(format, sizeof format, "+w:%d", dim);
    init_schema(out_schema, format, "", ARROW_FLAG_NULLABLE, 1);
    init_schema(out_schema->children[0], element_format, "item", ARROW_FLAG_NULLABLE, 0);
    init_array(out, n, 1, 1);
    if (null_row >= 0) {
        uint8_t* validity = malloc((size_t)(n / 8 + 1));
        memset(validity, 0xff, (size_t)(n / 8 + 1));
        validity[null_row / 8] &= (uint8_t)~(1u << (null_row % 8));
        out->buffers[0] = validity;
        out->null_count = 1;
    }
    init_array(out->children[0], n * dim, 2, 0);
    float* copy = malloc(sizeof(float) * (size_t)(n * dim > 0 ? n * dim : 1));
    memcpy(copy, values, sizeof(float) * (size_t)(n * dim));
    out->children[0]->buffers[1] = copy;
}

int64_t tu_file_size(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

/* ---- streams ---- */

typedef struct {
    float* vectors;
    int32_t dim;
    int64_t first_id;
    int64_t rows;
    int64_t batch_rows;
    int64_t done;
} StreamState;

static int stream_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
    StreamState* st = s->private_data;
    tu_schema(st->dim, out);
    return 0;
}

static int stream_get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
    StreamState* st = s->private_data;
    if (st->done >= st->rows) {
        memset(out, 0, sizeof(*out));
        return 0;
    }
    int64_t n = st->rows - st->done;
    if (n > st->batch_rows) n = st->batch_rows;
    make_batch(st->vectors + st->done * st->dim, st->dim, st->first_id + st->done, n, out);
    st->done += n;
    return 0;
}

static const char* stream_last_error(struct ArrowArrayStream* s) {
    (void)s;
    return NULL;
}

static void stream_release(struct ArrowArrayStream* s) {
    StreamState* st = s->private_data;
    free(st->vectors);
    free(st);
    s->release = NULL;
}

void tu_stream(const TuData* data, int64_t first_row, int64_t rows, int64_t batch_rows,
               struct ArrowArrayStream* out) {
    StreamState* st = calloc(1, sizeof(StreamState));
    st->dim = data->dim;
    st->first_id = first_row;
    st->rows = rows;
    st->batch_rows = batch_rows;
    st->vectors = malloc(sizeof(float) * (size_t)(rows * data->dim > 0 ? rows * data->dim : 1));
    memcpy(st->vectors, data->vectors + first_row * data->dim, sizeof(float) * (size_t)(rows * data->dim));
    out->get_schema = stream_get_schema;
    out->get_next = stream_get_next;
    out->get_last_error = stream_last_error;
    out->release = stream_release;
    out->private_data = st;
}

LanceDataset* tu_write(const char* uri, const TuData* data, int64_t first, int64_t rows,
                       int32_t mode, uint64_t rows_per_file) {
    return tu_write_with_options(uri, data, first, rows, mode, rows_per_file, NULL);
}

LanceDataset* tu_write_with_options(const char* uri, const TuData* data, int64_t first, int64_t rows,
                                    int32_t mode, uint64_t rows_per_file, const char* const* storage_opts) {
    struct ArrowSchema schema;
    struct ArrowArrayStream stream;
    tu_schema(data->dim, &schema);
    tu_stream(data, first, rows, 1000, &stream);
    LanceWriteParams params = {0};
    params.max_rows_per_file = rows_per_file;
    LanceDataset* ds = NULL;
    int rc = lance_dataset_write_with_params(uri, &schema, &stream, mode, &params, storage_opts, &ds);
    schema.release(&schema);
    return rc == 0 ? ds : NULL;
}

/* ---- k-NN ---- */

typedef struct {
    float dist;
    int64_t id;
} Cand;

static int cand_cmp(const void* a, const void* b) {
    const Cand* x = a;
    const Cand* y = b;
    if (x->dist < y->dist) return -1;
    if (x->dist > y->dist) return 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

void tu_brute_force_knn(const TuData* data, const float* query, int k, int64_t* out_ids) {
    Cand* all = malloc(sizeof(Cand) * (size_t)data->rows);
    for (int64_t r = 0; r < data->rows; r++) {
        float s = 0;
        for (int32_t j = 0; j < data->dim; j++) {
            float d = data->vectors[r * data->dim + j] - query[j];
            s += d * d;
        }
        all[r].dist = s;
        all[r].id = data->ids[r];
    }
    qsort(all, (size_t)data->rows, sizeof(Cand), cand_cmp);
    for (int i = 0; i < k; i++) out_ids[i] = all[i].id;
    free(all);
}

static int64_t child_index(const struct ArrowSchema* schema, const char* name) {
    for (int64_t i = 0; i < schema->n_children; i++)
        if (strcmp(schema->children[i]->name, name) == 0) return i;
    return -1;
}

int tu_append_column(const struct ArrowArray* array, const struct ArrowSchema* schema, const char* name,
                     void* out, size_t elem_size, int64_t capacity, int64_t* n) {
    int64_t col = child_index(schema, name);
    if (col < 0) return -1;
    const struct ArrowArray* child = array->children[col];
    const char* values = (const char*)child->buffers[1];
    for (int64_t i = 0; i < child->length; i++) {
        if (*n >= capacity) return -1;
        memcpy((char*)out + (size_t)*n * elem_size, values + (size_t)(child->offset + i) * elem_size, elem_size);
        (*n)++;
    }
    return 0;
}

double tu_recall(LanceDataset* ds, const TuData* data, int queries, uint32_t nprobes, uint32_t refine,
                 int* out_mismatches) {
    int hits = 0, mismatches = 0;
    for (int q = 0; q < queries; q++) {
        const float* query = data->vectors + (int64_t)((q * 7919 + 13) % data->rows) * data->dim;
        const char* cols[] = {"id", NULL};
        LanceScanner* s = lance_scanner_new(ds, cols, NULL);
        if (!s) return -1;
        int64_t got[10], truth[10];
        int n = -1;
        if (lance_scanner_nearest(s, "vec", query, (size_t)data->dim, LANCE_DTYPE_FLOAT32, 10) == 0 &&
            (!nprobes || lance_scanner_set_nprobes(s, nprobes) == 0) && (!refine || lance_scanner_set_refine_factor(s, refine) == 0))
            n = tu_knn_ids(s, got, 10);
        lance_scanner_close(s);
        if (n < 0) return -1;
        tu_brute_force_knn(data, query, 10, truth);
        if (n != 10 || memcmp(got, truth, sizeof got) != 0) mismatches++;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < 10; j++) hits += got[i] == truth[j];
    }
    if (out_mismatches) *out_mismatches = mismatches;
    return (double)hits / (queries * 10);
}

int tu_knn_ids(LanceScanner* scanner, int64_t* out_ids, int k) {
    int n = 0;
    for (;;) {
        LanceBatch* batch = NULL;
        int rc = lance_scanner_next(scanner, &batch);
        if (rc == 1) break;
        if (rc != 0) return -1;
        struct ArrowArray array;
        struct ArrowSchema schema;
        if (lance_batch_to_arrow(batch, &array, &schema) != 0) {
            lance_batch_free(batch);
            return -1;
        }
        int64_t col = child_index(&schema, "id");
        if (col >= 0) {
            const struct ArrowArray* ids = array.children[col];
            const int64_t* values = (const int64_t*)ids->buffers[1];
            for (int64_t i = 0; i < ids->length && n < k; i++) out_ids[n++] = values[ids->offset + i];
        }
        array.release(&array);
        schema.release(&schema);
        lance_batch_free(batch);
        if (col < 0) return -1;
    }
    return n;
}

int64_t tu_count_scan(LanceScanner* scanner) {
    int64_t rows = 0;
    for (;;) {
        LanceBatch* batch = NULL;
        int rc = lance_scanner_next(scanner, &batch);
        if (rc == 1) return rows;
        if (rc != 0) return -1;
        rows += (int64_t)lance_batch_num_rows(batch);
        lance_batch_free(batch);
    }
}

/* ---- files and time ---- */

char* tu_temp_dir(const char* tag) {
    const char* base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/lance-c-%s-XXXXXX", base && *base ? base : "/tmp", tag);
    char* dir = mkdtemp(tmpl);
    return dir ? strdup(dir) : NULL;
}

static int remove_entry(const char* path, const struct stat* sb, int flag, struct FTW* ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void tu_remove_tree(const char* path) {
    if (path) nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void tu_uuid(int seed, uint8_t out[16]) {
    for (int i = 0; i < 16; i++) out[i] = (uint8_t)(seed * 31 + i * 7 + 1);
    out[6] = (uint8_t)(0x40 | (out[6] & 0x0f));
    out[8] = (uint8_t)(0x80 | (out[8] & 0x3f));
}

double tu_now(void) {
    return monotonic_seconds();
}

/* ---- growing text ---- */

void tu_text_vappend(TuText* t, const char* fmt, va_list args) {
    for (;;) {
        va_list copy;
        va_copy(copy, args);
        size_t room = t->cap - t->len;
        int n = vsnprintf(t->text ? t->text + t->len : NULL, t->text ? room : 0, fmt, copy);
        va_end(copy);
        if (n < 0) abort();
        if (t->text && (size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        t->cap = (t->cap + (size_t)n + 1) * 2;
        t->text = realloc(t->text, t->cap);
        if (!t->text) abort();
        if (t->len == 0) t->text[0] = '\0';
    }
}

void tu_text_append(TuText* t, const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    tu_text_vappend(t, fmt, args);
    va_end(args);
}

char* tu_text_take(TuText* t) {
    if (!t->text) tu_text_append(t, "%s", "");
    return t->text;
}

/* ---- other programs ---- */

void tu_shell_quote(TuText* cmd, const char* arg) {
    tu_text_append(cmd, " '");
    for (const char* p = arg; *p; p++) {
        if (*p == '\'') {
            tu_text_append(cmd, "'\\''");
        } else {
            tu_text_append(cmd, "%c", *p);
        }
    }
    tu_text_append(cmd, "'");
}

char* tu_shell_output(const char* command, int* out_exit) {
    if (out_exit) *out_exit = -1;
    FILE* pipe = popen(command, "r");
    if (!pipe) return NULL;
    TuText out = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk - 1, pipe)) > 0) {
        chunk[n] = '\0';
        tu_text_append(&out, "%s", chunk);
    }
    int status = pclose(pipe);
    if (out_exit) *out_exit = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return tu_text_take(&out);
}

/* Runs the command line (and frees it); its stdout when it exits with 0. */
static char* run_checked(TuText* cmd) {
    int code = -1;
    char* out = tu_shell_output(cmd->text, &code);
    CHECK(out != NULL && code == 0);
    if (!out || code != 0) {
        fprintf(stderr, "    exit code %d:%s\n", code, cmd->text);
        free(out);
        out = NULL;
    }
    free(cmd->text);
    return out;
}

char* tu_run_program(const char* const* argv) {
    TuText cmd = {0};
    for (const char* const* arg = argv; *arg; arg++) tu_shell_quote(&cmd, *arg);
    return run_checked(&cmd);
}

char* tu_oracle(const char* python, const char* script, ...) {
    TuText cmd = {0};
    tu_shell_quote(&cmd, python);
    tu_shell_quote(&cmd, script);
    va_list args;
    va_start(args, script);
    for (const char* arg = va_arg(args, const char*); arg; arg = va_arg(args, const char*)) tu_shell_quote(&cmd, arg);
    va_end(args);
    return run_checked(&cmd);
}

uint8_t* tu_vector_segment(LanceDataset* ds, const LanceVectorIndexParams* p, const LanceVectorModel* model,
                           const uint32_t* frags, size_t n, int uuid_seed, size_t* len) {
    uint8_t uuid[16];
    tu_uuid(uuid_seed, uuid);
    LanceIndexSegmentBuildOptionsRfc o = {0};
    o.fragment_ids = frags;
    o.fragment_count = n;
    o.index_uuid = uuid;
    o.model = model;
    o.train = model ? LANCE_TRAIN_NEVER : LANCE_TRAIN_AUTO;
    LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_vector_rfc(ds, "vec", NULL, p, &o);
    if (!b) return NULL;
    uint8_t* bytes = NULL;
    int rc = lance_index_segment_builder_execute_uncommitted(b, &bytes, len);
    lance_index_segment_builder_free(b);
    return rc == 0 ? bytes : NULL;
}
