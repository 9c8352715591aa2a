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
/// `pred_results/map.png (1050×900 px, 61 KB)`.
pub fn describe(path: &Path, shown_as: &str) -> String {
    let pinned = match readable(path) {
        Ok(pinned) => pinned,
        Err(why) => return format!("{shown_as}: {why}"),
    };
    let bytes = pinned.facts.as_ref().map_or(0, |f| f.len);
    let path = pinned.path();
    let size = if bytes >= 1024 * 1024 {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    } else {
        format!("{} KB", bytes.div_ceil(1024))
    };
    match image::image_dimensions(path) {
        Ok((w, h)) => format!("{shown_as} ({w}×{h} px, {size})"),
        Err(_) => format!("{shown_as} ({size})"),
    }
}

/// The figure at `path`, pinned, when it may be read: a regular file
/// reached without a link out of its folder, that the sandbox's user could
/// read (a cell wrote it, or planted a link in its place: see
/// `gisclaw::beneath`).
fn readable(path: &Path) -> Result<gisclaw::beneath::Pinned, gisclaw::beneath::Refused> {
    let folder = path.parent().unwrap_or(Path::new("/"));
    let pinned = gisclaw::beneath::pin_under(folder, path)?;
    match pinned.facts {
        Some(_) => Ok(pinned),
        None => Err(gisclaw::beneath::Refused::Special("a folder")),
    }
}

/// Draws the image at `path` on stdout with `protocol`, at most [`ROWS`]
/// terminal rows high; an image larger than the output checks decode
/// (`gisclaw::outputs::MAX_IMAGE_PIXELS`) is refused from its header.
fn draw(path: &Path, protocol: Protocol) -> Result<(), String> {
    let pinned = readable(path).map_err(|why| why.to_string())?;
    let path = pinned.path();
    let reader = image25::ImageReader::open(path)
        .and_then(|r| r.with_guessed_format())
        .map_err(|e| e.to_string())?;
    let (w, h) = reader.into_dimensions().map_err(|e| e.to_string())?;
    if (w as usize).saturating_mul(h as usize) > gisclaw::outputs::MAX_IMAGE_PIXELS {
        return Err(format!("{w}×{h} px, too large to draw"));
    }
    let image = image25::ImageReader::open(path)
        .and_then(|r| r.with_guessed_format())
        .map_err(|e| e.to_string())?
        .decode()
        .map_err(|e| e.to_string())?;
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
    if let Some(protocol) = protocol {
        if let Err(e) = draw(path, protocol) {
            tracing::debug!("{}: not drawn: {e}", path.display());
        }
    }
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
        draw_if_shown(path, protocol);
        line(&format!("figure: {}", describe(path, &shown_as)));
    }
}
