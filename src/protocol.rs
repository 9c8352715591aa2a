//! `--protocol NAME`: the four papers' evaluation settings as presets,
//! beside gisclaw's own defaults (`ours`).
//!
//! Each preset is a list of [`Element`]s: what the paper sets, what
//! gisclaw does by default, and what the preset does — sets the paper's
//! value, substitutes something said in one line (a model that needs the
//! network), or leaves ours in place and says why. The README's protocol
//! table is rendered from [`ELEMENTS`] (a test keeps them equal); the
//! values a preset sets are [`Protocol::settings`]; an eval records its
//! protocol in `eval.json`, its report names it and lists the elements
//! still ours, and `eval report A B` refuses to compare two protocols
//! unless told to.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// An evaluation protocol: gisclaw's defaults or one paper's setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// gisclaw's defaults.
    #[default]
    Ours,
    /// GISclaw (GeoAnalystBench, three-layer scoring).
    GisclawPaper,
    /// GeoAgent (GeoCode, tree search, RAG).
    GeoagentPaper,
    /// AutoGEEval (function-level unit tests).
    AutogeevalPaper,
    /// GeoJSEval (function-level JavaScript tests).
    GeojsevalPaper,
}

impl Protocol {
    /// Every protocol, `ours` first.
    pub const ALL: [Protocol; 5] = [
        Protocol::Ours,
        Protocol::GisclawPaper,
        Protocol::GeoagentPaper,
        Protocol::AutogeevalPaper,
        Protocol::GeojsevalPaper,
    ];

    /// The name `--protocol` takes and records write.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Ours => "ours",
            Protocol::GisclawPaper => "gisclaw-paper",
            Protocol::GeoagentPaper => "geoagent-paper",
            Protocol::AutogeevalPaper => "autogeeval-paper",
            Protocol::GeojsevalPaper => "geojseval-paper",
        }
    }

    /// The paper a preset follows (`None` for ours).
    pub fn paper(self) -> Option<Paper> {
        match self {
            Protocol::Ours => None,
            Protocol::GisclawPaper => Some(Paper::Gisclaw),
            Protocol::GeoagentPaper => Some(Paper::Geoagent),
            Protocol::AutogeevalPaper => Some(Paper::Autogeeval),
            Protocol::GeojsevalPaper => Some(Paper::Geojseval),
        }
    }

    /// The preset's elements (none for ours).
    pub fn elements(self) -> impl Iterator<Item = &'static Element> {
        let paper = self.paper();
        ELEMENTS.iter().filter(move |e| Some(e.paper) == paper)
    }

    /// The elements the preset leaves as gisclaw has them, or substitutes.
    pub fn still_ours(self) -> impl Iterator<Item = &'static Element> {
        self.elements()
            .filter(|e| !matches!(e.preset, Preset::Sets(_) | Preset::Same))
    }

    /// The values the preset sets on a run.
    pub fn settings(self) -> Settings {
        let base = Settings::default();
        match self {
            Protocol::Ours => base,
            Protocol::GisclawPaper => Settings {
                wording: Wording::Published,
                cell_timeout: Some(Duration::from_secs(600)),
                budget: Some(Duration::from_secs(1200)),
                max_rounds: Some(50),
                stdout: StdoutKeep::Latest,
                dedup_blocks: true,
                paper_headline: true,
                listing_1: true,
                auto_numeric: true,
                ..base
            },
            Protocol::GeoagentPaper => Settings {
                temperature: Some(0.6),
                top_p: Some(0.9),
                max_tokens: Some(2048),
                rag_when_named: true,
                solutions_with_rag: true,
                ..base
            },
            Protocol::AutogeevalPaper => Settings {
                temperature: Some(0.2),
                max_tokens: Some(4096),
                cell_timeout: Some(Duration::from_secs(180)),
                paper_headline: true,
                ..base
            },
            Protocol::GeojsevalPaper => Settings {
                temperature: Some(0.2),
                max_tokens: Some(16384),
                cell_timeout: Some(Duration::from_secs(30)),
                ..base
            },
        }
    }

    /// The report's opening paragraph: the protocol and, for a preset,
    /// what it sets and what is still ours.
    pub fn summary(self) -> String {
        let Some(paper) = self.paper() else {
            return "Protocol: `ours` (gisclaw's defaults; `--protocol NAME` gives a paper's setting).".into();
        };
        let set: Vec<String> = self
            .elements()
            .filter(|e| matches!(e.preset, Preset::Sets(_) | Preset::Same))
            .map(|e| e.name.to_string())
            .collect();
        let mut text = format!(
            "Protocol: `{}` ({}'s setting). Set as the paper has it (unless the command line's flags, in the condition label, say otherwise): {}.",
            self.name(),
            paper.title(),
            set.join("; ")
        );
        let ours: Vec<String> = self
            .still_ours()
            .map(|e| format!("{} — {}", e.name, e.preset.text()))
            .collect();
        if !ours.is_empty() {
            text.push_str(&format!(" Still ours: {}.", ours.join("; ")));
        }
        text
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Protocol {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Protocol::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
                format!("unknown protocol `{s}`: one of {}", names.join(", "))
            })
    }
}

