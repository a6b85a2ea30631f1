//! Every peer side by side, one harness, one run: the same 80-command catalog (the
//! reference's shop, same inputs, same trivial handlers) served by afd-rs (lazy through
//! afd-call, individual through a direct call), rmcp's own `#[tool_router]` server, the
//! official TypeScript SDK's `McpServer`, FastMCP, the reference TypeScript AFD server,
//! and the floor (a minimal server answering a fixed result: what the machine allows).
//! Each over stdio and streamable HTTP where it serves them, driven by the raw clients
//! ([`afd_bench::raw`]): start-up time, the listing's o200k tokens (each tool as
//! `{name, description, input_schema}`), median and p99 of sequential calls, throughput
//! at 1, 8 and 64 calls in flight, and resident memory at rest and after the run. Then
//! the same calls through rmcp's client (`--clients rmcp`), which prefers the stateless
//! protocol and falls back to a session where a peer does not speak it. Prints a Markdown
//! table per transport and client with each figure's ratio to afd-rs and to the floor.
//!
//! The peers are built and started as bench/peers/README.md says; `bench/peers/run.sh`
//! builds them and runs this. A peer that is not built is skipped, and the output says why.
//!
//! `cargo run -p afd-bench --release --bin peers -- [--calls 2000] [--seconds 3]`

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use afd_bench::raw::{RawClient, RawHttp, RawStdio};
use afd_bench::{Stats, client, human, workload};
use afd_examples::report::TokenCounter;
use clap::Parser;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

/// Every peer over stdio and streamable HTTP, side by side.
#[derive(Debug, Parser)]
struct Args {
    /// Sequential calls timed one by one for the latency figures (after 200 untimed).
    #[arg(long, default_value_t = 2_000)]
    calls: usize,
    /// Seconds each throughput run lasts.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Calls in flight for the throughput runs.
    #[arg(long, value_delimiter = ',', default_values_t = [1, 8, 64])]
    concurrency: Vec<usize>,
    /// The peers to run (default: all): afd-lazy, afd-individual, shop-order-list,
    /// shop-plan-list, rmcp, ts-sdk, fastmcp, reference, floor.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// The transports: stdio, http.
    #[arg(long, value_delimiter = ',', default_values_t = [String::from("stdio"), String::from("http")])]
    transports: Vec<String>,
    /// The peers' directory.
    #[arg(long, default_value = "bench/peers")]
    peers: PathBuf,
    /// The reference server's directory (built with its setup.sh).
    #[arg(long, default_value = "../shared/peer/afd-ts")]
    reference: PathBuf,
    /// Where this workspace's release binaries are (`serve`, the rmcp peer, the floor).
    #[arg(long, default_value = "target/release")]
    bin: PathBuf,
    /// Append the figures as JSON lines to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// The clients: `raw` (minimal, pipelining) and `rmcp` (rmcp's own client).
    #[arg(long, value_delimiter = ',', default_values_t = [String::from("raw"), String::from("rmcp")])]
    clients: Vec<String>,
}

/// How to start one peer and what to call on it.
struct Peer {
    /// What `--only` names it by.
    key: &'static str,
    name: &'static str,
    /// The program and its arguments over stdio; `None`: not served over stdio.
    stdio: Option<Vec<String>>,
    /// The same for HTTP, `{port}` standing for the port; and whether it takes the
    /// stateless protocol (2026-07-28) rather than a session.
    http: Option<(Vec<String>, bool)>,
    /// The tool called and its arguments.
    tool: &'static str,
    arguments: Value,
    /// Why it cannot run, if it cannot.
    missing: Option<String>,
}

/// What one peer measured over one transport.
struct Run {
    peer: &'static str,
    transport: &'static str,
    startup: Duration,
    tools: usize,
    tokens: usize,
    latency: Stats,
    throughput: Vec<(usize, f64)>,
    rest_kib: Option<u64>,
    after_kib: Option<u64>,
    /// The same calls through rmcp's client: the protocol it settled on, the latency and
    /// the rates; or why it could not run.
    rmcp: Option<Result<Timed, String>>,
}

