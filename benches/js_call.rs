//! The JavaScript runtime's cost per call, warm, against a bare Node start
//! of the same case (`node -e`: Node, the library and the call, unconfined,
//! as a harness without a warm worker would run each case), and the warm
//! worker's memory (its resident set after the libraries load and after
//! many calls: each call's realm must be freed).
//!
//! Three cases, one per kind of work GeoJSEval has: a Turf measure, a
//! Leaflet map judged through its eval methods, an OpenLayers view.
//!
//! Run with `make bench` (or `cargo bench --bench js_call` after `make
//! setup` and a release build of `gisclaw`, the runtime's launcher).

use std::process::Command;
use std::time::{Duration, Instant};

use gisclaw::js::{CallOutcome, JsCall, JsConfig, JsRuntime};

/// Calls measured per case, warm.
const WARM_CALLS: usize = 200;
/// Bare starts measured per case.
const COLD_STARTS: usize = 10;

struct Case {
    name: &'static str,
    /// The library's bundle, relative to `node_modules` (for `node -e`).
    bundle: &'static str,
    /// Its global.
    global: &'static str,
    code: &'static str,
    args: &'static [&'static str],
    eval_methods: &'static [&'static str],
    /// Whether the library needs a DOM (`node -e` then loads jsdom too).
    dom: bool,
}

const CASES: [Case; 3] = [
    Case {
        name: "turf area",
        bundle: "@turf/turf/turf.min.js",
        global: "turf",
        code: "function f(p) { return turf.area(turf.polygon(p)); }",
        args: &["[[[0,0],[1,0],[1,1],[0,1],[0,0]]]"],
        eval_methods: &[],
        dom: false,
    },
    Case {
        name: "leaflet map",
        bundle: "leaflet/dist/leaflet.js",
        global: "L",
        code: "function f(lat, lng, z) { return L.map(document.createElement('div')).setView([lat, lng], z); }",
        args: &["51.5", "-0.09", "13"],
        eval_methods: &["getCenter()", "getZoom()"],
        dom: true,
    },
    Case {
        name: "ol view",
        bundle: "ol/dist/ol.js",
        global: "ol",
        code: "function f(c, z) { return new ol.Map({view: new ol.View({center: ol.proj.fromLonLat(c), zoom: z})}); }",
        args: &["[2.35, 48.85]", "5"],
        eval_methods: &["getView().getCenter()", "getView().getZoom()"],
        dom: true,
    },
];

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The script `node -e` runs: load the library (and a DOM when it needs
/// one), define the function, call it, print the result.
fn cold_script(case: &Case, modules: &std::path::Path) -> String {
    let modules = modules.display();
    let dom = if case.dom {
        format!(
            "const {{ JSDOM }} = require('{modules}/jsdom'); const dom = new JSDOM('<div id=\"map\"></div>', {{ pretendToBeVisual: true }}); \
             for (const k of ['window','document','navigator','HTMLElement','HTMLCanvasElement','Image','getComputedStyle','requestAnimationFrame','cancelAnimationFrame','devicePixelRatio']) {{ globalThis[k] = dom.window[k] ?? globalThis[k]; }} \
             globalThis.ResizeObserver = class {{ observe() {{}} unobserve() {{}} disconnect() {{}} }};"
        )
    } else {
        String::new()
    };
    let methods: Vec<String> = case.eval_methods.iter().map(|m| format!("r.{m}")).collect();
    let result = if methods.is_empty() {
        "r".to_string()
    } else {
        format!("[{}]", methods.join(", "))
    };
    format!(
        "{dom} const vm = require('vm'); const fs = require('fs'); \
         vm.runInThisContext('(function (exports, module, define) {{' + fs.readFileSync('{modules}/{bundle}', 'utf8') + \
           '\\n;if (typeof {global} !== \\'undefined\\') globalThis.{global} = {global};\\n}}).call(globalThis)'); \
         if (typeof {global} === 'undefined' && globalThis.window && window.{global}) globalThis.{global} = window.{global}; \
         if (typeof {global} === 'undefined') throw new Error('not loaded'); {code} const r = f({args}); console.log(JSON.stringify({result}));",
        bundle = case.bundle,
        global = case.global,
        code = case.code,
        args = case.args.join(", ")
    )
}

/// The resident set of the launcher's child (Node), in MiB.
fn node_rss_mib(launcher: i32) -> Option<f64> {
    let children =
        std::fs::read_to_string(format!("/proc/{launcher}/task/{launcher}/children")).ok()?;
    let node: i32 = children.split_whitespace().next()?.parse().ok()?;
    let status = std::fs::read_to_string(format!("/proc/{node}/status")).ok()?;
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let config = JsConfig::installed().unwrap_or_else(|e| panic!("{e}"));
    let modules = config.js_dir.join("node_modules");
    let mut runtime = JsRuntime::new(config.clone());
    let started = Instant::now();
    let launcher = runtime.worker().expect("the runtime starts").launcher_pid();
    let start_cost = started.elapsed();
    let rss_ready = node_rss_mib(launcher);
    println!(
        "js_call: one confined worker start (Node, the five libraries compiled): {:.0} ms",
        ms(start_cost)
    );
    println!(
        "{:<12} {:>14} {:>16} {:>8}",
        "case", "warm call (ms)", "node -e (ms)", "ratio"
    );
    for case in &CASES {
        let call = JsCall {
            code: case.code.into(),
            name: "f".into(),
            args: case.args.iter().map(|a| a.to_string()).collect(),
            eval_methods: case.eval_methods.iter().map(|m| m.to_string()).collect(),
        };
        let mut warm = Vec::new();
        let mut warm_answer = String::new();
        for _ in 0..WARM_CALLS {
            let t = Instant::now();
            match runtime.call(&call).expect("the runtime answers") {
                CallOutcome::Answered(a) if a.ok => {
                    warm_answer = serde_json::to_string(
                        &a.indirect.map_or(a.value.unwrap_or_default(), |v| {
                            serde_json::Value::Array(v.into_iter().map(|i| i.value).collect())
                        }),
                    )
                    .unwrap_or_default();
                }
                other => panic!("{}: {other:?}", case.name),
            }
            warm.push(t.elapsed());
        }
        let script = cold_script(case, &modules);
        let mut cold = Vec::new();
        let mut cold_answer = String::new();
        for _ in 0..COLD_STARTS {
            let t = Instant::now();
            let out = Command::new(&config.node)
                .args(["-e", &script])
                .output()
                .expect("node runs");
            cold.push(t.elapsed());
            assert!(
                out.status.success(),
                "{}: {}",
                case.name,
                String::from_utf8_lossy(&out.stderr)
            );
            cold_answer = String::from_utf8_lossy(&out.stdout).trim().to_string();
        }
        let (w, c) = (median(warm), median(cold));
        println!(
            "{:<12} {:>14.1} {:>16.1} {:>7.1}×",
            case.name,
            ms(w),
            ms(c),
            c.as_secs_f64() / w.as_secs_f64()
        );
        println!("    warm answer {warm_answer} · node -e answer {cold_answer}");
    }
    let rss_after = node_rss_mib(launcher);
    let show = |v: Option<f64>| v.map_or("?".to_string(), |m| format!("{m:.0} MiB"));
    println!(
        "js_call: warm worker resident set: {} when ready, {} after {} calls",
        show(rss_ready),
        show(rss_after),
        WARM_CALLS * CASES.len()
    );
}
