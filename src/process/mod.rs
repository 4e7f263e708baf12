//! The process: the host's budget, the process's own temporary directory,
//! the shared async runtime and the runtimes builds run on, and batch
//! streams polled from C.
//!
//! Import rule: this wing imports `boundary` only.  Inside it, modules are
//! listed bottom-up; each imports only modules above it in this list.

pub mod budget;
pub mod temp;
pub mod runtime;
pub mod poll;
