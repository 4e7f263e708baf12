//! Unit tests of `reduce.rs` (its `mod tests`), in a file of their own to keep the module short.

use super::super::{Plan, ProblemStats};
use super::*;
use crate::boundary::params::METRIC_L2;
use crate::index::kinds::{IVF_FLAT, IVF_PQ};

const VERSION: u64 = 5;

fn plan(num_partitions: u32, num_sub_vectors: u32, max_iters: u32) -> Plan {
    Plan {
        column: "vec".to_string(),
        metric: METRIC_L2,
        num_partitions,
        num_sub_vectors,
        num_bits: if num_sub_vectors > 0 { 4 } else { 0 },
        max_iters,
        sample_rate: 256,
        seed: 1,
        index_type: if num_sub_vectors > 0 { IVF_PQ } else { IVF_FLAT },
    }
}

/// A request past its first round: the dataset learned.
fn request(plan: Plan, phase: Phase, dim: u64, total_rows: u64) -> Request {
    let mut q = Request::new(plan);
    q.phase = phase;
    q.round = 1;
    q.dim = dim;
    q.version = VERSION;
    q.total_rows = total_rows;
    q
}

/// A worker's statistics answering `q`, with no candidates or problems.
fn worker(q: &Request, dim: u64, total_rows: u64, fragments: &[u32], rows: u64, sample_rows: u64) -> Stats {
    Stats {
        request: q.fingerprint(),
        version: VERSION,
        total_rows,
        dim,
        fragments: fragments.to_vec(),
        rows,
        sample_rows,
        keys: vec![],
        vectors: vec![],
        slots: vec![],
        problems: vec![],
    }
}

fn ps(sums: &[f64], counts: &[u64], losses: &[f64], radius: &[f32]) -> ProblemStats {
    ProblemStats { sums: sums.to_vec(), counts: counts.to_vec(), losses: losses.to_vec(), radius: radius.to_vec() }
}

fn refused<T>(result: CResult<T>) -> CError {
    match result {
        Ok(_) => panic!("accepted what must be refused"),
        Err(e) => e,
    }
}

fn ok<T>(result: CResult<T>) -> T {
    result.unwrap_or_else(|e| panic!("refused: {}", e.message))
}

// ---- the statistics' checks ----

/// Two workers of a flat IVF round over 100 rows of dimension 2.
fn ivf_round() -> (Request, Vec<Stats>) {
    let mut q = request(plan(2, 0, 2), Phase::Ivf, 2, 100);
    q.ivf_rows = 64;
    q.problems = vec![Problem::new(2, 2, vec![0.0, 0.0, 1.0, 1.0], 1.0 / 64.0)];
    let mut w0 = worker(&q, 2, 100, &[0, 2], 60, 40);
    w0.problems = vec![ps(&[8.0, 4.0, 2.0, 16.0], &[8, 16], &[1.5, 2.0], &[0.5, 0.75])];
    let mut w1 = worker(&q, 2, 100, &[1], 40, 24);
    w1.problems = vec![ps(&[8.0, 12.0, 6.0, 16.0], &[8, 16], &[0.5, 4.0], &[0.25, 1.0])];
    (q, vec![w0, w1])
}

#[test]
fn statistics_must_answer_this_request() {
    let (q, stats) = ivf_round();
    assert_eq!(ok(check_stats(&q, &stats)), 2);
    let e = refused(reduce(&q, &[]));
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.starts_with("no statistics"), "{}", e.message);
    // Statistics of an earlier round.
    let mut earlier = q.clone();
    earlier.round = 0;
    let mut s = stats.clone();
    s[1].request = earlier.fingerprint();
    let e = refused(reduce(&q, &s));
    assert_eq!(e.code, Code::ModelMismatch);
    let want = format!("statistics #1 answer another request ({}), ", &hex(&earlier.fingerprint())[..16]);
    assert!(e.message.starts_with(&want), "{}", e.message);
    let mut s = stats.clone();
    s[0].dim = 0;
    assert_eq!(refused(reduce(&q, &s)).code, Code::InvalidArgument);
}

