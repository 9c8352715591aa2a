//! Text embeddings from an OpenAI-compatible server's `/embeddings` (for
//! C_emb with the model GISclaw's paper used, text-embedding-3-large, when
//! a server offering it is configured). The request carries only the text
//! to embed; the key goes in the header and never into records.

use serde_json::{json, Value};

use super::config::LiveConfig;
use super::live::LiveCore;
use super::LlmError;

/// Tokens of one text sent (tiktoken `o200k_base`): text-embedding-3's
/// input limit is 8,191 `cl100k_base` tokens; the margin covers the two
/// encodings' difference. A longer log is cut at the end.
pub const MAX_TOKENS: u64 = 7_500;

/// The longest start of `text` within [`MAX_TOKENS`] (whole characters).
pub fn within_limit(text: &str) -> &str {
    if super::tokens::count(text) <= MAX_TOKENS {
        return text;
    }
    let ends: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    // The largest prefix that fits, by bisection over character ends.
    let (mut fits, mut over) = (0, ends.len() - 1);
    while over - fits > 1 {
        let mid = (fits + over) / 2;
        if super::tokens::count(&text[..ends[mid]]) <= MAX_TOKENS {
            fits = mid;
        } else {
            over = mid;
        }
    }
    &text[..ends[fits]]
}

/// A served embedding model.
pub struct ServedEmbedder {
    core: LiveCore,
    http: reqwest::Client,
}

impl std::fmt::Debug for ServedEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedEmbedder")
            .field("model", &self.core.config.model)
            .field("base_url", &self.core.config.base_url)
            .finish_non_exhaustive()
    }
}

impl ServedEmbedder {
    /// An embedder for `config` (its model and server); no request is made.
    pub fn new(config: LiveConfig) -> Result<ServedEmbedder, LlmError> {
        let (core, http) = LiveCore::new(config)?;
        Ok(ServedEmbedder { core, http })
    }

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.core.config.model
    }

    /// The embedding of `text` ([`within_limit`]), L2-normalised.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, LlmError> {
        let config = &self.core.config;
        let input = within_limit(text);
        let url = format!("{}/embeddings", config.base_url.trim_end_matches('/'));
        let mut request = self
            .http
            .post(&url)
            .json(&json!({ "model": config.model, "input": input }));
        if let Some(key) = &config.api_key {
            request = request.bearer_auth(key);
        }
        let unavailable = |message: String| LlmError::Unavailable {
            backend: super::provenance::public_url(&config.base_url),
            attempts: 1,
            message,
        };
        let body: Value = self.core.runtime.block_on(async {
            let response = request
                .send()
                .await
                .map_err(|e| unavailable(e.to_string()))?;
            let status = response.status();
            if !status.is_success() {
                return Err(unavailable(format!("HTTP {status} from /embeddings")));
            }
            response
                .json::<Value>()
                .await
                .map_err(|e| unavailable(format!("the /embeddings answer is not JSON: {e}")))
        })?;
        vector(&body).map_err(|why| LlmError::Backend(format!("{url}: {why}")))
    }
}

/// The first vector of an `/embeddings` answer, L2-normalised.
fn vector(body: &Value) -> Result<Vec<f32>, String> {
    let values = body["data"][0]["embedding"]
        .as_array()
        .ok_or("the answer has no data[0].embedding")?;
    let mut v = values
        .iter()
        .map(|x| x.as_f64().map(|x| x as f32))
        .collect::<Option<Vec<f32>>>()
        .ok_or("data[0].embedding holds a value that is not a number")?;
    if v.is_empty() {
        return Err("data[0].embedding is empty".into());
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !(norm > 0.0 && norm.is_finite()) {
        return Err("data[0].embedding has no length".into());
    }
    v.iter_mut().for_each(|x| *x /= norm);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_cut_to_the_token_limit_at_a_character() {
        let short = "buffer the parks";
        assert_eq!(within_limit(short), short);
        let long = "gpd.read_file('data/parcels.shp') é 12345.678 ".repeat(2_000);
        let cut = within_limit(&long);
        assert!(long.starts_with(cut) && cut.len() < long.len());
        let n = crate::llm::tokens::count(cut);
        assert!(n <= MAX_TOKENS && n > MAX_TOKENS - 50, "{n}");
    }

    #[test]
    fn the_answer_s_first_vector_is_read_and_normalised() {
        let v = vector(&json!({ "data": [{ "embedding": [3.0, 4.0] }] })).unwrap();
        assert_eq!(v, [0.6, 0.8]);
        assert!(vector(&json!({ "data": [] }))
            .unwrap_err()
            .contains("data[0]"));
        assert!(vector(&json!({ "data": [{ "embedding": ["x"] }] })).is_err());
        assert!(vector(&json!({ "data": [{ "embedding": [0.0] }] })).is_err());
    }
}
