//! Reading what a cell left behind as the cell itself could, never more.
//!
//! gisclaw runs outside the sandbox, often as root, and reads, lists and
//! embeds files that a cell controls: the outputs it wrote, the figures a
//! notebook shows, the links in a work or data folder. Every such read goes
//! through this module:
//!
//! - a path is opened relative to a directory's descriptor with
//!   `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` (where the kernel has
//!   no openat2, component by component with `O_NOFOLLOW`), so no link and no
//!   `..` leads out of the directory, and no `/proc` magic link is followed;
//! - only a regular file is accepted, opened non-blocking so that a FIFO
//!   cannot stall the open, and checked on the descriptor (never FIFOs,
//!   sockets, devices or folders);
//! - as root, only a file the sandbox's user (`nobody`) could read itself;
//! - never more than a stated number of bytes, and walks stop at a number
//!   of files and a time budget and say so.
//!
//! What it refuses is a [`Refused`], whose one-line `Display` the callers put
//! in an observation, a card or a report (`e.png: a link out of its folder,
//! not read`).

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

/// The uid and gid a root gisclaw's sandboxes run as (the worker's
/// `isolate::ROOT_SANDBOX_ID`).
pub const SANDBOX_ID: u32 = 65534;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// A link (or `..`) that leads out of the folder, or a `/proc` magic link.
    #[error("a link out of its folder, not read")]
    Outside,
    /// Not a regular file.
    #[error("{0}, not read")]
    Special(&'static str),
    /// As root: a file the sandbox's user could not read.
    #[error("not readable by the sandbox's user, not read")]
    NotForTheSandbox,
    /// Larger than the reader's cap.
    #[error("{size} bytes, more than the {cap} this reads, not read")]
    TooLarge {
        /// The file's size.
        size: u64,
        /// The cap.
        cap: u64,
    },
    /// No such file.
    #[error("missing")]
    Missing,
    /// Another error of the system.
    #[error("cannot be read: {0}")]
    Io(std::io::Error),
}

impl Refused {
    fn from_errno(err: std::io::Error) -> Refused {
        match err.raw_os_error() {
            Some(libc::EXDEV) | Some(libc::ELOOP) => Refused::Outside,
            Some(libc::ENOENT) | Some(libc::ENOTDIR) => Refused::Missing,
            Some(libc::ENXIO) => Refused::Special("a socket"),
            _ => Refused::Io(err),
        }
    }
}

/// What a file is, from its mode, in words (`a FIFO`, `a folder`…).
pub fn kind_words(mode: u32) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFREG => "a file",
        libc::S_IFDIR => "a folder",
        libc::S_IFLNK => "a link",
        libc::S_IFIFO => "a FIFO",
        libc::S_IFSOCK => "a socket",
        libc::S_IFCHR | libc::S_IFBLK => "a device",
        _ => "not a file",
    }
}

/// Whether this process is root (its reads are then checked against what
/// the sandbox's user could read).
pub fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Whether the sandbox's user could read a file of this owner and mode
/// (always true when gisclaw is not root: its sandboxes then run as its own
/// user). Folders on the way are checked by [`sandbox_could_reach`].
pub fn sandbox_could_read(uid: u32, gid: u32, mode: u32) -> bool {
    if !running_as_root() {
        return true;
    }
    if uid == SANDBOX_ID {
        mode & 0o400 != 0
    } else if gid == SANDBOX_ID {
        mode & 0o040 != 0
    } else {
        mode & 0o004 != 0
    }
}

/// Whether the sandbox's user could reach `path` through its folders below
/// `root` (each one searchable by it; `root` is bound into the sandbox as
/// it is); true when gisclaw is not root.
pub fn sandbox_could_reach(root: &Path, path: &Path) -> bool {
    if !running_as_root() {
        return true;
    }
    path.ancestors()
        .skip(1)
        .take_while(|dir| dir.starts_with(root))
        .all(|dir| {
            std::fs::metadata(dir).is_ok_and(|m| {
                use std::os::unix::fs::MetadataExt;
                let mode = m.mode();
                if m.uid() == SANDBOX_ID {
                    mode & 0o100 != 0
                } else if m.gid() == SANDBOX_ID {
                    mode & 0o010 != 0
                } else {
                    mode & 0o001 != 0
                }
            })
        })
}

