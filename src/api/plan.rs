//! lance.h section "Distributed index builds: planning": split a dataset's
//! fragments into ranges of consecutive fragments with balanced row counts,
//! one range per worker.

use lance::Dataset;

use crate::floor::error::{guard, invalid, status, CResult};
use crate::floor::ffi::{fragment_id_u32, free_handle, handle_ref, into_handle, require_out, write_out};
use crate::floor::handle::{dataset_ref, LanceDataset};

pub struct LanceFragmentPlan {
    version: u64,
    groups: Vec<(Vec<u32>, u64)>,
}

/// The fewest ranges of consecutive fragments, none above `bound` rows
/// unless a fragment alone is, that `rows` take: greedy, which is optimal
/// for a bound.
fn groups_needed(rows: &[u64], bound: u64) -> usize {
    let mut groups = 0;
    let mut open: Option<u64> = None;
    for &r in rows {
        open = match open {
            Some(sum) if sum + r <= bound => Some(sum + r),
            _ => {
                groups += 1;
                Some(r)
            }
        };
    }
    groups
}

/// Splits `rows` (fragments in manifest order) into `group_count`
/// non-empty ranges of consecutive fragments: the largest range's rows as
/// small as any split makes it, and within that bound each range's rows
/// the closest to an even share of the rows still to place (ties: the
/// shorter range).  Returns each range's end (exclusive).
fn contiguous_ranges(rows: &[u64], group_count: usize) -> Vec<usize> {
    let n = rows.len();
    // The smallest bound that `group_count` ranges can keep to.
    let (mut lo, mut hi) = (rows.iter().copied().max().unwrap_or(0), rows.iter().sum::<u64>());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if groups_needed(rows, mid) <= group_count {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let bound = lo;
    // need[i]: the fewest ranges, within the bound, that fragments i.. take.
    let mut need = vec![0usize; n + 1];
    let mut end = n;
    let mut sum = 0u64;
    for i in (0..n).rev() {
        sum += rows[i];
        while sum > bound {
            end -= 1;
            sum -= rows[end];
        }
        need[i] = need[end] + 1;
    }
    let mut ends = Vec::with_capacity(group_count);
    let mut start = 0;
    let mut left: u64 = rows.iter().sum();
    for g in 0..group_count {
        let after = group_count - g - 1;
        if after == 0 {
            ends.push(n);
            break;
        }
        // Among the ends that keep the bound and leave the rest splittable
        // into exactly `after` non-empty ranges within it (one always
        // exists), the one nearest an even share: distances are scaled by
        // the ranges still to make, to stay in integers.
        let ranges_left = (group_count - g) as u128;
        let mut best: Option<(u128, usize, u64)> = None;
        let mut sum = 0u64;
        for j in start + 1..=n - after {
            sum += rows[j - 1];
            if sum > bound {
                break;
            }
            if need[j] > after {
                continue;
            }
            let distance = (u128::from(sum) * ranges_left).abs_diff(u128::from(left));
            if best.is_none_or(|(d, _, _)| distance < d) {
                best = Some((distance, j, sum));
            }
        }
        let (_, j, sum) = best.expect("a split within the bound exists");
        ends.push(j);
        left -= sum;
        start = j;
    }
    ends
}

/// Ranges of consecutive fragments in manifest order, balanced by live
/// rows (`contiguous_ranges`), ids ascending within a range.  The core's
/// compaction merges only neighbouring fragments that the same index
/// segments cover, so segments over consecutive fragments leave it free to
/// merge them.  Deterministic for a given version, so every coordinator
/// retry plans the same groups.
fn plan(ds: &Dataset, group_count: usize) -> CResult<LanceFragmentPlan> {
    let fragments: Vec<(u32, u64)> = ds
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
    let rows: Vec<u64> = fragments.iter().map(|f| f.1).collect();
    let mut groups = Vec::with_capacity(group_count);
    let mut start = 0;
    for end in contiguous_ranges(&rows, group_count) {
        let range = &fragments[start..end];
        // A compaction's fragments take the place of those they replace, so
        // manifest order is not always id order.
        let mut ids: Vec<u32> = range.iter().map(|f| f.0).collect();
        ids.sort_unstable();
        groups.push((ids, range.iter().map(|f| f.1).sum()));
        start = end;
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
