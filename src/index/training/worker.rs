//! A training worker (index/training.rs): its share of the sample, drawn
//! once from the training's seed and kept across rounds, and its answer to
//! each request, computed with the core's own assignment kernel.

use std::sync::Arc;

use arrow::compute::cast;
use arrow_array::cast::AsArray;
use arrow_array::types::Float32Type;
use arrow_array::{Array, FixedSizeListArray};
use arrow_schema::{DataType, Field};
use lance::index::vector::utils::{filter_finite_training_data, get_vector_dim, maybe_sample_training_data};
use lance::Dataset;
use lance_index::vector::ivf::new_ivf_transformer;
use lance_index::vector::kmeans::{KMeansAlgo, KMeansAlgoFloat};
use lance_linalg::distance::DistanceType;
use lance_linalg::kernels::normalize_fsl_owned;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use sha2::{Digest, Sha256};

use super::request::{threshold, NodeState, Stage, Tree, BRANCHING};
use super::{mismatch, Phase, Plan, Problem, ProblemStats, Request, Stats};
use crate::boundary::error::{invalid, CResult, Context};
use crate::boundary::params::{metric_from_c, METRIC_COSINE};
use crate::index::catalog::{live_rows, recorded_rows};
use crate::index::progress::Steps;
use crate::index::vector_model::fsl;
use crate::process::runtime::block_on;

/// Progress stages of a worker's round (lance.h lists them).
const STAGE_SAMPLE: &str = "training_sample";
const STAGE_RESIDUALS: &str = "training_residuals";
const STAGE_IVF_ROUND: &str = "training_ivf_round";
const STAGE_PQ_ROUND: &str = "training_pq_round";

/// Multiply-adds between two checkpoints of an assignment (tens of
/// milliseconds on one core), and the fewest rows a chunk holds.
const CHUNK_WORK: usize = 1 << 27;
const MIN_CHUNK_ROWS: usize = 256;

/// A worker's share of the sample, kept across rounds.
struct Sample {
    plan: Plan,
    dim: usize,
    /// Sorted by key; `dim` values a row.
    keys: Vec<u64>,
    vectors: Vec<f32>,
    /// Residuals of the PQ rows to the IVF centroids they were computed for.
    residuals: Option<Residuals>,
    /// A hierarchical training's descent of the IVF rows.
    descent: Option<Descent>,
}

/// Where the IVF rows of a hierarchical training are in its tree.
struct Descent {
    /// The splits applied to `node_of` (node id, its centroids, children).
    splits: Vec<(u32, Vec<f32>, Vec<u32>)>,
    /// Per IVF row (in key order), the node it reached; DROPPED: none.
    node_of: Vec<u32>,
    /// The training nodes (id, cut) `groups` were gathered for, and each
    /// one's training rows.
    groups_for: Vec<(u32, u64)>,
    groups: Vec<Vec<f32>>,
}

const DROPPED: u32 = u32::MAX;

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

/// The key of a vector: the first 8 bytes of SHA-256(seed, its values).
fn key(seed: u64, v: &[f32]) -> u64 {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    for f in v {
        h.update(f.to_le_bytes());
    }
    u64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes"))
}

