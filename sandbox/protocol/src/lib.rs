//! The contract between `gisclaw` (the agent process) and `gisclaw-worker`
//! (the process that embeds CPython).
//!
//! One concern per module:
//! - [`frame`]: length-prefixed JSON frames on a byte stream;
//! - [`messages`]: what travels in those frames;
//! - [`policy`]: the confinement policy, serialised once by the agent and
//!   applied in exactly one place by the worker;
//! - [`fdpass`]: handing a session socket to the zygote (SCM_RIGHTS);
//! - [`waiting`]: waiting for the peer without sleeping through a short
//!   answer.

// Both processes link this crate: it neither panics on a result nor prints.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::print_stdout,
        clippy::print_stderr
    )
)]

pub mod fdpass;
pub mod frame;
pub mod messages;
pub mod policy;
pub mod waiting;

pub use frame::{read_frame, write_frame, FrameBuffer, FrameError, MAX_FRAME_BYTES};
pub use messages::*;
pub use policy::{ConfinementPolicy, ConfinementReport, LayerStatus};
