// An editor-style ACP client built on the official TypeScript SDK
// (@agentclientprotocol/sdk). It starts `dsh acp` ($DSH_BIN) in the project
// ($ACP_PROJECT) and drives one session: initialize, session/new, a prompt
// whose tool calls a hook blocks and a hook asks about (every permission
// request is answered "allow once"), a prompt a prompt-submit hook blocks,
// and a prompt cancelled while its command runs. It prints one JSON object
// with what it saw; tests/acp_sdk.rs checks it.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const dshBin = process.env.DSH_BIN;
const project = process.env.ACP_PROJECT;
if (!dshBin || !project) {
  console.error("client.mjs needs DSH_BIN and ACP_PROJECT");
  process.exit(2);
}

// ACP sessions run Claude Code's permission model: in the `default` mode
// the slow command would ask too. This client checks what the hooks' own
// questions do, so it runs in `bypassPermissions` and only the hooks ask.
const child = spawn(dshBin, ["acp", "--permission-mode", "bypassPermissions"], {
  cwd: project,
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));

const updates = [];
const permissions = [];

const text = (value) => [{ type: "text", text: value }];

async function waitForFile(path, ms) {
  const deadline = Date.now() + ms;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} never appeared`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const app = acp
  .client({ name: "dsh-acp-e2e" })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    permissions.push(params);
    const allow = params.options.find((option) => option.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onNotification(acp.methods.client.session.update, async ({ params }) => {
    updates.push(params.update);
  });

const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const result = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
    clientInfo: { name: "dsh-acp-e2e", version: "1" },
  });
  const { sessionId } = await ctx.request(acp.methods.agent.session.new, {
    cwd: project,
    mcpServers: [],
  });
  const prompt = (words) =>
    ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: text(words) });

  const first = await prompt("Clean the build directory");
  const blocked = await prompt("deploy to production");

  const slow = prompt("Run the slow job");
  await waitForFile(join(project, "slow.pid"), 30000);
  await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
  const cancelled = await slow;

  return {
    protocolVersion: init.protocolVersion,
    loadSession: init.agentCapabilities?.loadSession ?? false,
    sessionId,
    stopReasons: [first.stopReason, blocked.stopReason, cancelled.stopReason],
  };
});

child.stdin.end();
const exit = await exited;
console.log(JSON.stringify({ ...result, exit, permissions, updates }));
