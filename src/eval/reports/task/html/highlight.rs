//! Python source as HTML with syntax classes, from tree-sitter-python's
//! parse tree: `kw` keywords, `str` strings, `com` comments, `num`
//! numbers, `con` True/False/None, `def` names being defined, `call` names
//! being called. Everything else is escaped text; code that does not parse
//! keeps what the parser recognised around its error nodes.

use tree_sitter::{Node, Parser};

use crate::eval::reports::html::escape;

/// `code` as escaped HTML with `<span class="…">` around the tokens that
/// get a colour.
pub fn python(code: &str) -> String {
    let mut parser = Parser::new();
    let tree = parser
        .set_language(&tree_sitter_python::language())
        .ok()
        .and_then(|()| parser.parse(code, None));
    let Some(tree) = tree else {
        return escape(code);
    };
    let mut spans = Vec::new();
    collect(tree.root_node(), code, &mut spans);
    let mut out = String::with_capacity(code.len() * 2);
    let mut at = 0;
    for (start, end, class) in spans {
        if start < at || end > code.len() {
            continue;
        }
        out.push_str(&escape(&code[at..start]));
        out.push_str("<span class=\"");
        out.push_str(class);
        out.push_str("\">");
        out.push_str(&escape(&code[start..end]));
        out.push_str("</span>");
        at = end;
    }
    out.push_str(&escape(&code[at..]));
    out
}

/// The coloured byte ranges under `node`, in order.
fn collect(node: Node, code: &str, spans: &mut Vec<(usize, usize, &'static str)>) {
    let kind = node.kind();
    let whole = |class| (node.start_byte(), node.end_byte(), class);
    match kind {
        "string" | "concatenated_string" => return spans.push(whole("str")),
        "comment" => return spans.push(whole("com")),
        "integer" | "float" => return spans.push(whole("num")),
        "true" | "false" | "none" => return spans.push(whole("con")),
        "identifier" => {
            if let Some(class) = identifier_class(node) {
                spans.push(whole(class));
            }
            return;
        }
        _ => {}
    }
    if node.child_count() == 0 {
        // Anonymous tokens spelled with letters are the keywords
        // (`def`, `import`, `in`, `lambda`, …); punctuation stays plain.
        let text = &code[node.start_byte()..node.end_byte()];
        if !node.is_named() && !text.is_empty() && text.bytes().all(|b| b.is_ascii_lowercase()) {
            spans.push(whole("kw"));
        }
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        collect(child, code, spans);
    }
}

/// The class of an identifier: the name a `def`/`class` defines, or the
/// name a call calls (`f(…)`, `obj.f(…)`).
fn identifier_class(node: Node) -> Option<&'static str> {
    let parent = node.parent()?;
    match parent.kind() {
        "function_definition" | "class_definition"
            if parent.child_by_field_name("name") == Some(node) =>
        {
            Some("def")
        }
        "call" if parent.child_by_field_name("function") == Some(node) => Some("call"),
        "attribute" if parent.child_by_field_name("attribute") == Some(node) => {
            let call = parent.parent()?;
            (call.kind() == "call" && call.child_by_field_name("function") == Some(parent))
                .then_some("call")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_strings_comments_numbers_and_calls_get_classes() {
        let html = python(
            "import os  # the <os>\ndef f(x):\n    return os.path.join(x, \"a&b\", 2.5, None)\n",
        );
        assert!(html.contains("<span class=\"kw\">import</span>"), "{html}");
        assert!(
            html.contains("<span class=\"com\"># the &lt;os&gt;</span>"),
            "{html}"
        );
        assert!(html.contains("<span class=\"def\">f</span>"), "{html}");
        assert!(html.contains("<span class=\"kw\">return</span>"), "{html}");
        assert!(html.contains("<span class=\"call\">join</span>"), "{html}");
        assert!(
            html.contains("<span class=\"str\">&quot;a&amp;b&quot;</span>"),
            "{html}"
        );
        assert!(html.contains("<span class=\"num\">2.5</span>"), "{html}");
        assert!(html.contains("<span class=\"con\">None</span>"), "{html}");
    }

    #[test]
    fn broken_code_and_markup_stay_escaped_text() {
        let code = "x = (1,\n</pre><script>alert(1)</script> é";
        let html = python(code);
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        // No character is lost or doubled.
        let text = html
            .split('<')
            .map(|p| p.split_once('>').map_or(p, |(_, t)| t))
            .collect::<String>();
        assert_eq!(
            text.replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&amp;", "&"),
            code
        );
    }
}
