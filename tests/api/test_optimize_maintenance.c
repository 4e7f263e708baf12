/* Index maintenance for workers (lance.h "Index maintenance",
 * lance_dataset_plan_index_maintenance(), and "Distributed index builds:
 * coverage and statistics", lance_dataset_index_segment_metadata()).
 *
 * A table of 16 fragments of 100 rows has two indices committed as 8
 * segments of 2 fragments each: vec_idx (IVF_FLAT, one shared model) and
 * id_idx (BTREE).  Then 3 fragments are appended (unindexed), and a delete
 * takes every row of fragment 5 (so the segments over {4,5} cover a
 * fragment that left: a stale fragment) and a few rows of fragments 0 and
 * 17.  Every plan is asserted as whole JSON: each task's kind, the
 * segments it replaces (by the UUIDs this test built, or read from the
 * listing), its fragments and rows, the segment counts before and after,
 * the policy in force (chosen, defaulted, forced by max_segments).  The
 * committed segments' bytes (lance_dataset_index_segment_metadata()) are
 * checked against the listing, and both calls' refusals with their codes.
 * Then every plan is run as lance.h says a coordinator runs one (builders
 * with the shared model for build and rebuild, the committed segments'
 * bytes merged for merge) and committed in ONE call with replace: the
 * index then holds exactly the segments it kept and the outputs, the
 * coverage report shows nothing unindexed or stale, k-NN probing every
 * partition equals brute force over the live rows, the key filters
 * (answered by the BTREE) select exactly the live rows they must, and a
 * retried commit is answered as already committed.  Last, a plan gone
 * stale before its commit is refused with LANCE_ERR_STALE_SEGMENT.
 *
 * Usage: test_optimize_maintenance */
#include <stdbool.h>
#include <string.h>

#include "dataset_kit.h"
#include "json.h"
#include "knn_kit.h"
#include "rows_text.h" /* tu_check_same_text() */
#include "segment_kit.h"
#include "test_util.h"
#include "uuid_hex.h"

#define DIM 16
#define PARTITIONS 8 /* probed all: IVF_FLAT then equals brute force */
#define K 10
#define MAX_ID 2100 /* rows 0-1599 written, 1600-1899 appended, 1900-2099 in the last case */
#define SEGMENTS 8  /* each index's first segments, fragments {2w, 2w+1} */
#define QUERIES 10
#define IA LANCE_ERR_INVALID_ARGUMENT

/* One index as the coordinator builds its segments. */
typedef struct {
    const char* name;
    const char* column;
    bool vector; /* IVF_FLAT with the shared model; else BTREE */
} Index;
static const Index VEC = {"vec_idx", "vec", true};
static const Index KEY = {"id_idx", "id", false};

static TuData data;
static char* dir;
static char uri[600];
static LanceDataset* ds; /* the table, at its latest version after each case */
static LanceVectorModel* model;
static char* fingerprint; /* the model's, as segments record it */
static LanceVectorIndexParams params;
static int uuid_seed = 200; /* the coordinator's new segments; the first ones are 100-107 */
static char vec_uuids[SEGMENTS][UUID_HEX_DASHED_LEN + 1];
static char key_uuids[SEGMENTS][UUID_HEX_DASHED_LEN + 1]; /* the core chooses BTREE segments' UUIDs */
static DkRows held;                                       /* the rows the table must hold; made by main() */
static float queries[QUERIES][DIM];

/* The key filters, each answered by id_idx, and the ids they select. */
static const char* const FILTERS[] = {"id >= 350 AND id < 1250", "id >= 1650 AND id < 1880", "id < 20 OR id >= 1890",
                                      "id >= 1890 AND id < 1910"};
#define FILTER_COUNT (sizeof FILTERS / sizeof FILTERS[0])

static bool selects(size_t filter, int id) {
    switch (filter) {
    case 0: return id >= 350 && id < 1250;
    case 1: return id >= 1650 && id < 1880;
    case 2: return id < 20 || id >= 1890;
    default: return id >= 1890 && id < 1910;
    }
}

/* ---- JSON compared as content ---- */

/* `v` as JSON with every object's keys sorted, so that two documents with
 * the same content give the same text whatever their key order. */
static void canon(TuText* t, const JValue* v) {
    switch (v->type) {
    case J_NULL: tu_text_append(t, "null"); return;
    case J_BOOL: tu_text_append(t, v->number != 0 ? "true" : "false"); return;
    case J_NUMBER: tu_text_append(t, "%.17g", v->number); return;
    case J_STRING:
        tu_text_append(t, "\"");
        for (const unsigned char* c = (const unsigned char*)v->string; *c; c++)
            tu_text_append(t, *c == '"' || *c == '\\' ? "\\%c" : *c < 0x20 ? "\\u%04x" : "%c", *c);
        tu_text_append(t, "\"");
        return;
    case J_ARRAY:
        tu_text_append(t, "[");
        for (size_t i = 0; i < v->count; i++) {
            if (i) tu_text_append(t, ",");
            canon(t, v->items[i]);
        }
        tu_text_append(t, "]");
        return;
    case J_OBJECT: {
        char** keys = malloc(sizeof(char*) * (v->count + 1));
        if (!keys) abort();
        memcpy(keys, v->keys, sizeof(char*) * v->count);
        qsort(keys, v->count, sizeof(char*), dk_compare_strings);
        tu_text_append(t, "{");
        for (size_t i = 0; i < v->count; i++) {
            tu_text_append(t, "%s\"%s\":", i ? "," : "", keys[i]);
            canon(t, json_get(v, keys[i]));
        }
        tu_text_append(t, "}");
        free(keys);
        return;
    }
    }
}

/* The canonical text of the document `text` (malloc'd); NULL when `text`
 * is NULL or no JSON. */
