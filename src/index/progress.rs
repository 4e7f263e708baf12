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
//!
//! Some stages run long without a checkpoint (the PQ codebook's k-means
//! runs inside a single poll; the shuffle reports nothing until it ends).
//! A build that listens for cancellation therefore runs on runtime worker
//! threads while the caller's thread waits, and a cancel does not wait for
//! the next checkpoint:
//! - a build on the local file system whose UUID this library chose
//!   (every build but the fragment-scoped BTREE, LABEL_LIST, NGRAM and RTREE segments,
//!   whose UUID the core picks) runs on a runtime of its own.  A cancel aborts it at once, in
//!   any stage, and shuts that runtime down before the call returns: every
//!   task the build spawned is dropped at its next await and every
//!   blocking file operation it started has ended, so nothing is written
//!   after the call returned (the caller then removes what was written,
//!   or, for a one-shot build stopped in its commit, finds the commit).  A
//!   cancel during a stage that writes nothing (training, loading data)
//!   does not even wait for that: the computation in progress is left to
//!   end on its own and is thrown away.
//! - the others (those, and every build on an object store: see
//!   index/build.rs) are abandoned at once only while they have written
//!   nothing to the dataset's store: in training, loading data, and the
//!   shuffle, whose files go to a local temporary directory of the core's
//!   own (lance-index-14.0.2 src/vector/v3/shuffler.rs:566,
//!   `ObjectStore::local()`).  An abandoned build runs on to its next
//!   checkpoint, where it fails before writing and drops that directory.
//!   Later (writing partitions, committing) they stop at their next
//!   checkpoint, one per partition written.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use async_trait::async_trait;
use lance_index::progress::IndexBuildProgress;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::boundary::error::{CError, CResult, CallbackScope, Code};
use crate::boundary::ffi::c_text;
use crate::process::runtime::{block_on, block_on_build, blocking, build_runtime, shut_down, spawn};
use crate::store::store_gate::Gate;

/// Mirrors `LanceIndexBuildProgressCallback` in lance.h.
pub type ProgressFn = unsafe extern "C" fn(*mut c_void, i32, *const c_char, u64, *const c_char, u64);

const EVENT_STAGE_START: i32 = 0;
const EVENT_STAGE_PROGRESS: i32 = 1;
const EVENT_STAGE_COMPLETE: i32 = 2;

/// The caller's `user_data`: only ever handed back to the caller's callback
/// on the caller's thread, so carrying it across threads is sound.
#[derive(Clone, Copy, Debug)]
struct UserData(*mut c_void);
unsafe impl Send for UserData {}
unsafe impl Sync for UserData {}

/// What a cancel token shares with the builds it was given to.
#[derive(Debug, Default)]
pub struct CancelState {
    flag: AtomicBool,
    /// The waiting callers of running builds, woken by a cancel.
    waiters: Mutex<Vec<Waker>>,
}

impl CancelState {
    fn is_set(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    fn set(&self) {
        self.flag.store(true, Ordering::SeqCst);
        let waiters = std::mem::take(&mut *self.waiters.lock().unwrap_or_else(|e| e.into_inner()));
        for w in waiters {
            w.wake();
        }
    }

    fn wait(&self, waker: &Waker) {
        let mut waiters = self.waiters.lock().unwrap_or_else(|e| e.into_inner());
        if !waiters.iter().any(|w| w.will_wake(waker)) {
            waiters.push(waker.clone());
        }
    }
}

/// A cancel token: shared by the handle the caller owns and every build it
/// was given to, so freeing the handle while a build runs is safe.
pub struct LanceIndexBuildCancelToken {
    state: Arc<CancelState>,
}

impl LanceIndexBuildCancelToken {
    pub fn new() -> Self {
        Self { state: Arc::new(CancelState::default()) }
    }

    pub fn cancel(&self) {
        self.state.set();
    }

    pub fn is_cancelled(&self) -> bool {
        self.state.is_set()
    }
}

/// What a build was asked to report to and listen to.
#[derive(Clone, Default)]
pub struct BuildControl {
    progress: Option<(ProgressFn, UserData)>,
    cancel: Option<Arc<CancelState>>,
}

/// Mirrors `LanceIndexBuildControl` in lance.h.
#[repr(C)]
pub struct LanceIndexBuildControl {
    pub progress: Option<ProgressFn>,
    pub progress_user_data: *mut c_void,
    pub cancel_token: *const LanceIndexBuildCancelToken,
}
crate::c_layout!(LanceIndexBuildControl, 24; progress @ 0, progress_user_data @ 8, cancel_token @ 16);

impl BuildControl {
    /// From an optional `LanceIndexBuildControl` argument.
    pub unsafe fn from_c(control: *const LanceIndexBuildControl) -> Self {
        let mut out = Self::default();
        if let Some(c) = control.as_ref() {
            out.set_progress(c.progress, c.progress_user_data);
            if let Some(token) = c.cancel_token.as_ref() {
                out.cancel = Some(token.state.clone());
            }
        }
        out
    }

