//! Interpreting one hook's answer exactly as Claude Code 2.1.328 does
//! (`docs/sources.md`; replayed by `tests/captures.rs`): exit 2 blocks with stderr and ignores stdout; any other
//! exit parses stdout (JSON when it starts with `{` and parses, else plain
//! text) and honours it; plain text is model-facing only for
//! UserPromptSubmit/SessionStart on exit 0; schema-invalid JSON and a wrong
//! `hookEventName` fail open. Every model-facing string is built here, with
//! the exact prefixes the captures show.

use dsh_seams::{NoticeLevel, PermissionUpdate};
use serde_json::Value;

use crate::events::HookEvent;

mod answer;
pub(crate) mod keys;
mod merge;
mod schema;
pub(crate) mod wire;
use keys::EventAnswer;
pub use merge::*;
pub use schema::validate;
pub(crate) use wire::HookOutputWire;

/// How a hook process (or HTTP call) ended, reduced to what matters here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitFact {
    /// Exited with this code (HTTP: 2xx is 0).
    Exited(i32),
    /// Killed at its deadline: no decision.
    TimedOut,
    /// Killed because the guarded work was cancelled: no decision.
    Cancelled,
    /// Died of a signal: no decision.
    Signaled(i32),
    /// Never ran, or an HTTP error: no decision.
    Failed(String),
}

/// The facts the interpreter needs about one hook run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookFacts {
    /// How it ended.
    pub exit: ExitFact,
    /// Its stdout (lossy UTF-8).
    pub stdout: String,
    /// Its stderr (lossy UTF-8).
    pub stderr: String,
}

impl HookFacts {
    /// A run that exited with `code`.
    pub fn exited(code: i32, stdout: impl Into<String>, stderr: impl Into<String>) -> Self {
        HookFacts {
            exit: ExitFact::Exited(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }
}

/// What the event being answered is about.
#[derive(Debug, Clone, Copy)]
pub struct EventCtx<'a> {
    /// The event.
    pub event: HookEvent,
    /// Claude Code's tool name, for tool events.
    pub tool_name: Option<&'a str>,
    /// SessionStart's `source`.
    pub source: Option<&'a str>,
    /// UserPromptSubmit's prompt.
    pub prompt: Option<&'a str>,
    /// The hook's command as configured (`CMD` in Claude Code's texts).
    pub command: &'a str,
}

impl EventCtx<'_> {
    /// `PreToolUse:Bash` for tool events, the bare event name otherwise.
    pub fn label(&self) -> String {
        match self.tool_name {
            Some(tool) if self.event.is_tool_event() => format!("{}:{tool}", self.event),
            _ => self.event.as_str().to_owned(),
        }
    }
}

/// How the hook's stdout was read.
#[derive(Debug, Clone, PartialEq)]
pub enum ParsedOutput {
    /// Nothing (or only whitespace) on stdout.
    Empty,
    /// Exit 2: stdout is not looked at.
    IgnoredOnExit2,
    /// Plain text (does not start with `{`).
    PlainText(String),
    /// Starts with `{` but is not JSON: treated as plain text.
    InvalidJson(String),
    /// Valid JSON that Claude Code's schema rejects: fails open.
    SchemaInvalid {
        /// The output.
        json: Value,
        /// `path: message`.
        error: String,
    },
    /// `hookSpecificOutput.hookEventName` names another event: whole output ignored.
    WrongEventName {
        /// The output.
        json: Value,
        /// The event it claimed.
        got: String,
    },
    /// Schema-valid JSON.
    Json(Value),
}

impl ParsedOutput {
    /// The JSON value to record as `parsed_output`, if any.
    pub fn json(&self) -> Option<&Value> {
        match self {
            ParsedOutput::Json(json)
            | ParsedOutput::SchemaInvalid { json, .. }
            | ParsedOutput::WrongEventName { json, .. } => Some(json),
            ParsedOutput::Empty
            | ParsedOutput::IgnoredOnExit2
            | ParsedOutput::PlainText(_)
            | ParsedOutput::InvalidJson(_) => None,
        }
    }

    /// The JSON answer read into its wire struct (empty when there is none).
    pub(crate) fn wire(&self) -> HookOutputWire {
        self.json().map(HookOutputWire::read).unwrap_or_default()
    }

