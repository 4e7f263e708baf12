#include "rounds_kit.h"

#include "test_util.h"

RkWorkers rk_workers_new(LanceDataset* ds, const uint32_t* const* fragment_ids, const size_t* n, int count) {
    RkWorkers ws = {0, {0}};
    CHECK(count <= RK_MAX_WORKERS);
    ws.count = count <= RK_MAX_WORKERS ? count : RK_MAX_WORKERS;
    for (int g = 0; g < ws.count; g++) {
        CHECK_OK(lance_vector_training_worker_new(ds, fragment_ids ? fragment_ids[g] : NULL, fragment_ids ? n[g] : 0,
                                                  &ws.w[g]));
    }
    return ws;
}

void rk_workers_free(RkWorkers* ws) {
    for (int g = 0; g < ws->count; g++) lance_vector_training_worker_free(ws->w[g]);
    ws->count = 0;
}

RkStats rk_run_round(LanceVectorTraining* t, LanceVectorTrainingWorker* const* w, int count) {
    RkStats s = {0, {0}, {0}};
    CHECK(count <= RK_MAX_WORKERS);
    s.count = count <= RK_MAX_WORKERS ? count : RK_MAX_WORKERS;
    uint8_t* request = NULL;
    size_t request_len = 0;
    CHECK_OK(lance_vector_training_request(t, &request, &request_len));
    for (int g = 0; g < s.count; g++) {
        CHECK_OK(lance_vector_training_worker_answer(w[g], request, request_len, NULL, &s.bytes[g], &s.lens[g]));
    }
    lance_free_bytes(request);
    return s;
}

int32_t rk_reduce(LanceVectorTraining* t, const RkStats* s) {
    return lance_vector_training_reduce(t, (const uint8_t* const*)s->bytes, s->lens, (size_t)s->count);
}

void rk_stats_free(RkStats* s) {
    for (int g = 0; g < s->count; g++) lance_free_bytes(s->bytes[g]);
    s->count = 0;
}

LanceVectorTrainingInfo rk_info(const LanceVectorTraining* t) {
    LanceVectorTrainingInfo info = {0};
    CHECK_OK(lance_vector_training_info(t, &info));
    return info;
}

void rk_rounds(LanceVectorTraining* t, const RkWorkers* ws, int rounds) {
    for (int r = 0; r < rounds; r++) {
        RkStats s = rk_run_round(t, ws->w, ws->count);
        CHECK_OK(rk_reduce(t, &s));
        rk_stats_free(&s);
    }
}

void rk_finish(LanceVectorTraining* t, const RkWorkers* ws, int max_rounds, RkRoundHook hook, void* hook_ctx) {
    for (int round = 0; round < max_rounds; round++) {
        LanceVectorTrainingPhase phase = rk_info(t).phase;
        if (phase == LANCE_TRAINING_DONE) break;
        RkStats s = rk_run_round(t, ws->w, ws->count);
        if (hook) hook(hook_ctx, t, &s, phase);
        CHECK_OK(rk_reduce(t, &s));
        rk_stats_free(&s);
    }
    CHECK(rk_info(t).phase == LANCE_TRAINING_DONE);
}

LanceVectorModel* rk_train(LanceDataset* ds, const LanceVectorIndexParams* p, uint64_t seed,
                           const uint32_t* const* fragment_ids, const size_t* n, int count, RkRoundHook hook,
                           void* hook_ctx, LanceVectorTrainingInfo* out_info) {
    LanceVectorTraining* t = NULL;
    CHECK_OK(lance_vector_training_new("vec", p, seed, &t));
    RkWorkers ws = rk_workers_new(ds, fragment_ids, n, count);
    rk_finish(t, &ws, 500, hook, hook_ctx);
    LanceVectorModel* m = NULL;
    CHECK_OK(lance_vector_training_model(t, &m));
    if (out_info) CHECK_OK(lance_vector_training_info(t, out_info));
    rk_workers_free(&ws);
    lance_vector_training_free(t);
    return m;
}
