//! The gateway's configuration: the `mcpServers` file Claude Desktop, Cursor and Claude Code
//! already use, plus optional gateway keys on each server and a top-level `gateway` object.
//!
//! ```json
//! {"mcpServers": {
//!    "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
//!    "shop":  {"url": "http://127.0.0.1:8787/mcp", "headers": {"Authorization": "Bearer ${SHOP_TOKEN}"},
//!              "readOnly": true, "deny": ["order-*"], "timeoutMs": 10000, "eager": true},
//!    "crm":   {"url": "https://crm.example.com/mcp",
//!              "auth": {"type": "clientCredentials", "clientId": "gateway", "clientSecret": "${CRM_SECRET}"}}},
//!  "gateway": {"strategy": "lazy", "cacheDir": "/tmp/afd-gateway-cache", "timeoutMs": 60000}}
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// The default time one upstream tool call may take.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The default time an upstream may take to start and answer `initialize` and `tools/list`.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a configuration could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the configuration {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a valid configuration.
    #[error("invalid configuration {path}: {message}")]
    Invalid {
        /// The file (or `<inline>`).
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The whole configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    /// The upstream servers by name, as clients write them.
    #[serde(rename = "mcpServers")]
    pub servers: BTreeMap<String, ServerConfig>,
    /// Gateway-wide settings.
    #[serde(default)]
    pub gateway: GatewaySettings,
    /// Runtime contexts over upstream tools, by name (kebab-case): the scopes an agent
    /// enters with afd-context-enter.
    #[serde(default)]
    pub contexts: BTreeMap<String, ContextConfig>,
}

/// A runtime context declared in the configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextConfig {
    /// What the context is for (agents see it).
    pub description: String,
    /// Every tool of these servers belongs to it.
    #[serde(default)]
    pub servers: Vec<String>,
    /// These tools belong to it (ids `server.tool`; `*` matches any run of characters).
    #[serde(default)]
    pub tools: Vec<String>,
    /// Whoever enters it cannot call a tool that may change state.
    #[serde(default)]
    pub read_only: bool,
    /// Words that suggest it (afd-context-suggest).
    #[serde(default)]
    pub triggers: Vec<String>,
    /// The context it is nested under (a child holds its parent's tools too).
    #[serde(default)]
    pub parent: Option<String>,
}

impl ContextConfig {
    /// Whether the tool `id` of `server` belongs to this context.
    pub fn holds(&self, server: &str, id: &str) -> bool {
        self.servers.iter().any(|s| s == server)
            || self.tools.iter().any(|pattern| glob_match(pattern, id))
    }
}

/// Gateway-wide settings (the `gateway` object).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewaySettings {
    /// The tool strategy: `lazy` (default), `individual`, `grouped` or `hybrid`.
    #[serde(default)]
    pub strategy: Option<String>,
    /// Where tool lists are cached (default: `$XDG_CACHE_HOME/afd-gateway` or
    /// `~/.cache/afd-gateway`).
    #[serde(default)]
    pub cache_dir: Option<PathBuf>,
    /// Default per-call timeout in milliseconds (default 60,000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Every server read-only: no tool that may change state is callable.
    #[serde(default)]
    pub read_only: bool,
    /// Start in the background the server of the tool most likely called next, from
    /// usage statistics (default on; `false` turns it off).
    #[serde(default)]
    pub predictive_start: Option<bool>,
}

/// How to reach one upstream server, and the gateway's rules for it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerConfig {
    /// The program to start (stdio transport).
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables for it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Its working directory.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The streamable HTTP endpoint (HTTP transport).
    #[serde(default)]
    pub url: Option<String>,
    /// HTTP headers sent on every request (`Authorization` among them).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// How the gateway gets tokens for an HTTP upstream (default: none beyond `headers`).
    #[serde(default)]
    pub auth: Option<UpstreamAuth>,
    /// Start with the gateway (default: on first use, or at once when no tool list is
    /// cached yet).
    #[serde(default)]
    pub eager: bool,
    /// Leave the server out.
    #[serde(default)]
    pub disabled: bool,
    /// What the server offers, shown to agents (default: the server's own instructions).
    #[serde(default)]
    pub description: Option<String>,
    /// Per-call timeout in milliseconds.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Start-up timeout in milliseconds.
    #[serde(default)]
    pub start_timeout_ms: Option<u64>,
    /// Only these tools (upstream names; `*` matches any run of characters).
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    /// Never these tools (upstream names; `*` matches any run of characters).
    #[serde(default)]
    pub deny: Vec<String>,
    /// No tool that may change state (every tool not annotated `readOnlyHint: true`).
    #[serde(default)]
    pub read_only: bool,
}

