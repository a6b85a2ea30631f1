//! The HTTP endpoint as an OAuth 2.1 resource server, against a real authorization server
//! (`oidc-provider` from npm, started by `tests/auth/server.mjs`) issuing RS256 and ES256
//! JWT access tokens by the client-credentials grant with resource indicators: the
//! protected resource metadata and challenges, every token that must be refused, key
//! rotation and a dead key set, scopes (403 on a direct call, `INSUFFICIENT_SCOPE` inside
//! afd-call, afd-batch and afd-pipe), commands beyond a caller's scopes answered as names
//! that do not exist on every surface, sessions bound to their subject, the principal in
//! handlers, one audit event per decision, and the official TypeScript and Python clients
//! connecting with tokens. Needs `npm ci` in `tests/auth` (`.ci/run` runs it); fails under
//! `CI` without it.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use afd_examples::shop::{self, ShopStore};
use afd_runtime::audit::Audit;
use afd_runtime::mcp::{HttpHandle, HttpOptions, McpServer, OAuth, Strategy};
use afd_runtime::prelude::*;
use afd_tests::oauth::{AuthServer, Caller, KeysProxy, auth_dir, installed};
use afd_tests::services::free_port;

/// Who is calling, as the handler sees it.
#[derive(Debug, Serialize, JsonSchema)]
struct Identity {
    subject: String,
    client: Option<String>,
    scopes: Vec<String>,
}

/// Say who is calling: the subject, client and scopes of the caller's token.
#[command(name = "who-am-i")]
fn who_am_i(ctx: &CommandContext) -> Result<Identity, CommandError> {
    let principal = ctx
        .principal()
        .ok_or_else(|| CommandError::new("NO_PRINCIPAL", "the call carried no token"))?;
    Ok(Identity {
        subject: principal.subject().to_owned(),
        client: principal.client_id().map(str::to_owned),
        scopes: principal.scopes().iter().map(str::to_owned).collect(),
    })
}

/// A shop served over HTTP behind OAuth, and the authorization server it trusts.
struct Fixture {
    auth: AuthServer,
    proxy: KeysProxy,
    server: Option<HttpHandle>,
    /// The server behind it (its audit trail).
    mcp: McpServer,
    /// The endpoint's canonical URL, the tokens' audience.
    url: String,
    audit: PathBuf,
    _dir: tempfile::TempDir,
}

impl Fixture {
    /// With the shop's commands and `who-am-i`, served in `strategy`, fetching keys again
    /// at most once per `cooldown`.
    async fn start(strategy: Strategy, cooldown: Duration) -> Option<Fixture> {
        Fixture::start_with(strategy, cooldown, Audit::new()).await
    }

