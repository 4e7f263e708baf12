//! lance-c: a C API for the Lance columnar format.
//!
//! `api/` holds the C surface, one module per section of lance.h
//! (docs/architecture.md maps them).  Below it, five wings hold what those
//! sections share and export nothing, listed here bottom-up: `boundary` (the
//! C boundary), `process` (budget, temporary files, runtimes), `store` (the
//! dataset handle and the object-store wrappers), `index` (the index
//! machinery) and `scan` (the scanner).  Each wing's `mod.rs` writes which
//! wings it imports; imports run from `api` down to the wings, never back
//! up, and never between two `api` modules.  Every exported function runs inside
//! `boundary::error::guard`, so no panic or Rust error crosses into C.

mod api;
mod boundary;
mod process;
mod store;
mod index;
mod scan;

/// The release of the Lance core this library is pinned to.
pub const LANCE_CORE_VERSION: &str = "14.0.2";
