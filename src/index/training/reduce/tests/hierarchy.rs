//! Unit tests of `reduce.rs`: the hierarchy's stages (quotas, open, split, Lloyd, means).

use super::*;

// ---- the hierarchy ----

#[test]
fn quotas_follow_sizes_by_largest_remainder() {
    assert_eq!(allocate_quotas(&[50, 30, 20], 10), vec![5, 3, 2]);
    // 2, 1.2 and 0.8: the 0.8 has the largest remainder.
    assert_eq!(allocate_quotas(&[5, 3, 2], 4), vec![2, 1, 1]);
    // Equal remainders: the larger sub-cluster, then the first.
    assert_eq!(allocate_quotas(&[1, 1, 1], 2), vec![1, 1, 0]);
    assert_eq!(allocate_quotas(&[10, 1, 1], 4), vec![4, 0, 0]);
    assert_eq!(allocate_quotas(&[1, 10, 1], 4), vec![0, 4, 0]);
    // 49.02, 0.49, 0.49: a leaf to the first small one.
    assert_eq!(allocate_quotas(&[100, 1, 1], 50), vec![49, 1, 0]);
    // Never more leaves than rows: 5 leaves over 3 rows.
    assert_eq!(allocate_quotas(&[2, 1], 5), vec![2, 1]);
    assert_eq!(allocate_quotas(&[0, 4], 2), vec![0, 2]);
    assert_eq!(allocate_quotas(&[], 3), Vec::<u64>::new());
    assert_eq!(allocate_quotas(&[7, 9], 0), vec![0, 0]);
}

#[test]
fn quotas_sum_to_the_leaves_and_stay_proportional() {
    let mut seed = 7u64;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for _ in 0..500 {
        let sizes: Vec<u64> = (0..1 + next(16)).map(|_| next(1000)).collect();
        let total: u64 = sizes.iter().sum();
        let quota = next(total.max(1) * 2);
        let quotas = allocate_quotas(&sizes, quota);
        assert_eq!(quotas.len(), sizes.len());
        assert_eq!(quotas.iter().sum::<u64>(), quota.min(total), "{sizes:?} {quota}");
        assert!(quotas.iter().zip(&sizes).all(|(q, s)| q <= s), "{sizes:?} {quota} {quotas:?}");
        if quota <= total && total > 0 {
            // Within one of the exact share (caps never bind below it),
            // and the extra leaves to the largest remainders.
            let exact = |i: usize| (quota as u128 * sizes[i] as u128, total as u128);
            for (i, q) in quotas.iter().enumerate() {
                let (num, den) = exact(i);
                assert!(*q as u128 * den <= num + den && num < (*q as u128 + 1) * den, "{sizes:?} {quota}");
            }
            let up = |i: usize| quotas[i] as u128 * total as u128 > quota as u128 * sizes[i] as u128;
            for i in 0..sizes.len() {
                for j in 0..sizes.len() {
                    if up(i) && !up(j) {
                        assert!(exact(i).0 % exact(i).1 >= exact(j).0 % exact(j).1, "{sizes:?} {quota}");
                    }
                }
            }
        }
    }
}

#[test]
fn summed_counts_add_the_workers_counts() {
    let q = Request::new(plan(300, 0, 2));
    let mut w0 = worker(&q, 1, 20, &[0], 10, 10);
    w0.problems = vec![ps(&[], &[1, 2], &[], &[]), ps(&[], &[3], &[], &[])];
    let mut w1 = worker(&q, 1, 20, &[1], 10, 10);
    w1.problems = vec![ps(&[], &[4, 0], &[], &[]), ps(&[], &[5], &[], &[])];
    let stats = [w0, w1];
    assert_eq!(ok(summed_counts(&stats, &[2, 1], "x")), vec![vec![5, 2], vec![8]]);
    let e = refused(summed_counts(&stats, &[2, 2], "splitting"));
    assert_eq!(e.message, "statistics #0 have the wrong shape for splitting");
    assert!(summed_counts(&stats, &[2], "x").is_err());
    let mut over = stats.clone();
    over[1].sample_rows = 8;
    let e = refused(summed_counts(&over, &[2, 1], "x"));
    assert!(e.message.starts_with("statistics #1 count more rows than the 8 they sampled"), "{}", e.message);
}

