//! The session data cache (lance.h "Sessions", "Data cache"): fixed-size
//! blocks of object-store files, in memory and optionally in a local
//! directory, put between the core and its object store through the core's
//! own hook (`WrappingObjectStore`).  Only ranged reads go through the
//! cache: they are what the core issues for data, deletion and index files,
//! whose names never get new content.  Everything else (writes, listings,
//! whole-object reads such as manifests, conditional reads) passes through.

use std::fmt;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use lance_io::object_store::WrappingObjectStore;
use object_store::list::PaginatedListStore;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetRange, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
};

use crate::boundary::error::{invalid, CError, CResult, Code};
use crate::store::store_wrap::pass_streams_through;

/// Defaults written in lance.h (`LanceDataCacheOptions`).
const DEFAULT_MEMORY_BYTES: u64 = 64 << 20;
const DEFAULT_DISK_BYTES: u64 = 1 << 30;
const DEFAULT_BLOCK_BYTES: u64 = 1 << 20;
const MAX_BLOCK_BYTES: u64 = 64 << 20;
const BLOCK_ALIGNMENT: u64 = 4096;

/// The options as the caller gave them, zeros still meaning "default".
#[derive(Default)]
pub struct DataCacheOptions {
    pub directory: Option<String>,
    pub memory_capacity_bytes: u64,
    pub disk_capacity_bytes: u64,
    pub read_block_size_bytes: u64,
}

/// One block: `block` of the object `path` in the store named `store`.
#[derive(Clone, PartialEq, Eq, Hash)]
struct BlockKey {
    store: Arc<str>,
    path: Arc<str>,
    block: u64,
}

/// A cached block, with the metadata of the object it came from (a ranged
/// read answers with the object's metadata too).
#[derive(Clone)]
struct Block {
    bytes: Bytes,
    meta: Arc<ObjectMeta>,
}

/// A block held by the disk tier: its file, its size and its object's metadata.
#[derive(Clone)]
struct DiskBlock {
    file: PathBuf,
    len: u64,
    meta: Arc<ObjectMeta>,
}

/// The disk tier: a directory of the cache's own, one file per block, an
/// index that weighs them and deletes a file when its entry is evicted.
struct DiskTier {
    directory: PathBuf,
    index: moka::sync::Cache<BlockKey, DiskBlock>,
    next_file: AtomicU64,
}

impl Drop for DiskTier {
    fn drop(&mut self) {
        // The directory is the cache's own (see `DataCache::new`).
        let _ = std::fs::remove_dir_all(&self.directory);
    }
}

/// A session's cache, shared by every dataset opened with the session.
pub struct DataCache {
    block_size: u64,
    memory: moka::sync::Cache<BlockKey, Block>,
    disk: Option<Arc<DiskTier>>,
}

impl DataCache {
    pub fn new(options: DataCacheOptions) -> CResult<Self> {
        let block_size = match options.read_block_size_bytes {
            0 => DEFAULT_BLOCK_BYTES,
            size if size % BLOCK_ALIGNMENT != 0 || size > MAX_BLOCK_BYTES => {
                return Err(invalid(format!(
                    "read_block_size_bytes = {size}; it must be a multiple of {BLOCK_ALIGNMENT} of at most \
                     {MAX_BLOCK_BYTES} (or 0 for {DEFAULT_BLOCK_BYTES})"
                )))
            }
            size => size,
        };
        if options.directory.is_none() && options.disk_capacity_bytes != 0 {
            return Err(invalid(format!(
                "disk_capacity_bytes = {} needs a directory (directory is NULL)",
                options.disk_capacity_bytes
            )));
        }
        let memory_bytes = nonzero_or(options.memory_capacity_bytes, DEFAULT_MEMORY_BYTES);
        let memory = moka::sync::Cache::builder()
            .max_capacity(memory_bytes)
            .weigher(|_key: &BlockKey, block: &Block| block_weight(block.bytes.len() as u64))
            .build();
        let disk = match options.directory {
            None => None,
            Some(parent) => {
                let disk_bytes = nonzero_or(options.disk_capacity_bytes, DEFAULT_DISK_BYTES);
                Some(Arc::new(DiskTier::new(&parent, disk_bytes)?))
            }
        };
        Ok(Self { block_size, memory, disk })
    }

