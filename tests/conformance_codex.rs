//! End-to-end conformance of dsh's Codex bridge against the real Codex 0.169
//! captures (`fixtures/conformance/codex/`, see docs/sources.md).
//!
//! Every scenario in `fixtures/conformance/codex/` (generated from a capture by
//! `generate.py`, output committed) runs through the real `dsh replay`: the real
//! loop, the real tools and real hook processes (`hook.sh`, which records the
//! stdin it received and answers as the captured hook did). The Codex hook
//! configuration goes to `$CODEX_HOME` (or the project's `.codex/`). Then:
//!
//! 1. **payloads** — every hook stdin dsh sent (`hook/invoked` input), normalized,
//!    equals what Codex sent, event by event, in order, key order included;
//!    and what each hook process actually read equals, byte for byte, what the
//!    log says was sent (compact, one line, no trailing newline);
//! 2. **model view** — every model request, reduced to its model-facing items
//!    (user, assistant text, calls, tool result texts, contexts), equals the
//!    Responses API input Codex sent at the same point;
//! 3. **run classification** — each `hook/result` decision's `status` and
//!    `entries` equal Codex's own classification (`<s>__app/hook_runs.txt`);
//! 4. **turn endings** and legacy **notify** payloads.
//!
//! ## Normalizations (applied identically to Codex's and dsh's side)
//!
//! | what | normalized to | why |
//! |---|---|---|
//! | `session_id`, notify `thread-id` | `<SESSION>` | Codex: thread UUIDv7; dsh: the session id |
//! | `turn_id`, notify `turn-id` | `<TURN-n>` by first appearance | Codex: UUIDv7; dsh: a stable hash. Numbering keeps "same turn" visible |
//! | `transcript_path` | `null` | Codex: its rollout JSONL; dsh writes no Codex rollout and sends `null` |
//! | `model` | `<MODEL>` | `gpt-5.5` vs the scripted model's name |
//! | `cwd`, paths in texts | `<PROJECT>`, `<CODEX_HOME>` | temp dirs |
//! | PostModelRequest `token_usage` of a completed request | `<USAGE>` | the mock's counts; dsh's scripted model reports no usage, so dsh sends `null` (a failed request is `null` on both sides, compared) |
//! | PostModelRequest `error` (when not null) | `<ERROR>` | Codex substitutes its own text for an HTTP 500; dsh sends the provider's message |
//! | notify `client` | dropped | `codex_exec` is Codex's client name; dsh omits it (Codex omits it when unknown) |
//! | exec_command output `Chunk ID: …\nOutput:\n<out>` | `<out>` without trailing newlines | Codex's unified-exec wrapper; dsh's bash result is the output itself, trailing newlines trimmed (as Claude Code's Bash) |
//! | dsh bash result `(Bash completed with no output)` | empty | dsh's bash renders an empty output with Claude Code's text; Codex's exec output is empty |
//! | apply_patch output `Exit code: 0\nWall time: …\nSuccess. Updated …` / dsh `write` success | `<patch applied>` | each tool's own success text |
//! | `Full hook output saved to: <path>` | `<SPILL>` | spill file name is a fresh uuid |
//! | apply_patch `tool_response` `Wall time: <s> seconds` | `Wall time: <WALL> seconds` | a measured duration (`permission_apply_patch`: Codex 0.1 s, dsh rounds to whole seconds) |
//! | SessionStart contexts | after the first user message | Codex inserts them before the first prompt; dsh's loop appends session-start contexts to turn 1 after its `user/message` (crates/agent) |
//! | contexts of a tool step (developer messages) | after the step's tool results | Codex puts them between the call and its output; dsh's batch FIFO appends them after all results of the step (documented in hooks-codex/README.md) |
//! | dsh system prompt (first system message) | dropped | Codex's built-in preamble is elided in the captures |
//! | `permission_mode` | **not** normalized | both send `bypassPermissions` (Codex with `--dangerously-bypass-approvals-and-sandbox`, dsh replay); the `permission_*` scenarios set Codex's `approval_policy` in config.toml and both send what it implies (`never`: `bypassPermissions`, `on-request`: `default`) |
//!
//! Scenarios that cannot be expressed (compaction, sub-agents, the guardian
//! auto-reviewer, app-server interrupt, exec resume) are listed with the
//! reason in `fixtures/conformance/codex/scenarios.json` and README.md.
//! Differences that remain are asserted as dsh's documented behaviour in
//! [`Difference`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::support::{TestContext, copy_tree, json_lines, repo_root};

fn conformance_dir() -> PathBuf {
    repo_root().join("fixtures/conformance/codex")
}

