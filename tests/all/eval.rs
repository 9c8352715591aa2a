//! `gisclaw eval` end to end with recorded sessions through the real loop
//! and sandbox: the report's numbers, a resume after SIGKILL, bad input.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{geoanalyst, gisclaw, gold, read_json, write_jsonl};
use gisclaw::bench::verify::{gold_dual_messages, gold_messages};
use gisclaw::eval::metrics::api::{self, OpTable};
use gisclaw::eval::metrics::process;
use gisclaw::llm::{Message, ToolCall};
use serde_json::{json, Value};

fn cell(code: &str) -> Message {
    Message {
        content: Some("a cell".into()),
        tool_calls: vec![ToolCall::function(
            "c",
            "execute_python",
            json!({ "code": code }).to_string(),
        )],
        ..Message::default()
    }
}

fn finish() -> Message {
    Message {
        content: Some("done".into()),
        tool_calls: vec![ToolCall::function(
            "f",
            "finish",
            json!({ "summary": "done" }).to_string(),
        )],
        ..Message::default()
    }
}

/// T03's gold without its last cell (the map): the PNG is never drawn.
fn gold_t03_without_map() -> String {
    let source = gold("T03");
    source[..source.find("# %% map").expect("T03's gold has a map cell")].to_string()
}

fn run_ok(args: &[&str]) -> String {
    let out = gisclaw(args, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{args:?}\n{stderr}");
    stderr
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn an_eval_over_three_tasks_reports_numbers_that_follow_from_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("recordings");
    std::fs::create_dir(&rec).unwrap();
    // T01: the gold, both architectures (success).
    write_jsonl(
        &rec.join("T01.single.jsonl"),
        &gold_messages("T01", &gold("T01")),
    );
    write_jsonl(
        &rec.join("T01.dual.jsonl"),
        &gold_dual_messages("T01", &gold("T01")),
    );
    // T02: a blocked import and a syntax error, then a finish that is refused.
    write_jsonl(
        &rec.join("T02.jsonl"),
        &[cell("import arcpy"), cell("x = (1,"), finish()],
    );
    // T03: gold for SA; DA leaves out the map.
    write_jsonl(
        &rec.join("T03.single.jsonl"),
        &gold_messages("T03", &gold("T03")),
    );
    write_jsonl(
        &rec.join("T03.dual.jsonl"),
        &gold_dual_messages("T03", &gold_t03_without_map()),
    );
    let out = dir.path().join("eval");
    let suite = geoanalyst();
    run_ok(&[
        "eval",
        "--suite",
        suite.to_str().unwrap(),
        "--tasks",
        "1-3",
        "--arch",
        "both",
        "--runs",
        "1",
        "--replay",
        rec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-j",
        "2",
    ]);
    let results = read_json(&out.join("results.json"));
    let cells = results["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    let (sa, da) = (&cells[0], &cells[1]);
    assert_eq!(
        (sa["arch"].as_str(), da["arch"].as_str()),
        (Some("single"), Some("dual"))
    );
    assert!(
        close(sa["success_rate"].as_f64().unwrap(), 2.0 / 3.0),
        "{sa}"
    );
    assert!(
        close(da["success_rate"].as_f64().unwrap(), 1.0 / 3.0),
        "{da}"
    );

    let runs = results["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6);
    let run = |task: &str, arch: &str| {
        runs.iter()
            .find(|r| r["task"] == task && r["arch"] == arch)
            .unwrap()
            .clone()
    };
    // T02 SA: failed with two failing cells, a blocked import then a syntax error.
    let t02 = run("T02", "single");
    assert_eq!(t02["success"], false);
    assert_eq!(
        t02["cell_errors"],
        json!({ "blocked_import": 1, "syntax": 1 })
    );
    assert_eq!(t02["run_error"], "syntax");
    assert_eq!(
        (t02["q_out"].as_f64(), t02["code"]["api"]["f1"].as_f64()),
        (Some(0.0), Some(0.0))
    );
    // T02 DA: the planner never got a plan; no cell ran.
    let t02d = run("T02", "dual");
    assert_eq!(
        (t02d["cells"].as_u64(), t02d["run_error"].as_str()),
        (Some(0), Some("other"))
    );
    // T03 DA: the GeoJSON matches the gold's, the map is missing → Q_out 1/2.
    let t03d = run("T03", "dual");
    assert_eq!(t03d["success"], false);
    assert!(close(t03d["q_out"].as_f64().unwrap(), 0.5), "{t03d}");
    let outputs = t03d["outputs"].as_array().unwrap();
    assert_eq!(outputs[0]["note"], "missing");
    assert!(close(outputs[1]["score"].as_f64().unwrap(), 1.0), "{t03d}");
    // Its API F1 follows from the operations of the code it ran.
    let table = OpTable::built_in().unwrap();
    let expected_f1 = api::set_score(
        &table.operations(&gold("T03")),
        &table.operations(&gold_t03_without_map()),
    )
    .f1;
    assert!(close(
        t03d["code"]["api"]["f1"].as_f64().unwrap(),
        expected_f1
    ));
    assert!(
        expected_f1 < 1.0,
        "dropping the map drops plotting operations"
    );
    // CodeBLEU likewise (over its cells, one after another), and no
    // successful code scores 0.
    let ran: String = gisclaw::agent::solution::split_cells(&gold_t03_without_map())
        .iter()
        .map(|c| format!("{c}\n"))
        .collect();
    // The gold without its cell markers, as the scores compare it.
    let reference: String = gold("T03")
        .lines()
        .filter(|l| !l.trim_start().starts_with("# %%"))
        .map(|l| format!("{l}\n"))
        .collect();
    let expected_cb = gisclaw::eval::metrics::codebleu::codebleu(&reference, &ran).codebleu;
    assert!(
        close(
            t03d["code"]["codebleu"]["codebleu"].as_f64().unwrap(),
            expected_cb
        ),
        "{t03d}"
    );
    assert!(expected_cb > 0.5 && expected_cb < 1.0, "{expected_cb}");
    assert_eq!(t02["code"]["codebleu"]["codebleu"].as_f64(), Some(0.0));
    // C_emb (L2): the cosine of the run's cleaned log and the gold
    // reference, as recomputed here from the files; the gold replays are
    // far closer to the gold than T02's two broken cells.
    assert_eq!(results["c_emb_missing"], 0);
    let embedder = gisclaw::embed::Embedder::load_default()
        .expect("the embedding model is installed (make setup)");
    let c_emb = |task: &str, arch: &str| {
        let workflow = gisclaw::task::Task::load(&suite.join(task).join("task.yaml"))
            .unwrap()
            .task
            .workflow;
        let gold_record = out.join("gold").join(task).join("transcript.jsonl");
        common::records::checked(&gold_record);
        let reference = process::gold_reference(workflow.as_deref(), &gold_record).unwrap();
        let log = process::cleaned_log(
            &out.join("runs")
                .join(task)
                .join(format!("{arch}-1"))
                .join("transcript.jsonl"),
            true,
        )
        .unwrap();
        gisclaw::embed::cosine(
            &embedder.embed_document(&log).unwrap(),
            &embedder.embed_document(&reference).unwrap(),
        )
    };
    for r in runs {
        let expected = c_emb(r["task"].as_str().unwrap(), r["arch"].as_str().unwrap());
        assert!(
            (r["c_emb"].as_f64().unwrap() - expected).abs() < 1e-6,
            "{r} vs {expected}"
        );
    }
    let (c01, c02) = (
        run("T01", "single")["c_emb"].as_f64().unwrap(),
        t02["c_emb"].as_f64().unwrap(),
    );
    assert!(c01 > 0.7 && c01 > c02 + 0.2, "gold {c01}, broken {c02}");
    // Composites: 0.4·succ + 0.3·Q + 0.15·F + 0.15·C.
    let composite = |r: &Value| {
        0.4 * f64::from(u8::from(r["success"] == true))
            + 0.3 * r["q_out"].as_f64().unwrap()
            + 0.15 * r["code"]["api"]["f1"].as_f64().unwrap()
            + 0.15 * r["c_emb"].as_f64().unwrap()
    };
    for r in runs {
        assert!(close(r["composite"].as_f64().unwrap(), composite(r)), "{r}");
    }
    let s03d = composite(&run("T03", "dual"));
    // The cell's composite is the mean of its runs; Q_out counts successes only.
    let mean = |arch: &str| {
        ["T01", "T02", "T03"]
            .iter()
            .map(|t| composite(&run(t, arch)))
            .sum::<f64>()
            / 3.0
    };
    assert!(
        close(sa["composite"].as_f64().unwrap(), mean("single")),
        "{sa}"
    );
    assert!(
        close(da["composite"].as_f64().unwrap(), mean("dual")),
        "{da}"
    );
    assert!(close(da["q_out"].as_f64().unwrap(), 1.0), "{da}");
    // Paired test over (task, run): Cliff's δ of the three SA composites vs
    // the three DA composites, counted pair by pair.
    let cmp = &results["comparisons"][0];
    assert_eq!(cmp["n"], 3);
    let (sa3, da3): (Vec<f64>, Vec<f64>) = ["T01", "T02", "T03"]
        .iter()
        .map(|t| (composite(&run(t, "single")), composite(&run(t, "dual"))))
        .unzip();
    let dominance: i32 = sa3
        .iter()
        .flat_map(|a| da3.iter().map(move |b| (a > b) as i32 - (a < b) as i32))
        .sum();
    assert!(
        close(
            cmp["cliffs_delta"].as_f64().unwrap(),
            f64::from(dominance) / 9.0
        ),
        "{cmp}"
    );
    // Cohen's d of the paired differences (d_z = mean / SD with n − 1).
    let diffs: Vec<f64> = sa3.iter().zip(&da3).map(|(a, b)| a - b).collect();
    let mean_diff = diffs.iter().sum::<f64>() / 3.0;
    let sd = (diffs.iter().map(|d| (d - mean_diff).powi(2)).sum::<f64>() / 2.0).sqrt();
    assert!(
        close(cmp["mean_difference"].as_f64().unwrap(), mean_diff),
        "{cmp}"
    );
    if sd > 0.0 {
        assert!(
            close(cmp["cohens_d"].as_f64().unwrap(), mean_diff / sd),
            "{cmp}"
        );
    } else {
        assert!(cmp["cohens_d"].is_null(), "{cmp}");
    }
    assert!(
        s03d < composite(&run("T03", "single")),
        "the DA run without its map scores lower"
    );
    // Error types per cell: SA has one syntax-type failed run; DA one "other" and one "other" (missing map, no failing cell).
    assert_eq!(sa["run_errors"], json!({ "syntax": 1 }));
    assert_eq!(da["run_errors"], json!({ "other": 2 }));
    // In GeoAgent's four types both are general code errors.
    let md_types = std::fs::read_to_string(out.join("report.md")).unwrap();
    for (cell, n) in [(sa, 1), (da, 2)] {
        let row = format!("| {} | 0 | 0 | – | {n} |", cell["label"].as_str().unwrap());
        assert!(md_types.contains(&row), "{row}\n{md_types}");
    }
    // CSV: a header and one row per run; the markdown carries the numbers.
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 7);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("| gold replay") || md.contains("recorded sessions"),
        "{md}"
    );
    assert!(md.contains("0.667") && md.contains("0.333"), "{md}");
    assert!(
        !md.contains("C_emb is missing") && md.contains("all-MiniLM-L6-v2"),
        "{md}"
    );
    assert!(
        md.contains("| CodeBLEU |") && csv.lines().next().unwrap().contains(",codebleu,"),
        "{md}"
    );
    // `eval report` re-renders the same numbers from the records alone.
    std::fs::remove_file(out.join("results.json")).unwrap();
    run_ok(&[
        "eval",
        "report",
        out.to_str().unwrap(),
        "--weights",
        "0.4,0.3,0.15,0.15",
    ]);
    let again = read_json(&out.join("results.json"));
    assert_eq!(again["cells"], results["cells"]);
    // Without the embedding model C_emb is missing, said in one line at
    // the start and in the report, and S is renormalised over the rest.
    let no_model = dir.path().join("no-model");
    let out3 = gisclaw(
        &[
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--tasks",
            "1",
            "--runs",
            "1",
            "--replay",
            rec.to_str().unwrap(),
            "--out",
            no_model.to_str().unwrap(),
        ],
        &[("GISCLAW_EMBED_MODEL", "/nonexistent/model")],
    );
    let stderr3 = String::from_utf8_lossy(&out3.stderr);
    assert!(out3.status.success(), "{stderr3}");
    assert!(
        stderr3
            .contains("C_emb (L2) will not be computed: /nonexistent/model/config.json: not found"),
        "{stderr3}"
    );
    let r3 = read_json(&no_model.join("results.json"));
    assert_eq!(r3["c_emb_missing"], 1);
    let only = &r3["runs"][0];
    assert!(
        only["c_emb"].is_null()
            && close(
                only["composite"].as_f64().unwrap(),
                (0.4 + 0.3 * only["q_out"].as_f64().unwrap()
                    + 0.15 * only["code"]["api"]["f1"].as_f64().unwrap())
                    / 0.85
            ),
        "{only}"
    );
    assert!(std::fs::read_to_string(no_model.join("report.md"))
        .unwrap()
        .contains("**C_emb is missing for 1 run(s)**"));
    // Other weights change the composite as the formula says: success only.
    let other = dir.path().join("other");
    run_ok(&[
        "eval",
        "report",
        out.to_str().unwrap(),
        "--out",
        other.to_str().unwrap(),
        "--weights",
        "1,0,0,0",
    ]);
    let w = read_json(&other.join("results.json"));
    assert!(close(
        w["cells"][1]["composite"].as_f64().unwrap(),
        1.0 / 3.0
    ));
    // The charts: seven real images (more than five colours), linked from the
    // report; without the font they are skipped with the reason in the report.
    for (name, _) in gisclaw::eval::reports::task::charts::FILES {
        let chart = out.join("charts").join(name);
        assert!(
            matches!(
                gisclaw::outputs::check(&chart),
                gisclaw::outputs::OutputCheck::Content(..)
            ),
            "{name}"
        );
        assert!(md.contains(&format!("(charts/{name})")), "{name} linked");
    }
    // By label: each run records its task's labels, and the two cells are
    // compared per library (T01 scipy, T02 geopandas, T03 rasterio: SA
    // passes T01 and T03, DA only T01), with a heatmap per label key.
    assert_eq!(run("T03", "dual")["labels"]["library"], "rasterio");
    assert_eq!(run("T01", "single")["labels"]["operation"], "interpolation");
    assert!(md.contains("## pass@1 by label"), "{md}");
    for row in [
        "| geopandas | 0.000 (1) | 0.000 (1) |",
        "| rasterio | 1.000 (1) | 0.000 (1) |",
        "| scipy | 1.000 (1) | 1.000 (1) |",
        "| raster_algebra | 1.000 (1) | 0.000 (1) |",
        "| geodataframe | 0.500 (2) | 0.500 (2) |",
    ] {
        assert!(md.contains(row), "{row} in {md}");
    }
    for key in gisclaw::bench::labels::KEYS {
        let name = format!("pass_at_1_by_{key}.png");
        assert!(md.contains(&format!("(charts/{name})")), "{name} linked");
        assert!(
            matches!(
                gisclaw::outputs::check(&out.join("charts").join(&name)),
                gisclaw::outputs::OutputCheck::Content(..)
            ),
            "{name}"
        );
    }
    let bare = dir.path().join("bare");
    let out2 = gisclaw(
        &[
            "eval",
            "report",
            out.to_str().unwrap(),
            "--out",
            bare.to_str().unwrap(),
        ],
        &[("GISCLAW_VENV", "/nonexistent/venv")],
    );
    assert!(out2.status.success());
    let md2 = std::fs::read_to_string(bare.join("report.md")).unwrap();
    assert!(
        md2.contains("Charts not drawn: no DejaVuSans.ttf under /nonexistent/venv"),
        "{md2}"
    );
    assert!(!bare.join("charts/success.png").exists());
}

#[test]
fn a_killed_eval_resumes_without_losing_or_repeating_runs() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("recordings");
    std::fs::create_dir(&rec).unwrap();
    write_jsonl(&rec.join("T01.jsonl"), &gold_messages("T01", &gold("T01")));
    // T02 hangs in its first cell until the process is killed.
    write_jsonl(
        &rec.join("T02.jsonl"),
        &[cell("import time\ntime.sleep(120)"), finish()],
    );
    write_jsonl(&rec.join("T03.jsonl"), &gold_messages("T03", &gold("T03")));
    let out = dir.path().join("eval");
    let suite = geoanalyst();
    let args = [
        "eval",
        "--suite",
        suite.to_str().unwrap(),
        "--tasks",
        "1-3",
        "--runs",
        "1",
        "--replay",
        rec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let memory =
        std::env::temp_dir().join(format!("gisclaw-test-memory-{}.json", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_gisclaw"))
        .args(args)
        .env("GISCLAW_ERROR_MEMORY", memory)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let records = out.join("records");
    let t01 = records.join("T01.single.1.json");
    let t02_dir = out.join("runs/T02/single-1/transcript.jsonl");
    let deadline = Instant::now() + Duration::from_secs(300);
    while !(t01.is_file() && t02_dir.is_file()) {
        assert!(Instant::now() < deadline, "the eval never reached T02");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the eval ended before it was killed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let names = |dir: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        names(&records),
        ["T01.single.1.json"],
        "only the finished run is recorded, and nothing half-written"
    );
    let kept = std::fs::read(&t01).unwrap();

    // Without --resume the folder is refused; with other options too.
    let refused = gisclaw(&args, &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--resume"));
    let mut other: Vec<&str> = args.to_vec();
    other[6] = "2";
    other.push("--resume");
    let differs = gisclaw(&other, &[]);
    assert_eq!(differs.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&differs.stderr).contains("`runs`"),
        "{}",
        String::from_utf8_lossy(&differs.stderr)
    );

    // A resume stopped by SIGTERM while T02 hangs: the cell is interrupted,
    // the eval ends at once with 128 + 15, T02 gets no record (its run.json
    // says interrupted) and the next resume runs it.
    let mut resume: Vec<&str> = args.to_vec();
    resume.push("--resume");
    let t02_run = out.join("runs/T02/single-1/run.json");
    // The killed run's transcript goes, so that the wait below sees this one.
    std::fs::remove_file(&t02_dir).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_gisclaw"))
        .args(&resume)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    while !std::fs::read_to_string(&t02_dir).is_ok_and(|t| t.contains("\"message\"")) {
        assert!(
            Instant::now() < deadline,
            "the resumed eval never reached T02"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    let signalled = Instant::now();
    // SAFETY: plain kill of our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let stopped = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&stopped.stderr);
    assert_eq!(stopped.status.code(), Some(128 + libc::SIGTERM), "{stderr}");
    assert!(
        signalled.elapsed() < Duration::from_secs(30),
        "the hanging cell was waited for"
    );
    assert!(stderr.contains("stopped by SIGTERM"), "{stderr}");
    assert_eq!(names(&records), ["T01.single.1.json"]);
    assert_eq!(read_json(&t02_run)["status"], "interrupted");

    // T02's model now answers at once; resume runs only what is missing.
    write_jsonl(&rec.join("T02.jsonl"), &[cell("print('quick')"), finish()]);
    let stderr = run_ok(&resume);
    assert!(stderr.contains("3 runs, 1 already recorded"), "{stderr}");
    assert_eq!(
        names(&records),
        [
            "T01.single.1.json",
            "T02.single.1.json",
            "T03.single.1.json"
        ]
    );
    assert_eq!(
        std::fs::read(&t01).unwrap(),
        kept,
        "a recorded run is never redone"
    );
    let results = read_json(&out.join("results.json"));
    assert_eq!(results["runs"].as_array().unwrap().len(), 3);
    // The resumed runs have their data: T03's gold succeeds again.
    assert_eq!(
        read_json(&records.join("T03.single.1.json"))["success"],
        true
    );
    assert_eq!(results["missing_runs"], 0);
}

#[test]
fn bad_eval_input_is_one_line_naming_what_to_fix() {
    let dir = tempfile::tempdir().unwrap();
    let suite = geoanalyst();
    let s = suite.to_str().unwrap();
    let rec = dir.path().join("rec");
    std::fs::create_dir(&rec).unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["eval"], "--suite"),
        (
            vec![
                "eval",
                "--suite",
                s,
                "--tasks",
                "1",
                "--replay",
                rec.to_str().unwrap(),
            ],
            "no recording for T01 single run 1",
        ),
        (
            vec![
                "eval",
                "--suite",
                s,
                "--tasks",
                "1",
                "--replay-gold",
                "--weights",
                "1,2",
            ],
            "four numbers",
        ),
        (
            vec!["eval", "--suite", s, "--tasks", "1"],
            "no model backend",
        ),
        (
            vec!["eval", "report", dir.path().to_str().unwrap()],
            "not an eval folder",
        ),
    ];
    for (args, needle) in cases {
        let out = gisclaw(&args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    let ops = dir.path().join("ops.toml");
    std::fs::write(&ops, "[ops]\nbuffer = 3\n").unwrap();
    let out = gisclaw(
        &[
            "eval",
            "--suite",
            s,
            "--tasks",
            "1",
            "--replay-gold",
            "--api-ops",
            ops.to_str().unwrap(),
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(2) && stderr.contains("ops.toml: line 2"),
        "{stderr}"
    );
}

#[test]
fn the_llm_judge_grades_runs_re_asks_once_and_records_failures() {
    use common::fake_llm::{openai_answer, FakeServer, Reply};
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("recordings");
    std::fs::create_dir(&rec).unwrap();
    write_jsonl(&rec.join("T01.jsonl"), &gold_messages("T01", &gold("T01")));
    let grades = json!({
        "task_understanding": {"score": 5, "justification": "Reads the task right."},
        "data_handling": {"score": 4, "justification": "Checks the CRS."},
        "methodology": {"score": 4, "justification": "Fitting method."},
        "self_correction": {"score": 3, "justification": "Nothing to correct."},
        "result_completeness": {"score": 5, "justification": "All outputs."}
    });
    let say = |text: String| {
        Reply::Json(
            200,
            openai_answer(json!({ "role": "assistant", "content": text })),
        )
    };
    // Run 1: prose, then (re-asked) a fenced JSON answer. Run 2: invalid twice.
    let server = FakeServer::start(vec![
        say("The agent did well overall.".into()),
        say(format!("```json\n{grades}\n```")),
        say("{\"task_understanding\": {\"score\": 9}}".into()),
        say("still not JSON".into()),
    ]);
    let out = dir.path().join("eval");
    let suite = geoanalyst();
    let secret = "sk-judge-secret-0123456789";
    let result = gisclaw(
        &[
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--tasks",
            "1",
            "--runs",
            "2",
            "--replay",
            rec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--judge",
            "openai",
            "--judge-model",
            "judge-m",
            "--judge-base-url",
            &format!("{}/v1", server.url),
        ],
        &[("OPENAI_API_KEY", secret)],
    );
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    // The judge reads the task, the gold code and the run's log.
    let first = requests[0].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        first.contains("## The expert's gold solution")
            && first.contains(
                gold("T01")
                    .lines()
                    .find(|l| l.contains("read_"))
                    .unwrap()
                    .trim()
            ),
        "{first}"
    );
    assert_eq!(requests[0].body["model"], "judge-m");
    // The re-ask carries the reason.
    let reask = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reask.contains("the reply holds no JSON object"), "{reask}");
    let r1 = read_json(&out.join("records/T01.single.1.json"));
    assert_eq!(r1["judge"]["calls"], 2);
    assert_eq!(
        r1["judge"]["grades"]["data_handling"],
        json!({"score": 4, "justification": "Checks the CRS."})
    );
    assert_eq!(r1["judge"]["model"], "judge-m");
    let r2 = read_json(&out.join("records/T01.single.2.json"));
    assert!(r2["judge"].is_null());
    assert!(
        r2["judge_error"]
            .as_str()
            .unwrap()
            .starts_with("the judge's answer was invalid twice"),
        "{r2}"
    );
    // The report's judge table: one run judged (mean 4.2), one failed; the
    // composite does not move.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("## LLM-as-judge")
            && md.contains("judge: judge-m.")
            && md.contains("| 1 | 1 | 5.00 | 4.00 | 4.00 | 3.00 | 5.00 | 4.20 |"),
        "{md}"
    );
    let results = read_json(&out.join("results.json"));
    for r in results["runs"].as_array().unwrap() {
        let s = 0.4 * f64::from(u8::from(r["success"] == true))
            + 0.3 * r["q_out"].as_f64().unwrap()
            + 0.15 * r["code"]["api"]["f1"].as_f64().unwrap()
            + 0.15 * r["c_emb"].as_f64().unwrap();
        assert!(close(r["composite"].as_f64().unwrap(), s), "{r}");
    }
    // The key is sent to the server and written nowhere.
    assert_eq!(
        requests[0]
            .headers
            .iter()
            .find(|(k, _)| k == "authorization")
            .map(|(_, v)| v.as_str()),
        Some(&*format!("Bearer {secret}"))
    );
    for entry in walk(&out) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} holds the key",
            entry.display()
        );
    }
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn the_vision_judge_grades_a_map_against_the_gold_map() {
    use common::fake_llm::{openai_answer, FakeServer, Reply};
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("recordings");
    std::fs::create_dir(&rec).unwrap();
    write_jsonl(&rec.join("T03.jsonl"), &gold_messages("T03", &gold("T03")));
    let grades = json!({
        "task_completion": {"score": 5, "justification": "Shows the result."},
        "spatial_accuracy": {"score": 4, "justification": "Same pattern."},
        "visual_readability": {"score": 4, "justification": "Legible."},
        "cartographic_quality": {"score": 3, "justification": "No scale bar."},
        "data_integrity": {"score": 4, "justification": "Plausible."}
    });
    let server = FakeServer::start(vec![Reply::Json(
        200,
        openai_answer(json!({ "role": "assistant", "content": grades.to_string() })),
    )]);
    let out = dir.path().join("eval");
    let suite = geoanalyst();
    let result = gisclaw(
        &[
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--tasks",
            "3",
            "--runs",
            "1",
            "--replay",
            rec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--vision-judge",
            "openai",
            "--vision-model",
            "vis-m",
            "--vision-base-url",
            &format!("{}/v1", server.url),
        ],
        &[("OPENAI_API_KEY", "sk-test")],
    );
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    // One call: the task, then the gold's PNG and the agent's, as data URLs.
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["model"], "vis-m");
    let parts = requests[0].body["messages"][1]["content"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(parts.len(), 3);
    assert!(parts[0]["text"]
        .as_str()
        .unwrap()
        .contains("The first image is the expert's (gold) figure"));
    for part in &parts[1..] {
        assert!(
            part["image_url"]["url"]
                .as_str()
                .unwrap()
                .starts_with("data:image/png;base64,iVBORw0KGgo"),
            "{part}"
        );
    }
    // The map's score is the mean grade over 5; Q_out follows.
    let record = read_json(&out.join("records/T03.single.1.json"));
    let outputs = record["outputs"].as_array().unwrap();
    let map = outputs.iter().find(|o| o["kind"] == "image").unwrap();
    assert!(close(map["score"].as_f64().unwrap(), 0.8), "{map}");
    assert_eq!(map["weak"], false);
    assert!(
        close(
            map["parts"]["vision_cartographic_quality"]
                .as_f64()
                .unwrap(),
            0.6
        ),
        "{map}"
    );
    assert!(map["parts"]["ssim"].is_number());
    let mean = outputs
        .iter()
        .map(|o| o["score"].as_f64().unwrap())
        .sum::<f64>()
        / outputs.len() as f64;
    assert!(close(record["q_out"].as_f64().unwrap(), mean), "{record}");
    // The report says the judge graded the map (it used to say it was not built).
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("Image outputs: 1 of 1 graded by the vision judge")
            && !md.contains("not built"),
        "{md}"
    );
}

