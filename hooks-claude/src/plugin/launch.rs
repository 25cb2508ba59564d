//! How one Claude Code handler is started: its environment, its process
//! spec and its deadline.

use std::time::Duration;

use dsh_hook_runner::{HookProgram, HookSpec};
use dsh_seams::SeamContext;

use super::{ClaudePlugin, Firing};
use crate::config::{CommandForm, HandlerKind, HookHandler};
use crate::events::HookEvent;
use crate::payload;

impl ClaudePlugin {
    pub(super) fn base_env(&self, ctx: &SeamContext, event: HookEvent) -> Vec<(String, String)> {
        let project = self.config().discovery.cwd.to_string_lossy().into_owned();
        let entrypoint = if ctx.session.interactive {
            &self.config().options.entrypoint_interactive
        } else {
            &self.config().options.entrypoint_headless
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
                self.config().options.effort.clone(),
            ));
        }
        env
    }

    pub(super) fn spec_for(
        &self,
        ctx: &SeamContext,
        handler: &HookHandler,
        firing: &Firing<'_>,
        extra_env: Vec<(String, String)>,
        timeout: Duration,
    ) -> Option<HookSpec> {
        let HandlerKind::Command { form, .. } = &handler.kind else {
            return None;
        };
        let project = self.config().discovery.cwd.to_string_lossy().into_owned();
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
        let mut env = self.settings_env();
        env.extend(self.base_env(ctx, firing.event));
        if let Some(plugin) = &handler.plugin {
            env.extend(crate::plugins::hook_env(plugin));
        }
        env.extend(extra_env);
        Some(HookSpec {
            program,
            cwd: ctx.session.current_dir(),
            env,
            stdin: payload::to_stdin(&firing.payload),
            timeout,
        })
    }

    pub(super) fn timeout_for(
        &self,
        handler: &HookHandler,
        event: HookEvent,
        all: &[&HookHandler],
    ) -> Duration {
        let own = handler.effective_timeout(event);
        if event != HookEvent::SessionEnd {
            return own;
        }
        // SessionEnd hooks share a 1.5 s budget, raised to the largest
        // configured timeout up to 60 s, or set by the environment.
        let budget = self.config().options.session_end_budget.unwrap_or_else(|| {
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
