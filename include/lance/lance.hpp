// lance.hpp: header-only C++17 wrappers over lance.h.
//
// Handles are move-only RAII owners; every failing call throws lance::Error,
// which carries the library's error code (the public member `code`) and
// message.  The C handle of an object is reachable through c_handle() for
// calls the wrappers lack.
//
// Upstream lance-c: every member of upstream lance-c's lance.hpp is here
// with upstream's name and signature (tests/conformance/upstream_hpp.cpp
// checks them), so a C++ program written for upstream's wrapper compiles
// against this one.  This library's own members (shared models, cancel
// tokens, std::function progress, commit options and results, planning,
// listings) sit beside them under names of their own, one name per concept
// (CHANGELOG.md lists the names earlier versions had).
//
// The file has two parts.  First the classes, each with its members
// declared and documented, grouped by what they hold.  Then the definitions
// of the wrappers: each under the marker `// ==== <title> ====` of the
// lance.h section that declares the C functions it calls, the sections in
// lance.h's order (scripts/check_map.py checks both).
#ifndef LANCE_HPP
#define LANCE_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lance/lance.h"

namespace lance {

// ---- errors and ownership ---------------------------------------------------

/// An error reported by the library (or by a wrapper's own argument check).
class Error : public std::runtime_error {
public:
    /// The library's code: a LanceErrorCode, this library's 1000+ codes included.
    LanceErrorCode code;

    Error(LanceErrorCode code, std::string msg) : std::runtime_error(std::move(msg)), code(code) {}
};

/// Throws this thread's last error if its code is not LANCE_OK, taking it
/// (code first, then the message, which clears it: lance.h "Errors and
/// memory").  For mixing C calls with the wrappers.
inline void check_error();

/// Sets the process's budget (lance.h "Process budget"): first thing in the
/// process, before any call that reads, writes or builds.  Throws Error.
inline void set_process_budget(const LanceProcessBudget& budget);

/// Frees a stream that lance_scanner_scan_async() handed to its callback
/// (running its release first when still set).  NULL is a no-op.
inline void scanner_async_stream_free(ArrowArrayStream* stream) noexcept;

/// Owns one library handle and frees it with `Deleter` (NULL-safe, move-only).
template <typename T, void (*Deleter)(T*)>
class Handle {
public:
    explicit Handle(T* ptr = nullptr) : ptr_(ptr) {}
    ~Handle() { reset(); }
    Handle(Handle&& other) noexcept : ptr_(other.ptr_) { other.ptr_ = nullptr; }
    Handle& operator=(Handle&& other) noexcept {
        if (this != &other) {
            reset();
            ptr_ = other.ptr_;
            other.ptr_ = nullptr;
        }
        return *this;
    }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;

    T* get() const { return ptr_; }
    /// Gives up ownership; the caller frees the handle.
    T* release() {
        T* p = ptr_;
        ptr_ = nullptr;
        return p;
    }
    explicit operator bool() const { return ptr_ != nullptr; }

private:
    void reset() noexcept {
        if (ptr_) Deleter(ptr_);
        ptr_ = nullptr;
    }
    T* ptr_;
};

using SegmentId = std::array<uint8_t, 16>;
using Bytes = std::vector<uint8_t>;
/// Storage options as key/value pairs, e.g. {{"aws_region", "us-east-1"}}.
using StorageOptions = std::vector<std::pair<std::string, std::string>>;

namespace detail {
/// Throws the last error after a call returned its error sentinel.  A
/// sentinel without a recorded code would be a library fault: it is reported
/// as LANCE_ERR_INTERNAL rather than as an Error carrying LANCE_OK.
[[noreturn]] inline void throw_last_error() {
    check_error();
    throw Error(LANCE_ERR_INTERNAL, "lance-c call failed without setting an error");
}
inline void check(int32_t rc) {
    if (rc != 0) throw_last_error();
}
/// For getters whose 0 (or -1) may be a value or an error.
template <typename T>
inline T check_value(T value) {
    check_error();
    return value;
}
/// Takes ownership of a library-produced string (NULL = error).
inline std::string take_string(const char* s) {
    if (s == nullptr) throw_last_error();
    Handle<const char, lance_free_string> owned(s);
    return std::string(s);
}
/// Copies library-produced bytes into a vector and frees them.
inline Bytes take_bytes(uint8_t* data, size_t len) {
    Handle<uint8_t, lance_free_bytes> owned(data);
    return data ? Bytes(data, data + len) : Bytes();
}
/// A string the handle owns, NULL meaning an error.
inline std::string borrowed_string(const char* s) {
    if (s == nullptr) throw_last_error();
    return std::string(s);
}
/// A string the handle owns, NULL with LANCE_OK meaning "none" (empty).
inline std::string optional_string(const char* s) {
    if (s == nullptr) {
        check_error();
        return std::string();
    }
    return std::string(s);
}
/// A NULL-terminated array of C strings borrowing from `items`.
inline std::vector<const char*> c_strings(const std::vector<std::string>& items) {
    std::vector<const char*> out;
    out.reserve(items.size() + 1);
    for (const auto& s : items) out.push_back(s.c_str());
    out.push_back(nullptr);
    return out;
}
/// Storage options flattened to lance.h's form (borrowing from `options`);
/// c_options() is NULL for none.
struct CStorageOptions {
    explicit CStorageOptions(const StorageOptions& options) : empty(options.empty()) {
        flat.reserve(options.size() * 2 + 1);
        for (const auto& kv : options) {
            flat.push_back(kv.first.c_str());
            flat.push_back(kv.second.c_str());
        }
        flat.push_back(nullptr);
    }
    const char* const* c_options() const { return empty ? nullptr : flat.data(); }
    bool empty;
    std::vector<const char*> flat;
};
/// Releases an Arrow stream at scope exit unless it was handed over.
struct StreamGuard {
    explicit StreamGuard(ArrowArrayStream* s) noexcept : stream(s) {}
    ~StreamGuard() {
        if (stream && stream->release) stream->release(stream);
    }
    void hand_over() noexcept { stream = nullptr; }
    StreamGuard(const StreamGuard&) = delete;
    StreamGuard& operator=(const StreamGuard&) = delete;
    ArrowArrayStream* stream;
};
/// Releases an Arrow schema at scope exit (if it holds one).
struct SchemaGuard {
    explicit SchemaGuard(ArrowSchema* s) noexcept : schema(s) {}
    ~SchemaGuard() {
        if (schema->release) schema->release(schema);
    }
    SchemaGuard(const SchemaGuard&) = delete;
    SchemaGuard& operator=(const SchemaGuard&) = delete;
    ArrowSchema* schema;
};
}  // namespace detail

// ---- value types --------------------------------------------------------------

/// One version of a dataset's history (Dataset::versions()).
struct VersionInfo {
    uint64_t id;
    int64_t timestamp_ms;  // commit time, ms since the Unix epoch (UTC)
};

/// Bytes one field takes on disk (Dataset::calculate_data_stats()).
struct FieldStatistics {
    uint32_t id;
    uint64_t bytes_on_disk;
};

/// A column computed from an SQL expression (Dataset::add_columns_sql()).
struct SqlColumn {
    std::string name;
    std::string expression;
};

/// One change to one column (Dataset::alter_columns(); see
/// LanceColumnAlteration): std::nullopt, UNCHANGED and nullptr leave that
/// aspect as it is.  `data_type` is borrowed for the call.
struct ColumnAlteration {
    std::string path;
    std::optional<std::string> rename;
    LanceColumnNullableMode nullable_mode = LANCE_COLUMN_NULLABLE_UNCHANGED;
    const ArrowSchema* data_type = nullptr;
};

/// How Dataset::write treats an existing dataset; the values are LanceWriteMode's.
enum class WriteMode : int32_t {
    Create = LANCE_WRITE_CREATE,
    Append = LANCE_WRITE_APPEND,
    Overwrite = LANCE_WRITE_OVERWRITE,
};

/// Which rows a prepared full-text query searches; the values are LanceFtsCoverageMode's.
enum class FtsCoverageMode : int32_t {
    Strict = LANCE_FTS_COVERAGE_STRICT,
    IndexOnly = LANCE_FTS_COVERAGE_INDEX_ONLY,
};

/// How a match query combines its terms; the values are LanceFtsMatchOperator's.
enum class FtsMatchOperator : int32_t {
    Or = LANCE_FTS_MATCH_OPERATOR_OR,
    And = LANCE_FTS_MATCH_OPERATOR_AND,
};

/// Write tuning for Dataset::write; 0 / std::nullopt = the default (see
/// LanceWriteParams).
struct WriteParams {
    uint64_t max_rows_per_file = 0;
    uint64_t max_rows_per_group = 0;
    uint64_t max_bytes_per_file = 0;
    std::optional<std::string> data_storage_version;
    bool enable_stable_row_ids = false;
};

// ---- shared models --------------------------------------------------------------

/// A shared vector model (IVF centroids, and a PQ codebook for PQ types);
/// this library's handle form, see LanceVectorModel.
class VectorModel {
public:
    explicit VectorModel(LanceVectorModel* handle) : handle_(handle) {}
    /// Parses serialized model bytes.
    static VectorModel parse(const Bytes& bytes);
    Bytes serialize() const;
    std::string fingerprint() const;
    LanceVectorModelInfo info() const;
    const LanceVectorModel* c_handle() const noexcept { return handle_.get(); }

private:
    Handle<LanceVectorModel, lance_vector_model_free> handle_;
};

/// A distributed training's coordinator (lance.h "Distributed index builds:
/// distributed training"): send request() to every worker, reduce() all of
/// their statistics, until done(); then model().
class VectorTraining {
public:
    VectorTraining(const std::string& column, const LanceVectorIndexParams& params, uint64_t seed);
    /// A coordinator rebuilt from the last request it made.
    static VectorTraining resume(const Bytes& request);
    Bytes request() const;
    /// Every worker's statistics of the current round, all at once.
    void reduce(const std::vector<Bytes>& stats);
    LanceVectorTrainingInfo info() const;
    bool done() const { return info().phase == LANCE_TRAINING_DONE; }
    VectorModel model() const;
    LanceVectorTraining* c_handle() const noexcept { return handle_.get(); }

private:
    explicit VectorTraining(LanceVectorTraining* handle) : handle_(handle) {}
    Handle<LanceVectorTraining, lance_vector_training_free> handle_;
};

class Dataset;

/// A model part as Arrow arrays (upstream's form): IVF centroids from
/// Dataset::train_ivf_model() or a PQ codebook from train_pq_model().  It
/// owns the array and the schema and releases both; pass array() and
/// schema() in LanceIndexSegmentBuildOptions (the library only borrows them).
class IndexModel {
public:
    ~IndexModel() { reset(); }
    IndexModel(IndexModel&& other) noexcept : array_(other.array_), schema_(other.schema_) {
        other.array_ = ArrowArray{};
        other.schema_ = ArrowSchema{};
    }
    IndexModel& operator=(IndexModel&& other) noexcept {
        if (this != &other) {
            reset();
            array_ = other.array_;
            schema_ = other.schema_;
            other.array_ = ArrowArray{};
            other.schema_ = ArrowSchema{};
        }
        return *this;
    }
    IndexModel(const IndexModel&) = delete;
    IndexModel& operator=(const IndexModel&) = delete;

    ArrowArray* array() noexcept { return &array_; }
    const ArrowSchema* schema() const noexcept { return &schema_; }

private:
    friend class Dataset;
    IndexModel(ArrowArray array, ArrowSchema schema) noexcept : array_(array), schema_(schema) {}
    void reset() noexcept {
        if (array_.release) array_.release(&array_);
        if (schema_.release) schema_.release(&schema_);
        array_ = ArrowArray{};
        schema_ = ArrowSchema{};
    }
    ArrowArray array_{};
    ArrowSchema schema_{};
};

// ---- segment metadata -----------------------------------------------------------

/// Parsed metadata of one index segment (upstream's class, with this
/// library's getters added).
class IndexSegmentMetadata {
public:
    explicit IndexSegmentMetadata(LanceIndexSegmentMetadata* metadata) : handle_(metadata) {}

