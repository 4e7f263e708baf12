//! lance.h section "Sessions": the core's index and metadata caches, shared
//! by every dataset opened with one session.

use std::ffi::c_char;
use std::sync::Arc;

use lance::session::Session;

use crate::floor::error::{guard, invalid, status, CResult};
use crate::floor::ffi::{free_handle, handle_ref, into_handle, require_out, required_nonempty_str, storage_options, write_out};
use crate::floor::handle::{open_dataset, LanceDataset};
use crate::floor::runtime::block_on;

/// A session: the core's `Session`, which datasets opened with it share
/// (they hold their own reference, so they outlive the handle).
pub struct LanceSession {
    session: Arc<Session>,
}

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

fn capacity(bytes: u64, name: &str) -> CResult<usize> {
    usize::try_from(bytes).map_err(|_| invalid(format!("{name} = {bytes} does not fit this platform's size_t")))
}

#[no_mangle]
pub unsafe extern "C" fn lance_session_new(
    index_cache_size_bytes: u64,
    metadata_cache_size_bytes: u64,
) -> *mut LanceSession {
    guard(std::ptr::null_mut(), || {
        let index = capacity(index_cache_size_bytes, "index_cache_size_bytes")?;
        let metadata = capacity(metadata_cache_size_bytes, "metadata_cache_size_bytes")?;
        // 0 is a capacity of 0 bytes (nothing is cached), as the core takes it.
        let session = Session::new(index, metadata, Default::default());
        Ok(into_handle(LanceSession { session: Arc::new(session) }))
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
        let session = Arc::clone(&handle_ref(session, "session")?.session);
        let dataset = open_dataset(uri, options, version, Some(session))?;
        Ok(into_handle(LanceDataset::new(dataset)))
    })
}
