/* Fragment planning (lance.h "Distributed index builds: planning"):
 * lance_dataset_plan_fragment_groups() and its plan's getters.  On datasets
 * of uneven, equal and partly deleted fragments, every group count gives
 * exactly the groups the documented rule makes (ranges of consecutive
 * fragments, the largest range's rows as few as possible, each range from
 * the first nearest an even share of the rows left, ties to fewer
 * fragments), every fragment once, ids ascending, the rows of each group
 * exact; the same groups every time and from every handle at the version;
 * each refusal with its exact code; and why the ranges are consecutive: a
 * table of small fragments indexed one segment per planned group compacts
 * to as few fragments as the same table without an index, where groups of
 * scattered fragments keep every fragment. */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "test_util.h"

static TuData data;
static char* dir;

/* 4000 + 2000 + 1000 + 500 + 500 rows in fragments 0-4, at version 4. */
static LanceDataset* uneven(const char* name, char* uri, size_t size) {
    snprintf(uri, size, "%s/%s", dir, name);
    LanceDataset* ds = tu_write(uri, &data, 0, 4000, LANCE_WRITE_CREATE, 4000);
    lance_dataset_close(ds);
    ds = tu_write(uri, &data, 4000, 2000, LANCE_WRITE_APPEND, 2000);
    lance_dataset_close(ds);
    ds = tu_write(uri, &data, 6000, 1000, LANCE_WRITE_APPEND, 1000);
    lance_dataset_close(ds);
    ds = tu_write(uri, &data, 7000, 1000, LANCE_WRITE_APPEND, 500);
    CHECK(ds && lance_dataset_version(ds) == 4 && lance_dataset_fragment_count(ds) == 5);
    return ds;
}

static void test_plan(void) {
    char uri[600];
    /* Uneven fragments: 4000 + 2000 + 1000 + 500 + 500 rows. */
    LanceDataset* ds = uneven("plan.lance", uri, sizeof uri);

    LanceFragmentPlan* plan = NULL;
    CHECK_OK(lance_dataset_plan_fragment_groups(ds, 2, &plan));
    CHECK(lance_fragment_plan_group_count(plan) == 2);
    CHECK(lance_fragment_plan_dataset_version(plan) == 4);
    const uint32_t* ids = NULL;
    size_t n = 0;
    uint64_t rows = 0;
    /* No split keeps both ranges under 4000 rows; the first range nearest
       half of 8000 is fragment 0 alone. */
    CHECK_OK(lance_fragment_plan_group(plan, 0, &ids, &n, &rows));
    CHECK(n == 1 && ids[0] == 0 && rows == 4000);
    CHECK_OK(lance_fragment_plan_group(plan, 1, &ids, &n, &rows));
    CHECK(n == 4 && ids[0] == 1 && ids[1] == 2 && ids[2] == 3 && ids[3] == 4 && rows == 4000);
    CHECK_ERR(lance_fragment_plan_group(plan, 2, &ids, &n, NULL), LANCE_ERR_INVALID_ARGUMENT);
    lance_fragment_plan_free(plan);

    /* Every fragment exactly once, for every group count. */
    for (size_t g = 1; g <= 5; g++) {
        CHECK_OK(lance_dataset_plan_fragment_groups(ds, g, &plan));
        int seen[5] = {0};
        uint64_t total = 0;
        for (size_t i = 0; i < g; i++) {
            CHECK_OK(lance_fragment_plan_group(plan, i, &ids, &n, &rows));
            CHECK(n >= 1);
            total += rows;
            for (size_t j = 0; j < n; j++)
                if (ids[j] < 5) seen[ids[j]]++;
            for (size_t j = 1; j < n; j++) CHECK(ids[j - 1] < ids[j]);
        }
        for (int f = 0; f < 5; f++) CHECK(seen[f] == 1);
        CHECK(total == 8000);
        lance_fragment_plan_free(plan);
    }
    CHECK_ERR(lance_dataset_plan_fragment_groups(ds, 0, &plan), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_dataset_plan_fragment_groups(ds, 6, &plan), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("would be empty"));
    CHECK_ERR(lance_dataset_plan_fragment_groups(ds, 2, NULL), LANCE_ERR_INVALID_ARGUMENT);
    lance_dataset_close(ds);
}

/* One group as a plan should have it: its fragment ids and live rows. */
typedef struct {
    size_t n;
    uint32_t ids[6];
    uint64_t rows;
} Group;

