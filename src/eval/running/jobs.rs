//! The one job runner of the three suites (task, step, unit): plan the
//! items, leave out those an earlier invocation recorded, and run the rest
//! N at once, each worker thread with state of its own (a sandbox session
//! kept across items, say). A stop request (SIGTERM, SIGINT, SIGHUP) ends
//! the taking of new items; the items in flight end on their own terms.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::bench::data::DataError;
use crate::llm::LlmError;
use crate::sandbox::SandboxError;

/// Why an item of a suite (a task run, a step-task run, a unit case) has
/// no record; the item runs again on `--resume`.
#[derive(Debug, thiserror::Error)]
pub enum ItemError {
    /// `--replay DIR` has no recording for the item.
    #[error("{}: no recording for {item}", dir.display())]
    NoRecording {
        /// The recordings folder.
        dir: PathBuf,
        /// The item, as `task (arch run N)`.
        item: String,
    },
    /// The model backend could not be opened or failed.
    #[error(transparent)]
    Backend(#[from] LlmError),
    /// The task's data could not be generated.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The sandbox failed.
    #[error("sandbox: {0}")]
    Sandbox(#[from] SandboxError),
    /// A file or folder of the item cannot be written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The agent run ended in an error of its own (its reason).
    #[error("{0}")]
    Run(String),
    /// A stop request (a signal) cut the item short.
    #[error("{0}")]
    Stopped(String),
}

impl ItemError {
    /// Maps an I/O error on `path`.
    pub fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ItemError + '_ {
        move |source| ItemError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// [`ItemError::Stopped`] when a stop was requested: an item cut short
    /// gets no record.
    pub fn check_stop() -> Result<(), ItemError> {
        match crate::interrupt::stop_reason() {
            Some(reason) => Err(ItemError::Stopped(reason)),
            None => Ok(()),
        }
    }
}

/// What is left to run of a suite, and how much was recorded before.
#[derive(Debug)]
pub struct Plan<T> {
    /// The items without a record, in order.
    pub todo: Vec<T>,
    /// How many items already have a record.
    pub done: usize,
}

impl<T> Plan<T> {
    /// Keeps, in order, the items that `recorded` says have no record yet.
    pub fn new(items: impl IntoIterator<Item = T>, recorded: impl Fn(&T) -> bool) -> Plan<T> {
        let mut todo = Vec::new();
        let mut done = 0;
        for item in items {
            if recorded(&item) {
                done += 1;
            } else {
                todo.push(item);
            }
        }
        Plan { todo, done }
    }

    /// Every item of the suite, recorded or not.
    pub fn total(&self) -> usize {
        self.todo.len() + self.done
    }
}

/// What a suite's run tells its front end, item by item: the one event
/// stream of the task, step and unit suites (the agent's own steps inside
/// an item go to its transcript, as [`crate::agent::events::AgentEvent`]s).
#[derive(Debug, Clone)]
pub enum SuiteEvent<R> {
    /// The gold of a task ran or was found (task suite only).
    Gold {
        /// Task id.
        task: String,
        /// Problems of the gold run (empty when it passed).
        problems: Vec<String>,
        /// Its seconds, when this process ran it (`None`: found made).
        ran: Option<f64>,
    },
    /// The items to run: `total` in the suite, `done` recorded before.
    Planned {
        /// Every item.
        total: usize,
        /// Items recorded by an earlier invocation.
        done: usize,
    },
    /// An item ended and its record is written.
    Recorded(Box<R>),
    /// An item could not run; it has no record.
    Failed {
        /// The item (`task arch run N`, `library/case`).
        item: String,
        /// Why.
        reason: String,
    },
}

/// What the progress display shows of a record.
pub trait ItemRecord {
    /// Whether the item succeeded (the tally of successes).
    fn succeeded(&self) -> bool;
    /// Prompt + completion tokens it spent.
    fn tokens(&self) -> u64;
    /// One line saying how it went.
    fn summary(&self) -> String;
}

/// Runs `plan.todo` on `jobs` threads (at least one) and tells `events`
/// the plan and each item's outcome as soon as it is known. Worker `w`
/// starts with `init(w)`; `work` runs one item with that worker's state and
/// writes its record; `name` names an item in a failure. Returns how many
/// items failed.
pub fn run_all<T, S, R>(
    plan: Plan<T>,
    jobs: usize,
    init: impl Fn(usize) -> S + Sync,
    work: impl Fn(&mut S, &T) -> Result<R, ItemError> + Sync,
    name: impl Fn(&T) -> String + Sync,
    events: &(dyn Fn(SuiteEvent<R>) + Sync),
) -> usize
where
    T: Send,
{
    run_all_until(plan, jobs, init, work, name, events, &|| false)
}

/// [`run_all`] that starts no further item once `halt` says so (a spent
/// budget): items already running finish and keep their records, the rest
/// stay unrecorded for `--resume`.
pub fn run_all_until<T, S, R>(
    plan: Plan<T>,
    jobs: usize,
    init: impl Fn(usize) -> S + Sync,
    work: impl Fn(&mut S, &T) -> Result<R, ItemError> + Sync,
    name: impl Fn(&T) -> String + Sync,
    events: &(dyn Fn(SuiteEvent<R>) + Sync),
    halt: &(dyn Fn() -> bool + Sync),
) -> usize
where
    T: Send,
{
    events(SuiteEvent::Planned {
        total: plan.total(),
        done: plan.done,
    });
    let queue = Mutex::new(VecDeque::from(plan.todo));
    let failed = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for worker in 0..jobs.max(1) {
            let (queue, failed, init, work, name) = (&queue, &failed, &init, &work, &name);
            scope.spawn(move || {
                let mut state = init(worker);
                loop {
                    if crate::interrupt::requested().is_some() || halt() {
                        break;
                    }
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                    let Some(item) = next else { break };
                    match work(&mut state, &item) {
                        Ok(record) => events(SuiteEvent::Recorded(Box::new(record))),
                        Err(e) => {
                            failed.fetch_add(1, Ordering::SeqCst);
                            events(SuiteEvent::Failed {
                                item: name(&item),
                                reason: e.to_string(),
                            });
                        }
                    }
                }
            });
        }
    });
    failed.into_inner()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn a_plan_leaves_out_recorded_items_in_order() {
        let plan = Plan::new(1..=6, |n| n % 3 == 0);
        assert_eq!(
            (plan.todo.clone(), plan.done, plan.total()),
            (vec![1, 2, 4, 5], 2, 6)
        );
    }

