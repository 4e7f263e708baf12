/* Merge-insert, schema evolution and lance_write_fragments, each checked
 * against pylance of the same Lance version: a multi-fragment dataset is
 * built here, copied, changed through lance-c, and python/evolve_oracle.py
 * applies the same change to the copy with pylance and compares schemas,
 * rows and merge counts.  Every function's bad input is checked for its
 * exact code, and every consumed stream for exactly one release.
 *
 * Usage: test_evolve PYTHON ORACLE_SCRIPT (no Python is a failure). */
#include <dirent.h>
#include <string.h>

#include "test_util.h"

#define ROWS 600
#define DIM 4
#define ROWS_PER_FILE 200

static TuData data;   /* the dataset's rows */
static TuData other;  /* the same ids with other vectors: merge sources */
static const char* python;
static const char* oracle;

/* ---- streams ---- */

/* Wraps a stream and counts how often it is released. */
typedef struct {
    struct ArrowArrayStream inner;
    int* releases;
} Counted;

static int counted_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
    Counted* c = s->private_data;
    return c->inner.get_schema(&c->inner, out);
}

static int counted_get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
    Counted* c = s->private_data;
    return c->inner.get_next(&c->inner, out);
}

static const char* counted_last_error(struct ArrowArrayStream* s) {
    Counted* c = s->private_data;
    return c->inner.get_last_error(&c->inner);
}

static void counted_release(struct ArrowArrayStream* s) {
    Counted* c = s->private_data;
    (*c->releases)++;
    c->inner.release(&c->inner);
    free(c);
    s->release = NULL;
}

/* Takes over `inner` (moved) and counts its releases in *releases. */
static void counted(struct ArrowArrayStream* inner, int* releases, struct ArrowArrayStream* out) {
    Counted* c = calloc(1, sizeof(Counted));
    c->inner = *inner;
    inner->release = NULL;
    c->releases = releases;
    out->get_schema = counted_get_schema;
    out->get_next = counted_get_next;
    out->get_last_error = counted_last_error;
    out->release = counted_release;
    out->private_data = c;
}

/* A counted stream of rows [first, first + rows) of `src` (the tu schema). */
static void rows_stream(const TuData* src, int64_t first, int64_t rows, int* releases,
                        struct ArrowArrayStream* out) {
    struct ArrowArrayStream inner;
    tu_stream(src, first, rows, 128, &inner);
    counted(&inner, releases, out);
}

/* One non-null int64 column `name` whose row i holds i * mult. */
typedef struct {
    char name[32];
    int64_t rows, mult, batch, done;
} Int64State;

static void release_int64_schema(struct ArrowSchema* s) {
    for (int64_t i = 0; i < s->n_children; i++) {
        s->children[i]->release(s->children[i]);
        free(s->children[i]);
    }
    free(s->children);
    free((void*)s->name);
    s->release = NULL;
}

static void release_leaf_schema(struct ArrowSchema* s) {
    free((void*)s->name);
    s->release = NULL;
}

/* A struct schema of fields {name: format, nullable?}. */
static void struct_schema(int n, const char* const* names, const char* const* formats, const int* nullable,
                          struct ArrowSchema* out) {
    memset(out, 0, sizeof *out);
    out->format = "+s";
    out->name = strdup("");
    out->n_children = n;
    out->children = calloc((size_t)n, sizeof(struct ArrowSchema*));
    for (int i = 0; i < n; i++) {
        struct ArrowSchema* c = calloc(1, sizeof *c);
        c->format = formats[i];
        c->name = strdup(names[i]);
        c->flags = nullable[i] ? ARROW_FLAG_NULLABLE : 0;
        c->release = release_leaf_schema;
        out->children[i] = c;
    }
    out->release = release_int64_schema;
}

static int int64_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
    Int64State* st = s->private_data;
    const char* names[] = {st->name};
    const char* formats[] = {"l"};
    const int nullable[] = {0};
    struct_schema(1, names, formats, nullable, out);
    return 0;
}

static void release_int64_array(struct ArrowArray* a) {
    for (int64_t i = 0; i < a->n_children; i++) {
        if (a->children[i]->release) a->children[i]->release(a->children[i]);
        free(a->children[i]);
    }
    free(a->children);
    if (a->n_buffers == 2) free((void*)a->buffers[1]);
    free(a->buffers);
    a->release = NULL;
}