/* The plan of `groups` groups has exactly the groups `want`. */
static void check_plan(const LanceDataset* ds, size_t groups, uint64_t version, const Group* want) {
    LanceFragmentPlan* plan = NULL;
    CHECK_OK(lance_dataset_plan_fragment_groups(ds, groups, &plan));
    if (!plan) return;
    CHECK(lance_fragment_plan_group_count(plan) == groups);
    CHECK(lance_fragment_plan_dataset_version(plan) == version);
    for (size_t g = 0; g < groups; g++) {
        const uint32_t* ids = NULL;
        size_t n = 0;
        uint64_t rows = 0;
        CHECK_OK(lance_fragment_plan_group(plan, g, &ids, &n, &rows));
        int same = n == want[g].n && rows == want[g].rows && ids && memcmp(ids, want[g].ids, n * sizeof *ids) == 0;
        CHECK(same);
        if (!same) {
            fprintf(stderr, "    %zu groups, group %zu: %llu rows in", groups, g, (unsigned long long)rows);
            for (size_t i = 0; i < n; i++) fprintf(stderr, " %u", ids[i]);
            fprintf(stderr, "\n");
        }
    }
    lance_fragment_plan_free(plan);
}

static void test_exact_groups(void) {
    char uri[600];
    LanceDataset* ds = uneven("exact.lance", uri, sizeof uri);
    if (!ds) return;
    const Group one[] = {{5, {0, 1, 2, 3, 4}, 8000}};
    check_plan(ds, 1, 4, one);
    const Group two[] = {{1, {0}, 4000}, {4, {1, 2, 3, 4}, 4000}};
    check_plan(ds, 2, 4, two);
    /* Fragment 0 (4000 rows) bounds every split.  After it, 4000 rows
       remain for two ranges: fragment 1 alone is exactly half. */
    const Group three[] = {{1, {0}, 4000}, {1, {1}, 2000}, {3, {2, 3, 4}, 2000}};
    check_plan(ds, 3, 4, three);
    const Group four[] = {{1, {0}, 4000}, {1, {1}, 2000}, {1, {2}, 1000}, {2, {3, 4}, 1000}};
    check_plan(ds, 4, 4, four);
    const Group five[] = {{1, {0}, 4000}, {1, {1}, 2000}, {1, {2}, 1000}, {1, {3}, 500}, {1, {4}, 500}};
    check_plan(ds, 5, 4, five);

    /* The same plan again, and from another handle at the version. */
    check_plan(ds, 3, 4, three);
    LanceDataset* other = lance_dataset_open(uri, NULL, 4);
    CHECK(other != NULL);
    check_plan(other, 3, 4, three);

    /* Deleted rows do not count: 3500 of fragment 0's rows gone leave it
       500 (500 + 2000 + 1000 + 500 + 500 live rows), and the largest range
       is smallest at 2500 rows: fragments 0-1, then 2-4. */
    uint64_t deleted = 0;
    CHECK_OK(lance_dataset_delete(ds, "id < 3500", &deleted));
    CHECK(deleted == 3500 && lance_dataset_version(ds) == 5);
    const Group after_delete[] = {{2, {0, 1}, 2500}, {3, {2, 3, 4}, 2000}};
    check_plan(ds, 2, 5, after_delete);
    /* The handle at version 4 still plans version 4. */
    check_plan(other, 2, 4, two);
    lance_dataset_close(other);
    lance_dataset_close(ds);
}

/* Equal fragments: ranges of at most two; a range one fragment from an
 * even share either way takes the fewer fragments. */
static void test_ties(void) {
    char uri[600];
    snprintf(uri, sizeof uri, "%s/equal.lance", dir);
    LanceDataset* ds = tu_write(uri, &data, 0, 600, LANCE_WRITE_CREATE, 100);
    CHECK(ds && lance_dataset_fragment_count(ds) == 6);
    if (!ds) return;
    /* Shares of 150, 166.7 and 150 rows: 100 (tie, fewer), 200, 100 (tie). */
    const Group four[] = {{1, {0}, 100}, {2, {1, 2}, 200}, {1, {3}, 100}, {2, {4, 5}, 200}};
    check_plan(ds, 4, 1, four);
    const Group three[] = {{2, {0, 1}, 200}, {2, {2, 3}, 200}, {2, {4, 5}, 200}};
    check_plan(ds, 3, 1, three);
    const Group six[] = {{1, {0}, 100}, {1, {1}, 100}, {1, {2}, 100}, {1, {3}, 100}, {1, {4}, 100}, {1, {5}, 100}};
    check_plan(ds, 6, 1, six);
    lance_dataset_close(ds);
}

