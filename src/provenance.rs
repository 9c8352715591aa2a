//! What a run was made from: the task and its data (content hashes), the
//! model (name, server, the GGUF's SHA-256 and quantisation, the context
//! size, the sampler) and the software around them (gisclaw's version and
//! git revision, the sandbox venv's lock hash, the GDAL versions). Written
//! into every `run.json` and eval manifest; `gisclaw eval report` refuses
//! to pool runs whose task, data or model differ ([`differences`]).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::llm::provenance::short;
pub use crate::llm::provenance::{
    gguf, model_differences, quantisation, GgufFile, ModelProvenance, Sampler,
};
use crate::task::LoadedTask;
pub use crate::util::{sha256_bytes, sha256_file};

/// The whole bundle of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The task's files and data.
    pub task: TaskFiles,
    /// The model and how it was sampled.
    pub model: ModelProvenance,
    /// The software the run used.
    pub software: Software,
}

/// An eval's bundle (in `eval.json`): the model and software it started
/// with, and every task's hashes. Each run's own bundle is in its record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalProvenance {
    /// The model the eval asks.
    pub model: ModelProvenance,
    /// The software it started with.
    pub software: Software,
    /// Each task's hashes, by id.
    pub tasks: BTreeMap<String, TaskFiles>,
}

impl EvalProvenance {
    /// How a continuation (`--resume`, another shard) differs from the
    /// eval it continues in task, data or model.
    pub fn differences(&self, now: &EvalProvenance) -> Vec<String> {
        let mut out = model_differences(&self.model, &now.model);
        for (id, then) in &self.tasks {
            if let Some(now) = now.tasks.get(id) {
                out.extend(task_differences(then, now));
            }
        }
        out
    }
}

/// Content hashes of a task: its file, the files it names, its data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskFiles {
    /// The task id.
    pub id: String,
    /// SHA-256 of the task file (`sha256:…`).
    pub task_file: String,
    /// SHA-256 of the generator scripts and the gold solution, by the
    /// name the task file gives them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// SHA-256 over the data folder (every file's relative name and bytes,
    /// in name order); for generated data, `generated:` and a digest of
    /// what makes them (the seed and the generator scripts' hashes); `None`
    /// for a task without data.
    pub data: Option<String>,
    /// Files in the data folder.
    pub data_files: usize,
    /// Their bytes.
    pub data_bytes: u64,
}

/// The software a run used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Software {
    /// gisclaw's version.
    pub gisclaw: String,
    /// The git commit gisclaw was built from (`unknown` outside a checkout).
    pub git_revision: String,
    /// The sandbox's Python.
    pub python: String,
    /// SHA-256 of the lock files the sandbox venv was installed from
    /// (`sandbox/requirements.lock` and `models.txt`, as `make setup`
    /// stamped the venv); `None` for a venv gisclaw did not install.
    pub venv_lock: Option<String>,
    /// GDAL versions: gisclaw's own (`host`) and those the sandbox's
    /// libraries carry (`rasterio`, `pyogrio`, `fiona`, `osgeo`).
    pub gdal: BTreeMap<String, String>,
}

/// The git revision gisclaw was built from.
pub const GIT_REVISION: &str = env!("GISCLAW_GIT_REVISION");

impl Software {
    /// This build's (version, revision, its own GDAL), without a sandbox.
    pub fn build() -> Software {
        Software {
            gisclaw: env!("CARGO_PKG_VERSION").into(),
            git_revision: GIT_REVISION.into(),
            python: String::new(),
            venv_lock: None,
            gdal: BTreeMap::from([("host".into(), gdal::version::VersionInfo::release_name())]),
        }
    }

    /// This build's, with the sandbox's interpreter as its zygote reported.
    pub fn here(venv: &Path, worker: &gisclaw_protocol::WorkerInfo) -> Software {
        let mut software = Software::build();
        software.python = worker.python_version.clone();
        software.venv_lock = venv_lock(venv);
        software
            .gdal
            .extend(worker.gdal.iter().map(|(k, v)| (k.clone(), v.clone())));
        software
    }
}

/// The lock hash `make setup` stamped into the venv (the stamp's first
/// word), when it did.
pub fn venv_lock(venv: &Path) -> Option<String> {
    let stamp = std::fs::read_to_string(venv.join(".gisclaw-stamp")).ok()?;
    let hash = stamp.split_whitespace().next()?;
    (hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("sha256:{hash}"))
}

impl TaskFiles {
    /// The hashes of `loaded`'s files and data (`data`: the folder the run
    /// reads, generated or given).
    pub fn of(loaded: &LoadedTask) -> TaskFiles {
        let base = loaded.path.parent().unwrap_or(Path::new("."));
        let mut files = BTreeMap::new();
        for path in loaded.generator.iter().chain(loaded.gold.iter()) {
            let name = path
                .strip_prefix(base)
                .unwrap_or(path)
                .display()
                .to_string();
            files.insert(name, sha256_file(path).unwrap_or_else(unreadable));
        }
        let (mut data, data_files, data_bytes) = match loaded.data_dir.as_deref() {
            Some(dir) => {
                let (hash, n, bytes) = sha256_dir(dir);
                (Some(hash), n, bytes)
            }
            None => (None, 0, 0),
        };
        // Generated data are named by what makes them (the seed and the
        // generator's scripts), not by their bytes: GDAL stamps the day into a new .dbf's header, so the same
        // generator makes other bytes on another day or machine.
        if !loaded.generator.is_empty() {
            let mut maker = format!("seed {}", loaded.task.seed);
            for script in &loaded.generator {
                maker.push('\0');
                maker.push_str(&sha256_file(script).unwrap_or_else(unreadable));
            }
            data = Some(format!(
                "generated:{}",
                sha256_bytes(maker.as_bytes()).trim_start_matches("sha256:")
            ));
        }
        TaskFiles {
            id: loaded.task.id.clone(),
            task_file: sha256_file(&loaded.path).unwrap_or_else(unreadable),
            files,
            data,
            data_files,
            data_bytes,
        }
    }
}

