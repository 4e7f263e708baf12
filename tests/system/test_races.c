#define _GNU_SOURCE
/* Two coordinators racing to commit an index of one name (issue 17): each
 * a thread with its own dataset handle, both released at the same moment by
 * a barrier.  Four shapes of segment sets, each with and without replace:
 *
 *   same        both commit {q0,q1,q2,q3}
 *   shared      {q0,q1} against {q1,q2}   (one segment in both sets)
 *   disjoint    {q0,q1} against {q2,q3}   (no fragment in common)
 *   coverage    {h0,h1} against {q0,q1}   (other segments over shared fragments)
 *
 * where q0..q3 cover fragments 0-3, 4-7, 8-11, 12-15 and h0, h1 cover 0-7
 * and 8-15, all built from one shared model.  Every race runs on a fresh
 * copy of one template dataset that holds the uncommitted segments.
 *
 * lance.h promises, per race: a set committed by the other coordinator is
 * answered as already committed (same version), never as a conflict; a
 * loser that got LANCE_ERR_COMMIT_CONFLICT (retryable) gets, when it calls
 * again, what it would have got had it come second.  So every loser is
 * retried once after a conflict and its final answer is exact:
 *
 *                 replace = false               replace = true
 *   same          winner new, other already     the same
 *                 committed, both version 2
 *   shared        other DUPLICATE_SEGMENT       the same (the check precedes replace)
 *   disjoint      other INDEX                   both land (versions 2, 3): the union
 *   coverage      other INDEX                   both land; the later one replaces what
 *                                               it covers: {q0,q1,h1} or {h0,h1}
 *
 * After each race: exactly one index, its segments and covered fragments
 * exactly as above, the latest version exact, and k-NN through it equal to
 * brute force (IVF_FLAT probing every partition).
 *
 * Rounds per case: 10, or LANCE_RACE_ROUNDS (or argv[1]) for a longer run. */
#include <ftw.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include "segment_params.h"
#include "test_util.h"

#define ROWS 3200
#define DIM 16
#define FRAGS 16
#define PARTITIONS 8
#define INDEX "race_idx"

enum { Q0, Q1, Q2, Q3, H0, H1, SEGMENTS };

static TuData data;
static char* dir;
static char template_uri[600];
static uint8_t* seg_bytes[SEGMENTS];
static size_t seg_lens[SEGMENTS];
static uint8_t seg_uuids[SEGMENTS][16];

/* Fragments [first, first + count) of each segment. */
static const int seg_first[SEGMENTS] = {0, 4, 8, 12, 0, 8};
static const int seg_count[SEGMENTS] = {4, 4, 4, 4, 8, 8};

/* ---- the template: a dataset and every segment, uncommitted ---- */

static void build_template(void) {
    snprintf(template_uri, sizeof template_uri, "%s/template.lance", dir);
    LanceDataset* ds = tu_write(template_uri, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS / FRAGS);
    CHECK(ds != NULL);
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = PARTITIONS;
    LanceVectorModel* model = NULL;
    CHECK_OK(lance_dataset_train_vector_model(ds, "vec", &p, NULL, 0, &model));
    for (int s = 0; s < SEGMENTS; s++) {
        uint32_t frags[FRAGS];
        for (int i = 0; i < seg_count[s]; i++) frags[i] = (uint32_t)(seg_first[s] + i);
        CHECK(uuid_random_v4(seg_uuids[s]) == 0);
        LanceIndexSegmentBuildOptions o = {0};
        o.fragment_ids = frags;
        o.fragment_count = (size_t)seg_count[s];
        o.index_uuid = seg_uuids[s];
        LanceIndexSegmentBuilder* b = vector_segment_builder_new(ds, "vec", NULL, &p, &o, model);
        CHECK(b != NULL);
        CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &seg_bytes[s], &seg_lens[s]));
        lance_index_segment_builder_free(b);
    }
    CHECK(lance_dataset_latest_version(ds) == 1);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
}

/* Copies the template's directory tree to `to`. */
static const char* copy_to;

static int copy_entry(const char* path, const struct stat* st, int flag, struct FTW* ftw) {
    (void)ftw;
    char target[1200];
    snprintf(target, sizeof target, "%s%s", copy_to, path + strlen(template_uri));
    if (flag == FTW_D) return mkdir(target, 0755) == 0 ? 0 : -1;
    if (flag != FTW_F) return -1;
    size_t len = 0;
    unsigned char* bytes = read_whole_file(path, &len);
    int rc = bytes && write_whole_file(target, bytes, len) == 0 && (size_t)st->st_size == len ? 0 : -1;
    free(bytes);
    return rc;
}

