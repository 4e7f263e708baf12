//! Distributed training of a shared vector model: the request a coordinator
//! sends every worker each round, the statistics a worker returns, both as
//! sealed bytes (floor/bytes.rs), a worker's pass over its share of the
//! sample with the core's own assignment kernel, and the coordinator's
//! reduction into the next centroids.
//!
//! The reduction takes, round by round, the steps of the core's one-node
//! trainer (lance-index 14.0.2 src/vector/kmeans.rs, `KMeans::train_kmeans`
//! and `KMeansAlgoFloat::to_kmeans`), which the core runs over one in-memory
//! sample and does not expose per step: the balanced assignment (bias
//! `balance_factor * cluster size`, the factor 1/n for IVF and 0 for PQ,
//! lowered each round to the largest cluster's spread), the mean of each
//! cluster, an empty cluster given half of the largest one (`split_clusters`:
//! the largest cluster's centroid moved by +-1/1024 on alternating
//! coordinates), unit-norm centroids for the dot metric, and convergence when
//! the loss changes by less than 1e-4 of itself or at the iteration cap.
//! Cosine data is normalized and clustered with L2, as the core does; PQ is
//! trained on residuals to the nearest IVF centroid with L2, one k-means per
//! sub-vector.
//!
//! The sample: each worker draws its share (proportional to its rows) of the
//! sample one-node training draws, with the core's sampler, and gives every
//! sampled vector a key (a SHA-256 of the seed and the vector's bytes).  A
//! phase trains on the vectors whose key falls below a threshold that keeps
//! its sample size, and starts from the vectors of the smallest keys: so when
//! the workers together hold every row (a dataset no larger than the sample),
//! the sample and the initial centroids do not depend on how the fragments
//! are split among workers, and statistics of a split sample reduce to the
//! same centroids as the whole, up to float summation order.

use std::sync::Arc;

use arrow::compute::cast;
use arrow_array::cast::AsArray;
use arrow_array::types::Float32Type;
use arrow_array::Array;
use arrow_schema::{DataType, Field};
use lance::index::vector::utils::{filter_finite_training_data, get_vector_dim, maybe_sample_training_data};
use lance::Dataset;
use lance_index::vector::ivf::new_ivf_transformer;
use lance_index::vector::kmeans::{KMeansAlgo, KMeansAlgoFloat};
use lance_linalg::distance::DistanceType;
use lance_linalg::kernels::normalize_fsl_owned;
use sha2::{Digest, Sha256};

use crate::floor::bytes::{hex, ByteReader, ByteWriter};
use crate::floor::error::{invalid, CError, CResult, Code, Context};
use crate::floor::params::{metric_from_c, METRIC_COSINE, METRIC_DOT};
use crate::floor::progress::Steps;
use crate::floor::runtime::block_on;
use crate::floor::vector_model::{fsl, LanceVectorModel, PqModel};

/// 2: the plan records the index type the model is trained for.
const REQUEST_MAGIC: &[u8; 8] = b"LCTRAIN2";
const STATS_MAGIC: &[u8; 8] = b"LCTSTAT1";
/// Progress stages of a worker's round (lance.h lists them).
const STAGE_SAMPLE: &str = "training_sample";
const STAGE_RESIDUALS: &str = "training_residuals";
const STAGE_IVF_ROUND: &str = "training_ivf_round";
const STAGE_PQ_ROUND: &str = "training_pq_round";

/// Multiply-adds between two checkpoints of an assignment (tens of
/// milliseconds on one core), and the fewest rows a chunk holds.
const CHUNK_WORK: usize = 1 << 27;
const MIN_CHUNK_ROWS: usize = 256;

/// The core's convergence threshold (`KMeansParams::default().tolerance`).
const TOLERANCE: f64 = 1e-4;
/// The core trains one k-means on at most this many rows per centroid
/// (`KMeans::train_kmeans`: "the threshold 512").
const MAX_ROWS_PER_CENTROID: usize = 512;

/// The phases, in order; the values are lance.h's LanceVectorTrainingPhase.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Phase {
    IvfInit = 0,
    Ivf = 1,
    PqInit = 2,
    Pq = 3,
    Done = 4,
}

impl Phase {
    fn from_u8(v: u8) -> Option<Self> {
        [Phase::IvfInit, Phase::Ivf, Phase::PqInit, Phase::Pq, Phase::Done].into_iter().find(|p| *p as u8 == v)
    }
}

/// What every round of one training shares.
#[derive(Clone, PartialEq, Debug)]
pub struct Plan {
    pub column: String,
    /// lance.h's LanceMetricType.
    pub metric: i32,
    pub num_partitions: u32,
    /// 0: no PQ codebook (IVF_FLAT, IVF_SQ, ...).
    pub num_sub_vectors: u32,
    pub num_bits: u32,
    pub max_iters: u32,
    pub sample_rate: u32,
    pub seed: u64,
    /// lance.h's LanceVectorIndexType the model is trained for (recorded in it).
    pub index_type: i32,
}

