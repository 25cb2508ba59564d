//! Prompts that are commands (`/clear`, `/model`, custom commands,
//! unknown names) through the real `dsh replay`, and the system-prompt seam
//! (seed 004's `before_agent_start`) with a native plugin through the real loop.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use dsh_agent::instructions::ContextRoots;
use dsh_agent::{Fixture, Observers, ProjectContext, ReplayOptions, replay_fixture};
use dsh_protocol::{
    ContextMessageEvent, EventBody, ModelSwitchedEvent, PromptBlockedEvent, SessionHeaderEvent,
    TurnEndEvent, TurnEndReason, TurnStartEvent,
};
use dsh_seams::{
    AgentStartDecision, AgentStartInput, CommandSource, ContextEntry, ExpansionInput,
    InstructionFile, LoadReason, Plugin, PromptDecision, SeamContext,
};
use dsh_session::SessionLog;
use serde_json::{Value, json};

use crate::support::TestContext;

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// A Claude Code hook that appends its stdin (one line) to `hooks.log`.
const RECORDER: &str = r#"{"hooks": {
  "SessionStart": [{"hooks": [{"type": "command", "command": "cat >> \"$CLAUDE_PROJECT_DIR/hooks.log\"; echo >> \"$CLAUDE_PROJECT_DIR/hooks.log\""}]}],
  "SessionEnd": [{"hooks": [{"type": "command", "command": "cat >> \"$CLAUDE_PROJECT_DIR/hooks.log\"; echo >> \"$CLAUDE_PROJECT_DIR/hooks.log\""}]}]
}}"#;

#[test]
fn model_and_clear_are_session_commands_with_their_hooks() {
    let ctx = TestContext::new();
    write(&ctx.project().join(".claude/settings.json"), RECORDER);
    let fixture = ctx.home().join("fixture.json");
    write(
        &fixture,
        &json!({
            "prompts": ["first question", "/model deepseek-reasoner", "/clear", "second question"],
            "model": [{"text": "first answer"}, {"text": "second answer"}]
        })
        .to_string(),
    );
    let requests_path = ctx.home().join("requests.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(&fixture)
        .arg("--requests-out")
        .arg(&requests_path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let log = lines(&String::from_utf8_lossy(&output.stdout));
    let types: Vec<&str> = log
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .filter(|t| !t.starts_with("hook/"))
        .collect();
    assert_eq!(
        types,
        vec![
            "session/header",
            "turn/start",
            "user/message",
            "assistant/message",
            "turn/end",
            "model/switched",
            "session/cleared",
            "turn/start",
            "user/message",
            "assistant/message",
            "turn/end",
        ]
    );
    let switched = log.iter().find(|e| e["type"] == "model/switched").unwrap();
    assert_eq!(switched["from"], "scripted");
    assert_eq!(switched["to"], "deepseek-reasoner");
    // The clear's session hooks sit between the turns, outside both.
    let cleared_at = log
        .iter()
        .position(|e| e["type"] == "session/cleared")
        .unwrap();
    let hooks_around: Vec<(&str, bool)> = log
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "hook/invoked")
        .map(|(i, e)| (e["event"].as_str().unwrap(), i < cleared_at))
        .collect();
    assert_eq!(
        hooks_around,
        vec![
            ("SessionStart", true),
            ("SessionEnd", true),
            ("SessionStart", false),
            ("SessionEnd", false),
        ]
    );
    let hook_inputs: Vec<(String, String)> =
        lines(&std::fs::read_to_string(ctx.project().join("hooks.log")).unwrap())
            .iter()
            .map(|input| {
                let event = input["hook_event_name"].as_str().unwrap().to_owned();
                let why = input
                    .get("source")
                    .or_else(|| input.get("reason"))
                    .and_then(Value::as_str)
                    .unwrap()
                    .to_owned();
                (event, why)
            })
            .collect();
    assert_eq!(
        hook_inputs,
        vec![
            ("SessionStart".to_owned(), "startup".to_owned()),
            ("SessionEnd".to_owned(), "clear".to_owned()),
            ("SessionStart".to_owned(), "clear".to_owned()),
            ("SessionEnd".to_owned(), "other".to_owned()),
        ]
    );

    let requests = lines(&std::fs::read_to_string(&requests_path).unwrap());
    assert_eq!(requests.len(), 2);
    assert!(
        requests[0].get("model").is_none(),
        "before /model the provider's own model: {}",
        requests[0]
    );
    assert_eq!(requests[1]["model"], "deepseek-reasoner");
    // After /clear only the new conversation reaches the model.
    let after_clear: Vec<(&str, &str)> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(after_clear, vec![("user", "second question")]);
}

#[test]
fn an_unknown_command_in_a_fixture_is_an_error_naming_the_prompt() {
    let ctx = TestContext::new();
    let fixture = ctx.home().join("fixture.json");
    write(
        &fixture,
        &json!({"prompts": ["hello", "/nosuch arg"], "model": [{"text": "hi"}]}).to_string(),
    );
    let output = ctx.dsh().arg("replay").arg(&fixture).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("fixture.json: prompts[1]: unknown command /nosuch"),
        "{stderr}"
    );
    // Nothing ran: the check comes before the session starts.
    assert!(!String::from_utf8_lossy(&output.stdout).contains("turn/start"));
}