/// The paper a preset follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paper {
    /// GISclaw.
    Gisclaw,
    /// GeoAgent.
    Geoagent,
    /// AutoGEEval.
    Autogeeval,
    /// GeoJSEval.
    Geojseval,
}

impl Paper {
    /// The paper's name.
    pub fn title(self) -> &'static str {
        match self {
            Paper::Gisclaw => "GISclaw",
            Paper::Geoagent => "GeoAgent",
            Paper::Autogeeval => "AutoGEEval",
            Paper::Geojseval => "GeoJSEval",
        }
    }
}

/// Which wording of a suite's tasks the model reads
/// ([`crate::bench::published`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Wording {
    /// The task file's own text (our enriched wording: GeoAnalystBench's
    /// tasks with the parameters our data need written in).
    #[default]
    Suite,
    /// The published table's text, verbatim, for tasks that name a row.
    Published,
}

/// Which part of stdout an observation keeps when it is long.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StdoutKeep {
    /// Ours: the first part and the latest part.
    #[default]
    HeadAndTail,
    /// GISclaw's: cut from the front, the latest output kept.
    Latest,
}

/// What a preset sets on a run (`None` / default: gisclaw's own).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// The tasks' wording.
    pub wording: Wording,
    /// Per-cell time limit.
    pub cell_timeout: Option<Duration>,
    /// Time budget of a task run.
    pub budget: Option<Duration>,
    /// Most model rounds of a task run.
    pub max_rounds: Option<usize>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Nucleus sampling.
    pub top_p: Option<f32>,
    /// Most completion tokens per call.
    pub max_tokens: Option<u32>,
    /// What a long stdout keeps.
    pub stdout: StdoutKeep,
    /// Refuse code that failed before, unchanged, instead of warning.
    pub dedup_blocks: bool,
    /// Retrieve library docs only when the task or step names a library.
    pub rag_when_named: bool,
    /// The system prompt is GISclaw's Listing 1.
    pub listing_1: bool,
    /// The session casts numbers read as text (GISclaw's tool layer,
    /// Table 11).
    pub auto_numeric: bool,
    /// `--rag` also briefs each task with the suite's most similar other
    /// solved task (GeoAgent's solutions corpus).
    pub solutions_with_rag: bool,
    /// The report leads with the paper's figures.
    pub paper_headline: bool,
}