#[test]
fn statistics_must_come_from_the_training_version() {
    let (q, stats) = ivf_round();
    let changes: [fn(&mut Stats); 3] = [|s| s.version = 6, |s| s.dim = 3, |s| s.total_rows = 101];
    for change in changes {
        let mut s = stats.clone();
        change(&mut s[1]);
        let e = refused(reduce(&q, &s));
        assert_eq!(e.code, Code::ModelMismatch);
        assert!(e.message.starts_with("statistics #1 come from dataset version"), "{}", e.message);
    }
    // A first round learns the version, but its workers must agree.
    let q = Request::new(plan(2, 0, 2));
    let mut s = vec![worker(&q, 2, 100, &[0], 60, 4), worker(&q, 2, 100, &[1], 40, 4)];
    s[1].version = 6;
    let e = refused(reduce(&q, &s));
    assert_eq!(e.code, Code::ModelMismatch);
    let want = "statistics #1 come from dataset version 6 (100 rows, dimension 2), statistics #0 from version 5 \
                (100 rows, dimension 2)";
    assert_eq!(e.message, want);
}

#[test]
fn statistics_must_be_what_a_worker_computes() {
    let (q, stats) = ivf_round();
    let mut s = stats.clone();
    s[0].problems[0].losses[1] = f64::INFINITY;
    let e = refused(reduce(&q, &s));
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.starts_with("statistics #0 hold a non-finite value (k-means problem 0: losses[1] = inf)"));
    let mut s = stats.clone();
    s[1].sample_rows = 41;
    let e = refused(reduce(&q, &s));
    assert!(e.message.starts_with("statistics #1 sampled 41 rows of their 40"), "{}", e.message);
}

#[test]
fn statistics_must_cover_every_row_once() {
    let (q, stats) = ivf_round();
    let mut s = stats.clone();
    s[1].fragments = vec![1, 2];
    let e = refused(reduce(&q, &s));
    assert_eq!(e.code, Code::OverlappingSegments);
    assert!(e.message.starts_with("fragment 2 is in statistics #0 and #1"), "{}", e.message);
    // A worker missing.
    let e = refused(reduce(&q, &stats[..1]));
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.starts_with("the statistics cover 60 of the dataset's 100 rows"), "{}", e.message);
    // Rows whose sum overflows.
    let mut s = stats.clone();
    s[0].rows = u64::MAX - 10;
    let e = refused(reduce(&q, &s));
    assert!(e.message.starts_with("the statistics cover more than 2^64 of the dataset's 100 rows"));
}

// ---- candidates ----

#[test]
fn the_smallest_keys_are_the_initial_centroids() {
    let q = Request::new(plan(3, 0, 2));
    let mut w0 = worker(&q, 2, 10, &[0], 5, 5);
    (w0.keys, w0.vectors) = (vec![9, 2], vec![9.0, 9.0, 2.5, 0.0]);
    let mut w1 = worker(&q, 2, 10, &[1], 5, 5);
    (w1.keys, w1.vectors) = (vec![5, 2], vec![5.0, 5.0, 1.0, 0.0]);
    let stats = [w0, w1];
    // Equal keys: the vector of smaller bits first (1.0 < 2.5).
    assert_eq!(ok(smallest(&stats, 2, 3, None, "IVF training")), vec![1.0, 0.0, 2.5, 0.0, 5.0, 5.0]);
    assert_eq!(ok(smallest(&stats, 2, 4, None, "IVF training")), vec![1.0, 0.0, 2.5, 0.0, 5.0, 5.0, 9.0, 9.0]);
    let e = refused(smallest(&stats, 2, 5, None, "IVF training"));
    let want = "IVF training needs 5 sample rows, the workers sampled 10: the dataset has too few (non-null, \
                finite) rows";
    assert_eq!((e.code, e.message.as_str()), (Code::InvalidArgument, want));
    // Enough candidates, too few sampled rows.
    let mut few = stats.clone();
    (few[0].sample_rows, few[1].sample_rows) = (1, 1);
    assert!(smallest(&few, 2, 3, None, "IVF training").is_err());
}