    #[test]
    fn every_item_runs_once_with_its_workers_state_and_failures_are_counted() {
        let seen = Mutex::new(Vec::new());
        let plan = Plan::new(1..=22, |n| *n > 20);
        let failed = run_all(
            plan,
            3,
            |worker| (worker, 0usize),
            |(_, count), n: &i32| {
                *count += 1;
                if n % 5 == 0 {
                    Err(ItemError::Run(format!("{n} fails")))
                } else {
                    Ok(n * 10)
                }
            },
            |n| format!("item {n}"),
            &|event| {
                let line = match event {
                    SuiteEvent::Planned { total, done } => format!("planned {total} {done}"),
                    SuiteEvent::Recorded(n) => format!("recorded {n}"),
                    SuiteEvent::Failed { item, reason } => format!("{item}: {reason}"),
                    SuiteEvent::Gold { .. } => "gold".into(),
                };
                seen.lock().unwrap().push(line);
            },
        );
        assert_eq!(failed, 4);
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 21);
        assert_eq!(seen[0], "planned 22 2");
        assert!(seen.contains(&"recorded 10".to_string()));
        assert!(seen.contains(&"item 5: 5 fails".to_string()));
        assert_eq!(seen.iter().filter(|l| l.contains("fails")).count(), 4);
    }
}
