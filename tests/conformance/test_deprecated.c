/* A program written for lance-c 0.4: every function lance.h marks
 * LANCE_DEPRECATED, called as such a program calls it, still does what it
 * did until the release that removes it (CHANGELOG.md lists each with its
 * replacement).  The only program of the tree that calls them: it is
 * compiled with -Wno-deprecated-declarations (tests/conformance/CMakeLists.txt),
 * every other one with -Werror, so a call elsewhere fails the build.
 *
 * Each check is a real outcome: the index a creation committed, the model a
 * trainer made, the statistics bytes of a round, the version a commit made,
 * and the error codes that differ from the replacements' (num_partitions 0,
 * a control given twice). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/lance.h"
#include "progress_kit.h"
#include "segment_kit.h"
#include "test_util.h"

#define ROWS 2000
#define DIM 16
#define FRAGS 4

static TuFixture fixture;
static LanceDataset* ds; /* fixture.ds */

static char* fingerprint_of(const LanceVectorModel* m) {
    const char* fp = m ? lance_vector_model_fingerprint(m) : NULL;
    CHECK(fp != NULL);
    char* copy = fp ? strdup(fp) : NULL;
    lance_free_string(fp);
    return copy;
}

/* The three one-shot creation rungs each commit their index. */
static void test_create_rungs(void) {
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, 4, 0);
    LanceIndexBuildControl none = {0};
    CHECK_OK(lance_dataset_create_vector_index_with_control(ds, "vec", "control_idx", &p, false, &none));
    LanceVectorTrainingOptions target = {0};
    target.target_partition_size = 500; /* 2000 rows: 4 partitions */
    LanceVectorIndexParams derived = sk_params(LANCE_INDEX_IVF_FLAT, 0, 0);
    CHECK_OK(lance_dataset_create_vector_index_with_options(ds, "vec", "options_idx", &derived, &target, false, NULL));
    CHECK_OK(
        lance_dataset_create_scalar_index_with_control(ds, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, false, &none));
    CHECK(lance_dataset_index_count(ds) == 3);
    CHECK(lance_dataset_index_segment_count(ds, "control_idx") == 1);
    CHECK(lance_dataset_index_segment_count(ds, "options_idx") == 1);
    CHECK(lance_dataset_index_segment_count(ds, "id_idx") == 1);
    /* An existing name without replace: the code it always gave. */
    CHECK_ERR(lance_dataset_create_vector_index_with_control(ds, "vec", "control_idx", &p, false, NULL),
              LANCE_ERR_INDEX);
}

/* The trainers of a whole model: the plain ones refuse num_partitions 0 as
 * in 0.4; the options rung is lance_vector_model_train(). */
static void test_model_trainers(void) {
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_PQ, 4, 4);
    LanceVectorModel *plain = NULL, *controlled = NULL, *optioned = NULL, *fresh = NULL;
    CHECK_OK(lance_dataset_train_vector_model(ds, "vec", &p, NULL, 0, &plain));
    PkRecorder* rec = pk_recorder_new();
    LanceIndexBuildControl watching = {pk_record, rec, NULL};
    CHECK_OK(lance_dataset_train_vector_model_with_control(ds, "vec", &p, NULL, 0, &watching, &controlled));
    CHECK(rec->count > 0 && strcmp(rec->events[0].stage, "train_ivf") == 0);
    pk_recorder_free(rec);
    LanceVectorModelInfo info;
    CHECK(lance_vector_model_info(plain, &info) == 0 && info.num_partitions == 4 && info.has_pq_codebook);
    CHECK(lance_vector_model_info(controlled, &info) == 0 && info.num_partitions == 4 && info.has_pq_codebook);

    LanceVectorTrainingOptions seeded = {0};
    seeded.use_seed = 1;
    seeded.seed = 9;
    CHECK_OK(lance_dataset_train_vector_model_with_options(ds, "vec", &p, &seeded, NULL, 0, NULL, &optioned));
    LanceVectorModelTrainOptions o = {0};
    o.training = &seeded;
    CHECK_OK(lance_vector_model_train(ds, "vec", &p, NULL, 0, &o, &fresh));
    char* a = fingerprint_of(optioned);
    char* b = fingerprint_of(fresh);
    CHECK(a && b && strcmp(a, b) == 0);
    free(a);
    free(b);

    LanceVectorIndexParams zero = p;
    zero.num_partitions = 0;
    LanceVectorModel* none = NULL;
    CHECK_ERR(lance_dataset_train_vector_model(ds, "vec", &zero, NULL, 0, &none), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("num_partitions"));
    CHECK_ERR(lance_dataset_train_vector_model_with_control(ds, "vec", &zero, NULL, 0, NULL, &none),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(none == NULL);
    lance_vector_model_free(plain);
    lance_vector_model_free(controlled);
    lance_vector_model_free(optioned);
    lance_vector_model_free(fresh);
}

/* The twin trainers: centroids and a codebook in rows of the full dimension. */
static void test_twin_trainers(void) {
    struct ArrowArray c, book;
    struct ArrowSchema cs, book_s;
    CHECK_OK(lance_dataset_train_ivf_centroids(ds, "vec", 4, LANCE_METRIC_L2, NULL, 0, &c, &cs));
    CHECK(c.length == 4 && strcmp(cs.format, "+w:16") == 0);
    CHECK_OK(lance_dataset_train_pq_codebook(ds, "vec", 4, 8, LANCE_METRIC_L2, &c, &cs, NULL, 0, &book, &book_s));
    CHECK(book.length == 256 && strcmp(book_s.format, "+w:16") == 0);
    struct ArrowArray unused;
    struct ArrowSchema unused_s;
    CHECK_ERR(lance_dataset_train_ivf_centroids(ds, "vec", 4, LANCE_METRIC_L2, NULL, 2, &unused, &unused_s),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("sample_fragment_ids"));
    book.release(&book);
    book_s.release(&book_s);
    c.release(&c);
    cs.release(&cs);
}

