//! One session core for every front end and consent for the
//! processes a project starts: `dsh status`, `-p`, `replay` and
//! `acp` resolve the same spec from the same project and enforce it; project
//! MCP servers start only with user-level approval or a trusted workspace.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use dsh_provider::mock::{MockResponse, MockToolCall};
use serde_json::{Value, json};

use crate::acp_server::{AcpClient, is_method};
use crate::cli_headless::{dsh, events, mock, of_type, session_logs};
use crate::support::{TestContext, repo_root};

fn echo_server() -> PathBuf {
    repo_root()
        .join("fixtures")
        .join("mcp")
        .join("echo_server.py")
}

fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// `.mcp.json` with the echo server.
fn mcp_json(ctx: &TestContext) {
    write_json(
        &ctx.project().join(".mcp.json"),
        &json!({"mcpServers": {"echo": {"command": "python3", "args": [echo_server()]}}}),
    );
}

/// Claude Code's dialog approval of `echo`, where it records it: user-level
/// `~/.claude.json`.
fn approve_in_claude_json(ctx: &TestContext) {
    let project = ctx.project().display().to_string();
    write_json(
        &ctx.home().join(".claude.json"),
        &json!({"projects": {project: {"enabledMcpjsonServers": ["echo"]}}}),
    );
}

/// The shared project: a deny rule, an ask rule, an untrusted project hook,
/// an approved `.mcp.json` server, and a `--plugin-dir` plugin whose
/// UserPromptSubmit hook adds `PLUGIN-FIRED` to the prompt. Returns the
/// session flags.
fn shared_project(ctx: &TestContext) -> Vec<OsString> {
    write_json(
        &ctx.project().join(".claude").join("settings.json"),
        &json!({
            "permissions": {"deny": ["Bash(rm:*)"], "ask": ["Bash(touch:*)"]},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}
        }),
    );
    mcp_json(ctx);
    approve_in_claude_json(ctx);
    let plugin = ctx.home().join("src").join("probe");
    write_json(
        &plugin.join(".claude-plugin").join("plugin.json"),
        &json!({"name": "probe", "version": "1.0.0"}),
    );
    write_json(
        &plugin.join("hooks").join("hooks.json"),
        &json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo PLUGIN-FIRED"}]}]}}),
    );
    vec![
        "--plugin-dir".into(),
        plugin.into_os_string(),
        "--autocompact".into(),
        "50000".into(),
    ]
}

fn status_json(ctx: &TestContext, flags: &[OsString]) -> Value {
    let output = ctx
        .dsh()
        .args(["status", "--json"])
        .args(flags)
        .env("DSH_API_KEY", "sk-secret-never-shown")
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!stdout.contains("sk-secret-never-shown"), "{stdout}");
    serde_json::from_str(&stdout).unwrap()
}

