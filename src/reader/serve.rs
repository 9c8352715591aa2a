//! The reader's own side: `gisclaw __read`, started by [`super::read`].
//! It confines itself before it parses a byte of the folder, answers one
//! request on standard output and exits.
//!
//! Descriptors on entry: 0 a pipe from the host (one line: the folder and
//! limits, [`Envelope`]; then, once the reader is confined and ready, the
//! request, to its end; then replaced by `/dev/null`), 1 the answer, 2
//! errors, 3 the namespace handshake with the host (which writes the id
//! maps), 4 the folder (`O_PATH`, opened by the host). Everything else is
//! closed. A reader can so be started ahead of its request
//! ([`super::Standby`]): what it costs to start and confine is paid while
//! nothing waits for it.
//!
//! With namespaces: new user, mount, PID, IPC and network namespaces; a
//! fork makes the reader PID 1 of its own namespace, which builds the
//! minimal view (system directories, the folder read-only at
//! [`super::VIEW_ROOT`], a private `/tmp`), becomes the sandbox's user,
//! and applies rlimits, no-new-privs, no capabilities, Landlock and
//! seccomp (no sockets). Without them: the sandbox's user (as root),
//! Landlock and seccomp on the folder as the host opened it.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gisclaw_confine::{confine, isolate};
use gisclaw_protocol::{ConfinementPolicy, ConfinementReport, LayerStatus};

use super::request::{Envelope, Reply, Request};
use super::{answer_frame, MAX_REQUEST_BYTES, VIEW_ROOT};

/// The descriptor of the namespace handshake.
const SYNC_FD: i32 = 3;
/// The descriptor of the folder.
const ROOT_FD: i32 = 4;

/// The reader's address-space limit.
const MEMORY_LIMIT: u64 = 8 << 30;
/// The largest file the reader may write (its own `/tmp`).
const FILE_LIMIT: u64 = 1 << 30;
/// Processes and threads the reader may run.
const PROCESS_LIMIT: u64 = 64;

/// What answers a request about a folder (the path this process sees it
/// at): the answer as JSON and its binary part. `crate::reads::answer_here`.
pub type Handler = fn(&Path, &Request) -> (serde_json::Value, Vec<u8>);

/// Runs the reader with `handler`; the exit code says whether an answer
/// was written.
pub fn serve(handler: Handler) -> ExitCode {
    match start(handler) {
        Ok(code) => code,
        Err(why) => {
            let _ = writeln!(std::io::stderr(), "gisclaw reader: {why}");
            ExitCode::from(3)
        }
    }
}

fn start(handler: Handler) -> Result<ExitCode, String> {
    let mut line = Vec::new();
    // Through standard input's own buffer: what follows the line stays in
    // it for `read_request`.
    std::io::BufRead::read_until(
        &mut std::io::stdin().lock().take(MAX_REQUEST_BYTES),
        b'\n',
        &mut line,
    )
    .map_err(|e| format!("reading the folder's line: {e}"))?;
    let envelope: Envelope =
        serde_json::from_slice(&line).map_err(|e| format!("the folder's line: {e}"))?;
    // SAFETY: descriptors 3 and 4 were set up by the host for this process
    // alone; nothing else in it owns them.
    let sync = unsafe { UnixStream::from_raw_fd(SYNC_FD) };
    let root = unsafe { OwnedFd::from_raw_fd(ROOT_FD) };
    close_above(ROOT_FD);
    let scratch = Scratch::new(&envelope.scratch)?;
    in_own_namespaces(sync, "reader", |net| {
        work(handler, &envelope, root, net, &scratch)
    })
}

/// Enters new user, mount, PID and IPC namespaces (the host writes the id
/// maps through `sync`) and a network namespace, then runs `body` as PID 1
/// of the new PID namespace and waits for it: its exit code is this
/// process's. `body` is given whether the network namespace was entered,
/// or `None` when the kernel refused namespaces (it then runs here, in
/// this process). Refuses when a user namespace was entered but its maps
/// were not written (every id unmapped: going on would act with the host
/// user's rights). Shared by the reader and the JavaScript runtime.
pub(crate) fn in_own_namespaces(
    mut sync: UnixStream,
    what: &str,
    body: impl FnOnce(Option<bool>) -> u8,
) -> Result<ExitCode, String> {
    isolate::note_outside_ids();
    let own_user_namespace = std::fs::read_link("/proc/self/ns/user").ok();
    let entered = isolate::unshare(&mut sync);
    drop(sync);
    if let Err(why) = entered {
        if std::fs::read_link("/proc/self/ns/user").ok() != own_user_namespace {
            return Err(format!("not started: {why}"));
        }
        return Ok(ExitCode::from(body(None)));
    }
    // SAFETY: unshare with flags only; the new user namespace holds
    // CAP_SYS_ADMIN, so a network namespace of its own (loopback down).
    let net = unsafe { libc::unshare(libc::CLONE_NEWNET) } == 0;
    // SAFETY: single-threaded here; the child goes on with this code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // PID 1 of the new namespace: dies with the process that waits for
        // it (armed again once it is the sandbox's user: a change of user
        // clears it), and with its process group, which the host kills at
        // the time limit.
        // SAFETY: prctl with integer arguments.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
        let code = body(Some(net));
        let _ = std::io::stdout().flush();
        // SAFETY: leaving the forked child without running the parent's
        // exit handlers twice.
        unsafe { libc::_exit(code.into()) };
    }
    let mut status = 0;
    // SAFETY: reaping the child just forked.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    Ok(
        match libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)) {
            Some(0) => ExitCode::SUCCESS,
            Some(code) => ExitCode::from(code as u8),
            None => {
                let _ = writeln!(
                    std::io::stderr(),
                    "gisclaw {what}: ended by signal {}",
                    libc::WTERMSIG(status)
                );
                ExitCode::from(5)
            }
        },
    )
}

