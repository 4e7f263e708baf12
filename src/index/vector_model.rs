//! A shared vector model (RFC E1): IVF centroids, and a PQ codebook for the
//! PQ index types or a RaBitQ rotation for IVF_RQ, with the serialized form
//! that travels to workers without an Arrow library and the content
//! fingerprint segments record.

use std::sync::Arc;

use arrow_array::types::Float32Type;
use arrow_array::{Array, FixedSizeListArray, Float32Array};
use arrow_schema::{DataType, Field};
use lance::index::vector::{StageParams, VectorIndexParams};
use lance_index::vector::bq::builder::RabitQuantizer;
use lance_index::vector::bq::storage::RabitQuantizationMetadata;
use lance_index::vector::bq::{RQBuildParams, RQRotationType, RABIT_MAX_NUM_BITS, RABIT_MIN_NUM_BITS};
use sha2::{Digest, Sha256};

use crate::boundary::error::{invalid, CResult};
use crate::boundary::params::{metric_from_c, LanceVectorIndexParams};
use crate::index::bytes::{hex, ByteReader, ByteWriter};
use crate::index::kinds::{has_rotation, uses_pq, vector_type_name};

/// A trained IVF model, with a PQ codebook for the PQ index types.
pub struct LanceVectorModel {
    pub metric: i32,
    pub dim: usize,
    pub num_partitions: usize,
    /// `num_partitions * dim` values, partition-major.
    pub centroids: Vec<f32>,
    /// Present for PQ models: `2^num_bits * dim` values in the core's order.
    pub pq: Option<PqModel>,
    /// Present for IVF_RQ models trained by lance-c 0.5 or later: the
    /// rotation every segment built from the model uses.
    pub rq: Option<RqRotation>,
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

/// The RaBitQ rotation of an IVF_RQ model.  Every segment built from the
/// model rotates its vectors with it, so their codes are comparable and the
/// core merges them (it refuses segments whose rotations differ).  Only the
/// core's fast rotation (sign flips between Walsh-Hadamard rounds) is drawn
/// here: `LanceVectorIndexParams` has no rotation type, and a build from C
/// takes the core's default, which is the fast one.
#[derive(Clone, Debug, PartialEq)]
pub struct RqRotation {
    /// Bits per dimension of the codes (the core's `RQBuildParams::num_bits`).
    pub num_bits: u8,
    /// The core's random sign bytes for the model's dimension.
    pub signs: Vec<u8>,
}

/// The tag of a fast rotation in the bytes (the only kind drawn here).
const ROTATION_FAST: u8 = 0;

/// The RaBitQ bits per dimension a C `num_bits` asks for (0 = the core's
/// default); `name` is the caller's parameter, for messages.
pub fn rq_num_bits(num_bits: u32, name: &str) -> CResult<u8> {
    if num_bits == 0 {
        return Ok(RQBuildParams::default().num_bits);
    }
    match u8::try_from(num_bits) {
        Ok(bits) if (RABIT_MIN_NUM_BITS..=RABIT_MAX_NUM_BITS).contains(&bits) => Ok(bits),
        _ => Err(invalid(format!(
            "{name} = {num_bits}: IVF_RQ codes have {RABIT_MIN_NUM_BITS} to {RABIT_MAX_NUM_BITS} bits per dimension \
             (0 = {})",
            RQBuildParams::default().num_bits
        ))),
    }
}

/// A fast rotation's metadata as the core's own constructor makes it for
/// `dim` dimensions: the fields a one-shot build's quantizer starts with,
/// with freshly drawn signs.
fn core_rotation(dim: usize, num_bits: u8) -> CResult<RabitQuantizationMetadata> {
    let dim = i32::try_from(dim).map_err(|_| invalid(format!("dimension {dim} is too large for IVF_RQ")))?;
    let quantizer = RabitQuantizer::new_with_rotation::<Float32Type>(num_bits, dim, RQRotationType::Fast);
    Ok(quantizer.metadata_ref().clone())
}

impl RqRotation {
    /// A rotation drawn by the core's constructor, as a one-shot IVF_RQ
    /// build draws its own.
    pub fn draw(dim: usize, num_bits: u8) -> CResult<Self> {
        let signs = core_rotation(dim, num_bits)?
            .fast_rotation_signs
            .ok_or_else(|| invalid("the core drew a fast rotation without its signs"))?;
        Ok(Self { num_bits, signs })
    }

