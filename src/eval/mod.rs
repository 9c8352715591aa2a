//! Evaluation, in three layers that import only downwards:
//!
//! - [`metrics`]: pure scoring — L1 [`metrics::code`], [`metrics::codebleu`]
//!   and [`metrics::api`], L2 [`metrics::process`] and the optional
//!   [`metrics::llm_judge`], L3 [`metrics::output_score`] (with the
//!   [`metrics::vision_judge`] for images), the [`metrics::errors`]
//!   taxonomy, the [`metrics::stats`] and the figures per label
//!   ([`metrics::breakdown`]).
//! - [`running`]: `gisclaw eval` itself — which options go with which suite
//!   ([`running::plan`]), the task suite's runs ([`running::runner`]) and
//!   their scored [`running::record`], the unit and step suites
//!   ([`running::unit_eval`], [`running::step_eval`], GeoJSEval's
//!   [`running::geojs_eval`]), the one job runner ([`running::jobs`]), and
//!   sharded evals over a shared folder ([`running::shard`],
//!   [`running::claim`], [`running::status`]).
//! - [`reports`]: what a finished eval folder says — every report is a
//!   [`reports::document::Document`] of tables, text and charts rendered to
//!   markdown, CSV and HTML in one place; the task suite's
//!   ([`reports::task`]), the unit suite's ([`reports::unit`]), the step
//!   suite's ([`reports::step`]) and inspect_ai logs
//!   ([`reports::inspect_log`]).

pub mod metrics;
pub mod reports;
pub mod running;
