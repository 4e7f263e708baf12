#define _GNU_SOURCE
#include "test_util.h"

#include <dirent.h>
#include <ftw.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arrow_c.h"

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

/* ---- data ---- */

TuData tu_make_data(int64_t rows, int32_t dim, int32_t clusters, float noise, uint64_t seed) {
    DemoData demo;
    if (demo_data_make(&demo, rows, dim, clusters, noise, seed) != 0) {
        perror("tu_make_data");
        abort();
    }
    TuData d = {rows, dim, clusters, seed, demo.vectors, malloc(sizeof(int64_t) * (size_t)(rows > 0 ? rows : 1))};
    if (!d.ids) abort();
    for (int64_t r = 0; r < rows; r++) d.ids[r] = r;
    return d;
}

void tu_free_data(TuData* data) {
    free(data->vectors);
    free(data->ids);
    data->vectors = NULL;
    data->ids = NULL;
}

void tu_brute_force_knn(const TuData* data, const float* query, int k, int64_t* out_ids) {
    DemoData demo = tu_demo_data(data);
    int n = demo_data_nearest(&demo, query, k, out_ids);
    if (n < 0) abort();
    /* demo_data_nearest() names rows; row r's id is data->ids[r]. */
    for (int i = 0; i < n; i++) out_ids[i] = data->ids[out_ids[i]];
}

/* ---- Arrow nodes (common/arrow_c.h); out of memory stops the test ---- */

static void init_schema(struct ArrowSchema* s, const char* format, const char* name, int64_t flags,
                        int64_t n_children) {
    if (arrow_schema_init(s, format, name, flags, n_children) != 0) abort();
}