/// How the gateway authorizes itself to an HTTP upstream.
#[derive(Clone, Deserialize, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
// Read once per upstream from the configuration: its size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum UpstreamAuth {
    /// No token (only what `headers` sends, if anything).
    None,
    /// Tokens by the OAuth client credentials grant, renewed before they expire and when
    /// the upstream refuses one. The issuer and its token endpoint are discovered from the
    /// upstream's protected resource metadata unless named here.
    #[serde(rename_all = "camelCase")]
    ClientCredentials {
        /// The gateway's client id at the authorization server.
        client_id: String,
        /// Its secret: `${VAR}`, so that it stays out of the file.
        #[serde(default)]
        client_secret: Option<String>,
        /// Instead of a secret, the file of its private key (PEM): each token request then
        /// carries a JWT assertion signed with it (`private_key_jwt`, RFC 7523).
        #[serde(default)]
        private_key_file: Option<PathBuf>,
        /// The assertion's signing algorithm (`ES256`, `RS256`, ...; default `RS256`).
        #[serde(default)]
        algorithm: Option<String>,
        /// `client_secret_basic` or `client_secret_post` (default: what the server's
        /// metadata prefers), or `private_key_jwt` (the default with `privateKeyFile`).
        #[serde(default)]
        method: Option<String>,
        /// The scopes to ask for (default: the upstream's `scopes_supported`).
        #[serde(default)]
        scopes: Vec<String>,
        /// The issuer, when discovery from the upstream is not wanted.
        #[serde(default)]
        issuer: Option<String>,
        /// The token endpoint, to skip discovery altogether.
        #[serde(default)]
        token_endpoint: Option<String>,
        /// The resource indicator (default: the upstream's metadata `resource`, or `url`).
        #[serde(default)]
        resource: Option<String>,
    },
    /// The tokens of a person's sign-in kept by `afd --url URL login` (run as the user the
    /// gateway runs as), refreshed in place.
    #[serde(rename_all = "camelCase")]
    SignIn {
        /// Where the sign-ins are kept (default: `afd`'s, `~/.config/afd/credentials` or
        /// `AFD_CREDENTIALS_DIR`).
        #[serde(default)]
        credentials_dir: Option<PathBuf>,
        /// The secret of the confidential client the sign-in was made with (`${VAR}`), which
        /// its refreshes need; none for a public client.
        #[serde(default)]
        client_secret: Option<String>,
    },
}

// By hand, so that the client secret (expanded from the environment) never prints.
impl std::fmt::Debug for UpstreamAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamAuth::None => f.write_str("None"),
            UpstreamAuth::ClientCredentials {
                client_id,
                client_secret,
                private_key_file,
                method,
                scopes,
                ..
            } => f
                .debug_struct("ClientCredentials")
                .field("client_id", client_id)
                .field(
                    "client_secret",
                    &client_secret.as_ref().map(|_| "[redacted]"),
                )
                .field("private_key_file", private_key_file)
                .field("method", method)
                .field("scopes", scopes)
                .finish_non_exhaustive(),
            UpstreamAuth::SignIn {
                credentials_dir,
                client_secret,
            } => f
                .debug_struct("SignIn")
                .field("credentials_dir", credentials_dir)
                .field(
                    "client_secret",
                    &client_secret.as_ref().map(|_| "[redacted]"),
                )
                .finish(),
        }
    }
}

/// The transport of an upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process over stdio.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
    },
}