    /// A rotation drawn from `seed`: as many sign bytes as the core draws,
    /// from a SHA-256 stream of the seed, so that one seed gives one
    /// rotation (a distributed training's model is the same at every call
    /// and after a resume).
    pub fn from_seed(dim: usize, num_bits: u8, seed: u64) -> CResult<Self> {
        let len = Self::draw(dim, num_bits)?.signs.len();
        let mut signs = Vec::with_capacity(len + 32);
        let mut block = 0u64;
        while signs.len() < len {
            let mut h = Sha256::new();
            h.update(b"lance-c RaBitQ rotation");
            h.update(seed.to_le_bytes());
            h.update(block.to_le_bytes());
            signs.extend_from_slice(&h.finalize());
            block += 1;
        }
        signs.truncate(len);
        Ok(Self { num_bits, signs })
    }

    /// The rotation fits `dim` dimensions: its bits are in the core's range
    /// and it has as many sign bytes as the core's fast rotation has.
    fn check(&self, dim: usize) -> CResult<()> {
        if !(RABIT_MIN_NUM_BITS..=RABIT_MAX_NUM_BITS).contains(&self.num_bits) {
            return Err(invalid(format!(
                "the RaBitQ rotation is for {} bits per dimension, outside {RABIT_MIN_NUM_BITS}..={RABIT_MAX_NUM_BITS}",
                self.num_bits
            )));
        }
        let want = Self::draw(dim, self.num_bits)?.signs.len();
        if self.signs.len() != want {
            return Err(invalid(format!(
                "the RaBitQ rotation holds {} sign bytes; dimension {dim} needs {want}",
                self.signs.len()
            )));
        }
        Ok(())
    }
}

/// Gives an IVF_RQ build (`params`, made from the caller's `p`) the model's
/// rotation (`RQBuildParams::rotation`), so that it rotates as every other
/// segment of the model does instead of drawing its own.  p->num_bits 0
/// takes the model's bits.
pub fn inject_rotation(
    params: &mut VectorIndexParams,
    rotation: &RqRotation,
    p: &LanceVectorIndexParams,
    dim: usize,
) -> CResult<()> {
    let rq = params.stages.iter_mut().find_map(|stage| match stage {
        StageParams::RQ(rq) => Some(rq),
        _ => None,
    });
    let Some(rq) = rq else {
        return Err(invalid(format!(
            "the model carries a RaBitQ rotation, which only an IVF_RQ build takes; params->index_type = {} ({})",
            p.index_type,
            vector_type_name(p.index_type).unwrap_or("unknown")
        )));
    };
    if p.num_bits != 0 && p.num_bits != u32::from(rotation.num_bits) {
        return Err(invalid(format!(
            "the model's RaBitQ rotation is for {} bits per dimension, params->num_bits is {}",
            rotation.num_bits, p.num_bits
        )));
    }
    let mut metadata = core_rotation(dim, rotation.num_bits)?;
    metadata.fast_rotation_signs = Some(rotation.signs.clone());
    rq.num_bits = rotation.num_bits;
    rq.rotation_type = RQRotationType::Fast;
    rq.rotation = Some(metadata);
    Ok(())
}

const MAGIC: &[u8; 8] = b"LANCEVM1";
/// The same encoding preceded by the index type the model was trained for.
/// (A rotation, new in lance-c 0.5, is a third kind of the last section:
/// bytes of earlier versions parse unchanged, and a model without a
/// rotation is written as they were.)
const MAGIC_TYPED: &[u8; 8] = b"LANCEVM2";

impl LanceVectorModel {
    pub fn new(metric: i32, dim: usize, centroids: Vec<f32>, pq: Option<PqModel>) -> CResult<Self> {
        if i32::try_from(dim).is_err() || u32::try_from(centroids.len() / dim.max(1)).is_err() {
            return Err(invalid(format!(
                "a model of dimension {dim} with {} centroid values is too large",
                centroids.len()
            )));
        }
        if dim == 0 || centroids.is_empty() || !centroids.len().is_multiple_of(dim) {
            return Err(invalid(format!(
                "centroids hold {} values, not a whole number of {dim}-dimensional vectors",
                centroids.len()
            )));
        }
        if let Some(pq) = &pq {
            check_codebook_shape(pq.codebook.len(), dim, pq.num_sub_vectors, pq.num_bits)?;
        }
        // Every way into a model (training, Arrow arrays, bytes) passes here:
        // a model never holds an infinity or NaN, which every distance to it
        // would carry into the index.
        let non_finite = |what: &str, values: &[f32]| {
            values
                .iter()
                .position(|v| !v.is_finite())
                .map(|i| invalid(format!("the model's {what} hold a non-finite value ({what}[{i}] = {})", values[i])))
        };
        if let Some(err) = non_finite("centroids", &centroids) {
            return Err(err);
        }
        if let Some(err) = pq.as_ref().and_then(|pq| non_finite("PQ codebook values", &pq.codebook)) {
            return Err(err);
        }
        let mut model = Self {
            metric,
            dim,
            num_partitions: centroids.len() / dim,
            centroids,
            pq,
            rq: None,
            index_type: 0,
            fingerprint: String::new(),
        };
        model.fingerprint = model.content_fingerprint();
        Ok(model)
    }

