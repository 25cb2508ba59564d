//! Codex's `exec --json` events, and the translation of a dsh session's
//! events into them.
//!
//! The shapes and key orders are those the real `codex exec --json` prints
//! (the captures under `shared/reference/codex/captures/*/codex-output.json`)
//! and the Codex SDK parses: `type` first, an item's `id` before its `type`.
//!
//! What dsh's tools become:
//! - `bash` → `command_execution` (`command` is the shell line dsh runs,
//!   `bash -c '…'`); a call policy stopped before it ran completes
//!   `declined`, as Codex's rejected commands do;
//! - `write` → `file_change` of kind `add` (a new file) or `update`, `edit` →
//!   `update`;
//! - `mcp__<server>__<tool>` → `mcp_tool_call`, naming the server and tool
//!   as the call's logged `origin` does (as configured, before dsh's name
//!   made them `[A-Za-z0-9_-]`), else as read back from the name;
//! - each non-empty assistant text → `agent_message`;
//! - `read`, `glob`, `grep` and `agent` have no Codex item (Codex reads
//!   through its shell) and print none; nor do a subagent's own steps.
//!
//! dsh's log has no reasoning summaries and no plan tool, so no `reasoning`
//! or `todo_list` item is printed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use dsh_protocol::{
    AssistantMessageEvent, Event, EventBody, ToolCallEvent, ToolResultEvent, TurnEndEvent,
    TurnEndReason,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One line of `--json` output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ThreadEvent {
    /// The first line: the thread (dsh session) id.
    #[serde(rename = "thread.started")]
    ThreadStarted {
        /// The dsh session id; `dsh exec resume ID` continues it.
        thread_id: String,
    },
    /// A turn opens.
    #[serde(rename = "turn.started")]
    TurnStarted {},
    /// The turn ended normally.
    #[serde(rename = "turn.completed")]
    TurnCompleted {
        /// The turn's tokens, summed over its model requests.
        usage: Usage,
    },
    /// The turn failed (the SDK throws with this message).
    #[serde(rename = "turn.failed")]
    TurnFailed {
        /// What failed.
        error: ThreadError,
    },
    /// An item begins.
    #[serde(rename = "item.started")]
    ItemStarted {
        /// The item.
        item: ThreadItem,
    },
    /// An item changed.
    #[serde(rename = "item.updated")]
    ItemUpdated {
        /// The item.
        item: ThreadItem,
    },
    /// An item reached its final state.
    #[serde(rename = "item.completed")]
    ItemCompleted {
        /// The item.
        item: ThreadItem,
    },
    /// An unrecoverable error (printed before `turn.failed`).
    #[serde(rename = "error")]
    Error {
        /// What went wrong.
        message: String,
    },
}

/// `turn.completed`'s token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens.
    pub input_tokens: u64,
    /// Of those, read from the provider's prompt cache.
    pub cached_input_tokens: u64,
    /// Of those, written to the provider's prompt cache.
    pub cache_write_input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Reasoning tokens (dsh's providers do not report them apart: 0).
    pub reasoning_output_tokens: u64,
}

/// `turn.failed`'s error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadError {
    /// The message.
    pub message: String,
}

/// An item: its id, then its type and fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadItem {
    /// `item_0`, `item_1`, … in the order items begin.
    pub id: String,
    /// The type and its fields.
    #[serde(flatten)]
    pub details: ItemDetails,
}

/// The status of a command, file change or MCP call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    /// Running.
    InProgress,
    /// Done (a command: exit code 0).
    Completed,
    /// Done and failed (a command: non-zero exit, signal or timeout).
    Failed,
    /// Never ran: a hook, rule or guard stopped it.
    Declined,
}

/// One file of a `file_change`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileUpdateChange {
    /// The absolute path.
    pub path: String,
    /// `add`, `delete` or `update`.
    pub kind: String,
}

/// An MCP call's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpResult {
    /// The content blocks (dsh keeps the result's text: one text block).
    pub content: Vec<McpContent>,
    /// Structured content: dsh's log does not keep it, so it is always `null`.
    pub structured_content: (),
}

/// A content block of an MCP result, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum McpContent {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
}

/// An MCP call's error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpError {
    /// What the call reported.
    pub message: String,
}

/// One entry of a `todo_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    /// The step.
    pub text: String,
    /// Whether it is done.
    pub completed: bool,
}

