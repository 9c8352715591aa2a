//! The worker must link libpython and never GDAL: the Python wheels bundle
//! their own GDAL/GEOS/PROJ, and a second GDAL in the same process corrupts
//! their calls (measured; see the project's design notes).

use std::process::Command;

fn ldd() -> String {
    let worker = env!("CARGO_BIN_EXE_gisclaw-worker");
    let out = Command::new("ldd").arg(worker).output().expect("ldd runs");
    assert!(
        out.status.success(),
        "ldd failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn worker_links_libpython_but_not_gdal_geos_or_proj() {
    let libs = ldd();
    assert!(libs.contains("libpython3"), "libpython not linked:\n{libs}");
    assert!(!libs.contains("not found"), "unresolved libraries:\n{libs}");
    for forbidden in ["libgdal", "libgeos", "libproj"] {
        assert!(!libs.contains(forbidden), "{forbidden} linked:\n{libs}");
    }
}
