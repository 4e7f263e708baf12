// The C++ wrappers of the distributed build: move-only model, builder and
// metadata handles, byte vectors, and exceptions with the library's codes.
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "lance/lance.hpp"
#include "test_util.h"

static_assert(!std::is_copy_constructible_v<lance::VectorModel>, "VectorModel must be move-only");
static_assert(std::is_move_constructible_v<lance::VectorModel>, "VectorModel must move");
static_assert(!std::is_copy_constructible_v<lance::SegmentBuilder>, "SegmentBuilder must be move-only");
static_assert(!std::is_copy_constructible_v<lance::SegmentMetadata>, "SegmentMetadata must be move-only");
static_assert(!std::is_copy_constructible_v<lance::CancelToken>, "CancelToken must be move-only");
static_assert(!std::is_copy_constructible_v<lance::FragmentPlan>, "FragmentPlan must be move-only");

int main() {
    TuData data = tu_make_data(2000, 16, 8, 0.5f, 11);
    char* dir = tu_temp_dir("cppseg");
    std::string uri = std::string(dir) + "/seg.lance";
    {
        LanceDataset* raw = tu_write(uri.c_str(), &data, 0, data.rows, LANCE_WRITE_CREATE, 250);
        CHECK(raw != nullptr);
        lance_dataset_close(raw);
        auto ds = lance::Dataset::open(uri);

        LanceVectorIndexParams p{};
        p.index_type = LANCE_INDEX_IVF_PQ;
        p.num_partitions = 4;
        p.num_sub_vectors = 4;
        lance::VectorModel model = ds.train_vector_model("vec", p, {0, 1});
        // Through bytes and back, as a worker in another process would get it.
        lance::VectorModel shipped = lance::VectorModel::parse(model.serialize());
        CHECK(shipped.fingerprint() == model.fingerprint());
        CHECK(shipped.info().num_partitions == 4 && shipped.info().has_pq_codebook);
        lance::VectorModel moved = std::move(shipped);
        CHECK(shipped.c_handle() == nullptr);

        std::vector<lance::Bytes> segments;
        lance::FragmentPlan plan = ds.plan_fragment_groups(4);
        CHECK(plan.group_count() == 4 && plan.dataset_version() == 1);
        for (uint32_t w = 0; w < 4; w++) {
            uint64_t rows = 0;
            std::vector<uint32_t> frags = plan.group(w, &rows);
            // Equal fragments go round-robin: group w = {w, w + 4}.
            CHECK(frags == std::vector<uint32_t>({w, w + 4}) && rows == 500);
            LanceIndexSegmentBuildOptions o{};
            o.fragment_ids = frags.data();
            o.fragment_count = frags.size();
            o.model = moved.c_handle();
            o.train = LANCE_TRAIN_NEVER;
            lance::SegmentBuilder builder = ds.vector_segment_builder("vec", p, o);
            std::vector<std::string> stages;
            builder.set_progress([&](const lance::ProgressEvent& e) {
                if (e.event == LANCE_PROGRESS_STAGE_START) stages.push_back(e.stage);
            });
            segments.push_back(builder.execute_uncommitted());
            CHECK(!stages.empty() && stages.back() == "merge_partitions");
            // Single use: the second run throws with INVALID_ARGUMENT.
            try {
                builder.execute_uncommitted();
                CHECK(false);
            } catch (const lance::Error& e) {
                CHECK(e.code() == LANCE_ERR_INVALID_ARGUMENT);
            }
            auto meta = lance::SegmentMetadata::parse(segments.back());
            CHECK(meta.fragment_ids() == frags);
            CHECK(meta.index_type() == "IVF_PQ");
            CHECK(meta.model_fingerprint() == model.fingerprint());
            CHECK(meta.dataset_version() == 1);
        }
        CHECK(ds.latest_version() == 1);
        lance::CommitOptions copts;
        copts.job_id = "cpp-job";
        LanceCommitIndexResult r = ds.commit_index_segments("vec_idx", "vec", segments, copts);
        CHECK(r.version == 2 && !r.already_committed);
        CHECK(ds.version() == 2);
        CHECK(ds.index_segments("vec_idx").size() == 4);
        r = ds.commit_index_segments("vec_idx", "vec", segments, copts);
        CHECK(r.version == 2 && r.already_committed);
        try {
            ds.commit_index_segments("vec_idx2", "vec", {});
            CHECK(false);
        } catch (const lance::Error& e) {
            CHECK(e.code() == LANCE_ERR_NO_SEGMENTS);
        }

        // A callback's exception comes back out of execute_uncommitted().
        {
            LanceIndexSegmentBuildOptions o{};
            o.model = moved.c_handle();
            lance::SegmentBuilder builder = ds.vector_segment_builder("vec", p, o);
            builder.set_progress([](const lance::ProgressEvent&) { throw std::runtime_error("from the callback"); });
            try {
                builder.execute_uncommitted();
                CHECK(false);
            } catch (const std::runtime_error& e) {
                CHECK(std::string(e.what()) == "from the callback");
            }
        }
        // Cancelled from its own progress callback.
        {
            lance::CancelToken token;
            LanceIndexSegmentBuildOptions o{};
            lance::SegmentBuilder builder = ds.vector_segment_builder("vec", p, o);
            builder.set_cancel_token(token);
            builder.set_progress([&](const lance::ProgressEvent& e) {
                if (e.event == LANCE_PROGRESS_STAGE_START) token.cancel();
            });
            try {
                builder.execute_uncommitted();
                CHECK(false);
            } catch (const lance::Error& e) {
                CHECK(e.code() == LANCE_ERR_CANCELLED);
            }
            CHECK(token.cancelled());
        }
        CHECK(ds.latest_version() == 2);
        // Delete and compaction through the wrapper (a dataset without
        // indices: the core keeps fragments of different segments apart).
        {
            std::string uri2 = std::string(dir) + "/compact.lance";
            LanceDataset* raw2 = tu_write(uri2.c_str(), &data, 0, 1000, LANCE_WRITE_CREATE, 250);
            CHECK(raw2 != nullptr);
            lance_dataset_close(raw2);
            auto small = lance::Dataset::open(uri2);
            CHECK(small.delete_rows("id < 250") == 250);
            LanceCompactionMetrics m = small.compact_files(2000);
            CHECK(m.fragments_added == 1 && m.fragments_removed == 3);
            CHECK(small.count_rows() == 750);
        }
        try {
            lance::SegmentMetadata::parse(lance::Bytes{1, 2, 3});
            CHECK(false);
        } catch (const lance::Error& e) {
            CHECK(e.code() == LANCE_ERR_INVALID_ARGUMENT);
        }
        try {
            LanceIndexSegmentBuildOptions o{};
            o.train = LANCE_TRAIN_NEVER;
            ds.vector_segment_builder("vec", p, o);
            CHECK(false);
        } catch (const lance::Error& e) {
            CHECK(e.code() == LANCE_ERR_INVALID_ARGUMENT);
        }
    }
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_segment_wrapper");
}
