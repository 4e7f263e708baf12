//! A shared vector model (RFC E1): IVF centroids, and a PQ codebook for the
//! PQ index types, with the serialized form that travels to workers without
//! an Arrow library and the content fingerprint segments record.

use std::sync::Arc;

use arrow_array::{FixedSizeListArray, Float32Array};
use arrow_schema::{DataType, Field};
use sha2::{Digest, Sha256};

use crate::floor::bytes::{hex, ByteReader, ByteWriter};
use crate::floor::error::{invalid, CResult};
use crate::floor::params::{metric_from_c, uses_pq, vector_type_name};

/// A trained IVF model, with a PQ codebook for the PQ index types.
pub struct LanceVectorModel {
    pub metric: i32,
    pub dim: usize,
    pub num_partitions: usize,
    /// `num_partitions * dim` values, partition-major.
    pub centroids: Vec<f32>,
    /// Present for PQ models: `2^num_bits * dim` values in the core's order.
    pub pq: Option<PqModel>,
    /// The `LanceVectorIndexType` it was trained for, 0 when not recorded
    /// (a model made from Arrow arrays, or serialized before types were).
    pub index_type: i32,
    /// SHA-256 of the serialized content, hex.
    pub fingerprint: String,
}

pub struct PqModel {
    pub num_sub_vectors: usize,
    pub num_bits: usize,
    pub codebook: Vec<f32>,
}

const MAGIC: &[u8; 8] = b"LANCEVM1";
/// The same encoding preceded by the index type the model was trained for.
const MAGIC_TYPED: &[u8; 8] = b"LANCEVM2";

impl LanceVectorModel {
    pub fn new(metric: i32, dim: usize, centroids: Vec<f32>, pq: Option<PqModel>) -> CResult<Self> {
        if i32::try_from(dim).is_err() || u32::try_from(centroids.len() / dim.max(1)).is_err() {
            return Err(invalid(format!("a model of dimension {dim} with {} centroid values is too large", centroids.len())));
        }
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
            index_type: 0,
            fingerprint: String::new(),
        };
        model.fingerprint = hex(&Sha256::digest(model.body(false).body()));
        Ok(model)
    }

    /// The model recording the index type it was trained for: a PQ type
    /// needs the PQ codebook, every other type a model without one.  The
    /// type is not part of the fingerprint, which names the content
    /// segments are built from (the same centroids given as Arrow arrays,
    /// which carry no type, must match).
    pub fn trained_for(mut self, index_type: i32) -> CResult<Self> {
        let name = vector_type_name(index_type)
            .ok_or_else(|| invalid(format!("index type {index_type} is not a LanceVectorIndexType")))?;
        if uses_pq(index_type) != self.pq.is_some() {
            return Err(invalid(format!(
                "a model for {name} {} a PQ codebook",
                if uses_pq(index_type) { "needs" } else { "has no" }
            )));
        }
        self.index_type = index_type;
        Ok(self)
    }

    /// The canonical encoding: little-endian integers and floats after a
    /// magic (and, `with_type`, the index type when recorded).
    fn body(&self, with_type: bool) -> ByteWriter {
        let mut w = if self.index_type == 0 || !with_type {
            ByteWriter::new(MAGIC)
        } else {
            let mut w = ByteWriter::new(MAGIC_TYPED);
            w.i32(self.index_type);
            w
        };
        w.i32(self.metric).u64(self.dim as u64).u64(self.num_partitions as u64).floats(&self.centroids);
        match &self.pq {
            None => w.u8(0),
            Some(pq) => w
                .u8(1)
                .u64(pq.num_sub_vectors as u64)
                .u64(pq.num_bits as u64)
                .u64(pq.codebook.len() as u64)
                .floats(&pq.codebook),
        };
        w
    }

    /// Serialized form: the body followed by its 32-byte SHA-256.
    pub fn serialize(&self) -> Vec<u8> {
        self.body(true).seal()
    }

    pub fn parse(bytes: &[u8]) -> CResult<Self> {
        let typed = bytes.starts_with(MAGIC_TYPED);
        let magic = if typed { MAGIC_TYPED } else { MAGIC };
        let (mut r, _) = ByteReader::unseal(bytes, magic, "a lance-c vector model", "the model bytes")?;
        let index_type = if typed { r.i32()? } else { 0 };
        let metric = r.i32()?;
        metric_from_c(metric, "model metric")?;
        let dim = r.len()?;
        let num_partitions = r.len()?;
        let centroids = r.floats(num_partitions.checked_mul(dim).ok_or_else(|| r.bad("sizes overflow"))?)?;
        let pq = match r.u8()? {
            0 => None,
            1 => {
                let num_sub_vectors = r.len()?;
                let num_bits = r.len()?;
                let n = r.len()?;
                Some(PqModel { num_sub_vectors, num_bits, codebook: r.floats(n)? })
            }
            _ => return Err(r.bad("unknown section")),
        };
        r.finish()?;
        let model = LanceVectorModel::new(metric, dim, centroids, pq)?;
        if typed {
            return model.trained_for(index_type).map_err(|e| r.bad(&e.message));
        }
        Ok(model)
    }
}

pub fn fsl(values: Vec<f32>, dim: usize) -> CResult<FixedSizeListArray> {
    let field = Arc::new(Field::new("item", DataType::Float32, true));
    let size = i32::try_from(dim).map_err(|_| invalid(format!("dimension {dim} is too large for an Arrow list")))?;
    Ok(FixedSizeListArray::try_new(field, size, Arc::new(Float32Array::from(values)), None)?)
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

/// A model size as the 32-bit field lance.h declares.
pub fn narrow(value: usize) -> u32 {
    u32::try_from(value).expect("model sizes are checked to fit 32 bits when the model is made")
}
