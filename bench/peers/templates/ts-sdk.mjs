/*BANNER*/
// The benchmark catalog on the official MCP TypeScript SDK, as its README and examples show:
// `McpServer` with `registerTool(name, { description, inputSchema, outputSchema }, handler)`.
//
//   node server.mjs --stdio        StdioServerTransport
//   node server.mjs --http PORT    stateless Streamable HTTP on 127.0.0.1:PORT/mcp, as the SDK's
//                                  simpleStatelessStreamableHttp example (a server and
//                                  transport per request), answering JSON (enableJsonResponse)
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import * as z from 'zod/v4';

/*SHAPES*/
let nextId = 1;

function getServer() {
  const server = new McpServer({ name: 'ts-sdk-shop', version: '0.1.0' });
  /*TOOLS*/
  return server;
}

const args = process.argv.slice(2);
if (args[0] === '--stdio') {
  await getServer().connect(new StdioServerTransport());
} else if (args[0] === '--http' && args[1]) {
  const app = createMcpExpressApp();
  app.post('/mcp', async (req, res) => {
    const server = getServer();
    try {
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
      res.on('close', () => {
        transport.close();
        server.close();
      });
    } catch (error) {
      console.error('Error handling MCP request:', error);
      if (!res.headersSent) {
        res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
      }
    }
  });
  const notAllowed = (req, res) => {
    res.writeHead(405).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }));
  };
  app.get('/mcp', notAllowed);
  app.delete('/mcp', notAllowed);
  app.listen(Number(args[1]), '127.0.0.1', error => {
    if (error) {
      console.error('Failed to start server:', error);
      process.exit(1);
    }
    console.error(`ts-sdk-shop: streamable HTTP on http://127.0.0.1:${args[1]}/mcp`);
  });
} else {
  console.error('usage: node server.mjs --stdio | --http PORT');
  process.exit(2);
}
