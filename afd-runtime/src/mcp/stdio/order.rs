//! Keeping a call's notifications before its response: the front writes the response
//! itself, while the notifications the call sent went out through rmcp's side of the pipe.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;

use tokio::io::{AsyncRead, AsyncWrite};

/// What keeps a call's notifications (sent by rmcp) before its response (written by the
/// front): how many bytes rmcp has written into its side of the pipe, and how many the
/// copy has passed on to the client.
#[derive(Debug)]
pub(in crate::mcp) struct Order {
    written: AtomicU64,
    copied: tokio::sync::watch::Sender<u64>,
}

impl Order {
    pub(in crate::mcp) fn new() -> Self {
        Order {
            written: AtomicU64::new(0),
            copied: tokio::sync::watch::Sender::new(0),
        }
    }

    /// Notes that the copy passed on `bytes` more of rmcp's output.
    pub(in crate::mcp) fn copied(&self, bytes: usize) {
        self.copied.send_modify(|copied| *copied += bytes as u64);
    }

    /// Notes that the copy has ended: nothing more will be passed on, so a call waiting for
    /// its notifications must not wait for ever.
    pub(in crate::mcp) fn ended(&self) {
        self.copied.send_replace(u64::MAX);
    }

    /// Waits until everything rmcp wrote so far (every notification the call awaited) has
    /// reached the client.
    pub(in crate::mcp) async fn passed_on(&self) {
        let written = self.written.load(Ordering::Acquire);
        let mut copied = self.copied.subscribe();
        // The sender lives as long as `self`: `wait_for` cannot fail here.
        let _ = copied.wait_for(|copied| *copied >= written).await;
    }
}

/// rmcp's side of the pipe, counting what rmcp writes.
pub(in crate::mcp) struct Counted<S> {
    inner: S,
    order: Arc<Order>,
}

impl<S> Counted<S> {
    pub(in crate::mcp) fn new(inner: S, order: Arc<Order>) -> Self {
        Counted { inner, order }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = written {
            self.order.written.fetch_add(n as u64, Ordering::Release);
        }
        written
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
