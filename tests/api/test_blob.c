/* Blobs: a Blob v2 dataset written by pylance of the same Lance release
 * (tests/api/blob_oracle.py: inline, packed and dedicated values, a null and an
 * empty one, three fragments, a deleted row), read back through the C API
 * and compared byte for byte with the files the oracle wrote from the same
 * bytes; the cursor and range semantics; scans in each blob handling mode;
 * and every bad-input path.
 *
 * Usage: test_blob <python with pylance> <tests/api/blob_oracle.py>.
 * Without them the test fails: it never skips. */
#include <string.h>

#include "dataset_kit.h"
#include "test_util.h"

#define MAX_ROWS 32

/* One live row as the oracle printed it. */
typedef DkBlobRow Row;

static char* dir;
static char uri[600];
static Row rows[MAX_ROWS];
static int nrows;

/* ---- the oracle ---- */

static int write_dataset(const char* python, const char* script) {
    dir = tu_temp_dir("blob");
    if (!dir) return -1;
    snprintf(uri, sizeof uri, "%s/blobs.lance", dir);
    nrows = dk_blob_rows(python, script, dir, rows, MAX_ROWS);
    return nrows > 0 ? 0 : -1;
}

static const Row* row_with_id(int64_t id) {
    for (int i = 0; i < nrows; i++)
        if (rows[i].id == id) return &rows[i];
    return NULL;
}

/* Reads a whole blob through the API into a fresh buffer (size + 1 bytes). */
static unsigned char* read_all(LanceBlobFile* blob, uint64_t* out_size) {
    uint64_t size = lance_blob_file_size(blob);
    unsigned char* buf = malloc((size_t)size + 1);
    if (!buf || lance_blob_file_read(blob, buf, (size_t)size) != 0) {
        free(buf);
        return NULL;
    }
    *out_size = size;
    return buf;
}

/* The blob holds exactly the row's bytes (read from the cursor at 0). */
static int same_bytes(LanceBlobFile* blob, const Row* row) {
    uint64_t size = 0;
    unsigned char* got = read_all(blob, &size);
    int same = got && (int64_t)size == row->size && memcmp(got, row->bytes, (size_t)size) == 0;
    free(got);
    return same;
}

static LanceDataset* open_dataset(void) {
    LanceDataset* ds = lance_dataset_open(uri, NULL, 0);
    CHECK(ds != NULL);
    return ds;
}

/* ---- tests ---- */

/* The C API's scan sees the rows and row ids pylance printed. */
static void test_row_ids_match_pylance(void) {
    LanceDataset* ds = open_dataset();
    CHECK(lance_dataset_count_rows(ds) == (uint64_t)nrows);
    CHECK(lance_dataset_fragment_count(ds) == 3);
    const char* columns[] = {"id", NULL};
    LanceScanner* scanner = lance_scanner_new(ds, columns, NULL);
    CHECK(scanner != NULL);
    CHECK_OK(lance_scanner_with_row_id(scanner, true));
    int seen = 0;
    LanceBatch* batch = NULL;
    while (lance_scanner_next(scanner, &batch) == 0) {
        struct ArrowArray array;
        struct ArrowSchema schema;
        CHECK_OK(lance_batch_to_arrow(batch, &array, &schema));
        CHECK(schema.n_children == 2 && strcmp(schema.children[1]->name, "_rowid") == 0);
        const int64_t* ids = array.children[0]->buffers[1];
        const uint64_t* row_ids = array.children[1]->buffers[1];
        for (int64_t i = 0; i < array.length && seen < nrows; i++, seen++) {
            CHECK(ids[array.children[0]->offset + i] == rows[seen].id);
            CHECK(row_ids[array.children[1]->offset + i] == rows[seen].row_id);
        }
        array.release(&array);
        schema.release(&schema);
        lance_batch_free(batch);
    }
    CHECK(lance_last_error_code() == LANCE_OK);
    CHECK(seen == nrows);
    lance_scanner_close(scanner);
    lance_dataset_close(ds);
}

