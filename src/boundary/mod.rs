//! The C boundary: what every exported call crosses.  Error codes and the
//! guard each call runs in, C strings, lists and handles, the Arrow C Data
//! Interface, `lance.h`'s enum values and defaults, the training options,
//! and the load-time CPU check.
//!
//! Import rule: this wing imports nothing of the crate outside itself (it
//! sits under every other wing).  Inside it, modules are listed bottom-up;
//! each imports only modules above it in this list.

pub mod cpu;
pub mod error;
pub mod ffi;
pub mod arrow;
pub mod params;
pub mod training_options;
