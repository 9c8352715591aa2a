//! A BERT sentence encoder's forward pass in plain Rust, for gisclaw's
//! offline embeddings (all-MiniLM-L6-v2: 6 layers, 384-d, 12 heads).
//!
//! Why not a tensor library: a query of 10–20 tokens is ~250 MFLOP, and
//! what costs is how the weights meet the few rows — a general library
//! re-packs every weight matrix on every product and allocates per
//! operation. Here each weight matrix is packed once, at load, into
//! column panels ([`matmul`]), the sequences of a batch are stacked
//! without padding (attention stays within each sequence), and the GELU
//! and softmax use a vectorisable `exp` ([`math`]).
//!
//! - [`safetensors`]: reads the weights file by its documented layout;
//! - [`matmul`]: `x·Wᵀ + b` with packed weights, AVX2+FMA when the CPU has
//!   them, a portable kernel otherwise, split over rayon's threads;
//! - [`math`]: layer norm, GELU (erf form), softmax;
//! - [`Bert`] here: the model and its forward pass to mean-pooled vectors.
//!
//! Checked against an independent float64 numpy forward pass by gisclaw's
//! `tests/all/embed_parity.rs` (every component to 1e-5).

// A library: it neither panics on a result nor prints.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::print_stdout,
        clippy::print_stderr
    )
)]

pub mod math;
pub mod matmul;
pub mod safetensors;

use rayon::prelude::*;
use serde::Deserialize;

use matmul::Linear;
pub use matmul::Precision;
use safetensors::Tensors;

/// Why the model could not load or run.
#[derive(Debug, thiserror::Error)]
pub enum EncoderError {
    /// The weights file does not parse or lacks a tensor.
    #[error("{0}")]
    Weights(String),
    /// The configuration does not describe a model this code runs.
    #[error("config: {0}")]
    Config(String),
    /// An input the model cannot take (a token id outside the vocabulary, a
    /// sequence longer than the position table).
    #[error("input: {0}")]
    Input(String),
}

/// The fields of a BERT `config.json` the forward pass needs.
#[derive(Debug, Clone, Deserialize)]
pub struct Config {
    /// Width of the hidden states.
    pub hidden_size: usize,
    /// Attention heads per layer (`hidden_size` must divide by it).
    pub num_attention_heads: usize,
    /// Encoder layers.
    pub num_hidden_layers: usize,
    /// Width of the feed-forward layer.
    pub intermediate_size: usize,
    /// Epsilon of every layer norm.
    pub layer_norm_eps: f64,
    /// Rows of the position table: the longest sequence.
    pub max_position_embeddings: usize,
    /// The activation; only `gelu` (the erf form) is run.
    #[serde(default = "gelu")]
    pub hidden_act: String,
    /// `absolute` is the only one run.
    #[serde(default = "absolute")]
    pub position_embedding_type: String,
}

fn gelu() -> String {
    "gelu".into()
}

fn absolute() -> String {
    "absolute".into()
}

/// One encoder layer's weights.
struct Layer {
    /// Query, key and value stacked: one product gives all three.
    qkv: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    intermediate: Linear,
    output: Linear,
    output_norm: Norm,
}

/// A layer norm's scale and shift.
struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

/// A loaded BERT encoder. Shareable between threads.
pub struct Bert {
    config: Config,
    word: Vec<f32>,
    vocab: usize,
    position: Vec<f32>,
    token_type: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
}

