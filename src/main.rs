//! The `gisclaw` command line. Subcommands only parse and dispatch.

// Errors reach the user as one line, never as a panic. Tests may unwrap.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

/// `println!` with the text through the terminal sanitiser
/// (`gisclaw::terminal::clean`): what gisclaw prints never drives the
/// terminal, whatever a cell, a data file or a model put in it.
macro_rules! say {
    () => { crate::cli::say("", true) };
    ($($arg:tt)*) => { crate::cli::say(&format!($($arg)*), true) };
}

/// [`say`] on standard error.
macro_rules! say_err {
    () => { crate::cli::say_err("") };
    ($($arg:tt)*) => { crate::cli::say_err(&format!($($arg)*)) };
}

/// `print!` through the terminal sanitiser.
macro_rules! say_part {
    ($($arg:tt)*) => { crate::cli::say(&format!($($arg)*), false) };
}

mod cli;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gisclaw::doctor;

/// A runtime that lets an LLM do real, multi-step GIS analysis.
#[derive(Parser)]
#[command(name = "gisclaw", version, about)]
struct Cli {
    /// More log output (-v: debug, -vv: trace). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Solve one task end to end (task.yaml → pred_results/, transcript, solution.py, run.json).
    Solve(cli::solve::SolveArgs),
    /// An interactive GIS analysis session: you talk, the agent runs Python
    /// in a persistent sandbox; slash commands for data, variables, your own
    /// code, saving and resuming.
    Chat(cli::chat::ChatArgs),
    /// Serve the confined GIS sandbox and its tools over the Model Context
    /// Protocol (stdio, or streamable HTTP with --http), for the agent of
    /// any MCP client.
    Mcp(cli::mcp::McpArgs),
    /// Benchmark suites: verify gold solutions, generate data, import GeoAnalystBench.
    #[command(subcommand)]
    Bench(cli::bench::BenchCommand),
    /// Evaluate an agent on a task suite: repeated runs scored on code (L1),
    /// process (L2) and outputs (L3), statistics and a report.
    Eval(Box<cli::eval::EvalArgs>),
    /// The library-docs index behind `--rag`: build it, search it.
    #[command(subcommand)]
    Knowledge(cli::knowledge::KnowledgeCommand),
    /// Report what is installed, what is missing and how to fix it.
    Doctor,
    /// Run a Python file in a sandbox session, cell by cell (cells are split
    /// at lines starting with `# %%`), and print each observation.
    Exec {
        /// The Python file (`-` for standard input).
        file: PathBuf,
        /// The session's work dir (its cwd; outputs go to pred_results/).
        #[arg(long, default_value = ".")]
        workdir: PathBuf,
        /// Per-cell time limit in seconds.
        #[arg(long, default_value_t = 120)]
        cell_timeout: u64,
        /// Run without Landlock and seccomp (rlimits still apply).
        #[arg(long)]
        no_confine: bool,
        /// Confinement the sandbox must have.
        #[command(flatten)]
        sandbox: cli::common::SandboxArgs,
    },
    /// The schema card of a data folder as the model receives it (with
    /// FILE: the `inspect_data` answer for one file or archive member).
    Card {
        /// The data folder (shown to the model as `data/`).
        dir: PathBuf,
        /// One file, relative to DIR (`data/a.zip/b.shp` for an archive member).
        file: Option<String>,
        /// Token budget of the card.
        #[arg(long, default_value_t = gisclaw::card::CARD_TOKEN_BUDGET)]
        budget: u64,
        /// The card's facts as JSON (every dataset, no budget; the shape is
        /// `gisclaw schema card`).
        #[arg(long)]
        json: bool,
        /// The host reader's facts alone: skip the check by the sandbox's
        /// own libraries (geopandas, pandas, xarray), which starts a sandbox.
        #[arg(long)]
        unchecked: bool,
    },
    /// The search tree of an `--arch mcts` run: `show DIR`.
    #[command(subcommand)]
    Tree(cli::tree::TreeCommand),
    /// A run's record in other forms: `to-ipynb DIR` writes the Jupyter
    /// notebook of any run folder.
    #[command(subcommand)]
    Transcript(cli::transcript::TranscriptCommand),
    /// The per-user sandbox service (the warm zygote commands share):
    /// `status`, `stop`.
    #[command(subcommand)]
    Sandbox(cli::sandbox::SandboxCommand),
    /// The Error Memory (errors seen and the fixes that followed): `show`,
    /// `clear`.
    #[command(subcommand)]
    Memory(cli::memory::MemoryCommand),
    /// Print a JSON Schema: of a task file (`task`), of `gisclaw card
    /// --json` (`card`), or of one line of a run's `transcript.jsonl`
    /// (`transcript`).
    Schema {
        /// Which schema.
        #[arg(value_parser = ["task", "card", "transcript"])]
        which: String,
    },
}

