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

use dsh_protocol::{Event, EventBody};
use serde_json::{Map, Value, json};

use crate::payload::{ToolResponse, cc_tool_name};

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

    fn envelope(
        &mut self,
        kind: &str,
        ts: &str,
        prompt_id: Option<&str>,
        body: Map<String, Value>,
    ) -> Value {
        let uuid = uuid::Uuid::new_v4().to_string();
        let mut map = Map::new();
        map.insert("parentUuid".into(), json!(self.last_uuid));
        map.insert("isSidechain".into(), json!(self.agent_id.is_some()));
        if let Some(prompt_id) = prompt_id {
            map.insert("promptId".into(), json!(prompt_id));
        }
        map.insert("type".into(), json!(kind));
        map.extend(body);
        map.insert("uuid".into(), json!(uuid));
        map.insert("timestamp".into(), json!(ts));
        map.insert("userType".into(), json!("external"));
        map.insert("entrypoint".into(), json!("dsh"));
        map.insert("cwd".into(), json!(self.cwd));
        map.insert("sessionId".into(), json!(self.session_id));
        if let Some(agent_id) = &self.agent_id {
            map.insert("agentId".into(), json!(agent_id));
        }
        map.insert("version".into(), json!(env!("CARGO_PKG_VERSION")));
        self.last_uuid = Some(uuid);
        Value::Object(map)
    }

    /// The transcript lines `event` produces (none for hook/turn bookkeeping).
    pub fn entries_for(&mut self, event: &Event, prompt_id: Option<&str>) -> Vec<Value> {
        let ts = event.ts.as_str();
        match &event.body {
            EventBody::UserMessage { content, .. } => {
                let mut body = Map::new();
                body.insert(
                    "message".into(),
                    json!({"role": "user", "content": content}),
                );
                vec![self.envelope("user", ts, prompt_id, body)]
            }
            EventBody::SteeringMessage { content, .. } => {
                let mut body = Map::new();
                body.insert(
                    "message".into(),
                    json!({"role": "user", "content": content}),
                );
                body.insert("isMeta".into(), json!(true));
                vec![self.envelope("user", ts, prompt_id, body)]
            }
            EventBody::AssistantMessage {
                turn,
                step,
                content,
                tool_calls,
                ..
            } => {
                let message_id = match &self.agent_id {
                    Some(agent_id) => format!("msg_dsh_{agent_id}_{turn}_{step}"),
                    None => format!("msg_dsh_{turn}_{step}"),
                };
                let mut blocks = Vec::new();
                if !content.is_empty() {
                    blocks.push(json!({"type": "text", "text": content}));
                }
                for call in tool_calls {
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": cc_tool_name(&call.name),
                        "input": call.arguments,
                    }));
                }
                let stop_reason = if tool_calls.is_empty() {
                    "end_turn"
                } else {
                    "tool_use"
                };
                blocks
                    .into_iter()
                    .map(|block| {
                        let mut body = Map::new();
                        body.insert(
                            "message".into(),
                            json!({
                                "id": message_id,
                                "type": "message",
                                "role": "assistant",
                                "content": [block],
                                "stop_reason": stop_reason,
                            }),
                        );
                        self.envelope("assistant", ts, None, body)
                    })
                    .collect()
            }
            EventBody::ToolResult {
                call_id,
                is_error,
                content,
                ..
            } => {
                let mut body = Map::new();
                body.insert(
                    "message".into(),
                    json!({"role": "user", "content": [{
                        "tool_use_id": call_id,
                        "type": "tool_result",
                        "content": content,
                        "is_error": is_error,
                    }]}),
                );
                let result = self
                    .tool_responses
                    .remove(call_id)
                    .unwrap_or_else(|| ToolResponse::Text(content.clone()));
                body.insert("toolUseResult".into(), crate::payload::value_of(&result));
                vec![self.envelope("user", ts, prompt_id, body)]
            }
            EventBody::ContextMessage {
                content, source, ..
            } => {
                let mut body = Map::new();
                body.insert(
                    "attachment".into(),
                    json!({"type": "hook_additional_context", "content": [content], "source": source}),
                );
                body.insert(
                    "rendered".into(),
                    json!([{"content": format!("<system-reminder>\n{content}\n</system-reminder>")}]),
                );
                body.insert("renderedRole".into(), json!("system"));
                vec![self.envelope("attachment", ts, prompt_id, body)]
            }
            EventBody::CompactionCompleted { summary, .. } => {
                // Claude Code writes the compacted summary as a user entry
                // marked `isCompactSummary`; hooks reading the transcript
                // find the summary there.
                let mut body = Map::new();
                body.insert(
                    "message".into(),
                    json!({"role": "user", "content": summary}),
                );
                body.insert("isCompactSummary".into(), json!(true));
                vec![self.envelope("user", ts, prompt_id, body)]
            }
            EventBody::SessionHeader { .. }
            | EventBody::CompactionStarted { .. }
            | EventBody::CompactionFailed { .. }
            | EventBody::ToolCall { .. }
            | EventBody::TurnStart { .. }
            | EventBody::PromptBlocked { .. }
            | EventBody::TurnEnd { .. }
            | EventBody::HookInvoked { .. }
            | EventBody::HookResult { .. }
            | EventBody::SeamNote { .. }
            | EventBody::SessionCleared { .. }
            | EventBody::ModelSwitched { .. } => Vec::new(),
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
    use std::os::unix::fs::PermissionsExt as _;

    fn user_message() -> Event {
        serde_json::from_value(json!({
            "seq": 1, "ts": "2026-12-01T00:00:00Z", "type": "user/message",
            "turn": 1, "content": "hi", "source": "user"
        }))
        .unwrap()
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