    /// One event's `hookSpecificOutput` keys, when stdout was a
    /// schema-valid JSON answer.
    pub(crate) fn event_keys<K: wire::WireType + Default>(&self) -> Option<K> {
        match self {
            ParsedOutput::Json(json) => Some(keys::keys_of(json)),
            ParsedOutput::Empty
            | ParsedOutput::IgnoredOnExit2
            | ParsedOutput::PlainText(_)
            | ParsedOutput::InvalidJson(_)
            | ParsedOutput::SchemaInvalid { .. }
            | ParsedOutput::WrongEventName { .. } => None,
        }
    }
}

/// What one hook meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// No decision.
    None,
    /// PreToolUse allow / legacy approve / PermissionRequest allow.
    Allow {
        /// The reason (user-facing only).
        reason: Option<String>,
    },
    /// PreToolUse ask.
    Ask {
        /// The reason (model-facing raw if the ask turns into a denial).
        reason: Option<String>,
    },
    /// PreToolUse defer.
    Defer {
        /// The reason.
        reason: Option<String>,
    },
    /// The call is denied; `text` is the exact model-facing tool result.
    Deny {
        /// Model-facing text.
        text: String,
    },
    /// A blocking answer: UserPromptSubmit (user-facing text), Stop (the
    /// feedback reason), PostToolUse (the blocking-error text, also in contexts).
    Block {
        /// The text; see the variant doc.
        text: String,
    },
}

impl Effect {
    /// The log's typed effect.
    pub fn hook_effect(&self) -> dsh_protocol::HookEffect {
        use dsh_protocol::HookEffect;
        match self {
            Effect::None => HookEffect::None,
            Effect::Allow { .. } => HookEffect::Allow,
            Effect::Ask { .. } => HookEffect::Ask,
            Effect::Defer { .. } => HookEffect::Defer,
            Effect::Deny { .. } => HookEffect::Deny,
            Effect::Block { .. } => HookEffect::Block,
        }
    }

    /// A short name for the log.
    pub fn name(&self) -> &'static str {
        match self {
            Effect::None => "none",
            Effect::Allow { .. } => "allow",
            Effect::Ask { .. } => "ask",
            Effect::Defer { .. } => "defer",
            Effect::Deny { .. } => "deny",
            Effect::Block { .. } => "block",
        }
    }
}

/// The full reading of one hook's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Interpretation {
    /// How stdout was read.
    pub parsed: ParsedOutput,
    /// The decision.
    pub effect: Effect,
    /// Model-facing system texts, exact, in this hook's order.
    pub contexts: Vec<String>,
    /// Model-facing user-role texts (Stop `additionalContext`).
    pub steering: Vec<String>,
    /// PreToolUse / PermissionRequest `updatedInput`.
    pub updated_input: Option<Value>,
    /// PermissionRequest `updatedPermissions`, read into dsh's typed updates.
    pub updated_permissions: Option<Vec<PermissionUpdate>>,
    /// PermissionDenied `retry: true`.
    pub retry: bool,
    /// PostToolUse `updatedMCPToolOutput` for an MCP tool.
    pub replace_output: Option<Value>,
    /// `continue: false`: the `stopReason` (empty when absent).
    pub stop: Option<String>,
    /// User-facing notices (`systemMessage`, non-blocking errors), each
    /// with the level it is shown at.
    pub user_notices: Vec<HookNotice>,
    /// Fields that were present but not honoured, and why.
    pub ignored: Vec<String>,
    /// Why nothing was decided, when that is worth recording.
    pub why: Option<String>,
}

/// A notice for the user from one hook run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookNotice {
    /// `Info` for what the hook chose to say (`systemMessage`), `Warning`
    /// for its failures.
    pub level: NoticeLevel,
    /// The text.
    pub text: String,
}

impl Interpretation {
    /// The notices' texts, in order.
    pub fn notice_texts(&self) -> Vec<String> {
        self.user_notices.iter().map(|n| n.text.clone()).collect()
    }

    fn warn(&mut self, text: String) {
        self.user_notices.push(HookNotice {
            level: NoticeLevel::Warning,
            text,
        });
    }

    fn inform(&mut self, text: String) {
        self.user_notices.push(HookNotice {
            level: NoticeLevel::Info,
            text,
        });
    }

    fn new(parsed: ParsedOutput) -> Self {
        Interpretation {
            parsed,
            effect: Effect::None,
            contexts: Vec::new(),
            steering: Vec::new(),
            updated_input: None,
            updated_permissions: None,
            retry: false,
            replace_output: None,
            stop: None,
            user_notices: Vec::new(),
            ignored: Vec::new(),
            why: None,
        }
    }
}

