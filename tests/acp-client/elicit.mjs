// An editor-style ACP client built on the official TypeScript SDK that
// shows forms: it declares `clientCapabilities.elicitation.form`, starts
// `dsh acp` ($DSH_BIN) in the project ($ACP_PROJECT) with the MCP servers of
// $MCP_CONFIG, sends one prompt, and answers every `elicitation/create`
// with `accept` and $ELICIT_CONTENT (JSON). The SDK checks the request
// against ACP's schema before this handler sees it. It prints one JSON
// object with what it saw; tests/acp_sdk.rs checks it.

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const { DSH_BIN: dshBin, ACP_PROJECT: project, MCP_CONFIG: mcpConfig } = process.env;
if (!dshBin || !project || !mcpConfig) {
  console.error("elicit.mjs needs DSH_BIN, ACP_PROJECT and MCP_CONFIG");
  process.exit(2);
}
const content = JSON.parse(process.env.ELICIT_CONTENT ?? "{}");

const child = spawn(
  dshBin,
  ["acp", "--permission-mode", "bypassPermissions", "--mcp-config", mcpConfig],
  { cwd: project, stdio: ["pipe", "pipe", "inherit"] },
);
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));

const elicitations = [];
const permissions = [];

const app = acp
  .client({ name: "dsh-acp-elicit" })
  .onRequest(acp.methods.client.elicitation.create, async ({ params }) => {
    elicitations.push(params);
    return { action: "accept", content };
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    permissions.push(params);
    return { outcome: { outcome: "cancelled" } };
  })
  .onNotification(acp.methods.client.session.update, async () => {});

const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const result = await app.connectWith(stream, async (ctx) => {
  await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { elicitation: { form: {} } },
    clientInfo: { name: "dsh-acp-elicit", version: "1" },
  });
  const { sessionId } = await ctx.request(acp.methods.agent.session.new, {
    cwd: project,
    mcpServers: [],
  });
  const done = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "ask me" }],
  });
  return { sessionId, stopReason: done.stopReason };
});

child.stdin.end();
const exit = await exited;
console.log(JSON.stringify({ ...result, exit, elicitations, permissions }));