/// What rmcp's client measured of one peer.
struct Timed {
    protocol: String,
    latency: Stats,
    throughput: Vec<(usize, f64)>,
}

impl Run {
    /// The figures of `peer` over `transport`: its start-up and listing, its latency
    /// samples, its rates and its memory at rest and after.
    fn of(
        peer: &Peer,
        transport: &'static str,
        (startup, tools): (Duration, &[Value]),
        mut samples: Vec<Duration>,
        throughput: Vec<(usize, f64)>,
        (rest_kib, after_kib): (Option<u64>, Option<u64>),
        counter: &TokenCounter,
    ) -> Run {
        Run {
            peer: peer.name,
            transport,
            startup,
            tools: tools.len(),
            tokens: tokens(tools, counter),
            latency: Stats::of(&mut samples),
            throughput,
            rest_kib,
            after_kib,
            rmcp: None,
        }
    }
}

/// The calls of `peer` through rmcp's client on `connection`.
async fn through_rmcp(
    peer: &Peer,
    args: &Args,
    connection: Result<client::Connection, client::Error>,
) -> Result<Timed, String> {
    let connection = connection.map_err(|error| error.to_string())?;
    let protocol = connection.protocol().unwrap_or_default();
    let timed = connection
        .timed(
            peer.tool,
            &peer.arguments,
            args.calls,
            &args.concurrency,
            args.seconds,
        )
        .await;
    connection.close().await;
    let (latency, throughput) = timed.map_err(|error| error.to_string())?;
    Ok(Timed {
        protocol,
        latency,
        throughput,
    })
}

/// Whether `args` ask for rmcp's client, and `peer` is one it can talk to (the floor
/// answers nothing but a call).
fn wants_rmcp(peer: &Peer, args: &Args) -> bool {
    peer.key != "floor" && args.clients.iter().any(|client| client == "rmcp")
}

fn program(path: &Path) -> String {
    path.display().to_string()
}

