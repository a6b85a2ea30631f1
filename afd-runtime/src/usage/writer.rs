//! The background thread that keeps a usage store in step with the in-memory model, for
//! every store: it opens the store and loads what it holds, then syncs every interval,
//! when asked ([`Writer::flush`]) and a last time when dropped. Each store (SQLite,
//! PostgreSQL) says only what one round does.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use super::model::{Delta, Snapshot};
use super::{Shared, UsageError};

/// A store the writer keeps in step.
pub(super) trait Store: Send + 'static {
    /// The writer thread's name.
    const THREAD: &'static str;
    /// How long [`Writer::flush`] waits for the round it asks for.
    const FLUSH_TIMEOUT: Duration;

    /// One round: writes what changed since the last one (and, for a store replicas share,
    /// reads back every replica's counts). On failure, what changed must be back in
    /// `shared`'s pending delta for the next round.
    fn sync(&mut self, shared: &Shared) -> Result<(), UsageError>;
}

/// Why the writer did not start.
#[derive(Debug, thiserror::Error)]
pub(super) enum StartError<E: std::error::Error + 'static> {
    /// The thread could not be spawned.
    #[error("cannot start the writer: {0}")]
    Thread(std::io::Error),
    /// The store did not open.
    #[error(transparent)]
    Open(E),
    /// The thread ended before saying whether the store opened.
    #[error("the writer stopped while starting")]
    Stopped,
}

enum Control {
    Flush(mpsc::Sender<Result<(), UsageError>>),
    Shutdown,
}

/// The running writer; dropping it makes a last round and joins the thread.
#[derive(Debug)]
pub(super) struct Writer {
    control: mpsc::Sender<Control>,
    thread: Option<JoinHandle<()>>,
    flush_timeout: Duration,
}

impl Writer {
    /// Opens a store with `open` on a thread of its own, loads what it holds into
    /// `shared`'s model, and syncs every `interval` from then on. Returns once the store
    /// opened (or did not).
    pub(super) fn start<S, E>(
        shared: Arc<Shared>,
        interval: Duration,
        open: impl FnOnce() -> Result<(S, Snapshot), E> + Send + 'static,
    ) -> Result<Writer, StartError<E>>
    where
        S: Store,
        E: std::error::Error + Send + 'static,
    {
        let (control, requests) = mpsc::channel();
        let (started, outcome) = mpsc::channel();
        let thread = thread::Builder::new()
            .name(S::THREAD.into())
            .spawn(move || {
                let store = match open() {
                    Ok((store, snapshot)) => {
                        {
                            let mut state = shared.lock();
                            state.model.load(snapshot);
                            state.pending = Some(Delta::default());
                        }
                        let _ = started.send(Ok(()));
                        store
                    }
                    Err(error) => {
                        let _ = started.send(Err(error));
                        return;
                    }
                };
                run(store, &shared, &requests, interval);
            })
            .map_err(StartError::Thread)?;
        let writer = Writer {
            control,
            thread: Some(thread),
            flush_timeout: S::FLUSH_TIMEOUT,
        };
        match outcome.recv() {
            Ok(Ok(())) => Ok(writer),
            Ok(Err(error)) => Err(StartError::Open(error)),
            Err(_) => Err(StartError::Stopped),
        }
    }

    /// Asks for a round now and waits for its outcome.
    pub(super) fn flush(&self) -> Result<(), UsageError> {
        let (ack, answer) = mpsc::channel();
        self.control
            .send(Control::Flush(ack))
            .map_err(|_| UsageError::WriterStopped)?;
        match answer.recv_timeout(self.flush_timeout) {
            Ok(result) => result,
            Err(RecvTimeoutError::Timeout) => Err(UsageError::Timeout),
            Err(RecvTimeoutError::Disconnected) => Err(UsageError::WriterStopped),
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // A send error means the thread is gone already; joining still reaps it.
        let _ = self.control.send(Control::Shutdown);
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::warn!("usage statistics: the store writer panicked");
        }
    }
}

fn run<S: Store>(
    mut store: S,
    shared: &Shared,
    requests: &mpsc::Receiver<Control>,
    interval: Duration,
) {
    loop {
        let request = match requests.recv_timeout(interval) {
            Ok(request) => Some(request),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Control::Shutdown),
        };
        let result = store.sync(shared);
        if result.is_err() {
            crate::metrics::store_error(crate::metrics::Store::Usage);
        }
        match request {
            Some(Control::Flush(ack)) => {
                // The caller may have given up waiting; nothing to do then.
                let _ = ack.send(result);
            }
            Some(Control::Shutdown) => {
                if let Err(error) = result {
                    tracing::warn!(%error, "usage statistics: the last write failed; recent counts are lost");
                }
                return;
            }
            None => {}
        }
    }
}

/// Counts one failed round and says what failed: warns on the first failure of a streak,
/// then now and then.
pub(super) fn failed(failures: &mut u64, error: String) -> UsageError {
    *failures += 1;
    if failures.is_power_of_two() {
        tracing::warn!(%error, failures = *failures, "usage statistics: write failed; will retry");
    }
    UsageError::Store(error)
}
