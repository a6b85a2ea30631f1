//! Readiness: the checks a load balancer's probe runs through `/readyz` (each dependency
//! the server needs to answer calls, each under a timeout), and the JSON answer that names
//! what failed.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::Drain;
use crate::Dispatcher;

/// What a readiness check returns: `Err` says what is wrong, in words an operator reads.
pub type CheckFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

type Probe = Arc<dyn Fn() -> CheckFuture + Send + Sync>;

/// How long one check may take before it counts as failed.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// The checks behind `/readyz`: every one must pass, each within its timeout, and the
/// server must not be draining. Cheap to clone.
#[derive(Clone)]
pub struct Readiness {
    checks: Arc<Vec<(String, Probe)>>,
    timeout: Duration,
    drain: Option<Drain>,
}

impl Default for Readiness {
    fn default() -> Self {
        Readiness {
            checks: Arc::default(),
            timeout: DEFAULT_TIMEOUT,
            drain: None,
        }
    }
}

impl fmt::Debug for Readiness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Readiness")
            .field(
                "checks",
                &self.checks.iter().map(|(name, _)| name).collect::<Vec<_>>(),
            )
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Readiness {
    /// No checks: ready unless draining.
    pub fn new() -> Self {
        Readiness::default()
    }

    /// Adds the check `name` (`redis`, `postgres`, `model`, …): `probe` makes a future that
    /// is `Ok` when the dependency answers.
    #[must_use]
    pub fn with_check<F, Fut>(mut self, name: impl Into<String>, probe: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), String>> + Send + 'static,
    {
        let probe: Probe = Arc::new(move || Box::pin(probe()) as CheckFuture);
        Arc::make_mut(&mut self.checks).push((name.into(), probe));
        self
    }

    /// How long each check may take (default 2 s); a slower one fails.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Not ready once `drain` has begun.
    #[must_use]
    pub fn with_drain(mut self, drain: Drain) -> Self {
        self.drain = Some(drain);
        self
    }

    /// The checks of what `dispatcher` serves with: `sessions` when they live in a shared
    /// store (Redis `PING`), `usage` when the statistics live in PostgreSQL (`SELECT 1`),
    /// `model` when search has a semantic layer (loaded, not failed).
    pub fn for_dispatcher(dispatcher: &Dispatcher) -> Self {
        let mut readiness = Readiness::new();
        if dispatcher.sessions().is_shared() {
            let dispatcher = dispatcher.clone();
            readiness = readiness.with_check("sessions", move || {
                let dispatcher = dispatcher.clone();
                async move {
                    dispatcher
                        .sessions()
                        .ping()
                        .await
                        .map_err(|error| error.message().to_owned())
                }
            });
        }
        if dispatcher.usage().database().is_some() {
            let usage = dispatcher.usage().clone();
            readiness = readiness.with_check("usage", move || {
                let usage = usage.clone();
                async move { usage.check().await }
            });
        }
        #[cfg(feature = "semantic")]
        if dispatcher.has_semantic_search() {
            let dispatcher = dispatcher.clone();
            readiness = readiness.with_check("model", move || {
                let dispatcher = dispatcher.clone();
                async move {
                    let Some(layer) = dispatcher.search_index().semantic() else {
                        return Ok(());
                    };
                    if layer.is_ready() {
                        return Ok(());
                    }
                    Err(match layer.failure() {
                        Some(why) => format!("the embedding model failed to load: {why}"),
                        None => "the embedding model is still loading".to_owned(),
                    })
                }
            });
        }
        readiness
    }

    /// The names of the checks, in order.
    pub fn checks(&self) -> impl Iterator<Item = &str> {
        self.checks.iter().map(|(name, _)| name.as_str())
    }

    /// Runs every check at once and reports.
    pub async fn report(&self) -> ReadyReport {
        let timeout = self.timeout;
        let runs = self.checks.iter().map(|(name, probe)| {
            let future = probe();
            async move {
                let started = Instant::now();
                let outcome = match tokio::time::timeout(timeout, future).await {
                    Ok(outcome) => outcome,
                    Err(_) => Err(format!("no answer within {} ms", timeout.as_millis())),
                };
                CheckOutcome {
                    name: name.clone(),
                    ok: outcome.is_ok(),
                    error: outcome.err(),
                    millis: started.elapsed().as_secs_f64() * 1000.0,
                }
            }
        });
        let checks = futures_util::future::join_all(runs).await;
        let draining = self.drain.as_ref().is_some_and(Drain::is_draining);
        ReadyReport { draining, checks }
    }
}

/// The outcome of every readiness check.
#[derive(Debug, Clone, Serialize)]
pub struct ReadyReport {
    /// Whether the server is draining (then it is not ready, whatever the checks say).
    pub draining: bool,
    /// Each check's outcome, in the order they were added.
    pub checks: Vec<CheckOutcome>,
}

/// One check's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct CheckOutcome {
    /// The check's name.
    pub name: String,
    /// Whether it passed.
    pub ok: bool,
    /// What went wrong, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long it took, in milliseconds.
    pub millis: f64,
}

impl ReadyReport {
    /// Whether the server is ready: not draining, every check passed.
    pub fn is_ready(&self) -> bool {
        !self.draining && self.checks.iter().all(|check| check.ok)
    }

    /// What is wrong, one phrase per failure (`draining`, `redis: connection refused`).
    pub fn failures(&self) -> Vec<String> {
        let mut failures: Vec<String> = Vec::new();
        if self.draining {
            failures.push("draining: the server is shutting down".to_owned());
        }
        for check in &self.checks {
            if let Some(error) = &check.error {
                failures.push(format!("{}: {error}", check.name));
            }
        }
        failures
    }

    /// The `/readyz` body: `{"status": "ready" | "not ready", "failures": [...], "checks": {...}}`.
    pub fn to_json(&self) -> serde_json::Value {
        let checks: serde_json::Map<String, serde_json::Value> = self
            .checks
            .iter()
            .map(|check| {
                let mut entry = serde_json::json!({
                    "status": if check.ok { "ok" } else { "failed" },
                    "ms": (check.millis * 1000.0).round() / 1000.0,
                });
                if let Some(error) = &check.error {
                    entry["error"] = serde_json::Value::String(error.clone());
                }
                (check.name.clone(), entry)
            })
            .collect();
        serde_json::json!({
            "status": if self.is_ready() { "ready" } else { "not ready" },
            "draining": self.draining,
            "failures": self.failures(),
            "checks": checks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_failed_or_slow_check_is_named_and_draining_is_not_ready() {
        let drain = Drain::new();
        let readiness = Readiness::new()
            .timeout(Duration::from_millis(50))
            .with_check("fine", || async { Ok(()) })
            .with_check("broken", || async { Err("connection refused".to_owned()) })
            .with_check("slow", || async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok(())
            })
            .with_drain(drain.clone());
        let report = readiness.report().await;
        assert!(!report.is_ready());
        assert_eq!(
            report.failures(),
            ["broken: connection refused", "slow: no answer within 50 ms"]
        );
        let json = report.to_json();
        assert_eq!(json["status"], "not ready");
        assert_eq!(json["checks"]["fine"]["status"], "ok");

        let ready = Readiness::new()
            .with_check("fine", || async { Ok(()) })
            .with_drain(drain.clone());
        assert!(ready.report().await.is_ready());
        drain.begin();
        let report = ready.report().await;
        assert!(!report.is_ready());
        assert_eq!(report.failures(), ["draining: the server is shutting down"]);
    }
}
