//! `serve`: the MCP server on stdio or streamable HTTP, with the strategy, usage statistics,
//! the session store and catalog export taken from flags (and `AFD_SESSION_STORE`,
//! `AFD_USAGE_STORE`). The same flags are accepted at the top level, where
//! the binary run with no subcommand serves over stdio.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches};

use super::logging::{LOG_FORMAT_ENV, LogFormat};
use super::{Cli, EXIT_FAILURE, EXIT_SUCCESS};
use crate::command_context::CommandContext;
use crate::contexts::SessionStore;
use crate::mcp::{McpServer, Strategy};
use crate::ops::{DrainOutcome, shutdown_signal};
use crate::usage::UsageStats;

const STRATEGY: &str = "strategy";
const HTTP: &str = "http";
const TOKEN: &str = "token";
const USAGE_DB: &str = "usage-db";
const NO_USAGE: &str = "no-usage";
const EXPORT: &str = "export";
const SESSIONS: &str = "sessions";
const SESSION_IDLE: &str = "session-idle";
const USAGE_STORE: &str = "usage-store";
const AUTH_ISSUER: &str = "auth-issuer";
const AUTH_AUDIENCE: &str = "auth-audience";
const AUTH_JWKS: &str = "auth-jwks";
const AUTH_INTROSPECT: &str = "auth-introspect";
const ALLOWED_HOST: &str = "allowed-host";
const AUDIT_LOG: &str = "audit-log";
const AUDIT_ARGUMENTS: &str = "audit-arguments";
const AUDIT_REDACT: &str = "audit-redact";
const AUDIT_STORE: &str = "audit-store";
const DRAIN: &str = "drain";
const LOG_FORMAT: &str = "log-format";
const METRICS: &str = "metrics";
/// Where the metrics listener binds when `--metrics` is not given.
const METRICS_ENV: &str = "AFD_METRICS_ADDR";
/// The introspection client's secret, never a flag (flags show in process lists).
#[cfg(feature = "oauth")]
const AUTH_SECRET_ENV: &str = "AFD_AUTH_CLIENT_SECRET";
/// Where the audit trail is written when `--audit-log` is not given.
const AUDIT_LOG_ENV: &str = "AFD_AUDIT_LOG";
/// Where sessions live when `--sessions` is not given.
const SESSIONS_ENV: &str = "AFD_SESSION_STORE";
/// How long an idle session lives when `--session-idle` is not given.
const SESSION_IDLE_ENV: &str = "AFD_SESSION_IDLE";
/// Where usage statistics live when `--usage-store` is not given.
const USAGE_ENV: &str = "AFD_USAGE_STORE";
/// The grace period of a drain when `--drain` is not given.
const DRAIN_ENV: &str = "AFD_DRAIN";
/// The grace period of a drain by default.
const DEFAULT_DRAIN: Duration = Duration::from_secs(30);
/// How long the transports may take to close once the drain is over.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// The heading `serve`'s flags are listed under in help.
const HEADING: &str = "Serving MCP (serve, or no subcommand)";

