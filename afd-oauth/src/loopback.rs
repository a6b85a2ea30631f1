//! The redirect of a sign-in from a command line: a listener on the loopback interface
//! that the browser comes back to (RFC 8252 section 7.3), taking the one redirect and
//! telling the person they can close the page.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use crate::error::OAuthError;

/// The path the browser is sent back to.
const PATH: &str = "/callback";

/// The longest request line and headers read from the browser.
const MAX_REQUEST: usize = 16 * 1024;

const DONE_PAGE: &str = "<!doctype html><meta charset=utf-8><title>Signed in</title>\
<p>The sign-in reached afd. You can close this page and go back to the terminal.</p>";

/// A loopback listener for one redirect.
#[derive(Debug)]
pub struct Loopback {
    listener: TcpListener,
    redirect_uri: String,
}

impl Loopback {
    /// Listens on `127.0.0.1` (`port` 0: a free port).
    ///
    /// # Errors
    ///
    /// The port cannot be bound.
    pub async fn bind(port: u16) -> Result<Loopback, OAuthError> {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| OAuthError::Config(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| OAuthError::Config(e.to_string()))?
            .port();
        Ok(Loopback {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}{PATH}"),
        })
    }

    /// The redirect URI to register and send.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Waits for the browser's redirect and gives its whole URL. Other requests (a
    /// favicon) are answered 404 and the wait goes on.
    ///
    /// # Errors
    ///
    /// Nothing came within `timeout`.
    pub async fn redirect(self, timeout: Duration) -> Result<String, OAuthError> {
        tokio::time::timeout(timeout, self.accept())
            .await
            .map_err(|_| {
                OAuthError::Authorization(format!(
                    "the browser did not come back within {} s",
                    timeout.as_secs()
                ))
            })
    }

    /// Each connection is read on its own task, so one that sends nothing (a browser's
    /// speculative connection) holds up no other; the first redirect wins.
    async fn accept(&self) -> String {
        let (found, mut redirects) = tokio::sync::mpsc::channel::<String>(1);
        loop {
            tokio::select! {
                Some(target) = redirects.recv() => {
                    let base = self.redirect_uri.trim_end_matches(PATH);
                    return format!("{base}{target}");
                }
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        tokio::spawn(answer(stream, found.clone()));
                    }
                    // Out of descriptors, say: wait a little rather than spin.
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                },
            }
        }
    }
}

/// Reads one request; a redirect's target goes to `found`, anything else is answered 404.
async fn answer(mut stream: tokio::net::TcpStream, found: tokio::sync::mpsc::Sender<String>) {
    let mut request = Vec::new();
    let mut buffer = [0u8; 2048];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < MAX_REQUEST {
        match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer)).await {
            Ok(Ok(n)) if n > 0 => request.extend_from_slice(&buffer[..n]),
            _ => break,
        }
    }
    let line = String::from_utf8_lossy(&request);
    let target = line
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("GET "))
        .and_then(|rest| rest.split(' ').next())
        .filter(|target| target.split('?').next() == Some(PATH))
        .map(str::to_owned);
    let (status, body) = match target {
        Some(_) => ("200 OK", DONE_PAGE),
        None => ("404 Not Found", "not found"),
    };
    let answer = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes()).await;
    let _ = stream.shutdown().await;
    if let Some(target) = target {
        let _ = found.send(target).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn takes_the_redirect_and_answers_other_requests_404() {
        let loopback = Loopback::bind(0).await.unwrap();
        let uri = loopback.redirect_uri().to_owned();
        let base = uri.trim_end_matches(PATH).to_owned();
        let browser = tokio::spawn(async move {
            // A connection that never sends a request holds up nothing.
            let _idle = tokio::net::TcpStream::connect(base.trim_start_matches("http://"))
                .await
                .unwrap();
            let http = reqwest::Client::new();
            let favicon = http
                .get(format!("{base}/favicon.ico"))
                .send()
                .await
                .unwrap();
            assert_eq!(favicon.status(), 404);
            let page = http
                .get(format!("{uri}?code=c&state=s"))
                .send()
                .await
                .unwrap();
            assert_eq!(page.status(), 200);
            assert!(page.text().await.unwrap().contains("close this page"));
        });
        let redirect = loopback.redirect(Duration::from_secs(10)).await.unwrap();
        assert!(redirect.ends_with("/callback?code=c&state=s"), "{redirect}");
        browser.await.unwrap();
        let quiet = Loopback::bind(0).await.unwrap();
        let error = quiet.redirect(Duration::from_millis(50)).await.unwrap_err();
        assert_eq!(error.code(), "OAUTH_AUTHORIZATION_FAILED");
    }
}
