/* lance.h section "Process budget": lance_process_budget_set()'s refusals,
 * its refusal once the library has started, and a budget in force: 8
 * segment builds at once, each with a cancel token (each would otherwise
 * start a runtime of one thread per core), stay within the stated thread
 * bound, spill under the budget's directory and nowhere else, commit into
 * an index whose k-NN equals brute force, a build cancelled while it
 * writes still stops and leaves nothing, and a one-shot build with a token
 * commits an exact index.  A budget applies once per
 * process, so each case runs in a child process (this program run again
 * with the case's name, TMPDIR its own). */
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure.h"
#include "segment_params.h"
#include "test_util.h"

enum { BUILDS = 8, ROWS_PER_FRAGMENT = 4000, DIM = 32, PARTITIONS = 16, COMPUTE = 2, IO = 2 };

static const char* self;

/* ---- child: what is refused ---- */

static int expect_refused(const LanceProcessBudget* b, LanceErrorCode code, const char* mention) {
    if (lance_process_budget_set(b) != -1) return 1;
    if (lance_last_error_code() != code) return 2;
    return tu_error_mentions(mention) ? 0 : 3;
}

static int child_refusals(const char* dir) {
    char file[700], missing[700];
    snprintf(file, sizeof file, "%s/a-file", dir);
    snprintf(missing, sizeof missing, "%s/no-such-dir", dir);
    FILE* f = fopen(file, "w");
    if (!f) return 10;
    fclose(f);
    if (expect_refused(NULL, LANCE_ERR_INVALID_ARGUMENT, "budget")) return 11;
    LanceProcessBudget b = {4097, 0, NULL};
    if (expect_refused(&b, LANCE_ERR_INVALID_ARGUMENT, "compute_threads")) return 12;
    b = (LanceProcessBudget){0, 100000, NULL};
    if (expect_refused(&b, LANCE_ERR_INVALID_ARGUMENT, "io_threads")) return 13;
    const char* bad_dirs[] = {"relative/dir", missing, file};
    for (int i = 0; i < 3; i++) {
        b = (LanceProcessBudget){0, 0, bad_dirs[i]};
        if (expect_refused(&b, LANCE_ERR_INVALID_ARGUMENT, bad_dirs[i])) return 14 + i;
    }
    const char not_utf8[] = {'/', 't', 'm', 'p', '/', (char)0xff, 0};
    b = (LanceProcessBudget){0, 0, not_utf8};
    if (expect_refused(&b, LANCE_ERR_INVALID_ARGUMENT, "temp_dir")) return 17;
    /* Before the start, a budget may be set and replaced; calls that only
     * handle tokens and errors do not start the library. */
    b = (LanceProcessBudget){3, 3, dir};
    if (lance_process_budget_set(&b) != 0) return 18;
    LanceIndexBuildCancelToken* token = lance_index_build_cancel_token_new();
    lance_index_build_cancel_token_free(token);
    b = (LanceProcessBudget){1, 1, NULL};
    if (lance_process_budget_set(&b) != 0) return 19;
    /* The first call that writes starts it: from then on, refused. */
    char uri[700];
    snprintf(uri, sizeof uri, "%s/started.lance", dir);
    TuData data = tu_make_data(100, 4, 2, 0.5f, 1);
    LanceDataset* ds = tu_write(uri, &data, 0, data.rows, LANCE_WRITE_CREATE, 100);
    tu_free_data(&data);
    if (!ds) return 20;
    lance_dataset_close(ds);
    const char* env = getenv("LANCE_CPU_THREADS");
    if (!env || strcmp(env, "1") != 0) return 21; /* the budget in force was the last one set */
    b = (LanceProcessBudget){2, 2, NULL};
    if (expect_refused(&b, LANCE_ERR_NOT_SUPPORTED, "started")) return 22;
    env = getenv("LANCE_CPU_THREADS");
    return env && strcmp(env, "1") == 0 ? 0 : 23; /* the budget in force stays */
}

/* ---- child: a budget in force ---- */

typedef struct {
    LanceDataset* ds;
    const LanceVectorIndexParams* p;
    const LanceVectorModel* model;
    uint32_t fragment;
    int uuid_seed;
    const char* spill_root; /* the process's directory under the budget's */
    int cancel_at_merge;
    LanceIndexBuildCancelToken* token;
    int spilled; /* the spill directory had entries during the build */
    uint8_t* bytes;
    size_t len;
    int rc, code;
} Build;

