//! Sessions in Redis (`RedisSessionStore`, feature `redis`): two dispatchers with their own
//! connections stand for two replicas. A context entered through one binds calls on the
//! other; concurrent changes of one session on both lose no write; idle sessions expire by
//! Redis TTL, refreshed on use; with Redis stopped, calls that need the session fail closed
//! with a retryable error, and succeed again once it is back.
//!
//! Needs `AFD_TEST_REDIS_URL` (a Redis on loopback; `.ci/run` starts one) and
//! `redis-server` on `PATH` for a private server the test stops. To run it by hand:
//!
//! ```sh
//! redis-server --daemonize yes --port 6379 --save ""
//! AFD_TEST_REDIS_URL=redis://127.0.0.1:6379 cargo test -p afd-tests --test sessions_redis
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use afd_examples::shop::{self, ShopStore};
use afd_runtime::contexts::{RedisSessionStore, SessionStore};
use afd_runtime::{
    CommandContext, CommandResult, Dispatcher, Registry, SessionConfig, Sessions, codes,
};
use afd_tests::services::{PrivateRedis, redis_url};
use serde_json::{Value, json};

async fn replica(url: &str, config: SessionConfig) -> Dispatcher {
    let store = RedisSessionStore::connect(url, config.get_idle_timeout())
        .await
        .expect("Redis reachable");
    Dispatcher::builder(Registry::global())
        .expose_only(shop::COMMAND_NAMES)
        .sessions(Sessions::with_store(config, Arc::new(store)))
        .build()
        .unwrap()
}

fn code(result: &CommandResult<Value>) -> &str {
    result.error.as_ref().map_or("OK", |e| e.code.as_ref())
}

