//! The segment-metadata codec: the bytes a segment build returns (the
//! manifest's own prost encoding of `pb::IndexMetadata`) and the keys this
//! library keeps in a vector segment's runtime hints.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use lance_index::pb::VectorIndexDetails;
use lance_table::format::{pb, IndexMetadata};
use prost::Message;

use crate::boundary::error::{invalid, not_supported, CResult};

/// The runtime-hint key under which a segment records its shared model.
pub const MODEL_FINGERPRINT_HINT: &str = "lance-c.model_fingerprint";
/// Runtime-hint keys of a commit's provenance.
pub const JOB_ID_HINT: &str = "lance-c.job_id";
pub const ATTEMPT_ID_HINT: &str = "lance-c.attempt_id";
/// The runtime-hint key of a segment made by merging others: how many.
pub const MERGED_FROM_HINT: &str = "lance-c.merged_from";

/// The bytes of a segment's metadata.
pub fn encode_metadata(metadata: &IndexMetadata) -> Vec<u8> {
    pb::IndexMetadata::from(metadata).encode_to_vec()
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

/// The runtime hint `key` of a vector segment, if it has one.
pub fn vector_hint(metadata: &IndexMetadata, key: &str) -> Option<String> {
    let details = metadata.index_details.as_ref().filter(|_| is_vector(metadata))?;
    let d = VectorIndexDetails::decode(details.value.as_slice()).ok()?;
    d.runtime_hints.get(key).cloned()
}

/// The shared-model fingerprint a vector segment was built with, if any.
pub fn model_fingerprint(metadata: &IndexMetadata) -> Option<String> {
    vector_hint(metadata, MODEL_FINGERPRINT_HINT)
}

/// Sets (Some) or removes (None) runtime hints of a vector segment.
pub fn set_vector_hints(s: &mut IndexMetadata, hints: &[(&str, Option<&str>)]) -> CResult<()> {
    let details = match &s.index_details {
        Some(d) if is_vector(s) => d.clone(),
        _ => {
            return Err(not_supported(format!(
                "lance-c keeps its records (shared model, job, attempt, merge) on vector segments only: Lance {} \
                 keeps no free-form properties for scalar segments",
                crate::LANCE_CORE_VERSION
            )))
        }
    };
    let mut d = VectorIndexDetails::decode(details.value.as_slice())
        .map_err(|e| invalid(format!("segment {} has unreadable vector details: {e}", s.uuid)))?;
    for (key, value) in hints {
        match value {
            Some(v) => d.runtime_hints.insert(key.to_string(), v.to_string()),
            None => d.runtime_hints.remove(*key),
        };
    }
    s.index_details = Some(Arc::new(prost_types::Any { type_url: details.type_url.clone(), value: d.encode_to_vec() }));
    Ok(())
}

/// Whether the segment is a vector index segment.
pub fn is_vector(s: &IndexMetadata) -> bool {
    s.index_details.as_ref().is_some_and(|d| d.type_url.ends_with("VectorIndexDetails"))
}

/// Records the job and attempt ids in each segment's vector details.
pub fn record_provenance(segments: &mut [IndexMetadata], job_id: Option<&str>, attempt_id: Option<&str>) -> CResult<()> {
    if job_id.is_none() && attempt_id.is_none() {
        return Ok(());
    }
    for s in segments.iter_mut() {
        set_vector_hints(s, &[(JOB_ID_HINT, job_id), (ATTEMPT_ID_HINT, attempt_id)])?;
    }
    Ok(())
}

/// The job and attempt ids a committed segment records, if any.
pub fn provenance(s: &IndexMetadata) -> (Option<String>, Option<String>) {
    (vector_hint(s, JOB_ID_HINT), vector_hint(s, ATTEMPT_ID_HINT))
}
