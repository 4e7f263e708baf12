// What Apache Doris's backend uses of upstream lance-c (the facts file,
// section 10), written the way Doris writes it and built the way Doris
// builds it: C++20, -Wall -Wextra -Werror, the header directory as a system
// directory, the static archive.
//
// Compiling is the first half of the test:
//   - the four handle structs are forward-declared before lance.h, and
//     lance.h's typedefs must name those very structs;
//   - this translation unit includes only lance.h, lance.hpp and standard
//     headers, and declares its own ARROW_FLAG_NULLABLE and
//     ARROW_FLAG_MAP_KEYS_SORTED after them (a header that defined either
//     name breaks the build);
//   - LanceDataCacheOptions is filled with designated initializers in
//     Doris's field order, LanceVectorIndexParams is value-initialized and
//     five fields set, and a captureless lambda reads LanceScanStatistics
//     and LanceScanMetric;
//   - a switch names error codes 0-9 (a duplicate value would not compile);
//   - the address of each of the 59 functions Doris calls is stored in a
//     pointer of upstream's exact type, so any change of a signature breaks
//     the build;
//   - lance::Dataset::write(uri, stream, lance::WriteMode::Create) is called.
//
// Running is the second half: the calls behave as Doris relies on them to
// (the error channel above all: the code first, then the message, and
// taking the message clears the error), on a dataset this program writes.
// The test helpers of tests/ are not used: they would bring other headers
// into this translation unit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

// Doris's headers hold the handles by their struct names, without lance.h.
struct LanceDataset;
struct LanceScanner;
struct LanceBatch;
struct LanceSession;

struct ReaderHandles {
    LanceSession* session = nullptr;
    LanceDataset* dataset = nullptr;
    LanceScanner* scanner = nullptr;
    LanceBatch* batch = nullptr;
};

#include <lance/lance.h>
#include <lance/lance.hpp>

// Doris's own constants, at namespace scope, next to lance.h.
constexpr int64_t ARROW_FLAG_NULLABLE = 2;
constexpr int64_t ARROW_FLAG_MAP_KEYS_SORTED = 4;

// ---- the 59 functions, with upstream's exact signatures --------------------

