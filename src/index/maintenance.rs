//! The maintenance plan of one index (lance.h "Index maintenance",
//! lance_dataset_plan_index_maintenance): the work that brings an index up
//! to date with its table and keeps its segment count bounded, as tasks a
//! coordinator hands to workers.  The plan reads the snapshot only; it
//! builds, merges and commits nothing.
//!
//! - build: a delta segment over fragments no segment covers, in runs of
//!   manifest-adjacent fragments, each run split into ranges of consecutive
//!   fragments of at most `target_rows` rows (index/planning.rs's split);
//! - rebuild: a segment some of whose fragments left the table (deleted,
//!   or compacted away without the core remapping the index), rebuilt over
//!   the fragments it still covers; such a segment cannot be merged (a
//!   commit refuses a segment over missing fragments);
//! - merge: neighbouring segments (by their first fragment) merged with the
//!   core's merge, size-tiered: two neighbours merge while one of them is
//!   below `small_rows` and together they stay within `target_rows`, the
//!   smallest pair first; and while the index would still have more than
//!   `max_segments` segments, the smallest neighbouring pair merges
//!   whatever its size.  Vector segments merge only with segments of the
//!   same shared model (the core merges partition files, never retrains).

use roaring::RoaringBitmap;
use serde_json::{json, Value};

use lance::Dataset;
use lance_table::format::IndexMetadata;

use crate::boundary::error::{invalid, CResult};
use crate::index::catalog::{column_names, named_segments, FragmentRows};
use crate::index::codec::{is_vector, model_fingerprint, segment_type_name};
use crate::index::drift::drift;
use crate::index::planning::{contiguous_ranges, manifest_fragments};

/// The size policy and the retraining advice's threshold (lance.h
/// `LanceIndexMaintenanceOptions`, defaults applied).
pub struct Policy {
    pub target_rows: u64,
    pub small_rows: u64,
    pub max_segments: usize,
    /// 0: no advice (index/drift.rs).
    pub drift_threshold: f32,
}

/// Neighbouring segments that one merge would replace.
struct Unit {
    uuids: Vec<String>,
    fragments: RoaringBitmap,
    rows: u64,
    /// The shared model of a vector segment (None: scalar, or none recorded).
    model: Option<String>,
    vector: bool,
}

impl Unit {
    fn joins(&self, other: &Unit) -> bool {
        !self.vector || (self.model.is_some() && self.model == other.model)
    }
}

fn ids(bitmap: &RoaringBitmap) -> Vec<u32> {
    bitmap.iter().collect()
}

/// Rows a segment holds: the written rows of its fragments.
fn written_rows(rows: &FragmentRows, fragments: &RoaringBitmap) -> u64 {
    fragments.iter().filter_map(|id| rows.get(id)).map(|(written, _)| written).sum()
}

/// Merges neighbouring units by the policy; `room` is how many segments
/// the existing ones may leave (max_segments less the new delta segments).
fn merge_units(units: &mut Vec<Unit>, policy: &Policy, room: usize) {
    loop {
        let over = units.len() > room;
        let best = (0..units.len().saturating_sub(1))
            .filter(|&i| units[i].joins(&units[i + 1]))
            .map(|i| (units[i].rows + units[i + 1].rows, i))
            .filter(|&(rows, i)| {
                over || (rows <= policy.target_rows
                    && (units[i].rows < policy.small_rows || units[i + 1].rows < policy.small_rows))
            })
            .min();
        let Some((_, i)) = best else { return };
        let next = units.remove(i + 1);
        let unit = &mut units[i];
        unit.uuids.extend(next.uuids);
        unit.fragments |= next.fragments;
        unit.rows += next.rows;
    }
}

