// lance.hpp: header-only C++17 wrappers over lance.h.
//
// Handles are move-only RAII owners; every failing call throws lance::Error,
// which carries the library's error code and message.  The C handle of any
// object is reachable through c_handle() for calls the wrappers lack.
#ifndef LANCE_HPP
#define LANCE_HPP

#include <array>
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

/// An error reported by the library.
class Error : public std::runtime_error {
public:
    Error(LanceErrorCode code, const std::string& message)
        : std::runtime_error(message), code_(code) {}
    LanceErrorCode code() const noexcept { return code_; }

    /// Builds the exception from this thread's last error.
    static Error last() {
        const char* message = lance_last_error_message();
        std::string text = message ? message : "unknown lance-c error";
        lance_free_string(message);
        return Error(lance_last_error_code(), text);
    }

private:
    LanceErrorCode code_;
};

namespace detail {
inline void check(int32_t rc) {
    if (rc != 0) throw Error::last();
}
/// For getters whose 0 may be a value or an error.
inline uint64_t check_value(uint64_t value) {
    if (value == 0 && lance_last_error_code() != LANCE_OK) throw Error::last();
    return value;
}
struct DatasetDeleter {
    void operator()(LanceDataset* p) const noexcept { lance_dataset_close(p); }
};
struct ScannerDeleter {
    void operator()(LanceScanner* p) const noexcept { lance_scanner_close(p); }
};
struct BatchDeleter {
    void operator()(LanceBatch* p) const noexcept { lance_batch_free(p); }
};
struct ModelDeleter {
    void operator()(LanceVectorModel* p) const noexcept { lance_vector_model_free(p); }
};
struct SegmentBuilderDeleter {
    void operator()(LanceIndexSegmentBuilder* p) const noexcept { lance_index_segment_builder_free(p); }
};
struct SegmentMetadataDeleter {
    void operator()(LanceIndexSegmentMetadata* p) const noexcept { lance_index_segment_metadata_free(p); }
};
struct BytesDeleter {
    void operator()(uint8_t* p) const noexcept { lance_free_bytes(p); }
};
struct CancelTokenDeleter {
    void operator()(LanceIndexBuildCancelToken* p) const noexcept { lance_index_build_cancel_token_free(p); }
};
struct PlanDeleter {
    void operator()(LanceFragmentPlan* p) const noexcept { lance_fragment_plan_free(p); }
};
struct StringDeleter {
    void operator()(const char* p) const noexcept { lance_free_string(p); }
};
/// Takes ownership of a library-produced string.
inline std::string take_string(const char* s) {
    if (s == nullptr) throw Error::last();
    std::unique_ptr<const char, StringDeleter> owned(s);
    return std::string(s);
}
/// Builds a NULL-terminated array of C strings that borrows from `items`.
inline std::vector<const char*> c_strings(const std::vector<std::string>& items) {
    std::vector<const char*> out;
    out.reserve(items.size() + 1);
    for (const auto& s : items) out.push_back(s.c_str());
    out.push_back(nullptr);
    return out;
}
}  // namespace detail

using SegmentId = std::array<uint8_t, 16>;
using Bytes = std::vector<uint8_t>;

namespace detail {
/// Copies library-produced bytes into a vector and frees them.
inline Bytes take_bytes(uint8_t* data, size_t len) {
    std::unique_ptr<uint8_t, BytesDeleter> owned(data);
    return Bytes(data, data + len);
}
}  // namespace detail

