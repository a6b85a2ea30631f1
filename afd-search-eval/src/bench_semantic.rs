//! `afd-search-eval --bench-semantic N --model DIR` (feature `semantic`): the cost of the
//! semantic layer on a synthetic catalog of `N` commands, from the same release binary as
//! the quality evaluation. Prints:
//!
//! - **embedding throughput**: commands per second for the first (up to) 256 commands'
//!   texts, in the encoder's batches;
//! - **warm-cache start-up**: building the index with its semantic layer when every vector
//!   is in the cache (model load, cache read, vectors ready);
//! - **query embedding**: the model's time for one query;
//! - **search**: the median time of a whole search (query embedding, cosine over every
//!   command, lexical ranking, fusion), next to the lexical search alone;
//! - **memory**: the bytes the vectors take.
//!
//! To measure 2,000 or 10,000 commands without embedding them all (about a minute per
//! thousand on two cores), the cache is filled with the measured commands' vectors
//! repeated: search cost does not depend on the values of the vectors.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use afd_runtime::search::SearchIndex;
use afd_runtime::search::semantic::{Encoder, SemanticOptions, document_text};
use afd_search_eval::{semantic_catalog, synthetic};

use semantic_catalog::EMBED_SAMPLE;
/// How many times each query is timed.
const QUERY_RUNS: usize = 31;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs the measurements over `n` synthetic commands with the model in `model`.
pub fn run(n: usize, model: &Path) -> Result<(), String> {
    let docs = synthetic::catalog(n);
    let start = Instant::now();
    let encoder = Encoder::load(model).map_err(|e| format!("cannot load the model: {e}"))?;
    println!(
        "model   load {:.0} ms (dimension {})",
        ms(start.elapsed()),
        encoder.dim()
    );

    let texts: Vec<String> = docs.iter().map(document_text).collect();
    let sample: Vec<&str> = texts
        .iter()
        .take(EMBED_SAMPLE)
        .map(String::as_str)
        .collect();
    let start = Instant::now();
    let vectors = encoder.embed(&sample).map_err(|e| e.to_string())?;
    let took = start.elapsed();
    println!(
        "embed   {} commands in {:.2} s: {:.1} commands/s",
        sample.len(),
        took.as_secs_f64(),
        sample.len() as f64 / took.as_secs_f64()
    );

    let dir = std::env::temp_dir().join(format!("afd-bench-vectors-{}", std::process::id()));
    semantic_catalog::fill_cache(&encoder, &dir, &texts, &vectors)?;
    drop(encoder);

    let options = SemanticOptions::new(model).cache_dir(Some(dir.clone()));
    let start = Instant::now();
    let index = SearchIndex::build_semantic(docs.clone(), options);
    let stats = index
        .semantic()
        .ok_or("no semantic layer")?
        .wait()
        .map_err(|e| format!("cannot load the model: {e}"))?;
    println!(
        "start   {n} commands, warm cache: {:.0} ms to vectors ready ({} embedded, {} from the cache)",
        ms(start.elapsed()),
        stats.embedded,
        stats.reused
    );
    let lexical = SearchIndex::build(docs.clone());
    let dim = vectors.first().map_or(0, Vec::len);
    println!(
        "memory  vectors: {:.1} MiB ({n} x {dim} x 4 bytes)",
        (n * dim * 4) as f64 / (1024.0 * 1024.0)
    );

    let resource = docs[42 % n].category.clone();
    let queries = [
        ("keywords", format!("{resource} delete")),
        (
            "intent",
            format!("please archive every {resource} record and then notify the workspace owner"),
        ),
        ("synonym", format!("erase {resource}")),
    ];
    let query_encoder = Encoder::load(model).map_err(|e| e.to_string())?;
    for (kind, query) in &queries {
        let embed = median(
            (0..QUERY_RUNS)
                .map(|_| {
                    let start = Instant::now();
                    black_box(query_encoder.embed_one(black_box(query)).ok());
                    start.elapsed()
                })
                .collect(),
        );
        let fused = median(
            (0..QUERY_RUNS)
                .map(|_| {
                    let start = Instant::now();
                    black_box(index.search(black_box(query), 10));
                    start.elapsed()
                })
                .collect(),
        );
        let plain = median(
            (0..QUERY_RUNS)
                .map(|_| {
                    let start = Instant::now();
                    black_box(lexical.search(black_box(query), 10));
                    start.elapsed()
                })
                .collect(),
        );
        println!(
            "search  {kind:<8} n={n}: semantic {:.2} ms (query embedding {:.2} ms), lexical {:.3} ms",
            ms(fused),
            ms(embed),
            ms(plain)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
