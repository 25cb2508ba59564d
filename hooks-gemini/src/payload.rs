//! Gemini's stdin payloads, one typed struct per event, serialized in the
//! key order Gemini CLI 0.61 sends: the common keys (`session_id`,
//! `transcript_path`, `cwd`, `hook_event_name`, `timestamp`) first, then the
//! event's own. Sent as compact JSON without a trailing newline
//! (`dsh_hooks::Rules::stdin`).

use dsh_hooks::lenient::Lenient;
use dsh_hooks::names::Tabled;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::GeminiEvent;

/// The keys every payload starts with.
#[derive(Debug, Clone, Serialize)]
pub struct Common {
    /// The session id.
    pub session_id: String,
    /// Gemini's chat-recording file; dsh writes none and sends `null`.
    pub transcript_path: Option<String>,
    /// The session's working directory.
    pub cwd: String,
    /// The event's name.
    pub hook_event_name: &'static str,
    /// ISO 8601 UTC with milliseconds.
    pub timestamp: String,
}

impl Common {
    /// The common keys for `event` now.
    pub fn new(session_id: &str, cwd: &str, event: GeminiEvent) -> Self {
        Common {
            session_id: session_id.to_owned(),
            transcript_path: None,
            cwd: cwd.to_owned(),
            hook_event_name: event.as_str(),
            timestamp: now(),
        }
    }
}

/// The current time as Gemini writes it (`2026-12-01T14:40:03.085Z`).
pub fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// SessionStart.
#[derive(Debug, Clone, Serialize)]
pub struct SessionStart {
    /// Common keys.
    #[serde(flatten)]
    pub common: Common,
    /// `startup`, `resume` or `clear`.
    pub source: &'static str,
}

/// SessionEnd.
#[derive(Debug, Clone, Serialize)]
pub struct SessionEnd {
    /// Common keys.
    #[serde(flatten)]
    pub common: Common,
    /// `exit`, `clear`, …
    pub reason: &'static str,
}

/// BeforeAgent.
#[derive(Debug, Clone, Serialize)]
pub struct BeforeAgent {
    /// Common keys.
    #[serde(flatten)]
    pub common: Common,
    /// The user's prompt.
    pub prompt: String,
}

/// AfterAgent.
#[derive(Debug, Clone, Serialize)]
pub struct AfterAgent {
    /// Common keys.
    #[serde(flatten)]
    pub common: Common,
    /// The turn's original prompt.
    pub prompt: String,
    /// The turn's model texts, joined with `\n`.
    pub prompt_response: String,
    /// Whether this answer follows an AfterAgent retry.
    pub stop_hook_active: bool,
}

/// BeforeTool.
#[derive(Debug, Clone, Serialize)]
pub struct BeforeTool {
    /// Common keys.
    #[serde(flatten)]
    pub common: Common,
    /// Gemini's tool name.
    pub tool_name: String,
    /// The arguments under Gemini's names.
    pub tool_input: Value,
    /// On a call an AfterTool hook requested (`tailToolCallRequest`): the
    /// name of the call it follows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_request_name: Option<String>,
}

/// AfterTool.
#[derive(Debug, Clone, Serialize)]
pub struct AfterTool {
    /// Common keys.
    #[serde(flatten)]
    pub common: Common,
    /// Gemini's tool name.
    pub tool_name: String,
    /// The arguments the tool ran with, under Gemini's names.
    pub tool_input: Value,
    /// `{"llmContent", "returnDisplay", "error"?}`.
    pub tool_response: crate::tools::ToolResponse,
    /// As in [`BeforeTool`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_request_name: Option<String>,
}

/// PreCompress.
#[derive(Debug, Clone, Serialize)]
pub struct PreCompress {
    /// Common keys.
    #[serde(flatten)]
    pub common: Common,
    /// `auto` or `manual`.
    pub trigger: &'static str,
}

/// Notification.
#[derive(Debug, Clone, Serialize)]
pub struct Notification {
    /// Common keys.
    #[serde(flatten)]
    pub common: Common,
    /// `ToolPermission`.
    pub notification_type: &'static str,
    /// `Tool <title> requires execution`.
    pub message: String,
    /// What is to be confirmed.
    pub details: ConfirmationDetails,
}

/// The `details` of a ToolPermission Notification, by kind of call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ConfirmationDetails {
    /// A shell command.
    Exec {
        /// `Confirm Shell Command`.
        title: String,
        /// The command.
        command: String,
        /// Its first word.
        #[serde(rename = "rootCommand")]
        root_command: String,
    },
    /// A file write or edit.
    Edit {
        /// `Confirm Edit`.
        title: String,
        /// The file's path as given.
        #[serde(rename = "fileName")]
        file_name: String,
    },
    /// Any other tool.
    Info {
        /// `Confirm TOOL`.
        title: String,
    },
}

impl ConfirmationDetails {
    /// The title, which the Notification's `message` names.
    pub fn title(&self) -> &str {
        match self {
            ConfirmationDetails::Exec { title, .. }
            | ConfirmationDetails::Edit { title, .. }
            | ConfirmationDetails::Info { title } => title,
        }
    }
}