/// Claude Code's default text when a deny/block gives no reason.
pub const BLOCKED_BY_HOOK: &str = "Blocked by hook";
/// Claude Code's text when exit 2 comes with empty stderr.
pub const NO_STDERR: &str = "No stderr output";

/// Exit-2 stderr as the model reads it: verbatim, leading and trailing
/// newlines included (`nl_pre_bash_exit2_trailing`, `nl_stop_exit2`: almost
/// every real script ends stderr with `\n`, and Claude Code keeps it). Only a
/// stderr with nothing but whitespace becomes Claude Code's placeholder.
fn stderr_reason(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        NO_STDERR.to_owned()
    } else {
        stderr.to_owned()
    }
}

/// How a PreToolUse JSON deny's reason is framed in the tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenyFrame {
    /// The reason alone (`DENY-READ: not here\n`).
    Bare,
    /// `PreToolUse:<Tool> hook error: <reason>`.
    Labelled,
}

/// The frame of a JSON deny (`permissionDecision: "deny"` or the legacy
/// `decision: "block"`) for a tool, by Claude Code's name.
///
/// Captured (`nl_deny_*`, PROTOCOL-ADDENDUM §4): Read and Write get the bare
/// reason; Bash, Glob and MCP tools get the label. Not captured: Edit and
/// Grep. Edit is decided with Read and Write (the file tools: they take a
/// `file_path` and share Claude Code's file-permission path), Grep with Glob
/// (the search tools); every other tool gets the label, as Bash and MCP do.
/// Exit-2 blocks are always labelled: they carry no permission decision, only
/// the blocking error, and every captured one is labelled.
pub fn deny_frame(tool: Option<&str>) -> DenyFrame {
    match tool {
        Some("Read" | "Write" | "Edit") => DenyFrame::Bare,
        Some(_) | None => DenyFrame::Labelled,
    }
}

/// Reads stdout as Claude Code does: JSON iff the first non-whitespace
/// character is `{` and it parses as an object; otherwise plain text.
pub fn parse_stdout(stdout: &str, event: HookEvent) -> ParsedOutput {
    read_stdout(stdout, event).0
}

/// [`parse_stdout`], with a schema-valid answer read for `event` (once:
/// the schema check and the interpretation both use it).
fn read_stdout(stdout: &str, event: HookEvent) -> (ParsedOutput, Option<EventAnswer>) {
    let trimmed = stdout.trim();
    if trimmed.is_empty() {
        return (ParsedOutput::Empty, None);
    }
    if !trimmed.starts_with('{') {
        return (ParsedOutput::PlainText(stdout.to_owned()), None);
    }
    let json: Value = match serde_json::from_str(trimmed) {
        Ok(json @ Value::Object(_)) => json,
        _ => return (ParsedOutput::InvalidJson(stdout.to_owned()), None),
    };
    let answer = EventAnswer::read(&json, event);
    if let Some(got) = answer
        .wire
        .specific()
        .and_then(|specific| specific.hook_event_name.as_str())
        && got != event.as_str()
    {
        let got = got.to_owned();
        return (ParsedOutput::WrongEventName { got, json }, None);
    }
    match answer.validate() {
        Ok(()) => (ParsedOutput::Json(json), Some(answer)),
        Err(error) => (ParsedOutput::SchemaInvalid { json, error }, None),
    }
}

fn no_verdict(facts: &HookFacts) -> Option<String> {
    match &facts.exit {
        ExitFact::Exited(_) => None,
        ExitFact::TimedOut => Some("timed out; no decision (fails open)".to_owned()),
        ExitFact::Cancelled => Some("cancelled; no decision".to_owned()),
        ExitFact::Signaled(signal) => Some(format!("killed by signal {signal}; no decision")),
        ExitFact::Failed(why) => Some(format!("could not run: {why}; no decision")),
    }
}

