//! The drain of a serving process: once it begins, new work is refused with a retryable
//! error, the work in flight may finish within a grace period, and what is still running
//! after it is cancelled (its callers are answered `CANCELLED`).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// How long cancelled work is given to answer its callers after the grace period.
const SETTLE: Duration = Duration::from_secs(2);

/// The drain state a server's surfaces share: whether it is draining, and the work in
/// flight. Cheap to clone (one `Arc`); every clone is the same drain.
#[derive(Clone, Default)]
pub struct Drain {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    draining: AtomicBool,
    in_flight: AtomicUsize,
    /// Notified each time the work in flight falls to none.
    idle: Notify,
    /// Cancelled when the drain begins (streams that carry no answer close then).
    began: CancellationToken,
    /// Cancelled when the grace period is over: the work still running is cancelled.
    aborted: CancellationToken,
    /// Cancelled when the drain is over: the transports stop.
    closed: CancellationToken,
}

impl fmt::Debug for Drain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Drain")
            .field("draining", &self.is_draining())
            .field("in_flight", &self.in_flight())
            .finish()
    }
}

/// How a drain ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DrainOutcome {
    /// Every piece of work in flight finished within the grace period.
    Finished,
    /// The grace period ended with work still running, which was cancelled.
    Cancelled {
        /// The pieces of work in flight then: calls, and over HTTP the requests carrying
        /// them, each counted.
        remaining: usize,
    },
}

impl DrainOutcome {
    /// Whether everything finished in time (the process should exit 0).
    pub fn is_finished(self) -> bool {
        self == DrainOutcome::Finished
    }
}

impl Drain {
    /// A drain that has not begun.
    pub fn new() -> Self {
        Drain::default()
    }

    /// Whether the drain has begun: readiness fails and new work is refused.
    pub fn is_draining(&self) -> bool {
        self.inner.draining.load(Ordering::SeqCst)
    }

    /// How much work is in flight.
    pub fn in_flight(&self) -> usize {
        self.inner.in_flight.load(Ordering::SeqCst)
    }

    /// Starts a piece of work (a call, an HTTP request) that the drain waits for while the
    /// guard lives; `None` once the drain has begun (refuse the work, retryable).
    pub fn enter(&self) -> Option<Work> {
        self.inner.in_flight.fetch_add(1, Ordering::SeqCst);
        let work = Work {
            drain: self.clone(),
        };
        if self.is_draining() {
            // Dropping the guard counts it out again, and wakes a drain waiting for none.
            drop(work);
            return None;
        }
        Some(work)
    }

    /// Starts a piece of work even while draining: a part of work already admitted (an
    /// answer still being written, a command a running batch calls).
    pub fn enter_admitted(&self) -> Work {
        self.inner.in_flight.fetch_add(1, Ordering::SeqCst);
        Work {
            drain: self.clone(),
        }
    }

    /// Begins the drain: readiness fails from now on and new work is refused. Idempotent.
    pub fn begin(&self) {
        if !self.inner.draining.swap(true, Ordering::SeqCst) {
            tracing::info!(in_flight = self.in_flight(), "draining");
        }
        self.inner.began.cancel();
    }

    /// Completes when the drain begins.
    pub async fn began(&self) {
        self.inner.began.cancelled().await;
    }

    /// Completes when the drain begins, owning what it waits on (for a stream to hold).
    #[cfg(feature = "http")]
    pub(crate) fn began_owned(&self) -> tokio_util::sync::WaitForCancellationFutureOwned {
        self.inner.began.clone().cancelled_owned()
    }

    /// Whether the grace period is over and the remaining work was cancelled.
    pub fn is_aborted(&self) -> bool {
        self.inner.aborted.is_cancelled()
    }

    /// Completes when the grace period is over and the remaining work is cancelled.
    pub async fn aborted(&self) {
        self.inner.aborted.cancelled().await;
    }

    /// Ends the drain: the transports stop reading and close their connections (call it
    /// after [`run`](Drain::run)). Also begins the drain, if it had not begun.
    pub fn close(&self) {
        self.begin();
        self.inner.closed.cancel();
    }

