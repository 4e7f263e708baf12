//! The checks and steps of committing and merging index segments (lance.h
//! "Distributed index builds: commit"; the C surface is api/commit.rs).
//!
//! The core's `commit_existing_index_segments` does the commit and keeps its
//! own validation.  Before it runs, the set is checked here so that each
//! refusal a coordinator must act on differently has its own error code and
//! names the segments and fragments involved: an empty set, a repeated UUID,
//! overlapping coverage, coverage of fragments the dataset no longer has,
//! segments from different shared models, and segments that are already
//! committed (a retry after a lost reply, answered with the version that
//! holds them).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use lance::index::scalar::IndexDetails;
use lance::index::DatasetIndexExt;
use lance::Dataset;
use lance_index::pb::VectorIndexDetails;
use lance_index::registry::IndexPluginRegistry;
use lance_table::format::IndexMetadata;
use prost::Name;
use roaring::RoaringBitmap;
use uuid::Uuid;

use crate::boundary::error::{invalid, not_found, not_supported, CError, CResult, Code, Context};
use crate::index::build::CLAIM_FILE;
use crate::index::catalog::{column_names, require_column, user_segments};
use crate::index::codec::{
    is_vector, model_fingerprint, record_provenance, segment_type_name, set_vector_hints, vector_hint,
    MERGED_FROM_HINT, MODEL_FINGERPRINT_HINT,
};
use crate::index::kinds::by_segment_name;
use crate::process::runtime::block_on;

/// What a commit of segments may do (lance.h `LanceCommitIndexOptions`).
pub struct Options<'a> {
    /// Replace the segments of an index of the same name that the new set
    /// covers.
    pub replace: bool,
    /// Accept segments of different shared models (or of none).
    pub allow_independent_models: bool,
    /// Provenance recorded in each segment.
    pub job_id: Option<&'a str>,
    pub attempt_id: Option<&'a str>,
}

/// A commit's outcome: the version that holds the set, and whether an
/// earlier commit of the same set made it (a retry).
pub struct Committed {
    pub version: u64,
    pub already_committed: bool,
}

impl Options<'static> {
    /// The options of the forms without an options struct: no job ids.
    pub fn fixed(replace: bool, allow_independent_models: bool) -> Self {
        Options { replace, allow_independent_models, job_id: None, attempt_id: None }
    }
}

fn uuid_list(uuids: &[Uuid]) -> String {
    uuids.iter().map(Uuid::to_string).collect::<Vec<_>>().join(", ")
}

/// A fragment set for a message: the first ids, and how many more there are
/// (a corrupted bitmap can hold billions).
fn fragment_list(bitmap: &RoaringBitmap) -> String {
    const SHOWN: usize = 32;
    let ids: Vec<String> = bitmap.iter().take(SHOWN).map(|id| id.to_string()).collect();
    let more = bitmap.len().saturating_sub(SHOWN as u64);
    if more == 0 {
        format!("[{}]", ids.join(", "))
    } else {
        format!("[{}, ... and {more} more]", ids.join(", "))
    }
}

/// The set itself: no repeated UUID, every segment with coverage, no two
/// segments over one fragment.
fn check_set(name: &str, segments: &[IndexMetadata]) -> CResult<()> {
    let mut repeated = Vec::new();
    for (j, s) in segments.iter().enumerate() {
        if let Some(i) = segments[..j].iter().position(|t| t.uuid == s.uuid) {
            repeated.push(format!("{} (segments {i} and {j})", s.uuid));
        }
    }
    if !repeated.is_empty() {
        return Err(CError::new(
            Code::DuplicateSegment,
            format!("the segments for index '{name}' repeat segment uuid {}", repeated.join(", ")),
        ));
    }
    let mut coverage = Vec::with_capacity(segments.len());
    for (i, s) in segments.iter().enumerate() {
        match &s.fragment_bitmap {
            Some(bitmap) => coverage.push(bitmap),
            None => return Err(invalid(format!("segment {i} ({}) records no fragment coverage", s.uuid))),
        }
    }
    let mut overlaps = Vec::new();
    for i in 0..segments.len() {
        for j in i + 1..segments.len() {
            let shared = coverage[i] & coverage[j];
            if !shared.is_empty() {
                overlaps.push(format!(
                    "{} and {} both cover fragments {}",
                    segments[i].uuid,
                    segments[j].uuid,
                    fragment_list(&shared)
                ));
            }
        }
    }
    if !overlaps.is_empty() {
        return Err(CError::new(
            Code::OverlappingSegments,
            format!("the segments for index '{name}' overlap: {}", overlaps.join("; ")),
        ));
    }
    Ok(())
}

