//! lance.h section "Distributed index builds: uncommitted segments" (RFC
//! E1): a segment builder bound to one dataset snapshot builds an index
//! segment over a fragment subset without committing and returns the
//! segment's metadata as bytes.  The build itself is floor/build.rs.

use std::ffi::c_char;
use std::sync::Arc;

use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use lance::Dataset;
use lance::index::vector::VectorIndexParams;
use lance_index::IndexType;
use uuid::Uuid;

use crate::floor::arrow::read_f32_list;
use crate::floor::build::{BuildRequest, LanceIndexSegmentBuilder, VectorSegment};
use crate::floor::catalog::{check_partitions, check_vector_column, optional_index_name, require_column};
use crate::floor::codec::{encode_metadata, MODEL_FINGERPRINT_HINT};
use crate::floor::error::{guard_handle, invalid, not_supported, status, CResult, Context};
use crate::floor::ffi::{free_handle, handle_mut, handle_ref, optional_str, require_out, required_nonempty_str, slice_arg, write_bytes_out};
use crate::floor::handle::{dataset_ref, fragment_list, LanceDataset};
use crate::floor::params::{
    build_mode, core_picks_segment_uuid, ivf_params, pq_params, scalar_kind, scalar_params, uses_pq, vector_params_with_ivf, BuildMode,
    CoreParams, LanceVectorIndexParams,
};
use crate::floor::vector_model::{check_codebook_shape, fsl, inject_rotation, LanceVectorModel, PqModel, RqRotation};

/// Mirrors `LanceIndexSegmentBuildOptions` in lance.h.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct LanceIndexSegmentBuildOptions {
    pub fragment_ids: *const u32,
    pub fragment_count: usize,
    pub index_uuid: *const u8,
    pub ivf_centroids: *const FFI_ArrowArray,
    pub ivf_centroids_schema: *const FFI_ArrowSchema,
    pub pq_codebook: *const FFI_ArrowArray,
    pub pq_codebook_schema: *const FFI_ArrowSchema,
    pub mode: i32,
}
crate::c_layout!(LanceIndexSegmentBuildOptions, 64;
    fragment_ids @ 0,
    fragment_count @ 8,
    index_uuid @ 16,
    ivf_centroids @ 24,
    ivf_centroids_schema @ 32,
    pq_codebook @ 40,
    pq_codebook_schema @ 48,
    mode @ 56,
);


/// The options after their mode was validated (NULL = the defaults).
#[derive(Clone, Copy)]
struct Options {
    fragment_ids: *const u32,
    fragment_count: usize,
    index_uuid: *const u8,
    ivf_centroids: *const FFI_ArrowArray,
    ivf_centroids_schema: *const FFI_ArrowSchema,
    pq_codebook: *const FFI_ArrowArray,
    pq_codebook_schema: *const FFI_ArrowSchema,
    mode: BuildMode,
}

impl Options {
    unsafe fn from_c(o: *const LanceIndexSegmentBuildOptions) -> CResult<Self> {
        let Some(o) = o.as_ref() else {
            return Ok(Options {
                fragment_ids: std::ptr::null(),
                fragment_count: 0,
                index_uuid: std::ptr::null(),
                ivf_centroids: std::ptr::null(),
                ivf_centroids_schema: std::ptr::null(),
                pq_codebook: std::ptr::null(),
                pq_codebook_schema: std::ptr::null(),
                mode: BuildMode::Auto,
            });
        };
        Ok(Options {
            fragment_ids: o.fragment_ids,
            fragment_count: o.fragment_count,
            index_uuid: o.index_uuid,
            ivf_centroids: o.ivf_centroids,
            ivf_centroids_schema: o.ivf_centroids_schema,
            pq_codebook: o.pq_codebook,
            pq_codebook_schema: o.pq_codebook_schema,
            mode: build_mode(o.mode)?,
        })
    }

    fn has_model(&self) -> bool {
        !self.ivf_centroids.is_null() || !self.pq_codebook.is_null()
    }
}

/// The optional 16-byte caller UUID.
unsafe fn segment_uuid(ptr: *const u8) -> CResult<Option<Uuid>> {
    if ptr.is_null() {
        return Ok(None);
    }
    let bytes = slice_arg(ptr, 16, "options->index_uuid")?;
    Ok(Some(Uuid::from_bytes(bytes.try_into().expect("16 bytes"))))
}

