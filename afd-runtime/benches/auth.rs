//! The cost of checking an OAuth bearer token (feature `oauth`), with criterion.
//!
//! `cargo bench -p afd-runtime --features oauth --bench auth`
//!
//! - `token/*`: `TokenVerifier::check` alone, keys given with `OAuth::jwks_json` (so already
//!   in memory, nothing fetched): `header_only` is `Authorization: Basic x`, refused once the
//!   header is read, before any JWT decoding or cryptography (the baseline); `es256` and
//!   `rs256` are valid tokens (EC P-256 and RSA 2048 keys) accepted with their principal,
//!   as a client sends them request after request: verified once, then remembered until
//!   they expire (at most a minute); `es256_first_sight` and `rs256_first_sight` are a new
//!   token each time (criterion only), the signature verified;
//!   `es256_bad_signature` is a well-formed ES256 token whose signature does not verify.
//!   The futures complete without waiting, so they are polled once with `now_or_never` and
//!   no executor cost is measured.
//! - `http/*`: one whole `tools/call` (afd-call of a trivial command, stateless protocol
//!   2026-07-28 with its `Mcp-Method` and `Mcp-Name` headers) over streamable HTTP on
//!   loopback, in-process: the same server bound twice with `bind_http`, without
//!   authentication (`no_auth`) and with `HttpOptions::oauth` on the same fixed keys
//!   (`oauth_es256`, `oauth_rs256`: each request carries a valid token). The client is a
//!   bare hyper HTTP/1.1 connection kept alive; client and servers share one
//!   current-thread Tokio runtime, so a sample is the work of the requests, one at a time.
//!
//! Criterion measures each operation in turn. Then, unless only some benches are run, a
//! side-by-side pass times every operation in the same rounds (10,000, in a rotated order)
//! and prints Markdown tables: median, p99, and the overhead over and ratio to the group's
//! first row (`header_only`, `no_auth`). Criterion's figures of operations measured a
//! minute apart move with the machine (by 20 % and more between runs on 2 shared cores);
//! the rounds' do not.

use std::hint::black_box;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use afd_runtime::auth::Principal;
use afd_runtime::mcp::{HttpHandle, HttpOptions, McpServer, OAuth, TokenRejection, TokenVerifier};
use afd_runtime::prelude::*;
use base64::Engine as _;
use criterion::Criterion;
use futures_util::FutureExt;
use jsonwebtoken::jwk::{Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, EncodingKey, Header};

#[path = "support/http.rs"]
mod support;
use support::{Client, report};

const ISSUER: &str = "https://auth.example.com";
const AUDIENCE: &str = "https://mcp.example.com/mcp";

/// TEST KEY ONLY, made with `openssl` for this benchmark and used nowhere else: an EC P-256
/// private key (PKCS#8).
const EC_TEST_KEY: &str = "
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQglIMQfs1ubKYsrGUW
3+wECCVd0XXldKNABhL/d7mPqtyhRANCAASqA+B3Xtgweni2HygRYM8GYiDOf+Zo
VGrkYM8aua6GNxqdL0dD15KpJhJdqIHZllMNLG98Z2E+GbVBkBRhQLFU
-----END PRIVATE KEY-----
";

