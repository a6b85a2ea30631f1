"""Compile cost of one command, three ways, side by side in one run.

    python3 bench/compile_side_by_side.py [--sizes 100,1000] [--dir DIR] [--runs 1]

Generates the same N handlers (same input and output structs with `Deserialize +
JsonSchema` / `Serialize + JsonSchema`, same bodies, same doc comments) written three ways,
each a library crate of the handlers plus a binary that serves them over MCP stdio:

- `afd`: afd-rs `#[command]` functions, served by `McpServer::serve_stdio`;
- `rmcp`: the official SDK's `#[tool]` methods in one `#[tool_router(server_handler)]`
  impl, taking `Parameters<T>` and returning `Json<T>`, served by `serve(stdio())`;
- `plain`: plain functions registered by hand in a `match` with `schema_for!` per command
  (the floor: the derives and the bodies, nothing generated per command).

The three crates share one layout: every input and output struct first, then the handlers
(rmcp's must sit in one impl, where structs cannot). The layout matters to the rebuild: an
edit that changes a line's length makes rustc check again the derives after it in the file.

The crates live in one generated workspace (DIR, default `target/side-by-side`) sharing one
target directory; its dependencies are built first (not timed). For each N and each way it
times: the clean dev build of the crate and its binary, the dev rebuild after the middle
handler's doc comment grows by a few words (what an author waits for most), the clean release build, the peak RSS
of the largest process (rustc) and the release binary's size. Prints a Markdown table with
the ratios to rmcp and to the floor and, given several sizes, what one more command costs
each way (the difference to the smallest size, per command added). With `--runs R` every build is timed R times (the
median is shown).
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WAYS = ["afd", "rmcp", "plain"]


def words(k):
    """A doc comment and a body that differ per handler, as real ones do."""
    subjects = ["order", "invoice", "user", "product", "report", "ticket", "build", "page"]
    verbs = ["Lists", "Creates", "Updates", "Archives", "Exports", "Checks", "Counts"]
    return verbs[k % len(verbs)], subjects[(k // len(verbs)) % len(subjects)]


def structs(k):
    verb, subject = words(k)
    return f'''
/// Input of handler {k}.
#[derive(Deserialize, JsonSchema)]
pub struct Input{k} {{
    /// The {subject}'s id.
    pub id: String,
    /// At most this many.
    pub limit: Option<u32>,
}}

/// Output of handler {k}.
#[derive(Serialize, JsonSchema)]
pub struct Output{k} {{
    /// What was done.
    pub summary: String,
    /// How many.
    pub count: u32,
}}
'''


def body(k):
    verb, subject = words(k)
    return (
        f'Output{k} {{ summary: format!("{verb.lower()} {subject} {{}}", input.id), '
        f"count: input.limit.unwrap_or({k % 50}) }}"
    )


def doc(k, edited=""):
    verb, subject = words(k)
    return f"/// {verb} the {subject} records of batch {k}.{edited}"


def afd_lib(n, edit):
    out = ["//! Generated: afd-rs `#[command]` handlers.", "use afd_runtime::prelude::*;"]
    for k in range(n):
        out.append(structs(k))
    for k in range(n):
        out += afd_handler(k, edit.get(k, ""))
    return "\n".join(out) + "\n"


def afd_handler(k, edited=""):
    """Handler `k` as an afd-rs `#[command]` (its doc comment with `edited` appended)."""
    return [
        doc(k, edited),
        '#[command(category = "bench")]',
        f"pub fn handler_{k}(input: Input{k}) -> Output{k} {{\n    {body(k)}\n}}",
    ]


AFD_MAIN = """//! Generated: the handlers served over MCP stdio.
use afd_runtime::Registry;
use afd_runtime::mcp::McpServer;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    side_afd::link();
    McpServer::builder(Registry::global()).build()?.serve_stdio().await
}
"""


def rmcp_lib(n, edit):
    out = [
        "//! Generated: rmcp `#[tool]` handlers in one `#[tool_router]` impl.",
        "use rmcp::handler::server::wrapper::{Json, Parameters};",
        "use rmcp::schemars::{self, JsonSchema};",
        "use rmcp::{tool, tool_router};",
        "use serde::{Deserialize, Serialize};",
    ]
    for k in range(n):
        out.append(structs(k))
    out.append("/// The server.\n#[derive(Clone)]\npub struct Server {\n    tool_router: rmcp::handler::server::router::tool::ToolRouter<Self>,\n}")
    out.append("#[tool_router(server_handler)]\nimpl Server {")
    out.append(
        "    /// A server with every tool.\n    pub fn new() -> Self {\n"
        "        Server { tool_router: Self::tool_router() }\n    }"
    )
    for k in range(n):
        out.append("    " + doc(k, edit.get(k, "")))
        out.append("    #[tool]")
        out.append(
            f"    pub fn handler_{k}(&self, Parameters(input): Parameters<Input{k}>) -> Json<Output{k}> {{\n"
            f"        Json({body(k)})\n    }}"
        )
    out.append("}")
    out.append("impl Default for Server {\n    fn default() -> Self {\n        Self::new()\n    }\n}")
    return "\n".join(out) + "\n"


RMCP_MAIN = """//! Generated: the handlers served over MCP stdio.
use rmcp::ServiceExt;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let server = side_rmcp::Server::new().serve(rmcp::transport::stdio()).await?;
    server.waiting().await?;
    Ok(())
}
"""


def plain_lib(n, edit):
    out = [
        "//! Generated: plain functions, registered by hand in a match.",
        "use schemars::{JsonSchema, schema_for};",
        "use serde::{Deserialize, Serialize};",
        "use serde_json::Value;",
    ]
    for k in range(n):
        out.append(structs(k))
    for k in range(n):
        out.append(doc(k, edit.get(k, "")))
        out.append(f"pub fn handler_{k}(input: Input{k}) -> Output{k} {{\n    {body(k)}\n}}")
    out.append("/// Every handler's name, description and input and output schemas.")
    out.append("pub fn list() -> Vec<Value> {\n    vec![")
    for k in range(n):
        verb, subject = words(k)
        out.append(
            f'        serde_json::json!({{"name": "handler-{k}", "description": '
            f'"{verb} the {subject} records of batch {k}.", '
            f'"inputSchema": schema_for!(Input{k}), "outputSchema": schema_for!(Output{k})}}),'
        )
    out.append("    ]\n}")
    out.append("/// Calls the handler named `name` with `arguments`.")
    out.append("pub fn call(name: &str, arguments: Value) -> Result<Value, String> {\n    match name {")
    for k in range(n):
        out.append(
            f'        "handler-{k}" => serde_json::from_value::<Input{k}>(arguments)\n'
            f"            .map_err(|e| e.to_string())\n"
            f"            .and_then(|input| serde_json::to_value(handler_{k}(input)).map_err(|e| e.to_string())),"
        )
    out.append('        _ => Err(format!("no handler {name}")),\n    }\n}')
    return "\n".join(out) + "\n"


PLAIN_MAIN = """//! Generated: a line-per-call server of the handlers (the floor: no protocol library).
use std::io::BufRead as _;

