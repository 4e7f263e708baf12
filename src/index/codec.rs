//! The segment-metadata codec: the bytes a segment build returns (the
//! manifest's own prost encoding of `pb::IndexMetadata`) and the keys this
//! library keeps in a vector segment's runtime hints.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use lance_index::pb::VectorIndexDetails;
use lance_table::format::{pb, IndexMetadata};
use prost::Message;

use crate::boundary::error::{invalid, not_supported, CResult};
use crate::index::kinds::{vector_of, Quantizer};

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
    let message =
        pb::IndexMetadata::decode(bytes).map_err(|e| invalid(format!("{name} is not encoded index metadata: {e}")))?;
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
        None | Some(Compression::Flat(_)) => Quantizer::Flat,
        Some(Compression::Pq(_)) => Quantizer::Pq,
        Some(Compression::Sq(_)) => Quantizer::Sq,
        Some(Compression::Rq(_)) => Quantizer::Rq,
    };
    vector_of(d.hnsw_index_config.is_some(), quantizer).map_or("Vector", |k| k.segment_name).to_string()
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
pub fn record_provenance(
    segments: &mut [IndexMetadata],
    job_id: Option<&str>,
    attempt_id: Option<&str>,
) -> CResult<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::error::{CError, Code};
    use lance_index::pb::vector_index_details::Compression;
    use roaring::RoaringBitmap;
    use uuid::Uuid;

    const VECTOR_URL: &str = "/lance.index.pb.VectorIndexDetails";

    fn segment(type_url: Option<&str>, value: Vec<u8>) -> IndexMetadata {
        IndexMetadata {
            uuid: Uuid::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677),
            fields: vec![3],
            covering_fields: vec![],
            name: "vec_idx".to_string(),
            dataset_version: 7,
            fragment_bitmap: Some(RoaringBitmap::from_iter([0u32, 1, 2, 9])),
            index_details: type_url.map(|url| Arc::new(prost_types::Any { type_url: url.to_string(), value })),
            index_version: 1,
            created_at: chrono::DateTime::from_timestamp_millis(1_700_000_000_123),
            base_id: None,
            files: None,
        }
    }

    fn vector_segment(compression: Option<Compression>, hnsw: bool) -> IndexMetadata {
        let details =
            VectorIndexDetails { compression, hnsw_index_config: hnsw.then(Default::default), ..Default::default() };
        segment(Some(VECTOR_URL), details.encode_to_vec())
    }

    fn details(s: &IndexMetadata) -> VectorIndexDetails {
        VectorIndexDetails::decode(s.index_details.as_ref().expect("details").value.as_slice()).expect("decodes")
    }

    fn refused<T>(result: CResult<T>) -> CError {
        match result {
            Ok(_) => panic!("accepted what must be refused"),
            Err(e) => e,
        }
    }

    #[test]
    fn metadata_round_trips_through_its_bytes() {
        let mut s = vector_segment(Some(Compression::Pq(Default::default())), false);
        set_vector_hints(&mut s, &[(MODEL_FINGERPRINT_HINT, Some("abc"))]).expect("a vector segment");
        let bytes = encode_metadata(&s);
        let back = decode_metadata(&bytes, "the metadata").unwrap_or_else(|e| panic!("{}", e.message));
        assert_eq!(back, s);
        assert_eq!(encode_metadata(&back), bytes);
    }

    #[test]
    fn bad_metadata_bytes_are_refused() {
        let e = refused(decode_metadata(&[], "the metadata"));
        assert_eq!((e.code, e.message.as_str()), (Code::InvalidArgument, "the metadata is empty"));
        // A varint field tag cut short.
        let e = refused(decode_metadata(&[0xff], "the metadata"));
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.starts_with("the metadata is not encoded index metadata: "), "{}", e.message);
        // A message that decodes but names no segment uuid.
        let no_uuid = pb::IndexMetadata { name: "x".to_string(), ..Default::default() }.encode_to_vec();
        let e = refused(decode_metadata(&no_uuid, "the metadata"));
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.starts_with("the metadata is not valid index metadata: "), "{}", e.message);
        // A creation time beyond the calendar: the core's conversion panics,
        // which is reported as bad input.
        let mut message = pb::IndexMetadata::from(&vector_segment(None, false));
        message.created_at = Some(i64::MAX as u64);
        let e = refused(decode_metadata(&message.encode_to_vec(), "the metadata"));
        assert_eq!((e.code, e.message.as_str()), (Code::InvalidArgument, "the metadata is not valid index metadata"));
    }

    #[test]
    fn type_names_follow_the_details() {
        assert_eq!(segment_type_name(&segment(None, vec![])), "Unknown");
        assert_eq!(segment_type_name(&segment(Some("/lance.index.pb.BTreeIndexDetails"), vec![])), "BTree");
        assert_eq!(segment_type_name(&segment(Some("/lance.table.InvertedIndexDetails"), vec![])), "Inverted");
        assert_eq!(segment_type_name(&segment(Some("lance.index.pb.ZoneMap"), vec![])), "ZoneMap");
        assert_eq!(segment_type_name(&vector_segment(None, false)), "IVF_FLAT");
        assert_eq!(segment_type_name(&vector_segment(Some(Compression::Flat(Default::default())), false)), "IVF_FLAT");
        assert_eq!(segment_type_name(&vector_segment(Some(Compression::Pq(Default::default())), false)), "IVF_PQ");
        assert_eq!(segment_type_name(&vector_segment(Some(Compression::Sq(Default::default())), false)), "IVF_SQ");
        assert_eq!(segment_type_name(&vector_segment(Some(Compression::Rq(Default::default())), false)), "IVF_RQ");
        assert_eq!(segment_type_name(&vector_segment(None, true)), "IVF_HNSW_FLAT");
        assert_eq!(segment_type_name(&vector_segment(Some(Compression::Pq(Default::default())), true)), "IVF_HNSW_PQ");
        assert_eq!(segment_type_name(&vector_segment(Some(Compression::Sq(Default::default())), true)), "IVF_HNSW_SQ");
        // Vector details that do not decode.
        assert_eq!(segment_type_name(&segment(Some(VECTOR_URL), vec![0xff])), "Vector");
    }

    #[test]
    fn only_vector_details_are_vector_segments() {
        assert!(is_vector(&vector_segment(None, false)));
        assert!(!is_vector(&segment(Some("/lance.index.pb.BTreeIndexDetails"), vec![])));
        assert!(!is_vector(&segment(None, vec![])));
        assert!(!is_vector(&segment(Some("/lance.index.pb.VectorIndexDetailsV2"), vec![])));
    }

    #[test]
    fn hints_are_set_read_and_removed() {
        let mut s = vector_segment(Some(Compression::Sq(Default::default())), true);
        assert_eq!(model_fingerprint(&s), None);
        set_vector_hints(&mut s, &[(MODEL_FINGERPRINT_HINT, Some("f1")), ("other.key", Some("v"))]).expect("set");
        assert_eq!(model_fingerprint(&s).as_deref(), Some("f1"));
        assert_eq!(vector_hint(&s, "other.key").as_deref(), Some("v"));
        // The rest of the details and the type url are kept.
        assert_eq!(segment_type_name(&s), "IVF_HNSW_SQ");
        assert_eq!(s.index_details.as_ref().map(|d| d.type_url.as_str()), Some(VECTOR_URL));
        assert_eq!(details(&s).runtime_hints.len(), 2);
        // Overwritten, then removed; removing an absent key is no error.
        set_vector_hints(&mut s, &[(MODEL_FINGERPRINT_HINT, Some("f2")), ("absent", None)]).expect("set");
        assert_eq!(model_fingerprint(&s).as_deref(), Some("f2"));
        set_vector_hints(&mut s, &[(MODEL_FINGERPRINT_HINT, None)]).expect("remove");
        assert_eq!(model_fingerprint(&s), None);
        assert_eq!(vector_hint(&s, "other.key").as_deref(), Some("v"));
        assert_eq!(details(&s).runtime_hints.len(), 1);
    }

    #[test]
    fn scalar_segments_keep_no_hints() {
        let scalar = segment(Some("/lance.index.pb.BTreeIndexDetails"), vec![]);
        let mut s = scalar.clone();
        let e = refused(set_vector_hints(&mut s, &[(JOB_ID_HINT, Some("job"))]));
        assert_eq!(e.code, Code::NotSupported);
        assert_eq!(s, scalar);
        // Details that hold a hint but are not vector details are not read.
        let mut d = VectorIndexDetails::default();
        d.runtime_hints.insert(JOB_ID_HINT.to_string(), "job".to_string());
        let masked = segment(Some("/lance.index.pb.BTreeIndexDetails"), d.encode_to_vec());
        assert_eq!(vector_hint(&masked, JOB_ID_HINT), None);
        assert_eq!(vector_hint(&segment(None, vec![]), JOB_ID_HINT), None);
    }

    #[test]
    fn unreadable_vector_details_are_refused() {
        let mut s = segment(Some(VECTOR_URL), vec![0xff]);
        let e = refused(set_vector_hints(&mut s, &[(JOB_ID_HINT, Some("job"))]));
        assert_eq!(e.code, Code::InvalidArgument);
        let prefix = format!("segment {} has unreadable vector details: ", s.uuid);
        assert!(e.message.starts_with(&prefix), "{}", e.message);
        assert_eq!(vector_hint(&s, JOB_ID_HINT), None);
    }

    #[test]
    fn provenance_is_recorded_on_every_segment() {
        let pq = vector_segment(Some(Compression::Pq(Default::default())), false);
        let mut segments = vec![vector_segment(None, false), pq];
        record_provenance(&mut segments, Some("job-1"), Some("attempt-2")).expect("vector segments");
        for s in &segments {
            assert_eq!(provenance(s), (Some("job-1".to_string()), Some("attempt-2".to_string())));
        }
        // A later record without an attempt removes the earlier one.
        record_provenance(&mut segments, Some("job-3"), None).expect("vector segments");
        for s in &segments {
            assert_eq!(provenance(s), (Some("job-3".to_string()), None));
        }
    }

    #[test]
    fn nothing_to_record_leaves_any_segment_alone() {
        let scalar = segment(Some("/lance.index.pb.BTreeIndexDetails"), vec![]);
        let mut segments = vec![scalar.clone()];
        record_provenance(&mut segments, None, None).expect("nothing to record");
        assert_eq!(segments, vec![scalar.clone()]);
        let e = refused(record_provenance(&mut segments, None, Some("attempt")));
        assert_eq!(e.code, Code::NotSupported);
        assert_eq!(provenance(&scalar), (None, None));
    }
}
