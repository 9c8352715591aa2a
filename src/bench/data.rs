//! Generated task data: a task whose `task.yaml` names `generator` scripts
//! gets its `data/` made by running them, in order, as cells of one sandbox
//! session (the same Python stack the agent uses). The result lives in
//! `<cache>/data/<task id>-<key>/`, where the key hashes the scripts and the
//! seed, so a changed generator means fresh data and an unchanged one is
//! never run twice. Generation writes into a staging folder and renames it
//! into place: an interrupted generation leaves nothing half-made behind.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::observation;
use crate::paths;
use crate::sandbox::{CellStatus, SandboxConfig, SandboxError, Session, Zygote};
use crate::task::LoadedTask;

/// Bumped when the way generators are run changes (the prelude below).
const GENERATOR_PROTOCOL: &str = "gisclaw-generator-1";

/// Runs before the generator: the seed, a `data/` folder, and a fixed
/// date in GeoPackage metadata so that the same seed gives the same bytes.
fn prelude(seed: u64) -> String {
    format!(
        "import os\nos.environ['OGR_CURRENT_DATE'] = '2024-01-01T00:00:00Z'\nos.makedirs('data', exist_ok=True)\nSEED = {seed}\n"
    )
}

/// Why a task's data could not be made.
#[derive(Debug, thiserror::Error)]
#[error("{task}: {message}")]
pub struct DataError {
    /// The task id.
    pub task: String,
    /// What went wrong, naming the script or file.
    pub message: String,
}

