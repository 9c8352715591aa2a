//! Namespaces for one session's sandbox: entering new user, mount, PID and
//! IPC namespaces, mapping the user, building the minimal filesystem view,
//! and dropping capabilities. The outer layer of confinement; Landlock,
//! seccomp and rlimits (`confine`) stay in force inside it.
//!
//! The sequence (bubblewrap's, in-process): the session child `S` unshares
//! its namespaces and waits while its parent, the zygote, writes its uid and
//! gid maps ([`unshare`] / [`write_id_maps`]); `S` forks the monitor, which
//! is PID 1 of the new PID namespace and builds the view ([`build_view`]):
//! a tmpfs root holding read-only binds of the system directories, the
//! Python environment and the data, read-write binds of the work dir and the
//! outputs, the session's tmp at `/tmp`, a few device nodes, and a fresh
//! `/proc` that shows only the sandbox's processes. The host's home, config,
//! `/run`, `/var`, `/tmp` and every other process are not in it.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The unprivileged uid and gid a sandbox of a root gisclaw runs as
/// outside its namespace (`nobody`/`nogroup`): root's processes are exempt
/// from RLIMIT_NPROC, and untrusted code should not hold root's files.
pub const ROOT_SANDBOX_ID: u32 = 65534;

/// Top-level system directories bound read-only into the view when present
/// (symlinks, as on merged-/usr systems, are recreated as symlinks).
const SYSTEM_DIRS: &[&str] = &[
    "usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "opt", "nix", "gnu",
];
/// Device nodes bound from the host's `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];
/// Parts of `/proc` that stay read-only even inside the namespace.
const PROC_READ_ONLY: &[&str] = &["sys", "sysrq-trigger", "irq", "bus", "fs"];

fn os_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

fn c_path(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{} contains a NUL byte", path.display()))
}

/// Whether `unshare` of a new user namespace works for this process, tried
/// in a throw-away child. `Err` says why not.
pub fn probe() -> Result<(), String> {
    // SAFETY: the child only calls async-signal-safe functions and _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(os_error("fork"));
    }
    if pid == 0 {
        let flags =
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
        // SAFETY: unshare takes flags only; _exit never returns.
        unsafe {
            let code = if libc::unshare(flags) == 0 {
                0
            } else {
                *libc::__errno_location()
            };
            libc::_exit(code.clamp(0, 255));
        }
    }
    let mut status = 0;
    // SAFETY: reaping the child just forked.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    match libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)) {
        Some(0) => Ok(()),
        Some(errno) => Err(format!(
            "the kernel refuses new user namespaces ({}){}",
            std::io::Error::from_raw_os_error(errno),
            if errno == libc::EPERM || errno == libc::ENOSPC {
                " — check user.max_user_namespaces, kernel.unprivileged_userns_clone or an AppArmor userns restriction"
            } else {
                ""
            }
        )),
        None => Err("the namespace probe did not finish".into()),
    }
}

/// In the session child: enters new user, mount, PID and IPC namespaces and
/// waits on `sync` until the parent has written the id maps.
pub fn unshare(sync: &mut UnixStream) -> Result<(), String> {
    let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
    // SAFETY: unshare takes flags only.
    let entered = unsafe { libc::unshare(flags) } == 0;
    let report = if entered { b'u' } else { b'x' };
    let failure = (!entered).then(|| os_error("unshare(user, mount, PID, IPC)"));
    sync.write_all(&[report])
        .map_err(|e| format!("namespace handshake: {e}"))?;
    if let Some(why) = failure {
        return Err(why);
    }
    let mut answer = [0u8; 1];
    sync.read_exact(&mut answer)
        .map_err(|e| format!("namespace handshake: {e}"))?;
    if answer[0] != b'm' {
        return Err("the zygote could not write the namespace's id maps".into());
    }
    Ok(())
}

/// Takes the sandbox's user: after [`unshare`] the process still acts as
/// the zygote's user on files (it can reach the venv under a private home
/// to bind it); after this it is the namespace's root, which is gisclaw's
/// own user outside, or `nobody` when gisclaw runs as root.
pub fn become_sandbox_user() -> Result<(), String> {
    // SAFETY: plain credential calls with integer arguments.
    unsafe {
        let (uid, gid) = inside_ids();
        // Root's supplementary groups would follow the process in; the
        // unprivileged case keeps its own (setgroups is denied there).
        if OUTSIDE_ROOT.load(Ordering::Relaxed) && libc::setgroups(0, std::ptr::null()) != 0 {
            return Err(os_error("dropping supplementary groups"));
        }
        if libc::setresgid(gid, gid, gid) != 0 {
            return Err(os_error("setresgid in the namespace"));
        }
        if libc::setresuid(uid, uid, uid) != 0 {
            return Err(os_error("setresuid in the namespace"));
        }
    }
    Ok(())
}

