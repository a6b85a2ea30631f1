//! The OAuth resource server's reading of the `Authorization` header and its bearer token
//! (`afd_runtime::mcp::TokenVerifier::check`, feature `oauth`: the scheme, the token's
//! characters, a JWT's header, its algorithm, the key its `kid` names, the signature), and
//! the scope parser (`afd_runtime::auth::Scopes::parse`).
//!
//! The verifier trusts a fixed key set of two public keys (EC P-256 and RSA 2048) whose
//! private halves were thrown away when they were made, and fetches nothing. So no input
//! can carry a valid signature: every header is refused (missing or invalid, never
//! "unavailable": nothing is introspected), and never with a panic.
//!
//! Each input is checked twice: as the raw header value, and as a bearer JWT built from it
//! (its lines, base64url-encoded: the JOSE header JSON, the payload, the signature bytes),
//! so that mutations of JSON reach the JWT header parser, the key lookup and the signature
//! check. The input as text (lossy UTF-8) is also a `scope` claim: every scope parsed is a
//! scope token, a word of the text, covered by the set, and the set's written form parses
//! back to the same set.

use std::sync::{Arc, LazyLock};

use crate::block_on;
use afd_runtime::auth::{Scopes, is_scope_token};
use afd_runtime::mcp::{OAuth, TokenRejection, TokenVerifier};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

const ISSUER: &str = "https://auth.example.com";
const AUDIENCE: &str = "https://mcp.example.com/mcp";

/// TEST KEYS ONLY: the public halves of an EC P-256 key (`fuzz-ec`) and an RSA 2048 key
/// (`fuzz-rsa`) made with `openssl` for this target; their private halves were discarded,
/// so nothing can sign a token these keys verify.
const JWKS: &str = r#"{"keys": [
    {
        "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": "fuzz-ec",
        "x": "fCYkDL5FldDJuSjTVvtqL9OqaQJEATS1uyU4eLjlYbg",
        "y": "Z60w5bbvWynwGmDCZWbzkoJflSapZe4e2xqXRrjHBMg"
    },
    {
        "kty": "RSA", "use": "sig", "alg": "RS256", "kid": "fuzz-rsa", "e": "AQAB",
        "n": "oYwefmKTynUWS6-ZV_b75WCjeJDyVw7axVBSXHYc8b4WibTzJy2Fj4PTN6gKfj5_Kl6zIt25KeBhRYEm-NBSE66qZGtDexWrUt2zfLULB_MPV6wVKPi2NRpNaK_GQJTZLD3bNkUW7QjBD7a9GwTX5cABnN9RgHNfY-6mfPi9L08H4U97Bm05IBXsJfHRfRhKqMQqC1cht0jhf2tw7zDIP_GPZjRgUFlehB94I_k0lNRlBgrjHIBnJbA4xAtPYSIXldEBP12tGSNegx5u2hbz130iojfHpl3uoMFjFhC3dkI_tBSlU9uUnEMPxFmAJj5TTbIjQ4GEvyPLnYI5-n_C4w"
    }
]}"#;

/// The verifier, started once on the shared current-thread runtime.
static VERIFIER: LazyLock<Arc<TokenVerifier>> = LazyLock::new(|| {
    let oauth = OAuth::new(ISSUER, AUDIENCE)
        .jwks_json(JWKS)
        .expect("the test key set is a JWKS");
    block_on(async { TokenVerifier::start(oauth) })
});

/// Checks one header value: refused, as missing or invalid with a description.
fn refused(verifier: &TokenVerifier, header: &[u8]) {
    match block_on(verifier.check(Some(header))) {
        Ok(principal) => {
            assert!(
                !principal.subject().is_empty(),
                "accepted with an empty subject"
            );
            panic!(
                "accepted a header no key can have signed: {principal:?} from {:?}",
                String::from_utf8_lossy(header)
            );
        }
        Err(TokenRejection::Missing) => {}
        Err(TokenRejection::Invalid(why)) => assert!(!why.is_empty()),
        Err(other) => panic!("refused as {other:?}, with nothing to introspect"),
    }
}

/// `Bearer h.p.s`: the input's first three lines, base64url-encoded.
fn as_jwt(data: &[u8]) -> Vec<u8> {
    let mut parts = data.splitn(3, |&b| b == b'\n');
    let mut token = b"Bearer ".to_vec();
    for index in 0..3 {
        if index > 0 {
            token.push(b'.');
        }
        let part = parts.next().unwrap_or_default();
        token.extend_from_slice(URL_SAFE_NO_PAD.encode(part).as_bytes());
    }
    token
}

/// Checks one input: panics on anything this target forbids.
pub fn run(data: &[u8]) {
    let verifier: &TokenVerifier = &VERIFIER;
    refused(verifier, data);
    refused(verifier, &as_jwt(data));

    let text = String::from_utf8_lossy(data);
    let scopes = Scopes::parse(&text);
    assert!(scopes.len() <= text.split(' ').count());
    for scope in scopes.iter() {
        assert!(is_scope_token(scope), "{scope:?} is not a scope token");
        assert!(text.split(' ').any(|word| word == scope), "{scope:?}");
        assert!(scopes.covers(scope), "{scope:?} is not covered by {scopes}");
    }
    assert_eq!(Scopes::parse(&scopes.to_string()), scopes);
}