// Upstream's signatures as pasted, one X(...) entry a line: no clang-format here.
// clang-format off
#define DORIS_FUNCTIONS(X) \
    X(LanceErrorCode, lance_last_error_code, (void)) \
    X(const char*, lance_last_error_message, (void)) \
    X(void, lance_free_string, (const char* s)) \
    X(LanceSession*, lance_session_new, (uint64_t index_cache_size_bytes, uint64_t metadata_cache_size_bytes)) \
    X(LanceSession*, lance_session_new_with_data_cache, (uint64_t index_cache_size_bytes, uint64_t metadata_cache_size_bytes, const LanceDataCacheOptions* options)) \
    X(void, lance_session_close, (LanceSession* session)) \
    X(int32_t, lance_session_get_cache_stats, (const LanceSession* session, LanceSessionCacheStats* out_stats)) \
    X(LanceDataset*, lance_dataset_open, (const char* uri, const char* const* storage_opts, uint64_t version)) \
    X(LanceDataset*, lance_dataset_open_with_session, (const char* uri, const char* const* storage_opts, uint64_t version, const LanceSession* session)) \
    X(void, lance_dataset_close, (LanceDataset* dataset)) \
    X(uint64_t, lance_dataset_version, (const LanceDataset* dataset)) \
    X(uint64_t, lance_dataset_latest_version, (const LanceDataset* dataset)) \
    X(uint64_t, lance_dataset_fragment_count, (const LanceDataset* dataset)) \
    X(int32_t, lance_dataset_fragment_ids, (const LanceDataset* dataset, uint64_t* out_ids)) \
    X(int32_t, lance_dataset_schema, (const LanceDataset* dataset, struct ArrowSchema* out)) \
    X(int32_t, lance_dataset_take_rows, (const LanceDataset* dataset, const uint64_t* row_ids, size_t num_row_ids, const char* const* columns, struct ArrowArrayStream* out)) \
    X(LanceDataStatistics*, lance_dataset_calculate_data_stats, (const LanceDataset* dataset)) \
    X(uint64_t, lance_data_statistics_count, (const LanceDataStatistics* stats)) \
    X(uint32_t, lance_data_statistics_field_id_at, (const LanceDataStatistics* stats, size_t index)) \
    X(void, lance_data_statistics_close, (LanceDataStatistics* stats)) \
    X(int32_t, lance_dataset_create_vector_index, (LanceDataset* dataset, const char* column, const char* index_name, const LanceVectorIndexParams* params, bool replace)) \
    X(int32_t, lance_dataset_drop_index, (LanceDataset* dataset, const char* name)) \
    X(LanceFtsQueryContext*, lance_dataset_prepare_fts_match_query, (const LanceDataset* dataset, const char* column, const char* query, int32_t match_operator, uint32_t max_fuzzy_distance, int32_t coverage_mode)) \
    X(LanceFtsQueryContext*, lance_dataset_prepare_fts_phrase_query, (const LanceDataset* dataset, const char* column, const char* query, int32_t slop, int32_t coverage_mode)) \
    X(void, lance_fts_query_context_close, (LanceFtsQueryContext* context)) \
    X(int32_t, lance_dataset_get_data_cache_statistics, (const LanceDataset* dataset, LanceDataCacheStatistics* out_stats)) \
    X(int32_t, lance_dataset_prewarm_index, (const LanceDataset* dataset, const char* index_name)) \
    X(LanceScanner*, lance_scanner_new, (const LanceDataset* dataset, const char* const* columns, const char* filter)) \
    X(int32_t, lance_scanner_next, (LanceScanner* scanner, LanceBatch** out)) \
    X(void, lance_scanner_close, (LanceScanner* scanner)) \
    X(int32_t, lance_batch_to_arrow, (const LanceBatch* batch, struct ArrowArray* out_array, struct ArrowSchema* out_schema)) \
    X(void, lance_batch_free, (LanceBatch* batch)) \
    X(int32_t, lance_scanner_set_statistics_callback, (LanceScanner* scanner, LanceScanStatisticsCallback callback, void* callback_ctx)) \
    X(int32_t, lance_scanner_with_row_id, (LanceScanner* scanner, bool enable)) \
    X(int32_t, lance_scanner_set_substrait_filter, (LanceScanner* scanner, const uint8_t* bytes, size_t len)) \
    X(int32_t, lance_scanner_additional_sql_filter, (LanceScanner* scanner, const char* filter)) \
    X(int32_t, lance_scanner_set_batch_size, (LanceScanner* scanner, int64_t batch_size)) \
    X(int32_t, lance_scanner_set_io_buffer_size, (LanceScanner* scanner, uint64_t io_buffer_size_bytes)) \
    X(int32_t, lance_scanner_set_batch_readahead, (LanceScanner* scanner, size_t batch_readahead)) \
    X(int32_t, lance_scanner_set_fragment_readahead, (LanceScanner* scanner, size_t fragment_readahead)) \
    X(int32_t, lance_scanner_set_scan_in_order, (LanceScanner* scanner, bool scan_in_order)) \
    X(int32_t, lance_scanner_set_fragment_ids, (LanceScanner* scanner, const uint64_t* ids, size_t len)) \
    X(int32_t, lance_scanner_set_scalar_index_segment, (LanceScanner* scanner, const uint8_t* segment_uuid)) \
    X(int32_t, lance_scanner_set_use_scalar_index, (LanceScanner* scanner, bool use_scalar_index)) \
    X(int32_t, lance_scanner_set_limit, (LanceScanner* scanner, int64_t limit)) \
    X(int32_t, lance_scanner_set_offset, (LanceScanner* scanner, int64_t offset)) \
    X(int32_t, lance_scanner_set_index_segments, (LanceScanner* scanner, const uint8_t* segment_uuids, size_t len)) \
    X(int32_t, lance_scanner_set_prefilter, (LanceScanner* scanner, bool enable)) \
    X(int32_t, lance_scanner_nearest, (LanceScanner* scanner, const char* column, const void* query_data, size_t query_len, LanceDataType element_type, uint32_t k)) \
    X(int32_t, lance_scanner_nearest_multivector, (LanceScanner* scanner, const char* column, const void* query_data, size_t dimension, size_t num_vectors, LanceDataType element_type, uint32_t k)) \
    X(int32_t, lance_scanner_set_metric, (LanceScanner* scanner, LanceMetricType metric)) \
    X(int32_t, lance_scanner_set_distance_range, (LanceScanner* scanner, const float* lower, const float* upper)) \
    X(int32_t, lance_scanner_set_refine_factor, (LanceScanner* scanner, uint32_t f)) \
    X(int32_t, lance_scanner_set_nprobes, (LanceScanner* scanner, uint32_t nprobes)) \
    X(int32_t, lance_scanner_set_ef, (LanceScanner* scanner, uint32_t e)) \
    X(int32_t, lance_scanner_set_use_index, (LanceScanner* scanner, bool enable)) \
    X(int32_t, lance_scanner_set_query_parallelism, (LanceScanner* scanner, int32_t query_parallelism)) \
    X(int32_t, lance_scanner_set_fts_query_context, (LanceScanner* scanner, const LanceFtsQueryContext* context)) \
    X(int32_t, lance_scanner_set_fts_index_segments, (LanceScanner* scanner, const uint8_t* segment_uuids, size_t len))

// clang-format on

// C++ converts no function pointer type to another: a function whose type is
// not upstream's fails to initialize its pointer.
#define TYPED_ADDRESS(ret, name, params) constexpr ret(*const doris_uses_##name) params = &name;
DORIS_FUNCTIONS(TYPED_ADDRESS)

// The same pointers, listed, so that the count is checked and the link must
// resolve every one.
#define LISTED_ADDRESS(ret, name, params) reinterpret_cast<void (*)()>(doris_uses_##name),
static void (*const g_functions_used[])() = {DORIS_FUNCTIONS(LISTED_ADDRESS)};
static_assert(std::size(g_functions_used) == 59, "Doris calls 59 functions of upstream lance-c");

// ---- types as Doris uses them ----------------------------------------------

static_assert(LANCE_OK == 0 && LANCE_ERR_INVALID_ARGUMENT == 1 && LANCE_ERR_IO == 2 && LANCE_ERR_NOT_FOUND == 3 &&
                  LANCE_ERR_DATASET_ALREADY_EXISTS == 4 && LANCE_ERR_INDEX == 5 && LANCE_ERR_INTERNAL == 6 &&
                  LANCE_ERR_NOT_SUPPORTED == 7 && LANCE_ERR_COMMIT_CONFLICT == 8 && LANCE_ERR_PANIC == 9,
              "upstream's error codes are 0-9");

