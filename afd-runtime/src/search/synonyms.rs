//! A table of general software vocabulary that means the same thing, so that a query worded
//! differently from a command's text still finds it ("erase" finds a delete command,
//! "ticket" an issue tracker's issue, "PR" a pull request).
//!
//! Groups are symmetric: every member stands for every other. A word may belong to several
//! groups (`show` lists and displays). Matches through a synonym count less than matches of
//! the query's own words (see the synonym weight of query analysis), so a command that uses
//! the query's exact word still ranks first. Members with a space are phrases: a query that
//! contains the phrase ("sign in", "how many") stands for the group's single words.
//!
//! The table is deliberately generic (CRUD verbs, version control, issue tracking, files,
//! web, payments, scheduling, observability): it must not encode any one catalog.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::tokenize::{self, Piece};

/// The groups of interchangeable words.
const GROUPS: &[&[&str]] = &[
    // Creating, removing, changing.
    &["create", "add", "new", "make", "insert", "register"],
    &[
        "create",
        "start",
        "launch",
        "provision",
        "spin up",
        "set up",
        "setup",
    ],
    &[
        "delete", "remove", "erase", "destroy", "drop", "purge", "discard", "wipe", "trash", "rm",
        "del",
    ],
    &[
        "update", "edit", "modify", "change", "alter", "patch", "amend", "revise", "adjust",
    ],
    &["rename", "retitle"],
    &["move", "relocate", "transfer", "mv"],
    &["copy", "duplicate", "clone", "cp"],
    &["duplicate", "dupe", "repeat"],
    &["replace", "overwrite", "substitute", "swap"],
    &["append", "add", "attach", "extend"],
    &["put", "place", "add", "insert", "set"],
    &["set", "assign", "configure", "specify"],
    &["enable", "activate", "turn on", "switch on"],
    &["disable", "deactivate", "turn off", "switch off"],
    &["archive", "hide", "shelve"],
    &["restore", "recover", "undelete", "unarchive"],
    &[
        "revert",
        "undo",
        "rollback",
        "roll back",
        "reset",
        "restore",
    ],
    // Reading and finding.
    &[
        "get", "fetch", "retrieve", "read", "obtain", "load", "lookup", "look up",
    ],
    &[
        "show",
        "display",
        "view",
        "describe",
        "inspect",
        "detail",
        "info",
        "information",
    ],
    &["list", "show", "enumerate", "browse", "all"],
    &[
        "search",
        "find",
        "query",
        "locate",
        "lookup",
        "look up",
        "look for",
        "look through",
        "seek",
        "discover",
    ],
    &["filter", "narrow", "restrict"],
    &["count", "number", "total", "tally", "how many"],
    &["sum", "total", "add", "plus", "addition"],
    &[
        "explain",
        "describe",
        "summarize",
        "summarise",
        "summary",
        "overview",
    ],
    &["compare", "diff", "difference", "delta"],
    &[
        "check", "verify", "validate", "assert", "confirm", "ensure", "test",
    ],
    &["monitor", "watch", "observe", "track"],
    &["wait", "pause", "sleep", "delay"],
    // Running and stopping.
    &[
        "run", "execute", "exec", "invoke", "call", "trigger", "perform",
    ],
    &["start", "begin", "launch", "initiate", "kick off", "boot"],
    &[
        "stop",
        "halt",
        "terminate",
        "kill",
        "abort",
        "end",
        "shutdown",
        "shut down",
    ],
    &["cancel", "abort", "revoke", "void", "withdraw"],
    &["close", "shut", "finish", "complete", "resolve", "done"],
    &["finalize", "finalise", "complete", "finish"],
    &["open", "reopen", "launch"],
    &["restart", "reboot", "relaunch", "reload"],
    &["retry", "rerun", "re-run", "repeat"],
    &["schedule", "plan", "book"],
    // Communication.
    &["send", "post", "publish", "submit", "dispatch", "deliver"],
    &["message", "msg", "chat", "dm"],
    &["reply", "respond", "answer"],
    &["comment", "note", "remark"],
    &["annotation", "annotate", "marker", "note"],
    &["notification", "notify", "alert", "inbox"],
    &["alert", "alarm", "alerting", "warning"],
    &["email", "mail", "e-mail"],
    &["channel", "room", "chatroom"],
    &["thread", "conversation", "discussion"],
    &["mute", "silence", "suppress", "ignore", "dismiss"],
    // Storage and transfer.
    &["save", "store", "persist", "keep", "write"],
    &["upload", "attach", "attachment"],
    &["download", "export", "save"],
    &["import", "ingest", "load"],
    &[
        "link",
        "connect",
        "associate",
        "relate",
        "relation",
        "relationship",
    ],
    &["unlink", "disconnect", "detach", "dissociate"],
    &["sync", "synchronize", "synchronise", "refresh"],
    &["merge", "combine", "join", "integrate"],
    &["folder", "directory", "dir"],
    &["file", "document", "doc"],
    &["document", "doc", "page", "article"],
    &["image", "picture", "photo", "img", "screenshot"],
    &[
        "screenshot",
        "screen capture",
        "screengrab",
        "capture",
        "snap",
    ],
    &["content", "body", "text"],
    &["path", "location"],
    // Version control and code.
    &["repository", "repo", "codebase"],
    &["pull request", "pr", "merge request", "mr"],
    &["commit", "check in", "changeset", "revision"],
    &["stage", "index"],
    &["branch", "fork"],
    &[
        "history",
        "log",
        "activity",
        "timeline",
        "changelog",
        "audit",
    ],
    &["version", "release"],
    &["deploy", "deployment", "rollout", "ship", "release"],
    &["build", "compile"],
    &["script", "code", "snippet"],
    &[
        "terminal",
        "shell",
        "console",
        "command line",
        "cli",
        "bash",
    ],
    &["command", "cmd"],
    &[
        "config",
        "configuration",
        "settings",
        "setting",
        "preferences",
        "options",
        "setup",
    ],
    &["parameter", "param", "argument", "arg", "option"],
    &["environment", "env"],
    &["variable", "var"],
    &[
        "secret",
        "credential",
        "password",
        "token",
        "apikey",
        "api key",
    ],
    &["permission", "access", "role", "privilege", "grant"],
    &["dependency", "depend", "blocker", "block", "prerequisite"],
    &["ai", "agent", "assistant", "bot"],
    // Work tracking.
    &["issue", "ticket", "bug", "task", "problem", "incident"],
    &["assign", "allocate", "delegate"],
    &["priority", "severity", "urgency"],
    &["status", "state", "progress"],
    &["sprint", "iteration", "cycle"],
    &["milestone", "goal", "target"],
    &["project", "workspace"],
    &["board", "kanban"],
    &["label", "tag", "badge"],
    &["category", "kind", "class", "classification"],
    &["report", "breakdown", "summary"],
    &["todo", "to do", "task", "checklist"],
    // People.
    &[
        "user",
        "account",
        "member",
        "person",
        "people",
        "profile",
        "teammate",
        "colleague",
        "username",
    ],
    &[
        "login",
        "log in",
        "sign in",
        "signin",
        "logon",
        "authenticate",
        "auth",
    ],
    &["logout", "log out", "sign out", "signout"],
    &["whoami", "identity", "current user"],
    &["organization", "organisation", "org", "company", "tenant"],
    &["team", "group", "squad"],
    &["everyone", "everybody", "user", "member", "people"],
    &["owner", "author", "creator"],
    // Time.
    &["current", "now", "latest", "present", "today"],
    &["recent", "latest", "last", "newest"],
    &["old", "stale", "outdated", "obsolete", "previous"],
    &["time", "clock", "hour", "timezone"],
    &["date", "day", "calendar"],
    &["event", "meeting", "appointment"],
    &["calendar", "schedule", "agenda"],
    &["duration", "elapsed", "spent"],
    // Observability and infrastructure.
    &["log", "logs", "output", "console"],
    &["error", "exception", "failure", "crash", "fault"],
    &["fail", "failed", "failing", "broken"],
    &[
        "metric",
        "measurement",
        "gauge",
        "stat",
        "statistics",
        "stats",
        "analytics",
    ],
    &[
        "dashboard",
        "panel",
        "chart",
        "graph",
        "visualization",
        "visualisation",
        "plot",
    ],
    &["trace", "span", "tracing"],
    &["slow", "latency", "lag", "performance", "sluggish"],
    &["profile", "profiling", "flamegraph"],
    &["cpu", "processor"],
    &["memory", "ram"],
    &["memory", "remember", "memorize", "memorise", "recall"],
    &["disk", "storage", "volume"],
    &["database", "db", "datastore"],
    &["table", "schema"],
    &["query", "sql"],
    &["kubernetes", "k8s", "kube"],
    &["container", "pod"],
    &["namespace", "ns"],
    &["forward", "tunnel", "proxy"],
    &["server", "host", "machine", "instance"],
    &["cluster", "node"],
    &["network", "request", "traffic"],
    &["endpoint", "route", "api"],
    &["webhook", "callback", "hook"],
    // Web and browsers.
    &["website", "site", "webpage", "web page", "page"],
    &["url", "link", "address", "href"],
    &["navigate", "go", "visit", "goto", "open"],
    &["click", "press", "tap"],
    &["type", "enter", "input", "fill"],
    &["hover", "mouseover"],
    &["tab", "window"],
    &["dialog", "popup", "modal", "alert"],
    &["cookie", "session", "storage"],
    // Payments and commerce.
    &["payment", "charge", "transaction", "pay"],
    &["invoice", "bill", "billing", "receipt"],
    &["refund", "reimburse", "reimbursement", "chargeback"],
    &["customer", "client", "buyer", "purchaser"],
    &["subscription", "plan", "membership"],
    &["price", "pricing", "cost", "fee", "amount"],
    &["product", "item", "sku"],
    &["dispute", "chargeback"],
    &["balance", "funds"],
    &["coupon", "discount", "promo", "promotion"],
];