    /// A block from memory, or from the disk tier (then kept in memory too).
    fn lookup(&self, key: &BlockKey) -> Option<Block> {
        if let Some(block) = self.memory.get(key) {
            return Some(block);
        }
        let disk = self.disk.as_ref()?;
        let DiskBlock { file, meta, .. } = disk.index.get(key)?;
        // A file the tier lost (removed by hand, say) is a miss.
        let bytes = Bytes::from(std::fs::read(file).ok()?);
        let block = Block { bytes, meta };
        self.memory.insert(key.clone(), block.clone());
        Some(block)
    }

    fn insert(&self, key: BlockKey, block: Block) {
        if let Some(disk) = &self.disk {
            disk.insert(&key, &block);
        }
        self.memory.insert(key, block);
    }
}

fn nonzero_or(value: u64, default: u64) -> u64 {
    if value == 0 {
        default
    } else {
        value
    }
}

fn block_weight(bytes: u64) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

impl DiskTier {
    /// A directory of its own inside `parent`, so that removing it at the
    /// end removes nothing of anyone else's.
    fn new(parent: &str, capacity: u64) -> CResult<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let directory = PathBuf::from(parent).join(format!(
            "lance-c-data-cache-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&directory).map_err(|e| {
            CError::new(Code::Io, format!("directory = '{parent}': cannot create the data cache's directory: {e}"))
        })?;
        let index = moka::sync::Cache::builder()
            .max_capacity(capacity)
            .weigher(|_key: &BlockKey, block: &DiskBlock| block_weight(block.len))
            // Every insert writes a file of its own, so a replaced entry's
            // file goes too.
            .eviction_listener(|_key, block: DiskBlock, _cause| {
                let _ = std::fs::remove_file(block.file);
            })
            .build();
        Ok(Self { directory, index, next_file: AtomicU64::new(0) })
    }

    /// Writes the block's file, then indexes it (a failed write leaves the
    /// block in memory only).
    fn insert(&self, key: &BlockKey, block: &Block) {
        let file = self.directory.join(format!("{}.block", self.next_file.fetch_add(1, Ordering::Relaxed)));
        if std::fs::write(&file, &block.bytes).is_ok() {
            let len = block.bytes.len() as u64;
            self.index.insert(key.clone(), DiskBlock { file, len, meta: Arc::clone(&block.meta) });
        }
    }
}

/// How one dataset handle's reads were served.
#[derive(Default)]
pub struct DataCacheCounters {
    pub from_cache: AtomicU64,
    pub from_remote: AtomicU64,
}

/// The core's hook: wraps each object store a dataset opens.  One per
/// dataset handle, so each handle counts its own reads (the core keys its
/// store registry by the wrapper, so handles never share a wrapped store).
#[derive(Clone)]
pub struct DataCacheWrapper {
    pub cache: Arc<DataCache>,
    pub counters: Arc<DataCacheCounters>,
}

impl fmt::Debug for DataCacheWrapper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DataCacheWrapper(block size {})", self.cache.block_size)
    }
}

impl WrappingObjectStore for DataCacheWrapper {
    fn wrap(&self, store_prefix: &str, original: Arc<dyn ObjectStore>) -> Arc<dyn ObjectStore> {
        Arc::new(CachedStore { inner: original, store: Arc::from(store_prefix), wrapper: self.clone() })
    }

    fn wrap_paginated(
        &self,
        _store_prefix: &str,
        original: Arc<dyn PaginatedListStore>,
    ) -> Option<Arc<dyn PaginatedListStore>> {
        // Listings are not cached: keep the core's paginated listing.
        Some(original)
    }
}

/// An object store whose ranged reads go through the data cache.
struct CachedStore {
    inner: Arc<dyn ObjectStore>,
    store: Arc<str>,
    wrapper: DataCacheWrapper,
}

impl fmt::Debug for CachedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CachedStore({:?})", self.inner)
    }
}

impl fmt::Display for CachedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CachedStore({})", self.inner)
    }
}