/// Interprets one hook's answer. `cap` is applied to every hook-supplied
/// model-facing string (additionalContext, plain stdout) before Claude
/// Code's prefix is added; it implements the 10,000-character spill.
pub fn interpret(
    ctx: &EventCtx<'_>,
    facts: &HookFacts,
    cap: &dyn Fn(&str) -> String,
) -> Interpretation {
    let label = ctx.label();
    if let Some(why) = no_verdict(facts) {
        let mut out = Interpretation::new(ParsedOutput::Empty);
        if matches!(facts.exit, ExitFact::TimedOut) && ctx.event == HookEvent::PreToolUse {
            out.warn("A hook didn't answer in time, so it didn't check this action.".to_owned());
        } else if !matches!(facts.exit, ExitFact::Cancelled) {
            out.warn(format!("{label} hook error: {why}"));
        }
        out.why = Some(why);
        return out;
    }
    let code = match facts.exit {
        ExitFact::Exited(code) => code,
        ExitFact::TimedOut | ExitFact::Cancelled | ExitFact::Signaled(_) | ExitFact::Failed(_) => 1,
    };
    if code == 2 {
        return interpret_exit2(ctx, facts, &label);
    }
    let (parsed, answer) = read_stdout(&facts.stdout, ctx.event);
    let mut out = Interpretation::new(parsed.clone());
    match parsed {
        ParsedOutput::Empty => {
            if code != 0 {
                out.warn(non_blocking_error(&label, code, &facts.stderr));
                out.why = Some(format!("exit {code}: non-blocking error"));
            }
        }
        ParsedOutput::PlainText(text) | ParsedOutput::InvalidJson(text) => {
            let invalid = matches!(out.parsed, ParsedOutput::InvalidJson(_));
            if code == 0 {
                match ctx.event {
                    // Both prompt events show plain stdout to the model
                    // (`h2_ups_plain_stdout`, `misc_expansion_plain`).
                    HookEvent::UserPromptSubmit | HookEvent::UserPromptExpansion => {
                        out.contexts.push(format!(
                            "{} hook success: {}",
                            ctx.event,
                            cap(text.trim_end())
                        ));
                    }
                    HookEvent::SessionStart => {
                        out.contexts.push(format!(
                            "SessionStart:{} hook success: {}",
                            ctx.source.unwrap_or("startup"),
                            cap(text.trim_end())
                        ));
                    }
                    HookEvent::PreCompact => {
                        // OBSERVED §5.7: appended to the summary instructions
                        // (the bridge reads it from here), not a context.
                        out.contexts.push(text.trim_end().to_owned());
                    }
                    HookEvent::PreToolUse
                    | HookEvent::PostToolUse
                    | HookEvent::PostToolUseFailure
                    | HookEvent::PostToolBatch
                    | HookEvent::Notification
                    | HookEvent::SessionEnd
                    | HookEvent::Stop
                    | HookEvent::StopFailure
                    | HookEvent::SubagentStart
                    | HookEvent::SubagentStop
                    | HookEvent::PostCompact
                    | HookEvent::PreModelSwitch
                    | HookEvent::PostModelSwitch
                    | HookEvent::PermissionRequest
                    | HookEvent::PermissionDenied
                    | HookEvent::Setup
                    | HookEvent::TeammateIdle
                    | HookEvent::TaskCreated
                    | HookEvent::TaskCompleted
                    | HookEvent::Elicitation
                    | HookEvent::ElicitationResult
                    | HookEvent::ConfigChange
                    | HookEvent::WorktreeCreate
                    | HookEvent::WorktreeRemove
                    | HookEvent::InstructionsLoaded
                    | HookEvent::CwdChanged
                    | HookEvent::FileChanged
                    | HookEvent::DirectoryAdded
                    | HookEvent::MessageDisplay => {
                        out.why = Some(if invalid {
                            "stdout starts with { but is not a JSON object; plain text is not model-facing on this event".to_owned()
                        } else {
                            "plain stdout is not model-facing on this event".to_owned()
                        });
                    }
                }
            } else {
                out.warn(non_blocking_error(&label, code, &facts.stderr));
                out.why = Some(format!(
                    "exit {code}: plain stdout is ignored on a non-zero exit"
                ));
            }
        }
        ParsedOutput::SchemaInvalid { error, .. } => {
            out.warn(format!(
                "{label} hook error: Hook JSON output validation failed — {error}"
            ));
            if ctx.event == HookEvent::PreToolUse {
                out.warn(
                    "A hook gave no usable answer, so it didn't check this action.".to_owned(),
                );
            }
            out.why = Some(format!("schema-invalid JSON (fails open): {error}"));
        }
        ParsedOutput::WrongEventName { got, .. } => {
            let text = format!(
                "Hook returned incorrect event name: expected '{}' but got '{got}'",
                ctx.event
            );
            out.warn(format!("{label} hook error: {text}"));
            out.why = Some(format!("{text}; whole output ignored"));
        }
        ParsedOutput::Json(_) => {
            if let Some(answer) = &answer {
                answer::apply_json(ctx, &label, answer, &mut out, cap);
            }
        }
        ParsedOutput::IgnoredOnExit2 => {}
    }
    out
}

