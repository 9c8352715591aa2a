//! gisclaw wherever it is installed (issue 67): a venv, a data folder and
//! an output folder each reached through a symlink, as home folders on
//! clusters and container volumes are. The sandbox sees folders by the
//! paths they are bound at, so every path gisclaw hands it is resolved
//! once to its real path.

use std::path::Path;

use gisclaw::sandbox::{CellStatus, SandboxConfig, Session, SessionDirs, Zygote};

use crate::common;

/// A symlink at `link` to `target`.
fn link(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// The files of `from` (one level) copied into a new folder `to`.
fn copy_files(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        if entry.path().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn a_venv_reached_through_a_symlink_imports_what_the_zygote_did_not_preload() {
    let links = tempfile::tempdir().unwrap();
    let venv = links.path().join("venv");
    link(
        &gisclaw::paths::default_venv().canonicalize().unwrap(),
        &venv,
    );
    let config = SandboxConfig {
        venv: venv.clone(),
        ..SandboxConfig::default()
    };
    let zygote = Zygote::start(config).expect("a zygote on the linked venv");
    assert_eq!(zygote.config().venv, venv.canonicalize().unwrap());
    let work = common::workdir();
    let work_link = links.path().join("work");
    link(work.path(), &work_link);
    let mut session = Session::open_in(
        &zygote,
        &SessionDirs::work(&work_link),
        zygote.config().clone(),
    )
    .unwrap();
    let outcome = session
        .execute(
            "import sys, os\n\
             import pandas.io.formats.string, pyproj.transformer, rasterio.warp, geopandas\n\
             import geopandas.tools\n\
             print('imported', all(os.path.realpath(p) == p for p in sys.path if p and os.path.isabs(p) and os.path.exists(p)))\n",
        )
        .unwrap();
    assert_eq!(outcome.status, CellStatus::Ok, "{:?}", outcome.result);
    assert!(
        outcome.result.stdout.contains("imported True"),
        "{:?}",
        outcome.result
    );
    // The session still works after the imports.
    let again = session.execute("print(6 * 7)").unwrap();
    assert!(again.result.stdout.contains("42"), "{:?}", again.result);
}

#[test]
fn the_example_solves_from_a_linked_venv_with_linked_data_and_out_folders() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    let links = dir.path().join("links");
    std::fs::create_dir_all(real.join("out")).unwrap();
    std::fs::create_dir_all(&links).unwrap();
    let example = common::repo().join("examples/heat_island");
    // The data through a link; the task names the link.
    copy_files(&example.join("data"), &real.join("data"));
    link(&real.join("data"), &links.join("data"));
    std::fs::copy(example.join("task.yaml"), links.join("task.yaml")).unwrap();
    link(&real.join("out"), &links.join("out"));
    let venv = links.join("venv");
    link(
        &gisclaw::paths::default_venv().canonicalize().unwrap(),
        &venv,
    );
    let out = common::solve_replay(
        &links.join("task.yaml"),
        &example.join("replay.jsonl"),
        &links.join("out/run"),
        &[],
        &[("GISCLAW_VENV", venv.to_str().unwrap())],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(real.join("out/run/run.json")).unwrap())
            .unwrap();
    assert_eq!(run["status"], "finished", "{run}");
    for output in ["temperature.tif", "temperature_map.png"] {
        assert!(
            real.join("out/run/pred_results").join(output).is_file(),
            "{output} missing: {stderr}"
        );
    }
}

#[test]
fn gisclaw_finds_its_install_from_the_record_with_a_reduced_environment() {
    // No XDG_* and a HOME without gisclaw in it: what `make setup`
    // recorded (beside the binary, or in the default config folder) names
    // the venv, and doctor says so.
    let home = tempfile::tempdir().unwrap();
    let record = home.path().join(".config/gisclaw/install.toml");
    std::fs::create_dir_all(record.parent().unwrap()).unwrap();
    let venv = gisclaw::paths::default_venv().canonicalize().unwrap();
    std::fs::write(&record, format!("venv = {:?}\n", venv.to_str().unwrap())).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gisclaw"))
        .arg("doctor")
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("python env"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.trim_start().starts_with("ok"), "{text}");
    assert!(line.contains("(recorded in "), "{line}");
    assert!(line.contains(venv.to_str().unwrap()), "{line}");
}
