//! Usage statistics in PostgreSQL (feature `postgres`): two `UsageStats` on one database
//! stand for two replicas. Each writes its calls in batches off the call path and reads the
//! tables back, so both suggest from both replicas' traffic; a restart finds the counts
//! again; a database that cannot be reached at start leaves the statistics in memory.
//!
//! Needs `AFD_TEST_POSTGRES_URL` (`.ci/run` starts a PostgreSQL on loopback). The command
//! names carry a prefix unique to the run, so runs sharing a database do not mix. By hand:
//!
//! ```sh
//! AFD_TEST_POSTGRES_URL=postgres://afd:afd@127.0.0.1:5432/afd \
//!     cargo test -p afd-tests --test usage_postgres
//! ```

use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
