/* Errors and memory (lance.h "Version" and "Errors and memory"): the
 * version has one source, Cargo.toml, which CMake passes here as
 * LANCE_C_CARGO_VERSION, and lance.h's macros (literals, as a C header
 * needs) and lance_version() (the library's CARGO_PKG_VERSION) must both
 * say it; the error channel (code, then message, which takes the error;
 * cleared by a success, replaced by a later failure, per thread); and the
 * free functions' NULL no-ops. */
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

/* A failed check unless `version` (what `what` says) is Cargo.toml's. */
static void check_cargo_version(const char* what, const char* version) {
    int same = version != NULL && strcmp(version, LANCE_C_CARGO_VERSION) == 0;
    CHECK(same);
    if (!same)
        fprintf(stderr, "    %s is %s, Cargo.toml says %s\n", what, version ? version : "NULL", LANCE_C_CARGO_VERSION);
}

/* Cargo.toml's version, lance.h's macros and lance_version() agree. */
static void test_version_agrees(void) {
    char from_parts[64];
    snprintf(from_parts, sizeof from_parts, "%d.%d.%d", LANCE_C_VERSION_MAJOR, LANCE_C_VERSION_MINOR,
             LANCE_C_VERSION_PATCH);
    check_cargo_version("lance.h: LANCE_C_VERSION_STRING", LANCE_C_VERSION_STRING);
    check_cargo_version("lance.h: LANCE_C_VERSION_MAJOR.MINOR.PATCH", from_parts);
    check_cargo_version("lance_version() (a library built from another Cargo.toml?)", lance_version());
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
    int saw_nothing; /* no code, no message on arrival */
    int own_error;   /* its own failure read back as its own */
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

int main(void) {
    data = tu_make_data(2000, 16, 8, 0.5f, 42);
    RUN(test_version_and_errors); /* first: no error yet on this thread */
    RUN(test_version_agrees);
    RUN(test_error_channel);
    tu_free_data(&data);
    return tu_finish("test_errors");
}
