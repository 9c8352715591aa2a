//! What a run's provenance records of its model (see [`crate::provenance`]):
//! name, server, the local model file (SHA-256, cached per file version, and
//! the quantisation its name states), the context size and the sampler.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Who answered, and how they were asked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelProvenance {
    /// The model's name, when the backend has one.
    pub name: Option<String>,
    /// The backend's description (never a secret).
    pub backend: String,
    /// The server's address, for live backends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// True when the answers were a recording.
    pub replay: bool,
    /// The local model file, for a llama-server gisclaw started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gguf: Option<GgufFile>,
    /// The context window, when known.
    pub context_size: Option<u64>,
    /// Sampler settings sent with each request.
    pub sampler: Sampler,
}

/// A GGUF model file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GgufFile {
    /// Its real path.
    pub path: String,
    /// SHA-256 of its bytes (`None` when it could not be read).
    pub sha256: Option<String>,
    /// Its size.
    pub bytes: u64,
    /// The quantisation its name states (`Q4_K_M`, `F16`, …), if any.
    pub quantisation: Option<String>,
}

/// Sampler settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sampler {
    /// Temperature (`None`: the server's default).
    pub temperature: Option<f32>,
    /// Most completion tokens per call.
    pub max_tokens: Option<u32>,
    /// Other sampler fields the profile sends (`top_p`, `seed`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// Request fields that are sampler settings (the rest of a profile's
/// `extra_body` is not recorded: it may be anything).
const SAMPLER_FIELDS: &[&str] = &[
    "top_p",
    "top_k",
    "min_p",
    "typical_p",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "repeat_penalty",
    "repetition_penalty",
    "mirostat",
    "num_predict",
];

