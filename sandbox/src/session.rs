//! One session: a forked child that confines itself, then serves cells on its
//! own socket until the agent closes it or asks it to stop. A session can be
//! snapshotted: forked again, the copy keeping the live namespace.

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Once;

use gisclaw_protocol::fdpass::recv_fd;
use gisclaw_protocol::{
    read_frame, write_frame, ConfinementReport, FrameError, LayerStatus, SessionRequest,
    SessionResponse, SessionSpec,
};

use crate::confine;
use crate::interpreter::Runtime;

/// Confines the process, starts the Python session in the work dir, then
/// serves requests. `namespaces` says how the monitor isolated the sandbox.
/// Returns the process exit code.
pub fn run(
    runtime: &Runtime,
    stream: UnixStream,
    spec: &SessionSpec,
    namespaces: LayerStatus,
) -> i32 {
    let mut stream = stream;
    if let Err(err) = std::env::set_current_dir(&spec.workdir) {
        let message = format!(
            "cannot enter the work dir {}: {err}",
            spec.workdir.display()
        );
        let _ = write_frame(&mut stream, &SessionResponse::Error { message });
        return 1;
    }
    let confinement = confine::apply(&spec.policy, namespaces, &runtime.readable_dirs(spec));
    if let Err(message) = runtime.start_session(spec) {
        let _ = write_frame(&mut stream, &SessionResponse::Error { message });
        return 1;
    }
    serve(runtime, stream, confinement)
}

/// The protocol socket's descriptor while user code may run (a cell, the
/// analysis, the summaries), else -1: a process forked then closes it at
/// once ([`close_channel_in_child`]), so it can never speak for the worker.
static CHANNEL_FD: AtomicI32 = AtomicI32::new(-1);

/// The `pthread_atfork` child handler: a fork made by user code loses the
/// protocol socket (snapshot forks happen while none is set).
extern "C" fn close_channel_in_child() {
    crate::live::in_forked_child();
    let fd = CHANNEL_FD.swap(-1, Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: close of a descriptor number this process inherited; the
        // child never uses the socket object that owned it (it leaves
        // through `guarded` before touching it).
        unsafe { libc::close(fd) };
    }
}

/// Runs `call` (which may run user code) with the fork guard armed, and
/// makes a process forked inside it that returns here (its code raised or
/// fell through instead of calling `os._exit`) leave at once, so that it
/// never answers a request in the worker's name.
fn guarded<T>(
    runtime: &Runtime,
    stream: &UnixStream,
    worker_pid: i32,
    call: impl FnOnce() -> T,
) -> T {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // SAFETY: registers a handler that only closes a descriptor.
        unsafe { libc::pthread_atfork(None, None, Some(close_channel_in_child)) };
    });
    CHANNEL_FD.store(stream.as_raw_fd(), Ordering::SeqCst);
    let value = call();
    CHANNEL_FD.store(-1, Ordering::SeqCst);
    // SAFETY: getpid has no preconditions.
    if unsafe { libc::getpid() } != worker_pid {
        runtime.flush_std_streams();
        // SAFETY: leaving a forked copy without running the worker's drops.
        unsafe { libc::_exit(0) };
    }
    value
}

