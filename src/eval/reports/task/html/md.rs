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
}