static void test_refusals(void) {
    char uri[600];
    LanceDataset* ds = uneven("refusals.lance", uri, sizeof uri);
    if (!ds) return;
    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    LanceFragmentPlan* plan = NULL;
    CHECK_ERR(lance_dataset_plan_fragment_groups(ds, 0, &plan), IA);
    CHECK(tu_error_mentions("group_count is 0"));
    CHECK_ERR(lance_dataset_plan_fragment_groups(ds, 6, &plan), IA);
    CHECK(tu_error_mentions("5 fragments of dataset version 4"));
    CHECK_ERR(lance_dataset_plan_fragment_groups(ds, (size_t)-1, &plan), IA);
    CHECK_ERR(lance_dataset_plan_fragment_groups(NULL, 2, &plan), IA);

    CHECK_OK(lance_dataset_plan_fragment_groups(ds, 2, &plan));
    const uint32_t* ids = NULL;
    size_t n = 0;
    uint64_t rows = 0;
    CHECK_ERR(lance_fragment_plan_group(plan, 2, &ids, &n, &rows), IA);
    CHECK(tu_error_mentions("the plan has 2 groups"));
    CHECK_ERR(lance_fragment_plan_group(plan, (size_t)-1, &ids, &n, &rows), IA);
    CHECK_ERR(lance_fragment_plan_group(plan, 0, NULL, &n, &rows), IA);
    CHECK_ERR(lance_fragment_plan_group(plan, 0, &ids, NULL, &rows), IA);
    CHECK_ERR(lance_fragment_plan_group(NULL, 0, &ids, &n, &rows), IA);
    /* The rows are optional. */
    CHECK_OK(lance_fragment_plan_group(plan, 1, &ids, &n, NULL));
    CHECK(n == 4 && ids[0] == 1 && ids[3] == 4);
    lance_fragment_plan_free(plan);

    CHECK(lance_fragment_plan_group_count(NULL) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_fragment_plan_dataset_version(NULL) == 0);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    lance_fragment_plan_free(NULL);
    /* Planning commits nothing. */
    CHECK(lance_dataset_latest_version(ds) == 4);
    lance_dataset_close(ds);
}

/* ---- why consecutive: compaction ---- */

#define SMALL_FRAGS 12

/* 12 fragments of 100 rows (ids 0-1199), 5 of each fragment's rows
 * deleted (id % 20 = 7): 95 live rows each, at version 2. */
static LanceDataset* small_fragments(const char* name, char* uri, size_t size) {
    snprintf(uri, size, "%s/%s", dir, name);
    LanceDataset* ds = tu_write(uri, &data, 0, SMALL_FRAGS * 100, LANCE_WRITE_CREATE, 100);
    CHECK(ds && lance_dataset_fragment_count(ds) == SMALL_FRAGS);
    if (!ds) return NULL;
    uint64_t deleted = 0;
    CHECK_OK(lance_dataset_delete(ds, "id % 20 = 7", &deleted));
    CHECK(deleted == 60 && lance_dataset_version(ds) == 2);
    return ds;
}

/* Commits a BTREE index "id_idx" on "id" of one segment per group. */
static void index_by_groups(LanceDataset* ds, const uint32_t groups[][SMALL_FRAGS], const size_t* sizes, size_t n) {
    uint8_t* bytes[SMALL_FRAGS] = {0};
    size_t lens[SMALL_FRAGS] = {0};
    for (size_t g = 0; g < n; g++) {
        LanceIndexSegmentBuildOptions o = {0};
        o.fragment_ids = groups[g];
        o.fragment_count = sizes[g];
        LanceIndexSegmentBuilder* b =
            lance_index_segment_builder_new_scalar(ds, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, &o);
        CHECK(b != NULL);
        CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &bytes[g], &lens[g]));
        lance_index_segment_builder_free(b);
    }
    LanceCommitIndexResult r = {0};
    CHECK_OK(
        lance_dataset_commit_index_segments_v2(ds, "id_idx", "id", (const uint8_t* const*)bytes, lens, n, NULL, &r));
    CHECK(r.version == 3 && lance_dataset_index_segment_count(ds, "id_idx") == n);
    for (size_t g = 0; g < n; g++) lance_free_bytes(bytes[g]);
}

