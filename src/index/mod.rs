//! The index machinery: the index types (one table) and their build
//! parameters, the snapshot's index catalog, segment metadata
//! bytes, this library's sealed records, the shared vector model (and its
//! read-back from a committed index, and the retraining advice it
//! gives the maintenance plan), the distributed training, the trainers of
//! a shared model, build control (progress and cancel, and a stage of this
//! library's own around core work), the one build runner, and the checks a
//! commit of segments makes.
//!
//! Import rule: this wing imports `boundary`, `process` and `store` only.
//! Inside it, modules are listed bottom-up; each imports only modules above
//! it in this list.

pub mod kinds;
pub mod build_params;
pub mod catalog;
pub mod planning;
pub mod codec;
pub mod bytes;
pub mod vector_model;
pub mod committed_model;
pub mod drift;
pub mod progress;
pub mod training;
pub mod trainers;
pub mod injection;
pub mod build;
pub mod commit;
pub mod maintenance;
