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

use crate::metrics::{self, Transport};
use crate::ops::{Readiness, Work};

/// A response body.
pub(in crate::mcp) type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// The liveness path: 200 while the process answers.
pub(in crate::mcp) const HEALTHZ: &str = "/healthz";
/// The readiness path: 200 when every check passes and the server is not draining.
pub(in crate::mcp) const READYZ: &str = "/readyz";

/// The answer to `/healthz` or `/readyz`, or `None` for another path.
pub(in crate::mcp) async fn probe(
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
        // Boxed: every request awaits this function, few of them this step.
        let report = Box::pin(readiness.report()).await;
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
pub(in crate::mcp) fn counted(body: Body, work: Work) -> Body {
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
pub(in crate::mcp) fn closing(body: Body, closed: WaitForCancellationFutureOwned) -> Body {
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

/// When each HTTP session opened, for `mcp.server.session.duration` and
/// `afd.sessions.active` (kept only while metrics are installed).
#[derive(Default)]
pub(in crate::mcp) struct SessionClock {
    opened: std::sync::Mutex<std::collections::HashMap<String, std::time::Instant>>,
}

impl SessionClock {
    fn opened(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, std::time::Instant>> {
        self.opened
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A session opened.
    pub(in crate::mcp) fn open(&self, id: &str) {
        if !metrics::is_installed() {
            return;
        }
        if self
            .opened()
            .insert(id.to_owned(), std::time::Instant::now())
            .is_none()
        {
            metrics::session_opened(Transport::Tcp);
        }
    }

    /// A session ended: closed by its client (`why` none), expired, or the server stopped.
    pub(in crate::mcp) fn close(&self, id: &str, why: Option<&'static str>) {
        if let Some(opened) = self.opened().remove(id) {
            metrics::session_closed(Transport::Tcp, opened.elapsed().as_secs_f64(), why);
        }
    }

    /// Ends the sessions no longer in `open` (the session manager dropped them idle).
    pub(in crate::mcp) fn sweep(&self, open: &std::collections::HashSet<std::sync::Arc<str>>) {
        let gone: Vec<String> = self
            .opened()
            .keys()
            .filter(|id| !open.contains(id.as_str()))
            .cloned()
            .collect();
        for id in gone {
            self.close(&id, Some("expired"));
        }
    }

    /// Ends every session (the endpoint stopped).
    pub(in crate::mcp) fn close_all(&self) {
        let all: Vec<String> = self.opened().keys().cloned().collect();
        for id in all {
            self.close(&id, Some("server_shutdown"));
        }
    }
}

/// The operator's listener (feature `metrics`): `GET /metrics` (Prometheus text),
/// `/healthz` and `/readyz`, on an address of its own so that the MCP endpoint's checks
/// (`Host`, tokens) and its port stay as they are.
#[cfg(feature = "metrics")]
#[derive(Debug)]
pub struct MetricsListener {
    local_addr: std::net::SocketAddr,
    stop: tokio_util::sync::CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

#[cfg(feature = "metrics")]
impl MetricsListener {
    /// Binds `addr` and serves `metrics` and `readiness` there until
    /// [`shutdown`](MetricsListener::shutdown).
    ///
    /// # Errors
    ///
    /// The address cannot be bound.
    pub async fn bind(
        addr: std::net::SocketAddr,
        metrics: crate::metrics::Prometheus,
        readiness: Readiness,
    ) -> std::io::Result<MetricsListener> {
        use hyper::body::Incoming;
        use hyper_util::rt::TokioIo;

        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        tracing::info!(%local_addr, "serving metrics at /metrics, health at /healthz and /readyz");
        let stop = tokio_util::sync::CancellationToken::new();
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            loop {
                let (stream, _) = tokio::select! {
                    () = stopped.cancelled() => break,
                    accepted = listener.accept() => match accepted {
                        Ok(accepted) => accepted,
                        Err(error) => {
                            tracing::warn!(%error, "accept failed");
                            continue;
                        }
                    },
                };
                let (metrics, readiness) = (metrics.clone(), readiness.clone());
                tokio::spawn(async move {
                    let service =
                        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                            let (metrics, readiness) = (metrics.clone(), readiness.clone());
                            async move {
                                Ok::<_, Infallible>(
                                    answer_operator(&request, &metrics, &readiness).await,
                                )
                            }
                        });
                    if let Err(error) = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await
                    {
                        tracing::debug!(%error, "metrics connection ended with an error");
                    }
                });
            }
        });
        Ok(MetricsListener {
            local_addr,
            stop,
            task,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.local_addr
    }

    /// Stops listening.
    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// The operator listener's answer to one request.
#[cfg(feature = "metrics")]
async fn answer_operator(
    request: &hyper::Request<hyper::body::Incoming>,
    metrics: &crate::metrics::Prometheus,
    readiness: &Readiness,
) -> Response<Body> {
    if let Some(response) = probe(request.method(), request.uri().path(), readiness).await {
        return response;
    }
    if request.uri().path() != "/metrics" {
        let mut response = Response::new(Full::new(Bytes::from_static(b"not found")).boxed());
        *response.status_mut() = StatusCode::NOT_FOUND;
        return response;
    }
    let mut response = Response::new(Full::new(Bytes::from(metrics.render())).boxed());
    if let Ok(value) = hyper::header::HeaderValue::from_str(metrics.content_type()) {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}
