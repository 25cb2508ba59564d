//! End-to-end conformance of dsh's Claude Code bridge against the real Claude Code 2.1.328
//! captures (`fixtures/conformance/claude/`, copied into
//! `fixtures/conformance/claude/<scenario>/captured/` by `generate.py`).
//!
//! Each scenario runs through the real `dsh replay` binary: the real loop, real tools and real
//! hook processes (`fixtures/conformance/claude/hook.py`, which records its stdin and does what
//! the captured hook did). Two things are compared with the capture:
//!
//! 1. **Every hook stdin**, byte-exact after normalization: the stdin text must be compact JSON
//!    plus one `\n` on both sides, then both are parsed (key order kept) and normalized as below,
//!    together with the hook's event, label, cwd and hook-related environment.
//! 2. **The model-facing outcome** of every model request: assistant turns, tool results
//!    (`is_error` and content), user texts (prompts, Stop feedback), hook texts shown to the
//!    model as system messages; plus how the first turn ended.
//!
//! A scenario-specific difference is never patched silently: it is a [`Known`] entry in the
//! scenario table below, applied to the *captured* side (so the test then asserts dsh's
//! documented behaviour), and listed in `fixtures/conformance/claude/README.md`.
//!
//! | normalized | captured (Claude Code) | dsh | why |
//! |---|---|---|---|
//! | `session_id`, `CLAUDE_CODE_SESSION_ID` | a uuid | `--session-id` | per run |
//! | `transcript_path` | `<HOME>/.claude/projects/<PROJECT_SLUG>/<sid>.jsonl` | `$DSH_HOME/claude/projects/<slug>/<sid>.jsonl` | dsh keeps its Claude-format transcript under `DSH_HOME`; slug rule checked (`/` and `.` → `-`) |
//! | `CLAUDE_ENV_FILE` | `<HOME>/.claude/session-env/<sid>/…` | `$DSH_HOME/claude/session-env/<sid>/…` | same, state dir |
//! | `cwd`, paths in any string | `<PROJECT>`, `<HOME>`, `<ORACLE>` | temp dirs | per run |
//! | `prompt_id` | uuid | uuid | numbered by first appearance (`<PROMPT_1>`…), so sharing is still checked |
//! | `duration_ms` | measured | measured | timing |
//! | the `[CMD]` in model-facing texts | `python3 <ORACLE>/hook.py …` | `python3 $ORACLE/hook.py …` | the fixture's settings are the captured ones with `<ORACLE>` → `$ORACLE`; dsh shows the command as configured |
//! | hook run order inside one event | completion order of parallel hooks | completion order | parallel hooks of one event are compared as a set |
//! | MessageDisplay `turn_id`, `message_id` | uuids | derived ids | numbered by first appearance (`<TURN_1>`, `<MESSAGE_1>`…) |
//! | "woke after sleep" notes | harness notes | harness notes | timing-dependent (z2's async sleeper races session end) |
//! | env other than `PWD`, `CLAUDE_PROJECT_DIR`, `CLAUDE_ENV_FILE`, `CLAUDE_EFFORT`, `CLAUDECODE`, `CLAUDE_CODE_ENTRYPOINT`, `CLAUDE_CODE_SESSION_ID` | Claude Code internals (`CLAUDE_PID`, messaging socket, child notes dir…) | not set / dsh's own | only the documented hook variables are compared |
//! | model requests: system prompt, `<Claude Code … elided>` blocks, env block, date | Claude Code's built-in prompts | dsh's system prompt | not hook output |
//! | `~/.claude/CLAUDE.md` in InstructionsLoaded's `file_path` | `<HOME>/.claude/CLAUDE.md` | `$HOME/.claude/CLAUDE.md` | both `<USER_CLAUDE_MD>`, before the state-dir rule turns `<HOME>/.claude` into `<STATE>` |
//! | tool result content blocks | a list of text blocks | `content`: the blocks' texts one per line; `content_blocks`: the blocks | the text is compared as text and the blocks as blocks (types and texts) |
//! | message framing | opus-5-5 form: hook texts in `role:"system"` messages, the first turn's attachments joined into one system message after the prompt, tool results and the next prompt in one user message | one message per context/steering/tool result | between two assistant messages the view keeps user texts, tool results and hook texts as three ordered lists; hook texts are split where a `\n\n` paragraph opens with a hook label, so their own newlines stay |

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};

use crate::support::{TestContext, copy_tree, copy_tree_with, json_lines, repo_root};

const SESSION_ID: &str = "conformance-session";

/// Environment variables compared between the capture and dsh.
const COMPARED_ENV: &[&str] = &[
    "PWD",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_ENV_FILE",
    "CLAUDE_EFFORT",
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_PLUGIN_ROOT",
    "CLAUDE_PLUGIN_DATA",
];

/// Variables named `ORACLE_*` are compared too: the settings-`env` captures probe with them, and
/// the capture harness ran Claude Code with `ORACLE_MARKER` inherited from its parent.
const COMPARED_ENV_PREFIX: &str = "ORACLE_";

/// `ORACLE_MARKER` as the capture harness's parent environment had it.
const INHERITED_MARKER: &str = "inherited-from-cc-parent-env";