static char* canon_text(const char* text) {
    JValue* v = text ? json_parse(text) : NULL;
    if (!v) return NULL;
    TuText t = {0};
    canon(&t, v);
    json_free(v);
    return tu_text_take(&t);
}

/* The documents `got` (the library's) and `want` (this test's) hold the
 * same content: every key, value and order of array items. */
static void check_json(const char* what, const char* got, const char* want) {
    char* a = canon_text(got);
    char* b = canon_text(want);
    CHECK(b != NULL);
    tu_check_same_text(what, a, b);
    free(a);
    free(b);
}

/* ---- what a plan must say ---- */

typedef struct {
    const char* kind;
    const char* uuids[SEGMENTS + 1]; /* rebuild, merge: the segments replaced, NULL-terminated */
    const char* fragment_ids;        /* "16,17,18" */
    uint64_t rows;
} Task;

typedef struct {
    uint64_t target, small;
    uint32_t max;
} Policy;
static const Policy DEFAULTS = {1048576, 262144, 32};

/* The plan of index `ix` at the table's version, as JSON text (malloc'd). */
static char* plan_json(const Index* ix, Policy p, int before, int after, const Task* tasks, int count) {
    TuText t = {0};
    tu_text_append(&t, "{\"index\":\"%s\",\"columns\":[\"%s\"],\"type\":\"%s\",\"dataset_version\":%llu,", ix->name,
                   ix->column, ix->vector ? "IVF_FLAT" : "BTree", (unsigned long long)lance_dataset_version(ds));
    if (ix->vector) tu_text_append(&t, "\"model_fingerprint\":\"%s\",", fingerprint ? fingerprint : "?");
    else tu_text_append(&t, "\"model_fingerprint\":null,");
    tu_text_append(&t,
                   "\"policy\":{\"target_rows_per_segment\":%llu,\"small_segment_rows\":%llu,\"max_segments\":%u},"
                   "\"segments_before\":%d,\"segments_after\":%d,\"tasks\":[",
                   (unsigned long long)p.target, (unsigned long long)p.small, p.max, before, after);
    for (int i = 0; i < count; i++) {
        tu_text_append(&t, "%s{\"kind\":\"%s\",", i ? "," : "", tasks[i].kind);
        if (strcmp(tasks[i].kind, "build") != 0) {
            tu_text_append(&t, "\"segment_uuids\":[");
            for (int u = 0; tasks[i].uuids[u]; u++) tu_text_append(&t, "%s\"%s\"", u ? "," : "", tasks[i].uuids[u]);
            tu_text_append(&t, "],");
        }
        tu_text_append(&t, "\"fragment_ids\":[%s],\"rows\":%llu}", tasks[i].fragment_ids,
                       (unsigned long long)tasks[i].rows);
    }
    tu_text_append(&t, "],\"stale_segments\":[],\"drift\":null}");
    return tu_text_take(&t);
}

/* The plan of `ix` with `p` (all zero: a NULL options pointer) is exactly
 * the one described. */
static void check_plan(const char* what, const Index* ix, Policy p, Policy in_force, int before, int after,
                       const Task* tasks, int count) {
    LanceIndexMaintenanceOptions o = {p.target, p.small, p.max, 0};
    bool defaults = p.target == 0 && p.small == 0 && p.max == 0;
    char* plan = lance_dataset_plan_index_maintenance(ds, ix->name, defaults ? NULL : &o);
    CHECK(plan != NULL);
    char* want = plan_json(ix, in_force, before, after, tasks, count);
    check_json(what, plan, want);
    free(want);
    lance_free_string(plan);
}

/* The coverage report of index `name` is exactly the one described. */
static void check_coverage(const char* name, int segments, const char* indexed, const char* unindexed,
                           uint64_t indexed_rows, uint64_t unindexed_rows, const char* stale) {
    char* got = lance_dataset_index_coverage_json(ds, name);
    CHECK(got != NULL);
    TuText t = {0};
    tu_text_append(&t,
                   "{\"name\":\"%s\",\"dataset_version\":%llu,\"num_segments\":%d,\"indexed_fragments\":[%s],"
                   "\"unindexed_fragments\":[%s],\"indexed_rows\":%llu,\"unindexed_rows\":%llu,"
                   "\"stale_fragments\":[%s]}",
                   name, (unsigned long long)lance_dataset_version(ds), segments, indexed, unindexed,
                   (unsigned long long)indexed_rows, (unsigned long long)unindexed_rows, stale);
    char* want = tu_text_take(&t);
    check_json(name, got, want);
    free(want);
    lance_free_string(got);
}

/* ---- segments ---- */

/* "<uuid> <fragment ids>" of one segment's metadata bytes (malloc'd), as
 * listing() writes a listed segment; the UUID also into `uuid` unless NULL. */
static char* describe(const uint8_t* bytes, size_t len, uint8_t* uuid) {
    LanceIndexSegmentMetadata* m = NULL;
    CHECK_OK(lance_index_segment_metadata_parse(bytes, len, &m));
    uint8_t raw[16] = {0};
    char dashed[UUID_HEX_DASHED_LEN + 1];
    uint32_t ids[64];
    size_t n = 0;
    CHECK_OK(lance_index_segment_metadata_uuid(m, raw));
    CHECK_OK(lance_index_segment_metadata_fragment_ids(m, ids, 64, &n));
    lance_index_segment_metadata_free(m);
    uuid_hex_format_dashed(raw, dashed);
    if (uuid) memcpy(uuid, raw, 16);
    TuText t = {0};
    tu_text_append(&t, "%s ", dashed);
    for (size_t i = 0; i < n && i < 64; i++) tu_text_append(&t, i ? ",%u" : "%u", ids[i]);
    return tu_text_take(&t);
}

/* Sorts `n` lines and joins them with '\n' (malloc'd), freeing each. */
static char* join_sorted(char** lines, size_t n) {
    qsort(lines, n, sizeof *lines, dk_compare_strings);
    TuText t = {0};
    for (size_t i = 0; i < n; i++) {
        tu_text_append(&t, "%s\n", lines[i]);
        free(lines[i]);
    }
    return tu_text_take(&t);
}

