/* Scanner tuning, extra filters, scan statistics and k-NN probe bounds,
 * checked against pylance of the same Lance release scanning the same
 * multi-fragment dataset with the same settings (tests/api/scan_oracle.py),
 * against brute-force k-NN, and on every bad-input path.  Substrait
 * filters made by pyarrow (tests/api/substrait_oracle.py) select exactly what
 * the same predicates in SQL select, here and in pylance.
 *
 * Usage: test_scan_tuning <python with pylance> <tests/api/scan_oracle.py>
 *                         <tests/api/substrait_oracle.py>.
 * Without them the test fails: it never skips. */
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include "dataset_kit.h"
#include "test_util.h"

#define ROWS 1000
#define DIM 8
#define PER_FRAGMENT 250
#define PARTITIONS 8
#define K 10

static TuData data;
static const char* python;
static const char* oracle_script;
static const char* substrait_script; /* tests/api/substrait_oracle.py */
static const char* geo_script;       /* tests/api/geo_oracle.py */
static char* dir;
static char uri[1024];     /* 4 fragments, rows deleted, a BTree index on id */
static char knn_uri[1024]; /* 4 fragments, an IVF_FLAT index on vec */
static LanceDataset* ds;
static LanceDataset* knn_ds;

/* Runs scan_oracle.py with the NULL-terminated arguments; its stdout, or
 * NULL (a failed check) when it cannot run or fails. */
#define oracle(...) tu_oracle(python, oracle_script, __VA_ARGS__)

/* pylance's scan of `dataset`'s version with the given scanner() options (JSON). */
static char* pylance_scan(const LanceDataset* dataset, const char* path, const char* options_json) {
    char version[32];
    snprintf(version, sizeof version, "%llu", (unsigned long long)lance_dataset_version(dataset));
    return oracle("scan", path, version, options_json, NULL);
}

static void check_same_text(const char* what, const char* ours, const char* theirs) {
    int same = ours && theirs && strcmp(ours, theirs) == 0;
    CHECK(same);
    if (!same) {
        fprintf(stderr, "%s differs\n--- lance-c ---\n%.2000s--- pylance ---\n%.2000s", what, ours ? ours : "(null)\n",
                theirs ? theirs : "(null)\n");
    }
}

/* ---- scan results as text, in scan_oracle.py's format ---- */

/* Appends the rows of a struct array whose columns are int64, uint64 or utf8. */
static int rows_text(TuText* rows, const struct ArrowSchema* schema, const struct ArrowArray* array) {
    for (int64_t r = 0; r < array->length; r++) {
        for (int64_t c = 0; c < schema->n_children; c++) {
            const struct ArrowSchema* s = schema->children[c];
            const struct ArrowArray* a = array->children[c];
            int64_t j = a->offset + array->offset + r;
            if (c > 0) tu_text_append(rows, "\t");
            if (!tu_arrow_valid(a, array->offset + r)) {
                tu_text_append(rows, "null");
            } else if (strcmp(s->format, "l") == 0) {
                tu_text_append(rows, "%lld", (long long)((const int64_t*)a->buffers[1])[j]);
            } else if (strcmp(s->format, "L") == 0) {
                tu_text_append(rows, "%llu", (unsigned long long)((const uint64_t*)a->buffers[1])[j]);
            } else if (strcmp(s->format, "u") == 0) {
                const int32_t* offsets = a->buffers[1];
                tu_text_append(rows, "%.*s", (int)(offsets[j + 1] - offsets[j]),
                               (const char*)a->buffers[2] + offsets[j]);
            } else {
                return -1;
            }
        }
        tu_text_append(rows, "\n");
    }
    return 0;
}

/* A scan's text as it is read: "batches n1,n2,..." and then the rows. */
typedef struct {
    TuText sizes, rows;
    int batches, ok;
} ScanText;

static ScanText scan_text_start(void) {
    ScanText t = {.ok = 1};
    tu_text_append(&t.sizes, "batches ");
    return t;
}

/* Adds one batch: its size and its rows. */
static void scan_text_add(ScanText* t, const struct ArrowSchema* schema, const struct ArrowArray* array) {
    tu_text_append(&t->sizes, t->batches++ ? ",%lld" : "%lld", (long long)array->length);
    if (rows_text(&t->rows, schema, array) != 0) t->ok = 0;
}

/* The whole text; NULL (after a failed check) when the scan or a batch failed. */
static char* scan_text_finish(ScanText* t) {
    tu_text_append(&t->sizes, "\n%s", tu_text_take(&t->rows));
    free(t->rows.text);
    CHECK(t->ok);
    if (!t->ok) {
        free(t->sizes.text);
        return NULL;
    }
    return tu_text_take(&t->sizes);
}

/* Reads the whole scan through lance_scanner_next(). */
static char* scan_text(LanceScanner* s) {
    ScanText t = scan_text_start();
    for (;;) {
        LanceBatch* batch = NULL;
        int rc = lance_scanner_next(s, &batch);
        if (rc == 1) break;
        CHECK(rc == 0);
        if (rc != 0) {
            t.ok = 0;
            break;
        }
        struct ArrowArray array;
        struct ArrowSchema schema;
        CHECK_OK(lance_batch_to_arrow(batch, &array, &schema));
        scan_text_add(&t, &schema, &array);
        array.release(&array);
        schema.release(&schema);
        lance_batch_free(batch);
    }
    return scan_text_finish(&t);
}

/* The same through lance_scanner_to_arrow_stream(). */
static char* stream_text(LanceScanner* s) {
    struct ArrowArrayStream stream;
    CHECK_OK(lance_scanner_to_arrow_stream(s, &stream));
    ScanText t = scan_text_start();
    struct ArrowSchema schema;
    CHECK(stream.get_schema(&stream, &schema) == 0);
    for (;;) {
        struct ArrowArray array;
        if (stream.get_next(&stream, &array) != 0) {
            t.ok = 0;
            break;
        }
        if (array.release == NULL) break;
        scan_text_add(&t, &schema, &array);
        array.release(&array);
    }
    schema.release(&schema);
    stream.release(&stream);
    return scan_text_finish(&t);
}