impl Protocol {
    /// Whether the preset applies to a suite of `kind`; `Err` says, in one
    /// line, which suites it is for.
    /// (`kind`: a suite kind's name, `tasks`, `steps`, `unit`, `geojs`.)
    pub fn suits(self, kind: &str) -> Result<(), String> {
        let (kinds, example): (&[&str], &str) = match self {
            Protocol::Ours => return Ok(()),
            Protocol::GisclawPaper => (&["tasks"], "task suites (benchmarks/geoanalyst)"),
            Protocol::GeoagentPaper => (
                &["steps", "tasks"],
                "step and task suites (benchmarks/geocode)",
            ),
            Protocol::AutogeevalPaper => (&["unit"], "the unit suite (benchmarks/unit)"),
            Protocol::GeojsevalPaper => (&["geojs"], "the GeoJSEval suite (benchmarks/geojs)"),
        };
        if kinds.contains(&kind) {
            Ok(())
        } else {
            Err(format!(
                "--protocol {self}: {}'s setting is for {example}, not a {} suite",
                self.paper().map_or("", Paper::title),
                kind
            ))
        }
    }
}

/// The run limits a command line gave, beside their defaults: a preset
/// sets the ones it has a value for, and refuses one that was changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `--cell-timeout`, seconds.
    pub cell_timeout: u64,
    /// `--budget`, seconds.
    pub budget: u64,
    /// `--max-rounds`.
    pub max_rounds: usize,
}

impl Settings {
    /// `given` with the preset's limits; `Err` names, in one line, a limit
    /// given on the command line (differing from `defaults`) that the
    /// preset sets otherwise.
    pub fn limits(
        &self,
        protocol: Protocol,
        given: Limits,
        defaults: Limits,
    ) -> Result<Limits, String> {
        let mut out = given;
        let set = |flag: &str, want: Option<u64>, given: u64, default: u64, slot: &mut u64| {
            let Some(want) = want else { return Ok(()) };
            if given != default && given != want {
                return Err(format!(
                    "{flag} {given}: --protocol {protocol} sets it to {want} (the paper's); leave {flag} out, or leave --protocol out"
                ));
            }
            *slot = want;
            Ok(())
        };
        set(
            "--cell-timeout",
            self.cell_timeout.map(|d| d.as_secs()),
            given.cell_timeout,
            defaults.cell_timeout,
            &mut out.cell_timeout,
        )?;
        set(
            "--budget",
            self.budget.map(|d| d.as_secs()),
            given.budget,
            defaults.budget,
            &mut out.budget,
        )?;
        let mut rounds = given.max_rounds as u64;
        set(
            "--max-rounds",
            self.max_rounds.map(|n| n as u64),
            given.max_rounds as u64,
            defaults.max_rounds as u64,
            &mut rounds,
        )?;
        out.max_rounds = rounds as usize;
        Ok(out)
    }

    /// Sets the preset's sampling on a live model's configuration (the
    /// paper's values replace the profile's; provenance records them).
    pub fn sample(&self, live: &mut crate::llm::config::LiveConfig) {
        if let Some(t) = self.temperature {
            live.temperature = Some(t);
        }
        if let Some(p) = self.top_p {
            live.top_p = Some(p);
        }
        if let Some(n) = self.max_tokens {
            live.max_tokens = Some(n);
        }
    }

    /// Sets the preset's observation budgets on a sandbox configuration.
    pub fn observe(&self, config: &mut crate::sandbox::SandboxConfig) {
        if self.stdout == StdoutKeep::Latest {
            let limits = &mut config.limits;
            limits.stdout_tail_chars += limits.stdout_head_chars;
            limits.stdout_head_chars = 0;
        }
    }
}

