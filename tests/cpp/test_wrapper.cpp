// The C++ wrappers: RAII ownership, move-only handles, exceptions carrying
// the library's code and message, upstream's member forms (write from a
// stream, open with options then version, index creation, the public
// Scanner constructor), the same exact k-NN results as C, upstream main's
// batch k-NN, distance range and index prewarming, and a MinHash
// near-duplicate search.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <iostream>
#include <mutex>
#include <type_traits>

#include "lance/lance.hpp"
#include "test_util.hpp"

static_assert(!std::is_copy_constructible_v<lance::Dataset>, "Dataset must be move-only");
static_assert(std::is_nothrow_move_constructible_v<lance::Dataset>, "Dataset must move");
static_assert(!std::is_copy_constructible_v<lance::Scanner>, "Scanner must be move-only");
static_assert(!std::is_copy_constructible_v<lance::Batch>, "Batch must be move-only");
static_assert(std::is_same_v<decltype(lance::Error::code), LanceErrorCode>, "Error::code is a data member");

static TuData g_data;
static std::string g_dir;

static std::vector<int64_t> brute_force(const float* query, int k) {
    std::vector<int64_t> truth(k);
    tu_brute_force_knn(&g_data, query, k, truth.data());
    return truth;
}

// A stream whose schema callback is missing or fails, counting its releases.
struct FakeStream {
    int releases = 0;
    ArrowArrayStream stream{};
    explicit FakeStream(bool with_get_schema) {
        stream.get_schema = with_get_schema ? &FakeStream::failing_schema : nullptr;
        stream.get_last_error = [](ArrowArrayStream*) -> const char* { return "no schema here"; };
        stream.release = [](ArrowArrayStream* s) {
            static_cast<FakeStream*>(s->private_data)->releases++;
            s->release = nullptr;
        };
        stream.private_data = this;
    }
    static int failing_schema(ArrowArrayStream*, ArrowSchema*) { return 5; }
};

// Every row of g_data written to `uri` through lance::Dataset::write(), in
// batches of 500 rows, 250 rows a file (8 fragments).
static lance::Dataset write_all(const std::string& uri) {
    ArrowArrayStream stream;
    tu_stream(&g_data, 0, g_data.rows, 500, &stream);
    lance::WriteParams wp;
    wp.max_rows_per_file = 250;
    return lance::Dataset::write(uri, &stream, lance::WriteMode::Create, wp);
}

// The first 700 rows of g_data written through the C API to g_dir/<name>,
// 350 a fragment, and opened through the wrapper.
static lance::Dataset first_700_rows(const char* name) {
    std::string uri = g_dir + "/" + name;
    LanceDataset* raw = tu_write(uri.c_str(), &g_data, 0, 700, LANCE_WRITE_CREATE, 350);
    CHECK(raw != nullptr);
    lance_dataset_close(raw);
    return lance::Dataset::open(uri);
}