/// Vector segments of one index must come from one shared model, unless the
/// caller allows independently trained ones.  `kept` are the existing
/// segments of the index the commit keeps beside the new ones.
fn check_models(name: &str, incoming: &[IndexMetadata], kept: &[IndexMetadata], allow: bool) -> CResult<()> {
    let all: Vec<&IndexMetadata> = incoming.iter().chain(kept).collect();
    if allow || all.len() < 2 || !all.iter().any(|s| is_vector(s)) {
        return Ok(());
    }
    let mut by_model: BTreeMap<String, Vec<Uuid>> = BTreeMap::new();
    let mut unknown = Vec::new();
    for s in &all {
        match model_fingerprint(s) {
            Some(fp) => by_model.entry(fp).or_default().push(s.uuid),
            None => unknown.push(s.uuid),
        }
    }
    if !unknown.is_empty() {
        return Err(CError::new(
            Code::ModelMismatch,
            format!(
                "segments {} of index '{name}' record no shared model (they were trained independently), \
                 so their partitions are not comparable with the other segments'; build every segment from \
                 one model (lance_vector_model_train) or set allow_independent_models",
                uuid_list(&unknown)
            ),
        ));
    }
    if by_model.len() > 1 {
        let groups: Vec<String> =
            by_model.iter().map(|(fp, uuids)| format!("model {fp}: {}", uuid_list(uuids))).collect();
        return Err(CError::new(
            Code::ModelMismatch,
            format!(
                "the segments of index '{name}' were built from {} different shared models ({}); \
                 set allow_independent_models to commit them anyway",
                by_model.len(),
                groups.join("; ")
            ),
        ));
    }
    Ok(())
}

/// Fragments the segments cover that `ds` no longer has.
fn check_stale(ds: &Dataset, segments: &[IndexMetadata]) -> CResult<()> {
    let live: RoaringBitmap = ds.manifest.fragments.iter().filter_map(|f| u32::try_from(f.id).ok()).collect();
    let mut stale = Vec::new();
    for s in segments {
        let gone = s.fragment_bitmap.as_ref().map(|b| b - &live).unwrap_or_default();
        if !gone.is_empty() {
            stale.push(format!(
                "segment {} (built at version {}) covers fragments {}",
                s.uuid,
                s.dataset_version,
                fragment_list(&gone)
            ));
        }
    }
    if stale.is_empty() {
        return Ok(());
    }
    Err(CError::new(
        Code::StaleSegment,
        format!(
            "dataset version {} no longer has some fragments the segments cover (deleted or compacted \
             away since the build): {}; rebuild those segments over the current fragments",
            ds.version().version,
            stale.join("; ")
        ),
    ))
}

/// Every segment's files are in storage with the sizes its metadata records;
/// a segment that records no file list must at least have files.  Without
/// this a segment deleted by a cleanup, or one whose UUID was corrupted in
/// transit, would commit and break every later search on the column.
/// (Segments stored under another base path are the core's to resolve.)
fn check_files(ds: &Dataset, segments: &[IndexMetadata]) -> CResult<()> {
    let incomplete = |s: &IndexMetadata, what: String| {
        CError::new(
            Code::IncompleteSegment,
            format!("segment {} is incomplete in storage: {what}; rebuild it (with a new UUID)", s.uuid),
        )
    };
    block_on(async {
        let store = ds.object_store(None).await?;
        for s in segments.iter().filter(|s| s.base_id.is_none()) {
            let dir = ds.indices_dir().join(s.uuid.to_string());
            match s.files.as_deref() {
                Some(files) if !files.is_empty() => {
                    for f in files {
                        let path = f.path.split('/').fold(dir.clone(), |p, part| p.join(part));
                        let shown = format!("_indices/{}/{}", s.uuid, f.path);
                        // One metadata request per file: its size, or NotFound.
                        let size = match store.size(&path).await {
                            Ok(size) => size,
                            Err(lance::Error::NotFound { .. }) => {
                                return Err(incomplete(s, format!("file {shown} is missing")))
                            }
                            Err(err) => return Err(err.into()),
                        };
                        if size != f.size_bytes {
                            return Err(incomplete(
                                s,
                                format!("file {shown} has {size} bytes, its metadata records {}", f.size_bytes),
                            ));
                        }
                    }
                }
                _ => {
                    if store.read_dir(dir.clone()).await?.iter().all(|f| f.as_str() == CLAIM_FILE) {
                        return Err(incomplete(s, format!("directory _indices/{} holds no files", s.uuid)));
                    }
                }
            }
        }
        Ok(())
    })?
}

