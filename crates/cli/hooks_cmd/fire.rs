//! `dsh hooks test`, and the firing engine `dsh hooks replay` shares: one
//! event's hooks run through the real bridge plugins' seam methods with a
//! hand-built [`SeamContext`] whose recording sink captures every
//! `hook/invoked` / `hook/result` and user notice. No model, no tool.

use crate::stdio::{ExitStatus, out, outln};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context as _, bail};
use dsh_protocol::EventBody;
use dsh_seams::{
    ApprovalDecision, CancellationToken, ContinuationDecision, ContinuationInput, DenialKind,
    Disposition, Notification, NotificationKind, Plugin, PostToolAction, PostToolDecision,
    PreToolDecision, PreToolOutcome, PromptDecision, PromptInput, ProposedCall, SeamContext,
    SessionEndReason, SessionEnv, SessionInfo, SessionSink, SessionStartSource, ToolExecution,
    ToolOutcome, TurnControl, UserNotice,
};
use dsh_tools::{CallVerdict, builtin::ProcessLayer};
use serde::Serialize;
use serde_json::{Value, json};

use super::{DialectArg, Format, excerpt, nearest};
use crate::wiring::{self, HookSources};

mod lifecycle;
pub(super) use lifecycle::LifecycleFields;

/// The events `dsh hooks test` can fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TestEvent {
    PreToolUse,
    PermissionRequest,
    PostToolUse,
    PostToolUseFailure,
    UserPromptSubmit,
    SessionStart,
    Stop,
    SessionEnd,
    Notification,
    // Fired by `lifecycle`.
    SubagentStart,
    SubagentStop,
    PreCompact,
    PostCompact,
    StopFailure,
    UserPromptExpansion,
    InstructionsLoaded,
    PermissionDenied,
}

const TESTABLE: &[(&str, TestEvent)] = &[
    ("PreToolUse", TestEvent::PreToolUse),
    ("PermissionRequest", TestEvent::PermissionRequest),
    ("PostToolUse", TestEvent::PostToolUse),
    ("PostToolUseFailure", TestEvent::PostToolUseFailure),
    ("UserPromptSubmit", TestEvent::UserPromptSubmit),
    ("SessionStart", TestEvent::SessionStart),
    ("Stop", TestEvent::Stop),
    ("SessionEnd", TestEvent::SessionEnd),
    ("Notification", TestEvent::Notification),
    ("SubagentStart", TestEvent::SubagentStart),
    ("SubagentStop", TestEvent::SubagentStop),
    ("PreCompact", TestEvent::PreCompact),
    ("PostCompact", TestEvent::PostCompact),
    ("StopFailure", TestEvent::StopFailure),
    ("UserPromptExpansion", TestEvent::UserPromptExpansion),
    ("InstructionsLoaded", TestEvent::InstructionsLoaded),
    ("PermissionDenied", TestEvent::PermissionDenied),
];

