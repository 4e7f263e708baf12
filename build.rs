// Link settings of the shared library, and on x86-64 the load-time CPU check.
//
// SONAME: the name of the file cargo writes, liblance_c.so, so that a program
// linked against cargo's output (`-L target/release -llance_c`, or its path)
// records that name and runs with that directory on its RUNPATH or
// LD_LIBRARY_PATH.  The versioned SONAME (liblance_c.so.0.<minor> while the
// version is 0.x, when a minor release may break the ABI) belongs to the
// shared library the build ships, which scripts/link_shared.sh links from
// the archive under its versioned file name; cargo writes no such file, and
// a program that recorded that name could not start against cargo's
// (tests/link/check_link.sh runs one).
//
// Exports: rustc's version script exports every #[no_mangle] function of
// every crate, and a dependency (crc-fast, through object_store) has C
// functions of its own.  GNU ld refuses a second version script next to
// rustc's anonymous one.  --exclude-libs hides every symbol that comes from
// an archive (std, the C libraries); with LTO the crates' code is in this
// crate's own objects, out of its reach, so cargo's liblance_c.so also
// exports crc-fast's functions.  The shared library the build ships is
// linked from the symbol-hidden archive with a version script of the
// header's functions instead (scripts/link_shared.sh), and
// scripts/check_exports.sh checks that one.
//
// The CPU check (src/boundary/cpu_check.c, see cpu.rs) is compiled for the
// x86-64 baseline, told which features rustc may use.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/boundary/cpu_check.c");
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    if env("CARGO_CFG_TARGET_FAMILY").split(',').any(|f| f == "unix") && env("CARGO_CFG_TARGET_VENDOR") != "apple" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,liblance_c.so");
        println!("cargo:rustc-cdylib-link-arg=-Wl,--exclude-libs,ALL");
    }
    if env("CARGO_CFG_TARGET_ARCH") == "x86_64" {
        let features = env("CARGO_CFG_TARGET_FEATURE");
        let mut build = cc::Build::new();
        build.file("src/boundary/cpu_check.c").inherit_rustflags(false).flag("-march=x86-64").flag("-mtune=generic");
        for feature in features.split(',').filter(|f| !f.is_empty()) {
            let name: String = feature.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
            build.define(&format!("LANCE_C_ASSUMES_{name}"), "1");
        }
        build.compile("lance_c_cpu_check");
    }
}
