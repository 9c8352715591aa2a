//! The start-up check of a live backend's model name and key: one GET of
//! the server's model catalogue (`/models` for OpenAI-compatible servers,
//! `/api/tags` for Ollama), so a wrong `--model` or a refused key fails in
//! one line before any work starts, and nothing is spent.
//!
//! The check only speaks up when the server's answer is certain: a refused
//! key (401/403), or a catalogue that lacks the model. A server without a
//! catalogue (404, an unreadable body, a network error) passes, and so does
//! llama.cpp's server, which answers under any model name.

use std::time::Duration;

use serde::Deserialize;

use super::config::{BackendKind, LiveConfig};

/// Why the configured backend cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// A web server that is not a model API answered (an HTML page where
    /// the API answers JSON).
    #[error("{url} is not an OpenAI-compatible API: its catalogue {catalogue} answered HTTP {status} with an HTML page; set the base URL to the server's API root (usually ending in /v1)")]
    NotTheApi {
        /// The backend URL.
        url: String,
        /// The catalogue URL asked.
        catalogue: String,
        /// The HTTP status.
        status: u16,
    },
    /// The server refused the API key.
    #[error("the model server at {url} refused the API key (HTTP {status}): {hint}")]
    KeyRefused {
        /// The backend URL.
        url: String,
        /// 401 or 403.
        status: u16,
        /// What to set.
        hint: &'static str,
    },
    /// The catalogue does not list the model.
    #[error("the model server at {url} has no model `{model}` (it serves {offered}): {hint}")]
    NoSuchModel {
        /// The backend URL.
        url: String,
        /// The configured model name.
        model: String,
        /// Some of the names it serves.
        offered: String,
        /// What to set or run.
        hint: String,
    },
}

/// One entry of an OpenAI `/models` list.
#[derive(Debug, Deserialize)]
struct OpenAiModel {
    id: String,
    #[serde(default)]
    owned_by: Option<String>,
}

#[derive(Debug, Deserialize)]
struct OpenAiList {
    data: Vec<OpenAiModel>,
}

/// One entry of Ollama's `/api/tags`.
#[derive(Debug, Deserialize)]
struct OllamaModel {
    name: String,
}

#[derive(Debug, Deserialize)]
struct OllamaTags {
    models: Vec<OllamaModel>,
}

/// Checks the model name and key of an OpenAI-compatible or Ollama backend
/// (a local backend, started by gisclaw itself, passes).
pub fn check_model(config: &LiveConfig) -> Result<(), ProbeError> {
    let Some(url) = catalogue_url(config) else {
        return Ok(());
    };
    let Some((status, body)) = fetch(
        &url,
        config.api_key.as_deref(),
        config.timeout.min(Duration::from_secs(15)),
    ) else {
        return Ok(());
    };
    judge(config, status, &body)
}

/// Whether `text` is an HTML page (what a web server answers, where a
/// model API answers JSON).
pub(super) fn is_html(text: &str) -> bool {
    let head = text
        .trim_start()
        .get(..15)
        .unwrap_or("")
        .to_ascii_lowercase();
    head.starts_with("<!doctype html") || head.starts_with("<html")
}

/// The URL of the server's model catalogue (`None` for a local backend).
fn catalogue_url(config: &LiveConfig) -> Option<String> {
    let base = config.base_url.trim_end_matches('/');
    match config.kind {
        BackendKind::Openai => Some(format!("{base}/models")),
        BackendKind::Ollama => Some(format!("{base}/api/tags")),
        BackendKind::Local => None,
    }
}

/// What a catalogue answer says about the config.
fn judge(config: &LiveConfig, status: u16, body: &str) -> Result<(), ProbeError> {
    let url = config.base_url.clone();
    if matches!(status, 401 | 403) {
        let hint = match config.kind {
            BackendKind::Ollama => "check the proxy in front of Ollama",
            _ => "check OPENAI_API_KEY (or the profile's api_key_env)",
        };
        return Err(ProbeError::KeyRefused { url, status, hint });
    }
    // An API answers JSON, even to refuse; an HTML page is a web server
    // (a static file server, a proxy's error page) at the wrong URL.
    if status != 200 && is_html(body) {
        return Err(ProbeError::NotTheApi {
            catalogue: catalogue_url(config).unwrap_or_default(),
            url,
            status,
        });
    }
    if status != 200 {
        tracing::debug!("the model catalogue answered HTTP {status}: not checked");
        return Ok(());
    }
    let model = config.model.as_str();
    let (names, hint) = match config.kind {
        BackendKind::Ollama => {
            let Ok(tags) = serde_json::from_str::<OllamaTags>(body) else {
                return Ok(());
            };
            let names: Vec<String> = tags.models.into_iter().map(|m| m.name).collect();
            (
                names,
                format!(
                    "run `ollama pull {model}`, or set --model / OLLAMA_MODEL to a pulled model"
                ),
            )
        }
        _ => {
            let Ok(list) = serde_json::from_str::<OpenAiList>(body) else {
                return Ok(());
            };
            // llama.cpp's server answers under any model name.
            if !list.data.is_empty()
                && list
                    .data
                    .iter()
                    .all(|m| m.owned_by.as_deref() == Some("llamacpp"))
            {
                return Ok(());
            }
            let names: Vec<String> = list.data.into_iter().map(|m| m.id).collect();
            (
                names,
                "set --model, OPENAI_MODEL or the profile's model to one it serves".to_string(),
            )
        }
    };
    let latest = format!("{model}:latest");
    if names.iter().any(|n| n == model || *n == latest) {
        return Ok(());
    }
    Err(ProbeError::NoSuchModel {
        url,
        model: model.to_string(),
        offered: offered(names),
        hint,
    })
}

