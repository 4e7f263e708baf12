//! Parameters and enums as they arrive from C (plain integers, zero meaning
//! "default"), validated and converted to the core's types.  Every enum
//! value and every default lance.h documents is named here once.

use lance::dataset::{WhenMatched, WhenNotMatched, WhenNotMatchedBySource, WriteMode};
use lance::datatypes::BlobHandling;
use lance::index::vector::VectorIndexParams;
use lance::Dataset;
use lance_index::scalar::minhash_lsh::MinHashLshIndexParams;
use lance_index::scalar::{BuiltinIndexType, ScalarIndexParams};
use lance_index::vector::bq::RQBuildParams;
use lance_index::vector::hnsw::builder::HnswBuildParams;
use lance_index::vector::ivf::IvfBuildParams;
use lance_index::vector::pq::PQBuildParams;
use lance_index::vector::sq::builder::SQBuildParams;
use lance_index::{IndexParams, IndexType};
use lance_linalg::distance::DistanceType;

use crate::boundary::error::{invalid, CError, CResult, Context};

/// `LanceVectorIndexType`.
pub const IVF_FLAT: i32 = 101;
pub const IVF_SQ: i32 = 102;
pub const IVF_PQ: i32 = 103;
pub const IVF_HNSW_SQ: i32 = 104;
pub const IVF_HNSW_PQ: i32 = 105;
pub const IVF_HNSW_FLAT: i32 = 106;
pub const IVF_RQ: i32 = 107;

/// `LanceScalarIndexType`.
pub const BTREE: i32 = 1;
pub const BITMAP: i32 = 2;
pub const LABEL_LIST: i32 = 3;
pub const INVERTED: i32 = 4;
pub const NGRAM: i32 = 5;
pub const ZONEMAP: i32 = 8;
pub const BLOOMFILTER: i32 = 9;
pub const RTREE: i32 = 10;
pub const MINHASHLSH: i32 = 12;

/// `LanceMetricType`.
pub const METRIC_L2: i32 = 0;
pub const METRIC_COSINE: i32 = 1;
pub const METRIC_DOT: i32 = 2;
pub const METRIC_HAMMING: i32 = 3;

/// `LanceWriteMode`.
pub const WRITE_CREATE: i32 = 0;
pub const WRITE_APPEND: i32 = 1;
pub const WRITE_OVERWRITE: i32 = 2;

/// `LanceMergeWhenMatched`.
pub const MERGE_WHEN_MATCHED_DO_NOTHING: i32 = 0;
pub const MERGE_WHEN_MATCHED_UPDATE_ALL: i32 = 1;
pub const MERGE_WHEN_MATCHED_UPDATE_IF: i32 = 2;
pub const MERGE_WHEN_MATCHED_FAIL: i32 = 3;
pub const MERGE_WHEN_MATCHED_DELETE: i32 = 4;

/// `LanceMergeWhenNotMatched`.
pub const MERGE_WHEN_NOT_MATCHED_INSERT_ALL: i32 = 0;
pub const MERGE_WHEN_NOT_MATCHED_DO_NOTHING: i32 = 1;

/// `LanceMergeWhenNotMatchedBySource`.
pub const MERGE_WHEN_NOT_MATCHED_BY_SOURCE_KEEP: i32 = 0;
pub const MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE: i32 = 1;
pub const MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE_IF: i32 = 2;

/// `LanceColumnNullableMode`.
pub const COLUMN_NULLABLE_UNCHANGED: i32 = 0;
pub const COLUMN_NULLABLE_TRUE: i32 = 1;
pub const COLUMN_NULLABLE_FALSE: i32 = 2;

/// `LanceDataType`: element types of query vectors.
pub const DTYPE_FLOAT32: i32 = 0;
pub const DTYPE_FLOAT16: i32 = 1;
pub const DTYPE_FLOAT64: i32 = 2;
pub const DTYPE_UINT8: i32 = 3;
pub const DTYPE_INT8: i32 = 4;