static int int64_get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
    Int64State* st = s->private_data;
    memset(out, 0, sizeof *out);
    if (st->done >= st->rows) return 0;
    int64_t n = st->rows - st->done < st->batch ? st->rows - st->done : st->batch;
    int64_t* values = malloc(sizeof(int64_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++) values[i] = (st->done + i) * st->mult;
    struct ArrowArray* child = calloc(1, sizeof *child);
    child->length = n;
    child->n_buffers = 2;
    child->buffers = calloc(2, sizeof(void*));
    child->buffers[1] = values;
    child->release = release_int64_array;
    out->length = n;
    out->n_buffers = 1;
    out->buffers = calloc(1, sizeof(void*));
    out->n_children = 1;
    out->children = calloc(1, sizeof(struct ArrowArray*));
    out->children[0] = child;
    out->release = release_int64_array;
    st->done += n;
    return 0;
}

static const char* int64_last_error(struct ArrowArrayStream* s) {
    (void)s;
    return NULL;
}

static void int64_release(struct ArrowArrayStream* s) {
    free(s->private_data);
    s->release = NULL;
}

static void int64_stream(const char* name, int64_t rows, int64_t mult, int* releases,
                         struct ArrowArrayStream* out) {
    Int64State* st = calloc(1, sizeof *st);
    snprintf(st->name, sizeof st->name, "%s", name);
    st->rows = rows;
    st->mult = mult;
    st->batch = 128;
    struct ArrowArrayStream inner = {int64_get_schema, int64_get_next, int64_last_error, int64_release, st};
    counted(&inner, releases, out);
}

/* ---- datasets and the oracle ---- */

static char* dir;
static int serial;

/* A fresh dataset of `data` (3 fragments) at c_uri and a copy at py_uri. */
static LanceDataset* make_pair(const char* tag, char* c_uri, char* py_uri) {
    serial++;
    snprintf(c_uri, 600, "%s/%s-%d-c.lance", dir, tag, serial);
    snprintf(py_uri, 600, "%s/%s-%d-py.lance", dir, tag, serial);
    LanceDataset* ds = tu_write(c_uri, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS_PER_FILE);
    CHECK(ds != NULL);
    CHECK(lance_dataset_fragment_count(ds) == 3);
    const char* copy[] = {"cp", "-r", c_uri, py_uri, NULL}; /* a failed check when it fails */
    free(tu_run_program(copy));
    return ds;
}

/* Runs the oracle; true when pylance agrees. */
static int oracle_agrees(const char* c_case, const char* c_uri, const char* py_uri, const char* extra) {
    TuText cmd = {0};
    tu_text_append(&cmd, "RUST_LOG=error");
    tu_shell_quote(&cmd, python);
    tu_shell_quote(&cmd, oracle);
    tu_shell_quote(&cmd, c_case);
    tu_shell_quote(&cmd, c_uri);
    tu_shell_quote(&cmd, py_uri);
    if (extra) tu_text_append(&cmd, " %s", extra);
    int rc = system(cmd.text);
    free(cmd.text);
    if (rc != 0) fprintf(stderr, "oracle %s: exit status %d\n", c_case, rc);
    return rc == 0;
}

/* The merge source: rows [first, first + rows) of `other`, also written as
 * a dataset for pylance to read. */
static void write_source(int64_t first, int64_t rows, char* src_uri) {
    serial++;
    snprintf(src_uri, 600, "%s/source-%d.lance", dir, serial);
    struct ArrowSchema schema;
    struct ArrowArrayStream stream;
    tu_schema(DIM, &schema);
    tu_stream(&other, first, rows, 128, &stream);
    CHECK_OK(lance_dataset_write(src_uri, &schema, &stream, LANCE_WRITE_CREATE, NULL, NULL));
    schema.release(&schema);
}

/* ---- merge-insert ---- */

static const char* const ID_KEY[] = {"id"};

/* Merges rows [first, first + rows) of `other` into a fresh dataset through
 * lance-c, and has pylance do `c_case` on the copy. */
static void merge_case(const char* c_case, int64_t first, int64_t rows, const LanceMergeInsertParams* params,
                       uint64_t inserted, uint64_t updated, uint64_t deleted) {
    char c_uri[600], py_uri[600], src_uri[600];
    LanceDataset* ds = make_pair(c_case, c_uri, py_uri);
    write_source(first, rows, src_uri);
    int releases = 0;
    struct ArrowArrayStream source;
    rows_stream(&other, first, rows, &releases, &source);
    LanceMergeInsertResult result;
    memset(&result, 0xff, sizeof result);
    CHECK_OK(lance_dataset_merge_insert(ds, ID_KEY, 1, &source, params, &result));
    CHECK(releases == 1);
    CHECK(result.num_inserted_rows == inserted);
    CHECK(result.num_updated_rows == updated);
    CHECK(result.num_deleted_rows == deleted);
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(lance_dataset_count_rows(ds) == ROWS + inserted - deleted);
    char extra[700];
    snprintf(extra, sizeof extra, "'%s' %llu %llu %llu", src_uri, (unsigned long long)result.num_inserted_rows,
             (unsigned long long)result.num_updated_rows, (unsigned long long)result.num_deleted_rows);
    CHECK(oracle_agrees(c_case, c_uri, py_uri, extra));
    lance_dataset_close(ds);
}

