//! Usage statistics: recording, next-command prediction, persistence across restarts,
//! degradation when the store cannot be opened, and concurrent recording.

use std::fs;
use std::thread;
use std::time::{Duration, SystemTime};

use afd_runtime::MetaTools;
use afd_runtime::usage::{SuggestionSource, UsageStats};

/// A scratch directory of this test's own, removed when the test ends.
fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("afd-usage-test-{name}-"))
        .tempdir()
        .unwrap()
}

fn at(seconds: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_750_000_000 + seconds)
}

/// Three agents list todos; two then complete one, one deletes one.
fn record_workflows(usage: &UsageStats) {
    for (i, next) in ["todo-complete", "todo-delete", "todo-complete"]
        .into_iter()
        .enumerate()
    {
        let session = format!("agent-{i}");
        usage.record(&session, "todo-list", at(10 * i as u64), true);
        usage.record(&session, next, at(10 * i as u64 + 1), true);
    }
}

#[test]
fn the_most_frequent_follower_ranks_first() {
    let usage = UsageStats::in_memory();
    record_workflows(&usage);
    usage.record("new-agent", "todo-list", at(100), true);
    let next = usage.suggested_next("new-agent", 5);
    let names: Vec<&str> = next.iter().map(|s| s.command.as_str()).collect();
    assert_eq!(names, ["todo-complete", "todo-delete"]);
    assert_eq!(next[0].source, SuggestionSource::Global);
    assert_eq!(next[0].count, 2);
    assert!((next[0].probability - 2.0 / 3.0).abs() < 1e-6);
    assert!(next[0].probability > next[1].probability);
    assert_eq!(
        next[0].reason,
        "followed 'todo-list' in 2 of 3 recorded transitions"
    );
    assert!(usage.suggested_next("nobody", 5).is_empty());
    assert_eq!(usage.popularity("todo-list"), 1.0);
    assert!(usage.popularity("todo-delete") < usage.popularity("todo-complete"));
}

#[test]
fn statistics_survive_a_restart() {
    let dir = temp_dir("restart");
    let path = dir.path().join("usage.sqlite3");
    {
        let usage = UsageStats::open(&path);
        assert!(usage.is_persistent());
        assert_eq!(usage.path(), Some(path.as_path()));
        record_workflows(&usage);
        usage.record("agent-0", "todo-list", at(50), false);
        // Dropped without flush(): the last write happens on drop.
    }
    assert!(path.is_file());
    let usage = UsageStats::open(&path);
    assert!(usage.is_persistent());
    let list = usage.stats("todo-list").unwrap();
    assert_eq!((list.calls, list.successes), (4, 3));
    assert_eq!(list.last_used, Some(at(50)));
    assert_eq!(usage.stats("todo-complete").unwrap().calls, 2);
    let next = usage.next_after("todo-list", 5);
    assert_eq!(next[0].command, "todo-complete");
    assert_eq!(next[0].count, 2);
    assert_eq!(next[1].command, "todo-delete");
    assert_eq!(usage.related("todo-list", 5)[0].command, "todo-complete");
    assert_eq!(usage.session_count(), 0, "live sessions are not persisted");

    // A new session after the restart gets the persisted transitions.
    usage.record("after-restart", "todo-list", at(200), true);
    assert_eq!(
        usage.suggested_next("after-restart", 1)[0].command,
        "todo-complete"
    );
    usage.flush().unwrap();
    drop(usage);
    let usage = UsageStats::open(&path);
    assert_eq!(usage.stats("todo-list").unwrap().calls, 5);
    drop(usage);
}

#[test]
fn a_directory_as_the_store_degrades_to_memory() {
    let dir = temp_dir("directory");
    let usage = UsageStats::open(&dir);
    assert!(!usage.is_persistent());
    assert_eq!(usage.path(), None);
    assert!(usage.is_enabled());
    record_workflows(&usage);
    assert_eq!(usage.stats("todo-list").unwrap().calls, 3);
    assert_eq!(usage.flush(), Ok(()));
    drop(usage);
}

#[test]
fn a_file_that_is_not_a_database_degrades_to_memory_and_is_left_alone() {
    let dir = temp_dir("garbage");
    let path = dir.path().join("usage.db");
    let garbage = b"this is not a SQLite database, just some text that is long enough. ".repeat(20);
    fs::write(&path, &garbage).unwrap();
    let usage = UsageStats::open(&path);
    assert!(!usage.is_persistent());
    record_workflows(&usage);
    usage.record("new-agent", "todo-list", at(100), true);
    assert_eq!(
        usage.suggested_next("new-agent", 1)[0].command,
        "todo-complete"
    );
    drop(usage);
    assert_eq!(fs::read(&path).unwrap(), garbage);
}

#[test]
fn a_store_under_a_file_degrades_to_memory() {
    let dir = temp_dir("under-file");
    let file = dir.path().join("plain");
    fs::write(&file, b"x").unwrap();
    let usage = UsageStats::open(file.join("usage.db"));
    assert!(!usage.is_persistent());
    usage.record("s", "a", at(0), true);
    assert_eq!(usage.stats("a").unwrap().calls, 1);
    drop(usage);
}