/* The segments JSON of the table's version (a failed check when it cannot
 * be had); json_free() it. */
static JValue* segments_json(void) {
    char* text = lance_dataset_index_segments_json(ds);
    CHECK(text != NULL);
    JValue* v = text ? json_parse(text) : NULL;
    lance_free_string(text);
    CHECK(v && v->type == J_ARRAY);
    return v;
}

/* Index `name`'s segments as lance_dataset_index_segments_json() lists
 * them: a sorted line "<uuid> <fragment ids>" each (malloc'd); their count
 * into *count unless NULL. */
static char* listing(const char* name, int* count) {
    JValue* all = segments_json();
    size_t n = 0;
    char** lines = calloc(all ? all->count + 1 : 1, sizeof *lines);
    if (!lines) abort();
    for (size_t i = 0; all && i < all->count; i++) {
        const JValue *s = all->items[i], *of = json_get(s, "name"), *uuid = json_get(s, "uuid");
        CHECK(of && of->string && uuid && uuid->string);
        if (!of || !of->string || strcmp(of->string, name) != 0 || !uuid || !uuid->string) continue;
        TuText t = {0};
        tu_text_append(&t, "%s ", uuid->string);
        dk_append_json_ids(&t, json_get(s, "fragment_ids"));
        lines[n++] = tu_text_take(&t);
    }
    json_free(all);
    if (count) *count = (int)n;
    char* text = join_sorted(lines, n);
    free(lines);
    return text;
}

/* The UUID of index `name`'s segment whose first fragment is `first`, as
 * listed, into out; "" when there is none (a failed check). */
static void uuid_of(const char* name, uint32_t first, char out[UUID_HEX_DASHED_LEN + 1]) {
    out[0] = '\0';
    JValue* all = segments_json();
    for (size_t i = 0; all && i < all->count; i++) {
        const JValue *s = all->items[i], *of = json_get(s, "name"), *uuid = json_get(s, "uuid");
        const JValue* fragments = json_get(s, "fragment_ids");
        if (of && of->string && strcmp(of->string, name) == 0 && uuid && uuid->string && fragments &&
            fragments->count > 0 && fragments->items[0]->number == (double)first)
            snprintf(out, UUID_HEX_DASHED_LEN + 1, "%s", uuid->string);
    }
    json_free(all);
    CHECK(out[0] != '\0');
}

/* One segment of index `ix` over `fragment_ids` at `at`'s version, as a
 * worker builds it: the vector index's with the shared model and a UUID of
 * the coordinator's; the BTREE's with the core's UUID (Lance refuses
 * caller UUIDs for fragment-scoped BTREE builds). */
static uint8_t* build_segment(LanceDataset* at, const Index* ix, const uint32_t* fragment_ids, size_t count,
                              size_t* len) {
    if (ix->vector) {
        uint8_t* bytes = tu_vector_segment(at, &params, model, fragment_ids, count, uuid_seed++, len);
        CHECK(bytes != NULL);
        return bytes;
    }
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = fragment_ids;
    o.fragment_count = count;
    return sk_execute(lance_index_segment_builder_new_scalar(at, ix->column, ix->name, LANCE_SCALAR_BTREE, NULL, &o),
                      len, true);
}

/* The set committed as index `ix`, with replace, in one call. */
static int commit(LanceDataset* at, const Index* ix, const SkSet* s, LanceCommitIndexResult* r) {
    LanceCommitIndexOptions o = {0};
    o.replace = true;
    return lance_dataset_commit_index_segments_v2(at, ix->name, ix->column, s->ptrs, s->lens, (size_t)s->count, &o, r);
}

/* ---- running a plan ---- */

/* The ids of a JSON list of numbers into out[0..64); the count. */
static size_t fragment_list(const JValue* list, uint32_t* out) {
    size_t n = 0;
    for (size_t i = 0; list && i < list->count && n < 64; i++) out[n++] = (uint32_t)list->items[i]->number;
    return n;
}

/* Every task of `plan` (index `ix`) run at `at`'s version as the workers of
 * a coordinator run them: build and rebuild with a segment builder over the
 * task's fragments, merge with the committed sources' bytes
 * (lance_dataset_index_segment_metadata()) merged.  Each output covers
 * exactly the task's fragments.  The outputs, in task order. */
static SkSet run_plan(LanceDataset* at, const Index* ix, const JValue* plan) {
    SkSet out = {0};
    const JValue* tasks = json_get(plan, "tasks");
    CHECK(tasks && tasks->type == J_ARRAY);
    for (size_t i = 0; tasks && i < tasks->count; i++) {
        const JValue* task = tasks->items[i];
        const JValue* kind = json_get(task, "kind");
        uint32_t fragment_ids[64];
        size_t count = fragment_list(json_get(task, "fragment_ids"), fragment_ids);
        CHECK(kind && kind->string && count > 0);
        if (!kind || !kind->string) continue;
        uint8_t* bytes = NULL;
        size_t len = 0;
        if (strcmp(kind->string, "merge") == 0) {
            const JValue* uuids = json_get(task, "segment_uuids");
            CHECK(uuids && uuids->count >= 2 && uuids->count <= SEGMENTS);
            uint8_t* sources[SEGMENTS] = {0};
            size_t lens[SEGMENTS] = {0};
            size_t n = 0;
            for (; uuids && n < uuids->count && n < SEGMENTS; n++)
                CHECK_OK(
                    lance_dataset_index_segment_metadata(at, ix->name, uuids->items[n]->string, &sources[n], &lens[n]));
            CHECK_OK(lance_dataset_merge_index_segments(at, (const uint8_t* const*)sources, lens, n, &bytes, &len));
            for (size_t s = 0; s < n; s++) lance_free_bytes(sources[s]);
        } else {
            CHECK(strcmp(kind->string, "build") == 0 || strcmp(kind->string, "rebuild") == 0);
            bytes = build_segment(at, ix, fragment_ids, count, &len);
        }
        if (!bytes) continue;
        char* got = describe(bytes, len, NULL);
        TuText want = {0};
        for (size_t f = 0; f < count; f++) tu_text_append(&want, f ? ",%u" : "%u", fragment_ids[f]);
        char* fragments = tu_text_take(&want);
        const char* space = strchr(got, ' ');
        tu_check_same_text("an output covers its task's fragments", space ? space + 1 : got, fragments);
        free(fragments);
        free(got);
        sk_set_add(&out, bytes, &len);
    }
    return out;
}