/// How many groups a stem may belong to before the rest are ignored.
const MAX_GROUPS_PER_WORD: usize = 8;

/// The table in the form the index reads: single words by stem, phrases by their words.
pub(crate) struct SynonymTable {
    /// For each stem, the stems it stands for (without itself).
    words: HashMap<Box<str>, Vec<Box<str>>>,
    /// For each phrase (its lowercase words joined by one space), the stems of the
    /// single-word members of its groups.
    phrases: HashMap<Box<str>, Vec<Box<str>>>,
    /// The most words in a phrase.
    longest_phrase: usize,
}

impl SynonymTable {
    fn build(groups: &[&[&str]]) -> Self {
        let mut word_groups: HashMap<Box<str>, Vec<usize>> = HashMap::new();
        let mut phrase_groups: HashMap<Box<str>, Vec<usize>> = HashMap::new();
        let mut group_stems: Vec<Vec<Box<str>>> = Vec::with_capacity(groups.len());
        let mut longest_phrase = 0;
        for (index, group) in groups.iter().enumerate() {
            let mut stems: Vec<Box<str>> = Vec::new();
            for member in group.iter() {
                let mut words = Vec::new();
                tokenize::for_each_word(member, |word, piece| {
                    if piece != Piece::Compound {
                        words.push(word.to_owned());
                    }
                });
                match words.as_slice() {
                    [] => {}
                    [word] => {
                        let stem: Box<str> = tokenize::stem(word).into();
                        if !stems.contains(&stem) {
                            stems.push(stem.clone());
                        }
                        let entry = word_groups.entry(stem).or_default();
                        if !entry.contains(&index) {
                            entry.push(index);
                        }
                    }
                    many => {
                        longest_phrase = longest_phrase.max(many.len());
                        let entry = phrase_groups.entry(many.join(" ").into()).or_default();
                        if !entry.contains(&index) {
                            entry.push(index);
                        }
                    }
                }
            }
            group_stems.push(stems);
        }
        let expand = |stem: Option<&str>, indexes: &[usize]| {
            let mut out: Vec<Box<str>> = Vec::new();
            for &group in indexes.iter().take(MAX_GROUPS_PER_WORD) {
                for other in &group_stems[group] {
                    if Some(&**other) != stem && !out.contains(other) {
                        out.push(other.clone());
                    }
                }
            }
            out
        };
        let words = word_groups
            .iter()
            .map(|(stem, indexes)| (stem.clone(), expand(Some(stem), indexes)))
            .collect();
        let phrases = phrase_groups
            .iter()
            .map(|(phrase, indexes)| (phrase.clone(), expand(None, indexes)))
            .collect();
        SynonymTable {
            words,
            phrases,
            longest_phrase,
        }
    }

