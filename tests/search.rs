//! Ranking behaviour of `afd_runtime::search`: word forms, case styles, synonyms, typos,
//! field weights, stop words, odd input, determinism; and the search quality on the MCP
//! catalogs of `shared/eval` (skipped when that folder is missing).

use std::path::{Path, PathBuf};

use afd_runtime::prelude::*;
use afd_runtime::search::{Document, Hit, SearchIndex};
use afd_runtime::{CommandDef, HandlerFuture, SourceLocation};

fn doc(name: &str, description: &str) -> Document {
    Document::new(name, description)
}

/// A small catalog in the shape of a real app: several commands per resource.
fn catalog() -> Vec<Document> {
    vec![
        doc(
            "user-create",
            "Create a new user account with a name and an email address.",
        ),
        doc("user-delete", "Permanently delete a user account."),
        doc("user-list", "List user accounts, newest first."),
        doc("user-get", "Get one user account by id."),
        doc("order-create", "Place an order for a customer."),
        doc("order-cancel", "Cancel an order that has not shipped yet."),
        doc("issue-create", "Open an issue in the tracker."),
        doc("invoice-send", "Email an invoice to the customer."),
    ]
}

fn names(index: &SearchIndex, docs: &[Document], query: &str) -> Vec<String> {
    index
        .search(query, 10)
        .iter()
        .map(|hit| docs[hit.doc].name.clone())
        .collect()
}

fn top(query: &str) -> String {
    let docs = catalog();
    let index = SearchIndex::build(docs.clone());
    names(&index, &docs, query)
        .into_iter()
        .next()
        .unwrap_or_default()
}

#[test]
fn word_forms_find_the_same_command() {
    for query in [
        "create user",
        "created user",
        "creating users",
        "creates a user",
    ] {
        assert_eq!(top(query), "user-create", "{query}");
    }
}

#[test]
fn every_case_style_is_split() {
    let docs = vec![
        doc("createUser", "Make an account."),
        doc("delete_order", "Remove an order."),
        doc("invoice-send", "Email an invoice."),
    ];
    let index = SearchIndex::build(docs.clone());
    assert_eq!(names(&index, &docs, "create user")[0], "createUser");
    assert_eq!(names(&index, &docs, "createUser")[0], "createUser");
    assert_eq!(names(&index, &docs, "order delete")[0], "delete_order");
    assert_eq!(names(&index, &docs, "deleteOrder")[0], "delete_order");
    assert_eq!(names(&index, &docs, "send_invoice")[0], "invoice-send");
    assert_eq!(names(&index, &docs, "SendInvoice")[0], "invoice-send");
}

#[test]
fn synonyms_find_commands_worded_differently() {
    assert_eq!(top("erase a user"), "user-delete");
    assert_eq!(top("remove account"), "user-delete");
    assert_eq!(top("new ticket"), "issue-create");
    assert_eq!(top("enumerate users"), "user-list");
}

#[test]
fn a_synonym_weighs_less_than_the_word_itself() {
    let docs = vec![
        doc("item-remove", "Remove an item."),
        doc("item-delete", "Delete an item."),
    ];
    let index = SearchIndex::build(docs.clone());
    assert_eq!(
        names(&index, &docs, "delete item"),
        ["item-delete", "item-remove"]
    );
    assert_eq!(
        names(&index, &docs, "remove item"),
        ["item-remove", "item-delete"]
    );
}

#[test]
fn typos_are_corrected() {
    assert_eq!(top("delte user"), "user-delete");
    assert_eq!(top("cancle order"), "order-cancel");
    assert_eq!(top("invoce"), "invoice-send");
}

#[test]
fn a_name_match_beats_a_description_only_match() {
    let docs = vec![
        doc(
            "report-build",
            "Builds a report; can also export it when asked.",
        ),
        doc("data-export", "Writes the data set out as CSV."),
    ];
    let index = SearchIndex::build(docs.clone());
    assert_eq!(names(&index, &docs, "export")[0], "data-export");
}