static void watch(void* user, int32_t event, const char* stage, uint64_t total, const char* unit, uint64_t completed) {
    (void)total, (void)unit, (void)completed;
    Build* b = user;
    if (tu_dir_entries(b->spill_root) > 0) b->spilled = 1;
    if (b->cancel_at_merge && event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START && strcmp(stage, "merge_partitions") == 0)
        lance_index_build_cancel(b->token);
}

static void* build(void* arg) {
    Build* b = arg;
    uint8_t uuid[16];
    tu_uuid(b->uuid_seed, uuid);
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = &b->fragment;
    o.fragment_count = 1;
    o.index_uuid = uuid;
    b->token = lance_index_build_cancel_token_new();
    LanceIndexSegmentBuilder* builder = vector_segment_builder_new(b->ds, "vec", NULL, b->p, &o, b->model);
    b->rc = -1;
    if (builder && lance_index_segment_builder_set_cancel_token(builder, b->token) == 0 &&
        lance_index_segment_builder_set_progress_callback(builder, watch, b) == 0)
        b->rc = lance_index_segment_builder_execute_uncommitted(builder, &b->bytes, &b->len);
    b->code = lance_last_error_code();
    lance_index_segment_builder_free(builder);
    lance_index_build_cancel_token_free(b->token);
    return NULL;
}

static int child_concurrent(const char* dir, const char* budget_dir) {
    const char* tmpdir = getenv("TMPDIR");
    LanceProcessBudget budget = {COMPUTE, IO, budget_dir};
    if (lance_process_budget_set(&budget) != 0) return 30;
    TuData data = tu_make_data((int64_t)BUILDS * ROWS_PER_FRAGMENT, DIM, PARTITIONS, 0.5f, 7);
    char uri[700];
    snprintf(uri, sizeof uri, "%s/budget.lance", dir);
    LanceDataset* ds = tu_write(uri, &data, 0, data.rows, LANCE_WRITE_CREATE, ROWS_PER_FRAGMENT);
    if (!ds) return 31;
    /* The budget's directory holds the process's; TMPDIR holds nothing. */
    char spill_root[800];
    if (tu_process_dir(budget_dir, spill_root, sizeof spill_root) != 0) return 32;
    if (tu_dir_entries(tmpdir) != 0) return 33;
    const char* cpu = getenv("LANCE_CPU_THREADS");
    const char* rayon = getenv("RAYON_NUM_THREADS");
    if (!cpu || strcmp(cpu, "2") != 0 || !rayon || strcmp(rayon, "2") != 0) return 34;

    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = PARTITIONS;
    LanceVectorModel* model = NULL;
    if (lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model) != 0) return 35;

    /* Host threads: this one, the sampler and the builders. */
    int host_threads = 1 + 1 + BUILDS;
    int library_before = process_thread_count() - 1;
    pthread_t threads[BUILDS];
    Build builds[BUILDS];
    ThreadPeak* peak = thread_peak_start();
    if (!peak) return 36;
    for (int i = 0; i < BUILDS; i++) {
        builds[i] = (Build){ds, &p, model, (uint32_t)i, 100 + i, spill_root, 0, NULL, 0, NULL, 0, -1, 0};
        if (pthread_create(&threads[i], NULL, build, &builds[i]) != 0) return 37;
    }
    for (int i = 0; i < BUILDS; i++) pthread_join(threads[i], NULL);
    int library_max = thread_peak_stop(peak) - host_threads;
    int bound = 2 * COMPUTE + 2 * IO + 1 + BUILDS;
    printf("    library threads: %d before the builds, at most %d during 8 concurrent builds (bound %d)\n",
           library_before, library_max, bound);
    if (library_max > bound) return 38;
    for (int i = 0; i < BUILDS; i++) {
        if (builds[i].rc != 0) {
            fprintf(stderr, "    build %d failed with code %d\n", i, builds[i].code);
            return 39;
        }
        if (!builds[i].spilled) return 40;
    }

    /* The segments make one index whose k-NN is exact with every partition probed. */
    const uint8_t* ptrs[BUILDS];
    size_t lens[BUILDS];
    for (int i = 0; i < BUILDS; i++) ptrs[i] = builds[i].bytes, lens[i] = builds[i].len;
    if (lance_dataset_commit_index_segments_v2(ds, "vec_idx", "vec", ptrs, lens, BUILDS, NULL, NULL) != 0) return 41;
    for (int i = 0; i < BUILDS; i++) lance_free_bytes(builds[i].bytes);
    int mismatches = -1;
    double recall = tu_recall(ds, &data, 20, PARTITIONS, 0, &mismatches);
    if (recall != 1.0 || mismatches != 0) return 42;

    /* Cancelled while writing its partitions, a build still stops and
     * leaves nothing of its UUID. */
    Build cancelled = {ds, &p, model, 0, 200, spill_root, 1, NULL, 0, NULL, 0, -1, 0};
    build(&cancelled);
    if (cancelled.rc != -1 || cancelled.code != LANCE_ERR_CANCELLED) return 43;
    uint8_t uuid[16];
    tu_uuid(200, uuid);
    char seg_dir[900];
    snprintf(seg_dir, sizeof seg_dir,
             "%s/_indices/%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", uri, uuid[0], uuid[1],
             uuid[2], uuid[3], uuid[4], uuid[5], uuid[6], uuid[7], uuid[8], uuid[9], uuid[10], uuid[11], uuid[12],
             uuid[13], uuid[14], uuid[15]);
    struct stat st;
    if (stat(seg_dir, &st) == 0) return 44;

    /* A one-shot build with a cancel token (its commit runs on the calling
     * thread too) commits an exact index. */
    char uri2[700];
    snprintf(uri2, sizeof uri2, "%s/one-shot.lance", dir);
    LanceDataset* ds2 = tu_write(uri2, &data, 0, data.rows, LANCE_WRITE_CREATE, ROWS_PER_FRAGMENT);
    if (!ds2) return 46;
    LanceIndexBuildCancelToken* token = lance_index_build_cancel_token_new();
    Build watched = {0};
    watched.spill_root = spill_root;
    LanceIndexBuildControl control = {watch, &watched, token};
    int rc = lance_dataset_create_vector_index_v2(ds2, "vec", NULL, &p, false,
                                                  &(LanceIndexCreateOptions){.control = &control});
    lance_index_build_cancel_token_free(token);
    if (rc != 0 || !watched.spilled) return 47;
    recall = tu_recall(ds2, &data, 20, PARTITIONS, 0, &mismatches);
    if (recall != 1.0 || mismatches != 0) return 48;
    lance_dataset_close(ds2);

    lance_vector_model_free(model);
    lance_dataset_close(ds);
    tu_free_data(&data);
    /* Nothing spilled remains; TMPDIR was never used. */
    return tu_dir_entries(spill_root) == 0 && tu_dir_entries(tmpdir) == 0 ? 0 : 45;
}

