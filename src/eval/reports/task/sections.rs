//! The task suite's report as a [`Document`]: its tables in the papers'
//! layouts, section by section.

use std::collections::BTreeSet;

use super::model::Report;
use crate::eval::metrics::errors::{geoagent_type, ErrorType, GEOAGENT_TYPES};
use crate::eval::metrics::llm_judge;
use crate::eval::reports::document::{f2, f3, Document, Table};

/// A cost for tables: dollars with cents (4 decimals under a cent),
/// `unknown` without a price.
fn dollars(x: Option<f64>) -> String {
    match x {
        Some(0.0) => "$0".into(),
        Some(x) if x < 0.01 => format!("${x:.4}"),
        Some(x) => format!("${x:.2}"),
        None => "unknown".into(),
    }
}

/// The models (backends) of the report's cells, in the cells' order.
fn models(report: &Report, keep: impl Fn(&str) -> bool) -> Vec<&str> {
    let mut models: Vec<&str> = Vec::new();
    for c in report.cells.iter().filter(|c| keep(&c.arch)) {
        if !models.contains(&c.backend.as_str()) {
            models.push(&c.backend);
        }
    }
    models
}

/// GISclaw Table 6's layout: one row per model (backend and flags), the
/// Single and Dual Agent side by side, the best S_comp per architecture in
/// bold, cost per sweep (every task once). Only when some cell is single
/// or dual.
fn side_by_side(doc: &mut Document, report: &Report) {
    const ARCHS: [&str; 2] = ["single", "dual"];
    let models = models(report, |a| ARCHS.contains(&a));
    if models.is_empty() {
        return;
    }
    let best: Vec<f64> = ARCHS
        .iter()
        .map(|a| {
            report
                .cells
                .iter()
                .filter(|c| c.arch == *a)
                .map(|c| c.composite)
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .collect();
    let mut columns = vec!["model".to_string()];
    for arch in ["SA", "DA"] {
        for what in [
            "R_s",
            "Q_out",
            "F_api",
            "C_emb",
            "S_comp (±CI)",
            "cost/sweep",
        ] {
            columns.push(format!("{arch} {what}"));
        }
    }
    let mut table = Table::new("Single and Dual Agent side by side (GISclaw Table 6 layout)", columns)
        .with_note("Per model, each architecture's R_s, Q_out (successful runs), F_api, C_emb, S_comp ± half the 95 % CI, and the cost of one sweep (every task once: the total over the runs per task). Bold: best S_comp per architecture.");
    for model in models {
        let mut row = vec![model.to_string()];
        for (a, arch) in ARCHS.iter().enumerate() {
            match report
                .cells
                .iter()
                .find(|c| c.backend == model && c.arch == *arch)
            {
                Some(c) => {
                    let s = format!(
                        "{} (±{})",
                        f3(c.composite),
                        f3((c.composite_ci.1 - c.composite_ci.0) / 2.0)
                    );
                    let s = if c.composite == best[a] {
                        format!("**{s}**")
                    } else {
                        s
                    };
                    row.extend([
                        f3(c.success_rate),
                        f3(c.q_out),
                        f3(c.f_api),
                        c.c_emb.map(f3).unwrap_or_else(|| "n/a".into()),
                        s,
                        dollars(c.cost_per_sweep),
                    ]);
                }
                None => row.extend(std::iter::repeat_n("–".to_string(), 6)),
            }
        }
        table.row(row);
    }
    doc.table(table);
}

/// GeoAgent Table 4's comparison on a task suite: per model, the LLM alone
/// (`--arch none`) beside each agent architecture it ran, by success rate
/// and S_comp. Only when some cell is the LLM alone.
fn alone_vs_agent(doc: &mut Document, report: &Report) {
    if !report.cells.iter().any(|c| c.arch == "none") {
        return;
    }
    let archs: Vec<&str> = ["none", "single", "dual", "mcts"]
        .into_iter()
        .filter(|a| report.cells.iter().any(|c| c.arch == *a))
        .collect();
    let name = |a: &str| match a {
        "none" => "LLM alone",
        "single" => "SA",
        "dual" => "DA",
        _ => "tree search",
    };
    let mut columns = vec!["model".to_string()];
    for a in &archs {
        columns.push(format!("{} R_s", name(a)));
        columns.push(format!("{} S_comp", name(a)));
    }
    let mut table = Table::new("LLM alone vs agent (cf. GeoAgent Table 4)", columns)
        .with_note("The LLM alone answers once with a script that runs once, unseen; the agents work with the sandbox's tools. Success rate and S_comp per model.");
    for model in models(report, |_| true) {
        let mut row = vec![model.to_string()];
        for a in &archs {
            match report
                .cells
                .iter()
                .find(|c| c.backend == model && c.arch == *a)
            {
                Some(c) => row.extend([f3(c.success_rate), f3(c.composite)]),
                None => row.extend(["–".to_string(), "–".to_string()]),
            }
        }
        table.row(row);
    }
    doc.table(table);
}

/// GeoAgent Table 3's layout for a `--rag` ablation: the function-call
/// metrics of the runs' code against the gold's (example-based, over the
/// functions each calls) without retrieval (@0) and with it (@3: the brief
/// carries 3 entries, and `search_docs` more).
fn rag_function_calls(doc: &mut Document, report: &Report, a: &super::model::Ablation) {
    let cell = |label: &str| report.cells.iter().find(|c| c.label == label);
    let (Some(with), Some(without)) = (cell(&a.with.label), cell(&a.without.label)) else {
        return;
    };
    let mut table = Table::new(
        "",
        [
            "retrieval",
            "accuracy",
            "precision",
            "recall",
            "F1",
            "Hamming loss",
        ],
    )
    .with_note(format!(
        "Function calls without and with retrieval (cf. GeoAgent Table 3), {}:",
        a.arch
    ));
    for (name, c) in [("@0 (no --rag)", without), ("@3 (--rag)", with)] {
        let m = &c.calls;
        table.row([
            name.to_string(),
            f3(m.accuracy),
            f3(m.precision),
            f3(m.recall),
            f3(m.f1),
            f3(m.hamming_loss),
        ]);
    }
    doc.table(table);
}

/// The cost–accuracy table: per cell, what a run costs against pass@1 and
/// the composite, ◆ marking the cells on each Pareto front.
fn cost_accuracy(doc: &mut Document, cost: &super::cost::CostAccuracy) {
    let mut table = Table::new(
        "Cost and accuracy",
        ["cell", "runs", "tokens", "USD", "wall s", "local CPU s", "pass@1", "front", "S_comp", "front"],
    )
    .with_note(format!("Per run: prompt + completion tokens, USD where the model is priced, wall seconds and the local model server's CPU seconds (local models gisclaw started), against pass@1 and S_comp. ◆ marks a cell on the Pareto front for that score: no other cell costs no more and scores higher (cost: {}).", cost.axis.describe()));
    let mark = |on: bool| if on { "◆" } else { "" }.to_string();
    for p in &cost.points {
        table.row([
            p.label.clone(),
            p.runs.to_string(),
            format!("{:.0}", p.tokens),
            p.usd.map_or("–".to_string(), |u| format!("{u:.4}")),
            format!("{:.1}", p.wall_seconds),
            p.model_cpu_seconds
                .map_or("–".to_string(), |s| format!("{s:.1}")),
            f3(p.pass_at_1),
            mark(p.front_pass_at_1),
            f3(p.composite),
            mark(p.front_composite),
        ]);
    }
    doc.table(table);
}

/// The report's opening: the composite, what is missing, how images were
/// graded.
fn preamble(doc: &mut Document, report: &Report) {
    for protocol in &report.protocols {
        doc.text(protocol.summary());
    }
    let w = &report.weights;
    doc.text(format!(
        "Composite S = {}·R_succ + {}·Q_out + {}·F_api + {}·C_emb (per run, then averaged; 95 % percentile-bootstrap CI).",
        w.success, w.output, w.api, w.embedding
    ));
    if !report.c_emb_models.is_empty() {
        doc.text(format!(
            "C_emb embedded by {} (GISclaw's paper: text-embedding-3-large).",
            report.c_emb_models.join(", ")
        ));
    }
    if report.c_emb_missing > 0 {
        doc.text(format!(
            "**C_emb is missing for {} run(s)** (the embedding model was not available when they were scored; `gisclaw doctor` says why): their S is renormalised over R_succ, Q_out and F_api.",
            report.c_emb_missing
        ));
    }
    doc.text(
        "C_emb (L2): cosine of the all-MiniLM-L6-v2 embeddings (384-d, run offline) of each run's cleaned log and its task's gold reference (expert workflow + gold run). \
         The paper used text-embedding-3-large, so C_emb values are not comparable with its Table 6.",
    );
    if report.missing_runs > 0 {
        let mut lines = vec![format!("**{} run(s) have no record** (not run yet or could not run): `gisclaw eval --resume` completes them.", report.missing_runs)];
        if !report.missing_by_shard.is_empty() {
            let shards: Vec<String> = report
                .missing_by_shard
                .iter()
                .map(|(dir, shard, n)| format!("{} shard {shard}: {n}", dir.display()))
                .collect();
            lines.push(format!("Without a record, per shard: {} (`gisclaw eval status DIR` shows which are running; re-running a shard makes only its missing runs).", shards.join("; ")));
        }
        if report.infrastructure_failures > 0 {
            lines.push(format!("{} of them could not be carried out (model server, network or sandbox failures, column `infrastructure` under Error types; `failed/` in the eval folder says why): they are not scored as the model's failures.", report.infrastructure_failures));
        }
        doc.text(lines.join("\n"));
    }
    let images: Vec<&crate::eval::metrics::output_score::OutputScore> = report
        .runs
        .iter()
        .flat_map(|(_, r, _)| r.outputs.iter())
        .filter(|o| o.kind == "image")
        .collect();
    let judged = images
        .iter()
        .filter(|o| o.parts.keys().any(|k| k.starts_with("vision_")))
        .count();
    if judged > 0 {
        doc.text(format!(
            "Image outputs: {judged} of {} graded by the vision judge (task completion, spatial accuracy, readability, cartography, data integrity, 1–5; the score is their mean over 5, SSIM kept as a part); the rest by SSIM against the gold image — a weak signal.",
            images.len()
        ));
    } else if !images.is_empty() {
        doc.text("Image outputs are scored by SSIM against the gold image — a weak signal (a correct map drawn differently scores low); `--vision-judge NAME` grades them with a vision model instead.");
    }
}

/// The task suite's report (without its charts and figures by label,
/// which [`super::write`] adds as it draws them).
pub fn document(report: &Report) -> Document {
    let mut doc = Document::titled("gisclaw eval report");
    preamble(&mut doc, report);
    // Under a preset that follows the paper's scoring, its figures lead.
    let paper_first = report.protocols.iter().any(|p| p.settings().paper_headline);
    if paper_first {
        as_the_paper_computes(&mut doc, report);
    }
    section_overall(&mut doc, report, !paper_first);
    section_paired(&mut doc, report);
    section_code(&mut doc, report);
    section_stability(&mut doc, report);
    section_errors(&mut doc, report);
    section_per_task(&mut doc, report);
    doc
}

/// The overall table (cf. GISclaw Table 6): one row per cell.
fn section_overall(doc: &mut Document, report: &Report, with_paper: bool) {
    let mut table = Table::new(
        "Overall (cf. GISclaw Table 6)",
        [
            "cell",
            "runs",
            "R_succ",
            "Q_out (succ.)",
            "F_api",
            "C_emb",
            "S_comp [95 % CI]",
            "tokens in / out per run",
            "cost",
        ],
    );
    for c in &report.cells {
        table.row([
            c.label.clone(),
            c.n.to_string(),
            f3(c.success_rate),
            f3(c.q_out),
            f3(c.f_api),
            c.c_emb.map(f3).unwrap_or_else(|| "n/a".into()),
            format!(
                "{} [{}, {}]",
                f3(c.composite),
                f3(c.composite_ci.0),
                f3(c.composite_ci.1)
            ),
            format!("{:.0} / {:.0}", c.tokens_in, c.tokens_out),
            c.cost_usd
                .map(|x| format!("${x:.4}"))
                .unwrap_or_else(|| "unknown".into()),
        ]);
    }
    doc.table(table);
    side_by_side(doc, report);
    alone_vs_agent(doc, report);
    if with_paper {
        as_the_paper_computes(doc, report);
    }
}

/// Q_out and S_comp as the GISclaw paper defines them, beside ours.
fn as_the_paper_computes(doc: &mut Document, report: &Report) {
    let mut table = Table::new(
        "As the GISclaw paper computes them (Eq. 1 on the cell's means, L3 as in §3.4)",
        ["cell", "Q_out (ours, succ.)", "Q_out (paper's L3, succ.)", "S_comp (ours)", "S_comp (paper's Eq. 1)"],
    )
    .with_note("Ours: S_comp is the mean of the runs' composites, each with its own Q_out (a failed run's partial outputs count); a vector output's score adds the geometry overlap to feature count, CRS and column overlap; a raster's MRE is Σ|p − g| / Σ|g|. The paper's: Eq. 1 on the cell's means with Q_out over the successful runs only (0 when none succeeded); a vector is scored by feature count, CRS and column overlap; a raster's MRE is the mean of the per-cell relative errors. –: a record made before the paper's scores were kept, or no C_emb.");
    let opt = |x: Option<f64>| x.map_or("–".to_string(), f3);
    for c in &report.cells {
        table.row([
            c.label.clone(),
            f3(c.q_out),
            opt(c.paper.q_out),
            f3(c.composite),
            opt(c.paper.composite),
        ]);
    }
    doc.table(table);
}

/// Single against dual (cf. Table 7) and the ablations (cf. Table 10).
fn section_paired(doc: &mut Document, report: &Report) {
    if !report.comparisons.is_empty() {
        let mut table = Table::new(
            "Single vs Dual Agent (cf. Table 7: paired Wilcoxon signed-rank on run composites; Cohen's d = mean Δ / SD(Δ), as in Table 10)",
            ["backend", "pairs", "mean Δ (SA − DA)", "median Δ", "W", "p", "method", "Cliff's δ", "Cohen's d"],
        );
        for c in &report.comparisons {
            let (wstat, p, method) = match &c.wilcoxon {
                Some(t) => (
                    f3(t.statistic),
                    format!("{:.3e}", t.p_value),
                    format!("{:?}", t.method).to_lowercase(),
                ),
                None => ("–".into(), "–".into(), "no pair differs".into()),
            };
            table.row([
                c.backend.clone(),
                c.n.to_string(),
                f3(c.mean_difference),
                f3(c.median_difference),
                wstat,
                p,
                method,
                f3(c.cliffs_delta),
                c.cohens_d.map_or("–".to_string(), f3),
            ]);
        }
        doc.table(table);
    }
    for a in &report.ablations {
        let mut table = Table::new(
            format!(
                "Ablation: {} ({}, cf. Table 10: paired by task, n = {})",
                a.flag, a.arch, a.n
            ),
            ["condition", "S_comp mean", "std", "successes"],
        );
        for side in [&a.with, &a.without] {
            table.row([
                side.label.clone(),
                f3(side.mean),
                f3(side.sd),
                format!("{}/{}", side.successes, side.runs),
            ]);
        }
        doc.table(table);
        let p = a
            .wilcoxon
            .as_ref()
            .map_or("– (no task differs)".to_string(), |w| {
                format!("{:.3e}", w.p_value)
            });
        doc.text(format!(
            "Mean per-task Δ (with − without) = {}; median Δ = {}; paired Wilcoxon p = {p}; Cohen's d = {}.",
            f3(a.mean_difference),
            f3(a.median_difference),
            a.cohens_d.map_or("–".to_string(), f3)
        ));
        if a.flag == "rag" {
            rag_function_calls(doc, report, a);
        }
    }
}

/// Code (L1, cf. Table 8), the LLM judge (cf. Table 9) and the tree search.
fn section_code(doc: &mut Document, report: &Report) {
    let mut table = Table::new(
        "Code (L1, cf. Table 8)",
        [
            "cell",
            "BLEU-4",
            "ROUGE-L",
            "edit sim.",
            "CodeBLEU",
            "API P",
            "API R",
            "API F1",
            "call acc.",
            "call P",
            "call R",
            "call F1",
            "Hamming loss",
        ],
    );
    for c in &report.cells {
        table.row([
            c.label.clone(),
            f3(c.bleu4),
            f3(c.rouge_l),
            f3(c.edit_similarity),
            c.codebleu.map(f3).unwrap_or_else(|| "–".into()),
            f3(c.api_precision),
            f3(c.api_recall),
            f3(c.f_api),
            f3(c.calls.accuracy),
            f3(c.calls.precision),
            f3(c.calls.recall),
            f3(c.calls.f1),
            f3(c.calls.hamming_loss),
        ]);
    }
    doc.table(table);
    if report.cells.iter().any(|c| c.judge.is_some()) {
        let judges: BTreeSet<String> = report
            .cells
            .iter()
            .filter_map(|c| c.judge.as_ref())
            .flat_map(|j| j.models.iter().cloned())
            .collect();
        let mut columns = vec!["cell".to_string(), "judged".into(), "failed".into()];
        columns.extend(
            llm_judge::DIMENSIONS
                .iter()
                .map(|(k, _)| k.replace('_', " ")),
        );
        columns.push("mean".into());
        let mut table = Table::new(
            "LLM-as-judge (L2 diagnostic, cf. Table 9; not in the composite)",
            columns,
        )
        .with_note(format!(
            "Mean grades 1–5 over the judged runs; judge: {}.",
            judges.into_iter().collect::<Vec<_>>().join(", ")
        ));
        for c in &report.cells {
            let Some(j) = &c.judge else { continue };
            let mut row = vec![c.label.clone(), j.judged.to_string(), j.failed.to_string()];
            row.extend(j.means.iter().map(|(_, m)| f2(*m)));
            row.push(f2(j.overall));
            table.row(row);
        }
        doc.table(table);
    }
    if report.cells.iter().any(|c| c.search.is_some()) {
        let mut table = Table::new(
            "Tree search (`--arch mcts`, means per run)",
            ["cell", "runs", "success", "nodes", "expansions", "ran", "failed", "pruned (static analysis)", "repairs", "repairs that ran", "rollouts"],
        )
        .with_note("A cell whose label says `mcts rollout` rewarded its nodes by rollouts (`--mcts-rollout`); put a folder with and one without it side by side with `gisclaw eval report A B`.");
        for c in &report.cells {
            let Some(t) = &c.search else { continue };
            let mut row = vec![c.label.clone(), t.runs.to_string(), f3(c.success_rate)];
            row.extend(
                [
                    t.nodes,
                    t.expansions,
                    t.ran,
                    t.failed,
                    t.pruned,
                    t.repairs,
                    t.repairs_ran,
                    t.rollouts,
                ]
                .map(|x| format!("{x:.1}")),
            );
            table.row(row);
        }
        doc.table(table);
    }
}

/// Stability, efficiency, weight sensitivity, reproduction and honest refusal.
fn section_stability(doc: &mut Document, report: &Report) {
    let mut table = Table::new(
        "Stability and efficiency",
        [
            "cell",
            "pass@k",
            "CV",
            "SA = pass@k_max/(1+CV)",
            "rounds",
            "LLM s",
            "sandbox s",
            "code lines",
            "inference eff. (/s)",
            "token eff. (/1k tok)",
            "code-line eff. (/100 lines)",
        ],
    );
    for c in &report.cells {
        let pass: Vec<String> = c
            .pass_at
            .iter()
            .map(|(k, v)| format!("@{k} {}", f3(*v)))
            .collect();
        table.row([
            c.label.clone(),
            pass.join(", "),
            f3(c.cv),
            f3(c.stability_adjusted),
            format!("{:.1}", c.rounds),
            format!("{:.1}", c.llm_seconds),
            format!("{:.1}", c.sandbox_seconds),
            format!("{:.0}", c.code_lines),
            f3(c.inference_efficiency),
            f3(c.token_efficiency * 1000.0),
            f3(c.code_line_efficiency * 100.0),
        ]);
    }
    doc.table(table);
    cost_accuracy(doc, &report.cost);
    weight_sensitivity(doc, report);
    if report.cells.iter().any(|c| c.reproduced.is_some()) {
        let mut table = Table::new("Reproduction", ["cell", "reproduced", "rate"])
            .with_note("After each finished run (`--reproduce`), its `solution.py` ran again in a fresh session on the same inputs, and the outputs it made were compared with the run's (the L3 comparison, or exact bytes): runs whose record remade every output, of the finished runs checked.");
        for c in &report.cells {
            match c.reproduced {
                Some((ok, tried)) => table.row([
                    c.label.clone(),
                    format!("{ok}/{tried}"),
                    f3(ok as f64 / tried as f64),
                ]),
                None => table.row([c.label.clone(), "–".into(), "–".into()]),
            }
        }
        doc.table(table);
    }
    if report.cells.iter().any(|c| c.refusal.is_some()) {
        let mut table = Table::new(
            "Honest refusal",
            ["cell", "unsolvable runs", "correct declines", "correct-decline rate", "solvable runs", "false declines", "false-decline rate"],
        )
        .with_note("Tasks marked `solvable: false` cannot be answered from their data: a run succeeds only by declining them (S = 1; anything else, S = 0). A decline of a task that can be done fails (S = 0). Correct-decline rate: declines per unsolvable run; false-decline rate: declines per solvable run.");
        let rate = |r: Option<f64>| r.map_or("–".to_string(), f3);
        for c in &report.cells {
            if let Some(r) = &c.refusal {
                table.row([
                    c.label.clone(),
                    r.unsolvable_runs.to_string(),
                    r.correct_declines.to_string(),
                    rate(r.correct_rate()),
                    r.solvable_runs.to_string(),
                    r.false_declines.to_string(),
                    rate(r.false_rate()),
                ]);
            }
        }
        doc.table(table);
    }
}

/// The weight sweep's Kendall τ against the default ranking, in a sentence.
fn weight_sensitivity(doc: &mut Document, report: &Report) {
    let Some(s) = &report.sweep else { return };
    doc.heading("Weight sensitivity");
    if s.defined == 0 {
        doc.text(format!(
            "The {} cells tie under all {} weight tuples: Kendall τ is undefined.",
            report.cells.len(),
            s.tuples
        ));
    } else {
        doc.text(format!(
            "The {} cells re-ranked under each of the {} weight tuples (each weight in {{0.1, …, 0.5}}, summing to 1): Kendall τ-b against the default ranking has median {}, range {}–{}; τ ≥ 0.9 for {} of {} tuples.{}",
            report.cells.len(),
            s.tuples,
            f3(s.tau_median),
            f3(s.tau_min),
            f3(s.tau_max),
            s.at_least_0_9,
            s.defined,
            if report.cells.len() < 3 { " (With fewer than three cells τ can only be ±1.)" } else { "" }
        ));
    }
}

/// Error types (ours and GeoAgent's four), vision feedback and run-to-run variance.
fn section_errors(doc: &mut Document, report: &Report) {
    let mut columns = vec!["cell".to_string()];
    columns.extend(ErrorType::ALL.iter().map(|e| e.name().to_string()));
    columns.push("finished with failing checks".into());
    let mut table = Table::new("Error types", columns)
        .with_note("Failed runs (and failed cells) by type: `runtime` is an exception or a worker crash, `timeout` a cell stopped at its time limit or a run out of its budget, `infrastructure` a run that could not be carried out (no record, not scored); the last column counts runs that finished although their output checks still failed (after one refused `finish`).");
    for c in &report.cells {
        let mut row = vec![c.label.clone()];
        row.extend(ErrorType::ALL.iter().map(|e| {
            let runs = c.run_errors.get(e.name()).copied().unwrap_or(0);
            let cells = c.cell_errors.get(e.name()).copied().unwrap_or(0);
            format!("{runs} ({cells})")
        }));
        row.push(c.finished_with_warnings.to_string());
        table.row(row);
    }
    doc.table(table);
    let mut columns = vec!["cell".to_string()];
    columns.extend(GEOAGENT_TYPES.iter().map(|t| t.to_string()));
    let mut table = Table::new("", columns).with_note("The failed runs in GeoAgent's four types (instruction following = `invalid_answer`, `output_type`; hallucination = `attribute_parameter`; general code = the other types of the model's; lack of information, judged by hand in GeoAgent, is not told apart: –; `infrastructure` is not the model's and is left out):");
    for c in &report.cells {
        let mut row = vec![c.label.clone()];
        row.extend(GEOAGENT_TYPES.iter().map(|t| {
            if *t == "lack of information" {
                return "–".to_string();
            }
            let n: usize = ErrorType::ALL
                .iter()
                .filter(|e| geoagent_type(**e) == Some(t))
                .map(|e| c.run_errors.get(e.name()).copied().unwrap_or(0))
                .sum();
            n.to_string()
        }));
        table.row(row);
    }
    doc.table(table);
    if report.cells.iter().any(|c| c.images_shown > 0.0) {
        let mut table = Table::new("Vision feedback", ["cell", "figures shown", "image tokens"])
            .with_note("Figures shown to the model after the cells that wrote them, per run (mean), and their prompt tokens estimated by OpenAI's tile rule (85 + 170 per 512-px tile; the servers' own counts are in the tokens above).");
        for c in &report.cells {
            table.row([
                c.label.clone(),
                format!("{:.1}", c.images_shown),
                format!("{:.0}", c.image_tokens),
            ]);
        }
        doc.table(table);
    }
    variance(doc, report);
}

/// Run-to-run variance (cf. §4.1.5), when some task ran more than once.
fn variance(doc: &mut Document, report: &Report) {
    if !report.cells.iter().any(|c| c.variance.tasks > 0) {
        return;
    }
    let span = super::model::WIDE_SPAN;
    let mut table = Table::new(
        "Run-to-run variance (cf. §4.1.5)",
        [
            "cell".to_string(),
            "tasks".into(),
            "success flips".into(),
            format!("span > {span}"),
            "mean SD".into(),
            "widest task (runs)".into(),
        ],
    )
    .with_note(format!("Tasks run more than once: how many flip between success and failure, how many have a composite spanning more than {span} across runs, the mean per-task SD of the composite, and the widest task with its runs' composites."));
    for c in &report.cells {
        let v = &c.variance;
        let widest = v.widest.as_ref().map_or("–".to_string(), |(task, runs)| {
            let runs: Vec<String> = runs.iter().map(|x| f3(*x)).collect();
            format!("{task} ({})", runs.join(", "))
        });
        table.row([
            c.label.clone(),
            v.tasks.to_string(),
            v.success_flips.to_string(),
            v.wide.to_string(),
            f3(v.mean_sd),
            widest,
        ]);
    }
    doc.table(table);
}

/// Per task, and the gold runs with problems.
fn section_per_task(doc: &mut Document, report: &Report) {
    let mut columns = vec!["task".to_string()];
    columns.extend(report.cells.iter().map(|c| c.label.clone()));
    let mut table = Table::new("Per task (successes/runs, mean Q_out, mean S)", columns);
    for t in &report.tasks {
        let gold = if report.gold_problems.contains_key(&t.task) {
            " (gold failed)"
        } else {
            ""
        };
        let mut row = vec![format!("{}{gold}", t.task)];
        row.extend(t.cells.iter().map(|c| {
            format!(
                "{}/{} · Q {} · S {}",
                c.successes,
                c.runs,
                f3(c.q_out),
                f3(c.composite)
            )
        }));
        table.row(row);
    }
    doc.table(table);
    if !report.gold_problems.is_empty() {
        doc.heading("Gold runs with problems");
        let lines: Vec<String> = report
            .gold_problems
            .iter()
            .map(|(task, problems)| format!("- {task}: {}", problems.join("; ")))
            .collect();
        doc.text(lines.join("\n"));
    }
}
