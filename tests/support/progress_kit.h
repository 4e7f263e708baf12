/* The progress kit (names pk_): a LanceIndexBuildProgressCallback that
 * records a build's events (tu_progress_event_set()) with how it was
 * called (thread, overlap, after its build returned), and can cancel the
 * build at a chosen event; and the checks the tests make of the record.
 * C only (C11 atomics). */
#ifndef LANCE_TEST_PROGRESS_KIT_H
#define LANCE_TEST_PROGRESS_KIT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "test_util.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PK_MAX_EVENTS 4096

/* One build's record (large: make it with pk_recorder_new(), or static).
 * Set the cancel fields after pk_recorder_reset(), before the build. */
typedef struct {
    TuProgressEvent events[PK_MAX_EVENTS]; /* the first PK_MAX_EVENTS events */
    int count;                             /* events kept */
    int calls;                             /* every call, kept or not */
    pthread_t caller;                      /* the thread of pk_recorder_reset() */
    int wrong_thread;                      /* calls on another thread */
    atomic_int in_call;
    int overlapped;        /* calls made while another ran */
    atomic_int returned;   /* set by pk_check_returned() */
    atomic_int late_calls; /* calls after that */
    /* Cancel `token` when the stage `cancel_stage` has the event
     * `cancel_event`, or at call number `cancel_at_call` (1 = the first). */
    const char* cancel_stage;
    int32_t cancel_event;
    int cancel_at_call;
    const LanceIndexBuildCancelToken* token;
    /* Another thread cancels: at the cancel point the callback waits (up to
     * 20 s) until that token is cancelled, so the cancel comes before the
     * build returns. */
    const LanceIndexBuildCancelToken* await_cancel;
    atomic_int reached;     /* the cancel point was seen */
    int calls_after_cancel; /* calls after the cancel point */
    pthread_mutex_t lock;
} PkRecorder;

/* A zeroed record owned by the calling thread (free with pk_recorder_free);
 * aborts when out of memory. */
PkRecorder* pk_recorder_new(void);
void pk_recorder_free(PkRecorder* r);

/* Empties `r` (cancel fields too) and makes the calling thread its caller. */
void pk_recorder_reset(PkRecorder* r);

/* The callback: its context is a PkRecorder. */
void pk_record(void* recorder, int32_t event, const char* stage, uint64_t total, const char* unit, uint64_t completed);

/* A callback that does nothing, for where only its presence matters. */
void pk_ignore(void* ctx, int32_t event, const char* stage, uint64_t total, const char* unit, uint64_t completed);

/* Whether some event was of `stage`. */
int pk_has_stage(const PkRecorder* r, const char* stage);

/* The count of the last PROGRESS event of `stage`; 0 when it had none. */
uint64_t pk_last_count(const PkRecorder* r, const char* stage);

/* Every event was kept and they follow lance.h's order
 * (tu_check_progress_events(); `finished`: the build succeeded), with at
 * least `min_progress` PROGRESS events and at least one event when
 * `finished`.  Returns the number of PROGRESS events. */
int pk_check_events(const PkRecorder* r, int finished, int min_progress);

/* The build returned: marks it, waits 100 ms, and checks that no call came
 * after, none on another thread and none overlapping. */
void pk_check_returned(PkRecorder* r);

#ifdef __cplusplus
}
#endif

#endif