/// The item types, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ItemDetails {
    /// The model's text.
    AgentMessage {
        /// The text.
        text: String,
    },
    /// A reasoning summary.
    Reasoning {
        /// The summary.
        text: String,
    },
    /// A shell command.
    CommandExecution {
        /// The command line run.
        command: String,
        /// Its stdout and stderr.
        aggregated_output: String,
        /// Its exit code, once it exited.
        exit_code: Option<i32>,
        /// Its state.
        status: ItemStatus,
    },
    /// Files written or edited.
    FileChange {
        /// The files.
        changes: Vec<FileUpdateChange>,
        /// Its state.
        status: ItemStatus,
    },
    /// A tool of an MCP server.
    McpToolCall {
        /// The server's name.
        server: String,
        /// The tool's name.
        tool: String,
        /// The arguments sent.
        arguments: Value,
        /// The result, once it succeeded.
        result: Option<McpResult>,
        /// The error, once it failed.
        error: Option<McpError>,
        /// Its state.
        status: ItemStatus,
    },
    /// The agent's plan.
    TodoList {
        /// The steps.
        items: Vec<TodoItem>,
    },
    /// A non-fatal error or warning.
    Error {
        /// The message.
        message: String,
    },
}

/// A tool call with an item, waiting for its result.
#[derive(Debug, Clone)]
struct Open {
    id: String,
    details: ItemDetails,
}

/// Turns a session's events into Codex's, in order. Feed it every event
/// the session appends ([`Translator::on_event`]).
#[derive(Debug)]
pub struct Translator {
    cwd: PathBuf,
    next_id: u64,
    open: HashMap<String, Open>,
    usage: Usage,
    last_message: Option<String>,
    ended: Option<TurnEndReason>,
    failure: Option<String>,
}

/// How a `bash` tool result reads: exit code and output.
fn command_result(content: &str, is_error: bool) -> (Option<i32>, String) {
    if !is_error {
        let output = if content == "(Bash completed with no output)" {
            String::new()
        } else {
            with_newline(content)
        };
        return (Some(0), output);
    }
    let (heading, rest) = content.split_once('\n').unwrap_or((content, ""));
    match heading
        .strip_prefix("Exit code ")
        .and_then(|code| code.trim().parse::<i32>().ok())
    {
        Some(code) => (Some(code), with_newline(rest)),
        None => (None, with_newline(content)),
    }
}

/// dsh trims a command's trailing newlines; Codex's output keeps the last.
fn with_newline(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_owned()
    } else {
        format!("{text}\n")
    }
}

/// The `command` of a `bash` call (empty when it has no string one).
#[derive(Default, Deserialize)]
struct BashCall {
    #[serde(default)]
    command: String,
}

/// The `file_path` of a `write` or `edit` call (empty when it has no string
/// one).
#[derive(Default, Deserialize)]
struct FileCall {
    #[serde(default)]
    file_path: String,
}

fn with_status(details: &ItemDetails, status: ItemStatus) -> ItemDetails {
    let mut details = details.clone();
    match &mut details {
        ItemDetails::CommandExecution { status: s, .. }
        | ItemDetails::FileChange { status: s, .. }
        | ItemDetails::McpToolCall { status: s, .. } => *s = status,
        ItemDetails::AgentMessage { .. }
        | ItemDetails::Reasoning { .. }
        | ItemDetails::TodoList { .. }
        | ItemDetails::Error { .. } => {}
    }
    details
}

impl Translator {
    /// A translator for a session in `cwd` (relative file paths resolve there).
    pub fn new(cwd: &Path) -> Self {
        Translator {
            cwd: cwd.to_owned(),
            next_id: 0,
            open: HashMap::new(),
            usage: Usage::default(),
            last_message: None,
            ended: None,
            failure: None,
        }
    }

    fn item(&mut self, details: ItemDetails) -> ThreadItem {
        let id = format!("item_{}", self.next_id);
        self.next_id += 1;
        ThreadItem { id, details }
    }

    /// A warning as Codex prints one: an `error` item.
    pub fn warning(&mut self, message: &str) -> ThreadEvent {
        ThreadEvent::ItemCompleted {
            item: self.item(ItemDetails::Error {
                message: message.to_owned(),
            }),
        }
    }

    /// The last agent message of the turn.
    pub fn last_message(&self) -> Option<&str> {
        self.last_message.as_deref()
    }

