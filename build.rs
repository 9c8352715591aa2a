//! Records the git revision gisclaw is built from (`GISCLAW_GIT_REVISION`,
//! shown in every run's provenance): the commit `HEAD` names, or the
//! variable of the same name when the build sets it (a source tarball), or
//! `unknown`. The build reruns when `HEAD` or the branch it names moves.
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=GISCLAW_GIT_REVISION");
    let revision = std::env::var("GISCLAW_GIT_REVISION")
        .ok()
        .filter(|r| !r.trim().is_empty())
        .or_else(git_head)
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=GISCLAW_GIT_REVISION={revision}");
    // HEAD is the worktree's; branches and packed refs are in the common
    // folder (the same one outside a linked worktree).
    if let (Some(git_dir), Some(common)) = (
        git(&["rev-parse", "--git-dir"]),
        git(&["rev-parse", "--git-common-dir"]),
    ) {
        let (git_dir, common) = (Path::new(&git_dir), Path::new(&common));
        for file in [
            git_dir.join("HEAD"),
            common.join("packed-refs"),
            common.join(git(&["symbolic-ref", "-q", "HEAD"]).unwrap_or_default()),
        ] {
            // A path that does not exist would rerun the build every time.
            if file.is_file() {
                println!("cargo:rerun-if-changed={}", file.display());
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}

fn git_head() -> Option<String> {
    git(&["rev-parse", "HEAD"])
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}