/// The `mcp: …` lines of a session log's header.
fn header_mcp_lines(log: &[Value]) -> Vec<String> {
    log[0]["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|notice| notice.starts_with("mcp: "))
        .map(str::to_owned)
        .collect()
}

/// The option kinds of a `session/request_permission`, in order.
fn option_kinds(request: &Value) -> Vec<String> {
    request["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|option| option["kind"].as_str().unwrap().to_owned())
        .collect()
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| tool["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn rm_then(rest: Vec<MockResponse>) -> Vec<MockResponse> {
    let mut script = vec![MockResponse::tool_calls(
        "",
        vec![MockToolCall::new(
            "call_rm",
            "bash",
            &json!({"command": "rm -f precious"}),
        )],
    )];
    script.extend(rest);
    script
}

#[test]
fn every_front_end_resolves_and_enforces_the_same_spec() {
    let ctx = TestContext::new();
    let flags = shared_project(&ctx);
    std::fs::write(ctx.project().join("precious"), "keep").unwrap();

    // `dsh status --json`: the spec, with exactly the documented keys.
    let status = status_json(&ctx, &flags);
    let keys: Vec<&str> = status
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "hooks",
            "held_back",
            "settings_layers",
            "permissions",
            "mcp_servers",
            "plugins",
            "instructions",
            "compaction",
            "provider",
            "system_prompt"
        ]
    );
    assert_eq!(
        status["system_prompt"]["version"],
        dsh_core::system_prompt::SYSTEM_PROMPT_VERSION
    );
    let prompt = status["system_prompt"]["text"].as_str().unwrap();
    assert!(
        prompt.starts_with("You are dsh, a coding agent."),
        "{prompt}"
    );
    assert!(
        prompt.contains(&format!("- Working directory: {}", ctx.project().display())),
        "{prompt}"
    );
    let rules: Vec<(String, String)> = status["permissions"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rule| {
            (
                rule["rule"].as_str().unwrap().to_owned(),
                rule["behavior"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        rules.contains(&("Bash(rm:*)".to_owned(), "deny".to_owned())),
        "{rules:?}"
    );
    assert!(
        rules.contains(&("Bash(touch:*)".to_owned(), "ask".to_owned())),
        "{rules:?}"
    );
    assert_eq!(status["permissions"]["mode"], "default");
    let hooks = status["hooks"].as_array().unwrap();
    let stop = hooks.iter().find(|h| h["event"] == "Stop").unwrap();
    assert_eq!(stop["trust"], "untrusted", "{stop}");
    let plugin_hook = hooks
        .iter()
        .find(|h| h["event"] == "UserPromptSubmit")
        .unwrap();
    assert_eq!(plugin_hook["command"], "echo PLUGIN-FIRED");
    assert_eq!(status["mcp_servers"][0]["name"], "echo");
    assert_eq!(status["mcp_servers"][0]["consent"], "approved");
    assert_eq!(status["plugins"].as_array().unwrap().len(), 1);
    assert_eq!(status["compaction"]["context_window"], 50_000);
    assert_eq!(status["compaction"]["limit"], 42_500);
    assert_eq!(status["provider"]["api_key_set"], true);

    // `-p`: the deny rule stops `rm`; the MCP tool is listed; the plugin
    // hook fired.
    let provider = mock(rm_then(vec![MockResponse::text("done")]));
    let output = dsh(&ctx, &provider)
        .args(["-p", "clean up"])
        .args(&flags)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(ctx.project().join("precious").exists());
    let requests = provider.requests();
    assert!(
        tool_names(&requests[0]).contains(&"mcp__echo__echo".to_owned()),
        "{:?}",
        tool_names(&requests[0])
    );
    assert!(requests[0].to_string().contains("PLUGIN-FIRED"));
    let print_log = events(&session_logs(&ctx)[0]);
    let result = of_type(&print_log, "tool/result")[0];
    assert_eq!(result["is_error"], true, "{result}");
    let print_mcp = header_mcp_lines(&print_log);
    assert!(
        print_mcp.iter().any(|line| line.starts_with("mcp: echo")),
        "{print_mcp:?}"
    );

    // `replay`: the same deny rule (replay runs bypassPermissions, deny
    // rules still bite), the same server.
    let fixture = ctx.home().join("rm.json");
    write_json(
        &fixture,
        &json!({"prompts": ["clean up"], "model": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "rm -f precious"}}]},
            {"text": "done"}
        ]}),
    );
    let replay_log = ctx.home().join("replay.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(&fixture)
        .arg("--out")
        .arg(&replay_log)
        .args(&flags)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(ctx.project().join("precious").exists());
    let replay_events = events(&replay_log);
    assert_eq!(of_type(&replay_events, "tool/result")[0]["is_error"], true);
    assert_eq!(header_mcp_lines(&replay_events), print_mcp);

    // ACP: the deny rule stops the call without a question; the ask rule
    // asks; the MCP tool is listed; the plugin hook fired.
    let provider = mock(rm_then(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_touch",
                "bash",
                &json!({"command": "touch made"}),
            )],
        ),
        MockResponse::text("done"),
    ]));
    let mut client = AcpClient::start_with(&ctx, &provider, &flags, &[]);
    let init = client.request("initialize", json!({"protocolVersion": 1}));
    client.response(init);
    let new = client.request(
        "session/new",
        json!({"cwd": ctx.project(), "mcpServers": []}),
    );
    let session = client.response(new)["result"]["sessionId"].clone();
    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "clean up"}]}),
    );
    // The untrusted project hook is asked about first.
    let trust = client.until(|m| is_method(m, "session/request_permission"));
    assert!(
        trust["params"]["toolCall"]["toolCallId"]
            .as_str()
            .unwrap()
            .starts_with("dsh-trust-"),
        "{trust}"
    );
    client.pick(&trust, "reject_once");
    let ask = client.until(|m| is_method(m, "session/request_permission"));
    assert_eq!(ask["params"]["toolCall"]["toolCallId"], "call_touch");
    let kinds = option_kinds(&ask);
    assert_eq!(kinds, ["allow_once", "reject_once"]);
    client.pick(&ask, "allow_once");
    let done = client.response(prompt);
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let (status_code, _) = client.finish();
    assert!(status_code.success());
    assert!(ctx.project().join("precious").exists(), "rm ran under ACP");
    assert!(ctx.project().join("made").exists());
    let requests = provider.requests();
    assert!(tool_names(&requests[0]).contains(&"mcp__echo__echo".to_owned()));
    assert!(requests[0].to_string().contains("PLUGIN-FIRED"));
    let acp_log = session_logs(&ctx)
        .into_iter()
        .map(|path| events(&path))
        .find(|log| log[0]["session_id"] == session)
        .unwrap();
    let results = of_type(&acp_log, "tool/result");
    assert_eq!(results[0]["is_error"], true, "{}", results[0]);
    assert_eq!(results[1]["is_error"], false, "{}", results[1]);
    assert_eq!(header_mcp_lines(&acp_log), print_mcp);
    // ACP session directories are private, like every other front end's.
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(ctx.home().join(".dsh").join("sessions"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
}

#[test]
fn acp_offers_allow_always_when_the_mode_asks_and_remembers_the_rule() {
    let ctx = TestContext::new();
    let touch = |id: &str, file: &str| {
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                id,
                "bash",
                &json!({"command": format!("touch {file}")}),
            )],
        )
    };
    let provider = mock(vec![
        touch("call_a", "a"),
        touch("call_b", "b"),
        MockResponse::text("done"),
    ]);
    let mut client = AcpClient::start(&ctx, &provider);
    let init = client.request("initialize", json!({"protocolVersion": 1}));
    client.response(init);
    let new = client.request(
        "session/new",
        json!({"cwd": ctx.project(), "mcpServers": []}),
    );
    let session = client.response(new)["result"]["sessionId"].clone();
    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "touch"}]}),
    );
    let ask = client.until(|m| is_method(m, "session/request_permission"));
    let kinds = option_kinds(&ask);
    assert_eq!(kinds, ["allow_always", "allow_once", "reject_once"]);
    client.pick(&ask, "allow_always");
    // The second touch is covered by the rule: no second question.
    let done = client.until(|m| m["id"] == prompt && m.get("method").is_none());
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    client.finish();
    assert!(ctx.project().join("a").exists() && ctx.project().join("b").exists());
    let local = std::fs::read_to_string(ctx.project().join(".claude/settings.local.json")).unwrap();
    assert!(local.contains("Bash(touch:*)"), "{local}");
}