impl Plan {
    fn pq_centroids(&self) -> usize {
        if self.num_sub_vectors == 0 {
            0
        } else {
            1usize << self.num_bits
        }
    }
    /// The sample one phase trains on (the core's, capped as the core caps).
    fn ivf_sample(&self) -> usize {
        self.num_partitions as usize * (self.sample_rate as usize).min(MAX_ROWS_PER_CENTROID)
    }
    fn pq_sample(&self) -> usize {
        self.pq_centroids() * (self.sample_rate as usize).min(MAX_ROWS_PER_CENTROID)
    }
    /// The distance the IVF k-means runs with.
    fn ivf_distance(&self) -> DistanceType {
        if self.metric == METRIC_DOT {
            DistanceType::Dot
        } else {
            DistanceType::L2
        }
    }
    fn write(&self, w: &mut ByteWriter) {
        w.str(&self.column).i32(self.metric).u32(self.num_partitions).u32(self.num_sub_vectors).u32(self.num_bits);
        w.u32(self.max_iters).u32(self.sample_rate).u64(self.seed).i32(self.index_type);
    }
    fn read(r: &mut ByteReader) -> CResult<Self> {
        Ok(Self {
            column: r.str()?,
            metric: r.i32()?,
            num_partitions: r.u32()?,
            num_sub_vectors: r.u32()?,
            num_bits: r.u32()?,
            max_iters: r.u32()?,
            sample_rate: r.u32()?,
            seed: r.u64()?,
            index_type: r.i32()?,
        })
    }
}

/// One k-means problem: the IVF centroids, or the codebook of one PQ sub-vector.
#[derive(Clone, Debug)]
pub struct Problem {
    pub k: usize,
    pub dim: usize,
    pub centroids: Vec<f32>,
    /// Cluster sizes after the last round (after empty clusters were split).
    pub sizes: Vec<u64>,
    /// The balance factor the core starts from (1/n for IVF, 0 for PQ), and
    /// the one the last round measured (f32::MAX before the first).
    pub base_balance: f32,
    pub adjusted_balance: f32,
    /// The last round's loss; f64::MAX before the first.
    pub loss: f64,
    pub iterations: u32,
    pub done: bool,
}

impl Problem {
    fn new(k: usize, dim: usize, centroids: Vec<f32>, base_balance: f32) -> Self {
        Self {
            k,
            dim,
            centroids,
            sizes: vec![0; k],
            base_balance,
            adjusted_balance: f32::MAX,
            loss: f64::MAX,
            iterations: 0,
            done: false,
        }
    }
    /// The factor this round's assignment biases cluster sizes by.
    fn balance(&self) -> f32 {
        self.adjusted_balance.min(self.base_balance)
    }
    fn write(&self, w: &mut ByteWriter) {
        w.u64(self.k as u64).u64(self.dim as u64).f32s(&self.centroids).u64s(&self.sizes);
        w.f32(self.base_balance).f32(self.adjusted_balance).f64(self.loss).u32(self.iterations);
        w.u8(self.done as u8);
    }
    fn read(r: &mut ByteReader) -> CResult<Self> {
        let p = Self {
            k: r.len()?,
            dim: r.len()?,
            centroids: r.f32s()?,
            sizes: r.u64s()?,
            base_balance: r.f32()?,
            adjusted_balance: r.f32()?,
            loss: r.f64()?,
            iterations: r.u32()?,
            done: r.u8()? != 0,
        };
        if p.k == 0 || p.dim == 0 || p.centroids.len() != p.k * p.dim || p.sizes.len() != p.k {
            return Err(r.bad("a k-means problem of inconsistent shape"));
        }
        Ok(p)
    }
}

/// A round's request: the whole state of a training, so a coordinator can
/// be rebuilt from the last request it sent.
#[derive(Clone, Debug)]
pub struct Request {
    pub plan: Plan,
    /// The SHA-256 of the request as it was parsed (statistics name it);
    /// `fingerprint()` computes it for a request made here.
    parsed_fingerprint: Option<[u8; 32]>,
    pub phase: Phase,
    /// Reductions so far.
    pub round: u32,
    /// Learned from the first round's statistics; 0 before.
    pub dim: u64,
    pub version: u64,
    pub total_rows: u64,
    pub ivf_rows: u64,
    pub pq_rows: u64,
    /// The final IVF centroids, once the IVF phase ended.
    pub ivf: Vec<f32>,
    pub ivf_loss: f64,
    pub ivf_iterations: u32,
    pub problems: Vec<Problem>,
}

impl Request {
    pub fn new(plan: Plan) -> Self {
        Self {
            plan,
            parsed_fingerprint: None,
            phase: Phase::IvfInit,
            round: 0,
            dim: 0,
            version: 0,
            total_rows: 0,
            ivf_rows: 0,
            pq_rows: 0,
            ivf: Vec::new(),
            ivf_loss: 0.0,
            ivf_iterations: 0,
            problems: Vec::new(),
        }
    }

