//! Soak and load over streamable HTTP (loopback): starts the shop server (this crate's
//! `serve --shop`, built with this binary) and drives hundreds of concurrent sessions
//! mixing discover, detail, call, batch, pipe and context enter/exit for minutes
//! ([`afd_bench::soak`]), every answer checked against its request, while sampling the
//! server's resident memory from `/proc/PID/status`. Then floods it with `initialize`
//! beyond its session bound (each refusal must be a 503 naming the limit) and waits for the
//! idle sessions to expire (requests on them must get 404, and new sessions open again).
//! With `--stateless-seconds`, a second phase keeps `--inflight` stateless calls
//! (2026-07-28, the direct path) of afd-call in flight on kept-alive connections for that
//! long, every answer checked. Prints p50/p99 latency per kind of request and memory over
//! time; exits 1 on any unexpected answer.
//!
//! `cargo run -p afd-bench --release --bin soak -- --sessions 300 --seconds 180`
//! `cargo run -p afd-bench --release --bin soak -- --seconds 60 --stateless-seconds 600`

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use afd_bench::client::{Error, memory_kib};
use afd_bench::raw::{RawClient, RawHttp};
use afd_bench::soak::{self, Plan, Raw};
use afd_bench::{Stats, human, thousands, workload};
use clap::Parser;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::watch;

