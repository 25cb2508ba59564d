"""Drives dsh through the official Claude Agent SDK (Python), for tests/claude_sdk.rs.

  .venv/bin/python driver.py SCENARIO

env: DSH_BIN (the dsh binary, given as cli_path), SDK_PROJECT (cwd). Prints one
JSON object: what the application saw, with each SDK message turned back into
the wire shape the TypeScript driver sees (type, message.content blocks,
result fields), callback inputs and answers, control-call results, errors.
Scenario names match driver.mjs.
"""
import asyncio
import dataclasses
import json
import os
import sys

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    create_sdk_mcp_server,
    query,
    tool,
)

SEEN = {"messages": [], "callbacks": [], "calls": [], "errors": []}
BLOCK_TYPES = {"TextBlock": "text", "ToolUseBlock": "tool_use", "ToolResultBlock": "tool_result",
               "ThinkingBlock": "thinking"}


def plain(x):
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        out = {f.name: plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
        if type(x).__name__ in BLOCK_TYPES:
            out["type"] = BLOCK_TYPES[type(x).__name__]
        return out
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(i) for i in x]
    return x


def wire(m):
    kind = type(m).__name__
    if kind == "SystemMessage":
        return m.data
    if kind == "AssistantMessage":
        return {"type": "assistant", "message": {"content": plain(m.content), "model": m.model}}
    if kind == "UserMessage":
        content = m.content if isinstance(m.content, str) else plain(m.content)
        return {"type": "user", "message": {"content": content}}
    if kind == "ResultMessage":
        return {"type": "result", **plain(m)}
    return {"type": kind, "data": plain(m)}


def base(**kw):
    return ClaudeAgentOptions(cli_path=os.environ["DSH_BIN"], cwd=os.environ["SDK_PROJECT"], **kw)


async def run(prompt, options, on_msg=None):
    try:
        async for m in query(prompt=prompt, options=options):
            SEEN["messages"].append(wire(m))
            if on_msg:
                on_msg(m)
    except Exception as e:  # the SDK raises on an error result, after yielding it
        SEEN["errors"].append(str(e))


async def turn(client, text):
    await client.query(text)
    async for m in client.receive_response():
        SEEN["messages"].append(wire(m))


S = {}


def scenario(f):
    S[f.__name__] = f
    return f


@scenario
async def plain_query():
    await run("Say hello", base())


S["plain"] = plain_query


@scenario
async def allowed():
    await run("Create allowed.txt", base(allowed_tools=["Bash"]))


@scenario
async def can_use_tool():
    async def decide(tool_name, inp, ctx):
        if "one.txt" in str(inp.get("command")):
            answer = PermissionResultDeny(message="Denied by the test: one is forbidden")
        else:
            answer = PermissionResultAllow(updated_input={**inp, "command": "touch rewritten.txt"})
        SEEN["callbacks"].append({"kind": "can_use_tool", "toolName": tool_name, "input": inp,
                                  "answer": plain(answer)})
        return answer

    # canUseTool needs streaming input in Python: a client session.
    async with ClaudeSDKClient(base(permission_mode="default", can_use_tool=decide)) as client:
        await turn(client, "Touch two files")


@scenario
async def hooks():
    async def pre(inp, tool_use_id, ctx):
        if str(inp["tool_input"]["command"]).startswith("rm "):
            answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                             "permissionDecisionReason": "the SDK hook says no"}}
        else:
            answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                             "additionalContext": "pre-context-from-sdk-hook"}}
        SEEN["callbacks"].append({"kind": "hook", "event": "PreToolUse", "input": inp, "toolUseID": tool_use_id,
                                  "answer": answer})
        return answer

    async def post(inp, tool_use_id, ctx):
        SEEN["callbacks"].append({"kind": "hook", "event": "PostToolUse", "input": inp, "toolUseID": tool_use_id,
                                  "answer": {}})
        return {}

    await run("Run echo both", base(setting_sources=["project"], permission_mode="bypassPermissions",
                                    hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[pre])],
                                           "PostToolUse": [HookMatcher(hooks=[post])]}))


@scenario
async def mode_and_model():
    async def allow(tool_name, inp, ctx):
        SEEN["callbacks"].append({"kind": "can_use_tool", "toolName": tool_name, "input": inp})
        return PermissionResultAllow(updated_input=inp)

    async with ClaudeSDKClient(base(permission_mode="default", can_use_tool=allow)) as client:
        await turn(client, "Write a.txt")
        SEEN["calls"].append({"fn": "set_permission_mode", "ret": await client.set_permission_mode("acceptEdits")})
        SEEN["calls"].append({"fn": "set_model", "ret": await client.set_model("claude-haiku-4-5")})
        await turn(client, "Write b.txt")


@scenario
async def mcp():
    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args):
        SEEN["callbacks"].append({"kind": "mcp", "tool": "add", "args": args})
        total = args["a"] + args["b"]
        text = str(int(total)) if float(total).is_integer() else str(total)
        return {"content": [{"type": "text", "text": text}]}

    calc = create_sdk_mcp_server(name="calc", version="1.0.0", tools=[add])
    # SDK MCP servers need streaming input in Python: a client session.
    async with ClaudeSDKClient(base(mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"])) as client:
        await turn(client, "Add 2 and 3")


@scenario
async def resume():
    sid = {}

    def grab(m):
        if type(m).__name__ == "ResultMessage":
            sid["id"] = m.session_id

    await run("Remember the word PAPAYA.", base(), grab)
    SEEN["calls"].append({"fn": "resume", "ret": sid.get("id")})
    await run("What was the word?", base(resume=sid["id"]))


name = sys.argv[1] if len(sys.argv) > 1 else ""
if name not in S:
    sys.stderr.write(f"unknown scenario {name}; have: {' '.join(S)}\n")
    sys.exit(2)
asyncio.run(S[name]())
sys.stdout.write(json.dumps(SEEN) + "\n")