#[test]
fn without_domain_knowledge_the_prompt_lacks_it_and_the_folder_is_an_ablation() {
    // GISclaw's knowledge-gap analysis (§4.2.2) as eval cells: the same
    // gold replays with and without the tasks' domain knowledge.
    let dir = tempfile::tempdir().unwrap();
    let suite = geoanalyst();
    let run = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--tasks",
            "1",
            "--arch",
            "single",
            "--runs",
            "1",
            "--replay-gold",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        run_ok(&args);
    };
    let (with, without) = (dir.path().join("with"), dir.path().join("without"));
    run(&with, &[]);
    run(&without, &["--no-domain-knowledge"]);
    let knowledge = gisclaw::task::Task::load(&suite.join("T01/task.yaml"))
        .unwrap()
        .task
        .domain_knowledge
        .unwrap();
    let first_line = knowledge.lines().next().unwrap().trim().to_string();
    let prompt = |folder: &Path| {
        common::events(&folder.join("runs/T01/single-1"))
            .into_iter()
            .find(|e| e["event"] == "message" && e["message"]["role"] == "user")
            .unwrap()["message"]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(prompt(&with).contains(&first_line), "{}", prompt(&with));
    assert!(
        !prompt(&without).contains(&first_line),
        "{}",
        prompt(&without)
    );
    let manifest = read_json(&without.join("eval.json"));
    assert_eq!(manifest["domain_knowledge"], false);
    // Side by side, the two folders are the domain-knowledge ablation.
    let both = dir.path().join("both");
    run_ok(&[
        "eval",
        "report",
        without.to_str().unwrap(),
        with.to_str().unwrap(),
        "--out",
        both.to_str().unwrap(),
    ]);
    let results = read_json(&both.join("results.json"));
    assert_eq!(
        results["ablations"][0]["flag"], "domain knowledge",
        "{results}"
    );
    let md = std::fs::read_to_string(both.join("report.md")).unwrap();
    assert!(md.contains("· no domain knowledge"), "{md}");
}

