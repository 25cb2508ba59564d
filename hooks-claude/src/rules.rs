//! Claude Code's part in the shared run loop ([`Rules`]): the payload a
//! firing carries until a hook's stdin is written, and how one handler is
//! started (its environment, its process spec, its deadline) and read.

use std::sync::Arc;
use std::time::Duration;

use dsh_hook_runner::{HookExit, HookProgram, HookSpec, HttpHook};
use dsh_hooks::{Finished, Launch, Rules, Slot};
use dsh_protocol::ExactJson;
use dsh_seams::SeamContext;

use crate::config::{CommandForm, HandlerKind, HookHandler};
use crate::dialect::{AsyncNote, Claude, Refused};
use crate::envfile::EnvFileNames;
use crate::events::HookEvent;
use crate::output::{Effect, EventCtx, Interpretation};
use crate::payload;

/// One firing's payload and what its runs are started and read with.
#[derive(Default)]
pub(crate) struct Sent {
    /// The stdin payload, serialized once as Claude Code writes it.
    pub json: ExactJson,
    /// Claude Code's tool name, for tool events.
    pub tool_name: Option<String>,
    /// SessionStart's `source`.
    pub source: Option<String>,
    /// The prompt, for the prompt events.
    pub prompt: Option<String>,
    /// The tool call it judges (an SDK callback's `tool_use_id`).
    pub call_id: Option<String>,
    /// The settings `env` in effect.
    pub settings_env: Vec<(String, String)>,
    /// Each hook's `CLAUDE_ENV_FILE`, on the events that set one.
    pub env_files: Option<EnvFileNames>,
}

impl Sent {
    /// The interpreter's view of this firing of `event` for a hook with
    /// `command`.
    pub(crate) fn event_ctx<'b>(&'b self, event: HookEvent, command: &'b str) -> EventCtx<'b> {
        EventCtx {
            event,
            tool_name: self.tool_name.as_deref(),
            source: self.source.as_deref(),
            prompt: self.prompt.as_deref(),
            command,
        }
    }
}

impl Claude {
    fn base_env(&self, ctx: &SeamContext, event: HookEvent) -> Vec<(String, String)> {
        let project = self.config.discovery.cwd.to_string_lossy().into_owned();
        let entrypoint = if ctx.session.interactive {
            &self.config.options.entrypoint_interactive
        } else {
            &self.config.options.entrypoint_headless
        };
        let mut env = vec![
            ("CLAUDE_PROJECT_DIR".to_owned(), project),
            ("CLAUDECODE".to_owned(), "1".to_owned()),
            (
                "CLAUDE_CODE_SESSION_ID".to_owned(),
                ctx.session.session_id.clone(),
            ),
            ("CLAUDE_CODE_ENTRYPOINT".to_owned(), entrypoint.clone()),
            ("CLAUDE_PID".to_owned(), std::process::id().to_string()),
        ];
        if matches!(
            event,
            HookEvent::PreToolUse
                | HookEvent::PostToolUse
                | HookEvent::PostToolUseFailure
                | HookEvent::PostToolBatch
                | HookEvent::PermissionRequest
                | HookEvent::PermissionDenied
                | HookEvent::Stop
                | HookEvent::StopFailure
                | HookEvent::SubagentStop
        ) {
            env.push((
                "CLAUDE_EFFORT".to_owned(),
                self.config.options.effort.clone(),
            ));
        }
        env
    }

    fn spec_for(
        &self,
        ctx: &SeamContext,
        slot: &Slot<'_, Self>,
        stdin: &[u8],
        timeout: Duration,
    ) -> Option<HookSpec> {
        let HandlerKind::Command { form, .. } = &slot.handler.kind else {
            return None;
        };
        let project = self.config.discovery.cwd.to_string_lossy().into_owned();
        let program = match form {
            CommandForm::Shell { shell, command } => HookProgram::Shell {
                shell: shell.clone(),
                command: command.clone(),
            },
            CommandForm::Exec { program, args } => HookProgram::Exec {
                program: program.replace("${CLAUDE_PROJECT_DIR}", &project),
                args: args
                    .iter()
                    .map(|a| a.replace("${CLAUDE_PROJECT_DIR}", &project))
                    .collect(),
            },
        };
        // Settings `env` first: it overrides dsh's inherited environment,
        // and Claude Code's own variables (and a plugin's) override it.
        let mut env = slot.payload.settings_env.clone();
        env.extend(self.base_env(ctx, slot.event));
        if let Some(plugin) = &slot.handler.plugin {
            env.extend(crate::plugins::hook_env(plugin));
        }
        if let Some(files) = &slot.payload.env_files {
            env.extend(files.env(slot.index));
        }
        Some(HookSpec {
            program,
            cwd: ctx.session.current_dir(),
            env,
            stdin: stdin.to_vec(),
            timeout,
        })
    }

