//! lance.h section "Versions, restore and statistics": the version history
//! of a dataset, restoring an old version as the latest, and the per-field
//! bytes on disk.  The two lists are snapshots read once and then indexed.

use lance::dataset::statistics::DatasetStatisticsExt;

use crate::boundary::error::{guard, invalid, CResult, Context};
use crate::boundary::ffi::{free_handle, handle_ref, into_handle};
use crate::process::runtime::block_on;
use crate::store::handle::{dataset_ref, LanceDataset};

/// One entry of the version history: id and commit time in Unix epoch ms.
struct VersionEntry {
    id: u64,
    timestamp_ms: i64,
}

pub struct LanceVersions {
    entries: Vec<VersionEntry>,
}

/// One entry of the data statistics: a field id and its bytes on disk.
struct FieldEntry {
    id: u32,
    bytes_on_disk: u64,
}

pub struct LanceDataStatistics {
    fields: Vec<FieldEntry>,
}

/// Entry `index` of a list, or an error naming the index and the length.
fn entry_at<'a, T>(entries: &'a [T], index: usize, what: &str) -> CResult<&'a T> {
    entries
        .get(index)
        .ok_or_else(|| invalid(format!("index = {index} is out of range: the {what} holds {} entries", entries.len())))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_versions(dataset: *const LanceDataset) -> *mut LanceVersions {
    guard(std::ptr::null_mut(), || {
        let ds = dataset_ref(dataset)?.snapshot();
        let versions = block_on(ds.versions())?.context("listing the versions of the dataset")?;
        let entries = versions
            .iter()
            .map(|v| VersionEntry { id: v.version, timestamp_ms: v.timestamp.timestamp_millis() })
            .collect();
        Ok(into_handle(LanceVersions { entries }))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_versions_count(versions: *const LanceVersions) -> u64 {
    guard(0, || Ok(handle_ref(versions, "versions")?.entries.len() as u64))
}

#[no_mangle]
pub unsafe extern "C" fn lance_versions_id_at(versions: *const LanceVersions, index: usize) -> u64 {
    guard(0, || Ok(entry_at(&handle_ref(versions, "versions")?.entries, index, "version history")?.id))
}

#[no_mangle]
pub unsafe extern "C" fn lance_versions_timestamp_ms_at(versions: *const LanceVersions, index: usize) -> i64 {
    guard(0, || Ok(entry_at(&handle_ref(versions, "versions")?.entries, index, "version history")?.timestamp_ms))
}

#[no_mangle]
pub unsafe extern "C" fn lance_versions_close(versions: *mut LanceVersions) {
    free_handle(versions);
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_restore(dataset: *const LanceDataset, version: u64) -> *mut LanceDataset {
    guard(std::ptr::null_mut(), || {
        let ds = dataset_ref(dataset)?.snapshot();
        if version == 0 {
            return Err(invalid("version = 0 is not a dataset version (versions start at 1)"));
        }
        let latest = block_on(ds.latest_version_id())?.context("reading the latest version")?;
        let mut target =
            block_on(ds.checkout_version(version))?.context(format!("version = {version} (latest is {latest})"))?;
        // Always a new version, the latest included (as upstream's code does):
        // the restore is then a commit of its own and cannot race another
        // writer's.
        block_on(target.restore())?.context(format!("restoring version {version}"))?;
        Ok(into_handle(LanceDataset::new(target)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_calculate_data_stats(dataset: *const LanceDataset) -> *mut LanceDataStatistics {
    guard(std::ptr::null_mut(), || {
        let ds = dataset_ref(dataset)?.snapshot();
        let stats = block_on(ds.calculate_data_stats())?
            .context(format!("calculating the data statistics of dataset version {}", ds.version().version))?;
        // The core lists fields in schema pre-order; the interface promises
        // field id order (the same for a schema that was never evolved).
        let mut fields: Vec<FieldEntry> =
            stats.fields.iter().map(|f| FieldEntry { id: f.id, bytes_on_disk: f.bytes_on_disk }).collect();
        fields.sort_by_key(|f| f.id);
        Ok(into_handle(LanceDataStatistics { fields }))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_data_statistics_count(stats: *const LanceDataStatistics) -> u64 {
    guard(0, || Ok(handle_ref(stats, "stats")?.fields.len() as u64))
}

#[no_mangle]
pub unsafe extern "C" fn lance_data_statistics_field_id_at(stats: *const LanceDataStatistics, index: usize) -> u32 {
    guard(0, || Ok(entry_at(&handle_ref(stats, "stats")?.fields, index, "data statistics")?.id))
}

#[no_mangle]
pub unsafe extern "C" fn lance_data_statistics_bytes_on_disk_at(
    stats: *const LanceDataStatistics,
    index: usize,
) -> u64 {
    guard(0, || Ok(entry_at(&handle_ref(stats, "stats")?.fields, index, "data statistics")?.bytes_on_disk))
}

#[no_mangle]
pub unsafe extern "C" fn lance_data_statistics_close(stats: *mut LanceDataStatistics) {
    free_handle(stats);
}