/// `serve`'s flags.
pub(super) fn args() -> Vec<Arg> {
    let args = [
        Arg::new(STRATEGY)
            .long(STRATEGY)
            .value_name("STRATEGY")
            .default_value("lazy")
            .value_parser(|text: &str| text.parse::<Strategy>())
            .help("Tool strategy: individual, grouped, lazy or hybrid (AFD_TOOL_STRATEGY overrides it)"),
        Arg::new(HTTP)
            .long(HTTP)
            .value_name("ADDR")
            .value_parser(clap::value_parser!(SocketAddr))
            .help("Serve streamable HTTP on this address (e.g. 127.0.0.1:8787) instead of stdio"),
        Arg::new(TOKEN)
            .long(TOKEN)
            .value_name("TOKEN")
            .requires(HTTP)
            .help("Require this bearer token on HTTP requests"),
        Arg::new(AUTH_ISSUER)
            .long(AUTH_ISSUER)
            .value_name("URL")
            .requires(HTTP)
            .conflicts_with(TOKEN)
            .help("Accept OAuth access tokens from this authorization server (its issuer URL) on HTTP, and show each caller only the commands its scopes cover (default: AFD_AUTH_ISSUER)"),
        Arg::new(AUTH_AUDIENCE)
            .long(AUTH_AUDIENCE)
            .value_name("URL")
            .requires(HTTP)
            .help("This server's canonical URL as clients reach it (https://mcp.example.com/mcp): tokens must be issued for it (default: AFD_AUTH_AUDIENCE)"),
        Arg::new(AUTH_JWKS)
            .long(AUTH_JWKS)
            .value_name("URL")
            .requires(HTTP)
            .help("Fetch the issuer's signing keys here rather than where its metadata says"),
        Arg::new(AUTH_INTROSPECT)
            .long(AUTH_INTROSPECT)
            .value_name("CLIENT_ID")
            .requires(HTTP)
            .help("Also accept opaque tokens, checked by the issuer's introspection endpoint as this client (its secret from AFD_AUTH_CLIENT_SECRET)"),
        Arg::new(ALLOWED_HOST)
            .long(ALLOWED_HOST)
            .value_name("HOST")
            .action(ArgAction::Append)
            .requires(HTTP)
            .help("Accept requests for this Host name (repeat for several; default: loopback names only)"),
        Arg::new(AUDIT_LOG)
            .long(AUDIT_LOG)
            .value_name("FILE")
            .value_parser(clap::value_parser!(PathBuf))
            .help("Append the audit trail (one JSON line per decision) to FILE (default: AFD_AUDIT_LOG; always to tracing, target afd::audit)"),
        Arg::new(AUDIT_STORE)
            .long(AUDIT_STORE)
            .value_name("URL")
            .help("Also write the audit trail to the table afd_audit of postgres://user:password@host/db (TLS by libpq's sslmode and sslrootcert)"),
        Arg::new(AUDIT_ARGUMENTS)
            .long(AUDIT_ARGUMENTS)
            .action(ArgAction::SetTrue)
            .help("Record calls' arguments in the audit trail (off by default)"),
        Arg::new(AUDIT_REDACT)
            .long(AUDIT_REDACT)
            .value_name("FIELDS")
            .value_delimiter(',')
            .action(ArgAction::Append)
            .requires(AUDIT_ARGUMENTS)
            .help("Argument fields whose values the audit trail replaces with [redacted] (comma-separated)"),
        Arg::new(USAGE_DB)
            .long(USAGE_DB)
            .value_name("FILE")
            .value_parser(clap::value_parser!(PathBuf))
            .conflicts_with(NO_USAGE)
            .help("Keep usage statistics in this SQLite file, so they survive restarts (default: in memory)"),
        Arg::new(NO_USAGE)
            .long(NO_USAGE)
            .action(ArgAction::SetTrue)
            .help("Record no usage statistics"),
        Arg::new(USAGE_STORE)
            .long(USAGE_STORE)
            .value_name("STORE")
            .conflicts_with_all([USAGE_DB, NO_USAGE])
            .help("Keep usage statistics in postgres://user:password@host/db (shared by replicas; TLS by libpq's sslmode and sslrootcert), sqlite:PATH, memory or off (default: AFD_USAGE_STORE, else in memory)"),
        Arg::new(SESSIONS)
            .long(SESSIONS)
            .value_name("STORE")
            .help("Keep sessions in redis://host:port[/db] or rediss:// for TLS (shared by replicas), or memory (default: AFD_SESSION_STORE, else in memory)"),
        Arg::new(SESSION_IDLE)
            .long(SESSION_IDLE)
            .value_name("DURATION")
            .value_parser(parse_idle)
            .help("End sessions unused for this long, in memory or in Redis, e.g. 45m or 2h (default: AFD_SESSION_IDLE, else what the app sets, 30m by default)"),
        Arg::new(DRAIN)
            .long(DRAIN)
            .value_name("DURATION")
            .value_parser(parse_drain)
            .help("On SIGTERM or SIGINT, refuse new calls and give those in flight this long to finish before cancelling them, e.g. 30s or 2m (default: AFD_DRAIN, else 30s)"),
        Arg::new(LOG_FORMAT)
            .long(LOG_FORMAT)
            .value_name("FORMAT")
            .value_parser(|text: &str| text.parse::<LogFormat>())
            .help("Write log lines on stderr as text or json, one object a line (default: AFD_LOG_FORMAT, else text; RUST_LOG filters, default info, rmcp and the audit trail at warn)"),
        Arg::new(METRICS)
            .long(METRICS)
            .value_name("ADDR")
            .value_parser(clap::value_parser!(SocketAddr))
            .help("Serve Prometheus metrics at http://ADDR/metrics, with /healthz and /readyz, e.g. 127.0.0.1:9464 (default: AFD_METRICS_ADDR; needs the `metrics` feature)"),
        Arg::new(EXPORT)
            .long(EXPORT)
            .value_name("DIR")
            .value_parser(clap::value_parser!(PathBuf))
            .help("Write the catalog as a folder tree (<category>/<command>.json, index.json, README.md) into DIR and exit"),
    ];
    args.into_iter()
        .map(|arg| arg.help_heading(HEADING))
        .collect()
}