/// A shared vector model (IVF centroids, and a PQ codebook for PQ types).
class VectorModel {
public:
    /// Parses serialized model bytes.
    static VectorModel parse(const Bytes& bytes) {
        LanceVectorModel* out = nullptr;
        detail::check(lance_vector_model_parse(bytes.data(), bytes.size(), &out));
        return VectorModel(out);
    }
    Bytes serialize() const {
        uint8_t* data = nullptr;
        size_t len = 0;
        detail::check(lance_vector_model_serialize(get(), &data, &len));
        return detail::take_bytes(data, len);
    }
    std::string fingerprint() const { return detail::take_string(lance_vector_model_fingerprint(get())); }
    LanceVectorModelInfo info() const {
        LanceVectorModelInfo out{};
        detail::check(lance_vector_model_info(get(), &out));
        return out;
    }
    const LanceVectorModel* c_handle() const noexcept { return handle_.get(); }
    explicit VectorModel(LanceVectorModel* handle) : handle_(handle) {}

private:
    const LanceVectorModel* get() const noexcept { return handle_.get(); }
    std::unique_ptr<LanceVectorModel, detail::ModelDeleter> handle_;
};

/// Parsed segment metadata.
class SegmentMetadata {
public:
    static SegmentMetadata parse(const Bytes& bytes) {
        LanceIndexSegmentMetadata* out = nullptr;
        detail::check(lance_index_segment_metadata_parse(bytes.data(), bytes.size(), &out));
        return SegmentMetadata(out);
    }
    SegmentId uuid() const {
        SegmentId id{};
        detail::check(lance_index_segment_metadata_uuid(get(), id.data()));
        return id;
    }
    std::string name() const { return checked(lance_index_segment_metadata_name(get())); }
    std::string index_type() const { return checked(lance_index_segment_metadata_index_type(get())); }
    /// Empty when the segment was not built from a shared model.
    std::string model_fingerprint() const {
        const char* fp = lance_index_segment_metadata_model_fingerprint(get());
        if (fp == nullptr && lance_last_error_code() != LANCE_OK) throw Error::last();
        return fp ? fp : "";
    }
    uint64_t dataset_version() const {
        return detail::check_value(lance_index_segment_metadata_dataset_version(get()));
    }
    std::vector<uint32_t> fragment_ids() const {
        size_t count = 0;
        detail::check(lance_index_segment_metadata_fragment_ids(get(), nullptr, 0, &count));
        std::vector<uint32_t> ids(count);
        if (count) detail::check(lance_index_segment_metadata_fragment_ids(get(), ids.data(), ids.size(), &count));
        return ids;
    }

private:
    explicit SegmentMetadata(LanceIndexSegmentMetadata* handle) : handle_(handle) {}
    const LanceIndexSegmentMetadata* get() const noexcept { return handle_.get(); }
    static std::string checked(const char* s) {
        if (s == nullptr) throw Error::last();
        return s;
    }
    std::unique_ptr<LanceIndexSegmentMetadata, detail::SegmentMetadataDeleter> handle_;
};

/// A cancel token; cancel() may be called from any thread.
class CancelToken {
public:
    CancelToken() : handle_(lance_index_build_cancel_token_new()) {
        if (!handle_) throw Error::last();
    }
    void cancel() const { detail::check(lance_index_build_cancel(handle_.get())); }
    bool cancelled() const noexcept { return lance_index_build_cancel_requested(handle_.get()); }
    const LanceIndexBuildCancelToken* c_handle() const noexcept { return handle_.get(); }

private:
    std::unique_ptr<LanceIndexBuildCancelToken, detail::CancelTokenDeleter> handle_;
};

/// One progress event; see LanceIndexBuildProgressFn.  The strings are
/// borrowed for the call.
struct ProgressEvent {
    LanceProgressEvent event;
    const char* stage;
    uint64_t total;
    const char* unit;
    uint64_t completed;
};
using ProgressCallback = std::function<void(const ProgressEvent&)>;

