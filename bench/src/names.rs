//! The generated catalogs' vocabulary, shared by `bench/build.rs` (which includes this
//! file) and the `synthetic` bench: the reference's `bench/shop.mjs` categories and verbs,
//! and its variant suffixes.

/// The categories, in the order commands cycle through them.
pub const CATEGORIES: [&str; 10] = [
    "user",
    "order",
    "payment",
    "product",
    "inventory",
    "shipping",
    "review",
    "report",
    "config",
    "support",
];

/// The verbs, one per ten commands, cycling.
pub const VERBS: [&str; 8] = [
    "list", "get", "update", "archive", "export", "search", "count", "tag",
];

/// `a`, `b`, ..., `z`, `ba`, ... as the reference's `letters(n)`.
pub fn letters(mut n: usize) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'a' + (n % 26) as u8);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ascii")
}
