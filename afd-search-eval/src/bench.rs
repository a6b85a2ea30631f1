//! `afd-search-eval --bench-build N`: times [`SearchIndex::build`] over a synthetic catalog
//! of `N` commands and searches on it, without criterion, so that it runs from the same
//! release binary as the quality evaluation.
//!
//! The catalog is the one of `afd-runtime`'s criterion bench: names `<resource>-<verb>`
//! (with a qualifier once every pair is used) over 300 invented resources and 30 verbs, a
//! description of 12 to 40 words, 2 to 5 parameters with a short description each, a tag.

use std::hint::black_box;
use std::time::{Duration, Instant};

use afd_runtime::search::{Document, SearchIndex};

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
    let docs = synthetic(n);
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
