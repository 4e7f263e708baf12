//! Everything that crosses the C boundary by pointer, converted once: C
//! strings and string lists, storage options, caller arrays (checked for
//! size and alignment), out parameters, handles, and the strings and byte
//! buffers handed to the caller.

use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};

use uuid::Uuid;

use crate::boundary::error::{invalid, CResult};

/// A required C string argument.
pub unsafe fn required_str<'a>(ptr: *const c_char, name: &str) -> CResult<&'a str> {
    if ptr.is_null() {
        return Err(invalid(format!("{name} must not be NULL")));
    }
    CStr::from_ptr(ptr).to_str().map_err(|_| invalid(format!("{name} is not valid UTF-8")))
}

/// A required, non-empty C string argument.
pub unsafe fn required_nonempty_str<'a>(ptr: *const c_char, name: &str) -> CResult<&'a str> {
    let s = required_str(ptr, name)?;
    if s.is_empty() {
        return Err(invalid(format!("{name} must not be empty")));
    }
    Ok(s)
}

/// An optional C string argument: NULL is `None`.
pub unsafe fn optional_str<'a>(ptr: *const c_char, name: &str) -> CResult<Option<&'a str>> {
    if ptr.is_null() {
        Ok(None)
    } else {
        required_str(ptr, name).map(Some)
    }
}

/// A NULL-terminated array of C strings; a NULL array is `None`.
pub unsafe fn null_terminated_strs(list: *const *const c_char, name: &str) -> CResult<Option<Vec<String>>> {
    if list.is_null() {
        return Ok(None);
    }
    let mut out = Vec::new();
    let mut i = 0usize;
    loop {
        let item = *list.add(i);
        if item.is_null() {
            break;
        }
        out.push(required_str(item, &format!("{name}[{i}]"))?.to_string());
        i += 1;
    }
    Ok(Some(out))
}

/// A `(pointer, count)` array of C strings, each required and non-empty.
pub unsafe fn counted_strs<'a>(list: *const *const c_char, count: usize, name: &str) -> CResult<Vec<&'a str>> {
    slice_arg(list, count, name)?
        .iter()
        .enumerate()
        .map(|(i, &item)| required_nonempty_str(item, &format!("{name}[{i}]")))
        .collect()
}

/// Storage options: a NULL-terminated array of alternating keys and values.
pub unsafe fn storage_options(list: *const *const c_char) -> CResult<HashMap<String, String>> {
    let items = null_terminated_strs(list, "storage_opts")?.unwrap_or_default();
    if items.len() % 2 != 0 {
        return Err(invalid(format!(
            "storage_opts has {} entries before its NULL terminator; keys and values must come in pairs",
            items.len()
        )));
    }
    Ok(items.chunks_exact(2).map(|kv| (kv[0].clone(), kv[1].clone())).collect())
}

/// The byte size of `count` values of `T`, refused when no buffer can be
/// that large (typically a negative number passed as a `size_t`).
fn span_bytes<T>(count: usize, name: &str) -> CResult<usize> {
    count
        .checked_mul(std::mem::size_of::<T>())
        .filter(|bytes| *bytes <= isize::MAX as usize)
        .ok_or_else(|| invalid(format!("{name}: count {count} is larger than any buffer can be (a negative count?)")))
}

/// A `(pointer, count)` array argument; NULL is allowed only with count 0.
/// The pointer must be aligned for `T`, as C guarantees for a typed pointer.
pub unsafe fn slice_arg<'a, T>(ptr: *const T, count: usize, name: &str) -> CResult<&'a [T]> {
    if count == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(invalid(format!("{name} is NULL but its count is {count}")));
    }
    span_bytes::<T>(count, name)?;
    if !ptr.is_aligned() {
        return Err(invalid(format!(
            "{name} is not aligned to {} bytes, as its element type requires",
            std::mem::align_of::<T>()
        )));
    }
    Ok(std::slice::from_raw_parts(ptr, count))
}

/// A caller's output byte buffer of `len` bytes; NULL is allowed only with
/// length 0.
pub unsafe fn bytes_out<'a>(ptr: *mut u8, len: usize, name: &str) -> CResult<&'a mut [u8]> {
    if len == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(invalid(format!("{name} is NULL but its length is {len}")));
    }
    span_bytes::<u8>(len, name)?;
    Ok(std::slice::from_raw_parts_mut(ptr, len))
}

/// Copies `count` values of `T` from an untyped caller buffer, which need
/// not be aligned for `T`.
pub unsafe fn copy_untyped<T: Copy>(ptr: *const std::ffi::c_void, count: usize, name: &str) -> CResult<Vec<T>> {
    if ptr.is_null() {
        return Err(invalid(format!("{name} must not be NULL")));
    }
    let bytes = span_bytes::<T>(count, name)?;
    let mut out = Vec::<T>::with_capacity(count);
    std::ptr::copy_nonoverlapping(ptr as *const u8, out.as_mut_ptr() as *mut u8, bytes);
    out.set_len(count);
    Ok(out)
}

/// Writes `value` through an out pointer that must not be NULL.
pub unsafe fn write_out<T>(out: *mut T, value: T) {
    std::ptr::write(out, value);
}

pub fn require_out<T>(out: *mut T, name: &str) -> CResult<()> {
    if out.is_null() {
        Err(invalid(format!("{name} must not be NULL")))
    } else {
        Ok(())
    }
}

