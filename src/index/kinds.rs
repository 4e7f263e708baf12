//! The index types of `lance.h`, one row each: what every other place that
//! needs to know an index type reads (its C code and name, its family, a
//! vector type's graph and quantizer, whether it carries a rotation, whether
//! its segments merge, who picks a fragment-scoped segment's UUID, the core's
//! `IndexType`).  The unit tests beside it (`kinds/tests.rs`) fail when
//! lance.h, the tool's type lists or the Python codec disagree with it.
//! Adding a type: docs/contributing.md, "Adding an index type".

use lance_index::IndexType;

use crate::boundary::error::{invalid, CResult};

/// `LanceVectorIndexType`: the core's `IndexType` numbering
/// (lance-index-core-14.0.2 src/lib.rs).
pub const IVF_FLAT: i32 = 101;
pub const IVF_SQ: i32 = 102;
pub const IVF_PQ: i32 = 103;
pub const IVF_HNSW_SQ: i32 = 104;
pub const IVF_HNSW_PQ: i32 = 105;
pub const IVF_HNSW_FLAT: i32 = 106;
pub const IVF_RQ: i32 = 107;

/// `LanceScalarIndexType`: the core's `IndexType` numbering too.
pub const BTREE: i32 = 1;
pub const BITMAP: i32 = 2;
pub const LABEL_LIST: i32 = 3;
pub const INVERTED: i32 = 4;
pub const NGRAM: i32 = 5;
pub const ZONEMAP: i32 = 8;
pub const BLOOMFILTER: i32 = 9;
pub const RTREE: i32 = 10;
pub const MINHASHLSH: i32 = 12;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Family {
    /// A `LanceVectorIndexType` (`LANCE_INDEX_*`).
    Vector,
    /// A `LanceScalarIndexType` (`LANCE_SCALAR_*`).
    Scalar,
}

/// How a vector type stores its vectors in a partition (`None` for a
/// scalar type).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Quantizer {
    None,
    Flat,
    Sq,
    Pq,
    Rq,
}

/// Who picks the UUID of a segment built over some fragments.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SegmentUuid {
    /// The caller (or this library for it).
    Caller,
    /// The core, which refuses a given one (lance-14.0.2
    /// src/index/create.rs `ensure_index_uuid_allowed`).
    Core,
}

/// One index type.
#[derive(Debug)]
pub struct Kind {
    /// Its value in lance.h's enum.
    pub code: i32,
    /// Its name in lance.h, after `LANCE_INDEX_` or `LANCE_SCALAR_`.
    pub name: &'static str,
    /// Its name in segment metadata (`index::codec::segment_type_name`).
    pub segment_name: &'static str,
    pub family: Family,
    /// A vector type searches each partition through an HNSW graph.
    pub hnsw: bool,
    pub quantizer: Quantizer,
    /// A vector type whose vectors are rotated before quantizing: segments
    /// merge only when they rotate alike (IVF_RQ's RaBitQ rotation).
    pub rotation: bool,
    /// Whether the core merges its segments (`merge_existing_index_segments`).
    pub mergeable: bool,
    pub segment_uuid: SegmentUuid,
    /// The core's type, which builds it.
    pub core: IndexType,
}

const fn vector(code: i32, name: &'static str, hnsw: bool, quantizer: Quantizer, core: IndexType) -> Kind {
    Kind {
        code,
        name,
        segment_name: name,
        family: Family::Vector,
        hnsw,
        quantizer,
        rotation: matches!(quantizer, Quantizer::Rq),
        mergeable: true,
        segment_uuid: SegmentUuid::Caller,
        core,
    }
}

const fn scalar(
    code: i32,
    name: &'static str,
    segment_name: &'static str,
    segment_uuid: SegmentUuid,
    core: IndexType,
) -> Kind {
    Kind {
        code,
        name,
        segment_name,
        family: Family::Scalar,
        hnsw: false,
        quantizer: Quantizer::None,
        rotation: false,
        mergeable: true,
        segment_uuid,
        core,
    }
}

use Quantizer::{Flat, Pq, Rq, Sq};
use SegmentUuid::{Caller, Core};

