//! Distributed builds, worker side (RFC E1 + E2): a segment builder bound to
//! one dataset snapshot that builds an index segment over a fragment subset
//! without committing, and returns the segment's metadata as bytes.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use lance::index::vector::VectorIndexParams;
use lance::index::CreateIndexBuilder;
use lance::Dataset;
use lance_index::scalar::ScalarIndexParams;
use lance_index::IndexType;
use lance_table::format::pb;
use prost::Message;
use uuid::Uuid;

use crate::arrow_ffi::read_f32_list;
use crate::convert::{into_c_bytes, optional_str, require_handle, require_out, required_nonempty_str, slice_arg, write_out};
use crate::dataset::{check_fragment_ids, dataset_ref, LanceDataset};
use crate::error::{invalid, not_supported, status, CResult, Code, Context};
use crate::progress::{cancelled_error, remove_segment_files, BuildControl, LanceIndexBuildCancelToken, ProgressFn};
use crate::index::{ivf_params, optional_index_name, pq_params, require_column, scalar_kind, scalar_params, vector_params_with_ivf, LanceVectorIndexParams};
use crate::model::{check_codebook_shape, fsl, uses_pq, LanceVectorModel};
use crate::error::guard_handle;

/// The runtime-hint key under which a segment records its shared model.
pub const MODEL_FINGERPRINT_HINT: &str = "lance-c.model_fingerprint";

/// Mirrors `LanceIndexSegmentBuildOptions` in lance.h.
#[repr(C)]
pub struct LanceIndexSegmentBuildOptions {
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

const TRAIN_AUTO: i32 = 0;
const TRAIN_NEVER: i32 = 1;

#[derive(Clone)]
enum Params {
    Vector(VectorIndexParams),
    Scalar(ScalarIndexParams),
}

pub struct LanceIndexSegmentBuilder {
    dataset: Arc<Dataset>,
    column: String,
    name: Option<String>,
    index_type: IndexType,
    params: Params,
    fragments: Option<Vec<u32>>,
    uuid: Option<Uuid>,
    control: BuildControl,
    executed: bool,
}

/// A fragment id list argument: NULL with count 0 means "no restriction";
/// a non-NULL list must be non-empty, without duplicates, and name
/// fragments of the snapshot.
pub unsafe fn fragment_list(ds: &Dataset, ids: *const u32, count: usize, name: &str) -> CResult<Option<Vec<u32>>> {
    if ids.is_null() {
        if count != 0 {
            return Err(invalid(format!("{name} is NULL but its count is {count}")));
        }
        return Ok(None);
    }
    if count == 0 {
        return Err(invalid(format!(
            "{name} is an empty list; pass NULL with count 0 for the whole dataset"
        )));
    }
    let ids: Vec<u64> = slice_arg(ids, count, name)?.iter().map(|&id| u64::from(id)).collect();
    check_fragment_ids(ds, &ids, name).map(Some)
}

unsafe fn segment_uuid(ptr: *const u8) -> Option<Uuid> {
    (!ptr.is_null()).then(|| Uuid::from_bytes(std::slice::from_raw_parts(ptr, 16).try_into().expect("16 bytes")))
}

/// The injected model of a vector build: from a serialized-model handle or
/// from Arrow arrays (not both), checked against the params and the column.
struct Injected {
    centroids: Vec<f32>,
    dim: usize,
    codebook: Option<Vec<f32>>,
    fingerprint: Option<String>,
}

unsafe fn injected_model(o: &LanceIndexSegmentBuildOptions, p: &LanceVectorIndexParams) -> CResult<Option<Injected>> {
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
        Some(read_f32_list(o.pq_codebook, o.pq_codebook_schema, "options->pq_codebook")?.0)
    };
    // Arrow arrays carry no fingerprint of their own; fingerprint their content.
    let pq = codebook.clone().map(|codebook| {
        let pq = pq_params(p);
        crate::model::PqModel { num_sub_vectors: pq.num_sub_vectors, num_bits: pq.num_bits, codebook }
    });
    let fingerprint = LanceVectorModel::new(p.metric, dim, centroids.clone(), pq).ok().map(|m| m.fingerprint);
    Ok(Some(Injected { centroids, dim, codebook, fingerprint }))
}