/// The MCP server `matches` describe: the app's name, version, context and dispatcher
/// configuration, with the strategy and usage statistics from the flags. Exposure follows
/// the app's configuration on the MCP surface.
///
/// # Errors
///
/// The server could not be built.
fn server(
    cli: &Cli,
    matches: &ArgMatches,
    ctx: CommandContext,
    stores: Stores,
) -> Result<McpServer, crate::mcp::BuildError> {
    let strategy = matches
        .get_one::<Strategy>(STRATEGY)
        .copied()
        .unwrap_or_default();
    let Stores {
        usage,
        sessions,
        tasks,
        idle,
        audit,
    } = stores;
    let dispatch = cli.dispatch.clone();
    let mut builder = McpServer::builder(cli.registry)
        .name(cli.name.clone())
        .strategy(strategy)
        .context(ctx)
        .dispatch(move |builder| {
            let builder = match &dispatch {
                Some(configure) => configure(builder),
                None => builder,
            };
            let mut builder = builder.usage(usage.clone());
            if let Some(idle) = idle {
                builder = builder.session_idle_timeout(idle);
            }
            match &sessions {
                Some(store) => builder.session_store(store.clone()),
                None => builder,
            }
        });
    if let Some(version) = &cli.version {
        builder = builder.version(version.clone());
    }
    builder = builder.audit(audit);
    if let Some(tasks) = tasks {
        builder = builder.task_store(tasks);
    }
    if let Some(configure) = &cli.server {
        builder = configure(builder);
    }
    builder.build()
}

/// Runs `serve` (or the top level with no subcommand): exports the catalog, or serves
/// until the client disconnects (stdio) or the process is stopped (HTTP).
pub(super) async fn run(cli: &Cli, matches: &ArgMatches, ctx: CommandContext) -> i32 {
    let format = match matches.get_one::<LogFormat>(LOG_FORMAT) {
        Some(format) => *format,
        None => match std::env::var(LOG_FORMAT_ENV) {
            Ok(text) if !text.trim().is_empty() => match text.parse() {
                Ok(format) => format,
                Err(error) => {
                    eprintln!("error: {LOG_FORMAT_ENV}: {error}");
                    return EXIT_FAILURE;
                }
            },
            _ => LogFormat::Text,
        },
    };
    let json = format == LogFormat::Json;
    let otlp = match otlp(&cli.name) {
        Ok(otlp) => otlp,
        Err(error) => {
            eprintln!("error: {error}");
            return EXIT_FAILURE;
        }
    };
    // The audit trail has sinks of its own, and rmcp says at info level what an operator
    // need not read (each session opened and closed): on stderr when RUST_LOG asks.
    super::logging::install(format, "info,rmcp=warn,afd::audit=warn", otlp.as_ref());
    let code = serve(cli, matches, ctx, json).await;
    // The spans and metrics of the last calls (the drain's too) go out before the
    // process exits.
    tokio::task::spawn_blocking(move || {
        crate::metrics::flush();
        #[cfg(feature = "otel")]
        if let Some(otlp) = otlp {
            otlp.shutdown();
        }
        #[cfg(not(feature = "otel"))]
        let _ = otlp;
    })
    .await
    .ok();
    code
}

/// The OTLP trace pipeline the `OTEL_*` variables ask for (feature `otel`).
#[cfg(feature = "otel")]
fn otlp(service: &str) -> Result<Option<crate::telemetry::Otlp>, String> {
    if !crate::telemetry::traces_requested() {
        return Ok(None);
    }
    crate::telemetry::Otlp::from_env(service).map(Some)
}

/// Without the feature `otel`, the `OTEL_*` variables are not read.
#[cfg(not(feature = "otel"))]
fn otlp(_service: &str) -> Result<Option<super::logging::Otlp>, String> {
    Ok(None)
}

