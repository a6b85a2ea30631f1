#!/usr/bin/env python3
"""Writes catalog.json: the benchmark catalog of N commands (default 80), as bench/build.rs
generates it for afd-rs and the reference's bench/shop.mjs for afd-ts.

    python3 bench/peers/catalog.py [N] [--out PATH]

The seed's eight example commands, then `<category>-<verb>-<letters>` commands up to N.
Each tool: name, description, category, tags, flags, `input` (one entry per field: type,
required-ness, default and constraints), `output` (a shape name of `shapes`, `[]` suffix
for a list) and what its trivial handler answers, as a template:

- `returns`: the result. A string that is exactly `{field}` is that input field's value;
  `{field}` inside a longer string is replaced by the field's text; `{next}` is the
  process-wide counter (1, 2, ...) that ids are taken from. Fields of a shape marked `?`
  are left out when absent.
- `error`: instead of `returns`, the handler fails with this code and message (a tool
  result with `isError`).
"""

import argparse
import json
from pathlib import Path

# bench/src/names.rs
CATEGORIES = ["user", "order", "payment", "product", "inventory", "shipping", "review",
              "report", "config", "support"]
VERBS = ["list", "get", "update", "archive", "export", "search", "count", "tag"]


def letters(n):
    """`a`, `b`, ..., `z`, `ba`, ... as the reference's `letters(n)`."""
    out = ""
    while True:
        out = chr(97 + n % 26) + out
        n //= 26
        if n == 0:
            return out


# bench/src/shapes.rs: what the handlers return (`?`: optional, left out when absent).
SHAPES = {
    "User": {"id": "string", "name": "string", "email": "string"},
    "Order": {"orderId": "string", "userId": "string", "items": "string[]", "status": "string"},
    "Deleted": {"deleted": "string"},
    "Subscription": {"subscriptionId": "string", "status": "string"},
    "Reset": {"reset": "boolean"},
    "Echo": {"command": "string", "echo": "EchoInput"},
    "EchoInput": {"id": "string?", "query": "string?", "limit": "integer"},
}


def field(name, type_, required=True, **constraints):
    return {"field": name, "type": type_, "required": required, **constraints}


def string(name, **c):
    return field(name, "string", **c)


# `limit: u32` with `#[serde(default = "default_limit")]` and `range(min = 1, max = 100)`.
LIMIT = field("limit", "integer", required=False, default=20, minimum=1, maximum=100)


def tool(name, description, category, tags, input_, output, mutation=False,
         destructive=False, **rest):
    return {"name": name, "description": description, "category": category, "tags": tags,
            "mutation": mutation, "destructive": destructive, "input": input_,
            "output": output, **rest}


# bench/build.rs SEED (and shop.mjs's first eight commands).
SEED = [
    tool("user-create", "Create a new user account. Sends a welcome email.", "user",
         ["crud", "write"], [string("name", minLength=1), string("email", format="email")],
         "User", mutation=True, returns={"id": "u{next}", "name": "{name}", "email": "{email}"}),
    tool("user-get", "Get a user by id.", "user", ["crud", "read"], [string("id")], "User",
         errors=["NOT_FOUND"], error={"code": "NOT_FOUND", "message": "No user {id}"}),
    tool("user-delete", "Delete a user permanently.", "user", ["crud", "admin"],
         [string("id")], "Deleted", mutation=True, destructive=True,
         returns={"deleted": "{id}"}),
    tool("order-create", "Create an order for a user.", "order", ["crud", "write"],
         [string("userId"), field("items", "array", items="string", minItems=1)], "Order",
         mutation=True,
         returns={"orderId": "o{next}", "userId": "{userId}", "items": "{items}",
                  "status": "open"}),
    tool("order-list", "List orders, newest first.", "order", ["crud", "read"], [LIMIT],
         "Order[]", returns=[]),
    tool("order-cancel", "Cancel an order and refund the payment.", "order", ["billing"],
         [string("orderId")], "Order", mutation=True, destructive=True,
         confirmPrompt="This will cancel order {orderId}. Continue?", errors=["NOT_FOUND"],
         error={"code": "NOT_FOUND", "message": "No order {orderId}"}),
    tool("subscription-cancel", "Cancel a subscription at the end of the period.", "payment",
         ["billing"], [string("subscriptionId")], "Subscription", mutation=True,
         returns={"subscriptionId": "{subscriptionId}", "status": "cancelling"}),
    tool("config-reset", "Reset the shop configuration to defaults.", "config", ["admin"],
         [], "Reset", mutation=True, returns={"reset": True}),
]


def catalog(n):
    tools = SEED[:n]
    i = 0
    while len(tools) < n:
        cat = CATEGORIES[i % len(CATEGORIES)]
        verb = VERBS[(i // len(CATEGORIES)) % len(VERBS)]
        suffix = letters(i)
        mutation = verb in ("update", "archive", "tag")
        name = f"{cat}-{verb}-{suffix}"
        tools.append(tool(
            name,
            f"{verb.capitalize()} {cat} records (variant {suffix}). "
            f"Returns the matching {cat} entries.",
            cat, ["write" if mutation else "read", cat],
            [string("id", required=False), string("query", required=False), LIMIT],
            "Echo", mutation=mutation,
            returns={"command": name, "echo": {"id": "{id}", "query": "{query}",
                                               "limit": "{limit}"}}))
        i += 1
    return {"n": n, "shapes": SHAPES, "tools": tools}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=80)
    parser.add_argument("--out", default=Path(__file__).with_name("catalog.json"))
    args = parser.parse_args()
    Path(args.out).write_text(json.dumps(catalog(args.n), indent=1) + "\n")


if __name__ == "__main__":
    main()