/// "a, b, c and 5 more" (sorted), or "no models".
fn offered(mut names: Vec<String>) -> String {
    const SHOWN: usize = 6;
    if names.is_empty() {
        return "no models".into();
    }
    names.sort();
    let more = names.len().saturating_sub(SHOWN);
    names.truncate(SHOWN);
    let list = names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if more > 0 {
        format!("{list} and {more} more")
    } else {
        list
    }
}

/// GETs `url` with the key as a bearer token: `(status, body)`, or `None`
/// when the request itself failed.
fn fetch(url: &str, key: Option<&str>, timeout: Duration) -> Option<(u16, String)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let client = reqwest::Client::builder().timeout(timeout).build().ok()?;
    let mut request = client.get(url);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    runtime.block_on(async {
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!("the model catalogue at {url} did not answer: {e}");
                return None;
            }
        };
        let status = response.status().as_u16();
        let body = response.text().await.unwrap_or_default();
        Some((status, body))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::config::{resolve, BackendChoice, Backends};

    fn config(kind: &str, model: &str) -> LiveConfig {
        let choice = BackendChoice {
            backend: Some(kind.into()),
            model: Some(model.into()),
            base_url: Some("http://127.0.0.1:9/v1".into()),
            gguf: None,
        };
        resolve(
            &choice,
            &Backends::default(),
            std::path::Path::new("none.toml"),
        )
        .unwrap()
        .unwrap()
    }

    #[test]
    fn a_listed_model_passes_and_an_unlisted_one_is_named_with_what_is_served() {
        let c = config("openai", "gpt-x");
        let list = r#"{"object":"list","data":[{"id":"gpt-x","owned_by":"o"},{"id":"gpt-y","owned_by":"o"}]}"#;
        assert_eq!(judge(&c, 200, list), Ok(()));
        let err = judge(&config("openai", "gpt-z"), 200, list)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no model `gpt-z`")
                && err.contains("`gpt-x`, `gpt-y`")
                && err.contains("OPENAI_MODEL"),
            "{err}"
        );
    }

    #[test]
    fn ollama_names_match_with_or_without_latest() {
        let tags =
            r#"{"models":[{"name":"qwen2.5:7b","model":"qwen2.5:7b"},{"name":"llama3.2:latest"}]}"#;
        assert_eq!(judge(&config("ollama", "llama3.2"), 200, tags), Ok(()));
        assert_eq!(judge(&config("ollama", "qwen2.5:7b"), 200, tags), Ok(()));
        let err = judge(&config("ollama", "qwen2.5"), 200, tags)
            .unwrap_err()
            .to_string();
        assert!(err.contains("ollama pull qwen2.5"), "{err}");
    }

    #[test]
    fn uncertain_answers_pass_and_refusals_do_not() {
        let c = config("openai", "m");
        assert_eq!(judge(&c, 404, "not found"), Ok(()));
        assert_eq!(judge(&c, 200, "<html>"), Ok(()));
        let llama = r#"{"data":[{"id":"/models/x.gguf","owned_by":"llamacpp"}]}"#;
        assert_eq!(judge(&c, 200, llama), Ok(()));
        let err = judge(&c, 401, "").unwrap_err().to_string();
        assert!(
            err.contains("HTTP 401") && err.contains("OPENAI_API_KEY"),
            "{err}"
        );
    }

    #[test]
    fn long_catalogues_are_cut() {
        let names = (0..10).map(|i| format!("m{i}")).collect();
        assert_eq!(
            offered(names),
            "`m0`, `m1`, `m2`, `m3`, `m4`, `m5` and 4 more"
        );
        assert_eq!(offered(Vec::new()), "no models");
    }

    #[test]
    fn a_web_server_answering_html_is_not_the_api() {
        // `python -m http.server` on the base URL: 404 with its HTML page.
        let c = config("openai", "gpt-4o");
        let page = "<!DOCTYPE HTML>\n<html lang=\"en\"><head><title>Error response</title>";
        let err = judge(&c, 404, page).unwrap_err();
        assert!(
            err.to_string().starts_with(
                "http://127.0.0.1:9/v1 is not an OpenAI-compatible API: its catalogue http://127.0.0.1:9/v1/models answered HTTP 404 with an HTML page"
            ),
            "{err}"
        );
        // A JSON 404 is a server without a catalogue: it passes.
        assert_eq!(judge(&c, 404, "{\"error\": \"not found\"}"), Ok(()));
    }
}