// Doris's error mapping: upstream's ten codes by name, anything else by default.
static std::string_view doris_status_of(LanceErrorCode code) {
    switch (code) {
    case LANCE_OK: return "OK";
    case LANCE_ERR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case LANCE_ERR_IO: return "IO_ERROR";
    case LANCE_ERR_NOT_FOUND: return "NOT_FOUND";
    case LANCE_ERR_DATASET_ALREADY_EXISTS: return "ALREADY_EXIST";
    case LANCE_ERR_INDEX: return "INDEX_ERROR";
    case LANCE_ERR_INTERNAL: return "INTERNAL_ERROR";
    case LANCE_ERR_NOT_SUPPORTED: return "NOT_SUPPORTED";
    case LANCE_ERR_COMMIT_CONFLICT: return "CONFLICT";
    case LANCE_ERR_PANIC: return "PANIC";
    default: return "UNKNOWN";
    }
}

// Doris's error helper: the code first, then the message (which takes the
// error), the message freed.
struct LanceFailure {
    LanceErrorCode code;
    std::string message;
};

static LanceFailure take_lance_error() {
    LanceFailure failure{lance_last_error_code(), {}};
    const char* message = lance_last_error_message();
    if (message != nullptr) failure.message = message;
    lance_free_string(message);
    return failure;
}

// What one scan reported through its statistics callback.
struct ScanReport {
    int calls = 0;
    uint64_t iops = 0, requests = 0, bytes_read = 0, index_partitions_loaded = 0, index_comparisons = 0;
    size_t metrics_len = 0;
    bool metrics_well_formed = true;
};

static const LanceScanStatisticsCallback g_on_statistics = [](void* ctx, const LanceScanStatistics* statistics) {
    ScanReport* report = static_cast<ScanReport*>(ctx);
    report->calls++;
    report->iops = statistics->iops;
    report->requests = statistics->requests;
    report->bytes_read = statistics->bytes_read;
    report->index_partitions_loaded = statistics->index_partitions_loaded;
    report->index_comparisons = statistics->index_comparisons;
    report->metrics_len = statistics->metrics_len;
    if ((statistics->metrics == nullptr) != (statistics->metrics_len == 0)) report->metrics_well_formed = false;
    for (size_t i = 0; i < statistics->metrics_len; i++) {
        const LanceScanMetric& metric = statistics->metrics[i];
        std::string_view name(metric.name, metric.name_len);
        bool known_kind = metric.kind == LANCE_SCAN_METRIC_COUNT || metric.kind == LANCE_SCAN_METRIC_TIME_NANOSECONDS;
        if (name.empty() || !known_kind) report->metrics_well_formed = false;
    }
};

// ---- checks ----------------------------------------------------------------

static int g_checks = 0;
static int g_failures = 0;

#define EXPECT(cond)                                                                                       \
    do {                                                                                                   \
        g_checks++;                                                                                        \
        if (!(cond)) {                                                                                     \
            g_failures++;                                                                                  \
            std::fprintf(stderr, "%s:%d: failed: %s (pending error code %d)\n", __FILE__, __LINE__, #cond, \
                         static_cast<int>(lance_last_error_code()));                                       \
        }                                                                                                  \
    } while (0)

// A call that failed: its sentinel, then the code, taken as Doris takes it.
#define EXPECT_FAILURE(failed, expected_code)                                                                         \
    do {                                                                                                              \
        EXPECT(failed);                                                                                               \
        LanceFailure failure_ = take_lance_error();                                                                   \
        EXPECT(failure_.code == (expected_code));                                                                     \
        EXPECT(!failure_.message.empty());                                                                            \
        if (failure_.code != (expected_code))                                                                         \
            std::fprintf(stderr, "    got code %d: %s\n", static_cast<int>(failure_.code), failure_.message.c_str()); \
    } while (0)

