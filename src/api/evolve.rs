//! lance.h section "Schema evolution": dropping, altering and adding
//! columns, each committed through a dataset handle.

use std::ffi::c_char;
use std::sync::Arc;

use arrow::ffi::FFI_ArrowSchema;
use arrow::ffi_stream::FFI_ArrowArrayStream;
use lance::dataset::{ColumnAlteration, NewColumnTransform};

use crate::boundary::arrow::{hold_stream, import_data_type, import_schema, status_consuming, take_stream};
use crate::boundary::error::{invalid, status, CResult, Context};
use crate::boundary::ffi::{counted_strs, optional_str, required_nonempty_str, slice_arg};
use crate::boundary::params::column_nullable;
use crate::process::runtime::block_on;
use crate::store::handle::{dataset_ref, LanceDataset};

/// Mirrors `LanceColumnAlteration` in lance.h.
#[repr(C)]
pub struct LanceColumnAlteration {
    pub path: *const c_char,
    pub rename: *const c_char,
    pub nullable_mode: i32,
    pub data_type: *const FFI_ArrowSchema,
}
crate::c_layout!(LanceColumnAlteration, 32; path @ 0, rename @ 8, nullable_mode @ 16, data_type @ 24);

/// Mirrors `LanceSqlColumn` in lance.h.
#[repr(C)]
pub struct LanceSqlColumn {
    pub name: *const c_char,
    pub expression: *const c_char,
}
crate::c_layout!(LanceSqlColumn, 16; name @ 0, expression @ 8);

/// A count argument that must not be zero.
fn nonzero_count(count: usize, name: &str, what: &str) -> CResult<()> {
    if count == 0 {
        Err(invalid(format!("{name} = 0: give at least one {what}")))
    } else {
        Ok(())
    }
}

/// `batch_size` as the core takes it: 0 is its default, the rest must fit 32 bits.
fn batch_size_arg(batch_size: u64) -> CResult<Option<u32>> {
    if batch_size == 0 {
        return Ok(None);
    }
    u32::try_from(batch_size)
        .map(Some)
        .map_err(|_| invalid(format!("batch_size = {batch_size} is larger than UINT32_MAX")))
}

/// Runs `Dataset::add_columns` through the handle.
fn add_columns(
    handle: &LanceDataset,
    transform: NewColumnTransform,
    batch_size: Option<u32>,
    what: &str,
) -> CResult<()> {
    handle.mutate(|ds| block_on(ds.add_columns(transform, None, batch_size))?.context(what))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_drop_columns(
    dataset: *mut LanceDataset,
    columns: *const *const c_char,
    num_columns: usize,
) -> i32 {
    status(|| {
        let handle = dataset_ref(dataset)?;
        nonzero_count(num_columns, "num_columns", "column to drop")?;
        let columns = counted_strs(columns, num_columns, "columns")?;
        handle.mutate(|ds| block_on(ds.drop_columns(&columns))?.context(format!("dropping columns {columns:?}")))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_alter_columns(
    dataset: *mut LanceDataset,
    alterations: *const LanceColumnAlteration,
    num_alterations: usize,
) -> i32 {
    status(|| {
        let handle = dataset_ref(dataset)?;
        nonzero_count(num_alterations, "num_alterations", "alteration")?;
        let entries = slice_arg(alterations, num_alterations, "alterations")?;
        let mut converted = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let path = required_nonempty_str(entry.path, &format!("alterations[{i}].path"))?;
            let rename = optional_str(entry.rename, &format!("alterations[{i}].rename"))?;
            if rename == Some("") {
                return Err(invalid(format!("alterations[{i}].rename must not be empty (NULL keeps the name)")));
            }
            let nullable = column_nullable(entry.nullable_mode, &format!("alterations[{i}].nullable_mode"))?;
            let data_type = if entry.data_type.is_null() {
                None
            } else {
                Some(import_data_type(entry.data_type, &format!("alterations[{i}].data_type"))?)
            };
            if rename.is_none() && nullable.is_none() && data_type.is_none() {
                return Err(invalid(format!(
                    "alterations[{i}] (path \"{path}\") asks for nothing: set rename, nullable_mode or data_type"
                )));
            }
            converted.push(ColumnAlteration {
                path: path.to_string(),
                rename: rename.map(str::to_string),
                nullable,
                data_type,
            });
        }
        handle.mutate(|ds| block_on(ds.alter_columns(&converted))?.context("altering columns"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_add_columns_sql(
    dataset: *mut LanceDataset,
    columns: *const LanceSqlColumn,
    num_columns: usize,
    batch_size: u64,
) -> i32 {
    status(|| {
        let handle = dataset_ref(dataset)?;
        nonzero_count(num_columns, "num_columns", "column")?;
        let entries = slice_arg(columns, num_columns, "columns")?;
        let batch_size = batch_size_arg(batch_size)?;
        let mut expressions = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let name = required_nonempty_str(entry.name, &format!("columns[{i}].name"))?;
            let expression = required_nonempty_str(entry.expression, &format!("columns[{i}].expression"))?;
            expressions.push((name.to_string(), expression.to_string()));
        }
        let what = format!("adding columns {expressions:?}");
        add_columns(handle, NewColumnTransform::SqlExpressions(expressions), batch_size, &what)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_add_columns_nulls(
    dataset: *mut LanceDataset,
    schema: *const FFI_ArrowSchema,
) -> i32 {
    status(|| {
        let handle = dataset_ref(dataset)?;
        let schema = import_schema(schema, "schema")?;
        if schema.fields().is_empty() {
            return Err(invalid("schema has no fields: give at least one column to add"));
        }
        add_columns(handle, NewColumnTransform::AllNulls(Arc::new(schema)), None, "adding all-null columns")
    })
}

unsafe fn add_columns_stream_impl(
    dataset: *mut LanceDataset,
    stream: *mut FFI_ArrowArrayStream,
    batch_size: u64,
) -> CResult<()> {
    // The stream is consumed whatever happens, so take it before anything can fail.
    let reader = take_stream(stream, "stream");
    let handle = dataset_ref(dataset)?;
    let batch_size = batch_size_arg(batch_size)?;
    let (_held, reader) = hold_stream(reader?);
    add_columns(handle, NewColumnTransform::Reader(reader), batch_size, "adding columns from stream")
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_add_columns_stream(
    dataset: *mut LanceDataset,
    stream: *mut FFI_ArrowArrayStream,
    batch_size: u64,
) -> i32 {
    status_consuming(stream, || add_columns_stream_impl(dataset, stream, batch_size))
}
