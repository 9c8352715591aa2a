//! Vision feedback's model side: whether a backend's model sees images (a
//! profile's `vision = true | false | "auto"`; `auto` asks the model once
//! about a small red square and remembers the answer per server and model),
//! how a figure is prepared for it (downscaled to at most
//! [`MAX_SIDE`] px, PNG, base64), and what it costs in prompt tokens.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;
use image25::ImageEncoder as _;
use serde::Deserialize;

use super::{ChatBackend, Message, Role};

/// Longest side of a figure shown to the model, in pixels.
pub const MAX_SIDE: u32 = 768;

/// Whether a backend's model is shown the figures a cell writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Vision {
    /// Never (the default: images cost tokens, and most local models are
    /// text-only).
    #[default]
    Off,
    /// Always (the model is known to see images).
    On,
    /// Ask the model once, remember the answer.
    Auto,
}

impl<'de> Deserialize<'de> for Vision {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Flag(bool),
            Word(String),
        }
        match Raw::deserialize(d)? {
            Raw::Flag(true) => Ok(Vision::On),
            Raw::Flag(false) => Ok(Vision::Off),
            Raw::Word(w) => match w.as_str() {
                "auto" => Ok(Vision::Auto),
                "true" | "on" => Ok(Vision::On),
                "false" | "off" => Ok(Vision::Off),
                other => Err(serde::de::Error::custom(format!(
                    "vision must be true, false or \"auto\", not {other:?}"
                ))),
            },
        }
    }
}

/// A 16×16 red PNG, the probe's question.
fn red_square() -> Vec<u8> {
    let img = image::RgbImage::from_pixel(16, 16, image::Rgb([220, 20, 20]));
    let mut out = std::io::Cursor::new(Vec::new());
    // Encoding a 16×16 image into memory cannot fail for want of space.
    let _ = img.write_to(&mut out, image::ImageOutputFormat::Png);
    out.into_inner()
}

/// Where probe answers are remembered: `<cache>/vision.json`.
fn cache_file() -> std::path::PathBuf {
    crate::paths::cache_dir().join("vision.json")
}

/// Whether the model behind `backend` sees images, asked once per `key`
/// (server and model) and remembered: one request with a red square and
/// "what colour is it?"; an error or another answer means no.
pub fn probe(backend: &mut dyn ChatBackend, key: &str) -> bool {
    let path = cache_file();
    let mut known: BTreeMap<String, bool> = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    if let Some(&seen) = known.get(key) {
        return seen;
    }
    let question = Message {
        images: vec![base64::engine::general_purpose::STANDARD.encode(red_square())],
        ..Message::text(
            Role::User,
            "What colour is this image? Answer with one word.",
        )
    };
    let sees = match backend.chat(&[question], &[]) {
        Ok(answer) => answer
            .message
            .content
            .unwrap_or_default()
            .to_lowercase()
            .contains("red"),
        Err(e) => {
            tracing::info!("vision probe of {key}: {e}");
            false
        }
    };
    known.insert(key.to_string(), sees);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = crate::util::write_json(&path, &known) {
        tracing::warn!("remembering the vision probe in {}: {e}", path.display());
    }
    sees
}

/// Whether a backend with `setting` sees images, probing `backend` (under
/// `key`) for `auto`.
pub fn resolve(setting: Vision, key: &str, backend: &mut dyn ChatBackend) -> bool {
    match setting {
        Vision::Off => false,
        Vision::On => true,
        Vision::Auto => probe(backend, key),
    }
}

/// A figure as shown to the model.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The PNG, base64-encoded.
    pub base64: String,
    /// Its size as sent.
    pub width: u32,
    /// Its size as sent.
    pub height: u32,
    /// The prompt tokens it costs (estimate, see [`image_tokens`]).
    pub tokens: u64,
}

/// Reads the image at `path` and makes it at most [`MAX_SIDE`] px on its
/// longer side, as PNG; `None` when it cannot be read as an image. A PNG
/// that already fits is sent as it is; a bigger image is averaged down
/// ([`downscale`]) and encoded with fast compression (the payload's size
/// does not change its tokens). The example's 957×839 map: ~20 ms → ~6 ms.
pub fn prepare(path: &Path) -> Option<Shown> {
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
    let decoded = crate::outputs::image_pixels(path).ok()?;
    let (width, height) = (
        u32::try_from(decoded.width).ok()?,
        u32::try_from(decoded.height).ok()?,
    );
    let rgba = decoded.into_rgba();
    let fit = f64::from(MAX_SIDE) / f64::from(width.max(height));
    let (nw, nh) = if fit < 1.0 {
        let side = |v: u32| ((f64::from(v) * fit).round() as u32).clamp(1, MAX_SIDE);
        (side(width), side(height))
    } else {
        (width, height)
    };
    let pixels = if (nw, nh) == (width, height) {
        rgba
    } else {
        downscale(
            &rgba,
            width as usize,
            height as usize,
            nw as usize,
            nh as usize,
        )
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

/// Prompt tokens of an image by OpenAI's published rule for high detail:
/// 85 plus 170 per 512-px tile (after fitting 2048 px and a 768-px shorter
/// side). Other providers count differently; this is the estimate reported.
pub fn image_tokens(width: u32, height: u32) -> u64 {
    let (mut w, mut h) = (f64::from(width), f64::from(height));
    let fit = (2048.0 / w.max(h)).min(1.0);
    w *= fit;
    h *= fit;
    let short = (768.0 / w.min(h)).min(1.0);
    w *= short;
    h *= short;
    let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
    85 + 170 * tiles as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_as_booleans_or_auto() {
        #[derive(Deserialize)]
        struct P {
            vision: Vision,
        }
        let read = |s: &str| toml::from_str::<P>(s).map(|p| p.vision);
        assert_eq!(read("vision = true").unwrap(), Vision::On);
        assert_eq!(read("vision = false").unwrap(), Vision::Off);
        assert_eq!(read("vision = \"auto\"").unwrap(), Vision::Auto);
        let err = read("vision = \"maybe\"").unwrap_err().to_string();
        assert!(err.contains("true, false or \"auto\""), "{err}");
    }

    #[test]
    fn token_estimates_follow_the_tile_rule() {
        assert_eq!(image_tokens(512, 512), 85 + 170);
        assert_eq!(image_tokens(768, 576), 85 + 170 * 4);
        assert_eq!(image_tokens(100, 50), 85 + 170);
    }

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
        let shown = prepare(&small).unwrap();
        let sent = base64::engine::general_purpose::STANDARD
            .decode(&shown.base64)
            .unwrap();
        assert_eq!(sent, std::fs::read(&small).unwrap());
        assert_eq!((shown.width, shown.height), (300, 200));
        // A JPEG that fits is sent as a PNG of the same size and colour.
        let jpeg = dir.path().join("small.jpg");
        image::RgbImage::from_pixel(300, 200, image::Rgb([200, 200, 200]))
            .save(&jpeg)
            .unwrap();
        let shown = prepare(&jpeg).unwrap();
        let png = base64::engine::general_purpose::STANDARD
            .decode(&shown.base64)
            .unwrap();
        let back = image25::load_from_memory_with_format(&png, image25::ImageFormat::Png)
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