    fn timeout_for(
        &self,
        handler: &HookHandler,
        event: HookEvent,
        all: &[HookHandler],
    ) -> Duration {
        let own = handler.effective_timeout(event);
        if event != HookEvent::SessionEnd {
            return own;
        }
        // SessionEnd hooks share a 1.5 s budget, raised to the largest
        // configured timeout up to 60 s, or set by the environment.
        let budget = self.config.options.session_end_budget.unwrap_or_else(|| {
            let max_configured = all
                .iter()
                .filter_map(|h| h.timeout)
                .max()
                .unwrap_or(Duration::ZERO)
                .min(Duration::from_secs(60));
            max_configured.max(Duration::from_millis(1500))
        });
        own.min(budget)
    }
}

impl Rules for Claude {
    type Payload = Sent;

    fn wire(
        &self,
        _ctx: &SeamContext,
        _event: HookEvent,
        payload: &Sent,
        _handler: &HookHandler,
    ) -> ExactJson {
        payload.json.clone()
    }

    /// Compact JSON and a newline, as Claude Code writes it.
    fn stdin(&self, wire: &ExactJson) -> Vec<u8> {
        payload::to_stdin(wire)
    }

    /// Claude Code starts a handler by the firing ([`Rules::launch_in`]);
    /// without one there is nothing to start.
    fn launch<'a>(
        &'a self,
        _ctx: &'a SeamContext,
        _handler: &HookHandler,
        _stdin: &[u8],
    ) -> Launch<'a, Self> {
        Launch::Skip
    }

    fn launch_in<'a>(
        &'a self,
        ctx: &'a SeamContext,
        slot: &Slot<'_, Self>,
        stdin: &[u8],
    ) -> Launch<'a, Self> {
        let (handler, event, sent) = (slot.handler, slot.event, slot.payload);
        let timeout = self.timeout_for(handler, event, slot.selected);
        if let Some(run) = crate::plugins::refuse_unassociated_root(handler) {
            // Refused even when async: it is recorded as the failure it is.
            return Launch::Custom(Box::pin(std::future::ready(Refused(run))));
        }
        match &handler.kind {
            HandlerKind::Command { is_async, .. } => {
                let Some(spec) = self.spec_for(ctx, slot, stdin, timeout) else {
                    return Launch::Skip;
                };
                // Claude Code never waits for StopFailure hooks.
                if *is_async || event == HookEvent::StopFailure {
                    Launch::Detached {
                        spec,
                        note: Some(AsyncNote {
                            label: sent.event_ctx(event, "").label(),
                            event,
                            tool_name: sent.tool_name.clone(),
                            command: handler.command_text(),
                        }),
                    }
                } else {
                    Launch::Process(spec)
                }
            }
            HandlerKind::Http {
                url,
                headers,
                allowed_env_vars,
            } => Launch::Process(HookSpec {
                program: HookProgram::Http(HttpHook {
                    url: url.clone(),
                    headers: headers.clone(),
                    allowed_env_vars: allowed_env_vars.clone(),
                }),
                cwd: ctx.session.current_dir(),
                env: Vec::new(),
                stdin: stdin.to_vec(),
                timeout,
            }),
            HandlerKind::Callback { callback_id } => match &self.config.sdk {
                Some(sdk) => {
                    // Claude Code: the tool's id for tool events, a fresh one otherwise.
                    let tool_use_id = sent
                        .call_id
                        .clone()
                        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
                    let run = crate::sdk::run_callback(
                        Arc::clone(&sdk.0),
                        callback_id.clone(),
                        sent.json.clone(),
                        tool_use_id,
                        timeout,
                        ctx.cancel.clone(),
                    );
                    Launch::Custom(Box::pin(async move { Refused(run.await) }))
                }
                None => Launch::Skip,
            },
            HandlerKind::Unsupported { .. } => Launch::Skip,
        }
    }

    /// Read with no firing: no tool, source or prompt in the texts.
    fn read(
        &self,
        ctx: &SeamContext,
        event: HookEvent,
        handler: &HookHandler,
        finished: Finished<'_, Refused>,
    ) -> Interpretation {
        self.read_in(ctx, event, &Sent::default(), handler, finished)
    }

    /// The texts name the command as Claude Code shows it, and a plugin
    /// hook's exit-2 deny says which plugin it came from.
    fn read_in(
        &self,
        ctx: &SeamContext,
        event: HookEvent,
        sent: &Sent,
        handler: &HookHandler,
        finished: Finished<'_, Refused>,
    ) -> Interpretation {
        let exit2 = matches!(
            finished,
            Finished::Process(run) if run.exit == HookExit::Exited(2)
        );
        let command = crate::plugins::display_command(handler, exit2);
        let mut interpretation = self.read_run(
            &ctx.session.session_id,
            &sent.event_ctx(event, &command),
            finished,
        );
        if let (Some(plugin), true, Effect::Deny { text }) =
            (&handler.plugin, exit2, &mut interpretation.effect)
        {
            text.push_str(&crate::plugins::attribution(plugin));
        }
        interpretation
    }
}
