//! The agent's end of a sandbox's monitor socket (see the worker's
//! `monitor` module): how the sandbox's processes ended, signals to them,
//! and the sandbox's lifetime. Dropping the last [`Monitor`] of a sandbox
//! closes the socket, and the monitor ends every process in it.

use std::collections::VecDeque;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use gisclaw_protocol::{read_frame, write_frame, ChildExit, MonitorEvent, MonitorRequest};

/// How many exits of a sandbox's processes are remembered.
const REMEMBERED_EXITS: usize = 256;

/// What the reader thread learned.
#[derive(Default)]
struct State {
    exits: VecDeque<(i32, ChildExit)>,
    closed: bool,
}

/// One sandbox's monitor, shared by the session and its snapshots.
pub(crate) struct Monitor {
    stream: Mutex<UnixStream>,
    state: Arc<(Mutex<State>, Condvar)>,
}

impl Monitor {
    /// Starts reading the monitor's events from `stream`.
    pub(crate) fn new(stream: UnixStream) -> std::io::Result<Arc<Monitor>> {
        let mut reader = stream.try_clone()?;
        let state: Arc<(Mutex<State>, Condvar)> = Arc::default();
        let shared = state.clone();
        std::thread::spawn(move || {
            let (lock, changed) = &*shared;
            loop {
                let event = read_frame::<_, MonitorEvent>(&mut reader);
                let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
                match event {
                    Ok(MonitorEvent::Exited { pid, exit }) => {
                        if state.exits.len() == REMEMBERED_EXITS {
                            state.exits.pop_front();
                        }
                        state.exits.push_back((pid, exit));
                        changed.notify_all();
                    }
                    Err(_) => {
                        state.closed = true;
                        changed.notify_all();
                        return;
                    }
                }
            }
        });
        Ok(Arc::new(Monitor {
            stream: Mutex::new(stream),
            state,
        }))
    }

    /// Whether the sandbox's process `pid` has ended (or the monitor is
    /// gone, which ends every process of the sandbox).
    pub(crate) fn has_ended(&self, pid: i32) -> bool {
        let state = self.state.0.lock().unwrap_or_else(|e| e.into_inner());
        state.closed || state.exits.iter().any(|(p, _)| *p == pid)
    }

    /// Sends `signal` to the sandbox's process `pid`.
    pub(crate) fn signal(&self, pid: i32, signal: i32) {
        let mut stream = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        let _ = write_frame(&mut *stream, &MonitorRequest::Signal { pid, signal });
    }

    /// How `pid` ended, waiting up to `patience` for the monitor to say.
    pub(crate) fn exit_of(&self, pid: i32, patience: Duration) -> Option<ChildExit> {
        let deadline = Instant::now() + patience;
        let (lock, changed) = &*self.state;
        let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some((_, exit)) = state.exits.iter().rev().find(|(p, _)| *p == pid) {
                return Some(exit.clone());
            }
            let now = Instant::now();
            if state.closed || now >= deadline {
                return None;
            }
            state = changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        // The monitor sees the socket close and ends every process of the sandbox.
        let stream = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }
}
