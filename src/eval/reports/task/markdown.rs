//! `report.md`: the tables in the papers' layouts.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::model::Report;
use crate::eval::metrics::errors::{geoagent_type, ErrorType, GEOAGENT_TYPES};
use crate::eval::metrics::llm_judge;

/// A number for tables: 3 decimals, `–` for NaN.
pub(super) fn f3(x: f64) -> String {
    if x.is_nan() {
        "–".into()
    } else {
        format!("{x:.3}")
    }
}

/// A grade mean for tables: 2 decimals, `–` for NaN.
fn f2(x: f64) -> String {
    if x.is_nan() {
        "–".into()
    } else {
        format!("{x:.2}")
    }
}

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

/// GISclaw Table 6's layout: one row per model (backend and flags), the
/// Single and Dual Agent side by side, the best S_comp per architecture in
/// bold, cost per sweep (every task once). Only when some cell is single
/// or dual.
fn side_by_side(md: &mut String, report: &Report) {
    const ARCHS: [&str; 2] = ["single", "dual"];
    let mut models: Vec<&str> = Vec::new();
    for c in report
        .cells
        .iter()
        .filter(|c| ARCHS.contains(&c.arch.as_str()))
    {
        if !models.contains(&c.backend.as_str()) {
            models.push(&c.backend);
        }
    }
    if models.is_empty() {
        return;
    }
    let cell = |model: &str, arch: &str| {
        report
            .cells
            .iter()
            .find(|c| c.backend == model && c.arch == arch)
    };
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
    md.push_str("\n## Single and Dual Agent side by side (GISclaw Table 6 layout)\n\nPer model, each architecture's R_s, Q_out (successful runs), F_api, C_emb, S_comp ± half the 95 % CI, and the cost of one sweep (every task once: the total over the runs per task). Bold: best S_comp per architecture.\n\n| model | SA R_s | SA Q_out | SA F_api | SA C_emb | SA S_comp (±CI) | SA cost/sweep | DA R_s | DA Q_out | DA F_api | DA C_emb | DA S_comp (±CI) | DA cost/sweep |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for model in models {
        let _ = write!(md, "| {model} |");
        for (a, arch) in ARCHS.iter().enumerate() {
            match cell(model, arch) {
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
                    let _ = write!(
                        md,
                        " {} | {} | {} | {} | {s} | {} |",
                        f3(c.success_rate),
                        f3(c.q_out),
                        f3(c.f_api),
                        c.c_emb.map(f3).unwrap_or_else(|| "n/a".into()),
                        dollars(c.cost_per_sweep)
                    );
                }
                None => md.push_str(&" – |".repeat(6)),
            }
        }
        md.push('\n');
    }
}

/// GeoAgent Table 4's comparison on a task suite: per model, the LLM alone
/// (`--arch none`) beside each agent architecture it ran, by success rate
/// and S_comp. Only when some cell is the LLM alone.
fn alone_vs_agent(md: &mut String, report: &Report) {
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
    md.push_str("\n## LLM alone vs agent (cf. GeoAgent Table 4)\n\nThe LLM alone answers once with a script that runs once, unseen; the agents work with the sandbox's tools. Success rate and S_comp per model.\n\n| model |");
    for a in &archs {
        let _ = write!(md, " {} R_s | {} S_comp |", name(a), name(a));
    }
    md.push_str("\n|---|");
    md.push_str(&"---|---|".repeat(archs.len()));
    md.push('\n');
    let mut models: Vec<&str> = Vec::new();
    for c in &report.cells {
        if !models.contains(&c.backend.as_str()) {
            models.push(&c.backend);
        }
    }
    for model in models {
        let _ = write!(md, "| {model} |");
        for a in &archs {
            match report
                .cells
                .iter()
                .find(|c| c.backend == model && c.arch == *a)
            {
                Some(c) => {
                    let _ = write!(md, " {} | {} |", f3(c.success_rate), f3(c.composite));
                }
                None => md.push_str(" – | – |"),
            }
        }
        md.push('\n');
    }
}

