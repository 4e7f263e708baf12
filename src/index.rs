//! One-shot index creation (built and committed in one call), dropping,
//! and listing indices and their segments.

use std::ffi::c_char;

use lance::index::vector::VectorIndexParams;
use lance::index::DatasetIndexExt;
use lance_index::scalar::{BuiltinIndexType, ScalarIndexParams};
use lance_index::vector::hnsw::builder::HnswBuildParams;
use lance_index::vector::ivf::IvfBuildParams;
use lance_index::vector::pq::PQBuildParams;
use lance_index::vector::sq::builder::SQBuildParams;
use lance_index::vector::bq::RQBuildParams;
use lance_index::{IndexParams, IndexType};
use lance_table::format::IndexMetadata;
use lance_table::system_index::is_system_index;
use lance::index::CreateIndexBuilder;
use lance::Dataset;
use std::future::IntoFuture;
use uuid::Uuid;
use serde_json::json;

use crate::convert::{into_c_string, optional_str, require_out, required_nonempty_str, write_out};
use crate::dataset::{dataset_ref, LanceDataset};
use crate::error::{guard, invalid, not_found, status, CResult, Code, Context};
use crate::progress::{remove_segment_files, BuildControl, LanceIndexBuildControl};
use crate::runtime::block_on;
use crate::scanner::metric_from_c;

/// Mirrors `LanceVectorIndexParams` in lance.h. Enum fields arrive as plain
/// integers and are validated.
#[repr(C)]
pub struct LanceVectorIndexParams {
    pub index_type: i32,
    pub metric: i32,
    pub num_partitions: u32,
    pub num_sub_vectors: u32,
    pub num_bits: u32,
    pub max_iterations: u32,
    pub hnsw_m: u32,
    pub hnsw_ef_construction: u32,
    pub sample_rate: u32,
}

impl LanceVectorIndexParams {
    /// All fields zero: every documented default, with the given index type.
    pub fn defaults(index_type: i32) -> Self {
        Self {
            index_type,
            metric: 0,
            num_partitions: 0,
            num_sub_vectors: 0,
            num_bits: 0,
            max_iterations: 0,
            hnsw_m: 0,
            hnsw_ef_construction: 0,
            sample_rate: 0,
        }
    }
}

/// The defaults lance.h documents for zero fields.
const DEFAULT_MAX_ITERATIONS: usize = 50;
const DEFAULT_SAMPLE_RATE: usize = 256;
const DEFAULT_NUM_SUB_VECTORS: usize = 16;
const DEFAULT_PQ_BITS: usize = 8;
const DEFAULT_SQ_BITS: u16 = 8;
const DEFAULT_HNSW_M: usize = 20;
const DEFAULT_HNSW_EF_CONSTRUCTION: usize = 150;

fn or_default(value: u32, default: usize) -> usize {
    if value == 0 { default } else { value as usize }
}

/// The IVF stage for the given C params (no injected model).
pub fn ivf_params(p: &LanceVectorIndexParams) -> IvfBuildParams {
    IvfBuildParams {
        num_partitions: (p.num_partitions > 0).then_some(p.num_partitions as usize),
        max_iters: or_default(p.max_iterations, DEFAULT_MAX_ITERATIONS),
        sample_rate: or_default(p.sample_rate, DEFAULT_SAMPLE_RATE),
        ..Default::default()
    }
}

pub fn pq_params(p: &LanceVectorIndexParams) -> PQBuildParams {
    PQBuildParams {
        num_sub_vectors: or_default(p.num_sub_vectors, DEFAULT_NUM_SUB_VECTORS),
        num_bits: or_default(p.num_bits, DEFAULT_PQ_BITS),
        max_iters: or_default(p.max_iterations, DEFAULT_MAX_ITERATIONS),
        sample_rate: or_default(p.sample_rate, DEFAULT_SAMPLE_RATE),
        ..Default::default()
    }
}

