// Auth tests: the official MCP TypeScript SDK client (npm @modelcontextprotocol/sdk, pinned
// in package.json) against an afd-rs server that requires OAuth bearer tokens.
//
// usage: node client.mjs URL TOKEN      (TOKEN "" = send no Authorization header)
//
// Connects over Streamable HTTP with `Authorization: Bearer TOKEN`, initializes, lists tools
// and, if listed, calls afd-discover with {}. Prints ONE JSON object on stdout:
//   {"tools": [names...], "discover": <structuredContent or null>}        exit 0
//   {"error": "HTTP 401: ..."}  on any failure (HTTP status when known)    exit 1

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
if (url === undefined || token === undefined) {
  console.log(JSON.stringify({ error: "usage: node client.mjs URL TOKEN" }));
  process.exit(1);
}

// Remember the last failing HTTP status, whatever the SDK makes of the response.
let lastStatus;
const recordingFetch = async (input, init) => {
  const response = await fetch(input, init);
  if (!response.ok) lastStatus = response.status;
  return response;
};

function describe(error) {
  const status = typeof error?.code === "number" && error.code > 0 ? error.code : lastStatus;
  const cause = error?.cause?.code || error?.cause?.message;
  const message = `${error?.message ?? error}${cause ? ` (${cause})` : ""}`;
  return status ? `HTTP ${status}: ${message}` : message;
}

async function main() {
  const headers = token === "" ? {} : { Authorization: `Bearer ${token}` };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
    fetch: recordingFetch,
  });
  const client = new Client({ name: "afd-auth-test", version: "0.0.0" });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    let discover = null;
    if (names.includes("afd-discover")) {
      const result = await client.callTool({ name: "afd-discover", arguments: {} });
      discover = result.structuredContent ?? null;
    }
    return { tools: names, discover };
  } finally {
    await client.close().catch(() => {});
  }
}

const timeout = new Promise((_, reject) => {
  setTimeout(() => reject(new Error("timed out after 30s")), 30_000).unref();
});
try {
  const output = await Promise.race([main(), timeout]);
  console.log(JSON.stringify(output));
  process.exit(0);
} catch (error) {
  console.log(JSON.stringify({ error: describe(error) }));
  process.exit(1);
}
