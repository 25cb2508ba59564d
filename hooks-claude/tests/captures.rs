//! Pure tests against Claude Code 2.1.328 captures (`tests/captures/`, copied
//! from Claude Code's captured runs, docs/sources.md): payloads rebuilt from
//! equivalent inputs must equal `stdin_raw` byte for byte, and each captured
//! hook answer, fed to the interpreter, must yield the decision and the exact
//! model-facing text the model was shown (`model.json`).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use dsh_hooks_claude::HookEvent;
use dsh_hooks_claude::output::{
    Effect, EventCtx, ExitFact, HookFacts, HookNotice, Interpretation, StopMerge, interpret,
    merge_stop, winning_permission,
};
use dsh_hooks_claude::payload::{self, Common};
use dsh_seams::NoticeLevel;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

struct Capture {
    name: String,
    hooks: Vec<Value>,
    model: Value,
    scenario: Value,
    settings: Value,
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/captures")
}

fn load(name: &str) -> Capture {
    let read = |file: &str| -> Value {
        let path = dir().join(name).join(file);
        serde_json::from_str(
            &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
        )
        .unwrap()
    };
    Capture {
        name: name.to_owned(),
        hooks: read("hooks.json").as_array().unwrap().clone(),
        model: read("model.json"),
        scenario: read("scenario.json"),
        settings: read("settings.json"),
    }
}

impl Capture {
    /// The configured command whose label is `label` (`CMD` in CC's texts).
    fn command(&self, label: &str) -> String {
        let needle = format!("hook.py {label} ");
        let mut found = None;
        for groups in self.settings["hooks"].as_object().unwrap().values() {
            for group in groups.as_array().unwrap() {
                for handler in group["hooks"].as_array().unwrap() {
                    let command = handler["command"].as_str().unwrap();
                    if command.contains(&needle) {
                        found = Some(command.to_owned());
                    }
                }
            }
        }
        found.unwrap_or_else(|| panic!("{}: no command for {label}", self.name))
    }

    /// The behaviour the hook labelled `label` had on its `call_no`-th call.
    fn behavior(&self, label: &str, call_no: usize) -> Value {
        let mut behavior = self.scenario["behaviors"][label].clone();
        if let Some(calls) = behavior.get("calls").and_then(Value::as_array).cloned() {
            if let Some(call) = calls.get(call_no - 1) {
                return call.clone();
            }
            behavior.as_object_mut().unwrap().remove("calls");
        }
        behavior
    }

    /// Every message of every request.
    fn messages(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for request in self.model.as_array().unwrap() {
            for key in ["messages", "new_or_changed"] {
                if let Some(list) = request.get(key).and_then(Value::as_array) {
                    out.extend(list.iter().cloned());
                }
            }
        }
        out
    }

    fn tool_result(&self, id: &str) -> (String, bool) {
        for message in self.messages() {
            if let Some(blocks) = message["content"].as_array() {
                for block in blocks {
                    if block["type"] == "tool_result" && block["tool_use_id"] == id {
                        return (
                            block["content"].as_str().unwrap().to_owned(),
                            block["is_error"].as_bool().unwrap_or(false),
                        );
                    }
                }
            }
        }
        panic!("{}: no tool_result {id}", self.name)
    }

    fn tool_use_input(&self, id: &str) -> Value {
        for message in self.messages() {
            if let Some(blocks) = message["content"].as_array() {
                for block in blocks {
                    if block["type"] == "tool_use" && block["id"] == id {
                        return block["input"].clone();
                    }
                }
            }
        }
        panic!("{}: no tool_use {id}", self.name)
    }

