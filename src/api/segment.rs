//! lance.h section "Distributed index builds: uncommitted segments" (RFC
//! E1): a segment builder bound to one dataset snapshot builds an index
//! segment over a fragment subset without committing and returns the
//! segment's metadata as bytes.  The build itself is floor/build.rs.

use std::ffi::c_char;
use std::sync::Arc;

use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use lance::Dataset;
use lance_index::IndexType;
use uuid::Uuid;

use crate::floor::arrow::read_f32_list;
use crate::floor::build::{BuildRequest, LanceIndexSegmentBuilder};
use crate::floor::catalog::{check_partitions, check_vector_column, optional_index_name, require_column};
use crate::floor::codec::{encode_metadata, MODEL_FINGERPRINT_HINT};
use crate::floor::error::{guard_handle, invalid, not_supported, status, CResult, Context};
use crate::floor::ffi::{free_handle, handle_mut, into_c_bytes, optional_str, require_out, required_nonempty_str, slice_arg, write_out};
use crate::floor::handle::{dataset_ref, fragment_list, LanceDataset};
use crate::floor::params::{
    build_mode, ivf_params, pq_params, scalar_kind, scalar_params, train_mode, uses_pq, vector_params_with_ivf,
    BuildMode, CoreParams, LanceVectorIndexParams,
};
use crate::floor::vector_model::{check_codebook_shape, fsl, LanceVectorModel, PqModel};

/// Mirrors `LanceIndexSegmentBuildOptions` in lance.h (upstream's form).
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

/// Mirrors `LanceIndexSegmentBuildOptionsRfc` in lance.h (the RFC form).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct LanceIndexSegmentBuildOptionsRfc {
    pub fragment_ids: *const u32,
    pub fragment_count: usize,
    pub index_uuid: *const u8,
    pub ivf_centroids: *const FFI_ArrowArray,
    pub ivf_centroids_schema: *const FFI_ArrowSchema,
    pub pq_codebook: *const FFI_ArrowArray,
    pub pq_codebook_schema: *const FFI_ArrowSchema,
    pub model: *const LanceVectorModel,
    pub train: i32,
}

/// Either form of the options, after its mode was validated.
#[derive(Clone, Copy)]
struct Options {
    fragment_ids: *const u32,
    fragment_count: usize,
    index_uuid: *const u8,
    ivf_centroids: *const FFI_ArrowArray,
    ivf_centroids_schema: *const FFI_ArrowSchema,
    pq_codebook: *const FFI_ArrowArray,
    pq_codebook_schema: *const FFI_ArrowSchema,
    model: *const LanceVectorModel,
    mode: BuildMode,
    /// How the mode field is named in this form, for messages.
    mode_field: &'static str,
}

impl Options {
    fn defaults() -> Self {
        Options {
            fragment_ids: std::ptr::null(),
            fragment_count: 0,
            index_uuid: std::ptr::null(),
            ivf_centroids: std::ptr::null(),
            ivf_centroids_schema: std::ptr::null(),
            pq_codebook: std::ptr::null(),
            pq_codebook_schema: std::ptr::null(),
            model: std::ptr::null(),
            mode: BuildMode::Auto,
            mode_field: "options->mode",
        }
    }

    unsafe fn upstream(o: *const LanceIndexSegmentBuildOptions) -> CResult<Self> {
        let Some(o) = o.as_ref() else { return Ok(Self::defaults()) };
        Ok(Options {
            fragment_ids: o.fragment_ids,
            fragment_count: o.fragment_count,
            index_uuid: o.index_uuid,
            ivf_centroids: o.ivf_centroids,
            ivf_centroids_schema: o.ivf_centroids_schema,
            pq_codebook: o.pq_codebook,
            pq_codebook_schema: o.pq_codebook_schema,
            model: std::ptr::null(),
            mode: build_mode(o.mode)?,
            mode_field: "options->mode",
        })
    }

    unsafe fn rfc(o: *const LanceIndexSegmentBuildOptionsRfc) -> CResult<Self> {
        let Some(o) = o.as_ref() else { return Ok(Self { mode_field: "options->train", ..Self::defaults() }) };
        Ok(Options {
            fragment_ids: o.fragment_ids,
            fragment_count: o.fragment_count,
            index_uuid: o.index_uuid,
            ivf_centroids: o.ivf_centroids,
            ivf_centroids_schema: o.ivf_centroids_schema,
            pq_codebook: o.pq_codebook,
            pq_codebook_schema: o.pq_codebook_schema,
            model: o.model,
            mode: train_mode(o.train)?,
            mode_field: "options->train",
        })
    }

