//! Gemini's reading of a hook run, and its merge of several runs.
//!
//! Gemini parses `stdout.trim()`, or `stderr.trim()` when stdout is empty,
//! whatever the exit code: JSON (a JSON string holding JSON is decoded
//! again) is the output; plain text is `allow` + `systemMessage` on exit 0,
//! `allow` + `systemMessage: "Warning: TEXT"` on exit 1, and `deny` with
//! the text as reason on **any other** exit code. A run that timed out (or
//! was killed) failed: its output is ignored and the action proceeds.
//!
//! Merging (BeforeTool, AfterTool, BeforeAgent, AfterAgent, SessionStart):
//! any `deny`/`block` wins; reasons, system messages and additional
//! contexts are each joined with `"\n"`; any `continue: false` wins.

use dsh_hook_runner::HookExit;
use dsh_hooks::lenient::Lenient;
use dsh_hooks::wire::Present;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::llm::{LlmRequestPatch, LlmResponseWire, ModelOutput, ToolConfig};
pub use crate::wire::Keyed;
use crate::wire::{keyed, object};

/// What a run decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// No objection.
    Allow,
    /// `deny` / `block` (or a plain-text exit ≥ 2).
    Deny {
        /// The reason, if any.
        reason: Option<String>,
    },
    /// `ask`: the user must confirm.
    Ask {
        /// The reason, if any.
        reason: Option<String>,
    },
}

/// The run's status in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    /// Exit 0.
    Succeeded,
    /// Exit ≠ 0, timed out, killed or not started: Gemini reports the hook
    /// as failed (a decision in its output still counts, except after a
    /// timeout).
    Failed,
}

impl RunStatus {
    /// The log's status.
    pub fn hook_status(self) -> dsh_protocol::HookRunStatus {
        match self {
            RunStatus::Succeeded => dsh_protocol::HookRunStatus::Completed,
            RunStatus::Failed => dsh_protocol::HookRunStatus::Failed,
        }
    }
}

/// One run, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Interpretation {
    /// Succeeded or failed.
    pub status: RunStatus,
    /// The decision.
    pub decision: Decision,
    /// `continue: false` with its `stopReason` (or `reason`).
    pub stop: Option<Option<String>>,
    /// `systemMessage` (shown to the user, never the model).
    pub system_message: Option<String>,
    /// `hookSpecificOutput.additionalContext`.
    pub additional_context: Option<String>,
    /// `hookSpecificOutput.tool_input` (BeforeTool).
    pub tool_input: Keyed<Value>,
    /// `hookSpecificOutput.clearContext` (AfterAgent).
    pub clear_context: bool,
    /// AfterTool `hookSpecificOutput.tailToolCallRequest` `{name, args}`:
    /// the tool Gemini runs next in place of the result.
    pub tail_call: Keyed<TailCall>,
    /// The model events' keys of `hookSpecificOutput`.
    pub model: ModelOutput,
    /// The output object, as parsed.
    pub parsed: Option<Value>,
    /// Why the run failed, for the log.
    pub error: Option<String>,
}

impl Interpretation {
    fn empty(status: RunStatus) -> Self {
        Interpretation {
            status,
            decision: Decision::Allow,
            stop: None,
            system_message: None,
            additional_context: None,
            tool_input: Keyed::Absent,
            clear_context: false,
            tail_call: Keyed::Absent,
            model: ModelOutput::default(),
            parsed: None,
            error: None,
        }
    }

    /// A run whose decision dsh could not read: `deny` with `reason`
    /// (blocking events fail closed), or ignored.
    pub fn unreadable(reason: String, fail_closed: bool) -> Self {
        Interpretation {
            decision: if fail_closed {
                Decision::Deny {
                    reason: Some(reason.clone()),
                }
            } else {
                Decision::Allow
            },
            error: Some(reason),
            ..Interpretation::empty(RunStatus::Failed)
        }
    }
}

