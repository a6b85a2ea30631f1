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
//! `--alternatives FILE.jsonl` (lines `{"id", "alts": [phrasing, ...]}`) ranks each query
//! with its added phrasings, fused as afd-discover fuses a `search` array
//! (`SearchIndex::search_phrasings`); `--phrasings N` keeps the request and the first
//! `N - 1` of them. `--lists FILE.jsonl` also writes each phrasing's own ranking with its
//! scores, as the fusion sees them (`SearchIndex::phrasing_rankings`), which
//! `tune/cv_phrasings.py` cross-validates the fusion on.
//!
//! `--match-evidence FILE.jsonl` also writes, per query, what tells a request the catalog
//! can serve from one it cannot: the fused ranking's best scores, each phrasing's own best
//! scores, and for each of the fused best few commands what it covers of every phrasing
//! (`SearchIndex::coverage`) and, with the semantic layer, its cosine to the request;
//! `tune/cv_match.py` cross-validates the match decision on it.
//!
//! `afd-search-eval --bench-build N` instead times the index build over a synthetic catalog
//! of `N` commands and a few searches on it (medians; see `bench.rs`).

mod bench;
#[cfg(feature = "semantic")]
mod bench_semantic;

use std::collections::HashMap;
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use afd_runtime::search::{Hit, MAX_PHRASINGS, SearchIndex};
use afd_search_eval::catalogs;
use clap::Parser;
use serde_json::{Value, json};

/// How many tools each query line ranks.
const TOP: usize = 10;
/// How many documents of each phrasing's ranking `--lists` writes.
const LIST_DEPTH: usize = 50;
/// How many of the fused best commands `--match-evidence` describes.
const MATCH_DEPTH: usize = TOP;
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
    /// Further phrasings of each query, one JSON object a line: `{"id", "alts": [...]}`.
    /// Each query is ranked with its phrasings fused.
    #[arg(long, value_name = "FILE.jsonl", requires = "queries")]
    alternatives: Option<PathBuf>,
    /// How many phrasings to rank with: the request and the first N - 1 alternatives.
    #[arg(long, value_name = "N", default_value_t = MAX_PHRASINGS as u64, requires = "alternatives",
          value_parser = clap::value_parser!(u64).range(1..=MAX_PHRASINGS as u64))]
    phrasings: u64,
    /// Also write, per query, each phrasing's own ranking (its best 50, with scores).
    #[arg(long, value_name = "FILE.jsonl", requires = "alternatives")]
    lists: Option<PathBuf>,
    /// Also write, per query, the evidence of how well its best commands match (the
    /// fused and per-phrasing best scores, coverage of each phrasing, cosines).
    #[arg(long, value_name = "FILE.jsonl")]
    match_evidence: Option<PathBuf>,
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
    let alternatives = match &args.alternatives {
        Some(path) => read_alternatives(path)?,
        None => HashMap::new(),
    };
    let mut lists_out = match &args.lists {
        Some(path) => {
            Some(BufWriter::new(fs::File::create(path).map_err(|e| {
                format!("cannot write {}: {e}", path.display())
            })?))
        }
        None => None,
    };
    let mut match_out = match &args.match_evidence {
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
        let id = query.get("id").cloned().unwrap_or(Value::Null);
        let mut phrasings = vec![text];
        if args.alternatives.is_some() {
            let alts = alternatives.get(&id.to_string()).ok_or_else(|| {
                format!("{}: no alternatives for query {id}", queries_path.display())
            })?;
            phrasings.extend(
                alts.iter()
                    .map(String::as_str)
                    .take(args.phrasings as usize - 1),
            );
        }
        let hits = index.search_phrasings(&phrasings, TOP);
        let ranked: Vec<&str> = hits.iter().map(|hit| ids[hit.doc].as_str()).collect();
        if let Some(out) = &mut match_out {
            let line = match_evidence(&index, &ids, &phrasings, &hits);
            writeln!(out, "{}", json!({"id": id, "evidence": line}))
                .map_err(|e| format!("cannot write: {e}"))?;
        }
        if let Some(out) = &mut lists_out {
            let lists: Vec<Vec<Value>> = index
                .phrasing_rankings(&phrasings, LIST_DEPTH)
                .iter()
                .map(|ranking| {
                    ranking
                        .iter()
                        .map(|hit| json!({"tool": ids[hit.doc], "score": hit.score}))
                        .collect()
                })
                .collect();
            writeln!(out, "{}", json!({"id": id, "lists": lists}))
                .map_err(|e| format!("cannot write: {e}"))?;
        }
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
    if let Some(out) = &mut match_out {
        out.flush().map_err(|e| format!("cannot write: {e}"))?;
    }
    if let Some(out) = &mut lists_out {
        out.flush().map_err(|e| format!("cannot write: {e}"))?;
    }
    #[cfg(feature = "semantic")]
    if let Some(out) = &mut evidence_out {
        out.flush().map_err(|e| format!("cannot write: {e}"))?;
    }
    out.flush().map_err(|e| format!("cannot write: {e}"))
}

