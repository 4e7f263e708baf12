//! lance.h section "Logging": the host's callback for the Lance core's
//! records, checked and handed to the log bridge (process/logging.rs).

use std::ffi::c_void;

use crate::boundary::error::{guard_anywhere, invalid};
use crate::process::logging::{set_callback, LogFn};

/// `LanceLogLevel` in lance.h: OFF = 0, then ERROR = 1 to TRACE = 5, the
/// `log` crate's own numbering.
const LEVEL_TRACE: i32 = 5;

#[no_mangle]
pub extern "C" fn lance_set_log_callback(max_level: i32, callback: Option<LogFn>, ctx: *mut c_void) -> i32 {
    // Callable from inside the log callback (or any other): it runs no core
    // code and holds no lock while it waits.
    guard_anywhere(-1, || {
        if !(0..=LEVEL_TRACE).contains(&max_level) {
            return Err(invalid(format!(
                "max_level = {max_level} is not a LanceLogLevel (LANCE_LOG_OFF = 0 to LANCE_LOG_TRACE = 5)"
            )));
        }
        set_callback(max_level, callback, ctx)?;
        Ok(0)
    })
}