fn non_blocking_error(label: &str, code: i32, stderr: &str) -> String {
    let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if first.is_empty() {
        format!("{label} hook error: Failed with non-blocking status code {code}")
    } else {
        format!("{label} hook error: Failed with non-blocking status code: {first}")
    }
}

/// The reason of a `{"decision":"block","reason":R}` object printed on stdout
/// by a hook that exited 2; `None` when stdout is anything else.
fn exit2_json_reason(stdout: &str) -> Option<String> {
    let wire = HookOutputWire::read(&serde_json::from_str(stdout.trim()).ok()?);
    if wire.decision.valid() != Some(&wire::TopDecision::Block) {
        return None;
    }
    wire.reason.as_str().map(str::to_owned)
}

fn interpret_exit2(ctx: &EventCtx<'_>, facts: &HookFacts, label: &str) -> Interpretation {
    let mut out = Interpretation::new(ParsedOutput::IgnoredOnExit2);
    let reason = stderr_reason(&facts.stderr);
    let cmd = ctx.command;
    match ctx.event {
        HookEvent::PreToolUse => {
            // A hook that exits 2 and also prints a legacy block on stdout
            // (published hook tools run through `npm exec` do) is shown by
            // its JSON reason alone, without the `[command]:` frame
            // (`b2_pre_exit2_json`).
            out.effect = Effect::Deny {
                text: match exit2_json_reason(&facts.stdout) {
                    Some(json_reason) => format!("{label} hook error: {json_reason}"),
                    None => format!("{label} hook error: [{cmd}]: {reason}"),
                },
            };
        }
        HookEvent::PostToolUse | HookEvent::PostToolUseFailure | HookEvent::PostToolBatch => {
            let text =
                format!("{label} hook blocking error from command: \"{cmd}\": [{cmd}]: {reason}");
            out.contexts.push(text.clone());
            out.effect = Effect::Block { text };
        }
        HookEvent::UserPromptSubmit | HookEvent::UserPromptExpansion => {
            out.effect = Effect::Block {
                text: format!(
                    "{} operation blocked by hook:\n[{cmd}]: {reason}\n\nOriginal prompt: {}",
                    ctx.event,
                    ctx.prompt.unwrap_or("")
                ),
            };
        }
        HookEvent::Stop | HookEvent::SubagentStop => {
            out.effect = Effect::Block {
                text: format!("[{cmd}]: {reason}"),
            };
        }
        HookEvent::PreCompact => {
            // cmp_precompact_exit2: the compaction is skipped with this text.
            out.effect = Effect::Block {
                text: format!("Compaction blocked by PreCompact hook: [{cmd}]: {reason}"),
            };
        }
        HookEvent::PreModelSwitch => {
            // ev_model_sdk_exit2: the switch is refused, `[CMD]: <stderr>` the reason.
            out.effect = Effect::Deny {
                text: format!("[{cmd}]: {reason}"),
            };
        }
        HookEvent::Elicitation | HookEvent::ElicitationResult => {
            // ev_elicit_exit2 / ev_elicit_result_exit2: the answer becomes
            // `decline`; nobody sees the stderr.
            out.effect = Effect::Deny {
                text: format!("[{cmd}]: {reason}"),
            };
        }
        HookEvent::TaskCreated | HookEvent::TaskCompleted | HookEvent::ConfigChange => {
            // PROTOCOL.md (not captured: headless Claude Code offers no
            // TaskCreate): the task is rolled back and stderr reaches the
            // model as the task tool's error, framed as Stop's feedback is.
            // ConfigChange (`ev_config_change_block`): the change is not
            // applied, the text is logged only.
            out.effect = Effect::Block {
                text: format!("[{cmd}]: {reason}"),
            };
        }
        HookEvent::Notification
        | HookEvent::SessionStart
        | HookEvent::SessionEnd
        | HookEvent::StopFailure
        | HookEvent::SubagentStart
        | HookEvent::PostCompact
        | HookEvent::PostModelSwitch
        | HookEvent::PermissionRequest
        | HookEvent::PermissionDenied
        | HookEvent::Setup
        | HookEvent::TeammateIdle
        | HookEvent::WorktreeCreate
        | HookEvent::WorktreeRemove
        | HookEvent::InstructionsLoaded
        | HookEvent::CwdChanged
        | HookEvent::FileChanged
        | HookEvent::DirectoryAdded
        | HookEvent::MessageDisplay => {
            // Cannot block: stderr goes to the user only.
            out.warn(format!("{label} hook error: {reason}"));
            out.why = Some(format!("exit 2 cannot block {}", ctx.event));
        }
    }
    out
}

#[cfg(test)]
mod tests;