/* What the listing of `ix` must be once `outputs` are committed in place of
 * the segments `plan`'s tasks name, given the listing `before`. */
static char* listing_after(const char* before, const JValue* plan, const SkSet* outputs) {
    const JValue* tasks = json_get(plan, "tasks");
    char** lines = calloc(SEGMENTS * 4 + (size_t)outputs->count + 1, sizeof *lines);
    if (!lines) abort();
    size_t n = 0;
    for (const char* line = before; line && *line && n < SEGMENTS * 4;) {
        const char* end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        bool replaced = false;
        for (size_t i = 0; tasks && i < tasks->count; i++) {
            const JValue* uuids = json_get(tasks->items[i], "segment_uuids");
            for (size_t u = 0; uuids && u < uuids->count; u++)
                replaced |= strncmp(line, uuids->items[u]->string, UUID_HEX_DASHED_LEN) == 0;
        }
        if (!replaced) {
            TuText kept = {0};
            tu_text_append(&kept, "%.*s", (int)len, line);
            lines[n++] = tu_text_take(&kept);
        }
        line = end ? end + 1 : line + len;
    }
    for (int i = 0; i < outputs->count; i++) lines[n++] = describe(outputs->bytes[i], outputs->lens[i], NULL);
    char* text = join_sorted(lines, n);
    free(lines);
    return text;
}

/* A number of the plan; -1 when missing. */
static int plan_number(const JValue* plan, const char* key) {
    const JValue* v = json_get(plan, key);
    return v && v->type == J_NUMBER ? (int)v->number : -1;
}

/* One maintenance round of `ix` through the table's handle: `plan_text`
 * (made from its version) run and its outputs committed in ONE call with
 * replace.  The index then holds exactly the segments the plan kept and the
 * outputs, segments_after of them, in one new version; the coordinator
 * that lost the reply and commits the same bytes again (on a handle of its
 * own) is answered as already committed, at that version. */
static void run_round(const Index* ix, const char* plan_text) {
    JValue* plan = plan_text ? json_parse(plan_text) : NULL;
    CHECK(plan != NULL);
    if (!plan) return;
    char* before = listing(ix->name, NULL);
    SkSet out = run_plan(ds, ix, plan);
    char* want = listing_after(before, plan, &out);
    uint64_t version = lance_dataset_version(ds);
    LanceCommitIndexResult r = {0};
    CHECK_OK(commit(ds, ix, &out, &r));
    CHECK(r.version == version + 1 && !r.already_committed && lance_dataset_version(ds) == version + 1);
    int count = 0;
    char* got = listing(ix->name, &count);
    tu_check_same_text("the index after the round", got, want);
    CHECK(count == plan_number(plan, "segments_after"));
    CHECK(lance_dataset_index_segment_count(ds, ix->name) == (uint64_t)count);

    LanceDataset* retry = lance_dataset_open(uri, NULL, 0);
    CHECK(retry != NULL);
    LanceCommitIndexResult again = {0};
    CHECK_OK(commit(retry, ix, &out, &again));
    CHECK(again.version == version + 1 && again.already_committed);
    CHECK(lance_dataset_latest_version(retry) == version + 1);
    lance_dataset_close(retry);

    sk_set_free(&out);
    free(before);
    free(want);
    free(got);
    json_free(plan);
}

/* ---- the rows and the answers ---- */

/* Rows [first, first + count) appended through lance-c, 100 a fragment. */
static void append_rows(int first, int count) {
    LanceDataset* next = tu_write(uri, &data, first, count, LANCE_WRITE_APPEND, 100);
    CHECK(next != NULL);
    if (!next) return;
    lance_dataset_close(ds);
    ds = next;
    dk_rows_mark(&held, first, count, &data);
}

/* The table answers exactly: its row count, k-NN through vec_idx (whose
 * segments hold `vec_rows` rows) equal to brute force over the live
 * rows, and each key filter's rows exactly its live rows, id_idx comparing
 * keys for the filters in the mask `key_indexed` (bit f: filter f selects
 * rows of fragments it covers) and for no other. */
static void check_answers(uint64_t vec_rows, unsigned key_indexed) {
    CHECK(lance_dataset_count_rows(ds) == (uint64_t)dk_rows_count(&held));
    /* Every partition probed: IVF_FLAT compares the query with every row its segments hold. */
    CHECK(kk_comparisons(ds, queries[0], DIM, K, PARTITIONS) == vec_rows);
    TuData rows = dk_rows_data(&held);
    for (int q = 0; q < QUERIES; q++) kk_check_exact(ds, &rows, queries[q], K, PARTITIONS);
    tu_free_data(&rows);
    for (size_t f = 0; f < FILTER_COUNT; f++) {
        uint64_t comparisons = 0;
        char* got = dk_filter_ids(ds, FILTERS[f], MAX_ID, -1, kk_add_comparisons, &comparisons);
        char* want = dk_rows_ids(&held, selects, f);
        tu_check_same_text(FILTERS[f], got, want);
        CHECK((comparisons > 0) == ((key_indexed >> f) & 1));
        free(got);
        free(want);
    }
}

