//! `gisclaw bench verify|expect` on a GeoJSEval suite: runs every
//! selected task's reference and second route in the confined JavaScript
//! runtime and prints what agrees, per library.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::ExitCode;

use gisclaw::bench::geojs::{self, JsSuite, EXPECTED};
use gisclaw::bench::select::Selection;
use gisclaw::js::{JsConfig, JsRuntime};

use super::common::UsageError;

/// Verifies (or, with `record`, records) the suite at `suite`.
pub fn verify(suite: &Path, tasks: Option<&str>, record: bool) -> anyhow::Result<ExitCode> {
    let selection =
        Selection::parse(tasks.unwrap_or("")).map_err(|e| UsageError(format!("--tasks {e}")))?;
    let loaded = JsSuite::load(suite).map_err(|e| UsageError(e.to_string()))?;
    let mut chosen = loaded.clone();
    if chosen.retain(&selection) == 0 {
        return Err(UsageError(format!("{}: no task selected", suite.display())).into());
    }
    let selected: BTreeSet<String> = chosen.labels().into_keys().collect();
    let keep = |key: &str| selected.contains(key.split('#').next().unwrap_or_default());
    let cases = chosen.instances().len();
    let mut runtime = JsRuntime::new(JsConfig::installed()?);
    let info = runtime.worker()?.info().clone();
    say!(
        "gisclaw: Node {} with {}",
        info.node,
        info.libraries
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let bar = super::bench::bar(cases * if record { 1 } else { 2 });
    let progress = |_: usize| {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    };
    let started = std::time::Instant::now();
    let ran = geojs::run_all(&mut runtime, &loaded, false, &keep, &progress)?;
    if record {
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }
        let n = geojs::record(&loaded, &ran).map_err(|e| anyhow::anyhow!(e))?;
        say!(
            "gisclaw: {n} answers recorded in {}",
            suite.join(EXPECTED).display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let verdicts = geojs::verify(&loaded, &ran, false);
    let routes = geojs::run_all(&mut runtime, &loaded, true, &keep, &progress)?;
    let second = geojs::verify(&loaded, &routes, true);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let task_of = |key: &str| key.split('#').next().unwrap_or_default().to_string();
    let library_of = |key: &str| key.split('/').next().unwrap_or_default().to_string();
    // library → (tasks, cases, agree, confirmed)
    let mut table: BTreeMap<String, (BTreeSet<String>, usize, usize, usize)> = BTreeMap::new();
    for v in &verdicts {
        let row = table.entry(library_of(&v.key)).or_default();
        row.0.insert(task_of(&v.key));
        row.1 += 1;
        row.2 += usize::from(v.problem.is_none());
    }
    for v in second.iter().filter(|v| v.problem.is_none()) {
        table.entry(library_of(&v.key)).or_default().3 += 1;
    }
    say!(
        "{:<10} {:>6} {:>6} {:>6} {:>10}",
        "library",
        "tasks",
        "cases",
        "agree",
        "confirmed"
    );
    for (library, (tasks, n, ok, confirmed)) in &table {
        say!(
            "{library:<10} {:>6} {n:>6} {ok:>6} {confirmed:>10}",
            tasks.len()
        );
    }
    let types: BTreeSet<String> = chosen.tasks().map(|(_, t)| t.output_type.name()).collect();
    let unconfirmed: Vec<String> = chosen
        .tasks()
        .filter(|(_, t)| t.confirm.is_none())
        .map(|(l, t)| format!("{}/{}", l.name(), t.id))
        .collect();
    let failed: Vec<_> = verdicts
        .iter()
        .chain(&second)
        .filter(|v| v.problem.is_some())
        .collect();
    for v in &failed {
        say!("  {}: {}", v.key, v.problem.as_deref().unwrap_or_default());
    }
    for key in &unconfirmed {
        say!("  {key}: no second route");
    }
    let agree = verdicts.iter().filter(|v| v.problem.is_none()).count();
    let second_agree = second.iter().filter(|v| v.problem.is_none()).count();
    say!(
        "gisclaw: {agree}/{} reference answers agree with {EXPECTED} ({} tasks, {} output types); second routes: {second_agree}/{} agree; {:.1} s, {} worker start(s)",
        verdicts.len(),
        selected.len(),
        types.len(),
        second.len(),
        started.elapsed().as_secs_f64(),
        runtime.starts,
    );
    Ok(if failed.is_empty() && unconfirmed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
