//! End-to-end conformance of dsh's GitHub Copilot CLI bridge
//! (`hooks-copilot`) against the real Copilot CLI 1.0.102 captures
//! (`fixtures/copilot/`, generated from
//! `shared/reference/copilot-cli/captures/` and `fixtures/copilot-null/captures/` by
//! `fixtures/copilot/generate.py`, output committed).
//!
//! Every expressible capture runs through the real `dsh replay`: the real
//! loop, the real tools and real hook processes (`fixtures/copilot/hook.py`,
//! which records the exact stdin, argv, cwd and Copilot variables it got
//! and answers as the captured hook did). The captured hook files go where
//! the capture wrote them (`.github/hooks/`, `.github/copilot/`,
//! `~/.copilot/hooks/`, `$COPILOT_HOME/hooks/`). Then, for each scenario:
//!
//! 1. **hooks fired and their stdin**: the hooks that ran, in order, each
//!    with the configured event, the exact stdin bytes (key order, compact,
//!    no trailing newline), normalized (permissionRequest's unified
//!    `diff` is compared byte for byte, paths aside), its argv, its cwd and Copilot's
//!    variables (`COPILOT_PROJECT_DIR`, `CLAUDE_PROJECT_DIR`,
//!    `COPILOT_HOOK_DIR`, `COPILOT_CLI`) equal Copilot's;
//! 2. **model view**: each model request's user prompts, assistant texts,
//!    calls (name and the arguments the history shows: the model's own, a
//!    hook's replacement, also one that failed the tool's check, or `{}`
//!    for one that is not an object), tool results and hook contexts equal what Copilot sent its
//!    model, hook-made texts byte for byte.
//!
//! ## Normalizations (applied identically to both sides)
//!
//! | what | normalized to | why |
//! |---|---|---|
//! | `sessionId` / `session_id` | `<SESSION>`, or `<AGENT>` when it is the payload's `agentId` (inside a subagent) | Copilot's UUID vs the replay's id |
//! | `agentId` / `parentAgentId` | `<AGENT>` / `<SESSION>` | Copilot's subagent UUID vs dsh's `a` + 16 hex |
//! | the `task` call's `name` argument | dropped from Copilot's `toolArgs` (by the generator) | dsh's `agent` tool has no `name`; `agent_type` is its `subagent_type` |
//! | model view: subagentStart context | a context after the subagent's prompt | Copilot prepends it to the prompt (`<ctx>\n\n<prompt>`); dsh adds a context message after it |
//! | `timestamp` | `<TS>` (after checking its type: epoch ms number in camelCase, ISO-8601 string in PascalCase) | wall clock |
//! | `transcriptPath` / `transcript_path` | `<TRANSCRIPT>` | Copilot's `session-state/<id>/events.jsonl`; dsh gives its own session log |
//! | `<current_datetime>…</current_datetime>` | dropped from the model view, its value dropped in `transformedPrompt` | wall clock |
//! | `textResultForLlm` / `text_result_for_llm` and tool results the tool itself wrote | `<TOOL TEXT>` (hook-made prefixes and suffixes kept; so is the tool's check of a replaced input, `Invalid input: Expected JSON object but got null`, `Invalid input: expected value at line 1 column 1`, `Invalid input: "command": Required`, `Invalid input: Multiple validation errors:…`) | each tool's own wording (`<shellId: 0 completed with exit code 0>`) |
//! | `postToolUseFailure` / `PostToolUseFailure` `error` | `<ERROR TEXT>`, except that input check (`Expected JSON object but got null`, `"command": Required`) | each tool's own error wording |
//! | project / home / record paths | `<PROJECT>`, `<HOME>`, `<RUN>` | temp dirs |
//! | model view: sessionStart context | a context after the prompt | Copilot puts it as the first text block of the first user message; dsh adds a context message after it |
//! | model view: userPromptSubmitted `\n\n<system_reminder>…` | a context after the prompt | Copilot appends it to the user message; dsh adds a context message |
//!
//! Captures that cannot be expressed are listed in
//! `fixtures/copilot/scenarios.json` with the reason.

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};

use crate::support::{TestContext, copy_tree_with, dialect_results, json_lines, repo_root};

const SESSION_ID: &str = "01a227a2-0000-7000-8000-c0dec0de0102";

fn dir() -> PathBuf {
    repo_root().join("fixtures/copilot")
}

fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(dir().join(name).join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

struct Replayed {
    log: Vec<Value>,
    requests: Vec<Value>,
    records: Vec<Value>,
    paths: Paths,
    _ctx: TestContext,
}

fn replay(name: &str) -> Replayed {
    let expected = expected(name);
    let ctx = TestContext::new();
    let project = ctx.project();
    let home = ctx.home();
    let scenario = dir().join(name);
    let record = home.join("record");
    std::fs::create_dir_all(&record).unwrap();
    std::fs::copy(
        scenario.join("behaviors.json"),
        record.join("behaviors.json"),
    )
    .unwrap();
    let oracle = dir();
    let placed = [
        ("${CP_ORACLE}", oracle.as_path()),
        ("${CP_RECORD}", &record),
    ];
    for base in [scenario.clone(), scenario.join("bad")] {
        copy_tree_with(&base.join("project"), &project, &placed);
        copy_tree_with(&base.join("home"), &home, &placed);
    }
    if expected["git"] == true {
        std::fs::create_dir_all(project.join(".git")).unwrap();
    }
    let cwd = match expected["cwd_rel"].as_str() {
        Some(rel) => project.join(rel),
        None => project.clone(),
    };
    std::fs::create_dir_all(&cwd).unwrap();
    let fixture = home.join("fixture.json");
    let text = std::fs::read_to_string(scenario.join("fixture.json")).unwrap();
    std::fs::write(
        &fixture,
        text.replace("{PROJ}", &project.display().to_string()),
    )
    .unwrap();
    let requests_path = home.join("requests.jsonl");
    let mut command = ctx.dsh();
    command
        .current_dir(&cwd)
        .arg("replay")
        .arg(&fixture)
        .args(["--session-id", SESSION_ID, "--requests-out"])
        .arg(&requests_path);
    for (key, value) in expected["env"].as_object().into_iter().flatten() {
        let value = value
            .as_str()
            .unwrap()
            .replace("{HOME}", &home.display().to_string());
        command.env(key, value);
    }
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "dsh replay {name} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Replayed {
        log: json_lines(&String::from_utf8_lossy(&output.stdout)),
        requests: json_lines(&std::fs::read_to_string(&requests_path).unwrap_or_default()),
        records: json_lines(
            &std::fs::read_to_string(record.join("hooks.jsonl")).unwrap_or_default(),
        ),
        paths: Paths {
            project: project.display().to_string(),
            home: home.display().to_string(),
            record: record.display().to_string(),
            oracle: dir().display().to_string(),
        },
        _ctx: ctx,
    }
}

struct Paths {
    project: String,
    home: String,
    record: String,
    oracle: String,
}

impl Paths {
    fn text(&self, text: &str) -> String {
        text.replace(&self.record, "<RUN>")
            .replace(&self.oracle, "<ORACLE>")
            .replace(&self.project, "<PROJECT>")
            .replace(&self.home, "<HOME>")
    }

    fn value(&self, value: &mut Value) {
        match value {
            Value::String(text) => *text = self.text(text),
            Value::Array(items) => items.iter_mut().for_each(|item| self.value(item)),
            Value::Object(map) => map.values_mut().for_each(|item| self.value(item)),
            _ => {}
        }
    }
}

const HOOK_MADE: [&str; 3] = [
    "Denied by preToolUse hook",
    "Permission denied by",
    "Tool result blocked:",
];

/// Whether a text is the check a tool makes of a hook's replaced arguments
/// before it runs (`Invalid input: Expected JSON object but got null`,
/// `Invalid input: "command": Required`, `Invalid input: Multiple
/// validation errors:…`): compared exactly, as the tool result and,
/// without `Invalid input: `, as postToolUseFailure's `error`.
fn input_check(text: &str) -> bool {
    let check = regex::Regex::new(
        r#"^(Invalid input: )?(Expected JSON object but got |expected value at |Multiple validation errors:\n|"[^"]+": )"#,
    )
    .unwrap();
    check.is_match(text)
}

/// A tool result with the tool's own text replaced (hook-made text and a
/// tool's input check kept).
fn tool_text(text: &str) -> String {
    if HOOK_MADE.iter().any(|prefix| text.starts_with(prefix))
        || text.starts_with("Invalid input: ")
    {
        return text.to_owned();
    }
    let suffix = text
        .find("\n\nTool \"")
        .map(|at| &text[at..])
        .unwrap_or_default();
    format!("<TOOL TEXT>{suffix}")
}

fn datetime() -> regex::Regex {
    regex::Regex::new(r"<current_datetime>[^<]*</current_datetime>").unwrap()
}