static void test_merge_modes(void) {
    LanceMergeInsertParams p = {0};
    p.when_matched = LANCE_MERGE_WHEN_MATCHED_UPDATE_ALL;
    /* ids 500..699: 100 updated, 100 inserted. */
    merge_case("merge-upsert", 500, 200, &p, 100, 100, 0);
    /* NULL params: find-or-create; ids 550..649 insert 50, keep the rest. */
    merge_case("merge-find-or-create", 550, 100, NULL, 50, 0, 0);

    memset(&p, 0, sizeof p);
    p.when_matched = LANCE_MERGE_WHEN_MATCHED_DELETE;
    p.when_not_matched = LANCE_MERGE_WHEN_NOT_MATCHED_DO_NOTHING;
    merge_case("merge-delete", 100, 50, &p, 0, 0, 50);

    memset(&p, 0, sizeof p);
    p.when_matched = LANCE_MERGE_WHEN_MATCHED_UPDATE_IF;
    p.when_matched_expr = "target.id % 2 = 0";
    merge_case("merge-update-if", 500, 200, &p, 100, 50, 0);

    memset(&p, 0, sizeof p);
    p.when_matched = LANCE_MERGE_WHEN_MATCHED_UPDATE_ALL;
    p.when_not_matched_by_source = LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE_IF;
    p.when_not_matched_by_source_expr = "id < 100";
    merge_case("merge-delete-if", 500, 200, &p, 100, 100, 100);

    memset(&p, 0, sizeof p);
    p.when_not_matched = LANCE_MERGE_WHEN_NOT_MATCHED_DO_NOTHING;
    p.when_not_matched_by_source = LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE;
    /* ids 0..299 are in the source: 300 target rows are deleted. */
    merge_case("merge-by-source-delete", 0, 300, &p, 0, 0, 300);
}

/* A merge-insert that must fail with `code` and release its source once,
 * leaving the handle at its version. */
static void merge_refused(LanceDataset* ds, const char* const* on, size_t n_on, const LanceMergeInsertParams* p,
                          int32_t code, int line) {
    int releases = 0;
    struct ArrowArrayStream source;
    rows_stream(&other, 500, 200, &releases, &source);
    uint64_t version = lance_dataset_version(ds);
    LanceMergeInsertResult result = {7, 7, 7};
    int rc = lance_dataset_merge_insert(ds, on, n_on, &source, p, &result);
    int got = lance_last_error_code();
    if (rc != -1 || got != code || releases != 1) {
        fprintf(stderr, "merge_refused at line %d: rc %d, code %d (want %d), releases %d\n", line, rc, got,
                code, releases);
    }
    CHECK(rc == -1);
    CHECK(got == code);
    CHECK(releases == 1);
    CHECK(result.num_inserted_rows == 7 && result.num_updated_rows == 7 && result.num_deleted_rows == 7);
    CHECK(lance_dataset_version(ds) == version);
}

