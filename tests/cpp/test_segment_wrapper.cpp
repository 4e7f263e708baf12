// The C++ wrappers of the distributed build: move-only model, builder and
// metadata handles, byte vectors, and exceptions with the library's codes.
#include <cstring>
#include <type_traits>

#include "lance/lance.hpp"
#include "test_util.h"

static_assert(!std::is_copy_constructible_v<lance::VectorModel>, "VectorModel must be move-only");
static_assert(std::is_move_constructible_v<lance::VectorModel>, "VectorModel must move");
static_assert(!std::is_copy_constructible_v<lance::SegmentBuilder>, "SegmentBuilder must be move-only");
static_assert(!std::is_copy_constructible_v<lance::SegmentMetadata>, "SegmentMetadata must be move-only");

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
        for (uint32_t w = 0; w < 4; w++) {
            uint32_t frags[2] = {2 * w, 2 * w + 1};
            LanceIndexSegmentBuildOptions o{};
            o.fragment_ids = frags;
            o.fragment_count = 2;
            o.model = moved.c_handle();
            o.train = LANCE_TRAIN_NEVER;
            lance::SegmentBuilder builder = ds.vector_segment_builder("vec", p, o);
            segments.push_back(builder.execute_uncommitted());
            // Single use: the second run throws with INVALID_ARGUMENT.
            try {
                builder.execute_uncommitted();
                CHECK(false);
            } catch (const lance::Error& e) {
                CHECK(e.code() == LANCE_ERR_INVALID_ARGUMENT);
            }
            auto meta = lance::SegmentMetadata::parse(segments.back());
            CHECK(meta.fragment_ids() == std::vector<uint32_t>({2 * w, 2 * w + 1}));
            CHECK(meta.index_type() == "IVF_PQ");
            CHECK(meta.model_fingerprint() == model.fingerprint());
            CHECK(meta.dataset_version() == 1);
        }
        CHECK(ds.latest_version() == 1);
        ds.commit_index_segments("vec_idx", "vec", segments);
        CHECK(ds.version() == 2);
        CHECK(ds.index_segments("vec_idx").size() == 4);

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