/// A project that approves its own servers: `.mcp.json` plus
/// `enableAllProjectMcpServers` in its own settings, and a Codex server in
/// its `.codex/config.toml`.
fn self_approving_project(ctx: &TestContext) {
    mcp_json(ctx);
    write_json(
        &ctx.project().join(".claude").join("settings.json"),
        &json!({"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["echo"]}),
    );
    std::fs::create_dir_all(ctx.project().join(".codex")).unwrap();
    std::fs::write(
        ctx.project().join(".codex").join("config.toml"),
        format!(
            "[mcp_servers.codexecho]\ncommand = \"python3\"\nargs = [\"{}\", \"--name\", \"codexecho\"]\n",
            echo_server().display()
        ),
    )
    .unwrap();
}

#[test]
fn headless_names_unapproved_project_servers_and_strict_skips_them() {
    let ctx = TestContext::new();
    self_approving_project(&ctx);
    let provider = mock(vec![MockResponse::text("one"), MockResponse::text("two")]);
    let output = dsh(&ctx, &provider).args(["-p", "hi"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("starting 2 project MCP server(s) nobody approved"),
        "{stderr}"
    );
    let tools = tool_names(&provider.requests()[0]);
    assert!(tools.contains(&"mcp__echo__echo".to_owned()), "{tools:?}");
    assert!(
        tools.iter().any(|t| t.starts_with("mcp__codexecho__")),
        "{tools:?}"
    );

    let output = dsh(&ctx, &provider)
        .args(["-p", "hi", "--strict-hooks"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("not starting 2 project MCP server(s) nobody approved"),
        "{stderr}"
    );
    assert!(
        stderr.contains("echo") && stderr.contains("codexecho"),
        "{stderr}"
    );
    let tools = tool_names(&provider.requests()[1]);
    assert!(!tools.iter().any(|t| t.starts_with("mcp__")), "{tools:?}");
}

#[test]
fn a_trusted_workspace_approves_its_servers() {
    let ctx = TestContext::new();
    self_approving_project(&ctx);
    let trusted = ctx.dsh().args(["hooks", "trust"]).output().unwrap();
    assert!(trusted.status.success());
    let status = status_json(&ctx, &[]);
    let consents: Vec<&str> = status["mcp_servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|server| server["consent"].as_str().unwrap())
        .collect();
    assert_eq!(consents, ["approved", "approved"]);
    let provider = mock(vec![MockResponse::text("one")]);
    let output = dsh(&ctx, &provider)
        .args(["-p", "hi", "--strict-hooks"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("nobody approved"), "{stderr}");
    let tools = tool_names(&provider.requests()[0]);
    assert!(tools.contains(&"mcp__echo__echo".to_owned()), "{tools:?}");
}

#[test]
fn acp_asks_before_starting_self_approved_project_servers() {
    let ctx = TestContext::new();
    self_approving_project(&ctx);
    let (asked, tools) = acp_session_answering(&ctx, "reject_once");
    assert_eq!(asked.len(), 1, "{asked:?}");
    let (consent, settled) = &asked[0];
    // The one trust question names the servers.
    assert!(
        consent["params"]["toolCall"]["toolCallId"]
            .as_str()
            .unwrap()
            .starts_with("dsh-trust-"),
        "{consent}"
    );
    assert_eq!(
        consent["params"]["toolCall"]["title"],
        "Trust this project?"
    );
    let text = consent["params"]["toolCall"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("echo_server.py"), "{text}");
    assert!(text.contains("codexecho"), "{text}");
    assert_eq!(settled["params"]["update"]["status"], "failed", "{settled}");
    assert!(!tools.iter().any(|t| t.starts_with("mcp__")), "{tools:?}");
    // Nothing was remembered.
    assert!(!ctx.home().join(".claude.json").exists());
}

/// One ACP session in the project: answers every consent question with
/// `answer` and returns the questions asked (with the updates that settled
/// them) and the tools the model was offered.
fn acp_session_answering(ctx: &TestContext, answer: &str) -> (Vec<(Value, Value)>, Vec<String>) {
    let provider = mock(vec![MockResponse::text("one")]);
    let mut client = AcpClient::start(ctx, &provider);
    let init = client.request("initialize", json!({"protocolVersion": 1}));
    client.response(init);
    let new = client.request(
        "session/new",
        json!({"cwd": ctx.project(), "mcpServers": []}),
    );
    let session = client.response(new)["result"]["sessionId"].clone();
    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}),
    );
    let mut asked = Vec::new();
    loop {
        let message =
            client.until(|m| is_method(m, "session/request_permission") || m["id"] == prompt);
        if message["id"] == prompt {
            assert_eq!(message["result"]["stopReason"], "end_turn", "{message}");
            break;
        }
        let id = message["params"]["toolCall"]["toolCallId"].clone();
        client.pick(&message, answer);
        let settled = client.until(|m| {
            m["params"]["update"]["sessionUpdate"] == "tool_call_update"
                && m["params"]["update"]["toolCallId"] == id
        });
        asked.push((message, settled));
    }
    client.finish();
    (asked, tool_names(&provider.requests()[0]))
}

#[test]
fn acp_always_trusts_the_project_as_dsh_hooks_trust_does() {
    let ctx = TestContext::new();
    self_approving_project(&ctx);
    write_json(
        &ctx.project().join(".claude").join("settings.json"),
        &json!({
            "enableAllProjectMcpServers": true,
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}
        }),
    );
    let (asked, tools) = acp_session_answering(&ctx, "allow_always");
    // One question for the hook and both servers.
    assert_eq!(asked.len(), 1, "{asked:?}");
    let (question, settled) = &asked[0];
    let kinds = option_kinds(question);
    assert_eq!(kinds, ["allow_always", "allow_once", "reject_once"]);
    let text = question["params"]["toolCall"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("[claude] Stop"), "{text}");
    assert!(
        text.contains("`echo`") && text.contains("`codexecho`"),
        "{text}"
    );
    let update = &settled["params"]["update"];
    assert_eq!(update["status"], "completed", "{update}");
    let trust_json = ctx.home().join(".dsh").join("trust.json");
    let said = update["content"][0]["content"]["text"].as_str().unwrap();
    assert!(said.contains(&trust_json.display().to_string()), "{said}");
    assert!(tools.contains(&"mcp__echo__echo".to_owned()), "{tools:?}");
    assert!(
        tools.iter().any(|t| t.starts_with("mcp__codexecho__")),
        "{tools:?}"
    );
    // Stored as `dsh hooks trust` stores it: the workspace too.
    let status = status_json(&ctx, &[]);
    assert_eq!(
        status["permissions"]["workspace_trusted_by"],
        "dsh hooks trust"
    );

    // The next session asks nothing and starts both servers.
    let (asked, tools) = acp_session_answering(&ctx, "reject_once");
    assert!(asked.is_empty(), "{asked:?}");
    assert!(tools.contains(&"mcp__echo__echo".to_owned()), "{tools:?}");
    assert!(
        tools.iter().any(|t| t.starts_with("mcp__codexecho__")),
        "{tools:?}"
    );
}

#[test]
fn the_terminal_asks_before_starting_self_approved_project_servers() {
    let ctx = TestContext::new();
    self_approving_project(&ctx);
    let provider = mock(vec![MockResponse::text("answered")]);
    let mut session = crate::cli_interactive::spawn_dsh_with(&ctx, &provider, &[], &[]);
    crate::cli_interactive::expect(
        &mut session,
        "MCP servers (starting one runs its command)",
        "the trust question",
    );
    crate::cli_interactive::expect(&mut session, "[n]o: ", "the choice");
    session.send_line("n").unwrap();
    crate::cli_interactive::expect(&mut session, "its servers do not start", "the refusal");
    crate::cli_interactive::expect(&mut session, "Ctrl-D exits", "the banner");
    crate::cli_interactive::expect(&mut session, "> ", "the prompt");
    session.send_line("hello").unwrap();
    crate::cli_interactive::expect(&mut session, "answered", "the answer");
    crate::cli_interactive::expect(&mut session, "> ", "the prompt after the turn");
    session.send_control('d').unwrap();
    session.exp_eof().unwrap();
    let tools = tool_names(&provider.requests()[0]);
    assert!(!tools.iter().any(|t| t.starts_with("mcp__")), "{tools:?}");
}

#[test]
fn an_empty_dsh_home_is_unset_for_sessions_and_trust_alike() {
    let ctx = TestContext::new();
    write_json(
        &ctx.project().join(".claude").join("settings.json"),
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}),
    );
    let trusted = ctx
        .dsh()
        .args(["hooks", "trust"])
        .env("DSH_HOME", "")
        .output()
        .unwrap();
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    assert!(!ctx.project().join("trust.json").exists());
    assert!(ctx.home().join(".dsh").join("trust.json").is_file());
    let provider = mock(vec![MockResponse::text("one")]);
    let output = dsh(&ctx, &provider)
        .args(["-p", "hi", "--strict-hooks"])
        .env("DSH_HOME", "")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(session_logs(&ctx).len(), 1);
    let status = status_json(&ctx, &[]);
    assert_eq!(
        status["permissions"]["workspace_trusted_by"],
        "dsh hooks trust"
    );
}