/// `openat2`'s `struct open_how`.
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}
const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_BENEATH: u64 = 0x08;

fn c_name(path: &Path) -> Result<CString, Refused> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Refused::Io(std::io::Error::other("a NUL byte in the name")))
}

/// A path relative to a folder, refused when it is absolute or climbs out.
fn relative(rel: &Path) -> Result<&Path, Refused> {
    let escapes = rel.components().any(|c| {
        matches!(
            c,
            Component::ParentDir | Component::RootDir | Component::Prefix(_)
        )
    });
    if escapes {
        Err(Refused::Outside)
    } else {
        Ok(rel)
    }
}

/// Opens `rel` beneath the folder `dir` with `flags` (plus `O_CLOEXEC`).
fn open_beneath(dir: RawFd, rel: &Path, flags: i32) -> Result<OwnedFd, Refused> {
    let rel = relative(rel)?;
    let name = c_name(if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    })?;
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC | libc::O_NOCTTY) as u64,
        mode: 0,
        resolve: RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: openat2 reads `how` (of the size passed) and the NUL-terminated name.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            name.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd >= 0 {
        // SAFETY: a descriptor the kernel just returned to us.
        return Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) });
    }
    let err = std::io::Error::last_os_error();
    match err.raw_os_error() {
        // No openat2 (an old kernel, or a seccomp filter that refuses it):
        // no link is followed at all.
        Some(libc::ENOSYS) | Some(libc::EPERM) => open_without_links(dir, rel, flags),
        _ => Err(Refused::from_errno(err)),
    }
}

/// The fallback of [`open_beneath`]: component by component, `O_NOFOLLOW`.
fn open_without_links(dir: RawFd, rel: &Path, flags: i32) -> Result<OwnedFd, Refused> {
    let parts: Vec<&OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p),
            _ => None,
        })
        .collect();
    let mut current: Option<OwnedFd> = None;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let at = current.as_ref().map_or(dir, |f| f.as_raw_fd());
        let open_flags = if last {
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY
        } else {
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC
        };
        let name = c_name(Path::new(part))?;
        // SAFETY: openat with a NUL-terminated name relative to an open folder.
        let fd = unsafe { libc::openat(at, name.as_ptr(), open_flags) };
        if fd < 0 {
            return Err(Refused::from_errno(std::io::Error::last_os_error()));
        }
        // SAFETY: a descriptor the kernel just returned to us.
        current = Some(unsafe { OwnedFd::from_raw_fd(fd) });
    }
    match current {
        Some(fd) => Ok(fd),
        None => {
            // SAFETY: reopening the folder itself.
            let fd = unsafe { libc::openat(dir, c".".as_ptr(), flags | libc::O_CLOEXEC) };
            if fd < 0 {
                return Err(Refused::from_errno(std::io::Error::last_os_error()));
            }
            // SAFETY: as above.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        }
    }
}

/// `fstat` of an open descriptor.
fn fstat(fd: RawFd) -> std::io::Result<libc::stat> {
    // SAFETY: an all-zero stat is a valid out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes into `st`.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// The facts of a file accepted for reading.
#[derive(Debug, Clone, Copy)]
pub struct FileFacts {
    /// Its size in bytes.
    pub len: u64,
    /// Modification time, seconds and nanoseconds.
    pub modified: (i64, i64),
}

/// One entry of a folder, as listed without following links.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its name in the folder.
    pub name: OsString,
    /// Its mode (type and permissions) from `lstat`.
    pub mode: u32,
    /// Its size.
    pub len: u64,
    /// Owner and group.
    pub owner: (u32, u32),
    /// Modification time, seconds and nanoseconds.
    pub modified: (i64, i64),
    /// Its number of hard links.
    pub links: libc::nlink_t,
}