fn parse_json(text: &str) -> Option<Value> {
    let value: Value = serde_json::from_str(text).ok()?;
    let object = match value.as_str() {
        // A JSON string whose content is JSON is decoded again.
        Some(inner) => serde_json::from_str(inner).ok()?,
        None => value,
    };
    object.is_object().then_some(object)
}

/// The keys Gemini reads from a hook's JSON output (each on its own: one
/// of the wrong type counts as absent).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Wire {
    decision: Lenient<String>,
    reason: Lenient<String>,
    #[serde(rename = "continue")]
    keep_going: Lenient<bool>,
    stop_reason: Lenient<String>,
    system_message: Lenient<String>,
    #[serde(deserialize_with = "object")]
    hook_specific_output: Option<SpecificWire>,
}

/// `hookSpecificOutput`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct SpecificWire {
    additional_context: Lenient<String>,
    #[serde(rename = "tool_input", deserialize_with = "keyed")]
    tool_input: Keyed<Map<String, Value>>,
    clear_context: Lenient<bool>,
    #[serde(deserialize_with = "keyed")]
    tail_tool_call_request: Keyed<TailWire>,
    #[serde(rename = "llm_request", deserialize_with = "object")]
    llm_request: Option<LlmRequestPatch>,
    #[serde(rename = "llm_response", deserialize_with = "object")]
    llm_response: Option<LlmResponseWire>,
    #[serde(deserialize_with = "object")]
    tool_config: Option<ToolConfig>,
}

/// `tailToolCallRequest`: `name` and `args` of any JSON type (Gemini acts
/// on every shape; a `null` and a missing key read alike, `None`, and
/// Gemini treats them alike too).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TailWire {
    name: Option<Present>,
    args: Option<Present>,
}

/// Reads one run: how it ended (with the hook's timeout in milliseconds,
/// for the timeout's text) and what it printed.
pub fn interpret(
    (exit, timeout_ms): (&HookExit, u64),
    stdout: &str,
    stderr: &str,
) -> Interpretation {
    let failed = |error: String| Interpretation {
        error: Some(error),
        ..Interpretation::empty(RunStatus::Failed)
    };
    let code = match exit {
        HookExit::Exited(code) => *code,
        HookExit::TimedOut => return failed(format!("Hook timed out after {timeout_ms}ms")),
        // Killed by a signal, or cancelled with the work it guarded.
        HookExit::Signaled(_) | HookExit::Cancelled => {
            return failed("the hook was killed".to_owned());
        }
        // Never started (a limit never gets here: the reader answers a dsh
        // fault first).
        HookExit::SpawnFailed(message) | HookExit::DshLimit(message) => {
            return failed(message.clone());
        }
        // Gemini has no HTTP hooks; the runner only answers this for one.
        HookExit::Responded(status) => return failed(format!("HTTP status {status}")),
    };
    let status = if code == 0 {
        RunStatus::Succeeded
    } else {
        RunStatus::Failed
    };
    let stdout = stdout.trim();
    let text = if stdout.is_empty() {
        stderr.trim()
    } else {
        stdout
    };
    let error = (code != 0).then(|| format!("exit code {code}"));
    if text.is_empty() {
        return Interpretation {
            error,
            ..Interpretation::empty(status)
        };
    }
    let Some(output) = parse_json(text) else {
        let mut read = Interpretation {
            error,
            ..Interpretation::empty(status)
        };
        match code {
            0 => read.system_message = Some(text.to_owned()),
            1 => read.system_message = Some(format!("Warning: {text}")),
            _ => {
                read.decision = Decision::Deny {
                    reason: Some(text.to_owned()),
                }
            }
        }
        return read;
    };
    let wire = Wire::deserialize(&output).unwrap_or_default();
    let reason = wire.reason.0;
    let decision = match wire.decision.0.as_deref() {
        Some("deny" | "block") => Decision::Deny {
            reason: reason.clone(),
        },
        Some("ask") => Decision::Ask {
            reason: reason.clone(),
        },
        _ => Decision::Allow,
    };
    let stop =
        (wire.keep_going.0 == Some(false)).then(|| wire.stop_reason.0.or_else(|| reason.clone()));
    let specific = wire.hook_specific_output.unwrap_or_default();
    let additional_context = specific.additional_context.0;
    let tool_input = specific.tool_input.map(Value::Object);
    let clear_context = specific.clear_context.0.unwrap_or(false);
    let tail_call = specific
        .tail_tool_call_request
        .map(|tail| TailCall::read(tail.name, tail.args));
    let model = ModelOutput {
        llm_request: specific.llm_request,
        llm_response: specific.llm_response,
        tool_config: specific.tool_config,
    };
    Interpretation {
        status,
        decision,
        stop,
        system_message: wire.system_message.0,
        additional_context,
        tool_input,
        clear_context,
        tail_call,
        model,
        parsed: Some(output),
        error,
    }
}