/// GeoAgent Table 3's layout for a `--rag` ablation: the function-call
/// metrics of the runs' code against the gold's (example-based, over the
/// functions each calls) without retrieval (@0) and with it (@3: the brief
/// carries 3 entries, and `search_docs` more).
fn rag_function_calls(md: &mut String, report: &Report, a: &super::model::Ablation) {
    let cell = |label: &str| report.cells.iter().find(|c| c.label == label);
    let (Some(with), Some(without)) = (cell(&a.with.label), cell(&a.without.label)) else {
        return;
    };
    let _ = write!(
        md,
        "\nFunction calls without and with retrieval (cf. GeoAgent Table 3), {}:\n\n| retrieval | accuracy | precision | recall | F1 | Hamming loss |\n|---|---|---|---|---|---|\n",
        a.arch
    );
    for (name, c) in [("@0 (no --rag)", without), ("@3 (--rag)", with)] {
        let m = &c.calls;
        let _ = writeln!(
            md,
            "| {name} | {} | {} | {} | {} | {} |",
            f3(m.accuracy),
            f3(m.precision),
            f3(m.recall),
            f3(m.f1),
            f3(m.hamming_loss)
        );
    }
}

/// The cost–accuracy table: per cell, what a run costs against pass@1 and
/// the composite, ◆ marking the cells on each Pareto front.
fn cost_accuracy(md: &mut String, cost: &super::cost::CostAccuracy) {
    let _ = write!(
        md,
        "\n## Cost and accuracy\n\nPer run: prompt + completion tokens, USD where the model is priced, wall seconds and the local model server's CPU seconds (local models gisclaw started), against pass@1 and S_comp. ◆ marks a cell on the Pareto front for that score: no other cell costs no more and scores higher (cost: {}).\n\n| cell | runs | tokens | USD | wall s | local CPU s | pass@1 | front | S_comp | front |\n|---|---|---|---|---|---|---|---|---|---|\n",
        cost.axis.describe()
    );
    let mark = |on: bool| if on { "◆" } else { "" };
    for p in &cost.points {
        let _ = writeln!(
            md,
            "| {} | {} | {:.0} | {} | {:.1} | {} | {} | {} | {} | {} |",
            p.label,
            p.runs,
            p.tokens,
            p.usd.map_or("–".to_string(), |u| format!("{u:.4}")),
            p.wall_seconds,
            p.model_cpu_seconds
                .map_or("–".to_string(), |s| format!("{s:.1}")),
            f3(p.pass_at_1),
            mark(p.front_pass_at_1),
            f3(p.composite),
            mark(p.front_composite)
        );
    }
}