#[test]
fn a_custom_command_in_a_headless_replay_expands_for_the_model() {
    let ctx = TestContext::new();
    write(
        &ctx.project().join(".claude/commands/review.md"),
        "---\ndescription: review a file\nargument-hint: FILE\n---\nReview $1 carefully ($ARGUMENTS).\n",
    );
    write(
        &ctx.home().join(".codex/prompts/plan.md"),
        "Plan the work on $FILE.\n",
    );
    let fixture = ctx.home().join("fixture.json");
    write(
        &fixture,
        &json!({
            "prompts": ["/review src/lib.rs now", "/prompts:plan FILE=main.rs"],
            "model": [{"text": "ok"}, {"text": "ok"}]
        })
        .to_string(),
    );
    let requests_path = ctx.home().join("requests.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(&fixture)
        .arg("--requests-out")
        .arg(&requests_path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = lines(&std::fs::read_to_string(&requests_path).unwrap());
    assert_eq!(
        requests[0]["messages"][1]["content"],
        "Review src/lib.rs carefully (src/lib.rs now).\n"
    );
    assert_eq!(
        requests[1]["messages"][3]["content"],
        "Plan the work on main.rs.\n"
    );
    // The log keeps what was typed.
    let log = lines(&String::from_utf8_lossy(&output.stdout));
    let typed: Vec<&str> = log
        .iter()
        .filter(|e| e["type"] == "user/message")
        .map(|e| e["original_content"].as_str().unwrap())
        .collect();
    assert_eq!(
        typed,
        vec!["/review src/lib.rs now", "/prompts:plan FILE=main.rs"]
    );
}

/// A native plugin on the prompt-layer seams: it amends the system prompt,
/// records what it was told, and blocks one command.
#[derive(Default)]
struct PromptLayerPlugin {
    loaded: Mutex<Vec<(InstructionFile, LoadReason)>>,
    starts: Mutex<Vec<AgentStartInput>>,
    expansions: Mutex<Vec<ExpansionInput>>,
}

#[async_trait]
impl Plugin for PromptLayerPlugin {
    fn name(&self) -> &str {
        "prompt-layer"
    }

    async fn instructions_loaded(
        &self,
        _ctx: &SeamContext,
        files: &[InstructionFile],
        reason: LoadReason,
    ) {
        let mut loaded = self.loaded.lock().unwrap();
        loaded.extend(files.iter().map(|f| (f.clone(), reason)));
    }

    async fn prompt_expansion(&self, _ctx: &SeamContext, input: &ExpansionInput) -> PromptDecision {
        self.expansions.lock().unwrap().push(input.clone());
        if input.command_args.contains("forbidden") {
            PromptDecision::Block {
                reason: "no forbidden work".into(),
            }
        } else {
            PromptDecision::Allow {
                rewrite: None,
                contexts: vec![ContextEntry::new("EXPANSION-NOTE", "prompt-layer")],
            }
        }
    }

    async fn before_agent_start(
        &self,
        _ctx: &SeamContext,
        input: &AgentStartInput,
    ) -> AgentStartDecision {
        self.starts.lock().unwrap().push(input.clone());
        AgentStartDecision {
            system_prompt: Some(format!("{}\n\nAMENDED BY PLUGIN", input.system_prompt)),
            contexts: vec![ContextEntry::new("START-NOTE", "prompt-layer")],
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_native_plugin_amends_the_system_prompt_and_sees_instructions_and_expansions() {
    let ctx = TestContext::new();
    write(&ctx.project().join("CLAUDE.md"), "PROJECT-RULE: be brief\n");
    write(
        &ctx.project().join(".claude/commands/go.md"),
        "GO $ARGUMENTS\n",
    );
    let roots = ContextRoots {
        cwd: ctx.project(),
        home: Some(ctx.home()),
        codex_home: None,
    };
    let plugin = Arc::new(PromptLayerPlugin::default());
    let fixture = Fixture::parse(
        std::path::Path::new("inline.json"),
        &json!({
            "prompts": ["/go fast", "/go forbidden", "plain"],
            "model": [{"text": "went"}, {"text": "plain answer"}]
        })
        .to_string(),
    )
    .unwrap();
    let header = EventBody::SessionHeader(SessionHeaderEvent {
        session_id: "s".into(),
        cwd: ctx.project().display().to_string(),
        version: "test".into(),
        notices: vec![],
        provider_api: None,
    });
    let output = replay_fixture(
        &fixture,
        ReplayOptions {
            label: "inline.json".into(),
            cwd: ctx.project(),
            session_id: "s".into(),
            log: SessionLog::in_memory(header).unwrap(),
            resumed: false,
            plugins: vec![plugin.clone() as Arc<dyn Plugin>],
            processes: dsh_tools::builtin::ProcessLayer::default(),
            max_steps: 5,
            system_prompt: "BASE PROMPT".into(),
            observers: Observers::default(),
            prompt_limit: None,
            skip_prompts: 0,
            project: ProjectContext::discover(&roots),
            auto_compact: dsh_agent::AutoCompact::default(),
            extra_tools: Vec::new(),
            tools: dsh_tools::builtin::BuiltinSelection::All,
            setup: None,
        },
    )
    .await
    .unwrap();
    assert!(
        output.record_errors.is_empty(),
        "{:?}",
        output.record_errors
    );
    let reasons: Vec<TurnEndReason> = output.outcomes.iter().map(|o| o.reason).collect();
    assert_eq!(
        reasons,
        vec![
            TurnEndReason::Completed,
            TurnEndReason::Rejected,
            TurnEndReason::Completed
        ]
    );

    // The instruction file reached the plugin once, at session start.
    let loaded = plugin.loaded.lock().unwrap();
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].0.path, ctx.project().join("CLAUDE.md"));
    assert_eq!(loaded[0].1, LoadReason::SessionStart);

    // Expansion saw both commands; the blocked one never reached the model.
    let expansions = plugin.expansions.lock().unwrap();
    assert_eq!(expansions.len(), 2);
    assert_eq!(expansions[0].command_name, "go");
    assert_eq!(expansions[0].source, CommandSource::Project);
    assert_eq!(expansions[0].expanded, "GO fast\n");
    assert_eq!(output.requests.len(), 2);

    // The system-prompt seam ran for the two allowed turns, with the prompt
    // the model gets and the instructions already in the system prompt.
    let starts = plugin.starts.lock().unwrap();
    let prompts: Vec<&str> = starts.iter().map(|s| s.prompt.as_str()).collect();
    assert_eq!(prompts, vec!["GO fast\n", "plain"]);
    assert!(
        starts[0]
            .system_prompt
            .starts_with("BASE PROMPT\n\n# Project instructions")
    );
    assert!(starts[0].system_prompt.contains("PROJECT-RULE: be brief"));
    assert_eq!(starts[0].instructions.len(), 1);

    // What the model got: the amended system prompt, then the expansion and
    // the plugin's contexts after the prompt.
    let first = &output.requests[0].messages;
    let system = serde_json::to_value(&first[0]).unwrap();
    let system = system["content"].as_str().unwrap();
    assert!(system.contains("PROJECT-RULE: be brief"), "{system}");
    assert!(system.ends_with("\n\nAMENDED BY PLUGIN"), "{system}");
    let rest: Vec<Value> = first[1..]
        .iter()
        .map(|m| serde_json::to_value(m).unwrap())
        .collect();
    assert_eq!(
        rest,
        vec![
            json!({"role": "user", "content": "GO fast\n"}),
            json!({"role": "system", "content": "EXPANSION-NOTE"}),
            json!({"role": "system", "content": "START-NOTE"}),
        ]
    );
    // The blocked turn is a zero-step rejected turn naming the reason.
    let blocked = output
        .events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::PromptBlocked(PromptBlockedEvent {
                content, reason, ..
            }) => Some((content.clone(), reason.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        blocked,
        ("/go forbidden".to_owned(), "no forbidden work".to_owned())
    );
}

#[test]
fn headless_refuses_session_commands_and_unknown_names_before_opening_a_session() {
    let ctx = TestContext::new();
    for (prompt, message) in [
        ("/nosuch", "unknown command /nosuch"),
        ("/model deepseek-reasoner", "with -p use --model NAME"),
        ("/clear", "/clear acts on a session's history"),
    ] {
        // No API key is set: the command is refused before the provider is set up.
        let output = ctx.dsh().args(["-p", prompt]).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{prompt}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{prompt}: {stderr}");
    }
    assert!(!ctx.home().join(".dsh").join("sessions").exists());
}

/// The terminal handles the same commands, as a person types them: `/model`
/// and `/clear` are no turns, a custom command expands, an unknown name is
/// a warning, and the instruction files reach the provider's system prompt.
#[test]
fn the_terminal_runs_commands_as_typed() {
    use dsh_provider::mock::MockResponse;

    let ctx = TestContext::new();
    write(&ctx.project().join("CLAUDE.md"), "TERMINAL-RULE\n");
    write(
        &ctx.project().join(".claude/commands/hi.md"),
        "HELLO $ARGUMENTS\n",
    );
    let mock = crate::cli_headless::mock(vec![
        MockResponse::text("FIRST-REPLY"),
        MockResponse::text("SECOND-REPLY"),
    ]);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_dsh"));
    cmd.current_dir(ctx.project())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", ctx.home())
        .env("DSH_HOME", ctx.home().join(".dsh"))
        .env("CODEX_HOME", ctx.home().join(".codex"))
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env("LANG", "C.UTF-8")
        .env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test");
    let mut session = rexpect::session::spawn_command(cmd, Some(60_000)).unwrap();
    session.process_mut().set_kill_timeout(Some(5_000));
    session.exp_string("Ctrl-D exits").unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("first question").unwrap();
    session.exp_string("FIRST-REPLY").unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("/model other-model").unwrap();
    session
        .exp_string("model set to other-model for the following requests")
        .unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("/nosuch").unwrap();
    session.exp_string("unknown command /nosuch").unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("/clear").unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("/hi there").unwrap();
    session.exp_string("SECOND-REPLY").unwrap();
    session.exp_string("> ").unwrap();
    session.send_control('d').unwrap();
    session.exp_eof().unwrap();

    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "/model, /nosuch and /clear are no turns");
    let system = requests[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.contains("TERMINAL-RULE"), "{system}");
    assert_ne!(requests[0]["model"], "other-model");
    assert_eq!(requests[1]["model"], "other-model");
    let after_clear: Vec<Value> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .cloned()
        .collect();
    assert_eq!(
        after_clear,
        vec![json!({"role": "user", "content": "HELLO there\n"})]
    );
}

/// An editor's prompt that is a built-in command is answered `end_turn`
/// without a model request; the switch holds for the next prompt.
#[test]
fn acp_prompts_that_are_session_commands_are_no_turns() {
    use dsh_provider::mock::MockResponse;

    let ctx = TestContext::new();
    let mock = crate::cli_headless::mock(vec![MockResponse::text("ONLY-REPLY")]);
    let mut client = crate::acp_server::AcpClient::start(&ctx, &mock);
    let init = client.request("initialize", json!({"protocolVersion": 1}));
    client.response(init);
    let new = client.request(
        "session/new",
        json!({"cwd": ctx.project(), "mcpServers": []}),
    );
    let session = client.response(new)["result"]["sessionId"].clone();
    let switch = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "/model acp-model"}]}),
    );
    let answer = client.response(switch);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(mock.requests().is_empty());
    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}),
    );
    let answer = client.response(prompt);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let (status, _) = client.finish();
    assert!(status.success());
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["model"], "acp-model");
}