#[test]
fn candidates_of_one_slot() {
    let q = Request::new(plan(300, 0, 2));
    let mut w0 = worker(&q, 1, 10, &[0], 5, 5);
    (w0.keys, w0.vectors, w0.slots) = (vec![4, 1, 3], vec![0.4, 0.1, 0.3], vec![1, 0, 1]);
    let mut w1 = worker(&q, 1, 10, &[1], 5, 5);
    (w1.keys, w1.vectors, w1.slots) = (vec![2, 0], vec![0.2, 0.0], vec![1, 0]);
    let stats = [w0, w1];
    assert_eq!(ok(smallest(&stats, 1, 3, Some(1), "a node")), vec![0.2, 0.3, 0.4]);
    assert_eq!(ok(smallest(&stats, 1, 2, Some(0), "a node")), vec![0.0, 0.1]);
    // A slot counts its own candidates, not the sampled rows.
    let e = refused(smallest(&stats, 1, 3, Some(0), "a node"));
    assert!(e.message.starts_with("a node needs 3 sample rows, the workers sampled 2:"), "{}", e.message);
    assert!(smallest(&stats, 1, 1, Some(7), "a node").is_err());
}

#[test]
fn candidates_must_be_whole() {
    let q = Request::new(plan(3, 0, 2));
    let mut w = worker(&q, 2, 10, &[0], 10, 10);
    (w.keys, w.vectors) = (vec![1, 2], vec![0.0; 3]);
    let e = refused(check_candidates(&[w.clone()], 2, false));
    assert_eq!(e.message, "statistics #0 carry 2 keys for 3 values");
    w.vectors = vec![0.0; 4];
    assert!(check_candidates(&[w.clone()], 2, false).is_ok());
    let e = refused(check_candidates(&[w.clone()], 2, true));
    assert_eq!(e.message, "statistics #0 carry 0 slots for 2 candidates");
    w.slots = vec![0, 0];
    assert!(check_candidates(&[w.clone()], 2, true).is_ok());
    assert!(check_candidates(&[w], 2, false).is_err());
}

// ---- the k-means step ----

#[test]
fn normalize_scales_to_unit_length() {
    let mut c = vec![3.0, 4.0, 0.0, 0.0, -2.0, 0.0];
    normalize(&mut c, 2);
    assert_eq!(c, vec![0.6, 0.8, 0.0, 0.0, -1.0, 0.0]);
}

#[test]
fn an_empty_cluster_takes_half_of_the_largest() {
    let eps = 1.0f32 / 1024.0;
    let mut sizes = vec![4, 0, 2];
    let mut c = vec![1.0, 2.0, 0.0, 0.0, 3.0, 3.0];
    split_clusters(&mut sizes, &mut c, 2);
    assert_eq!(sizes, vec![2, 2, 2]);
    assert_eq!(c, vec![1.0 - eps, 2.0 + 2.0 * eps, 1.0 + eps, 2.0 - 2.0 * eps, 3.0, 3.0]);
    // Equal largest: the first; an odd size leaves the larger half.
    let mut sizes = vec![3, 3, 0];
    let mut c = vec![1.0, 2.0, 4.0];
    split_clusters(&mut sizes, &mut c, 1);
    assert_eq!(sizes, vec![2, 3, 1]);
    assert_eq!(c, vec![1.0 - eps, 2.0, 1.0 + eps]);
    // Two empty clusters: the second splits the first of the two
    // largest left by the first split.
    let mut sizes = vec![0, 8, 0];
    let mut c = vec![0.0, 1.0, 0.0];
    split_clusters(&mut sizes, &mut c, 1);
    assert_eq!(sizes, vec![2, 4, 2]);
    assert_eq!(c, vec![(1.0 + eps) * (1.0 - eps), 1.0 - eps, (1.0 + eps) * (1.0 + eps)]);
    // Nothing to split.
    for mut sizes in [vec![1, 0], vec![0, 0]] {
        let before = sizes.clone();
        let mut c = vec![5.0, 6.0];
        split_clusters(&mut sizes, &mut c, 1);
        assert_eq!((sizes, c), (before, vec![5.0, 6.0]));
    }
}

