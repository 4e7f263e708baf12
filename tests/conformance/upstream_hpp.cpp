// The part of upstream lance-c's C++ wrapper (lance.hpp, namespace lance)
// this library implements, checked by the compiler: the exact type of every
// member (through member pointers; an overload is picked by static_cast to
// upstream's type), the calls that rely on upstream's default arguments,
// explicit and private constructors, and move-only handles.  Compiling and
// linking is the test; main() only checks the value types' defaults.
//
// Every member of upstream's wrapper (facts section 5) is checked here, and
// the three upstream main adds (Scanner::distance_range, both
// Scanner::nearest_batch, Dataset::prewarm_index: facts section 9's
// functions); none is missing.  Where this wrapper differs on purpose it is a superset:
// Dataset::c_handle() returns LanceDataset* (converts to upstream's const
// pointer) and the upstream forms share their names with this library's
// extra overloads.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "lance/lance.hpp"

using lance::Batch;
using lance::Dataset;
using lance::IndexModel;
using lance::IndexSegmentBuilder;
using lance::IndexSegmentMetadata;
using lance::Scanner;
using Opts = std::vector<std::pair<std::string, std::string>>;
using Uuid = std::array<uint8_t, 16>;

// A member that is not overloaded: its type exactly.
#define SAME(type, member) static_assert(std::is_same_v<decltype(member), type>, #member " has upstream's type")
// An overloaded member: one overload has upstream's type.
#define HAS(type, member) static_assert(std::is_same_v<decltype(static_cast<type>(member)), type>, #member)
// A call in upstream's form (default arguments included) and its result type.
#define CALL(type, expr) static_assert(std::is_same_v<decltype(expr), type>, #expr)

template <typename T>
constexpr bool move_only = !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
                           std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>;
template <typename T, typename Arg>
constexpr bool explicit_from = std::is_constructible_v<T, Arg> && !std::is_convertible_v<Arg, T>;

template <typename T>
T& ref();

// ---- Error, check_error, Handle ----

static_assert(std::is_base_of_v<std::runtime_error, lance::Error>);
SAME(LanceErrorCode, lance::Error::code);
SAME(LanceErrorCode lance::Error::*, &lance::Error::code);
static_assert(std::is_constructible_v<lance::Error, LanceErrorCode, std::string>);
CALL(LanceErrorCode, ref<const lance::Error>().code);
SAME(void (*)(), &lance::check_error);

using DatasetHandle = lance::Handle<LanceDataset, lance_dataset_close>;
static_assert(move_only<DatasetHandle>);
static_assert(explicit_from<DatasetHandle, LanceDataset*>);
static_assert(std::is_default_constructible_v<DatasetHandle>);
SAME(LanceDataset* (DatasetHandle::*)() const, &DatasetHandle::get);
SAME(LanceDataset* (DatasetHandle::*)(), &DatasetHandle::release);
SAME(bool (DatasetHandle::*)() const, &DatasetHandle::operator bool);
static_assert(!std::is_convertible_v<DatasetHandle, bool>, "operator bool is explicit");

// ---- value types and scoped enums ----

SAME(uint64_t, lance::VersionInfo::id);
SAME(int64_t, lance::VersionInfo::timestamp_ms);
constexpr lance::VersionInfo version_info{7, -3};
static_assert(version_info.id == 7 && version_info.timestamp_ms == -3, "field order");
SAME(uint32_t, lance::FieldStatistics::id);
SAME(uint64_t, lance::FieldStatistics::bytes_on_disk);
constexpr lance::FieldStatistics field_stats{2, 9};
static_assert(field_stats.id == 2 && field_stats.bytes_on_disk == 9, "field order");
SAME(std::string, lance::SqlColumn::name);
SAME(std::string, lance::SqlColumn::expression);
SAME(uint64_t, lance::WriteParams::max_rows_per_file);
SAME(uint64_t, lance::WriteParams::max_rows_per_group);
SAME(uint64_t, lance::WriteParams::max_bytes_per_file);
SAME(std::optional<std::string>, lance::WriteParams::data_storage_version);
SAME(bool, lance::WriteParams::enable_stable_row_ids);
SAME(std::string, lance::ColumnAlteration::path);
SAME(std::optional<std::string>, lance::ColumnAlteration::rename);
SAME(LanceColumnNullableMode, lance::ColumnAlteration::nullable_mode);
SAME(const ArrowSchema*, lance::ColumnAlteration::data_type);
static_assert(std::is_aggregate_v<lance::ColumnAlteration> && std::is_aggregate_v<lance::SqlColumn>);