/// Serves as [`run`] says, once logging is set up.
async fn serve(cli: &Cli, matches: &ArgMatches, ctx: CommandContext, json: bool) -> i32 {
    let stores = match stores(matches).await {
        Ok(stores) => stores,
        Err(error) => {
            fail(json, &error);
            return EXIT_FAILURE;
        }
    };
    let server = match server(cli, matches, ctx, stores) {
        Ok(server) => server,
        Err(error) => {
            fail(json, &error);
            return EXIT_FAILURE;
        }
    };
    if let Some(dir) = matches.get_one::<PathBuf>(EXPORT) {
        let dispatcher = server.dispatcher();
        return match crate::export::export_tree_with(cli.registry, dir, |entry| {
            dispatcher.is_exposed(entry.name())
        }) {
            Ok(summary) => {
                println!(
                    "wrote {} commands in {} categories to {} ({} files)",
                    summary.commands,
                    summary.categories,
                    summary.dir.display(),
                    summary.files.len()
                );
                EXIT_SUCCESS
            }
            Err(error) => {
                fail(json, &error);
                EXIT_FAILURE
            }
        };
    }
    tracing::info!(strategy = %server.strategy(), tools = server.tools().len(), "starting {}", cli.name);
    let grace = match drain_grace(matches) {
        Ok(grace) => grace,
        Err(error) => {
            fail(json, &error);
            return EXIT_FAILURE;
        }
    };
    // The stores to flush once serving ends (a clone shares them).
    let kept = server.clone();
    let metrics = match metrics_listener(matches, &server, json).await {
        Ok(listener) => listener,
        Err(error) => {
            fail(json, &error);
            return EXIT_FAILURE;
        }
    };
    let served = match matches.get_one::<SocketAddr>(HTTP) {
        #[cfg(feature = "http")]
        Some(addr) => serve_http(cli, matches, server, *addr, grace, json).await,
        #[cfg(not(feature = "http"))]
        Some(_) => Err("this build has no HTTP transport (the `http` feature is off)".into()),
        None => serve_stdio(server, grace).await,
    };
    // Whatever ended the serving, what was recorded is written before the process exits.
    let usage = kept.dispatcher().usage().clone();
    let flushed = tokio::task::spawn_blocking(move || usage.flush()).await;
    match flushed {
        Ok(Ok(())) => {}
        Ok(Err(error)) => tracing::error!(%error, "usage statistics: the last write failed"),
        Err(error) => tracing::error!(%error, "usage statistics: the last write panicked"),
    }
    kept.audit().flush().await;
    #[cfg(feature = "metrics")]
    if let Some(listener) = metrics {
        listener.shutdown().await;
    }
    #[cfg(not(feature = "metrics"))]
    let _ = metrics;
    match served {
        Ok(DrainOutcome::Finished) => EXIT_SUCCESS,
        Ok(DrainOutcome::Cancelled { .. }) => {
            fail(
                json,
                format!(
                    "calls still running at the end of the {} drain were cancelled",
                    humantime::format_duration(grace)
                ),
            );
            EXIT_FAILURE
        }
        Err(error) => {
            fail(json, &error);
            EXIT_FAILURE
        }
    }
}

/// Says why serving failed on stderr: a log event when logs are JSON (every line of
/// stderr an object then), else an `error:` line.
fn fail(json: bool, error: impl std::fmt::Display) {
    if json {
        tracing::error!("{error}");
    } else {
        eprintln!("error: {error}");
    }
}

/// Says where the server listens on stderr, as [`fail`] does.
fn note(json: bool, text: String) {
    if json {
        tracing::info!("{text}");
    } else {
        eprintln!("{text}");
    }
}

/// Serves streamable HTTP until SIGTERM or SIGINT, then drains.
#[cfg(feature = "http")]
async fn serve_http(
    cli: &Cli,
    matches: &ArgMatches,
    server: McpServer,
    addr: SocketAddr,
    grace: Duration,
    json: bool,
) -> Result<DrainOutcome, Box<dyn std::error::Error + Send + Sync>> {
    let mut options = crate::mcp::HttpOptions::new(addr);
    if let Some(token) = matches.get_one::<String>(TOKEN) {
        options = options.bearer_token(token.clone());
    }
    if let Some(hosts) = matches.get_many::<String>(ALLOWED_HOST) {
        options = options.allowed_hosts(hosts.cloned());
    }
    let options = oauth(matches, options)?;
    let drain = server.drain().clone();
    let handle = server.bind_http(options).await?;
    note(
        json,
        format!("{} serving MCP at {}", cli.name, handle.url()),
    );
    shutdown_signal().await;
    let outcome = drain.run(grace).await;
    drain.close();
    if tokio::time::timeout(CLOSE_TIMEOUT, handle.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("the HTTP endpoint did not close in time");
    }
    Ok(outcome)
}