    /// Parses the bytes IndexSegmentBuilder::execute_uncommitted() returned.
    static IndexSegmentMetadata parse(const uint8_t* bytes, size_t len);
    static IndexSegmentMetadata parse(const std::vector<uint8_t>& bytes) { return parse(bytes.data(), bytes.size()); }

    std::array<uint8_t, 16> uuid() const;
    std::string name() const;
    /// The protobuf type URL of the index details; empty when none is recorded.
    std::string index_details_type_url() const;
    uint64_t dataset_version() const;
    int32_t index_version() const;
    /// A LanceScalarIndexType or LanceVectorIndexType value; a type neither
    /// names throws LANCE_ERR_NOT_SUPPORTED (index_type_name() names it).
    int32_t index_type() const;
    std::vector<int32_t> field_ids() const;
    std::vector<uint32_t> fragment_ids() const;
    const LanceIndexSegmentMetadata* c_handle() const { return handle_.get(); }

    // This library's getters.

    /// The index type by name: "IVF_PQ", "BTree", ...
    std::string index_type_name() const;
    /// The shared model's fingerprint; empty when the segment was not built from one.
    std::string model_fingerprint() const;
    /// Creation time in ms since the Unix epoch, when recorded.
    std::optional<int64_t> created_at_ms() const;

private:
    Handle<LanceIndexSegmentMetadata, lance_index_segment_metadata_free> handle_;
};

// ---- build progress and cancellation --------------------------------------------

/// A cancel token; cancel() may be called from any thread.
class CancelToken {
public:
    CancelToken();
    void cancel() const;
    bool cancelled() const noexcept;
    const LanceIndexBuildCancelToken* c_handle() const noexcept { return handle_.get(); }

private:
    Handle<LanceIndexBuildCancelToken, lance_index_build_cancel_token_free> handle_;
};

/// One progress event; see LanceIndexBuildProgressCallback.  The strings are
/// borrowed for the call.
struct ProgressEvent {
    LanceIndexBuildProgressEvent event;
    const char* stage;
    uint64_t total;
    const char* unit;
    uint64_t completed;
};
using ProgressCallback = std::function<void(const ProgressEvent&)>;

/// Progress and cancellation of one call (LanceIndexBuildControl's C++
/// form).  `progress` runs on the calling thread; one that throws cancels
/// the call (through `cancel_token`, else a token of the call's own) and its
/// exception comes out of the call.  Both empty = none.
struct BuildControl {
    ProgressCallback progress;                  // empty = no progress
    const CancelToken* cancel_token = nullptr;  // nullptr = not cancellable
};

namespace detail {
/// Calls a ProgressCallback; an exception cannot cross the C library, so
/// the first one is kept, the work is cancelled through `stop` (the token
/// it runs with), and the exception is rethrown when the call returns.
struct ProgressTrampoline {
    ProgressCallback callback;
    std::exception_ptr error;
    const LanceIndexBuildCancelToken* stop = nullptr;
    static void call(void* user, int32_t event, const char* stage, uint64_t total, const char* unit,
                     uint64_t completed);
    /// Rethrows the kept exception once (a later call starts clean).
    void rethrow() {
        if (!error) return;
        std::exception_ptr e = std::move(error);
        error = nullptr;
        std::rethrow_exception(e);
    }
};

/// The control of one call given a BuildControl: `callback` behind a
/// trampoline, and `token` (or, without one, a token of the call's own, so
/// that a throwing callback can stop the call).
struct CallControl {
    ProgressTrampoline trampoline;
    std::unique_ptr<CancelToken> own;
    LanceIndexBuildControl control{};
    CallControl(ProgressCallback callback, const CancelToken* token) {
        trampoline.callback = std::move(callback);
        if (!token) {
            own = std::make_unique<CancelToken>();
            token = own.get();
        }
        trampoline.stop = token->c_handle();
        control = {trampoline.callback ? &ProgressTrampoline::call : nullptr, &trampoline, token->c_handle()};
    }
    CallControl(const CallControl&) = delete;
    CallControl& operator=(const CallControl&) = delete;
};

/// The C control of a BuildControl: none (NULL) when it is empty, so that
/// the call runs as without one.
struct OptionalControl {
    std::optional<CallControl> call;
    explicit OptionalControl(const BuildControl& c) {
        if (c.progress || c.cancel_token) call.emplace(c.progress, c.cancel_token);
    }
    const LanceIndexBuildControl* get() const { return call ? &call->control : nullptr; }
    void rethrow() {
        if (call) call->trampoline.rethrow();
    }
};
}  // namespace detail

// ---- segment builds ---------------------------------------------------------------

/// A single-use builder of one uncommitted index segment (upstream's class,
/// with this library's std::function progress and cancel token added).
class IndexSegmentBuilder {
public:
    explicit IndexSegmentBuilder(LanceIndexSegmentBuilder* builder) : handle_(builder) {}

    /// Builds the segment without committing; returns its metadata bytes.
    /// An exception thrown by a ProgressCallback cancels the build (through
    /// the token of set_cancel_token(), else one of the builder's own) and
    /// is rethrown here once the build has stopped and removed its files.
    std::vector<uint8_t> execute_uncommitted();

    /// A C callback (must not be NULL) and its context; see
    /// lance_index_segment_builder_set_progress_callback().  The callback
    /// must not throw.
    IndexSegmentBuilder& progress_callback(LanceIndexBuildProgressCallback callback, void* callback_ctx);

    LanceIndexSegmentBuilder* c_handle() { return handle_.get(); }

    // This library's additions.

    /// Progress events of execute_uncommitted() as a std::function, on the
    /// calling thread; the callback may throw (the exception comes out of
    /// execute_uncommitted()).
    IndexSegmentBuilder& progress_callback(ProgressCallback callback);
    /// The shared model to build with (the builder never trains); see
    /// lance_index_segment_builder_set_model().  The builder copies it.
    IndexSegmentBuilder& set_model(const VectorModel& model);
    /// The core's training options (target partition size, streaming
    /// k-means, a seed) for a build that trains; see
    /// lance_index_segment_builder_set_training_options().
    IndexSegmentBuilder& set_training_options(const LanceVectorTrainingOptions& options);
    /// The builder keeps its own reference to the token.  A ProgressCallback
    /// that throws cancels this token.
    void set_cancel_token(const CancelToken& token);

private:
    /// A ProgressCallback that throws cancels the build through a token:
    /// without one from set_cancel_token(), the builder sets one of its own.
    void own_token_for_progress();
    Handle<LanceIndexSegmentBuilder, lance_index_segment_builder_free> handle_;
    std::unique_ptr<detail::ProgressTrampoline> progress_;
    const LanceIndexBuildCancelToken* token_ = nullptr;
    std::unique_ptr<CancelToken> own_token_;
};

/// Balanced fragment groups for N workers.
class FragmentPlan {
public:
    explicit FragmentPlan(LanceFragmentPlan* handle) : handle_(handle) {}
    size_t group_count() const noexcept;
    uint64_t dataset_version() const noexcept;
    std::vector<uint32_t> group(size_t i, uint64_t* rows = nullptr) const;

private:
    Handle<LanceFragmentPlan, lance_fragment_plan_free> handle_;
};

/// Options of Dataset::commit_index_segments_v2(); see
/// LanceCommitIndexOptions.
struct CommitOptions {
    bool replace = false;
    bool allow_independent_models = false;
    std::string job_id;      // empty = none
    std::string attempt_id;  // empty = none
};

/// Options of Dataset::optimize_indices(); see LanceOptimizeIndicesOptions.
struct OptimizeIndicesOptions {
    std::vector<std::string> index_names;          // empty = every user index
    std::optional<uint32_t> num_indices_to_merge;  // std::nullopt = the core's choice; 0 = a delta segment
    bool retrain = false;
    bool enable_partition_rebalancing = false;
    uint64_t max_rows_per_task = 0;     // 0 = unbounded
    uint64_t max_rows_per_segment = 0;  // 0 = unbounded
    BuildControl control;               // empty = none
};

/// Options of Dataset::create_vector_index_v2() and
/// Dataset::create_scalar_index_v2(); see LanceIndexCreateOptions.
struct IndexCreateOptions {
    BuildControl control;
    std::optional<LanceVectorTrainingOptions> training;  // vector indices only; nullopt = the core's defaults
};

/// Options of Dataset::train_vector_model(); see LanceVectorModelTrainOptions.
struct VectorModelTrainOptions {
    BuildControl control;
    std::optional<LanceVectorTrainingOptions> training;  // nullopt = the core's defaults
};

/// Options of VectorTrainingWorker::answer(); see
/// LanceVectorTrainingAnswerOptions.
struct TrainingAnswerOptions {
    BuildControl control;
};

// ---- sessions -------------------------------------------------------------------------

/// Caches shared by the datasets opened with Dataset::open_with_session()
/// (see lance_session_new(); a limit of 0 caches nothing).
class Session {
public:
    Session(uint64_t index_cache_size_bytes, uint64_t metadata_cache_size_bytes);
    LanceSessionCacheStats cache_stats() const;
    const LanceSession* c_handle() const { return handle_.get(); }

private:
    Handle<LanceSession, lance_session_close> handle_;
};

// ---- blobs ------------------------------------------------------------------------------

/// One Blob v2 value read like a file (see LanceBlobFile): a cursor for
/// read() and read_up_to(), and read_range() that leaves it alone.
class BlobFile {
public:
    explicit BlobFile(LanceBlobFile* blob) : handle_(blob) {}

    uint64_t size() const;
    /// The bytes from the cursor to the end; the cursor moves to the end.
    std::vector<uint8_t> read();
    /// Up to `len` bytes from the cursor, which advances past them.
    std::vector<uint8_t> read_up_to(size_t len);
    /// Exactly `len` bytes at `offset`; the cursor does not move.
    std::vector<uint8_t> read_range(uint64_t offset, size_t len) const;
    void seek(uint64_t pos);
    uint64_t tell() const;

private:
    Handle<LanceBlobFile, lance_blob_file_close> handle_;
};

// ---- scan and search ----------------------------------------------------------------

/// One batch of a scan.
class Batch {
public:
    explicit Batch(LanceBatch* b) : handle_(b) {}
    /// Exports the batch; the caller releases both structs.
    void to_arrow(ArrowArray* out_array, ArrowSchema* out_schema) const;
    uint64_t num_rows() const;
    const LanceBatch* c_handle() const noexcept { return handle_.get(); }

private:
    Handle<LanceBatch, lance_batch_free> handle_;
};

/// A prepared full-text query (Dataset::prepare_fts_*); see LanceFtsQueryContext.
class FtsQueryContext {
public:
    /// Takes ownership of a context from lance_dataset_prepare_fts_*().
    explicit FtsQueryContext(LanceFtsQueryContext* context) : handle_(context) {}
    const LanceFtsQueryContext* c_handle() const { return handle_.get(); }

private:
    Handle<LanceFtsQueryContext, lance_fts_query_context_close> handle_;
};

/// A scan or k-NN search; setters return *this for chaining.
class Scanner {
public:
    /// Takes ownership of a scanner from lance_scanner_new().
    explicit Scanner(LanceScanner* s) : handle_(s) {}

