-- One MCP tools/call over streamable HTTP, the stateless protocol (2026-07-28), sent again
-- and again by wrk: the tool in TOOL, its arguments (JSON) in ARGS.
local tool = os.getenv("TOOL") or "afd-call"
local args = os.getenv("ARGS") or "{}"
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = tool
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' .. tool
    .. '","arguments":' .. args .. ',"_meta":{'
    .. '"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"0"},'
    .. '"io.modelcontextprotocol/clientCapabilities":{}}}}'

-- Every answer must be a success: a JSON-RPC error or a tool error counts as a failure.
-- Each thread counts its own (a global of its Lua state); `done` adds them up.
local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    failed = 0
end

function response(status, headers, body)
    if status ~= 200 or body:find('"isError":true', 1, true) or body:find('"error":{', 1, true) then
        failed = failed + 1
        if failed == 1 then
            io.stderr:write("first failure: " .. status .. " " .. body .. "\n")
        end
    end
end

function done(summary, latency, requests)
    local total = 0
    for _, thread in ipairs(threads) do
        total = total + (thread:get("failed") or 0)
    end
    io.write(string.format("median_us %d\n", latency:percentile(50)))
    io.write(string.format("failed %d\n", total))
end