    /// As [`start`](Fixture::start), writing the audit trail to `audit` too.
    async fn start_with(strategy: Strategy, cooldown: Duration, audit: Audit) -> Option<Fixture> {
        if !installed() {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let auth = AuthServer::start(0, &dir.path().join("keys.json"), 300);
        let proxy = KeysProxy::start(format!("{}/jwks", auth.issuer)).await;
        let port = free_port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let audit_file = dir.path().join("audit.jsonl");
        let server = McpServer::builder(Registry::global())
            .name("shop")
            .strategy(strategy)
            .context(shop::context(ShopStore::in_memory().unwrap()))
            .dispatch(|d| d.expose_only(shop::COMMAND_NAMES).expose(["who-am-i"]))
            .audit(audit.to_file(&audit_file).unwrap())
            .build()
            .unwrap();
        let kept = server.clone();
        let oauth = OAuth::new(&auth.issuer, &url)
            .jwks_uri(&proxy.url)
            .refetch_cooldown(cooldown)
            .leeway(Duration::from_secs(2));
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let server = server
            .bind_http(HttpOptions::new(addr).oauth(oauth))
            .await
            .unwrap();
        let fixture = Fixture {
            auth,
            proxy,
            server: Some(server),
            mcp: kept,
            url,
            audit: audit_file,
            _dir: dir,
        };
        // The keys are fetched at start.
        for _ in 0..100 {
            if fixture.proxy.fetches() > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(fixture.proxy.fetches(), 1, "one fetch at start");
        Some(fixture)
    }

    async fn token(&self, client: &str, scope: &str) -> String {
        self.auth.token(client, scope, &self.url).await
    }

    /// A session of `client` with `scope`.
    async fn caller(&self, client: &str, scope: &str) -> Caller {
        let token = self.token(client, scope).await;
        let mut caller = Caller::new(&self.url, Some(&token));
        let opened = caller.open().await;
        assert_eq!(opened.status, 200, "{opened:?}");
        caller
    }

    fn audit_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.audit)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            drop(server);
        }
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The names of the shop commands whose scope is `scope`.
fn shop_commands(scope: &str) -> BTreeSet<String> {
    shop::COMMANDS
        .iter()
        .filter(|def| def.scopes() == [scope])
        .map(|def| def.name().to_owned())
        .collect()
}

/// Everything a caller granted `shop:read` may see: the read commands, `who-am-i`, and the
/// context operations (which need no scope).
fn visible_to_readers() -> BTreeSet<String> {
    let mut visible = shop_commands("shop:read");
    visible.insert("who-am-i".to_owned());
    visible.extend(
        afd_runtime::contexts::CONTEXT_OPS
            .iter()
            .map(|op| op.name().to_owned()),
    );
    visible
}

/// The same server as the fixture's, without OAuth, over a catalog that never held the
/// commands readers may not see: what a name that does not exist is answered with.
async fn reference(strategy: Strategy) -> HttpHandle {
    let defs = Registry::global()
        .commands()
        .iter()
        .map(|entry| entry.def())
        .filter(|def| !matches!(def.scopes(), ["shop:write"] | ["shop:admin"]));
    let registry = Registry::builder()
        .register_all(defs)
        .with_inventory_categories()
        .with_inventory_contexts()
        .build()
        .unwrap();
    let visible = visible_to_readers();
    McpServer::builder_shared(std::sync::Arc::new(registry))
        .name("shop")
        .strategy(strategy)
        .context(shop::context(ShopStore::in_memory().unwrap()))
        .dispatch(move |d| d.expose_only(visible))
        .build()
        .unwrap()
        .bind_http(HttpOptions::new("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap()
}

/// `value` with its timings blanked, to compare two answers.
fn timeless(value: &Value) -> String {
    let mut value = value.clone();
    blank(&mut value);
    value.to_string()
}

fn blank(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                if key == "executionTimeMs" || key == "durationMs" {
                    *inner = Value::Null;
                } else {
                    blank(inner);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(blank),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metadata_and_the_challenges_are_the_specs() {
    let Some(fixture) = Fixture::start(Strategy::Lazy, Duration::from_secs(30)).await else {
        return;
    };
    let origin = fixture.url.trim_end_matches("/mcp");
    let metadata_url = format!("{origin}/.well-known/oauth-protected-resource/mcp");
    for url in [
        metadata_url.clone(),
        format!("{origin}/.well-known/oauth-protected-resource"),
    ] {
        let metadata: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
        assert_eq!(metadata["resource"], fixture.url, "{metadata}");
        assert_eq!(
            metadata["authorization_servers"],
            json!([fixture.auth.issuer])
        );
        assert_eq!(
            metadata["scopes_supported"],
            json!(["shop:admin", "shop:read", "shop:write"])
        );
    }
    // No token: where to learn more, and what to ask for.
    let mut anonymous = Caller::new(&fixture.url, None);
    let refused = anonymous.open().await;
    assert_eq!(refused.status, 401);
    assert_eq!(
        refused.header("www-authenticate"),
        format!(
            "Bearer resource_metadata=\"{metadata_url}\", scope=\"shop:admin shop:read shop:write\""
        )
    );
    // A token that is not one.
    let mut garbage = Caller::new(&fixture.url, Some("not-a-token"));
    let refused = garbage.open().await;
    assert_eq!(refused.status, 401);
    assert!(
        refused
            .header("www-authenticate")
            .starts_with("Bearer error=\"invalid_token\""),
        "{refused:?}"
    );
    // The token is never echoed.
    assert!(!refused.text.contains("not-a-token"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rs256_and_es256_tokens_see_what_their_scopes_cover_and_reach_the_handler() {
    let Some(fixture) = Fixture::start(Strategy::Lazy, Duration::from_secs(30)).await else {
        return;
    };
    let read = shop_commands("shop:read");
    let mut reader = fixture.caller("reader", "shop:read").await;
    let mut admin = fixture
        .caller("admin-es", "shop:read shop:write shop:admin")
        .await;
    let seen = |result: &Value| -> BTreeSet<String> {
        result["structuredContent"]["data"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let everything = json!({"limit": 200, "detail": "name"});
    let by_reader = reader.result("afd-discover", everything.clone()).await;
    let expected = visible_to_readers();
    assert!(expected.is_superset(&read));
    assert_eq!(seen(&by_reader), expected);
    assert_eq!(
        by_reader["structuredContent"]["data"]["total"],
        expected.len()
    );
    let by_admin = admin.result("afd-discover", everything).await;
    assert_eq!(
        seen(&by_admin).len(),
        shop::COMMANDS.len() + 1 + afd_runtime::contexts::CONTEXT_OPS.len()
    );
    // The principal reaches the handler.
    let me = reader
        .result("afd-call", json!({"command": "who-am-i"}))
        .await;
    assert_eq!(
        me["structuredContent"]["data"],
        json!({"subject": "reader", "client": "reader", "scopes": ["shop:read"]})
    );
    let me = admin.result("who-am-i", json!({})).await;
    assert_eq!(me["structuredContent"]["data"]["subject"], "admin-es");
    // afd-detail shows what a command needs.
    let detail = admin
        .result(
            "afd-detail",
            json!({"command": ["user-delete", "user-list"]}),
        )
        .await;
    let entries = &detail["structuredContent"]["data"];
    assert_eq!(entries[0]["scopes"], json!(["shop:admin"]), "{detail}");
    assert_eq!(entries[1]["scopes"], json!(["shop:read"]));
    // A read command runs.
    let users = reader
        .result("afd-call", json!({"command": "user-list", "input": {}}))
        .await;
    assert_eq!(users["isError"], false, "{users}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_token_that_must_be_refused_is_refused_with_a_reason() {
    let Some(fixture) = Fixture::start(Strategy::Lazy, Duration::from_secs(30)).await else {
        return;
    };
    let auth = &fixture.auth;
    let claims = |changes: Value| {
        let mut claims = json!({
            "iss": auth.issuer, "aud": fixture.url, "sub": "reader", "client_id": "reader",
            "scope": "shop:read", "iat": now(), "exp": now() + 300
        });
        for (key, value) in changes.as_object().unwrap() {
            claims[key] = value.clone();
        }
        claims
    };
    // A well-forged token passes: the refusals below are each for their one fault.
    let good = auth.forge(&claims(json!({})), &[]);
    let mut control = Caller::new(&fixture.url, Some(&good));
    assert_eq!(control.open().await.status, 200);
    let real = fixture.token("reader", "shop:read").await;
    let tampered = {
        // The payload changed after signing: more scopes.
        let mut parts: Vec<String> = real.split('.').map(str::to_owned).collect();
        let payload = String::from_utf8(base64_decode(&parts[1])).unwrap();
        let payload = payload.replace("\"shop:read\"", "\"shop:read shop:admin\"");
        parts[1] = base64_encode(payload.as_bytes());
        parts.join(".")
    };
    let other_resource = auth
        .token("reader", "shop:read", "http://127.0.0.1:1/other")
        .await;
    let cases = [
        (
            "expired",
            auth.forge(&claims(json!({"exp": now() - 600})), &[]),
            "the token has expired",
        ),
        (
            "nbf in the future",
            auth.forge(&claims(json!({"nbf": now() + 600})), &[]),
            "the token is not valid yet",
        ),
        (
            "bad signature",
            tampered,
            "the token's signature does not verify",
        ),
        (
            "alg none",
            auth.forge(&claims(json!({})), &["--none"]),
            "the token's header cannot be read",
        ),
        (
            "HS256 keyed with the public key",
            auth.forge(&claims(json!({})), &["--hs256-with-public-key"]),
            "the token's signature algorithm is not accepted",
        ),
        (
            "wrong aud",
            other_resource,
            "the token was not issued for this resource",
        ),
        (
            "wrong iss",
            auth.forge(&claims(json!({"iss": "http://127.0.0.1:1"})), &[]),
            "the token was not issued by the trusted authorization server",
        ),
        (
            "no sub",
            auth.forge(&claims(json!({"sub": null})), &[]),
            "the token lacks a required claim",
        ),
    ];
    for (case, token, why) in cases {
        let mut caller = Caller::new(&fixture.url, Some(&token));
        let refused = caller.open().await;
        assert_eq!(refused.status, 401, "{case}: {refused:?}");
        let challenge = refused.header("www-authenticate");
        assert!(
            challenge.starts_with(&format!(
                "Bearer error=\"invalid_token\", error_description=\"{why}\""
            )),
            "{case}: {challenge}"
        );
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .unwrap()
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotated_keys_are_fetched_once_and_made_up_key_ids_cost_at_most_one_fetch() {
    let cooldown = Duration::from_secs(1);
    let Some(mut fixture) = Fixture::start(Strategy::Lazy, cooldown).await else {
        return;
    };
    let before = fixture.token("reader", "shop:read").await;
    assert_eq!(
        Caller::new(&fixture.url, Some(&before)).open().await.status,
        200
    );
    // The authorization server comes back with new keys (new kids) on the same port.
    let port = fixture.auth.port;
    let keys = fixture.auth.keys.clone();
    fixture.auth.stop();
    std::fs::remove_file(&keys).unwrap();
    fixture.auth = AuthServer::start(port, &keys, 300);
    tokio::time::sleep(cooldown).await;
    let after = fixture.token("writer-es", "shop:write").await;
    let fetched = fixture.proxy.fetches();
    assert_eq!(
        Caller::new(&fixture.url, Some(&after)).open().await.status,
        200
    );
    assert_eq!(
        fixture.proxy.fetches(),
        fetched + 1,
        "one fetch for the new kid"
    );
    // Known now: no more fetches.
    assert_eq!(
        Caller::new(&fixture.url, Some(&after)).open().await.status,
        200
    );
    assert_eq!(fixture.proxy.fetches(), fetched + 1);

    // A flood of made-up key ids, signed with the real key, at once.
    let Some(fixture) = Fixture::start(Strategy::Lazy, Duration::from_secs(300)).await else {
        return;
    };
    let tokens: Vec<String> = (0..100)
        .map(|i| {
            fixture.auth.forge(
                &json!({"iss": fixture.auth.issuer, "aud": fixture.url, "sub": "x",
                        "scope": "shop:read", "exp": now() + 300}),
                &["--kid", &format!("made-up-{i}-{}", now())],
            )
        })
        .collect();
    let fetched = fixture.proxy.fetches();
    let answers = futures_util::future::join_all(tokens.iter().map(|token| {
        let url = fixture.url.clone();
        async move { Caller::new(&url, Some(token)).open().await.status }
    }))
    .await;
    assert!(answers.iter().all(|&status| status == 401), "{answers:?}");
    assert!(
        fixture.proxy.fetches() <= fetched + 1,
        "{} fetches for 100 unknown kids",
        fixture.proxy.fetches() - fetched
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_key_set_leaves_the_known_keys_working_and_refuses_the_rest_with_401() {
    let Some(fixture) = Fixture::start(Strategy::Lazy, Duration::from_millis(100)).await else {
        return;
    };
    fixture.proxy.set_down(true);
    tokio::time::sleep(Duration::from_millis(200)).await;
    // A token never seen before, signed with a key known from before the key set died.
    let known = fixture.token("reader", "shop:read").await;
    assert_eq!(
        Caller::new(&fixture.url, Some(&known)).open().await.status,
        200
    );
    let unknown = fixture.auth.forge(
        &json!({"iss": fixture.auth.issuer, "aud": fixture.url, "sub": "x", "exp": now() + 300}),
        &["--kid", "not-published"],
    );
    let refused = Caller::new(&fixture.url, Some(&unknown)).open().await;
    assert_eq!(refused.status, 401, "{refused:?}");
    assert!(refused.header("www-authenticate").contains("unknown key"));
    assert!(fixture.proxy.fetches() >= 2, "it tried the dead key set");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_beyond_the_scopes_is_refused_naming_every_scope_it_needs() {
    let Some(fixture) = Fixture::start(Strategy::Lazy, Duration::from_secs(30)).await else {
        return;
    };
    let mut reader = fixture.caller("reader", "shop:read").await;
    // A direct tools/call: 403 with the scope challenge (step-up authorization).
    let refused = reader
        .call(
            "user-create",
            json!({"name": "Eve", "email": "eve@example.com"}),
        )
        .await;
    assert_eq!(refused.status, 403, "{refused:?}");
    let challenge = refused.header("www-authenticate");
    assert!(
        challenge.starts_with("Bearer error=\"insufficient_scope\"")
            && challenge.contains("scope=\"shop:write\""),
        "{challenge}"
    );
    assert_eq!(
        refused.message["error"]["data"]["code"],
        "INSUFFICIENT_SCOPE"
    );
    assert_eq!(
        refused.message["error"]["data"]["requiredScopes"],
        json!(["shop:write"])
    );
    // Inside afd-call, afd-batch and afd-pipe: a structured failure naming the scopes.
    let called = reader
        .result(
            "afd-call",
            json!({"command": "user-delete", "input": {"id": 1}}),
        )
        .await;
    assert_eq!(called["isError"], true);
    let error = &called["structuredContent"]["error"];
    assert_eq!(error["code"], "INSUFFICIENT_SCOPE", "{called}");
    assert_eq!(error["details"]["requiredScopes"], json!(["shop:admin"]));
    assert!(error["message"].as_str().unwrap().contains("shop:admin"));
    let batch = reader
        .result(
            "afd-batch",
            json!({"commands": [
                {"command": "user-list", "input": {}},
                {"command": "user-create", "input": {"name": "Eve", "email": "eve@example.com"}}
            ]}),
        )
        .await;
    let results = &batch["structuredContent"]["results"];
    assert_eq!(results[0]["result"]["success"], true, "{batch}");
    assert_eq!(results[1]["result"]["error"]["code"], "INSUFFICIENT_SCOPE");
    let pipe = reader
        .result(
            "afd-pipe",
            json!({"steps": [
                {"command": "user-list", "input": {}},
                {"command": "user-create", "input": {"name": "Eve", "email": "eve@example.com"}}
            ]}),
        )
        .await;
    assert_eq!(
        pipe["structuredContent"]["steps"][1]["error"]["code"], "INSUFFICIENT_SCOPE",
        "{pipe}"
    );
    // The same on the stateless protocol (2026-07-28), which the front answers on the
    // connection's task: 403 and the challenge for the call beyond the scopes, the answer
    // for the one within them.
    let token = fixture.token("reader", "shop:read").await;
    let stateless = |id: u64, tool: &str, arguments: Value| {
        let body = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "afd-tests", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {}
            }}
        });
        reqwest::Client::new()
            .post(&fixture.url)
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", tool)
            .body(body.to_string())
            .send()
    };
    let refused = stateless(
        41,
        "user-create",
        json!({"name": "Eve", "email": "eve@example.com"}),
    )
    .await
    .expect("sent");
    assert_eq!(refused.status(), 403);
    let challenge = refused.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.contains("scope=\"shop:write\""), "{challenge}");
    let refused: Value = refused.json().await.expect("JSON");
    assert_eq!(refused["id"], 41, "{refused}");
    assert_eq!(refused["error"]["data"]["code"], "INSUFFICIENT_SCOPE");
    let listed = stateless(42, "user-list", json!({})).await.expect("sent");
    assert_eq!(listed.status(), 200);
    let listed: Value = listed.json().await.expect("a JSON answer");
    assert_eq!(listed["id"], 42, "{listed}");
    assert_eq!(listed["result"]["isError"], false, "{listed}");
    // The writer may.
    let mut writer = fixture.caller("writer", "shop:read shop:write").await;
    let created = writer
        .result(
            "user-create",
            json!({"name": "Eve", "email": "eve@example.com"}),
        )
        .await;
    assert_eq!(created["isError"], false, "{created}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_beyond_the_scopes_is_answered_as_a_name_that_does_not_exist() {
    for strategy in [
        Strategy::Individual,
        Strategy::Grouped,
        Strategy::Lazy,
        Strategy::Hybrid,
    ] {
        let Some(fixture) = Fixture::start(strategy, Duration::from_secs(30)).await else {
            return;
        };
        // The same questions to a server that never had the hidden commands.
        let reference = reference(strategy).await;
        let mut nobody = Caller::new(&reference.url(), None);
        assert_eq!(nobody.open().await.status, 200);
        let mut reader = fixture.caller("reader", "shop:read").await;
        let hidden: BTreeSet<String> = shop_commands("shop:write")
            .union(&shop_commands("shop:admin"))
            .cloned()
            .collect();
        assert!(hidden.len() > 40);
        // tools/list (tools, group actions, descriptions), the catalog resource and
        // afd-discover's browsing: the same as where the hidden commands do not exist.
        let listing = reader.request("tools/list", json!({})).await;
        let expected = nobody.request("tools/list", json!({})).await;
        assert_eq!(
            timeless(&listing.message["result"]),
            timeless(&expected.message["result"]),
            "{strategy:?}"
        );
        for uri in ["afd://catalog", "afd://categories/user"] {
            let read = reader.request("resources/read", json!({"uri": uri})).await;
            let expected = nobody.request("resources/read", json!({"uri": uri})).await;
            assert_eq!(read.message["result"], expected.message["result"], "{uri}");
        }
        let browse = json!({"limit": 200});
        assert_eq!(
            timeless(&reader.result("afd-discover", browse.clone()).await["structuredContent"]),
            timeless(&nobody.result("afd-discover", browse).await["structuredContent"])
        );
        for name in &hidden {
            // By name and by a near miss: afd-detail, afd-docs, afd-schema, the command's
            // resource, and an afd-discover search for it.
            let typo = format!("{name}x");
            for (tool, arguments) in [
                ("afd-detail", json!({"command": name})),
                ("afd-detail", json!({"command": typo})),
                ("afd-detail", json!({"command": [name, "user-get"]})),
            ] {
                let answer = reader.result(tool, arguments.clone()).await;
                let expected = nobody.result(tool, arguments.clone()).await;
                assert_eq!(
                    timeless(&answer["structuredContent"]),
                    timeless(&expected["structuredContent"]),
                    "{tool} {arguments}"
                );
            }
            let uri = format!("afd://commands/{name}");
            let read = reader.request("resources/read", json!({"uri": uri})).await;
            let expected = nobody.request("resources/read", json!({"uri": uri})).await;
            assert_eq!(read.message["error"], expected.message["error"], "{uri}");
            let found = reader
                .result("afd-discover", json!({"search": name, "limit": 50}))
                .await;
            let names = found["structuredContent"]["data"]["commands"].to_string();
            assert!(!names.contains(&format!("\"{name}\"")), "{name}: {names}");
        }
        // Context suggestions name no hidden command.
        let intent = json!({"intent": "delete a user account and refund a payment"});
        assert_eq!(
            timeless(
                &reader.result("afd-context-suggest", intent.clone()).await["structuredContent"]
            ),
            timeless(&nobody.result("afd-context-suggest", intent).await["structuredContent"])
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_its_subjects_alone() {
    let Some(fixture) = Fixture::start(Strategy::Lazy, Duration::from_secs(30)).await else {
        return;
    };
    let mut writer = fixture.caller("writer", "shop:read shop:write").await;
    let mut reader = fixture.caller("reader", "shop:read").await;
    // The transport session (Mcp-Session-Id) under another subject's token: not found.
    let mut thief = Caller::new(
        &fixture.url,
        Some(&fixture.token("reader", "shop:read").await),
    );
    thief.session = writer.session.clone();
    let refused = thief.request("tools/list", json!({})).await;
    assert_eq!(refused.status, 404, "{refused:?}");
    assert_eq!(writer.request("tools/list", json!({})).await.status, 200);
    // An explicit session handle: answered as unknown to anyone else.
    let entered = writer
        .result("afd-context-enter", json!({"context": "storefront"}))
        .await;
    let handle = entered["structuredContent"]["data"]["status"]["session"]
        .as_str()
        .unwrap_or_else(|| panic!("a session handle: {entered}"))
        .to_owned();
    let stolen = reader
        .result("afd-discover", json!({"session": handle}))
        .await;
    assert_eq!(
        stolen["structuredContent"]["error"]["code"], "SESSION_NOT_FOUND",
        "{stolen}"
    );
    let exit = reader
        .result("afd-context-exit", json!({"session": handle}))
        .await;
    assert_eq!(
        exit["structuredContent"]["error"]["code"],
        "SESSION_NOT_FOUND"
    );
    let own = writer
        .result("afd-discover", json!({"session": handle}))
        .await;
    assert_eq!(own["isError"], false, "{own}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_decision_is_one_audit_event_without_the_token() {
    let Some(fixture) = Fixture::start(Strategy::Lazy, Duration::from_secs(30)).await else {
        return;
    };
    let token = fixture.token("reader", "shop:read").await;
    let mut reader = Caller::new(&fixture.url, Some(&token));
    reader.open().await;
    let before = fixture.audit_lines().len();
    Caller::new(&fixture.url, None).open().await; // 401
    Caller::new(&fixture.url, Some("a.b.c")).open().await; // 401
    reader
        .call("user-create", json!({"name": "E", "email": "e@x.io"}))
        .await; // 403
    reader
        .result("afd-call", json!({"command": "user-list", "input": {}}))
        .await; // allowed
    reader
        .result(
            "afd-call",
            json!({"command": "user-get", "input": {"id": 999_999}}),
        )
        .await; // tool error
    let lines = fixture.audit_lines();
    let events: Vec<&Value> = lines[before..].iter().collect();
    let decisions: Vec<&str> = events
        .iter()
        .map(|event| event["decision"].as_str().unwrap())
        .collect();
    assert_eq!(
        decisions,
        [
            "unauthenticated",
            "unauthenticated",
            "forbidden",
            "allowed",
            "tool_error"
        ],
        "{events:?}"
    );
    assert_eq!(events[2]["status"], 403);
    assert_eq!(events[2]["command"], "user-create");
    assert_eq!(events[3]["subject"], "reader");
    assert_eq!(events[3]["clientId"], "reader");
    assert_eq!(events[3]["command"], "user-list");
    assert_eq!(events[4]["error"], "NOT_FOUND");
    for event in &events {
        assert!(event["time"].as_str().unwrap().ends_with('Z'));
        assert!(event["durationMs"].as_f64().unwrap() >= 0.0);
        assert!(
            event.get("arguments").is_none(),
            "no arguments unless asked"
        );
    }
    let text = std::fs::read_to_string(&fixture.audit).unwrap();
    assert!(!text.contains(&token[..40]), "a token in the audit trail");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_trail_goes_to_postgresql_when_asked() {
    let Some(database) = afd_tests::services::postgres_url() else {
        return;
    };
    let audit = Audit::new().to_postgres(&database).await.unwrap();
    let Some(fixture) = Fixture::start_with(Strategy::Lazy, Duration::from_secs(30), audit).await
    else {
        return;
    };
    let (client, connection) = tokio_postgres::connect(&database, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let since: String = client
        .query_one("SELECT now()::text", &[])
        .await
        .unwrap()
        .get(0);
    let mut reader = fixture.caller("reader", "shop:read").await;
    Caller::new(&fixture.url, None).open().await; // 401
    reader
        .call("user-create", json!({"name": "E", "email": "e@x.io"}))
        .await; // 403
    reader.result("who-am-i", json!({})).await; // allowed
    fixture.mcp.audit().flush().await;
    let rows = client
        .query(
            "SELECT decision, subject, command, status FROM afd_audit \
             WHERE time >= $1::text::timestamptz ORDER BY id",
            &[&since],
        )
        .await
        .unwrap();
    /// decision, subject, command, status
    type Row = (String, Option<String>, Option<String>, Option<i32>);
    let rows: Vec<Row> = rows
        .iter()
        .map(|row| (row.get(0), row.get(1), row.get(2), row.get(3)))
        .collect();
    let file = fixture.audit_lines();
    assert_eq!(rows.len(), file.len(), "{rows:?}");
    let decisions: Vec<&str> = rows.iter().map(|row| row.0.as_str()).collect();
    assert_eq!(
        decisions,
        ["unauthenticated", "forbidden", "allowed"],
        "{rows:?}"
    );
    assert_eq!(rows[1].3, Some(403));
    assert_eq!(rows[2].1.as_deref(), Some("reader"));
    assert_eq!(rows[2].2.as_deref(), Some("who-am-i"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_typescript_and_python_clients_connect_with_tokens() {
    let Some(fixture) = Fixture::start(Strategy::Lazy, Duration::from_secs(30)).await else {
        return;
    };
    let token = fixture.token("reader-es", "shop:read").await;
    let read = visible_to_readers().len();
    let check = |who: &str, output: std::process::Output, expect_ok: bool| {
        let text = String::from_utf8_lossy(&output.stdout).to_string();
        eprintln!("{who}: {text}{}", String::from_utf8_lossy(&output.stderr));
        let answer: Value = serde_json::from_str(text.trim()).unwrap_or_else(|_| json!({}));
        if expect_ok {
            assert!(output.status.success(), "{who}: {text}");
            assert_eq!(answer["discover"]["data"]["total"], read, "{who}: {answer}");
        } else {
            assert!(!output.status.success(), "{who}: {text}");
            assert!(
                answer["error"].as_str().unwrap_or_default().contains("401"),
                "{who}: {answer}"
            );
        }
    };
    let node = |token: &str| {
        Command::new("node")
            .arg(auth_dir().join("client.mjs"))
            .args([&fixture.url, token])
            .output()
            .unwrap()
    };
    check("TypeScript", node(&token), true);
    check("TypeScript without a token", node(""), false);
    let Some(python) = afd_tests::python::client() else {
        return;
    };
    let python = |token: &str| {
        Command::new(&python)
            .arg(auth_dir().join("client.py"))
            .args([&fixture.url, token])
            .output()
            .unwrap()
    };
    check("Python", python(&token), true);
    check("Python without a token", python(""), false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opaque_tokens_are_introspected_and_an_unreachable_endpoint_refuses() {
    if !installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut auth = AuthServer::start(0, &dir.path().join("keys.json"), 300);
    // The authorization server issues opaque tokens for resources whose path ends in
    // `/opaque`.
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/opaque");
    let oauth = OAuth::new(&auth.issuer, &url).introspection("introspector", "introspector-secret");
    let server = McpServer::builder(Registry::global())
        .context(shop::context(ShopStore::in_memory().unwrap()))
        .dispatch(|d| d.expose_only(shop::COMMAND_NAMES).expose(["who-am-i"]))
        .build()
        .unwrap()
        .bind_http(
            HttpOptions::new(format!("127.0.0.1:{port}").parse().unwrap())
                .path("/opaque")
                .oauth(oauth),
        )
        .await
        .unwrap();
    let token = auth.token("writer", "shop:read shop:write", &url).await;
    assert_eq!(token.matches('.').count(), 0, "an opaque token");
    let mut writer = Caller::new(&url, Some(&token));
    assert_eq!(writer.open().await.status, 200);
    let me = writer.result("who-am-i", json!({})).await;
    assert_eq!(
        me["structuredContent"]["data"]["scopes"],
        json!(["shop:read", "shop:write"])
    );
    let made_up = Caller::new(&url, Some("an-opaque-token-nobody-issued"))
        .open()
        .await;
    assert_eq!(made_up.status, 401);
    assert!(made_up.header("www-authenticate").contains("not active"));
    // With the authorization server gone, a token never seen cannot be checked: refused.
    auth.stop();
    let unchecked = Caller::new(&url, Some("another-opaque-token")).open().await;
    assert_eq!(unchecked.status, 503, "{unchecked:?}");
    drop(server);
}

#[tokio::test]
async fn an_operator_can_set_a_commands_scopes_where_the_server_is_built() {
    let dispatcher = afd_runtime::Dispatcher::builder(Registry::global())
        .expose_only(shop::COMMAND_NAMES)
        .command_scopes("user-list", ["shop:admin"])
        .command_scopes("user-delete", Vec::<String>::new())
        .build()
        .unwrap();
    let reader = dispatcher.for_scopes(&afd_runtime::auth::Scopes::parse("shop:read"));
    assert!(!reader.is_exposed("user-list"));
    assert!(reader.is_exposed("user-delete"), "no scope: any token");
    let ctx = shop::context(ShopStore::in_memory().unwrap());
    let refused = reader.call("user-list", json!({}), ctx).await;
    let error = refused.error.unwrap();
    assert_eq!(error.code, "INSUFFICIENT_SCOPE");
    assert_eq!(
        error.details.unwrap()["requiredScopes"],
        json!(["shop:admin"])
    );
}

/// The shop binary with `AFD_SCOPES`, and `args`.
fn shop_bounded(scopes: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_afd-example-shop"));
    command.env("AFD_SCOPES", scopes).args(args);
    command
}

#[test]
fn afd_scopes_bounds_the_command_line_as_if_the_rest_did_not_exist() {
    let listed = shop_bounded("shop:read", &["--json", "commands"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&listed.stdout);
    let visible = visible_to_readers();
    for def in shop::COMMANDS {
        let named = text.contains(&format!("\"{}\"", def.name()));
        assert_eq!(
            named,
            visible.contains(def.name()),
            "{}: {text}",
            def.name()
        );
    }
    // A command beyond the bound is unknown: the same answer as a name never declared.
    let hidden = shop_bounded("shop:read", &["call", "user-delete", "--id", "1"])
        .output()
        .unwrap();
    let unknown = shop_bounded("shop:read", &["call", "user-deletx", "--id", "1"])
        .output()
        .unwrap();
    let said = |output: &std::process::Output| {
        String::from_utf8_lossy(&output.stderr).replace("user-deletx", "user-delete")
    };
    assert_eq!(hidden.status.code(), unknown.status.code());
    assert_eq!(said(&hidden), said(&unknown));
    // Unbounded, it is there.
    let all = shop_bounded("", &["--json", "commands"])
        .env_remove("AFD_SCOPES")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&all.stdout).contains("\"user-delete\""));
}

#[test]
fn afd_scopes_bounds_what_a_stdio_server_lists_and_runs() {
    use std::io::{BufRead, BufReader, Write};
    let mut server = shop_bounded("shop:read shop:write", &["--strategy", "individual"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "afd-call", "arguments": {"command": "user-delete", "input": {"id": 1}}}}),
    ];
    for message in &messages {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut answers = std::collections::HashMap::new();
    while answers.len() < 3 {
        let line = lines.next().unwrap().unwrap();
        let value: Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = value["id"].as_u64() {
            answers.insert(id, value);
        }
    }
    drop(stdin);
    let _ = server.kill();
    let _ = server.wait();
    let tools: BTreeSet<String> = answers[&2]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(tools.is_superset(&shop_commands("shop:write")));
    assert!(tools.is_disjoint(&shop_commands("shop:admin")), "{tools:?}");
    let refused = &answers[&3]["result"]["structuredContent"]["error"];
    assert_eq!(refused["code"], "COMMAND_NOT_FOUND", "{refused}");
}