/* ---- the cases ---- */

/* Version 5: both indices as 8 segments over {0,1} ... {14,15} (v2, v3),
 * fragments 16-18 appended (v4), then every row of fragment 5 deleted, with
 * rows 3, 13, ..., 93 of fragment 0 and 1700-1709 of fragment 17 (v5). */
static void test_setup(void) {
    ds = tu_write(uri, &data, 0, 1600, LANCE_WRITE_CREATE, 100);
    CHECK(ds != NULL);
    if (!ds) return;
    dk_rows_mark(&held, 0, 1600, &data);
    CHECK(lance_dataset_fragment_count(ds) == 16);
    params = sk_params(LANCE_INDEX_IVF_FLAT, PARTITIONS, 0);
    model = sk_train(ds, &params, NULL, 0);
    fingerprint = lance_vector_model_fingerprint(model);
    CHECK(fingerprint != NULL);

    SkSet vec = sk_build_set(ds, &params, model, SEGMENTS, 2, 100);
    SkSet key = {0};
    for (int w = 0; w < SEGMENTS; w++) {
        uint8_t uuid[16];
        tu_uuid(100 + w, uuid);
        uuid_hex_format_dashed(uuid, vec_uuids[w]);
        uint32_t fragment_ids[] = {(uint32_t)(2 * w), (uint32_t)(2 * w + 1)};
        size_t len = 0;
        uint8_t* bytes = build_segment(ds, &KEY, fragment_ids, 2, &len);
        if (bytes) {
            free(describe(bytes, len, uuid));
            uuid_hex_format_dashed(uuid, key_uuids[w]);
        }
        sk_set_add(&key, bytes, &len);
    }
    LanceCommitIndexResult r = {0};
    CHECK_OK(commit(ds, &VEC, &vec, &r));
    CHECK(r.version == 2 && !r.already_committed);
    CHECK_OK(commit(ds, &KEY, &key, &r));
    CHECK(r.version == 3 && !r.already_committed);
    sk_set_free(&vec);
    sk_set_free(&key);

    append_rows(1600, 300);
    CHECK(lance_dataset_version(ds) == 4 && lance_dataset_fragment_count(ds) == 19);
    uint64_t deleted = 0;
    CHECK_OK(lance_dataset_delete(ds,
                                  "(id >= 500 AND id < 600) OR (id < 100 AND id % 10 = 3) OR "
                                  "(id >= 1700 AND id < 1710)",
                                  &deleted));
    CHECK(deleted == 120 && lance_dataset_version(ds) == 5);
    for (int id = 0; id < MAX_ID; id++)
        if ((id >= 500 && id < 600) || (id < 100 && id % 10 == 3) || (id >= 1700 && id < 1710)) held.live[id] = false;
    /* Fragment 5 left the table; the segments over {4,5} still cover it. */
    CHECK(lance_dataset_fragment_count(ds) == 18);
    for (int i = 0; i < 2; i++)
        check_coverage(i ? "id_idx" : "vec_idx", SEGMENTS, "0,1,2,3,4,6,7,8,9,10,11,12,13,14,15", "16,17,18", 1490, 290,
                       "5");
    /* vec_idx's segments hold the 1600 rows of fragments 0-15 as written
     * (5's too); filters 1 and 3 select rows of the unindexed 16-18 only. */
    check_answers(1600, 0x5);
}

/* The plans of version 5, each asserted whole. */
static void test_plan(void) {
    /* target 400, small 250, at most 6 segments: the delta over 16-18 and
     * the rebuild of {4,5} over 4 leave room for 4 of the 7 other
     * segments, so the smallest neighbours merge (each pair 400 rows) until
     * 4 remain; {14,15} stays alone. */
    Policy chosen = {400, 250, 6};
    Task tasks[] = {
        {"build", {NULL}, "16,17,18", 290}, /* live rows: 1700-1709 are deleted */
        {"rebuild", {vec_uuids[2], NULL}, "4", 100},
        {"merge", {vec_uuids[0], vec_uuids[1], NULL}, "0,1,2,3", 400}, /* rows written: 10 of them deleted */
        {"merge", {vec_uuids[3], vec_uuids[4], NULL}, "6,7,8,9", 400},
        {"merge", {vec_uuids[5], vec_uuids[6], NULL}, "10,11,12,13", 400},
    };
    check_plan("vec_idx, target 400, small 250, max 6", &VEC, chosen, chosen, SEGMENTS, 6, tasks, 5);

    /* The same version gives the same text, through another handle too. */
    LanceIndexMaintenanceOptions o = {400, 250, 6, 0};
    char* first = lance_dataset_plan_index_maintenance(ds, "vec_idx", &o);
    char* second = lance_dataset_plan_index_maintenance(ds, "vec_idx", &o);
    LanceDataset* other = lance_dataset_open(uri, NULL, 0);
    char* third = lance_dataset_plan_index_maintenance(other, "vec_idx", &o);
    CHECK(first && second && third && strcmp(first, second) == 0 && strcmp(first, third) == 0);
    lance_free_string(first);
    lance_free_string(second);
    lance_free_string(third);
    lance_dataset_close(other);

    /* Defaults (NULL, or zeroed options): every segment is small, so all
     * seven that need no rebuild merge into one. */
    Policy none = {0, 0, 0};
    Task all[] = {
        {"build", {NULL}, "16,17,18", 290},
        {"rebuild", {vec_uuids[2], NULL}, "4", 100},
        {"merge",
         {vec_uuids[0], vec_uuids[1], vec_uuids[3], vec_uuids[4], vec_uuids[5], vec_uuids[6], vec_uuids[7], NULL},
         "0,1,2,3,6,7,8,9,10,11,12,13,14,15",
         1400},
    };
    check_plan("vec_idx, defaults", &VEC, none, DEFAULTS, SEGMENTS, 3, all, 3);
    LanceIndexMaintenanceOptions zero = {0};
    char* by_null = lance_dataset_plan_index_maintenance(ds, "vec_idx", NULL);
    char* by_zero = lance_dataset_plan_index_maintenance(ds, "vec_idx", &zero);
    CHECK(by_null && by_zero && strcmp(by_null, by_zero) == 0);
    lance_free_string(by_null);
    lance_free_string(by_zero);

    /* max_segments 3: one segment may stay beside the delta and the
     * rebuild, so all seven merge, beyond the target. */
    Policy three = {400, 250, 3};
    check_plan("vec_idx, max 3", &VEC, three, three, SEGMENTS, 3, all, 3);

    /* Only a target: small = target / 4 = 100, and no segment is below
     * it; max_segments 32 forces nothing. */
    Policy target = {400, 0, 0};
    Policy target_in_force = {400, 100, 32};
    check_plan("vec_idx, target 400", &VEC, target, target_in_force, SEGMENTS, 9, tasks, 2);

    /* The BTREE index, defaults: the same shape, its own UUIDs, no model. */
    Task key[] = {
        {"build", {NULL}, "16,17,18", 290},
        {"rebuild", {key_uuids[2], NULL}, "4", 100},
        {"merge",
         {key_uuids[0], key_uuids[1], key_uuids[3], key_uuids[4], key_uuids[5], key_uuids[6], key_uuids[7], NULL},
         "0,1,2,3,6,7,8,9,10,11,12,13,14,15",
         1400},
    };
    check_plan("id_idx, defaults", &KEY, none, DEFAULTS, SEGMENTS, 3, key, 3);
    CHECK(lance_dataset_version(ds) == 5 && lance_dataset_latest_version(ds) == 5);
}

