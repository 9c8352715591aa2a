//! What the benches that start sandboxes share.

use std::path::Path;

/// Stops when the worker binary is older than its sources: `cargo bench`
/// builds the bench and the `gisclaw` library, not the worker (whose Python
/// runtime is compiled in), so a stale worker would be measured without a
/// word. `make bench` builds it first.
pub fn refuse_a_stale_worker() {
    let worker = gisclaw::sandbox::SandboxConfig::default().worker;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let newest = ["sandbox/python", "sandbox/src", "sandbox/protocol/src"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).into_iter().flatten())
        .filter_map(|entry| modified(&entry.ok()?.path()))
        .max();
    if let (Some(built), Some(newest)) = (modified(&worker), newest) {
        assert!(
            built >= newest,
            "{} is older than its sources: run `cargo build --release -p gisclaw-worker` (make bench does)",
            worker.display()
        );
    }
}
