//! The per-user sandbox service: a zygote that outlives the gisclaw command
//! that started it, so that later commands fork their sessions from an
//! interpreter that has already imported the GIS stack.
//!
//! `gisclaw-worker service --socket PATH --idle-seconds N …` forks at once:
//! the first process waits until the service is ready (or has failed, or
//! found another one serving) and exits with that answer, so the gisclaw
//! that ran it needs only its exit status; the second process leaves the
//! caller's session (`setsid`), takes `PATH.lock` (one service per socket),
//! binds `PATH` (mode 0600, in a 0700 folder gisclaw made), imports the
//! stack, and serves every connection as [`crate::zygote::serve`] serves
//! fd 0. A connection from another user (`SO_PEERCRED`) is closed unread.
//! It exits after `N` seconds with no client and no request, on `Shutdown`,
//! or when its socket file is gone. Its own messages go to `PATH.log`;
//! sessions write nothing there.
//!
//! The settings it was started for (gisclaw's version, the worker, the
//! venv, the environment) arrive on standard input, one per line, and are
//! shown by `Status`; gisclaw names the socket after them, so a command with
//! other settings gets another service.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use gisclaw_protocol::{
    read_frame, write_frame, ControlRequest, ControlResponse, FrameError, ServiceStatus,
};

use crate::interpreter::Runtime;
use crate::zygote::{self, ChildFds};

/// How often the service wakes to reap children and check its idleness.
const TICK: Duration = Duration::from_millis(250);
/// How long a new service waits for an exiting one to release the lock.
const LOCK_PATIENCE: Duration = Duration::from_secs(5);
/// Longest a connected client may take to finish a request it started.
const REQUEST_PATIENCE: Duration = Duration::from_secs(30);
/// How long a new service waits for its first client however short its
/// idle timeout: the command that started it connects once told it is
/// ready, which on a loaded machine took over a second (a 1 s timeout
/// then ended the service before its first client came).
const FIRST_CLIENT_PATIENCE: Duration = Duration::from_secs(30);

/// The service's command line.
pub struct ServiceArgs {
    /// The socket to serve on.
    pub socket: PathBuf,
    /// Seconds without clients after which it exits.
    pub idle_seconds: u64,
}

/// What the detached process holds before the interpreter starts.
struct Detached {
    /// The lock that makes this the one service of its socket.
    lock: std::fs::File,
    listener: UnixListener,
}

/// Runs the service: returns in the launching process with its answer;
/// the detached process never returns from here but by exiting.
pub fn run(args: ServiceArgs, start: impl FnOnce() -> Result<Runtime, String>) -> ExitCode {
    let mut settings = String::new();
    let _ = std::io::stdin().read_to_string(&mut settings);
    let settings: Vec<String> = settings.lines().map(str::to_string).collect();
    let (read_end, write_end) = match pipe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("gisclaw-worker: a pipe for the service's start: {e}");
            return ExitCode::from(3);
        }
    };
    // SAFETY: nothing but this thread runs yet (no interpreter, no other
    // thread), so the child may go on with the whole process.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        eprintln!("gisclaw-worker: fork: {}", std::io::Error::last_os_error());
        return ExitCode::from(3);
    }
    if pid > 0 {
        drop(write_end);
        return launcher_answer(read_end, &args.socket);
    }
    drop(read_end);
    let mut ready = write_end;
    let detached = match detach(&args) {
        Ok(Some(d)) => d,
        Ok(None) => {
            let _ = ready.write_all(b"busy\n");
            std::process::exit(0)
        }
        Err(why) => {
            let _ = writeln!(ready, "error: {why}");
            std::process::exit(3)
        }
    };
    let runtime = match start() {
        Ok(rt) => rt,
        Err(why) => {
            let _ = writeln!(ready, "error: {why}");
            let _ = std::fs::remove_file(&args.socket);
            std::process::exit(3)
        }
    };
    let info = match runtime.worker_info() {
        Ok(info) => info,
        Err(why) => {
            let _ = writeln!(ready, "error: {why}");
            let _ = std::fs::remove_file(&args.socket);
            std::process::exit(3)
        }
    };
    // SAFETY: PR_SET_CHILD_SUBREAPER takes integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    crate::isolate::note_outside_ids();
    runtime.freeze();
    let _ = ready.write_all(b"ready\n");
    drop(ready);
    let service = Service {
        runtime,
        ready: ControlResponse::Ready {
            info: Box::new(info),
        },
        listener: detached.listener,
        lock: detached.lock,
        socket: args.socket,
        idle: Duration::from_secs(args.idle_seconds),
        settings,
        started: Instant::now(),
        forked: 0,
    };
    service.serve();
    std::process::exit(0)
}

