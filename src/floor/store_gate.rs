//! The gate in front of a segment build's own store client (floor/build.rs
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
//! of multipart uploads it drops instead: they make no object, and their
//! upload is aborted after the cancel (floor/build.rs).  Reads, listings,
//! deletes and aborts pass unchanged.

use std::fmt;
use std::future::Future;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use lance_io::object_store::WrappingObjectStore;
use object_store::list::PaginatedListStore;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectStore, PutMultipartOptions,
    PutOptions, PutPayload, PutResult, RenameOptions, UploadPart,
};
use tokio::task::AbortHandle;

use crate::floor::runtime::shared_handle;
use crate::floor::store_wrap::pass_streams_through;

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
}

impl Gate {
    fn state(&self) -> MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Lets one write through, or refuses it once the gate is closed.
    fn enter(self: &Arc<Self>) -> object_store::Result<Pass> {
        let mut state = self.state();
        if state.closed {
            return Err(object_store::Error::Generic {
                store: "lance-c",
                source: "the index build was cancelled: it writes nothing more to the store".into(),
            });
        }
        state.in_flight += 1;
        Ok(Pass(self.clone()))
    }

    /// Closes the gate, then blocks until every write let through has ended
    /// or `wait` has passed.  Blocking: call it off the runtimes' worker
    /// threads (floor/runtime.rs `blocking`).
    pub fn close_and_drain(&self, wait: Duration) {
        let deadline = Instant::now() + wait;
        let mut state = self.state();
        state.closed = true;
        for part in state.parts.drain(..) {
            part.abort();
        }
        while state.in_flight > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            state = self.idle.wait_timeout(state, left).unwrap_or_else(|poisoned| poisoned.into_inner()).0;
        }
    }
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
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> object_store::Result<PutResult> {
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
        let (inner, location) = (self.inner.clone(), location.clone());
        let upload = send(pass, OnCancel::Finish, async move { inner.put_multipart_opts(&location, opts).await }).await?;
        Ok(Box::new(GatedUpload { inner: Some(upload), gate: self.gate.clone() }))
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

/// A multipart upload whose parts and completion pass through the gate.
#[derive(Debug)]
struct GatedUpload {
    /// None while a completion is in flight (it owns the upload then).
    inner: Option<Box<dyn MultipartUpload>>,
    gate: Arc<Gate>,
}

fn upload_taken() -> object_store::Error {
    object_store::Error::Generic { store: "lance-c", source: "the multipart upload was completed".into() }
}

#[async_trait]
impl MultipartUpload for GatedUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let Some(upload) = self.inner.as_mut() else {
            return Box::pin(std::future::ready(Err(upload_taken())));
        };
        match self.gate.enter() {
            Ok(pass) => Box::pin(send(pass, OnCancel::Drop, upload.put_part(data))),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        let pass = self.gate.enter()?;
        let mut upload = self.inner.take().ok_or_else(upload_taken)?;
        // The task owns the upload while it completes; it comes back after.
        let (upload, out) = send(pass, OnCancel::Finish, async move {
            let out = upload.complete().await;
            Ok((upload, out))
        })
        .await?;
        self.inner = Some(upload);
        out
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        match self.inner.as_mut() {
            Some(upload) => upload.abort().await,
            None => Ok(()),
        }
    }
}
