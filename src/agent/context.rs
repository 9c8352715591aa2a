//! Keeping a conversation within the model's context window.
//!
//! The window is learnt once per run ([`ContextKeeper::resolve`]):
//! `--context-window` first, else what the backend finds (the server's
//! own statement, a table of published windows, the profile's
//! `context_window`; see [`crate::llm::window`]), else it is learnt from
//! the first refusal. Requests are sized with tiktoken, scaled by the ratio
//! of the server's reported prompt tokens to tiktoken's count of the same
//! request (other tokenizers count differently; the ratio is re-learnt at
//! every answer).
//!
//! When a request would pass [`THRESHOLD`] of the window, or leave less
//! than [`answer_room`] for the answer, the history is **compacted** in
//! one cut ([`compact`]): the system prompt and the conversation's
//! opening message (the task, a plan step's brief, the chat question being
//! answered) stay; the latest rounds stay whole; the rounds before them
//! are folded, oldest first, into one note until the request is under
//! [`TARGET`] of the window. In the note, a cell whose every name a later
//! cell binds again is one line; another kept cell keeps its code and its
//! output's first and last lines; a failed cell is its first line and the
//! root cause of its error; other tools are their call and first and last
//! lines; the user's words are their first line. The note ends with the
//! namespace as it is now (always fresh), which replaces the folded
//! variable reports. If that is not enough, the latest rounds' long
//! observations are shortened to their first and last lines; then a live
//! model is asked to summarise the note (loaded, worked, failed and why);
//! then the note's oldest lines go. Between compactions the history is
//! only appended to, so prefix caches keep working.

use serde::Serialize;

use super::bindings::top_level_bindings;
use crate::llm::window::{self, ContextWindow};
use crate::llm::{tokens, Message, Role, ToolSpec};

/// A request past this share of the window is compacted.
pub const THRESHOLD: f64 = 0.75;
/// Compaction folds rounds until the request is under this share.
pub const TARGET: f64 = 0.5;
/// First line of a compaction note (how a later compaction finds it).
const NOTE_BEGIN: &str = "[gisclaw: earlier rounds, compacted]";
/// Last line of a compaction note.
const NOTE_END: &str = "[end of compacted rounds]";
/// Observations longer than this (characters) are shortened when the
/// latest rounds alone do not fit.
const LONG_OBSERVATION: usize = 1500;

/// Room kept for the model's answer in a window of `window` tokens: an
/// eighth of it, 256 to 4,096 tokens (never more than half).
pub fn answer_room(window: u64) -> u64 {
    (window / 8).clamp(256, 4096).min(window / 2)
}

/// The window of one run and how its requests are sized.
#[derive(Debug, Clone)]
pub struct ContextKeeper {
    /// `--context-window`: wins over anything learnt.
    flag: Option<u64>,
    /// The window once known.
    window: Option<ContextWindow>,
    /// Whether the backend was asked already.
    asked: bool,
    /// Server tokens per tiktoken token, from the latest answer that
    /// reported usage (1 until one did).
    scale: f64,
    /// Set when the server refused a request as too long.
    refused: bool,
    /// The latest request's estimated size (server tokens).
    last_request: u64,
}

impl ContextKeeper {
    /// A keeper that will ask the backend, unless `flag` (the
    /// `--context-window` value) says.
    pub fn new(flag: Option<u64>) -> ContextKeeper {
        ContextKeeper {
            flag,
            window: None,
            asked: false,
            scale: 1.0,
            refused: false,
            last_request: 0,
        }
    }

    /// Learns the window, once: `flag` (`--context-window`) or the one
    /// given at creation, else `ask` (the backend's).
    pub fn resolve(&mut self, flag: Option<u64>, ask: impl FnOnce() -> Option<ContextWindow>) {
        if self.asked {
            return;
        }
        self.flag = self.flag.or(flag);
        self.asked = true;
        self.window = match self.flag {
            Some(n) => Some(ContextWindow::new(n, "--context-window")),
            None => ask().or(self.window.take()),
        };
        if let Some(w) = &self.window {
            tracing::debug!("context window {} tokens ({})", w.tokens, w.source);
        }
    }

    /// The window, when known.
    pub fn window(&self) -> Option<&ContextWindow> {
        self.window.as_ref()
    }

    /// The latest request's estimated size, in the server's tokens.
    pub fn last_request(&self) -> u64 {
        self.last_request
    }

    /// tiktoken's count of a request, scaled to the server's tokens.
    pub fn estimate(&self, messages: &[Message], specs: &[ToolSpec]) -> u64 {
        self.scaled(tokens::count_prompt(messages, specs))
    }

    /// `raw` tiktoken tokens in the server's tokens.
    pub fn scaled(&self, raw: u64) -> u64 {
        (raw as f64 * self.scale).ceil() as u64
    }

    /// Notes the size of a request about to be sent.
    pub fn sent(&mut self, raw: u64) {
        self.last_request = self.scaled(raw);
    }

