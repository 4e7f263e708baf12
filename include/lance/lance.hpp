// lance.hpp: header-only C++17 wrappers over lance.h.
//
// Handles are move-only RAII owners; every failing call throws lance::Error,
// which carries the library's error code and message.  The C handle of any
// object is reachable through c_handle() for calls the wrappers lack.
#ifndef LANCE_HPP
#define LANCE_HPP

#include <array>
#include <cstdint>
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
        std::vector<uint64_t> ids(fragment_count());
        if (!ids.empty()) detail::check(lance_dataset_fragment_ids(get(), ids.data()));
        return ids;
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

    LanceDataset* c_handle() const noexcept { return handle_.get(); }

private:
    explicit Dataset(LanceDataset* handle) : handle_(handle) {}
    LanceDataset* get() const noexcept { return handle_.get(); }
    std::unique_ptr<LanceDataset, detail::DatasetDeleter> handle_;
};

}  // namespace lance

#endif  // LANCE_HPP
