//! A claim on a piece of shared work that several gisclaw processes, on
//! several machines sharing one folder (over NFS too), may race for: the
//! process holding the claim does the work, the others wait for its result
//! or take the claim over once its holder is gone.
//!
//! The claim is made with `link(2)`, which is atomic on NFS (`flock` and
//! `O_EXCL` are not dependable there): a file with a name of its own is
//! written, then hard-linked to the claim's name; the process whose link
//! succeeds holds the claim (or whose own file then has two links: a reply
//! lost on the network can report a link that was made as failed). The
//! holder touches the claim every few seconds. A waiter breaks it when its
//! modification time has not changed for [`ClaimTimes::stale_after`] by the
//! waiter's own clock (no clocks of two machines are compared), or at once
//! when the holder ran on the waiter's machine and its process is gone.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use crate::util::host_name;

/// How often a holder shows it is alive, and how long a waiter trusts a
/// claim that does not change.
#[derive(Debug, Clone, Copy)]
pub struct ClaimTimes {
    /// The holder touches its claim this often.
    pub heartbeat: Duration,
    /// A claim untouched this long (as a waiter sees it) is broken.
    pub stale_after: Duration,
    /// A waiter looks again this often.
    pub poll: Duration,
}

impl Default for ClaimTimes {
    fn default() -> ClaimTimes {
        ClaimTimes {
            heartbeat: Duration::from_secs(5),
            stale_after: Duration::from_secs(60),
            poll: Duration::from_millis(500),
        }
    }
}

/// Who holds a claim: written into the claim file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The holder's host name (for people reading the file).
    pub host: String,
    /// The holder's machine: its boot id and PID namespace, so that a pid
    /// is only checked on the machine it belongs to.
    pub machine: String,
    /// The holder's process id.
    pub pid: u32,
    /// Unique to this claim (a released claim is removed only by its own
    /// holder, never after another took it over).
    pub token: String,
    /// When the claim was taken (seconds since the Unix epoch, by the
    /// holder's clock).
    #[serde(default)]
    pub started: u64,
}

impl Holder {
    fn this_process() -> Holder {
        let since_epoch = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let nanos = since_epoch.as_nanos();
        let pid = std::process::id();
        let host = host_name();
        Holder {
            token: format!("{host}-{pid}-{nanos}"),
            machine: machine_id(),
            host,
            pid,
            started: since_epoch.as_secs(),
        }
    }

    /// Whether the holder is known to be gone: it ran on this machine and
    /// its process no longer exists.
    fn is_gone(&self) -> bool {
        self.machine == machine_id() && !process_exists(self.pid)
    }
}

/// This machine as seen by processes: its boot id and the PID namespace.
fn machine_id() -> String {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let pid_ns = std::fs::read_link("/proc/self/ns/pid")
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    format!("{}/{pid_ns}", boot.trim())
}

fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// What an attempt to take a claim found.
#[derive(Debug)]
pub enum Attempt {
    /// This process holds the claim now.
    Held(Claim),
    /// Another process holds it (`None`: its file could not be read yet).
    Busy(Option<Holder>),
}

/// A claim this process holds; released when dropped.
#[derive(Debug)]
pub struct Claim {
    path: PathBuf,
    token: String,
    stop: Option<mpsc::Sender<()>>,
    beat: Option<JoinHandle<()>>,
}

impl Claim {
    /// Tries once to take the claim `path`.
    pub fn try_take(path: &Path, times: &ClaimTimes) -> io::Result<Attempt> {
        let me = Holder::this_process();
        let dir = path.parent().unwrap_or(Path::new("."));
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let mine = dir.join(format!(".{name}.{}", me.token));
        crate::util::write_json(&mine, &me)?;
        let linked = std::fs::hard_link(&mine, path);
        // The link count tells the truth even when the reply to link() was lost.
        let held = std::fs::metadata(&mine).map(|m| m.nlink() == 2);
        let _ = std::fs::remove_file(&mine);
        match (linked, held) {
            (_, Ok(true)) => Ok(Attempt::Held(Claim::start(path, me.token, times))),
            (Ok(()), _) => Ok(Attempt::Held(Claim::start(path, me.token, times))),
            (Err(e), _) if e.kind() == io::ErrorKind::AlreadyExists => {
                Ok(Attempt::Busy(read_holder(path)))
            }
            (Err(e), _) => Err(e),
        }
    }