/* buffers[0] (validity) stays NULL unless set: no nulls. */
static void init_array(struct ArrowArray* a, int64_t length, int64_t n_buffers, int64_t n_children) {
    if (arrow_array_init(a, length, n_buffers, n_children) != 0) abort();
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

static void demo_batch(const float* vectors, int32_t dim, int64_t first_id, int64_t n, struct ArrowArray* out) {
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

void tu_f32_list(const float* values, int64_t n, int32_t dim, int64_t null_row, const char* element_format,
                 struct ArrowArray* out, struct ArrowSchema* out_schema) {
    char format[32];
    snprintf(format, sizeof format, "+w:%d", dim);
    init_schema(out_schema, format, "", ARROW_FLAG_NULLABLE, 1);
    init_schema(out_schema->children[0], element_format, "item", ARROW_FLAG_NULLABLE, 0);
    init_array(out, n, 1, 1);
    if (null_row >= 0) {
        uint8_t* validity = malloc((size_t)(n / 8 + 1));
        memset(validity, 0xff, (size_t)(n / 8 + 1));
        validity[null_row / 8] &= (uint8_t) ~(1u << (null_row % 8));
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

int tu_arrow_valid(const struct ArrowArray* a, int64_t i) {
    const uint8_t* bits = a->n_buffers > 0 ? a->buffers[0] : NULL;
    if (!bits || a->null_count == 0) return 1;
    int64_t j = a->offset + i;
    return (bits[j / 8] >> (j % 8)) & 1;
}

int tu_dir_entries(const char* path) { return tu_dir_entries_print(path, NULL); }

int tu_visible_entries(const char* path) {
    DIR* d = opendir(path);
    if (!d) return -1;
    int n = 0;
    for (struct dirent* e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

int tu_dir_entries_print(const char* path, const char* label) {
    DIR* d = opendir(path);
    if (!d) return -1;
    int n = 0;
    for (struct dirent* e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        n++;
        if (label) printf("    %s%s\n", label, e->d_name);
    }
    closedir(d);
    return n;
}

/* nftw() passes no context: tu_tree_count()'s totals, for one walk at a time. */
static TuTreeCount tree_count;
static int64_t tree_block;

static int count_entry(const char* path, const struct stat* st, int flag, struct FTW* ftw) {
    (void)path, (void)ftw;
    if (flag == FTW_F) {
        tree_count.files++;
        tree_count.bytes += st->st_size;
        tree_count.block_bytes += (st->st_size + tree_block - 1) / tree_block * tree_block;
    }
    return 0;
}

TuTreeCount tu_tree_count(const char* root, int64_t block) {
    static pthread_mutex_t one_walk = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&one_walk);
    tree_count = (TuTreeCount){0, 0, 0};
    tree_block = block > 0 ? block : 1;
    nftw(root, count_entry, 16, FTW_PHYS);
    TuTreeCount out = tree_count;
    pthread_mutex_unlock(&one_walk);
    return out;
}

/* nftw() passes no context: tu_copy_tree()'s two roots, for one copy at a time. */
static const char* copy_from;
static const char* copy_to;

static int copy_entry(const char* path, const struct stat* st, int flag, struct FTW* ftw) {
    (void)ftw;
    char target[2400];
    snprintf(target, sizeof target, "%s%s", copy_to, path + strlen(copy_from));
    if (flag == FTW_D) return mkdir(target, 0755) == 0 ? 0 : -1;
    if (flag != FTW_F) return -1;
    size_t len = 0;
    unsigned char* bytes = read_whole_file(path, &len);
    if (!bytes && st->st_size > 0) return -1;
    int rc = write_whole_file(target, bytes, len) == 0 && (size_t)st->st_size == len ? 0 : -1;
    free(bytes);
    return rc;
}

int tu_copy_tree(const char* from, const char* to) {
    static pthread_mutex_t one_copy = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&one_copy);
    copy_from = from;
    copy_to = to;
    int rc = nftw(from, copy_entry, 16, FTW_PHYS);
    pthread_mutex_unlock(&one_copy);
    return rc == 0 ? 0 : -1;
}

void tu_check_child(const char* self, const char* const* args, const char* tmpdir, const char* err_dir,
                    int expect_empty_stderr) {
    char err_path[1200];
    if (err_dir) snprintf(err_path, sizeof err_path, "%s/stderr-%s.txt", err_dir, args[0]);
    int status = tu_run_self(self, args, tmpdir, err_dir ? err_path : NULL);
    CHECK(status == 0);
    if (status != 0) fprintf(stderr, "    child %s exited with %d\n", args[0], status);
    if (err_dir && expect_empty_stderr) {
        int64_t size = tu_file_size(err_path);
        CHECK(size == 0);
        if (size != 0) {
            size_t n = 0;
            char* text = (char*)read_whole_file(err_path, &n);
            fprintf(stderr, "    child %s wrote to stderr: %.*s\n", args[0], (int)n, text ? text : "");
            free(text);
        }
    }
}

void tu_latch_init(TuLatch* latch) {
    pthread_mutex_init(&latch->lock, NULL);
    pthread_cond_init(&latch->cond, NULL);
    latch->count = 0;
}

void tu_latch_destroy(TuLatch* latch) {
    pthread_mutex_destroy(&latch->lock);
    pthread_cond_destroy(&latch->cond);
}

void tu_latch_signal(TuLatch* latch) {
    pthread_mutex_lock(&latch->lock);
    latch->count++;
    pthread_cond_broadcast(&latch->cond);
    pthread_mutex_unlock(&latch->lock);
}

int tu_latch_wait(TuLatch* latch, int count, int seconds) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += seconds;
    pthread_mutex_lock(&latch->lock);
    int rc = 0;
    while (latch->count < count && rc == 0)
        rc = seconds ? pthread_cond_timedwait(&latch->cond, &latch->lock, &until)
                     : pthread_cond_wait(&latch->cond, &latch->lock);
    int got = latch->count;
    pthread_mutex_unlock(&latch->lock);
    return got;
}

int tu_oracle_args(int argc, char** argv, const char* script_name, const char** python, const char** script) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s <python with pylance> <%s>\n", argv[0], script_name);
        return -1;
    }
    *python = argv[1];
    *script = argv[2];
    return 0;
}

uint64_t tu_get_u64_le(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

int tu_process_dir(const char* base, char* out, size_t cap) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "lance-c-process-%d-", (int)getpid());
    DIR* d = opendir(base);
    if (!d) return -1;
    int found = -1;
    for (struct dirent* e; (e = readdir(d));) {
        if (!strncmp(e->d_name, prefix, strlen(prefix))) {
            snprintf(out, cap, "%s/%s", base, e->d_name);
            found = 0;
        }
    }
    closedir(d);
    return found;
}

