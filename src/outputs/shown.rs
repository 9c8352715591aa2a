//! What a model that sees images is shown of a figure a cell wrote
//! (vision feedback; the agent and the MCP server): the image at most
//! [`MAX_SIDE`] px on its longer side, as PNG, base64-encoded, with its
//! token estimate ([`Shown`]).

use std::path::Path;

use base64::Engine as _;
use image25::ImageEncoder as _;

use crate::llm::vision::{image_tokens, Shown, MAX_SIDE};

/// Reads the image at `path` and makes it at most [`MAX_SIDE`] px on its
/// longer side, as PNG; `None` when it cannot be read as an image. A PNG
/// that already fits is sent as it is; a bigger image is averaged down
/// ([`downscale`]) and encoded with fast compression (the payload's size
/// does not change its tokens). The example's 957×839 map: 18–20 ms the
/// straightforward way (decode, Triangle resize, default PNG), ~8.5 ms here.
///
/// Decoded in a confined reader that sees the image's folder alone
/// ([`crate::reader`]); this process only passes the answer on.
pub fn prepare(path: &Path) -> Option<Shown> {
    let folder = path.parent()?;
    let name = path.file_name()?.to_string_lossy().into_owned();
    let root = crate::reader::Root::exact(folder).ok()?;
    let request = crate::reader::Request::Shown { file: name };
    match crate::reader::ask::<Option<Shown>>(&root, request, super::CHECK_TIME) {
        Ok((shown, _)) => shown,
        Err(why) => {
            tracing::debug!("{}: not shown: {why}", path.display());
            None
        }
    }
}

/// [`prepare`], in this process: only the confined reader calls it.
pub(crate) fn prepare_here(folder: &Path, path: &Path) -> Option<Shown> {
    // Only as the cell could read it (crate::beneath): never through a
    // link out of its folder, never a FIFO or a host file.
    // Pinned: the decoder reads the very file checked.
    let pinned = crate::beneath::pin_under(folder, path).ok()?;
    pinned.facts.as_ref()?;
    let path = pinned.path();
    let reader = image25::ImageReader::open(path)
        .ok()?
        .with_guessed_format()
        .ok()?;
    let is_png = reader.format() == Some(image25::ImageFormat::Png);
    let (width, height) = reader.into_dimensions().ok()?;
    if is_png && width.max(height) <= MAX_SIDE {
        let bytes = std::fs::read(path).ok()?;
        return Some(shown(&bytes, width, height));
    }
    let decoded = super::image_pixels(path).ok()?;
    let (width, height) = (
        u32::try_from(decoded.width).ok()?,
        u32::try_from(decoded.height).ok()?,
    );
    let rgba = decoded.into_rgba();
    let fit = f64::from(MAX_SIDE) / f64::from(width.max(height));
    let (nw, nh, pixels) = if fit < 1.0 {
        let side = |v: u32| ((f64::from(v) * fit).round() as u32).clamp(1, MAX_SIDE);
        let (nw, nh) = (side(width), side(height));
        let small = downscale(
            &rgba,
            width as usize,
            height as usize,
            nw as usize,
            nh as usize,
        );
        (nw, nh, small)
    } else {
        (width, height, rgba)
    };
    let mut png = Vec::new();
    image25::codecs::png::PngEncoder::new_with_quality(
        &mut png,
        image25::codecs::png::CompressionType::Fast,
        image25::codecs::png::FilterType::Adaptive,
    )
    .write_image(&pixels, nw, nh, image25::ExtendedColorType::Rgba8)
    .ok()?;
    Some(shown(&png, nw, nh))
}

/// A figure for the terminal: its size, and (when asked for) its pixels
/// fit in [`MAX_SIDE`] px, as 8-bit RGBA: decoded in a confined reader,
/// so that the terminal's drawing never runs an image decoder here.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Figure {
    /// Its width in pixels, as its header says.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
    /// The size of the pixels that follow (`None`: not decoded).
    pub drawn: Option<(u32, u32)>,
    /// Why it was not decoded, when it was asked for and was not.
    pub not_drawn: Option<String>,
    /// The RGBA pixels (the answer's binary part).
    #[serde(skip)]
    pub rgba: Vec<u8>,
}

