//! The records of a distributed training (training/mod.rs tells the
//! protocol): the plan, the request a coordinator sends each round and the
//! statistics a worker returns, each with its sealed byte form
//! (index/bytes.rs).

use lance_linalg::distance::DistanceType;
use sha2::{Digest, Sha256};

use crate::boundary::error::{invalid, CError, CResult, Code};
use crate::boundary::params::{metric_from_c, LanceVectorIndexParams, METRIC_DOT, METRIC_HAMMING};
use crate::index::build_params::{ivf_params, pq_params, vector_params};
use crate::index::bytes::{ByteReader, ByteWriter};
use crate::index::kinds::{has_rotation, uses_pq};
use crate::index::vector_model::{rq_num_bits, LanceVectorModel, PqModel, RqRotation};

/// 2: the plan records the index type the model is trained for; 3: the
/// hierarchical IVF training's tree.
const REQUEST_MAGIC: &[u8; 8] = b"LCTRAIN3";
/// 2: candidates carry the tree node (slot) they are for.
const STATS_MAGIC: &[u8; 8] = b"LCTSTAT2";
/// The core trains one k-means on at most this many rows per centroid
/// (`KMeans::train_kmeans`: "the threshold 512").
pub(super) const MAX_ROWS_PER_CENTROID: usize = 512;
/// Above this many partitions the core trains IVF hierarchically
/// (`KMeans::new_with_params`: `k > 256`), and so do the rounds.
pub const HIERARCHY_ABOVE: u32 = 256;
/// The sub-clusters a node of the hierarchy splits into
/// (`KMeansParams::default().hierarchical_k`).
pub(super) const BRANCHING: usize = 16;

/// An enum written as one byte, and read back from it.
macro_rules! byte_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $value:literal),+ }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        pub enum $name { $($variant = $value),+ }

        impl $name {
            fn from_u8(v: u8) -> Option<Self> {
                [$(Self::$variant),+].into_iter().find(|x| *x as u8 == v)
            }
        }
    };
}

