//! A pseudo-terminal driver for tests of interactive commands: the child
//! gets the pty as its controlling terminal (so Ctrl-C becomes SIGINT, as
//! in a real terminal), the test writes keys and waits for text.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process on a pseudo-terminal.
pub struct Pty {
    master: File,
    /// The child.
    pub child: Child,
    /// Everything read so far.
    pub seen: String,
    /// Where the next `expect` starts looking.
    cursor: usize,
}

impl Pty {
    /// Starts `cmd` on a new 80×24 pty.
    pub fn spawn(mut cmd: Command) -> Pty {
        let (mut master, mut slave) = (0, 0);
        let size = libc::winsize {
            ws_row: 24,
            ws_col: 80,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty fills two fds we then own.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: fresh fds from openpty, owned here.
        let slave = unsafe { OwnedFd::from_raw_fd(slave) };
        let master = unsafe { File::from_raw_fd(master) };
        // SAFETY: setting O_NONBLOCK on our own fd.
        unsafe {
            let flags = libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&master), libc::F_GETFL);
            libc::fcntl(
                std::os::fd::AsRawFd::as_raw_fd(&master),
                libc::F_SETFL,
                flags | libc::O_NONBLOCK,
            );
        }
        cmd.stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        // SAFETY: setsid and ioctl are async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawning on the pty");
        Pty {
            master,
            child,
            seen: String::new(),
            cursor: 0,
        }
    }

    fn pump(&mut self) -> bool {
        let mut buf = [0u8; 4096];
        match self.master.read(&mut buf) {
            Ok(0) => false,
            Ok(n) => {
                self.seen.push_str(&String::from_utf8_lossy(&buf[..n]));
                true
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
                true
            }
            // EIO once the child has closed the terminal.
            Err(_) => false,
        }
    }

    /// Waits up to `limit` for `needle` after the last match; panics with
    /// everything seen otherwise.
    pub fn expect(&mut self, needle: &str, limit: Duration) -> String {
        let start = Instant::now();
        loop {
            if let Some(at) = self.seen[self.cursor..].find(needle) {
                let upto = self.cursor + at + needle.len();
                let chunk = self.seen[self.cursor..upto].to_string();
                self.cursor = upto;
                return chunk;
            }
            let open = self.pump();
            assert!(
                open || self.seen[self.cursor..].contains(needle),
                "the terminal closed before {needle:?}; seen:\n{}",
                self.seen
            );
            assert!(
                start.elapsed() < limit,
                "no {needle:?} within {limit:?}; seen:\n{}",
                self.seen
            );
        }
    }

    /// Types `text` (use `\r` for Enter, `\x03` for Ctrl-C, `\x04` for Ctrl-D).
    pub fn send(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    /// Waits for the child to exit (reading its last output) and returns its code.
    pub fn wait(&mut self, limit: Duration) -> Option<i32> {
        let start = Instant::now();
        loop {
            self.pump();
            if let Some(status) = self.child.try_wait().unwrap() {
                while self.pump() && !self.seen.is_empty() {
                    if start.elapsed() > limit {
                        break;
                    }
                    let before = self.seen.len();
                    self.pump();
                    if self.seen.len() == before {
                        break;
                    }
                }
                return status.code();
            }
            assert!(
                start.elapsed() < limit,
                "the child did not exit within {limit:?}; seen:\n{}",
                self.seen
            );
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
