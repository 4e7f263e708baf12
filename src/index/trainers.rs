//! The trainers of a shared vector model over the core's entry points: its
//! IVF centroids, its PQ codebook and a whole model (lance.h "Distributed
//! index builds: shared models", api/model.rs), each run under a build
//! control as a stage of its own; a seed trains with this library's rounds
//! instead (index/training/).

use std::sync::Arc;

use arrow_array::FixedSizeListArray;
use lance::index::vector::ivf::build_ivf_model;
use lance::index::vector::pq::build_pq_model_in_fragments;
use lance::index::vector::utils::get_vector_dim;
use lance::Dataset;
use lance_index::progress::{noop_progress, IndexBuildProgress};
use lance_index::vector::ivf::storage::IvfModel;
use lance_index::vector::ivf::IvfBuildParams;
use lance_index::vector::pq::PQBuildParams;
use lance_linalg::distance::DistanceType;

use crate::boundary::error::{invalid, CResult, Context};
use crate::boundary::params::LanceVectorIndexParams;
use crate::boundary::training_options::TrainingOptions;
use crate::index::build_params::{ivf_params, pq_params};
use crate::index::catalog::{check_partitions, live_rows, require_column};
use crate::index::kinds::uses_pq;
use crate::index::progress::BuildControl;
use crate::index::training::{train_alone, Plan};
use crate::index::vector_model::{f32_values, LanceVectorModel, PqModel, RqRotation};

/// `name` (`num_sub_vectors`, a parameter of the caller's) must divide the
/// dimension of `column`.
pub fn check_sub_vectors(num_sub_vectors: usize, dim: usize, column: &str, name: &str) -> CResult<()> {
    if !dim.is_multiple_of(num_sub_vectors) {
        return Err(invalid(format!(
            "{name} = {num_sub_vectors} does not divide the dimension {dim} of column '{column}'"
        )));
    }
    Ok(())
}

/// The dimension of the vector column `column`, which must exist.
pub fn column_dim(ds: &Dataset, column: &str) -> CResult<usize> {
    require_column(ds, column)?;
    Ok(get_vector_dim(ds.schema(), column)?)
}

/// Runs one of the core's trainers under `control` as stage `stage`: its
/// progress events and its cancel token.  The core reports only the IVF
/// k-means iterations (STAGE_PROGRESS of "train_ivf"), so the stage's start
/// and end are reported here (`Session::run_in_stage`, index/progress.rs), as
/// lance.h's contract wants them.  A cancel
/// returns at once with LANCE_ERR_CANCELLED; the k-means in progress cannot
/// be interrupted (the core runs it as one synchronous call, lance-14.0.2
/// src/index/vector/ivf.rs `train_ivf_model`, whose progress sends never
/// fail) and ends on its own, its result thrown away.  Training writes
/// nothing.
fn run_trainer<T: Send + 'static, F>(
    control: &BuildControl,
    stage: &'static str,
    what: String,
    train: impl FnOnce(Arc<dyn IndexBuildProgress>) -> F + Send + 'static,
) -> CResult<T>
where
    F: std::future::Future<Output = lance::Result<T>> + Send + 'static,
{
    let session = control.start()?;
    let trained = session
        .run_in_stage((stage, None, "iterations"), false, move |hooks| train(hooks.unwrap_or_else(noop_progress)));
    trained.context(what)
}

#[allow(clippy::too_many_arguments)]
pub fn train_ivf(
    ds: &Dataset,
    column: &str,
    num_partitions: usize,
    metric: DistanceType,
    p: &LanceVectorIndexParams,
    options: &TrainingOptions,
    fragments: Option<&[u32]>,
    control: &BuildControl,
) -> CResult<FixedSizeListArray> {
    let dim = column_dim(ds, column)?;
    let mut params = IvfBuildParams { num_partitions: Some(num_partitions), ..ivf_params(p) };
    let rows = if options.streams() { live_rows(ds, fragments)? } else { 0 };
    options.apply_ivf(&mut params, p.index_type, rows)?;
    let (ds, owned_column, fragments) = (ds.clone(), column.to_string(), fragments.map(<[u32]>::to_vec));
    let model = run_trainer(
        control,
        "train_ivf",
        format!("training IVF centroids on column '{column}'"),
        move |hooks| async move {
            build_ivf_model(&ds, &owned_column, dim, metric, &params, fragments.as_deref(), hooks).await
        },
    )?;
    model.centroids.ok_or_else(|| invalid("the core returned an IVF model without centroids"))
}