/// `LanceBlobHandling`.
pub const BLOB_HANDLING_BLOBS_DESCRIPTIONS: i32 = 0;
pub const BLOB_HANDLING_ALL_BINARY: i32 = 1;
pub const BLOB_HANDLING_ALL_DESCRIPTIONS: i32 = 2;

/// The defaults lance.h documents for zero fields.
const DEFAULT_MAX_ITERATIONS: usize = 50;
const DEFAULT_SAMPLE_RATE: usize = 256;
const DEFAULT_NUM_SUB_VECTORS: usize = 16;
const DEFAULT_PQ_BITS: usize = 8;
const DEFAULT_SQ_BITS: u16 = 8;
const DEFAULT_HNSW_M: usize = 20;
const DEFAULT_HNSW_EF_CONSTRUCTION: usize = 150;

/// Mirrors `LanceVectorIndexParams` in lance.h. Enum fields arrive as plain
/// integers and are validated.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct LanceVectorIndexParams {
    pub index_type: i32,
    pub metric: i32,
    pub num_partitions: u32,
    pub num_sub_vectors: u32,
    pub num_bits: u32,
    pub max_iterations: u32,
    pub hnsw_m: u32,
    pub hnsw_ef_construction: u32,
    pub sample_rate: u32,
}
crate::c_layout!(LanceVectorIndexParams, 36;
    index_type @ 0,
    metric @ 4,
    num_partitions @ 8,
    num_sub_vectors @ 12,
    num_bits @ 16,
    max_iterations @ 20,
    hnsw_m @ 24,
    hnsw_ef_construction @ 28,
    sample_rate @ 32,
);

impl LanceVectorIndexParams {
    /// All fields zero: every documented default, with the given index type.
    pub fn defaults(index_type: i32) -> Self {
        Self {
            index_type,
            metric: METRIC_L2,
            num_partitions: 0,
            num_sub_vectors: 0,
            num_bits: 0,
            max_iterations: 0,
            hnsw_m: 0,
            hnsw_ef_construction: 0,
            sample_rate: 0,
        }
    }
}

/// The parameters of a build, of either kind, owned (a build may run on a
/// runtime thread).
#[derive(Clone)]
pub enum CoreParams {
    Vector(VectorIndexParams),
    Scalar(ScalarIndexParams),
}

impl CoreParams {
    pub fn as_dyn(&self) -> &dyn IndexParams {
        match self {
            CoreParams::Vector(p) => p,
            CoreParams::Scalar(p) => p,
        }
    }
}

/// The `LanceMetricType` of the core's distance type (`metric_from_c`'s inverse).
pub fn metric_to_c(metric: DistanceType) -> i32 {
    match metric {
        DistanceType::L2 => METRIC_L2,
        DistanceType::Cosine => METRIC_COSINE,
        DistanceType::Dot => METRIC_DOT,
        DistanceType::Hamming => METRIC_HAMMING,
    }
}

pub fn metric_from_c(metric: i32, name: &str) -> CResult<DistanceType> {
    match metric {
        METRIC_L2 => Ok(DistanceType::L2),
        METRIC_COSINE => Ok(DistanceType::Cosine),
        METRIC_DOT => Ok(DistanceType::Dot),
        METRIC_HAMMING => Ok(DistanceType::Hamming),
        other => Err(invalid(format!(
            "{name} = {other} is not a LanceMetricType (0 = L2, 1 = COSINE, 2 = DOT, 3 = HAMMING)"
        ))),
    }
}

pub fn blob_handling_from_c(handling: i32, name: &str) -> CResult<BlobHandling> {
    match handling {
        BLOB_HANDLING_BLOBS_DESCRIPTIONS => Ok(BlobHandling::BlobsDescriptions),
        BLOB_HANDLING_ALL_BINARY => Ok(BlobHandling::AllBinary),
        BLOB_HANDLING_ALL_DESCRIPTIONS => Ok(BlobHandling::AllDescriptions),
        other => Err(invalid(format!(
            "{name} = {other} is not a LanceBlobHandling (0 = BLOBS_DESCRIPTIONS, 1 = ALL_BINARY, 2 = ALL_DESCRIPTIONS)"
        ))),
    }
}