static int copy_template(const char* to) {
    copy_to = to;
    return nftw(template_uri, copy_entry, 16, FTW_PHYS);
}

/* ---- one race ---- */

typedef struct {
    const int* segments; /* indices into seg_* */
    int count;
} Set;

typedef struct {
    const char* uri;
    Set set;
    bool replace;
    pthread_barrier_t* barrier;
    LanceDataset* ds;
    int rc;
    LanceErrorCode code;
    LanceCommitIndexResult result;
} Racer;

static int commit_set(Racer* r) {
    const uint8_t* ptrs[SEGMENTS];
    size_t lens[SEGMENTS];
    for (int i = 0; i < r->set.count; i++) {
        ptrs[i] = seg_bytes[r->set.segments[i]];
        lens[i] = seg_lens[r->set.segments[i]];
    }
    LanceCommitIndexOptions o = {0};
    o.replace = r->replace;
    memset(&r->result, 0, sizeof r->result);
    r->rc = lance_dataset_commit_index_segments_with_options(r->ds, INDEX, "vec", ptrs, lens, (size_t)r->set.count,
                                                             &o, &r->result);
    r->code = lance_last_error_code();
    return r->rc;
}

static void* race(void* arg) {
    Racer* r = arg;
    pthread_barrier_wait(r->barrier);
    if (r->ds) commit_set(r);
    return NULL;
}

/* Whether the index's segments are exactly `want` (as a set). */
static int segments_are(LanceDataset* ds, const int* want, int n) {
    uint8_t got[SEGMENTS * 2][16];
    uint64_t count = 0;
    if (lance_dataset_index_segments(ds, INDEX, got[0], SEGMENTS * 2, &count) != 0 || (int)count != n) return 0;
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (uint64_t j = 0; j < count; j++) found |= memcmp(got[j], seg_uuids[want[i]], 16) == 0;
        if (!found) return 0;
    }
    return 1;
}

/* The fragments the index covers, as a bit mask; -1 on error.  Also checks
 * the coverage lists every fragment exactly once and nothing stale. */
static long covered_mask(LanceDataset* ds) {
    const char* text = lance_dataset_index_coverage_json(ds, INDEX);
    JValue* doc = text ? json_parse(text) : NULL;
    lance_free_string(text);
    const JValue* indexed = json_get(doc, "indexed_fragments");
    const JValue* unindexed = json_get(doc, "unindexed_fragments");
    const JValue* stale = json_get(doc, "stale_fragments");
    long mask = -1;
    if (indexed && unindexed && stale && stale->count == 0 && indexed->count + unindexed->count == FRAGS) {
        mask = 0;
        for (size_t i = 0; i < indexed->count; i++) mask |= 1L << (int)indexed->items[i]->number;
    }
    json_free(doc);
    return mask;
}

static long mask_of(const int* segments, int n) {
    long mask = 0;
    for (int i = 0; i < n; i++)
        for (int f = 0; f < seg_count[segments[i]]; f++) mask |= 1L << (seg_first[segments[i]] + f);
    return mask;
}

/* The final state: one index, these segments, their coverage, this latest
 * version, and exact k-NN. */
static void check_final(const char* uri, const int* segments, int n, uint64_t latest) {
    LanceDataset* ds = lance_dataset_open(uri, NULL, 0);
    CHECK(ds != NULL);
    if (!ds) return;
    CHECK(lance_dataset_version(ds) == latest);
    CHECK(lance_dataset_index_count(ds) == 1);
    CHECK(segments_are(ds, segments, n));
    CHECK(covered_mask(ds) == mask_of(segments, n));
    int mismatches = -1;
    CHECK(tu_recall(ds, &data, 4, PARTITIONS, 0, &mismatches) == 1.0 && mismatches == 0);
    lance_dataset_close(ds);
}

typedef enum { SAME, SHARED, DISJOINT, COVERAGE, SHAPES } Shape;
static const char* shape_names[SHAPES] = {"same", "shared", "disjoint", "coverage"};

typedef struct {
    int races, first_wins, conflicts, retried;
} Tally;

static Tally tallies[SHAPES][2];
static int race_seq;