/// In the launching process: waits for the service's word and exits with it.
fn launcher_answer(read_end: std::fs::File, socket: &Path) -> ExitCode {
    let mut answer = String::new();
    let _ = (&read_end).read_to_string(&mut answer);
    let answer = answer.trim();
    if answer == "ready" || answer == "busy" {
        return ExitCode::SUCCESS;
    }
    let why = answer.strip_prefix("error: ").unwrap_or(answer);
    if why.is_empty() {
        eprintln!(
            "gisclaw-worker: the sandbox service stopped while starting (its log: {}.log)",
            socket.display()
        );
    } else {
        eprintln!("gisclaw-worker: {why}");
    }
    ExitCode::from(3)
}

/// Leaves the caller's session, takes the lock, binds the socket and sends
/// the standard streams to the log. `None` when another service holds the
/// lock (it serves the socket).
fn detach(args: &ServiceArgs) -> Result<Option<Detached>, String> {
    // SAFETY: setsid takes no arguments; the forked child is not a group leader.
    unsafe { libc::setsid() };
    let lock_path = with_suffix(&args.socket, ".lock");
    let lock =
        open_private(&lock_path, false).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    let deadline = Instant::now() + LOCK_PATIENCE;
    loop {
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            break;
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // Ours now: a socket file left there is a dead service's.
    let _ = std::fs::remove_file(&args.socket);
    let listener =
        UnixListener::bind(&args.socket).map_err(|e| format!("{}: {e}", args.socket.display()))?;
    std::fs::set_permissions(&args.socket, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("{}: {e}", args.socket.display()))?;
    // Hold no command's folder (it may be removed or unmounted later).
    let _ = std::env::set_current_dir("/");
    let log_path = with_suffix(&args.socket, ".log");
    let log = open_private(&log_path, true).map_err(|e| format!("{}: {e}", log_path.display()))?;
    // SAFETY: dup2 on descriptors we own; from here our messages go to the log.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::close(null);
        }
        libc::dup2(log.as_raw_fd(), 1);
        libc::dup2(log.as_raw_fd(), 2);
    }
    eprintln!(
        "gisclaw-worker: sandbox service {} (pid {}) starting",
        args.socket.display(),
        std::process::id()
    );
    Ok(Some(Detached { lock, listener }))
}

/// Opens (creating, mode 0600) a file only its owner reads.
fn open_private(path: &Path, truncate: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(truncate)
        .mode(0o600)
        .open(path)
}

/// `path` with `suffix` appended to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// A pipe (read end, write end), both close-on-exec.
fn pipe() -> std::io::Result<(std::fs::File, std::fs::File)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here.
    Ok(unsafe {
        (
            std::fs::File::from(OwnedFd::from_raw_fd(fds[0])),
            std::fs::File::from(OwnedFd::from_raw_fd(fds[1])),
        )
    })
}

/// The uid of the process at the other end of `stream`.
fn peer_uid(stream: &UnixStream) -> Option<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: cred and len are valid out-pointers of the sizes given.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (rc == 0).then_some(cred.uid)
}

/// The running service.
struct Service {
    runtime: Runtime,
    ready: ControlResponse,
    listener: UnixListener,
    lock: std::fs::File,
    socket: PathBuf,
    idle: Duration,
    settings: Vec<String>,
    started: Instant,
    forked: u64,
}