    /// How the turn ended, once it did.
    pub fn ended(&self) -> Option<TurnEndReason> {
        self.ended
    }

    /// The message of a failed turn.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// The Codex events `event` stands for (often none).
    pub fn on_event(&mut self, event: &Event) -> Vec<ThreadEvent> {
        // A subagent's own steps stay inside its `agent` call.
        if event.agent_id.is_some() {
            return Vec::new();
        }
        match &event.body {
            EventBody::TurnStart(_) => {
                self.usage = Usage::default();
                self.last_message = None;
                vec![ThreadEvent::TurnStarted {}]
            }
            EventBody::AssistantMessage(AssistantMessageEvent { content, usage, .. }) => {
                if let Some(usage) = usage {
                    self.usage.input_tokens += usage.input_tokens;
                    self.usage.output_tokens += usage.output_tokens;
                    self.usage.cached_input_tokens += usage.cache_read_input_tokens;
                    self.usage.cache_write_input_tokens += usage.cache_creation_input_tokens;
                }
                if content.trim().is_empty() {
                    return Vec::new();
                }
                self.last_message = Some(content.clone());
                vec![ThreadEvent::ItemCompleted {
                    item: self.item(ItemDetails::AgentMessage {
                        text: content.clone(),
                    }),
                }]
            }
            EventBody::ToolCall(call) => self.tool_call(call),
            EventBody::ToolResult(ToolResultEvent {
                call_id,
                is_error,
                content,
                disposition,
                ..
            }) => self.tool_result(call_id, *is_error, content, disposition.as_deref()),
            EventBody::TurnEnd(TurnEndEvent {
                reason, message, ..
            }) => self.turn_end(*reason, message.as_deref()),
            EventBody::SessionHeader(_)
            | EventBody::UserMessage(_)
            | EventBody::PromptBlocked(_)
            | EventBody::ContextMessage(_)
            | EventBody::SteeringMessage(_)
            | EventBody::CompactionStarted(_)
            | EventBody::CompactionCompleted(_)
            | EventBody::CompactionFailed(_)
            | EventBody::HookInvoked(_)
            | EventBody::HookResult(_)
            | EventBody::SeamNote(_)
            | EventBody::SessionCleared { .. }
            | EventBody::ModelSwitched(_) => Vec::new(),
        }
    }

    fn tool_call(&mut self, call: &ToolCallEvent) -> Vec<ThreadEvent> {
        let ToolCallEvent {
            call_id,
            tool,
            arguments,
            ..
        } = call;
        let details = match tool.as_str() {
            "bash" => {
                let command = BashCall::deserialize(arguments).unwrap_or_default().command;
                let quoted = shlex::try_quote(&command)
                    .map_or_else(|_| command.clone(), |quoted| quoted.into_owned());
                ItemDetails::CommandExecution {
                    command: format!("bash -c {quoted}"),
                    aggregated_output: String::new(),
                    exit_code: None,
                    status: ItemStatus::InProgress,
                }
            }
            "write" | "edit" => {
                let file = FileCall::deserialize(arguments).unwrap_or_default();
                let path = self.cwd.join(file.file_path);
                // Called as the call is logged, before it runs: whether the
                // file is there yet tells a new file from an update.
                let kind = if tool == "write" && !path.exists() {
                    "add"
                } else {
                    "update"
                };
                ItemDetails::FileChange {
                    changes: vec![FileUpdateChange {
                        path: path.display().to_string(),
                        kind: kind.to_owned(),
                    }],
                    status: ItemStatus::InProgress,
                }
            }
            // The server and tool as configured and as the server names
            // it, not as dsh's sanitized tool name spells them.
            _ => match call.mcp_names() {
                Some((server, tool)) => ItemDetails::McpToolCall {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                    arguments: arguments.clone(),
                    result: None,
                    error: None,
                    status: ItemStatus::InProgress,
                },
                None => return Vec::new(),
            },
        };
        let item = self.item(details);
        self.open.insert(
            call_id.to_owned(),
            Open {
                id: item.id.clone(),
                details: item.details.clone(),
            },
        );
        vec![ThreadEvent::ItemStarted { item }]
    }