    /// Learns the tokenizer ratio from an answer: the server counted
    /// `reported` prompt tokens where tiktoken counted `raw`. Never below
    /// 1: tiktoken's `o200k_base` is as frugal as tokenizers come, and a
    /// server that reports only the tokens it did not find in its cache
    /// (Ollama's `prompt_eval_count`) would otherwise teach a ratio that
    /// lets the next request overflow.
    pub fn learn_usage(&mut self, raw: u64, reported: u64) {
        // Tiny requests say little about the ratio.
        if raw >= 64 && reported > 0 {
            self.scale = (reported as f64 / raw as f64).clamp(1.0, 4.0);
            self.last_request = self.scaled(raw);
        }
    }

    /// Learns from a refusal of a request of `raw` tiktoken tokens as too
    /// long: the window and the request's true size where the message
    /// states them, else a window just under what was sent.
    pub fn learn_refusal(&mut self, raw: u64, message: &str) {
        let stated = window::refusal(message);
        match stated.prompt_tokens {
            Some(true_size) if raw > 0 => {
                self.scale = (true_size as f64 / raw as f64).clamp(self.scale, 4.0);
            }
            _ => self.scale = (self.scale * 1.25).min(4.0),
        }
        match (stated.window, self.flag) {
            (Some(n), None) => self.window = Some(ContextWindow::new(n, "the server's refusal")),
            (None, None) if self.window.is_none() => {
                let sent = self.scaled(raw);
                self.window = Some(ContextWindow::new(
                    sent * 9 / 10,
                    "estimated from the server's refusal",
                ))
            }
            _ => {}
        }
        self.asked = true;
        self.refused = true;
    }

    /// Whether the server refused a request as too long since the last
    /// call (and forgets it).
    pub fn take_refused(&mut self) -> bool {
        std::mem::take(&mut self.refused)
    }

    /// Whether a request of `tokens` (server tokens) should be compacted
    /// first: past [`THRESHOLD`], or without room for the answer.
    pub fn needs_compaction(&self, tokens: u64) -> bool {
        self.window.as_ref().is_some_and(|w| {
            tokens as f64 > THRESHOLD * w.tokens as f64 || tokens + answer_room(w.tokens) > w.tokens
        })
    }

    /// The most a request may be: the window less the answer's room.
    pub fn limit(&self) -> Option<u64> {
        self.window
            .as_ref()
            .map(|w| w.tokens - answer_room(w.tokens))
    }

    /// What compaction aims for.
    fn target(&self) -> Option<u64> {
        self.window
            .as_ref()
            .map(|w| (TARGET * w.tokens as f64) as u64)
    }

    /// "3,120 / 8,192 tokens" (the latest request against the window).
    pub fn status(&self) -> Option<String> {
        self.window.as_ref().map(|w| {
            format!(
                "context {} / {} tokens ({})",
                thousands(self.last_request),
                thousands(w.tokens),
                w.source
            )
        })
    }
}

/// `12345` as `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What one compaction did: the transcript's `compaction` event.
#[derive(Debug, Clone, Serialize)]
pub struct Compaction {
    /// The window it fitted the history to.
    pub window: u64,
    /// Estimated request size before and after (server tokens).
    pub tokens_before: u64,
    /// After.
    pub tokens_after: u64,
    /// Messages in the history before and after.
    pub messages_before: usize,
    /// After.
    pub messages_after: usize,
    /// One line per message folded away, in order: what it replaced.
    pub replaced: Vec<String>,
    /// Observations of the kept rounds shortened to their first and last
    /// lines.
    pub shortened_observations: usize,
    /// Whether the model summarised the folded rounds.
    pub by_model: bool,
    /// Whether it was asked for (`/compact`) rather than needed.
    pub forced: bool,
    /// The note the model now reads in their place.
    pub note: String,
}

impl Compaction {
    /// One line for people: "context compacted: 5,900 → 2,010 tokens of
    /// 8,192 (12 messages folded)".
    pub fn line(&self) -> String {
        let mut how = format!("{} message(s) folded", self.replaced.len());
        if self.shortened_observations > 0 {
            how.push_str(&format!(
                ", {} long observation(s) shortened",
                self.shortened_observations
            ));
        }
        if self.by_model {
            how.push_str(", summarised by the model");
        }
        format!(
            "context compacted: {} → {} tokens of {} ({how})",
            thousands(self.tokens_before),
            thousands(self.tokens_after),
            thousands(self.window)
        )
    }
}

/// Asks the model for a summary of a note; `None` when it gave none.
pub type Summariser<'a> = &'a mut dyn FnMut(&str) -> Option<String>;

/// What a compaction works with besides the history.
pub struct FoldRequest<'a> {
    /// The tools offered with the request.
    pub specs: &'a [ToolSpec],
    /// The conversation's opening message (the task, a step's brief, the
    /// chat question being answered), which stays.
    pub pinned: Option<usize>,
    /// The namespace as it is now, one variable per line.
    pub namespace: Option<String>,
    /// Fold every round but the latest, whatever the size (`/compact`).
    pub force: bool,
}

