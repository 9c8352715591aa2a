//! The documentation says only what exists. Every relative link of the
//! README, the changelog, the benchmarks' README and `docs/*.md` leads to
//! a file of the repository (and, with `#…`, to one of its headings), and
//! every `gisclaw …` command line they show, in code spans and code
//! blocks, names subcommands and flags that the binary's own `--help`
//! lists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::common;

/// The entry points gisclaw starts itself with, dispatched before the
/// command line is parsed (so absent from `--help`).
const INTERNAL: &[&str] = &["__read", "__js"];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The documentation files: README.md, CHANGELOG.md, benchmarks/README.md
/// and every page under docs/.
fn doc_files() -> Vec<PathBuf> {
    let root = repo();
    let mut files: Vec<PathBuf> = ["README.md", "CHANGELOG.md", "benchmarks/README.md"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    files.extend(pages);
    for f in &files {
        assert!(f.is_file(), "{} is missing", f.display());
    }
    files
}

/// GitHub's anchor of a heading: lower case, punctuation other than `-`
/// and `_` dropped, spaces to `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The text outside fenced code blocks, and the text of the blocks that
/// hold shell commands (```sh, ```bash, ```shell, ```console: other blocks
/// are diagrams, configuration or output).
fn split_fences(text: &str) -> (String, String) {
    let (mut prose, mut code) = (String::new(), String::new());
    let mut fence: Option<bool> = None;
    for line in text.lines() {
        if let Some(lang) = line.trim_start().strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(matches!(lang.trim(), "sh" | "bash" | "shell" | "console")),
            };
            continue;
        }
        let to = match fence {
            None => &mut prose,
            Some(true) => &mut code,
            Some(false) => continue,
        };
        to.push_str(line);
        to.push('\n');
    }
    (prose, code)
}

