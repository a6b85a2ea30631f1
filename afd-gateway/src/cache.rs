//! The tool lists of upstream servers, cached on disk so discovery works before any
//! upstream runs: one JSON file per server, keyed by how the server is started.

use std::path::{Path, PathBuf};

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};

/// What is known of an upstream's catalog: its tools and who it says it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolList {
    /// The fingerprint of the server's configuration the list was fetched with.
    pub fingerprint: String,
    /// The upstream's `serverInfo.name`.
    #[serde(default)]
    pub server_name: Option<String>,
    /// The upstream's `serverInfo.version`.
    #[serde(default)]
    pub server_version: Option<String>,
    /// The upstream's instructions.
    #[serde(default)]
    pub instructions: Option<String>,
    /// Its tools, as its `tools/list` gave them.
    pub tools: Vec<Tool>,
}

impl ToolList {
    /// Whether `other` lists the same tools from the same version (what decides a
    /// catalog rebuild and a cache write).
    pub fn same_catalog(&self, other: &ToolList) -> bool {
        self.server_version == other.server_version
            && self.instructions == other.instructions
            && self.tools == other.tools
    }
}

/// The on-disk cache of tool lists.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Cache { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn file(&self, server: &str) -> PathBuf {
        self.dir.join(format!("{server}.json"))
    }

    /// The cached list of `server`, if there is one made with `fingerprint`. A missing,
    /// unreadable or stale file is no list (logged when it is not simply missing).
    pub fn load(&self, server: &str, fingerprint: &str) -> Option<ToolList> {
        let path = self.file(server);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
            Err(error) => {
                tracing::warn!(server, path = %path.display(), %error, "cannot read the cached tool list");
                return None;
            }
        };
        match serde_json::from_str::<ToolList>(&text) {
            Ok(list) if list.fingerprint == fingerprint => Some(list),
            Ok(_) => {
                tracing::info!(
                    server,
                    "the cached tool list was made with another configuration; ignoring it"
                );
                None
            }
            Err(error) => {
                tracing::warn!(server, path = %path.display(), %error, "the cached tool list is not valid; ignoring it");
                None
            }
        }
    }

    /// Writes `list` for `server` (atomically: a temporary file renamed into place).
    /// Failures are logged: the cache only saves start-ups.
    pub fn store(&self, server: &str, list: &ToolList) {
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&self.dir)?;
            let path = self.file(server);
            let temporary = self
                .dir
                .join(format!(".{server}.json.{}", std::process::id()));
            let text = serde_json::to_vec_pretty(list).map_err(std::io::Error::other)?;
            std::fs::write(&temporary, text)?;
            std::fs::rename(&temporary, &path)
        };
        if let Err(error) = write() {
            tracing::warn!(server, dir = %self.dir.display(), %error, "cannot write the tool list cache");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_ignores_stale_fingerprints() {
        let dir =
            std::env::temp_dir().join(format!("afd-gateway-cache-test-{}", std::process::id()));
        let cache = Cache::new(&dir);
        let tool: Tool = serde_json::from_value(serde_json::json!({
            "name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}
        }))
        .unwrap();
        let list = ToolList {
            fingerprint: "f1".into(),
            server_name: Some("s".into()),
            server_version: Some("1.0".into()),
            instructions: None,
            tools: vec![tool],
        };
        cache.store("s", &list);
        assert_eq!(cache.load("s", "f1"), Some(list));
        assert_eq!(cache.load("s", "f2"), None);
        assert_eq!(cache.load("other", "f1"), None);
        std::fs::write(dir.join("bad.json"), "not json").unwrap();
        assert_eq!(cache.load("bad", "f1"), None);
        let _ = std::fs::remove_dir_all(dir);
    }
}