#[test]
fn two_folders_of_an_ablation_get_a_paired_table_with_effect_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let suite = geoanalyst();
    // One backend (the same recordings folder), two conditions. With the
    // workflow: both golds. Without: T01's gold, T02 broken.
    let rec = dir.path().join("rec");
    std::fs::create_dir(&rec).unwrap();
    write_jsonl(&rec.join("T01.jsonl"), &gold_messages("T01", &gold("T01")));
    write_jsonl(&rec.join("T02.jsonl"), &gold_messages("T02", &gold("T02")));
    let run = |rec: &Path, out: &Path, extra: &[&str]| {
        let mut args = vec![
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--tasks",
            "1-2",
            "--arch",
            "single",
            "--runs",
            "1",
            "--replay",
            rec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-j",
            "2",
        ];
        args.extend_from_slice(extra);
        run_ok(&args);
    };
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run(&rec, &a, &[]);
    write_jsonl(&rec.join("T02.jsonl"), &[cell("x = (1,"), finish()]);
    run(&rec, &b, &["--no-workflow"]);
    let both = dir.path().join("both");
    run_ok(&[
        "eval",
        "report",
        b.to_str().unwrap(),
        a.to_str().unwrap(),
        "--out",
        both.to_str().unwrap(),
    ]);
    let results = read_json(&both.join("results.json"));
    let ablation = &results["ablations"][0];
    assert_eq!(ablation["flag"], "workflow", "{ablation}");
    assert_eq!(ablation["n"], 2);
    // The numbers follow from the two folders' run composites.
    let composite = |folder: &Path, task: &str| {
        read_json(&folder.join("results.json"))["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["task"] == task)
            .unwrap()["composite"]
            .as_f64()
            .unwrap()
    };
    let diffs = [
        composite(&a, "T01") - composite(&b, "T01"),
        composite(&a, "T02") - composite(&b, "T02"),
    ];
    assert!(diffs[1] > 0.3, "the broken T02 scores lower: {diffs:?}");
    let mean = (diffs[0] + diffs[1]) / 2.0;
    let sd = ((diffs[0] - mean).powi(2) + (diffs[1] - mean).powi(2)).sqrt();
    assert!(
        close(ablation["mean_difference"].as_f64().unwrap(), mean),
        "{ablation}"
    );
    assert!(
        close(ablation["cohens_d"].as_f64().unwrap(), mean / sd),
        "{ablation}"
    );
    assert_eq!(ablation["with"]["successes"], 2);
    assert_eq!(ablation["without"]["successes"], 1);
    assert!(ablation["with"]["label"]
        .as_str()
        .unwrap()
        .ends_with("· single"));
    assert!(
        ablation["without"]["label"]
            .as_str()
            .unwrap()
            .contains("· no workflow · single"),
        "{ablation}"
    );
    let md = std::fs::read_to_string(both.join("report.md")).unwrap();
    assert!(
        md.contains("## Ablation: workflow (single, cf. Table 10: paired by task, n = 2)"),
        "{md}"
    );
    assert!(md.contains("| 2/2 |") && md.contains("| 1/2 |"), "{md}");
    assert!(
        md.contains(&format!("Cohen's d = {:.3}", mean / sd)),
        "{md}"
    );
    // Fig. 10: the per-task pairs behind the chart, and the chart itself.
    let pairs = ablation["per_task"].as_array().unwrap();
    assert_eq!(pairs.len(), 2);
    assert_eq!(pairs[1][0], "T02");
    assert!(close(pairs[1][1].as_f64().unwrap(), composite(&a, "T02")));
    assert!(close(pairs[1][2].as_f64().unwrap(), composite(&b, "T02")));
    let chart = both.join("charts/ablation_workflow_single.png");
    assert!(
        matches!(
            gisclaw::outputs::check(&chart),
            gisclaw::outputs::OutputCheck::Content(..)
        ),
        "{}",
        chart.display()
    );
    assert!(md.contains("(charts/ablation_workflow_single.png)"), "{md}");
}

