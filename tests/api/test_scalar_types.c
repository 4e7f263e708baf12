/* The scalar index types of issue 41: NGRAM, ZONEMAP, BLOOMFILTER, RTREE and
 * MINHASHLSH, on one dataset of 8 fragments that pylance wrote
 * (tests/api/scalar_types_oracle.py).  Each type is built four ways, and
 * after each its queries are checked:
 *   (a) one-shot, with progress (and again without control, replacing it);
 *   (b) as four segments over lance_dataset_plan_fragment_groups(), with
 *       progress, a cancel token, caller UUIDs where the core takes them,
 *       committed as one index;
 *   (c) those four merged into one (the core merges every type) and
 *       committed in their place;
 *   (d) four segments pylance built (create_index_uncommitted) committed
 *       here.
 * A type's filters select exactly the ids pylance selects without an index,
 * through the index (the scan statistics count at least one index opened
 * per segment, none with scalar indices off, and a selective filter reads
 * fewer bytes than without them), and pylance's plan answers them through
 * the same index.  A MinHash search of a row's own text returns its
 * near-duplicate group, nearest first, and pylance's MinHashQuery answer.
 * The segments' metadata, the listings and the coverage name the type.
 * Bad parameters, type codes and MinHash search arguments fail with their
 * exact codes.
 *
 * Usage: test_scalar_types <python with pylance> <tests/api/scalar_types_oracle.py>.
 * Without them the test fails: it never skips. */
#include <stdbool.h>
#include <string.h>

#include "arrow_c.h"
#include "json.h"
#include "dataset_kit.h"
#include "progress_kit.h"
#include "segment_kit.h"
#include "test_util.h"

#define ROWS 1600
#define FRAGMENTS 8
#define GROUPS 4                       /* segment builds, one per planned fragment group */
#define DOC_GROUPS 100                 /* row r of "doc" is a near copy of the rows r % 100 + 100 k */
#define GROUP_ROWS (ROWS / DOC_GROUPS) /* 16: the MinHash search's limit */
#define MINHASH_QUERIES 20
#define FILTERS 3

static const char* python;
static const char* oracle_script;
static char* dir;
static char uri[600];
static LanceDataset* ds; /* every build and commit goes through this handle */

/* The planned fragment groups, as "0,4" for the oracle. */
static char group_text[GROUPS][64];

#define oracle(...) tu_oracle(python, oracle_script, __VA_ARGS__)

typedef struct {
    LanceScalarIndexType type;
    const char* pylance_name; /* the type as pylance's IndexConfig names it */
    const char* type_name;    /* lance_index_segment_metadata_index_type_name() and the listings */
    const char* details_url;  /* lance_index_segment_metadata_index_details_type_url() */
    const char* column;
    const char* index_name;
    const char* params;           /* params_json */
    bool takes_uuid;              /* the core takes a caller's UUID for a fragment list */
    const char* filters[FILTERS]; /* none for MINHASHLSH */
    int selective;                /* the filter that reads fewer bytes through the index */
} TypeCase;

/* A table laid out by hand: clang-format leaves it as it is. */
/* clang-format off */
/* The oracle's keys: "key-%06d" % (r * 7919 % 100003) for rows 77, 5 and 1234. */
static const TypeCase NGRAM = {
    LANCE_SCALAR_NGRAM, "NGRAM", "NGram", "/lance.table.NGramIndexDetails", "text", "text_idx", "{}", false,
    {"contains(text, 'umbr')", "contains(text, 'quick brown')", "contains(text, 'zzq')"}, 2};
static const TypeCase ZONEMAP = {
    LANCE_SCALAR_ZONEMAP, "ZONEMAP", "ZoneMap", "/lance.table.ZoneMapIndexDetails", "ts", "ts_idx",
    "{\"rows_per_zone\": 64}", true, {"ts >= 4003 AND ts < 6003", "ts = 7773", "ts > 15900"}, 2};
static const TypeCase BLOOMFILTER = {
    LANCE_SCALAR_BLOOMFILTER, "BLOOMFILTER", "BloomFilter", "/lance.index.pb.BloomFilterIndexDetails", "key",
    "key_idx", "{\"number_of_items\": 256, \"probability\": 0.001}", true,
    {"key = 'key-009745'", "key = 'key-absent'", "key IN ('key-039595', 'key-071755', 'nope')"}, 0};
