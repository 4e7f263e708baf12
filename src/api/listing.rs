//! lance.h section "Distributed index builds: coverage and statistics"
//! (RFC E6, and beyond it: row counts, sizes, model fingerprints, and
//! per-index coverage of the current version).

use std::collections::BTreeSet;
use std::ffi::c_char;

use lance::Dataset;
use lance_table::format::IndexMetadata;
use roaring::RoaringBitmap;
use serde_json::{json, Value};
use uuid::Uuid;

use crate::boundary::error::{guard, invalid, not_found, status, CResult};
use crate::boundary::ffi::{into_c_string, require_out, required_nonempty_str, write_bytes_out};
use crate::index::catalog::{column_names, named_segments, user_segments, FragmentRows};
use crate::index::codec::{encode_metadata, model_fingerprint, provenance, segment_type_name};
use crate::store::handle::{dataset_ref, LanceDataset};

fn segment_entry(ds: &Dataset, rows: &FragmentRows, s: &IndexMetadata) -> Value {
    let fragments: Vec<u32> = s.fragment_bitmap.as_ref().map(|b| b.iter().collect()).unwrap_or_default();
    // The rows the segment indexed are the rows its fragments held when
    // written; unknown when a fragment has left the dataset since.
    let num_rows = fragments.iter().map(|id| rows.get(*id).map(|(written, _)| written)).sum::<Option<u64>>();
    let size_bytes = s.files.as_ref().map(|files| files.iter().map(|f| f.size_bytes).sum::<u64>());
    let (job_id, attempt_id) = provenance(s);
    json!({
        "name": s.name,
        "uuid": s.uuid.to_string(),
        "columns": column_names(ds, &s.fields),
        "type": segment_type_name(s),
        "dataset_version": s.dataset_version,
        "index_version": s.index_version,
        "fragment_ids": fragments,
        "created_at": s.created_at.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        "num_rows": num_rows,
        "size_bytes": size_bytes,
        "model_fingerprint": model_fingerprint(s),
        "job_id": job_id,
        "attempt_id": attempt_id,
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_index_segments_json(dataset: *const LanceDataset) -> *mut c_char {
    guard(std::ptr::null_mut(), || {
        let ds = dataset_ref(dataset)?.snapshot();
        let rows = FragmentRows::of(&ds);
        let entries: Vec<Value> = user_segments(&ds)?.iter().map(|s| segment_entry(&ds, &rows, s)).collect();
        Ok(into_c_string(Value::Array(entries).to_string()))
    })
}

fn coverage(ds: &Dataset, name: &str) -> CResult<Value> {
    let segments = named_segments(ds, name)?;
    let mut covered = RoaringBitmap::new();
    for s in &segments {
        if let Some(b) = &s.fragment_bitmap {
            covered |= b;
        }
    }
    let current: BTreeSet<u32> = ds.manifest.fragments.iter().filter_map(|f| u32::try_from(f.id).ok()).collect();
    let rows = FragmentRows::of(ds);
    let (mut indexed, mut unindexed) = (Vec::new(), Vec::new());
    let (mut indexed_rows, mut unindexed_rows) = (Some(0u64), Some(0u64));
    for id in current {
        let live = rows.get(id).map(|(_, live)| live);
        if covered.contains(id) {
            indexed.push(id);
            indexed_rows = indexed_rows.zip(live).map(|(a, b)| a + b);
        } else {
            unindexed.push(id);
            unindexed_rows = unindexed_rows.zip(live).map(|(a, b)| a + b);
        }
    }
    let stale: Vec<u32> = covered.iter().filter(|id| rows.get(*id).is_none()).collect();
    Ok(json!({
        "name": name,
        "dataset_version": ds.version().version,
        "num_segments": segments.len(),
        "indexed_fragments": indexed,
        "unindexed_fragments": unindexed,
        "indexed_rows": indexed_rows,
        "unindexed_rows": unindexed_rows,
        "stale_fragments": stale,
    }))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_index_coverage_json(
    dataset: *const LanceDataset,
    index_name: *const c_char,
) -> *mut c_char {
    guard(std::ptr::null_mut(), || {
        let ds = dataset_ref(dataset)?.snapshot();
        let name = required_nonempty_str(index_name, "index_name")?;
        Ok(into_c_string(coverage(&ds, name)?.to_string()))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_index_segment_metadata(
    dataset: *const LanceDataset,
    index_name: *const c_char,
    segment_uuid: *const c_char,
    out_metadata_bytes: *mut *mut u8,
    out_metadata_len: *mut usize,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        let name = required_nonempty_str(index_name, "index_name")?;
        let text = required_nonempty_str(segment_uuid, "segment_uuid")?;
        require_out(out_metadata_bytes, "out_metadata_bytes")?;
        require_out(out_metadata_len, "out_metadata_len")?;
        let uuid =
            Uuid::parse_str(text).map_err(|e| invalid(format!("segment_uuid = \"{text}\" is not a UUID ({e})")))?;
        let segment = named_segments(&ds, name)?.into_iter().find(|s| s.uuid == uuid).ok_or_else(|| {
            not_found(format!("index '{name}' has no segment {uuid} in dataset version {}", ds.version().version))
        })?;
        write_bytes_out(out_metadata_bytes, out_metadata_len, encode_metadata(&segment));
        Ok(())
    })
}
