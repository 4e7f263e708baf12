//! The one multi-threaded runtime that drives every blocking C call.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::{Builder, Runtime};

use crate::error::{CError, CResult, Code};

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

fn runtime() -> CResult<&'static Runtime> {
    RUNTIME
        .get_or_init(|| {
            Builder::new_multi_thread()
                .enable_all()
                .thread_name("lance-c")
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| CError::new(Code::Internal, format!("cannot start the async runtime: {e}")))
}

/// Runs `fut` to completion on the shared runtime, blocking the calling
/// thread. Refuses to nest: a call from a runtime thread (for example from a
/// callback the library is running) would deadlock the pool.
pub fn block_on<F: Future>(fut: F) -> CResult<F::Output> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(CError::new(
            Code::InvalidArgument,
            "lance-c functions cannot be called from inside a lance-c callback",
        ));
    }
    Ok(runtime()?.block_on(fut))
}

/// Starts `fut` on the shared runtime's worker threads.
pub fn spawn<F>(fut: F) -> CResult<tokio::task::JoinHandle<F::Output>>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    Ok(runtime()?.spawn(fut))
}