static const TypeCase RTREE = {
    LANCE_SCALAR_RTREE, "RTREE", "RTree", "/lance.index.pb.RTreeIndexDetails", "geom", "geom_idx",
    "{\"page_size\": 32}", false,
    {"st_intersects(geom, st_geomfromtext('POLYGON((0.1 0.2, 0.4 0.2, 0.4 0.6, 0.1 0.6, 0.1 0.2))'))",
     "st_intersects(geom, st_geomfromtext('POLYGON((0.5 0.5, 0.5005 0.5, 0.5005 0.5005, 0.5 0.5005, 0.5 0.5))'))",
     "st_intersects(geom, st_geomfromtext('POLYGON((0.9 0.9, 1 0.9, 1 1, 0.9 1, 0.9 0.9))'))"},
    1};
static const TypeCase MINHASHLSH = {
    LANCE_SCALAR_MINHASHLSH, "MINHASHLSH", "MinHashLsh", "/lance.index.pb.MinHashLshIndexDetails", "doc", "doc_idx",
    "{\"num_hashes\": 128, \"num_bands\": 32}", true, {NULL, NULL, NULL}, -1};
/* clang-format on */

/* ---- progress and scan statistics ---- */

/* One build's progress events (progress_kit.h), made by main(). */
static PkRecorder* progress;

typedef struct {
    int calls;
    uint64_t indices_loaded, bytes_read;
} Seen;

static void add_statistics(void* ctx, const LanceScanStatistics* st) {
    Seen* seen = ctx;
    seen->calls++;
    seen->indices_loaded += st->indices_loaded;
    seen->bytes_read += st->bytes_read;
}

/* ---- reading scans ---- */

/* A handle of its own (own caches: a scan opens the indices it uses) at the
 * version `ds` is at. */
static LanceDataset* fresh_handle(void) {
    LanceDataset* h = lance_dataset_open(uri, NULL, lance_dataset_version(ds));
    CHECK(h != NULL);
    return h;
}

/* dk_filter_ids() of `filter` on a handle of its own, with scalar indices on
 * or off; the statistics go to `seen`. */
static char* selected_ids(const char* filter, bool use_scalar_index, Seen* seen) {
    LanceDataset* h = fresh_handle();
    char* text = h ? dk_filter_ids(h, filter, ROWS, use_scalar_index, add_statistics, seen) : NULL;
    lance_dataset_close(h);
    return text;
}

/* The next line of *text, cut at its newline (consumed); NULL at the end. */
static char* next_line(char** text) {
    char* line = *text;
    if (!line || !*line) return NULL;
    char* nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        *text = nl + 1;
    } else {
        *text = line + strlen(line);
    }
    return line;
}

/* ---- the checks after each build ---- */

/* Every filter of `t` against pylance, with the index of `segments` segments. */
static void check_filters(const TypeCase* t, uint64_t segments, const char* stage) {
    char* answer = oracle("query", uri, dk_version_text(lance_dataset_version(ds)), t->filters[0], t->filters[1],
                          t->filters[2], NULL);
    char* rest = answer;
    for (int f = 0; f < FILTERS; f++) {
        char* truth = next_line(&rest);
        char* plan = next_line(&rest);
        Seen on = {0}, off = {0};
        char* with = selected_ids(t->filters[f], true, &on);
        char* without = selected_ids(t->filters[f], false, &off);
        int before = tu_failures;
        CHECK(truth && plan && strcmp(plan, "index") == 0); /* pylance answers it through this index */
        CHECK(truth && with && strcmp(with, truth) == 0);
        CHECK(truth && without && strcmp(without, truth) == 0);
        CHECK(on.calls == 1 && on.indices_loaded >= segments);
        CHECK(off.calls == 1 && off.indices_loaded == 0);
        if (f == t->selective) CHECK(on.bytes_read < off.bytes_read);
        if (tu_failures != before)
            fprintf(stderr,
                    "    %s %s, %s: lance-c %.200s, without indices %.200s, pylance %.200s (%s); indices loaded %llu "
                    "(%llu segments), bytes read %llu (%llu without)\n",
                    t->pylance_name, stage, t->filters[f], with ? with : "(failed)", without ? without : "(failed)",
                    truth ? truth : "(none)", plan ? plan : "-", (unsigned long long)on.indices_loaded,
                    (unsigned long long)segments, (unsigned long long)on.bytes_read,
                    (unsigned long long)off.bytes_read);
        free(with);
        free(without);
    }
    free(answer);
}

