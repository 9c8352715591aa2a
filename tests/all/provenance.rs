//! Every run's provenance (run.json and the eval's records): hashes checked
//! against `sha256sum`, the revision against `git`, the sandbox's GDAL
//! against rasterio run by the venv's own Python; and reports that refuse
//! to pool runs made from different data.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{example_suite, gisclaw, read_json, text, venv_python};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `sha256sum FILE`'s digest, as provenance writes it.
fn sha256sum(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    format!("sha256:{}", text.split_whitespace().next().unwrap())
}

#[test]
fn run_json_names_the_task_data_model_and_software_it_was_made_from() {
    let dir = tempfile::tempdir().unwrap();
    let suite = example_suite(dir.path());
    let task = suite.join("heat/task.yaml");
    let out = dir.path().join("run");
    let replay = repo().join("examples/heat_island/replay.jsonl");
    let o = gisclaw(
        &[
            "solve",
            task.to_str().unwrap(),
            "--replay",
            replay.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let p = read_json(&out.join("run.json"))["provenance"].clone();
    assert_eq!(p["task"]["id"], "heat-island");
    assert_eq!(p["task"]["task_file"], sha256sum(&task).as_str(), "{p:#}");
    assert_eq!(p["task"]["data_files"], 2);
    let bytes: u64 = ["stations.csv", "city_boundary.geojson"]
        .iter()
        .map(|f| {
            std::fs::metadata(suite.join("heat/data").join(f))
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(p["task"]["data_bytes"], bytes);
    assert!(p["task"]["data"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(p["model"]["replay"], true);
    // The software: this checkout's commit, the venv's stamp, the GDAL
    // the sandbox's rasterio carries.
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(repo())
        .output()
        .unwrap();
    if head.status.success() {
        assert_eq!(
            p["software"]["git_revision"],
            String::from_utf8_lossy(&head.stdout).trim(),
            "{p:#}"
        );
    }
    let venv = gisclaw::paths::default_venv();
    let stamp = std::fs::read_to_string(venv.join(".gisclaw-stamp")).unwrap();
    assert_eq!(
        p["software"]["venv_lock"],
        format!("sha256:{}", stamp.split_whitespace().next().unwrap()).as_str()
    );
    let rasterio_gdal = venv_python(["-c", "import rasterio; print(rasterio.__gdal_version__)"]);
    assert_eq!(
        p["software"]["gdal"]["rasterio"],
        rasterio_gdal.trim(),
        "{p:#}"
    );
    assert!(p["software"]["gdal"]["host"]
        .as_str()
        .unwrap()
        .starts_with('3'));
    assert_eq!(
        p["software"]["python"].as_str().unwrap().split('.').next(),
        Some("3")
    );
}

fn eval(suite: &Path, rec: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "eval",
        "--suite",
        suite.to_str().unwrap(),
        "--replay",
        rec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--runs",
        "1",
    ];
    args.extend_from_slice(extra);
    gisclaw(&args, &[])
}

#[test]
fn runs_made_from_different_data_are_not_pooled_and_the_report_says_what_differs() {
    let dir = tempfile::tempdir().unwrap();
    let suite = example_suite(dir.path());
    let rec = dir.path().join("rec");
    std::fs::create_dir(&rec).unwrap();
    std::fs::copy(
        repo().join("examples/heat_island/replay.jsonl"),
        rec.join("heat-island.jsonl"),
    )
    .unwrap();
    let a = dir.path().join("a");
    let o = eval(&suite, &rec, &a, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let record = read_json(&a.join("records/heat-island.single.1.json"));
    let first_data = record["provenance"]["task"]["data"].clone();
    assert!(first_data.as_str().unwrap().starts_with("sha256:"));
    let manifest = read_json(&a.join("eval.json"));
    assert_eq!(
        manifest["provenance"]["tasks"]["heat-island"]["task_file"],
        sha256sum(&suite.join("heat/task.yaml")).as_str()
    );
    assert_eq!(manifest["provenance"]["model"]["replay"], true);

    // One station's temperature changes by a tenth of a degree.
    let csv = suite.join("heat/data/stations.csv");
    let changed = std::fs::read_to_string(&csv)
        .unwrap()
        .replacen("24.02", "24.12", 1);
    std::fs::write(&csv, changed).unwrap();

    // Continuing the first eval over the changed data is refused.
    let o = eval(&suite, &rec, &a, &["--resume"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(
            "this eval's runs were made from other inputs (task heat-island: data sha256:"
        ),
        "{}",
        text(&o)
    );

    let b = dir.path().join("b");
    let o = eval(&suite, &rec, &b, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let record = read_json(&b.join("records/heat-island.single.1.json"));
    assert_ne!(record["provenance"]["task"]["data"], first_data);

    let report = dir.path().join("report");
    let args = [
        "eval",
        "report",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        report.to_str().unwrap(),
    ];
    let o = gisclaw(&args, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let said = text(&o);
    assert!(said.contains("cannot be pooled"), "{said}");
    assert!(
        said.contains(&format!(
            "{} heat-island single run 1 (vs {} heat-island single run 1): task heat-island: data sha256:",
            b.display(),
            a.display()
        )),
        "{said}"
    );
    assert!(!report.join("report.md").exists());
    // Told to, it pools them; the two folders alone each report.
    let mut mixed = args.to_vec();
    mixed.push("--mixed-provenance");
    let o = gisclaw(&mixed, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(report.join("report.md").is_file());
    for one in [&a, &b] {
        let o = gisclaw(&["eval", "report", one.to_str().unwrap()], &[]);
        assert!(o.status.success(), "{}", text(&o));
    }
}