/// A model event (BeforeModel, AfterModel, BeforeToolSelection): the
/// common keys, then the event's fields in order.
#[derive(Debug, Clone, Serialize)]
pub struct ModelEvent {
    /// Common keys.
    #[serde(flatten)]
    pub common: Common,
    /// `llm_request`, and on AfterModel `llm_response`.
    #[serde(flatten)]
    pub fields: crate::llm::ModelFields,
}

/// One firing's payload, kept typed until a hook's stdin is written.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Payload {
    /// SessionStart.
    SessionStart(SessionStart),
    /// SessionEnd.
    SessionEnd(SessionEnd),
    /// BeforeAgent.
    BeforeAgent(BeforeAgent),
    /// AfterAgent.
    AfterAgent(AfterAgent),
    /// BeforeTool.
    BeforeTool(BeforeTool),
    /// AfterTool.
    AfterTool(AfterTool),
    /// PreCompress.
    PreCompress(PreCompress),
    /// Notification.
    Notification(Notification),
    /// The model events.
    Model(ModelEvent),
}

/// The keys of dsh's tool arguments a confirmation shows, each read on its
/// own (a key of the wrong type, or arguments that are not an object, read
/// as empty text).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Confirmed {
    command: Lenient<String>,
    file_path: Lenient<String>,
    /// Keeps a JSON array from being read as this struct, field by field.
    #[serde(flatten)]
    _other: IgnoredAny,
}

/// The Notification `details` Gemini sends for a call awaiting confirmation.
pub fn confirmation_details(tool: &str, arguments: &Value) -> ConfirmationDetails {
    let Confirmed {
        command, file_path, ..
    } = Confirmed::deserialize(arguments).unwrap_or_default();
    let text = |key: Lenient<String>| key.0.unwrap_or_default();
    match tool {
        "bash" => {
            let command = text(command);
            let root_command = command
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned();
            ConfirmationDetails::Exec {
                title: "Confirm Shell Command".to_owned(),
                command,
                root_command,
            }
        }
        "write" | "edit" => ConfirmationDetails::Edit {
            title: "Confirm Edit".to_owned(),
            file_name: text(file_path),
        },
        other => ConfirmationDetails::Info {
            title: format!("Confirm {}", crate::tools::hook_tool_name(other)),
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Key order and compactness as captured (`bt_deny_json`).
    #[test]
    fn payloads_keep_geminis_key_order_and_have_no_trailing_newline() {
        let mut common = Common::new("S", "/p", GeminiEvent::BeforeTool);
        common.timestamp = "T".into();
        let payload = dsh_protocol::ExactJson::of(&BeforeTool {
            common,
            tool_name: "run_shell_command".into(),
            tool_input: serde_json::json!({"command": "echo hi"}),
            original_request_name: None,
        });
        let stdin = serde_json::to_string(&payload).unwrap();
        assert_eq!(
            stdin,
            r#"{"session_id":"S","transcript_path":null,"cwd":"/p","hook_event_name":"BeforeTool","timestamp":"T","tool_name":"run_shell_command","tool_input":{"command":"echo hi"}}"#
        );
    }

    /// The `details` keys in the order Gemini sends them.
    #[test]
    fn confirmation_details_are_tagged_by_kind() {
        let shell = confirmation_details("bash", &serde_json::json!({"command": "rm -rf x"}));
        assert_eq!(
            serde_json::to_string(&shell).unwrap(),
            r#"{"type":"exec","title":"Confirm Shell Command","command":"rm -rf x","rootCommand":"rm"}"#
        );
        let edit = confirmation_details("edit", &serde_json::json!({"file_path": "a.txt"}));
        assert_eq!(
            serde_json::to_string(&edit).unwrap(),
            r#"{"type":"edit","title":"Confirm Edit","fileName":"a.txt"}"#
        );
        let other = confirmation_details("glob", &serde_json::json!({}));
        assert_eq!(
            serde_json::to_string(&other).unwrap(),
            r#"{"type":"info","title":"Confirm glob"}"#
        );
        assert_eq!(other.title(), "Confirm glob");
        // A key of the wrong type, or arguments that are not an object,
        // show as empty text.
        for arguments in [
            serde_json::json!({"command": 7, "file_path": ["a.txt"]}),
            serde_json::json!(["rm -rf x", "a.txt"]),
            serde_json::json!("rm -rf x"),
        ] {
            assert_eq!(
                serde_json::to_string(&confirmation_details("bash", &arguments)).unwrap(),
                r#"{"type":"exec","title":"Confirm Shell Command","command":"","rootCommand":""}"#
            );
            assert_eq!(
                serde_json::to_string(&confirmation_details("write", &arguments)).unwrap(),
                r#"{"type":"edit","title":"Confirm Edit","fileName":""}"#
            );
        }
    }

    #[test]
    fn timestamps_are_iso_utc_with_milliseconds() {
        let now = now();
        assert_eq!(now.len(), 24, "{now}");
        assert!(now.ends_with('Z'));
    }
}
