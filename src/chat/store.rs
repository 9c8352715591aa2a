//! Saved chat sessions: `$XDG_DATA_HOME/gisclaw/chats/<id>/chat.json`
//! (conversation, hints, data folder and the journal of successful cells),
//! written atomically after every turn and command, so `gisclaw chat
//! --resume ID` can rebuild the conversation and the namespace.

use super::ChatError;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::llm::Message;
use crate::util::write_atomic;

/// The agent architecture of a chat's turns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatArch {
    /// ReAct: the model reasons, runs a cell, observes, until it answers.
    #[default]
    Single,
    /// Plan → Execute → Replan: a plan for the request, a worker per step.
    Dual,
    /// Tree search: candidate codes per plan step, each run in a fork of
    /// its parent's sandbox, the best path kept.
    Mcts,
}

impl ChatArch {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ChatArch::Single => "single",
            ChatArch::Dual => "dual",
            ChatArch::Mcts => "mcts",
        }
    }
}

impl std::str::FromStr for ChatArch {
    type Err = String;

    /// `single`, `dual` or `mcts`, in any case (`--arch`, `/arch`).
    fn from_str(s: &str) -> Result<ChatArch, String> {
        [ChatArch::Single, ChatArch::Dual, ChatArch::Mcts]
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("{s:?}: say single, dual or mcts"))
    }
}

/// What a saved session holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SavedChat {
    /// The session id (its folder name).
    pub id: String,
    /// The attached data folder.
    #[serde(default)]
    pub data_dir: Option<PathBuf>,
    /// Domain knowledge given with `/hint`.
    #[serde(default)]
    pub hints: Vec<String>,
    /// The conversation after the system message.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// Index into `messages` where each turn began (for `/undo`).
    #[serde(default)]
    pub turns: Vec<usize>,
    /// The cells that ran successfully, in order (replayed on resume).
    #[serde(default)]
    pub cells: Vec<String>,
    /// The architecture of the next turns.
    #[serde(default)]
    pub arch: ChatArch,
}

/// Where chat sessions live.
pub fn chats_dir() -> PathBuf {
    match std::env::var_os("GISCLAW_CHATS") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => crate::paths::data_dir().join("chats"),
    }
}

/// A new session id: local date and time plus the process id.
pub fn new_id() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Days since the epoch → civil date (UTC), without a date crate.
    let days = (secs / 86_400) as i64;
    let (y, m, d) = civil_from_days(days);
    let rem = secs % 86_400;
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}-{}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        std::process::id()
    )
}

/// Howard Hinnant's days-to-civil conversion.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

impl SavedChat {
    /// The session's folder.
    pub fn dir(&self) -> PathBuf {
        chats_dir().join(&self.id)
    }

    /// Writes `chat.json` atomically.
    pub fn save(&self) -> std::io::Result<()> {
        let dir = self.dir();
        std::fs::create_dir_all(&dir)?;
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        write_atomic(&dir.join("chat.json"), text.as_bytes())
    }

    /// Loads session `id`; one line saying what is wrong otherwise.
    pub fn load(id: &str) -> Result<SavedChat, ChatError> {
        if id.is_empty() || id.contains('/') || id.starts_with('.') {
            return Err(ChatError::BadId {
                id: id.to_string(),
                dir: chats_dir(),
            });
        }
        let path = chats_dir().join(id).join("chat.json");
        let text = std::fs::read_to_string(&path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => ChatError::NoSession {
                path: path.clone(),
                available: available(),
            },
            _ => ChatError::Io {
                path: path.clone(),
                source,
            },
        })?;
        serde_json::from_str(&text).map_err(|e| ChatError::Corrupt {
            line: e.line(),
            message: e.to_string(),
            path,
        })
    }
}

/// The ids of saved sessions, newest last, for error messages.
fn available() -> String {
    let mut ids: Vec<String> = std::fs::read_dir(chats_dir())
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().join("chat.json").is_file())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    match ids.len() {
        0 => "there are none yet".into(),
        n => format!("saved: {}", ids[n.saturating_sub(5)..].join(", ")),
    }
}

/// `path` relative to the session's work dir when inside it.
pub fn shown(path: &Path, workdir: &Path) -> String {
    path.strip_prefix(workdir)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_are_right() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(20_780), (2026, 11, 23));
    }
}
