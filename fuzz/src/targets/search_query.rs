//! The search query parser and tokenizer (`afd_runtime::search`): any text is a query, and
//! its hits are within the limit, on documents that exist, with finite scores, best first,
//! the same each time.
//!
//! The input's first line is the query, searched in a catalog of everyday commands; each
//! further line `name<TAB>description` is a document of a second catalog built from the
//! input itself, searched with the same query (so the tokenizer also reads fuzzed
//! documents).

use std::sync::LazyLock;

use afd_runtime::search::{Document, Hit, SearchIndex};

const CATALOG: &[(&str, &str)] = &[
    (
        "todo-create",
        "Create a todo item with a title and an optional due date.",
    ),
    (
        "todo-list",
        "List the todo items, newest first; filter by status or tag.",
    ),
    ("todo-delete", "Delete a todo item. This cannot be undone."),
    ("todo-complete", "Mark a todo as done."),
    ("user-create", "Create a new user account."),
    ("user-get", "Fetch a user by id or email address."),
    ("user-update", "Change a user's name, email or role."),
    (
        "order-create",
        "Create a new order. The stock is reserved and the order waits for payment.",
    ),
    (
        "order-cancel",
        "Cancel an order that has not shipped; the stock is released.",
    ),
    (
        "order-list",
        "List orders by customer, status or date range.",
    ),
    (
        "payment-refund",
        "Refund a captured payment in full or in part.",
    ),
    (
        "inventory-adjust",
        "Adjust the stock of a product by hand (damaged, lost, found).",
    ),
    (
        "product-search",
        "Search products by words, tags and price.",
    ),
    (
        "shipment-track",
        "Track a shipment's parcels by carrier code.",
    ),
    (
        "report-revenue",
        "Daily revenue between two dates, in cents.",
    ),
    (
        "config-set",
        "Set a configuration value; the old value is returned.",
    ),
    (
        "fileRead",
        "Read a file from disk (UTF-8 text, at most 1 MB).",
    ),
    ("HTTP_GET", "Fetch a URL over HTTP and return the body."),
];

static INDEX: LazyLock<SearchIndex> = LazyLock::new(|| {
    SearchIndex::build(
        CATALOG
            .iter()
            .map(|(name, description)| Document::new(*name, *description))
            .collect::<Vec<_>>(),
    )
});

fn check(index: &SearchIndex, query: &str, limit: usize) {
    let hits: Vec<Hit> = index.search(query, limit);
    assert!(hits.len() <= limit);
    for hit in &hits {
        assert!(hit.doc < index.len());
        assert!(hit.score.is_finite(), "score {} for {query:?}", hit.score);
    }
    assert!(
        hits.windows(2).all(|pair| pair[0].score >= pair[1].score),
        "best first: {hits:?}"
    );
    assert_eq!(hits, index.search(query, limit), "the same hits each time");
}

/// Checks one input: panics on anything this target forbids.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut lines = text.split('\n');
    let query = lines.next().unwrap_or_default();
    let limit = 1 + query.len() % 10;
    check(&INDEX, query, limit);
    let documents: Vec<Document> = lines
        .take(32)
        .map(|line| {
            let (name, description) = line.split_once('\t').unwrap_or((line, ""));
            Document::new(name, description)
        })
        .collect();
    if !documents.is_empty() {
        let index = SearchIndex::build(documents);
        check(&index, query, limit);
    }
}