/* lance_dataset_index_segment_metadata() of every committed segment of
 * both indices: the bytes of the hyphenated and of the 32-hex form (either
 * case) are the same, and parse to the UUID, name, type and fragments the
 * segments JSON lists (for {4,5}: both, as the version records it). */
static void test_segment_metadata(void) {
    JValue* all = segments_json();
    int seen = 0;
    for (size_t i = 0; all && i < all->count; i++) {
        const JValue *s = all->items[i], *name = json_get(s, "name"), *uuid = json_get(s, "uuid");
        if (!name || !name->string || !uuid || !uuid->string) continue;
        bool vector = strcmp(name->string, "vec_idx") == 0;
        uint8_t raw[16];
        CHECK(uuid_hex_parse(uuid->string, raw) == 0);
        char hex[UUID_HEX_LEN + 1], upper[UUID_HEX_LEN + 1];
        uuid_hex_format(raw, hex);
        for (int c = 0; c <= UUID_HEX_LEN; c++) upper[c] = hex[c] >= 'a' && hex[c] <= 'f' ? hex[c] - 32 : hex[c];
        const char* forms[] = {uuid->string, hex, upper};
        uint8_t* bytes[3] = {0};
        size_t lens[3] = {0};
        for (int f = 0; f < 3; f++)
            CHECK_OK(lance_dataset_index_segment_metadata(ds, name->string, forms[f], &bytes[f], &lens[f]));
        CHECK(bytes[0] && bytes[1] && bytes[2] && lens[0] > 0 && lens[1] == lens[0] && lens[2] == lens[0] &&
              memcmp(bytes[1], bytes[0], lens[0]) == 0 && memcmp(bytes[2], bytes[0], lens[0]) == 0);
        if (bytes[0]) {
            uint8_t got[16] = {0};
            char* described = describe(bytes[0], lens[0], got);
            TuText t = {0};
            tu_text_append(&t, "%s ", uuid->string);
            dk_append_json_ids(&t, json_get(s, "fragment_ids"));
            char* listed = tu_text_take(&t);
            tu_check_same_text("a committed segment's bytes", described, listed);
            CHECK(memcmp(got, raw, 16) == 0);
            free(described);
            free(listed);
            LanceIndexSegmentMetadata* m = NULL;
            CHECK_OK(lance_index_segment_metadata_parse(bytes[0], lens[0], &m));
            const char* recorded = lance_index_segment_metadata_name(m);
            CHECK(recorded && strcmp(recorded, name->string) == 0);
            CHECK(lance_index_segment_metadata_index_type(m) ==
                  (vector ? (int32_t)LANCE_INDEX_IVF_FLAT : (int32_t)LANCE_SCALAR_BTREE));
            const char* fp = lance_index_segment_metadata_model_fingerprint(m);
            CHECK(vector ? fp && fingerprint && strcmp(fp, fingerprint) == 0 : fp == NULL);
            lance_index_segment_metadata_free(m);
        }
        for (int f = 0; f < 3; f++) lance_free_bytes(bytes[f]);
        seen++;
    }
    json_free(all);
    CHECK(seen == 2 * SEGMENTS);
}