/// Draws `share` of the rows of `fragments` (sorted ids) from `seed`: the
/// same rows for the same seed, fragments and dataset version, in any
/// process.  The core's sampler draws from the operating system's
/// randomness (lance-14.0.2 src/index/vector/utils.rs), so only its
/// whole-share path is used here, for a share holding every row; a smaller
/// share is drawn here and read with the core's `take`.  Null vectors are
/// left out, as the core's sampler leaves them out.
async fn draw_sample(
    ds: &Dataset,
    column: &str,
    share: usize,
    fragments: &[u32],
    rows: u64,
    seed: u64,
) -> lance::Result<FixedSizeListArray> {
    // A column of vector lists is sampled by the core, which counts the
    // vectors per row (not reproducible: lance.h says so).
    let lists = !matches!(ds.schema().field(column).map(|f| f.data_type()), Some(DataType::FixedSizeList(..)));
    if share as u64 >= rows || lists {
        return maybe_sample_training_data(ds, column, share, Some(fragments)).await;
    }
    // Each fragment's first row among the dataset's rows, in manifest order
    // (`take` counts rows that way, deleted rows excluded).
    let mut ranges = Vec::with_capacity(fragments.len());
    let mut start = 0u64;
    for f in ds.get_fragments() {
        // The manifest's count where it has one (no read).
        let n = match recorded_rows(f.metadata()) {
            Some((_, live)) => live,
            None => f.count_rows(None).await? as u64,
        };
        if fragments.binary_search(&(f.id() as u32)).is_ok() {
            ranges.push((start, n));
        }
        start += n;
    }
    let mut h = Sha256::new();
    h.update(b"lance-c training sample");
    h.update(seed.to_le_bytes());
    for id in fragments {
        h.update(id.to_le_bytes());
    }
    let mut rng = SmallRng::from_seed(h.finalize().into());
    let mut picks: Vec<u64> =
        rand::seq::index::sample(&mut rng, rows as usize, share).into_iter().map(|i| i as u64).collect();
    picks.sort_unstable();
    let (mut range, mut base) = (0usize, 0u64);
    let mut offsets = Vec::with_capacity(picks.len());
    for pick in picks {
        while pick >= base + ranges[range].1 {
            base += ranges[range].1;
            range += 1;
        }
        offsets.push(ranges[range].0 + (pick - base));
    }
    let batch = ds.take(&offsets, ds.schema().project(&[column])?).await?;
    let data = batch.column(0).as_fixed_size_list().clone();
    if data.null_count() == 0 {
        return Ok(data);
    }
    let valid = arrow::compute::is_not_null(&data)?;
    Ok(arrow::compute::filter(&data, &valid)?.as_fixed_size_list().clone())
}

impl Worker {
    pub fn new(ds: Arc<Dataset>, fragments: Vec<u32>) -> CResult<Self> {
        let mut w = Self::alone(ds, fragments)?;
        w.total_rows = block_on(w.ds.count_rows(None))?? as u64;
        Ok(w)
    }

    /// A worker that is the whole training: its fragments are every row
    /// the training covers (a seeded one-node training, training/local.rs).
    pub fn alone(ds: Arc<Dataset>, mut fragments: Vec<u32>) -> CResult<Self> {
        for id in &fragments {
            if ds.get_fragment(*id as usize).is_none() {
                return Err(invalid(format!("fragment {id} is not in dataset version {}", ds.version().version)));
            }
        }
        fragments.sort_unstable();
        fragments.dedup();
        let rows = live_rows(&ds, Some(&fragments))?;
        Ok(Self { ds, fragments, rows, total_rows: rows, sample: None })
    }

    /// The pool every phase draws from: the largest sample of the plan.
    fn pool(&self, plan: &Plan) -> u64 {
        self.total_rows.min(plan.ivf_sample().max(plan.pq_sample()) as u64)
    }

