/* Datasets and writes: open, versions, schema, fragments, write modes and
 * parameters, and every bad-input path; and the error channel (lance.h
 * "Errors and memory"). */
#include <pthread.h>
#include <string.h>

#include "test_util.h"

static TuData data;

static void test_version_and_errors(void) {
    CHECK(strcmp(lance_version(), LANCE_C_VERSION_STRING) == 0);
    /* No error yet on this thread. */
    CHECK(lance_last_error_code() == LANCE_OK);
    CHECK(lance_last_error_message() == NULL);
    lance_free_string(NULL);
    lance_free_bytes(NULL);
}

static void test_write_open_fragments(void) {
    char* dir = tu_temp_dir("ds");
    char uri[600];
    snprintf(uri, sizeof uri, "%s/data.lance", dir);

    LanceDataset* ds = tu_write(uri, &data, 0, 1000, LANCE_WRITE_CREATE, 100);
    CHECK(ds != NULL);
    CHECK(lance_dataset_version(ds) == 1);
    CHECK(lance_dataset_latest_version(ds) == 1);
    CHECK(lance_dataset_count_rows(ds) == 1000);
    CHECK(lance_dataset_fragment_count(ds) == 10);

    uint64_t ids[10];
    CHECK_OK(lance_dataset_fragment_ids(ds, ids));
    for (int i = 0; i < 10; i++) CHECK(ids[i] == (uint64_t)i);

    uint64_t counts[10];
    CHECK_OK(lance_dataset_fragment_row_counts(ds, counts, 10));
    for (int i = 0; i < 10; i++) CHECK(counts[i] == 100);
    CHECK_ERR(lance_dataset_fragment_row_counts(ds, counts, 9), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("capacity = 9"));
    CHECK_ERR(lance_dataset_fragment_row_counts(ds, NULL, 10), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_fragment_ids(ds, NULL), LANCE_ERR_INVALID_ARGUMENT);

    struct ArrowSchema schema;
    CHECK_OK(lance_dataset_schema(ds, &schema));
    CHECK(strcmp(schema.format, "+s") == 0);
    CHECK(schema.n_children == 3);
    CHECK(strcmp(schema.children[0]->name, "id") == 0 && strcmp(schema.children[0]->format, "l") == 0);
    CHECK(strcmp(schema.children[1]->name, "vec") == 0 && strcmp(schema.children[1]->format, "+w:16") == 0);
    CHECK(strcmp(schema.children[2]->name, "tag") == 0 && strcmp(schema.children[2]->format, "u") == 0);
    schema.release(&schema);
    CHECK_ERR(lance_dataset_schema(ds, NULL), LANCE_ERR_INVALID_ARGUMENT);

    /* Append: a second handle at version 2; the first keeps its snapshot. */
    LanceDataset* ds2 = tu_write(uri, &data, 1000, 500, LANCE_WRITE_APPEND, 250);
    CHECK(ds2 != NULL);
    CHECK(lance_dataset_version(ds2) == 2);
    CHECK(lance_dataset_count_rows(ds2) == 1500);
    CHECK(lance_dataset_fragment_count(ds2) == 12);
    CHECK(lance_dataset_version(ds) == 1);
    CHECK(lance_dataset_count_rows(ds) == 1000);
    CHECK(lance_dataset_latest_version(ds) == 2);

    /* Open latest, and an old version. */
    LanceDataset* latest = lance_dataset_open(uri, NULL, 0);
    CHECK(latest != NULL && lance_dataset_version(latest) == 2);
    LanceDataset* v1 = lance_dataset_open(uri, NULL, 1);
    CHECK(v1 != NULL && lance_dataset_count_rows(v1) == 1000);
    CHECK(lance_dataset_open(uri, NULL, 99) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);

    /* Overwrite: one version more, the new data only. */
    LanceDataset* ds3 = tu_write(uri, &data, 0, 300, LANCE_WRITE_OVERWRITE, 0);
    CHECK(ds3 != NULL);
    CHECK(lance_dataset_version(ds3) == 3);
    CHECK(lance_dataset_count_rows(ds3) == 300);
    CHECK(lance_dataset_fragment_count(ds3) == 1);

    /* Create where a dataset exists. */
    CHECK(tu_write(uri, &data, 0, 10, LANCE_WRITE_CREATE, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_DATASET_ALREADY_EXISTS);

    lance_dataset_close(ds);
    lance_dataset_close(ds2);
    lance_dataset_close(ds3);
    lance_dataset_close(latest);
    lance_dataset_close(v1);
    lance_dataset_close(NULL);
    tu_remove_tree(dir);
    free(dir);
}

static void test_open_errors(void) {
    CHECK(lance_dataset_open(NULL, NULL, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_open("", NULL, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_open("/nonexistent/lance-c/nothing.lance", NULL, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);
    CHECK(tu_error_mentions("nothing.lance"));

    const char* odd[] = {"key_without_value", NULL};
    CHECK(lance_dataset_open("/tmp/x.lance", odd, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("storage_opts"));

    const char bad_utf8[] = {'/', 't', (char)0xff, (char)0xfe, 0};
    CHECK(lance_dataset_open(bad_utf8, NULL, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("UTF-8"));

    /* NULL handles on every getter. */
    CHECK(lance_dataset_version(NULL) == 0 && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_latest_version(NULL) == 0 && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_count_rows(NULL) == 0 && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_fragment_count(NULL) == 0 && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    uint64_t ids[1];
    CHECK_ERR(lance_dataset_fragment_ids(NULL, ids), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_fragment_row_counts(NULL, ids, 1), LANCE_ERR_INVALID_ARGUMENT);
    struct ArrowSchema s;
    CHECK_ERR(lance_dataset_schema(NULL, &s), LANCE_ERR_INVALID_ARGUMENT);
}

/* Whether this thread's pending error has `code` and a message containing
 * `needle`, read as lance.h says: the code, then the message, which takes
 * the error, so that neither is left afterwards. */
static int takes_error(LanceErrorCode code, const char* needle) {
    LanceErrorCode got = lance_last_error_code();
    int same_code = got == code && lance_last_error_code() == code; /* reading the code leaves it */
    const char* message = lance_last_error_message();
    int named = message != NULL && strstr(message, needle) != NULL;
    if (!same_code || !named)
        fprintf(stderr, "    expected [%d] mentioning '%s', got [%d] %s\n", (int)code, needle, (int)got,
                message ? message : "(none)");
    lance_free_string(message);
    return same_code && named && lance_last_error_code() == LANCE_OK && lance_last_error_message() == NULL;
}

/* What another thread sees of the error channel while the main thread has
 * an error pending. */
typedef struct {
    int saw_nothing;  /* no code, no message on arrival */
    int own_error;    /* its own failure read back as its own */
} OtherThread;

static void* other_thread(void* arg) {
    OtherThread* t = arg;
    t->saw_nothing = lance_last_error_code() == LANCE_OK && lance_last_error_message() == NULL;
    t->own_error = lance_dataset_open("/nonexistent/lance-c/elsewhere.lance", NULL, 0) == NULL &&
                   takes_error(LANCE_ERR_NOT_FOUND, "elsewhere.lance");
    /* Left pending on this thread: the main thread must not see it. */
    CHECK(lance_dataset_open(NULL, NULL, 0) == NULL);
    return NULL;
}

/* The error channel itself (lance.h "Errors and memory"). */
static void test_error_channel(void) {
    char* dir = tu_temp_dir("errors");
    char uri[600];
    snprintf(uri, sizeof uri, "%s/e.lance", dir);
    LanceDataset* ds = tu_write(uri, &data, 0, 200, LANCE_WRITE_CREATE, 100);
    CHECK(ds != NULL);

    /* The documented code, then a message naming the argument; reading the
       message takes the error. */
    CHECK(lance_dataset_open(NULL, NULL, 0) == NULL);
    CHECK(takes_error(LANCE_ERR_INVALID_ARGUMENT, "uri"));
    CHECK(lance_dataset_count_rows(NULL) == 0);
    CHECK(takes_error(LANCE_ERR_INVALID_ARGUMENT, "dataset"));

    /* A success after an error clears it, message and all. */
    CHECK(lance_dataset_open(NULL, NULL, 0) == NULL);
    CHECK(lance_dataset_count_rows(ds) == 200);
    CHECK(lance_last_error_code() == LANCE_OK);
    CHECK(lance_last_error_message() == NULL);

    /* A later failure replaces an error nobody read. */
    CHECK(lance_dataset_open(NULL, NULL, 0) == NULL);
    CHECK(lance_dataset_open("/nonexistent/lance-c/later.lance", NULL, 0) == NULL);
    CHECK(takes_error(LANCE_ERR_NOT_FOUND, "later.lance"));

    /* Errors are per thread: with an error pending here, another thread
       starts with none, and its own failure does not reach this one. */
    CHECK(lance_dataset_open(NULL, NULL, 0) == NULL);
    OtherThread other = {0, 0};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, other_thread, &other) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(other.saw_nothing);
    CHECK(other.own_error);
    CHECK(takes_error(LANCE_ERR_INVALID_ARGUMENT, "uri"));

    lance_dataset_close(ds);
    tu_remove_tree(dir);
    free(dir);
}

static void test_write_errors(void) {
    char* dir = tu_temp_dir("wr");
    char uri[600];
    snprintf(uri, sizeof uri, "%s/w.lance", dir);
    struct ArrowSchema schema;
    struct ArrowArrayStream stream;

    /* Bad mode: the stream is still consumed (released). */
    tu_schema(data.dim, &schema);
    tu_stream(&data, 0, 10, 10, &stream);
    CHECK_ERR(lance_dataset_write(uri, &schema, &stream, 7, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("mode = 7"));
    CHECK(stream.release == NULL);

    /* NULL uri, NULL schema, NULL stream. */
    tu_stream(&data, 0, 10, 10, &stream);
    CHECK_ERR(lance_dataset_write(NULL, &schema, &stream, 0, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(stream.release == NULL);
    tu_stream(&data, 0, 10, 10, &stream);
    CHECK_ERR(lance_dataset_write(uri, NULL, &stream, 0, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(stream.release == NULL);
    CHECK_ERR(lance_dataset_write(uri, &schema, NULL, 0, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    /* An already released stream. */
    CHECK_ERR(lance_dataset_write(uri, &schema, &stream, 0, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);

    /* A schema that differs from the stream's. */
    struct ArrowSchema other;
    tu_schema(data.dim + 1, &other);
    tu_stream(&data, 0, 10, 10, &stream);
    CHECK_ERR(lance_dataset_write(uri, &other, &stream, 0, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("does not match"));
    other.release(&other);

    /* Bad storage version string. */
    LanceWriteParams params = {0};
    params.data_storage_version = "9.9";
    tu_stream(&data, 0, 10, 10, &stream);
    CHECK_ERR(lance_dataset_write_with_params(uri, &schema, &stream, 0, &params, NULL, NULL),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("9.9"));

    /* Valid parameters: storage version, stable row ids, rows per group. */
    params.data_storage_version = "2.1";
    params.enable_stable_row_ids = true;
    params.max_rows_per_group = 64;
    params.max_rows_per_file = 40;
    tu_stream(&data, 0, 100, 30, &stream);
    LanceDataset* ds = NULL;
    CHECK_OK(lance_dataset_write_with_params(uri, &schema, &stream, LANCE_WRITE_CREATE, &params, NULL, &ds));
    CHECK(ds != NULL && lance_dataset_count_rows(ds) == 100 && lance_dataset_fragment_count(ds) == 3);
    CHECK(lance_last_error_code() == LANCE_OK);
    lance_dataset_close(ds);

    /* Append with an incompatible schema. */
    tu_schema(data.dim + 1, &other);
    TuData wide = tu_make_data(10, data.dim + 1, 2, 0.1f, 3);
    tu_stream(&wide, 0, 10, 10, &stream);
    CHECK(lance_dataset_write(uri, &other, &stream, LANCE_WRITE_APPEND, NULL, NULL) == -1);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    other.release(&other);
    tu_free_data(&wide);

    schema.release(&schema);
    tu_remove_tree(dir);
    free(dir);
}

int main(void) {
    data = tu_make_data(2000, 16, 8, 0.5f, 42);
    RUN(test_version_and_errors);
    RUN(test_write_open_fragments);
    RUN(test_open_errors);
    RUN(test_error_channel);
    RUN(test_write_errors);
    tu_free_data(&data);
    return tu_finish("test_dataset");
}