    fn has_model(&self) -> bool {
        !self.ivf_centroids.is_null() || !self.pq_codebook.is_null() || !self.model.is_null()
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

/// The injected model of a vector build: from a serialized-model handle or
/// from Arrow arrays (not both), checked against the params and the column.
struct Injected {
    centroids: Vec<f32>,
    dim: usize,
    codebook: Option<Vec<f32>>,
    fingerprint: Option<String>,
}

unsafe fn injected_model(o: &Options, p: &LanceVectorIndexParams) -> CResult<Option<Injected>> {
    let has_arrow = !o.ivf_centroids.is_null() || !o.pq_codebook.is_null();
    if !o.model.is_null() {
        if has_arrow {
            return Err(invalid("options give both a model and Arrow arrays; pass one of them"));
        }
        let m = &*o.model;
        if m.metric != p.metric {
            return Err(invalid(format!(
                "the model was trained for metric {}, params->metric is {}",
                m.metric, p.metric
            )));
        }
        return Ok(Some(Injected {
            centroids: m.centroids.clone(),
            dim: m.dim,
            codebook: m.pq.as_ref().map(|pq| pq.codebook.clone()),
            fingerprint: Some(m.fingerprint.clone()),
        }));
    }
    if o.ivf_centroids.is_null() {
        if !o.pq_codebook.is_null() {
            return Err(invalid("options->pq_codebook needs options->ivf_centroids: the codebook is trained on IVF residuals"));
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
    let model = LanceVectorModel::new(p.metric, dim, centroids.clone(), pq).context("options->ivf_centroids and options->pq_codebook")?;
    Ok(Some(Injected { centroids, dim, codebook, fingerprint: Some(model.fingerprint) }))
}

unsafe fn new_vector_builder(
    dataset: *const LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    params: *const LanceVectorIndexParams,
    options: Options,
) -> CResult<LanceIndexSegmentBuilder> {
    if params.is_null() {
        return Err(invalid("params must not be NULL"));
    }
    let p = &*params;
    let Common { ds, column, name, o, fragments, uuid } = common_args(dataset, column, index_name, options)?;
    let mode_field = o.mode_field;
    if o.mode == BuildMode::LocalTrain && o.has_model() {
        return Err(invalid(format!(
            "{mode_field} is LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN but the options hold a model; \
             use AUTO or PRECOMPUTED to build with it"
        )));
    }
    let o = &o;
    let dim = lance::index::vector::utils::get_vector_dim(ds.schema(), &column)?;

    let mut ivf = ivf_params(p);
    let mut pq = pq_params(p);
    let mut fingerprint = None;
    check_vector_column(&ds, &column, p.metric)?;
    match injected_model(o, p)? {
        None => {
            if o.mode == BuildMode::Precomputed {
                let mode = if mode_field == "options->train" {
                    "options->train is LANCE_TRAIN_NEVER"
                } else {
                    "options->mode is LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED"
                };
                return Err(invalid(format!(
                    "{mode} but no model is given: set options->ivf_centroids (and options->pq_codebook for \
                     the PQ types){}",
                    if mode_field == "options->train" { " or options->model" } else { "" }
                )));
            }
            check_partitions(&ds, p.num_partitions, fragments.as_deref())?;
        }
        Some(m) => {
            if m.dim != dim {
                return Err(invalid(format!(
                    "the injected model has dimension {}, column '{column}' has {dim}",
                    m.dim
                )));
            }
            let num_partitions = m.centroids.len() / m.dim;
            if p.num_partitions != 0 && p.num_partitions as usize != num_partitions {
                return Err(invalid(format!(
                    "the injected model has {num_partitions} IVF partitions, params->num_partitions is {}",
                    p.num_partitions
                )));
            }
            ivf.num_partitions = Some(num_partitions);
            ivf.centroids = Some(Arc::new(fsl(m.centroids, m.dim)?));
            if uses_pq(p.index_type) {
                let codebook = m.codebook.ok_or_else(|| {
                    invalid("an IVF_PQ or IVF_HNSW_PQ build with injected centroids needs the PQ codebook too")
                })?;
                if let Some(model) = (!o.model.is_null()).then(|| &*o.model) {
                    let mp = model.pq.as_ref().expect("checked: the model has a codebook");
                    if (p.num_sub_vectors != 0 && mp.num_sub_vectors != p.num_sub_vectors as usize)
                        || (p.num_bits != 0 && mp.num_bits != p.num_bits as usize)
                    {
                        return Err(invalid(format!(
                            "the model's PQ shape ({} sub-vectors, {} bits) disagrees with params ({}, {})",
                            mp.num_sub_vectors, mp.num_bits, p.num_sub_vectors, p.num_bits
                        )));
                    }
                    pq.num_sub_vectors = mp.num_sub_vectors;
                    pq.num_bits = mp.num_bits;
                }
                // Checked against the model's own PQ shape, adopted above.
                check_codebook_shape(codebook.len(), dim, pq.num_sub_vectors, pq.num_bits)?;
                pq.codebook = Some(Arc::new(arrow_array::Float32Array::from(codebook)));
            } else if m.codebook.is_some() {
                return Err(invalid(format!(
                    "a PQ codebook was injected but params->index_type = {} does not use PQ",
                    p.index_type
                )));
            }
            fingerprint = m.fingerprint;
        }
    }
    let (index_type, mut vector_params) = vector_params_with_ivf(p, ivf, pq)?;
    if let Some(fp) = fingerprint {
        vector_params.runtime_hints.insert(MODEL_FINGERPRINT_HINT.to_string(), fp);
    }
    Ok(LanceIndexSegmentBuilder::new(BuildRequest {
        dataset: ds,
        column,
        name,
        index_type,
        params: CoreParams::Vector(vector_params),
        fragments,
        uuid,
        replace: false,
    }))
}

unsafe fn new_scalar_builder(
    dataset: *const LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    index_type: i32,
    params_json: *const c_char,
    options: Options,
) -> CResult<LanceIndexSegmentBuilder> {
    let (index_type, kind) = scalar_kind(index_type)?;
    let params = scalar_params(kind, optional_str(params_json, "params_json")?)?;
    let Common { ds, column, name, o, fragments, uuid } = common_args(dataset, column, index_name, options)?;
    if o.has_model() {
        return Err(invalid("a scalar index takes no injected vector model"));
    }
    if o.mode == BuildMode::Precomputed {
        return Err(invalid(format!(
            "{} asks for a precomputed model, which only vector builds take; scalar segments always train",
            o.mode_field
        )));
    }
    // The core generates the UUIDs of these fragment-scoped builds itself;
    // a caller's UUID would be ignored, so it is refused here.
    if uuid.is_some() && fragments.is_some() && matches!(index_type, IndexType::BTree | IndexType::LabelList) {
        return Err(not_supported(format!(
            "Lance {} does not accept a caller-assigned segment UUID for fragment-scoped {:?} builds; \
             leave options->index_uuid NULL and read the UUID from the segment metadata",
            crate::LANCE_CORE_VERSION, index_type
        )));
    }
    Ok(LanceIndexSegmentBuilder::new(BuildRequest {
        dataset: ds,
        column,
        name,
        index_type,
        params: CoreParams::Scalar(params),
        fragments,
        uuid,
        replace: false,
    }))
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
    o: Options,
) -> CResult<Common> {
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
    guard_handle(|| new_vector_builder(dataset, column, index_name, params, Options::upstream(options)?))
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
    guard_handle(|| new_scalar_builder(dataset, column, index_name, index_type, params_json, Options::upstream(options)?))
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_new_vector_rfc(
    dataset: *const LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    params: *const LanceVectorIndexParams,
    options: *const LanceIndexSegmentBuildOptionsRfc,
) -> *mut LanceIndexSegmentBuilder {
    guard_handle(|| new_vector_builder(dataset, column, index_name, params, Options::rfc(options)?))
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_new_scalar_rfc(
    dataset: *const LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    index_type: i32,
    params_json: *const c_char,
    options: *const LanceIndexSegmentBuildOptionsRfc,
) -> *mut LanceIndexSegmentBuilder {
    guard_handle(|| new_scalar_builder(dataset, column, index_name, index_type, params_json, Options::rfc(options)?))
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
        let bytes = encode_metadata(&builder.execute()?);
        write_out(out_metadata_len, bytes.len());
        write_out(out_metadata_bytes, into_c_bytes(bytes));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_free(builder: *mut LanceIndexSegmentBuilder) {
    free_handle(builder);
}
