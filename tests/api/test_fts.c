/* Full-text search: the hits of lance_scanner_full_text_search() and of
 * prepared query contexts equal pylance's for the same dataset and queries
 * (ids in order, scores within 1e-5), coverage modes, the segment rules,
 * and bad input.
 *
 * Usage: test_fts <python with pylance> <tests/api/fts_oracle.py>. */
#include <math.h>
#include <string.h>

#include "dataset_kit.h"
#include "test_util.h"

#define CAP 1024

static const char* python;
static const char* oracle_script;

typedef struct {
    int64_t n;
    int64_t ids[CAP];
    float scores[CAP];
} Hits;

/* Runs fts_oracle.py with the NULL-terminated arguments and returns its
   stdout (malloc'd), or NULL (a failed check). */
#define oracle(...) tu_oracle(python, oracle_script, __VA_ARGS__)

static void parse_hits(const char* text, Hits* h) {
    h->n = 0;
    const char* p = text;
    long long id;
    float score;
    int used;
    while (h->n < CAP && sscanf(p, "%lld %f%n", &id, &score, &used) == 2) {
        h->ids[h->n] = id;
        h->scores[h->n] = score;
        h->n++;
        p += used;
    }
}

/* Ties (scores within 1e-5) may come in either order: order each run of
   equal scores by id before comparing. */
static void order_ties(Hits* h) {
    for (int64_t i = 1; i < h->n; i++)
        for (int64_t j = i; j > 0 && fabsf(h->scores[j - 1] - h->scores[j]) <= 1e-5f && h->ids[j - 1] > h->ids[j];
             j--) {
            int64_t id = h->ids[j];
            h->ids[j] = h->ids[j - 1];
            h->ids[j - 1] = id;
            float s = h->scores[j];
            h->scores[j] = h->scores[j - 1];
            h->scores[j - 1] = s;
        }
}

/* Reads the scanner's hits, `id` and `_score`: 0, or -1. */
static int read_scores(LanceScanner* s, Hits* h) {
    h->n = dk_read_ids_with(s, "_score", h->ids, h->scores, CAP);
    return h->n >= 0 ? 0 : -1;
}

/* Compares our hits with pylance's for KIND/QUERY (FAST: indexed rows only). */
static void expect_same(const char* what, const Hits* ours_in, const char* uri, const char* kind, const char* query,
                        const char* fast) {
    static Hits ours, theirs;
    ours = *ours_in;
    char* text = oracle("search", uri, kind, query, fast, NULL);
    CHECK(text != NULL);
    if (!text) return;
    parse_hits(text, &theirs);
    free(text);
    order_ties(&ours);
    order_ties(&theirs);
    int before = tu_failures;
    CHECK(theirs.n > 0);
    CHECK(ours.n == theirs.n);
    for (int64_t i = 0; i < ours.n && i < theirs.n; i++) {
        CHECK(ours.ids[i] == theirs.ids[i]);
        CHECK(fabsf(ours.scores[i] - theirs.scores[i]) <= 1e-5f);
    }
    if (tu_failures != before) fprintf(stderr, "  mismatch: %s (%s \"%s\")\n", what, kind, query);
}

static LanceDataset* ds;
static char uri[600];

static LanceScanner* id_scanner(LanceDataset* d) {
    const char* cols[] = {"id", NULL};
    LanceScanner* s = lance_scanner_new(d, cols, NULL);
    CHECK(s != NULL);
    return s;
}

static void test_full_text_search(void) {
    static Hits h;
    const char* queries[] = {"quick fox", "lance", "vector index search", "brown"};
    for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
        /* All FTS-indexed columns (NULL), then the column named. */
        for (int named = 0; named < 2; named++) {
            LanceScanner* s = id_scanner(ds);
            const char* cols[] = {"text", NULL};
            CHECK_OK(lance_scanner_full_text_search(s, queries[q], named ? cols : NULL, 0));
            CHECK_OK(read_scores(s, &h));
            expect_same("full_text_search", &h, uri, "plain", queries[q], "0");
            lance_scanner_close(s);
        }
    }
}

