/* An index's life as an engine lives it (issue 43, "Correct through every
 * change"): a table of 12 fragments gets an IVF_FLAT index and a BTREE
 * index built the distributed way (planned fragment groups, one shared
 * model, one segment per group, one commit per index), and then changes
 * step by step: an append, a delete, an update, a merge-insert, a load
 * committed by pylance while the coordinator indexes what came before it
 * (and retries its commits), a compaction, a compaction by pylance that
 * defers the index remap, a delta optimize through a handle older than
 * another load, a rebuild whose segments are merged and the merged segment
 * merged again, and a last optimize.
 *
 * After every step, with no tolerance: k-NN through the index probing
 * every partition equals brute force over the rows the table must hold
 * (tu_brute_force_knn(), kk_check_exact()) and pylance's brute force over
 * the rows it reads; each filter's rows equal those rows' and pylance's,
 * the key filters answered with the scalar index; and the fragments,
 * every index's segments (by UUID, with their fragments) and the coverage
 * report (indexed, unindexed, stale) equal what pylance 14.0.2 reads from
 * the manifest (tests/api/lifecycle_oracle.py).
 *
 * Usage: test_lifecycle PYTHON ORACLE_SCRIPT */
#include <stdbool.h>
#include <string.h>

#include "dataset_kit.h"
#include "id_list.h"
#include "json.h"
#include "knn_kit.h"
#include "rows_text.h" /* tu_check_same_text() */
#include "segment_kit.h"
#include "test_util.h"
#include "uuid_hex.h"

#define DIM 16
#define PARTITIONS 8
/* Above any partition count the index reaches (an optimize may split
 * partitions): the core then probes every partition, which check_state()
 * verifies by the search's comparison count. */
#define NPROBES 64
#define K 10
#define MAX_ID 1700 /* ids 0..1699: the data's rows */
#define GROUPS 4
#define QUERIES 10

static const char* python;
static const char* oracle_script;
static TuData data;  /* row r: the vector of id r as written */
static TuData other; /* row r: the vector merge-insert gives id r */
static char* dir;
static char uri[600];
static LanceDataset* ds; /* the table, at its latest version after each step */
static LanceVectorModel* model;
static LanceVectorIndexParams params;
static int uuid_seed = 1;

/* What the table must hold: which ids are live, each one's vector and
 * whether its tag was updated to 'u' (else "t<id % 7>"). */
static DkRows held; /* made by main() */
static bool tag_u[MAX_ID];

static float queries[QUERIES][DIM];

/* The filters compared after every step: three on the key, which the
 * BTREE index must answer, and one on the tag, which no index covers. */
#define KEY_FILTERS 3
static const char* const FILTERS[] = {"id >= 240 AND id < 560", "id >= 1100 AND id < 1500", "id < 30 OR id >= 1480",
                                      "tag = 'u'"};
#define FILTER_COUNT (sizeof FILTERS / sizeof FILTERS[0])

static bool selects(size_t filter, int id) {
    switch (filter) {
    case 0: return id >= 240 && id < 560;
    case 1: return id >= 1100 && id < 1500;
    case 2: return id < 30 || id >= 1480;
    default: return tag_u[id];
    }
}

/* ---- the rows the table must hold ---- */

static void mark(int64_t first, int64_t count, const TuData* source) {
    dk_rows_mark(&held, first, count, source);
    for (int64_t id = first; id < first + count; id++) tag_u[id] = false;
}

/* ---- what lance-c reports, as the oracle prints pylance's view ---- */

/* The UUIDs lance_dataset_index_segments() lists for index `name`,
 * hyphenated, sorted, comma-separated (malloc'd). */
static char* listed_uuids(const char* name) {
    uint64_t count = lance_dataset_index_segment_count(ds, name);
    uint8_t* raw = calloc(count + 1, 16);
    char** dashed = calloc(count + 1, sizeof *dashed);
    if (!raw || !dashed) abort();
    uint64_t written = 0;
    CHECK_OK(lance_dataset_index_segments(ds, name, raw, count, &written));
    CHECK(written == count);
    for (uint64_t i = 0; i < written && i < count; i++) {
        dashed[i] = malloc(UUID_HEX_DASHED_LEN + 1);
        if (!dashed[i]) abort();
        uuid_hex_format_dashed(raw + 16 * i, dashed[i]);
    }
    qsort(dashed, written, sizeof *dashed, dk_compare_strings);
    TuText listed = {0};
    for (uint64_t i = 0; i < written; i++) {
        tu_text_append(&listed, i ? ",%s" : "%s", dashed[i]);
        free(dashed[i]);
    }
    free(dashed);
    free(raw);
    return tu_text_take(&listed);
}

