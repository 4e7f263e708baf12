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
use crate::index::catalog::{column_names, fragment_rows, named_segments};
use crate::index::codec::{is_vector, model_fingerprint, segment_type_name};
use crate::index::planning::{contiguous_ranges, manifest_fragments};

/// The size policy (lance.h `LanceIndexMaintenanceOptions`, defaults
/// applied).
pub struct Policy {
    pub target_rows: u64,
    pub small_rows: u64,
    pub max_segments: usize,
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
fn written_rows(ds: &Dataset, fragments: &RoaringBitmap) -> u64 {
    fragments.iter().filter_map(|id| fragment_rows(ds, id)).map(|(written, _)| written).sum()
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
                "rows": written_rows(ds, &live),
            }));
        } else {
            units.push(Unit {
                uuids: vec![uuid],
                rows: written_rows(ds, &live),
                fragments: live,
                model: model_fingerprint(s),
                vector: is_vector(s),
            });
        }
    }
    // Delta groups: runs of manifest-adjacent unindexed fragments.
    let mut builds = Vec::new();
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
        let count = (total.div_ceil(policy.target_rows.max(1)) as usize).clamp(1, run.len());
        let mut start = 0;
        for end in contiguous_ranges(&rows, count) {
            let mut group: Vec<u32> = run[start..end].iter().map(|f| f.0).collect();
            group.sort_unstable();
            builds.push(json!({
                "kind": "build",
                "fragment_ids": group,
                "rows": rows[start..end].iter().sum::<u64>(),
            }));
            start = end;
        }
        run.clear();
    }
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
    Ok(json!({
        "index": name,
        "columns": column_names(ds, &first.fields),
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
    }))
}
