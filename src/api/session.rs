//! lance.h section "Sessions": the core's index and metadata caches, shared
//! by every dataset opened with one session, and the session's data cache.

use std::ffi::c_char;
use std::sync::Arc;

use lance::session::Session;

use crate::boundary::error::{guard, invalid, status, CResult};
use crate::boundary::ffi::{
    free_handle, handle_ref, into_handle, optional_str, require_out, required_nonempty_str, storage_options, write_out,
};
use crate::process::runtime::block_on;
use crate::store::data_cache::{DataCache, DataCacheCounters, DataCacheOptions, DataCacheWrapper};
use crate::store::handle::{dataset_ref, open_dataset, LanceDataset};

/// A session: the core's `Session`, which datasets opened with it share
/// (they hold their own reference, so they outlive the handle).
pub struct LanceSession {
    session: Arc<Session>,
    data_cache: Option<Arc<DataCache>>,
}

/// Mirrors `LanceDataCacheOptions` in lance.h.
#[repr(C)]
pub struct LanceDataCacheOptions {
    pub directory: *const c_char,
    pub memory_capacity_bytes: u64,
    pub disk_capacity_bytes: u64,
    pub read_block_size_bytes: u64,
}
crate::c_layout!(LanceDataCacheOptions, 32;
    directory @ 0,
    memory_capacity_bytes @ 8,
    disk_capacity_bytes @ 16,
    read_block_size_bytes @ 24,
);

/// Mirrors `LanceDataCacheStatistics` in lance.h.
#[repr(C)]
pub struct LanceDataCacheStatistics {
    pub bytes_read_from_cache: u64,
    pub bytes_read_from_remote: u64,
}
crate::c_layout!(LanceDataCacheStatistics, 16; bytes_read_from_cache @ 0, bytes_read_from_remote @ 8);

/// Mirrors `LanceSessionCacheStats` in lance.h.
#[repr(C)]
pub struct LanceSessionCacheStats {
    pub index_cache_hits: u64,
    pub index_cache_misses: u64,
    pub index_cache_entries: u64,
    pub index_cache_size_bytes: u64,
    pub metadata_cache_hits: u64,
    pub metadata_cache_misses: u64,
    pub metadata_cache_entries: u64,
    pub metadata_cache_size_bytes: u64,
}
crate::c_layout!(LanceSessionCacheStats, 64;
    index_cache_hits @ 0,
    index_cache_misses @ 8,
    index_cache_entries @ 16,
    index_cache_size_bytes @ 24,
    metadata_cache_hits @ 32,
    metadata_cache_misses @ 40,
    metadata_cache_entries @ 48,
    metadata_cache_size_bytes @ 56,
);

fn capacity(bytes: u64, name: &str) -> CResult<usize> {
    usize::try_from(bytes).map_err(|_| invalid(format!("{name} = {bytes} does not fit this platform's size_t")))
}

#[no_mangle]
pub unsafe extern "C" fn lance_session_new(
    index_cache_size_bytes: u64,
    metadata_cache_size_bytes: u64,
) -> *mut LanceSession {
    guard(std::ptr::null_mut(), || new_session(index_cache_size_bytes, metadata_cache_size_bytes, None))
}

/// A session handle with the core's caches of the given sizes.
fn new_session(index_bytes: u64, metadata_bytes: u64, data_cache: Option<DataCache>) -> CResult<*mut LanceSession> {
    let index = capacity(index_bytes, "index_cache_size_bytes")?;
    let metadata = capacity(metadata_bytes, "metadata_cache_size_bytes")?;
    // 0 is a capacity of 0 bytes (nothing is cached), as the core takes it.
    let session = Session::new(index, metadata, Default::default());
    Ok(into_handle(LanceSession { session: Arc::new(session), data_cache: data_cache.map(Arc::new) }))
}

#[no_mangle]
pub unsafe extern "C" fn lance_session_new_with_data_cache(
    index_cache_size_bytes: u64,
    metadata_cache_size_bytes: u64,
    options: *const LanceDataCacheOptions,
) -> *mut LanceSession {
    guard(std::ptr::null_mut(), || {
        let options = match options.as_ref() {
            None => DataCacheOptions::default(),
            Some(o) => DataCacheOptions {
                directory: optional_str(o.directory, "options->directory")?.map(str::to_string),
                memory_capacity_bytes: o.memory_capacity_bytes,
                disk_capacity_bytes: o.disk_capacity_bytes,
                read_block_size_bytes: o.read_block_size_bytes,
            },
        };
        new_session(index_cache_size_bytes, metadata_cache_size_bytes, Some(DataCache::new(options)?))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_get_data_cache_statistics(
    dataset: *const LanceDataset,
    out_stats: *mut LanceDataCacheStatistics,
) -> i32 {
    status(|| {
        let handle = dataset_ref(dataset)?;
        require_out(out_stats, "out_stats")?;
        let (from_cache, from_remote) = handle.data_cache_bytes();
        write_out(
            out_stats,
            LanceDataCacheStatistics { bytes_read_from_cache: from_cache, bytes_read_from_remote: from_remote },
        );
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_session_close(session: *mut LanceSession) {
    free_handle(session);
}

#[no_mangle]
pub unsafe extern "C" fn lance_session_get_cache_stats(
    session: *const LanceSession,
    out_stats: *mut LanceSessionCacheStats,
) -> i32 {
    status(|| {
        let session = &handle_ref(session, "session")?.session;
        require_out(out_stats, "out_stats")?;
        let (index, metadata) =
            block_on(async { (session.index_cache_stats().await, session.metadata_cache_stats().await) })?;
        write_out(
            out_stats,
            LanceSessionCacheStats {
                index_cache_hits: index.hits,
                index_cache_misses: index.misses,
                index_cache_entries: index.num_entries as u64,
                index_cache_size_bytes: index.size_bytes as u64,
                metadata_cache_hits: metadata.hits,
                metadata_cache_misses: metadata.misses,
                metadata_cache_entries: metadata.num_entries as u64,
                metadata_cache_size_bytes: metadata.size_bytes as u64,
            },
        );
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_open_with_session(
    uri: *const c_char,
    storage_opts: *const *const c_char,
    version: u64,
    session: *const LanceSession,
) -> *mut LanceDataset {
    guard(std::ptr::null_mut(), || {
        let uri = required_nonempty_str(uri, "uri")?;
        let options = storage_options(storage_opts)?;
        let session = handle_ref(session, "session")?;
        let data_cache = session.data_cache.as_ref().map(|cache| DataCacheWrapper {
            cache: Arc::clone(cache),
            counters: Arc::new(DataCacheCounters::default()),
        });
        let counters = data_cache.as_ref().map(|w| Arc::clone(&w.counters));
        let dataset = open_dataset(uri, options, version, Some(Arc::clone(&session.session)), data_cache)?;
        Ok(into_handle(match counters {
            Some(counters) => LanceDataset::with_data_cache(dataset, counters),
            None => LanceDataset::new(dataset),
        }))
    })
}