impl Entry {
    /// A regular file.
    pub fn is_file(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFREG
    }
    /// A folder (not a link to one).
    pub fn is_dir(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFDIR
    }
    /// A symbolic link.
    pub fn is_link(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFLNK
    }
}

/// An open folder whose files are read beneath it (see the module head).
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

impl Dir {
    /// Opens the folder at `path`. The path itself is gisclaw's choice and
    /// is resolved normally; what lies beneath it is not.
    pub fn open(path: &Path) -> std::io::Result<Dir> {
        let name = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::other("a NUL byte in the path"))?;
        // SAFETY: open with a NUL-terminated path.
        let fd = unsafe {
            libc::open(
                name.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Dir {
            // SAFETY: a descriptor the kernel just returned to us.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            path: path.to_path_buf(),
        })
    }

    /// The folder's path (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder's descriptor, kept open (a lock held on it).
    pub fn into_fd(self) -> OwnedFd {
        self.fd
    }

    /// `fstat` of the folder itself.
    pub fn stat(&self) -> std::io::Result<libc::stat> {
        fstat(self.fd.as_raw_fd())
    }

    /// The folder's descriptor (for `*at` calls of callers).
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Opens the regular file `rel` beneath this folder for reading (see
    /// the module head for what is refused).
    pub fn open_file(&self, rel: &Path) -> Result<(File, FileFacts), Refused> {
        let fd = open_beneath(self.fd.as_raw_fd(), rel, libc::O_RDONLY | libc::O_NONBLOCK)?;
        let st = fstat(fd.as_raw_fd()).map_err(Refused::Io)?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Err(Refused::Special(kind_words(st.st_mode)));
        }
        if !sandbox_could_read(st.st_uid, st.st_gid, st.st_mode) {
            return Err(Refused::NotForTheSandbox);
        }
        // Back to blocking reads (a regular file never blocks anyway).
        // SAFETY: fcntl on a descriptor we own.
        unsafe {
            let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
        let facts = FileFacts {
            len: st.st_size.max(0) as u64,
            modified: (st.st_mtime, st.st_mtime_nsec),
        };
        Ok((File::from(fd), facts))
    }

    /// Checks that `rel` is a regular file beneath this folder that the
    /// sandbox could read, without reading it (before a library opens it by
    /// path).
    pub fn check(&self, rel: &Path) -> Result<FileFacts, Refused> {
        self.open_file(rel).map(|(_, facts)| facts)
    }

    /// The whole of the regular file `rel`, refused when larger than `cap`
    /// bytes (also when it grows past `cap` while read).
    pub fn read(&self, rel: &Path, cap: u64) -> Result<Vec<u8>, Refused> {
        let (file, facts) = self.open_file(rel)?;
        if facts.len > cap {
            return Err(Refused::TooLarge {
                size: facts.len,
                cap,
            });
        }
        let mut bytes = Vec::with_capacity(facts.len as usize);
        file.take(cap + 1)
            .read_to_end(&mut bytes)
            .map_err(Refused::Io)?;
        if bytes.len() as u64 > cap {
            return Err(Refused::TooLarge {
                size: bytes.len() as u64,
                cap,
            });
        }
        Ok(bytes)
    }

    /// The folder `rel` beneath this one (links in it not followed out).
    pub fn subdir(&self, rel: &Path) -> Result<Dir, Refused> {
        let fd = open_beneath(self.fd.as_raw_fd(), rel, libc::O_RDONLY | libc::O_DIRECTORY)?;
        Ok(Dir {
            fd,
            path: self.path.join(rel),
        })
    }

    /// The folder named `name` in this one, never through a link.
    pub fn child_dir(&self, name: &OsStr) -> Result<Dir, Refused> {
        let c = c_name(Path::new(name))?;
        // SAFETY: openat with a NUL-terminated name relative to our folder.
        let fd = unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(Refused::from_errno(std::io::Error::last_os_error()));
        }
        Ok(Dir {
            // SAFETY: a descriptor the kernel just returned to us.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            path: self.path.join(name),
        })
    }