    fn writer(&self) -> ByteWriter {
        let mut w = ByteWriter::new(REQUEST_MAGIC);
        self.plan.write(&mut w);
        w.u8(self.phase as u8).u32(self.round).u64(self.dim).u64(self.version).u64(self.total_rows);
        w.u64(self.ivf_rows).u64(self.pq_rows).f32s(&self.ivf).f64(self.ivf_loss).u32(self.ivf_iterations);
        w.u64(self.problems.len() as u64);
        for p in &self.problems {
            p.write(&mut w);
        }
        w
    }

    pub fn serialize(&self) -> Vec<u8> {
        self.writer().seal()
    }

    /// The SHA-256 of the request: statistics name the request they answer.
    pub fn fingerprint(&self) -> [u8; 32] {
        self.parsed_fingerprint.unwrap_or_else(|| Sha256::digest(self.writer().body()).into())
    }

    pub fn parse(bytes: &[u8], name: &str) -> CResult<Self> {
        let (mut r, digest) = ByteReader::unseal(bytes, REQUEST_MAGIC, "a lance-c training request", name)?;
        let plan = Plan::read(&mut r)?;
        let phase = Phase::from_u8(r.u8()?).ok_or_else(|| r.bad("unknown phase"))?;
        let mut q = Self {
            plan,
            parsed_fingerprint: Some(digest),
            phase,
            round: r.u32()?,
            dim: r.u64()?,
            version: r.u64()?,
            total_rows: r.u64()?,
            ivf_rows: r.u64()?,
            pq_rows: r.u64()?,
            ivf: r.f32s()?,
            ivf_loss: r.f64()?,
            ivf_iterations: r.u32()?,
            problems: Vec::new(),
        };
        let n = r.len()?;
        for _ in 0..n.min(1 << 16) {
            q.problems.push(Problem::read(&mut r)?);
        }
        r.finish()?;
        q.check().map_err(|detail| r.bad(detail))?;
        Ok(q)
    }

    /// The shape every phase needs, so a worker never indexes past it.
    fn check(&self) -> Result<(), &'static str> {
        let m = self.plan.num_sub_vectors as usize;
        let dim = self.dim as usize;
        if self.plan.num_partitions == 0 || (m > 0 && !matches!(self.plan.num_bits, 4 | 8)) {
            return Err("training parameters out of range");
        }
        let ok = match self.phase {
            Phase::IvfInit => self.problems.is_empty(),
            Phase::Ivf => {
                self.problems.len() == 1
                    && self.problems[0].k == self.plan.num_partitions as usize
                    && self.problems[0].dim == dim
            }
            Phase::PqInit => m > 0 && dim % m == 0 && self.ivf.len() == self.plan.num_partitions as usize * dim,
            Phase::Pq => {
                m > 0
                    && dim % m == 0
                    && self.ivf.len() == self.plan.num_partitions as usize * dim
                    && self.problems.len() == m
                    && self.problems.iter().all(|p| p.dim == dim / m && p.k == self.plan.pq_centroids())
            }
            Phase::Done => {
                self.ivf.len() == self.plan.num_partitions as usize * dim
                    && (m == 0 || self.problems.len() == m)
            }
        };
        if ok {
            Ok(())
        } else {
            Err("a request whose state does not fit its phase")
        }
    }

    /// The model a finished training made.
    pub fn model(&self) -> CResult<LanceVectorModel> {
        if self.phase != Phase::Done {
            return Err(invalid(format!(
                "the training is not done: it is in round {} ({}); reduce the workers' statistics until \
                 lance_vector_training_info reports done",
                self.round,
                phase_name(self.phase)
            )));
        }
        let pq = (self.plan.num_sub_vectors > 0).then(|| PqModel {
            num_sub_vectors: self.plan.num_sub_vectors as usize,
            num_bits: self.plan.num_bits as usize,
            codebook: self.problems.iter().flat_map(|p| p.centroids.iter().copied()).collect(),
        });
        LanceVectorModel::new(self.plan.metric, self.dim as usize, self.ivf.clone(), pq)?.trained_for(self.plan.index_type)
    }
}

pub fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::IvfInit => "choosing the initial IVF centroids",
        Phase::Ivf => "IVF k-means",
        Phase::PqInit => "choosing the initial PQ codebook",
        Phase::Pq => "PQ k-means",
        Phase::Done => "done",
    }
}

/// One problem's statistics from one worker: per cluster, the sum of the
/// vectors assigned to it, their count, the sum of their distances and the
/// largest distance.  A problem that is done has none.
#[derive(Clone, Debug, Default)]
pub struct ProblemStats {
    pub sums: Vec<f64>,
    pub counts: Vec<u64>,
    pub losses: Vec<f64>,
    pub radius: Vec<f32>,
}