/// A documented difference between Claude Code and dsh, applied to the captured side.
#[derive(Debug, Clone, Copy)]
enum Known {
    /// Claude Code ran in `default` permission mode; the scenario's fixture predates dsh's
    /// permission modes and replays in `dsh replay`'s `bypassPermissions` (the `perm_*`
    /// scenarios pass the captured mode).
    DefaultPermissionMode,
    /// The model-facing result text of one of dsh's own tools differs from Claude Code's tool
    /// (crates/tools, not the bridge): the call's result is dsh's text, in the model requests and
    /// in PostToolBatch's `tool_calls[].tool_response` (which is that text).
    ToolResultText {
        call: &'static str,
        dsh: &'static str,
    },
    /// Claude Code fills input defaults (`replace_all: false` on Edit) into the assistant's
    /// `tool_use` block kept in history; dsh keeps the model's arguments as sent (the hooks'
    /// `tool_input` has the default on both sides).
    EditDefaultsInHistory,
    /// An async hook runs alongside the rest of the turn, so when it starts relative to later
    /// hooks is a race (in both tools): hook runs are compared as one set. (Claude Code's
    /// `elicitation_response` Notification is not awaited either: `ev_elicit_*`.)
    AsyncHookRace,
    /// This many hook invocations never reach the scripted hook (a settings hook Claude Code
    /// refuses to run, a plugin hook whose script path the shell empties): the log's
    /// `hook/invoked` records hold that many more inputs than the hooks recorded.
    UnrecordedRuns(usize),
    /// StopFailure: Claude Code made this request again after it failed (its own
    /// fallbacks, `CLAUDE_CODE_MAX_RETRIES=0` notwithstanding); dsh's scripted provider is asked
    /// once, so only the first captured request is compared.
    OneRequestBeforeFailure,
    /// StopFailure hooks are not waited for and are killed at teardown: Claude Code killed this
    /// label's interpreter before it recorded; dsh lets quick hooks finish (1 s grace), so the
    /// run may or may not record. Its records are left out on dsh's side.
    KilledAtTeardown(&'static str),
    /// Claude Code killed this StopFailure shell hook after `cat` but before `env` ran (its env
    /// file is empty in the capture); dsh's run gets to `env`. The env is not compared.
    EnvNotCaptured(&'static str),
    /// Claude Code 2.1.328 drops a changed settings file's `env` before its ConfigChange hooks
    /// run and does not put it back when a hook keeps the old settings
    /// (`ev_config_change_block`: that hook's environment lacks the variable, and the next Bash
    /// call prints `X=`), although the change is reported as not applied. dsh keeps the old
    /// settings whole, `env` included: the captured side gets the variable back in this
    /// label's environment (the Bash result is a [`Known::ToolResultText`]).
    KeptSettingsEnv {
        label: &'static str,
        name: &'static str,
        value: &'static str,
    },
    // Compaction.
    /// Claude Code ran each follow-up prompt as a `--resume` run (SessionEnd, then SessionStart
    /// `resume`); `dsh replay` sends them in one session: those runs are left out of the
    /// captured side (the last SessionEnd stays).
    ResumedFollowUps,
    /// Compaction's model-facing prose is each tool's own (dsh writes its own summary
    /// instructions and summary framing): both sides compare `<summary instructions …>` with
    /// the additional instructions, and `<summary: …>` with the summary text. Claude Code's
    /// record of the `/compact` command itself (`<local-command-caveat>`, `<command-name>`,
    /// `<local-command-stdout|stderr>`) is not model-facing in dsh and is left out.
    CompactionTexts,
    /// `model` in a hook payload names the model: Claude Code's `claude-opus-5-5`, dsh replay's
    /// scripted model `scripted`.
    ModelName,
    /// The capture's digest elided the Write contents (112 000 characters each): the `content`
    /// of every write call compares as `<elided>` on both sides.
    ElidedWriteContent,
    /// The capture elided the system message that carries this SessionStart(compact) context
    /// (PROTOCOL-ADDENDUM §7: it reaches the model); dsh places it right after the summary, so
    /// the captured side gets it there.
    ElidedCompactContext(&'static str),
    /// Claude Code sends a slash command's `<command-message>…<command-args>` marker block
    /// before the expanded text; dsh sends the expanded text only (the log keeps the typed
    /// prompt as the user message's `original_content`).
    SlashCommandMarkup,
    /// Claude Code sends one message's tool results in the order the calls finished (a call
    /// denied by PreToolUse first, then the one that ran: `p2_parallel_tool_calls` as captured
    /// on 2026-11-30; an earlier capture run had them in call order); dsh keeps call order. The
    /// results of one message are compared sorted by id on both sides.
    ToolResultOrder,
    /// Claude Code's `Agent` tool response carries its own accounting (token usage, durations,
    /// harness counters, a tools-used note block, its model name); dsh's `agent` value has
    /// `status`, `prompt`, `agentId`, `agentType`, `toolsUsed`, `content`, `resolvedModel`,
    /// `totalToolUseCount`. PostToolUse(Agent) `tool_response` is compared on the fields both
    /// report the same way: `status`, `prompt`, `agentId`, `agentType`, `toolsUsed`.
    AgentToolResponse,
    /// Claude Code sends the PermissionDenied `retry` note (`The PermissionDenied hook indicated
    /// you may retry this tool call.`) as a user text after the tool result; dsh sends the same
    /// text as a context (system role) after the step's results. The captured user text is
    /// compared as a hook text.
    RetryNoteAsContext,
    /// Claude Code ends a prompt with `\n` when it sends another user text right after it in
    /// the same message (its merge of adjacent user messages: the prompt a UserPromptSubmit
    /// `continue: false` stopped, then the `Operation stopped by hook` note); dsh sends the
    /// prompt as typed. The captured side drops that `\n`.
    MergedUserTextNewline,
    /// `--init-only`: Claude Code ran the Setup and SessionStart hooks and exited without a
    /// turn, writing no stream lines (no `hook_response`, no result): the hooks' own records
    /// are compared, and dsh must open no turn either.
    InitOnly,
    /// The capture drove one Claude Code process through several turns over the Agent SDK's
    /// stream-json input, and a `set_model` control request switched the model (PreModelSwitch
    /// / PostModelSwitch `source: "sdk"`); `dsh replay` sends the same switch as the
    /// `/model NAME` prompt (`source: "command"`). Its stream has every turn's `hook_response`
    /// lines, so dsh's hook outcomes of every turn are compared (SessionEnd aside). Claude
    /// Code's record of the switch in the conversation (`<local-command-caveat>`,
    /// `<command-name>`, `<local-command-stdout>`) is not model-facing in dsh and is left out.
    SdkModelSwitch,
}

/// The `Agent` tool response fields compared under [`Known::AgentToolResponse`].
const AGENT_RESPONSE_FIELDS: &[&str] = &["status", "prompt", "agentId", "agentType", "toolsUsed"];

/// Keeps only [`AGENT_RESPONSE_FIELDS`] of every PostToolUse(Agent) `tool_response`.
fn reduce_agent_responses(hooks: &mut [Value]) {
    for record in hooks.iter_mut() {
        if record["stdin"]["tool_name"] != "Agent" {
            continue;
        }
        if let Some(response) = record["stdin"]
            .get_mut("tool_response")
            .and_then(Value::as_object_mut)
        {
            response.retain(|key, _| AGENT_RESPONSE_FIELDS.contains(&key.as_str()));
        }
    }
}

/// Subagent ids in order of first appearance (`"agent_id":"a…"` in hook stdin, or the log's
/// `agent_id` tags), each mapped to `<AGENT_ID_n>`.
fn agent_id_replacements(ids: impl IntoIterator<Item = String>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for id in ids {
        if !out.iter().any(|(known, _)| *known == id) {
            let placeholder = format!("<AGENT_ID_{}>", out.len() + 1);
            out.push((id, placeholder));
        }
    }
    out
}

fn captured_agent_ids(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .filter_map(|r| serde_json::from_str::<Value>(r["stdin_raw"].as_str()?).ok())
        .filter_map(|stdin| stdin.get("agent_id")?.as_str().map(str::to_owned))
        .collect()
}

fn scenario_dir(name: &str) -> PathBuf {
    repo_root()
        .join("fixtures")
        .join("conformance")
        .join("claude")
        .join(name)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What one `dsh replay` of a scenario produced.
struct DshRun {
    ctx: TestContext,
    oracle: PathBuf,
    records: Vec<Value>,
    requests: Vec<Value>,
    log: Vec<Value>,
}

fn run_dsh(name: &str) -> DshRun {
    let dir = scenario_dir(name);
    let ctx = TestContext::new();
    copy_tree(&dir.join(".claude"), &ctx.project().join(".claude"));
    // Files the capture put into the project (CLAUDE.md, commands, skills).
    if dir.join("project").is_dir() {
        copy_tree(&dir.join("project"), &ctx.project());
    }
    if dir.join("home").is_dir() {
        copy_tree_with(
            &dir.join("home"),
            &ctx.home(),
            &[("<HOME>", &ctx.home()), ("<PROJECT>", &ctx.project())],
        );
    }
    // Files the capture harness put in the project (perm_*).
    if dir.join("project").is_dir() {
        copy_tree(&dir.join("project"), &ctx.project());
    }
    // Plugin installs: the scripted hook copied where the capture harness put it (`rec.py`),
    // and the run's extra arguments (`--plugin-dir`, inline `--settings`).
    let mut extra_args: Vec<String> = Vec::new();
    let setup_path = dir.join("plugin_setup.json");
    if setup_path.is_file() {
        let setup = read_json(&setup_path);
        for copy in setup["hook_copies"].as_array().unwrap() {
            let target = ctx.home().join(copy.as_str().unwrap());
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(dir.parent().unwrap().join("hook.py"), target).unwrap();
        }
        for arg in setup["args"].as_array().unwrap() {
            let arg = arg.as_str().unwrap();
            extra_args.push(
                arg.replace("<HOME>", &ctx.home().display().to_string())
                    .replace("<PROJECT>", &ctx.project().display().to_string()),
            );
        }
    }
    // The capture harness's parent environment, where the capture recorded it.
    let captured_hooks =
        std::fs::read_to_string(dir.join("captured").join("hooks.json")).unwrap_or_default();
    let inherits_marker = captured_hooks.contains(INHERITED_MARKER);
    let oracle = ctx.home().join("oracle");
    let run_dir = oracle.join("captures").join(name);
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::copy(
        dir.parent().unwrap().join("hook.py"),
        oracle.join("hook.py"),
    )
    .unwrap();
    std::fs::copy(dir.join("behaviors.json"), run_dir.join("behaviors.json")).unwrap();
    // MCP captures: the project's MCP configuration points at dsh's own stdio test server
    // through `${ORACLE}` (fixtures/mcp/echo_server.py stands in for the capture's server;
    // fixtures/mcp/elicit_server.py is the one the `ev_elicit_*` captures ran).
    if dir.join("project").is_dir() {
        copy_tree(&dir.join("project"), &ctx.project());
        for server in ["echo_server.py", "elicit_server.py"] {
            std::fs::copy(
                repo_root().join("fixtures").join("mcp").join(server),
                oracle.join(server),
            )
            .unwrap();
        }
    }
    let requests_path = ctx.home().join("requests.jsonl");
    let mut command = ctx.dsh();
    command
        .env("ORACLE", &oracle)
        // SessionEnd hooks share a 1.5 s budget, as in Claude Code. The recorders here are
        // Python processes that can take longer than that just to start on a loaded 2-core
        // machine, and no capture tests the budget itself (the runner's own tests do), so
        // the budget is widened: what is compared is each hook's stdin and what it did.
        .env("CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS", "30000")
        .arg("replay")
        .arg(dir.join("fixture.json"))
        .args(["--session-id", SESSION_ID, "--requests-out"])
        .arg(&requests_path)
        .args(&extra_args);
    if inherits_marker {
        command.env("ORACLE_MARKER", INHERITED_MARKER);
    }
    let output = command.output().expect("dsh runs");
    assert!(
        output.status.success(),
        "dsh replay {name} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut records = match std::fs::read_to_string(run_dir.join("hooks.jsonl")) {
        Ok(text) => json_lines(&text),
        Err(_) => Vec::new(),
    };
    records.extend(stop_failure_shell_record(&run_dir));
    let requests = json_lines(&std::fs::read_to_string(&requests_path).unwrap());
    let log = json_lines(&String::from_utf8_lossy(&output.stdout));
    DshRun {
        ctx,
        oracle,
        records,
        requests,
        log,
    }
}

/// How one side's volatile strings become placeholders.
struct Normalizer {
    /// (text, placeholder), applied in order to every string.
    replacements: Vec<(String, String)>,
    prompt_ids: HashMap<String, String>,
    /// MessageDisplay's `turn_id` and `message_id`, by field.
    display_ids: HashMap<(String, String), String>,
}

impl Normalizer {
    fn captured(session_id: &str, agent_ids: &[String]) -> Self {
        let mut replacements = agent_id_replacements(agent_ids.iter().cloned());
        replacements.extend([
            (session_id.to_owned(), "<SESSION_ID>".to_owned()),
            // The user's instruction file (InstructionsLoaded), before the state-dir rule.
            (
                "<HOME>/.claude/CLAUDE.md".to_owned(),
                "<USER_CLAUDE_MD>".to_owned(),
            ),
            // Plugin data lives in Claude Code's own tree for both tools.
            ("<HOME>/.claude/plugins".to_owned(), "<PLUGINS>".to_owned()),
            ("<HOME>/.claude".to_owned(), "<STATE>".to_owned()),
        ]);
        Normalizer {
            replacements,
            prompt_ids: HashMap::new(),
            display_ids: HashMap::new(),
        }
    }

    fn dsh(run: &DshRun) -> Self {
        // Python names itself in its own errors by the path it was started as; under a version
        // manager's shim that is the resolved interpreter, not the `python3` Claude Code's host had.
        let python = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default();
        let project = run.ctx.project().display().to_string();
        let home = run.ctx.home().display().to_string();
        let slug: String = project
            .chars()
            .map(|c| if c == '/' || c == '.' { '-' } else { c })
            .collect();
        let tags = run
            .log
            .iter()
            .filter_map(|e| e.get("agent_id")?.as_str().map(str::to_owned));
        let mut replacements = agent_id_replacements(tags);
        replacements.extend(vec![
            (SESSION_ID.to_owned(), "<SESSION_ID>".to_owned()),
            (
                format!("{home}/.claude/CLAUDE.md"),
                "<USER_CLAUDE_MD>".to_owned(),
            ),
            (
                format!("{python}: can't open"),
                "python3: can't open".to_owned(),
            ),
            (format!("{home}/.claude/plugins"), "<PLUGINS>".to_owned()),
            (format!("{home}/.dsh/claude"), "<STATE>".to_owned()),
            (
                format!("/projects/{slug}/"),
                "/projects/<PROJECT_SLUG>/".to_owned(),
            ),
            (run.oracle.display().to_string(), "<ORACLE>".to_owned()),
            // `$ORACLE/…` only: `$ORACLE_X` is another variable (settings `env` probes).
            ("$ORACLE/".to_owned(), "<ORACLE>/".to_owned()),
            (project, "<PROJECT>".to_owned()),
            (home, "<HOME>".to_owned()),
        ]);
        Normalizer {
            replacements,
            prompt_ids: HashMap::new(),
            display_ids: HashMap::new(),
        }
    }

    fn text(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (from, to) in &self.replacements {
            text = text.replace(from.as_str(), to);
        }
        text
    }

    fn value(&mut self, value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(self.text(text)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => {
                let mut out = Map::new();
                for (key, field) in map {
                    let field = match key.as_str() {
                        "duration_ms" => json!("<MS>"),
                        "prompt_id" => {
                            let id = field.as_str().unwrap_or_default().to_owned();
                            let next = format!("<PROMPT_{}>", self.prompt_ids.len() + 1);
                            json!(self.prompt_ids.entry(id).or_insert(next).clone())
                        }
                        "turn_id" | "message_id" => {
                            let id = field.as_str().unwrap_or_default().to_owned();
                            let kind = if key == "turn_id" { "TURN" } else { "MESSAGE" };
                            let count = self
                                .display_ids
                                .keys()
                                .filter(|(field, _)| field == key)
                                .count();
                            let next = format!("<{kind}_{}>", count + 1);
                            json!(
                                self.display_ids
                                    .entry((key.clone(), id))
                                    .or_insert(next)
                                    .clone()
                            )
                        }
                        _ => self.value(field),
                    };
                    out.insert(key.clone(), field);
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }

    /// One hook run as compared: event, label, cwd, stdin (normalized) and the stdin framing.
    fn hook_record(&mut self, record: &Value) -> Value {
        let raw = record["stdin_raw"].as_str().unwrap_or_default();
        let parsed: Value = serde_json::from_str(raw).unwrap_or(Value::Null);
        let framing = if serde_json::to_string(&parsed).unwrap() + "\n" == raw {
            "compact JSON + LF".to_owned()
        } else {
            format!("other: {raw:?}")
        };
        let mut env = Map::new();
        let recorded = record["env"].as_object().cloned().unwrap_or_default();
        let mut names: Vec<&String> = recorded
            .keys()
            .filter(|name| {
                COMPARED_ENV.contains(&name.as_str()) || name.starts_with(COMPARED_ENV_PREFIX)
            })
            .collect();
        names.sort();
        for name in names {
            env.insert(name.clone(), self.value(&recorded[name]));
        }
        json!({
            "event": record["event"],
            "label": record["label"],
            "cwd": self.value(&record["cwd"]),
            "stdin_framing": framing,
            "stdin": self.value(&parsed),
            "env": env,
        })
    }
}

/// The hook runs of one side, normalized; runs of one event in a row form a set (parallel).
fn hook_view(records: &[Value], normalizer: &mut Normalizer) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut group: Vec<Value> = Vec::new();
    let flush = |group: &mut Vec<Value>, out: &mut Vec<Value>| {
        group.sort_by_key(|record| record.to_string());
        out.append(group);
    };
    for record in records {
        if record.get("note").is_some() {
            continue;
        }
        let normalized = normalizer.hook_record(record);
        if group
            .first()
            .is_some_and(|first| first["event"] != normalized["event"])
        {
            flush(&mut group, &mut out);
        }
        group.push(normalized);
    }
    flush(&mut group, &mut out);
    out
}

fn is_hook_paragraph(text: &str) -> bool {
    let re = regex::Regex::new(r"^[A-Za-z]+(:[A-Za-z_]+)? hook ").unwrap();
    re.is_match(text)
}

/// A paragraph Claude Code itself adds to a system message: its `# Environment` block (or the
/// digest's elision of it) and the date line.
fn is_claude_code_paragraph(paragraph: &str) -> bool {
    paragraph.starts_with("# ")
        || paragraph.starts_with("<Claude Code ")
        || paragraph.starts_with("Today's date is ")
        // A subagent's first system message lists Claude Code's deferred tools after the
        // SubagentStart context (`sub_start_ctx`).
        || paragraph.starts_with("The following deferred tools are now available")
}

/// What [`hook_texts`] does with paragraphs before the first hook label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leading {
    Drop,
    Keep,
}

/// The hook texts in one message, byte-exact: a text starts at a paragraph that opens with a
/// hook label and runs until the next such paragraph, so a hook text's own blank lines and
/// trailing newlines (`nl_post_ctx_newlines`) stay inside it. Paragraphs before the first hook
/// label are not hook texts (Claude Code's own reminders), nor are Claude Code's own blocks and
/// what follows them up to the next hook label, unless `leading` says they are (dsh's
/// system messages after its prompt are all hook texts, so none is dropped unseen).
fn hook_texts(text: &str, leading: Leading) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // Whether the paragraphs read now continue the last hook text.
    let mut open = false;
    for paragraph in text.split("\n\n") {
        if is_hook_paragraph(paragraph) || (out.is_empty() && leading == Leading::Keep) {
            out.push(paragraph.to_owned());
            open = true;
        } else if is_claude_code_paragraph(paragraph) {
            // Claude Code's own blocks (environment, date) end a hook text; the next hook
            // label opens another.
            open = false;
        } else if open && let Some(current) = out.last_mut() {
            current.push_str("\n\n");
            current.push_str(paragraph);
        }
    }
    out
}

/// Segments between assistant messages, as the model saw them.
#[derive(Default)]
struct Segment {
    user: Vec<Value>,
    tool_results: Vec<Value>,
    hook_texts: Vec<Value>,
}

impl Segment {
    fn is_empty(&self) -> bool {
        self.user.is_empty() && self.tool_results.is_empty() && self.hook_texts.is_empty()
    }

    fn flush(&mut self, out: &mut Vec<Value>) {
        if !self.is_empty() {
            out.push(json!({
                "user": std::mem::take(&mut self.user),
                "tool_results": std::mem::take(&mut self.tool_results),
                "hook_texts": std::mem::take(&mut self.hook_texts),
            }));
        }
    }
}

fn dsh_tool_name(claude: &str) -> String {
    match claude {
        "Bash" => "bash",
        "Read" => "read",
        "Write" => "write",
        "Edit" => "edit",
        "Glob" => "glob",
        "Grep" => "grep",
        "Agent" => "agent",
        other => other,
    }
    .to_owned()
}

fn block_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// A captured tool result's text: its content blocks' texts one per line, as dsh's `content`
/// shows an MCP result's blocks (the blocks themselves are compared apart, `result_blocks`;
/// `mcp_updated_output_blocks`).
fn result_text(content: &Value) -> String {
    match content {
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => block_text(other),
    }
}

/// An MCP result given as content blocks gets `blocks`: their types and texts (Claude Code's
/// reminder blocks left out). A result given as one string has none.
fn with_blocks(result: &mut Value, content: &Value) {
    if let Value::Array(blocks) = content {
        result["blocks"] = blocks
            .iter()
            .filter(|block| {
                !block["text"]
                    .as_str()
                    .is_some_and(|text| text.starts_with("<system-reminder>"))
            })
            .map(|block| json!([block["type"], block["text"]]))
            .collect();
    }
}

fn is_elided(text: &str) -> bool {
    text.starts_with("<Claude Code ") && text.ends_with(" elided>")
}

const REMINDER_OPEN: &str = "<system-reminder>\n";
const REMINDER_CLOSE: &str = "\n</system-reminder>";

/// Splits the legacy (`--model claude-sonnet-4-5`) framing: `<system-reminder>` blocks inside a
/// text. Returns the text without the blocks and the blocks' inner texts.
fn split_reminders(text: &str) -> (String, Vec<String>) {
    let mut rest = String::new();
    let mut inner = Vec::new();
    let mut remaining = text;
    while let Some(start) = remaining.find(REMINDER_OPEN) {
        let Some(len) = remaining[start..].find(REMINDER_CLOSE) else {
            break;
        };
        rest.push_str(&remaining[..start]);
        inner.push(remaining[start + REMINDER_OPEN.len()..start + len].to_owned());
        remaining = &remaining[start + len + REMINDER_CLOSE.len()..];
    }
    rest.push_str(remaining);
    if inner.is_empty() {
        return (rest, inner);
    }
    // The blocks are appended after a blank line.
    (rest.trim_end_matches('\n').to_owned(), inner)
}

/// A captured user text in either framing: the text itself, or hook texts found in reminders
/// (Claude Code's own reminders dropped). A whole-text reminder holding a Stop hook's
/// additional context stays a user text: Claude Code sends it with the wrapper in both forms
/// (`j4`), and so does dsh.
fn captured_user_text(text: &str, segment: &mut Segment, normalizer: &Normalizer) {
    if text.starts_with("<system-reminder>\nStop hook additional context:")
        || text.starts_with("<system-reminder>\nSubagentStop hook additional context:")
    {
        segment.user.push(json!(normalizer.text(text)));
        return;
    }
    let (rest, reminders) = split_reminders(text);
    for reminder in reminders {
        for hook_text in hook_texts(&reminder, Leading::Drop) {
            segment.hook_texts.push(json!(normalizer.text(&hook_text)));
        }
    }
    if !rest.is_empty() && !is_elided(&rest) {
        segment.user.push(json!(normalizer.text(&rest)));
    }
}

/// The model-facing view of one captured request (Anthropic Messages format).
fn captured_request_view(messages: &[Value], normalizer: &mut Normalizer) -> Vec<Value> {
    let mut out = Vec::new();
    let mut segment = Segment::default();
    // MCP calls: their results' blocks are compared (`with_blocks`).
    let mut mcp_calls: Vec<String> = Vec::new();
    for message in messages {
        match message["role"].as_str().unwrap_or_default() {
            "assistant" => {
                segment.flush(&mut out);
                let blocks = message["content"].as_array().cloned().unwrap_or_default();
                let text: String = blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .collect();
                mcp_calls.extend(
                    blocks
                        .iter()
                        .filter(|b| b["type"] == "tool_use")
                        .filter(|b| b["name"].as_str().is_some_and(|n| n.starts_with("mcp__")))
                        .filter_map(|b| b["id"].as_str().map(str::to_owned)),
                );
                let calls: Vec<Value> = blocks
                    .iter()
                    .filter(|b| b["type"] == "tool_use")
                    .map(|b| {
                        json!({
                            "id": b["id"],
                            "name": dsh_tool_name(b["name"].as_str().unwrap_or_default()),
                            "input": normalizer.value(&b["input"]),
                        })
                    })
                    .collect();
                out.push(json!({"assistant": text, "tool_calls": calls}));
            }
            "user" => match &message["content"] {
                Value::String(text) => captured_user_text(text, &mut segment, normalizer),
                Value::Array(blocks) => {
                    for block in blocks {
                        match block["type"].as_str().unwrap_or_default() {
                            "text" => {
                                let text = block["text"].as_str().unwrap_or_default();
                                captured_user_text(text, &mut segment, normalizer);
                            }
                            "tool_result" => {
                                let (content, reminders) =
                                    split_reminders(&result_text(&block["content"]));
                                let mut result = json!({
                                    "id": block["tool_use_id"],
                                    "is_error": block["is_error"].as_bool().unwrap_or(false),
                                    "content": normalizer.text(&content),
                                });
                                if mcp_calls.iter().any(|id| block["tool_use_id"] == *id) {
                                    with_blocks(&mut result, &block["content"]);
                                }
                                segment.tool_results.push(result);
                                for reminder in reminders {
                                    if is_hook_paragraph(&reminder) {
                                        segment.hook_texts.push(json!(normalizer.text(&reminder)));
                                    }
                                }
                            }
                            other => panic!("unexpected user block {other}"),
                        }
                    }
                }
                other => panic!("unexpected user content {other}"),
            },
            "system" => {
                let text = block_text(&message["content"]);
                for hook_text in hook_texts(&text, Leading::Drop) {
                    segment.hook_texts.push(json!(normalizer.text(&hook_text)));
                }
            }
            other => panic!("unexpected role {other}"),
        }
    }
    segment.flush(&mut out);
    out
}

/// The model-facing view of one dsh request (contract §4), with `is_error` from the log.
fn dsh_request_view(
    messages: &[Value],
    errors: &HashMap<String, bool>,
    normalizer: &mut Normalizer,
) -> Vec<Value> {
    let mut out = Vec::new();
    let mut segment = Segment::default();
    // The first message is dsh's own system prompt.
    assert_eq!(messages[0]["role"], "system");
    for message in &messages[1..] {
        let content = message["content"].as_str().unwrap_or_default();
        match message["role"].as_str().unwrap_or_default() {
            "assistant" => {
                segment.flush(&mut out);
                let calls: Vec<Value> = message["tool_calls"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call["id"],
                            "name": call["name"],
                            "input": normalizer.value(&call["arguments"]),
                        })
                    })
                    .collect();
                out.push(json!({"assistant": content, "tool_calls": calls}));
            }
            "user" => segment.user.push(json!(normalizer.text(content))),
            "tool" => {
                let id = message["tool_call_id"].as_str().unwrap_or_default();
                let mut result = json!({
                    "id": id,
                    "is_error": errors.get(id).copied().unwrap_or(false),
                    "content": normalizer.text(content),
                });
                with_blocks(&mut result, &message["content_blocks"]);
                segment.tool_results.push(result);
            }
            "system" => {
                // Every system message dsh sends after its prompt is hook text.
                for hook_text in hook_texts(content, Leading::Keep) {
                    segment.hook_texts.push(json!(normalizer.text(&hook_text)));
                }
            }
            other => panic!("unexpected role {other}"),
        }
    }
    segment.flush(&mut out);
    out
}

/// Claude Code's `hook_response` lines as `(event, result, stdout, stderr)`, sorted. Claude Code
/// reports a killed hook (timeout, an async hook still running at exit) as `cancelled` with
/// exit code 1 and discards its output; for an exit-0 hook whose JSON failed validation it
/// reports its own validation message as `stderr` (`l4`: the hook itself wrote none, which is
/// what is compared). Its stream ends with the result line, so SessionEnd (and a resumed run's
/// hooks) never appear.
fn captured_hook_outputs(lines: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = lines
        .iter()
        .map(|line| {
            let stderr = line["stderr"].as_str().unwrap_or_default();
            if line["outcome"] == "cancelled" {
                json!([line["hook_event"], "cancelled", "", ""])
            } else if line["outcome"] == "error"
                && line["exit_code"] == 0
                && stderr.starts_with("Hook JSON output validation failed")
            {
                json!([line["hook_event"], 0, line["stdout"], ""])
            } else {
                json!([
                    line["hook_event"],
                    line["exit_code"],
                    line["stdout"],
                    line["stderr"]
                ])
            }
        })
        .collect();
    out.sort_by_key(Value::to_string);
    out
}

/// dsh's `hook/result` events in the same shape: the first turn (and SessionStart), no
/// SessionEnd. A timed-out hook and a detached (async) one count as `cancelled`.
fn dsh_hook_outputs(log: &[Value], normalizer: &Normalizer, every_turn: bool) -> Vec<Value> {
    let invoked: HashMap<&str, &Value> = log
        .iter()
        .filter(|e| e["type"] == "hook/invoked")
        .map(|e| (e["invocation_id"].as_str().unwrap_or_default(), e))
        .collect();
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<Value> = Vec::new();
    for result in log.iter().filter(|e| e["type"] == "hook/result") {
        let id = result["invocation_id"].as_str().unwrap_or_default();
        // An async hook is recorded twice (detached, then finished): its first record counts.
        if !seen.insert(id) {
            continue;
        }
        let invocation = invoked[id];
        let event = invocation["event"].as_str().unwrap_or_default();
        let first_turn = every_turn || invocation.get("turn").is_none_or(|turn| turn == 1);
        // StopFailure hooks are not awaited and Claude Code's stream ends with its result line
        // before they report, like SessionEnd's. Claude Code's stream has no `hook_response`
        // line for PreCompact/PostCompact (cmp_auto) or InstructionsLoaded
        // (`misc_instructions_loaded`); their outcomes are compared through the hooks' own
        // records.
        // Nor for CwdChanged (`ev_cwd_changed`), ConfigChange (`ev_config_change*`),
        // FileChanged (`ev_file_changed*`), Elicitation, ElicitationResult or the
        // Notification after them (`ev_elicit_*`).
        if event == "SessionEnd"
            || event == "Elicitation"
            || event == "ElicitationResult"
            || event == "Notification"
            || event == "StopFailure"
            || event == "PreCompact"
            || event == "PostCompact"
            || event == "InstructionsLoaded"
            || event == "CwdChanged"
            || event == "ConfigChange"
            || event == "FileChanged"
            || !first_turn
        {
            continue;
        }
        let cancelled = result["timed_out"] == true || result["outcome"] != "exited";
        out.push(if cancelled {
            json!([event, "cancelled", "", ""])
        } else {
            json!([
                event,
                result["exit_code"],
                normalizer.text(result["stdout"].as_str().unwrap_or_default()),
                normalizer.text(result["stderr"].as_str().unwrap_or_default()),
            ])
        });
    }
    out.sort_by_key(Value::to_string);
    out
}

/// dsh's `turn/end` reason for the way Claude Code's (first) run ended.
fn expected_turn_end(result: &Value) -> &'static str {
    match result["terminal_reason"].as_str() {
        Some("completed") => "completed",
        Some("hook_stopped" | "tool_deferred" | "stop_hook_prevented") => "stopped",
        Some("api_error") => "error",
        Some(other) => panic!("unmapped terminal_reason {other}"),
        None if result["num_turns"] == 0
            && result["result"]
                .as_str()
                .is_some_and(|r| r.starts_with("UserPromptSubmit operation blocked by hook")) =>
        {
            "rejected"
        }
        // A blocked slash-command expansion is a zero-step rejected turn too.
        None if result["num_turns"] == 0
            && result["result"].as_str().is_some_and(|r| {
                r.starts_with("UserPromptExpansion operation blocked by hook")
            }) =>
        {
            "rejected"
        }
        // A prompt a UserPromptSubmit `continue: false` stopped: no request, turn `stopped`.
        None if result["num_turns"] == 0
            && result["result"]
                .as_str()
                .is_some_and(|r| r.starts_with("Operation stopped by hook: ")) =>
        {
            "stopped"
        }
        None => panic!("unmapped result {result}"),
    }
}

