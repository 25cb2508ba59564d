//! The Copilot dialect as the shared hook engine sees it: which entries a
//! firing selects, how one runs (`/bin/bash -c` or `exec` in the
//! repository root, Copilot's variables, the entry's `env` last) and what
//! its run meant in the log.

use std::convert::Infallible;
use std::path::PathBuf;
use std::time::Duration;

use dsh_hook_runner::{HookProgram, HookSpec};
use dsh_hooks::verdict::{decided, warning};
use dsh_hooks::{Dialect, Finished, HandlerInfo, Launch, Order, Rules};
use dsh_protocol::{ExactJson, HookDecision, HookEffect, HookRunStatus};
use dsh_seams::{SeamContext, UserNotice};
use serde_json::Value;

use crate::config::{Handler, Program};
use crate::event::CopilotEvent;
use crate::output::{Decision, Reading, Status, interpret};
use crate::payload::{self, Body, Common};

/// The Copilot dialect.
pub(crate) struct Copilot {
    /// Every configured entry, in Copilot's run order.
    pub handlers: Vec<Handler>,
    /// The shell `bash` entries run under.
    pub shell: PathBuf,
    /// `$COPILOT_HOME` (`~/.copilot`): transcript paths, the agent source.
    pub user_dir: PathBuf,
}

/// One firing's payload: the common head and the event's fields, built
/// into JSON per entry (its mode) when its stdin is written.
pub(crate) struct Payload {
    /// `sessionId`, `timestamp`, `cwd`.
    pub common: Common,
    /// The event's own fields.
    pub body: Body,
}

impl Rules for Copilot {
    type Payload = Payload;

    /// Copilot runs an event's entries one after the other.
    fn order(&self, _event: CopilotEvent, _selected: &[Handler]) -> Order {
        Order::Sequential
    }

    fn wire(
        &self,
        _ctx: &SeamContext,
        _event: CopilotEvent,
        payload: &Payload,
        handler: &Handler,
    ) -> ExactJson {
        ExactJson::of(&payload::build(
            &payload.common,
            &payload.body,
            handler.mode,
        ))
    }

    fn launch<'a>(
        &'a self,
        _ctx: &'a SeamContext,
        handler: &Handler,
        stdin: &[u8],
    ) -> Launch<'a, Self> {
        let program = match &handler.program {
            Program::Bash(command) => HookProgram::Shell {
                shell: self.shell.clone(),
                command: command.clone(),
            },
            Program::Exec { program, args } => HookProgram::Exec {
                program: program.clone(),
                args: args.clone(),
            },
            // Copilot spawns pwsh for a powershell-only entry, even on Linux.
            Program::Powershell(command) => HookProgram::Exec {
                program: "pwsh".to_owned(),
                args: vec![
                    "-NoProfile".to_owned(),
                    "-Command".to_owned(),
                    command.clone(),
                ],
            },
        };
        Launch::Process(HookSpec {
            program,
            cwd: handler.working_dir(),
            env: handler.vars(),
            stdin: stdin.to_vec(),
            timeout: Duration::from_secs(handler.timeout_sec),
        })
    }

    fn read(
        &self,
        _ctx: &SeamContext,
        event: CopilotEvent,
        handler: &Handler,
        finished: Finished<'_, Infallible>,
    ) -> Reading {
        let run = finished.process();
        interpret(
            event,
            handler.mode,
            &handler.display_file,
            (&run.exit, handler.timeout_sec),
            &run.stdout.text(),
            &run.stderr.text(),
        )
    }

    /// preToolUse `modifiedArgs` chain: the next entry sees the new args.
    /// preMcpToolCall `metaToUse` chain: the next entry sees it as `_meta`.
    fn chain(&self, _event: CopilotEvent, payload: &mut Payload, reading: &Reading) {
        if let Body::PreMcpToolCall(call) = &mut payload.body {
            call.answer(reading);
        }
        if let (Body::PreToolUse { tool_args, .. }, Some(modified)) =
            (&mut payload.body, &reading.modified_args)
        {
            *tool_args = modified.clone();
        }
    }

    /// The first preToolUse deny ends the chain (pre_two_files_deny_deny).
    fn ends_chain(&self, event: CopilotEvent, reading: &Reading) -> bool {
        event == CopilotEvent::PreToolUse && matches!(reading.decision, Some(Decision::Deny(_)))
    }
}

impl Dialect for Copilot {
    type Event = CopilotEvent;
    type Handler = Handler;
    /// The native tool name the matcher is tested against (tool events).
    type Subject<'s> = Option<&'s str>;
    type Custom = Infallible;
    type Reading = Reading;
    type Note = ();

    fn dialect(&self) -> dsh_protocol::Dialect {
        dsh_protocol::Dialect::Copilot
    }

    fn candidates(&self, event: CopilotEvent, subject: &Option<&str>) -> Vec<&Handler> {
        self.handlers
            .iter()
            .filter(|handler| handler.event == event && handler.status.is_active())
            .filter(|handler| match subject {
                Some(tool) if event.matches_tools() => {
                    crate::matcher::matches(handler.mode, handler.matcher.as_deref(), tool)
                }
                Some(_) | None => true,
            })
            .collect()
    }

    fn describe(&self, handler: &Handler) -> HandlerInfo {
        HandlerInfo::new(&handler.matcher, &handler.origin, handler.program.text())
    }

    fn decision(&self, handler: &Handler, reading: &Reading) -> HookDecision {
        let base = if let Some(reason) = &reading.block {
            decided(HookEffect::Block, Some(reason.clone()))
        } else {
            match &reading.decision {
                Some(Decision::Deny(text)) => decided(HookEffect::Deny, Some(text.clone())),
                Some(Decision::Ask(text)) => decided(HookEffect::Ask, Some(text.clone())),
                Some(Decision::Allow) => HookDecision::of(HookEffect::Allow),
                None if reading.modified_args.is_some() || reading.modified_prompt.is_some() => {
                    HookDecision::of(HookEffect::Rewrite)
                }
                None => HookDecision::of(HookEffect::None),
            }
        };
        HookDecision {
            status: Some(match &reading.status {
                Status::Ok => HookRunStatus::Completed,
                Status::Blocked => HookRunStatus::Blocked,
                Status::Failed(_) => HookRunStatus::Failed,
            }),
            contexts: reading.additional_context.iter().cloned().collect(),
            why: reading.failed().map(str::to_owned),
            trust: Some(handler.source.as_str().to_owned()),
            user_notices: reading.warning.iter().cloned().collect(),
            // What it gave, also next to a decision (a `null` too).
            updated_input: reading.modified_args.clone(),
            ..base
        }
    }

    fn parsed_output(&self, reading: &Reading) -> Option<Value> {
        reading.parsed.clone()
    }

    fn notices(
        &self,
        event: CopilotEvent,
        _handler: &Handler,
        reading: &Reading,
    ) -> Vec<UserNotice> {
        // Copilot shows an exit-2 stderr as a `session.warning`; failures
        // only go to its log (dsh records them in `hook/result`).
        reading
            .warning
            .iter()
            .map(|text| warning(self.source(event), text.clone()))
            .collect()
    }
}