/* The end of index `name`'s block: the listing calls agree with the
 * segments JSON (`uuids`: its UUIDs, sorted, comma-separated), and the
 * coverage report's line, whose stale fragments must be none. */
static void end_index(TuText* t, const char* name, const char* uuids) {
    char* listed = listed_uuids(name);
    tu_check_same_text("lance_dataset_index_segments", listed, uuids);
    free(listed);
    uint64_t count = lance_dataset_index_segment_count(ds, name);
    char* text = lance_dataset_index_coverage_json(ds, name);
    CHECK(text != NULL);
    JValue* c = text ? json_parse(text) : NULL;
    lance_free_string(text);
    const JValue* stale = json_get(c, "stale_fragments");
    const JValue* segments = json_get(c, "num_segments");
    CHECK(c && stale && stale->count == 0 && segments && segments->number == (double)count);
    tu_text_append(t, "coverage %s indexed ", name);
    dk_append_json_ids(t, json_get(c, "indexed_fragments"));
    tu_text_append(t, " unindexed ");
    dk_append_json_ids(t, json_get(c, "unindexed_fragments"));
    tu_text_append(t, " stale ");
    dk_append_json_ids(t, stale);
    tu_text_append(t, "\n");
    json_free(c);
}

/* The version, its fragments, and every user index (by name) with its
 * segments (by UUID) and its coverage report.  Returns the rows vec_idx's
 * segments hold as written (their "num_rows"). */
static uint64_t manifest_text(TuText* t) {
    size_t count = 0;
    CHECK_OK(lance_dataset_fragment_ids_bounded(ds, NULL, 0, &count));
    uint64_t* fragment_ids = malloc(sizeof(uint64_t) * (count + 1));
    if (!fragment_ids) abort();
    CHECK_OK(lance_dataset_fragment_ids_bounded(ds, fragment_ids, count, &count));
    tu_text_append(t, "version %llu\nfragments ", (unsigned long long)lance_dataset_version(ds));
    for (size_t i = 0; i < count; i++) tu_text_append(t, i ? ",%llu" : "%llu", (unsigned long long)fragment_ids[i]);
    tu_text_append(t, "\n");
    free(fragment_ids);

    char* text = lance_dataset_index_segments_json(ds);
    CHECK(text != NULL);
    JValue* segments = text ? json_parse(text) : NULL;
    lance_free_string(text);
    CHECK(segments && segments->type == J_ARRAY);
    if (!segments) return 0;
    /* "<name> <uuid> <type> <fragments>" per segment, sorted. */
    uint64_t vec_rows = 0;
    size_t n = 0;
    char** lines = calloc(segments->count + 1, sizeof *lines);
    if (!lines) abort();
    for (size_t i = 0; i < segments->count; i++) {
        const JValue* s = segments->items[i];
        const JValue *name = json_get(s, "name"), *uuid = json_get(s, "uuid"), *type = json_get(s, "type");
        const JValue* rows = json_get(s, "num_rows");
        bool complete = name && uuid && type && rows && name->string && uuid->string && type->string;
        CHECK(complete && rows->type == J_NUMBER);
        if (!complete) continue;
        if (strcmp(name->string, "vec_idx") == 0) vec_rows += (uint64_t)rows->number;
        TuText line = {0};
        tu_text_append(&line, "%s %s %s ", name->string, uuid->string, type->string);
        dk_append_json_ids(&line, json_get(s, "fragment_ids"));
        lines[n++] = tu_text_take(&line);
    }
    json_free(segments);
    qsort(lines, n, sizeof *lines, dk_compare_strings);
    char current[128] = "";
    TuText uuids = {0};
    for (size_t i = 0; i < n; i++) {
        char name[128], uuid[64], type[64];
        int used = 0;
        CHECK(sscanf(lines[i], "%127s %63s %63s %n", name, uuid, type, &used) == 3);
        if (strcmp(name, current) != 0) {
            if (current[0]) {
                char* listed = tu_text_take(&uuids);
                end_index(t, current, listed);
                free(listed);
                uuids = (TuText){0};
            }
            snprintf(current, sizeof current, "%s", name);
            tu_text_append(t, "index %s %s\n", name, type);
        }
        tu_text_append(&uuids, uuids.len ? ",%s" : "%s", uuid);
        tu_text_append(t, "segment %s %s\n", uuid, lines[i] + used);
        free(lines[i]);
    }
    char* listed = tu_text_take(&uuids);
    if (current[0]) end_index(t, current, listed);
    free(listed);
    free(lines);
    return vec_rows;
}

