//! Reports of finished eval folders. Each suite kind's report produces a
//! [`document::Document`] (tables, text, charts), which [`document`]
//! renders to markdown, CSV and HTML; the task suite's also writes its
//! JSON, charts and per-run pages.

pub mod document;
pub mod html;
pub mod inspect_log;
pub mod labels;
pub mod render;
pub mod step;
pub mod task;
pub mod unit;
