//! `afd-search-eval --bench-build N`: times [`SearchIndex::build`] over a synthetic catalog
//! of `N` commands and searches on it, without criterion, so that it runs from the same
//! release binary as the quality evaluation.
//!
//! The catalog is [`afd_search_eval::synthetic`], the one the criterion bench
//! (`benches/search.rs`) measures too.

use std::hint::black_box;
use std::time::{Duration, Instant};

use afd_runtime::search::SearchIndex;
use afd_search_eval::synthetic;

/// How many builds are timed (after one warm-up).
const BUILD_RUNS: usize = 11;
/// How many times each query is timed.
const QUERY_RUNS: usize = 201;

/// The CPU time this thread has run, where Linux tells it (`/proc/thread-self/schedstat`):
/// on a shared machine the wall time of a build also counts the time other processes
/// held the core.
fn thread_cpu() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

/// Prints the median build time of a synthetic catalog of `n` commands and the median time
/// of a few queries of each style on its index.
pub fn run(n: usize) {
    let docs = synthetic::catalog(n);
    black_box(SearchIndex::build(docs.clone()));
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    for _ in 0..BUILD_RUNS {
        let docs = docs.clone();
        let cpu = thread_cpu();
        let start = Instant::now();
        let index = SearchIndex::build(black_box(docs));
        walls.push(start.elapsed());
        if let (Some(before), Some(after)) = (cpu, thread_cpu()) {
            cpus.push(after.saturating_sub(before));
        }
        drop(black_box(index));
    }
    let index = SearchIndex::build(docs.clone());
    let cpu = if cpus.is_empty() {
        String::new()
    } else {
        format!(", CPU {:.2} ms", median(cpus).as_secs_f64() * 1e3)
    };
    println!(
        "build   {n} commands ({} terms): median wall {:.2} ms{cpu} over {BUILD_RUNS} runs",
        index.term_count(),
        median(walls).as_secs_f64() * 1e3
    );
    let resource = docs[42 % n].category.clone();
    let word = docs[(n / 2) % n]
        .description
        .split_whitespace()
        .nth(3)
        .unwrap_or("record")
        .to_owned();
    let mut typo = resource.clone();
    typo.remove(1);
    let queries = [
        ("keywords", format!("{resource} delete")),
        (
            "intent",
            format!(
                "please archive every {resource} record that mentions {word} and then notify the workspace owner"
            ),
        ),
        ("synonym", format!("erase {resource}")),
        ("typo", format!("{typo} updaet")),
        (
            "common",
            "get the records for the user account project".to_owned(),
        ),
    ];
    for (kind, query) in &queries {
        let times = (0..QUERY_RUNS)
            .map(|_| {
                let start = Instant::now();
                black_box(index.search(black_box(query), 10));
                start.elapsed()
            })
            .collect();
        println!(
            "search  {kind:<8} median {:.1} µs  ({query})",
            median(times).as_secs_f64() * 1e6
        );
    }
}