/// What a preset does with one element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// Sets the paper's value (as said).
    Sets(&'static str),
    /// Ours is already the paper's.
    Same,
    /// Uses something else in the paper's place, said why.
    Substitutes(&'static str),
    /// Leaves ours, said why.
    Ours(&'static str),
}

impl Preset {
    /// The README's and the report's words for it.
    pub fn text(&self) -> String {
        match self {
            Preset::Sets(what) => format!("sets it: {what}"),
            Preset::Same => "same as ours".into(),
            Preset::Substitutes(what) => format!("substitutes: {what}"),
            Preset::Ours(why) => format!("ours: {why}"),
        }
    }
}

/// One element of a paper's protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element {
    /// The paper.
    pub paper: Paper,
    /// What it is.
    pub name: &'static str,
    /// The paper's value, with where it says so.
    pub value: &'static str,
    /// gisclaw's default.
    pub default: &'static str,
    /// What the preset does.
    pub preset: Preset,
}

const fn element(
    paper: Paper,
    name: &'static str,
    value: &'static str,
    default: &'static str,
    preset: Preset,
) -> Element {
    Element {
        paper,
        name,
        value,
        default,
        preset,
    }
}

use Paper::{Autogeeval, Geoagent, Geojseval, Gisclaw};
use Preset::{Ours, Same, Sets, Substitutes};

/// Every element of every preset, paper by paper.
pub const ELEMENTS: &[Element] = &[
    // GISclaw
    element(Gisclaw, "task wording", "GeoAnalystBench's instruction, domain knowledge and workflow as published", "our enriched wording (parameters our synthetic data need written in)", Sets("the vendored table's text, verbatim (SHA-256 pinned)")),
    element(Gisclaw, "expert workflow in the prompt", "yes (benchmark setup)", "yes", Same),
    element(Gisclaw, "task time limit", "20 min (evaluation setup)", "20 min (`--budget 1200`)", Same),
    element(Gisclaw, "model rounds", "50 (evaluation setup)", "50", Same),
    element(Gisclaw, "cell time limit", "the sandbox's 10 min (§2.1, Table 3; the paper calls it per task, its experiments give tasks 20 min)", "120 s", Sets("600 s")),
    element(Gisclaw, "long stdout", "cut from the front, the latest kept (Table 3)", "first 1,000 and last 4,000 characters", Sets("the latest 5,000 characters")),
    element(Gisclaw, "repeated failing code", "blocked (§4.3.2)", "warned, then run", Sets("refused unrun with its earlier error")),
    element(Gisclaw, "runs per cell", "3 (evaluation setup)", "3", Same),
    element(Gisclaw, "Q_out and Eq. 1", "over successful runs; L3 as Table 3 (vector: count, CRS, columns; MRE per cell)", "over every run; vector adds geometry IoU; MRE Σ|p−g|/Σ|g|", Sets("the paper's figures lead the report; ours follow")),
    element(Gisclaw, "CodeBLEU", "Eq. 4: ¼ of n-gram, weighted n-gram, AST and data-flow", "the same (checked against the `codebleu` package)", Same),
    element(Gisclaw, "PNG outputs", "a vision model's five 1–5 grades (Gemini-2.5-Flash-Lite)", "SSIM against the gold figure", Substitutes("the `--vision-judge` model when given; otherwise SSIM, said in the report")),
    element(Gisclaw, "C_emb embedding", "text-embedding-3-large (3,072-d)", "all-MiniLM-L6-v2, bundled", Substitutes("the `--c-emb` server's model when given (`--c-emb openai --c-emb-model text-embedding-3-large`); otherwise MiniLM, said on stderr")),
    element(Gisclaw, "system prompt", "Listing 1 (list_files first, search_docs)", "ours: the data card in the prompt, inspection first", Sets("Listing 1 verbatim, its package lists from the sandbox, then the sandbox's facts; the search_docs line only with `--rag`, which offers the tool")),
    element(Gisclaw, "tool layer (Table 11)", "flattened data paths, load_raster → ndarray + metadata, grid-size templates, pd.to_numeric auto-cast", "`list_files` flattens, `load_raster` gives (bands, H, W) + meta; `to_numeric_columns(df)`, `grid_template(bounds, cell_size)` (≤ 1,000,000 cells) and `auto_numeric()` when the model calls them", Sets("the session starts with `auto_numeric()`: pandas' and GeoPandas' readers cast text columns holding only numbers (codes with leading zeros stay text); Listing 1's prompt names `grid_template` (the paper enforced it in its tool layer, here the model calls it)")),
    // GeoAgent
    element(Geoagent, "sampling", "temperature 0.6, top_p 0.9, 2,048 max tokens (experimental setup)", "the backend profile's", Sets("temperature 0.6, top_p 0.9, max_tokens 2048")),
    element(Geoagent, "when docs are retrieved", "only when the task names a library", "every task and step with `--rag`", Sets("only when the text names an indexed library")),
    element(Geoagent, "passages retrieved", "3 (RAG@3)", "3", Same),
    element(Geoagent, "architecture", "MCTS refines each subtask (§3.3)", "`--arch single`", Sets("`--arch mcts` when `--arch` is not given (a `--replay-gold` has no candidates to search: the agent replays it, said on stderr)")),
    element(Geoagent, "subtask refinement", "node-prompt update, Prepend New Task on undefined variables, re-decomposition (Figs 3–4, appendix prompts)", "the same, under `--arch mcts` on a step suite (the appendix prompts; GeoAgent's public code repairs in place instead)", Same),
    element(Geoagent, "retrieval corpora", "library docs, tutorials, solutions", "library docs and recipes; the suite's other solutions with `--solutions`", Sets("`--rag` also briefs each task with the suite's most similar other task and its gold (BM25 over task text and code; never the task's own)")),
    element(Geoagent, "embedding model", "BBAI-embedding-001", "all-MiniLM-L6-v2 + BM25", Substitutes("MiniLM + BM25: the paper's model is not public")),
    // AutoGEEval
    element(Autogeeval, "sampling", "temperature 0.2, 4,096 max tokens (experimental setup)", "the backend profile's", Sets("temperature 0.2, max_tokens 4096")),
    element(Autogeeval, "time limit per case", "180 s (§4.3.6)", "120 s", Sets("180 s")),
    element(Autogeeval, "image metrics", "PSNR with peak 255 (Eq. 11), one global SSIM (Eq. 13)", "PSNR over the data range, windowed SSIM", Sets("the paper's pass@k leads the report; ours follow")),
    element(Autogeeval, "prompt", "Fig. 6 (published only as an image)", "ours", Ours("the prompt's text is not in the paper")),
    element(Autogeeval, "error taxonomy", "Table 10: syntax (incl. missing imports), parameter, invalid answer, runtime (180 s), network", "ours (ImportError a parameter error), with Table 10's five types beside it: missing imports as syntax, timeouts as runtime, the platform failing as network", Same),
    // GeoJSEval
    element(Geojseval, "sampling", "temperature 0.2, 16,384 max tokens (experimental setup)", "the backend profile's", Sets("temperature 0.2, max_tokens 16384")),
    element(Geojseval, "time limit per case", "30 s (§5.3.4)", "30 s", Same),
    element(Geojseval, "prompt", "Fig. 7", "Fig. 7, verbatim, with the task's function", Same),
    element(Geojseval, "error taxonomy", "§5.3.4: syntax, attribute/parameter, output type, invalid answer, runtime (30 s), other (redundant imports)", "the same classes", Same),
];

/// The README's protocol table (markdown), rendered from [`ELEMENTS`].
pub fn readme_table() -> String {
    let mut out = String::from(
        "| Paper | Element | The paper | Our default | Under the preset |\n|---|---|---|---|---|\n",
    );
    for e in ELEMENTS {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            e.paper.title(),
            e.name,
            e.value,
            e.default,
            e.preset.text()
        ));
    }
    out
}