/// What a worker returns for one request.
#[derive(Clone, Debug)]
pub struct Stats {
    pub request: [u8; 32],
    pub version: u64,
    pub total_rows: u64,
    pub dim: u64,
    pub fragments: Vec<u32>,
    /// Rows of the worker's fragments, and of its sample this phase used.
    pub rows: u64,
    pub sample_rows: u64,
    /// Init phases: the candidates of the smallest keys (keys, then vectors).
    pub keys: Vec<u64>,
    pub vectors: Vec<f32>,
    /// k-means phases: one entry per problem.
    pub problems: Vec<ProblemStats>,
}

impl Stats {
    pub fn serialize(&self) -> Vec<u8> {
        let mut w = ByteWriter::new(STATS_MAGIC);
        w.u64(0); // reserved
        for b in self.request {
            w.u8(b);
        }
        w.u64(self.version).u64(self.total_rows).u64(self.dim).u32s(&self.fragments).u64(self.rows);
        w.u64(self.sample_rows).u64s(&self.keys).f32s(&self.vectors).u64(self.problems.len() as u64);
        for p in &self.problems {
            w.f64s(&p.sums).u64s(&p.counts).f64s(&p.losses).f32s(&p.radius);
        }
        w.seal()
    }

    pub fn parse(bytes: &[u8], name: &str) -> CResult<Self> {
        let (mut r, _) = ByteReader::unseal(bytes, STATS_MAGIC, "lance-c training statistics", name)?;
        r.u64()?;
        let mut request = [0u8; 32];
        for b in request.iter_mut() {
            *b = r.u8()?;
        }
        let mut s = Self {
            request,
            version: r.u64()?,
            total_rows: r.u64()?,
            dim: r.u64()?,
            fragments: r.u32s()?,
            rows: r.u64()?,
            sample_rows: r.u64()?,
            keys: r.u64s()?,
            vectors: r.f32s()?,
            problems: Vec::new(),
        };
        let n = r.len()?;
        for _ in 0..n.min(1 << 16) {
            s.problems.push(ProblemStats { sums: r.f64s()?, counts: r.u64s()?, losses: r.f64s()?, radius: r.f32s()? });
        }
        r.finish()?;
        Ok(s)
    }
}

// ---- the worker ------------------------------------------------------------

/// A worker's share of the sample, kept across rounds.
struct Sample {
    plan: Plan,
    dim: usize,
    /// Sorted by key; `dim` values a row.
    keys: Vec<u64>,
    vectors: Vec<f32>,
    /// Residuals of the PQ rows to the IVF centroids they were computed for.
    residuals: Option<Residuals>,
}

struct Residuals {
    ivf: Vec<f32>,
    /// Whole rows (the PQ candidates come from them).
    rows: Vec<f32>,
    /// The same values one sub-vector at a time, contiguous, as each PQ
    /// round assigns them.
    parts: Vec<Vec<f32>>,
}

/// A training worker: a dataset snapshot and the fragments it samples.
pub struct Worker {
    ds: Arc<Dataset>,
    fragments: Vec<u32>,
    rows: u64,
    total_rows: u64,
    sample: Option<Sample>,
}

fn mismatch(message: impl Into<String>) -> CError {
    CError::new(Code::ModelMismatch, message)
}

/// The key of a vector: the first 8 bytes of SHA-256(seed, its values).
fn key(seed: u64, v: &[f32]) -> u64 {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    for f in v {
        h.update(f.to_le_bytes());
    }
    u64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes"))
}

/// The key below which a phase's rows are taken: `want` of `pool` sampled rows.
fn threshold(want: usize, pool: u64) -> u64 {
    if pool == 0 || want as u64 >= pool {
        return u64::MAX;
    }
    ((want as f64 / pool as f64) * u64::MAX as f64) as u64
}

impl Worker {
    pub fn new(ds: Arc<Dataset>, fragments: Vec<u32>) -> CResult<Self> {
        let mut rows = 0u64;
        for id in &fragments {
            let fragment = ds
                .get_fragment(*id as usize)
                .ok_or_else(|| invalid(format!("fragment {id} is not in dataset version {}", ds.version().version)))?;
            rows += block_on(fragment.count_rows(None))?? as u64;
        }
        let total_rows = block_on(ds.count_rows(None))?? as u64;
        Ok(Self { ds, fragments, rows, total_rows, sample: None })
    }

    /// The pool every phase draws from: the largest sample of the plan.
    fn pool(&self, plan: &Plan) -> u64 {
        self.total_rows.min(plan.ivf_sample().max(plan.pq_sample()) as u64)
    }

