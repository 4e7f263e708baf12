//! The store: the dataset handle, the object-store wrappers (the session
//! data cache, the gate in front of a build's writes), and incomplete
//! multipart uploads.
//!
//! Import rule: this wing imports `boundary` and `process` only.  Inside it,
//! modules are listed bottom-up; each imports only modules above it in this
//! list.

pub mod store_wrap;
pub mod data_cache;
pub mod store_gate;
pub mod uploads;
pub mod handle;