/// Two protocols in one comparison, said in one line (`None`: all one).
pub fn mixed(protocols: &[(String, Protocol)]) -> Option<String> {
    let first = protocols.first()?.1;
    let other = protocols.iter().find(|(_, p)| *p != first)?;
    Some(format!(
        "{} ran under protocol `{}` and {} under `{}`: their figures are not comparable (give --mixed-protocols to compare them anyway)",
        protocols[0].0, first, other.0, other.1
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readme_holds_the_protocol_table_as_the_presets_define_it() {
        let readme = include_str!("../README.md");
        let table = readme_table();
        if !readme.contains(&table) {
            std::fs::write(
                std::env::temp_dir().join("gisclaw-protocol-table.md"),
                &table,
            )
            .ok();
            panic!("README.md's protocol table differs from protocol::ELEMENTS; the table they define is in {}", std::env::temp_dir().join("gisclaw-protocol-table.md").display());
        }
    }

    #[test]
    fn names_round_trip_and_unknown_ones_list_the_choices() {
        for p in Protocol::ALL {
            assert_eq!(p.name().parse::<Protocol>().unwrap(), p);
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.name()));
        }
        let err = "gisclaw".parse::<Protocol>().unwrap_err();
        assert!(
            err.contains("gisclaw-paper") && err.contains("ours"),
            "{err}"
        );
    }

    #[test]
    fn every_preset_has_elements_and_ours_has_none() {
        assert_eq!(Protocol::Ours.elements().count(), 0);
        assert_eq!(Protocol::Ours.settings(), Settings::default());
        for p in &Protocol::ALL[1..] {
            assert!(p.elements().count() >= 4, "{p}");
            assert_ne!(p.settings(), Settings::default(), "{p}");
        }
    }

    #[test]
    fn the_summary_names_the_protocol_and_what_is_still_ours() {
        let text = Protocol::GisclawPaper.summary();
        assert!(
            text.starts_with("Protocol: `gisclaw-paper` (GISclaw's setting)"),
            "{text}"
        );
        assert!(
            text.contains("Still ours:") && text.contains("C_emb embedding"),
            "{text}"
        );
        assert!(text.contains("task wording"), "{text}");
    }

    #[test]
    fn a_preset_sets_its_limits_and_refuses_a_contradicting_flag() {
        let defaults = Limits {
            cell_timeout: 120,
            budget: 1200,
            max_rounds: 50,
        };
        let s = Protocol::GisclawPaper.settings();
        let set = s
            .limits(Protocol::GisclawPaper, defaults, defaults)
            .unwrap();
        assert_eq!(set.cell_timeout, 600);
        let given = Limits {
            cell_timeout: 60,
            ..defaults
        };
        let err = s
            .limits(Protocol::GisclawPaper, given, defaults)
            .unwrap_err();
        assert!(
            err.starts_with("--cell-timeout 60: --protocol gisclaw-paper sets it to 600"),
            "{err}"
        );
        // A flag the preset leaves alone stays as given.
        let given = Limits {
            max_rounds: 20,
            ..defaults
        };
        let err = s
            .limits(Protocol::GisclawPaper, given, defaults)
            .unwrap_err();
        assert!(err.contains("--max-rounds 20"), "{err}");
        let ours = Protocol::Ours.settings();
        assert_eq!(ours.limits(Protocol::Ours, given, defaults).unwrap(), given);
    }

    #[test]
    fn the_gisclaw_preset_keeps_the_latest_stdout_only() {
        let mut config = crate::sandbox::SandboxConfig::default();
        let total = config.limits.stdout_head_chars + config.limits.stdout_tail_chars;
        Protocol::GisclawPaper.settings().observe(&mut config);
        assert_eq!(config.limits.stdout_head_chars, 0);
        assert_eq!(config.limits.stdout_tail_chars, total);
    }

    #[test]
    fn a_preset_is_refused_on_a_suite_it_is_not_for() {
        assert!(Protocol::GisclawPaper.suits("tasks").is_ok());
        let err = Protocol::AutogeevalPaper.suits("tasks").unwrap_err();
        assert!(
            err.contains("AutoGEEval's setting is for the unit suite"),
            "{err}"
        );
        assert!(Protocol::Ours.suits("geojs").is_ok());
    }

    #[test]
    fn a_mix_is_named_in_one_line() {
        let one = vec![
            ("a".to_string(), Protocol::Ours),
            ("b".to_string(), Protocol::Ours),
        ];
        assert_eq!(mixed(&one), None);
        let two = vec![
            ("a".to_string(), Protocol::Ours),
            ("b".to_string(), Protocol::GisclawPaper),
        ];
        let line = mixed(&two).unwrap();
        assert!(
            line.contains("`ours`") && line.contains("`gisclaw-paper`") && !line.contains('\n')
        );
    }
}
