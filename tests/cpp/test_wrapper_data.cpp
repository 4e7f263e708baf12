// The C++ wrappers of the data calls: Dataset::versions,
// calculate_data_stats, restore, update, merge_insert / upsert, the schema
// evolution calls, take / take_rows, and lance::write_fragments.  Each is
// checked against the C call on the same data (merge-insert on a copy of
// the dataset), with exact rows, exact schemas, the exact lance::Error code
// for bad input, and exactly one release of every stream handed over.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "lance/lance.hpp"
#include "test_util.hpp"

namespace {

constexpr int64_t kRows = 600;
constexpr int32_t kDim = 4;
constexpr uint64_t kRowsPerFile = 200;
constexpr LanceErrorCode IA = LANCE_ERR_INVALID_ARGUMENT;

TuData g_data;   // the datasets' rows, ids 0..599
TuData g_other;  // ids 0..699 with other vectors: merge sources
std::string g_dir;
int g_serial = 0;

// ---- streams ----

// Wraps a stream (moved in) and counts its releases.
struct Counted {
    ArrowArrayStream inner;
    int* releases;

    static int get_schema(ArrowArrayStream* s, ArrowSchema* out) {
        auto* c = static_cast<Counted*>(s->private_data);
        return c->inner.get_schema(&c->inner, out);
    }
    static int get_next(ArrowArrayStream* s, ArrowArray* out) {
        auto* c = static_cast<Counted*>(s->private_data);
        return c->inner.get_next(&c->inner, out);
    }
    static const char* last_error(ArrowArrayStream* s) {
        auto* c = static_cast<Counted*>(s->private_data);
        return c->inner.get_last_error ? c->inner.get_last_error(&c->inner) : nullptr;
    }
    static void release(ArrowArrayStream* s) {
        auto* c = static_cast<Counted*>(s->private_data);
        (*c->releases)++;
        if (c->inner.release) c->inner.release(&c->inner);
        delete c;
        s->release = nullptr;
    }
};

void counted(ArrowArrayStream* inner, int* releases, ArrowArrayStream* out) {
    auto* c = new Counted{*inner, releases};
    inner->release = nullptr;
    *out = ArrowArrayStream{&Counted::get_schema, &Counted::get_next, &Counted::last_error, &Counted::release, c};
}

// A counted stream of rows [first, first + rows) of `src` (the tu schema).
void rows_stream(const TuData* src, int64_t first, int64_t rows, int* releases, ArrowArrayStream* out) {
    ArrowArrayStream inner;
    tu_stream(src, first, rows, 128, &inner);
    counted(&inner, releases, out);
}

// A leaf or struct ArrowSchema built here; release frees what it allocated.
void release_built_schema(ArrowSchema* s) {
    for (int64_t i = 0; i < s->n_children; i++) {
        s->children[i]->release(s->children[i]);
        delete s->children[i];
    }
    delete[] s->children;
    delete[] s->name;
    s->release = nullptr;
}

char* copy_cstr(const std::string& text) {
    char* out = new char[text.size() + 1];
    std::memcpy(out, text.c_str(), text.size() + 1);
    return out;
}

void leaf_schema(const char* format, const std::string& name, bool nullable, ArrowSchema* out) {
    *out = ArrowSchema{};
    out->format = format;
    out->name = copy_cstr(name);
    out->flags = nullable ? ARROW_FLAG_NULLABLE : 0;
    out->release = release_built_schema;
}

struct Field {
    std::string name;
    const char* format;
    bool nullable;
};

void struct_schema(const std::vector<Field>& fields, ArrowSchema* out) {
    leaf_schema("+s", "", false, out);
    out->n_children = static_cast<int64_t>(fields.size());
    out->children = new ArrowSchema*[fields.size()];
    for (size_t i = 0; i < fields.size(); i++) {
        out->children[i] = new ArrowSchema;
        leaf_schema(fields[i].format, fields[i].name, fields[i].nullable, out->children[i]);
    }
}

// A custom stream of one non-null int64 column `name` whose row i holds
// i * mult, in batches of 128; counts its releases.
struct Int64Stream {
    std::string name;
    int64_t rows, mult, done = 0;
    int* releases;

