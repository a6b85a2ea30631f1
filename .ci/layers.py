#!/usr/bin/env python3
"""The import check: no two source files of a crate import each other, directly or round a
loop, and afd-runtime's modules import only from their own layer or those below it.

A file imports another when it names something defined there: a `use` item (with its
braces expanded) or a path written in code (`super::semantic::fuse::search(..)`), resolved
through the crate's module tree to the module it names, and from a name in that module to
the file that defines it, through re-exports (`crate::Dispatcher`, which `lib.rs` re-exports,
is defined in `dispatch/mod.rs`). A re-export itself (`pub use`) and a `mod` item are not
imports, nor is a folder's `mod.rs` (or the crate root) using its own files: they are its
parts. A file that imports from its folder's `mod.rs` stands above it, as any import does. Test modules
(`#[cfg(test)] mod tests { .. }`) are left out, as are comments, strings and doc comments.

    .ci/layers.py            # every crate of the workspace; exit 1 on a circle or a layer break
    .ci/layers.py --graph    # and print each file's imports
    .ci/layers.py --self-test  # the check finds a circle and a layer break it is shown
"""

import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Library and binary roots checked, each with its own module tree.
CRATES = [
    "afd-runtime/src/lib.rs",
    "afd-macros/src/lib.rs",
    "afd-gateway/src/lib.rs",
    "afd-gateway/src/main.rs",
    "afd-client/src/main.rs",
    "afd-search-eval/src/lib.rs",
    "afd-search-eval/src/main.rs",
    "bench/src/lib.rs",
    "fuzz/src/lib.rs",
]

# afd-runtime's layers, lowest first (CONTRIBUTING.md's table): a module's file may import
# from its own layer and those below, never from above. Top-level module names.
RUNTIME_LAYERS = [
    (
        "data",
        {
            "text", "similarity", "random", "error", "progress", "content", "auth", "metrics",
            "blocking",
            "telemetry", "typescript", "tls", "completion", "client", "result", "validate",
            "usage", "command_context", "audit", "command", "macro_support", "declared",
            "registry", "resource", "prompt", "export", "search",
        },
    ),
    ("runtime contexts", {"contexts", "tasks"}),
    ("the call path", {"dispatch", "middleware"}),
    ("built-in tools", {"tools"}),
    ("operations", {"ops"}),
    ("surfaces", {"mcp", "cli"}),
]