/// Compacts `messages` in place (see the module's doc), folding until the
/// request is under the target where folding, shortening, a summary and
/// dropping the note's oldest lines can get it there (the pinned message
/// and the latest round are never folded). `summarise` asks the model for
/// a summary of a note (live models only). `None` when nothing could be
/// folded or shortened.
pub fn compact(
    messages: &mut Vec<Message>,
    request: &FoldRequest<'_>,
    keeper: &ContextKeeper,
    summarise: Option<Summariser<'_>>,
) -> Option<Compaction> {
    let window = keeper.window()?.tokens;
    let target = keeper.target()?;
    let before = keeper.estimate(messages, request.specs);
    let layout = Layout::of(messages, request.pinned);
    let lines = fold_lines(messages, &layout);
    let estimate = |m: &[Message]| keeper.estimate(m, request.specs);
    let namespace = request.namespace.as_deref();
    // The note's lines with the tail at `b`: earlier notes' lines first.
    let note_lines = |b: usize| -> Vec<String> {
        let mut all: Vec<String> = layout
            .earlier_notes
            .iter()
            .flat_map(|n| n.lines().map(str::to_string))
            .collect();
        all.extend(lines_before(&lines, b));
        all
    };

    // Level 1: fold the oldest rounds until the request is under the
    // target (or, forced, every round but the latest).
    let candidates = &layout.tail_starts;
    let fits = |b: usize| {
        let built = layout.assemble(messages, b, &note_text(&note_lines(b), namespace), false);
        estimate(&built.0) <= target
    };
    let mut pick = candidates.len() - 1;
    if !request.force {
        // Folding more never makes the request longer: the first fit.
        let (mut lo, mut hi) = (0, candidates.len() - 1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if fits(candidates[mid]) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        pick = lo;
    }
    let tail_start = candidates[pick];
    let kept = note_lines(tail_start);
    // Level 2: shorten the kept rounds' long observations.
    let shorten = !request.force && !fits(tail_start);
    let (mut built, mut shortened) =
        layout.assemble(messages, tail_start, &note_text(&kept, namespace), shorten);
    if layout.folded_count(tail_start) == 0 && shortened == 0 {
        return None;
    }
    // Level 3: a summary by the model of what was folded, when the note
    // is a good part of the window.
    let mut by_model = false;
    let note_tokens = tokens::count(&note_text(&kept, None));
    if estimate(&built) > target && note_tokens > window / 8 {
        if let Some(summarise) = summarise {
            if let Some(summary) =
                summarise(&note_text(&kept, namespace)).filter(|s| !s.trim().is_empty())
            {
                let lines = vec![format!("Summary of the folded rounds:\n{}", summary.trim())];
                let candidate =
                    layout.assemble(messages, tail_start, &note_text(&lines, namespace), shorten);
                if estimate(&candidate.0) < estimate(&built) {
                    (built, shortened) = candidate;
                    by_model = true;
                }
            }
        }
    }
    // Level 4: the note's oldest lines go while the request passes the
    // target (the namespace stays): a note that alone fills the window
    // would be compacted again at every round.
    let mut dropped = 0;
    while !by_model && estimate(&built) > target && dropped < kept.len() {
        dropped = (dropped + (kept.len() - dropped).div_ceil(4)).min(kept.len());
        let mut lines = vec![format!(
            "(… the {dropped} oldest line(s) of this note were dropped to fit the window)"
        )];
        lines.extend_from_slice(&kept[dropped..]);
        (built, shortened) =
            layout.assemble(messages, tail_start, &note_text(&lines, namespace), shorten);
    }
    let replaced = layout.replaced_lines(messages, &lines, tail_start);
    let note_now = built
        .iter()
        .find_map(|m| m.content.as_deref().filter(|c| c.starts_with(NOTE_BEGIN)))
        .unwrap_or_default()
        .to_string();
    let compaction = Compaction {
        window,
        tokens_before: before,
        tokens_after: estimate(&built),
        messages_before: messages.len(),
        messages_after: built.len(),
        replaced,
        shortened_observations: shortened,
        by_model,
        forced: request.force,
        note: note_now,
    };
    *messages = built;
    Some(compaction)
}

/// The fold lines of messages before `tail_start` (one per folded
/// message; empty lines stand for messages that leave no line).
fn lines_before(lines: &[(usize, String)], tail_start: usize) -> Vec<String> {
    lines
        .iter()
        .filter(|(i, l)| *i < tail_start && !l.is_empty())
        .map(|(_, l)| l.clone())
        .collect()
}

/// The note that replaces folded rounds.
fn note_text(lines: &[String], namespace: Option<&str>) -> String {
    let mut text = format!(
        "{NOTE_BEGIN}\nEarlier rounds of this conversation were folded to fit the model's context window. What they did, oldest first:\n"
    );
    for line in lines {
        text.push_str(line.trim_end());
        text.push('\n');
    }
    if let Some(ns) = namespace.filter(|n| !n.trim().is_empty()) {
        text.push_str("Variables in the session now (what the cells left):\n");
        text.push_str(ns.trim_end());
        text.push('\n');
    }
    text.push_str(NOTE_END);
    text
}

/// Where a history's parts are.
struct Layout {
    /// Leading system messages end here.
    system_end: usize,
    /// The opening message that stays.
    pinned: Option<usize>,
    /// Where the kept tail may start, ascending (the last keeps only the
    /// latest round).
    tail_starts: Vec<usize>,
    /// Bodies of earlier compaction notes (they fold into the new note).
    earlier_notes: Vec<String>,
    /// Indices of earlier notes.
    note_at: Vec<usize>,
}

impl Layout {
    fn of(messages: &[Message], pinned: Option<usize>) -> Layout {
        let system_end = messages
            .iter()
            .position(|m| m.role != Role::System)
            .unwrap_or(messages.len());
        let pinned = pinned
            .filter(|&p| p >= system_end && p < messages.len() && messages[p].role == Role::User);
        let note_at: Vec<usize> = messages
            .iter()
            .enumerate()
            .filter(|(_, m)| is_note(m))
            .map(|(i, _)| i)
            .collect();
        let earlier_notes = note_at
            .iter()
            .map(|&i| note_body(messages[i].content.as_deref().unwrap_or("")))
            .collect();
        let first = pinned.map_or(system_end, |p| p + 1);
        let boundaries: Vec<usize> = (first..messages.len())
            .filter(|&i| messages[i].role != Role::Tool && !is_note(&messages[i]))
            .collect();
        let last = boundaries.last().copied().unwrap_or(messages.len());
        // Every earlier note folds into the new one.
        let mut tail_starts: Vec<usize> = std::iter::once(first)
            .chain(boundaries)
            .filter(|&b| b <= last && (b == messages.len() || messages[b].role != Role::Tool))
            .filter(|&b| note_at.iter().all(|&n| n < b))
            .collect();
        tail_starts.dedup();
        if tail_starts.is_empty() {
            tail_starts.push(messages.len());
        }
        Layout {
            system_end,
            pinned,
            tail_starts,
            earlier_notes,
            note_at,
        }
    }

    /// Whether message `i` folds when the tail starts at `tail_start`.
    fn folds(&self, i: usize, tail_start: usize) -> bool {
        i >= self.system_end && Some(i) != self.pinned && i < tail_start
    }

    /// Messages folded with the tail at `tail_start` (earlier notes aside).
    fn folded_count(&self, tail_start: usize) -> usize {
        (self.system_end..tail_start)
            .filter(|&i| self.folds(i, tail_start) && !self.note_at.contains(&i))
            .count()
    }

    /// The history with everything before `tail_start` (but the system
    /// prompt and the pinned message) replaced by `note`, the tail's long
    /// observations shortened when `shorten`; and how many were.
    fn assemble(
        &self,
        messages: &[Message],
        tail_start: usize,
        note: &str,
        shorten: bool,
    ) -> (Vec<Message>, usize) {
        let mut out: Vec<Message> = messages[..self.system_end].to_vec();
        // The note stands where the folded messages stood: before the
        // pinned message when all of them came before it (a chat's earlier
        // turns), else after it.
        let pinned = self.pinned.filter(|&p| p < tail_start);
        let note = Message::text(Role::User, note);
        match pinned {
            Some(p) if tail_start == p + 1 => out.extend([note, messages[p].clone()]),
            Some(p) => out.extend([messages[p].clone(), note]),
            None => out.push(note),
        }
        let mut shortened = 0;
        for m in &messages[tail_start..] {
            let mut m = m.clone();
            if shorten && m.role == Role::Tool {
                if let Some(short) = m.content.as_deref().and_then(shorten_observation) {
                    m.content = Some(short);
                    shortened += 1;
                }
            }
            out.push(m);
        }
        (out, shortened)
    }

    /// What the compaction replaced: one line per folded message.
    fn replaced_lines(
        &self,
        messages: &[Message],
        lines: &[(usize, String)],
        tail_start: usize,
    ) -> Vec<String> {
        (self.system_end..tail_start)
            .filter(|&i| self.folds(i, tail_start))
            .map(|i| {
                let m = &messages[i];
                let what = lines
                    .iter()
                    .find(|(j, _)| *j == i)
                    .map(|(_, l)| l.lines().next().unwrap_or("").to_string())
                    .filter(|l| !l.is_empty())
                    .unwrap_or_else(|| first_line(m.content.as_deref().unwrap_or(""), 100));
                format!("#{i} {}: {what}", m.role.name())
            })
            .collect()
    }
}

/// Whether `m` is a compaction note.
fn is_note(m: &Message) -> bool {
    m.role == Role::User
        && m.content
            .as_deref()
            .is_some_and(|c| c.starts_with(NOTE_BEGIN))
}

/// A note's lines between its header and its namespace section.
fn note_body(text: &str) -> String {
    let body: Vec<&str> = text
        .lines()
        .skip(2)
        .take_while(|l| *l != NOTE_END && !l.starts_with("Variables in the session now"))
        .collect();
    body.join("\n")
}

/// One fold line (possibly several text lines) per foldable message, by
/// index; tool results are folded into their call's line.
fn fold_lines(messages: &[Message], layout: &Layout) -> Vec<(usize, String)> {
    // Results by call id.
    let results: std::collections::HashMap<&str, &str> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| {
            Some((
                m.tool_call_id.as_deref()?,
                m.content.as_deref().unwrap_or(""),
            ))
        })
        .collect();
    // Names each successful cell binds, by message index, for supersession.
    let mut bound: Vec<(usize, Vec<String>)> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        for call in &m.tool_calls {
            let ok = results.get(call.id.as_str()).is_some_and(|r| !failed(r));
            if let (true, Some(code)) = (ok, code_of(&call.function.name, &call.function.arguments))
            {
                bound.push((i, top_level_bindings(&code)));
            }
        }
    }
    // Whether every name of cell `i` is bound again by a later good cell.
    let rebound_later = |i: usize, names: &[String]| {
        !names.is_empty()
            && names
                .iter()
                .all(|name| bound.iter().any(|(j, n)| *j > i && n.contains(name)))
    };
    let mut lines = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if i < layout.system_end || Some(i) == layout.pinned || is_note(m) {
            continue;
        }
        let line = match m.role {
            Role::Tool | Role::System => String::new(),
            Role::User => {
                let text = m.content.as_deref().unwrap_or("");
                if text.starts_with("Continue with a tool call") {
                    String::new()
                } else if !m.images.is_empty() {
                    format!("- figures shown to you: {}", first_line(text, 160))
                } else {
                    format!("- the user: {}", first_line(text, 200))
                }
            }
            Role::Assistant if m.tool_calls.is_empty() => format!(
                "- you answered: {}",
                first_line(m.content.as_deref().unwrap_or(""), 200)
            ),
            Role::Assistant => {
                let mut parts = Vec::new();
                for call in &m.tool_calls {
                    let result = results.get(call.id.as_str()).copied();
                    let name = call.function.name.as_str();
                    let arguments = call.function.arguments.as_str();
                    parts.push(match code_of(name, arguments) {
                        Some(code) => cell_line(&code, result, |names| rebound_later(i, names)),
                        None => format!(
                            "- {name}({}) → {}",
                            first_line(arguments, 120),
                            result.map_or("(no result)".to_string(), ends_of)
                        ),
                    });
                }
                parts.join("\n")
            }
        };
        lines.push((i, line));
    }
    lines
}