/// The anchors of a markdown file's headings (duplicates numbered).
fn anchors(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let (prose, _) = split_fences(&text);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for line in prose.lines() {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = slug(heading);
        let n = seen.entry(base.clone()).or_default();
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// The link targets of markdown text: `[text](target)`.
fn link_targets(prose: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = prose;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let end = after.find(')').unwrap_or(after.len());
        let target = after[..end].split_whitespace().next().unwrap_or("");
        out.push(target.to_string());
        rest = &after[end.min(after.len())..];
    }
    out
}

#[test]
fn every_relative_link_of_the_docs_resolves() {
    let mut broken = Vec::new();
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let (prose, _) = split_fences(&text);
        // Inline code is not a link.
        let prose: String = prose
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, p)| p)
            .collect();
        for target in link_targets(&prose) {
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let dest = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            let name = file.strip_prefix(repo()).unwrap().display().to_string();
            if !dest.exists() {
                broken.push(format!("{name}: {target} (no such file)"));
                continue;
            }
            if let Some(anchor) = anchor {
                if dest.extension().is_some_and(|e| e == "md") && !anchors(&dest).contains(anchor) {
                    broken.push(format!("{name}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// What `gisclaw <path> --help` lists: subcommands and flags.
#[derive(Debug, Clone, Default)]
struct Help {
    subcommands: BTreeSet<String>,
    flags: BTreeSet<String>,
}

fn help(path: &[String]) -> Help {
    static CACHE: Mutex<BTreeMap<Vec<String>, Help>> = Mutex::new(BTreeMap::new());
    if let Some(h) = CACHE.lock().unwrap().get(path) {
        return h.clone();
    }
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let out = common::gisclaw(&args, &[]);
    assert!(
        out.status.success(),
        "gisclaw {}: {}",
        args.join(" "),
        common::text(&out)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut h = Help::default();
    let mut in_commands = false;
    for line in text.lines() {
        if line.starts_with("Commands:") {
            in_commands = true;
            continue;
        }
        if in_commands {
            match line
                .strip_prefix("  ")
                .and_then(|l| l.split_whitespace().next())
            {
                Some(name) if !line.starts_with("   ") => {
                    h.subcommands.insert(name.to_string());
                }
                _ if line.trim().is_empty() => in_commands = false,
                _ => {}
            }
        }
        for (i, _) in line.match_indices("--") {
            let flag: String = line[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if flag.len() > 2
                && line[..i]
                    .chars()
                    .last()
                    .is_none_or(|c| !c.is_alphanumeric())
            {
                h.flags.insert(flag);
            }
        }
    }
    CACHE.lock().unwrap().insert(path.to_vec(), h.clone());
    h
}

/// Every `gisclaw …` command line of `text` (code spans and code blocks),
/// as its words up to a shell operator.
fn command_lines(text: &str) -> Vec<Vec<String>> {
    let (prose, code) = split_fences(text);
    let mut pieces: Vec<String> = prose
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, p)| p.to_string())
        .collect();
    pieces.extend(code.lines().map(str::to_string));
    let mut out = Vec::new();
    for piece in pieces {
        let words: Vec<&str> = piece.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            let at_start = i == 0 || matches!(words[i - 1], "|" | "&&" | ";" | "||" | "$");
            let bin = w
                .trim_start_matches("target/debug/")
                .trim_start_matches("./");
            if bin != "gisclaw" || !at_start {
                continue;
            }
            let line: Vec<String> = words[i + 1..]
                .iter()
                .take_while(|w| !matches!(**w, "|" | "&&" | ";" | "||" | "#" | ">" | "2>&1"))
                .map(|w| w.to_string())
                .collect();
            out.push(line);
        }
    }
    out
}

/// The flag a word names (`[--runs` → `--runs`, `--arch=single` → `--arch`).
fn flag_of(word: &str) -> Option<String> {
    let w = word.trim_start_matches(['[', '(', '{']);
    let flag: String = w
        .strip_prefix("--")?
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    (!flag.is_empty()).then(|| format!("--{flag}"))
}

#[test]
fn every_command_and_flag_the_docs_name_exists() {
    let main = std::fs::read_to_string(repo().join("src/main.rs")).unwrap();
    let mut wrong = Vec::new();
    let mut seen = 0;
    for file in doc_files() {
        let name = file.strip_prefix(repo()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        for words in command_lines(&text) {
            seen += 1;
            let Some(first) = words.first() else { continue };
            if INTERNAL.contains(&first.as_str()) {
                assert!(main.contains(&format!("a == \"{first}\"")), "{first}");
                continue;
            }
            let mut path: Vec<String> = Vec::new();
            let mut h = help(&path);
            // Subcommands lead; the first other word ends them.
            let mut leading = true;
            for word in &words {
                let bare = word.trim_end_matches([',', '.', ')', ':']);
                if leading && h.subcommands.contains(bare) && bare != "help" {
                    path.push(bare.to_string());
                    h = help(&path);
                    continue;
                }
                // `<command>`, `…`: a placeholder, not a command.
                let placeholder = bare.starts_with('<') || bare.starts_with('…');
                if leading
                    && path.is_empty()
                    && flag_of(word).is_none()
                    && !word.starts_with('-')
                    && !placeholder
                {
                    wrong.push(format!(
                        "{name}: `gisclaw {}`: no command {bare:?}",
                        words.join(" ")
                    ));
                }
                leading = false;
                if let Some(flag) = flag_of(word).filter(|f| !h.flags.contains(f)) {
                    wrong.push(format!(
                        "{name}: `gisclaw {}`: gisclaw {} has no {flag}",
                        words.join(" "),
                        path.join(" ")
                    ));
                }
            }
        }
    }
    assert!(
        seen > 50,
        "only {seen} command lines found: the reader is broken"
    );
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_readme_fits_on_a_screen_and_keeps_its_two_commands() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 300, "README.md has {lines} lines (at most 300)");
    assert!(readme.contains("\nmake setup "), "make setup");
    assert!(readme.contains("\nmake test "), "make test");
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    assert!(
        ci.contains("make test"),
        ".ci/run runs the README's test command"
    );
}

#[test]
fn the_link_and_command_readers_see_what_they_must() {
    assert_eq!(
        slug("Provenance, cost, honest refusal and inspect_ai logs"),
        "provenance-cost-honest-refusal-and-inspect_ai-logs"
    );
    assert_eq!(
        slug("What the sandbox contains, and what it does not"),
        "what-the-sandbox-contains-and-what-it-does-not"
    );
    assert_eq!(
        link_targets("see [a](docs/x.md#y) and [b](#z)."),
        ["docs/x.md#y", "#z"]
    );
    let lines = command_lines("run `gisclaw eval --suite S [--runs 3] | tee x` then\n```sh\n$ gisclaw solve t.yaml --out o # note\n```\n```\ngisclaw ──socket──▶ worker\n```\n");
    assert_eq!(
        lines,
        [
            vec!["eval", "--suite", "S", "[--runs", "3]"],
            vec!["solve", "t.yaml", "--out", "o"]
        ]
    );
    assert_eq!(flag_of("[--arch=single"), Some("--arch".into()));
    assert_eq!(flag_of("DIR"), None);
}