/// One stdin, normalized (the timestamp's type is checked first).
fn normalize_stdin(raw: &str, paths: &Paths) -> String {
    let input: Value = serde_json::from_str(raw).unwrap();
    // Byte for byte: compact, in this key order, no trailing newline.
    assert_eq!(input.to_string(), raw, "stdin is compact JSON");
    let pascal = input.get("hook_event_name").is_some();
    let iso = regex::Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$").unwrap();
    let agent_id = input.get("agentId").or_else(|| input.get("agent_id"));
    let mut out = Map::new();
    for (key, value) in input.as_object().unwrap() {
        let mut value = value.clone();
        match key.as_str() {
            "sessionId" | "session_id" if Some(&value) == agent_id => value = json!("<AGENT>"),
            "sessionId" | "session_id" => value = json!("<SESSION>"),
            "agentId" | "agent_id" => value = json!("<AGENT>"),
            "parentAgentId" | "parent_agent_id" => value = json!("<SESSION>"),
            "timestamp" => {
                if pascal {
                    let text = value.as_str().unwrap_or_default();
                    assert!(iso.is_match(text), "ISO timestamp: {raw}");
                } else {
                    assert!(value.is_i64(), "epoch-ms timestamp: {raw}");
                }
                value = json!("<TS>");
            }
            "transcriptPath" | "transcript_path" => value = json!("<TRANSCRIPT>"),
            "transformedPrompt" => {
                let text = value.as_str().unwrap_or_default();
                value = json!(datetime().replace_all(text, "<current_datetime/>"));
            }
            "toolResult" | "tool_result" => {
                for text_key in ["textResultForLlm", "text_result_for_llm"] {
                    if let Some(Value::String(text)) = value.get_mut(text_key) {
                        *text = tool_text(text);
                    }
                }
            }
            // A tool's own error wording (camelCase and PascalCase).
            "error"
                if input.get("toolName").or(input.get("tool_name")).is_some()
                    && !value.as_str().is_some_and(input_check) =>
            {
                value = json!("<ERROR TEXT>")
            }
            _ => {}
        }
        paths.value(&mut value);
        out.insert(key.clone(), value);
    }
    serde_json::to_string(&Value::Object(out)).unwrap()
}

/// One hook run: (event, label, stdin, argv, cwd, env).
type Run = (
    String,
    String,
    String,
    Vec<String>,
    String,
    Vec<(String, String)>,
);

