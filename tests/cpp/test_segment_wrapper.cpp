// The C++ wrappers of the distributed build, in both forms:
//   - upstream lance-c's: IndexModel from train_ivf_model / train_pq_model,
//     new_*_index_segment_builder with LanceIndexSegmentBuildOptions and a
//     build mode, IndexSegmentMetadata, and the coverage-driven
//     commit_index_segments;
//   - this library's: VectorModel given to a builder by set_model,
//     std::function progress (progress_callback), cancel tokens, the commit
//     with options and result, merging segments (merge_index_segments),
//     optimize_indices, and a maintenance plan run through the wrappers
//     (plan_index_maintenance, index_segment_metadata).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "json.h"
#include "lance/lance.hpp"
#include "segment_kit.h"
#include "test_util.hpp"

static_assert(!std::is_copy_constructible_v<lance::VectorModel>, "VectorModel must be move-only");
static_assert(std::is_move_constructible_v<lance::VectorModel>, "VectorModel must move");
static_assert(!std::is_copy_constructible_v<lance::IndexModel>, "IndexModel must be move-only");
static_assert(std::is_nothrow_move_constructible_v<lance::IndexModel>, "IndexModel must move");
static_assert(!std::is_copy_constructible_v<lance::IndexSegmentBuilder>, "IndexSegmentBuilder must be move-only");
static_assert(!std::is_copy_constructible_v<lance::IndexSegmentMetadata>, "IndexSegmentMetadata must be move-only");
static_assert(std::is_same_v<decltype(std::declval<lance::IndexSegmentBuilder&>().set_model(
                                 std::declval<const lance::VectorModel&>())),
                             lance::IndexSegmentBuilder&>,
              "set_model chains");
static_assert(std::is_same_v<decltype(std::declval<lance::IndexSegmentBuilder&>().progress_callback(
                                 std::declval<lance::ProgressCallback>())),
                             lance::IndexSegmentBuilder&>,
              "progress_callback(std::function) chains");
static_assert(!std::is_copy_constructible_v<lance::CancelToken>, "CancelToken must be move-only");
static_assert(!std::is_copy_constructible_v<lance::FragmentPlan>, "FragmentPlan must be move-only");

static TuData g_data;
static std::string g_dir;

// A dataset of all rows of g_data, 250 rows per fragment (8 fragments).
static lance::Dataset make_dataset(const char* name) {
    std::string uri = g_dir + "/" + name;
    LanceDataset* raw = tu_write(uri.c_str(), &g_data, 0, g_data.rows, LANCE_WRITE_CREATE, 250);
    CHECK(raw != nullptr);
    lance_dataset_close(raw);
    return lance::Dataset::open(uri);
}

// The ids of a k-NN search on "vec" probing `nprobes` partitions.
static std::vector<int64_t> knn(const lance::Dataset& ds, int64_t query_row, uint32_t nprobes, uint32_t refine) {
    auto scanner = ds.scan({"id"});
    scanner.nearest("vec", g_data.vectors + 16 * query_row, 16, 10).nprobes(nprobes);
    if (refine) scanner.refine_factor(refine);
    return scan_ids(scanner);
}

static bool knn_is_exact(const lance::Dataset& ds, uint32_t nprobes, uint32_t refine) {
    bool exact = true;
    for (int64_t row : {3, 777, 1500, 1999}) {
        std::vector<int64_t> truth(10);
        tu_brute_force_knn(&g_data, g_data.vectors + 16 * row, 10, truth.data());
        exact = exact && knn(ds, row, nprobes, refine) == truth;
    }
    return exact;
}

// Upstream's progress callback: counts events; COMPLETE carries 0.
struct ProgressCount {
    int starts = 0;
    int completes = 0;
    bool complete_nonzero = false;
};
static void count_progress(void* ctx, int32_t event, const char*, uint64_t, const char*, uint64_t completed) {
    auto* c = static_cast<ProgressCount*>(ctx);
    if (event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START) c->starts++;
    if (event == LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE) {
        c->completes++;
        c->complete_nonzero = c->complete_nonzero || completed != 0;
    }
}

// Build options over `fragment_ids` (borrowed: they must outlive the options), the rest zero.
static LanceIndexSegmentBuildOptions options_over(const std::vector<uint32_t>& fragment_ids) {
    LanceIndexSegmentBuildOptions o{};
    o.fragment_ids = fragment_ids.data();
    o.fragment_count = fragment_ids.size();
    return o;
}

// Fragment groups {0,1}, {2,3}, {4,5}, {6,7}.
static std::vector<std::vector<uint32_t>> groups_of_two() { return {{0, 1}, {2, 3}, {4, 5}, {6, 7}}; }

