//! The process: the host's budget, the process's own temporary directory,
//! the shared async runtime and the runtimes builds run on, batch streams
//! polled from C, and the log bridge to the host's callback.
//!
//! Import rule: this wing imports `boundary` only.  Inside it, modules are
//! listed bottom-up; each imports only modules above it in this list.

pub mod budget;
pub mod temp;
pub mod runtime;
pub mod poll;
pub mod logging;