/* The queries as the oracle takes them: ';' between vectors. */
static char* queries_text(void) {
    TuText t = {0};
    for (int q = 0; q < QUERIES; q++)
        for (int j = 0; j < DIM; j++) tu_text_append(&t, "%s%.9g", j ? "," : q ? ";" : "", (double)queries[q][j]);
    return tu_text_take(&t);
}

/* Every check of a step: the table's answers against the rows it must hold
 * and against pylance's reading of the same version. */
static void check_state(const char* step) {
    CHECK(lance_dataset_version(ds) == lance_dataset_latest_version(ds));
    TuText ours = {0};
    uint64_t vec_rows = manifest_text(&ours);
    CHECK(lance_dataset_count_rows(ds) == (uint64_t)dk_rows_count(&held));
    tu_text_append(&ours, "rows %llu\n", (unsigned long long)lance_dataset_count_rows(ds));

    /* Index comparisons (lance.h, "Filters and scan statistics"): none
     * unless an index answered the filter.  (Its indices_loaded counts
     * opens, and the session caches an index once opened.) */
    for (size_t f = 0; f < FILTER_COUNT; f++) {
        uint64_t comparisons = 0;
        char* got = dk_filter_ids(ds, FILTERS[f], MAX_ID, -1, kk_add_comparisons, &comparisons);
        char* want = dk_rows_ids(&held, selects, f);
        tu_check_same_text(FILTERS[f], got, want);
        CHECK((comparisons > 0) == (f < KEY_FILTERS));
        tu_text_append(&ours, "filter %zu indexed=%d: %s\n", f, comparisons > 0, got ? got : "(failed)");
        free(got);
        free(want);
    }

    /* Every partition probed: the search compares the query with every
     * row the index holds (Lance 14.0.2's count for IVF_FLAT). */
    CHECK(kk_comparisons(ds, queries[0], DIM, K, NPROBES) == vec_rows);
    TuData rows = dk_rows_data(&held);
    for (int q = 0; q < QUERIES; q++) {
        kk_check_exact(ds, &rows, queries[q], K, NPROBES);
        int64_t got[K];
        int n = kk_ids(ds, queries[q], DIM, K, NPROBES, 0, got);
        CHECK(n == K);
        tu_text_append(&ours, "knn %d: ", q);
        for (int i = 0; i < n; i++) tu_text_append(&ours, i ? ",%lld" : "%lld", (long long)got[i]);
        tu_text_append(&ours, "\n");
    }
    tu_free_data(&rows);

    char* query_arg = queries_text();
    const char* argv[8 + FILTER_COUNT];
    int a = 0;
    argv[a++] = python;
    argv[a++] = oracle_script;
    argv[a++] = "state";
    argv[a++] = uri;
    argv[a++] = dk_version_text(lance_dataset_version(ds));
    argv[a++] = query_arg;
    for (size_t f = 0; f < FILTER_COUNT; f++) argv[a++] = FILTERS[f];
    argv[a] = NULL;
    char* theirs = tu_run_program(argv);
    char* mine = tu_text_take(&ours);
    tu_check_same_text(step, mine, theirs);
    free(mine);
    free(theirs);
    free(query_arg);
}

/* ---- the coordinator's side ---- */

/* The handle moved to `next` (which may be NULL: a failed check). */
static void take(LanceDataset* next) {
    CHECK(next != NULL);
    if (!next) return;
    lance_dataset_close(ds);
    ds = next;
}

/* One BTREE segment of "id" over `fragment_ids`, built at `at`'s version. */
static uint8_t* id_segment(const LanceDataset* at, const uint32_t* fragment_ids, size_t count, size_t* len) {
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = fragment_ids;
    o.fragment_count = count;
    return sk_execute(lance_index_segment_builder_new_scalar(at, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, &o), len,
                      true);
}

/* What the workers build at `at`'s version for `groups` planned groups:
 * one vector segment (the shared model) and one BTREE segment per group.
 * The plan's groups are written to `plan_out` when not NULL. */
