//! The one multi-threaded runtime that drives every blocking C call, the
//! runtimes of their own that cancellable segment builds run on
//! (floor/progress.rs), and the host's budget for them (lance.h "Process
//! budget"), applied once, at first use.

use std::future::Future;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::runtime::{Builder, Handle, Runtime, RuntimeFlavor};

use crate::floor::error::{not_supported, CError, CResult, Code, RUNTIME_THREAD_NAME};

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// What the host allows the library (lance.h `LanceProcessBudget`); zeros
/// and None are the defaults.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    pub compute_threads: usize,
    pub io_threads: usize,
    pub temp_dir: Option<PathBuf>,
}

/// The budget the host set, and whether the library has started (after
/// which the budget is fixed: the pools it sizes exist).
struct Limits {
    budget: Budget,
    started: bool,
}

static LIMITS: Mutex<Limits> =
    Mutex::new(Limits { budget: Budget { compute_threads: 0, io_threads: 0, temp_dir: None }, started: false });

fn limits() -> std::sync::MutexGuard<'static, Limits> {
    LIMITS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sets the budget; refused once the library has started.
pub fn set_budget(budget: Budget) -> CResult<()> {
    let mut limits = limits();
    if limits.started {
        return Err(not_supported(
            "the process budget is set before the library starts its threads, and it has started (a call that \
             reads or writes data, or builds, came first): set the budget first thing in the process",
        ));
    }
    limits.budget = budget;
    Ok(())
}

/// The budget in force (the defaults until the host sets one).
pub fn budget() -> Budget {
    limits().budget.clone()
}

/// What the library sets up once, before the first runtime starts: the
/// host's budget (the core's compute pools read their sizes from the
/// environment when first used: `LANCE_CPU_THREADS` for the core's CPU
/// pool, lance-core 14.0.2 src/utils/tokio.rs, and `RAYON_NUM_THREADS` for
/// the pool its k-means and PQ training run on), what the dependencies
/// would set up in load-time constructors (a host that links the static
/// archive with `--gc-sections` drops those: OpenDAL's HTTP transport and
/// service registry, which the oss://, cos://, tos:// and hf:// stores
/// use), and the process's own temporary directory (floor/temp.rs).
fn first_use() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let budget = {
            let mut limits = limits();
            limits.started = true;
            limits.budget.clone()
        };
        if budget.compute_threads > 0 {
            let n = budget.compute_threads.to_string();
            std::env::set_var("LANCE_CPU_THREADS", &n);
            std::env::set_var("RAYON_NUM_THREADS", &n);
        }
        opendal::install_default();
        crate::floor::temp::install(budget.temp_dir);
    });
}

fn runtime() -> CResult<&'static Runtime> {
    first_use();
    RUNTIME
        .get_or_init(|| {
            let io = limits().budget.io_threads;
            let mut builder = Builder::new_multi_thread();
            if io > 0 {
                builder.worker_threads(io).max_blocking_threads(io);
            }
            builder.enable_all().thread_name(RUNTIME_THREAD_NAME).build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| CError::new(Code::Internal, format!("cannot start the async runtime: {e}")))
}

/// Runs `f`, which blocks, on the calling thread.  A thread that already
/// drives async work (an Arrow stream of a scanner read by
/// `lance_dataset_write`, whose batches are pulled from inside the write)
/// hands its other work to another thread first, so the pool never waits on
/// itself; a single-threaded runtime's thread is refused.
fn blocking<T>(f: impl FnOnce() -> T) -> CResult<T> {
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Err(_) => Ok(f()),
        Ok(RuntimeFlavor::MultiThread) => Ok(tokio::task::block_in_place(f)),
        Ok(_) => Err(CError::new(
            Code::InvalidArgument,
            "lance-c functions cannot be called from a single-threaded async runtime's thread",
        )),
    }
}

/// Runs `fut` to completion on the shared runtime (or, called from a
/// runtime thread, on that thread's runtime), blocking the calling thread.
pub fn block_on<F: Future>(fut: F) -> CResult<F::Output> {
    match Handle::try_current() {
        Err(_) => Ok(runtime()?.block_on(fut)),
        Ok(handle) => blocking(|| handle.block_on(fut)),
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
/// it spawned: run it with `block_on_build`, shut it down with `shut_down`.
/// Its threads carry the library's thread name (panics there are the
/// library's to report).  Under a budget of I/O threads it has no worker
/// threads: the calling thread, which waits for the build anyway, runs its
/// tasks, and one thread at a time does its blocking file operations (so
/// concurrent builds add one thread each at most, not one per core).
pub fn build_runtime() -> CResult<Runtime> {
    first_use();
    let mut builder = if limits().budget.io_threads > 0 {
        let mut b = Builder::new_current_thread();
        b.max_blocking_threads(1);
        b
    } else {
        Builder::new_multi_thread()
    };
    builder
        .enable_all()
        .thread_name(format!("{RUNTIME_THREAD_NAME}-build"))
        .build()
        .map_err(|e| CError::new(Code::Internal, format!("cannot start a runtime for the build: {e}")))
}

/// Runs `fut` to completion, blocking the calling thread, on a build's
/// runtime: the calling thread drives it when it has no worker threads of
/// its own; otherwise as `block_on`.
pub fn block_on_build<F: Future>(rt: &Runtime, fut: F) -> CResult<F::Output> {
    if rt.handle().runtime_flavor() != RuntimeFlavor::CurrentThread {
        return block_on(fut);
    }
    blocking(|| rt.block_on(fut))
}

/// Shuts a build's runtime down: its tasks are dropped at their next await.
/// With `wait`, returns once its threads and blocking operations have ended
/// (or `wait` has passed); without, returns at once and lets them end.
pub fn shut_down(rt: Runtime, wait: Option<Duration>) {
    let Some(wait) = wait else {
        rt.shutdown_background();
        return;
    };
    // Waiting is blocking (a runtime thread hands its other work to
    // another thread first); where it cannot wait, it lets them end.
    let mut rt = Some(rt);
    if blocking(|| rt.take().map(|rt| rt.shutdown_timeout(wait))).is_err() {
        if let Some(rt) = rt {
            rt.shutdown_background();
        }
    }
}