/* A worker's round through both rungs and the new entry: one request, one
 * worker, the same statistics bytes; a cancelled token is LANCE_ERR_CANCELLED. */
static void test_worker_rungs(void) {
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, 4, 0);
    LanceVectorTraining* t = NULL;
    LanceVectorTrainingWorker* w = NULL;
    CHECK_OK(lance_vector_training_new("vec", &p, 7, &t));
    CHECK_OK(lance_vector_training_worker_new(ds, NULL, 0, &w));
    uint8_t *req = NULL, *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    size_t req_len = 0, a_len = 0, b_len = 0, c_len = 0, d_len = 0;
    CHECK_OK(lance_vector_training_request(t, &req, &req_len));
    CHECK_OK(lance_vector_training_worker_run(w, req, req_len, &a, &a_len));
    LanceIndexBuildControl none = {0};
    CHECK_OK(lance_vector_training_worker_run_with_control(w, req, req_len, &none, &b, &b_len));
    CHECK_OK(lance_vector_training_worker_answer(w, req, req_len, NULL, &c, &c_len));
    CHECK(a && b && c && a_len == b_len && b_len == c_len && memcmp(a, b, a_len) == 0 && memcmp(b, c, b_len) == 0);
    LanceIndexBuildCancelToken* token = lance_index_build_cancel_token_new();
    CHECK_OK(lance_index_build_cancel(token));
    LanceIndexBuildControl cancelled = {NULL, NULL, token};
    CHECK_ERR(lance_vector_training_worker_run_with_control(w, req, req_len, &cancelled, &d, &d_len),
              LANCE_ERR_CANCELLED);
    CHECK(d == NULL);
    lance_index_build_cancel_token_free(token);
    lance_free_bytes(a);
    lance_free_bytes(b);
    lance_free_bytes(c);
    lance_free_bytes(req);
    lance_vector_training_worker_free(w);
    lance_vector_training_free(t);
}

/* The commit rung: the version it made, an idempotent retry, its own code
 * for an empty set. */
static void test_commit_rung(void) {
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, 4, 0);
    LanceVectorModel* model = sk_train(ds, &p, NULL, 0);
    SkSet s = sk_build_set(ds, &p, model, 2, FRAGS / 2, 100);
    LanceCommitIndexOptions o = {0};
    LanceCommitIndexResult r = {0};
    CHECK_OK(lance_dataset_commit_index_segments_with_options(ds, "committed_idx", "vec", s.ptrs, s.lens,
                                                              (size_t)s.count, &o, &r));
    CHECK(r.version == lance_dataset_version(ds) && !r.already_committed);
    CHECK(lance_dataset_index_segment_count(ds, "committed_idx") == 2);
    LanceCommitIndexResult again = {0};
    CHECK_OK(lance_dataset_commit_index_segments_with_options(ds, "committed_idx", "vec", s.ptrs, s.lens,
                                                              (size_t)s.count, &o, &again));
    CHECK(again.version == r.version && again.already_committed);
    CHECK_ERR(lance_dataset_commit_index_segments_with_options(ds, "empty_idx", "vec", NULL, NULL, 0, NULL, NULL),
              LANCE_ERR_NO_SEGMENTS);
    sk_set_free(&s);
    lance_vector_model_free(model);
}

/* The optimize rung: its own stage first, a cancel before the start, and a
 * control in both places refused. */
static void test_optimize_rung(void) {
    uint64_t version = lance_dataset_version(ds);
    PkRecorder* rec = pk_recorder_new();
    LanceIndexBuildControl watching = {pk_record, rec, NULL};
    CHECK_OK(lance_dataset_optimize_indices_with_control(ds, NULL, &watching));
    CHECK(rec->count > 0 && strcmp(rec->events[0].stage, "optimize_indices") == 0);
    LanceIndexBuildCancelToken* token = lance_index_build_cancel_token_new();
    CHECK_OK(lance_index_build_cancel(token));
    LanceIndexBuildControl cancelled = {NULL, NULL, token};
    uint64_t before = lance_dataset_version(ds);
    CHECK_ERR(lance_dataset_optimize_indices_with_control(ds, NULL, &cancelled), LANCE_ERR_CANCELLED);
    CHECK(lance_dataset_version(ds) == before && before >= version);
    LanceOptimizeIndicesOptions twice = {0};
    twice.control = &watching;
    CHECK_ERR(lance_dataset_optimize_indices_with_control(ds, &twice, &watching), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("options->control"));
    lance_index_build_cancel_token_free(token);
    pk_recorder_free(rec);
}

int main(void) {
    tu_fixture_begin(&fixture, "deprecated", tu_make_data(ROWS, DIM, 8, 1.0f, 50), ROWS / FRAGS);
    ds = fixture.ds;
    if (!ds) return tu_fixture_end(&fixture, "test_deprecated");
    RUN(test_create_rungs);
    RUN(test_model_trainers);
    RUN(test_twin_trainers);
    RUN(test_worker_rungs);
    RUN(test_commit_rung);
    RUN(test_optimize_rung);
    return tu_fixture_end(&fixture, "test_deprecated");
}
