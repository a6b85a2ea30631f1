//! The operator's side of an HTTP listener: the `/healthz` and `/readyz` answers, and the
//! response bodies a drain watches (an answer counted in flight until it is sent, a stream
//! that closes when the drain begins).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, SizeHint};
use hyper::{Method, Response, StatusCode};
use tokio_util::sync::WaitForCancellationFutureOwned;

use crate::ops::{Readiness, Work};

/// A response body.
pub(super) type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// The liveness path: 200 while the process answers.
pub(super) const HEALTHZ: &str = "/healthz";
/// The readiness path: 200 when every check passes and the server is not draining.
pub(super) const READYZ: &str = "/readyz";

/// The answer to `/healthz` or `/readyz`, or `None` for another path.
pub(super) async fn probe(
    method: &Method,
    path: &str,
    readiness: &Readiness,
) -> Option<Response<Body>> {
    if path != HEALTHZ && path != READYZ {
        return None;
    }
    if method != Method::GET && method != Method::HEAD {
        let mut response = Response::new(Full::new(Bytes::from_static(b"use GET")).boxed());
        *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        return Some(response);
    }
    let (status, body) = if path == HEALTHZ {
        (StatusCode::OK, serde_json::json!({"status": "ok"}))
    } else {
        let report = readiness.report().await;
        let status = if report.is_ready() {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        (status, report.to_json())
    };
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    headers.insert(
        hyper::header::CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-store"),
    );
    Some(response)
}

/// A body that keeps its request counted in flight until it has been sent (or the client
/// went away), so that a drain waits for the answer, not only for the handler.
pub(super) fn counted(body: Body, work: Work) -> Body {
    Counted { body, _work: work }.boxed()
}

struct Counted {
    body: Body,
    _work: Work,
}

impl hyper::body::Body for Counted {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A body that ends when `closed` completes: a stream of server messages (no answer to
/// wait for) closed when the drain begins.
pub(super) fn closing(body: Body, closed: WaitForCancellationFutureOwned) -> Body {
    Closing {
        body,
        closed: Box::pin(closed),
        ended: false,
    }
    .boxed()
}

struct Closing {
    body: Body,
    closed: Pin<Box<WaitForCancellationFutureOwned>>,
    ended: bool,
}

impl hyper::body::Body for Closing {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.ended {
            return Poll::Ready(None);
        }
        if self.closed.as_mut().poll(cx).is_ready() {
            self.ended = true;
            return Poll::Ready(None);
        }
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.body.is_end_stream()
    }
}