/// `report.md`.
pub fn markdown(report: &Report) -> String {
    let mut md = String::from("# gisclaw eval report\n\n");
    let w = &report.weights;
    let _ = writeln!(
        md,
        "Composite S = {}·R_succ + {}·Q_out + {}·F_api + {}·C_emb (per run, then averaged; 95 % percentile-bootstrap CI).",
        w.success, w.output, w.api, w.embedding
    );
    if report.c_emb_missing > 0 {
        let _ = writeln!(
            md,
            "\n**C_emb is missing for {} run(s)** (the embedding model was not available when they were scored; `gisclaw doctor` says why): their S is renormalised over R_succ, Q_out and F_api.",
            report.c_emb_missing
        );
    }
    md.push_str(
        "\nC_emb (L2): cosine of the all-MiniLM-L6-v2 embeddings (384-d, run offline) of each run's cleaned log and its task's gold reference (expert workflow + gold run). \
         The paper used text-embedding-3-large, so C_emb values are not comparable with its Table 6.\n",
    );
    if report.missing_runs > 0 {
        let _ = writeln!(md, "\n**{} run(s) have no record** (not run yet or could not run): `gisclaw eval --resume` completes them.", report.missing_runs);
        if !report.missing_by_shard.is_empty() {
            let shards: Vec<String> = report
                .missing_by_shard
                .iter()
                .map(|(dir, shard, n)| format!("{} shard {shard}: {n}", dir.display()))
                .collect();
            let _ = writeln!(md, "Without a record, per shard: {} (`gisclaw eval status DIR` shows which are running; re-running a shard makes only its missing runs).", shards.join("; "));
        }
        if report.infrastructure_failures > 0 {
            let _ = writeln!(md, "{} of them could not be carried out (model server, network or sandbox failures, column `infrastructure` under Error types; `failed/` in the eval folder says why): they are not scored as the model's failures.", report.infrastructure_failures);
        }
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
        let _ = writeln!(
            md,
            "\nImage outputs: {judged} of {} graded by the vision judge (task completion, spatial accuracy, readability, cartography, data integrity, 1–5; the score is their mean over 5, SSIM kept as a part); the rest by SSIM against the gold image — a weak signal.",
            images.len()
        );
    } else if !images.is_empty() {
        md.push_str("\nImage outputs are scored by SSIM against the gold image — a weak signal (a correct map drawn differently scores low); `--vision-judge NAME` grades them with a vision model instead.\n");
    }

    section_overall(&mut md, report);
    section_paired(&mut md, report);
    section_code(&mut md, report);
    section_stability(&mut md, report);
    section_errors(&mut md, report);
    section_per_task(&mut md, report);
    md
}

/// The overall table (cf. GISclaw Table 6): one row per cell.
fn section_overall(md: &mut String, report: &Report) {
    md.push_str("\n## Overall (cf. GISclaw Table 6)\n\n| cell | runs | R_succ | Q_out (succ.) | F_api | C_emb | S_comp [95 % CI] | tokens in / out per run | cost |\n|---|---|---|---|---|---|---|---|---|\n");
    for c in &report.cells {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} [{}, {}] | {:.0} / {:.0} | {} |",
            c.label,
            c.n,
            f3(c.success_rate),
            f3(c.q_out),
            f3(c.f_api),
            c.c_emb.map(f3).unwrap_or_else(|| "n/a".into()),
            f3(c.composite),
            f3(c.composite_ci.0),
            f3(c.composite_ci.1),
            c.tokens_in,
            c.tokens_out,
            c.cost_usd
                .map(|x| format!("${x:.4}"))
                .unwrap_or_else(|| "unknown".into())
        );
    }
    side_by_side(md, report);
    alone_vs_agent(md, report);
}

/// Single against dual (cf. Table 7) and the ablations (cf. Table 10).
fn section_paired(md: &mut String, report: &Report) {
    if !report.comparisons.is_empty() {
        md.push_str("\n## Single vs Dual Agent (cf. Table 7: paired Wilcoxon signed-rank on run composites; Cohen's d = mean Δ / SD(Δ), as in Table 10)\n\n| backend | pairs | mean Δ (SA − DA) | median Δ | W | p | method | Cliff's δ | Cohen's d |\n|---|---|---|---|---|---|---|---|---|\n");
        for c in &report.comparisons {
            let (wstat, p, method) = match &c.wilcoxon {
                Some(t) => (
                    f3(t.statistic),
                    format!("{:.3e}", t.p_value),
                    format!("{:?}", t.method).to_lowercase(),
                ),
                None => ("–".into(), "–".into(), "no pair differs".into()),
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {wstat} | {p} | {method} | {} | {} |",
                c.backend,
                c.n,
                f3(c.mean_difference),
                f3(c.median_difference),
                f3(c.cliffs_delta),
                c.cohens_d.map_or("–".to_string(), f3)
            );
        }
    }
    for a in &report.ablations {
        let _ = write!(
            md,
            "\n## Ablation: {} ({}, cf. Table 10: paired by task, n = {})\n\n| condition | S_comp mean | std | successes |\n|---|---|---|---|\n",
            a.flag, a.arch, a.n
        );
        for side in [&a.with, &a.without] {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {}/{} |",
                side.label,
                f3(side.mean),
                f3(side.sd),
                side.successes,
                side.runs
            );
        }
        let p = a
            .wilcoxon
            .as_ref()
            .map_or("– (no task differs)".to_string(), |w| {
                format!("{:.3e}", w.p_value)
            });
        let _ = writeln!(
            md,
            "\nMean per-task Δ (with − without) = {}; median Δ = {}; paired Wilcoxon p = {p}; Cohen's d = {}.",
            f3(a.mean_difference),
            f3(a.median_difference),
            a.cohens_d.map_or("–".to_string(), f3)
        );
        if a.flag == "rag" {
            rag_function_calls(md, report, a);
        }
    }
}