    fn sample(&mut self, plan: &Plan, steps: &mut Steps) -> CResult<&mut Sample> {
        if self.sample.as_ref().is_some_and(|s| s.plan == *plan) {
            return Ok(self.sample.as_mut().expect("checked"));
        }
        crate::floor::catalog::check_vector_column(&self.ds, &plan.column, plan.metric)?;
        let dim = get_vector_dim(self.ds.schema(), &plan.column)?;
        let pool = self.pool(plan);
        // This worker's share of the pool, proportional to its rows.
        let share = if self.total_rows == 0 {
            0
        } else {
            ((pool as u128 * self.rows as u128).div_ceil(self.total_rows as u128)) as usize
        };
        let frags = self.fragments.clone();
        steps.start(STAGE_SAMPLE, share as u64, "rows")?;
        let data = steps
            .block_on(maybe_sample_training_data(&self.ds, &plan.column, share, Some(&frags)))?
            .context(format!("sampling column '{}' of fragments {frags:?}", plan.column))?;
        let f32_list = DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, true)), dim as i32);
        let data = if data.value_type() == DataType::Float32 {
            data
        } else {
            cast(&data, &f32_list)?.as_fixed_size_list().clone()
        };
        let data = if plan.metric == METRIC_COSINE { normalize_fsl_owned(data)? } else { data };
        let data = filter_finite_training_data(data)?;
        let values = data.values().as_primitive::<Float32Type>().values();
        let values = &values[..data.len() * dim];
        let mut order: Vec<(u64, usize)> =
            values.chunks_exact(dim).enumerate().map(|(i, v)| (key(plan.seed, v), i)).collect();
        order.sort_by(|a, b| {
            a.0.cmp(&b.0).then_with(|| {
                let (x, y) = (&values[a.1 * dim..(a.1 + 1) * dim], &values[b.1 * dim..(b.1 + 1) * dim]);
                x.iter().map(|f| f.to_bits()).cmp(y.iter().map(|f| f.to_bits()))
            })
        });
        let keys = order.iter().map(|(k, _)| *k).collect();
        let vectors = order.iter().flat_map(|(_, i)| values[i * dim..(i + 1) * dim].iter().copied()).collect();
        self.sample = Some(Sample { plan: plan.clone(), dim, keys, vectors, residuals: None });
        steps.progress(STAGE_SAMPLE, data.len() as u64)?;
        steps.complete(STAGE_SAMPLE)?;
        Ok(self.sample.as_mut().expect("just set"))
    }

    /// Answers one request with this worker's statistics, reporting to and
    /// stopping at `steps`' checkpoints (a cancelled round leaves the worker
    /// as it was, with the sample it had finished drawing).
    pub fn run(&mut self, q: &Request, steps: &mut Steps) -> CResult<Stats> {
        steps.check()?;
        metric_from_c(q.plan.metric, "the request's metric")?;
        let version = self.ds.version().version;
        if q.version != 0 && (q.version != version || q.total_rows != self.total_rows) {
            return Err(mismatch(format!(
                "this worker's dataset is version {version} with {} rows; the training samples version {} with {} \
                 rows: open the dataset at the training's version",
                self.total_rows, q.version, q.total_rows
            )));
        }
        if q.phase == Phase::Done {
            return Err(invalid("the training is done: there is no round to run"));
        }
        let pool = self.pool(&q.plan);
        let (ivf_cut, pq_cut) = (threshold(q.plan.ivf_sample(), pool), threshold(q.plan.pq_sample(), pool));
        let mut out = Stats {
            request: q.fingerprint(),
            version,
            total_rows: self.total_rows,
            dim: 0,
            fragments: self.fragments.clone(),
            rows: self.rows,
            sample_rows: 0,
            keys: Vec::new(),
            vectors: Vec::new(),
            problems: Vec::new(),
        };
        let sample = self.sample(&q.plan, steps)?;
        let dim = sample.dim;
        if q.dim != 0 && q.dim != dim as u64 {
            return Err(mismatch(format!(
                "column '{}' has dimension {dim} here; the training's vectors have {}",
                q.plan.column, q.dim
            )));
        }
        out.dim = dim as u64;
        let ivf_rows = sample.keys.partition_point(|k| *k < ivf_cut);
        let pq_rows = sample.keys.partition_point(|k| *k < pq_cut);
        match q.phase {
            Phase::IvfInit => {
                let n = ivf_rows.min(q.plan.num_partitions as usize);
                out.sample_rows = ivf_rows as u64;
                out.keys = sample.keys[..n].to_vec();
                out.vectors = sample.vectors[..n * dim].to_vec();
            }
            Phase::Ivf => {
                out.sample_rows = ivf_rows as u64;
                let p = &q.problems[0];
                steps.start(STAGE_IVF_ROUND, ivf_rows as u64, "rows")?;
                let (data, mut done) = (&sample.vectors[..ivf_rows * dim], 0);
                out.problems.push(assign(p, data, q.plan.ivf_distance(), steps, STAGE_IVF_ROUND, &mut done)?);
                steps.complete(STAGE_IVF_ROUND)?;
            }
            Phase::PqInit | Phase::Pq => {
                out.sample_rows = pq_rows as u64;
                compute_residuals(sample, &q.ivf, pq_rows, q.plan.num_sub_vectors as usize, steps)?;
                let residuals = sample.residuals.as_ref().expect("just computed");
                if q.phase == Phase::PqInit {
                    let n = pq_rows.min(q.plan.pq_centroids());
                    out.keys = sample.keys[..n].to_vec();
                    out.vectors = residuals.rows[..n * dim].to_vec();
                } else {
                    let active = q.problems.iter().filter(|p| !p.done).count();
                    steps.start(STAGE_PQ_ROUND, (pq_rows * active) as u64, "rows")?;
                    let mut done = 0;
                    for (p, part) in q.problems.iter().zip(&residuals.parts) {
                        if p.done {
                            out.problems.push(ProblemStats::default());
                        } else {
                            out.problems.push(assign(p, part, DistanceType::L2, steps, STAGE_PQ_ROUND, &mut done)?);
                        }
                    }
                    steps.complete(STAGE_PQ_ROUND)?;
                }
            }
            Phase::Done => unreachable!("refused above"),
        }
        Ok(out)
    }
}