/// The segments must index `column`, and an existing index of that name
/// must be on the same column: no model option could make either work.
fn check_column(
    ds: &Dataset,
    name: &str,
    column: &str,
    segments: &[IndexMetadata],
    existing: &[IndexMetadata],
) -> CResult<()> {
    let field_id = ds
        .schema()
        .field(column)
        .map(|f| f.id)
        .ok_or_else(|| not_found(format!("column '{column}' does not exist")))?;
    let columns_of = |s: &IndexMetadata| column_names(ds, &s.fields).join(", ");
    if let Some(s) = segments.iter().find(|s| s.fields != [field_id]) {
        return Err(invalid(format!(
            "segment {} was built on column '{}', not on column '{column}'",
            s.uuid,
            columns_of(s)
        )));
    }
    if let Some(e) = existing.iter().find(|e| e.fields != [field_id]) {
        return Err(invalid(format!(
            "index '{name}' already exists on column '{}'; its segments cannot be committed on column '{column}' \
             (choose another index name)",
            columns_of(e)
        )));
    }
    Ok(())
}

/// Every segment must be one the core reads: it hides from queries the
/// indices whose type it has no reader for or whose version is newer than
/// it supports (`unsupported_index_version` in lance 14.0.2 src/index.rs),
/// so such a segment would commit and then be invisible.
/// Replacing an existing segment that the new set covers only in part
/// would leave its other fragments unindexed.
fn check_partial_cover(ds: &Dataset, name: &str, existing: &[IndexMetadata], incoming: &RoaringBitmap) -> CResult<()> {
    let current: RoaringBitmap = ds.get_fragments().iter().map(|f| f.id() as u32).collect();
    for e in existing {
        let Some(bitmap) = &e.fragment_bitmap else { continue };
        let live = bitmap & &current;
        let covered = &live & incoming;
        if !covered.is_empty() && covered != live {
            return Err(CError::new(
                Code::OverlappingSegments,
                format!(
                    "segment {} of index '{name}' covers fragments {}; the new segments cover only {} of them, \
                     so replacing it would leave {} unindexed: build the new segments over all of its fragments",
                    e.uuid,
                    fragment_list(&live),
                    fragment_list(&covered),
                    fragment_list(&(&live - &covered))
                ),
            ));
        }
    }
    Ok(())
}

fn check_readable(ds: &Dataset, segments: &[IndexMetadata]) -> CResult<()> {
    static SCALAR_PLUGINS: OnceLock<Arc<IndexPluginRegistry>> = OnceLock::new();
    for s in segments {
        if let Some(base_id) = s.base_id.filter(|id| !ds.manifest.base_paths.contains_key(id)) {
            return Err(invalid(format!(
                "segment {} records base path {base_id}, which dataset version {} does not have",
                s.uuid,
                ds.version().version
            )));
        }
        let Some(details) = &s.index_details else { continue };
        // The core's reader lookup compares the whole type name, so must this.
        let type_name = details.type_url.rsplit_once('/').map_or("", |(_, name)| name);
        let known = if IndexDetails(Arc::clone(details)).is_vector() {
            type_name.eq_ignore_ascii_case(&VectorIndexDetails::full_name())
                || type_name.eq_ignore_ascii_case("lance.index.VectorIndexDetails")
        } else {
            SCALAR_PLUGINS.get_or_init(IndexPluginRegistry::with_default_plugins).supports_details(details)
        };
        if !known {
            return Err(invalid(format!(
                "segment {} has index details of a type Lance {} has no reader for ({}); committed it \
                 would be invisible to queries",
                s.uuid,
                crate::LANCE_CORE_VERSION,
                details.type_url
            )));
        }
        match IndexDetails(Arc::clone(details)).index_version() {
            Ok(max) if i64::from(s.index_version) > i64::from(max) => {
                return Err(not_supported(format!(
                    "segment {} records index version {}; Lance {} reads versions up to {max} of this index \
                     type, so committed it would be invisible to queries",
                    s.uuid,
                    s.index_version,
                    crate::LANCE_CORE_VERSION
                )))
            }
            Ok(_) => {}
            Err(_) => {
                return Err(invalid(format!(
                    "segment {} has index details of a type Lance {} does not know ({})",
                    s.uuid,
                    crate::LANCE_CORE_VERSION,
                    details.type_url
                )))
            }
        }
    }
    Ok(())
}