/// A cell's fold line.
fn cell_line(code: &str, result: Option<&str>, rebound: impl Fn(&[String]) -> bool) -> String {
    let first = first_line(code.trim_start(), 120);
    let Some(result) = result else {
        return format!("- cell not run: {first}");
    };
    if failed(result) {
        let cause = crate::observation::error_line(result);
        return match crate::observation::failing_statement(result) {
            Some(at) => format!("- cell failed: {first} → {cause} (at `{}`)", at.trim()),
            None => format!("- cell failed: {first} → {cause}"),
        };
    }
    let names = top_level_bindings(code);
    if rebound(&names) {
        return format!(
            "- cell ok, superseded (a later cell binds {} again): {first}",
            names.join(", ")
        );
    }
    let lines: Vec<&str> = code.trim_end().lines().collect();
    let shown: Vec<String> = if lines.len() <= 20 {
        lines.iter().map(|l| format!("    {l}")).collect()
    } else {
        let mut v: Vec<String> = lines[..14].iter().map(|l| format!("    {l}")).collect();
        v.push(format!("    # … {} more lines …", lines.len() - 19));
        v.extend(lines[lines.len() - 5..].iter().map(|l| format!("    {l}")));
        v
    };
    format!("- cell ok:\n{}\n  → {}", shown.join("\n"), ends_of(result))
}

