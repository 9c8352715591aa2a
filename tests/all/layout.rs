//! The library's module layout stays a layering: no two modules import
//! each other, directly or round a longer loop — neither the top-level
//! modules (`agent`, `eval`, `llm`…) nor the files inside one of them. A
//! cycle is how a helper ends up in the wrong module; this test names it.
//!
//! Imports are read as Rust writes them: `use` trees with their groups
//! (`use super::{a, b::{c, d}}`), `self`/`super`/`crate` paths in code, and
//! `super::super::` from files deeper in a module, each resolved to the
//! module it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module graph: each module's name and the modules it imports.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code without comments (doc links are not imports) and without its
/// `#[cfg(test)]` tail (tests may reach anywhere).
fn library_part(text: &str) -> String {
    let code = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    code.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths a `use` tree names, each as its segments: `a::{b, c::{d, e}}`
/// → `a::b`, `a::c::d`, `a::c::e` (`self` in a group names the prefix;
/// `as` renames and `*` are dropped).
fn expand_use_tree(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    // Split at the first top-level `{`.
    if let Some(open) = tree.find('{') {
        let close = tree.rfind('}').filter(|&c| c > open).unwrap_or(tree.len());
        let prefix: Vec<String> = segments(&tree[..open]);
        let inner = &tree[open + 1..close];
        let mut out = Vec::new();
        for part in split_top_level(inner) {
            for tail in expand_use_tree(part) {
                let mut path = prefix.clone();
                if tail != ["self"] {
                    path.extend(tail);
                }
                out.push(path);
            }
        }
        return out;
    }
    let path = segments(tree);
    if path.is_empty() {
        Vec::new()
    } else {
        vec![path]
    }
}

/// `a::b as c` / `a::b::*` / `a::b::` → `["a", "b"]`.
fn segments(path: &str) -> Vec<String> {
    let path = path.split(" as ").next().unwrap_or("");
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "*")
        .map(String::from)
        .collect()
}

/// `a, b::{c, d}, e` → `a`, `b::{c, d}`, `e`.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// Whether a `use` after `before` begins an item: first on its line, or
/// after `pub`, `pub(crate)`, `pub(super)` there.
fn starts_an_item(before: &str) -> bool {
    let line = before.rsplit('\n').next().unwrap_or("").trim();
    matches!(line, "" | "pub" | "pub(crate)" | "pub(super)")
}

/// Every path in `code` that starts at `crate`, `super` or `self`: the
/// trees of its `use` items, expanded, and such paths written in code.
fn imported_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest_start = 0;
    // `use` items (also `pub use`, `pub(crate) use`).
    let mut outside_use = String::new();
    for (i, _) in code.match_indices("use ") {
        if i < rest_start || !starts_an_item(&code[..i]) {
            continue;
        }
        let Some(end) = code[i..].find(';') else {
            continue;
        };
        outside_use.push_str(&code[rest_start..i]);
        paths.extend(expand_use_tree(&code[i + 4..i + end]));
        rest_start = i + end + 1;
    }
    outside_use.push_str(&code[rest_start..]);
    // Paths in code: `crate::a::b`, `super::super::x`, `self::y`.
    for root in ["crate::", "super::", "self::"] {
        for (i, _) in outside_use.match_indices(root) {
            let before = &outside_use[..i];
            if before.ends_with(is_ident) || before.ends_with("::") {
                continue;
            }
            let path: String = outside_use[i..]
                .chars()
                .take_while(|c| is_ident(*c) || *c == ':')
                .collect();
            paths.push(segments(&path));
        }
    }
    paths
        .into_iter()
        .filter(|p| {
            matches!(
                p.first().map(String::as_str),
                Some("crate" | "super" | "self")
            )
        })
        .collect()
}

