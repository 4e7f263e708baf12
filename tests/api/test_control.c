/* Build progress (RFC E3) and cooperative cancellation (RFC E4): event
 * order and fields (STAGE_COMPLETE carries completed 0, the last
 * STAGE_PROGRESS the count, for builders and LanceIndexBuildControl alike),
 * the threading contract, the refused NULL callback, cancels before, during
 * each stage (from the callback and from another thread), at random
 * moments, and after a build, cleanup of the cancelled segment's files and
 * nothing written after a cancelled build returned, one-shot creation with
 * a control. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "progress_kit.h"
#include "segment_kit.h"
#include "test_util.h"

#define ROWS 20000
#define DIM 32
#define FRAGS 8

static TuData data;
static char* dir;
static char uri[600];
static LanceDataset* ds;

/* ---- recording events and checking them ---- */

static int segment_dir_exists(const uint8_t* u) {
    char dashed[UUID_HEX_DASHED_LEN + 1], path[800];
    uuid_hex_format_dashed(u, dashed);
    snprintf(path, sizeof path, "%s/_indices/%s", uri, dashed);
    struct stat st;
    return stat(path, &st) == 0;
}

/* The output of `before _indices after`, run by the shell. */
static char* on_indices(const char* before, const char* after) {
    char indices[700];
    snprintf(indices, sizeof indices, "%s/_indices", uri);
    TuText cmd = {0};
    tu_text_append(&cmd, before);
    tu_shell_quote(&cmd, indices);
    tu_text_append(&cmd, after);
    char* text = tu_shell_output(cmd.text, NULL);
    free(cmd.text);
    return text ? text : strdup("");
}

static int count_index_dirs(void) {
    char* text = on_indices("ls", " 2>/dev/null | wc -l");
    int n = -1;
    if (sscanf(text, "%d", &n) != 1) n = -1;
    free(text);
    return n;
}

/* The builds' parameters: 16 partitions, 8 sub-vectors, 20 k-means iterations. */
static LanceVectorIndexParams control_params(LanceVectorIndexType type) {
    LanceVectorIndexParams p = sk_params(type, 16, 8);
    p.max_iterations = 20;
    return p;
}

static uint32_t half[] = {0, 1, 2, 3};

/* A vector builder over `half`: with `model` set on it, or trained locally. */
static LanceIndexSegmentBuilder* half_vector_builder(LanceVectorIndexType type, const LanceVectorModel* model,
                                                     const uint8_t* uuid) {
    LanceVectorIndexParams p = control_params(type);
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = half;
    o.fragment_count = 4;
    o.index_uuid = uuid;
    return vector_segment_builder_new(ds, "vec", NULL, &p, &o, model);
}

static LanceIndexSegmentBuilder* scalar_builder(LanceScalarIndexType type, const char* column, const uint8_t* uuid) {
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = half;
    o.fragment_count = 4;
    o.index_uuid = uuid;
    return lance_index_segment_builder_new_scalar(ds, column, NULL, (int32_t)type, NULL, &o);
}

/* Runs a builder with a recorder; returns the execute status. */
static int execute_recorded(LanceIndexSegmentBuilder* b, PkRecorder* r) {
    CHECK(b != NULL);
    if (!b) return -2;
    CHECK_OK(lance_index_segment_builder_set_progress_callback(b, pk_record, r));
    int code = sk_execute_status(b);
    pk_check_returned(r);
    return code;
}

static PkRecorder* rec; /* large: made by main() */

