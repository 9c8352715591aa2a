//! Links the worker against the libpython that pyo3 resolved (the interpreter
//! named by `PYO3_PYTHON`, else `python3` on PATH), records its runpath so the
//! worker starts without `LD_LIBRARY_PATH`, and records its version so a venv
//! made from another Python is refused with a clear message.
fn main() {
    pyo3_build_config::add_libpython_rpath_link_args();
    let version = pyo3_build_config::get().version();
    println!(
        "cargo:rustc-env=GISCLAW_BUILT_FOR_PYTHON={}.{}",
        version.major, version.minor
    );
    println!("cargo:rerun-if-env-changed=PYO3_PYTHON");
}
