//! Running an eval: the plan of a `gisclaw eval` call, the runs of each
//! suite kind, their scored records and the sharded folder's bookkeeping.
//! Imports [`super::metrics`], never [`super::reports`].

pub mod claim;
pub mod geojs_eval;
pub mod jobs;
pub mod plan;
pub mod record;
pub mod reproduce;
pub mod runner;
pub mod shard;
pub mod status;
pub mod step_eval;
pub mod unit_eval;