static void test_write_and_open() {
    std::string uri = g_dir + "/write.lance";
    lance::Dataset ds = write_all(uri);
    ArrowArrayStream stream;
    CHECK(ds.version() == 1);
    CHECK(ds.count_rows() == 2000);
    CHECK(ds.fragment_count() == 8);
    CHECK(ds.fragment_ids() == std::vector<uint64_t>({0, 1, 2, 3, 4, 5, 6, 7}));
    CHECK(ds.fragment_row_counts() == std::vector<uint64_t>(8, 250));

    // Create over an existing dataset.
    tu_stream(&g_data, 0, 100, 100, &stream);
    CHECK(code_of([&] { lance::Dataset::write(uri, &stream, lance::WriteMode::Create); }) ==
          LANCE_ERR_DATASET_ALREADY_EXISTS);
    // Append through the upstream form without params; the schema comes from the stream.
    tu_stream(&g_data, 0, 100, 100, &stream);
    lance::Dataset appended = lance::Dataset::write(uri, &stream, lance::WriteMode::Append, {{"unused_key", "v"}});
    CHECK(appended.version() == 2 && appended.count_rows() == 2100);
    // Overwrite with a storage format named.
    tu_stream(&g_data, 0, 300, 100, &stream);
    lance::WriteParams stable;
    stable.data_storage_version = "stable";
    lance::Dataset over = lance::Dataset::write(uri, &stream, lance::WriteMode::Overwrite, stable);
    CHECK(over.version() == 3 && over.count_rows() == 300);
    tu_stream(&g_data, 0, 100, 100, &stream);
    lance::WriteParams bad_format;
    bad_format.data_storage_version = "9.9";
    CHECK(code_of([&] { lance::Dataset::write(uri, &stream, lance::WriteMode::Append, bad_format); }) ==
          LANCE_ERR_INVALID_ARGUMENT);

    // The stream is consumed on every path, the wrapper's own checks included.
    CHECK(code_of([&] { lance::Dataset::write(uri, nullptr, lance::WriteMode::Append); }) ==
          LANCE_ERR_INVALID_ARGUMENT);
    FakeStream no_schema(false);
    CHECK(code_of([&] { lance::Dataset::write(uri, &no_schema.stream, lance::WriteMode::Append); }) ==
          LANCE_ERR_INVALID_ARGUMENT);
    CHECK(no_schema.releases == 1);
    FakeStream failing(true);
    try {
        lance::Dataset::write(uri, &failing.stream, lance::WriteMode::Append);
        CHECK(false);
    } catch (const lance::Error& e) {
        CHECK(e.code == LANCE_ERR_INVALID_ARGUMENT);
        CHECK(std::string(e.what()).find("no schema here") != std::string::npos);
    }
    CHECK(failing.releases == 1);

    // This library's form with an explicit schema, renamed write_with_schema.
    std::string uri2 = g_dir + "/write2.lance";
    ArrowSchema schema;
    tu_schema(16, &schema);
    tu_stream(&g_data, 0, 1000, 500, &stream);
    LanceWriteParams params{};
    params.max_rows_per_file = 500;
    lance::Dataset ds2 = lance::Dataset::write_with_schema(uri2, &schema, &stream, LANCE_WRITE_CREATE, &params);
    schema.release(&schema);
    CHECK(ds2.fragment_count() == 2 && ds2.count_rows() == 1000);

    // open(uri, storage options, version): upstream's order.
    CHECK(lance::Dataset::open(uri).version() == 3);
    CHECK(lance::Dataset::open(uri, {}, 2).count_rows() == 2100);
    CHECK(lance::Dataset::open(uri, {}, 1).count_rows() == 2000);
    CHECK(code_of([&] { lance::Dataset::open(uri, {}, 99); }) == LANCE_ERR_NOT_FOUND);
    CHECK(code_of([&] { lance::Dataset::open(g_dir + "/nonexistent.lance"); }) == LANCE_ERR_NOT_FOUND);

    // Compaction with upstream's options struct: eight small fragments become one.
    tu_stream(&g_data, 1000, 1000, 500, &stream);
    lance::WriteParams wp;
    wp.max_rows_per_file = 250;
    lance::Dataset grown = lance::Dataset::write(uri2, &stream, lance::WriteMode::Append, wp);
    CHECK(grown.fragment_count() == 6);
    LanceCompactionMetrics m = grown.compact_files();
    CHECK(m.fragments_removed == 6 && m.fragments_added == 1);
    CHECK(grown.fragment_count() == 1 && grown.count_rows() == 2000);
    uint64_t version = grown.version();
    m = grown.compact_files(nullptr);
    CHECK(m.fragments_removed == 0 && m.fragments_added == 0 && grown.version() == version);
}