impl ServerConfig {
    /// The transport this entry describes.
    ///
    /// # Errors
    ///
    /// Neither or both of `command` and `url`.
    pub fn transport(&self) -> Result<Transport, String> {
        match (&self.command, &self.url) {
            (Some(command), None) => Ok(Transport::Stdio {
                command: command.clone(),
                args: self.args.clone(),
            }),
            (None, Some(url)) => Ok(Transport::Http { url: url.clone() }),
            (Some(_), Some(_)) => Err("has both `command` and `url`; keep one".to_owned()),
            (None, None) => Err("needs `command` (stdio) or `url` (streamable HTTP)".to_owned()),
        }
    }

    /// The per-call timeout.
    pub fn call_timeout(&self, default: Duration) -> Duration {
        self.timeout_ms.map_or(default, Duration::from_millis)
    }

    /// The start-up timeout.
    pub fn start_timeout(&self) -> Duration {
        self.start_timeout_ms
            .map_or(DEFAULT_START_TIMEOUT, Duration::from_millis)
    }

    /// A fingerprint of how the server is started: a cached tool list made with another
    /// command, arguments or URL is not trusted.
    pub fn fingerprint(&self) -> String {
        let mut text = String::new();
        match (&self.command, &self.url) {
            (Some(command), _) => {
                text.push_str(command);
                for arg in &self.args {
                    text.push('\u{1f}');
                    text.push_str(arg);
                }
            }
            (None, Some(url)) => text.push_str(url),
            (None, None) => {}
        }
        format!("{:016x}", fnv1a(text.as_bytes()))
    }
}

/// FNV-1a, 64 bits: a stable hash for cache keys (std's hasher is not stable across
/// releases).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

impl Config {
    /// Reads and checks a configuration file.
    ///
    /// # Errors
    ///
    /// The file cannot be read, is not JSON of this shape, or a server entry has neither
    /// or both of `command` and `url`, or a name that cannot prefix MCP tool names.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Config::parse(&text).map_err(|message| ConfigError::Invalid {
            path: path.to_owned(),
            message,
        })
    }

    /// Parses and checks a configuration.
    ///
    /// # Errors
    ///
    /// As [`Config::load`], as a message.
    pub fn parse(text: &str) -> Result<Config, String> {
        let mut config: Config = serde_json::from_str(text).map_err(|e| e.to_string())?;
        for (name, server) in &mut config.servers {
            // Credentials stay out of the file: `${VAR}` in a header or environment value.
            for (key, value) in server.headers.iter_mut().chain(server.env.iter_mut()) {
                *value = expand(value).map_err(|why| format!("server '{name}', '{key}': {why}"))?;
            }
            if let Some(
                UpstreamAuth::ClientCredentials {
                    client_secret: Some(client_secret),
                    ..
                }
                | UpstreamAuth::SignIn {
                    client_secret: Some(client_secret),
                    ..
                },
            ) = &mut server.auth
            {
                *client_secret = expand(client_secret)
                    .map_err(|why| format!("server '{name}', 'auth.clientSecret': {why}"))?;
            }
        }
        for (name, server) in &config.servers {
            if name.is_empty()
                || name.len() > 64
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(format!(
                    "server name '{name}' must be 1 to 64 characters of A-Z, a-z, 0-9, '_' and '-' (it prefixes tool names)"
                ));
            }
            let transport = server
                .transport()
                .map_err(|why| format!("server '{name}' {why}"))?;
            if server
                .auth
                .as_ref()
                .is_some_and(|auth| *auth != UpstreamAuth::None)
            {
                if !matches!(transport, Transport::Http { .. }) {
                    return Err(format!(
                        "server '{name}': `auth` is for HTTP upstreams (`url`)"
                    ));
                }
                if server
                    .headers
                    .keys()
                    .any(|key| key.eq_ignore_ascii_case("authorization"))
                {
                    return Err(format!(
                        "server '{name}' has both `auth` and an `Authorization` header; keep one"
                    ));
                }
            }
            if let Some(UpstreamAuth::ClientCredentials {
                method,
                client_secret,
                private_key_file,
                ..
            }) = &server.auth
            {
                if client_secret.is_some() == private_key_file.is_some() {
                    return Err(format!(
                        "server '{name}': `auth` takes one of `clientSecret` and `privateKeyFile`"
                    ));
                }
                // Read here so that a missing file stops the gateway at once; the key itself
                // is parsed where it is used (a bad one fails that upstream's starts).
                if let Some(path) = private_key_file {
                    std::fs::read_to_string(path).map_err(|e| {
                        format!(
                            "server '{name}', 'auth.privateKeyFile': cannot read {}: {e}",
                            path.display()
                        )
                    })?;
                }
                let secret_methods = ["client_secret_basic", "client_secret_post"];
                if let Some(method) = method {
                    let fits = match private_key_file {
                        Some(_) => method == "private_key_jwt",
                        None => secret_methods.contains(&method.as_str()),
                    };
                    if !fits {
                        return Err(format!(
                            "server '{name}': `auth.method` is `client_secret_basic` or `client_secret_post` with `clientSecret`, `private_key_jwt` with `privateKeyFile`; not `{method}`"
                        ));
                    }
                }
            }
        }
        for (name, context) in &config.contexts {
            let kebab = !name.is_empty()
                && !name.starts_with('-')
                && !name.ends_with('-')
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if !kebab {
                return Err(format!("context name '{name}' must be kebab-case"));
            }
            if let Some(parent) = &context.parent
                && !config.contexts.contains_key(parent)
            {
                return Err(format!(
                    "context '{name}' is nested under '{parent}', which is not declared"
                ));
            }
            if let Some(server) = context
                .servers
                .iter()
                .find(|s| !config.servers.contains_key(*s))
            {
                return Err(format!(
                    "context '{name}' names the server '{server}', which is not configured"
                ));
            }
        }
        Ok(config)
    }

    /// The default per-call timeout.
    pub fn call_timeout(&self) -> Duration {
        self.gateway
            .timeout_ms
            .map_or(DEFAULT_CALL_TIMEOUT, Duration::from_millis)
    }

    /// The cache directory: the configured one, else the user's cache directory.
    pub fn cache_dir(&self) -> PathBuf {
        if let Some(dir) = &self.gateway.cache_dir {
            return dir.clone();
        }
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache")))
            .unwrap_or_else(std::env::temp_dir);
        base.join("afd-gateway")
    }
}