#[test]
fn several_models_get_the_table_6_layout_with_cost_per_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let suite = geoanalyst();
    let eval = |out: &Path, source: &[&str], runs: &str| {
        let mut args = vec![
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--tasks",
            "1-2",
            "--arch",
            "both",
            "--runs",
            runs,
            "--out",
            out.to_str().unwrap(),
            "-j",
            "2",
        ];
        args.extend_from_slice(source);
        run_ok(&args);
    };
    // Model A: the golds, twice each. Model B: T01's gold, T02 broken.
    let a = dir.path().join("a");
    eval(&a, &["--replay-gold"], "2");
    let rec = dir.path().join("rec");
    std::fs::create_dir(&rec).unwrap();
    write_jsonl(
        &rec.join("T01.single.jsonl"),
        &gold_messages("T01", &gold("T01")),
    );
    write_jsonl(
        &rec.join("T01.dual.jsonl"),
        &gold_dual_messages("T01", &gold("T01")),
    );
    write_jsonl(&rec.join("T02.jsonl"), &[cell("x = (1,"), finish()]);
    let b = dir.path().join("b");
    eval(&b, &["--replay", rec.to_str().unwrap()], "1");
    // Model A's runs cost 1 cent each (as if priced): 4 runs per arch over
    // 2 tasks, so one sweep costs 2 cents. B's price is unknown (replays
    // are free: as if B were an unpriced model).
    for (folder, cost) in [(&a, json!(0.01)), (&b, Value::Null)] {
        for entry in std::fs::read_dir(folder.join("records")).unwrap() {
            let path = entry.unwrap().path();
            let mut record = read_json(&path);
            record["cost_usd"] = cost.clone();
            std::fs::write(&path, record.to_string()).unwrap();
        }
    }
    let both = dir.path().join("both");
    run_ok(&[
        "eval",
        "report",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        both.to_str().unwrap(),
    ]);
    let results = read_json(&both.join("results.json"));
    let cells = results["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4);
    for c in &cells[..2] {
        assert!(close(c["cost_per_sweep"].as_f64().unwrap(), 0.02), "{c}");
    }
    assert!(cells[2]["cost_per_sweep"].is_null());
    // The rendered rows carry each cell's numbers, SA then DA.
    let md = std::fs::read_to_string(both.join("report.md")).unwrap();
    let f3 = |v: &Value| format!("{:.3}", v.as_f64().unwrap());
    let row = |model: &Value| {
        md.lines()
            .find(|l| {
                l.starts_with(&format!("| {} | ", model.as_str().unwrap()))
                    && l.matches('|').count() == 14
            })
            .unwrap_or_else(|| panic!("no Table 6 row for {model}:\n{md}"))
            .to_string()
    };
    assert!(
        md.contains("## Single and Dual Agent side by side (GISclaw Table 6 layout)"),
        "{md}"
    );
    for pair in cells.chunks(2) {
        let (sa, da) = (&pair[0], &pair[1]);
        assert_eq!(
            (sa["arch"].as_str(), da["arch"].as_str()),
            (Some("single"), Some("dual"))
        );
        let line = row(&sa["backend"]);
        let parts: Vec<&str> = line.split('|').map(str::trim).collect();
        for (offset, cell) in [(2, sa), (8, da)] {
            assert_eq!(parts[offset], f3(&cell["success_rate"]), "{line}");
            assert_eq!(parts[offset + 2], f3(&cell["f_api"]), "{line}");
            assert_eq!(parts[offset + 3], f3(&cell["c_emb"]), "{line}");
            let ci = &cell["composite_ci"];
            let half = (ci[1].as_f64().unwrap() - ci[0].as_f64().unwrap()) / 2.0;
            let s = format!("{} (±{half:.3})", f3(&cell["composite"]));
            assert!(parts[offset + 4].trim_matches('*') == s, "{line} vs {s}");
        }
        let cost = if sa["cost_per_sweep"].is_null() {
            "unknown"
        } else {
            "$0.02"
        };
        assert_eq!((parts[7], parts[13]), (cost, cost), "{line}");
    }
    // Model A (the golds) has the best S_comp in both architectures: bold.
    let a_row = row(&cells[0]["backend"]);
    assert_eq!(a_row.matches("**").count(), 4, "{a_row}");
    assert!(!row(&cells[2]["backend"]).contains("**"));
    // Figs 6, 7 and 9 are drawn.
    for name in ["api_f1_heatmap.png", "c_emb_per_task.png", "profiles.png"] {
        assert!(
            matches!(
                gisclaw::outputs::check(&both.join("charts").join(name)),
                gisclaw::outputs::OutputCheck::Content(..)
            ),
            "{name}"
        );
    }
}