    Scanner& limit(int64_t n);
    Scanner& offset(int64_t n);
    Scanner& batch_size(int64_t n);
    Scanner& with_row_id(bool enable = true);
    Scanner& fragment_ids(const uint64_t* ids, size_t len);
    Scanner& fragment_ids(const std::vector<uint64_t>& ids) { return fragment_ids(ids.data(), ids.size()); }
    /// k-NN search over a float32 query of `dim` elements.
    Scanner& nearest(const std::string& column, const float* q, size_t dim, uint32_t k) {
        return nearest(column, static_cast<const void*>(q), dim, LANCE_DTYPE_FLOAT32, k);
    }
    /// k-NN search over a query of `dim` elements of `dtype`.
    Scanner& nearest(const std::string& column, const void* q, size_t dim, LanceDataType dtype, uint32_t k);
    Scanner& nprobes(uint32_t n);
    Scanner& refine_factor(uint32_t f);
    Scanner& ef(uint32_t e);
    Scanner& metric(LanceMetricType m);
    Scanner& use_index(bool enable);
    Scanner& prefilter(bool enable);
    /// Pins the k-NN search to `len` segments, 16 packed bytes each (len 0 = no pin).
    Scanner& index_segments(const uint8_t* uuids, size_t len);
    Scanner& index_segments(const std::vector<std::array<uint8_t, 16>>& uuids) {
        return index_segments(uuids.empty() ? nullptr : uuids.front().data(), uuids.size());
    }
    // Scan tuning (lance.h, "Scan tuning"): fixed once any stream of the scanner was made.
    Scanner& batch_size_bytes(uint64_t bytes);
    Scanner& io_buffer_size(uint64_t bytes);
    Scanner& batch_readahead(size_t n);
    Scanner& fragment_readahead(size_t n);
    Scanner& target_parallelism(size_t n);
    Scanner& scan_in_order(bool in_order = true);
    Scanner& use_scalar_index(bool enable = true);
    Scanner& strict_batch_size(bool enable = true);
    Scanner& use_stats(bool enable = true);
    Scanner& with_row_address(bool enable = true);
    Scanner& include_deleted_rows(bool enable = true);
    // Filters and scan statistics.
    /// Not supported by this build: throws Error(LANCE_ERR_NOT_SUPPORTED) for well-formed bytes (lance.h).
    Scanner& substrait_filter(const uint8_t* bytes, size_t len);
    Scanner& substrait_filter(const std::vector<uint8_t>& bytes) {
        return substrait_filter(bytes.data(), bytes.size());
    }
    Scanner& additional_sql_filter(const std::string& filter);
    /// The callback must not throw (see lance.h for when and where it runs).
    Scanner& statistics_callback(LanceScanStatisticsCallback callback, void* callback_ctx);
    // k-NN probe bounds, approximation and parallelism.
    Scanner& minimum_nprobes(uint32_t n);
    Scanner& maximum_nprobes(uint32_t n);
    Scanner& approx_mode(LanceApproxMode mode);
    Scanner& query_parallelism(int32_t n);
    Scanner& blob_handling(LanceBlobHandling handling);
    /// Runs the scan as an Arrow stream; the caller releases it.
    void to_arrow_stream(ArrowArrayStream* out);
    /// Starts the scan on the library's runtime; `callback` gets the stream
    /// (free it with scanner_async_stream_free) or the error, once, on a
    /// library thread (see lance_scanner_scan_async).  A null callback throws.
    void scan_async(LanceCallback callback, void* callback_ctx) const;
    /// BM25 full-text search for `query` in `columns` (empty = every
    /// FTS-indexed column); max_fuzzy_distance 0 = exact terms.
    Scanner& full_text_search(const std::string& query, const std::vector<std::string>& columns = {},
                              uint32_t max_fuzzy_distance = 0);
    /// Runs a prepared query (the scanner keeps its own reference).
    Scanner& fts_query_context(const FtsQueryContext& context);
    /// Narrows the context's search to `len` of its segments, 16 packed bytes each (len 0 = all).
    Scanner& fts_index_segments(const uint8_t* uuids, size_t len);
    Scanner& fts_index_segments(const std::vector<std::array<uint8_t, 16>>& uuids) {
        return fts_index_segments(uuids.empty() ? nullptr : uuids.front().data(), uuids.size());
    }
    /// Near-duplicate search under `column`'s MINHASHLSH index: the limit()
    /// rows most similar to `text`, with `_distance` ascending (set the limit
    /// first; see lance_scanner_minhash_search).
    Scanner& minhash_search(const std::string& column, const std::string& text);
    /// Multivector k-NN: `num_vectors` query vectors of `dimension` elements
    /// (see lance_scanner_nearest_multivector).
    Scanner& nearest_multivector(const std::string& column, const void* q, size_t dimension, size_t num_vectors,
                                 LanceDataType dtype, uint32_t k);
    /// Up to 128 independent k-NN queries of `dimension` float32 elements
    /// each, one after another; the output gains `query_index` (see
    /// lance_scanner_nearest_batch).
    Scanner& nearest_batch(const std::string& column, const float* queries, size_t dimension, size_t num_queries,
                           uint32_t k) {
        return nearest_batch(column, static_cast<const void*>(queries), dimension, num_queries, LANCE_DTYPE_FLOAT32, k);
    }
    /// The same, over queries of `element_type`.
    Scanner& nearest_batch(const std::string& column, const void* query_data, size_t dimension, size_t num_queries,
                           LanceDataType element_type, uint32_t k);
    /// Keeps the single-vector k-NN results whose _distance lies in
    /// [lower, upper); std::nullopt = no bound on that side: distance_range(0.2f)
    /// sets a lower bound only, distance_range() clears both, as in upstream
    /// (see lance_scanner_set_distance_range).
    Scanner& distance_range(std::optional<float> lower = std::nullopt, std::optional<float> upper = std::nullopt);
    /// Scopes a filtered scan to one scalar index segment (see lance_scanner_set_scalar_index_segment).
    Scanner& scalar_index_segment(const std::array<uint8_t, 16>& uuid);
    Scanner& clear_scalar_index_segment();
    LanceScanner* c_handle() { return handle_.get(); }

    // This library's additions.

    /// k-NN search over a float32 query vector.
    Scanner& nearest(const std::string& column, const std::vector<float>& query, uint32_t k) {
        return nearest(column, query.data(), query.size(), k);
    }
    /// The next batch, or std::nullopt at the end of the scan.
    std::optional<Batch> next();

private:
    LanceScanner* get() const noexcept { return handle_.get(); }
    Handle<LanceScanner, lance_scanner_close> handle_;
};

// ---- uncommitted writes -------------------------------------------------------------

/// Writes `stream` as data files under `<uri>/data/` without committing (no
/// new version; see lance_write_fragments()).  `schema` is borrowed and
/// required; the stream must have it.  The stream is consumed on every path,
/// a throw included.
inline void write_fragments(const std::string& uri, const ArrowSchema* schema, ArrowArrayStream* stream,
                            const std::vector<std::pair<std::string, std::string>>& storage_opts = {});

// ---- datasets -------------------------------------------------------------------------

/// An open dataset (one snapshot; see lance.h).
class Dataset {
public:
    /// Opens `uri` at `version` (0 = the latest).
    static Dataset open(const std::string& uri,
                        const std::vector<std::pair<std::string, std::string>>& storage_opts = {},
                        uint64_t version = 0);

    /// Opens `uri` at `version` (0 = the latest) with the caches of `session`.
    static Dataset open_with_session(const Session& session, const std::string& uri,
                                     const std::vector<std::pair<std::string, std::string>>& storage_opts = {},
                                     uint64_t version = 0);

    /// Writes `stream` to `uri` with the stream's own schema; returns the
    /// dataset at the new version.  The stream is consumed on every path, a
    /// throw included; a NULL stream, or one whose get_schema is missing or
    /// fails, is LANCE_ERR_INVALID_ARGUMENT.
    static Dataset write(const std::string& uri, ArrowArrayStream* stream, WriteMode mode,
                         const std::vector<std::pair<std::string, std::string>>& storage_opts = {}) {
        return write(uri, stream, mode, WriteParams{}, storage_opts);
    }
    static Dataset write(const std::string& uri, ArrowArrayStream* stream, WriteMode mode, const WriteParams& params,
                         const std::vector<std::pair<std::string, std::string>>& storage_opts = {});

    /// A write whose schema is given (borrowed); the stream must match it.
    /// `stream` is consumed.
    static Dataset write_with_schema(const std::string& uri, const ArrowSchema* schema, ArrowArrayStream* stream,
                                     LanceWriteMode mode, const LanceWriteParams* params = nullptr,
                                     const StorageOptions& storage_opts = {});

    uint64_t count_rows() const;
    uint64_t version() const;
    uint64_t latest_version() const;
    void schema(ArrowSchema* out) const;
    uint64_t fragment_count() const;

    std::vector<uint64_t> fragment_ids() const;

    /// Deletes the rows matching an SQL predicate; returns how many.
    uint64_t delete_rows(const std::string& predicate);

    /// Compacts small fragments; nullptr = the defaults.
    LanceCompactionMetrics compact_files(const LanceCompactionOptions* options = nullptr);

    /// The dataset's version history, ordered by id (every manifest still in
    /// storage, whatever version this handle holds).
    std::vector<VersionInfo> versions() const;

    /// Bytes on disk per field of this version, nested fields included,
    /// ordered by field id (reads every data file's metadata).
    std::vector<FieldStatistics> calculate_data_stats() const;

    /// Makes `version` the latest by committing a new version (the latest + 1)
    /// with its contents, even when it already is the latest; returns a
    /// dataset at the new version.  This handle keeps its version.
    Dataset restore(uint64_t version) const;

    /// Sets each `updates[i].first` column to the SQL expression
    /// `updates[i].second` on the rows matching `predicate` ("" = every row);
    /// returns how many rows were updated.
    uint64_t update(const std::string& predicate, const std::vector<std::pair<std::string, std::string>>& updates);

    /// Merges `source` into the dataset by the key columns `on_columns`
    /// (see lance_dataset_merge_insert(); nullptr params = find-or-create).
    /// The stream is consumed on every path, a throw included.
    LanceMergeInsertResult merge_insert(const std::vector<std::string>& on_columns, ArrowArrayStream* source,
                                        const LanceMergeInsertParams* params = nullptr);
    /// merge_insert() as an upsert: matched rows are replaced by the source's,
    /// new rows inserted, other rows kept.
    LanceMergeInsertResult upsert(const std::vector<std::string>& on_columns, ArrowArrayStream* source) {
        LanceMergeInsertParams params{};
        params.when_matched = LANCE_MERGE_WHEN_MATCHED_UPDATE_ALL;
        params.when_not_matched = LANCE_MERGE_WHEN_NOT_MATCHED_INSERT_ALL;
        params.when_not_matched_by_source = LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_KEEP;
        return merge_insert(on_columns, source, &params);
    }

    // Schema evolution: each call commits and moves this handle to the new version.

    /// Removes columns ("parent.child" for a nested field); metadata only.
    void drop_columns(const std::vector<std::string>& columns);
    /// Renames columns, changes their nullability or casts them.
    void alter_columns(const std::vector<ColumnAlteration>& alterations);
    /// Adds columns computed from SQL expressions; `batch_size` 0 = Lance's default.
    void add_columns_sql(const std::vector<SqlColumn>& columns, uint64_t batch_size = 0);
    /// Adds all-NULL columns, the fields of struct schema `schema` (borrowed).
    void add_columns_nulls(const ArrowSchema* schema);
    /// Adds the columns of `stream`, row for row in scan order; the stream
    /// is consumed (a NULL stream throws LANCE_ERR_INVALID_ARGUMENT).
    void add_columns_stream(ArrowArrayStream* stream, uint64_t batch_size = 0);

    /// Rows at 0-based positions `indices` (in that order, repeats included)
    /// with `columns` (empty = all) into `out`, which the caller releases.
    void take(const uint64_t* indices, size_t num_indices, const std::vector<std::string>& columns,
              ArrowArrayStream* out) const;
    void take(const uint64_t* indices, size_t num_indices, ArrowArrayStream* out) const;
    /// Rows by `_rowid` (deleted or unknown ids are skipped) with `columns`
    /// (empty = all) into `out`, which the caller releases.
    void take_rows(const uint64_t* row_ids, size_t num_row_ids, const std::vector<std::string>& columns,
                   ArrowArrayStream* out) const;
    void take_rows(const uint64_t* row_ids, size_t num_row_ids, ArrowArrayStream* out) const;

    /// A scanner over all columns, without a filter.
    Scanner scan() const { return scan_checked(nullptr, nullptr); }

