//! Build progress (RFC E3) and cooperative cancellation (RFC E4).
//!
//! The core reports progress through its `IndexBuildProgress` hooks, from
//! whichever runtime thread is running the build, and aborts a build when a
//! hook returns an error.  The bridge here turns each hook call into an
//! event on a channel, and the calling thread, which is blocked in the build
//! anyway, hands the events to the C callback between polls of the build.
//! So the callback runs on the caller's thread, never twice at once, and
//! never after the build call returned.  Each hook first looks at the
//! cancel token: once it is set, the hook fails and the core unwinds the
//! build at that checkpoint.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CString};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;

use async_trait::async_trait;
use lance::Dataset;
use lance_index::progress::IndexBuildProgress;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use uuid::Uuid;

use crate::convert::require_handle;
use crate::error::{guard, status, CError, CResult, Code};
use crate::runtime::block_on;

/// Mirrors `LanceIndexBuildProgressFn` in lance.h.
pub type ProgressFn =
    unsafe extern "C" fn(*mut c_void, i32, *const c_char, u64, *const c_char, u64);

const EVENT_STAGE_START: i32 = 0;
const EVENT_STAGE_PROGRESS: i32 = 1;
const EVENT_STAGE_COMPLETE: i32 = 2;

/// The caller's `user_data`: only ever handed back to the caller's callback
/// on the caller's thread, so carrying it across threads is sound.
#[derive(Clone, Copy, Debug)]
struct UserData(*mut c_void);
unsafe impl Send for UserData {}
unsafe impl Sync for UserData {}

/// A cancel token: shared by the handle the caller owns and every build it
/// was given to, so freeing the handle while a build runs is safe.
pub struct LanceIndexBuildCancelToken {
    flag: Arc<AtomicBool>,
}

/// What a build was asked to report to and listen to.
#[derive(Clone, Default)]
pub struct BuildControl {
    progress: Option<(ProgressFn, UserData)>,
    cancel: Option<Arc<AtomicBool>>,
}

/// Mirrors `LanceIndexBuildControl` in lance.h.
#[repr(C)]
pub struct LanceIndexBuildControl {
    pub progress: Option<ProgressFn>,
    pub progress_user_data: *mut c_void,
    pub cancel_token: *const LanceIndexBuildCancelToken,
}

impl BuildControl {
    /// From an optional `LanceIndexBuildControl` argument.
    pub unsafe fn from_c(control: *const LanceIndexBuildControl) -> Self {
        let mut out = Self::default();
        if let Some(c) = control.as_ref() {
            out.set_progress(c.progress, c.progress_user_data);
            if let Some(token) = c.cancel_token.as_ref() {
                out.cancel = Some(token.flag.clone());
            }
        }
        out
    }

    pub fn set_progress(&mut self, callback: Option<ProgressFn>, user_data: *mut c_void) {
        self.progress = callback.map(|f| (f, UserData(user_data)));
    }

    pub fn set_cancel(&mut self, token: Option<&LanceIndexBuildCancelToken>) {
        self.cancel = token.map(|t| t.flag.clone());
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|f| f.load(Ordering::SeqCst))
    }

    /// The hooks to give the core, or None when nobody listens (no cost).
    pub fn start(&self) -> CResult<Session> {
        if self.cancelled() {
            return Err(cancelled_error("before it started"));
        }
        let (tx, rx) = match self.progress {
            Some(_) => {
                let (tx, rx) = unbounded_channel();
                (Some(tx), Some(rx))
            }
            None => (None, None),
        };
        let listens = self.progress.is_some() || self.cancel.is_some();
        let bridge = listens.then(|| {
            Arc::new(Bridge { tx, cancel: self.cancel.clone(), aborted: AtomicBool::new(false) })
        });
        Ok(Session { bridge, rx, callback: self.progress })
    }
}

pub fn cancelled_error(when: &str) -> CError {
    CError::new(Code::Cancelled, format!("the index build was cancelled {when}; nothing was committed"))
}

#[derive(Debug)]
enum Event {
    Start { stage: String, total: Option<u64>, unit: String },
    Progress { stage: String, completed: u64 },
    Complete { stage: String },
}

#[derive(Debug)]
struct Bridge {
    tx: Option<UnboundedSender<Event>>,
    cancel: Option<Arc<AtomicBool>>,
    aborted: AtomicBool,
}

impl Bridge {
    fn checkpoint(&self, event: Event) -> lance::Result<()> {
        if self.cancel.as_ref().is_some_and(|f| f.load(Ordering::SeqCst)) {
            self.aborted.store(true, Ordering::SeqCst);
            return Err(lance::Error::io("index build cancelled through its cancel token"));
        }
        if let Some(tx) = &self.tx {
            // A closed channel means the build call is returning; drop it.
            let _ = tx.send(event);
        }
        Ok(())
    }
}

#[async_trait]
impl IndexBuildProgress for Bridge {
    async fn stage_start(&self, stage: &str, total: Option<u64>, unit: &str) -> lance::Result<()> {
        self.checkpoint(Event::Start { stage: stage.to_string(), total, unit: unit.to_string() })
    }

    async fn stage_progress(&self, stage: &str, completed: u64) -> lance::Result<()> {
        self.checkpoint(Event::Progress { stage: stage.to_string(), completed })
    }

    async fn stage_complete(&self, stage: &str) -> lance::Result<()> {
        self.checkpoint(Event::Complete { stage: stage.to_string() })
    }
}