    /// The entries of this folder (not `.` and `..`), each `lstat`ed
    /// relative to it: links are listed as links, never followed.
    pub fn entries(&self) -> std::io::Result<Vec<Entry>> {
        let names = self.names()?;
        let mut entries = Vec::with_capacity(names.len());
        for name in names {
            if let Ok(st) = self.lstat(&name) {
                entries.push(Entry {
                    name,
                    mode: st.st_mode,
                    len: st.st_size.max(0) as u64,
                    owner: (st.st_uid, st.st_gid),
                    modified: (st.st_mtime, st.st_mtime_nsec),
                    links: st.st_nlink,
                });
            }
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }

    /// The names in this folder (not `.` and `..`), in the order listed.
    pub fn names(&self) -> std::io::Result<Vec<OsString>> {
        // SAFETY: dup of a descriptor we own, handed to fdopendir, which
        // owns it until closedir.
        let dir = unsafe {
            let fd = libc::fcntl(self.fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::lseek(fd, 0, libc::SEEK_SET);
            let dir = libc::fdopendir(fd);
            if dir.is_null() {
                let err = std::io::Error::last_os_error();
                libc::close(fd);
                return Err(err);
            }
            dir
        };
        let mut names = Vec::new();
        loop {
            // SAFETY: readdir on the stream opened above.
            let entry = unsafe { libc::readdir(dir) };
            if entry.is_null() {
                break;
            }
            // SAFETY: d_name is NUL-terminated within the entry.
            let name = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) };
            let bytes = name.to_bytes();
            if bytes != b"." && bytes != b".." {
                names.push(OsString::from_vec(bytes.to_vec()));
            }
        }
        // SAFETY: closes the stream (and its descriptor) opened above.
        unsafe { libc::closedir(dir) };
        Ok(names)
    }

    /// `fstatat(AT_SYMLINK_NOFOLLOW)` of the entry `name`.
    pub fn lstat(&self, name: &OsStr) -> std::io::Result<libc::stat> {
        let c = CString::new(name.as_bytes()).map_err(|_| std::io::Error::other("NUL in name"))?;
        // SAFETY: an all-zero stat is a valid out-parameter.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstatat writes into `st`; the name is NUL-terminated.
        let r = unsafe {
            libc::fstatat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(st)
    }

    /// Every entry beneath this folder that is not a folder (relative
    /// paths, sorted; regular files, links, FIFOs… for the caller to tell
    /// apart), descending into sub-folders but never through a link; stops
    /// at `budget` (every entry counted, folders too) and says why in
    /// [`Walk::stopped`].
    pub fn walk(&self, budget: WalkBudget) -> Walk {
        let started = Instant::now();
        let mut walk = Walk::default();
        let mut listed = 0usize;
        let mut pending: Vec<(PathBuf, Option<Dir>)> = vec![(PathBuf::new(), None)];
        'walk: while let Some((rel, dir)) = pending.pop() {
            let dir = dir.as_ref().unwrap_or(self);
            let Ok(entries) = dir.entries() else {
                continue;
            };
            for entry in entries {
                if listed >= budget.entries {
                    walk.stopped = Some(format!("stopped after {} entries", budget.entries));
                    break 'walk;
                }
                if started.elapsed() > budget.time {
                    walk.stopped = Some(format!(
                        "stopped after {:.0} s ({listed} entries)",
                        budget.time.as_secs_f64()
                    ));
                    break 'walk;
                }
                listed += 1;
                let path = rel.join(&entry.name);
                if entry.is_dir() {
                    if let Ok(sub) = dir.child_dir(&entry.name) {
                        pending.push((path, Some(sub)));
                    }
                } else {
                    walk.files.push((path, entry));
                }
            }
        }
        walk.files.sort_by(|a, b| a.0.cmp(&b.0));
        walk
    }
}

/// How far a [`Dir::walk`] may go.
#[derive(Debug, Clone, Copy)]
pub struct WalkBudget {
    /// Entries (files, links, others) listed at most.
    pub entries: usize,
    /// Time at most.
    pub time: Duration,
}

impl Default for WalkBudget {
    /// 10,000 entries, 10 s.
    fn default() -> WalkBudget {
        WalkBudget {
            entries: 10_000,
            time: Duration::from_secs(10),
        }
    }
}

