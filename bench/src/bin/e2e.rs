//! End to end over real transports: an rmcp client drives a server process over stdio
//! and streamable HTTP and times afd-call of a trivial command (median and p99 of
//! sequential round trips; throughput with 1, 8 and 64 calls in flight), then reads the
//! server's resident memory. Over stdio a second, minimal client ([`afd_bench::raw`]:
//! preformatted request lines, pipelined, responses checked without parsing) measures the
//! servers rather than the client. The same workload runs against the reference TypeScript
//! server's lazy strategy over stdio (`../shared/peer/afd-ts`, built by its `setup.sh`);
//! without node, or without that build, that column is skipped and the output says why.
//!
//! `cargo run -p afd-bench --release --features full --bin e2e -- --commands 80,2000`

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use afd_bench::client::{self, Connection, Error};
use afd_bench::raw::{RawClient, RawStdio};
use afd_bench::{Stats, human, thousands, workload};
use clap::Parser;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

/// Round-trip latency, throughput and memory of MCP servers over stdio and HTTP.
#[derive(Debug, Parser)]
struct Args {
    /// Catalog sizes (the servers are started once per size).
    #[arg(long, value_delimiter = ',', default_values_t = [80, 2_000])]
    commands: Vec<usize>,
    /// Sequential calls timed one by one for the latency figures.
    #[arg(long, default_value_t = 2_000)]
    calls: usize,
    /// Seconds each throughput run lasts.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Calls in flight for the throughput runs.
    #[arg(long, value_delimiter = ',', default_values_t = [1, 8, 64])]
    concurrency: Vec<usize>,
    /// This crate's `serve` binary (default: beside this one).
    #[arg(long)]
    server: Option<PathBuf>,
    /// The reference server's directory (built with its setup.sh).
    #[arg(long, default_value = "../shared/peer/afd-ts")]
    reference: PathBuf,
    /// Skip the reference server.
    #[arg(long)]
    no_reference: bool,
    /// The clients to drive the servers with: `rmcp` (the rmcp client, stdio and HTTP)
    /// and `raw` (the minimal pipelining JSON-RPC client, stdio).
    #[arg(long, value_delimiter = ',', default_values_t = [String::from("rmcp"), String::from("raw")])]
    clients: Vec<String>,
    /// Append the figures as JSON lines to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Serve afd-rs's run-time-built catalogs (`serve --synthetic N`) instead of the
    /// generated ones: for sizes the suite does not compile (10,000).
    #[arg(long)]
    synthetic: bool,
}

/// What one server under one transport measured.
struct Run {
    client: &'static str,
    server: &'static str,
    transport: &'static str,
    commands: usize,
    startup: Duration,
    latency: Stats,
    throughput: Vec<(usize, f64)>,
    memory_kib: Option<(u64, u64)>,
    /// afd-rs served a run-time-built catalog.
    run_time: bool,
}

async fn workload(
    connection: &Connection,
    args: &Args,
) -> Result<(Stats, Vec<(usize, f64)>), Error> {
    let arguments = json!({"command": workload::TRIVIAL, "input": workload::trivial_input()});
    connection
        .timed(
            "afd-call",
            &arguments,
            args.calls,
            &args.concurrency,
            args.seconds,
        )
        .await
}

async fn measure(
    server: &'static str,
    transport: &'static str,
    commands: usize,
    connect: impl AsyncFnOnce() -> Result<Connection, Error>,
    args: &Args,
) -> Result<Run, Error> {
    let started = Instant::now();
    let connection = connect().await?;
    let tools = connection.tools().await?;
    let startup = started.elapsed();
    eprintln!(
        "  {server} over {transport}, {commands} commands: {} tools, ready in {}",
        tools.len(),
        human(startup)
    );
    let (latency, throughput) = workload(&connection, args).await?;
    let memory_kib = connection.pid.and_then(client::memory_kib);
    connection.close().await;
    Ok(Run {
        client: "rmcp",
        server,
        transport,
        commands,
        startup,
        latency,
        throughput,
        memory_kib,
        run_time: false,
    })
}

