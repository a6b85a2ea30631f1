//! Usage statistics in PostgreSQL (feature `postgres`): two `UsageStats` on one database
//! stand for two replicas. Each writes its calls in batches off the call path and reads the
//! tables back, so both suggest from both replicas' traffic; a restart finds the counts
//! again; a database that cannot be reached at start leaves the statistics in memory; a
//! write whose `COMMIT` went through but whose answer was lost is not counted twice.
//!
//! Needs `AFD_TEST_POSTGRES_URL` (`.ci/run` starts a PostgreSQL on loopback). The command
//! names carry a prefix unique to the run, so runs sharing a database do not mix. By hand:
//!
//! ```sh
//! AFD_TEST_POSTGRES_URL=postgres://afd:afd@127.0.0.1:5432/afd \
//!     cargo test -p afd-tests --test usage_postgres
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use afd_runtime::usage::UsageStats;
use afd_tests::services::{free_port, postgres_url};

fn replica(url: &str) -> UsageStats {
    UsageStats::builder()
        .location(url)
        .unwrap()
        .flush_interval(Duration::from_millis(50))
        .build()
}

fn prefix() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("t{}x{nanos}", std::process::id())
}

#[test]
fn two_replicas_suggest_from_each_others_traffic() {
    let Some(url) = postgres_url() else { return };
    let p = prefix();
    let (list, cancel, refund) = (
        format!("{p}-order-list"),
        format!("{p}-order-cancel"),
        format!("{p}-payment-refund"),
    );
    let a = replica(&url);
    let b = replica(&url);
    assert!(a.is_persistent() && b.is_persistent());
    assert!(
        a.database().unwrap().contains(":***@"),
        "{:?}",
        a.database()
    );
    for round in 0..3 {
        let session = format!("{p}-a{round}");
        a.record_now(&session, &list, true);
        a.record_now(&session, &cancel, true);
    }
    for round in 0..2 {
        let session = format!("{p}-b{round}");
        b.record_now(&session, &list, true);
        b.record_now(&session, &refund, round == 0);
    }
    a.flush().unwrap();
    b.flush().unwrap();
    // A reads back what B wrote at its next write.
    a.flush().unwrap();
    let stats = a.stats(&list).unwrap();
    assert_eq!((stats.calls, stats.successes), (5, 5));
    let refunds = a.stats(&refund).unwrap();
    assert_eq!((refunds.calls, refunds.successes), (2, 1));
    let next: Vec<(String, u64)> = a
        .next_after(&list, 5)
        .into_iter()
        .map(|s| (s.command, s.count))
        .collect();
    assert_eq!(next, vec![(cancel.clone(), 3), (refund.clone(), 2)]);
    // And B, from A's.
    b.flush().unwrap();
    assert_eq!(b.next_after(&list, 1)[0].command, cancel);
    assert_eq!(b.related(&cancel, 5)[0].command, list);
    // A call in a session that began on A, continued on B: B suggests from all of it.
    a.record_now(&format!("{p}-moved"), &list, true);
    a.flush().unwrap();
    b.flush().unwrap();
    b.record_now(&format!("{p}-fresh"), &list, true);
    assert_eq!(
        b.suggested_next(&format!("{p}-fresh"), 1)[0].command,
        cancel
    );
    drop(a);
    drop(b);
    // A restart finds the counts again.
    let restarted = replica(&url);
    assert_eq!(restarted.stats(&list).unwrap().calls, 7);
}

#[test]
fn an_unreachable_database_leaves_the_statistics_in_memory() {
    let url = format!("postgres://afd:secret@127.0.0.1:{}/afd", free_port());
    let usage = replica(&url);
    assert!(!usage.is_persistent());
    assert!(usage.is_enabled());
    usage.record_now("s", "order-list", true);
    assert_eq!(usage.stats("order-list").unwrap().calls, 1);
}

#[test]
fn a_location_of_another_kind_is_refused_in_words() {
    let error = UsageStats::builder().location("mysql://db").unwrap_err();
    assert!(error.contains("postgres://"), "{error}");
}