static void test_progress_events(void) {
    /* IVF_PQ and IVF_FLAT, trained locally. */
    LanceVectorIndexType types[] = {LANCE_INDEX_IVF_PQ, LANCE_INDEX_IVF_FLAT};
    for (int t = 0; t < 2; t++) {
        pk_recorder_reset(rec);
        CHECK(execute_recorded(half_vector_builder(types[t], NULL, NULL), rec) == 0);
        pk_check_events(rec, 1, 0);
        CHECK(pk_has_stage(rec, "train_ivf") && pk_has_stage(rec, "shuffle") && pk_has_stage(rec, "merge_partitions"));
        /* The documented totals and units. */
        for (int i = 0; i < rec->count; i++) {
            const TuProgressEvent* e = &rec->events[i];
            if (e->event != LANCE_INDEX_BUILD_PROGRESS_STAGE_START) continue;
            if (!strcmp(e->stage, "train_ivf")) CHECK(e->total == 20 && !strcmp(e->unit, "iterations"));
            if (!strcmp(e->stage, "merge_partitions")) CHECK(e->total == 16 && !strcmp(e->unit, "partitions"));
            if (!strcmp(e->stage, "shuffle")) CHECK(e->total == 10000 && !strcmp(e->unit, "rows"));
        }
        /* The last PROGRESS of a stage has its count (COMPLETE carries 0). */
        CHECK(pk_last_count(rec, "shuffle") == 10000);
        CHECK(pk_last_count(rec, "merge_partitions") == 16);
    }
    /* IVF_PQ with an injected model. */
    LanceVectorIndexParams p = control_params(LANCE_INDEX_IVF_PQ);
    LanceVectorModel* model = NULL;
    CHECK_OK(lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model));
    pk_recorder_reset(rec);
    CHECK(execute_recorded(half_vector_builder(LANCE_INDEX_IVF_PQ, model, NULL), rec) == 0);
    pk_check_events(rec, 1, 0);
    CHECK(pk_has_stage(rec, "merge_partitions"));
    /* The model is given: "train_ivf" starts and completes at once. */
    CHECK(pk_has_stage(rec, "train_ivf") && pk_last_count(rec, "train_ivf") == 0);
    CHECK(pk_last_count(rec, "merge_partitions") == 16);
    lance_vector_model_free(model);

    /* BTREE and BITMAP over a fragment subset. */
    pk_recorder_reset(rec);
    CHECK(execute_recorded(scalar_builder(LANCE_SCALAR_BTREE, "id", NULL), rec) == 0);
    pk_check_events(rec, 1, 0);
    CHECK(pk_has_stage(rec, "load_data"));
    pk_recorder_reset(rec);
    CHECK(execute_recorded(scalar_builder(LANCE_SCALAR_BITMAP, "tag", NULL), rec) == 0);
    pk_check_events(rec, 1, 0);
    CHECK(pk_has_stage(rec, "load_data"));

    /* Print what a reader of the header gets, once. */
    pk_recorder_reset(rec);
    CHECK(execute_recorded(half_vector_builder(LANCE_INDEX_IVF_PQ, NULL, NULL), rec) == 0);
    for (int i = 0; i < rec->count; i++)
        if (rec->events[i].event != LANCE_INDEX_BUILD_PROGRESS_STAGE_PROGRESS)
            printf("    %d %-18s total=%llu unit=%s completed=%llu\n", rec->events[i].event, rec->events[i].stage,
                   (unsigned long long)rec->events[i].total, rec->events[i].unit,
                   (unsigned long long)rec->events[i].completed);

    /* A NULL callback is refused and leaves the builder as it was: one
       without a callback still builds, a valid callback set afterwards
       gets every event, and a later NULL does not clear it. */
    LanceIndexSegmentBuilder* b = half_vector_builder(LANCE_INDEX_IVF_FLAT, NULL, NULL);
    CHECK_ERR(lance_index_segment_builder_set_progress_callback(b, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("callback"));
    CHECK_ERR(lance_index_segment_builder_set_progress_callback(b, NULL, rec), LANCE_ERR_INVALID_ARGUMENT);
    uint8_t* bytes = NULL;
    size_t len = 0;
    CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len));
    CHECK(bytes != NULL && len > 0);
    lance_free_bytes(bytes);
    lance_index_segment_builder_free(b);
    b = half_vector_builder(LANCE_INDEX_IVF_FLAT, NULL, NULL);
    CHECK_ERR(lance_index_segment_builder_set_progress_callback(b, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    pk_recorder_reset(rec);
    CHECK_OK(lance_index_segment_builder_set_progress_callback(b, pk_record, rec));
    CHECK_ERR(lance_index_segment_builder_set_progress_callback(b, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    bytes = NULL;
    CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len));
    pk_check_returned(rec);
    pk_check_events(rec, 1, 0);
    CHECK(pk_has_stage(rec, "train_ivf") && pk_has_stage(rec, "shuffle") && pk_has_stage(rec, "merge_partitions"));
    lance_free_bytes(bytes);

    /* Settings after execution refused. */
    CHECK_ERR(lance_index_segment_builder_set_progress_callback(b, pk_record, rec), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_index_segment_builder_set_progress_callback(b, NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_index_segment_builder_set_cancel_token(b, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_index_segment_builder_set_progress_callback(NULL, pk_record, rec), LANCE_ERR_INVALID_ARGUMENT);
    lance_index_segment_builder_free(b);
    CHECK(lance_dataset_latest_version(ds) == 1);
}

/* After a cancel: CANCELLED, nothing committed, no files, and a fresh
 * builder on the same dataset succeeds. */
static void check_cancelled(int rc, const uint8_t* uuid) {
    CHECK(rc == LANCE_ERR_CANCELLED);
    CHECK(lance_dataset_latest_version(ds) == 1);
    if (uuid) CHECK(!segment_dir_exists(uuid));
}

static void check_fresh_builder_works(void) {
    LanceIndexSegmentBuilder* b = half_vector_builder(LANCE_INDEX_IVF_FLAT, NULL, NULL);
    uint8_t* bytes = NULL;
    size_t len = 0;
    CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len));
    lance_free_bytes(bytes);
    lance_index_segment_builder_free(b);
}

typedef struct {
    PkRecorder* r;
    LanceIndexBuildCancelToken* token;
} Canceller;

/* Waits until the recorder reached its stage, then cancels from this thread. */
static void* cancel_when_reached(void* arg) {
    Canceller* c = arg;
    struct timespec pause = {0, 1000 * 1000};
    for (int i = 0; i < 60000 && !atomic_load(&c->r->reached) && !atomic_load(&c->r->returned); i++)
        nanosleep(&pause, NULL);
    lance_index_build_cancel(c->token);
    return NULL;
}

static void test_cancel_each_stage(void) {
    /* Before execute. */
    LanceIndexBuildCancelToken* token = lance_index_build_cancel_token_new();
    CHECK(token && !lance_index_build_cancel_requested(token));
    CHECK_OK(lance_index_build_cancel(token));
    CHECK_OK(lance_index_build_cancel(token)); /* idempotent */
    CHECK(lance_index_build_cancel_requested(token));
    uint8_t uuid[16];
    tu_uuid(1, uuid);
    LanceIndexSegmentBuilder* b = half_vector_builder(LANCE_INDEX_IVF_PQ, NULL, uuid);
    CHECK_OK(lance_index_segment_builder_set_cancel_token(b, token));
    pk_recorder_reset(rec);
    check_cancelled(execute_recorded(b, rec), uuid);
    CHECK(rec->count == 0);
    lance_index_build_cancel_token_free(token);
    check_fresh_builder_works();

    /* During each stage, from the callback and from another thread. */
    struct {
        const char* stage;
        int event;
    } points[] = {{"train_ivf", 0}, {"train_ivf", 1},        {"train_quantizer", 0},
                  {"shuffle", 0},   {"merge_partitions", 0}, {"merge_partitions", 1}};
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
        for (int from_thread = 0; from_thread < 2; from_thread++) {
            token = lance_index_build_cancel_token_new();
            tu_uuid(10 + (int)i * 2 + from_thread, uuid);
            b = half_vector_builder(LANCE_INDEX_IVF_PQ, NULL, uuid);
            CHECK_OK(lance_index_segment_builder_set_cancel_token(b, token));
            pk_recorder_reset(rec);
            rec->cancel_stage = points[i].stage;
            rec->cancel_event = points[i].event;
            rec->token = from_thread ? NULL : token;
            rec->await_cancel = from_thread ? token : NULL;
            pthread_t t;
            Canceller c = {rec, token};
            if (from_thread) pthread_create(&t, NULL, cancel_when_reached, &c);
            int rc = execute_recorded(b, rec);
            if (from_thread) pthread_join(t, NULL);
            CHECK(atomic_load(&rec->reached));
            check_cancelled(rc, uuid);
            if (rc != LANCE_ERR_CANCELLED)
                printf("    cancel at %s/%d (thread %d) gave %d\n", points[i].stage, points[i].event, from_thread, rc);
            pk_check_events(rec, 0, 0);
            lance_index_build_cancel_token_free(token);
        }
    }
    check_fresh_builder_works();

    /* Scalar builds: BITMAP (its UUID is ours) and BTREE (the core picks
       it).  Their work follows their last checkpoint, so the cancel is
       honoured when the build returns; the files go either way. */
    LanceScalarIndexType scalar_types[] = {LANCE_SCALAR_BITMAP, LANCE_SCALAR_BTREE};
    const char* scalar_columns[] = {"tag", "id"};
    for (int t = 0; t < 2; t++) {
        int dirs = count_index_dirs();
        token = lance_index_build_cancel_token_new();
        tu_uuid(40, uuid);
        b = scalar_builder(scalar_types[t], scalar_columns[t], t == 0 ? uuid : NULL);
        CHECK_OK(lance_index_segment_builder_set_cancel_token(b, token));
        pk_recorder_reset(rec);
        rec->cancel_stage = "load_data";
        rec->cancel_event = 0;
        rec->token = token;
        check_cancelled(execute_recorded(b, rec), t == 0 ? uuid : NULL);
        CHECK(count_index_dirs() == dirs);
        lance_index_build_cancel_token_free(token);
    }
    check_fresh_builder_works();
}

