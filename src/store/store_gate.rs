//! The gate in front of a segment build's own store client (index/build.rs
//! makes one for each s3:// segment build whose files it can find).  Every
//! request of the build that writes to the dataset's store (a PUT, the start
//! and completion of a multipart upload, each of its parts, a copy, a
//! rename) passes through it.  A cancel closes the gate: from then on such
//! requests fail before anything is sent, and the cancel waits only for the
//! requests in flight, not for the computation the build is in (the core's
//! partition writer computes a whole partition between two awaits, tens of
//! milliseconds at a million rows).  Each request runs as a task of the
//! shared runtime, not of the build's: dropping the build, which drops the
//! futures waiting on them, never cuts off a request that makes an object
//! once its body was sent (the store could still carry it out after the
//! cancel removed the segment's files); those the cancel waits for.  Parts
//! of multipart uploads it drops instead: they make no object.  The gate
//! knows every multipart upload the build started and has not completed,
//! so the cancel starts their aborts itself, at once (an upload whose start
//! is in flight is aborted as soon as the store answers).  An upload that
//! had parts in flight is aborted once more a moment later, as S3 asks,
//! for a part that landed after the first abort.
//!
//! The cancel does not wait for these aborts, nor for the removal of the
//! segment's files, which ends with a listing of the incomplete uploads
//! left under the segment (index/build.rs, store/uploads.rs): they only
//! remove, and a store may take its time over any request just after parts
//! were cut off (SeaweedFS answered in 60-140 ms at a million rows, against
//! 20 ms idle).  They run on the shared runtime (`spawn_cleanup`), which a
//! process that exits waits for (at most EXIT_WAIT).  The build's own
//! aborts (the core's writer, dropped mid-file, sends one from a task of
//! the build's runtime) run there too, so that a cancel shutting that
//! runtime down does not cut them off.  Reads, listings and deletes pass
//! the gate unchanged.

use std::fmt;
use std::future::Future;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Once};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use lance_io::object_store::WrappingObjectStore;
use object_store::list::PaginatedListStore;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectStore, PutMultipartOptions, PutOptions,
    PutPayload, PutResult, RenameOptions, UploadPart,
};
use tokio::task::AbortHandle;

use crate::process::runtime::shared_handle;
use crate::store::store_wrap::pass_streams_through;

/// Open, or closed by a cancel; counts the writes let through that have not
/// ended.
#[derive(Debug, Default)]
pub struct Gate {
    state: Mutex<GateState>,
    idle: Condvar,
}

#[derive(Debug, Default)]
struct GateState {
    closed: bool,
    in_flight: usize,
    /// The parts in flight (pruned as new ones start): a cancel drops them.
    parts: Vec<AbortHandle>,
    /// The multipart uploads started and neither completed nor aborted: a
    /// cancel aborts them.
    uploads: Vec<Slot>,
    /// A cancel could not start the abort of every upload (the shared
    /// runtime was not there), or its wait for the writes ended first.
    unsettled: bool,
}

/// Where an open multipart upload is kept; empty while its completion is
/// in flight, and once it was completed or aborted.
type Slot = Arc<Mutex<Option<Box<dyn MultipartUpload>>>>;