    fn sample(&mut self, plan: &Plan, steps: &mut Steps) -> CResult<&mut Sample> {
        if self.sample.as_ref().is_some_and(|s| s.plan == *plan) {
            return Ok(self.sample.as_mut().expect("checked"));
        }
        crate::index::catalog::check_vector_column(&self.ds, &plan.column, plan.metric)?;
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
            .block_on(draw_sample(&self.ds, &plan.column, share, &frags, self.rows, plan.seed))?
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
        self.sample = Some(Sample { plan: plan.clone(), dim, keys, vectors, residuals: None, descent: None });
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
            slots: Vec::new(),
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
            Phase::IvfInit | Phase::Ivf if q.tree.is_some() => {
                out.sample_rows = ivf_rows as u64;
                let tree = q.tree.as_ref().expect("checked");
                tree_round(sample, tree, &q.problems, ivf_rows, q.plan.ivf_distance(), steps, &mut out)?;
            }
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
                sample.descent = None; // the IVF tree's, done with
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
    if ivf.is_empty() || !ivf.len().is_multiple_of(dim) || m == 0 || !dim.is_multiple_of(m) {
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

/// The rows of `vectors` (`dim` values a row) at `rows`, contiguous.
fn gather(vectors: &[f32], dim: usize, rows: impl Iterator<Item = usize>) -> Vec<f32> {
    rows.flat_map(|r| vectors[r * dim..(r + 1) * dim].iter().copied()).collect()
}

/// The rows in each node of `ids` (sorted), in row order.
fn members(node_of: &[u32], ids: &[u32]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); ids.len()];
    for (row, node) in node_of.iter().enumerate() {
        if let Ok(i) = ids.binary_search(node) {
            out[i].push(row);
        }
    }
    out
}

/// Nearest of `centroids` for every row of `data` (no balance: the core's
/// `membership_of_rows`).
fn nearest(centroids: &[f32], data: &[f32], dim: usize, distance: DistanceType) -> Vec<Option<u32>> {
    <KMeansAlgoFloat<Float32Type> as KMeansAlgo<f32>>::compute_membership_and_dist(
        centroids, data, dim, distance, 0.0, None, None,
    )
    .0
}

/// Moves the first `rows` sample rows down the tree until each is in a
/// node that is not split, from where the last request left them (the
/// whole way down for a new worker, or when the splits differ).
fn descend<'a>(
    vectors: &[f32],
    dim: usize,
    descent: &'a mut Option<Descent>,
    tree: &Tree,
    rows: usize,
    distance: DistanceType,
    steps: &mut Steps,
) -> CResult<&'a mut Descent> {
    let valid = descent.as_ref().is_some_and(|d| {
        d.node_of.len() == rows
            && d.node_of.iter().all(|n| *n == DROPPED || (*n as usize) < tree.nodes.len())
            && d.splits.iter().all(|(id, c, children)| {
                tree.nodes
                    .get(*id as usize)
                    .is_some_and(|n| n.state == NodeState::Split && n.centroids == *c && n.children == *children)
            })
    });
    if !valid {
        *descent =
            Some(Descent { splits: Vec::new(), node_of: vec![0; rows], groups_for: Vec::new(), groups: Vec::new() });
    }
    let d = descent.as_mut().expect("just set");
    loop {
        let mut by_node: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
        for (row, node) in d.node_of.iter().enumerate() {
            if *node != DROPPED && tree.nodes[*node as usize].state == NodeState::Split {
                by_node.entry(*node).or_default().push(row);
            }
        }
        if by_node.is_empty() {
            return Ok(d);
        }
        for (id, members) in by_node {
            steps.check()?;
            let node = &tree.nodes[id as usize];
            let data = gather(vectors, dim, members.iter().copied());
            for (row, m) in members.iter().zip(nearest(&node.centroids, &data, dim, distance)) {
                d.node_of[*row] = m.map_or(DROPPED, |c| node.children[c as usize]);
            }
            if !d.splits.iter().any(|(s, _, _)| *s == id) {
                d.splits.push((id, node.centroids.clone(), node.children.clone()));
            }
        }
    }
}