/// A tool call an AfterTool hook asks to run next
/// (`hookSpecificOutput.tailToolCallRequest`, an object): Gemini CLI 0.61
/// acts on it whatever its `name` and `args` hold (`at_tail_*` captures).
#[derive(Debug, Clone, PartialEq)]
pub struct TailCall {
    /// The tool's name.
    pub name: TailName,
    /// Its arguments under Gemini's names.
    pub args: TailArgs,
}

/// `tailToolCallRequest.name`, by what Gemini does with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TailName {
    /// A string (or an empty array, which Gemini reads as `""`): the
    /// tool of that name, if there is one.
    Named(String),
    /// A number, a boolean or an object: never a tool's name. Gemini's
    /// `Tool "NAME" not found.` prints it as JavaScript does (`5`, `true`,
    /// `[object Object]`), and its suggestion, measuring no distance to
    /// it, lists the first tools in order (`at_tail_name_number`,
    /// `at_tail_name_object`).
    Printed(String),
    /// Missing, `null` or a non-empty array: Gemini's suggestion for the unknown
    /// name throws a `TypeError` and the whole run fails
    /// (`at_tail_name_missing`, `at_tail_name_null`, `at_tail_name_array`,
    /// `at_tail_empty`).
    Unusable,
}

/// `tailToolCallRequest.args`, by what Gemini's parameter check says.
#[derive(Debug, Clone, PartialEq)]
pub enum TailArgs {
    /// An object: checked against the tool's parameters.
    Object(Map<String, Value>),
    /// An array: `params must be object` (`at_tail_args_array`).
    Array,
    /// Missing, `null`, a string, a number or a boolean: `Value of params
    /// must be an object` (`at_tail_args_null`, `at_tail_args_missing`,
    /// `at_tail_args_string`). dsh never reads a missing `args` as `{}`.
    NotObject,
}

impl TailCall {
    fn read(name: Option<Present>, args: Option<Present>) -> Self {
        let name = match name {
            Some(Present(name)) => match name.as_str() {
                Some(text) => TailName::Named(text.to_owned()),
                None if name.is_object() => TailName::Printed("[object Object]".to_owned()),
                None if name.is_number() || name.is_boolean() => {
                    TailName::Printed(name.to_string())
                }
                // JavaScript prints `[]` as the empty string, and its
                // length is 0, so the suggestion measures it as `""`
                // (`at_tail_name_empty_array`).
                None if name.as_array().is_some_and(Vec::is_empty) => {
                    TailName::Named(String::new())
                }
                None => TailName::Unusable,
            },
            None => TailName::Unusable,
        };
        let args = match args {
            Some(Present(args)) if args.is_array() => TailArgs::Array,
            Some(Present(args)) => args
                .as_object()
                .cloned()
                .map_or(TailArgs::NotObject, TailArgs::Object),
            None => TailArgs::NotObject,
        };
        TailCall { name, args }
    }
}