fn or_default(value: u32, default: usize) -> usize {
    if value == 0 {
        default
    } else {
        value as usize
    }
}

/// The IVF stage for the given C params (no injected model).
pub fn ivf_params(p: &LanceVectorIndexParams) -> IvfBuildParams {
    IvfBuildParams {
        num_partitions: (p.num_partitions > 0).then_some(p.num_partitions as usize),
        max_iters: or_default(p.max_iterations, DEFAULT_MAX_ITERATIONS),
        sample_rate: or_default(p.sample_rate, DEFAULT_SAMPLE_RATE),
        ..Default::default()
    }
}

pub fn pq_params(p: &LanceVectorIndexParams) -> PQBuildParams {
    PQBuildParams {
        num_sub_vectors: or_default(p.num_sub_vectors, DEFAULT_NUM_SUB_VECTORS),
        num_bits: or_default(p.num_bits, DEFAULT_PQ_BITS),
        max_iters: or_default(p.max_iterations, DEFAULT_MAX_ITERATIONS),
        sample_rate: or_default(p.sample_rate, DEFAULT_SAMPLE_RATE),
        ..Default::default()
    }
}

fn small_bits<T: TryFrom<u32>>(bits: u32, default: T, name: &str) -> CResult<T> {
    if bits == 0 {
        return Ok(default);
    }
    T::try_from(bits).map_err(|_| invalid(format!("{name} = {bits} is out of range")))
}

fn hnsw_params(p: &LanceVectorIndexParams) -> HnswBuildParams {
    HnswBuildParams::default()
        .num_edges(or_default(p.hnsw_m, DEFAULT_HNSW_M))
        .ef_construction(or_default(p.hnsw_ef_construction, DEFAULT_HNSW_EF_CONSTRUCTION))
}

/// The name of a `LanceVectorIndexType` value, as lance.h spells it.
pub fn vector_type_name(index_type: i32) -> Option<&'static str> {
    Some(match index_type {
        IVF_FLAT => "IVF_FLAT",
        IVF_SQ => "IVF_SQ",
        IVF_PQ => "IVF_PQ",
        IVF_HNSW_SQ => "IVF_HNSW_SQ",
        IVF_HNSW_PQ => "IVF_HNSW_PQ",
        IVF_HNSW_FLAT => "IVF_HNSW_FLAT",
        IVF_RQ => "IVF_RQ",
        _ => return None,
    })
}

/// Whether the index type quantizes with PQ (and so needs a codebook).
pub fn uses_pq(index_type: i32) -> bool {
    matches!(index_type, IVF_PQ | IVF_HNSW_PQ)
}

/// Converts the C params into the core's, stage by stage, with `ivf` as the
/// first stage (callers may pass one that carries an injected model).
pub fn vector_params_with_ivf(
    p: &LanceVectorIndexParams,
    ivf: IvfBuildParams,
    pq: PQBuildParams,
) -> CResult<(IndexType, VectorIndexParams)> {
    let metric = metric_from_c(p.metric, "params->metric")?;
    let sq = || -> CResult<SQBuildParams> {
        Ok(SQBuildParams {
            num_bits: small_bits(p.num_bits, DEFAULT_SQ_BITS, "params->num_bits")?,
            sample_rate: or_default(p.sample_rate, DEFAULT_SAMPLE_RATE),
        })
    };
    Ok(match p.index_type {
        IVF_FLAT => (IndexType::IvfFlat, VectorIndexParams::with_ivf_flat_params(metric, ivf)),
        IVF_SQ => (IndexType::IvfSq, VectorIndexParams::with_ivf_sq_params(metric, ivf, sq()?)),
        IVF_PQ => (IndexType::IvfPq, VectorIndexParams::with_ivf_pq_params(metric, ivf, pq)),
        IVF_HNSW_SQ => {
            (IndexType::IvfHnswSq, VectorIndexParams::with_ivf_hnsw_sq_params(metric, ivf, hnsw_params(p), sq()?))
        }
        IVF_HNSW_PQ => {
            (IndexType::IvfHnswPq, VectorIndexParams::with_ivf_hnsw_pq_params(metric, ivf, hnsw_params(p), pq))
        }
        IVF_HNSW_FLAT => (IndexType::IvfHnswFlat, VectorIndexParams::ivf_hnsw(metric, ivf, hnsw_params(p))),
        IVF_RQ => {
            let rq = if p.num_bits == 0 {
                RQBuildParams::default()
            } else {
                RQBuildParams::new(small_bits(p.num_bits, 0, "params->num_bits")?)
            };
            (IndexType::IvfRq, VectorIndexParams::with_ivf_rq_params(metric, ivf, rq))
        }
        other => {
            return Err(invalid(format!(
                "params->index_type = {other} is not a LanceVectorIndexType (101 = IVF_FLAT .. 107 = IVF_RQ)"
            )))
        }
    })
}

