//! Markdown as HTML (pulldown-cmark, GitHub tables), made safe for text
//! gisclaw did not write: raw HTML is shown as text, links go only to
//! `http(s)` pages or anchors of the page, and an image is either resolved
//! by the caller (the report's own charts, embedded) or shown as its alt
//! text (never fetched: the page makes no request when it is viewed).

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

/// How images in the markdown are treated.
pub enum Images<'a> {
    /// Each image's address is replaced by what the function returns (a
    /// `data:` URI); `None` shows the alt text instead.
    Resolve(&'a dyn Fn(&str) -> Option<String>),
    /// Every image is shown as `[image: alt]`.
    AltText,
}

/// `text` as HTML.
pub fn to_html(text: &str, images: Images) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let mut events = Vec::new();
    let mut dropped_link = false;
    let mut dropped_image = false;
    for event in Parser::new_ext(text, options) {
        match event {
            Event::Html(raw) | Event::InlineHtml(raw) => events.push(Event::Text(raw)),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                if safe_link(&dest_url) {
                    events.push(Event::Start(Tag::Link {
                        link_type,
                        dest_url,
                        title,
                        id,
                    }));
                } else {
                    dropped_link = true;
                }
            }
            Event::End(TagEnd::Link) if dropped_link => dropped_link = false,
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let resolved = match &images {
                    Images::Resolve(resolve) => resolve(&dest_url),
                    Images::AltText => None,
                };
                match resolved {
                    Some(uri) => events.push(Event::Start(Tag::Image {
                        link_type,
                        dest_url: CowStr::from(uri),
                        title,
                        id,
                    })),
                    None => {
                        dropped_image = true;
                        events.push(Event::Text("[image: ".into()));
                    }
                }
            }
            Event::End(TagEnd::Image) if dropped_image => {
                dropped_image = false;
                events.push(Event::Text("]".into()));
            }
            other => events.push(other),
        }
    }
    let mut html = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    html
}

/// One line of markdown (a heading's or a table cell's) as inline HTML:
/// the same safe rendering, without the paragraph around it.
pub fn inline(text: &str) -> String {
    let html = to_html(&no_block_start(text), Images::AltText);
    let html = html.trim_end();
    html.strip_prefix("<p>")
        .and_then(|h| h.strip_suffix("</p>"))
        .unwrap_or(html)
        .to_string()
}

/// `text` on one line, a leading mark that would open a block (a list
/// item, a heading, a quote, an indented code block) escaped, so it reads
/// as the text it is.
fn no_block_start(text: &str) -> String {
    let line = text.replace(['\r', '\n'], " ");
    let line = line.trim_start();
    let spaced = |rest: &str| rest.is_empty() || rest.starts_with([' ', '\t']);
    let first = line.chars().next().unwrap_or(' ');
    let rule = matches!(first, '-' | '*' | '_')
        && line.chars().filter(|c| *c == first).count() >= 3
        && line.chars().all(|c| c == first || c == ' ' || c == '\t');
    let hashes = line.bytes().take_while(|b| *b == b'#').count();
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    let at = if first == '>'
        || rule
        || (matches!(first, '-' | '+' | '*') && spaced(&line[1..]))
        || (hashes > 0 && spaced(&line[hashes..]))
    {
        Some(0)
    } else if digits > 0 && line[digits..].starts_with(['.', ')']) && spaced(&line[digits + 1..]) {
        Some(digits)
    } else {
        None
    };
    match at {
        Some(i) => format!("{}\\{}", &line[..i], &line[i..]),
        None => line.to_string(),
    }
}

/// Links the page may follow: other web pages and its own anchors.
fn safe_link(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    lower.starts_with('#') || lower.starts_with("https://") || lower.starts_with("http://")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_scripts_and_foreign_links_become_text() {
        let html = to_html(
            "Hi <script>alert(1)</script> [x](javascript:alert(1)) [ok](https://a.org) ![m](https://evil/p.png)\n\n<img src=x onerror=alert(1)>\n",
            Images::AltText,
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(html.contains("<a href=\"https://a.org\">ok</a>"), "{html}");
        assert!(html.contains("[image: m]"), "{html}");
    }

    #[test]
    fn tables_render_and_images_are_resolved_by_the_caller() {
        let resolve =
            |url: &str| (url == "charts/a.png").then(|| "data:image/png;base64,AA".to_string());
        let html = to_html(
            "| a | b |\n|---|---|\n| 1 | **2** |\n\n![chart](charts/a.png) ![other](charts/b.png)\n",
            Images::Resolve(&resolve),
        );
        assert!(
            html.contains("<table>") && html.contains("<th>a</th>"),
            "{html}"
        );
        assert!(html.contains("<strong>2</strong>"), "{html}");
        assert!(
            html.contains("src=\"data:image/png;base64,AA\" alt=\"chart\""),
            "{html}"
        );
        assert!(html.contains("[image: other]"), "{html}");
    }

    #[test]
    fn inline_text_has_no_paragraph_and_no_raw_html() {
        assert_eq!(inline("**0.5** `f`"), "<strong>0.5</strong> <code>f</code>");
        assert_eq!(
            inline("<b onclick=x>t</b>"),
            "&lt;b onclick=x&gt;t&lt;/b&gt;"
        );
        assert_eq!(inline("1 | 2"), "1 | 2");
        for text in [
            "- x", "1. x", "# x", "> x", "    x", "+ x", "12) x", "---", "* * *", "###",
        ] {
            assert_eq!(
                inline(text).replace("&gt;", ">"),
                text.trim_start(),
                "{text}"
            );
        }
    }
}