fn run_of(record: &Value, paths: &Paths) -> Run {
    let strings = |value: &Value| paths.text(value.as_str().unwrap_or_default());
    let mut env: Vec<(String, String)> = record["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), strings(v)))
        .collect();
    env.sort();
    (
        record["event"].as_str().unwrap_or_default().to_owned(),
        record["label"].as_str().unwrap().to_owned(),
        normalize_stdin(record["stdin"].as_str().unwrap(), paths),
        record["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(strings)
            .collect(),
        strings(&record["cwd"]),
        env,
    )
}

impl Replayed {
    fn runs(&self) -> Vec<Run> {
        self.records
            .iter()
            .map(|r| run_of(r, &self.paths))
            .collect()
    }

    /// Every model request as (kind, text) items.
    fn model_view(&self) -> Vec<Vec<(String, String)>> {
        self.requests
            .iter()
            .map(|request| {
                let mut items = Vec::new();
                for (index, message) in request["messages"].as_array().unwrap().iter().enumerate() {
                    let content = message["content"].as_str().unwrap_or_default().to_owned();
                    match message["role"].as_str().unwrap() {
                        "system" if index == 0 => {}
                        "system" => items.push(("context".to_owned(), content)),
                        "user" => items.push(("user".to_owned(), content)),
                        "assistant" => {
                            if !content.is_empty() {
                                items.push(("assistant".to_owned(), content));
                            }
                            for call in message["tool_calls"].as_array().into_iter().flatten() {
                                let arguments = match &call["arguments"] {
                                    // OpenAI-style requests carry the arguments as JSON text.
                                    Value::String(text) => serde_json::from_str(text).unwrap(),
                                    other => other.clone(),
                                };
                                items.push((
                                    "call".to_owned(),
                                    call_text(call["name"].as_str().unwrap(), &arguments),
                                ));
                            }
                        }
                        "tool" => items.push(("tool".to_owned(), tool_text(&content))),
                        other => panic!("role {other}"),
                    }
                }
                items
                    .into_iter()
                    .map(|(kind, text)| (kind, self.paths.text(&text)))
                    .collect()
            })
            .collect()
    }

    fn copilot_results(&self) -> Vec<&Value> {
        dialect_results(&self.log, "copilot")
    }
}

fn expected_runs(expected: &Value) -> Vec<Run> {
    let paths = Paths {
        project: "<PROJECT>".into(),
        home: "<HOME>".into(),
        record: "<RUN>".into(),
        oracle: "<ORACLE>".into(),
    };
    expected["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hook| {
            let record = json!({
                "event": hook["event"],
                "label": hook["label"],
                "stdin": hook["stdin"],
                "argv": hook["argv"],
                "cwd": hook["cwd"],
                "env": hook["env"],
            });
            run_of(&record, &paths)
        })
        .collect()
}

/// A call as its name and the arguments the model's history shows, as
/// compact JSON with keys sorted (key order is each side's own).
fn call_text(name: &str, arguments: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|key| (key.clone(), sorted(&map[key])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    format!("{name} {}", sorted(arguments))
}

fn expected_model(expected: &Value) -> Vec<Vec<(String, String)>> {
    expected["model"]
        .as_array()
        .unwrap()
        .iter()
        .map(|request| {
            request
                .as_array()
                .unwrap()
                .iter()
                .map(|item| match item[0].as_str().unwrap() {
                    "call" => (
                        "call".to_owned(),
                        call_text(item[1].as_str().unwrap(), &item[2]),
                    ),
                    kind => (kind.to_owned(), item[1].as_str().unwrap().to_owned()),
                })
                .collect()
        })
        .collect()
}

/// Runs one capture and compares everything; returns the replay for the
/// scenario's own checks.
fn conforms(name: &str) -> Replayed {
    let expected = expected(name);
    let replayed = replay(name);
    assert_eq!(
        replayed.runs(),
        expected_runs(&expected),
        "{name}: hooks fired, their stdin, argv, cwd and variables"
    );
    assert_eq!(
        replayed.model_view(),
        expected_model(&expected),
        "{name}: what the model was sent"
    );
    for result in replayed.copilot_results() {
        assert!(result.get("decision").is_some(), "{name}: {result}");
    }
    replayed
}

macro_rules! captures {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                conforms(stringify!($name));
            }
        )*

        /// Every capture is either generated and tested here or listed with
        /// why it cannot be expressed.
        #[test]
        fn every_capture_is_tested_or_listed() {
            let listed: Value = serde_json::from_str(
                &std::fs::read_to_string(dir().join("scenarios.json")).unwrap(),
            )
            .unwrap();
            let mut generated: Vec<&str> = listed["generated"]
                .as_array()
                .unwrap()
                .iter()
                .map(|name| name.as_str().unwrap())
                .collect();
            generated.sort();
            let mut tested = vec![$(stringify!($name)),*];
            tested.sort();
            assert_eq!(generated, tested);
            for (name, why) in listed["skipped"].as_object().unwrap() {
                assert!(!why.as_str().unwrap().is_empty(), "{name}");
            }
        }
    };
}

captures!(
    a_baseline_all_events,
    a_file_tools,
    a_text_only,
    cc_mixed_case_one_file,
    cc_pascal_before_camel,
    cc_pascal_exit2_prompt,
    cc_pascal_flat,
    cc_pascal_flat_outputs,
    cc_pascal_modified_null,
    cc_pascal_nested_command,
    cc_pascal_tool_names,
    cc_pascal_updated_input,
    cc_pascal_updated_null,
    cc_pascal_updated_schema,
    perm_allow_no_allow_all,
    perm_exit2_and_interrupt,
    perm_merge,
    post_failure_context,
    pre_additional_context,
    pre_allow_no_allow_all,
    pre_allow_then_deny,
    pre_ask,
    pre_continue_false,
    pre_deny_no_reason,
    pre_matchers,
    pre_missing_script,
    pre_modified_args,
    pre_modified_chain_null,
    pre_modified_invalid_failure,
    pre_modified_nonobject,
    pre_modified_null,
    pre_modified_schema,
    pre_modified_schema_files,
    pre_null_then_deny,
    pre_rewrite_then_deny,
    pre_output_parsing,
    pre_pascal_deny,
    pre_two_files_deny_deny,
    pre_updated_input_cc,
    stop_block_once,
    subagent_stop_block,
    subagent_task,
    ups_exit2,
    ups_pascal_block,
    x_copilot_home,
    x_disable_all_hooks,
    x_exec_form,
    x_invalid_configs,
    x_no_git_repo,
    x_powershell_only_entry,
    x_sequential_timing,
    x_subdir_cwd,
    x_wrong_types,
);

