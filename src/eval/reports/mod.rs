//! Reports of finished eval folders. Each suite kind's report produces a
//! [`document::Document`] (tables, text, charts), which [`document`]
//! renders to markdown, CSV and HTML; the task suite's also writes its
//! JSON, charts and per-run pages.

pub mod inspect_log;
pub mod step;
pub mod task;
pub mod unit;