/// Enters `context` (with `scope`, if any) in a new session; its handle.
async fn enter(
    dispatcher: &Dispatcher,
    ctx: &CommandContext,
    context: &str,
    scope: Option<&str>,
) -> String {
    let mut input = json!({"context": context});
    if let Some(scope) = scope {
        input["scope"] = json!(scope);
    }
    let entered = dispatcher
        .call("afd-context-enter", input, ctx.clone())
        .await;
    assert!(entered.success, "{entered:?}");
    entered.data.unwrap()["session"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn shop_ctx() -> CommandContext {
    shop::context(ShopStore::in_memory().unwrap())
}

#[tokio::test]
async fn a_context_entered_through_one_replica_binds_calls_on_the_other() {
    let Some(url) = redis_url() else { return };
    let a = replica(&url, SessionConfig::default()).await;
    let b = replica(&url, SessionConfig::default()).await;
    let ctx = shop_ctx();
    let handle = enter(&a, &ctx, "fulfilment", Some("read-only")).await;
    let on_b = ctx.clone().with_session(handle.as_str());
    // Read-only in fulfilment, as entered on A.
    let restock = b
        .call(
            "inventory-restock",
            json!({"productId": 1, "quantity": 5, "reference": "replica-b"}),
            on_b.clone(),
        )
        .await;
    assert_eq!(code(&restock), codes::FORBIDDEN, "{restock:?}");
    let listed = b.call("inventory-list", json!({}), on_b.clone()).await;
    assert!(listed.success, "{listed:?}");
    let outside = b.call("invoice-list", json!({}), on_b.clone()).await;
    assert_eq!(code(&outside), codes::CONTEXT_MISMATCH, "{outside:?}");
    // Leaving on B is seen on A.
    let exited = b.call("afd-context-exit", json!({}), on_b).await;
    assert!(exited.success, "{exited:?}");
    let state = a.session(&handle).await.unwrap().unwrap();
    assert_eq!(state.active_context(), None);
    assert!(a.sessions().end(&handle).await.unwrap());
    assert!(b.session(&handle).await.unwrap().is_none());
}

/// A session belongs to the subject whose token first used it, on every replica: under
/// another subject's token it is answered as unknown (the owner travels in Redis).
#[tokio::test]
async fn a_session_started_under_one_subject_is_unknown_to_another_on_every_replica() {
    use afd_runtime::auth::{Principal, Scopes};
    let Some(url) = redis_url() else { return };
    let a = replica(&url, SessionConfig::default()).await;
    let b = replica(&url, SessionConfig::default()).await;
    let scopes = Scopes::parse("shop:read shop:write shop:admin");
    let alice = Principal::new("alice", scopes.clone());
    let mallory = Principal::new("mallory", scopes);
    let ctx = shop_ctx();
    let handle = enter(&a.for_principal(&alice), &ctx, "fulfilment", None).await;
    let on = ctx.clone().with_session(handle.as_str());
    let hers = b
        .for_principal(&alice)
        .call("inventory-list", json!({}), on.clone())
        .await;
    assert!(hers.success, "{hers:?}");
    for replica in [&a, &b] {
        let stolen = replica
            .for_principal(&mallory)
            .call("inventory-list", json!({}), on.clone())
            .await;
        assert_eq!(code(&stolen), codes::SESSION_NOT_FOUND, "{stolen:?}");
        let exit = replica
            .for_principal(&mallory)
            .call("afd-context-exit", json!({}), on.clone())
            .await;
        assert_eq!(code(&exit), codes::SESSION_NOT_FOUND, "{exit:?}");
    }
    let state = a.session(&handle).await.unwrap().unwrap();
    assert_eq!(state.owner(), Some("alice"));
    assert_eq!(state.active_context(), Some("fulfilment"));
    assert!(a.sessions().end(&handle).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_changes_of_one_session_on_two_replicas_lose_no_write() {
    let Some(url) = redis_url() else { return };
    let config = SessionConfig::default().max_activated(200);
    let a = replica(&url, config.clone()).await;
    let b = replica(&url, config).await;
    let handle = a.open_session().await.unwrap();
    let names: Vec<&'static str> = shop::COMMAND_NAMES.iter().copied().take(40).collect();
    let mut tasks = Vec::new();
    for (i, name) in names.iter().copied().enumerate() {
        let replica = if i % 2 == 0 { a.clone() } else { b.clone() };
        let handle = handle.clone();
        tasks.push(tokio::spawn(async move {
            replica.activate(Some(&handle), &[name]).await.unwrap()
        }));
    }
    for task in tasks {
        let (activated, _) = task.await.unwrap();
        assert_eq!(activated.len(), 1);
    }
    let state = b.session(&handle).await.unwrap().unwrap();
    let mut activated: Vec<&str> = state.activated().iter().map(String::as_str).collect();
    activated.sort_unstable();
    let mut expected = names.clone();
    expected.sort_unstable();
    assert_eq!(
        activated, expected,
        "every activation of both replicas kept"
    );
    a.sessions().end(&handle).await.unwrap();
}

#[tokio::test]
async fn idle_sessions_expire_by_redis_ttl_refreshed_on_use() {
    let Some(url) = redis_url() else { return };
    let store = RedisSessionStore::connect(&url, Duration::from_secs(2))
        .await
        .unwrap();
    store.put("afd-test-idle", Arc::default()).await.unwrap();
    // Used every 0.5 s, it outlives its 2 s idle time twice over.
    for _ in 0..8 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(store.get("afd-test-idle").await.unwrap().is_some());
    }
    // Left alone, Redis removes it.
    tokio::time::sleep(Duration::from_millis(4000)).await;
    assert!(store.get("afd-test-idle").await.unwrap().is_none());
    let mut never = |_: &mut afd_runtime::contexts::SessionState| {};
    assert!(!store.update("afd-test-idle", &mut never).await.unwrap());
}

/// A store given to a dispatcher expires sessions after the dispatcher's idle timeout,
/// not the one it was connected with (what `serve --sessions redis://... --session-idle`
/// relies on).
#[tokio::test]
async fn the_dispatchers_idle_timeout_reaches_the_redis_store() {
    let Some(url) = redis_url() else { return };
    let store = RedisSessionStore::connect(&url, Duration::from_secs(30 * 60))
        .await
        .unwrap();
    let dispatcher = Dispatcher::builder(Registry::global())
        .expose_only(shop::COMMAND_NAMES)
        .session_config(SessionConfig::default().idle_timeout(Duration::from_secs(3600)))
        .session_idle_timeout(Duration::from_secs(2))
        .session_store(Arc::new(store))
        .build()
        .unwrap();
    assert_eq!(
        dispatcher.sessions().config().get_idle_timeout(),
        Duration::from_secs(2)
    );
    let ctx = shop_ctx();
    let handle = enter(&dispatcher, &ctx, "fulfilment", None).await;
    assert!(dispatcher.session(&handle).await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let after = dispatcher
        .call(
            "inventory-list",
            json!({}),
            ctx.with_session(handle.as_str()),
        )
        .await;
    assert_eq!(code(&after), codes::SESSION_NOT_FOUND, "{after:?}");
}

#[tokio::test]
async fn an_unreachable_redis_is_a_clear_error_at_start() {
    let port = afd_tests::services::free_port();
    let error = RedisSessionStore::connect(
        &format!("redis://app:secret@127.0.0.1:{port}"),
        Duration::from_secs(60),
    )
    .await
    .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("cannot reach Redis at redis://app:***@127.0.0.1"),
        "{message}"
    );
    assert!(!message.contains("secret"), "{message}");
    let error = RedisSessionStore::connect("http://example.com", Duration::from_secs(60))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("is not a Redis URL"), "{error}");
}

/// Calls `name` until it answers with something other than `SESSION_STORE_UNAVAILABLE`,
/// for at most a minute (the connection comes back on its own).
async fn after_recovery(
    d: &Dispatcher,
    name: &str,
    input: Value,
    ctx: &CommandContext,
) -> CommandResult<Value> {
    let start = Instant::now();
    loop {
        let result = d.call(name, input.clone(), ctx.clone()).await;
        if code(&result) != codes::SESSION_STORE_UNAVAILABLE || start.elapsed().as_secs() > 60 {
            return result;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn with_redis_stopped_calls_fail_closed_then_recover() {
    let Some(mut redis) = PrivateRedis::start("sessions-stop") else {
        return;
    };
    let d = replica(&redis.url(), SessionConfig::default()).await;
    let ctx = shop_ctx();
    let handle = enter(&d, &ctx, "fulfilment", Some("read-only")).await;
    let ctx = ctx.with_session(handle.as_str());
    let stock = |result: &CommandResult<Value>| result.data.clone().unwrap_or_default();
    let before = d.call("inventory-list", json!({}), ctx.clone()).await;
    assert!(before.success, "{before:?}");

    redis.stop();
    // A read and a mutation that the read-only scope refuses: neither runs unchecked.
    for (name, input) in [
        ("inventory-list", json!({})),
        (
            "inventory-restock",
            json!({"productId": 1, "quantity": 5, "reference": "while-down"}),
        ),
        ("afd-context-exit", json!({})),
    ] {
        let result = d.call(name, input, ctx.clone()).await;
        let error = result.error.as_ref().expect("refused");
        assert_eq!(
            error.code,
            codes::SESSION_STORE_UNAVAILABLE,
            "{name}: {error:?}"
        );
        assert_eq!(error.retryable, Some(true), "{name}");
        assert!(
            error.suggestion.as_deref().unwrap().contains("Retry"),
            "{name}"
        );
    }
    // A call without a session needs no session state and still runs.
    let universal = d.call("product-list", json!({}), shop_ctx()).await;
    assert!(universal.success, "{universal:?}");

    redis.restart();
    let listed = after_recovery(&d, "inventory-list", json!({}), &ctx).await;
    assert!(listed.success, "{listed:?}");
    assert_eq!(
        stock(&listed),
        stock(&before),
        "the refused restock did not run"
    );
    // The session and its read-only scope came back with Redis.
    let restock = d
        .call(
            "inventory-restock",
            json!({"productId": 1, "quantity": 5, "reference": "after"}),
            ctx.clone(),
        )
        .await;
    assert_eq!(code(&restock), codes::FORBIDDEN, "{restock:?}");
    let state = d.session(&handle).await.unwrap().unwrap();
    assert_eq!(state.active_context(), Some("fulfilment"));
}
