#!/usr/bin/env python3
"""Smoke test of a peer: initialize (2025-11-25), notifications/initialized, tools/list (counts
the tools) and one tools/call of the first generated command, checking its answer.

    python3 bench/peers/smoke.py stdio CMD [ARG...]    e.g. stdio node ts-sdk/server.mjs --stdio
    python3 bench/peers/smoke.py http URL              e.g. http http://127.0.0.1:3001/mcp

Options (before the transport): --tools N (expected count, default 80), --call NAME
(default user-list-a), --fixed (the floor: any successful answer will do, not the echo of
the arguments). Exits non-zero on any failure. Standard library only.
"""

import json
import subprocess
import sys
import urllib.request

PROTOCOL = "2025-11-25"


def stdio_exchange(cmd):
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(message):
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        if "id" not in message:
            return None
        while True:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit(f"server closed stdout (exit {proc.poll()})")
            answer = json.loads(line)
            if answer.get("id") == message["id"]:
                return answer

    return send, lambda: (proc.stdin.close(), proc.wait(timeout=10))


def http_exchange(url):
    session = {}

    def send(message):
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": PROTOCOL, **session}
        request = urllib.request.Request(url, json.dumps(message).encode(), headers)
        with urllib.request.urlopen(request, timeout=30) as response:
            if "mcp-session-id" in response.headers:
                session["Mcp-Session-Id"] = response.headers["mcp-session-id"]
            body = response.read().decode()
            kind = response.headers.get("content-type", "")
        if "id" not in message:
            return None
        if kind.startswith("text/event-stream"):  # the answer is one of the SSE events
            for line in body.splitlines():
                if line.startswith("data:") and line[5:].strip():
                    answer = json.loads(line[5:])
                    if answer.get("id") == message["id"]:
                        return answer
            raise SystemExit(f"no answer in the event stream: {body!r}")
        return json.loads(body)

    return send, lambda: None


def main():
    args = sys.argv[1:]
    expected, call, fixed = 80, "user-list-a", False
    while args and args[0].startswith("--"):
        option, args = args[0], args[1:]
        if option == "--fixed":
            fixed = True
        elif option in ("--tools", "--call"):
            value, args = args[0], args[1:]
            expected, call = (int(value), call) if option == "--tools" else (expected, value)
        else:
            raise SystemExit(f"unknown option {option}\n{__doc__}")
    if len(args) < 2 or args[0] not in ("stdio", "http"):
        raise SystemExit(__doc__)
    send, close = stdio_exchange(args[1:]) if args[0] == "stdio" else http_exchange(args[1])
    init = send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "afd-bench-smoke", "version": "0.1.0"}}})
    info = init["result"]
    print(f"initialize: {info['serverInfo']['name']} {info['serverInfo'].get('version')}, "
          f"protocol {info['protocolVersion']}")
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools, cursor, request_id = [], None, 2
    while True:
        listed = send({"jsonrpc": "2.0", "id": request_id, "method": "tools/list",
                       "params": {"cursor": cursor} if cursor else {}})["result"]
        tools += listed["tools"]
        cursor, request_id = listed.get("nextCursor"), request_id + 1
        if not cursor:
            break
    print(f"tools/list: {len(tools)} tools ({tools[0]['name']} ... {tools[-1]['name']})")
    answer = send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
        "name": call, "arguments": {"query": "smoke", "limit": 5}}})
    result = answer.get("result") or {}
    text = (result.get("content") or [{}])[0].get("text")
    print(f"tools/call {call}: isError={result.get('isError', False)} text={text} "
          f"structuredContent={json.dumps(result.get('structuredContent'))}")
    close()
    want = {"command": call, "echo": {"query": "smoke", "limit": 5}}
    failures = [f"{len(tools)} tools, not {expected}"] * (len(tools) != expected)
    wrong = result.get("isError") or not text or (not fixed and json.loads(text) != want)
    failures += [f"answer {answer}"] * bool(wrong)
    if failures:
        raise SystemExit("FAILED: " + "; ".join(failures))
    print("ok")


if __name__ == "__main__":
    main()