    static int get_schema(ArrowArrayStream* s, ArrowSchema* out) {
        auto* st = static_cast<Int64Stream*>(s->private_data);
        struct_schema({{st->name, "l", false}}, out);
        return 0;
    }
    static void release_array(ArrowArray* a) {
        for (int64_t i = 0; i < a->n_children; i++) {
            a->children[i]->release(a->children[i]);
            delete a->children[i];
        }
        delete[] a->children;
        if (a->n_buffers == 2) delete[] static_cast<const int64_t*>(a->buffers[1]);
        delete[] a->buffers;
        a->release = nullptr;
    }
    static int get_next(ArrowArrayStream* s, ArrowArray* out) {
        auto* st = static_cast<Int64Stream*>(s->private_data);
        *out = ArrowArray{};
        if (st->done >= st->rows) return 0;
        int64_t n = std::min<int64_t>(128, st->rows - st->done);
        auto* values = new int64_t[static_cast<size_t>(n)];
        for (int64_t i = 0; i < n; i++) values[i] = (st->done + i) * st->mult;
        auto* child = new ArrowArray{};
        child->length = n;
        child->n_buffers = 2;
        child->buffers = new const void* [2] { nullptr, values };
        child->release = release_array;
        out->length = n;
        out->n_buffers = 1;
        out->buffers = new const void* [1] { nullptr };
        out->n_children = 1;
        out->children = new ArrowArray* [1] { child };
        out->release = release_array;
        st->done += n;
        return 0;
    }
    static const char* last_error(ArrowArrayStream*) { return nullptr; }
    static void release(ArrowArrayStream* s) {
        auto* st = static_cast<Int64Stream*>(s->private_data);
        (*st->releases)++;
        delete st;
        s->release = nullptr;
    }
};

void int64_stream(const std::string& name, int64_t rows, int64_t mult, int* releases, ArrowArrayStream* out) {
    auto* st = new Int64Stream{name, rows, mult, 0, releases};
    *out = ArrowArrayStream{&Int64Stream::get_schema, &Int64Stream::get_next, &Int64Stream::last_error,
                            &Int64Stream::release, st};
}

// ---- tables: every cell as text, so rows compare exactly ----

std::string float_text(float v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", static_cast<double>(v));
    return buf;
}

std::string vec_text(const float* v, int32_t dim) {
    std::string out = "[";
    for (int32_t j = 0; j < dim; j++) out += (j ? "," : "") + float_text(v[j]);
    return out + "]";
}

bool is_valid(const ArrowArray* a, int64_t i) {
    if (a->null_count == 0 || a->buffers[0] == nullptr) return true;
    const auto* bits = static_cast<const uint8_t*>(a->buffers[0]);
    int64_t k = a->offset + i;
    return (bits[k / 8] >> (k % 8)) & 1;
}

std::string cell(const ArrowArray* a, const ArrowSchema* s, int64_t i) {
    if (!is_valid(a, i)) return "null";
    std::string f = s->format;
    int64_t k = a->offset + i;
    if (f == "l") return std::to_string(static_cast<const int64_t*>(a->buffers[1])[k]);
    if (f == "L") return std::to_string(static_cast<const uint64_t*>(a->buffers[1])[k]);
    if (f == "i") return std::to_string(static_cast<const int32_t*>(a->buffers[1])[k]);
    if (f == "f") return float_text(static_cast<const float*>(a->buffers[1])[k]);
    if (f == "u") {
        const auto* offsets = static_cast<const int32_t*>(a->buffers[1]);
        const auto* chars = static_cast<const char*>(a->buffers[2]);
        return std::string(chars + offsets[k], static_cast<size_t>(offsets[k + 1] - offsets[k]));
    }
    if (f.rfind("+w:", 0) == 0 && std::string(s->children[0]->format) == "f") {
        int32_t dim = std::atoi(f.c_str() + 3);
        const ArrowArray* child = a->children[0];
        const float* values = static_cast<const float*>(child->buffers[1]) + child->offset + k * dim;
        return vec_text(values, dim);
    }
    return "?" + f;
}

struct Table {
    std::vector<std::string> names;
    std::vector<std::vector<std::string>> rows;

