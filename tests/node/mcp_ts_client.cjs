// A third-party MCP client for the tests: the TypeScript SDK's Client, driven by a JSON scenario.
//
//   NODE_PATH=.cache/node/node_modules node tests/node/mcp_ts_client.cjs '<scenario json>'
//
// Scenario: {"transport": {"type": "stdio", "command", "args", "env"} | {"type": "http", "url"},
//            "elicit": "accept" | "decline" | null,
//            "roots": [uri, ...] | null,
//            "calls": [{"tool", "args", "timeoutMs", "release": {"url", "after"}}]}
// Prints one JSON object: serverInfo, capabilities, tools, and per call {ok, result | error,
// progress}. callTool validates structuredContent against the tool's outputSchema (after
// listTools), as the SDK does for every client.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ElicitRequestSchema, ListRootsRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

async function main() {
  const scenario = JSON.parse(process.argv[2]);
  const capabilities = {};
  if (scenario.elicit) capabilities.elicitation = { form: {} };
  if (scenario.roots) capabilities.roots = { listChanged: true };
  const client = new Client({ name: "aw-lookahead-ts-test", version: "1.0.0" }, { capabilities });
  const elicited = [];
  if (scenario.elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicited.push(request.params.message);
      if (scenario.elicit === "accept") return { action: "accept", content: { confirm: true } };
      return { action: "decline" };
    });
  }
  if (scenario.roots) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: scenario.roots.map((uri) => ({ uri })),
    }));
  }
  const t = scenario.transport;
  const transport =
    t.type === "stdio"
      ? new StdioClientTransport({ command: t.command, args: t.args, env: t.env, stderr: "inherit" })
      : new StreamableHTTPClientTransport(new URL(t.url));
  await client.connect(transport);
  const out = {
    serverInfo: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
    tools: (await client.listTools()).tools,
    results: [],
    elicited,
  };
  for (const call of scenario.calls) {
    let progress = 0;
    let released = false;
    const options = {
      timeout: call.timeoutMs ?? 300000,
      resetTimeoutOnProgress: true,
      onprogress: async () => {
        progress += 1;
        if (call.release && !released && progress >= call.release.after) {
          released = true;
          await fetch(call.release.url);
        }
      },
    };
    try {
      const result = await client.callTool({ name: call.tool, arguments: call.args }, undefined, options);
      out.results.push({ ok: true, result, progress });
    } catch (err) {
      out.results.push({ ok: false, error: String(err && err.message ? err.message : err), progress });
    }
  }
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((err) => {
  process.stderr.write(`ts client failed: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