static void test_cancel_after_and_token_lifetime(void) {
    /* After completion: no effect. */
    LanceIndexBuildCancelToken* token = lance_index_build_cancel_token_new();
    uint8_t uuid[16];
    tu_uuid(50, uuid);
    LanceIndexSegmentBuilder* b = half_vector_builder(LANCE_INDEX_IVF_FLAT, NULL, uuid);
    CHECK_OK(lance_index_segment_builder_set_cancel_token(b, token));
    uint8_t* bytes = NULL;
    size_t len = 0;
    CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len));
    CHECK_OK(lance_index_build_cancel(token));
    CHECK(segment_dir_exists(uuid));
    const uint8_t* ptrs[] = {bytes};
    const LanceCommitIndexOptions keep = {.replace = false};
    CHECK_OK(lance_dataset_commit_index_segments_v2(ds, "after_idx", "vec", ptrs, &len, 1, &keep, NULL));
    CHECK(lance_dataset_version(ds) == 2);
    CHECK_OK(lance_dataset_drop_index(ds, "after_idx"));
    lance_free_bytes(bytes);
    lance_index_segment_builder_free(b);
    lance_index_build_cancel_token_free(token);

    /* The caller frees its token while the builder holds it: the build runs. */
    token = lance_index_build_cancel_token_new();
    b = half_vector_builder(LANCE_INDEX_IVF_FLAT, NULL, NULL);
    CHECK_OK(lance_index_segment_builder_set_cancel_token(b, token));
    lance_index_build_cancel_token_free(token);
    CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len));
    lance_free_bytes(bytes);
    lance_index_segment_builder_free(b);
    CHECK_ERR(lance_index_build_cancel(NULL), LANCE_ERR_INVALID_ARGUMENT);
    lance_index_build_cancel_token_free(NULL);
}