fn main() {
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let request: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        let answer = match request["name"].as_str() {
            None => serde_json::Value::Array(side_plain::list()),
            Some(name) => match side_plain::call(name, request["arguments"].clone()) {
                Ok(value) => value,
                Err(error) => serde_json::json!({"error": error}),
            },
        };
        println!("{answer}");
    }
}
"""


TOKIO = 'tokio = { version = "1", features = ["rt-multi-thread", "macros"] }\n'


def afd_manifest(name, extra=""):
    """The manifest of a crate of afd-rs commands named `name`, `extra` dependencies added."""
    runtime = ROOT / "afd-runtime"
    return f'''[package]
name = "{name}"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
afd-runtime = {{ path = "{runtime}" }}
schemars = {{ version = "1", default-features = false, features = ["derive", "std"] }}
{extra}serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"
'''


def manifests(root):
    rmcp_version = "3.11"
    common = '''serde = { version = "1", features = ["derive"] }
serde_json = "1"
'''
    return {
        "afd": afd_manifest("side-afd", TOKIO),
        "rmcp": f'''[package]
name = "side-rmcp"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
rmcp = {{ version = "{rmcp_version}", default-features = false, features = ["server", "macros", "transport-io"] }}
tokio = {{ version = "1", features = ["rt-multi-thread", "macros", "io-std"] }}
{common}''',
        "plain": f'''[package]
name = "side-plain"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
schemars = {{ version = "1", default-features = false, features = ["derive", "std"] }}
{common}''',
    }


def write(root, n, edit):
    for way in WAYS:
        src = root / way / "src"
        src.mkdir(parents=True, exist_ok=True)
        lib = {"afd": afd_lib, "rmcp": rmcp_lib, "plain": plain_lib}[way](n, edit)
        if way == "afd":
            lib += "\n/// Referenced by the binary so the linker keeps this crate's commands.\npub fn link() {}\n"
        main = {"afd": AFD_MAIN, "rmcp": RMCP_MAIN, "plain": PLAIN_MAIN}[way]
        update(src / "lib.rs", lib)
        update(src / "main.rs", main)


def update(path, text):
    """Writes only when the text changed, so an unchanged crate stays built."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def setup(root):
    root.mkdir(parents=True, exist_ok=True)
    (root / "Cargo.toml").write_text(
        '[workspace]\nresolver = "3"\nmembers = ["afd", "rmcp", "plain"]\n\n'
        "[profile.dev]\ndebug = 1\n"
    )
    for way, text in manifests(root).items():
        (root / way).mkdir(parents=True, exist_ok=True)
        update(root / way / "Cargo.toml", text)
    # The project's versions of every shared dependency.
    lock = root / "Cargo.lock"
    if not lock.exists():
        shutil.copy(ROOT / "Cargo.lock", lock)