// Upstream's loop, IVF_FLAT: centroids trained once, one PRECOMPUTED segment
// per group, one commit; probing every partition equals brute force.
static void test_upstream_ivf_flat() {
    lance::Dataset ds = make_dataset("up_flat.lance");
    lance::IndexModel centroids = ds.train_ivf_model("vec", 8, LANCE_METRIC_L2);
    CHECK(centroids.array()->length == 8 && centroids.array()->release != nullptr);
    CHECK(std::string(centroids.schema()->format) == "+w:16");
    // The model moves; the moved-from one owns nothing.
    lance::IndexModel model = std::move(centroids);
    CHECK(centroids.array()->release == nullptr && model.array()->length == 8);

    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, 8, 0);
    std::vector<std::vector<uint8_t>> segments;
    std::vector<std::array<uint8_t, 16>> uuids;
    for (const auto& group : groups_of_two()) {
        LanceIndexSegmentBuildOptions o = options_over(group);
        o.ivf_centroids = model.array();
        o.ivf_centroids_schema = model.schema();
        o.mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
        lance::IndexSegmentBuilder builder = ds.new_vector_index_segment_builder("vec", p, "flat_idx", &o);
        ProgressCount counts;
        builder.progress_callback(&count_progress, &counts);
        segments.push_back(builder.execute_uncommitted());
        CHECK(counts.starts > 0 && counts.completes == counts.starts && !counts.complete_nonzero);
        CHECK(code_of([&] { builder.execute_uncommitted(); }) == LANCE_ERR_INVALID_ARGUMENT);

        auto meta = lance::IndexSegmentMetadata::parse(segments.back());
        CHECK(meta.fragment_ids() == group);
        CHECK(meta.index_type() == LANCE_INDEX_IVF_FLAT);
        CHECK(meta.index_type_name() == "IVF_FLAT");
        CHECK(meta.name() == "flat_idx");
        CHECK(meta.dataset_version() == 1);
        CHECK(meta.index_version() >= 0);
        CHECK(meta.field_ids() == std::vector<int32_t>({1}));  // id = 0, vec = 1, tag = 2
        CHECK(meta.index_details_type_url().find("VectorIndexDetails") != std::string::npos);
        CHECK(meta.c_handle() != nullptr);
        uuids.push_back(meta.uuid());
        CHECK(uuids.back() != lance::SegmentId{});
    }
    CHECK(ds.latest_version() == 1);
    ds.commit_index_segments("flat_idx", "vec", segments);
    CHECK(ds.version() == 2);
    CHECK(ds.index_count() == 1 && ds.index_segment_count("flat_idx") == 4);
    auto committed = ds.index_segments("flat_idx");
    std::sort(committed.begin(), committed.end());
    std::sort(uuids.begin(), uuids.end());
    CHECK(committed == uuids);
    CHECK(knn_is_exact(ds, 8, 0));

    // Coverage-driven replacement: one locally trained segment over every
    // fragment replaces the four (no replace flag in upstream's commit).
    LanceIndexSegmentBuildOptions whole{};
    whole.mode = LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN;
    lance::IndexSegmentBuilder builder = ds.new_vector_index_segment_builder("vec", p, "flat_idx", &whole);
    ds.commit_index_segments("flat_idx", "vec", {builder.execute_uncommitted()});
    CHECK(ds.version() == 3 && ds.index_segment_count("flat_idx") == 1);
    CHECK(knn_is_exact(ds, 8, 0));
}

// Upstream's loop, IVF_PQ: centroids and codebook trained on a fragment
// subset; with every partition probed and every row refined, exact.
// Independently trained segments: upstream's commit takes them, the commit
// with options refuses them.
static void test_upstream_ivf_pq() {
    lance::Dataset ds = make_dataset("up_pq.lance");
    std::vector<uint32_t> sample = {0, 2, 4, 6};
    lance::IndexModel centroids = ds.train_ivf_model("vec", 4, LANCE_METRIC_L2, sample);
    lance::IndexModel codebook = ds.train_pq_model("vec", 4, 8, LANCE_METRIC_L2, centroids, sample);
    // Upstream's shape: [dim / num_sub_vectors] x num_sub_vectors * 2^num_bits.
    CHECK(std::string(codebook.schema()->format) == "+w:4");
    CHECK(codebook.array()->length == 4 * 256);
    CHECK(centroids.array()->release != nullptr);  // borrowed by the trainer, still ours

    LanceVectorIndexParams p = sk_pq_params(4, 4, 8);
    std::vector<std::vector<uint8_t>> segments;
    for (const auto& group : groups_of_two()) {
        LanceIndexSegmentBuildOptions o = options_over(group);
        o.ivf_centroids = centroids.array();
        o.ivf_centroids_schema = centroids.schema();
        o.pq_codebook = codebook.array();
        o.pq_codebook_schema = codebook.schema();
        o.mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
        segments.push_back(ds.new_vector_index_segment_builder("vec", p, "", &o).execute_uncommitted());
        auto meta = lance::IndexSegmentMetadata::parse(segments.back().data(), segments.back().size());
        CHECK(meta.index_type() == LANCE_INDEX_IVF_PQ && meta.fragment_ids() == group);
        CHECK(meta.name() == "vec_idx");
    }
    ds.commit_index_segments("vec_idx", "vec", segments);
    CHECK(ds.index_segment_count("vec_idx") == 4);
    CHECK(knn_is_exact(ds, 4, 200));

    // Independently trained segments (AUTO without a model) over the same groups.
    std::vector<std::vector<uint8_t>> independent;
    for (const auto& group : groups_of_two()) {
        LanceIndexSegmentBuildOptions o = options_over(group);
        independent.push_back(ds.new_vector_index_segment_builder("vec", p, "vec_idx", &o).execute_uncommitted());
    }
    lance::CommitOptions replace;
    replace.replace = true;
    CHECK(code_of([&] { ds.commit_index_segments_v2("vec_idx", "vec", independent, replace); }) ==
          LANCE_ERR_MODEL_MISMATCH);
    uint64_t before = ds.version();
    ds.commit_index_segments("vec_idx", "vec", independent);
    CHECK(ds.version() == before + 1 && ds.index_segment_count("vec_idx") == 4);
    CHECK(knn_is_exact(ds, 4, 200));
}

