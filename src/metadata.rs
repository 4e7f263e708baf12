//! Segment metadata (RFC E2): the prost-encoded `pb::IndexMetadata` bytes a
//! segment build returns, parsed into a handle with typed getters.

use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use lance_index::pb::VectorIndexDetails;
use lance_table::format::{pb, IndexMetadata};
use prost::Message;

use crate::convert::{require_handle, require_out, slice_arg, write_out};
use crate::error::{guard, invalid, status, CResult};
use crate::segment::MODEL_FINGERPRINT_HINT;

pub struct LanceIndexSegmentMetadata {
    pub metadata: IndexMetadata,
    name: CString,
    index_type: CString,
    fingerprint: Option<CString>,
    files: Vec<(CString, u64)>,
}

/// Decodes metadata bytes.  The core's conversion can panic on some inputs,
/// so a panic here is bad input, not an internal fault.
pub fn decode_metadata(bytes: &[u8], name: &str) -> CResult<IndexMetadata> {
    if bytes.is_empty() {
        return Err(invalid(format!("{name} is empty")));
    }
    let message = pb::IndexMetadata::decode(bytes)
        .map_err(|e| invalid(format!("{name} is not encoded index metadata: {e}")))?;
    match catch_unwind(AssertUnwindSafe(|| IndexMetadata::try_from(message))) {
        Ok(Ok(metadata)) => Ok(metadata),
        Ok(Err(e)) => Err(invalid(format!("{name} is not valid index metadata: {e}"))),
        Err(_) => Err(invalid(format!("{name} is not valid index metadata"))),
    }
}

/// The short type name of a segment: "IVF_PQ", "IVF_HNSW_SQ", "BTree", ...
pub fn segment_type_name(metadata: &IndexMetadata) -> String {
    let Some(details) = &metadata.index_details else {
        return "Unknown".to_string();
    };
    let short = details.type_url.rsplit(['.', '/']).next().unwrap_or("");
    let short = short.strip_suffix("IndexDetails").unwrap_or(short);
    if short != "Vector" {
        return short.to_string();
    }
    let Ok(d) = VectorIndexDetails::decode(details.value.as_slice()) else {
        return "Vector".to_string();
    };
    use lance_index::pb::vector_index_details::Compression;
    let quantizer = match d.compression {
        None | Some(Compression::Flat(_)) => "FLAT",
        Some(Compression::Pq(_)) => "PQ",
        Some(Compression::Sq(_)) => "SQ",
        Some(Compression::Rq(_)) => "RQ",
    };
    if d.hnsw_index_config.is_some() {
        format!("IVF_HNSW_{quantizer}")
    } else {
        format!("IVF_{quantizer}")
    }
}

/// The shared-model fingerprint a vector segment was built with, if any.
pub fn model_fingerprint(metadata: &IndexMetadata) -> Option<String> {
    let details = metadata.index_details.as_ref()?;
    let d = VectorIndexDetails::decode(details.value.as_slice()).ok()?;
    d.runtime_hints.get(MODEL_FINGERPRINT_HINT).cloned()
}

fn c_text(s: String) -> CString {
    CString::new(s.replace('\0', " ")).expect("NULs were replaced")
}

impl LanceIndexSegmentMetadata {
    pub fn new(metadata: IndexMetadata) -> Self {
        let files = metadata
            .files
            .as_ref()
            .map(|files| files.iter().map(|f| (c_text(f.path.clone()), f.size_bytes)).collect())
            .unwrap_or_default();
        Self {
            name: c_text(metadata.name.clone()),
            index_type: c_text(segment_type_name(&metadata)),
            fingerprint: model_fingerprint(&metadata).map(c_text),
            files,
            metadata,
        }
    }
}