fn segments_mut(model: &mut [Value]) -> impl Iterator<Item = &mut Value> {
    model
        .iter_mut()
        .flat_map(|request| request.as_array_mut().unwrap().iter_mut())
}

/// Sorts the tool results of every message by call id (`Known::ToolResultOrder`).
fn sort_tool_results(model: &mut [Value]) {
    for segment in segments_mut(model) {
        if let Some(results) = segment
            .get_mut("tool_results")
            .and_then(Value::as_array_mut)
        {
            results.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
        }
    }
}

fn apply_known(known: &[Known], hooks: &mut [Value], model: &mut [Value]) {
    for difference in known {
        match difference {
            Known::ToolResultOrder => sort_tool_results(model),
            Known::ToolResultText { call, dsh } => {
                for record in hooks.iter_mut() {
                    let calls = record["stdin"]
                        .get_mut("tool_calls")
                        .and_then(Value::as_array_mut);
                    for batch_call in calls.into_iter().flatten() {
                        if batch_call["tool_use_id"] == *call {
                            batch_call["tool_response"] = json!(dsh);
                        }
                    }
                }
                for segment in segments_mut(model) {
                    let results = segment
                        .get_mut("tool_results")
                        .and_then(Value::as_array_mut);
                    for result in results.into_iter().flatten() {
                        if result["id"] == *call {
                            result["content"] = json!(dsh);
                        }
                    }
                }
            }
            Known::EditDefaultsInHistory => {
                for segment in segments_mut(model) {
                    let calls = segment.get_mut("tool_calls").and_then(Value::as_array_mut);
                    for call in calls.into_iter().flatten() {
                        if call["name"] == "edit" && call["input"]["replace_all"] == false {
                            call["input"].as_object_mut().unwrap().remove("replace_all");
                        }
                    }
                }
            }
            Known::AsyncHookRace => hooks.sort_by_key(Value::to_string),
            Known::UnrecordedRuns(_) | Known::KilledAtTeardown(_) | Known::InitOnly => {}
            Known::SdkModelSwitch => {
                for record in hooks.iter_mut() {
                    if record["stdin"]["source"] == "sdk" {
                        record["stdin"]["source"] = json!("command");
                    }
                }
                // Claude Code records the switch in the conversation as a local command's
                // output; dsh's `model/switched` is not model-facing.
                for segment in segments_mut(model) {
                    if let Some(user) = segment.get_mut("user").and_then(Value::as_array_mut) {
                        user.retain(|text| {
                            let text = text.as_str().unwrap_or_default();
                            ![
                                "<local-command-caveat>",
                                "<command-name>",
                                "<local-command-std",
                            ]
                            .iter()
                            .any(|prefix| text.starts_with(prefix))
                        });
                    }
                }
            }
            Known::EnvNotCaptured(label) => {
                for record in hooks.iter_mut() {
                    if record["label"] == *label {
                        record["env"] = json!({});
                    }
                }
            }
            Known::KeptSettingsEnv { label, name, value } => {
                for record in hooks.iter_mut() {
                    if record["label"] == *label {
                        record["env"][*name] = json!(value);
                    }
                }
            }
            Known::OneRequestBeforeFailure => {}
            Known::ResumedFollowUps => {
                let last_end = hooks.iter().rposition(|r| r["event"] == "SessionEnd");
                let kept: Vec<Value> = hooks
                    .iter()
                    .enumerate()
                    .filter(|(index, r)| {
                        let resumed =
                            r["event"] == "SessionStart" && r["stdin"]["source"] == "resume";
                        let early_end = r["event"] == "SessionEnd" && Some(*index) != last_end;
                        !resumed && !early_end
                    })
                    .map(|(_, r)| r.clone())
                    .collect();
                // `hooks` is a slice: keep the survivors in front, then blank the rest.
                let len = kept.len();
                for (slot, record) in hooks.iter_mut().zip(kept) {
                    *slot = record;
                }
                for slot in hooks.iter_mut().skip(len) {
                    *slot = Value::Null;
                }
            }
            Known::CompactionTexts => compaction_texts(model, Side::Captured),
            Known::ModelName => {
                for record in hooks.iter_mut() {
                    for field in ["model", "from_model"] {
                        if record["stdin"][field] == "claude-opus-5-5" {
                            record["stdin"][field] = json!("scripted");
                        }
                    }
                }
            }
            Known::ElidedWriteContent => elide_write_content(model),
            Known::ElidedCompactContext(text) => {
                for request in model.iter_mut() {
                    let segments = request.as_array_mut().unwrap();
                    let first = segments.first_mut();
                    if let Some(first) = first
                        && first["user"]
                            .as_array()
                            .and_then(|u| u.first())
                            .and_then(Value::as_str)
                            .is_some_and(|t| t.starts_with("<summary:"))
                    {
                        first["hook_texts"]
                            .as_array_mut()
                            .unwrap()
                            .insert(0, json!(text));
                    }
                }
            }
            Known::SlashCommandMarkup => {
                for segment in segments_mut(model) {
                    if let Some(user) = segment.get_mut("user").and_then(Value::as_array_mut) {
                        user.retain(|text| {
                            !text
                                .as_str()
                                .is_some_and(|t| t.starts_with("<command-message>"))
                        });
                    }
                }
            }
            Known::AgentToolResponse => reduce_agent_responses(hooks),
            Known::MergedUserTextNewline => {
                for segment in segments_mut(model) {
                    if let Some(user) = segment.get_mut("user").and_then(Value::as_array_mut) {
                        let followed = user.len().saturating_sub(1);
                        for text in user.iter_mut().take(followed) {
                            if let Some(trimmed) = text.as_str().and_then(|t| t.strip_suffix('\n'))
                            {
                                *text = json!(trimmed);
                            }
                        }
                    }
                }
            }
            Known::RetryNoteAsContext => {
                let note =
                    json!("The PermissionDenied hook indicated you may retry this tool call.");
                for segment in segments_mut(model) {
                    let moved = segment
                        .get_mut("user")
                        .and_then(Value::as_array_mut)
                        .map(|user| {
                            let before = user.len();
                            user.retain(|text| *text != note);
                            before - user.len()
                        })
                        .unwrap_or(0);
                    if let Some(texts) = segment.get_mut("hook_texts").and_then(Value::as_array_mut)
                    {
                        texts.extend(std::iter::repeat_n(note.clone(), moved));
                    }
                }
            }
            Known::DefaultPermissionMode => {
                for record in hooks.iter_mut() {
                    if record["stdin"]["permission_mode"] == "default" {
                        record["stdin"]["permission_mode"] = json!("bypassPermissions");
                    }
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Captured,
    Dsh,
}

/// The text between `start` and `end` (or the end of `text`), when `start` occurs.
fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = text.find(start)? + start.len();
    let rest = &text[from..];
    Some(rest.find(end).map_or(rest, |to| &rest[..to]))
}

/// [`Known::CompactionTexts`] on one side's model view.
fn compaction_texts(model: &mut [Value], side: Side) {
    let (instructions, additional, additional_end, summary_open, summary_start, summary_end) =
        match side {
            Side::Captured => (
                "CRITICAL: Respond with TEXT ONLY",
                "Additional Instructions:\n",
                "\n\nREMINDER:",
                "This session is being continued from a previous conversation",
                "Summary:\n",
                "\n\nIf you need specific details",
            ),
            Side::Dsh => (
                "Stop the task for a moment: the conversation above is about to be replaced",
                "Additional instructions:\n",
                "\n\nRemember:",
                "Earlier parts of this conversation were compacted",
                "Summary of what happened before:\n\n",
                "\n\nThe messages after this one",
            ),
        };
    let command_record = |text: &str| {
        side == Side::Captured
            && [
                "<local-command-caveat>",
                "<command-name>",
                "<local-command-std",
            ]
            .iter()
            .any(|prefix| text.starts_with(prefix))
    };
    for segment in segments_mut(model) {
        let Some(user) = segment.get_mut("user").and_then(Value::as_array_mut) else {
            continue;
        };
        user.retain(|text| !command_record(text.as_str().unwrap_or_default()));
        for text in user.iter_mut() {
            let value = text.as_str().unwrap_or_default().to_owned();
            if value.starts_with(instructions) {
                *text = match between(&value, additional, additional_end) {
                    Some(extra) => json!(format!("<summary instructions; additional: {extra}>")),
                    None => json!("<summary instructions>"),
                };
            } else if value.starts_with(summary_open) {
                let summary = between(&value, summary_start, summary_end).unwrap_or("?");
                *text = json!(format!("<summary: {}>", summary.trim()));
            }
        }
    }
}

/// [`Known::ElidedWriteContent`] on one side's model view.
fn elide_write_content(model: &mut [Value]) {
    for segment in segments_mut(model) {
        let calls = segment.get_mut("tool_calls").and_then(Value::as_array_mut);
        for call in calls.into_iter().flatten() {
            if call["name"] == "write" && call["input"]["content"].is_string() {
                call["input"]["content"] = json!("<elided>");
            }
        }
    }
}

/// The documented differences that need dsh's side normalized the same way.
fn apply_known_dsh(known: &[Known], model: &mut [Value]) {
    for difference in known {
        match difference {
            Known::CompactionTexts => compaction_texts(model, Side::Dsh),
            Known::ElidedWriteContent => elide_write_content(model),
            Known::DefaultPermissionMode
            | Known::ToolResultText { .. }
            | Known::EditDefaultsInHistory
            | Known::AsyncHookRace
            | Known::UnrecordedRuns(_)
            | Known::ResumedFollowUps
            | Known::ModelName
            | Known::ElidedCompactContext(_)
            | Known::OneRequestBeforeFailure
            | Known::KilledAtTeardown(_)
            | Known::EnvNotCaptured(_)
            | Known::KeptSettingsEnv { .. }
            | Known::SlashCommandMarkup
            | Known::AgentToolResponse
            | Known::RetryNoteAsContext
            | Known::MergedUserTextNewline
            | Known::InitOnly
            | Known::SdkModelSwitch => {}
            Known::ToolResultOrder => sort_tool_results(model),
        }
    }
}

/// Runs one scenario end to end and compares it with its capture.
fn conformance(name: &str, known: &[Known]) {
    let dir = scenario_dir(name);
    let captured_records = read_json(&dir.join("captured").join("hooks.json"));
    let captured_records = captured_records.as_array().unwrap().clone();
    let captured_requests = read_json(&dir.join("captured").join("model.json"));
    let captured_result = read_json(&dir.join("captured").join("result.json"));
    let captured_session = captured_records
        .iter()
        .find_map(|r| {
            serde_json::from_str::<Value>(r["stdin_raw"].as_str()?)
                .ok()?
                .get("session_id")?
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "<no hook ran>".to_owned());
    let captured_agents = captured_agent_ids(&captured_records);

    let run = run_dsh(name);

    // 1. Hook stdin payloads.
    let mut captured_norm = Normalizer::captured(&captured_session, &captured_agents);
    let mut expected_hooks = hook_view(&captured_records, &mut captured_norm);
    apply_known(known, &mut expected_hooks, &mut []);
    expected_hooks.retain(|record| !record.is_null());
    let mut dsh_norm = Normalizer::dsh(&run);
    let killed: Vec<&str> = known
        .iter()
        .filter_map(|k| match k {
            Known::KilledAtTeardown(label) => Some(*label),
            _ => None,
        })
        .collect();
    let compared_records: Vec<Value> = run
        .records
        .iter()
        .filter(|r| !killed.iter().any(|label| r["label"] == *label))
        .cloned()
        .collect();
    let mut actual_hooks = hook_view(&compared_records, &mut dsh_norm);
    apply_known(
        &known
            .iter()
            .copied()
            .filter(|k| matches!(k, Known::EnvNotCaptured(_)))
            .collect::<Vec<_>>(),
        &mut actual_hooks,
        &mut [],
    );
    if known.iter().any(|k| matches!(k, Known::AsyncHookRace)) {
        actual_hooks.sort_by_key(Value::to_string);
    }
    if known.iter().any(|k| matches!(k, Known::AgentToolResponse)) {
        reduce_agent_responses(&mut actual_hooks);
    }
    assert_eq!(
        expected_hooks, actual_hooks,
        "{name}: hook runs differ (left: Claude Code, right: dsh)"
    );

    // The log's hook/invoked inputs are exactly what the hooks read on stdin.
    let mut logged: Vec<String> = run
        .log
        .iter()
        .filter(|e| e["type"] == "hook/invoked")
        .map(|e| e["input"].to_string())
        .collect();
    let mut received: Vec<String> = run
        .records
        .iter()
        .filter(|r| r.get("note").is_none())
        .map(|r| {
            serde_json::from_str::<Value>(r["stdin_raw"].as_str().unwrap())
                .unwrap()
                .to_string()
        })
        .collect();
    logged.sort();
    received.sort();
    let unrecorded = known
        .iter()
        .find_map(|k| match k {
            Known::UnrecordedRuns(n) => Some(*n),
            _ => None,
        })
        .unwrap_or(0);
    let mut unmatched = logged.clone();
    for input in &received {
        let at = unmatched.iter().position(|l| l == input);
        assert!(
            at.is_some(),
            "{name}: a hook read {input} but no hook/invoked has it"
        );
        unmatched.remove(at.unwrap());
    }
    // A run killed at teardown may have recorded or not (`Known::KilledAtTeardown`).
    assert!(
        (unrecorded..=unrecorded + killed.len()).contains(&unmatched.len()),
        "{name}: hook/invoked inputs vs stdin: {unmatched:?} never reached a hook"
    );

    // What each hook process did (exit code, stdout, stderr), as Claude Code itself reported it
    // in its stream: the scripted hooks must reproduce the captured hooks exactly.
    let captured_outputs = read_json(&dir.join("captured").join("hook_outputs.json"));
    let expected_outputs = captured_hook_outputs(captured_outputs.as_array().unwrap());
    let every_turn = known.iter().any(|k| matches!(k, Known::SdkModelSwitch));
    let mut actual_outputs = dsh_hook_outputs(&run.log, &Normalizer::dsh(&run), every_turn);
    let init_only = known.iter().any(|k| matches!(k, Known::InitOnly));
    if init_only {
        actual_outputs.clear();
    }
    assert_eq!(
        expected_outputs, actual_outputs,
        "{name}: hook process outcomes differ (left: Claude Code, right: dsh)"
    );

    // 2. Model-facing outcome.
    let mut captured_norm = Normalizer::captured(&captured_session, &captured_agents);
    let mut expected_model: Vec<Value> = captured_requests
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            Value::Array(captured_request_view(
                r["messages"].as_array().unwrap(),
                &mut captured_norm,
            ))
        })
        .collect();
    apply_known(known, &mut [], &mut expected_model);
    if known
        .iter()
        .any(|k| matches!(k, Known::OneRequestBeforeFailure))
    {
        expected_model.truncate(1);
    }
    let errors: HashMap<String, bool> = run
        .log
        .iter()
        .filter(|e| e["type"] == "tool/result")
        .map(|e| {
            (
                e["call_id"].as_str().unwrap().to_owned(),
                e["is_error"].as_bool().unwrap(),
            )
        })
        .collect();
    let mut dsh_norm = Normalizer::dsh(&run);
    let mut actual_model: Vec<Value> = run
        .requests
        .iter()
        .map(|r| {
            Value::Array(dsh_request_view(
                r["messages"].as_array().unwrap(),
                &errors,
                &mut dsh_norm,
            ))
        })
        .collect();
    apply_known_dsh(known, &mut actual_model);
    assert_eq!(
        expected_model, actual_model,
        "{name}: model-facing requests differ (left: Claude Code, right: dsh)"
    );

    if name == "v_shell_semantics" {
        // The capture does not keep argv; Claude Code's observed behaviour is that `$VAR`, `$((…))`, `cd` and pipes
        // work and `$0` is `/bin/sh`. The command is
        // `cd / && python3 {HOOK} shell {RUN} "$CLAUDE_PROJECT_DIR" $((1+2)) "$0" | cat`.
        let mut normalizer = Normalizer::dsh(&run);
        assert_eq!(
            normalizer.value(&run.records[0]["argv"]),
            json!([
                "shell",
                "<ORACLE>/captures/v_shell_semantics",
                "<PROJECT>",
                "3",
                "/bin/sh"
            ])
        );
    }

    if name == "pl_root_probe" {
        // docs/sources.md: `${CLAUDE_PLUGIN_ROOT}` is not substituted in the command text;
        // the shell expands the variable, so single quotes keep it literal. (The capture does
        // not keep argv; this is what the addendum states.)
        let mut normalizer = Normalizer::dsh(&run);
        let quoted = run
            .records
            .iter()
            .find(|r| r["label"] == "pl_quoted")
            .expect("pl_quoted ran");
        assert_eq!(
            normalizer.value(&quoted["argv"]),
            json!([
                "pl_quoted",
                "<ORACLE>/captures/pl_root_probe",
                "${CLAUDE_PLUGIN_ROOT}",
                "<HOME>/src/oracle-mkt/plugins/guard",
                "$CLAUDE_PLUGIN_ROOT",
                "${CLAUDE_PROJECT_DIR}",
                "${CLAUDE_PLUGIN_DATA}"
            ])
        );
    }
    if name == "misc_instructions_loaded" {
        // The instruction files themselves reach the model in dsh's system prompt (Claude Code
        // sends them in a `<system-reminder>` the view drops); path-scoped rules and nested
        // CLAUDE.md files are not loaded at start in either tool.
        let system = run.requests[0]["messages"][0]["content"]
            .as_str()
            .unwrap_or_default();
        for text in [
            "USER-CLAUDE-MD",
            "PROJECT-CLAUDE-MD",
            "RULE-ALWAYS",
            "LOCAL-CLAUDE-MD",
        ] {
            assert!(system.contains(text), "{text} not in the system prompt");
        }
        for text in ["RULE-PY-ONLY", "NESTED-CLAUDE-MD"] {
            assert!(!system.contains(text), "{text} in the system prompt");
        }
    }
    if name == "pl_basic" {
        // The data directory exists by the time the hook runs, so a hook can write there.
        let data = run.ctx.home().join(".claude/plugins/data/guard-oracle-mkt");
        assert!(data.is_dir(), "{} was not created", data.display());
    }

    if name.starts_with("ev_model_sdk") {
        // The switch happened only where no PreModelSwitch hook refused it (Claude Code's
        // `set_model` answered `blocked_by_hook` in `_deny` and `_exit2`), and the requests
        // after it name the model it switched to.
        let switched: Vec<&Value> = run
            .log
            .iter()
            .filter(|e| e["type"] == "model/switched")
            .collect();
        let last_model = run.requests.last().map(|r| r["model"].clone());
        if name == "ev_model_sdk" {
            assert_eq!(switched.len(), 1, "{name}: one model/switched");
            assert_eq!(switched[0]["to"], "claude-sonnet-4-5");
            assert_eq!(last_model, Some(json!("claude-sonnet-4-5")));
        } else {
            assert!(switched.is_empty(), "{name}: a refused switch was recorded");
            assert_ne!(last_model, Some(json!("claude-sonnet-4-5")));
        }
    }

    if name.starts_with("ev_elicit") {
        // What the MCP server got back for its `elicitation/create`: the same answer Claude
        // Code sent (fixtures/claude/captures/<name>/mcp.json holds its side).
        let answers = |lines: Vec<Value>| -> Vec<Value> {
            lines
                .into_iter()
                .filter(|line| line["dir"] == "in" && line["msg"]["id"] == 1001)
                .map(|line| line["msg"]["result"].clone())
                .collect()
        };
        let captured: Vec<Value> = serde_json::from_str(
            &std::fs::read_to_string(
                repo_root()
                    .join("fixtures/claude/captures")
                    .join(name)
                    .join("mcp.json"),
            )
            .unwrap(),
        )
        .unwrap();
        let log = run
            .ctx
            .home()
            .join("oracle/captures")
            .join(name)
            .join("mcp_elicit.jsonl");
        let ours: Vec<Value> = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(
            answers(ours),
            answers(captured),
            "{name}: the server's answer"
        );
    }

    if name == "ev_message_display_replace" {
        // Claude Code's result is the text the MessageDisplay hook had shown instead; dsh
        // records the replacement for whoever presents the session.
        let shown = run
            .log
            .iter()
            .find(|e| e["type"] == "seam/note" && e["kind"] == "display_replaced")
            .expect("a display_replaced note");
        assert_eq!(shown["detail"]["text"], captured_result["result"]);
        assert_eq!(shown["seam"], "message-display");
    }

    // 3. How the first turn ended.
    if init_only {
        assert!(
            !run.log.iter().any(|e| e["type"] == "turn/start"),
            "{name}: --init-only opened a turn"
        );
    } else {
        let first_end = run
            .log
            .iter()
            .find(|e| e["type"] == "turn/end")
            .expect("a turn/end");
        assert_eq!(
            expected_turn_end(&captured_result),
            first_end["reason"],
            "{name}: first turn's ending"
        );
    }

    insta::assert_snapshot!(
        name,
        report(&run, &actual_hooks, &actual_outputs, &actual_model)
    );
}

/// A readable record of what dsh did in a scenario (the snapshot). Hook stdin is shown without
/// the fields every payload carries (`session_id`, `transcript_path`, `cwd`; compared above),
/// and each model request only with what it added to the previous one.
fn report(run: &DshRun, hooks: &[Value], outputs: &[Value], model: &[Value]) -> String {
    let mut normalizer = Normalizer::dsh(run);
    let mut out = String::from("## hook stdin (normalized; common fields omitted)\n");
    for hook in hooks {
        let mut stdin = hook["stdin"].clone();
        if let Some(map) = stdin.as_object_mut() {
            for common in ["session_id", "transcript_path", "cwd", "hook_event_name"] {
                map.shift_remove(common);
            }
        }
        out.push_str(&format!(
            "{} [{}] {}\n",
            hook["event"].as_str().unwrap_or_default(),
            hook["label"].as_str().unwrap_or_default(),
            stdin
        ));
    }
    out.push_str("## hook processes (event, exit, stdout, stderr)\n");
    for output in outputs {
        out.push_str(&format!("{output}\n"));
    }
    out.push_str("## model requests (what each added)\n");
    let mut previous: &[Value] = &[];
    for (index, request) in model.iter().enumerate() {
        let segments = request.as_array().map(Vec::as_slice).unwrap_or_default();
        let added = if segments.starts_with(previous) {
            &segments[previous.len()..]
        } else {
            out.push_str(&format!("[{index}] (history rewritten)\n"));
            segments
        };
        for segment in added {
            out.push_str(&format!("[{index}] {segment}\n"));
        }
        previous = segments;
    }
    out.push_str("## turn ends, blocked prompts\n");
    for event in &run.log {
        match event["type"].as_str().unwrap_or_default() {
            "turn/end" => out.push_str(&format!(
                "turn {} {} {}\n",
                event["turn"],
                event["reason"],
                normalizer.value(&event["message"])
            )),
            "prompt/blocked" => out.push_str(&format!(
                "blocked {}: {}\n",
                event["content"],
                normalizer.value(&event["reason"])
            )),
            _ => {}
        }
    }
    out
}

macro_rules! scenarios {
    ($($name:ident $([$($known:expr),*])?;)*) => {
        $(
            #[test]
            fn $name() {
                conformance(stringify!($name), &[$($($known),*)?]);
            }
        )*

        /// Every generated scenario directory has a test.
        #[test]
        fn every_fixture_directory_has_a_test() {
            let mut listed = vec![$(stringify!($name)),*];
            listed.sort_unstable();
            let root = repo_root().join("fixtures").join("conformance").join("claude");
            let mut dirs: Vec<String> = std::fs::read_dir(&root)
                .unwrap()
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            dirs.sort();
            assert_eq!(listed, dirs);
        }
    };
}

scenarios! {
    a_baseline;
    ev_config_change;
    ev_config_change_block [
        Known::KeptSettingsEnv { label: "rec_ConfigChange", name: "ORACLE_X", value: "original" },
        Known::ToolResultText { call: "toolu_oracle_002", dsh: "X=original" }
    ];
    ev_cwd_changed;
    ev_cwd_changed_envfile;
    ev_file_changed;
    ev_file_changed_watch;
    ev_message_display;
    ev_elicit_accept;
    ev_elicit_decline;
    ev_elicit_exit2;
    ev_elicit_plain [Known::AsyncHookRace];
    ev_elicit_result_change [Known::AsyncHookRace];
    ev_elicit_result_decline_json [Known::AsyncHookRace];
    ev_elicit_result_exit2 [Known::AsyncHookRace];
    ev_model_sdk [Known::SdkModelSwitch, Known::ModelName];
    ev_model_sdk_deny [Known::SdkModelSwitch, Known::ModelName];
    ev_model_sdk_exit2 [Known::SdkModelSwitch, Known::ModelName];
    ev_message_display_replace;
    ev_setup_context;
    ev_setup_init;
    ev_setup_init_only [Known::InitOnly];
    ev_setup_maintenance;
    a2_tool_failure;
    b_pre_exit2;
    c2_pre_legacy_block;
    c3_pre_ask;
    c4_pre_defer;
    c_pre_deny_json;
    d3_pre_ask_default_mode [Known::DefaultPermissionMode];
    d_pre_allow_default_mode [Known::DefaultPermissionMode];
    e3_pre_additional_context;
    e4_pre_plain_stdout;
    e5_pre_system_message;
    e_pre_updated_input;
    env_cli_settings;
    env_hooks_and_bash;
    env_precedence;
    f2_post_exit2;
    f_post_block;
    g3_post_updated_output;
    g_post_additional_context;
    h1_ups_exit2;
    h2_ups_plain_stdout;
    h3_ups_additional_context;
    h4_ups_decision_block;
    i1_ss_additional_context;
    i2_ss_plain_stdout;
    i3_ss_env_file;
    j1_stop_block;
    j2_stop_exit2;
    j3_stop_block_always;
    j4_stop_additional_context;
    j7_stop_block_forever;
    k1_pre_continue_false;
    k1r_pre_continue_false_resume;
    k2_post_continue_false;
    k4_stop_continue_false;
    l1_pre_exit1;
    l2_pre_malformed_json;
    l4_pre_json_wrong_schema;
    l5_post_exit1;
    l7_pre_legacy_approve_default_mode [Known::DefaultPermissionMode];
    m1_pre_timeout;
    n_matchers [Known::ToolResultText {
        call: "toolu_oracle_002",
        dsh: "File created successfully at: <PROJECT>/PLACEHOLDER",
    }];
    o1_multi_hooks;
    p1_file_tools_payloads [
        Known::ToolResultText {
            call: "toolu_oracle_001",
            dsh: "File created successfully at: <PROJECT>/notes.txt",
        },
        Known::ToolResultText {
            call: "toolu_oracle_003",
            dsh: "The file <PROJECT>/notes.txt has been updated successfully.",
        },
        Known::EditDefaultsInHistory
    ];
    p2_parallel_tool_calls [Known::ToolResultOrder];
    nl_deny_bash;
    nl_deny_glob_tools;
    nl_deny_read;
    nl_deny_read_tools;
    nl_deny_write;
    nl_post_ctx_newlines;
    nl_post_exit2;
    nl_pre_bash_exit2_trailing;
    nl_stop_exit2;
    pl_basic;
    pl_context;
    pl_disabled_project;
    pl_plugin_dir;
    pl_post_block;
    pl_pre_deny;
    pl_root_probe [Known::UnrecordedRuns(2)];
    t_postbatch_ctx;
    u2_disable_all_hooks;
    u_settings_layers;
    v_shell_semantics;
    z2_async_hook [Known::AsyncHookRace];
    // MCP tools: a real stdio MCP server (fixtures/mcp/echo_server.py) behind
    // `.mcp.json` / `--mcp-config`.
    mcp_basic;
    mcp_config_flag;
    // Claude Code defers MCP tool schemas behind ToolSearch and appends a hint about that to an
    // MCP error; dsh offers every schema up front, so its error text stops after the server's.
    mcp_fail [Known::ToolResultText {
        call: "toolu_oracle_001",
        dsh: "Error executing tool fail: FAIL: boom",
    }];
    mcp_pre_deny;
    mcp_text_result;
    mcp_unapproved;
    mcp_updated_input;
    mcp_updated_output;
    mcp_updated_tool_output;
    // Subagents: the `agent` tool's nested loop and its hook events.
    q_subagent [Known::AgentToolResponse, Known::ToolResultText {
        call: "toolu_oracle_001",
        dsh: "SUBAGENT-RESULT: hi",
    }];
    q2_subagent_stop_block [Known::AgentToolResponse, Known::ToolResultText {
        call: "toolu_oracle_001",
        dsh: "SUBAGENT-SECOND",
    }];
    sub_custom_agent_trusted [Known::AgentToolResponse, Known::ToolResultText {
        call: "toolu_oracle_001",
        dsh: "SUBAGENT-RESULT: sub",
    }];
    sub_start_ctx [Known::AgentToolResponse, Known::ToolResultText {
        call: "toolu_oracle_001",
        dsh: "SUBAGENT-RESULT: sub",
    }];
    sub_stop_exit2 [Known::AgentToolResponse, Known::ToolResultText {
        call: "toolu_oracle_001",
        dsh: "SUBAGENT-SECOND",
    }];
    sub_tools_inside [Known::AgentToolResponse, Known::ToolResultText {
        call: "toolu_oracle_001",
        dsh: "SUBAGENT-RESULT: sub",
    }];
    // Project instructions and slash commands.
    misc_instructions_loaded;
    misc_expansion [Known::SlashCommandMarkup];
    misc_expansion_ctx [Known::SlashCommandMarkup];
    misc_expansion_exit2 [Known::SlashCommandMarkup];
    misc_expansion_skill [Known::SlashCommandMarkup];
    // Permissions: the captures' permission flags passed unchanged.
    perm_allow_rule;
    perm_allow_rule_trusted;
    perm_ask_rule;
    perm_default_readonly;
    perm_deny_rule_bash;
    perm_deny_rule_read;
    perm_mode_accept_edits [Known::ToolResultText {
        call: "toolu_oracle_001",
        dsh: "File created successfully at: <PROJECT>/notes.txt",
    }];
    perm_mode_auto;
    perm_mode_auto_classifier;
    perm_mode_manual;
    perm_mode_plan;
    perm_permreq_updated_input;
    perm_permreq_updated_permissions;
    perm_prompts_none;
    // Compaction.
    cmp_auto [
        Known::ModelName,
        Known::CompactionTexts,
        Known::ElidedWriteContent,
        Known::ToolResultText {
            call: "toolu_oracle_001",
            dsh: "File created successfully at: <PROJECT>/big1.txt",
        },
        Known::ToolResultText {
            call: "toolu_oracle_002",
            dsh: "File created successfully at: <PROJECT>/big2.txt",
        },
        Known::ToolResultText {
            call: "toolu_oracle_003",
            dsh: "File created successfully at: <PROJECT>/big3.txt",
        }
    ];
    cmp_manual_custom [Known::ResumedFollowUps, Known::ModelName, Known::CompactionTexts];
    cmp_manual_no_args [Known::ResumedFollowUps, Known::ModelName, Known::CompactionTexts];
    cmp_post_and_ss_outputs [
        Known::ResumedFollowUps,
        Known::ModelName,
        Known::CompactionTexts,
        Known::ElidedCompactContext("SessionStart hook additional context: SS-CTX-AFTER-COMPACT")
    ];
    cmp_precompact_exit2 [Known::ResumedFollowUps, Known::CompactionTexts];
    // StopFailure.
    misc_stopfailure_400 [Known::OneRequestBeforeFailure, Known::KilledAtTeardown("sf")];
    misc_stopfailure_429 [
        Known::OneRequestBeforeFailure,
        Known::KilledAtTeardown("sf"),
        Known::EnvNotCaptured("sf_sh")
    ];
    misc_stopfailure_529 [Known::OneRequestBeforeFailure, Known::KilledAtTeardown("sf")];
    misc_stopfailure_matcher [Known::OneRequestBeforeFailure];
    // Behaviours that used to differ from Claude Code (captured with the reference harness).
    b2_pre_exit2_json;
    h5_ups_continue_false_resume [Known::MergedUserTextNewline];
    misc_expansion_plain [Known::SlashCommandMarkup];
    mcp_updated_output_blocks;
    perm_mode_auto_retry [Known::RetryNoteAsContext];
    // dsh's unknown-tool text is its own (crates/tools).
    tools_read_edit [Known::ToolResultText {
        call: "toolu_oracle_001",
        dsh: "Unknown tool `bash`. Available tools: edit, read.",
    }];
    sub_stop_ctx [Known::AgentToolResponse, Known::ToolResultText {
        call: "toolu_oracle_001",
        dsh: "SUBAGENT-SECOND",
    }];
}

/// The StopFailure captures' shell hook (`cat > {RUN}/stopfailure_stdin.json; env | grep -E
/// '^(CLAUDE|ORACLE)' | sort > {RUN}/stopfailure_env.txt`) leaves files, not a `hooks.jsonl`
/// line; the capture harness turned them into one record labelled `sf_sh`, and so does this.
fn stop_failure_shell_record(run_dir: &Path) -> Option<Value> {
    let stdin_raw = std::fs::read_to_string(run_dir.join("stopfailure_stdin.json")).ok()?;
    let event = serde_json::from_str::<Value>(&stdin_raw)
        .ok()
        .and_then(|stdin| stdin["hook_event_name"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let env_text = std::fs::read_to_string(run_dir.join("stopfailure_env.txt")).unwrap_or_default();
    let env: Map<String, Value> = env_text
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| (name.to_owned(), json!(value)))
        .collect();
    Some(json!({
        "label": "sf_sh",
        "call_no": 1,
        "event": event,
        "cwd": null,
        "stdin_raw": stdin_raw,
        "env": env,
    }))
}
