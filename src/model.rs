//! Shared vector models for distributed builds: training over the core's
//! entry points, Arrow import/export of centroids and codebooks, and the
//! serialized form that travels to workers without an Arrow library.

use std::ffi::c_char;
use std::sync::Arc;

use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, FixedSizeListArray, Float32Array};
use arrow_schema::{DataType, Field};
use lance::index::vector::ivf::build_ivf_model;
use lance::index::vector::pq::build_pq_model_in_fragments;
use lance::index::vector::utils::get_vector_dim;
use lance::Dataset;
use lance_index::progress::noop_progress;
use lance_index::vector::ivf::storage::IvfModel;
use lance_index::vector::ivf::IvfBuildParams;
use lance_index::vector::pq::PQBuildParams;
use lance_linalg::distance::DistanceType;
use sha2::{Digest, Sha256};

use crate::arrow_ffi::{export_array, read_f32_list};
use crate::convert::{into_c_bytes, into_c_string, require_out, required_nonempty_str, slice_arg, write_out};
use crate::dataset::{dataset_ref, LanceDataset};
use crate::error::{guard, invalid, status, CResult, Context};
use crate::index::{ivf_params, pq_params, require_column, LanceVectorIndexParams};
use crate::runtime::block_on;
use crate::scanner::metric_from_c;
use crate::segment::fragment_list;

/// A trained IVF model, with a PQ codebook for the PQ index types.
pub struct LanceVectorModel {
    pub metric: i32,
    pub dim: usize,
    pub num_partitions: usize,
    /// `num_partitions * dim` values, partition-major.
    pub centroids: Vec<f32>,
    /// Present for PQ models: `2^num_bits * dim` values in the core's order.
    pub pq: Option<PqModel>,
    /// SHA-256 of the serialized content, hex.
    pub fingerprint: String,
}

pub struct PqModel {
    pub num_sub_vectors: usize,
    pub num_bits: usize,
    pub codebook: Vec<f32>,
}

const MAGIC: &[u8; 8] = b"LANCEVM1";

impl LanceVectorModel {
    pub fn new(metric: i32, dim: usize, centroids: Vec<f32>, pq: Option<PqModel>) -> CResult<Self> {
        if dim == 0 || centroids.is_empty() || centroids.len() % dim != 0 {
            return Err(invalid(format!(
                "centroids hold {} values, not a whole number of {dim}-dimensional vectors",
                centroids.len()
            )));
        }
        if let Some(pq) = &pq {
            check_codebook_shape(pq.codebook.len(), dim, pq.num_sub_vectors, pq.num_bits)?;
        }
        let mut model = Self {
            metric,
            dim,
            num_partitions: centroids.len() / dim,
            centroids,
            pq,
            fingerprint: String::new(),
        };
        let digest = Sha256::digest(model.body());
        model.fingerprint = digest.iter().map(|b| format!("{b:02x}")).collect();
        Ok(model)
    }

    /// The canonical encoding: little-endian integers and floats after a magic.
    fn body(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + 4 * (self.centroids.len() + self.pq.as_ref().map_or(0, |p| p.codebook.len())));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.metric.to_le_bytes());
        for v in [self.dim as u64, self.num_partitions as u64] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend(self.centroids.iter().flat_map(|f| f.to_le_bytes()));
        match &self.pq {
            None => out.push(0),
            Some(pq) => {
                out.push(1);
                for v in [pq.num_sub_vectors as u64, pq.num_bits as u64, pq.codebook.len() as u64] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
                out.extend(pq.codebook.iter().flat_map(|f| f.to_le_bytes()));
            }
        }
        out
    }

    /// Serialized form: the body followed by its 32-byte SHA-256.
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = self.body();
        let digest = Sha256::digest(&out);
        out.extend_from_slice(&digest);
        out
    }

    pub fn parse(bytes: &[u8]) -> CResult<Self> {
        let bad = |what: &str| invalid(format!("model bytes are not a lance-c vector model: {what}"));
        if bytes.len() < MAGIC.len() + 32 || &bytes[..MAGIC.len()] != MAGIC {
            return Err(bad("wrong magic or too short"));
        }
        let (body, digest) = bytes.split_at(bytes.len() - 32);
        if Sha256::digest(body).as_slice() != digest {
            return Err(bad("checksum mismatch (truncated or corrupted)"));
        }
        let mut r = Reader { bytes: body, pos: MAGIC.len() };
        let metric = r.i32()?;
        metric_from_c(metric, "model metric")?;
        let dim = r.len()?;
        let num_partitions = r.len()?;
        let centroids = r.floats(num_partitions.checked_mul(dim).ok_or_else(|| bad("sizes overflow"))?)?;
        let pq = match r.u8()? {
            0 => None,
            1 => {
                let num_sub_vectors = r.len()?;
                let num_bits = r.len()?;
                let n = r.len()?;
                Some(PqModel { num_sub_vectors, num_bits, codebook: r.floats(n)? })
            }
            _ => return Err(bad("unknown section")),
        };
        if r.pos != body.len() {
            return Err(bad("trailing bytes"));
        }
        LanceVectorModel::new(metric, dim, centroids, pq)
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> CResult<&[u8]> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.bytes.len());
        let end = end.ok_or_else(|| invalid("model bytes are not a lance-c vector model: truncated"))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }
    fn u8(&mut self) -> CResult<u8> {
        Ok(self.take(1)?[0])
    }
    fn i32(&mut self) -> CResult<i32> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn len(&mut self) -> CResult<usize> {
        let v = u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes"));
        usize::try_from(v).map_err(|_| invalid("model bytes are not a lance-c vector model: size overflow"))
    }
    fn floats(&mut self, n: usize) -> CResult<Vec<f32>> {
        let raw = self.take(n.checked_mul(4).ok_or_else(|| invalid("model size overflow"))?)?;
        Ok(raw.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect())
    }
}

