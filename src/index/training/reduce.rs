//! The coordinator's side of a distributed training (index/training.rs):
//! every worker's statistics checked against the request they answer and
//! for what they carry, then reduced into the next request.

use super::request::{threshold, Node, NodeState, Stage, Tree, BRANCHING, MAX_ROWS_PER_CENTROID};
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

/// Checks that every statistics' candidates have a key (and a slot, for a
/// hierarchical training's) per `dim` values.
fn check_candidates(stats: &[Stats], dim: usize, slotted: bool) -> CResult<()> {
    for (i, s) in stats.iter().enumerate() {
        if s.keys.len().checked_mul(dim) != Some(s.vectors.len()) {
            return Err(invalid(format!("statistics #{i} carry {} keys for {} values", s.keys.len(), s.vectors.len())));
        }
        if s.slots.len() != if slotted { s.keys.len() } else { 0 } {
            return Err(invalid(format!(
                "statistics #{i} carry {} slots for {} candidates",
                s.slots.len(),
                s.keys.len()
            )));
        }
    }
    Ok(())
}

/// The `k` candidates of the smallest keys among all statistics (of one
/// slot, for a hierarchical training).
fn smallest(stats: &[Stats], dim: usize, k: usize, slot: Option<u32>, what: &str) -> CResult<Vec<f32>> {
    check_candidates(stats, dim, slot.is_some())?;
    let mut all: Vec<(u64, &[f32])> = Vec::new();
    for s in stats {
        let candidates = s.keys.iter().copied().zip(s.vectors.chunks_exact(dim)).enumerate();
        all.extend(candidates.filter(|(j, _)| slot.is_none_or(|slot| s.slots[*j] == slot)).map(|(_, c)| c));
    }
    let rows: u64 = if slot.is_some() { all.len() as u64 } else { stats.iter().map(|s| s.sample_rows).sum() };
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

/// One k-means iteration of problem `index` from every worker's statistics;
/// `n` is the rows it trains on (None: the rows the workers assigned).
fn step(p: &mut Problem, stats: &[Stats], index: usize, n: Option<u64>, max_iters: u32, dot: bool) -> CResult<()> {
    let (k, dim) = (p.k, p.dim);
    let mut sums = vec![0f64; k * dim];
    let mut counts = vec![0u64; k];
    let mut losses = vec![0f64; k];
    let mut radius = vec![0f32; k];
    for (i, s) in stats.iter().enumerate() {
        let ps =
            s.problems.get(index).ok_or_else(|| invalid(format!("statistics #{i} lack k-means problem {index}")))?;
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
    let n = n.unwrap_or_else(|| counts.iter().sum());
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
            if plan.num_sub_vectors > 0 && !dim.is_multiple_of(plan.num_sub_vectors as usize) {
                return Err(invalid(format!(
                    "num_sub_vectors = {} does not divide the dimension {dim} of column '{}'",
                    plan.num_sub_vectors, plan.column
                )));
            }
            next.dim = dim64;
            next.version = stats[0].version;
            next.total_rows = stats[0].total_rows;
            next.ivf_rows = sample_rows;
            next.phase = Phase::Ivf;
            if next.tree.is_some() {
                reduce_tree(&mut next, stats, dim)?;
                return finish(q, next);
            }
            let k = plan.num_partitions as usize;
            let mut centroids = smallest(stats, dim, k, None, "IVF training")?;
            if plan.metric == METRIC_DOT {
                normalize(&mut centroids, dim);
            }
            // The core divides a balance factor of 1.0 by the sample size.
            next.problems = vec![Problem::new(k, dim, centroids, 1.0 / sample_rows as f32)];
        }
        Phase::Ivf if next.tree.is_some() => reduce_tree(&mut next, stats, dim)?,
        Phase::Ivf => {
            // A worker retried on another process may have drawn a new sample
            // of about the same size: the round's own size is the one used.
            next.ivf_rows = sample_rows;
            step(&mut next.problems[0], stats, 0, Some(sample_rows), plan.max_iters, plan.metric == METRIC_DOT)?;
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
            let initial = smallest(stats, dim, k, None, "PQ training")?;
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
                    step(&mut next.problems[i], stats, i, Some(sample_rows), plan.max_iters, false)?;
                }
            }
            if next.problems.iter().all(|p| p.done) {
                next.phase = Phase::Done;
            }
        }
        Phase::Done => unreachable!("refused above"),
    }
    finish(q, next)
}

