// Baseline for Paige's MCP benchmark: the official TypeScript MCP SDK serving the same
// `paige_get_diff` tool shape (diff computed per call with the `diff` package, structured
// + text content) over Streamable HTTP: with 2025-11-25 sessions, or with `stateless` the
// SDK's stateless mode (no session id; a fresh server and transport per request, as its docs
// show) — the nearest it has to the 2026-07-28 stateless era, which it does not implement.
//   node server.mjs PORT SAVED_FILE BUFFER_FILE REL_PATH [stateless]
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { createTwoFilesPatch } from "diff";
import { z } from "zod";

const [port, savedPath, bufferPath, relPath, mode] = process.argv.slice(2);
const buffer = readFileSync(bufferPath, "utf8");
const transports = new Map();

function buildServer() {
  const server = new McpServer({ name: "baseline", version: "1.0.0" });
  server.registerTool(
    "paige_get_diff",
    { description: "Unified diff of the learner's unsaved edits.", inputSchema: { path: z.string().optional() } },
    async () => {
      const saved = readFileSync(savedPath, "utf8");
      const diff = createTwoFilesPatch(`a/${relPath}`, `b/${relPath}`, saved, buffer, undefined, undefined, { context: 3 });
      return { content: [{ type: "text", text: diff }], structuredContent: { diffs: [{ path: relPath, diff }], truncated: false } };
    },
  );
  return server;
}

createServer(async (req, res) => {
  let body = "";
  for await (const chunk of req) body += chunk;
  const parsed = body ? JSON.parse(body) : undefined;
  if (mode === "stateless") {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = buildServer();
    res.on("close", () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, parsed);
    return;
  }
  const sid = req.headers["mcp-session-id"];
  let transport = sid ? transports.get(sid) : undefined;
  if (!transport) {
    if (req.method !== "POST" || !isInitializeRequest(parsed)) {
      res.writeHead(400).end();
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
    await buildServer().connect(transport);
  }
  await transport.handleRequest(req, res, parsed);
}).listen(Number(port), "127.0.0.1", () => console.log(`ready on ${port}`));