/* Every refusal of both calls, with its exact code; nothing committed. */
static void test_refusals(void) {
    struct {
        const LanceDataset* at;
        const char* name;
        LanceIndexMaintenanceOptions o;
        bool with_options;
        LanceErrorCode code;
        const char* mentions;
    } plans[] = {
        {NULL, "vec_idx", {0}, false, IA, "dataset"},
        {ds, NULL, {0}, false, IA, "index_name"},
        {ds, "", {0}, false, IA, "index_name"},
        {ds, "\xff\xfe", {0}, false, IA, "index_name"},
        {ds, "no_such_idx", {0}, false, LANCE_ERR_NOT_FOUND, "no_such_idx"},
        {ds, "vec", {0}, false, LANCE_ERR_NOT_FOUND, "vec"}, /* a column, no index */
        {ds, "vec_idx", {400, 401, 0, 0}, true, IA, "small_segment_rows"},
        {ds, "vec_idx", {0, 1048577, 0, 0}, true, IA, "small_segment_rows"}, /* above the default target */
    };
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
        char* plan = lance_dataset_plan_index_maintenance(plans[i].at, plans[i].name,
                                                          plans[i].with_options ? &plans[i].o : NULL);
        LanceErrorCode code = lance_last_error_code();
        CHECK(plan == NULL && code == plans[i].code);
        CHECK(tu_error_mentions(plans[i].mentions));
        if (plans[i].with_options) CHECK(tu_error_mentions("target_rows_per_segment"));
        lance_free_string(plan);
    }
    /* small_segment_rows equal to the target is a policy. */
    LanceIndexMaintenanceOptions equal = {400, 400, 0, 0};
    char* plan = lance_dataset_plan_index_maintenance(ds, "vec_idx", &equal);
    CHECK(plan != NULL);
    lance_free_string(plan);

    uint8_t unknown[16];
    char unknown_text[UUID_HEX_DASHED_LEN + 1];
    tu_uuid(99, unknown);
    uuid_hex_format_dashed(unknown, unknown_text);
    uint8_t sentinel_byte = 0;
    uint8_t* const sentinel = &sentinel_byte;
    struct {
        const LanceDataset* at;
        const char* name;
        const char* uuid;
        bool null_bytes, null_len;
        LanceErrorCode code;
        const char* mentions;
    } gets[] = {
        {NULL, "vec_idx", vec_uuids[0], false, false, IA, "dataset"},
        {ds, NULL, vec_uuids[0], false, false, IA, "index_name"},
        {ds, "", vec_uuids[0], false, false, IA, "index_name"},
        {ds, "vec_idx", NULL, false, false, IA, "segment_uuid"},
        {ds, "vec_idx", "", false, false, IA, "segment_uuid"},
        {ds, "vec_idx", "not-a-uuid", false, false, IA, "not-a-uuid"},
        {ds, "vec_idx", "0123456789abcdef0123456789abcde", false, false, IA, "segment_uuid"},   /* 31 digits */
        {ds, "vec_idx", "0123456789abcdef0123456789abcdef0", false, false, IA, "segment_uuid"}, /* 33 */
        {ds, "vec_idx", unknown_text, false, false, LANCE_ERR_NOT_FOUND, unknown_text},
        {ds, "no_such_idx", vec_uuids[0], false, false, LANCE_ERR_NOT_FOUND, "no_such_idx"},
        {ds, "vec_idx", key_uuids[0], false, false, LANCE_ERR_NOT_FOUND, key_uuids[0]}, /* another index's */
        {ds, "vec_idx", vec_uuids[0], true, false, IA, "out_metadata_bytes"},
        {ds, "vec_idx", vec_uuids[0], false, true, IA, "out_metadata_len"},
    };
    for (size_t i = 0; i < sizeof gets / sizeof gets[0]; i++) {
        uint8_t* bytes = sentinel;
        size_t len = 7;
        CHECK_ERR(
            lance_dataset_index_segment_metadata(gets[i].at, gets[i].name, gets[i].uuid,
                                                 gets[i].null_bytes ? NULL : &bytes, gets[i].null_len ? NULL : &len),
            gets[i].code);
        CHECK(tu_error_mentions(gets[i].mentions));
        CHECK(bytes == sentinel && len == 7); /* untouched on error */
    }
    CHECK(lance_dataset_version(ds) == 5 && lance_dataset_latest_version(ds) == 5);
}

/* The plans of version 5 run and committed: vec_idx with the chosen policy
 * (v6), id_idx with the defaults (v7); planning again right after gives
 * what the policy still wants: nothing for vec_idx; for id_idx, the merge
 * of its three segments (a plan never merges the segments it builds in the
 * same run), which runs (v8) and leaves nothing to do. */
static void test_run(void) {
    LanceIndexMaintenanceOptions o = {400, 250, 6, 0};
    char* plan = lance_dataset_plan_index_maintenance(ds, "vec_idx", &o);
    run_round(&VEC, plan);
    lance_free_string(plan);
    CHECK(lance_dataset_version(ds) == 6);
    check_coverage("vec_idx", 6, "0,1,2,3,4,6,7,8,9,10,11,12,13,14,15,16,17,18", "", 1780, 0, "");
    Policy chosen = {400, 250, 6};
    check_plan("vec_idx, planned again", &VEC, chosen, chosen, 6, 6, NULL, 0);

    plan = lance_dataset_plan_index_maintenance(ds, "id_idx", NULL);
    run_round(&KEY, plan);
    lance_free_string(plan);
    CHECK(lance_dataset_version(ds) == 7);
    check_coverage("id_idx", 3, "0,1,2,3,4,6,7,8,9,10,11,12,13,14,15,16,17,18", "", 1780, 0, "");
    char merged[UUID_HEX_DASHED_LEN + 1], rebuilt[UUID_HEX_DASHED_LEN + 1], built[UUID_HEX_DASHED_LEN + 1];
    uuid_of("id_idx", 0, merged);
    uuid_of("id_idx", 4, rebuilt);
    uuid_of("id_idx", 16, built);
    Policy none = {0, 0, 0};
    Task again[] = {{"merge", {merged, rebuilt, built, NULL}, "0,1,2,3,4,6,7,8,9,10,11,12,13,14,15,16,17,18", 1800}};
    check_plan("id_idx, planned again", &KEY, none, DEFAULTS, 3, 1, again, 1);
    plan = lance_dataset_plan_index_maintenance(ds, "id_idx", NULL);
    run_round(&KEY, plan);
    lance_free_string(plan);
    CHECK(lance_dataset_version(ds) == 8);
    check_coverage("id_idx", 1, "0,1,2,3,4,6,7,8,9,10,11,12,13,14,15,16,17,18", "", 1780, 0, "");
    check_plan("id_idx, planned a third time", &KEY, none, DEFAULTS, 1, 1, NULL, 0);
    check_coverage("vec_idx", 6, "0,1,2,3,4,6,7,8,9,10,11,12,13,14,15,16,17,18", "", 1780, 0, "");
    /* vec_idx's segments hold 1790 rows: fragments 0-4 and 6-18 as written
     * (1800), less 1700-1709, deleted before the delta over 16-18 was built
     * (the merged {0-3} keeps the rows of 0 deleted after its sources were). */
    check_answers(1790, 0xf);
}