/* ---- parent ---- */

static char* dir;

/* The child `args[0]` in a TMPDIR of its own, which it leaves empty. */
static void check_child_tmpdir(const char* const* args) {
    char tmpdir[700];
    snprintf(tmpdir, sizeof tmpdir, "%s/tmp-%s", dir, args[0]);
    CHECK(mkdir(tmpdir, 0700) == 0);
    tu_check_child(self, args, tmpdir, NULL, 0);
    CHECK(tu_dir_entries(tmpdir) == 0);
}

static void test_refusals(void) {
    const char* args[] = {"refusals", dir, NULL};
    check_child_tmpdir(args);
}

static void test_concurrent_builds_within_budget(void) {
    char budget_dir[700];
    snprintf(budget_dir, sizeof budget_dir, "%s/budget-tmp", dir);
    CHECK(mkdir(budget_dir, 0700) == 0);
    const char* args[] = {"concurrent", dir, budget_dir, NULL};
    check_child_tmpdir(args);
    /* The process's directory went with the process. */
    CHECK(tu_dir_entries(budget_dir) == 0);
}

int main(int argc, char** argv) {
    self = argv[0];
    if (argc >= 3 && strcmp(argv[1], "refusals") == 0) return child_refusals(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "concurrent") == 0) return child_concurrent(argv[2], argv[3]);
    dir = tu_temp_dir("budget");
    RUN(test_refusals);
    RUN(test_concurrent_builds_within_budget);
    tu_remove_tree(dir);
    free(dir);
    return tu_finish("test_budget");
}
