//! A training in one process: the rounds of a distributed training with
//! one worker that holds every row trained on, each round's statistics
//! reduced at once.  A seeded one-node training runs here (the core's
//! trainer takes no seed), and so does a segment or one-shot build given a
//! seed.

use std::sync::Arc;

use lance::Dataset;

use super::{reduce, Phase, Plan, Request, Worker};
use crate::boundary::error::CResult;
use crate::index::progress::Steps;
use crate::index::vector_model::LanceVectorModel;

/// Trains `plan` over `fragments` of `ds` (None = all): the same model for
/// the same plan (its seed included), fragments and dataset version.
pub fn train_alone(
    ds: Arc<Dataset>,
    fragments: Option<Vec<u32>>,
    plan: Plan,
    steps: &mut Steps,
) -> CResult<LanceVectorModel> {
    let fragments = fragments.unwrap_or_else(|| ds.get_fragments().iter().map(|f| f.id() as u32).collect());
    let mut worker = Worker::alone(ds, fragments)?;
    let mut request = Request::new(plan);
    while request.phase != Phase::Done {
        let stats = worker.run(&request, steps)?;
        request = reduce(&request, std::slice::from_ref(&stats))?;
    }
    request.finished_model()
}
