//! The index machinery: the snapshot's index catalog, segment metadata
//! bytes, this library's sealed records, the shared vector model (and its
//! read-back from a committed index), the distributed training, build
//! control (progress and cancel), the one build runner, and the checks a
//! commit of segments makes.
//!
//! Import rule: this wing imports `boundary`, `process` and `store` only.
//! Inside it, modules are listed bottom-up; each imports only modules above
//! it in this list.

pub mod catalog;
pub mod planning;
pub mod codec;
pub mod bytes;
pub mod vector_model;
pub mod committed_model;
pub mod progress;
pub mod training;
pub mod injection;
pub mod build;
pub mod commit;
pub mod maintenance;
