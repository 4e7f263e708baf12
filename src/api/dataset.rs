//! lance.h section "Datasets": open, close, versions, schema, fragments,
//! and the maintenance that commits through a handle (delete, update,
//! compaction) or reclaims storage (cleanup).

use std::ffi::c_char;
use std::sync::Arc;
use std::time::Duration;

use arrow::ffi::FFI_ArrowSchema;
use chrono::{DateTime, TimeDelta, Utc};
use lance::dataset::cleanup::CleanupPolicyBuilder;
use lance::dataset::optimize::{compact_files, CompactionOptions};
use lance::dataset::UpdateBuilder;
use lance::Dataset;

use crate::boundary::arrow::export_schema;
use crate::boundary::error::{guard, invalid, status, CError, CResult, Code, Context};
use crate::boundary::ffi::{
    copy_to_caller, free_handle, into_handle, optional_str, require_out, required_nonempty_str, slice_arg,
    storage_options, write_out,
};
use crate::boundary::params::size_field;
use crate::index::build::reclaim_unfinished_segments;
use crate::process::runtime::block_on;
use crate::store::handle::{dataset_ref, open_dataset, LanceDataset};
use crate::store::uploads::abort_incomplete_uploads;

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_open(
    uri: *const c_char,
    storage_opts: *const *const c_char,
    version: u64,
) -> *mut LanceDataset {
    guard(std::ptr::null_mut(), || {
        let uri = required_nonempty_str(uri, "uri")?;
        let options = storage_options(storage_opts)?;
        let dataset = open_dataset(uri, options, version, None, None)?;
        Ok(into_handle(LanceDataset::new(dataset)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_close(dataset: *mut LanceDataset) {
    free_handle(dataset);
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_version(dataset: *const LanceDataset) -> u64 {
    guard(0, || Ok(dataset_ref(dataset)?.snapshot().version().version))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_latest_version(dataset: *const LanceDataset) -> u64 {
    guard(0, || {
        let ds = dataset_ref(dataset)?.snapshot();
        Ok(block_on(ds.latest_version_id())??)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_count_rows(dataset: *const LanceDataset) -> u64 {
    guard(0, || {
        let ds = dataset_ref(dataset)?.snapshot();
        Ok(block_on(ds.count_rows(None))?? as u64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_schema(dataset: *const LanceDataset, out: *mut FFI_ArrowSchema) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        require_out(out, "out")?;
        let schema = arrow_schema::Schema::from(ds.schema());
        export_schema(&schema, out)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_fragment_count(dataset: *const LanceDataset) -> u64 {
    guard(0, || Ok(dataset_ref(dataset)?.snapshot().manifest.fragments.len() as u64))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_fragment_ids(dataset: *const LanceDataset, out_ids: *mut u64) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        require_out(out_ids, "out_ids")?;
        for (i, fragment) in ds.manifest.fragments.iter().enumerate() {
            write_out(out_ids.add(i), fragment.id);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_fragment_ids_bounded(
    dataset: *const LanceDataset,
    out_ids: *mut u64,
    capacity: usize,
    out_count: *mut usize,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        let fragments = &ds.manifest.fragments;
        copy_to_caller(fragments.len(), fragments.iter().map(|f| f.id), out_ids, capacity, out_count, "out_ids")
            .context(format!("listing the fragments of dataset version {}", ds.version().version))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_fragment_row_counts(
    dataset: *const LanceDataset,
    out_row_counts: *mut u64,
    capacity: usize,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        require_out(out_row_counts, "out_row_counts")?;
        let fragments = ds.get_fragments();
        if capacity < fragments.len() {
            return Err(invalid(format!(
                "capacity = {capacity} is less than the {} fragments of dataset version {}",
                fragments.len(),
                ds.version().version
            )));
        }
        let counts = block_on(async {
            let mut counts = Vec::with_capacity(fragments.len());
            for fragment in &fragments {
                counts.push(fragment.count_rows(None).await? as u64);
            }
            Ok::<_, lance::Error>(counts)
        })??;
        for (i, count) in counts.into_iter().enumerate() {
            write_out(out_row_counts.add(i), count);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_delete(
    dataset: *mut LanceDataset,
    predicate: *const c_char,
    out_deleted_rows: *mut u64,
) -> i32 {
    status(|| {
        let handle = dataset_ref(dataset)?;
        let predicate = required_nonempty_str(predicate, "predicate")?;
        let deleted = handle.mutate(|ds| {
            let result = block_on(ds.delete(predicate))?.context(format!("deleting rows where {predicate}"))?;
            *ds = Dataset::clone(&result.new_dataset);
            Ok(result.num_deleted_rows)
        })?;
        if !out_deleted_rows.is_null() {
            write_out(out_deleted_rows, deleted);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_update(
    dataset: *mut LanceDataset,
    predicate: *const c_char,
    columns: *const *const c_char,
    values: *const *const c_char,
    num_updates: usize,
    out_num_updated: *mut u64,
) -> i32 {
    status(|| {
        let handle = dataset_ref(dataset)?;
        let predicate = optional_str(predicate, "predicate")?;
        if predicate == Some("") {
            return Err(invalid("predicate must not be empty; pass NULL to update every row"));
        }
        if num_updates == 0 {
            return Err(invalid("num_updates = 0: give at least one column to update"));
        }
        let column_ptrs = slice_arg(columns, num_updates, "columns")?;
        let value_ptrs = slice_arg(values, num_updates, "values")?;
        let mut updates: Vec<(&str, &str)> = Vec::with_capacity(num_updates);
        for i in 0..num_updates {
            let column = required_nonempty_str(column_ptrs[i], &format!("columns[{i}]"))?;
            let value = required_nonempty_str(value_ptrs[i], &format!("values[{i}]"))?;
            // The core keeps only the last expression given for a column.
            if let Some(first) = updates.iter().position(|(c, _)| *c == column) {
                return Err(invalid(format!("columns[{i}] = \"{column}\" repeats columns[{first}]")));
            }
            updates.push((column, value));
        }
        let updated = handle.mutate(|ds| {
            let version = ds.version().version;
            let mut builder = UpdateBuilder::new(Arc::new(Dataset::clone(ds)));
            if let Some(predicate) = predicate {
                builder = builder.update_where(predicate).context(format!("predicate = \"{predicate}\""))?;
            }
            for (i, (column, value)) in updates.iter().enumerate() {
                if ds.schema().field(column).is_none() {
                    return Err(invalid(format!(
                        "columns[{i}] = \"{column}\" is not a column of dataset version {version}"
                    )));
                }
                builder = builder
                    .set(column, value)
                    .context(format!("columns[{i}] = \"{column}\", values[{i}] = \"{value}\""))?;
            }
            let job = builder.build().context("preparing the update")?;
            let result = block_on(job.execute())?.context("updating rows")?;
            *ds = Dataset::clone(&result.new_dataset);
            Ok(result.rows_updated)
        })?;
        if !out_num_updated.is_null() {
            write_out(out_num_updated, updated);
        }
        Ok(())
    })
}

/// Mirrors `LanceCompactionMetrics` in lance.h.
#[repr(C)]
pub struct LanceCompactionMetrics {
    pub fragments_removed: u64,
    pub fragments_added: u64,
    pub files_removed: u64,
    pub files_added: u64,
}
crate::c_layout!(LanceCompactionMetrics, 32;
    fragments_removed @ 0,
    fragments_added @ 8,
    files_removed @ 16,
    files_added @ 24,
);

/// Mirrors `LanceCompactionOptions` in lance.h (0 = the core's default).
#[repr(C)]
pub struct LanceCompactionOptions {
    pub target_rows_per_fragment: u64,
    pub max_rows_per_group: u64,
    pub max_bytes_per_file: u64,
    pub num_threads: u64,
    pub batch_size: u64,
}
crate::c_layout!(LanceCompactionOptions, 40;
    target_rows_per_fragment @ 0,
    max_rows_per_group @ 8,
    max_bytes_per_file @ 16,
    num_threads @ 24,
    batch_size @ 32,
);

fn compaction_options(o: Option<&LanceCompactionOptions>) -> CResult<CompactionOptions> {
    let mut options = CompactionOptions::default();
    let Some(o) = o else { return Ok(options) };
    let size = |value: u64, name: &str| size_field(value, name, "is too large");
    if let Some(v) = size(o.target_rows_per_fragment, "options->target_rows_per_fragment")? {
        options.target_rows_per_fragment = v;
    }
    if let Some(v) = size(o.max_rows_per_group, "options->max_rows_per_group")? {
        options.max_rows_per_group = v;
    }
    options.max_bytes_per_file =
        size(o.max_bytes_per_file, "options->max_bytes_per_file")?.or(options.max_bytes_per_file);
    options.num_threads = size(o.num_threads, "options->num_threads")?.or(options.num_threads);
    options.batch_size = size(o.batch_size, "options->batch_size")?.or(options.batch_size);
    Ok(options)
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_compact_files(
    dataset: *mut LanceDataset,
    options: *const LanceCompactionOptions,
    out_metrics: *mut LanceCompactionMetrics,
) -> i32 {
    status(|| {
        let handle = dataset_ref(dataset)?;
        let options = compaction_options(options.as_ref())?;
        let m = handle
            .mutate(|ds| block_on(compact_files(ds, options, None))?.context("compacting the dataset's files"))?;
        if !out_metrics.is_null() {
            write_out(
                out_metrics,
                LanceCompactionMetrics {
                    fragments_removed: m.fragments_removed as u64,
                    fragments_added: m.fragments_added as u64,
                    files_removed: m.files_removed as u64,
                    files_added: m.files_added as u64,
                },
            );
        }
        Ok(())
    })
}

/// The cutoff of a cleanup: `older_than_seconds` before now, or the Unix
/// epoch when that is earlier (lance.h), since nothing a dataset holds is
/// older.  Checked: chrono's dates end about 8.4e12 s before the epoch, and
/// the core's `now - age` panics beyond them.
fn cutoff(older_than_seconds: u64) -> DateTime<Utc> {
    i64::try_from(older_than_seconds)
        .ok()
        .and_then(TimeDelta::try_seconds)
        .and_then(|age| Utc::now().checked_sub_signed(age))
        .map_or(EPOCH, |t| t.max(EPOCH))
}

const EPOCH: DateTime<Utc> = DateTime::<Utc>::UNIX_EPOCH;

/// The age of `cutoff`, for the checks that take an age: the seconds given,
/// unless the cutoff was taken as the epoch.
fn cutoff_age(older_than_seconds: u64, cutoff: DateTime<Utc>) -> Duration {
    let requested = Duration::from_secs(older_than_seconds);
    if cutoff > EPOCH {
        return requested;
    }
    (Utc::now() - cutoff).to_std().map_or(requested, |since_epoch| since_epoch.min(requested))
}

/// Mirrors `LanceCleanupStats` in lance.h.
#[repr(C)]
pub struct LanceCleanupStats {
    pub bytes_removed: u64,
    pub old_versions: u64,
    pub data_files_removed: u64,
    pub transaction_files_removed: u64,
    pub index_files_removed: u64,
    pub deletion_files_removed: u64,
}
crate::c_layout!(LanceCleanupStats, 48;
    bytes_removed @ 0,
    old_versions @ 8,
    data_files_removed @ 16,
    transaction_files_removed @ 24,
    index_files_removed @ 32,
    deletion_files_removed @ 40,
);

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_cleanup_old_versions(
    dataset: *mut LanceDataset,
    older_than_seconds: u64,
    delete_unverified: bool,
    out_stats: *mut LanceCleanupStats,
) -> i32 {
    status(|| {
        let handle = dataset_ref(dataset)?;
        let cutoff = cutoff(older_than_seconds);
        let ds = handle.snapshot();
        // Dataset::cleanup_old_versions's policy, given the cutoff itself.
        let policy = CleanupPolicyBuilder::default().before_timestamp(cutoff).delete_unverified(delete_unverified);
        let s = block_on(ds.cleanup_with_policy(policy.build()))?.context("cleaning up old versions")?;
        // The core counts the deletes that failed (a read-only store, no
        // permission) and goes on; the caller must hear of them.
        if s.failed_deletes > 0 {
            return Err(CError::new(
                Code::Io,
                format!(
                    "cleaning up old versions: {} of the files to remove could not be deleted (read-only storage, or \
                     no permission?); {} old versions and {} bytes were removed; the next cleanup finds the rest again",
                    s.failed_deletes, s.old_versions, s.bytes_removed
                ),
            ));
        }
        // The core's cleanup cannot see what a build killed mid-write leaves.
        let (unfinished_files, unfinished_bytes) = if delete_unverified {
            reclaim_unfinished_segments(&ds, cutoff_age(older_than_seconds, cutoff))?
        } else {
            (0, 0)
        };
        if !out_stats.is_null() {
            write_out(
                out_stats,
                LanceCleanupStats {
                    bytes_removed: s.bytes_removed + unfinished_bytes,
                    old_versions: s.old_versions,
                    data_files_removed: s.data_files_removed,
                    transaction_files_removed: s.transaction_files_removed,
                    index_files_removed: s.index_files_removed + unfinished_files,
                    deletion_files_removed: s.deletion_files_removed,
                },
            );
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_abort_incomplete_uploads(
    dataset: *const LanceDataset,
    older_than_seconds: u64,
    out_aborted: *mut u64,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        let age = cutoff_age(older_than_seconds, cutoff(older_than_seconds));
        let aborted = abort_incomplete_uploads(&ds, age)?;
        if !out_aborted.is_null() {
            write_out(out_aborted, aborted);
        }
        Ok(())
    })
}
