//! `gisclaw eval report DIR --html` in a real headless Chromium: the page
//! loads with no console error and makes no request, its charts are drawn
//! (a screenshot that is not blank), a run's transcript opens from the runs
//! table with a click, its failing cell in red, the Single and Dual Agent's
//! runs of a task side by side — and markup a model wrote into its answer
//! or a cell printed stays text (no script of it runs). A step suite's
//! page shows the same tables as its report.md and tables/*.csv.

use crate::common;

use std::path::{Path, PathBuf};

use common::browser::Browser;
use common::{geoanalyst, gisclaw, gold, write_jsonl};
use gisclaw::bench::verify::{gold_dual_messages, gold_messages};
use gisclaw::llm::{Message, ToolCall};
use serde_json::json;

fn call(id: &str, name: &str, text: &str, args: serde_json::Value) -> Message {
    Message {
        content: Some(text.into()),
        tool_calls: vec![ToolCall::function(id, name, args.to_string())],
        ..Message::default()
    }
}

/// What a hostile model (or a prompt injection in the data) might write.
const INJECTED: &str = "<script>console.error('pwned-by-text')</script><img src=x onerror=\"console.error('pwned-by-img')\"> [click](javascript:console.error('pwned-by-link'))";

/// An eval folder: T01 solved by both architectures (gold replays), T02
/// failed by both (a blocked import, then a cell that prints markup, then a
/// finish without outputs), with the report and `report.html`.
fn eval_folder(root: &Path) -> PathBuf {
    let rec = root.join("recordings");
    std::fs::create_dir(&rec).unwrap();
    write_jsonl(
        &rec.join("T01.single.jsonl"),
        &gold_messages("T01", &gold("T01")),
    );
    write_jsonl(
        &rec.join("T01.dual.jsonl"),
        &gold_dual_messages("T01", &gold("T01")),
    );
    write_jsonl(
        &rec.join("T02.jsonl"),
        &[
            call(
                "a",
                "execute_python",
                "First the ArcGIS way.",
                json!({ "code": "import arcpy" }),
            ),
            call(
                "b",
                "execute_python",
                INJECTED,
                json!({ "code": "print(\"<script>console.error('pwned-by-output')</script>\")" }),
            ),
            call("f", "finish", "done", json!({ "summary": "done" })),
        ],
    );
    let out = root.join("eval");
    let suite = geoanalyst();
    let args = [
        "eval",
        "--suite",
        suite.to_str().unwrap(),
        "--tasks",
        "1-2",
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
    ];
    let run = gisclaw(&args, &[]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report = gisclaw(&["eval", "report", out.to_str().unwrap(), "--html"], &[]);
    let stderr = String::from_utf8_lossy(&report.stderr);
    assert!(report.status.success(), "{stderr}");
    assert!(stderr.contains("report.html"), "{stderr}");
    out
}

/// True when a screenshot shows something: many colours, and a fair share
/// of pixels that are not the white background.
fn shows_something(png: &[u8]) -> (bool, String) {
    let img = image::load_from_memory(png).unwrap().to_rgb8();
    let mut colours = std::collections::HashSet::new();
    let mut inked = 0usize;
    for p in img.pixels() {
        colours.insert(p.0);
        if p.0.iter().any(|c| *c < 230) {
            inked += 1;
        }
    }
    let share = inked as f64 / (img.width() * img.height()) as f64;
    (
        colours.len() > 50 && share > 0.03,
        format!("{} colours, {:.1} % inked", colours.len(), share * 100.0),
    )
}

#[test]
fn the_html_report_opens_in_chromium_with_sortable_tables_charts_and_transcripts() {
    let dir = tempfile::tempdir().unwrap();
    let out = eval_folder(dir.path());
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    // Self-contained: nothing for the browser to fetch.
    for outside in [
        "src=\"http",
        "href=\"http",
        "<link rel=\"stylesheet\"",
        "url(http",
    ] {
        assert!(
            !page.contains(outside),
            "the page refers outside: {outside}"
        );
    }

    let mut browser = Browser::start(1280, 900);
    browser.open(&format!("file://{}", out.join("report.html").display()));
    assert_eq!(
        browser.eval("document.getElementById('view-report').hidden"),
        false
    );
    assert!(
        browser
            .eval("document.querySelectorAll('#view-report table').length")
            .as_u64()
            >= Some(5),
        "the report's tables"
    );

    // The charts are embedded and drawn.
    let charts = browser.eval(
        "Array.from(document.querySelectorAll('#view-report img')).map(i => i.complete && i.naturalWidth > 0)",
    );
    let charts = charts.as_array().unwrap();
    assert!(
        charts.len() >= 2 && charts.iter().all(|c| c == true),
        "{charts:?}"
    );
    browser.eval("document.querySelector('#view-report img').scrollIntoView()");
    browser.settle();
    let shot = browser.screenshot();
    let (visible, what) = shows_something(&shot);
    std::fs::write(out.join("charts-screenshot.png"), &shot).unwrap();
    assert!(visible, "the screenshot of the charts looks blank: {what}");

    // The runs table: sorted by a click on a header, a run opened by a
    // click on its link.
    browser.click("nav a[href='#runs']");
    assert_eq!(
        browser.eval("document.getElementById('view-runs').hidden"),
        false
    );
    assert_eq!(
        browser.eval("document.getElementById('view-report').hidden"),
        true
    );
    let order = "Array.from(document.querySelectorAll('#view-runs tbody tr')).map(r => r.cells[4].textContent)";
    browser.click("#view-runs thead th:nth-child(5)");
    let ascending: Vec<f64> = serde_json::from_value::<Vec<String>>(browser.eval(order))
        .unwrap()
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!(ascending.len(), 4);
    assert!(ascending.windows(2).all(|w| w[0] <= w[1]), "{ascending:?}");
    browser.click("#view-runs thead th:nth-child(5)");
    let descending: Vec<String> = serde_json::from_value(browser.eval(order)).unwrap();
    assert_eq!(descending[0].parse::<f64>().unwrap(), ascending[3]);

    browser.click("a.open-run[href='#run:0.T02.single.1']");
    assert_eq!(
        browser.eval("document.getElementById('view-run').hidden"),
        false
    );
    let codes = browser.eval(
        "Array.from(document.querySelectorAll('#run-view pre.code')).map(p => p.textContent)",
    );
    assert!(
        codes[0].as_str().unwrap().contains("import arcpy"),
        "{codes}"
    );
    assert_eq!(
        browser.eval("getComputedStyle(document.querySelector('#run-view pre.error')).color"),
        "rgb(207, 34, 46)",
        "the failing cell's error is red"
    );
    assert!(
        browser
            .eval("document.querySelector('#run-view .scores').textContent")
            .as_str()
            .unwrap()
            .contains("Q_out"),
        "the run's scores beside it"
    );
    // The model's markup and the cell's printed markup are text on the page.
    let text = browser.eval("document.getElementById('run-view').textContent");
    let text = text.as_str().unwrap();
    assert!(
        text.contains("<script>console.error('pwned-by-text')</script>"),
        "{text}"
    );
    assert!(
        text.contains("<script>console.error('pwned-by-output')</script>"),
        "{text}"
    );
    assert_eq!(
        browser.eval("document.querySelectorAll('#run-view script, #run-view img[src=x], #run-view a[href^=javascript]').length"),
        0
    );

    // T01 by the Single and the Dual Agent side by side, from the run page.
    browser.click("nav a[href='#runs']");
    browser.click("a.open-run[href='#run:0.T01.single.1']");
    browser.click("#run-view a[href^='#compare:']");
    assert_eq!(
        browser.eval("document.getElementById('view-compare').hidden"),
        false
    );
    let columns = browser.eval(
        "Array.from(document.querySelectorAll('#compare-grid > div')).map(d => [d.querySelector('h3').textContent, d.querySelectorAll('.cell').length])",
    );
    let columns = columns.as_array().unwrap();
    assert_eq!(columns.len(), 2, "{columns:?}");
    assert!(
        columns[0][0].as_str().unwrap().ends_with("· single"),
        "{columns:?}"
    );
    assert!(
        columns[1][0].as_str().unwrap().ends_with("· dual"),
        "{columns:?}"
    );
    assert!(
        columns.iter().all(|c| c[1].as_u64() > Some(0)),
        "{columns:?}"
    );

    browser.settle();
    assert!(
        browser.errors.is_empty(),
        "console errors: {:#?}",
        browser.errors
    );
}

#[test]
fn a_step_suite_has_its_page_too_with_sortable_tables_and_charts() {
    // Every suite kind's report is one document rendered in one place: a
    // step eval (GeoCode's first task, the gold replayed twice) writes the
    // same tables to report.md, tables/*.csv and report.html.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("steps");
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/geocode");
    let run = gisclaw(
        &[
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--tasks",
            "1",
            "--runs",
            "2",
            "--replay-gold",
            "--html",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("report.html"), "{stderr}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let grids = md.matches("\n|---|").count();
    let mut csvs: Vec<String> = std::fs::read_dir(out.join("tables"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    csvs.sort();
    assert_eq!(
        csvs.len(),
        grids,
        "one CSV per table of report.md: {csvs:?}"
    );
    let per_task = csvs.iter().find(|n| n.ends_with("-per-task.csv")).unwrap();
    let per_task = std::fs::read_to_string(out.join("tables").join(per_task)).unwrap();
    assert_eq!(
        per_task,
        "task,runs,complete@1,step pass rate,runs passing every step\nG01,2,1.000,1.000,2\n"
    );

    let mut browser = Browser::start(1280, 900);
    browser.open(&format!("file://{}", out.join("report.html").display()));
    assert_eq!(
        browser.eval("document.querySelector('h1').textContent"),
        browser_title(&md)
    );
    assert_eq!(
        browser
            .eval("document.querySelectorAll('#view-report table.sortable').length")
            .as_u64(),
        Some(grids as u64),
        "every table of report.md is on the page"
    );
    let charts = browser.eval(
        "Array.from(document.querySelectorAll('#view-report img')).map(i => i.complete && i.naturalWidth > 0)",
    );
    let charts = charts.as_array().unwrap();
    assert!(
        !charts.is_empty() && charts.iter().all(|c| c == true),
        "{charts:?}"
    );
    // The per-task table sorts by a click on its header.
    let table = "Array.from(document.querySelectorAll('#view-report table')).find(t => t.tHead.rows[0].cells[0].textContent === 'error type')";
    browser.click("#view-report h2#s-failing-steps-by-error-type + table thead th:nth-child(1)");
    assert_eq!(
        browser.eval(&format!(
            "{table}.tHead.rows[0].cells[0].getAttribute('aria-sort')"
        )),
        "ascending"
    );
    browser.settle();
    assert!(
        browser.errors.is_empty(),
        "console errors: {:#?}",
        browser.errors
    );
}

/// The markdown report's title, as the page's heading shows it.
fn browser_title(md: &str) -> String {
    md.lines()
        .next()
        .unwrap()
        .trim_start_matches("# ")
        .to_string()
}
