//! lance.h section "Index maintenance": the core's `optimize_indices` in one
//! call, with or without progress and cancellation.  The options are
//! checked here (names against the handle's version, combinations the core
//! would ignore or word in its own terms); what to build, merge and commit
//! is the core's.  The maintenance plan for workers is index/maintenance.rs.

use std::collections::BTreeSet;
use std::ffi::c_char;

use lance::index::DatasetIndexExt;
use lance::Dataset;
use lance_index::optimize::OptimizeOptions;

use crate::boundary::error::{guard, invalid, not_found, status, CResult, Context};
use crate::boundary::ffi::{counted_strs, into_c_string, required_nonempty_str};
use crate::index::catalog::user_segments;
use crate::index::maintenance::{plan as maintenance_plan, Policy};
use crate::index::progress::{BuildControl, LanceIndexBuildControl};
use crate::store::handle::{dataset_ref, LanceDataset};

/// Mirrors `LanceOptimizeIndicesOptions` in lance.h.
#[repr(C)]
pub struct LanceOptimizeIndicesOptions {
    pub index_names: *const *const c_char,
    pub index_name_count: usize,
    pub has_num_indices_to_merge: bool,
    pub num_indices_to_merge: u32,
    pub retrain: bool,
    pub enable_partition_rebalancing: bool,
    pub max_rows_per_task: u64,
    pub max_rows_per_segment: u64,
    pub control: *const LanceIndexBuildControl,
}
crate::c_layout!(LanceOptimizeIndicesOptions, 56;
    index_names @ 0,
    index_name_count @ 8,
    has_num_indices_to_merge @ 16,
    num_indices_to_merge @ 20,
    retrain @ 24,
    enable_partition_rebalancing @ 25,
    max_rows_per_task @ 32,
    max_rows_per_segment @ 40,
    control @ 48,
);

/// The call's own stage (lance.h "Index maintenance"): open from the start
/// until the core starts a stage of its own or the call ends
/// (`Session::run_in_stage`, index/progress.rs).  Opening it is also the
/// call's first checkpoint, and it marks the call as writing from its
/// start: a cancel stops it only at a checkpoint, never between two (it
/// could be committing).
const STAGE: &str = "optimize_indices";

