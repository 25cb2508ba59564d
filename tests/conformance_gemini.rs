//! End-to-end conformance of dsh's Gemini CLI bridge against the real
//! Gemini CLI 0.61.0 captures (`fixtures/gemini/`, generated from
//! `shared/reference/gemini-cli/captures/` by `fixtures/gemini/generate.py`,
//! output committed).
//!
//! Every expressible capture runs through the real `dsh replay`: the real
//! loop, the real tools and real hook processes (`fixtures/gemini/hook.py`,
//! which records the exact stdin, argv, cwd and Gemini variables it got and
//! answers as the captured hook did). The captured settings go to the
//! project's `.gemini/settings.json` and `~/.gemini/settings.json`, with
//! `~/.gemini/trustedFolders.json` trusting the project as the capture did.
//! Then, for each scenario:
//!
//! 1. **hooks fired and their stdin** — the hooks that ran, in order, with
//!    the exact stdin each read (key order included, compact, no trailing
//!    newline), normalized, equal Gemini's (runs that Gemini started in
//!    parallel compare as a set within one firing);
//! 2. **model view** — each model request's user texts, assistant texts,
//!    calls, tool results and contexts equal what Gemini sent its model;
//! 3. **how the turn ended** (dsh's `turn/end` reason);
//! 4. **what each hook did**, for the scenarios whose point it is (the
//!    `hook/result` decisions), in the per-scenario tests below.
//!
//! ## Normalizations (applied identically to both sides)
//!
//! | what | normalized to | why |
//! |---|---|---|
//! | `session_id`, `$GEMINI_SESSION_ID` | `<SESSION>` | Gemini's UUID vs the replay's id |
//! | `timestamp` | `<TS>` | wall clock |
//! | `transcript_path` | `null` | Gemini's chat-recording JSONL; dsh writes none and sends `null` |
//! | project / home / parent paths | `<PROJECT>`, `<HOME>`, `<WORK>` | temp dirs |
//! | shell `llmContent` `Process Group PGID: N` line | dropped | dsh does not report a process group |
//! | `write_file` / `replace` `llmContent` | `<FILE TOOL TEXT>` | each tool's own success sentence |
//! | `write_file` / `replace` `returnDisplay` | `fileName`, `filePath`, `originalContent`, `newContent`, `isNewFile` | dsh computes no `fileDiff` / `diffStat`; `isBuildFile` is Gemini's own notion |
//! | `grep_search` `llmContent` / `returnDisplay` | `<GREP TEXT>` | each tool's own report of its matches |
//! | `tool_response` with an `error` | texts `<ERROR TEXT>`, type `<ERROR TYPE>` | each tool's own error wording (the shape is compared) |
//! | `replace` `tool_input.instruction` | dropped | dsh's `edit` has no such argument; the model's other arguments are compared |
//! | model view: Gemini's shell result `<untrusted_context>\nOutput: X\n…</untrusted_context>` | `X` | Gemini's shell wrapper; dsh's bash result is the output (`(Bash completed with no output)` → empty) |
//! | model view: Gemini's failing shell result `Output: X\nExit Code: N` | `Exit code N\nX` | dsh's bash result of a failing command |
//! | model view: results of file tools and grep | `<FILE TOOL RESULT>` (hook-made suffixes kept) | each tool's own text |
//! | model view: a result a `tailToolCallRequest` call gave | normalized as the tail tool's result | the tail call's result replaces the call's |
//! | model view: `Tool "X" not found. Did you mean …?` | `Tool "X" not found. <SUGGESTION>` | Gemini suggests its own tools, dsh the session's (the suggestion's rule is pinned in `hooks-gemini/src/tail.rs` over Gemini's tool list) |
//! | model view: SessionStart context | a context after the prompt | Gemini prepends `<hook_context>…</hook_context>\n\n` to the prompt text; dsh adds the same text as a context message after it. Hooks see Gemini's joined prompt on both sides |
//! | model view: BeforeAgent context part, dsh context messages | `context` items | Gemini sends a second text part in the user content; dsh a context message after the prompt |
//! | model view: the `<session_context>` part | dropped | Gemini's own preamble, as dsh's system prompt |
//! | hooks of BeforeModel, AfterModel, BeforeToolSelection | not compared here | the model events' own suite |
//!
//! Deliberate differences are [`Difference`]; captures that cannot be
//! expressed are listed in `fixtures/gemini/scenarios.json` with the reason.

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};

use crate::support::{TestContext, copy_tree, dialect_results, json_lines, repo_root};

const SESSION_ID: &str = "01a227a2-0000-7000-8000-c0dec0de0061";

/// dsh's cap on consecutive AfterAgent denials (hooks-gemini).
const AFTER_AGENT_CAP: usize = 8;