/* The `doc` text of row r (malloc'd), or NULL. */
static char* doc_of(LanceDataset* h, int64_t r) {
    char filter[32];
    snprintf(filter, sizeof filter, "id = %lld", (long long)r);
    const char* cols[] = {"doc", NULL};
    LanceScanner* s = lance_scanner_new(h, cols, filter);
    LanceBatch* b = NULL;
    char* text = NULL;
    if (s && lance_scanner_next(s, &b) == 0) {
        struct ArrowArray a;
        struct ArrowSchema sc;
        if (lance_batch_to_arrow(b, &a, &sc) == 0) {
            int64_t c = arrow_child_index(&sc, "doc");
            if (c >= 0 && a.length == 1 && strcmp(sc.children[c]->format, "u") == 0) {
                const struct ArrowArray* col = a.children[c];
                const int32_t* offsets = (const int32_t*)col->buffers[1] + col->offset;
                size_t len = (size_t)(offsets[1] - offsets[0]);
                text = malloc(len + 1);
                if (text) {
                    memcpy(text, (const char*)col->buffers[2] + offsets[0], len);
                    text[len] = '\0';
                }
            }
            a.release(&a);
            sc.release(&sc);
        }
        lance_batch_free(b);
    }
    lance_scanner_close(s);
    CHECK(text != NULL);
    return text;
}

typedef struct {
    float distance;
    int64_t id;
} Hit;