/// The request: the rest of standard input, which then becomes
/// `/dev/null`.
fn read_request() -> Result<Request, String> {
    let mut raw = Vec::new();
    std::io::stdin()
        .take(MAX_REQUEST_BYTES)
        .read_to_end(&mut raw)
        .map_err(|e| format!("reading the request: {e}"))?;
    no_stdin()?;
    serde_json::from_slice(&raw).map_err(|e| format!("the request: {e}"))
}

/// Standard input becomes `/dev/null`: nothing the reader opens can read
/// what the host sent, let alone a terminal.
fn no_stdin() -> Result<(), String> {
    let null = std::fs::File::open("/dev/null").map_err(|e| format!("/dev/null: {e}"))?;
    // SAFETY: dup2 onto descriptor 0 with a descriptor this process owns.
    if unsafe { libc::dup2(null.as_raw_fd(), 0) } < 0 {
        return Err(format!(
            "standard input: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Closes every descriptor above `last`.
pub(crate) fn close_above(last: i32) {
    // SAFETY: close_range with integer arguments; no descriptor above
    // `last` is owned by anything in this process at start.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, last + 1, u32::MAX, 0) };
    if rc != 0 {
        for fd in (last + 1)..1024 {
            // SAFETY: as above, one descriptor at a time.
            unsafe { libc::close(fd) };
        }
    }
}

/// The confined process's private folder on the host, made (0700) and
/// removed by the host whatever becomes of it: the stage its view is
/// built on and its `/tmp`.
pub(crate) struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// Makes `stage/` and a world-writable `tmp/` in `dir`.
    pub(crate) fn new(dir: &Path) -> Result<Scratch, String> {
        for sub in ["stage", "tmp"] {
            std::fs::create_dir(dir.join(sub)).map_err(|e| format!("the reader's folder: {e}"))?;
        }
        // The sandbox's user writes its temporary files there (bound at
        // `/tmp` in the view); the folder above stays the host user's own.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.join("tmp"), std::fs::Permissions::from_mode(0o777))
            .map_err(|e| format!("the reader's folder: {e}"))?;
        Ok(Scratch {
            dir: dir.to_path_buf(),
        })
    }

    /// The empty folder the view is built on.
    pub(crate) fn stage(&self) -> PathBuf {
        self.dir.join("stage")
    }

    /// The folder bound at `/tmp`.
    pub(crate) fn tmp(&self) -> PathBuf {
        self.dir.join("tmp")
    }
}

/// Confines this process, reads, and writes the answer; the exit code
/// (0 when the answer was written). `net` is whether a network namespace
/// was entered (`None`: no namespaces at all).
fn work(
    handler: Handler,
    envelope: &Envelope,
    root: OwnedFd,
    net: Option<bool>,
    scratch: &Scratch,
) -> u8 {
    let confined = match confine_here(envelope, root, net, scratch) {
        Ok(confined) => confined,
        Err(why) => {
            let _ = writeln!(std::io::stderr(), "gisclaw reader: {why}");
            return 6;
        }
    };
    let (confinement, folder, _held) = confined;
    crate::gdal_io::harden_gdal();
    // Confined and ready: now the request.
    let request = match read_request() {
        Ok(request) => request,
        Err(why) => {
            let _ = writeln!(std::io::stderr(), "gisclaw reader: {why}");
            return 9;
        }
    };
    let (answer, binary) = handler(&folder, &request);
    let reply = Reply {
        confinement,
        answer,
    };
    let frame = match answer_frame(&reply, &binary) {
        Ok(frame) => frame,
        Err(why) => {
            let _ = writeln!(std::io::stderr(), "gisclaw reader: {why}");
            return 7;
        }
    };
    let mut out = std::io::stdout().lock();
    if out.write_all(&frame).and_then(|()| out.flush()).is_err() {
        return 8;
    }
    0
}

/// Applies every layer; returns their report, the folder's path as this
/// process now sees it, and the host's descriptor of it when that path
/// goes through it (without namespaces). With namespaces the descriptor
/// is closed once the view is built: it names the host's mount namespace,
/// a way out of the view.
fn confine_here(
    envelope: &Envelope,
    root: OwnedFd,
    net: Option<bool>,
    scratch: &Scratch,
) -> Result<(ConfinementReport, PathBuf, Option<OwnedFd>), String> {
    let (namespaces, folder, tmp, held) = match net {
        Some(net) => {
            let here = same_folder_here(&envelope.root, &root)?;
            drop(root);
            isolate::build_view(&isolate::ViewSpec {
                stage: &scratch.stage(),
                read_only: Vec::new(),
                writable: Vec::new(),
                read_only_fds: vec![(here, PathBuf::from(VIEW_ROOT))],
                tmp: &scratch.tmp(),
            })?;
            // The change of user in the view cleared it: armed again.
            // SAFETY: prctl with integer arguments.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
            let detail = if net {
                "user, mount, PID, IPC and network namespaces; the folder read-only at its own root"
            } else {
                "user, mount, PID and IPC namespaces (no network namespace); the folder read-only"
            };
            (
                LayerStatus::Enforced(detail.into()),
                PathBuf::from(VIEW_ROOT),
                PathBuf::from("/tmp"),
                None,
            )
        }
        None => {
            sandbox_user_without_namespaces()?;
            (
                LayerStatus::Unsupported("the kernel refused new namespaces".into()),
                // The folder as the host opened it: Landlock's rule is on
                // that very folder, whatever its path names later.
                PathBuf::from(format!("/proc/self/fd/{}", root.as_raw_fd())),
                scratch.tmp(),
                Some(root),
            )
        }
    };
    let namespaced = namespaces.is_active();
    std::env::set_current_dir(if namespaced { Path::new("/") } else { &tmp })
        .map_err(|e| format!("chdir: {e}"))?;
    let policy = ConfinementPolicy {
        write_roots: vec![tmp.clone()],
        allow_network: false,
        memory_limit_bytes: Some(MEMORY_LIMIT),
        file_size_limit_bytes: Some(FILE_LIMIT),
        read_roots: vec![folder.clone()],
        namespaces: true,
        process_limit: Some(PROCESS_LIMIT),
        confine: true,
    };
    let mut report = confine::apply(&policy, namespaces, std::slice::from_ref(&folder));
    let cpu = libc::rlimit {
        rlim_cur: envelope.cpu_seconds,
        rlim_max: envelope.cpu_seconds + 2,
    };
    // SAFETY: cpu is a valid rlimit for the call.
    if unsafe { libc::setrlimit(libc::RLIMIT_CPU, &cpu) } == 0 {
        if let LayerStatus::Enforced(detail) = &mut report.rlimits {
            detail.push_str(&format!(", CPU ≤ {} s", envelope.cpu_seconds));
        }
    }
    std::env::set_var("TMPDIR", &tmp);
    // Fail closed: a reader that could see more than its folder, or reach
    // the network, does not parse.
    let seen = report.namespaces.is_active() || report.filesystem.is_active();
    let cut_off = net == Some(true) || report.network.is_active();
    if !seen || !cut_off {
        return Err(format!(
            "not read: the reader could not be confined here ({})",
            report.warnings().join("; ")
        ));
    }
    Ok((report, folder, held))
}

/// The folder the host opened, opened again in this mount namespace (a
/// bind mount cannot take a mount of another namespace): by its path,
/// never following a link at its end, and accepted only when it is the
/// very folder the host opened (same device and inode).
fn same_folder_here(path: &Path, held: &OwnedFd) -> Result<OwnedFd, String> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| "the folder's name has a NUL".to_string())?;
    // SAFETY: c is NUL-terminated; the descriptor is owned below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(format!(
            "the folder, opened again: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: fd was just opened and is owned by no one else.
    let here = unsafe { OwnedFd::from_raw_fd(fd) };
    let identity = |fd: &OwnedFd| {
        // SAFETY: st is a valid out-pointer for fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        (unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0).then_some((st.st_dev, st.st_ino))
    };
    match (identity(held), identity(&here)) {
        (Some(a), Some(b)) if a == b => Ok(here),
        _ => Err("the folder was swapped after it was opened; not read".into()),
    }
}

/// As root without namespaces: become `nobody` before reading, so that
/// nothing only root could read is read.
pub(crate) fn sandbox_user_without_namespaces() -> Result<(), String> {
    // SAFETY: credential calls with integer arguments.
    unsafe {
        if libc::geteuid() != 0 {
            return Ok(());
        }
        let id = isolate::ROOT_SANDBOX_ID;
        if libc::setgroups(0, std::ptr::null()) != 0
            || libc::setresgid(id, id, id) != 0
            || libc::setresuid(id, id, id) != 0
        {
            return Err(format!(
                "becoming the sandbox's user: {}",
                std::io::Error::last_os_error()
            ));
        }
        // Still able to open its own /proc/self/fd (the folder's path).
        libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
    }
    Ok(())
}
