//! lance.h section "Distributed index builds: planning": split a dataset's
//! fragments into groups of balanced row counts, one group per worker.

use lance::Dataset;

use crate::floor::error::{guard, invalid, status, CResult};
use crate::floor::ffi::{fragment_id_u32, free_handle, handle_ref, into_handle, require_out, write_out};
use crate::floor::handle::{dataset_ref, LanceDataset};

pub struct LanceFragmentPlan {
    version: u64,
    groups: Vec<(Vec<u32>, u64)>,
}

/// Largest fragment first, each to the group with the fewest rows so far
/// (ties: fewer fragments, then lower group number).  Deterministic for a
/// given version, so every coordinator retry plans the same groups.
fn plan(ds: &Dataset, group_count: usize) -> CResult<LanceFragmentPlan> {
    let mut fragments: Vec<(u32, u64)> = ds
        .manifest
        .fragments
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let rows = f.num_rows().or(f.physical_rows).unwrap_or(0) as u64;
            Ok((fragment_id_u32(f.id, "fragment", i)?, rows))
        })
        .collect::<CResult<_>>()?;
    if group_count == 0 {
        return Err(invalid("group_count is 0"));
    }
    if group_count > fragments.len() {
        return Err(invalid(format!(
            "group_count = {group_count} is more than the {} fragments of dataset version {}: a group \
             would be empty",
            fragments.len(),
            ds.version().version
        )));
    }
    fragments.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut groups: Vec<(Vec<u32>, u64)> = vec![(Vec::new(), 0); group_count];
    for (id, rows) in fragments {
        let target = (0..group_count)
            .min_by_key(|&g| (groups[g].1, groups[g].0.len(), g))
            .expect("group_count > 0");
        groups[target].0.push(id);
        groups[target].1 += rows;
    }
    for g in &mut groups {
        g.0.sort_unstable();
    }
    Ok(LanceFragmentPlan { version: ds.version().version, groups })
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
        let p = plan(&ds, group_count)?;
        write_out(out_plan, into_handle(p));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_fragment_plan_group_count(plan: *const LanceFragmentPlan) -> usize {
    guard(0, || {
        Ok(handle_ref(plan, "plan")?.groups.len())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_fragment_plan_dataset_version(plan: *const LanceFragmentPlan) -> u64 {
    guard(0, || {
        Ok(handle_ref(plan, "plan")?.version)
    })
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