    pub fn set_progress(&mut self, callback: Option<ProgressFn>, user_data: *mut c_void) {
        self.progress = callback.map(|f| (f, UserData(user_data)));
    }

    pub fn set_cancel(&mut self, token: Option<&LanceIndexBuildCancelToken>) {
        self.cancel = token.map(|t| t.state.clone());
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.is_set())
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
            Arc::new(Bridge {
                tx,
                cancel: self.cancel.clone(),
                aborted: AtomicBool::new(false),
                abandonable: Untouched::new(&WRITES_NOTHING),
                store_untouched: Untouched::new(&STORE_UNTOUCHED),
            })
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

/// Stages during which a build writes nothing: abandoning it there leaves
/// nothing behind.  (Vector training works on samples in memory; scalar
/// builds only open their input stream in "load_data".)
const WRITES_NOTHING: [&str; 3] = ["train_ivf", "train_quantizer", "load_data"];

/// Stages that write nothing to the dataset's store: those above, and the
/// vector shuffle, which writes to a local temporary directory the build
/// owns (see the module comment).
const STORE_UNTOUCHED: [&str; 4] = ["train_ivf", "train_quantizer", "load_data", "shuffle"];

/// How long a cancelled build's runtime may take to wind down: each worker
/// thread's poll in progress and the blocking file operations in flight
/// (milliseconds in practice).  Async storage requests are dropped, not
/// waited for.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(30);

#[derive(Debug)]
struct Bridge {
    tx: Option<UnboundedSender<Event>>,
    cancel: Option<Arc<CancelState>>,
    aborted: AtomicBool,
    /// The build has written nothing yet (WRITES_NOTHING).
    abandonable: Untouched,
    /// The build has written nothing to the dataset's store yet
    /// (STORE_UNTOUCHED): what a build on the shared runtime may be
    /// abandoned in.
    store_untouched: Untouched,
}

/// True before a build's first stage and inside the stages of `allowed`
/// that come before any other: once a stage outside it has started, never
/// again (a later stage that writes nothing does not undo what was
/// written).
#[derive(Debug)]
struct Untouched {
    allowed: &'static [&'static str],
    now: AtomicBool,
    left: AtomicBool,
}

impl Untouched {
    fn new(allowed: &'static [&'static str]) -> Self {
        Untouched { allowed, now: AtomicBool::new(true), left: AtomicBool::new(false) }
    }

    fn stage_started(&self, stage: &str) {
        let outside = !self.allowed.contains(&stage);
        let left = self.left.fetch_or(outside, Ordering::SeqCst) || outside;
        self.now.store(!left, Ordering::SeqCst);
    }

    fn stage_completed(&self) {
        self.now.store(false, Ordering::SeqCst);
    }

    fn get(&self) -> bool {
        self.now.load(Ordering::SeqCst)
    }
}

impl Bridge {
    fn checkpoint(&self, event: Event) -> lance::Result<()> {
        // Publish the stage before looking at the token: a caller that sees
        // `abandonable` after cancelling knows this hook will fail.
        match &event {
            Event::Start { stage, .. } => {
                self.abandonable.stage_started(stage);
                self.store_untouched.stage_started(stage);
            }
            Event::Complete { .. } => {
                self.abandonable.stage_completed();
                self.store_untouched.stage_completed();
            }
            Event::Progress { .. } => {}
        }
        if self.cancel.as_ref().is_some_and(|c| c.is_set()) {
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
                // STAGE_COMPLETE carries no count (the last STAGE_PROGRESS had it).
                self.last.remove(&stage);
                (EVENT_STAGE_COMPLETE, stage, 0, String::new(), 0)
            }
        };
        let stage = c_text(&stage);
        let unit = c_text(&unit);
        // A panic cannot cross the callback (it is C); anything the callback
        // does is the caller's.
        let _scope = CallbackScope::enter();
        unsafe { f(user.0, kind, stage.as_ptr(), total, unit.as_ptr(), completed) };
    }
}

impl Session {
    /// The hooks to install on a `CreateIndexBuilder`, if any.
    pub fn hooks(&self) -> Option<Arc<dyn IndexBuildProgress>> {
        self.bridge.clone().map(|b| b as Arc<dyn IndexBuildProgress>)
    }