namespace detail {
/// Calls a ProgressCallback; an exception cannot cross the C library, so
/// the first one is kept and rethrown when the build returns.
struct ProgressTrampoline {
    ProgressCallback callback;
    std::exception_ptr error;
    static void call(void* user, int32_t event, const char* stage, uint64_t total, const char* unit,
                     uint64_t completed) {
        auto* self = static_cast<ProgressTrampoline*>(user);
        if (self->error) return;
        try {
            self->callback(ProgressEvent{static_cast<LanceProgressEvent>(event), stage, total, unit, completed});
        } catch (...) {
            self->error = std::current_exception();
        }
    }
    void rethrow() {
        if (error) std::rethrow_exception(error);
    }
};
}  // namespace detail

/// A single-use builder of one uncommitted index segment.
class SegmentBuilder {
public:
    explicit SegmentBuilder(LanceIndexSegmentBuilder* handle) : handle_(handle) {
        if (handle == nullptr) throw Error::last();
    }
    /// Progress events of execute_uncommitted(), on the calling thread.
    void set_progress(ProgressCallback callback) {
        progress_ = std::make_unique<detail::ProgressTrampoline>();
        progress_->callback = std::move(callback);
        detail::check(lance_index_segment_builder_set_progress(handle_.get(), &detail::ProgressTrampoline::call,
                                                               progress_.get()));
    }
    /// The token must outlive nothing: the builder keeps its own reference.
    void set_cancel_token(const CancelToken& token) {
        detail::check(lance_index_segment_builder_set_cancel_token(handle_.get(), token.c_handle()));
    }
    /// Builds the segment without committing; returns its metadata bytes.
    Bytes execute_uncommitted() {
        uint8_t* data = nullptr;
        size_t len = 0;
        int32_t rc = lance_index_segment_builder_execute_uncommitted(handle_.get(), &data, &len);
        // Own the bytes before anything can throw (the callback's exception
        // is rethrown even when the build itself succeeded).
        std::unique_ptr<uint8_t, detail::BytesDeleter> owned(data);
        if (progress_) progress_->rethrow();
        detail::check(rc);
        return Bytes(data, data + len);
    }
    LanceIndexSegmentBuilder* c_handle() const noexcept { return handle_.get(); }

private:
    std::unique_ptr<LanceIndexSegmentBuilder, detail::SegmentBuilderDeleter> handle_;
    std::unique_ptr<detail::ProgressTrampoline> progress_;
};

/// Balanced fragment groups for N workers.
class FragmentPlan {
public:
    explicit FragmentPlan(LanceFragmentPlan* handle) : handle_(handle) {}
    size_t group_count() const noexcept { return lance_fragment_plan_group_count(handle_.get()); }
    uint64_t dataset_version() const noexcept { return lance_fragment_plan_dataset_version(handle_.get()); }
    std::vector<uint32_t> group(size_t i, uint64_t* rows = nullptr) const {
        const uint32_t* ids = nullptr;
        size_t n = 0;
        detail::check(lance_fragment_plan_group(handle_.get(), i, &ids, &n, rows));
        return std::vector<uint32_t>(ids, ids + n);
    }

private:
    std::unique_ptr<LanceFragmentPlan, detail::PlanDeleter> handle_;
};

/// Options of Dataset::commit_index_segments; see LanceCommitIndexOptions.
struct CommitOptions {
    bool replace = false;
    bool allow_independent_models = false;
    std::string job_id;      // empty = none
    std::string attempt_id;  // empty = none
};

/// One batch of a scan.
class Batch {
public:
    explicit Batch(LanceBatch* handle) : handle_(handle) {}
    uint64_t num_rows() const { return detail::check_value(lance_batch_num_rows(handle_.get())); }
    /// Exports the batch; the caller releases both structs.
    void to_arrow(ArrowArray* out_array, ArrowSchema* out_schema) const {
        detail::check(lance_batch_to_arrow(handle_.get(), out_array, out_schema));
    }
    const LanceBatch* c_handle() const noexcept { return handle_.get(); }

private:
    std::unique_ptr<LanceBatch, detail::BatchDeleter> handle_;
};

class Dataset;