def cargo(root, args, timed, target=None):
    """Runs cargo in the generated workspace; with `timed`, (seconds, peak RSS MiB).

    The target directory is `root/target` unless `target` names another."""
    env = dict(os.environ, CARGO_TARGET_DIR=str(target or root / "target"))
    env.pop("RUSTFLAGS", None)
    with tempfile.NamedTemporaryFile("r") as times:
        command = ["cargo", *args]
        if timed:
            command = ["/usr/bin/time", "-f", "%e %M", "-o", times.name, *command]
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"failed: cargo {' '.join(args)}\n{done.stderr[-4000:]}")
        if not timed:
            return None
        seconds, kib = times.read().split()[-2:]
        return float(seconds), int(kib) / 1024


def measure(root, n, runs):
    """One row per way: the figures at N handlers."""
    rows = {}
    middle = n // 2
    for way in WAYS:
        package = f"side-{way}"
        dev, rebuild, release, rss = [], [], [], []
        for run in range(runs):
            write(root, n, {})
            cargo(root, ["clean", "-p", package], False)
            cargo(root, ["clean", "-p", package, "--release"], False)
            seconds, peak = cargo(root, ["build", "-p", package], True)
            dev.append(seconds)
            rss.append(peak)
            write(root, n, {middle: f" Edited {run}."})
            seconds, peak = cargo(root, ["build", "-p", package], True)
            rebuild.append(seconds)
            rss.append(peak)
            write(root, n, {})
            seconds, peak = cargo(root, ["build", "-p", package, "--release"], True)
            release.append(seconds)
            rss.append(peak)
        binary = root / "target" / "release" / package
        rows[way] = {
            "dev": statistics.median(dev),
            "rebuild": statistics.median(rebuild),
            "release": statistics.median(release),
            "rss": max(rss),
            "size": binary.stat().st_size / 1048576,
        }
        print(f"  N={n} {way}: {rows[way]}", file=sys.stderr)
    return rows


def table(results):
    lines = [
        "| N | way | clean dev build (s) | dev rebuild after a doc comment (s) | clean release build (s) | peak rustc RSS (MiB) | release binary (MiB) |",
        "|---|---|---|---|---|---|---|",
    ]
    columns = ["dev", "rebuild", "release", "rss", "size"]
    for n, rows in results.items():
        for way in WAYS:
            cells = [f"{rows[way][c]:.1f}" for c in columns]
            lines.append(f"| {n} | {way} | " + " | ".join(cells) + " |")
        for other in ["rmcp", "plain"]:
            cells = [f"{rows['afd'][c] / rows[other][c]:.2f}" for c in columns]
            lines.append(f"| {n} | afd / {other} | " + " | ".join(cells) + " |")
    sizes = sorted(results)
    if len(sizes) > 1:
        # What one more command costs: the difference to the smallest catalog, per command.
        base = sizes[0]
        lines += [
            "",
            f"Per command (the difference to N = {base}, divided by the commands added):",
            "",
            "| N | way | clean dev build (ms) | dev rebuild (ms) | clean release build (ms) | peak rustc RSS (KiB) | release binary (KiB) |",
            "|---|---|---|---|---|---|---|",
        ]
        scale = {"dev": 1000, "rebuild": 1000, "release": 1000, "rss": 1024, "size": 1024}
        for n in sizes[1:]:
            per = {
                way: {
                    c: (results[n][way][c] - results[base][way][c]) * scale[c] / (n - base)
                    for c in columns
                }
                for way in WAYS
            }
            for way in WAYS:
                cells = [f"{per[way][c]:.1f}" for c in columns]
                lines.append(f"| {n} | {way} | " + " | ".join(cells) + " |")
            cells = [
                f"{per['afd'][c] / per['rmcp'][c]:.2f}" if per["rmcp"][c] > 0 else "-"
                for c in columns
            ]
            lines.append(f"| {n} | afd / rmcp | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--dir", default=str(ROOT / "target" / "side-by-side"))
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    root = Path(args.dir)
    setup(root)
    print("dependencies (not timed)", file=sys.stderr)
    write(root, 1, {})
    # One package at a time, as the timed builds run: features are unified over the
    # packages a build selects, so a workspace-wide build would leave other dependencies.
    for way in WAYS:
        for profile in [[], ["--release"]]:
            cargo(root, ["build", "-p", f"side-{way}", *profile], False)
    results = {}
    for n in [int(size) for size in args.sizes.split(",")]:
        results[n] = measure(root, n, args.runs)
    print(table(results))


if __name__ == "__main__":
    main()