    /// Runs the build, delivering its events on this thread, and turns an
    /// abort by the cancel token into LANCE_ERR_CANCELLED.  Without hooks
    /// the build simply runs on this thread.  `abort_anywhere`: the caller
    /// can find and remove whatever the build wrote, so a cancel may stop
    /// it in any stage.  `gate`: every write of the build to the dataset's
    /// store passes through it (store/store_gate.rs).
    pub fn run<T: Send + 'static>(
        mut self,
        fut: impl Future<Output = lance::Result<T>> + Send + 'static,
        abort_anywhere: bool,
        gate: Option<Arc<Gate>>,
    ) -> CResult<T> {
        let Some(bridge) = self.bridge.clone() else {
            return Ok(block_on(fut)??);
        };
        let own_runtime = match (&bridge.cancel, abort_anywhere) {
            (Some(_), true) => Some(build_runtime()?),
            _ => None,
        };
        let mut task = match &own_runtime {
            Some(rt) => rt.spawn(fut),
            None => spawn(fut)?,
        };
        let mut delivery = Delivery { callback: self.callback, last: HashMap::new() };
        let mut rx = self.rx.take();
        let cancel = bridge.cancel.clone();
        let drive = std::future::poll_fn(|cx| {
            if let Some(rx) = rx.as_mut() {
                while let Poll::Ready(Some(event)) = rx.poll_recv(cx) {
                    delivery.deliver(event);
                }
            }
            if let Some(c) = &cancel {
                c.wait(cx.waker());
                // A build on its own runtime is stopped at once anywhere; one
                // on the shared runtime is left to fail at its next
                // checkpoint, so only while it has written nothing to the
                // dataset's store.
                if c.is_set() && (own_runtime.is_some() || bridge.store_untouched.get()) {
                    task.abort();
                    return Poll::Ready(None);
                }
            }
            let out = std::pin::Pin::new(&mut task).poll(cx);
            if out.is_ready() {
                if let Some(rx) = rx.as_mut() {
                    while let Ok(event) = rx.try_recv() {
                        delivery.deliver(event);
                    }
                }
            }
            out.map(Some)
        });
        let outcome = match &own_runtime {
            Some(rt) => block_on_build(rt, drive),
            None => block_on(drive),
        };
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(err) => {
                // block_on refused this thread: stop the build, never drop
                // its runtime here (a blocking drop).
                if let Some(rt) = own_runtime {
                    shut_down(rt, None);
                }
                return Err(err);
            }
        };
        // Hooks that run after this point find the channel closed.
        drop(rx);
        // Stopped at once while it may have been writing?  (Only a build on
        // its own runtime is: one on the shared runtime is abandoned only
        // while the dataset's store is untouched.)
        let writing = outcome.is_none() && own_runtime.is_some() && !bridge.abandonable.get();
        match (own_runtime, gate) {
            // Its writes pass through a gate: closed, no write starts any
            // more, and only those in flight are waited for; the
            // computation in progress ends on its own.
            (Some(rt), Some(gate)) if writing => {
                shut_down(rt, None);
                let _ = blocking(|| gate.close_and_drain(SHUTDOWN_WAIT));
            }
            // Otherwise wait until every task is dropped and every file
            // operation has ended.  (It ended, or it was only computing:
            // nothing of it can still write.)
            (Some(rt), _) => shut_down(rt, writing.then_some(SHUTDOWN_WAIT)),
            (None, _) => {}
        }
        match outcome {
            None if writing => Err(cancelled_error("while it ran; the build was stopped at once")),
            None => Err(cancelled_error("before it wrote anything; the build was abandoned")),
            Some(Ok(Ok(value))) => Ok(value),
            Some(Ok(Err(_))) if self.aborted() => Err(cancelled_error("at a build checkpoint")),
            Some(Ok(Err(err))) => Err(err.into()),
            Some(Err(join)) if join.is_panic() => {
                Err(CError::new(Code::Panic, "internal panic in the index build".to_string()))
            }
            Some(Err(_)) => Err(cancelled_error("while it ran")),
        }
    }

    fn aborted(&self) -> bool {
        self.bridge.as_ref().is_some_and(|b| b.aborted.load(Ordering::SeqCst))
    }
}

/// A stage of this library's own, open around core work (a training, an
/// optimize call): open from the start until the core starts a stage of its
/// own or the work ends, so that one stage is open at a time.
#[derive(Debug)]
struct Stages {
    hooks: Arc<dyn IndexBuildProgress>,
    stage: &'static str,
    open: AtomicBool,
}

impl Stages {
    async fn open(
        hooks: Arc<dyn IndexBuildProgress>,
        stage: &'static str,
        total: Option<u64>,
        unit: &str,
    ) -> lance::Result<Arc<Self>> {
        hooks.stage_start(stage, total, unit).await?;
        Ok(Arc::new(Stages { hooks, stage, open: AtomicBool::new(true) }))
    }