impl std::fmt::Debug for Bert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bert")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Bert {
    /// Builds the model from the bytes of a `model.safetensors` (names with
    /// or without a `bert.` prefix) and its configuration.
    pub fn load(weights: &[u8], config: Config) -> Result<Bert, EncoderError> {
        if config.hidden_act != "gelu" {
            return Err(EncoderError::Config(format!(
                "field `hidden_act`: only \"gelu\" is supported, got {:?}",
                config.hidden_act
            )));
        }
        if config.position_embedding_type != "absolute" {
            return Err(EncoderError::Config(format!(
                "field `position_embedding_type`: only \"absolute\" is supported, got {:?}",
                config.position_embedding_type
            )));
        }
        let h = config.hidden_size;
        if config.num_attention_heads == 0 || !h.is_multiple_of(config.num_attention_heads) {
            return Err(EncoderError::Config(format!(
                "field `num_attention_heads`: {} does not divide hidden_size {h}",
                config.num_attention_heads
            )));
        }
        let t = Tensors::parse(weights).map_err(EncoderError::Weights)?;
        let get = |name: &str, shape: &[usize]| t.f32(name, shape).map_err(EncoderError::Weights);
        let norm = |prefix: &str| -> Result<Norm, EncoderError> {
            Ok(Norm {
                weight: get(&format!("{prefix}.weight"), &[h])?,
                bias: get(&format!("{prefix}.bias"), &[h])?,
            })
        };
        let word_shape = t
            .shape("embeddings.word_embeddings.weight")
            .map_err(EncoderError::Weights)?;
        let vocab = word_shape.first().copied().unwrap_or(0);
        let word = get("embeddings.word_embeddings.weight", &[vocab, h])?;
        let position = get(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, h],
        )?;
        let types = t
            .shape("embeddings.token_type_embeddings.weight")
            .map_err(EncoderError::Weights)?;
        let token_type = get(
            "embeddings.token_type_embeddings.weight",
            &[types.first().copied().unwrap_or(0).max(1), h],
        )?;
        let embedding_norm = norm("embeddings.LayerNorm")?;
        let i = config.intermediate_size;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for l in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            let part =
                |name: &str, n: usize, k: usize| -> Result<(Vec<f32>, Vec<f32>), EncoderError> {
                    Ok((
                        get(&format!("{p}.{name}.weight"), &[n, k])?,
                        get(&format!("{p}.{name}.bias"), &[n])?,
                    ))
                };
            let (mut w, mut b) = part("attention.self.query", h, h)?;
            for name in ["attention.self.key", "attention.self.value"] {
                let (w2, b2) = part(name, h, h)?;
                w.extend_from_slice(&w2);
                b.extend_from_slice(&b2);
            }
            let qkv = Linear::pack(&w, b, h);
            let (w, b) = part("attention.output.dense", h, h)?;
            let attention_out = Linear::pack(&w, b, h);
            let (w, b) = part("intermediate.dense", i, h)?;
            let intermediate = Linear::pack(&w, b, h);
            let (w, b) = part("output.dense", h, i)?;
            let output = Linear::pack(&w, b, i);
            layers.push(Layer {
                qkv,
                attention_out,
                attention_norm: norm(&format!("{p}.attention.output.LayerNorm"))?,
                intermediate,
                output,
                output_norm: norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        Ok(Bert {
            config,
            word,
            vocab,
            position,
            token_type,
            embedding_norm,
            layers,
        })
    }

    /// The configuration the model was built from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The mean of the last hidden states of each sequence (token ids with
    /// their special tokens; token type 0; every token attended). The
    /// sequences run together in one pass, each attending only to itself;
    /// the vectors are not normalised.
    pub fn mean_pooled(&self, sequences: &[&[u32]]) -> Result<Vec<Vec<f32>>, EncoderError> {
        self.mean_pooled_as(sequences, Precision::Full)
    }

    /// [`Bert::mean_pooled`] with the layers' weights read in `precision`
    /// ([`Precision::Half`]: on a few rows, where reading the weights is
    /// the cost, measured 10–25 % faster; each vector within ~10⁻³ of the
    /// full one).
    pub fn mean_pooled_as(
        &self,
        sequences: &[&[u32]],
        precision: Precision,
    ) -> Result<Vec<Vec<f32>>, EncoderError> {
        let h = self.config.hidden_size;
        for (s, ids) in sequences.iter().enumerate() {
            if ids.len() > self.config.max_position_embeddings {
                return Err(EncoderError::Input(format!(
                    "sequence {s}: {} tokens, the model takes at most {}",
                    ids.len(),
                    self.config.max_position_embeddings
                )));
            }
            if let Some(bad) = ids.iter().find(|&&id| id as usize >= self.vocab) {
                return Err(EncoderError::Input(format!(
                    "sequence {s}: token id {bad} is outside the vocabulary of {}",
                    self.vocab
                )));
            }
        }
        let spans = spans(sequences);
        let rows = spans.last().map_or(0, |&(start, len)| start + len);
        let mut x = vec![0f32; rows * h];
        for (&(start, _), ids) in spans.iter().zip(sequences) {
            for (p, &id) in ids.iter().enumerate() {
                let row = &mut x[(start + p) * h..(start + p + 1) * h];
                let word = &self.word[id as usize * h..(id as usize + 1) * h];
                let pos = &self.position[p * h..(p + 1) * h];
                for (((o, w), q), t) in row.iter_mut().zip(word).zip(pos).zip(&self.token_type[..h])
                {
                    *o = w + q + t;
                }
            }
        }
        let eps = self.config.layer_norm_eps as f32;
        self.norm_rows(&mut x, &self.embedding_norm, eps);
        for layer in &self.layers {
            let qkv = layer.qkv.forward_as(&x, rows, precision, true);
            let context = self.attention(&qkv, &spans);
            let mut attended = layer
                .attention_out
                .forward_as(&context, rows, precision, true);
            add(&mut attended, &x);
            self.norm_rows(&mut attended, &layer.attention_norm, eps);
            let mut inner = layer
                .intermediate
                .forward_as(&attended, rows, precision, true);
            inner.par_chunks_mut(CHUNK).for_each(math::gelu_in_place);
            let mut out = layer.output.forward_as(&inner, rows, precision, true);
            add(&mut out, &attended);
            self.norm_rows(&mut out, &layer.output_norm, eps);
            x = out;
        }
        Ok(spans
            .iter()
            .map(|&(start, len)| {
                let mut mean = vec![0f32; h];
                for row in x[start * h..(start + len) * h].chunks_exact(h) {
                    for (m, v) in mean.iter_mut().zip(row) {
                        *m += v;
                    }
                }
                let n = len.max(1) as f32;
                mean.iter_mut().for_each(|m| *m /= n);
                mean
            })
            .collect())
    }

    /// Layer norm of every row of `x`, in place.
    fn norm_rows(&self, x: &mut [f32], norm: &Norm, eps: f32) {
        let h = self.config.hidden_size;
        x.par_chunks_mut(h * ROWS_PER_TASK).for_each(|rows| {
            for row in rows.chunks_exact_mut(h) {
                math::layer_norm(row, &norm.weight, &norm.bias, eps);
            }
        });
    }

    /// Multi-head self-attention of each sequence over itself: `qkv` holds
    /// each token's query, key and value side by side (3 × hidden); the
    /// result is each token's context (hidden), heads side by side. One
    /// parallel task per sequence and head.
    fn attention(&self, qkv: &[f32], spans: &[(usize, usize)]) -> Vec<f32> {
        let h = self.config.hidden_size;
        let heads = self.config.num_attention_heads;
        let d = h / heads;
        let jobs: Vec<(usize, usize, usize)> = spans
            .iter()
            .flat_map(|&(start, len)| (0..heads).map(move |head| (start, len, head)))
            .collect();
        let parts: Vec<Vec<f32>> = jobs
            .par_iter()
            .map(|&(start, len, head)| {
                attend(
                    &qkv[start * 3 * h..(start + len) * 3 * h],
                    len,
                    h,
                    head * d,
                    d,
                )
            })
            .collect();
        let mut context = vec![0f32; qkv.len() / 3];
        for (&(start, _, head), part) in jobs.iter().zip(parts) {
            for (i, row) in part.chunks_exact(d).enumerate() {
                let at = (start + i) * h + head * d;
                context[at..at + d].copy_from_slice(row);
            }
        }
        context
    }
}

