//! The monitor: the init of one session's sandbox.
//!
//! With namespaces it is PID 1 of the sandbox's PID namespace and builds the
//! filesystem view; without, it leads the sandbox's process group and is a
//! child subreaper. Either way it forks the Python session, reaps every
//! process of the sandbox (the session, its snapshots, whatever a cell
//! started), reports each exit on the monitor socket, relays the agent's
//! signals, and ends every process of the sandbox when the agent closes the
//! monitor socket (or dies). No process outlives its session.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use gisclaw_protocol::{
    read_frame, write_frame, ChildExit, LayerStatus, MonitorEvent, MonitorRequest, SessionSpec,
};

use crate::interpreter::Runtime;
use crate::{isolate, session};

/// How often the monitor reaps while nothing arrives on its socket.
const REAP_POLL: Duration = Duration::from_millis(50);

/// How the sandbox is isolated.
pub enum Isolation {
    /// In its own namespaces; the monitor is their PID 1.
    Namespaces,
    /// In its own process group only; the reason namespaces are missing.
    ProcessGroup(LayerStatus),
}

/// Runs the monitor until the agent lets go; never returns.
pub fn run(
    runtime: &Runtime,
    session_fd: OwnedFd,
    monitor_fd: OwnedFd,
    spec: &SessionSpec,
    isolation: Isolation,
) -> ! {
    let monitor = UnixStream::from(monitor_fd);
    let mut spec = spec.clone();
    let namespaces = match isolation {
        Isolation::Namespaces => match enter_view(runtime, &spec) {
            Ok(()) => {
                let host_tmp = std::mem::replace(&mut spec.tmpdir, "/tmp".into());
                for root in &mut spec.policy.write_roots {
                    if *root == host_tmp {
                        *root = "/tmp".into();
                    }
                }
                LayerStatus::Enforced(
                    "user, mount, PID and IPC namespaces; minimal filesystem view".into(),
                )
            }
            Err(why) => fail(
                session_fd,
                &format!("the sandbox's filesystem view could not be built: {why}"),
            ),
        },
        Isolation::ProcessGroup(status) => {
            // SAFETY: setsid and prctl take no pointers.
            unsafe {
                libc::setsid();
                libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            }
            status
        }
    };
    let namespaced = namespaces.is_active();
    let session = match runtime.fork() {
        Ok(pid) => pid,
        Err(err) => fail(session_fd, &format!("fork of the session failed: {err}")),
    };
    if session == 0 {
        drop(monitor);
        let code = session::run(runtime, UnixStream::from(session_fd), &spec, namespaces);
        runtime.flush_std_streams();
        // SAFETY: leaving without the zygote's atexit handlers.
        unsafe { libc::_exit(code) }
    }
    drop(session_fd);
    if namespaced {
        // The monitor needs none once the view is built and the session forked.
        let _ = isolate::drop_capabilities();
    }
    serve(&monitor);
    end(namespaced)
}

/// Builds the namespace's view (see [`isolate::build_view`]).
fn enter_view(runtime: &Runtime, spec: &SessionSpec) -> Result<(), String> {
    let read_only = runtime.readable_dirs(spec);
    let writable: Vec<_> = spec
        .policy
        .write_roots
        .iter()
        .filter(|p| **p != spec.tmpdir)
        .cloned()
        .collect();
    isolate::build_view(&isolate::ViewSpec {
        stage: &spec.stage,
        read_only,
        writable,
        read_only_fds: Vec::new(),
        tmp: &spec.tmpdir,
    })
}

/// Tells the agent why the session could not start, then leaves.
fn fail(session_fd: OwnedFd, message: &str) -> ! {
    let mut stream = UnixStream::from(session_fd);
    let _ = write_frame(
        &mut stream,
        &gisclaw_protocol::SessionResponse::Error {
            message: message.to_string(),
        },
    );
    // SAFETY: leaving without running any handler.
    unsafe { libc::_exit(1) }
}

/// Reaps and reports until the monitor socket closes or breaks.
fn serve(monitor: &UnixStream) {
    loop {
        if !reap_and_report(monitor) {
            return;
        }
        let mut pfd = libc::pollfd {
            fd: monitor.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: pfd is valid for the call.
        let n = unsafe { libc::poll(&mut pfd, 1, REAP_POLL.as_millis() as libc::c_int) };
        if n <= 0 {
            continue;
        }
        if pfd.revents & libc::POLLIN == 0 {
            return;
        }
        match read_frame::<_, MonitorRequest>(&mut &*monitor) {
            Ok(MonitorRequest::Signal { pid, signal }) if pid > 1 => {
                // SAFETY: plain kill of a process of this sandbox.
                unsafe { libc::kill(pid, signal) };
            }
            Ok(_) => {}
            Err(_) => return,
        }
    }
}

/// Reaps every ended child; `false` when the agent can no longer be told.
fn reap_and_report(monitor: &UnixStream) -> bool {
    loop {
        let mut status = 0;
        // SAFETY: status is a valid out-pointer.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return true;
        }
        let event = MonitorEvent::Exited {
            pid,
            exit: decode_status(status),
        };
        if write_frame(&mut &*monitor, &event).is_err() {
            return false;
        }
    }
}

/// Ends every process of the sandbox, the monitor included.
fn end(namespaced: bool) -> ! {
    // SAFETY: kill and _exit take integers only. As PID 1 of the namespace,
    // leaving makes the kernel kill every other process in it; in a process
    // group, the group is killed (the monitor with it).
    unsafe {
        if !namespaced {
            libc::kill(0, libc::SIGKILL);
        }
        libc::_exit(0)
    }
}

/// Turns a `waitpid` status into a [`ChildExit`].
pub fn decode_status(status: i32) -> ChildExit {
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
        libc::SIGSYS => "SIGSYS",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGHUP => "SIGHUP",
        other => return format!("signal {other}"),
    };
    name.to_string()
}