/// Code (L1, cf. Table 8), the LLM judge (cf. Table 9) and the tree search.
fn section_code(md: &mut String, report: &Report) {
    md.push_str("\n## Code (L1, cf. Table 8)\n\n| cell | BLEU-4 | ROUGE-L | edit sim. | CodeBLEU | API P | API R | API F1 | call acc. | call P | call R | call F1 | Hamming loss |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for c in &report.cells {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.label,
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
            f3(c.calls.hamming_loss)
        );
    }
    if report.cells.iter().any(|c| c.judge.is_some()) {
        let heads: Vec<&str> = llm_judge::DIMENSIONS.iter().map(|(k, _)| *k).collect();
        let _ = write!(
            md,
            "\n## LLM-as-judge (L2 diagnostic, cf. Table 9; not in the composite)\n\nMean grades 1–5 over the judged runs; judge: {}.\n\n| cell | judged | failed | {} | mean |\n|---|---|---|{}---|\n",
            report.cells.iter().filter_map(|c| c.judge.as_ref()).flat_map(|j| j.models.iter().cloned()).collect::<BTreeSet<String>>().into_iter().collect::<Vec<_>>().join(", "),
            heads.join(" | ").replace('_', " "),
            "---|".repeat(heads.len())
        );
        for c in &report.cells {
            let Some(j) = &c.judge else { continue };
            let grades: Vec<String> = j.means.iter().map(|(_, m)| f2(*m)).collect();
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                c.label,
                j.judged,
                j.failed,
                grades.join(" | "),
                f2(j.overall)
            );
        }
    }
    if report.cells.iter().any(|c| c.search.is_some()) {
        md.push_str("\n## Tree search (`--arch mcts`, means per run)\n\nA cell whose label says `mcts rollout` rewarded its nodes by rollouts (`--mcts-rollout`); put a folder with and one without it side by side with `gisclaw eval report A B`.\n\n| cell | runs | success | nodes | expansions | ran | failed | pruned (static analysis) | repairs | repairs that ran | rollouts |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
        for c in &report.cells {
            let Some(t) = &c.search else { continue };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
                c.label,
                t.runs,
                f3(c.success_rate),
                t.nodes,
                t.expansions,
                t.ran,
                t.failed,
                t.pruned,
                t.repairs,
                t.repairs_ran,
                t.rollouts
            );
        }
    }
}

