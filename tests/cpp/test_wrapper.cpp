// The C++ wrappers: RAII ownership, move-only handles, exceptions carrying
// the library's code and message, and the same exact k-NN results as C.
#include <cstring>
#include <iostream>
#include <type_traits>

#include "lance/lance.hpp"
#include "test_util.h"

static_assert(!std::is_copy_constructible_v<lance::Dataset>, "Dataset must be move-only");
static_assert(std::is_nothrow_move_constructible_v<lance::Dataset>, "Dataset must move");
static_assert(!std::is_copy_constructible_v<lance::Scanner>, "Scanner must be move-only");
static_assert(!std::is_copy_constructible_v<lance::Batch>, "Batch must be move-only");

template <typename F>
static LanceErrorCode code_of(F&& f) {
    try {
        f();
    } catch (const lance::Error& e) {
        CHECK(std::strlen(e.what()) > 0);
        return e.code();
    }
    return LANCE_OK;
}

int main() {
    TuData data = tu_make_data(2000, 16, 8, 0.5f, 5);
    char* dir = tu_temp_dir("cpp");
    std::string uri = std::string(dir) + "/cpp.lance";
    {
        ArrowSchema schema;
        ArrowArrayStream stream;
        tu_schema(16, &schema);
        tu_stream(&data, 0, data.rows, 500, &stream);
        LanceWriteParams params{};
        params.max_rows_per_file = 250;
        lance::Dataset ds = lance::Dataset::write(uri, &schema, &stream, LANCE_WRITE_CREATE, &params);
        schema.release(&schema);
        CHECK(ds.version() == 1);
        CHECK(ds.count_rows() == 2000);
        CHECK(ds.fragment_ids().size() == 8);
        CHECK(ds.fragment_row_counts() == std::vector<uint64_t>(8, 250));

        // Moves transfer ownership; the moved-from handle is empty.
        lance::Dataset moved = std::move(ds);
        CHECK(ds.c_handle() == nullptr);
        CHECK(moved.count_rows() == 2000);

        LanceVectorIndexParams p{};
        p.index_type = LANCE_INDEX_IVF_FLAT;
        p.num_partitions = 4;
        moved.create_vector_index("vec", "v", p);
        CHECK(moved.index_count() == 1);
        auto segments = moved.index_segments("v");
        CHECK(segments.size() == 1);
        CHECK(moved.index_list_json().find("\"name\":\"v\"") != std::string::npos);

        std::vector<float> query(data.vectors + 16 * 77, data.vectors + 16 * 78);
        auto scanner = moved.scan({"id"});
        scanner.nearest("vec", query, 10).nprobes(4).index_segments(segments);
        int64_t got[10];
        int n = 0;
        while (auto batch = scanner.next()) {
            ArrowArray a;
            ArrowSchema s;
            batch->to_arrow(&a, &s);
            const int64_t* ids = static_cast<const int64_t*>(a.children[0]->buffers[1]);
            for (int64_t i = 0; i < a.length && n < 10; i++) got[n++] = ids[a.children[0]->offset + i];
            a.release(&a);
            s.release(&s);
        }
        int64_t truth[10];
        tu_brute_force_knn(&data, query.data(), 10, truth);
        CHECK(n == 10 && std::memcmp(got, truth, sizeof truth) == 0);

        // Errors become exceptions with the right code.
        CHECK(code_of([&] { lance::Dataset::open("/nonexistent/x.lance"); }) == LANCE_ERR_NOT_FOUND);
        CHECK(code_of([&] { moved.scan({"no_such"}); }) != LANCE_OK);
        CHECK(code_of([&] { moved.drop_index("missing"); }) == LANCE_ERR_NOT_FOUND);
        CHECK(code_of([&] { moved.index_segments("missing"); }) == LANCE_ERR_NOT_FOUND);
        CHECK(code_of([&] { moved.scan({"id"}).limit(-5); }) == LANCE_ERR_INVALID_ARGUMENT);
        moved.drop_index("v");
        CHECK(moved.index_count() == 0);

        lance::Dataset reopened = lance::Dataset::open(uri);
        CHECK(reopened.version() == 3);
    }
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_wrapper");
}