unsafe fn meta<'a>(ptr: *const LanceIndexSegmentMetadata) -> CResult<&'a LanceIndexSegmentMetadata> {
    require_handle(ptr, "metadata")?;
    Ok(&*ptr)
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_parse(
    bytes: *const u8,
    len: usize,
    out: *mut *mut LanceIndexSegmentMetadata,
) -> i32 {
    status(|| {
        require_out(out, "out")?;
        let metadata = decode_metadata(slice_arg(bytes, len, "bytes")?, "bytes")?;
        write_out(out, Box::into_raw(Box::new(LanceIndexSegmentMetadata::new(metadata))));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_free(metadata: *mut LanceIndexSegmentMetadata) {
    if !metadata.is_null() {
        drop(Box::from_raw(metadata));
    }
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_uuid(
    metadata: *const LanceIndexSegmentMetadata,
    out_uuid: *mut u8,
) -> i32 {
    status(|| {
        let m = meta(metadata)?;
        require_out(out_uuid, "out_uuid")?;
        std::ptr::copy_nonoverlapping(m.metadata.uuid.as_bytes().as_ptr(), out_uuid, 16);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_name(metadata: *const LanceIndexSegmentMetadata) -> *const c_char {
    guard(std::ptr::null(), || Ok(meta(metadata)?.name.as_ptr()))
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_index_type(
    metadata: *const LanceIndexSegmentMetadata,
) -> *const c_char {
    guard(std::ptr::null(), || Ok(meta(metadata)?.index_type.as_ptr()))
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_model_fingerprint(
    metadata: *const LanceIndexSegmentMetadata,
) -> *const c_char {
    guard(std::ptr::null(), || Ok(meta(metadata)?.fingerprint.as_ref().map_or(std::ptr::null(), |f| f.as_ptr())))
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_dataset_version(
    metadata: *const LanceIndexSegmentMetadata,
) -> u64 {
    guard(0, || Ok(meta(metadata)?.metadata.dataset_version))
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_index_version(
    metadata: *const LanceIndexSegmentMetadata,
    out_version: *mut i32,
) -> i32 {
    status(|| {
        let m = meta(metadata)?;
        require_out(out_version, "out_version")?;
        write_out(out_version, m.metadata.index_version);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_created_at_ms(
    metadata: *const LanceIndexSegmentMetadata,
    out_ms: *mut i64,
    out_present: *mut bool,
) -> i32 {
    status(|| {
        let m = meta(metadata)?;
        require_out(out_ms, "out_ms")?;
        require_out(out_present, "out_present")?;
        let at = m.metadata.created_at.map(|t| t.timestamp_millis());
        write_out(out_present, at.is_some());
        write_out(out_ms, at.unwrap_or(0));
        Ok(())
    })
}

/// Copies `items` into a caller buffer of `capacity` slots (a NULL buffer with
/// capacity 0 only asks for the count).
unsafe fn copy_list<T: Copy>(items: &[T], out: *mut T, capacity: usize, out_count: *mut usize, what: &str) -> CResult<()> {
    require_out(out_count, "out_count")?;
    write_out(out_count, items.len());
    if out.is_null() && capacity == 0 {
        return Ok(());
    }
    require_out(out, what)?;
    if capacity < items.len() {
        return Err(invalid(format!("capacity = {capacity} is less than the {} entries", items.len())));
    }
    std::ptr::copy_nonoverlapping(items.as_ptr(), out, items.len());
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_field_ids(
    metadata: *const LanceIndexSegmentMetadata,
    out_field_ids: *mut i32,
    capacity: usize,
    out_count: *mut usize,
) -> i32 {
    status(|| copy_list(&meta(metadata)?.metadata.fields, out_field_ids, capacity, out_count, "out_field_ids"))
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_fragment_ids(
    metadata: *const LanceIndexSegmentMetadata,
    out_fragment_ids: *mut u32,
    capacity: usize,
    out_count: *mut usize,
) -> i32 {
    status(|| {
        let m = meta(metadata)?;
        let ids: Vec<u32> = m.metadata.fragment_bitmap.as_ref().map(|b| b.iter().collect()).unwrap_or_default();
        copy_list(&ids, out_fragment_ids, capacity, out_count, "out_fragment_ids")
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_file_count(metadata: *const LanceIndexSegmentMetadata) -> u64 {
    guard(0, || Ok(meta(metadata)?.files.len() as u64))
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_file_at(
    metadata: *const LanceIndexSegmentMetadata,
    index: usize,
    out_path: *mut *const c_char,
    out_size_bytes: *mut u64,
) -> i32 {
    status(|| {
        let m = meta(metadata)?;
        require_out(out_path, "out_path")?;
        require_out(out_size_bytes, "out_size_bytes")?;
        let (path, size) = m.files.get(index).ok_or_else(|| {
            invalid(format!("index = {index} is out of range: the segment lists {} files", m.files.len()))
        })?;
        write_out(out_path, path.as_ptr());
        write_out(out_size_bytes, *size);
        Ok(())
    })
}

