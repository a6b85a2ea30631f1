//! The floor over HTTP: a minimal hyper 1 server answering every POST to /mcp with 200
//! `application/json`, the fixed result carrying the request's id (202 for a notification).
//!
//!     floor-http ADDR        e.g. floor-http 127.0.0.1:3000

#[path = "../answer.rs"]
mod answer;

use std::{error::Error, net::SocketAddr};

use http_body_util::{BodyExt, Full};
use hyper::{
    Method, Request, Response, StatusCode,
    body::{Bytes, Incoming},
    header,
    server::conn::http1,
    service::service_fn,
};
use hyper_util::rt::TokioIo;

async fn serve(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let status = match (request.method(), request.uri().path()) {
        (&Method::POST, "/mcp") => StatusCode::OK,
        (_, "/mcp") => StatusCode::METHOD_NOT_ALLOWED,
        _ => StatusCode::NOT_FOUND,
    };
    let response = Response::builder();
    if status != StatusCode::OK {
        return Ok(response.status(status).body(Full::default()).unwrap());
    }
    let body = request.into_body().collect().await?.to_bytes();
    Ok(match answer::answer(&body) {
        Some(json) => response
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(json))),
        None => response.status(StatusCode::ACCEPTED).body(Full::default()),
    }
    .unwrap())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error + Send + Sync>> {
    let addr: SocketAddr = std::env::args()
        .nth(1)
        .ok_or("usage: floor-http ADDR")?
        .parse()?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("floor: HTTP on http://{}/mcp", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        tokio::spawn(async move {
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service_fn(serve))
                .await;
        });
    }
}