#[test]
fn a_step_reduces_two_workers_as_their_sum() {
    let (q, stats) = ivf_round();
    let mut p = q.problems[0].clone();
    ok(step(&mut p, &stats, 0, Some(64), 2, false));
    // Sums [16, 16, 8, 32] over counts [16, 32].
    assert_eq!(p.centroids, vec![1.0, 1.0, 0.25, 1.0]);
    assert_eq!(p.sizes, vec![16, 32]);
    // The largest cluster's spread: (radius 1.0 - its mean loss 6/32) / 64 rows.
    assert_eq!(p.adjusted_balance, 13.0 / 1024.0);
    // Losses 2 + 6, and the balance term (1/64) * (16^2 + 32^2 - 64^2 / 2) = -12.
    assert_eq!(p.loss, -4.0);
    assert_eq!((p.iterations, p.done), (1, false));
    // One worker holding both workers' statistics reduces the same.
    let mut merged = stats[0].clone();
    merged.problems = vec![ps(&[16.0, 16.0, 8.0, 32.0], &[16, 32], &[2.0, 6.0], &[0.5, 1.0])];
    merged.sample_rows = 64;
    let mut alone = q.problems[0].clone();
    ok(step(&mut alone, &[merged], 0, Some(64), 2, false));
    assert_eq!(format!("{alone:?}"), format!("{p:?}"));
    // The next step biases by the measured spread: (13/1024) * -768 = -9.75.
    ok(step(&mut p, &stats, 0, Some(64), 2, false));
    assert_eq!(p.loss, 8.0 - 9.75);
    assert_eq!((p.iterations, p.done), (2, true));
}

#[test]
fn a_step_without_a_size_counts_the_assigned_rows() {
    let (q, stats) = ivf_round();
    let mut p = q.problems[0].clone();
    // 48 rows assigned: (1.0 - 6/32) / 48, and a balance term
    // (1/64) * (1280 - 48^2 / 2) = (1/64) * 128 = 2.
    ok(step(&mut p, &stats, 0, None, 2, false));
    assert_eq!(p.adjusted_balance, 0.8125f32 / 48.0);
    assert_eq!(p.loss, 10.0);
}

#[test]
fn a_step_converges_when_the_loss_settles() {
    let (q, stats) = ivf_round();
    let mut p = q.problems[0].clone();
    p.base_balance = 0.0;
    ok(step(&mut p, &stats, 0, Some(64), 50, false));
    assert_eq!((p.loss, p.done), (8.0, false));
    ok(step(&mut p, &stats, 0, Some(64), 50, false));
    assert_eq!((p.loss, p.iterations, p.done), (8.0, 2, true));
    // A change of 2e-4 of the loss is not settled, of 0.5e-4 it is.
    let mut p = q.problems[0].clone();
    (p.base_balance, p.loss) = (0.0, 8.0 + 8.0 * 2e-4);
    ok(step(&mut p, &stats, 0, Some(64), 50, false));
    assert!(!p.done);
    (p.loss, p.iterations) = (8.0 + 8.0 * 0.5e-4, 0);
    ok(step(&mut p, &stats, 0, Some(64), 50, false));
    assert!(p.done);
    // A zero loss is settled only after a zero loss.
    let mut zero = stats.clone();
    zero.iter_mut().for_each(|s| s.problems[0].losses = vec![0.0, 0.0]);
    let mut p = q.problems[0].clone();
    p.base_balance = 0.0;
    ok(step(&mut p, &zero, 0, Some(64), 50, false));
    assert!(!p.done);
    ok(step(&mut p, &zero, 0, Some(64), 50, false));
    assert!(p.done);
}

