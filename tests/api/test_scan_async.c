/* The async scan: lance_scanner_scan_async() and lance_scanner_poll_next()
 * give exactly the rows of the blocking scanner, their callbacks keep their
 * thread and count contracts, and lance_scanner_close() stops wakers. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dataset_kit.h"
#include "test_util.h"

#define ROWS 3000
#define CAP 4096

static LanceDataset* ds;
static pthread_t main_thread;

/* Scanner over ids >= 100 in batches of 128: many batches over 4 fragments. */
static LanceScanner* new_scanner(void) {
    const char* cols[] = {"id", "tag", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, "id >= 100");
    CHECK(s != NULL);
    if (s) CHECK_OK(lance_scanner_set_batch_size(s, 128));
    return s;
}

/* The blocking scanner's ids: the reference. */
static int64_t sync_ids(int64_t* out) {
    LanceScanner* s = new_scanner();
    int64_t n = dk_read_ids(s, out, NULL, CAP);
    CHECK(n >= 0);
    lance_scanner_close(s);
    return n;
}

/* ---- a waker that signals a condition variable ---- */

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int wakes;         /* calls so far */
    int off_main;      /* calls that ran on another thread than main */
    atomic_int closed; /* set once lance_scanner_close() returned */
    atomic_int after_close;
    int sleep_ms; /* the waker sleeps this long (close must wait) */
    atomic_int running, finished;
} Wake;

static void wake_init(Wake* w) {
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
}

static void wake_destroy(Wake* w) {
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
}

static void waker(void* ctx) {
    Wake* w = ctx;
    atomic_store(&w->running, 1);
    if (atomic_load(&w->closed)) atomic_store(&w->after_close, 1);
    if (w->sleep_ms) usleep((useconds_t)w->sleep_ms * 1000);
    pthread_mutex_lock(&w->mu);
    w->wakes++;
    if (!pthread_equal(pthread_self(), main_thread)) w->off_main++;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    atomic_store(&w->finished, 1);
}

static void noop_waker(void* ctx) { (void)ctx; }

/* Waits until the waker has been called `count` times (10 s at most). */
static int wait_wakes(Wake* w, int count) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&w->mu);
    int rc = 0;
    while (w->wakes < count && rc == 0) rc = pthread_cond_timedwait(&w->cv, &w->mu, &until);
    int got = w->wakes;
    pthread_mutex_unlock(&w->mu);
    return got >= count;
}

static void test_poll_matches_sync(void) {
    static int64_t want[CAP], got[CAP];
    int64_t n_want = sync_ids(want), n_got = 0;
    CHECK(n_want == ROWS - 100);
    LanceScanner* s = new_scanner();
    Wake w;
    wake_init(&w);
    int pendings = 0, readies = 0;
    for (int guard = 0; guard < 100000; guard++) {
        LanceBatch* b = (LanceBatch*)&w; /* must be overwritten */
        LancePollStatus st = lance_scanner_poll_next(s, waker, &w, &b);
        if (st == LANCE_POLL_PENDING) {
            CHECK(b == NULL);
            pendings++;
            CHECK(wait_wakes(&w, pendings));
        } else if (st == LANCE_POLL_READY) {
            CHECK(b != NULL);
            readies++;
            struct ArrowArray a;
            struct ArrowSchema sc;
            CHECK_OK(lance_batch_to_arrow(b, &a, &sc));
            CHECK(tu_append_column(&a, &sc, "id", got, sizeof(int64_t), CAP, &n_got) == 0);
            a.release(&a);
            sc.release(&sc);
            lance_batch_free(b);
        } else {
            CHECK(st == LANCE_POLL_FINISHED);
            CHECK(b == NULL);
            break;
        }
    }
    CHECK(n_got == n_want);
    CHECK(memcmp(got, want, (size_t)n_want * sizeof(int64_t)) == 0);
    CHECK(readies > 4); /* batches of 128 rows over 4 fragments */
    /* Exactly one wake per PENDING, none on the polling thread. */
    usleep(100 * 1000);
    CHECK(w.wakes == pendings);
    CHECK(w.off_main == pendings);
    /* FINISHED again after the end, without a wake. */
    LanceBatch* b = NULL;
    CHECK(lance_scanner_poll_next(s, waker, &w, &b) == LANCE_POLL_FINISHED);
    CHECK(b == NULL);
    usleep(50 * 1000);
    CHECK(w.wakes == pendings);
    lance_scanner_close(s);
    wake_destroy(&w);
}

/* ---- scan_async ---- */

