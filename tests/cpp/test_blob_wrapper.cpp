// The C++ wrappers of sessions and blobs: Session and its cache statistics,
// Dataset::open_with_session, take_blobs / take_blobs_by_indices as
// optional BlobFiles, the BlobFile reads, and Scanner::blob_handling, over
// the Blob v2 dataset tests/api/blob_oracle.py writes with pylance.
//
// Usage: test_blob_wrapper <python with pylance> <tests/api/blob_oracle.py>.
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "lance/lance.hpp"
#include "dataset_kit.h"
#include "test_util.hpp"

namespace {

struct Row {
    int64_t id;
    uint64_t row_id;
    std::optional<std::vector<uint8_t>> bytes;  // nullopt for a null value
};

std::string g_uri;
std::vector<Row> g_rows;

bool write_and_list(const char* python, const char* script, const std::string& dir) {
    g_uri = dir + "/blobs.lance";
    DkBlobRow listed[64];
    int n = dk_blob_rows(python, script, dir.c_str(), listed, 64);
    for (int i = 0; i < n; i++) {
        Row row{listed[i].id, listed[i].row_id, std::nullopt};
        if (listed[i].bytes) row.bytes = std::vector<uint8_t>(listed[i].bytes, listed[i].bytes + listed[i].size);
        free(listed[i].bytes);
        g_rows.push_back(std::move(row));
    }
    return !g_rows.empty();
}

void test_session_and_blobs() {
    lance::Session session(64u << 20, 64u << 20);
    auto ds = lance::Dataset::open_with_session(session, g_uri);
    CHECK(ds.count_rows() == g_rows.size());
    LanceSessionCacheStats stats = session.cache_stats();
    CHECK(stats.metadata_cache_entries > 0 && stats.metadata_cache_size_bytes > 0);

    std::vector<uint64_t> ids, indices;
    for (size_t i = 0; i < g_rows.size(); i++) {
        ids.push_back(g_rows[i].row_id);
        indices.push_back(i);
    }
    auto by_id = ds.take_blobs(ids.data(), ids.size(), "blob");
    auto by_index = ds.take_blobs_by_indices(indices.data(), indices.size(), "blob");
    CHECK(by_id.size() == g_rows.size() && by_index.size() == g_rows.size());
    for (size_t i = 0; i < g_rows.size() && i < by_id.size() && i < by_index.size(); i++) {
        const Row& row = g_rows[i];
        CHECK(by_id[i].has_value() == row.bytes.has_value());
        CHECK(by_index[i].has_value() == row.bytes.has_value());
        if (!row.bytes || !by_id[i] || !by_index[i]) continue;
        CHECK(by_id[i]->size() == row.bytes->size());
        CHECK(by_id[i]->read() == *row.bytes);
        CHECK(by_id[i]->tell() == row.bytes->size());
        CHECK(by_id[i]->read().empty());
        CHECK(by_index[i]->read_range(0, row.bytes->size()) == *row.bytes);
        CHECK(by_index[i]->tell() == 0);
        if (row.bytes->size() > 4) {
            auto head = by_index[i]->read_up_to(3);
            CHECK(head == std::vector<uint8_t>(row.bytes->begin(), row.bytes->begin() + 3));
            by_index[i]->seek(row.bytes->size() - 2);
            CHECK(by_index[i]->read_up_to(100) == std::vector<uint8_t>(row.bytes->end() - 2, row.bytes->end()));
            CHECK(code_of([&] { by_index[i]->read_range(row.bytes->size() - 1, 2); }) == LANCE_ERR_INVALID_ARGUMENT);
        }
    }
    // No ids: an empty result.
    CHECK(ds.take_blobs(nullptr, 0, "blob").empty());
    CHECK(code_of([&] { ds.take_blobs(ids.data(), 1, "raw"); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { ds.take_blobs_by_indices(ids.data(), 1, "no_such_column"); }) == LANCE_ERR_NOT_FOUND);
}

void test_scanner_blob_handling() {
    auto ds = lance::Dataset::open(g_uri);
    const char* formats[] = {"+s", "Z", "+s"};
    for (int mode = 0; mode < 3; mode++) {
        auto scanner = ds.scan();
        scanner.blob_handling(static_cast<LanceBlobHandling>(mode));
        ArrowArrayStream stream;
        scanner.to_arrow_stream(&stream);
        ArrowSchema schema;
        CHECK(stream.get_schema(&stream, &schema) == 0);
        CHECK(std::strcmp(schema.children[1]->name, "blob") == 0);
        CHECK(std::strcmp(schema.children[1]->format, formats[mode]) == 0);
        CHECK(std::strcmp(schema.children[2]->format, "Z") == 0);
        schema.release(&schema);
        stream.release(&stream);
    }
    auto scanner = ds.scan();
    CHECK(code_of([&] { scanner.blob_handling(static_cast<LanceBlobHandling>(7)); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([] { lance::Session(0, 0).cache_stats(); }) == LANCE_OK);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <python with pylance> <tests/api/blob_oracle.py>\n", argv[0]);
        return 2;
    }
    char* dir = tu_temp_dir("cpp-blob");
    CHECK(dir != nullptr && write_and_list(argv[1], argv[2], dir));
    if (tu_failures == 0) {
        RUN(test_session_and_blobs);
        RUN(test_scanner_blob_handling);
    }
    tu_remove_tree(dir);
    free(dir);
    return tu_finish("test_blob_wrapper");
}