    /// Takes the claim `path`, waiting while a live holder has it; returns
    /// `None` as soon as `done()` says the work is done (by whoever held
    /// it), or when a stop was requested (a signal).
    pub fn take_or_wait(
        path: &Path,
        times: &ClaimTimes,
        done: impl Fn() -> bool,
    ) -> io::Result<Option<Claim>> {
        // The claim's last modification time seen, and when it was first seen.
        let mut seen: Option<(Option<SystemTime>, Instant)> = None;
        loop {
            if done() || crate::interrupt::requested().is_some() {
                return Ok(None);
            }
            match Claim::try_take(path, times)? {
                Attempt::Held(claim) => {
                    // The last holder may have finished just before.
                    if done() {
                        return Ok(None);
                    }
                    return Ok(Some(claim));
                }
                Attempt::Busy(holder) => {
                    let mtime = std::fs::metadata(path).and_then(|m| m.modified()).ok();
                    let since = match seen {
                        Some((m, at)) if m == mtime => at,
                        _ => Instant::now(),
                    };
                    seen = Some((mtime, since));
                    let gone = holder.as_ref().is_some_and(Holder::is_gone);
                    if gone || since.elapsed() >= times.stale_after {
                        tracing::info!(
                            "{}: breaking the claim of {} (its holder is gone)",
                            path.display(),
                            holder
                                .map(|h| format!("{} pid {}", h.host, h.pid))
                                .unwrap_or_default()
                        );
                        break_claim(path);
                        seen = None;
                        continue;
                    }
                    std::thread::sleep(times.poll);
                }
            }
        }
    }

    /// Takes the claim `path` unless a live process holds it: a holder
    /// on this machine is checked at once; another machine's is alive when
    /// its claim changes within [`ClaimTimes::stale_after`] (waited for),
    /// gone when it does not. `Err(holder)`: a live process holds it.
    pub fn take_unless_alive(
        path: &Path,
        times: &ClaimTimes,
    ) -> io::Result<Result<Claim, Option<Holder>>> {
        let mut seen: Option<(Option<SystemTime>, Instant)> = None;
        loop {
            match Claim::try_take(path, times)? {
                Attempt::Held(claim) => return Ok(Ok(claim)),
                Attempt::Busy(holder) => {
                    let mtime = std::fs::metadata(path).and_then(|m| m.modified()).ok();
                    let local = holder.as_ref().is_some_and(|h| h.machine == machine_id());
                    if local && !holder.as_ref().is_some_and(Holder::is_gone) {
                        return Ok(Err(holder));
                    }
                    let gone = match seen {
                        _ if local => true,
                        Some((m, _)) if m != mtime => return Ok(Err(holder)),
                        Some((_, since)) => since.elapsed() >= times.stale_after,
                        None => false,
                    };
                    if gone {
                        break_claim(path);
                        seen = None;
                        continue;
                    }
                    if seen.is_none() {
                        seen = Some((mtime, Instant::now()));
                    }
                    std::thread::sleep(times.poll);
                }
            }
        }
    }

