//! The shared vector model of a committed index, read back from its
//! segments (lance.h lance_dataset_read_vector_model()): a coordinator that
//! lost the model's bytes, or an index another SDK built, can still build
//! delta segments that merge with the committed ones.
//!
//! Nothing here reads an index file: each segment is opened by the core's
//! own reader (`DatasetIndexInternalExt::open_vector_index`, lance-14.0.2
//! src/index.rs), whose `VectorIndex` hands back the IVF model it decoded
//! from the index file's global buffer (`ivf_model()`, lance-14.0.2
//! src/index/vector/ivf/v2.rs `IVFIndex::try_new`), its metric, and the
//! quantizer it rebuilt from the storage file's metadata (`quantizer()`,
//! lance-index-14.0.2 src/vector/storage.rs): the PQ codebook, or the
//! RaBitQ rotation.

use arrow_array::FixedSizeListArray;
use lance::index::DatasetIndexInternalExt;
use lance::Dataset;
use lance_index::metrics::NoOpMetricsCollector;
use lance_index::vector::bq::RQRotationType;
use lance_index::vector::quantizer::{QuantizationType, Quantizer};
use lance_index::vector::v3::subindex::SubIndexType;
use lance_index::vector::VectorIndex;
use lance_table::format::IndexMetadata;

use crate::boundary::error::{invalid, not_supported, CResult};
use crate::boundary::params::metric_to_c;
use crate::index::catalog::named_segments;
use crate::index::codec::{is_vector, segment_type_name};
use crate::index::kinds::{self, vector_of};
use crate::index::vector_model::{f32_values, LanceVectorModel, PqModel, RqRotation};
use crate::process::runtime::block_on;

/// The model of index `name` in `ds`: every segment's, which must be one
/// model (one fingerprint and one index type).
pub fn read_committed_model(ds: &Dataset, name: &str) -> CResult<LanceVectorModel> {
    let segments = named_segments(ds, name)?;
    let mut first: Option<(LanceVectorModel, &IndexMetadata)> = None;
    for segment in &segments {
        // Segments of old manifests record no details: the core's reader decides.
        if segment.index_details.is_some() && !is_vector(segment) {
            return Err(invalid(format!(
                "index '{name}' is a {} index, not a vector index: it has no model to read",
                segment_type_name(segment)
            )));
        }
        let model = segment_model(ds, name, segment)?;
        match &first {
            None => first = Some((model, segment)),
            Some((kept, at)) if kept.fingerprint != model.fingerprint || kept.index_type != model.index_type => {
                return Err(invalid(format!(
                    "index '{name}' holds segments of different models: segment {} has model {} ({}), segment {} \
                     has model {} ({}); read the model of an index whose segments share one",
                    at.uuid,
                    kept.fingerprint,
                    segment_type_name(at),
                    segment.uuid,
                    model.fingerprint,
                    segment_type_name(segment)
                )))
            }
            Some(_) => {}
        }
    }
    Ok(first.expect("named_segments returns at least one segment").0)
}

/// One segment's model, as the core's reader of the segment gives it.
fn segment_model(ds: &Dataset, name: &str, segment: &IndexMetadata) -> CResult<LanceVectorModel> {
    let field = *segment
        .fields
        .first()
        .ok_or_else(|| invalid(format!("segment {} of index '{name}' names no column", segment.uuid)))?;
    let column = ds.schema().field_path(field)?;
    let index = block_on(ds.open_vector_index(&column, &segment.uuid, &NoOpMetricsCollector))??;
    let at = format!("segment {} of index '{name}'", segment.uuid);
    let metric = metric_to_c(index.metric_type());
    let index_type = index_type_of(&*index, &at)?;
    let centroids =
        index.ivf_model().centroids.as_ref().ok_or_else(|| not_supported(format!("{at} holds no IVF centroids")))?;
    let dim = centroids.value_length() as usize;
    let centroids = f32_rows(centroids, &format!("the IVF centroids of {at}"))?;
    let quantizer = index.quantizer();
    let pq = match &quantizer {
        Quantizer::Product(pq) => Some(PqModel {
            num_sub_vectors: pq.num_sub_vectors,
            num_bits: pq.num_bits as usize,
            codebook: f32_rows(&pq.codebook, &format!("the PQ codebook of {at}"))?,
        }),
        _ => None,
    };
    let model = LanceVectorModel::new(metric, dim, centroids, pq)?.trained_for(index_type)?;
    match &quantizer {
        Quantizer::Rabit(rq) => {
            let metadata = rq.metadata_ref();
            // A model holds the core's fast rotation only (index/vector_model.rs
            // RqRotation): a matrix rotation has no place in its bytes.
            match (&metadata.rotation_type, &metadata.fast_rotation_signs) {
                (RQRotationType::Fast, Some(signs)) => {
                    model.with_rotation(RqRotation { num_bits: metadata.num_bits, signs: signs.clone() })
                }
                _ => Err(not_supported(format!(
                    "{at} rotates its vectors by a RaBitQ rotation matrix; a LanceVectorModel carries only the \
                     fast rotation (sign flips) that this library and the core's default IVF_RQ build use"
                ))),
            }
        }
        _ => Ok(model),
    }
}

/// The `LanceVectorIndexType` of an opened segment, from the core's own
/// account of its sub-index and quantizer.
fn index_type_of(index: &dyn VectorIndex, at: &str) -> CResult<i32> {
    let (sub_index, quantization) = index.sub_index_type();
    let quantizer = match quantization {
        QuantizationType::Flat => Some(kinds::Quantizer::Flat),
        QuantizationType::Scalar => Some(kinds::Quantizer::Sq),
        QuantizationType::Product => Some(kinds::Quantizer::Pq),
        QuantizationType::Rabit => Some(kinds::Quantizer::Rq),
        QuantizationType::FlatBin => None,
    };
    let hnsw = matches!(sub_index, SubIndexType::Hnsw);
    quantizer.and_then(|quantizer| vector_of(hnsw, quantizer)).map(|k| k.code).ok_or_else(|| {
        not_supported(format!(
            "{at} is an index of sub-index {sub_index} and quantizer {quantization:?}, which no \
             LanceVectorIndexType names (binary vectors: a LanceVectorModel holds float32 centroids)"
        ))
    })
}

/// The float32 values of a FixedSizeList array, row after row.
fn f32_rows(list: &FixedSizeListArray, what: &str) -> CResult<Vec<f32>> {
    f32_values(list).ok_or_else(|| {
        not_supported(format!("{what} are {} values; a LanceVectorModel holds float32 values", list.value_type()))
    })
}
