#include "progress_kit.h"

#include <string.h>
#include <time.h>

PkRecorder* pk_recorder_new(void) {
    PkRecorder* r = malloc(sizeof *r);
    if (!r) abort();
    pthread_mutex_init(&r->lock, NULL);
    pk_recorder_reset(r);
    return r;
}

void pk_recorder_free(PkRecorder* r) {
    if (!r) return;
    pthread_mutex_destroy(&r->lock);
    free(r);
}

void pk_recorder_reset(PkRecorder* r) {
    /* Everything but the lock, which stays initialized. */
    pthread_mutex_t lock = r->lock;
    memset(r, 0, sizeof *r);
    r->lock = lock;
    r->caller = pthread_self();
}

static int at_cancel_point(const PkRecorder* r, int32_t event, const char* stage) {
    if (r->cancel_at_call && r->calls == r->cancel_at_call) return 1;
    return r->cancel_stage && stage && strcmp(stage, r->cancel_stage) == 0 && event == r->cancel_event;
}

void pk_record(void* recorder, int32_t event, const char* stage, uint64_t total, const char* unit, uint64_t completed) {
    PkRecorder* r = recorder;
    if (atomic_load(&r->returned)) atomic_fetch_add(&r->late_calls, 1);
    if (atomic_fetch_add(&r->in_call, 1) != 0) r->overlapped++;
    pthread_mutex_lock(&r->lock);
    if (!pthread_equal(pthread_self(), r->caller)) r->wrong_thread++;
    if (atomic_load(&r->reached)) r->calls_after_cancel++;
    r->calls++;
    if (r->count < PK_MAX_EVENTS) tu_progress_event_set(&r->events[r->count++], event, stage, total, unit, completed);
    int cancel = !atomic_load(&r->reached) && at_cancel_point(r, event, stage);
    pthread_mutex_unlock(&r->lock);
    if (cancel) {
        if (r->token) lance_index_build_cancel(r->token);
        atomic_store(&r->reached, 1);
        struct timespec pause = {0, 1000 * 1000};
        for (int i = 0; r->await_cancel && !lance_index_build_cancel_requested(r->await_cancel) && i < 20000; i++)
            nanosleep(&pause, NULL);
    }
    atomic_fetch_sub(&r->in_call, 1);
}

void pk_ignore(void* ctx, int32_t event, const char* stage, uint64_t total, const char* unit, uint64_t completed) {
    (void)ctx, (void)event, (void)stage, (void)total, (void)unit, (void)completed;
}

int pk_has_stage(const PkRecorder* r, const char* stage) {
    for (int i = 0; i < r->count; i++)
        if (strcmp(r->events[i].stage, stage) == 0) return 1;
    return 0;
}

uint64_t pk_last_count(const PkRecorder* r, const char* stage) {
    uint64_t count = 0;
    for (int i = 0; i < r->count; i++)
        if (r->events[i].event == LANCE_INDEX_BUILD_PROGRESS_STAGE_PROGRESS && strcmp(r->events[i].stage, stage) == 0)
            count = r->events[i].completed;
    return count;
}

int pk_check_events(const PkRecorder* r, int finished, int min_progress) {
    CHECK(r->calls == r->count && r->count < PK_MAX_EVENTS);
    if (finished) CHECK(r->count > 0);
    int progress = tu_check_progress_events(r->events, r->count, finished);
    CHECK(progress >= min_progress);
    return progress;
}

void pk_check_returned(PkRecorder* r) {
    atomic_store(&r->returned, 1);
    struct timespec pause = {0, 100 * 1000 * 1000};
    nanosleep(&pause, NULL);
    CHECK(atomic_load(&r->late_calls) == 0);
    CHECK(r->wrong_thread == 0);
    CHECK(r->overlapped == 0);
}