static void test_merge_bad_input(void) {
    char c_uri[600], py_uri[600];
    LanceDataset* ds = make_pair("merge-bad", c_uri, py_uri);
    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    LanceMergeInsertParams p = {0};
    p.when_matched = LANCE_MERGE_WHEN_MATCHED_UPDATE_ALL;

    merge_refused(ds, ID_KEY, 0, &p, IA, __LINE__);
    merge_refused(ds, NULL, 1, &p, IA, __LINE__);
    const char* const empty_key[] = {""};
    merge_refused(ds, empty_key, 1, &p, IA, __LINE__);
    const char* const null_key[] = {NULL};
    merge_refused(ds, null_key, 1, &p, IA, __LINE__);
    const char* const unknown_key[] = {"nope"};
    merge_refused(ds, unknown_key, 1, &p, IA, __LINE__);

    /* Modes out of range. */
    LanceMergeInsertParams bad = p;
    bad.when_matched = 5;
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad.when_matched = -1;
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad = p;
    bad.when_not_matched = 2;
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad = p;
    bad.when_not_matched_by_source = 3;
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);

    /* Expressions: missing, extra, empty. */
    bad = p;
    bad.when_matched = LANCE_MERGE_WHEN_MATCHED_UPDATE_IF;
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    int releases = 0;
    struct ArrowArrayStream source;
    rows_stream(&other, 500, 200, &releases, &source);
    CHECK_ERR(lance_dataset_merge_insert(ds, ID_KEY, 1, &source, &bad, NULL), IA);
    CHECK(tu_error_mentions("params->when_matched_expr"));
    bad.when_matched_expr = "";
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad.when_matched_expr = "target.id >"; /* bad SQL */
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad.when_matched_expr = "target.nope > 3"; /* unknown column */
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad = p;
    bad.when_matched_expr = "target.id > 3";
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad = p;
    bad.when_not_matched_by_source = LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE_IF;
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad.when_not_matched_by_source_expr = "";
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad.when_not_matched_by_source_expr = "id <";
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);
    bad = p;
    bad.when_not_matched_by_source = LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE;
    bad.when_not_matched_by_source_expr = "id < 100";
    merge_refused(ds, ID_KEY, 1, &bad, IA, __LINE__);

    /* A configuration that changes nothing. */
    LanceMergeInsertParams nothing = {0};
    nothing.when_not_matched = LANCE_MERGE_WHEN_NOT_MATCHED_DO_NOTHING;
    merge_refused(ds, ID_KEY, 1, &nothing, IA, __LINE__);

    /* FAIL with matches: an error, and nothing committed. */
    LanceMergeInsertParams fail = {0};
    fail.when_matched = LANCE_MERGE_WHEN_MATCHED_FAIL;
    releases = 0;
    rows_stream(&other, 500, 200, &releases, &source);
    CHECK(lance_dataset_merge_insert(ds, ID_KEY, 1, &source, &fail, NULL) == -1);
    /* The core reports the match as an execution error (LANCE_ERR_INTERNAL). */
    CHECK(lance_last_error_code() == LANCE_ERR_INTERNAL);
    CHECK(tu_error_mentions("found matching row"));
    CHECK(releases == 1);
    CHECK(lance_dataset_version(ds) == 1);
    /* FAIL without matches inserts. */
    releases = 0;
    rows_stream(&other, 600, 10, &releases, &source);
    LanceMergeInsertResult r;
    CHECK_OK(lance_dataset_merge_insert(ds, ID_KEY, 1, &source, &fail, &r));
    CHECK(releases == 1 && r.num_inserted_rows == 10 && r.num_updated_rows == 0);
    CHECK(lance_dataset_version(ds) == 2);

    /* A source whose schema the dataset cannot take. */
    releases = 0;
    int64_stream("x", 10, 1, &releases, &source);
    CHECK_ERR(lance_dataset_merge_insert(ds, ID_KEY, 1, &source, &p, NULL), IA);
    CHECK(releases == 1);

    /* NULL dataset: the source is still released. */
    releases = 0;
    rows_stream(&other, 0, 10, &releases, &source);
    CHECK_ERR(lance_dataset_merge_insert(NULL, ID_KEY, 1, &source, &p, NULL), IA);
    CHECK(releases == 1);
    CHECK_ERR(lance_dataset_merge_insert(ds, ID_KEY, 1, NULL, &p, NULL), IA);
    /* A released source. */
    CHECK_ERR(lance_dataset_merge_insert(ds, ID_KEY, 1, &source, &p, NULL), IA);
    /* Keys match without regard to case. */
    releases = 0;
    rows_stream(&other, 0, 10, &releases, &source);
    const char* const upper_key[] = {"ID"};
    CHECK_OK(lance_dataset_merge_insert(ds, upper_key, 1, &source, &p, &r));
    CHECK(releases == 1 && r.num_updated_rows == 10 && r.num_inserted_rows == 0);
    lance_dataset_close(ds);
}

/* ---- schema evolution ---- */

