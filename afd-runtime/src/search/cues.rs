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

/// Verbs that ask for a change. Verbs that share their stem with a resource's name are left
/// out ("order", "book", "migrate" for `migrations`): a command name like `order-cancel`
/// would read its noun as its verb, and a request's plural noun as a change.
const WRITE_CUES: &[&str] = &[
    "create",
    "add",
    "new",
    "make",
    "insert",
    "update",
    "edit",
    "modify",
    "change",
    "set",
    "delete",
    "remove",
    "erase",
    "destroy",
    "drop",
    "move",
    "rename",
    "copy",
    "send",
    "post",
    "publish",
    "write",
    "save",
    "store",
    "persist",
    "put",
    "upload",
    "attach",
    "assign",
    "merge",
    "apply",
    "push",
    "run",
    "execute",
    "start",
    "stop",
    "cancel",
    "close",
    "finish",
    "complete",
    "finalize",
    "mark",
    "link",
    "tag",
    "label",
    "archive",
    "restore",
    "reset",
    "revert",
    "undo",
    "refund",
    "respond",
    "reply",
    "comment",
    "invite",
    "approve",
    "reject",
    "enable",
    "disable",
    "schedule",
    "record",
    "append",
    "replace",
    "lock",
    "unlock",
    "deploy",
    "install",
    "register",
    "submit",
    "trigger",
    "fill",
    "click",
    "type",
    "press",
    "navigate",
    "open",
    "upgrade",
    "import",
    "transfer",
    "pay",
    "charge",
    "resolve",
    "spin",
    "launch",
    "pause",
    "resume",
    "mute",
    "unmute",
    "snooze",
    "unblock",
    "ban",
    "unstar",
    "unpin",
    "unfollow",
    "subscribe",
    "unsubscribe",
    "unwatch",
    "grant",
    "revoke",
    "rotate",
    "renew",
    "rebase",
    "squash",
    "stash",
    "unpublish",
    "void",
    "convert",
    "transcribe",
    "buy",
    "sell",
    "resize",
    "restart",
    "reboot",
    "uninstall",
    "downgrade",
    "rollback",
    "suspend",
    "dismiss",
    "acknowledge",
    "escalate",
    "reassign",
    "fulfill",
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

/// The cue word one typo away from `word` ("delet", "renmae": one letter added, dropped,
/// changed, or two neighbours swapped), for words of four letters or more; the first in
/// the lists' order when several are.
pub(crate) fn cue_near(word: &str) -> Option<&'static str> {
    if word.chars().count() < 4 {
        return None;
    }
    READ_CUES
        .iter()
        .chain(WRITE_CUES)
        .copied()
        .find(|cue| cue.len() >= 4 && one_edit_apart(word.as_bytes(), cue.as_bytes()))
}

/// Whether `a` and `b` differ by exactly one insertion, deletion, substitution or swap of
/// neighbours.
fn one_edit_apart(a: &[u8], b: &[u8]) -> bool {
    if a == b {
        return false;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let head = short.iter().zip(long).take_while(|(x, y)| x == y).count();
    match long.len() - short.len() {
        0 => {
            let tail = short.len() - head;
            short[head + 1..] == long[head + 1..]
                || (tail >= 2
                    && short[head] == long[head + 1]
                    && short[head + 1] == long[head]
                    && short[head + 2..] == long[head + 2..])
        }
        1 => short[head..] == long[head + 1..],
        _ => false,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cue_one_typo_away_is_found() {
        assert_eq!(cue_near("delet"), Some("delete"));
        assert_eq!(cue_near("renmae"), Some("rename"));
        assert_eq!(cue_near("creaet"), Some("create"));
        assert_eq!(cue_near("invte"), Some("invite"));
        assert_eq!(cue_near("chnage"), Some("change"));
        assert_eq!(cue_near("delete"), None);
        assert_eq!(cue_near("customer"), None);
        assert_eq!(cue_near("adx"), None);
    }
}