/// Where dsh knowingly does what Codex does not, per scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Difference {
    /// None: everything is compared.
    None,
    /// Codex ran no hook (untrusted hook or untrusted project); `dsh replay`
    /// runs every configured hook (contract §1) and records `trust: untrusted`.
    ReplayRunsUntrustedHooks,
    /// Codex 0.169 did not run the `[[hooks.PostModelRequest]]` handler of
    /// config.toml (it does run the same handler from hooks.json, `baseline`);
    /// dsh runs it from either file. Compared: everything else.
    TomlPostModelRequest,
    /// Codex's model asked for an escalated command (or the app-server's
    /// sandbox asked for a patch); dsh's model cannot ask for escalation, so
    /// a Claude Code PreToolUse hook answers `ask` and dsh's approval seam
    /// applies the Codex `approval_policy` of config.toml (`never`: rejected
    /// with Codex's text, no PermissionRequest; `on-request`: the Codex
    /// PermissionRequest hook runs). The Claude hook is not compared.
    PermissionViaClaudeAsk,
    /// Codex has no Stop-block cap (133 loops until killed); dsh honours
    /// `STOP_CAP` consecutive blocks, caps the next one (the user is told, the
    /// decision says why) and the turn completes. Compared: the prefix Codex
    /// captured.
    StopBlockCap,
    /// Codex ran a plugin's two PreToolUse handlers in parallel and recorded
    /// them in completion order; dsh's log lists them in configuration order.
    /// Compared: the same payloads as a multiset.
    ParallelPluginHooks,
    /// Codex compacted before every request (the mock's usage never drops
    /// below `model_auto_compact_token_limit`) until killed; dsh compacts once
    /// when the first reply's usage crosses its window and the turn
    /// completes. Compared: the captured prefix of payloads and classified
    /// runs (SessionStart, PreCompact, PostCompact, SessionStart `compact`)
    /// and the first request; the summary request and the compacted history
    /// are each tool's own (Codex summarizes everything and keeps the user
    /// messages; dsh follows Claude Code's structure, README "Compaction").
    CompactionLoop,
    /// dsh shows an MCP error result (`isError`) as Claude Code does,
    /// `Error executing tool <tool>: <text>`; Codex shows the blocks' text.
    /// Compared: the model view with that prefix on the captured result.
    McpErrorText,
}

/// dsh's prefix for the `fail` tool's error result ([`Difference::McpErrorText`]).
const MCP_ERROR_PREFIX: &str = "Error executing tool fail: ";

const STOP_CAP: usize = 8;

/// dsh's bash result for a command with no output (Claude Code's text);
/// Codex's exec output is empty there.
const BASH_NO_OUTPUT: &str = "(Bash completed with no output)";

const SESSION_ID: &str = "01a227a2-0000-7000-8000-c0dec0de0169";

fn difference(name: &str) -> Difference {
    match name {
        "untrusted" | "project_hooks_untrusted" | "project_hooks_trusted_nobypass" => {
            Difference::ReplayRunsUntrustedHooks
        }
        "stop_always_block" => Difference::StopBlockCap,
        "plugin_hooks" => Difference::ParallelPluginHooks,
        "baseline_toml" => Difference::TomlPostModelRequest,
        "compact_once" | "compact_pre_exit2" => Difference::CompactionLoop,
        "mcp_fail" => Difference::McpErrorText,
        "permission_approve_for_me" | "permission_approve_for_me_allow" => {
            Difference::PermissionViaClaudeAsk
        }
        // Permission area: Codex's approval policy.
        "permission_allow"
        | "permission_allow_cli"
        | "permission_deny"
        | "permission_none"
        | "permission_apply_patch" => Difference::PermissionViaClaudeAsk,
        _ => Difference::None,
    }
}

struct Replayed {
    name: String,
    log: Vec<Value>,
    requests: Vec<Value>,
    /// Raw stdin each hook process read.
    stdins: Vec<String>,
    /// Raw notify payloads.
    notifies: Vec<String>,
    record: PathBuf,
    project: PathBuf,
    codex_home: PathBuf,
    _ctx: TestContext,
}

fn records(dir: &Path, prefix: &str) -> Vec<String> {
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|entry| {
            (
                entry.file_name().to_string_lossy().into_owned(),
                entry.path(),
            )
        })
        .filter(|(name, _)| name.starts_with(prefix))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|(_, path)| std::fs::read_to_string(path).unwrap())
        .collect()
}