fn init_logging(verbose: u8) {
    // The MCP SDK warns about each ordinary client mistake (an unknown
    // method, a request after the client went away): those are the
    // client's to see. The OpenAI client logs a server's whole error page
    // on each of its retries, and every refusal it cannot parse at ERROR:
    // gisclaw says what failed in one line.
    let default = match verbose {
        0 => "warn,rmcp=error,async_openai=off",
        1 => "gisclaw=debug,info",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colour only on a terminal: a piped stderr is an MCP client's log or a
    // file, where escape codes are noise.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none();
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .init();
}

fn main() -> ExitCode {
    // The confined reader (gisclaw::reader): before anything else, with no
    // command line of its own.
    if std::env::args_os().nth(1).is_some_and(|a| a == "__read") {
        return gisclaw::reader::serve(gisclaw::reads::answer_here);
    }
    // The confined JavaScript runtime (gisclaw::js): confines itself and
    // becomes Node.
    if std::env::args_os().nth(1).is_some_and(|a| a == "__js") {
        return gisclaw::js::serve();
    }
    gisclaw::environ::scrub_initial_block();
    gisclaw::gdal_io::harden_gdal();
    gisclaw::embed::pin_thread_count();
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let result = match cli.command {
        Command::Solve(args) => cli::solve::run(args),
        Command::Chat(args) => cli::chat::run(args),
        Command::Mcp(args) => cli::mcp::run(args),
        Command::Bench(command) => cli::bench::run(command),
        Command::Eval(args) => cli::eval::run(*args),
        Command::Sandbox(command) => cli::sandbox::run(command),
        Command::Doctor => cli::common::SandboxArgs::default()
            .config()
            .map_err(anyhow::Error::from)
            .map(|config| {
                let report = doctor::run(&config);
                for line in &report.lines {
                    say!("{line}");
                }
                if report.problems == 0 {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                }
            }),
        Command::Exec {
            file,
            workdir,
            cell_timeout,
            no_confine,
            sandbox,
        } => cli::exec::run(file, workdir, cell_timeout, no_confine, &sandbox),
        Command::Memory(command) => cli::memory::run(command),
        Command::Tree(cli::tree::TreeCommand::Show { dir }) => cli::tree::show(&dir),
        Command::Transcript(command) => cli::transcript::run(command),
        Command::Card {
            dir,
            file,
            budget,
            json,
            unchecked,
        } => cli::card::show(&dir, file.as_deref(), budget, json, !unchecked),
        Command::Knowledge(command) => cli::knowledge::run(command),
        Command::Schema { which } => {
            let schema = match which.as_str() {
                "card" => serde_json::to_value(schemars::schema_for!(gisclaw::card::FolderCard))
                    .unwrap_or_default(),
                "transcript" => gisclaw::record::schema(),
                _ => gisclaw::task::Task::json_schema(),
            };
            serde_json::to_string_pretty(&schema)
                .map(|text| {
                    say!("{text}");
                    ExitCode::SUCCESS
                })
                .map_err(anyhow::Error::from)
        }
    };
    // Errors that reach here happen before any work starts (bad task file,
    // no backend, no venv…): usage or configuration, exit code 2. Failures
    // during a run are reported by the run itself (exit code 1).
    result.unwrap_or_else(|err| {
        say_err!("gisclaw: {err:#}");
        ExitCode::from(2)
    })
}
