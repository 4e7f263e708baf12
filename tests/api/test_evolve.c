/* Schema evolution (lance.h "Schema evolution"): dropping, altering and
 * adding columns, each checked against pylance doing the same on a copy of
 * the same multi-fragment dataset (tests/api/evolve_oracle.py compares
 * schemas and rows).  Every function's bad input is checked for its exact
 * code, and every consumed stream for exactly one release.
 *
 * Usage: test_evolve PYTHON ORACLE_SCRIPT (no Python is a failure). */
#include <string.h>

#include "oracle_pair.h"
#include "streams.h"

#define ROWS TU_PAIR_ROWS
#define DIM TU_PAIR_DIM

static TuPairs pairs;

static void test_drop_columns(void) {
    char c_uri[600], py_uri[600];
    LanceDataset* ds = tu_pair_make(&pairs, "drop", c_uri, py_uri);
    const char* const tag[] = {"tag"};
    CHECK_OK(lance_dataset_drop_columns(ds, tag, 1));
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(tu_pair_agrees(&pairs, "drop", c_uri, py_uri, NULL));

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
    LanceDataset* ds = tu_pair_make(&pairs, "alter", c_uri, py_uri);
    LanceColumnAlteration alter[2] = {{"tag", "label", LANCE_COLUMN_NULLABLE_UNCHANGED, NULL},
                                      {"id", NULL, LANCE_COLUMN_NULLABLE_TRUE, NULL}};
    CHECK_OK(lance_dataset_alter_columns(ds, alter, 2));
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(tu_pair_agrees(&pairs, "alter", c_uri, py_uri, NULL));
    /* The core refuses to cast an indexed column (upstream drops the index). */
    CHECK_OK(lance_dataset_create_scalar_index(ds, "id", "id_idx", LANCE_SCALAR_BTREE, NULL, false));
    struct ArrowSchema int32_for_index = {0};
    int32_for_index.format = "i";
    int32_for_index.name = strdup("");
    int32_for_index.release = tu_release_leaf_schema;
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
    ds = tu_pair_make(&pairs, "alter-cast", c_uri, py_uri);
    struct ArrowSchema int32_type = {0};
    int32_type.format = "i";
    int32_type.release = tu_release_leaf_schema;
    int32_type.name = strdup("");
    LanceColumnAlteration cast = {"id", NULL, 0, &int32_type};
    CHECK_OK(lance_dataset_alter_columns(ds, &cast, 1));
    CHECK(int32_type.release != NULL); /* borrowed, never released */
    CHECK(tu_pair_agrees(&pairs, "alter-cast", c_uri, py_uri, NULL));

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
    tu_struct_schema(1, names, formats, nullable, &nulls);
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
    LanceDataset* ds = tu_pair_make(&pairs, "add-sql", c_uri, py_uri);
    LanceSqlColumn columns[2] = {{"double_id", "id * 2"}, {"next_id", "id + 1"}};
    CHECK_OK(lance_dataset_add_columns_sql(ds, columns, 2, 100));
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(tu_pair_agrees(&pairs, "add-sql", c_uri, py_uri, NULL));

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
    LanceDataset* ds = tu_pair_make(&pairs, "add-nulls", c_uri, py_uri);
    struct ArrowSchema schema;
    const char* names[] = {"n", "s"};
    const char* formats[] = {"g", "u"};
    const int nullable[] = {1, 1};
    tu_struct_schema(2, names, formats, nullable, &schema);
    CHECK_OK(lance_dataset_add_columns_nulls(ds, &schema));
    CHECK(schema.release != NULL); /* borrowed */
    schema.release(&schema);
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(tu_pair_agrees(&pairs, "add-nulls", c_uri, py_uri, NULL));

    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    tu_struct_schema(2, names, formats, nullable, &schema);
    CHECK_ERR(lance_dataset_add_columns_nulls(NULL, &schema), IA);
    CHECK_ERR(lance_dataset_add_columns_nulls(ds, NULL), IA);
    CHECK_ERR(lance_dataset_add_columns_nulls(ds, &schema), IA); /* taken names */
    schema.release(&schema);
    CHECK_ERR(lance_dataset_add_columns_nulls(ds, &schema), IA); /* released */
    const char* one[] = {"m"};
    const int required[] = {0};
    tu_struct_schema(1, one, formats, required, &schema);
    CHECK_ERR(lance_dataset_add_columns_nulls(ds, &schema), IA); /* not nullable */
    schema.release(&schema);
    tu_struct_schema(0, NULL, NULL, NULL, &schema);
    CHECK_ERR(lance_dataset_add_columns_nulls(ds, &schema), IA); /* no fields */
    schema.release(&schema);
    CHECK(lance_dataset_version(ds) == 2);
    lance_dataset_close(ds);

    /* A legacy-format dataset cannot take all-null columns. */
    char legacy_uri[600];
    snprintf(legacy_uri, sizeof legacy_uri, "%s/legacy.lance", pairs.dir);
    struct ArrowSchema tu;
    struct ArrowArrayStream stream;
    tu_schema(DIM, &tu);
    tu_stream(&pairs.data, 0, 100, 100, &stream);
    LanceWriteParams wp = {0};
    wp.data_storage_version = "legacy";
    CHECK_OK(lance_dataset_write_with_params(legacy_uri, &tu, &stream, LANCE_WRITE_CREATE, &wp, NULL, &ds));
    tu.release(&tu);
    tu_struct_schema(2, names, formats, nullable, &schema);
    CHECK_ERR(lance_dataset_add_columns_nulls(ds, &schema), LANCE_ERR_NOT_SUPPORTED);
    schema.release(&schema);
    lance_dataset_close(ds);
}