/// Every index type of lance.h, in the header's order.  A rotation comes
/// with the RQ quantizer; every type merges in Lance 14.0.2 (vector
/// segments partition by partition, scalar ones rebuilt).
pub static KINDS: &[Kind] = &[
    // vector(code, lance.h name, hnsw, quantizer, core type)
    vector(IVF_FLAT, "IVF_FLAT", false, Flat, IndexType::IvfFlat),
    vector(IVF_SQ, "IVF_SQ", false, Sq, IndexType::IvfSq),
    vector(IVF_PQ, "IVF_PQ", false, Pq, IndexType::IvfPq),
    vector(IVF_HNSW_SQ, "IVF_HNSW_SQ", true, Sq, IndexType::IvfHnswSq),
    vector(IVF_HNSW_PQ, "IVF_HNSW_PQ", true, Pq, IndexType::IvfHnswPq),
    vector(IVF_HNSW_FLAT, "IVF_HNSW_FLAT", true, Flat, IndexType::IvfHnswFlat),
    vector(IVF_RQ, "IVF_RQ", false, Rq, IndexType::IvfRq),
    // scalar(code, lance.h name, segment name, who picks a segment's UUID, core type)
    scalar(BTREE, "BTREE", "BTree", Core, IndexType::BTree),
    scalar(BITMAP, "BITMAP", "Bitmap", Caller, IndexType::Bitmap),
    scalar(LABEL_LIST, "LABEL_LIST", "LabelList", Core, IndexType::LabelList),
    scalar(INVERTED, "INVERTED", "Inverted", Caller, IndexType::Inverted),
    scalar(NGRAM, "NGRAM", "NGram", Core, IndexType::NGram),
    scalar(ZONEMAP, "ZONEMAP", "ZoneMap", Caller, IndexType::ZoneMap),
    scalar(BLOOMFILTER, "BLOOMFILTER", "BloomFilter", Caller, IndexType::BloomFilter),
    scalar(RTREE, "RTREE", "RTree", Core, IndexType::RTree),
    scalar(MINHASHLSH, "MINHASHLSH", "MinHashLsh", Caller, IndexType::MinHashLsh),
];

/// The type of a lance.h code, of either family.
pub fn kind(code: i32) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.code == code)
}

/// The lance.h codes of a family, as a message lists them ("1 = BTREE, ...").
fn listed(family: Family) -> String {
    let codes: Vec<String> =
        KINDS.iter().filter(|k| k.family == family).map(|k| format!("{} = {}", k.code, k.name)).collect();
    codes.join(", ")
}

fn of_family(code: i32, family: Family, what: &str, enum_name: &str) -> CResult<&'static Kind> {
    kind(code)
        .filter(|k| k.family == family)
        .ok_or_else(|| invalid(format!("{what} = {code} is not a {enum_name} ({})", listed(family))))
}

/// A `LanceVectorIndexType` value, checked; `what` names the argument.
pub fn vector_kind(code: i32, what: &str) -> CResult<&'static Kind> {
    of_family(code, Family::Vector, what, "LanceVectorIndexType")
}

/// A `LanceScalarIndexType` value (the argument `index_type`), checked.
pub fn scalar_kind(code: i32) -> CResult<&'static Kind> {
    of_family(code, Family::Scalar, "index_type", "LanceScalarIndexType")
}

/// The vector type of a graph and quantizer, as a segment or an opened
/// index describes itself.
pub fn vector_of(hnsw: bool, quantizer: Quantizer) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.family == Family::Vector && k.hnsw == hnsw && k.quantizer == quantizer)
}

/// The type of a segment type name (`index::codec::segment_type_name`).
pub fn by_segment_name(name: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.segment_name == name)
}

/// The name of a `LanceVectorIndexType` value, as lance.h spells it.
pub fn vector_type_name(code: i32) -> Option<&'static str> {
    kind(code).filter(|k| k.family == Family::Vector).map(|k| k.name)
}

/// Whether the index type quantizes with PQ (and so needs a codebook).
pub fn uses_pq(code: i32) -> bool {
    kind(code).is_some_and(|k| k.quantizer == Quantizer::Pq)
}

/// Whether the index type carries a rotation (IVF_RQ's RaBitQ rotation).
pub fn has_rotation(code: i32) -> bool {
    kind(code).is_some_and(|k| k.rotation)
}

/// Whether the core refuses a caller's UUID for a fragment-scoped build of
/// this type and picks the segment's UUID itself.
pub fn core_picks_segment_uuid(index_type: IndexType) -> bool {
    KINDS.iter().any(|k| k.core == index_type && k.segment_uuid == SegmentUuid::Core)
}

#[cfg(test)]
mod tests;