int tu_run_self(const char* self, const char* const* args, const char* tmpdir, const char* err_path) {
    pid_t pid = fork();
    if (pid == 0) {
        if (err_path && !freopen(err_path, "w", stderr)) _exit(97);
        if (tmpdir) setenv("TMPDIR", tmpdir, 1);
        const char* argv[8] = {self};
        for (int i = 0; args[i] && i < 6; i++) argv[i + 1] = args[i];
        execv(self, (char* const*)argv);
        _exit(98);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
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
    demo_batch(st->vectors + st->done * st->dim, st->dim, st->first_id + st->done, n, out);
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

void tu_stream(const TuData* data, int64_t first_row, int64_t rows, int64_t batch_rows, struct ArrowArrayStream* out) {
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

int tu_append_column(const struct ArrowArray* array, const struct ArrowSchema* schema, const char* name, void* out,
                     size_t elem_size, int64_t capacity, int64_t* n) {
    int64_t col = arrow_child_index(schema, name);
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

/* ---- UUIDs ---- */

void tu_uuid(int seed, uint8_t out[16]) {
    for (int i = 0; i < 16; i++) out[i] = (uint8_t)(seed * 31 + i * 7 + 1);
    out[6] = (uint8_t)(0x40 | (out[6] & 0x0f));
    out[8] = (uint8_t)(0x80 | (out[8] & 0x3f));
}

/* ---- progress events ---- */

void tu_progress_event_set(TuProgressEvent* out, int32_t event, const char* stage, uint64_t total, const char* unit,
                           uint64_t completed) {
    out->event = event;
    snprintf(out->stage, sizeof out->stage, "%s", stage ? stage : "(null)");
    out->total = total;
    snprintf(out->unit, sizeof out->unit, "%s", unit ? unit : "(null)");
    out->completed = completed;
}

int tu_check_progress_events(const TuProgressEvent* events, int count, int finished) {
    const char* open = NULL;
    uint64_t last = 0;
    int stages = 0, progress_events = 0;
    for (int i = 0; i < count; i++) {
        const TuProgressEvent* e = &events[i];
        switch (e->event) {
        case LANCE_INDEX_BUILD_PROGRESS_STAGE_START:
            CHECK(open == NULL);
            CHECK(e->completed == 0);
            open = e->stage;
            last = 0;
            stages++;
            break;
        case LANCE_INDEX_BUILD_PROGRESS_STAGE_PROGRESS:
            CHECK(open != NULL && strcmp(open, e->stage) == 0);
            CHECK(e->total == 0 && strcmp(e->unit, "") == 0);
            CHECK(e->completed >= last);
            last = e->completed;
            progress_events++;
            break;
        case LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE:
            CHECK(open != NULL && strcmp(open, e->stage) == 0);
            CHECK(e->total == 0 && strcmp(e->unit, "") == 0);
            CHECK(e->completed == 0);
            open = NULL;
            break;
        default: CHECK(!"an event that is not a LanceIndexBuildProgressEvent");
        }
    }
    CHECK(stages > 0);
    if (finished) CHECK(open == NULL);
    return progress_events;
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

void tu_fixture_begin(TuFixture* f, const char* tag, TuData data, uint64_t rows_per_fragment) {
    f->data = data;
    f->dir = tu_temp_dir(tag);
    snprintf(f->uri, sizeof f->uri, "%s/%s.lance", f->dir, tag);
    f->ds = tu_write(f->uri, &f->data, 0, f->data.rows, LANCE_WRITE_CREATE, rows_per_fragment);
    CHECK(f->ds != NULL);
}

int tu_fixture_end(TuFixture* f, const char* suite) {
    lance_dataset_close(f->ds);
    tu_remove_tree(f->dir);
    free(f->dir);
    tu_free_data(&f->data);
    return tu_finish(suite);
}

LanceIndexSegmentBuilder* tu_vector_segment_builder(const LanceDataset* ds, const LanceVectorIndexParams* p,
                                                    const LanceVectorModel* model, const uint32_t* fragment_ids,
                                                    size_t n, int uuid_seed, uint8_t uuid[16]) {
    tu_uuid(uuid_seed, uuid);
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = fragment_ids;
    o.fragment_count = n;
    o.index_uuid = uuid;
    return vector_segment_builder_new(ds, "vec", NULL, p, &o, model);
}

uint8_t* tu_vector_segment(LanceDataset* ds, const LanceVectorIndexParams* p, const LanceVectorModel* model,
                           const uint32_t* fragment_ids, size_t n, int uuid_seed, size_t* len) {
    uint8_t uuid[16];
    LanceIndexSegmentBuilder* b = tu_vector_segment_builder(ds, p, model, fragment_ids, n, uuid_seed, uuid);
    if (!b) return NULL;
    uint8_t* bytes = NULL;
    int rc = lance_index_segment_builder_execute_uncommitted(b, &bytes, len);
    lance_index_segment_builder_free(b);
    return rc == 0 ? bytes : NULL;
}
