//! The helper floor: everything the C sections share, and nothing exported.
//! Modules are listed bottom-up; each imports only modules above it here.

pub mod cpu;
pub mod error;
pub mod ffi;
pub mod temp;
pub mod runtime;
pub mod poll;
pub mod arrow;
pub mod params;
pub mod store_wrap;
pub mod data_cache;
pub mod store_gate;
pub mod uploads;
pub mod handle;
pub mod catalog;
pub mod codec;
pub mod bytes;
pub mod vector_model;
pub mod training;
pub mod progress;
pub mod build;
pub mod scanner;