fn dir() -> PathBuf {
    repo_root().join("fixtures/gemini")
}

/// Where dsh knowingly does what Gemini CLI does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Difference {
    /// Everything is compared.
    None,
    /// Gemini loops without bound (362 AfterAgent runs until killed); dsh
    /// follows `AFTER_AGENT_CAP` denials, then ends the turn and says so.
    /// Compared: the prefix.
    AfterAgentCap,
    /// Gemini waits forever for a headless confirmation; dsh's approval
    /// seam has nobody to ask, denies the call and the turn goes on.
    /// Compared: the hooks and the first request.
    AskDoesNotHang,
    /// Gemini refuses to start (exit 55) in a folder it does not trust; dsh
    /// runs the session without the Gemini hooks (and says why).
    UntrustedFolder,
}

fn difference(name: &str) -> Difference {
    match name {
        "aa_always_deny" => Difference::AfterAgentCap,
        "bt_ask" => Difference::AskDoesNotHang,
        "x_untrusted_folder" => Difference::UntrustedFolder,
        _ => Difference::None,
    }
}

/// Events this suite compares (the model events are another suite's).
const COMPARED: &[&str] = &[
    "SessionStart",
    "BeforeAgent",
    "BeforeTool",
    "AfterTool",
    "AfterAgent",
    "Notification",
    "PreCompress",
    "SessionEnd",
];

struct Replayed {
    log: Vec<Value>,
    requests: Vec<Value>,
    records: Vec<Value>,
    stderr: String,
    work: PathBuf,
    project: PathBuf,
    home: PathBuf,
    _ctx: TestContext,
}

fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(dir().join(name).join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn replay(name: &str) -> Replayed {
    let expected = expected(name);
    let ctx = TestContext::new();
    let work = ctx.project();
    // Named as the capture's project (its slug is in GEMINI_PLANS_DIR).
    let project = work.join(expected["project_name"].as_str().unwrap_or("proj"));
    std::fs::create_dir_all(&project).unwrap();
    let scenario = dir().join(name);
    copy_tree(&scenario.join("project"), &project);
    copy_tree(&scenario.join("home"), &ctx.home());
    if expected["trusted"] == true {
        let folders = json!({ project.display().to_string(): "TRUST_FOLDER" });
        std::fs::create_dir_all(ctx.home().join(".gemini")).unwrap();
        std::fs::write(
            ctx.home().join(".gemini/trustedFolders.json"),
            folders.to_string(),
        )
        .unwrap();
    }
    let record = ctx.home().join("record");
    std::fs::create_dir_all(&record).unwrap();
    std::fs::copy(
        scenario.join("behaviors.json"),
        record.join("behaviors.json"),
    )
    .unwrap();
    // The capture's absolute paths (`{PROJ}/notes.txt`) name this project.
    let fixture = ctx.home().join("fixture.json");
    let text = std::fs::read_to_string(scenario.join("fixture.json")).unwrap();
    std::fs::write(
        &fixture,
        text.replace("{PROJ}", &project.display().to_string()),
    )
    .unwrap();
    let requests_path = ctx.home().join("requests.jsonl");
    let output = ctx
        .dsh()
        .current_dir(&project)
        .arg("replay")
        .arg(&fixture)
        .args(["--session-id", SESSION_ID, "--requests-out"])
        .arg(&requests_path)
        .env("GM_ORACLE", dir())
        .env("GM_RECORD", &record)
        .output()
        .unwrap();
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
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        home: ctx.home(),
        work,
        project,
        _ctx: ctx,
    }
}

/// One hook run, normalized: (event, label, stdin, argv, cwd, env).
type Run = (
    String,
    String,
    String,
    Vec<String>,
    String,
    Vec<(String, String)>,
);

struct Paths {
    project: String,
    home: String,
    work: String,
    session: String,
}