    fn tool_result(
        &mut self,
        call_id: &str,
        is_error: bool,
        content: &str,
        disposition: Option<&str>,
    ) -> Vec<ThreadEvent> {
        let Some(open) = self.open.remove(call_id) else {
            return Vec::new();
        };
        let ran = matches!(disposition, None | Some("executed" | "failed"));
        let details = if !ran {
            with_status(&open.details, ItemStatus::Declined)
        } else {
            match open.details {
                ItemDetails::CommandExecution { command, .. } => {
                    let (exit_code, aggregated_output) = command_result(content, is_error);
                    ItemDetails::CommandExecution {
                        command,
                        aggregated_output,
                        exit_code,
                        status: if exit_code == Some(0) {
                            ItemStatus::Completed
                        } else {
                            ItemStatus::Failed
                        },
                    }
                }
                ItemDetails::McpToolCall {
                    server,
                    tool,
                    arguments,
                    ..
                } => {
                    let (result, error, status) = if is_error {
                        (
                            None,
                            Some(McpError {
                                message: content.to_owned(),
                            }),
                            ItemStatus::Failed,
                        )
                    } else {
                        (
                            Some(McpResult {
                                content: vec![McpContent::Text {
                                    text: content.to_owned(),
                                }],
                                structured_content: (),
                            }),
                            None,
                            ItemStatus::Completed,
                        )
                    };
                    ItemDetails::McpToolCall {
                        server,
                        tool,
                        arguments,
                        result,
                        error,
                        status,
                    }
                }
                other @ (ItemDetails::FileChange { .. }
                | ItemDetails::AgentMessage { .. }
                | ItemDetails::Reasoning { .. }
                | ItemDetails::TodoList { .. }
                | ItemDetails::Error { .. }) => with_status(
                    &other,
                    if is_error {
                        ItemStatus::Failed
                    } else {
                        ItemStatus::Completed
                    },
                ),
            }
        };
        vec![ThreadEvent::ItemCompleted {
            item: ThreadItem {
                id: open.id,
                details,
            },
        }]
    }

    fn turn_end(&mut self, reason: TurnEndReason, message: Option<&str>) -> Vec<ThreadEvent> {
        self.ended = Some(reason);
        // Calls the turn left open (an interrupt) end failed.
        let mut events: Vec<ThreadEvent> = {
            let mut open: Vec<Open> = self.open.drain().map(|(_, open)| open).collect();
            open.sort_by(|a, b| a.id.cmp(&b.id));
            open.into_iter()
                .map(|open| ThreadEvent::ItemCompleted {
                    item: ThreadItem {
                        id: open.id,
                        details: with_status(&open.details, ItemStatus::Failed),
                    },
                })
                .collect()
        };
        match reason {
            // A prompt a hook blocked and a hook's `continue: false` end the
            // turn normally in Codex too (zero usage when no request ran).
            TurnEndReason::Completed | TurnEndReason::Rejected | TurnEndReason::Stopped => {
                events.push(ThreadEvent::TurnCompleted { usage: self.usage });
            }
            TurnEndReason::Error | TurnEndReason::MaxSteps | TurnEndReason::Interrupted => {
                let message = message.map_or_else(
                    || format!("the turn ended: {}", reason.as_str()),
                    str::to_owned,
                );
                self.failure = Some(message.clone());
                events.push(ThreadEvent::Error {
                    message: message.clone(),
                });
                events.push(ThreadEvent::TurnFailed {
                    error: ThreadError { message },
                });
            }
        }
        events
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_protocol::ToolOrigin;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn event(body: EventBody) -> Event {
        Event {
            seq: 1,
            ts: "2026-01-01T00:00:00Z".to_owned(),
            body,
            agent_id: None,
        }
    }

    fn lines(events: &[ThreadEvent]) -> Vec<String> {
        events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .collect()
    }

    #[test]
    fn a_command_prints_as_codex_prints_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = Translator::new(dir.path());
        let started = t.on_event(&event(EventBody::ToolCall(ToolCallEvent {
            turn: 1,
            call_id: "c1".into(),
            execution_id: "e".into(),
            parent_execution_id: None,
            tool: "bash".into(),
            arguments: json!({"command": "echo hi"}),
            original_arguments: None,
            rewritten_by: None,
            rewrite_conflicts: Vec::new(),
            provider_call_id: None,
            origin: None,
        })));
        let done = t.on_event(&event(EventBody::ToolResult(ToolResultEvent {
            turn: 1,
            call_id: "c1".into(),
            is_error: false,
            content: "hi".into(),
            disposition: Some("executed".into()),
            decided_by: None,
            rewrite: None,
            content_blocks: None,
            shown_input: None,
        })));
        assert_eq!(
            lines(&[started, done].concat()),
            [
                r#"{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"bash -c 'echo hi'","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
                r#"{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"bash -c 'echo hi'","aggregated_output":"hi\n","exit_code":0,"status":"completed"}}"#,
            ]
        );
    }

