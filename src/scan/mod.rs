//! The scan: the scanner's settings, checked as a whole, and the scans and
//! streams they prepare.
//!
//! Import rule: this wing imports `boundary` and `process` only.

pub mod scanner;
