//! SIGTERM, SIGINT and SIGHUP for the batch front ends (`solve`, `eval`,
//! `exec`): the signal is noted, the running cell is interrupted, the run
//! ends as `interrupted` with its records written, and the session's
//! temporary folders are removed. (`chat` handles Ctrl-C itself.)

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::sandbox::Canceller;

/// The signal that asked the run to stop (0: none yet).
static REQUESTED: AtomicI32 = AtomicI32::new(0);

extern "C" fn note(signal: libc::c_int) {
    REQUESTED.store(signal, Ordering::SeqCst);
}

/// Installs the handlers. A second signal of the same kind, once the run
/// is already stopping, ends gisclaw at once (exit 128 + signal).
pub fn install() {
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic (async-signal-safe).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = note as *const () as usize;
            action.sa_flags = libc::SA_RESTART | libc::SA_RESETHAND;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// The signal that asked the run to stop, if any.
pub fn requested() -> Option<i32> {
    match REQUESTED.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// `SIGTERM` and friends by number, for messages.
pub fn name(signal: i32) -> &'static str {
    match signal {
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// The exit code of a run stopped by `signal`: 128 + its number, as
/// shells report a process killed by it.
pub fn exit_code(signal: i32) -> std::process::ExitCode {
    std::process::ExitCode::from(128u8.saturating_add(signal as u8))
}

/// "stopped by SIGTERM" once a stop was requested.
pub fn stop_reason() -> Option<String> {
    requested().map(|signal| format!("stopped by {}", name(signal)))
}

/// Interrupts a session's running cell once gisclaw is signalled to stop,
/// so a run ends within a cell's grace period instead of at the cell's
/// timeout. Stops watching when dropped.
pub struct CellStopper {
    done: Arc<AtomicBool>,
}

impl CellStopper {
    /// Watches for a stop request (a signal) on a thread of its own.
    pub fn start(canceller: Canceller) -> CellStopper {
        CellStopper::watch(canceller, || requested().is_some())
    }

    /// Interrupts the running cell whenever `should_stop` says so (chat
    /// passes its Ctrl-C flag).
    pub fn watch(
        canceller: Canceller,
        should_stop: impl Fn() -> bool + Send + 'static,
    ) -> CellStopper {
        let done = Arc::new(AtomicBool::new(false));
        let watching = done.clone();
        std::thread::spawn(move || {
            while !watching.load(Ordering::SeqCst) {
                if should_stop() {
                    canceller.cancel();
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        CellStopper { done }
    }
}

impl Drop for CellStopper {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
    }
}
