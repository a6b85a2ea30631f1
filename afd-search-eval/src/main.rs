//! `afd-search-eval --catalogs DIR --queries FILE.jsonl`: builds the search index the MCP
//! server uses over every `DIR/*.json` tool catalog and prints, for each query, one JSON
//! line `{"id": ..., "ranked": ["server/tool", ...]}` (the top 10), the format that
//! `shared/eval/score.py` scores.
//!
//! With the `semantic` feature, `--model DIR` ranks with the semantic layer (a
//! sentence-transformers folder; vectors cached in `--cache DIR` when given), and
//! `--evidence FILE.jsonl` also writes what fusion ranks by (the lexical score and cosine of
//! each query's candidates), which `tune/cv.py` cross-validates the fusion weights on.
//!
//! `afd-search-eval --bench-build N` instead times the index build over a synthetic catalog
//! of `N` commands and a few searches on it (medians; see `bench.rs`).

mod bench;
#[cfg(feature = "semantic")]
mod bench_semantic;

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use afd_runtime::search::SearchIndex;
use afd_search_eval::catalogs;
use clap::Parser;
use serde_json::{Value, json};

/// How many tools each query line ranks.
const TOP: usize = 10;
/// How many candidates per list `--evidence` writes.
#[cfg(feature = "semantic")]
const EVIDENCE_DEPTH: usize = 50;

/// Ranks MCP tool catalogs against a query set with afd-runtime's search index.
#[derive(Debug, Parser)]
#[command(name = "afd-search-eval", version)]
struct Args {
    /// Folder of catalogs: `{"server", "tools": [{"name", "title"?, "description",
    /// "inputSchema"}]}`, one per `*.json` file; a tool's id is `<file stem>/<tool name>`.
    #[arg(long, value_name = "DIR")]
    catalogs: Option<PathBuf>,
    /// Queries, one JSON object a line with at least `id` and `query`.
    #[arg(long, value_name = "FILE.jsonl")]
    queries: Option<PathBuf>,
    /// Time the index build over a synthetic catalog of N commands, and searches on it,
    /// instead of ranking (prints medians).
    #[arg(long, value_name = "N", conflicts_with_all = ["catalogs", "queries"])]
    bench_build: Option<usize>,
    /// A sentence-transformers model folder: rank with the semantic layer.
    #[cfg(feature = "semantic")]
    #[arg(long, value_name = "DIR")]
    model: Option<PathBuf>,
    /// Time the semantic layer (embedding, warm start-up, search) on a synthetic catalog of
    /// N commands with `--model`, instead of ranking.
    #[cfg(feature = "semantic")]
    #[arg(long, value_name = "N", requires = "model", conflicts_with_all = ["catalogs", "queries"])]
    bench_semantic: Option<usize>,
    /// The vector cache folder for `--model` (default: no disk cache).
    #[cfg(feature = "semantic")]
    #[arg(long, value_name = "DIR", requires = "model")]
    cache: Option<PathBuf>,
    /// Also write, per query, the candidates' lexical scores and cosines (for tuning).
    #[cfg(feature = "semantic")]
    #[arg(long, value_name = "FILE.jsonl", requires = "model")]
    evidence: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(n) = args.bench_build {
        bench::run(n.max(1));
        return ExitCode::SUCCESS;
    }
    #[cfg(feature = "semantic")]
    if let (Some(n), Some(model)) = (args.bench_semantic, &args.model) {
        return match bench_semantic::run(n.max(1), model) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("afd-search-eval: {message}");
                ExitCode::FAILURE
            }
        };
    }
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("afd-search-eval: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let (Some(catalog_dir), Some(queries_path)) = (&args.catalogs, &args.queries) else {
        return Err("--catalogs and --queries are required".to_owned());
    };
    let (ids, docs) = catalogs::load(catalog_dir)?;
    let index = build_index(args, docs)?;
    #[cfg(feature = "semantic")]
    let mut evidence_out = match &args.evidence {
        Some(path) => {
            Some(BufWriter::new(fs::File::create(path).map_err(|e| {
                format!("cannot write {}: {e}", path.display())
            })?))
        }
        None => None,
    };
    let queries = fs::read_to_string(queries_path)
        .map_err(|e| format!("cannot read {}: {e}", queries_path.display()))?;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for (number, line) in queries.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let query: Value = serde_json::from_str(line)
            .map_err(|e| format!("{}:{}: {e}", queries_path.display(), number + 1))?;
        let text = query
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let ranked: Vec<&str> = index
            .search(text, TOP)
            .iter()
            .map(|hit| ids[hit.doc].as_str())
            .collect();
        let id = query.get("id").cloned().unwrap_or(Value::Null);
        #[cfg(feature = "semantic")]
        if let Some(out) = &mut evidence_out {
            let candidates: Vec<Value> = index
                .evidence(text, EVIDENCE_DEPTH)
                .iter()
                .map(|e| json!({"tool": ids[e.doc], "lexical": e.lexical, "cosine": e.cosine}))
                .collect();
            writeln!(out, "{}", json!({"id": id, "candidates": candidates}))
                .map_err(|e| format!("cannot write: {e}"))?;
        }
        writeln!(out, "{}", json!({"id": id, "ranked": ranked}))
            .map_err(|e| format!("cannot write: {e}"))?;
    }
    #[cfg(feature = "semantic")]
    if let Some(out) = &mut evidence_out {
        out.flush().map_err(|e| format!("cannot write: {e}"))?;
    }
    out.flush().map_err(|e| format!("cannot write: {e}"))
}

/// The lexical index, or with `--model` the index with its semantic layer, vectors ready.
fn build_index(
    args: &Args,
    docs: Vec<afd_runtime::search::Document>,
) -> Result<SearchIndex, String> {
    #[cfg(feature = "semantic")]
    if let Some(model) = &args.model {
        use afd_runtime::search::semantic::SemanticOptions;
        let options = SemanticOptions::new(model).cache_dir(args.cache.clone());
        let index = SearchIndex::build_semantic(docs, options);
        if let Some(layer) = index.semantic() {
            let stats = layer
                .wait()
                .map_err(|e| format!("cannot load the model: {e}"))?;
            eprintln!(
                "afd-search-eval: semantic layer ready ({} embedded, {} from the cache)",
                stats.embedded, stats.reused
            );
        }
        return Ok(index);
    }
    let _ = args;
    Ok(SearchIndex::build(docs))
}