/// The residuals of the first `rows` sampled vectors to their nearest IVF
/// centroid (the core's transformer), whole and split into `m` sub-vectors,
/// kept while the centroids stay the same.
fn compute_residuals(sample: &mut Sample, ivf: &[f32], rows: usize, m: usize, steps: &mut Steps) -> CResult<()> {
    let dim = sample.dim;
    if ivf.is_empty() || ivf.len() % dim != 0 || m == 0 || dim % m != 0 {
        return Err(invalid("the request carries no IVF centroids and PQ shape of the column's dimension"));
    }
    let fresh = sample.residuals.as_ref().is_some_and(|r| r.ivf == ivf && r.rows.len() == rows * dim);
    if !fresh {
        steps.start(STAGE_RESIDUALS, rows as u64, "rows")?;
        let transformer = new_ivf_transformer(fsl(ivf.to_vec(), dim)?, DistanceType::L2, vec![]);
        let data = fsl(sample.vectors[..rows * dim].to_vec(), dim)?;
        let r = transformer.compute_residual(&data)?;
        let values = r.values().as_primitive::<Float32Type>().values().to_vec();
        let sub = dim / m;
        let parts = (0..m)
            .map(|i| values.chunks_exact(dim).flat_map(|row| row[i * sub..(i + 1) * sub].iter().copied()).collect())
            .collect();
        sample.residuals = Some(Residuals { ivf: ivf.to_vec(), rows: values, parts });
        steps.progress(STAGE_RESIDUALS, rows as u64)?;
        steps.complete(STAGE_RESIDUALS)?;
    }
    Ok(())
}

/// One problem's statistics over `data`, with the core's assignment kernel,
/// in chunks of about `CHUNK_WORK` multiply-adds with a checkpoint after
/// each (`done` counts the rows of the stage so far).  Rows are assigned
/// independently, so chunks change nothing but the order of the sums.
fn assign(
    p: &Problem,
    data: &[f32],
    distance: DistanceType,
    steps: &mut Steps,
    stage: &str,
    done: &mut u64,
) -> CResult<ProblemStats> {
    let dim = p.dim;
    let sizes: Vec<usize> = p.sizes.iter().map(|s| *s as usize).collect();
    let chunk_rows = (CHUNK_WORK / (p.k * dim).max(1)).max(MIN_CHUNK_ROWS);
    let mut out = ProblemStats {
        sums: vec![0f64; p.k * dim],
        counts: vec![0u64; p.k],
        losses: vec![0f64; p.k],
        radius: vec![0f32; p.k],
    };
    for chunk in data.chunks(chunk_rows * dim) {
        let (membership, radius, losses) =
            <KMeansAlgoFloat<Float32Type> as KMeansAlgo<f32>>::compute_membership_and_loss(
                &p.centroids,
                chunk,
                dim,
                distance,
                p.balance(),
                Some(&sizes),
                None,
            );
        let mut counts = vec![0u64; p.k];
        for (row, cluster) in chunk.chunks_exact(dim).zip(&membership) {
            if let Some(c) = cluster {
                let c = *c as usize;
                counts[c] += 1;
                for (s, v) in out.sums[c * dim..(c + 1) * dim].iter_mut().zip(row) {
                    *s += *v as f64;
                }
            }
        }
        // A cluster's radius is the largest distance of its members (the
        // kernel gives 0 to a cluster without members in the chunk).
        for c in 0..p.k {
            if counts[c] > 0 {
                out.radius[c] = if out.counts[c] == 0 { radius[c] } else { out.radius[c].max(radius[c]) };
                out.counts[c] += counts[c];
                out.losses[c] += losses[c];
            }
        }
        *done += (chunk.len() / dim) as u64;
        steps.progress(stage, *done)?;
    }
    Ok(out)
}

// ---- the coordinator ---------------------------------------------------------

