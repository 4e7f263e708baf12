//! lance-c: a C API for the Lance columnar format.
//!
//! Every exported function lives in the module of its concern and runs
//! inside `error::guard`, so no panic or Rust error crosses into C.

mod arrow_ffi;
mod commit;
mod convert;
mod dataset;
mod error;
mod index;
mod listing;
mod metadata;
mod model;
mod plan;
mod progress;
mod runtime;
mod scanner;
mod segment;
mod write;

use std::ffi::c_char;

use crate::error::{last_error_code, last_error_message};

/// The release of the Lance core this library is pinned to.
pub const LANCE_CORE_VERSION: &str = "14.0.2";

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
    match last_error_message() {
        Some(message) => message.into_raw(),
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
    convert::free_c_bytes(bytes);
}