/// Stability, efficiency, weight sensitivity, reproduction and honest refusal.
fn section_stability(md: &mut String, report: &Report) {
    md.push_str("\n## Stability and efficiency\n\n| cell | pass@k | CV | SA = pass@k_max/(1+CV) | rounds | LLM s | sandbox s | code lines | inference eff. (/s) | token eff. (/1k tok) | code-line eff. (/100 lines) |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for c in &report.cells {
        let pass: Vec<String> = c
            .pass_at
            .iter()
            .map(|(k, v)| format!("@{k} {}", f3(*v)))
            .collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.0} | {} | {} | {} |",
            c.label,
            pass.join(", "),
            f3(c.cv),
            f3(c.stability_adjusted),
            c.rounds,
            c.llm_seconds,
            c.sandbox_seconds,
            c.code_lines,
            f3(c.inference_efficiency),
            f3(c.token_efficiency * 1000.0),
            f3(c.code_line_efficiency * 100.0)
        );
    }
    cost_accuracy(md, &report.cost);
    if let Some(s) = report.sweep.as_ref().filter(|s| s.defined == 0) {
        let _ = writeln!(
            md,
            "\n## Weight sensitivity\n\nThe {} cells tie under all {} weight tuples: Kendall τ is undefined.",
            report.cells.len(),
            s.tuples
        );
    }
    if let Some(s) = report.sweep.as_ref().filter(|s| s.defined > 0) {
        let _ = writeln!(
            md,
            "\n## Weight sensitivity\n\nThe {} cells re-ranked under each of the {} weight tuples (each weight in {{0.1, …, 0.5}}, summing to 1): Kendall τ-b against the default ranking has median {}, range {}–{}; τ ≥ 0.9 for {} of {} tuples.{}",
            report.cells.len(),
            s.tuples,
            f3(s.tau_median),
            f3(s.tau_min),
            f3(s.tau_max),
            s.at_least_0_9,
            s.defined,
            if report.cells.len() < 3 { " (With fewer than three cells τ can only be ±1.)" } else { "" }
        );
    }
    if report.cells.iter().any(|c| c.reproduced.is_some()) {
        md.push_str("\n## Reproduction\n\nAfter each finished run (`--reproduce`), its `solution.py` ran again in a fresh session on the same inputs, and the outputs it made were compared with the run's (the L3 comparison, or exact bytes): runs whose record remade every output, of the finished runs checked.\n\n| cell | reproduced | rate |\n|---|---|---|\n");
        for c in &report.cells {
            match c.reproduced {
                Some((ok, tried)) => {
                    let _ = writeln!(
                        md,
                        "| {} | {ok}/{tried} | {} |",
                        c.label,
                        f3(ok as f64 / tried as f64)
                    );
                }
                None => {
                    let _ = writeln!(md, "| {} | – | – |", c.label);
                }
            }
        }
    }
    if report.cells.iter().any(|c| c.refusal.is_some()) {
        md.push_str("\n## Honest refusal\n\nTasks marked `solvable: false` cannot be answered from their data: a run succeeds only by declining them (S = 1; anything else, S = 0). A decline of a task that can be done fails (S = 0). Correct-decline rate: declines per unsolvable run; false-decline rate: declines per solvable run.\n\n| cell | unsolvable runs | correct declines | correct-decline rate | solvable runs | false declines | false-decline rate |\n|---|---|---|---|---|---|---|\n");
        let rate = |r: Option<f64>| r.map_or("–".to_string(), f3);
        for c in &report.cells {
            if let Some(r) = &c.refusal {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {} | {} | {} |",
                    c.label,
                    r.unsolvable_runs,
                    r.correct_declines,
                    rate(r.correct_rate()),
                    r.solvable_runs,
                    r.false_declines,
                    rate(r.false_rate())
                );
            }
        }
    }
}

