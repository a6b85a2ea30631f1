//! Context cost: the bytes and o200k tokens of `tools/list` (the tools array) per strategy
//! and catalog size, and the seed's typical interaction (lazy: listing, afd-discover
//! `{search: "cancel"}`, afd-detail of its first two results, afd-call user-create)
//! against calling the command as its own tool (individual, grouped), as the seed's
//! "Effective cost" table counts it: the listing plus the results the agent reads.
//! With node and the reference built, the reference server is measured the same way over
//! stdio, on the JSON exactly as it sends it (its results are text only).
//! Then the listings as the official Python MCP client receives them (`bench/listing.py`:
//! its re-serialisation, `json.dumps` separators), the way the reference's own figures are
//! counted: computed in Rust for every size, and through the client itself (with a Python
//! that has the `mcp` package: `--python`, default `$AFD_INTEROP_PYTHON` or `python3`)
//! for afd-rs's `serve` and for the reference.
//!
//! `cargo run -p afd-bench --release --features full --bin context`

use std::path::{Path, PathBuf};

use afd_bench::client::Error;
use afd_bench::raw::RawStdio;
use afd_bench::thousands;
use afd_examples::report::{
    STRATEGIES, TokenCounter, client_listing, listing_cost, python_style_cost, text_cost,
    typical_interaction,
};
use afd_runtime::CommandContext;
use afd_runtime::mcp::{McpServer, Strategy};
use clap::Parser;
use serde_json::{Value, json};

/// Context cost per strategy and catalog size.
#[derive(Debug, Parser)]
struct Args {
    /// Catalog sizes (default: every size this build generated).
    #[arg(long, value_delimiter = ',')]
    commands: Vec<usize>,
    /// Sizes at which the reference server is measured too.
    #[arg(long, value_delimiter = ',', default_values_t = [80, 2_000])]
    reference_commands: Vec<usize>,
    /// The reference server's directory (built with its setup.sh).
    #[arg(long, default_value = "../shared/peer/afd-ts")]
    reference: PathBuf,
    /// Skip the reference server.
    #[arg(long)]
    no_reference: bool,
    /// Append the figures as JSON lines to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Print this command's tool (individual strategy, 80 commands) as listed, and exit.
    #[arg(long)]
    show_tool: Option<String>,
    /// The Python with the official `mcp` package that measures listings as that client
    /// receives them (default: `$AFD_INTEROP_PYTHON`, else `python3`).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Sizes at which the listings are also measured through the Python client.
    #[arg(long, value_delimiter = ',', default_values_t = [80])]
    client_commands: Vec<usize>,
}

/// The listings as the official Python client receives them: computed in Rust for every
/// size, and through the client at `client_commands` for afd-rs's `serve` (beside this
/// binary) and the reference.
fn client_tables(args: &Args, counter: &TokenCounter, reference: Option<&Path>) -> Vec<Value> {
    let mut lines = Vec::new();
    println!(
        "\ntools/list as the official Python MCP client receives it (json.dumps of its tools), o200k tokens\n"
    );
    println!("| commands | individual | individual, no output schemas | grouped | lazy | hybrid |");
    println!("|---|---|---|---|---|---|");
    for &n in &args.commands {
        let mut cells = Vec::new();
        for (strategy, output_schemas) in [
            (Strategy::Individual, true),
            (Strategy::Individual, false),
            (Strategy::Grouped, true),
            (Strategy::Lazy, true),
            (Strategy::Hybrid, true),
        ] {
            let server = afd_bench::server_with(n, strategy, |b| b.output_schemas(output_schemas));
            let cost = python_style_cost(&server, counter);
            cells.push(format!("**{}**", thousands(cost.tokens)));
            lines.push(json!({
                "bench": "context-client", "server": "afd-rs", "measured": "rust",
                "strategy": strategy.as_str(), "outputSchemas": output_schemas, "commands": n,
                "tools": cost.tools, "bytes": cost.bytes, "tokens": cost.tokens,
            }));
        }
        println!("| {} | {} |", thousands(n), cells.join(" | "));
    }
    let python = args.python.clone().unwrap_or_else(|| {
        std::env::var_os("AFD_INTEROP_PYTHON")
            .map_or_else(|| PathBuf::from("python3"), PathBuf::from)
    });
    let serve = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("serve")))
        .filter(|path| path.is_file());
    println!("\nThrough the client itself ({})\n", python.display());
    println!("| server | commands | strategy | output schemas | tools | bytes | tokens |");
    println!("|---|---|---|---|---|---|---|");
    for &n in &args.client_commands {
        let mut runs: Vec<(&str, &str, &str, Result<String, String>)> = Vec::new();
        for (strategy, schemas) in [
            ("individual", "on"),
            ("individual", "off"),
            ("grouped", "on"),
            ("lazy", "on"),
        ] {
            let listed = match &serve {
                Some(serve) => client_listing(
                    &python,
                    serve,
                    &["--commands", &n.to_string(), "--strategy", strategy],
                    &[("AFD_OUTPUT_SCHEMAS", schemas)],
                ),
                None => Err("the serve binary is not built beside this one".to_owned()),
            };
            runs.push(("afd-rs", strategy, schemas, listed));
        }
        if let Some(dir) = reference {
            let node = node_and_reference(dir);
            for strategy in ["individual", "grouped", "lazy"] {
                let script = dir.join("bench/shop.mjs").display().to_string();
                let listed = node.as_ref().map_err(Clone::clone).and_then(|node| {
                    client_listing(
                        &python,
                        node,
                        &[
                            &script,
                            "--strategy",
                            strategy,
                            "--commands",
                            &n.to_string(),
                        ],
                        &[],
                    )
                });
                runs.push(("afd-ts", strategy, "-", listed));
            }
        }
        for (server, strategy, schemas, listed) in runs {
            match listed {
                Ok(text) => {
                    let cost = text_cost(&text, counter);
                    println!(
                        "| {server} | {} | {strategy} | {schemas} | {} | {} | **{}** |",
                        thousands(n),
                        cost.tools,
                        thousands(cost.bytes),
                        thousands(cost.tokens)
                    );
                    lines.push(json!({
                        "bench": "context-client", "server": server, "measured": "python-client",
                        "strategy": strategy, "outputSchemas": schemas, "commands": n,
                        "tools": cost.tools, "bytes": cost.bytes, "tokens": cost.tokens,
                    }));
                }
                Err(why) => println!(
                    "| {server} | {} | {strategy} | {schemas} | - | - | skipped: {} |",
                    thousands(n),
                    why.lines().last().unwrap_or("failed")
                ),
            }
        }
    }
    lines
}