/// The same workload through the raw client over stdio.
async fn measure_raw(
    server: &'static str,
    commands: usize,
    program: &Path,
    program_args: &[String],
    args: &Args,
) -> Result<Run, Error> {
    let started = Instant::now();
    let mut raw = RawStdio::start(program, program_args).await?;
    let startup = started.elapsed();
    let arguments = json!({"command": workload::TRIVIAL, "input": workload::trivial_input()});
    let mut samples = raw.latency("afd-call", &arguments, 200, args.calls).await?;
    let latency = Stats::of(&mut samples);
    let throughput = raw
        .throughputs("afd-call", &arguments, &args.concurrency, args.seconds)
        .await?;
    let memory_kib = raw.pid.and_then(client::memory_kib);
    eprintln!(
        "  {server} over stdio (raw client), {commands} commands: median {}",
        human(latency.median)
    );
    raw.close().await;
    Ok(Run {
        client: "raw",
        server,
        transport: "stdio",
        commands,
        startup,
        latency,
        throughput,
        memory_kib,
        run_time: false,
    })
}

/// Starts `serve --http 127.0.0.1:0`, reads the URL it prints; the child dies with it.
async fn http_server(
    program: &Path,
    catalog: &[String],
) -> Result<(tokio::process::Child, String), Error> {
    let mut child = tokio::process::Command::new(program)
        .args(catalog)
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).await?;
    Ok((child, line.trim().to_owned()))
}

fn reference_ready(dir: &Path) -> Result<PathBuf, String> {
    let node = which("node").ok_or("node is not installed")?;
    let script = dir.join("bench/shop.mjs");
    if !script.exists() {
        return Err(format!("{} is missing", script.display()));
    }
    if !dir.join("packages/server/dist").exists() {
        return Err(format!(
            "the reference is not built: run {}/setup.sh",
            dir.display()
        ));
    }
    Ok(node)
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|path| path.is_file())
    })
}

fn row(run: &Run) -> String {
    let throughput: Vec<String> = run
        .throughput
        .iter()
        .map(|(_, rate)| format!("{}/s", thousands(rate.round() as usize)))
        .collect();
    let memory = run.memory_kib.map_or_else(
        || "-".to_owned(),
        |(rss, hwm)| {
            format!(
                "{:.1} MiB (peak {:.1})",
                rss as f64 / 1024.0,
                hwm as f64 / 1024.0
            )
        },
    );
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        run.client,
        run.server,
        run.transport,
        commands_label(run),
        human(run.latency.median),
        human(run.latency.p99),
        throughput.join(" / "),
        memory,
        human(run.startup),
    )
}

/// `2,000`, or `10,000 (run-time)` for a run-time-built catalog.
fn commands_label(run: &Run) -> String {
    if run.run_time {
        format!("{} (run-time)", thousands(run.commands))
    } else {
        thousands(run.commands)
    }
}

