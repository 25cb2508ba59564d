// Drives `dsh exec` through the official Codex TypeScript SDK
// (@openai/codex-sdk, pinned in package-lock.json), as an application
// would, with only the executable path changed (`codexPathOverride`).
// Run by tests/codex_sdk.rs, which starts the loopback model and checks
// the JSON this prints on stdout.
import { Codex } from "@openai/codex-sdk";

const codex = new Codex({
  codexPathOverride: process.env.DSH_BIN,
  // The SDK passes it as CODEX_API_KEY.
  apiKey: process.env.CODEX_TEST_API_KEY,
});
const options = {
  workingDirectory: process.env.CODEX_PROJECT,
  skipGitRepoCheck: true,
  sandboxMode: "danger-full-access",
  approvalPolicy: "never",
};

const summary = (turn) => ({
  items: turn.items,
  finalResponse: turn.finalResponse,
  usage: turn.usage,
});

const thread = codex.startThread(options);
const first = await thread.run("please run echo hi");
const threadId = thread.id;

// A follow-up turn: the SDK runs `exec … resume THREAD_ID`.
const second = await thread.run("and then?");

// The same thread picked up again by id, with an output schema.
const resumed = codex.resumeThread(threadId, options);
const structured = await resumed.run("answer in JSON", {
  outputSchema: {
    type: "object",
    properties: { ok: { type: "boolean" } },
    required: ["ok"],
    additionalProperties: false,
  },
});

// A turn the model fails: the SDK throws with `turn.failed`'s message.
let failure = null;
try {
  await resumed.run("this one fails");
} catch (error) {
  failure = error.message;
}

// The streamed form: every event as the SDK hands it over.
const streamedThread = codex.startThread(options);
const { events } = await streamedThread.runStreamed("stream it");
const streamed = [];
for await (const event of events) {
  streamed.push(event);
}

process.stdout.write(
  JSON.stringify({
    threadId,
    first: summary(first),
    second: summary(second),
    structured: summary(structured),
    resumedId: resumed.id,
    failure,
    streamed,
  }),
);
