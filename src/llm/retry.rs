//! Retries with exponential backoff for model calls: timeouts, dropped or
//! refused connections, truncated bodies, HTTP 429 and 5xx are retried;
//! anything else (a wrong model name, a bad key) fails at once.

use std::future::Future;
use std::time::Duration;

/// How often and how patiently one model call is retried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all (1 = no retry).
    pub attempts: u32,
    /// Wait before the second attempt; doubles each time.
    pub initial: Duration,
    /// Longest wait between attempts.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: 5,
            initial: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait after failed attempt `n` (1-based).
    pub fn delay(&self, n: u32) -> Duration {
        let factor = 2u32.saturating_pow(n.saturating_sub(1).min(16));
        self.initial.saturating_mul(factor).min(self.max_delay)
    }

    /// Longest time all waits together can take.
    pub fn total_wait(&self) -> Duration {
        (1..self.attempts).map(|n| self.delay(n)).sum()
    }
}

/// One failed attempt.
#[derive(Debug, Clone)]
pub struct Failure {
    /// Whether trying again may help.
    pub transient: bool,
    /// What happened, in one line.
    pub message: String,
}

impl Failure {
    /// A failure worth retrying.
    pub fn transient(message: impl Into<String>) -> Failure {
        Failure {
            transient: true,
            message: message.into(),
        }
    }

    /// A failure that will not go away by retrying.
    pub fn permanent(message: impl Into<String>) -> Failure {
        Failure {
            transient: false,
            message: message.into(),
        }
    }
}

/// The final outcome after retries.
#[derive(Debug, Clone)]
pub struct GaveUp {
    /// Attempts made.
    pub attempts: u32,
    /// The last failure.
    pub last: Failure,
}

/// Runs `attempt` until it succeeds, fails permanently, or the policy's
/// attempts are spent. Returns the value and the number of retries made.
/// `on_retry(n, failure, wait)` is told before each wait.
pub async fn with_retries<T, F, Fut>(
    policy: &RetryPolicy,
    mut attempt: F,
    mut on_retry: impl FnMut(u32, &Failure, Duration),
) -> Result<(T, u32), GaveUp>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Failure>>,
{
    let mut n = 0;
    loop {
        n += 1;
        match attempt().await {
            Ok(v) => return Ok((v, n - 1)),
            Err(f) if f.transient && n < policy.attempts => {
                let wait = policy.delay(n);
                on_retry(n, &f, wait);
                tokio::time::sleep(wait).await;
            }
            Err(last) => return Err(GaveUp { attempts: n, last }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick(attempts: u32) -> RetryPolicy {
        RetryPolicy {
            attempts,
            initial: Duration::from_millis(1),
            max_delay: Duration::from_millis(4),
        }
    }

    fn block_on<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn delays_double_up_to_the_cap() {
        let p = RetryPolicy {
            attempts: 6,
            initial: Duration::from_secs(1),
            max_delay: Duration::from_secs(5),
        };
        let waits: Vec<u64> = (1..6).map(|n| p.delay(n).as_secs()).collect();
        assert_eq!(waits, vec![1, 2, 4, 5, 5]);
        assert_eq!(p.total_wait().as_secs(), 17);
    }

    #[test]
    fn transient_failures_are_retried_and_permanent_ones_are_not() {
        let mut calls = 0;
        let got = block_on(with_retries(
            &quick(5),
            || {
                calls += 1;
                let c = calls;
                async move {
                    if c < 3 {
                        Err(Failure::transient("busy"))
                    } else {
                        Ok(c)
                    }
                }
            },
            |_, _, _| {},
        ));
        assert_eq!(got.unwrap(), (3, 2));
        let mut calls = 0;
        let err = block_on(with_retries(
            &quick(5),
            || {
                calls += 1;
                async { Err::<(), _>(Failure::permanent("no such model")) }
            },
            |_, _, _| {},
        ))
        .unwrap_err();
        assert_eq!((calls, err.attempts), (1, 1));
        let err = block_on(with_retries(
            &quick(3),
            || async { Err::<(), _>(Failure::transient("busy")) },
            |_, _, _| {},
        ))
        .unwrap_err();
        assert_eq!(err.attempts, 3);
    }
}
