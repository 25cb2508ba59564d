//! From dsh's session events to ACP `session/update`s.
//!
//! The translator is the only place that decides what an editor sees of a
//! turn: streamed assistant text, tool calls (kind, title, raw input, file
//! locations) and their settled status and content (a diff for `write` and
//! `edit`), and the hook activity a person should notice (a hook's block
//! reason, a `systemMessage`, a blocked prompt). It holds no connection; the
//! server sends what it returns.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, SessionUpdate, ToolCall as AcpToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use dsh_protocol::{
    AssistantMessageEvent, CompactionCompletedEvent, CompactionFailedEvent, Event, EventBody,
    HookDecision, HookEffect, HookInvokedEvent, HookResultEvent, PromptBlockedEvent, ToolCallEvent,
    ToolResultEvent, TurnEndEvent, UserMessageEvent,
};
use dsh_seams::{NoticeLevel, UserNotice};
use dsh_tools::change::{FileChange, PendingChange};
use serde_json::Value;

/// Tool output beyond this many characters is cut in the update (the model
/// and the session log keep all of it).
const CONTENT_LIMIT_CHARS: usize = 16 * 1024;

/// Whether events happen now or are being replayed from a stored log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A turn running now: the client sent the prompt itself, text streamed
    /// as deltas, and files can be read before and after a change.
    Live,
    /// `session/load`: the history is sent again, user messages included;
    /// files on disk no longer show what a past change did.
    Replay,
}

/// What the translator remembers about a tool call until its result: the
/// file a live `write`/`edit` changes and its text before the call (the
/// terminal shows the same [`FileChange`] as a unified diff).
#[derive(Debug, Clone)]
struct PendingCall {
    change: Option<PendingChange>,
}

/// A change as ACP `diff` content.
fn acp_diff(change: FileChange) -> ToolCallContent {
    ToolCallContent::from(Diff::new(change.path, change.new_text).old_text(change.old_text))
}

/// Turns dsh session events, text deltas and notices into ACP updates.
#[derive(Debug)]
pub struct Translator {
    cwd: PathBuf,
    /// Text deltas were sent since the last `assistant/message`, so that
    /// message's text is not sent again.
    streamed: bool,
    calls: HashMap<String, PendingCall>,
    /// `invocation_id` → the hook's dialect, event and tool call, for naming a block.
    hooks: HashMap<String, HookRun>,
    /// Hook blocks of a call, held until the call settles: a block whose
    /// reason the failed call already shows is not shown a second time.
    held: HashMap<String, Vec<HeldBlock>>,
}

/// A hook's block of one tool call, not yet shown.
#[derive(Debug, Clone)]
struct HeldBlock {
    /// The hook's reason, as the call's result would carry it.
    reason: String,
    /// The message naming the hook, shown when the result does not.
    message: SessionUpdate,
}

/// A hook run in flight.
#[derive(Debug, Clone)]
struct HookRun {
    dialect: String,
    event: String,
    call_id: Option<String>,
}

fn text_chunk(text: impl Into<String>) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text.into()))
}

fn agent_text(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(text_chunk(text))
}

/// A call as an editor lists it: dsh's description of the call
/// ([`dsh_tools::describe`]) in ACP's terms, its paths resolved against the
/// session's working directory.
#[derive(Debug, Clone)]
pub struct AcpCall {
    /// The one-line title.
    pub title: String,
    /// The ACP kind (an editor picks an icon by it).
    pub kind: ToolKind,
    /// The files the call touches, for the editor to follow.
    pub locations: Vec<ToolCallLocation>,
}

/// Describes a call of `tool` for an editor.
pub fn describe_call(cwd: &Path, tool: &str, arguments: &Value) -> AcpCall {
    let described = dsh_tools::describe(tool, arguments);
    AcpCall {
        kind: acp_kind(described.kind),
        locations: described
            .paths
            .iter()
            .map(|path| ToolCallLocation::new(resolve(cwd, &path.path)).line(path.line))
            .collect(),
        title: described.title,
    }
}

/// ACP's name for a kind of call.
fn acp_kind(kind: dsh_tools::ToolKind) -> ToolKind {
    use dsh_tools::ToolKind as Dsh;
    match kind {
        Dsh::Read => ToolKind::Read,
        Dsh::Edit => ToolKind::Edit,
        Dsh::Delete => ToolKind::Delete,
        Dsh::Move => ToolKind::Move,
        Dsh::Search => ToolKind::Search,
        Dsh::Execute => ToolKind::Execute,
        Dsh::Think => ToolKind::Think,
        Dsh::Fetch => ToolKind::Fetch,
        Dsh::Other => ToolKind::Other,
    }
}

fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_owned()
    } else {
        cwd.join(path)
    }
}

fn cut(text: &str) -> String {
    if text.chars().count() <= CONTENT_LIMIT_CHARS {
        return text.to_owned();
    }
    let kept: String = text.chars().take(CONTENT_LIMIT_CHARS).collect();
    format!("{kept}\n… (output cut; the session log has all of it)")
}

/// The `tool_call` update announcing a sealed call.
pub fn tool_call(cwd: &Path, call_id: &str, tool: &str, arguments: &Value) -> AcpToolCall {
    let described = describe_call(cwd, tool, arguments);
    AcpToolCall::new(call_id.to_owned(), described.title)
        .kind(described.kind)
        .status(ToolCallStatus::Pending)
        .raw_input(arguments.clone())
        .locations(described.locations)
}

impl Translator {
    /// A translator for a session working in `cwd`.
    pub fn new(cwd: PathBuf) -> Self {
        Translator {
            cwd,
            streamed: false,
            calls: HashMap::new(),
            hooks: HashMap::new(),
            held: HashMap::new(),
        }
    }

    /// A streamed piece of assistant text.
    pub fn text(&mut self, delta: &str) -> Vec<SessionUpdate> {
        if delta.is_empty() {
            return Vec::new();
        }
        self.streamed = true;
        vec![agent_text(delta)]
    }

    /// A notice from a plugin or hook (e.g. a hook's `systemMessage`).
    pub fn notice(&mut self, notice: &UserNotice) -> Vec<SessionUpdate> {
        let label = match notice.level {
            NoticeLevel::Info => "note",
            NoticeLevel::Warning => "warning",
        };
        vec![agent_text(format!(
            "\n> [{label} · {}] {}\n\n",
            notice.source, notice.text
        ))]
    }

    /// What one appended (or replayed) event shows.
    pub fn event(&mut self, event: &Event, mode: Mode) -> Vec<SessionUpdate> {
        // A subagent's own conversation stays inside its `agent` call: its
        // messages are not the session's (its tool calls still show).
        if event.agent_id.is_some()
            && matches!(
                event.body,
                EventBody::UserMessage(_)
                    | EventBody::AssistantMessage(_)
                    | EventBody::SteeringMessage(_)
                    | EventBody::ContextMessage(_)
            )
        {
            return Vec::new();
        }
        match &event.body {
            EventBody::UserMessage(UserMessageEvent {
                content,
                original_content,
                ..
            }) => match mode {
                // The client shows what it sent.
                Mode::Live => Vec::new(),
                Mode::Replay => vec![SessionUpdate::UserMessageChunk(text_chunk(
                    original_content.clone().unwrap_or_else(|| content.clone()),
                ))],
            },
            EventBody::PromptBlocked(PromptBlockedEvent {
                content, reason, ..
            }) => {
                let mut updates = Vec::new();
                if mode == Mode::Replay {
                    updates.push(SessionUpdate::UserMessageChunk(text_chunk(content.clone())));
                }
                // As for a hook block: the display drops a verbatim reason's
                // trailing newline so the frame's spacing stays as written.
                updates.push(agent_text(format!(
                    "> [prompt blocked] {}\n\nThis prompt was not sent to the model.\n",
                    reason.trim_end()
                )));
                updates
            }
            EventBody::AssistantMessage(AssistantMessageEvent { content, .. }) => {
                let streamed = std::mem::take(&mut self.streamed);
                if content.is_empty() || (streamed && mode == Mode::Live) {
                    Vec::new()
                } else {
                    vec![agent_text(content.clone())]
                }
            }
            EventBody::ToolCall(ToolCallEvent {
                call_id,
                tool,
                arguments,
                ..
            }) => {
                let change = match mode {
                    Mode::Live => PendingChange::capture(&self.cwd, tool, arguments),
                    Mode::Replay => None,
                };
                self.calls.insert(call_id.clone(), PendingCall { change });
                let mut call = tool_call(&self.cwd, call_id, tool, arguments);
                // What the call would change, while it waits for approval.
                if mode == Mode::Live
                    && let Some(proposed) = FileChange::proposed(&self.cwd, tool, arguments)
                {
                    call = call.content(vec![acp_diff(proposed)]);
                }
                vec![SessionUpdate::ToolCall(call)]
            }
            EventBody::ToolResult(ToolResultEvent {
                call_id,
                is_error,
                content,
                disposition,
                ..
            }) => self.tool_result(call_id, *is_error, content, disposition.as_deref()),
            EventBody::HookInvoked(HookInvokedEvent {
                invocation_id,
                dialect,
                event,
                seam,
                call_id,
                ..
            }) => {
                // The prompt-submit veto is shown once, by `prompt/blocked`.
                if *seam != dsh_protocol::Seam::PromptSubmit {
                    self.hooks.insert(
                        invocation_id.clone(),
                        HookRun {
                            dialect: dialect.as_str().to_owned(),
                            event: event.clone(),
                            call_id: call_id.clone(),
                        },
                    );
                }
                Vec::new()
            }
            EventBody::HookResult(HookResultEvent {
                invocation_id,
                decision,
                ..
            }) => self.hook_result(invocation_id, decision),
            EventBody::TurnEnd(TurnEndEvent {
                reason, message, ..
            }) => {
                self.streamed = false;
                self.calls.clear();
                self.hooks.clear();
                self.held.clear();
                match (reason, message) {
                    (dsh_protocol::TurnEndReason::Stopped, Some(message)) => {
                        vec![agent_text(format!("\n> [turn stopped] {message}\n"))]
                    }
                    (dsh_protocol::TurnEndReason::MaxSteps, Some(message)) => {
                        vec![agent_text(format!("\n> [turn ended] {message}\n"))]
                    }
                    _ => Vec::new(),
                }
            }
            EventBody::CompactionCompleted(CompactionCompletedEvent { trigger, .. }) => {
                vec![agent_text(format!(
                    "> [conversation compacted ({})]\n",
                    trigger.as_str()
                ))]
            }
            EventBody::CompactionFailed(CompactionFailedEvent { reason, .. }) => vec![agent_text(
                format!("> [compaction did not happen] {}\n", reason.trim_end()),
            )],
            EventBody::SeamNote(_)
            | EventBody::SessionHeader(_)
            | EventBody::TurnStart(_)
            | EventBody::CompactionStarted(_)
            | EventBody::ContextMessage(_)
            | EventBody::SteeringMessage(_)
            | EventBody::SessionCleared { .. }
            | EventBody::ModelSwitched(_) => Vec::new(),
        }
    }

