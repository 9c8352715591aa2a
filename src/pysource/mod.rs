//! Reading Python source without running it: its [`tokens`] and the names
//! it [`references`]. Used by the eval's code metrics and by the benchmark
//! labels and coverage, so it depends on neither.

pub mod references;
pub mod tokens;