/// Several runs of one event, merged by Gemini's rules.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Merged {
    /// Whether any run denied.
    pub deny: bool,
    /// The deniers' reasons joined with `\n` (`None`: none gave one).
    pub reason: Option<String>,
    /// Whether any run asked (and none denied).
    pub ask: bool,
    /// `continue: false` from any run, with the stop reasons joined.
    pub stop: Option<Option<String>>,
    /// The system messages joined with `\n`.
    pub system_message: Option<String>,
    /// The additional contexts joined with `\n`.
    pub additional_context: Option<String>,
    /// The `tool_input` of the last run that has the key (Gemini spreads
    /// each run's `hookSpecificOutput` over the previous ones', so a later
    /// object replaces an earlier one whole, `bt_tool_input_two_hooks`,
    /// and a later `null`, string or array cancels it,
    /// `bt_tool_input_later_*`).
    pub tool_input: Option<Value>,
    /// Any `clearContext: true`.
    pub clear_context: bool,
    /// The tail call request, likewise (`at_tail_two_hooks`,
    /// `at_tail_later_*`).
    pub tail_call: Option<TailCall>,
}

fn join(parts: Vec<String>) -> Option<String> {
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// Merges runs in configuration order.
pub fn merge<'a>(runs: impl IntoIterator<Item = &'a Interpretation>) -> Merged {
    let mut merged = Merged::default();
    let (mut reasons, mut messages, mut contexts, mut stops) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut stopped = false;
    let mut ask = false;
    for run in runs {
        match &run.decision {
            Decision::Deny { reason } => {
                merged.deny = true;
                reasons.extend(reason.clone());
            }
            Decision::Ask { reason } => {
                ask = true;
                reasons.extend(reason.clone());
            }
            Decision::Allow => {}
        }
        if let Some(stop) = &run.stop {
            stopped = true;
            stops.extend(stop.clone());
        }
        messages.extend(run.system_message.clone());
        contexts.extend(run.additional_context.clone());
        // A later run's key replaces an earlier one's whatever it holds:
        // one that is no object cancels (`*_later_*` captures).
        if let Keyed::Present(input) = &run.tool_input {
            merged.tool_input = input.clone();
        }
        merged.clear_context |= run.clear_context;
        if let Keyed::Present(tail) = &run.tail_call {
            merged.tail_call = tail.clone();
        }
    }
    merged.ask = ask && !merged.deny;
    merged.reason = join(reasons);
    merged.stop = stopped.then(|| join(stops));
    merged.system_message = join(messages);
    merged.additional_context = join(contexts);
    merged
}

/// `<` → `&lt;`, `>` → `&gt;`, as Gemini escapes additional contexts.
pub fn escape(text: &str) -> String {
    text.replace('<', "&lt;").replace('>', "&gt;")
}

/// An additional context as the model sees it.
pub fn hook_context(context: &str) -> String {
    format!("<hook_context>{}</hook_context>", escape(context))
}

/// The model-facing text of a BeforeTool block.
pub fn before_tool_block_text(reason: Option<&str>) -> String {
    format!(
        "Tool execution blocked: {}",
        reason.unwrap_or("No reason provided")
    )
}

/// What the model sees when `continue: false` stops the agent at a tool.
pub fn stopped_text(reason: Option<&str>) -> String {
    format!(
        "Agent execution stopped by hook: {}",
        reason.unwrap_or("No reason provided")
    )
}

