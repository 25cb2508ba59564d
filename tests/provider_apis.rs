//! The model APIs end to end: `dsh -p` against the loopback mock speaking
//! Chat Completions and Anthropic Messages, with Claude Code hooks. Hooks
//! see the same payloads whichever API serves the session; dsh's first
//! requests have the shape Claude Code's captured requests have; `dsh
//! status` and the session log name the API.

use std::path::Path;

use dsh_provider::mock::{MockProvider, MockResponse, MockToolCall, MockWire};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::cli_headless::{events, of_type, session_logs};
use crate::support::{TestContext, repo_root};

/// The captured scenario these tests replay: a PreToolUse hook blocks
/// `echo` with exit 2.
const SCENARIO: &str = "fixtures/conformance/claude/b_pre_exit2";

/// The scenario's scripted model: Claude Code's oracle replies.
fn script() -> Vec<MockResponse> {
    vec![
        MockResponse::tool_calls(
            "I'll run it.",
            vec![MockToolCall::new(
                "toolu_oracle_001",
                "bash",
                &json!({"command": "echo hi", "description": "x"}),
            )],
        ),
        MockResponse::text("FINAL: all done."),
    ]
}

/// User-level hooks: every event's stdin is recorded; PreToolUse blocks
/// `echo` with exit 2, as the scenario's hook did.
fn install_hooks(ctx: &TestContext) {
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("record.sh"),
        "input=$(cat)\nprintf '%s\\n' \"$input\" >> \"$HOME/hook-inputs.jsonl\"\n\
         case \"$input\" in *'\"PreToolUse\"'*'echo hi'*) echo 'BLOCKED-BY-EXIT2: echo is forbidden' >&2; exit 2;; esac\n",
    )
    .unwrap();
    let hook =
        json!([{"hooks": [{"type": "command", "command": "sh \"$HOME/.claude/record.sh\""}]}]);
    let settings = json!({"hooks": {
        "UserPromptSubmit": hook, "PreToolUse": hook, "PostToolUse": hook,
        "PostToolUseFailure": hook, "Stop": hook,
    }});
    std::fs::write(claude.join("settings.json"), settings.to_string()).unwrap();
}

