//! What the HTTP front leaves in a request's HTTP parts for the server (rmcp hands them on in
//! the request's extensions): the caller's principal, the client's address, and where the
//! request came from (trace context, session, protocol).

use std::net::SocketAddr;

use crate::auth::Principal;

/// The session header of the 2025-11-25 streamable HTTP transport.
pub(in crate::mcp) const SESSION_HEADER: &str = "mcp-session-id";

/// The caller the front put in a request's HTTP parts, which rmcp hands to the handler.
pub(in crate::mcp) fn principal_of(extensions: &rmcp::model::Extensions) -> Option<Principal> {
    extensions
        .get::<hyper::http::request::Parts>()?
        .extensions
        .get::<Principal>()
        .cloned()
}

/// The address of the client at the other end of an HTTP connection, carried in each of
/// its requests' extensions.
#[derive(Debug, Clone, Copy)]
pub(in crate::mcp) struct ClientAddress(pub(in crate::mcp) SocketAddr);

/// Where a request came from, read from its HTTP parts (carried in its extensions): the
/// trace context of its headers, its session, protocol and client address.
pub(in crate::mcp) fn origin_of(extensions: &rmcp::model::Extensions) -> crate::telemetry::Origin {
    match extensions.get::<hyper::http::request::Parts>() {
        Some(parts) => origin_of_parts(parts),
        None => crate::telemetry::Origin::default(),
    }
}

/// Where a request came from, read from its HTTP parts.
pub(in crate::mcp) fn origin_of_parts(
    parts: &hyper::http::request::Parts,
) -> crate::telemetry::Origin {
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    crate::telemetry::Origin {
        headers: crate::telemetry::TraceContext::from_headers(header),
        session: header(SESSION_HEADER),
        protocol: header("mcp-protocol-version"),
        client: parts
            .extensions
            .get::<ClientAddress>()
            .map(|address| address.0.ip().to_string()),
    }
}
