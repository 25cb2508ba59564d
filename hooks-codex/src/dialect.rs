//! The Codex dialect as the shared hook engine sees it: how a handler is
//! described, run and read, and what its run meant in the log.

use std::convert::Infallible;
use std::path::PathBuf;
use std::time::Duration;

use dsh_hook_runner::{DshFault, HookProgram, HookSpec, RunRecord};
use dsh_hooks::{Dialect, Finished, HandlerInfo, Launch, Rules};
use dsh_protocol::{ExactJson, HookDecision, HookEffect, HookEntry, HookRunStatus};
use dsh_seams::{NoticeLevel, SeamContext, UserNotice};
use serde_json::Value;

use crate::config::approval::ApprovalPolicy;
use crate::config::{Handler, NotifyConfig, TrustPolicy, TrustState};
use crate::event::CodexEvent;
use crate::output::{
    Effect, EntryKind, Interpretation, OutputEntry, RunFacts, RunStatus, interpret,
};

use crate::payload::{CodexPayload, codex_agent_type};
use crate::spill::limit_context;

/// Codex's reading of one run: the interpretation plus the model-facing
/// contexts after Codex's length limit.
#[derive(Debug, Clone)]
pub(crate) struct Reading {
    /// What the output meant.
    pub interpretation: Interpretation,
    /// The contexts as the model gets them (long ones spilled).
    pub contexts: Vec<String>,
    /// Why a long context could not be saved, if it could not.
    pub spill_error: Option<String>,
    /// The user's warning when one of dsh's own limits kept it from reading
    /// the run's decision (see [`unreadable`]).
    pub dsh_fault: Option<String>,
}

/// The Codex dialect.
pub(crate) struct Codex {
    /// Every configured handler, in configuration order.
    pub handlers: Vec<Handler>,
    /// Which of them run.
    pub policy: TrustPolicy,
    /// The shell hook commands run in.
    pub shell: PathBuf,
    /// Where long contexts are saved.
    pub spill_dir: PathBuf,
    /// The legacy `notify` program, run at turn end.
    pub notify: Option<NotifyConfig>,
    /// dsh's cap on consecutive Stop blocks in one turn.
    pub stop_block_cap: u32,
    /// Codex's `approval_policy`, if set.
    pub approval: Option<ApprovalPolicy>,
    /// The payloads' `permission_mode` when the session asked for one.
    pub permission_mode: Option<String>,
}

impl Rules for Codex {
    /// The typed stdin ([`crate::payload::CodexPayload`]).
    type Payload = CodexPayload;

    /// Inside a sub-agent every payload but the sub-agent events' own
    /// names it.
    fn wire(
        &self,
        ctx: &SeamContext,
        _event: CodexEvent,
        payload: &CodexPayload,
        _handler: &Handler,
    ) -> ExactJson {
        match &ctx.agent {
            Some(agent) => ExactJson::of(
                &payload
                    .clone()
                    .in_agent(&agent.agent_id, codex_agent_type(&agent.agent_type)),
            ),
            None => ExactJson::of(payload),
        }
    }

    fn launch<'a>(
        &'a self,
        ctx: &'a SeamContext,
        handler: &Handler,
        stdin: &[u8],
    ) -> Launch<'a, Self> {
        let spec = HookSpec {
            program: HookProgram::Shell {
                shell: self.shell.clone(),
                command: crate::plugins::command_for(handler),
            },
            cwd: ctx.session.cwd.clone(),
            env: crate::plugins::hook_env(handler),
            stdin: stdin.to_vec(),
            timeout: Duration::from_secs(handler.timeout_secs),
        };
        if handler.is_async {
            // Codex does not wait for async handlers and ignores their
            // decisions; dsh starts them detached and never reads them.
            Launch::Detached { spec, note: None }
        } else {
            Launch::Process(spec)
        }
    }

    fn read(
        &self,
        ctx: &SeamContext,
        event: CodexEvent,
        handler: &Handler,
        finished: Finished<'_, Infallible>,
    ) -> Reading {
        let run = match finished {
            Finished::Process(run) => run,
            Finished::Custom(never) => match *never {},
        };
        if let Some(fault) = run.dsh_fault() {
            let (interpretation, notice) = unreadable(event, &fault);
            return Reading {
                interpretation,
                contexts: Vec::new(),
                spill_error: None,
                dsh_fault: Some(notice),
            };
        }
        let interpretation = interpret(
            event,
            &RunFacts {
                exit: run.exit.clone(),
                timeout_secs: run.timeout.as_secs(),
                stdout: &run.stdout.text(),
                stderr: &run.stderr.text(),
            },
        );
        let mut contexts = Vec::new();
        let mut spill_error = None;
        for context in &interpretation.contexts {
            let (text, error) = limit_context(
                context,
                handler.context_limit,
                &self.spill_dir,
                &ctx.session.session_id,
            );
            if let Some(error) = error {
                tracing::warn!("{error}");
                spill_error = Some(error);
            }
            contexts.push(text);
        }
        Reading {
            interpretation,
            contexts,
            spill_error,
            dsh_fault: None,
        }
    }
}

