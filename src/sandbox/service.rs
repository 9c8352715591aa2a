//! The per-user sandbox service, from gisclaw's side: finding the warm
//! zygote that an earlier command left (or starting it), and
//! `gisclaw sandbox status|stop`.
//!
//! The service is the worker's `service` mode (`sandbox/src/service.rs`).
//! It listens on `DIR/zygote-<settings>.sock`, where `DIR` is
//! `$GISCLAW_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/gisclaw`, else
//! `/tmp/gisclaw-<uid>` — a folder that must be the user's own with mode
//! 0700 (gisclaw refuses any other) — and `<settings>` is a hash of what a
//! session's interpreter depends on: gisclaw's version, the worker binary,
//! the venv (and the state of its packages), the cache folder, the
//! environment the worker inherits, the cgroup and namespaces. A command
//! whose settings differ (a rebuilt worker, a changed venv, another
//! environment, another Slurm job) gets its own service; the old one exits
//! when idle. A service that died is replaced by the next command.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gisclaw_protocol::{
    read_frame, write_frame, ControlRequest, ControlResponse, ServiceStatus, WorkerInfo,
};

use super::config::{SandboxConfig, ServiceSettings};
use super::error::SandboxError;

/// The folder of the service's socket, created (0700) when missing; an
/// existing one must be a directory owned by this user with no access for
/// others.
pub fn runtime_dir() -> Result<PathBuf, SandboxError> {
    let uid = unsafe { libc::geteuid() };
    let dir = match std::env::var_os("GISCLAW_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|d| d.is_absolute())
        {
            Some(d) => d.join("gisclaw"),
            None => PathBuf::from(format!("/tmp/gisclaw-{uid}")),
        },
    };
    private_dir(dir)
}

/// `dir`, created (0700) when missing; an existing one must be a directory
/// owned by this user with no access for others.
fn private_dir(dir: PathBuf) -> Result<PathBuf, SandboxError> {
    let uid = unsafe { libc::geteuid() };
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)
            .map_err(SandboxError::io("creating the sandbox service's folder"))?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(SandboxError::StartFailed(format!(
                "cannot create the sandbox service's folder {}: {e}",
                dir.display()
            )))
        }
    }
    let meta = std::fs::symlink_metadata(&dir)
        .map_err(SandboxError::io("reading the sandbox service's folder"))?;
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return Err(SandboxError::StartFailed(format!(
            "refusing the sandbox service's folder {}: it must be a directory of uid {uid} with mode 0700 (it is {}, uid {}, mode {:o}); remove it or set GISCLAW_RUNTIME_DIR",
            dir.display(),
            if meta.is_dir() { "a directory" } else { "not a directory" },
            meta.uid(),
            meta.permissions().mode() & 0o7777
        )));
    }
    Ok(dir)
}

/// What a session's interpreter depends on, as `name: value` lines: of the
/// config's real paths ([`SandboxConfig::resolved`]), so that a venv named
/// through a link and by its real path name one service.
pub fn settings(config: &SandboxConfig) -> Vec<String> {
    let config = &config.clone().resolved();
    let stamp = |path: &Path| match std::fs::metadata(path) {
        Ok(m) => format!(
            "{} ({} bytes, changed {}.{:09})",
            path.display(),
            m.len(),
            m.mtime(),
            m.mtime_nsec()
        ),
        Err(_) => format!("{} (missing)", path.display()),
    };
    let mut lines = vec![
        format!("gisclaw: {}", env!("CARGO_PKG_VERSION")),
        format!("worker: {}", stamp(&config.worker)),
        format!("venv: {}", stamp(&config.venv.join("pyvenv.cfg"))),
        format!(
            "venv packages: {}",
            std::fs::read_to_string(config.venv.join(".gisclaw-stamp"))
                .unwrap_or_default()
                .trim()
        ),
        format!("cache: {}", config.cache_dir.display()),
    ];
    for site in site_packages(&config.venv) {
        lines.push(format!("site-packages: {}", stamp(&site)));
    }
    let mut env: Vec<String> = super::env::inherited_env(&config.venv)
        .map(|(k, v)| format!("env: {}={}", k.to_string_lossy(), v.to_string_lossy()))
        .collect();
    env.sort();
    lines.extend(env);
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    lines.push(format!("cgroup: {}", cgroup.trim().replace('\n', " ")));
    for ns in ["mnt", "pid", "user", "ipc"] {
        let link = std::fs::read_link(format!("/proc/self/ns/{ns}")).unwrap_or_default();
        lines.push(format!("namespace: {}", link.display()));
    }
    lines
}