/// One head's attention within one sequence of `len` tokens: `qkv` holds
/// the sequence's rows (query, key, value side by side, `hidden` each), the
/// head's columns start at `offset` and are `d` wide. Returns `len × d`.
/// Both products run through the packed kernel: the keys are the "weights"
/// of the scores, the transposed values those of the context.
fn attend(qkv: &[f32], len: usize, hidden: usize, offset: usize, d: usize) -> Vec<f32> {
    let scale = 1.0 / (d as f32).sqrt();
    let column = |part: usize, i: usize| {
        let at = i * 3 * hidden + part * hidden + offset;
        &qkv[at..at + d]
    };
    let mut q = Vec::with_capacity(len * d);
    let mut k = Vec::with_capacity(len * d);
    let mut vt = vec![0f32; d * len];
    for i in 0..len {
        q.extend(column(0, i).iter().map(|x| x * scale));
        k.extend_from_slice(column(1, i));
        for (c, &v) in column(2, i).iter().enumerate() {
            vt[c * len + i] = v;
        }
    }
    let keys = Linear::pack(&k, vec![0.0; len], d);
    let mut scores = keys.forward_as(&q, len, Precision::Full, false);
    for row in scores.chunks_exact_mut(len) {
        math::softmax_in_place(row);
    }
    let values = Linear::pack(&vt, vec![0.0; d], len);
    values.forward_as(&scores, len, Precision::Full, false)
}

/// Elements per parallel task of the element-wise steps.
const CHUNK: usize = 16 * 1024;
/// Rows per parallel task of the layer norms.
const ROWS_PER_TASK: usize = 32;

/// Where each sequence's rows start in the stacked batch, and how many.
fn spans(sequences: &[&[u32]]) -> Vec<(usize, usize)> {
    let mut start = 0;
    sequences
        .iter()
        .map(|ids| {
            let span = (start, ids.len());
            start += ids.len();
            span
        })
        .collect()
}

/// `a += b`, element-wise.
fn add(a: &mut [f32], b: &[f32]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_stack_sequences_without_padding() {
        let (a, b, c): (&[u32], &[u32], &[u32]) = (&[1, 2, 3], &[4], &[5, 6]);
        assert_eq!(spans(&[a, b, c]), vec![(0, 3), (3, 1), (4, 2)]);
        assert!(spans(&[]).is_empty());
    }

    fn config() -> Config {
        serde_json::from_str(
            r#"{"hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1,
                "intermediate_size": 16, "layer_norm_eps": 1e-12, "max_position_embeddings": 4}"#,
        )
        .unwrap()
    }

    #[test]
    fn an_unsupported_activation_names_the_field() {
        let mut c = config();
        c.hidden_act = "relu".into();
        let err = Bert::load(&[], c).unwrap_err().to_string();
        assert!(
            err.contains("`hidden_act`") && err.contains("relu"),
            "{err}"
        );
    }

    #[test]
    fn heads_must_divide_the_width() {
        let mut c = config();
        c.num_attention_heads = 3;
        let err = Bert::load(&[], c).unwrap_err().to_string();
        assert!(err.contains("`num_attention_heads`"), "{err}");
    }
}
