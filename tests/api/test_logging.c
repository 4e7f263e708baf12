/* lance.h section "Logging": a warning the Lance core really emits (its
 * deprecation warning for a k-NN search whose projection leaves out
 * `_distance`, lance-14.0.2 src/dataset/scanner.rs, a `log` record) and an
 * event it emits on every open (the `tracing` event of target
 * "lance::dataset_events") reach the callback with their level, target and
 * message; max_level filters; a replaced or cleared callback receives
 * nothing more, and a replacement waits for a call in progress on another
 * thread; a callback that calls back into the library (itself, the version,
 * a dataset open) or blocks deadlocks nothing; scans on several threads
 * deliver their records; bad levels are refused. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "knn_kit.h"
#include "test_util.h"

enum { ROWS = 2000, DIM = 8, FRAGS = 4, K = 5, KEPT = 256, THREADS = 2, SCANS_PER_THREAD = 3 };

static TuFixture fixture;

/* What one callback context received. */
typedef struct {
    int32_t level;
    char target[96];
    char message[512];
} Kept;

typedef struct {
    pthread_mutex_t lock;
    int count;       /* records received */
    int by_level[6]; /* by LanceLogLevel */
    int malformed;   /* a level out of range, or a NULL or empty target or message */
    Kept kept[KEPT]; /* the first KEPT records */
    /* A callback that calls back into the library on each record. */
    int reenter;
    int reentered, set_failures, version_wrong, open_not_refused;
    /* A callback that sleeps in its first record, announcing it. */
    int hold;
    int entered, returned, search_done;
} Log;