static void build_planned(LanceDataset* at, size_t groups, SkSet* vec, SkSet* id, LanceFragmentPlan** plan_out) {
    LanceFragmentPlan* plan = NULL;
    CHECK_OK(lance_dataset_plan_fragment_groups(at, groups, &plan));
    CHECK(lance_fragment_plan_group_count(plan) == groups);
    CHECK(lance_fragment_plan_dataset_version(plan) == lance_dataset_version(at));
    for (size_t g = 0; g < lance_fragment_plan_group_count(plan); g++) {
        const uint32_t* fragment_ids = NULL;
        size_t count = 0;
        CHECK_OK(lance_fragment_plan_group(plan, g, &fragment_ids, &count, NULL));
        size_t len = 0;
        sk_set_add(vec, tu_vector_segment(at, &params, model, fragment_ids, count, uuid_seed++, &len), &len);
        sk_set_add(id, id_segment(at, fragment_ids, count, &len), &len);
    }
    if (plan_out) *plan_out = plan;
    else lance_fragment_plan_free(plan);
}

static int commit_id(LanceDataset* at, const SkSet* s, const LanceCommitIndexOptions* o, LanceCommitIndexResult* r) {
    return lance_dataset_commit_index_segments_v2(at, "id_idx", "id", s->ptrs, s->lens, (size_t)s->count, o, r);
}

/* lance_dataset_merge_index_segments() of two segments into a one-segment set. */
static SkSet merge_two(const uint8_t* a, size_t a_len, const uint8_t* b, size_t b_len) {
    const uint8_t* ptrs[] = {a, b};
    size_t lens[] = {a_len, b_len};
    uint8_t* merged = NULL;
    size_t len = 0;
    CHECK_OK(lance_dataset_merge_index_segments(ds, ptrs, lens, 2, &merged, &len));
    SkSet s = {0};
    sk_set_add(&s, merged, &len);
    return s;
}

/* The fragments of one segment's metadata bytes, as "0,1,2". */
static char* segment_fragments(const uint8_t* bytes, size_t len) {
    LanceIndexSegmentMetadata* m = NULL;
    CHECK_OK(lance_index_segment_metadata_parse(bytes, len, &m));
    uint32_t ids[64];
    size_t n = 0;
    CHECK_OK(lance_index_segment_metadata_fragment_ids(m, ids, 64, &n));
    lance_index_segment_metadata_free(m);
    TuText t = {0};
    for (size_t i = 0; i < n; i++) tu_text_append(&t, i ? ",%u" : "%u", ids[i]);
    return tu_text_take(&t);
}

static char* coverage_list(const char* name, const char* key) {
    char* text = lance_dataset_index_coverage_json(ds, name);
    JValue* c = text ? json_parse(text) : NULL;
    lance_free_string(text);
    TuText t = {0};
    dk_append_json_ids(&t, json_get(c, key));
    json_free(c);
    return tu_text_take(&t);
}

/* Rows [first, first + count) of `data` appended through lance-c, 50 a
 * fragment; the handle moves to the new version. */
static void append_rows(int64_t first, int64_t count) {
    take(tu_write(uri, &data, first, count, LANCE_WRITE_APPEND, 50));
    mark(first, count, &data);
}

/* Another writer (pylance) commits rows [first, first + count) of `data`
 * as a load of 50 rows per fragment, while the handle stays where it is. */
static void load(int64_t first, int64_t count) {
    uint64_t latest = lance_dataset_latest_version(ds);
    char staging[640];
    snprintf(staging, sizeof staging, "%s/load%lld.lance", dir, (long long)first);
    LanceDataset* rows = tu_write(staging, &data, first, count, LANCE_WRITE_CREATE, 0);
    CHECK(rows != NULL);
    lance_dataset_close(rows);
    char* out = tu_oracle(python, oracle_script, "append", uri, staging, "50", NULL);
    CHECK(out && strtoull(out, NULL, 10) == latest + 1);
    free(out);
    mark(first, count, &data);
}

/* A coordinator that lost the replies commits `vec` (and `id`, unless
 * NULL) again with the options `o`: each is answered as already committed,
 * at the version that committed it, and nothing new is committed. */
