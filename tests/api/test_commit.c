/* Distributed builds, coordinator side (RFC section 12, PR 2, and issue 4):
 * one commit = one version, each refusal with its own code, replace both
 * ways, idempotent retries, stale segments after delete and compaction,
 * appends between build and commit, racing coordinators, the model check,
 * and provenance. */
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include "dataset_kit.h"
#include "knn_kit.h"
#include "segment_kit.h"
#include "test_util.h"

#define ROWS 8000
#define DIM 32
#define FRAGS 16
#define K 10

static TuData data;
static char* dir;

/* IVF_FLAT with 8 partitions: probing all 8 is exact. */
static const LanceVectorIndexParams flat_params = {.index_type = LANCE_INDEX_IVF_FLAT, .num_partitions = 8};

/* The commit of `n` segments' bytes with the options spelled out, replace
 * false (NULL options mean the same). */
static int commit_bytes(LanceDataset* ds, const char* name, const char* column, const uint8_t* const* ptrs,
                        const size_t* lens, size_t n) {
    const LanceCommitIndexOptions keep = {.replace = false};
    return lance_dataset_commit_index_segments_v2(ds, name, column, ptrs, lens, n, &keep, NULL);
}

/* Whether the named index's segment UUIDs are exactly those of seeds[0..n). */
static int index_is(LanceDataset* ds, const char* name, const int* seeds, int n) {
    uint8_t got[FRAGS * 2][16];
    uint64_t count = 0;
    if (lance_dataset_index_segments(ds, name, got[0], FRAGS * 2, &count) != 0) return 0;
    if ((int)count != n) return 0;
    for (int i = 0; i < n; i++) {
        uint8_t want[16];
        tu_uuid(seeds[i], want);
        int found = 0;
        for (uint64_t j = 0; j < count; j++) found |= memcmp(got[j], want, 16) == 0;
        if (!found) return 0;
    }
    return 1;
}

/* A test on what most tests here start from: a fresh dataset of `data`
 * and a flat model trained on all of it. */
typedef void (*TrainedTest)(LanceDataset* ds, LanceVectorModel* model);

/* The URI of the dataset run_trained() made last. */
static char uri[600];

/* Makes the dataset and the model, runs `test` on them, frees them. */
static void run_trained(TrainedTest test) {
    LanceDataset* ds = dk_fresh(dir, NULL, &data, ROWS / FRAGS, uri, sizeof uri);
    LanceVectorModel* model = sk_train(ds, &flat_params, NULL, 0);
    test(ds, model);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
}
#define RUN_TRAINED(test) RUN_CALL(#test, run_trained(test))

/* The dashed text of the UUID tu_uuid(seed). */
static void uuid_text(int seed, char text[37]) {
    uint8_t u[16];
    tu_uuid(seed, u);
    uuid_hex_format_dashed(u, text);
}

static void test_one_commit_one_version(LanceDataset* ds, LanceVectorModel* model) {
    SkSet s = sk_build_set(ds, &flat_params, model, 4, 4, 100);
    CHECK(lance_dataset_latest_version(ds) == 1);

    /* The coordinator's handle is a separate open of the dataset. */
    LanceDataset* coord = lance_dataset_open(uri, NULL, 0);
    LanceCommitIndexResult r = {0};
    CHECK_OK(sk_commit(coord, "vec_idx", &s, NULL, &r));
    CHECK(r.version == 2 && !r.already_committed);
    CHECK(lance_dataset_version(coord) == 2);
    CHECK(lance_dataset_latest_version(coord) == 2);
    int seeds[] = {100, 101, 102, 103};
    CHECK(index_is(coord, "vec_idx", seeds, 4));
    CHECK(lance_dataset_index_count(coord) == 1);
    kk_check_recall_exact(coord, &data, 6, 8);

    /* Options spelled out (replace = false) commit the same way (one version). */
    SkSet t = sk_build_set(ds, &flat_params, model, 4, 4, 110);
    CHECK_OK(commit_bytes(coord, "vec_idx2", "vec", t.ptrs, t.lens, 4));
    CHECK(lance_dataset_version(coord) == 3 && lance_dataset_latest_version(coord) == 3);
    int seeds2[] = {110, 111, 112, 113};
    CHECK(index_is(coord, "vec_idx2", seeds2, 4));
    sk_set_free(&t);

    lance_dataset_close(coord);
    sk_set_free(&s);
}