fn lock_slot(slot: &Slot) -> MutexGuard<'_, Option<Box<dyn MultipartUpload>>> {
    slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Gate {
    fn state(&self) -> MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Lets one write through, or refuses it once the gate is closed.
    fn enter(self: &Arc<Self>) -> object_store::Result<Pass> {
        let mut state = self.state();
        if state.closed {
            return Err(closed());
        }
        state.in_flight += 1;
        Ok(Pass(self.clone()))
    }

    /// Closes the gate, drops the parts in flight and starts the abort of
    /// every open upload, then blocks until every write let through has
    /// ended or `wait` has passed.  Blocking: call it off the runtimes'
    /// worker threads (process/runtime.rs `blocking`).
    pub fn close_and_drain(&self, wait: Duration) {
        let deadline = Instant::now() + wait;
        let mut state = self.state();
        state.closed = true;
        let mut parts_cut = false;
        for part in state.parts.drain(..) {
            parts_cut |= !part.is_finished();
            part.abort();
        }
        let open: Vec<_> = std::mem::take(&mut state.uploads);
        for slot in open {
            if let Some(upload) = lock_slot(&slot).take() {
                state.unsettled |= !start_abort(upload, parts_cut);
            }
        }
        while state.in_flight > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                state.unsettled = true;
                return;
            }
            state = self.idle.wait_timeout(state, left).unwrap_or_else(|poisoned| poisoned.into_inner()).0;
        }
    }

    /// Whether a cancel closed the gate and, with every write ended,
    /// started the abort of every multipart upload the build had left open
    /// (a drain that ran out of time leaves it unsettled).
    pub fn uploads_settled(&self) -> bool {
        let state = self.state();
        state.closed && !state.unsettled
    }

    /// Keeps an upload that is open (just started, or its completion
    /// failed) in `slot` for a cancel to abort; once the gate is closed,
    /// starts its abort instead.  Called by a write still holding its
    /// pass, so the cancel's `uploads_settled` accounts for it.
    fn keep(&self, slot: &Slot, upload: Box<dyn MultipartUpload>) -> object_store::Result<()> {
        let mut state = self.state();
        if state.closed {
            state.unsettled |= !start_abort(upload, false);
            return Err(closed());
        }
        *lock_slot(slot) = Some(upload);
        if !state.uploads.iter().any(|kept| Arc::ptr_eq(kept, slot)) {
            state.uploads.push(slot.clone());
        }
        Ok(())
    }

    /// An upload completed or aborted: a cancel has nothing to abort there.
    fn forget(&self, slot: &Slot) {
        self.state().uploads.retain(|kept| !Arc::ptr_eq(kept, slot));
    }
}

fn unanswered() -> object_store::Error {
    object_store::Error::Generic {
        store: "lance-c",
        source: "the abort of the multipart upload was not answered".into(),
    }
}

fn closed() -> object_store::Error {
    object_store::Error::Generic {
        store: "lance-c",
        source: "the index build was cancelled: it writes nothing more to the store".into(),
    }
}

/// How long after a first abort an upload whose parts were cut off is
/// aborted again: S3 may still take in a part sent before the abort
/// ("it might be necessary to abort a given multipart upload multiple
/// times", its AbortMultipartUpload reference).
const ABORT_AGAIN_AFTER: Duration = Duration::from_millis(500);

/// How long an abort of an upload is waited for: one sent on a connection
/// of the build's client may go unanswered once the build's runtime is shut
/// down (seen once in 90 cancels; the removal's sweep, index/build.rs, then
/// aborts the upload with a client of its own).
const ABORT_WAIT: Duration = Duration::from_secs(2);

/// How long a process that exits waits for the cleanups.
const EXIT_WAIT: Duration = Duration::from_secs(5);

/// The cleanups that have not ended, in the whole process.
static CLEANUPS: Mutex<usize> = Mutex::new(0);
static CLEANUPS_ENDED: Condvar = Condvar::new();

fn cleanups() -> MutexGuard<'static, usize> {
    CLEANUPS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One cleanup counted in CLEANUPS until dropped.
struct Counted;

impl Drop for Counted {
    fn drop(&mut self) {
        let mut left = cleanups();
        *left -= 1;
        if *left == 0 {
            CLEANUPS_ENDED.notify_all();
        }
    }
}

/// Runs `cleanup` (an abort, or the removal of a cancelled build's files)
/// on the shared runtime, where dropping the build cannot cut it off, also
/// after the build's call returned; a process that exits first waits for
/// it, at most EXIT_WAIT.  False when the runtime is not there (nothing
/// was started).
pub fn spawn_cleanup(cleanup: impl Future<Output = ()> + Send + 'static) -> bool {
    let Ok(handle) = shared_handle() else { return false };
    static AT_EXIT: Once = Once::new();
    // SAFETY: registering a plain extern "C" function with atexit.
    AT_EXIT.call_once(|| unsafe {
        libc::atexit(wait_for_cleanups);
    });
    *cleanups() += 1;
    let counted = Counted;
    handle.spawn(async move {
        let _counted = counted;
        cleanup.await;
    });
    true
}

