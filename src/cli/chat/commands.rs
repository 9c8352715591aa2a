//! The slash commands: one table of name, help line and handler. `/help`
//! prints the table, the completer offers its names, [`slash`] dispatches.

use std::path::Path;

use gisclaw::chat::engine::ChatEngine;
use gisclaw::chat::render::Style;
use gisclaw::chat::store::ChatArch;

use super::screen::Screen;

/// Whether the chat goes on after a command.
pub(super) enum Flow {
    /// Read the next input.
    Continue,
    /// Leave the chat.
    Quit,
}

/// One slash command.
pub(super) struct Command {
    /// `/name`, as typed.
    pub(super) name: &'static str,
    /// Its arguments and what it does, for `/help`.
    pub(super) help: &'static str,
    /// Runs it with the text after the name (trimmed, maybe empty).
    run: fn(&mut ChatEngine, &str, &Style) -> Flow,
}

/// Every command, in the order `/help` lists them.
pub(super) const COMMANDS: &[Command] = &[
    Command {
        name: "/help",
        help: "this list",
        run: help,
    },
    Command {
        name: "/data",
        help: "DIR — attach a data folder and show its schema card",
        run: data,
    },
    Command {
        name: "/files",
        help: "the data files and the outputs so far",
        run: files,
    },
    Command {
        name: "/vars",
        help: "the namespace, one line per variable",
        run: vars,
    },
    Command {
        name: "/inspect",
        help: "NAME — a closer look at one variable",
        run: inspect,
    },
    Command {
        name: "/run",
        help: "CODE — run your own Python in the sandbox (the model is told)",
        run: run_cell,
    },
    Command {
        name: "/edit",
        help: "edit the last failed cell in $EDITOR and run it",
        run: edit,
    },
    Command {
        name: "/hint",
        help: "TEXT — domain knowledge for the next turns",
        run: hint,
    },
    Command {
        name: "/arch",
        help: "[single|dual|mcts] — show or switch the agent architecture",
        run: arch,
    },
    Command {
        name: "/model",
        help: "the model backend",
        run: model,
    },
    Command {
        name: "/tokens",
        help: "tokens and cost so far",
        run: tokens,
    },
    Command {
        name: "/compact",
        help: "fold the conversation's earlier rounds into one note (frees context)",
        run: compact,
    },
    Command {
        name: "/save",
        help: "FILE — write the script of the successful cells",
        run: save,
    },
    Command {
        name: "/show",
        help: "FILE — show an image, a raster or a vector layer (drawn in a fork of the session)",
        run: show_file,
    },
    Command {
        name: "/export",
        help: "DIR — copy the transcript, script and outputs, and write solution.ipynb",
        run: export,
    },
    Command {
        name: "/reset",
        help: "a fresh namespace (the conversation stays)",
        run: reset,
    },
    Command {
        name: "/undo",
        help: "drop the last turn from the conversation",
        run: undo,
    },
    Command {
        name: "/quit",
        help: "leave (Ctrl-D too)",
        run: quit,
    },
];

/// Runs one slash command (without its `/`).
pub(super) fn slash(engine: &mut ChatEngine, command: &str, style: &Style) -> Flow {
    let (name, rest) = match command.split_once(char::is_whitespace) {
        Some((n, r)) => (n, r.trim()),
        None => (command, ""),
    };
    let name = if name == "exit" { "quit" } else { name };
    match COMMANDS.iter().find(|c| &c.name[1..] == name) {
        Some(c) => (c.run)(engine, rest, style),
        None => {
            let start: String = name.chars().take(2).collect();
            let near: Vec<&str> = COMMANDS
                .iter()
                .map(|c| c.name)
                .filter(|c| c[1..].starts_with(&start))
                .collect();
            let tip = if near.is_empty() {
                String::new()
            } else {
                format!(" (did you mean {}?)", near.join(", "))
            };
            fail(
                style,
                format!("unknown command /{name}{tip}: /help lists the commands"),
            )
        }
    }
}

/// Prints `message` as an error; the chat goes on.
fn fail(style: &Style, message: String) -> Flow {
    println!("{}", style.error(&message));
    Flow::Continue
}

/// Prints `text`; the chat goes on.
fn say(text: String) -> Flow {
    say!("{text}");
    Flow::Continue
}

/// Prints a result, or its error after `command` (`/data DIR`…).
fn show<E: std::fmt::Display>(style: &Style, command: &str, result: Result<String, E>) -> Flow {
    match result {
        Ok(text) => {
            say!("{text}");
            Flow::Continue
        }
        Err(e) => fail(style, format!("{command}: {e}")),
    }
}