/// The venv's `lib/python*/site-packages` folders (their change time moves
/// when packages are installed or removed).
fn site_packages(venv: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(venv.join("lib"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect();
    found.sort();
    found
}

/// The socket of the service for `settings` in `dir`.
pub fn socket_path(dir: &Path, settings: &[String]) -> PathBuf {
    // FNV-1a: stable across gisclaw builds and platforms.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in settings.join("\n").bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    dir.join(format!("zygote-{hash:016x}.sock"))
}

/// The socket of the service `config` uses (in its `ServiceSettings`'
/// folder, else [`runtime_dir`]), and the settings it is named after.
pub fn socket_for(config: &SandboxConfig) -> Result<(PathBuf, Vec<String>), SandboxError> {
    let dir = match config.service.as_ref().and_then(|s| s.dir.clone()) {
        Some(d) => private_dir(d)?,
        None => runtime_dir()?,
    };
    let settings = settings(config);
    Ok((socket_path(&dir, &settings), settings))
}

/// Why a connection attempt did not give a ready zygote.
enum Attempt {
    /// Nothing serves the socket (yet, or any more).
    Absent,
    /// Something answered wrongly.
    Failed(SandboxError),
}

/// Connects to the service for `config`, starting it when none serves;
/// returns the control channel and what the zygote's interpreter holds.
pub(crate) fn connect(
    config: &SandboxConfig,
    service: &ServiceSettings,
) -> Result<(UnixStream, WorkerInfo, PathBuf), SandboxError> {
    let (path, settings) = socket_for(config)?;
    let mut started = false;
    for attempt in 0..6u32 {
        match try_connect(&path, config.startup_timeout) {
            Ok((stream, info)) => return Ok((stream, info, path)),
            Err(Attempt::Failed(e)) => return Err(e),
            Err(Attempt::Absent) if !started => {
                start(config, service, &path, &settings)?;
                started = true;
            }
            // A service that was exiting as we came, or another command's
            // that is still binding: a moment, then again.
            Err(Attempt::Absent) => {
                std::thread::sleep(Duration::from_millis(50 * u64::from(attempt)))
            }
        }
    }
    Err(SandboxError::StartFailed(format!(
        "the sandbox service at {} does not answer (its log: {}.log); `gisclaw sandbox stop` or --no-daemon",
        path.display(),
        path.display()
    )))
}

/// One connection: the stream and the zygote's `Ready`.
fn try_connect(path: &Path, patience: Duration) -> Result<(UnixStream, WorkerInfo), Attempt> {
    let stream = match UnixStream::connect(path) {
        Ok(s) => s,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Err(Attempt::Absent)
        }
        Err(e) => {
            return Err(Attempt::Failed(SandboxError::StartFailed(format!(
                "connecting to the sandbox service at {}: {e}",
                path.display()
            ))))
        }
    };
    let _ = stream.set_read_timeout(Some(patience));
    let ready = read_frame::<_, ControlResponse>(&mut &stream);
    let _ = stream.set_read_timeout(None);
    match ready {
        Ok(ControlResponse::Ready { info }) => Ok((stream, *info)),
        Ok(ControlResponse::Error { message }) => {
            Err(Attempt::Failed(SandboxError::StartFailed(message)))
        }
        Ok(other) => Err(Attempt::Failed(SandboxError::Protocol(format!(
            "expected Ready from the sandbox service, got {other:?}"
        )))),
        // Closed before a word: it was exiting (idle) as we connected.
        Err(_) => Err(Attempt::Absent),
    }
}

/// Starts the service: its launching process answers once the service is
/// ready (or another one serves the socket), or says why it could not.
fn start(
    config: &SandboxConfig,
    service: &ServiceSettings,
    path: &Path,
    settings: &[String],
) -> Result<(), SandboxError> {
    tracing::debug!(socket = %path.display(), "starting the sandbox service");
    // The service works from `/` (it must not hold a command's folder), so
    // every path it gets is absolute.
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut child = Command::new(&config.worker)
        .env_clear()
        .envs(super::env::inherited_env(&config.venv))
        .arg("service")
        .arg("--venv")
        .arg(absolute(&config.venv))
        .arg("--cache")
        .arg(absolute(&config.cache_dir))
        .arg("--socket")
        .arg(absolute(path))
        .arg("--idle-seconds")
        .arg(service.idle.as_secs().max(1).to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| SandboxError::WorkerMissing {
            path: config.worker.clone(),
            source,
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(settings.join("\n").as_bytes());
    }
    let mut stderr = child.stderr.take();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(err) = stderr.as_mut() {
            let _ = err.take(64 * 1024).read_to_string(&mut text);
        }
        let _ = tx.send(text);
    });
    let deadline = Instant::now() + config.startup_timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(SandboxError::StartFailed(format!(
                    "the sandbox service did not start within {:?} (its log: {}.log)",
                    config.startup_timeout,
                    path.display()
                )));
            }
        }
    };
    if status.success() {
        return Ok(());
    }
    let said = rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
    Err(SandboxError::StartFailed(
        super::error::worker_message(said.lines()).unwrap_or_else(|| {
            format!(
                "the sandbox service could not start ({status}); its log: {}.log",
                path.display()
            )
        }),
    ))
}

