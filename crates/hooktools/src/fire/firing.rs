//! The events `dsh hooks test` fires and the canonical firing a hook
//! payload (and the command's flags) describes.

use std::sync::Arc;

use anyhow::bail;
use dsh_hooks::registry::HookDialect;
use dsh_seams::{
    Disposition, Notification, NotificationKind, SessionEndReason, SessionStartSource, ToolOutcome,
};
use dsh_tools::builtin::BashOutput;
use serde::Deserialize;
use serde_json::{Value, json};

use super::event::TestEvent;
use super::fields::LifecycleFields;
use super::payload::{ObjectOnly, TestPayload};

/// Everything one firing needs, in dsh's canonical terms.
#[derive(Debug, Clone)]
pub(crate) struct Firing {
    pub event: TestEvent,
    pub session_id: String,
    pub turn: u64,
    pub call_id: String,
    /// dsh tool name.
    pub tool: String,
    pub arguments: Value,
    pub tool_response: Option<Value>,
    pub error: Option<String>,
    pub prompt: String,
    pub source: SessionStartSource,
    pub stop_hook_active: bool,
    pub last_assistant_message: String,
    pub end_reason: SessionEndReason,
    pub notification: Notification,
    /// The fields of the events `lifecycle` fires.
    pub lifecycle: LifecycleFields,
}

/// A bash `tool_response` object as a payload gives it (Claude Code's
/// `stdout` / `stderr`), each field read leniently; anything but an object
/// has neither.
#[derive(Debug, Default, Deserialize)]
struct BashResponse {
    #[serde(default, deserialize_with = "super::payload::lenient")]
    stdout: Option<String>,
    #[serde(default, deserialize_with = "super::payload::lenient")]
    stderr: Option<String>,
}

/// dsh's tool name for a hook tool name of any registered dialect (the
/// dialects own the maps; dsh's own names pass through), with the dialect
/// whose name it was.
fn dsh_tool(name: &str) -> anyhow::Result<(String, Option<Arc<dyn HookDialect>>)> {
    for dialect in dsh_core::dialects::registry().iter() {
        match dialect.dsh_tool_name(name) {
            Ok(Some(tool)) => return Ok((tool, Some(Arc::clone(dialect)))),
            Ok(None) => {}
            Err(why) => bail!("{why}"),
        }
    }
    Ok((name.to_owned(), None))
}

fn default_arguments(tool: &str) -> Value {
    match tool {
        "bash" => json!({"command": "echo hello"}),
        "read" => json!({"file_path": "README.md"}),
        "write" => json!({"file_path": "example.txt", "content": "hello\n"}),
        "edit" => {
            json!({"file_path": "example.txt", "old_string": "hello", "new_string": "goodbye"})
        }
        "glob" => json!({"pattern": "**/*"}),
        "grep" => json!({"pattern": "TODO"}),
        _ => json!({}),
    }
}