fn help(_: &mut ChatEngine, _: &str, _: &Style) -> Flow {
    for c in COMMANDS {
        println!("  {:<9} {}", c.name, c.help);
    }
    Flow::Continue
}

fn quit(_: &mut ChatEngine, _: &str, _: &Style) -> Flow {
    Flow::Quit
}

fn data(engine: &mut ChatEngine, rest: &str, style: &Style) -> Flow {
    if rest.is_empty() {
        return match &engine.saved.data_dir {
            Some(d) => say(format!("data: {}", d.display())),
            None => fail(style, "/data DIR: name the folder to attach".into()),
        };
    }
    show(style, "/data", engine.attach_data(Path::new(rest)))
}

fn files(engine: &mut ChatEngine, _: &str, _: &Style) -> Flow {
    say_part!("{}", engine.files());
    Flow::Continue
}

fn vars(engine: &mut ChatEngine, _: &str, style: &Style) -> Flow {
    match engine.variables() {
        Ok(vars) if vars.is_empty() => say("(no variables yet)".into()),
        Ok(vars) => say(vars.join("\n")),
        Err(e) => fail(style, format!("/vars: {e}")),
    }
}

fn inspect(engine: &mut ChatEngine, rest: &str, style: &Style) -> Flow {
    show(style, "/inspect", engine.inspect(rest))
}

fn run_cell(engine: &mut ChatEngine, rest: &str, style: &Style) -> Flow {
    if rest.is_empty() {
        return fail(
            style,
            "/run CODE: type the Python after /run (end lines with \\ to continue)".into(),
        );
    }
    run_code(engine, rest, style);
    Flow::Continue
}

fn edit(engine: &mut ChatEngine, _: &str, style: &Style) -> Flow {
    let Some(code) = engine.last_failed.clone() else {
        return fail(style, "/edit: no failed cell to edit".into());
    };
    match edit_in_editor(&code) {
        Ok(edited) if edited.trim().is_empty() => say("(empty: nothing run)".into()),
        Ok(edited) => {
            run_code(engine, &edited, style);
            Flow::Continue
        }
        Err(e) => fail(style, format!("{e:#}")),
    }
}

fn hint(engine: &mut ChatEngine, rest: &str, style: &Style) -> Flow {
    if rest.is_empty() {
        if engine.saved.hints.is_empty() {
            println!("(no hints: /hint TEXT adds one)");
        }
        engine.saved.hints.iter().for_each(|h| say!("- {h}"));
        return Flow::Continue;
    }
    engine.saved.hints.push(rest.to_string());
    engine.save();
    println!(
        "{}",
        style.note("noted: the model sees it from the next turn")
    );
    Flow::Continue
}

fn arch(engine: &mut ChatEngine, rest: &str, style: &Style) -> Flow {
    if rest.is_empty() {
        println!(
            "{} — /arch single: reason, run a cell, observe · /arch dual: plan, then a worker per step · /arch mcts: a tree search over candidate cells per step",
            describe_arch(engine.saved.arch)
        );
        return Flow::Continue;
    }
    match rest.parse::<ChatArch>() {
        Ok(arch) => {
            engine.saved.arch = arch;
            engine.save();
            println!(
                "{}",
                style.note(&format!("from the next turn: {}", describe_arch(arch)))
            );
            Flow::Continue
        }
        Err(_) => fail(style, format!("/arch {rest}: say single, dual or mcts")),
    }
}

fn model(engine: &mut ChatEngine, _: &str, _: &Style) -> Flow {
    say!("{}", engine.backend());
    Flow::Continue
}

fn tokens(engine: &mut ChatEngine, _: &str, _: &Style) -> Flow {
    println!(
        "{} · sandbox time {:.1} s",
        engine.tokens(),
        engine.sandbox_time().as_secs_f64()
    );
    Flow::Continue
}

fn compact(engine: &mut ChatEngine, _: &str, style: &Style) -> Flow {
    let mut screen = Screen::new(*style, engine.workdir());
    let done = engine.compact(&mut |e| screen.show(e));
    screen.close();
    if done.is_none() {
        println!("(nothing to compact: the conversation is its latest round)");
    }
    Flow::Continue
}