static void test_add_columns_stream(void) {
    char c_uri[600], py_uri[600];
    LanceDataset* ds = tu_pair_make(&pairs, "add-stream", c_uri, py_uri);
    int releases = 0;
    struct ArrowArrayStream stream;
    tu_int64_stream("x", ROWS, 3, &releases, &stream);
    CHECK_OK(lance_dataset_add_columns_stream(ds, &stream, 0));
    CHECK(releases == 1);
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(tu_pair_agrees(&pairs, "add-stream", c_uri, py_uri, NULL));

    const int32_t IA = LANCE_ERR_INVALID_ARGUMENT;
    /* Each refused call releases the stream once. */
    releases = 0;
    tu_int64_stream("y", ROWS, 1, &releases, &stream);
    CHECK_ERR(lance_dataset_add_columns_stream(NULL, &stream, 0), IA);
    CHECK(releases == 1);
    releases = 0;
    tu_int64_stream("y", ROWS, 1, &releases, &stream);
    CHECK_ERR(lance_dataset_add_columns_stream(ds, &stream, (uint64_t)UINT32_MAX + 1), IA);
    CHECK(releases == 1);
    releases = 0;
    tu_int64_stream("y", ROWS - 1, 1, &releases, &stream); /* one row short */
    CHECK_ERR(lance_dataset_add_columns_stream(ds, &stream, 0), IA);
    CHECK(releases == 1);
    releases = 0;
    tu_int64_stream("y", ROWS + 1, 1, &releases, &stream); /* one row over */
    CHECK_ERR(lance_dataset_add_columns_stream(ds, &stream, 0), IA);
    CHECK(releases == 1);
    releases = 0;
    tu_int64_stream("x", ROWS, 1, &releases, &stream); /* taken */
    CHECK_ERR(lance_dataset_add_columns_stream(ds, &stream, 0), IA);
    CHECK(releases == 1);
    /* Missing callbacks: refused, and still released. */
    releases = 0;
    tu_int64_stream("y", ROWS, 1, &releases, &stream);
    stream.get_next = NULL;
    CHECK_ERR(lance_dataset_add_columns_stream(ds, &stream, 0), IA);
    CHECK(releases == 1);
    /* NULL or released stream: nothing to consume. */
    CHECK_ERR(lance_dataset_add_columns_stream(ds, NULL, 0), IA);
    CHECK_ERR(lance_dataset_add_columns_stream(ds, &stream, 0), IA);
    CHECK(lance_dataset_version(ds) == 2);
    lance_dataset_close(ds);
}

int main(int argc, char** argv) {
    if (!tu_pairs_begin(&pairs, argc, argv)) return 2;
    RUN(test_drop_columns);
    RUN(test_alter_columns);
    RUN(test_add_columns_sql);
    RUN(test_add_columns_nulls);
    RUN(test_add_columns_stream);
    tu_pairs_end(&pairs);
    return tu_finish("test_evolve");
}