/// Greets on `stream` and answers requests until it closes.
fn serve(runtime: &Runtime, stream: UnixStream, confinement: ConfinementReport) -> i32 {
    let mut stream = stream;
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let ready = SessionResponse::Ready {
        pid,
        confinement: confinement.clone(),
    };
    if write_frame(&mut stream, &ready).is_err() {
        return 1;
    }
    loop {
        let request: SessionRequest = match read_frame(&mut stream) {
            Ok(req) => req,
            Err(FrameError::Closed) => return 0,
            Err(_) => return 1,
        };
        let response = match request {
            SessionRequest::Exec { code, cell, live } => {
                // What the cell writes is sent as it comes (when asked);
                // the flusher is done before the result is written.
                let live = if live {
                    crate::live::start(&stream)
                } else {
                    None
                };
                let result = guarded(runtime, &stream, pid, || runtime.run_cell(&code, cell));
                if let Some(flusher) = live {
                    flusher.finish();
                }
                SessionResponse::Cell {
                    result: Box::new(result),
                }
            }
            SessionRequest::Analyse { code } => {
                match guarded(runtime, &stream, pid, || runtime.analyse(&code)) {
                    Ok(findings) => SessionResponse::Findings { findings },
                    Err(message) => SessionResponse::Error { message },
                }
            }
            SessionRequest::Shape { code } => {
                match guarded(runtime, &stream, pid, || runtime.shape(&code)) {
                    Ok(shape) => SessionResponse::Shape { shape },
                    Err(message) => SessionResponse::Error { message },
                }
            }
            SessionRequest::Variables => {
                match guarded(runtime, &stream, pid, || runtime.variables()) {
                    Ok(variables) => SessionResponse::Variables { variables },
                    Err(message) => SessionResponse::Error { message },
                }
            }
            SessionRequest::Packages => match guarded(runtime, &stream, pid, || runtime.packages())
            {
                Ok(packages) => SessionResponse::Packages { packages },
                Err(message) => SessionResponse::Error { message },
            },
            SessionRequest::Snapshot => match recv_fd(&stream).map(UnixStream::from) {
                Ok(copy_stream) => match fork_snapshot(runtime) {
                    Ok(Fork::Original) => {
                        drop(copy_stream);
                        SessionResponse::Snapshotted
                    }
                    Ok(Fork::Copy) => {
                        // The copy must not hold the original's socket, or the
                        // agent would not see the original close.
                        drop(stream);
                        return serve(runtime, copy_stream, confinement);
                    }
                    Err(err) => SessionResponse::Error {
                        message: format!("snapshot failed: {err}"),
                    },
                },
                Err(err) => SessionResponse::Error {
                    message: format!("no socket arrived with the snapshot request: {err}"),
                },
            },
            SessionRequest::Shutdown => return 0,
        };
        runtime.flush_std_streams();
        if write_frame(&mut stream, &response).is_err() {
            return 1;
        }
    }
}

/// Which side of a snapshot fork this process is on.
enum Fork {
    Original,
    Copy,
}

/// Forks a copy of this session that the sandbox's monitor adopts: a double
/// fork, so that the copy's parent is the monitor (PID 1 of the namespace,
/// or a child subreaper), which reaps it and whose end ends it, and so that
/// the copy outlives this session.
fn fork_snapshot(runtime: &Runtime) -> std::io::Result<Fork> {
    // SAFETY: getppid has no preconditions; this session's parent is the monitor.
    let monitor_pid = unsafe { libc::getppid() };
    let middle = runtime.fork()?;
    if middle > 0 {
        let mut status = 0;
        // SAFETY: reaping the short-lived middle process we just forked.
        unsafe { libc::waitpid(middle, &mut status, 0) };
        return if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
            Ok(Fork::Original)
        } else {
            Err(std::io::Error::other("the intermediate process failed"))
        };
    }
    // The middle process: fork the copy and leave at once.
    let copy = runtime.fork();
    if !matches!(copy, Ok(0)) {
        // SAFETY: leaving the middle process without running any handlers.
        unsafe { libc::_exit(if copy.is_ok() { 0 } else { 1 }) };
    }
    // Wait to be adopted by the monitor, then die with it.
    // SAFETY: plain process-state calls.
    unsafe {
        let mut waited = 0;
        while libc::getppid() != monitor_pid {
            waited += 1;
            if waited > 50_000 {
                libc::_exit(1);
            }
            libc::usleep(200);
        }
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        if libc::getppid() != monitor_pid {
            libc::_exit(1);
        }
    }
    Ok(Fork::Copy)
}
