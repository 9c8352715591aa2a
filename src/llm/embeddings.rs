//! Text embeddings from an OpenAI-compatible server's `/embeddings` (for
//! C_emb with the model GISclaw's paper used, text-embedding-3-large, when
//! a server offering it is configured). The request carries only the text
//! to embed; the key goes in the header and never into records.

use serde_json::{json, Value};

use super::config::LiveConfig;
use super::live::LiveCore;
use super::LlmError;

/// Characters of one text sent: text-embedding-3's input limit is 8,191
/// tokens; a transcript's cleaned log past this is cut at the end.
pub const MAX_CHARS: usize = 24_000;

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

    /// The embedding of `text` (its first [`MAX_CHARS`] characters),
    /// L2-normalised.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, LlmError> {
        let config = &self.core.config;
        let input: String = text.chars().take(MAX_CHARS).collect();
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