fn small_bits<T: TryFrom<u32>>(bits: u32, default: T, name: &str) -> CResult<T> {
    if bits == 0 {
        return Ok(default);
    }
    T::try_from(bits).map_err(|_| invalid(format!("{name} = {bits} is out of range")))
}

fn hnsw_params(p: &LanceVectorIndexParams) -> HnswBuildParams {
    HnswBuildParams::default()
        .num_edges(or_default(p.hnsw_m, DEFAULT_HNSW_M))
        .ef_construction(or_default(p.hnsw_ef_construction, DEFAULT_HNSW_EF_CONSTRUCTION))
}

/// Converts the C params into the core's, stage by stage, with `ivf` as the
/// first stage (callers may pass one that carries an injected model).
pub fn vector_params_with_ivf(
    p: &LanceVectorIndexParams,
    ivf: IvfBuildParams,
    pq: PQBuildParams,
) -> CResult<(IndexType, VectorIndexParams)> {
    let metric = metric_from_c(p.metric, "params->metric")?;
    let sq = || -> CResult<SQBuildParams> {
        Ok(SQBuildParams {
            num_bits: small_bits(p.num_bits, DEFAULT_SQ_BITS, "params->num_bits")?,
            sample_rate: or_default(p.sample_rate, DEFAULT_SAMPLE_RATE),
        })
    };
    Ok(match p.index_type {
        101 => (IndexType::IvfFlat, VectorIndexParams::with_ivf_flat_params(metric, ivf)),
        102 => (IndexType::IvfSq, VectorIndexParams::with_ivf_sq_params(metric, ivf, sq()?)),
        103 => (IndexType::IvfPq, VectorIndexParams::with_ivf_pq_params(metric, ivf, pq)),
        104 => (
            IndexType::IvfHnswSq,
            VectorIndexParams::with_ivf_hnsw_sq_params(metric, ivf, hnsw_params(p), sq()?),
        ),
        105 => (
            IndexType::IvfHnswPq,
            VectorIndexParams::with_ivf_hnsw_pq_params(metric, ivf, hnsw_params(p), pq),
        ),
        106 => (IndexType::IvfHnswFlat, VectorIndexParams::ivf_hnsw(metric, ivf, hnsw_params(p))),
        107 => {
            let rq = if p.num_bits == 0 {
                RQBuildParams::default()
            } else {
                RQBuildParams::new(small_bits(p.num_bits, 0, "params->num_bits")?)
            };
            (IndexType::IvfRq, VectorIndexParams::with_ivf_rq_params(metric, ivf, rq))
        }
        other => {
            return Err(invalid(format!(
                "params->index_type = {other} is not a LanceVectorIndexType (101 = IVF_FLAT .. 107 = IVF_RQ)"
            )))
        }
    })
}

pub fn vector_params(p: &LanceVectorIndexParams) -> CResult<(IndexType, VectorIndexParams)> {
    vector_params_with_ivf(p, ivf_params(p), pq_params(p))
}

/// The scalar index kinds of `LanceScalarIndexType`.
pub fn scalar_kind(index_type: i32) -> CResult<(IndexType, BuiltinIndexType)> {
    match index_type {
        1 => Ok((IndexType::BTree, BuiltinIndexType::BTree)),
        2 => Ok((IndexType::Bitmap, BuiltinIndexType::Bitmap)),
        3 => Ok((IndexType::LabelList, BuiltinIndexType::LabelList)),
        4 => Ok((IndexType::Inverted, BuiltinIndexType::Inverted)),
        other => Err(invalid(format!(
            "index_type = {other} is not a LanceScalarIndexType (1 = BTREE, 2 = BITMAP, 3 = LABEL_LIST, 4 = INVERTED)"
        ))),
    }
}

/// Scalar params from the optional JSON object a caller passes. The core
/// ignores JSON it cannot parse, so it is checked here.
pub fn scalar_params(kind: BuiltinIndexType, params_json: Option<&str>) -> CResult<ScalarIndexParams> {
    let params = ScalarIndexParams::for_builtin(kind);
    match params_json {
        None => Ok(params),
        Some(text) => {
            let value: serde_json::Value = serde_json::from_str(text)
                .map_err(|e| invalid(format!("params_json is not valid JSON: {e}")))?;
            if !value.is_object() {
                return Err(invalid("params_json must be a JSON object"));
            }
            Ok(params.with_params(&value))
        }
    }
}