#[test]
fn a_node_opens_as_a_leaf_or_a_training_node() {
    let q = Request::new(plan(300, 0, 2));
    let mut w = worker(&q, 2, 10, &[0], 10, 10);
    (w.keys, w.vectors, w.slots) = (vec![2, 1, 3], vec![0.0, 2.0, 3.0, 4.0, 1.0, 0.0], vec![0, 0, 0]);
    let stats = [w];
    for (quota, rows) in [(1, 100), (0, 100), (5, 1), (5, 0)] {
        let mut node = Node::new(NodeState::Pending, quota, rows);
        assert!(ok(open_node(&mut node, &stats, 0, 2, 0.5, false)).is_none());
        assert_eq!(node, Node::new(NodeState::Leaf, quota, rows));
    }
    // k = min(16, quota, rows): 2 of the quota here.
    let mut node = Node::new(NodeState::Pending, 2, 10_000);
    let p = ok(open_node(&mut node, &stats, 0, 2, 0.5, true)).expect("a training node");
    assert_eq!((p.k, p.dim, p.base_balance, p.iterations), (2, 2, 0.5, 0));
    // The two smallest keys, scaled to unit length (dot).
    assert_eq!(p.centroids, vec![0.6, 0.8, 0.0, 1.0]);
    assert_eq!(node.state, NodeState::Training);
    assert_eq!(node.cut, threshold(2 * MAX_ROWS_PER_CENTROID, 10_000));
    assert!(node.cut < u64::MAX / 4 && node.cut > u64::MAX / 10);
    // k = rows here, and every row is in its k-means.
    let mut node = Node::new(NodeState::Pending, 40, 3);
    let p = ok(open_node(&mut node, &stats, 0, 2, 0.5, false)).expect("a training node");
    assert_eq!((p.k, node.cut), (3, u64::MAX));
    // Too few candidates for the node.
    let mut node = Node::new(NodeState::Pending, 40, 100);
    assert!(open_node(&mut node, &stats, 0, 2, 0.5, false).is_err());
}

#[test]
fn the_root_opens_with_the_workers_counts() {
    let q = Request::new(plan(300, 0, 2));
    let mut w0 = worker(&q, 1, 100, &[0], 50, 30);
    w0.problems = vec![ps(&[], &[30], &[], &[])];
    w0.keys = (0..10).map(|i| 2 * i).collect();
    let mut w1 = worker(&q, 1, 100, &[1], 50, 20);
    w1.problems = vec![ps(&[], &[20], &[], &[])];
    w1.keys = (0..6).map(|i| 2 * i + 1).collect();
    for w in [&mut w0, &mut w1] {
        w.vectors = w.keys.iter().map(|k| *k as f32 * 0.5).collect();
        w.slots = vec![0; w.keys.len()];
    }
    let next = ok(reduce(&q, &[w0, w1]));
    assert_eq!((next.phase, next.dim, next.ivf_rows), (Phase::Ivf, 1, 50));
    let tree = next.tree.as_ref().expect("a tree");
    assert_eq!((tree.stage, tree.rounds, tree.nodes.len()), (Stage::Lloyd, 0, 1));
    let root = &tree.nodes[0];
    assert_eq!((root.state, root.quota, root.rows, root.cut), (NodeState::Training, 300, 50, u64::MAX));
    let p = &next.problems[0];
    assert_eq!((p.k, p.dim, p.base_balance), (16, 1, 1.0 / 50.0));
    // Keys 0..=11, then 12, 14, 16, 18: halved.
    let keys = (0..12).chain([12, 14, 16, 18]);
    assert_eq!(p.centroids, keys.map(|k| k as f32 * 0.5).collect::<Vec<_>>());
    ok(Request::parse(&next.serialize(), "the next request"));
}