    /// `(role, text)` of every text the model saw, per message block.
    fn texts(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for message in self.messages() {
            let role = message["role"].as_str().unwrap_or("").to_owned();
            match &message["content"] {
                Value::String(text) => out.push((role, text.clone())),
                Value::Array(blocks) => {
                    for block in blocks {
                        if let Some(text) = block["text"].as_str() {
                            out.push((role.clone(), text.to_owned()));
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    fn system_texts(&self) -> Vec<String> {
        self.texts()
            .into_iter()
            .filter(|(role, _)| role == "system")
            .map(|(_, t)| t)
            .collect()
    }
}

/// What the oracle hook did, as runner facts.
fn facts(behavior: &Value, timeout_secs: f64) -> HookFacts {
    if behavior["sleep"].as_f64().is_some_and(|s| s > timeout_secs) {
        return HookFacts {
            exit: ExitFact::TimedOut,
            stdout: String::new(),
            stderr: String::new(),
        };
    }
    let mut stdout = String::new();
    if let Some(json) = behavior.get("stdout_json") {
        // The oracle writes Python's json.dumps (", " and ": " separators).
        stdout.push_str(&serde_json::to_string_pretty(json).unwrap());
    }
    if let Some(text) = behavior["stdout"].as_str() {
        stdout.push_str(text);
    }
    HookFacts::exited(
        behavior["exit"].as_i64().unwrap_or(0) as i32,
        stdout,
        behavior["stderr"].as_str().unwrap_or(""),
    )
}

fn id(s: &str) -> String {
    s.to_owned()
}

fn run(capture: &Capture, label: &str, call_no: usize, ctx: EventCtx<'_>) -> Interpretation {
    let behavior = capture.behavior(label, call_no);
    interpret(&ctx, &facts(&behavior, 2.0), &id)
}

fn pre_ctx(command: &str) -> EventCtx<'_> {
    EventCtx {
        event: HookEvent::PreToolUse,
        tool_name: Some("Bash"),
        source: None,
        prompt: None,
        command,
    }
}

fn ctx_for<'a>(event: HookEvent, command: &'a str) -> EventCtx<'a> {
    EventCtx {
        event,
        tool_name: event.is_tool_event().then_some("Bash"),
        source: Some("startup"),
        prompt: Some("Please run echo hi"),
        command,
    }
}

// ---------------------------------------------------------------- payloads

fn dsh_tool(cc: &str) -> String {
    cc.to_ascii_lowercase()
}

/// dsh's canonical tool value for the captured call (what dsh's own tool
/// would have returned for the same execution).
fn dsh_value(capture: &Capture, tool: &str, id: &str, captured_response: &Value) -> Value {
    let project = "<PROJECT>/notes.txt";
    match (capture.name.as_str(), tool, id) {
        ("p1_file_tools_payloads", "write", _) => json!({
            "type": "create", "file_path": project, "content": "alpha\nbeta\n", "original_file": null
        }),
        ("p1_file_tools_payloads", "read", _) => json!({
            "file_path": project, "content": "alpha\nbeta\n", "num_lines": 3, "start_line": 1, "total_lines": 3
        }),
        ("p1_file_tools_payloads", "edit", _) => json!({
            "file_path": project, "old_string": "beta", "new_string": "gamma",
            "original_file": "alpha\nbeta\n", "replace_all": false,
            "structured_patch": [{"old_start": 1, "old_lines": 2, "new_start": 1, "new_lines": 2,
                                   "lines": [" alpha", "-beta", "+gamma"]}]
        }),
        (_, "bash", _) => json!({
            "stdout": format!("{}\n", captured_response["stdout"].as_str().unwrap()),
            "stderr": captured_response["stderr"],
            "exit_code": 0, "interrupted": false, "timed_out": false
        }),
        other => panic!("no dsh value for {other:?}"),
    }
}

/// Rebuilds a captured payload from equivalent dsh inputs; `None` for
/// events dsh does not fire.
fn rebuild(capture: &Capture, stdin: &Value) -> Option<Value> {
    let common = Common {
        session_id: stdin["session_id"].as_str()?.to_owned(),
        transcript_path: stdin["transcript_path"].as_str()?.to_owned(),
        cwd: stdin["cwd"].as_str()?.to_owned(),
        prompt_id: stdin["prompt_id"].as_str().map(str::to_owned),
        permission_mode: stdin["permission_mode"]
            .as_str()
            .unwrap_or("bypassPermissions")
            .to_owned(),
        effort: "medium".to_owned(),
        agent: None,
    };
    let cwd = Path::new("<PROJECT>");
    let tool_name = stdin["tool_name"].as_str().unwrap_or("");
    let use_id = stdin["tool_use_id"].as_str().unwrap_or("");
    let raw_input = || capture.tool_use_input(use_id);
    Some(match stdin["hook_event_name"].as_str()? {
        "SessionStart" => json_of(&payload::session_start(&common, stdin["source"].as_str()?)),
        "UserPromptSubmit" => json_of(&payload::user_prompt_submit(
            &common,
            stdin["prompt"].as_str()?,
        )),
        "PreToolUse" => json_of(&payload::pre_tool_use(
            &common,
            &payload::cc_tool_name(&dsh_tool(tool_name)),
            &payload::normalize_tool_input(&dsh_tool(tool_name), &raw_input(), cwd),
            use_id,
        )),
        "PostToolUse" => {
            let tool = dsh_tool(tool_name);
            let arguments = if capture.name == "e_pre_updated_input" {
                json!({"command": "echo REWRITTEN", "description": "x"})
            } else {
                raw_input()
            };
            let value = dsh_value(capture, &tool, use_id, &stdin["tool_response"]);
            let duration = stdin["duration_ms"].as_u64()?;
            json_of(&payload::post_tool_use(
                &common,
                &payload::cc_tool_name(&tool),
                &payload::normalize_tool_input(&tool, &arguments, cwd),
                &payload::tool_response(&tool, Some(&value), &arguments, "", duration),
                use_id,
                duration,
            ))
        }
        "PostToolUseFailure" => {
            let tool = dsh_tool(tool_name);
            json_of(&payload::post_tool_use_failure(
                &common,
                &payload::cc_tool_name(&tool),
                &payload::normalize_tool_input(&tool, &raw_input(), cwd),
                use_id,
                &capture.tool_result(use_id).0,
                false,
                stdin["duration_ms"].as_u64()?,
            ))
        }
        "PermissionRequest" => {
            let tool = dsh_tool(tool_name);
            let input = payload::normalize_tool_input(&tool, &raw_input_for_permreq(capture), cwd);
            // The suggestions come from dsh's permission model; here the
            // captured ones are read into the typed updates, so their
            // serialization (key order included) is what is checked.
            let suggestions: Option<Vec<dsh_seams::PermissionUpdate>> =
                match stdin.get("permission_suggestions") {
                    Some(list) => Some(serde_json::from_value(list.clone()).ok()?),
                    None => None,
                };
            json_of(&payload::permission_request(
                &common,
                &payload::cc_tool_name(&tool),
                &input,
                suggestions.as_deref(),
            ))
        }
        "Stop" => json_of(&payload::stop(
            &common,
            stdin["stop_hook_active"].as_bool()?,
            stdin["last_assistant_message"].as_str()?,
        )),
        "SessionEnd" => json_of(&payload::session_end(&common, "other")),
        _ => return None,
    })
}

/// A payload struct as the JSON the engine is handed.
fn json_of(payload: &impl serde::Serialize) -> Value {
    serde_json::to_value(payload).unwrap()
}

fn raw_input_for_permreq(capture: &Capture) -> Value {
    capture.tool_use_input("toolu_oracle_001")
}

#[test]
fn payloads_match_captured_stdin_byte_for_byte() {
    let scenarios = [
        "a_baseline",
        "a2_tool_failure",
        "b_pre_exit2",
        "c_pre_deny_json",
        "d4_permreq_allow_default_mode",
        "e_pre_updated_input",
        "i3_ss_env_file",
        "j1_stop_block",
        "j7_stop_block_forever",
        "p1_file_tools_payloads",
        "p2_parallel_tool_calls",
        "s_resume_sources",
        "z2_async_hook",
    ];
    let mut compared = 0;
    for name in scenarios {
        let capture = load(name);
        for record in &capture.hooks {
            let Some(raw) = record["stdin_raw"].as_str() else {
                continue;
            };
            let mut stdin: Value = serde_json::from_str(raw).unwrap();
            let mut expected = raw.to_owned();
            if stdin["source"] == "resume" {
                // Claude Code's resume-only cache statistics: dsh has no such
                // figures and leaves them out; compare the rest.
                for key in [
                    "seconds_since_last_response",
                    "context_tokens",
                    "prompt_cache_likely_expired",
                    "estimated_cache_write_usd",
                ] {
                    stdin.as_object_mut().unwrap().remove(key);
                }
                expected = format!("{}\n", serde_json::to_string(&stdin).unwrap());
            }
            let Some(ours) = rebuild(&capture, &stdin) else {
                continue;
            };
            let ours = String::from_utf8(payload::to_stdin(&ours)).unwrap();
            assert_eq!(ours, expected, "{name}: {}", record["event"]);
            compared += 1;
        }
    }
    assert!(compared >= 40, "only {compared} payloads compared");
}

// ---------------------------------------------------------- interpretation

#[test]
fn pre_tool_use_denials_are_the_exact_tool_results() {
    for name in ["b_pre_exit2", "c_pre_deny_json", "c2_pre_legacy_block"] {
        let capture = load(name);
        let command = capture.command("pre");
        let out = run(&capture, "pre", 1, pre_ctx(&command));
        let (content, is_error) = capture.tool_result("toolu_oracle_001");
        assert!(is_error, "{name}");
        assert_eq!(out.effect, Effect::Deny { text: content }, "{name}");
        assert!(out.contexts.is_empty(), "{name}");
    }
}

#[test]
fn ask_is_denied_headless_with_the_raw_reason() {
    let capture = load("c3_pre_ask");
    let command = capture.command("pre");
    let out = run(&capture, "pre", 1, pre_ctx(&command));
    let (content, _) = capture.tool_result("toolu_oracle_001");
    assert_eq!(
        out.effect,
        Effect::Ask {
            reason: Some(content)
        }
    );
}

#[test]
fn defer_allow_approve_and_updated_input() {
    let capture = load("c4_pre_defer");
    let command = capture.command("pre");
    let out = run(&capture, "pre", 1, pre_ctx(&command));
    assert_eq!(
        out.effect,
        Effect::Defer {
            reason: Some("DEFER-REASON".into())
        }
    );

    for name in [
        "d_pre_allow_default_mode",
        "l7_pre_legacy_approve_default_mode",
    ] {
        let capture = load(name);
        let command = capture.command("pre");
        let out = run(&capture, "pre", 1, pre_ctx(&command));
        assert!(matches!(out.effect, Effect::Allow { .. }), "{name}");
        assert!(
            out.contexts.is_empty(),
            "{name}: allow reason is not model-facing"
        );
    }

    let capture = load("e_pre_updated_input");
    let command = capture.command("pre");
    let out = run(&capture, "pre", 1, pre_ctx(&command));
    assert_eq!(
        out.updated_input,
        Some(json!({"command": "echo REWRITTEN", "description": "x"}))
    );
    assert_eq!(capture.tool_result("toolu_oracle_001").0, "REWRITTEN");
}

#[test]
fn pre_tool_use_context_plain_stdout_and_system_message() {
    let capture = load("e3_pre_additional_context");
    let command = capture.command("pre");
    let out = run(&capture, "pre", 1, pre_ctx(&command));
    assert_eq!(out.effect, Effect::None);
    assert_eq!(out.contexts, capture.system_texts()[1..].to_vec());
    assert_eq!(
        out.contexts,
        vec!["PreToolUse:Bash hook additional context: PRE-CTX-789".to_owned()]
    );

    let capture = load("e4_pre_plain_stdout");
    let command = capture.command("pre");
    let out = run(&capture, "pre", 1, pre_ctx(&command));
    assert_eq!((out.effect, out.contexts.len()), (Effect::None, 0));

    let capture = load("e5_pre_system_message");
    let command = capture.command("pre");
    let out = run(&capture, "pre", 1, pre_ctx(&command));
    assert!(out.contexts.is_empty());
    assert_eq!(
        out.user_notices,
        vec![HookNotice {
            level: NoticeLevel::Info,
            text: "PreToolUse:Bash says: SYSMSG-FROM-PRE".to_owned()
        }]
    );
}

#[test]
fn failures_fail_open_and_show_nothing_to_the_model() {
    for (name, label) in [
        ("l1_pre_exit1", "pre"),
        ("l2_pre_malformed_json", "pre"),
        ("l4_pre_json_wrong_schema", "pre"),
        ("m1_pre_timeout", "pre"),
    ] {
        let capture = load(name);
        let command = capture.command(label);
        let out = run(&capture, label, 1, pre_ctx(&command));
        assert_eq!(out.effect, Effect::None, "{name}");
        assert!(out.contexts.is_empty(), "{name}");
        assert_eq!(
            capture.tool_result("toolu_oracle_001"),
            ("hi".into(), false),
            "{name}"
        );
    }
    let capture = load("l5_post_exit1");
    let command = capture.command("post");
    let out = run(
        &capture,
        "post",
        1,
        ctx_for(HookEvent::PostToolUse, &command),
    );
    assert!(out.contexts.is_empty());
}

#[test]
fn pre_tool_use_continue_false_runs_the_tool_and_reports_next_turn() {
    let capture = load("k1_pre_continue_false");
    let command = capture.command("pre");
    let out = run(&capture, "pre", 1, pre_ctx(&command));
    assert_eq!(out.effect, Effect::None, "the tool still runs (§0.7)");
    assert_eq!(out.stop.as_deref(), Some("STOPREASON-PRE"));
    let resumed = load("k1r_pre_continue_false_resume");
    assert_eq!(out.contexts, resumed.system_texts()[1..].to_vec());
}

#[test]
fn post_tool_use_texts() {
    for name in ["f_post_block", "f2_post_exit2", "g_post_additional_context"] {
        let capture = load(name);
        let command = capture.command("post");
        let out = run(
            &capture,
            "post",
            1,
            ctx_for(HookEvent::PostToolUse, &command),
        );
        assert_eq!(out.contexts, capture.system_texts()[1..].to_vec(), "{name}");
        assert_eq!(
            capture.tool_result("toolu_oracle_001").0,
            "hi",
            "{name}: the result stays"
        );
    }
    let capture = load("g3_post_updated_output");
    let command = capture.command("post");
    let out = run(
        &capture,
        "post",
        1,
        ctx_for(HookEvent::PostToolUse, &command),
    );
    assert_eq!(out.replace_output, None);
    assert_eq!(out.ignored.len(), 1);
    assert_eq!(capture.tool_result("toolu_oracle_001").0, "hi");

    let capture = load("k2_post_continue_false");
    let command = capture.command("post");
    let out = run(
        &capture,
        "post",
        1,
        ctx_for(HookEvent::PostToolUse, &command),
    );
    assert_eq!(out.stop.as_deref(), Some("STOPREASON-POST"));
    assert_eq!(
        out.contexts,
        vec!["PostToolUse:Bash hook stopped continuation: STOPREASON-POST".to_owned()]
    );
}

#[test]
fn user_prompt_submit_texts() {
    let capture = load("h1_ups_exit2");
    let command = capture.command("ups");
    let out = run(
        &capture,
        "ups",
        1,
        ctx_for(HookEvent::UserPromptSubmit, &command),
    );
    let result: Value = serde_json::from_str(
        &std::fs::read_to_string(dir().join("h1_ups_exit2/result.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        out.effect,
        Effect::Block {
            text: result["result"].as_str().unwrap().to_owned()
        }
    );

    let capture = load("h4_ups_decision_block");
    let command = capture.command("ups");
    let out = run(
        &capture,
        "ups",
        1,
        ctx_for(HookEvent::UserPromptSubmit, &command),
    );
    assert_eq!(
        out.effect,
        Effect::Block {
            text: "UserPromptSubmit operation blocked by hook:\nUPS-BLOCK-REASON\n\nOriginal prompt: Please run echo hi".into()
        }
    );

    for (name, text) in [
        (
            "h2_ups_plain_stdout",
            "UserPromptSubmit hook success: UPS-PLAIN-STDOUT-CONTEXT",
        ),
        (
            "h3_ups_additional_context",
            "UserPromptSubmit hook additional context: UPS-JSON-CTX",
        ),
    ] {
        let capture = load(name);
        let command = capture.command("ups");
        let out = run(
            &capture,
            "ups",
            1,
            ctx_for(HookEvent::UserPromptSubmit, &command),
        );
        assert_eq!(out.contexts, vec![text.to_owned()], "{name}");
        // model.json elides the system text the context lands in; it does pin
        // the prompt that context joins.
        let prompt = &capture.model[0]["messages"][0]["content"][1]["text"];
        assert_eq!(prompt, "Please run echo hi", "{name}");
    }

    // h6: trailing whitespace trimmed, inner newlines kept.
    let out = interpret(
        &ctx_for(HookEvent::UserPromptSubmit, "CMD"),
        &HookFacts::exited(0, "LINE-ONE\nLINE-TWO\n\n", ""),
        &id,
    );
    assert_eq!(
        out.contexts,
        vec!["UserPromptSubmit hook success: LINE-ONE\nLINE-TWO".to_owned()]
    );
    // l13: plain stdout on exit 1 is not model-facing.
    let out = interpret(
        &ctx_for(HookEvent::UserPromptSubmit, "CMD"),
        &HookFacts::exited(1, "TEXT", ""),
        &id,
    );
    assert!(out.contexts.is_empty());
}

#[test]
fn session_start_texts() {
    for (name, text) in [
        (
            "i1_ss_additional_context",
            "SessionStart hook additional context: SS-JSON-CTX",
        ),
        (
            "i2_ss_plain_stdout",
            "SessionStart:startup hook success: SS-PLAIN-STDOUT",
        ),
    ] {
        let capture = load(name);
        let command = capture.command("ss");
        let out = run(
            &capture,
            "ss",
            1,
            ctx_for(HookEvent::SessionStart, &command),
        );
        assert_eq!(out.contexts, vec![text.to_owned()], "{name}");
        let first_system = &capture.system_texts()[0];
        if name == "i1_ss_additional_context" {
            assert!(first_system.starts_with(&format!("{text}\n\n")), "{name}");
        }
    }
}

#[test]
fn stop_texts_and_merge() {
    let capture = load("j1_stop_block");
    let command = capture.command("stop");
    let first = run(&capture, "stop", 1, ctx_for(HookEvent::Stop, &command));
    let texts = capture.texts();
    let feedback_at = texts
        .iter()
        .position(|(role, t)| role == "user" && t.starts_with("Stop hook feedback:"))
        .unwrap();
    match merge_stop(&[&first], 0, 9) {
        StopMerge::Continue {
            reason, context, ..
        } => {
            assert_eq!(reason, texts[feedback_at].1);
            assert_eq!(texts[feedback_at + 1].0, "system");
            assert_eq!(context, Some(texts[feedback_at + 1].1.clone()));
        }
        other => panic!("{other:?}"),
    }
    let second = run(&capture, "stop", 2, ctx_for(HookEvent::Stop, &command));
    assert_eq!(merge_stop(&[&second], 1, 9), StopMerge::Stop);

    let capture = load("j2_stop_exit2");
    let command = capture.command("stop");
    let first = run(&capture, "stop", 1, ctx_for(HookEvent::Stop, &command));
    let feedback = capture
        .texts()
        .into_iter()
        .find(|(_, t)| t.starts_with("Stop hook feedback:"))
        .unwrap();
    assert_eq!(
        merge_stop(&[&first], 0, 9),
        StopMerge::Continue {
            reason: feedback.1,
            by: vec![0],
            context: None
        }
    );

    let capture = load("j4_stop_additional_context");
    let command = capture.command("stop");
    let first = run(&capture, "stop", 1, ctx_for(HookEvent::Stop, &command));
    let reminder = capture
        .texts()
        .into_iter()
        .find(|(role, t)| role == "user" && t.contains("Stop hook additional context"))
        .unwrap();
    assert_eq!(
        merge_stop(&[&first], 0, 9),
        StopMerge::Continue {
            reason: reminder.1,
            by: vec![0],
            context: None
        }
    );

    let capture = load("k4_stop_continue_false");
    let command = capture.command("stop");
    let first = run(&capture, "stop", 1, ctx_for(HookEvent::Stop, &command));
    assert_eq!(
        merge_stop(&[&first], 0, 9),
        StopMerge::Halt {
            reason: "Stop hook stopped continuation: STOPREASON-STOP".into()
        }
    );
}

#[test]
fn stop_block_cap_fires_on_the_ninth_consecutive_block() {
    // j7: 9 Stop invocations, 10 model requests, then the override.
    let capture = load("j7_stop_block_forever");
    let stops: Vec<&Value> = capture
        .hooks
        .iter()
        .filter(|h| h["event"] == "Stop")
        .collect();
    assert_eq!(stops.len(), 9);
    assert_eq!(capture.model.as_array().unwrap().len(), 10);
    let command = capture.command("stop");
    let answer = run(&capture, "stop", 1, ctx_for(HookEvent::Stop, &command));
    let mut continuations = 0;
    for forced in 0..9u32 {
        let stdin: Value =
            serde_json::from_str(stops[forced as usize]["stdin_raw"].as_str().unwrap()).unwrap();
        assert_eq!(stdin["stop_hook_active"], json!(forced > 0));
        match merge_stop(&[&answer], forced, 9) {
            StopMerge::Continue { .. } => continuations += 1,
            StopMerge::CapFired { message } => {
                assert_eq!(forced, 8);
                assert_eq!(
                    message,
                    "A hook blocked the turn from ending 9 consecutive times\u{2014}overriding and ending turn. For Stop/SubagentStop hooks, check stop_hook_active in the input and return success while it's true. Set CLAUDE_CODE_STOP_HOOK_BLOCK_CAP to raise this limit."
                );
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(continuations, 8);
    assert!(
        matches!(merge_stop(&[&answer], 100, 0), StopMerge::Continue { .. }),
        "cap 0 = no cap"
    );
}

#[test]
fn permission_request_allow_and_deny() {
    let capture = load("d4_permreq_allow_default_mode");
    let command = capture.command("permreq");
    let out = run(
        &capture,
        "permreq",
        1,
        ctx_for(HookEvent::PermissionRequest, &command),
    );
    assert!(matches!(out.effect, Effect::Allow { .. }));

    let capture = load("d5_permreq_deny_default_mode");
    let command = capture.command("permreq");
    let out = run(
        &capture,
        "permreq",
        1,
        ctx_for(HookEvent::PermissionRequest, &command),
    );
    let (content, is_error) = capture.tool_result("toolu_oracle_001");
    assert!(is_error);
    assert_eq!(out.effect, Effect::Deny { text: content });
}

#[test]
fn parallel_calls_deny_one_and_add_context_to_the_other() {
    let capture = load("p2_parallel_tool_calls");
    let command = capture.command("pre_par");
    let first = run(&capture, "pre_par", 1, pre_ctx(&command));
    let second = run(&capture, "pre_par", 2, pre_ctx(&command));
    let denied = [&first, &second]
        .into_iter()
        .find(|i| matches!(i.effect, Effect::Deny { .. }))
        .unwrap();
    assert_eq!(
        denied.effect,
        Effect::Deny {
            text: capture.tool_result("toolu_oracle_001").0
        }
    );
    let with_context = [&first, &second]
        .into_iter()
        .find(|i| !i.contexts.is_empty())
        .unwrap();
    assert_eq!(with_context.contexts, capture.system_texts()[1..].to_vec());
}

#[test]
fn several_hooks_merge_deny_wins_contexts_kept_in_configuration_order() {
    // o2: allow / deny / additionalContext in parallel.
    let ctx = pre_ctx("CMD");
    let allow = interpret(
        &ctx,
        &HookFacts::exited(
            0,
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#,
            "",
        ),
        &id,
    );
    let deny = interpret(
        &ctx,
        &HookFacts::exited(
            0,
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"B-DENY"}}"#,
            "",
        ),
        &id,
    );
    let context = interpret(
        &ctx,
        &HookFacts::exited(
            0,
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"C-CTX"}}"#,
            "",
        ),
        &id,
    );
    let effects = [&allow.effect, &deny.effect, &context.effect];
    let winner = winning_permission(&effects).unwrap();
    assert_eq!(
        effects[winner],
        &Effect::Deny {
            text: "PreToolUse:Bash hook error: B-DENY".into()
        }
    );
    assert_eq!(
        context.contexts,
        vec!["PreToolUse:Bash hook additional context: C-CTX".to_owned()]
    );
    // Wrong hookEventName: the whole output is ignored.
    let wrong = interpret(
        &ctx_for(HookEvent::PostToolUse, "CMD"),
        &HookFacts::exited(
            0,
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"X"}}"#,
            "",
        ),
        &id,
    );
    assert!(wrong.contexts.is_empty());
    // Defaults (l8, c8, f3, j8).
    let empty_stderr = interpret(&ctx, &HookFacts::exited(2, "out", ""), &id);
    assert_eq!(
        empty_stderr.effect,
        Effect::Deny {
            text: "PreToolUse:Bash hook error: [CMD]: No stderr output".into()
        }
    );
    let no_reason = interpret(
        &ctx_for(HookEvent::PostToolUse, "CMD"),
        &HookFacts::exited(0, r#"{"decision":"block"}"#, ""),
        &id,
    );
    assert_eq!(
        no_reason.contexts,
        vec![
            "PostToolUse:Bash hook blocking error from command: \"CMD\": Blocked by hook"
                .to_owned()
        ]
    );
    // JSON is honoured on exit 1 and 3 (l6, l9).
    let exit3 = interpret(
        &ctx,
        &HookFacts::exited(
            3,
            r#"{"decision":"block","reason":"DENY-ON-EXIT3"}"#,
            "noise",
        ),
        &id,
    );
    assert_eq!(
        exit3.effect,
        Effect::Deny {
            text: "PreToolUse:Bash hook error: DENY-ON-EXIT3".into()
        }
    );
}
