//! lance.h section "Write": datasets written from Arrow streams.

use std::collections::HashMap;
use std::ffi::c_char;
use std::str::FromStr;
use std::sync::Arc;

use arrow::ffi::FFI_ArrowSchema;
use arrow::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::RecordBatchReader;
use lance::dataset::{InsertBuilder, WriteMode, WriteParams};
use lance::Dataset;
use lance_file::version::LanceFileVersion;
use lance_io::object_store::{ObjectStoreParams, StorageOptionsAccessor};

use crate::boundary::arrow::{hold_stream, import_schema, status_consuming, take_stream};
use crate::boundary::error::{invalid, CResult, Context};
use crate::boundary::ffi::{into_handle, optional_str, required_nonempty_str, storage_options};
use crate::boundary::params::{size_field, write_mode};
use crate::process::runtime::block_on;
use crate::store::handle::LanceDataset;

/// Mirrors `LanceWriteParams` in lance.h.
#[repr(C)]
pub struct LanceWriteParams {
    pub max_rows_per_file: u64,
    pub max_rows_per_group: u64,
    pub max_bytes_per_file: u64,
    pub data_storage_version: *const c_char,
    pub enable_stable_row_ids: bool,
}
crate::c_layout!(LanceWriteParams, 40;
    max_rows_per_file @ 0,
    max_rows_per_group @ 8,
    max_bytes_per_file @ 16,
    data_storage_version @ 24,
    enable_stable_row_ids @ 32,
);

unsafe fn write_params(
    params: *const LanceWriteParams,
    mode: WriteMode,
    options: HashMap<String, String>,
) -> CResult<WriteParams> {
    let mut out = WriteParams { mode, ..Default::default() };
    if !options.is_empty() {
        out.store_params = Some(ObjectStoreParams {
            storage_options_accessor: Some(Arc::new(StorageOptionsAccessor::with_static_options(options))),
            ..Default::default()
        });
    }
    if params.is_null() {
        return Ok(out);
    }
    let p = &*params;
    let size = |value: u64, name: &str| size_field(value, name, "does not fit this platform's size_t");
    if let Some(v) = size(p.max_rows_per_file, "params->max_rows_per_file")? {
        out.max_rows_per_file = v;
    }
    if let Some(v) = size(p.max_rows_per_group, "params->max_rows_per_group")? {
        out.max_rows_per_group = v;
    }
    if let Some(v) = size(p.max_bytes_per_file, "params->max_bytes_per_file")? {
        out.max_bytes_per_file = v;
    }
    if let Some(version) = optional_str(p.data_storage_version, "params->data_storage_version")? {
        let parsed = LanceFileVersion::from_str(version).map_err(|_| {
            invalid(format!(
                "params->data_storage_version = \"{version}\" is not a Lance file version \
                 (e.g. \"2.0\", \"2.1\", \"stable\", \"legacy\")"
            ))
        })?;
        out.data_storage_version = Some(parsed);
    }
    out.enable_stable_row_ids = p.enable_stable_row_ids;
    Ok(out)
}

/// The stream's schema must be the one the caller declared (names, types and
/// nullability; metadata is not compared).
fn check_same_schema(declared: &arrow_schema::Schema, actual: &arrow_schema::Schema) -> CResult<()> {
    let same =
        declared.fields().len() == actual.fields().len()
            && declared.fields().iter().zip(actual.fields().iter()).all(|(a, b)| {
                a.name() == b.name() && a.data_type() == b.data_type() && a.is_nullable() == b.is_nullable()
            });
    if same {
        Ok(())
    } else {
        Err(invalid(format!("the stream's schema {actual:?} does not match the schema argument {declared:?}")))
    }
}

/// The target and the stream of a write: the stream is taken before
/// anything can fail (it is consumed whatever happens), then checked against
/// the schema the caller declared.
unsafe fn checked_source<'a>(
    uri: *const c_char,
    schema: *const FFI_ArrowSchema,
    stream: *mut FFI_ArrowArrayStream,
) -> CResult<(&'a str, ArrowArrayStreamReader)> {
    let reader = take_stream(stream, "stream");
    let uri = required_nonempty_str(uri, "uri")?;
    let declared = import_schema(schema, "schema")?;
    let reader = reader?;
    check_same_schema(&declared, &reader.schema())?;
    Ok((uri, reader))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_write(
    uri: *const c_char,
    schema: *const FFI_ArrowSchema,
    stream: *mut FFI_ArrowArrayStream,
    mode: i32,
    storage_opts: *const *const c_char,
    out_dataset: *mut *mut LanceDataset,
) -> i32 {
    lance_dataset_write_with_params(uri, schema, stream, mode, std::ptr::null(), storage_opts, out_dataset)
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_write_with_params(
    uri: *const c_char,
    schema: *const FFI_ArrowSchema,
    stream: *mut FFI_ArrowArrayStream,
    mode: i32,
    params: *const LanceWriteParams,
    storage_opts: *const *const c_char,
    out_dataset: *mut *mut LanceDataset,
) -> i32 {
    status_consuming(stream, || {
        let (uri, reader) = checked_source(uri, schema, stream)?;
        let mode = write_mode(mode)?;
        let options = storage_options(storage_opts)?;
        let params = write_params(params, mode, options)?;
        let (_held, reader) = hold_stream(reader);
        let dataset =
            block_on(Dataset::write(reader, uri, Some(params)))?.context(format!("writing dataset '{uri}'"))?;
        if !out_dataset.is_null() {
            *out_dataset = into_handle(LanceDataset::new(dataset));
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_write_fragments(
    uri: *const c_char,
    schema: *const FFI_ArrowSchema,
    stream: *mut FFI_ArrowArrayStream,
    storage_opts: *const *const c_char,
) -> i32 {
    status_consuming(stream, || {
        let (uri, reader) = checked_source(uri, schema, stream)?;
        let options = storage_options(storage_opts)?;
        // Append: over an existing dataset the files take its field ids and
        // format version (and its schema must admit the stream's); elsewhere the
        // core writes them as for a new dataset.  The transaction that would
        // commit them is dropped: nothing is committed.
        let params = write_params(std::ptr::null(), WriteMode::Append, options)?;
        let (_held, reader) = hold_stream(reader);
        block_on(InsertBuilder::new(uri).with_params(&params).execute_uncommitted_stream(reader))?
            .context(format!("writing fragments under '{uri}'"))?;
        Ok(())
    })
}