    /// The built-in table of general software vocabulary.
    pub(crate) fn builtin() -> &'static SynonymTable {
        static TABLE: LazyLock<SynonymTable> = LazyLock::new(|| SynonymTable::build(GROUPS));
        &TABLE
    }

    /// The stems a stem stands for, without itself; empty when it has no synonyms.
    pub(crate) fn of_stem(&self, stem: &str) -> &[Box<str>] {
        self.words.get(stem).map_or(&[], Vec::as_slice)
    }

    /// The stems a phrase stands for; `words` are lowercase words, stop words included.
    pub(crate) fn of_phrase(&self, words: &[&str]) -> &[Box<str>] {
        if words.len() < 2 || words.len() > self.longest_phrase {
            return &[];
        }
        let mut key = String::new();
        for (index, word) in words.iter().enumerate() {
            if index > 0 {
                key.push(' ');
            }
            key.push_str(word);
        }
        self.phrases.get(key.as_str()).map_or(&[], Vec::as_slice)
    }

    /// The most words a phrase of the table has.
    pub(crate) fn longest_phrase(&self) -> usize {
        self.longest_phrase
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::tokenize::stem;

    fn has(table: &SynonymTable, word: &str, other: &str) -> bool {
        table
            .of_stem(&stem(word))
            .iter()
            .any(|s| **s == *stem(other))
    }

    #[test]
    fn groups_are_symmetric() {
        let table = SynonymTable::builtin();
        assert!(
            table
                .of_stem(&stem("erase"))
                .iter()
                .any(|s| **s == *stem("delete"))
        );
        assert!(has(table, "remove", "delete"));
        assert!(has(table, "delete", "remove"));
        assert!(has(table, "ticket", "issue"));
        assert!(has(table, "repo", "repository"));
        assert!(!has(table, "delete", "delete"));
        assert!(table.of_stem("zzzz").is_empty());
    }

    #[test]
    fn phrases_stand_for_single_words() {
        let table = SynonymTable::builtin();
        let found = table.of_phrase(&["pull", "request"]);
        assert!(found.iter().any(|s| &**s == "pr"), "{found:?}");
        assert!(
            table
                .of_phrase(&["sign", "in"])
                .iter()
                .any(|s| **s == *stem("login"))
        );
        assert!(table.of_phrase(&["pull"]).is_empty());
    }
}