pub fn vector_params(p: &LanceVectorIndexParams) -> CResult<(IndexType, VectorIndexParams)> {
    vector_params_with_ivf(p, ivf_params(p), pq_params(p))
}

/// The scalar index kinds of `LanceScalarIndexType`: the core's `IndexType`
/// numbering (lance-index-core-14.0.2 src/lib.rs), for the types the core
/// builds from `ScalarIndexParams`.
pub fn scalar_kind(index_type: i32) -> CResult<(IndexType, BuiltinIndexType)> {
    match index_type {
        BTREE => Ok((IndexType::BTree, BuiltinIndexType::BTree)),
        BITMAP => Ok((IndexType::Bitmap, BuiltinIndexType::Bitmap)),
        LABEL_LIST => Ok((IndexType::LabelList, BuiltinIndexType::LabelList)),
        INVERTED => Ok((IndexType::Inverted, BuiltinIndexType::Inverted)),
        NGRAM => Ok((IndexType::NGram, BuiltinIndexType::NGram)),
        ZONEMAP => Ok((IndexType::ZoneMap, BuiltinIndexType::ZoneMap)),
        BLOOMFILTER => Ok((IndexType::BloomFilter, BuiltinIndexType::BloomFilter)),
        RTREE => Ok((IndexType::RTree, BuiltinIndexType::RTree)),
        MINHASHLSH => Ok((IndexType::MinHashLsh, BuiltinIndexType::MinHashLsh)),
        other => Err(invalid(format!(
            "index_type = {other} is not a LanceScalarIndexType (1 = BTREE, 2 = BITMAP, 3 = LABEL_LIST, \
             4 = INVERTED, 5 = NGRAM, 8 = ZONEMAP, 9 = BLOOMFILTER, 10 = RTREE, 12 = MINHASHLSH)"
        ))),
    }
}

/// The JSON values a parameter takes.
#[derive(Clone, Copy)]
enum Json {
    /// An integer in `min..=max`.
    Integer {
        min: u64,
        max: u64,
    },
    /// A number strictly between 0 and 1.
    Fraction,
    Bool,
    Object,
}

impl Json {
    fn accepts(self, value: &serde_json::Value) -> bool {
        match self {
            Json::Integer { min, max } => value.as_u64().is_some_and(|v| (min..=max).contains(&v)),
            Json::Fraction => value.as_f64().is_some_and(|v| v > 0.0 && v < 1.0),
            Json::Bool => value.is_boolean(),
            Json::Object => value.is_object(),
        }
    }

    fn describe(self) -> String {
        match self {
            Json::Integer { min, max } if max == u64::MAX => format!("an integer of at least {min}"),
            Json::Integer { min, max } => format!("an integer from {min} to {max}"),
            Json::Fraction => "a number between 0 and 1 (exclusive)".to_string(),
            Json::Bool => "true or false".to_string(),
            Json::Object => "a JSON object".to_string(),
        }
    }
}

