//! The Arrow C Data Interface at the boundary: checking what the caller
//! hands in, importing it, and exporting results the caller then owns.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::{Array, RecordBatch, RecordBatchReader, StructArray};
use arrow_schema::{ArrowError, DataType, Schema, SchemaRef};

use crate::boundary::error::{invalid, status, CResult, Context};
use crate::boundary::ffi::copy_untyped;

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
crate::c_layout!(RawSchema, 72;
    format @ 0,
    name @ 8,
    metadata @ 16,
    flags @ 24,
    n_children @ 32,
    children @ 40,
    dictionary @ 48,
    release @ 56,
    private_data @ 64,
);

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
crate::c_layout!(RawArray, 80;
    length @ 0,
    null_count @ 8,
    offset @ 16,
    n_buffers @ 24,
    n_children @ 32,
    buffers @ 40,
    children @ 48,
    dictionary @ 56,
    release @ 64,
    private_data @ 72,
);

/// The C layout of `struct ArrowArrayStream`.
#[repr(C)]
struct RawStream {
    get_schema: Option<unsafe extern "C" fn(*mut RawStream, *mut RawSchema) -> i32>,
    get_next: Option<unsafe extern "C" fn(*mut RawStream, *mut RawArray) -> i32>,
    get_last_error: Option<unsafe extern "C" fn(*mut RawStream) -> *const c_char>,
    release: Option<unsafe extern "C" fn(*mut RawStream)>,
    private_data: *mut c_void,
}
crate::c_layout!(RawStream, 40; get_schema @ 0, get_next @ 8, get_last_error @ 16, release @ 24, private_data @ 32);

/// A borrowed `ArrowSchema` that is live (not NULL, not released).
unsafe fn live_schema<'a>(ptr: *const FFI_ArrowSchema, name: &str) -> CResult<&'a FFI_ArrowSchema> {
    if ptr.is_null() {
        return Err(invalid(format!("{name} must not be NULL")));
    }
    let raw = &*(ptr as *const RawSchema);
    if raw.release.is_none() || raw.format.is_null() {
        return Err(invalid(format!("{name} is released or empty")));
    }
    Ok(&*ptr)
}

/// Imports a borrowed `ArrowSchema` (the caller keeps and releases it).
pub unsafe fn import_schema(ptr: *const FFI_ArrowSchema, name: &str) -> CResult<Schema> {
    Schema::try_from(live_schema(ptr, name)?).context(name)
}

/// Imports a borrowed `ArrowSchema` that describes one data type (the
/// caller keeps and releases it).
pub unsafe fn import_data_type(ptr: *const FFI_ArrowSchema, name: &str) -> CResult<DataType> {
    DataType::try_from(live_schema(ptr, name)?).context(name)
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
    // Arrow would call these unchecked; the caller's release_stream() still
    // releases a stream refused here.
    if raw.get_schema.is_none() || raw.get_next.is_none() {
        return Err(invalid(format!("{name} has no get_schema or no get_next callback")));
    }
    ArrowArrayStreamReader::from_raw(ptr).context(name)
}

/// The slot a caller's stream sits in while the core reads it.
type StreamSlot = Arc<Mutex<Option<ArrowArrayStreamReader>>>;

/// Keeps a caller's stream releasable by the call that consumed it.  The
/// core may hand a reader to a task that outlives its error; the stream's
/// callbacks must not run after the call returns, so dropping this guard
/// (at the end of the call, on every path) releases the stream on the
/// calling thread, and the reader the core holds yields only an error.
pub struct HeldStream {
    slot: StreamSlot,
}

impl Drop for HeldStream {
    fn drop(&mut self) {
        let stream = self.slot.lock().unwrap_or_else(|e| e.into_inner()).take();
        drop(stream);
    }
}

struct HeldReader {
    slot: StreamSlot,
    schema: SchemaRef,
}

impl Iterator for HeldReader {
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        match self.slot.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            Some(reader) => reader.next(),
            None => Some(Err(ArrowError::InvalidArgumentError(
                "the stream was released when its call returned".to_string(),
            ))),
        }
    }
}

impl RecordBatchReader for HeldReader {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
}

/// Splits a taken stream into the guard the call keeps and the reader the
/// core consumes.
pub fn hold_stream(reader: ArrowArrayStreamReader) -> (HeldStream, Box<dyn RecordBatchReader + Send>) {
    let schema = reader.schema();
    let slot: StreamSlot = Arc::new(Mutex::new(Some(reader)));
    (HeldStream { slot: Arc::clone(&slot) }, Box::new(HeldReader { slot, schema }))
}

/// The status of a call that consumes a caller's stream (write, merge-insert,
/// add columns): `body` takes the stream (take_stream) before anything can
/// fail, and on any error, a panic included (which may strike before the
/// stream was taken), the stream is released here.  A taken stream is
/// marked released, so it is never released twice and never leaked.
pub unsafe fn status_consuming(stream: *mut FFI_ArrowArrayStream, body: impl FnOnce() -> CResult<()>) -> i32 {
    let rc = status(body);
    if rc != 0 {
        release_stream(stream);
    }
    rc
}

