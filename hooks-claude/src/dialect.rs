//! The Claude Code dialect as the shared hook engine sees it: how a handler
//! is described and read, what its run meant in the log, what the user is
//! told, and Claude Code's spill of over-long output.

use dsh_hook_runner::{DshFault, HookExit, HookRun, RunRecord};
use dsh_hooks::{Dialect, Finished, HandlerInfo};
use dsh_protocol::{ExactJson, HookDecision};
use dsh_seams::{NoticeLevel, UserNotice};
use serde_json::Value;

use crate::config::{ClaudeConfig, HookHandler};
use crate::events::HookEvent;
use crate::if_rule::if_rule_matches;
use crate::output::{
    Effect, EventCtx, ExitFact, HookFacts, HookNotice, Interpretation, ParsedOutput, interpret,
};

/// A run the bridge settles without starting a process: a settings hook
/// that names `${CLAUDE_PLUGIN_ROOT}` fails as Claude Code fails it, and an
/// SDK hook's answer reads as the run of a command that printed it.
pub(crate) struct Refused(pub HookRun);

/// What an async hook's late result is read with.
pub(crate) struct AsyncNote {
    /// The event label (`PostToolUse:Bash`).
    pub label: String,
    /// The event.
    pub event: HookEvent,
    /// Claude Code's tool name, for tool events.
    pub tool_name: Option<String>,
    /// The command as configured.
    pub command: String,
}

/// The Claude Code dialect over one configuration.
pub(crate) struct Claude {
    /// The merged settings: handlers, options, discovery paths.
    pub config: ClaudeConfig,
}

/// The subject a seam fires with.
pub(crate) struct Firing<'a> {
    pub(crate) event: HookEvent,
    pub(crate) subject: Option<&'a str>,
    pub(crate) tool_name: Option<&'a str>,
    pub(crate) tool_input: Option<&'a Value>,
    pub(crate) source: Option<&'a str>,
    pub(crate) prompt: Option<&'a str>,
    pub(crate) call_id: Option<&'a str>,
    pub(crate) payload: ExactJson,
}

impl Firing<'_> {
    /// An event with no subject, tool, source, prompt or call.
    pub(crate) fn new(event: HookEvent, payload: &impl serde::Serialize) -> Self {
        Firing {
            event,
            subject: None,
            tool_name: None,
            tool_input: None,
            source: None,
            prompt: None,
            call_id: None,
            payload: ExactJson::of(payload),
        }
    }

    /// What its handlers are matched against when fired inside the
    /// subagent of type `agent` (if any).
    pub(crate) fn selector(&self, agent: Option<&str>) -> Selector {
        Selector {
            subject: self.subject.map(str::to_owned),
            tool_name: self.tool_name.map(str::to_owned),
            tool_input: self.tool_input.cloned().unwrap_or_default(),
            agent: agent.map(str::to_owned),
        }
    }
}

/// What one firing's handlers are matched against, owned.
pub(crate) struct Selector {
    /// The matcher's subject (a tool name, a source, an agent type, …).
    pub(crate) subject: Option<String>,
    /// The tool, for `if` rules.
    pub(crate) tool_name: Option<String>,
    /// The tool's input, for `if` rules (null when there is none).
    pub(crate) tool_input: Value,
    /// The agent type when fired inside a subagent: its own frontmatter
    /// hooks are candidates too.
    pub(crate) agent: Option<String>,
}

/// `claude:<event>`: who speaks for `event`'s hooks (notices, contexts,
/// stops), as [`dsh_hooks::Dialect::source`] names it.
pub(crate) fn event_source(event: HookEvent) -> String {
    format!("claude:{event}")
}

/// The `source` of what a hook of `event` with `command` adds.
pub(crate) fn source_of(event: HookEvent, command: &str) -> String {
    format!("{}:{command}", event_source(event))
}

fn facts_of(run: &HookRun) -> HookFacts {
    let exit = match &run.exit {
        HookExit::Exited(code) => ExitFact::Exited(*code),
        HookExit::Signaled(signal) => ExitFact::Signaled(*signal),
        HookExit::TimedOut => ExitFact::TimedOut,
        HookExit::Cancelled => ExitFact::Cancelled,
        // Only reached when `dsh_fault` let it through, which it does not
        // for a limit; read like any other failure to start.
        HookExit::SpawnFailed(why) | HookExit::DshLimit(why) => ExitFact::Failed(why.clone()),
        // Claude Code reads a 2xx body like a command's stdout after exit 0;
        // any other status is a non-blocking error and its body is ignored.
        HookExit::Responded(status) if (200..300).contains(status) => ExitFact::Exited(0),
        HookExit::Responded(status) => {
            return HookFacts {
                exit: ExitFact::Failed(format!("HTTP status {status}")),
                stdout: String::new(),
                stderr: String::new(),
            };
        }
    };
    HookFacts {
        exit,
        stdout: run.stdout.text(),
        stderr: run.stderr.text(),
    }
}