impl Sampler {
    /// The settings among a request's extra fields.
    pub fn from_extra(
        temperature: Option<f32>,
        max_tokens: Option<u32>,
        extra: &serde_json::Map<String, serde_json::Value>,
    ) -> Sampler {
        Sampler {
            temperature,
            max_tokens,
            other: extra
                .iter()
                .filter(|(k, _)| SAMPLER_FIELDS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }
}

/// A GGUF file's provenance. Its SHA-256 is computed once per file version
/// (real path, size, modification time, inode) and kept in gisclaw's cache:
/// hashing gigabytes at every run would cost seconds.
pub fn gguf(path: &Path) -> GgufFile {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let meta = std::fs::metadata(&real);
    let bytes = meta.as_ref().map(|m| m.len()).unwrap_or(0);
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let sha256 = meta.ok().and_then(|m| cached_sha256(&real, &m));
    GgufFile {
        path: real.display().to_string(),
        sha256,
        bytes,
        quantisation: quantisation(&name),
    }
}

fn cached_sha256(real: &Path, meta: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let key = crate::util::sha256_bytes(
        format!(
            "{}\0{}\0{}.{}\0{}",
            real.display(),
            meta.len(),
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ino()
        )
        .as_bytes(),
    );
    let dir = cache_dir();
    let file = dir.join(key.trim_start_matches("sha256:"));
    if let Ok(text) = std::fs::read_to_string(&file) {
        if text.starts_with("sha256:") && text.len() == 71 {
            return Some(text);
        }
    }
    let digest = crate::util::sha256_file(real).ok()?;
    let kept = std::fs::create_dir_all(&dir)
        .and_then(|()| crate::util::write_atomic(&file, digest.as_bytes()));
    if let Err(why) = kept {
        tracing::debug!("{}: hash not cached: {why}", file.display());
    }
    Some(digest)
}

fn cache_dir() -> PathBuf {
    crate::paths::cache_dir().join("gguf-sha256")
}

/// The quantisation a GGUF's file name states: the last name part that
/// reads like one (`Q4_K_M`, `q4_1`, `IQ3_XXS`, `F16`, `BF16`, `F32`),
/// upper-cased.
pub fn quantisation(file_name: &str) -> Option<String> {
    let stem = file_name.strip_suffix(".gguf").unwrap_or(file_name);
    stem.split(['-', '.'])
        .rev()
        .find(|part| is_quantisation(part))
        .map(str::to_uppercase)
}

fn is_quantisation(part: &str) -> bool {
    let p = part.to_ascii_uppercase();
    if matches!(p.as_str(), "F16" | "BF16" | "F32" | "FP16") {
        return true;
    }
    let rest = p
        .strip_prefix("IQ")
        .or_else(|| p.strip_prefix("Q"))
        .or_else(|| p.strip_prefix("TQ"));
    match rest {
        Some(r) => {
            let mut chars = r.chars();
            chars.next().is_some_and(|c| c.is_ascii_digit())
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// How two models differ: name, replay or live, GGUF bytes and quantisation.
pub fn model_differences(a: &ModelProvenance, b: &ModelProvenance) -> Vec<String> {
    let mut out = Vec::new();
    if a.name != b.name {
        out.push(format!(
            "model: {} ≠ {}",
            a.name.as_deref().unwrap_or("unnamed"),
            b.name.as_deref().unwrap_or("unnamed")
        ));
    }
    if a.replay != b.replay {
        out.push(format!(
            "model: {} ≠ {}",
            if a.replay { "a recording" } else { "live" },
            if b.replay { "a recording" } else { "live" }
        ));
    }
    let file = |g: &Option<GgufFile>| {
        g.as_ref()
            .map(|g| (g.sha256.clone(), g.quantisation.clone()))
    };
    if file(&a.gguf) != file(&b.gguf) {
        let say = |g: &Option<GgufFile>| match g {
            Some(g) => format!(
                "GGUF {} ({})",
                g.sha256.as_deref().map_or("unhashed".into(), short),
                g.quantisation.as_deref().unwrap_or("quantisation unknown")
            ),
            None => "no GGUF".into(),
        };
        out.push(format!("model: {} ≠ {}", say(&a.gguf), say(&b.gguf)));
    }
    out
}

/// A server's address as gisclaw writes it anywhere (descriptions, run.json,
/// reports, exported logs): without a user, password, query or fragment,
/// which may carry a key (`https://user:key@host/v1?api-key=…`).
pub fn public_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string().trim_end_matches('/').to_string()
        }
        // Not a URL: only what comes before any `@`, `?` or `#` is kept.
        Err(_) => {
            let cut = url.find(['?', '#']).unwrap_or(url.len());
            let url = &url[..cut];
            match url.rsplit_once('@') {
                Some((before, host)) => match before.split_once("://") {
                    Some((scheme, _)) => format!("{scheme}://{host}"),
                    None => host.to_string(),
                },
                None => url.to_string(),
            }
        }
    }
}

/// A digest shortened for messages (`sha256:` and 12 hex digits).
pub fn short(digest: &str) -> String {
    digest.chars().take(19).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_lose_what_may_carry_a_key() {
        assert_eq!(
            public_url("http://127.0.0.1:8080/v1"),
            "http://127.0.0.1:8080/v1"
        );
        assert_eq!(
            public_url("https://user:sk-secret@api.example.com/v1?api-key=sk-2#x"),
            "https://api.example.com/v1"
        );
        assert_eq!(public_url("https://sk-secret@host"), "https://host");
        assert_eq!(public_url("not a url@host?key=1"), "host");
    }

    #[test]
    fn quantisation_is_read_from_common_gguf_names() {
        for (name, q) in [
            ("smollm2-135m-instruct-q4_1.gguf", Some("Q4_1")),
            ("Qwen2.5-7B-Instruct-Q4_K_M.gguf", Some("Q4_K_M")),
            ("gemma-3-270m-it-F16.gguf", Some("F16")),
            ("model.IQ3_XXS.gguf", Some("IQ3_XXS")),
            ("Meta-Llama-3-8B.BF16.gguf", Some("BF16")),
            ("default.gguf", None),
            ("qwen2-7b.gguf", None),
        ] {
            assert_eq!(quantisation(name).as_deref(), q, "{name}");
        }
    }

    #[test]
    fn sampler_keeps_sampler_fields_only() {
        let extra: serde_json::Map<String, serde_json::Value> = serde_json::from_str(
            r#"{"top_p": 0.9, "seed": 7, "chat_template_kwargs": {"x": 1}, "user": "me"}"#,
        )
        .unwrap();
        let s = Sampler::from_extra(Some(0.2), Some(512), &extra);
        assert_eq!(s.other.keys().collect::<Vec<_>>(), ["seed", "top_p"]);
    }
}