/// Why a generator run made no data (said in the [`DataError`]).
#[derive(Debug, thiserror::Error)]
enum GeneratorError {
    /// The sandbox failed while running a script.
    #[error("{0}: sandbox: {1}")]
    Sandbox(String, SandboxError),
    /// A script raised.
    #[error("{script} failed: {error}")]
    Failed {
        /// The script.
        script: String,
        /// Its error line.
        error: String,
    },
    /// The scripts ran and wrote nothing.
    #[error("the generator wrote nothing under data/")]
    Empty,
    /// The data could not be moved into the cache.
    #[error("moving the data to {}: {source}", to.display())]
    Move {
        /// The cache folder.
        to: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// How [`ensure`] found the data.
#[derive(Debug, Clone, PartialEq)]
pub enum Provenance {
    /// The task has a plain `data` folder (or none).
    Given,
    /// Generated earlier and found in the cache.
    Cached,
    /// Generated now, in this many seconds.
    Generated(Duration),
}

/// FNV-1a, 64 bits: a stable, dependency-free content hash (not for security).
#[derive(Debug, Clone, Copy)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Feeds bytes (length-prefixed, so that `ab`+`c` differs from `a`+`bc`).
    pub fn feed(&mut self, bytes: &[u8]) {
        for b in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The hash as 16 hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// A generator's files as read once: the name shown in messages and the
/// code. The key is hashed from, and the session runs, the same text.
type Scripts = Vec<(String, String)>;

fn read_scripts(loaded: &LoadedTask) -> Result<Scripts, DataError> {
    loaded
        .generator
        .iter()
        .map(|script| {
            let name = script.display().to_string();
            std::fs::read_to_string(script)
                .map(|code| (name.clone(), code))
                .map_err(|e| DataError {
                    task: loaded.task.id.clone(),
                    message: format!("{name}: cannot read: {e}"),
                })
        })
        .collect()
}

fn key_of(seed: u64, scripts: &Scripts) -> String {
    let mut h = Fnv::default();
    h.feed(GENERATOR_PROTOCOL.as_bytes());
    h.feed(&seed.to_le_bytes());
    for (_, code) in scripts {
        h.feed(code.as_bytes());
    }
    h.hex()[..12].to_string()
}

fn dir_for(loaded: &LoadedTask, key: &str) -> PathBuf {
    let id: String = loaded
        .task
        .id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    paths::cache_dir().join("data").join(format!("{id}-{key}"))
}

/// The cache key of a task's generated data.
pub fn cache_key(loaded: &LoadedTask) -> Result<String, DataError> {
    Ok(key_of(loaded.task.seed, &read_scripts(loaded)?))
}

/// Where a task's generated data live (whether or not they exist yet).
pub fn cached_dir(loaded: &LoadedTask) -> Result<PathBuf, DataError> {
    Ok(dir_for(loaded, &cache_key(loaded)?))
}

/// Makes sure the task's data exist, generating them if needed, and points
/// `loaded.data_dir` at them.
pub fn ensure(zygote: &Arc<Zygote>, loaded: &mut LoadedTask) -> Result<Provenance, DataError> {
    if loaded.generator.is_empty() {
        return Ok(Provenance::Given);
    }
    let scripts = read_scripts(loaded)?;
    let dir = dir_for(loaded, &key_of(loaded.task.seed, &scripts));
    if dir.is_dir() {
        loaded.data_dir = Some(dir);
        return Ok(Provenance::Cached);
    }
    let took = generate(zygote, loaded, &scripts, &dir)?;
    loaded.data_dir = Some(dir);
    Ok(Provenance::Generated(took))
}

/// Runs the task's generator scripts and moves the `data/` they wrote to
/// `dest` (which must not exist).
fn generate(
    zygote: &Arc<Zygote>,
    loaded: &LoadedTask,
    scripts: &Scripts,
    dest: &Path,
) -> Result<Duration, DataError> {
    let started = Instant::now();
    let fail = |message: String| DataError {
        task: loaded.task.id.clone(),
        message,
    };
    let parent = dest
        .parent()
        .ok_or_else(|| fail(format!("{} has no parent folder", dest.display())))?;
    std::fs::create_dir_all(parent)
        .map_err(|e| fail(format!("creating {}: {e}", parent.display())))?;
    let staging = parent.join(format!(
        ".{}.partial-{}-{}",
        dest.file_name().unwrap_or_default().to_string_lossy(),
        crate::util::host_name(),
        std::process::id()
    ));
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .map_err(|e| fail(format!("clearing {}: {e}", staging.display())))?;
    }
    let result = run_generator(zygote, loaded.task.seed, scripts, &staging).and_then(|()| {
        match std::fs::rename(staging.join("data"), dest) {
            Ok(()) => Ok(()),
            // Another gisclaw generated the same data meanwhile: same key, same bytes.
            Err(_) if dest.is_dir() => Ok(()),
            Err(source) => Err(GeneratorError::Move {
                to: dest.to_path_buf(),
                source,
            }),
        }
    });
    let _ = std::fs::remove_dir_all(&staging);
    result.map_err(|e| fail(e.to_string()))?;
    remove_stale(dest);
    Ok(started.elapsed())
}

/// Removes the same task's data made by older generators (other keys).
fn remove_stale(dest: &Path) {
    let (Some(parent), Some(name)) = (dest.parent(), dest.file_name().and_then(|n| n.to_str()))
    else {
        return;
    };
    let Some((id, _key)) = name.rsplit_once('-') else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let other = entry.file_name().to_string_lossy().to_string();
        let same_task = other
            .rsplit_once('-')
            .is_some_and(|(i, k)| i == id && k.len() == 12);
        if same_task && other != name {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn run_generator(
    zygote: &Arc<Zygote>,
    seed: u64,
    scripts: &Scripts,
    workdir: &Path,
) -> Result<(), GeneratorError> {
    let config = SandboxConfig {
        cell_timeout: Duration::from_secs(300),
        task_budget: Duration::from_secs(900),
        ..zygote.config().clone()
    };
    let mut session = Session::open_with(zygote, workdir, config)
        .map_err(|e| GeneratorError::Sandbox("the session".into(), e))?;
    let prelude = [("the generator prelude".to_string(), prelude(seed))];
    for (name, code) in prelude.iter().chain(scripts) {
        let outcome = session
            .execute(code)
            .map_err(|e| GeneratorError::Sandbox(name.clone(), e))?;
        if outcome.status != CellStatus::Ok {
            let text = observation::render(&outcome);
            return Err(GeneratorError::Failed {
                script: name.clone(),
                error: observation::error_line(&text).to_string(),
            });
        }
    }
    let data = workdir.join("data");
    if crate::card::files_under(&data).is_empty() {
        return Err(GeneratorError::Empty);
    }
    Ok(())
}

/// A content hash of every file under `dir` (relative names and bytes, in
/// name order): equal digests mean byte-identical data.
pub fn digest(dir: &Path) -> std::io::Result<String> {
    let mut h = Fnv::default();
    for (name, _) in crate::card::files_under(dir) {
        h.feed(name.as_bytes());
        h.feed(&std::fs::read(dir.join(&name))?);
    }
    Ok(h.hex())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_is_stable_and_length_prefixed() {
        let mut a = Fnv::default();
        a.feed(b"ab");
        a.feed(b"c");
        let mut b = Fnv::default();
        b.feed(b"a");
        b.feed(b"bc");
        assert_ne!(a.hex(), b.hex());
        let mut c = Fnv::default();
        c.feed(b"ab");
        c.feed(b"c");
        assert_eq!(a.hex(), c.hex());
        // A fixed value: cache folders must keep their names across builds.
        let mut d = Fnv::default();
        d.feed(b"gisclaw");
        assert_eq!(d.hex(), "67de5f90f9001338");
    }
}