fn peers(args: &Args) -> Vec<Peer> {
    let bin = |name: &str| args.bin.join(name);
    let exists = |path: &Path, how: &str| {
        (!path.exists()).then(|| format!("{} is missing: {how}", path.display()))
    };
    let call = json!({"command": workload::TRIVIAL, "input": workload::trivial_input()});
    let serve = bin("serve");
    let afd = |strategy: &str| {
        let mut stdio = vec![program(&serve), "--commands".into(), "80".into()];
        stdio.extend(["--strategy".into(), strategy.into()]);
        let mut http = stdio.clone();
        http.extend(["--http".into(), "127.0.0.1:{port}".into()]);
        (Some(stdio), Some((http, true)))
    };
    let build_afd = exists(&serve, "cargo build --release -p afd-bench --bin serve");
    let (lazy_stdio, lazy_http) = afd("lazy");
    let (individual_stdio, individual_http) = afd("individual");
    // The shop example's own commands on its SQLite store (a database file, so that reads
    // take the read pool), beside the trivial command: what a real handler costs.
    let shop = bin("examples/shop");
    let shop_db =
        std::env::temp_dir().join(format!("afd-peers-shop-{}.sqlite3", std::process::id()));
    let shop_peer = |lazy_call: Value| {
        let stdio = vec![
            program(&shop),
            "--db".into(),
            program(&shop_db),
            "serve".into(),
            "--strategy".into(),
            "lazy".into(),
        ];
        let mut http = stdio.clone();
        http.extend(["--http".into(), "127.0.0.1:{port}".into()]);
        (Some(stdio), Some((http, true)), lazy_call)
    };
    let build_shop = exists(
        &shop,
        "cargo build --release -p afd-examples --example shop",
    );
    let (shop_orders_stdio, shop_orders_http, shop_orders) =
        shop_peer(json!({"command": "order-list", "input": {"limit": 1}}));
    let (shop_plans_stdio, shop_plans_http, shop_plans) =
        shop_peer(json!({"command": "plan-list", "input": {}}));
    let rmcp = bin("rmcp-shop");
    let floor_stdio = bin("floor-stdio");
    let floor_http = bin("floor-http");
    let node = which("node");
    let ts = args.peers.join("ts-sdk/server.mjs");
    let fastmcp = args.peers.join("fastmcp/.venv/bin/python");
    let reference = args.reference.join("bench/shop.mjs");
    let node_missing = |script: &Path, how: &str| match &node {
        None => Some("node is not installed".to_owned()),
        Some(_) => exists(script, how),
    };
    let node_program = node.as_deref().map(program).unwrap_or_default();
    vec![
        Peer {
            key: "afd-lazy",
            name: "afd-rs lazy (afd-call)",
            stdio: lazy_stdio,
            http: lazy_http,
            tool: "afd-call",
            arguments: call.clone(),
            missing: build_afd.clone(),
        },
        Peer {
            key: "afd-individual",
            name: "afd-rs individual",
            stdio: individual_stdio,
            http: individual_http,
            tool: workload::TRIVIAL,
            arguments: workload::trivial_input(),
            missing: build_afd,
        },
        Peer {
            key: "shop-order-list",
            name: "afd-rs shop order-list {limit: 1}",
            stdio: shop_orders_stdio,
            http: shop_orders_http,
            tool: "afd-call",
            arguments: shop_orders,
            missing: build_shop.clone(),
        },
        Peer {
            key: "shop-plan-list",
            name: "afd-rs shop plan-list",
            stdio: shop_plans_stdio,
            http: shop_plans_http,
            tool: "afd-call",
            arguments: shop_plans,
            missing: build_shop,
        },
        Peer {
            key: "rmcp",
            name: "rmcp #[tool_router]",
            stdio: Some(vec![program(&rmcp), "--stdio".into()]),
            http: Some((
                vec![program(&rmcp), "--http".into(), "127.0.0.1:{port}".into()],
                true,
            )),
            tool: workload::TRIVIAL,
            arguments: workload::trivial_input(),
            missing: exists(&rmcp, "bench/peers/run.sh builds it"),
        },
        Peer {
            key: "ts-sdk",
            name: "TypeScript SDK McpServer",
            stdio: Some(vec![node_program.clone(), program(&ts), "--stdio".into()]),
            http: Some((
                vec![
                    node_program.clone(),
                    program(&ts),
                    "--http".into(),
                    "{port}".into(),
                ],
                false,
            )),
            tool: workload::TRIVIAL,
            arguments: workload::trivial_input(),
            missing: node_missing(&ts, "npm ci in bench/peers/ts-sdk"),
        },
        Peer {
            key: "fastmcp",
            name: "FastMCP",
            stdio: Some(vec![
                program(&fastmcp),
                program(&args.peers.join("fastmcp/server.py")),
                "--stdio".into(),
            ]),
            http: Some((
                vec![
                    program(&fastmcp),
                    program(&args.peers.join("fastmcp/server.py")),
                    "--http".into(),
                    "{port}".into(),
                ],
                false,
            )),
            tool: workload::TRIVIAL,
            arguments: workload::trivial_input(),
            missing: exists(&fastmcp, "bench/peers/run.sh makes its venv"),
        },
        Peer {
            key: "reference",
            name: "reference TypeScript AFD (lazy)",
            stdio: Some(vec![
                node_program,
                program(&reference),
                "--strategy".into(),
                "lazy".into(),
                "--commands".into(),
                "80".into(),
            ]),
            http: None,
            tool: "afd-call",
            arguments: call,
            missing: node_missing(&reference, "run its setup.sh").or_else(|| {
                (!args.reference.join("packages/server/dist").exists())
                    .then(|| "the reference is not built: run its setup.sh".to_owned())
            }),
        },
        Peer {
            key: "floor",
            name: "floor",
            stdio: Some(vec![program(&floor_stdio)]),
            http: Some((vec![program(&floor_http), "127.0.0.1:{port}".into()], true)),
            tool: workload::TRIVIAL,
            arguments: workload::trivial_input(),
            missing: exists(&floor_http, "bench/peers/run.sh builds it"),
        },
    ]
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|path| path.is_file())
    })
}

