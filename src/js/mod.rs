//! The confined JavaScript runtime (GeoJSEval's subject): Node with the
//! five libraries GeoJSEval tests — Turf.js, JSTS, Geolib, Leaflet and
//! OpenLayers — and jsdom for the DOM the last two need, pinned by
//! `sandbox/js/package-lock.json` and installed by `make setup`.
//!
//! - [`serve`]: `gisclaw __js`, which confines itself the reader's way and
//!   becomes Node running `sandbox/js/worker.js`;
//! - [`worker`]: the host's side: start, one bounded JSON line per call
//!   each way, a time limit, and a fresh worker after one is lost.
//!
//! The worker is warm: its libraries are compiled once, and each call gets
//! a fresh realm (a jsdom window) with them loaded, so a call costs
//! milliseconds, not a Node start (measured in `benches/js_call.rs`).
//! JavaScript's realms are no security boundary: the confinement is the
//! process's, and the host trusts nothing the worker says beyond one
//! bounded answer line per call.

pub mod serve;
pub mod worker;

pub use serve::serve;
pub use worker::{
    CallOutcome, Indirect, JsAnswer, JsCall, JsConfig, JsError, JsRuntime, JsWorker, Lost,
    Rendered, Thrown, WorkerInfo,
};