typedef struct {
    TuLatch calls; /* the callback's calls */
    int32_t status;
    struct ArrowArrayStream* stream;
    LanceErrorCode code; /* the callback thread's error code */
    int off_main;
} Done;

static void on_done(void* ctx, int32_t status, void* result) {
    Done* d = ctx;
    d->code = lance_last_error_code();
    d->status = status;
    d->stream = result;
    d->off_main = !pthread_equal(pthread_self(), main_thread);
    tu_latch_signal(&d->calls);
}

static void done_init(Done* d) {
    memset(d, 0, sizeof *d);
    tu_latch_init(&d->calls);
}

static void test_scan_async_matches_sync(void) {
    static int64_t want[CAP], got[CAP];
    int64_t n_want = sync_ids(want), n_got = 0;
    LanceScanner* s = new_scanner();
    Done d;
    done_init(&d);
    lance_scanner_scan_async(s, on_done, &d);
    /* The scan does not depend on the scanner once the call returned. */
    lance_scanner_close(s);
    CHECK(tu_latch_wait(&d.calls, 1, 30) == 1);
    CHECK(d.status == 0);
    CHECK(d.stream != NULL);
    CHECK(d.off_main);
    if (d.stream) {
        struct ArrowSchema schema;
        CHECK(d.stream->get_schema(d.stream, &schema) == 0);
        CHECK(schema.n_children == 2 && strcmp(schema.children[0]->name, "id") == 0);
        schema.release(&schema);
        for (;;) {
            struct ArrowArray a;
            CHECK(d.stream->get_next(d.stream, &a) == 0);
            if (a.release == NULL) break;
            struct ArrowSchema sc;
            CHECK(d.stream->get_schema(d.stream, &sc) == 0);
            CHECK(tu_append_column(&a, &sc, "id", got, sizeof(int64_t), CAP, &n_got) == 0);
            sc.release(&sc);
            a.release(&a);
        }
        lance_scanner_async_stream_free(d.stream);
    }
    CHECK(n_got == n_want);
    CHECK(memcmp(got, want, (size_t)n_want * sizeof(int64_t)) == 0);
    usleep(100 * 1000);
    CHECK(d.calls.count == 1);

    /* A stream released by hand still goes to async_stream_free. */
    s = new_scanner();
    done_init(&d);
    lance_scanner_scan_async(s, on_done, &d);
    CHECK(tu_latch_wait(&d.calls, 1, 30) == 1 && d.status == 0);
    if (d.stream) {
        d.stream->release(d.stream);
        CHECK(d.stream->release == NULL);
        lance_scanner_async_stream_free(d.stream);
    }
    lance_scanner_close(s);
    lance_scanner_async_stream_free(NULL);
}

/* The callback reads the whole stream on its own thread, calling the library. */
typedef struct {
    Done done;
    int64_t rows;
    uint64_t counted;
} InCallback;

static void read_in_callback(void* ctx, int32_t status, void* result) {
    InCallback* r = ctx;
    struct ArrowArrayStream* stream = result;
    if (status == 0) {
        for (;;) {
            struct ArrowArray a;
            if (stream->get_next(stream, &a) != 0 || a.release == NULL) break;
            r->rows += a.length;
            a.release(&a);
        }
        lance_scanner_async_stream_free(stream);
    }
    r->counted = lance_dataset_count_rows(ds);
    on_done(&r->done, status, NULL);
}

/* A waker that calls the library (not its own scanner). */
static atomic_ulong waker_counted;
static void counting_waker(void* ctx) {
    atomic_store(&waker_counted, lance_dataset_count_rows(ds));
    waker(ctx);
}

static void test_callbacks_call_the_library(void) {
    InCallback r;
    memset(&r, 0, sizeof r);
    done_init(&r.done);
    LanceScanner* s = new_scanner();
    lance_scanner_scan_async(s, read_in_callback, &r);
    CHECK(tu_latch_wait(&r.done.calls, 1, 30) == 1);
    CHECK(r.done.status == 0);
    CHECK(r.rows == ROWS - 100);
    CHECK(r.counted == ROWS);
    lance_scanner_close(s);

    Wake w;
    wake_init(&w);
    s = new_scanner();
    LanceBatch* b = NULL;
    CHECK(lance_scanner_poll_next(s, counting_waker, &w, &b) == LANCE_POLL_PENDING);
    CHECK(wait_wakes(&w, 1));
    CHECK(atomic_load(&waker_counted) == ROWS);
    CHECK(lance_scanner_poll_next(s, counting_waker, &w, &b) == LANCE_POLL_READY);
    lance_batch_free(b);
    lance_scanner_close(s);
    wake_destroy(&w);
}

