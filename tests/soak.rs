//! A short soak of the shop over streamable HTTP, with the driver the `soak` bench runs for
//! minutes (`afd_bench::soak`): concurrent sessions mixing discover, detail, call, batch,
//! pipe and context enter/exit, every answer checked against its request; a flood of
//! `initialize` beyond the session bound, refused with 503 and an error naming the limit;
//! and idle sessions that expire, freeing their places.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use afd_bench::soak::{self, Plan, Raw};
use afd_runtime::mcp::HttpOptions;

const MAX_SESSIONS: usize = 8;
const IDLE: Duration = Duration::from_secs(2);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shop_holds_concurrent_sessions_bounds_them_and_expires_idle_ones() {
    let addr: SocketAddr = "127.0.0.1:0".parse().expect("an address");
    let options = HttpOptions::new(addr)
        .max_sessions(MAX_SESSIONS)
        .session_idle_timeout(IDLE);
    let handle = soak::shop_server()
        .expect("the shop server builds")
        .bind_http(options)
        .await
        .expect("binds a loopback port");
    let url = handle.url();

    // Load: six sessions, each closed and reopened after two cycles.
    let report = soak::drive(&Plan {
        url: url.clone(),
        sessions: 6,
        duration: Duration::from_secs(3),
        cycles_per_session: 2,
    })
    .await
    .expect("the sessions ran");
    assert_eq!(report.failures, 0, "{:#?}", report.examples);
    assert!(report.ok > 0);
    assert!(
        report.sessions_opened > 6,
        "sessions were reopened: {}",
        report.sessions_opened
    );
    for kind in [
        "discover",
        "detail",
        "call",
        "batch",
        "pipe",
        "context enter",
        "context exit",
        soak::SESSION_OPEN,
    ] {
        assert!(report.latencies.contains_key(kind), "no {kind} was sent");
    }

    // Every session the load opened was closed (DELETE), so the whole bound is free: a
    // flood of more initialize requests than it allows opens exactly the bound.
    let raw = Arc::new(Raw::new(&url));
    let flood = soak::flood(&raw, MAX_SESSIONS as u64 + 4)
        .await
        .expect("the flood ran");
    assert!(flood.unexpected.is_empty(), "{:?}", flood.unexpected);
    assert_eq!(flood.opened.len(), MAX_SESSIONS);
    assert_eq!(flood.refused, 4);
    let message = flood.message.expect("a refusal says why");
    assert!(
        message.contains(&format!("the limit is {MAX_SESSIONS}")) && message.contains("DELETE"),
        "{message}"
    );
    assert!(flood.retry_after.is_some(), "a refusal says when to retry");

    // Closing one session frees one place.
    let deleted = raw.delete(&flood.opened[0]).await.expect("DELETE");
    assert!((200..300).contains(&deleted), "DELETE answered {deleted}");
    let again = soak::flood(&raw, 2).await.expect("a second flood");
    assert_eq!((again.opened.len(), again.refused), (1, 1), "{again:?}");

    // Left idle, the sessions expire: requests on them are answered 404, and new sessions
    // open again.
    tokio::time::sleep(IDLE + Duration::from_secs(2)).await;
    for session in flood.opened.iter().skip(1).chain(&again.opened) {
        let answer = raw
            .list(session)
            .await
            .expect("a request on an expired session");
        assert_eq!(answer.status, 404, "{session}: {answer:?}");
    }
    let fresh = soak::flood(&raw, 1).await.expect("a session after expiry");
    assert_eq!(fresh.opened.len(), 1, "{fresh:?}");
    let listed = raw.list(&fresh.opened[0]).await.expect("tools/list");
    assert_eq!(listed.status, 200, "{listed:?}");
    assert_eq!(
        listed.message.expect("a tools/list answer")["result"]["tools"][0]["name"],
        "afd-discover"
    );
    handle.shutdown().await;
}

/// Mixed reads and writes at 64 in flight against the shop's store on a file (reads inline
/// on the read connections, writes on the blocking pool through the one writer): every call answers
/// with success, and the stock moved by exactly the restocks that succeeded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_reads_and_writes_keep_the_shop_consistent() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report =
        afd_bench::mixed::run(&dir.path().join("shop.sqlite3"), 64, Duration::from_secs(3))
            .await
            .expect("the soak runs");
    assert_eq!(report.failures, 0, "{:#?}", report.examples);
    assert!(report.reads > 0 && report.writes > 0, "{report:?}");
    assert!(report.consistent(), "{report:?}");
}