unsafe fn new_vector_builder(
    dataset: *const LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    params: *const LanceVectorIndexParams,
    options: *const LanceIndexSegmentBuildOptions,
) -> CResult<LanceIndexSegmentBuilder> {
    let ds = dataset_ref(dataset)?.snapshot();
    let column = required_nonempty_str(column, "column")?.to_string();
    let name = optional_index_name(index_name)?;
    if params.is_null() {
        return Err(invalid("params must not be NULL"));
    }
    let p = &*params;
    require_column(&ds, &column)?;
    let dim = lance::index::vector::utils::get_vector_dim(ds.schema(), &column)?;
    let zero = zeroed_options();
    let o = if options.is_null() { &zero } else { &*options };
    let fragments = fragment_list(&ds, o.fragment_ids, o.fragment_count, "options->fragment_ids")?;
    let train = train_mode(o.train)?;

    let mut ivf = ivf_params(p);
    let mut pq = pq_params(p);
    let mut fingerprint = None;
    match injected_model(o, p)? {
        None => {
            if train == TRAIN_NEVER {
                return Err(invalid(
                    "options->train is LANCE_TRAIN_NEVER but no model is injected: give options->model or options->ivf_centroids",
                ));
            }
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
                check_codebook_shape(codebook.len(), dim, pq.num_sub_vectors, pq.num_bits)?;
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
    Ok(LanceIndexSegmentBuilder {
        dataset: ds,
        column,
        name,
        index_type,
        params: Params::Vector(vector_params),
        fragments,
        uuid: segment_uuid(o.index_uuid),
        control: BuildControl::default(),
        executed: false,
    })
}

unsafe fn new_scalar_builder(
    dataset: *const LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    index_type: i32,
    params_json: *const c_char,
    options: *const LanceIndexSegmentBuildOptions,
) -> CResult<LanceIndexSegmentBuilder> {
    let ds = dataset_ref(dataset)?.snapshot();
    let column = required_nonempty_str(column, "column")?.to_string();
    let name = optional_index_name(index_name)?;
    let (index_type, kind) = scalar_kind(index_type)?;
    let params = scalar_params(kind, optional_str(params_json, "params_json")?)?;
    require_column(&ds, &column)?;
    let zero = zeroed_options();
    let o = if options.is_null() { &zero } else { &*options };
    if !o.ivf_centroids.is_null() || !o.pq_codebook.is_null() || !o.model.is_null() {
        return Err(invalid("a scalar index takes no injected vector model"));
    }
    if train_mode(o.train)? == TRAIN_NEVER {
        return Err(invalid("options->train = LANCE_TRAIN_NEVER is for vector builds; scalar segments always train"));
    }
    let fragments = fragment_list(&ds, o.fragment_ids, o.fragment_count, "options->fragment_ids")?;
    let uuid = segment_uuid(o.index_uuid);
    // The core generates the UUIDs of these fragment-scoped builds itself;
    // a caller's UUID would be ignored, so it is refused here.
    if uuid.is_some() && fragments.is_some() && matches!(index_type, IndexType::BTree | IndexType::LabelList) {
        return Err(not_supported(format!(
            "Lance {} does not accept a caller-assigned segment UUID for fragment-scoped {:?} builds; \
             leave options->index_uuid NULL and read the UUID from the segment metadata",
            crate::LANCE_CORE_VERSION, index_type
        )));
    }
    Ok(LanceIndexSegmentBuilder {
        dataset: ds,
        column,
        name,
        index_type,
        params: Params::Scalar(params),
        fragments,
        uuid,
        control: BuildControl::default(),
        executed: false,
    })
}

fn zeroed_options() -> LanceIndexSegmentBuildOptions {
    LanceIndexSegmentBuildOptions {
        fragment_ids: std::ptr::null(),
        fragment_count: 0,
        index_uuid: std::ptr::null(),
        ivf_centroids: std::ptr::null(),
        ivf_centroids_schema: std::ptr::null(),
        pq_codebook: std::ptr::null(),
        pq_codebook_schema: std::ptr::null(),
        model: std::ptr::null(),
        train: TRAIN_AUTO,
    }
}

fn train_mode(train: i32) -> CResult<i32> {
    match train {
        TRAIN_AUTO | TRAIN_NEVER => Ok(train),
        other => Err(invalid(format!(
            "options->train = {other} is not a LanceTrainMode (0 = AUTO, 1 = NEVER)"
        ))),
    }
}


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

impl LanceIndexSegmentBuilder {
    fn execute(&mut self) -> CResult<Vec<u8>> {
        if self.executed {
            return Err(invalid("the segment builder was already executed; builders are single-use"));
        }
        self.executed = true;
        // The core picks the UUID of fragment-scoped BTREE and LABEL_LIST
        // builds itself; every other build gets one from here, so the files
        // of a cancelled build can be found and removed.
        let core_picks_uuid = self.fragments.is_some() && matches!(self.index_type, IndexType::BTree | IndexType::LabelList);
        let uuid = self.uuid.or_else(|| (!core_picks_uuid).then(Uuid::new_v4));
        let session = self.control.start()?;
        // The build owns what it uses: it may run on a runtime thread.
        let mut ds = Dataset::clone(&self.dataset);
        let params = self.params.clone();
        let column = self.column.clone();
        let index_type = self.index_type;
        let name = self.name.clone();
        let fragments = self.fragments.clone();
        let hooks = session.hooks();
        let build = async move {
            let params: &dyn lance_index::IndexParams = match &params {
                Params::Vector(p) => p,
                Params::Scalar(p) => p,
            };
            let columns = [column.as_str()];
            // An index of the same name may exist: a segment for fragments
            // appended since it was built extends it.  The commit decides.
            let mut builder = CreateIndexBuilder::new(&mut ds, &columns, index_type, params).replace(true);
            if let Some(name) = name {
                builder = builder.name(name);
            }
            if let Some(fragments) = fragments {
                builder = builder.fragments(fragments);
            }
            if let Some(uuid) = uuid {
                builder = builder.index_uuid(uuid);
            }
            if let Some(hooks) = hooks {
                builder = builder.progress(hooks);
            }
            builder.execute_uncommitted().await
        };
        let metadata = match session.run(build) {
            Ok(metadata) => metadata,
            Err(err) if err.code == Code::Cancelled => {
                return Err(match uuid {
                    Some(uuid) => remove_segment_files(&self.dataset, uuid, err),
                    None => err,
                })
            }
            Err(err) => return Err(err).context(format!("building a segment on column '{}'", self.column)),
        };
        // A cancel that came after the build's last checkpoint (some builds
        // do their heavy work after it) is honoured here, before returning.
        if self.control.cancelled() {
            return Err(remove_segment_files(&self.dataset, metadata.uuid, cancelled_error("before the build returned")));
        }
        Ok(pb::IndexMetadata::from(&metadata).encode_to_vec())
    }
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_execute_uncommitted(
    builder: *mut LanceIndexSegmentBuilder,
    out_metadata_bytes: *mut *mut u8,
    out_metadata_len: *mut usize,
) -> i32 {
    status(|| {
        require_handle(builder, "builder")?;
        require_out(out_metadata_bytes, "out_metadata_bytes")?;
        require_out(out_metadata_len, "out_metadata_len")?;
        let bytes = (*builder).execute()?;
        write_out(out_metadata_len, bytes.len());
        write_out(out_metadata_bytes, into_c_bytes(bytes));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_free(builder: *mut LanceIndexSegmentBuilder) {
    if !builder.is_null() {
        drop(Box::from_raw(builder));
    }
}

/// Builder settings are refused once the build ran: they could not apply.
unsafe fn unexecuted<'a>(builder: *mut LanceIndexSegmentBuilder) -> CResult<&'a mut LanceIndexSegmentBuilder> {
    require_handle(builder, "builder")?;
    let b = &mut *builder;
    if b.executed {
        return Err(invalid("the segment builder was already executed; settings no longer apply"));
    }
    Ok(b)
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_set_progress(
    builder: *mut LanceIndexSegmentBuilder,
    callback: Option<ProgressFn>,
    user_data: *mut c_void,
) -> i32 {
    status(|| {
        unexecuted(builder)?.control.set_progress(callback, user_data);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_set_cancel_token(
    builder: *mut LanceIndexSegmentBuilder,
    token: *const LanceIndexBuildCancelToken,
) -> i32 {
    status(|| {
        unexecuted(builder)?.control.set_cancel(token.as_ref());
        Ok(())
    })
}
