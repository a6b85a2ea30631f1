//! Search index build and query time.
//!
//! `cargo bench -p afd-search-eval --bench search`
//!
//! - `search_build/synthetic_10k`: building the index of a synthetic catalog of 10,000
//!   commands ([`afd_search_eval::synthetic`]: CRUD-style names over a few hundred
//!   resources, descriptions and parameters drawn from a vocabulary of ~1,500 words);
//! - `search_query/synthetic_10k/<kind>`: one query of each kind on that index;
//! - `search_build/eval_721` and `search_query/eval_721/all_dev_queries`: the real MCP
//!   catalogs and the development query set of `shared/eval` (skipped when absent; set
//!   `AFD_EVAL_DIR` to point elsewhere); the latter runs all queries per iteration;
//! - `search_phrasings/synthetic_10k/lexical/<n>`: a request alone (`1`), and with two
//!   added phrasings fused (`3`, `SearchIndex::search_phrasings`), on the 10,000-command
//!   index; each added phrasing alone (`alone_2`, `alone_3`) for comparison; and the request
//!   alone and the three judged (`1_judged`, `3_judged`, `SearchIndex::search_judged_where`:
//!   the ranking plus the match and a confidence per hit, as afd-discover searches);
//! - `search_phrasings/synthetic_10k/semantic/<n>`: the same with the semantic layer, when
//!   built with `--features semantic` and `AFD_EMBED_MODEL` names a model folder (the
//!   catalog's vectors are [`afd_search_eval::semantic_catalog`]'s).

use std::hint::black_box;
use std::path::{Path, PathBuf};

use afd_runtime::search::{Document, SearchIndex};
use afd_search_eval::{catalogs, synthetic};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;

fn eval_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("AFD_EVAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval"));
    dir.join("catalogs").is_dir().then_some(dir)
}

/// The documents of the eval catalogs, the ones `afd-search-eval` ranks (none when they
/// cannot be read).
fn eval_catalog(dir: &Path) -> Vec<Document> {
    match catalogs::load(&dir.join("catalogs")) {
        Ok((_, docs)) => docs,
        Err(message) => {
            eprintln!("{message}");
            Vec::new()
        }
    }
}

fn eval_queries(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("queries-dev.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|q| q["query"].as_str().map(str::to_owned))
        .collect()
}

fn search(c: &mut Criterion) {
    let docs = synthetic::catalog(10_000);
    let mut build = c.benchmark_group("search_build");
    build.sample_size(20);
    build.bench_function("synthetic_10k", |b| {
        b.iter(|| SearchIndex::build(black_box(docs.clone())))
    });
    let eval = eval_dir().map(|dir| (eval_catalog(&dir), eval_queries(&dir)));
    if let Some((catalog, _)) = &eval {
        build.bench_function("eval_721", |b| {
            b.iter(|| SearchIndex::build(black_box(catalog.clone())))
        });
    } else {
        eprintln!("shared/eval not found: skipping the eval catalog benchmarks");
    }
    build.finish();

    let index = SearchIndex::build(docs.clone());
    // Words of the synthetic vocabulary, to make queries that match.
    let resource = docs[42].category.clone();
    let description_word = docs[4242]
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
                "please archive every {resource} record that mentions {description_word} and then notify the workspace owner"
            ),
        ),
        ("synonym", format!("erase {resource}")),
        ("typo", format!("{typo} updaet")),
        (
            "common_words",
            "get the records for the user account project".to_owned(),
        ),
    ];
    let mut group = c.benchmark_group("search_query");
    for (kind, query) in &queries {
        assert!(
            !index.search(query, 10).is_empty() || *kind == "typo",
            "{kind}: {query}"
        );
        group.bench_function(format!("synthetic_10k/{kind}"), |b| {
            b.iter(|| index.search(black_box(query), 10))
        });
    }
    if let Some((catalog, queries)) = eval {
        let index = SearchIndex::build(catalog);
        group.bench_function(format!("eval_721/all_{}_dev_queries", queries.len()), |b| {
            b.iter(|| {
                for query in &queries {
                    black_box(index.search(black_box(query), 10));
                }
            })
        });
    }
    group.finish();
}

/// A request and two phrasings an agent adds, in the synthetic catalog's words.
fn phrasings(docs: &[Document]) -> [String; 3] {
    let resource = &docs[42].category;
    [
        format!("please archive every {resource} record and then notify the workspace owner"),
        format!("{resource} archive"),
        format!("archive {resource} records"),
    ]
}

/// One phrasing alone, each added one alone, and all three fused, on `index`.
fn bench_phrasings(c: &mut Criterion, mode: &str, index: &SearchIndex, phrasings: &[String; 3]) {
    let all: Vec<&str> = phrasings.iter().map(String::as_str).collect();
    assert!(!index.search_phrasings(&all, 10).is_empty());
    let mut group = c.benchmark_group("search_phrasings");
    group.bench_function(format!("synthetic_10k/{mode}/1"), |b| {
        b.iter(|| index.search_phrasings(black_box(&all[..1]), 10))
    });
    for at in [1, 2] {
        group.bench_function(format!("synthetic_10k/{mode}/alone_{}", at + 1), |b| {
            b.iter(|| index.search_phrasings(black_box(&all[at..=at]), 10))
        });
    }
    group.bench_function(format!("synthetic_10k/{mode}/3"), |b| {
        b.iter(|| index.search_phrasings(black_box(&all), 10))
    });
    // The same searches judged, as afd-discover runs them: with the match and a confidence
    // for each hit of the page.
    for n in [1, 3] {
        group.bench_function(format!("synthetic_10k/{mode}/{n}_judged"), |b| {
            b.iter(|| index.search_judged_where(black_box(&all[..n]), 10, 10, |_| 0.0, |_| true))
        });
    }
    group.finish();
}

fn search_phrasings(c: &mut Criterion) {
    let docs = synthetic::catalog(10_000);
    let phrasings = phrasings(&docs);
    let index = SearchIndex::build(docs.clone());
    bench_phrasings(c, "lexical", &index, &phrasings);
    #[cfg(feature = "semantic")]
    match std::env::var_os(afd_runtime::search::semantic::MODEL_ENV) {
        Some(model) => match afd_search_eval::semantic_catalog::index(&docs, model.as_ref()) {
            Ok((index, cache)) => {
                bench_phrasings(c, "semantic", &index, &phrasings);
                let _ = std::fs::remove_dir_all(cache);
            }
            Err(message) => eprintln!("semantic benchmarks skipped: {message}"),
        },
        None => eprintln!("AFD_EMBED_MODEL unset: semantic benchmarks skipped"),
    }
}

criterion_group!(benches, search, search_phrasings);
criterion_main!(benches);