#[test]
fn a_root_of_one_row_cannot_make_the_partitions() {
    let q = Request::new(plan(300, 0, 2));
    let mut w = worker(&q, 1, 10, &[0], 10, 1);
    w.problems = vec![ps(&[], &[1], &[], &[])];
    let e = refused(reduce(&q, &[w]));
    let want = "cannot train 300 IVF partitions: k-means formed only 1 non-empty clusters from the sample (too \
                few rows, or too many duplicate vectors): lower num_partitions to at most 1";
    assert_eq!((e.code, e.message.as_str()), (Code::InvalidArgument, want));
}

/// A hierarchical request whose nodes are `nodes` at `stage`, with
/// `problems`, over 8 rows of dimension 1.
fn tree_request(stage: Stage, nodes: Vec<Node>, problems: Vec<Problem>, rounds: u32) -> Request {
    let mut q = request(plan(300, 0, 10), Phase::Ivf, 1, 8);
    q.ivf_rows = 8;
    q.tree = Some(Tree { stage, nodes, rounds });
    q.problems = problems;
    q
}

fn done_problem(k: usize, centroids: Vec<f32>) -> Problem {
    let mut p = Problem::new(k, 1, centroids, 0.125);
    (p.iterations, p.done, p.loss) = (3, true, 1.0);
    p
}

#[test]
fn a_split_funds_sub_clusters_that_open_as_nodes() {
    // Quota 8 over a k of 4: sub-clusters of 4, 2, 1, 1 rows get 4, 2, 1
    // and 1 leaves; the first two open as training nodes.
    let root = Node::new(NodeState::Training, 8, 8);
    let q = tree_request(Stage::Split, vec![root], vec![done_problem(4, vec![10.0, 20.0, 30.0, 40.0])], 3);
    let mut w0 = worker(&q, 1, 8, &[0], 4, 4);
    w0.problems = vec![ps(&[], &[2, 1, 1, 0], &[], &[])];
    (w0.keys, w0.vectors, w0.slots) = (vec![5, 1, 7, 2], vec![0.5, 0.1, 0.7, 0.2], vec![0, 0, 1, 1]);
    let mut w1 = worker(&q, 1, 8, &[1], 4, 4);
    w1.problems = vec![ps(&[], &[2, 1, 0, 1], &[], &[])];
    (w1.keys, w1.vectors, w1.slots) = (vec![3, 9, 4], vec![0.3, 0.9, 0.4], vec![0, 0, 1]);
    let next = ok(reduce(&q, &[w0, w1]));
    let tree = next.tree.as_ref().expect("a tree");
    assert_eq!((tree.stage, tree.rounds), (Stage::Lloyd, 3));
    let root = &tree.nodes[0];
    assert_eq!((root.state, root.children.as_slice()), (NodeState::Split, &[1, 2, 3, 4][..]));
    assert_eq!(root.centroids, vec![10.0, 20.0, 30.0, 40.0]);
    let shape: Vec<_> = tree.nodes[1..].iter().map(|n| (n.state, n.quota, n.rows, n.cut)).collect();
    assert_eq!(
        shape,
        vec![
            (NodeState::Training, 4, 4, u64::MAX),
            (NodeState::Training, 2, 2, u64::MAX),
            (NodeState::Leaf, 1, 1, u64::MAX),
            (NodeState::Leaf, 1, 1, u64::MAX),
        ]
    );
    assert_eq!(next.problems.len(), 2);
    assert_eq!((next.problems[0].k, &next.problems[0].centroids), (4, &vec![0.1, 0.3, 0.5, 0.9]));
    assert_eq!((next.problems[1].k, &next.problems[1].centroids), (2, &vec![0.2, 0.4]));
    assert!(next.problems.iter().all(|p| p.base_balance == 0.125 && p.iterations == 0));
    ok(Request::parse(&next.serialize(), "the next request"));
}

