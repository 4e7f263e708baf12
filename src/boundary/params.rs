//! Parameters and enums as they arrive from C (plain integers, zero meaning
//! "default"), validated and converted to the core's types.  Every enum
//! value and default lance.h documents is named here once, but for the
//! index types and their parameters: `index::kinds` and
//! `index::build_params`.

use lance::dataset::{WhenMatched, WhenNotMatched, WhenNotMatchedBySource, WriteMode};
use lance::datatypes::BlobHandling;
use lance::index::vector::VectorIndexParams;
use lance::Dataset;
use lance_index::scalar::ScalarIndexParams;
use lance_index::{IndexParams, IndexType};
use lance_linalg::distance::DistanceType;

use crate::boundary::error::{invalid, CResult, Context};

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
/// runtime thread).  The core's parameter types, per index type, are made
/// in `index::build_params`.
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

/// The core's `IndexType` of a `LanceVectorIndexType` value, for
/// `training_options.rs`: lance.h numbers its index types as the core does
/// (lance-index-core-14.0.2 src/lib.rs `IndexType`), so the core's own
/// conversion reads them; its legacy alias `Vector` (100) is not one of
/// lance.h's.  `index::kinds` holds the types; its tests check this agrees.
pub fn vector_index_type(code: i32, name: &str) -> CResult<IndexType> {
    match IndexType::try_from(code) {
        Ok(t) if t.is_vector() && t != IndexType::Vector => Ok(t),
        _ => Err(invalid(format!("{name} = {code} is not a LanceVectorIndexType"))),
    }
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