const COUNT: Json = Json::Integer { min: 1, max: u64::MAX };

/// The keys the core reads for the types whose keys are checked here, with
/// the values it can build with (lance-index-14.0.2 src/scalar/: zonemap.rs
/// `ZoneMapIndexBuilderParams`, bloomfilter.rs
/// `BloomFilterIndexBuilderParams`, rtree.rs `RTreeParameters` and
/// `validate_page_size`, minhash_lsh/mod.rs `RawMinHashLshIndexParams`;
/// ngram.rs reads none).  The core itself ignores a key it does not know,
/// which would turn a typo into a silent default, and checks some values
/// only once the data is read (or not at all: a zero-sized zone).  The four
/// older types keep the core's leniency, as upstream's library passes their
/// JSON through unchecked.
fn checked_keys(kind: &BuiltinIndexType) -> Option<&'static [(&'static str, Json)]> {
    Some(match kind {
        BuiltinIndexType::NGram => &[],
        BuiltinIndexType::ZoneMap => &[("rows_per_zone", COUNT), ("use_seeds", Json::Bool)],
        BuiltinIndexType::BloomFilter => &[("number_of_items", COUNT), ("probability", Json::Fraction)],
        BuiltinIndexType::RTree => &[("page_size", Json::Integer { min: 2, max: u32::MAX as u64 })],
        BuiltinIndexType::MinHashLsh => &[
            ("num_hashes", Json::Integer { min: 0, max: u32::MAX as u64 }),
            ("num_bands", Json::Integer { min: 0, max: u32::MAX as u64 }),
            ("shingle_size", Json::Integer { min: 0, max: u32::MAX as u64 }),
            ("tokenizer", Json::Object),
        ],
        _ => return None,
    })
}

fn check_keys(kind: &BuiltinIndexType, object: &serde_json::Map<String, serde_json::Value>) -> CResult<()> {
    let Some(keys) = checked_keys(kind) else {
        return Ok(());
    };
    for (key, value) in object {
        let Some((_, json)) = keys.iter().find(|(k, _)| k == key) else {
            let known: Vec<&str> = keys.iter().map(|(k, _)| *k).collect();
            return Err(invalid(format!(
                "params_json: '{key}' is not a parameter of a {} index (it takes {})",
                kind.as_str(),
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            )));
        };
        // A JSON null leaves a parameter at its default, as the core reads it.
        if !value.is_null() && !json.accepts(value) {
            return Err(invalid(format!("params_json: '{key}' must be {}, not {value}", json.describe())));
        }
    }
    if *kind == BuiltinIndexType::MinHashLsh {
        // The core checks the MinHash parameters (ranges, bands dividing
        // hashes, the tokenizer) only once the build has read the data;
        // its own parser checks them here, before any work.
        let text = serde_json::Value::Object(object.clone()).to_string();
        MinHashLshIndexParams::from_json(&text)
            .map_err(|e| invalid(format!("params_json: {}", CError::from(e).message)))?;
    }
    Ok(())
}

/// Scalar params from the optional JSON object a caller passes.  Whether it
/// is JSON is checked here for every type (the core would ignore JSON it
/// cannot parse), and the keys of the types `checked_keys` lists.
pub fn scalar_params(kind: BuiltinIndexType, params_json: Option<&str>) -> CResult<ScalarIndexParams> {
    let params = ScalarIndexParams::for_builtin(kind.clone());
    match params_json {
        None => Ok(params),
        Some(text) => {
            let value: serde_json::Value =
                serde_json::from_str(text).map_err(|e| invalid(format!("params_json is not valid JSON: {e}")))?;
            let Some(object) = value.as_object() else {
                return Err(invalid("params_json must be a JSON object"));
            };
            check_keys(&kind, object)?;
            Ok(params.with_params(&value))
        }
    }
}

