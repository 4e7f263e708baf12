//! The one multi-threaded runtime that drives every blocking C call, the
//! runtimes of their own that cancellable segment builds run on
//! (index/progress.rs), and the host's budget for them (lance.h "Process
//! budget"), applied once, at first use.

use std::future::Future;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::runtime::{Builder, Handle, Runtime, RuntimeFlavor};

use crate::boundary::error::{panic_text, CError, CResult, Code, RUNTIME_THREAD_NAME};

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// What the library sets up once, before the first runtime starts: the
/// host's budget (the core's compute pools read their sizes from the
/// environment when first used: `LANCE_CPU_THREADS` for the core's CPU
/// pool, lance-core 14.0.2 src/utils/tokio.rs, and `RAYON_NUM_THREADS` for
/// the pool its k-means and PQ training run on), what the dependencies
/// would set up in load-time constructors (a host that links the static
/// archive with `--gc-sections` drops those: OpenDAL's HTTP transport and
/// service registry, which the oss://, cos://, tos:// and hf:// stores
/// use), and the process's own temporary directory (process/temp.rs).
fn first_use() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let budget = crate::process::budget::start();
        if budget.compute_threads > 0 {
            let n = budget.compute_threads.to_string();
            std::env::set_var("LANCE_CPU_THREADS", &n);
            std::env::set_var("RAYON_NUM_THREADS", &n);
        }
        opendal::install_default();
        crate::process::temp::install(budget.temp_dir);
    });
}

/// A runtime's builder: `workers` worker threads (None: the library's
/// default, one per core; Some(0): none, the calling thread drives it) and at
/// most `blocking` threads for blocking operations (None: tokio's default).
/// Its threads block SIGPIPE (see `SigpipeBlocked`) and carry `name`.
fn builder(workers: Option<usize>, blocking: Option<usize>, name: String) -> Builder {
    let mut b = match workers {
        Some(0) => Builder::new_current_thread(),
        Some(n) => {
            let mut b = Builder::new_multi_thread();
            b.worker_threads(n);
            b
        }
        None => Builder::new_multi_thread(),
    };
    if let Some(n) = blocking {
        b.max_blocking_threads(n);
    }
    b.enable_io().enable_time().thread_name(name).on_thread_start(block_sigpipe_for_good);
    b
}

/// Starts a runtime.  That fails only for want of resources (threads, file
/// descriptors): an I/O error of the host's environment, also where tokio
/// panics instead (its signal driver, part of the I/O driver when any crate
/// of the build enables tokio's signal feature, makes a socket pair the
/// first time and panics when it cannot).
fn start(mut b: Builder, what: &str) -> CResult<Runtime> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.build())) {
        Ok(Ok(rt)) => Ok(rt),
        Ok(Err(e)) => Err(CError::new(Code::Io, format!("cannot start {what}: {e}"))),
        Err(panic) => Err(CError::new(Code::Io, format!("cannot start {what}: {}", panic_text(&*panic)))),
    }
}

static STARTING: Mutex<()> = Mutex::new(());

fn runtime() -> CResult<&'static Runtime> {
    first_use();
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    // One thread starts it; a start that failed (out of file descriptors,
    // say) is tried again by the next call.
    let _one = STARTING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let io = crate::process::budget::budget().io_threads;
    let rt = start(
        builder((io > 0).then_some(io), (io > 0).then_some(io), RUNTIME_THREAD_NAME.to_string()),
        "the async runtime",
    )?;
    Ok(RUNTIME.get_or_init(|| rt))
}

/// A write to a socket whose peer has gone raises SIGPIPE, whose default
/// action ends the process; the host may not ignore it (a C program does
/// not by default), so the library keeps it from ever reaching the host,
/// without touching the process's signal dispositions.  Its own threads
/// block SIGPIPE for good (such a write then just fails with EPIPE, an I/O
/// error); a host thread blocks it for the length of a call, and a SIGPIPE
/// the call raised is taken before the thread's mask is restored.
fn sigpipe_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        set
    }
}

fn block_sigpipe_for_good() {
    let set = sigpipe_set();
    // SAFETY: changes only the calling thread's mask.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
}

fn sigpipe_pending() -> bool {
    // SAFETY: sigpending fills a local set.
    unsafe {
        let mut pending: libc::sigset_t = std::mem::zeroed();
        libc::sigpending(&mut pending) == 0 && libc::sigismember(&pending, libc::SIGPIPE) == 1
    }
}

/// SIGPIPE blocked on the calling thread while it lives (see `sigpipe_set`).
pub struct SigpipeBlocked {
    old: libc::sigset_t,
    /// Pending before the call, or blocked by the host itself: not ours to take.
    leave_alone: bool,
}

impl SigpipeBlocked {
    pub fn new() -> Self {
        let set = sigpipe_set();
        // SAFETY: changes only the calling thread's mask; `old` receives the previous one.
        unsafe {
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            let leave_alone = libc::sigismember(&old, libc::SIGPIPE) == 1 || sigpipe_pending();
            SigpipeBlocked { old, leave_alone }
        }
    }
}

impl Drop for SigpipeBlocked {
    fn drop(&mut self) {
        // SAFETY: takes a pending SIGPIPE without waiting, then restores the
        // thread's own mask.
        unsafe {
            if !self.leave_alone && sigpipe_pending() {
                let set = sigpipe_set();
                let now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
                libc::sigtimedwait(&set, std::ptr::null_mut(), &now);
            }
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut());
        }
    }
}

/// Runs `f`, which blocks, on the calling thread.  A thread that already
/// drives async work (an Arrow stream of a scanner read by
/// `lance_dataset_write`, whose batches are pulled from inside the write)
/// hands its other work to another thread first, so the pool never waits on
/// itself; a single-threaded runtime's thread is refused.
pub fn blocking<T>(f: impl FnOnce() -> T) -> CResult<T> {
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
    let _sigpipe = SigpipeBlocked::new();
    match Handle::try_current() {
        Err(_) => Ok(runtime()?.block_on(fut)),
        Ok(handle) => blocking(|| handle.block_on(fut)),
    }
}

/// The shared runtime's handle (started if it was not).
pub fn shared_handle() -> CResult<Handle> {
    Ok(runtime()?.handle().clone())
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
    let budgeted = crate::process::budget::budget().io_threads > 0;
    start(
        builder(budgeted.then_some(0), budgeted.then_some(1), format!("{RUNTIME_THREAD_NAME}-build")),
        "a runtime for the build",
    )
}

/// Runs `fut` to completion, blocking the calling thread, on a build's
/// runtime: the calling thread drives it when it has no worker threads of
/// its own; otherwise as `block_on`.
pub fn block_on_build<F: Future>(rt: &Runtime, fut: F) -> CResult<F::Output> {
    if rt.handle().runtime_flavor() != RuntimeFlavor::CurrentThread {
        return block_on(fut);
    }
    let _sigpipe = SigpipeBlocked::new();
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
    let _sigpipe = SigpipeBlocked::new();
    let mut rt = Some(rt);
    if blocking(|| rt.take().map(|rt| rt.shutdown_timeout(wait))).is_err() {
        if let Some(rt) = rt {
            rt.shutdown_background();
        }
    }
}