pub fn fsl(values: Vec<f32>, dim: usize) -> CResult<FixedSizeListArray> {
    let field = Arc::new(Field::new("item", DataType::Float32, true));
    Ok(FixedSizeListArray::try_new(field, dim as i32, Arc::new(Float32Array::from(values)), None)?)
}

/// The codebook must hold 2^num_bits centroids of the full dimension.
pub fn check_codebook_shape(values: usize, dim: usize, num_sub_vectors: usize, num_bits: usize) -> CResult<()> {
    if num_sub_vectors == 0 || dim % num_sub_vectors != 0 {
        return Err(invalid(format!(
            "num_sub_vectors = {num_sub_vectors} does not divide the dimension {dim}"
        )));
    }
    if !(1..=16).contains(&num_bits) {
        return Err(invalid(format!("num_bits = {num_bits} is out of range")));
    }
    let expected = (1usize << num_bits) * dim;
    if values != expected {
        return Err(invalid(format!(
            "the PQ codebook holds {values} values; {num_sub_vectors} sub-vectors of {num_bits} bits over dimension {dim} need {expected}"
        )));
    }
    Ok(())
}

fn check_sub_vectors(num_sub_vectors: usize, dim: usize, column: &str, name: &str) -> CResult<()> {
    if dim % num_sub_vectors != 0 {
        return Err(invalid(format!(
            "{name} = {num_sub_vectors} does not divide the dimension {dim} of column '{column}'"
        )));
    }
    Ok(())
}

fn column_dim(ds: &Dataset, column: &str) -> CResult<usize> {
    require_column(ds, column)?;
    Ok(get_vector_dim(ds.schema(), column)?)
}

fn train_ivf(ds: &Dataset, column: &str, num_partitions: usize, metric: DistanceType, p: &LanceVectorIndexParams, fragments: Option<&[u32]>) -> CResult<FixedSizeListArray> {
    let dim = column_dim(ds, column)?;
    let params = IvfBuildParams { num_partitions: Some(num_partitions), ..ivf_params(p) };
    let model = block_on(build_ivf_model(ds, column, dim, metric, &params, fragments, noop_progress()))?
        .context(format!("training IVF centroids on column '{column}'"))?;
    model
        .centroids
        .ok_or_else(|| invalid("the core returned an IVF model without centroids"))
}

fn train_pq(ds: &Dataset, column: &str, metric: DistanceType, params: &PQBuildParams, centroids: FixedSizeListArray, fragments: Option<&[u32]>) -> CResult<Vec<f32>> {
    let dim = column_dim(ds, column)?;
    if centroids.value_length() as usize != dim {
        return Err(invalid(format!(
            "ivf_centroids have dimension {}, column '{column}' has {dim}",
            centroids.value_length()
        )));
    }
    let ivf = IvfModel::new(centroids, None);
    let pq = block_on(build_pq_model_in_fragments(ds, column, dim, metric, params, Some(&ivf), fragments))?
        .context(format!("training the PQ codebook on column '{column}'"))?;
    let values = pq.codebook.values();
    let floats = values
        .as_any()
        .downcast_ref::<Float32Array>()
        .ok_or_else(|| invalid("the core returned a PQ codebook that is not float32"))?;
    Ok(floats.values().to_vec())
}

