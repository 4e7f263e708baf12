//! The host's budget for the library's threads and temporary files (lance.h
//! "Process budget"): set before the library starts, fixed after.  The
//! runtime (process/runtime.rs) applies it at first use; the temporary
//! directory (process/temp.rs) reads where it goes.

use std::path::PathBuf;
use std::sync::Mutex;

use crate::boundary::error::{not_supported, CResult};

/// What the host allows the library (lance.h `LanceProcessBudget`); zeros
/// and None are the defaults.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    pub compute_threads: usize,
    pub io_threads: usize,
    pub temp_dir: Option<PathBuf>,
}

/// The budget the host set, and whether the library has started (after
/// which the budget is fixed: the pools it sizes exist).
struct Limits {
    budget: Budget,
    started: bool,
}

static LIMITS: Mutex<Limits> =
    Mutex::new(Limits { budget: Budget { compute_threads: 0, io_threads: 0, temp_dir: None }, started: false });

fn limits() -> std::sync::MutexGuard<'static, Limits> {
    LIMITS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sets the budget; refused once the library has started.
pub fn set_budget(budget: Budget) -> CResult<()> {
    let mut limits = limits();
    if limits.started {
        return Err(not_supported(
            "the process budget is set before the library starts its threads, and it has started (a call that \
             reads or writes data, or builds, came first): set the budget first thing in the process",
        ));
    }
    limits.budget = budget;
    Ok(())
}

/// The budget in force (the defaults until the host sets one).
pub fn budget() -> Budget {
    limits().budget.clone()
}

/// Marks the library started (the budget is fixed from here on) and returns
/// the budget in force.
pub fn start() -> Budget {
    let mut limits = limits();
    limits.started = true;
    limits.budget.clone()
}