/// A TCP proxy in front of PostgreSQL that, once armed, passes the next `COMMIT` on and then
/// closes the connection instead of passing on the answer: the database has committed, the
/// client cannot know it.
struct LostCommitProxy {
    url: String,
    armed: Arc<AtomicBool>,
    eaten: Arc<AtomicUsize>,
    _runtime: tokio::runtime::Runtime,
}

impl LostCommitProxy {
    fn start(url: &str) -> Self {
        // postgres://user:password@host:port/database
        let (head, rest) = url.split_once('@').expect("a URL with credentials");
        let (server, database) = rest.split_once('/').expect("a URL with a database");
        let server = server.to_owned();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let armed = Arc::new(AtomicBool::new(false));
        let eaten = Arc::new(AtomicUsize::new(0));
        let (armed2, eaten2) = (armed.clone(), eaten.clone());
        runtime.spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let server = server.clone();
                let (armed, eaten) = (armed2.clone(), eaten2.clone());
                tokio::spawn(async move {
                    let Ok(upstream) = TcpStream::connect(&server).await else {
                        return;
                    };
                    relay(client, upstream, armed, eaten).await;
                });
            }
        });
        LostCommitProxy {
            url: format!("{head}@127.0.0.1:{port}/{database}"),
            armed,
            eaten,
            _runtime: runtime,
        }
    }

    fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }
}

/// Copies bytes both ways until either side closes, or until the answer to an armed
/// `COMMIT` arrives (dropped, with both connections).
async fn relay(
    client: TcpStream,
    upstream: TcpStream,
    armed: Arc<AtomicBool>,
    eaten: Arc<AtomicUsize>,
) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut upstream_read, mut upstream_write) = upstream.into_split();
    let eat_answer = Arc::new(AtomicBool::new(false));
    let eat = eat_answer.clone();
    let to_server = async move {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let n = match client_read.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            let chunk = &buffer[..n];
            if chunk.windows(6).any(|w| w == b"COMMIT") && armed.swap(false, Ordering::SeqCst) {
                eat.store(true, Ordering::SeqCst);
            }
            if upstream_write.write_all(chunk).await.is_err() {
                return;
            }
        }
    };
    let to_client = async move {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let n = match upstream_read.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if eat_answer.load(Ordering::SeqCst) {
                eaten.fetch_add(1, Ordering::SeqCst);
                return;
            }
            if client_write.write_all(&buffer[..n]).await.is_err() {
                return;
            }
        }
    };
    tokio::select! {
        () = to_server => {}
        () = to_client => {}
    }
}

#[test]
fn a_batch_whose_commit_answer_was_lost_is_not_counted_twice() {
    let Some(url) = postgres_url() else { return };
    let p = prefix();
    let list = format!("{p}-order-list");
    let proxy = LostCommitProxy::start(&url);
    // Rounds only when flushed.
    let usage = UsageStats::builder()
        .location(&proxy.url)
        .unwrap()
        .flush_interval(Duration::from_secs(3600))
        .build();
    assert!(usage.is_persistent());
    for round in 0..3 {
        usage.record_now(&format!("{p}-s{round}"), &list, true);
    }
    proxy.arm();
    // The database commits the three calls; the writer hears nothing and keeps the batch.
    assert!(usage.flush().is_err());
    assert_eq!(proxy.eaten.load(Ordering::SeqCst), 1);
    // Calls made meanwhile wait for the unsettled batch.
    usage.record_now(&format!("{p}-s3"), &list, false);
    // The batch again (found recorded, not added), then the newer call.
    usage.flush().unwrap();
    usage.flush().unwrap();
    let stats = usage.stats(&list).unwrap();
    assert_eq!((stats.calls, stats.successes), (4, 3));
    drop(usage);
    // What the database holds, read without the proxy.
    let fresh = replica(&url);
    let stats = fresh.stats(&list).unwrap();
    assert_eq!((stats.calls, stats.successes), (4, 3));
}