    async fn close(&self) -> lance::Result<()> {
        if self.open.swap(false, Ordering::SeqCst) {
            self.hooks.stage_complete(self.stage).await?;
        }
        Ok(())
    }
}

#[async_trait]
impl IndexBuildProgress for Stages {
    async fn stage_start(&self, stage: &str, total: Option<u64>, unit: &str) -> lance::Result<()> {
        self.close().await?;
        self.hooks.stage_start(stage, total, unit).await
    }

    async fn stage_progress(&self, stage: &str, completed: u64) -> lance::Result<()> {
        self.hooks.stage_progress(stage, completed).await
    }

    async fn stage_complete(&self, stage: &str) -> lance::Result<()> {
        self.hooks.stage_complete(stage).await
    }
}

impl Session {
    /// Runs the core's `work` (given the hooks to report to, None when
    /// nobody listens) inside `stage`, a stage of this library's own whose
    /// start and end the core does not report: its start (`total`, `unit`)
    /// is the work's first checkpoint, and it is completed before the
    /// core's first stage starts or when the work ends.  `writes`: the work
    /// writes to the dataset (it commits), so a cancel stops it only at a
    /// checkpoint, never between two, and once it has ended a cancel's
    /// refusal of the closing event is not the outcome; work that writes
    /// nothing may be stopped anywhere.
    pub fn run_in_stage<T, W, F>(
        self,
        (stage, total, unit): (&'static str, Option<u64>, &'static str),
        writes: bool,
        work: W,
    ) -> CResult<T>
    where
        T: Send + 'static,
        W: FnOnce(Option<Arc<dyn IndexBuildProgress>>) -> F + Send + 'static,
        F: Future<Output = lance::Result<T>> + Send + 'static,
    {
        let hooks = self.hooks();
        let staged = async move {
            let Some(hooks) = hooks else { return work(None).await };
            let stages = Stages::open(hooks, stage, total, unit).await?;
            let out = work(Some(stages.clone())).await?;
            let closed = stages.close().await;
            if !writes {
                closed?;
            }
            Ok(out)
        };
        self.run(staged, !writes, None)
    }
}

/// Progress and cancellation for work that runs on the caller's thread in
/// steps (a distributed-training round): each checkpoint looks at the token
/// and then calls the C callback directly, so the callback runs on the
/// caller's thread, never twice at once, never after the call returned.
pub struct Steps {
    delivery: Delivery,
    cancel: Option<Arc<CancelState>>,
    what: &'static str,
}

impl BuildControl {
    /// Checkpoints for steps run on this thread; `what` names the work in
    /// the cancel error ("the training round").
    pub fn steps(&self, what: &'static str) -> Steps {
        Steps {
            delivery: Delivery { callback: self.progress, last: HashMap::new() },
            cancel: self.cancel.clone(),
            what,
        }
    }
}

impl Steps {
    fn cancelled(&self) -> CError {
        CError::new(Code::Cancelled, format!("{} was cancelled through its cancel token", self.what))
    }

    /// A checkpoint without an event: LANCE_ERR_CANCELLED once the token is set.
    pub fn check(&self) -> CResult<()> {
        if self.cancel.as_ref().is_some_and(|c| c.is_set()) {
            return Err(self.cancelled());
        }
        Ok(())
    }

    pub fn start(&mut self, stage: &str, total: u64, unit: &str) -> CResult<()> {
        self.check()?;
        self.delivery.deliver(Event::Start { stage: stage.to_string(), total: Some(total), unit: unit.to_string() });
        Ok(())
    }

    pub fn progress(&mut self, stage: &str, completed: u64) -> CResult<()> {
        self.check()?;
        self.delivery.deliver(Event::Progress { stage: stage.to_string(), completed });
        Ok(())
    }

    pub fn complete(&mut self, stage: &str) -> CResult<()> {
        self.check()?;
        self.delivery.deliver(Event::Complete { stage: stage.to_string() });
        Ok(())
    }

    /// Runs `fut` on this thread and drops it at once when the token is
    /// cancelled (for futures that only read: nothing is left half-done).
    pub fn block_on<T>(&self, fut: impl Future<Output = T>) -> CResult<T> {
        self.check()?;
        let Some(cancel) = self.cancel.clone() else { return block_on(fut) };
        let mut fut = std::pin::pin!(fut);
        let out = block_on(std::future::poll_fn(|cx| {
            cancel.wait(cx.waker());
            if cancel.is_set() {
                return Poll::Ready(None);
            }
            fut.as_mut().poll(cx).map(Some)
        }))?;
        out.ok_or_else(|| self.cancelled())
    }
}