static void retry_commits(const LanceCommitIndexOptions* o, const SkSet* vec, uint64_t vec_version, const SkSet* id,
                          uint64_t id_version) {
    LanceDataset* retry = lance_dataset_open(uri, NULL, 0);
    CHECK(retry != NULL);
    uint64_t latest = lance_dataset_latest_version(retry);
    LanceCommitIndexResult r = {0};
    CHECK_OK(sk_commit(retry, "vec_idx", vec, o, &r));
    CHECK(r.version == vec_version && r.already_committed);
    if (id) {
        CHECK_OK(commit_id(retry, id, o, &r));
        CHECK(r.version == id_version && r.already_committed);
    }
    CHECK(lance_dataset_latest_version(retry) == latest);
    lance_dataset_close(retry);
}

/* ---- the steps ---- */

/* 12 fragments of 100 rows, then both indices built as a coordinator
 * builds them: a plan of 4 groups (consecutive fragments), one model, a
 * segment per group and index, one commit per index; a retried commit is
 * answered with the version that committed the set. */
static void step_build(void) {
    mark(0, 1200, &data);
    ds = tu_write(uri, &data, 0, 1200, LANCE_WRITE_CREATE, 100);
    CHECK(ds != NULL);
    if (!ds) return;
    CHECK(lance_dataset_fragment_count(ds) == 12);
    params = sk_params(LANCE_INDEX_IVF_FLAT, PARTITIONS, 0);
    model = sk_train(ds, &params, NULL, 0);

    SkSet vec = {0}, id = {0};
    LanceFragmentPlan* plan = NULL;
    build_planned(ds, GROUPS, &vec, &id, &plan);
    for (size_t g = 0; g < GROUPS; g++) {
        const uint32_t* fragment_ids = NULL;
        size_t count = 0;
        uint64_t rows = 0;
        CHECK_OK(lance_fragment_plan_group(plan, g, &fragment_ids, &count, &rows));
        CHECK(count == 3 && rows == 300 && fragment_ids[0] == 3 * g && fragment_ids[2] == 3 * g + 2);
    }
    lance_fragment_plan_free(plan);

    LanceCommitIndexResult r = {0};
    CHECK_OK(sk_commit(ds, "vec_idx", &vec, NULL, &r));
    CHECK(r.version == 2 && !r.already_committed && lance_dataset_version(ds) == 2);
    CHECK_OK(commit_id(ds, &id, NULL, &r));
    CHECK(r.version == 3 && !r.already_committed && lance_dataset_version(ds) == 3);

    /* Without replace too: a retry is answered before the name is found taken. */
    retry_commits(NULL, &vec, 2, &id, 3);
    sk_set_free(&vec);
    sk_set_free(&id);
    check_state("build");
}

/* Rows 1200-1299 appended in 2 fragments: unindexed, and still found. */
static void step_append(void) {
    append_rows(1200, 100);
    check_state("append");
}

static void step_delete(void) {
    uint64_t deleted = 0;
    CHECK_OK(lance_dataset_delete(ds, "id % 10 = 3", &deleted));
    CHECK(deleted == 130);
    for (int id = 3; id < 1300; id += 10) held.live[id] = false;
    check_state("delete");
}

/* The updated rows move to a new fragment; their old copies, which the
 * indices cover, are deleted. */
static void step_update(void) {
    static const char* const columns[] = {"tag"};
    static const char* const values[] = {"'u'"};
    uint64_t updated = 0;
    CHECK_OK(lance_dataset_update(ds, "id >= 250 AND id < 300", columns, values, 1, &updated));
    CHECK(updated == 45);
    for (int id = 250; id < 300; id++) tag_u[id] = held.live[id];
    check_state("update");
}

/* Source rows 1150-1349 with other vectors: the live ones among 1150-1299
 * (indexed and unindexed) are updated, the rest inserted. */
static void step_merge_insert(void) {
    struct ArrowArrayStream source;
    tu_stream(&other, 1150, 200, 64, &source);
    static const char* const on[] = {"id"};
    LanceMergeInsertParams p = {0};
    p.when_matched = LANCE_MERGE_WHEN_MATCHED_UPDATE_ALL;
    p.when_not_matched = LANCE_MERGE_WHEN_NOT_MATCHED_INSERT_ALL;
    LanceMergeInsertResult r = {0};
    CHECK_OK(lance_dataset_merge_insert(ds, on, 1, &source, &p, &r));
    CHECK(r.num_updated_rows == 135 && r.num_inserted_rows == 65 && r.num_deleted_rows == 0);
    mark(1150, 200, &other);
    check_state("merge_insert");
}