/* Fuzzy terms: within one edit. */
static void test_fuzzy(void) {
    static Hits h;
    const char* queries[] = {"quik", "vectr serch"};
    for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
        LanceScanner* s = id_scanner(ds);
        const char* cols[] = {"text", NULL};
        CHECK_OK(lance_scanner_full_text_search(s, queries[q], cols, 1));
        CHECK_OK(read_scores(s, &h));
        expect_same("fuzzy full_text_search", &h, uri, "fuzzy1", queries[q], "0");
        lance_scanner_close(s);
    }
}

static void test_prepared_contexts(void) {
    static Hits h;
    struct {
        const char* kind;
        const char* query;
    } cases[] = {{"or", "quick fox"},   {"and", "quick fox"},    {"or", "data table row"},
                 {"and", "data table"}, {"phrase", "quick fox"}, {"phrase", "brown fox"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        LanceFtsQueryContext* ctx;
        if (strcmp(cases[c].kind, "phrase") == 0)
            ctx = lance_dataset_prepare_fts_phrase_query(ds, "text", cases[c].query, 0, LANCE_FTS_COVERAGE_STRICT);
        else
            ctx = lance_dataset_prepare_fts_match_query(
                ds, "text", cases[c].query,
                strcmp(cases[c].kind, "and") == 0 ? LANCE_FTS_MATCH_OPERATOR_AND : LANCE_FTS_MATCH_OPERATOR_OR, 0,
                LANCE_FTS_COVERAGE_STRICT);
        CHECK(ctx != NULL);
        if (!ctx) continue;
        LanceScanner* s = id_scanner(ds);
        CHECK_OK(lance_scanner_set_fts_query_context(s, ctx));
        /* The scanner keeps the context alive. */
        lance_fts_query_context_close(ctx);
        CHECK_OK(read_scores(s, &h));
        expect_same("prepared context", &h, uri, cases[c].kind, cases[c].query, "0");
        lance_scanner_close(s);
    }
    /* The deprecated form is the OR match query. */
    LanceFtsQueryContext* ctx = lance_dataset_prepare_fts_query(ds, "text", "quick fox", 0, LANCE_FTS_COVERAGE_STRICT);
    CHECK(ctx != NULL);
    LanceScanner* s = id_scanner(ds);
    CHECK_OK(lance_scanner_set_fts_query_context(s, ctx));
    CHECK_OK(read_scores(s, &h));
    expect_same("deprecated prepare", &h, uri, "or", "quick fox", "0");
    lance_scanner_close(s);
    lance_fts_query_context_close(ctx);
}

static void test_combinations_refused(void) {
    float q[8] = {0};
    LanceScanner* s = id_scanner(ds);
    CHECK_OK(lance_scanner_full_text_search(s, "fox", NULL, 0));
    /* The dataset has no vector column; the combination is refused first. */
    CHECK_ERR(lance_scanner_nearest(s, "vec", q, 8, LANCE_DTYPE_FLOAT32, 5), LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);

    /* Other order, on a dataset with a vector column. */
    char* dir = tu_temp_dir("fts-vec");
    char vuri[600];
    snprintf(vuri, sizeof vuri, "%s/ds", dir);
    TuData data = tu_make_data(200, 8, 2, 0.5f, 3);
    LanceDataset* vds = tu_write(vuri, &data, 0, 200, LANCE_WRITE_CREATE, 100);
    CHECK(vds != NULL);
    CHECK_OK(lance_dataset_create_scalar_index(vds, "tag", "tag_fts", LANCE_SCALAR_INVERTED, NULL, false));
    s = id_scanner(vds);
    CHECK_OK(lance_scanner_nearest(s, "vec", data.vectors, 8, LANCE_DTYPE_FLOAT32, 5));
    CHECK_ERR(lance_scanner_full_text_search(s, "t3", NULL, 0), LANCE_ERR_INVALID_ARGUMENT);
    LanceFtsQueryContext* ctx = lance_dataset_prepare_fts_match_query(vds, "tag", "t3", LANCE_FTS_MATCH_OPERATOR_OR, 0,
                                                                      LANCE_FTS_COVERAGE_STRICT);
    CHECK(ctx != NULL);
    CHECK_ERR(lance_scanner_set_fts_query_context(s, ctx), LANCE_ERR_INVALID_ARGUMENT);
    /* The nearest search is still there and runs. */
    int64_t ids[5];
    CHECK(tu_knn_ids(s, ids, 5) == 5);
    lance_scanner_close(s);
    /* full_text_search and a context exclude each other. */
    s = id_scanner(vds);
    CHECK_OK(lance_scanner_set_fts_query_context(s, ctx));
    CHECK_ERR(lance_scanner_full_text_search(s, "t3", NULL, 0), LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);
    s = id_scanner(vds);
    CHECK_OK(lance_scanner_full_text_search(s, "t3", NULL, 0));
    CHECK_ERR(lance_scanner_set_fts_query_context(s, ctx), LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);
    /* A phrase query needs an index built with positions. */
    CHECK(lance_dataset_prepare_fts_phrase_query(vds, "tag", "t3 t4", 0, LANCE_FTS_COVERAGE_STRICT) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    /* A scanner of another handle (same URI and version) refuses the context. */
    LanceDataset* other = lance_dataset_open(vuri, NULL, 0);
    CHECK(other != NULL);
    s = id_scanner(other);
    CHECK_ERR(lance_scanner_set_fts_query_context(s, ctx), LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);
    lance_dataset_close(other);
    lance_fts_query_context_close(ctx);
    lance_dataset_close(vds);
    tu_free_data(&data);
    tu_remove_tree(dir);
    free(dir);
}

static void test_segments(void) {
    uint8_t uuids[2 * 16];
    uint64_t count = 0;
    CHECK_OK(lance_dataset_index_segments(ds, "text_fts", uuids, 2, &count));
    CHECK(count == 1);
    LanceFtsQueryContext* ctx = lance_dataset_prepare_fts_match_query(ds, "text", "fox", LANCE_FTS_MATCH_OPERATOR_OR, 0,
                                                                      LANCE_FTS_COVERAGE_STRICT);
    CHECK(ctx != NULL);
    LanceScanner* s = id_scanner(ds);
    /* No context yet. */
    CHECK_ERR(lance_scanner_set_fts_index_segments(s, uuids, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_OK(lance_scanner_set_fts_index_segments(s, NULL, 0));
    CHECK_OK(lance_scanner_set_fts_query_context(s, ctx));
    /* Every segment of the context: accepted (nothing to narrow). */
    CHECK_OK(lance_scanner_set_fts_index_segments(s, uuids, 1));
    /* Repeated, foreign, NULL with a length. */
    memcpy(uuids + 16, uuids, 16);
    CHECK_ERR(lance_scanner_set_fts_index_segments(s, uuids, 2), LANCE_ERR_INVALID_ARGUMENT);
    uint8_t foreign[16];
    tu_uuid(99, foreign);
    CHECK_ERR(lance_scanner_set_fts_index_segments(s, foreign, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_fts_index_segments(s, NULL, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_OK(lance_scanner_set_fts_index_segments(s, NULL, 0));
    static Hits h;
    CHECK_OK(read_scores(s, &h));
    expect_same("context with its segments", &h, uri, "or", "fox", "0");
    lance_scanner_close(s);
    lance_fts_query_context_close(ctx);
}

static void test_bad_input(void) {
    CHECK(lance_dataset_prepare_fts_match_query(NULL, "text", "fox", 0, 0, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_prepare_fts_match_query(ds, NULL, "fox", 0, 0, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_prepare_fts_match_query(ds, "", "fox", 0, 0, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_prepare_fts_match_query(ds, "text", NULL, 0, 0, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_prepare_fts_match_query(ds, "text", "fox", 2, 0, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_prepare_fts_match_query(ds, "text", "fox", -1, 0, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_prepare_fts_match_query(ds, "text", "fox", 0, 1, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_prepare_fts_match_query(ds, "text", "fox", 0, 0, 2) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_prepare_fts_query(ds, "text", "fox", 1, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_prepare_fts_query(ds, "text", "fox", 0, -1) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_prepare_fts_phrase_query(ds, "text", "quick fox", -1, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(lance_dataset_prepare_fts_phrase_query(ds, "text", "quick fox", 0, 7) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    /* No such column; a column without an INVERTED index. */
    CHECK(lance_dataset_prepare_fts_match_query(ds, "nope", "fox", 0, 0, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);
    CHECK(lance_dataset_prepare_fts_match_query(ds, "id", "fox", 0, 0, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);

    LanceScanner* s = id_scanner(ds);
    CHECK_ERR(lance_scanner_full_text_search(NULL, "fox", NULL, 0), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_full_text_search(s, NULL, NULL, 0), LANCE_ERR_INVALID_ARGUMENT);
    const char* none[] = {NULL};
    CHECK_ERR(lance_scanner_full_text_search(s, "fox", none, 0), LANCE_ERR_INVALID_ARGUMENT);
    const char* bad_utf8[] = {"\xff\xfe", NULL};
    CHECK_ERR(lance_scanner_full_text_search(s, "fox", bad_utf8, 0), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_full_text_search(s, "\xff\xfe", NULL, 0), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_fts_query_context(s, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_fts_query_context(NULL, NULL), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_fts_index_segments(NULL, NULL, 0), LANCE_ERR_INVALID_ARGUMENT);
    /* Settings are frozen once iterating. */
    LanceBatch* b = NULL;
    CHECK(lance_scanner_next(s, &b) == 0);
    lance_batch_free(b);
    CHECK_ERR(lance_scanner_full_text_search(s, "fox", NULL, 0), LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);
    lance_fts_query_context_close(NULL);
}

/* Runs last: appends an unindexed fragment. */
static void test_coverage(void) {
    char* out = oracle("append", uri, NULL);
    CHECK(out != NULL);
    free(out);
    LanceDataset* grown = lance_dataset_open(uri, NULL, 0);
    CHECK(grown != NULL);
    if (!grown) return;
    CHECK(lance_dataset_prepare_fts_match_query(grown, "text", "quick fox", LANCE_FTS_MATCH_OPERATOR_OR, 0,
                                                LANCE_FTS_COVERAGE_STRICT) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_INDEX);
    LanceFtsQueryContext* ctx = lance_dataset_prepare_fts_match_query(
        grown, "text", "quick fox", LANCE_FTS_MATCH_OPERATOR_OR, 0, LANCE_FTS_COVERAGE_INDEX_ONLY);
    CHECK(ctx != NULL);
    static Hits h;
    LanceScanner* s = id_scanner(grown);
    CHECK_OK(lance_scanner_set_fts_query_context(s, ctx));
    CHECK_OK(read_scores(s, &h));
    expect_same("INDEX_ONLY", &h, uri, "or", "quick fox", "1");
    for (int64_t i = 0; i < h.n; i++) CHECK(h.ids[i] < 600);
    lance_scanner_close(s);
    lance_fts_query_context_close(ctx);
    /* The plain search also reads the unindexed rows, as pylance does. */
    s = id_scanner(grown);
    CHECK_OK(lance_scanner_full_text_search(s, "quick fox", NULL, 0));
    CHECK_OK(read_scores(s, &h));
    expect_same("unindexed rows", &h, uri, "plain", "quick fox", "0");
    int64_t new_rows = 0;
    for (int64_t i = 0; i < h.n; i++) new_rows += h.ids[i] >= 600;
    CHECK(new_rows > 0);
    lance_scanner_close(s);
    lance_dataset_close(grown);
}

int main(int argc, char** argv) {
    if (tu_oracle_args(argc, argv, "fts_oracle.py", &python, &oracle_script) != 0) return 2;
    char* dir = tu_temp_dir("fts");
    snprintf(uri, sizeof uri, "%s/ds", dir);
    ds = dk_oracle_dataset(python, oracle_script, uri);
    if (ds) {
        CHECK(lance_dataset_fragment_count(ds) == 4);
        CHECK_OK(lance_dataset_create_scalar_index(ds, "text", "text_fts", LANCE_SCALAR_INVERTED,
                                                   "{\"with_position\": true}", false));
        RUN(test_full_text_search);
        RUN(test_fuzzy);
        RUN(test_prepared_contexts);
        RUN(test_combinations_refused);
        RUN(test_segments);
        RUN(test_bad_input);
        RUN(test_coverage);
    }
    lance_dataset_close(ds);
    tu_remove_tree(dir);
    free(dir);
    return tu_finish("test_fts");
}
