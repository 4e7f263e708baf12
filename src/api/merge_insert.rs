//! lance.h section "Merge-insert": upserts and their relatives, committed
//! through a dataset handle.

use std::ffi::c_char;
use std::sync::Arc;

use arrow::ffi_stream::FFI_ArrowArrayStream;
use lance::dataset::MergeInsertBuilder;
use lance::Dataset;

use crate::boundary::arrow::{hold_stream, status_consuming, take_stream};
use crate::boundary::error::{invalid, Context};
use crate::boundary::ffi::{counted_strs, optional_str, write_out};
use crate::boundary::params::{
    merge_insert_not_matched, merge_when_matched, merge_when_not_matched_by_source, MERGE_WHEN_MATCHED_DO_NOTHING,
    MERGE_WHEN_NOT_MATCHED_BY_SOURCE_KEEP, MERGE_WHEN_NOT_MATCHED_INSERT_ALL,
};
use crate::process::runtime::block_on;
use crate::store::handle::{dataset_ref, LanceDataset};

/// Mirrors `LanceMergeInsertParams` in lance.h; the modes arrive as plain
/// integers and are validated.
#[repr(C)]
pub struct LanceMergeInsertParams {
    pub when_matched: i32,
    pub when_matched_expr: *const c_char,
    pub when_not_matched: i32,
    pub when_not_matched_by_source: i32,
    pub when_not_matched_by_source_expr: *const c_char,
}
crate::c_layout!(LanceMergeInsertParams, 32;
    when_matched @ 0,
    when_matched_expr @ 8,
    when_not_matched @ 16,
    when_not_matched_by_source @ 20,
    when_not_matched_by_source_expr @ 24,
);

/// Mirrors `LanceMergeInsertResult` in lance.h.
#[repr(C)]
pub struct LanceMergeInsertResult {
    pub num_inserted_rows: u64,
    pub num_updated_rows: u64,
    pub num_deleted_rows: u64,
}
crate::c_layout!(LanceMergeInsertResult, 24; num_inserted_rows @ 0, num_updated_rows @ 8, num_deleted_rows @ 16);

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_merge_insert(
    dataset: *mut LanceDataset,
    on_columns: *const *const c_char,
    num_on_columns: usize,
    source: *mut FFI_ArrowArrayStream,
    params: *const LanceMergeInsertParams,
    out_result: *mut LanceMergeInsertResult,
) -> i32 {
    status_consuming(source, || {
        // The source is consumed whatever happens, so take it before anything can fail.
        let reader = take_stream(source, "source");
        let handle = dataset_ref(dataset)?;
        if num_on_columns == 0 {
            return Err(invalid("num_on_columns = 0: name at least one key column in on_columns"));
        }
        let on: Vec<String> =
            counted_strs(on_columns, num_on_columns, "on_columns")?.into_iter().map(str::to_string).collect();
        // NULL acts as the all-zero struct.
        let (matched, matched_expr, not_matched, by_source, by_source_expr) = if params.is_null() {
            (
                MERGE_WHEN_MATCHED_DO_NOTHING,
                None,
                MERGE_WHEN_NOT_MATCHED_INSERT_ALL,
                MERGE_WHEN_NOT_MATCHED_BY_SOURCE_KEEP,
                None,
            )
        } else {
            let p = &*params;
            (
                p.when_matched,
                optional_str(p.when_matched_expr, "params->when_matched_expr")?,
                p.when_not_matched,
                p.when_not_matched_by_source,
                optional_str(p.when_not_matched_by_source_expr, "params->when_not_matched_by_source_expr")?,
            )
        };
        let not_matched = merge_insert_not_matched(not_matched)?;
        let (_held, reader) = hold_stream(reader?);
        let stats = handle.mutate(|ds| {
            let when_matched = merge_when_matched(matched, matched_expr, ds)?;
            let when_by_source = merge_when_not_matched_by_source(by_source, by_source_expr, ds)?;
            let mut builder = MergeInsertBuilder::try_new(Arc::new(ds.clone()), on).context("on_columns")?;
            builder.when_matched(when_matched).when_not_matched(not_matched).when_not_matched_by_source(when_by_source);
            let job = builder.try_build().context("params")?;
            let (merged, stats) = block_on(job.execute_reader(reader))?.context("merge-inserting the source rows")?;
            *ds = Dataset::clone(&merged);
            Ok(stats)
        })?;
        if !out_result.is_null() {
            write_out(
                out_result,
                LanceMergeInsertResult {
                    num_inserted_rows: stats.num_inserted_rows,
                    num_updated_rows: stats.num_updated_rows,
                    num_deleted_rows: stats.num_deleted_rows,
                },
            );
        }
        Ok(())
    })
}
