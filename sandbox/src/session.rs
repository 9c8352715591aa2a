//! One session: a forked child that confines itself, then serves cells on its
//! own socket until the agent closes it or asks it to stop.

use std::os::unix::net::UnixStream;

use gisclaw_protocol::{read_frame, write_frame, FrameError, SessionRequest, SessionResponse, SessionSpec};

use crate::confine;
use crate::interpreter::Runtime;

/// Prepares the work dir and tmp dir, confines the process, starts the
/// Python session, then serves requests. Returns the process exit code.
pub fn run(runtime: &Runtime, stream: UnixStream, spec: &SessionSpec) -> i32 {
    let mut stream = stream;
    let prepared = std::fs::create_dir_all(spec.workdir.join("pred_results"))
        .and_then(|()| std::fs::create_dir_all(&spec.tmpdir))
        .and_then(|()| std::env::set_current_dir(&spec.workdir));
    if let Err(err) = prepared {
        let message = format!("cannot prepare work dir {}: {err}", spec.workdir.display());
        let _ = write_frame(&mut stream, &SessionResponse::Error { message });
        return 1;
    }
    let confinement = confine::apply(&spec.policy);
    if let Err(message) = runtime.start_session(spec) {
        let _ = write_frame(&mut stream, &SessionResponse::Error { message });
        return 1;
    }
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    if write_frame(&mut stream, &SessionResponse::Ready { pid, confinement }).is_err() {
        return 1;
    }
    loop {
        let request: SessionRequest = match read_frame(&mut stream) {
            Ok(req) => req,
            Err(FrameError::Closed) => return 0,
            Err(_) => return 1,
        };
        let response = match request {
            SessionRequest::Exec { code, cell } => match runtime.run_cell(&code, cell) {
                Ok(result) => SessionResponse::Cell {
                    result: Box::new(result),
                },
                Err(message) => SessionResponse::Error { message },
            },
            SessionRequest::Variables => match runtime.variables() {
                Ok(variables) => SessionResponse::Variables { variables },
                Err(message) => SessionResponse::Error { message },
            },
            SessionRequest::Packages => match runtime.packages() {
                Ok(packages) => SessionResponse::Packages { packages },
                Err(message) => SessionResponse::Error { message },
            },
            SessionRequest::Shutdown => return 0,
        };
        runtime.flush_std_streams();
        if write_frame(&mut stream, &response).is_err() {
            return 1;
        }
    }
}