static void test_drop_columns(void) {
    char c_uri[600], py_uri[600];
    LanceDataset* ds = make_pair("drop", c_uri, py_uri);
    const char* const tag[] = {"tag"};
    CHECK_OK(lance_dataset_drop_columns(ds, tag, 1));
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(oracle_agrees("drop", c_uri, py_uri, NULL));

    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    CHECK_ERR(lance_dataset_drop_columns(NULL, tag, 1), IA);
    CHECK_ERR(lance_dataset_drop_columns(ds, tag, 0), IA);
    CHECK_ERR(lance_dataset_drop_columns(ds, NULL, 1), IA);
    const char* const null_name[] = {NULL};
    CHECK_ERR(lance_dataset_drop_columns(ds, null_name, 1), IA);
    const char* const empty[] = {""};
    CHECK_ERR(lance_dataset_drop_columns(ds, empty, 1), IA);
    const char* const not_utf8[] = {"\xff\xfe"};
    CHECK_ERR(lance_dataset_drop_columns(ds, not_utf8, 1), IA);
    CHECK(tu_error_mentions("columns[0]"));
    CHECK_ERR(lance_dataset_drop_columns(ds, tag, 1), IA); /* already gone */
    const char* const unknown[] = {"vec", "nope"};
    CHECK_ERR(lance_dataset_drop_columns(ds, unknown, 2), IA);
    const char* const all[] = {"id", "vec"};
    CHECK_ERR(lance_dataset_drop_columns(ds, all, 2), IA);
    CHECK(lance_dataset_version(ds) == 2);
    lance_dataset_close(ds);
}

