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

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (64-bit LCG, high bits).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    /// Every way to cut `n` fragments into `groups` non-empty ranges, as
    /// range ends.
    fn all_splits(n: usize, groups: usize) -> Vec<Vec<usize>> {
        fn go(start: usize, n: usize, groups: usize, ends: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
            if groups == 1 {
                ends.push(n);
                out.push(ends.clone());
                ends.pop();
                return;
            }
            for end in start + 1..=n - (groups - 1) {
                ends.push(end);
                go(end, n, groups - 1, ends, out);
                ends.pop();
            }
        }
        let mut out = Vec::new();
        go(0, n, groups, &mut Vec::new(), &mut out);
        out
    }

    fn range_sums(rows: &[u64], ends: &[usize]) -> Vec<u64> {
        let mut start = 0;
        ends.iter()
            .map(|&end| {
                let sum = rows[start..end].iter().sum();
                start = end;
                sum
            })
            .collect()
    }

    /// The split the doc describes, by exhaustion: among the splits whose
    /// largest range is the smallest possible, range after range the one
    /// nearest an even share of the rows still to place, ties to the
    /// shorter range.
    fn reference(rows: &[u64], groups: usize) -> Vec<usize> {
        let splits = all_splits(rows.len(), groups);
        let largest = |ends: &Vec<usize>| range_sums(rows, ends).into_iter().max().unwrap_or(0);
        let bound = splits.iter().map(largest).min().expect("a split");
        let key = |ends: &Vec<usize>| {
            let sums = range_sums(rows, ends);
            let mut left: i128 = rows.iter().map(|&r| r as i128).sum();
            let mut key = Vec::new();
            for (g, (&sum, &end)) in sums.iter().zip(ends).enumerate() {
                let share_distance = (sum as i128 * (groups - g) as i128 - left).abs();
                key.push((share_distance, end));
                left -= sum as i128;
            }
            key
        };
        splits.into_iter().filter(|e| largest(e) == bound).min_by_key(key).expect("a split within the bound")
    }

    #[test]
    fn groups_needed_is_the_greedy_count() {
        assert_eq!(groups_needed(&[], 10), 0);
        assert_eq!(groups_needed(&[4, 4, 4], 8), 2);
        assert_eq!(groups_needed(&[4, 4, 4], 12), 1);
        // A fragment above the bound is a range of its own.
        assert_eq!(groups_needed(&[4, 4, 4], 3), 3);
        assert_eq!(groups_needed(&[1, 9, 1], 5), 3);
        assert_eq!(groups_needed(&[3, 2, 5, 1, 4], 6), 3);
    }

    #[test]
    fn hand_worked_splits() {
        assert_eq!(contiguous_ranges(&[1, 1, 1, 1], 2), vec![2, 4]);
        assert_eq!(contiguous_ranges(&[3, 3, 3, 3, 3, 3], 3), vec![2, 4, 6]);
        assert_eq!(contiguous_ranges(&[7], 1), vec![1]);
        assert_eq!(contiguous_ranges(&[5, 2, 9], 3), vec![1, 2, 3]);
        // Bound 10: the ten-row fragments stand alone, the small ones share.
        assert_eq!(contiguous_ranges(&[10, 1, 1, 1, 1, 10], 3), vec![1, 5, 6]);
        // Bound 8, reached by ending the first range after 7 or 8 rows,
        // both 1 from an even 7.5: the shorter range.
        assert_eq!(contiguous_ranges(&[5, 1, 1, 1, 1, 1, 5], 2), vec![3, 7]);
        // A large fragment at the end: the bound is its 20 rows; an even
        // share of the 32 rows is 10.67, so the first range takes 10 rows
        // (five fragments, 2 from it: |3 * 10 - 32|), the second what is left
        // before the large one.
        assert_eq!(contiguous_ranges(&[2, 2, 2, 2, 2, 2, 20], 3), vec![5, 6, 7]);
        // Empty fragments still make non-empty ranges.
        assert_eq!(contiguous_ranges(&[0, 0, 0], 2), vec![1, 3]);
    }

    #[test]
    fn matches_the_exhaustive_reference() {
        let mut rng = Lcg(42);
        for case in 0..400 {
            let n = 1 + rng.below(8) as usize;
            let groups = 1 + rng.below(n as u64) as usize;
            let scale = [3, 20, 1000][case % 3];
            let rows: Vec<u64> = (0..n).map(|_| rng.below(scale)).collect();
            let ends = contiguous_ranges(&rows, groups);
            assert_eq!(ends, reference(&rows, groups), "rows {rows:?} in {groups} groups");
            // Non-empty, in order, covering every fragment.
            assert_eq!(ends.len(), groups);
            assert!(ends.windows(2).all(|w| w[0] < w[1]) && ends[0] > 0 && ends[groups - 1] == n);
        }
    }
}
