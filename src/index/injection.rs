//! A model given to a vector build (a model handle, or the Arrow arrays of a
//! segment builder's options), checked against the build's params and
//! column and turned into the core's parameters: the IVF centroids, the PQ
//! codebook and the IVF_RQ rotation the core then uses instead of training.

use std::sync::Arc;

use lance::index::vector::VectorIndexParams;
use lance_index::IndexType;

use crate::boundary::error::{invalid, CResult, Context};
use crate::boundary::params::LanceVectorIndexParams;
use crate::index::build_params::{ivf_params, pq_params, vector_params_with_ivf};
use crate::index::codec::MODEL_FINGERPRINT_HINT;
use crate::index::kinds::uses_pq;
use crate::index::vector_model::{check_codebook_shape, fsl, inject_rotation, LanceVectorModel, PqModel, RqRotation};

/// A model given to a vector build, from the options' Arrow arrays or from
/// a model handle, before it is checked against the params and the column.
pub struct Injected {
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
    /// A model handle's model, checked against the builder's params.
    pub fn from_model(m: &LanceVectorModel, p: &LanceVectorIndexParams) -> CResult<Self> {
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

    /// A model given as arrays (centroids of `dim` values each, an optional
    /// PQ codebook in the params' shape): fingerprinted by its content, as
    /// arrays carry no fingerprint of their own.
    pub fn from_arrays(
        centroids: Vec<f32>,
        dim: usize,
        codebook: Option<Vec<f32>>,
        p: &LanceVectorIndexParams,
    ) -> CResult<Self> {
        let pq = codebook.clone().map(|codebook| {
            let pq = pq_params(p);
            PqModel { num_sub_vectors: pq.num_sub_vectors, num_bits: pq.num_bits, codebook }
        });
        let model = LanceVectorModel::new(p.metric, dim, centroids.clone(), pq)
            .context("options->ivf_centroids and options->pq_codebook")?;
        Ok(Injected { centroids, dim, codebook, pq_shape: None, rotation: None, fingerprint: model.fingerprint })
    }
}

/// The core's parameters of a vector build: trained by the build, or with
/// the given model (checked against the params and the column's dimension).
pub fn vector_core_params(
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