/// At exit: waits until the cleanups have ended (the runtime's threads run
/// until the process ends), at most EXIT_WAIT.
extern "C" fn wait_for_cleanups() {
    let deadline = Instant::now() + EXIT_WAIT;
    let mut left = cleanups();
    while *left > 0 {
        let wait = deadline.saturating_duration_since(Instant::now());
        if wait.is_zero() {
            return;
        }
        left = CLEANUPS_ENDED.wait_timeout(left, wait).unwrap_or_else(|poisoned| poisoned.into_inner()).0;
    }
}

/// Starts aborting `upload` after the return (`again`: once more after
/// ABORT_AGAIN_AFTER); false when the runtime is not there, the upload
/// then left for a listing of incomplete uploads to find.  An abort the
/// store refuses leaves it for `lance-index cleanup` (lance.h).
fn start_abort(mut upload: Box<dyn MultipartUpload>, again: bool) -> bool {
    spawn_cleanup(async move {
        let first = tokio::time::timeout(ABORT_WAIT, upload.abort()).await;
        if matches!(first, Ok(Ok(()))) && again {
            tokio::time::sleep(ABORT_AGAIN_AFTER).await;
            // Refused with NoSuchUpload when nothing landed after the first.
            let _ = tokio::time::timeout(ABORT_WAIT, upload.abort()).await;
        }
    })
}

/// One write let through; it has ended when this is dropped.
struct Pass(Arc<Gate>);

impl Drop for Pass {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.in_flight -= 1;
        if state.in_flight == 0 {
            self.0.idle.notify_all();
        }
    }
}

/// How a write in flight meets a cancel.
#[derive(Clone, Copy, PartialEq)]
enum OnCancel {
    /// Waited for: a write that makes an object (a PUT, a completion, a
    /// copy), which the store could still carry out after the cancel's
    /// removal if it were cut off once its body was sent.
    Finish,
    /// Dropped: a part of a multipart upload, which makes no object and
    /// goes with its upload when the cancel aborts it (waiting for megabytes
    /// of parts would make the cancel wait for their transfer).
    Drop,
}

/// Sends a write let through by `pass` as a task of the shared runtime and
/// waits for it; the pass ends with the task, not with the waiting.
async fn send<T: Send + 'static>(
    pass: Pass,
    on_cancel: OnCancel,
    write: impl Future<Output = object_store::Result<T>> + Send + 'static,
) -> object_store::Result<T> {
    let gate = pass.0.clone();
    let task = async move {
        let out = write.await;
        drop(pass);
        out
    };
    match shared_handle() {
        Ok(handle) => {
            let task = handle.spawn(task);
            if on_cancel == OnCancel::Drop {
                let mut state = gate.state();
                if state.closed {
                    task.abort();
                } else {
                    state.parts.retain(|part| !part.is_finished());
                    state.parts.push(task.abort_handle());
                }
            }
            match task.await {
                Ok(out) => out,
                Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
                Err(join) => Err(object_store::Error::Generic { store: "lance-c", source: Box::new(join) }),
            }
        }
        // The shared runtime could not start (out of threads): send it here.
        Err(_) => task.await,
    }
}

/// The core's hook (`WrappingObjectStore`): puts the gate in front of the
/// store, after the wrapper the dataset already had (the data cache's).
#[derive(Debug)]
pub struct GateWrapper {
    pub gate: Arc<Gate>,
    pub inner: Option<Arc<dyn WrappingObjectStore>>,
}

impl WrappingObjectStore for GateWrapper {
    fn wrap(&self, store_prefix: &str, original: Arc<dyn ObjectStore>) -> Arc<dyn ObjectStore> {
        let inner = match &self.inner {
            Some(wrapper) => wrapper.wrap(store_prefix, original),
            None => original,
        };
        Arc::new(GatedStore { inner, gate: self.gate.clone() })
    }