static int line_cmp(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

/* The row lines of a scan text (the batch line dropped), sorted. */
static char* sorted_rows(const char* text) {
    if (!text) return NULL;
    const char* body = strchr(text, '\n');
    char* copy = strdup(body ? body + 1 : "");
    size_t n = 0, cap = 16;
    char** lines = malloc(cap * sizeof *lines);
    for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (n == cap) lines = realloc(lines, (cap *= 2) * sizeof *lines);
        lines[n++] = line;
    }
    qsort(lines, n, sizeof *lines, line_cmp);
    TuText out = {0};
    for (size_t i = 0; i < n; i++) tu_text_append(&out, "%s\n", lines[i]);
    free(lines);
    free(copy);
    return tu_text_take(&out);
}

static LanceScanner* scanner_of(LanceDataset* dataset, const char* const* columns, const char* filter) {
    LanceScanner* s = lance_scanner_new(dataset, columns, filter);
    CHECK(s != NULL);
    return s;
}

/* Our scan (both ways of reading it) against pylance's with the same settings. */
static void compare_scan(const char* what, LanceScanner* s, const char* options_json) {
    char* ours = stream_text(s);
    char* again = scan_text(s);
    char* theirs = pylance_scan(ds, uri, options_json);
    check_same_text(what, ours, theirs);
    check_same_text(what, again, theirs);
    free(ours);
    free(again);
    free(theirs);
}

/* ---- settings that shape the output, against pylance ---- */

static const char* id_only[] = {"id", NULL};

static void test_strict_batch_size(void) {
    LanceScanner* s = scanner_of(ds, id_only, NULL);
    CHECK_OK(lance_scanner_set_batch_size(s, 64));
    CHECK_OK(lance_scanner_set_strict_batch_size(s, true));
    compare_scan("strict batch size 64", s, "{\"columns\": [\"id\"], \"batch_size\": 64, \"strict_batch_size\": true}");
    lance_scanner_close(s);

    /* Every batch but the last holds exactly 64 rows, whatever pylance says. */
    s = scanner_of(ds, id_only, NULL);
    CHECK_OK(lance_scanner_set_batch_size(s, 64));
    CHECK_OK(lance_scanner_set_strict_batch_size(s, true));
    uint64_t total = 0, last = 0, short_batches = 0;
    for (;;) {
        LanceBatch* b = NULL;
        int rc = lance_scanner_next(s, &b);
        if (rc != 0) {
            CHECK(rc == 1);
            break;
        }
        short_batches += last != 0 && last != 64;
        last = lance_batch_num_rows(b);
        total += last;
        lance_batch_free(b);
    }
    CHECK(short_batches == 0 && last > 0 && last <= 64);
    CHECK(total == lance_dataset_count_rows(ds));
    lance_scanner_close(s);
}

static void test_batch_size_bytes(void) {
    LanceScanner* s = scanner_of(ds, id_only, NULL);
    CHECK_OK(lance_scanner_set_batch_size_bytes(s, 1000));
    compare_scan("batch_size_bytes 1000", s, "{\"columns\": [\"id\"], \"batch_size_bytes\": 1000}");
    lance_scanner_close(s);
    /* With a row batch size too, both limits apply (as in pylance). */
    s = scanner_of(ds, id_only, NULL);
    CHECK_OK(lance_scanner_set_batch_size(s, 50));
    CHECK_OK(lance_scanner_set_batch_size_bytes(s, 1000));
    compare_scan("batch_size 50 and batch_size_bytes 1000", s,
                 "{\"columns\": [\"id\"], \"batch_size\": 50, \"batch_size_bytes\": 1000}");
    lance_scanner_close(s);
}

static void test_row_address(void) {
    const char* cols[] = {"id", NULL};
    LanceScanner* s = scanner_of(ds, cols, "id > 240");
    CHECK_OK(lance_scanner_with_row_id(s, true));
    CHECK_OK(lance_scanner_with_row_address(s, true));
    compare_scan(
        "_rowid and _rowaddr", s,
        "{\"columns\": [\"id\"], \"filter\": \"id > 240\", \"with_row_id\": true, \"with_row_address\": true}");
    lance_scanner_close(s);
    /* Set and cleared again before scanning: no _rowaddr column. */
    s = scanner_of(ds, cols, "id > 240");
    CHECK_OK(lance_scanner_with_row_address(s, true));
    CHECK_OK(lance_scanner_with_row_address(s, false));
    compare_scan("row address off", s, "{\"columns\": [\"id\"], \"filter\": \"id > 240\"}");
    lance_scanner_close(s);
}

