//! The `afd-gateway` command: serve the upstream MCP servers of a configuration file to an
//! MCP client over stdio, or print the context-cost report.

use std::path::PathBuf;

use afd_gateway::{Config, Gateway, Options};
use afd_runtime::mcp::Strategy;
use afd_runtime::ops::DrainOutcome;
use afd_runtime::telemetry::Otlp;
use afd_runtime::usage::UsageStats;
use clap::Parser;

/// One lazy, searchable MCP front for the servers of an `mcpServers` configuration file.
#[derive(Debug, Parser)]
#[command(name = "afd-gateway", version)]
struct Cli {
    /// The configuration: `{"mcpServers": {...}}`, as Claude Desktop and Cursor write it.
    config: PathBuf,
    /// Tool strategy: lazy (default), individual, grouped or hybrid.
    #[arg(long)]
    strategy: Option<Strategy>,
    /// Where tool lists are cached (overrides the configuration's `gateway.cacheDir`).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Keep usage statistics in this SQLite file (default: in memory).
    #[arg(long, value_name = "FILE")]
    usage_db: Option<PathBuf>,
    /// Start every server, print the tools and o200k tokens a client loads with every
    /// server connected directly versus through the gateway, and exit.
    #[arg(long)]
    report: bool,
    /// Serve streamable HTTP on this address (e.g. 127.0.0.1:8788) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// Accept OAuth access tokens from this authorization server on HTTP (default:
    /// AFD_AUTH_ISSUER).
    #[arg(long, value_name = "URL", env = "AFD_AUTH_ISSUER", requires = "http")]
    auth_issuer: Option<String>,
    /// The gateway's canonical URL as clients reach it; tokens must be issued for it
    /// (default: AFD_AUTH_AUDIENCE).
    #[arg(long, value_name = "URL", env = "AFD_AUTH_AUDIENCE", requires = "http")]
    auth_audience: Option<String>,
    /// Fetch the issuer's signing keys here rather than where its metadata says.
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    auth_jwks: Option<String>,
    /// Accept requests for this Host name (repeat for several; default: loopback only).
    #[arg(long, value_name = "HOST", requires = "http")]
    allowed_host: Vec<String>,
    /// On SIGTERM or SIGINT, refuse new calls and give those in flight this long to
    /// finish before cancelling them (e.g. 30s, 2m).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration, env = "AFD_DRAIN")]
    drain: std::time::Duration,
    /// Serve Prometheus metrics at http://ADDR/metrics, with /healthz and /readyz (e.g.
    /// 127.0.0.1:9465).
    #[arg(long, value_name = "ADDR", env = "AFD_METRICS_ADDR")]
    metrics: Option<std::net::SocketAddr>,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let otlp = match otlp() {
        Ok(otlp) => otlp,
        Err(error) => {
            eprintln!("afd-gateway: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    logging(otlp.as_ref());
    let outcome = run(Cli::parse()).await;
    // The spans and metrics of the last calls go out before the process exits.
    let _ = tokio::task::spawn_blocking(move || {
        afd_runtime::metrics::flush();
        if let Some(otlp) = otlp {
            otlp.shutdown();
        }
    })
    .await;
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("afd-gateway: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The OTLP trace pipeline the `OTEL_*` variables ask for, if any.
fn otlp() -> Result<Option<Otlp>, String> {
    if !afd_runtime::telemetry::traces_requested() {
        return Ok(None);
    }
    Otlp::from_env("afd-gateway").map(Some)
}

/// Logs (upstreams' stderr included) on stderr, as stdout is the MCP transport, filtered by
/// `RUST_LOG` (default `info`, rmcp and the audit trail at `warn`); afd's spans to `otlp`.
fn logging(otlp: Option<&Otlp>) {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(format!(
            "info,rmcp=warn,afd::audit=warn,{}=off",
            afd_runtime::telemetry::TARGET
        ))
    });
    let lines = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(filter);
    let spans = otlp.map(|otlp| {
        otlp.layer().with_filter(
            tracing_subscriber::filter::Targets::new()
                .with_target(afd_runtime::telemetry::TARGET, tracing::Level::TRACE),
        )
    });
    tracing_subscriber::registry()
        .with(lines)
        .with(spans)
        .init();
}

async fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut config = Config::load(&cli.config)?;
    if let Some(dir) = cli.cache_dir {
        config.gateway.cache_dir = Some(dir);
    }
    let options = Options {
        strategy: cli.strategy,
        usage: cli.usage_db.map(UsageStats::open),
    };
    let (gateway, events) = Gateway::new(&config, options)?;
    tokio::spawn(gateway.clone().run_events(events));
    if cli.report {
        let report = afd_gateway::report::measure(&gateway).await?;
        print!("{}", report.render());
        gateway.shutdown();
        return Ok(());
    }
    gateway.warm();
    let metrics = match cli.metrics {
        Some(addr) => Some(metrics_listener(addr, &gateway).await?),
        None => None,
    };
    if let Some(addr) = cli.http {
        let mut options = afd_runtime::mcp::HttpOptions::new(addr);
        if !cli.allowed_host.is_empty() {
            options = options.allowed_hosts(cli.allowed_host);
        }
        match (cli.auth_issuer, cli.auth_audience) {
            (None, None) => {}
            (Some(issuer), Some(audience)) => {
                let mut oauth = afd_runtime::mcp::OAuth::new(issuer, audience);
                if let Some(jwks) = cli.auth_jwks {
                    oauth = oauth.jwks_uri(jwks);
                }
                options = options.oauth(oauth);
            }
            _ => return Err("--auth-issuer and --auth-audience go together".into()),
        }
        let handle = gateway.serve_http(options).await?;
        tracing::info!(servers = gateway.upstreams().len(), url = %handle.url(), "afd-gateway serving over streamable HTTP");
        eprintln!("afd-gateway serving MCP at {}", handle.url());
        afd_runtime::ops::shutdown_signal().await;
        let outcome = gateway.drain().run(cli.drain).await;
        gateway.drain().close();
        handle.shutdown().await;
        gateway.shutdown();
        if let Some(metrics) = metrics {
            metrics.shutdown().await;
        }
        return finished(outcome);
    }
    tracing::info!(
        servers = gateway.upstreams().len(),
        cache = %config.cache_dir().display(),
        "afd-gateway serving over stdio"
    );
    let serving = gateway.serve_stdio();
    tokio::pin!(serving);
    tokio::select! {
        served = &mut serving => served,
        () = afd_runtime::ops::shutdown_signal() => {
            let outcome = gateway.drain().run(cli.drain).await;
            gateway.drain().close();
            gateway.shutdown();
            finished(outcome)
        }
    }
}

/// Records metrics from now on and serves them on `addr`, with the gateway's readiness.
async fn metrics_listener(
    addr: std::net::SocketAddr,
    gateway: &Gateway,
) -> Result<afd_runtime::mcp::MetricsListener, Box<dyn std::error::Error + Send + Sync>> {
    let (prometheus, reader) = afd_runtime::metrics::prometheus()?;
    let provider = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
        .with_reader(reader)
        .build();
    afd_runtime::metrics::install(provider);
    let readiness = gateway.server().readiness().clone();
    let listener = afd_runtime::mcp::MetricsListener::bind(addr, prometheus, readiness).await?;
    eprintln!(
        "afd-gateway metrics at http://{}/metrics",
        listener.local_addr()
    );
    Ok(listener)
}

/// An error when the drain had to cancel calls.
fn finished(outcome: DrainOutcome) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    match outcome {
        DrainOutcome::Finished => Ok(()),
        DrainOutcome::Cancelled { .. } => {
            Err("calls still running at the end of the drain were cancelled".into())
        }
        _ => Err("the drain ended in an unknown way".into()),
    }
}
