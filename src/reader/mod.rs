//! The confined reader: every parse of bytes that a cell wrote or that a
//! data folder brought happens in a process holding no more rights than
//! the code that wrote them (the design browsers and Codex use).
//!
//! gisclaw starts itself as `gisclaw __read` ([`serve`]) for one request
//! about one folder. The reader sees that folder alone, read-only, at
//! [`VIEW_ROOT`] (plus the system directories GDAL needs), as the
//! sandbox's user, with no network, no stdin and no terminal, under
//! rlimits and a wall-clock limit, and answers typed summaries (JSON, with
//! raster values as a bounded binary part). gisclaw's own process never
//! opens such a file with GDAL, an image decoder or a Parquet reader.
//! Eval scoring reads the candidate's outputs and the gold in two readers:
//! the gold is never in the candidate's view.
//!
//! A new process per request costs a few tens of milliseconds (measured
//! in `benches/card_large.rs` and `benches/agent_step.rs`); no state of
//! one hostile file carries over to the next.

mod request;
pub(crate) mod serve;
mod spawn;

pub use request::{Envelope, Reply, Request};
pub use serve::{serve, Handler};
pub use spawn::{ask, read, ReadError, Root, Standby};

/// Where the reader sees the folder it reads, when it has a mount
/// namespace.
pub const VIEW_ROOT: &str = "/gisclaw-read";

/// The largest request the reader takes.
pub const MAX_REQUEST_BYTES: u64 = 16 << 20;

/// The largest JSON part of an answer the host takes.
pub const MAX_ANSWER_JSON: u64 = 256 << 20;

/// The largest binary part of an answer the host takes (raster values
/// scored: 200 million 8-byte values).
pub const MAX_ANSWER_BINARY: u64 = 1_600_000_000 + 64;

/// The start of every answer.
const MAGIC: &[u8; 4] = b"GCR1";

/// An answer as written: magic, JSON length, JSON, binary length, binary.
fn answer_frame(reply: &Reply, binary: &[u8]) -> Result<Vec<u8>, String> {
    let json = serde_json::to_vec(reply).map_err(|e| format!("the answer: {e}"))?;
    let mut frame = Vec::with_capacity(json.len() + binary.len() + 20);
    frame.extend_from_slice(MAGIC);
    frame.extend_from_slice(&(json.len() as u64).to_le_bytes());
    frame.extend_from_slice(&json);
    frame.extend_from_slice(&(binary.len() as u64).to_le_bytes());
    frame.extend_from_slice(binary);
    Ok(frame)
}