/// A round of a hierarchical IVF training (training/mod.rs): per stage,
/// the pending nodes' counts and candidates, the training nodes' k-means
/// statistics, their counts per sub-cluster, or the leaves' sums.
fn tree_round(
    sample: &mut Sample,
    tree: &Tree,
    problems: &[Problem],
    rows: usize,
    distance: DistanceType,
    steps: &mut Steps,
    out: &mut Stats,
) -> CResult<()> {
    let Sample { keys, vectors, descent, dim, .. } = sample;
    let dim = *dim;
    let (keys, vectors) = (&keys[..rows], &vectors[..rows * dim]);
    let d = descend(vectors, dim, descent, tree, rows, distance, steps)?;
    // A candidate for `slot`: the rows come in key order, so the first
    // ones a slot meets are its smallest keys.
    let mut taken = std::collections::HashMap::<u32, usize>::new();
    let mut offer = |out: &mut Stats, slot: u32, row: usize| {
        let n = taken.entry(slot).or_insert(0);
        if *n < BRANCHING {
            *n += 1;
            out.slots.push(slot);
            out.keys.push(keys[row]);
            out.vectors.extend_from_slice(&vectors[row * dim..(row + 1) * dim]);
        }
    };
    if tree.stage != Stage::Lloyd {
        // The training rows of a level, kept through its k-means rounds.
        (d.groups, d.groups_for) = (Vec::new(), Vec::new());
    }
    match tree.stage {
        Stage::Open => {
            let pending = tree.ids(NodeState::Pending);
            let mut counts = vec![0u64; pending.len()];
            for (row, node) in d.node_of.iter().enumerate() {
                if let Ok(slot) = pending.binary_search(node) {
                    counts[slot] += 1;
                    offer(out, slot as u32, row);
                }
            }
            out.problems.push(ProblemStats { counts, ..Default::default() });
        }
        Stage::Lloyd => {
            let training = tree.ids(NodeState::Training);
            let wanted: Vec<(u32, u64)> = training.iter().map(|id| (*id, tree.nodes[*id as usize].cut)).collect();
            if d.groups_for != wanted {
                d.groups = members(&d.node_of, &training)
                    .iter()
                    .zip(&wanted)
                    .map(|(rows, (_, cut))| gather(vectors, dim, rows.iter().copied().filter(|r| keys[*r] < *cut)))
                    .collect();
                d.groups_for = wanted;
            }
            let active: usize =
                problems.iter().zip(&d.groups).filter(|(p, _)| !p.done).map(|(_, g)| g.len() / dim).sum();
            steps.start(STAGE_IVF_ROUND, active as u64, "rows")?;
            let mut done = 0;
            for (p, group) in problems.iter().zip(&d.groups) {
                if p.done {
                    out.problems.push(ProblemStats::default());
                } else {
                    out.problems.push(assign(p, group, distance, steps, STAGE_IVF_ROUND, &mut done)?);
                }
            }
            steps.complete(STAGE_IVF_ROUND)?;
        }
        Stage::Split => {
            let training = tree.ids(NodeState::Training);
            let grouped = members(&d.node_of, &training);
            for (i, ((id, p), members)) in training.iter().zip(problems).zip(grouped).enumerate() {
                steps.check()?;
                let data = gather(vectors, dim, members.iter().copied());
                let mut counts = vec![0u64; p.k];
                // Sub-clusters become nodes (which need candidates) unless
                // this node's quota fits its own k-means.
                let deeper = tree.nodes[*id as usize].quota as usize > p.k;
                for (row, m) in members.iter().zip(nearest(&p.centroids, &data, dim, distance)) {
                    if let Some(c) = m {
                        counts[c as usize] += 1;
                        if deeper {
                            offer(out, (i * BRANCHING) as u32 + c, *row);
                        }
                    }
                }
                out.problems.push(ProblemStats { counts, ..Default::default() });
            }
        }
        Stage::Means => {
            let leaves = tree.ids(NodeState::Leaf);
            let mut sums = vec![0f64; leaves.len() * dim];
            let mut counts = vec![0u64; leaves.len()];
            let mut squares = vec![0f64; leaves.len()];
            for (row, node) in d.node_of.iter().enumerate() {
                if let Ok(leaf) = leaves.binary_search(node) {
                    counts[leaf] += 1;
                    for (s, v) in
                        sums[leaf * dim..(leaf + 1) * dim].iter_mut().zip(&vectors[row * dim..(row + 1) * dim])
                    {
                        *s += *v as f64;
                        squares[leaf] += (*v as f64) * (*v as f64);
                    }
                }
            }
            out.problems.push(ProblemStats { sums, counts, losses: squares, radius: Vec::new() });
        }
    }
    Ok(())
}