/// What a [`Dir::walk`] found: every entry that is not a folder (links,
/// FIFOs and the like included, for the caller to name), and why it
/// stopped early, if it did.
#[derive(Debug, Default)]
pub struct Walk {
    /// Relative path and entry.
    pub files: Vec<(PathBuf, Entry)>,
    /// Set when a budget ended the walk.
    pub stopped: Option<String>,
}

/// Reads `path`, which must lie beneath `root`, as [`Dir::read`] does.
pub fn read_under(root: &Path, path: &Path, cap: u64) -> Result<Vec<u8>, Refused> {
    let rel = path.strip_prefix(root).map_err(|_| Refused::Outside)?;
    Dir::open(root).map_err(Refused::from_errno)?.read(rel, cap)
}

/// Checks `path`, which must lie beneath `root`, as [`Dir::check`] does.
pub fn check_under(root: &Path, path: &Path) -> Result<FileFacts, Refused> {
    let rel = path.strip_prefix(root).map_err(|_| Refused::Outside)?;
    let dir = Dir::open(root).map_err(Refused::from_errno)?;
    dir.check(rel)
}

/// Most files one [`Pinned`] holds open (a file's siblings, a folder's
/// files).
pub const PIN_FILES: usize = 256;

/// A file checked beneath a folder, held open together with the files
/// beside it that share its stem (a shapefile's `.dbf`/`.shx`/`.prj`, a
/// raster's `.aux.xml`), or a checked folder's files (a FileGDB), offered
/// to a library that opens by path (GDAL, Parquet) through a private
/// folder of links to the open descriptors (`NAME -> /proc/self/fd/N`).
/// What the library reads is what was checked, whatever the cell renames,
/// swaps or links in its place afterwards. Removed when dropped.
pub struct Pinned {
    // Dropped in this order: the links, then the descriptors.
    folder: Option<PinFolder>,
    files: Vec<File>,
    path: PathBuf,
    /// The checked file's size and time (`None` for a folder).
    pub facts: Option<FileFacts>,
}

impl Pinned {
    /// The path to hand the library: the file (or folder) under its own
    /// name in the private folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Links `name` in the private folder (or its sub-folder `inner`) to
    /// the open `file`, which the pin keeps.
    fn hold(&mut self, inner: Option<&OsStr>, name: &OsStr, file: File) -> Result<(), Refused> {
        let folder = self.folder.as_mut().ok_or(Refused::Outside)?;
        let at = match inner {
            Some(inner) => folder.path.join(inner),
            None => folder.path.clone(),
        };
        let link = at.join(name);
        let target = format!("/proc/self/fd/{}", file.as_raw_fd());
        std::os::unix::fs::symlink(target, &link).map_err(Refused::Io)?;
        folder.made.push(link);
        self.files.push(file);
        Ok(())
    }
}

/// A private folder (0700) of one [`Pinned`], and what was made in it.
struct PinFolder {
    path: PathBuf,
    /// Links and sub-folders, in the order made.
    made: Vec<PathBuf>,
}