/// A scan or k-NN search; setters return *this for chaining.
class Scanner {
public:
    Scanner& limit(int64_t n) { detail::check(lance_scanner_set_limit(get(), n)); return *this; }
    Scanner& offset(int64_t n) { detail::check(lance_scanner_set_offset(get(), n)); return *this; }
    Scanner& batch_size(int64_t n) { detail::check(lance_scanner_set_batch_size(get(), n)); return *this; }
    Scanner& with_row_id(bool on = true) { detail::check(lance_scanner_with_row_id(get(), on)); return *this; }
    Scanner& fragments(const std::vector<uint64_t>& ids) {
        detail::check(lance_scanner_set_fragment_ids(get(), ids.data(), ids.size()));
        return *this;
    }
    Scanner& nearest(const std::string& column, const std::vector<float>& query, uint32_t k) {
        detail::check(lance_scanner_nearest(get(), column.c_str(), query.data(), query.size(),
                                            LANCE_DTYPE_FLOAT32, k));
        return *this;
    }
    Scanner& nprobes(uint32_t n) { detail::check(lance_scanner_set_nprobes(get(), n)); return *this; }
    Scanner& refine_factor(uint32_t f) { detail::check(lance_scanner_set_refine_factor(get(), f)); return *this; }
    Scanner& ef(uint32_t e) { detail::check(lance_scanner_set_ef(get(), e)); return *this; }
    Scanner& metric(LanceMetricType m) { detail::check(lance_scanner_set_metric(get(), m)); return *this; }
    Scanner& use_index(bool on) { detail::check(lance_scanner_set_use_index(get(), on)); return *this; }
    Scanner& prefilter(bool on) { detail::check(lance_scanner_set_prefilter(get(), on)); return *this; }
    Scanner& index_segments(const std::vector<SegmentId>& ids) {
        detail::check(lance_scanner_set_index_segments(
            get(), ids.empty() ? nullptr : ids.front().data(), ids.size()));
        return *this;
    }

    /// The next batch, or std::nullopt at the end of the scan.
    std::optional<Batch> next() {
        LanceBatch* out = nullptr;
        int32_t rc = lance_scanner_next(get(), &out);
        if (rc == 1) return std::nullopt;
        detail::check(rc);
        return Batch(out);
    }

    /// Runs the scan as an Arrow stream; the caller releases it.
    void to_arrow_stream(ArrowArrayStream* out) { detail::check(lance_scanner_to_arrow_stream(get(), out)); }

    LanceScanner* c_handle() const noexcept { return handle_.get(); }

private:
    friend class Dataset;
    explicit Scanner(LanceScanner* handle) : handle_(handle) {}
    LanceScanner* get() const noexcept { return handle_.get(); }
    std::unique_ptr<LanceScanner, detail::ScannerDeleter> handle_;
};

/// An open dataset (one snapshot; see lance.h).
class Dataset {
public:
    /// Opens `uri` at `version` (0 = latest); options are key/value pairs.
    static Dataset open(const std::string& uri, uint64_t version = 0,
                        const std::vector<std::pair<std::string, std::string>>& options = {}) {
        std::vector<std::string> flat;
        for (const auto& kv : options) {
            flat.push_back(kv.first);
            flat.push_back(kv.second);
        }
        auto c_options = detail::c_strings(flat);
        LanceDataset* handle = lance_dataset_open(uri.c_str(), options.empty() ? nullptr : c_options.data(), version);
        if (handle == nullptr) throw Error::last();
        return Dataset(handle);
    }

    /// Writes `stream` (consumed) to `uri`; `schema` is borrowed.
    static Dataset write(const std::string& uri, const ArrowSchema* schema, ArrowArrayStream* stream,
                         LanceWriteMode mode, const LanceWriteParams* params = nullptr) {
        LanceDataset* handle = nullptr;
        detail::check(lance_dataset_write_with_params(uri.c_str(), schema, stream, mode, params, nullptr, &handle));
        return Dataset(handle);
    }

