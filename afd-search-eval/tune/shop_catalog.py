#!/usr/bin/env python3
"""Writes the shop example's catalog as an evaluation catalog (`{"server", "tools": [...]}`,
the format of `shared/eval/catalogs`), from the folder its `--export DIR` writes: each
command's name, description and input schema, its category as the tool's `category` (the
search reads it as a tag) and its mutation flag as `readOnlyHint`.

    cargo run -p afd-examples --example shop -- --export /tmp/shop-export
    python3 shop_catalog.py /tmp/shop-export > shop-catalog/shop.json
"""
import json
import sys
from pathlib import Path

root = Path(sys.argv[1])
tools = []
for path in sorted(root.glob("*/*.json")):
    command = json.loads(path.read_text())
    tools.append({
        "name": command["name"],
        "description": command["description"],
        "category": command["category"],
        "annotations": {"readOnlyHint": not command["mutation"]},
        "inputSchema": command["inputSchema"],
    })
json.dump({"server": "shop", "tools": tools}, sys.stdout, indent=1, sort_keys=True)
print()