impl PinFolder {
    /// A fresh folder with a name nobody can guess: in `/dev/shm` where one
    /// can be made there (a tmpfs: making and removing a pin costs tens of
    /// µs, against ~300 µs on an ext4 `/tmp`), else the temporary folder.
    fn new() -> std::io::Result<PinFolder> {
        use std::os::unix::fs::DirBuilderExt;
        static AT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
        let at = AT.get_or_init(|| {
            let shm = Path::new("/dev/shm");
            match tempfile::Builder::new().tempdir_in(shm) {
                Ok(_) => shm.to_path_buf(),
                Err(_) => std::env::temp_dir(),
            }
        });
        let mut random = [0u8; 12];
        loop {
            // SAFETY: getrandom fills the buffer it is given.
            let got = unsafe { libc::getrandom(random.as_mut_ptr().cast(), random.len(), 0) };
            if got != random.len() as isize {
                return Err(std::io::Error::last_os_error());
            }
            let name: String = random.iter().map(|b| format!("{b:02x}")).collect();
            let path = at.join(format!("gisclaw-pin-{name}"));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    return Ok(PinFolder {
                        path,
                        made: Vec::new(),
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for PinFolder {
    fn drop(&mut self) {
        for made in self.made.iter().rev() {
            if std::fs::remove_file(made).is_err() {
                let _ = std::fs::remove_dir(made);
            }
        }
        let _ = std::fs::remove_dir(&self.path);
    }
}

/// Whether entry `name` belongs with the file whose stem is `stem`
/// (`roads.dbf`, `ROADS.PRJ`, `roads.shp.xml` with `roads`).
fn sibling_of(name: &OsStr, stem: &OsStr) -> bool {
    let (name, stem) = (name.as_bytes(), stem.as_bytes());
    name.len() > stem.len() + 1
        && name[..stem.len()].eq_ignore_ascii_case(stem)
        && name[stem.len()] == b'.'
}

/// Pins `path`, which must lie beneath `root` (see [`Pinned`]): a regular
/// file the sandbox could read, with its siblings that are (others are left
/// out, as the cell's sandbox would not see them either), or a folder's
/// regular files (not its sub-folders). Where `/proc` is not mounted, the
/// file is only checked and its own path handed on.
pub fn pin_under(root: &Path, path: &Path) -> Result<Pinned, Refused> {
    static PROC: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let rel = path.strip_prefix(root).map_err(|_| Refused::Outside)?;
    let name = rel.file_name().ok_or(Refused::Special("a folder"))?;
    let dir = Dir::open(root).map_err(Refused::from_errno)?;
    let parent = match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => dir.subdir(p)?,
        None => dir,
    };
    let opened = parent.open_file(Path::new(name));
    if !*PROC.get_or_init(|| Path::new("/proc/self/fd").is_dir()) {
        return opened.map(|(_, facts)| Pinned {
            folder: None,
            files: Vec::new(),
            path: path.to_path_buf(),
            facts: Some(facts),
        });
    }
    let folder = PinFolder::new().map_err(Refused::Io)?;
    let mut pinned = Pinned {
        path: folder.path.join(name),
        folder: Some(folder),
        files: Vec::new(),
        facts: None,
    };
    match opened {
        Ok((file, facts)) => {
            pinned.hold(None, name, file)?;
            pinned.facts = Some(facts);
            let stem = Path::new(name).file_stem().unwrap_or(name);
            for other in parent.names().map_err(Refused::Io)? {
                if pinned.files.len() >= PIN_FILES {
                    break;
                }
                if other == name || !sibling_of(&other, stem) {
                    continue;
                }
                if let Ok((file, _)) = parent.open_file(Path::new(&other)) {
                    pinned.hold(None, &other, file)?;
                }
            }
        }
        Err(Refused::Special("a folder")) => {
            let inner = parent.subdir(Path::new(name))?;
            if let Some(folder) = pinned.folder.as_mut() {
                let into = folder.path.join(name);
                std::fs::create_dir(&into).map_err(Refused::Io)?;
                folder.made.push(into);
            }
            for other in inner.names().map_err(Refused::Io)? {
                if pinned.files.len() >= PIN_FILES {
                    break;
                }
                if let Ok((file, _)) = inner.open_file(Path::new(&other)) {
                    pinned.hold(Some(name), &other, file)?;
                }
            }
        }
        Err(e) => return Err(e),
    }
    Ok(pinned)
}

/// Reads `rel` as a cell whose cwd is `workdir` named it (a figure it
/// wrote), as [`Dir::read`] does beneath `workdir`. A run's `pred_results/`
/// lies beside its work folder, reached by a link gisclaw made
/// (`work/pred_results`): a path under it is read beneath that folder,
/// found by the run's layout, never by reading the link.
pub fn read_in_work(workdir: &Path, rel: &Path, cap: u64) -> Result<Vec<u8>, Refused> {
    let rel = rel.strip_prefix(workdir).unwrap_or(rel);
    let first = Dir::open(workdir)
        .map_err(Refused::from_errno)
        .and_then(|dir| dir.read(rel, cap));
    match first {
        Err(Refused::Outside) => {
            let beside = workdir.parent().map(|run| run.join("pred_results"));
            match (rel.strip_prefix("pred_results"), beside) {
                (Ok(inner), Some(pred)) if pred.is_dir() => Dir::open(&pred)
                    .map_err(Refused::from_errno)?
                    .read(inner, cap),
                _ => Err(Refused::Outside),
            }
        }
        other => other,
    }
}

/// A job for a caller's helper thread (see [`within`]).
type Job = Box<dyn FnOnce() + Send>;

thread_local! {
    /// Each calling thread's helper: one long-lived thread, so that what a
    /// library keeps per thread (GDAL's PROJ context, warm for the run's
    /// CRSs) lasts across calls; replaced when a call overruns.
    static HELPER: std::cell::RefCell<Option<std::sync::mpsc::Sender<Job>>> =
        const { std::cell::RefCell::new(None) };
}

fn spawn_helper() -> Option<std::sync::mpsc::Sender<Job>> {
    let (tx, rx) = std::sync::mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("gisclaw-bounded-read".into())
        .spawn(move || {
            while let Ok(job) = rx.recv() {
                job();
            }
        })
        .ok()?;
    Some(tx)
}

/// Runs `work` on this thread's helper thread and waits at most `limit`
/// for it: a library call that blocks (a FIFO swapped in after the checks,
/// a pathological file) costs that helper, never the run; the next call
/// gets a new one. `None` when the time ran out (or `work` panicked).
pub fn within<T: Send + 'static>(
    limit: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut job: Job = Box::new(move || {
        let _ = tx.send(work());
    });
    let sent = HELPER.with(|helper| {
        let mut helper = helper.borrow_mut();
        // A helper that died (a panic in an earlier job) is replaced once.
        for _ in 0..2 {
            let Some(sender) = helper.clone().or_else(spawn_helper) else {
                return false;
            };
            match sender.send(job) {
                Ok(()) => {
                    *helper = Some(sender);
                    return true;
                }
                Err(back) => {
                    job = back.0;
                    *helper = None;
                }
            }
        }
        false
    });
    if !sent {
        return None;
    }
    match rx.recv_timeout(limit) {
        Ok(value) => Some(value),
        Err(_) => {
            HELPER.with(|helper| helper.borrow_mut().take());
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_out_fifos_and_oversized_files_are_refused_and_files_beneath_read() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.txt"), "hello").unwrap();
        symlink("sub/a.txt", root.join("inside.txt")).unwrap();
        symlink(outside.path().join("secret.txt"), root.join("abs.txt")).unwrap();
        symlink("../../../../../../../../etc/passwd", root.join("rel.txt")).unwrap();
        symlink("/proc/self/environ", root.join("env.png")).unwrap();
        symlink(outside.path(), root.join("out")).unwrap();
        let fifo = CString::new(root.join("pipe.csv").as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo with a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);

        let d = Dir::open(root).unwrap();
        assert_eq!(d.read(Path::new("sub/a.txt"), 100).unwrap(), b"hello");
        assert_eq!(d.read(Path::new("inside.txt"), 100).unwrap(), b"hello");
        for bad in ["abs.txt", "rel.txt", "env.png", "out/secret.txt", "../x"] {
            assert!(
                matches!(d.read(Path::new(bad), 100), Err(Refused::Outside)),
                "{bad}: {:?}",
                d.read(Path::new(bad), 100)
            );
        }
        // Opened non-blocking: a blocking open would wait here for ever.
        let fifo = d.read(Path::new("pipe.csv"), 100).unwrap_err();
        assert_eq!(fifo.to_string(), "a FIFO, not read");
        assert!(matches!(
            d.read(Path::new("sub/a.txt"), 3),
            Err(Refused::TooLarge { size: 5, cap: 3 })
        ));
        assert!(matches!(
            d.read(Path::new("sub"), 3),
            Err(Refused::Special("a folder"))
        ));

        let walk = d.walk(WalkBudget::default());
        let names: Vec<String> = walk
            .files
            .iter()
            .map(|(p, _)| p.display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "abs.txt",
                "env.png",
                "inside.txt",
                "out",
                "pipe.csv",
                "rel.txt",
                "sub/a.txt"
            ]
        );
        assert!(walk
            .files
            .iter()
            .find(|(p, _)| p == Path::new("out"))
            .unwrap()
            .1
            .is_link());
        let small = d.walk(WalkBudget {
            entries: 2,
            time: Duration::from_secs(5),
        });
        assert_eq!(small.files.len(), 2);
        assert_eq!(small.stopped.as_deref(), Some("stopped after 2 entries"));
    }

    #[test]
    fn the_fallback_without_openat2_follows_no_link() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        symlink("a.txt", dir.path().join("l.txt")).unwrap();
        let d = Dir::open(dir.path()).unwrap();
        let fd = open_without_links(d.raw_fd(), Path::new("a.txt"), libc::O_RDONLY).unwrap();
        assert!(fstat(fd.as_raw_fd()).is_ok());
        assert!(matches!(
            open_without_links(d.raw_fd(), Path::new("l.txt"), libc::O_RDONLY),
            Err(Refused::Outside)
        ));
    }

    #[test]
    fn a_blocked_call_costs_its_thread_not_the_caller() {
        let started = Instant::now();
        let out = within(Duration::from_millis(200), || {
            std::thread::sleep(Duration::from_secs(30));
            1
        });
        assert!(out.is_none());
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(within(Duration::from_secs(5), || 2), Some(2));
    }

    #[test]
    fn a_pinned_file_is_what_was_checked_whatever_is_swapped_in_after() {
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.csv");
        std::fs::write(&secret, "secret,row\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("roads.shp"), "shp").unwrap();
        std::fs::write(root.join("ROADS.DBF"), "dbf").unwrap();
        std::fs::write(root.join("roads.shp.xml"), "xml").unwrap();
        std::fs::write(root.join("roadside.txt"), "not a sibling").unwrap();
        symlink(&secret, root.join("roads.prj")).unwrap();
        let pinned = pin_under(root, &root.join("roads.shp")).unwrap();
        assert_eq!(pinned.facts.as_ref().unwrap().len, 3);
        // The cell swaps the checked file for a link out, and renames a
        // sibling away: the pinned names still read what was checked.
        std::fs::remove_file(root.join("roads.shp")).unwrap();
        symlink(&secret, root.join("roads.shp")).unwrap();
        std::fs::rename(root.join("ROADS.DBF"), root.join("gone.dbf")).unwrap();
        let at = pinned.path().parent().unwrap();
        assert_eq!(std::fs::read_to_string(pinned.path()).unwrap(), "shp");
        assert_eq!(
            std::fs::read_to_string(at.join("ROADS.DBF")).unwrap(),
            "dbf"
        );
        assert_eq!(
            std::fs::read_to_string(at.join("roads.shp.xml")).unwrap(),
            "xml"
        );
        // A sibling linking out is left out; another stem is not a sibling.
        assert!(!at.join("roads.prj").exists());
        assert!(!at.join("roadside.txt").exists());
        let private = at.to_path_buf();
        drop(pinned);
        assert!(!private.exists(), "the private folder outlives its pin");
        // The swapped-in link is refused when pinned anew.
        assert!(matches!(
            pin_under(root, &root.join("roads.shp")),
            Err(Refused::Outside)
        ));
        // A folder's regular files are pinned, its links out are not.
        std::fs::create_dir(root.join("x.gdb")).unwrap();
        std::fs::write(root.join("x.gdb/a00000001.gdbtable"), "table").unwrap();
        symlink(&secret, root.join("x.gdb/a00000002.gdbtable")).unwrap();
        let folder = pin_under(root, &root.join("x.gdb")).unwrap();
        assert!(folder.facts.is_none());
        assert_eq!(
            std::fs::read_to_string(folder.path().join("a00000001.gdbtable")).unwrap(),
            "table"
        );
        assert!(!folder.path().join("a00000002.gdbtable").exists());
    }
}