    uint64_t version() const { return detail::check_value(lance_dataset_version(get())); }
    uint64_t latest_version() const { return detail::check_value(lance_dataset_latest_version(get())); }
    uint64_t count_rows() const {
        uint64_t n = lance_dataset_count_rows(get());
        if (lance_last_error_code() != LANCE_OK) throw Error::last();
        return n;
    }
    void schema(ArrowSchema* out) const { detail::check(lance_dataset_schema(get(), out)); }

    std::vector<uint64_t> fragment_ids() const {
        // Another thread may commit through this handle between the two
        // calls: ask again until the buffer holds the snapshot's ids.
        std::vector<uint64_t> ids;
        while (true) {
            size_t count = 0;
            int32_t rc = lance_dataset_fragment_ids_bounded(get(), ids.empty() ? nullptr : ids.data(),
                                                            ids.size(), &count);
            if (count > ids.size()) {
                ids.resize(count);
                continue;
            }
            if (rc != 0) throw Error::last();
            ids.resize(count);
            return ids;
        }
    }
    std::vector<uint64_t> fragment_row_counts() const {
        std::vector<uint64_t> rows(fragment_count());
        if (!rows.empty()) detail::check(lance_dataset_fragment_row_counts(get(), rows.data(), rows.size()));
        return rows;
    }
    uint64_t fragment_count() const {
        uint64_t n = lance_dataset_fragment_count(get());
        if (lance_last_error_code() != LANCE_OK) throw Error::last();
        return n;
    }

    /// A scanner; an empty `columns` projects all columns, an empty filter is none.
    Scanner scan(const std::vector<std::string>& columns = {}, const std::string& filter = "") const {
        auto c_columns = detail::c_strings(columns);
        LanceScanner* handle = lance_scanner_new(get(), columns.empty() ? nullptr : c_columns.data(),
                                                 filter.empty() ? nullptr : filter.c_str());
        if (handle == nullptr) throw Error::last();
        return Scanner(handle);
    }

    void create_vector_index(const std::string& column, const std::string& name,
                             const LanceVectorIndexParams& params, bool replace = false) {
        detail::check(lance_dataset_create_vector_index(get(), column.c_str(),
                                                        name.empty() ? nullptr : name.c_str(), &params, replace));
    }
    void create_scalar_index(const std::string& column, const std::string& name, LanceScalarIndexType type,
                             const std::string& params_json = "", bool replace = false) {
        detail::check(lance_dataset_create_scalar_index(get(), column.c_str(),
                                                        name.empty() ? nullptr : name.c_str(), type,
                                                        params_json.empty() ? nullptr : params_json.c_str(),
                                                        replace));
    }
    void drop_index(const std::string& name) { detail::check(lance_dataset_drop_index(get(), name.c_str())); }
    uint64_t index_count() const {
        uint64_t n = lance_dataset_index_count(get());
        if (lance_last_error_code() != LANCE_OK) throw Error::last();
        return n;
    }
    std::string index_list_json() const { return detail::take_string(lance_dataset_index_list_json(get())); }

    /// The segment UUIDs of a logical index.
    std::vector<SegmentId> index_segments(const std::string& name) const {
        uint64_t count = detail::check_value(lance_dataset_index_segment_count(get(), name.c_str()));
        std::vector<SegmentId> ids(count);
        uint64_t written = 0;
        detail::check(lance_dataset_index_segments(get(), name.c_str(), ids.front().data(), ids.size(), &written));
        ids.resize(written);
        return ids;
    }

    /// Trains a shared model for `params` on the given fragments (empty = all).
    VectorModel train_vector_model(const std::string& column, const LanceVectorIndexParams& params,
                                   const std::vector<uint32_t>& sample_fragments = {}) const {
        LanceVectorModel* out = nullptr;
        detail::check(lance_dataset_train_vector_model(get(), column.c_str(), &params,
                                                       sample_fragments.empty() ? nullptr : sample_fragments.data(),
                                                       sample_fragments.size(), &out));
        return VectorModel(out);
    }

