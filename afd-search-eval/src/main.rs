//! `afd-search-eval --catalogs DIR --queries FILE.jsonl`: builds the search index the MCP
//! server uses over every `DIR/*.json` tool catalog and prints, for each query, one JSON
//! line `{"id": ..., "ranked": ["server/tool", ...]}` (the top 10), the format that
//! `shared/eval/score.py` scores.
//!
//! `afd-search-eval --bench-build N` instead times the index build over a synthetic catalog
//! of `N` commands and a few searches on it (medians; see `bench.rs`).

mod bench;

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

/// Ranks MCP tool catalogs against a query set with afd-runtime's search index.
#[derive(Debug, Parser)]
#[command(name = "afd-search-eval", version)]
struct Args {
    /// Folder of catalogs: `{"server", "tools": [{"name", "title"?, "description",
    /// "inputSchema"}]}`, one per `*.json` file; a tool's id is `<file stem>/<tool name>`.
    #[arg(long, value_name = "DIR", required_unless_present = "bench_build")]
    catalogs: Option<PathBuf>,
    /// Queries, one JSON object a line with at least `id` and `query`.
    #[arg(
        long,
        value_name = "FILE.jsonl",
        required_unless_present = "bench_build"
    )]
    queries: Option<PathBuf>,
    /// Time the index build over a synthetic catalog of N commands, and searches on it,
    /// instead of ranking (prints medians).
    #[arg(long, value_name = "N", conflicts_with_all = ["catalogs", "queries"])]
    bench_build: Option<usize>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(n) = args.bench_build {
        bench::run(n.max(1));
        return ExitCode::SUCCESS;
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
    let index = SearchIndex::build(docs);
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
        writeln!(out, "{}", json!({"id": id, "ranked": ranked}))
            .map_err(|e| format!("cannot write: {e}"))?;
    }
    out.flush().map_err(|e| format!("cannot write: {e}"))
}
