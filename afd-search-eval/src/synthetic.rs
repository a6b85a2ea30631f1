//! A synthetic catalog of any size, the same for a given size on every run: names
//! `<resource>-<verb>` (with a qualifier once every pair is used) over 300 invented
//! resources and 30 verbs, a description of 12 to 40 words drawn from ~1,500 invented
//! words and a few common ones, 2 to 5 parameters with a short description each, a tag,
//! and the read-only flag of the verb.

use afd_runtime::search::Document;

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

/// A synthetic catalog of `n` commands.
pub fn catalog(n: usize) -> Vec<Document> {
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