/* Every value, by row id, equals what pylance was given; null is NULL. */
static void test_take_blobs_bytes(void) {
    LanceDataset* ds = open_dataset();
    uint64_t ids[MAX_ROWS];
    LanceBlobFile* blobs[MAX_ROWS];
    for (int i = 0; i < nrows; i++) ids[i] = rows[i].row_id;
    CHECK_OK(lance_dataset_take_blobs(ds, ids, (size_t)nrows, "blob", blobs));
    int nulls = 0, empties = 0;
    for (int i = 0; i < nrows; i++) {
        if (rows[i].size < 0) {
            CHECK(blobs[i] == NULL);
            nulls++;
            continue;
        }
        CHECK(blobs[i] != NULL);
        if (!blobs[i]) continue;
        CHECK(lance_blob_file_size(blobs[i]) == (uint64_t)rows[i].size);
        CHECK(same_bytes(blobs[i], &rows[i]));
        uint64_t pos = 99;
        CHECK_OK(lance_blob_file_tell(blobs[i], &pos));
        CHECK(pos == (uint64_t)rows[i].size);
        /* At the end: success, nothing copied, the cursor stays. */
        CHECK_OK(lance_blob_file_read(blobs[i], NULL, 0));
        if (rows[i].size == 0) empties++;
        lance_blob_file_close(blobs[i]);
    }
    CHECK(nulls == 1 && empties == 1);

    /* Repeats and order are kept. */
    uint64_t picked[3] = {rows[nrows - 1].row_id, rows[0].row_id, rows[nrows - 1].row_id};
    CHECK_OK(lance_dataset_take_blobs(ds, picked, 3, "blob", blobs));
    CHECK(same_bytes(blobs[0], &rows[nrows - 1]));
    CHECK(same_bytes(blobs[1], &rows[0]));
    CHECK(same_bytes(blobs[2], &rows[nrows - 1]));
    for (int i = 0; i < 3; i++) lance_blob_file_close(blobs[i]);
    lance_dataset_close(ds);
}

/* By position equals by row id, in any order. */
static void test_take_blobs_by_indices(void) {
    LanceDataset* ds = open_dataset();
    uint64_t indices[MAX_ROWS];
    LanceBlobFile* by_index[MAX_ROWS];
    /* Reversed, so the order of the answer is checked too. */
    for (int i = 0; i < nrows; i++) indices[i] = (uint64_t)(nrows - 1 - i);
    CHECK_OK(lance_dataset_take_blobs_by_indices(ds, indices, (size_t)nrows, "blob", by_index));
    for (int i = 0; i < nrows; i++) {
        const Row* row = &rows[indices[i]];
        LanceBlobFile* by_id = NULL;
        CHECK_OK(lance_dataset_take_blobs(ds, &row->row_id, 1, "blob", &by_id));
        CHECK((by_index[i] == NULL) == (by_id == NULL));
        CHECK((by_index[i] == NULL) == (row->size < 0));
        if (by_index[i] && by_id) {
            CHECK(lance_blob_file_size(by_index[i]) == lance_blob_file_size(by_id));
            uint64_t a = 0, b = 0;
            unsigned char* x = read_all(by_index[i], &a);
            unsigned char* y = read_all(by_id, &b);
            CHECK(x && y && a == b && memcmp(x, y, (size_t)a) == 0);
            CHECK(x && a == (uint64_t)row->size && memcmp(x, row->bytes, (size_t)a) == 0);
            free(x);
            free(y);
        }
        lance_blob_file_close(by_index[i]);
        lance_blob_file_close(by_id);
    }
    lance_dataset_close(ds);
}

/* The cursor: read, read_up_to, seek, tell, read_range, on one value of
 * each storage kind. */
