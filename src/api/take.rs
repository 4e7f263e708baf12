//! lance.h section "Random access": rows by position or by row id, read
//! from the handle's snapshot and handed over as an Arrow stream.

use std::ffi::c_char;

use arrow::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::RecordBatch;
use lance::dataset::ProjectionRequest;
use lance::Dataset;

use crate::boundary::arrow::{export_stream, IterReader};
use crate::boundary::error::{invalid, status, CResult, Context};
use crate::boundary::ffi::{null_terminated_strs, require_out, slice_arg};
use crate::process::runtime::block_on;
use crate::store::handle::{dataset_ref, LanceDataset};

/// The projection for a NULL-terminated column list (NULL = every column).
/// The core's own projection checks the names, system columns included.
unsafe fn projection(ds: &Dataset, columns: *const *const c_char) -> CResult<ProjectionRequest> {
    match null_terminated_strs(columns, "columns")? {
        None => Ok(ProjectionRequest::from_schema(ds.schema().clone())),
        Some(names) if names.is_empty() => Err(invalid("columns is an empty list; pass NULL to read every column")),
        Some(names) => {
            let schema =
                ds.schema().project_preserve_system_columns(names.as_slice()).context(format!("columns {names:?}"))?;
            Ok(ProjectionRequest::from_schema(schema))
        }
    }
}

/// Hands the rows over as a one-batch stream the caller releases.
unsafe fn export_batch_stream(batch: RecordBatch, out: *mut FFI_ArrowArrayStream) {
    let schema = batch.schema();
    export_stream(Box::new(IterReader { schema, iter: std::iter::once(Ok(batch)) }), out);
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_take(
    dataset: *const LanceDataset,
    indices: *const u64,
    num_indices: usize,
    columns: *const *const c_char,
    out: *mut FFI_ArrowArrayStream,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        let indices = slice_arg(indices, num_indices, "indices")?;
        require_out(out, "out")?;
        let projection = projection(&ds, columns)?;
        let version = ds.version().version;
        // The core maps a position past the end to a missing row instead
        // of failing, which would hand back fewer rows than asked for.
        if !indices.is_empty() {
            let rows = block_on(ds.count_rows(None))?.context("counting rows")? as u64;
            if let Some((i, index)) = indices.iter().enumerate().find(|&(_, &index)| index >= rows) {
                return Err(invalid(format!(
                    "indices[{i}] = {index} is out of range: dataset version {version} has {rows} rows"
                )));
            }
        }
        let batch = block_on(ds.take(indices, projection))?
            .context(format!("taking {} rows by position from dataset version {version}", indices.len()))?;
        export_batch_stream(batch, out);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_take_rows(
    dataset: *const LanceDataset,
    row_ids: *const u64,
    num_row_ids: usize,
    columns: *const *const c_char,
    out: *mut FFI_ArrowArrayStream,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        let row_ids = slice_arg(row_ids, num_row_ids, "row_ids")?;
        require_out(out, "out")?;
        let projection = projection(&ds, columns)?;
        let version = ds.version().version;
        let batch = block_on(ds.take_rows(row_ids, projection))?
            .context(format!("taking {} rows by row id from dataset version {version}", row_ids.len()))?;
        export_batch_stream(batch, out);
        Ok(())
    })
}