/// Checks that `stats` answer `q`, from one dataset version, and cover its
/// rows exactly once; returns the dimension.
fn check_stats(q: &Request, stats: &[Stats]) -> CResult<u64> {
    if stats.is_empty() {
        return Err(invalid("no statistics: every worker's statistics of this round are needed"));
    }
    let want = q.fingerprint();
    for (i, s) in stats.iter().enumerate() {
        if s.request != want {
            return Err(mismatch(format!(
                "statistics #{i} answer another request ({}), not this training's round {} ({}): computed against \
                 other centroids, another column, parameters or seed, or an earlier round",
                &hex(&s.request)[..16],
                q.round,
                &hex(&want)[..16]
            )));
        }
    }
    let first = &stats[0];
    for (i, s) in stats.iter().enumerate() {
        if (s.version, s.total_rows, s.dim) != (first.version, first.total_rows, first.dim) {
            return Err(mismatch(format!(
                "statistics #{i} come from dataset version {} ({} rows, dimension {}), statistics #0 from version {} \
                 ({} rows, dimension {})",
                s.version, s.total_rows, s.dim, first.version, first.total_rows, first.dim
            )));
        }
    }
    let mut seen: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for (i, s) in stats.iter().enumerate() {
        for f in &s.fragments {
            if let Some(j) = seen.insert(*f, i) {
                return Err(CError::new(
                    Code::OverlappingSegments,
                    format!("fragment {f} is in statistics #{j} and #{i}: each fragment must be sampled by one worker"),
                ));
            }
        }
    }
    let rows: u64 = stats.iter().map(|s| s.rows).sum();
    if rows != first.total_rows {
        return Err(invalid(format!(
            "the statistics cover {rows} of the dataset's {} rows: every fragment must be in one worker's statistics \
             (a worker's statistics are missing)",
            first.total_rows
        )));
    }
    Ok(first.dim)
}

/// The `k` candidates of the smallest keys among all statistics.
fn smallest(stats: &[Stats], dim: usize, k: usize, what: &str) -> CResult<Vec<f32>> {
    let mut all: Vec<(u64, &[f32])> = Vec::new();
    for (i, s) in stats.iter().enumerate() {
        if s.vectors.len() != s.keys.len() * dim {
            return Err(invalid(format!("statistics #{i} carry {} keys for {} values", s.keys.len(), s.vectors.len())));
        }
        all.extend(s.keys.iter().copied().zip(s.vectors.chunks_exact(dim)));
    }
    let rows: u64 = stats.iter().map(|s| s.sample_rows).sum();
    if (all.len() < k) || (rows as usize) < k {
        return Err(invalid(format!(
            "{what} needs {k} sample rows, the workers sampled {rows}: the dataset has too few (non-null, finite) rows"
        )));
    }
    all.sort_by(|a, b| {
        a.0.cmp(&b.0).then_with(|| a.1.iter().map(|f| f.to_bits()).cmp(b.1.iter().map(|f| f.to_bits())))
    });
    Ok(all[..k].iter().flat_map(|(_, v)| v.iter().copied()).collect())
}

/// Scales each nonzero centroid to unit length (the dot metric's k-means).
fn normalize(centroids: &mut [f32], dim: usize) {
    for c in centroids.chunks_exact_mut(dim) {
        let norm = c.iter().map(|v| v * v).sum::<f32>().sqrt();
        if norm > 0.0 {
            c.iter_mut().for_each(|v| *v /= norm);
        }
    }
}

/// An empty cluster gets half of the largest one, as the core's
/// `split_clusters` does.
fn split_clusters(sizes: &mut [u64], centroids: &mut [f32], dim: usize) {
    let eps = 1.0f32 / 1024.0;
    for i in 0..sizes.len() {
        if sizes[i] != 0 {
            continue;
        }
        let Some(j) = (0..sizes.len()).max_by(|a, b| sizes[*a].cmp(&sizes[*b]).then(b.cmp(a))) else {
            break;
        };
        if sizes[j] < 2 {
            break;
        }
        sizes[i] = sizes[j] / 2;
        sizes[j] -= sizes[i];
        for d in 0..dim {
            let (up, down) = if d % 2 == 0 { (1.0 + eps, 1.0 - eps) } else { (1.0 - eps, 1.0 + eps) };
            centroids[i * dim + d] = centroids[j * dim + d] * up;
            centroids[j * dim + d] *= down;
        }
    }
}