// A scalar segment through upstream's builder, and the bad inputs of the
// upstream forms, each with its exact code.
static void test_upstream_scalar_and_bad_input() {
    lance::Dataset ds = make_dataset("up_bad.lance");
    LanceIndexSegmentBuildOptions local{};
    local.mode = LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN;
    std::vector<uint8_t> btree =
        ds.new_scalar_index_segment_builder("id", LANCE_SCALAR_BTREE, "id_idx", "", &local).execute_uncommitted();
    CHECK(lance::IndexSegmentMetadata::parse(btree).index_type() == LANCE_SCALAR_BTREE);
    ds.commit_index_segments("id_idx", "id", {btree});
    CHECK(ds.index_segment_count("id_idx") == 1);
    CHECK(tu_count_scan(ds.scan({"id"}, "id >= 100 AND id < 110").c_handle()) == 10);

    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_PQ, 4, 4);
    lance::IndexModel centroids = ds.train_ivf_model("vec", 4, LANCE_METRIC_L2);
    auto build_code = [&](const LanceIndexSegmentBuildOptions& o) {
        return code_of([&] { ds.new_vector_index_segment_builder("vec", p, "", &o); });
    };
    LanceIndexSegmentBuildOptions o{};
    o.mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;  // no model given
    CHECK(build_code(o) == LANCE_ERR_INVALID_ARGUMENT);
    o.ivf_centroids = centroids.array();
    o.ivf_centroids_schema = centroids.schema();  // PQ without its codebook
    CHECK(build_code(o) == LANCE_ERR_INVALID_ARGUMENT);
    o.mode = LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN;  // a model where none may be
    CHECK(build_code(o) == LANCE_ERR_INVALID_ARGUMENT);
    o = LanceIndexSegmentBuildOptions{};
    o.mode = 7;
    CHECK(build_code(o) == LANCE_ERR_INVALID_ARGUMENT);
    uint32_t unknown_fragment = 99;
    o = LanceIndexSegmentBuildOptions{};
    o.fragment_ids = &unknown_fragment;
    o.fragment_count = 1;
    CHECK(build_code(o) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { ds.new_vector_index_segment_builder("no_such", p); }) == LANCE_ERR_NOT_FOUND);
    CHECK(code_of([&] { ds.new_scalar_index_segment_builder("id", static_cast<LanceScalarIndexType>(7)); }) ==
          LANCE_ERR_INVALID_ARGUMENT);
    LanceIndexSegmentBuildOptions precomputed{};
    precomputed.mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
    CHECK(code_of([&] { ds.new_scalar_index_segment_builder("id", LANCE_SCALAR_BTREE, "", "", &precomputed); }) ==
          LANCE_ERR_INVALID_ARGUMENT);

    CHECK(code_of([&] { ds.train_ivf_model("vec", 0, LANCE_METRIC_L2); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { ds.train_ivf_model("vec", 4, LANCE_METRIC_L2, {99}); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { ds.train_pq_model("vec", 5, 8, LANCE_METRIC_L2, centroids); }) == LANCE_ERR_INVALID_ARGUMENT);

    // Upstream's commit: every problem with the set is INVALID_ARGUMENT
    // (the commit with options keeps this library's codes).
    CHECK(code_of([&] { ds.commit_index_segments("x", "id", {}); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { ds.commit_index_segments_v2("x", "id", {}, lance::CommitOptions{}); }) ==
          LANCE_ERR_NO_SEGMENTS);
    CHECK(code_of([&] { ds.commit_index_segments("x", "id", {{1, 2, 3}}); }) == LANCE_ERR_INVALID_ARGUMENT);
    LanceIndexSegmentBuildOptions one{};
    uint32_t fragment0 = 0;
    one.fragment_ids = &fragment0;
    one.fragment_count = 1;
    std::vector<uint8_t> seg =
        ds.new_scalar_index_segment_builder("tag", LANCE_SCALAR_BITMAP, "tag_idx", "", &one).execute_uncommitted();
    CHECK(code_of([&] { ds.commit_index_segments("tag_idx", "tag", {seg, seg}); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] {
              ds.commit_index_segments_v2("tag_idx", "tag", {seg, seg}, lance::CommitOptions{});
          }) == LANCE_ERR_DUPLICATE_SEGMENT);
    CHECK(code_of([&] { ds.commit_index_segments("tag_idx", "no_such", {seg}); }) != LANCE_OK);

    CHECK(code_of([&] {
              lance::IndexSegmentMetadata::parse(std::vector<uint8_t>{1, 2, 3});
          }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { lance::IndexSegmentMetadata::parse(nullptr, 0); }) == LANCE_ERR_INVALID_ARGUMENT);
    lance::IndexSegmentBuilder fresh = ds.new_scalar_index_segment_builder("tag", LANCE_SCALAR_BITMAP);
    CHECK(code_of([&] { fresh.progress_callback(nullptr, nullptr); }) == LANCE_ERR_INVALID_ARGUMENT);
    lance::IndexSegmentBuilder none(nullptr);
    CHECK(none.c_handle() == nullptr);
    CHECK(code_of([&] { none.execute_uncommitted(); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(ds.index_count() == 1);
}

// This library's forms: a shared VectorModel given by set_model,
// std::function progress, cancel tokens, the commit with options and its
// retry.
static void test_own_forms() {
    lance::Dataset ds = make_dataset("own.lance");
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_PQ, 4, 4);
    lance::VectorModel model = ds.train_vector_model("vec", p, {0, 1});
    // Through bytes and back, as a worker in another process would get it.
    lance::VectorModel shipped = lance::VectorModel::parse(model.serialize());
    CHECK(shipped.fingerprint() == model.fingerprint());
    CHECK(shipped.info().num_partitions == 4 && shipped.info().has_pq_codebook);
    lance::VectorModel moved = std::move(shipped);
    CHECK(shipped.c_handle() == nullptr);

    // The training with progress: its stages, then a callback that throws
    // cancels it and its exception comes out of the call.
    std::vector<std::string> stages;
    lance::VectorModelTrainOptions watching;
    watching.control.progress = [&](const lance::ProgressEvent& e) {
        if (e.event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START) stages.push_back(e.stage);
    };
    lance::VectorModel watched = ds.train_vector_model("vec", p, {0, 1}, watching);
    CHECK(watched.info().num_partitions == 4);
    CHECK((stages == std::vector<std::string>{"train_ivf", "train_pq"}));
    bool thrown = false;
    try {
        lance::VectorModelTrainOptions throwing;
        throwing.control.progress = [](const lance::ProgressEvent& e) {
            if (e.event == LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE) throw std::runtime_error("stop here");
        };
        ds.train_vector_model("vec", p, {0, 1}, throwing);
    } catch (const std::runtime_error& e) {
        thrown = std::string(e.what()) == "stop here";
    }
    CHECK(thrown);

    std::vector<lance::Bytes> segments;
    lance::FragmentPlan plan = ds.plan_fragment_groups(4);
    CHECK(plan.group_count() == 4 && plan.dataset_version() == 1);
    for (uint32_t w = 0; w < 4; w++) {
        uint64_t rows = 0;
        std::vector<uint32_t> frags = plan.group(w, &rows);
        // Equal fragments, consecutive ranges: group w = {2w, 2w + 1}.
        CHECK(frags == std::vector<uint32_t>({2 * w, 2 * w + 1}) && rows == 500);
        LanceIndexSegmentBuildOptions o = options_over(frags);
        lance::IndexSegmentBuilder builder = ds.new_vector_index_segment_builder("vec", p, "", &o);
        CHECK(&builder.set_model(moved) == &builder);
        std::vector<std::string> stages;
        int training_steps = 0;
        builder.progress_callback([&](const lance::ProgressEvent& e) {
            if (e.event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START) stages.push_back(e.stage);
            if (e.event == LANCE_INDEX_BUILD_PROGRESS_STAGE_PROGRESS && std::string(e.stage) == "train_ivf")
                training_steps++;
        });
        segments.push_back(builder.execute_uncommitted());
        CHECK(!stages.empty() && stages.front() == "train_ivf" && stages.back() == "merge_partitions");
        CHECK(training_steps == 0);  // given the model, the builder does not train
        // Single use: the second run and a later model are refused with INVALID_ARGUMENT.
        CHECK(code_of([&] { builder.execute_uncommitted(); }) == LANCE_ERR_INVALID_ARGUMENT);
        CHECK(code_of([&] { builder.set_model(moved); }) == LANCE_ERR_INVALID_ARGUMENT);
        auto meta = lance::IndexSegmentMetadata::parse(segments.back());
        CHECK(meta.fragment_ids() == frags);
        CHECK(meta.index_type() == LANCE_INDEX_IVF_PQ && meta.index_type_name() == "IVF_PQ");
        CHECK(meta.model_fingerprint() == model.fingerprint());
        CHECK(meta.dataset_version() == 1);
        CHECK(meta.name() == "vec_idx");
    }
    CHECK(ds.latest_version() == 1);
    lance::CommitOptions copts;
    copts.job_id = "cpp-job";
    LanceCommitIndexResult r = ds.commit_index_segments_v2("vec_idx", "vec", segments, copts);
    CHECK(r.version == 2 && !r.already_committed);
    CHECK(ds.version() == 2);
    CHECK(ds.index_segments("vec_idx").size() == 4);
    CHECK(ds.index_segments_json().find("\"job_id\":\"cpp-job\"") != std::string::npos);
    CHECK(ds.index_coverage_json("vec_idx").find("\"num_segments\":4") != std::string::npos);
    CHECK(knn_is_exact(ds, 4, 200));
    r = ds.commit_index_segments_v2("vec_idx", "vec", segments, copts);
    CHECK(r.version == 2 && r.already_committed);
    r = ds.commit_index_segments_v2("vec_idx", "vec", segments, lance::CommitOptions{});
    CHECK(r.version == 2 && r.already_committed);
    CHECK(ds.version() == 2);

    // A callback's exception cancels the build (it stops and removes its
    // files: only the UUID's claim stays) and comes back out of
    // execute_uncommitted(); with a token of the caller's, through that token.
    for (int with_token = 0; with_token < 2; with_token++) {
        uint8_t uuid[16] = {0x5e, 0x6d, 0x00, 0x01, 0x22, 0x33, 0x44, 0x55,
                            0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, static_cast<uint8_t>(with_token)};
        LanceIndexSegmentBuildOptions o{};
        o.index_uuid = uuid;
        lance::IndexSegmentBuilder builder = ds.new_vector_index_segment_builder("vec", p, "", &o);
        lance::CancelToken token;
        if (with_token) builder.set_cancel_token(token);
        builder.set_model(moved).progress_callback(
            [](const lance::ProgressEvent&) { throw std::runtime_error("from the callback"); });
        try {
            builder.execute_uncommitted();
            CHECK(false);
        } catch (const std::runtime_error& e) {
            CHECK(std::string(e.what()) == "from the callback");
        }
        CHECK(token.cancelled() == (with_token == 1));
        std::string dir =
            g_dir + "/own.lance/_indices/5e6d0001-2233-4455-6677-8899aabbcc0" + std::to_string(with_token);
        std::vector<std::string> left;
        if (std::filesystem::exists(dir)) {
            for (const auto& f : std::filesystem::recursive_directory_iterator(dir))
                left.push_back(f.path().filename());
        }
        CHECK(left.empty() || left == std::vector<std::string>({"lance-c.claim"}));
    }
    // A C callback set after the throwing std::function replaces it, and a
    // std::function set after a C callback replaces that.
    {
        lance::IndexSegmentBuilder builder = ds.new_vector_index_segment_builder("vec", p);
        ProgressCount counts;
        builder.set_model(moved)
            .progress_callback([](const lance::ProgressEvent&) { throw std::runtime_error("replaced"); })
            .progress_callback(&count_progress, &counts);
        CHECK(code_of([&] { builder.execute_uncommitted(); }) == LANCE_OK);
        CHECK(counts.starts > 0 && counts.completes == counts.starts && !counts.complete_nonzero);

        lance::IndexSegmentBuilder second = ds.new_vector_index_segment_builder("vec", p);
        ProgressCount unused;
        int completes = 0;
        second.set_model(moved)
            .progress_callback(&count_progress, &unused)
            .progress_callback([&](const lance::ProgressEvent& e) {
                if (e.event == LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE && e.completed == 0) completes++;
            });
        CHECK(code_of([&] { second.execute_uncommitted(); }) == LANCE_OK);
        CHECK(unused.starts == 0 && completes == counts.completes);
    }
    // Cancelled from its own progress callback (trained locally: no model).
    {
        lance::CancelToken token;
        lance::IndexSegmentBuilder builder = ds.new_vector_index_segment_builder("vec", p);
        builder.set_cancel_token(token);
        builder.progress_callback([&](const lance::ProgressEvent& e) {
            if (e.event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START) token.cancel();
        });
        CHECK(code_of([&] { builder.execute_uncommitted(); }) == LANCE_ERR_CANCELLED);
        CHECK(token.cancelled());
    }
    CHECK(ds.latest_version() == 2);

    // set_model's refusals, each leaving the builder as it was; a later
    // model replaces the one set before.
    {
        lance::IndexSegmentBuilder builder = ds.new_vector_index_segment_builder("vec", p);
        CHECK(code_of([&] { builder.set_model(shipped); }) == LANCE_ERR_INVALID_ARGUMENT);  // no model
        LanceVectorIndexParams flat = p;
        flat.index_type = LANCE_INDEX_IVF_FLAT;
        CHECK(code_of([&] { ds.new_vector_index_segment_builder("vec", flat).set_model(moved); }) ==
              LANCE_ERR_INVALID_ARGUMENT);  // a codebook IVF_FLAT has no use for
        LanceVectorIndexParams eight = p;
        eight.num_partitions = 8;
        CHECK(code_of([&] { ds.new_vector_index_segment_builder("vec", eight).set_model(moved); }) ==
              LANCE_ERR_INVALID_ARGUMENT);  // 4 partitions for 8
        LanceIndexSegmentBuildOptions local{};
        local.mode = LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN;
        CHECK(code_of([&] { ds.new_vector_index_segment_builder("vec", p, "", &local).set_model(moved); }) ==
              LANCE_ERR_INVALID_ARGUMENT);
        CHECK(code_of([&] { ds.new_scalar_index_segment_builder("id", LANCE_SCALAR_BTREE).set_model(moved); }) ==
              LANCE_ERR_INVALID_ARGUMENT);
        lance::VectorModel other = ds.train_vector_model("vec", p, {2, 3});
        CHECK(other.fingerprint() != model.fingerprint());
        builder.set_model(other).set_model(moved);
        auto meta = lance::IndexSegmentMetadata::parse(builder.execute_uncommitted());
        CHECK(meta.model_fingerprint() == model.fingerprint());
    }

    // Delete and compaction through the wrapper.
    {
        std::string uri2 = g_dir + "/compact.lance";
        LanceDataset* raw2 = tu_write(uri2.c_str(), &g_data, 0, 1000, LANCE_WRITE_CREATE, 250);
        CHECK(raw2 != nullptr);
        lance_dataset_close(raw2);
        auto small = lance::Dataset::open(uri2);
        CHECK(small.delete_rows("id < 250") == 250);
        LanceCompactionOptions copt{};
        copt.target_rows_per_fragment = 2000;
        LanceCompactionMetrics m = small.compact_files(&copt);
        CHECK(m.fragments_added == 1 && m.fragments_removed == 3);
        CHECK(small.count_rows() == 750);
    }
    CHECK(code_of([&] { lance::IndexSegmentMetadata::parse(lance::Bytes{1, 2, 3}); }) == LANCE_ERR_INVALID_ARGUMENT);
    // A worker that must not train gives the model; PRECOMPUTED without one is refused.
    LanceIndexSegmentBuildOptions precomputed{};
    precomputed.mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
    CHECK(code_of([&] { ds.new_vector_index_segment_builder("vec", p, "", &precomputed); }) ==
          LANCE_ERR_INVALID_ARGUMENT);
}

// Dataset::merge_index_segments(): four IVF_FLAT segments of one model
// merged into one (and 2 + 2, then merged again), committed: probing every
// partition equals brute force, and Dataset::read_vector_model() gives the
// model back; refusals throw with the C API's codes.
static void test_merge() {
    lance::Dataset ds = make_dataset("merge.lance");
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, 4, 0);
    lance::VectorModel model = ds.train_vector_model("vec", p, {});
    std::vector<lance::Bytes> segments;
    for (const auto& frags : groups_of_two()) {
        LanceIndexSegmentBuildOptions o = options_over(frags);
        segments.push_back(
            ds.new_vector_index_segment_builder("vec", p, "", &o).set_model(model).execute_uncommitted());
    }
    const lance::Dataset& reader = ds;  // merging reads; it needs no mutable handle
    lance::Bytes merged = reader.merge_index_segments(segments);
    auto meta = lance::IndexSegmentMetadata::parse(merged);
    CHECK(meta.fragment_ids() == std::vector<uint32_t>({0, 1, 2, 3, 4, 5, 6, 7}));
    CHECK(meta.model_fingerprint() == model.fingerprint());
    CHECK(meta.index_type() == LANCE_INDEX_IVF_FLAT && meta.index_type_name() == "IVF_FLAT");
    lance::Bytes first = reader.merge_index_segments({segments[0], segments[1]});
    lance::Bytes second = reader.merge_index_segments({segments[2], segments[3]});
    lance::Bytes again = reader.merge_index_segments({first, second});
    CHECK(lance::IndexSegmentMetadata::parse(again).fragment_ids().size() == 8);
    CHECK(ds.latest_version() == 1);

    LanceCommitIndexResult r = ds.commit_index_segments_v2("vec_idx", "vec", {merged}, lance::CommitOptions{});
    CHECK(r.version == 2 && !r.already_committed);
    CHECK(ds.version() == 2 && ds.index_segments("vec_idx").size() == 1);
    CHECK(knn_is_exact(ds, 4, 0));
    // The committed index's model reads back as the trained one, byte for byte.
    CHECK(reader.read_vector_model("vec_idx").serialize() == model.serialize());
    CHECK(code_of([&] { reader.read_vector_model("no_such_idx"); }) == LANCE_ERR_NOT_FOUND);
    lance::CommitOptions replace;
    replace.replace = true;
    ds.commit_index_segments_v2("vec_idx", "vec", {again}, replace);
    CHECK(ds.version() == 3 && ds.index_segments("vec_idx").size() == 1);
    CHECK(knn_is_exact(ds, 4, 0));

    CHECK(code_of([&] { reader.merge_index_segments({segments[0]}); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { reader.merge_index_segments({}); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { reader.merge_index_segments({segments[0], segments[0]}); }) == LANCE_ERR_DUPLICATE_SEGMENT);
    CHECK(code_of([&] { reader.merge_index_segments({segments[0], first}); }) == LANCE_ERR_OVERLAPPING_SEGMENTS);
    CHECK(code_of([&] {
              reader.merge_index_segments({segments[0], lance::Bytes{1, 2, 3}});
          }) == LANCE_ERR_INVALID_ARGUMENT);
}

// Dataset::optimize_indices: rows appended after the index was built go
// into a delta segment, then the segments merge into one; k-NN through the
// index stays exact; an unknown name and a cancelled token throw with their
// codes and commit nothing.
static void test_optimize() {
    std::string uri = g_dir + "/optimize.lance";
    LanceDataset* raw = tu_write(uri.c_str(), &g_data, 0, 1500, LANCE_WRITE_CREATE, 250);
    CHECK(raw != nullptr);
    lance_dataset_close(raw);
    {
        lance::Dataset first = lance::Dataset::open(uri);
        LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, 4, 0);
        first.create_vector_index("vec", p, "vec_idx");
    }
    raw = tu_write(uri.c_str(), &g_data, 1500, 500, LANCE_WRITE_APPEND, 250);
    CHECK(raw != nullptr);
    lance_dataset_close(raw);
    lance::Dataset ds = lance::Dataset::open(uri);
    CHECK(ds.version() == 3 && ds.fragment_count() == 8);

    lance::OptimizeIndicesOptions unknown;
    unknown.index_names = {"vec_idx", "no_such_idx"};
    CHECK(code_of([&] { ds.optimize_indices(unknown); }) == LANCE_ERR_NOT_FOUND);
    lance::OptimizeIndicesOptions delta;
    delta.num_indices_to_merge = 0;
    lance::CancelToken cancelled;
    cancelled.cancel();
    delta.control = {[](const lance::ProgressEvent&) {}, &cancelled};
    CHECK(code_of([&] { ds.optimize_indices(delta); }) == LANCE_ERR_CANCELLED);
    CHECK(ds.version() == 3 && ds.latest_version() == 3);

    std::vector<std::string> stages;
    delta.control = {[&](const lance::ProgressEvent& e) {
                         if (e.event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START) stages.push_back(e.stage);
                     },
                     nullptr};
    ds.optimize_indices(delta);
    CHECK(!stages.empty() && stages.front() == "optimize_indices");
    CHECK(ds.version() == 4 && ds.index_segments("vec_idx").size() == 2);
    CHECK(knn_is_exact(ds, 4, 0));
    lance::OptimizeIndicesOptions all;
    all.num_indices_to_merge = 2;
    ds.optimize_indices(all);
    CHECK(ds.version() == 5 && ds.index_segments("vec_idx").size() == 1);
    CHECK(knn_is_exact(ds, 4, 0));
}

// The fragment ids of a JSON array of numbers.
static std::vector<uint32_t> json_ids(const JValue* ids) {
    std::vector<uint32_t> out;
    for (size_t i = 0; ids && ids->type == J_ARRAY && i < ids->count; i++)
        out.push_back(static_cast<uint32_t>(ids->items[i]->number));
    return out;
}

// Dataset::plan_index_maintenance and index_segment_metadata: three
// segments over fragments 0-5 (6 and 7 unindexed), planned with at most 2
// segments, give one build over {6, 7} and one merge of the three; the
// plan run as a coordinator runs it (a builder with the model, the merge
// of the committed segments' metadata, one commit with replace) leaves 2
// segments, nothing unindexed, k-NN exact, and nothing more to plan.
static void test_maintenance_plan() {
    lance::Dataset ds = make_dataset("maintain.lance");
    LanceVectorIndexParams p{};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 4;
    lance::VectorModel model = ds.train_vector_model("vec", p, {});
    std::vector<lance::Bytes> built;
    for (std::vector<uint32_t> frags : {std::vector<uint32_t>{0, 1}, {2, 3}, {4, 5}}) {
        LanceIndexSegmentBuildOptions o{};
        o.fragment_ids = frags.data();
        o.fragment_count = frags.size();
        built.push_back(ds.new_vector_index_segment_builder("vec", p, "", &o).set_model(model).execute_uncommitted());
    }
    ds.commit_index_segments_v2("vec_idx", "vec", built, lance::CommitOptions{});
    CHECK(ds.version() == 2);

    LanceIndexMaintenanceOptions options{};
    options.target_rows_per_segment = 1000;
    options.max_segments = 2;
    std::string text = ds.plan_index_maintenance("vec_idx", &options);
    JValue* plan = json_parse(text.c_str());
    const JValue* tasks = json_get(plan, "tasks");
    CHECK(json_get(plan, "segments_before")->number == 3 && json_get(plan, "segments_after")->number == 2);
    const JValue* fingerprint = json_get(plan, "model_fingerprint");
    CHECK(fingerprint && fingerprint->type == J_STRING && model.fingerprint() == fingerprint->string);
    CHECK(tasks && tasks->count == 2);
    std::vector<lance::Bytes> segments;
    for (size_t i = 0; tasks && i < tasks->count; i++) {
        const JValue* t = tasks->items[i];
        std::string kind = json_get(t, "kind")->string;
        std::vector<uint32_t> frags = json_ids(json_get(t, "fragment_ids"));
        if (kind == "build") {
            CHECK(i == 0 && frags == std::vector<uint32_t>({6, 7}));
            LanceIndexSegmentBuildOptions o{};
            o.fragment_ids = frags.data();
            o.fragment_count = frags.size();
            segments.push_back(
                ds.new_vector_index_segment_builder("vec", p, "vec_idx", &o).set_model(model).execute_uncommitted());
            continue;
        }
        CHECK(kind == "merge" && frags == std::vector<uint32_t>({0, 1, 2, 3, 4, 5}));
        const JValue* uuids = json_get(t, "segment_uuids");
        CHECK(uuids && uuids->count == 3);
        std::vector<lance::Bytes> sources;
        for (size_t k = 0; uuids && k < uuids->count; k++) {
            sources.push_back(ds.index_segment_metadata("vec_idx", uuids->items[k]->string));
            auto meta = lance::IndexSegmentMetadata::parse(sources.back());
            CHECK(meta.fragment_ids() == std::vector<uint32_t>({2 * uint32_t(k), 2 * uint32_t(k) + 1}));
            CHECK(meta.model_fingerprint() == model.fingerprint());
        }
        segments.push_back(ds.merge_index_segments(sources));
    }
    json_free(plan);
    lance::CommitOptions replace;
    replace.replace = true;
    LanceCommitIndexResult r = ds.commit_index_segments_v2("vec_idx", "vec", segments, replace);
    CHECK(r.version == 3 && !r.already_committed);
    CHECK(ds.index_segments("vec_idx").size() == 2);
    CHECK(ds.index_coverage_json("vec_idx").find("\"unindexed_fragments\":[]") != std::string::npos);
    CHECK(knn_is_exact(ds, 4, 0));
    plan = json_parse(ds.plan_index_maintenance("vec_idx", &options).c_str());
    CHECK(json_get(plan, "tasks") && json_get(plan, "tasks")->count == 0);
    json_free(plan);
    // The defaults (nullptr) plan from the same version: the two segments merge.
    plan = json_parse(ds.plan_index_maintenance("vec_idx").c_str());
    CHECK(json_get(plan, "segments_after")->number == 1 && json_get(plan, "dataset_version")->number == 3);
    json_free(plan);

    CHECK(code_of([&] { ds.plan_index_maintenance("no_such_idx"); }) == LANCE_ERR_NOT_FOUND);
    CHECK(code_of([&] { ds.plan_index_maintenance(""); }) == LANCE_ERR_INVALID_ARGUMENT);
    LanceIndexMaintenanceOptions inverted{};
    inverted.target_rows_per_segment = 100;
    inverted.small_segment_rows = 101;
    CHECK(code_of([&] { ds.plan_index_maintenance("vec_idx", &inverted); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { ds.index_segment_metadata("vec_idx", "not-a-uuid"); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { ds.index_segment_metadata("vec_idx", "00000000-0000-0000-0000-000000000000"); }) ==
          LANCE_ERR_NOT_FOUND);
    CHECK(code_of([&] { ds.index_segment_metadata("no_such_idx", "00000000000000000000000000000000"); }) ==
          LANCE_ERR_NOT_FOUND);
}

// Distributed training through the wrappers: a coordinator and two workers
// (2000 rows: every row is in the sample, so the split does not matter),
// the same model as one worker over all fragments, statistics of another
// round refused with their code, a coordinator resumed from its request.
// The centroid values of a model.
static std::vector<float> centroids_of(const lance::VectorModel& model) {
    ArrowArray a{};
    ArrowSchema s{};
    if (lance_vector_model_centroids(model.c_handle(), &a, &s) != 0) return {};
    const ArrowArray* child = a.children[0];
    const float* values = static_cast<const float*>(child->buffers[1]) + child->offset;
    std::vector<float> out(values, values + child->length);
    a.release(&a);
    s.release(&s);
    return out;
}

static lance::VectorModel train_across(lance::Dataset& ds, const LanceVectorIndexParams& p,
                                       const std::vector<std::vector<uint32_t>>& groups) {
    lance::VectorTraining training("vec", p, 5);
    std::vector<lance::VectorTrainingWorker> workers;
    for (const auto& g : groups) workers.emplace_back(ds, g);
    while (!training.done()) {
        lance::Bytes request = training.request();
        std::vector<lance::Bytes> stats;
        for (auto& w : workers) stats.push_back(w.answer(request));
        training.reduce(stats);
    }
    return training.model();
}

static void test_distributed_training() {
    lance::Dataset ds = make_dataset("training.lance");
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_PQ, 4, 4);
    lance::VectorModel split = train_across(ds, p, {{0, 2, 4, 6}, {1, 3, 5, 7}});
    lance::VectorModel whole = train_across(ds, p, {{}});
    CHECK(split.info().num_partitions == 4 && split.info().has_pq_codebook);
    std::vector<float> a = centroids_of(split), b = centroids_of(whole);
    CHECK(a.size() == 4 * 16 && a.size() == b.size());
    for (size_t i = 0; i < a.size() && i < b.size(); i++)
        CHECK(std::fabs(a[i] - b[i]) <= 1e-5f * (1 + std::fabs(a[i])));

    lance::VectorTraining training("vec", p, 5);
    lance::VectorTrainingWorker worker(ds, {});
    lance::Bytes first = worker.answer(training.request());
    training.reduce({first});
    CHECK(training.info().phase == LANCE_TRAINING_IVF && training.info().rounds == 1);
    CHECK(code_of([&] { training.reduce({first}); }) == LANCE_ERR_MODEL_MISMATCH);
    lance::VectorTraining resumed = lance::VectorTraining::resume(training.request());
    CHECK(resumed.request() == training.request());
    CHECK(code_of([&] { training.model(); }) == LANCE_ERR_INVALID_ARGUMENT);

    // A round with progress: the events, then a callback that throws
    // (the round stops, the exception comes out, the worker answers again
    // with the same bytes), then a cancel token.
    lance::VectorTrainingWorker fresh(ds, {});
    std::vector<std::string> stages;
    uint64_t total = 0, last = 0;
    lance::TrainingAnswerOptions watching;
    watching.control.progress = [&](const lance::ProgressEvent& e) {
        if (e.event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START) stages.push_back(e.stage), total = e.total;
        if (e.event == LANCE_INDEX_BUILD_PROGRESS_STAGE_PROGRESS) last = e.completed;
    };
    lance::Bytes with_progress = fresh.answer(training.request(), watching);
    // The first run draws the sample (all 2000 rows), then assigns the IVF
    // sample (the rows whose keys fall under the 4 x 256 rows' threshold).
    CHECK(stages == std::vector<std::string>({"training_sample", "training_ivf_round"}));
    CHECK(last == total && total > 800 && total < 1300);
    CHECK(with_progress == worker.answer(training.request()));
    int events = 0;
    try {
        lance::TrainingAnswerOptions throwing;
        throwing.control.progress = [&](const lance::ProgressEvent&) {
            events++;
            throw std::runtime_error("stop the round");
        };
        fresh.answer(training.request(), throwing);
        CHECK(false);
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()) == "stop the round");
    }
    CHECK(events == 1);
    CHECK(fresh.answer(training.request()) == with_progress);
    lance::CancelToken token;
    token.cancel();
    lance::TrainingAnswerOptions cancelled;
    cancelled.control.cancel_token = &token;
    CHECK(code_of([&] { fresh.answer(training.request(), cancelled); }) == LANCE_ERR_CANCELLED);
    CHECK(fresh.answer(training.request(), lance::TrainingAnswerOptions{}) == with_progress);
}

// The core's training options through the wrappers: the partition count
// from a target, a seed's one fingerprint, the seeded rounds' stages, a
// one-shot build with options and a seeded segment builder.
static void test_training_options() {
    lance::Dataset ds = make_dataset("options.lance");
    CHECK(ds.recommended_num_partitions(LANCE_INDEX_IVF_FLAT, 500) == 4);
    CHECK(ds.recommended_num_partitions(LANCE_INDEX_IVF_FLAT, 500, {0, 1}) == 1);
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_PQ, 0, 4);
    p.sample_rate = 64;  // a 4 x 64 sample of the 2000 rows: the seed draws it
    LanceVectorTrainingOptions o{};
    o.target_partition_size = 500;
    o.use_seed = 1;
    o.seed = 21;
    std::vector<std::string> stages;
    lance::VectorModelTrainOptions with_options;
    with_options.training = o;
    with_options.control.progress = [&](const lance::ProgressEvent& e) {
        if (e.event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START) stages.push_back(e.stage);
    };
    lance::VectorModel first = ds.train_vector_model("vec", p, {}, with_options);
    CHECK(first.info().num_partitions == 4 && first.info().has_pq_codebook);
    CHECK(!stages.empty() && stages.front() == "training_sample");
    with_options.control = {};
    CHECK(ds.train_vector_model("vec", p, {}, with_options).fingerprint() == first.fingerprint());
    with_options.training->seed = 22;
    CHECK(ds.train_vector_model("vec", p, {}, with_options).fingerprint() != first.fingerprint());
    with_options.training->reserved = 1;
    CHECK(code_of([&] { ds.train_vector_model("vec", p, {}, with_options); }) == LANCE_ERR_INVALID_ARGUMENT);

    // Two seeded segment builders over the same fragments train one model.
    LanceVectorTrainingOptions seeded{};
    seeded.use_seed = 1;
    seeded.seed = 3;
    LanceVectorIndexParams flat = sk_params(LANCE_INDEX_IVF_FLAT, 2, 0);
    std::vector<std::string> fingerprints;
    for (int i = 0; i < 2; i++) {
        std::vector<uint32_t> fragments = {0, 1, 2, 3};
        LanceIndexSegmentBuildOptions bo = options_over(fragments);
        lance::IndexSegmentBuilder b = ds.new_vector_index_segment_builder("vec", flat, "seeded_idx", &bo);
        b.set_training_options(seeded);
        fingerprints.push_back(lance::IndexSegmentMetadata::parse(b.execute_uncommitted()).model_fingerprint());
    }
    CHECK(fingerprints[0].size() == 64 && fingerprints[0] == fingerprints[1]);

    // A one-shot build whose partition count comes from the target.
    LanceVectorTrainingOptions target{};
    target.target_partition_size = 500;
    lance::IndexCreateOptions create;
    create.training = target;
    ds.create_vector_index_v2("vec", sk_params(LANCE_INDEX_IVF_FLAT, 0, 0), "target_idx", false, create);
    CHECK(ds.index_count() == 1);
    CHECK(knn_is_exact(ds, 4, 0));
}

// The members deprecated in 0.5 (removed in 0.6) still forward to their
// replacements: each one's error code, as before.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void test_deprecated_members() {
    lance::Dataset ds = make_dataset("deprecated.lance");
    LanceVectorIndexParams p = sk_params(LANCE_INDEX_IVF_FLAT, 4, 0);
    LanceVectorTrainingOptions reserved{};
    reserved.reserved = 1;
    lance::CancelToken cancelled;
    cancelled.cancel();
    auto ignore = [](const lance::ProgressEvent&) {};
    CHECK(code_of([&] { ds.create_vector_index_with_options("vec", p, reserved); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { ds.train_vector_model_with_options("vec", p, reserved); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { ds.train_vector_model("vec", p, {}, ignore, &cancelled); }) == LANCE_ERR_CANCELLED);
    CHECK(code_of([&] { ds.commit_index_segments_with_options("x", "vec", {}, lance::CommitOptions{}); }) ==
          LANCE_ERR_NO_SEGMENTS);
    CHECK(code_of([&] { ds.optimize_indices(lance::OptimizeIndicesOptions{}, ignore, &cancelled); }) ==
          LANCE_ERR_CANCELLED);
    lance::VectorTrainingWorker worker(ds, {});
    lance::Bytes garbage = {1, 2, 3};
    CHECK(code_of([&] { worker.run(garbage); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(code_of([&] { worker.run(garbage, ignore, &cancelled); }) == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(ds.index_count() == 0 && ds.version() == 1);
}
#pragma GCC diagnostic pop

int main() {
    g_data = tu_make_data(2000, 16, 8, 0.5f, 11);
    char* dir = tu_temp_dir("cppseg");
    g_dir = dir;
    RUN(test_upstream_ivf_flat);
    RUN(test_upstream_ivf_pq);
    RUN(test_upstream_scalar_and_bad_input);
    RUN(test_own_forms);
    RUN(test_merge);
    RUN(test_optimize);
    RUN(test_maintenance_plan);
    RUN(test_distributed_training);
    RUN(test_training_options);
    RUN(test_deprecated_members);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&g_data);
    return tu_finish("test_segment_wrapper");
}