/* Every path under _indices, sorted, one a line. */
static char* index_tree(void) { return on_indices("find", " 2>/dev/null | sort"); }

typedef struct {
    LanceIndexBuildCancelToken* token;
    double delay;
} LateCancel;

static void* cancel_after_delay(void* arg) {
    LateCancel* c = arg;
    struct timespec d = {(time_t)c->delay, (long)((c->delay - (double)(time_t)c->delay) * 1e9)};
    nanosleep(&d, NULL);
    lance_index_build_cancel(c->token);
    return NULL;
}

/* Called as a cancelled build returned: joins the cancelling thread and
 * checks that nothing appears under _indices in the next 300 ms.  Returns
 * the listing at the return (the caller frees it). */
static char* after_return(pthread_t canceller) {
    char* at_return = index_tree();
    pthread_join(canceller, NULL);
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    char* later = index_tree();
    CHECK(strcmp(later, at_return) == 0); /* nothing written after the call returned */
    free(later);
    return at_return;
}

/* A cancel from another thread at a random moment of a segment build, in
 * whatever stage it is (the shuffle reports nothing until it ends), 16
 * times trained locally and 16 times with an injected model: the build
 * returns CANCELLED (or succeeds, when the cancel came after it ended),
 * its files are gone, and nothing appears under _indices after the call
 * returned (watched for 300 ms).  Then 12 late cancels of a one-shot
 * creation. */