static void test_scan_async_failures(void) {
    /* An invalid filter: the scanner is refused, and scanning the refused
       (NULL) scanner reports once through the callback, on a library
       thread, with the error state set there. */
    LanceScanner* bad = lance_scanner_new(ds, NULL, "id >>> 3");
    CHECK(bad == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    Done d;
    done_init(&d);
    lance_scanner_scan_async(bad, on_done, &d);
    CHECK(tu_latch_wait(&d.calls, 1, 30) == 1);
    CHECK(d.status == -1);
    CHECK(d.stream == NULL);
    CHECK(d.code == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(d.off_main);
    usleep(200 * 1000);
    CHECK(d.calls.count == 1);

    /* A NULL callback: nothing to call, the caller's thread gets the error. */
    LanceScanner* s = new_scanner();
    lance_scanner_scan_async(s, NULL, NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);
}

static void test_poll_bad_input(void) {
    Wake w;
    wake_init(&w);
    LanceBatch* b = (LanceBatch*)&w;
    CHECK(lance_scanner_poll_next(NULL, waker, &w, &b) == LANCE_POLL_ERROR);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    LanceScanner* s = new_scanner();
    CHECK(lance_scanner_poll_next(s, NULL, &w, &b) == LANCE_POLL_ERROR);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(b == NULL);
    CHECK(lance_scanner_poll_next(s, waker, &w, NULL) == LANCE_POLL_ERROR);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    /* Once polled: settings are frozen and lance_scanner_next refuses. */
    CHECK(lance_scanner_poll_next(s, noop_waker, NULL, &b) == LANCE_POLL_PENDING);
    CHECK_ERR(lance_scanner_set_limit(s, 5), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_next(s, &b), LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);
    /* Once read with lance_scanner_next: polling refuses. */
    s = new_scanner();
    CHECK_OK(lance_scanner_next(s, &b));
    lance_batch_free(b);
    CHECK(lance_scanner_poll_next(s, waker, &w, &b) == LANCE_POLL_ERROR);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);
    usleep(100 * 1000);
    CHECK(w.wakes == 0);
    wake_destroy(&w);
}

/* No waker runs after lance_scanner_close() returns: closing right after a
   PENDING, many times over, races the fetch. */
static void test_close_stops_wakers(void) {
    Wake w;
    wake_init(&w);
    for (int i = 0; i < 50; i++) {
        atomic_store(&w.closed, 0);
        LanceScanner* s = new_scanner();
        LanceBatch* b = NULL;
        CHECK(lance_scanner_poll_next(s, waker, &w, &b) == LANCE_POLL_PENDING);
        if (i % 2) usleep((useconds_t)(i * 100));
        lance_scanner_close(s);
        atomic_store(&w.closed, 1);
    }
    usleep(300 * 1000);
    CHECK(atomic_load(&w.after_close) == 0);
    wake_destroy(&w);

    /* A waker running while close is called: close waits for it. */
    Wake slow;
    wake_init(&slow);
    slow.sleep_ms = 300;
    LanceScanner* s = new_scanner();
    LanceBatch* b = NULL;
    CHECK(lance_scanner_poll_next(s, waker, &slow, &b) == LANCE_POLL_PENDING);
    for (int i = 0; i < 10000 && !atomic_load(&slow.running); i++) usleep(1000);
    CHECK(atomic_load(&slow.running));
    lance_scanner_close(s);
    CHECK(atomic_load(&slow.finished));
    wake_destroy(&slow);
}

int main(void) {
    main_thread = pthread_self();
    char* dir = tu_temp_dir("scan-async");
    char uri[600];
    snprintf(uri, sizeof uri, "%s/ds", dir);
    TuData data = tu_make_data(ROWS, 8, 4, 0.5f, 7);
    ds = tu_write(uri, &data, 0, ROWS, LANCE_WRITE_CREATE, 750);
    CHECK(ds != NULL);
    CHECK(lance_dataset_fragment_count(ds) == 4);
    if (ds) {
        RUN(test_poll_matches_sync);
        RUN(test_scan_async_matches_sync);
        RUN(test_scan_async_failures);
        RUN(test_callbacks_call_the_library);
        RUN(test_poll_bad_input);
        RUN(test_close_stops_wakers);
    }
    lance_dataset_close(ds);
    tu_free_data(&data);
    tu_remove_tree(dir);
    free(dir);
    return tu_finish("test_scan_async");
}