unsafe fn sample_fragments(ds: &Dataset, ids: *const u32, count: usize) -> CResult<Option<Vec<u32>>> {
    fragment_list(ds, ids, count, "sample_fragment_ids")
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_train_ivf_centroids(
    dataset: *const LanceDataset,
    column: *const c_char,
    num_partitions: u32,
    metric: i32,
    sample_fragment_ids: *const u32,
    sample_fragment_count: usize,
    out_centroids: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        let column = required_nonempty_str(column, "column")?;
        let metric = metric_from_c(metric, "metric")?;
        if num_partitions == 0 {
            return Err(invalid("num_partitions must be at least 1"));
        }
        require_out(out_centroids, "out_centroids")?;
        require_out(out_schema, "out_schema")?;
        let fragments = sample_fragments(&ds, sample_fragment_ids, sample_fragment_count)?;
        let centroids = train_ivf(&ds, column, num_partitions as usize, metric, &LanceVectorIndexParams::defaults(101), fragments.as_deref())?;
        export_array(&centroids, out_centroids, out_schema)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_train_pq_codebook(
    dataset: *const LanceDataset,
    column: *const c_char,
    num_sub_vectors: u32,
    num_bits: u32,
    metric: i32,
    ivf_centroids: *const FFI_ArrowArray,
    ivf_centroids_schema: *const FFI_ArrowSchema,
    sample_fragment_ids: *const u32,
    sample_fragment_count: usize,
    out_codebook: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        let column = required_nonempty_str(column, "column")?;
        let metric = metric_from_c(metric, "metric")?;
        require_out(out_codebook, "out_codebook")?;
        require_out(out_schema, "out_schema")?;
        let (values, dim) = read_f32_list(ivf_centroids, ivf_centroids_schema, "ivf_centroids")?;
        let centroids = fsl(values, dim)?;
        let fragments = sample_fragments(&ds, sample_fragment_ids, sample_fragment_count)?;
        let p = LanceVectorIndexParams { num_sub_vectors, num_bits, ..LanceVectorIndexParams::defaults(103) };
        let params = pq_params(&p);
        let col_dim = column_dim(&ds, column)?;
        check_sub_vectors(params.num_sub_vectors, col_dim, column, "num_sub_vectors")?;
        let codebook = train_pq(&ds, column, metric, &params, centroids, fragments.as_deref())?;
        export_array(&fsl(codebook, col_dim)?, out_codebook, out_schema)
    })
}

