//! The Claude-format transcript dsh keeps at `transcript_path`, so hooks
//! that read it (e.g. a Stop hook looking for the last assistant message)
//! work unchanged. Lines follow `reference/claude-code/transcripts/*.jsonl`:
//! `user` entries (prompt string, or `tool_result` blocks with
//! `toolUseResult`), `assistant` entries (one per content block, as Claude
//! Code writes them, sharing the message id), `isMeta` user entries for
//! steering, and `attachment` entries for hook contexts. Claude Code's
//! internal bookkeeping entries are not written.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use dsh_protocol::{
    AssistantMessageEvent, CompactionCompletedEvent, ContextMessageEvent, Event, EventBody,
    SteeringMessageEvent, ToolResultEvent, UserMessageEvent,
};
use serde::Serialize;

use crate::payload::{ToolResponse, cc_tool_name};

/// One transcript line, its keys in the order dsh writes them (Claude
/// Code's envelope with the entry's own keys after `type`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry<'a> {
    /// The line before it (`null` for the first).
    parent_uuid: Option<String>,
    /// A subagent's transcript.
    is_sidechain: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_id: Option<&'a str>,
    /// `user`, `assistant` or `attachment`.
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    body: Body<'a>,
    uuid: String,
    timestamp: &'a str,
    user_type: &'static str,
    entrypoint: &'static str,
    cwd: String,
    session_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_id: Option<String>,
    version: &'static str,
}

/// The keys a line has besides the envelope.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Body<'a> {
    /// A prompt, a steering message (`isMeta`) or a compaction summary
    /// (`isCompactSummary`).
    User {
        message: UserText<'a>,
        #[serde(rename = "isMeta", skip_serializing_if = "Option::is_none")]
        is_meta: Option<bool>,
        #[serde(rename = "isCompactSummary", skip_serializing_if = "Option::is_none")]
        is_compact_summary: Option<bool>,
    },
    /// One content block of an assistant message.
    Assistant { message: AssistantMessage<'a> },
    /// A tool's result, with its `toolUseResult`.
    ToolResult {
        message: ToolResultMessage<'a>,
        #[serde(rename = "toolUseResult")]
        tool_use_result: ToolResponse,
    },
    /// A hook's additional context.
    Attachment {
        attachment: ContextAttachment<'a>,
        rendered: [Rendered; 1],
        #[serde(rename = "renderedRole")]
        rendered_role: &'static str,
    },
}

/// Which marker a user line carries.
#[derive(Debug, Clone, Copy)]
enum Flag {
    IsMeta,
    IsCompactSummary,
}

impl<'a> Body<'a> {
    fn user(content: &'a str, flag: Option<Flag>) -> Self {
        Body::User {
            message: UserText {
                role: "user",
                content,
            },
            is_meta: matches!(flag, Some(Flag::IsMeta)).then_some(true),
            is_compact_summary: matches!(flag, Some(Flag::IsCompactSummary)).then_some(true),
        }
    }
}

/// `{"role": "user", "content": "…"}`.
#[derive(Debug, Serialize)]
struct UserText<'a> {
    role: &'static str,
    content: &'a str,
}

/// An assistant message holding one block.
#[derive(Debug, Serialize)]
struct AssistantMessage<'a> {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    content: [Block<'a>; 1],
    stop_reason: &'static str,
}

/// An assistant content block.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    /// The message's text.
    Text { text: &'a str },
    /// A tool call, its input as the model sent it.
    ToolUse {
        id: &'a str,
        name: String,
        input: &'a serde_json::Value,
    },
}

/// A user message holding one `tool_result` block.
#[derive(Debug, Serialize)]
struct ToolResultMessage<'a> {
    role: &'static str,
    content: [ToolResultBlock<'a>; 1],
}

#[derive(Debug, Serialize)]
struct ToolResultBlock<'a> {
    tool_use_id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    content: &'a str,
    is_error: bool,
}

/// `{"type": "hook_additional_context", "content": […], "source": …}`.
#[derive(Debug, Serialize)]
struct ContextAttachment<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    content: [&'a str; 1],
    source: &'a str,
}

/// `{"content": "<system-reminder>…"}`.
#[derive(Debug, Serialize)]
struct Rendered {
    content: String,
}

/// Builds and appends transcript lines for session-log events.
#[derive(Debug)]
pub struct Transcript {
    path: PathBuf,
    session_id: String,
    cwd: String,
    last_uuid: Option<String>,
    /// Structured tool responses by call id (set by post-execute).
    pub tool_responses: HashMap<String, ToolResponse>,
    /// The subagent this is the sidechain transcript of, if any.
    agent_id: Option<String>,
}

