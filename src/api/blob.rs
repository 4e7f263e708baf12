//! lance.h section "Blobs": Blob v2 values read like files, through the
//! core's `BlobFile` (its cursor, reads and range reads).

use std::ffi::c_char;

use lance::dataset::BlobFile;

use crate::boundary::error::{guard, invalid, status, CError, CResult, Code, Context};
use crate::boundary::ffi::{
    bytes_out, free_handle, handle_mut, handle_ref, into_handle, require_out, required_nonempty_str, slice_arg,
    write_out,
};
use crate::process::runtime::block_on;
use crate::store::handle::dataset_ref;
use crate::store::handle::LanceDataset;

/// One blob value.  The core's `BlobFile` holds its own reference to the
/// storage it reads, so the handle outlives the dataset it came from.
pub struct LanceBlobFile {
    file: BlobFile,
}

/// How the caller's `u64` list names rows.
#[derive(Clone, Copy)]
enum RowSelection {
    RowIds,
    Indices,
}

unsafe fn take(
    dataset: *const LanceDataset,
    rows: *const u64,
    count: usize,
    column: *const c_char,
    out: *mut *mut LanceBlobFile,
    selection: RowSelection,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        let name = match selection {
            RowSelection::RowIds => "row_ids",
            RowSelection::Indices => "indices",
        };
        let rows = slice_arg(rows, count, name)?;
        let column = required_nonempty_str(column, "column")?;
        if count > 0 {
            require_out(out, "out")?;
            if !out.is_aligned() {
                return Err(invalid("out is not aligned for an array of pointers"));
            }
        }
        let version = ds.version().version;
        let files = match selection {
            RowSelection::RowIds => block_on(ds.take_blobs(rows, column))?,
            RowSelection::Indices => block_on(ds.take_blobs_by_indices(rows, column))?,
        }
        .context(format!("taking blobs of column '{column}' from dataset version {version}"))?;
        if files.len() != rows.len() {
            return Err(CError::new(
                Code::Internal,
                format!("the core returned {} blobs for {} {name}", files.len(), rows.len()),
            ));
        }
        for (i, file) in files.into_iter().enumerate() {
            let handle = file.map_or(std::ptr::null_mut(), |file| into_handle(LanceBlobFile { file }));
            out.add(i).write(handle);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_take_blobs(
    dataset: *const LanceDataset,
    row_ids: *const u64,
    num_row_ids: usize,
    column: *const c_char,
    out: *mut *mut LanceBlobFile,
) -> i32 {
    take(dataset, row_ids, num_row_ids, column, out, RowSelection::RowIds)
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_take_blobs_by_indices(
    dataset: *const LanceDataset,
    indices: *const u64,
    num_indices: usize,
    column: *const c_char,
    out: *mut *mut LanceBlobFile,
) -> i32 {
    take(dataset, indices, num_indices, column, out, RowSelection::Indices)
}

unsafe fn blob_ref<'a>(blob: *const LanceBlobFile) -> CResult<&'a BlobFile> {
    Ok(&handle_ref(blob, "blob")?.file)
}

unsafe fn blob_mut<'a>(blob: *mut LanceBlobFile) -> CResult<&'a BlobFile> {
    Ok(&handle_mut(blob, "blob")?.file)
}

/// Copies what the core read into the caller's buffer.
fn copy_read(bytes: &[u8], dst: &mut [u8]) -> CResult<()> {
    let capacity = dst.len();
    let target = dst.get_mut(..bytes.len()).ok_or_else(|| {
        CError::new(Code::Internal, format!("the core read {} bytes into a {capacity}-byte buffer", bytes.len()))
    })?;
    target.copy_from_slice(bytes);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn lance_blob_file_size(blob: *const LanceBlobFile) -> u64 {
    guard(0, || Ok(blob_ref(blob)?.size()))
}

#[no_mangle]
pub unsafe extern "C" fn lance_blob_file_read(blob: *mut LanceBlobFile, dst: *mut u8, dst_len: usize) -> i32 {
    status(|| {
        let file = blob_mut(blob)?;
        let cursor = block_on(file.tell())??;
        let remaining = file.size().saturating_sub(cursor);
        if remaining > dst_len as u64 {
            return Err(invalid(format!(
                "dst_len = {dst_len} is less than the {remaining} bytes from the cursor ({cursor}) to the end of \
                 the blob; nothing was read (use lance_blob_file_read_up_to for part of it)"
            )));
        }
        let dst = bytes_out(dst, dst_len, "dst")?;
        let bytes = block_on(file.read())?.context("reading the blob")?;
        copy_read(&bytes, dst)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_blob_file_read_up_to(
    blob: *mut LanceBlobFile,
    dst: *mut u8,
    len: usize,
    bytes_read: *mut usize,
) -> i32 {
    status(|| {
        let file = blob_mut(blob)?;
        require_out(bytes_read, "bytes_read")?;
        let dst = bytes_out(dst, len, "dst")?;
        let bytes = block_on(file.read_up_to(len))?.context("reading the blob")?;
        copy_read(&bytes, dst)?;
        write_out(bytes_read, bytes.len());
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_blob_file_read_range(
    blob: *const LanceBlobFile,
    offset: u64,
    dst: *mut u8,
    len: usize,
) -> i32 {
    status(|| {
        let file = blob_ref(blob)?;
        if len == 0 {
            return Ok(());
        }
        let dst = bytes_out(dst, len, "dst")?;
        let end = offset
            .checked_add(len as u64)
            .ok_or_else(|| invalid(format!("offset = {offset} plus len = {len} overflows 64 bits")))?;
        let bytes =
            block_on(file.read_range(offset..end))?.context(format!("reading bytes [{offset}, {end}) of the blob"))?;
        copy_read(&bytes, dst)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_blob_file_seek(blob: *mut LanceBlobFile, pos: u64) -> i32 {
    status(|| {
        let file = blob_mut(blob)?;
        block_on(file.seek(pos))??;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_blob_file_tell(blob: *const LanceBlobFile, pos: *mut u64) -> i32 {
    status(|| {
        let file = blob_ref(blob)?;
        require_out(pos, "pos")?;
        write_out(pos, block_on(file.tell())??);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_blob_file_close(blob: *mut LanceBlobFile) {
    free_handle(blob);
}
