//! The one multi-threaded runtime that drives every blocking C call, and
//! the runtimes of their own that cancellable segment builds run on
//! (floor/progress.rs).

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::runtime::{Builder, Handle, Runtime, RuntimeFlavor};

use crate::floor::error::{CError, CResult, Code, RUNTIME_THREAD_NAME};

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// What the library sets up once, before the first runtime starts: what the
/// dependencies would set up in load-time constructors (a host that links
/// the static archive with `--gc-sections` drops those: OpenDAL's HTTP
/// transport and service registry, which the oss://, cos://, tos:// and
/// hf:// stores use), and the process's own temporary directory
/// (floor/temp.rs).
fn first_use() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        opendal::install_default();
        crate::floor::temp::install();
    });
}

fn runtime() -> CResult<&'static Runtime> {
    first_use();
    RUNTIME
        .get_or_init(|| {
            Builder::new_multi_thread()
                .enable_all()
                .thread_name(RUNTIME_THREAD_NAME)
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| CError::new(Code::Internal, format!("cannot start the async runtime: {e}")))
}

/// Runs `fut` to completion on the shared runtime, blocking the calling
/// thread.  A call made while the thread already drives async work (an
/// Arrow stream of a scanner read by `lance_dataset_write`, whose batches
/// are pulled from inside the write) hands the thread's other work to
/// another thread first, so the pool never waits on itself.
pub fn block_on<F: Future>(fut: F) -> CResult<F::Output> {
    match Handle::try_current() {
        Err(_) => Ok(runtime()?.block_on(fut)),
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            Ok(tokio::task::block_in_place(|| handle.block_on(fut)))
        }
        Ok(_) => Err(CError::new(
            Code::InvalidArgument,
            "lance-c functions cannot be called from a single-threaded async runtime's thread",
        )),
    }
}

/// Starts `fut` on the shared runtime's worker threads.
pub fn spawn<F>(fut: F) -> CResult<tokio::task::JoinHandle<F::Output>>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    Ok(runtime()?.spawn(fut))
}

/// A runtime for one build, so that cancelling the build can drop every task
/// it spawned: shut it down with `shut_down`.  Its threads carry the
/// library's thread name (panics there are the library's to report).
pub fn build_runtime() -> CResult<Runtime> {
    first_use();
    Builder::new_multi_thread()
        .enable_all()
        .thread_name(format!("{RUNTIME_THREAD_NAME}-build"))
        .build()
        .map_err(|e| CError::new(Code::Internal, format!("cannot start a runtime for the build: {e}")))
}

/// Shuts a build's runtime down: its tasks are dropped at their next await.
/// With `wait`, returns once its threads and blocking operations have ended
/// (or `wait` has passed); without, returns at once and lets them end.
pub fn shut_down(rt: Runtime, wait: Option<Duration>) {
    let Some(wait) = wait else {
        rt.shutdown_background();
        return;
    };
    match Handle::try_current() {
        // Waiting is blocking: a caller that is a runtime thread (a nested
        // call) hands its other work to another thread first, as block_on.
        Ok(_) => tokio::task::block_in_place(|| rt.shutdown_timeout(wait)),
        Err(_) => rt.shutdown_timeout(wait),
    }
}