static void test_cancel_at_random_points(void) {
    LanceVectorIndexParams p = control_params(LANCE_INDEX_IVF_PQ);
    LanceVectorModel* model = NULL;
    CHECK_OK(lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model));
    srand(4242);
    for (int injected = 0; injected < 2; injected++) {
        const LanceVectorModel* m = injected ? model : NULL;
        /* How long one build takes (the fastest of 3), to spread the
           cancels over it. */
        double took = 1e9;
        LanceIndexSegmentBuilder* b = NULL;
        uint8_t* bytes = NULL;
        size_t len = 0;
        for (int r = 0; r < 3; r++) {
            double t0 = tu_now();
            b = half_vector_builder(LANCE_INDEX_IVF_PQ, m, NULL);
            CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len));
            if (tu_now() - t0 < took) took = tu_now() - t0;
            lance_free_bytes(bytes);
            lance_index_segment_builder_free(b);
        }
        int cancelled = 0, finished = 0;
        for (int i = 0; i < 16; i++) {
            uint8_t uuid[16];
            tu_uuid(100 + injected * 20 + i, uuid);
            char* before = index_tree();
            LateCancel c = {lance_index_build_cancel_token_new(), 0.7 * took * rand() / ((double)RAND_MAX + 1)};
            b = half_vector_builder(LANCE_INDEX_IVF_PQ, m, uuid);
            CHECK_OK(lance_index_segment_builder_set_cancel_token(b, c.token));
            pthread_t t;
            pthread_create(&t, NULL, cancel_after_delay, &c);
            bytes = NULL;
            int rc = lance_index_segment_builder_execute_uncommitted(b, &bytes, &len);
            int code = rc == 0 ? 0 : (int)lance_last_error_code();
            char* at_return = after_return(t);
            if (code == 0) {
                finished++;
                CHECK(segment_dir_exists(uuid));
            } else {
                cancelled++;
                CHECK(rc == -1 && code == LANCE_ERR_CANCELLED);
                CHECK(!segment_dir_exists(uuid));
                CHECK(strcmp(at_return, before) == 0); /* and nothing of it is left */
            }
            lance_free_bytes(bytes);
            lance_index_segment_builder_free(b);
            lance_index_build_cancel_token_free(c.token);
            free(before);
            free(at_return);
        }
        printf("    %s: %d builds cancelled, %d finished before the cancel (build %.2f s)\n",
               injected ? "injected model" : "trained locally", cancelled, finished, took);
        CHECK(cancelled >= 8);
    }
    lance_vector_model_free(model);
    check_fresh_builder_works();

    /* One-shot creation, cancelled late (from 30% of its time on, so some
       cancels land in its commit): either it committed and succeeded, or
       it returned CANCELLED with nothing committed and nothing left. */
    double took = 1e9;
    for (int r = 0; r < 2; r++) {
        double t0 = tu_now();
        CHECK_OK(lance_dataset_create_vector_index(ds, "vec", "late_idx", &p, true));
        if (tu_now() - t0 < took) took = tu_now() - t0;
    }
    CHECK_OK(lance_dataset_drop_index(ds, "late_idx"));
    int committed = 0, cancelled = 0;
    for (int i = 0; i < 12; i++) {
        uint64_t version = lance_dataset_version(ds);
        char* before = index_tree();
        LateCancel c = {lance_index_build_cancel_token_new(), took * (0.3 + 0.7 * rand() / ((double)RAND_MAX + 1))};
        LanceIndexBuildControl control = {NULL, NULL, c.token};
        pthread_t t;
        pthread_create(&t, NULL, cancel_after_delay, &c);
        int rc = lance_dataset_create_vector_index_v2(ds, "vec", "late_idx", &p, false,
                                                      &(LanceIndexCreateOptions){.control = &control});
        int code = rc == 0 ? 0 : (int)lance_last_error_code();
        char* at_return = after_return(t);
        if (rc == 0) {
            committed++;
            CHECK(lance_dataset_version(ds) == version + 1 && lance_dataset_latest_version(ds) == version + 1);
            CHECK(lance_dataset_index_count(ds) == 1);
            CHECK_OK(lance_dataset_drop_index(ds, "late_idx"));
        } else {
            cancelled++;
            CHECK(code == LANCE_ERR_CANCELLED);
            CHECK(lance_dataset_version(ds) == version && lance_dataset_latest_version(ds) == version);
            CHECK(lance_dataset_index_count(ds) == 0);
            CHECK(strcmp(at_return, before) == 0);
        }
        lance_index_build_cancel_token_free(c.token);
        free(before);
        free(at_return);
    }
    printf("    one-shot: %d cancelled, %d committed (build %.2f s)\n", cancelled, committed, took);
    CHECK(cancelled >= 3);
}