/// Whether the core refuses a caller's UUID for a fragment-scoped build of
/// this type and picks the segment's UUID itself (lance-14.0.2
/// src/index/create.rs `ensure_index_uuid_allowed`: BTree, RTree, NGram,
/// LabelList).
pub fn core_picks_segment_uuid(index_type: IndexType) -> bool {
    matches!(index_type, IndexType::BTree | IndexType::LabelList | IndexType::NGram | IndexType::RTree)
}

/// How a segment build gets its vector model: upstream's
/// `LanceIndexSegmentBuildMode`, validated.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BuildMode {
    /// A given model is used; without one the build trains.
    Auto,
    /// The build trains; a given model is refused.
    LocalTrain,
    /// The given model is used; without one the build is refused.
    Precomputed,
}

/// `LanceIndexSegmentBuildMode`, validated.
pub fn build_mode(mode: i32) -> CResult<BuildMode> {
    match mode {
        0 => Ok(BuildMode::Auto),
        1 => Ok(BuildMode::LocalTrain),
        2 => Ok(BuildMode::Precomputed),
        other => Err(invalid(format!(
            "options->mode = {other} is not a LanceIndexSegmentBuildMode (0 = AUTO, 1 = LOCAL_TRAIN, 2 = PRECOMPUTED)"
        ))),
    }
}

/// The `LanceVectorIndexType` or `LanceScalarIndexType` value of a segment
/// type name (`index::codec::segment_type_name`), if either enum has one.
pub fn index_type_code(name: &str) -> Option<i32> {
    Some(match name {
        "BTree" => BTREE,
        "Bitmap" => BITMAP,
        "LabelList" => LABEL_LIST,
        "Inverted" => INVERTED,
        "NGram" => NGRAM,
        "ZoneMap" => ZONEMAP,
        "BloomFilter" => BLOOMFILTER,
        "RTree" => RTREE,
        "MinHashLsh" => MINHASHLSH,
        "IVF_FLAT" => IVF_FLAT,
        "IVF_SQ" => IVF_SQ,
        "IVF_PQ" => IVF_PQ,
        "IVF_HNSW_SQ" => IVF_HNSW_SQ,
        "IVF_HNSW_PQ" => IVF_HNSW_PQ,
        "IVF_HNSW_FLAT" => IVF_HNSW_FLAT,
        "IVF_RQ" => IVF_RQ,
        _ => return None,
    })
}

pub fn write_mode(mode: i32) -> CResult<WriteMode> {
    match mode {
        WRITE_CREATE => Ok(WriteMode::Create),
        WRITE_APPEND => Ok(WriteMode::Append),
        WRITE_OVERWRITE => Ok(WriteMode::Overwrite),
        other => {
            Err(invalid(format!("mode = {other} is not a LanceWriteMode (0 = CREATE, 1 = APPEND, 2 = OVERWRITE)")))
        }
    }
}

/// The expression that goes with a merge mode: required (non-empty) by the
/// `*_IF` modes, refused with any other.
fn merge_expr<'a>(
    expr: Option<&'a str>,
    needed: bool,
    mode_name: &str,
    mode: i32,
    expr_name: &str,
) -> CResult<Option<&'a str>> {
    match (expr, needed) {
        (Some(""), _) => Err(invalid(format!("{expr_name} must not be empty"))),
        (None, true) => Err(invalid(format!("{mode_name} = {mode} needs {expr_name}, which is NULL"))),
        (Some(e), false) => {
            Err(invalid(format!("{expr_name} = \"{e}\" is given but {mode_name} = {mode} takes no expression")))
        }
        (e, _) => Ok(e),
    }
}

