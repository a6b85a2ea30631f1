// Interop: drive the afd-rs shop example with the official MCP TypeScript SDK client
// (npm @modelcontextprotocol/sdk, pinned in package.json).
//
// usage: node client.mjs SHOP_BINARY [stdio|http]...
//
// For each transport: initialize, list tools, then discover, detail, call, a failing call,
// batch, pipe and a context enter/exit through the meta-tools, reading the structured
// results. Prints one line per check and a closing 'N passed, M failed'; exits 1 on any
// failure.

import { spawn } from "node:child_process";
import net from "node:net";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const META = ["afd-discover", "afd-detail", "afd-call", "afd-batch", "afd-pipe"];
const CART = [
  "cart-add-item",
  "cart-checkout",
  "cart-clear",
  "cart-get",
  "cart-remove-item",
  "cart-update-item",
];
const results = { passed: 0, failed: 0 };

function check(label, condition, detail = "") {
  if (condition) {
    results.passed += 1;
    console.log(`ok   ${label}`);
  } else {
    results.failed += 1;
    console.log(`FAIL ${label} ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
  }
}

// The structured result; checks that the text content says the same.
function structured(label, result) {
  const data = result.structuredContent;
  const text = result.content?.[0]?.text;
  if (text !== undefined && data !== undefined) {
    check(`  ${label}: text content equals structuredContent`, JSON.stringify(JSON.parse(text)) === JSON.stringify(data));
  }
  return data;
}

// Keeps the protocol version the client settles on in `transport.negotiated` (the client
// hands it to transports that take it; stdio's does not, so it gets the method here).
function recordVersion(transport) {
  const hand = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    transport.negotiated = version;
    hand?.(version);
  };
  return transport;
}

async function exercise(client, transport) {
  const version = client.getServerVersion();
  const protocol = client.transport.negotiated;
  console.log(`${transport}: negotiated protocol ${protocol}`);
  check(`${transport}: initialize negotiated 2025-11-25`, protocol === "2025-11-25", protocol);
  check(`${transport}: server name`, version?.name === "shop", version);
  check(`${transport}: the server announces tools`, client.getServerCapabilities()?.tools !== undefined);

  const tools = (await client.listTools()).tools;
  const names = tools.map((tool) => tool.name);
  check(`${transport}: lazy lists the five meta-tools`, JSON.stringify(names) === JSON.stringify(META), names);
  check(`${transport}: afd-discover is read-only`, tools[0]?.annotations?.readOnlyHint === true, tools[0]?.annotations);

  const found = await client.callTool({ name: "afd-discover", arguments: { search: "cart" } });
  const discovered = structured("afd-discover", found);
  const foundNames = discovered.data.commands.map((command) => command.name);
  check(
    `${transport}: afd-discover finds the cart commands first`,
    JSON.stringify(foundNames.slice(0, CART.length).sort()) === JSON.stringify(CART),
    foundNames,
  );
  check(`${transport}: afd-discover isError false`, found.isError === false, found.isError);

  const detail = structured(
    "afd-detail",
    await client.callTool({ name: "afd-detail", arguments: { command: ["product-create", "prodcut-create"] } }),
  );
  check(
    `${transport}: afd-detail schema`,
    JSON.stringify(detail.data[0].inputSchema.required) === JSON.stringify(["sku", "name", "category", "priceCents"]),
    detail.data[0],
  );
  check(
    `${transport}: afd-detail suggestion`,
    detail.data[1].error.suggestion.startsWith("Did you mean 'product-create'"),
    detail.data[1],
  );

  // Distinct SKUs per transport: the two runs may share nothing, but a rerun must not clash.
  const tag = transport.toUpperCase().replace(/[^A-Z0-9]/g, "");
  const created = structured(
    "afd-call",
    await client.callTool({
      name: "afd-call",
      arguments: {
        command: "product-create",
        input: { sku: `TS-${tag}-1`, name: "From TypeScript", category: "home", priceCents: 1200, initialStock: 3 },
      },
    }),
  );
  check(
    `${transport}: afd-call creates`,
    created.success === true && created.data.name === "From TypeScript" && Number.isInteger(created.data.id),
    created,
  );

  const failed = await client.callTool({ name: "afd-call", arguments: { command: "product-create", input: {} } });
  const failedData = structured("a failed afd-call", failed);
  check(
    `${transport}: a failure is a result with isError`,
    failed.isError === true && failedData.success === false && failedData.error.code === "VALIDATION_ERROR",
    failedData,
  );
  check(`${transport}: the failure suggests a fix`, typeof failedData.error.suggestion === "string" && failedData.error.suggestion.length > 0, failedData.error);

  const batch = structured(
    "afd-batch",
    await client.callTool({
      name: "afd-batch",
      arguments: {
        commands: [
          { command: "product-create", input: { sku: `TS-${tag}-2`, name: "B1", category: "home", priceCents: 500 } },
          { command: "product-list", input: { search: "From TypeScript" } },
        ],
      },
    }),
  );
  check(`${transport}: afd-batch`, batch.summary.successCount === 2, batch);

  const pipe = structured(
    "afd-pipe",
    await client.callTool({
      name: "afd-pipe",
      arguments: {
        steps: [
          { command: "product-create", input: { sku: `TS-${tag}-3`, name: "P1", category: "home", priceCents: 700, initialStock: 4 } },
          { command: "product-get", input: { id: "$prev.id" } },
        ],
      },
    }),
  );
  check(
    `${transport}: afd-pipe`,
    pipe.success === true && pipe.data.sku === `TS-${tag}-3` && pipe.data.available === 4,
    pipe,
  );

  const entered = structured(
    "afd-context-enter",
    await client.callTool({ name: "afd-call", arguments: { command: "afd-context-enter", input: { context: "storefront" } } }),
  );
  check(`${transport}: afd-context-enter`, entered.success === true, entered);
  const inside = structured(
    "afd-discover in a context",
    await client.callTool({ name: "afd-discover", arguments: { category: "context", detail: "name" } }),
  );
  check(`${transport}: afd-discover names the active context`, inside.data.context.active === "storefront", inside.data.context);
  const exited = structured(
    "afd-context-exit",
    await client.callTool({ name: "afd-call", arguments: { command: "afd-context-exit", input: {} } }),
  );
  check(`${transport}: afd-context-exit`, exited.success === true, exited);
}

async function overStdio(binary) {
  const transport = recordVersion(
    new StdioClientTransport({ command: binary, args: ["--strategy", "lazy"], stderr: "ignore" }),
  );
  const client = new Client({ name: "afd-interop-ts", version: "1.0.0" });
  await client.connect(transport);
  try {
    await exercise(client, "stdio");
  } finally {
    await client.close();
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function connects(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.on("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

async function overHttp(binary) {
  const port = await freePort();
  const server = spawn(binary, ["--http", `127.0.0.1:${port}`], { stdio: ["ignore", "ignore", "ignore"] });
  try {
    const deadline = Date.now() + 30_000;
    while (!(await connects(port))) {
      if (Date.now() > deadline || server.exitCode !== null) {
        throw new Error(`the server did not listen on port ${port}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const transport = recordVersion(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
    const client = new Client({ name: "afd-interop-ts", version: "1.0.0" });
    await client.connect(transport);
    try {
      check("http: the server opened a session", typeof transport.sessionId === "string" && transport.sessionId.length > 0, transport.sessionId);
      await exercise(client, "http");
      // Ends the session with DELETE, as a well-behaved client does.
      await transport.terminateSession();
      check("http: the session was ended", transport.sessionId === undefined, transport.sessionId);
    } finally {
      await client.close();
    }
  } finally {
    server.kill();
  }
}

async function main() {
  const [binary, ...chosen] = process.argv.slice(2);
  if (!binary) {
    console.error("usage: node client.mjs SHOP_BINARY [stdio|http]...");
    process.exit(2);
  }
  const runs = { stdio: () => overStdio(binary), http: () => overHttp(binary) };
  for (const transport of chosen.length ? chosen : ["stdio", "http"]) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("timed out after 60 s")), 60_000);
    });
    try {
      await Promise.race([runs[transport](), timeout]);
    } catch (error) {
      // Report and carry on with the next transport.
      check(`${transport}: session completed`, false, String(error?.stack ?? error));
    } finally {
      clearTimeout(timer);
    }
  }
  console.log(`${results.passed} passed, ${results.failed} failed`);
  process.exit(results.failed ? 1 : 0);
}

await main();