/// The o200k tokens of the tools as a model is sent them: `{name, description,
/// input_schema}` each.
fn tokens(tools: &[Value], counter: &TokenCounter) -> usize {
    let visible: Vec<Value> = tools
        .iter()
        .map(|tool| {
            json!({
                "name": tool["name"],
                "description": tool["description"],
                "input_schema": tool["inputSchema"],
            })
        })
        .collect();
    counter.count_json(&Value::Array(visible))
}

fn rss(pid: Option<u32>) -> Option<u64> {
    pid.and_then(client::memory_kib).map(|(rss, _)| rss)
}

/// What a run times, the same over either transport: `args.calls` sequential calls after
/// 200 untimed, then calls per second at each of `args.concurrency` in flight.
async fn timed(
    raw: &mut impl RawClient,
    peer: &Peer,
    args: &Args,
) -> Result<(Vec<Duration>, Vec<(usize, f64)>), client::Error> {
    let samples = raw
        .latency(peer.tool, &peer.arguments, 200, args.calls)
        .await?;
    let throughput = raw
        .throughputs(peer.tool, &peer.arguments, &args.concurrency, args.seconds)
        .await?;
    Ok((samples, throughput))
}

async fn over_stdio(
    peer: &Peer,
    args: &Args,
    counter: &TokenCounter,
) -> Result<Run, client::Error> {
    let command = peer.stdio.as_ref().ok_or("not served over stdio")?;
    let started = Instant::now();
    let mut raw = RawStdio::start(Path::new(&command[0]), &command[1..]).await?;
    let tools = raw.tools().await?;
    let startup = started.elapsed();
    let rest_kib = rss(raw.pid);
    let (samples, throughput) = timed(&mut raw, peer, args).await?;
    let after_kib = rss(raw.pid);
    raw.close().await;
    let memory = (rest_kib, after_kib);
    let mut run = Run::of(
        peer,
        "stdio",
        (startup, &tools),
        samples,
        throughput,
        memory,
        counter,
    );
    if wants_rmcp(peer, args) {
        let connection = client::Connection::stdio_auto(Path::new(&command[0]), &command[1..]);
        run.rmcp = Some(through_rmcp(peer, args, connection.await).await);
    }
    Ok(run)
}