/// `--tools` (Claude Code's flag) chooses the built-in tools `dsh -p` offers: Claude Code's
/// names select dsh's tools, `""` offers none, `default` all of them; a call to a tool left out
/// is an unknown tool and runs nothing.
#[test]
fn headless_tools_flag_restricts_the_built_in_tools() {
    let ctx = TestContext::new();
    let mock = crate::cli_headless::mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "bash",
                &json!({"command": "touch made-by-bash"}),
            )],
        ),
        MockResponse::text("done"),
        MockResponse::text("none"),
        MockResponse::text("all"),
    ]);
    let output = crate::cli_headless::dsh(&ctx, &mock)
        .args([
            "-p",
            "go",
            "--tools",
            "Read,Edit",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = mock.requests();
    // Through `-p` the model sees Claude Code's tool names.
    assert_eq!(tool_names(&requests[0]), ["Edit", "Read"]);
    assert!(!ctx.project().join("made-by-bash").exists());
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let log = crate::cli_headless::events(
        &ctx.home()
            .join(".dsh/sessions")
            .join(format!("{}.jsonl", result["session_id"].as_str().unwrap())),
    );
    let tool_result = log
        .iter()
        .find(|e| e["type"] == "tool/result")
        .unwrap()
        .clone();
    assert_eq!(tool_result["is_error"], true);
    assert_eq!(tool_result["disposition"], "unknown_tool");

    for (flag, expected) in [
        ("", Vec::<&str>::new()),
        (
            "default",
            vec![
                // No AskUserQuestion: nobody can answer in `-p`, and Claude
                // Code does not offer it there (ev_ask_user_question_p).
                "Agent",
                "Bash",
                "BashOutput",
                "Edit",
                "ExitPlanMode",
                "Glob",
                "Grep",
                "KillShell",
                "NotebookEdit",
                "Read",
                "TaskCreate",
                "TaskGet",
                "TaskList",
                "TaskUpdate",
                "WebFetch",
                "Write",
            ],
        ),
    ] {
        let output = crate::cli_headless::dsh(&ctx, &mock)
            .args(["-p", "go", "--tools", flag])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{flag}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let requests = mock.requests();
        let mut offered = tool_names(requests.last().unwrap());
        offered.sort();
        assert_eq!(offered, expected, "{flag:?}");
    }
}