/* The coordinator plans delta segments over the unindexed fragments of
 * the version it holds; meanwhile a load (pylance) commits rows
 * 1350-1449.  The coordinator's commits land on the latest version: the
 * load's fragments stay unindexed, nothing is lost, and a retried commit
 * is answered with the version that committed the set. */
static SkSet delta_vec, delta_id; /* kept for the retry after compaction */
static uint64_t delta_version, delta_id_version;

static void step_concurrent_load(void) {
    uint64_t held = lance_dataset_version(ds);
    /* Unindexed: the update's fragment (14) and the merge-insert's (15);
     * the appended 12 and 13 left when the merge-insert rewrote their
     * rows. */
    char* unindexed = coverage_list("vec_idx", "unindexed_fragments");
    char* unindexed_id = coverage_list("id_idx", "unindexed_fragments");
    tu_check_same_text("unindexed before the load", unindexed, "14,15");
    tu_check_same_text("unindexed before the load", unindexed_id, "14,15");
    uint32_t* fragment_ids = NULL;
    size_t count = 0;
    char error[128];
    CHECK(id_list_parse(unindexed, ID_LIST_UNIQUE, &fragment_ids, &count, error, sizeof error) == 0);
    free(unindexed);
    free(unindexed_id);

    size_t len = 0;
    sk_set_add(&delta_vec, tu_vector_segment(ds, &params, model, fragment_ids, count, uuid_seed++, &len), &len);
    sk_set_add(&delta_id, id_segment(ds, fragment_ids, count, &len), &len);
    free(fragment_ids);

    load(1350, 100);
    CHECK(lance_dataset_version(ds) == held && lance_dataset_latest_version(ds) == held + 1);

    LanceCommitIndexOptions replace = {.replace = true};
    LanceCommitIndexResult r = {0};
    CHECK_OK(sk_commit(ds, "vec_idx", &delta_vec, &replace, &r));
    CHECK(r.version == held + 2 && !r.already_committed);
    CHECK_OK(commit_id(ds, &delta_id, &replace, &r));
    CHECK(r.version == held + 3 && lance_dataset_version(ds) == held + 3);
    delta_version = held + 2;
    delta_id_version = held + 3;
    retry_commits(&replace, &delta_vec, delta_version, &delta_id, delta_id_version);
    check_state("concurrent_load");
}

/* Compaction through lance-c: the small fragments each segment covers are
 * merged and the segments remapped (the planned groups are consecutive
 * fragments, so nothing keeps them apart).  A retry of the delta commits
 * is still answered as committed (at their versions) after the rewrite. */
static void step_compact(void) {
    uint64_t before = lance_dataset_fragment_count(ds);
    LanceCompactionOptions o = {0};
    o.target_rows_per_fragment = 1000;
    LanceCompactionMetrics m = {0};
    CHECK_OK(lance_dataset_compact_files(ds, &o, &m));
    /* The fragments of each segment become one: {0,1,2}, {3,4,5}, {6,7,8},
     * {9,10,11}, the delta's {14,15}, and the load's {16,17}, which no
     * segment covers. */
    CHECK(before == 16 && m.fragments_removed == 16 && m.fragments_added == 6);
    CHECK(lance_dataset_fragment_count(ds) == 6);

    LanceCommitIndexOptions replace = {.replace = true};
    retry_commits(&replace, &delta_vec, delta_version, &delta_id, delta_id_version);
    sk_set_free(&delta_vec);
    sk_set_free(&delta_id);
    check_state("compact");
}

/* Another writer (pylance) compacts with defer_index_remap: the segments'
 * files are not rewritten, a fragment-reuse index (a system index, which
 * no listing of user indices shows) records the move. */
static void step_compact_deferred(void) {
    uint64_t deleted = 0;
    CHECK_OK(lance_dataset_delete(ds, "id % 5 = 2", &deleted));
    int expected = 0;
    for (int id = 2; id < MAX_ID; id += 5) {
        expected += held.live[id];
        held.live[id] = false;
    }
    CHECK(deleted == (uint64_t)expected);
    char* vec_before = listed_uuids("vec_idx");
    char* id_before = listed_uuids("id_idx");
    char* out = tu_oracle(python, oracle_script, "compact", uri, "1000", NULL);
    CHECK(out && strstr(out, " reuse_indices 1\n"));
    if (out) printf("    pylance compaction: %s", out);
    free(out);
    take(lance_dataset_open(uri, NULL, 0));
    CHECK(lance_dataset_index_count(ds) == 2);
    char* vec_after = listed_uuids("vec_idx");
    char* id_after = listed_uuids("id_idx");
    tu_check_same_text("vec_idx's segments are kept", vec_after, vec_before);
    tu_check_same_text("id_idx's segments are kept", id_after, id_before);
    free(vec_before);
    free(id_before);
    free(vec_after);
    free(id_after);
    check_state("compact_deferred");
}

