//! The gateway's configuration parser (`afd-gateway/src/config.rs`, compiled here from its
//! source so that the target does not build the gateway's HTTP client and tokenizer): any
//! text is a configuration or an error message, and a configuration it accepts is usable
//! (each server has one transport, names are what the gateway needs), with the `*` pattern
//! matcher checked against a reference matcher.

#[allow(dead_code, missing_docs)]
#[path = "../../../afd-gateway/src/config.rs"]
mod config;

use config::{Config, glob_match, refusal};

/// Whether `name` matches `pattern` (`*`: any run of characters), by dynamic programming
/// over characters.
fn reference_match(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    // matches[j]: pattern[..i] matches name[..j].
    let mut matches = vec![false; name.len() + 1];
    matches[0] = true;
    for &p in &pattern {
        let mut next = vec![false; name.len() + 1];
        if p == '*' {
            let mut any = false;
            for j in 0..=name.len() {
                any |= matches[j];
                next[j] = any;
            }
        } else {
            for j in 1..=name.len() {
                next[j] = matches[j - 1] && name[j - 1] == p;
            }
        }
        matches = next;
    }
    matches[name.len()]
}

/// Checks one input: panics on anything this target forbids.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(config) = Config::parse(text) else {
        return;
    };
    let _ = config.call_timeout();
    let mut names: Vec<&str> = config.servers.keys().map(String::as_str).collect();
    names.extend(config.contexts.keys().map(String::as_str));
    let mut patterns: Vec<&str> = Vec::new();
    for (name, server) in &config.servers {
        assert!(!name.is_empty() && name.len() <= 64);
        assert!(server.transport().is_ok());
        assert_eq!(server.fingerprint().len(), 16);
        let _ = server.call_timeout(config.call_timeout());
        let _ = server.start_timeout();
        patterns.extend(server.deny.iter().map(String::as_str));
        patterns.extend(server.allow.iter().flatten().map(String::as_str));
        names.extend(server.args.iter().map(String::as_str));
    }
    for (name, context) in &config.contexts {
        assert!(!name.is_empty());
        patterns.extend(context.tools.iter().map(String::as_str));
        if let Some(parent) = &context.parent {
            assert!(config.contexts.contains_key(parent));
        }
    }
    for pattern in patterns.iter().take(16) {
        for name in names.iter().take(16) {
            assert_eq!(
                glob_match(pattern, name),
                reference_match(pattern, name),
                "pattern {pattern:?}, name {name:?}"
            );
        }
    }
    for server in config.servers.values() {
        for name in names.iter().take(16) {
            let _ = refusal(server, config.gateway.read_only, name, true);
        }
    }
    for (server, context) in config.servers.keys().zip(config.contexts.values()) {
        for name in names.iter().take(16) {
            let _ = context.holds(server, name);
        }
    }
}