/// One `dsh -p` run of the scenario against a mock speaking `wire`; the
/// mock (with its recorded requests) and the hooks' inputs.
fn run(ctx: &TestContext, wire: MockWire, api: &str) -> (MockProvider, Vec<Value>) {
    let inputs = ctx.home().join("hook-inputs.jsonl");
    let _ = std::fs::remove_file(&inputs);
    let mock = MockProvider::start_blocking_with(wire, script()).unwrap();
    let output = ctx
        .dsh()
        .env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test")
        .args(["--provider-api", api, "--model", "claude-sonnet-4-5"])
        .args(["-p", "Please run echo hi"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{api}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "FINAL: all done.\n"
    );
    let inputs = std::fs::read_to_string(inputs)
        .unwrap()
        .lines()
        .map(|line| {
            let mut input: Value = serde_json::from_str(line).unwrap();
            // Per session: the id and what is named after it.
            for key in ["session_id", "transcript_path", "prompt_id"] {
                if let Some(object) = input.as_object_mut() {
                    object.remove(key);
                }
            }
            input
        })
        .collect();
    (mock, inputs)
}

#[test]
fn hooks_see_no_difference_between_the_apis() {
    let ctx = TestContext::new();
    install_hooks(&ctx);
    let (chat_mock, chat) = run(&ctx, MockWire::Chat, "chat");
    let (anthropic_mock, anthropic) = run(&ctx, MockWire::Anthropic, "anthropic");
    let fired: Vec<&str> = chat
        .iter()
        .map(|input| input["hook_event_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        fired,
        ["UserPromptSubmit", "PreToolUse", "Stop"],
        "{chat:#?}"
    );
    assert_eq!(chat, anthropic);

    assert_eq!(chat_mock.recorded()[0].path, "/chat/completions");
    assert_eq!(anthropic_mock.recorded()[0].path, "/v1/messages");
    // The blocked call's feedback reached the model through both APIs.
    let feedback = &anthropic_mock.requests()[1]["messages"][2]["content"][0];
    assert_eq!(feedback["type"], "tool_result");
    // A failed call is marked as Claude Code marks it.
    assert_eq!(feedback["is_error"], true, "{feedback}");
    assert!(
        feedback["content"]
            .as_str()
            .unwrap()
            .contains("BLOCKED-BY-EXIT2"),
        "{feedback}"
    );

    // The session logs name the API that served each session.
    let logs = session_logs(&ctx);
    let mut apis: Vec<String> = logs
        .iter()
        .map(|log| {
            let header = &of_type(&events(log), "session/header")[0].clone();
            header["provider_api"].as_str().unwrap().to_owned()
        })
        .collect();
    apis.sort();
    assert_eq!(apis, ["anthropic", "chat"]);
}

/// What is compared between Claude Code's captured request and dsh's:
/// roles, block types (a run of text blocks counts once: how a prompt is
/// framed is each tool's own), the system prompt's cache breakpoint, the
/// breakpoint on the last block of the final message, and any other
/// breakpoint's position.
fn shape(messages: &[Value], system_cached: bool) -> Value {
    let cached = |block: &Value| block.get("cache_control").is_some();
    let mut conversation = Vec::new();
    let mut others = Vec::new();
    let last = messages.len().saturating_sub(1);
    for (index, message) in messages.iter().enumerate() {
        let blocks = message["content"].as_array().unwrap();
        if index != last {
            for (at, block) in blocks.iter().enumerate() {
                if cached(block) && message["role"] != "system" {
                    others.push(json!([conversation.len(), at]));
                }
            }
        }
        if message["role"] == "system" {
            continue;
        }
        let mut kinds: Vec<&str> = Vec::new();
        for block in blocks {
            let kind = block["type"].as_str().unwrap();
            if kinds.last() != Some(&kind) || kind != "text" {
                kinds.push(kind);
            }
        }
        conversation.push(json!([message["role"], kinds]));
    }
    let end_cached = messages
        .last()
        .and_then(|message| message["content"].as_array()?.last())
        .is_some_and(cached);
    json!({
        "conversation": conversation,
        "system_cached": system_cached,
        "end_cached": end_cached,
        "other_breakpoints": others,
    })
}

fn captured_shapes(scenario: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(scenario.join("captured/model.json")).unwrap();
    let requests: Vec<Value> = serde_json::from_str(&text).unwrap();
    requests
        .iter()
        .map(|request| {
            let messages = request["messages"].as_array().unwrap();
            // Claude Code's capture shows the system prompt as a
            // `system` message; dsh sends it as the top-level `system`.
            let system_cached = messages.iter().any(|message| {
                message["role"] == "system"
                    && message["content"]
                        .as_array()
                        .and_then(|blocks| blocks.last())
                        .is_some_and(|block| block.get("cache_control").is_some())
            });
            shape(messages, system_cached)
        })
        .collect()
}

#[test]
fn requests_have_claude_codes_shape() {
    let ctx = TestContext::new();
    install_hooks(&ctx);
    let (mock, _) = run(&ctx, MockWire::Anthropic, "anthropic");
    let captured = captured_shapes(&repo_root().join(SCENARIO));
    let requests = mock.requests();
    assert_eq!(requests.len(), captured.len());
    for (index, (request, captured)) in requests.iter().zip(&captured).enumerate() {
        let system_cached = request["system"]
            .as_array()
            .and_then(|blocks| blocks.last())
            .is_some_and(|block| block["cache_control"] == json!({"type": "ephemeral"}));
        let ours = shape(request["messages"].as_array().unwrap(), system_cached);
        assert_eq!(&ours, captured, "request {index}: {request:#}");
        // Tools in the Messages API's shape: name, description, an object
        // schema; the last carries a breakpoint.
        let tools = request["tools"].as_array().unwrap();
        for tool in tools {
            assert!(tool["name"].is_string() && tool["description"].is_string());
            assert_eq!(tool["input_schema"]["type"], "object", "{tool}");
        }
        assert!(tools.last().unwrap().get("cache_control").is_some());
        // Through `-p` the model sees Claude Code's tool names.
        assert!(tools.iter().any(|tool| tool["name"] == "Bash"));
    }
    // The conversation the capture starts from, role by role.
    assert_eq!(
        captured[1]["conversation"][1],
        json!(["assistant", ["text", "tool_use"]])
    );
}

#[test]
fn status_names_the_api_and_why_with_only_an_anthropic_key() {
    let ctx = TestContext::new();
    let output = ctx
        .dsh()
        .env("ANTHROPIC_API_KEY", "sk-ant-x")
        .args(["status", "--json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let status: Value = serde_json::from_slice(&output.stdout).unwrap();
    let provider = &status["provider"];
    assert_eq!(provider["api"], "anthropic");
    assert_eq!(provider["base_url"], "https://api.anthropic.com");
    assert_eq!(provider["url"], "https://api.anthropic.com/v1/messages");
    assert_eq!(provider["model"], "claude-sonnet-4-5");
    assert_eq!(provider["api_key_env"], "ANTHROPIC_API_KEY");
    assert_eq!(provider["api_key_set"], true);
    assert_eq!(provider["why"]["api"], "$ANTHROPIC_API_KEY is set");
    assert_eq!(provider["why"]["base_url"], "default");
    assert_eq!(status["compaction"]["context_window"], 200_000);

    let text = ctx
        .dsh()
        .env("ANTHROPIC_API_KEY", "sk-ant-x")
        .args(["status", "--provider-api", "chat"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("provider: deepseek-chat at https://api.deepseek.com"),
        "{text}"
    );
    assert!(text.contains("api: chat (--provider-api)"), "{text}");
}

/// The request bodies a run of `dsh -p --input-format stream-json` sent,
/// one user line per prompt, resuming `resume` when given: the mock's
/// recorded bodies, and the session id from the run's stdout.
fn stream_run(
    ctx: &TestContext,
    wire: MockWire,
    api: &str,
    model: &str,
    script: Vec<MockResponse>,
    prompts: &[&str],
    resume: Option<&str>,
) -> (Vec<Value>, String) {
    let mock = MockProvider::start_blocking_with(wire, script).unwrap();
    let stdin: String = prompts
        .iter()
        .map(|prompt| {
            format!(
                "{}\n",
                json!({"type": "user", "message": {"role": "user", "content": prompt}})
            )
        })
        .collect();
    let mut cmd = ctx.dsh();
    cmd.env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test")
        .args(["--provider-api", api, "--model", model, "-p"])
        .args([
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .arg("--verbose");
    if let Some(id) = resume {
        cmd.args(["--resume", id]);
    }
    let output = cmd.write_stdin(stdin).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let session = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|line| line["session_id"].as_str().map(str::to_owned))
        .unwrap_or_else(|| {
            panic!(
                "{api}: no session id\n{stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
    assert_eq!(mock.remaining(), 0, "{api}: script not used up\n{stdout}");
    (mock.requests(), session)
}

/// A session whose turn ended right after a tool call the model made with
/// thinking (here: the next request failed), then resumed in a new dsh
/// process, sends the same request as one process that went on: the
/// thinking is kept in the session log and sent back, signed and
/// unchanged, with thinking still on.
fn resumed_thinking_is_sent_as_uninterrupted(wire: MockWire, api: &str, model: &str) {
    let tool_turn = || {
        let mut reply = dsh_provider::mock::MockReply::text("Listing.")
            .with_thinking("I should list the files.", "SIGNED-THINKING-1");
        reply.tool_calls = vec![MockToolCall::new(
            "toolu_think_1",
            "bash",
            &json!({"command": "echo hi"}),
        )];
        MockResponse::Reply(reply)
    };
    let failure = || {
        MockResponse::status(
            400,
            r#"{"error":{"type":"invalid_request_error","message":"mock: stop here"}}"#,
        )
    };
    let config = "[provider]\nmax_retries = 0\nthinking_budget_tokens = 2048\n";

    let straight = TestContext::new();
    std::fs::create_dir_all(straight.home().join(".dsh")).unwrap();
    std::fs::write(straight.home().join(".dsh/config.toml"), config).unwrap();
    let (requests, _) = stream_run(
        &straight,
        wire,
        api,
        model,
        vec![tool_turn(), failure(), MockResponse::text("done")],
        &["Please list", "Go on"],
        None,
    );
    assert_eq!(requests.len(), 3, "{api}");
    let uninterrupted = &requests[2];

    let broken = TestContext::new();
    std::fs::create_dir_all(broken.home().join(".dsh")).unwrap();
    std::fs::write(broken.home().join(".dsh/config.toml"), config).unwrap();
    let (_, id) = stream_run(
        &broken,
        wire,
        api,
        model,
        vec![tool_turn(), failure()],
        &["Please list"],
        None,
    );
    let (requests, _) = stream_run(
        &broken,
        wire,
        api,
        model,
        vec![MockResponse::text("done")],
        &["Go on"],
        Some(&id),
    );
    assert_eq!(requests.len(), 1, "{api}");
    let text = uninterrupted.to_string();
    assert!(text.contains("SIGNED-THINKING-1"), "{api}: {text}");
    // Project paths differ between the two contexts: compare with each
    // context's root replaced.
    let normal = |body: &Value, ctx: &TestContext| {
        body.to_string()
            .replace(&ctx.project().display().to_string(), "<project>")
            .replace(&ctx.home().display().to_string(), "<home>")
    };
    assert_eq!(
        normal(&requests[0], &broken),
        normal(uninterrupted, &straight),
        "{api}"
    );
}

#[test]
fn anthropic_thinking_survives_a_resume() {
    resumed_thinking_is_sent_as_uninterrupted(
        MockWire::Anthropic,
        "anthropic",
        "claude-sonnet-4-5",
    );
}

#[test]
fn responses_reasoning_survives_a_resume() {
    resumed_thinking_is_sent_as_uninterrupted(MockWire::Responses, "responses", "gpt-5");
}
