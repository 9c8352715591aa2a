//! The config file, `$XDG_CONFIG_HOME/gisclaw/config.toml` (or
//! `GISCLAW_CONFIG`): its model backends (profiles, the default one, price
//! overrides; resolved into a live model by [`crate::llm::config`]) and its
//! `[sandbox]` section. Read once per command by the command line; a
//! missing file is an empty config, a bad one an error naming its line.
//!
//! ```toml
//! default = "deepseek"            # profile used when --backend is not given
//!
//! [profiles.deepseek]
//! kind = "openai"                 # openai | ollama | local
//! base_url = "https://api.deepseek.com/v1"
//! model = "deepseek-chat"
//! api_key_env = "DEEPSEEK_API_KEY"
//!
//! [prices."my-model"]             # USD per 1M tokens
//! input = 0.5
//! output = 1.5
//!
//! [sandbox]
//! require = ["all"]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::llm::config::{Backends, Profile};
use crate::llm::tokens::Price;
use crate::sandbox::Layer;

/// The config file, read.
#[derive(Debug, Clone, Default)]
pub struct ConfigFile {
    /// Its model backends.
    pub backends: Backends,
    /// Its sandbox settings.
    pub sandbox: SandboxSection,
}

/// The file as written (an unknown key is an error naming its line).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    default: Option<String>,
    #[serde(default)]
    profiles: BTreeMap<String, Profile>,
    #[serde(default)]
    prices: BTreeMap<String, Price>,
    #[serde(default)]
    sandbox: SandboxSection,
}

/// The config file's `[sandbox]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxSection {
    /// Confinement layers every session must have in force (`all`, or
    /// names such as `namespaces`, `landlock`, `seccomp`); a session that
    /// cannot get one is refused.
    #[serde(default, deserialize_with = "layers")]
    pub require: Vec<Layer>,
    /// Whether commands share the per-user sandbox service (a warm zygote
    /// that outlives them; default true). `--no-daemon` turns it off for
    /// one command.
    pub daemon: Option<bool>,
    /// Minutes the service stays without clients before it exits (default 10).
    pub daemon_idle_minutes: Option<f64>,
}

/// Reads `require = [...]`, naming an unknown layer.
fn layers<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Layer>, D::Error> {
    let names = Vec::<String>::deserialize(d)?;
    Layer::parse_list(&names).map_err(serde::de::Error::custom)
}

/// A config file that cannot be read or does not parse, said in one line
/// naming the file and line.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ConfigFileError {
    /// The file.
    pub file: String,
    /// 1-based line (0: the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// The config file's location.
pub fn config_path() -> PathBuf {
    if let Some(p) = std::env::var_os("GISCLAW_CONFIG") {
        return PathBuf::from(p);
    }
    crate::paths::config_dir().join("config.toml")
}

impl ConfigFile {
    /// Reads `path`; a missing file is an empty config.
    pub fn load(path: &Path) -> Result<ConfigFile, ConfigFileError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ConfigFile::default()),
            Err(e) => {
                return Err(ConfigFileError {
                    file: path.display().to_string(),
                    line: 0,
                    message: format!("cannot read: {e}"),
                })
            }
        };
        let written: Written = toml::from_str(&text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
                .unwrap_or(0);
            ConfigFileError {
                file: path.display().to_string(),
                line,
                message: e.message().trim().to_string(),
            }
        })?;
        Ok(ConfigFile {
            backends: Backends {
                default: written.default,
                profiles: written.profiles,
                prices: written.prices,
            },
            sandbox: written.sandbox,
        })
    }
}