static void log_reset(Log* log) {
    memset(log, 0, sizeof *log);
    pthread_mutex_init(&log->lock, NULL);
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void on_record(void* ctx, int32_t level, const char* target, const char* message) {
    Log* log = ctx;
    pthread_mutex_lock(&log->lock);
    if (level < LANCE_LOG_ERROR || level > LANCE_LOG_TRACE || !target || !*target || !message || !*message) {
        log->malformed++;
    } else {
        log->by_level[level]++;
        if (log->count < KEPT) {
            Kept* k = &log->kept[log->count];
            k->level = level;
            snprintf(k->target, sizeof k->target, "%s", target);
            snprintf(k->message, sizeof k->message, "%s", message);
        }
    }
    log->count++;
    int hold = log->hold && !log->entered;
    if (hold) log->entered = 1;
    pthread_mutex_unlock(&log->lock);
    if (hold) {
        sleep_ms(200);
        pthread_mutex_lock(&log->lock);
        log->returned = 1;
        pthread_mutex_unlock(&log->lock);
    }
    if (!log->reenter) return;
    /* Back into the library from inside the callback, on whatever thread
     * the core logged from: the callback may replace itself (here with
     * itself) and read the version; a dataset open is refused. */
    int set_rc = lance_set_log_callback(LANCE_LOG_WARN, on_record, log);
    const char* version = lance_version();
    LanceDataset* ds = lance_dataset_open(fixture.uri, NULL, 0);
    LanceErrorCode open_code = lance_last_error_code();
    lance_free_string(lance_last_error_message());
    pthread_mutex_lock(&log->lock);
    log->reentered++;
    log->set_failures += set_rc != 0;
    log->version_wrong += !version || strcmp(version, LANCE_C_VERSION_STRING) != 0;
    log->open_not_refused += ds != NULL || open_code != LANCE_ERR_INVALID_ARGUMENT;
    pthread_mutex_unlock(&log->lock);
    lance_dataset_close(ds);
}

static int count_of(Log* log) {
    pthread_mutex_lock(&log->lock);
    int n = log->count;
    pthread_mutex_unlock(&log->lock);
    return n;
}

/* Kept records of `level` whose target starts with `target` and whose
 * message contains every one of `needles` (NULL-terminated). */
static int matching(Log* log, int32_t level, const char* target, const char* const* needles) {
    int n = 0;
    pthread_mutex_lock(&log->lock);
    for (int i = 0; i < log->count && i < KEPT; i++) {
        const Kept* k = &log->kept[i];
        int ok = k->level == level && strncmp(k->target, target, strlen(target)) == 0;
        for (const char* const* s = needles; ok && *s; s++) ok = strstr(k->message, *s) != NULL;
        n += ok;
    }
    pthread_mutex_unlock(&log->lock);
    return n;
}

static const char* const DISTANCE_WARNING[] = {"did not include `_distance`", NULL};

/* A k-NN search that projects "id" only: the core warns that it adds
 * `_distance` anyway.  Returns the rows found (K when it worked). */
static int knn(int query_row) {
    int64_t ids[K];
    int found = kk_ids(fixture.ds, fixture.data.vectors + (size_t)query_row * DIM, DIM, K, 0, 0, ids);
    /* The search itself is exact: the query row is its own nearest. */
    if (found == K && ids[0] != query_row) found = -2;
    return found;
}

static void test_bad_input(void) {
    Log log;
    log_reset(&log);
    CHECK_ERR(lance_set_log_callback(-1, on_record, &log), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("max_level = -1"));
    CHECK_ERR(lance_set_log_callback(6, on_record, &log), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("max_level = 6"));
    CHECK_ERR(lance_set_log_callback(INT32_MIN, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_OK(lance_set_log_callback(LANCE_LOG_TRACE, NULL, NULL));
    CHECK_OK(lance_set_log_callback(LANCE_LOG_OFF, NULL, NULL));
    /* Nothing was set: the warning is dropped. */
    CHECK(knn(1) == K);
    CHECK(count_of(&log) == 0);
}

static void test_core_warning(void) {
    Log log;
    log_reset(&log);
    CHECK_OK(lance_set_log_callback(LANCE_LOG_WARN, on_record, &log));
    CHECK(knn(2) == K);
    CHECK_OK(lance_set_log_callback(LANCE_LOG_OFF, NULL, NULL));
    CHECK(matching(&log, LANCE_LOG_WARN, "lance::", DISTANCE_WARNING) >= 1);
    CHECK(log.malformed == 0);
    CHECK(log.by_level[LANCE_LOG_INFO] + log.by_level[LANCE_LOG_DEBUG] + log.by_level[LANCE_LOG_TRACE] == 0);
}

static void test_max_level(void) {
    /* INFO: the core's `tracing` event of the open, its fields as name=value. */
    Log info;
    log_reset(&info);
    CHECK_OK(lance_set_log_callback(LANCE_LOG_INFO, on_record, &info));
    LanceDataset* ds = lance_dataset_open(fixture.uri, NULL, 0);
    CHECK(ds != NULL);
    lance_dataset_close(ds);
    const char* const opened[] = {"event=loading", "logging.lance", "status=success", NULL};
    CHECK(matching(&info, LANCE_LOG_INFO, "lance::dataset_events", opened) >= 1);
    CHECK(info.by_level[LANCE_LOG_DEBUG] + info.by_level[LANCE_LOG_TRACE] == 0);

    /* WARN: the same open delivers no INFO record; the warning still comes. */
    Log warn;
    log_reset(&warn);
    CHECK_OK(lance_set_log_callback(LANCE_LOG_WARN, on_record, &warn));
    ds = lance_dataset_open(fixture.uri, NULL, 0);
    CHECK(ds != NULL);
    lance_dataset_close(ds);
    CHECK(knn(3) == K);
    CHECK(warn.by_level[LANCE_LOG_INFO] == 0);
    CHECK(matching(&warn, LANCE_LOG_WARN, "lance::", DISTANCE_WARNING) >= 1);

    /* ERROR: not even the warning. */
    Log error;
    log_reset(&error);
    CHECK_OK(lance_set_log_callback(LANCE_LOG_ERROR, on_record, &error));
    CHECK(knn(4) == K);
    CHECK_OK(lance_set_log_callback(LANCE_LOG_OFF, NULL, NULL));
    CHECK(error.by_level[LANCE_LOG_WARN] + error.by_level[LANCE_LOG_INFO] == 0);
    CHECK(error.malformed == 0 && info.malformed == 0 && warn.malformed == 0);
}

static void test_replace_and_clear(void) {
    Log first, second;
    log_reset(&first);
    log_reset(&second);
    CHECK_OK(lance_set_log_callback(LANCE_LOG_WARN, on_record, &first));
    CHECK(knn(5) == K);
    int first_count = count_of(&first);
    CHECK(first_count >= 1);

    /* Replaced: the first context receives nothing more. */
    CHECK_OK(lance_set_log_callback(LANCE_LOG_WARN, on_record, &second));
    CHECK(knn(6) == K);
    int second_count = count_of(&second);
    CHECK(second_count >= 1);
    CHECK(count_of(&first) == first_count);

    /* NULL clears; so does LANCE_LOG_OFF with a callback. */
    CHECK_OK(lance_set_log_callback(LANCE_LOG_WARN, NULL, NULL));
    CHECK(knn(7) == K);
    CHECK_OK(lance_set_log_callback(LANCE_LOG_OFF, on_record, &first));
    CHECK(knn(8) == K);
    CHECK(count_of(&first) == first_count && count_of(&second) == second_count);
}

static void test_reentrant_callback(void) {
    Log log;
    log_reset(&log);
    log.reenter = 1;
    CHECK_OK(lance_set_log_callback(LANCE_LOG_WARN, on_record, &log));
    CHECK(knn(9) == K);
    CHECK_OK(lance_set_log_callback(LANCE_LOG_OFF, NULL, NULL));
    CHECK(log.reentered >= 1);
    CHECK(log.set_failures == 0);
    CHECK(log.version_wrong == 0);
    CHECK(log.open_not_refused == 0);
    /* The calls made inside left the library usable here. */
    LanceDataset* ds = lance_dataset_open(fixture.uri, NULL, 0);
    CHECK(ds != NULL);
    lance_dataset_close(ds);
}

static void* scan_thread(void* arg) {
    intptr_t first_row = (intptr_t)arg;
    intptr_t failures = 0;
    for (int i = 0; i < SCANS_PER_THREAD; i++) failures += knn((int)first_row + i) != K;
    return (void*)failures;
}

static void test_threads(void) {
    Log log;
    log_reset(&log);
    CHECK_OK(lance_set_log_callback(LANCE_LOG_WARN, on_record, &log));
    pthread_t threads[THREADS];
    for (intptr_t t = 0; t < THREADS; t++)
        CHECK(pthread_create(&threads[t], NULL, scan_thread, (void*)(100 + t * SCANS_PER_THREAD)) == 0);
    for (int t = 0; t < THREADS; t++) {
        void* failures = NULL;
        CHECK(pthread_join(threads[t], &failures) == 0);
        CHECK(failures == NULL);
    }
    CHECK_OK(lance_set_log_callback(LANCE_LOG_OFF, NULL, NULL));
    /* Each search warns. */
    CHECK(matching(&log, LANCE_LOG_WARN, "lance::", DISTANCE_WARNING) >= THREADS * SCANS_PER_THREAD);
    CHECK(log.malformed == 0);
}

static void* one_search(void* arg) {
    Log* log = arg;
    intptr_t failed = knn(10) != K;
    pthread_mutex_lock(&log->lock);
    log->search_done = 1;
    pthread_mutex_unlock(&log->lock);
    return (void*)failed;
}

/* A callback that blocks (sleeps) in its first record: the search it logs
 * from still ends, and clearing the callback from another thread returns
 * only after that call returned, with no call after it. */
static void test_blocking_callback(void) {
    Log log;
    log_reset(&log);
    log.hold = 1;
    CHECK_OK(lance_set_log_callback(LANCE_LOG_WARN, on_record, &log));
    pthread_t searcher;
    CHECK(pthread_create(&searcher, NULL, one_search, &log) == 0);
    for (;;) {
        pthread_mutex_lock(&log.lock);
        int entered = log.entered, done = log.search_done;
        pthread_mutex_unlock(&log.lock);
        if (entered || done) break;
        sleep_ms(1);
    }
    CHECK(log.entered == 1);
    CHECK_OK(lance_set_log_callback(LANCE_LOG_OFF, NULL, NULL));
    pthread_mutex_lock(&log.lock);
    int returned = log.returned, count = log.count;
    pthread_mutex_unlock(&log.lock);
    CHECK(returned == 1);
    void* failed = NULL;
    CHECK(pthread_join(searcher, &failed) == 0);
    CHECK(failed == NULL);
    CHECK(count_of(&log) == count);
}

int main(void) {
    tu_fixture_begin(&fixture, "logging", tu_make_data(ROWS, DIM, 4, 0.5f, 41), ROWS / FRAGS);
    CHECK(lance_dataset_fragment_count(fixture.ds) == FRAGS);
    RUN(test_bad_input);
    RUN(test_core_warning);
    RUN(test_max_level);
    RUN(test_replace_and_clear);
    RUN(test_reentrant_callback);
    RUN(test_threads);
    RUN(test_blocking_callback);
    return tu_fixture_end(&fixture, "test_logging");
}
