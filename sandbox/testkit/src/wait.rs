//! Waiting for a condition: poll until it holds or fail the test, saying what was awaited.
//!
//! Nothing is asserted on timing: timeouts are generous (the tests must hold on a loaded
//! 2-core machine) and only turn a hang into a failure with a message.

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `f` every `every` until it returns `Some`, and returns that value; panics after
/// `timeout` with "timed out after {timeout} waiting for {what}".
pub async fn wait_for<T, F, Fut>(what: &str, timeout: Duration, every: Duration, f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    wait_for_with(what, timeout, every, String::new, f).await
}

/// Like [`wait_for`]; on timeout the panic message also carries `details()` (a log tail, the
/// last state seen, ...), which is only called then.
pub async fn wait_for_with<T, F, Fut, D>(
    what: &str,
    timeout: Duration,
    every: Duration,
    mut details: D,
    mut f: F,
) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
    D: FnMut() -> String,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        if Instant::now() >= deadline {
            let details = details();
            if details.is_empty() {
                panic!("timed out after {timeout:?} waiting for {what}");
            }
            panic!("timed out after {timeout:?} waiting for {what}:\n{details}");
        }
        tokio::time::sleep(every).await;
    }
}

/// Blocking [`wait_for`] for tests without a runtime: polls `f` every `every` until it returns
/// `true`; panics after `timeout` with what was awaited.
pub fn wait_until(what: &str, timeout: Duration, every: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(every);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn returns_the_first_value() {
        let mut n = 0;
        let v = wait_for(
            "n to reach 3",
            Duration::from_secs(5),
            Duration::ZERO,
            || {
                n += 1;
                let n = n;
                async move { (n >= 3).then_some(n) }
            },
        )
        .await;
        assert_eq!(v, 3);
    }

    #[tokio::test]
    #[should_panic(expected = "waiting for nothing:\nthe details")]
    async fn says_what_it_waited_for() {
        wait_for_with(
            "nothing",
            Duration::from_millis(20),
            Duration::from_millis(5),
            || "the details".to_string(),
            || async { None::<()> },
        )
        .await;
    }

    #[test]
    #[should_panic(expected = "waiting for never")]
    fn blocking_wait_times_out() {
        wait_until(
            "never",
            Duration::from_millis(20),
            Duration::from_millis(5),
            || false,
        );
    }
}