static void test_alter_columns(void) {
    char c_uri[600], py_uri[600];
    LanceDataset* ds = make_pair("alter", c_uri, py_uri);
    LanceColumnAlteration alter[2] = {{"tag", "label", LANCE_COLUMN_NULLABLE_UNCHANGED, NULL},
                                      {"id", NULL, LANCE_COLUMN_NULLABLE_TRUE, NULL}};
    CHECK_OK(lance_dataset_alter_columns(ds, alter, 2));
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(oracle_agrees("alter", c_uri, py_uri, NULL));
    /* The core refuses to cast an indexed column (upstream drops the index). */
    CHECK_OK(lance_dataset_create_scalar_index(ds, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, false));
    struct ArrowSchema int32_for_index = {0};
    int32_for_index.format = "i";
    int32_for_index.name = strdup("");
    int32_for_index.release = release_leaf_schema;
    LanceColumnAlteration cast_indexed = {"id", NULL, 0, &int32_for_index};
    CHECK_ERR(lance_dataset_alter_columns(ds, &cast_indexed, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("id_idx"));
    /* A rename keeps the index. */
    LanceColumnAlteration rename_indexed = {"id", "key", 0, NULL};
    CHECK_OK(lance_dataset_alter_columns(ds, &rename_indexed, 1));
    CHECK(lance_dataset_index_count(ds) == 1);
    int32_for_index.release(&int32_for_index);
    lance_dataset_close(ds);

    /* A cast rewrites the column. */
    ds = make_pair("alter-cast", c_uri, py_uri);
    struct ArrowSchema int32_type = {0};
    int32_type.format = "i";
    int32_type.release = release_leaf_schema;
    int32_type.name = strdup("");
    LanceColumnAlteration cast = {"id", NULL, 0, &int32_type};
    CHECK_OK(lance_dataset_alter_columns(ds, &cast, 1));
    CHECK(int32_type.release != NULL); /* borrowed, never released */
    CHECK(oracle_agrees("alter-cast", c_uri, py_uri, NULL));

    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    CHECK_ERR(lance_dataset_alter_columns(NULL, &cast, 1), IA);
    CHECK_ERR(lance_dataset_alter_columns(ds, &cast, 0), IA);
    CHECK_ERR(lance_dataset_alter_columns(ds, NULL, 1), IA);
    LanceColumnAlteration bad = {NULL, "x", 0, NULL};
    CHECK_ERR(lance_dataset_alter_columns(ds, &bad, 1), IA);
    bad.path = "";
    CHECK_ERR(lance_dataset_alter_columns(ds, &bad, 1), IA);
    bad.path = "nope";
    CHECK_ERR(lance_dataset_alter_columns(ds, &bad, 1), IA);
    bad.path = "tag";
    bad.rename = NULL;
    CHECK_ERR(lance_dataset_alter_columns(ds, &bad, 1), IA); /* asks for nothing */
    CHECK(tu_error_mentions("alterations[0]"));
    bad.rename = "";
    CHECK_ERR(lance_dataset_alter_columns(ds, &bad, 1), IA);
    bad.rename = NULL;
    bad.nullable_mode = 3;
    CHECK_ERR(lance_dataset_alter_columns(ds, &bad, 1), IA);
    bad.nullable_mode = -1;
    CHECK_ERR(lance_dataset_alter_columns(ds, &bad, 1), IA);
    bad.nullable_mode = 0;
    bad.rename = "id"; /* taken */
    CHECK_ERR(lance_dataset_alter_columns(ds, &bad, 1), IA);
    /* An impossible cast: a vector column to int32. */
    LanceColumnAlteration impossible = {"vec", NULL, 0, &int32_type};
    CHECK_ERR(lance_dataset_alter_columns(ds, &impossible, 1), IA);
    /* A released data type. */
    struct ArrowSchema released = {0};
    released.format = "i";
    LanceColumnAlteration dead = {"id", NULL, 0, &released};
    CHECK_ERR(lance_dataset_alter_columns(ds, &dead, 1), IA);
    /* NOT NULL over a column that holds NULLs. */
    struct ArrowSchema nulls;
    const char* names[] = {"n"};
    const char* formats[] = {"g"};
    const int nullable[] = {1};
    struct_schema(1, names, formats, nullable, &nulls);
    CHECK_OK(lance_dataset_add_columns_nulls(ds, &nulls));
    nulls.release(&nulls);
    uint64_t version = lance_dataset_version(ds);
    LanceColumnAlteration not_null = {"n", NULL, LANCE_COLUMN_NULLABLE_FALSE, NULL};
    CHECK_ERR(lance_dataset_alter_columns(ds, &not_null, 1), IA);
    CHECK(lance_dataset_version(ds) == version);
    int32_type.release(&int32_type);
    lance_dataset_close(ds);
}

static void test_add_columns_sql(void) {
    char c_uri[600], py_uri[600];
    LanceDataset* ds = make_pair("add-sql", c_uri, py_uri);
    LanceSqlColumn columns[2] = {{"double_id", "id * 2"}, {"next_id", "id + 1"}};
    CHECK_OK(lance_dataset_add_columns_sql(ds, columns, 2, 100));
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(oracle_agrees("add-sql", c_uri, py_uri, NULL));

    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    LanceSqlColumn c = {"z", "id * 3"};
    CHECK_ERR(lance_dataset_add_columns_sql(NULL, &c, 1, 0), IA);
    CHECK_ERR(lance_dataset_add_columns_sql(ds, &c, 0, 0), IA);
    CHECK_ERR(lance_dataset_add_columns_sql(ds, NULL, 1, 0), IA);
    CHECK_ERR(lance_dataset_add_columns_sql(ds, &c, 1, (uint64_t)UINT32_MAX + 1), IA);
    CHECK(tu_error_mentions("batch_size"));
    LanceSqlColumn bad = {"", "id"};
    CHECK_ERR(lance_dataset_add_columns_sql(ds, &bad, 1, 0), IA);
    bad.name = NULL;
    CHECK_ERR(lance_dataset_add_columns_sql(ds, &bad, 1, 0), IA);
    bad.name = "z";
    bad.expression = "";
    CHECK_ERR(lance_dataset_add_columns_sql(ds, &bad, 1, 0), IA);
    bad.expression = NULL;
    CHECK_ERR(lance_dataset_add_columns_sql(ds, &bad, 1, 0), IA);
    bad.expression = "id +";
    CHECK_ERR(lance_dataset_add_columns_sql(ds, &bad, 1, 0), IA);
    bad.expression = "nope * 2";
    CHECK_ERR(lance_dataset_add_columns_sql(ds, &bad, 1, 0), IA);
    bad.name = "double_id"; /* taken */
    bad.expression = "id * 5";
    CHECK_ERR(lance_dataset_add_columns_sql(ds, &bad, 1, 0), IA);
    CHECK(lance_dataset_version(ds) == 2);
    lance_dataset_close(ds);
}

static void test_add_columns_nulls(void) {
    char c_uri[600], py_uri[600];
    LanceDataset* ds = make_pair("add-nulls", c_uri, py_uri);
    struct ArrowSchema schema;
    const char* names[] = {"n", "s"};
    const char* formats[] = {"g", "u"};
    const int nullable[] = {1, 1};
    struct_schema(2, names, formats, nullable, &schema);
    CHECK_OK(lance_dataset_add_columns_nulls(ds, &schema));
    CHECK(schema.release != NULL); /* borrowed */
    schema.release(&schema);
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(oracle_agrees("add-nulls", c_uri, py_uri, NULL));

    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    struct_schema(2, names, formats, nullable, &schema);
    CHECK_ERR(lance_dataset_add_columns_nulls(NULL, &schema), IA);
    CHECK_ERR(lance_dataset_add_columns_nulls(ds, NULL), IA);
    CHECK_ERR(lance_dataset_add_columns_nulls(ds, &schema), IA); /* taken names */
    schema.release(&schema);
    CHECK_ERR(lance_dataset_add_columns_nulls(ds, &schema), IA); /* released */
    const char* one[] = {"m"};
    const int required[] = {0};
    struct_schema(1, one, formats, required, &schema);
    CHECK_ERR(lance_dataset_add_columns_nulls(ds, &schema), IA); /* not nullable */
    schema.release(&schema);
    struct_schema(0, NULL, NULL, NULL, &schema);
    CHECK_ERR(lance_dataset_add_columns_nulls(ds, &schema), IA); /* no fields */
    schema.release(&schema);
    CHECK(lance_dataset_version(ds) == 2);
    lance_dataset_close(ds);

    /* A legacy-format dataset cannot take all-null columns. */
    char legacy_uri[600];
    snprintf(legacy_uri, sizeof legacy_uri, "%s/legacy.lance", dir);
    struct ArrowSchema tu;
    struct ArrowArrayStream stream;
    tu_schema(DIM, &tu);
    tu_stream(&data, 0, 100, 100, &stream);
    LanceWriteParams wp = {0};
    wp.data_storage_version = "legacy";
    CHECK_OK(lance_dataset_write_with_params(legacy_uri, &tu, &stream, LANCE_WRITE_CREATE, &wp, NULL, &ds));
    tu.release(&tu);
    struct_schema(2, names, formats, nullable, &schema);
    CHECK_ERR(lance_dataset_add_columns_nulls(ds, &schema), LANCE_ERR_NOT_SUPPORTED);
    schema.release(&schema);
    lance_dataset_close(ds);
}

static void test_add_columns_stream(void) {
    char c_uri[600], py_uri[600];
    LanceDataset* ds = make_pair("add-stream", c_uri, py_uri);
    int releases = 0;
    struct ArrowArrayStream stream;
    int64_stream("x", ROWS, 3, &releases, &stream);
    CHECK_OK(lance_dataset_add_columns_stream(ds, &stream, 0));
    CHECK(releases == 1);
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(oracle_agrees("add-stream", c_uri, py_uri, NULL));

    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    /* Each refused call releases the stream once. */
    releases = 0;
    int64_stream("y", ROWS, 1, &releases, &stream);
    CHECK_ERR(lance_dataset_add_columns_stream(NULL, &stream, 0), IA);
    CHECK(releases == 1);
    releases = 0;
    int64_stream("y", ROWS, 1, &releases, &stream);
    CHECK_ERR(lance_dataset_add_columns_stream(ds, &stream, (uint64_t)UINT32_MAX + 1), IA);
    CHECK(releases == 1);
    releases = 0;
    int64_stream("y", ROWS - 1, 1, &releases, &stream); /* one row short */
    CHECK_ERR(lance_dataset_add_columns_stream(ds, &stream, 0), IA);
    CHECK(releases == 1);
    releases = 0;
    int64_stream("y", ROWS + 1, 1, &releases, &stream); /* one row over */
    CHECK_ERR(lance_dataset_add_columns_stream(ds, &stream, 0), IA);
    CHECK(releases == 1);
    releases = 0;
    int64_stream("x", ROWS, 1, &releases, &stream); /* taken */
    CHECK_ERR(lance_dataset_add_columns_stream(ds, &stream, 0), IA);
    CHECK(releases == 1);
    /* Missing callbacks: refused, and still released. */
    releases = 0;
    int64_stream("y", ROWS, 1, &releases, &stream);
    stream.get_next = NULL;
    CHECK_ERR(lance_dataset_add_columns_stream(ds, &stream, 0), IA);
    CHECK(releases == 1);
    /* NULL or released stream: nothing to consume. */
    CHECK_ERR(lance_dataset_add_columns_stream(ds, NULL, 0), IA);
    CHECK_ERR(lance_dataset_add_columns_stream(ds, &stream, 0), IA);
    CHECK(lance_dataset_version(ds) == 2);
    lance_dataset_close(ds);
}

/* ---- lance_write_fragments ---- */

static int count_files(const char* path) {
    DIR* d = opendir(path);
    if (!d) return -1;
    int n = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_write_fragments(void) {
    char c_uri[600], py_uri[600], path[700];
    LanceDataset* ds = make_pair("fragments", c_uri, py_uri);
    snprintf(path, sizeof path, "%s/data", c_uri);
    int files_before = count_files(path);
    CHECK(files_before == 3);

    /* Rows 600..899 of `other` as new files next to the dataset's. */
    int releases = 0;
    struct ArrowSchema schema;
    struct ArrowArrayStream stream;
    tu_schema(DIM, &schema);
    rows_stream(&other, ROWS, 300, &releases, &stream);
    CHECK_OK(lance_write_fragments(c_uri, &schema, &stream, NULL));
    CHECK(releases == 1);
    CHECK(schema.release != NULL); /* borrowed */
    CHECK(count_files(path) > files_before);
    /* Nothing committed. */
    LanceDataset* reopened = lance_dataset_open(c_uri, NULL, 0);
    CHECK(reopened != NULL);
    CHECK(lance_dataset_latest_version(reopened) == 1);
    CHECK(lance_dataset_count_rows(reopened) == ROWS);
    lance_dataset_close(reopened);

    /* The same rows written as a dataset: what pylance must find once it
     * has committed the files. */
    char expected_uri[600];
    snprintf(expected_uri, sizeof expected_uri, "%s/fragments-expected.lance", dir);
    struct ArrowArrayStream plain;
    tu_stream(&other, ROWS, 300, 128, &plain);
    CHECK_OK(lance_dataset_write(expected_uri, &schema, &plain, LANCE_WRITE_CREATE, NULL, NULL));
    CHECK(oracle_agrees("commit-fragments", c_uri, expected_uri, NULL));

    /* Where no dataset is: files, and still no version. */
    char fresh[600];
    snprintf(fresh, sizeof fresh, "%s/fresh.lance", dir);
    releases = 0;
    rows_stream(&data, 0, 100, &releases, &stream);
    CHECK_OK(lance_write_fragments(fresh, &schema, &stream, NULL));
    CHECK(releases == 1);
    snprintf(path, sizeof path, "%s/data", fresh);
    CHECK(count_files(path) == 1);
    CHECK(lance_dataset_open(fresh, NULL, 0) == NULL);
    CHECK(lance_last_error_code() == LANCE_ERR_NOT_FOUND);

    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    /* A stream of another schema than `schema`. */
    struct ArrowSchema wider;
    tu_schema(DIM * 2, &wider);
    releases = 0;
    rows_stream(&data, 0, 100, &releases, &stream);
    CHECK_ERR(lance_write_fragments(c_uri, &wider, &stream, NULL), IA);
    CHECK(releases == 1);
    wider.release(&wider);
    /* A stream the dataset at `uri` cannot take. */
    struct ArrowSchema x_schema;
    const char* names[] = {"x"};
    const char* formats[] = {"l"};
    const int nullable[] = {0};
    struct_schema(1, names, formats, nullable, &x_schema);
    releases = 0;
    int64_stream("x", 10, 1, &releases, &stream);
    CHECK_ERR(lance_write_fragments(c_uri, &x_schema, &stream, NULL), IA);
    CHECK(releases == 1);
    x_schema.release(&x_schema);
    /* Bad arguments: the stream is released every time. */
    releases = 0;
    rows_stream(&data, 0, 10, &releases, &stream);
    CHECK_ERR(lance_write_fragments(NULL, &schema, &stream, NULL), IA);
    CHECK(releases == 1);
    releases = 0;
    rows_stream(&data, 0, 10, &releases, &stream);
    CHECK_ERR(lance_write_fragments("", &schema, &stream, NULL), IA);
    CHECK(releases == 1);
    releases = 0;
    rows_stream(&data, 0, 10, &releases, &stream);
    CHECK_ERR(lance_write_fragments(c_uri, NULL, &stream, NULL), IA);
    CHECK(releases == 1);
    releases = 0;
    rows_stream(&data, 0, 10, &releases, &stream);
    const char* const odd_opts[] = {"key", NULL};
    CHECK_ERR(lance_write_fragments(c_uri, &schema, &stream, odd_opts), IA);
    CHECK(releases == 1);
    CHECK_ERR(lance_write_fragments(c_uri, &schema, NULL, NULL), IA);
    schema.release(&schema);
    lance_dataset_close(ds);
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: test_evolve PYTHON ORACLE_SCRIPT\n");
        return 2;
    }
    python = argv[1];
    oracle = argv[2];
    data = tu_make_data(ROWS + 300, DIM, 4, 0.5f, 11);
    other = tu_make_data(ROWS + 300, DIM, 4, 0.5f, 12);
    dir = tu_temp_dir("evolve");
    RUN(test_merge_modes);
    RUN(test_merge_bad_input);
    RUN(test_drop_columns);
    RUN(test_alter_columns);
    RUN(test_add_columns_sql);
    RUN(test_add_columns_nulls);
    RUN(test_add_columns_stream);
    RUN(test_write_fragments);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    tu_free_data(&other);
    return tu_finish("test_evolve");
}
