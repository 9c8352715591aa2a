//! Vision feedback's model side: whether a backend's model sees images (a
//! profile's `vision = true | false | "auto"`; `auto` asks the model once
//! about a small red square and remembers the answer per server and model),
//! what a figure shown to it is ([`Shown`]: at most [`MAX_SIDE`] px, PNG,
//! base64; made by `outputs::shown::prepare`), and what it costs in prompt
//! tokens.

use std::collections::BTreeMap;

use base64::Engine as _;
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
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
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
}