#[test]
fn at_the_bottom_every_filled_sub_cluster_is_a_leaf() {
    // Quota 3 within a k of 4: a leaf per filled sub-cluster (3 of them);
    // 297 partitions are still missing, so every leaf of 2 rows or more
    // is reopened to split in two.
    let root = Node::new(NodeState::Training, 3, 8);
    let q = tree_request(Stage::Split, vec![root], vec![done_problem(4, vec![10.0, 20.0, 30.0, 40.0])], 3);
    let mut w = worker(&q, 1, 8, &[0], 8, 8);
    w.problems = vec![ps(&[], &[5, 0, 2, 1], &[], &[])];
    let next = ok(reduce(&q, &[w]));
    let tree = next.tree.as_ref().expect("a tree");
    assert_eq!(tree.stage, Stage::Open);
    assert_eq!((&tree.nodes[0].children, &tree.nodes[0].centroids), (&vec![1, 2, 3], &vec![10.0, 30.0, 40.0]));
    let shape: Vec<_> = tree.nodes[1..].iter().map(|n| (n.state, n.quota, n.rows)).collect();
    assert_eq!(shape, vec![(NodeState::Pending, 2, 5), (NodeState::Pending, 2, 2), (NodeState::Leaf, 1, 1)]);
    assert!(next.problems.is_empty());
    ok(Request::parse(&next.serialize(), "the next request"));
}

#[test]
fn a_node_whose_rows_fall_into_one_funded_sub_cluster_is_stuck() {
    let root = Node::new(NodeState::Training, 4, 8);
    let q = tree_request(Stage::Split, vec![root], vec![done_problem(3, vec![1.0, 2.0, 3.0])], 1);
    let mut w = worker(&q, 1, 8, &[0], 8, 8);
    (w.keys, w.vectors, w.slots) = (vec![1, 2, 3], vec![0.1, 0.2, 0.3], vec![0, 0, 0]);
    w.problems = vec![ps(&[], &[6, 1, 1], &[], &[])];
    // 6, 1, 1 rows for 4 leaves: 3, 0.5, 0.5: 3, then 1 to the first
    // 0.5; the third sub-cluster is unfunded.
    let next = ok(reduce(&q, &[w.clone()]));
    let tree = next.tree.as_ref().expect("a tree");
    assert_eq!(tree.nodes[0].children, vec![1, 2]);
    assert_eq!(tree.nodes[0].centroids, vec![1.0, 2.0]);
    let shape: Vec<_> = tree.nodes[1..].iter().map(|n| (n.state, n.quota, n.rows)).collect();
    assert_eq!(shape, vec![(NodeState::Training, 3, 6), (NodeState::Leaf, 1, 1)]);
    w.problems = vec![ps(&[], &[8, 0, 0], &[], &[])];
    // All rows in one sub-cluster: the node is a stuck leaf, and with
    // nothing else to split the partitions cannot be made.
    let e = refused(reduce(&q, &[w]));
    assert!(e.message.starts_with("cannot train 300 IVF partitions: k-means formed only 1 non-empty clusters"));
}

#[test]
fn lloyd_rounds_step_the_nodes_still_training() {
    let nodes = vec![Node::new(NodeState::Training, 20, 8), Node::new(NodeState::Training, 20, 8)];
    let settled = done_problem(2, vec![7.0, 9.0]);
    let open = Problem::new(2, 1, vec![0.0, 1.0], 0.125);
    let q = tree_request(Stage::Lloyd, nodes, vec![settled.clone(), open], 4);
    let mut w = worker(&q, 1, 8, &[0], 8, 8);
    // The settled problem's statistics are not read.
    w.problems = vec![ps(&[], &[], &[], &[]), ps(&[1.0, 6.0], &[2, 4], &[0.5, 0.5], &[0.5, 0.5])];
    let next = ok(reduce(&q, &[w]));
    let tree = next.tree.as_ref().expect("a tree");
    assert_eq!((tree.stage, tree.rounds), (Stage::Lloyd, 5));
    assert_eq!(format!("{:?}", next.problems[0]), format!("{settled:?}"));
    assert_eq!((next.problems[1].centroids.as_slice(), next.problems[1].iterations), (&[0.5, 1.5][..], 1));
    // Once every node's k-means is done, the sub-clusters are counted.
    let mut q = q.clone();
    q.plan.max_iters = 1;
    let mut w = worker(&q, 1, 8, &[0], 8, 8);
    w.problems = vec![ps(&[], &[], &[], &[]), ps(&[1.0, 6.0], &[2, 4], &[0.5, 0.5], &[0.5, 0.5])];
    let next = ok(reduce(&q, &[w]));
    assert_eq!(next.tree.as_ref().map(|t| t.stage), Some(Stage::Split));
    assert!(next.problems.iter().all(|p| p.done));
}