/// Releases a caller's stream that an early error kept us from consuming.
unsafe fn release_stream(ptr: *mut FFI_ArrowArrayStream) {
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

pub unsafe fn export_array(
    array: &dyn Array,
    out_array: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
) -> CResult<()> {
    let (a, s) = arrow::ffi::to_ffi(&array.to_data()).context("exporting array")?;
    std::ptr::write(out_array, a);
    std::ptr::write(out_schema, s);
    Ok(())
}

/// Whether slot `i` of a validity bitmap is valid.
unsafe fn bit_is_set(bitmap: *const u8, i: i64) -> bool {
    (*bitmap.add((i / 8) as usize) >> (i % 8)) & 1 == 1
}

/// Counts nulls among `length` slots from `offset`, whatever `null_count` says.
unsafe fn has_nulls(array: &RawArray, offset: i64, length: i64) -> bool {
    if array.null_count == 0 || array.n_buffers < 1 || array.buffers.is_null() {
        return false;
    }
    let validity = *array.buffers as *const u8;
    if validity.is_null() {
        return false;
    }
    (offset..offset + length).any(|i| !bit_is_set(validity, i))
}

/// Reads a borrowed `FixedSizeList<float32>` array (the caller keeps and
/// releases it): the values, copied, and the list size.  Slices (non-zero
/// offsets) are honoured; nulls at either level are refused.
pub unsafe fn read_f32_list(
    array: *const FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
    name: &str,
) -> CResult<(Vec<f32>, usize)> {
    if array.is_null() || schema.is_null() {
        return Err(invalid(format!("{name} and its schema must not be NULL")));
    }
    let s = &*(schema as *const RawSchema);
    if s.release.is_none() || s.format.is_null() {
        return Err(invalid(format!("{name}'s schema is released or empty")));
    }
    let format = std::ffi::CStr::from_ptr(s.format).to_string_lossy();
    let dim: usize = format
        .strip_prefix("+w:")
        .and_then(|d| d.parse().ok())
        .filter(|d| *d > 0)
        .ok_or_else(|| invalid(format!("{name} must be a FixedSizeList<float32>, its format is \"{format}\"")))?;
    let child_format = if s.n_children == 1 && !s.children.is_null() && !(*s.children).is_null() {
        let c = &**s.children;
        if c.format.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(c.format).to_string_lossy().into_owned()
        }
    } else {
        String::new()
    };
    if child_format != "f" {
        return Err(invalid(format!(
            "{name} must be a FixedSizeList<float32>, its values have format \"{child_format}\""
        )));
    }
    let a = &*(array as *const RawArray);
    if a.release.is_none() {
        return Err(invalid(format!("{name} is released")));
    }
    if a.n_children != 1 || a.children.is_null() || (*a.children).is_null() || a.length < 0 || a.offset < 0 {
        return Err(invalid(format!("{name} is not a well-formed FixedSizeList array")));
    }
    if a.length == 0 {
        return Err(invalid(format!("{name} is empty")));
    }
    if has_nulls(a, a.offset, a.length) {
        return Err(invalid(format!("{name} contains null vectors")));
    }
    let child = &**a.children;
    let malformed = || invalid(format!("{name} is not a well-formed FixedSizeList array"));
    // Offsets and lengths come from the caller: every product and sum is checked.
    let dim_i64 = i64::try_from(dim).map_err(|_| malformed())?;
    let first = a.offset.checked_mul(dim_i64).and_then(|x| x.checked_add(child.offset)).ok_or_else(malformed)?;
    let count = a.length.checked_mul(dim_i64).ok_or_else(malformed)?;
    let end = a.offset.checked_add(a.length).and_then(|x| x.checked_mul(dim_i64)).ok_or_else(malformed)?;
    if child.offset < 0 || child.length < end || child.n_buffers < 2 || child.buffers.is_null() {
        return Err(malformed());
    }
    if has_nulls(child, first, count) {
        return Err(invalid(format!("{name} contains null values")));
    }
    let values = *child.buffers.add(1) as *const f32;
    if values.is_null() {
        return Err(invalid(format!("{name} has no value buffer")));
    }
    let first = usize::try_from(first).map_err(|_| malformed())?;
    let count = usize::try_from(count).map_err(|_| malformed())?;
    // Arrow buffers should be aligned, but nothing here relies on it.
    let out = copy_untyped::<f32>(values.wrapping_add(first) as *const c_void, count, name)?;
    if let Some(i) = out.iter().position(|v| !v.is_finite()) {
        return Err(invalid(format!("{name} value {i} is not finite ({})", out[i])));
    }
    Ok((out, dim))
}

pub unsafe fn export_schema(schema: &Schema, out: *mut FFI_ArrowSchema) -> CResult<()> {
    let ffi = FFI_ArrowSchema::try_from(schema).context("exporting schema")?;
    std::ptr::write(out, ffi);
    Ok(())
}

/// Exports any batch reader as an `ArrowArrayStream` the caller releases.
pub unsafe fn export_stream(reader: Box<dyn RecordBatchReader + Send>, out: *mut FFI_ArrowArrayStream) {
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