static_assert(std::is_enum_v<lance::WriteMode> && !std::is_convertible_v<lance::WriteMode, int32_t>, "scoped");
static_assert(std::is_same_v<std::underlying_type_t<lance::WriteMode>, int32_t>);
static_assert(static_cast<int32_t>(lance::WriteMode::Create) == LANCE_WRITE_CREATE);
static_assert(static_cast<int32_t>(lance::WriteMode::Append) == LANCE_WRITE_APPEND);
static_assert(static_cast<int32_t>(lance::WriteMode::Overwrite) == LANCE_WRITE_OVERWRITE);

// ---- IndexModel ----

static_assert(move_only<IndexModel>);
static_assert(!std::is_default_constructible_v<IndexModel>, "only Dataset constructs it");
static_assert(!std::is_constructible_v<IndexModel, ArrowArray, ArrowSchema>, "only Dataset constructs it");
SAME(ArrowArray* (IndexModel::*)() noexcept, &IndexModel::array);
SAME(const ArrowSchema* (IndexModel::*)() const noexcept, &IndexModel::schema);

// ---- IndexSegmentMetadata ----

using Meta = IndexSegmentMetadata;
static_assert(move_only<Meta>);
static_assert(explicit_from<Meta, LanceIndexSegmentMetadata*>);
HAS(Meta (*)(const uint8_t*, size_t), &Meta::parse);
HAS(Meta (*)(const std::vector<uint8_t>&), &Meta::parse);
SAME(Uuid (Meta::*)() const, &Meta::uuid);
SAME(std::string (Meta::*)() const, &Meta::name);
SAME(std::string (Meta::*)() const, &Meta::index_details_type_url);
SAME(uint64_t (Meta::*)() const, &Meta::dataset_version);
SAME(int32_t (Meta::*)() const, &Meta::index_version);
SAME(int32_t (Meta::*)() const, &Meta::index_type);
SAME(std::vector<int32_t> (Meta::*)() const, &Meta::field_ids);
SAME(std::vector<uint32_t> (Meta::*)() const, &Meta::fragment_ids);
SAME(const LanceIndexSegmentMetadata* (Meta::*)() const, &Meta::c_handle);

// ---- IndexSegmentBuilder ----

using Builder = IndexSegmentBuilder;
static_assert(move_only<Builder>);
static_assert(explicit_from<Builder, LanceIndexSegmentBuilder*>);
SAME(std::vector<uint8_t> (Builder::*)(), &Builder::execute_uncommitted);
// Overloaded here (a std::function form beside it): upstream's overload
// must exist with upstream's exact type.
HAS(Builder& (Builder::*)(LanceIndexBuildProgressCallback, void*), &Builder::progress_callback);
SAME(LanceIndexSegmentBuilder* (Builder::*)(), &Builder::c_handle);

// ---- Batch ----

static_assert(move_only<Batch>);
static_assert(explicit_from<Batch, LanceBatch*>);
SAME(void (Batch::*)(ArrowArray*, ArrowSchema*) const, &Batch::to_arrow);

// ---- Dataset ----

static_assert(move_only<Dataset>);
static_assert(!std::is_constructible_v<Dataset, LanceDataset*>, "the constructor is private");
SAME(Dataset (*)(const std::string&, const Opts&, uint64_t), &Dataset::open);
HAS(Dataset (*)(const std::string&, ArrowArrayStream*, lance::WriteMode, const Opts&), &Dataset::write);
HAS(Dataset (*)(const std::string&, ArrowArrayStream*, lance::WriteMode, const lance::WriteParams&, const Opts&),
    &Dataset::write);