/// TEST KEY ONLY, made with `openssl` for this benchmark and used nowhere else: an RSA 2048
/// private key (PKCS#1).
const RSA_TEST_KEY: &str = "
-----BEGIN RSA PRIVATE KEY-----
MIIEpAIBAAKCAQEAu7+s6UGfXO+Wxn8qkqg38AdGClzWKUB+ICk8KCLWUhtZ97Xu
IRzXI1pBMORqFokOT6NQILi27iNdhWU8OLSkev3oaHQimSOkin3YpMxNsDU/eaM+
3kxDQCCJEVsfkW5HtqPnr4NOqToCyaz1ArjtSD1Cl0QFUt8lX33F3PP7XQc8qW86
SMkaLt33WzPJobP+1u6rA3E7cKNg2uQ7hFOkg3al53T+bCdabHOigOopNuA569Fy
2KEUA9SQPH2GVV3e62bM87j7AUV7jicwkTg8s2D4b9RPhXCAmkzf8buJ8wKSZxh7
1l8tfLLg320wTAXM2RqvR09A47Gc+WmS764f9QIDAQABAoIBAAH954eLFtlznQhh
vKjVGF7TzrR5GxvftMierLRt24UACEjQM8vRW5DxK8tT07JM89KGzUw1WXaWTZLc
OAgr+f72fEypnIewKbnioSBe5dYZHvbF5TOSp6mMVe1DmX+Gpe50KXp37KcaLUjW
yREXKQvypm4mgfplQxj2aq7o6Na4TRU8QbdckoCk+vlpaPNRMP8gPOc9Pi9JrlSn
AUYnw96Xxwk0VSlunm6Q5TvYDBd/yvBRtZJHU/TCZIAsiRefXp9AFLaNFtWLyIZR
2bmNIpO967as/w8ISG4WPNlxylN4P1D3KMF0LtqYgYQYwUKOA1wNY3lGCUTs74LU
DwcR/vECgYEA90pguxaPtm3N3CKMzkIpHd3dMbp7K4w28f9vEPpiZ8P97zEuHwBP
iXWy7jvOQNANSfFDsGj5VC3zS1OQV04jFx3sXpi7N4hOvP+Q3P8O1DxxwyJzSevi
9r6WGCfYM0Pf9rNXcQSNwQuP48LI6Vi2fWyxoC3DumluLu9IIaZJmBkCgYEAwlx0
2nIAFSVXg3YKcje0VCnZmWNV9vyXCf3NMU/a2ZIhCP2SUh6p3K2bM4RbKMdAqbGI
3rsCYgPbsP4QaYi0yfz2Ylci+S3+BVs1SjKVh3q9amO4i9ahOwJvjruPBh3an1jB
vPcmwLKVmbOVxADaYKSxukXOlT10q0SRD0HwMj0CgYEA8zNF4Jk2qz5gF+AuxGbS
0xmwgUiZ++EA5IzG6Val0tEw+r1OU5TVpCWJ3LwagylZ+F97p5IFq2Ephepf6Uzi
O8jk/r+MV/gJH9zj1kRNjDMJ2tQVuBxx8SLMsGL3QKu/JnuIQpEs7C73yxJ0zvC9
QKrWIecAOGOZxjTzpoxIknkCgYBLW5GrCLxjdoEB5YiTVGnEoB1QTaWNB85//znJ
vs55wSCx3a8Xy+/MMjuUs+KsYuT9ZmpNAXEhE6HgdAFlCa4fCsd0xZg3yM9OwFhf
FlHHn51FXLi271bADGe4jZwcoQKc+crUO3d5C0TZvTl6L2J8Sh7mvB4m2xcbOJCN
u+EneQKBgQCNwQiKlcqd/C7T+7omUtoz/HOd3fBIBL5eUTFmhNlmr9bDrjbfb3As
HMtIRs5l9Do1tAlsdep4zIjC3+vbzdIS7R6FLUbq48qAVNwbgrYlCnIgXZaLhtOf
1W7QMuFUTbzLzMg1DCRSYe3OrfvLwtC2Lejtk6J5wgkYJ06Ogz8Ufw==
-----END RSA PRIVATE KEY-----
";

/// The DER inside a PEM.
fn der(pem: &str) -> Vec<u8> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("-----"))
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .expect("a PEM body")
}

/// The signing keys and the public key set the server trusts.
struct Keys {
    ec: EncodingKey,
    rsa: EncodingKey,
    jwks: String,
}

fn keys() -> Keys {
    let ec = EncodingKey::from_ec_der(&der(EC_TEST_KEY));
    let rsa = EncodingKey::from_rsa_der(&der(RSA_TEST_KEY));
    let public = |key: &EncodingKey, alg: Algorithm, kid: &str| {
        let mut jwk = Jwk::from_encoding_key(key, alg).expect("a public key");
        jwk.common.key_id = Some(kid.to_owned());
        jwk.common.public_key_use = Some(PublicKeyUse::Signature);
        jwk
    };
    let set = JwkSet {
        keys: vec![
            public(&ec, Algorithm::ES256, "bench-ec"),
            public(&rsa, Algorithm::RS256, "bench-rsa"),
        ],
    };
    Keys {
        jwks: serde_json::to_string(&set).expect("a JWKS"),
        ec,
        rsa,
    }
}