impl Transcript {
    /// A transcript at `path` for `session_id`.
    pub fn new(path: PathBuf, session_id: String, cwd: String) -> Self {
        Transcript {
            path,
            session_id,
            cwd,
            last_uuid: None,
            tool_responses: HashMap::new(),
            agent_id: None,
        }
    }

    /// The session this is the transcript of.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Where the sidechain transcript of subagent `agent_id` lives next to
    /// the session transcript at `session_path` (Claude Code's layout:
    /// `<dir>/<session_id>/subagents/agent-<agent_id>.jsonl`).
    pub fn agent_path(session_path: &Path, agent_id: &str) -> PathBuf {
        session_path
            .with_extension("")
            .join("subagents")
            .join(format!("agent-{agent_id}.jsonl"))
    }

    /// The sidechain transcript of subagent `agent_id` of this session:
    /// its entries say `isSidechain: true` and carry `agentId`.
    pub fn for_agent(&self, agent_id: &str) -> Transcript {
        Transcript {
            agent_id: Some(agent_id.to_owned()),
            ..Transcript::new(
                Transcript::agent_path(&self.path, agent_id),
                self.session_id.clone(),
                self.cwd.clone(),
            )
        }
    }

    /// Where it is written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn envelope<'a>(
        &mut self,
        kind: &'static str,
        ts: &'a str,
        prompt_id: Option<&'a str>,
        body: Body<'a>,
    ) -> Entry<'a> {
        let uuid = uuid::Uuid::new_v4().to_string();
        Entry {
            parent_uuid: self.last_uuid.replace(uuid.clone()),
            is_sidechain: self.agent_id.is_some(),
            prompt_id,
            kind,
            body,
            uuid,
            timestamp: ts,
            user_type: "external",
            entrypoint: "dsh",
            cwd: self.cwd.clone(),
            session_id: self.session_id.clone(),
            agent_id: self.agent_id.clone(),
            version: env!("CARGO_PKG_VERSION"),
        }
    }

    /// The transcript lines `event` produces (none for hook/turn bookkeeping).
    pub fn entries_for<'a>(
        &mut self,
        event: &'a Event,
        prompt_id: Option<&'a str>,
    ) -> Vec<Entry<'a>> {
        let ts = event.ts.as_str();
        match &event.body {
            EventBody::UserMessage(UserMessageEvent { content, .. }) => {
                vec![self.envelope("user", ts, prompt_id, Body::user(content, None))]
            }
            EventBody::SteeringMessage(SteeringMessageEvent { content, .. }) => {
                let body = Body::user(content, Some(Flag::IsMeta));
                vec![self.envelope("user", ts, prompt_id, body)]
            }
            EventBody::AssistantMessage(AssistantMessageEvent {
                turn,
                step,
                content,
                tool_calls,
                ..
            }) => {
                let message_id = match &self.agent_id {
                    Some(agent_id) => format!("msg_dsh_{agent_id}_{turn}_{step}"),
                    None => format!("msg_dsh_{turn}_{step}"),
                };
                let mut blocks = Vec::new();
                if !content.is_empty() {
                    blocks.push(Block::Text { text: content });
                }
                for call in tool_calls {
                    blocks.push(Block::ToolUse {
                        id: &call.id,
                        name: cc_tool_name(&call.name),
                        input: &call.arguments,
                    });
                }
                let stop_reason = if tool_calls.is_empty() {
                    "end_turn"
                } else {
                    "tool_use"
                };
                blocks
                    .into_iter()
                    .map(|block| {
                        let message = AssistantMessage {
                            id: message_id.clone(),
                            kind: "message",
                            role: "assistant",
                            content: [block],
                            stop_reason,
                        };
                        self.envelope("assistant", ts, None, Body::Assistant { message })
                    })
                    .collect()
            }
            EventBody::ToolResult(ToolResultEvent {
                call_id,
                is_error,
                content,
                ..
            }) => {
                let message = ToolResultMessage {
                    role: "user",
                    content: [ToolResultBlock {
                        tool_use_id: call_id,
                        kind: "tool_result",
                        content,
                        is_error: *is_error,
                    }],
                };
                let tool_use_result = self
                    .tool_responses
                    .remove(call_id)
                    .unwrap_or_else(|| ToolResponse::Text(content.clone()));
                let body = Body::ToolResult {
                    message,
                    tool_use_result,
                };
                vec![self.envelope("user", ts, prompt_id, body)]
            }
            EventBody::ContextMessage(ContextMessageEvent {
                content, source, ..
            }) => {
                let body = Body::Attachment {
                    attachment: ContextAttachment {
                        kind: "hook_additional_context",
                        content: [content],
                        source,
                    },
                    rendered: [Rendered {
                        content: format!("<system-reminder>\n{content}\n</system-reminder>"),
                    }],
                    rendered_role: "system",
                };
                vec![self.envelope("attachment", ts, prompt_id, body)]
            }
            EventBody::CompactionCompleted(CompactionCompletedEvent { summary, .. }) => {
                // Claude Code writes the compacted summary as a user entry
                // marked `isCompactSummary`; hooks reading the transcript
                // find the summary there.
                let body = Body::user(summary, Some(Flag::IsCompactSummary));
                vec![self.envelope("user", ts, prompt_id, body)]
            }
            EventBody::SessionHeader(_)
            | EventBody::CompactionStarted(_)
            | EventBody::CompactionFailed(_)
            | EventBody::ToolCall(_)
            | EventBody::TurnStart(_)
            | EventBody::PromptBlocked(_)
            | EventBody::TurnEnd(_)
            | EventBody::HookInvoked(_)
            | EventBody::HookResult(_)
            | EventBody::SeamNote(_)
            | EventBody::SessionCleared { .. }
            | EventBody::ModelSwitched(_) => Vec::new(),
        }
    }

    /// Appends the lines for `event` to the file (creating directories).
    pub fn append(&mut self, event: &Event, prompt_id: Option<&str>) -> std::io::Result<()> {
        let lines = self.entries_for(event, prompt_id);
        if lines.is_empty() {
            return Ok(());
        }
        // The transcript holds the whole conversation: private, like the
        // session log (0600 in 0700 directories), never through a symlink.
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
        let named = |error: std::io::Error, path: &std::path::Path| {
            std::io::Error::new(error.kind(), format!("{}: {error}", path.display()))
        };
        if let Some(parent) = self.path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(|error| named(error, parent))?;
        }
        #[allow(clippy::disallowed_methods)] // custom_flags/mode: std's OpenOptionsExt
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.path)
            .map_err(|error| named(error, &self.path))?;
        let mut buffer = Vec::new();
        for line in lines {
            serde_json::to_writer(&mut buffer, &line).map_err(std::io::Error::other)?;
            buffer.push(b'\n');
        }
        file.write_all(&buffer)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use std::os::unix::fs::PermissionsExt as _;

    fn user_message() -> Event {
        serde_json::from_value(json!({
            "seq": 1, "ts": "2026-12-01T00:00:00Z", "type": "user/message",
            "turn": 1, "content": "hi", "source": "user"
        }))
        .unwrap()
    }

    fn event(body: Value) -> Event {
        let mut event = json!({"seq": 1, "ts": "2026-12-01T00:00:00Z"});
        event
            .as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        serde_json::from_value(event).unwrap()
    }

    /// Every kind of line, byte for byte (uuids numbered in order of
    /// appearance): the keys and their order are what hooks reading the
    /// transcript parse.
    #[test]
    fn lines_keep_their_keys_in_order() {
        let mut transcript = Transcript::new("/t.jsonl".into(), "s".into(), "/p".into());
        transcript
            .tool_responses
            .insert("c1".into(), ToolResponse::Text("done".into()));
        let mut lines = Vec::new();
        let mut emit = |transcript: &mut Transcript, body: Value, prompt: Option<&str>| {
            for line in transcript.entries_for(&event(body), prompt) {
                lines.push(serde_json::to_string(&line).unwrap());
            }
        };
        emit(
            &mut transcript,
            json!({"type": "user/message", "turn": 1, "content": "hi", "source": "user"}),
            Some("p1"),
        );
        emit(
            &mut transcript,
            json!({"type": "assistant/message", "turn": 1, "step": 1, "content": "ok",
                "tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "ls"}}]}),
            None,
        );
        emit(
            &mut transcript,
            json!({"type": "tool/result", "turn": 1, "call_id": "c1", "is_error": false, "content": "a"}),
            Some("p1"),
        );
        emit(
            &mut transcript,
            json!({"type": "tool/result", "turn": 1, "call_id": "c2", "is_error": true, "content": "b"}),
            None,
        );
        emit(
            &mut transcript,
            json!({"type": "steering/message", "turn": 1, "content": "s", "source": "user"}),
            None,
        );
        emit(
            &mut transcript,
            json!({"type": "context/message", "turn": 1, "content": "c", "source": "hook"}),
            Some("p1"),
        );
        emit(
            &mut transcript,
            json!({"type": "assistant/message", "turn": 2, "step": 1, "content": "end", "tool_calls": []}),
            None,
        );
        let mut agent = transcript.for_agent("a1");
        emit(
            &mut agent,
            json!({"type": "compaction/completed", "turn": 2, "trigger": "auto", "summary": "sum",
                "summarized_by": "model", "tokens_before": 9}),
            None,
        );
        emit(
            &mut agent,
            json!({"type": "turn/end", "turn": 2, "reason": "completed"}),
            None,
        );
        // Number the random uuids.
        let mut uuids: Vec<String> = Vec::new();
        let lines: Vec<String> = lines
            .iter()
            .map(|line| {
                let mut out = line.clone();
                let value: Value = serde_json::from_str(line).unwrap();
                let uuid = value["uuid"].as_str().unwrap().to_owned();
                uuids.push(uuid);
                for (n, uuid) in uuids.iter().enumerate() {
                    out = out.replace(uuid, &format!("U{n}"));
                }
                out
            })
            .collect();
        let tail = |uuid: &str, session: &str| {
            format!(
                r#""uuid":"{uuid}","timestamp":"2026-12-01T00:00:00Z","userType":"external","entrypoint":"dsh","cwd":"/p","sessionId":"{session}"#
            )
        };
        let version = format!(r#","version":"{}"}}"#, env!("CARGO_PKG_VERSION"));
        let expected = [
            format!(
                r#"{{"parentUuid":null,"isSidechain":false,"promptId":"p1","type":"user","message":{{"role":"user","content":"hi"}},{}"{version}"#,
                tail("U0", "s")
            ),
            format!(
                r#"{{"parentUuid":"U0","isSidechain":false,"type":"assistant","message":{{"id":"msg_dsh_1_1","type":"message","role":"assistant","content":[{{"type":"text","text":"ok"}}],"stop_reason":"tool_use"}},{}"{version}"#,
                tail("U1", "s")
            ),
            format!(
                r#"{{"parentUuid":"U1","isSidechain":false,"type":"assistant","message":{{"id":"msg_dsh_1_1","type":"message","role":"assistant","content":[{{"type":"tool_use","id":"c1","name":"Bash","input":{{"command":"ls"}}}}],"stop_reason":"tool_use"}},{}"{version}"#,
                tail("U2", "s")
            ),
            format!(
                r#"{{"parentUuid":"U2","isSidechain":false,"promptId":"p1","type":"user","message":{{"role":"user","content":[{{"tool_use_id":"c1","type":"tool_result","content":"a","is_error":false}}]}},"toolUseResult":"done",{}"{version}"#,
                tail("U3", "s")
            ),
            format!(
                r#"{{"parentUuid":"U3","isSidechain":false,"type":"user","message":{{"role":"user","content":[{{"tool_use_id":"c2","type":"tool_result","content":"b","is_error":true}}]}},"toolUseResult":"b",{}"{version}"#,
                tail("U4", "s")
            ),
            format!(
                r#"{{"parentUuid":"U4","isSidechain":false,"type":"user","message":{{"role":"user","content":"s"}},"isMeta":true,{}"{version}"#,
                tail("U5", "s")
            ),
            format!(
                r#"{{"parentUuid":"U5","isSidechain":false,"promptId":"p1","type":"attachment","attachment":{{"type":"hook_additional_context","content":["c"],"source":"hook"}},"rendered":[{{"content":"<system-reminder>\nc\n</system-reminder>"}}],"renderedRole":"system",{}"{version}"#,
                tail("U6", "s")
            ),
            format!(
                r#"{{"parentUuid":"U6","isSidechain":false,"type":"assistant","message":{{"id":"msg_dsh_2_1","type":"message","role":"assistant","content":[{{"type":"text","text":"end"}}],"stop_reason":"end_turn"}},{}"{version}"#,
                tail("U7", "s")
            ),
            format!(
                r#"{{"parentUuid":null,"isSidechain":true,"type":"user","message":{{"role":"user","content":"sum"}},"isCompactSummary":true,{}","agentId":"a1"{version}"#,
                tail("U8", "s")
            ),
        ];
        assert_eq!(lines, expected);
    }

    #[test]
    fn transcripts_are_private_and_never_written_through_a_symlink() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("projects/slug/s.jsonl");
        let mut transcript = Transcript::new(path.clone(), "s".into(), "/p".into());
        transcript.append(&user_message(), None).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        assert_eq!(mode(&root.path().join("projects")), 0o700);

        let target = root.path().join("elsewhere.txt");
        std::fs::write(&target, "keep").unwrap();
        let planted = root.path().join("projects/slug/t.jsonl");
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        let mut transcript = Transcript::new(planted, "t".into(), "/p".into());
        let error = transcript.append(&user_message(), None).unwrap_err();
        assert!(error.to_string().contains("t.jsonl"), "{error}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }
}