SAME(uint64_t (Dataset::*)() const, &Dataset::count_rows);
SAME(uint64_t (Dataset::*)() const, &Dataset::version);
SAME(uint64_t (Dataset::*)() const, &Dataset::latest_version);
SAME(void (Dataset::*)(ArrowSchema*) const, &Dataset::schema);
SAME(uint64_t (Dataset::*)() const, &Dataset::fragment_count);
SAME(std::vector<uint64_t> (Dataset::*)() const, &Dataset::fragment_ids);
SAME(void (Dataset::*)(const std::string&), &Dataset::drop_index);
SAME(uint64_t (Dataset::*)() const, &Dataset::index_count);
SAME(uint64_t (Dataset::*)(const std::string&), &Dataset::delete_rows);
SAME(std::vector<Uuid> (Dataset::*)(const std::string&) const, &Dataset::index_segments);
HAS(Scanner (Dataset::*)() const, &Dataset::scan);
SAME(LanceCompactionMetrics (Dataset::*)(const LanceCompactionOptions*), &Dataset::compact_files);
SAME(void (Dataset::*)(const std::string&, const LanceVectorIndexParams&, const std::string&, bool),
     &Dataset::create_vector_index);
SAME(void (Dataset::*)(const std::string&, LanceScalarIndexType, const std::string&, const std::string&, bool),
     &Dataset::create_scalar_index);
SAME(Builder (Dataset::*)(const std::string&, LanceScalarIndexType, const std::string&, const std::string&,
                          const LanceIndexSegmentBuildOptions*) const,
     &Dataset::new_scalar_index_segment_builder);
SAME(Builder (Dataset::*)(const std::string&, const LanceVectorIndexParams&, const std::string&,
                          const LanceIndexSegmentBuildOptions*) const,
     &Dataset::new_vector_index_segment_builder);
SAME(IndexModel (Dataset::*)(const std::string&, uint32_t, LanceMetricType, const std::vector<uint32_t>&) const,
     &Dataset::train_ivf_model);
SAME(IndexModel (Dataset::*)(const std::string&, uint32_t, uint32_t, LanceMetricType, IndexModel&,
                             const std::vector<uint32_t>&) const,
     &Dataset::train_pq_model);
SAME(std::string (Dataset::*)() const, &Dataset::list_indices_json);
SAME(uint64_t (Dataset::*)(const std::string&) const, &Dataset::index_segment_count);
SAME(void (Dataset::*)(const std::string&, const std::string&, const std::vector<std::vector<uint8_t>>&),
     &Dataset::commit_index_segments);
// Upstream returns const LanceDataset*; this wrapper returns LanceDataset*,
// which every upstream use of the result accepts.
static_assert(std::is_convertible_v<decltype(ref<const Dataset>().c_handle()), const LanceDataset*>);

// Upstream's default arguments.
static const std::string s;
CALL(Dataset, Dataset::open(s));
CALL(Dataset, Dataset::open(s, {}));
CALL(Dataset, Dataset::open(s, {{"k", "v"}}, 3));
CALL(Dataset, Dataset::write(s, nullptr, lance::WriteMode::Create));
CALL(Dataset, Dataset::write(s, nullptr, lance::WriteMode::Append, lance::WriteParams{}));
CALL(Dataset, Dataset::write(s, nullptr, lance::WriteMode::Overwrite, lance::WriteParams{}, Opts{}));
CALL(LanceCompactionMetrics, ref<Dataset>().compact_files());
CALL(void, ref<Dataset>().create_vector_index(s, LanceVectorIndexParams{}));
CALL(void, ref<Dataset>().create_vector_index(s, LanceVectorIndexParams{}, s));
CALL(void, ref<Dataset>().create_scalar_index(s, LANCE_SCALAR_BTREE));
CALL(void, ref<Dataset>().create_scalar_index(s, LANCE_SCALAR_BTREE, s, s));
CALL(Builder, ref<const Dataset>().new_scalar_index_segment_builder(s, LANCE_SCALAR_BITMAP));
CALL(Builder, ref<const Dataset>().new_vector_index_segment_builder(s, LanceVectorIndexParams{}));
CALL(Builder, ref<const Dataset>().new_vector_index_segment_builder(s, LanceVectorIndexParams{}, s));
CALL(IndexModel, ref<const Dataset>().train_ivf_model(s, 4, LANCE_METRIC_L2));
CALL(IndexModel, ref<const Dataset>().train_pq_model(s, 4, 8, LANCE_METRIC_L2, ref<IndexModel>()));
CALL(IndexModel, ref<const Dataset>().train_pq_model(s, 4, 8, LANCE_METRIC_DOT, ref<IndexModel>(), {0, 1}));
CALL(void, ref<Dataset>().commit_index_segments(s, s, {{1, 2}, {3}}));
CALL(Scanner, ref<const Dataset>().scan());