/// One logical index has one index type: every segment, new or kept.
fn check_types(name: &str, incoming: &[IndexMetadata], kept: &[IndexMetadata]) -> CResult<()> {
    let typed: Vec<(Uuid, String)> = incoming.iter().chain(kept).map(|s| (s.uuid, segment_type_name(s))).collect();
    if typed.iter().all(|(_, t)| *t == typed[0].1) {
        return Ok(());
    }
    let listed: Vec<String> = typed.iter().map(|(uuid, t)| format!("{uuid} ({t})")).collect();
    Err(invalid(format!(
        "the segments of index '{name}' are of different index types: {}; one index has one type",
        listed.join(", ")
    )))
}

/// Whether `ds` already holds these segments as index `name`: Some(version
/// that committed them), None when none of them is committed; an error when
/// only some are, or they belong to another index.
fn already_committed(ds: &Dataset, name: &str, segments: &[IndexMetadata]) -> CResult<Option<u64>> {
    let existing = user_segments(ds)?;
    let found: Vec<&IndexMetadata> =
        segments.iter().filter_map(|s| existing.iter().find(|e| e.uuid == s.uuid)).collect();
    if found.is_empty() {
        return Ok(None);
    }
    // A segment's UUID is its identity: its coverage may have been remapped
    // by a compaction since the commit, and it is still the same segment.
    let same = found.len() == segments.len() && found.iter().all(|e| e.name == name);
    if !same {
        let listed: Vec<String> = found.iter().map(|e| format!("{} (in index '{}')", e.uuid, e.name)).collect();
        return Err(CError::new(
            Code::DuplicateSegment,
            format!(
                "segments {} are already committed in dataset version {}, but the set to commit as '{name}' \
                 is not the committed one",
                listed.join(", "),
                ds.version().version
            ),
        ));
    }
    committing_version(ds, name, segments)
}

/// The version that committed these segments as index `name`: walking back
/// from `ds`'s own version, the oldest of the most recent run of versions
/// whose index holds all of them.  None when no version kept holds them.
/// The walk ends at the newest version the segments were built on (no
/// earlier version can hold them) or at a version cleaned up; any other
/// failure to read a version is reported as it is.  (Reads old manifests:
/// only the retry and error paths call it.)
fn committing_version(ds: &Dataset, name: &str, segments: &[IndexMetadata]) -> CResult<Option<u64>> {
    let current = ds.version().version;
    let oldest = segments.iter().map(|s| s.dataset_version).max().unwrap_or(0).saturating_add(1).max(1);
    let mut first_holding = None;
    let mut version = current;
    while version >= oldest {
        let held = if version == current {
            block_on(ds.load_indices())??
        } else {
            match block_on(ds.checkout_version(version))? {
                Ok(older) => block_on(older.load_indices())??,
                Err(
                    lance::Error::VersionNotFound { .. }
                    | lance::Error::NotFound { .. }
                    | lance::Error::DatasetNotFound { .. },
                ) => break,
                Err(err) => return Err(err).context(format!("reading dataset version {version}")),
            }
        };
        let holds = segments.iter().all(|s| held.iter().any(|h| h.uuid == s.uuid && h.name == name));
        if holds {
            first_holding = Some(version);
        } else if first_holding.is_some() {
            break;
        }
        version -= 1;
    }
    Ok(first_holding)
}

fn latest(ds: &Dataset) -> CResult<Dataset> {
    let mut latest = Dataset::clone(ds);
    block_on(latest.checkout_latest())?.context("loading the dataset's latest version")?;
    Ok(latest)
}