/* A plan made from version 9 (fragments 19 and 20 appended) goes stale:
 * another writer deletes every row of fragment 20 (v10) while the workers
 * build over it.  The commit of the outputs is refused with
 * LANCE_ERR_STALE_SEGMENT, commits nothing, and a plan from the latest
 * version runs and commits (v11). */
static void test_stale_plan(void) {
    append_rows(1900, 200);
    CHECK(lance_dataset_version(ds) == 9 && lance_dataset_fragment_count(ds) == 20);
    char a[UUID_HEX_DASHED_LEN + 1], r[UUID_HEX_DASHED_LEN + 1];
    uuid_of("vec_idx", 0, a);
    uuid_of("vec_idx", 4, r);
    /* 6 segments and a delta: the smallest neighbours ({0-3} and {4}) merge. */
    Policy chosen = {400, 250, 6};
    Task tasks[] = {{"build", {NULL}, "19,20", 200}, {"merge", {a, r, NULL}, "0,1,2,3,4", 500}};
    check_plan("vec_idx at version 9", &VEC, chosen, chosen, 6, 6, tasks, 2);
    LanceIndexMaintenanceOptions o = {400, 250, 6, 0};
    char* plan_text = lance_dataset_plan_index_maintenance(ds, "vec_idx", &o);
    JValue* plan = plan_text ? json_parse(plan_text) : NULL;
    lance_free_string(plan_text);
    CHECK(plan != NULL);

    LanceDataset* writer = lance_dataset_open(uri, NULL, 0);
    CHECK(writer != NULL);
    uint64_t deleted = 0;
    CHECK(writer && lance_dataset_delete(writer, "id >= 2000", &deleted) == 0);
    CHECK(deleted == 100 && lance_dataset_fragment_count(writer) == 19);
    lance_dataset_close(writer);
    for (int id = 2000; id < MAX_ID; id++) held.live[id] = false;

    SkSet out = run_plan(ds, &VEC, plan); /* the workers, at version 9 */
    CHECK(out.count == 2);
    LanceCommitIndexResult result = {0};
    CHECK_ERR(commit(ds, &VEC, &out, &result), LANCE_ERR_STALE_SEGMENT);
    CHECK(tu_error_mentions("[20]"));
    CHECK(lance_dataset_version(ds) == 9 && lance_dataset_latest_version(ds) == 10);
    sk_set_free(&out);
    json_free(plan);

    LanceDataset* latest = lance_dataset_open(uri, NULL, 0);
    CHECK(latest != NULL);
    if (!latest) return;
    lance_dataset_close(ds);
    ds = latest;
    Task fresh[] = {{"build", {NULL}, "19", 100}, {"merge", {a, r, NULL}, "0,1,2,3,4", 500}};
    check_plan("vec_idx at version 10", &VEC, chosen, chosen, 6, 6, fresh, 2);
    plan_text = lance_dataset_plan_index_maintenance(ds, "vec_idx", &o);
    run_round(&VEC, plan_text);
    lance_free_string(plan_text);
    CHECK(lance_dataset_version(ds) == 11);
    check_coverage("vec_idx", 6, "0,1,2,3,4,6,7,8,9,10,11,12,13,14,15,16,17,18,19", "", 1880, 0, "");
    check_coverage("id_idx", 1, "0,1,2,3,4,6,7,8,9,10,11,12,13,14,15,16,17,18", "19", 1780, 100, "");
    /* The delta over 16-18 (300 rows as written; it holds 290) and the one
     * over 19 (100) are neighbours now, and together within the target. */
    char d[UUID_HEX_DASHED_LEN + 1], e[UUID_HEX_DASHED_LEN + 1];
    uuid_of("vec_idx", 16, d);
    uuid_of("vec_idx", 19, e);
    Task next[] = {{"merge", {d, e, NULL}, "16,17,18,19", 400}};
    check_plan("vec_idx at version 11", &VEC, chosen, chosen, 6, 5, next, 1);
    check_answers(1890, 0xf); /* and fragment 19's 100 */
}

int main(void) {
    double start = tu_now();
    data = tu_make_data(MAX_ID, DIM, 12, 0.5f, 4343);
    held = dk_rows_new(MAX_ID, DIM);
    /* Queries at rows kept (7, 450, 1234, 1750), deleted (3, 550, 1705) and
     * written last (1950); and halfway between two rows. */
    static const int at[] = {7, 450, 1234, 1750, 3, 550, 1705, 1950};
    static const int between[][2] = {{11, 600}, {1650, 2050}};
    for (int q = 0; q < QUERIES; q++)
        for (int j = 0; j < DIM; j++)
            queries[q][j] = q < 8 ? data.vectors[(size_t)at[q] * DIM + j]
                                  : (data.vectors[(size_t)between[q - 8][0] * DIM + j] +
                                     data.vectors[(size_t)between[q - 8][1] * DIM + j]) /
                                        2;
    dir = dk_temp_uri("maintenance", "table", uri, sizeof uri);
    RUN(test_setup);
    RUN(test_plan);
    RUN(test_segment_metadata);
    RUN(test_refusals);
    RUN(test_run);
    RUN(test_stale_plan);
    printf("    %.1f s\n", tu_now() - start);
    lance_dataset_close(ds);
    lance_vector_model_free(model);
    lance_free_string(fingerprint);
    tu_remove_tree(dir);
    free(dir);
    dk_rows_free(&held);
    tu_free_data(&data);
    return tu_finish("test_optimize_maintenance");
}