    /// A vector segment builder over `options` (see LanceIndexSegmentBuildOptions).
    SegmentBuilder vector_segment_builder(const std::string& column, const LanceVectorIndexParams& params,
                                          const LanceIndexSegmentBuildOptions& options,
                                          const std::string& name = "") const {
        return SegmentBuilder(lance_index_segment_builder_new_vector(
            get(), column.c_str(), name.empty() ? nullptr : name.c_str(), &params, &options));
    }

    SegmentBuilder scalar_segment_builder(const std::string& column, LanceScalarIndexType type,
                                          const LanceIndexSegmentBuildOptions& options,
                                          const std::string& name = "", const std::string& params_json = "") const {
        return SegmentBuilder(lance_index_segment_builder_new_scalar(
            get(), column.c_str(), name.empty() ? nullptr : name.c_str(), type,
            params_json.empty() ? nullptr : params_json.c_str(), &options));
    }

    /// Commits segments as one logical index in one new version.
    void commit_index_segments(const std::string& name, const std::string& column,
                               const std::vector<Bytes>& segments, bool replace = false) {
        CommitOptions options;
        options.replace = replace;
        commit_index_segments(name, column, segments, options);
    }

    /// Commits with options; returns the version holding the segments and
    /// whether they were already committed (an idempotent retry).
    LanceCommitIndexResult commit_index_segments(const std::string& name, const std::string& column,
                                                 const std::vector<Bytes>& segments,
                                                 const CommitOptions& options) {
        std::vector<const uint8_t*> ptrs;
        std::vector<size_t> lens;
        for (const auto& s : segments) {
            ptrs.push_back(s.data());
            lens.push_back(s.size());
        }
        LanceCommitIndexOptions c{options.replace, options.allow_independent_models,
                                  options.job_id.empty() ? nullptr : options.job_id.c_str(),
                                  options.attempt_id.empty() ? nullptr : options.attempt_id.c_str()};
        LanceCommitIndexResult result{};
        detail::check(lance_dataset_commit_index_segments_with_options(
            get(), name.c_str(), column.c_str(), ptrs.data(), lens.data(), segments.size(), &c, &result));
        return result;
    }

    /// Splits the fragments into `groups` balanced groups.
    FragmentPlan plan_fragment_groups(size_t groups) const {
        LanceFragmentPlan* out = nullptr;
        detail::check(lance_dataset_plan_fragment_groups(get(), groups, &out));
        return FragmentPlan(out);
    }

    /// Deletes matching rows; returns how many.
    uint64_t delete_rows(const std::string& predicate) {
        uint64_t n = 0;
        detail::check(lance_dataset_delete(get(), predicate.c_str(), &n));
        return n;
    }

    /// Lance's cleanup; see lance_dataset_cleanup_old_versions() for delete_unverified.
    LanceCleanupStats cleanup_old_versions(uint64_t older_than_seconds, bool delete_unverified = false) {
        LanceCleanupStats s{};
        detail::check(lance_dataset_cleanup_old_versions(get(), older_than_seconds, delete_unverified, &s));
        return s;
    }

    LanceCompactionMetrics compact_files(uint64_t target_rows_per_fragment = 0) {
        LanceCompactionMetrics m{};
        detail::check(lance_dataset_compact_files(get(), target_rows_per_fragment, &m));
        return m;
    }

    LanceDataset* c_handle() const noexcept { return handle_.get(); }

private:
    explicit Dataset(LanceDataset* handle) : handle_(handle) {}
    LanceDataset* get() const noexcept { return handle_.get(); }
    std::unique_ptr<LanceDataset, detail::DatasetDeleter> handle_;
};

}  // namespace lance

#endif  // LANCE_HPP