/// Commits `segments` as index `name` on `column`, in one new version of
/// the latest dataset (which `ds` becomes), after every check in the order
/// lance.h lists them; a set already committed answers with its version.
pub fn commit(
    ds: &mut Dataset,
    name: &str,
    column: &str,
    mut segments: Vec<IndexMetadata>,
    o: &Options,
) -> CResult<Committed> {
    check_set(name, &segments)?;
    let mut target = latest(ds)?;
    require_column(&target, column)?;
    if let Some(version) = already_committed(&target, name, &segments)? {
        *ds = target;
        return Ok(Committed { version, already_committed: true });
    }
    if let Err(stale) = check_stale(&target, &segments) {
        // Committed once and then rewritten (a compaction remaps committed
        // segments into new ones): a retry of that commit, not a stale set.
        if let Some(version) = committing_version(&target, name, &segments)? {
            *ds = target;
            return Ok(Committed { version, already_committed: true });
        }
        return Err(stale);
    }
    let existing: Vec<IndexMetadata> = user_segments(&target)?.into_iter().filter(|s| s.name == name).collect();
    check_column(&target, name, column, &segments, &existing)?;
    if !existing.is_empty() && !o.replace {
        return Err(CError::new(
            Code::Index,
            format!("index '{name}' already exists; set replace to replace its segments"),
        ));
    }
    let incoming: RoaringBitmap =
        segments.iter().filter_map(|s| s.fragment_bitmap.clone()).fold(RoaringBitmap::new(), |a, b| a | b);
    if o.replace {
        check_partial_cover(&target, name, &existing, &incoming)?;
    }
    let kept: Vec<IndexMetadata> = existing
        .into_iter()
        .filter(|e| e.fragment_bitmap.as_ref().is_some_and(|b| !b.is_empty() && b.is_disjoint(&incoming)))
        .collect();
    check_readable(&target, &segments)?;
    check_types(name, &segments, &kept)?;
    check_models(name, &segments, &kept, o.allow_independent_models)?;
    check_files(&target, &segments)?;
    record_provenance(&mut segments, o.job_id, o.attempt_id)?;
    let count = segments.len();
    let result = block_on(target.commit_existing_index_segments(name, column, segments.clone()))?;
    match result {
        Ok(()) => {
            let version = target.version().version;
            *ds = target;
            Ok(Committed { version, already_committed: false })
        }
        Err(err) => {
            let err = CError::from(err);
            if err.code == Code::CommitConflict {
                // Another coordinator may have committed this very set.
                let now = latest(ds)?;
                if let Ok(Some(version)) = already_committed(&now, name, &segments) {
                    *ds = now;
                    return Ok(Committed { version, already_committed: true });
                }
            }
            Err(err).context(format!("committing {count} segments as index '{name}'"))
        }
    }
}

/// The core's refusal to merge IVF_RQ segments whose RaBitQ rotations
/// differ: the structural and rotation checks of its merger
/// (lance-index-14.0.2 src/vector/distributed/index_merger.rs:1168-1199,
/// "Distributed RQ merge: structural mismatch across shards", "... rotation
/// matrix mismatch across shards").  Only the message tells them apart.
fn rotations_differ(message: &str) -> bool {
    message.contains("RQ") && message.contains("mismatch across shards")
}

/// Merges uncommitted segments into one with the core's
/// `merge_existing_index_segments`, after the checks a commit of the same
/// set would make (a repeated UUID, overlap, mixed shared models).
pub fn merge(ds: &Dataset, mut segments: Vec<IndexMetadata>) -> CResult<IndexMetadata> {
    let name = segments[0].name.clone();
    check_set(&name, &segments)?;
    check_types(&name, &segments, &[])?;
    check_models(&name, &segments, &[], false)?;
    let kind = by_segment_name(&segment_type_name(&segments[0]));
    if let Some(kind) = kind.filter(|k| !k.mergeable) {
        return Err(not_supported(format!(
            "Lance {} does not merge {} segments: commit the segments of index '{name}' unmerged",
            crate::LANCE_CORE_VERSION,
            kind.name
        )));
    }
    let rotates = kind.is_some_and(|k| k.rotation);
    let fingerprint = model_fingerprint(&segments[0]);
    let count = segments.len();
    let sources: u64 = segments
        .iter_mut()
        .map(|s| vector_hint(s, MERGED_FROM_HINT).and_then(|n| n.parse().ok()).unwrap_or(1u64))
        .sum();
    let mut merged = match block_on(ds.merge_existing_index_segments(segments))? {
        Ok(merged) => merged,
        // One shared model without a rotation (serialized by lance-c before
        // 0.5, made from Arrow arrays, trained for another index type): each
        // segment build drew its own (lance-index-14.0.2
        // src/vector/bq/builder.rs:1066-1086), so the segments are one
        // model's only in their centroids.
        Err(err) if rotates && rotations_differ(&err.to_string()) => {
            return Err(CError::new(
                Code::ModelMismatch,
                format!(
                    "the IVF_RQ segments of index '{name}' rotate vectors differently, and Lance {} merges only \
                     segments with one RaBitQ rotation (it reports: {}); their model carries no rotation, so \
                     each segment build drew its own: build the segments from an IVF_RQ model trained by \
                     lance-c 0.5 or later (lance_vector_model_train or a distributed training), or \
                     commit them unmerged",
                    crate::LANCE_CORE_VERSION,
                    CError::from(err).message
                ),
            ))
        }
        Err(err) => return Err(CError::from(err)).context(format!("merging {count} segments of index '{name}'")),
    };
    if is_vector(&merged) {
        // The merge keeps the shared model: record it, and how many built
        // segments the result stands for.
        let sources = sources.to_string();
        set_vector_hints(
            &mut merged,
            &[(MODEL_FINGERPRINT_HINT, fingerprint.as_deref()), (MERGED_FROM_HINT, Some(sources.as_str()))],
        )?;
    }
    Ok(merged)
}