static void test_one_shot_control(void) {
    uint64_t version = lance_dataset_version(ds);
    int dirs = count_index_dirs();
    LanceVectorIndexParams p = control_params(LANCE_INDEX_IVF_PQ);
    /* Progress. */
    pk_recorder_reset(rec);
    LanceIndexBuildControl control = {pk_record, rec, NULL};
    CHECK_OK(lance_dataset_create_vector_index_v2(ds, "vec", "one_idx", &p, false,
                                                  &(LanceIndexCreateOptions){.control = &control}));
    pk_check_returned(rec);
    pk_check_events(rec, 1, 0);
    CHECK(pk_has_stage(rec, "train_ivf") && pk_has_stage(rec, "merge_partitions"));
    CHECK(pk_last_count(rec, "shuffle") == ROWS && pk_last_count(rec, "merge_partitions") == 16);
    CHECK(lance_dataset_version(ds) == version + 1);
    CHECK_OK(lance_dataset_drop_index(ds, "one_idx"));
    version = lance_dataset_version(ds);

    /* Cancelled when the shuffle starts (the build goes on while the event
       is delivered, and stops at a later checkpoint, before its commit):
       nothing committed, no new directory. */
    dirs = count_index_dirs();
    LanceIndexBuildCancelToken* token = lance_index_build_cancel_token_new();
    pk_recorder_reset(rec);
    rec->cancel_stage = "shuffle";
    rec->cancel_event = 0;
    rec->token = token;
    control.cancel_token = token;
    CHECK_ERR(lance_dataset_create_vector_index_v2(ds, "vec", "one_idx", &p, false,
                                                   &(LanceIndexCreateOptions){.control = &control}),
              LANCE_ERR_CANCELLED);
    pk_check_returned(rec);
    CHECK(lance_dataset_version(ds) == version && lance_dataset_latest_version(ds) == version);
    CHECK(lance_dataset_index_count(ds) == 0);
    CHECK(count_index_dirs() == dirs);
    lance_index_build_cancel_token_free(token);

    /* Scalar progress through a control: the same event rules. */
    pk_recorder_reset(rec);
    LanceIndexBuildControl scalar_progress = {pk_record, rec, NULL};
    CHECK_OK(lance_dataset_create_scalar_index_v2(ds, "tag", "tag_idx", LANCE_SCALAR_BITMAP, NULL, false,
                                                  &(LanceIndexCreateOptions){.control = &scalar_progress}));
    pk_check_returned(rec);
    pk_check_events(rec, 1, 0);
    CHECK(pk_has_stage(rec, "load_data"));
    CHECK(lance_dataset_version(ds) == version + 1);
    CHECK_OK(lance_dataset_drop_index(ds, "tag_idx"));
    version = lance_dataset_version(ds);

    /* Scalar, cancelled before it starts; then NULL control works. */
    token = lance_index_build_cancel_token_new();
    lance_index_build_cancel(token);
    LanceIndexBuildControl c2 = {NULL, NULL, token};
    CHECK_ERR(lance_dataset_create_scalar_index_v2(ds, "id", NULL, LANCE_SCALAR_BTREE, NULL, false,
                                                   &(LanceIndexCreateOptions){.control = &c2}),
              LANCE_ERR_CANCELLED);
    CHECK_OK(lance_dataset_create_scalar_index_v2(ds, "id", NULL, LANCE_SCALAR_BTREE, NULL, false, NULL));
    CHECK(lance_dataset_version(ds) == version + 1);
    lance_index_build_cancel_token_free(token);
}

int main(void) {
    data = tu_make_data(ROWS, DIM, 16, 0.5f, 5);
    dir = tu_temp_dir("progress");
    snprintf(uri, sizeof uri, "%s/p.lance", dir);
    ds = tu_write(uri, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS / FRAGS);
    CHECK(ds != NULL);
    rec = pk_recorder_new();
    RUN(test_progress_events);
    RUN(test_cancel_each_stage);
    RUN(test_cancel_after_and_token_lifetime);
    RUN(test_cancel_at_random_points);
    RUN(test_one_shot_control);
    pk_recorder_free(rec);
    lance_dataset_close(ds);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_control");
}