/// `path` (from a file of module `module`) as a path from the crate root:
/// `super::x` in `card::gdal_entry` → `card::x`; `None` for one that
/// leaves the crate.
fn resolve(module: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String> = Vec::new();
    let mut rest = path;
    match path.first()?.as_str() {
        "crate" => rest = &path[1..],
        "self" => {
            base = module.to_vec();
            rest = &path[1..];
        }
        "super" => {
            base = module.to_vec();
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The top-level graph and, per top-level module, the graph of its files,
/// of the library under `src` (the CLI, the binary, stays outside).
fn import_graphs(src: &Path) -> (Graph, BTreeMap<String, Graph>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut top = Graph::new();
    let mut inner: BTreeMap<String, Graph> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(src).unwrap();
        let mut module: Vec<String> = rel
            .with_extension("")
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if matches!(module[0].as_str(), "cli" | "main" | "lib") {
            continue;
        }
        if module.last().is_some_and(|m| m == "mod") {
            module.pop();
        }
        let code = library_part(&std::fs::read_to_string(file).unwrap());
        let name = module[0].clone();
        top.entry(name.clone()).or_default();
        for path in imported_paths(&code) {
            let Some(target) = resolve(&module, &path) else {
                continue;
            };
            let Some(first) = target.first() else {
                continue;
            };
            if *first != name {
                top.entry(name.clone()).or_default().insert(first.clone());
                continue;
            }
            // Inside the module: from the file's own part to the target's.
            if let (Some(from), Some(to)) = (module.get(1), target.get(1)) {
                let graph = inner.entry(name.clone()).or_default();
                graph.entry(from.clone()).or_default();
                if from != to {
                    graph.get_mut(from).unwrap().insert(to.clone());
                }
            }
        }
    }
    // Only the module's own parts are nodes (not items named in it).
    for graph in inner.values_mut() {
        let nodes: BTreeSet<String> = graph.keys().cloned().collect();
        for deps in graph.values_mut() {
            deps.retain(|d| nodes.contains(d));
        }
    }
    (top, inner)
}

/// The strongly connected components of more than one node (Tarjan).
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !graph.contains_key(w) {
                continue;
            }
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.stack.contains(&w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found
}

/// Every cycle of the library under `src`, one line each.
fn cycles_under(src: &Path) -> Vec<String> {
    let (top, inner) = import_graphs(src);
    let mut found: Vec<String> = cycles(&top)
        .into_iter()
        .map(|c| format!("top level: {}", c.join(" ↔ ")))
        .collect();
    for (module, graph) in &inner {
        found.extend(
            cycles(graph)
                .into_iter()
                .map(|c| format!("inside {module}: {}", c.join(" ↔ "))),
        );
    }
    found
}

#[test]
fn no_module_imports_a_module_that_imports_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (top, inner) = import_graphs(&src);
    assert!(
        top.contains_key("agent") && top.contains_key("sandbox") && inner.contains_key("card"),
        "{top:?}"
    );
    let found = cycles_under(&src);
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

/// The layers of `eval` an import may go down to: `metrics` imports no
/// other layer, `running` only `metrics`, `reports` both.
const EVAL_LAYERS: [(&str, &[&str]); 3] = [
    ("metrics", &[]),
    ("running", &["metrics"]),
    ("reports", &["metrics", "running"]),
];

/// Imports between `eval`'s layers that go up, one line each.
fn eval_layer_breaches(src: &Path) -> Vec<String> {
    let (_, inner) = import_graphs(src);
    let Some(graph) = inner.get("eval") else {
        return vec!["no eval module".into()];
    };
    let mut found = Vec::new();
    for (part, deps) in graph {
        let Some((_, allowed)) = EVAL_LAYERS.iter().find(|(name, _)| name == part) else {
            found.push(format!("eval::{part} is in no layer"));
            continue;
        };
        for dep in deps.iter().filter(|d| !allowed.contains(&d.as_str())) {
            found.push(format!("eval::{part} imports eval::{dep}"));
        }
    }
    found
}

#[test]
fn eval_layers_import_only_downwards() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = eval_layer_breaches(&src);
    assert!(found.is_empty(), "{}", found.join("\n"));
    // A planted upward import, in a grouped tree, is named.
    let dir = planted(&[
        (
            "eval/metrics/stats.rs",
            "use crate::eval::{running::record::RunRecord};",
        ),
        (
            "eval/running/record.rs",
            "use super::super::metrics::stats;",
        ),
        ("eval/reports/task.rs", "use crate::eval::running::record;"),
    ]);
    assert_eq!(
        eval_layer_breaches(dir.path()),
        ["eval::metrics imports eval::running"]
    );
}
/// Writes `files` (path under `src/`, text) into a fresh folder.
fn planted(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn a_circle_planted_in_grouped_imports_is_found() {
    // card/a → card/b by a group, b → c by a nested group, c → a by a path
    // in code: the three files are one circle.
    let dir = planted(&[
        ("lib.rs", "pub mod card;"),
        ("card/mod.rs", "mod a; mod b; mod c;"),
        ("card/a.rs", "use super::{b, x::Y};\nfn f() { b::g() }"),
        (
            "card/b.rs",
            "pub(super) use super::{\n    self as card,\n    c::{self, Z as W},\n};",
        ),
        ("card/c.rs", "fn h() { crate::card::a::f(); }"),
    ]);
    assert_eq!(
        cycles_under(dir.path()),
        ["inside card: a ↔ b ↔ c".to_string()]
    );
    // The same files with the last edge only in a comment and a test: none.
    let dir = planted(&[
        ("card/a.rs", "use super::{b, x::Y};"),
        ("card/b.rs", "use super::{c::{self}};"),
        (
            "card/c.rs",
            "// crate::card::a\n#[cfg(test)]\nmod tests { use super::super::a; }",
        ),
    ]);
    assert!(cycles_under(dir.path()).is_empty());
    // Between top-level modules, through `super::super::` from a deep file
    // and a grouped `crate::{…}` import.
    let dir = planted(&[
        (
            "eval/report/markdown.rs",
            "use super::super::super::llm::Usage;",
        ),
        ("llm/mod.rs", "use crate::{util, eval::{self}};"),
    ]);
    assert_eq!(
        cycles_under(dir.path()),
        ["top level: eval ↔ llm".to_string()]
    );
}

#[test]
fn the_cycle_finder_finds_a_loop_of_three_and_ignores_a_chain() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g = Graph::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    assert_eq!(
        cycles(&graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
    assert!(cycles(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
    assert_eq!(
        expand_use_tree("crate::{agent::x, eval::{self, y as z}, *}"),
        [
            vec!["crate", "agent", "x"],
            vec!["crate", "eval"],
            vec!["crate", "eval", "y"]
        ]
        .map(|p| p.into_iter().map(String::from).collect::<Vec<_>>())
    );
    assert_eq!(
        resolve(
            &["eval".into(), "report".into(), "markdown".into()],
            &["super".into(), "super".into(), "stats".into()]
        ),
        Some(vec!["eval".to_string(), "stats".into()])
    );
}

/// The functions of `text` (its part before `#[cfg(test)]`) longer than
/// `limit` lines, as `name (lines)`: a function runs from its `fn` line to
/// the first closing brace at its own indentation.
fn long_functions(text: &str, limit: usize) -> Vec<String> {
    let code = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let signature = [
            "pub(crate) fn ",
            "pub(super) fn ",
            "pub fn ",
            "fn ",
            "async fn ",
            "pub async fn ",
        ]
        .iter()
        .find_map(|p| trimmed.strip_prefix(p));
        let Some(rest) = signature else { continue };
        if line.trim_end().ends_with(';') {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(end) = lines[i + 1..].iter().position(|l| {
            l.len() - l.trim_start().len() == indent && l.trim_start().starts_with('}')
        }) else {
            continue;
        };
        let length = end + 2;
        if length > limit {
            found.push(format!("{name} ({length} lines)"));
        }
    }
    found
}

#[test]
fn no_function_of_the_library_or_cli_is_over_150_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut long = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for f in long_functions(&text, 150) {
            long.push(format!(
                "{}: {f}",
                file.strip_prefix(&src).unwrap().display()
            ));
        }
    }
    assert!(
        long.is_empty(),
        "functions over 150 lines (split them where the pieces have names):\n{}",
        long.join("\n")
    );
    // The counter sees a long one.
    let planted = format!(
        "fn big() {{\n{}}}\n\nfn small() {{\n}}\n",
        "    x();\n".repeat(160)
    );
    assert_eq!(long_functions(&planted, 150), ["big (162 lines)"]);
}