/// The code of an `execute_python` call.
fn code_of(name: &str, arguments: &str) -> Option<String> {
    super::tools::code_of(name, arguments)
}

/// Whether an observation is a failing cell's.
fn failed(observation: &str) -> bool {
    observation.lines().any(|l| l.trim() == "[error]")
        || observation.contains("[sandbox] the cell hit its")
        || observation.contains("[sandbox] the cell was cancelled")
        || observation.contains("while running this cell")
}

/// An observation's first and last meaningful lines (its variables
/// report left out: the note's namespace replaces it).
fn ends_of(observation: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut in_variables = false;
    for line in observation.lines() {
        if line.starts_with('[') {
            in_variables = line.trim() == "[variables]";
            if in_variables {
                continue;
            }
        } else if in_variables {
            continue;
        }
        if !line.trim().is_empty() {
            kept.push(line);
        }
    }
    match kept.len() {
        0 => "(no output)".to_string(),
        1 | 2 => kept
            .iter()
            .map(|l| first_line(l, 200))
            .collect::<Vec<_>>()
            .join(" / "),
        n => format!(
            "{} … ({} lines) … {}",
            first_line(kept[0], 200),
            n,
            first_line(kept[n - 1], 200)
        ),
    }
}

/// A long observation as its first and last lines, or `None` when short.
fn shorten_observation(text: &str) -> Option<String> {
    if text.len() <= LONG_OBSERVATION {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let cut = |l: &str| first_line(l, 300);
    let (head, tail) = if lines.len() > 20 {
        (&lines[..10], &lines[lines.len() - 10..])
    } else {
        (
            &lines[..lines.len().min(3)],
            &lines[lines.len().saturating_sub(3)..],
        )
    };
    let mut out: Vec<String> = head.iter().map(|l| cut(l)).collect();
    out.push(format!(
        "[… gisclaw shortened this observation ({} lines, {} characters) to fit the context window …]",
        lines.len(),
        text.len()
    ));
    out.extend(tail.iter().map(|l| cut(l)));
    let short = out.join("\n");
    (short.len() < text.len()).then_some(short)
}

/// The first line of `text`, at most `max` characters.
fn first_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim_end();
    if line.chars().count() <= max {
        line.to_string()
    } else {
        let cut: String = line.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// A copy of a fresh prompt (the Planner's, a tree node's, a summary
/// request) cut to fit `limit`: the longest message's middle goes, half of
/// it at a time (the system prompt's last), until the request fits or no
/// message is long enough to cut.
pub fn fit_prompt(
    messages: &[Message],
    specs: &[ToolSpec],
    keeper: &ContextKeeper,
    limit: u64,
) -> Vec<Message> {
    let mut out = messages.to_vec();
    while keeper.estimate(&out, specs) > limit {
        let longest = out
            .iter()
            .enumerate()
            .filter(|(_, m)| m.content.as_deref().is_some_and(|c| c.len() > 800))
            .max_by_key(|(_, m)| {
                let len = m.content.as_deref().map_or(0, str::len);
                (m.role != Role::System, len)
            })
            .map(|(i, _)| i);
        let Some(i) = longest else { break };
        let text = out[i].content.take().unwrap_or_default();
        out[i].content = Some(cut_middle(&text, text.len() / 2));
    }
    out
}

/// `text` without `drop` bytes from its middle (on line or char
/// boundaries), the cut said in one line.
fn cut_middle(text: &str, drop: usize) -> String {
    let keep = text.len().saturating_sub(drop) / 2;
    let mut head_end = keep;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - keep;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let head = &text[..head_end];
    let head = head.rfind('\n').map_or(head, |n| &head[..n]);
    let tail = &text[tail_start..];
    let tail = tail.find('\n').map_or(tail, |n| &tail[n + 1..]);
    format!(
        "{head}\n[… gisclaw cut {} characters here to fit the context window …]\n{tail}",
        text.len() - head.len() - tail.len()
    )
}

/// The namespace as the note shows it: one line per variable, at most 40.
pub fn namespace_lines(variables: &[gisclaw_protocol::VariableSummary]) -> String {
    let mut out: Vec<String> = variables
        .iter()
        .take(40)
        .map(|v| format!("  {} ({}): {}", v.name, v.kind, first_line(&v.summary, 160)))
        .collect();
    if variables.len() > 40 {
        out.push(format!("  … and {} more", variables.len() - 40));
    }
    out.join("\n")
}

/// The request for a model summary of a note: a short, structured note of
/// what was loaded, what worked, what failed and why.
pub fn summary_request(note: &str) -> Vec<Message> {
    vec![
        Message::text(
            Role::System,
            "You condense the working notes of a GIS analysis session so that it can go on in a smaller context. Answer with the note only, at most 200 words, under four headings: Loaded (files, variables, CRS), Worked, Failed and why, Still to do. Keep file paths, variable and column names, CRS codes and numbers exactly as written.",
        ),
        Message::text(Role::User, note.to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;
    use serde_json::json;

    fn cell(id: &str, code: &str) -> Message {
        Message {
            role: Role::Assistant,
            tool_calls: vec![ToolCall::function(
                id,
                "execute_python",
                json!({ "code": code }).to_string(),
            )],
            ..Message::default()
        }
    }

    fn history(rounds: usize, output_lines: usize) -> Vec<Message> {
        let mut m = vec![
            Message::text(Role::System, "You are a GIS analyst."),
            Message::text(Role::User, "Task: count the parcels."),
        ];
        for r in 0..rounds {
            let id = format!("c{r}");
            let code = if r == 2 {
                "parcels = gpd.read_file('data/parcels.shp')\nprint(len(parcels))".to_string()
            } else if r == 3 {
                "x = parcels['NO_SUCH_COLUMN']".to_string()
            } else {
                format!("step{r} = {r} * 2\nprint('row', step{r})")
            };
            m.push(cell(&id, &code));
            let observation = if r == 3 {
                "[error]\nTraceback (most recent call last):\n  File \"<cell-4>\", line 1, in <module>\n    x = parcels['NO_SUCH_COLUMN']\nKeyError: 'NO_SUCH_COLUMN'\n".to_string()
            } else {
                let body: Vec<String> = (0..output_lines)
                    .map(|k| format!("row {r}.{k} {}", "value ".repeat(8)))
                    .collect();
                format!(
                    "{}\n[variables]\n  step{r} (int, new): {r}\n",
                    body.join("\n")
                )
            };
            m.push(Message::tool_result(&id, observation));
        }
        m
    }

    /// A fold with the task (message 1) pinned.
    fn task_request(namespace: Option<&str>, force: bool) -> FoldRequest<'static> {
        FoldRequest {
            specs: &[],
            pinned: Some(1),
            namespace: namespace.map(str::to_string),
            force,
        }
    }

    fn keeper(window: u64) -> ContextKeeper {
        let mut k = ContextKeeper::new(Some(window));
        k.resolve(None, || None);
        k
    }

    #[test]
    fn folding_keeps_the_task_the_latest_round_and_the_variables() {
        let mut messages = history(12, 30);
        let k = keeper(4000);
        let before = k.estimate(&messages, &[]);
        assert!(k.needs_compaction(before), "{before}");
        let request = task_request(Some("  parcels (GeoDataFrame): 412 rows"), false);
        let done = compact(&mut messages, &request, &k, None).expect("compacted");
        assert!(done.tokens_after <= (TARGET * 4000.0) as u64, "{done:?}");
        assert_eq!(done.tokens_after, k.estimate(&messages, &[]));
        assert_eq!(messages[0].role, Role::System);
        assert_eq!(
            messages[1].content.as_deref(),
            Some("Task: count the parcels.")
        );
        let note = messages[2].content.clone().unwrap();
        assert!(
            note.starts_with(NOTE_BEGIN) && note.ends_with(NOTE_END),
            "{note}"
        );
        assert!(note.contains("parcels (GeoDataFrame): 412 rows"), "{note}");
        // The failed cell is its root cause, the read kept with its code.
        assert!(
            note.contains(
                "cell failed: x = parcels['NO_SUCH_COLUMN'] → KeyError: 'NO_SUCH_COLUMN'"
            ),
            "{note}"
        );
        assert!(
            note.contains("    parcels = gpd.read_file('data/parcels.shp')"),
            "{note}"
        );
        // The latest round is whole, its call and result paired.
        let last = messages.last().unwrap();
        assert_eq!(last.role, Role::Tool);
        assert_eq!(last.tool_call_id.as_deref(), Some("c11"));
        assert_eq!(messages[messages.len() - 2].tool_calls[0].id, "c11");
        // Every tool result still answers a call that is present.
        for m in messages.iter().filter(|m| m.role == Role::Tool) {
            let id = m.tool_call_id.as_deref().unwrap();
            assert!(
                messages
                    .iter()
                    .any(|a| a.tool_calls.iter().any(|c| c.id == id)),
                "{id}"
            );
        }
        assert!(!done.replaced.is_empty());
        assert!(!k.needs_compaction(done.tokens_after));
    }

    #[test]
    fn a_cell_whose_names_are_bound_again_later_is_one_line() {
        let mut messages = vec![
            Message::text(Role::System, "s"),
            Message::text(Role::User, "task"),
            cell(
                "a",
                "gdf = load('a')\nprint(gdf.head())\nprint(1)\nprint(2)",
            ),
            Message::tool_result("a", "ok"),
            cell("b", "gdf = load('b')"),
            Message::tool_result("b", "(no output)"),
            cell("c", "print('x' * 10)"),
            Message::tool_result("c", "xxxxxxxxxx"),
        ];
        let k = keeper(100_000);
        let request = task_request(None, true);
        compact(&mut messages, &request, &k, None).unwrap();
        let note = messages[2].content.clone().unwrap();
        assert!(
            note.contains("- cell ok, superseded (a later cell binds gdf again): gdf = load('a')"),
            "{note}"
        );
        assert!(note.contains("    gdf = load('b')"), "{note}");
        assert!(!note.contains("print(gdf.head())"), "{note}");
    }

    #[test]
    fn a_second_compaction_carries_the_first_notes_lines_in_one_note() {
        let mut messages = history(6, 2);
        let k = keeper(100_000);
        let request = task_request(Some("  a (int): 1"), true);
        compact(&mut messages, &request, &k, None).unwrap();
        messages.push(cell("late", "late = 1"));
        messages.push(Message::tool_result("late", "(no output)"));
        let request = FoldRequest {
            namespace: Some("  b (int): 2".into()),
            ..request
        };
        compact(&mut messages, &request, &k, None).unwrap();
        let notes: Vec<&Message> = messages.iter().filter(|m| is_note(m)).collect();
        assert_eq!(notes.len(), 1);
        let note = notes[0].content.as_deref().unwrap();
        assert!(note.contains("cell failed: x = parcels"), "{note}");
        assert!(
            note.contains("  b (int): 2") && !note.contains("  a (int): 1"),
            "{note}"
        );
        assert_eq!(note.matches(NOTE_BEGIN).count(), 1);
    }

    #[test]
    fn a_model_summary_replaces_the_note_when_folding_is_not_enough() {
        let mut messages = history(40, 3);
        let k = keeper(1200);
        let request = task_request(None, false);
        let mut asked = 0;
        let mut summarise = |note: &str| {
            asked += 1;
            assert!(note.contains(NOTE_BEGIN));
            Some(
                "Loaded: parcels. Worked: counts. Failed: NO_SUCH_COLUMN (no such column)."
                    .to_string(),
            )
        };
        let done = compact(&mut messages, &request, &k, Some(&mut summarise)).unwrap();
        assert_eq!(asked, 1);
        assert!(done.by_model, "{done:?}");
        assert!(done.note.contains("Failed: NO_SUCH_COLUMN"));
        assert!(done.tokens_after <= k.limit().unwrap(), "{done:?}");
    }

    #[test]
    fn without_a_summary_the_oldest_note_lines_go_to_fit_the_limit() {
        let mut messages = history(60, 3);
        let k = keeper(1200);
        let request = task_request(None, false);
        let done = compact(&mut messages, &request, &k, None).unwrap();
        assert!(done.tokens_after <= (TARGET * 1200.0) as u64, "{done:?}");
        assert!(
            done.note
                .contains("oldest line(s) of this note were dropped"),
            "{}",
            done.note
        );
    }

    #[test]
    fn long_observations_of_the_kept_round_are_shortened_when_needed() {
        let mut messages = history(3, 400);
        let k = keeper(3000);
        let request = task_request(None, false);
        let done = compact(&mut messages, &request, &k, None).unwrap();
        assert_eq!(done.shortened_observations, 1, "{done:?}");
        let last = messages.last().unwrap().content.clone().unwrap();
        assert!(
            last.contains("gisclaw shortened this observation"),
            "{last}"
        );
        assert!(last.starts_with("row 2.0"), "{last}");
    }

    #[test]
    fn a_fresh_prompt_is_cut_in_its_longest_message_to_fit() {
        let k = keeper(2000);
        let long = (0..400)
            .map(|i| format!("line {i} of the workflow"))
            .collect::<Vec<_>>()
            .join("\n");
        let messages = vec![
            Message::text(Role::System, "rules ".repeat(100)),
            Message::text(Role::User, long),
        ];
        let cut = fit_prompt(&messages, &[], &k, 1000);
        assert!(k.estimate(&cut, &[]) <= 1000);
        assert_eq!(cut[0], messages[0], "the system prompt is cut last");
        let text = cut[1].content.as_deref().unwrap();
        assert!(
            text.starts_with("line 0 of") && text.ends_with("line 399 of the workflow"),
            "{text}"
        );
        assert!(text.contains("gisclaw cut"));
    }

    #[test]
    fn refusals_teach_the_window_and_the_tokenizer_ratio() {
        let mut k = ContextKeeper::new(None);
        k.resolve(None, || None);
        assert!(k.window().is_none());
        assert!(!k.needs_compaction(1_000_000));
        k.learn_refusal(800, r#"{"error":{"message":"request (931 tokens) exceeds the available context size (512 tokens), try increasing it","n_prompt_tokens":931,"n_ctx":512}}"#);
        assert_eq!(k.window().unwrap().tokens, 512);
        assert!(k.take_refused() && !k.take_refused());
        assert_eq!(k.scaled(800), 931);
        let mut flagged = keeper(4096);
        flagged.learn_refusal(
            100,
            "request (5000 tokens) exceeds the available context size (8192 tokens)",
        );
        assert_eq!(flagged.window().unwrap().tokens, 4096, "the flag wins");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn a_chat_history_folds_earlier_turns_before_the_question_being_answered() {
        let mut messages = vec![Message::text(Role::System, "s")];
        for t in 0..30 {
            messages.push(Message::text(
                Role::User,
                format!("question {t}: {}", "why ".repeat(50)),
            ));
            messages.push(Message::text(
                Role::Assistant,
                format!("answer {t}: {}", "because ".repeat(50)),
            ));
        }
        messages.push(Message::text(Role::User, "what is in gdf?"));
        let pinned = messages.len() - 1;
        let k = keeper(2000);
        let request = FoldRequest {
            specs: &[],
            pinned: Some(pinned),
            namespace: None,
            force: false,
        };
        let done = compact(&mut messages, &request, &k, None).unwrap();
        assert!(done.tokens_after <= 1000, "{done:?}");
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(is_note(&messages[1]), "the note stands before the question");
        assert_eq!(messages[2].content.as_deref(), Some("what is in gdf?"));
        // Each turn is a line; the oldest lines went to fit the target.
        assert!(
            done.note
                .contains("oldest line(s) of this note were dropped"),
            "{}",
            done.note
        );
        assert!(
            done.note.contains("- you answered: answer 29"),
            "{}",
            done.note
        );
        assert!(!done.note.contains("question 0:"), "{}", done.note);
    }
}
