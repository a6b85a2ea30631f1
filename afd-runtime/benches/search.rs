//! Search index build and query time.
//!
//! `cargo bench -p afd-runtime --no-default-features --bench search`
//!
//! - `search_build/synthetic_10k`: building the index of a synthetic catalog of 10,000
//!   commands (CRUD-style names over a few hundred resources, descriptions and parameters
//!   drawn from a software vocabulary of ~1,500 words);
//! - `search_query/synthetic_10k/<kind>`: one query of each kind on that index;
//! - `search_build/eval_721` and `search_query/eval_721/all_dev_queries`: the real MCP
//!   catalogs and the development query set of `shared/eval` (skipped when absent; set
//!   `AFD_EVAL_DIR` to point elsewhere); the latter runs all queries per iteration.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use afd_runtime::search::{Document, SearchIndex};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;

const VERBS: &[&str] = &[
    "create",
    "get",
    "list",
    "update",
    "delete",
    "search",
    "export",
    "import",
    "archive",
    "restore",
    "assign",
    "move",
    "copy",
    "sync",
    "validate",
    "publish",
    "approve",
    "reject",
    "merge",
    "close",
    "open",
    "count",
    "summarize",
    "schedule",
    "cancel",
    "refund",
    "upload",
    "download",
    "link",
    "unlink",
];
const READ_VERBS: &[&str] = &[
    "get",
    "list",
    "search",
    "export",
    "count",
    "summarize",
    "download",
];
const SYLLABLES: &[&str] = &[
    "ac", "bel", "cor", "dan", "el", "fra", "gin", "hol", "ist", "jun", "kal", "lor", "men", "nor",
    "os", "pra", "qui", "ros", "sel", "tam", "ur", "vel", "wen", "xan", "yor", "zed",
];
const COMMON: &[&str] = &[
    "the",
    "a",
    "of",
    "for",
    "to",
    "in",
    "with",
    "and",
    "by",
    "from",
    "an",
    "or",
    "on",
    "returns",
    "given",
    "optionally",
    "filtered",
    "paginated",
    "identifier",
    "matching",
    "record",
    "records",
    "items",
    "account",
    "user",
    "project",
    "workspace",
    "status",
    "date",
];

/// A deterministic xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.next() % items.len()]
    }
}

/// ~1,500 invented words of two or three syllables.
fn vocabulary(rng: &mut Rng) -> Vec<String> {
    (0..1500)
        .map(|_| {
            let n = 2 + rng.next() % 2;
            (0..n).map(|_| rng.pick(SYLLABLES)).collect()
        })
        .collect()
}

fn synthetic(n: usize) -> Vec<Document> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let words = vocabulary(&mut rng);
    let resources: Vec<&str> = words[..300].iter().map(String::as_str).collect();
    let word = |rng: &mut Rng| -> String {
        if rng.next().is_multiple_of(3) {
            rng.pick(COMMON).to_owned()
        } else {
            words[rng.next() % words.len()].clone()
        }
    };
    (0..n)
        .map(|i| {
            let verb = VERBS[i % VERBS.len()];
            let resource = resources[(i / VERBS.len()) % resources.len()];
            let qualifier = if i >= VERBS.len() * resources.len() {
                format!("-{}", word(&mut rng))
            } else {
                String::new()
            };
            let description_len = 12 + rng.next() % 30;
            let description: Vec<String> = (0..description_len).map(|_| word(&mut rng)).collect();
            let params = (0..2 + rng.next() % 4)
                .map(|_| {
                    let name = format!("{}_{}", word(&mut rng), word(&mut rng));
                    let text: Vec<String> = (0..6).map(|_| word(&mut rng)).collect();
                    (name, text.join(" "))
                })
                .collect();
            Document {
                name: format!("{resource}-{verb}{qualifier}"),
                title: String::new(),
                aliases: Vec::new(),
                description: format!("{} {resource}. {}", capitalise(verb), description.join(" ")),
                category: resource.to_owned(),
                tags: vec![word(&mut rng)],
                params,
                read_only: Some(READ_VERBS.contains(&verb)),
            }
        })
        .collect()
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn eval_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("AFD_EVAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval"));
    dir.join("catalogs").is_dir().then_some(dir)
}

fn eval_catalogs(dir: &Path) -> Vec<Document> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("catalogs"))
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|path| path.extension().is_some_and(|ext| ext == "json"));
    files.sort();
    let mut docs = Vec::new();
    for path in files {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(catalog) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        for tool in catalog["tools"].as_array().into_iter().flatten() {
            docs.extend(Document::from_mcp_tool(&stem, tool));
        }
    }
    docs
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
    let docs = synthetic(10_000);
    let mut build = c.benchmark_group("search_build");
    build.sample_size(20);
    build.bench_function("synthetic_10k", |b| {
        b.iter(|| SearchIndex::build(black_box(docs.clone())))
    });
    let eval = eval_dir().map(|dir| (eval_catalogs(&dir), eval_queries(&dir)));
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

criterion_group!(benches, search);
criterion_main!(benches);
