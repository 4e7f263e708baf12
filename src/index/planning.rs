//! Fragment groups for index builds: ranges of consecutive fragments with
//! balanced row counts (lance.h "Distributed index builds: planning"; the
//! maintenance plan's delta groups use the same split).

use lance::Dataset;

use crate::boundary::error::{invalid, CResult};
use crate::boundary::ffi::fragment_id_u32;

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
pub fn contiguous_ranges(rows: &[u64], group_count: usize) -> Vec<usize> {
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
pub fn fragment_groups(ds: &Dataset, group_count: usize) -> CResult<Vec<(Vec<u32>, u64)>> {
    let fragments = manifest_fragments(ds)?;
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
    Ok(groups)
}

/// The snapshot's fragments in manifest order: (id, live rows; the written
/// rows when the live count is not recorded).
pub fn manifest_fragments(ds: &Dataset) -> CResult<Vec<(u32, u64)>> {
    ds.manifest
        .fragments
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let rows = f.num_rows().or(f.physical_rows).unwrap_or(0) as u64;
            Ok((fragment_id_u32(f.id, "fragment", i)?, rows))
        })
        .collect()
}
