//! The CPU features this library was compiled to assume (rustc's
//! `-C target-cpu`, CMake's `LANCE_C_TARGET_CPU`) against those of the CPU
//! it runs on.  The check itself is C (`cpu_check.c`, compiled for the
//! x86-64 baseline by build.rs): Rust code compiled for x86-64-v3 may hold
//! AVX instructions anywhere, even in the check.  Its constructor aborts
//! the process at load, with a message, on a CPU without an assumed
//! feature.  `guard` asks `refusal()` too: that reference is what links
//! the C object, and with it the constructor, out of the static library
//! into a program (test_cpu_level_old_cpu checks both links); where the
//! constructor ran, it never finds anything missing.

/// Why this library cannot run on this CPU; None when it can.
#[cfg(target_arch = "x86_64")]
pub fn refusal() -> Option<&'static str> {
    extern "C" {
        fn lance_c_cpu_refusal() -> *const std::os::raw::c_char;
    }
    // SAFETY: the C side returns NULL or a pointer to a static,
    // NUL-terminated ASCII buffer written once, at load.
    let text = unsafe { lance_c_cpu_refusal() };
    if text.is_null() {
        return None;
    }
    unsafe { std::ffi::CStr::from_ptr(text) }.to_str().ok()
}

#[cfg(not(target_arch = "x86_64"))]
pub fn refusal() -> Option<&'static str> {
    None
}