// ---- Scanner ----

static_assert(move_only<Scanner>);
static_assert(explicit_from<Scanner, LanceScanner*>, "public explicit constructor");
SAME(Scanner& (Scanner::*)(int64_t), &Scanner::limit);
SAME(Scanner& (Scanner::*)(int64_t), &Scanner::offset);
SAME(Scanner& (Scanner::*)(int64_t), &Scanner::batch_size);
SAME(Scanner& (Scanner::*)(bool), &Scanner::with_row_id);
SAME(Scanner& (Scanner::*)(uint32_t), &Scanner::nprobes);
SAME(Scanner& (Scanner::*)(uint32_t), &Scanner::refine_factor);
SAME(Scanner& (Scanner::*)(uint32_t), &Scanner::ef);
SAME(Scanner& (Scanner::*)(LanceMetricType), &Scanner::metric);
SAME(Scanner& (Scanner::*)(bool), &Scanner::use_index);
SAME(Scanner& (Scanner::*)(bool), &Scanner::prefilter);
HAS(Scanner& (Scanner::*)(const std::vector<Uuid>&), &Scanner::index_segments);
HAS(Scanner& (Scanner::*)(const uint8_t*, size_t), &Scanner::index_segments);
HAS(Scanner& (Scanner::*)(const uint64_t*, size_t), &Scanner::fragment_ids);
HAS(Scanner& (Scanner::*)(const std::vector<uint64_t>&), &Scanner::fragment_ids);
HAS(Scanner& (Scanner::*)(const std::string&, const float*, size_t, uint32_t), &Scanner::nearest);
HAS(Scanner& (Scanner::*)(const std::string&, const void*, size_t, LanceDataType, uint32_t), &Scanner::nearest);
SAME(void (Scanner::*)(ArrowArrayStream*), &Scanner::to_arrow_stream);
SAME(LanceScanner* (Scanner::*)(), &Scanner::c_handle);
CALL(Scanner&, ref<Scanner>().with_row_id());
CALL(Scanner&, ref<Scanner>().nearest(s, static_cast<const float*>(nullptr), 16, 10));
CALL(Scanner&, ref<Scanner>().fragment_ids({1, 2}));
// Scanner tuning, filters, scan statistics, probe bounds.
SAME(Scanner& (Scanner::*)(uint64_t), &Scanner::batch_size_bytes);
SAME(Scanner& (Scanner::*)(uint64_t), &Scanner::io_buffer_size);
SAME(Scanner& (Scanner::*)(size_t), &Scanner::batch_readahead);
SAME(Scanner& (Scanner::*)(size_t), &Scanner::fragment_readahead);
SAME(Scanner& (Scanner::*)(size_t), &Scanner::target_parallelism);
SAME(Scanner& (Scanner::*)(bool), &Scanner::scan_in_order);
SAME(Scanner& (Scanner::*)(bool), &Scanner::use_scalar_index);
SAME(Scanner& (Scanner::*)(bool), &Scanner::strict_batch_size);
SAME(Scanner& (Scanner::*)(bool), &Scanner::use_stats);
SAME(Scanner& (Scanner::*)(bool), &Scanner::with_row_address);
SAME(Scanner& (Scanner::*)(bool), &Scanner::include_deleted_rows);
HAS(Scanner& (Scanner::*)(const uint8_t*, size_t), &Scanner::substrait_filter);
HAS(Scanner& (Scanner::*)(const std::vector<uint8_t>&), &Scanner::substrait_filter);
SAME(Scanner& (Scanner::*)(const std::string&), &Scanner::additional_sql_filter);
SAME(Scanner& (Scanner::*)(LanceScanStatisticsCallback, void*), &Scanner::statistics_callback);
SAME(Scanner& (Scanner::*)(uint32_t), &Scanner::minimum_nprobes);
SAME(Scanner& (Scanner::*)(uint32_t), &Scanner::maximum_nprobes);
SAME(Scanner& (Scanner::*)(LanceApproxMode), &Scanner::approx_mode);
SAME(Scanner& (Scanner::*)(int32_t), &Scanner::query_parallelism);
CALL(Scanner&, ref<Scanner>().scan_in_order());
CALL(Scanner&, ref<Scanner>().use_scalar_index());
CALL(Scanner&, ref<Scanner>().strict_batch_size());
CALL(Scanner&, ref<Scanner>().use_stats());
CALL(Scanner&, ref<Scanner>().with_row_address());
CALL(Scanner&, ref<Scanner>().include_deleted_rows());

