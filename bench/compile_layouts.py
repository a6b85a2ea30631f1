"""How the layout of a large afd-rs catalog changes its dev build and rebuild.

    python3 bench/compile_layouts.py [--commands 1000] [--parts 10] [--dir DIR]

The same N `#[command]` handlers as `compile_side_by_side.py` (same structs, bodies and doc
comments), laid out three ways:

- `one file`: one crate, one `lib.rs`, the input and output structs first, then the handlers;
- `modules`: one crate, the structs in `types.rs`, the handlers over P module files;
- `crates`: P crates of N / P commands each (structs first), and the server binary that
  links them all (`Registry::global()` collects every crate's commands).

For each layout, in one run: the clean dev build (dependencies prebuilt), the dev rebuild
after one doc comment in the middle handler grows (the line gets longer), and again after it
changes keeping its length. Each layout builds its server binary; the rebuild includes the
relink. Prints a Markdown table.
"""

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compile_side_by_side as side  # noqa: E402

SERVER_MAIN = """//! Generated: every command served over MCP stdio.
MODSuse afd_runtime::Registry;
use afd_runtime::mcp::McpServer;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
LINKS    McpServer::builder(Registry::global()).build()?.serve_stdio().await
}
"""


def handlers(ks, n, edit):
    """The handlers `ks` as `#[command]`s, the middle one of all N with `edit`."""
    return [line for k in ks for line in side.afd_handler(k, edit if k == n // 2 else "")]


def write(root, layout, n, parts, edit):
    """Writes the workspace of `layout`: the package `server` builds the server."""
    root.mkdir(parents=True, exist_ok=True)
    members = ["server"] + ([f"part{j}" for j in range(parts)] if layout == "crates" else [])
    side.update(
        root / "Cargo.toml",
        '[workspace]\nresolver = "3"\nmembers = ['
        + ", ".join(f'"{m}"' for m in members)
        + ']\n\n[profile.dev]\ndebug = 1\n',
    )
    if not (root / "Cargo.lock").exists():
        shutil.copy(side.ROOT / "Cargo.lock", root / "Cargo.lock")
    src = root / "server" / "src"
    src.mkdir(parents=True, exist_ok=True)
    per = n // parts
    if layout == "crates":
        deps = "".join(f'part{j} = {{ path = "../part{j}" }}\n' for j in range(parts))
        side.update(root / "server" / "Cargo.toml", side.afd_manifest("server", side.TOKIO + deps))
        links = "".join(f"    part{j}::link();\n" for j in range(parts))
        side.update(src / "main.rs", SERVER_MAIN.replace("LINKS", links).replace("MODS", ""))
        for j in range(parts):
            part = root / f"part{j}"
            (part / "src").mkdir(parents=True, exist_ok=True)
            side.update(part / "Cargo.toml", side.afd_manifest(f"part{j}"))
            ks = range(j * per, (j + 1) * per)
            lib = ["//! Generated: one crate of commands.", "use afd_runtime::prelude::*;"]
            lib += [side.structs(k) for k in ks] + handlers(ks, n, edit)
            lib.append("/// Referenced by the server so the linker keeps this crate's commands.")
            lib.append("pub fn link() {}")
            side.update(part / "src" / "lib.rs", "\n".join(lib) + "\n")
        return
    side.update(root / "server" / "Cargo.toml", side.afd_manifest("server", side.TOKIO))
    side.update(src / "main.rs", SERVER_MAIN.replace("LINKS", "").replace("MODS", "mod commands;\n"))
    if layout == "one file":
        lib = ["//! Generated: every command in one file.", "use afd_runtime::prelude::*;"]
        lib += [side.structs(k) for k in range(n)] + handlers(range(n), n, edit)
        side.update(src / "commands.rs", "\n".join(lib) + "\n")
    else:
        dir = src / "commands"
        dir.mkdir(exist_ok=True)
        types = "use schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n"
        side.update(dir / "types.rs", types + "".join(side.structs(k) for k in range(n)))
        for j in range(parts):
            lib = ["use afd_runtime::prelude::*;", "use super::types::*;"]
            lib += handlers(range(j * per, (j + 1) * per), n, edit)
            side.update(dir / f"part{j}.rs", "\n".join(lib) + "\n")
        mods = "".join(f"mod part{j};\n" for j in range(parts))
        side.update(src / "commands.rs", "//! Generated: the commands over module files.\nmod types;\n" + mods)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", type=int, default=1000)
    parser.add_argument("--parts", type=int, default=10)
    parser.add_argument("--dir", default=str(side.ROOT / "target" / "layouts"))
    args = parser.parse_args()
    n, parts = args.commands, args.parts
    rows = []
    target = Path(args.dir) / "target"
    for layout in ["one file", "modules", "crates"]:
        root = Path(args.dir) / layout.replace(" ", "-")
        locals_ = ["server"] + [f"part{j}" for j in range(parts if layout == "crates" else 0)]
        print(f"{layout}: dependencies (not timed)", file=sys.stderr)
        write(root, layout, parts, parts, "")
        side.cargo(root, ["build", "-p", "server"], False, target)
        write(root, layout, n, parts, "")
        side.cargo(root, ["clean", *[a for p in locals_ for a in ("-p", p)]], False, target)
        clean, _ = side.cargo(root, ["build", "-p", "server"], True, target)
        write(root, layout, n, parts, " Edited 1.")
        grown, _ = side.cargo(root, ["build", "-p", "server"], True, target)
        write(root, layout, n, parts, " Edited 2.")
        same, _ = side.cargo(root, ["build", "-p", "server"], True, target)
        rows.append((layout, clean, grown, same))
        print(f"  {layout}: {rows[-1][1:]}", file=sys.stderr)
    print(
        f"| {n} commands | clean dev build (s) | dev rebuild, doc comment grows (s) "
        "| dev rebuild, same length (s) |"
    )
    print("|---|---|---|---|")
    names = {"one file": "one crate, one file", "modules": f"one crate, {parts} modules",
             "crates": f"{parts} crates"}
    for layout, clean, grown, same in rows:
        print(f"| {names[layout]} | {clean:.1f} | {grown:.1f} | {same:.1f} |")


if __name__ == "__main__":
    main()