byte_enum! {
    /// The phases, in order; the values are lance.h's LanceVectorTrainingPhase.
    Phase { IvfInit = 0, Ivf = 1, PqInit = 2, Pq = 3, Done = 4 }
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
    /// The plan of a training for `p` on `column`, checked as a build checks
    /// its parameters (the PQ shape against the dimension waits for the
    /// first statistics).
    pub fn from_params(column: &str, p: &LanceVectorIndexParams, seed: u64) -> CResult<Self> {
        metric_from_c(p.metric, "params->metric")?;
        if p.metric == METRIC_HAMMING {
            return Err(invalid(
                "the training rounds (a distributed or seeded training) train float vectors with the l2, cosine \
                 or dot metric, not hamming",
            ));
        }
        if p.num_partitions == 0 {
            return Err(invalid(
                "params->num_partitions must be set to train a shared model (every segment must agree on it)",
            ));
        }
        // Validates the index type and the rest the way a build does.
        vector_params(p)?;
        let ivf = ivf_params(p);
        let (num_sub_vectors, num_bits) = if uses_pq(p.index_type) {
            let pq = pq_params(p);
            if pq.num_bits != 4 && pq.num_bits != 8 {
                return Err(invalid(format!("params->num_bits = {}: PQ codes have 4 or 8 bits (0 = 8)", pq.num_bits)));
            }
            (pq.num_sub_vectors as u32, pq.num_bits as u32)
        } else if has_rotation(p.index_type) {
            // The bits of the RaBitQ rotation the model gets when it is done.
            (0, u32::from(rq_num_bits(p.num_bits, "params->num_bits")?))
        } else {
            (0, 0)
        };
        Ok(Plan {
            column: column.to_string(),
            metric: p.metric,
            num_partitions: p.num_partitions,
            num_sub_vectors,
            num_bits,
            max_iters: u32::try_from(ivf.max_iters).map_err(|_| invalid("params->max_iterations is out of range"))?,
            sample_rate: u32::try_from(ivf.sample_rate).map_err(|_| invalid("params->sample_rate is out of range"))?,
            seed,
            index_type: p.index_type,
        })
    }

    /// Whether the IVF centroids are trained as the core's hierarchy.
    pub fn hierarchical(&self) -> bool {
        self.num_partitions > HIERARCHY_ABOVE
    }

    pub(super) fn pq_centroids(&self) -> usize {
        if self.num_sub_vectors == 0 {
            0
        } else {
            1usize << self.num_bits
        }
    }
    /// The sample one phase trains on (the core's, capped as the core caps).
    pub(super) fn ivf_sample(&self) -> usize {
        self.num_partitions as usize * (self.sample_rate as usize).min(MAX_ROWS_PER_CENTROID)
    }
    pub(super) fn pq_sample(&self) -> usize {
        self.pq_centroids() * (self.sample_rate as usize).min(MAX_ROWS_PER_CENTROID)
    }
    /// The distance the IVF k-means runs with.
    pub(super) fn ivf_distance(&self) -> DistanceType {
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
    pub(super) fn new(k: usize, dim: usize, centroids: Vec<f32>, base_balance: f32) -> Self {
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
    pub(super) fn balance(&self) -> f32 {
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

byte_enum! {
    /// Where a hierarchical IVF training is within its tree
    /// (training/mod.rs): Open, the workers count the rows of every pending
    /// node and send its smallest-key rows as candidate initial centroids;
    /// Lloyd, k-means rounds of every training node at once; Split, the
    /// workers count every training node's rows per sub-cluster (with
    /// candidates for the sub-clusters that become nodes); Means, the
    /// workers sum every leaf's rows, whose means are the centroids.
    Stage { Open = 0, Lloyd = 1, Split = 2, Means = 3 }
}

byte_enum! {
    /// A node of the hierarchy: Pending, waiting for an Open round;
    /// Training, its own k-means runs (a problem of the request); Split,
    /// its rows go on to the child of the nearest of its centroids; Leaf,
    /// one IVF centroid, the mean of its rows.
    NodeState { Pending = 0, Training = 1, Split = 2, Leaf = 3 }
}

#[derive(Clone, PartialEq, Debug)]
pub struct Node {
    pub state: NodeState,
    /// The leaves it owes.
    pub quota: u32,
    /// Its sample rows (from the workers' counts).
    pub rows: u64,
    /// Its k-means trains on its rows whose key is below this.
    pub cut: u64,
    /// A leaf whose rows all fell into one sub-cluster.
    pub stuck: bool,
    /// Split: the centroids of its children (k x dim) and their nodes.
    pub centroids: Vec<f32>,
    pub children: Vec<u32>,
}

impl Node {
    pub(super) fn new(state: NodeState, quota: u32, rows: u64) -> Self {
        Self { state, quota, rows, cut: u64::MAX, stuck: false, centroids: Vec::new(), children: Vec::new() }
    }
}

/// The hierarchy of a hierarchical IVF training: node 0 holds the whole
/// sample; the training nodes, in node order, are the request's problems.
#[derive(Clone, PartialEq, Debug)]
pub struct Tree {
    pub stage: Stage,
    pub nodes: Vec<Node>,
    /// k-means rounds so far (the IVF iterations the training reports).
    pub rounds: u32,
}

impl Tree {
    fn root(num_partitions: u32) -> Self {
        Self { stage: Stage::Open, nodes: vec![Node::new(NodeState::Pending, num_partitions, 0)], rounds: 0 }
    }
    /// The ids of the nodes in `state`, in node order.
    pub fn ids(&self, state: NodeState) -> Vec<u32> {
        (0..self.nodes.len() as u32).filter(|i| self.nodes[*i as usize].state == state).collect()
    }
    fn write(&self, w: &mut ByteWriter) {
        w.u8(self.stage as u8).u32(self.rounds).u64(self.nodes.len() as u64);
        for n in &self.nodes {
            w.u8(n.state as u8).u32(n.quota).u64(n.rows).u64(n.cut).u8(n.stuck as u8);
            w.f32s(&n.centroids).u32s(&n.children);
        }
    }
    fn read(r: &mut ByteReader) -> CResult<Self> {
        let stage = Stage::from_u8(r.u8()?).ok_or_else(|| r.bad("unknown tree stage"))?;
        let rounds = r.u32()?;
        let count = r.len()?;
        let mut nodes = Vec::new();
        for _ in 0..count.min(1 << 24) {
            let state = NodeState::from_u8(r.u8()?).ok_or_else(|| r.bad("unknown tree node state"))?;
            let mut n = Node::new(state, r.u32()?, r.u64()?);
            n.cut = r.u64()?;
            n.stuck = r.u8()? != 0;
            n.centroids = r.f32s()?;
            n.children = r.u32s()?;
            nodes.push(n);
        }
        Ok(Self { stage, nodes, rounds })
    }
    /// A tree a worker can descend: children after their parent, split
    /// nodes with one centroid per child, no more leaves than partitions,
    /// and the stage's nodes present.
    fn check(&self, dim: usize, num_partitions: u32, problems: &[Problem]) -> bool {
        let len = self.nodes.len();
        let shaped = self.nodes.iter().enumerate().all(|(i, n)| match n.state {
            NodeState::Split => {
                !n.children.is_empty()
                    && n.children.len() <= BRANCHING
                    && n.centroids.len() == n.children.len() * dim
                    && n.children.iter().all(|c| (*c as usize) > i && (*c as usize) < len)
            }
            _ => n.children.is_empty() && n.centroids.is_empty(),
        });
        let training = self.ids(NodeState::Training);
        let leaves = self.ids(NodeState::Leaf).len();
        let staged = match self.stage {
            Stage::Open => !self.ids(NodeState::Pending).is_empty() && training.is_empty(),
            Stage::Lloyd | Stage::Split => !training.is_empty(),
            Stage::Means => training.is_empty() && self.ids(NodeState::Pending).is_empty(),
        };
        shaped
            && staged
            && len > 0
            && leaves <= num_partitions as usize
            && training.len() == problems.len()
            && problems.iter().all(|p| p.k <= BRANCHING && p.dim == dim)
    }
}

/// A round's request: the whole state of a training, so a coordinator can
/// be rebuilt from the last request it sent.
#[derive(Clone, Debug)]
pub struct Request {
    pub plan: Plan,
    /// The SHA-256 of the request as it was parsed (statistics name it);
    /// `fingerprint()` computes it for a request made here.
    pub(super) parsed_fingerprint: Option<[u8; 32]>,
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
    /// A hierarchical IVF training's tree, during the IVF phases.
    pub tree: Option<Tree>,
}

impl Request {
    pub fn new(plan: Plan) -> Self {
        Self {
            tree: plan.hierarchical().then(|| Tree::root(plan.num_partitions)),
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
        w.u8(self.tree.is_some() as u8);
        if let Some(tree) = &self.tree {
            tree.write(&mut w);
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
            tree: None,
        };
        let n = r.len()?;
        for _ in 0..n.min(1 << 16) {
            q.problems.push(Problem::read(&mut r)?);
        }
        if r.u8()? != 0 {
            q.tree = Some(Tree::read(&mut r)?);
        }
        r.finish()?;
        q.check().map_err(|detail| r.bad(detail))?;
        if let Some(what) = q.first_non_finite() {
            return Err(r.bad(&format!("{what} is not finite")));
        }
        Ok(q)
    }

    /// The shape every phase needs, so a worker never indexes past it.
    fn check(&self) -> Result<(), &'static str> {
        let m = self.plan.num_sub_vectors as usize;
        let dim = self.dim as usize;
        if self.plan.num_partitions == 0 || (m > 0 && !matches!(self.plan.num_bits, 4 | 8)) {
            return Err("training parameters out of range");
        }
        let hierarchical = self.plan.hierarchical() && matches!(self.phase, Phase::IvfInit | Phase::Ivf);
        if hierarchical != self.tree.is_some() {
            return Err("a request whose tree does not fit its phase and partitions");
        }
        if let Some(tree) = &self.tree {
            let first = self.phase == Phase::IvfInit;
            let root = first && tree.nodes.len() == 1 && tree.stage == Stage::Open;
            return if (root || (!first && tree.check(dim, self.plan.num_partitions, &self.problems)))
                && (!first || self.problems.is_empty())
            {
                Ok(())
            } else {
                Err("a request whose tree is not one a coordinator makes")
            };
        }
        let ok = match self.phase {
            Phase::IvfInit => self.problems.is_empty(),
            Phase::Ivf => {
                self.problems.len() == 1
                    && self.problems[0].k == self.plan.num_partitions as usize
                    && self.problems[0].dim == dim
            }
            Phase::PqInit => {
                m > 0 && dim.is_multiple_of(m) && self.ivf.len() == self.plan.num_partitions as usize * dim
            }
            Phase::Pq => {
                m > 0
                    && dim.is_multiple_of(m)
                    && self.ivf.len() == self.plan.num_partitions as usize * dim
                    && self.problems.len() == m
                    && self.problems.iter().all(|p| p.dim == dim / m && p.k == self.plan.pq_centroids())
            }
            Phase::Done => {
                self.ivf.len() == self.plan.num_partitions as usize * dim && (m == 0 || self.problems.len() == m)
            }
        };
        if ok {
            Ok(())
        } else {
            Err("a request whose state does not fit its phase")
        }
    }

    /// The first value of the state that is infinite or NaN: the model is
    /// made of its centroids, the next rounds of its losses and balance
    /// factors (finite statistics can still overflow 32-bit floats when
    /// summed).
    pub fn first_non_finite(&self) -> Option<String> {
        let bad = |v: &[f32]| v.iter().position(|x| !x.is_finite());
        if let Some(i) = bad(&self.ivf) {
            return Some(format!("value {i} of the IVF centroids"));
        }
        if !self.ivf_loss.is_finite() {
            return Some("the IVF loss".to_string());
        }
        for (j, p) in self.problems.iter().enumerate() {
            if let Some(i) = bad(&p.centroids) {
                return Some(format!("value {i} of k-means problem {j}'s centroids"));
            }
            if !(p.loss.is_finite() && p.base_balance.is_finite() && p.adjusted_balance.is_finite()) {
                return Some(format!("k-means problem {j}'s loss or balance factor"));
            }
        }
        None
    }

    /// The IVF k-means iterations and the last loss so far (0 before the
    /// first iteration).
    pub fn ivf_progress(&self) -> (u32, f64) {
        match (&self.tree, self.phase) {
            (Some(tree), _) => {
                (tree.rounds, self.problems.iter().map(|p| if p.iterations == 0 { 0.0 } else { p.loss }).sum())
            }
            (None, Phase::Ivf) => {
                let p = &self.problems[0];
                (p.iterations, if p.iterations == 0 { 0.0 } else { p.loss })
            }
            _ => (self.ivf_iterations, self.ivf_loss),
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
        LanceVectorModel::new(self.plan.metric, self.dim as usize, self.ivf.clone(), pq)?
            .trained_for(self.plan.index_type)
    }
}

impl Request {
    /// The model a finished training made, with an IVF_RQ model's one
    /// rotation drawn from the training's seed: the same model at every
    /// call and after a resume.
    pub fn finished_model(&self) -> CResult<LanceVectorModel> {
        let model = self.model()?;
        if !has_rotation(self.plan.index_type) {
            return Ok(model);
        }
        let bits = rq_num_bits(self.plan.num_bits, "the training's num_bits")?;
        let rotation = RqRotation::from_seed(model.dim, bits, self.plan.seed)?;
        model.with_rotation(rotation)
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
    /// A hierarchical training's candidates: the slot each is for (Open:
    /// the pending node's rank; Split: problem * 16 + sub-cluster).
    pub slots: Vec<u32>,
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
        w.u32s(&self.slots);
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
            slots: Vec::new(),
            problems: Vec::new(),
        };
        let n = r.len()?;
        for _ in 0..n.min(1 << 16) {
            s.problems.push(ProblemStats { sums: r.f64s()?, counts: r.u64s()?, losses: r.f64s()?, radius: r.f32s()? });
        }
        s.slots = r.u32s()?;
        r.finish()?;
        Ok(s)
    }

    /// The first value that is not a finite float ("k-means problem 0:
    /// sums[5] = inf").  A worker's are all finite: its sample is, and the
    /// core's kernel leaves out a row whose distances all overflow.
    pub fn first_non_finite(&self) -> Option<String> {
        fn find<T: Copy + Into<f64>>(values: &[T], name: &str) -> Option<String> {
            let (i, v) = values.iter().map(|v| Into::<f64>::into(*v)).enumerate().find(|(_, v)| !v.is_finite())?;
            Some(format!("{name}[{i}] = {v}"))
        }
        if let Some(found) = find(&self.vectors, "the candidate vectors' values") {
            return Some(found);
        }
        self.problems.iter().enumerate().find_map(|(i, p)| {
            let found = find(&p.sums, "sums").or_else(|| find(&p.losses, "losses"));
            found.or_else(|| find(&p.radius, "radius")).map(|f| format!("k-means problem {i}: {f}"))
        })
    }
}

/// The key below which `want` of `pool` rows fall (keys are uniform).
pub(super) fn threshold(want: usize, pool: u64) -> u64 {
    if pool == 0 || want as u64 >= pool {
        return u64::MAX;
    }
    ((want as f64 / pool as f64) * u64::MAX as f64) as u64
}

pub(super) fn mismatch(message: impl Into<String>) -> CError {
    CError::new(Code::ModelMismatch, message)
}

#[cfg(test)]
mod tests;
