//! lance.h section "Async scan": a scan handed over through a callback, and
//! a scanner's batches polled without blocking (the hand-off itself is
//! process/poll.rs).

use std::ffi::c_void;
use std::panic::AssertUnwindSafe;

use arrow::ffi_stream::FFI_ArrowArrayStream;
use futures::{FutureExt, StreamExt};

use crate::boundary::error::{guard, invalid, set_last_error, CError, CResult, Code};
use crate::boundary::ffi::{handle_ref, into_handle, require_out, write_out};
use crate::process::poll::{CWaker, Polled, PolledStream, SendPtr, Step};
use crate::process::runtime::spawn;
use crate::scan::scanner::{export_scan_stream, scanner_mut, LanceBatch, LanceScanner};

/// `LanceCallback` in lance.h.
type CCallback = unsafe extern "C" fn(*mut c_void, i32, *mut c_void);

/// `LancePollStatus` in lance.h.
const POLL_READY: i32 = 0;
const POLL_PENDING: i32 = 1;
const POLL_FINISHED: i32 = 2;
const POLL_ERROR: i32 = -1;

/// Calls the scan_async callback once with the outcome; on an error the
/// calling thread's error state is set just before.
unsafe fn complete(callback: CCallback, ctx: SendPtr, outcome: CResult<*mut FFI_ArrowArrayStream>) {
    match outcome {
        Ok(stream) => callback(ctx.0, 0, stream.cast()),
        Err(err) => {
            set_last_error(&err);
            callback(ctx.0, -1, std::ptr::null_mut());
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_scan_async(
    scanner: *const LanceScanner,
    callback: Option<CCallback>,
    callback_ctx: *mut c_void,
) {
    let Some(callback) = callback else {
        set_last_error(&invalid("callback must not be NULL"));
        return;
    };
    let ctx = SendPtr(callback_ctx);
    // Settings are read now, so the scan does not depend on the scanner
    // staying open.
    let prepared = match std::panic::catch_unwind(AssertUnwindSafe(|| handle_ref(scanner, "scanner")?.prepare())) {
        Ok(result) => result,
        Err(_) => Err(CError::new(Code::Panic, "internal panic while preparing the scan")),
    };
    let job = async move {
        let opened = match prepared {
            Err(e) => Err(e),
            Ok(prepared) => match AssertUnwindSafe(prepared.open()).catch_unwind().await {
                Ok(Ok(stream)) => Ok(stream),
                Ok(Err(e)) => Err(CError::from(e)),
                Err(_) => Err(CError::new(Code::Panic, "internal panic while starting the scan")),
            },
        };
        // The callback is the caller's code: a blocking-pool thread runs it.
        let _ = tokio::task::spawn_blocking(move || {
            let outcome = opened.map(|stream| {
                let out = Box::into_raw(Box::new(FFI_ArrowArrayStream::empty()));
                export_scan_stream(stream, out);
                out
            });
            complete(callback, ctx, outcome);
        })
        .await;
    };
    if let Err(err) = spawn(job) {
        // Without a runtime there is no other thread to report on.
        complete(callback, ctx, Err(err));
    }
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_async_stream_free(stream: *mut FFI_ArrowArrayStream) {
    if stream.is_null() {
        return;
    }
    // Dropping runs `release` when it is still set.
    let _ = std::panic::catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(stream))));
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_poll_next(
    scanner: *mut LanceScanner,
    waker: Option<CWaker>,
    waker_ctx: *mut c_void,
    out: *mut *mut LanceBatch,
) -> i32 {
    guard(POLL_ERROR, || {
        let s = scanner_mut(scanner)?;
        require_out(out, "out")?;
        write_out(out, std::ptr::null_mut());
        let waker = waker.ok_or_else(|| invalid("waker must not be NULL"))?;
        if s.poll.is_none() {
            if s.is_iterating() {
                return Err(invalid("the scanner is being read with lance_scanner_next; it cannot also be polled"));
            }
            let prepared = s.start()?;
            s.poll = Some(PolledStream::new(async move { Ok(prepared.open().await?.into_batches().boxed()) }));
        }
        let poll = s.poll.as_ref().expect("the poll stream was just set");
        match poll.poll(waker, waker_ctx)? {
            Polled::Pending => Ok(POLL_PENDING),
            Polled::Ready(Step::End) => Ok(POLL_FINISHED),
            Polled::Ready(Step::Error(err)) => Err(err),
            Polled::Ready(Step::Batch(batch)) => {
                write_out(out, into_handle(LanceBatch { batch }));
                Ok(POLL_READY)
            }
        }
    })
}