#define RUN(fn)                                                              \
    do {                                                                     \
        int before = g_failures;                                             \
        fn();                                                                \
        std::printf("%s %s\n", g_failures == before ? "ok  " : "FAIL", #fn); \
    } while (0)

// ---- the data: id int64 not null, vec fixed_size_list<float32>[8], doc utf8

constexpr int64_t kRows = 1000;
constexpr int64_t kBatchRows = 250;
constexpr int32_t kDim = 8;
static std::vector<float> g_vectors;  // kRows * kDim, row-major

static float next_value(uint64_t* state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<float>(z >> 40) / static_cast<float>(1 << 24) * 2.0f - 1.0f;
}

// Row i's text: "w<i % 10> common".
static std::string doc_of(int64_t row) { return "w" + std::to_string(row % 10) + " common"; }

// The schema's nodes, freed with its top-level struct.
struct SchemaNodes {
    ArrowSchema id{}, vec{}, item{}, doc{};
    ArrowSchema* columns[3] = {&id, &vec, &doc};
    ArrowSchema* vec_children[1] = {&item};
};

static void release_child_schema(ArrowSchema* schema) { schema->release = nullptr; }

static void release_schema(ArrowSchema* schema) {
    delete static_cast<SchemaNodes*>(schema->private_data);
    schema->release = nullptr;
}

static void field(ArrowSchema* schema, const char* format, const char* name, int64_t flags) {
    schema->format = format;
    schema->name = name;
    schema->flags = flags;
    schema->release = release_child_schema;
}

static void make_schema(ArrowSchema* out) {
    SchemaNodes* nodes = new SchemaNodes;
    field(&nodes->id, "l", "id", 0);
    field(&nodes->vec, "+w:8", "vec", ARROW_FLAG_NULLABLE);
    nodes->vec.n_children = 1;
    nodes->vec.children = nodes->vec_children;
    field(&nodes->item, "f", "item", ARROW_FLAG_NULLABLE);
    field(&nodes->doc, "u", "doc", ARROW_FLAG_NULLABLE);
    *out = ArrowSchema{};
    out->format = "+s";
    out->name = "";
    out->n_children = 3;
    out->children = nodes->columns;
    out->private_data = nodes;
    out->release = release_schema;
}

// The buffers of one batch, freed with the batch's top-level array.
struct BatchBuffers {
    std::vector<int64_t> ids;
    std::vector<float> values;
    std::vector<int32_t> offsets;
    std::string text;
    const void* struct_buffers[1] = {nullptr};
    const void* id_buffers[2] = {nullptr, nullptr};
    const void* vec_buffers[1] = {nullptr};
    const void* item_buffers[2] = {nullptr, nullptr};
    const void* doc_buffers[3] = {nullptr, nullptr, nullptr};
    ArrowArray id{}, vec{}, item{}, doc{};
    ArrowArray* columns[3] = {&id, &vec, &doc};
    ArrowArray* vec_children[1] = {&item};
};

static void release_child_array(ArrowArray* array) { array->release = nullptr; }

static void release_batch(ArrowArray* array) {
    delete static_cast<BatchBuffers*>(array->private_data);
    array->release = nullptr;
}

static void leaf(ArrowArray* array, int64_t length, int64_t n_buffers, const void** buffers) {
    array->length = length;
    array->n_buffers = n_buffers;
    array->buffers = buffers;
    array->release = release_child_array;
}

static void make_batch(int64_t first, int64_t rows, ArrowArray* out) {
    BatchBuffers* b = new BatchBuffers;
    b->values.assign(g_vectors.begin() + first * kDim, g_vectors.begin() + (first + rows) * kDim);
    b->offsets.push_back(0);
    for (int64_t i = 0; i < rows; i++) {
        b->ids.push_back(first + i);
        b->text += doc_of(first + i);
        b->offsets.push_back(static_cast<int32_t>(b->text.size()));
    }
    b->id_buffers[1] = b->ids.data();
    b->item_buffers[1] = b->values.data();
    b->doc_buffers[1] = b->offsets.data();
    b->doc_buffers[2] = b->text.data();
    leaf(&b->id, rows, 2, b->id_buffers);
    leaf(&b->item, rows * kDim, 2, b->item_buffers);
    leaf(&b->vec, rows, 1, b->vec_buffers);
    b->vec.n_children = 1;
    b->vec.children = b->vec_children;
    leaf(&b->doc, rows, 3, b->doc_buffers);
    *out = ArrowArray{};
    out->length = rows;
    out->n_buffers = 1;
    out->buffers = b->struct_buffers;
    out->n_children = 3;
    out->children = b->columns;
    out->private_data = b;
    out->release = release_batch;
}

// A stream of all rows in batches of kBatchRows; counts its releases.
static int g_stream_releases = 0;

static void make_stream(ArrowArrayStream* out) {
    *out = ArrowArrayStream{};
    out->get_schema = [](ArrowArrayStream*, ArrowSchema* schema) -> int {
        make_schema(schema);
        return 0;
    };
    out->get_next = [](ArrowArrayStream* stream, ArrowArray* array) -> int {
        int64_t* next_row = static_cast<int64_t*>(stream->private_data);
        if (*next_row >= kRows) {
            *array = ArrowArray{};
            return 0;
        }
        make_batch(*next_row, std::min(kBatchRows, kRows - *next_row), array);
        *next_row += kBatchRows;
        return 0;
    };
    out->get_last_error = [](ArrowArrayStream*) -> const char* { return nullptr; };
    out->release = [](ArrowArrayStream* stream) {
        delete static_cast<int64_t*>(stream->private_data);
        stream->release = nullptr;
        g_stream_releases++;
    };
    out->private_data = new int64_t(0);
}

// ---- reading results -------------------------------------------------------

// Appends the values of the fixed-width column `name` of a struct array.
template <typename T>
static bool append_column(const ArrowArray& array, const ArrowSchema& schema, std::string_view name,
                          std::vector<T>* out) {
    for (int64_t c = 0; c < schema.n_children; c++) {
        if (name != schema.children[c]->name) continue;
        const ArrowArray* column = array.children[c];
        const T* values = static_cast<const T*>(column->buffers[1]);
        out->insert(out->end(), values + column->offset, values + column->offset + column->length);
        return true;
    }
    return false;
}

// Every batch of a scanner: the `id` column, and `_distance` / `_rowid`
// when asked for.  False when a call fails or a column is missing.
static bool read_scanner(LanceScanner* scanner, std::vector<int64_t>* ids, std::vector<float>* distances = nullptr,
                         std::vector<uint64_t>* row_ids = nullptr) {
    bool ok = true;
    for (;;) {
        LanceBatch* batch = nullptr;
        int32_t rc = lance_scanner_next(scanner, &batch);
        if (rc == 1) break;
        if (rc != 0) return false;
        ArrowArray array;
        ArrowSchema schema;
        if (lance_batch_to_arrow(batch, &array, &schema) != 0) {
            lance_batch_free(batch);
            return false;
        }
        ok = append_column(array, schema, "id", ids) && ok;
        if (distances) ok = append_column(array, schema, "_distance", distances) && ok;
        if (row_ids) ok = append_column(array, schema, "_rowid", row_ids) && ok;
        array.release(&array);
        schema.release(&schema);
        lance_batch_free(batch);
    }
    return ok;
}

// ---- the checks ------------------------------------------------------------

static std::string g_dir;
static std::string g_uri;
static LanceDataset* g_ds = nullptr;

static void remote_uri_is_invalid_argument() {
    // Doris expects an http:// dataset to be refused as an invalid argument.
    LanceDataset* ds = lance_dataset_open("http://127.0.0.1:1/x", nullptr, 0);
    EXPECT(ds == nullptr);
    EXPECT(lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT);
    LanceFailure failure = take_lance_error();
    EXPECT(failure.code == LANCE_ERR_INVALID_ARGUMENT && !failure.message.empty());
    EXPECT(doris_status_of(failure.code) == "INVALID_ARGUMENT");
    lance_dataset_close(ds);
}

static void write_with_the_wrapper_and_open() {
    ArrowArrayStream stream;
    make_stream(&stream);
    lance::Dataset written = lance::Dataset::write(g_uri, &stream, lance::WriteMode::Create);
    EXPECT(g_stream_releases == 1);
    EXPECT(lance_dataset_count_rows(written.c_handle()) == static_cast<uint64_t>(kRows));

    // Creating it again fails, and still consumes the stream.
    make_stream(&stream);
    LanceErrorCode code = LANCE_OK;
    try {
        lance::Dataset::write(g_uri, &stream, lance::WriteMode::Create);
    } catch (const lance::Error& e) {
        code = e.code;
    }
    EXPECT(code == LANCE_ERR_DATASET_ALREADY_EXISTS);
    EXPECT(g_stream_releases == 2);

    g_ds = lance_dataset_open(g_uri.c_str(), nullptr, 0);
    EXPECT(g_ds != nullptr);
    if (!g_ds) return;
    EXPECT(lance_dataset_version(g_ds) == 1 && lance_dataset_latest_version(g_ds) == 1);
    uint64_t fragments = lance_dataset_fragment_count(g_ds);
    EXPECT(fragments >= 1);
    std::vector<uint64_t> fragment_ids(fragments);
    EXPECT(lance_dataset_fragment_ids(g_ds, fragment_ids.data()) == 0);

    // The schema comes back with the nullability written.
    ArrowSchema schema;
    bool have_schema = lance_dataset_schema(g_ds, &schema) == 0;
    EXPECT(have_schema);
    if (!have_schema) return;
    EXPECT(schema.n_children == 3);
    if (schema.n_children == 3) {
        EXPECT(std::string_view(schema.children[0]->name) == "id" &&
               !(schema.children[0]->flags & ARROW_FLAG_NULLABLE));
        EXPECT(std::string_view(schema.children[1]->name) == "vec" &&
               (schema.children[1]->flags & ARROW_FLAG_NULLABLE));
        EXPECT(std::string_view(schema.children[2]->name) == "doc" &&
               (schema.children[2]->flags & ARROW_FLAG_NULLABLE));
        for (int64_t c = 0; c < schema.n_children; c++)
            EXPECT(!(schema.children[c]->flags & ARROW_FLAG_MAP_KEYS_SORTED));
    }
    schema.release(&schema);
}

static void error_channel_as_doris_reads_it() {
    // A failing call: the documented code, read first (reading the code
    // leaves the error in place) ...
    EXPECT(lance_dataset_drop_index(g_ds, "no_such_index") == -1);
    EXPECT(lance_last_error_code() == LANCE_ERR_NOT_FOUND);
    EXPECT(lance_last_error_code() == LANCE_ERR_NOT_FOUND);
    // ... then the message, which takes the error.
    const char* message = lance_last_error_message();
    EXPECT(message != nullptr && std::strstr(message, "no_such_index") != nullptr);
    lance_free_string(message);
    EXPECT(lance_last_error_code() == LANCE_OK);
    EXPECT(lance_last_error_message() == nullptr);

    // A success clears a pending error too.
    EXPECT(lance_dataset_drop_index(g_ds, "no_such_index") == -1);
    EXPECT(lance_dataset_version(g_ds) == 1);
    EXPECT(lance_last_error_code() == LANCE_OK && lance_last_error_message() == nullptr);

    // Doris's mapping: the ten codes by name, this library's own by default.
    for (int code = LANCE_OK; code <= LANCE_ERR_PANIC; code++)
        EXPECT(doris_status_of(static_cast<LanceErrorCode>(code)) != "UNKNOWN");
    EXPECT(doris_status_of(LANCE_ERR_CANCELLED) == "UNKNOWN");
}

static void take_rows_and_data_statistics() {
    // Row ids from a scan, then taken back in another order.
    const char* const id_only[] = {"id", nullptr};
    LanceScanner* scanner = lance_scanner_new(g_ds, id_only, "id = 3 OR id = 7");
    EXPECT(scanner != nullptr);
    EXPECT(lance_scanner_with_row_id(scanner, true) == 0);
    std::vector<int64_t> ids;
    std::vector<uint64_t> row_ids;
    EXPECT(read_scanner(scanner, &ids, nullptr, &row_ids));
    lance_scanner_close(scanner);
    EXPECT((ids == std::vector<int64_t>{3, 7}) && row_ids.size() == 2);
    if (row_ids.size() == 2) {
        const uint64_t wanted[] = {row_ids[1], row_ids[0], row_ids[1]};
        ArrowArrayStream stream;
        bool have_stream = lance_dataset_take_rows(g_ds, wanted, 3, id_only, &stream) == 0;
        EXPECT(have_stream);
        std::vector<int64_t> taken;
        ArrowSchema schema;
        if (have_stream && stream.get_schema(&stream, &schema) == 0) {
            for (ArrowArray array; stream.get_next(&stream, &array) == 0 && array.release != nullptr;) {
                EXPECT(append_column(array, schema, "id", &taken));
                array.release(&array);
            }
            schema.release(&schema);
        }
        if (have_stream) stream.release(&stream);
        EXPECT((taken == std::vector<int64_t>{7, 3, 7}));
    }

    // One entry per field, by ascending field id: id, vec (a fixed-size
    // list of a primitive is one field for Lance) and doc.
    LanceDataStatistics* stats = lance_dataset_calculate_data_stats(g_ds);
    EXPECT(stats != nullptr);
    uint64_t count = lance_data_statistics_count(stats);
    EXPECT(count == 3);
    for (uint64_t i = 1; i < count; i++)
        EXPECT(lance_data_statistics_field_id_at(stats, i - 1) < lance_data_statistics_field_id_at(stats, i));
    EXPECT_FAILURE(lance_data_statistics_field_id_at(stats, count) == 0, LANCE_ERR_INVALID_ARGUMENT);
    lance_data_statistics_close(stats);
}

static void scan_with_doris_settings() {
    const char* const id_only[] = {"id", nullptr};
    LanceScanner* scanner = lance_scanner_new(g_ds, id_only, "id >= 100");
    EXPECT(scanner != nullptr);
    ScanReport report;
    EXPECT(lance_scanner_set_statistics_callback(scanner, g_on_statistics, &report) == 0);
    uint64_t fragments = lance_dataset_fragment_count(g_ds);
    std::vector<uint64_t> fragment_ids(fragments);
    EXPECT(lance_dataset_fragment_ids(g_ds, fragment_ids.data()) == 0);
    EXPECT(lance_scanner_set_fragment_ids(scanner, fragment_ids.data(), fragment_ids.size()) == 0);
    EXPECT(lance_scanner_set_batch_size(scanner, 64) == 0);
    EXPECT(lance_scanner_set_io_buffer_size(scanner, 32u << 20) == 0);
    EXPECT(lance_scanner_set_batch_readahead(scanner, 4) == 0);
    EXPECT(lance_scanner_set_fragment_readahead(scanner, 2) == 0);
    EXPECT(lance_scanner_set_scan_in_order(scanner, true) == 0);
    EXPECT(lance_scanner_set_use_scalar_index(scanner, true) == 0);
    EXPECT(lance_scanner_set_scalar_index_segment(scanner, nullptr) == 0);
    EXPECT(lance_scanner_set_index_segments(scanner, nullptr, 0) == 0);
    EXPECT(lance_scanner_additional_sql_filter(scanner, "id < 900") == 0);
    EXPECT(lance_scanner_set_limit(scanner, 50) == 0);
    EXPECT(lance_scanner_set_offset(scanner, 10) == 0);
    std::vector<int64_t> ids;
    EXPECT(read_scanner(scanner, &ids));
    lance_scanner_close(scanner);
    std::vector<int64_t> expected(50);
    for (int64_t i = 0; i < 50; i++) expected[i] = 110 + i;
    EXPECT(ids == expected);
    EXPECT(report.calls == 1 && report.bytes_read > 0 && report.iops > 0 && report.metrics_well_formed);

    // A bad setting is refused with its code.
    scanner = lance_scanner_new(g_ds, id_only, nullptr);
    EXPECT_FAILURE(lance_scanner_additional_sql_filter(scanner, "") == -1, LANCE_ERR_INVALID_ARGUMENT);
    EXPECT_FAILURE(lance_scanner_set_statistics_callback(scanner, nullptr, nullptr) == -1, LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(scanner);
}

static float squared_l2(const float* a, const float* b) {
    float sum = 0;
    for (int32_t d = 0; d < kDim; d++) sum += (a[d] - b[d]) * (a[d] - b[d]);
    return sum;
}

// The rows nearest to `query`, nearest first, and their distances.
static std::vector<std::pair<float, int64_t>> exact_neighbours(const float* query) {
    std::vector<std::pair<float, int64_t>> all;
    for (int64_t row = 0; row < kRows; row++) all.push_back({squared_l2(query, &g_vectors[row * kDim]), row});
    std::sort(all.begin(), all.end());
    return all;
}

static void vector_index_and_search() {
    LanceVectorIndexParams params = {};
    params.index_type = LANCE_INDEX_IVF_PQ;
    params.metric = LANCE_METRIC_L2;
    params.num_partitions = 2;
    params.num_sub_vectors = 2;
    params.num_bits = 8;
    EXPECT(lance_dataset_create_vector_index(g_ds, "vec", "vec_idx", &params, false) == 0);
    EXPECT(lance_dataset_version(g_ds) == 2);
    EXPECT(lance_dataset_prewarm_index(g_ds, "vec_idx") == 0);
    EXPECT(lance_dataset_prewarm_index(g_ds, "vec_idx") == 0);
    EXPECT_FAILURE(lance_dataset_prewarm_index(g_ds, "no_such_index") == -1, LANCE_ERR_NOT_FOUND);

    // Every partition probed and every row refined: the exact top 5.
    const float* query = &g_vectors[123 * kDim];
    std::vector<std::pair<float, int64_t>> exact = exact_neighbours(query);
    const char* const id_only[] = {"id", nullptr};
    LanceScanner* scanner = lance_scanner_new(g_ds, id_only, nullptr);
    EXPECT(lance_scanner_nearest(scanner, "vec", query, kDim, LANCE_DTYPE_FLOAT32, 5) == 0);
    EXPECT(lance_scanner_set_metric(scanner, LANCE_METRIC_L2) == 0);
    EXPECT(lance_scanner_set_nprobes(scanner, 2) == 0);
    EXPECT(lance_scanner_set_refine_factor(scanner, 200) == 0);
    EXPECT(lance_scanner_set_ef(scanner, 64) == 0);
    EXPECT(lance_scanner_set_use_index(scanner, true) == 0);
    EXPECT(lance_scanner_set_prefilter(scanner, false) == 0);
    EXPECT(lance_scanner_set_query_parallelism(scanner, -1) == 0);
    EXPECT(lance_scanner_set_query_parallelism(scanner, 0) == 0);
    EXPECT(lance_scanner_set_query_parallelism(scanner, 2) == 0);
    EXPECT_FAILURE(lance_scanner_set_query_parallelism(scanner, -2) == -1, LANCE_ERR_INVALID_ARGUMENT);
    ScanReport report;
    EXPECT(lance_scanner_set_statistics_callback(scanner, g_on_statistics, &report) == 0);
    std::vector<int64_t> ids;
    EXPECT(read_scanner(scanner, &ids));
    lance_scanner_close(scanner);
    std::vector<int64_t> top5;
    for (int i = 0; i < 5; i++) top5.push_back(exact[i].second);
    EXPECT(ids == top5);
    EXPECT(report.calls == 1 && report.metrics_well_formed);

    // A distance range: an upper bound between the 3rd and the 4th distance
    // keeps the first three (a flat search: exact distances).
    EXPECT(exact[3].first - exact[2].first > 1e-3f * exact[3].first);
    const float upper = (exact[2].first + exact[3].first) / 2;
    scanner = lance_scanner_new(g_ds, id_only, nullptr);
    EXPECT(lance_scanner_nearest(scanner, "vec", query, kDim, LANCE_DTYPE_FLOAT32, 5) == 0);
    EXPECT(lance_scanner_set_use_index(scanner, false) == 0);
    EXPECT(lance_scanner_set_distance_range(scanner, nullptr, &upper) == 0);
    ids.clear();
    std::vector<float> distances;
    EXPECT(read_scanner(scanner, &ids, &distances));
    lance_scanner_close(scanner);
    EXPECT((ids == std::vector<int64_t>{top5[0], top5[1], top5[2]}));
    for (float distance : distances) EXPECT(distance < upper);
    const float nan = std::nanf("");
    scanner = lance_scanner_new(g_ds, id_only, nullptr);
    EXPECT_FAILURE(lance_scanner_set_distance_range(scanner, &nan, nullptr) == -1, LANCE_ERR_INVALID_ARGUMENT);
    lance_scanner_close(scanner);
}

static void full_text_search() {
    EXPECT(lance_dataset_create_scalar_index(g_ds, "doc", "doc_fts", LANCE_SCALAR_INVERTED, "{\"with_position\": true}",
                                             false) == 0);
    std::vector<int64_t> w3;
    for (int64_t row = 3; row < kRows; row += 10) w3.push_back(row);

    const char* const id_only[] = {"id", nullptr};
    struct {
        bool phrase;
        const char* query;
        size_t hits;
    } cases[] = {{false, "w3", w3.size()}, {true, "w3 common", w3.size()}, {true, "common w3", 0}};
    for (const auto& c : cases) {
        LanceFtsQueryContext* context =
            c.phrase ? lance_dataset_prepare_fts_phrase_query(g_ds, "doc", c.query, 0, LANCE_FTS_COVERAGE_STRICT)
                     : lance_dataset_prepare_fts_match_query(g_ds, "doc", c.query, LANCE_FTS_MATCH_OPERATOR_OR, 0,
                                                             LANCE_FTS_COVERAGE_STRICT);
        EXPECT(context != nullptr);
        LanceScanner* scanner = lance_scanner_new(g_ds, id_only, nullptr);
        EXPECT(lance_scanner_set_fts_query_context(scanner, context) == 0);
        EXPECT(lance_scanner_set_fts_index_segments(scanner, nullptr, 0) == 0);
        lance_fts_query_context_close(context);  // the scanner keeps it
        std::vector<int64_t> ids;
        EXPECT(read_scanner(scanner, &ids));
        lance_scanner_close(scanner);
        std::sort(ids.begin(), ids.end());
        EXPECT(ids.size() == c.hits);
        if (c.hits == w3.size()) EXPECT(ids == w3);
    }
    // A column without a full-text index.
    EXPECT_FAILURE(lance_dataset_prepare_fts_match_query(g_ds, "id", "3", LANCE_FTS_MATCH_OPERATOR_OR, 0,
                                                         LANCE_FTS_COVERAGE_STRICT) == nullptr,
                   LANCE_ERR_NOT_FOUND);
}

static void session_with_data_cache() {
    const std::string cache_dir = g_dir + "/data_cache";
    const LanceDataCacheOptions options{
        .directory = cache_dir.c_str(),
        .memory_capacity_bytes = 16ull << 20,
        .disk_capacity_bytes = 64ull << 20,
        .read_block_size_bytes = 1ull << 20,
    };
    ReaderHandles reader;
    reader.session = lance_session_new_with_data_cache(64ull << 20, 16ull << 20, &options);
    EXPECT(reader.session != nullptr);

    // Doris's bad settings: a block size that is not a multiple of 4096, a
    // disk capacity without a directory.
    const LanceDataCacheOptions odd_block{
        .directory = nullptr,
        .memory_capacity_bytes = 0,
        .disk_capacity_bytes = 0,
        .read_block_size_bytes = 1000,
    };
    EXPECT_FAILURE(lance_session_new_with_data_cache(0, 0, &odd_block) == nullptr, LANCE_ERR_INVALID_ARGUMENT);
    const LanceDataCacheOptions disk_without_directory{
        .directory = nullptr,
        .memory_capacity_bytes = 0,
        .disk_capacity_bytes = 1ull << 30,
        .read_block_size_bytes = 0,
    };
    EXPECT_FAILURE(lance_session_new_with_data_cache(0, 0, &disk_without_directory) == nullptr,
                   LANCE_ERR_INVALID_ARGUMENT);
    LanceSession* defaults = lance_session_new_with_data_cache(1ull << 20, 1ull << 20, nullptr);
    EXPECT(defaults != nullptr);
    lance_session_close(defaults);

    reader.dataset = lance_dataset_open_with_session(g_uri.c_str(), nullptr, 0, reader.session);
    EXPECT(reader.dataset != nullptr);
    if (!reader.dataset) {
        lance_session_close(reader.session);
        return;
    }
    EXPECT(lance_dataset_version(reader.dataset) == lance_dataset_version(g_ds));

    // Prewarming fills the session's index cache.
    LanceSessionCacheStats before{}, after{};
    EXPECT(lance_session_get_cache_stats(reader.session, &before) == 0);
    EXPECT(lance_dataset_prewarm_index(reader.dataset, "vec_idx") == 0);
    EXPECT(lance_session_get_cache_stats(reader.session, &after) == 0);
    EXPECT(after.index_cache_entries > before.index_cache_entries);

    // The dataset outlives its session; a local dataset bypasses the data cache.
    lance_session_close(reader.session);
    reader.session = nullptr;
    reader.scanner = lance_scanner_new(reader.dataset, nullptr, "id < 10");
    EXPECT(reader.scanner != nullptr);
    int64_t rows = 0;
    while (lance_scanner_next(reader.scanner, &reader.batch) == 0) {
        ArrowArray array;
        ArrowSchema schema;
        EXPECT(lance_batch_to_arrow(reader.batch, &array, &schema) == 0);
        rows += array.length;
        array.release(&array);
        schema.release(&schema);
        lance_batch_free(reader.batch);
        reader.batch = nullptr;
    }
    EXPECT(rows == 10);
    lance_scanner_close(reader.scanner);
    LanceDataCacheStatistics cache{1, 1};
    EXPECT(lance_dataset_get_data_cache_statistics(reader.dataset, &cache) == 0);
    EXPECT(cache.bytes_read_from_cache == 0 && cache.bytes_read_from_remote == 0);
    EXPECT_FAILURE(lance_dataset_get_data_cache_statistics(nullptr, &cache) == -1, LANCE_ERR_INVALID_ARGUMENT);
    lance_dataset_close(reader.dataset);
}

static void drop_the_vector_index() {
    EXPECT(lance_dataset_drop_index(g_ds, "vec_idx") == 0);
    EXPECT_FAILURE(lance_dataset_prewarm_index(g_ds, "vec_idx") == -1, LANCE_ERR_NOT_FOUND);
    EXPECT(lance_dataset_latest_version(g_ds) == lance_dataset_version(g_ds));
}

int main() {
    for (void (*function)() : g_functions_used) EXPECT(function != nullptr);
    uint64_t seed = 23;
    for (int64_t i = 0; i < kRows * kDim; i++) g_vectors.push_back(next_value(&seed));

    std::string pattern = (std::filesystem::temp_directory_path() / "doris_probe.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
        std::perror("mkdtemp");
        return 1;
    }
    g_dir = pattern;
    g_uri = g_dir + "/table.lance";

    RUN(remote_uri_is_invalid_argument);
    RUN(write_with_the_wrapper_and_open);
    if (g_ds != nullptr) {
        RUN(error_channel_as_doris_reads_it);
        RUN(take_rows_and_data_statistics);
        RUN(scan_with_doris_settings);
        RUN(vector_index_and_search);
        RUN(full_text_search);
        RUN(session_with_data_cache);
        RUN(drop_the_vector_index);
    }
    lance_dataset_close(g_ds);
    std::filesystem::remove_all(g_dir);
    std::printf("doris_probe: %zu functions of upstream lance-c as Doris uses them; %d checks, %d failed\n",
                std::size(g_functions_used), g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}