    int col(const std::string& name) const {
        for (size_t i = 0; i < names.size(); i++) {
            if (names[i] == name) return static_cast<int>(i);
        }
        return -1;
    }
    // The rows sorted by the `id` column.
    Table sorted_by_id() const {
        Table out = *this;
        int id = col("id");
        std::sort(out.rows.begin(), out.rows.end(), [id](const auto& x, const auto& y) {
            return std::stoll(x[static_cast<size_t>(id)]) < std::stoll(y[static_cast<size_t>(id)]);
        });
        return out;
    }
};

// Reads every batch of `stream` and releases it.
Table read_stream(ArrowArrayStream* stream) {
    Table t;
    ArrowSchema schema{};
    CHECK(stream->get_schema(stream, &schema) == 0);
    for (int64_t c = 0; c < schema.n_children; c++) t.names.push_back(schema.children[c]->name);
    while (true) {
        ArrowArray batch{};
        if (stream->get_next(stream, &batch) != 0) {
            CHECK(false);
            break;
        }
        if (batch.release == nullptr) break;
        for (int64_t r = 0; r < batch.length; r++) {
            std::vector<std::string> row;
            for (int64_t c = 0; c < schema.n_children; c++) {
                row.push_back(cell(batch.children[c], schema.children[c], r));
            }
            t.rows.push_back(std::move(row));
        }
        batch.release(&batch);
    }
    schema.release(&schema);
    stream->release(stream);
    return t;
}

Table scan_table(const lance::Dataset& ds, bool with_row_id = false) {
    lance::Scanner scanner = ds.scan();
    if (with_row_id) scanner.with_row_id();
    ArrowArrayStream out;
    scanner.to_arrow_stream(&out);
    return read_stream(&out);
}

Table scan_table(LanceDataset* ds) {
    LanceScanner* scanner = lance_scanner_new(ds, nullptr, nullptr);
    CHECK(scanner != nullptr);
    ArrowArrayStream out;
    CHECK_OK(lance_scanner_to_arrow_stream(scanner, &out));
    lance_scanner_close(scanner);
    return read_stream(&out);
}

// The row {id, vec, tag} of id `i` with the vector of `src`.
std::vector<std::string> tu_row(int64_t i, const TuData& src) {
    return {std::to_string(i), vec_text(src.vectors + i * kDim, kDim), "t" + std::to_string(i % 7)};
}

// The dataset's fields as "name:format" plus "?" when nullable.
std::vector<std::string> fields_of(const lance::Dataset& ds) {
    ArrowSchema schema{};
    ds.schema(&schema);
    std::vector<std::string> out;
    for (int64_t i = 0; i < schema.n_children; i++) {
        const ArrowSchema* c = schema.children[i];
        out.push_back(std::string(c->name) + ":" + c->format + ((c->flags & ARROW_FLAG_NULLABLE) ? "?" : ""));
    }
    schema.release(&schema);
    return out;
}

// A fresh dataset of g_data's rows in 3 fragments.
std::string make_uri(const char* tag) { return g_dir + "/" + tag + "-" + std::to_string(++g_serial) + ".lance"; }

lance::Dataset make_dataset(const std::string& uri) {
    LanceDataset* raw = tu_write(uri.c_str(), &g_data, 0, kRows, LANCE_WRITE_CREATE, kRowsPerFile);
    CHECK(raw != nullptr);
    lance_dataset_close(raw);
    lance::Dataset ds = lance::Dataset::open(uri);
    CHECK(ds.fragment_count() == 3);
    return ds;
}

std::string copy_of(const std::string& uri) {
    std::string copy = uri + "-copy.lance";
    std::string cmd = "cp -r '" + uri + "' '" + copy + "'";
    CHECK(std::system(cmd.c_str()) == 0);
    return copy;
}

// ---- versions, statistics, restore ----

void test_versions_and_restore() {
    std::string uri = make_uri("versions");
    lance::Dataset ds = make_dataset(uri);
    CHECK(ds.delete_rows("id < 10") == 10);
    CHECK(ds.update("id = 20", {{"tag", "'x'"}}) == 1);
    CHECK(ds.version() == 3);

    std::vector<lance::VersionInfo> versions = ds.versions();
    CHECK(versions.size() == 3);
    LanceVersions* c = lance_dataset_versions(ds.c_handle());
    CHECK(c != nullptr);
    CHECK(lance_versions_count(c) == versions.size());
    for (size_t i = 0; i < versions.size(); i++) {
        CHECK(versions[i].id == i + 1);
        CHECK(versions[i].id == lance_versions_id_at(c, i));
        CHECK(versions[i].timestamp_ms == lance_versions_timestamp_ms_at(c, i));
        CHECK(versions[i].timestamp_ms > 1600000000000LL);
        if (i > 0) CHECK(versions[i].timestamp_ms >= versions[i - 1].timestamp_ms);
    }
    lance_versions_close(c);
    // An older handle sees the whole history too.
    std::vector<lance::VersionInfo> from_v1 = lance::Dataset::open(uri, {}, 1).versions();
    CHECK(from_v1.size() == 3 && from_v1.back().id == 3 && from_v1.back().timestamp_ms == versions.back().timestamp_ms);

    // Restore version 1: a new version 4 with its rows; this handle stays at 3.
    lance::Dataset restored = ds.restore(1);
    CHECK(restored.version() == 4);
    CHECK(ds.version() == 3 && ds.count_rows() == 590);
    CHECK(scan_table(restored).rows == scan_table(lance::Dataset::open(uri, {}, 1)).rows);
    CHECK(restored.versions().size() == 4);
    // Restoring the latest commits a new version too, with the same rows.
    lance::Dataset same = restored.restore(4);
    CHECK(same.version() == 5 && same.latest_version() == 5 && restored.version() == 4);
    CHECK(scan_table(same).rows == scan_table(restored).rows);
    CHECK(same.versions().size() == 5);
    CHECK(code_of([&] { ds.restore(0); }) == IA);
    CHECK(code_of([&] { ds.restore(99); }) == LANCE_ERR_NOT_FOUND);
    CHECK(ds.latest_version() == 5);
}

void test_data_stats() {
    lance::Dataset ds = make_dataset(make_uri("stats"));
    std::vector<lance::FieldStatistics> stats = ds.calculate_data_stats();
    LanceDataStatistics* c = lance_dataset_calculate_data_stats(ds.c_handle());
    CHECK(c != nullptr);
    CHECK(stats.size() == lance_data_statistics_count(c));
    CHECK(stats.size() >= 3);
    uint64_t total = 0;
    for (size_t i = 0; i < stats.size(); i++) {
        CHECK(stats[i].id == lance_data_statistics_field_id_at(c, i));
        CHECK(stats[i].bytes_on_disk == lance_data_statistics_bytes_on_disk_at(c, i));
        if (i > 0) CHECK(stats[i].id > stats[i - 1].id);
        total += stats[i].bytes_on_disk;
    }
    lance_data_statistics_close(c);
    CHECK(!stats.empty() && stats[0].id == 0);
    // The id column alone holds 600 int64 values.
    CHECK(!stats.empty() && stats[0].bytes_on_disk > 0);
    CHECK(total >= static_cast<uint64_t>(kRows) * (8 + kDim * 4));
}

// ---- update ----

void test_update() {
    lance::Dataset ds = make_dataset(make_uri("update"));
    Table before = scan_table(ds).sorted_by_id();
    CHECK(before.rows.size() == static_cast<size_t>(kRows));

    CHECK(ds.update("id < 100", {{"tag", "'upd'"}, {"id", "id + 1000"}}) == 100);
    CHECK(ds.version() == 2 && ds.count_rows() == static_cast<uint64_t>(kRows));
    Table expected = before;
    for (int64_t i = 0; i < 100; i++) {
        expected.rows[static_cast<size_t>(i)][0] = std::to_string(i + 1000);
        expected.rows[static_cast<size_t>(i)][2] = "upd";
    }
    CHECK(scan_table(ds).sorted_by_id().rows == expected.sorted_by_id().rows);

    // "" updates every row (the wrapper passes NULL to C).
    CHECK(ds.update("", {{"tag", "'all'"}}) == static_cast<uint64_t>(kRows));
    CHECK(ds.version() == 3);
    for (auto& row : expected.rows) row[2] = "all";
    CHECK(scan_table(ds).sorted_by_id().rows == expected.sorted_by_id().rows);

    // Bad input: the codes lance_dataset_update() documents; nothing committed.
    CHECK(code_of([&] { ds.update("id < 5", {{"nope", "1"}}); }) == IA);
    CHECK(code_of([&] { ds.update("nope < 5", {{"tag", "'y'"}}); }) == IA);
    CHECK(code_of([&] { ds.update("id <", {{"tag", "'y'"}}); }) == IA);
    CHECK(code_of([&] { ds.update("id < 5", {}); }) == IA);
    CHECK(code_of([&] { ds.update("id < 5", {{"tag", ""}}); }) == IA);
    CHECK(code_of([&] { ds.update("id < 5", {{"tag", "'a'"}, {"tag", "'b'"}}); }) == IA);
    CHECK(ds.version() == 3);
}

// ---- merge-insert ----

const LanceMergeInsertParams kUpsert{LANCE_MERGE_WHEN_MATCHED_UPDATE_ALL, nullptr,
                                     LANCE_MERGE_WHEN_NOT_MATCHED_INSERT_ALL,
                                     LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_KEEP, nullptr};

bool same_result(const LanceMergeInsertResult& a, const LanceMergeInsertResult& b) {
    return a.num_inserted_rows == b.num_inserted_rows && a.num_updated_rows == b.num_updated_rows &&
           a.num_deleted_rows == b.num_deleted_rows;
}

// Merges rows [first, first + rows) of g_other into a fresh dataset through
// the wrapper (upsert() when `params` is &kUpsert and `use_upsert`), and
// into a copy through C with the same params; both must agree with each
// other and with `expected` (rows sorted by id) and the counts.
void wrapper_merge_case(const char* tag, int64_t first, int64_t rows, const LanceMergeInsertParams* params,
                        bool use_upsert, const LanceMergeInsertResult& counts,
                        const std::vector<std::vector<std::string>>& expected) {
    std::string uri = make_uri(tag);
    lance::Dataset ds = make_dataset(uri);
    std::string copy = copy_of(uri);

    int releases = 0;
    ArrowArrayStream source;
    rows_stream(&g_other, first, rows, &releases, &source);
    LanceMergeInsertResult got = use_upsert ? ds.upsert({"id"}, &source) : ds.merge_insert({"id"}, &source, params);
    CHECK(releases == 1);
    CHECK(same_result(got, counts));
    CHECK(ds.version() == 2);

    LanceDataset* c = lance_dataset_open(copy.c_str(), nullptr, 0);
    CHECK(c != nullptr);
    int c_releases = 0;
    rows_stream(&g_other, first, rows, &c_releases, &source);
    const char* const keys[] = {"id"};
    LanceMergeInsertResult c_result{};
    CHECK_OK(lance_dataset_merge_insert(c, keys, 1, &source, params, &c_result));
    CHECK(c_releases == 1);
    CHECK(same_result(got, c_result));

    Table mine = scan_table(ds).sorted_by_id();
    CHECK(mine.names == std::vector<std::string>({"id", "vec", "tag"}));
    CHECK(mine.rows == scan_table(c).sorted_by_id().rows);
    CHECK(mine.rows == expected);
    lance_dataset_close(c);
}

void test_merge_insert() {
    // Upsert of ids 500..699: 100 updated (new vectors), 100 inserted.
    std::vector<std::vector<std::string>> expected;
    for (int64_t i = 0; i < 700; i++) expected.push_back(tu_row(i, i < 500 ? g_data : g_other));
    wrapper_merge_case("upsert", 500, 200, &kUpsert, true, {100, 100, 0}, expected);
    wrapper_merge_case("update-all", 500, 200, &kUpsert, false, {100, 100, 0}, expected);

    // nullptr params = find-or-create: ids 600..649 inserted, matches kept.
    expected.clear();
    for (int64_t i = 0; i < 650; i++) expected.push_back(tu_row(i, i < 600 ? g_data : g_other));
    wrapper_merge_case("find-or-create", 550, 100, nullptr, false, {50, 0, 0}, expected);

    // Update matches, skip new rows, delete unmatched target rows with id < 10.
    LanceMergeInsertParams replace{LANCE_MERGE_WHEN_MATCHED_UPDATE_ALL, nullptr,
                                   LANCE_MERGE_WHEN_NOT_MATCHED_DO_NOTHING,
                                   LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE_IF, "id < 10"};
    expected.clear();
    for (int64_t i = 10; i < kRows; i++) expected.push_back(tu_row(i, i >= 100 && i < 200 ? g_other : g_data));
    wrapper_merge_case("delete-if", 100, 100, &replace, false, {0, 100, 10}, expected);

    // Bad input: the documented code, the stream released once, nothing committed.
    lance::Dataset ds = make_dataset(make_uri("merge-bad"));
    int releases = 0;
    ArrowArrayStream source;
    rows_stream(&g_other, 0, 10, &releases, &source);
    CHECK(code_of([&] { ds.merge_insert({"nope"}, &source); }) == IA);
    CHECK(releases == 1);
    releases = 0;
    rows_stream(&g_other, 0, 10, &releases, &source);
    CHECK(code_of([&] { ds.upsert({}, &source); }) == IA);
    CHECK(releases == 1);
    releases = 0;
    rows_stream(&g_other, 0, 10, &releases, &source);
    LanceMergeInsertParams idle{LANCE_MERGE_WHEN_MATCHED_DO_NOTHING, nullptr, LANCE_MERGE_WHEN_NOT_MATCHED_DO_NOTHING,
                                LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_KEEP, nullptr};
    CHECK(code_of([&] { ds.merge_insert({"id"}, &source, &idle); }) == IA);
    CHECK(releases == 1);
    releases = 0;
    rows_stream(&g_other, 0, 10, &releases, &source);
    LanceMergeInsertParams no_expr = kUpsert;
    no_expr.when_matched = LANCE_MERGE_WHEN_MATCHED_UPDATE_IF;
    CHECK(code_of([&] { ds.merge_insert({"id"}, &source, &no_expr); }) == IA);
    CHECK(releases == 1);
    CHECK(code_of([&] { ds.upsert({"id"}, nullptr); }) == IA);
    CHECK(ds.version() == 1 && ds.count_rows() == static_cast<uint64_t>(kRows));
}

// ---- schema evolution ----

void test_drop_and_alter_columns() {
    lance::Dataset ds = make_dataset(make_uri("drop"));
    Table before = scan_table(ds);
    CHECK(fields_of(ds) == std::vector<std::string>({"id:l", "vec:+w:4", "tag:u"}));
    ds.drop_columns({"tag"});
    CHECK(ds.version() == 2);
    CHECK(fields_of(ds) == std::vector<std::string>({"id:l", "vec:+w:4"}));
    Table after = scan_table(ds);
    CHECK(after.rows.size() == before.rows.size());
    for (size_t i = 0; i < after.rows.size() && i < before.rows.size(); i++) {
        CHECK(after.rows[i] == std::vector<std::string>(before.rows[i].begin(), before.rows[i].begin() + 2));
    }
    CHECK(code_of([&] { ds.drop_columns({"tag"}); }) == IA);
    CHECK(code_of([&] { ds.drop_columns({"vec", "nope"}); }) == IA);
    CHECK(code_of([&] { ds.drop_columns({"id", "vec"}); }) == IA);
    CHECK(code_of([&] { ds.drop_columns({}); }) == IA);
    CHECK(code_of([&] { ds.drop_columns({""}); }) == IA);
    CHECK(ds.version() == 2);

    lance::Dataset alt = make_dataset(make_uri("alter"));
    alt.alter_columns({{"tag", "label"}, {"id", std::nullopt, LANCE_COLUMN_NULLABLE_TRUE}});
    CHECK(alt.version() == 2);
    CHECK(fields_of(alt) == std::vector<std::string>({"id:l?", "vec:+w:4", "label:u"}));
    CHECK(scan_table(alt).rows == before.rows);
    // A cast rewrites the column: id as int32, same values; the type is borrowed.
    ArrowSchema int32_type;
    leaf_schema("i", "", true, &int32_type);
    alt.alter_columns({{"id", std::nullopt, LANCE_COLUMN_NULLABLE_UNCHANGED, &int32_type}});
    CHECK(int32_type.release != nullptr);
    CHECK(fields_of(alt) == std::vector<std::string>({"id:i?", "vec:+w:4", "label:u"}));
    CHECK(scan_table(alt).rows == before.rows);
    CHECK(alt.version() == 3);
    // Bad input: nothing asked, unknown column, taken name, impossible cast.
    CHECK(code_of([&] { alt.alter_columns({{"label", std::nullopt}}); }) == IA);
    CHECK(code_of([&] { alt.alter_columns({{"nope", "x"}}); }) == IA);
    CHECK(code_of([&] { alt.alter_columns({{"label", "id"}}); }) == IA);
    CHECK(code_of([&] { alt.alter_columns({{"label", ""}}); }) == IA);
    CHECK(code_of([&] {
              alt.alter_columns({{"vec", std::nullopt, LANCE_COLUMN_NULLABLE_UNCHANGED, &int32_type}});
          }) == IA);
    /* 3: no enumerator, yet inside the enum's value range (7 would be undefined behaviour in C++). */
    CHECK(code_of([&] {
              alt.alter_columns({{"label", std::nullopt, static_cast<LanceColumnNullableMode>(3)}});
          }) == IA);
    CHECK(code_of([&] { alt.alter_columns({}); }) == IA);
    CHECK(alt.version() == 3);
    int32_type.release(&int32_type);
}

void test_add_columns() {
    lance::Dataset ds = make_dataset(make_uri("add"));
    Table before = scan_table(ds);

    ds.add_columns_sql({{"double_id", "id * 2"}, {"next_id", "id + 1"}}, 100);
    CHECK(ds.version() == 2);
    CHECK(fields_of(ds).size() == 5 && fields_of(ds)[3].rfind("double_id:l", 0) == 0 &&
          fields_of(ds)[4].rfind("next_id:l", 0) == 0);

    ArrowSchema nulls;
    struct_schema({{"note", "u", true}}, &nulls);
    ds.add_columns_nulls(&nulls);
    CHECK(nulls.release != nullptr);  // borrowed
    CHECK(ds.version() == 3);
    CHECK(code_of([&] { ds.add_columns_nulls(&nulls); }) == IA);  // taken name
    nulls.release(&nulls);
    ArrowSchema required;
    struct_schema({{"must", "u", false}}, &required);
    CHECK(code_of([&] { ds.add_columns_nulls(&required); }) == IA);
    required.release(&required);

    int releases = 0;
    ArrowArrayStream stream;
    int64_stream("triple", kRows, 3, &releases, &stream);
    ds.add_columns_stream(&stream);
    CHECK(releases == 1);
    CHECK(ds.version() == 4);
    std::vector<std::string> fields = fields_of(ds);
    CHECK(fields.size() == 7);
    fields.resize(7);
    CHECK(fields ==
          std::vector<std::string>({"id:l", "vec:+w:4", "tag:u", fields[3], fields[4], "note:u?", "triple:l"}));

    // Every row: the old cells, then id * 2, id + 1, NULL, position * 3.
    Table after = scan_table(ds);
    CHECK(after.names == std::vector<std::string>({"id", "vec", "tag", "double_id", "next_id", "note", "triple"}));
    CHECK(after.rows.size() == before.rows.size());
    for (size_t i = 0; i < after.rows.size() && i < before.rows.size(); i++) {
        std::vector<std::string> want = before.rows[i];
        int64_t id = std::stoll(want[0]);
        want.push_back(std::to_string(id * 2));
        want.push_back(std::to_string(id + 1));
        want.push_back("null");
        want.push_back(std::to_string(static_cast<int64_t>(i) * 3));
        CHECK(after.rows[i] == want);
    }

    // Bad input; every stream handed over is released once.
    CHECK(code_of([&] { ds.add_columns_sql({{"z", "nope * 2"}}); }) == IA);
    CHECK(code_of([&] { ds.add_columns_sql({{"z", "id +"}}); }) == IA);
    CHECK(code_of([&] { ds.add_columns_sql({{"double_id", "id * 5"}}); }) == IA);
    CHECK(code_of([&] { ds.add_columns_sql({{"", "id"}}); }) == IA);
    CHECK(code_of([&] { ds.add_columns_sql({}); }) == IA);
    CHECK(code_of([&] { ds.add_columns_sql({{"z", "id"}}, uint64_t{UINT32_MAX} + 1); }) == IA);
    releases = 0;
    int64_stream("short", kRows - 1, 1, &releases, &stream);
    CHECK(code_of([&] { ds.add_columns_stream(&stream); }) == IA);
    CHECK(releases == 1);
    releases = 0;
    int64_stream("triple", kRows, 1, &releases, &stream);  // taken
    CHECK(code_of([&] { ds.add_columns_stream(&stream, 64); }) == IA);
    CHECK(releases == 1);
    CHECK(code_of([&] { ds.add_columns_stream(nullptr); }) == IA);
    CHECK(ds.version() == 4);
}

// ---- random access ----

void test_take() {
    lance::Dataset ds = make_dataset(make_uri("take"));
    Table with_ids_before = scan_table(ds, true);
    CHECK(ds.delete_rows("id % 5 = 0") == 120);
    const uint64_t live = ds.count_rows();
    CHECK(live == 480);
    Table full = scan_table(ds);
    lance::Scanner id_scan = ds.scan({"id"});
    std::vector<int64_t> ids = scan_ids(id_scan);
    CHECK(ids.size() == full.rows.size());
    for (size_t i = 0; i < ids.size() && i < full.rows.size(); i++) CHECK(std::to_string(ids[i]) == full.rows[i][0]);
    Table full_ids = scan_table(ds, true);
    CHECK(full.rows.size() == live && full_ids.names.back() == "_rowid");

    const std::vector<uint64_t> positions = {0, 7, 479, 7, 100, 250, 321};
    ArrowArrayStream out;
    ds.take(positions.data(), positions.size(), &out);
    Table taken = read_stream(&out);
    CHECK(taken.names == full.names);
    CHECK(taken.rows.size() == positions.size());
    for (size_t k = 0; k < taken.rows.size() && k < positions.size(); k++) {
        CHECK(taken.rows[k] == full.rows[positions[k]]);
    }

    // A projection, in any order: each cell equals the scan's.
    ds.take(positions.data(), positions.size(), {"tag", "id"}, &out);
    Table projected = read_stream(&out);
    std::vector<std::string> names = projected.names;
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>({"id", "tag"}));
    CHECK(projected.rows.size() == positions.size());
    for (size_t k = 0; k < projected.rows.size() && k < positions.size(); k++) {
        for (size_t c = 0; c < projected.names.size(); c++) {
            int fc = full.col(projected.names[c]);
            CHECK(fc >= 0 && projected.rows[k][c] == full.rows[positions[k]][static_cast<size_t>(fc)]);
        }
    }
    ds.take(nullptr, 0, &out);
    CHECK(read_stream(&out).rows.empty());

