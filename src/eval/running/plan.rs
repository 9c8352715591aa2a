//! What an eval asks, checked before anything runs: which options go with
//! which kind of suite, whether the model source can answer every run, and
//! the architectures an `--arch` choice names. The command line parses;
//! this decides; [`crate::eval::running::runner`] runs.

use crate::agent::run::Arch;
use crate::bench::SuiteKind;
use crate::task::LoadedTask;

use crate::eval::running::runner::BackendSource;

/// The options of an eval that only some suite kinds take.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Asked {
    /// `--gold-prefix`.
    pub gold_prefix: bool,
    /// `--interventions K`.
    pub interventions: usize,
    /// `--html`.
    pub html: bool,
    /// `--inspect-log`.
    pub inspect_log: bool,
    /// `--max-cost USD`.
    pub max_cost: Option<f64>,
    /// `--shard I/N` given.
    pub shard: bool,
    /// `--runs`.
    pub runs: usize,
}

/// An eval that cannot be carried out as asked, said in one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

fn refuse(text: impl Into<String>) -> PlanError {
    PlanError(text.into())
}

/// Whether `asked` suits a suite of `kind`.
pub fn check(kind: SuiteKind, asked: &Asked) -> Result<(), PlanError> {
    let steps = kind == SuiteKind::Steps;
    let tasks = kind == SuiteKind::Tasks;
    if asked.gold_prefix && !steps {
        return Err(refuse(
            "--gold-prefix is for step suites (e.g. benchmarks/geocode)",
        ));
    }
    if asked.interventions > 0 && !steps {
        return Err(refuse(
            "--interventions is for step suites (e.g. benchmarks/geocode)",
        ));
    }
    if asked.inspect_log && !tasks {
        return Err(refuse(
            "--inspect-log is for task suites (e.g. benchmarks/geoanalyst)",
        ));
    }
    if let Some(usd) = asked.max_cost {
        if !(usd.is_finite() && usd > 0.0) {
            return Err(refuse(format!(
                "--max-cost {usd}: give a positive number of USD"
            )));
        }
        if !tasks {
            return Err(refuse(
                "--max-cost is for task suites (e.g. benchmarks/geoanalyst)",
            ));
        }
    }
    if asked.shard && !tasks {
        return Err(refuse(
            "--shard is for task suites (e.g. benchmarks/geoanalyst); a unit, GeoJSEval or step suite runs in one process (-j N runs its items in parallel)",
        ));
    }
    if tasks && asked.runs == 0 {
        return Err(refuse("--runs must be at least 1"));
    }
    Ok(())
}

/// Whether `source` can answer every (task, arch, run) of a task suite's
/// eval: a gold for each task with `--replay-gold`, a recording for each
/// run with `--replay DIR`; a priced model with `--max-cost`.
pub fn check_source(
    tasks: &[LoadedTask],
    archs: &[Arch],
    runs: usize,
    source: &BackendSource,
    max_cost: Option<f64>,
) -> Result<(), PlanError> {
    if let (Some(_), BackendSource::Live(live)) = (max_cost, source) {
        if live.price.is_none() {
            return Err(refuse(format!(
                "--max-cost: the model `{}` has no known price: set one under [prices.\"{}\"] in the config (USD per million tokens), or leave --max-cost out",
                live.model, live.model
            )));
        }
    }
    for loaded in tasks {
        if matches!(source, BackendSource::Gold) && loaded.gold.is_none() {
            return Err(refuse(format!(
                "{}: --replay-gold: the task has no gold solution",
                loaded.path.display()
            )));
        }
        for &arch in archs {
            for run in 1..=runs {
                if let (BackendSource::Recorded(dir), None) =
                    (source, source.recording(&loaded.task.id, arch, run))
                {
                    let (id, arch) = (&loaded.task.id, arch.name());
                    return Err(refuse(format!(
                        "--replay {}: no recording for {id} {arch} run {run} ({id}.{arch}.{run}.jsonl, {id}.{arch}.jsonl or {id}.jsonl)",
                        dir.display(),
                    )));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_option_goes_with_its_suite_kinds_only() {
        let asked = |f: &dyn Fn(&mut Asked)| {
            let mut a = Asked {
                runs: 1,
                ..Asked::default()
            };
            f(&mut a);
            a
        };
        let all = [
            SuiteKind::Tasks,
            SuiteKind::Steps,
            SuiteKind::Unit,
            SuiteKind::Geojs,
        ];
        let takes = |a: &Asked| -> Vec<SuiteKind> {
            all.into_iter().filter(|k| check(*k, a).is_ok()).collect()
        };
        assert_eq!(takes(&asked(&|_| {})), all);
        assert_eq!(takes(&asked(&|a| a.gold_prefix = true)), [SuiteKind::Steps]);
        assert_eq!(takes(&asked(&|a| a.interventions = 2)), [SuiteKind::Steps]);
        // Every suite kind's report has its page.
        assert_eq!(takes(&asked(&|a| a.html = true)), all);
        for only_tasks in [
            asked(&|a| a.inspect_log = true),
            asked(&|a| a.max_cost = Some(1.0)),
            asked(&|a| a.shard = true),
        ] {
            assert_eq!(takes(&only_tasks), [SuiteKind::Tasks], "{only_tasks:?}");
        }
        // A budget must be a positive number, whatever the suite.
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = check(SuiteKind::Tasks, &asked(&|a| a.max_cost = Some(bad))).unwrap_err();
            assert!(err.0.contains("give a positive number of USD"), "{err}");
        }
        assert_eq!(
            check(SuiteKind::Tasks, &asked(&|a| a.runs = 0)),
            Err(PlanError("--runs must be at least 1".into()))
        );
    }
}
