//! lance.h section "Distributed index builds: commit" (RFC E5), the
//! coordinator side: commit segments that workers built as one logical
//! index, in one new dataset version.
//!
//! The checks and the commit itself live in index/commit.rs.

use std::ffi::c_char;

use lance_table::format::IndexMetadata;

use crate::boundary::error::{invalid, status, CError, CResult, Code};
use crate::boundary::ffi::{optional_str, require_out, required_nonempty_str, slice_arg, write_bytes_out, write_out};
use crate::index::codec::{decode_metadata, encode_metadata};
use crate::index::commit::{commit, merge, Options};
use crate::store::handle::{dataset_ref, LanceDataset};

/// Mirrors `LanceCommitIndexOptions` in lance.h.
#[repr(C)]
pub struct LanceCommitIndexOptions {
    pub replace: bool,
    pub allow_independent_models: bool,
    pub job_id: *const c_char,
    pub attempt_id: *const c_char,
}
crate::c_layout!(LanceCommitIndexOptions, 24; replace @ 0, allow_independent_models @ 1, job_id @ 8, attempt_id @ 16);

/// Mirrors `LanceCommitIndexResult` in lance.h.
#[repr(C)]
pub struct LanceCommitIndexResult {
    pub version: u64,
    pub already_committed: bool,
}
crate::c_layout!(LanceCommitIndexResult, 16; version @ 0, already_committed @ 8);

/// A set of segment metadata byte arrays as C passes it: `count` pointers
/// and `count` lengths.
struct SegmentSet {
    bytes: *const *const u8,
    lens: *const usize,
    count: usize,
}

impl SegmentSet {
    /// The segments the set's byte arrays hold.
    unsafe fn decode(self) -> CResult<Vec<IndexMetadata>> {
        let pointers = slice_arg(self.bytes, self.count, "segment_metadata_bytes")?;
        let lens = slice_arg(self.lens, self.count, "segment_metadata_lens")?;
        let mut segments = Vec::with_capacity(self.count);
        for (i, (&ptr, &len)) in pointers.iter().zip(lens).enumerate() {
            let what = format!("segment_metadata_bytes[{i}]");
            let bytes = slice_arg(ptr, len, &what)?;
            segments.push(decode_metadata(bytes, &what)?);
        }
        Ok(segments)
    }
}

/// What every form of the commit does with its arguments: check, decode,
/// commit.
unsafe fn commit_c(
    dataset: *mut LanceDataset,
    index_name: *const c_char,
    column: *const c_char,
    set: SegmentSet,
    o: &Options,
) -> CResult<LanceCommitIndexResult> {
    let handle = dataset_ref(dataset)?;
    let name = required_nonempty_str(index_name, "index_name")?;
    let column = required_nonempty_str(column, "column")?;
    if set.count == 0 {
        return Err(CError::new(
            Code::NoSegments,
            format!("no segments to commit as index '{name}': a commit needs at least one"),
        ));
    }
    let segments = set.decode()?;
    let done = handle.mutate(|ds| commit(ds, name, column, segments, o))?;
    Ok(LanceCommitIndexResult { version: done.version, already_committed: done.already_committed })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_merge_index_segments(
    dataset: *const LanceDataset,
    segment_metadata_bytes: *const *const u8,
    segment_metadata_lens: *const usize,
    segment_count: usize,
    out_metadata_bytes: *mut *mut u8,
    out_metadata_len: *mut usize,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        require_out(out_metadata_bytes, "out_metadata_bytes")?;
        require_out(out_metadata_len, "out_metadata_len")?;
        if segment_count < 2 {
            return Err(invalid(format!("segment_count = {segment_count}: a merge takes at least two segments")));
        }
        let set = SegmentSet { bytes: segment_metadata_bytes, lens: segment_metadata_lens, count: segment_count };
        let bytes = encode_metadata(&merge(&ds, set.decode()?)?);
        write_bytes_out(out_metadata_bytes, out_metadata_len, bytes);
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn lance_dataset_commit_index_segments_v2(
    dataset: *mut LanceDataset,
    index_name: *const c_char,
    column: *const c_char,
    segment_metadata_bytes: *const *const u8,
    segment_metadata_lens: *const usize,
    segment_count: usize,
    options: *const LanceCommitIndexOptions,
    out_result: *mut LanceCommitIndexResult,
) -> i32 {
    status(|| {
        let o = match options.as_ref() {
            None => Options::fixed(false, false),
            Some(c) => Options {
                replace: c.replace,
                allow_independent_models: c.allow_independent_models,
                job_id: optional_str(c.job_id, "options->job_id")?,
                attempt_id: optional_str(c.attempt_id, "options->attempt_id")?,
            },
        };
        let set = SegmentSet { bytes: segment_metadata_bytes, lens: segment_metadata_lens, count: segment_count };
        let result = commit_c(dataset, index_name, column, set, &o)?;
        if !out_result.is_null() {
            write_out(out_result, result);
        }
        Ok(())
    })
}

/// Deprecated in lance.h: the same call as lance_dataset_commit_index_segments_v2().
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn lance_dataset_commit_index_segments_with_options(
    dataset: *mut LanceDataset,
    index_name: *const c_char,
    column: *const c_char,
    segment_metadata_bytes: *const *const u8,
    segment_metadata_lens: *const usize,
    segment_count: usize,
    options: *const LanceCommitIndexOptions,
    out_result: *mut LanceCommitIndexResult,
) -> i32 {
    lance_dataset_commit_index_segments_v2(
        dataset,
        index_name,
        column,
        segment_metadata_bytes,
        segment_metadata_lens,
        segment_count,
        options,
        out_result,
    )
}

/// Upstream's form: coverage-driven replacement, independently trained
/// segments accepted, and every problem with the set reported as
/// INVALID_ARGUMENT (upstream has no codes of its own for them).
#[no_mangle]
pub unsafe extern "C" fn lance_dataset_commit_index_segments(
    dataset: *mut LanceDataset,
    index_name: *const c_char,
    column: *const c_char,
    segment_metadata_bytes: *const *const u8,
    segment_metadata_lens: *const usize,
    segment_count: usize,
) -> i32 {
    let o = Options::fixed(true, true);
    let set = SegmentSet { bytes: segment_metadata_bytes, lens: segment_metadata_lens, count: segment_count };
    status(|| commit_c(dataset, index_name, column, set, &o).map(|_| ()).map_err(CError::in_upstream_codes))
}
