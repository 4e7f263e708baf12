// Gives the shared library a SONAME, so programs linked against it record
// "liblance_c.so" (found through their RUNPATH or the loader's path), not
// the absolute path of the file they were linked with.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,liblance_c.so");
    println!("cargo:rerun-if-changed=build.rs");
}