fn save(engine: &mut ChatEngine, rest: &str, style: &Style) -> Flow {
    if rest.is_empty() {
        return fail(style, "/save FILE: name the file".into());
    }
    match gisclaw::util::write_atomic(Path::new(rest), engine.saved_script().as_bytes()) {
        Ok(()) => say(format!(
            "wrote {} ({} cells)",
            rest,
            engine.saved.cells.len()
        )),
        Err(e) => fail(style, format!("/save {rest}: {e}")),
    }
}

fn export(engine: &mut ChatEngine, rest: &str, style: &Style) -> Flow {
    if rest.is_empty() {
        return fail(style, "/export DIR: name the folder".into());
    }
    show(
        style,
        "/export",
        engine
            .export(Path::new(rest))
            .map(|n| format!("exported {n} files to {rest}")),
    )
}

fn show_file(engine: &mut ChatEngine, rest: &str, style: &Style) -> Flow {
    if rest.is_empty() {
        return fail(
            style,
            "/show FILE: name the file (pred_results/map.png, data/dem.tif, …)".into(),
        );
    }
    match engine.quick_look(Path::new(rest)) {
        Ok((image, drawn)) => {
            let protocol = crate::cli::figure::detect();
            crate::cli::figure::draw_if_shown(&image, protocol);
            let line = crate::cli::figure::describe(&image, rest);
            match (drawn, protocol) {
                (true, Some(_)) => {
                    let _ = std::fs::remove_file(&image);
                    say(format!("quick look of {line}"))
                }
                // A terminal without images: the picture kept to open, and
                // what the data is in words.
                (true, None) => match engine.keep_quick_look(&image, rest) {
                    Ok((kept, summary)) => {
                        let summary = if summary.is_empty() {
                            String::new()
                        } else {
                            format!("\n  {summary}")
                        };
                        say(format!(
                            "quick look of {rest}: open {}{summary}",
                            kept.display()
                        ))
                    }
                    Err(e) => fail(style, format!("/show {rest}: {e}")),
                },
                (false, _) => say(format!("figure: {line}")),
            }
        }
        Err(e) => fail(style, format!("/show {rest}: {e}")),
    }
}

fn reset(engine: &mut ChatEngine, _: &str, style: &Style) -> Flow {
    show(
        style,
        "/reset",
        engine
            .reset()
            .map(|()| style.note("fresh namespace: every variable is gone")),
    )
}

fn undo(engine: &mut ChatEngine, _: &str, style: &Style) -> Flow {
    if engine.undo() {
        println!(
            "{}",
            style.note("dropped the last turn from the conversation (variables it made stay)")
        );
    } else {
        println!("(nothing to undo)");
    }
    Flow::Continue
}

/// One line on an architecture.
pub(super) fn describe_arch(arch: ChatArch) -> String {
    match arch {
        ChatArch::Single => {
            "single agent (ReAct: reason, run a cell, observe, until it answers)".into()
        }
        ChatArch::Dual => "dual agent (a Planner splits the request into steps; a Worker does each; a failed step is replanned)".into(),
        ChatArch::Mcts => "tree search (a Planner splits the request into steps; candidate codes for each step run in forks of the sandbox; the best path is kept)".into(),
    }
}

/// Runs the user's own code; the screen shows it and its observation.
fn run_code(engine: &mut ChatEngine, code: &str, style: &Style) {
    let mut screen = Screen::new(*style, engine.workdir());
    print!("{}", style.code("python (you)", code));
    let result = engine.run_user_code(code, &mut |e| screen.show(e));
    screen.close();
    if let Err(e) = result {
        println!("{}", style.error(&e.to_string()));
    }
}

/// Opens `code` in `$VISUAL` / `$EDITOR` (default `vi`) and returns the result.
fn edit_in_editor(code: &str) -> anyhow::Result<String> {
    use anyhow::Context as _;
    let file = tempfile::Builder::new()
        .prefix("gisclaw-edit-")
        .suffix(".py")
        .tempfile()
        .context("/edit: a temporary file")?;
    std::fs::write(file.path(), code).context("/edit: writing the temporary file")?;
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let mut parts = editor.split_whitespace();
    let program = parts.next().unwrap_or("vi");
    let status = std::process::Command::new(program)
        .args(parts)
        .arg(file.path())
        .status()
        .with_context(|| format!("/edit: cannot start the editor `{editor}` (set $EDITOR)"))?;
    if !status.success() {
        anyhow::bail!("/edit: the editor `{editor}` exited with {status}; nothing run");
    }
    std::fs::read_to_string(file.path()).context("/edit: reading the edited code back")
}