/// What `--match-evidence` writes of one query: the fused best scores, each phrasing's own
/// best scores (lexical, or fused with the semantic layer for the first when it is ready),
/// and for each of the fused best [`MATCH_DEPTH`] commands its coverage of every phrasing
/// and (semantic layer) its cosine to the request.
fn match_evidence(index: &SearchIndex, ids: &[String], phrasings: &[&str], hits: &[Hit]) -> Value {
    let rankings: Vec<Value> = index
        .phrasing_rankings(phrasings, TOP)
        .iter()
        .map(|ranking| {
            json!(
                ranking
                    .iter()
                    .map(|hit| json!([ids[hit.doc], hit.score]))
                    .collect::<Vec<_>>()
            )
        })
        .collect();
    #[cfg(feature = "semantic")]
    let cosines: HashMap<usize, f32> = phrasings
        .first()
        .map(|request| index.evidence(request, EVIDENCE_DEPTH))
        .unwrap_or_default()
        .iter()
        .map(|e| (e.doc, e.cosine))
        .collect();
    let best: Vec<Value> = hits
        .iter()
        .take(MATCH_DEPTH)
        .map(|hit| {
            let coverage: Vec<Value> = phrasings
                .iter()
                .map(|phrasing| {
                    let c = index.coverage(phrasing, hit.doc);
                    json!({"share": c.share, "missed": c.missed, "unknown": c.unknown, "concepts": c.concepts, "action": c.action, "category": c.category})
                })
                .collect();
            #[allow(unused_mut)]
            let mut entry = json!({"tool": ids[hit.doc], "score": hit.score, "coverage": coverage});
            #[cfg(feature = "semantic")]
            if let Some(cosine) = cosines.get(&hit.doc) {
                entry["cosine"] = json!(cosine);
            }
            entry
        })
        .collect();
    let judged = index.search_judged_where(phrasings, TOP, TOP, |_| 0.0, |_| true);
    #[allow(unused_mut)]
    let mut line = json!({
        "best": best,
        "rankings": rankings,
        "match": judged.verdict.as_str(),
        "fit": judged.fit,
        "confidence": judged.confidence,
    });
    #[cfg(feature = "semantic")]
    if let Some(top) = cosines.values().copied().reduce(f32::max) {
        line["topCosine"] = json!(top);
    }
    line
}

/// The added phrasings of each query, by the JSON text of its id.
fn read_alternatives(path: &PathBuf) -> Result<HashMap<String, Vec<String>>, String> {
    let text =
        fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut out = HashMap::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |e: String| format!("{}:{}: {e}", path.display(), number + 1);
        let entry: Value = serde_json::from_str(line).map_err(|e| at(e.to_string()))?;
        let alts = entry
            .get("alts")
            .and_then(Value::as_array)
            .ok_or_else(|| at("`alts` must be an array of strings".to_owned()))?
            .iter()
            .map(|alt| alt.as_str().map(str::to_owned))
            .collect::<Option<Vec<String>>>()
            .ok_or_else(|| at("`alts` must be an array of strings".to_owned()))?;
        let id = entry.get("id").cloned().unwrap_or(Value::Null);
        out.insert(id.to_string(), alts);
    }
    Ok(out)
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