static int by_distance_then_id(const void* a, const void* b) {
    const Hit *x = a, *y = b;
    if (x->distance != y->distance) return x->distance < y->distance ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* MinHash searches of MINHASH_QUERIES rows' own texts: each returns its
 * row first (distance 0), then the rest of its group, ascending, and
 * exactly pylance's MinHashQuery answer. */
static void check_minhash(uint64_t segments, const char* stage) {
    static char rows_text[MINHASH_QUERIES][16];
    char limit[16];
    snprintf(limit, sizeof limit, "%d", GROUP_ROWS);
    const char* version = dk_version_text(lance_dataset_version(ds));
    const char* argv[7 + MINHASH_QUERIES] = {python, oracle_script, "minhash", uri, version, limit};
    for (int q = 0; q < MINHASH_QUERIES; q++) {
        snprintf(rows_text[q], sizeof rows_text[q], "%d", (5 + 83 * q) % ROWS);
        argv[6 + q] = rows_text[q];
    }
    argv[6 + MINHASH_QUERIES] = NULL;
    char* answer = tu_run_program(argv);
    char* rest = answer;
    int found = 0;
    for (int q = 0; q < MINHASH_QUERIES; q++) {
        int64_t r = (5 + 83 * q) % ROWS;
        char* theirs = next_line(&rest);
        static int64_t ids[ROWS];
        static float distances[ROWS];
        Seen seen = {0};
        LanceDataset* h = fresh_handle();
        char* own = h ? doc_of(h, r) : NULL;
        const char* cols[] = {"id", NULL};
        LanceScanner* s = own ? lance_scanner_new(h, cols, NULL) : NULL;
        int64_t n = -1;
        if (s && lance_scanner_set_limit(s, GROUP_ROWS) == 0 &&
            lance_scanner_set_statistics_callback(s, add_statistics, &seen) == 0 &&
            lance_scanner_minhash_search(s, "doc", own) == 0)
            n = dk_read_ids(s, ids, distances, ROWS);
        CHECK(n >= 0);
        CHECK(seen.calls == 1 && seen.indices_loaded >= segments);
        lance_scanner_close(s);
        lance_dataset_close(h);
        free(own);
        if (n < 0) continue;
        bool group = n == GROUP_ROWS && ids[0] == r && distances[0] == 0.0f;
        for (int64_t i = 0; i < n; i++) {
            group = group && ids[i] % DOC_GROUPS == r % DOC_GROUPS;
            if (i > 0) CHECK(distances[i - 1] <= distances[i]);
        }
        found += group;
        Hit hits[ROWS];
        for (int64_t i = 0; i < n; i++) hits[i] = (Hit){distances[i], ids[i]};
        qsort(hits, (size_t)n, sizeof *hits, by_distance_then_id);
        TuText ours = {0};
        for (int64_t i = 0; i < n; i++)
            tu_text_append(&ours, "%s%lld/%.9g", i ? " " : "", (long long)hits[i].id, (double)hits[i].distance);
        char* text = tu_text_take(&ours);
        int same = theirs && strcmp(text, theirs) == 0;
        CHECK(same);
        if (!same || !group)
            fprintf(stderr, "    MINHASHLSH %s, row %lld: lance-c %.300s\n      pylance %.300s\n", stage, (long long)r,
                    text, theirs ? theirs : "(none)");
        free(text);
    }
    CHECK(found == MINHASH_QUERIES);
    if (found != MINHASH_QUERIES)
        fprintf(stderr, "    MINHASHLSH %s: own group found %d/%d\n", stage, found, MINHASH_QUERIES);
    free(answer);
}

/* The entries of a listing named `name`, each of type `type_name` on `column`; -1 if one is not. */
static int listed(const char* json, const TypeCase* t) {
    JValue* list = json ? json_parse(json) : NULL;
    int count = list && list->type == J_ARRAY ? 0 : -1;
    for (size_t i = 0; count >= 0 && i < list->count; i++) {
        const JValue* e = list->items[i];
        const JValue* name = json_get(e, "name");
        if (!name || name->type != J_STRING || strcmp(name->string, t->index_name) != 0) continue;
        const JValue* type = json_get(e, "type");
        const JValue* columns = json_get(e, "columns");
        if (type && type->type == J_STRING && strcmp(type->string, t->type_name) == 0 && columns &&
            columns->type == J_ARRAY && columns->count == 1 && columns->items[0]->type == J_STRING &&
            strcmp(columns->items[0]->string, t->column) == 0)
            count++;
        else count = -1;
    }
    json_free(list);
    return count;
}

/* The listings and the coverage report of an index of `segments` segments. */
static void check_listing(const TypeCase* t, uint64_t segments) {
    CHECK(lance_dataset_index_segment_count(ds, t->index_name) == segments);
    const char* old = lance_dataset_index_list_json(ds);
    CHECK(listed(old, t) == (int)segments);
    lance_free_string(old);
    char* extended = lance_dataset_index_segments_json(ds);
    CHECK(listed(extended, t) == (int)segments);
    lance_free_string(extended);
    char* coverage = lance_dataset_index_coverage_json(ds, t->index_name);
    JValue* c = coverage ? json_parse(coverage) : NULL;
    const JValue* num = json_get(c, "num_segments");
    const JValue* indexed = json_get(c, "indexed_fragments");
    const JValue* unindexed = json_get(c, "unindexed_fragments");
    CHECK(num && num->number == (double)segments);
    CHECK(indexed && indexed->count == FRAGMENTS && unindexed && unindexed->count == 0);
    json_free(c);
    lance_free_string(coverage);
}

static void check_queries(const TypeCase* t, uint64_t segments, const char* stage) {
    check_listing(t, segments);
    if (t->type == LANCE_SCALAR_MINHASHLSH) check_minhash(segments, stage);
    else check_filters(t, segments, stage);
}

/* ---- segments ---- */

/* The planned groups' fragments. */
typedef struct {
    uint32_t ids[GROUPS][FRAGMENTS];
    size_t count[GROUPS];
} Groups;

static void plan_groups(Groups* g) {
    LanceFragmentPlan* plan = NULL;
    CHECK_OK(lance_dataset_plan_fragment_groups(ds, GROUPS, &plan));
    for (size_t i = 0; i < GROUPS; i++) {
        const uint32_t* ids = NULL;
        size_t n = 0;
        g->count[i] = 0;
        group_text[i][0] = '\0';
        if (!plan || lance_fragment_plan_group(plan, i, &ids, &n, NULL) != 0 || n > FRAGMENTS) {
            CHECK(!"a planned group");
            continue;
        }
        memcpy(g->ids[i], ids, n * sizeof *ids);
        g->count[i] = n;
        size_t used = 0;
        for (size_t k = 0; k < n; k++)
            used += (size_t)snprintf(group_text[i] + used, sizeof group_text[i] - used, "%s%u", k ? "," : "", ids[k]);
    }
    lance_fragment_plan_free(plan);
}

/* A segment's metadata: its type by code, name and details, its index
 * name, its fragments, its UUID when the caller gave one. */
static void check_type_segment(const TypeCase* t, const uint8_t* bytes, size_t len, const uint32_t* fragment_ids,
                               size_t fragment_count, const uint8_t* uuid) {
    SkSegmentWant want = {.index_type = (int32_t)t->type,
                          .type_name = t->type_name,
                          .index_name = t->index_name,
                          .details_url = t->details_url,
                          .field_id = -1,
                          .fragment_ids = fragment_ids,
                          .fragment_count = fragment_count,
                          .uuid = uuid,
                          .no_fingerprint = true};
    sk_check_segment(bytes, len, &want);
}

/* (b): one segment per group, built here; nothing is committed. */
static void build_segments(const TypeCase* t, const Groups* g, SkSet* out) {
    uint64_t latest = lance_dataset_latest_version(ds);
    for (size_t i = 0; i < GROUPS; i++) {
        LanceIndexSegmentBuildOptions o = {0};
        o.fragment_ids = g->ids[i];
        o.fragment_count = g->count[i];
        uint8_t uuid[16];
        tu_uuid((int)(t->type * 8 + i), uuid);
        o.index_uuid = uuid;
        if (!t->takes_uuid) {
            LanceIndexSegmentBuilder* refused =
                lance_index_segment_builder_new_scalar(ds, t->column, t->index_name, (int32_t)t->type, t->params, &o);
            CHECK(refused == NULL && lance_last_error_code() == LANCE_ERR_NOT_SUPPORTED);
            CHECK(tu_error_mentions("UUID"));
            lance_index_segment_builder_free(refused);
            o.index_uuid = NULL;
        }
        LanceIndexSegmentBuilder* b =
            lance_index_segment_builder_new_scalar(ds, t->column, t->index_name, (int32_t)t->type, t->params, &o);
        CHECK(b != NULL);
        pk_recorder_reset(progress);
        LanceIndexBuildCancelToken* token = lance_index_build_cancel_token_new();
        CHECK_OK(lance_index_segment_builder_set_progress_callback(b, pk_record, progress));
        CHECK_OK(lance_index_segment_builder_set_cancel_token(b, token));
        uint8_t* bytes = NULL;
        size_t len = 0;
        CHECK_OK(lance_index_segment_builder_execute_uncommitted(b, &bytes, &len));
        lance_index_segment_builder_free(b);
        lance_index_build_cancel_token_free(token);
        pk_check_events(progress, 1, 0);
        if (bytes) check_type_segment(t, bytes, len, g->ids[i], g->count[i], o.index_uuid);
        sk_set_add(out, bytes, &len);
    }
    /* A build whose token was cancelled first returns at once, cancelled. */
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = g->ids[0];
    o.fragment_count = g->count[0];
    sk_check_cancelled_first(
        lance_index_segment_builder_new_scalar(ds, t->column, t->index_name, (int32_t)t->type, t->params, &o));
    CHECK(lance_dataset_latest_version(ds) == latest);
}

/* (d): pylance's segments over the same groups. */
static void pylance_segments(const TypeCase* t, const Groups* g, SkSet* out) {
    char* paths = oracle("segments", uri, t->pylance_name, t->column, t->index_name, t->params, dir, group_text[0],
                         group_text[1], group_text[2], group_text[3], NULL);
    char* rest = paths;
    for (size_t i = 0; i < GROUPS; i++) {
        char* path = next_line(&rest);
        size_t len = 0;
        unsigned char* bytes = path ? read_whole_file(path, &len) : NULL;
        if (bytes) check_type_segment(t, bytes, len, g->ids[i], g->count[i], NULL);
        sk_set_add(out, bytes, &len);
    }
    free(paths);
}

static void commit_set(const TypeCase* t, const SkSet* s, bool replace) {
    uint64_t version = lance_dataset_version(ds);
    LanceCommitIndexOptions o = {0};
    o.replace = replace;
    LanceCommitIndexResult r = {0};
    CHECK_OK(lance_dataset_commit_index_segments_v2(ds, t->index_name, t->column, s->ptrs, s->lens, s->count, &o, &r));
    CHECK(r.version == version + 1 && !r.already_committed && lance_dataset_version(ds) == r.version);
}

static void test_type(const TypeCase* t) {
    /* (a) One-shot, with progress; again without control, replacing it. */
    uint64_t version = lance_dataset_version(ds);
    pk_recorder_reset(progress);
    LanceIndexBuildControl control = {pk_record, progress, NULL};
    CHECK_OK(lance_dataset_create_scalar_index_v2(ds, t->column, t->index_name, t->type, t->params, false,
                                                  &(LanceIndexCreateOptions){.control = &control}));
    pk_check_events(progress, 1, 0);
    CHECK(lance_dataset_version(ds) == version + 1);
    CHECK_ERR(lance_dataset_create_scalar_index(ds, t->column, t->index_name, t->type, t->params, false),
              LANCE_ERR_INDEX);
    CHECK_OK(lance_dataset_create_scalar_index(ds, t->column, t->index_name, t->type, t->params, true));
    CHECK(lance_dataset_version(ds) == version + 2);
    check_queries(t, 1, "one-shot");
    CHECK_OK(lance_dataset_drop_index(ds, t->index_name));

    /* (b) Four segments built here, committed as one index. */
    Groups g;
    plan_groups(&g);
    SkSet built = {0};
    build_segments(t, &g, &built);
    CHECK(built.count == GROUPS);
    if (built.count != GROUPS) {
        sk_set_free(&built);
        return;
    }
    /* (c) merged into one first (nothing committed by a merge) */
    uint8_t* merged = NULL;
    size_t merged_len = 0;
    CHECK_OK(lance_dataset_merge_index_segments(ds, built.ptrs, built.lens, built.count, &merged, &merged_len));
    uint32_t all[FRAGMENTS];
    for (uint32_t f = 0; f < FRAGMENTS; f++) all[f] = f;
    if (merged) check_type_segment(t, merged, merged_len, all, FRAGMENTS, NULL);
    commit_set(t, &built, false);
    check_queries(t, GROUPS, "segments");

    /* (c) the merged segment in their place. */
    SkSet one = {0};
    sk_set_add(&one, merged, &merged_len);
    if (one.count == 1) {
        commit_set(t, &one, true);
        check_queries(t, 1, "merged");
    }

    /* (d) pylance's segments of the same groups, committed here (upstream's
       form of the commit: they replace what they cover). */
    SkSet theirs = {.malloced = true}; /* read from pylance's files */
    pylance_segments(t, &g, &theirs);
    CHECK(theirs.count == GROUPS);
    if (theirs.count == GROUPS) {
        version = lance_dataset_version(ds);
        CHECK_OK(
            lance_dataset_commit_index_segments(ds, t->index_name, t->column, theirs.ptrs, theirs.lens, theirs.count));
        CHECK(lance_dataset_version(ds) == version + 1);
        check_queries(t, GROUPS, "pylance segments");
    }
    CHECK_OK(lance_dataset_drop_index(ds, t->index_name));
    sk_set_free(&theirs);
    sk_set_free(&one);
    sk_set_free(&built);
}

static void test_ngram(void) { test_type(&NGRAM); }
static void test_zonemap(void) { test_type(&ZONEMAP); }
static void test_bloomfilter(void) { test_type(&BLOOMFILTER); }
static void test_rtree(void) { test_type(&RTREE); }
static void test_minhashlsh(void) { test_type(&MINHASHLSH); }

/* ---- refusals ---- */

/* Where a segment build with these arguments fails: at the constructor (1),
 * at execute (2), or not at all (0).  The failure's code goes to *code, and
 * *mentions says whether its message names `key` (NULL: not asked). */
static int segment_refusal(LanceScalarIndexType type, const char* column, const char* params, const char* key,
                           LanceErrorCode* code, bool* mentions) {
    uint32_t fragments[] = {0, 1};
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = fragments;
    o.fragment_count = 2;
    int stage = 0;
    *code = LANCE_OK;
    LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_scalar(ds, column, NULL, (int32_t)type, params, &o);
    uint8_t* bytes = NULL;
    size_t len = 0;
    if (!b) stage = 1;
    else if (lance_index_segment_builder_execute_uncommitted(b, &bytes, &len) != 0) stage = 2;
    if (stage) {
        *code = lance_last_error_code();
        if (key) *mentions = tu_error_mentions(key);
    }
    lance_index_segment_builder_free(b);
    lance_free_bytes(bytes);
    return stage;
}

/* Unknown keys and values of the wrong JSON type, named in the message,
 * refused before any work; values the core refuses, with its code. */
static void test_bad_params(void) {
    static const struct {
        LanceScalarIndexType type;
        const char* column;
        const char* params;
        const char* key;     /* the message names it */
        bool core_checks_it; /* the core's own refusal, maybe only when the build runs */
    } bad[] = {
        {LANCE_SCALAR_NGRAM, "text", "{\"ngram_size\": 3}", "ngram_size", false},
        {LANCE_SCALAR_ZONEMAP, "ts", "{\"rows_per_zones\": 64}", "rows_per_zones", false},
        {LANCE_SCALAR_ZONEMAP, "ts", "{\"rows_per_zone\": \"64\"}", "rows_per_zone", false},
        {LANCE_SCALAR_ZONEMAP, "ts", "{\"use_seeds\": 1}", "use_seeds", false},
        {LANCE_SCALAR_BLOOMFILTER, "key", "{\"items\": 256}", "items", false},
        {LANCE_SCALAR_BLOOMFILTER, "key", "{\"probability\": \"low\"}", "probability", false},
        {LANCE_SCALAR_BLOOMFILTER, "key", "{\"number_of_items\": -5}", "number_of_items", false},
        {LANCE_SCALAR_RTREE, "geom", "{\"pagesize\": 32}", "pagesize", false},
        {LANCE_SCALAR_RTREE, "geom", "{\"page_size\": 2.5}", "page_size", false},
        {LANCE_SCALAR_MINHASHLSH, "doc", "{\"num_hash\": 128}", "num_hash", false},
        {LANCE_SCALAR_MINHASHLSH, "doc", "{\"num_bands\": \"16\"}", "num_bands", false},
        {LANCE_SCALAR_MINHASHLSH, "doc", "{\"tokenizer\": \"simple\"}", "tokenizer", false},
        {LANCE_SCALAR_MINHASHLSH, "doc", "{\"num_hashes\": 100, \"num_bands\": 32}", "num_hashes", true},
        {LANCE_SCALAR_MINHASHLSH, "doc", "{\"shingle_size\": 0}", "shingle_size", true},
        {LANCE_SCALAR_RTREE, "geom", "{\"page_size\": 1}", "page_size", true},
    };
    uint64_t version = lance_dataset_version(ds);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int before = tu_failures;
        CHECK_ERR(lance_dataset_create_scalar_index(ds, bad[i].column, "bad_idx", bad[i].type, bad[i].params, false),
                  LANCE_ERR_INVALID_ARGUMENT);
        CHECK(tu_error_mentions(bad[i].key));
        pk_recorder_reset(progress);
        LanceIndexBuildControl control = {pk_record, progress, NULL};
        CHECK_ERR(lance_dataset_create_scalar_index_v2(ds, bad[i].column, "bad_idx", bad[i].type, bad[i].params, false,
                                                       &(LanceIndexCreateOptions){.control = &control}),
                  LANCE_ERR_INVALID_ARGUMENT);
        LanceErrorCode code = LANCE_OK;
        bool named = false;
        int stage = segment_refusal(bad[i].type, bad[i].column, bad[i].params, bad[i].key, &code, &named);
        CHECK(bad[i].core_checks_it ? stage != 0 : stage == 1);
        CHECK(code == LANCE_ERR_INVALID_ARGUMENT && named);
        if (tu_failures != before) fprintf(stderr, "    params_json %s (type %d)\n", bad[i].params, (int)bad[i].type);
    }
    /* A column the index cannot hold: the core's refusal. */
    CHECK_ERR(lance_dataset_create_scalar_index(ds, "ts", "bad_idx", LANCE_SCALAR_NGRAM, NULL, false),
              LANCE_ERR_INVALID_ARGUMENT);
    LanceErrorCode code = LANCE_OK;
    CHECK(segment_refusal(LANCE_SCALAR_NGRAM, "ts", NULL, NULL, &code, NULL) != 0);
    CHECK(code == LANCE_ERR_INVALID_ARGUMENT);
    /* Nothing was committed; null or {} is each type's defaults. */
    CHECK(lance_dataset_version(ds) == version && lance_dataset_latest_version(ds) == version);
    CHECK(lance_dataset_index_count(ds) == 0);
    const TypeCase* types[] = {&NGRAM, &ZONEMAP, &BLOOMFILTER, &RTREE, &MINHASHLSH};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        CHECK(segment_refusal(types[i]->type, types[i]->column, NULL, NULL, &code, NULL) == 0);
        CHECK(segment_refusal(types[i]->type, types[i]->column, "{}", NULL, &code, NULL) == 0);
    }
}