/// Delta groups: runs of manifest-adjacent fragments (`fragments`, in
/// manifest order) that no segment covers, each split into ranges of
/// consecutive fragments of about `target_rows` rows; each group's ids
/// ascending, and its rows.
fn delta_groups(fragments: &[(u32, u64)], covered: &RoaringBitmap, target_rows: u64) -> Vec<(Vec<u32>, u64)> {
    let mut groups = Vec::new();
    let mut run: Vec<(u32, u64)> = Vec::new();
    for f in fragments.iter().chain(std::iter::once(&(u32::MAX, 0))) {
        if f.0 != u32::MAX && !covered.contains(f.0) {
            run.push(*f);
            continue;
        }
        if run.is_empty() {
            continue;
        }
        let rows: Vec<u64> = run.iter().map(|f| f.1).collect();
        let total: u64 = rows.iter().sum();
        let count = (total.div_ceil(target_rows.max(1)) as usize).clamp(1, run.len());
        let mut start = 0;
        for end in contiguous_ranges(&rows, count) {
            let mut group: Vec<u32> = run[start..end].iter().map(|f| f.0).collect();
            group.sort_unstable();
            groups.push((group, rows[start..end].iter().sum::<u64>()));
            start = end;
        }
        run.clear();
    }
    groups
}