impl Claude {
    /// Spills an over-long model-facing string to a file, as Claude Code
    /// does: the model gets a preview and the path.
    pub fn cap_text(&self, session_id: &str, text: &str) -> String {
        let count = text.chars().count();
        if count <= self.config.options.output_cap_chars {
            return text.to_owned();
        }
        let dir = self
            .config
            .discovery
            .state_dir
            .join("tool-results")
            .join(session_id);
        // Named by its content within the session's directory: a replay
        // names the same file, and equal texts share one.
        let name = format!("hook-{}-stdout.txt", dsh_seams::derived_id(text));
        let path = match dsh_hooks::spill::write(&dir, &name, text) {
            Ok(path) => path,
            Err(error) => {
                tracing::warn!(%error, "could not spill long hook output; passing it whole");
                return text.to_owned();
            }
        };
        let preview: String = text.chars().take(2000).collect();
        format!(
            "<persisted-output>\nOutput too large ({count} characters). Full output saved to: {}\n\nPreview (first 2KB):\n{preview}\n...\n</persisted-output>",
            path.display()
        )
    }

    /// Reads a finished run in the firing described by `event_ctx`.
    pub fn read_run(
        &self,
        session_id: &str,
        event_ctx: &EventCtx<'_>,
        finished: Finished<'_, Refused>,
    ) -> Interpretation {
        let run = match finished {
            Finished::Process(run) | Finished::Custom(Refused(run)) => run,
        };
        if let Some(fault) = run.dsh_fault() {
            return unreadable(event_ctx, &fault);
        }
        let facts = facts_of(run);
        interpret(event_ctx, &facts, &|text: &str| {
            self.cap_text(session_id, text)
        })
    }
}

/// A run whose decision dsh could not read because of its own limits (the
/// output exceeded the decision buffer, or dsh could not start the hook).
/// Reading it as "no decision" would let a deny through, so the events that
/// can block fail closed with a model-facing reason; the others warn.
pub(crate) fn unreadable(ctx: &EventCtx<'_>, fault: &DshFault) -> Interpretation {
    let label = ctx.label();
    let cmd = ctx.command;
    let why = format!("{DSH_COULD_NOT_READ}: {fault}");
    let effect = match ctx.event {
        HookEvent::PreToolUse | HookEvent::PermissionRequest => Effect::Deny {
            text: format!("{label} hook error: [{cmd}]: {why}"),
        },
        HookEvent::UserPromptSubmit | HookEvent::UserPromptExpansion => Effect::Block {
            text: format!(
                "{} operation blocked by hook:\n[{cmd}]: {why}\n\nOriginal prompt: {}",
                ctx.event,
                ctx.prompt.unwrap_or("")
            ),
        },
        HookEvent::Stop => Effect::Block {
            text: format!("[{cmd}]: {why}"),
        },
        HookEvent::PostToolUse
        | HookEvent::PostToolUseFailure
        | HookEvent::PostToolBatch
        | HookEvent::Notification
        | HookEvent::SessionStart
        | HookEvent::SessionEnd
        | HookEvent::StopFailure
        | HookEvent::SubagentStart
        | HookEvent::SubagentStop
        | HookEvent::PreCompact
        | HookEvent::PostCompact
        | HookEvent::PreModelSwitch
        | HookEvent::PostModelSwitch
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
        | HookEvent::MessageDisplay => Effect::None,
    };
    let consequence = match effect {
        Effect::None => "its output was ignored",
        Effect::Allow { .. }
        | Effect::Ask { .. }
        | Effect::Defer { .. }
        | Effect::Deny { .. }
        | Effect::Block { .. } => "dsh treated it as a denial (fail closed)",
    };
    Interpretation {
        parsed: ParsedOutput::Empty,
        effect,
        contexts: Vec::new(),
        steering: Vec::new(),
        updated_input: None,
        updated_permissions: None,
        retry: false,
        replace_output: None,
        stop: None,
        user_notices: vec![HookNotice {
            level: NoticeLevel::Warning,
            text: format!("{label} hook [{cmd}]: {why}; {consequence}"),
        }],
        ignored: Vec::new(),
        why: Some(why),
    }
}

/// The words every fail-closed reason starts with.
pub(crate) const DSH_COULD_NOT_READ: &str = "dsh could not read this hook's decision";

pub(crate) fn system_message(interpretation: &Interpretation) -> Option<String> {
    interpretation
        .parsed
        .wire()
        .system_message
        .as_str()
        .map(str::to_owned)
}

/// The log's decision for one reading (before winner marks).
pub(crate) fn decision_of(interpretation: &Interpretation) -> HookDecision {
    let mut decision = HookDecision::of(interpretation.effect.hook_effect());
    match &interpretation.effect {
        Effect::Allow { reason } | Effect::Ask { reason } | Effect::Defer { reason } => {
            decision.reason = reason.clone();
        }
        Effect::Deny { text } | Effect::Block { text } => decision.reason = Some(text.clone()),
        Effect::None => {}
    }
    decision.contexts = interpretation.contexts.clone();
    decision.steering = interpretation.steering.clone();
    decision.updated_input = interpretation.updated_input.clone();
    decision.updated_permissions = interpretation.updated_permissions.clone();
    decision.retry = interpretation.retry.then_some(true);
    if let Some(stop) = &interpretation.stop {
        decision.continues = Some(false);
        decision.stop_reason = Some(stop.clone());
    }
    decision.user_notices = interpretation.notice_texts();
    decision.ignored = interpretation.ignored.clone();
    decision.why = interpretation.why.clone();
    decision
}