/// Error types (ours and GeoAgent\'s four), vision feedback and run-to-run variance.
fn section_errors(md: &mut String, report: &Report) {
    md.push_str("\n## Error types\n\nFailed runs (and failed cells) by type: `runtime` is an exception or a worker crash, `timeout` a cell stopped at its time limit or a run out of its budget, `infrastructure` a run that could not be carried out (no record, not scored); the last column counts runs that finished although their output checks still failed (after one refused `finish`).\n\n| cell |");
    for e in ErrorType::ALL {
        let _ = write!(md, " {} |", e.name());
    }
    md.push_str(" finished with failing checks |\n|---|");
    md.push_str(&"---|".repeat(ErrorType::ALL.len() + 1));
    md.push('\n');
    for c in &report.cells {
        let _ = write!(md, "| {} |", c.label);
        for e in ErrorType::ALL {
            let runs = c.run_errors.get(e.name()).copied().unwrap_or(0);
            let cells = c.cell_errors.get(e.name()).copied().unwrap_or(0);
            let _ = write!(md, " {runs} ({cells}) |");
        }
        let _ = writeln!(md, " {} |", c.finished_with_warnings);
    }
    md.push_str("\nThe failed runs in GeoAgent's four types (instruction following = `invalid_answer`, `output_type`; hallucination = `attribute_parameter`; general code = the other types of the model's; lack of information, judged by hand in GeoAgent, is not told apart: –; `infrastructure` is not the model's and is left out):\n\n| cell |");
    for t in GEOAGENT_TYPES {
        let _ = write!(md, " {t} |");
    }
    md.push_str("\n|---|---|---|---|---|\n");
    for c in &report.cells {
        let _ = write!(md, "| {} |", c.label);
        for t in GEOAGENT_TYPES {
            let n: usize = ErrorType::ALL
                .iter()
                .filter(|e| geoagent_type(**e) == Some(t))
                .map(|e| c.run_errors.get(e.name()).copied().unwrap_or(0))
                .sum();
            if t == "lack of information" {
                md.push_str(" – |");
            } else {
                let _ = write!(md, " {n} |");
            }
        }
        md.push('\n');
    }
    if report.cells.iter().any(|c| c.images_shown > 0.0) {
        md.push_str("\n## Vision feedback\n\nFigures shown to the model after the cells that wrote them, per run (mean), and their prompt tokens estimated by OpenAI's tile rule (85 + 170 per 512-px tile; the servers' own counts are in the tokens above).\n\n| cell | figures shown | image tokens |\n|---|---|---|\n");
        for c in &report.cells {
            let _ = writeln!(
                md,
                "| {} | {:.1} | {:.0} |",
                c.label, c.images_shown, c.image_tokens
            );
        }
    }
    if report.cells.iter().any(|c| c.variance.tasks > 0) {
        let _ = write!(
            md,
            "\n## Run-to-run variance (cf. §4.1.5)\n\nTasks run more than once: how many flip between success and failure, how many have a composite spanning more than {} across runs, the mean per-task SD of the composite, and the widest task with its runs' composites.\n\n| cell | tasks | success flips | span > {} | mean SD | widest task (runs) |\n|---|---|---|---|---|---|\n",
            super::model::WIDE_SPAN,
            super::model::WIDE_SPAN
        );
        for c in &report.cells {
            let v = &c.variance;
            let widest = v.widest.as_ref().map_or("–".to_string(), |(task, runs)| {
                let runs: Vec<String> = runs.iter().map(|x| f3(*x)).collect();
                format!("{task} ({})", runs.join(", "))
            });
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {widest} |",
                c.label,
                v.tasks,
                v.success_flips,
                v.wide,
                f3(v.mean_sd)
            );
        }
    }
}

/// Per task, and the gold runs with problems.
fn section_per_task(md: &mut String, report: &Report) {
    md.push_str("\n## Per task (successes/runs, mean Q_out, mean S)\n\n| task |");
    for c in &report.cells {
        let _ = write!(md, " {} |", c.label);
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(report.cells.len()));
    md.push('\n');
    for t in &report.tasks {
        let _ = write!(
            md,
            "| {}{} |",
            t.task,
            if report.gold_problems.contains_key(&t.task) {
                " (gold failed)"
            } else {
                ""
            }
        );
        for c in &t.cells {
            let _ = write!(
                md,
                " {}/{} · Q {} · S {} |",
                c.successes,
                c.runs,
                f3(c.q_out),
                f3(c.composite)
            );
        }
        md.push('\n');
    }
    if !report.gold_problems.is_empty() {
        md.push_str("\n## Gold runs with problems\n\n");
        for (task, problems) in &report.gold_problems {
            let _ = writeln!(md, "- {task}: {}", problems.join("; "));
        }
    }
}