/// [`sha256_file`] of a regular file only: opened without blocking and
/// checked on the open descriptor, so that a FIFO or device put in place
/// of a listed file is refused, never waited on.
fn sha256_regular_file(path: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    crate::util::sha256_reader(file)
}

fn unreadable(e: std::io::Error) -> String {
    format!("unreadable: {e}")
}

/// One digest over a data folder as the run sees it ([`crate::card::files_under`]:
/// regular files, links the sandbox could follow too, each folder once):
/// every file's relative name and bytes, length-prefixed, in name order;
/// with the number of files and their bytes. An unreadable file enters as
/// its name and the error.
pub fn sha256_dir(dir: &Path) -> (String, usize, u64) {
    let mut hasher = Sha256::new();
    let files = crate::card::files_under(dir);
    let mut bytes = 0;
    for (name, size) in &files {
        hasher.update((name.len() as u64).to_le_bytes());
        hasher.update(name.as_bytes());
        match sha256_regular_file(&dir.join(name)) {
            Ok(digest) => hasher.update(digest.as_bytes()),
            Err(e) => hasher.update(unreadable(e).as_bytes()),
        }
        bytes += size;
    }
    (
        format!("sha256:{}", crate::util::hex(&hasher.finalize())),
        files.len(),
        bytes,
    )
}

/// What must agree for two runs to be pooled: the task, its data and the
/// model (name, GGUF bytes, quantisation, replay or live). Each entry says
/// what differs, e.g. `task T07: data sha256:ab… ≠ sha256:cd…`.
pub fn differences(a: &Provenance, b: &Provenance) -> Vec<String> {
    let mut out = task_differences(&a.task, &b.task);
    out.extend(model_differences(&a.model, &b.model));
    out
}

/// How two tasks' hashes differ (the same id is assumed): the task file,
/// each file it names (generator, gold) and the data, when both have them.
pub fn task_differences(a: &TaskFiles, b: &TaskFiles) -> Vec<String> {
    let mut out = Vec::new();
    let id = &a.id;
    if a.task_file != b.task_file {
        out.push(format!(
            "task {id}: task file {} ≠ {}",
            short(&a.task_file),
            short(&b.task_file)
        ));
    }
    for (name, digest) in &a.files {
        match b.files.get(name) {
            Some(other) if other != digest => out.push(format!(
                "task {id}: {name} {} ≠ {}",
                short(digest),
                short(other)
            )),
            None => out.push(format!("task {id}: {name} in one, not the other")),
            _ => {}
        }
    }
    if let Some(name) = b.files.keys().find(|n| !a.files.contains_key(*n)) {
        out.push(format!("task {id}: {name} in one, not the other"));
    }
    // A task's data that one side could not name are not compared.
    if a.data.is_some() && b.data.is_some() && a.data != b.data {
        out.push(format!(
            "task {id}: data {} ({} files) ≠ {} ({} files)",
            a.data.as_deref().map_or("none".into(), short),
            a.data_files,
            b.data.as_deref().map_or("none".into(), short),
            b.data_files
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_folder_digest_changes_with_a_name_or_a_byte() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.csv"), "x\n1\n").unwrap();
        let (first, n, bytes) = sha256_dir(dir.path());
        assert_eq!((n, bytes), (1, 4));
        std::fs::write(dir.path().join("a.csv"), "x\n2\n").unwrap();
        let (second, ..) = sha256_dir(dir.path());
        assert_ne!(first, second);
        std::fs::rename(dir.path().join("a.csv"), dir.path().join("b.csv")).unwrap();
        let (third, ..) = sha256_dir(dir.path());
        assert_ne!(second, third);
        std::fs::rename(dir.path().join("b.csv"), dir.path().join("a.csv")).unwrap();
        assert_eq!(sha256_dir(dir.path()).0, second);
    }

    #[test]
    fn differences_name_the_task_data_and_model() {
        let task = TaskFiles {
            id: "T07".into(),
            task_file: "sha256:aaaa".into(),
            data: Some("sha256:1111".into()),
            data_files: 2,
            ..TaskFiles::default()
        };
        let model = ModelProvenance {
            name: Some("m".into()),
            gguf: Some(GgufFile {
                sha256: Some("sha256:9999".into()),
                quantisation: Some("Q4_1".into()),
                ..GgufFile::default()
            }),
            ..ModelProvenance::default()
        };
        let a = Provenance {
            task,
            model,
            software: Software::default(),
        };
        let mut b = a.clone();
        assert!(differences(&a, &b).is_empty());
        // Software and sampler do not stop pooling.
        b.software.git_revision = "other".into();
        b.model.sampler.temperature = Some(0.7);
        assert!(differences(&a, &b).is_empty());
        b.task.data = Some("sha256:2222".into());
        b.model.gguf.as_mut().unwrap().sha256 = Some("sha256:8888".into());
        let d = differences(&a, &b);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].starts_with("task T07: data sha256:1111"), "{d:?}");
        assert!(
            d[1].contains("GGUF sha256:9999 (Q4_1) ≠ GGUF sha256:8888"),
            "{d:?}"
        );
    }
}