def strip(source):
    """The code alone: comments, strings and char literals blanked, lines kept."""
    out = []
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if source.startswith("//", i):
            j = source.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif source.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if source.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif source.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if source[i] == "\n" else "")
                    i += 1
        elif c == "r" and re.match(r'r#*"', source[i:i + 40]) and not re.match(r"\w", source[i - 1] if i else " "):
            hashes = re.match(r'r(#*)"', source[i:]).group(1)
            end = source.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + "\n" * source.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and source[j] != '"':
                j += 2 if source[j] == "\\" else 1
            out.append('""' + "\n" * source.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", source[i:i + 4]) or re.match(r"'\\u\{[0-9a-fA-F]+\}'", source[i:i + 12]):
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", source[i:])
            out.append("' '")
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def drop_test_modules(code):
    """`#[cfg(test)] mod name { .. }` removed (braces matched on comment-free code)."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", code)
        if not m:
            return code
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        code = code[: m.start()] + "\n" * code.count("\n", m.start(), j) + code[j:]


class Crate:
    """One crate's module tree: module path (a tuple) -> file."""

    def __init__(self, root_file):
        self.files = {}  # module path -> file
        self.modules = {}  # file -> module path
        self.inline = {}  # file -> inline modules declared in it (name -> module path)
        self.code = {}  # file -> comment-free code without test modules
        self.walk((), os.path.join(ROOT, root_file), True)
        self.defined = {f: definitions(c) for f, c in self.code.items()}
        self.reexports = {f: imported_names(c) for f, c in self.code.items()}

    def walk(self, path, file, owns_dir):
        self.files[path] = file
        self.modules[file] = path
        code = drop_test_modules(strip(open(file, encoding="utf-8").read()))
        self.code[file] = code
        base = os.path.dirname(file) if owns_dir else os.path.splitext(file)[0]
        for m in re.finditer(
            r'((?:#\[[^\]]*\]\s*)*)(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', code
        ):
            attrs, name = m.group(1), m.group(2)
            explicit = re.search(r'path\s*=\s*""', attrs)
            candidates = [os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")]
            if explicit:
                # `#[path = ".."]`: the literal was blanked; read it from the raw source.
                raw = open(file, encoding="utf-8").read()
                lit = re.search(r'#\[path\s*=\s*"([^"]+)"\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+' + name + r"\s*;", raw)
                if lit:
                    candidates = [os.path.join(os.path.dirname(file), lit.group(1))]
            for candidate in candidates:
                if os.path.exists(candidate):
                    self.walk(path + (name,), candidate, candidate.endswith("mod.rs"))
                    break

    def resolve(self, file, segments, depth=0):
        """The file a path written in `file` points into, or None (a crate outside)."""
        here = self.modules[file]
        if not segments:
            return None
        head, rest = segments[0], segments[1:]
        if head == "crate":
            module = ()
        elif head == "self":
            module = here
        elif head == "super":
            module = here
            while rest is not None:
                module = module[:-1]
                if rest and rest[0] == "super":
                    rest = rest[1:]
                    continue
                break
        else:
            # A path from a child module declared here (`tokenize::stem` after `use`
            # brought nothing; a bare `mod` name) or an outside crate: only the former.
            if here + (head,) in self.files:
                module, rest = here + (head,), rest
            else:
                return None
        for i, segment in enumerate(rest):
            if module + (segment,) in self.files:
                module = module + (segment,)
            else:
                return self.defining(self.files.get(module), segment, depth)
        return self.files.get(module)

    def defining(self, file, name, depth):
        """The file that defines `name`, as named in `file`: itself, or where a `use` in it
        leads (a re-export, or a name it brought in)."""
        if file is None or name in self.defined[file] or depth > 8:
            return file
        path = self.reexports[file].get(name)
        if path is None:
            glob = [p for p in self.reexports[file].get("*", []) if self.resolve(file, p, depth + 1)]
            for p in glob:
                target = self.resolve(file, p, depth + 1)
                if target and name in self.defined[target]:
                    return target
            return file
        return self.resolve(file, path, depth + 1) or file


ITEM = re.compile(
    r"(?:^|[;{}\]\n])\s*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+|async\s+|const\s+(?=fn)|extern\s+\"\"\s+)*"
    r"(?:fn|struct|enum|trait|type|const|static|union|mod)\s+(\w+)"
)


def definitions(code):
    """The names a file defines at any depth outside function bodies (close enough:
    an item's name is unique within its module in practice), and its `macro_rules!`."""
    names = set(m.group(1) for m in ITEM.finditer(code))
    names.update(re.findall(r"macro_rules!\s*(\w+)", code))
    return names


def imported_names(code):
    """Each name a file's `use` items bring in (the last segment, or its `as` name) ->
    the path it stands for; globs under "*"."""
    out = {"*": []}
    for m in re.finditer(r"\buse\s+([^;]+);", code):
        for path, alias in expand_named(m.group(1).replace("\n", " ")):
            if path and path[-1] == "*":
                out["*"].append(path[:-1])
            elif path:
                out.setdefault(alias or path[-1], path)
    return out


def expand_named(tree):
    """As `expand`, keeping `as` names: [(path, alias or None)]."""
    tree = tree.strip()
    if tree.startswith("::"):
        tree = tree[2:]
    depth, split = 0, None
    for i, c in enumerate(tree):
        if c == "{":
            if depth == 0 and split is None:
                split = i
            depth += 1
        elif c == "}":
            depth -= 1
    if split is None:
        alias = None
        m = re.match(r"(.*?)\s+as\s+(\w+)\s*$", tree)
        if m:
            tree, alias = m.group(1), m.group(2)
        parts = [p.strip() for p in tree.split("::") if p.strip()]
        if parts and parts[-1] == "self":
            parts = parts[:-1]
        return [(parts, alias)] if parts else []
    prefix = [p.strip() for p in tree[:split].split("::") if p.strip()]
    inner = tree[split + 1 : tree.rfind("}")]
    items, depth, start = [], 0, 0
    for i, c in enumerate(inner):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(inner[start:i])
            start = i + 1
    items.append(inner[start:])
    out = []
    for item in items:
        for sub, alias in expand_named(item):
            out.append((prefix + sub, alias))
        if item.strip() == "self":
            out.append((prefix, None))
    return out


def inline_spans(code):
    """The spans of the inline modules (`mod name { .. }`) of a file."""
    spans = []
    for m in re.finditer(r"\bmod\s+\w+\s*\{", code):
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        spans.append((m.end(), j))
    return spans


def local(path, depth):
    """A path written `depth` inline modules deep, as seen from the file: a `super` that
    only climbs out of those modules stays in the file (None), and `self` too."""
    if depth and path and path[0] == "self":
        return None
    climbed = 0
    while climbed < len(path) and path[climbed] == "super":
        climbed += 1
    if depth and climbed:
        if climbed <= depth:
            return None
        return ["super"] * (climbed - depth) + path[climbed:]
    return path


def use_paths(code):
    """Every path a file names: `use` trees expanded, and paths written in code."""
    spans = inline_spans(code)
    depth_at = lambda pos: sum(1 for a, b in spans if a <= pos < b)
    paths = []
    for m in re.finditer(r"(\bpub(?:\([^)]*\))?\s+)?\buse\s+([^;]+);", code):
        if not m.group(1):
            depth = depth_at(m.start())
            for path in expand(m.group(2).replace("\n", " ")):
                path = local(path, depth)
                if path:
                    paths.append(path)
    children = re.findall(r"\bmod\s+(\w+)\s*;", code)
    heads = "|".join(["crate", "super", "self"] + children)
    for m in re.finditer(r"(?<![\w:$])((?:" + heads + r")(?:\s*::\s*\w+)+)", code):
        if re.search(r"\buse\s+[^;]*$", code[max(0, m.start() - 300) : m.start()]):
            continue  # inside a `use` item, read above
        path = local([s.strip() for s in m.group(1).split("::")], depth_at(m.start()))
        if path:
            paths.append(path)
    return paths


def expand(tree):
    """`a::{b, c::{d, self}}` -> [[a, b], [a, c, d], [a, c]]; a glob's path ends at its
    module."""
    paths = []
    for path, _alias in expand_named(tree):
        if path and path[-1] == "*":
            path = path[:-1]
        if path:
            paths.append(path)
    return paths


def graph(crate):
    edges = {}
    for file, module in crate.modules.items():
        code = drop_test_modules(strip(open(file, encoding="utf-8").read()))
        targets = set()
        for path in use_paths(code):
            target = crate.resolve(file, path)
            if target and target != file and not inside(crate.modules[target], module):
                targets.add(target)
        edges[file] = targets
    return edges


def inside(module, folder):
    """Whether `module` is one of `folder`'s own (a descendant): a folder's `mod.rs` (or the
    crate root) uses its parts, which is not an import."""
    return len(module) > len(folder) and module[: len(folder)] == folder


def cycles(edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def layer_of(crate, file):
    module = crate.modules[file]
    if not module:
        return None
    for rank, (_, names) in enumerate(RUNTIME_LAYERS):
        if module[0] in names:
            return rank
    return None


def main():
    show = "--graph" in sys.argv
    failures = []
    rel = lambda f: os.path.relpath(f, ROOT)
    for root in CRATES:
        if not os.path.exists(os.path.join(ROOT, root)):
            continue
        crate = Crate(root)
        edges = graph(crate)
        if show:
            for file in sorted(edges):
                print(rel(file), "->", ", ".join(sorted(rel(t) for t in edges[file])) or "-")
        for component in cycles(edges):
            tied = []
            for a in component:
                for b in component:
                    if b in edges[a]:
                        tied.append(f"{rel(a)} -> {rel(b)}")
            failures.append("circle: " + "; ".join(tied))
        if root == "afd-runtime/src/lib.rs":
            known = set().union(*(names for _, names in RUNTIME_LAYERS))
            for module in crate.files:
                if len(module) == 1 and module[0] not in known and module[0] != "_guide":
                    failures.append(
                        f"afd-runtime module `{module[0]}` is in no layer: add it to .ci/layers.py"
                    )
            for file, targets in edges.items():
                mine = layer_of(crate, file)
                for target in targets:
                    theirs = layer_of(crate, target)
                    if mine is not None and theirs is not None and theirs > mine:
                        failures.append(
                            f"layer: {rel(file)} ({RUNTIME_LAYERS[mine][0]}) imports "
                            f"{rel(target)} ({RUNTIME_LAYERS[theirs][0]})"
                        )
    for failure in failures:
        print(failure)
    if failures:
        print(f"{len(failures)} import problem(s): a file imports only from below it (CONTRIBUTING.md, Layout)")
        return 1
    print("imports: no circles, no layer imported from below")
    return 0


def self_test():
    """The check on a small crate of its own: a circle of two files round a `mod.rs`, a
    path written in code, and one that is not a circle (a folder's `mod.rs` using its files)."""
    import tempfile

    with tempfile.TemporaryDirectory() as root:
        files = {
            "lib.rs": "mod a;\nmod b;\nmod c;\npub use a::A;\n",
            "a.rs": "use crate::b::B;\npub struct A;\n",
            "b.rs": "pub struct B;\nfn f() { let _ = super::A; }\n",
            "c/mod.rs": "mod d;\nuse d::D;\npub struct C;\n",
            "c/d.rs": "use super::C;\npub struct D;\n",
        }
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w", encoding="utf-8") as out:
                out.write(text)
        crate = Crate(os.path.join(root, "lib.rs"))
        found = cycles(graph(crate))
        names = [sorted(os.path.basename(f) for f in component) for component in found]
        assert names == [["a.rs", "b.rs"]], names
    print("self-test: the check finds the circle it is shown, and only it")
    return 0


if __name__ == "__main__":
    sys.exit(self_test() if "--self-test" in sys.argv else main())