fn to_json(run: &Run) -> Value {
    json!({
        "bench": "e2e",
        "client": run.client,
        "server": run.server,
        "transport": run.transport,
        "commands": run.commands,
        "catalog": if run.run_time { "run-time" } else { "generated" },
        "startup_us": run.startup.as_micros() as u64,
        "calls": run.latency.count,
        "median_us": run.latency.median.as_secs_f64() * 1e6,
        "p99_us": run.latency.p99.as_secs_f64() * 1e6,
        "throughput": run.throughput.iter().map(|(c, r)| json!({"inflight": c, "calls_per_s": r})).collect::<Vec<_>>(),
        "rss_kib": run.memory_kib.map(|m| m.0),
        "hwm_kib": run.memory_kib.map(|m| m.1),
    })
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let args = Args::parse();
    let server = match &args.server {
        Some(path) => path.clone(),
        None => std::env::current_exe()?.with_file_name("serve"),
    };
    if !server.exists() {
        return Err(format!(
            "{} is missing: cargo build -p afd-bench --release --features full --bins",
            server.display()
        )
        .into());
    }
    let reference = if args.no_reference {
        Err("skipped (--no-reference)".to_owned())
    } else {
        reference_ready(&args.reference)
    };
    if let Err(why) = &reference {
        eprintln!("reference TypeScript server: skipped: {why}");
    }
    let rmcp = args.clients.iter().any(|c| c == "rmcp");
    let raw = args.clients.iter().any(|c| c == "raw");
    let mut runs = Vec::new();
    for &n in &args.commands {
        let catalog = if args.synthetic {
            "--synthetic"
        } else {
            "--commands"
        };
        let stdio_args = vec![catalog.to_owned(), n.to_string()];
        let node_args = vec![
            args.reference.join("bench/shop.mjs").display().to_string(),
            "--strategy".to_owned(),
            "lazy".to_owned(),
            "--commands".to_owned(),
            n.to_string(),
        ];
        if rmcp {
            runs.push(
                measure(
                    "afd-rs",
                    "stdio",
                    n,
                    async || Connection::stdio(&server, &stdio_args).await,
                    &args,
                )
                .await?,
            );
            let (child, url) = http_server(&server, &stdio_args).await?;
            let pid = child.id();
            runs.push(
                measure(
                    "afd-rs",
                    "http",
                    n,
                    async || Connection::http(&url, pid).await,
                    &args,
                )
                .await?,
            );
            drop(child);
            if let Ok(node) = &reference {
                runs.push(
                    measure(
                        "afd-ts",
                        "stdio",
                        n,
                        async || Connection::stdio(node, &node_args).await,
                        &args,
                    )
                    .await?,
                );
            }
        }
        if raw {
            runs.push(measure_raw("afd-rs", n, &server, &stdio_args, &args).await?);
            if let Ok(node) = &reference {
                runs.push(measure_raw("afd-ts", n, node, &node_args, &args).await?);
            }
        }
    }

    for run in &mut runs {
        run.run_time = args.synthetic && run.server == "afd-rs";
    }
    let inflight: Vec<String> = args.concurrency.iter().map(|c| c.to_string()).collect();
    println!(
        "\nafd-call {} {} ({} sequential calls; throughput over {} s each)\n",
        workload::TRIVIAL,
        workload::trivial_input(),
        args.calls,
        args.seconds
    );
    println!(
        "| client | server | transport | commands | median | p99 | throughput ({} in flight) | server RSS after | ready in |",
        inflight.join(" / ")
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for run in &runs {
        println!("{}", row(run));
    }
    match &reference {
        Ok(_) => {
            println!(
                "\nafd-rs over stdio against the reference over stdio, same client (higher is better):\n"
            );
            println!(
                "| client | commands | latency median (ref/rs) | p99 (ref/rs) | throughput ({} in flight, rs/ref) | RSS (ref/rs) |",
                inflight.join(" / ")
            );
            println!("|---|---|---|---|---|---|");
            for client in ["rmcp", "raw"] {
                for &n in &args.commands {
                    let find = |server: &str| {
                        runs.iter().find(|r| {
                            r.client == client
                                && r.server == server
                                && r.transport == "stdio"
                                && r.commands == n
                        })
                    };
                    let (Some(rs), Some(ts)) = (find("afd-rs"), find("afd-ts")) else {
                        continue;
                    };
                    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
                    let rates: Vec<String> = rs
                        .throughput
                        .iter()
                        .zip(&ts.throughput)
                        .map(|((_, a), (_, b))| format!("{:.1}x", a / b))
                        .collect();
                    let memory = match (rs.memory_kib, ts.memory_kib) {
                        (Some(a), Some(b)) => format!("{:.1}x", b.0 as f64 / a.0 as f64),
                        _ => "-".to_owned(),
                    };
                    println!(
                        "| {client} | {} | {:.1}x | {:.1}x | {} | {} |",
                        thousands(n),
                        ratio(ts.latency.median, rs.latency.median),
                        ratio(ts.latency.p99, rs.latency.p99),
                        rates.join(" / "),
                        memory
                    );
                }
            }
        }
        Err(why) => println!("\nreference TypeScript server: skipped ({why})"),
    }
    if let Some(path) = &args.json {
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        for run in &runs {
            writeln!(file, "{}", to_json(run))?;
        }
    }
    Ok(())
}