/// Serves stdio until the client closes it (no drain: nothing is in flight), or until
/// SIGTERM or SIGINT, then drains.
async fn serve_stdio(
    server: McpServer,
    grace: Duration,
) -> Result<DrainOutcome, Box<dyn std::error::Error + Send + Sync>> {
    let drain = server.drain().clone();
    let serving = server.serve_stdio();
    tokio::pin!(serving);
    tokio::select! {
        served = &mut serving => served.map(|()| DrainOutcome::Finished),
        () = shutdown_signal() => {
            // The front and rmcp run on tasks of their own: the calls in flight go on
            // while the drain waits for them.
            let outcome = drain.run(grace).await;
            drain.close();
            match tokio::time::timeout(CLOSE_TIMEOUT, serving).await {
                Ok(Err(error)) => tracing::debug!(%error, "stdio closed with an error"),
                Ok(Ok(())) => {}
                Err(_) => tracing::warn!("stdio did not close in time"),
            }
            Ok(outcome)
        }
    }
}

/// The metrics listener `--metrics` (or `AFD_METRICS_ADDR`) asks for, with the metrics
/// recorded from now on.
#[cfg(feature = "metrics")]
async fn metrics_listener(
    matches: &ArgMatches,
    server: &McpServer,
    json: bool,
) -> Result<Option<crate::mcp::MetricsListener>, String> {
    let addr = metrics_addr(matches)?;
    let mut provider = opentelemetry_sdk::metrics::SdkMeterProvider::builder();
    #[cfg(feature = "otel")]
    let otlp = crate::telemetry::metrics_requested();
    #[cfg(not(feature = "otel"))]
    let otlp = false;
    #[cfg(feature = "otel")]
    if otlp {
        provider = provider.with_reader(crate::telemetry::metric_reader()?);
    }
    let Some(addr) = addr else {
        if otlp {
            crate::metrics::install(provider.build());
        }
        return Ok(None);
    };
    let (prometheus, reader) = crate::metrics::prometheus()?;
    if !crate::metrics::install(provider.with_reader(reader).build()) {
        tracing::warn!("metrics were already installed; the listener serves what they record");
    }
    let listener = crate::mcp::MetricsListener::bind(addr, prometheus, server.readiness().clone())
        .await
        .map_err(|error| format!("cannot serve metrics on {addr}: {error}"))?;
    note(
        json,
        format!("metrics at http://{}/metrics", listener.local_addr()),
    );
    Ok(Some(listener))
}

/// Without the `metrics` feature, `--metrics` is an error.
#[cfg(not(feature = "metrics"))]
async fn metrics_listener(
    matches: &ArgMatches,
    _server: &McpServer,
    _json: bool,
) -> Result<Option<std::convert::Infallible>, String> {
    match metrics_addr(matches)? {
        Some(_) => {
            Err("this build has no metrics (afd-runtime's `metrics` feature is off)".to_owned())
        }
        None => Ok(None),
    }
}

/// `--metrics`, else `AFD_METRICS_ADDR`.
fn metrics_addr(matches: &ArgMatches) -> Result<Option<SocketAddr>, String> {
    if let Some(addr) = matches.get_one::<SocketAddr>(METRICS) {
        return Ok(Some(*addr));
    }
    match std::env::var(METRICS_ENV) {
        Ok(text) if !text.trim().is_empty() => text
            .trim()
            .parse()
            .map(Some)
            .map_err(|error| format!("{METRICS_ENV}='{text}': {error}")),
        _ => Ok(None),
    }
}