    // take_rows by the _rowid a scan gives, all columns and with _rowid asked for.
    const int rowid_col = full_ids.col("_rowid");
    std::vector<uint64_t> row_ids;
    for (uint64_t p : positions) row_ids.push_back(std::stoull(full_ids.rows[p][static_cast<size_t>(rowid_col)]));
    ds.take_rows(row_ids.data(), row_ids.size(), &out);
    Table by_id = read_stream(&out);
    CHECK(by_id.names == full.names);
    CHECK(by_id.rows.size() == positions.size());
    for (size_t k = 0; k < by_id.rows.size() && k < positions.size(); k++) {
        CHECK(by_id.rows[k] == full.rows[positions[k]]);
    }
    ds.take_rows(row_ids.data(), row_ids.size(), {"id", "_rowid"}, &out);
    Table by_id_projected = read_stream(&out);
    CHECK(by_id_projected.rows.size() == positions.size());
    for (size_t k = 0; k < by_id_projected.rows.size() && k < positions.size(); k++) {
        for (size_t c = 0; c < by_id_projected.names.size(); c++) {
            int fc = full_ids.col(by_id_projected.names[c]);
            CHECK(fc >= 0 && by_id_projected.rows[k][c] == full_ids.rows[positions[k]][static_cast<size_t>(fc)]);
        }
    }
    // The row id of deleted row id 0 is skipped; id 1's row comes back.
    const int before_rowid = with_ids_before.col("_rowid");
    std::vector<uint64_t> mixed = {std::stoull(with_ids_before.rows[0][static_cast<size_t>(before_rowid)]),
                                   std::stoull(with_ids_before.rows[1][static_cast<size_t>(before_rowid)])};
    CHECK(with_ids_before.rows[0][0] == "0" && with_ids_before.rows[1][0] == "1");
    ds.take_rows(mixed.data(), mixed.size(), {"id"}, &out);
    Table skipped = read_stream(&out);
    CHECK(skipped.rows == std::vector<std::vector<std::string>>({{"1"}}));