impl Dialect for Claude {
    type Event = HookEvent;
    type Handler = HookHandler;
    type Subject<'s> = &'s Selector;
    // HTTP hooks run through the hook runner like commands; the only run
    // the bridge settles itself is a refusal.
    type Custom = Refused;
    type Reading = Interpretation;
    type Note = AsyncNote;

    fn dialect(&self) -> dsh_protocol::Dialect {
        dsh_protocol::Dialect::Claude
    }

    fn handler_dialect(&self, handler: &HookHandler) -> dsh_protocol::Dialect {
        match handler.kind {
            crate::config::HandlerKind::Callback { .. } => dsh_protocol::Dialect::Sdk,
            crate::config::HandlerKind::Command { .. }
            | crate::config::HandlerKind::Http { .. }
            | crate::config::HandlerKind::Unsupported { .. } => dsh_protocol::Dialect::Claude,
        }
    }

    fn candidates(&self, event: HookEvent, firing: &&Selector) -> Vec<&HookHandler> {
        self.config
            .candidates_in(event, firing.subject.as_deref(), firing.agent.as_deref())
    }

    fn dedup_key(&self, handler: &HookHandler) -> Option<String> {
        Some(handler.dedup_key())
    }

    /// A handler's `if` rule, applied (as Claude Code does) to the
    /// deduplicated list; on events other than tool events it never matches.
    fn admits(&self, event: HookEvent, handler: &HookHandler, firing: &&Selector) -> bool {
        let Some(rule) = &handler.if_rule else {
            return true;
        };
        if !event.is_tool_event() {
            return false;
        }
        if_rule_matches(
            rule,
            firing.tool_name.as_deref().unwrap_or(""),
            &firing.tool_input,
            &self.config.discovery.cwd.to_string_lossy(),
        )
    }

    fn describe(&self, handler: &HookHandler) -> HandlerInfo {
        HandlerInfo {
            matcher: handler.matcher.clone(),
            origin: handler.origin.clone(),
            command: handler.command_text(),
        }
    }

    fn custom_record(&self, custom: &Refused) -> RunRecord {
        RunRecord::of(&custom.0)
    }

    fn decision(&self, _handler: &HookHandler, reading: &Interpretation) -> HookDecision {
        decision_of(reading)
    }

    fn parsed_output(&self, reading: &Interpretation) -> Option<Value> {
        reading.parsed.json().cloned()
    }

    fn notices(
        &self,
        _event: HookEvent,
        handler: &HookHandler,
        reading: &Interpretation,
    ) -> Vec<UserNotice> {
        let source = source_of(
            handler.event.unwrap_or(HookEvent::Stop),
            &handler.command_text(),
        );
        reading
            .user_notices
            .iter()
            .map(|notice| UserNotice {
                source: source.clone(),
                text: notice.text.clone(),
                level: notice.level,
            })
            .collect()
    }

    fn detached_decision(&self, handler: &HookHandler) -> HookDecision {
        if handler.event == Some(HookEvent::StopFailure) {
            return HookDecision {
                why: Some("StopFailure hook: not awaited, as Claude Code; its output is ignored and it is killed if still running when the session ends".to_owned()),
                ..HookDecision::default()
            };
        }
        HookDecision {
            why: Some("async hook: not awaited; its additionalContext/systemMessage reach the model on the next turn".to_owned()),
            ..HookDecision::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(event: HookEvent) -> EventCtx<'static> {
        EventCtx {
            event,
            tool_name: Some("Bash"),
            source: None,
            prompt: Some("hi"),
            command: "./guard.sh",
        }
    }

    /// A hook dsh could not start (EMFILE) blocks every event that can
    /// block, with the reason; elsewhere it only warns.
    #[test]
    fn a_dsh_limit_fails_closed_on_blocking_events_only() {
        let fault = DshFault::NotStarted("Too many open files (os error 24)".into());
        for event in [
            HookEvent::PreToolUse,
            HookEvent::PermissionRequest,
            HookEvent::UserPromptSubmit,
            HookEvent::Stop,
        ] {
            let read = unreadable(&ctx(event), &fault);
            let text = match &read.effect {
                Effect::Deny { text } | Effect::Block { text } => text.clone(),
                other => panic!("{event}: {other:?}"),
            };
            assert!(text.contains(DSH_COULD_NOT_READ), "{event}: {text}");
            assert!(text.contains("os error 24"), "{event}: {text}");
            assert_eq!(read.user_notices[0].level, NoticeLevel::Warning);
        }
        for event in [HookEvent::PostToolUse, HookEvent::SessionStart] {
            let read = unreadable(&ctx(event), &fault);
            assert_eq!(read.effect, Effect::None, "{event}");
            assert!(read.user_notices[0].text.contains(DSH_COULD_NOT_READ));
        }
    }
}