// ---- Sessions and blobs (facts section 5) ----

using lance::BlobFile;
using lance::Session;
using Blobs = std::vector<std::optional<BlobFile>>;
static_assert(move_only<Session>);
static_assert(std::is_constructible_v<Session, uint64_t, uint64_t>);
SAME(LanceSessionCacheStats (Session::*)() const, &Session::cache_stats);
SAME(const LanceSession* (Session::*)() const, &Session::c_handle);
static_assert(move_only<BlobFile>);
static_assert(explicit_from<BlobFile, LanceBlobFile*>);
SAME(uint64_t (BlobFile::*)() const, &BlobFile::size);
SAME(std::vector<uint8_t> (BlobFile::*)(), &BlobFile::read);
SAME(std::vector<uint8_t> (BlobFile::*)(size_t), &BlobFile::read_up_to);
SAME(std::vector<uint8_t> (BlobFile::*)(uint64_t, size_t) const, &BlobFile::read_range);
SAME(void (BlobFile::*)(uint64_t), &BlobFile::seek);
SAME(uint64_t (BlobFile::*)() const, &BlobFile::tell);
SAME(Dataset (*)(const Session&, const std::string&, const Opts&, uint64_t), &Dataset::open_with_session);
SAME(Blobs (Dataset::*)(const uint64_t*, size_t, const std::string&) const, &Dataset::take_blobs);
SAME(Blobs (Dataset::*)(const uint64_t*, size_t, const std::string&) const, &Dataset::take_blobs_by_indices);
SAME(Scanner& (Scanner::*)(LanceBlobHandling), &Scanner::blob_handling);
CALL(Dataset, Dataset::open_with_session(ref<const Session>(), s));
CALL(Dataset, Dataset::open_with_session(ref<const Session>(), s, {{"k", "v"}}, 2));

// ---- Versions, statistics, restore, update, merge-insert, schema evolution,
// random access, uncommitted writes ----

using Names = std::vector<std::string>;
SAME(void (*)(const std::string&, const ArrowSchema*, ArrowArrayStream*, const Opts&), &lance::write_fragments);
CALL(void, lance::write_fragments(s, nullptr, nullptr));
CALL(void, lance::write_fragments(s, nullptr, nullptr, {{"k", "v"}}));
SAME(std::vector<lance::VersionInfo> (Dataset::*)() const, &Dataset::versions);
SAME(std::vector<lance::FieldStatistics> (Dataset::*)() const, &Dataset::calculate_data_stats);
SAME(Dataset (Dataset::*)(uint64_t) const, &Dataset::restore);
SAME(uint64_t (Dataset::*)(const std::string&, const std::vector<std::pair<std::string, std::string>>&),
     &Dataset::update);
SAME(LanceMergeInsertResult (Dataset::*)(const Names&, ArrowArrayStream*, const LanceMergeInsertParams*),
     &Dataset::merge_insert);
