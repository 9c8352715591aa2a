//! What a run was made from: the task and its data (content hashes), the
//! model (name, server, the GGUF's SHA-256 and quantisation, the context
//! size, the sampler) and the software around them (gisclaw's version and
//! git revision, the sandbox venv's lock hash, the GDAL versions). Written
//! into every `run.json` and eval manifest; `gisclaw eval report` refuses
//! to pool runs whose task, data or model differ ([`differences`]).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::task::LoadedTask;

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
    /// in name order); `None` for a task without data.
    pub data: Option<String>,
    /// Files in the data folder.
    pub data_files: usize,
    /// Their bytes.
    pub data_bytes: u64,
}

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
        let (data, data_files, data_bytes) = match loaded.data_dir.as_deref() {
            Some(dir) => {
                let (hash, n, bytes) = sha256_dir(dir);
                (Some(hash), n, bytes)
            }
            None => (None, 0, 0),
        };
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

fn unreadable(e: std::io::Error) -> String {
    format!("unreadable: {e}")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `sha256:` and the hex digest of `bytes`.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

/// `sha256:` and the hex digest of a file's bytes, read in pieces.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(format!("sha256:{}", hex(&hasher.finalize())))
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
        match sha256_file(&dir.join(name)) {
            Ok(digest) => hasher.update(digest.as_bytes()),
            Err(e) => hasher.update(unreadable(e).as_bytes()),
        }
        bytes += size;
    }
    (
        format!("sha256:{}", hex(&hasher.finalize())),
        files.len(),
        bytes,
    )
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
    let key = sha256_bytes(
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
    let digest = sha256_file(real).ok()?;
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
    // A run's data are hashed as generated; an eval's manifest, written
    // before generation, has no data hash for a generated task.
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

/// How two models differ.
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

/// A digest shortened for messages (`sha256:` and 12 hex digits).
fn short(digest: &str) -> String {
    digest.chars().take(19).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_the_published_test_vector() {
        // FIPS 180-2, appendix B.1.
        assert_eq!(
            sha256_bytes(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"abc").unwrap();
        assert_eq!(sha256_file(&f).unwrap(), sha256_bytes(b"abc"));
    }

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
