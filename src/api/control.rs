//! lance.h section "Build progress and cancellation" (RFC E3 + E4): cancel
//! tokens, and a segment builder's progress callback and token (one-shot
//! creation under a control is in index.rs).  The mechanism is
//! index/progress.rs.

use std::ffi::c_void;

use crate::boundary::error::{guard, guard_anywhere, invalid, status};
use crate::boundary::ffi::{free_handle, handle_mut, handle_ref, into_handle};
use crate::index::build::LanceIndexSegmentBuilder;
use crate::index::progress::{LanceIndexBuildCancelToken, ProgressFn};

#[no_mangle]
pub extern "C" fn lance_index_build_cancel_token_new() -> *mut LanceIndexBuildCancelToken {
    guard(std::ptr::null_mut(), || Ok(into_handle(LanceIndexBuildCancelToken::new())))
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_build_cancel_token_free(token: *mut LanceIndexBuildCancelToken) {
    free_handle(token);
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_build_cancel(token: *const LanceIndexBuildCancelToken) -> i32 {
    guard_anywhere(-1, || {
        handle_ref(token, "token")?.cancel();
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_build_cancel_requested(token: *const LanceIndexBuildCancelToken) -> bool {
    guard_anywhere(false, || Ok(handle_ref(token, "token")?.is_cancelled()))
}

/// A callback is required: a builder's progress is set, never cleared.
#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_set_progress_callback(
    builder: *mut LanceIndexSegmentBuilder,
    callback: Option<ProgressFn>,
    callback_ctx: *mut c_void,
) -> i32 {
    status(|| {
        let builder = handle_mut(builder, "builder")?.unexecuted()?;
        let callback = callback.ok_or_else(|| invalid("callback must not be NULL"))?;
        builder.control.set_progress(Some(callback), callback_ctx);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_set_cancel_token(
    builder: *mut LanceIndexSegmentBuilder,
    token: *const LanceIndexBuildCancelToken,
) -> i32 {
    status(|| {
        handle_mut(builder, "builder")?.unexecuted()?.control.set_cancel(token.as_ref());
        Ok(())
    })
}
