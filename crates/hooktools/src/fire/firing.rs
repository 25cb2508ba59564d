//! The events `dsh hooks test` fires and the canonical firing a hook
//! payload (and the command's flags) describes.

use std::sync::Arc;

use anyhow::bail;
use dsh_hooks::registry::HookDialect;
use dsh_seams::{
    Disposition, Notification, NotificationKind, SessionEndReason, SessionStartSource, ToolOutcome,
};
use serde_json::{Value, json};

use super::event::TestEvent;
use super::fields::LifecycleFields;
use super::payload::TestPayload;

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
    /// From a hook payload (Claude Code or Codex shape; any subset of fields).
    pub(crate) fn from_payload(
        event: TestEvent,
        tool: Option<&str>,
        payload: &Value,
    ) -> anyhow::Result<Firing> {
        let fields = TestPayload::of(payload);
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
                let field = |key: &str| {
                    response
                        .as_ref()
                        .and_then(|r| r.get(key))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                let stdout = match &response {
                    Some(Value::String(text)) => text.clone(),
                    _ => field("stdout"),
                };
                let stderr = field("stderr");
                let code = if failed { 1 } else { 0 };
                let content = if failed {
                    self.error
                        .clone()
                        .unwrap_or_else(|| format!("Exit code {code}\n{stdout}{stderr}"))
                } else {
                    format!("{stdout}{stderr}")
                };
                (
                    content,
                    Some(
                        json!({"stdout": stdout, "stderr": stderr, "exit_code": code, "interrupted": false, "timed_out": false}),
                    ),
                )
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
