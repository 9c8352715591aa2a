//! The library's module layout stays a layering: no two modules import
//! each other, directly or round a longer loop — neither the top-level
//! modules (`agent`, `eval`, `llm`…) nor the files inside one of them. A
//! cycle is how a helper ends up in the wrong module; this test names it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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

/// The names following `prefix` in `text` (`crate::` → `agent`, `eval`…).
fn names_after(text: &str, prefix: &str) -> BTreeSet<String> {
    text.match_indices(prefix)
        .filter(|(i, _)| {
            // `crate::x` but not `gisclaw_crate::x` or `mycrate::x`.
            !text[..*i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        })
        .map(|(i, _)| {
            text[i + prefix.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|n| !n.is_empty())
        .collect()
}

/// The code without comments (doc links are not imports) and without its
/// `#[cfg(test)]` tail (tests may reach anywhere).
fn library_part(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let code = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => &text,
    };
    code.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The strongly connected components of more than one node (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
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

#[test]
fn no_module_imports_a_module_that_imports_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // Top level: `src/<top>.rs` or `src/<top>/…`; the CLI (the binary) is
    // outside the library.
    let mut top: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // Inside each top-level module: its files' mutual imports.
    let mut inner: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let parts: Vec<String> = rel
            .with_extension("")
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if matches!(parts[0].as_str(), "cli" | "main" | "lib") {
            continue;
        }
        let text = library_part(file);
        let module = parts[0].clone();
        let used = names_after(&text, "crate::");
        top.entry(module.clone())
            .or_default()
            .extend(used.into_iter().filter(|u| *u != module));
        if parts.len() < 2 || parts[1] == "mod" {
            continue;
        }
        let sub = parts[1].clone();
        let mut deps = names_after(&text, &format!("crate::{module}::"));
        // `super::x` from a file directly in the module names a sibling.
        if parts.len() == 2 {
            deps.extend(names_after(&text, "super::"));
        }
        deps.remove(&sub);
        inner
            .entry(module)
            .or_default()
            .entry(sub)
            .or_default()
            .extend(deps);
    }
    assert!(
        top.contains_key("agent") && top.contains_key("sandbox"),
        "{top:?}"
    );
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
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn the_cycle_finder_finds_a_loop_of_three_and_ignores_a_chain() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
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
        names_after("use crate::agent::x; mycrate::no; crate::eval", "crate::"),
        ["agent", "eval"].map(String::from).into()
    );
}
