//! The retraining advice of the maintenance plan (lance.h
//! `LanceIndexMaintenanceOptions.drift_threshold`): how much worse the
//! committed model of a vector index fits the rows its segments do not
//! cover yet than the rows they cover.
//!
//! The fit is the k-means loss: the mean squared L2 distance from a row to
//! its nearest IVF centroid (rows scaled to unit length first under the
//! cosine metric, as the core's IVF training scales them).  Both sides
//! are measured on an evenly spread sample of at most SAMPLE_ROWS rows of
//! their fragments, against the model read back from the committed
//! segments (index/committed_model.rs).  New rows drawn from the
//! distribution the model was trained on fit it about as well as the
//! indexed rows (a ratio near 1); rows from elsewhere fit it worse, and a
//! ratio above the caller's threshold says: train a new model.

use arrow::compute::cast;
use arrow_array::{Array, FixedSizeListArray};
use arrow_schema::{DataType, Field};
use roaring::RoaringBitmap;
use serde_json::{json, Value};
use std::sync::Arc;

use lance::Dataset;

use crate::boundary::error::{not_supported, CResult};
use crate::boundary::params::METRIC_COSINE;
use crate::index::committed_model::read_committed_model;
use crate::index::vector_model::{f32_values, LanceVectorModel};
use crate::process::runtime::block_on;

/// The most rows sampled on each side.
pub const SAMPLE_ROWS: u64 = 4096;

/// The advice as the plan's "drift" object: the threshold, each side's
/// sampled rows and loss, their ratio, and whether to retrain.
pub fn drift(
    ds: &Dataset,
    index: &str,
    column: &str,
    new_fragments: &RoaringBitmap,
    indexed_fragments: &RoaringBitmap,
    threshold: f32,
) -> CResult<Value> {
    let model = read_committed_model(ds, index)?;
    let (new_rows, new_loss) = loss(ds, column, new_fragments, &model)?;
    let (indexed_rows, indexed_loss) = loss(ds, column, indexed_fragments, &model)?;
    let ratio = match (new_loss, indexed_loss) {
        (Some(new), Some(indexed)) if indexed > 0.0 => Some(new / indexed),
        (Some(new), Some(_)) => Some(if new > 0.0 { f64::INFINITY } else { 1.0 }),
        _ => None,
    };
    Ok(json!({
        "threshold": threshold,
        "model_fingerprint": model.fingerprint,
        "new_rows_sampled": new_rows,
        "new_rows_loss": new_loss,
        "indexed_rows_sampled": indexed_rows,
        "indexed_rows_loss": indexed_loss,
        // JSON has no infinity: a model that fits its indexed rows exactly
        // and the new ones not at all reports no ratio and advises retraining.
        "ratio": ratio.filter(|r| r.is_finite()),
        "retrain": ratio.is_some_and(|r| r > f64::from(threshold)),
    }))
}

/// Sampled rows and their mean loss (None without a non-null row).
fn loss(
    ds: &Dataset,
    column: &str,
    fragments: &RoaringBitmap,
    model: &LanceVectorModel,
) -> CResult<(u64, Option<f64>)> {
    let projection = ds.schema().project(&[column])?;
    let mut picks = sample_offsets(ds, fragments).into_iter().peekable();
    let mut sum = 0f64;
    let mut count = 0u64;
    // The picks come in manifest order: one pass over the fragments pairs
    // them (a lookup by id for each would search the manifest each time).
    for fragment in ds.get_fragments() {
        let Some(offsets) = picks.next_if(|(id, _)| *id as usize == fragment.id()).map(|(_, o)| o) else {
            continue;
        };
        let batch = block_on(fragment.take(&offsets, &projection))??;
        let vectors = as_f32_list(batch.column(0).as_ref(), column)?;
        let values = f32_values(&vectors).expect("cast to float32 above");
        for row in 0..vectors.len() {
            if vectors.is_null(row) {
                continue;
            }
            let v = &values[row * model.dim..(row + 1) * model.dim];
            if let Some(d) = nearest(v, model) {
                sum += d;
                count += 1;
            }
        }
    }
    Ok((count, (count > 0).then(|| sum / count as f64)))
}

