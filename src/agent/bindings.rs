//! The names a cell binds at its top level, read from its text: what a
//! resumed chat checks for after a cell failed on replay (to say which
//! names it could not restore), and what compaction reads to find cells a
//! later cell superseded. A reading of the common forms (`a = …`,
//! `a, b = …`, `a: int = …`, `a += …`, `def`/`class`, `import … as`,
//! `from … import`, `for … in`, `with … as`), not a parser: a name it
//! misses is simply not reported.

/// The names `code` binds in statements at its top level, in order, each
/// once.
pub fn top_level_bindings(code: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |name: &str| {
        let name = name.trim().trim_start_matches('*');
        if is_identifier(name) && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    };
    for line in code.lines() {
        if line.starts_with([' ', '\t', '#']) || line.trim().is_empty() {
            continue;
        }
        let line = line.split(" #").next().unwrap_or(line).trim_end();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["def" | "class", rest, ..] | ["async", "def", rest, ..] => {
                add(rest.split(['(', ':']).next().unwrap_or(""));
            }
            ["import", ..] => {
                for part in line["import".len()..].split(',') {
                    let part = part.trim();
                    match part.split_once(" as ") {
                        Some((_, alias)) => add(alias),
                        None => add(part.split('.').next().unwrap_or("")),
                    }
                }
            }
            ["from", _, "import", ..] => {
                let list = line.split_once(" import ").map_or("", |(_, l)| l);
                for part in list.trim_matches(['(', ')', ' ']).split(',') {
                    let part = part.trim();
                    match part.split_once(" as ") {
                        Some((_, alias)) => add(alias),
                        None => add(part),
                    }
                }
            }
            ["for", ..] => {
                let targets = line["for".len()..].split(" in ").next().unwrap_or("");
                for target in targets.split(',') {
                    add(target.trim_matches(['(', ')', ' ']));
                }
            }
            ["with", ..] => {
                for part in line.split(" as ").skip(1) {
                    add(part.split([',', ':', ')']).next().unwrap_or(""));
                }
            }
            _ => {
                if let Some(targets) = assignment_targets(line) {
                    for target in targets.split(',') {
                        let target = target.trim_matches(['(', ')', '[', ']', ' ']);
                        add(target.split(':').next().unwrap_or(""));
                    }
                }
            }
        }
    }
    names
}

/// The text left of a statement's assignment (`=`, `+=`, … but not `==`,
/// `<=`, `>=`, `!=` or a keyword argument inside brackets).
fn assignment_targets(line: &str) -> Option<&str> {
    let bytes = line.as_bytes();
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    for (i, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'(' | b'[' | b'{') => depth += 1,
            (None, b')' | b']' | b'}') => depth -= 1,
            (None, b'=') if depth == 0 => {
                let before = i.checked_sub(1).map(|j| bytes[j]);
                let after = bytes.get(i + 1).copied();
                if after == Some(b'=') || matches!(before, Some(b'=' | b'<' | b'>' | b'!')) {
                    return None;
                }
                let end = match before {
                    Some(b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^' | b'@') => i - 1,
                    _ => i,
                };
                return Some(&line[..end]);
            }
            _ => {}
        }
    }
    None
}

/// Whether `name` is a plain Python identifier (not `a.b`, not `a[0]`).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_forms_of_binding_are_read_and_the_rest_left_out() {
        let code = "import geopandas as gpd, os\n\
                    from shapely.ops import unary_union, nearest_points as near\n\
                    africa = world[world.continent == 'Africa']\n\
                    reach, afr_cities = make(africa, cities)\n\
                    total: float = 0.0\n\
                    total += 1\n\
                    gdf.crs = 'EPSG:4326'\n\
                    rows[0] = 1\n\
                    if x == 1:\n    hidden = 2\n\
                    def buffer_km(g, km=1):\n    return g\n\
                    for i, row in enumerate(rows):\n    pass\n\
                    with open('f') as fh:\n    pass\n\
                    print(f(a=1))\n";
        assert_eq!(
            top_level_bindings(code),
            [
                "gpd",
                "os",
                "unary_union",
                "near",
                "africa",
                "reach",
                "afr_cities",
                "total",
                "buffer_km",
                "i",
                "row",
                "fh"
            ]
        );
    }
}