impl Paths {
    fn text(&self, text: &str) -> String {
        let mut text = text.to_owned();
        if !self.session.is_empty() {
            text = text.replace(&self.session, "<SESSION>");
        }
        text.replace(&self.project, "<PROJECT>")
            .replace(&self.home, "<HOME>")
            .replace(&self.work, "<WORK>")
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

fn pgid() -> regex::Regex {
    regex::Regex::new(r"Process Group PGID: \d+\n").unwrap()
}

fn normalize_stdin(raw: &str, paths: &Paths) -> String {
    let input: Value = serde_json::from_str(raw).unwrap();
    let tool = input["tool_name"].as_str().unwrap_or_default().to_owned();
    let mut out = Map::new();
    for (key, value) in input.as_object().unwrap() {
        let mut value = value.clone();
        match key.as_str() {
            "session_id" => value = json!("<SESSION>"),
            "timestamp" => value = json!("<TS>"),
            "transcript_path" => value = Value::Null,
            "tool_input" => {
                if let Some(map) = value.as_object_mut() {
                    map.shift_remove("instruction");
                }
            }
            "tool_response" => value = normalize_response(&tool, value),
            _ => {}
        }
        paths.value(&mut value);
        out.insert(key.clone(), value);
    }
    serde_json::to_string(&Value::Object(out)).unwrap()
}

fn normalize_response(tool: &str, mut response: Value) -> Value {
    let Some(map) = response.as_object_mut() else {
        return response;
    };
    if map.contains_key("error") {
        map.insert("llmContent".into(), json!("<ERROR TEXT>"));
        map.insert("returnDisplay".into(), json!("<ERROR TEXT>"));
        map.insert(
            "error".into(),
            json!({"message": "<ERROR TEXT>", "type": "<ERROR TYPE>"}),
        );
        return response;
    }
    if let Some(Value::String(text)) = map.get_mut("llmContent") {
        *text = pgid().replace_all(text, "").into_owned();
    }
    if matches!(tool, "grep_search" | "search_file_content") {
        map.insert("llmContent".into(), json!("<GREP TEXT>"));
        map.insert("returnDisplay".into(), json!("<GREP TEXT>"));
    }
    if matches!(tool, "write_file" | "replace") {
        map.insert("llmContent".into(), json!("<FILE TOOL TEXT>"));
        if let Some(Value::Object(display)) = map.get_mut("returnDisplay") {
            display.retain(|key, _| {
                matches!(
                    key.as_str(),
                    "fileName" | "filePath" | "originalContent" | "newContent" | "isNewFile"
                )
            });
        }
    }
    response
}

fn session_of(raw: &str) -> String {
    serde_json::from_str::<Value>(raw).unwrap()["session_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn normalize_run(
    event: &str,
    label: &str,
    stdin: &str,
    argv: &[Value],
    cwd: &str,
    env: &Map<String, Value>,
    paths: &Paths,
) -> Run {
    let strings = |value: &Value| paths.text(value.as_str().unwrap_or_default());
    (
        event.to_owned(),
        label.to_owned(),
        normalize_stdin(stdin, paths),
        argv.iter()
            .map(strings)
            // The recorder's own folder: `<RUN>` in Gemini's captures.
            .map(|arg| {
                if arg.ends_with("/record") || arg == "<RUN>" {
                    "<RUN>".into()
                } else {
                    arg
                }
            })
            .collect(),
        paths.text(cwd),
        {
            let mut env: Vec<(String, String)> =
                env.iter().map(|(k, v)| (k.clone(), strings(v))).collect();
            env.sort();
            env
        },
    )
}

/// Runs of one firing started in parallel: compared as a set.
fn canonical(mut runs: Vec<Run>) -> Vec<Run> {
    let mut out = Vec::new();
    while !runs.is_empty() {
        let first = runs[0].0.clone();
        let end = runs.iter().position(|r| r.0 != first).unwrap_or(runs.len());
        let mut group: Vec<Run> = runs.drain(..end).collect();
        group.sort();
        out.extend(group);
    }
    out
}

impl Replayed {
    fn paths(&self) -> Paths {
        Paths {
            project: self.project.display().to_string(),
            home: self.home.display().to_string(),
            work: self.work.display().to_string(),
            session: SESSION_ID.to_owned(),
        }
    }

    fn runs(&self) -> Vec<Run> {
        let paths = self.paths();
        self.records
            .iter()
            .map(|record| {
                let stdin = record["stdin"].as_str().unwrap();
                let event = serde_json::from_str::<Value>(stdin).unwrap()["hook_event_name"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                normalize_run(
                    &event,
                    record["label"].as_str().unwrap(),
                    stdin,
                    record["argv"].as_array().unwrap(),
                    record["cwd"].as_str().unwrap(),
                    record["env"].as_object().unwrap(),
                    &paths,
                )
            })
            .collect()
    }

    fn turn_ends(&self) -> Vec<String> {
        self.log
            .iter()
            .filter(|event| event["type"] == "turn/end")
            .map(|event| event["reason"].as_str().unwrap().to_owned())
            .collect()
    }

    fn gemini_results(&self) -> Vec<&Value> {
        dialect_results(&self.log, "gemini")
    }

    /// Every request's model view (`tails`: see [`tails`]).
    fn model_view(&self, tails: &[(String, String)]) -> Vec<Vec<(String, String)>> {
        self.requests
            .iter()
            .map(|request| {
                let mut items = Vec::new();
                let mut calls = Vec::new();
                let mut results = 0;
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
                                let name = call["name"].as_str().unwrap().to_owned();
                                calls.push(name.clone());
                                items.push(("call".to_owned(), name));
                            }
                        }
                        "tool" => {
                            let tool = calls.get(results).cloned().unwrap_or_default();
                            results += 1;
                            let text = if content == "(Bash completed with no output)" {
                                String::new()
                            } else {
                                content
                            };
                            let tool = result_tool(&tool, tails);
                            items.push(("tool".to_owned(), tool_text(&tool, text)));
                        }
                        other => panic!("role {other}"),
                    }
                }
                let paths = self.paths();
                items
                    .into_iter()
                    .map(|(kind, text)| (kind, paths.text(&text)))
                    .collect()
            })
            .collect()
    }
}