impl Firing {
    /// From a payload's fields, already read.
    pub(crate) fn from_fields(
        event: TestEvent,
        tool: Option<&str>,
        fields: TestPayload,
    ) -> anyhow::Result<Firing> {
        let tool_name = tool.map(str::to_owned).or_else(|| fields.tool_name.clone());
        let (tool, named_by) = match (&tool_name, event.is_tool_event()) {
            (Some(name), _) => dsh_tool(name)?,
            (None, true) => ("bash".to_owned(), None),
            (None, false) => (String::new(), None),
        };
        let arguments = match &fields.tool_input {
            // The argument names of the dialect that named the tool.
            Some(input) if input.is_object() => named_by
                .and_then(|dialect| dialect.dsh_arguments(&tool, input))
                .unwrap_or_else(|| input.clone()),
            Some(other) => bail!("`tool_input` must be an object, not {other}"),
            None => default_arguments(&tool),
        };
        let source = match fields.source.as_deref() {
            None | Some("startup") => SessionStartSource::Startup,
            Some("resume") => SessionStartSource::Resume,
            Some("clear") => SessionStartSource::Clear,
            Some("compact") => SessionStartSource::Compact,
            Some(other) => {
                bail!("unknown SessionStart source `{other}` (startup, resume, clear, compact)")
            }
        };
        let end_reason = match fields.reason.as_deref() {
            Some("prompt_input_exit") => SessionEndReason::Exit,
            _ => SessionEndReason::Other,
        };
        let kind = match fields.notification_type.as_deref() {
            Some("idle_prompt") => NotificationKind::Idle,
            Some("elicitation_response") => NotificationKind::ElicitationResponse,
            _ => NotificationKind::PermissionPrompt,
        };
        let session_id = fields
            .session_id
            .clone()
            .unwrap_or_else(|| "hooks-test".to_owned());
        // Bridges build paths (the transcript) from the session id.
        dsh_session::validate_session_id(&session_id)
            .map_err(|error| anyhow::anyhow!("the payload's session_id: {error}"))?;
        Ok(Firing {
            event,
            session_id,
            turn: 1,
            call_id: fields
                .tool_use_id
                .clone()
                .unwrap_or_else(|| "call_hooks_test".to_owned()),
            tool,
            arguments,
            tool_response: fields.tool_response.clone(),
            error: fields.error.clone(),
            prompt: fields.prompt.clone().unwrap_or_else(|| "hello".to_owned()),
            source,
            stop_hook_active: fields.stop_hook_active.unwrap_or(false),
            last_assistant_message: fields.last_assistant_message.clone().unwrap_or_default(),
            end_reason,
            notification: Notification {
                kind,
                message: fields
                    .message
                    .clone()
                    .unwrap_or_else(|| "dsh needs your permission".to_owned()),
            },
            lifecycle: LifecycleFields::from_payload(event, &fields)?,
        })
    }

    /// The synthetic outcome a post-execute seam sees.
    pub(super) fn outcome(&self) -> ToolOutcome {
        let failed = self.event == TestEvent::PostToolUseFailure;
        let response = self.tool_response.clone();
        let (content, value) = match self.tool.as_str() {
            "bash" => {
                let (stdout, stderr) = match &response {
                    Some(Value::String(text)) => (text.clone(), String::new()),
                    Some(value) => {
                        let given = ObjectOnly::<BashResponse>::deserialize(value)
                            .map(|object| object.0)
                            .unwrap_or_default();
                        (
                            given.stdout.unwrap_or_default(),
                            given.stderr.unwrap_or_default(),
                        )
                    }
                    None => (String::new(), String::new()),
                };
                let code = if failed { 1 } else { 0 };
                let content = if failed {
                    self.error
                        .clone()
                        .unwrap_or_else(|| format!("Exit code {code}\n{stdout}{stderr}"))
                } else {
                    format!("{stdout}{stderr}")
                };
                let value = BashOutput {
                    stdout,
                    stderr,
                    exit_code: Some(code),
                    interrupted: false,
                    timed_out: false,
                    background_task_id: None,
                };
                (content, serde_json::to_value(value).ok())
            }
            _ => match response {
                Some(Value::String(text)) => (text, None),
                Some(value) => (value.to_string(), Some(value)),
                None => (
                    self.error
                        .clone()
                        .unwrap_or_else(|| "(synthetic tool output)".to_owned()),
                    None,
                ),
            },
        };
        ToolOutcome {
            is_error: failed,
            content,
            value,
            disposition: Disposition::Executed,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn bash_outcome(event: TestEvent, response: Value) -> ToolOutcome {
        let payload = json!({"tool_name": "bash", "tool_response": response});
        Firing::from_fields(event, None, TestPayload::of(&payload.to_string(), &[]))
            .unwrap()
            .outcome()
    }

    #[test]
    fn a_bash_response_is_read_leniently() {
        let outcome = bash_outcome(
            TestEvent::PostToolUse,
            json!({"stdout": "out\n", "stderr": 3, "interrupted": true}),
        );
        assert_eq!(outcome.content, "out\n");
        assert_eq!(
            outcome.value.unwrap().to_string(),
            r#"{"stdout":"out\n","stderr":"","exit_code":0,"interrupted":false,"timed_out":false}"#
        );
        let outcome = bash_outcome(TestEvent::PostToolUseFailure, json!("text"));
        assert_eq!(outcome.content, "Exit code 1\ntext");
        assert_eq!(outcome.value.unwrap()["exit_code"], json!(1));
        // A list is not read field by field.
        let outcome = bash_outcome(TestEvent::PostToolUse, json!(["a", "b"]));
        assert_eq!(outcome.content, "");
    }
}