#[test]
fn plural_objects_favour_a_listing() {
    let docs = vec![
        doc("slot-create", "Create a work slot in the planner."),
        doc("slot-list", "List the work slots of the planner."),
        doc("slot-delete", "Delete a work slot from the planner."),
    ];
    let index = SearchIndex::build(docs.clone());
    assert_eq!(names(&index, &docs, "planner slots")[0], "slot-list");
    // Singular, or asking for a change: no listing wanted.
    assert_eq!(names(&index, &docs, "new planner slot")[0], "slot-create");
    assert_eq!(
        names(&index, &docs, "delete planner slots")[0],
        "slot-delete"
    );
}

#[test]
fn intent_comes_from_the_word_that_leads_the_query() {
    let notes = |read_only| Document {
        read_only: Some(read_only),
        ..doc("notes", "Notes of an issue.")
    };
    let docs = vec![notes(true), notes(false)];
    let index = SearchIndex::build(docs);
    let first = |query: &str| index.search(query, 2)[0].doc;
    assert_eq!(first("show issue notes"), 0);
    assert_eq!(first("what notes does the issue have?"), 0);
    assert_eq!(first("comment issue notes"), 1);
    // "comment" further on is a noun: no intent, the tie goes to the earlier document.
    assert_eq!(first("issue notes comment"), 0);
}

#[test]
fn two_words_match_their_compound_and_themselves() {
    let docs = vec![
        doc(
            "orgs-list",
            "List organisations, sorted by their pullRequests count.",
        ),
        doc("search_pull_requests", "Search for pull requests."),
    ];
    let index = SearchIndex::build(docs.clone());
    // Before, "pull requests" became `pullrequests` alone and missed the second.
    let found = names(&index, &docs, "the pull requests");
    assert!(
        found.contains(&"search_pull_requests".to_owned()),
        "{found:?}"
    );
    assert!(found.contains(&"orgs-list".to_owned()), "{found:?}");
    assert_eq!(names(&index, &docs, "pullRequests")[0], "orgs-list");
    // A compound with a stop word still stands for the pair: "on call" -> `oncall`.
    let docs = vec![
        doc("call-start", "Start a call."),
        doc("oncall-list", "Who is oncall."),
    ];
    let index = SearchIndex::build(docs.clone());
    assert_eq!(names(&index, &docs, "on call")[0], "oncall-list");
}

#[test]
fn stop_words_do_not_rank() {
    let docs = vec![
        doc("the-thing", "The the the of of and to a an in."),
        doc("user-delete", "Delete a user."),
    ];
    let index = SearchIndex::build(docs.clone());
    assert_eq!(names(&index, &docs, "delete the user"), ["user-delete"]);
    assert!(index.search("the of and", 10).is_empty());
}

#[test]
fn empty_and_odd_queries_are_safe() {
    let docs = catalog();
    let index = SearchIndex::build(docs.clone());
    for query in [
        "",
        "   ",
        "\t\n",
        "!!!",
        "--__--",
        "a",
        "日本語",
        "🦀🦀",
        "\u{0}",
    ] {
        assert!(index.search(query, 10).len() <= 10, "{query:?}");
    }
    assert!(index.search("", 10).is_empty());
    assert!(index.search("    ", 10).is_empty());
    assert!(index.search("delete user", 0).is_empty());
    let huge = "delete user ".repeat(100_000);
    assert_eq!(names(&index, &docs, &huge)[0], "user-delete");
    let long_word = "x".repeat(100_000);
    assert!(index.search(&long_word, 10).is_empty());
}

#[test]
fn results_are_sorted_limited_and_deterministic() {
    let docs = catalog();
    let first = SearchIndex::build(docs.clone());
    let second = SearchIndex::build(docs.clone());
    for query in ["user", "create", "order customer", "delte"] {
        let hits = first.search(query, 3);
        assert!(hits.len() <= 3);
        assert!(
            hits.windows(2).all(|pair| pair[0].score >= pair[1].score),
            "{query}"
        );
        assert_eq!(hits, first.search(query, 3), "{query}");
        assert_eq!(hits, second.search(query, 3), "{query}");
    }
}

