//! Where `#[command(blocking)]` handlers run: on tokio's blocking pool, off the async
//! worker threads, with a process-wide bound on how many run at once.
//!
//! A blocking handler is a plain `fn` that waits on something other than a future: a
//! database driver such as rusqlite, a `Mutex` held across real work, file I/O, a CPU-heavy
//! computation. Run inline on an async worker, it stalls every other call that worker
//! serves; run here, the workers stay free to read requests and write answers.
//!
//! What still holds for a blocking handler:
//! - **Bound**: at most [`limit`] blocking handlers run at once ([`set_limit`] changes it
//!   before the first one runs); the others wait for a turn without holding a thread.
//! - **Cancellation and timeouts**: the caller is answered as soon as the call is cancelled
//!   or times out. A handler that has not started by then never starts; one already running
//!   is not interrupted (a thread cannot be stopped safely): it runs to its end, keeps its
//!   turn until then, and its result is dropped. A long handler can look at
//!   [`CommandContext::is_cancelled`] between steps and give up early.
//! - **Panics** become the same `INTERNAL_ERROR` as an async handler's.
//! - **Logging**: the handler's `tracing` events reach the caller as an async handler's do.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tokio::sync::Semaphore;

use crate::command::HandlerFuture;
use crate::command_context::CommandContext;
use crate::error::{CommandError, codes};
use crate::macro_support::SyncBody;
use crate::result::CommandResult;

/// How many blocking handlers may run at once unless [`set_limit`] says otherwise: 16 per
/// core the process may use (a handler that waits on a database or a lock uses little of
/// its core), and at least 16.
pub fn default_limit() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    (cores * 16).max(16)
}

/// The limit asked for before the first blocking handler ran (0: the default).
static REQUESTED: AtomicUsize = AtomicUsize::new(0);

/// The turns, created when the first blocking handler runs.
static TURNS: OnceLock<(usize, Arc<Semaphore>)> = OnceLock::new();

fn turns() -> &'static (usize, Arc<Semaphore>) {
    TURNS.get_or_init(|| {
        let limit = match REQUESTED.load(Ordering::Relaxed) {
            0 => default_limit(),
            limit => limit,
        };
        (limit, Arc::new(Semaphore::new(limit)))
    })
}

/// The most blocking handlers that run at once in this process.
pub fn limit() -> usize {
    match TURNS.get() {
        Some((limit, _)) => *limit,
        None => match REQUESTED.load(Ordering::Relaxed) {
            0 => default_limit(),
            limit => limit,
        },
    }
}

/// Sets how many blocking handlers may run at once (at least 1). It takes effect only
/// before the first blocking handler runs; afterwards it changes nothing and returns
/// `false`. Call it at start-up, before serving.
pub fn set_limit(limit: usize) -> bool {
    if TURNS.get().is_some() {
        return false;
    }
    REQUESTED.store(limit.max(1), Ordering::Relaxed);
    TURNS.get().is_none()
}

/// Whether blocking handlers go to the pool (the default) or run where they are polled.
static POOL: AtomicBool = AtomicBool::new(true);

/// Sends blocking handlers to the blocking pool (`true`, the default) or runs them on the
/// async worker that polls the call, as a plain `fn` handler runs (`false`). Inline only
/// pays off for a handler that never really waits (an in-memory store behind an
/// uncontended lock); it exists to measure what the pool buys. Servers set it from
/// `AFD_BLOCKING_POOL` at start-up ([`BLOCKING_POOL_ENV`](crate::mcp::BLOCKING_POOL_ENV)).
pub fn set_pool(pool: bool) {
    POOL.store(pool, Ordering::Relaxed);
}

/// Whether blocking handlers go to the blocking pool ([`set_pool`]).
pub fn pool() -> bool {
    POOL.load(Ordering::Relaxed)
}

/// The handler future of a blocking command: waits for a turn, then runs `body` on
/// tokio's blocking pool (or inline, see [`set_pool`]). Outside a tokio runtime (nothing to hand the work to) it runs
/// `body` where it is polled, as a sync handler does. Not public API: generated code reaches
/// it as `__private::blocking_handler`.
#[doc(hidden)]
pub fn handler(body: SyncBody, input: Value, ctx: CommandContext) -> HandlerFuture {
    Box::pin(run(body, input, ctx))
}