/// A service found in the runtime folder.
#[derive(Debug)]
pub struct Found {
    /// Its socket.
    pub socket: PathBuf,
    /// What it said of itself, or why it could not be asked.
    pub status: Result<ServiceStatus, String>,
}

/// Every service socket in the runtime folder, asked for its status (the
/// question itself counts as a client while it is asked).
pub fn list() -> Result<Vec<Found>, SandboxError> {
    let dir = runtime_dir()?;
    let mut sockets: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(SandboxError::io("reading the sandbox service's folder"))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("zygote-") && n.ends_with(".sock"))
        })
        .collect();
    sockets.sort();
    Ok(sockets
        .into_iter()
        .map(|socket| {
            let status = ask(&socket, &ControlRequest::Status);
            Found { socket, status }
        })
        .collect())
}

/// Stops every service of the runtime folder; returns what each said
/// before it went.
pub fn stop_all() -> Result<Vec<Found>, SandboxError> {
    let mut stopped = Vec::new();
    for found in list()? {
        let status = ask(&found.socket, &ControlRequest::Shutdown);
        if status.is_ok() {
            // Gone once its socket file is.
            let deadline = Instant::now() + Duration::from_secs(5);
            while found.socket.exists() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
        } else {
            // Nothing answers there: a dead service's file.
            let _ = std::fs::remove_file(&found.socket);
        }
        stopped.push(Found {
            socket: found.socket,
            status,
        });
    }
    Ok(stopped)
}

/// One request to the service at `socket`, answered with its status.
fn ask(socket: &Path, request: &ControlRequest) -> Result<ServiceStatus, String> {
    let patience = Duration::from_secs(5);
    let (stream, _) = try_connect(socket, patience).map_err(|e| match e {
        Attempt::Absent => "not answering".to_string(),
        Attempt::Failed(e) => e.to_string(),
    })?;
    let _ = stream.set_read_timeout(Some(patience));
    write_frame(&mut &stream, request).map_err(|e| e.to_string())?;
    match read_frame::<_, ControlResponse>(&mut &stream) {
        Ok(ControlResponse::Status { status }) => Ok(*status),
        Ok(other) => Err(format!("unexpected answer {other:?}")),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_is_named_after_the_settings() {
        let dir = Path::new("/run/x");
        let a = socket_path(dir, &["gisclaw: 1".into(), "env: A=1".into()]);
        let b = socket_path(dir, &["gisclaw: 1".into(), "env: A=2".into()]);
        assert_ne!(a, b);
        assert_eq!(
            a,
            socket_path(dir, &["gisclaw: 1".into(), "env: A=1".into()])
        );
        assert!(a.to_string_lossy().starts_with("/run/x/zygote-"));
    }

    #[test]
    fn settings_name_the_version_worker_venv_and_environment() {
        let lines = settings(&SandboxConfig::default());
        for prefix in [
            "gisclaw: ",
            "worker: ",
            "venv: ",
            "cache: ",
            "cgroup: ",
            "namespace: ",
        ] {
            assert!(
                lines.iter().any(|l| l.starts_with(prefix)),
                "{prefix}: {lines:?}"
            );
        }
        assert!(
            lines.iter().any(|l| l.starts_with("env: PATH=")),
            "{lines:?}"
        );
    }
}