/// Soak the shop over streamable HTTP.
#[derive(Debug, Parser)]
struct Args {
    /// Concurrent sessions.
    #[arg(long, default_value_t = 300)]
    sessions: usize,
    /// How long the sessions send, in seconds.
    #[arg(long, default_value_t = 180)]
    seconds: u64,
    /// Cycles (nine requests each) a session runs before it is closed and reopened.
    #[arg(long, default_value_t = 20)]
    cycles_per_session: usize,
    /// The server's session bound (above --sessions, so the load fits).
    #[arg(long, default_value_t = 400)]
    max_sessions: usize,
    /// The server's idle timeout, in seconds.
    #[arg(long, default_value_t = 15)]
    idle_secs: u64,
    /// Seconds between memory samples.
    #[arg(long, default_value_t = 10)]
    sample_secs: u64,
    /// Seconds of load before memory counts as warm.
    #[arg(long, default_value_t = 30)]
    warm_up_secs: u64,
    /// This crate's `serve` binary (default: beside this one).
    #[arg(long)]
    server: Option<PathBuf>,
    /// Seconds of stateless calls after the session load (0: none).
    #[arg(long, default_value_t = 0)]
    stateless_seconds: u64,
    /// Stateless calls in flight, one kept-alive connection each.
    #[arg(long, default_value_t = 64)]
    inflight: usize,
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args = Args::parse();
    if args.max_sessions <= args.sessions {
        return Err("--max-sessions must be above --sessions, so the load fits".into());
    }
    let server = match &args.server {
        Some(path) => path.clone(),
        None => std::env::current_exe()?.with_file_name("serve"),
    };
    let mut child = tokio::process::Command::new(&server)
        .args(["--shop", "--http", "127.0.0.1:0"])
        .args(["--max-sessions", &args.max_sessions.to_string()])
        .args(["--session-idle-secs", &args.idle_secs.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{}: {e}", server.display()))?;
    let pid = child.id().ok_or("the server exited")?;
    let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .map_err(|_| "the server printed no URL")??
        .ok_or("the server printed no URL")?;
    println!(
        "shop (serve --shop, pid {pid}) at {url}: {} sessions for {} s, session bound {}, idle timeout {} s",
        args.sessions, args.seconds, args.max_sessions, args.idle_secs
    );

    // Memory samples until told to stop: (seconds since start, phase, VmRSS KiB).
    let started = Instant::now();
    let (phase_tx, phase_rx) = watch::channel("start");
    let sampler = {
        let every = Duration::from_secs(args.sample_secs);
        let mut phase_rx = phase_rx.clone();
        tokio::spawn(async move {
            let mut samples = Vec::new();
            loop {
                let phase = *phase_rx.borrow();
                if let Some((rss, _)) = memory_kib(pid) {
                    samples.push((started.elapsed().as_secs(), phase, rss));
                }
                if phase == "done" {
                    break;
                }
                tokio::select! {
                    () = tokio::time::sleep(every) => {}
                    _ = phase_rx.changed() => {}
                }
            }
            samples
        })
    };

    phase_tx.send_replace("load");
    let plan = Plan {
        url: url.clone(),
        sessions: args.sessions,
        duration: Duration::from_secs(args.seconds),
        cycles_per_session: args.cycles_per_session,
    };
    let load = soak::drive(&plan).await?;
    let load_secs = started.elapsed().as_secs_f64();
    let mut failed = load.failures > 0;

    println!(
        "\nload: {} requests answered as asked, {} failures, {} sessions opened, {:.0} requests/s",
        thousands(load.ok),
        load.failures,
        thousands(load.sessions_opened),
        load.ok as f64 / load_secs
    );
    for example in &load.examples {
        println!("  FAILURE {example}");
    }
    println!("\n| request | count | p50 | p99 | max |\n|---|---:|---:|---:|---:|");
    for (kind, samples) in load.latencies {
        let mut samples = samples;
        let stats = Stats::of(&mut samples);
        let max = samples.last().copied().unwrap_or_default();
        println!(
            "| {kind} | {} | {} | {} | {} |",
            thousands(stats.count),
            human(stats.median),
            human(stats.p99),
            human(max)
        );
    }

    // Stateless calls, in rounds as long as the memory samples' interval: every answer must
    // be a success, or the run fails.
    if args.stateless_seconds > 0 {
        phase_tx.send_replace("stateless");
        let mut client = RawHttp::connect(&url, true).await?;
        let arguments =
            serde_json::json!({"command": workload::TRIVIAL, "input": workload::trivial_input()});
        let round = args.sample_secs.max(1) as f64;
        let phase = Instant::now();
        let mut calls = 0.0;
        while phase.elapsed().as_secs_f64() < args.stateless_seconds as f64 {
            let rate = client
                .throughput("afd-call", &arguments, args.inflight, round)
                .await
                .map_err(|error| format!("a stateless call failed: {error}"))?;
            calls += rate * round;
        }
        let secs = phase.elapsed().as_secs_f64();
        println!(
            "\nstateless: {} afd-call answered as asked, {} in flight, {secs:.0} s, {:.0} calls/s",
            thousands(calls as usize),
            args.inflight,
            calls / secs
        );
    }

    // The flood: every load session was closed, so the whole bound is free.
    phase_tx.send_replace("flood");
    let raw = Arc::new(Raw::new(&url));
    let extra = 100;
    let flood = soak::flood(&raw, (args.max_sessions + extra) as u64).await?;
    println!(
        "\nflood: {} initialize at once: {} sessions opened, {} refused (503), {} unexpected",
        args.max_sessions + extra,
        flood.opened.len(),
        flood.refused,
        flood.unexpected.len()
    );
    if let Some(message) = &flood.message {
        println!(
            "  refusal: {message} (Retry-After: {})",
            flood.retry_after.as_deref().unwrap_or("none")
        );
    }
    for unexpected in flood.unexpected.iter().take(5) {
        println!("  UNEXPECTED {unexpected}");
    }
    if flood.opened.len() != args.max_sessions || flood.refused != extra {
        println!(
            "  FAILURE: expected {} opened and {extra} refused",
            args.max_sessions
        );
        failed = true;
    }
    failed |= !flood.unexpected.is_empty();

    // Expiry: leave the flood's sessions idle past the timeout.
    phase_tx.send_replace("idle");
    tokio::time::sleep(Duration::from_secs(args.idle_secs + 5)).await;
    phase_tx.send_replace("expired");
    let mut expired = 0;
    for session in &flood.opened {
        if raw.list(session).await?.status == 404 {
            expired += 1;
        }
    }
    let fresh = soak::flood(&raw, 1).await?;
    let reopened = fresh.opened.len() == 1;
    println!(
        "expiry: after {} s idle, {expired} of {} sessions answer 404; a new session opens: {reopened}",
        args.idle_secs + 5,
        flood.opened.len()
    );
    failed |= expired != flood.opened.len() || !reopened;
    for session in &fresh.opened {
        raw.delete(session).await?;
    }

    phase_tx.send_replace("done");
    let samples = sampler.await?;
    child.kill().await?;
    println!("\nserver memory (VmRSS, MiB) over time\n\n| s | phase | RSS |\n|---:|---|---:|");
    for (secs, phase, rss) in &samples {
        println!("| {secs} | {phase} | {:.1} |", *rss as f64 / 1024.0);
    }
    let warm: Vec<u64> = samples
        .iter()
        .filter(|(secs, phase, _)| *phase == "load" && *secs >= args.warm_up_secs)
        .map(|(_, _, rss)| *rss)
        .collect();
    let stateless: Vec<u64> = samples
        .iter()
        .filter(|(_, phase, _)| *phase == "stateless")
        .skip(1)
        .map(|(_, _, rss)| *rss)
        .collect();
    if let (Some(first), Some(last), Some(max)) =
        (stateless.first(), stateless.last(), stateless.iter().max())
    {
        println!(
            "stateless phase after its first round: first {:.1} MiB, last {:.1} MiB, highest {:.1} MiB ({:+.1} % first to last)",
            *first as f64 / 1024.0,
            *last as f64 / 1024.0,
            *max as f64 / 1024.0,
            (*last as f64 - *first as f64) / *first as f64 * 100.0
        );
    }
    if let (Some(first), Some(last), Some(max)) = (warm.first(), warm.last(), warm.iter().max()) {
        println!(
            "\nafter {} s warm-up: first {:.1} MiB, last {:.1} MiB, highest {:.1} MiB ({:+.1} % first to last)",
            args.warm_up_secs,
            *first as f64 / 1024.0,
            *last as f64 / 1024.0,
            *max as f64 / 1024.0,
            (*last as f64 - *first as f64) / *first as f64 * 100.0
        );
    }
    if failed {
        return Err("the soak saw unexpected answers (above)".into());
    }
    Ok(())
}