SAME(LanceMergeInsertResult (Dataset::*)(const Names&, ArrowArrayStream*), &Dataset::upsert);
SAME(void (Dataset::*)(const Names&), &Dataset::drop_columns);
SAME(void (Dataset::*)(const std::vector<lance::ColumnAlteration>&), &Dataset::alter_columns);
SAME(void (Dataset::*)(const std::vector<lance::SqlColumn>&, uint64_t), &Dataset::add_columns_sql);
SAME(void (Dataset::*)(const ArrowSchema*), &Dataset::add_columns_nulls);
SAME(void (Dataset::*)(ArrowArrayStream*, uint64_t), &Dataset::add_columns_stream);
HAS(void (Dataset::*)(const uint64_t*, size_t, const Names&, ArrowArrayStream*) const, &Dataset::take);
HAS(void (Dataset::*)(const uint64_t*, size_t, ArrowArrayStream*) const, &Dataset::take);
HAS(void (Dataset::*)(const uint64_t*, size_t, const Names&, ArrowArrayStream*) const, &Dataset::take_rows);
HAS(void (Dataset::*)(const uint64_t*, size_t, ArrowArrayStream*) const, &Dataset::take_rows);
CALL(uint64_t, ref<Dataset>().update(s, {{"a", "a + 1"}}));
CALL(LanceMergeInsertResult, ref<Dataset>().merge_insert({"id"}, nullptr));
CALL(LanceMergeInsertResult, ref<Dataset>().upsert({"id"}, nullptr));
CALL(void, ref<Dataset>().drop_columns({"a", "b"}));
CALL(void, ref<Dataset>().alter_columns({{"a", "b"}}));
CALL(void, ref<Dataset>().alter_columns({{"a", std::nullopt, LANCE_COLUMN_NULLABLE_TRUE}}));
CALL(void, ref<Dataset>().add_columns_sql({{"b", "a * 2"}}));
CALL(void, ref<Dataset>().add_columns_stream(nullptr));
CALL(void, ref<const Dataset>().take(nullptr, 0, {"a"}, nullptr));
CALL(void, ref<const Dataset>().take(nullptr, 0, nullptr));
CALL(void, ref<const Dataset>().take_rows(nullptr, 0, {}, nullptr));
CALL(void, ref<const Dataset>().take_rows(nullptr, 0, nullptr));

// ---- Async scan, full-text search, multivector search, scalar index segment ----

SAME(void (*)(ArrowArrayStream*) noexcept, &lance::scanner_async_stream_free);
static_assert(std::is_same_v<std::underlying_type_t<lance::FtsCoverageMode>, int32_t>);
static_assert(static_cast<int32_t>(lance::FtsCoverageMode::Strict) == LANCE_FTS_COVERAGE_STRICT &&
              static_cast<int32_t>(lance::FtsCoverageMode::IndexOnly) == LANCE_FTS_COVERAGE_INDEX_ONLY);
static_assert(std::is_same_v<std::underlying_type_t<lance::FtsMatchOperator>, int32_t>);
static_assert(static_cast<int32_t>(lance::FtsMatchOperator::Or) == LANCE_FTS_MATCH_OPERATOR_OR &&
              static_cast<int32_t>(lance::FtsMatchOperator::And) == LANCE_FTS_MATCH_OPERATOR_AND);
static_assert(move_only<lance::FtsQueryContext>);
static_assert(explicit_from<lance::FtsQueryContext, LanceFtsQueryContext*>);
SAME(const LanceFtsQueryContext* (lance::FtsQueryContext::*)() const, &lance::FtsQueryContext::c_handle);
SAME(lance::FtsQueryContext (Dataset::*)(const std::string&, const std::string&, lance::FtsMatchOperator, uint32_t,
                                         lance::FtsCoverageMode) const,
     &Dataset::prepare_fts_match_query);
SAME(lance::FtsQueryContext (Dataset::*)(const std::string&, const std::string&, int32_t, lance::FtsCoverageMode) const,
     &Dataset::prepare_fts_phrase_query);
CALL(lance::FtsQueryContext, ref<const Dataset>().prepare_fts_match_query(std::string(), std::string()));
CALL(lance::FtsQueryContext, ref<const Dataset>().prepare_fts_phrase_query(std::string(), std::string()));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
SAME(lance::FtsQueryContext (Dataset::*)(const std::string&, const std::string&, uint32_t, lance::FtsCoverageMode)
         const,
     &Dataset::prepare_fts_query);