/// A model given to a vector build, from the options' Arrow arrays or from
/// a model handle, before it is checked against the params and the column.
struct Injected {
    centroids: Vec<f32>,
    dim: usize,
    codebook: Option<Vec<f32>>,
    /// The PQ shape a model handle records; Arrow arrays take the params'.
    pq_shape: Option<(usize, usize)>,
    /// An IVF_RQ model's RaBitQ rotation (model handles only).
    rotation: Option<RqRotation>,
    fingerprint: String,
}

impl Injected {
    fn from_handle(m: &LanceVectorModel, p: &LanceVectorIndexParams) -> CResult<Self> {
        if m.metric != p.metric {
            return Err(invalid(format!(
                "the model was trained for metric {}, the builder's params->metric is {}",
                m.metric, p.metric
            )));
        }
        Ok(Injected {
            centroids: m.centroids.clone(),
            dim: m.dim,
            codebook: m.pq.as_ref().map(|pq| pq.codebook.clone()),
            pq_shape: m.pq.as_ref().map(|pq| (pq.num_sub_vectors, pq.num_bits)),
            rotation: m.rq.clone(),
            fingerprint: m.fingerprint.clone(),
        })
    }

    unsafe fn from_options(o: &Options, p: &LanceVectorIndexParams) -> CResult<Option<Self>> {
        if o.ivf_centroids.is_null() {
            if !o.pq_codebook.is_null() {
                return Err(invalid(
                    "options->pq_codebook needs options->ivf_centroids: the codebook is trained on IVF residuals",
                ));
            }
            return Ok(None);
        }
        let (centroids, dim) = read_f32_list(o.ivf_centroids, o.ivf_centroids_schema, "options->ivf_centroids")?;
        let codebook = if o.pq_codebook.is_null() {
            None
        } else {
            let (values, width) = read_f32_list(o.pq_codebook, o.pq_codebook_schema, "options->pq_codebook")?;
            // Rows of the full dimension (2^bits of them), or of one sub-vector
            // (sub-vectors * 2^bits): the same values either way.
            let sub_vectors = pq_params(p).num_sub_vectors;
            if width != dim && width * sub_vectors != dim {
                return Err(invalid(format!(
                    "options->pq_codebook has rows of {width} values; with dimension {dim} and {sub_vectors} \
                     sub-vectors they must hold {dim} or {} values",
                    dim / sub_vectors.max(1)
                )));
            }
            Some(values)
        };
        // Arrow arrays carry no fingerprint of their own; fingerprint their content.
        let pq = codebook.clone().map(|codebook| {
            let pq = pq_params(p);
            PqModel { num_sub_vectors: pq.num_sub_vectors, num_bits: pq.num_bits, codebook }
        });
        let model = LanceVectorModel::new(p.metric, dim, centroids.clone(), pq)
            .context("options->ivf_centroids and options->pq_codebook")?;
        Ok(Some(Injected { centroids, dim, codebook, pq_shape: None, rotation: None, fingerprint: model.fingerprint }))
    }
}

