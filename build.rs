// Gives the shared library a SONAME, so programs linked against it record
// "liblance_c.so" (found through their RUNPATH or the loader's path), not
// the absolute path of the file they were linked with.  On x86-64 it also
// compiles the load-time CPU check (src/floor/cpu_check.c, see cpu.rs) for
// the x86-64 baseline, told which features rustc may use.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,liblance_c.so");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/floor/cpu_check.c");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64") {
        let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
        let mut build = cc::Build::new();
        build.file("src/floor/cpu_check.c").inherit_rustflags(false).flag("-march=x86-64").flag("-mtune=generic");
        for feature in features.split(',').filter(|f| !f.is_empty()) {
            let name: String = feature.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
            build.define(&format!("LANCE_C_ASSUMES_{name}"), "1");
        }
        build.compile("lance_c_cpu_check");
    }
}