/// Evenly spread live-row offsets over `fragments`, at most SAMPLE_ROWS in
/// all, grouped by fragment, in manifest order.
fn sample_offsets(ds: &Dataset, fragments: &RoaringBitmap) -> Vec<(u32, Vec<u32>)> {
    let rows: Vec<(u32, u64)> = ds
        .manifest
        .fragments
        .iter()
        .filter(|f| fragments.contains(f.id as u32))
        .map(|f| (f.id as u32, f.num_rows().unwrap_or(0) as u64))
        .collect();
    let total: u64 = rows.iter().map(|r| r.1).sum();
    let n = total.min(SAMPLE_ROWS);
    let mut picks: Vec<(u32, Vec<u32>)> = Vec::new();
    let (mut at, mut start) = (0usize, 0u64);
    for k in 0..n {
        // The k-th of n points spread over [0, total).
        let global = k * total / n;
        while global >= start + rows[at].1 {
            start += rows[at].1;
            at += 1;
        }
        let offset = (global - start) as u32;
        match picks.last_mut() {
            Some((id, offsets)) if *id == rows[at].0 => offsets.push(offset),
            _ => picks.push((rows[at].0, vec![offset])),
        }
    }
    picks
}

/// The column as FixedSizeList<float32> (float16 and float64 vectors cast).
fn as_f32_list(array: &dyn Array, column: &str) -> CResult<FixedSizeListArray> {
    let DataType::FixedSizeList(_, dim) = array.data_type() else {
        return Err(not_supported(format!("column '{column}' is not a FixedSizeList of floats")));
    };
    let target = DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, true)), *dim);
    let cast = cast(array, &target)
        .map_err(|e| not_supported(format!("column '{column}' cannot be read as float32 vectors: {e}")))?;
    Ok(cast.as_any().downcast_ref::<FixedSizeListArray>().expect("cast to a FixedSizeList").clone())
}

/// The squared L2 distance from `v` to its nearest centroid; None for a
/// vector of length 0 under the cosine metric (it has no direction).
fn nearest(v: &[f32], model: &LanceVectorModel) -> Option<f64> {
    let scaled: Vec<f32>;
    let v: &[f32] = if model.metric == METRIC_COSINE {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm == 0.0 || !norm.is_finite() {
            return None;
        }
        scaled = v.iter().map(|x| x / norm).collect();
        &scaled
    } else {
        v
    };
    model
        .centroids
        .chunks_exact(model.dim)
        .map(|c| c.iter().zip(v).map(|(a, b)| (a - b) * (a - b)).sum::<f32>())
        .min_by(f32::total_cmp)
        .map(f64::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(metric: i32, dim: usize, centroids: Vec<f32>) -> LanceVectorModel {
        LanceVectorModel::new(metric, dim, centroids, None).expect("a valid model")
    }

    #[test]
    fn nearest_is_the_smallest_squared_distance() {
        let m = model(0, 2, vec![0.0, 0.0, 10.0, 0.0]);
        assert_eq!(nearest(&[1.0, 1.0], &m), Some(2.0));
        assert_eq!(nearest(&[9.0, 2.0], &m), Some(5.0));
    }

    #[test]
    fn cosine_scales_rows_to_unit_length() {
        let m = model(METRIC_COSINE, 2, vec![1.0, 0.0, 0.0, 1.0]);
        // (3, 4) scaled is (0.6, 0.8): nearest (0, 1) at 0.36 + 0.04.
        let d = nearest(&[3.0, 4.0], &m).unwrap();
        assert!((d - 0.4).abs() < 1e-6, "{d}");
        assert_eq!(nearest(&[0.0, 0.0], &m), None);
    }
}
