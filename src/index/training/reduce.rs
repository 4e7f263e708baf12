//! The coordinator's side of a distributed training (index/training.rs):
//! every worker's statistics checked against the request they answer and
//! for what they carry, then reduced into the next request.

use super::{mismatch, Phase, Problem, Request, Stats};
use crate::boundary::error::{invalid, CError, CResult, Code};
use crate::boundary::params::METRIC_DOT;
use crate::index::bytes::hex;

/// The core's convergence threshold (`KMeansParams::default().tolerance`).
const TOLERANCE: f64 = 1e-4;

/// Checks that `stats` answer `q`, from the dataset version the training
/// samples, hold what a worker computes, and cover its rows exactly once;
/// returns the dimension.
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
        if s.dim == 0 {
            return Err(invalid(format!(
                "statistics #{i} claim vectors of dimension 0: no worker computes such statistics (corrupted or \
                 made by a faulty worker)"
            )));
        }
    }
    // Round 0 learns the version, the rows and the dimension from the
    // workers (they must agree); every later round holds them to it.
    let first = &stats[0];
    for (i, s) in stats.iter().enumerate() {
        if q.phase != Phase::IvfInit && (s.version, s.total_rows, s.dim) != (q.version, q.total_rows, q.dim) {
            return Err(mismatch(format!(
                "statistics #{i} come from dataset version {} ({} rows, dimension {}); the training samples version \
                 {} ({} rows, dimension {}): open the worker's dataset at the training's version",
                s.version, s.total_rows, s.dim, q.version, q.total_rows, q.dim
            )));
        }
        if (s.version, s.total_rows, s.dim) != (first.version, first.total_rows, first.dim) {
            return Err(mismatch(format!(
                "statistics #{i} come from dataset version {} ({} rows, dimension {}), statistics #0 from version {} \
                 ({} rows, dimension {})",
                s.version, s.total_rows, s.dim, first.version, first.total_rows, first.dim
            )));
        }
    }
    for (i, s) in stats.iter().enumerate() {
        if let Some(found) = s.first_non_finite() {
            return Err(invalid(format!(
                "statistics #{i} hold a non-finite value ({found}): a worker's statistics are finite (corrupted, or \
                 made by a faulty worker)"
            )));
        }
        if s.sample_rows > s.rows {
            return Err(invalid(format!(
                "statistics #{i} sampled {} rows of their {} (corrupted, or made by a faulty worker)",
                s.sample_rows, s.rows
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
    // Checked: the rows bound every count summed below.
    let rows = stats.iter().try_fold(0u64, |sum, s| sum.checked_add(s.rows));
    if rows != Some(first.total_rows) {
        let rows = rows.map_or_else(|| "more than 2^64".to_string(), |r| r.to_string());
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
        if s.keys.len().checked_mul(dim) != Some(s.vectors.len()) {
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
        // Within the worker's sample: so the sums of counts below fit.
        let assigned = ps.counts.iter().try_fold(0u64, |sum, c| sum.checked_add(*c));
        if assigned.is_none_or(|a| a > s.sample_rows) {
            return Err(invalid(format!(
                "statistics #{i} assign more rows in k-means problem {index} than the {} they sampled (corrupted, or \
                 made by a faulty worker)",
                s.sample_rows
            )));
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
    // (Squares in u128: exact, as the core's are for any sample it holds.)
    let size_loss = counts.iter().map(|c| *c as u128 * *c as u128).sum::<u128>() as f32;
    let balance_loss = balance * (size_loss - (n as u128 * n as u128) as f32 / k as f32);
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
    if let Some(what) = next.first_non_finite() {
        return Err(CError::new(
            Code::Index,
            format!(
                "the reduction of round {} overflows 32-bit floats: {what} is not finite (the workers' vectors are \
                 too large to cluster, or their statistics are not what a worker computes); the training is unchanged",
                q.round
            ),
        ));
    }
    Ok(next)
}
