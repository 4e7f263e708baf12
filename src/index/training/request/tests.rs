//! Unit tests of `request.rs` (its `mod tests`), in a file of their own to keep the module short.

use super::*;
use crate::boundary::params::{METRIC_COSINE, METRIC_L2};
use crate::index::kinds::{IVF_FLAT, IVF_PQ};

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
    let flat = LanceVectorIndexParams { num_partitions: 4, num_bits: 4, ..LanceVectorIndexParams::defaults(IVF_FLAT) };
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