static void test_include_deleted_rows(void) {
    LanceScanner* s = scanner_of(ds, id_only, NULL);
    /* Without _rowid the core refuses it; nothing is kept. */
    CHECK_ERR(lance_scanner_set_include_deleted_rows(s, true), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_OK(lance_scanner_with_row_id(s, true));
    CHECK_OK(lance_scanner_set_include_deleted_rows(s, true));
    CHECK_OK(lance_scanner_set_batch_size(s, 100));
    compare_scan("include_deleted_rows", s,
                 "{\"columns\": [\"id\"], \"with_row_id\": true, \"include_deleted_rows\": true, \"batch_size\": 100}");
    /* _rowid is now needed: turning it off is refused. */
    CHECK_ERR(lance_scanner_with_row_id(s, false), LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);

    /* With a filter that the BTree index on id answers, the index leaves the
       deleted rows out; with scalar indices off they come back (as pylance). */
    for (int use_index = 1; use_index >= 0; use_index--) {
        s = scanner_of(ds, id_only, "id < 100");
        CHECK_OK(lance_scanner_with_row_id(s, true));
        CHECK_OK(lance_scanner_set_use_scalar_index(s, use_index));
        CHECK_OK(lance_scanner_set_include_deleted_rows(s, true));
        char* ours = scan_text(s);
        char* theirs =
            pylance_scan(ds, uri,
                         use_index ? "{\"columns\": [\"id\"], \"filter\": \"id < 100\", \"with_row_id\": true, "
                                     "\"include_deleted_rows\": true, \"use_scalar_index\": true}"
                                   : "{\"columns\": [\"id\"], \"filter\": \"id < 100\", \"with_row_id\": true, "
                                     "\"include_deleted_rows\": true, \"use_scalar_index\": false}");
        check_same_text("include_deleted_rows with a filter", ours, theirs);
        /* 10 of the 100 rows are deleted: only the unindexed scan shows them. */
        int nulls = 0;
        for (const char* p = ours; p && (p = strstr(p, "\tnull")) != NULL; p++) nulls++;
        CHECK(nulls == (use_index ? 0 : 10));
        free(ours);
        free(theirs);
        lance_scanner_close(s);
    }

    /* Not with a k-NN search. */
    s = scanner_of(ds, id_only, NULL);
    CHECK_OK(lance_scanner_with_row_id(s, true));
    CHECK_OK(lance_scanner_nearest(s, "vec", data.vectors, DIM, LANCE_DTYPE_FLOAT32, K));
    CHECK_ERR(lance_scanner_set_include_deleted_rows(s, true), LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);
}

static void test_knobs_keep_rows(void) {
    const char* cols[] = {"id", "tag", NULL};
    LanceScanner* s = scanner_of(ds, cols, "id >= 500 OR id < 20");
    CHECK_OK(lance_scanner_set_batch_readahead(s, 2));
    CHECK_OK(lance_scanner_set_fragment_readahead(s, 1));
    CHECK_OK(lance_scanner_set_io_buffer_size(s, 1 << 20));
    CHECK_OK(lance_scanner_set_target_parallelism(s, 3));
    CHECK_OK(lance_scanner_set_use_stats(s, false));
    CHECK_OK(lance_scanner_set_use_scalar_index(s, false));
    compare_scan("readahead, I/O buffer, parallelism, no stats, no scalar index", s,
                 "{\"columns\": [\"id\", \"tag\"], \"filter\": \"id >= 500 OR id < 20\", \"batch_readahead\": 2, "
                 "\"fragment_readahead\": 1, \"io_buffer_size\": 1048576, \"use_stats\": false, "
                 "\"use_scalar_index\": false}");
    lance_scanner_close(s);
}

static void test_scan_out_of_order(void) {
    LanceScanner* s = scanner_of(ds, id_only, NULL);
    CHECK_OK(lance_scanner_with_row_id(s, true));
    CHECK_OK(lance_scanner_set_batch_size(s, 50));
    CHECK_OK(lance_scanner_set_fragment_readahead(s, 4));
    CHECK_OK(lance_scanner_set_scan_in_order(s, false));
    char* ours = scan_text(s);
    char* theirs = pylance_scan(ds, uri,
                                "{\"columns\": [\"id\"], \"with_row_id\": true, \"batch_size\": 50, "
                                "\"fragment_readahead\": 4, \"scan_in_order\": false}");
    char* ours_sorted = sorted_rows(ours);
    char* theirs_sorted = sorted_rows(theirs);
    check_same_text("unordered scan, as a set of rows", ours_sorted, theirs_sorted);
    free(ours);
    free(theirs);
    free(ours_sorted);
    free(theirs_sorted);
    lance_scanner_close(s);
}

/* ---- filters ---- */

static void test_additional_filters(void) {
    const char* cols[] = {"id", "tag", NULL};
    LanceScanner* s = scanner_of(ds, cols, "id >= 100");
    CHECK_OK(lance_scanner_additional_sql_filter(s, "id < 300"));
    CHECK_OK(lance_scanner_additional_sql_filter(s, "tag = 't3'"));
    compare_scan("main filter AND two additional ones", s,
                 "{\"columns\": [\"id\", \"tag\"], \"filter\": \"(id >= 100) AND (id < 300) AND (tag = 't3')\"}");
    lance_scanner_close(s);

    /* Each predicate keeps its own grouping: (a OR b) AND c, not a OR (b AND c). */
    s = scanner_of(ds, id_only, "id < 10 OR id > 700");
    CHECK_OK(lance_scanner_additional_sql_filter(s, "id > 5"));
    compare_scan("grouping", s, "{\"columns\": [\"id\"], \"filter\": \"(id < 10 OR id > 700) AND id > 5\"}");
    lance_scanner_close(s);

    /* Without a main filter, and with a k-NN search (the filter may use _distance). */
    s = scanner_of(ds, id_only, NULL);
    CHECK_OK(lance_scanner_additional_sql_filter(s, "id % 100 = 7"));
    compare_scan("additional filter alone", s, "{\"columns\": [\"id\"], \"filter\": \"id % 100 = 7\"}");
    lance_scanner_close(s);

    s = scanner_of(knn_ds, id_only, "id < 500");
    CHECK_OK(lance_scanner_nearest(s, "vec", data.vectors + 3 * DIM, DIM, LANCE_DTYPE_FLOAT32, K));
    CHECK_OK(lance_scanner_set_use_index(s, false));
    CHECK_OK(lance_scanner_set_prefilter(s, true));
    CHECK_OK(lance_scanner_additional_sql_filter(s, "id % 2 = 1"));
    int64_t got[K];
    CHECK(tu_knn_ids(s, got, K) == K);
    /* Brute force over the rows both filters keep. */
    TuData odd = data;
    int64_t kept = 0;
    float* vectors = malloc(sizeof(float) * ROWS * DIM);
    int64_t* ids = malloc(sizeof(int64_t) * ROWS);
    for (int64_t i = 0; i < 500; i += 2) {
        memcpy(vectors + kept * DIM, data.vectors + (i + 1) * DIM, sizeof(float) * DIM);
        ids[kept++] = i + 1;
    }
    odd.rows = kept;
    odd.vectors = vectors;
    int64_t truth[K];
    tu_brute_force_knn(&odd, data.vectors + 3 * DIM, K, truth);
    for (int i = 0; i < K; i++) CHECK(got[i] == ids[truth[i]]);
    free(vectors);
    free(ids);
    lance_scanner_close(s);

    /* A malformed or unknown predicate is refused and not kept. */
    s = scanner_of(ds, id_only, "id >= 100");
    CHECK_ERR(lance_scanner_additional_sql_filter(s, "id >>> 3"), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_additional_sql_filter(s, "no_such_column = 1"), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_additional_sql_filter(s, ""), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_additional_sql_filter(s, NULL), LANCE_ERR_INVALID_ARGUMENT);
    compare_scan("after refused additional filters", s, "{\"columns\": [\"id\"], \"filter\": \"id >= 100\"}");
    lance_scanner_close(s);
}

/* ---- Substrait filters, against the same predicates in SQL and pylance ---- */

#define SUBSTRAIT_ROWS 600 /* tests/api/substrait_oracle.py's dataset */
#define GEO_ROWS 600       /* tests/api/geo_oracle.py's dataset (no more than SUBSTRAIT_ROWS: the ids read) */

/* A scanner of `dataset` projecting id, with the SQL filter `sql` (or none)
 * and then the Substrait filter in `bytes` (or none). */
static LanceScanner* substrait_scanner(LanceDataset* dataset, const char* sql, const uint8_t* bytes, size_t len) {
    LanceScanner* s = scanner_of(dataset, id_only, sql);
    if (s && bytes) CHECK_OK(lance_scanner_set_substrait_filter(s, bytes, len));
    return s;
}

static char* substrait_ids(LanceDataset* dataset, const char* sql, const uint8_t* bytes, size_t len, int64_t* n) {
    LanceScanner* s = substrait_scanner(dataset, sql, bytes, len);
    char* text = s ? dk_ids_text(s, SUBSTRAIT_ROWS, n) : NULL;
    lance_scanner_close(s);
    return text;
}

static uint8_t* read_substrait(const char* out_dir, const char* name, size_t* len) {
    char path[1400];
    snprintf(path, sizeof path, "%s/%s.substrait", out_dir, name);
    uint8_t* bytes = read_whole_file(path, len);
    CHECK(bytes != NULL && *len > 0);
    return bytes;
}

static void test_substrait_filter(void) {
    /* The oracle writes the dataset; the BTREE index on id is built here. */
    char path[1200], out_dir[1200];
    snprintf(path, sizeof path, "%s/substrait.lance", dir);
    snprintf(out_dir, sizeof out_dir, "%s/substrait", dir);
    CHECK(mkdir(out_dir, 0700) == 0);
    LanceDataset* sds = dk_oracle_dataset(python, substrait_script, path);
    if (!sds) return;
    CHECK(lance_dataset_fragment_count(sds) == 4);
    CHECK_OK(lance_dataset_create_scalar_index(sds, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, false));

    /* Each predicate: "<name>\t<sql>\t<ids pylance selects>" and its bytes. */
    char* listing = tu_oracle(python, substrait_script, "predicates", path, out_dir, NULL);
    CHECK(listing != NULL);
    int predicates = 0;
    for (char* line = listing; line && *line;) {
        char* end = strchr(line, '\n');
        if (end) *end = '\0';
        char* sql = strchr(line, '\t');
        char* expected = sql ? strchr(sql + 1, '\t') : NULL;
        CHECK(expected != NULL);
        if (!expected) break;
        *sql++ = '\0';
        *expected++ = '\0';
        predicates++;
        size_t len = 0;
        uint8_t* bytes = read_substrait(out_dir, line, &len);
        int64_t n = 0, n_sql = 0, n_more = 0, n_unindexed = 0;
        char* by_substrait = substrait_ids(sds, NULL, bytes, len, &n);
        char* by_sql = substrait_ids(sds, sql, NULL, 0, &n_sql);
        /* The same SQL as an additional filter. */
        LanceScanner* s = scanner_of(sds, id_only, NULL);
        CHECK_OK(lance_scanner_additional_sql_filter(s, sql));
        char* by_additional = dk_ids_text(s, SUBSTRAIT_ROWS, &n_more);
        lance_scanner_close(s);
        /* Substrait with the scalar index off: the same rows. */
        s = substrait_scanner(sds, NULL, bytes, len);
        CHECK_OK(lance_scanner_set_use_scalar_index(s, false));
        char* unindexed = dk_ids_text(s, SUBSTRAIT_ROWS, &n_unindexed);
        lance_scanner_close(s);
        check_same_text(line, by_substrait, expected);
        check_same_text(line, by_sql, expected);
        check_same_text(line, by_additional, expected);
        check_same_text(line, unindexed, expected);
        /* Each predicate selects some rows, not all. */
        CHECK(n > 0 && n < SUBSTRAIT_ROWS);
        if (!(n > 0 && n < SUBSTRAIT_ROWS)) fprintf(stderr, "    %s selects %lld rows\n", line, (long long)n);
        free(by_substrait);
        free(by_sql);
        free(by_additional);
        free(unindexed);
        free(bytes);
        line = end ? end + 1 : NULL;
    }
    CHECK(predicates == 11);
    free(listing);

    size_t lt_len = 0, in_len = 0;
    uint8_t* lt_indexed = read_substrait(out_dir, "lt_indexed", &lt_len); /* id < 100 */
    uint8_t* in_indexed = read_substrait(out_dir, "in_indexed", &in_len); /* id IN (3, 141, 277, 450, 599, 1000) */
    int64_t n = 0;
    TuText even_below_100 = {0};
    for (int i = 0; i < 100; i += 2) tu_text_append(&even_below_100, i ? ",%d" : "%d", i);
    char* want_even = tu_text_take(&even_below_100);
    char* want_lt = substrait_ids(sds, "id < 100", NULL, 0, &n);

    /* The Substrait filter takes the place of lance_scanner_new()'s SQL one. */
    char* ids = substrait_ids(sds, "id >= 590", lt_indexed, lt_len, &n);
    check_same_text("Substrait over the SQL filter", ids, want_lt);
    free(ids);
    /* A second one replaces the first. */
    LanceScanner* s = substrait_scanner(sds, NULL, in_indexed, in_len);
    CHECK_OK(lance_scanner_set_substrait_filter(s, lt_indexed, lt_len));
    ids = dk_ids_text(s, SUBSTRAIT_ROWS, &n);
    check_same_text("the second Substrait filter", ids, want_lt);
    free(ids);
    lance_scanner_close(s);
    /* Additional SQL filters are ANDed with it, in either order. */
    s = scanner_of(sds, id_only, NULL);
    CHECK_OK(lance_scanner_additional_sql_filter(s, "id % 2 = 0"));
    CHECK_OK(lance_scanner_set_substrait_filter(s, lt_indexed, lt_len));
    ids = dk_ids_text(s, SUBSTRAIT_ROWS, &n);
    check_same_text("additional filter, then Substrait", ids, want_even);
    free(ids);
    lance_scanner_close(s);
    s = substrait_scanner(sds, NULL, lt_indexed, lt_len);
    CHECK_OK(lance_scanner_additional_sql_filter(s, "id % 2 = 0"));
    ids = dk_ids_text(s, SUBSTRAIT_ROWS, &n);
    check_same_text("Substrait, then an additional filter", ids, want_even);
    free(ids);
    lance_scanner_close(s);

    /* Bad bytes are refused and leave the scanner's filter as it was. */
    const int IA = LANCE_ERR_INVALID_ARGUMENT;
    size_t foreign_len = 0, not_boolean_len = 0;
    char foreign_path[1400], not_boolean_path[1400];
    snprintf(foreign_path, sizeof foreign_path, "%s/foreign.bin", out_dir);
    snprintf(not_boolean_path, sizeof not_boolean_path, "%s/not_boolean.bin", out_dir);
    free(tu_oracle(python, substrait_script, "foreign", path, foreign_path, NULL));
    free(tu_oracle(python, substrait_script, "not_boolean", path, not_boolean_path, NULL));
    uint8_t* foreign = read_whole_file(foreign_path, &foreign_len);             /* one column too many */
    uint8_t* not_boolean = read_whole_file(not_boolean_path, &not_boolean_len); /* the column val itself */
    CHECK(foreign != NULL && not_boolean != NULL);
    const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    s = substrait_scanner(sds, "id < 100", NULL, 0);
    CHECK_ERR(lance_scanner_set_substrait_filter(s, garbage, sizeof garbage), IA);
    CHECK_ERR(lance_scanner_set_substrait_filter(s, lt_indexed, lt_len - 1), IA); /* cut short */
    if (foreign) CHECK_ERR(lance_scanner_set_substrait_filter(s, foreign, foreign_len), IA);
    if (not_boolean) CHECK_ERR(lance_scanner_set_substrait_filter(s, not_boolean, not_boolean_len), IA);
    CHECK_ERR(lance_scanner_set_substrait_filter(s, NULL, lt_len), IA);
    CHECK_ERR(lance_scanner_set_substrait_filter(s, lt_indexed, 0), IA);
    CHECK_ERR(lance_scanner_set_substrait_filter(NULL, lt_indexed, lt_len), IA);
    CHECK_ERR(lance_scanner_additional_sql_filter(NULL, "id > 1"), IA);
    ids = dk_ids_text(s, SUBSTRAIT_ROWS, &n);
    check_same_text("the SQL filter after refused Substrait bytes", ids, want_lt);
    free(ids);
    lance_scanner_close(s);
    /* A refused filter does not replace a Substrait one either. */
    s = substrait_scanner(sds, NULL, in_indexed, in_len);
    CHECK_ERR(lance_scanner_set_substrait_filter(s, garbage, sizeof garbage), IA);
    ids = dk_ids_text(s, SUBSTRAIT_ROWS, &n);
    check_same_text("a Substrait filter after refused bytes", ids, "3,141,277,450,599");
    free(ids);
    /* Once the scan has started: refused. */
    CHECK_ERR(lance_scanner_set_substrait_filter(s, lt_indexed, lt_len), IA);
    lance_scanner_close(s);

    free(foreign);
    free(not_boolean);
    free(want_even);
    free(want_lt);
    free(lt_indexed);
    free(in_indexed);
    lance_dataset_close(sds);
}

/* ---- scan statistics ---- */

typedef struct {
    int calls;
    uint64_t bytes_read, iops, requests, comparisons;
    int names_ok;
    LanceScanner* scanner; /* for the re-entry check */
    int reentry_rc;
    LanceErrorCode reentry_code;
} Stats;

static void on_statistics(void* ctx, const LanceScanStatistics* st) {
    Stats* stats = ctx;
    stats->calls++;
    stats->bytes_read = st->bytes_read;
    stats->iops = st->iops;
    stats->requests = st->requests;
    stats->comparisons = st->index_comparisons;
    int ok = (st->metrics_len == 0) == (st->metrics == NULL);
    for (size_t i = 0; i < st->metrics_len; i++) {
        const LanceScanMetric* m = &st->metrics[i];
        ok &= m->name != NULL && m->name_len > 0 &&
              (m->kind == LANCE_SCAN_METRIC_COUNT || m->kind == LANCE_SCAN_METRIC_TIME_NANOSECONDS);
    }
    stats->names_ok = ok;
    if (stats->scanner) {
        stats->reentry_rc = lance_scanner_set_limit(stats->scanner, 5);
        stats->reentry_code = lance_last_error_code();
    }
}

/* Reads `batches` batches of a stream (all of them for -1); returns the rows read, or -1. */
static int64_t count_stream_rows(struct ArrowArrayStream* stream, int batches) {
    int64_t rows = 0;
    for (int b = 0; batches < 0 || b < batches; b++) {
        struct ArrowArray array;
        if (stream->get_next(stream, &array) != 0) return -1;
        if (array.release == NULL) break;
        rows += array.length;
        array.release(&array);
    }
    return rows;
}

static void test_statistics_callback(void) {
    uint64_t live = lance_dataset_count_rows(ds);

    /* lance_scanner_next() to the end: exactly once, in the call that returns 1. */
    Stats stats = {0};
    LanceScanner* s = scanner_of(ds, NULL, NULL);
    CHECK_OK(lance_scanner_set_statistics_callback(s, on_statistics, &stats));
    CHECK_OK(lance_scanner_set_batch_size(s, 100));
    int64_t rows = 0;
    for (;;) {
        LanceBatch* b = NULL;
        int rc = lance_scanner_next(s, &b);
        if (rc == 1) break;
        CHECK(rc == 0 && stats.calls == 0);
        if (rc != 0) break;
        rows += (int64_t)lance_batch_num_rows(b);
        lance_batch_free(b);
    }
    CHECK(rows == (int64_t)live);
    CHECK(stats.calls == 1);
    CHECK(stats.bytes_read > 0 && stats.iops > 0 && stats.requests > 0 && stats.names_ok);
    LanceBatch* none = NULL;
    CHECK(lance_scanner_next(s, &none) == 1 && none == NULL);
    CHECK(stats.calls == 1);
    /* Scanning has begun: the callback can no longer change. */
    CHECK_ERR(lance_scanner_set_statistics_callback(s, on_statistics, &stats), LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);

    /* Streams: once per stream read to the end, never for one released early,
       and also for a stream read after its scanner was closed. */
    Stats st2 = {0};
    s = scanner_of(ds, id_only, NULL);
    CHECK_OK(lance_scanner_set_batch_size(s, 100));
    CHECK_OK(lance_scanner_set_statistics_callback(s, on_statistics, NULL));
    CHECK_OK(lance_scanner_set_statistics_callback(s, on_statistics, &st2)); /* replaces */
    struct ArrowArrayStream a, b, c;
    CHECK_OK(lance_scanner_to_arrow_stream(s, &a));
    CHECK_OK(lance_scanner_to_arrow_stream(s, &b));
    CHECK_OK(lance_scanner_to_arrow_stream(s, &c));
    CHECK(count_stream_rows(&a, -1) == (int64_t)live);
    CHECK(st2.calls == 1 && st2.bytes_read > 0 && st2.iops > 0 && st2.names_ok);
    struct ArrowArray end;
    CHECK(a.get_next(&a, &end) == 0 && end.release == NULL);
    CHECK(st2.calls == 1);
    CHECK(count_stream_rows(&b, 2) > 0); /* released early */
    b.release(&b);
    CHECK(st2.calls == 1);
    lance_scanner_close(s);
    CHECK(count_stream_rows(&c, -1) == (int64_t)live);
    CHECK(st2.calls == 2);
    a.release(&a);
    c.release(&c);

    /* A stream whose scan fails never reports, even when read on to its end:
       the data files disappear after the stream was made. */
    char copy_uri[1200];
    snprintf(copy_uri, sizeof copy_uri, "%s/doomed.lance", dir);
    LanceDataset* doomed = tu_write(copy_uri, &data, 0, ROWS, LANCE_WRITE_CREATE, PER_FRAGMENT);
    CHECK(doomed != NULL);
    Stats st3 = {0};
    s = scanner_of(doomed, NULL, NULL);
    CHECK_OK(lance_scanner_set_batch_size(s, 100));
    CHECK_OK(lance_scanner_set_statistics_callback(s, on_statistics, &st3));
    struct ArrowArrayStream d;
    CHECK_OK(lance_scanner_to_arrow_stream(s, &d));
    char data_dir[1300];
    snprintf(data_dir, sizeof data_dir, "%s/data", copy_uri);
    tu_remove_tree(data_dir);
    int errors = 0;
    for (int i = 0; i < 100; i++) {
        struct ArrowArray arr;
        if (d.get_next(&d, &arr) != 0) {
            errors++;
            continue;
        }
        if (arr.release == NULL) break;
        arr.release(&arr);
    }
    CHECK(errors > 0);
    CHECK(st3.calls == 0);
    d.release(&d);
    lance_scanner_close(s);
    lance_dataset_close(doomed);

    /* Inside the callback lance-c refuses calls instead of re-entering. */
    Stats st4 = {0};
    s = scanner_of(ds, id_only, "id < 50");
    st4.scanner = s;
    CHECK_OK(lance_scanner_set_statistics_callback(s, on_statistics, &st4));
    CHECK(tu_count_scan(s) == 45);
    CHECK(st4.calls == 1 && st4.reentry_rc == -1 && st4.reentry_code == LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);

    /* A k-NN search over an index reports the index work. */
    Stats st5 = {0};
    s = scanner_of(knn_ds, id_only, NULL);
    CHECK_OK(lance_scanner_nearest(s, "vec", data.vectors, DIM, LANCE_DTYPE_FLOAT32, K));
    CHECK_OK(lance_scanner_set_nprobes(s, 2));
    CHECK_OK(lance_scanner_set_statistics_callback(s, on_statistics, &st5));
    int64_t got[K];
    CHECK(tu_knn_ids(s, got, K) == K);
    CHECK(st5.calls == 1 && st5.names_ok);
    lance_scanner_close(s);

    CHECK_ERR(lance_scanner_set_statistics_callback(NULL, on_statistics, NULL), LANCE_ERR_INVALID_ARGUMENT);
    s = scanner_of(ds, NULL, NULL);
    CHECK_ERR(lance_scanner_set_statistics_callback(s, NULL, &stats), LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(s);
}

/* ---- k-NN probe bounds, approximation, parallelism ---- */

static const float* query_of(int q) { return data.vectors + (int64_t)(q * 97 + 11) * DIM; }

/* The k-NN top K of query q after `setup`, compared with brute force. */
static int exact_after(int q, void (*setup)(LanceScanner*, int), int arg) {
    LanceScanner* s = scanner_of(knn_ds, id_only, NULL);
    CHECK_OK(lance_scanner_nearest(s, "vec", query_of(q), DIM, LANCE_DTYPE_FLOAT32, K));
    setup(s, arg);
    int64_t got[K] = {0}, truth[K];
    int n = tu_knn_ids(s, got, K);
    lance_scanner_close(s);
    tu_brute_force_knn(&data, query_of(q), K, truth);
    return n == K && memcmp(got, truth, sizeof truth) == 0;
}

static void all_partitions_by_bounds(LanceScanner* s, int arg) {
    (void)arg;
    CHECK_OK(lance_scanner_set_maximum_nprobes(s, PARTITIONS));
    CHECK_OK(lance_scanner_set_minimum_nprobes(s, PARTITIONS));
}

static void all_partitions_by_nprobes(LanceScanner* s, int arg) {
    (void)arg;
    CHECK_OK(lance_scanner_set_nprobes(s, PARTITIONS));
}

static void all_partitions_with_mode(LanceScanner* s, int mode) {
    CHECK_OK(lance_scanner_set_minimum_nprobes(s, PARTITIONS));
    CHECK_OK(lance_scanner_set_approx_mode(s, (LanceApproxMode)mode));
}

static void all_partitions_with_parallelism(LanceScanner* s, int parallelism) {
    CHECK_OK(lance_scanner_set_query_parallelism(s, parallelism));
    CHECK_OK(lance_scanner_set_minimum_nprobes(s, PARTITIONS));
    CHECK_OK(lance_scanner_set_maximum_nprobes(s, PARTITIONS));
}

/* The vectors a k-NN search of query 0 compares, with probe bounds. */
static uint64_t comparisons(uint32_t minimum, uint32_t maximum) {
    Stats stats = {0};
    LanceScanner* s = scanner_of(knn_ds, id_only, NULL);
    CHECK_OK(lance_scanner_nearest(s, "vec", query_of(0), DIM, LANCE_DTYPE_FLOAT32, K));
    CHECK_OK(lance_scanner_set_minimum_nprobes(s, minimum));
    CHECK_OK(lance_scanner_set_maximum_nprobes(s, maximum));
    CHECK_OK(lance_scanner_set_statistics_callback(s, on_statistics, &stats));
    int64_t got[K];
    CHECK(tu_knn_ids(s, got, K) == K);
    CHECK(stats.calls == 1);
    lance_scanner_close(s);
    return stats.comparisons;
}

static void test_nprobes_bounds(void) {
    for (int q = 0; q < 6; q++) {
        CHECK(exact_after(q, all_partitions_by_bounds, 0));
        CHECK(exact_after(q, all_partitions_by_nprobes, 0));
    }
    for (int mode = LANCE_APPROX_MODE_FAST; mode <= LANCE_APPROX_MODE_ACCURATE; mode++)
        for (int q = 0; q < 3; q++) CHECK(exact_after(q, all_partitions_with_mode, mode));
    const int parallelism[] = {-1, 0, 1, 4};
    for (int p = 0; p < 4; p++)
        for (int q = 0; q < 3; q++) CHECK(exact_after(q, all_partitions_with_parallelism, parallelism[p]));
    /* The bounds reach the search: probing every partition compares every
       vector, probing one compares fewer (the statistics count them). */
    uint64_t one = comparisons(1, 1), all = comparisons(PARTITIONS, PARTITIONS);
    CHECK(all == ROWS);
    CHECK(one > 0 && one < all);

    LanceScanner* s = scanner_of(knn_ds, id_only, NULL);
    CHECK_ERR(lance_scanner_set_nprobes(s, 0), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_minimum_nprobes(s, 0), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_maximum_nprobes(s, 0), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_OK(lance_scanner_set_maximum_nprobes(s, 4));
    CHECK_ERR(lance_scanner_set_minimum_nprobes(s, 5), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("maximum_nprobes = 4"));
    CHECK_OK(lance_scanner_set_minimum_nprobes(s, 4));
    CHECK_ERR(lance_scanner_set_maximum_nprobes(s, 3), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("minimum_nprobes = 4"));
    CHECK_OK(lance_scanner_set_nprobes(s, 6)); /* both bounds at once */
    CHECK_ERR(lance_scanner_set_maximum_nprobes(s, 5), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_OK(lance_scanner_set_maximum_nprobes(s, 7));
    CHECK_ERR(lance_scanner_set_approx_mode(s, (LanceApproxMode)3), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_approx_mode(s, (LanceApproxMode)-1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_query_parallelism(s, -2), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_scanner_set_query_parallelism(s, INT32_MIN), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_OK(lance_scanner_set_query_parallelism(s, INT32_MAX));
    lance_scanner_close(s);
}

/* ---- bad input ---- */

/* Every setting, each with a value it accepts, on a scanner `s` that takes
 * none: NULL, or one that has started scanning. */
static void check_settings_refused(LanceScanner* s) {
    const int IA = LANCE_ERR_INVALID_ARGUMENT;
    CHECK_ERR(lance_scanner_set_batch_size_bytes(s, 1), IA);
    CHECK_ERR(lance_scanner_set_io_buffer_size(s, 1), IA);
    CHECK_ERR(lance_scanner_set_batch_readahead(s, 1), IA);
    CHECK_ERR(lance_scanner_set_fragment_readahead(s, 1), IA);
    CHECK_ERR(lance_scanner_set_target_parallelism(s, 1), IA);
    CHECK_ERR(lance_scanner_set_scan_in_order(s, false), IA);
    CHECK_ERR(lance_scanner_set_use_scalar_index(s, false), IA);
    CHECK_ERR(lance_scanner_set_strict_batch_size(s, true), IA);
    CHECK_ERR(lance_scanner_set_use_stats(s, false), IA);
    CHECK_ERR(lance_scanner_with_row_address(s, true), IA);
    CHECK_ERR(lance_scanner_set_include_deleted_rows(s, false), IA);
    CHECK_ERR(lance_scanner_additional_sql_filter(s, "id > 1"), IA);
    CHECK_ERR(lance_scanner_set_substrait_filter(s, (const uint8_t*)"x", 1), IA);
    CHECK_ERR(lance_scanner_set_statistics_callback(s, on_statistics, NULL), IA);
    CHECK_ERR(lance_scanner_set_minimum_nprobes(s, 1), IA);
    CHECK_ERR(lance_scanner_set_maximum_nprobes(s, 1), IA);
    CHECK_ERR(lance_scanner_set_approx_mode(s, LANCE_APPROX_MODE_FAST), IA);
    CHECK_ERR(lance_scanner_set_query_parallelism(s, 1), IA);
}

static void test_bad_input(void) {
    const int IA = LANCE_ERR_INVALID_ARGUMENT;
    check_settings_refused(NULL);
    CHECK_ERR(lance_scanner_set_query_parallelism(NULL, 0), IA);
    CHECK_ERR(lance_scanner_set_nprobes(NULL, 1), IA);

    LanceScanner* s = scanner_of(ds, id_only, NULL);
    CHECK_ERR(lance_scanner_set_batch_size_bytes(s, 0), IA);
    CHECK_ERR(lance_scanner_set_io_buffer_size(s, 0), IA);
    CHECK_ERR(lance_scanner_set_io_buffer_size(s, (uint64_t)INT64_MAX + 1), IA);
    CHECK_ERR(lance_scanner_set_io_buffer_size(s, UINT64_MAX), IA);
    CHECK_OK(lance_scanner_set_io_buffer_size(s, (uint64_t)INT64_MAX));
    CHECK_OK(lance_scanner_set_io_buffer_size(s, 1 << 20));
    CHECK_ERR(lance_scanner_set_batch_readahead(s, 0), IA);
    CHECK_ERR(lance_scanner_set_fragment_readahead(s, 0), IA);
    CHECK_ERR(lance_scanner_set_target_parallelism(s, 0), IA);

    /* Strict batch size and a byte size refuse each other, in either order,
       and the refused setting is not kept. */
    CHECK_OK(lance_scanner_set_strict_batch_size(s, true));
    CHECK_ERR(lance_scanner_set_batch_size_bytes(s, 4096), IA);
    CHECK_OK(lance_scanner_set_batch_size(s, 100));
    char* strict = scan_text(s);
    lance_scanner_close(s);
    char* theirs = pylance_scan(ds, uri, "{\"columns\": [\"id\"], \"batch_size\": 100, \"strict_batch_size\": true}");
    check_same_text("strict batches after a refused byte size", strict, theirs);
    free(strict);
    free(theirs);
    s = scanner_of(ds, id_only, NULL);
    CHECK_OK(lance_scanner_set_batch_size_bytes(s, 4096));
    CHECK_ERR(lance_scanner_set_strict_batch_size(s, true), IA);
    CHECK_OK(lance_scanner_set_strict_batch_size(s, false));
    lance_scanner_close(s);

    /* After scanning has begun, by either road, every new setting is refused. */
    for (int road = 0; road < 2; road++) {
        s = scanner_of(ds, id_only, NULL);
        LanceBatch* b = NULL;
        struct ArrowArrayStream stream;
        if (road == 0) {
            CHECK(lance_scanner_next(s, &b) == 0);
            lance_batch_free(b);
        } else {
            CHECK_OK(lance_scanner_to_arrow_stream(s, &stream));
            stream.release(&stream);
        }
        CHECK_ERR(lance_scanner_set_batch_size_bytes(s, 1), IA);
        CHECK(tu_error_mentions("started scanning"));
        check_settings_refused(s);
        lance_scanner_close(s);
    }
}

/* The geospatial filters of the core's default build (the "geo" feature):
 * a dataset pylance wrote with a geoarrow point column and an RTREE index
 * on it.  The index is listed as pylance lists it, and st_intersects
 * selects the rows brute force selects and pylance selects; a point on the
 * polygon's edge intersects it. */
static void test_geo_filter(void) {
    char path[1200];
    snprintf(path, sizeof path, "%s/geo.lance", dir);
    LanceDataset* geo = dk_oracle_dataset(python, geo_script, path);
    if (!geo) return;
    CHECK(lance_dataset_index_count(geo) == 1);
    const char* listed = lance_dataset_index_list_json(geo);
    CHECK(listed && strstr(listed, "\"geom_idx\"") && strstr(listed, "\"RTree\"") && strstr(listed, "\"geom\""));
    if (listed) lance_free_string((char*)listed);
    static const struct {
        double x0, y0, x1, y1;
    } boxes[] = {{0.1, 0.2, 0.4, 0.6}, {0.0, 0.0, 1.0, 1.0}, {0.5, 0.5, 0.5005, 0.5005}, {0.037, 0.091, 0.2, 0.3}};
    for (size_t b = 0; b < sizeof boxes / sizeof boxes[0]; b++) {
        double x0 = boxes[b].x0, y0 = boxes[b].y0, x1 = boxes[b].x1, y1 = boxes[b].y1;
        char sql[400];
        snprintf(sql, sizeof sql,
                 "st_intersects(geom, st_geomfromtext('POLYGON((%g %g, %g %g, %g %g, %g %g, %g %g))'))", x0, y0, x1, y0,
                 x1, y1, x0, y1, x0, y0);
        TuText expected = {0};
        int64_t want = 0;
        for (int64_t id = 0; id < GEO_ROWS; id++) {
            /* The oracle's coordinates, as exact as it computes them. */
            double x = (double)((id * 37) % 1000) / 1000, y = (double)((id * 91) % 1000) / 1000;
            if (x >= x0 && x <= x1 && y >= y0 && y <= y1)
                tu_text_append(&expected, want++ ? ",%lld" : "%lld", (long long)id);
        }
        int64_t n = -1;
        LanceScanner* s = scanner_of(geo, id_only, sql);
        char* ours = s ? dk_ids_text(s, SUBSTRAIT_ROWS, &n) : NULL;
        lance_scanner_close(s);
        char* theirs = tu_oracle(python, geo_script, "query", path, sql, NULL);
        char* brute = expected.text ? expected.text : "";
        CHECK(ours && strcmp(ours, brute) == 0 && n == want);
        /* pylance: the same ids, answered through the RTREE index. */
        CHECK(theirs && strncmp(theirs, brute, strlen(brute)) == 0 && strcmp(theirs + strlen(brute), "\nindex\n") == 0);
        if (!ours || strcmp(ours, brute) != 0 || !theirs || strncmp(theirs, brute, strlen(brute)) != 0)
            fprintf(stderr, "    %s: lance-c %s, brute force %s (%lld rows), pylance %s\n", sql,
                    ours ? ours : "(failed)", brute, (long long)want, theirs ? theirs : "(failed)");
        free(ours);
        free(theirs);
        free(expected.text);
    }
    /* A spatial function over a column that is not geometry is refused. */
    LanceScanner* s = lance_scanner_new(geo, id_only, "st_intersects(id, st_geomfromtext('POINT(0 0)'))");
    int rc = s ? lance_scanner_next(s, &(LanceBatch*){NULL}) : -1;
    CHECK(rc == -1 && lance_last_error_code() != LANCE_OK);
    lance_scanner_close(s);
    lance_dataset_close(geo);
}

int main(int argc, char** argv) {
    if (argc < 5) {
        fprintf(stderr,
                "usage: %s <python with pylance> <tests/api/scan_oracle.py> <tests/api/substrait_oracle.py> "
                "<tests/api/geo_oracle.py>\n",
                argv[0]);
        return 1;
    }
    python = argv[1];
    oracle_script = argv[2];
    substrait_script = argv[3];
    geo_script = argv[4];
    dir = tu_temp_dir("scan-tuning");
    data = tu_make_data(ROWS, DIM, PARTITIONS, 0.5f, 17);

    snprintf(uri, sizeof uri, "%s/tuned.lance", dir);
    ds = tu_write(uri, &data, 0, ROWS, LANCE_WRITE_CREATE, PER_FRAGMENT);
    CHECK(ds != NULL && lance_dataset_fragment_count(ds) == 4);
    uint64_t deleted = 0;
    CHECK_OK(lance_dataset_delete(ds, "id % 10 = 3", &deleted));
    CHECK(deleted == 100);
    CHECK_OK(lance_dataset_delete(ds, "id >= 750", &deleted)); /* the last fragment, whole */
    CHECK(lance_dataset_fragment_count(ds) == 3);
    CHECK_OK(lance_dataset_create_scalar_index(ds, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, false));

    snprintf(knn_uri, sizeof knn_uri, "%s/knn.lance", dir);
    knn_ds = tu_write(knn_uri, &data, 0, ROWS, LANCE_WRITE_CREATE, PER_FRAGMENT);
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = PARTITIONS;
    CHECK(knn_ds != NULL);
    CHECK_OK(lance_dataset_create_vector_index(knn_ds, "vec", "vec_idx", &p, false));

    RUN(test_strict_batch_size);
    RUN(test_batch_size_bytes);
    RUN(test_row_address);
    RUN(test_include_deleted_rows);
    RUN(test_knobs_keep_rows);
    RUN(test_scan_out_of_order);
    RUN(test_additional_filters);
    RUN(test_substrait_filter);
    RUN(test_geo_filter);
    RUN(test_statistics_callback);
    RUN(test_nprobes_bounds);
    RUN(test_bad_input);

    lance_dataset_close(ds);
    lance_dataset_close(knn_ds);
    tu_free_data(&data);
    tu_remove_tree(dir);
    free(dir);
    return tu_finish("test_scan_tuning");
}