    /// A call's result: its status, diff and text, after the blocks held for it.
    fn tool_result(
        &mut self,
        call_id: &str,
        is_error: bool,
        content: &str,
        disposition: Option<&str>,
    ) -> Vec<SessionUpdate> {
        let pending = self.calls.remove(call_id);
        let status = if is_error {
            ToolCallStatus::Failed
        } else {
            ToolCallStatus::Completed
        };
        let mut blocks: Vec<ToolCallContent> = Vec::new();
        let executed = disposition.is_none_or(|d| d == "executed");
        if !is_error
            && executed
            && let Some(PendingCall {
                change: Some(change),
            }) = pending
            && let Some(change) = change.settle()
        {
            blocks.push(acp_diff(change));
        }
        if !content.is_empty() {
            blocks.push(ToolCallContent::from(cut(content)));
        }
        let fields = ToolCallUpdateFields::new().status(status).content(blocks);
        // A hook's block is shown once: by the failed call when its
        // result carries the reason (a PreToolUse denial), else by
        // a message naming the hook.
        let mut updates: Vec<SessionUpdate> = self
            .held
            .remove(call_id)
            .unwrap_or_default()
            .into_iter()
            .filter(|held| !(is_error && content.contains(held.reason.as_str())))
            .map(|held| held.message)
            .collect();
        updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call_id.to_owned(),
            fields,
        )));
        updates
    }

    /// A hook's result: a block is shown, by its call's failure or a message.
    fn hook_result(&mut self, invocation_id: &str, decision: &HookDecision) -> Vec<SessionUpdate> {
        let Some(run) = self.hooks.remove(invocation_id) else {
            return Vec::new();
        };
        let blocks = match decision.effect {
            HookEffect::Deny | HookEffect::Block => true,
            HookEffect::None
            | HookEffect::Allow
            | HookEffect::Ask
            | HookEffect::Defer
            | HookEffect::Stop
            | HookEffect::Rewrite => false,
        };
        let (true, Some(reason)) = (blocks, decision.best_reason()) else {
            return Vec::new();
        };
        // Hook stderr arrives verbatim, usually newline-terminated;
        // the frame below supplies the spacing, so the display (and
        // only the display) drops the reason's trailing whitespace.
        let reason = reason.trim_end();
        let message = agent_text(format!(
            "\n> [{} {} hook] blocked: {reason}\n\n",
            run.dialect, run.event,
        ));
        match run.call_id {
            Some(call_id) => {
                self.held.entry(call_id).or_default().push(HeldBlock {
                    reason: reason.to_owned(),
                    message,
                });
                Vec::new()
            }
            None => vec![message],
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_protocol::{Dialect, HookOutcomeKind, TurnEndReason};
    use serde_json::json;

    fn event(body: EventBody) -> Event {
        Event {
            seq: 1,
            ts: "t".into(),
            body,
            agent_id: None,
        }
    }

    fn wire(updates: &[SessionUpdate]) -> Vec<Value> {
        updates
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect()
    }

    fn call(tool: &str, arguments: Value) -> Event {
        event(EventBody::ToolCall(ToolCallEvent {
            turn: 1,
            call_id: "c1".into(),
            execution_id: "e1".into(),
            parent_execution_id: None,
            tool: tool.into(),
            arguments,
            original_arguments: None,
            rewritten_by: None,
            rewrite_conflicts: Vec::new(),
            provider_call_id: None,
            origin: None,
        }))
    }

    fn result(is_error: bool, content: &str, disposition: &str) -> Event {
        event(EventBody::ToolResult(ToolResultEvent {
            turn: 1,
            call_id: "c1".into(),
            is_error,
            content: content.into(),
            disposition: Some(disposition.into()),
            decided_by: None,
            rewrite: None,
            content_blocks: None,
            shown_input: None,
        }))
    }

    #[test]
    fn a_write_shows_kind_location_and_a_diff_of_the_real_change() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
        let mut t = Translator::new(dir.path().to_owned());
        let announced = wire(&t.event(
            &call("write", json!({"file_path": "a.txt", "content": "new\n"})),
            Mode::Live,
        ));
        assert_eq!(announced[0]["sessionUpdate"], "tool_call");
        assert_eq!(announced[0]["kind"], "edit");
        assert_eq!(announced[0]["title"], "Write a.txt");
        assert_eq!(announced[0]["rawInput"]["content"], "new\n");
        // While it waits (for approval), the call shows the change it proposes.
        assert_eq!(announced[0]["content"][0]["type"], "diff");
        assert_eq!(announced[0]["content"][0]["oldText"], "old\n");
        assert_eq!(announced[0]["content"][0]["newText"], "new\n");
        assert_eq!(
            announced[0]["locations"][0]["path"],
            dir.path().join("a.txt").display().to_string()
        );
        // The tool runs between the two events.
        std::fs::write(dir.path().join("a.txt"), "new\n").unwrap();
        let settled = wire(&t.event(&result(false, "wrote a.txt", "executed"), Mode::Live));
        assert_eq!(settled[0]["sessionUpdate"], "tool_call_update");
        assert_eq!(settled[0]["status"], "completed");
        assert_eq!(settled[0]["content"][0]["type"], "diff");
        assert_eq!(settled[0]["content"][0]["oldText"], "old\n");
        assert_eq!(settled[0]["content"][0]["newText"], "new\n");
        assert_eq!(settled[0]["content"][1]["content"]["text"], "wrote a.txt");
    }

    #[test]
    fn a_denied_edit_has_no_diff_and_fails() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
        let mut t = Translator::new(dir.path().to_owned());
        t.event(
            &call(
                "edit",
                json!({"file_path": "a.txt", "old_string": "old", "new_string": "x"}),
            ),
            Mode::Live,
        );
        let settled = wire(&t.event(&result(true, "blocked by policy", "denied"), Mode::Live));
        assert_eq!(settled[0]["status"], "failed");
        assert_eq!(settled[0]["content"].as_array().unwrap().len(), 1);
        assert_eq!(
            settled[0]["content"][0]["content"]["text"],
            "blocked by policy"
        );
    }

    #[test]
    fn a_subagents_messages_stay_inside_its_call() {
        let mut t = Translator::new(PathBuf::from("/p"));
        let mut nested = event(EventBody::AssistantMessage(AssistantMessageEvent {
            turn: 1,
            step: 1,
            content: "inner".into(),
            tool_calls: vec![],
            usage: None,
            thinking: None,
        }));
        nested.agent_id = Some("a0123456789abcdef".into());
        assert!(t.event(&nested, Mode::Replay).is_empty());
        nested.agent_id = None;
        assert_eq!(t.event(&nested, Mode::Replay).len(), 1);
    }

    #[test]
    fn streamed_text_is_not_sent_twice_but_replayed_text_is_sent() {
        let mut t = Translator::new(PathBuf::from("/p"));
        assert_eq!(t.text("Hel").len(), 1);
        let message = event(EventBody::AssistantMessage(AssistantMessageEvent {
            turn: 1,
            step: 1,
            content: "Hello".into(),
            tool_calls: Vec::new(),
            usage: None,
            thinking: None,
        }));
        assert!(t.event(&message, Mode::Live).is_empty());
        // Without deltas (a model that does not stream) the text is sent whole.
        let sent = wire(&t.event(&message, Mode::Live));
        assert_eq!(sent[0]["content"]["text"], "Hello");
        let replayed = wire(&t.event(&message, Mode::Replay));
        assert_eq!(replayed[0]["sessionUpdate"], "agent_message_chunk");
    }

    /// The `hook/invoked` of a Claude PreToolUse hook `guard.sh` on call `c1`.
    fn guard_invoked() -> Event {
        event(EventBody::HookInvoked(HookInvokedEvent {
            turn: Some(1),
            invocation_id: "h1".into(),
            dialect: Dialect::Claude,
            event: "PreToolUse".into(),
            seam: dsh_protocol::Seam::PreExecute,
            matcher: None,
            origin: None,
            command: "guard.sh".into(),
            input: dsh_protocol::ExactJson::of(&json!({})),
            call_id: Some("c1".into()),
        }))
    }

    /// Its `hook/result`: exit 2 with `stderr`, denying with `reason`.
    fn guard_denied(stderr: &str, reason: &str) -> Event {
        event(EventBody::HookResult(HookResultEvent {
            turn: Some(1),
            invocation_id: "h1".into(),
            outcome: HookOutcomeKind::Exited,
            exit_code: Some(2),
            signal: None,
            timed_out: false,
            duration_ms: 1,
            stdout: String::new(),
            stderr: stderr.into(),
            error: None,
            parsed_output: None,
            decision: Box::new(dsh_protocol::HookDecision {
                reason: Some(reason.into()),
                ..dsh_protocol::HookDecision::of(HookEffect::Deny)
            }),
            http_status: None,
        }))
    }

    #[test]
    fn a_hook_block_names_the_hook_and_its_reason() {
        let mut t = Translator::new(PathBuf::from("/p"));
        t.event(&guard_invoked(), Mode::Live);
        let result = guard_denied("no", "rm -rf is not allowed");
        // The hook judged the call before it was logged: the message waits
        // for the call to settle.
        assert!(t.event(&result, Mode::Live).is_empty());
        let shown = wire(&t.event(&call("bash", json!({"command": "rm -rf /"})), Mode::Live));
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0]["sessionUpdate"], "tool_call");
        // A result that does not carry the reason: the message names the hook.
        let settled = wire(&t.event(&self::result(true, "denied", "denied"), Mode::Live));
        assert_eq!(settled.len(), 2, "{settled:?}");
        let text = settled[0]["content"]["text"].as_str().unwrap();
        assert!(
            text.contains("claude PreToolUse hook") && text.contains("rm -rf is not allowed"),
            "{text}"
        );
        assert_eq!(settled[1]["status"], "failed");
    }

    #[test]
    fn a_denial_the_failed_call_shows_is_not_also_a_message() {
        let mut t = Translator::new(PathBuf::from("/p"));
        t.event(&guard_invoked(), Mode::Live);
        let hook_result = guard_denied(
            "Blocked: use the safe script\n",
            "Blocked: use the safe script\n",
        );
        assert!(t.event(&hook_result, Mode::Live).is_empty());
        t.event(&call("bash", json!({"command": "rm -rf /"})), Mode::Live);
        let settled = wire(&t.event(
            &result(
                true,
                "PreToolUse:Bash hook error: [guard.sh]: Blocked: use the safe script\n",
                "denied",
            ),
            Mode::Live,
        ));
        assert_eq!(settled.len(), 1, "{settled:?}");
        assert_eq!(settled[0]["sessionUpdate"], "tool_call_update");
        assert_eq!(settled[0]["status"], "failed");
    }

    #[test]
    fn a_newline_terminated_block_reason_adds_no_blank_line() {
        let mut t = Translator::new(PathBuf::from("/p"));
        t.event(
            &event(EventBody::HookInvoked(HookInvokedEvent {
                turn: Some(1),
                invocation_id: "h1".into(),
                dialect: Dialect::Claude,
                event: "Stop".into(),
                seam: dsh_protocol::Seam::TurnEnd,
                matcher: None,
                origin: None,
                command: "guard.sh".into(),
                input: dsh_protocol::ExactJson::of(&json!({})),
                call_id: None,
            })),
            Mode::Live,
        );
        // Verbatim stderr, as a hook prints it: newline-terminated.
        let result = event(EventBody::HookResult(HookResultEvent {
            turn: Some(1),
            invocation_id: "h1".into(),
            outcome: HookOutcomeKind::Exited,
            exit_code: Some(2),
            signal: None,
            timed_out: false,
            duration_ms: 1,
            stdout: String::new(),
            stderr: "tests are failing\n".into(),
            error: None,
            parsed_output: None,
            decision: Box::new(dsh_protocol::HookDecision {
                reason: Some("tests are failing\n".into()),
                ..dsh_protocol::HookDecision::of(HookEffect::Block)
            }),
            http_status: None,
        }));
        let shown = wire(&t.event(&result, Mode::Live));
        assert_eq!(
            shown[0]["content"]["text"],
            "\n> [claude Stop hook] blocked: tests are failing\n\n"
        );
        let blocked = event(EventBody::PromptBlocked(PromptBlockedEvent {
            turn: 2,
            content: "deploy".into(),
            source: "user".into(),
            reason: "no deploys on Friday\n".into(),
        }));
        let shown = wire(&t.event(&blocked, Mode::Live));
        assert_eq!(
            shown[0]["content"]["text"],
            "> [prompt blocked] no deploys on Friday\n\nThis prompt was not sent to the model.\n"
        );
    }

    #[test]
    fn a_blocked_prompt_shows_its_reason_and_replays_the_prompt() {
        let mut t = Translator::new(PathBuf::from("/p"));
        let blocked = event(EventBody::PromptBlocked(PromptBlockedEvent {
            turn: 1,
            content: "deploy".into(),
            source: "user".into(),
            reason: "no deploys on Friday".into(),
        }));
        let live = wire(&t.event(&blocked, Mode::Live));
        assert_eq!(live.len(), 1);
        assert!(
            live[0]["content"]["text"]
                .as_str()
                .unwrap()
                .contains("no deploys on Friday")
        );
        let replay = wire(&t.event(&blocked, Mode::Replay));
        assert_eq!(replay[0]["sessionUpdate"], "user_message_chunk");
        assert_eq!(replay[0]["content"]["text"], "deploy");
        let end = event(EventBody::TurnEnd(TurnEndEvent {
            turn: 1,
            reason: TurnEndReason::Rejected,
            message: Some("no deploys on Friday".into()),
        }));
        assert!(t.event(&end, Mode::Live).is_empty());
    }

    #[test]
    fn titles_and_kinds_follow_the_tool() {
        let kind = |tool: &str| describe_call(Path::new("/p"), tool, &json!({})).kind;
        assert_eq!(kind("bash"), ToolKind::Execute);
        assert_eq!(kind("read"), ToolKind::Read);
        assert_eq!(kind("write"), ToolKind::Edit);
        assert_eq!(kind("grep"), ToolKind::Search);
        assert_eq!(kind("mystery"), ToolKind::Other);
        let bash = describe_call(Path::new("/p"), "bash", &json!({"command": "ls -la\nrm x"}));
        assert_eq!(bash.title, "Run ls -la");
        assert!(bash.locations.is_empty());
        assert_eq!(
            describe_call(Path::new("/p"), "read", &json!({})).title,
            "Read"
        );
        let read = describe_call(
            Path::new("/p"),
            "read",
            &json!({"file_path": "/etc/hosts", "offset": 3}),
        );
        let wire = serde_json::to_value(&read.locations).unwrap();
        assert_eq!(wire, json!([{"path": "/etc/hosts", "line": 3}]));
        let grep = describe_call(
            Path::new("/p"),
            "grep",
            &json!({"pattern": "x", "path": "src"}),
        );
        let wire = serde_json::to_value(&grep.locations).unwrap();
        assert_eq!(wire, json!([{"path": "/p/src"}]));
        let edit = describe_call(Path::new("/p"), "edit", &json!({"file_path": "a.rs"}));
        assert_eq!(edit.kind, ToolKind::Edit);
    }
}
