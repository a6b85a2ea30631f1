//! TLS to the shared stores (features `redis-tls`, `postgres-tls`), against real servers
//! serving a certificate signed by a CA of the test run's own, for the name `localhost` only.
//!
//! Redis: a private redis-server speaking TLS only; sessions round-trip through
//! `rediss://localhost:PORT?ssl_ca_certs=CA`; a server the named CA did not sign, or the
//! system's roots (which do not hold the test CA), are refused with a message that says why.
//! PostgreSQL: the run's server with `ssl = on`; each libpq `sslmode` level connects or is
//! refused as libpq would, and a connected writer is seen in `pg_stat_ssl` as encrypted.
//!
//! Needs `AFD_TEST_TLS_DIR` (the certificates), `AFD_TEST_POSTGRES_URL` (a PostgreSQL on
//! localhost serving that certificate) and `redis-server`: `.ci/run` prepares all three;
//! its section "TLS for Redis and PostgreSQL" is what to run by hand.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use afd_runtime::contexts::{RedisSessionStore, SessionStore};
use afd_runtime::usage::UsageStats;
use afd_tests::services::{PrivateRedis, postgres_url, tls_files};

fn unique(name: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("afd-tls-{name}-{}-{nanos}", std::process::id())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

async fn connect(url: &str) -> Result<RedisSessionStore, String> {
    RedisSessionStore::connect(url, Duration::from_secs(60))
        .await
        .map_err(|error| error.to_string())
}

#[test]
fn sessions_travel_to_a_redis_over_tls_checked_against_the_named_ca() {
    let Some(tls) = tls_files() else { return };
    let Some(redis) = PrivateRedis::start_tls(&unique("redis"), &tls) else {
        return;
    };
    runtime().block_on(async {
        let url = format!("{}?ssl_ca_certs={}", redis.url(), tls.ca.display());
        let store = connect(&url).await.expect("the server's CA is named");
        let handle = unique("session");
        store.ensure(&handle).await.unwrap();
        // Another connection, as another replica would make, reads what the first wrote.
        let other = connect(&url).await.unwrap();
        assert!(other.get(&handle).await.unwrap().is_some());
        assert!(other.remove(&handle).await.unwrap());
        assert!(store.get(&handle).await.unwrap().is_none());
    });
}

#[test]
fn a_redis_whose_certificate_the_client_cannot_trust_is_refused_in_words() {
    let Some(tls) = tls_files() else { return };
    let Some(redis) = PrivateRedis::start_tls(&unique("redis-refused"), &tls) else {
        return;
    };
    runtime().block_on(async {
        // Signed by a CA other than the one named.
        let url = format!("{}?ssl_ca_certs={}", redis.url(), tls.other_ca.display());
        let error = connect(&url).await.unwrap_err();
        assert!(error.contains("cannot reach Redis"), "{error}");
        assert!(error.to_lowercase().contains("certificate"), "{error}");

        // The system's roots do not hold the test CA.
        let error = connect(&redis.url()).await.unwrap_err();
        assert!(error.to_lowercase().contains("certificate"), "{error}");

        // Plain text to a TLS-only port gets no session store either.
        let plain = redis.url().replace("rediss://", "redis://");
        let started = Instant::now();
        assert!(connect(&plain).await.is_err());
        assert!(started.elapsed() < Duration::from_secs(30));
    });
}

#[test]
fn a_ca_file_that_cannot_be_used_is_named_before_connecting() {
    let Some(tls) = tls_files() else { return };
    runtime().block_on(async {
        let error = connect("rediss://localhost:1?ssl_ca_certs=/no/such/ca.pem")
            .await
            .unwrap_err();
        assert!(error.contains("/no/such/ca.pem"), "{error}");

        // The key is no certificate.
        let key = tls.server_key.display();
        let error = connect(&format!("rediss://localhost:1?ssl_ca_certs={key}"))
            .await
            .unwrap_err();
        assert!(error.contains("holds no certificate"), "{error}");

        let ca = tls.ca.display();
        let error = connect(&format!("redis://localhost:1?ssl_ca_certs={ca}"))
            .await
            .unwrap_err();
        assert!(error.contains("rediss://"), "{error}");
    });
}

/// `AFD_TEST_POSTGRES_URL` with the host `host` and the parameters `params`, and an
/// application name of its own so that its connections can be found in `pg_stat_ssl`.
fn postgres(base: &str, host: &str, params: &str, application: &str) -> String {
    let url = base
        .replace("@127.0.0.1", &format!("@{host}"))
        .replace("@localhost", &format!("@{host}"));
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}application_name={application}&{params}")
}

fn open(url: &str) -> UsageStats {
    UsageStats::builder()
        .location(url)
        .unwrap()
        .flush_interval(Duration::from_millis(50))
        .build()
}

/// Whether the connections named `application` are encrypted (`None`: there are none).
fn encrypted(base: &str, application: &str) -> Option<bool> {
    runtime().block_on(async {
        let (client, connection) = tokio_postgres::connect(base, tokio_postgres::NoTls)
            .await
            .expect("PostgreSQL reachable");
        tokio::spawn(connection);
        let rows = client
            .query(
                "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
                 WHERE a.application_name = $1",
                &[&application],
            )
            .await
            .unwrap();
        (!rows.is_empty()).then(|| rows.iter().all(|row| row.get::<_, bool>(0)))
    })
}

#[test]
fn usage_statistics_reach_postgresql_at_each_sslmode_as_libpq_would() {
    let Some(tls) = tls_files() else { return };
    let Some(base) = postgres_url() else { return };
    let ca = tls.ca.display().to_string();
    let other = tls.other_ca.display().to_string();
    // (host, parameters, connects): the certificate names localhost, not 127.0.0.1, and is
    // signed by `ca`, which the system's roots do not hold.
    let cases = [
        (
            "localhost",
            format!("sslmode=verify-full&sslrootcert={ca}"),
            true,
        ),
        ("localhost", format!("sslrootcert={ca}"), true),
        (
            "127.0.0.1",
            format!("sslmode=verify-full&sslrootcert={ca}"),
            false,
        ),
        (
            "127.0.0.1",
            format!("sslmode=verify-ca&sslrootcert={ca}"),
            true,
        ),
        (
            "127.0.0.1",
            format!("sslmode=require&sslrootcert={ca}"),
            true,
        ),
        (
            "localhost",
            format!("sslmode=verify-ca&sslrootcert={other}"),
            false,
        ),
        (
            "localhost",
            format!("sslmode=require&sslrootcert={other}"),
            false,
        ),
        ("127.0.0.1", "sslmode=require".to_owned(), true),
        ("localhost", "sslmode=verify-full".to_owned(), false),
        (
            "localhost",
            "sslmode=verify-full&sslrootcert=system".to_owned(),
            false,
        ),
    ];
    for (i, (host, params, connects)) in cases.iter().enumerate() {
        let application = unique(&format!("pg{i}"));
        let usage = open(&postgres(&base, host, params, &application));
        assert_eq!(usage.is_persistent(), *connects, "{host} {params}");
        if *connects {
            assert_eq!(
                encrypted(&base, &application),
                Some(true),
                "{host} {params}: the writer's connection is encrypted"
            );
        }
    }
    // Without sslmode the store does not try TLS: the connection is plain.
    let application = unique("plain");
    let usage = open(&postgres(
        &base,
        "localhost",
        "sslmode=disable",
        &application,
    ));
    assert!(usage.is_persistent());
    assert_eq!(encrypted(&base, &application), Some(false));
}
