//! Distributed training of a shared vector model: the request a coordinator
//! sends every worker each round, the statistics a worker returns, both as
//! sealed bytes (index/bytes.rs), a worker's pass over its share of the
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
//! sample one-node training draws, from the training's seed (so a worker
//! replaced mid-training draws the same rows), and gives every
//! sampled vector a key (a SHA-256 of the seed and the vector's bytes).  A
//! phase trains on the vectors whose key falls below a threshold that keeps
//! its sample size, and starts from the vectors of the smallest keys: so when
//! the workers together hold every row (a dataset no larger than the sample),
//! the sample and the initial centroids do not depend on how the fragments
//! are split among workers, and statistics of a split sample reduce to the
//! same centroids as the whole, up to float summation order.
//!
//! Above 256 partitions the IVF centroids are the core's hierarchical
//! k-means (`train_hierarchical_proportional`), trained one tree level at a
//! time: a request carries the tree; the rows go down it on the workers;
//! every node of the level runs its k-means in the same rounds (an Open
//! round for its candidates, Lloyd rounds, a Split round counting its
//! sub-clusters, which share its leaves by their rows), and a Means round
//! takes every leaf's mean.
//!
//! The records and their byte forms are training/request.rs, the worker's
//! side training/worker.rs, the coordinator's reduction training/reduce.rs,
//! and a whole training in one process (a seeded one-node training)
//! training/local.rs.

mod reduce;
mod request;
mod worker;
mod local;

pub use local::train_alone;
pub use reduce::reduce;
pub use request::{Phase, Plan, Problem, ProblemStats, Request, Stats};
pub use worker::Worker;

use request::mismatch;