    fn start(path: &Path, token: String, times: &ClaimTimes) -> Claim {
        let (stop, stopped) = mpsc::channel::<()>();
        let beat_path = path.to_path_buf();
        let every = times.heartbeat;
        let beat = std::thread::spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                let touched = std::fs::File::options()
                    .append(true)
                    .open(&beat_path)
                    .and_then(|f| f.set_modified(SystemTime::now()));
                if let Err(e) = touched {
                    tracing::warn!("{}: cannot touch the claim: {e}", beat_path.display());
                }
            }
        });
        Claim {
            path: path.to_path_buf(),
            token,
            stop: Some(stop),
            beat: Some(beat),
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(beat) = self.beat.take() {
            let _ = beat.join();
        }
        // Only our own claim: another process may have broken it and taken it.
        if read_holder(&self.path).is_some_and(|h| h.token == self.token) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The holder of the claim `path` when it is alive as of `now`: on this
/// machine, its process exists; on another, the claim was touched within
/// `stale_after` of `now` (machines' clocks compared: a rough answer, for
/// progress displays).
pub fn live_holder(path: &Path, times: &ClaimTimes, now: SystemTime) -> Option<Holder> {
    let holder = read_holder(path)?;
    if holder.machine == machine_id() {
        return (!holder.is_gone()).then_some(holder);
    }
    let touched = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    let age = now.duration_since(touched).unwrap_or_default();
    (age < times.stale_after).then_some(holder)
}

fn read_holder(path: &Path) -> Option<Holder> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Moves a stale claim out of the way (one breaker wins the rename) and
/// removes it.
fn break_claim(path: &Path) {
    let aside = path.with_file_name(format!(
        ".{}.stale-{}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        Holder::this_process().token
    ));
    if std::fs::rename(path, &aside).is_ok() {
        let _ = std::fs::remove_file(&aside);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn quick() -> ClaimTimes {
        ClaimTimes {
            heartbeat: Duration::from_millis(50),
            stale_after: Duration::from_millis(400),
            poll: Duration::from_millis(20),
        }
    }

    #[test]
    fn one_of_many_racers_holds_a_claim_and_it_is_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("T01.claim");
        let held = Arc::new(AtomicUsize::new(0));
        let claims: Vec<Option<Claim>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    let (path, held) = (&path, held.clone());
                    s.spawn(move || match Claim::try_take(path, &quick()).unwrap() {
                        Attempt::Held(c) => {
                            held.fetch_add(1, Ordering::SeqCst);
                            Some(c)
                        }
                        Attempt::Busy(holder) => {
                            assert_eq!(holder.unwrap().pid, std::process::id());
                            None
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(held.load(Ordering::SeqCst), 1);
        // No file of a racer is left beside the claim.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "{names:?}");
        drop(claims);
        assert!(!path.exists(), "the claim is released");
        assert!(matches!(
            Claim::try_take(&path, &quick()).unwrap(),
            Attempt::Held(_)
        ));
    }

    #[test]
    fn a_waiter_gets_the_claim_when_the_holder_releases_it_or_sees_the_work_done() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("T01.claim");
        let Attempt::Held(first) = Claim::try_take(&path, &quick()).unwrap() else {
            panic!("the first take holds");
        };
        let done = dir.path().join("gold.json");
        std::thread::scope(|s| {
            let waiter = s.spawn(|| Claim::take_or_wait(&path, &quick(), || done.is_file()));
            std::thread::sleep(Duration::from_millis(600));
            // The heartbeat kept the claim alive past stale_after.
            assert!(!waiter.is_finished(), "a live claim is waited for");
            std::fs::write(&done, "{}").unwrap();
            drop(first);
            assert!(
                waiter.join().unwrap().unwrap().is_none(),
                "the work is done"
            );
        });
        std::fs::remove_file(&done).unwrap();
        let Attempt::Held(second) = Claim::try_take(&path, &quick()).unwrap() else {
            panic!("released");
        };
        std::thread::scope(|s| {
            let waiter = s.spawn(|| Claim::take_or_wait(&path, &quick(), || done.is_file()));
            std::thread::sleep(Duration::from_millis(100));
            drop(second);
            assert!(waiter.join().unwrap().unwrap().is_some(), "taken over");
        });
    }

    #[test]
    fn a_claim_whose_holder_is_gone_or_silent_is_broken() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("T01.claim");
        // A holder on this machine whose process has ended.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let dead = Holder {
            pid,
            ..Holder::this_process()
        };
        crate::util::write_json(&path, &dead).unwrap();
        let started = Instant::now();
        let claim = Claim::take_or_wait(&path, &quick(), || false).unwrap();
        assert!(claim.is_some());
        assert!(started.elapsed() < quick().stale_after, "broken at once");
        drop(claim);
        // A holder on another machine that stopped touching its claim.
        let silent = Holder {
            machine: "another-machine".into(),
            pid: 1,
            ..Holder::this_process()
        };
        crate::util::write_json(&path, &silent).unwrap();
        let started = Instant::now();
        let claim = Claim::take_or_wait(&path, &quick(), || false).unwrap();
        assert!(claim.is_some());
        assert!(
            started.elapsed() >= quick().stale_after,
            "after stale_after"
        );
        assert_eq!(read_holder(&path).unwrap().pid, std::process::id());
    }

    #[test]
    fn a_live_holder_is_refused_and_a_gone_one_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shard-1.claim");
        let Attempt::Held(first) = Claim::try_take(&path, &quick()).unwrap() else {
            panic!("held");
        };
        let now = SystemTime::now();
        assert!(live_holder(&path, &quick(), now).is_some());
        let refused = Claim::take_unless_alive(&path, &quick()).unwrap();
        assert_eq!(refused.unwrap_err().unwrap().pid, std::process::id());
        drop(first);
        assert!(live_holder(&path, &quick(), now).is_none());
        // Another machine's holder that keeps touching its claim is alive.
        let other = Holder {
            machine: "another-machine".into(),
            ..Holder::this_process()
        };
        crate::util::write_json(&path, &other).unwrap();
        std::thread::scope(|s| {
            let toucher = s.spawn(|| {
                for _ in 0..10 {
                    std::thread::sleep(Duration::from_millis(50));
                    let f = std::fs::File::options().append(true).open(&path).unwrap();
                    f.set_modified(SystemTime::now()).unwrap();
                }
            });
            assert!(Claim::take_unless_alive(&path, &quick()).unwrap().is_err());
            toucher.join().unwrap();
        });
        // Silent: taken over after stale_after.
        let claim = Claim::take_unless_alive(&path, &quick()).unwrap();
        assert!(claim.is_ok());
    }
}