/// Whether the index type quantizes with PQ (and so needs a codebook).
pub fn uses_pq(index_type: i32) -> bool {
    matches!(index_type, 103 | 105)
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_train_vector_model(
    dataset: *const LanceDataset,
    column: *const c_char,
    params: *const LanceVectorIndexParams,
    sample_fragment_ids: *const u32,
    sample_fragment_count: usize,
    out_model: *mut *mut LanceVectorModel,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        let column = required_nonempty_str(column, "column")?;
        if params.is_null() {
            return Err(invalid("params must not be NULL"));
        }
        let p = &*params;
        require_out(out_model, "out_model")?;
        // Validates the index type and metric the same way a build does.
        crate::index::vector_params(p)?;
        let metric = metric_from_c(p.metric, "params->metric")?;
        if p.num_partitions == 0 {
            return Err(invalid(
                "params->num_partitions must be set to train a shared model (every segment must agree on it)",
            ));
        }
        let fragments = sample_fragments(&ds, sample_fragment_ids, sample_fragment_count)?;
        let dim = column_dim(&ds, column)?;
        let centroids = train_ivf(&ds, column, p.num_partitions as usize, metric, p, fragments.as_deref())?;
        let pq = if uses_pq(p.index_type) {
            let params = pq_params(p);
            check_sub_vectors(params.num_sub_vectors, dim, column, "params->num_sub_vectors")?;
            let codebook = train_pq(&ds, column, metric, &params, centroids.clone(), fragments.as_deref())?;
            Some(PqModel { num_sub_vectors: params.num_sub_vectors, num_bits: params.num_bits, codebook })
        } else {
            None
        };
        let values = centroids
            .values()
            .as_any()
            .downcast_ref::<Float32Array>()
            .ok_or_else(|| invalid("the core returned centroids that are not float32"))?
            .values()
            .to_vec();
        let model = LanceVectorModel::new(p.metric, dim, values, pq)?;
        write_out(out_model, Box::into_raw(Box::new(model)));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_from_arrow(
    metric: i32,
    ivf_centroids: *const FFI_ArrowArray,
    ivf_centroids_schema: *const FFI_ArrowSchema,
    num_sub_vectors: u32,
    num_bits: u32,
    pq_codebook: *const FFI_ArrowArray,
    pq_codebook_schema: *const FFI_ArrowSchema,
    out_model: *mut *mut LanceVectorModel,
) -> i32 {
    status(|| {
        metric_from_c(metric, "metric")?;
        require_out(out_model, "out_model")?;
        let (centroids, dim) = read_f32_list(ivf_centroids, ivf_centroids_schema, "ivf_centroids")?;
        let pq = if pq_codebook.is_null() {
            None
        } else {
            let (codebook, _) = read_f32_list(pq_codebook, pq_codebook_schema, "pq_codebook")?;
            Some(PqModel { num_sub_vectors: num_sub_vectors as usize, num_bits: num_bits as usize, codebook })
        };
        let model = LanceVectorModel::new(metric, dim, centroids, pq)?;
        write_out(out_model, Box::into_raw(Box::new(model)));
        Ok(())
    })
}

unsafe fn model_ref<'a>(model: *const LanceVectorModel) -> CResult<&'a LanceVectorModel> {
    if model.is_null() {
        return Err(invalid("model must not be NULL"));
    }
    Ok(&*model)
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_serialize(
    model: *const LanceVectorModel,
    out_bytes: *mut *mut u8,
    out_len: *mut usize,
) -> i32 {
    status(|| {
        let model = model_ref(model)?;
        require_out(out_bytes, "out_bytes")?;
        require_out(out_len, "out_len")?;
        let bytes = model.serialize();
        write_out(out_len, bytes.len());
        write_out(out_bytes, into_c_bytes(bytes));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_parse(
    bytes: *const u8,
    len: usize,
    out_model: *mut *mut LanceVectorModel,
) -> i32 {
    status(|| {
        require_out(out_model, "out_model")?;
        let bytes = slice_arg(bytes, len, "bytes")?;
        let model = LanceVectorModel::parse(bytes)?;
        write_out(out_model, Box::into_raw(Box::new(model)));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_fingerprint(model: *const LanceVectorModel) -> *const c_char {
    guard(std::ptr::null(), || Ok(into_c_string(model_ref(model)?.fingerprint.clone())))
}

/// Mirrors `LanceVectorModelInfo` in lance.h.
#[repr(C)]
pub struct LanceVectorModelInfo {
    pub metric: i32,
    pub dimension: u32,
    pub num_partitions: u32,
    pub has_pq_codebook: bool,
    pub num_sub_vectors: u32,
    pub num_bits: u32,
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_info(model: *const LanceVectorModel, out: *mut LanceVectorModelInfo) -> i32 {
    status(|| {
        let m = model_ref(model)?;
        require_out(out, "out")?;
        write_out(out, LanceVectorModelInfo {
            metric: m.metric,
            dimension: m.dim as u32,
            num_partitions: m.num_partitions as u32,
            has_pq_codebook: m.pq.is_some(),
            num_sub_vectors: m.pq.as_ref().map_or(0, |p| p.num_sub_vectors as u32),
            num_bits: m.pq.as_ref().map_or(0, |p| p.num_bits as u32),
        });
        Ok(())
    })
}

/// Exports one part of a model as a FixedSizeList<float32>[n, dim].
unsafe fn export_part(
    model: *const LanceVectorModel,
    out_array: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
    part: impl FnOnce(&LanceVectorModel) -> CResult<Vec<f32>>,
) -> i32 {
    status(|| {
        let m = model_ref(model)?;
        require_out(out_array, "out_array")?;
        require_out(out_schema, "out_schema")?;
        export_array(&fsl(part(m)?, m.dim)?, out_array, out_schema)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_centroids(
    model: *const LanceVectorModel,
    out_array: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
) -> i32 {
    export_part(model, out_array, out_schema, |m| Ok(m.centroids.clone()))
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_codebook(
    model: *const LanceVectorModel,
    out_array: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
) -> i32 {
    export_part(model, out_array, out_schema, |m| {
        m.pq.as_ref().map(|pq| pq.codebook.clone()).ok_or_else(|| invalid("the model has no PQ codebook"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_free(model: *mut LanceVectorModel) {
    if !model.is_null() {
        drop(Box::from_raw(model));
    }
}