pub fn train_pq(
    ds: &Dataset,
    column: &str,
    metric: DistanceType,
    params: &PQBuildParams,
    centroids: FixedSizeListArray,
    fragments: Option<&[u32]>,
    control: &BuildControl,
) -> CResult<Vec<f32>> {
    let dim = column_dim(ds, column)?;
    if centroids.value_length() as usize != dim {
        return Err(invalid(format!(
            "ivf_centroids have dimension {}, column '{column}' has {dim}",
            centroids.value_length()
        )));
    }
    let ivf = IvfModel::new(centroids, None);
    let (ds, owned_column, params, fragments) =
        (ds.clone(), column.to_string(), params.clone(), fragments.map(<[u32]>::to_vec));
    let pq = run_trainer(
        control,
        "train_pq",
        format!("training the PQ codebook on column '{column}'"),
        move |_| async move {
            build_pq_model_in_fragments(&ds, &owned_column, dim, metric, &params, Some(&ivf), fragments.as_deref())
                .await
        },
    )?;
    f32_values(&pq.codebook).ok_or_else(|| invalid("the core returned a PQ codebook that is not float32"))
}

/// A whole model from a checked request (api/model.rs checks the
/// arguments, resolves num_partitions 0 and draws `rq_bits` from
/// params->num_bits): the core's IVF and PQ trainers over `fragments`, or
/// this library's rounds when `options` has a seed, and one rotation for an
/// IVF_RQ model.
#[allow(clippy::too_many_arguments)]
pub fn train_model(
    ds: Arc<Dataset>,
    column: &str,
    p: &LanceVectorIndexParams,
    metric: DistanceType,
    rq_bits: Option<u8>,
    fragments: Option<Vec<u32>>,
    options: &TrainingOptions,
    control: &BuildControl,
) -> CResult<LanceVectorModel> {
    check_partitions(&ds, p.num_partitions, fragments.as_deref())?;
    let dim = column_dim(&ds, column)?;
    let pq = if uses_pq(p.index_type) {
        let params = pq_params(p);
        check_sub_vectors(params.num_sub_vectors, dim, column, "params->num_sub_vectors")?;
        Some(params)
    } else {
        None
    };
    if let Some(seed) = options.seed {
        // The core's trainer takes no seed: this library's rounds, in this
        // process, over the fragments sampled.
        let plan = Plan::from_params(column, p, seed)?;
        return train_alone(ds, fragments, plan, &mut control.steps("the seeded training"));
    }
    let centroids =
        train_ivf(&ds, column, p.num_partitions as usize, metric, p, options, fragments.as_deref(), control)?;
    let pq = match pq {
        Some(params) => {
            let codebook = train_pq(&ds, column, metric, &params, centroids.clone(), fragments.as_deref(), control)?;
            Some(PqModel { num_sub_vectors: params.num_sub_vectors, num_bits: params.num_bits, codebook })
        }
        None => None,
    };
    let values = f32_values(&centroids).ok_or_else(|| invalid("the core returned centroids that are not float32"))?;
    let mut model = LanceVectorModel::new(p.metric, dim, values, pq)?.trained_for(p.index_type)?;
    // One rotation for every segment of the model, drawn as a one-shot
    // IVF_RQ build draws its own.
    if let Some(bits) = rq_bits {
        model = model.with_rotation(RqRotation::draw(dim, bits)?)?;
    }
    Ok(model)
}
