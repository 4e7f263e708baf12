//! The Arrow C Data Interface at the boundary: checking what the caller
//! hands in, importing it, and exporting results the caller then owns.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::{Array, RecordBatch, RecordBatchReader, StructArray};
use arrow_schema::{ArrowError, Schema, SchemaRef};

use crate::error::{invalid, CResult, Context};

/// The C layout of `struct ArrowSchema`, to look at a caller's struct before
/// handing it to arrow (which assumes a live, well-formed one).
#[repr(C)]
struct RawSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut RawSchema,
    dictionary: *mut RawSchema,
    release: Option<unsafe extern "C" fn(*mut RawSchema)>,
    private_data: *mut c_void,
}

/// The C layout of `struct ArrowArray`.
#[repr(C)]
struct RawArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut RawArray,
    dictionary: *mut RawArray,
    release: Option<unsafe extern "C" fn(*mut RawArray)>,
    private_data: *mut c_void,
}

/// The C layout of `struct ArrowArrayStream`.
#[repr(C)]
struct RawStream {
    get_schema: Option<unsafe extern "C" fn(*mut RawStream, *mut RawSchema) -> i32>,
    get_next: Option<unsafe extern "C" fn(*mut RawStream, *mut RawArray) -> i32>,
    get_last_error: Option<unsafe extern "C" fn(*mut RawStream) -> *const c_char>,
    release: Option<unsafe extern "C" fn(*mut RawStream)>,
    private_data: *mut c_void,
}

/// Imports a borrowed `ArrowSchema` (the caller keeps and releases it).
pub unsafe fn import_schema(ptr: *const FFI_ArrowSchema, name: &str) -> CResult<Schema> {
    if ptr.is_null() {
        return Err(invalid(format!("{name} must not be NULL")));
    }
    let raw = &*(ptr as *const RawSchema);
    if raw.release.is_none() || raw.format.is_null() {
        return Err(invalid(format!("{name} is released or empty")));
    }
    Schema::try_from(&*ptr).context(name)
}

/// Takes ownership of a caller's `ArrowArrayStream` (it is released by the
/// library from here on, whatever happens next).
pub unsafe fn take_stream(ptr: *mut FFI_ArrowArrayStream, name: &str) -> CResult<ArrowArrayStreamReader> {
    if ptr.is_null() {
        return Err(invalid(format!("{name} must not be NULL")));
    }
    let raw = &*(ptr as *const RawStream);
    if raw.release.is_none() {
        return Err(invalid(format!("{name} is already released")));
    }
    ArrowArrayStreamReader::from_raw(ptr).context(name)
}

/// Releases a caller's stream that an early error keeps us from consuming.
pub unsafe fn release_stream(ptr: *mut FFI_ArrowArrayStream) {
    if ptr.is_null() {
        return;
    }
    let raw = &mut *(ptr as *mut RawStream);
    if let Some(release) = raw.release {
        release(raw);
    }
}

/// Exports a record batch as a struct array; the caller releases both.
pub unsafe fn export_batch(
    batch: &RecordBatch,
    out_array: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
) -> CResult<()> {
    let data = StructArray::from(batch.clone()).into_data();
    let (array, schema) = arrow::ffi::to_ffi(&data).context("exporting batch")?;
    std::ptr::write(out_array, array);
    std::ptr::write(out_schema, schema);
    Ok(())
}

pub unsafe fn export_schema(schema: &Schema, out: *mut FFI_ArrowSchema) -> CResult<()> {
    let ffi = FFI_ArrowSchema::try_from(schema).context("exporting schema")?;
    std::ptr::write(out, ffi);
    Ok(())
}

/// Exports any batch reader as an `ArrowArrayStream` the caller releases.
pub unsafe fn export_stream(
    reader: Box<dyn RecordBatchReader + Send>,
    out: *mut FFI_ArrowArrayStream,
) {
    std::ptr::write(out, FFI_ArrowArrayStream::new(reader));
}

/// A batch reader over an iterator of results, for exporting streams.
pub struct IterReader<I> {
    pub schema: SchemaRef,
    pub iter: I,
}

impl<I: Iterator<Item = Result<RecordBatch, ArrowError>>> Iterator for IterReader<I> {
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.iter.next()
    }
}

impl<I: Iterator<Item = Result<RecordBatch, ArrowError>>> RecordBatchReader for IterReader<I> {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
}
