//! Subagents end to end: the `agent` tool's nested run through
//! `dsh replay` and `dsh -p` against the loopback provider, its durable
//! record (tagged events, `dsh log`, `dsh hooks log`), the sidechain
//! transcript SubagentStop points at, and a custom agent with frontmatter
//! hooks.

use dsh_provider::mock::{MockResponse, MockToolCall};
use serde_json::{Value, json};

use crate::cli_headless::{dsh as dsh_with, events, mock, session_logs};
use crate::support::TestContext;

/// A project with a SubagentStop recorder in its settings and a custom
/// `lister` agent (Bash only) whose frontmatter PreToolUse hook records too.
fn project() -> TestContext {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(claude.join("agents")).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{"hooks": {"SubagentStop": [{"matcher": "lister", "hooks": [{"type": "command",
            "command": "cat > \"$CLAUDE_PROJECT_DIR/substop.json\""}]}]}}"#,
    )
    .unwrap();
    std::fs::write(
        claude.join("agents/lister.md"),
        "---\nname: lister\ndescription: Lists things.\ntools: Bash\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: cat > \"$CLAUDE_PROJECT_DIR/fm-pre.json\"\n---\nYou list things.\n",
    )
    .unwrap();
    ctx
}

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn replay_records_the_nested_run_where_log_views_and_hooks_find_it() {
    let ctx = project();
    let fixture = ctx.home().join("fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "prompts": ["List with the lister"],
            "model": [
                {"tool_calls": [{"id": "call_outer", "name": "agent", "arguments":
                    {"description": "list", "prompt": "Run echo inner", "subagent_type": "lister"}}]},
                {"tool_calls": [{"id": "call_inner", "name": "bash", "arguments": {"command": "echo inner"}}]},
                {"text": "LISTED"},
                {"text": "DONE"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let out = ctx.home().join("session.jsonl");
    let requests = ctx.home().join("requests.jsonl");
    ctx.dsh()
        .arg("replay")
        .arg(&fixture)
        .args(["--session-id", "sub-session", "--out"])
        .arg(&out)
        .arg("--requests-out")
        .arg(&requests)
        .assert()
        .success();

    // The log: the nested events carry one agent id; the parent's call
    // result is the subagent's final text.
    let log = events(&out);
    let tagged: Vec<&Value> = log.iter().filter(|e| e.get("agent_id").is_some()).collect();
    let agent_id = tagged[0]["agent_id"].as_str().unwrap().to_owned();
    assert!(tagged.iter().all(|e| e["agent_id"] == agent_id.as_str()));
    let kinds: Vec<&str> = tagged
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .filter(|kind| !kind.starts_with("hook/"))
        .collect();
    assert_eq!(
        kinds,
        [
            "user/message",
            "assistant/message",
            "tool/call",
            "tool/result",
            "assistant/message"
        ]
    );
    let outer = log
        .iter()
        .find(|e| e["type"] == "tool/result" && e["call_id"] == "call_outer")
        .unwrap();
    assert_eq!(outer["content"], "LISTED");
    assert!(outer.get("agent_id").is_none());

    // The custom agent's tools: only Bash is offered inside it.
    let requests: Vec<Value> = std::fs::read_to_string(&requests)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[1]["tools"], json!(["bash"]));
    assert_eq!(requests[1]["messages"][0]["content"], "You list things.");

    // The frontmatter hook ran inside the agent, with its identity.
    let pre = read_json(&ctx.project().join("fm-pre.json"));
    assert_eq!(pre["agent_id"], agent_id.as_str());
    assert_eq!(pre["agent_type"], "lister");
    assert_eq!(pre["tool_name"], "Bash");

    // SubagentStop points at the sidechain transcript, in Claude Code's format.
    let stop = read_json(&ctx.project().join("substop.json"));
    assert_eq!(stop["hook_event_name"], "SubagentStop");
    assert_eq!(stop["last_assistant_message"], "LISTED");
    let transcript = std::path::PathBuf::from(stop["agent_transcript_path"].as_str().unwrap());
    assert!(transcript.ends_with(format!("sub-session/subagents/agent-{agent_id}.jsonl")));
    let lines: Vec<Value> = std::fs::read_to_string(&transcript)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(
        lines
            .iter()
            .all(|l| l["isSidechain"] == true && l["agentId"] == agent_id.as_str())
    );
    assert_eq!(lines[0]["message"]["content"], "Run echo inner");
    assert!(
        lines
            .iter()
            .any(|l| l["message"]["content"][0]["name"] == "Bash"),
        "{lines:?}"
    );

    // `dsh log` shows the nested run under its id; `dsh hooks log` has its hooks.
    let view = ctx.dsh().arg("log").arg(&out).output().unwrap();
    let view = String::from_utf8_lossy(&view.stdout).into_owned();
    assert!(view.contains(&format!("┌ subagent {agent_id}")), "{view}");
    assert!(view.contains("│ agent › Run echo inner"), "{view}");
    let hooks = ctx
        .dsh()
        .args(["hooks", "log", "--format", "json"])
        .arg(&out)
        .output()
        .unwrap();
    let hooks = String::from_utf8_lossy(&hooks.stdout).into_owned();
    assert!(hooks.contains("SubagentStop"), "{hooks}");
}

#[test]
fn a_headless_run_uses_a_subagent_against_the_loopback_provider() {
    let ctx = TestContext::new();
    let provider = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "agent",
                &json!({"description": "d", "prompt": "Say sub"}),
            )],
        ),
        MockResponse::text("SUB ANSWER"),
        MockResponse::text("PARENT ANSWER"),
    ]);
    let output = dsh_with(&ctx, &provider)
        .args(["-p", "Delegate"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "PARENT ANSWER\n");
    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    // The nested request: the general-purpose prompt, then the task.
    let nested = requests[1]["messages"].as_array().unwrap();
    assert_eq!(nested[0]["role"], "system");
    assert_eq!(nested[1]["role"], "user");
    assert_eq!(nested[1]["content"], "Say sub");
    // The parent's last request ends with the call's result.
    let last = requests[2]["messages"].as_array().unwrap();
    assert_eq!(last.last().unwrap()["content"], "SUB ANSWER");
    let logs = session_logs(&ctx);
    let log = events(&logs[0]);
    assert_eq!(
        log.iter().filter(|e| e.get("agent_id").is_some()).count(),
        2,
        "user and assistant messages of the nested run"
    );
}