static void run_case(Shape shape, bool replace) {
    static const int all[] = {Q0, Q1, Q2, Q3}, q01[] = {Q0, Q1}, q12[] = {Q1, Q2}, q23[] = {Q2, Q3},
                     halves[] = {H0, H1};
    Set a, b;
    switch (shape) {
    case SAME: a = (Set){all, 4}, b = (Set){all, 4}; break;
    case SHARED: a = (Set){q01, 2}, b = (Set){q12, 2}; break;
    case DISJOINT: a = (Set){q01, 2}, b = (Set){q23, 2}; break;
    default: a = (Set){halves, 2}, b = (Set){q01, 2}; break;
    }
    char uri[700];
    snprintf(uri, sizeof uri, "%s/race%d.lance", dir, race_seq++);
    CHECK(copy_template(uri) == 0);

    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    Racer r[2] = {{uri, a, replace, &barrier, NULL, 0, LANCE_OK, {0, false}},
                  {uri, b, replace, &barrier, NULL, 0, LANCE_OK, {0, false}}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) {
        r[i].ds = lance_dataset_open(uri, NULL, 0);
        CHECK(r[i].ds != NULL);
    }
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, race, &r[i]);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&barrier);

    Tally* t = &tallies[shape][replace];
    t->races++;
    /* The winner: the one that committed version 2 itself. */
    int won[2];
    for (int i = 0; i < 2; i++) won[i] = r[i].rc == 0 && !r[i].result.already_committed && r[i].result.version == 2;
    CHECK(won[0] + won[1] == 1);
    int w = won[0] ? 0 : 1, l = 1 - w;
    t->first_wins += w == 0;
    /* The same set is never a conflict: the header promises the answer. */
    if (shape != SAME && r[l].rc != 0 && r[l].code == LANCE_ERR_COMMIT_CONFLICT) {
        t->conflicts++;
        t->retried++;
        commit_set(&r[l]);
    }
    Racer* loser = &r[l];
    uint64_t latest = lance_dataset_latest_version(r[w].ds);
    switch (shape) {
    case SAME:
        CHECK(loser->rc == 0 && loser->result.already_committed && loser->result.version == 2);
        check_final(uri, all, 4, 2);
        CHECK(latest == 2);
        break;
    case SHARED:
        CHECK(loser->rc == -1 && loser->code == LANCE_ERR_DUPLICATE_SEGMENT);
        check_final(uri, r[w].set.segments, r[w].set.count, 2);
        CHECK(latest == 2);
        break;
    case DISJOINT:
    case COVERAGE:
        if (!replace) {
            CHECK(loser->rc == -1 && loser->code == LANCE_ERR_INDEX);
            check_final(uri, r[w].set.segments, r[w].set.count, 2);
            CHECK(latest == 2);
        } else {
            CHECK(loser->rc == 0 && !loser->result.already_committed && loser->result.version == 3);
            /* The later commit (the loser's) replaced what it covers. */
            static const int union4[] = {Q0, Q1, Q2, Q3}, q01h1[] = {Q0, Q1, H1};
            if (shape == DISJOINT) check_final(uri, union4, 4, 3);
            else if (l == 1) check_final(uri, q01h1, 3, 3); /* {h0,h1} then {q0,q1} */
            else check_final(uri, halves, 2, 3);             /* {q0,q1} then {h0,h1} */
        }
        break;
    default:
        break;
    }
    for (int i = 0; i < 2; i++) lance_dataset_close(r[i].ds);
    tu_remove_tree(uri);
}

static int rounds = 10;

static void test_races(void) {
    build_template();
    for (int round = 0; round < rounds; round++)
        for (int shape = 0; shape < SHAPES; shape++)
            for (int replace = 0; replace < 2; replace++) run_case((Shape)shape, replace != 0);
    int total = 0;
    for (int shape = 0; shape < SHAPES; shape++)
        for (int replace = 0; replace < 2; replace++) {
            const Tally* t = &tallies[shape][replace];
            total += t->races;
            printf("    %-8s replace=%d: %d races, first thread won %d, %d conflicts answered by a retry\n",
                   shape_names[shape], replace, t->races, t->first_wins, t->conflicts);
        }
    printf("    %d races in all\n", total);
    for (int s = 0; s < SEGMENTS; s++) lance_free_bytes(seg_bytes[s]);
}

int main(int argc, char** argv) {
    const char* env = getenv("LANCE_RACE_ROUNDS");
    if (argc > 1) env = argv[1];
    if (env && atoi(env) > 0) rounds = atoi(env);
    data = tu_make_data(ROWS, DIM, 8, 0.5f, 17);
    dir = tu_temp_dir("races");
    RUN(test_races);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_races");
}
