//! Read and write cues: the words that ask to read something (questions and reading verbs:
//! "which", "show") and the verbs that ask for a change ("create", "remove"), compared by
//! stem. The index marks the verbs of command names with them; query analysis reads the
//! intent of a request from its leading word.

use super::tokenize;

/// Words that ask to read: questions and reading verbs.
const READ_CUES: &[&str] = &[
    "what",
    "which",
    "who",
    "whose",
    "where",
    "when",
    "how",
    "why",
    "show",
    "list",
    "get",
    "find",
    "search",
    "view",
    "see",
    "look",
    "read",
    "fetch",
    "retrieve",
    "display",
    "describe",
    "explain",
    "count",
    "inspect",
    "lookup",
    "browse",
    "check",
    "summarize",
    "summarise",
    "compare",
    "give",
    "tell",
];

/// Verbs that ask for a change.
const WRITE_CUES: &[&str] = &[
    "create", "add", "new", "make", "insert", "update", "edit", "modify", "change", "set",
    "delete", "remove", "erase", "destroy", "drop", "move", "rename", "copy", "send", "post",
    "publish", "write", "save", "store", "persist", "put", "upload", "attach", "assign", "merge",
    "apply", "push", "run", "execute", "start", "stop", "cancel", "close", "finish", "complete",
    "finalize", "mark", "link", "tag", "label", "archive", "restore", "reset", "revert", "undo",
    "refund", "respond", "reply", "comment", "invite", "approve", "reject", "enable", "disable",
    "schedule", "record", "append", "replace", "lock", "unlock", "deploy", "install", "register",
    "submit", "trigger", "fill", "click", "type", "press", "navigate", "open", "upgrade", "import",
    "transfer", "pay", "charge", "resolve", "spin", "launch",
];

/// The stems of [`READ_CUES`] and [`WRITE_CUES`], sorted.
fn cue_stems() -> &'static (Vec<String>, Vec<String>) {
    static STEMS: std::sync::LazyLock<(Vec<String>, Vec<String>)> =
        std::sync::LazyLock::new(|| {
            let stems = |words: &[&str]| {
                let mut out: Vec<String> = words
                    .iter()
                    .map(|w| tokenize::stem(w).into_owned())
                    .collect();
                out.sort();
                out.dedup();
                out
            };
            (stems(READ_CUES), stems(WRITE_CUES))
        });
    &STEMS
}

/// Whether a word is a read cue (`Some(true)`), a write cue (`Some(false)`) or neither.
pub(crate) fn cue(word: &str) -> Option<bool> {
    let (read, write) = cue_stems();
    let stem = tokenize::stem(word);
    if read.binary_search_by(|s| s.as_str().cmp(&stem)).is_ok() {
        return Some(true);
    }
    if write.binary_search_by(|s| s.as_str().cmp(&stem)).is_ok() {
        return Some(false);
    }
    None
}