fn user_create() -> Value {
    json!({"name": "Alice", "email": "alice@example.com"})
}

/// Tokens of the listing plus the result of calling user-create as its own tool.
async fn direct_cost(server: &McpServer, counter: &TokenCounter) -> (usize, usize) {
    let listing = listing_cost(server, counter).tokens;
    let (tool, arguments) = match server.strategy() {
        Strategy::Grouped => {
            let mut arguments = user_create();
            arguments["action"] = json!("user-create");
            ("user", arguments)
        }
        _ => ("user-create", user_create()),
    };
    let result = server.call(tool, arguments, CommandContext::new()).await;
    assert!(result.is_error != Some(true), "{tool} fails: {result:?}");
    let call: usize = result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| counter.count(&t.text))
        .sum();
    (listing, call)
}

/// The text content of a `tools/call` of `name` over `raw`.
async fn call_text(raw: &mut RawStdio, name: &str, arguments: Value) -> Result<String, Error> {
    let result = raw
        .request("tools/call", json!({"name": name, "arguments": arguments}))
        .await?;
    let texts: Vec<&str> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect();
    Ok(texts.join("\n"))
}

/// The reference's listing and typical interaction at `n`, over stdio, counted on the
/// JSON exactly as it sends it.
async fn reference(
    node: &Path,
    dir: &Path,
    n: usize,
    strategy: &str,
    counter: &TokenCounter,
) -> Result<Value, Error> {
    let args = vec![
        dir.join("bench/shop.mjs").display().to_string(),
        "--strategy".to_owned(),
        strategy.to_owned(),
        "--commands".to_owned(),
        n.to_string(),
    ];
    let mut raw = RawStdio::start(node, &args).await?;
    let listed = raw.request("tools/list", json!({})).await?;
    let tools = listed["tools"].as_array().cloned().unwrap_or_default();
    let text = listed["tools"].to_string();
    let mut out = json!({
        "server": "afd-ts", "strategy": strategy, "commands": n, "tools": tools.len(),
        "bytes": text.len(), "tokens": counter.count(&text),
    });
    if strategy == "lazy" {
        let discovered_text =
            call_text(&mut raw, "afd-discover", json!({"search": "cancel"})).await?;
        let parsed: Value = serde_json::from_str(&discovered_text).unwrap_or_default();
        let list = parsed["data"]["commands"]
            .as_array()
            .or_else(|| parsed["commands"].as_array())
            .cloned()
            .unwrap_or_default();
        let names: Vec<Value> = list.iter().take(2).map(|c| c["name"].clone()).collect();
        let detailed = call_text(&mut raw, "afd-detail", json!({"command": names})).await?;
        let called = call_text(
            &mut raw,
            "afd-call",
            json!({"command": "user-create", "input": user_create()}),
        )
        .await?;
        let (d, e, c) = (
            counter.count(&discovered_text),
            counter.count(&detailed),
            counter.count(&called),
        );
        out["interaction"] = json!({
            "listing": out["tokens"], "discover": d, "detail": e, "call": c,
            "total": out["tokens"].as_u64().unwrap_or_default() as usize + d + e + c,
            "found": names,
        });
    }
    raw.close().await;
    Ok(out)
}