/// A `.claude/rules` file with `paths:` joins the conversation when a tool
/// uses a matching file — once — and fires InstructionsLoaded with
/// `load_reason: "path_glob_match"`.
#[test]
fn a_path_scoped_rule_loads_when_a_matching_file_is_used() {
    let ctx = TestContext::new();
    write(
        &ctx.project().join(".claude/settings.json"),
        r#"{"hooks": {"InstructionsLoaded": [{"hooks": [{"type": "command", "command": "cat >> \"$CLAUDE_PROJECT_DIR/loaded.log\"; echo >> \"$CLAUDE_PROJECT_DIR/loaded.log\""}]}]}}"#,
    );
    write(
        &ctx.project().join(".claude/rules/py.md"),
        "---\npaths:\n  - \"**/*.py\"\n---\nRULE-PY-ONLY\n",
    );
    write(&ctx.project().join("CLAUDE.md"), "ALWAYS\n");
    write(&ctx.project().join("src/app.py"), "print(1)\n");
    write(&ctx.project().join("notes.txt"), "notes\n");
    let fixture = ctx.home().join("fixture.json");
    let read = |path: &str| json!({"name": "read", "arguments": {"file_path": path}});
    write(
        &fixture,
        &json!({
            "prompts": ["look at the code"],
            "model": [
                {"text": "", "tool_calls": [read("notes.txt")]},
                {"text": "", "tool_calls": [read("src/app.py")]},
                {"text": "", "tool_calls": [read("src/app.py")]},
                {"text": "done"}
            ]
        })
        .to_string(),
    );
    let requests_path = ctx.home().join("requests.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(&fixture)
        .arg("--requests-out")
        .arg(&requests_path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let project = ctx.project().display().to_string();
    let rule = format!("{project}/.claude/rules/py.md");
    let requests = lines(&std::fs::read_to_string(&requests_path).unwrap());
    let system = requests[0]["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("ALWAYS") && !system.contains("RULE-PY-ONLY"),
        "{system}"
    );
    assert!(system.contains(&format!("{rule} (**/*.py)")), "{system}");
    let rule_texts = |request: &Value| -> Vec<String> {
        request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "system")
            .filter_map(|m| m["content"].as_str())
            .filter(|c| c.contains("RULE-PY-ONLY"))
            .map(str::to_owned)
            .collect()
    };
    // Not after reading notes.txt; after src/app.py, right after its result; once.
    assert!(rule_texts(&requests[1]).is_empty());
    assert_eq!(
        rule_texts(&requests[2]),
        vec![format!(
            "Project instructions from {rule} (for files matching **/*.py; {project}/src/app.py was used):\n\nRULE-PY-ONLY"
        )]
    );
    let last = requests[3]["messages"].as_array().unwrap();
    assert_eq!(rule_texts(&requests[3]).len(), 1);
    let at = last
        .iter()
        .position(|m| {
            m["content"]
                .as_str()
                .is_some_and(|c| c.contains("RULE-PY-ONLY"))
        })
        .unwrap();
    assert_eq!(last[at - 1]["role"], "tool");

    let loaded = lines(&std::fs::read_to_string(ctx.project().join("loaded.log")).unwrap());
    let reasons: Vec<(&str, &str)> = loaded
        .iter()
        .map(|l| {
            (
                l["file_path"].as_str().unwrap(),
                l["load_reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        reasons,
        vec![
            (format!("{project}/CLAUDE.md").as_str(), "session_start"),
            (rule.as_str(), "path_glob_match"),
        ]
    );
    assert_eq!(loaded[1]["globs"], json!(["**/*.py"]));
    assert_eq!(
        loaded[1]["trigger_file_path"],
        format!("{project}/src/app.py")
    );
}

/// A reopened log keeps what `/model` and a loaded scoped rule left: the
/// next request names the switched model, and the rule is not loaded twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_keeps_the_switched_model_and_loaded_rules() {
    let ctx = TestContext::new();
    write(
        &ctx.project().join(".claude/rules/py.md"),
        "---\npaths: [\"*.py\"]\n---\nRULE-PY\n",
    );
    write(&ctx.project().join("a.py"), "x = 1\n");
    let rule = ctx.project().join(".claude/rules/py.md");
    let mut log = SessionLog::in_memory(EventBody::SessionHeader(SessionHeaderEvent {
        session_id: "s".into(),
        cwd: ctx.project().display().to_string(),
        version: "test".into(),
        notices: vec![],
        provider_api: None,
    }))
    .unwrap();
    log.append(EventBody::TurnStart(TurnStartEvent { turn: 1 }))
        .unwrap();
    log.append(EventBody::ContextMessage(ContextMessageEvent {
        turn: 1,
        content: "RULE-PY".into(),
        source: format!("dsh:instructions:{}", rule.display()),
    }))
    .unwrap();
    log.append(EventBody::TurnEnd(TurnEndEvent {
        turn: 1,
        reason: TurnEndReason::Completed,
        message: None,
    }))
    .unwrap();
    log.append(EventBody::ModelSwitched(ModelSwitchedEvent {
        from: "scripted".into(),
        to: "kept-model".into(),
    }))
    .unwrap();
    let fixture = Fixture::parse(
        std::path::Path::new("inline.json"),
        &json!({
            "prompts": ["again"],
            "model": [
                {"text": "", "tool_calls": [{"name": "read", "arguments": {"file_path": "a.py"}}]},
                {"text": "done"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let roots = ContextRoots {
        cwd: ctx.project(),
        home: None,
        codex_home: None,
    };
    let output = replay_fixture(
        &fixture,
        ReplayOptions {
            label: "inline.json".into(),
            cwd: ctx.project(),
            session_id: "s".into(),
            log,
            resumed: true,
            plugins: Vec::new(),
            processes: dsh_tools::builtin::ProcessLayer::default(),
            max_steps: 5,
            system_prompt: "BASE".into(),
            observers: Observers::default(),
            prompt_limit: None,
            skip_prompts: 0,
            project: ProjectContext::discover(&roots),
            auto_compact: dsh_agent::AutoCompact::default(),
            extra_tools: Vec::new(),
            tools: dsh_tools::builtin::BuiltinSelection::All,
            setup: None,
        },
    )
    .await
    .unwrap();
    let models: Vec<Option<&str>> = output.requests.iter().map(|r| r.model.as_deref()).collect();
    assert_eq!(models, vec![Some("kept-model"), Some("kept-model")]);
    let rule_contexts = output
        .events
        .iter()
        .filter(|e| {
            matches!(&e.body, EventBody::ContextMessage(ContextMessageEvent { source, .. })
                if source.starts_with("dsh:instructions:"))
        })
        .count();
    assert_eq!(rule_contexts, 1, "the rule loaded before the resume only");
}