/// One build's hooks and the receiving end of its events.
pub struct Session {
    bridge: Option<Arc<Bridge>>,
    rx: Option<UnboundedReceiver<Event>>,
    callback: Option<(ProgressFn, UserData)>,
}

/// Hands events to the C callback, keeping every stage's count from going
/// backwards (the core may report one stage from several threads).
struct Delivery {
    callback: Option<(ProgressFn, UserData)>,
    last: HashMap<String, u64>,
}

impl Delivery {
    fn deliver(&mut self, event: Event) {
        let Some((f, user)) = self.callback else { return };
        let (kind, stage, total, unit, completed) = match event {
            Event::Start { stage, total, unit } => {
                self.last.insert(stage.clone(), 0);
                (EVENT_STAGE_START, stage, total.unwrap_or(0), unit, 0)
            }
            Event::Progress { stage, completed } => {
                let last = self.last.entry(stage.clone()).or_insert(0);
                if completed < *last {
                    return;
                }
                *last = completed;
                (EVENT_STAGE_PROGRESS, stage, 0, String::new(), completed)
            }
            Event::Complete { stage } => {
                let completed = self.last.remove(&stage).unwrap_or(0);
                (EVENT_STAGE_COMPLETE, stage, 0, String::new(), completed)
            }
        };
        let stage = CString::new(stage.replace('\0', " ")).expect("NULs were replaced");
        let unit = CString::new(unit.replace('\0', " ")).expect("NULs were replaced");
        // A panic cannot cross the callback (it is C); anything the callback
        // does is the caller's.
        unsafe { f(user.0, kind, stage.as_ptr(), total, unit.as_ptr(), completed) };
    }
}

impl Session {
    /// The hooks to install on a `CreateIndexBuilder`, if any.
    pub fn hooks(&self) -> Option<Arc<dyn IndexBuildProgress>> {
        self.bridge.clone().map(|b| b as Arc<dyn IndexBuildProgress>)
    }

    /// Runs the build on the shared runtime from the calling thread,
    /// delivering its events here, and turns an abort by the cancel token
    /// into LANCE_ERR_CANCELLED.
    pub fn run<T>(mut self, fut: impl Future<Output = lance::Result<T>>) -> CResult<T> {
        let mut fut = std::pin::pin!(fut);
        let mut delivery = Delivery { callback: self.callback, last: HashMap::new() };
        let mut rx = self.rx.take();
        let result = block_on(std::future::poll_fn(|cx| {
            if let Some(rx) = rx.as_mut() {
                while let Poll::Ready(Some(event)) = rx.poll_recv(cx) {
                    delivery.deliver(event);
                }
            }
            let out = fut.as_mut().poll(cx);
            if out.is_ready() {
                if let Some(rx) = rx.as_mut() {
                    while let Ok(event) = rx.try_recv() {
                        delivery.deliver(event);
                    }
                }
            }
            out
        }))?;
        // Hooks that run after this point (none should) find the channel closed.
        drop(rx);
        match result {
            Ok(value) => Ok(value),
            Err(_) if self.aborted() => Err(cancelled_error("at a build checkpoint")),
            Err(err) => Err(err.into()),
        }
    }

    fn aborted(&self) -> bool {
        self.bridge.as_ref().is_some_and(|b| b.aborted.load(Ordering::SeqCst))
    }
}

/// Removes what a cancelled build wrote for segment `uuid`.  The outcome
/// goes into the error message; the error stays CANCELLED.
pub fn remove_segment_files(ds: &Dataset, uuid: Uuid, err: CError) -> CError {
    let dir = ds.indices_dir().join(uuid.to_string());
    let removed = block_on(async {
        let store = ds.object_store(None).await?;
        match store.remove_dir_all(dir.clone()).await {
            Err(e) if !is_missing(&e) => Err(e),
            _ => Ok(()),
        }
    });
    match removed {
        Ok(Ok(())) => CError::new(err.code, format!("{}; its segment files under {dir} were removed", err.message)),
        Ok(Err(e)) => CError::new(err.code, format!("{}; removing its files under {dir} failed: {e}", err.message)),
        Err(e) => CError::new(err.code, format!("{}; removing its files under {dir} failed: {}", err.message, e.message)),
    }
}

/// A removal that failed only because there was nothing to remove.
fn is_missing(err: &lance::Error) -> bool {
    matches!(err, lance::Error::NotFound { .. }) || err.to_string().contains("No such file or directory")
}

#[no_mangle]
pub extern "C" fn lance_index_build_cancel_token_new() -> *mut LanceIndexBuildCancelToken {
    guard(std::ptr::null_mut(), || {
        Ok(Box::into_raw(Box::new(LanceIndexBuildCancelToken { flag: Arc::new(AtomicBool::new(false)) })))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_build_cancel_token_free(token: *mut LanceIndexBuildCancelToken) {
    if !token.is_null() {
        drop(Box::from_raw(token));
    }
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_build_cancel(token: *const LanceIndexBuildCancelToken) -> i32 {
    status(|| {
        require_handle(token, "token")?;
        (*token).flag.store(true, Ordering::SeqCst);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_build_cancel_requested(token: *const LanceIndexBuildCancelToken) -> bool {
    guard(false, || {
        require_handle(token, "token")?;
        Ok((*token).flag.load(Ordering::SeqCst))
    })
}
