//! lance.h section "Distributed index builds: distributed training": the C
//! surface of a coordinator's training and a worker's rounds; the protocol
//! and the arithmetic are index/training.rs.

use std::ffi::c_char;

use crate::boundary::error::{invalid, status, CResult};
use crate::boundary::ffi::{
    free_handle, handle_mut, handle_ref, into_handle, require_out, required_nonempty_str, slice_arg, write_bytes_out,
    write_out,
};
use crate::boundary::params::LanceVectorIndexParams;
use crate::index::progress::{BuildControl, LanceIndexBuildControl};
use crate::index::training::{reduce, Phase, Plan, Request, Stats, Worker};
use crate::index::vector_model::LanceVectorModel;
use crate::store::handle::{dataset_ref, fragment_list, LanceDataset};

/// A coordinator's training: the request of the current round.
pub struct LanceVectorTraining {
    request: Request,
}

pub struct LanceVectorTrainingWorker {
    worker: Worker,
}

#[repr(C)]
pub struct LanceVectorTrainingInfo {
    pub phase: i32,
    pub rounds: u32,
    pub ivf_iterations: u32,
    pub pq_iterations: u32,
    pub dimension: u32,
    pub reserved: u32,
    pub ivf_sample_rows: u64,
    pub pq_sample_rows: u64,
    pub ivf_loss: f64,
    pub pq_loss: f64,
}
crate::c_layout!(LanceVectorTrainingInfo, 56;
    phase @ 0,
    rounds @ 4,
    ivf_iterations @ 8,
    pq_iterations @ 12,
    dimension @ 16,
    reserved @ 20,
    ivf_sample_rows @ 24,
    pq_sample_rows @ 32,
    ivf_loss @ 40,
    pq_loss @ 48,
);

