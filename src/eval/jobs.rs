//! The one job runner of the three suites (task, step, unit): plan the
//! items, leave out those an earlier invocation recorded, and run the rest
//! N at once, each worker thread with state of its own (a sandbox session
//! kept across items, say). A stop request (SIGTERM, SIGINT, SIGHUP) ends
//! the taking of new items; the items in flight end on their own terms.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

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

/// Runs `todo` on `jobs` threads (at least one). Worker `w` starts with
/// `init(w)`; `work` runs one item with that worker's state, and
/// `finished` hears each item's result as soon as it is known. Returns how
/// many items failed.
pub fn run_all<T, S, R>(
    todo: Vec<T>,
    jobs: usize,
    init: impl Fn(usize) -> S + Sync,
    work: impl Fn(&mut S, &T) -> Result<R, String> + Sync,
    finished: impl Fn(&T, Result<R, String>) + Sync,
) -> usize
where
    T: Send,
{
    let queue = Mutex::new(VecDeque::from(todo));
    let failed = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for worker in 0..jobs.max(1) {
            let (queue, failed, init, work, finished) = (&queue, &failed, &init, &work, &finished);
            scope.spawn(move || {
                let mut state = init(worker);
                loop {
                    if crate::interrupt::requested().is_some() {
                        break;
                    }
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                    let Some(item) = next else { break };
                    let result = work(&mut state, &item);
                    if result.is_err() {
                        failed.fetch_add(1, Ordering::SeqCst);
                    }
                    finished(&item, result);
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
        let failed = run_all(
            (1..=20).collect(),
            3,
            |worker| (worker, 0usize),
            |(_, count), n: &i32| {
                *count += 1;
                if n % 5 == 0 {
                    Err(format!("{n} fails"))
                } else {
                    Ok(n * 10)
                }
            },
            |n, result| seen.lock().unwrap().push((*n, result)),
        );
        assert_eq!(failed, 4);
        let mut seen = seen.into_inner().unwrap();
        seen.sort_by_key(|(n, _)| *n);
        assert_eq!(seen.len(), 20);
        assert_eq!(seen[0], (1, Ok(10)));
        assert_eq!(seen[4], (5, Err("5 fails".to_string())));
    }
}
