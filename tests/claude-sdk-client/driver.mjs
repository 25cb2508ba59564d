// Drives dsh through the official Claude Agent SDK (TypeScript), for
// tests/claude_sdk.rs:  node driver.mjs SCENARIO
// env: DSH_BIN (the dsh binary, given as pathToClaudeCodeExecutable),
// SDK_PROJECT (cwd). Prints one JSON object: what the application saw
// (every SDK message, callback inputs and answers, control-call results,
// thrown errors).
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

const seen = { messages: [], callbacks: [], calls: [], errors: [] };
const base = () => ({ pathToClaudeCodeExecutable: process.env.DSH_BIN, cwd: process.env.SDK_PROJECT });
const userMsg = (text) => ({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" });

// An async iterable of user messages the scenario feeds as results arrive.
function inbox() {
  const queue = [];
  let wake = null;
  let done = false;
  const poke = () => { if (wake) { wake(); wake = null; } };
  return {
    push(m) { queue.push(m); poke(); },
    end() { done = true; poke(); },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (queue.length) { yield queue.shift(); continue; }
        if (done) return;
        await new Promise((r) => (wake = r));
      }
    },
  };
}

async function run(prompt, options, onMessage) {
  const q = query({ prompt, options });
  try {
    for await (const m of q) {
      seen.messages.push(m);
      if (onMessage) await onMessage(m, q);
    }
  } catch (e) {
    seen.errors.push(String((e && e.message) || e));
  }
  return q;
}

const S = {};

S.plain = () => run("Say hello", base());

S.allowed = () => run("Create allowed.txt", { ...base(), allowedTools: ["Bash"] });

S.can_use_tool = () =>
  run("Touch two files", {
    ...base(),
    permissionMode: "default",
    canUseTool: async (toolName, input, opts) => {
      const answer = String(input.command).includes("one.txt")
        ? { behavior: "deny", message: "Denied by the test: one is forbidden" }
        : { behavior: "allow", updatedInput: { ...input, command: "touch rewritten.txt" } };
      seen.callbacks.push({ kind: "can_use_tool", toolName, input, toolUseID: opts.toolUseID, answer });
      return answer;
    },
  });

S.hooks = () =>
  run("Run echo both", {
    ...base(),
    settingSources: ["project"],
    permissionMode: "bypassPermissions",
    allowDangerouslySkipPermissions: true,
    hooks: {
      PreToolUse: [{
        matcher: "Bash",
        hooks: [async (input, toolUseID) => {
          const answer = String(input.tool_input.command).startsWith("rm ")
            ? { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "the SDK hook says no" } }
            : { hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: "pre-context-from-sdk-hook" } };
          seen.callbacks.push({ kind: "hook", event: "PreToolUse", input, toolUseID, answer });
          return answer;
        }],
      }],
      PostToolUse: [{
        hooks: [async (input, toolUseID) => {
          seen.callbacks.push({ kind: "hook", event: "PostToolUse", input, toolUseID, answer: {} });
          return {};
        }],
      }],
    },
  });

S.mode_and_model = async () => {
  const box = inbox();
  let results = 0;
  box.push(userMsg("Write a.txt"));
  await run(box, {
    ...base(),
    permissionMode: "default",
    canUseTool: async (toolName, input) => {
      seen.callbacks.push({ kind: "can_use_tool", toolName, input });
      return { behavior: "allow", updatedInput: input };
    },
  }, async (m, q) => {
    if (m.type !== "result") return;
    results++;
    if (results === 1) {
      seen.calls.push({ fn: "setPermissionMode", ret: (await q.setPermissionMode("acceptEdits")) ?? null });
      seen.calls.push({ fn: "setModel", ret: (await q.setModel("claude-haiku-4-5")) ?? null });
      box.push(userMsg("Write b.txt"));
    } else {
      box.end();
    }
  });
};

S.interrupt = async () => {
  const box = inbox();
  let results = 0;
  box.push(userMsg("Sleep a while"));
  await run(box, { ...base(), permissionMode: "bypassPermissions", allowDangerouslySkipPermissions: true }, async (m, q) => {
    if (m.type === "assistant" && m.message.content.some((b) => b.type === "tool_use")) {
      await new Promise((r) => setTimeout(r, 500));
      seen.calls.push({ fn: "interrupt", ret: (await q.interrupt()) ?? null });
    }
    if (m.type !== "result") return;
    results++;
    if (results === 1) box.push(userMsg("Still there?"));
    else box.end();
  });
};

S.mcp = () => {
  const calc = createSdkMcpServer({
    name: "calc",
    version: "1.0.0",
    tools: [
      tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async (args) => {
        seen.callbacks.push({ kind: "mcp", tool: "add", args });
        return { content: [{ type: "text", text: String(args.a + args.b) }] };
      }),
    ],
  });
  return run("Add 2 and 3", { ...base(), mcpServers: { calc }, allowedTools: ["mcp__calc__add"] });
};

S.resume = async () => {
  let sid;
  await run("Remember the word PAPAYA.", base(), (m) => { if (m.type === "result") sid = m.session_id; });
  seen.calls.push({ fn: "resume", ret: sid });
  await run("What was the word?", { ...base(), resume: sid });
};

const name = process.argv[2];
if (!S[name]) {
  console.error(`unknown scenario ${name}; have: ${Object.keys(S).join(" ")}`);
  process.exit(2);
}
await S[name]();
process.stdout.write(JSON.stringify(seen) + "\n");
