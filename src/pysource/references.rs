//! The names a Python script references: its calls and attribute accesses,
//! with import aliases resolved (`gpd.read_file` → `geopandas.read_file`).

use std::collections::{BTreeSet, HashMap};

use super::tokens::{tokenize, Token, TokenKind};

/// Python's keywords: a name before `(` that is one of these is not a call.
const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// One use of a name in a script.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Reference {
    /// The qualified name: resolved through imports when the chain starts at
    /// an imported name (`geopandas.read_file`), else the last attribute
    /// with a leading dot (`.to_crs` for `gdf.to_crs`, `.mean` for
    /// `df.col.mean`), or the bare name (`len`).
    pub name: String,
    /// True when it is called.
    pub called: bool,
}

/// Import aliases of a script (the bound name → the qualified name), and
/// the token ranges of the import statements.
fn import_aliases(tokens: &[Token]) -> (HashMap<String, String>, Vec<std::ops::Range<usize>>) {
    let mut aliases = HashMap::new();
    let mut statements = Vec::new();
    let text = |i: usize| tokens.get(i).map(|t| t.text.as_str()).unwrap_or("");
    let dotted = |mut i: usize| -> (String, usize) {
        let mut name = String::new();
        while text(i) == "." || text(i) == "..." {
            name.push_str(text(i));
            i += 1;
        }
        while tokens.get(i).is_some_and(|t| t.kind == TokenKind::Name) && text(i) != "import" {
            name.push_str(text(i));
            i += 1;
            if text(i) == "." {
                name.push('.');
                i += 1;
            } else {
                break;
            }
        }
        (name, i)
    };
    let mut i = 0;
    while i < tokens.len() {
        match text(i) {
            "import" if i == 0 || text(i - 1) != "." => {
                let mut j = i + 1;
                loop {
                    let (module, next) = dotted(j);
                    if module.is_empty() {
                        break;
                    }
                    j = next;
                    if text(j) == "as" {
                        aliases.insert(text(j + 1).to_string(), module);
                        j += 2;
                    } else {
                        let root = module.split('.').next().unwrap_or_default().to_string();
                        aliases.insert(root.clone(), root);
                    }
                    if text(j) != "," {
                        break;
                    }
                    j += 1;
                }
                statements.push(i..j);
                i = j;
            }
            "from" => {
                let (module, next) = dotted(i + 1);
                if module.is_empty() || text(next) != "import" {
                    i += 1;
                    continue;
                }
                let mut j = next + 1;
                if text(j) == "(" {
                    j += 1;
                }
                while tokens.get(j).is_some_and(|t| t.kind == TokenKind::Name) {
                    let name = text(j).to_string();
                    j += 1;
                    let bound = if text(j) == "as" {
                        j += 2;
                        text(j - 1).to_string()
                    } else {
                        name.clone()
                    };
                    aliases.insert(bound, format!("{module}.{name}"));
                    if text(j) != "," {
                        break;
                    }
                    j += 1;
                }
                if text(j) == ")" {
                    j += 1;
                }
                statements.push(i..j);
                i = j;
            }
            _ => i += 1,
        }
    }
    (aliases, statements)
}

/// Every call and attribute access of `source`, in order of appearance.
/// Bare names that are not called (variables) are not references.
pub fn references(source: &str) -> Vec<Reference> {
    let tokens = tokenize(source);
    let (aliases, statements) = import_aliases(&tokens);
    let in_import = |i: usize| statements.iter().any(|r| r.contains(&i));
    let is_name = |i: usize| {
        tokens[i].kind == TokenKind::Name && !KEYWORDS.contains(&tokens[i].text.as_str())
    };
    let chain_from = |start: usize| {
        let mut chain = vec![tokens[start].text.clone()];
        let mut end = start + 1;
        while end + 1 < tokens.len() && tokens[end].text == "." && is_name(end + 1) {
            chain.push(tokens[end + 1].text.clone());
            end += 2;
        }
        let called = tokens.get(end).is_some_and(|t| t.text == "(");
        (chain, called)
    };
    let mut found = Vec::new();
    for i in 0..tokens.len() {
        if !is_name(i) || in_import(i) {
            continue;
        }
        let before = |k: usize| {
            if i >= k {
                tokens[i - k].text.as_str()
            } else {
                ""
            }
        };
        if before(1) == "." {
            // `f(x).buffer(…)`, `d[k].area`: an attribute of an expression.
            if matches!(before(2), ")" | "]") {
                let (chain, called) = chain_from(i);
                found.push(Reference {
                    name: format!(".{}", chain[chain.len() - 1]),
                    called,
                });
            }
            continue;
        }
        if matches!(before(1), "def" | "class" | "as") {
            continue;
        }
        let (chain, called) = chain_from(i);
        if let Some(reference) = qualify(&chain, called, &aliases) {
            found.push(reference);
        }
    }
    found
}

fn qualify(chain: &[String], called: bool, aliases: &HashMap<String, String>) -> Option<Reference> {
    let name = match aliases.get(&chain[0]) {
        Some(module) => std::iter::once(module.as_str())
            .chain(chain[1..].iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("."),
        None if chain.len() == 1 => {
            if !called {
                return None;
            }
            chain[0].clone()
        }
        None => format!(".{}", chain[chain.len() - 1]),
    };
    Some(Reference { name, called })
}

/// The distinct functions a script calls (GeoAgent's labels).
pub fn called_functions(source: &str) -> BTreeSet<String> {
    references(source)
        .into_iter()
        .filter(|r| r.called)
        .map(|r| r.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_resolve_import_aliases_and_drop_receivers() {
        let src = "import geopandas as gpd\nfrom rasterio.mask import mask as clip_mask\nimport rasterio\nfrom pyproj import (Transformer,\n  CRS)\n\
                   gdf = gpd.read_file('a.shp').to_crs(3857)\nb = gdf.buffer(10).area\nwith rasterio.open('x.tif') as src:\n    out, t = clip_mask(src, b)\n\
                   t = Transformer.from_crs(4326, 3857)\ndef helper(x):\n    return len(x)\nif (b > 0).all(): pass\n";
        let calls: Vec<String> = references(src)
            .into_iter()
            .filter(|r| r.called)
            .map(|r| r.name)
            .collect();
        assert_eq!(
            calls,
            [
                "geopandas.read_file",
                ".to_crs",
                ".buffer",
                "rasterio.open",
                "rasterio.mask.mask",
                "pyproj.Transformer.from_crs",
                "len",
                ".all"
            ]
        );
        let attrs: Vec<String> = references(src)
            .into_iter()
            .filter(|r| !r.called)
            .map(|r| r.name)
            .collect();
        assert_eq!(attrs, [".area"]);
    }
}
