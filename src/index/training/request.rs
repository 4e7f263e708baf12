//! The records of a distributed training (training/mod.rs tells the
//! protocol): the plan, the request a coordinator sends each round and the
//! statistics a worker returns, each with its sealed byte form
//! (index/bytes.rs).

use lance_linalg::distance::DistanceType;
use sha2::{Digest, Sha256};

use crate::boundary::error::{invalid, CError, CResult, Code};
use crate::boundary::params::{
    ivf_params, metric_from_c, pq_params, uses_pq, vector_params, LanceVectorIndexParams, IVF_RQ, METRIC_DOT,
    METRIC_HAMMING,
};
use crate::index::bytes::{ByteReader, ByteWriter};
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
        } else if p.index_type == IVF_RQ {
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
            Phase::PqInit => m > 0 && dim % m == 0 && self.ivf.len() == self.plan.num_partitions as usize * dim,
            Phase::Pq => {
                m > 0
                    && dim % m == 0
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
        if self.plan.index_type != IVF_RQ {
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
mod tests {
    use super::*;
    use crate::boundary::params::{IVF_FLAT, IVF_PQ, METRIC_COSINE, METRIC_L2};

    fn plan(num_partitions: u32, num_sub_vectors: u32, metric: i32) -> Plan {
        Plan {
            column: "vec".to_string(),
            metric,
            num_partitions,
            num_sub_vectors,
            num_bits: if num_sub_vectors > 0 { 8 } else { 0 },
            max_iters: 10,
            sample_rate: 256,
            seed: 42,
            index_type: if num_sub_vectors > 0 { IVF_PQ } else { IVF_FLAT },
        }
    }

    fn refused<T>(result: CResult<T>) -> CError {
        match result {
            Ok(_) => panic!("accepted what must be refused"),
            Err(e) => e,
        }
    }

    /// `body` followed by its SHA-256: bytes whose digest is right, to
    /// reach the checks behind it.
    fn reseal(body: &[u8]) -> Vec<u8> {
        let mut out = body.to_vec();
        out.extend_from_slice(&Sha256::digest(body));
        out
    }

    fn body(sealed: &[u8]) -> &[u8] {
        &sealed[..sealed.len() - 32]
    }

    /// A flat training in its IVF phase: 3 partitions of dimension 2.
    fn flat_ivf() -> Request {
        let mut q = Request::new(plan(3, 0, METRIC_L2));
        q.phase = Phase::Ivf;
        q.round = 4;
        q.dim = 2;
        q.version = 9;
        q.total_rows = 1000;
        q.ivf_rows = 768;
        let mut p = Problem::new(3, 2, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 1.0 / 768.0);
        p.sizes = vec![300, 268, 200];
        p.adjusted_balance = 0.01;
        p.loss = 12.5;
        p.iterations = 3;
        q.problems = vec![p];
        q
    }

    /// A hierarchical training in a Lloyd round: the root split into a
    /// training node and a leaf.
    fn tree_lloyd() -> Request {
        let mut q = Request::new(plan(300, 0, METRIC_L2));
        q.phase = Phase::Ivf;
        q.round = 2;
        q.dim = 2;
        q.version = 1;
        q.total_rows = 5000;
        q.ivf_rows = 5000;
        let mut root = Node::new(NodeState::Split, 300, 5000);
        root.centroids = vec![0.0, 0.0, 1.0, 1.0];
        root.children = vec![1, 2];
        let mut child = Node::new(NodeState::Training, 299, 4000);
        child.cut = 1 << 60;
        let leaf = Node::new(NodeState::Leaf, 1, 1000);
        q.tree = Some(Tree { stage: Stage::Lloyd, nodes: vec![root, child, leaf], rounds: 5 });
        q.problems = vec![Problem::new(16, 2, (0..32).map(|i| i as f32).collect(), 1.0 / 5000.0)];
        q
    }

    /// A finished training with a PQ codebook of 2 sub-vectors, 4 bits.
    fn pq_done() -> Request {
        let mut q = Request::new(Plan { num_bits: 4, ..plan(2, 2, METRIC_COSINE) });
        q.phase = Phase::Done;
        q.round = 20;
        q.dim = 4;
        q.version = 3;
        q.total_rows = 64;
        q.ivf_rows = 64;
        q.pq_rows = 64;
        q.ivf = vec![0.5, -0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        q.ivf_loss = 0.75;
        q.ivf_iterations = 7;
        q.problems = (0..2).map(|i| Problem::new(16, 2, vec![i as f32; 32], 0.0)).collect();
        q
    }

    fn same_request(a: &Request, b: &Request) {
        assert_eq!(a.plan, b.plan);
        assert_eq!((a.phase, a.round, a.dim, a.version), (b.phase, b.round, b.dim, b.version));
        assert_eq!((a.total_rows, a.ivf_rows, a.pq_rows), (b.total_rows, b.ivf_rows, b.pq_rows));
        assert_eq!(a.ivf_iterations, b.ivf_iterations);
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a.ivf), bits(&b.ivf));
        assert_eq!(a.ivf_loss.to_bits(), b.ivf_loss.to_bits());
        assert_eq!(format!("{:?}", a.problems), format!("{:?}", b.problems));
        assert_eq!(a.tree, b.tree);
    }

    #[test]
    fn byte_enums_read_back_their_values() {
        for v in 0..=4u8 {
            assert_eq!(Phase::from_u8(v).map(|p| p as u8), Some(v));
        }
        assert_eq!(Phase::from_u8(5), None);
        assert_eq!(Phase::from_u8(255), None);
        for v in 0..=3u8 {
            assert_eq!(Stage::from_u8(v).map(|s| s as u8), Some(v));
            assert_eq!(NodeState::from_u8(v).map(|s| s as u8), Some(v));
        }
        assert_eq!(Stage::from_u8(4), None);
        assert_eq!(NodeState::from_u8(4), None);
        assert_eq!((Phase::IvfInit as u8, Phase::Done as u8), (0, 4));
    }

    #[test]
    fn plan_sizes() {
        assert!(!plan(256, 0, METRIC_L2).hierarchical());
        assert!(plan(257, 0, METRIC_L2).hierarchical());
        assert_eq!(plan(10, 0, METRIC_L2).pq_centroids(), 0);
        assert_eq!(plan(10, 4, METRIC_L2).pq_centroids(), 256);
        assert_eq!(Plan { num_bits: 4, ..plan(10, 4, METRIC_L2) }.pq_centroids(), 16);
        // Rows per centroid: the sample rate, capped at 512.
        assert_eq!(plan(10, 0, METRIC_L2).ivf_sample(), 10 * 256);
        assert_eq!(Plan { sample_rate: 1000, ..plan(10, 0, METRIC_L2) }.ivf_sample(), 10 * 512);
        assert_eq!(plan(10, 4, METRIC_L2).pq_sample(), 256 * 256);
        assert_eq!(Plan { num_bits: 4, sample_rate: 600, ..plan(10, 4, METRIC_L2) }.pq_sample(), 16 * 512);
        assert_eq!(plan(10, 0, METRIC_L2).pq_sample(), 0);
        // Cosine data is normalized and clustered with L2.
        assert_eq!(plan(10, 0, METRIC_L2).ivf_distance(), DistanceType::L2);
        assert_eq!(plan(10, 0, METRIC_COSINE).ivf_distance(), DistanceType::L2);
        assert_eq!(plan(10, 0, METRIC_DOT).ivf_distance(), DistanceType::Dot);
    }

    #[test]
    fn plan_from_params_applies_the_defaults_and_refuses_what_cannot_train() {
        let mut p = LanceVectorIndexParams::defaults(IVF_PQ);
        let e = refused(Plan::from_params("vec", &p, 1));
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.starts_with("params->num_partitions must be set"), "{}", e.message);
        p.num_partitions = 4;
        let plan = Plan::from_params("vec", &p, 7).unwrap_or_else(|e| panic!("{}", e.message));
        let want = Plan {
            column: "vec".to_string(),
            metric: METRIC_L2,
            num_partitions: 4,
            num_sub_vectors: 16,
            num_bits: 8,
            max_iters: 50,
            sample_rate: 256,
            seed: 7,
            index_type: IVF_PQ,
        };
        assert_eq!(plan, want);
        let flat =
            LanceVectorIndexParams { num_partitions: 4, num_bits: 4, ..LanceVectorIndexParams::defaults(IVF_FLAT) };
        let plan = Plan::from_params("vec", &flat, 7).unwrap_or_else(|e| panic!("{}", e.message));
        assert_eq!((plan.num_sub_vectors, plan.num_bits, plan.index_type), (0, 0, IVF_FLAT));
        let hamming = LanceVectorIndexParams { metric: METRIC_HAMMING, ..p };
        assert_eq!(refused(Plan::from_params("vec", &hamming, 7)).code, Code::InvalidArgument);
        let bits = LanceVectorIndexParams { num_bits: 6, ..p };
        assert_eq!(refused(Plan::from_params("vec", &bits, 7)).code, Code::InvalidArgument);
        let metric = LanceVectorIndexParams { metric: 17, ..p };
        assert_eq!(refused(Plan::from_params("vec", &metric, 7)).code, Code::InvalidArgument);
    }

    #[test]
    fn threshold_keeps_the_wanted_share_of_uniform_keys() {
        assert_eq!(threshold(10, 0), u64::MAX);
        assert_eq!(threshold(10, 10), u64::MAX);
        assert_eq!(threshold(11, 10), u64::MAX);
        // u64::MAX as f64 is 2^64: a half is 2^63, a quarter 2^62.
        assert_eq!(threshold(1, 2), 1 << 63);
        assert_eq!(threshold(1, 4), 1 << 62);
        assert_eq!(threshold(3, 4), 3 << 62);
        assert_eq!(threshold(0, 4), 0);
    }

    #[test]
    fn a_new_request_starts_at_the_root() {
        let q = Request::new(plan(16, 0, METRIC_L2));
        assert!(q.tree.is_none() && q.problems.is_empty());
        assert_eq!((q.phase, q.round), (Phase::IvfInit, 0));
        let q = Request::new(plan(300, 0, METRIC_L2));
        let tree = q.tree.as_ref().expect("above 256 partitions");
        assert_eq!((tree.stage, tree.rounds), (Stage::Open, 0));
        assert_eq!(tree.nodes, vec![Node::new(NodeState::Pending, 300, 0)]);
        assert_eq!(tree.nodes[0].cut, u64::MAX);
        assert!(q.check().is_ok());
    }

    #[test]
    fn requests_round_trip_to_identical_bytes() {
        let cases = [
            Request::new(plan(16, 0, METRIC_L2)),
            Request::new(plan(300, 8, METRIC_DOT)),
            flat_ivf(),
            tree_lloyd(),
            pq_done(),
        ];
        for q in cases {
            let bytes = q.serialize();
            let back = Request::parse(&bytes, "the request");
            let back = back.unwrap_or_else(|e| panic!("{:?}: {}", q.phase, e.message));
            same_request(&q, &back);
            assert_eq!(back.serialize(), bytes);
            // The fingerprint is the record's digest, whether computed or parsed.
            let digest: [u8; 32] = Sha256::digest(body(&bytes)).into();
            assert_eq!(q.fingerprint(), digest);
            assert_eq!(back.fingerprint(), digest);
            assert_eq!(&bytes[bytes.len() - 32..], &digest[..]);
        }
    }

    #[test]
    fn the_fingerprint_follows_every_field() {
        let q = flat_ivf();
        let mut later = q.clone();
        later.round += 1;
        assert_ne!(q.fingerprint(), later.fingerprint());
        let mut moved = q.clone();
        moved.problems[0].centroids[5] = 5.5;
        assert_ne!(q.fingerprint(), moved.fingerprint());
        let mut reseeded = q.clone();
        reseeded.plan.seed += 1;
        assert_ne!(q.fingerprint(), reseeded.fingerprint());
        assert_eq!(q.fingerprint(), q.clone().fingerprint());
    }

    #[test]
    fn the_request_layout_starts_with_the_plan() {
        let q = flat_ivf();
        let bytes = q.serialize();
        let b = body(&bytes);
        assert_eq!(&b[..8], REQUEST_MAGIC);
        assert_eq!(&b[8..16], &3u64.to_le_bytes());
        assert_eq!(&b[16..19], b"vec");
        assert_eq!(&b[19..23], &METRIC_L2.to_le_bytes());
        assert_eq!(&b[23..27], &3u32.to_le_bytes());
        // Then num_sub_vectors, num_bits, max_iters, sample_rate, the seed,
        // the index type (36 bytes of plan after the column), the phase and
        // the round.
        assert_eq!(&b[35..39], &10u32.to_le_bytes());
        assert_eq!(&b[43..51], &42u64.to_le_bytes());
        assert_eq!(&b[51..55], &IVF_FLAT.to_le_bytes());
        assert_eq!(b[55], Phase::Ivf as u8);
        assert_eq!(&b[56..60], &4u32.to_le_bytes());
    }

    #[test]
    fn damaged_requests_are_refused() {
        let bytes = flat_ivf().serialize();
        let e = refused(Request::parse(&bytes[..bytes.len() - 1], "the request"));
        assert_eq!(e.code, Code::InvalidArgument);
        let want = "the request are not a lance-c training request: checksum mismatch (truncated or corrupted)";
        assert_eq!(e.message, want);
        let mut flipped = bytes.clone();
        flipped[60] ^= 0x10;
        assert_eq!(refused(Request::parse(&flipped, "the request")).message, e.message);
        // Statistics are not a request.
        let e = refused(Request::parse(&stats_sample().serialize(), "the request"));
        assert_eq!(e.message, "the request are not a lance-c training request: wrong magic or too short");
    }

    #[test]
    fn requests_with_a_valid_digest_are_still_checked() {
        let expect = |bytes: &[u8], detail: &str| {
            let e = refused(Request::parse(bytes, "the request"));
            assert_eq!(e.code, Code::InvalidArgument);
            assert_eq!(e.message, format!("bytes are not a lance-c training request: {detail}"));
        };
        let bytes = flat_ivf().serialize();
        let mut b = body(&bytes).to_vec();
        b[55] = 5;
        expect(&reseal(&b), "unknown phase");
        let mut b = body(&bytes).to_vec();
        b.push(0);
        expect(&reseal(&b), "trailing bytes");
        let b = body(&bytes);
        expect(&reseal(&b[..b.len() - 1]), "truncated");

        // A root's tree is last: stage, rounds, count, then the node
        // (state, quota, rows, cut, stuck, two empty arrays: 38 bytes).
        let bytes = Request::new(plan(300, 0, METRIC_L2)).serialize();
        let mut b = body(&bytes).to_vec();
        let n = b.len();
        assert_eq!((b[n - 51], b[n - 38]), (Stage::Open as u8, NodeState::Pending as u8));
        b[n - 51] = 4;
        expect(&reseal(&b), "unknown tree stage");
        let mut b = body(&bytes).to_vec();
        b[n - 38] = 4;
        expect(&reseal(&b), "unknown tree node state");

        let mut q = flat_ivf();
        q.problems.clear();
        expect(&q.serialize(), "a request whose state does not fit its phase");
        let mut q = flat_ivf();
        q.problems[0].centroids.pop();
        expect(&q.serialize(), "a k-means problem of inconsistent shape");
        let mut q = Request::new(plan(300, 0, METRIC_L2));
        q.tree = None;
        expect(&q.serialize(), "a request whose tree does not fit its phase and partitions");
        let mut q = tree_lloyd();
        q.tree.as_mut().expect("tree").nodes[0].children = vec![0, 2];
        expect(&q.serialize(), "a request whose tree is not one a coordinator makes");
        let mut q = Request::new(plan(16, 0, METRIC_L2));
        q.ivf_loss = f64::NAN;
        expect(&q.serialize(), "the IVF loss is not finite");
        let mut q = flat_ivf();
        q.problems[0].centroids[3] = f32::INFINITY;
        expect(&q.serialize(), "value 3 of k-means problem 0's centroids is not finite");
    }

    #[test]
    fn the_state_must_fit_the_phase() {
        let bad = Err("a request whose state does not fit its phase");
        assert_eq!(flat_ivf().check(), Ok(()));
        assert_eq!(pq_done().check(), Ok(()));
        let mut q = flat_ivf();
        q.problems[0] = Problem::new(2, 2, vec![0.0; 4], 0.0);
        assert_eq!(q.check(), bad);
        let mut q = flat_ivf();
        q.dim = 3;
        assert_eq!(q.check(), bad);
        let mut q = flat_ivf();
        q.plan.num_partitions = 0;
        assert_eq!(q.check(), Err("training parameters out of range"));
        let mut q = pq_done();
        q.plan.num_bits = 6;
        assert_eq!(q.check(), Err("training parameters out of range"));
        // PQ: the sub-vectors divide the dimension, one codebook each.
        let mut q = pq_done();
        q.phase = Phase::Pq;
        assert_eq!(q.check(), Ok(()));
        q.problems.pop();
        assert_eq!(q.check(), bad);
        let mut q = pq_done();
        q.phase = Phase::PqInit;
        q.plan.num_sub_vectors = 3;
        assert_eq!(q.check(), bad);
        let mut q = pq_done();
        q.ivf.pop();
        assert_eq!(q.check(), bad);
        let mut q = pq_done();
        q.problems[1] = Problem::new(256, 2, vec![0.0; 512], 0.0);
        q.phase = Phase::Pq;
        assert_eq!(q.check(), bad);
        // A first round has no problems.
        let mut q = Request::new(plan(16, 0, METRIC_L2));
        q.problems = vec![Problem::new(16, 1, vec![0.0; 16], 0.0)];
        assert_eq!(q.check(), bad);
        // A hierarchical first round is the bare root.
        let mut q = Request::new(plan(300, 0, METRIC_L2));
        q.tree.as_mut().expect("tree").nodes.push(Node::new(NodeState::Leaf, 1, 1));
        assert_eq!(q.check(), Err("a request whose tree is not one a coordinator makes"));
        // Past the IVF phases a hierarchical training has no tree.
        let mut q = pq_done();
        q.plan.num_partitions = 300;
        q.ivf = vec![0.0; 300 * 4];
        assert_eq!(q.check(), Ok(()));
        q.tree = Some(Tree::root(300));
        assert_eq!(q.check(), Err("a request whose tree does not fit its phase and partitions"));
    }

    /// Whether `tree`, changed by `change`, passes the check.
    fn changed(tree: &Tree, problems: &[Problem], change: impl Fn(&mut Tree)) -> bool {
        let mut t = tree.clone();
        change(&mut t);
        t.check(2, 300, problems)
    }

    #[test]
    fn tree_checks() {
        let q = tree_lloyd();
        let tree = q.tree.clone().expect("tree");
        let problems = &q.problems;
        assert!(tree.check(2, 300, problems));
        assert_eq!(tree.ids(NodeState::Training), vec![1]);
        assert_eq!(tree.ids(NodeState::Leaf), vec![2]);
        assert_eq!(tree.ids(NodeState::Split), vec![0]);
        assert!(tree.ids(NodeState::Pending).is_empty());
        // Children after their parent, within the tree, one centroid each.
        assert!(!changed(&tree, problems, |t| t.nodes[0].children = vec![1, 3]));
        assert!(!changed(&tree, problems, |t| t.nodes[0].children = vec![0, 1]));
        assert!(!changed(&tree, problems, |t| t.nodes[0].centroids.push(0.0)));
        assert!(!changed(&tree, problems, |t| {
            t.nodes[0].children = vec![];
            t.nodes[0].centroids = vec![];
        }));
        // At most 16 children.
        let wide = |t: &mut Tree, n: u32| {
            t.nodes[0].children = (1..=n).collect();
            t.nodes[0].centroids = vec![0.0; 2 * n as usize];
            t.nodes.resize(n as usize + 1, Node::new(NodeState::Leaf, 1, 1));
        };
        assert!(changed(&tree, problems, |t| wide(t, 16)));
        assert!(!changed(&tree, problems, |t| wide(t, 17)));
        // Only split nodes have children.
        assert!(!changed(&tree, problems, |t| t.nodes[2].children = vec![1]));
        assert!(!changed(&tree, problems, |t| t.nodes[2].centroids = vec![1.0, 1.0]));
        // The stage's nodes: Lloyd and Split need a training node, Open a
        // pending one and no training one, Means neither.
        assert!(changed(&tree, problems, |t| t.stage = Stage::Split));
        assert!(!changed(&tree, problems, |t| t.stage = Stage::Open));
        assert!(!changed(&tree, problems, |t| t.stage = Stage::Means));
        assert!(!changed(&tree, problems, |t| t.nodes[1].state = NodeState::Leaf));
        assert!(!changed(&tree, problems, |t| t.nodes.clear()));
        // No more leaves than partitions.
        assert!(tree.check(2, 1, problems));
        let mut means = tree.clone();
        means.nodes[1].state = NodeState::Leaf;
        means.stage = Stage::Means;
        assert!(means.check(2, 2, &[]));
        assert!(!means.check(2, 1, &[]));
        // One problem per training node, within the branching and the dimension.
        assert!(!tree.check(2, 300, &[]));
        assert!(!tree.check(2, 300, &[Problem::new(17, 2, vec![0.0; 34], 0.0)]));
        assert!(!tree.check(3, 300, problems));
    }

    #[test]
    fn non_finite_state_is_found() {
        let mut q = pq_done();
        assert_eq!(q.first_non_finite(), None);
        q.ivf[2] = f32::NEG_INFINITY;
        assert_eq!(q.first_non_finite().as_deref(), Some("value 2 of the IVF centroids"));
        let mut q = pq_done();
        q.problems[1].centroids[1] = f32::NAN;
        assert_eq!(q.first_non_finite().as_deref(), Some("value 1 of k-means problem 1's centroids"));
        let mut q = pq_done();
        q.problems[0].adjusted_balance = f32::INFINITY;
        assert_eq!(q.first_non_finite().as_deref(), Some("k-means problem 0's loss or balance factor"));
        // The sentinels before a first round are finite.
        let p = Problem::new(2, 1, vec![0.0, 1.0], 0.5);
        assert!(p.loss.is_finite() && p.adjusted_balance.is_finite());
    }

    #[test]
    fn balance_is_the_smaller_factor() {
        let mut p = Problem::new(2, 1, vec![0.0, 1.0], 0.25);
        assert_eq!(p.balance(), 0.25);
        p.adjusted_balance = 0.125;
        assert_eq!(p.balance(), 0.125);
        p.adjusted_balance = 0.5;
        assert_eq!(p.balance(), 0.25);
    }

    #[test]
    fn progress_reports_the_ivf_rounds() {
        let mut q = flat_ivf();
        assert_eq!(q.ivf_progress(), (3, 12.5));
        q.problems[0].iterations = 0;
        assert_eq!(q.ivf_progress(), (0, 0.0));
        let mut q = tree_lloyd();
        assert_eq!(q.ivf_progress(), (5, 0.0));
        let mut second = Problem::new(2, 2, vec![0.0; 4], 0.0);
        (second.iterations, second.loss) = (1, 2.5);
        q.problems.push(second);
        q.problems[0].iterations = 2;
        q.problems[0].loss = 1.25;
        assert_eq!(q.ivf_progress(), (5, 3.75));
        assert_eq!(pq_done().ivf_progress(), (7, 0.75));
        assert_eq!(refused(flat_ivf().model()).code, Code::InvalidArgument);
    }

    fn stats_sample() -> Stats {
        Stats {
            request: std::array::from_fn(|i| i as u8),
            version: 9,
            total_rows: 1000,
            dim: 2,
            fragments: vec![4, 1],
            rows: 400,
            sample_rows: 300,
            keys: vec![5, 1 << 63],
            vectors: vec![1.0, -1.0, 0.5, 2.5],
            slots: vec![0, 17],
            problems: vec![
                ProblemStats { sums: vec![1.0, 2.0], counts: vec![3], losses: vec![0.5], radius: vec![0.25] },
                ProblemStats::default(),
            ],
        }
    }

    fn same_stats(a: &Stats, b: &Stats) {
        assert_eq!((a.request, a.version, a.total_rows, a.dim), (b.request, b.version, b.total_rows, b.dim));
        assert_eq!((&a.fragments, a.rows, a.sample_rows, &a.keys), (&b.fragments, b.rows, b.sample_rows, &b.keys));
        assert_eq!((&a.vectors, &a.slots), (&b.vectors, &b.slots));
        assert_eq!(a.problems.len(), b.problems.len());
        for (x, y) in a.problems.iter().zip(&b.problems) {
            assert_eq!((&x.sums, &x.counts, &x.losses, &x.radius), (&y.sums, &y.counts, &y.losses, &y.radius));
        }
    }

    #[test]
    fn stats_round_trip_to_identical_bytes() {
        let s = stats_sample();
        let bytes = s.serialize();
        assert_eq!(&bytes[..8], STATS_MAGIC);
        // A reserved u64, then the request's 32 bytes.
        assert_eq!(&bytes[8..16], &[0u8; 8]);
        assert_eq!(&bytes[16..48], &s.request);
        let back = Stats::parse(&bytes, "the statistics").unwrap_or_else(|e| panic!("{}", e.message));
        same_stats(&s, &back);
        assert_eq!(back.serialize(), bytes);
        let empty = Stats { problems: vec![], slots: vec![], keys: vec![], vectors: vec![], ..stats_sample() };
        let back = Stats::parse(&empty.serialize(), "the statistics").unwrap_or_else(|e| panic!("{}", e.message));
        same_stats(&empty, &back);
    }

    #[test]
    fn damaged_stats_are_refused() {
        let bytes = stats_sample().serialize();
        for len in [0, 39, 40, bytes.len() - 1] {
            let e = refused(Stats::parse(&bytes[..len], "the statistics"));
            assert_eq!(e.code, Code::InvalidArgument);
        }
        let e = refused(Stats::parse(&bytes[..bytes.len() - 1], "the statistics"));
        let want = "the statistics are not lance-c training statistics: checksum mismatch (truncated or corrupted)";
        assert_eq!(e.message, want);
        let e = refused(Stats::parse(&flat_ivf().serialize(), "the statistics"));
        assert_eq!(e.message, "the statistics are not lance-c training statistics: wrong magic or too short");
        let mut b = body(&bytes).to_vec();
        b.extend_from_slice(&[0, 0, 0, 0]);
        let e = refused(Stats::parse(&reseal(&b), "the statistics"));
        assert_eq!(e.message, "bytes are not lance-c training statistics: trailing bytes");
        let b = body(&bytes);
        let e = refused(Stats::parse(&reseal(&b[..b.len() - 4]), "the statistics"));
        assert_eq!(e.message, "bytes are not lance-c training statistics: truncated");
    }

    #[test]
    fn non_finite_statistics_are_found() {
        assert_eq!(stats_sample().first_non_finite(), None);
        let mut s = stats_sample();
        s.vectors[1] = f32::NAN;
        assert_eq!(s.first_non_finite().as_deref(), Some("the candidate vectors' values[1] = NaN"));
        let mut s = stats_sample();
        s.problems[1].losses = vec![0.0, f64::INFINITY];
        assert_eq!(s.first_non_finite().as_deref(), Some("k-means problem 1: losses[1] = inf"));
        let mut s = stats_sample();
        s.problems[0].radius[0] = f32::NEG_INFINITY;
        s.problems[1].sums = vec![f64::NAN];
        assert_eq!(s.first_non_finite().as_deref(), Some("k-means problem 0: radius[0] = -inf"));
        s.problems[0].sums[1] = f64::INFINITY;
        assert_eq!(s.first_non_finite().as_deref(), Some("k-means problem 0: sums[1] = inf"));
    }

    #[test]
    fn a_mismatch_has_its_own_code() {
        let e = mismatch("other centroids");
        assert_eq!((e.code, e.message.as_str()), (Code::ModelMismatch, "other centroids"));
    }
}
