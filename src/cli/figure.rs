//! Figures where the user is: a PNG or JPEG a cell wrote, shown inline in
//! the terminal when it can show images (kitty graphics, iTerm2 inline
//! images or sixel, drawn by the `viuer` crate), otherwise named in one
//! line with its size.
//!
//! Detection never waits on a terminal that might not answer: iTerm2's
//! protocol is known from the environment alone, and the kitty and sixel
//! queries are sent only to terminals whose environment says they speak
//! them (`GISCLAW_IMAGES=kitty|iterm|sixel|off` overrides). `NO_COLOR`, a
//! non-terminal stdout or `TERM=dumb` never get an escape code.

use std::path::Path;

/// A terminal graphics protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// kitty's graphics protocol (kitty, WezTerm, Ghostty, Konsole).
    Kitty,
    /// iTerm2's inline images (iTerm2, WezTerm, mintty, rio, Konsole).
    Iterm,
    /// DEC sixel graphics (foot, mlterm, contour, xterm -ti vt340).
    Sixel,
}

/// The protocol the terminal on stdout speaks, if any.
pub fn detect() -> Option<Protocol> {
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    // Colours off (NO_COLOR, or stdout not a terminal) means no escape code.
    if !gisclaw::chat::render::Style::detect().color || env("TERM") == "dumb" {
        return None;
    }
    match env("GISCLAW_IMAGES").to_ascii_lowercase().as_str() {
        "off" | "none" | "0" => return None,
        "kitty" => return Some(Protocol::Kitty),
        "iterm" => return Some(Protocol::Iterm),
        "sixel" => return Some(Protocol::Sixel),
        _ => {}
    }
    let (term, program) = (env("TERM"), env("TERM_PROGRAM"));
    let kitty_hint = std::env::var_os("KITTY_WINDOW_ID").is_some()
        || term.contains("kitty")
        || term.contains("ghostty")
        || program.contains("ghostty");
    if kitty_hint && viuer::get_kitty_support() != viuer::KittySupport::None {
        return Some(Protocol::Kitty);
    }
    if viuer::is_iterm_supported() {
        return Some(Protocol::Iterm);
    }
    let sixel_hint = ["foot", "mlterm", "contour", "sixel"]
        .iter()
        .any(|t| term.contains(t));
    if sixel_hint && viuer::is_sixel_supported() {
        return Some(Protocol::Sixel);
    }
    None
}

/// Terminal rows a drawn figure takes at most.
const ROWS: u32 = 20;

/// `path` (as `shown_as`) with its pixel size and file size:
/// `pred_results/map.png (1050×900 px, 61 KB)`. Read by a confined reader
/// (`gisclaw::outputs::shown::figure`); a link out of its folder, a FIFO
/// or a file the sandbox could not read is named, not read.
pub fn describe(path: &Path, shown_as: &str) -> String {
    describe_figure(path, shown_as, None)
}

/// [`describe`] with the figure already read.
fn describe_figure(
    path: &Path,
    shown_as: &str,
    read: Option<&Result<gisclaw::outputs::shown::Figure, String>>,
) -> String {
    let folder = path.parent().unwrap_or(Path::new("/"));
    let bytes = match gisclaw::beneath::check_under(folder, path) {
        Ok(facts) => facts.len,
        Err(why) => return format!("{shown_as}: {why}"),
    };
    let size = if bytes >= 1024 * 1024 {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    } else {
        format!("{} KB", bytes.div_ceil(1024))
    };
    let owned;
    let read = match read {
        Some(read) => read,
        None => {
            owned = gisclaw::outputs::shown::figure(path, false);
            &owned
        }
    };
    match read {
        Ok(f) => format!("{shown_as} ({}×{} px, {size})", f.width, f.height),
        Err(_) => format!("{shown_as} ({size})"),
    }
}

/// Draws `figure`'s pixels on stdout with `protocol`, at most [`ROWS`]
/// terminal rows high.
fn draw(figure: &gisclaw::outputs::shown::Figure, protocol: Protocol) -> Result<(), String> {
    if let Some(why) = &figure.not_drawn {
        return Err(why.clone());
    }
    let (w, h) = figure.drawn.ok_or("not decoded")?;
    let pixels = image25::RgbaImage::from_raw(w, h, figure.rgba.clone())
        .ok_or("the pixels do not fit their size")?;
    let image = image25::DynamicImage::ImageRgba8(pixels);
    let config = viuer::Config {
        absolute_offset: false,
        height: Some(ROWS),
        use_kitty: protocol == Protocol::Kitty,
        use_iterm: protocol == Protocol::Iterm,
        use_sixel: protocol == Protocol::Sixel,
        ..viuer::Config::default()
    };
    viuer::print(&image, &config)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Draws the image at `path` when there is a `protocol`. An image that
/// cannot be drawn is only logged: the caller's line names it anyway.
pub fn draw_if_shown(path: &Path, protocol: Option<Protocol>) {
    let _ = draw_read(path, protocol);
}

/// Reads the figure (its pixels when there is a `protocol`) and draws it.
fn draw_read(
    path: &Path,
    protocol: Option<Protocol>,
) -> Result<gisclaw::outputs::shown::Figure, String> {
    let read = gisclaw::outputs::shown::figure(path, protocol.is_some());
    if let (Some(protocol), Ok(figure)) = (protocol, &read) {
        if let Err(e) = draw(figure, protocol) {
            tracing::debug!("{}: not drawn: {e}", path.display());
        }
    }
    read
}

/// Shows each figure: drawn when there is a `protocol`, then its
/// `figure: …` line (named relative to `base`), passed to `line`.
pub fn show(
    paths: &[std::path::PathBuf],
    base: &Path,
    protocol: Option<Protocol>,
    line: &mut dyn FnMut(&str),
) {
    for path in paths {
        let shown_as = path
            .strip_prefix(base)
            .unwrap_or(path)
            .display()
            .to_string();
        let read = draw_read(path, protocol);
        line(&format!(
            "figure: {}",
            describe_figure(path, &shown_as, Some(&read))
        ));
    }
}