/* The values between and after the types (0, 6, 7, 11, 13, ...) are no type. */
static void test_type_codes(void) {
    static const int32_t codes[] = {0, 6, 7, 11, 13, 14, -1, 101};
    uint32_t fragments[] = {0};
    LanceIndexSegmentBuildOptions o = {0};
    o.fragment_ids = fragments;
    o.fragment_count = 1;
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        CHECK_ERR(lance_dataset_create_scalar_index(ds, "text", "bad_idx", (LanceScalarIndexType)codes[i], NULL, false),
                  LANCE_ERR_INVALID_ARGUMENT);
        CHECK(tu_error_mentions("is not a LanceScalarIndexType"));
        CHECK_ERR(lance_dataset_create_scalar_index_v2(ds, "text", "bad_idx", (LanceScalarIndexType)codes[i], NULL,
                                                       false, NULL),
                  LANCE_ERR_INVALID_ARGUMENT);
        LanceIndexSegmentBuilder* b = lance_index_segment_builder_new_scalar(ds, "text", NULL, codes[i], NULL, &o);
        CHECK(b == NULL && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
        lance_index_segment_builder_free(b);
    }
    CHECK(lance_dataset_index_count(ds) == 0);
}

/* lance_scanner_minhash_search()'s arguments and what it cannot be combined with. */
static void test_minhash_arguments(void) {
    CHECK_OK(lance_dataset_create_scalar_index(ds, "doc", "doc_minhash", LANCE_SCALAR_MINHASHLSH, NULL, false));
    CHECK_OK(lance_dataset_create_scalar_index(ds, "text", "text_fts", LANCE_SCALAR_INVERTED, NULL, false));
    const LanceErrorCode IA = LANCE_ERR_INVALID_ARGUMENT;
    const char* cols[] = {"id", NULL};
    const float query[4] = {1, 2, 3, 4};
    char* own = doc_of(ds, 7);
    CHECK_ERR(lance_scanner_minhash_search(NULL, "doc", own), IA);
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_set_limit(s, 3));
    CHECK_ERR(lance_scanner_minhash_search(s, NULL, own), IA);
    CHECK_ERR(lance_scanner_minhash_search(s, "", own), IA);
    CHECK_ERR(lance_scanner_minhash_search(s, "doc", NULL), IA);
    /* A column without a MINHASHLSH index. */
    CHECK_ERR(lance_scanner_minhash_search(s, "text", own), IA);
    /* The refusals left the scanner as it was: a plain scan with its limit. */
    CHECK(tu_count_scan(s) == 3);
    /* Its settings are fixed once it scanned. */
    CHECK_ERR(lance_scanner_minhash_search(s, "doc", own), IA);
    lance_scanner_close(s);

    /* No limit; a second search. */
    s = lance_scanner_new(ds, cols, NULL);
    CHECK_ERR(lance_scanner_minhash_search(s, "doc", own), IA);
    CHECK_OK(lance_scanner_set_limit(s, 3));
    CHECK_OK(lance_scanner_minhash_search(s, "doc", own));
    CHECK_ERR(lance_scanner_minhash_search(s, "doc", own), IA);
    lance_scanner_close(s);

    /* With a k-NN search, a full-text search or a scalar index segment, in either order. */
    uint8_t segment[16];
    uint64_t count = 0;
    CHECK_OK(lance_dataset_index_segments(ds, "doc_minhash", segment, 1, &count));
    for (int other = 0; other < 3; other++) {
        for (int minhash_first = 0; minhash_first < 2; minhash_first++) {
            s = lance_scanner_new(ds, cols, NULL);
            CHECK_OK(lance_scanner_set_limit(s, 3));
            if (minhash_first) CHECK_OK(lance_scanner_minhash_search(s, "doc", own));
            int rc = other == 0   ? lance_scanner_nearest(s, "vec", query, 4, LANCE_DTYPE_FLOAT32, 3)
                     : other == 1 ? lance_scanner_full_text_search(s, "umbrella", NULL, 0)
                                  : lance_scanner_set_scalar_index_segment(s, segment);
            if (minhash_first) {
                CHECK(rc == -1 && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
            } else {
                CHECK(rc == 0);
                CHECK_ERR(lance_scanner_minhash_search(s, "doc", own), IA);
            }
            lance_scanner_close(s);
        }
    }

    /* The empty text is a text: it has no shingle in common with any row
       (pylance 14.0.2 finds nothing either). */
    s = lance_scanner_new(ds, cols, NULL);
    CHECK_OK(lance_scanner_set_limit(s, 3));
    CHECK_OK(lance_scanner_minhash_search(s, "doc", ""));
    CHECK(tu_count_scan(s) == 0);
    lance_scanner_close(s);
    free(own);
    CHECK_OK(lance_dataset_drop_index(ds, "text_fts"));
    CHECK_OK(lance_dataset_drop_index(ds, "doc_minhash"));
}

int main(int argc, char** argv) {
    if (tu_oracle_args(argc, argv, "tests/api/scalar_types_oracle.py", &python, &oracle_script) != 0) return 2;
    dir = tu_temp_dir("scalar-types");
    snprintf(uri, sizeof uri, "%s/ds.lance", dir);
    ds = dk_oracle_dataset(python, oracle_script, uri);
    progress = pk_recorder_new();
    if (ds) {
        CHECK(lance_dataset_fragment_count(ds) == FRAGMENTS && lance_dataset_count_rows(ds) == ROWS);
        RUN(test_ngram);
        RUN(test_zonemap);
        RUN(test_bloomfilter);
        RUN(test_rtree);
        RUN(test_minhashlsh);
        RUN(test_bad_params);
        RUN(test_type_codes);
        RUN(test_minhash_arguments);
    }
    pk_recorder_free(progress);
    lance_dataset_close(ds);
    tu_remove_tree(dir);
    free(dir);
    return tu_finish("test_scalar_types");
}