/// `value` with each `${VAR}` (or `${env:VAR}`, as VS Code writes it) replaced by the
/// environment variable's value. An unset variable is an error (naming it, not a value):
/// an upstream is never called with a credential missing.
pub fn expand(value: &str) -> Result<String, String> {
    expand_with(value, |name| std::env::var(name).ok())
}

/// [`expand`] with the variables `lookup` gives.
fn expand_with(value: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err("an unclosed `${`".to_owned());
        };
        let name = after[..end].strip_prefix("env:").unwrap_or(&after[..end]);
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "`${{{}}}` names no environment variable",
                &after[..end]
            ));
        }
        match lookup(name) {
            Some(found) => out.push_str(&found),
            None => return Err(format!("the environment variable {name} is not set")),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Matches `name` against a pattern where `*` stands for any run of characters.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Why a tool is refused by policy, if it is.
pub fn refusal(
    server: &ServerConfig,
    gateway_read_only: bool,
    tool: &str,
    mutation: bool,
) -> Option<String> {
    if let Some(allow) = &server.allow
        && !allow.iter().any(|pattern| glob_match(pattern, tool))
    {
        return Some(format!("'{tool}' is not in the server's allow list"));
    }
    if let Some(pattern) = server.deny.iter().find(|pattern| glob_match(pattern, tool)) {
        return Some(format!(
            "'{tool}' matches the server's deny list ('{pattern}')"
        ));
    }
    if mutation && (server.read_only || gateway_read_only) {
        return Some(format!(
            "'{tool}' may change state and the server is configured read-only"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_references_are_expanded_and_a_missing_one_refused() {
        let lookup = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
        assert_eq!(
            expand_with("Bearer ${TOKEN}", lookup).unwrap(),
            "Bearer s3cret"
        );
        assert_eq!(expand_with("${env:TOKEN}!", lookup).unwrap(), "s3cret!");
        assert_eq!(expand_with("plain $HOME", lookup).unwrap(), "plain $HOME");
        let missing = expand_with("Bearer ${OTHER}", lookup).unwrap_err();
        assert!(missing.contains("OTHER"), "{missing}");
        assert!(expand_with("${oops", lookup).is_err());
        assert!(expand_with("${a b}", lookup).is_err());
        let path = std::env::var("PATH").unwrap();
        let config = Config::parse(
            r#"{"mcpServers": {"a": {"url": "http://127.0.0.1:1/mcp",
                 "headers": {"X-Path": "p=${PATH}"}}}}"#,
        )
        .unwrap();
        assert_eq!(config.servers["a"].headers["X-Path"], format!("p={path}"));
        let refused = Config::parse(
            r#"{"mcpServers": {"a": {"url": "http://127.0.0.1:1/mcp",
                 "headers": {"Authorization": "Bearer ${AFD_GATEWAY_TEST_UNSET}"}}}}"#,
        )
        .unwrap_err();
        assert!(refused.contains("server 'a'"), "{refused}");
    }

    #[test]
    fn globs_match_prefixes_suffixes_and_middles() {
        assert!(glob_match("read_*", "read_file"));
        assert!(!glob_match("read_*", "write_file"));
        assert!(glob_match("*_file", "read_file"));
        assert!(glob_match("a*c*e", "abcde"));
        assert!(!glob_match("a*c*e", "abde"));
        assert!(glob_match("exact", "exact"));
        assert!(!glob_match("exact", "exactly"));
        assert!(glob_match("*", "anything"));
    }

    #[test]
    fn parses_the_client_format_and_rejects_bad_entries() {
        let config = Config::parse(
            r#"{"mcpServers": {"a": {"command": "x", "args": ["1"], "env": {"K": "V"}},
                               "b": {"url": "http://127.0.0.1:1/mcp", "headers": {"X": "y"}, "readOnly": true}}}"#,
        )
        .unwrap();
        assert_eq!(config.servers.len(), 2);
        assert!(config.servers["b"].read_only);
        assert_eq!(
            config.servers["a"].transport().unwrap(),
            Transport::Stdio {
                command: "x".into(),
                args: vec!["1".into()]
            }
        );
        let both = Config::parse(r#"{"mcpServers": {"a": {"command": "x", "url": "y"}}}"#);
        assert!(both.unwrap_err().contains("both"));
        let neither = Config::parse(r#"{"mcpServers": {"a": {}}}"#);
        assert!(neither.unwrap_err().contains("needs"));
        let bad_name = Config::parse(r#"{"mcpServers": {"a b": {"command": "x"}}}"#);
        assert!(bad_name.unwrap_err().contains("server name"));
    }

    #[test]
    fn client_credentials_are_read_with_the_secret_from_the_environment() {
        let path = std::env::var("PATH").unwrap();
        let config = Config::parse(
            r#"{"mcpServers": {"a": {"url": "http://127.0.0.1:1/mcp",
                 "auth": {"type": "clientCredentials", "clientId": "gw", "clientSecret": "${PATH}",
                          "method": "client_secret_post", "scopes": ["r"]}}}}"#,
        )
        .unwrap();
        let Some(UpstreamAuth::ClientCredentials {
            client_id,
            client_secret,
            method,
            scopes,
            ..
        }) = &config.servers["a"].auth
        else {
            panic!("not read as client credentials");
        };
        assert_eq!(
            (
                client_id.as_str(),
                client_secret,
                method.as_deref(),
                &scopes[..]
            ),
            (
                "gw",
                &Some(path.clone()),
                Some("client_secret_post"),
                &["r".to_owned()][..]
            )
        );
        let none = Config::parse(
            r#"{"mcpServers": {"a": {"url": "http://h/mcp", "auth": {"type": "none"}}}}"#,
        );
        assert_eq!(none.unwrap().servers["a"].auth, Some(UpstreamAuth::None));
        assert!(!format!("{:?}", config.servers["a"].auth).contains(&path));
        let signed_in = Config::parse(
            r#"{"mcpServers": {"a": {"url": "http://h/mcp", "auth": {"type": "signIn", "credentialsDir": "/c"}}}}"#,
        );
        assert_eq!(
            signed_in.unwrap().servers["a"].auth,
            Some(UpstreamAuth::SignIn {
                credentials_dir: Some("/c".into()),
                client_secret: None,
            })
        );
        for (bad, why) in [
            (
                r#"{"command": "x", "auth": {"type": "clientCredentials", "clientId": "c", "clientSecret": "s"}}"#,
                "HTTP upstreams",
            ),
            (
                r#"{"url": "http://h/mcp", "headers": {"authorization": "Bearer x"}, "auth": {"type": "clientCredentials", "clientId": "c", "clientSecret": "s"}}"#,
                "keep one",
            ),
            (
                r#"{"url": "http://h/mcp", "auth": {"type": "clientCredentials", "clientId": "c", "clientSecret": "s", "method": "none"}}"#,
                "auth.method",
            ),
            (
                r#"{"url": "http://h/mcp", "auth": {"type": "clientCredentials", "clientId": "c", "clientSecret": "${AFD_GATEWAY_TEST_UNSET}"}}"#,
                "AFD_GATEWAY_TEST_UNSET",
            ),
            (
                r#"{"url": "http://h/mcp", "auth": {"type": "password"}}"#,
                "unknown variant",
            ),
            (
                r#"{"command": "x", "auth": {"type": "signIn"}}"#,
                "HTTP upstreams",
            ),
            (
                r#"{"url": "http://h/mcp", "auth": {"type": "clientCredentials", "clientId": "c"}}"#,
                "one of `clientSecret` and `privateKeyFile`",
            ),
            (
                r#"{"url": "http://h/mcp", "auth": {"type": "clientCredentials", "clientId": "c", "clientSecret": "s", "privateKeyFile": "/k.pem"}}"#,
                "one of `clientSecret` and `privateKeyFile`",
            ),
            (
                r#"{"url": "http://h/mcp", "auth": {"type": "clientCredentials", "clientId": "c", "privateKeyFile": "/nonexistent/k.pem", "algorithm": "ES256"}}"#,
                "cannot read /nonexistent/k.pem",
            ),
        ] {
            let error = Config::parse(&format!(r#"{{"mcpServers": {{"a": {bad}}}}}"#)).unwrap_err();
            assert!(error.contains(why), "{bad}: {error}");
        }
    }

    #[test]
    fn contexts_are_checked_and_hold_servers_and_tools() {
        let config = Config::parse(
            r#"{"mcpServers": {"a": {"command": "x"}},
                "contexts": {"reading": {"description": "R.", "servers": ["a"]},
                             "one": {"description": "O.", "tools": ["b.get_*"], "parent": "reading"}}}"#,
        )
        .unwrap();
        assert!(config.contexts["reading"].holds("a", "a.anything"));
        assert!(config.contexts["one"].holds("b", "b.get_x"));
        assert!(!config.contexts["one"].holds("b", "b.set_x"));
        let bad = Config::parse(r#"{"mcpServers": {}, "contexts": {"Bad": {"description": "d"}}}"#);
        assert!(bad.unwrap_err().contains("kebab-case"));
        let orphan = Config::parse(
            r#"{"mcpServers": {}, "contexts": {"c": {"description": "d", "parent": "p"}}}"#,
        );
        assert!(orphan.unwrap_err().contains("not declared"));
        let unknown = Config::parse(
            r#"{"mcpServers": {}, "contexts": {"c": {"description": "d", "servers": ["zz"]}}}"#,
        );
        assert!(unknown.unwrap_err().contains("not configured"));
    }

    #[test]
    fn policy_refuses_by_allow_deny_and_read_only() {
        let server: ServerConfig = serde_json::from_str(
            r#"{"command": "x", "allow": ["get_*", "list_*", "delete_all"], "deny": ["delete_*"], "readOnly": true}"#,
        )
        .unwrap();
        assert_eq!(refusal(&server, false, "get_time", false), None);
        assert!(
            refusal(&server, false, "set_time", false)
                .unwrap()
                .contains("allow list")
        );
        assert!(
            refusal(&server, false, "delete_all", true)
                .unwrap()
                .contains("deny list")
        );
        assert!(
            refusal(&server, false, "list_x", true)
                .unwrap()
                .contains("read-only")
        );
    }
}