/// `LanceMergeWhenMatched` with its expression, validated.
pub fn merge_when_matched(mode: i32, expr: Option<&str>, ds: &Dataset) -> CResult<WhenMatched> {
    const MODE: &str = "params->when_matched";
    const EXPR: &str = "params->when_matched_expr";
    let needs_expr = mode == MERGE_WHEN_MATCHED_UPDATE_IF;
    let known = (MERGE_WHEN_MATCHED_DO_NOTHING..=MERGE_WHEN_MATCHED_DELETE).contains(&mode);
    if !known {
        return Err(invalid(format!(
            "{MODE} = {mode} is not a LanceMergeWhenMatched \
             (0 = DO_NOTHING, 1 = UPDATE_ALL, 2 = UPDATE_IF, 3 = FAIL, 4 = DELETE)"
        )));
    }
    let expr = merge_expr(expr, needs_expr, MODE, mode, EXPR)?;
    Ok(match (mode, expr) {
        (MERGE_WHEN_MATCHED_UPDATE_ALL, _) => WhenMatched::UpdateAll,
        (MERGE_WHEN_MATCHED_UPDATE_IF, Some(e)) => WhenMatched::update_if(ds, e)?,
        (MERGE_WHEN_MATCHED_FAIL, _) => WhenMatched::Fail,
        (MERGE_WHEN_MATCHED_DELETE, _) => WhenMatched::Delete,
        _ => WhenMatched::DoNothing,
    })
}

/// `LanceMergeWhenNotMatched`, validated: whether source-only rows are inserted.
pub fn merge_insert_not_matched(mode: i32) -> CResult<WhenNotMatched> {
    match mode {
        MERGE_WHEN_NOT_MATCHED_INSERT_ALL => Ok(WhenNotMatched::InsertAll),
        MERGE_WHEN_NOT_MATCHED_DO_NOTHING => Ok(WhenNotMatched::DoNothing),
        other => Err(invalid(format!(
            "params->when_not_matched = {other} is not a LanceMergeWhenNotMatched (0 = INSERT_ALL, 1 = DO_NOTHING)"
        ))),
    }
}

/// `LanceMergeWhenNotMatchedBySource` with its expression, validated.
pub fn merge_when_not_matched_by_source(
    mode: i32,
    expr: Option<&str>,
    ds: &Dataset,
) -> CResult<WhenNotMatchedBySource> {
    const MODE: &str = "params->when_not_matched_by_source";
    const EXPR: &str = "params->when_not_matched_by_source_expr";
    let known = (MERGE_WHEN_NOT_MATCHED_BY_SOURCE_KEEP..=MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE_IF).contains(&mode);
    if !known {
        return Err(invalid(format!(
            "{MODE} = {mode} is not a LanceMergeWhenNotMatchedBySource (0 = KEEP, 1 = DELETE, 2 = DELETE_IF)"
        )));
    }
    let expr = merge_expr(expr, mode == MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE_IF, MODE, mode, EXPR)?;
    Ok(match (mode, expr) {
        (MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE, _) => WhenNotMatchedBySource::Delete,
        (MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE_IF, Some(e)) => {
            WhenNotMatchedBySource::delete_if(ds, e).context(EXPR)?
        }
        _ => WhenNotMatchedBySource::Keep,
    })
}

/// `LanceColumnNullableMode`, validated: `None` leaves nullability as it is.
pub fn column_nullable(mode: i32, name: &str) -> CResult<Option<bool>> {
    match mode {
        COLUMN_NULLABLE_UNCHANGED => Ok(None),
        COLUMN_NULLABLE_TRUE => Ok(Some(true)),
        COLUMN_NULLABLE_FALSE => Ok(Some(false)),
        other => Err(invalid(format!(
            "{name} = {other} is not a LanceColumnNullableMode (0 = UNCHANGED, 1 = TRUE, 2 = FALSE)"
        ))),
    }
}

/// A size field of an options struct (`uint64_t`, 0 = the default) as the
/// core's `usize`: None for 0.  `name` is the field as the message names it;
/// `too_large` words the refusal of a value this platform's `size_t` cannot
/// hold.
pub fn size_field(value: u64, name: &str, too_large: &str) -> CResult<Option<usize>> {
    if value == 0 {
        return Ok(None);
    }
    usize::try_from(value).map(Some).map_err(|_| invalid(format!("{name} = {value} {too_large}")))
}