/// Checks that `column` exists, naming it in the error otherwise.
pub fn require_column(ds: &Dataset, column: &str) -> CResult<()> {
    if ds.schema().field(column).is_none() {
        return Err(not_found(format!(
            "column '{column}' does not exist in dataset version {}",
            ds.version().version
        )));
    }
    Ok(())
}

/// The optional index name argument: NULL is the default name, "" is refused.
pub unsafe fn optional_index_name(index_name: *const c_char) -> CResult<Option<String>> {
    match optional_str(index_name, "index_name")? {
        Some("") => Err(invalid("index_name must not be empty (pass NULL for the default name)")),
        other => Ok(other.map(str::to_string)),
    }
}

unsafe fn create_index(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    replace: bool,
    control: &BuildControl,
    make: impl FnOnce(&Dataset) -> CResult<(IndexType, Box<dyn IndexParams>)>,
) -> CResult<()> {
    let handle = dataset_ref(dataset)?;
    let column = required_nonempty_str(column, "column")?;
    let name = optional_index_name(index_name)?;
    handle.mutate(|ds| {
        require_column(ds, column)?;
        let (index_type, params) = make(ds)?;
        let session = control.start()?;
        // A UUID of our own, so a cancelled build's files can be found.
        let uuid = Uuid::new_v4();
        let mut owned = Dataset::clone(ds);
        let column_owned = column.to_string();
        let hooks = session.hooks();
        let build = async move {
            let columns = [column_owned.as_str()];
            let mut builder = CreateIndexBuilder::new(&mut owned, &columns, index_type, params.as_ref())
                .replace(replace)
                .index_uuid(uuid);
            if let Some(name) = name {
                builder = builder.name(name);
            }
            if let Some(hooks) = hooks {
                builder = builder.progress(hooks);
            }
            builder.into_future().await?;
            Ok(owned)
        };
        match session.run(build) {
            Ok(updated) => {
                *ds = updated;
                Ok(())
            }
            Err(err) if err.code == Code::Cancelled => Err(remove_segment_files(ds, uuid, err)),
            Err(err) => Err(err).context(format!("creating index on column '{column}'")),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_create_vector_index(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    params: *const LanceVectorIndexParams,
    replace: bool,
) -> i32 {
    lance_dataset_create_vector_index_with_control(dataset, column, index_name, params, replace, std::ptr::null())
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_create_vector_index_with_control(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    params: *const LanceVectorIndexParams,
    replace: bool,
    control: *const LanceIndexBuildControl,
) -> i32 {
    status(|| {
        if params.is_null() {
            return Err(invalid("params must not be NULL"));
        }
        let (index_type, params) = vector_params(&*params)?;
        let control = BuildControl::from_c(control);
        create_index(dataset, column, index_name, replace, &control, |_| Ok((index_type, Box::new(params))))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_create_scalar_index(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    index_type: i32,
    params_json: *const c_char,
    replace: bool,
) -> i32 {
    lance_dataset_create_scalar_index_with_control(
        dataset, column, index_name, index_type, params_json, replace, std::ptr::null(),
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_create_scalar_index_with_control(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    index_type: i32,
    params_json: *const c_char,
    replace: bool,
    control: *const LanceIndexBuildControl,
) -> i32 {
    status(|| {
        let (index_type, kind) = scalar_kind(index_type)?;
        let params = scalar_params(kind, optional_str(params_json, "params_json")?)?;
        let control = BuildControl::from_c(control);
        create_index(dataset, column, index_name, replace, &control, |_| Ok((index_type, Box::new(params))))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_drop_index(dataset: *mut LanceDataset, name: *const c_char) -> i32 {
    status(|| {
        let handle = dataset_ref(dataset)?;
        let name = required_nonempty_str(name, "name")?;
        handle.mutate(|ds| {
            if user_segments(ds)?.iter().all(|idx| idx.name != name) {
                return Err(not_found(format!("index '{name}' does not exist")));
            }
            block_on(ds.drop_index(name))?.context(format!("dropping index '{name}'"))
        })
    })
}

/// Every segment of every user index (system indices are left out), in
/// manifest order.
pub fn user_segments(ds: &Dataset) -> CResult<Vec<IndexMetadata>> {
    let all = block_on(ds.load_indices())??;
    Ok(all.iter().filter(|idx| !is_system_index(idx)).cloned().collect())
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_index_count(dataset: *const LanceDataset) -> u64 {
    guard(0, || {
        let segments = user_segments(&dataset_ref(dataset)?.snapshot())?;
        let mut names: Vec<&str> = segments.iter().map(|s| s.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        Ok(names.len() as u64)
    })
}

/// The short type name of each logical index, as the core describes it.
pub fn index_type_names(ds: &Dataset) -> CResult<std::collections::HashMap<String, String>> {
    let descriptions = block_on(ds.describe_indices(None))??;
    Ok(descriptions
        .iter()
        .map(|d| (d.name().to_string(), d.index_type().to_string()))
        .collect())
}

/// Column names of a segment's field ids.
pub fn column_names(ds: &Dataset, fields: &[i32]) -> Vec<String> {
    fields
        .iter()
        .map(|id| {
            ds.schema()
                .field_by_id(*id)
                .map(|f| f.name.clone())
                .unwrap_or_else(|| format!("<field {id}>"))
        })
        .collect()
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_index_list_json(dataset: *const LanceDataset) -> *const c_char {
    guard(std::ptr::null(), || {
        let ds = dataset_ref(dataset)?.snapshot();
        let segments = user_segments(&ds)?;
        let types = index_type_names(&ds)?;
        let entries: Vec<serde_json::Value> = segments
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "uuid": s.uuid.to_string(),
                    "columns": column_names(&ds, &s.fields),
                    "type": types.get(&s.name).cloned().unwrap_or_else(|| "Unknown".to_string()),
                    "dataset_version": s.dataset_version,
                })
            })
            .collect();
        Ok(into_c_string(serde_json::Value::Array(entries).to_string()))
    })
}

/// The segments of one logical index; NOT_FOUND when it has none.
pub fn named_segments(ds: &Dataset, name: &str) -> CResult<Vec<IndexMetadata>> {
    let segments: Vec<IndexMetadata> = user_segments(ds)?.into_iter().filter(|s| s.name == name).collect();
    if segments.is_empty() {
        return Err(not_found(format!(
            "index '{name}' does not exist in dataset version {}",
            ds.version().version
        )));
    }
    Ok(segments)
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_index_segment_count(
    dataset: *const LanceDataset,
    index_name: *const c_char,
) -> u64 {
    guard(0, || {
        let ds = dataset_ref(dataset)?.snapshot();
        let name = required_nonempty_str(index_name, "index_name")?;
        Ok(named_segments(&ds, name)?.len() as u64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_index_segments(
    dataset: *const LanceDataset,
    index_name: *const c_char,
    out_uuids: *mut u8,
    capacity: usize,
    out_count: *mut u64,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        let name = required_nonempty_str(index_name, "index_name")?;
        let segments = named_segments(&ds, name)?;
        if capacity < segments.len() {
            return Err(invalid(format!(
                "capacity = {capacity} is less than the {} segments of index '{name}'",
                segments.len()
            )));
        }
        require_out(out_uuids, "out_uuids")?;
        for (i, s) in segments.iter().enumerate() {
            std::ptr::copy_nonoverlapping(s.uuid.as_bytes().as_ptr(), out_uuids.add(i * 16), 16);
        }
        if !out_count.is_null() {
            write_out(out_count, segments.len() as u64);
        }
        Ok(())
    })
}