static void test_set_refusals(LanceDataset* ds, LanceVectorModel* model) {
    LanceVectorIndexParams p = flat_params;
    uint32_t a[] = {0, 1, 2}, b[] = {2, 3}, c[] = {4, 5};
    size_t la, lb, lc;
    uint8_t* sa = tu_vector_segment(ds, &p, model, a, 3, 200, &la);
    uint8_t* sb = tu_vector_segment(ds, &p, model, b, 2, 201, &lb);
    uint8_t* sc = tu_vector_segment(ds, &p, model, c, 2, 202, &lc);
    CHECK(sa && sb && sc);
    char text_a[37], text_b[37];
    uuid_text(200, text_a);
    uuid_text(201, text_b);

    /* Empty set. */
    CHECK_ERR(lance_dataset_commit_index_segments_v2(ds, "i", "vec", NULL, NULL, 0, NULL, NULL), LANCE_ERR_NO_SEGMENTS);
    CHECK_ERR(commit_bytes(ds, "i", "vec", NULL, NULL, 0), LANCE_ERR_NO_SEGMENTS);
    /* The same UUID twice. */
    CHECK_ERR(commit_bytes(ds, "i", "vec", (const uint8_t*[]){sa, sc, sa}, (size_t[]){la, lc, la}, 3),
              LANCE_ERR_DUPLICATE_SEGMENT);
    CHECK(tu_error_mentions(text_a) && tu_error_mentions("segments 0 and 2"));
    /* Overlap on fragment 2. */
    CHECK_ERR(commit_bytes(ds, "i", "vec", (const uint8_t*[]){sa, sb, sc}, (size_t[]){la, lb, lc}, 3),
              LANCE_ERR_OVERLAPPING_SEGMENTS);
    CHECK(tu_error_mentions(text_a) && tu_error_mentions(text_b) && tu_error_mentions("fragments [2]"));
    /* Bad arguments. */
    const uint8_t* ok[] = {sa, sc};
    size_t ok_lens[] = {la, lc};
    CHECK_ERR(commit_bytes(ds, "i", "nope", ok, ok_lens, 2), LANCE_ERR_NOT_FOUND);
    CHECK_ERR(commit_bytes(ds, NULL, "vec", ok, ok_lens, 2), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(commit_bytes(ds, "i", "vec", ok, (size_t[]){la, 3}, 2), LANCE_ERR_INVALID_ARGUMENT);
    /* Nothing was committed by any of them. */
    CHECK(lance_dataset_latest_version(ds) == 1 && lance_dataset_version(ds) == 1);
    /* A good set still commits. */
    CHECK_OK(commit_bytes(ds, "i", "vec", ok, ok_lens, 2));
    CHECK(lance_dataset_version(ds) == 2);

    lance_free_bytes(sa);
    lance_free_bytes(sb);
    lance_free_bytes(sc);
}

static void test_replace(LanceDataset* ds, LanceVectorModel* model) {
    SkSet first = sk_build_set(ds, &flat_params, model, 4, 4, 300); /* fragments 0-15 */
    CHECK_OK(sk_commit(ds, "r_idx", &first, NULL, NULL));
    CHECK(lance_dataset_version(ds) == 2);

    /* A new segment over fragments 0-3 with replace = false: refused. */
    SkSet second = sk_build_set(ds, &flat_params, model, 1, 4, 310);
    LanceCommitIndexOptions o = {0};
    CHECK_ERR(sk_commit(ds, "r_idx", &second, &o, NULL), LANCE_ERR_INDEX);
    CHECK(tu_error_mentions("already exists"));
    CHECK(lance_dataset_latest_version(ds) == 2);
    /* With replace: the segment over 0-3 is replaced, the others kept. */
    o.replace = true;
    LanceCommitIndexResult r = {0};
    CHECK_OK(sk_commit(ds, "r_idx", &second, &o, &r));
    CHECK(r.version == 3 && !r.already_committed);
    int seeds[] = {310, 301, 302, 303};
    CHECK(index_is(ds, "r_idx", seeds, 4));
    kk_check_recall_exact(ds, &data, 6, 8);

    /* A segment over fragments 2-5 covers two existing segments (0-3 and
       4-7) only in part: replacing them would leave 0-1 and 6-7 unindexed. */
    uint32_t straddle[] = {2, 3, 4, 5};
    SkSet third = {0};
    third.count = 1;
    LanceVectorIndexParams p = flat_params;
    third.bytes[0] = tu_vector_segment(ds, &p, model, straddle, 4, 320, &third.lens[0]);
    CHECK(third.bytes[0] != NULL);
    third.ptrs[0] = third.bytes[0];
    CHECK_ERR(sk_commit(ds, "r_idx", &third, &o, NULL), LANCE_ERR_OVERLAPPING_SEGMENTS);
    CHECK(tu_error_mentions("would leave [0, 1] unindexed") || tu_error_mentions("would leave [6, 7] unindexed"));
    CHECK(lance_dataset_latest_version(ds) == 3);
    CHECK(index_is(ds, "r_idx", seeds, 4));
    /* The upstream-form commit refuses it too, with upstream's code. */
    CHECK_ERR(lance_dataset_commit_index_segments(ds, "r_idx", "vec", third.ptrs, third.lens, 1),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("unindexed"));
    CHECK(lance_dataset_latest_version(ds) == 3);

    sk_set_free(&first);
    sk_set_free(&second);
    sk_set_free(&third);
}

static void test_idempotent_retry(LanceDataset* ds, LanceVectorModel* model) {
    SkSet s = sk_build_set(ds, &flat_params, model, 4, 4, 400);
    LanceDataset* stale_handle = lance_dataset_open(uri, NULL, 0);

    LanceCommitIndexOptions o = {0};
    o.job_id = "job-42";
    o.attempt_id = "attempt-1";
    LanceCommitIndexResult r = {0};
    CHECK_OK(sk_commit(ds, "vec_idx", &s, &o, &r));
    CHECK(r.version == 2 && !r.already_committed);

    /* An unrelated commit moves the dataset on. */
    LanceDataset* other = tu_write(uri, &data, 0, 500, LANCE_WRITE_APPEND, 500);
    CHECK(other && lance_dataset_version(other) == 3);
    lance_dataset_close(other);

    /* The retry (the reply was lost): success, the version that committed
       the set, nothing new written, the first attempt's ids kept. */
    o.attempt_id = "attempt-2";
    LanceCommitIndexResult again = {0};
    CHECK_OK(sk_commit(stale_handle, "vec_idx", &s, &o, &again));
    CHECK(again.version == 2 && again.already_committed);
    CHECK(lance_dataset_latest_version(stale_handle) == 3);
    CHECK(lance_dataset_version(stale_handle) == 3);
    /* With replace = false spelled out too: the same retry. */
    CHECK_OK(commit_bytes(ds, "vec_idx", "vec", s.ptrs, s.lens, 4));
    CHECK(lance_dataset_latest_version(ds) == 3);

    const char* text = lance_dataset_index_segments_json(stale_handle);
    JValue* doc = json_parse(text);
    CHECK(doc && doc->type == J_ARRAY && doc->count == 4);
    for (size_t i = 0; doc && i < doc->count; i++) {
        const JValue* job = json_get(doc->items[i], "job_id");
        const JValue* attempt = json_get(doc->items[i], "attempt_id");
        CHECK(job && job->type == J_STRING && strcmp(job->string, "job-42") == 0);
        CHECK(attempt && attempt->type == J_STRING && strcmp(attempt->string, "attempt-1") == 0);
    }
    json_free(doc);
    lance_free_string(text);

    /* Part of the set committed, part new: a duplicate, not a retry. */
    LanceVectorIndexParams p = flat_params;
    uint32_t next[] = {4, 5, 6, 7};
    size_t mixed_len = 0;
    uint8_t* mixed = tu_vector_segment(ds, &p, model, next, 4, 499, &mixed_len);
    CHECK(mixed != NULL);
    CHECK_ERR(
        commit_bytes(ds, "other_idx", "vec", (const uint8_t*[]){s.ptrs[0], mixed}, (size_t[]){s.lens[0], mixed_len}, 2),
        LANCE_ERR_DUPLICATE_SEGMENT);
    CHECK(tu_error_mentions("already committed"));
    /* The same set under another name is not a retry either. */
    CHECK_ERR(sk_commit(ds, "renamed_idx", &s, NULL, NULL), LANCE_ERR_DUPLICATE_SEGMENT);
    CHECK(lance_dataset_latest_version(ds) == 3);

    lance_free_bytes(mixed);
    lance_dataset_close(stale_handle);
    sk_set_free(&s);
}

/* A retry after a compaction remapped the committed segments (into new
 * segments with new UUIDs) is still a retry, not a stale set. */
static void test_retry_after_compaction(LanceDataset* ds, LanceVectorModel* model) {
    SkSet s = sk_build_set(ds, &flat_params, model, 4, 4, 450); /* fragments 0-3, 4-7, 8-11, 12-15 */
    LanceCommitIndexResult r = {0};
    CHECK_OK(sk_commit(ds, "vec_idx", &s, NULL, &r));
    CHECK(r.version == 2);
    LanceCompactionMetrics m = {0};
    LanceCompactionOptions small = {.target_rows_per_fragment = 2000};
    CHECK_OK(lance_dataset_compact_files(ds, &small, &m)); /* each segment's 4 fragments become 1 */
    CHECK(m.fragments_removed == FRAGS && m.fragments_added == 4);
    uint64_t compacted = lance_dataset_version(ds); /* the rewrite, then the index remap */
    CHECK(compacted > 2);
    LanceCommitIndexResult again = {0};
    CHECK_OK(sk_commit(ds, "vec_idx", &s, NULL, &again));
    CHECK(again.already_committed && again.version == 2);
    CHECK(lance_dataset_latest_version(ds) == compacted);
    kk_check_recall_exact(ds, &data, 6, 8);
    sk_set_free(&s);
}

/* Segments built and never committed are reclaimed by the cleanup, and only
 * when unverified files may go. */
static void test_cleanup_of_orphans(LanceDataset* ds, LanceVectorModel* model) {
    SkSet kept = sk_build_set(ds, &flat_params, model, 1, 4, 470);
    CHECK_OK(sk_commit(ds, "vec_idx", &kept, NULL, NULL));
    SkSet orphan = sk_build_set(ds, &flat_params, model, 1, 4, 480); /* never committed */
    char dir_path[800], text[37];
    uuid_text(480, text);
    snprintf(dir_path, sizeof dir_path, "%s/_indices/%s", uri, text);
    struct stat st;
    CHECK(stat(dir_path, &st) == 0);
    LanceCleanupStats c = {0};
    CHECK_OK(lance_dataset_cleanup_old_versions(ds, 0, false, &c));
    CHECK(c.old_versions == 1 && c.index_files_removed == 0); /* version 1 goes; the orphan is young */
    CHECK(stat(dir_path, &st) == 0);
    CHECK_OK(lance_dataset_cleanup_old_versions(ds, 0, true, &c));
    CHECK(stat(dir_path, &st) != 0);
    /* The orphan's index.idx and auxiliary.idx, and the claim of its caller-assigned UUID. */
    CHECK(c.index_files_removed == 3 && c.old_versions == 0);
    /* The committed index is untouched. */
    CHECK(lance_dataset_index_segment_count(ds, "vec_idx") == 1);
    LanceDataset* again = lance_dataset_open(uri, NULL, 0);
    CHECK(again && lance_dataset_version(again) == 2);
    lance_dataset_close(again);
    sk_set_free(&kept);
    sk_set_free(&orphan);
}

static void test_stale_segments(LanceDataset* ds, LanceVectorModel* model) {
    /* Deleting every row of fragment 3 removes it. */
    SkSet s = sk_build_set(ds, &flat_params, model, 4, 4, 500);
    uint64_t deleted = 0;
    CHECK_OK(lance_dataset_delete(ds, "id >= 1500 AND id < 2000", &deleted));
    CHECK(deleted == 500);
    CHECK(lance_dataset_fragment_count(ds) == FRAGS - 1);
    CHECK_ERR(sk_commit(ds, "vec_idx", &s, NULL, NULL), LANCE_ERR_STALE_SEGMENT);
    CHECK(tu_error_mentions("fragments [3]"));
    CHECK(lance_dataset_latest_version(ds) == 2);
    CHECK_ERR(lance_dataset_delete(ds, "no_such_column > 1", NULL), LANCE_ERR_INVALID_ARGUMENT);
    sk_set_free(&s);

    /* Compaction rewrites the small fragments into new ones. */
    LanceDataset* fresh = dk_fresh(dir, NULL, &data, ROWS / FRAGS, NULL, 0);
    s = sk_build_set(fresh, &flat_params, model, 4, 4, 510);
    LanceCompactionMetrics m = {0};
    LanceCompactionOptions larger = {.target_rows_per_fragment = 4000};
    CHECK_OK(lance_dataset_compact_files(fresh, &larger, &m));
    CHECK(m.fragments_removed == FRAGS && m.fragments_added == 2);
    uint64_t compacted = lance_dataset_version(fresh);
    CHECK(compacted > 1 && lance_dataset_latest_version(fresh) == compacted);
    if (lance_dataset_latest_version(fresh) != compacted)
        printf("    compaction: handle at %llu, latest %llu\n", (unsigned long long)compacted,
               (unsigned long long)lance_dataset_latest_version(fresh));
    CHECK_ERR(sk_commit(fresh, "vec_idx", &s, NULL, NULL), LANCE_ERR_STALE_SEGMENT);
    CHECK(tu_error_mentions("compacted"));
    CHECK(lance_dataset_latest_version(fresh) == compacted);
    sk_set_free(&s);
    lance_dataset_close(fresh);
}

static void test_append_between_build_and_commit(LanceDataset* ds, LanceVectorModel* model) {
    SkSet s = sk_build_set(ds, &flat_params, model, 4, 4, 600);
    LanceDataset* appended = tu_write(uri, &data, 0, 1000, LANCE_WRITE_APPEND, 500); /* fragments 16, 17 */
    CHECK(appended && lance_dataset_version(appended) == 2);
    lance_dataset_close(appended);

    LanceCommitIndexResult r = {0};
    CHECK_OK(sk_commit(ds, "vec_idx", &s, NULL, &r)); /* the handle is still at version 1 */
    CHECK(r.version == 3 && lance_dataset_version(ds) == 3);
    CHECK(lance_dataset_count_rows(ds) == ROWS + 1000);
    const char* text = lance_dataset_index_coverage_json(ds, "vec_idx");
    JValue* doc = json_parse(text);
    const JValue* un = doc ? json_get(doc, "unindexed_fragments") : NULL;
    CHECK(un && un->type == J_ARRAY && un->count == 2);
    if (un && un->count == 2) CHECK(un->items[0]->number == 16 && un->items[1]->number == 17);
    const JValue* idx = doc ? json_get(doc, "indexed_fragments") : NULL;
    CHECK(idx && idx->count == FRAGS);
    json_free(doc);
    lance_free_string(text);

    /* The appended fragments get their own segment, committed with replace. */
    LanceVectorIndexParams p = flat_params;
    uint32_t extra[] = {16, 17};
    size_t len = 0;
    uint8_t* bytes = tu_vector_segment(ds, &p, model, extra, 2, 601 + 10, &len);
    CHECK(bytes != NULL);
    const uint8_t* ptrs[] = {bytes};
    LanceCommitIndexOptions o = {0};
    o.replace = true;
    CHECK_OK(lance_dataset_commit_index_segments_v2(ds, "vec_idx", "vec", ptrs, &len, 1, &o, &r));
    CHECK(r.version == 4);
    int seeds[] = {600, 601, 602, 603, 611};
    CHECK(index_is(ds, "vec_idx", seeds, 5));
    lance_free_bytes(bytes);
    sk_set_free(&s);
}

/* Two coordinators racing to commit the sets a and b as "vec_idx", each
 * with a handle of its own on `uri`. */
static void run_race(const SkSet* a, const SkSet* b, SkRacer out[2]) {
    const SkSet* sets[2] = {a, b};
    for (int i = 0; i < 2; i++)
        out[i] = (SkRacer){.ds = lance_dataset_open(uri, NULL, 0), .name = "vec_idx", .set = sets[i]};
    sk_race(out, 2);
    for (int i = 0; i < 2; i++) lance_dataset_close(out[i].ds);
}

/* The round of test_racing_coordinators() being run. */
static int race_round;

/* The same set from both (a retried job dispatched twice). */
static void race_same_set(LanceDataset* ds, LanceVectorModel* model) {
    int base = 700 + race_round * 10;
    SkSet s = sk_build_set(ds, &flat_params, model, 4, 4, base);
    SkRacer r[2];
    run_race(&s, &s, r);
    int wins = 0, idempotent = 0, conflicts = 0;
    for (int i = 0; i < 2; i++) {
        if (r[i].rc == 0 && !r[i].result.already_committed) wins++;
        else if (r[i].rc == 0) idempotent++;
        else if (r[i].code == LANCE_ERR_COMMIT_CONFLICT) conflicts++;
    }
    CHECK(wins == 1 && idempotent + conflicts == 1);
    if (idempotent) CHECK(r[0].result.version == 2 && r[1].result.version == 2);
    CHECK(lance_dataset_latest_version(ds) == 2);
    LanceDataset* now = lance_dataset_open(uri, NULL, 0);
    int seeds[] = {base, base + 1, base + 2, base + 3};
    CHECK(index_is(now, "vec_idx", seeds, 4));
    kk_check_recall_exact(now, &data, 6, 8);
    lance_dataset_close(now);
    sk_set_free(&s);
}

/* Two different sets under one name: exactly one of them becomes the index. */
static void race_two_sets(LanceDataset* ds, LanceVectorModel* model) {
    int base = 800 + race_round * 20;
    SkSet a = sk_build_set(ds, &flat_params, model, 4, 4, base);
    SkSet b = sk_build_set(ds, &flat_params, model, 2, 8, base + 10);
    SkRacer r[2];
    run_race(&a, &b, r);
    int ok = (r[0].rc == 0) + (r[1].rc == 0);
    CHECK(ok == 1);
    for (int i = 0; i < 2; i++)
        if (r[i].rc != 0) CHECK(r[i].code == LANCE_ERR_COMMIT_CONFLICT || r[i].code == LANCE_ERR_INDEX);
    CHECK(lance_dataset_latest_version(ds) == 2);
    LanceDataset* now = lance_dataset_open(uri, NULL, 0);
    int sa[] = {base, base + 1, base + 2, base + 3};
    int sb[] = {base + 10, base + 11};
    CHECK(r[0].rc == 0 ? index_is(now, "vec_idx", sa, 4) : index_is(now, "vec_idx", sb, 2));
    kk_check_recall_exact(now, &data, 6, 8);
    lance_dataset_close(now);
    sk_set_free(&a);
    sk_set_free(&b);
}

static void test_racing_coordinators(void) {
    for (race_round = 0; race_round < 3; race_round++) run_trained(race_same_set);
    for (race_round = 0; race_round < 3; race_round++) run_trained(race_two_sets);
}

static void test_model_check(void) {
    LanceDataset* ds = dk_fresh(dir, NULL, &data, ROWS / FRAGS, NULL, 0);
    uint32_t first_half[] = {0, 1, 2, 3, 4, 5, 6, 7}, second_half[] = {8, 9, 10, 11, 12, 13, 14, 15};
    LanceVectorModel* m1 = sk_train(ds, &flat_params, first_half, 8);
    LanceVectorModel* m2 = sk_train(ds, &flat_params, second_half, 8);
    const char* f1 = lance_vector_model_fingerprint(m1);
    const char* f2 = lance_vector_model_fingerprint(m2);
    CHECK(f1 && f2 && strcmp(f1, f2) != 0);
    LanceVectorIndexParams p = flat_params;
    uint32_t a[] = {0, 1, 2, 3, 4, 5, 6, 7};
    size_t la, lb, lc, ld;
    uint8_t* sa = tu_vector_segment(ds, &p, m1, a, 8, 900, &la);
    uint8_t* sb = tu_vector_segment(ds, &p, m2, second_half, 8, 901, &lb);
    const uint8_t* mixed[] = {sa, sb};
    size_t mixed_lens[] = {la, lb};
    CHECK_ERR(commit_bytes(ds, "m_idx", "vec", mixed, mixed_lens, 2), LANCE_ERR_MODEL_MISMATCH);
    CHECK(tu_error_mentions(f1) && tu_error_mentions(f2));
    /* Locally trained segments record no model. */
    uint8_t* sc = tu_vector_segment(ds, &p, NULL, a, 8, 902, &lc);
    uint8_t* sd = tu_vector_segment(ds, &p, NULL, second_half, 8, 903, &ld);
    CHECK(sc && sd);
    const uint8_t* local[] = {sc, sd};
    size_t local_lens[] = {lc, ld};
    CHECK_ERR(commit_bytes(ds, "l_idx", "vec", local, local_lens, 2), LANCE_ERR_MODEL_MISMATCH);
    CHECK(tu_error_mentions("trained independently"));
    CHECK(lance_dataset_latest_version(ds) == 1);
    /* Allowed explicitly, both commit, and queries still find exact answers. */
    LanceCommitIndexOptions o = {0};
    o.allow_independent_models = true;
    CHECK_OK(lance_dataset_commit_index_segments_v2(ds, "m_idx", "vec", mixed, mixed_lens, 2, &o, NULL));
    CHECK_OK(lance_dataset_commit_index_segments_v2(ds, "l_idx", "vec", local, local_lens, 2, &o, NULL));
    CHECK(lance_dataset_version(ds) == 3);
    kk_check_recall_exact(ds, &data, 6, 8);
    /* A single segment needs no check. */
    lance_free_string(f1);
    lance_free_string(f2);
    lance_free_bytes(sa);
    lance_free_bytes(sb);
    lance_free_bytes(sc);
    lance_free_bytes(sd);
    lance_vector_model_free(m1);
    lance_vector_model_free(m2);
    lance_dataset_close(ds);
}

static void test_scalar_commit_and_provenance(void) {
    LanceDataset* ds = dk_fresh(dir, NULL, &data, ROWS / FRAGS, NULL, 0);
    SkSet set = sk_build_scalar_set(ds, "id", LANCE_SCALAR_BITMAP, 2, 8);
    LanceCommitIndexOptions o = {0};
    o.job_id = "job-7";
    CHECK_ERR(lance_dataset_commit_index_segments_v2(ds, "id_idx", "id", set.ptrs, set.lens, 2, &o, NULL),
              LANCE_ERR_NOT_SUPPORTED);
    o.job_id = NULL;
    LanceCommitIndexResult r = {0};
    CHECK_OK(lance_dataset_commit_index_segments_v2(ds, "id_idx", "id", set.ptrs, set.lens, 2, &o, &r));
    CHECK(r.version == 2);
    /* The scalar index answers a filter exactly. */
    LanceScanner* s = lance_scanner_new(ds, NULL, "id = 4321");
    CHECK(tu_count_scan(s) == 1);
    lance_scanner_close(s);
    sk_set_free(&set);
    lance_dataset_close(ds);
}

static double knn_recall(LanceDataset* ds, uint32_t nprobes, uint32_t refine) {
    double r = tu_recall(ds, &data, 20, nprobes, refine, NULL);
    CHECK(r >= 0);
    return r;
}

/* Loose checks only; the parity figures (50k x 128) come from bench/. */
static void test_segmented_recall(void) {
    LanceDataset* ds4 = dk_fresh(dir, NULL, &data, ROWS / FRAGS, NULL, 0);
    LanceDataset* ds1 = dk_fresh(dir, NULL, &data, ROWS / FRAGS, NULL, 0);
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_PQ;
    p.num_partitions = 8;
    p.num_sub_vectors = 8;
    LanceVectorModel* model = NULL;
    CHECK_OK(lance_vector_model_train(ds4, "vec", &p, NULL, 0, NULL, &model));
    uint8_t* bytes[4];
    size_t lens[4];
    for (int w = 0; w < 4; w++) {
        uint32_t fragment_ids[4];
        for (int i = 0; i < 4; i++) fragment_ids[i] = (uint32_t)(w * 4 + i);
        bytes[w] = tu_vector_segment(ds4, &p, model, fragment_ids, 4, 950 + w, &lens[w]);
        CHECK(bytes[w] != NULL);
    }
    const uint8_t* ptrs[] = {bytes[0], bytes[1], bytes[2], bytes[3]};
    CHECK_OK(commit_bytes(ds4, "seg_idx", "vec", ptrs, lens, 4));
    /* The same model as one segment over everything: a one-shot build with it. */
    size_t len1 = 0;
    uint32_t all[FRAGS];
    for (int i = 0; i < FRAGS; i++) all[i] = (uint32_t)i;
    uint8_t* one = tu_vector_segment(ds1, &p, model, all, FRAGS, 960, &len1);
    const uint8_t* ptr1[] = {one};
    CHECK_OK(commit_bytes(ds1, "one_idx", "vec", ptr1, &len1, 1));
    double r4 = knn_recall(ds4, 4, 0), r1 = knn_recall(ds1, 4, 0), r4_refined = knn_recall(ds4, 8, 10);
    printf("    recall@10, nprobes 4: 4 segments %.3f, 1 segment %.3f; 4 segments, all partitions, refine 10: %.3f\n",
           r4, r1, r4_refined);
    CHECK(r4 - r1 <= 0.02 && r1 - r4 <= 0.02);
    CHECK(r4_refined >= 0.8);
    for (int w = 0; w < 4; w++) lance_free_bytes(bytes[w]);
    lance_free_bytes(one);
    lance_vector_model_free(model);
    lance_dataset_close(ds4);
    lance_dataset_close(ds1);
}

/* Issue 17, items 1 and 2: a segment UUID is never built twice, and a
 * segment whose files are gone is never committed. */
static void test_segment_integrity(LanceDataset* ds, LanceVectorModel* model) {
    LanceVectorIndexParams p = flat_params;
    LanceDataset* pinned = lance_dataset_open(uri, NULL, 1); /* a worker's handle */
    SkSet s = sk_build_set(ds, &flat_params, model, 2, 4, 900);
    CHECK_OK(sk_commit(ds, "vec_idx", &s, NULL, NULL));
    char text[37];
    uuid_text(900, text);

    /* A worker task retried after the commit, same UUID, at the pinned version. */
    uint32_t fragment_ids[] = {0, 1, 2, 3};
    size_t len = 0;
    CHECK(tu_vector_segment(pinned, &p, model, fragment_ids, 4, 900, &len) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_DUPLICATE_SEGMENT);
    CHECK(tu_error_mentions(text) && tu_error_mentions("already committed"));
    kk_check_recall_exact(ds, &data, 6, 8); /* the committed segment's files are intact */

    /* Built but never committed: its directory holds files. */
    uint8_t* orphan = tu_vector_segment(pinned, &p, model, (const uint32_t[]){8, 9}, 2, 910, &len);
    CHECK(orphan != NULL);
    CHECK(tu_vector_segment(pinned, &p, model, (const uint32_t[]){8, 9}, 2, 910, &len) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_DUPLICATE_SEGMENT);
    CHECK(tu_error_mentions("already holds files"));

    /* A cleanup with delete_unverified between build and commit removes the
     * orphan's files: the commit refuses it and the version stays. */
    LanceCleanupStats c = {0};
    CHECK_OK(lance_dataset_cleanup_old_versions(ds, 0, true, &c));
    uint64_t version = lance_dataset_version(ds);
    const uint8_t* ptrs[] = {orphan};
    size_t lens[] = {len};
    CHECK_ERR(commit_bytes(ds, "late", "vec", ptrs, lens, 1), LANCE_ERR_INCOMPLETE_SEGMENT);
    uuid_text(910, text);
    CHECK(tu_error_mentions(text) && tu_error_mentions(".idx is missing"));
    CHECK(lance_dataset_latest_version(ds) == version);

    /* A UUID corrupted in transit points at no files. */
    uint8_t* fresh_bytes = tu_vector_segment(ds, &p, model, (const uint32_t[]){8, 9}, 2, 920, &len);
    CHECK(fresh_bytes != NULL);
    uint8_t u[16];
    tu_uuid(920, u);
    uint8_t* at = NULL;
    for (size_t i = 0; i + 16 <= len && !at; i++)
        if (memcmp(fresh_bytes + i, u, 16) == 0) at = fresh_bytes + i;
    CHECK(at != NULL);
    if (at) at[15] ^= 0x5a;
    ptrs[0] = fresh_bytes;
    lens[0] = len;
    CHECK_ERR(commit_bytes(ds, "late", "vec", ptrs, lens, 1), LANCE_ERR_INCOMPLETE_SEGMENT);
    CHECK(lance_dataset_latest_version(ds) == version);
    if (at) at[15] ^= 0x5a;
    CHECK_OK(commit_bytes(ds, "late", "vec", ptrs, lens, 1));
    CHECK(lance_dataset_version(ds) == version + 1);

    lance_free_bytes(orphan);
    lance_free_bytes(fresh_bytes);
    lance_dataset_close(pinned);
    sk_set_free(&s);
}

/* Issue 17, items 7 and 10: refusals that name what is wrong. */
static void test_type_and_column_refusals(LanceDataset* ds, LanceVectorModel* model) {
    LanceVectorIndexParams flat = flat_params, sq = flat_params;
    sq.index_type = LANCE_INDEX_IVF_SQ;
    size_t la, lb;
    uint8_t* a = tu_vector_segment(ds, &flat, model, (const uint32_t[]){0, 1}, 2, 940, &la);
    uint8_t* b = tu_vector_segment(ds, &sq, model, (const uint32_t[]){2, 3}, 2, 941, &lb);
    CHECK(a && b);
    const uint8_t* ptrs[] = {a, b};
    size_t lens[] = {la, lb};
    CHECK_ERR(commit_bytes(ds, "mixed", "vec", ptrs, lens, 2), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("IVF_FLAT") && tu_error_mentions("IVF_SQ") && tu_error_mentions("different index types"));

    /* An index of that name on another column. */
    CHECK_OK(lance_dataset_create_scalar_index(ds, "id", "taken", LANCE_SCALAR_BTREE, NULL, false));
    LanceCommitIndexOptions o = {0};
    o.replace = true;
    CHECK_ERR(lance_dataset_commit_index_segments_v2(ds, "taken", "vec", ptrs, lens, 1, &o, NULL),
              LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("'id'") && tu_error_mentions("another index name"));
    CHECK(!tu_error_mentions("allow_independent_models"));
    CHECK(lance_dataset_version(ds) == 2);

    /* Core messages carry no source locations or internal wrapper names. */
    CHECK(lance_scanner_new(ds, NULL, "id >>>= 3") == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(!tu_error_mentions(".rs:") && !tu_error_mentions("LanceError("));
    CHECK(lance_scanner_new(ds, NULL, "missing_col > 3") == NULL);
    CHECK(tu_error_mentions("missing_col"));
    CHECK(!tu_error_mentions(".rs:") && !tu_error_mentions("LanceError("));

    lance_free_bytes(a);
    lance_free_bytes(b);
}

/* A builder's checks: a cancel before execute wins over every other check,
 * and an injected model's own PQ shape is what the codebook is checked
 * against (params left zero take it from the model). */
static void test_build_checks(LanceDataset* ds, LanceVectorModel* model) {
    SkSet s = sk_build_set(ds, &flat_params, model, 1, 4, 960);
    CHECK_OK(sk_commit(ds, "vec_idx", &s, NULL, NULL));
    uint8_t used[16];
    tu_uuid(960, used);
    LanceVectorIndexParams flat = flat_params;
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = (const uint32_t[]){8, 9};
    o.fragment_count = 2;
    o.index_uuid = used;
    sk_check_cancelled_first(vector_segment_builder_new(ds, "vec", NULL, &flat, &o, model));

    /* A 4-bit PQ model into params that leave num_bits and num_sub_vectors 0. */
    LanceVectorIndexParams pq = {0};
    pq.index_type = LANCE_INDEX_IVF_PQ;
    pq.num_partitions = 4;
    pq.num_sub_vectors = 8;
    pq.num_bits = 4;
    LanceVectorModel* pq_model = NULL;
    CHECK_OK(lance_vector_model_train(ds, "vec", &pq, NULL, 0, NULL, &pq_model));
    LanceVectorModelInfo info;
    CHECK_OK(lance_vector_model_info(pq_model, &info));
    CHECK(info.num_bits == 4 && info.num_sub_vectors == 8);
    pq.num_sub_vectors = 0;
    pq.num_bits = 0;
    o.index_uuid = NULL;
    size_t len = 0;
    uint8_t* bytes = sk_execute(vector_segment_builder_new(ds, "vec", NULL, &pq, &o, pq_model), &len, true);
    LanceIndexSegmentMetadata* m = NULL;
    CHECK_OK(lance_index_segment_metadata_parse(bytes, len, &m));
    char* fingerprint = lance_vector_model_fingerprint(pq_model);
    const char* recorded = lance_index_segment_metadata_model_fingerprint(m);
    CHECK(fingerprint && recorded && strcmp(recorded, fingerprint) == 0);
    lance_free_string(fingerprint);
    lance_index_segment_metadata_free(m);
    lance_free_bytes(bytes);
    /* Params that set another PQ shape than the model's: the model is refused. */
    pq.num_bits = 8;
    CHECK(vector_segment_builder_new(ds, "vec", NULL, &pq, &o, pq_model) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);

    lance_vector_model_free(pq_model);
    sk_set_free(&s);
}

int main(void) {
    data = tu_make_data(ROWS, DIM, 16, 0.5f, 11);
    dir = tu_temp_dir("commit");
    RUN_TRAINED(test_one_commit_one_version);
    RUN_TRAINED(test_set_refusals);
    RUN_TRAINED(test_replace);
    RUN_TRAINED(test_idempotent_retry);
    RUN_TRAINED(test_retry_after_compaction);
    RUN_TRAINED(test_cleanup_of_orphans);
    RUN_TRAINED(test_stale_segments);
    RUN_TRAINED(test_append_between_build_and_commit);
    RUN(test_racing_coordinators);
    RUN(test_model_check);
    RUN(test_scalar_commit_and_provenance);
    RUN(test_segmented_recall);
    RUN_TRAINED(test_segment_integrity);
    RUN_TRAINED(test_type_and_column_refusals);
    RUN_TRAINED(test_build_checks);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_commit");
}