#[test]
fn a_step_splits_empty_clusters_and_normalizes_for_dot() {
    let (q, mut stats) = ivf_round();
    for s in stats.iter_mut() {
        let p = &mut s.problems[0];
        p.sums[2..].fill(0.0);
        p.counts[1] = 0;
        p.losses[1] = 0.0;
        p.radius[1] = 0.0;
    }
    let mut p = q.problems[0].clone();
    ok(step(&mut p, &stats, 0, Some(64), 2, false));
    // 16 rows at (1, 1): the empty cluster takes 8 of them.
    let eps = 1.0f32 / 1024.0;
    assert_eq!(p.sizes, vec![8, 8]);
    assert_eq!(p.centroids, vec![1.0 - eps, 1.0 + eps, 1.0 + eps, 1.0 - eps]);
    let mut dot = q.problems[0].clone();
    ok(step(&mut dot, &stats, 0, Some(64), 2, true));
    for c in dot.centroids.chunks(2) {
        assert!((c[0] * c[0] + c[1] * c[1] - 1.0).abs() < 1e-6, "{c:?}");
    }
}

#[test]
fn a_step_refuses_misshapen_statistics() {
    let (q, stats) = ivf_round();
    let mut p = q.problems[0].clone();
    let e = refused(step(&mut p, &stats, 1, None, 2, false));
    assert_eq!(e.message, "statistics #0 lack k-means problem 1");
    let mut s = stats.clone();
    s[1].problems[0].radius.pop();
    let e = refused(step(&mut p, &s, 0, None, 2, false));
    assert_eq!(e.message, "statistics #1 have the wrong shape for k-means problem 0");
    let mut s = stats.clone();
    s[1].problems[0].counts = vec![20, 5];
    let e = refused(step(&mut p, &s, 0, None, 2, false));
    assert!(e.message.starts_with("statistics #1 assign more rows in k-means problem 0 than the 24 they sampled"));
    let mut s = stats.clone();
    s[0].problems[0].counts = vec![u64::MAX, 1];
    assert!(step(&mut p, &s, 0, None, 2, false).is_err());
    // Nothing was changed by the refusals.
    assert_eq!(format!("{p:?}"), format!("{:?}", q.problems[0]));
}

// ---- whole rounds of a flat training ----

#[test]
fn a_flat_training_from_candidates_to_centroids() {
    let q = Request::new(plan(2, 0, 2));
    let mut w0 = worker(&q, 2, 100, &[0, 2], 60, 40);
    (w0.keys, w0.vectors) = (vec![7, 3], vec![7.0, 7.0, 3.0, 3.0]);
    let mut w1 = worker(&q, 2, 100, &[1], 40, 24);
    (w1.keys, w1.vectors) = (vec![1, 11], vec![1.0, 1.0, 11.0, 11.0]);
    let next = ok(reduce(&q, &[w0, w1]));
    assert_eq!((next.phase, next.round, next.dim, next.version), (Phase::Ivf, 1, 2, VERSION));
    assert_eq!((next.total_rows, next.ivf_rows), (100, 64));
    assert!(next.parsed_fingerprint.is_none() && next.tree.is_none());
    let p = &next.problems[0];
    assert_eq!((p.k, p.dim, p.iterations), (2, 2, 0));
    assert_eq!(p.centroids, vec![1.0, 1.0, 3.0, 3.0]);
    assert_eq!(p.base_balance, 1.0 / 64.0);
    ok(Request::parse(&next.serialize(), "the next request"));

    // Two Lloyd rounds (max_iters 2) end the IVF phase.
    let (q, _) = ivf_round();
    let round = |q: &Request| {
        let (_, mut stats) = ivf_round();
        stats.iter_mut().for_each(|s| s.request = q.fingerprint());
        ok(reduce(q, &stats))
    };
    let second = round(&q);
    assert_eq!((second.phase, second.round, second.problems[0].iterations), (Phase::Ivf, 2, 1));
    assert_eq!(second.problems[0].loss, -4.0);
    let done = round(&second);
    assert_eq!((done.phase, done.round, done.ivf_iterations), (Phase::Done, 3, 2));
    assert_eq!(done.ivf, vec![1.0, 1.0, 0.25, 1.0]);
    assert_eq!(done.ivf_loss, -1.75);
    assert!(done.problems.is_empty());
    ok(Request::parse(&done.serialize(), "the last request"));
    let e = refused(reduce(&done, &[]));
    assert_eq!(e.message, "the training is done: there is nothing to reduce");
}

