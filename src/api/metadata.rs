//! lance.h section "Distributed index builds: segment metadata" (RFC E2):
//! the bytes a segment build returns (index/codec.rs), parsed into a handle
//! with typed getters.

use std::ffi::{c_char, CString};

use lance_table::format::IndexMetadata;

use crate::boundary::error::{guard, invalid, not_supported, status, CResult};
use crate::boundary::ffi::{
    c_text, copy_to_caller, free_handle, handle_ref, into_handle, require_out, slice_arg, write_out,
};
use crate::index::codec::{decode_metadata, model_fingerprint, segment_type_name};
use crate::index::kinds::by_segment_name;

pub struct LanceIndexSegmentMetadata {
    pub metadata: IndexMetadata,
    name: CString,
    index_type: CString,
    details_type_url: Option<CString>,
    fingerprint: Option<CString>,
    files: Vec<(CString, u64)>,
}

impl LanceIndexSegmentMetadata {
    pub fn new(metadata: IndexMetadata) -> Self {
        let files = metadata
            .files
            .as_ref()
            .map(|files| files.iter().map(|f| (c_text(&f.path), f.size_bytes)).collect())
            .unwrap_or_default();
        Self {
            name: c_text(&metadata.name),
            index_type: c_text(&segment_type_name(&metadata)),
            details_type_url: metadata.index_details.as_ref().map(|d| c_text(&d.type_url)),
            fingerprint: model_fingerprint(&metadata).as_deref().map(c_text),
            files,
            metadata,
        }
    }
}

unsafe fn meta<'a>(ptr: *const LanceIndexSegmentMetadata) -> CResult<&'a LanceIndexSegmentMetadata> {
    handle_ref(ptr, "metadata")
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
        write_out(out, into_handle(LanceIndexSegmentMetadata::new(metadata)));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_free(metadata: *mut LanceIndexSegmentMetadata) {
    free_handle(metadata);
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
pub unsafe extern "C" fn lance_index_segment_metadata_name(
    metadata: *const LanceIndexSegmentMetadata,
) -> *const c_char {
    guard(std::ptr::null(), || Ok(meta(metadata)?.name.as_ptr()))
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_index_type(metadata: *const LanceIndexSegmentMetadata) -> i32 {
    guard(-1, || {
        let name = meta(metadata)?.index_type.to_str().unwrap_or("");
        by_segment_name(name).map(|k| k.code).ok_or_else(|| {
            not_supported(format!(
                "the segment's index type '{name}' has no LanceScalarIndexType or LanceVectorIndexType value"
            ))
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_index_type_name(
    metadata: *const LanceIndexSegmentMetadata,
) -> *const c_char {
    guard(std::ptr::null(), || Ok(meta(metadata)?.index_type.as_ptr()))
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_index_details_type_url(
    metadata: *const LanceIndexSegmentMetadata,
) -> *const c_char {
    guard(std::ptr::null(), || Ok(meta(metadata)?.details_type_url.as_ref().map_or(std::ptr::null(), |u| u.as_ptr())))
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
pub unsafe extern "C" fn lance_index_segment_metadata_index_version(metadata: *const LanceIndexSegmentMetadata) -> i32 {
    guard(-1, || Ok(meta(metadata)?.metadata.index_version))
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

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_field_ids(
    metadata: *const LanceIndexSegmentMetadata,
    out_field_ids: *mut i32,
    capacity: usize,
    out_count: *mut usize,
) -> i32 {
    status(|| {
        let fields = &meta(metadata)?.metadata.fields;
        copy_to_caller(fields.len(), fields.iter().copied(), out_field_ids, capacity, out_count, "out_field_ids")
    })
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
        let bitmap = m.metadata.fragment_bitmap.clone().unwrap_or_default();
        let count = usize::try_from(bitmap.len()).map_err(|_| invalid("the segment covers too many fragments"))?;
        copy_to_caller(count, bitmap.iter(), out_fragment_ids, capacity, out_count, "out_fragment_ids")
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_field_count(metadata: *const LanceIndexSegmentMetadata) -> usize {
    guard(0, || Ok(meta(metadata)?.metadata.fields.len()))
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_metadata_fragment_count(
    metadata: *const LanceIndexSegmentMetadata,
) -> usize {
    guard(0, || {
        let count = meta(metadata)?.metadata.fragment_bitmap.as_ref().map_or(0, |b| b.len());
        usize::try_from(count).map_err(|_| invalid("the segment covers too many fragments"))
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