/// `hook/*` records carry `dialect: "copilot"`, the camelCase event and
/// the exact stdin as `input`.
#[test]
fn records_carry_the_copilot_dialect() {
    let replayed = conforms("cc_mixed_case_one_file");
    let invoked: Vec<&Value> = replayed
        .log
        .iter()
        .filter(|e| e["type"] == "hook/invoked")
        .collect();
    assert!(!invoked.is_empty());
    for record in &invoked {
        assert_eq!(record["dialect"], "copilot", "{record}");
    }
    let events: Vec<&str> = invoked
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        events,
        ["preToolUse", "preToolUse", "agentStop", "agentStop"]
    );
    // The Pascal entry's input is the snake_case payload.
    assert!(invoked[1]["input"].get("hook_event_name").is_some());
    assert_eq!(replayed.copilot_results().len(), invoked.len());
}

/// pre_modified_null: every `modifiedArgs: null` the hook gave (alone,
/// next to an allow, next to a deny) is in the log and reads back in
/// `dsh log` as that `null`.
#[test]
fn a_null_rewrite_reads_back_in_dsh_log() {
    let replayed = replay("pre_modified_null");
    let given: Vec<&Value> = replayed
        .copilot_results()
        .into_iter()
        .filter_map(|r| r["decision"].get("updated_input"))
        .collect();
    assert_eq!(given, [&Value::Null; 3]);
    let path = replayed._ctx.home().join("session.jsonl");
    let lines: Vec<String> = replayed.log.iter().map(Value::to_string).collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let output = replayed._ctx.dsh().arg("log").arg(&path).output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    let shown: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("hook result") && line.contains("\"updated_input\":null"))
        .map(|line| line.split(" → ").nth(1).unwrap_or_default())
        .collect();
    assert_eq!(
        shown,
        [
            r#"{"status":"completed","effect":"rewrite","updated_input":null,"trust":"project"}"#,
            r#"{"status":"completed","effect":"allow","updated_input":null,"trust":"project","won":true}"#,
            r#"{"status":"completed","effect":"deny","reason":"Denied by preToolUse hook: NULL-AND-DENY","updated_input":null,"trust":"project","won":true}"#,
        ],
        "{text}"
    );
}

/// pre_modified_schema: `dsh hooks log` shows what followed each
/// postToolUseFailure fired for a rejected rewrite (after the call's
/// result, when its batch settled): that result, not "no tool result".
#[test]
fn hooks_log_shows_the_result_a_rejected_rewrite_failed_with() {
    let replayed = replay("pre_modified_schema");
    let path = replayed._ctx.home().join("session.jsonl");
    let lines: Vec<String> = replayed.log.iter().map(Value::to_string).collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let output = (replayed._ctx.dsh())
        .args(["hooks", "log"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let entries: Vec<&str> = text
        .split("\n20")
        .filter(|e| e.contains("postToolUseFailure"))
        .collect();
    let then: Vec<&str> = (entries.iter())
        .filter_map(|entry| entry.split("then: ").nth(1))
        .map(str::trim_end)
        .collect();
    let failed =
        |text: &str| format!("tool/result invalid_arguments (error): Invalid input: {text}");
    assert_eq!(
        then,
        [
            failed(r#""command": Expected string, received number"#),
            failed(r#""command": Required"#),
            failed(r#""command": Expected string, received null"#),
            failed(
                r#"Multiple validation errors:⏎- "command": Expected string, received number⏎- "description": Expected strin…"#
            ),
            failed(r#""command": Expected string, received array"#),
        ],
        "{text}"
    );
}

/// ups_pascal_block: a userPromptSubmitted block sends nothing to the
/// model and ends the turn rejected; perm_exit2_and_interrupt: a deny with
/// `interrupt` ends the run without another model request.
#[test]
fn blocks_end_the_turn_as_copilot_does() {
    let replayed = conforms("ups_pascal_block");
    assert!(replayed.requests.is_empty());
    let ends: Vec<&str> = replayed
        .log
        .iter()
        .filter(|e| e["type"] == "turn/end")
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert_eq!(ends, ["rejected"]);
    let replayed = conforms("perm_exit2_and_interrupt");
    let won: Vec<&Value> = replayed
        .copilot_results()
        .into_iter()
        .filter(|r| r["decision"]["won"] == true)
        .collect();
    assert!(!won.is_empty());
}

/// subagent_stop_block: a subagentStop block gives the subagent another
/// turn, and its new final text is what the parent's `agent` call returns.
#[test]
fn a_subagent_stop_block_reruns_the_subagent() {
    let replayed = conforms("subagent_stop_block");
    let last = replayed.requests.last().unwrap();
    let tool = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "tool")
        .unwrap();
    let text = tool["content"].as_str().unwrap();
    assert!(text.contains("SUBAGENT REPORT 2."), "{text}");
    assert!(!text.contains("SUBAGENT REPORT 1."), "{text}");
}
