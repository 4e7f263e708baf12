//! lance.h sections "Version" and "Errors and memory".

use std::ffi::c_char;

use crate::boundary::error::{last_error_code, take_last_error_message};
use crate::boundary::ffi::{free_c_bytes, into_c_string};

/// NUL-terminated at compile time, so it can be returned without allocating.
static VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

#[no_mangle]
pub extern "C" fn lance_version() -> *const c_char {
    VERSION.as_ptr() as *const c_char
}

#[no_mangle]
pub extern "C" fn lance_last_error_code() -> i32 {
    last_error_code() as i32
}

#[no_mangle]
pub extern "C" fn lance_last_error_message() -> *const c_char {
    match take_last_error_message() {
        Some(message) => into_c_string(message),
        None => std::ptr::null(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn lance_free_string(s: *const c_char) {
    if !s.is_null() {
        drop(std::ffi::CString::from_raw(s as *mut c_char));
    }
}

#[no_mangle]
pub unsafe extern "C" fn lance_free_bytes(bytes: *mut u8) {
    free_c_bytes(bytes);
}