async fn over_http(peer: &Peer, args: &Args, counter: &TokenCounter) -> Result<Run, client::Error> {
    let (command, stateless) = peer.http.as_ref().ok_or("not served over HTTP")?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let command: Vec<String> = command
        .iter()
        .map(|arg| arg.replace("{port}", &port.to_string()))
        .collect();
    let started = Instant::now();
    let mut child: Child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let url = format!("http://127.0.0.1:{port}/mcp");
    // Up once it answers: start-up is the time to the first listing.
    let (mut raw, tools) = loop {
        let attempt = async {
            let mut raw = RawHttp::connect(&url, *stateless).await?;
            let tools = raw.tools().await?;
            Ok::<_, client::Error>((raw, tools))
        };
        match attempt.await {
            Ok(up) => break up,
            Err(error) if started.elapsed() > Duration::from_secs(30) => {
                return Err(format!("not up within 30 s: {error}").into());
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    };
    let startup = started.elapsed();
    let rest_kib = rss(child.id());
    let (samples, throughput) = timed(&mut raw, peer, args).await?;
    let after_kib = rss(child.id());
    let memory = (rest_kib, after_kib);
    let listing = (startup, tools.as_slice());
    let mut run = Run::of(
        peer,
        "streamable HTTP",
        listing,
        samples,
        throughput,
        memory,
        counter,
    );
    if wants_rmcp(peer, args) {
        let connection = client::Connection::auto(&url, child.id());
        run.rmcp = Some(through_rmcp(peer, args, connection.await).await);
    }
    let _ = child.kill().await;
    Ok(run)
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(
        || "-".to_owned(),
        |kib| format!("{:.1}", kib as f64 / 1024.0),
    )
}

/// `ours` over `theirs` where larger is better (throughput), or the inverse.
fn ratio(ours: f64, theirs: f64) -> String {
    if theirs > 0.0 && ours > 0.0 {
        format!("{:.2}x", ours / theirs)
    } else {
        "-".to_owned()
    }
}

fn print(runs: &[Run], concurrency: &[usize]) {
    for transport in ["stdio", "streamable HTTP"] {
        let of: Vec<&Run> = runs
            .iter()
            .filter(|run| run.transport == transport)
            .collect();
        if of.is_empty() {
            continue;
        }
        println!("\n### {transport}\n");
        let mut head = String::from("| peer | tools | tokens | start-up | median | p99 |");
        let mut rule = String::from("|---|---:|---:|---:|---:|---:|");
        for n in concurrency {
            head.push_str(&format!(" calls/s at {n} |"));
            rule.push_str("---:|");
        }
        head.push_str(" RSS at rest (MiB) | RSS after (MiB) | afd-rs median: ratio | afd-rs calls/s at 64: ratio | median over floor |");
        rule.push_str("---:|---:|---:|---:|---:|");
        println!("{head}\n{rule}");
        let afd = of.iter().find(|run| run.peer.starts_with("afd-rs lazy"));
        let floor = of.iter().find(|run| run.peer == "floor");
        for run in &of {
            let mut row = format!(
                "| {} | {} | {} | {} | {} | {} |",
                run.peer,
                run.tools,
                run.tokens,
                human(run.startup),
                human(run.latency.median),
                human(run.latency.p99)
            );
            for (_, rate) in &run.throughput {
                row.push_str(&format!(" {rate:.0} |"));
            }
            let last = |run: &Run| run.throughput.last().map_or(0.0, |(_, rate)| *rate);
            row.push_str(&format!(
                " {} | {} | {} | {} | {} |",
                mib(run.rest_kib),
                mib(run.after_kib),
                afd.map_or("-".into(), |afd| ratio(
                    run.latency.median.as_secs_f64(),
                    afd.latency.median.as_secs_f64()
                )),
                afd.map_or("-".into(), |afd| ratio(last(afd), last(run))),
                floor.map_or("-".into(), |floor| ratio(
                    run.latency.median.as_secs_f64(),
                    floor.latency.median.as_secs_f64()
                )),
            ));
            println!("{row}");
        }
    }
    for transport in ["stdio", "streamable HTTP"] {
        let of: Vec<(&Run, &Timed)> = runs
            .iter()
            .filter(|run| run.transport == transport)
            .filter_map(|run| match &run.rmcp {
                Some(Ok(timed)) => Some((run, timed)),
                _ => None,
            })
            .collect();
        if of.is_empty() {
            continue;
        }
        println!("\n### {transport}, rmcp's client\n");
        let mut head = String::from("| peer | protocol | median | p99 |");
        let mut rule = String::from("|---|---|---:|---:|");
        for n in concurrency {
            head.push_str(&format!(" calls/s at {n} |"));
            rule.push_str("---:|");
        }
        head.push_str(" afd-rs median: ratio | afd-rs calls/s at 64: ratio |");
        rule.push_str("---:|---:|");
        println!("{head}\n{rule}");
        let afd = of
            .iter()
            .find(|(run, _)| run.peer.starts_with("afd-rs lazy"))
            .map(|(_, timed)| *timed);
        let last = |timed: &Timed| timed.throughput.last().map_or(0.0, |(_, rate)| *rate);
        for (run, timed) in &of {
            let mut row = format!(
                "| {} | {} | {} | {} |",
                run.peer,
                timed.protocol,
                human(timed.latency.median),
                human(timed.latency.p99)
            );
            for (_, rate) in &timed.throughput {
                row.push_str(&format!(" {rate:.0} |"));
            }
            row.push_str(&format!(
                " {} | {} |",
                afd.map_or("-".into(), |afd| ratio(
                    timed.latency.median.as_secs_f64(),
                    afd.latency.median.as_secs_f64()
                )),
                afd.map_or("-".into(), |afd| ratio(last(afd), last(timed))),
            ));
            println!("{row}");
        }
    }
    for run in runs {
        if let Some(Err(why)) = &run.rmcp {
            println!(
                "\n{} over {}, rmcp's client: {why}",
                run.peer, run.transport
            );
        }
    }
    println!(
        "\nRatios: a peer's median over afd-rs's (above 1: afd-rs is faster), afd-rs's \
         throughput at the highest concurrency over the peer's (above 1: afd-rs is faster), \
         and a median over the floor's."
    );
}

#[tokio::main]
async fn main() -> Result<(), client::Error> {
    let args = Args::parse();
    let counter = TokenCounter::o200k();
    let mut runs = Vec::new();
    for peer in peers(&args) {
        if !args.only.is_empty() && !args.only.iter().any(|only| only == peer.key) {
            continue;
        }
        if let Some(why) = &peer.missing {
            eprintln!("{}: skipped: {why}", peer.name);
            continue;
        }
        for transport in &args.transports {
            let run = match transport.as_str() {
                "stdio" if peer.stdio.is_some() => over_stdio(&peer, &args, &counter).await,
                "http" if peer.http.is_some() => over_http(&peer, &args, &counter).await,
                _ => continue,
            };
            match run {
                Ok(run) => {
                    eprintln!(
                        "  {} over {}: median {}, {:.0} calls/s at {}",
                        run.peer,
                        run.transport,
                        human(run.latency.median),
                        run.throughput.last().map_or(0.0, |(_, rate)| *rate),
                        args.concurrency.last().copied().unwrap_or(1)
                    );
                    if let Some(path) = &args.json {
                        let line = json!({
                            "bench": "peers", "peer": run.peer, "transport": run.transport,
                            "startup_us": run.startup.as_micros() as u64,
                            "tools": run.tools, "tokens": run.tokens,
                            "median_us": run.latency.median.as_secs_f64() * 1e6,
                            "p99_us": run.latency.p99.as_secs_f64() * 1e6,
                            "throughput": run.throughput,
                            "rss_rest_kib": run.rest_kib, "rss_after_kib": run.after_kib,
                            "rmcp": match &run.rmcp {
                                Some(Ok(timed)) => json!({
                                    "protocol": timed.protocol,
                                    "median_us": timed.latency.median.as_secs_f64() * 1e6,
                                    "p99_us": timed.latency.p99.as_secs_f64() * 1e6,
                                    "throughput": timed.throughput,
                                }),
                                Some(Err(why)) => json!({"error": why}),
                                None => Value::Null,
                            },
                        });
                        use std::io::Write as _;
                        let mut file = std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(path)?;
                        writeln!(file, "{line}")?;
                    }
                    runs.push(run);
                }
                Err(error) => eprintln!("{} over {transport}: failed: {error}", peer.name),
            }
        }
    }
    println!(
        "\nEvery peer, the same 80-command catalog; {} sequential calls, \
         {} s per throughput run.",
        args.calls, args.seconds
    );
    print(&runs, &args.concurrency);
    Ok(())
}