/* A load (pylance, rows 1600-1649) commits while the table's handle still
 * holds the version before it, to which rows 1450-1499 were appended; the
 * optimize through that handle indexes the rows of the version it holds
 * as a delta segment of each index and commits on the latest version: the
 * load's fragment stays unindexed. */
static void step_optimize_delta(void) {
    append_rows(1450, 50);
    uint64_t held = lance_dataset_version(ds);
    char* before = coverage_list("vec_idx", "unindexed_fragments");
    load(1600, 50);
    uint64_t vec_before = lance_dataset_index_segment_count(ds, "vec_idx");
    uint64_t id_before = lance_dataset_index_segment_count(ds, "id_idx");
    LanceOptimizeIndicesOptions o = {0};
    o.has_num_indices_to_merge = true;
    o.num_indices_to_merge = 0;
    CHECK_OK(lance_dataset_optimize_indices(ds, &o));
    CHECK(lance_dataset_version(ds) == held + 2);
    CHECK(lance_dataset_index_segment_count(ds, "vec_idx") == vec_before + 1);
    CHECK(lance_dataset_index_segment_count(ds, "id_idx") == id_before + 1);
    /* Unindexed now: exactly the fragment the load added. */
    char* unindexed = coverage_list("vec_idx", "unindexed_fragments");
    char* unindexed_id = coverage_list("id_idx", "unindexed_fragments");
    size_t count = 0;
    uint64_t fragment_ids[64];
    CHECK_OK(lance_dataset_fragment_ids_bounded(ds, fragment_ids, 64, &count));
    char last[32];
    snprintf(last, sizeof last, "%llu", (unsigned long long)fragment_ids[count ? count - 1 : 0]);
    tu_check_same_text("unindexed after the optimize", unindexed, last);
    tu_check_same_text("unindexed after the optimize", unindexed_id, last);
    CHECK(strstr(before, last) == NULL);
    free(before);
    free(unindexed);
    free(unindexed_id);
    check_state("optimize_delta");
}

/* Both indices rebuilt over a new plan (replacing every segment), then
 * merged down: two sources into one, that merged segment with a third,
 * and the result with the last, each merge committed in place of its
 * sources and answering as they did. */
static SkSet sources_vec, sources_id;

static void step_rebuild(void) {
    build_planned(ds, GROUPS, &sources_vec, &sources_id, NULL);
    LanceCommitIndexOptions replace = {.replace = true};
    CHECK_OK(sk_commit(ds, "vec_idx", &sources_vec, &replace, NULL));
    CHECK_OK(commit_id(ds, &sources_id, &replace, NULL));
    CHECK(lance_dataset_index_segment_count(ds, "vec_idx") == GROUPS);
    CHECK(lance_dataset_index_segment_count(ds, "id_idx") == GROUPS);
    check_state("rebuild");
}

/* The result of the merges so far, one segment of each index. */
static SkSet merged_vec, merged_id;

/* Merges the segments `vec` and `id` (a source or an earlier merge) with
 * the sources' segment `source`, commits both merged segments in place of
 * what they merged, and makes them merged_vec and merged_id. */
static void merge_with(const uint8_t* vec, size_t vec_len, const uint8_t* id, size_t id_len, int source,
                       uint64_t segments_after) {
    SkSet v = merge_two(vec, vec_len, sources_vec.bytes[source], sources_vec.lens[source]);
    SkSet i = merge_two(id, id_len, sources_id.bytes[source], sources_id.lens[source]);
    if (v.count == 1) {
        char* got = segment_fragments(v.bytes[0], v.lens[0]);
        char* a = segment_fragments(vec, vec_len);
        char* b = segment_fragments(sources_vec.bytes[source], sources_vec.lens[source]);
        TuText want = {0};
        tu_text_append(&want, "%s,%s", a, b);
        char* w = tu_text_take(&want);
        tu_check_same_text("the merged segment covers its sources' fragments", got, w);
        free(got);
        free(a);
        free(b);
        free(w);
    }
    LanceCommitIndexOptions replace = {.replace = true};
    CHECK_OK(sk_commit(ds, "vec_idx", &v, &replace, NULL));
    CHECK_OK(commit_id(ds, &i, &replace, NULL));
    CHECK(lance_dataset_index_segment_count(ds, "vec_idx") == segments_after);
    CHECK(lance_dataset_index_segment_count(ds, "id_idx") == segments_after);
    sk_set_free(&merged_vec);
    sk_set_free(&merged_id);
    merged_vec = v;
    merged_id = i;
}