impl Service {
    /// Accepts clients and serves their requests until idle, stopped, or
    /// its socket file is gone.
    fn serve(mut self) {
        let own_uid = unsafe { libc::geteuid() };
        let mut clients: Vec<UnixStream> = Vec::new();
        let mut last_active = Instant::now();
        let mut served = false;
        let socket_inode = inode(&self.socket);
        loop {
            zygote::reap_ready();
            let patience = if served {
                self.idle
            } else {
                self.idle.max(FIRST_CLIENT_PATIENCE)
            };
            if clients.is_empty() && last_active.elapsed() >= patience {
                eprintln!("gisclaw-worker: idle for {:?}: exiting", self.idle);
                break;
            }
            if inode(&self.socket) != socket_inode {
                eprintln!("gisclaw-worker: the socket file is gone: exiting");
                break;
            }
            let mut polled: Vec<libc::pollfd> = std::iter::once(self.listener.as_raw_fd())
                .chain(clients.iter().map(AsRawFd::as_raw_fd))
                .map(|fd| libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect();
            // SAFETY: polled is a valid array of its length.
            let n = unsafe {
                libc::poll(
                    polled.as_mut_ptr(),
                    polled.len() as libc::nfds_t,
                    TICK.as_millis() as libc::c_int,
                )
            };
            if n <= 0 {
                continue;
            }
            if polled[0].revents & libc::POLLIN != 0 {
                if let Ok((stream, _)) = self.listener.accept() {
                    match peer_uid(&stream) {
                        Some(uid) if uid == own_uid => {
                            let _ = stream.set_read_timeout(Some(REQUEST_PATIENCE));
                            if write_frame(&mut &stream, &self.ready).is_ok() {
                                clients.push(stream);
                                served = true;
                            }
                        }
                        other => eprintln!(
                            "gisclaw-worker: refused a connection from uid {}",
                            other.map_or_else(|| "unknown".into(), |u| u.to_string())
                        ),
                    }
                    last_active = Instant::now();
                }
            }
            let mut gone = Vec::new();
            let mut stop = false;
            for (i, p) in polled.iter().enumerate().skip(1) {
                if p.revents == 0 {
                    continue;
                }
                let client = i - 1;
                last_active = Instant::now();
                match self.answer(&clients, client) {
                    Answer::Served => {}
                    Answer::Gone => gone.push(client),
                    Answer::Stop => {
                        stop = true;
                        break;
                    }
                }
            }
            if stop {
                eprintln!("gisclaw-worker: stopped on request");
                break;
            }
            for i in gone.into_iter().rev() {
                clients.remove(i);
            }
        }
        if inode(&self.socket) == socket_inode {
            let _ = std::fs::remove_file(&self.socket);
        }
        zygote::reap_ready();
        drop(self.lock);
    }

    /// Reads and carries out one request of client `i`.
    fn answer(&mut self, clients: &[UnixStream], i: usize) -> Answer {
        let stream = &clients[i];
        let request: ControlRequest = match read_frame(&mut &*stream) {
            Ok(r) => r,
            Err(FrameError::Closed) => return Answer::Gone,
            Err(err) => {
                eprintln!("gisclaw-worker: a client's request: {err}");
                return Answer::Gone;
            }
        };
        let response = match request {
            ControlRequest::Status => ControlResponse::Status {
                status: Box::new(self.status(clients.len())),
            },
            ControlRequest::Shutdown => {
                let _ = write_frame(
                    &mut &*stream,
                    &ControlResponse::Status {
                        status: Box::new(self.status(clients.len())),
                    },
                );
                return Answer::Stop;
            }
            spawn => {
                let child_fds = ChildFds {
                    close: std::iter::once(self.listener.as_raw_fd())
                        .chain(std::iter::once(self.lock.as_raw_fd()))
                        .chain(clients.iter().map(AsRawFd::as_raw_fd))
                        .collect::<Vec<RawFd>>(),
                    quiet: true,
                };
                let Some(response) = zygote::handle(&self.runtime, stream, spawn, &child_fds)
                else {
                    return Answer::Stop;
                };
                if matches!(response, ControlResponse::Spawned { .. }) {
                    self.forked += 1;
                }
                response
            }
        };
        if write_frame(&mut &*stream, &response).is_err() {
            return Answer::Gone;
        }
        Answer::Served
    }

    fn status(&self, clients: usize) -> ServiceStatus {
        ServiceStatus {
            pid: std::process::id() as i32,
            uptime_seconds: self.started.elapsed().as_secs_f64(),
            idle_timeout_seconds: self.idle.as_secs_f64(),
            clients,
            sessions_forked: self.forked,
            settings: self.settings.clone(),
        }
    }
}

/// What became of a client's request.
enum Answer {
    Served,
    Gone,
    Stop,
}

/// The inode of `path` (`None` when it is gone).
fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).ok().map(|m| m.ino())
}