/// The words every fail-closed reason starts with.
pub(crate) const DSH_COULD_NOT_READ: &str = "dsh could not read this hook's decision";

/// A run whose decision dsh could not read because of its own limits (the
/// output exceeded the decision buffer, or dsh could not start the hook).
/// Codex's "failed, fail-open" reading would let a deny through, so the
/// events that can block fail closed with a model-facing reason; the others
/// fail (their output ignored). Returns the reading and the user's warning.
pub(crate) fn unreadable(event: CodexEvent, fault: &DshFault) -> (Interpretation, String) {
    let why = format!("{DSH_COULD_NOT_READ}: {fault}");
    let feedback = |effect: Effect| Interpretation {
        status: RunStatus::Blocked,
        entries: vec![OutputEntry {
            kind: EntryKind::Feedback,
            text: why.clone(),
        }],
        effect,
        contexts: Vec::new(),
        system_message: None,
        parsed: None,
    };
    let interpretation = match event {
        CodexEvent::PreToolUse | CodexEvent::UserPromptSubmit | CodexEvent::Stop => {
            feedback(Effect::Block {
                reason: why.clone(),
            })
        }
        CodexEvent::PermissionRequest => feedback(Effect::PermissionDeny {
            message: why.clone(),
        }),
        CodexEvent::PostToolUse
        | CodexEvent::SubagentStop
        | CodexEvent::PreModelRequest
        | CodexEvent::PostModelRequest
        | CodexEvent::PreCompact
        | CodexEvent::PostCompact
        | CodexEvent::SessionStart
        | CodexEvent::SessionEnd
        | CodexEvent::SubagentStart
        | CodexEvent::Interrupt => Interpretation {
            status: RunStatus::Failed,
            entries: vec![OutputEntry {
                kind: EntryKind::Error,
                text: why.clone(),
            }],
            effect: Effect::None,
            contexts: Vec::new(),
            system_message: None,
            parsed: None,
        },
    };
    let consequence = match interpretation.effect {
        Effect::None => "its output was ignored",
        Effect::Block { .. }
        | Effect::Stop { .. }
        | Effect::Rewrite { .. }
        | Effect::PermissionAllow
        | Effect::PermissionDeny { .. } => "dsh treated it as a denial (fail closed)",
    };
    let notice = format!("{event} hook: {why}; {consequence}");
    (interpretation, notice)
}

/// The log's decision for a Codex effect.
pub fn effect_decision(effect: &Effect) -> HookDecision {
    match effect {
        Effect::None => HookDecision::of(HookEffect::None),
        Effect::Block { reason } => HookDecision {
            reason: Some(reason.clone()),
            ..HookDecision::of(HookEffect::Block)
        },
        Effect::Stop { reason } => HookDecision {
            reason: reason.clone(),
            ..HookDecision::of(HookEffect::Stop)
        },
        Effect::Rewrite { updated_input } => HookDecision {
            updated_input: Some(updated_input.clone()),
            ..HookDecision::of(HookEffect::Rewrite)
        },
        Effect::PermissionAllow => HookDecision::of(HookEffect::Allow),
        Effect::PermissionDeny { message } => HookDecision {
            message: Some(message.clone()),
            ..HookDecision::of(HookEffect::Deny)
        },
    }
}