#[test]
fn a_run_the_model_server_failed_is_counted_as_infrastructure_never_scored() {
    use common::fake_llm::{openai_answer, FakeServer, Reply};
    // T01: the model answers in prose four times (the run fails: `other`);
    // T02: the server refuses the key (the run cannot be carried out).
    let prose = || {
        Reply::Json(
            200,
            openai_answer(json!({"role": "assistant", "content": "Done, I think."})),
        )
    };
    let refused = Reply::Json(
        401,
        json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
    );
    let mut script: Vec<Reply> = (0..4).map(|_| prose()).collect();
    script.push(refused);
    // The resume: T02's model now answers in prose too.
    script.extend((0..4).map(|_| prose()));
    let server = FakeServer::start(script);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[profiles.p]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"fake\"\napi_key = \"k\"\nvision = false\n",
            server.url
        ),
    )
    .unwrap();
    let out = dir.path().join("eval");
    let suite = geoanalyst();
    let mut args = vec![
        "eval",
        "--suite",
        suite.to_str().unwrap(),
        "--tasks",
        "1-2",
        "--runs",
        "1",
        "--backend",
        "p",
        "--out",
        out.to_str().unwrap(),
    ];
    let env = [("GISCLAW_CONFIG", config.to_str().unwrap())];
    let first = gisclaw(&args, &env);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("1 run(s) could not run and have no record"),
        "{stderr}"
    );
    let note = read_json(&out.join("failed/T02.single.1.json"));
    assert_eq!(
        (note["task"].as_str(), note["run"].as_u64()),
        (Some("T02"), Some(1))
    );
    assert!(
        note["reason"].as_str().unwrap().contains("API key"),
        "{note}"
    );
    assert!(!out.join("records/T02.single.1.json").exists());
    let results = read_json(&out.join("results.json"));
    assert_eq!(
        (
            results["missing_runs"].as_u64(),
            results["infrastructure_failures"].as_u64()
        ),
        (Some(1), Some(1))
    );
    // The cell is scored on T01 alone; the failure is counted beside it.
    let cell = &results["cells"][0];
    assert_eq!(cell["n"], 1);
    assert_eq!(
        cell["run_errors"],
        json!({ "other": 1, "infrastructure": 1 })
    );
    assert_eq!(results["runs"].as_array().unwrap().len(), 1);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("1 of them could not be carried out"), "{md}");
    assert!(md.contains(" infrastructure |"), "{md}");
    // The resume runs T02, and its note goes once it has a record.
    args.push("--resume");
    let second = gisclaw(&args, &env);
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert!(!out.join("failed/T02.single.1.json").exists());
    let results = read_json(&out.join("results.json"));
    assert_eq!(
        (
            results["missing_runs"].as_u64(),
            results["infrastructure_failures"].as_u64()
        ),
        (Some(0), Some(0))
    );
    assert_eq!(results["cells"][0]["run_errors"], json!({ "other": 2 }));
    assert_eq!(server.remaining(), 0);
}