/// The core's parameters of a vector build: trained by the build, or with
/// the given model (checked against the params and the column's dimension).
fn vector_core_params(
    p: &LanceVectorIndexParams,
    column: &str,
    dim: usize,
    model: Option<Injected>,
) -> CResult<(IndexType, VectorIndexParams)> {
    let mut ivf = ivf_params(p);
    let mut pq = pq_params(p);
    let Some(m) = model else { return vector_params_with_ivf(p, ivf, pq) };
    if m.dim != dim {
        return Err(invalid(format!("the model has dimension {}, column '{column}' has {dim}", m.dim)));
    }
    let num_partitions = m.centroids.len() / m.dim;
    if p.num_partitions != 0 && p.num_partitions as usize != num_partitions {
        return Err(invalid(format!(
            "the model has {num_partitions} IVF partitions, params->num_partitions is {}",
            p.num_partitions
        )));
    }
    ivf.num_partitions = Some(num_partitions);
    ivf.centroids = Some(Arc::new(fsl(m.centroids, m.dim)?));
    if uses_pq(p.index_type) {
        let codebook = m
            .codebook
            .ok_or_else(|| invalid("an IVF_PQ or IVF_HNSW_PQ build with a given model needs its PQ codebook too"))?;
        if let Some((sub_vectors, bits)) = m.pq_shape {
            if (p.num_sub_vectors != 0 && sub_vectors != p.num_sub_vectors as usize)
                || (p.num_bits != 0 && bits != p.num_bits as usize)
            {
                return Err(invalid(format!(
                    "the model's PQ shape ({sub_vectors} sub-vectors, {bits} bits) disagrees with params ({}, {})",
                    p.num_sub_vectors, p.num_bits
                )));
            }
            pq.num_sub_vectors = sub_vectors;
            pq.num_bits = bits;
        }
        // Checked against the PQ shape in force (the model's, when it has one).
        check_codebook_shape(codebook.len(), dim, pq.num_sub_vectors, pq.num_bits)?;
        pq.codebook = Some(Arc::new(arrow_array::Float32Array::from(codebook)));
    } else if m.codebook.is_some() {
        return Err(invalid(format!(
            "the model has a PQ codebook but params->index_type = {} does not use PQ",
            p.index_type
        )));
    }
    let (index_type, mut params) = vector_params_with_ivf(p, ivf, pq)?;
    // Without a rotation (Arrow arrays, a model of an earlier lance-c or of
    // another type) an IVF_RQ build draws its own, as it always did.
    if let Some(rotation) = &m.rotation {
        inject_rotation(&mut params, rotation, p, dim)?;
    }
    params.runtime_hints.insert(MODEL_FINGERPRINT_HINT.to_string(), m.fingerprint);
    Ok((index_type, params))
}

unsafe fn new_vector_builder(
    dataset: *const LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    params: *const LanceVectorIndexParams,
    options: *const LanceIndexSegmentBuildOptions,
) -> CResult<LanceIndexSegmentBuilder> {
    if params.is_null() {
        return Err(invalid("params must not be NULL"));
    }
    let p = *params;
    let Common { ds, column, name, o, fragments, uuid } = common_args(dataset, column, index_name, options)?;
    if o.mode == BuildMode::LocalTrain && o.has_model() {
        return Err(invalid(
            "options->mode is LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN but the options hold a model; \
             use AUTO or PRECOMPUTED to build with it",
        ));
    }
    check_vector_column(&ds, &column, p.metric)?;
    let dim = lance::index::vector::utils::get_vector_dim(ds.schema(), &column)?;
    let model = Injected::from_options(&o, &p)?;
    if model.is_none() && o.mode == BuildMode::Precomputed {
        return Err(invalid(
            "options->mode is LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED but no model is given: set \
             options->ivf_centroids (and options->pq_codebook for the PQ types)",
        ));
    }
    // A build that trains needs rows for its partitions: checked here when
    // it must train, and when it runs when a model may still be given.
    let trains_partitions = if model.is_none() { p.num_partitions } else { 0 };
    if o.mode == BuildMode::LocalTrain {
        check_partitions(&ds, trains_partitions, fragments.as_deref())?;
    }
    let vector = VectorSegment { params: p, mode: o.mode, model_in_options: model.is_some() };
    let (index_type, vector_params) = vector_core_params(&p, &column, dim, model)?;
    Ok(LanceIndexSegmentBuilder::new(
        BuildRequest {
            dataset: ds,
            column,
            name,
            index_type,
            params: CoreParams::Vector(vector_params),
            fragments,
            uuid,
            replace: false,
            trains_partitions,
        },
        Some(vector),
    ))
}