impl Dialect for Codex {
    type Event = CodexEvent;
    type Handler = Handler;
    /// The tool name and its aliases, or the session-start source; `None`
    /// for events that are not matched.
    type Subject<'s> = Option<(&'s str, &'s [&'s str])>;
    type Custom = Infallible;
    type Reading = Reading;
    type Note = ();

    fn dialect(&self) -> dsh_protocol::Dialect {
        dsh_protocol::Dialect::Codex
    }

    fn candidates(&self, event: CodexEvent, subject: &Self::Subject<'_>) -> Vec<&Handler> {
        self.handlers
            .iter()
            .filter(|handler| handler.event == event)
            .filter(|handler| match self.policy {
                TrustPolicy::RunAll => handler.trust != TrustState::Disabled,
                TrustPolicy::TrustedOnly => handler.trust.runs_when_trusted_only(),
            })
            .filter(|handler| match subject {
                Some((name, aliases)) if event.honours_matcher() => {
                    handler.matcher.matches(name, aliases)
                }
                Some(_) | None => true,
            })
            .collect()
    }

    fn describe(&self, handler: &Handler) -> HandlerInfo {
        HandlerInfo::new(&handler.matcher_text, &handler.origin, &handler.command)
    }

    fn adjust_record(&self, reading: &Reading, record: RunRecord) -> RunRecord {
        // Codex's own error entry is the run's error in the log.
        let error = reading
            .interpretation
            .entries
            .iter()
            .find(|entry| entry.kind == EntryKind::Error)
            .map(|entry| entry.text.clone());
        RunRecord { error, ..record }
    }

    fn decision(&self, handler: &Handler, reading: &Reading) -> HookDecision {
        let interpretation = &reading.interpretation;
        HookDecision {
            status: Some(interpretation.status.hook_status()),
            entries: Some(
                interpretation
                    .entries
                    .iter()
                    .map(|entry| HookEntry {
                        kind: entry.kind.as_str().to_owned(),
                        text: entry.text.clone(),
                    })
                    .collect(),
            ),
            contexts: reading.contexts.clone(),
            trust: Some(handler.trust.as_str().to_owned()),
            spill_error: reading.spill_error.clone(),
            ..effect_decision(&interpretation.effect)
        }
    }

    fn parsed_output(&self, reading: &Reading) -> Option<Value> {
        reading.interpretation.parsed.clone()
    }

    fn notices(&self, event: CodexEvent, _handler: &Handler, reading: &Reading) -> Vec<UserNotice> {
        let said = reading
            .interpretation
            .system_message
            .iter()
            .map(|message| (message, NoticeLevel::Info));
        let fault = reading
            .dsh_fault
            .iter()
            .map(|warning| (warning, NoticeLevel::Warning));
        said.chain(fault)
            .map(|(text, level)| UserNotice {
                source: self.source(event),
                text: text.clone(),
                level,
            })
            .collect()
    }

    fn detached_decision(&self, handler: &Handler) -> HookDecision {
        HookDecision {
            status: Some(HookRunStatus::Running),
            entries: Some(Vec::new()),
            trust: Some(handler.trust.as_str().to_owned()),
            why: Some("async handler: not awaited; its output cannot affect the action".to_owned()),
            ..HookDecision::of(HookEffect::None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hook dsh could not start (EMFILE) blocks every event that can
    /// block, with the reason; elsewhere the run fails (fail-open) with it.
    #[test]
    fn a_dsh_limit_fails_closed_on_blocking_events_only() {
        let fault = DshFault::NotStarted("Too many open files (os error 24)".into());
        for event in [
            CodexEvent::PreToolUse,
            CodexEvent::PermissionRequest,
            CodexEvent::UserPromptSubmit,
            CodexEvent::Stop,
        ] {
            let (read, notice) = unreadable(event, &fault);
            let text = match &read.effect {
                Effect::Block { reason } => reason.clone(),
                Effect::PermissionDeny { message } => message.clone(),
                other => panic!("{event}: {other:?}"),
            };
            assert!(text.contains(DSH_COULD_NOT_READ), "{event}: {text}");
            assert_eq!(read.status, RunStatus::Blocked);
            assert!(notice.contains("os error 24"), "{notice}");
        }
        for event in [CodexEvent::PostToolUse, CodexEvent::SessionStart] {
            let (read, notice) = unreadable(event, &fault);
            assert_eq!(read.effect, Effect::None, "{event}");
            assert_eq!(read.status, RunStatus::Failed);
            assert!(notice.contains(DSH_COULD_NOT_READ));
        }
    }
}
