//! lance.h section "Process budget": the host's bound on the library's
//! threads and temporary space, applied at first use (process/runtime.rs).

use std::ffi::c_char;
use std::path::PathBuf;

use crate::boundary::error::{invalid, status};
use crate::boundary::ffi::{handle_ref, optional_str};
use crate::process::budget::{set_budget, Budget};

/// The most threads one pool may be given: a bound, not a target (tokio
/// starts every worker thread of a pool at once).
const MAX_THREADS: u32 = 4096;

#[repr(C)]
pub struct LanceProcessBudget {
    pub compute_threads: u32,
    pub io_threads: u32,
    pub temp_dir: *const c_char,
}
crate::c_layout!(LanceProcessBudget, 16; compute_threads @ 0, io_threads @ 4, temp_dir @ 8);

fn threads(value: u32, name: &str) -> crate::boundary::error::CResult<usize> {
    if value > MAX_THREADS {
        return Err(invalid(format!("budget->{name} is {value}; at most {MAX_THREADS} (0 = the default)")));
    }
    Ok(value as usize)
}

#[no_mangle]
pub unsafe extern "C" fn lance_process_budget_set(budget: *const LanceProcessBudget) -> i32 {
    status(|| {
        let b = handle_ref(budget, "budget")?;
        let temp_dir = match optional_str(b.temp_dir, "budget->temp_dir")? {
            None => None,
            Some(dir) => {
                let path = PathBuf::from(dir);
                if !path.is_absolute() || !path.is_dir() {
                    return Err(invalid(format!(
                        "budget->temp_dir '{dir}' is not an absolute path to an existing directory"
                    )));
                }
                Some(path)
            }
        };
        set_budget(Budget {
            compute_threads: threads(b.compute_threads, "compute_threads")?,
            io_threads: threads(b.io_threads, "io_threads")?,
            temp_dir,
        })
    })
}