impl TestEvent {
    pub(super) fn parse(name: &str) -> anyhow::Result<TestEvent> {
        if let Some((_, event)) = TESTABLE.iter().find(|(n, _)| *n == name) {
            return Ok(*event);
        }
        let known_elsewhere = dsh_hooks_claude::HookEvent::parse(name).is_some()
            || dsh_hooks_codex::CodexEvent::from_name(name).is_some();
        if known_elsewhere {
            bail!(
                "`dsh hooks test` cannot fire {name}: dsh does not fire it, or it needs a model request (testable: {})",
                TESTABLE
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        let mut all: Vec<&str> = dsh_hooks_claude::HookEvent::ALL
            .iter()
            .map(|e| e.as_str())
            .collect();
        all.extend(dsh_hooks_codex::CodexEvent::ALL.iter().map(|e| e.as_str()));
        bail!(
            "unknown hook event `{name}`{}",
            nearest(name, all)
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default()
        )
    }

    fn is_tool_event(self) -> bool {
        matches!(
            self,
            TestEvent::PreToolUse
                | TestEvent::PermissionRequest
                | TestEvent::PostToolUse
                | TestEvent::PostToolUseFailure
                | TestEvent::PermissionDenied
        )
    }
}

/// Everything one firing needs, in dsh's canonical terms.
#[derive(Debug, Clone)]
pub(super) struct Firing {
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

/// dsh's tool name for a Claude Code / Codex hook tool name (the bridges
/// own both maps; dsh's own names pass through them).
fn dsh_tool(name: &str) -> anyhow::Result<String> {
    match dsh_hooks_codex::tools::dsh_tool(name) {
        dsh_hooks_codex::tools::DshTool::Tool(tool) => {
            Ok(dsh_hooks_claude::payload::dsh_tool_name(tool).to_owned())
        }
        dsh_hooks_codex::tools::DshTool::WriteOrEdit => bail!(
            "`apply_patch` payloads cannot be mapped back to a dsh call; use --tool Write or --tool Edit with their arguments"
        ),
    }
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
    pub(super) fn from_payload(
        event: TestEvent,
        tool: Option<&str>,
        payload: &Value,
    ) -> anyhow::Result<Firing> {
        let text = |key: &str| payload.get(key).and_then(Value::as_str).map(str::to_owned);
        let tool_name = tool.map(str::to_owned).or_else(|| text("tool_name"));
        let tool = match (&tool_name, event.is_tool_event()) {
            (Some(name), _) => dsh_tool(name)?,
            (None, true) => "bash".to_owned(),
            (None, false) => String::new(),
        };
        let arguments = match payload.get("tool_input") {
            Some(input) if input.is_object() => input.clone(),
            Some(other) => bail!("`tool_input` must be an object, not {other}"),
            None => default_arguments(&tool),
        };
        let source = match text("source").as_deref() {
            None | Some("startup") => SessionStartSource::Startup,
            Some("resume") => SessionStartSource::Resume,
            Some("clear") => SessionStartSource::Clear,
            Some("compact") => SessionStartSource::Compact,
            Some(other) => {
                bail!("unknown SessionStart source `{other}` (startup, resume, clear, compact)")
            }
        };
        let end_reason = match text("reason").as_deref() {
            Some("prompt_input_exit") => SessionEndReason::Exit,
            _ => SessionEndReason::Other,
        };
        let kind = match text("notification_type").as_deref() {
            Some("idle_prompt") => NotificationKind::Idle,
            _ => NotificationKind::PermissionPrompt,
        };
        let session_id = text("session_id").unwrap_or_else(|| "hooks-test".to_owned());
        // Bridges build paths (the transcript) from the session id.
        dsh_session::validate_session_id(&session_id)
            .map_err(|error| anyhow::anyhow!("the payload's session_id: {error}"))?;
        Ok(Firing {
            event,
            session_id,
            turn: 1,
            call_id: text("tool_use_id").unwrap_or_else(|| "call_hooks_test".to_owned()),
            tool,
            arguments,
            tool_response: payload.get("tool_response").cloned(),
            error: text("error"),
            prompt: text("prompt").unwrap_or_else(|| "hello".to_owned()),
            source,
            stop_hook_active: payload
                .get("stop_hook_active")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            last_assistant_message: text("last_assistant_message").unwrap_or_default(),
            end_reason,
            notification: Notification {
                kind,
                message: text("message").unwrap_or_else(|| "dsh needs your permission".to_owned()),
            },
            lifecycle: LifecycleFields::from_payload(event, payload)?,
        })
    }

    /// The synthetic outcome a post-execute seam sees.
    fn outcome(&self) -> ToolOutcome {
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

/// A sink that keeps everything.
#[derive(Default)]
pub(super) struct Recorder {
    events: Mutex<Vec<EventBody>>,
    notices: Mutex<Vec<UserNotice>>,
}

impl SessionSink for Recorder {
    fn record(&self, body: EventBody) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(body);
    }

    fn tell_user(&self, notice: UserNotice) {
        self.notices
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(notice);
    }
}

/// One hook run, as recorded.
#[derive(Debug, Clone, Serialize)]
pub(super) struct RunReport {
    pub dialect: String,
    pub event: String,
    pub matcher: Option<String>,
    pub origin: Option<String>,
    pub command: String,
    pub input: Value,
    pub outcome: String,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub stdout: String,
    pub stderr: String,
    pub error: Option<String>,
    pub decision: Option<dsh_protocol::HookDecision>, // none until the run ends
}

/// What one firing decided.
#[derive(Debug, Clone, Serialize)]
pub(super) struct FireReport {
    pub event: String,
    pub tool: Option<String>,
    pub arguments: Option<Value>,
    pub runs: Vec<RunReport>,
    /// The combined seam decision.
    pub decision: Value,
    /// One line.
    pub summary: String,
    pub model_sees: Vec<String>,
    pub user_sees: Vec<String>,
}

/// Pairs `hook/invoked` with `hook/result` in record order.
pub(super) fn pair_runs(events: &[EventBody]) -> Vec<RunReport> {
    let mut runs: Vec<RunReport> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    for body in events {
        match body {
            EventBody::HookInvoked {
                invocation_id,
                dialect,
                event,
                matcher,
                origin,
                command,
                input,
                ..
            } => {
                ids.push(invocation_id.clone());
                runs.push(RunReport {
                    dialect: dialect.as_str().to_owned(),
                    event: event.clone(),
                    matcher: matcher.clone(),
                    origin: origin.clone(),
                    command: command.clone(),
                    input: input.clone(),
                    outcome: "not finished".to_owned(),
                    exit_code: None,
                    duration_ms: 0,
                    stdout: String::new(),
                    stderr: String::new(),
                    error: None,
                    decision: None,
                });
            }
            EventBody::HookResult {
                invocation_id,
                outcome,
                exit_code,
                duration_ms,
                stdout,
                stderr,
                error,
                decision,
                ..
            } => {
                if let Some(index) = ids.iter().rposition(|id| id == invocation_id) {
                    let run = &mut runs[index];
                    run.outcome = serde_json::to_value(outcome)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default();
                    run.exit_code = *exit_code;
                    run.duration_ms = *duration_ms;
                    run.stdout = stdout.clone();
                    run.stderr = stderr.clone();
                    run.error = error.clone();
                    run.decision = Some((**decision).clone());
                }
            }
            EventBody::SeamNote { .. }
            | EventBody::SessionHeader { .. }
            | EventBody::TurnStart { .. }
            | EventBody::CompactionStarted { .. }
            | EventBody::CompactionCompleted { .. }
            | EventBody::CompactionFailed { .. }
            | EventBody::UserMessage { .. }
            | EventBody::PromptBlocked { .. }
            | EventBody::AssistantMessage { .. }
            | EventBody::ToolCall { .. }
            | EventBody::ToolResult { .. }
            | EventBody::ContextMessage { .. }
            | EventBody::SteeringMessage { .. }
            | EventBody::SessionCleared { .. }
            | EventBody::ModelSwitched { .. }
            | EventBody::TurnEnd { .. } => {}
        }
    }
    runs
}

fn context_lines(contexts: &[dsh_seams::ContextEntry]) -> Vec<String> {
    contexts
        .iter()
        .map(|c| format!("system message: {}", c.content))
        .collect()
}

/// Fires `firing` through `plugins` the way the loop and the tool registry
/// would, and reports what the hooks decided.
pub(super) async fn fire(plugins: &[Arc<dyn Plugin>], cwd: &Path, firing: &Firing) -> FireReport {
    let recorder = Arc::new(Recorder::default());
    // Instruction files are read before the session-start seam.
    let in_turn = !matches!(
        firing.event,
        TestEvent::SessionStart | TestEvent::SessionEnd | TestEvent::InstructionsLoaded
    );
    let in_subagent = matches!(
        firing.event,
        TestEvent::SubagentStart | TestEvent::SubagentStop
    );
    let ctx = SeamContext {
        session: Arc::new(SessionInfo {
            session_id: firing.session_id.clone(),
            cwd: cwd.to_owned(),
            model: "none".to_owned(),
            log_path: None,
            env: SessionEnv::default(),
            // PermissionRequest hooks run where a person could answer.
            interactive: firing.event == TestEvent::PermissionRequest,
        }),
        turn: in_turn.then_some(firing.turn),
        cancel: CancellationToken::new(),
        sink: recorder.clone(),
        control: TurnControl::default(),
        agent: in_subagent.then(|| firing.lifecycle.identity()),
        subagents: None,
    };
    let mut model_sees = Vec::new();
    let mut user_sees = Vec::new();
    let mut arguments_used = None;
    let (decision, summary) = match firing.event {
        TestEvent::PreToolUse => {
            let call = ProposedCall {
                call_id: firing.call_id.clone(),
                tool: firing.tool.clone(),
                arguments: firing.arguments.clone(),
                parent_execution_id: None,
            };
            // The registry's own dry run (seal, pre-execute, approval,
            // guards): what a session would decide, never dispatched.
            let mut registry = dsh_agent::builtin_registry(plugins, &ProcessLayer::default());
            // An MCP tool is asked about without starting its server.
            if firing.tool.starts_with("mcp__") {
                registry.register_tool(std::sync::Arc::new(dsh_mcp::McpStandIn::new(&firing.tool)));
            }
            let decided = registry.decide(&ctx, call).await;
            let exec = &decided.execution;
            let rewritten_by = exec.rewritten_by.clone();
            let (decision, stopped) = match decided.verdict {
                CallVerdict::Runs { decision } => (Some(decision), None),
                CallVerdict::Denied { decision, outcome } => (Some(decision), Some(outcome)),
                CallVerdict::Rejected(outcome) => (None, Some(outcome)),
            };
            let stopped_by = stopped.as_ref().map(|outcome| outcome.disposition);
            let summary = match (&decision, stopped_by) {
                (None, _) => {
                    model_sees.push(format!(
                        "tool result (error): {}",
                        stopped.as_ref().map_or("", |o| o.content.as_str())
                    ));
                    "rejected before any hook decided".to_owned()
                }
                (Some(_), Some(Disposition::Denied(DenialKind::Guard))) => {
                    model_sees.push(format!(
                        "tool result (error): {}",
                        stopped.as_ref().map_or("", |o| o.content.as_str())
                    ));
                    "deny (guard)".to_owned()
                }
                (
                    Some(
                        PreToolDecision::Deny { reason } | PreToolDecision::AutoDeny { reason, .. },
                    ),
                    _,
                ) => {
                    model_sees.push(format!("tool result (error): {reason}"));
                    "deny".to_owned()
                }
                (
                    Some(PreToolDecision::Ask { reason, .. }),
                    Some(Disposition::Denied(DenialKind::NoApprovalService)),
                ) => {
                    model_sees.push(format!(
                        "interactive: the user is asked to approve; headless: tool result (error): {}",
                        reason.as_deref().unwrap_or("(dsh's default denial text)")
                    ));
                    "ask".to_owned()
                }
                (Some(PreToolDecision::Ask { .. }), Some(_)) => {
                    model_sees.push(format!(
                        "tool result (error): {}",
                        stopped.as_ref().map_or("", |o| o.content.as_str())
                    ));
                    "ask, denied by an approval hook".to_owned()
                }
                (Some(PreToolDecision::Ask { .. }), None) => {
                    model_sees.push(format!(
                        "the {} call runs with {}",
                        firing.tool, exec.arguments
                    ));
                    "ask, allowed by an approval hook".to_owned()
                }
                (Some(PreToolDecision::Allow), _) => {
                    model_sees.push(format!(
                        "the {} call runs with {}",
                        firing.tool, exec.arguments
                    ));
                    match &rewritten_by {
                        Some(by) => format!("allow, arguments rewritten by {by}"),
                        None => "allow".to_owned(),
                    }
                }
            };
            model_sees.extend(context_lines(&decided.contexts));
            arguments_used = Some((*exec.arguments).clone());
            let outcome = PreToolOutcome {
                decision: decision.clone().unwrap_or(PreToolDecision::Allow),
                contexts: decided.contexts.clone(),
            };
            let mut value = serde_json::to_value(&outcome).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut value {
                if let Some(by) = &rewritten_by {
                    map.insert(
                        "rewrite".into(),
                        json!({"arguments": *exec.arguments, "by": by, "conflicts": decided.rewrite_conflicts}),
                    );
                }
                // What stopped the call beyond the hooks' own decision
                // (sealing, a guard, an approval hook).
                let beyond_hooks = match (&decision, stopped_by) {
                    (None, _) => true,
                    (Some(_), Some(Disposition::Denied(DenialKind::Guard))) => true,
                    (Some(PreToolDecision::Ask { .. }), Some(Disposition::Denied(kind))) => {
                        kind != DenialKind::NoApprovalService
                    }
                    _ => false,
                };
                if let (true, Some(stopped)) = (beyond_hooks, &stopped) {
                    map.insert(
                        "stopped".into(),
                        json!({"content": stopped.content, "disposition": stopped.disposition}),
                    );
                }
            }
            (value, summary)
        }
        TestEvent::PermissionRequest => {
            let exec = ToolExecution {
                execution_id: "exec_hooks_test".to_owned(),
                call_id: firing.call_id.clone(),
                tool: firing.tool.clone(),
                arguments: Arc::new(firing.arguments.clone()),
                original_arguments: None,
                rewritten_by: None,
                parent_execution_id: None,
            };
            let mut combined = ApprovalDecision::Abstain;
            for plugin in plugins {
                match plugin
                    .approve(&ctx, &exec, &dsh_seams::ApprovalAsk::default(), None)
                    .await
                {
                    ApprovalDecision::Abstain => {}
                    allow @ ApprovalDecision::Allow(_) => {
                        if combined == ApprovalDecision::Abstain {
                            combined = allow;
                        }
                    }
                    ApprovalDecision::AllowOnce => {
                        if combined == ApprovalDecision::Abstain {
                            combined = ApprovalDecision::AllowOnce;
                        }
                    }
                    deny @ ApprovalDecision::Deny { .. } => {
                        combined = deny;
                        break;
                    }
                }
            }
            arguments_used = Some(firing.arguments.clone());
            let summary = match &combined {
                ApprovalDecision::Abstain => {
                    model_sees.push("no hook decided: the user is asked (headless: denied)".into());
                    "abstain"
                }
                ApprovalDecision::AllowOnce => {
                    model_sees.push(format!("the {} call runs", firing.tool));
                    "allow once"
                }
                ApprovalDecision::Allow(grant) => {
                    match &grant.updated_input {
                        Some(input) => {
                            model_sees.push(format!("the {} call runs with {input}", firing.tool))
                        }
                        None => model_sees.push(format!("the {} call runs", firing.tool)),
                    }
                    if !grant.updates.is_empty() {
                        model_sees.push(format!(
                            "permission updates: {}",
                            serde_json::to_string(&grant.updates).unwrap_or_default()
                        ));
                    }
                    "allow"
                }
                ApprovalDecision::Deny { message } => {
                    model_sees.push(format!("tool result (error): {message}"));
                    "deny"
                }
            };
            (
                serde_json::to_value(&combined).unwrap_or(Value::Null),
                summary.to_owned(),
            )
        }
        TestEvent::PostToolUse | TestEvent::PostToolUseFailure => {
            let exec = ToolExecution {
                execution_id: "exec_hooks_test".to_owned(),
                call_id: firing.call_id.clone(),
                tool: firing.tool.clone(),
                arguments: Arc::new(firing.arguments.clone()),
                original_arguments: None,
                rewritten_by: None,
                parent_execution_id: None,
            };
            let outcome = firing.outcome();
            let mut combined = PostToolDecision::accept();
            for plugin in plugins {
                let own = plugin
                    .post_execute(&ctx, &exec, &outcome, Duration::from_millis(1))
                    .await;
                combined.contexts.extend(own.contexts);
                if combined.action == PostToolAction::Accept {
                    combined.action = own.action;
                }
            }
            arguments_used = Some(firing.arguments.clone());
            let summary = match &combined.action {
                PostToolAction::Accept => {
                    model_sees.push(format!(
                        "tool result{}: {}",
                        if outcome.is_error { " (error)" } else { "" },
                        excerpt(&outcome.content, 200)
                    ));
                    "accept"
                }
                PostToolAction::Block { feedback } => {
                    model_sees.push(format!("tool result (error): {feedback}"));
                    "block"
                }
                PostToolAction::ReplaceContent { content } => {
                    model_sees.push(format!("tool result: {content}"));
                    "replace content"
                }
                PostToolAction::ReplaceValue { value } => {
                    model_sees.push(format!("tool result value: {value}"));
                    "replace value"
                }
            };
            model_sees.extend(context_lines(&combined.contexts));
            (
                serde_json::to_value(&combined).unwrap_or(Value::Null),
                summary.to_owned(),
            )
        }
        TestEvent::UserPromptSubmit => {
            let mut prompt = PromptInput {
                content: firing.prompt.clone(),
                source: "user".to_owned(),
            };
            let mut contexts = Vec::new();
            let mut rewritten = None;
            let mut decided = None;
            for plugin in plugins {
                match plugin.prompt_submit(&ctx, &prompt).await {
                    PromptDecision::Allow {
                        rewrite,
                        contexts: own,
                    } => {
                        contexts.extend(own);
                        if let Some(text) = rewrite {
                            prompt.content = text.clone();
                            rewritten = Some(text);
                        }
                    }
                    other @ PromptDecision::Block { .. } | other @ PromptDecision::Stop { .. } => {
                        decided = Some(other);
                        break;
                    }
                }
            }
            let decision = decided.unwrap_or(PromptDecision::Allow {
                rewrite: rewritten,
                contexts,
            });
            let summary = match &decision {
                PromptDecision::Allow { contexts, .. } => {
                    model_sees.push(format!("user message: {}", prompt.content));
                    model_sees.extend(context_lines(contexts));
                    "allow"
                }
                PromptDecision::Block { reason } => {
                    model_sees.push("nothing: the prompt is blocked, no model request".into());
                    user_sees.push(format!("prompt blocked: {reason}"));
                    "block"
                }
                PromptDecision::Stop { reason } => {
                    model_sees.push("nothing: the turn stops before a model request".into());
                    user_sees.push(format!("turn stopped: {reason}"));
                    "stop"
                }
            };
            (
                serde_json::to_value(&decision).unwrap_or(Value::Null),
                summary.to_owned(),
            )
        }
        TestEvent::SessionStart => {
            let mut contexts = Vec::new();
            for plugin in plugins {
                contexts.extend(plugin.session_start(&ctx, firing.source).await);
            }
            model_sees.extend(context_lines(&contexts));
            let summary = format!("{} context(s)", contexts.len());
            (json!({"contexts": contexts}), summary)
        }
        TestEvent::Stop => {
            let input = ContinuationInput {
                turn: firing.turn,
                step: 1,
                last_assistant_message: firing.last_assistant_message.clone(),
                forced_continuations: u32::from(firing.stop_hook_active),
            };
            let mut decision = ContinuationDecision::Stop;
            for plugin in plugins {
                let own = plugin.turn_continuation(&ctx, &input).await;
                if own != ContinuationDecision::Stop {
                    decision = own;
                    break;
                }
            }
            let summary = match &decision {
                ContinuationDecision::Stop => {
                    model_sees.push("nothing: the turn ends".into());
                    "stop (the turn ends normally)"
                }
                ContinuationDecision::Continue {
                    reason, contexts, ..
                } => {
                    if let Some(reason) = reason {
                        model_sees.push(format!("user message: {reason}"));
                    }
                    model_sees.extend(context_lines(contexts));
                    "continue (the turn goes on)"
                }
                ContinuationDecision::Halt { reason } => {
                    user_sees.push(format!("turn stopped: {reason}"));
                    "halt"
                }
            };
            (
                serde_json::to_value(&decision).unwrap_or(Value::Null),
                summary.to_owned(),
            )
        }
        TestEvent::SessionEnd => {
            for plugin in plugins {
                plugin.session_end(&ctx, firing.end_reason).await;
            }
            (
                Value::Null,
                "observed (SessionEnd cannot change anything)".to_owned(),
            )
        }
        TestEvent::Notification => {
            for plugin in plugins {
                plugin.notification(&ctx, &firing.notification).await;
            }
            (
                Value::Null,
                "observed (Notification cannot change anything)".to_owned(),
            )
        }
        TestEvent::SubagentStart
        | TestEvent::SubagentStop
        | TestEvent::PreCompact
        | TestEvent::PostCompact
        | TestEvent::StopFailure
        | TestEvent::UserPromptExpansion
        | TestEvent::InstructionsLoaded
        | TestEvent::PermissionDenied => {
            if firing.event == TestEvent::PermissionDenied {
                arguments_used = Some(firing.arguments.clone());
            }
            let sees = lifecycle::Sees {
                model: &mut model_sees,
                user: &mut user_sees,
            };
            lifecycle::fire(plugins, &ctx, firing, sees).await
        }
    };
    if let Some(stop) = ctx.control.stop_requested() {
        user_sees.push(format!(
            "turn stopped after this phase: {} ({})",
            stop.reason, stop.source
        ));
    }
    for entry in ctx.control.take_injected() {
        model_sees.push(format!("system message: {}", entry.content));
    }
    for notice in recorder
        .notices
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        user_sees.push(format!("{}: {}", notice.source, notice.text));
    }
    let events = recorder
        .events
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    FireReport {
        event: TESTABLE
            .iter()
            .find(|(_, e)| *e == firing.event)
            .map_or("", |(n, _)| *n)
            .to_owned(),
        tool: firing.event.is_tool_event().then(|| firing.tool.clone()),
        arguments: arguments_used,
        runs: pair_runs(&events),
        decision,
        summary,
        model_sees,
        user_sees,
    }
}

/// The bridge plugins for `sources`, every hook the caller's trust
/// decision left in (`excluded_hooks` stay out), optionally one dialect.
pub(super) fn plugins(
    sources: &HookSources,
    dialect: Option<DialectArg>,
) -> anyhow::Result<(Vec<Arc<dyn Plugin>>, dsh_hook_runner::HookRunner)> {
    let mut sources = sources.clone();
    sources.run_untrusted = true;
    let loaded = wiring::load_hooks(&sources)?;
    let plugins = loaded
        .plugins
        .into_iter()
        .filter(|plugin| match dialect {
            None => true,
            Some(DialectArg::Claude) => plugin.name() == "claude",
            Some(DialectArg::Codex) => plugin.name() != "claude",
        })
        .collect();
    Ok((plugins, loaded.runner))
}

pub(super) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// `dsh hooks test` arguments.
pub(super) struct TestArgs {
    pub event: String,
    pub tool: Option<String>,
    pub input: Option<String>,
    pub dialect: Option<DialectArg>,
    pub format: Format,
    /// Event fields given as flags: (payload key, value), written over the
    /// payload's own.
    pub fields: Vec<(&'static str, String)>,
}

/// Lets hooks that were started but not awaited (StopFailure's) do their
/// work before the runner kills what is left: they are spawned on the
/// runtime after the seam returned, so first wait (briefly) for one to
/// show up, then for all to end.
fn wait_for_detached(runner: &dsh_hook_runner::HookRunner) {
    let start = std::time::Instant::now();
    while runner.live_groups() == 0 && start.elapsed() < DETACHED_START {
        std::thread::sleep(Duration::from_millis(5));
    }
    while runner.live_groups() > 0 && start.elapsed() < DETACHED_GRACE {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How long a detached hook may take to be spawned (a quick one may also
/// have come and gone by then).
const DETACHED_START: Duration = Duration::from_secs(1);

/// How long `dsh hooks test StopFailure` lets its detached hooks finish
/// before they are killed (a session waits about a second at teardown; a
/// test run is there to see them work, so it is more patient).
const DETACHED_GRACE: Duration = Duration::from_secs(10);

fn read_input(input: Option<&str>) -> anyhow::Result<Value> {
    let Some(input) = input else {
        return Ok(json!({}));
    };
    let (text, origin) = match input.strip_prefix('@') {
        Some(path) => (
            fs_err::read_to_string(path).context("cannot read the --input file")?,
            path.to_owned(),
        ),
        None => (input.to_owned(), "--input".to_owned()),
    };
    let value: Value = serde_json::from_str(&text).map_err(|error| {
        anyhow::anyhow!(
            "{origin}:{}:{}: not valid JSON: {error}",
            error.line(),
            error.column()
        )
    })?;
    if !value.is_object() {
        bail!("{origin}: the hook payload must be a JSON object");
    }
    Ok(value)
}

pub(super) fn run_test(sources: &HookSources, args: TestArgs) -> anyhow::Result<ExitStatus> {
    let event = TestEvent::parse(&args.event)?;
    let mut payload = read_input(args.input.as_deref())?;
    if let Value::Object(map) = &mut payload {
        for (key, value) in args.fields {
            map.insert(key.to_owned(), Value::String(value));
        }
    }
    let firing = Firing::from_payload(event, args.tool.as_deref(), &payload)?;
    let (plugins, runner) = plugins(sources, args.dialect)?;
    let runtime = runtime()?;
    let report = runtime.block_on(fire(&plugins, &sources.cwd, &firing));
    if report.runs.iter().any(|run| run.outcome == "detached") {
        wait_for_detached(&runner);
    }
    runner.kill_all();
    match args.format {
        Format::Json => outln!("{}", serde_json::to_string_pretty(&report)?)?,
        Format::Text => out!("{}", render(&report, &sources.cwd))?,
    }
    Ok(ExitStatus::Success)
}

/// A hook run for people.
pub(super) fn render_run(out: &mut String, index: usize, run: &RunReport, project: &Path) {
    let matcher = run
        .matcher
        .as_deref()
        .map(|m| format!(" matcher {m:?}"))
        .unwrap_or_default();
    out.push_str(&format!(
        "  {index}. [{}] {}{matcher}: {}\n",
        run.dialect, run.event, run.command
    ));
    if let Some(origin) = &run.origin {
        out.push_str(&format!(
            "     from {}\n",
            crate::trust::show_path(origin, project)
        ));
    }
    let exit = match run.exit_code {
        Some(code) => format!("exit {code}"),
        None => run.outcome.clone(),
    };
    out.push_str(&format!("     {exit} in {} ms\n", run.duration_ms));
    if !run.stdout.trim().is_empty() {
        out.push_str(&format!("     stdout: {}\n", excerpt(&run.stdout, 240)));
    }
    if !run.stderr.trim().is_empty() {
        out.push_str(&format!("     stderr: {}\n", excerpt(&run.stderr, 240)));
    }
    if let Some(error) = &run.error {
        out.push_str(&format!("     error: {}\n", excerpt(error, 240)));
    }
    let decision = serde_json::to_string(&run.decision).unwrap_or_default();
    out.push_str(&format!("     decision: {decision}\n"));
}

fn render(report: &FireReport, project: &Path) -> String {
    let mut out = String::new();
    out.push_str(&format!("event: {}", report.event));
    if let Some(tool) = &report.tool {
        out.push_str(&format!(" (tool {tool})"));
    }
    out.push('\n');
    if let Some(arguments) = &report.arguments {
        out.push_str(&format!("arguments: {arguments}\n"));
    }
    if report.runs.is_empty() {
        out.push_str("hooks run: none (no configured hook matches)\n");
    } else {
        out.push_str(&format!("hooks run: {}\n", report.runs.len()));
        for (index, run) in report.runs.iter().enumerate() {
            render_run(&mut out, index + 1, run, project);
        }
    }
    out.push_str(&format!("decision: {}\n", report.summary));
    out.push_str("the model sees:\n");
    if report.model_sees.is_empty() {
        out.push_str("  nothing\n");
    }
    for line in &report.model_sees {
        out.push_str(&format!("  {}\n", display_line(line)));
    }
    out.push_str("the user sees:\n");
    if report.user_sees.is_empty() {
        out.push_str("  nothing\n");
    }
    for line in &report.user_sees {
        out.push_str(&format!("  {}\n", display_line(line)));
    }
    out
}

/// One "sees" entry as shown: continuation lines indented under the first.
/// Hook output is kept verbatim in the report (it is what the model gets);
/// only this rendering drops trailing whitespace, so a newline-terminated
/// stderr does not end the section with an indented empty line.
fn display_line(line: &str) -> String {
    line.trim_end().replace('\n', "\n    ")
}
