/* The rounds kit (names rk_): distributed training driven in one process,
 * the way a coordinator drives it (lance.h, "Distributed index builds:
 * distributed training"): workers over fragment groups, one round's
 * statistics from every worker, and their reduction. */
#ifndef LANCE_TEST_ROUNDS_KIT_H
#define LANCE_TEST_ROUNDS_KIT_H

#include <stddef.h>
#include <stdint.h>

#include "lance/lance.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RK_MAX_WORKERS 16

/* Workers over fragment groups: worker g reads fragment_ids[g][0..n[g]). */
typedef struct {
    int count;
    LanceVectorTrainingWorker* w[RK_MAX_WORKERS];
} RkWorkers;

/* `count` workers on `ds`; fragment_ids NULL gives each every fragment.  A
 * worker that cannot be made is a failed check (and NULL). */
RkWorkers rk_workers_new(LanceDataset* ds, const uint32_t* const* fragment_ids, const size_t* n, int count);
void rk_workers_free(RkWorkers* ws);

/* Every worker's statistics for one request (produced; rk_stats_free()). */
typedef struct {
    int count;
    uint8_t* bytes[RK_MAX_WORKERS];
    size_t lens[RK_MAX_WORKERS];
} RkStats;

/* One round: the training's request, run by workers w[0..count) (each a
 * check). */
RkStats rk_run_round(LanceVectorTraining* t, LanceVectorTrainingWorker* const* w, int count);

/* lance_vector_training_reduce() of the round's statistics; returns what
 * the library returned. */
int32_t rk_reduce(LanceVectorTraining* t, const RkStats* s);

void rk_stats_free(RkStats* s);

/* lance_vector_training_info() as a check (zeroed when it fails). */
LanceVectorTrainingInfo rk_info(const LanceVectorTraining* t);

/* Runs `rounds` rounds of workers ws->w, each reduced as a check. */
void rk_rounds(LanceVectorTraining* t, const RkWorkers* ws, int rounds);

/* Runs rounds until the training is DONE (at most `max_rounds`), each
 * reduced as a check; `hook` (nullable) sees each round's statistics before
 * its reduce, with the phase the round ran in, and may change them (it
 * frees what it replaces).  That it ends DONE is a check. */
typedef void (*RkRoundHook)(void* ctx, LanceVectorTraining* t, RkStats* s, LanceVectorTrainingPhase phase);
void rk_finish(LanceVectorTraining* t, const RkWorkers* ws, int max_rounds, RkRoundHook hook, void* hook_ctx);

/* A whole training on "vec" of `ds` with `p` and `seed`: rk_workers_new()'s
 * workers, rk_finish() with at most 500 rounds.  The model (free it; NULL
 * is a failed check) and, when `out_info` is not NULL, the final info. */
LanceVectorModel* rk_train(LanceDataset* ds, const LanceVectorIndexParams* p, uint64_t seed,
                           const uint32_t* const* fragment_ids, const size_t* n, int count, RkRoundHook hook,
                           void* hook_ctx, LanceVectorTrainingInfo* out_info);

#ifdef __cplusplus
}
#endif

#endif