/// A plain ranged read: no preconditions, no version, not a HEAD.
fn cacheable_range(options: &GetOptions) -> Option<Range<u64>> {
    let plain = options.if_match.is_none()
        && options.if_none_match.is_none()
        && options.if_modified_since.is_none()
        && options.if_unmodified_since.is_none()
        && options.version.is_none()
        && !options.head;
    match (&options.range, plain) {
        (Some(GetRange::Bounded(range)), true) if range.start < range.end => Some(range.clone()),
        _ => None,
    }
}

impl CachedStore {
    /// Serves `range` of `location` from whole blocks: cached ones from the
    /// cache, each run of consecutive missing ones with one request.
    async fn read_range(&self, location: &Path, range: Range<u64>) -> object_store::Result<GetResult> {
        let cache = &self.wrapper.cache;
        let size = cache.block_size;
        let first = range.start / size;
        let last = (range.end - 1) / size;
        let path: Arc<str> = Arc::from(location.as_ref());
        let key = |block| BlockKey { store: Arc::clone(&self.store), path: Arc::clone(&path), block };
        let mut blocks: Vec<Option<Block>> = (first..=last).map(|b| cache.lookup(&key(b))).collect();
        let hits: Vec<bool> = blocks.iter().map(Option::is_some).collect();
        let mut index = 0;
        while index < blocks.len() {
            if blocks[index].is_some() {
                index += 1;
                continue;
            }
            let run_start = index;
            while index < blocks.len() && blocks[index].is_none() {
                index += 1;
            }
            let from = (first + run_start as u64) * size;
            let to = (first + index as u64) * size;
            let options = GetOptions { range: Some(GetRange::Bounded(from..to)), ..Default::default() };
            let result = self.inner.get_opts(location, options).await?;
            let meta = Arc::new(result.meta.clone());
            // The store answers short at the object's end.
            let fetched = result.bytes().await?;
            self.wrapper.counters.from_remote.fetch_add(fetched.len() as u64, Ordering::Relaxed);
            for (offset, slot) in blocks[run_start..index].iter_mut().enumerate() {
                let begin = (offset as u64 * size).min(fetched.len() as u64) as usize;
                let end = ((offset as u64 + 1) * size).min(fetched.len() as u64) as usize;
                let block = Block { bytes: fetched.slice(begin..end), meta: Arc::clone(&meta) };
                cache.insert(key(first + run_start as u64 + offset as u64), block.clone());
                *slot = Some(block);
            }
        }
        let mut out = BytesMut::with_capacity((range.end - range.start) as usize);
        let mut meta = None;
        let mut cached = 0u64;
        for (offset, block) in blocks.into_iter().enumerate() {
            let block = block.expect("every block was looked up or fetched");
            let block_start = (first + offset as u64) * size;
            let begin = range.start.saturating_sub(block_start).min(block.bytes.len() as u64) as usize;
            let end = (range.end - block_start).min(block.bytes.len() as u64) as usize;
            out.extend_from_slice(&block.bytes[begin..end]);
            meta.get_or_insert_with(|| Arc::clone(&block.meta));
            if hits[offset] {
                cached += (end - begin) as u64;
            }
        }
        let meta = ObjectMeta::clone(&meta.expect("a range covers at least one block"));
        // As the stores answer: a range starting past the end is an error,
        // one ending past it gets the remainder.
        if range.start >= meta.size {
            return Err(object_store::Error::Generic {
                store: "data cache",
                source: format!(
                    "range {}..{} of '{location}' starts past its {} bytes",
                    range.start, range.end, meta.size
                )
                .into(),
            });
        }
        let range = range.start..range.end.min(meta.size);
        self.wrapper.counters.from_cache.fetch_add(cached, Ordering::Relaxed);
        let bytes = out.freeze();
        Ok(GetResult {
            payload: GetResultPayload::Stream(futures::stream::once(async move { Ok(bytes) }).boxed()),
            meta,
            range,
            attributes: Default::default(),
            extensions: Default::default(),
        })
    }
}

#[async_trait]
impl ObjectStore for CachedStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> object_store::Result<GetResult> {
        match cacheable_range(&options) {
            Some(range) => self.read_range(location, range).await,
            None => self.inner.get_opts(location, options).await,
        }
    }

    pass_streams_through!();

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> object_store::Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}