/* Compacts toward fragments of 285 rows (three of the small ones): the
 * fragment count after. */
static uint64_t compact(LanceDataset* ds) {
    LanceCompactionOptions o = {0};
    o.target_rows_per_fragment = 285;
    LanceCompactionMetrics m = {0};
    CHECK_OK(lance_dataset_compact_files(ds, &o, &m));
    return lance_dataset_fragment_count(ds);
}

static int by_id(const void* a, const void* b) {
    int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
    return (x > y) - (x < y);
}

/* After the compaction the index covers every fragment with its segments
 * and a filter through it returns exactly the live rows it selects. */
static void check_index_answers(LanceDataset* ds, int segments) {
    char* text = lance_dataset_index_coverage_json(ds, "id_idx");
    JValue* v = text ? json_parse(text) : NULL;
    lance_free_string(text);
    const JValue* unindexed = json_get(v, "unindexed_fragments");
    const JValue* stale = json_get(v, "stale_fragments");
    const JValue* count = json_get(v, "num_segments");
    CHECK(unindexed && unindexed->count == 0 && stale && stale->count == 0 && count && count->number == segments);
    json_free(v);
    static const char* const columns[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(ds, columns, "id >= 250 AND id < 650");
    CHECK(s != NULL);
    if (!s) return;
    int64_t got[400];
    int n = tu_knn_ids(s, got, 400);
    lance_scanner_close(s);
    CHECK(n == 380);
    if (n != 380) return;
    qsort(got, (size_t)n, sizeof *got, by_id);
    int i = 0, same = 1;
    for (int64_t id = 250; id < 650; id++)
        if (id % 20 != 7) same &= got[i++] == id;
    CHECK(same);
}

static void test_groups_let_compaction_merge(void) {
    char uri[600];
    /* Without an index: 12 fragments become 4 of 285 rows. */
    LanceDataset* ds = small_fragments("compact_plain.lance", uri, sizeof uri);
    if (!ds) return;
    CHECK(compact(ds) == 4);
    lance_dataset_close(ds);

    /* Indexed one BTREE segment per planned group: the same 4. */
    ds = small_fragments("compact_planned.lance", uri, sizeof uri);
    if (!ds) return;
    LanceFragmentPlan* plan = NULL;
    CHECK_OK(lance_dataset_plan_fragment_groups(ds, 4, &plan));
    if (!plan) {
        lance_dataset_close(ds);
        return;
    }
    uint32_t groups[4][SMALL_FRAGS];
    size_t sizes[4];
    for (size_t g = 0; g < 4; g++) {
        const uint32_t* ids = NULL;
        uint64_t rows = 0;
        CHECK_OK(lance_fragment_plan_group(plan, g, &ids, &sizes[g], &rows));
        CHECK(sizes[g] == 3 && rows == 285);
        for (size_t i = 0; i < sizes[g] && i < 3; i++) {
            CHECK(ids[i] == 3 * g + i);
            groups[g][i] = ids[i];
        }
    }
    lance_fragment_plan_free(plan);
    index_by_groups(ds, (const uint32_t(*)[SMALL_FRAGS])groups, sizes, 4);
    CHECK(compact(ds) == 4);
    CHECK(lance_dataset_version(ds) > 3);
    check_index_answers(ds, 4);
    lance_dataset_close(ds);

    /* Indexed over scattered groups ({0, 4, 8}, {1, 5, 9}, ...): no two
       neighbours share a segment, and no fragment is compacted. */
    ds = small_fragments("compact_scattered.lance", uri, sizeof uri);
    if (!ds) return;
    for (uint32_t g = 0; g < 4; g++)
        for (uint32_t i = 0; i < 3; i++) groups[g][i] = g + 4 * i;
    index_by_groups(ds, (const uint32_t(*)[SMALL_FRAGS])groups, sizes, 4);
    CHECK(compact(ds) == SMALL_FRAGS);
    CHECK(lance_dataset_version(ds) == 3);
    check_index_answers(ds, 4);
    lance_dataset_close(ds);
}

int main(void) {
    data = tu_make_data(8000, 4, 4, 0.5f, 3);
    dir = tu_temp_dir("plan");
    RUN(test_plan);
    RUN(test_exact_groups);
    RUN(test_ties);
    RUN(test_refusals);
    RUN(test_groups_let_compaction_merge);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_plan");
}
