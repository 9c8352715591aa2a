//! Live output: what a running cell writes to `sys.stdout` and
//! `sys.stderr`, sent to the agent while it runs, as
//! [`SessionResponse::Output`] frames.
//!
//! The cell's capture ([`crate::capture::Bounded`]) offers each write here
//! while a cell runs; a flusher thread sends what gathered every
//! [`FLUSH_EVERY`] on a clone of the session's socket, so a cell that
//! prints a million lines costs a lock and a copy per write, not a frame.
//! Only the first [`LIVE_CAP`] bytes of a cell are sent (the cell's result
//! keeps its bounded start and end as before). The flusher is the only
//! writer of the socket while the cell runs and is joined before the
//! cell's result is written, so frames never interleave. A process the
//! cell forks stops offering and closes the clone (see
//! [`in_forked_child`]).

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use gisclaw_protocol::{write_frame, OutputStream, SessionResponse};

/// How often what a cell wrote is sent.
pub const FLUSH_EVERY: Duration = Duration::from_millis(100);

/// Bytes of one cell's output sent live at most.
pub const LIVE_CAP: usize = 256 * 1024;

/// Whether a cell is running with live output on.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The flusher's copy of the socket, closed by a forked child.
static CLONE_FD: AtomicI32 = AtomicI32::new(-1);

/// What gathered since the last flush.
static PENDING: Mutex<Pending> = Mutex::new(Pending {
    parts: Vec::new(),
    taken: 0,
    capped: false,
});

/// Writes not sent yet, in order, one part per run of writes to one stream.
struct Pending {
    parts: Vec<(OutputStream, String)>,
    /// Bytes of this cell offered so far (sent or pending).
    taken: usize,
    /// Whether the cap was reached (nothing more is taken).
    capped: bool,
}

/// Offers a write of the running cell; a no-op when no cell streams.
pub fn offer(stream: OutputStream, text: &str) {
    if !ACTIVE.load(Ordering::Relaxed) || text.is_empty() {
        return;
    }
    let Ok(mut pending) = PENDING.lock() else {
        return;
    };
    if pending.capped {
        return;
    }
    let room = LIVE_CAP.saturating_sub(pending.taken);
    let mut text = text;
    let mut capped = false;
    if text.len() > room {
        let mut cut = room;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text = &text[..cut];
        capped = true;
    }
    pending.taken += text.len();
    match pending.parts.last_mut() {
        Some((s, part)) if *s == stream => part.push_str(text),
        _ => pending.parts.push((stream, text.to_string())),
    }
    if capped {
        pending.capped = true;
        // No more offers: the rest of the cell costs no lock.
        ACTIVE.store(false, Ordering::Relaxed);
        pending.parts.push((
            OutputStream::Stderr,
            format!(
                "\n[live output stops after {} KiB; the cell's result keeps its start and end]\n",
                LIVE_CAP / 1024
            ),
        ));
    }
}

/// The flusher of one cell: stop it with [`Flusher::finish`] before the
/// cell's result is written.
pub struct Flusher {
    thread: Option<JoinHandle<()>>,
    stop: Arc<(Mutex<bool>, Condvar)>,
}

/// Turns live output on for the cell about to run, sending on a clone of
/// `socket`; `None` (no live output, the cell runs as before) when the
/// socket cannot be cloned or no thread can be started.
pub fn start(socket: &UnixStream) -> Option<Flusher> {
    let mut clone = socket.try_clone().ok()?;
    if let Ok(mut pending) = PENDING.lock() {
        pending.parts.clear();
        pending.taken = 0;
        pending.capped = false;
    }
    let stop = Arc::new((Mutex::new(false), Condvar::new()));
    let flag = Arc::clone(&stop);
    CLONE_FD.store(clone.as_raw_fd(), Ordering::SeqCst);
    let thread = std::thread::Builder::new()
        .name("live-output".into())
        .spawn(move || {
            let (lock, wake) = &*flag;
            loop {
                let stopping = match lock.lock() {
                    Ok(guard) => match wake.wait_timeout(guard, FLUSH_EVERY) {
                        Ok((guard, _)) => *guard,
                        Err(_) => true,
                    },
                    Err(_) => true,
                };
                if !send_pending(&mut clone) || stopping {
                    break;
                }
            }
            CLONE_FD.store(-1, Ordering::SeqCst);
            // The clone is closed here, by its owner.
            drop(clone);
        })
        .ok()?;
    ACTIVE.store(true, Ordering::SeqCst);
    Some(Flusher {
        thread: Some(thread),
        stop,
    })
}

/// Sends what gathered; false when the socket refused it.
fn send_pending(socket: &mut UnixStream) -> bool {
    let parts = match PENDING.lock() {
        Ok(mut pending) => std::mem::take(&mut pending.parts),
        Err(_) => return false,
    };
    parts.into_iter().all(|(stream, text)| {
        write_frame(socket, &SessionResponse::Output { stream, text }).is_ok()
    })
}

impl Flusher {
    /// Turns live output off, sends what is left and waits for the flusher.
    pub fn finish(mut self) {
        ACTIVE.store(false, Ordering::SeqCst);
        let (lock, wake) = &*self.stop;
        if let Ok(mut stopping) = lock.lock() {
            *stopping = true;
        }
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// In a process the cell forked (an `atfork` child handler): no more
/// offers, and the flusher's socket clone is closed (the flusher thread
/// does not exist in the child).
pub fn in_forked_child() {
    ACTIVE.store(false, Ordering::SeqCst);
    let fd = CLONE_FD.swap(-1, Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: close of a descriptor number this process inherited; the
        // child has no thread that owns it.
        unsafe { libc::close(fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gisclaw_protocol::read_frame;

    #[test]
    fn writes_arrive_in_order_as_frames_and_stop_at_the_cap() {
        let (worker, mut agent) = UnixStream::pair().unwrap();
        // The agent reads while the cell runs, as the session does.
        let reader = std::thread::spawn(move || {
            let mut got: Vec<(OutputStream, String)> = Vec::new();
            while let Ok(SessionResponse::Output { stream, text }) = read_frame(&mut agent) {
                match got.last_mut() {
                    Some((s, t)) if *s == stream => t.push_str(&text),
                    _ => got.push((stream, text)),
                }
            }
            got
        });
        let flusher = start(&worker).unwrap();
        offer(OutputStream::Stdout, "one\n");
        offer(OutputStream::Stdout, "two\n");
        offer(OutputStream::Stderr, "warn\n");
        offer(OutputStream::Stdout, &"x".repeat(LIVE_CAP));
        offer(OutputStream::Stdout, "never sent\n");
        flusher.finish();
        // Nothing is offered once the cell is done.
        offer(OutputStream::Stdout, "after\n");
        drop(worker);
        let got = reader.join().unwrap();
        assert_eq!(got[0], (OutputStream::Stdout, "one\ntwo\n".to_string()));
        assert_eq!(got[1], (OutputStream::Stderr, "warn\n".to_string()));
        assert_eq!(got[2].1.len(), LIVE_CAP - 13);
        assert!(
            got[3].1.contains("live output stops after 256 KiB"),
            "{:?}",
            got[3]
        );
        assert_eq!(got.len(), 4);
    }
}