/// The figure at `path` (its size, and its pixels when `pixels`), read by
/// a confined reader that sees its folder alone.
pub fn figure(path: &Path, pixels: bool) -> Result<Figure, String> {
    let folder = path.parent().ok_or("not a file")?;
    let name = path
        .file_name()
        .ok_or("not a file")?
        .to_string_lossy()
        .into_owned();
    let root = crate::reader::Root::exact(folder).map_err(|e| e.to_string())?;
    let request = crate::reader::Request::Figure { file: name, pixels };
    let (answer, binary) =
        crate::reader::ask::<Result<Figure, String>>(&root, request, super::CHECK_TIME)
            .map_err(|e| e.to_string())?;
    let mut figure = answer?;
    let want = figure.drawn.map_or(0, |(w, h)| w as usize * h as usize * 4);
    if figure.drawn.is_some() && binary.len() != want {
        return Err("the reader's pixels do not fit their size".into());
    }
    figure.rgba = binary;
    Ok(figure)
}

/// [`figure`], in this process: only the confined reader calls it. The
/// pixels as the binary part.
pub(crate) fn figure_here(
    folder: &Path,
    path: &Path,
    pixels: bool,
) -> Result<(Figure, Vec<u8>), String> {
    let pinned = crate::beneath::pin_under(folder, path).map_err(|e| e.to_string())?;
    pinned.facts.as_ref().ok_or("a folder")?;
    let path = pinned.path();
    let (width, height) = image25::ImageReader::open(path)
        .and_then(|r| r.with_guessed_format())
        .map_err(|e| e.to_string())?
        .into_dimensions()
        .map_err(|e| e.to_string())?;
    let mut figure = Figure {
        width,
        height,
        drawn: None,
        not_drawn: None,
        rgba: Vec::new(),
    };
    if !pixels {
        return Ok((figure, Vec::new()));
    }
    if (width as usize).saturating_mul(height as usize) > super::MAX_IMAGE_PIXELS {
        figure.not_drawn = Some(format!("{width}×{height} px, too large to draw"));
        return Ok((figure, Vec::new()));
    }
    let decoded = match super::image_pixels(path) {
        Ok(decoded) => decoded,
        Err(why) => {
            figure.not_drawn = Some(why.to_string());
            return Ok((figure, Vec::new()));
        }
    };
    let (w, h) = (decoded.width, decoded.height);
    let rgba = decoded.into_rgba();
    let fit = f64::from(MAX_SIDE) / (w.max(h).max(1) as f64);
    let (nw, nh, rgba) = if fit < 1.0 {
        let side = |v: usize| ((v as f64 * fit).round() as usize).clamp(1, MAX_SIDE as usize);
        let (nw, nh) = (side(w), side(h));
        (nw, nh, downscale(&rgba, w, h, nw, nh))
    } else {
        (w, h, rgba)
    };
    figure.drawn = Some((nw as u32, nh as u32));
    Ok((figure, rgba))
}

fn shown(png: &[u8], width: u32, height: u32) -> Shown {
    Shown {
        base64: base64::engine::general_purpose::STANDARD.encode(png),
        width,
        height,
        tokens: image_tokens(width, height),
    }
}

/// `rgba` (8-bit RGBA, `w`×`h`) averaged down to `nw`×`nh` (neither larger
/// than the original): each output pixel is the mean of the source area it
/// covers, a partly covered pixel weighted by the part covered (a box
/// filter; whole rows first, then across each row).
fn downscale(rgba: &[u8], w: usize, h: usize, nw: usize, nh: usize) -> Vec<u8> {
    let down = Taps::new(h, nh);
    let mut rows = vec![0f32; nh * w * 4];
    for (y, dst) in rows.chunks_exact_mut(w * 4).enumerate() {
        for (k, &weight) in down.of(y).iter().enumerate() {
            if weight == 0.0 {
                continue;
            }
            let src = &rgba[(down.starts[y] + k) * w * 4..][..w * 4];
            for (d, &v) in dst.iter_mut().zip(src) {
                *d += weight * f32::from(v);
            }
        }
    }
    let across = Taps::new(w, nw);
    let mut out = vec![0u8; nw * nh * 4];
    for (src, dst) in rows.chunks_exact(w * 4).zip(out.chunks_exact_mut(nw * 4)) {
        for (x, pixel) in dst.chunks_exact_mut(4).enumerate() {
            let mut sum = [0f32; 4];
            let from = &src[across.starts[x] * 4..];
            for (k, &weight) in across.of(x).iter().enumerate() {
                for (s, &v) in sum.iter_mut().zip(&from[k * 4..k * 4 + 4]) {
                    *s += weight * v;
                }
            }
            for (p, s) in pixel.iter_mut().zip(sum) {
                // Weights sum to 1, so `s` is within 0..=255 (+ rounding).
                *p = (s + 0.5).min(255.0) as u8;
            }
        }
    }
    out
}

