//! The dataset handle: one snapshot that readers clone, and a commit lock
//! that serializes the calls committing through the handle.  Plus what
//! every section needs of a snapshot: opening one, and checking caller
//! fragment ids against it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use lance::dataset::builder::DatasetBuilder;
use lance::session::Session;
use lance::Dataset;

use lance_io::object_store::{ObjectStoreParams, WrappingObjectStore};

use crate::boundary::error::{invalid, CResult, Context};
use crate::boundary::ffi::{fragment_id_u32, handle_ref, slice_arg};
use crate::process::runtime::block_on;
use crate::store::data_cache::{DataCacheCounters, DataCacheWrapper};

/// An open dataset. It holds one snapshot (one version); calls that commit
/// through the handle move it to the version they committed.
///
/// Two locks, so that readers never wait for a writer: `snapshot` is held
/// only to clone or replace an `Arc`, and `commit` serializes the calls that
/// commit through the handle for as long as they run (a whole index build).
pub struct LanceDataset {
    snapshot: Mutex<Arc<Dataset>>,
    commit: Mutex<()>,
    id: u64,
    /// The handle's reads through its session's data cache, if it has one.
    data_cache: Option<Arc<DataCacheCounters>>,
}

impl LanceDataset {
    pub fn new(dataset: Dataset) -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        Self { snapshot: Mutex::new(Arc::new(dataset)), commit: Mutex::new(()), id, data_cache: None }
    }

    /// A handle opened through a session's data cache, counting its reads.
    pub fn with_data_cache(dataset: Dataset, counters: Arc<DataCacheCounters>) -> Self {
        Self { data_cache: Some(counters), ..Self::new(dataset) }
    }

    /// (bytes from the data cache, bytes from the store); zeros without one.
    pub fn data_cache_bytes(&self) -> (u64, u64) {
        self.data_cache
            .as_ref()
            .map_or((0, 0), |c| (c.from_cache.load(Ordering::Relaxed), c.from_remote.load(Ordering::Relaxed)))
    }

    /// Tells handles apart for as long as the process runs (an address
    /// could be reused after a close).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The snapshot the handle holds now.
    pub fn snapshot(&self) -> Arc<Dataset> {
        Arc::clone(&self.snapshot.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Runs a mutation on a private copy of the snapshot and publishes the
    /// result only if it succeeds, so a failed call leaves the handle as it
    /// was.  Mutations through one handle are serialized; reads of the
    /// handle go on meanwhile and see the snapshot from before.
    pub fn mutate<T>(&self, f: impl FnOnce(&mut Dataset) -> CResult<T>) -> CResult<T> {
        let _serialized = self.commit.lock().unwrap_or_else(|e| e.into_inner());
        let mut copy = Dataset::clone(&self.snapshot());
        let value = f(&mut copy)?;
        *self.snapshot.lock().unwrap_or_else(|e| e.into_inner()) = Arc::new(copy);
        Ok(value)
    }
}

/// Borrows a dataset handle argument.
pub unsafe fn dataset_ref<'a>(ptr: *const LanceDataset) -> CResult<&'a LanceDataset> {
    handle_ref(ptr, "dataset")
}

/// Opens `uri` at `version` (0 = latest).  With a session the dataset's
/// caches are the session's (shared with every dataset opened with it);
/// without one the core gives the dataset caches of its own.  A data cache
/// wrapper puts the session's data cache between the dataset and its store.
pub fn open_dataset(
    uri: &str,
    options: HashMap<String, String>,
    version: u64,
    session: Option<Arc<Session>>,
    data_cache: Option<DataCacheWrapper>,
) -> CResult<Dataset> {
    let mut builder = DatasetBuilder::from_uri(uri);
    if let Some(wrapper) = data_cache {
        let wrapper: Arc<dyn WrappingObjectStore> = Arc::new(wrapper);
        builder =
            builder.with_store_params(ObjectStoreParams { object_store_wrapper: Some(wrapper), ..Default::default() });
    }
    let mut builder = builder.with_storage_options(options);
    if version != 0 {
        builder = builder.with_version(version);
    }
    if let Some(session) = session {
        builder = builder.with_session(session);
    }
    block_on(builder.load())?.context(format!("opening dataset '{uri}'"))
}

/// Checks caller fragment ids against a snapshot: each must name one of its
/// fragments, at most once.  Messages name the argument, position and value.
pub fn check_fragment_ids(ds: &Dataset, ids: &[u64], name: &str) -> CResult<Vec<u32>> {
    let version = ds.version().version;
    // One pass over the manifest, not one for each id.
    let present: std::collections::HashSet<u64> = ds.manifest.fragments.iter().map(|f| f.id).collect();
    let mut seen = std::collections::HashSet::with_capacity(ids.len());
    let mut out = Vec::with_capacity(ids.len());
    for (i, &id) in ids.iter().enumerate() {
        if !present.contains(&id) {
            return Err(invalid(format!("{name}[{i}] = {id} is not a fragment of dataset version {version}")));
        }
        if !seen.insert(id) {
            return Err(invalid(format!("{name}[{i}] = {id} is listed twice")));
        }
        out.push(fragment_id_u32(id, name, i)?);
    }
    Ok(out)
}

/// A `uint32_t` fragment id list argument: NULL with count 0 means "no
/// restriction"; a non-NULL list must be non-empty, without duplicates, and
/// name fragments of the snapshot.
pub unsafe fn fragment_list(ds: &Dataset, ids: *const u32, count: usize, name: &str) -> CResult<Option<Vec<u32>>> {
    if ids.is_null() {
        if count != 0 {
            return Err(invalid(format!("{name} is NULL but its count is {count}")));
        }
        return Ok(None);
    }
    if count == 0 {
        return Err(invalid(format!("{name} is an empty list; pass NULL with count 0 for the whole dataset")));
    }
    let ids: Vec<u64> = slice_arg(ids, count, name)?.iter().map(|&id| u64::from(id)).collect();
    check_fragment_ids(ds, &ids, name).map(Some)
}
