//! The index parameters of lance.h (`LanceVectorIndexParams`, a scalar
//! index's JSON) as the core's build parameters: each vector type's stages
//! (IVF, PQ, SQ, HNSW, RQ) with the defaults lance.h documents, and a scalar
//! type's JSON, checked.  Which types exist, and what each is, is
//! `index::kinds`'s.

use lance::index::vector::VectorIndexParams;
use lance_index::scalar::minhash_lsh::MinHashLshIndexParams;
use lance_index::scalar::{BuiltinIndexType, ScalarIndexParams};
use lance_index::vector::bq::RQBuildParams;
use lance_index::vector::hnsw::builder::HnswBuildParams;
use lance_index::vector::ivf::IvfBuildParams;
use lance_index::vector::pq::PQBuildParams;
use lance_index::vector::sq::builder::SQBuildParams;
use lance_index::IndexType;

use crate::boundary::error::{invalid, not_supported, CError, CResult};
use crate::boundary::params::{metric_from_c, LanceVectorIndexParams};
use crate::index::kinds::{self, vector_kind};

/// The defaults lance.h documents for zero fields.
const DEFAULT_MAX_ITERATIONS: usize = 50;
const DEFAULT_SAMPLE_RATE: usize = 256;
const DEFAULT_NUM_SUB_VECTORS: usize = 16;
const DEFAULT_PQ_BITS: usize = 8;
const DEFAULT_SQ_BITS: u16 = 8;
const DEFAULT_HNSW_M: usize = 20;
const DEFAULT_HNSW_EF_CONSTRUCTION: usize = 150;

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

/// Converts the C params into the core's, stage by stage, with `ivf` as the
/// first stage (callers may pass one that carries an injected model).
pub fn vector_params_with_ivf(
    p: &LanceVectorIndexParams,
    ivf: IvfBuildParams,
    pq: PQBuildParams,
) -> CResult<(IndexType, VectorIndexParams)> {
    let metric = metric_from_c(p.metric, "params->metric")?;
    let kind = vector_kind(p.index_type, "params->index_type")?;
    let sq = || -> CResult<SQBuildParams> {
        Ok(SQBuildParams {
            num_bits: small_bits(p.num_bits, DEFAULT_SQ_BITS, "params->num_bits")?,
            sample_rate: or_default(p.sample_rate, DEFAULT_SAMPLE_RATE),
        })
    };
    // The one per-type match: each vector type's stages as the core builds them.
    let params = match kind.core {
        IndexType::IvfFlat => VectorIndexParams::with_ivf_flat_params(metric, ivf),
        IndexType::IvfSq => VectorIndexParams::with_ivf_sq_params(metric, ivf, sq()?),
        IndexType::IvfPq => VectorIndexParams::with_ivf_pq_params(metric, ivf, pq),
        IndexType::IvfHnswSq => VectorIndexParams::with_ivf_hnsw_sq_params(metric, ivf, hnsw_params(p), sq()?),
        IndexType::IvfHnswPq => VectorIndexParams::with_ivf_hnsw_pq_params(metric, ivf, hnsw_params(p), pq),
        IndexType::IvfHnswFlat => VectorIndexParams::ivf_hnsw(metric, ivf, hnsw_params(p)),
        IndexType::IvfRq => {
            let rq = if p.num_bits == 0 {
                RQBuildParams::default()
            } else {
                RQBuildParams::new(small_bits(p.num_bits, 0, "params->num_bits")?)
            };
            VectorIndexParams::with_ivf_rq_params(metric, ivf, rq)
        }
        // kinds/tests.rs converts every vector row, so a row without an arm fails there.
        other => return Err(not_supported(format!("{} ({other}) has no build parameters", kind.name))),
    };
    Ok((kind.core, params))
}

pub fn vector_params(p: &LanceVectorIndexParams) -> CResult<(IndexType, VectorIndexParams)> {
    vector_params_with_ivf(p, ivf_params(p), pq_params(p))
}

/// A `LanceScalarIndexType` value as the core's types: its `IndexType` and
/// the builtin kind its `ScalarIndexParams` name.
pub fn scalar_kind(code: i32) -> CResult<(IndexType, BuiltinIndexType)> {
    let kind = kinds::scalar_kind(code)?;
    let builtin = BuiltinIndexType::try_from(kind.core)
        .map_err(|_| not_supported(format!("{} ({}) has no builtin scalar kind", kind.name, kind.core)))?;
    Ok((kind.core, builtin))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::kinds::{Family, KINDS};

    /// A row without its arm in `build_params`' per-type match fails here.
    #[test]
    fn every_type_has_build_parameters() {
        for k in KINDS {
            match k.family {
                Family::Vector => {
                    let (core, _) = vector_params(&LanceVectorIndexParams::defaults(k.code))
                        .unwrap_or_else(|e| panic!("{}: {}", k.name, e.message));
                    assert_eq!(core, k.core, "{}", k.name);
                }
                Family::Scalar => {
                    let (core, builtin) = scalar_kind(k.code).unwrap_or_else(|e| panic!("{}: {}", k.name, e.message));
                    assert_eq!(core, k.core, "{}", k.name);
                    scalar_params(builtin, None).unwrap_or_else(|e| panic!("{}: {}", k.name, e.message));
                }
            }
        }
    }
}