/// The plan as JSON (its fields are lance.h's).
pub fn plan(ds: &Dataset, name: &str, policy: &Policy) -> CResult<Value> {
    if policy.small_rows > policy.target_rows {
        return Err(invalid(format!(
            "options->small_segment_rows = {} is above options->target_rows_per_segment = {}: a small \
             segment must fit in a merged one",
            policy.small_rows, policy.target_rows
        )));
    }
    let mut segments: Vec<IndexMetadata> = named_segments(ds, name)?;
    segments.sort_by_key(|s| s.fragment_bitmap.as_ref().and_then(|b| b.min()).unwrap_or(u32::MAX));
    let fragments = manifest_fragments(ds)?;
    let counts = FragmentRows::of(ds);
    let present: RoaringBitmap = fragments.iter().map(|f| f.0).collect();
    let mut covered = RoaringBitmap::new();
    let mut tasks = Vec::new();
    let mut units = Vec::new();
    let mut stale_only = Vec::new();
    for s in &segments {
        let bitmap = s.fragment_bitmap.clone().unwrap_or_default();
        covered |= &bitmap;
        let live = &bitmap & &present;
        let uuid = s.uuid.to_string();
        if live.is_empty() {
            stale_only.push(uuid);
        } else if live != bitmap {
            tasks.push(json!({
                "kind": "rebuild",
                "segment_uuids": [uuid],
                "fragment_ids": ids(&live),
                "rows": written_rows(&counts, &live),
            }));
        } else {
            units.push(Unit {
                uuids: vec![uuid],
                rows: written_rows(&counts, &live),
                fragments: live,
                model: model_fingerprint(s),
                vector: is_vector(s),
            });
        }
    }
    let builds: Vec<Value> = delta_groups(&fragments, &covered, policy.target_rows)
        .into_iter()
        .map(|(group, rows)| {
            json!({
                "kind": "build",
                "fragment_ids": group,
                "rows": rows,
            })
        })
        .collect();
    let before = segments.len();
    let kept = units.len() + tasks.len() + stale_only.len();
    let room = policy.max_segments.saturating_sub(builds.len() + tasks.len() + stale_only.len()).max(1);
    merge_units(&mut units, policy, room);
    for u in units.iter().filter(|u| u.uuids.len() > 1) {
        tasks.push(json!({
            "kind": "merge",
            "segment_uuids": u.uuids,
            "fragment_ids": ids(&u.fragments),
            "rows": u.rows,
        }));
    }
    let after = kept - (units.iter().map(|u| u.uuids.len()).sum::<usize>() - units.len()) + builds.len();
    let mut all = builds;
    all.extend(tasks);
    let first = &segments[0];
    let models: Vec<Option<String>> = segments.iter().map(model_fingerprint).collect();
    let model = if models.windows(2).all(|w| w[0] == w[1]) { models[0].clone() } else { None };
    let columns = column_names(ds, &first.fields);
    let advice = if policy.drift_threshold > 0.0 && is_vector(first) {
        drift(ds, name, &columns[0], &(&present - &covered), &(&present & &covered), policy.drift_threshold)?
    } else {
        Value::Null
    };
    Ok(json!({
        "index": name,
        "columns": columns,
        "type": segment_type_name(first),
        "dataset_version": ds.version().version,
        "model_fingerprint": model,
        "policy": {
            "target_rows_per_segment": policy.target_rows,
            "small_segment_rows": policy.small_rows,
            "max_segments": policy.max_segments,
        },
        "segments_before": before,
        "segments_after": after,
        "tasks": all,
        "stale_segments": stale_only,
        "drift": advice,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(name: &str, fragments: &[u32], rows: u64) -> Unit {
        Unit {
            uuids: vec![name.to_string()],
            fragments: fragments.iter().copied().collect(),
            rows,
            model: None,
            vector: false,
        }
    }

    fn vector_unit(name: &str, fragments: &[u32], rows: u64, model: Option<&str>) -> Unit {
        Unit { model: model.map(str::to_string), vector: true, ..unit(name, fragments, rows) }
    }

    fn policy(target_rows: u64, small_rows: u64) -> Policy {
        Policy { target_rows, small_rows, max_segments: 100, drift_threshold: 0.0 }
    }

    /// The units as (uuids, fragment ids, rows).
    fn shape(units: &[Unit]) -> Vec<(Vec<&str>, Vec<u32>, u64)> {
        units.iter().map(|u| (u.uuids.iter().map(String::as_str).collect(), ids(&u.fragments), u.rows)).collect()
    }

    #[test]
    fn units_join_by_kind_and_model() {
        let scalar = unit("s", &[0], 1);
        let a = vector_unit("a", &[1], 1, Some("m1"));
        let a2 = vector_unit("a2", &[2], 1, Some("m1"));
        let b = vector_unit("b", &[3], 1, Some("m2"));
        let none = vector_unit("n", &[4], 1, None);
        assert!(scalar.joins(&unit("t", &[5], 1)));
        assert!(a.joins(&a2) && a2.joins(&a));
        assert!(!a.joins(&b) && !b.joins(&a));
        // A vector segment with no recorded model merges with none.
        assert!(!none.joins(&vector_unit("n2", &[6], 1, None)));
        assert!(!a.joins(&none) && !none.joins(&a));
    }

    #[test]
    fn small_neighbours_merge_smallest_pair_first_within_the_target() {
        let mut units = vec![unit("a", &[0], 5), unit("b", &[1, 2], 50), unit("c", &[3], 5), unit("d", &[4], 60)];
        merge_units(&mut units, &policy(100, 10), 100);
        // (a,b) and (b,c) both make 55: the first; then (ab,c) makes 60;
        // (abc,d) would make 120, above the target.
        assert_eq!(shape(&units), vec![(vec!["a", "b", "c"], vec![0, 1, 2, 3], 60), (vec!["d"], vec![4], 60)]);
    }

    #[test]
    fn no_merge_without_a_small_segment() {
        let mut units = vec![unit("a", &[0], 10), unit("b", &[1], 10), unit("c", &[2], 50)];
        // Below `small_rows` is strict: 10 rows are not small at 10.
        merge_units(&mut units, &policy(100, 10), 100);
        assert_eq!(shape(&units), vec![(vec!["a"], vec![0], 10), (vec!["b"], vec![1], 10), (vec!["c"], vec![2], 50)]);
    }

    #[test]
    fn equal_pairs_merge_left_first_and_stop_at_the_target() {
        let mut units = vec![unit("a", &[0], 5), unit("b", &[1], 5), unit("c", &[2], 5)];
        merge_units(&mut units, &policy(10, 10), 100);
        assert_eq!(shape(&units), vec![(vec!["a", "b"], vec![0, 1], 10), (vec!["c"], vec![2], 5)]);
    }

    #[test]
    fn above_the_room_the_smallest_pairs_merge_whatever_their_size() {
        let mut units = vec![unit("a", &[0], 50), unit("b", &[1], 50), unit("c", &[2], 50)];
        merge_units(&mut units, &policy(100, 10), 2);
        assert_eq!(shape(&units), vec![(vec!["a", "b"], vec![0, 1], 100), (vec!["c"], vec![2], 50)]);
        let mut units = vec![unit("a", &[0], 80), unit("b", &[1], 10), unit("c", &[2], 30)];
        // (b,c) first (40 rows), then the rest, above the 100-row target.
        merge_units(&mut units, &policy(100, 5), 1);
        assert_eq!(shape(&units), vec![(vec!["a", "b", "c"], vec![0, 1, 2], 120)]);
    }

    #[test]
    fn vector_segments_merge_only_within_one_model() {
        let mut units = vec![
            vector_unit("a", &[0], 5, Some("m1")),
            vector_unit("b", &[1], 5, Some("m1")),
            vector_unit("c", &[2], 1, Some("m2")),
        ];
        // Even over the room: (b,c) is the smaller pair but spans two models.
        merge_units(&mut units, &policy(100, 10), 1);
        assert_eq!(shape(&units), vec![(vec!["a", "b"], vec![0, 1], 10), (vec!["c"], vec![2], 1)]);
        assert_eq!(units[0].model.as_deref(), Some("m1"));
        let mut units = vec![vector_unit("a", &[0], 5, None), vector_unit("b", &[1], 5, None)];
        merge_units(&mut units, &policy(100, 10), 1);
        assert_eq!(units.len(), 2);
    }

    #[test]
    fn delta_groups_follow_runs_of_unindexed_fragments() {
        // Manifest order (a compaction's fragment 7 before 5); fragment 1 is
        // indexed, so fragment 0 is a run of its own.
        let fragments = [(0, 100), (1, 100), (2, 50), (3, 100), (7, 10), (5, 10)];
        let covered: RoaringBitmap = [1u32, 40].into_iter().collect();
        // The second run holds 170 rows: two groups, the largest as small as
        // it can be (50 | 100 + 10 + 10).
        assert_eq!(delta_groups(&fragments, &covered, 100), vec![(vec![0], 100), (vec![2], 50), (vec![3, 5, 7], 120)]);
        // A target above every run: one group per run.
        assert_eq!(delta_groups(&fragments, &covered, 1000), vec![(vec![0], 100), (vec![2, 3, 5, 7], 170)]);
        // Everything indexed: no build.
        let all: RoaringBitmap = [0u32, 1, 2, 3, 5, 7].into_iter().collect();
        assert!(delta_groups(&fragments, &all, 100).is_empty());
        assert!(delta_groups(&[], &RoaringBitmap::new(), 100).is_empty());
    }

    #[test]
    fn delta_groups_never_make_more_groups_than_fragments() {
        let none = RoaringBitmap::new();
        // A target of 0 rows counts as 1: as many groups as rows, at most
        // one a fragment.
        assert_eq!(delta_groups(&[(4, 3), (6, 0)], &none, 0), vec![(vec![4], 3), (vec![6], 0)]);
        // Empty fragments still make one group.
        assert_eq!(delta_groups(&[(1, 0), (2, 0)], &none, 0), vec![(vec![1, 2], 0)]);
        // 3 groups of 30 for 90 rows at a target of 30.
        let fragments = [(0, 10), (1, 20), (2, 30), (3, 15), (4, 15)];
        assert_eq!(delta_groups(&fragments, &none, 30), vec![(vec![0, 1], 30), (vec![2], 30), (vec![3, 4], 30)]);
    }
}