    // Bad input: a position past the end is IA, an unknown column NF.
    const uint64_t past_end[] = {0, live};
    CHECK(code_of([&] { ds.take(past_end, 2, &out); }) == IA);
    CHECK(code_of([&] { ds.take(positions.data(), 1, {"nope"}, &out); }) == LANCE_ERR_NOT_FOUND);
    CHECK(code_of([&] { ds.take_rows(row_ids.data(), 1, {"id", "nope"}, &out); }) == LANCE_ERR_NOT_FOUND);
    CHECK(code_of([&] { ds.take(nullptr, 3, &out); }) == IA);
}

// ---- uncommitted writes ----

void test_write_fragments() {
    std::string uri = make_uri("fragments");
    lance::Dataset ds = make_dataset(uri);
    const uint64_t latest = ds.latest_version();
    const int files = tu_visible_entries((uri + "/data").c_str());
    CHECK(files == 3);

    ArrowSchema schema;
    tu_schema(kDim, &schema);
    int releases = 0;
    ArrowArrayStream stream;
    rows_stream(&g_data, 0, 100, &releases, &stream);
    lance::write_fragments(uri, &schema, &stream);
    CHECK(releases == 1);
    CHECK(tu_visible_entries((uri + "/data").c_str()) > files);
    CHECK(ds.latest_version() == latest);
    lance::Dataset reopened = lance::Dataset::open(uri);
    CHECK(reopened.version() == latest && reopened.count_rows() == static_cast<uint64_t>(kRows));

    // A fresh location, with storage options given.
    std::string fresh = make_uri("fragments-fresh");
    releases = 0;
    rows_stream(&g_data, 0, 50, &releases, &stream);
    lance::write_fragments(fresh, &schema, &stream, {{"unused_key", "v"}});
    CHECK(releases == 1);
    CHECK(tu_visible_entries((fresh + "/data").c_str()) >= 1);
    CHECK(code_of([&] { lance::Dataset::open(fresh); }) == LANCE_ERR_NOT_FOUND);

    // Bad input: the stream is consumed whatever the result.
    ArrowSchema wider;
    tu_schema(kDim * 2, &wider);
    releases = 0;
    rows_stream(&g_data, 0, 10, &releases, &stream);
    CHECK(code_of([&] { lance::write_fragments(uri, &wider, &stream); }) == IA);
    CHECK(releases == 1);
    wider.release(&wider);
    releases = 0;
    rows_stream(&g_data, 0, 10, &releases, &stream);
    CHECK(code_of([&] { lance::write_fragments("", &schema, &stream); }) == IA);
    CHECK(releases == 1);
    releases = 0;
    rows_stream(&g_data, 0, 10, &releases, &stream);
    CHECK(code_of([&] { lance::write_fragments(uri, nullptr, &stream); }) == IA);
    CHECK(releases == 1);
    CHECK(code_of([&] { lance::write_fragments(uri, &schema, nullptr); }) == IA);
    schema.release(&schema);
    CHECK(ds.latest_version() == latest);
}

}  // namespace

int main() {
    g_data = tu_make_data(kRows, kDim, 4, 0.5f, 11);
    g_other = tu_make_data(700, kDim, 4, 0.5f, 23);
    char* dir = tu_temp_dir("wrapper-data");
    g_dir = dir;
    RUN(test_versions_and_restore);
    RUN(test_data_stats);
    RUN(test_update);
    RUN(test_merge_insert);
    RUN(test_drop_and_alter_columns);
    RUN(test_add_columns);
    RUN(test_take);
    RUN(test_write_fragments);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&g_data);
    tu_free_data(&g_other);
    return tu_finish("test_wrapper_data");
}
