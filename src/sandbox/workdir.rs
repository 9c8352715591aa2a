//! A session's folders on the host side: handing them to the sandbox's user
//! and holding them for one live session at a time.
//!
//! When gisclaw runs as root its sandboxes run as `nobody`, who must be able
//! to write in the work folder. Whatever is in that folder may have been
//! made by a cell (of this session, or of another one that used the folder
//! before), so the hand-over never walks it by path: every folder is opened
//! relative to its parent's descriptor with `O_NOFOLLOW | O_DIRECTORY`, every
//! entry changed with `fchownat(AT_SYMLINK_NOFOLLOW)` on that descriptor, and
//! a file with other hard links is left alone. A folder swapped for a link
//! while the walk runs is then a link the walk does not enter.
//!
//! A folder that is the user's own (`gisclaw exec --workdir`, `gisclaw mcp
//! --workdir`) is only lent: the folder itself (and its `pred_results/`) is
//! given to the sandbox's user while the session lives and given back when
//! it ends; the user's files in it keep their owners.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::path::Path;

use super::error::SandboxError;
use crate::beneath::{self, Dir, SANDBOX_ID};

/// Holds a work folder for one live session (and its snapshots): an
/// exclusive `flock` on the folder, released when dropped.
#[derive(Debug)]
pub struct WorkLock {
    _dir: OwnedFd,
}

impl WorkLock {
    /// Takes the folder `dir` for a session, or says which folder is in use.
    pub fn take(dir: &Path) -> Result<WorkLock, SandboxError> {
        let folder = Dir::open(dir).map_err(SandboxError::io("opening the work dir"))?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(folder.raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                return Err(SandboxError::WorkDirInUse(dir.to_path_buf()));
            }
            return Err(SandboxError::Io {
                what: "locking the work dir",
                source: err,
            });
        }
        Ok(WorkLock {
            _dir: folder.into_fd(),
        })
    }
}

/// `fchown` of an open folder or file to the sandbox's user.
fn give(fd: i32) -> std::io::Result<()> {
    // SAFETY: fchown on a descriptor the caller owns.
    if unsafe { libc::fchown(fd, SANDBOX_ID, SANDBOX_ID) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Gives `dir` and everything beneath it to the sandbox's user when gisclaw
/// runs as root (see the module head: by descriptor, never through a link,
/// never a file with other hard links). For folders gisclaw made for the
/// session's own use.
pub fn hand_over(dir: &Path) -> Result<(), SandboxError> {
    if !beneath::running_as_root() {
        return Ok(());
    }
    let io = |source| SandboxError::Io {
        what: "handing the work dir to the sandbox user",
        source,
    };
    let root = open_no_follow(dir).map_err(io)?;
    give(root.raw_fd()).map_err(io)?;
    let mut pending = vec![root];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = folder.entries() else {
            continue;
        };
        for entry in entries {
            if entry.is_dir() {
                // A folder swapped for a link since the listing: not entered.
                if let Ok(sub) = folder.child_dir(&entry.name) {
                    give(sub.raw_fd()).map_err(io)?;
                    pending.push(sub);
                }
            } else {
                let single = entry.links <= 1 || entry.is_link();
                if single && entry.owner != (SANDBOX_ID, SANDBOX_ID) {
                    chown_entry(&folder, &entry.name).map_err(io)?;
                }
            }
        }
    }
    Ok(())
}

/// `fchownat(AT_SYMLINK_NOFOLLOW)` of `name` in `folder`.
fn chown_entry(folder: &Dir, name: &OsStr) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| std::io::Error::other("a NUL byte in a name"))?;
    // SAFETY: fchownat on our folder's descriptor with a NUL-terminated name.
    let r = unsafe {
        libc::fchownat(
            folder.raw_fd(),
            c.as_ptr(),
            SANDBOX_ID,
            SANDBOX_ID,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if r != 0 {
        let err = std::io::Error::last_os_error();
        // Gone since the listing: nothing to hand over.
        if err.raw_os_error() != Some(libc::ENOENT) {
            return Err(err);
        }
    }
    Ok(())
}

/// Opens the folder `path` itself without following a link in its place.
fn open_no_follow(path: &Path) -> std::io::Result<Dir> {
    let parent = path.parent().unwrap_or(Path::new("/"));
    let name = path.file_name().unwrap_or(OsStr::new("."));
    Dir::open(parent)?
        .child_dir(name)
        .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))
}

/// A user's folder lent to the sandbox's user for a session's life (see
/// the module head). Given back when dropped as it was found: owner and
/// group, mode (a cell's `chmod 3777` undone), and extended attributes —
/// the POSIX ACLs (access and default) and any other a cell added, changed
/// or removed.
#[derive(Debug)]
pub struct Lent {
    folders: Vec<Found>,
}

/// One lent folder and what it was when lent.
#[derive(Debug)]
struct Found {
    folder: Dir,
    uid: u32,
    gid: u32,
    mode: u32,
    xattrs: Vec<(std::ffi::CString, Vec<u8>)>,
}

