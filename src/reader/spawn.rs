//! The host's side of the reader: opens the folder, starts `gisclaw
//! __read` with it, writes the namespace's id maps, and takes the answer
//! within a time limit and a size bound.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::request::{Envelope, Reply, Request};
use super::{MAGIC, MAX_ANSWER_BINARY, MAX_ANSWER_JSON};

/// Why a read gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The folder could not be opened (missing, or a link where a folder
    /// of the run was expected).
    #[error("{0}")]
    Folder(String),
    /// The reader could not be started.
    #[error("the confined reader could not start: {0}")]
    Start(String),
    /// It ran past its time limit and was stopped.
    #[error("not read within {0} s")]
    Timeout(u64),
    /// It ended without an answer (the last line it wrote on stderr).
    #[error("the confined reader failed: {0}")]
    Failed(String),
    /// Its answer was malformed or too big.
    #[error("the confined reader's answer: {0}")]
    Answer(String),
}

/// The folder a reader sees, opened by the host (`O_PATH`).
pub struct Root {
    path: PathBuf,
    fd: OwnedFd,
}

impl Root {
    /// A folder the user named (a task's or chat's data folder): links on
    /// the way to it are the user's choice and are followed.
    pub fn chosen(path: &Path) -> Result<Root, ReadError> {
        let real = path
            .canonicalize()
            .map_err(|e| ReadError::Folder(format!("{}: {e}", path.display())))?;
        Root::open(&real)
    }

    /// A folder a cell can write in or beside (a run's `pred_results/`):
    /// its own name is never followed as a link, so a cell that swapped it
    /// for a link to elsewhere gets a refusal, not a read of elsewhere.
    pub fn exact(path: &Path) -> Result<Root, ReadError> {
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .ok_or_else(|| ReadError::Folder(format!("{}: not a folder", path.display())))?;
        let parent = parent
            .canonicalize()
            .map_err(|e| ReadError::Folder(format!("{}: {e}", parent.display())))?;
        Root::open(&parent.join(name))
    }

    fn open(path: &Path) -> Result<Root, ReadError> {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| ReadError::Folder(format!("{}: a NUL in the name", path.display())))?;
        // SAFETY: c is NUL-terminated; the descriptor is owned below.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            let err = std::io::Error::last_os_error();
            let why = match err.raw_os_error() {
                Some(libc::ENOTDIR) | Some(libc::ELOOP) => "a link or a file, not a folder".into(),
                _ => err.to_string(),
            };
            return Err(ReadError::Folder(format!("{}: {why}", path.display())));
        }
        Ok(Root {
            path: path.to_path_buf(),
            // SAFETY: fd was just opened and is owned by no one else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// The folder's path on the host.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Variables the reader inherits: locale and GDAL's and PROJ's data paths.
const READER_ENV: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "GDAL_DATA",
    "GDAL_CACHEMAX",
    "PROJ_DATA",
    "PROJ_LIB",
];

/// The most stderr kept from a reader.
const MAX_STDERR: u64 = 64 << 10;

/// Asks a confined reader `request` about `root`, waiting at most `limit`.
/// Returns its reply and the binary part of the answer.
pub fn read(root: &Root, request: Request, limit: Duration) -> Result<(Reply, Vec<u8>), ReadError> {
    let (json, binary) = exchange(root, request, limit)?;
    let reply: Reply =
        serde_json::from_slice(&json).map_err(|e| ReadError::Answer(e.to_string()))?;
    Ok((reply, binary))
}

/// The reply with its answer taken as `T` directly.
#[derive(serde::Deserialize)]
struct TypedReply<T> {
    answer: T,
}

/// [`read`], with the answer taken as `T` (the request's own answer type).
pub fn ask<T: serde::de::DeserializeOwned>(
    root: &Root,
    request: Request,
    limit: Duration,
) -> Result<(T, Vec<u8>), ReadError> {
    let (json, binary) = exchange(root, request, limit)?;
    let reply: TypedReply<T> = serde_json::from_slice(&json)
        .map_err(|e| ReadError::Answer(format!("not the answer asked for: {e}")))?;
    Ok((reply.answer, binary))
}

/// Runs one reader for `request`: the answer's JSON and binary parts.
fn exchange(
    root: &Root,
    request: Request,
    limit: Duration,
) -> Result<(Vec<u8>, Vec<u8>), ReadError> {
    Standby::start(root, limit)?.answer(request, limit)
}

/// A reader started ahead of its request: it execs, enters its namespaces
/// and confines itself while the host does other work (a cell runs), then
/// waits for one request. What a reader costs to start (tens of
/// milliseconds: the binary and GDAL's libraries loaded, the view built)
/// is then off the path of the check that uses it. Dropped unused, it is
/// killed.
pub struct Standby {
    root: PathBuf,
    pid: i32,
    child: Option<std::process::Child>,
    handshake: Option<std::thread::JoinHandle<()>>,
    scratch: Option<tempfile::TempDir>,
}

impl std::fmt::Debug for Standby {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Standby({}, pid {})", self.root.display(), self.pid)
    }
}