/// One k-means iteration of problem `index` from every worker's statistics.
fn step(p: &mut Problem, stats: &[Stats], index: usize, n: u64, max_iters: u32, dot: bool) -> CResult<()> {
    let (k, dim) = (p.k, p.dim);
    let mut sums = vec![0f64; k * dim];
    let mut counts = vec![0u64; k];
    let mut losses = vec![0f64; k];
    let mut radius = vec![0f32; k];
    for (i, s) in stats.iter().enumerate() {
        let ps = s.problems.get(index).ok_or_else(|| invalid(format!("statistics #{i} lack k-means problem {index}")))?;
        if ps.sums.len() != k * dim || ps.counts.len() != k || ps.losses.len() != k || ps.radius.len() != k {
            return Err(invalid(format!("statistics #{i} have the wrong shape for k-means problem {index}")));
        }
        sums.iter_mut().zip(&ps.sums).for_each(|(a, b)| *a += b);
        counts.iter_mut().zip(&ps.counts).for_each(|(a, b)| *a += b);
        losses.iter_mut().zip(&ps.losses).for_each(|(a, b)| *a += b);
        radius.iter_mut().zip(&ps.radius).for_each(|(a, b)| *a = a.max(*b));
    }
    let balance = p.balance();
    // The core's `compute_cluster_sizes`: the largest cluster's spread.
    let largest = (0..k).max_by(|a, b| counts[*a].cmp(&counts[*b]).then(b.cmp(a))).unwrap_or(0);
    let adjusted = if counts[largest] == 0 {
        f32::MAX
    } else {
        (radius[largest] - losses[largest] as f32 / counts[largest] as f32) / n as f32
    };
    // The core's `compute_balance_loss`.
    let size_loss = counts.iter().map(|c| c * c).sum::<u64>() as f32;
    let balance_loss = balance * (size_loss - (n * n) as f32 / k as f32);
    let loss = losses.iter().sum::<f64>() + balance_loss as f64;
    let mut centroids = vec![0f32; k * dim];
    for c in 0..k {
        if counts[c] > 0 {
            let scale = 1.0f32 / counts[c] as f32;
            for d in 0..dim {
                centroids[c * dim + d] = sums[c * dim + d] as f32 * scale;
            }
        }
    }
    split_clusters(&mut counts, &mut centroids, dim);
    if dot {
        normalize(&mut centroids, dim);
    }
    let converged = if loss == 0.0 { p.loss == 0.0 } else { (p.loss - loss).abs() < TOLERANCE * loss.abs() };
    p.centroids = centroids;
    p.sizes = counts;
    p.adjusted_balance = adjusted;
    p.loss = loss;
    p.iterations += 1;
    p.done = converged || p.iterations >= max_iters;
    Ok(())
}

/// The next request from this round's statistics; `q` is left as it was if
/// any statistics are refused.
pub fn reduce(q: &Request, stats: &[Stats]) -> CResult<Request> {
    if q.phase == Phase::Done {
        return Err(invalid("the training is done: there is nothing to reduce"));
    }
    let dim64 = check_stats(q, stats)?;
    let dim = dim64 as usize;
    let mut next = q.clone();
    next.parsed_fingerprint = None;
    next.round += 1;
    let sample_rows: u64 = stats.iter().map(|s| s.sample_rows).sum();
    let plan = &q.plan;
    match q.phase {
        Phase::IvfInit => {
            if plan.num_sub_vectors > 0 && dim % plan.num_sub_vectors as usize != 0 {
                return Err(invalid(format!(
                    "num_sub_vectors = {} does not divide the dimension {dim} of column '{}'",
                    plan.num_sub_vectors, plan.column
                )));
            }
            let k = plan.num_partitions as usize;
            let mut centroids = smallest(stats, dim, k, "IVF training")?;
            if plan.metric == METRIC_DOT {
                normalize(&mut centroids, dim);
            }
            next.dim = dim64;
            next.version = stats[0].version;
            next.total_rows = stats[0].total_rows;
            next.ivf_rows = sample_rows;
            // The core divides a balance factor of 1.0 by the sample size.
            next.problems = vec![Problem::new(k, dim, centroids, 1.0 / sample_rows as f32)];
            next.phase = Phase::Ivf;
        }
        Phase::Ivf => {
            // A worker retried on another process may have drawn a new sample
            // of about the same size: the round's own size is the one used.
            next.ivf_rows = sample_rows;
            step(&mut next.problems[0], stats, 0, sample_rows, plan.max_iters, plan.metric == METRIC_DOT)?;
            if next.problems[0].done {
                let p = next.problems.remove(0);
                next.ivf = p.centroids;
                next.ivf_loss = p.loss;
                next.ivf_iterations = p.iterations;
                next.phase = if plan.num_sub_vectors > 0 { Phase::PqInit } else { Phase::Done };
            }
        }
        Phase::PqInit => {
            let k = plan.pq_centroids();
            let m = plan.num_sub_vectors as usize;
            let sub = dim / m;
            let initial = smallest(stats, dim, k, "PQ training")?;
            next.pq_rows = sample_rows;
            next.problems = (0..m)
                .map(|i| {
                    let c = initial.chunks_exact(dim).flat_map(|r| r[i * sub..(i + 1) * sub].iter().copied()).collect();
                    Problem::new(k, sub, c, 0.0)
                })
                .collect();
            next.phase = Phase::Pq;
        }
        Phase::Pq => {
            next.pq_rows = sample_rows;
            for i in 0..next.problems.len() {
                if !next.problems[i].done {
                    step(&mut next.problems[i], stats, i, sample_rows, plan.max_iters, false)?;
                }
            }
            if next.problems.iter().all(|p| p.done) {
                next.phase = Phase::Done;
            }
        }
        Phase::Done => unreachable!("refused above"),
    }
    Ok(next)
}
