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
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#include "segment_params.h"
#include "segment_kit.h"
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
    CHECK_OK(lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model));
    for (int s = 0; s < SEGMENTS; s++) {
        uint32_t fragment_ids[FRAGS];
        for (int i = 0; i < seg_count[s]; i++) fragment_ids[i] = (uint32_t)(seg_first[s] + i);
        CHECK(uuid_random_v4(seg_uuids[s]) == 0);
        LanceIndexSegmentBuildOptions o = {0};
        o.fragment_ids = fragment_ids;
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

/* ---- one race ---- */

typedef struct {
    const int* segments; /* indices into seg_* */
    int count;
} Set;

/* The segments of `set` as one commit takes them (borrowed from seg_*). */
static SkSet commit_view(Set set) {
    SkSet view = {0};
    view.count = set.count;
    for (int i = 0; i < set.count; i++) {
        view.ptrs[i] = seg_bytes[set.segments[i]];
        view.lens[i] = seg_lens[set.segments[i]];
    }
    return view;
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
    SkCoverage c;
    if (sk_coverage(ds, INDEX, &c) != 0 || c.stale != 0 || c.indexed + c.unindexed != FRAGS) return -1;
    return (long)c.indexed_mask;
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
    CHECK(tu_copy_tree(template_uri, uri) == 0);

    Set sets[2] = {a, b};
    SkSet views[2] = {commit_view(a), commit_view(b)};
    SkRacer r[2];
    for (int i = 0; i < 2; i++) {
        r[i] = (SkRacer){.ds = lance_dataset_open(uri, NULL, 0), .name = INDEX, .set = &views[i], .replace = replace};
        CHECK(r[i].ds != NULL);
    }
    sk_race(r, 2);

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
        sk_racer_commit(&r[l]);
    }
    SkRacer* loser = &r[l];
    uint64_t latest = lance_dataset_latest_version(r[w].ds);
    switch (shape) {
    case SAME:
        CHECK(loser->rc == 0 && loser->result.already_committed && loser->result.version == 2);
        check_final(uri, all, 4, 2);
        CHECK(latest == 2);
        break;
    case SHARED:
        CHECK(loser->rc == -1 && loser->code == LANCE_ERR_DUPLICATE_SEGMENT);
        check_final(uri, sets[w].segments, sets[w].count, 2);
        CHECK(latest == 2);
        break;
    case DISJOINT:
    case COVERAGE:
        if (!replace) {
            CHECK(loser->rc == -1 && loser->code == LANCE_ERR_INDEX);
            check_final(uri, sets[w].segments, sets[w].count, 2);
            CHECK(latest == 2);
        } else {
            CHECK(loser->rc == 0 && !loser->result.already_committed && loser->result.version == 3);
            /* The later commit (the loser's) replaced what it covers. */
            static const int union4[] = {Q0, Q1, Q2, Q3}, q01h1[] = {Q0, Q1, H1};
            if (shape == DISJOINT) check_final(uri, union4, 4, 3);
            else if (l == 1) check_final(uri, q01h1, 3, 3); /* {h0,h1} then {q0,q1} */
            else check_final(uri, halves, 2, 3);            /* {q0,q1} then {h0,h1} */
        }
        break;
    default: break;
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