impl Standby {
    /// Starts a reader of `root` that will wait for its request; `limit`
    /// bounds the CPU it may then spend.
    pub fn start(root: &Root, limit: Duration) -> Result<Standby, ReadError> {
        // The reader's stage and /tmp, removed here whatever becomes of it.
        let scratch = tempfile::Builder::new()
            .prefix("gisclaw-read-")
            .tempdir()
            .map_err(|e| ReadError::Start(format!("the reader's folder: {e}")))?;
        let envelope = Envelope {
            root: root.path.clone(),
            cpu_seconds: limit.as_secs().max(1) + 1,
            scratch: scratch.path().to_path_buf(),
        };
        let mut line =
            serde_json::to_vec(&envelope).map_err(|e| ReadError::Start(e.to_string()))?;
        line.push(b'\n');
        let (mut ours, theirs) = UnixStream::pair().map_err(|e| ReadError::Start(e.to_string()))?;
        let exe = crate::paths::default_reader();
        let mut command = Command::new(&exe);
        command
            .arg("__read")
            .env_clear()
            .envs(std::env::vars_os().filter(|(k, _)| {
                let k = k.to_string_lossy();
                READER_ENV.contains(&k.as_ref()) || k.starts_with("LC_")
            }))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let (sync_fd, root_fd) = (theirs.as_raw_fd(), root.fd.as_raw_fd());
        // SAFETY: between fork and exec only async-signal-safe calls (setsid,
        // prctl, fcntl, dup2) on descriptors this process owns.
        unsafe {
            command.pre_exec(move || {
                // A session and process group of its own: no controlling
                // terminal, and one kill ends every process of the reader
                // (seccomp keeps them from leaving the group).
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Should gisclaw die, a waiting reader reads the end of its
                // request pipe and leaves; a working one ends within its
                // CPU limit.
                let high_sync = libc::fcntl(sync_fd, libc::F_DUPFD, 100);
                let high_root = libc::fcntl(root_fd, libc::F_DUPFD, 100);
                if high_sync < 0
                    || high_root < 0
                    || libc::dup2(high_sync, 3) < 0
                    || libc::dup2(high_root, 4) < 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(high_sync);
                libc::close(high_root);
                Ok(())
            });
        }
        let mut child = command
            .spawn()
            .map_err(|e| ReadError::Start(format!("{}: {e}", exe.display())))?;
        drop(theirs);
        let pid = child.id() as i32;
        if let Some(stdin) = child.stdin.as_mut() {
            // One line, far below a pipe's buffer: never blocks.
            let _ = stdin.write_all(&line);
        }
        // The reader reports whether it entered its namespaces; the maps
        // are written from here (as root: its root is `nobody` outside).
        let handshake = std::thread::spawn(move || {
            let _ = ours.set_read_timeout(Some(Duration::from_secs(30)));
            let _ = ours.set_write_timeout(Some(Duration::from_secs(10)));
            let _ = gisclaw_confine::isolate::write_id_maps(pid, &mut ours);
        });
        Ok(Standby {
            root: root.path.clone(),
            pid,
            child: Some(child),
            handshake: Some(handshake),
            scratch: Some(scratch),
        })
    }

