//! Length-prefixed JSON framing: a 4-byte big-endian length, then that many
//! bytes of UTF-8 JSON. Frames above [`MAX_FRAME_BYTES`] are refused on both
//! sides, so a misbehaving peer cannot make the reader allocate without bound.

use std::io::{self, Read, Write};

use serde::{de::DeserializeOwned, Serialize};

/// Largest frame either side accepts (16 MiB). Cell output is truncated by the
/// worker long before this; the cap is a guard, not a budget.
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// What can go wrong while reading or writing a frame.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The peer closed the stream cleanly between frames.
    #[error("peer closed the connection")]
    Closed,
    /// The stream failed, or ended in the middle of a frame.
    #[error("i/o error on the sandbox channel: {0}")]
    Io(#[from] io::Error),
    /// A frame announced more bytes than [`MAX_FRAME_BYTES`].
    #[error("frame of {0} bytes exceeds the {MAX_FRAME_BYTES}-byte limit")]
    TooLarge(usize),
    /// The frame's bytes were not the JSON message expected.
    #[error("malformed message on the sandbox channel: {0}")]
    Json(#[from] serde_json::Error),
}

/// Serialises `msg` and writes it as one frame, then flushes.
pub fn write_frame<W: Write, T: Serialize>(w: &mut W, msg: &T) -> Result<(), FrameError> {
    let body = serde_json::to_vec(msg)?;
    if body.len() > MAX_FRAME_BYTES {
        return Err(FrameError::TooLarge(body.len()));
    }
    let len = u32::try_from(body.len()).map_err(|_| FrameError::TooLarge(body.len()))?;
    let mut buf = Vec::with_capacity(4 + body.len());
    buf.extend_from_slice(&len.to_be_bytes());
    buf.extend_from_slice(&body);
    w.write_all(&buf)?;
    w.flush()?;
    Ok(())
}

/// Reads one frame and parses it. A clean end of stream before the length
/// prefix is [`FrameError::Closed`]; an end inside a frame is an I/O error.
pub fn read_frame<R: Read, T: DeserializeOwned>(r: &mut R) -> Result<T, FrameError> {
    let mut len_buf = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut len_buf[got..]) {
            Ok(0) if got == 0 => return Err(FrameError::Closed),
            Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        }
    }
    let len = u32::from_be_bytes(len_buf) as usize;
    if len > MAX_FRAME_BYTES {
        return Err(FrameError::TooLarge(len));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    Ok(serde_json::from_slice(&body)?)
}

/// Frames arriving in pieces, for a reader that must not block inside a
/// frame (the agent: a hostile cell may write half a frame to the session
/// socket and stall, and the cell's deadline must still hold).
#[derive(Debug, Default)]
pub struct FrameBuffer {
    /// Bytes received and not yet returned as a frame.
    bytes: Vec<u8>,
}

impl FrameBuffer {
    /// Appends bytes read from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    /// Whether part of a frame is waiting for the rest of it.
    pub fn holds_partial_frame(&self) -> bool {
        !self.bytes.is_empty()
    }

    /// The first complete frame, parsed, once all of it has arrived; `None`
    /// while it is incomplete. An oversized announcement is refused as soon
    /// as its length prefix is in, before any of its body is kept.
    pub fn take_frame<T: DeserializeOwned>(&mut self) -> Option<Result<T, FrameError>> {
        let prefix: [u8; 4] = self.bytes.get(..4)?.try_into().ok()?;
        let len = u32::from_be_bytes(prefix) as usize;
        if len > MAX_FRAME_BYTES {
            self.bytes.clear();
            return Some(Err(FrameError::TooLarge(len)));
        }
        let body = self.bytes.get(4..4 + len)?;
        let parsed = serde_json::from_slice(body).map_err(FrameError::from);
        self.bytes.drain(..4 + len);
        Some(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Msg {
        text: String,
    }

    #[test]
    fn round_trips_several_frames() {
        let mut buf = Vec::new();
        write_frame(&mut buf, &Msg { text: "a".into() }).unwrap();
        write_frame(
            &mut buf,
            &Msg {
                text: "ünïcode".into(),
            },
        )
        .unwrap();
        let mut r = &buf[..];
        assert_eq!(read_frame::<_, Msg>(&mut r).unwrap().text, "a");
        assert_eq!(read_frame::<_, Msg>(&mut r).unwrap().text, "ünïcode");
        assert!(matches!(
            read_frame::<_, Msg>(&mut r),
            Err(FrameError::Closed)
        ));
    }

    #[test]
    fn refuses_oversized_announcement_without_allocating() {
        let mut buf = (u32::MAX).to_be_bytes().to_vec();
        buf.extend_from_slice(b"{}");
        let err = read_frame::<_, Msg>(&mut &buf[..]).unwrap_err();
        assert!(matches!(err, FrameError::TooLarge(_)), "{err}");
    }

    #[test]
    fn truncated_frame_is_an_io_error_not_a_clean_close() {
        let mut buf = Vec::new();
        write_frame(
            &mut buf,
            &Msg {
                text: "hello".into(),
            },
        )
        .unwrap();
        buf.truncate(buf.len() - 2);
        let err = read_frame::<_, Msg>(&mut &buf[..]).unwrap_err();
        assert!(matches!(err, FrameError::Io(_)), "{err}");
    }

    #[test]
    fn frame_buffer_returns_a_frame_once_all_of_it_arrived() {
        let mut wire = Vec::new();
        write_frame(
            &mut wire,
            &Msg {
                text: "first".into(),
            },
        )
        .unwrap();
        write_frame(
            &mut wire,
            &Msg {
                text: "zwëite".into(),
            },
        )
        .unwrap();
        let mut buffer = FrameBuffer::default();
        let mut seen = Vec::new();
        // One byte at a time: a frame is returned only when it is whole.
        for byte in &wire {
            buffer.push(std::slice::from_ref(byte));
            while let Some(frame) = buffer.take_frame::<Msg>() {
                seen.push(frame.unwrap().text);
            }
        }
        assert_eq!(seen, ["first", "zwëite"]);
        assert!(!buffer.holds_partial_frame());
        buffer.push(&wire[..6]);
        assert!(buffer.take_frame::<Msg>().is_none());
        assert!(buffer.holds_partial_frame());
    }

    #[test]
    fn frame_buffer_refuses_an_oversized_announcement_at_its_prefix() {
        let mut buffer = FrameBuffer::default();
        buffer.push(&u32::MAX.to_be_bytes());
        assert!(matches!(
            buffer.take_frame::<Msg>(),
            Some(Err(FrameError::TooLarge(_)))
        ));
        let mut wire = Vec::new();
        write_frame(&mut wire, &Msg { text: "x".into() }).unwrap();
        wire[5] = b'!';
        buffer.push(&wire);
        assert!(matches!(
            buffer.take_frame::<Msg>(),
            Some(Err(FrameError::Json(_)))
        ));
        assert!(!buffer.holds_partial_frame());
    }
}