/// Where each of `to` output cells laid over `from` source cells (`to` ≤
/// `from`) takes its value: `taps` consecutive source cells from its start,
/// each with the share of the output cell it covers (the shares sum to 1;
/// a cell covering fewer than `taps` is padded with zero shares, its start
/// moved back where the padding would pass the end).
struct Taps {
    taps: usize,
    starts: Vec<usize>,
    weights: Vec<f32>,
}

impl Taps {
    fn new(from: usize, to: usize) -> Taps {
        let scale = from as f64 / to as f64;
        let cover = |i: usize| {
            let (lo, hi) = (i as f64 * scale, (i + 1) as f64 * scale);
            let first = lo.floor() as usize;
            let end = (hi.ceil() as usize).min(from);
            let shares: Vec<f32> = (first..end)
                .map(|j| ((hi.min(j as f64 + 1.0) - lo.max(j as f64)).max(0.0) / scale) as f32)
                .collect();
            (first, shares)
        };
        let covers: Vec<_> = (0..to).map(cover).collect();
        let taps = covers.iter().map(|(_, s)| s.len()).max().unwrap_or(1);
        let mut starts = Vec::with_capacity(to);
        let mut weights = Vec::with_capacity(to * taps);
        for (first, shares) in covers {
            let start = first.min(from - taps);
            starts.push(start);
            weights.extend(std::iter::repeat_n(0.0, first - start));
            weights.extend(&shares);
            weights.extend(std::iter::repeat_n(
                0.0,
                taps - (first - start) - shares.len(),
            ));
        }
        Taps {
            taps,
            starts,
            weights,
        }
    }

    /// The shares of output cell `i`'s taps.
    fn of(&self, i: usize) -> &[f32] {
        &self.weights[i * self.taps..(i + 1) * self.taps]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_downscaled_to_the_longest_side() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.png");
        image::RgbImage::from_pixel(2000, 1000, image::Rgb([1, 2, 3]))
            .save(&path)
            .unwrap();
        let shown = prepare(&path).unwrap();
        assert_eq!((shown.width, shown.height), (768, 384));
        assert_eq!(shown.tokens, image_tokens(768, 384));
        assert!(prepare(&dir.path().join("missing.png")).is_none());
    }

    #[test]
    fn a_png_that_fits_is_sent_as_it_is_and_others_are_re_encoded() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.png");
        image::RgbImage::from_pixel(300, 200, image::Rgb([9, 8, 7]))
            .save(&small)
            .unwrap();
        let sent = |shown: &Shown| {
            base64::engine::general_purpose::STANDARD
                .decode(&shown.base64)
                .unwrap()
        };
        let shown = prepare(&small).unwrap();
        assert_eq!(sent(&shown), std::fs::read(&small).unwrap());
        assert_eq!((shown.width, shown.height), (300, 200));
        // A JPEG that fits is sent as a PNG of the same size and colour.
        let jpeg = dir.path().join("small.jpg");
        image::RgbImage::from_pixel(300, 200, image::Rgb([200, 200, 200]))
            .save(&jpeg)
            .unwrap();
        let shown = prepare(&jpeg).unwrap();
        let back = image25::load_from_memory_with_format(&sent(&shown), image25::ImageFormat::Png)
            .unwrap()
            .into_rgba8();
        assert_eq!(back.dimensions(), (300, 200));
        assert!(back
            .pixels()
            .all(|p| p.0[0].abs_diff(200) <= 2 && p.0[3] == 255));
    }

    #[test]
    fn downscaling_averages_the_area_each_pixel_covers() {
        let px = |v: u8| [v, v, v, 255];
        // 4×2 → 2×1: each output pixel is the mean of a 2×2 block.
        let src: Vec<u8> = [0, 10, 100, 200, 20, 30, 100, 100]
            .into_iter()
            .flat_map(px)
            .collect();
        assert_eq!(
            downscale(&src, 4, 2, 2, 1),
            [15, 15, 15, 255, 125, 125, 125, 255]
        );
        // 3 → 2: the middle pixel is shared, half to each side.
        let src: Vec<u8> = [30, 60, 90].into_iter().flat_map(px).collect();
        assert_eq!(
            downscale(&src, 3, 1, 2, 1),
            [40, 40, 40, 255, 80, 80, 80, 255]
        );
        // A uniform image stays exactly uniform at any size.
        let src = [7u8, 150, 250, 255].repeat(957 * 839);
        let out = downscale(&src, 957, 839, 768, 673);
        assert_eq!(out.len(), 768 * 673 * 4);
        assert!(out.chunks_exact(4).all(|p| p == [7, 150, 250, 255]));
    }
}