/// The largest extended attribute (or list of names) read.
const XATTR_BYTES: usize = 64 << 10;

impl Lent {
    /// Nothing lent (gisclaw's own folders, handed over whole).
    pub fn nothing() -> Lent {
        Lent {
            folders: Vec::new(),
        }
    }

    /// Lends `dir` and its `pred_results/` (when it exists): notes what
    /// they are and, when gisclaw runs as root, gives them to the
    /// sandbox's user.
    pub fn lend(dir: &Path) -> Result<Lent, SandboxError> {
        let io = |source| SandboxError::Io {
            what: "lending the work dir to the sandbox user",
            source,
        };
        let root = open_no_follow(dir).map_err(io)?;
        let pred = root.child_dir(OsStr::new("pred_results")).ok();
        let mut folders = Vec::new();
        for folder in std::iter::once(root).chain(pred) {
            let st = folder.stat().map_err(io)?;
            let xattrs = xattrs(folder.raw_fd()).map_err(io)?;
            if beneath::running_as_root() && (st.st_uid, st.st_gid) != (SANDBOX_ID, SANDBOX_ID) {
                give(folder.raw_fd()).map_err(io)?;
            }
            folders.push(Found {
                folder,
                uid: st.st_uid,
                gid: st.st_gid,
                mode: st.st_mode & 0o7777,
                xattrs,
            });
        }
        Ok(Lent { folders })
    }
}

/// Every extended attribute of the open file `fd`, by name (the list of
/// names sized by asking first: a cell may have added many).
fn xattrs(fd: i32) -> std::io::Result<Vec<(std::ffi::CString, Vec<u8>)>> {
    let mut names = Vec::new();
    for _ in 0..4 {
        // SAFETY: a zero-sized query takes no buffer.
        let size = unsafe { libc::flistxattr(fd, std::ptr::null_mut(), 0) };
        if size < 0 {
            let err = std::io::Error::last_os_error();
            return match err.raw_os_error() {
                Some(libc::ENOTSUP) => Ok(Vec::new()),
                _ => Err(err),
            };
        }
        names = vec![0u8; size as usize];
        // SAFETY: the buffer is valid for its length.
        let n = unsafe { libc::flistxattr(fd, names.as_mut_ptr().cast(), names.len()) };
        if n >= 0 {
            names.truncate(n as usize);
            break;
        }
        // Grown since it was asked (ERANGE): ask again.
        names.clear();
    }
    let mut out = Vec::new();
    for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let Ok(name) = std::ffi::CString::new(name) else {
            continue;
        };
        let mut value = vec![0u8; XATTR_BYTES];
        // SAFETY: name is NUL-terminated, the buffer valid for its length.
        let len =
            unsafe { libc::fgetxattr(fd, name.as_ptr(), value.as_mut_ptr().cast(), value.len()) };
        if len >= 0 {
            value.truncate(len as usize);
            out.push((name, value));
        }
    }
    Ok(out)
}

impl Found {
    /// Puts the folder back as it was found; what could not be is warned of.
    fn give_back(&self) {
        let fd = self.folder.raw_fd();
        let warn = |what: &str| {
            tracing::warn!(
                "could not give {} back ({what}): {}",
                self.folder.path().display(),
                std::io::Error::last_os_error()
            )
        };
        // Attributes first: while the folder is still the sandbox's, and
        // before a mode change could matter. Listing failed: at least the
        // ACLs that were not there go.
        let now = xattrs(fd).unwrap_or_else(|_| {
            warn("listing its attributes");
            [c"system.posix_acl_access", c"system.posix_acl_default"]
                .into_iter()
                .map(|n| (n.to_owned(), Vec::new()))
                .collect()
        });
        {
            for (name, _) in now
                .iter()
                .filter(|(n, _)| !self.xattrs.iter().any(|(o, _)| o == n))
            {
                // SAFETY: fd is ours, name NUL-terminated.
                if unsafe { libc::fremovexattr(fd, name.as_ptr()) } != 0 {
                    warn("removing an attribute");
                }
            }
            for (name, value) in &self.xattrs {
                if now.iter().any(|(n, v)| n == name && v == value) {
                    continue;
                }
                // SAFETY: fd is ours, name NUL-terminated, value valid for its length.
                if unsafe {
                    libc::fsetxattr(fd, name.as_ptr(), value.as_ptr().cast(), value.len(), 0)
                } != 0
                {
                    warn("restoring an attribute");
                }
            }
        }
        // SAFETY: fchown/fchmod on a descriptor we own.
        unsafe {
            if beneath::running_as_root() && libc::fchown(fd, self.uid, self.gid) != 0 {
                warn("owner");
            }
            // After the owner: chown clears the set-id bits it may have had.
            if libc::fchmod(fd, self.mode) != 0 {
                warn("mode");
            }
        }
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        for found in &self.folders {
            found.give_back();
        }
    }
}