fn node_and_reference(dir: &Path) -> Result<PathBuf, String> {
    let node = std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("node"))
                .find(|p| p.is_file())
        })
        .ok_or("node is not installed")?;
    if !dir.join("packages/server/dist").exists() {
        return Err(format!(
            "the reference is not built: run {}/setup.sh",
            dir.display()
        ));
    }
    Ok(node)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let mut args = Args::parse();
    if args.commands.is_empty() {
        args.commands = afd_bench::sizes();
    }
    let counter = TokenCounter::o200k();
    if let Some(name) = &args.show_tool {
        let server = afd_bench::server(80, Strategy::Individual);
        let tool = server
            .tools()
            .iter()
            .find(|t| t.name == name.as_str())
            .ok_or("no such tool")?;
        let text = serde_json::to_string(tool)?;
        println!(
            "{text}\n{} bytes, {} tokens",
            text.len(),
            counter.count(&text)
        );
        return Ok(());
    }
    let mut json_lines = Vec::new();

    println!("\ntools/list (the tools array): tools, bytes, o200k tokens\n");
    let names: Vec<&str> = STRATEGIES.iter().map(|s| s.as_str()).collect();
    println!("| commands | {} |", names.join(" | "));
    println!("|---|{}", "---|".repeat(STRATEGIES.len()));
    for &n in &args.commands {
        let mut cells = Vec::new();
        for strategy in STRATEGIES {
            let cost = listing_cost(&afd_bench::server(n, strategy), &counter);
            cells.push(format!(
                "{} tools, {} B, **{}** tok",
                thousands(cost.tools),
                thousands(cost.bytes),
                thousands(cost.tokens)
            ));
            json_lines.push(json!({
                "bench": "context", "server": "afd-rs", "strategy": strategy.as_str(), "commands": n,
                "tools": cost.tools, "bytes": cost.bytes, "tokens": cost.tokens,
            }));
        }
        println!("| {} | {} |", thousands(n), cells.join(" | "));
    }

    println!("\nEffective cost of one task (o200k tokens the agent reads: listing + results)\n");
    println!(
        "| commands | lazy: listing + discover + detail + call = total | individual: listing + call = total | grouped: listing + call = total |"
    );
    println!("|---|---|---|---|");
    for &n in &args.commands {
        let lazy = typical_interaction(&afd_bench::server(n, Strategy::Lazy), &counter).await;
        let (il, ic) = direct_cost(&afd_bench::server(n, Strategy::Individual), &counter).await;
        let (gl, gc) = direct_cost(&afd_bench::server(n, Strategy::Grouped), &counter).await;
        println!(
            "| {} | {} + {} + {} + {} = **{}** | {} + {} = **{}** | {} + {} = **{}** |",
            thousands(n),
            lazy.listing,
            lazy.discover,
            lazy.detail,
            lazy.call,
            thousands(lazy.total()),
            thousands(il),
            ic,
            thousands(il + ic),
            thousands(gl),
            gc,
            thousands(gl + gc),
        );
        json_lines.push(json!({
            "bench": "interaction", "server": "afd-rs", "commands": n,
            "lazy": {"listing": lazy.listing, "discover": lazy.discover, "detail": lazy.detail,
                     "call": lazy.call, "total": lazy.total(), "arguments": lazy.arguments},
            "individual": {"listing": il, "call": ic, "total": il + ic},
            "grouped": {"listing": gl, "call": gc, "total": gl + gc},
        }));
    }

    let reference_ready = if args.no_reference {
        Err("skipped (--no-reference)".to_owned())
    } else {
        node_and_reference(&args.reference)
    };
    match reference_ready {
        Ok(node) => {
            println!("\nThe reference TypeScript server, same catalogs, measured over stdio\n");
            println!(
                "| commands | strategy | tools | bytes | listing tokens | typical interaction (listing + discover + detail + call) |"
            );
            println!("|---|---|---|---|---|---|");
            for &n in &args.reference_commands {
                for strategy in ["individual", "grouped", "lazy"] {
                    let measured = reference(&node, &args.reference, n, strategy, &counter).await?;
                    let interaction = measured.get("interaction").map_or_else(
                        || "-".to_owned(),
                        |i| {
                            format!(
                                "{} + {} + {} + {} = **{}**",
                                i["listing"], i["discover"], i["detail"], i["call"], i["total"]
                            )
                        },
                    );
                    println!(
                        "| {} | {strategy} | {} | {} | {} | {interaction} |",
                        thousands(n),
                        measured["tools"],
                        thousands(measured["bytes"].as_u64().unwrap_or_default() as usize),
                        thousands(measured["tokens"].as_u64().unwrap_or_default() as usize),
                    );
                    let mut line = measured;
                    line["bench"] = json!("context");
                    json_lines.push(line);
                }
            }
        }
        Err(why) => println!("\nreference TypeScript server: skipped ({why})"),
    }
    let reference_dir = (!args.no_reference).then_some(args.reference.as_path());
    json_lines.extend(client_tables(&args, &counter, reference_dir));
    if let Some(path) = &args.json {
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        for line in json_lines {
            writeln!(file, "{line}")?;
        }
    }
    Ok(())
}
