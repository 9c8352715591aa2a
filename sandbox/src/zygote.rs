//! The zygote: a worker that imported the GIS stack once and forks a child
//! per session on request (milliseconds instead of seconds).
//!
//! It is single-threaded and holds the GIL for its whole life. It is a child
//! subreaper: session children and the snapshots they fork are all its
//! children, reaped here, with their exit status kept briefly so the agent
//! can ask why a session died.

use std::collections::{BTreeSet, VecDeque};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use gisclaw_protocol::fdpass::recv_fd;
use gisclaw_protocol::{read_frame, write_frame, ChildExit, ControlRequest, ControlResponse, FrameError, SessionSpec};

use crate::interpreter::Runtime;
use crate::session;

/// How many exit statuses of reaped children are remembered.
const REMEMBERED_EXITS: usize = 256;
/// How often the zygote wakes to reap children while idle.
const IDLE_POLL: Duration = Duration::from_millis(250);

/// Bookkeeping of forked children.
#[derive(Default)]
struct Children {
    running: BTreeSet<i32>,
    exits: VecDeque<(i32, ChildExit)>,
}

impl Children {
    /// Reaps every child that has ended, without blocking.
    fn reap_ready(&mut self) {
        loop {
            let mut status = 0;
            // SAFETY: status is a valid out-pointer.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                return;
            }
            self.running.remove(&pid);
            if self.exits.len() == REMEMBERED_EXITS {
                self.exits.pop_front();
            }
            self.exits.push_back((pid, decode_status(status)));
        }
    }

    /// Waits up to `patience` for `pid` to be reaped and returns how it ended.
    fn exit_of(&mut self, pid: i32, patience: Duration) -> Option<ChildExit> {
        let deadline = Instant::now() + patience;
        loop {
            self.reap_ready();
            if let Some((_, exit)) = self.exits.iter().find(|(p, _)| *p == pid) {
                return Some(exit.clone());
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Kills and reaps every child, adopted snapshots included.
    fn kill_all(&mut self) {
        for pid in &self.running {
            // SAFETY: plain kill of a child we forked and have not reaped.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        self.running.clear();
        // Adopted snapshots are not in `running`; PDEATHSIG ends them when
        // the zygote exits. Reap whatever has already ended.
        self.reap_ready();
    }
}

/// Turns a `waitpid` status into a [`ChildExit`].
fn decode_status(status: i32) -> ChildExit {
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        ChildExit::Signaled {
            signal,
            name: signal_name(signal),
        }
    } else {
        ChildExit::Exited {
            code: libc::WEXITSTATUS(status),
        }
    }
}

/// `SIGSEGV` and friends by number.
fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGKILL => "SIGKILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        other => return format!("signal {other}"),
    };
    name.to_string()
}

/// Waits until fd 0 is readable or `timeout` passes. `Err` when it is closed or broken.
fn wait_readable(timeout: Duration) -> Result<bool, ()> {
    let mut pfd = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: pfd is valid for the call.
    let n = unsafe { libc::poll(&mut pfd, 1, timeout.as_millis() as libc::c_int) };
    if n < 0 {
        return if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(())
        };
    }
    if n == 0 {
        return Ok(false);
    }
    if pfd.revents & libc::POLLIN != 0 {
        Ok(true)
    } else {
        Err(())
    }
}

/// Forks a session child that talks on `session_fd`. Returns the child's pid.
fn fork_session(runtime: &Runtime, session_fd: OwnedFd, spec: &SessionSpec) -> std::io::Result<i32> {
    // SAFETY: getpid has no preconditions.
    let zygote_pid = unsafe { libc::getpid() };
    let pid = runtime.fork()?;
    if pid > 0 {
        drop(session_fd);
        return Ok(pid);
    }
    // SAFETY: replacing fd 0 (the control socket) with /dev/null so the
    // child holds no handle on the zygote's channel; PDEATHSIG ties the
    // child to the zygote (single-threaded, so the thread caveat does not apply).
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::close(null);
        }
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        if libc::getppid() != zygote_pid {
            libc::_exit(1);
        }
    }
    let code = session::run(runtime, UnixStream::from(session_fd), spec);
    runtime.flush_std_streams();
    // SAFETY: leaving the child without running the parent's atexit handlers.
    unsafe { libc::_exit(code) }
}

/// Serves the control channel on fd 0 until it closes or asks to shut down.
pub fn serve(runtime: Runtime) -> ExitCode {
    // SAFETY: fd 0 is the control socket handed over by gisclaw; it is owned
    // here for the zygote's whole life.
    let control = unsafe { UnixStream::from_raw_fd(0) };
    if control.peer_addr().is_err() {
        eprintln!("gisclaw-worker: standard input must be the Unix control socket (gisclaw starts the zygote itself)");
        return ExitCode::from(2);
    }
    // SAFETY: PR_SET_CHILD_SUBREAPER takes integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    let ready = match runtime.worker_info() {
        Ok(info) => ControlResponse::Ready { info: Box::new(info) },
        Err(message) => ControlResponse::Error { message },
    };
    let failed = matches!(ready, ControlResponse::Error { .. });
    if write_frame(&mut &control, &ready).is_err() || failed {
        return ExitCode::from(3);
    }
    runtime.freeze();
    let mut children = Children::default();
    loop {
        children.reap_ready();
        match wait_readable(IDLE_POLL) {
            Ok(false) => continue,
            Ok(true) => {}
            Err(()) => break,
        }
        let request: ControlRequest = match read_frame(&mut &control) {
            Ok(req) => req,
            Err(FrameError::Closed) => break,
            Err(err) => {
                eprintln!("gisclaw-worker: {err}");
                break;
            }
        };
        let response = match request {
            ControlRequest::Spawn { spec } => match recv_fd(&control) {
                Ok(fd) => match fork_session(&runtime, fd, &spec) {
                    Ok(pid) => {
                        children.running.insert(pid);
                        ControlResponse::Spawned { pid }
                    }
                    Err(err) => ControlResponse::Error {
                        message: format!("fork failed: {err}"),
                    },
                },
                Err(err) => ControlResponse::Error {
                    message: format!("no session socket arrived with the spawn request: {err}"),
                },
            },
            ControlRequest::Reap { pid } => ControlResponse::Reaped {
                pid,
                exit: children.exit_of(pid, Duration::from_secs(2)),
            },
            ControlRequest::Shutdown => break,
        };
        if write_frame(&mut &control, &response).is_err() {
            break;
        }
    }
    children.kill_all();
    ExitCode::SUCCESS
}