unsafe fn new_scalar_builder(
    dataset: *const LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    index_type: i32,
    params_json: *const c_char,
    options: *const LanceIndexSegmentBuildOptions,
) -> CResult<LanceIndexSegmentBuilder> {
    let (index_type, kind) = scalar_kind(index_type)?;
    let params = scalar_params(kind, optional_str(params_json, "params_json")?)?;
    let Common { ds, column, name, o, fragments, uuid } = common_args(dataset, column, index_name, options)?;
    if o.has_model() {
        return Err(invalid("a scalar index takes no vector model"));
    }
    if o.mode == BuildMode::Precomputed {
        return Err(invalid(
            "options->mode asks for a precomputed model, which only vector builds take; scalar segments always train",
        ));
    }
    // The core generates the UUIDs of these fragment-scoped builds itself;
    // a caller's UUID would be ignored, so it is refused here.
    if uuid.is_some() && fragments.is_some() && core_picks_segment_uuid(index_type) {
        return Err(not_supported(format!(
            "Lance {} does not accept a caller-assigned segment UUID for fragment-scoped {:?} builds; \
             leave options->index_uuid NULL and read the UUID from the segment metadata",
            crate::LANCE_CORE_VERSION, index_type
        )));
    }
    Ok(LanceIndexSegmentBuilder::new(
        BuildRequest {
            dataset: ds,
            column,
            name,
            index_type,
            params: CoreParams::Scalar(params),
            fragments,
            uuid,
            replace: false,
            trains_partitions: 0,
        },
        None,
    ))
}

/// What every segment builder takes, checked the same way.
struct Common {
    ds: Arc<Dataset>,
    column: String,
    name: Option<String>,
    o: Options,
    fragments: Option<Vec<u32>>,
    uuid: Option<Uuid>,
}

unsafe fn common_args(
    dataset: *const LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    options: *const LanceIndexSegmentBuildOptions,
) -> CResult<Common> {
    let o = Options::from_c(options)?;
    let ds = dataset_ref(dataset)?.snapshot();
    let column = required_nonempty_str(column, "column")?.to_string();
    let name = optional_index_name(index_name)?;
    require_column(&ds, &column)?;
    let fragments = fragment_list(&ds, o.fragment_ids, o.fragment_count, "options->fragment_ids")?;
    let uuid = segment_uuid(o.index_uuid)?;
    Ok(Common { ds, column, name, o, fragments, uuid })
}

/// `LanceVectorIndexSegmentParams` has the layout of `LanceVectorIndexParams`
/// (lance.h; the conformance test checks both).
#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_new_vector(
    dataset: *const LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    params: *const LanceVectorIndexParams,
    options: *const LanceIndexSegmentBuildOptions,
) -> *mut LanceIndexSegmentBuilder {
    guard_handle(|| new_vector_builder(dataset, column, index_name, params, options))
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_new_scalar(
    dataset: *const LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    index_type: i32,
    params_json: *const c_char,
    options: *const LanceIndexSegmentBuildOptions,
) -> *mut LanceIndexSegmentBuilder {
    guard_handle(|| new_scalar_builder(dataset, column, index_name, index_type, params_json, options))
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_set_model(
    builder: *mut LanceIndexSegmentBuilder,
    model: *const LanceVectorModel,
) -> i32 {
    status(|| {
        let builder = handle_mut(builder, "builder")?.unexecuted()?;
        let model = handle_ref(model, "model")?;
        let Some(vector) = builder.vector else {
            return Err(invalid("a scalar segment builder takes no vector model"));
        };
        if vector.model_in_options {
            return Err(invalid(
                "the builder's options already hold a model (options->ivf_centroids); give it one way only",
            ));
        }
        if vector.mode == BuildMode::LocalTrain {
            return Err(invalid(
                "the builder was made with LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN, which trains and refuses a model",
            ));
        }
        let request = builder.request_mut()?;
        let dim = lance::index::vector::utils::get_vector_dim(request.dataset.schema(), &request.column)?;
        let injected = Injected::from_handle(model, &vector.params)?;
        let (index_type, params) = vector_core_params(&vector.params, &request.column, dim, Some(injected))?;
        request.index_type = index_type;
        request.params = CoreParams::Vector(params);
        request.trains_partitions = 0;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_execute_uncommitted(
    builder: *mut LanceIndexSegmentBuilder,
    out_metadata_bytes: *mut *mut u8,
    out_metadata_len: *mut usize,
) -> i32 {
    status(|| {
        let builder = handle_mut(builder, "builder")?;
        require_out(out_metadata_bytes, "out_metadata_bytes")?;
        require_out(out_metadata_len, "out_metadata_len")?;
        let metadata = builder.execute()?;
        let bytes = encode_metadata(&metadata);
        write_bytes_out(out_metadata_bytes, out_metadata_len, bytes);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_free(builder: *mut LanceIndexSegmentBuilder) {
    free_handle(builder);
}