/* Sources 0 and 1 merged. */
static void step_merge(void) {
    merge_with(sources_vec.bytes[0], sources_vec.lens[0], sources_id.bytes[0], sources_id.lens[0], 1, GROUPS - 1);
    check_state("merge");
}

/* The merged segment merged with source 2. */
static void step_merge_merged(void) {
    merge_with(merged_vec.bytes[0], merged_vec.lens[0], merged_id.bytes[0], merged_id.lens[0], 2, GROUPS - 2);
    check_state("merge_merged");
}

/* And that with source 3: one segment per index, over every fragment. */
static void step_merge_merged_again(void) {
    merge_with(merged_vec.bytes[0], merged_vec.lens[0], merged_id.bytes[0], merged_id.lens[0], 3, 1);
    sk_set_free(&merged_vec);
    sk_set_free(&merged_id);
    sk_set_free(&sources_vec);
    sk_set_free(&sources_id);
    check_state("merge_merged_again");
}

/* Rows 1500-1599 appended, then the core's default optimize: the new rows
 * and the load's are indexed. */
static void step_optimize(void) {
    append_rows(1500, 100);
    CHECK_OK(lance_dataset_optimize_indices(ds, NULL));
    char* unindexed = coverage_list("vec_idx", "unindexed_fragments");
    char* unindexed_id = coverage_list("id_idx", "unindexed_fragments");
    tu_check_same_text("nothing left unindexed", unindexed, "");
    tu_check_same_text("nothing left unindexed", unindexed_id, "");
    free(unindexed);
    free(unindexed_id);
    check_state("optimize");
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s PYTHON ORACLE_SCRIPT\n", argv[0]);
        return 2;
    }
    python = argv[1];
    oracle_script = argv[2];
    double start = tu_now();
    data = tu_make_data(MAX_ID, DIM, 12, 0.5f, 4301);
    other = tu_make_data(MAX_ID, DIM, 12, 0.5f, 4302);
    held = dk_rows_new(MAX_ID, DIM);
    /* Queries at rows that are deleted (253), updated (270), merged
     * (1160, 1305 from `other`), loaded by pylance (1400, 1620) and kept
     * (7); and halfway between two rows, whose neighbours lie in several
     * partitions. */
    static const int at[] = {7, 253, 270, 1160, 1305, 1400, 1620};
    static const int between[][2] = {{11, 600}, {1190, 40}, {1210, 333}};
    for (int q = 0; q < QUERIES; q++) {
        const int* rows = q < 7 ? &at[q] : between[q - 7];
        for (int j = 0; j < DIM; j++) {
            float sum = 0;
            for (int i = 0; i < (q < 7 ? 1 : 2); i++) {
                const TuData* from = rows[i] >= 1150 && rows[i] < 1350 ? &other : &data;
                sum += from->vectors[(size_t)rows[i] * DIM + j];
            }
            queries[q][j] = q < 7 ? sum : sum / 2;
        }
    }
    dir = dk_temp_uri("lifecycle", "table", uri, sizeof uri);
    RUN(step_build);
    RUN(step_append);
    RUN(step_delete);
    RUN(step_update);
    RUN(step_merge_insert);
    RUN(step_concurrent_load);
    RUN(step_compact);
    RUN(step_compact_deferred);
    RUN(step_optimize_delta);
    RUN(step_rebuild);
    RUN(step_merge);
    RUN(step_merge_merged);
    RUN(step_merge_merged_again);
    RUN(step_optimize);
    printf("    %.1f s\n", tu_now() - start);
    lance_dataset_close(ds);
    lance_vector_model_free(model);
    tu_remove_tree(dir);
    free(dir);
    dk_rows_free(&held);
    tu_free_data(&data);
    tu_free_data(&other);
    return tu_finish("test_lifecycle");
}