#[test]
fn the_llm_alone_answers_once_and_is_reported_beside_the_agent() {
    use gisclaw::bench::verify::gold_alone_messages;
    let dir = tempfile::tempdir().unwrap();
    let suite = geoanalyst();
    let eval = |out: &Path, source: &[&str], arch: &str| {
        let mut args = vec![
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--tasks",
            "1-2",
            "--arch",
            arch,
            "--runs",
            "1",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(source);
        run_ok(&args);
        read_json(&out.join("results.json"))
    };
    // The gold script as the one answer: both tasks succeed.
    let gold_alone = eval(&dir.path().join("gold"), &["--replay-gold"], "none");
    assert_eq!(gold_alone["cells"][0]["arch"], "none");
    assert!(
        close(
            gold_alone["cells"][0]["success_rate"].as_f64().unwrap(),
            1.0
        ),
        "{gold_alone}"
    );
    // Recorded: T01's script raises half-way; T02's is the gold. The agent
    // (single) plays both golds.
    let rec = dir.path().join("rec");
    std::fs::create_dir(&rec).unwrap();
    write_jsonl(
        &rec.join("T01.none.jsonl"),
        &[Message {
            content: Some("```python\nimport geopandas as gpd\nx = gpd.read_file('data/no_such_layer.geojson')\n```".into()),
            ..Message::default()
        }],
    );
    write_jsonl(
        &rec.join("T02.none.jsonl"),
        &gold_alone_messages(&gold("T02")),
    );
    write_jsonl(
        &rec.join("T01.single.jsonl"),
        &gold_messages("T01", &gold("T01")),
    );
    write_jsonl(
        &rec.join("T02.single.jsonl"),
        &gold_messages("T02", &gold("T02")),
    );
    let (alone, agent) = (dir.path().join("alone"), dir.path().join("agent"));
    let r = eval(&alone, &["--replay", rec.to_str().unwrap()], "none");
    let t01 = r["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["task"] == "T01")
        .unwrap()
        .clone();
    assert_eq!(
        (t01["success"].as_bool(), t01["rounds"].as_u64()),
        (Some(false), Some(1)),
        "{t01}"
    );
    assert_eq!(t01["run_error"], "runtime", "{t01}");
    assert!(
        t01["reason"]
            .as_str()
            .unwrap()
            .contains("did not run to its end"),
        "{t01}"
    );
    eval(&agent, &["--replay", rec.to_str().unwrap()], "single");
    let both = dir.path().join("both");
    run_ok(&[
        "eval",
        "report",
        alone.to_str().unwrap(),
        agent.to_str().unwrap(),
        "--out",
        both.to_str().unwrap(),
    ]);
    let results = read_json(&both.join("results.json"));
    let cell = |arch: &str| {
        results["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["arch"] == arch)
            .unwrap()
            .clone()
    };
    let (none, single) = (cell("none"), cell("single"));
    assert!(close(none["success_rate"].as_f64().unwrap(), 0.5));
    assert!(close(single["success_rate"].as_f64().unwrap(), 1.0));
    let md = std::fs::read_to_string(both.join("report.md")).unwrap();
    let f3 = |v: &Value| format!("{:.3}", v.as_f64().unwrap());
    let row = format!(
        "| {} | 0.500 | {} | 1.000 | {} |",
        none["backend"].as_str().unwrap(),
        f3(&none["composite"]),
        f3(&single["composite"])
    );
    assert!(
        md.contains("## LLM alone vs agent (cf. GeoAgent Table 4)") && md.contains(&row),
        "{row}\n{md}"
    );
}

#[test]
fn with_reproduce_each_finished_run_is_re_run_and_the_report_gives_the_rate() {
    // T01: the gold, which its solution.py remakes. T02: the gold and one
    // more output of unseeded noise, which a second run cannot remake.
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("recordings");
    std::fs::create_dir(&rec).unwrap();
    write_jsonl(&rec.join("T01.jsonl"), &gold_messages("T01", &gold("T01")));
    let mut noisy = gold_messages("T02", &gold("T02"));
    let done = noisy.pop().unwrap();
    noisy.push(cell(
        "import numpy as np, pandas as pd\npd.DataFrame({'v': np.random.default_rng().normal(size=50)}).to_csv('pred_results/noise.csv', index=False)",
    ));
    noisy.push(done);
    write_jsonl(&rec.join("T02.jsonl"), &noisy);
    let out = dir.path().join("eval");
    let suite = geoanalyst();
    run_ok(&[
        "eval",
        "--suite",
        suite.to_str().unwrap(),
        "--tasks",
        "1-2",
        "--arch",
        "single",
        "--runs",
        "1",
        "--replay",
        rec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--reproduce",
    ]);
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "reproduced").unwrap();
    let reproduced: Vec<(String, String)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1].to_string(), f[at].to_string())
        })
        .collect();
    assert_eq!(
        reproduced,
        [
            ("T01".to_string(), "1".to_string()),
            ("T02".to_string(), "0".to_string())
        ],
        "{csv}"
    );
    let results = read_json(&out.join("results.json"));
    assert_eq!(results["cells"][0]["reproduced"], json!([1, 2]));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Reproduction"), "{report}");
    assert!(report.contains("| 1/2 | 0.500 |"), "{report}");
}
