//! lance.h section "Distributed index builds: planning": split a dataset's
//! fragments into ranges of consecutive fragments with balanced row counts,
//! one range per worker (the split is index/planning.rs).

use crate::boundary::error::{guard, invalid, status};
use crate::boundary::ffi::{free_handle, handle_ref, into_handle, require_out, write_out};
use crate::index::planning::fragment_groups;
use crate::store::handle::{dataset_ref, LanceDataset};

pub struct LanceFragmentPlan {
    version: u64,
    groups: Vec<(Vec<u32>, u64)>,
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_plan_fragment_groups(
    dataset: *const LanceDataset,
    group_count: usize,
    out_plan: *mut *mut LanceFragmentPlan,
) -> i32 {
    status(|| {
        require_out(out_plan, "out_plan")?;
        let ds = dataset_ref(dataset)?.snapshot();
        let groups = fragment_groups(&ds, group_count)?;
        write_out(out_plan, into_handle(LanceFragmentPlan { version: ds.version().version, groups }));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_fragment_plan_group_count(plan: *const LanceFragmentPlan) -> usize {
    guard(0, || Ok(handle_ref(plan, "plan")?.groups.len()))
}

#[no_mangle]
pub unsafe extern "C" fn lance_fragment_plan_dataset_version(plan: *const LanceFragmentPlan) -> u64 {
    guard(0, || Ok(handle_ref(plan, "plan")?.version))
}

#[no_mangle]
pub unsafe extern "C" fn lance_fragment_plan_group(
    plan: *const LanceFragmentPlan,
    group: usize,
    out_fragment_ids: *mut *const u32,
    out_fragment_count: *mut usize,
    out_rows: *mut u64,
) -> i32 {
    status(|| {
        let groups = &handle_ref(plan, "plan")?.groups;
        require_out(out_fragment_ids, "out_fragment_ids")?;
        require_out(out_fragment_count, "out_fragment_count")?;
        let Some((ids, rows)) = groups.get(group) else {
            return Err(invalid(format!("group {group} is out of range: the plan has {} groups", groups.len())));
        };
        write_out(out_fragment_ids, ids.as_ptr());
        write_out(out_fragment_count, ids.len());
        if !out_rows.is_null() {
            write_out(out_rows, *rows);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_fragment_plan_free(plan: *mut LanceFragmentPlan) {
    free_handle(plan);
}
