//! The zygote: a worker that imported the GIS stack once and forks a child
//! per session on request (milliseconds instead of seconds).
//!
//! It is single-threaded and holds the GIL for its whole life. It is a child
//! subreaper, so the monitors its session launchers leave behind are reaped
//! here; each monitor reaps its own sandbox (see [`crate::monitor`]).
//!
//! Two ways to serve: [`serve`], one gisclaw process on fd 0 (the zygote
//! ends with it), and [`crate::service`], the per-user service that many
//! gisclaw processes connect to; both fork sessions with [`handle`].

use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::time::Duration;

use gisclaw_protocol::fdpass::recv_fd;
use gisclaw_protocol::{
    read_frame, write_frame, ControlRequest, ControlResponse, FrameError, LayerStatus, SessionSpec,
};

use crate::interpreter::Runtime;
use crate::isolate;
use crate::monitor::{self, Isolation};

/// How often the zygote wakes to reap children while idle.
const IDLE_POLL: Duration = Duration::from_millis(250);

/// Reaps every child that has ended (session launchers, and the monitors
/// they leave behind), without blocking.
pub fn reap_ready() {
    loop {
        let mut status = 0;
        // SAFETY: status is a valid out-pointer.
        if unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } <= 0 {
            return;
        }
    }
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

/// Forks a session launcher for `spec`: it enters the sandbox's namespaces
/// (the zygote writes its id maps) and forks the monitor as their PID 1, or,
/// where namespaces are unavailable or not asked for, becomes the monitor of
/// a process group itself. Returns the launcher's pid.
fn fork_session(
    runtime: &Runtime,
    session_fd: OwnedFd,
    monitor_fd: OwnedFd,
    spec: &SessionSpec,
    child_fds: &ChildFds,
) -> std::io::Result<i32> {
    let want_namespaces = spec.policy.namespaces && spec.policy.confine;
    let (mut ours, mut theirs) = UnixStream::pair()?;
    let pid = runtime.fork()?;
    if pid > 0 {
        drop((session_fd, monitor_fd, theirs));
        if want_namespaces {
            if let Err(why) = isolate::write_id_maps(pid, &mut ours) {
                eprintln!("gisclaw-worker: {why}");
            }
        }
        return Ok(pid);
    }
    drop(ours);
    // SAFETY: replacing fd 0 (the control socket, or nothing) with
    // /dev/null and closing the zygote's own descriptors (the service's
    // listener, lock and other clients' channels) so that the child holds
    // no handle on any of them; integers only.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            if child_fds.quiet {
                libc::dup2(null, 1);
                libc::dup2(null, 2);
            }
            libc::close(null);
        }
        for fd in &child_fds.close {
            libc::close(*fd);
        }
    }
    let isolation = if !want_namespaces {
        Isolation::ProcessGroup(LayerStatus::Disabled)
    } else {
        match isolate::unshare(&mut theirs) {
            Ok(()) => Isolation::Namespaces,
            Err(why) => Isolation::ProcessGroup(LayerStatus::Unsupported(why)),
        }
    };
    drop(theirs);
    if matches!(isolation, Isolation::Namespaces) {
        // The monitor must be a child to be PID 1 of the new PID namespace;
        // the launcher leaves and the zygote (a subreaper) adopts it.
        match runtime.fork() {
            Ok(0) => {}
            Ok(_) => unsafe { libc::_exit(0) },
            Err(_) => unsafe { libc::_exit(1) },
        }
    }
    monitor::run(runtime, session_fd, monitor_fd, spec, isolation)
}

/// What a forked session must not keep of the zygote.
#[derive(Default)]
pub struct ChildFds {
    /// The zygote's descriptors to close in the child.
    pub close: Vec<RawFd>,
    /// Whether the child's stdout and stderr go to /dev/null (the service's
    /// are its log file, which a session must not fill).
    pub quiet: bool,
}

/// Carries out one request from a control channel. `None` for `Shutdown`.
/// A `Spawn`'s two sockets are read from `control` after its frame.
pub fn handle(
    runtime: &Runtime,
    control: &UnixStream,
    request: ControlRequest,
    child_fds: &ChildFds,
) -> Option<ControlResponse> {
    Some(match request {
        ControlRequest::Spawn { spec } => {
            match recv_fd(control).and_then(|s| Ok((s, recv_fd(control)?))) {
                Ok((session_fd, monitor_fd)) => {
                    match fork_session(runtime, session_fd, monitor_fd, &spec, child_fds) {
                        Ok(pid) => ControlResponse::Spawned { pid },
                        Err(err) => ControlResponse::Error {
                            message: format!("fork failed: {err}"),
                        },
                    }
                }
                Err(err) => ControlResponse::Error {
                    message: format!(
                        "the session's sockets did not arrive with the spawn request: {err}"
                    ),
                },
            }
        }
        ControlRequest::Status => ControlResponse::Error {
            message: "this zygote is not the shared service".into(),
        },
        ControlRequest::Shutdown => return None,
    })
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
    isolate::note_outside_ids();
    let ready = match runtime.worker_info() {
        Ok(info) => ControlResponse::Ready {
            info: Box::new(info),
        },
        Err(message) => ControlResponse::Error { message },
    };
    let failed = matches!(ready, ControlResponse::Error { .. });
    if write_frame(&mut &control, &ready).is_err() || failed {
        return ExitCode::from(3);
    }
    runtime.freeze();
    loop {
        reap_ready();
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
        let Some(response) = handle(&runtime, &control, request, &ChildFds::default()) else {
            break;
        };
        if write_frame(&mut &control, &response).is_err() {
            break;
        }
    }
    // Sessions end when gisclaw closes their monitor sockets, not with the zygote.
    reap_ready();
    ExitCode::SUCCESS
}