    /// Prepares a full-text match query on `column` (see lance_dataset_prepare_fts_match_query).
    FtsQueryContext prepare_fts_match_query(const std::string& column, const std::string& query,
                                            FtsMatchOperator match_operator = FtsMatchOperator::Or,
                                            uint32_t max_fuzzy_distance = 0,
                                            FtsCoverageMode coverage_mode = FtsCoverageMode::Strict) const;
    /// Prepares a full-text phrase query on `column` (see lance_dataset_prepare_fts_phrase_query).
    FtsQueryContext prepare_fts_phrase_query(const std::string& column, const std::string& query, int32_t slop = 0,
                                             FtsCoverageMode coverage_mode = FtsCoverageMode::Strict) const;
    [[deprecated("use prepare_fts_match_query")]] FtsQueryContext prepare_fts_query(
        const std::string& column, const std::string& query, uint32_t max_fuzzy_distance = 0,
        FtsCoverageMode coverage_mode = FtsCoverageMode::Strict) const;

    void create_vector_index(const std::string& column, const LanceVectorIndexParams& params,
                             const std::string& name = "", bool replace = false);
    /// create_vector_index() with options: progress, a cancel token, the
    /// core's training options; see lance_dataset_create_vector_index_v2().
    void create_vector_index_v2(const std::string& column, const LanceVectorIndexParams& params,
                                const std::string& name, bool replace, const IndexCreateOptions& options);
    /// create_scalar_index() with options (no training options); see
    /// lance_dataset_create_scalar_index_v2().
    void create_scalar_index_v2(const std::string& column, LanceScalarIndexType index_type, const std::string& name,
                                const std::string& params_json, bool replace, const IndexCreateOptions& options);
    [[deprecated("use create_vector_index_v2(); removed in lance-c 0.6")]] void create_vector_index_with_options(
        const std::string& column, const LanceVectorIndexParams& params, const LanceVectorTrainingOptions& options,
        const std::string& name = "", bool replace = false, ProgressCallback callback = nullptr,
        const CancelToken* token = nullptr);
    /// The IVF partition count a build uses when num_partitions is 0; see
    /// lance_dataset_recommended_num_partitions().
    uint32_t recommended_num_partitions(LanceVectorIndexType index_type, uint32_t target_partition_size = 0,
                                        const std::vector<uint32_t>& fragments = {}) const;
    void create_scalar_index(const std::string& column, LanceScalarIndexType index_type, const std::string& name = "",
                             const std::string& params_json = "", bool replace = false);
    void drop_index(const std::string& name);
    uint64_t index_count() const;
    /// The indices as JSON; see lance_dataset_index_list_json().
    std::string list_indices_json() const;
    uint64_t index_segment_count(const std::string& index_name) const;
    /// Loads every segment of the named index into the session's index
    /// cache (see lance_dataset_prewarm_index).
    void prewarm_index(const std::string& index_name) const;
    /// The segment UUIDs of a logical index.
    std::vector<std::array<uint8_t, 16>> index_segments(const std::string& index_name) const;

    /// Segment builders.  The vector one passes the params as
    /// LanceVectorIndexSegmentParams; `options` nullptr = the defaults.  A
    /// shared model goes in the options (Arrow arrays) or through
    /// IndexSegmentBuilder::set_model().
    IndexSegmentBuilder new_scalar_index_segment_builder(const std::string& column, LanceScalarIndexType index_type,
                                                         const std::string& index_name = "",
                                                         const std::string& params_json = "",
                                                         const LanceIndexSegmentBuildOptions* options = nullptr) const;
    IndexSegmentBuilder new_vector_index_segment_builder(const std::string& column,
                                                         const LanceVectorIndexParams& params,
                                                         const std::string& index_name = "",
                                                         const LanceIndexSegmentBuildOptions* options = nullptr) const;

    /// Upstream's trainers: IVF centroids, FixedSizeList<float32>[dim] with
    /// one row per partition, on `fragment_ids` (empty = all).
    IndexModel train_ivf_model(const std::string& column, uint32_t num_partitions, LanceMetricType metric,
                               const std::vector<uint32_t>& fragment_ids = {}) const;
    /// A PQ codebook on the residuals of `ivf_centroids` (borrowed), in
    /// upstream's shape: FixedSizeList<float32>[dim / num_sub_vectors], with
    /// num_sub_vectors * 2^num_bits rows.
    IndexModel train_pq_model(const std::string& column, uint32_t num_sub_vectors, uint32_t num_bits,
                              LanceMetricType metric, IndexModel& ivf_centroids,
                              const std::vector<uint32_t>& fragment_ids = {}) const;

    /// Upstream's commit (lance_dataset_commit_index_segments()): replacement
    /// is coverage-driven, independently trained segments are accepted, and
    /// every problem with the set is LANCE_ERR_INVALID_ARGUMENT.
    void commit_index_segments(const std::string& index_name, const std::string& column,
                               const std::vector<std::vector<uint8_t>>& segment_metadata);

    LanceDataset* c_handle() const { return handle_.get(); }

    // ---- this library's additions ----

    /// Row counts per fragment, in the order of fragment_ids().
    std::vector<uint64_t> fragment_row_counts() const;

    /// A scanner projecting `columns` (empty = all) with an SQL filter (empty = none).
    Scanner scan(const std::vector<std::string>& columns, const std::string& filter = "") const {
        auto c_columns = detail::c_strings(columns);
        return scan_checked(columns.empty() ? nullptr : c_columns.data(), filter.empty() ? nullptr : filter.c_str());
    }

    /// Every segment of every index, extended view; see lance_dataset_index_segments_json().
    std::string index_segments_json() const;
    /// How far an index covers this version; see lance_dataset_index_coverage_json().
    std::string index_coverage_json(const std::string& index_name) const;
    /// The metadata bytes of one committed segment (its UUID as text, as the
    /// listings give it), for merge_index_segments(); see
    /// lance_dataset_index_segment_metadata().
    Bytes index_segment_metadata(const std::string& index_name, const std::string& segment_uuid) const;
    /// The maintenance plan of one index as JSON (options NULL = the
    /// defaults); see lance_dataset_plan_index_maintenance().
    std::string plan_index_maintenance(const std::string& index_name,
                                       const LanceIndexMaintenanceOptions* options = nullptr) const;

    /// The shared model of a committed vector index, read back from its
    /// segments; see lance_dataset_read_vector_model().
    VectorModel read_vector_model(const std::string& index_name) const;

    /// Trains a shared model for `params` on the given fragments (empty =
    /// all), with progress, a cancel token and the core's training options;
    /// see lance_vector_model_train() (num_partitions 0 is derived).
    VectorModel train_vector_model(const std::string& column, const LanceVectorIndexParams& params,
                                   const std::vector<uint32_t>& sample_fragments = {},
                                   const VectorModelTrainOptions& options = {}) const;
    [[deprecated("use train_vector_model() with VectorModelTrainOptions; removed in lance-c 0.6")]] VectorModel
    train_vector_model(const std::string& column, const LanceVectorIndexParams& params,
                       const std::vector<uint32_t>& sample_fragments, ProgressCallback callback,
                       const CancelToken* token = nullptr) const;
    [[deprecated("use train_vector_model() with VectorModelTrainOptions; removed in lance-c 0.6")]] VectorModel
    train_vector_model_with_options(const std::string& column, const LanceVectorIndexParams& params,
                                    const LanceVectorTrainingOptions& options,
                                    const std::vector<uint32_t>& sample_fragments = {},
                                    ProgressCallback callback = nullptr, const CancelToken* token = nullptr) const;

    /// The commit with options; returns the version holding the segments and
    /// whether they were already committed (an idempotent retry); see
    /// lance_dataset_commit_index_segments_v2().
    LanceCommitIndexResult commit_index_segments_v2(const std::string& index_name, const std::string& column,
                                                    const std::vector<Bytes>& segments, const CommitOptions& options);
    [[deprecated("use commit_index_segments_v2(); removed in lance-c 0.6")]] LanceCommitIndexResult
    commit_index_segments_with_options(const std::string& index_name, const std::string& column,
                                       const std::vector<Bytes>& segments, const CommitOptions& options);

    /// Merges uncommitted segments into one, without committing
    /// (lance_dataset_merge_index_segments()); returns the merged segment's
    /// metadata, committed like any segment's.
    Bytes merge_index_segments(const std::vector<Bytes>& segments) const;

    /// Brings the indices up to date (lance_dataset_optimize_indices()): the
    /// handle moves to the version the call committed, if it committed one.
    /// A progress callback in options.control that throws cancels the
    /// optimize and its exception comes out of this call; the optimize may
    /// have committed by then (the handle's version says).
    void optimize_indices(const OptimizeIndicesOptions& options = {});
    [[deprecated("use optimize_indices() with options.control; removed in lance-c 0.6")]] void optimize_indices(
        const OptimizeIndicesOptions& options, ProgressCallback callback, const CancelToken* token = nullptr);

    /// Splits the fragments into `groups` ranges of consecutive fragments
    /// with balanced rows.
    FragmentPlan plan_fragment_groups(size_t groups) const;

    /// The values of blob column `column` at `row_ids`: std::nullopt for a
    /// null value.  No ids give an empty result without a library call.
    std::vector<std::optional<BlobFile>> take_blobs(const uint64_t* row_ids, size_t num_row_ids,
                                                    const std::string& column) const {
        return take_blob_files(lance_dataset_take_blobs, row_ids, num_row_ids, column);
    }
    /// take_blobs() by 0-based row position.
    std::vector<std::optional<BlobFile>> take_blobs_by_indices(const uint64_t* indices, size_t num_indices,
                                                               const std::string& column) const {
        return take_blob_files(lance_dataset_take_blobs_by_indices, indices, num_indices, column);
    }