#[test]
fn a_reduction_of_split_statistics_is_the_reduction_of_their_sum() {
    let (q, stats) = ivf_round();
    let mut merged = worker(&q, 2, 100, &[0, 1, 2], 100, 64);
    merged.problems = vec![ps(&[16.0, 16.0, 8.0, 32.0], &[16, 32], &[2.0, 6.0], &[0.5, 1.0])];
    assert_eq!(ok(reduce(&q, &stats)).serialize(), ok(reduce(&q, &[merged])).serialize());
}

#[test]
fn an_overflowing_reduction_is_an_index_error() {
    let (q, mut stats) = ivf_round();
    stats[0].problems[0].sums[0] = 1e300;
    let e = refused(reduce(&q, &stats));
    assert_eq!(e.code, Code::Index);
    let want = "the reduction of round 1 overflows 32-bit floats: value 0 of k-means problem 0's centroids is \
                not finite";
    assert!(e.message.starts_with(want), "{}", e.message);
}

#[test]
fn the_first_round_checks_the_sub_vectors_against_the_dimension() {
    let q = Request::new(plan(2, 3, 2));
    let mut w = worker(&q, 4, 10, &[0], 10, 10);
    (w.keys, w.vectors) = (vec![1, 2], vec![0.0; 8]);
    let e = refused(reduce(&q, &[w]));
    assert_eq!(e.message, "num_sub_vectors = 3 does not divide the dimension 4 of column 'vec'");
}

#[test]
fn pq_codebooks_start_from_sub_vectors_of_the_smallest_keys() {
    // 2 sub-vectors of 2 values, 4 bits: 16 centroids each.
    let mut q = request(plan(2, 2, 1), Phase::PqInit, 4, 40);
    q.ivf = vec![0.0; 8];
    q.ivf_rows = 40;
    let row = |r: u64| vec![r as f32, r as f32 + 0.5, -(r as f32), 2.0 * r as f32];
    let mut w0 = worker(&q, 4, 40, &[0], 20, 20);
    let mut w1 = worker(&q, 4, 40, &[1], 20, 20);
    // Keys 0..20 alternate between the workers; each worker sends its 10
    // smallest.
    w0.keys = (0..10).map(|i| 2 * i).collect();
    w1.keys = (0..10).map(|i| 2 * i + 1).collect();
    w0.vectors = w0.keys.iter().flat_map(|k| row(*k)).collect();
    w1.vectors = w1.keys.iter().flat_map(|k| row(*k)).collect();
    let next = ok(reduce(&q, &[w0, w1]));
    assert_eq!((next.phase, next.pq_rows, next.problems.len()), (Phase::Pq, 40, 2));
    for (i, p) in next.problems.iter().enumerate() {
        assert_eq!((p.k, p.dim, p.base_balance), (16, 2, 0.0));
        let want: Vec<f32> = (0..16).flat_map(|r| row(r)[2 * i..2 * i + 2].to_vec()).collect();
        assert_eq!(p.centroids, want, "sub-vector {i}");
    }
    ok(Request::parse(&next.serialize(), "the next request"));

    // One PQ round (max_iters 1) ends the training.
    let one = |i: usize| {
        let sums: Vec<f64> = (0..32).map(|v| (v + i) as f64).collect();
        ps(&sums, &[1; 16], &[0.5; 16], &[1.0; 16])
    };
    let mut w0 = worker(&next, 4, 40, &[0], 20, 20);
    w0.problems = vec![one(0), one(1)];
    let mut w1 = worker(&next, 4, 40, &[1], 20, 20);
    w1.problems = vec![one(0), one(1)];
    let done = ok(reduce(&next, &[w0, w1]));
    assert_eq!(done.phase, Phase::Done);
    // Sub-vector 1, centroid 3: sums 2 * (6 + 1) and 2 * (7 + 1) over 2 rows.
    assert_eq!(&done.problems[1].centroids[6..8], &[7.0, 8.0]);
    assert_eq!(&done.problems[0].centroids[..2], &[0.0, 1.0]);
    ok(Request::parse(&done.serialize(), "the last request"));
}

mod hierarchy;