/// Set in the zygote when it runs as root; read in its forked children,
/// where every id reads as the overflow id until the maps exist.
static OUTSIDE_ROOT: AtomicBool = AtomicBool::new(false);

/// The uid and gid the sandbox has inside its namespace: 0 when gisclaw
/// runs as root (mapped to [`ROOT_SANDBOX_ID`] outside), the caller's own
/// otherwise.
fn inside_ids() -> (u32, u32) {
    // SAFETY: getters without arguments.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    if OUTSIDE_ROOT.load(Ordering::Relaxed) {
        (0, 0)
    } else {
        (uid, gid)
    }
}

/// Remembers, in the zygote, whether it runs as root (see [`inside_ids`]).
pub fn note_outside_ids() {
    // SAFETY: geteuid has no preconditions.
    OUTSIDE_ROOT.store(unsafe { libc::geteuid() } == 0, Ordering::Relaxed);
}

/// In the zygote: waits on `sync` for child `pid` to unshare, writes its
/// uid and gid maps, and lets it go on. `Ok(false)` when the child could not
/// unshare (it falls back by itself).
pub fn write_id_maps(pid: i32, sync: &mut UnixStream) -> Result<bool, String> {
    let mut report = [0u8; 1];
    sync.read_exact(&mut report)
        .map_err(|e| format!("namespace handshake: {e}"))?;
    if report[0] != b'u' {
        return Ok(false);
    }
    // SAFETY: getters without arguments.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let proc = PathBuf::from(format!("/proc/{pid}"));
    let written = if uid == 0 {
        std::fs::write(proc.join("uid_map"), format!("0 {ROOT_SANDBOX_ID} 1\n"))
            .and_then(|()| std::fs::write(proc.join("gid_map"), format!("0 {ROOT_SANDBOX_ID} 1\n")))
    } else {
        std::fs::write(proc.join("setgroups"), "deny")
            .and_then(|()| std::fs::write(proc.join("uid_map"), format!("{uid} {uid} 1\n")))
            .and_then(|()| std::fs::write(proc.join("gid_map"), format!("{gid} {gid} 1\n")))
    };
    let answer = if written.is_ok() { b'm' } else { b'x' };
    sync.write_all(&[answer])
        .map_err(|e| format!("namespace handshake: {e}"))?;
    written
        .map(|()| true)
        .map_err(|e| format!("writing the id maps of {pid}: {e}"))
}

/// One bind mount of the view.
struct Bind {
    /// The host path (resolved, no symlinks).
    source: PathBuf,
    /// Where it appears inside the view.
    target: PathBuf,
    writable: bool,
}

/// What the view holds besides the system directories.
pub struct ViewSpec<'a> {
    /// The empty directory the new root is built on.
    pub stage: &'a Path,
    /// Host directories bound read-only at their own paths.
    pub read_only: Vec<PathBuf>,
    /// Host directories bound read-write at their own paths.
    pub writable: Vec<PathBuf>,
    /// Folders already opened (`O_PATH`) by whoever chose them, bound
    /// read-only at the given paths: no path is resolved again, so a
    /// folder swapped for a link after it was opened changes nothing.
    pub read_only_fds: Vec<(OwnedFd, PathBuf)>,
    /// The session's tmp, bound read-write at `/tmp`.
    pub tmp: &'a Path,
}