    fn content_fingerprint(&self) -> String {
        hex(&Sha256::digest(self.body(false).body()))
    }

    /// The IVF_RQ model with its RaBitQ rotation, which becomes part of its
    /// content and so of its fingerprint.
    pub fn with_rotation(mut self, rotation: RqRotation) -> CResult<Self> {
        if !has_rotation(self.index_type) {
            return Err(invalid("a RaBitQ rotation belongs to a model trained for IVF_RQ"));
        }
        rotation.check(self.dim)?;
        self.rq = Some(rotation);
        self.fingerprint = self.content_fingerprint();
        Ok(self)
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
        match (&self.pq, &self.rq) {
            (Some(pq), _) => w
                .u8(1)
                .u64(pq.num_sub_vectors as u64)
                .u64(pq.num_bits as u64)
                .u64(pq.codebook.len() as u64)
                .floats(&pq.codebook),
            (None, Some(rq)) => {
                w.u8(2).u8(ROTATION_FAST).u8(rq.num_bits).u64(rq.signs.len() as u64);
                for b in &rq.signs {
                    w.u8(*b);
                }
                &mut w
            }
            (None, None) => w.u8(0),
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
        let (pq, rq) = match r.u8()? {
            0 => (None, None),
            1 => {
                let num_sub_vectors = r.len()?;
                let num_bits = r.len()?;
                let n = r.len()?;
                (Some(PqModel { num_sub_vectors, num_bits, codebook: r.floats(n)? }), None)
            }
            2 => {
                if r.u8()? != ROTATION_FAST {
                    return Err(r.bad("unknown kind of RaBitQ rotation"));
                }
                let num_bits = r.u8()?;
                let n = r.len()?;
                let mut signs = Vec::new();
                for _ in 0..n {
                    signs.push(r.u8()?);
                }
                (None, Some(RqRotation { num_bits, signs }))
            }
            _ => return Err(r.bad("unknown section")),
        };
        r.finish()?;
        let mut model = LanceVectorModel::new(metric, dim, centroids, pq)?;
        if typed {
            model = model.trained_for(index_type).map_err(|e| r.bad(&e.message))?;
        }
        if let Some(rq) = rq {
            model = model.with_rotation(rq).map_err(|e| r.bad(&e.message))?;
        }
        Ok(model)
    }
}

/// The float32 values of a FixedSizeList array, row after row (`fsl`'s
/// inverse); None when its values are not float32.
pub fn f32_values(list: &FixedSizeListArray) -> Option<Vec<f32>> {
    let width = list.value_length() as usize;
    let values = list.values().slice(list.offset() * width, list.len() * width);
    Some(values.as_any().downcast_ref::<Float32Array>()?.values().to_vec())
}

pub fn fsl(values: Vec<f32>, dim: usize) -> CResult<FixedSizeListArray> {
    let field = Arc::new(Field::new("item", DataType::Float32, true));
    let size = i32::try_from(dim).map_err(|_| invalid(format!("dimension {dim} is too large for an Arrow list")))?;
    Ok(FixedSizeListArray::try_new(field, size, Arc::new(Float32Array::from(values)), None)?)
}

/// The codebook must hold 2^num_bits centroids of the full dimension.
pub fn check_codebook_shape(values: usize, dim: usize, num_sub_vectors: usize, num_bits: usize) -> CResult<()> {
    if num_sub_vectors == 0 || !dim.is_multiple_of(num_sub_vectors) {
        return Err(invalid(format!("num_sub_vectors = {num_sub_vectors} does not divide the dimension {dim}")));
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