pub fn require_handle<T>(handle: *const T, name: &str) -> CResult<()> {
    if handle.is_null() {
        Err(invalid(format!("{name} must not be NULL")))
    } else {
        Ok(())
    }
}

/// Borrows a handle argument.
pub unsafe fn handle_ref<'a, T>(handle: *const T, name: &str) -> CResult<&'a T> {
    require_handle(handle, name)?;
    Ok(&*handle)
}

/// Borrows a handle argument mutably (the caller's thread owns it for the call).
pub unsafe fn handle_mut<'a, T>(handle: *mut T, name: &str) -> CResult<&'a mut T> {
    require_handle(handle, name)?;
    Ok(&mut *handle)
}

/// A produced handle: the caller frees it with the type's free function.
pub fn into_handle<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// The body of every `_free`/`_close` function: NULL is a no-op.
pub unsafe fn free_handle<T>(handle: *mut T) {
    if !handle.is_null() {
        drop(Box::from_raw(handle));
    }
}

/// Text as a C string: interior NULs cannot cross, so they become spaces.
pub fn c_text(s: &str) -> CString {
    CString::new(s.replace('\0', " ")).expect("NULs were replaced")
}

/// Copies `count` items into a caller buffer of `capacity` slots (a NULL
/// buffer with capacity 0 only asks for the count).  The items come from an
/// iterator, so a large set (a fragment bitmap's run) is never materialized.
pub unsafe fn copy_to_caller<T>(
    count: usize,
    items: impl IntoIterator<Item = T>,
    out: *mut T,
    capacity: usize,
    out_count: *mut usize,
    what: &str,
) -> CResult<()> {
    require_out(out_count, "out_count")?;
    write_out(out_count, count);
    if out.is_null() && capacity == 0 {
        return Ok(());
    }
    require_out(out, what)?;
    if !out.is_aligned() {
        return Err(invalid(format!("{what} is not aligned to {} bytes", std::mem::align_of::<T>())));
    }
    if capacity < count {
        return Err(invalid(format!("capacity = {capacity} is less than the {count} entries to write")));
    }
    for (i, item) in items.into_iter().take(count).enumerate() {
        out.add(i).write(item);
    }
    Ok(())
}

/// A string the caller frees with `lance_free_string`.
pub fn into_c_string(s: String) -> *mut c_char {
    c_text(&s).into_raw()
}

const BYTES_HEADER: usize = std::mem::size_of::<u64>();

/// A byte buffer the caller frees with `lance_free_bytes`. The length is
/// recorded in a hidden header so the free needs only the pointer.
pub fn into_c_bytes(bytes: Vec<u8>) -> *mut u8 {
    let mut boxed = Vec::with_capacity(BYTES_HEADER + bytes.len());
    boxed.extend_from_slice(&(bytes.len() as u64).to_ne_bytes());
    boxed.extend_from_slice(&bytes);
    let base = Box::into_raw(boxed.into_boxed_slice()) as *mut u8;
    unsafe { base.add(BYTES_HEADER) }
}

/// Hands `bytes` to the caller through checked out parameters (`bytes`,
/// freed with `lance_free_bytes`, and its length).
pub unsafe fn write_bytes_out(out_bytes: *mut *mut u8, out_len: *mut usize, bytes: Vec<u8>) {
    write_out(out_len, bytes.len());
    write_out(out_bytes, into_c_bytes(bytes));
}

pub unsafe fn free_c_bytes(ptr: *mut u8) {
    const HEADER: usize = BYTES_HEADER;
    if ptr.is_null() {
        return;
    }
    let base = ptr.sub(HEADER);
    let mut len_bytes = [0u8; HEADER];
    std::ptr::copy_nonoverlapping(base, len_bytes.as_mut_ptr(), HEADER);
    let len = u64::from_ne_bytes(len_bytes) as usize;
    let slice = std::ptr::slice_from_raw_parts_mut(base, HEADER + len);
    drop(Box::from_raw(slice));
}

/// Segment UUIDs cross the interface as 16 raw bytes each, packed.
pub unsafe fn uuids_from_packed(ptr: *const u8, count: usize, name: &str) -> CResult<Vec<Uuid>> {
    let bytes = slice_arg(
        ptr,
        count.checked_mul(16).ok_or_else(|| invalid(format!("{name}: count {count} overflows")))?,
        name,
    )?;
    Ok(bytes.chunks_exact(16).map(|c| Uuid::from_bytes(c.try_into().expect("16-byte chunk"))).collect())
}

/// Fragment ids given as `uint64_t` must fit Lance's 32-bit fragment ids.
pub fn fragment_id_u32(value: u64, name: &str, i: usize) -> CResult<u32> {
    u32::try_from(value)
        .map_err(|_| invalid(format!("{name}[{i}] = {value} is not a valid fragment id (ids are 32-bit)")))
}

/// Checks at compile time that a `#[repr(C)]` mirror of a lance.h struct
/// has the header's size and field offsets (LP64 targets; the conformance
/// tests check the C side).
#[macro_export]
macro_rules! c_layout {
    ($t:ty, $size:expr; $($field:ident @ $offset:expr),* $(,)?) => {
        #[cfg(target_pointer_width = "64")]
        const _: () = {
            assert!(::std::mem::size_of::<$t>() == $size);
            $(assert!(::std::mem::offset_of!($t, $field) == $offset);)*
        };
    };
}