/// `next`, unless its arithmetic overflowed.
fn finish(q: &Request, next: Request) -> CResult<Request> {
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

/// The largest-remainder apportionment of `quota` leaves over sub-clusters
/// of `sizes` rows (the core's `allocate_quotas`): shares follow sizes, no
/// sub-cluster gets more leaves than rows.
fn allocate_quotas(sizes: &[u64], quota: u64) -> Vec<u64> {
    let total: u64 = sizes.iter().sum::<u64>().max(1);
    let mut quotas: Vec<u64> =
        sizes.iter().map(|s| (quota as u128 * *s as u128 / total as u128) as u64).map(|q| q.min(1 << 32)).collect();
    for (q, s) in quotas.iter_mut().zip(sizes) {
        *q = (*q).min(*s);
    }
    let mut remaining = quota.saturating_sub(quotas.iter().sum());
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    let remainder = |i: usize| (quota as u128 * sizes[i] as u128) % total as u128;
    order.sort_by_key(|&i| (std::cmp::Reverse(remainder(i)), std::cmp::Reverse(sizes[i])));
    while remaining > 0 {
        let mut handed = 0;
        for &i in &order {
            if remaining > 0 && quotas[i] < sizes[i] {
                quotas[i] += 1;
                remaining -= 1;
                handed += 1;
            }
        }
        if handed == 0 {
            break;
        }
    }
    quotas
}

/// The statistics' `what` per slot, summed: each statistics must carry one
/// problem per entry of `shape` with that many counts.
fn summed_counts(stats: &[Stats], shape: &[usize], what: &str) -> CResult<Vec<Vec<u64>>> {
    let mut out: Vec<Vec<u64>> = shape.iter().map(|n| vec![0; *n]).collect();
    for (i, s) in stats.iter().enumerate() {
        if s.problems.len() != shape.len() || s.problems.iter().zip(shape).any(|(p, n)| p.counts.len() != *n) {
            return Err(invalid(format!("statistics #{i} have the wrong shape for {what}")));
        }
        let assigned = s.problems.iter().flat_map(|p| &p.counts).try_fold(0u64, |sum, c| sum.checked_add(*c));
        if assigned.is_none_or(|a| a > s.sample_rows) {
            return Err(invalid(format!(
                "statistics #{i} count more rows than the {} they sampled (corrupted, or made by a faulty worker)",
                s.sample_rows
            )));
        }
        for (o, p) in out.iter_mut().zip(&s.problems) {
            o.iter_mut().zip(&p.counts).for_each(|(a, b)| *a += b);
        }
    }
    Ok(out)
}

/// A node of `rows` rows owing `quota` leaves: a leaf, or a training node
/// whose k-means starts from its candidates (`slot`'s).
fn open_node(
    node: &mut Node,
    stats: &[Stats],
    slot: u32,
    dim: usize,
    base_balance: f32,
    dot: bool,
) -> CResult<Option<Problem>> {
    let k = (BRANCHING as u64).min(node.quota as u64).min(node.rows) as usize;
    if node.quota <= 1 || node.rows <= 1 {
        node.state = NodeState::Leaf;
        return Ok(None);
    }
    let mut centroids = smallest(stats, dim, k, Some(slot), "a node of the hierarchical IVF training")?;
    if dot {
        normalize(&mut centroids, dim);
    }
    node.state = NodeState::Training;
    node.cut = threshold(k * MAX_ROWS_PER_CENTROID, node.rows);
    Ok(Some(Problem::new(k, dim, centroids, base_balance)))
}

/// One round of a hierarchical IVF training (training/mod.rs): the core's
/// `train_hierarchical_proportional`, every node of a level at once.
fn reduce_tree(next: &mut Request, stats: &[Stats], dim: usize) -> CResult<()> {
    let plan = next.plan.clone();
    let dot = plan.metric == METRIC_DOT;
    // The core's balance factor of 1.0 over the whole sample, for every node.
    let base_balance = 1.0 / next.ivf_rows.max(1) as f32;
    let mut tree = next.tree.take().expect("a hierarchical training");
    let mut problems = Vec::new();
    match tree.stage {
        Stage::Open => {
            let pending = tree.ids(NodeState::Pending);
            let counts = summed_counts(stats, &[pending.len()], "opening the tree's nodes")?.remove(0);
            check_candidates(stats, dim, true)?;
            for (slot, id) in pending.iter().enumerate() {
                let node = &mut tree.nodes[*id as usize];
                node.rows = counts[slot];
                problems.extend(open_node(node, stats, slot as u32, dim, base_balance, dot)?);
            }
        }
        Stage::Lloyd => {
            problems = std::mem::take(&mut next.problems);
            for (i, p) in problems.iter_mut().enumerate() {
                if !p.done {
                    step(p, stats, i, None, plan.max_iters, dot)?;
                }
            }
            tree.rounds += 1;
            if problems.iter().all(|p| p.done) {
                tree.stage = Stage::Split;
            }
            next.problems = problems;
            next.tree = Some(tree);
            return Ok(());
        }
        Stage::Split => {
            let training = tree.ids(NodeState::Training);
            let done = std::mem::take(&mut next.problems);
            let shape: Vec<usize> = done.iter().map(|p| p.k).collect();
            let counts = summed_counts(stats, &shape, "splitting the tree's nodes")?;
            check_candidates(stats, dim, true)?;
            for (i, (id, p)) in training.iter().zip(&done).enumerate() {
                let quota = tree.nodes[*id as usize].quota as u64;
                let filled: Vec<usize> = (0..p.k).filter(|c| counts[i][*c] > 0).collect();
                let sizes: Vec<u64> = filled.iter().map(|c| counts[i][*c]).collect();
                // The core: a leaf per sub-cluster at the bottom, else
                // quotas by size, the unfunded sub-clusters' rows to the
                // nearest funded one (a descent among the funded only).
                let quotas = if quota <= p.k as u64 { vec![1; filled.len()] } else { allocate_quotas(&sizes, quota) };
                let funded: Vec<usize> = (0..filled.len()).filter(|j| quotas[*j] > 0).collect();
                if funded.len() < 2 {
                    let node = &mut tree.nodes[*id as usize];
                    node.state = NodeState::Leaf;
                    node.stuck = true;
                    continue;
                }
                let mut children = Vec::new();
                let mut centroids = Vec::new();
                for j in funded {
                    let c = filled[j];
                    let mut child = Node::new(NodeState::Leaf, quotas[j] as u32, sizes[j]);
                    if quota > p.k as u64 {
                        let slot = (i * BRANCHING + c) as u32;
                        problems.extend(open_node(&mut child, stats, slot, dim, base_balance, dot)?);
                    }
                    children.push(tree.nodes.len() as u32);
                    tree.nodes.push(child);
                    centroids.extend_from_slice(&p.centroids[c * dim..(c + 1) * dim]);
                }
                let node = &mut tree.nodes[*id as usize];
                node.state = NodeState::Split;
                node.centroids = centroids;
                node.children = children;
            }
        }
        Stage::Means => {
            let leaves = tree.ids(NodeState::Leaf);
            for (i, s) in stats.iter().enumerate() {
                let ok = s.problems.len() == 1
                    && s.problems[0].counts.len() == leaves.len()
                    && s.problems[0].sums.len() == leaves.len() * dim
                    && s.problems[0].losses.len() == leaves.len();
                if !ok {
                    return Err(invalid(format!("statistics #{i} have the wrong shape for the leaves' means")));
                }
            }
            let counts = summed_counts(stats, &[leaves.len()], "the leaves' means")?.remove(0);
            let mut sums = vec![0f64; leaves.len() * dim];
            let mut squares = vec![0f64; leaves.len()];
            for s in stats {
                sums.iter_mut().zip(&s.problems[0].sums).for_each(|(a, b)| *a += b);
                squares.iter_mut().zip(&s.problems[0].losses).for_each(|(a, b)| *a += b);
            }
            let mut centroids = vec![0f32; leaves.len() * dim];
            let mut loss = 0f64;
            for (l, id) in leaves.iter().enumerate() {
                let out = &mut centroids[l * dim..(l + 1) * dim];
                if counts[l] == 0 {
                    // No rows (a replaced worker's new sample of a column of
                    // vector lists): the centroid its parent split towards.
                    let parent = tree.nodes.iter().find_map(|n| {
                        let c = n.children.iter().position(|c| c == id)?;
                        Some(&n.centroids[c * dim..(c + 1) * dim])
                    });
                    let parent =
                        parent.ok_or_else(|| invalid("the hierarchical IVF training's only leaf holds no rows"))?;
                    out.copy_from_slice(parent);
                    continue;
                }
                let n = counts[l] as f64;
                let sum = &sums[l * dim..(l + 1) * dim];
                out.iter_mut().zip(sum).for_each(|(c, s)| *c = (*s / n) as f32);
                loss += (squares[l] - sum.iter().map(|s| s * s).sum::<f64>() / n).max(0.0);
            }
            if dot {
                normalize(&mut centroids, dim);
            }
            next.ivf = centroids;
            next.ivf_loss = loss;
            next.ivf_iterations = tree.rounds;
            next.problems.clear();
            next.tree = None;
            next.phase = if plan.num_sub_vectors > 0 { Phase::PqInit } else { Phase::Done };
            return Ok(());
        }
    }
    next.problems = problems;
    advance(&mut tree, plan.num_partitions)?;
    next.tree = Some(tree);
    Ok(())
}

/// The next stage once no node is training: the leaves' means, or, when
/// nodes of duplicates left fewer leaves than partitions, the largest
/// leaves split in two (the core's `fill_missing_leaves`).
fn advance(tree: &mut Tree, num_partitions: u32) -> CResult<()> {
    if !tree.ids(NodeState::Training).is_empty() {
        tree.stage = Stage::Lloyd;
        return Ok(());
    }
    let leaves = tree.ids(NodeState::Leaf);
    let missing = (num_partitions as usize).saturating_sub(leaves.len());
    if missing == 0 {
        tree.stage = Stage::Means;
        return Ok(());
    }
    let mut splittable: Vec<u32> = leaves
        .iter()
        .copied()
        .filter(|id| !tree.nodes[*id as usize].stuck && tree.nodes[*id as usize].rows >= 2)
        .collect();
    if splittable.is_empty() {
        return Err(invalid(format!(
            "cannot train {num_partitions} IVF partitions: k-means formed only {} non-empty clusters from the sample \
             (too few rows, or too many duplicate vectors): lower num_partitions to at most {}",
            leaves.len(),
            leaves.len()
        )));
    }
    splittable.sort_by_key(|id| (std::cmp::Reverse(tree.nodes[*id as usize].rows), *id));
    for id in splittable.into_iter().take(missing) {
        let node = &mut tree.nodes[id as usize];
        node.state = NodeState::Pending;
        node.quota = 2;
    }
    tree.stage = Stage::Open;
    Ok(())
}

#[cfg(test)]
mod tests;