/// `mount(2)` with optional source, fstype and data.
fn mount(
    source: Option<&Path>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<(), String> {
    let source_c = source.map(c_path).transpose()?;
    let target_c = c_path(target)?;
    let c_text = |text: &str| CString::new(text).map_err(|e| format!("{text:?}: {e}"));
    let fstype_c = fstype.map(c_text).transpose()?;
    let data_c = data.map(c_text).transpose()?;
    // SAFETY: every pointer is a NUL-terminated string alive for the call, or null.
    let rc = unsafe {
        libc::mount(
            source_c.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            target_c.as_ptr(),
            fstype_c.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            flags,
            data_c
                .as_ref()
                .map_or(std::ptr::null(), |s| s.as_ptr().cast()),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(os_error(&format!("mount {}", target.display())))
    }
}

/// The mount flags that a bind mount's remount must keep (the kernel locks
/// them on mounts that came from a more privileged namespace).
fn locked_flags(target: &Path) -> libc::c_ulong {
    let Ok(path) = c_path(target) else { return 0 };
    // SAFETY: st is a valid out-pointer for statvfs.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    pairs
        .iter()
        .filter(|(st_flag, _)| st.f_flag & st_flag != 0)
        .fold(0, |acc, (_, ms)| acc | ms)
}

/// Bind-mounts `source` on `target` (non-recursively), read-only unless `writable`.
fn bind(source: &Path, target: &Path, writable: bool) -> Result<(), String> {
    mount(Some(source), target, None, libc::MS_BIND, None)?;
    let mut flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_NOSUID | locked_flags(target);
    if !writable {
        flags |= libc::MS_RDONLY;
    }
    mount(None, target, None, flags, None)
}

/// Creates `path` and its parents inside the stage (mode 0755).
fn make_dirs(path: &Path) -> Result<(), String> {
    std::fs::create_dir_all(path)
        .map_err(|e| format!("creating {} in the view: {e}", path.display()))
}

/// `stage` joined with an absolute `path`.
fn inside(stage: &Path, path: &Path) -> PathBuf {
    stage.join(path.strip_prefix("/").unwrap_or(path))
}

/// The binds of the view in mount order: parents before children, so a
/// read-only data folder inside the writable work dir stays read-only.
fn plan_binds(spec: &ViewSpec<'_>) -> Vec<Bind> {
    let mut binds: Vec<Bind> = Vec::new();
    let mut add = |path: &Path, writable: bool| {
        let Ok(source) = path.canonicalize() else {
            return;
        };
        if !source.is_dir() {
            return;
        }
        binds.retain(|b| b.target != source);
        binds.push(Bind {
            target: source.clone(),
            source,
            writable,
        });
    };
    for dir in &spec.read_only {
        add(dir, false);
    }
    for dir in &spec.writable {
        add(dir, true);
    }
    binds.sort_by_key(|b| b.target.components().count());
    binds
}

/// A bind mount's source, opened (`O_PATH`) while the process can still
/// reach it as the zygote's user; mounted through `/proc/self/fd`.
struct Source(OwnedFd);

impl Source {
    fn open(path: &Path) -> Result<Source, String> {
        let c = c_path(path)?;
        // SAFETY: c is NUL-terminated; the returned fd is owned below.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY,
            )
        };
        if fd < 0 {
            return Err(os_error(&format!("opening {}", path.display())));
        }
        // SAFETY: fd was just opened and is owned by no one else.
        Ok(Source(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn path(&self) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", self.0.as_raw_fd()))
    }
}

/// In the monitor (PID 1 of the new namespaces): opens every source as the
/// zygote's user, becomes the sandbox's user ([`become_sandbox_user`]),
/// builds the view on the stage and makes it the root. After this, only
/// what the view holds exists.
pub fn build_view(spec: &ViewSpec<'_>) -> Result<(), String> {
    let stage = spec.stage;
    let mut links: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut binds: Vec<(Source, PathBuf, bool)> = Vec::new();
    for name in SYSTEM_DIRS {
        let host = Path::new("/").join(name);
        let Ok(meta) = std::fs::symlink_metadata(&host) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            let link = std::fs::read_link(&host).map_err(|e| format!("{}: {e}", host.display()))?;
            links.push((stage.join(name), link));
        } else if meta.is_dir() {
            binds.push((Source::open(&host)?, stage.join(name), false));
        }
    }
    // Of /sys only the CPU topology (what the C library and BLAS read to
    // count CPUs); all of /sys cannot be bound without its submounts, which
    // include writable cgroups.
    let cpus = Path::new("/sys/devices/system/cpu");
    if cpus.is_dir() {
        binds.push((Source::open(cpus)?, inside(stage, cpus), false));
    }
    binds.push((Source::open(spec.tmp)?, stage.join("tmp"), true));
    for b in plan_binds(spec) {
        binds.push((
            Source::open(&b.source)?,
            inside(stage, &b.target),
            b.writable,
        ));
    }
    for (fd, target) in &spec.read_only_fds {
        let held = fd
            .try_clone()
            .map_err(|e| format!("holding {}: {e}", target.display()))?;
        binds.push((Source(held), inside(stage, target), false));
    }
    become_sandbox_user()?;
    mount(
        None,
        Path::new("/"),
        None,
        libc::MS_REC | libc::MS_PRIVATE,
        None,
    )?;
    mount(
        Some(Path::new("tmpfs")),
        stage,
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some("mode=0755,size=16m"),
    )?;
    for (target, link) in &links {
        symlink(link, target).map_err(|e| format!("{}: {e}", target.display()))?;
    }
    build_dev(stage)?;
    for (source, target, writable) in &binds {
        make_dirs(target)?;
        bind(&source.path(), target, *writable)?;
    }
    let proc = stage.join("proc");
    make_dirs(&proc)?;
    mount(
        Some(Path::new("proc")),
        &proc,
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
    )?;
    for name in PROC_READ_ONLY {
        let part = proc.join(name);
        if part.exists() {
            bind(&part, &part, false)?;
        }
    }
    // The root itself: read-only, so a cell cannot create files at `/x`.
    mount(
        None,
        stage,
        None,
        libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
        None,
    )?;
    pivot_into(stage)
}

/// `/dev` with a few device nodes (bound from the host), the usual
/// symlinks, and a small private `/dev/shm`.
fn build_dev(stage: &Path) -> Result<(), String> {
    let dev = stage.join("dev");
    make_dirs(&dev)?;
    mount(
        Some(Path::new("tmpfs")),
        &dev,
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NOEXEC,
        Some("mode=0755,size=64k"),
    )?;
    for name in DEVICES {
        let host = Path::new("/dev").join(name);
        if !host.exists() {
            continue;
        }
        let node = dev.join(name);
        std::fs::File::create(&node).map_err(|e| format!("{}: {e}", node.display()))?;
        mount(Some(&host), &node, None, libc::MS_BIND, None)?;
    }
    for (name, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        symlink(target, dev.join(name)).map_err(|e| format!("/dev/{name}: {e}"))?;
    }
    let shm = dev.join("shm");
    make_dirs(&shm)?;
    mount(
        Some(Path::new("tmpfs")),
        &shm,
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        Some("mode=1777,size=64m"),
    )?;
    mount(
        None,
        &dev,
        None,
        libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NOEXEC,
        None,
    )
}

/// Makes `stage` the root and detaches the old one.
fn pivot_into(stage: &Path) -> Result<(), String> {
    let stage_c = c_path(stage)?;
    // SAFETY: plain path syscalls with NUL-terminated strings.
    unsafe {
        if libc::chdir(stage_c.as_ptr()) != 0 {
            return Err(os_error("chdir to the new root"));
        }
        let dot = c".".as_ptr();
        if libc::syscall(libc::SYS_pivot_root, dot, dot) != 0 {
            return Err(os_error("pivot_root"));
        }
        if libc::umount2(dot, libc::MNT_DETACH) != 0 {
            return Err(os_error("detaching the old root"));
        }
        if libc::chdir(c"/".as_ptr()) != 0 {
            return Err(os_error("chdir /"));
        }
    }
    Ok(())
}

/// Drops every capability: the bounding and ambient sets, then the
/// effective, permitted and inheritable sets. Returns what was done: an
/// unprivileged process outside a user namespace cannot empty its bounding
/// set, which no-new-privs makes harmless (no execve gains anything).
pub fn drop_capabilities() -> Result<String, String> {
    // SAFETY: prctl and capset with integer arguments and a valid header/data.
    unsafe {
        let last = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|s| s.trim().parse::<libc::c_ulong>().ok())
            .unwrap_or(40);
        let mut bounding_kept = false;
        for cap in 0..=last {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0
                && *libc::__errno_location() == libc::EPERM
            {
                bounding_kept = true;
            }
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
        let mut header = Header {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) != 0 {
            return Err(os_error("capset"));
        }
        Ok(if bounding_kept {
            "no capabilities held; bounding set kept (no CAP_SETPCAP), no-new-privs blocks gaining any".into()
        } else {
            "all capabilities dropped, bounding set empty".into()
        })
    }
}