/// A token valid for a day, signed with `key` (`alg`, `kid`), each with its own `jti`.
fn token(key: &EncodingKey, alg: Algorithm, kid: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let jti = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut header = Header::new(alg);
    header.kid = Some(kid.to_owned());
    let claims = json!({
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "user-1",
        "client_id": "bench-client",
        "iat": now,
        "exp": now + 86_400,
        "scope": "bench orders:read",
        "jti": jti.to_string(),
    });
    jsonwebtoken::encode(&header, &claims, key).expect("a signed token")
}

fn oauth(keys: &Keys) -> OAuth {
    OAuth::new(ISSUER, AUDIENCE)
        .jwks_json(&keys.jwks)
        .expect("the key set parses")
}

/// The one runtime of the bench: client, servers and verifier on one thread.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Everything measured, made once: the verifier alone, the two servers, a connection to
/// each (two to the protected one, one per token) and the headers sent.
struct Fixture {
    rt: tokio::runtime::Runtime,
    keys: Keys,
    verifier: Arc<TokenVerifier>,
    /// `Authorization` values given to `check`, by name: refused unread, ES256, RS256, and
    /// ES256 with a signature that does not verify.
    headers: [(&'static str, Vec<u8>); 4],
    plain: HttpHandle,
    protected: HttpHandle,
    /// No token to `plain`; an ES256 token, then an RS256 one, to `protected`.
    clients: [(&'static str, Client); 3],
}

impl Fixture {
    fn start() -> Fixture {
        let keys = keys();
        let rt = runtime();
        let verifier = {
            let _entered = rt.enter();
            TokenVerifier::start(oauth(&keys))
        };
        let es256 = token(&keys.ec, Algorithm::ES256, "bench-ec");
        let rs256 = token(&keys.rsa, Algorithm::RS256, "bench-rsa");
        // The ES256 token with another well-formed signature: one character changed.
        let mut forged = format!("Bearer {es256}").into_bytes();
        let last = forged.len() - 2;
        forged[last] = if forged[last] == b'A' { b'B' } else { b'A' };
        let headers = [
            ("header_only", b"Basic x".to_vec()),
            ("es256", format!("Bearer {es256}").into_bytes()),
            ("rs256", format!("Bearer {rs256}").into_bytes()),
            ("es256_bad_signature", forged),
        ];
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let server = || {
            McpServer::builder(Registry::global())
                .name("bench")
                .build()
                .expect("a server")
        };
        let (plain, protected, clients) = rt.block_on(async {
            let plain = server()
                .bind_http(HttpOptions::new(addr))
                .await
                .expect("binds");
            let protected = server()
                .bind_http(HttpOptions::new(addr).oauth(oauth(&keys)))
                .await
                .expect("binds");
            let clients = [
                ("no_auth", Client::connect(&plain, None).await),
                (
                    "oauth_es256",
                    Client::connect(&protected, Some(es256)).await,
                ),
                (
                    "oauth_rs256",
                    Client::connect(&protected, Some(rs256)).await,
                ),
            ];
            (plain, protected, clients)
        });
        let mut fixture = Fixture {
            rt,
            keys,
            verifier,
            headers,
            plain,
            protected,
            clients,
        };
        fixture.check_answers();
        fixture
    }

    /// `check` of one header: the futures complete without waiting (the keys are in memory).
    fn check(&self, header: &[u8]) -> Result<Principal, TokenRejection> {
        self.verifier
            .check(Some(black_box(header)))
            .now_or_never()
            .expect("no waiting: the keys are in memory")
    }

    /// Each measured operation does what it is named for.
    fn check_answers(&mut self) {
        let [refused, es256, rs256, forged] = &self.headers;
        assert_eq!(self.check(&refused.1), Err(TokenRejection::Missing));
        assert_eq!(self.check(&es256.1).unwrap().subject(), "user-1");
        assert_eq!(self.check(&rs256.1).unwrap().subject(), "user-1");
        assert!(matches!(
            self.check(&forged.1),
            Err(TokenRejection::Invalid(_))
        ));
        for (name, client) in &mut self.clients {
            let body = self.rt.block_on(client.call());
            let text = String::from_utf8_lossy(&body);
            assert!(text.contains(r#""data":5"#), "{name}: {text}");
        }
    }

    fn stop(self) {
        let Fixture {
            rt,
            plain,
            protected,
            clients,
            ..
        } = self;
        drop(clients);
        rt.block_on(async {
            plain.shutdown().await;
            protected.shutdown().await;
        });
    }
}

fn token_check(c: &mut Criterion, fixture: &Fixture) {
    let mut group = c.benchmark_group("token");
    for (name, header) in &fixture.headers {
        group.bench_function(*name, |b| b.iter(|| fixture.check(header)));
    }
    let keys = &fixture.keys;
    for (name, key, alg, kid) in [
        ("es256_first_sight", &keys.ec, Algorithm::ES256, "bench-ec"),
        (
            "rs256_first_sight",
            &keys.rsa,
            Algorithm::RS256,
            "bench-rsa",
        ),
    ] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || format!("Bearer {}", token(key, alg, kid)).into_bytes(),
                |header| fixture.check(&header),
                criterion::BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

fn http_call(c: &mut Criterion, fixture: &mut Fixture) {
    let mut group = c.benchmark_group("http");
    group.measurement_time(Duration::from_secs(8));
    let rt = &fixture.rt;
    for (name, client) in &mut fixture.clients {
        group.bench_function(*name, |b| {
            b.iter_custom(|iters| support::timed_calls(rt, client, iters))
        });
    }
    group.finish();
}

/// Rounds of the side-by-side pass, after as many warm-up rounds as a tenth of them.
const ROUNDS: usize = 10_000;
/// `header_only` is timed over this many calls at a time (one is too short for `Instant`).
const BATCH: u32 = 100;

/// The operations measured in the same rounds, each round in a rotated order, so that a
/// machine that speeds up or slows down during the run moves every column alike: each
/// round times one `check` of each header and one `tools/call` on each connection.
/// Prints the median and p99 of each, the overhead over the group's first row and the
/// ratio to it.
fn side_by_side(fixture: &mut Fixture) {
    let Fixture {
        rt,
        headers,
        clients,
        verifier,
        ..
    } = fixture;
    let check = |header: &[u8]| {
        verifier
            .check(Some(black_box(header)))
            .now_or_never()
            .expect("no waiting")
    };
    let mut token_times: Vec<Vec<Duration>> = vec![Vec::with_capacity(ROUNDS); headers.len()];
    let mut http_times: Vec<Vec<Duration>> = vec![Vec::with_capacity(ROUNDS); clients.len()];
    rt.block_on(async {
        for round in 0..ROUNDS + ROUNDS / 10 {
            let warm = round >= ROUNDS / 10;
            for step in 0..headers.len() {
                let index = (round + step) % headers.len();
                let header = &headers[index].1;
                let started = Instant::now();
                let elapsed = if index == 0 {
                    for _ in 0..BATCH {
                        let _ = black_box(check(header));
                    }
                    started.elapsed() / BATCH
                } else {
                    let _ = black_box(check(header));
                    started.elapsed()
                };
                if warm {
                    token_times[index].push(elapsed);
                }
            }
            for step in 0..clients.len() {
                let index = (round + step) % clients.len();
                let client = &mut clients[index].1;
                let started = Instant::now();
                black_box(client.call().await);
                if warm {
                    http_times[index].push(started.elapsed());
                }
            }
        }
    });
    println!();
    println!("side by side: {ROUNDS} rounds (median, p99, overhead and ratio to the first row)");
    let header_names = headers.iter().map(|(name, _)| *name).collect();
    let client_names = clients.iter().map(|(name, _)| *name).collect();
    report("token", header_names, token_times);
    report("http", client_names, http_times);
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let mut fixture = Fixture::start();
    token_check(&mut criterion, &fixture);
    http_call(&mut criterion, &mut fixture);
    criterion.final_summary();
    // Not when criterion only tests or lists the benches, or runs some of them.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let some = args
        .iter()
        .any(|arg| !arg.starts_with('-') || arg == "--test" || arg == "--list");
    if !some {
        side_by_side(&mut fixture);
    }
    fixture.stop();
}