    #[test]
    fn exit_codes_and_declined_calls() {
        assert_eq!(
            command_result("Exit code 3\nboom", true),
            (Some(3), "boom\n".to_owned())
        );
        assert_eq!(
            command_result("(Bash completed with no output)", false),
            (Some(0), String::new())
        );
        assert_eq!(
            command_result("Command timed out", true),
            (None, "Command timed out\n".to_owned())
        );
        let dir = tempfile::tempdir().unwrap();
        let mut t = Translator::new(dir.path());
        t.on_event(&event(EventBody::ToolCall(ToolCallEvent {
            turn: 1,
            call_id: "w".into(),
            execution_id: "e".into(),
            parent_execution_id: None,
            tool: "write".into(),
            arguments: json!({"file_path": "new.txt", "content": "x"}),
            original_arguments: None,
            rewritten_by: None,
            rewrite_conflicts: Vec::new(),
            provider_call_id: None,
            origin: None,
        })));
        let done = t.on_event(&event(EventBody::ToolResult(ToolResultEvent {
            turn: 1,
            call_id: "w".into(),
            is_error: true,
            content: "blocked by a hook".into(),
            disposition: Some("denied".into()),
            decided_by: None,
            rewrite: None,
            content_blocks: None,
            shown_input: None,
        })));
        let line = &lines(&done)[0];
        let expected = format!(
            r#"{{"type":"item.completed","item":{{"id":"item_0","type":"file_change","changes":[{{"path":"{}","kind":"add"}}],"status":"declined"}}}}"#,
            dir.path().join("new.txt").display()
        );
        assert_eq!(line, &expected);
    }

    fn mcp_call(call_id: &str, origin: Option<ToolOrigin>) -> Event {
        event(EventBody::ToolCall(ToolCallEvent {
            turn: 1,
            call_id: call_id.into(),
            execution_id: "e".into(),
            parent_execution_id: None,
            tool: "mcp__oracle_v2__echo_text".into(),
            arguments: json!({"text": "hi"}),
            original_arguments: None,
            rewritten_by: None,
            rewrite_conflicts: Vec::new(),
            provider_call_id: None,
            origin,
        }))
    }

    #[test]
    fn an_mcp_call_names_its_server_and_tool_as_configured() {
        let mut t = Translator::new(Path::new("/"));
        let origin = ToolOrigin::Mcp {
            server: "oracle.v2".into(),
            tool: "echo.text".into(),
        };
        let recorded = t.on_event(&mcp_call("c1", Some(origin)));
        // A log written before calls recorded their origin: read back
        // from dsh's tool name.
        let older = t.on_event(&mcp_call("c2", None));
        assert_eq!(
            lines(&[recorded, older].concat()),
            [
                r#"{"type":"item.started","item":{"id":"item_0","type":"mcp_tool_call","server":"oracle.v2","tool":"echo.text","arguments":{"text":"hi"},"result":null,"error":null,"status":"in_progress"}}"#,
                r#"{"type":"item.started","item":{"id":"item_1","type":"mcp_tool_call","server":"oracle_v2","tool":"echo_text","arguments":{"text":"hi"},"result":null,"error":null,"status":"in_progress"}}"#,
            ]
        );
    }

    #[test]
    fn a_failed_turn_prints_error_then_turn_failed() {
        let mut t = Translator::new(Path::new("/"));
        let out = t.on_event(&event(EventBody::TurnEnd(TurnEndEvent {
            turn: 1,
            reason: TurnEndReason::Error,
            message: Some("model said no".into()),
        })));
        assert_eq!(
            lines(&out),
            [
                r#"{"type":"error","message":"model said no"}"#,
                r#"{"type":"turn.failed","error":{"message":"model said no"}}"#,
            ]
        );
        assert_eq!(t.failure(), Some("model said no"));
        assert_eq!(
            serde_json::to_string(&ThreadEvent::TurnStarted {}).unwrap(),
            r#"{"type":"turn.started"}"#
        );
    }
}