#[test]
fn disabled_records_nothing() {
    let usage = UsageStats::disabled();
    record_workflows(&usage);
    assert!(!usage.is_enabled());
    assert!(!usage.is_persistent());
    assert_eq!(usage.stats("todo-list"), None);
    assert!(usage.suggested_next("agent-0", 5).is_empty());
    assert!(usage.next_after("todo-list", 5).is_empty());
    assert!(usage.related("todo-list", 5).is_empty());
    assert!(usage.most_used(5).is_empty());
    assert_eq!(usage.popularity("todo-list"), 0.0);
    assert_eq!(usage.last_command("agent-0"), None);

    let off = temp_dir("off");
    let builder_off = UsageStats::builder()
        .path(off.path().join("usage.db"))
        .enabled(false)
        .build();
    builder_off.record("s", "a", at(0), true);
    assert_eq!(builder_off.stats("a"), None);
    assert!(!builder_off.is_persistent());
}

#[test]
fn recording_from_many_threads_loses_nothing() {
    const THREADS: usize = 8;
    const CALLS: usize = 500;
    let dir = temp_dir("threads");
    let path = dir.path().join("usage.db");
    let usage = UsageStats::builder()
        .path(&path)
        .flush_interval(Duration::from_millis(5))
        .build();
    assert!(usage.is_persistent());
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let usage = usage.clone();
            thread::spawn(move || {
                let session = format!("thread-{t}");
                for i in 0..CALLS {
                    let command = if i % 2 == 0 { "todo-list" } else { "todo-get" };
                    usage.record(&session, command, SystemTime::now(), i % 5 != 0);
                    if i % 100 == 0 {
                        let _ = usage.suggested_next(&session, 3);
                        let _ = usage.popularity(command);
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let total = (THREADS * CALLS) as u64;
    let list = usage.stats("todo-list").unwrap();
    let get = usage.stats("todo-get").unwrap();
    assert_eq!(list.calls + get.calls, total);
    assert_eq!(
        list.successes + get.successes,
        total - (THREADS * CALLS / 5) as u64
    );
    let next = usage.next_after("todo-list", 1);
    assert_eq!(next[0].command, "todo-get");
    assert_eq!(next[0].count, (THREADS * CALLS / 2) as u64);
    usage.flush().unwrap();
    drop(usage);

    let reopened = UsageStats::open(&path);
    let list = reopened.stats("todo-list").unwrap();
    let get = reopened.stats("todo-get").unwrap();
    assert_eq!(list.calls + get.calls, total);
    assert_eq!(
        reopened.next_after("todo-list", 1)[0].count,
        (THREADS * CALLS / 2) as u64
    );
    drop(reopened);
}

#[test]
fn two_handles_on_one_file_add_up() {
    let dir = temp_dir("shared");
    let path = dir.path().join("usage.db");
    let first = UsageStats::open(&path);
    let second = UsageStats::open(&path);
    assert!(first.is_persistent() && second.is_persistent());
    first.record("s", "a", at(0), true);
    second.record("t", "a", at(1), true);
    first.flush().unwrap();
    second.flush().unwrap();
    drop(first);
    drop(second);
    let usage = UsageStats::open(&path);
    assert_eq!(usage.stats("a").unwrap().calls, 2);
    drop(usage);
}

/// Through a dispatcher: every call is recorded, afd-discover predicts the next command
/// from the session's last call, and the prediction survives a restart.
#[tokio::test]
async fn discover_suggests_the_next_command_and_remembers_it_across_a_restart() {
    use afd_examples::todo::{self, TodoStore};
    use afd_runtime::{CommandContext, Dispatcher};
    use serde_json::json;

    let dir = temp_dir("dispatch");
    let file = dir.path().join("usage.sqlite3");
    let dispatcher = |usage: UsageStats| {
        Dispatcher::builder(todo::registry())
            .usage(usage)
            .build()
            .unwrap()
    };
    let store = todo::context(TodoStore::in_memory().unwrap());
    {
        let d = dispatcher(UsageStats::open(&file));
        assert!(d.usage().is_persistent());
        for round in 0..3 {
            let session = d.open_session().await.unwrap();
            let ctx: CommandContext = store.clone().with_session(session.as_str());
            let created = d
                .call(
                    "todo-create",
                    json!({"title": format!("t{round}")}),
                    ctx.clone(),
                )
                .await;
            let id = created.data.unwrap()["id"].clone();
            d.call("todo-toggle", json!({"id": id}), ctx.clone()).await;
            d.call("todo-list", json!({}), ctx).await;
        }
        // A typo is not a command: not recorded.
        d.call("todo-craete", json!({}), store.clone()).await;
        assert_eq!(d.usage().stats("todo-create").unwrap().calls, 3);
        assert!(d.usage().stats("todo-craete").is_none());
    } // dropped: the writer flushes

    let d = dispatcher(UsageStats::open(&file));
    let fresh = d.open_session().await.unwrap();
    let ctx = store.clone().with_session(fresh.as_str());
    d.call("todo-create", json!({"title": "after restart"}), ctx)
        .await;
    let found = d.discover(json!({"session": fresh})).await;
    let next = found.data.unwrap()["suggestedNext"].clone();
    assert_eq!(next[0]["command"], "todo-toggle", "{next}");
    assert_eq!(next[0]["source"], "global");
    // Without a session there is nothing to predict from.
    let anonymous = d.discover(json!({})).await.data.unwrap();
    assert!(anonymous.get("suggestedNext").is_none());
}