/// A root split into two leaves, at the Means stage.
fn means_request() -> Request {
    let mut root = Node::new(NodeState::Split, 300, 8);
    (root.children, root.centroids) = (vec![1, 2], vec![1.0, 5.0]);
    let leaves = [Node::new(NodeState::Leaf, 1, 4), Node::new(NodeState::Leaf, 1, 4)];
    tree_request(Stage::Means, [vec![root], leaves.to_vec()].concat(), vec![], 7)
}

#[test]
fn the_leaves_means_are_the_centroids() {
    let q = means_request();
    let mut w0 = worker(&q, 1, 8, &[0], 3, 3);
    w0.problems = vec![ps(&[2.0, 6.0], &[2, 1], &[2.5, 36.0], &[])];
    let mut w1 = worker(&q, 1, 8, &[1], 5, 5);
    w1.problems = vec![ps(&[4.0, 12.0], &[2, 3], &[8.5, 48.5], &[])];
    let next = ok(reduce(&q, &[w0, w1]));
    assert_eq!(next.phase, Phase::Done);
    assert!(next.tree.is_none() && next.problems.is_empty());
    // 6 / 4 and 18 / 4.
    assert_eq!(next.ivf, vec![1.5, 4.5]);
    // Squares less the sums' squares over the counts: (11 - 9) + (84.5 - 81).
    assert_eq!((next.ivf_loss, next.ivf_iterations), (5.5, 7));
}

#[test]
fn a_leaf_without_rows_keeps_its_parents_centroid() {
    let q = means_request();
    let mut w = worker(&q, 1, 8, &[0], 8, 8);
    w.problems = vec![ps(&[6.0, 0.0], &[4, 0], &[11.0, 0.0], &[])];
    let next = ok(reduce(&q, &[w.clone()]));
    assert_eq!(next.ivf, vec![1.5, 5.0]);
    assert_eq!(next.ivf_loss, 2.0);
    w.problems = vec![ps(&[6.0], &[4, 0], &[11.0, 0.0], &[])];
    let e = refused(reduce(&q, &[w]));
    assert_eq!(e.message, "statistics #0 have the wrong shape for the leaves' means");
}

#[test]
fn missing_leaves_are_filled_by_splitting_the_largest() {
    let leaf = |rows: u64| Node::new(NodeState::Leaf, 1, rows);
    let mut root = Node::new(NodeState::Split, 6, 20);
    (root.children, root.centroids) = (vec![1, 2, 3, 4], vec![0.0; 4]);
    let mut stuck = leaf(9);
    stuck.stuck = true;
    let nodes = vec![root, leaf(5), leaf(7), leaf(7), stuck, leaf(1)];
    let base = Tree { stage: Stage::Split, nodes, rounds: 2 };
    // Enough leaves: the means.
    let mut t = base.clone();
    ok(advance(&mut t, 5));
    assert_eq!(t.stage, Stage::Means);
    ok(advance(&mut t, 3));
    assert_eq!(t.stage, Stage::Means);
    // One missing: the first of the two largest splittable (7 rows).
    let mut t = base.clone();
    ok(advance(&mut t, 6));
    assert_eq!((t.stage, t.ids(NodeState::Pending)), (Stage::Open, vec![2]));
    assert_eq!(t.nodes[2].quota, 2);
    // Three missing: 7, 7 and 5 rows; the stuck leaf and the single row stay.
    let mut t = base.clone();
    ok(advance(&mut t, 8));
    assert_eq!(t.ids(NodeState::Pending), vec![1, 2, 3]);
    // More missing than splittable: all of them.
    let mut t = base.clone();
    ok(advance(&mut t, 100));
    assert_eq!(t.ids(NodeState::Pending), vec![1, 2, 3]);
    // A training node: more Lloyd rounds.
    let mut t = base.clone();
    t.nodes[1].state = NodeState::Training;
    ok(advance(&mut t, 100));
    assert_eq!((t.stage, t.ids(NodeState::Pending)), (Stage::Lloyd, vec![]));
}