    /// Lance's cleanup; see lance_dataset_cleanup_old_versions() for delete_unverified.
    LanceCleanupStats cleanup_old_versions(uint64_t older_than_seconds, bool delete_unverified = false);

private:
    explicit Dataset(LanceDataset* handle) : handle_(handle) {}
    LanceDataset* get() const noexcept { return handle_.get(); }
    Scanner scan_checked(const char* const* columns, const char* filter) const;
    using TakeBlobsFn = int32_t (*)(const LanceDataset*, const uint64_t*, size_t, const char*, LanceBlobFile**);
    std::vector<std::optional<BlobFile>> take_blob_files(TakeBlobsFn take, const uint64_t* rows, size_t count,
                                                         const std::string& column) const {
        std::vector<std::optional<BlobFile>> out;
        if (count == 0) return out;
        // Allocated before the call, so nothing can throw once it has produced handles.
        out.resize(count);
        std::vector<LanceBlobFile*> raw(count, nullptr);
        detail::check(take(get(), rows, count, column.c_str(), raw.data()));
        for (size_t i = 0; i < count; i++) {
            if (raw[i] != nullptr) out[i].emplace(raw[i]);
        }
        return out;
    }
    static FtsQueryContext fts_context(LanceFtsQueryContext* context) {
        if (context == nullptr) detail::throw_last_error();
        return FtsQueryContext(context);
    }
    static IndexSegmentBuilder checked_builder(LanceIndexSegmentBuilder* builder) {
        if (builder == nullptr) detail::throw_last_error();
        return IndexSegmentBuilder(builder);
    }
    /// The pointer and length arrays of a segment set, borrowing its bytes.
    struct SegmentPointers {
        explicit SegmentPointers(const std::vector<Bytes>& segments) {
            bytes.reserve(segments.size());
            lens.reserve(segments.size());
            for (const auto& s : segments) {
                bytes.push_back(s.data());
                lens.push_back(s.size());
            }
        }
        std::vector<const uint8_t*> bytes;
        std::vector<size_t> lens;
    };
    /// LanceOptimizeIndicesOptions over OptimizeIndicesOptions, borrowing its names.
    struct COptimizeOptions {
        explicit COptimizeOptions(const OptimizeIndicesOptions& o) {
            for (const auto& name : o.index_names) names.push_back(name.c_str());
            options.index_names = names.empty() ? nullptr : names.data();
            options.index_name_count = names.size();
            options.has_num_indices_to_merge = o.num_indices_to_merge.has_value();
            options.num_indices_to_merge = o.num_indices_to_merge.value_or(0);
            options.retrain = o.retrain;
            options.enable_partition_rebalancing = o.enable_partition_rebalancing;
            options.max_rows_per_task = o.max_rows_per_task;
            options.max_rows_per_segment = o.max_rows_per_segment;
        }
        std::vector<const char*> names;
        LanceOptimizeIndicesOptions options{};
    };
    Handle<LanceDataset, lance_dataset_close> handle_;
};

/// A distributed training's worker over some fragments of a dataset: keep it
/// for the whole training (it holds its sample between rounds).
class VectorTrainingWorker {
public:
    /// `fragments` empty = all of them.
    VectorTrainingWorker(const Dataset& dataset, const std::vector<uint32_t>& fragments);
    /// This worker's statistics for a request, with progress and a cancel
    /// token in `options`; see lance_vector_training_worker_answer().  A
    /// callback that throws cancels the round and its exception comes out of
    /// this call.
    Bytes answer(const Bytes& request, const TrainingAnswerOptions& options = {});
    [[deprecated("use answer(); removed in lance-c 0.6")]] Bytes run(const Bytes& request);
    [[deprecated("use answer(); removed in lance-c 0.6")]] Bytes run(const Bytes& request, ProgressCallback callback,
                                                                     const CancelToken* token = nullptr);
    LanceVectorTrainingWorker* c_handle() const noexcept { return handle_.get(); }

private:
    Handle<LanceVectorTrainingWorker, lance_vector_training_worker_free> handle_;
};

// ---- the definitions, by lance.h section ----------------------------------------------

// ==== Errors and memory ====

inline void check_error() {
    LanceErrorCode code = lance_last_error_code();
    if (code == LANCE_OK) return;
    const char* message = lance_last_error_message();
    std::string text = message ? message : "lance-c reported an error without a message";
    lance_free_string(message);
    throw Error(code, std::move(text));
}

// ==== Process budget ====

inline void set_process_budget(const LanceProcessBudget& budget) { detail::check(lance_process_budget_set(&budget)); }

// ==== Datasets ====

inline Dataset Dataset::open(const std::string& uri,
                             const std::vector<std::pair<std::string, std::string>>& storage_opts, uint64_t version) {
    detail::CStorageOptions opts(storage_opts);
    LanceDataset* handle = lance_dataset_open(uri.c_str(), opts.c_options(), version);
    if (handle == nullptr) detail::throw_last_error();
    return Dataset(handle);
}

inline uint64_t Dataset::version() const { return detail::check_value(lance_dataset_version(get())); }

inline uint64_t Dataset::latest_version() const { return detail::check_value(lance_dataset_latest_version(get())); }

inline uint64_t Dataset::count_rows() const { return detail::check_value(lance_dataset_count_rows(get())); }

inline void Dataset::schema(ArrowSchema* out) const { detail::check(lance_dataset_schema(get(), out)); }

inline uint64_t Dataset::fragment_count() const { return detail::check_value(lance_dataset_fragment_count(get())); }

inline std::vector<uint64_t> Dataset::fragment_ids() const {
    // Another thread may commit through this handle between the two
    // calls: ask again until the buffer holds the snapshot's ids.
    std::vector<uint64_t> ids;
    while (true) {
        size_t count = 0;
        int32_t rc = lance_dataset_fragment_ids_bounded(get(), ids.empty() ? nullptr : ids.data(), ids.size(), &count);
        if (count > ids.size()) {
            ids.resize(count);
            continue;
        }
        detail::check(rc);
        ids.resize(count);
        return ids;
    }
}

inline std::vector<uint64_t> Dataset::fragment_row_counts() const {
    std::vector<uint64_t> rows(fragment_count());
    if (!rows.empty()) detail::check(lance_dataset_fragment_row_counts(get(), rows.data(), rows.size()));
    return rows;
}

inline uint64_t Dataset::delete_rows(const std::string& predicate) {
    uint64_t n = 0;
    detail::check(lance_dataset_delete(get(), predicate.c_str(), &n));
    return n;
}

inline uint64_t Dataset::update(const std::string& predicate,
                                const std::vector<std::pair<std::string, std::string>>& updates) {
    std::vector<const char*> columns;
    std::vector<const char*> values;
    columns.reserve(updates.size());
    values.reserve(updates.size());
    for (const auto& u : updates) {
        columns.push_back(u.first.c_str());
        values.push_back(u.second.c_str());
    }
    uint64_t updated = 0;
    detail::check(lance_dataset_update(get(), predicate.empty() ? nullptr : predicate.c_str(), columns.data(),
                                       values.data(), updates.size(), &updated));
    return updated;
}

inline LanceCompactionMetrics Dataset::compact_files(const LanceCompactionOptions* options) {
    LanceCompactionMetrics m{};
    detail::check(lance_dataset_compact_files(get(), options, &m));
    return m;
}

inline LanceCleanupStats Dataset::cleanup_old_versions(uint64_t older_than_seconds, bool delete_unverified) {
    LanceCleanupStats s{};
    detail::check(lance_dataset_cleanup_old_versions(get(), older_than_seconds, delete_unverified, &s));
    return s;
}

// ==== Versions, restore and statistics ====

inline std::vector<VersionInfo> Dataset::versions() const {
    Handle<LanceVersions, lance_versions_close> history(lance_dataset_versions(get()));
    if (!history) detail::throw_last_error();
    const auto count = static_cast<size_t>(detail::check_value(lance_versions_count(history.get())));
    std::vector<VersionInfo> out;
    out.reserve(count);
    for (size_t i = 0; i < count; i++) {
        uint64_t id = lance_versions_id_at(history.get(), i);
        if (id == 0) detail::throw_last_error();
        // 0 ms is a valid (if unlikely) time: the code tells.
        int64_t ms = detail::check_value(lance_versions_timestamp_ms_at(history.get(), i));
        out.push_back(VersionInfo{id, ms});
    }
    return out;
}

inline Dataset Dataset::restore(uint64_t version) const {
    LanceDataset* restored = lance_dataset_restore(get(), version);
    if (restored == nullptr) detail::throw_last_error();
    return Dataset(restored);
}

inline std::vector<FieldStatistics> Dataset::calculate_data_stats() const {
    Handle<LanceDataStatistics, lance_data_statistics_close> stats(lance_dataset_calculate_data_stats(get()));
    if (!stats) detail::throw_last_error();
    const auto count = static_cast<size_t>(detail::check_value(lance_data_statistics_count(stats.get())));
    std::vector<FieldStatistics> out;
    out.reserve(count);
    for (size_t i = 0; i < count; i++) {
        // 0 is a valid field id and a valid size: the code tells.
        uint32_t id = detail::check_value(lance_data_statistics_field_id_at(stats.get(), i));
        uint64_t bytes = detail::check_value(lance_data_statistics_bytes_on_disk_at(stats.get(), i));
        out.push_back(FieldStatistics{id, bytes});
    }
    return out;
}

// ==== Sessions ====

inline Session::Session(uint64_t index_cache_size_bytes, uint64_t metadata_cache_size_bytes)
    : handle_(lance_session_new(index_cache_size_bytes, metadata_cache_size_bytes)) {
    if (!handle_) detail::throw_last_error();
}

inline LanceSessionCacheStats Session::cache_stats() const {
    LanceSessionCacheStats stats{};
    detail::check(lance_session_get_cache_stats(handle_.get(), &stats));
    return stats;
}

inline Dataset Dataset::open_with_session(const Session& session, const std::string& uri,
                                          const std::vector<std::pair<std::string, std::string>>& storage_opts,
                                          uint64_t version) {
    detail::CStorageOptions opts(storage_opts);
    LanceDataset* handle = lance_dataset_open_with_session(uri.c_str(), opts.c_options(), version, session.c_handle());
    if (handle == nullptr) detail::throw_last_error();
    return Dataset(handle);
}

// ==== Write ====

inline Dataset Dataset::write(const std::string& uri, ArrowArrayStream* stream, WriteMode mode,
                              const WriteParams& params,
                              const std::vector<std::pair<std::string, std::string>>& storage_opts) {
    if (stream == nullptr) throw Error(LANCE_ERR_INVALID_ARGUMENT, "Dataset::write: stream is NULL");
    detail::StreamGuard stream_guard(stream);
    if (stream->release == nullptr || stream->get_schema == nullptr) {
        throw Error(LANCE_ERR_INVALID_ARGUMENT,
                    "Dataset::write: stream has no get_schema/release callback (already released?)");
    }
    ArrowSchema schema{};
    detail::SchemaGuard schema_guard(&schema);
    int rc = stream->get_schema(stream, &schema);
    if (rc != 0) {
        const char* why = stream->get_last_error ? stream->get_last_error(stream) : nullptr;
        throw Error(LANCE_ERR_INVALID_ARGUMENT, "Dataset::write: the stream's get_schema failed with " +
                                                    std::to_string(rc) + ": " + (why ? why : "no message"));
    }
    detail::CStorageOptions opts(storage_opts);
    LanceWriteParams c_params{};
    c_params.max_rows_per_file = params.max_rows_per_file;
    c_params.max_rows_per_group = params.max_rows_per_group;
    c_params.max_bytes_per_file = params.max_bytes_per_file;
    c_params.data_storage_version = params.data_storage_version ? params.data_storage_version->c_str() : nullptr;
    c_params.enable_stable_row_ids = params.enable_stable_row_ids;
    // From here the library owns the stream, on success and failure alike.
    stream_guard.hand_over();
    LanceDataset* out = nullptr;
    detail::check(lance_dataset_write_with_params(uri.c_str(), &schema, stream, static_cast<int32_t>(mode), &c_params,
                                                  opts.c_options(), &out));
    return Dataset(out);
}

inline Dataset Dataset::write_with_schema(const std::string& uri, const ArrowSchema* schema, ArrowArrayStream* stream,
                                          LanceWriteMode mode, const LanceWriteParams* params,
                                          const StorageOptions& storage_opts) {
    detail::CStorageOptions opts(storage_opts);
    LanceDataset* out = nullptr;
    detail::check(lance_dataset_write_with_params(uri.c_str(), schema, stream, mode, params, opts.c_options(), &out));
    return Dataset(out);
}

inline void write_fragments(const std::string& uri, const ArrowSchema* schema, ArrowArrayStream* stream,
                            const std::vector<std::pair<std::string, std::string>>& storage_opts) {
    detail::StreamGuard stream_guard(stream);
    detail::CStorageOptions opts(storage_opts);
    // From here the library owns the stream, on success and failure alike.
    stream_guard.hand_over();
    detail::check(lance_write_fragments(uri.c_str(), schema, stream, opts.c_options()));
}

// ==== Merge-insert ====

inline LanceMergeInsertResult Dataset::merge_insert(const std::vector<std::string>& on_columns,
                                                    ArrowArrayStream* source, const LanceMergeInsertParams* params) {
    detail::StreamGuard stream_guard(source);
    auto keys = detail::c_strings(on_columns);
    stream_guard.hand_over();
    LanceMergeInsertResult result{};
    detail::check(lance_dataset_merge_insert(get(), keys.data(), on_columns.size(), source, params, &result));
    return result;
}

// ==== Schema evolution ====

inline void Dataset::drop_columns(const std::vector<std::string>& columns) {
    auto names = detail::c_strings(columns);
    detail::check(lance_dataset_drop_columns(get(), names.data(), columns.size()));
}

inline void Dataset::alter_columns(const std::vector<ColumnAlteration>& alterations) {
    std::vector<LanceColumnAlteration> c_alterations;
    c_alterations.reserve(alterations.size());
    for (const auto& a : alterations) {
        c_alterations.push_back(LanceColumnAlteration{a.path.c_str(), a.rename ? a.rename->c_str() : nullptr,
                                                      static_cast<int32_t>(a.nullable_mode), a.data_type});
    }
    detail::check(lance_dataset_alter_columns(get(), c_alterations.data(), c_alterations.size()));
}

inline void Dataset::add_columns_sql(const std::vector<SqlColumn>& columns, uint64_t batch_size) {
    std::vector<LanceSqlColumn> c_columns;
    c_columns.reserve(columns.size());
    for (const auto& c : columns) c_columns.push_back(LanceSqlColumn{c.name.c_str(), c.expression.c_str()});
    detail::check(lance_dataset_add_columns_sql(get(), c_columns.data(), c_columns.size(), batch_size));
}

inline void Dataset::add_columns_nulls(const ArrowSchema* schema) {
    detail::check(lance_dataset_add_columns_nulls(get(), schema));
}

inline void Dataset::add_columns_stream(ArrowArrayStream* stream, uint64_t batch_size) {
    detail::check(lance_dataset_add_columns_stream(get(), stream, batch_size));
}

// ==== Scan and search ====

inline Scanner Dataset::scan_checked(const char* const* columns, const char* filter) const {
    LanceScanner* s = lance_scanner_new(get(), columns, filter);
    if (s == nullptr) detail::throw_last_error();
    return Scanner(s);
}

inline Scanner& Scanner::limit(int64_t n) {
    detail::check(lance_scanner_set_limit(get(), n));
    return *this;
}

inline Scanner& Scanner::offset(int64_t n) {
    detail::check(lance_scanner_set_offset(get(), n));
    return *this;
}

inline Scanner& Scanner::batch_size(int64_t n) {
    detail::check(lance_scanner_set_batch_size(get(), n));
    return *this;
}

inline Scanner& Scanner::with_row_id(bool enable) {
    detail::check(lance_scanner_with_row_id(get(), enable));
    return *this;
}

inline Scanner& Scanner::fragment_ids(const uint64_t* ids, size_t len) {
    detail::check(lance_scanner_set_fragment_ids(get(), ids, len));
    return *this;
}

inline Scanner& Scanner::nearest(const std::string& column, const void* q, size_t dim, LanceDataType dtype,
                                 uint32_t k) {
    detail::check(lance_scanner_nearest(get(), column.c_str(), q, dim, dtype, k));
    return *this;
}

inline Scanner& Scanner::nearest_multivector(const std::string& column, const void* q, size_t dimension,
                                             size_t num_vectors, LanceDataType dtype, uint32_t k) {
    detail::check(lance_scanner_nearest_multivector(get(), column.c_str(), q, dimension, num_vectors, dtype, k));
    return *this;
}

inline Scanner& Scanner::nearest_batch(const std::string& column, const void* query_data, size_t dimension,
                                       size_t num_queries, LanceDataType element_type, uint32_t k) {
    detail::check(
        lance_scanner_nearest_batch(get(), column.c_str(), query_data, dimension, num_queries, element_type, k));
    return *this;
}

inline Scanner& Scanner::distance_range(std::optional<float> lower, std::optional<float> upper) {
    detail::check(lance_scanner_set_distance_range(get(), lower ? &*lower : nullptr, upper ? &*upper : nullptr));
    return *this;
}

inline Scanner& Scanner::nprobes(uint32_t n) {
    detail::check(lance_scanner_set_nprobes(get(), n));
    return *this;
}

inline Scanner& Scanner::refine_factor(uint32_t f) {
    detail::check(lance_scanner_set_refine_factor(get(), f));
    return *this;
}

inline Scanner& Scanner::ef(uint32_t e) {
    detail::check(lance_scanner_set_ef(get(), e));
    return *this;
}

inline Scanner& Scanner::metric(LanceMetricType m) {
    detail::check(lance_scanner_set_metric(get(), m));
    return *this;
}

inline Scanner& Scanner::use_index(bool enable) {
    detail::check(lance_scanner_set_use_index(get(), enable));
    return *this;
}

inline Scanner& Scanner::prefilter(bool enable) {
    detail::check(lance_scanner_set_prefilter(get(), enable));
    return *this;
}

inline Scanner& Scanner::scalar_index_segment(const std::array<uint8_t, 16>& uuid) {
    detail::check(lance_scanner_set_scalar_index_segment(get(), uuid.data()));
    return *this;
}

inline Scanner& Scanner::clear_scalar_index_segment() {
    detail::check(lance_scanner_set_scalar_index_segment(get(), nullptr));
    return *this;
}

inline Scanner& Scanner::index_segments(const uint8_t* uuids, size_t len) {
    detail::check(lance_scanner_set_index_segments(get(), uuids, len));
    return *this;
}

inline Scanner& Scanner::minimum_nprobes(uint32_t n) {
    detail::check(lance_scanner_set_minimum_nprobes(get(), n));
    return *this;
}

inline Scanner& Scanner::maximum_nprobes(uint32_t n) {
    detail::check(lance_scanner_set_maximum_nprobes(get(), n));
    return *this;
}

inline Scanner& Scanner::approx_mode(LanceApproxMode mode) {
    detail::check(lance_scanner_set_approx_mode(get(), mode));
    return *this;
}

inline Scanner& Scanner::query_parallelism(int32_t n) {
    detail::check(lance_scanner_set_query_parallelism(get(), n));
    return *this;
}

inline Scanner& Scanner::batch_size_bytes(uint64_t bytes) {
    detail::check(lance_scanner_set_batch_size_bytes(get(), bytes));
    return *this;
}

inline Scanner& Scanner::io_buffer_size(uint64_t bytes) {
    detail::check(lance_scanner_set_io_buffer_size(get(), bytes));
    return *this;
}

inline Scanner& Scanner::batch_readahead(size_t n) {
    detail::check(lance_scanner_set_batch_readahead(get(), n));
    return *this;
}

inline Scanner& Scanner::fragment_readahead(size_t n) {
    detail::check(lance_scanner_set_fragment_readahead(get(), n));
    return *this;
}

inline Scanner& Scanner::target_parallelism(size_t n) {
    detail::check(lance_scanner_set_target_parallelism(get(), n));
    return *this;
}

inline Scanner& Scanner::scan_in_order(bool in_order) {
    detail::check(lance_scanner_set_scan_in_order(get(), in_order));
    return *this;
}

inline Scanner& Scanner::use_scalar_index(bool enable) {
    detail::check(lance_scanner_set_use_scalar_index(get(), enable));
    return *this;
}

inline Scanner& Scanner::strict_batch_size(bool enable) {
    detail::check(lance_scanner_set_strict_batch_size(get(), enable));
    return *this;
}

inline Scanner& Scanner::use_stats(bool enable) {
    detail::check(lance_scanner_set_use_stats(get(), enable));
    return *this;
}

inline Scanner& Scanner::with_row_address(bool enable) {
    detail::check(lance_scanner_with_row_address(get(), enable));
    return *this;
}

inline Scanner& Scanner::include_deleted_rows(bool enable) {
    detail::check(lance_scanner_set_include_deleted_rows(get(), enable));
    return *this;
}

inline Scanner& Scanner::substrait_filter(const uint8_t* bytes, size_t len) {
    detail::check(lance_scanner_set_substrait_filter(get(), bytes, len));
    return *this;
}

inline Scanner& Scanner::additional_sql_filter(const std::string& filter) {
    detail::check(lance_scanner_additional_sql_filter(get(), filter.c_str()));
    return *this;
}

inline Scanner& Scanner::statistics_callback(LanceScanStatisticsCallback callback, void* callback_ctx) {
    detail::check(lance_scanner_set_statistics_callback(get(), callback, callback_ctx));
    return *this;
}

inline void Scanner::to_arrow_stream(ArrowArrayStream* out) {
    detail::check(lance_scanner_to_arrow_stream(get(), out));
}

inline std::optional<Batch> Scanner::next() {
    LanceBatch* out = nullptr;
    int32_t rc = lance_scanner_next(get(), &out);
    if (rc == 1) return std::nullopt;
    detail::check(rc);
    return Batch(out);
}

inline void Batch::to_arrow(ArrowArray* out_array, ArrowSchema* out_schema) const {
    detail::check(lance_batch_to_arrow(handle_.get(), out_array, out_schema));
}

inline uint64_t Batch::num_rows() const { return detail::check_value(lance_batch_num_rows(handle_.get())); }

// ==== Async scan ====

inline void Scanner::scan_async(LanceCallback callback, void* callback_ctx) const {
    if (callback == nullptr) throw Error(LANCE_ERR_INVALID_ARGUMENT, "Scanner::scan_async: callback is NULL");
    lance_scanner_scan_async(get(), callback, callback_ctx);
}

inline void scanner_async_stream_free(ArrowArrayStream* stream) noexcept { lance_scanner_async_stream_free(stream); }

// ==== Full-text search ====

inline Scanner& Scanner::full_text_search(const std::string& query, const std::vector<std::string>& columns,
                                          uint32_t max_fuzzy_distance) {
    auto c_columns = detail::c_strings(columns);
    detail::check(lance_scanner_full_text_search(get(), query.c_str(), columns.empty() ? nullptr : c_columns.data(),
                                                 max_fuzzy_distance));
    return *this;
}

inline FtsQueryContext Dataset::prepare_fts_match_query(const std::string& column, const std::string& query,
                                                        FtsMatchOperator match_operator, uint32_t max_fuzzy_distance,
                                                        FtsCoverageMode coverage_mode) const {
    return fts_context(lance_dataset_prepare_fts_match_query(get(), column.c_str(), query.c_str(),
                                                             static_cast<int32_t>(match_operator), max_fuzzy_distance,
                                                             static_cast<int32_t>(coverage_mode)));
}

inline FtsQueryContext Dataset::prepare_fts_query(const std::string& column, const std::string& query,
                                                  uint32_t max_fuzzy_distance, FtsCoverageMode coverage_mode) const {
    return fts_context(lance_dataset_prepare_fts_query(get(), column.c_str(), query.c_str(), max_fuzzy_distance,
                                                       static_cast<int32_t>(coverage_mode)));
}

inline FtsQueryContext Dataset::prepare_fts_phrase_query(const std::string& column, const std::string& query,
                                                         int32_t slop, FtsCoverageMode coverage_mode) const {
    return fts_context(lance_dataset_prepare_fts_phrase_query(get(), column.c_str(), query.c_str(), slop,
                                                              static_cast<int32_t>(coverage_mode)));
}

inline Scanner& Scanner::fts_query_context(const FtsQueryContext& context) {
    detail::check(lance_scanner_set_fts_query_context(get(), context.c_handle()));
    return *this;
}

inline Scanner& Scanner::fts_index_segments(const uint8_t* uuids, size_t len) {
    detail::check(lance_scanner_set_fts_index_segments(get(), uuids, len));
    return *this;
}

inline Scanner& Scanner::minhash_search(const std::string& column, const std::string& text) {
    detail::check(lance_scanner_minhash_search(get(), column.c_str(), text.c_str()));
    return *this;
}

// ==== Random access ====

inline void Dataset::take(const uint64_t* indices, size_t num_indices, const std::vector<std::string>& columns,
                          ArrowArrayStream* out) const {
    auto c_columns = detail::c_strings(columns);
    detail::check(lance_dataset_take(get(), indices, num_indices, columns.empty() ? nullptr : c_columns.data(), out));
}

inline void Dataset::take(const uint64_t* indices, size_t num_indices, ArrowArrayStream* out) const {
    detail::check(lance_dataset_take(get(), indices, num_indices, nullptr, out));
}

inline void Dataset::take_rows(const uint64_t* row_ids, size_t num_row_ids, const std::vector<std::string>& columns,
                               ArrowArrayStream* out) const {
    auto c_columns = detail::c_strings(columns);
    detail::check(
        lance_dataset_take_rows(get(), row_ids, num_row_ids, columns.empty() ? nullptr : c_columns.data(), out));
}

inline void Dataset::take_rows(const uint64_t* row_ids, size_t num_row_ids, ArrowArrayStream* out) const {
    detail::check(lance_dataset_take_rows(get(), row_ids, num_row_ids, nullptr, out));
}

// ==== Blobs ====

inline uint64_t BlobFile::size() const { return detail::check_value(lance_blob_file_size(handle_.get())); }

inline std::vector<uint8_t> BlobFile::read() {
    uint64_t cursor = tell();
    uint64_t total = size();
    std::vector<uint8_t> out(cursor < total ? static_cast<size_t>(total - cursor) : 0);
    detail::check(lance_blob_file_read(handle_.get(), out.empty() ? nullptr : out.data(), out.size()));
    return out;
}

inline std::vector<uint8_t> BlobFile::read_up_to(size_t len) {
    std::vector<uint8_t> out(len);
    size_t n = 0;
    detail::check(lance_blob_file_read_up_to(handle_.get(), out.empty() ? nullptr : out.data(), len, &n));
    out.resize(n);
    return out;
}

inline std::vector<uint8_t> BlobFile::read_range(uint64_t offset, size_t len) const {
    std::vector<uint8_t> out(len);
    detail::check(lance_blob_file_read_range(handle_.get(), offset, out.empty() ? nullptr : out.data(), len));
    return out;
}

inline void BlobFile::seek(uint64_t pos) { detail::check(lance_blob_file_seek(handle_.get(), pos)); }

inline uint64_t BlobFile::tell() const {
    uint64_t pos = 0;
    detail::check(lance_blob_file_tell(handle_.get(), &pos));
    return pos;
}

inline Scanner& Scanner::blob_handling(LanceBlobHandling handling) {
    detail::check(lance_scanner_set_blob_handling(get(), handling));
    return *this;
}

// ==== Indices ====

inline void Dataset::create_vector_index(const std::string& column, const LanceVectorIndexParams& params,
                                         const std::string& name, bool replace) {
    detail::check(lance_dataset_create_vector_index(get(), column.c_str(), name.empty() ? nullptr : name.c_str(),
                                                    &params, replace));
}

inline void Dataset::create_scalar_index(const std::string& column, LanceScalarIndexType index_type,
                                         const std::string& name, const std::string& params_json, bool replace) {
    detail::check(lance_dataset_create_scalar_index(get(), column.c_str(), name.empty() ? nullptr : name.c_str(),
                                                    index_type, params_json.empty() ? nullptr : params_json.c_str(),
                                                    replace));
}

inline void Dataset::create_vector_index_v2(const std::string& column, const LanceVectorIndexParams& params,
                                            const std::string& name, bool replace, const IndexCreateOptions& options) {
    detail::OptionalControl control(options.control);
    LanceIndexCreateOptions c{control.get(), options.training ? &*options.training : nullptr};
    int32_t rc = lance_dataset_create_vector_index_v2(get(), column.c_str(), name.empty() ? nullptr : name.c_str(),
                                                      &params, replace, &c);
    control.rethrow();
    detail::check(rc);
}

inline void Dataset::create_scalar_index_v2(const std::string& column, LanceScalarIndexType index_type,
                                            const std::string& name, const std::string& params_json, bool replace,
                                            const IndexCreateOptions& options) {
    detail::OptionalControl control(options.control);
    LanceIndexCreateOptions c{control.get(), options.training ? &*options.training : nullptr};
    int32_t rc =
        lance_dataset_create_scalar_index_v2(get(), column.c_str(), name.empty() ? nullptr : name.c_str(), index_type,
                                             params_json.empty() ? nullptr : params_json.c_str(), replace, &c);
    control.rethrow();
    detail::check(rc);
}

inline void Dataset::create_vector_index_with_options(const std::string& column, const LanceVectorIndexParams& params,
                                                      const LanceVectorTrainingOptions& options,
                                                      const std::string& name, bool replace, ProgressCallback callback,
                                                      const CancelToken* token) {
    create_vector_index_v2(column, params, name, replace, IndexCreateOptions{{std::move(callback), token}, options});
}

inline uint32_t Dataset::recommended_num_partitions(LanceVectorIndexType index_type, uint32_t target_partition_size,
                                                    const std::vector<uint32_t>& fragments) const {
    uint32_t out = 0;
    detail::check(lance_dataset_recommended_num_partitions(
        get(), static_cast<int32_t>(index_type), target_partition_size, fragments.empty() ? nullptr : fragments.data(),
        fragments.size(), &out));
    return out;
}

inline void Dataset::drop_index(const std::string& name) {
    detail::check(lance_dataset_drop_index(get(), name.c_str()));
}

inline uint64_t Dataset::index_count() const { return detail::check_value(lance_dataset_index_count(get())); }

inline std::string Dataset::list_indices_json() const {
    return detail::take_string(lance_dataset_index_list_json(get()));
}

inline uint64_t Dataset::index_segment_count(const std::string& index_name) const {
    return detail::check_value(lance_dataset_index_segment_count(get(), index_name.c_str()));
}

inline std::vector<std::array<uint8_t, 16>> Dataset::index_segments(const std::string& index_name) const {
    uint64_t count = index_segment_count(index_name);
    std::vector<std::array<uint8_t, 16>> ids(count);
    if (count == 0) return ids;
    uint64_t written = 0;
    detail::check(lance_dataset_index_segments(get(), index_name.c_str(), ids.front().data(), ids.size(), &written));
    ids.resize(written);
    return ids;
}

inline void Dataset::prewarm_index(const std::string& index_name) const {
    detail::check(lance_dataset_prewarm_index(get(), index_name.c_str()));
}

// ==== Distributed index builds: planning ====

inline FragmentPlan Dataset::plan_fragment_groups(size_t groups) const {
    LanceFragmentPlan* out = nullptr;
    detail::check(lance_dataset_plan_fragment_groups(get(), groups, &out));
    return FragmentPlan(out);
}

inline size_t FragmentPlan::group_count() const noexcept { return lance_fragment_plan_group_count(handle_.get()); }

inline uint64_t FragmentPlan::dataset_version() const noexcept {
    return lance_fragment_plan_dataset_version(handle_.get());
}

inline std::vector<uint32_t> FragmentPlan::group(size_t i, uint64_t* rows) const {
    const uint32_t* ids = nullptr;
    size_t n = 0;
    detail::check(lance_fragment_plan_group(handle_.get(), i, &ids, &n, rows));
    return std::vector<uint32_t>(ids, ids + n);
}

// ==== Distributed index builds: shared models (RFC E1) ====

inline IndexModel Dataset::train_ivf_model(const std::string& column, uint32_t num_partitions, LanceMetricType metric,
                                           const std::vector<uint32_t>& fragment_ids) const {
    ArrowArray array{};
    ArrowSchema schema{};
    detail::check(lance_index_train_ivf_model(get(), column.c_str(), num_partitions, static_cast<int32_t>(metric),
                                              fragment_ids.empty() ? nullptr : fragment_ids.data(), fragment_ids.size(),
                                              &array, &schema));
    return IndexModel(array, schema);
}

inline IndexModel Dataset::train_pq_model(const std::string& column, uint32_t num_sub_vectors, uint32_t num_bits,
                                          LanceMetricType metric, IndexModel& ivf_centroids,
                                          const std::vector<uint32_t>& fragment_ids) const {
    ArrowArray array{};
    ArrowSchema schema{};
    detail::check(lance_index_train_pq_model(get(), column.c_str(), num_sub_vectors, num_bits,
                                             static_cast<int32_t>(metric),
                                             fragment_ids.empty() ? nullptr : fragment_ids.data(), fragment_ids.size(),
                                             ivf_centroids.array(), ivf_centroids.schema(), &array, &schema));
    return IndexModel(array, schema);
}

inline VectorModel Dataset::train_vector_model(const std::string& column, const LanceVectorIndexParams& params,
                                               const std::vector<uint32_t>& sample_fragments,
                                               const VectorModelTrainOptions& options) const {
    detail::OptionalControl control(options.control);
    LanceVectorModelTrainOptions c{control.get(), options.training ? &*options.training : nullptr};
    LanceVectorModel* out = nullptr;
    int32_t rc = lance_vector_model_train(get(), column.c_str(), &params,
                                          sample_fragments.empty() ? nullptr : sample_fragments.data(),
                                          sample_fragments.size(), &c, &out);
    VectorModel model(out);
    control.rethrow();
    detail::check(rc);
    return model;
}

inline VectorModel Dataset::train_vector_model(const std::string& column, const LanceVectorIndexParams& params,
                                               const std::vector<uint32_t>& sample_fragments, ProgressCallback callback,
                                               const CancelToken* token) const {
    return train_vector_model(column, params, sample_fragments,
                              VectorModelTrainOptions{{std::move(callback), token}, std::nullopt});
}

inline VectorModel Dataset::train_vector_model_with_options(const std::string& column,
                                                            const LanceVectorIndexParams& params,
                                                            const LanceVectorTrainingOptions& options,
                                                            const std::vector<uint32_t>& sample_fragments,
                                                            ProgressCallback callback, const CancelToken* token) const {
    return train_vector_model(column, params, sample_fragments,
                              VectorModelTrainOptions{{std::move(callback), token}, options});
}

inline Bytes VectorModel::serialize() const {
    uint8_t* data = nullptr;
    size_t len = 0;
    detail::check(lance_vector_model_serialize(handle_.get(), &data, &len));
    return detail::take_bytes(data, len);
}

inline VectorModel VectorModel::parse(const Bytes& bytes) {
    LanceVectorModel* out = nullptr;
    detail::check(lance_vector_model_parse(bytes.data(), bytes.size(), &out));
    return VectorModel(out);
}

inline std::string VectorModel::fingerprint() const {
    return detail::take_string(lance_vector_model_fingerprint(handle_.get()));
}

inline LanceVectorModelInfo VectorModel::info() const {
    LanceVectorModelInfo out{};
    detail::check(lance_vector_model_info(handle_.get(), &out));
    return out;
}

inline VectorModel Dataset::read_vector_model(const std::string& index_name) const {
    LanceVectorModel* out = nullptr;
    detail::check(lance_dataset_read_vector_model(get(), index_name.c_str(), &out));
    return VectorModel(out);
}

// ==== Distributed index builds: distributed training ====

inline VectorTraining::VectorTraining(const std::string& column, const LanceVectorIndexParams& params, uint64_t seed) {
    LanceVectorTraining* out = nullptr;
    detail::check(lance_vector_training_new(column.c_str(), &params, seed, &out));
    handle_ = Handle<LanceVectorTraining, lance_vector_training_free>(out);
}

inline VectorTraining VectorTraining::resume(const Bytes& request) {
    LanceVectorTraining* out = nullptr;
    detail::check(lance_vector_training_resume(request.data(), request.size(), &out));
    return VectorTraining(out);
}

inline Bytes VectorTraining::request() const {
    uint8_t* data = nullptr;
    size_t len = 0;
    detail::check(lance_vector_training_request(handle_.get(), &data, &len));
    return detail::take_bytes(data, len);
}

inline void VectorTraining::reduce(const std::vector<Bytes>& stats) {
    std::vector<const uint8_t*> ptrs;
    std::vector<size_t> lens;
    for (const auto& s : stats) {
        ptrs.push_back(s.data());
        lens.push_back(s.size());
    }
    detail::check(lance_vector_training_reduce(handle_.get(), ptrs.data(), lens.data(), stats.size()));
}

inline LanceVectorTrainingInfo VectorTraining::info() const {
    LanceVectorTrainingInfo out{};
    detail::check(lance_vector_training_info(handle_.get(), &out));
    return out;
}

inline VectorModel VectorTraining::model() const {
    LanceVectorModel* out = nullptr;
    detail::check(lance_vector_training_model(handle_.get(), &out));
    return VectorModel(out);
}

inline VectorTrainingWorker::VectorTrainingWorker(const Dataset& dataset, const std::vector<uint32_t>& fragments) {
    LanceVectorTrainingWorker* out = nullptr;
    detail::check(lance_vector_training_worker_new(dataset.c_handle(), fragments.empty() ? nullptr : fragments.data(),
                                                   fragments.size(), &out));
    handle_ = Handle<LanceVectorTrainingWorker, lance_vector_training_worker_free>(out);
}

inline Bytes VectorTrainingWorker::answer(const Bytes& request, const TrainingAnswerOptions& options) {
    detail::OptionalControl control(options.control);
    LanceVectorTrainingAnswerOptions c{control.get()};
    uint8_t* data = nullptr;
    size_t len = 0;
    int32_t rc = lance_vector_training_worker_answer(handle_.get(), request.data(), request.size(), &c, &data, &len);
    Handle<uint8_t, lance_free_bytes> owned(data);
    control.rethrow();
    detail::check(rc);
    owned.release();
    return detail::take_bytes(data, len);
}

inline Bytes VectorTrainingWorker::run(const Bytes& request) { return answer(request); }

inline Bytes VectorTrainingWorker::run(const Bytes& request, ProgressCallback callback, const CancelToken* token) {
    return answer(request, TrainingAnswerOptions{{std::move(callback), token}});
}

// ==== Distributed index builds: uncommitted segments (RFC E1) ====

inline IndexSegmentBuilder Dataset::new_vector_index_segment_builder(
    const std::string& column, const LanceVectorIndexParams& params, const std::string& index_name,
    const LanceIndexSegmentBuildOptions* options) const {
    LanceVectorIndexSegmentParams c_params{static_cast<int32_t>(params.index_type),
                                           static_cast<int32_t>(params.metric),
                                           params.num_partitions,
                                           params.num_sub_vectors,
                                           params.num_bits,
                                           params.max_iterations,
                                           params.hnsw_m,
                                           params.hnsw_ef_construction,
                                           params.sample_rate};
    return checked_builder(lance_index_segment_builder_new_vector(
        get(), column.c_str(), index_name.empty() ? nullptr : index_name.c_str(), &c_params, options));
}

inline IndexSegmentBuilder Dataset::new_scalar_index_segment_builder(
    const std::string& column, LanceScalarIndexType index_type, const std::string& index_name,
    const std::string& params_json, const LanceIndexSegmentBuildOptions* options) const {
    return checked_builder(lance_index_segment_builder_new_scalar(
        get(), column.c_str(), index_name.empty() ? nullptr : index_name.c_str(), static_cast<int32_t>(index_type),
        params_json.empty() ? nullptr : params_json.c_str(), options));
}

inline IndexSegmentBuilder& IndexSegmentBuilder::set_model(const VectorModel& model) {
    detail::check(lance_index_segment_builder_set_model(handle_.get(), model.c_handle()));
    return *this;
}

inline IndexSegmentBuilder& IndexSegmentBuilder::set_training_options(const LanceVectorTrainingOptions& options) {
    detail::check(lance_index_segment_builder_set_training_options(handle_.get(), &options));
    return *this;
}

inline std::vector<uint8_t> IndexSegmentBuilder::execute_uncommitted() {
    uint8_t* data = nullptr;
    size_t len = 0;
    own_token_for_progress();
    int32_t rc = lance_index_segment_builder_execute_uncommitted(handle_.get(), &data, &len);
    // Own the bytes before anything can throw.
    Handle<uint8_t, lance_free_bytes> owned(data);
    if (progress_) progress_->rethrow();
    detail::check(rc);
    if (data == nullptr || len == 0) {
        throw Error(LANCE_ERR_INTERNAL, "execute_uncommitted succeeded but returned no metadata bytes");
    }
    return std::vector<uint8_t>(data, data + len);
}

// ==== Build progress and cancellation (RFC E3 + E4) ====

inline CancelToken::CancelToken() : handle_(lance_index_build_cancel_token_new()) {
    if (!handle_) detail::throw_last_error();
}

inline void CancelToken::cancel() const { detail::check(lance_index_build_cancel(handle_.get())); }

inline void detail::ProgressTrampoline::call(void* user, int32_t event, const char* stage, uint64_t total,
                                             const char* unit, uint64_t completed) {
    auto* self = static_cast<ProgressTrampoline*>(user);
    if (self->error) return;
    try {
        self->callback(ProgressEvent{static_cast<LanceIndexBuildProgressEvent>(event), stage, total, unit, completed});
    } catch (...) {
        self->error = std::current_exception();
        if (self->stop) lance_index_build_cancel(self->stop);
    }
}

inline bool CancelToken::cancelled() const noexcept { return lance_index_build_cancel_requested(handle_.get()); }

inline IndexSegmentBuilder& IndexSegmentBuilder::progress_callback(LanceIndexBuildProgressCallback callback,
                                                                   void* callback_ctx) {
    detail::check(lance_index_segment_builder_set_progress_callback(handle_.get(), callback, callback_ctx));
    progress_.reset();
    return *this;
}

inline IndexSegmentBuilder& IndexSegmentBuilder::progress_callback(ProgressCallback callback) {
    auto trampoline = std::make_unique<detail::ProgressTrampoline>();
    trampoline->callback = std::move(callback);
    trampoline->stop = token_;
    detail::check(lance_index_segment_builder_set_progress_callback(handle_.get(), &detail::ProgressTrampoline::call,
                                                                    trampoline.get()));
    progress_ = std::move(trampoline);
    return *this;
}

inline void IndexSegmentBuilder::set_cancel_token(const CancelToken& token) {
    detail::check(lance_index_segment_builder_set_cancel_token(handle_.get(), token.c_handle()));
    token_ = token.c_handle();
    if (progress_) progress_->stop = token_;
}

inline void IndexSegmentBuilder::own_token_for_progress() {
    if (progress_ && !progress_->stop) {
        own_token_ = std::make_unique<CancelToken>();
        detail::check(lance_index_segment_builder_set_cancel_token(handle_.get(), own_token_->c_handle()));
        progress_->stop = own_token_->c_handle();
    }
}

// ==== Distributed index builds: segment metadata (RFC E2) ====

inline IndexSegmentMetadata IndexSegmentMetadata::parse(const uint8_t* bytes, size_t len) {
    LanceIndexSegmentMetadata* out = nullptr;
    detail::check(lance_index_segment_metadata_parse(bytes, len, &out));
    return IndexSegmentMetadata(out);
}

inline std::array<uint8_t, 16> IndexSegmentMetadata::uuid() const {
    std::array<uint8_t, 16> id{};
    detail::check(lance_index_segment_metadata_uuid(handle_.get(), id.data()));
    return id;
}

inline std::string IndexSegmentMetadata::name() const {
    return detail::borrowed_string(lance_index_segment_metadata_name(handle_.get()));
}

inline int32_t IndexSegmentMetadata::index_type() const {
    int32_t t = lance_index_segment_metadata_index_type(handle_.get());
    if (t < 0) detail::throw_last_error();
    return t;
}

inline std::string IndexSegmentMetadata::index_type_name() const {
    return detail::borrowed_string(lance_index_segment_metadata_index_type_name(handle_.get()));
}

inline std::string IndexSegmentMetadata::index_details_type_url() const {
    return detail::optional_string(lance_index_segment_metadata_index_details_type_url(handle_.get()));
}

inline std::string IndexSegmentMetadata::model_fingerprint() const {
    return detail::optional_string(lance_index_segment_metadata_model_fingerprint(handle_.get()));
}

inline uint64_t IndexSegmentMetadata::dataset_version() const {
    return detail::check_value(lance_index_segment_metadata_dataset_version(handle_.get()));
}

inline int32_t IndexSegmentMetadata::index_version() const {
    int32_t v = lance_index_segment_metadata_index_version(handle_.get());
    if (v < 0) detail::throw_last_error();
    return v;
}

inline std::optional<int64_t> IndexSegmentMetadata::created_at_ms() const {
    int64_t ms = 0;
    bool present = false;
    detail::check(lance_index_segment_metadata_created_at_ms(handle_.get(), &ms, &present));
    return present ? std::optional<int64_t>(ms) : std::nullopt;
}

inline std::vector<int32_t> IndexSegmentMetadata::field_ids() const {
    size_t count = 0;
    detail::check(lance_index_segment_metadata_field_ids(handle_.get(), nullptr, 0, &count));
    std::vector<int32_t> ids(count);
    if (count) detail::check(lance_index_segment_metadata_field_ids(handle_.get(), ids.data(), ids.size(), &count));
    return ids;
}

inline std::vector<uint32_t> IndexSegmentMetadata::fragment_ids() const {
    size_t count = 0;
    detail::check(lance_index_segment_metadata_fragment_ids(handle_.get(), nullptr, 0, &count));
    std::vector<uint32_t> ids(count);
    if (count) {
        detail::check(lance_index_segment_metadata_fragment_ids(handle_.get(), ids.data(), ids.size(), &count));
    }
    return ids;
}

// ==== Distributed index builds: commit (RFC E5) ====

inline LanceCommitIndexResult Dataset::commit_index_segments_v2(const std::string& index_name,
                                                                const std::string& column,
                                                                const std::vector<Bytes>& segments,
                                                                const CommitOptions& options) {
    SegmentPointers p(segments);
    LanceCommitIndexOptions c{options.replace, options.allow_independent_models,
                              options.job_id.empty() ? nullptr : options.job_id.c_str(),
                              options.attempt_id.empty() ? nullptr : options.attempt_id.c_str()};
    LanceCommitIndexResult result{};
    detail::check(lance_dataset_commit_index_segments_v2(get(), index_name.c_str(), column.c_str(), p.bytes.data(),
                                                         p.lens.data(), segments.size(), &c, &result));
    return result;
}

inline LanceCommitIndexResult Dataset::commit_index_segments_with_options(const std::string& index_name,
                                                                          const std::string& column,
                                                                          const std::vector<Bytes>& segments,
                                                                          const CommitOptions& options) {
    return commit_index_segments_v2(index_name, column, segments, options);
}

inline void Dataset::commit_index_segments(const std::string& index_name, const std::string& column,
                                           const std::vector<std::vector<uint8_t>>& segment_metadata) {
    SegmentPointers p(segment_metadata);
    detail::check(lance_dataset_commit_index_segments(get(), index_name.c_str(), column.c_str(), p.bytes.data(),
                                                      p.lens.data(), segment_metadata.size()));
}

inline Bytes Dataset::merge_index_segments(const std::vector<Bytes>& segments) const {
    SegmentPointers p(segments);
    uint8_t* data = nullptr;
    size_t len = 0;
    detail::check(
        lance_dataset_merge_index_segments(get(), p.bytes.data(), p.lens.data(), segments.size(), &data, &len));
    return detail::take_bytes(data, len);
}

// ==== Distributed index builds: coverage and statistics (RFC E6) ====

inline std::string Dataset::index_segments_json() const {
    return detail::take_string(lance_dataset_index_segments_json(get()));
}

inline std::string Dataset::index_coverage_json(const std::string& index_name) const {
    return detail::take_string(lance_dataset_index_coverage_json(get(), index_name.c_str()));
}

inline Bytes Dataset::index_segment_metadata(const std::string& index_name, const std::string& segment_uuid) const {
    uint8_t* data = nullptr;
    size_t len = 0;
    detail::check(lance_dataset_index_segment_metadata(get(), index_name.c_str(), segment_uuid.c_str(), &data, &len));
    return detail::take_bytes(data, len);
}

// ==== Index maintenance ====

inline void Dataset::optimize_indices(const OptimizeIndicesOptions& options) {
    COptimizeOptions c(options);
    detail::OptionalControl control(options.control);
    c.options.control = control.get();
    int32_t rc = lance_dataset_optimize_indices(get(), &c.options);
    control.rethrow();
    detail::check(rc);
}

inline void Dataset::optimize_indices(const OptimizeIndicesOptions& options, ProgressCallback callback,
                                      const CancelToken* token) {
    OptimizeIndicesOptions with_control = options;
    with_control.control = {std::move(callback), token};
    optimize_indices(with_control);
}

inline std::string Dataset::plan_index_maintenance(const std::string& index_name,
                                                   const LanceIndexMaintenanceOptions* options) const {
    return detail::take_string(lance_dataset_plan_index_maintenance(get(), index_name.c_str(), options));
}

}  // namespace lance

#endif  // LANCE_HPP
