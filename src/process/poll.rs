//! A batch stream driven from C by polling with a waker (the C form of a
//! Rust future's poll): each fetch runs as one task on the runtime, and the
//! hand-off between that task, the polling thread and the closing thread
//! happens under one mutex, so a wake is never lost and a waker never runs
//! after the owner is dropped.

use std::ffi::c_void;
use std::future::Future;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::ThreadId;

use arrow_array::RecordBatch;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};

use crate::boundary::error::{CError, CResult, Code};
use crate::process::runtime::spawn;

/// `LanceWaker` in lance.h.
pub type CWaker = unsafe extern "C" fn(*mut c_void);

/// A caller's pointer carried to the thread that hands it back; the caller
/// promised (in lance.h) that it stays valid and may be used there.
#[derive(Clone, Copy)]
pub struct SendPtr(pub *mut c_void);
unsafe impl Send for SendPtr {}

pub type BatchStream = BoxStream<'static, CResult<RecordBatch>>;

/// One step of the stream, as a poll hands it over.
pub enum Step {
    Batch(RecordBatch),
    End,
    Error(CError),
}

pub enum Polled {
    Ready(Step),
    Pending,
}

enum Source {
    /// Not opened yet: the future that opens the stream.
    Unopened(BoxFuture<'static, CResult<BatchStream>>),
    Idle(BatchStream),
    /// A fetch task owns the stream.
    Busy,
    /// Ended (after the end or an error).
    Done,
}

struct State {
    source: Source,
    /// A finished fetch's result not yet taken by a poll.
    ready: Option<Step>,
    /// The waker of the last PENDING, while its fetch runs.
    waker: Option<(CWaker, SendPtr)>,
    /// The thread running a waker right now.
    waking: Option<ThreadId>,
    fetch: Option<tokio::task::AbortHandle>,
    closed: bool,
}

struct Shared {
    state: Mutex<State>,
    waker_done: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A stream polled from C. Dropping it is `lance_scanner_close`'s part:
/// a stored waker is dropped uncalled, a running fetch is aborted, and a
/// waker already running on another thread is waited for.
pub struct PolledStream {
    shared: Arc<Shared>,
}

impl PolledStream {
    /// `open` runs on the runtime at the first poll.
    pub fn new(open: impl Future<Output = CResult<BatchStream>> + Send + 'static) -> Self {
        let state = State {
            source: Source::Unopened(open.boxed()),
            ready: None,
            waker: None,
            waking: None,
            fetch: None,
            closed: false,
        };
        Self { shared: Arc::new(Shared { state: Mutex::new(state), waker_done: Condvar::new() }) }
    }

    /// Never blocks. A PENDING result stores the waker (replacing the one of
    /// an earlier PENDING of the same fetch, which is then never called);
    /// the fetch task calls it once the result is ready.
    pub fn poll(&self, waker: CWaker, ctx: *mut c_void) -> CResult<Polled> {
        let mut st = self.shared.lock();
        if let Some(step) = st.ready.take() {
            return Ok(Polled::Ready(step));
        }
        let source = std::mem::replace(&mut st.source, Source::Busy);
        let fetch = match source {
            Source::Done => {
                st.source = Source::Done;
                return Ok(Polled::Ready(Step::End));
            }
            Source::Busy => {
                st.waker = Some((waker, SendPtr(ctx)));
                return Ok(Polled::Pending);
            }
            Source::Unopened(open) => async move {
                match open.await {
                    Ok(mut stream) => {
                        let item = stream.next().await;
                        (Some(stream), item)
                    }
                    Err(e) => (None, Some(Err(e))),
                }
            }
            .boxed(),
            Source::Idle(mut stream) => async move {
                let item = stream.next().await;
                (Some(stream), item)
            }
            .boxed(),
        };
        let shared = Arc::clone(&self.shared);
        let task = async move {
            let (stream, item) = match std::panic::AssertUnwindSafe(fetch).catch_unwind().await {
                Ok(done) => done,
                Err(_) => (None, Some(Err(CError::new(Code::Panic, "internal panic while reading the next batch")))),
            };
            // The waker is the caller's code: it runs on a blocking-pool
            // thread, never on an async worker.
            let _ = tokio::task::spawn_blocking(move || deliver(&shared, stream, item)).await;
        };
        match spawn(task) {
            Ok(handle) => {
                st.fetch = Some(handle.abort_handle());
                st.waker = Some((waker, SendPtr(ctx)));
                Ok(Polled::Pending)
            }
            Err(e) => {
                st.source = Source::Done;
                Err(e)
            }
        }
    }
}

/// Publishes a fetch's result and calls the waker of the PENDING that
/// started it, unless the owner was dropped meanwhile.
fn deliver(shared: &Shared, stream: Option<BatchStream>, item: Option<CResult<RecordBatch>>) {
    let mut st = shared.lock();
    if st.closed {
        return;
    }
    st.fetch = None;
    let step = match item {
        Some(Ok(batch)) => Step::Batch(batch),
        Some(Err(e)) => Step::Error(e),
        None => Step::End,
    };
    st.source = match (&step, stream) {
        (Step::Batch(_), Some(stream)) => Source::Idle(stream),
        _ => Source::Done,
    };
    st.ready = Some(step);
    let Some((waker, ctx)) = st.waker.take() else {
        return;
    };
    st.waking = Some(std::thread::current().id());
    drop(st);
    unsafe { waker(ctx.0) };
    shared.lock().waking = None;
    shared.waker_done.notify_all();
}

impl Drop for PolledStream {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        st.closed = true;
        st.waker = None;
        if let Some(fetch) = st.fetch.take() {
            fetch.abort();
        }
        let me = std::thread::current().id();
        // A waker that closes its own scanner (forbidden in lance.h) would
        // wait for itself; it is not waited for.
        while st.waking.is_some_and(|t| t != me) {
            st = self.shared.waker_done.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        let source = std::mem::replace(&mut st.source, Source::Done);
        let ready = st.ready.take();
        drop(st);
        drop(source);
        drop(ready);
    }
}
