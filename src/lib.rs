//! lance-c: a C API for the Lance columnar format.
//!
//! `api/` holds the C surface, one module per section of lance.h
//! (docs/architecture.md maps them); `floor/` holds what those sections share and exports
//! nothing.  Imports run from `api` down to `floor`, never back up, and
//! never between two `api` modules.  Every exported function runs inside
//! `floor::error::guard`, so no panic or Rust error crosses into C.

mod api;
mod floor;

/// The release of the Lance core this library is pinned to.
pub const LANCE_CORE_VERSION: &str = "14.0.2";