fn replay(name: &str) -> Replayed {
    let ctx = TestContext::new();
    let scenario = conformance_dir().join(name);
    let codex_home = ctx.home().join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    copy_tree(&scenario.join("codex_home"), &codex_home);
    copy_tree(&scenario.join("project"), &ctx.project());
    copy_tree(&scenario.join("home"), &ctx.home());
    let record = ctx.home().join("record");
    std::fs::create_dir_all(&record).unwrap();
    let requests_path = ctx.home().join("requests.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(scenario.join("fixture.json"))
        // UUID-shaped like a Codex thread id: the spill path
        // (`/tmp/hook_outputs/<session>/<uuid>.txt`) is part of the text the
        // truncation budget is computed for (big_context).
        .args(["--session-id", SESSION_ID, "--requests-out"])
        .arg(&requests_path)
        .env("HOOKS", conformance_dir())
        .env("CX_RECORD", &record)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "dsh replay {name} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let log = json_lines(&String::from_utf8_lossy(&output.stdout));
    let requests = json_lines(&std::fs::read_to_string(&requests_path).unwrap_or_default());
    Replayed {
        name: name.to_owned(),
        log,
        requests,
        stdins: records(&record, "stdin."),
        notifies: records(&record, "notify."),
        record,
        project: ctx.project(),
        codex_home,
        _ctx: ctx,
    }
}

fn expected(name: &str) -> Value {
    let path = conformance_dir().join(name).join("expected.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Session/turn id numbering shared by hook payloads and notify payloads.
#[derive(Default)]
struct Ids {
    turns: HashMap<String, String>,
}

impl Ids {
    fn turn(&mut self, raw: &str) -> String {
        let next = self.turns.len() + 1;
        self.turns
            .entry(raw.to_owned())
            .or_insert_with(|| format!("<TURN-{next}>"))
            .clone()
    }
}

impl Replayed {
    fn paths(&self, text: &str) -> String {
        // CODEX_HOME lives inside HOME; replace the longer path first.
        let spill = regex::Regex::new(r"Full hook output saved to: \S+").unwrap();
        let text = text
            .replace(&self.codex_home.display().to_string(), "<CODEX_HOME>")
            .replace(&self.project.display().to_string(), "<PROJECT>");
        spill
            .replace_all(&text, "Full hook output saved to: <SPILL>")
            .into_owned()
    }

    fn paths_in(&self, value: &mut Value) {
        match value {
            Value::String(text) => *text = self.paths(text),
            Value::Array(items) => items.iter_mut().for_each(|item| self.paths_in(item)),
            Value::Object(map) => map.values_mut().for_each(|item| self.paths_in(item)),
            _ => {}
        }
    }

    fn normalize_stdin(&self, input: &Value, ids: &mut Ids) -> String {
        let event = input["hook_event_name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let mut out = serde_json::Map::new();
        for (key, value) in input.as_object().unwrap() {
            let value = match key.as_str() {
                "session_id" => Value::from("<SESSION>"),
                "turn_id" => Value::from(ids.turn(value.as_str().unwrap())),
                "transcript_path" => Value::Null,
                "model" => Value::from("<MODEL>"),
                "token_usage" if input["status"] == "completed" => Value::from("<USAGE>"),
                "error" if !value.is_null() && event == "PostModelRequest" => {
                    Value::from("<ERROR>")
                }
                _ => {
                    let mut value = value.clone();
                    self.paths_in(&mut value);
                    value
                }
            };
            out.insert(key.clone(), value);
        }
        wall_time(&serde_json::to_string(&Value::Object(out)).unwrap())
    }

    fn normalize_notify(&self, raw: &str, ids: &mut Ids) -> String {
        let payload: Value = serde_json::from_str(raw).unwrap();
        let mut out = serde_json::Map::new();
        for (key, value) in payload.as_object().unwrap() {
            let value = match key.as_str() {
                "client" => continue,
                "thread-id" => Value::from("<SESSION>"),
                "turn-id" => Value::from(ids.turn(value.as_str().unwrap())),
                _ => {
                    let mut value = value.clone();
                    self.paths_in(&mut value);
                    value
                }
            };
            out.insert(key.clone(), value);
        }
        serde_json::to_string(&Value::Object(out)).unwrap()
    }

    fn events(&self, kind: &str) -> Vec<&Value> {
        self.log
            .iter()
            .filter(|event| event["type"] == kind)
            .collect()
    }

    /// Codex hook invocations (without legacy notify) in log order.
    fn invoked(&self) -> Vec<&Value> {
        self.events("hook/invoked")
            .into_iter()
            .filter(|event| event["dialect"] == "codex" && event["event"] != "notify")
            .collect()
    }

    fn result_of(&self, invoked: &Value) -> &Value {
        self.events("hook/result")
            .into_iter()
            .find(|result| result["invocation_id"] == invoked["invocation_id"])
            .unwrap_or_else(|| panic!("{}: no hook/result for {invoked}", self.name))
    }

    /// `(event, label, normalized stdin)` of every hook dsh ran, and the ids
    /// numbering used, so notify payloads continue it.
    fn payloads(&self) -> (Vec<(String, Option<String>, String)>, Ids) {
        let mut ids = Ids::default();
        let payloads = self
            .invoked()
            .into_iter()
            .map(|invoked| {
                let command = invoked["command"].as_str().unwrap();
                let label = command
                    .rsplit_once("/behavior\" ")
                    .map(|(_, label)| label.to_owned());
                (
                    invoked["event"].as_str().unwrap().to_owned(),
                    label,
                    self.normalize_stdin(&invoked["input"], &mut ids),
                )
            })
            .collect();
        (payloads, ids)
    }

    /// The model-facing items of every request, as `generate.py` reduces Codex's.
    fn model_view(&self) -> Vec<Value> {
        self.requests
            .iter()
            .map(|request| {
                let messages = request["messages"].as_array().unwrap();
                let mut calls: HashMap<String, String> = HashMap::new();
                let mut items = Vec::new();
                for (index, message) in messages.iter().enumerate() {
                    let content = self.paths(message["content"].as_str().unwrap_or_default());
                    match message["role"].as_str().unwrap() {
                        "system" if index == 0 => {}
                        "system" => items.push(serde_json::json!({ "context": content })),
                        "user" => items.push(serde_json::json!({ "user": content })),
                        "assistant" => {
                            if !content.is_empty() {
                                items.push(serde_json::json!({ "assistant": content }));
                            }
                            for call in message["tool_calls"].as_array().into_iter().flatten() {
                                let id = call["id"].as_str().unwrap().to_owned();
                                calls.insert(id.clone(), call["name"].as_str().unwrap().to_owned());
                                items.push(serde_json::json!({ "call": id }));
                            }
                        }
                        "tool" => {
                            let id = message["tool_call_id"].as_str().unwrap();
                            let text = match calls.get(id).map(String::as_str) {
                                Some("write" | "edit") if self.tool_succeeded(id) => {
                                    "<patch applied>".to_owned()
                                }
                                Some("bash") if content == BASH_NO_OUTPUT => String::new(),
                                _ => content,
                            };
                            items.push(
                                serde_json::json!({ "result": { "call": id, "text": text } }),
                            );
                        }
                        other => panic!("{}: unexpected role {other}", self.name),
                    }
                }
                Value::Array(items)
            })
            .collect()
    }

    fn tool_succeeded(&self, call_id: &str) -> bool {
        self.events("tool/result")
            .into_iter()
            .any(|result| result["call_id"] == call_id && result["is_error"] == false)
    }

    /// `{event, status, entries}` of every hook run Codex's app-server would
    /// report: not SessionEnd (the app-server thread never shut down), not
    /// async runs (Codex emits no `hook/completed` for them).
    fn runs(&self) -> Vec<Value> {
        self.invoked()
            .into_iter()
            .filter(|invoked| invoked["event"] != "SessionEnd")
            .filter_map(|invoked| {
                let result = self.result_of(invoked);
                if result["outcome"] == "detached" {
                    return None;
                }
                let decision = &result["decision"];
                let mut entries = decision["entries"].clone();
                self.paths_in(&mut entries);
                Some(serde_json::json!({
                    "event": invoked["event"],
                    "status": decision["status"],
                    "entries": entries,
                }))
            })
            .collect()
    }

    fn turn_ends(&self) -> Vec<String> {
        self.events("turn/end")
            .into_iter()
            .map(|end| end["reason"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// A patch's measured wall time in a hook payload (JSON text) is not compared.
fn wall_time(payload: &str) -> String {
    let wall = regex::Regex::new(r"Wall time: [0-9.]+ seconds").unwrap();
    wall.replace_all(payload, "Wall time: <WALL> seconds")
        .into_owned()
}

fn normalize_spill(value: &mut Value) {
    let spill = regex::Regex::new(r"Full hook output saved to: \S+").unwrap();
    match value {
        Value::String(text) => {
            *text = spill
                .replace_all(text, "Full hook output saved to: <SPILL>")
                .into_owned();
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_spill),
        Value::Object(map) => map.values_mut().for_each(normalize_spill),
        _ => {}
    }
}

fn check(name: &str) -> Replayed {
    let replayed = replay(name);
    let expected = expected(name);
    let difference = difference(name);

    // 1. Payloads, in order, key order included.
    let (payloads, mut ids) = replayed.payloads();
    let want: Vec<(String, Option<String>, String)> = expected["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hook| {
            (
                hook["event"].as_str().unwrap().to_owned(),
                hook["label"].as_str().map(str::to_owned),
                wall_time(hook["stdin"].as_str().unwrap()),
            )
        })
        .collect();
    match difference {
        Difference::None | Difference::PermissionViaClaudeAsk | Difference::McpErrorText => {
            assert_eq!(payloads, want, "{name}: hook payloads");
        }
        Difference::TomlPostModelRequest => {
            let post_model =
                |payload: &&(String, Option<String>, String)| payload.0 == "PostModelRequest";
            assert_eq!(payloads.iter().filter(post_model).count(), 2, "{name}");
            let rest: Vec<_> = payloads
                .iter()
                .filter(|p| !post_model(p))
                .cloned()
                .collect();
            assert_eq!(rest, want, "{name}: hook payloads without PostModelRequest");
        }
        Difference::StopBlockCap => {
            // Codex's capture holds the first 12 of 133 Stop runs; dsh runs
            // STOP_CAP blocked ones plus the one whose block is capped.
            assert_eq!(
                payloads.len(),
                STOP_CAP + 1,
                "{name}: Stop runs before the cap"
            );
            assert!(want.len() >= payloads.len(), "{name}");
            assert_eq!(
                payloads[..],
                want[..payloads.len()],
                "{name}: captured prefix"
            );
            let invoked = replayed.invoked();
            let last = replayed.result_of(invoked[STOP_CAP]);
            let capped = last["decision"]["capped"].as_str().unwrap_or_default();
            assert!(capped.contains("dsh's cap is 8"), "{name}: {last}");
        }
        Difference::ParallelPluginHooks => {
            let mut got = payloads.clone();
            let mut want = want.clone();
            got.sort();
            want.sort();
            assert_eq!(got, want, "{name}: hook payloads (as a set)");
        }
        Difference::CompactionLoop => {
            let events: Vec<&str> = payloads.iter().map(|p| p.0.as_str()).collect();
            assert_eq!(
                events,
                ["SessionStart", "PreCompact", "PostCompact", "SessionStart"],
                "{name}: one compaction cycle"
            );
            assert_eq!(
                payloads[..],
                want[..payloads.len()],
                "{name}: captured prefix"
            );
        }
        Difference::ReplayRunsUntrustedHooks => {
            assert!(want.is_empty(), "{name}: Codex ran no hook");
            assert!(!payloads.is_empty(), "{name}: dsh replay runs every hook");
            for invoked in replayed.invoked() {
                assert_eq!(
                    replayed.result_of(invoked)["decision"]["trust"],
                    "untrusted"
                );
            }
        }
    }

    // What each process read is exactly what the log says was sent. A
    // detached (async) hook may still be starting when the session ends and
    // dsh kills it (as `codex exec` exiting did in this capture), so it may
    // have read nothing.
    let mut sent = Vec::new();
    let mut detached = Vec::new();
    for invoked in replayed.invoked() {
        let raw = serde_json::to_string(&invoked["input"]).unwrap();
        if replayed.result_of(invoked)["outcome"] == "detached" {
            detached.push(raw);
        } else {
            sent.push(raw);
        }
    }
    let mut read = replayed.stdins.clone();
    read.sort();
    let mut read_required: Vec<String> = Vec::new();
    for raw in &read {
        // A detached run killed before dsh wrote its stdin read nothing (and
        // recorded that): it accounts for one detached run.
        let position = if raw.is_empty() && !detached.is_empty() {
            Some(0)
        } else {
            detached.iter().position(|candidate| candidate == raw)
        };
        match position {
            Some(index) => {
                detached.remove(index);
            }
            None => read_required.push(raw.clone()),
        }
    }
    sent.sort();
    assert_eq!(
        read_required, sent,
        "{name}: stdin read by the hook processes"
    );
    for raw in &read {
        assert!(!raw.ends_with('\n') && !raw.contains('\n'), "{name}: {raw}");
    }

    // 2. The model's view of every request.
    let mut want_requests = expected["requests"].clone();
    normalize_spill(&mut want_requests);
    let view = Value::Array(replayed.model_view());
    match difference {
        Difference::StopBlockCap => {
            let want = want_requests.as_array().unwrap();
            let got = view.as_array().unwrap();
            assert_eq!(
                got[..want.len()],
                want[..],
                "{name}: captured requests prefix"
            );
        }
        Difference::CompactionLoop => {
            let want = want_requests.as_array().unwrap();
            let got = view.as_array().unwrap();
            assert_eq!(got.len(), 3, "{name}: request, summary request, request");
            assert_eq!(got[0], want[0], "{name}: the first request");
        }
        Difference::McpErrorText => {
            let mut want = want_requests.clone();
            for request in want.as_array_mut().into_iter().flatten() {
                for item in request.as_array_mut().into_iter().flatten() {
                    if let Some(text) = item.pointer_mut("/result/text") {
                        *text = Value::String(format!(
                            "{MCP_ERROR_PREFIX}{}",
                            text.as_str().unwrap_or_default()
                        ));
                    }
                }
            }
            assert_eq!(view, want, "{name}: model view");
        }
        Difference::None
        | Difference::ReplayRunsUntrustedHooks
        | Difference::TomlPostModelRequest
        | Difference::PermissionViaClaudeAsk
        | Difference::ParallelPluginHooks => {
            assert_eq!(view, want_requests, "{name}: model view");
        }
    }

    // 3. Codex's classification of each run.
    if let Some(want) = expected["runs"].as_array() {
        let mut want = Value::Array(want.clone());
        normalize_spill(&mut want);
        let got = Value::Array(replayed.runs());
        match difference {
            Difference::StopBlockCap => {
                let (got, want) = (got.as_array().unwrap(), want.as_array().unwrap());
                assert_eq!(got.len(), STOP_CAP + 1, "{name}");
                assert_eq!(got[..], want[..got.len()], "{name}: captured runs prefix");
            }
            Difference::None | Difference::PermissionViaClaudeAsk => {
                assert_eq!(got, want, "{name}: run classification");
            }
            Difference::CompactionLoop => {
                let (got, want) = (got.as_array().unwrap(), want.as_array().unwrap());
                assert_eq!(got.len(), 4, "{name}");
                assert_eq!(got[..], want[..got.len()], "{name}: captured runs prefix");
            }
            Difference::ReplayRunsUntrustedHooks
            | Difference::TomlPostModelRequest
            | Difference::ParallelPluginHooks
            | Difference::McpErrorText => {
                unreachable!("no app-server capture")
            }
        }
    }

    // 4. Turn endings and notify.
    let turn_ends = replayed.turn_ends();
    let want_ends: Vec<String> = serde_json::from_value(expected["dsh_turn_ends"].clone()).unwrap();
    assert_eq!(turn_ends, want_ends, "{name}: turn endings");
    let notifies: Vec<String> = replayed
        .notifies
        .iter()
        .map(|raw| replayed.normalize_notify(raw, &mut ids))
        .collect();
    let want_notify: Vec<String> = serde_json::from_value(expected["notify"].clone()).unwrap();
    assert_eq!(notifies, want_notify, "{name}: notify payloads");

    replayed
}

/// Scenario-specific facts beyond the generic comparison.
fn check_extra(replayed: &Replayed) {
    let name = replayed.name.as_str();
    match name {
        // Observed: hooks ran as `/bin/bash -c` (`$0=/bin/bash`, `$-=hBc`,
        // not a login shell), stdin not a TTY, cwd = the session cwd.
        "shell_probe" => {
            let probe = std::fs::read_to_string(replayed.record.join("shell_probe.txt")).unwrap();
            assert_eq!(
                replayed.paths(&probe),
                "argv0=/bin/bash flags=hBc login=n stdin_tty=n cwd=<PROJECT>\n"
            );
        }
        // The patch really was applied (Codex: `A hello.txt`).
        "apply_patch" | "apply_patch_matcher_edit" => {
            let text = std::fs::read_to_string(replayed.project.join("hello.txt")).unwrap();
            assert_eq!(text, "hello from patch\n");
        }
        // The rewritten command is what ran (Codex: `echo rewritten`), while
        // the model's own call keeps its arguments and the log records both.
        "pre_allow_updated_input" => {
            let call = replayed.events("tool/call")[0];
            assert_eq!(call["arguments"]["command"], "echo rewritten", "{call}");
            let assistant = replayed.events("assistant/message")[0];
            assert_eq!(
                assistant["tool_calls"][0]["arguments"]["command"],
                "echo hi"
            );
        }
        // The PermissionRequest hook decided: allow ran the command, deny
        // did not (and was recorded as an approval rejection).
        "permission_approve_for_me_allow" => {
            assert!(replayed.project.join("created_by_tool").exists());
        }
        "permission_approve_for_me" => {
            assert!(!replayed.project.join("created_by_tool").exists());
            let result = replayed.events("tool/result")[0];
            assert_eq!(result["disposition"], "approval_rejected", "{result}");
        }
        // The full context was spilled where the model was told (then the
        // spill file, outside the temp dirs, is removed).
        "big_context" => {
            let context = replayed.events("context/message")[0]["content"]
                .as_str()
                .unwrap();
            let marker = "\n\nFull hook output saved to: ";
            let path = PathBuf::from(&context[context.rfind(marker).unwrap() + marker.len()..]);
            let spilled = std::fs::read_to_string(&path).unwrap();
            assert!(
                spilled.starts_with("BIGCTX lorem ipsum"),
                "{}",
                path.display()
            );
            assert_eq!(spilled.len(), 21_607);
            std::fs::remove_file(&path).unwrap();
        }
        // docs/sources.md: the cache copy runs with PLUGIN_ROOT/CLAUDE_PLUGIN_ROOT and
        // PLUGIN_DATA/CLAUDE_PLUGIN_DATA set (as captured per hook), and `${CLAUDE_PLUGIN_ROOT}` /
        // `${PLUGIN_ROOT}` are substituted in the text, inside single quotes too, so a command
        // that unsets both first still finds its script (pl_unset ran at all).
        "plugin_hooks" => {
            let expected = expected(name);
            let root = "<CODEX_HOME>/plugins/cache/oracle-mkt/guard/1.0.0";
            let data = "<CODEX_HOME>/plugins/data/guard-oracle-mkt";
            for hook in expected["hooks"].as_array().unwrap() {
                let Some(label) = hook["label"].as_str() else {
                    continue;
                };
                let path = replayed.record.join(format!("plugin.{label}"));
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let text = replayed.paths(&text);
                let mut env: Vec<String> = text
                    .lines()
                    .filter(|line| !line.starts_with("arg="))
                    .map(str::to_owned)
                    .collect();
                env.sort();
                let mut want: Vec<String> = hook["plugin_env"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
                    .collect();
                want.sort();
                assert_eq!(env, want, "{name}: plugin env of {label}");
                let args: Vec<&str> = text
                    .lines()
                    .filter_map(|l| l.strip_prefix("arg="))
                    .collect();
                let want_args: Vec<String> = match label {
                    "pl_ss" => vec![root.into(), root.into(), data.into()],
                    "pl_pre" => vec![root.into()],
                    _ => Vec::new(),
                };
                assert_eq!(args, want_args, "{name}: probe arguments of {label}");
            }
            assert!(
                replayed
                    .codex_home
                    .join("plugins/data/guard-oracle-mkt")
                    .is_dir()
            );
        }
        // Permission area: under `approval_policy = "never"` the
        // call needing approval was rejected without a PermissionRequest and
        // did not run; under on-request the PermissionRequest hook's allow
        // applied the patch.
        "permission_allow" | "permission_allow_cli" | "permission_deny" | "permission_none" => {
            assert!(!replayed.project.join("created_by_tool").exists());
            let result = replayed.events("tool/result")[0];
            assert_eq!(result["disposition"], "approval_rejected", "{result}");
            assert!(
                replayed
                    .invoked()
                    .iter()
                    .all(|invoked| invoked["event"] != "PermissionRequest"),
                "{name}: no PermissionRequest under never"
            );
        }
        "permission_apply_patch" => {
            let text = std::fs::read_to_string(replayed.project.join("hello.txt")).unwrap();
            assert_eq!(text, "hello from patch\n");
        }
        // A blocked prompt: durable `prompt/blocked`, no model request, no Stop.
        "prompt_block" | "prompt_block_exit2" => {
            assert_eq!(replayed.events("prompt/blocked").len(), 1);
            assert!(replayed.requests.is_empty());
        }
        _ => {}
    }
}

macro_rules! scenarios {
    ($list:ident: $($name:ident),* $(,)?) => {
        const $list: &[&str] = &[$(stringify!($name)),*];
        $(
            #[test]
            fn $name() {
                let replayed = check(stringify!($name));
                check_extra(&replayed);
            }
        )*
    };
}

scenarios! {
    SCENARIOS: apply_patch, apply_patch_matcher_edit, async_hook, baseline, baseline_toml, big_context,
    both_formats, malformed_json, matcher, matcher_bash, model_error, model_error_notify,
    multi_hooks, multi_two_contexts, notify, notify_with_stop_block, permission_approve_for_me,
    permission_approve_for_me_allow, plugin_hooks, post_block,
    post_continue_false, post_exit2, post_updated_mcp_output, pre_allow_updated_input,
    pre_block_exit2, pre_block_json_deny, pre_block_json_legacy, pre_context, pre_exit1,
    pre_matcher_shell, pre_matcher_star, pre_model_request_ctx, pre_model_request_json,
    pre_model_request_plain, pre_plain_stdout, pre_system_message, project_hooks_trusted,
    project_hooks_trusted_nobypass, project_hooks_untrusted, prompt_block, prompt_block_exit2,
    prompt_context, prompt_continue_false, prompt_plain_stdout, session_context,
    session_matcher_resume, session_matcher_startup, session_plain_stdout, shell_probe,
    stop_always_block, stop_continue, stop_exit2, timeout, unknown_field, untrusted,
    // MCP tools: `[mcp_servers.echo]` runs dsh's stdio test server
    // (fixtures/mcp/echo_server.py); Codex's `tool_search` round and its result wrapper are
    // normalized away by generate.py (README).
    mcp_basic, mcp_matcher_exact, mcp_matcher_regex, mcp_post_block, mcp_post_updated_output,
    mcp_pre_deny, mcp_pre_updated_input, mcp_text_result,
    // A failed MCP call (`isError`): PreToolUse, then Stop; no PostToolUse.
    mcp_fail,
    // Compaction.
    compact_once, compact_pre_exit2, compact_pre_continue_false,
}

/// Every generated scenario, in the manifest's (sorted) order.
fn all_scenarios() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = SCENARIOS
        .iter()
        .chain(PERMISSION_SCENARIOS)
        .copied()
        .collect();
    all.sort_unstable();
    all
}

#[test]
fn every_generated_scenario_has_a_test() {
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(conformance_dir().join("scenarios.json")).unwrap(),
    )
    .unwrap();
    let generated: Vec<&str> = manifest["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    assert_eq!(generated, all_scenarios());
    for (name, reason) in manifest["skipped"].as_object().unwrap() {
        assert!(
            !reason.as_str().unwrap().is_empty(),
            "{name} skipped without a reason"
        );
        assert!(
            !conformance_dir().join(name).exists(),
            "{name} is both skipped and generated"
        );
    }
}

/// What the scenarios compare, from the committed expectations: a review aid
/// that changes when coverage does.
#[test]
fn coverage() {
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(conformance_dir().join("scenarios.json")).unwrap(),
    )
    .unwrap();
    let mut report = String::from(
        "scenario | hook payloads | model requests | classified runs | notify | dsh turn ends | difference\n",
    );
    for name in all_scenarios() {
        let expected = expected(name);
        let count = |key: &str| expected[key].as_array().map_or(0, Vec::len);
        let runs = match expected["runs"].as_array() {
            Some(runs) => runs.len().to_string(),
            None => "-".to_owned(),
        };
        let ends: Vec<&str> = expected["dsh_turn_ends"]
            .as_array()
            .unwrap()
            .iter()
            .map(|end| end.as_str().unwrap())
            .collect();
        report.push_str(&format!(
            "{name} | {} | {} | {runs} | {} | {} | {:?}\n",
            count("hooks"),
            count("requests"),
            count("notify"),
            ends.join(","),
            difference(name),
        ));
    }
    report.push_str("\nnot expressible in dsh:\n");
    for (name, reason) in manifest["skipped"].as_object().unwrap() {
        report.push_str(&format!("{name}: {}\n", reason.as_str().unwrap()));
    }
    insta::assert_snapshot!("coverage", report);
}

/// Codex 0.169, `session_continue_false` (codex OBSERVED.md, SessionStart table; the capture
/// directory itself was not kept, so the expectation is that row): a SessionStart hook answering
/// `continue: false` stops the session before the first prompt is processed: no
/// UserPromptSubmit, no model request (so no PreModelRequest), no Stop; the turn ends
/// `stopped`. The hooks are the conformance `hook.sh`, the behaviour written here.
#[test]
fn session_continue_false_stops_before_the_first_prompt() {
    let ctx = TestContext::new();
    let codex_home = ctx.home().join(".codex");
    let behavior = ctx.home().join("behavior");
    let record = ctx.home().join("record");
    for dir in [&codex_home, &behavior, &record] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(
        behavior.join("SessionStart.stdout"),
        r#"{"continue":false,"stopReason":"SESSION-HALT: not today"}"#,
    )
    .unwrap();
    let command = format!("bash \"$HOOKS/hook.sh\" \"{}\"", behavior.display());
    let mut hooks = serde_json::Map::new();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreModelRequest",
        "PreToolUse",
        "Stop",
    ] {
        hooks.insert(
            event.to_owned(),
            serde_json::json!([{"hooks": [{"type": "command", "command": command}]}]),
        );
    }
    std::fs::write(
        codex_home.join("hooks.json"),
        serde_json::json!({ "hooks": hooks }).to_string(),
    )
    .unwrap();
    let fixture = ctx.home().join("fixture.json");
    std::fs::write(
        &fixture,
        serde_json::json!({
            "description": "SessionStart continue:false",
            "prompts": ["please run echo hi"],
            "model": [
                {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
                {"text": "done"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let requests_path = ctx.home().join("requests.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(&fixture)
        .args(["--session-id", SESSION_ID, "--requests-out"])
        .arg(&requests_path)
        .env("HOOKS", conformance_dir())
        .env("CX_RECORD", &record)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let log: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    // Only SessionStart ran.
    let fired: Vec<String> = records(&record, "stdin.")
        .iter()
        .map(|stdin| {
            let value: Value = serde_json::from_str(stdin).unwrap();
            value["hook_event_name"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(fired, ["SessionStart"]);
    // No model request at all.
    let requests = std::fs::read_to_string(&requests_path).unwrap_or_default();
    assert!(requests.trim().is_empty(), "{requests}");
    let kinds: Vec<&str> = log.iter().filter_map(|e| e["type"].as_str()).collect();
    assert!(!kinds.contains(&"assistant/message"), "{kinds:?}");
    assert!(!kinds.contains(&"user/message"), "{kinds:?}");
    let ends: Vec<&Value> = log.iter().filter(|e| e["type"] == "turn/end").collect();
    assert_eq!(ends.len(), 1, "{kinds:?}");
    assert_eq!(ends[0]["reason"], "stopped");
    assert_eq!(ends[0]["message"], "SESSION-HALT: not today");
}

// Permission area: Codex's `approval_policy` decides whether the
// PermissionRequest hooks run (`on-request`) or the call is rejected
// (`never`); see `hooks-codex/src/config/approval.rs`.
scenarios! {
    PERMISSION_SCENARIOS: permission_allow, permission_allow_cli, permission_apply_patch,
    permission_deny, permission_none,
}