/// The tool calls an AfterTool hook's `tailToolCallRequest` ran, as
/// (original tool, tail tool) in dsh's names: the AfterTool runs that
/// carry `original_request_name`, in order.
fn tails(expected: &Value) -> Vec<(String, String)> {
    let dsh_name = |name: &str| {
        match name {
            "run_shell_command" => "bash",
            "read_file" => "read",
            "write_file" => "write",
            "replace" => "edit",
            "grep_search" | "search_file_content" => "grep",
            other => other,
        }
        .to_owned()
    };
    expected["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|hook| hook["event"] == "AfterTool")
        .filter_map(|hook| {
            let stdin: Value = serde_json::from_str(hook["stdin"].as_str().unwrap()).unwrap();
            let original = stdin["original_request_name"].as_str()?;
            Some((dsh_name(original), dsh_name(stdin["tool_name"].as_str()?)))
        })
        .collect()
}

/// The tool whose result answers a call of `call`: the last tail call run
/// in its place, if any.
fn result_tool(call: &str, tails: &[(String, String)]) -> String {
    tails
        .iter()
        .rev()
        .find(|(original, _)| original == call)
        .map_or(call, |(_, tail)| tail.as_str())
        .to_owned()
}

fn tool_text(tool: &str, text: String) -> String {
    // A tail call to an unknown tool: Gemini suggests its own tools, dsh
    // the session's.
    if text.starts_with("Tool \"")
        && let Some(at) = text.find(" not found. Did you mean ")
    {
        return format!("{} not found. <SUGGESTION>", &text[..at]);
    }
    if matches!(tool, "read" | "write" | "edit" | "grep")
        && !text.starts_with("Tool execution blocked")
    {
        // The hook-made suffixes stay compared.
        let suffix = text
            .find("\n\n<hook_context>")
            .or_else(|| text.find("\n\n[System]"))
            .map(|at| text[at..].to_owned())
            .unwrap_or_default();
        return format!("<FILE TOOL RESULT>{suffix}");
    }
    text
}

fn gemini_model_view(requests: &Value, tails: &[(String, String)]) -> Vec<Vec<(String, String)>> {
    let wrapper = regex::Regex::new(
        r"(?s)^<untrusted_context>\nOutput: (.*?)\n(?:Exit Code: (\d+)\n)?(?:Process Group PGID: \d+\n)?</untrusted_context>",
    )
    .unwrap();
    requests
        .as_array()
        .unwrap()
        .iter()
        .map(|request| {
            let mut items = Vec::new();
            let mut calls = Vec::new();
            let mut results = 0;
            for item in request.as_array().unwrap() {
                let kind = item[0].as_str().unwrap();
                let text = item[1].as_str().unwrap().to_owned();
                match kind {
                    "user" if text.starts_with("<hook_context>") => {
                        match text.split_once("</hook_context>\n\n") {
                            Some((context, prompt)) => {
                                items.push(("user".to_owned(), prompt.to_owned()));
                                items.push((
                                    "context".to_owned(),
                                    format!("{context}</hook_context>"),
                                ));
                            }
                            None => items.push(("context".to_owned(), text)),
                        }
                    }
                    "call" => {
                        calls.push(text.clone());
                        items.push(("call".to_owned(), text));
                    }
                    "tool" => {
                        let tool = calls.get(results).cloned().unwrap_or_default();
                        results += 1;
                        // dsh's bash result of a failing command leads with
                        // `Exit code N`.
                        let text = match wrapper.captures(&text) {
                            Some(found) => {
                                let output = found.get(1).map_or("", |m| m.as_str());
                                let rest = &text[found.get(0).map_or(0, |m| m.end())..];
                                match found.get(2) {
                                    Some(code) => {
                                        format!("Exit code {}\n{output}{rest}", code.as_str())
                                    }
                                    None => format!("{output}{rest}"),
                                }
                            }
                            None => text,
                        };
                        let text = if text == "(empty)" {
                            String::new()
                        } else {
                            text
                        };
                        let tool = result_tool(&tool, tails);
                        items.push(("tool".to_owned(), tool_text(&tool, text)));
                    }
                    other => items.push((other.to_owned(), text)),
                }
            }
            items
        })
        .collect()
}

/// The captured runs, normalized, as this suite compares them.
fn gemini_runs(expected: &Value) -> Vec<Run> {
    let hooks = expected["hooks"].as_array().unwrap();
    let mut runs = Vec::new();
    for hook in hooks {
        let event = hook["event"].as_str().unwrap();
        if !COMPARED.contains(&event) {
            continue;
        }
        let stdin = hook["stdin"].as_str().unwrap();
        let paths = Paths {
            project: "\u{0}".into(),
            home: "\u{0}".into(),
            work: "\u{0}".into(),
            session: session_of(stdin),
        };
        runs.push(normalize_run(
            event,
            hook["label"].as_str().unwrap(),
            stdin,
            hook["argv"].as_array().unwrap(),
            hook["cwd"].as_str().unwrap(),
            hook["env"].as_object().unwrap(),
            &paths,
        ));
    }
    runs
}

/// Replays `name` and compares hooks, model view and turn endings.
fn check(name: &str) -> Replayed {
    let expected = expected(name);
    let diff = difference(name);
    let run = replay(name);
    let mut ours = canonical(run.runs());
    let mut theirs = canonical(gemini_runs(&expected));
    let tails = tails(&expected);
    let mut requests = run.model_view(&tails);
    let mut gemini_requests = gemini_model_view(&expected["requests"], &tails);
    match diff {
        Difference::None => {}
        Difference::AfterAgentCap => {
            let after_agent = ours.iter().filter(|r| r.0 == "AfterAgent").count();
            assert_eq!(after_agent, AFTER_AGENT_CAP + 1, "{name}: dsh's cap");
            assert!(theirs.len() > ours.len(), "{name}: Gemini ran on");
            theirs.truncate(ours.len());
            let shared = requests.len().min(gemini_requests.len());
            requests.truncate(shared);
            gemini_requests.truncate(shared);
            assert!(
                run.stderr.contains("dsh's cap is 8"),
                "{name}: the user is told: {}",
                run.stderr
            );
        }
        Difference::AskDoesNotHang => {
            // Gemini never got past the confirmation; dsh's turn goes on to
            // its answer (and AfterAgent).
            requests.truncate(gemini_requests.len());
            ours.retain(|r| r.0 != "AfterAgent");
        }
        Difference::UntrustedFolder => {
            assert!(theirs.is_empty() && ours.is_empty(), "{name}: no hook runs");
            assert!(
                run.stderr.contains("is not trusted by Gemini CLI"),
                "{name}: {}",
                run.stderr
            );
            requests.clear();
            gemini_requests.clear();
        }
    }
    // What each hook read came from the log's `hook/invoked` input.
    let invoked: Vec<String> = run
        .log
        .iter()
        .filter(|e| e["type"] == "hook/invoked" && e["dialect"] == "gemini")
        .map(|e| serde_json::to_string(&e["input"]).unwrap())
        .collect();
    for record in &run.records {
        let stdin = record["stdin"].as_str().unwrap();
        assert!(!stdin.ends_with('\n'), "{name}: no trailing newline");
        assert!(
            invoked.iter().any(|i| i == stdin),
            "{name}: {stdin} not in the log"
        );
    }
    // Only the events compared here.
    ours.retain(|r| COMPARED.contains(&r.0.as_str()));
    // A hook killed at a 1-second timeout may die before the recorder has
    // written its line on a loaded machine: then what dsh sent it is
    // compared from the log.
    if name == "x_timeout" && !ours.iter().any(|r| r.1 == "slow") {
        let slow = theirs.iter().find(|r| r.1 == "slow").unwrap().clone();
        let paths = run.paths();
        let sent = run
            .log
            .iter()
            .find(|e| {
                e["type"] == "hook/invoked" && e["command"].as_str().unwrap().contains(" slow ")
            })
            .unwrap();
        let stdin = normalize_stdin(&serde_json::to_string(&sent["input"]).unwrap(), &paths);
        assert_eq!(stdin, slow.2, "{name}: the slow hook's stdin");
        theirs.retain(|r| r.1 != "slow");
    }
    assert_eq!(ours, theirs, "{name}: hooks and their stdin");
    assert_eq!(requests, gemini_requests, "{name}: the model's view");
    let ends: Vec<String> = expected["dsh_turn_ends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(run.turn_ends(), ends, "{name}: turn endings");
    run
}

fn effects(run: &Replayed) -> Vec<String> {
    run.gemini_results()
        .iter()
        .map(|r| {
            r["decision"]["effect"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

macro_rules! scenarios {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name));
            }
        )*

        /// Every generated scenario has a test here.
        #[test]
        fn every_generated_scenario_is_checked() {
            let mut tested: Vec<&str> = vec![$(stringify!($name)),*];
            tested.extend(CHECKED_BELOW);
            tested.sort();
            let listed: Value = serde_json::from_str(
                &std::fs::read_to_string(dir().join("scenarios.json")).unwrap(),
            )
            .unwrap();
            let mut generated: Vec<&str> = listed["generated"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            generated.sort();
            assert_eq!(tested, generated);
        }
    };
}

/// Scenarios with their own test below (they also run [`check`]).
const CHECKED_BELOW: &[&str] = &[
    "bt_deny_json",
    "bt_exit1_warning",
    "x_timeout",
    "bt_rewrite_input",
    "aa_always_deny",
    "bt_ask",
    "x_cc_event_names",
    "x_parallel_after_tool",
    "at_tail_name_missing",
    "bt_tool_input_two_hooks",
    "at_tail_two_hooks",
];

scenarios!(
    a_baseline_all_events,
    a_file_tools,
    a_text_only,
    aa_clear_context,
    aa_deny_retry,
    aa_exit2_then_stop,
    at_tail_tool_call,
    at_tail_args_null,
    at_tail_args_missing,
    at_tail_args_string,
    at_tail_args_array,
    at_tail_args_read,
    at_tail_name_null,
    at_tail_name_number,
    at_tail_name_unknown,
    at_tail_empty,
    at_tail_null,
    at_tail_args_empty,
    at_tail_name_array,
    at_tail_name_object,
    bt_tool_input_partial,
    bt_tool_input_odd,
    at_tail_later_null,
    at_tail_later_string,
    at_tail_later_array,
    at_tail_later_absent,
    bt_tool_input_later_null,
    bt_tool_input_later_string,
    bt_tool_input_later_array,
    bt_tool_input_later_absent,
    at_tail_name_empty_array,
    at_tail_name_legacy,
    at_additional_context,
    at_continue_false,
    at_deny,
    ba_additional_context,
    ba_deny,
    ba_exit2,
    bt_block_alias_no_reason,
    bt_continue_false,
    bt_exit2_stderr,
    bt_exit3_other,
    bt_rewrite_invalid,
    m_tool_matchers,
    pc_auto,
    ss_context,
    x_env_and_expansion,
    x_parallel_merge,
    x_untrusted_folder,
    x_user_vs_project,
);

#[test]
fn bt_deny_json() {
    let run = check("bt_deny_json");
    assert!(effects(&run).contains(&"block".to_owned()));
    assert!(
        run.stderr.contains("SYSMSG: blocked a shell call"),
        "{}",
        run.stderr
    );
}

/// Exit 1 is a warning: the run failed, nothing is blocked, the text is a
/// `Warning: ` system message.
#[test]
fn bt_exit1_warning() {
    let run = check("bt_exit1_warning");
    let pre: Vec<&Value> = run
        .gemini_results()
        .into_iter()
        .filter(|r| r["decision"]["effect"] == "none" && r["decision"]["status"] == "failed")
        .collect();
    assert_eq!(pre.len(), 2, "{:#?}", run.gemini_results());
    assert!(
        run.stderr.contains("Warning: EXIT1-STDERR: just a warning"),
        "{}",
        run.stderr
    );
}

/// A hook that outlives its millisecond timeout is killed and ignored.
#[test]
fn x_timeout() {
    let run = check("x_timeout");
    let errors: Vec<&Value> = run
        .gemini_results()
        .into_iter()
        .filter(|r| r["error"].as_str().is_some_and(|e| e.contains("timed out")))
        .collect();
    assert_eq!(errors.len(), 1, "{:#?}", run.gemini_results());
    assert!(!effects(&run).contains(&"block".to_owned()));
}

#[test]
fn bt_rewrite_input() {
    let run = check("bt_rewrite_input");
    assert!(effects(&run).contains(&"rewrite".to_owned()));
}

/// Gemini CLI loops without bound; dsh caps the loop visibly.
#[test]
fn aa_always_deny() {
    let run = check("aa_always_deny");
    let capped = run
        .gemini_results()
        .into_iter()
        .filter(|r| r["decision"]["capped"].is_string())
        .count();
    assert_eq!(capped, 1);
}

/// A headless `ask` goes to dsh's approval seam, which has nobody to ask:
/// the call is denied (Gemini hangs), Notification has fired, the turn ends.
#[test]
fn bt_ask() {
    let run = check("bt_ask");
    let denied = run
        .log
        .iter()
        .any(|e| e["type"] == "tool/result" && e["is_error"] == true);
    assert!(denied, "the asked call is not run");
}

/// Gemini's run fails on a tail call request without a name; dsh stops
/// the turn there and says why, and the AfterTool run that asked is
/// recorded as the one that decided.
#[test]
fn at_tail_name_missing() {
    let run = check("at_tail_name_missing");
    let end = run
        .log
        .iter()
        .find(|e| e["type"] == "turn/end")
        .unwrap()
        .to_string();
    assert!(end.contains("tailToolCallRequest has no usable"), "{end}");
    let won = run
        .gemini_results()
        .iter()
        .filter(|r| r["decision"]["won"] == true)
        .count();
    assert_eq!(won, 1, "the AfterTool run decided");
}

/// Of two hooks' `tool_input`s the later in the configuration wins, and
/// the log credits the rewrite to it.
#[test]
fn bt_tool_input_two_hooks() {
    let run = check("bt_tool_input_two_hooks");
    let call = run.log.iter().find(|e| e["type"] == "tool/call").unwrap();
    let by = call["rewritten_by"].as_str().unwrap_or_default();
    assert!(by.ends_with("#hooks.BeforeTool[0].hooks[1]"), "{call}");
    assert_eq!(won(&run), 1, "{:#?}", run.gemini_results());
}

/// Of two hooks' tail calls the later one's runs; it alone decided.
#[test]
fn at_tail_two_hooks() {
    let run = check("at_tail_two_hooks");
    assert_eq!(won(&run), 1, "{:#?}", run.gemini_results());
}

/// How many Gemini runs the log marks as deciding.
fn won(run: &Replayed) -> usize {
    let results = run.gemini_results();
    results
        .iter()
        .filter(|r| r["decision"]["won"] == true)
        .count()
}

/// Claude Code event names in Gemini settings are skipped, with a notice.
#[test]
fn x_cc_event_names() {
    let run = check("x_cc_event_names");
    assert!(run.stderr.contains("PreToolUse"), "{}", run.stderr);
}

/// Gemini CLI runs a reply's calls at once: both BeforeTool runs first,
/// then the fast call's AfterTool before the slow one's (the set
/// comparison in [`check`] cannot see that order), and the results go back
/// to the model in call order. Prints the replay's wall time.
#[test]
fn x_parallel_after_tool() {
    let started = std::time::Instant::now();
    let run = check("x_parallel_after_tool");
    eprintln!(
        "x_parallel_after_tool: dsh replay took {:?}",
        started.elapsed()
    );
    let commands = |event: &str| -> Vec<String> {
        run.records
            .iter()
            .map(|record| serde_json::from_str::<Value>(record["stdin"].as_str().unwrap()).unwrap())
            .filter(|stdin| stdin["hook_event_name"] == event)
            .map(|stdin| stdin["tool_input"]["command"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(commands("BeforeTool"), ["sleep 2; echo slow", "echo fast"]);
    assert_eq!(
        commands("AfterTool"),
        ["echo fast", "sleep 2; echo slow"],
        "AfterTool fires as each call finishes"
    );
    let results: Vec<&Value> = run.requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| &message["content"])
        .collect();
    assert_eq!(results, ["slow", "fast"], "results in call order");
}

/// One project with a Claude Code, a Codex and a Gemini CLI hook on the same
/// tool call: each hook gets its own dialect's payload, they run in
/// registration order (Claude Code, Codex, Gemini CLI), and a deny from any
/// dialect (here Gemini's) denies the call with that dialect's text.
#[test]
fn three_dialects_on_one_tool_call() {
    let ctx = TestContext::new();
    let project = ctx.project();
    let home = ctx.home();
    let record = home.join("record");
    std::fs::create_dir_all(&record).unwrap();
    let write = |path: PathBuf, value: Value| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    };
    let hook = |command: &str| json!([{"hooks": [{"type": "command", "command": command}]}]);
    write(
        project.join(".claude/settings.json"),
        json!({"hooks": {"PreToolUse": hook("cat > \"$REC/1-claude.json\"")}}),
    );
    write(
        home.join(".codex/hooks.json"),
        json!({"hooks": {"PreToolUse": hook("cat > \"$REC/2-codex.json\"")}}),
    );
    write(
        project.join(".gemini/settings.json"),
        json!({"hooks": {"BeforeTool": hook(
            "cat > \"${REC}/3-gemini.json\"; echo '{\"decision\":\"deny\",\"reason\":\"NO FROM GEMINI\"}'"
        )}}),
    );
    write(
        home.join(".gemini/trustedFolders.json"),
        json!({ project.display().to_string(): "TRUST_FOLDER" }),
    );
    let fixture = home.join("fixture.json");
    write(
        fixture.clone(),
        json!({"prompts": ["run it"], "model": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
            {"text": "ok"}
        ]}),
    );
    let requests_path = home.join("requests.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(&fixture)
        .args(["--session-id", SESSION_ID, "--requests-out"])
        .arg(&requests_path)
        .env("REC", &record)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let log = json_lines(&String::from_utf8_lossy(&output.stdout));
    let order: Vec<(&str, &str)> = log
        .iter()
        .filter(|e| e["type"] == "hook/invoked" && e["call_id"] == "call_1")
        .map(|e| (e["dialect"].as_str().unwrap(), e["event"].as_str().unwrap()))
        .collect();
    assert_eq!(
        order,
        [
            ("claude", "PreToolUse"),
            ("codex", "PreToolUse"),
            ("gemini", "BeforeTool")
        ]
    );
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(record.join(name)).unwrap()).unwrap()
    };
    let claude = read("1-claude.json");
    let codex = read("2-codex.json");
    let gemini = read("3-gemini.json");
    assert_eq!(claude["tool_name"], "Bash");
    assert_eq!(claude["hook_event_name"], "PreToolUse");
    assert_eq!(codex["tool_name"], "Bash");
    assert!(codex["turn_id"].is_string(), "Codex's own key: {codex}");
    assert_eq!(gemini["tool_name"], "run_shell_command");
    assert_eq!(gemini["hook_event_name"], "BeforeTool");
    assert_eq!(gemini["tool_input"], json!({"command": "echo hi"}));
    assert!(gemini.get("turn_id").is_none() && gemini["timestamp"].is_string());
    let requests = json_lines(&std::fs::read_to_string(&requests_path).unwrap());
    let last = requests.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .clone();
    let tool = last.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(tool["content"], "Tool execution blocked: NO FROM GEMINI");
}

/// The tool results the model got inside a subagent (offered Bash only)
/// whose one `echo hi` call an AfterTool hook answers with `tail`.
fn subagent_tail_results(tail: Value) -> Vec<Value> {
    let ctx = TestContext::new();
    let project = ctx.project();
    let home = ctx.home();
    let write = |path: PathBuf, text: String| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let answer = json!({"hookSpecificOutput": {"hookEventName": "AfterTool",
        "tailToolCallRequest": tail}});
    let command = format!("cat > /dev/null; echo '{answer}'");
    write(
        project.join(".gemini/settings.json"),
        json!({"hooks": {"AfterTool": [{"matcher": "run_shell_command",
            "hooks": [{"type": "command", "command": command}]}]}})
        .to_string(),
    );
    write(
        home.join(".gemini/trustedFolders.json"),
        json!({ project.display().to_string(): "TRUST_FOLDER" }).to_string(),
    );
    write(
        project.join(".claude/agents/lister.md"),
        "---\nname: lister\ndescription: Lists things.\ntools: Bash\n---\nYou list things.\n"
            .to_owned(),
    );
    write(project.join("notes.txt"), "alpha\nbeta\n".to_owned());
    let fixture = home.join("fixture.json");
    write(
        fixture.clone(),
        json!({"prompts": ["Please delegate echo hi"], "model": [
            {"tool_calls": [{"name": "agent", "arguments":
                {"description": "d", "prompt": "Run echo hi", "subagent_type": "lister"}}]},
            {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
            {"text": "SUB DONE"},
            {"text": "FINAL: all done."}
        ]})
        .to_string(),
    );
    let requests_path = home.join("requests.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(&fixture)
        .args(["--session-id", SESSION_ID, "--requests-out"])
        .arg(&requests_path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = json_lines(&std::fs::read_to_string(&requests_path).unwrap());
    assert_eq!(
        requests[1]["tools"],
        json!(["bash"]),
        "the subagent's tools"
    );
    requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].clone())
        .collect()
}

/// `at_tail_subagent_main_only` (a capture no replay can express: Gemini's
/// `invoke_agent` and its `generalist`): Gemini looks a tail call
/// requested inside a subagent up among the subagent's own tools. Here a
/// subagent offered Bash only asks for `read_file`, which the main agent
/// was offered: refused with Gemini's text, suggesting the subagent's one
/// tool, and nothing is read. A tool the subagent has runs
/// (`at_tail_subagent_read`).
#[test]
fn a_tail_call_inside_a_subagent_is_checked_against_the_subagents_tools() {
    let refused =
        subagent_tail_results(json!({"name": "read_file", "args": {"file_path": "notes.txt"}}));
    assert_eq!(
        refused,
        [r#"Tool "read_file" not found. Did you mean "run_shell_command"?"#]
    );
    let ran = subagent_tail_results(
        json!({"name": "run_shell_command", "args": {"command": "echo TAILED"}}),
    );
    assert_eq!(ran, ["TAILED"]);
}