/// Codex hooks (`$CODEX_HOME/hooks.json`) around the same nested run:
/// SubagentStart's context reaches the sub-agent's first request, a
/// SubagentStop block gives it another turn with Codex's continuation
/// prompt, and both payloads keep Codex's key order.
#[test]
fn codex_subagent_hooks_fire_around_the_nested_run() {
    let ctx = TestContext::new();
    let codex_home = ctx.home().join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let start = ctx.project().join("start.json");
    let stops = ctx.project().join("stops.jsonl");
    let blocked = ctx.project().join("blocked-once");
    std::fs::write(
        codex_home.join("hooks.json"),
        json!({"hooks": {
            "SubagentStart": [{"hooks": [{"type": "command", "command": format!(
                "cat > '{}'; printf '%s' '{{\"hookSpecificOutput\":{{\"hookEventName\":\"SubagentStart\",\"additionalContext\":\"SUB-CTX\"}}}}'",
                start.display())}]}],
            "SubagentStop": [{"hooks": [{"type": "command", "command": format!(
                "cat >> '{}'; echo >> '{}'; if [ ! -e '{b}' ]; then touch '{b}'; printf '%s' '{{\"decision\":\"block\",\"reason\":\"keep going\"}}'; fi",
                stops.display(), stops.display(), b = blocked.display())}]}]
        }})
        .to_string(),
    )
    .unwrap();
    let fixture = ctx.home().join("fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "prompts": ["Delegate"],
            "model": [
                {"tool_calls": [{"id": "call_1", "name": "agent",
                    "arguments": {"description": "d", "prompt": "Say sub"}}]},
                {"text": "first"},
                {"text": "second"},
                {"text": "DONE"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let requests = ctx.home().join("requests.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(&fixture)
        .args(["--session-id", "codex-sub", "--requests-out"])
        .arg(&requests)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let start: Value = read_json(&start);
    let keys: Vec<&str> = start
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "session_id",
            "turn_id",
            "transcript_path",
            "cwd",
            "hook_event_name",
            "model",
            "permission_mode",
            "agent_id",
            "agent_type"
        ]
    );
    assert_eq!(start["agent_type"], "default");
    let stops: Vec<Value> = std::fs::read_to_string(&stops)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(stops.len(), 2);
    assert_eq!(stops[0]["stop_hook_active"], false);
    assert_eq!(stops[0]["last_assistant_message"], "first");
    assert_eq!(stops[1]["stop_hook_active"], true);
    assert_eq!(stops[1]["agent_id"], start["agent_id"]);
    let requests: Vec<Value> = std::fs::read_to_string(&requests)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(requests.len(), 4);
    let first_nested = requests[1]["messages"].as_array().unwrap();
    assert!(
        first_nested
            .iter()
            .any(|m| m["role"] == "system" && m["content"] == "SUB-CTX"),
        "{first_nested:?}"
    );
    let second_nested = requests[2]["messages"].as_array().unwrap();
    let prompt = second_nested.last().unwrap();
    assert_eq!(prompt["role"], "user");
    let text = prompt["content"].as_str().unwrap();
    assert!(
        text.starts_with("<hook_prompt hook_run_id=\"subagent-stop:")
            && text.ends_with(">keep going</hook_prompt>"),
        "{text}"
    );
    // The parent gets the second answer.
    let last = requests[3]["messages"].as_array().unwrap();
    assert_eq!(last.last().unwrap()["content"], "second");
}

/// A custom agent's `model` is asked for in its requests, on the session's
/// provider; Claude Code's own aliases (`sonnet`, …) keep the session's model.
#[test]
fn a_custom_agents_model_is_used_for_its_requests() {
    let ctx = TestContext::new();
    let agents = ctx.project().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("fast.md"),
        "---\ndescription: Quick answers.\nmodel: small-model\n---\nBe quick.\n",
    )
    .unwrap();
    std::fs::write(
        agents.join("claude-ish.md"),
        "---\ndescription: Uses an alias.\nmodel: sonnet\n---\nBe careful.\n",
    )
    .unwrap();
    let call = |id: &str, kind: &str| {
        MockToolCall::new(
            id,
            "agent",
            &json!({"description": "d", "prompt": "p", "subagent_type": kind}),
        )
    };
    let provider = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![call("call_1", "fast"), call("call_2", "claude-ish")],
        ),
        MockResponse::text("fast answer"),
        MockResponse::text("alias answer"),
        MockResponse::text("DONE"),
    ]);
    let output = dsh_with(&ctx, &provider)
        .env("DSH_MODEL", "session-model")
        .args(["-p", "Delegate twice"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let models: Vec<String> = provider
        .requests()
        .iter()
        .map(|r| r["model"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        models,
        [
            "session-model",
            "small-model",
            "session-model",
            "session-model"
        ]
    );
    let nested = provider.requests()[1]["messages"][0]["content"].clone();
    assert_eq!(nested, "Be quick.");
}
