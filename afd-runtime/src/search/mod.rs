//! Ranked, typo-tolerant search over a command catalog (what afd-discover's `search` uses).
//!
//! A [`SearchIndex`] is built once from [`Document`]s, the searchable text of each command
//! by field, and answers free-text queries with [`Hit`]s, best first. Ranking is BM25F
//! over the fields (name words weigh most, then aliases and title, category and tags, the
//! description, parameters) on Snowball stems of words split from any case style, with
//! stop words dropped, a table of general software synonyms ("erase" finds a delete
//! command, at a lower weight than the word itself), typo correction of words the catalog
//! does not know, and lexical signals on top of BM25F (query coverage, name and category
//! coverage, read or write intent, bigrams, lower weight for the later steps of "do A, then
//! B"). See [`SearchIndex`] for the details. Build cost and search time are measured by
//! `cargo bench -p afd-search-eval --bench search`.
//!
//! ```
//! use afd_runtime::search::{Document, SearchIndex};
//! let docs = vec![
//!     Document::new("todo-create", "Create a todo item."),
//!     Document::new("todo-delete", "Delete a todo item."),
//!     Document::new("todo-list", "List the todo items, newest first."),
//! ];
//! let index = SearchIndex::build(docs);
//! assert_eq!(index.search("remove a todo", 3)[0].doc, 1); // a synonym
//! assert_eq!(index.search("creating todos", 3)[0].doc, 0); // word forms
//! assert_eq!(index.search("delte", 3)[0].doc, 1); // a typo
//! assert!(index.search("   ", 3).is_empty());
//! ```

mod build;
mod coverage;
mod cues;
mod document;
mod hit;
mod index;
mod judge;
mod phrasings;
mod query;
mod rank;
mod ranking;
#[cfg(feature = "semantic")]
pub mod semantic;
mod synonyms;
mod tokenize;
mod typo;
mod vocabulary;
mod word_map;

pub use coverage::Coverage;
pub use document::Document;
pub use hit::Hit;
pub use index::SearchIndex;
pub use judge::{CONFIDENT_HITS, Judged, Match};

/// Most phrasings of one request a search takes
/// ([`SearchIndex::search_phrasings`]).
pub const MAX_PHRASINGS: usize = 3;

/// Queries are cut to this many bytes (at a character boundary) before analysis.
pub const MAX_QUERY_BYTES: usize = 1024;