/// Set when the handler's future is dropped (the caller was answered: cancelled, timed
/// out, gone), so that work not yet started is skipped.
struct Abandon(Arc<AtomicBool>);

impl Drop for Abandon {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

async fn run(body: SyncBody, input: Value, ctx: CommandContext) -> CommandResult<Value> {
    let runtime = match tokio::runtime::Handle::try_current() {
        Ok(runtime) if pool() => runtime,
        Ok(_) if ctx.is_cancelled() => return not_started(),
        _ => return body(input, ctx),
    };
    let Ok(turn) = turns().1.clone().acquire_owned().await else {
        // The semaphore is never closed.
        return CommandResult::failure(CommandError::internal("the blocking pool is closed"));
    };
    let abandoned = Arc::new(AtomicBool::new(false));
    let _abandon = Abandon(abandoned.clone());
    let task = runtime.spawn_blocking(move || {
        // The turn is held until the work ends, even if the caller stopped waiting.
        let _turn = turn;
        if abandoned.load(Ordering::Relaxed) || ctx.is_cancelled() {
            return None;
        }
        let sink = ctx.log_sink().cloned();
        Some(crate::client::scope_tracing_sync(sink.as_ref(), || {
            body(input, ctx)
        }))
    });
    match task.await {
        Ok(Some(result)) => result,
        Ok(None) => not_started(),
        // Raised again here, where the handler service catches it as it catches an async
        // handler's panic.
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(_) => CommandResult::failure(CommandError::internal(
            "the runtime shut down before the command's handler ran",
        )),
    }
}

/// The answer of a call cancelled before its handler started.
fn not_started() -> CommandResult<Value> {
    CommandResult::failure(
        CommandError::new(
            codes::CANCELLED,
            "the call was cancelled before its handler started",
        )
        .with_retryable(true),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    static RUNNING: AtomicUsize = AtomicUsize::new(0);
    static MOST: AtomicUsize = AtomicUsize::new(0);

    fn slow(input: Value, _: CommandContext) -> CommandResult<Value> {
        let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
        MOST.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(20));
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        CommandResult::success(
            json!({ "thread": format!("{:?}", std::thread::current().id()), "input": input }),
        )
    }

    fn panics(_: Value, _: CommandContext) -> CommandResult<Value> {
        panic!("boom")
    }

    #[tokio::test(flavor = "current_thread")]
    async fn runs_off_the_calling_thread_within_the_bound() {
        let here = format!("{:?}", std::thread::current().id());
        let calls: Vec<_> = (0..limit() + 8)
            .map(|n| handler(slow, json!(n), CommandContext::new()))
            .collect();
        let results = futures_util::future::join_all(calls).await;
        for (n, result) in results.iter().enumerate() {
            let data = result.data.as_ref().expect("success");
            assert_eq!(data["input"], json!(n));
            assert_ne!(data["thread"], json!(here), "ran on the async thread");
        }
        assert!(MOST.load(Ordering::SeqCst) <= limit());
        assert!(!set_limit(3), "the limit is fixed once handlers ran");

        // Off the pool (the measurement switch): run where polled, and still not at all
        // once cancelled. The other tests here pass either way.
        set_pool(false);
        let inline = handler(slow, json!("inline"), CommandContext::new());
        let cancelled = CommandContext::new();
        cancelled.cancellation_token().cancel();
        let skipped = handler(slow, json!("skipped"), cancelled);
        let (inline, skipped) = futures_util::future::join(inline, skipped).await;
        set_pool(true);
        assert_eq!(inline.data.expect("success")["thread"], json!(here));
        assert!(skipped.error.expect("failure").is(codes::CANCELLED));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_panic_is_raised_where_the_future_is_polled() {
        let caught = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(handler(
            panics,
            Value::Null,
            CommandContext::new(),
        )))
        .await;
        let panic = caught.expect_err("the panic reaches the poller");
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"boom"));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_cancelled_call_does_not_start() {
        let ctx = CommandContext::new();
        ctx.cancellation_token().cancel();
        let result = handler(slow, json!(1), ctx).await;
        assert!(result.error.expect("failure").is(codes::CANCELLED));
    }

    #[test]
    fn outside_a_runtime_it_runs_inline() {
        let result =
            futures_util::FutureExt::now_or_never(handler(slow, json!(7), CommandContext::new()))
                .expect("ready at once");
        assert_eq!(result.data.expect("success")["input"], json!(7));
    }
}