/// `--drain` (or `AFD_DRAIN`), else 30 s.
fn drain_grace(matches: &ArgMatches) -> Result<Duration, String> {
    if let Some(grace) = matches.get_one::<Duration>(DRAIN) {
        return Ok(*grace);
    }
    match std::env::var(DRAIN_ENV) {
        Ok(text) if !text.trim().is_empty() => {
            parse_drain(&text).map_err(|error| format!("{DRAIN_ENV}='{text}': {error}"))
        }
        _ => Ok(DEFAULT_DRAIN),
    }
}

/// A `--drain` value: a duration such as `30s`, `2m` or `0s` (cancel at once).
fn parse_drain(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text.trim())
        .map_err(|error| format!("{error}; give a duration such as 30s or 2m"))
}

/// The OAuth resource server the flags (or `AFD_AUTH_ISSUER` and `AFD_AUTH_AUDIENCE`) ask
/// for, if any.
#[cfg(feature = "http")]
fn oauth(
    matches: &ArgMatches,
    options: crate::mcp::HttpOptions,
) -> Result<crate::mcp::HttpOptions, String> {
    let issuer = flag_or_env(matches, AUTH_ISSUER, "AFD_AUTH_ISSUER");
    let audience = flag_or_env(matches, AUTH_AUDIENCE, "AFD_AUTH_AUDIENCE");
    let (issuer, audience) = match (issuer, audience) {
        (None, None) => return Ok(options),
        (Some(_), None) => {
            return Err("--auth-issuer needs --auth-audience (or AFD_AUTH_AUDIENCE): the URL clients reach this server at, which tokens must be issued for".to_owned());
        }
        (None, Some(_)) => {
            return Err("--auth-audience needs --auth-issuer (or AFD_AUTH_ISSUER): the authorization server whose tokens to accept".to_owned());
        }
        (Some(issuer), Some(audience)) => (issuer, audience),
    };
    if matches.get_one::<String>(TOKEN).is_some() {
        return Err("--token and OAuth (--auth-issuer) exclude each other".to_owned());
    }
    #[cfg(feature = "oauth")]
    {
        let mut oauth = crate::mcp::OAuth::new(issuer, audience);
        if let Some(jwks) = matches.get_one::<String>(AUTH_JWKS) {
            oauth = oauth.jwks_uri(jwks.clone());
        }
        if let Some(client) = matches.get_one::<String>(AUTH_INTROSPECT) {
            let secret = std::env::var(AUTH_SECRET_ENV).map_err(|_| {
                format!("--auth-introspect needs the client's secret in {AUTH_SECRET_ENV}")
            })?;
            oauth = oauth.introspection(client.clone(), secret);
        }
        tracing::info!(issuer = %oauth.issuer(), audience = %oauth.audience(), "accepting OAuth access tokens");
        Ok(options.oauth(oauth))
    }
    #[cfg(not(feature = "oauth"))]
    {
        let _ = (issuer, audience, options);
        Err(
            "this build has no OAuth resource server (afd-runtime's `oauth` feature is off)"
                .to_owned(),
        )
    }
}