    /// Completes when the drain is over and the transports should stop.
    pub async fn closed(&self) {
        self.inner.closed.cancelled().await;
    }

    /// Whether the drain is over.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.is_cancelled()
    }

    /// A token cancelled when the grace period is over: work watches it to stop.
    pub fn abort_token(&self) -> &CancellationToken {
        &self.inner.aborted
    }

    /// Completes when no work is in flight.
    pub async fn idle(&self) {
        loop {
            let notified = self.inner.idle.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.in_flight() == 0 {
                return;
            }
            notified.await;
        }
    }

    /// Drains: begins, waits up to `grace` for the work in flight to finish, then cancels
    /// what remains and gives it a moment to answer its callers `CANCELLED`.
    pub async fn run(&self, grace: Duration) -> DrainOutcome {
        self.begin();
        if tokio::time::timeout(grace, self.idle()).await.is_ok() {
            tracing::info!("drained: every call in flight finished");
            return DrainOutcome::Finished;
        }
        let remaining = self.in_flight();
        tracing::warn!(
            remaining,
            grace_ms = grace.as_millis() as u64,
            "the grace period is over: cancelling the calls still running"
        );
        self.inner.aborted.cancel();
        if tokio::time::timeout(SETTLE, self.idle()).await.is_err() {
            tracing::warn!(
                remaining = self.in_flight(),
                "calls still running after their cancellation"
            );
        }
        DrainOutcome::Cancelled { remaining }
    }
}

/// A piece of work in flight: the drain waits for it until it is dropped.
#[must_use = "the work counts as in flight only while its guard lives"]
pub struct Work {
    drain: Drain,
}

impl fmt::Debug for Work {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Work").finish_non_exhaustive()
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        if self.drain.inner.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.drain.inner.idle.notify_waiters();
        }
    }
}

/// Completes on the first SIGTERM or SIGINT (Ctrl-C); on other platforms, on Ctrl-C.
#[cfg(feature = "mcp")]
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let terminate = signal(SignalKind::terminate());
        let interrupt = signal(SignalKind::interrupt());
        match (terminate, interrupt) {
            (Ok(mut terminate), Ok(mut interrupt)) => {
                tokio::select! {
                    _ = terminate.recv() => tracing::info!("SIGTERM received"),
                    _ = interrupt.recv() => tracing::info!("SIGINT received"),
                }
            }
            (Err(error), _) | (_, Err(error)) => {
                tracing::warn!(%error, "cannot watch for signals; the process stops only when killed");
                std::future::pending::<()>().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        tracing::info!("Ctrl-C received");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_in_flight_holds_the_drain_until_it_ends() {
        let drain = Drain::new();
        let work = drain.enter().expect("not draining");
        let waiting = tokio::spawn({
            let drain = drain.clone();
            async move { drain.run(Duration::from_secs(5)).await }
        });
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(drain.is_draining());
        assert!(drain.enter().is_none(), "new work is refused");
        assert_eq!(drain.in_flight(), 1);
        assert!(!waiting.is_finished());
        drop(work);
        assert_eq!(waiting.await.unwrap(), DrainOutcome::Finished);
        assert!(!drain.is_aborted());
    }

    #[tokio::test(start_paused = true)]
    async fn past_the_grace_period_the_remaining_work_is_cancelled() {
        let drain = Drain::new();
        let work = drain.enter().expect("not draining");
        let watcher = tokio::spawn({
            let drain = drain.clone();
            async move {
                drain.aborted().await;
                drop(work);
            }
        });
        let outcome = drain.run(Duration::from_secs(1)).await;
        assert_eq!(outcome, DrainOutcome::Cancelled { remaining: 1 });
        assert!(drain.is_aborted());
        watcher.await.unwrap();
        assert_eq!(drain.in_flight(), 0);
    }

    #[tokio::test]
    async fn admitted_work_is_counted_while_draining() {
        let drain = Drain::new();
        drain.begin();
        let part = drain.enter_admitted();
        assert_eq!(drain.in_flight(), 1);
        drop(part);
        assert_eq!(drain.in_flight(), 0);
        assert_eq!(
            drain.run(Duration::from_millis(10)).await,
            DrainOutcome::Finished
        );
    }
}
