//! lance.h section "Build progress and cancellation" (RFC E3 + E4): cancel
//! tokens, a segment builder's progress callback and token, and one-shot
//! creation under a control.  The mechanism is floor/progress.rs.

use std::ffi::{c_char, c_void};

use crate::floor::build::{create_scalar_index, create_vector_index, LanceIndexSegmentBuilder};
use crate::floor::error::{guard, guard_anywhere, invalid, status};
use crate::floor::ffi::{free_handle, handle_mut, handle_ref, into_handle};
use crate::floor::handle::LanceDataset;
use crate::floor::params::LanceVectorIndexParams;
use crate::floor::progress::{BuildControl, LanceIndexBuildCancelToken, LanceIndexBuildControl, ProgressFn};

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

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_set_progress(
    builder: *mut LanceIndexSegmentBuilder,
    callback: Option<ProgressFn>,
    user_data: *mut c_void,
) -> i32 {
    status(|| {
        handle_mut(builder, "builder")?.unexecuted()?.control.set_progress(callback, user_data);
        Ok(())
    })
}

/// Upstream's form: a callback is required, STAGE_COMPLETE carries 0.
#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_set_progress_callback(
    builder: *mut LanceIndexSegmentBuilder,
    callback: Option<ProgressFn>,
    callback_ctx: *mut c_void,
) -> i32 {
    status(|| {
        let builder = handle_mut(builder, "builder")?.unexecuted()?;
        let callback = callback.ok_or_else(|| {
            invalid("callback must not be NULL (lance_index_segment_builder_set_progress(builder, NULL, NULL) removes one)")
        })?;
        builder.control.set_upstream_progress(callback, callback_ctx);
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

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_create_vector_index_with_control(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    params: *const LanceVectorIndexParams,
    replace: bool,
    control: *const LanceIndexBuildControl,
) -> i32 {
    status(|| create_vector_index(dataset, column, index_name, params, replace, &BuildControl::from_c(control)))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_create_scalar_index_with_control(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    index_type: i32,
    params_json: *const c_char,
    replace: bool,
    control: *const LanceIndexBuildControl,
) -> i32 {
    status(|| {
        let control = BuildControl::from_c(control);
        create_scalar_index(dataset, column, index_name, index_type, params_json, replace, &control)
    })
}