/// Appended to a tool's output when a BeforeTool hook rewrote its input.
pub const REWRITE_NOTICE: &str =
    "\n\n[System] Tool input parameters were modified by a hook before execution.";

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn exited(code: i32, stdout: &str, stderr: &str) -> Interpretation {
        interpret((&HookExit::Exited(code), 0), stdout, stderr)
    }

    #[test]
    fn plain_text_is_a_message_a_warning_or_a_deny_by_exit_code() {
        assert_eq!(
            exited(0, "hello\n", "").system_message.as_deref(),
            Some("hello")
        );
        let warning = exited(1, "", "careful");
        assert_eq!(warning.system_message.as_deref(), Some("Warning: careful"));
        assert_eq!(warning.decision, Decision::Allow);
        assert_eq!(warning.status, RunStatus::Failed);
        for code in [2, 3, 127] {
            assert_eq!(
                exited(code, "", "no\n").decision,
                Decision::Deny {
                    reason: Some("no".into())
                },
                "{code}"
            );
        }
        // Stdout first, whatever the exit code.
        assert_eq!(
            exited(2, "from stdout", "from stderr").decision,
            Decision::Deny {
                reason: Some("from stdout".into())
            }
        );
        assert_eq!(exited(2, "", "").decision, Decision::Allow);
    }

    #[test]
    fn json_decides_even_on_exit_2_and_a_json_string_is_decoded_twice() {
        assert_eq!(
            exited(2, r#"{"decision":"allow"}"#, "").decision,
            Decision::Allow
        );
        let twice = exited(0, r#""{\"decision\":\"block\"}""#, "");
        assert_eq!(twice.decision, Decision::Deny { reason: None });
        let stderr_json = exited(0, "", r#"{"decision":"deny","reason":"r"}"#);
        assert_eq!(
            stderr_json.decision,
            Decision::Deny {
                reason: Some("r".into())
            }
        );
    }

    /// Every way a run can end without an exit code fails it with its own
    /// error text, whatever it printed.
    #[test]
    fn a_run_without_an_exit_code_fails_with_why() {
        for (exit, error) in [
            (HookExit::Signaled(9), "the hook was killed"),
            (HookExit::Cancelled, "the hook was killed"),
            (HookExit::SpawnFailed("no such file".into()), "no such file"),
            (HookExit::Responded(500), "HTTP status 500"),
        ] {
            let read = interpret((&exit, 1000), r#"{"decision":"deny"}"#, "");
            assert_eq!(read.decision, Decision::Allow);
            assert_eq!(read.status, RunStatus::Failed);
            assert_eq!(read.error.as_deref(), Some(error));
        }
    }

    #[test]
    fn a_timed_out_run_is_ignored() {
        let read = interpret((&HookExit::TimedOut, 1000), r#"{"decision":"deny"}"#, "");
        assert_eq!(read.decision, Decision::Allow);
        assert_eq!(read.error.as_deref(), Some("Hook timed out after 1000ms"));
    }

    /// `x_parallel_merge`: reasons and contexts joined with a newline.
    #[test]
    fn parallel_runs_merge_by_geminis_rules() {
        let runs = [
            exited(0, r#"{"decision":"allow"}"#, ""),
            exited(0, r#"{"decision":"deny","reason":"REASON-1"}"#, ""),
            exited(
                0,
                r#"{"decision":"block","reason":"REASON-2","hookSpecificOutput":{"additionalContext":"<b>"}}"#,
                "",
            ),
        ];
        let merged = merge(&runs);
        assert!(merged.deny);
        assert_eq!(
            before_tool_block_text(merged.reason.as_deref()),
            "Tool execution blocked: REASON-1\nREASON-2"
        );
        assert_eq!(
            hook_context(merged.additional_context.as_deref().unwrap()),
            "<hook_context>&lt;b&gt;</hook_context>"
        );
        assert_eq!(
            before_tool_block_text(None),
            "Tool execution blocked: No reason provided"
        );
    }

    /// `bt_tool_input_two_hooks`, `at_tail_two_hooks`: of several runs'
    /// `tool_input`s and tail calls, the last in configuration order wins
    /// whole (no key of an earlier `tool_input` survives); a run without
    /// one changes nothing.
    #[test]
    fn the_last_runs_tool_input_and_tail_call_win_whole() {
        let specific =
            |specific: &str| exited(0, &format!(r#"{{"hookSpecificOutput":{specific}}}"#), "");
        let runs = [
            specific(
                r#"{"tool_input":{"command":"echo A","description":"from A"},
                    "tailToolCallRequest":{"name":"a","args":{}}}"#,
            ),
            specific(
                r#"{"tool_input":{"command":"echo B"},"tailToolCallRequest":{"name":"b","args":{}}}"#,
            ),
            specific(r#"{"additionalContext":"c"}"#),
        ];
        let merged = merge(&runs);
        assert_eq!(
            merged.tool_input,
            Some(serde_json::json!({"command": "echo B"}))
        );
        assert_eq!(merged.tail_call.unwrap().name, TailName::Named("b".into()));
    }

    /// `at_tail_later_*`, `bt_tool_input_later_*`: a later run whose
    /// `tool_input` / `tailToolCallRequest` is there but `null`, a string
    /// or an array cancels an earlier run's object; a later run without
    /// the key (`*_later_absent`) leaves it, and a later object wins again.
    #[test]
    fn a_later_runs_key_that_is_no_object_cancels_an_earlier_object() {
        let specific =
            |specific: &str| exited(0, &format!(r#"{{"hookSpecificOutput":{specific}}}"#), "");
        let first = specific(
            r#"{"tool_input":{"command":"echo A"},
                "tailToolCallRequest":{"name":"run_shell_command","args":{"command":"echo A"}}}"#,
        );
        for later in ["null", r#""echo B""#, r#"["echo B"]"#] {
            let later = specific(&format!(
                r#"{{"tool_input":{later},"tailToolCallRequest":{later}}}"#
            ));
            let merged = merge([&first, &later]);
            assert_eq!(merged.tool_input, None, "{later:?}");
            assert_eq!(merged.tail_call, None, "{later:?}");
            let again = merge([&first, &later, &first]);
            assert!(again.tool_input.is_some() && again.tail_call.is_some());
        }
        let absent = specific(r#"{"additionalContext":"from later"}"#);
        let merged = merge([&first, &absent]);
        assert_eq!(
            merged.tool_input,
            Some(serde_json::json!({"command": "echo A"}))
        );
        assert!(merged.tail_call.is_some());
    }

    /// Each key of the output is read on its own, as Gemini's JavaScript
    /// reads it: one of the wrong type counts as absent and its neighbours
    /// still count; `hookSpecificOutput` and its objects count only as
    /// objects (an array never stands for one).
    #[test]
    fn a_key_of_the_wrong_type_is_ignored_and_spoils_nothing_else() {
        let read = exited(
            0,
            r#"{"decision":3,"reason":"why","continue":"no","stopReason":"s","systemMessage":["m"],
                "hookSpecificOutput":{"additionalContext":1,"tool_input":"x","clearContext":"yes",
                "tailToolCallRequest":{"name":5,"args":{"a":1}}}}"#,
            "",
        );
        assert_eq!(read.decision, Decision::Allow);
        assert_eq!(read.stop, None);
        assert_eq!(read.system_message, None);
        assert_eq!(read.additional_context, None);
        assert_eq!(read.tool_input, Keyed::Present(None));
        assert!(!read.clear_context);
        // Gemini acts on a tail call whatever its name holds.
        let tail = read.tail_call.given().cloned().unwrap();
        assert_eq!(tail.name, TailName::Printed("5".into()));
        assert_eq!(read.error, None);

        let read = exited(
            0,
            r#"{"decision":"deny","reason":7,"continue":false,"stopReason":["s"],"systemMessage":"m",
                "hookSpecificOutput":{"additionalContext":"ctx","tool_input":{"command":"pwd"},
                "clearContext":true,"tailToolCallRequest":{"name":"t","args":"not an object"}}}"#,
            "",
        );
        assert_eq!(read.decision, Decision::Deny { reason: None });
        assert_eq!(read.stop, Some(None));
        assert_eq!(read.system_message.as_deref(), Some("m"));
        assert_eq!(read.additional_context.as_deref(), Some("ctx"));
        assert_eq!(
            read.tool_input.given(),
            Some(&serde_json::json!({"command": "pwd"}))
        );
        assert!(read.clear_context);
        let tail = read.tail_call.given().cloned().unwrap();
        assert_eq!(
            (tail.name, tail.args),
            (TailName::Named("t".into()), TailArgs::NotObject)
        );

        // An array in place of an object reads as no object at all.
        let read = exited(
            0,
            r#"{"systemMessage":"m","hookSpecificOutput":["ctx",{"command":"pwd"},true]}"#,
            "",
        );
        assert_eq!(read.system_message.as_deref(), Some("m"));
        assert_eq!(read.additional_context, None);
        assert_eq!(read.tool_input, Keyed::Absent);
        assert!(!read.clear_context);
    }
}