/// The options as the core takes them, and the names the caller gave.
/// NULL options are the core's defaults.
unsafe fn core_options(o: Option<&LanceOptimizeIndicesOptions>) -> CResult<(OptimizeOptions, Option<Vec<String>>)> {
    let mut options = OptimizeOptions::new();
    let Some(o) = o else { return Ok((options, None)) };
    let names = if o.index_names.is_null() && o.index_name_count == 0 {
        None
    } else {
        if o.index_name_count == 0 {
            return Err(invalid(
                "options->index_names is an empty list; pass NULL with index_name_count 0 for every index",
            ));
        }
        let names = counted_strs(o.index_names, o.index_name_count, "options->index_names")?;
        for (j, name) in names.iter().enumerate() {
            if let Some(i) = names[..j].iter().position(|n| n == name) {
                return Err(invalid(format!("options->index_names[{j}] = \"{name}\" is listed twice (also at [{i}])")));
            }
        }
        Some(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
    };
    if !o.has_num_indices_to_merge && o.num_indices_to_merge != 0 {
        return Err(invalid(format!(
            "options->num_indices_to_merge = {} applies only with has_num_indices_to_merge set",
            o.num_indices_to_merge
        )));
    }
    if o.retrain && o.has_num_indices_to_merge {
        return Err(invalid(
            "options->retrain rebuilds every segment into one, so options->has_num_indices_to_merge must not be set",
        ));
    }
    let bounded = o.max_rows_per_task != 0 || o.max_rows_per_segment != 0;
    if o.enable_partition_rebalancing {
        if o.has_num_indices_to_merge && o.num_indices_to_merge == 0 {
            return Err(invalid(
                "options->enable_partition_rebalancing needs num_indices_to_merge > 0 (or has_num_indices_to_merge \
                 unset): appending a delta segment rebalances nothing",
            ));
        }
        if bounded {
            return Err(invalid(
                "options->enable_partition_rebalancing cannot be combined with max_rows_per_task or \
                 max_rows_per_segment: a rebalance needs the whole index in one task",
            ));
        }
    }
    if o.has_num_indices_to_merge {
        options.num_indices_to_merge = Some(o.num_indices_to_merge as usize);
    }
    options.retrain = o.retrain;
    options.enable_partition_rebalancing = o.enable_partition_rebalancing;
    options.max_rows_per_task = (o.max_rows_per_task != 0).then_some(o.max_rows_per_task);
    options.max_rows_per_segment = (o.max_rows_per_segment != 0).then_some(o.max_rows_per_segment);
    options.index_names = names.clone();
    Ok((options, names))
}

/// The user indices the call optimizes: the named ones, each of which must
/// exist (the core skips a name it does not find), or all of them.
fn targets(ds: &Dataset, names: Option<&[String]>) -> CResult<BTreeSet<String>> {
    let existing: BTreeSet<String> = user_segments(ds)?.into_iter().map(|s| s.name).collect();
    let Some(names) = names else { return Ok(existing) };
    if let Some((i, name)) = names.iter().enumerate().find(|(_, n)| !existing.contains(*n)) {
        return Err(not_found(format!(
            "options->index_names[{i}] = \"{name}\" is not an index of dataset version {}",
            ds.version().version
        )));
    }
    Ok(names.iter().cloned().collect())
}

fn optimize(
    ds: &mut Dataset,
    options: OptimizeOptions,
    names: Option<&[String]>,
    control: &BuildControl,
) -> CResult<()> {
    let session = control.start()?;
    let version = ds.version().version;
    let indices = targets(ds, names)?.len() as u64;
    let mut work = Dataset::clone(ds);
    // Committed (or nothing to commit) when the work ends: a cancel from
    // there on changes nothing (it writes).
    let optimized = session.run_in_stage((STAGE, Some(indices), "indices"), true, move |hooks| async move {
        match hooks {
            Some(hooks) => work.optimize_indices(&options.progress(hooks)).await?,
            None => work.optimize_indices(&options).await?,
        }
        Ok(work)
    });
    *ds = optimized.context(format!("optimizing the indices of dataset version {version}"))?;
    Ok(())
}

/// `control`: the deprecated form's argument, NULL for the options' own.
unsafe fn optimize_c(
    dataset: *mut LanceDataset,
    options: *const LanceOptimizeIndicesOptions,
    control: *const LanceIndexBuildControl,
) -> CResult<()> {
    let handle = dataset_ref(dataset)?;
    let in_options = options.as_ref().map_or(std::ptr::null(), |o| o.control);
    if !control.is_null() && !in_options.is_null() {
        return Err(invalid("control and options->control are both set: give the control in options->control only"));
    }
    let control = BuildControl::from_c(if control.is_null() { in_options } else { control });
    let (options, names) = core_options(options.as_ref())?;
    handle.mutate(|ds| optimize(ds, options, names.as_deref(), &control))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_optimize_indices(
    dataset: *mut LanceDataset,
    options: *const LanceOptimizeIndicesOptions,
) -> i32 {
    status(|| optimize_c(dataset, options, std::ptr::null()))
}

/// Deprecated in lance.h: lance_dataset_optimize_indices() with options->control.
#[no_mangle]
pub unsafe extern "C" fn lance_dataset_optimize_indices_with_control(
    dataset: *mut LanceDataset,
    options: *const LanceOptimizeIndicesOptions,
    control: *const LanceIndexBuildControl,
) -> i32 {
    status(|| optimize_c(dataset, options, control))
}

/// Mirrors `LanceIndexMaintenanceOptions` in lance.h.
#[repr(C)]
pub struct LanceIndexMaintenanceOptions {
    pub target_rows_per_segment: u64,
    pub small_segment_rows: u64,
    pub max_segments: u32,
    pub drift_threshold: f32,
}
crate::c_layout!(LanceIndexMaintenanceOptions, 24;
    target_rows_per_segment @ 0,
    small_segment_rows @ 8,
    max_segments @ 16,
    drift_threshold @ 20,
);

/// lance.h's defaults of `LanceIndexMaintenanceOptions`.
const DEFAULT_TARGET_ROWS: u64 = 1 << 20;
const DEFAULT_MAX_SEGMENTS: u32 = 32;

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_plan_index_maintenance(
    dataset: *const LanceDataset,
    index_name: *const c_char,
    options: *const LanceIndexMaintenanceOptions,
) -> *mut c_char {
    guard(std::ptr::null_mut(), || {
        let ds = dataset_ref(dataset)?.snapshot();
        let name = required_nonempty_str(index_name, "index_name")?;
        let (target, small, max, drift) = options.as_ref().map_or((0, 0, 0, 0.0), |o| {
            (o.target_rows_per_segment, o.small_segment_rows, o.max_segments, o.drift_threshold)
        });
        if !(drift.is_finite() && drift >= 0.0) {
            return Err(invalid(format!(
                "options->drift_threshold = {drift}: give 0 (no retraining advice) or a ratio of losses above 0,                  such as 1.5"
            )));
        }
        let target_rows = if target == 0 { DEFAULT_TARGET_ROWS } else { target };
        let policy = Policy {
            target_rows,
            small_rows: if small == 0 { target_rows / 4 } else { small },
            max_segments: if max == 0 { DEFAULT_MAX_SEGMENTS } else { max } as usize,
            drift_threshold: drift,
        };
        Ok(into_c_string(maintenance_plan(&ds, name, &policy)?.to_string()))
    })
}