CALL(lance::FtsQueryContext, ref<const Dataset>().prepare_fts_query(std::string(), std::string()));
#pragma GCC diagnostic pop
SAME(void (Scanner::*)(LanceCallback, void*) const, &Scanner::scan_async);
SAME(Scanner& (Scanner::*)(const std::string&, const std::vector<std::string>&, uint32_t), &Scanner::full_text_search);
CALL(Scanner&, ref<Scanner>().full_text_search(std::string()));
SAME(Scanner& (Scanner::*)(const lance::FtsQueryContext&), &Scanner::fts_query_context);
HAS(Scanner& (Scanner::*)(const uint8_t*, size_t), &Scanner::fts_index_segments);
HAS(Scanner& (Scanner::*)(const std::vector<Uuid>&), &Scanner::fts_index_segments);
SAME(Scanner& (Scanner::*)(const std::string&, const void*, size_t, size_t, LanceDataType, uint32_t),
     &Scanner::nearest_multivector);
SAME(Scanner& (Scanner::*)(const Uuid&), &Scanner::scalar_index_segment);
SAME(Scanner& (Scanner::*)(), &Scanner::clear_scalar_index_segment);

// ---- Upstream main: distance range, batch k-NN, index prewarming ----

SAME(Scanner& (Scanner::*)(std::optional<float>, std::optional<float>), &Scanner::distance_range);
HAS(Scanner& (Scanner::*)(const std::string&, const float*, size_t, size_t, uint32_t), &Scanner::nearest_batch);
HAS(Scanner& (Scanner::*)(const std::string&, const void*, size_t, size_t, LanceDataType, uint32_t),
    &Scanner::nearest_batch);
SAME(void (Dataset::*)(const std::string&) const, &Dataset::prewarm_index);
CALL(Scanner&, ref<Scanner>().distance_range(std::nullopt, 0.5f));
CALL(Scanner&, ref<Scanner>().distance_range(0.1f, std::nullopt));
CALL(Scanner&, ref<Scanner>().nearest_batch(s, static_cast<const float*>(nullptr), 16, 2, 10));
CALL(Scanner&, ref<Scanner>().nearest_batch(s, static_cast<const void*>(nullptr), 16, 2, LANCE_DTYPE_FLOAT32, 10));
CALL(void, ref<const Dataset>().prewarm_index(s));

// A program in upstream's style, compiled and linked (never run): the
// wrapper's calls resolve against the library's exports.
void upstream_style_program(const char* uri, ArrowArrayStream* stream) {
    try {
        auto ds = lance::Dataset::write(uri, stream, lance::WriteMode::Create);
        LanceVectorIndexParams params{};
        params.index_type = LANCE_INDEX_IVF_FLAT;
        auto centroids = ds.train_ivf_model("vec", 4, LANCE_METRIC_L2);
        LanceIndexSegmentBuildOptions options{};
        options.ivf_centroids = centroids.array();
        options.ivf_centroids_schema = centroids.schema();
        options.mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
        auto bytes = ds.new_vector_index_segment_builder("vec", params, "idx", &options).execute_uncommitted();
        auto meta = lance::IndexSegmentMetadata::parse(bytes);
        if (meta.index_type() != LANCE_INDEX_IVF_FLAT) return;
        ds.commit_index_segments("idx", "vec", {bytes});
        lance::Scanner scanner(lance_scanner_new(ds.c_handle(), nullptr, nullptr));
        std::vector<float> q(16);
        ArrowArrayStream out;
        scanner.nearest("vec", q.data(), q.size(), 10).nprobes(4).to_arrow_stream(&out);
        out.release(&out);
        ds.compact_files();
    } catch (const lance::Error& e) {
        if (e.code == LANCE_ERR_INVALID_ARGUMENT || e.code == LANCE_ERR_PANIC) return;
        throw;
    }
}

int main() {
    // Defaults that cannot be checked at compile time.
    lance::WriteParams params;
    bool ok = params.max_rows_per_file == 0 && params.max_rows_per_group == 0 && params.max_bytes_per_file == 0 &&
              !params.data_storage_version && !params.enable_stable_row_ids;
    ok = ok && !DatasetHandle() && DatasetHandle().get() == nullptr;
    lance::ColumnAlteration alteration;
    ok = ok && alteration.path.empty() && !alteration.rename &&
         alteration.nullable_mode == LANCE_COLUMN_NULLABLE_UNCHANGED && alteration.data_type == nullptr;
    return ok ? 0 : 1;
}
