//! Waiting for the session's answer on its socket: without blocking inside
//! a frame (a hostile cell may write half a frame and stall; the cell's
//! deadline must still hold), and without sleeping through a short answer.
//!
//! A process that blocks in `recv` lets its CPU go idle, and on a virtual
//! machine waking an idle CPU is slow: measured on the 2-core VM the
//! project is developed on, a bare round trip between two processes costs
//! 40–45 µs when both sleep, 6–8 µs when both poll. So the agent first
//! polls for [`SPIN_BEFORE_SLEEP`] after sending a request (most quick
//! cells answer within it: an inspection, a cell replayed from the
//! journal), then sleeps in `poll(2)`. This took 25–30 µs off a trivial
//! cell's round trip; a longer cell costs at most that window of CPU. (The
//! same poll on the worker's side, waiting for the next request, measured
//! no gain and is not done.)
//!
//! The poll yields the CPU (`sched_yield`) at every pass rather than
//! spinning in place: when the scheduler puts the worker on the agent's
//! CPU (always, on a one-CPU machine), a tight spin kept the worker from
//! running until the window ended. Measured on the 2-core VM: a trivial
//! cell after the example's inputs were read took ~300 µs in a third of
//! the sessions (all of them when pinned to one CPU) and ~110 µs in the
//! rest; with the yield, 100–150 µs in all, pinned or not.

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use crate::frame::FrameBuffer;

/// How long the agent polls for an answer before it sleeps.
pub const SPIN_BEFORE_SLEEP: Duration = Duration::from_micros(200);

/// What a non-blocking read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// This many bytes were added to the buffer.
    Bytes(usize),
    /// Nothing is waiting on the socket.
    Nothing,
    /// The peer closed its end (after the bytes already buffered).
    End,
}

/// Moves whatever is waiting on `socket` into `buffer`, without blocking.
/// Stops at a short read: a peer that wrote and then closed is seen to
/// have ended at the next call.
pub fn receive_available(socket: &UnixStream, buffer: &mut FrameBuffer) -> io::Result<Received> {
    let mut chunk = [0u8; 64 * 1024];
    let mut total = 0;
    loop {
        // SAFETY: reads at most `chunk.len()` bytes into the local array;
        // MSG_DONTWAIT makes it return at once.
        let got = unsafe {
            libc::recv(
                socket.as_raw_fd(),
                chunk.as_mut_ptr().cast(),
                chunk.len(),
                libc::MSG_DONTWAIT,
            )
        };
        match got {
            0 => return Ok(Received::End),
            n if n > 0 => {
                let n = n as usize;
                buffer.push(&chunk[..n]);
                total += n;
                // A short read took all that was waiting: asking again
                // would only be told so (one system call per answer saved).
                if n < chunk.len() {
                    return Ok(Received::Bytes(total));
                }
            }
            _ => {
                let err = io::Error::last_os_error();
                match err.kind() {
                    io::ErrorKind::Interrupted => continue,
                    io::ErrorKind::WouldBlock if total > 0 => return Ok(Received::Bytes(total)),
                    io::ErrorKind::WouldBlock => return Ok(Received::Nothing),
                    _ => return Err(err),
                }
            }
        }
    }
}

/// Blocks until `socket` can be read, or `timeout` passes (rounded up to
/// a millisecond): true when it can be read.
pub fn wait_readable(socket: &UnixStream, timeout: Duration) -> io::Result<bool> {
    let millis = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
    let mut poll = libc::pollfd {
        fd: socket.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    let ready = unsafe { libc::poll(&mut poll, 1, millis) };
    match ready {
        n if n > 0 => Ok(true),
        0 => Ok(false),
        _ => {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(err)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::write_frame;
    use std::io::Write;

    #[test]
    fn the_end_of_the_stream_is_seen_after_the_bytes_before_it() {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let mut buffer = FrameBuffer::default();
        theirs.write_all(b"xy").unwrap();
        drop(theirs);
        assert!(wait_readable(&ours, Duration::from_secs(5)).unwrap());
        // The bytes first (a short read returns at once), then the end.
        assert_eq!(
            receive_available(&ours, &mut buffer).unwrap(),
            Received::Bytes(2)
        );
        assert_eq!(
            receive_available(&ours, &mut buffer).unwrap(),
            Received::End
        );
        assert!(buffer.holds_partial_frame());
    }

    #[test]
    fn frames_are_received_without_blocking() {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let mut buffer = FrameBuffer::default();
        assert_eq!(
            receive_available(&ours, &mut buffer).unwrap(),
            Received::Nothing
        );
        assert!(!wait_readable(&ours, Duration::from_millis(1)).unwrap());
        write_frame(&mut theirs, &vec!["a"; 50_000]).unwrap();
        assert!(wait_readable(&ours, Duration::from_secs(5)).unwrap());
        let mut frame = None;
        while frame.is_none() {
            receive_available(&ours, &mut buffer).unwrap();
            frame = buffer.take_frame::<Vec<String>>();
        }
        assert_eq!(frame.unwrap().unwrap().len(), 50_000);
    }
}