unsafe fn plan(column: *const c_char, params: *const LanceVectorIndexParams, seed: u64) -> CResult<Plan> {
    let column = required_nonempty_str(column, "column")?;
    if params.is_null() {
        return Err(invalid("params must not be NULL"));
    }
    Plan::from_params(column, &*params, seed)
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_training_new(
    column: *const c_char,
    params: *const LanceVectorIndexParams,
    seed: u64,
    out_training: *mut *mut LanceVectorTraining,
) -> i32 {
    status(|| {
        require_out(out_training, "out_training")?;
        let plan = plan(column, params, seed)?;
        write_out(out_training, into_handle(LanceVectorTraining { request: Request::new(plan) }));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_training_resume(
    request: *const u8,
    len: usize,
    out_training: *mut *mut LanceVectorTraining,
) -> i32 {
    status(|| {
        require_out(out_training, "out_training")?;
        let request = Request::parse(slice_arg(request, len, "request")?, "the request bytes")?;
        write_out(out_training, into_handle(LanceVectorTraining { request }));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_training_request(
    training: *const LanceVectorTraining,
    out_bytes: *mut *mut u8,
    out_len: *mut usize,
) -> i32 {
    status(|| {
        let t = handle_ref(training, "training")?;
        require_out(out_bytes, "out_bytes")?;
        require_out(out_len, "out_len")?;
        if t.request.phase == Phase::Done {
            return Err(invalid("the training is done: take its model with lance_vector_training_model()"));
        }
        let bytes = t.request.serialize();
        write_bytes_out(out_bytes, out_len, bytes);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_training_reduce(
    training: *mut LanceVectorTraining,
    stats: *const *const u8,
    stats_lens: *const usize,
    count: usize,
) -> i32 {
    status(|| {
        let t = handle_mut(training, "training")?;
        if count == 0 {
            return Err(invalid("count is 0: every worker's statistics of this round are needed"));
        }
        let buffers = slice_arg(stats, count, "stats")?;
        let lens = slice_arg(stats_lens, count, "stats_lens")?;
        let parsed = buffers
            .iter()
            .zip(lens)
            .enumerate()
            .map(|(i, (ptr, len))| Stats::parse(slice_arg(*ptr, *len, &format!("stats[{i}]"))?, &format!("stats[{i}]")))
            .collect::<CResult<Vec<_>>>()?;
        t.request = reduce(&t.request, &parsed)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_training_info(
    training: *const LanceVectorTraining,
    out: *mut LanceVectorTrainingInfo,
) -> i32 {
    status(|| {
        let q = &handle_ref(training, "training")?.request;
        require_out(out, "out")?;
        let pq_phase = matches!(q.phase, Phase::Pq | Phase::Done) && q.plan.num_sub_vectors > 0;
        let (ivf_iterations, ivf_loss) = q.ivf_progress();
        let info = LanceVectorTrainingInfo {
            phase: q.phase as i32,
            rounds: q.round,
            ivf_iterations,
            pq_iterations: if pq_phase { q.problems.iter().map(|p| p.iterations).max().unwrap_or(0) } else { 0 },
            dimension: u32::try_from(q.dim).unwrap_or(u32::MAX),
            reserved: 0,
            ivf_sample_rows: q.ivf_rows,
            pq_sample_rows: q.pq_rows,
            ivf_loss,
            pq_loss: if pq_phase && q.problems.iter().all(|p| p.iterations > 0) {
                q.problems.iter().map(|p| p.loss).sum()
            } else {
                0.0
            },
        };
        write_out(out, info);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_training_model(
    training: *const LanceVectorTraining,
    out_model: *mut *mut LanceVectorModel,
) -> i32 {
    status(|| {
        let t = handle_ref(training, "training")?;
        require_out(out_model, "out_model")?;
        let model = t.request.finished_model()?;
        write_out(out_model, into_handle(model));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_training_free(training: *mut LanceVectorTraining) {
    free_handle(training)
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_training_worker_new(
    dataset: *const LanceDataset,
    fragment_ids: *const u32,
    fragment_count: usize,
    out_worker: *mut *mut LanceVectorTrainingWorker,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        require_out(out_worker, "out_worker")?;
        let fragments = match fragment_list(&ds, fragment_ids, fragment_count, "fragment_ids")? {
            Some(ids) => ids,
            None => ds.get_fragments().iter().map(|f| f.id() as u32).collect(),
        };
        let worker = Worker::new(ds, fragments)?;
        write_out(out_worker, into_handle(LanceVectorTrainingWorker { worker }));
        Ok(())
    })
}

/// Mirrors `LanceVectorTrainingAnswerOptions` in lance.h.
#[repr(C)]
pub struct LanceVectorTrainingAnswerOptions {
    pub control: *const LanceIndexBuildControl,
}
crate::c_layout!(LanceVectorTrainingAnswerOptions, 8; control @ 0);

#[no_mangle]
pub unsafe extern "C" fn lance_vector_training_worker_answer(
    worker: *mut LanceVectorTrainingWorker,
    request: *const u8,
    len: usize,
    options: *const LanceVectorTrainingAnswerOptions,
    out_stats: *mut *mut u8,
    out_len: *mut usize,
) -> i32 {
    let control = options.as_ref().map_or(std::ptr::null(), |o| o.control);
    status(|| answer(worker, request, len, control, out_stats, out_len))
}

/// Deprecated in lance.h: lance_vector_training_worker_answer() without options.
#[no_mangle]
pub unsafe extern "C" fn lance_vector_training_worker_run(
    worker: *mut LanceVectorTrainingWorker,
    request: *const u8,
    len: usize,
    out_stats: *mut *mut u8,
    out_len: *mut usize,
) -> i32 {
    status(|| answer(worker, request, len, std::ptr::null(), out_stats, out_len))
}

/// Deprecated in lance.h: lance_vector_training_worker_answer() with a control.
#[no_mangle]
pub unsafe extern "C" fn lance_vector_training_worker_run_with_control(
    worker: *mut LanceVectorTrainingWorker,
    request: *const u8,
    len: usize,
    control: *const LanceIndexBuildControl,
    out_stats: *mut *mut u8,
    out_len: *mut usize,
) -> i32 {
    status(|| answer(worker, request, len, control, out_stats, out_len))
}

/// Every form of a worker's round.
unsafe fn answer(
    worker: *mut LanceVectorTrainingWorker,
    request: *const u8,
    len: usize,
    control: *const LanceIndexBuildControl,
    out_stats: *mut *mut u8,
    out_len: *mut usize,
) -> CResult<()> {
    let w = handle_mut(worker, "worker")?;
    require_out(out_stats, "out_stats")?;
    require_out(out_len, "out_len")?;
    let request = Request::parse(slice_arg(request, len, "request")?, "the request bytes")?;
    let mut steps = BuildControl::from_c(control).steps("the training round");
    let bytes = w.worker.run(&request, &mut steps)?.serialize();
    write_bytes_out(out_stats, out_len, bytes);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_training_worker_free(worker: *mut LanceVectorTrainingWorker) {
    free_handle(worker)
}