static void check_cursor(const Row* row) {
    LanceDataset* ds = open_dataset();
    LanceBlobFile* blob = NULL;
    CHECK_OK(lance_dataset_take_blobs(ds, &row->row_id, 1, "blob", &blob));
    lance_dataset_close(ds); /* the handle outlives the dataset */
    CHECK(blob != NULL);
    if (!blob) return;
    const size_t size = (size_t)row->size;
    const unsigned char* want = row->bytes;
    unsigned char* buf = malloc(size + 64);
    uint64_t pos = 1;
    size_t n = 0;

    CHECK(lance_blob_file_size(blob) == size);
    CHECK_OK(lance_blob_file_tell(blob, &pos));
    CHECK(pos == 0);

    /* read_up_to: a first part, then len 0 (nothing, no move). */
    size_t part = size / 3;
    CHECK_OK(lance_blob_file_read_up_to(blob, buf, part, &n));
    CHECK(n == part && memcmp(buf, want, part) == 0);
    CHECK_OK(lance_blob_file_read_up_to(blob, buf, 0, &n));
    CHECK(n == 0);
    CHECK_OK(lance_blob_file_tell(blob, &pos));
    CHECK(pos == part);

    /* read with less room than the remainder: an error, nothing read. */
    CHECK_ERR(lance_blob_file_read(blob, buf, size - part - 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_OK(lance_blob_file_tell(blob, &pos));
    CHECK(pos == part);

    /* read: the rest, exactly. */
    CHECK_OK(lance_blob_file_read(blob, buf, size - part));
    CHECK(memcmp(buf, want + part, size - part) == 0);
    CHECK_OK(lance_blob_file_tell(blob, &pos));
    CHECK(pos == size);
    CHECK_OK(lance_blob_file_read_up_to(blob, buf, 10, &n));
    CHECK(n == 0);

    /* Near the end: read_up_to gives what is left. */
    size_t tail = size < 5 ? size : 5;
    CHECK_OK(lance_blob_file_seek(blob, size - tail));
    CHECK_OK(lance_blob_file_read_up_to(blob, buf, tail + 50, &n));
    CHECK(n == tail && memcmp(buf, want + size - tail, tail) == 0);
    CHECK_OK(lance_blob_file_tell(blob, &pos));
    CHECK(pos == size);

    /* Past the end: allowed; reads there give nothing and keep the cursor. */
    CHECK_OK(lance_blob_file_seek(blob, size + 50));
    CHECK_OK(lance_blob_file_tell(blob, &pos));
    CHECK(pos == size + 50);
    CHECK_OK(lance_blob_file_read_up_to(blob, buf, 10, &n));
    CHECK(n == 0);
    CHECK_OK(lance_blob_file_read(blob, buf, 0));
    CHECK_OK(lance_blob_file_tell(blob, &pos));
    CHECK(pos == size + 50);

    /* Back to the start: the whole value again, with room to spare. */
    CHECK_OK(lance_blob_file_seek(blob, 0));
    memset(buf, 0xAB, size + 64);
    CHECK_OK(lance_blob_file_read(blob, buf, size + 64));
    CHECK(memcmp(buf, want, size) == 0 && buf[size] == 0xAB);

    /* read_range: exact bytes, the cursor untouched. */
    CHECK_OK(lance_blob_file_seek(blob, 1));
    size_t off = size / 2, len = size - off;
    memset(buf, 0, size + 64);
    CHECK_OK(lance_blob_file_read_range(blob, off, buf, len));
    CHECK(memcmp(buf, want + off, len) == 0);
    CHECK_OK(lance_blob_file_read_range(blob, size - 1, buf, 1));
    CHECK(buf[0] == want[size - 1]);
    CHECK_OK(lance_blob_file_tell(blob, &pos));
    CHECK(pos == 1);
    /* Past the end, and an end beyond 64 bits: errors, nothing copied. */
    memset(buf, 0xCD, size + 64);
    CHECK_ERR(lance_blob_file_read_range(blob, size - 1, buf, 2), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_blob_file_read_range(blob, size, buf, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK_ERR(lance_blob_file_read_range(blob, UINT64_MAX, buf, 2), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions("overflows"));
    CHECK(buf[0] == 0xCD && buf[1] == 0xCD);
    /* len 0: success whatever the offset. */
    CHECK_OK(lance_blob_file_read_range(blob, UINT64_MAX, NULL, 0));
    CHECK_OK(lance_blob_file_read_range(blob, size + 1000, buf, 0));
    CHECK_OK(lance_blob_file_tell(blob, &pos));
    CHECK(pos == 1);

    free(buf);
    lance_blob_file_close(blob);
}

static void test_cursor_semantics(void) {
    /* ids 0 (inline), 5 (packed), 6 (dedicated): see blob_oracle.py. */
    const int64_t ids[] = {0, 5, 6, 9};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        const Row* row = row_with_id(ids[i]);
        CHECK(row != NULL && row->size > 1);
        if (row) check_cursor(row);
    }
}

/* The empty value: a handle of size 0 that reads nothing. */
static void test_empty_value(void) {
    const Row* row = row_with_id(3);
    CHECK(row != NULL && row->size == 0);
    if (!row) return;
    LanceDataset* ds = open_dataset();
    LanceBlobFile* blob = NULL;
    CHECK_OK(lance_dataset_take_blobs(ds, &row->row_id, 1, "blob", &blob));
    CHECK(blob != NULL);
    unsigned char buf[4] = {7, 7, 7, 7};
    size_t n = 9;
    uint64_t pos = 9;
    CHECK(lance_blob_file_size(blob) == 0 && lance_last_error_code() == LANCE_OK);
    CHECK_OK(lance_blob_file_read(blob, NULL, 0));
    CHECK_OK(lance_blob_file_read(blob, buf, sizeof buf));
    CHECK_OK(lance_blob_file_read_up_to(blob, buf, sizeof buf, &n));
    CHECK(n == 0);
    CHECK_OK(lance_blob_file_read_range(blob, 0, NULL, 0));
    CHECK_ERR(lance_blob_file_read_range(blob, 0, buf, 1), LANCE_ERR_INVALID_ARGUMENT);
    CHECK(buf[0] == 7);
    CHECK_OK(lance_blob_file_tell(blob, &pos));
    CHECK(pos == 0);
    lance_blob_file_close(blob);
    lance_dataset_close(ds);
}

/* Reads the `blob` and `raw` columns of a scan in `mode` (-1 = not set):
 * checks the blob column's Arrow type, that `raw` stays bytes, and the
 * values (bytes in ALL_BINARY, descriptor sizes otherwise). */
static void check_scan(int mode) {
    LanceDataset* ds = open_dataset();
    const char* columns[] = {"id", "blob", "raw", NULL};
    LanceScanner* scanner = lance_scanner_new(ds, columns, NULL);
    CHECK(scanner != NULL);
    if (mode >= 0) CHECK_OK(lance_scanner_set_blob_handling(scanner, (LanceBlobHandling)mode));
    struct ArrowArrayStream stream;
    CHECK_OK(lance_scanner_to_arrow_stream(scanner, &stream));
    struct ArrowSchema schema;
    CHECK(stream.get_schema(&stream, &schema) == 0);
    CHECK(schema.n_children == 3);
    const struct ArrowSchema* blob = schema.children[1];
    CHECK(strcmp(blob->name, "blob") == 0);
    CHECK(strcmp(schema.children[2]->format, "Z") == 0);
    int binary = mode == LANCE_BLOB_HANDLING_ALL_BINARY;
    if (binary) {
        CHECK(strcmp(blob->format, "Z") == 0);
    } else {
        static const char* const names[] = {"kind", "position", "size", "blob_id", "blob_uri"};
        static const char* const formats[] = {"C", "L", "L", "I", "u"};
        CHECK(strcmp(blob->format, "+s") == 0 && blob->n_children == 5);
        for (int i = 0; i < 5 && i < blob->n_children; i++) {
            CHECK(strcmp(blob->children[i]->name, names[i]) == 0);
            CHECK(strcmp(blob->children[i]->format, formats[i]) == 0);
        }
    }
    schema.release(&schema);

    int seen = 0;
    struct ArrowArray array;
    while (stream.get_next(&stream, &array) == 0 && array.release) {
        const struct ArrowArray* ids = array.children[0];
        const struct ArrowArray* values = array.children[1];
        for (int64_t i = 0; i < array.length && seen < nrows; i++, seen++) {
            const Row* row = &rows[seen];
            CHECK(((const int64_t*)ids->buffers[1])[ids->offset + i] == row->id);
            int64_t j = values->offset + i;
            const uint8_t* validity = values->buffers[0];
            int valid = !validity || values->null_count == 0 || ((validity[j / 8] >> (j % 8)) & 1);
            if (binary) {
                CHECK(valid == (row->size >= 0));
                if (!valid || row->size < 0) continue;
                const int64_t* offsets = values->buffers[1];
                const unsigned char* data = values->buffers[2];
                int64_t len = offsets[j + 1] - offsets[j];
                CHECK(len == row->size && memcmp(data + offsets[j], row->bytes, (size_t)len) == 0);
            } else if (row->size >= 0) {
                const struct ArrowArray* sizes = values->children[2];
                CHECK(((const uint64_t*)sizes->buffers[1])[sizes->offset + i] == (uint64_t)row->size);
            }
        }
        array.release(&array);
    }
    CHECK(seen == nrows);
    stream.release(&stream);
    lance_scanner_close(scanner);
    lance_dataset_close(ds);
}

static void test_scan_blob_handling(void) {
    check_scan(-1);
    check_scan(LANCE_BLOB_HANDLING_BLOBS_DESCRIPTIONS);
    check_scan(LANCE_BLOB_HANDLING_ALL_BINARY);
    check_scan(LANCE_BLOB_HANDLING_ALL_DESCRIPTIONS);
}

/* Whether the next batch of a scan of the `blob` column alone gives that
 * column the Arrow format `format`. */
static int batch_blob_format(LanceScanner* scanner, const char* format) {
    LanceBatch* batch = NULL;
    if (lance_scanner_next(scanner, &batch) != 0) return 0;
    struct ArrowArray array;
    struct ArrowSchema schema;
    int same = 0;
    if (lance_batch_to_arrow(batch, &array, &schema) == 0) {
        same = schema.n_children == 1 && strcmp(schema.children[0]->format, format) == 0;
        array.release(&array);
        schema.release(&schema);
    }
    lance_batch_free(batch);
    return same;
}

static void test_bad_input(void) {
    LanceDataset* ds = open_dataset();
    LanceBlobFile* sentinel = (LanceBlobFile*)&nrows; /* never dereferenced */
    LanceBlobFile* out[2] = {sentinel, sentinel};
    uint64_t ids[2] = {rows[0].row_id, rows[1].row_id};
    const int IA = LANCE_ERR_INVALID_ARGUMENT;

    /* take_blobs / take_blobs_by_indices */
    CHECK_ERR(lance_dataset_take_blobs(NULL, ids, 1, "blob", out), IA);
    CHECK_ERR(lance_dataset_take_blobs(ds, NULL, 1, "blob", out), IA);
    CHECK_ERR(lance_dataset_take_blobs(ds, ids, 1, NULL, out), IA);
    CHECK_ERR(lance_dataset_take_blobs(ds, ids, 1, "", out), IA);
    CHECK_ERR(lance_dataset_take_blobs(ds, ids, 1, "blob", NULL), IA);
    CHECK_ERR(lance_dataset_take_blobs(ds, ids, 1, "raw", out), IA); /* not a blob column */
    CHECK(tu_error_mentions("not a blob column"));
    CHECK_ERR(lance_dataset_take_blobs(ds, ids, 1, "no_such_column", out), LANCE_ERR_NOT_FOUND);
    uint64_t unknown[2] = {rows[0].row_id, 999999};
    CHECK_ERR(lance_dataset_take_blobs(ds, unknown, 2, "blob", out), IA);
    uint64_t deleted = 1; /* the row with id 1 (row id 1), deleted by the oracle */
    CHECK(row_with_id(1) == NULL);
    CHECK_ERR(lance_dataset_take_blobs(ds, &deleted, 1, "blob", out), LANCE_ERR_NOT_SUPPORTED);
    CHECK(tu_error_mentions("deleted rows"));
    CHECK(out[0] == sentinel && out[1] == sentinel); /* nothing written on errors */
    CHECK_OK(lance_dataset_take_blobs(ds, NULL, 0, "blob", NULL));
    CHECK_OK(lance_dataset_take_blobs_by_indices(ds, NULL, 0, "blob", NULL));
    /* No rows, but the column is still checked. */
    CHECK_ERR(lance_dataset_take_blobs(ds, NULL, 0, "raw", NULL), IA);
    CHECK_ERR(lance_dataset_take_blobs_by_indices(ds, NULL, 0, "no_such_column", NULL), LANCE_ERR_NOT_FOUND);

    uint64_t idx[2] = {0, (uint64_t)nrows};
    CHECK_ERR(lance_dataset_take_blobs_by_indices(NULL, idx, 1, "blob", out), IA);
    CHECK_ERR(lance_dataset_take_blobs_by_indices(ds, NULL, 1, "blob", out), IA);
    CHECK_ERR(lance_dataset_take_blobs_by_indices(ds, idx, 1, NULL, out), IA);
    CHECK_ERR(lance_dataset_take_blobs_by_indices(ds, idx, 1, "blob", NULL), IA);
    CHECK_ERR(lance_dataset_take_blobs_by_indices(ds, idx, 1, "raw", out), IA);
    CHECK_ERR(lance_dataset_take_blobs_by_indices(ds, idx, 1, "no_such_column", out), LANCE_ERR_NOT_FOUND);
    CHECK_ERR(lance_dataset_take_blobs_by_indices(ds, idx, 2, "blob", out), IA); /* position == row count */
    uint64_t huge = UINT64_MAX;
    CHECK_ERR(lance_dataset_take_blobs_by_indices(ds, &huge, 1, "blob", out), IA);
    CHECK(out[0] == sentinel && out[1] == sentinel);

    /* the blob functions */
    LanceBlobFile* blob = NULL;
    CHECK_OK(lance_dataset_take_blobs(ds, ids, 1, "blob", &blob));
    unsigned char buf[64];
    size_t n = 0;
    uint64_t pos = 0;
    CHECK(lance_blob_file_size(NULL) == 0 && lance_last_error_code() == IA);
    CHECK_ERR(lance_blob_file_read(NULL, buf, sizeof buf), IA);
    CHECK_ERR(lance_blob_file_read(blob, NULL, sizeof buf), IA);
    CHECK_ERR(lance_blob_file_read_up_to(NULL, buf, 4, &n), IA);
    CHECK_ERR(lance_blob_file_read_up_to(blob, NULL, 4, &n), IA);
    CHECK_ERR(lance_blob_file_read_up_to(blob, buf, 4, NULL), IA);
    CHECK_ERR(lance_blob_file_read_range(NULL, 0, buf, 1), IA);
    CHECK_ERR(lance_blob_file_read_range(blob, 0, NULL, 1), IA);
    CHECK_ERR(lance_blob_file_seek(NULL, 0), IA);
    CHECK_ERR(lance_blob_file_tell(NULL, &pos), IA);
    CHECK_ERR(lance_blob_file_tell(blob, NULL), IA);
    CHECK_OK(lance_blob_file_tell(blob, &pos));
    CHECK(pos == 0); /* none of the failures above moved the cursor */

    /* close: NULL is fine, and the pending error is kept. */
    CHECK_ERR(lance_blob_file_tell(blob, NULL), IA);
    lance_blob_file_close(NULL);
    lance_blob_file_close(blob);
    CHECK(lance_last_error_code() == IA);

    /* set_blob_handling */
    const char* blob_only[] = {"blob", NULL};
    LanceScanner* scanner = lance_scanner_new(ds, blob_only, NULL);
    CHECK_ERR(lance_scanner_set_blob_handling(NULL, LANCE_BLOB_HANDLING_ALL_BINARY), IA);
    CHECK_ERR(lance_scanner_set_blob_handling(scanner, (LanceBlobHandling)3), IA);
    CHECK(tu_error_mentions("handling = 3"));
    CHECK_ERR(lance_scanner_set_blob_handling(scanner, (LanceBlobHandling)-1), IA);
    /* Once the scan has started, by lance_scanner_next() or by
       lance_scanner_to_arrow_stream(), the mode is refused and the scan
       keeps the one it started with (descriptors: a struct). */
    CHECK_OK(lance_scanner_set_batch_size(scanner, 1)); /* a batch after the refusal too */
    CHECK(batch_blob_format(scanner, "+s"));
    CHECK_ERR(lance_scanner_set_blob_handling(scanner, LANCE_BLOB_HANDLING_ALL_BINARY), IA);
    CHECK(tu_error_mentions("started"));
    CHECK(batch_blob_format(scanner, "+s"));
    lance_scanner_close(scanner);

    scanner = lance_scanner_new(ds, blob_only, NULL);
    struct ArrowArrayStream stream;
    CHECK_OK(lance_scanner_to_arrow_stream(scanner, &stream));
    CHECK_ERR(lance_scanner_set_blob_handling(scanner, LANCE_BLOB_HANDLING_ALL_BINARY), IA);
    CHECK(tu_error_mentions("started"));
    struct ArrowSchema schema;
    CHECK(stream.get_schema(&stream, &schema) == 0);
    CHECK(schema.n_children == 1 && strcmp(schema.children[0]->format, "+s") == 0);
    schema.release(&schema);
    stream.release(&stream);
    lance_scanner_close(scanner);
    lance_dataset_close(ds);
}

int main(int argc, char** argv) {
    const char *python, *script;
    if (tu_oracle_args(argc, argv, "tests/api/blob_oracle.py", &python, &script) != 0) return 2;
    CHECK(write_dataset(python, script) == 0);
    if (tu_failures == 0) {
        RUN(test_row_ids_match_pylance);
        RUN(test_take_blobs_bytes);
        RUN(test_take_blobs_by_indices);
        RUN(test_cursor_semantics);
        RUN(test_empty_value);
        RUN(test_scan_blob_handling);
        RUN(test_bad_input);
    }
    for (int i = 0; i < nrows; i++) free(rows[i].bytes);
    tu_remove_tree(dir);
    free(dir);
    return tu_finish("test_blob");
}