#[test]
fn ties_go_to_the_earlier_document_or_the_tie_break() {
    let docs = vec![doc("alpha-sync", "Sync."), doc("beta-sync", "Sync.")];
    let index = SearchIndex::build(docs);
    let hits = index.search("sync", 10);
    assert_eq!(hits.iter().map(|hit| hit.doc).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(hits[0].score, hits[1].score);
    let popular = index.search_with("sync", 10, |doc| if doc == 1 { 5.0 } else { 0.0 });
    assert_eq!(
        popular.iter().map(|hit| hit.doc).collect::<Vec<_>>(),
        [1, 0]
    );
}

fn ping(_input: Value, _ctx: CommandContext) -> HandlerFuture {
    Box::pin(async { CommandResult::success(json!("pong")) })
}

fn archive_schema() -> Value {
    json!({"type": "object", "properties": {
        "project": {"type": "string", "description": "The project to freeze"}
    }})
}

static ARCHIVE: CommandDef = CommandDef::new(
    "project-archive",
    "Archive a project.",
    ping,
    archive_schema,
    SourceLocation {
        file: file!(),
        line: line!(),
        column: 1,
        module_path: module_path!(),
    },
)
.with_tags(&["admin"])
.with_aliases(&["project-shelve"]);

#[test]
fn documents_come_from_command_definitions() {
    let document = Document::from_command(&ARCHIVE);
    assert_eq!(document.name, "project-archive");
    assert_eq!(document.category, "project");
    assert_eq!(document.tags, ["admin"]);
    assert_eq!(document.aliases, ["project-shelve"]);
    assert_eq!(
        document.params,
        [("project".to_owned(), "The project to freeze".to_owned())]
    );
    assert_eq!(document.read_only, Some(true));
    let index = SearchIndex::build([doc("other", "Something else."), document]);
    // Through a parameter's description.
    assert_eq!(index.search("freeze", 5)[0].doc, 1);
}

/// The `shared/eval` folder beside the repository, or `AFD_EVAL_DIR`.
fn eval_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("AFD_EVAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval"));
    (dir.join("catalogs").is_dir() && dir.join("queries-dev.jsonl").is_file()).then_some(dir)
}

/// Loads the catalogs as `afd-search-eval` does: ids `<file stem>/<tool name>`.
fn load_catalogs(dir: &Path) -> (Vec<String>, Vec<Document>) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("catalogs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let (mut ids, mut docs) = (Vec::new(), Vec::new());
    for path in files {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let catalog: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for tool in catalog["tools"].as_array().unwrap() {
            let document = Document::from_mcp_tool(&stem, tool).unwrap();
            ids.push(format!("{stem}/{}", document.name));
            docs.push(document);
        }
    }
    (ids, docs)
}

#[test]
fn recall_at_5_and_mrr_on_the_development_queries() {
    let Some(dir) = eval_dir() else {
        println!("skipped: shared/eval not found (set AFD_EVAL_DIR)");
        return;
    };
    let (ids, docs) = load_catalogs(&dir);
    assert!(docs.len() > 700, "{} tools", docs.len());
    let index = SearchIndex::build(docs);
    let queries = std::fs::read_to_string(dir.join("queries-dev.jsonl")).unwrap();
    let (mut total, mut found, mut reciprocal) = (0usize, 0usize, 0f64);
    for line in queries.lines().filter(|line| !line.trim().is_empty()) {
        let query: Value = serde_json::from_str(line).unwrap();
        let gold: Vec<&str> = query["gold"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let hits: Vec<Hit> = index.search(query["query"].as_str().unwrap(), 10);
        total += 1;
        if let Some(rank) = hits
            .iter()
            .position(|hit| gold.contains(&ids[hit.doc].as_str()))
        {
            reciprocal += 1.0 / (rank + 1) as f64;
            if rank < 5 {
                found += 1;
            }
        }
    }
    let recall = found as f64 / total as f64;
    let mrr = reciprocal / total as f64;
    println!("Recall@5 {recall:.3}, MRR {mrr:.3} over {total} queries");
    assert!(recall >= 0.90, "Recall@5 {recall:.3} < 0.90");
    assert!(mrr >= 0.75, "MRR {mrr:.3} < 0.75");
}