    fn wrap_paginated(
        &self,
        store_prefix: &str,
        original: Arc<dyn PaginatedListStore>,
    ) -> Option<Arc<dyn PaginatedListStore>> {
        // Listings are reads: the gate keeps out of them.
        match &self.inner {
            Some(wrapper) => wrapper.wrap_paginated(store_prefix, original),
            None => Some(original),
        }
    }
}

#[derive(Debug)]
struct GatedStore {
    inner: Arc<dyn ObjectStore>,
    gate: Arc<Gate>,
}

impl fmt::Display for GatedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GatedStore({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for GatedStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        let pass = self.gate.enter()?;
        let (inner, location) = (self.inner.clone(), location.clone());
        send(pass, OnCancel::Finish, async move { inner.put_opts(&location, payload, opts).await }).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        let pass = self.gate.enter()?;
        let (inner, location, gate) = (self.inner.clone(), location.clone(), self.gate.clone());
        // The upload is kept in the gate by the write itself: a cancel that
        // drops the build while the store answers still aborts it.
        let slot = send(pass, OnCancel::Finish, async move {
            let upload = inner.put_multipart_opts(&location, opts).await?;
            let slot = Slot::default();
            gate.keep(&slot, upload)?;
            Ok(slot)
        })
        .await?;
        Ok(Box::new(GatedUpload { slot, gate: self.gate.clone() }))
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> object_store::Result<Vec<Bytes>> {
        self.inner.get_ranges(location, ranges).await
    }

    pass_streams_through!();

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> object_store::Result<()> {
        let pass = self.gate.enter()?;
        let (inner, from, to) = (self.inner.clone(), from.clone(), to.clone());
        send(pass, OnCancel::Finish, async move { inner.copy_opts(&from, &to, options).await }).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> object_store::Result<()> {
        let pass = self.gate.enter()?;
        let (inner, from, to) = (self.inner.clone(), from.clone(), to.clone());
        send(pass, OnCancel::Finish, async move { inner.rename_opts(&from, &to, options).await }).await
    }
}

/// A multipart upload whose parts and completion pass through the gate,
/// kept where a cancel finds it.
#[derive(Debug)]
struct GatedUpload {
    slot: Slot,
    gate: Arc<Gate>,
}

fn upload_taken() -> object_store::Error {
    object_store::Error::Generic { store: "lance-c", source: "the multipart upload was completed or aborted".into() }
}

#[async_trait]
impl MultipartUpload for GatedUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let pass = match self.gate.enter() {
            Ok(pass) => pass,
            Err(e) => return Box::pin(std::future::ready(Err(e))),
        };
        let part = match lock_slot(&self.slot).as_mut() {
            Some(upload) => upload.put_part(data),
            None => return Box::pin(std::future::ready(Err(upload_taken()))),
        };
        Box::pin(send(pass, OnCancel::Drop, part))
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        let pass = self.gate.enter()?;
        let mut upload = lock_slot(&self.slot).take().ok_or_else(upload_taken)?;
        // The write owns the upload while it completes; after a failure it
        // goes back to the slot (or, after a cancel, is aborted).
        let (gate, slot) = (self.gate.clone(), self.slot.clone());
        send(pass, OnCancel::Finish, async move {
            match upload.complete().await {
                Ok(done) => {
                    gate.forget(&slot);
                    Ok(done)
                }
                Err(e) => {
                    let _ = gate.keep(&slot, upload);
                    Err(e)
                }
            }
        })
        .await
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        let upload = lock_slot(&self.slot).take();
        self.gate.forget(&self.slot);
        let Some(mut upload) = upload else { return Ok(()) };
        if shared_handle().is_err() {
            return upload.abort().await;
        }
        // The core's writer, dropped mid-file, sends this abort from a task
        // of the build's runtime, which a cancel shuts down: so it runs as
        // a cleanup of the shared runtime, which nothing cuts off.
        let (done, answer) = tokio::sync::oneshot::channel();
        spawn_cleanup(async move {
            let answered = tokio::time::timeout(ABORT_WAIT, upload.abort()).await;
            let _ = done.send(answered.unwrap_or_else(|_| Err(unanswered())));
        });
        answer.await.unwrap_or_else(|_| Err(unanswered()))
    }
}