/// The audit trail the flags ask for.
async fn audit(matches: &ArgMatches) -> Result<crate::audit::Audit, String> {
    let mut audit = crate::audit::Audit::new();
    let path = matches.get_one::<PathBuf>(AUDIT_LOG).cloned().or_else(|| {
        std::env::var(AUDIT_LOG_ENV)
            .ok()
            .filter(|value| !value.trim().is_empty())
            .map(PathBuf::from)
    });
    if let Some(path) = path {
        audit = audit
            .to_file(&path)
            .map_err(|error| format!("cannot open the audit log {}: {error}", path.display()))?;
    }
    if let Some(url) = matches.get_one::<String>(AUDIT_STORE) {
        audit = postgres_audit(audit, url).await?;
    }
    if matches.get_flag(AUDIT_ARGUMENTS) {
        let redact: Vec<String> = matches
            .get_many::<String>(AUDIT_REDACT)
            .map(|fields| {
                fields
                    .map(|f| f.trim().to_owned())
                    .filter(|f| !f.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        audit = audit.with_arguments(redact);
    }
    Ok(audit)
}

#[cfg(feature = "postgres")]
async fn postgres_audit(
    audit: crate::audit::Audit,
    url: &str,
) -> Result<crate::audit::Audit, String> {
    audit
        .to_postgres(url)
        .await
        .map_err(|error| format!("the audit store: {error}"))
}

#[cfg(not(feature = "postgres"))]
async fn postgres_audit(
    _audit: crate::audit::Audit,
    _url: &str,
) -> Result<crate::audit::Audit, String> {
    Err("this build has no PostgreSQL (afd-runtime's `postgres` feature is off)".to_owned())
}

/// Where a server keeps usage statistics and sessions.
struct Stores {
    usage: UsageStats,
    /// `None`: sessions in memory.
    sessions: Option<Arc<dyn SessionStore>>,
    /// Where tasks are kept: beside the sessions (`None`: in memory).
    tasks: Option<Arc<dyn crate::tasks::TaskStore>>,
    /// `--session-idle` (or its variable); `None`: the app's rules say.
    idle: Option<Duration>,
    /// The audit trail.
    audit: crate::audit::Audit,
}

/// A `--session-idle` value: a duration such as `45m`, `2h` or `1h 30m`, above zero.
fn parse_idle(text: &str) -> Result<Duration, String> {
    match humantime::parse_duration(text.trim()) {
        Ok(idle) if idle.is_zero() => Err("a session must live longer than 0s".to_owned()),
        Ok(idle) => Ok(idle),
        Err(error) => Err(format!(
            "{error}; give a duration such as 45m, 2h or 1h 30m"
        )),
    }
}

/// A flag's value, else the environment variable's (empty counts as unset).
fn flag_or_env(matches: &ArgMatches, id: &str, var: &str) -> Option<String> {
    matches
        .get_one::<String>(id)
        .cloned()
        .or_else(|| std::env::var(var).ok())
        .filter(|value| !value.trim().is_empty())
}

/// The stores the flags and environment name. A session store that cannot be reached is
/// an error (serving without it would drop every session's context); a usage store that
/// cannot be reached leaves the statistics in memory, with a warning.
async fn stores(matches: &ArgMatches) -> Result<Stores, String> {
    let usage = match (
        matches.get_one::<PathBuf>(USAGE_DB),
        matches.get_flag(NO_USAGE),
        flag_or_env(matches, USAGE_STORE, USAGE_ENV),
    ) {
        (_, true, _) => UsageStats::disabled(),
        (Some(path), false, _) => UsageStats::open(path),
        (None, false, Some(location)) => UsageStats::builder().location(&location)?.build(),
        (None, false, None) => UsageStats::in_memory(),
    };
    let idle = match matches.get_one::<Duration>(SESSION_IDLE) {
        Some(idle) => Some(*idle),
        None => match std::env::var(SESSION_IDLE_ENV) {
            Ok(text) if !text.trim().is_empty() => Some(
                parse_idle(&text)
                    .map_err(|error| format!("{SESSION_IDLE_ENV}='{text}': {error}"))?,
            ),
            _ => None,
        },
    };
    let (sessions, tasks) = match flag_or_env(matches, SESSIONS, SESSIONS_ENV) {
        None => (None, None),
        Some(location) => session_store(location.trim()).await?,
    };
    Ok(Stores {
        usage,
        sessions,
        tasks,
        idle,
        audit: audit(matches).await?,
    })
}

/// The stores of sessions and tasks `location` names (`None`: in memory).
type SharedStores = (
    Option<Arc<dyn SessionStore>>,
    Option<Arc<dyn crate::tasks::TaskStore>>,
);

async fn session_store(location: &str) -> Result<SharedStores, String> {
    if location == "memory" {
        return Ok((None, None));
    }
    if location.starts_with("redis://") || location.starts_with("rediss://") {
        return redis_store(location).await;
    }
    Err(format!(
        "'{location}' names no session store: use redis://host:port[/db], rediss://host:port[/db] or memory"
    ))
}

#[cfg(feature = "redis")]
async fn redis_store(url: &str) -> Result<SharedStores, String> {
    // The dispatcher sets the idle timeout its rules give when it takes the store.
    let idle = crate::SessionConfig::default().get_idle_timeout();
    let store = crate::contexts::RedisSessionStore::connect(url, idle)
        .await
        .map_err(|error| error.to_string())?;
    tracing::info!("sessions and tasks in Redis");
    let tasks = crate::tasks::RedisTaskStore::beside(&store);
    Ok((Some(Arc::new(store)), Some(Arc::new(tasks))))
}

#[cfg(not(feature = "redis"))]
async fn redis_store(_url: &str) -> Result<SharedStores, String> {
    Err("this build keeps sessions in memory only (afd-runtime's `redis` feature is off)".into())
}
