//! A soak of mixed reads and writes against the shop's store on a database file: many calls
//! in flight through the call path (`Registry::call`: reads inline on the read connections,
//! writes `blocking`, on the blocking pool), three reads (`order-list`, `plan-list`, `inventory-get`) to one write
//! (`inventory-restock` of one unit); at the end the stock must equal what it was plus the
//! restocks that succeeded, and the process's resident memory is sampled throughout.
//! `tests/soak.rs` runs it for seconds; the `mixed-soak` binary for minutes.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use afd_examples::shop::{self, ShopStore};
use afd_runtime::{CommandContext, Registry};
use serde_json::{Value, json};

/// The product every write restocks.
const PRODUCT: i64 = 1;

/// What a run did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Reads answered with success.
    pub reads: u64,
    /// Restocks answered with success.
    pub writes: u64,
    /// Calls answered with a failure.
    pub failures: u64,
    /// The first few failures' errors.
    pub examples: Vec<Value>,
    /// The product's stock before the run.
    pub stock_before: i64,
    /// Its stock after the run.
    pub stock_after: i64,
    /// Resident memory in KiB, one sample per second (empty where `/proc` is missing).
    pub rss_kib: Vec<u64>,
}

impl Report {
    /// Whether the stock moved by exactly the restocks that succeeded.
    pub fn consistent(&self) -> bool {
        self.stock_after == self.stock_before + self.writes as i64
    }
}

/// The resident memory of this process in KiB, from `/proc/self/statm`.
pub fn rss_kib() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4)
}

fn stock(registry: &'static Registry, ctx: &CommandContext) -> impl Future<Output = i64> {
    let ctx = ctx.clone();
    async move {
        let result = registry
            .call("inventory-get", json!({"productId": PRODUCT}), ctx)
            .await;
        result
            .data
            .and_then(|data| data["onHand"].as_i64())
            .expect("inventory-get answers the stock")
    }
}

/// Runs `in_flight` callers for `duration` against a shop store on the file `db` (created
/// and seeded if new).
///
/// # Errors
///
/// The store or the registry could not be built.
pub async fn run(
    db: &Path,
    in_flight: usize,
    duration: Duration,
) -> Result<Report, Box<dyn std::error::Error + Send + Sync>> {
    let registry = Registry::builder()
        .register_all(shop::COMMANDS)
        .with_inventory_contexts()
        .build()?;
    let registry: &'static Registry = Box::leak(Box::new(registry));
    let ctx = shop::context(ShopStore::open(db)?);
    let stock_before = stock(registry, &ctx).await;
    let (reads, writes, failures) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let examples = Arc::new(std::sync::Mutex::new(Vec::new()));
    let deadline = Instant::now() + duration;
    let sampler = tokio::spawn(async move {
        let mut samples = Vec::new();
        while Instant::now() < deadline {
            samples.extend(rss_kib());
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        samples
    });
    let callers: Vec<_> = (0..in_flight)
        .map(|caller| {
            let (ctx, reads, writes, failures, examples) = (
                ctx.clone(),
                reads.clone(),
                writes.clone(),
                failures.clone(),
                examples.clone(),
            );
            tokio::spawn(async move {
                let mut turn = caller;
                while Instant::now() < deadline {
                    let (name, input, write) = match turn % 4 {
                        0 => ("order-list", json!({"limit": 1}), false),
                        1 => ("plan-list", json!({}), false),
                        2 => ("inventory-get", json!({"productId": PRODUCT}), false),
                        _ => (
                            "inventory-restock",
                            json!({"productId": PRODUCT, "quantity": 1, "reference": "SOAK"}),
                            true,
                        ),
                    };
                    turn += 1;
                    let result = registry.call(name, input, ctx.clone()).await;
                    match (result.success, write) {
                        (true, true) => writes.fetch_add(1, Ordering::Relaxed),
                        (true, false) => reads.fetch_add(1, Ordering::Relaxed),
                        (false, _) => {
                            let mut examples = examples.lock().unwrap_or_else(|p| p.into_inner());
                            if examples.len() < 5 {
                                examples.push(json!({"command": name, "error": result.error}));
                            }
                            failures.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                }
            })
        })
        .collect();
    for caller in callers {
        caller.await?;
    }
    let rss = sampler.await?;
    let stock_after = stock(registry, &ctx).await;
    let examples = examples.lock().unwrap_or_else(|p| p.into_inner()).clone();
    Ok(Report {
        reads: reads.load(Ordering::Relaxed),
        writes: writes.load(Ordering::Relaxed),
        failures: failures.load(Ordering::Relaxed),
        examples,
        stock_before,
        stock_after,
        rss_kib: rss,
    })
}