    /// The folder it reads.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Sends `request`, waits at most `limit` for the answer: its JSON and
    /// binary parts.
    fn answer(
        mut self,
        request: Request,
        limit: Duration,
    ) -> Result<(Vec<u8>, Vec<u8>), ReadError> {
        let body = serde_json::to_vec(&request).map_err(|e| ReadError::Start(e.to_string()))?;
        let Some(mut child) = self.child.take() else {
            return Err(ReadError::Start("the reader is gone".into()));
        };
        let pid = self.pid;
        let mut stdin = child.stdin.take();
        let writer = std::thread::spawn(move || {
            if let Some(stdin) = stdin.as_mut() {
                let _ = stdin.write_all(&body);
            }
        });
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        let err = std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(stderr) = stderr.as_mut() {
                let _ = stderr.take(MAX_STDERR).read_to_end(&mut text);
                // Drain the rest so the reader never blocks on a full pipe.
                let _ = std::io::copy(stderr, &mut std::io::sink());
            }
            String::from_utf8_lossy(&text).into_owned()
        });
        // The answer is taken as soon as it is whole: the reader's exit
        // (its namespaces torn down) is waited for on a thread of its own.
        let (answer_tx, answer_rx) = std::sync::mpsc::channel();
        let out = std::thread::spawn(move || {
            let answer = match stdout.as_mut() {
                Some(stdout) => read_frame(stdout),
                None => Err("no answer channel".into()),
            };
            let _ = answer_tx.send(answer);
        });
        let answer = answer_rx.recv_timeout(limit);
        let timed_out = answer.is_err();
        if timed_out {
            // SAFETY: the reader's process group (its own session: see
            // `start`), not yet reaped (only the waiter below reaps it);
            // its namespace's PID 1 is in it.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        let handshake = self.handshake.take();
        let scratch = self.scratch.take();
        let reap = move || {
            let status = child.wait().ok();
            if let Some(handshake) = handshake {
                let _ = handshake.join();
            }
            let _ = writer.join();
            let _ = out.join();
            let stderr = err.join().unwrap_or_default();
            drop(scratch);
            (status, stderr)
        };
        match answer {
            Ok(Ok(answer)) => {
                std::thread::spawn(reap);
                Ok(answer)
            }
            Err(_) => {
                let _ = reap();
                Err(ReadError::Timeout(limit.as_secs()))
            }
            Ok(Err(why)) => {
                // No whole answer: why, from its exit and its last word.
                let (status, stderr) = reap();
                if status.is_some_and(|s| s.success()) {
                    return Err(ReadError::Answer(why));
                }
                let last = stderr
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .map(|l| crate::util::clip(l.trim(), 300))
                    .unwrap_or_else(|| match status {
                        Some(s) => format!("it ended with {s}"),
                        None => "it could not be waited for".into(),
                    });
                Err(ReadError::Failed(last))
            }
        }
    }

    /// [`ask`] of this reader.
    pub fn ask<T: serde::de::DeserializeOwned>(
        self,
        request: Request,
        limit: Duration,
    ) -> Result<(T, Vec<u8>), ReadError> {
        let (json, binary) = self.answer(request, limit)?;
        let reply: TypedReply<T> = serde_json::from_slice(&json)
            .map_err(|e| ReadError::Answer(format!("not the answer asked for: {e}")))?;
        Ok((reply.answer, binary))
    }
}

impl Drop for Standby {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: the unused reader's own process group, not reaped.
            unsafe { libc::kill(-self.pid, libc::SIGKILL) };
            let _ = child.wait();
        }
        if let Some(handshake) = self.handshake.take() {
            let _ = handshake.join();
        }
    }
}

/// Reads one answer: magic, JSON, binary part; never allocating more than
/// what arrives, and at most [`MAX_ANSWER_JSON`] / [`MAX_ANSWER_BINARY`].
fn read_frame(input: &mut impl Read) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut magic = [0u8; 4];
    input
        .read_exact(&mut magic)
        .map_err(|_| "no answer".to_string())?;
    if &magic != MAGIC {
        return Err("not an answer".into());
    }
    let json = read_part(input, MAX_ANSWER_JSON)?;
    let binary = read_part(input, MAX_ANSWER_BINARY)?;
    Ok((json, binary))
}

/// One length-prefixed part of at most `cap` bytes.
fn read_part(input: &mut impl Read, cap: u64) -> Result<Vec<u8>, String> {
    let mut len = [0u8; 8];
    input
        .read_exact(&mut len)
        .map_err(|_| "a cut answer".to_string())?;
    let len = u64::from_le_bytes(len);
    if len > cap {
        return Err(format!("{len} bytes, more than the {cap} allowed"));
    }
    let mut part = Vec::new();
    input
        .take(len)
        .read_to_end(&mut part)
        .map_err(|e| e.to_string())?;
    if part.len() as u64 != len {
        return Err("a cut answer".into());
    }
    Ok(part)
}
