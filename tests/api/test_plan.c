/* Fragment planning (lance.h "Distributed index builds: planning"):
 * lance_dataset_plan_fragment_groups() and its plan's getters.  On datasets
 * of uneven, equal and partly deleted fragments, every group count gives
 * exactly the groups the documented rule makes (largest fragment first, to
 * the group with the fewest rows; ties to fewer fragments, then the lower
 * group), every fragment once, ids ascending, the rows of each group
 * exact; the same groups every time and from every handle at the version;
 * and each refusal with its exact code. */
#include <string.h>

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
    /* Largest first: 4000 -> g0; 2000 -> g1; 1000 -> g1; 500 -> g1; 500 -> g1. */
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
    /* 500 (fragment 3) goes to group 2 (1000 rows), then 500 (fragment 4)
       too: at 1500 rows it still has fewer than group 1's 2000. */
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
       500, and fragment 4 (500 rows, one fragment) joins group 0 (2000
       rows, one fragment) rather than group 1 (2000 rows, three). */
    uint64_t deleted = 0;
    CHECK_OK(lance_dataset_delete(ds, "id < 3500", &deleted));
    CHECK(deleted == 3500 && lance_dataset_version(ds) == 5);
    const Group after_delete[] = {{2, {1, 4}, 2500}, {3, {0, 2, 3}, 2000}};
    check_plan(ds, 2, 5, after_delete);
    /* The handle at version 4 still plans version 4. */
    check_plan(other, 2, 4, two);
    lance_dataset_close(other);
    lance_dataset_close(ds);
}

/* Equal fragments: ties go to the group with fewer fragments, then to the
 * lower group. */
static void test_ties(void) {
    char uri[600];
    snprintf(uri, sizeof uri, "%s/equal.lance", dir);
    LanceDataset* ds = tu_write(uri, &data, 0, 600, LANCE_WRITE_CREATE, 100);
    CHECK(ds && lance_dataset_fragment_count(ds) == 6);
    if (!ds) return;
    const Group four[] = {{2, {0, 4}, 200}, {2, {1, 5}, 200}, {1, {2}, 100}, {1, {3}, 100}};
    check_plan(ds, 4, 1, four);
    const Group six[] = {{1, {0}, 100}, {1, {1}, 100}, {1, {2}, 100},
                         {1, {3}, 100}, {1, {4}, 100}, {1, {5}, 100}};
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

int main(void) {
    data = tu_make_data(8000, 4, 4, 0.5f, 3);
    dir = tu_temp_dir("plan");
    RUN(test_plan);
    RUN(test_exact_groups);
    RUN(test_ties);
    RUN(test_refusals);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_plan");
}