static void test_index_and_search() {
    std::string uri = g_dir + "/search.lance";
    lance::Dataset ds = write_all(uri);

    // Moves transfer ownership; the moved-from handle is empty.
    lance::Dataset moved = std::move(ds);
    CHECK(ds.c_handle() == nullptr);
    CHECK(moved.count_rows() == 2000);

    LanceVectorIndexParams p{};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 4;
    moved.create_vector_index("vec", p, "v");
    CHECK(moved.index_count() == 1);
    CHECK(moved.index_segment_count("v") == 1);
    auto segments = moved.index_segments("v");
    CHECK(segments.size() == 1);
    CHECK(moved.list_indices_json().find("\"name\":\"v\"") != std::string::npos);
    const char* c_json = lance_dataset_index_list_json(moved.c_handle());
    CHECK(c_json != nullptr && moved.list_indices_json() == c_json);
    lance_free_string(c_json);
    CHECK(code_of([&] { moved.create_vector_index("vec", p, "v"); }) == LANCE_ERR_INDEX);
    moved.create_vector_index("vec", p, "v", true);
    CHECK(moved.index_count() == 1 && moved.version() == 3);
    segments = moved.index_segments("v");

    std::vector<float> query(g_data.vectors + 16 * 77, g_data.vectors + 16 * 78);
    std::vector<int64_t> truth = brute_force(query.data(), 10);
    {
        // This library's overload: a query vector.
        auto scanner = moved.scan({"id"});
        scanner.nearest("vec", query, 10).nprobes(4).index_segments(segments);
        CHECK(scan_ids(scanner) == truth);
    }
    {
        // Upstream's forms: the public constructor over lance_scanner_new(),
        // a float pointer, packed segment bytes.
        const char* columns[] = {"id", nullptr};
        lance::Scanner scanner(lance_scanner_new(moved.c_handle(), columns, nullptr));
        scanner.nearest("vec", query.data(), query.size(), 10).nprobes(4).index_segments(segments.front().data(), 1);
        CHECK(scan_ids(scanner) == truth);
    }
    {
        auto scanner = moved.scan({"id"});
        scanner.nearest("vec", static_cast<const void*>(query.data()), 16, LANCE_DTYPE_FLOAT32, 10)
            .nprobes(4)
            .refine_factor(2)
            .use_index(false);
        CHECK(scan_ids(scanner) == truth);
    }

    {
        // Probe bounds, approximation and parallelism through the wrapper:
        // every partition of the IVF_FLAT index gives the exact answer.
        auto scanner = moved.scan({"id"});
        scanner.nearest("vec", query, 10)
            .maximum_nprobes(4)
            .minimum_nprobes(4)
            .approx_mode(LANCE_APPROX_MODE_ACCURATE)
            .query_parallelism(2)
            .index_segments(segments);
        CHECK(scan_ids(scanner) == truth);
        CHECK(code_of([&] { scanner.minimum_nprobes(0); }) == LANCE_ERR_INVALID_ARGUMENT);
        CHECK(code_of([&] { scanner.nprobes(0); }) == LANCE_ERR_INVALID_ARGUMENT);
    }
    {
        // Upstream main's members.  Two queries in one scan: each gets its
        // exact top 5, query by query, named by query_index.
        std::vector<float> queries(query);
        queries.insert(queries.end(), g_data.vectors + 16 * 1500, g_data.vectors + 16 * 1501);
        auto scanner = moved.scan({"id"});
        scanner.nearest_batch("vec", queries.data(), 16, 2, 5).nprobes(4);
        std::vector<int64_t> ids(10), expected = brute_force(query.data(), 5), second = brute_force(&queries[16], 5);
        expected.insert(expected.end(), second.begin(), second.end());
        std::vector<int32_t> query_index(10);
        int64_t n_ids = 0, n_index = 0;
        while (auto batch = scanner.next()) {
            ArrowArray a;
            ArrowSchema s;
            batch->to_arrow(&a, &s);
            CHECK(tu_append_column(&a, &s, "id", ids.data(), sizeof(int64_t), 10, &n_ids) == 0);
            CHECK(tu_append_column(&a, &s, "query_index", query_index.data(), sizeof(int32_t), 10, &n_index) == 0);
            a.release(&a);
            s.release(&s);
        }
        CHECK(n_ids == 10 && n_index == 10 && ids == expected);
        CHECK(query_index == std::vector<int32_t>({0, 0, 0, 0, 0, 1, 1, 1, 1, 1}));
        // Below half the distance of the second nearest row: only the query
        // row itself (distance 0) is left.
        float second_nearest = 0;
        for (int j = 0; j < 16; j++) {
            float d = query[j] - g_data.vectors[16 * truth[1] + j];
            second_nearest += d * d;
        }
        auto ranged = moved.scan({"id"});
        ranged.nearest("vec", query, 10).nprobes(4).distance_range(std::nullopt, second_nearest / 2);
        CHECK(truth[0] == 77 && second_nearest > 0);
        CHECK(scan_ids(ranged) == std::vector<int64_t>({77}));
        CHECK(code_of([&] { moved.scan().distance_range(2.0f, 1.0f); }) == LANCE_ERR_INVALID_ARGUMENT);
        // Prewarming loads the index; a name no index has is not found.
        moved.prewarm_index("v");
        CHECK(code_of([&] { moved.prewarm_index("missing"); }) == LANCE_ERR_NOT_FOUND);
    }
    moved.create_scalar_index("id", LANCE_SCALAR_BTREE, "id_idx");
    CHECK(moved.index_count() == 2);
    {
        auto scanner = moved.scan({"id"}, "id >= 100 AND id < 110");
        std::vector<int64_t> expected;
        for (int64_t i = 100; i < 110; i++) expected.push_back(i);
        CHECK(scan_ids(scanner) == expected);
    }
    {
        // Tuning, an additional filter and the statistics callback.
        int calls = 0;
        auto scanner = moved.scan({"id"}, "id >= 100");
        scanner.additional_sql_filter("id < 110")
            .batch_size(3)
            .strict_batch_size()
            .batch_readahead(2)
            .fragment_readahead(1)
            .target_parallelism(2)
            .io_buffer_size(1 << 20)
            .scan_in_order()
            .use_scalar_index(false)
            .use_stats(false)
            .with_row_address(false)
            .include_deleted_rows(false)
            .statistics_callback([](void* ctx, const LanceScanStatistics*) { ++*static_cast<int*>(ctx); }, &calls);
        std::vector<int64_t> expected;
        for (int64_t i = 100; i < 110; i++) expected.push_back(i);
        CHECK(scan_ids(scanner) == expected);
        CHECK(calls == 1);
        CHECK(code_of([&] { scanner.batch_size_bytes(1); }) == LANCE_ERR_INVALID_ARGUMENT); /* scanning began */
        auto substrait = moved.scan();
        CHECK(code_of([&] {
                  substrait.substrait_filter(std::vector<uint8_t>{1, 2, 3});
              }) == LANCE_ERR_INVALID_ARGUMENT);
    }
    {
        auto all = moved.scan();
        CHECK(tu_count_scan(all.c_handle()) == 2000);
        auto two = moved.scan();
        two.fragment_ids({1, 3}).with_row_id();
        CHECK(tu_count_scan(two.c_handle()) == 500);
        auto limited = moved.scan({"id"});
        limited.limit(5).offset(10).batch_size(2);
        CHECK(scan_ids(limited) == std::vector<int64_t>({10, 11, 12, 13, 14}));
    }

    // Errors become exceptions with the right code.
    CHECK(code_of([&] { moved.scan({"no_such"}); }) != LANCE_OK);
    CHECK(code_of([&] { moved.drop_index("missing"); }) == LANCE_ERR_NOT_FOUND);
    CHECK(code_of([&] { moved.index_segments("missing"); }) == LANCE_ERR_NOT_FOUND);
    CHECK(code_of([&] { moved.index_segment_count("missing"); }) == LANCE_ERR_NOT_FOUND);
    CHECK(code_of([&] { moved.scan({"id"}).limit(-5); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { moved.scan().nearest("vec", query.data(), 15, 10); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { lance::Scanner(nullptr).limit(1); }) == LANCE_ERR_INVALID_ARGUMENT);
    moved.drop_index("v");
    CHECK(moved.index_count() == 1);
    CHECK(lance::Dataset::open(uri).version() == 5);
}

static void test_errors_and_handles() {
    // check_error() turns this thread's last C error into an exception.
    LanceDataset* missing = lance_dataset_open((g_dir + "/nothing.lance").c_str(), nullptr, 0);
    CHECK(missing == nullptr);
    try {
        lance::check_error();
        CHECK(false);
    } catch (const lance::Error& e) {
        CHECK(e.code == LANCE_ERR_NOT_FOUND);
    }
    CHECK(std::string(lance_version()) == LANCE_C_VERSION_STRING);
    std::string uri = g_dir + "/handles.lance";
    LanceDataset* raw = tu_write(uri.c_str(), &g_data, 0, 500, LANCE_WRITE_CREATE, 250);
    CHECK(raw != nullptr);
    lance_dataset_close(raw);
    lance::check_error();  // the last call succeeded: nothing to throw

    lance::Error made(LANCE_ERR_IO, "by hand");
    CHECK(made.code == LANCE_ERR_IO && std::string(made.what()) == "by hand");
    made.code = LANCE_ERR_PANIC;
    CHECK(made.code == 9);

    lance::Handle<LanceDataset, lance_dataset_close> handle(lance_dataset_open(uri.c_str(), nullptr, 0));
    CHECK(static_cast<bool>(handle) && lance_dataset_count_rows(handle.get()) == 500);
    lance::Handle<LanceDataset, lance_dataset_close> other = std::move(handle);
    CHECK(!handle && other);
    LanceDataset* released = other.release();
    CHECK(!other && released != nullptr);
    lance_dataset_close(released);
    lance::Handle<LanceDataset, lance_dataset_close> empty;
    CHECK(!empty && empty.get() == nullptr);

    // The library has started (it wrote above): a process budget is refused.
    LanceProcessBudget budget = {2, 2, nullptr};
    try {
        lance::set_process_budget(budget);
        CHECK(false);
    } catch (const lance::Error& e) {
        CHECK(e.code == LANCE_ERR_NOT_SUPPORTED);
        CHECK(std::string(e.what()).find("budget") != std::string::npos);
    }
}

// Full-text search and the async scan through the wrapper: the rows equal
// what the data says (tag of row i is "t<i % 7>") and the blocking scan.
static void test_fts_and_async() {
    auto ds = first_700_rows("fts.lance");
    ds.create_scalar_index("tag", LANCE_SCALAR_INVERTED, "tag_fts");
    std::vector<int64_t> want;
    for (int64_t i = 0; i < 700; i++)
        if (i % 7 == 3) want.push_back(i);

    auto ctx = ds.prepare_fts_match_query("tag", "t3");
    auto by_context = ds.scan({"id"});
    by_context.fts_query_context(ctx).fts_index_segments(ds.index_segments("tag_fts"));
    auto ids = scan_ids(by_context);
    std::sort(ids.begin(), ids.end());
    CHECK(ids == want);
    auto by_search = ds.scan({"id"});
    by_search.full_text_search("t3", {"tag"});
    ids = scan_ids(by_search);
    std::sort(ids.begin(), ids.end());
    CHECK(ids == want);
    CHECK(code_of([&] { ds.prepare_fts_match_query("tag", "t3", lance::FtsMatchOperator::And, 1); }) ==
          LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { ds.prepare_fts_phrase_query("tag", "t3", -1, lance::FtsCoverageMode::IndexOnly); }) ==
          LANCE_ERR_INVALID_ARGUMENT);

    // scan_async: the stream's rows are the blocking scan's.
    struct Result {
        std::mutex mu;
        std::condition_variable cv;
        int calls = 0;
        int32_t status = 1;
        ArrowArrayStream* stream = nullptr;
    } result;
    auto scanner = ds.scan({"id"}, "id < 300");
    scanner.scan_async(
        [](void* ctx, int32_t status, void* stream) {
            auto* r = static_cast<Result*>(ctx);
            std::lock_guard<std::mutex> lock(r->mu);
            r->calls++;
            r->status = status;
            r->stream = static_cast<ArrowArrayStream*>(stream);
            r->cv.notify_all();
        },
        &result);
    {
        std::unique_lock<std::mutex> lock(result.mu);
        result.cv.wait(lock, [&] { return result.calls > 0; });
    }
    CHECK(result.status == 0 && result.stream != nullptr);
    std::vector<int64_t> streamed;
    if (result.stream) {
        for (;;) {
            ArrowArray a;
            CHECK(result.stream->get_next(result.stream, &a) == 0);
            if (!a.release) break;
            const int64_t* values = static_cast<const int64_t*>(a.children[0]->buffers[1]);
            for (int64_t i = 0; i < a.children[0]->length; i++) streamed.push_back(values[a.children[0]->offset + i]);
            a.release(&a);
        }
        lance::scanner_async_stream_free(result.stream);
    }
    auto blocking = ds.scan({"id"}, "id < 300");
    CHECK(streamed == scan_ids(blocking));
    CHECK(streamed.size() == 300);
    CHECK(code_of([&] { scanner.scan_async(nullptr, nullptr); }) == LANCE_ERR_INVALID_ARGUMENT);
}

// A MINHASHLSH index and its near-duplicate search through the wrapper:
// every row of tag "t3" has the same single shingle, so the rows found are
// rows of that tag, each at distance 0.
static void test_minhash() {
    auto ds = first_700_rows("minhash.lance");
    ds.create_scalar_index("tag", LANCE_SCALAR_MINHASHLSH, "tag_minhash", "{\"num_hashes\": 64, \"num_bands\": 16}");
    auto scanner = ds.scan({"id"});
    scanner.limit(5).minhash_search("tag", "t3");
    auto ids = scan_ids(scanner);
    CHECK(ids.size() == 5);
    for (int64_t id : ids) CHECK(id % 7 == 3);
    auto unlimited = ds.scan({"id"});
    CHECK(code_of([&] { unlimited.minhash_search("tag", "t3"); }) == LANCE_ERR_INVALID_ARGUMENT);
    auto unnamed = ds.scan({"id"});
    unnamed.limit(5);
    CHECK(code_of([&] { unnamed.minhash_search("", "t3"); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { ds.create_scalar_index("tag", LANCE_SCALAR_MINHASHLSH, "bad", "{\"num_bands\": \"4\"}"); }) ==
          LANCE_ERR_INVALID_ARGUMENT);
}

int main() {
    g_data = tu_make_data(2000, 16, 8, 0.5f, 5);
    char* dir = tu_temp_dir("cpp");
    g_dir = dir;
    RUN(test_write_and_open);
    RUN(test_index_and_search);
    RUN(test_errors_and_handles);
    RUN(test_fts_and_async);
    RUN(test_minhash);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&g_data);
    return tu_finish("test_wrapper");
}
