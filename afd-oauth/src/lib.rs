//! OAuth 2.1 for MCP clients, as the MCP authorization specification describes the
//! client's part: `afd` and `afd-gateway` use it to reach servers that require tokens.
#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod authorized;
pub mod challenge;
pub mod discovery;
mod error;
mod http;
mod loopback;
pub mod pkce;
mod sign_in;
mod source;
pub mod store;
pub mod token;

pub use authorized::Authorized;
pub use challenge::Challenge;
pub use error::{OAuthError, Secret, find_oauth_error};
pub use http::client;
pub use loopback::Loopback;
pub use sign_in::{KeptSignIn, PendingSignIn, Session, SignIn};
pub use source::{ClientCredentials, ClientCredentialsConfig, StaticToken, TokenSource};
pub use store::FileStore;
