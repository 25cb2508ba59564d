//! The Claude Code bridge as a [`Plugin`]: per seam it selects the matching
//! handlers (deduplicated), records `hook/invoked` for each, runs them in
//! parallel (cancelled by `ctx.cancel`), interprets every answer, merges the
//! decisions in configuration order (never completion order) and records
//! `hook/result` for each, in configuration order.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use dsh_hook_runner::{HookProgram, HookRunner, HookSpec};
use dsh_hooks::{Engine, Finished, Launch};
use dsh_protocol::{Event, EventBody, HookDecision};
use dsh_seams::{
    ApprovalDecision, CallReview, ContextEntry, ContinuationDecision, ContinuationInput,
    Disposition, InputRewrite, NoticeLevel, Notification, NotificationKind, Plugin, PostToolAction,
    PostToolDecision, PreToolDecision, PreToolOutcome, PreToolVerdict, PromptDecision, PromptInput,
    ProposedCall, SeamContext, SessionEndReason, SessionStartSource, SettledCall, StopRequest,
    ToolExecution, ToolOutcome, UserNotice,
};
use serde_json::Value;

use crate::config::{ClaudeConfig, CommandForm, HandlerKind, HookHandler};
use crate::dialect::{AsyncNote, Claude, HttpRun, source_of};
use crate::envfile::parse_env_file;
use crate::events::HookEvent;
use crate::http;
use crate::if_rule::if_rule_matches;
use crate::output::{Effect, EventCtx, Interpretation, StopMerge, merge_stop, winning_permission};
use crate::payload::{self, Common};
use crate::transcript::Transcript;

const NAME: &str = "claude";

impl ClaudeConfig {
    /// The bridge plugin running this configuration's hooks through `runner`.
    pub fn into_plugin(self, runner: HookRunner) -> Arc<dyn Plugin> {
        Arc::new(ClaudePlugin::new(self, runner))
    }
}

/// The Claude Code bridge plugin. Build it with [`ClaudeConfig::into_plugin`]
/// (or [`ClaudePlugin::new`] to keep the concrete type).
pub struct ClaudePlugin {
    config: ClaudeConfig,
    engine: Engine<Claude>,
    http: reqwest::Client,
    state: Mutex<State>,
}

/// What the bridge keeps for the session (never per call).
#[derive(Default)]
struct State {
    prompt_ids: HashMap<u64, String>,
    last_prompt_id: Option<String>,
    transcript: Option<Transcript>,
}

/// One awaited run, read.
type Fired = dsh_hooks::Fired<Claude>;

/// The subject a seam fires with.
struct Firing<'a> {
    event: HookEvent,
    subject: Option<&'a str>,
    tool_name: Option<&'a str>,
    tool_input: Option<&'a Value>,
    source: Option<&'a str>,
    prompt: Option<&'a str>,
    call_id: Option<&'a str>,
    payload: Value,
}

impl<'a> Firing<'a> {
    /// The interpreter's view of this firing for a hook with `command`.
    fn event_ctx<'b>(&'b self, command: &'b str) -> EventCtx<'b> {
        EventCtx {
            event: self.event,
            tool_name: self.tool_name,
            source: self.source,
            prompt: self.prompt,
            command,
        }
    }

    /// An event with no subject, tool, source, prompt or call.
    fn new(event: HookEvent, payload: Value) -> Self {
        Firing {
            event,
            subject: None,
            tool_name: None,
            tool_input: None,
            source: None,
            prompt: None,
            call_id: None,
            payload,
        }
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ClaudePlugin {
    /// The plugin for `config`, running hooks through `runner`.
    pub fn new(config: ClaudeConfig, runner: HookRunner) -> Self {
        let dialect = Claude {
            output_cap_chars: config.options.output_cap_chars,
            state_dir: config.discovery.state_dir.clone(),
        };
        ClaudePlugin {
            config,
            engine: Engine::new(dialect, runner),
            http: reqwest::Client::new(),
            state: Mutex::new(State::default()),
        }
    }

    /// The transcript file for `session_id`.
    pub fn transcript_path(&self, session_id: &str) -> PathBuf {
        self.config
            .discovery
            .transcript_dir
            .join(format!("{session_id}.jsonl"))
    }

    fn ensure_session(&self, ctx: &SeamContext) {
        let mut state = lock(&self.state);
        if state.transcript.is_none() {
            state.transcript = Some(Transcript::new(
                self.transcript_path(&ctx.session.session_id),
                ctx.session.session_id.clone(),
                ctx.session.cwd.to_string_lossy().into_owned(),
            ));
        }
    }

    fn prompt_id(&self, ctx: &SeamContext) -> Option<String> {
        let mut state = lock(&self.state);
        match ctx.turn {
            Some(turn) => {
                let id = state
                    .prompt_ids
                    .entry(turn)
                    .or_insert_with(|| uuid::Uuid::new_v4().to_string())
                    .clone();
                state.last_prompt_id = Some(id.clone());
                Some(id)
            }
            None => state.last_prompt_id.clone(),
        }
    }

    fn common(&self, ctx: &SeamContext, with_prompt: bool) -> Common {
        self.ensure_session(ctx);
        Common {
            session_id: ctx.session.session_id.clone(),
            transcript_path: self
                .transcript_path(&ctx.session.session_id)
                .to_string_lossy()
                .into_owned(),
            cwd: ctx.session.cwd.to_string_lossy().into_owned(),
            prompt_id: if with_prompt {
                self.prompt_id(ctx)
            } else {
                None
            },
            permission_mode: self.config.options.permission_mode.clone(),
            effort: self.config.options.effort.clone(),
        }
    }

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
                | HookEvent::Stop
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
        handler: &HookHandler,
        firing: &Firing<'_>,
        extra_env: Vec<(String, String)>,
        timeout: Duration,
    ) -> Option<HookSpec> {
        let HandlerKind::Command { form, .. } = &handler.kind else {
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
        let mut env = self.base_env(ctx, firing.event);
        env.extend(extra_env);
        Some(HookSpec {
            program,
            cwd: ctx.session.cwd.clone(),
            env,
            stdin: payload::to_stdin(&firing.payload),
            timeout,
        })
    }

    fn timeout_for(
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

    fn if_allows(&self, handler: &HookHandler, firing: &Firing<'_>) -> bool {
        let Some(rule) = &handler.if_rule else {
            return true;
        };
        if !firing.event.is_tool_event() {
            return false;
        }
        if_rule_matches(
            rule,
            firing.tool_name.unwrap_or(""),
            firing.tool_input.unwrap_or(&Value::Null),
            &self.config.discovery.cwd.to_string_lossy(),
        )
    }

    /// Selects the handlers for one firing and runs them through the
    /// engine (`hook/invoked` for each first). `extra_env(i)` adds variables
    /// for the i-th selected handler. Results are recorded by the caller,
    /// after merging, with [`ClaudePlugin::record`].
    async fn fire(
        &self,
        ctx: &SeamContext,
        firing: &Firing<'_>,
        extra_env: &(dyn Fn(usize) -> Vec<(String, String)> + Sync),
    ) -> Vec<Fired> {
        let selected: Vec<&HookHandler> = self
            .config
            .select(firing.event, firing.subject)
            .into_iter()
            .filter(|h| self.if_allows(h, firing))
            .collect();
        if selected.is_empty() {
            return Vec::new();
        }
        let label = firing.event_ctx("").label();
        let handlers: Vec<HookHandler> = selected.iter().map(|h| (*h).clone()).collect();
        let launch = |index: usize, handler: &HookHandler| -> Launch<'_, Claude> {
            let timeout = self.timeout_for(handler, firing.event, &selected);
            match &handler.kind {
                HandlerKind::Command { is_async, .. } => {
                    let Some(spec) = self.spec_for(ctx, handler, firing, extra_env(index), timeout)
                    else {
                        return Launch::Skip;
                    };
                    if *is_async {
                        Launch::Detached {
                            spec,
                            note: Some(AsyncNote {
                                label: label.clone(),
                                event: firing.event,
                                tool_name: firing.tool_name.map(str::to_owned),
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
                } => Launch::Custom(Box::pin(http::http_call(
                    self.http.clone(),
                    url.clone(),
                    headers.clone(),
                    allowed_env_vars.clone(),
                    payload::to_stdin(&firing.payload),
                    timeout,
                    ctx.cancel.clone(),
                ))),
                HandlerKind::Unsupported { .. } => Launch::Skip,
            }
        };
        let claude = self.engine.dialect();
        let session_id = ctx.session.session_id.as_str();
        let read = |handler: &HookHandler, finished: Finished<'_, HttpRun>| {
            let command = handler.command_text();
            claude.read(session_id, &firing.event_ctx(&command), finished)
        };
        let engine_firing = dsh_hooks::Firing {
            event: firing.event,
            payload: &firing.payload,
            call_id: firing.call_id,
            cancel: &ctx.cancel,
        };
        self.engine
            .fire(ctx, &engine_firing, handlers, launch, read)
            .await
    }

    /// Records `hook/result` for every run in configuration order (with
    /// what `extra` adds to each decision) and shows the runs' notices.
    fn record(
        &self,
        ctx: &SeamContext,
        event: HookEvent,
        fired: &[Fired],
        extra: &dyn Fn(usize, &mut HookDecision),
    ) {
        self.engine.record(ctx, event, fired, extra);
    }

    /// Collects finished async hooks: their contexts for the model, their
    /// results for the log.
    fn harvest_async(&self, ctx: &SeamContext) -> Vec<ContextEntry> {
        let claude = self.engine.dialect();
        self.engine
            .harvest(ctx, |_, note, run| claude.harvest(ctx, note, run))
    }

    fn joined_contexts(fired: &[Fired], event: HookEvent) -> Vec<ContextEntry> {
        let texts: Vec<&str> = fired
            .iter()
            .flat_map(|f| f.reading.contexts.iter().map(String::as_str))
            .collect();
        if texts.is_empty() {
            return Vec::new();
        }
        let sources: Vec<String> = fired
            .iter()
            .filter(|f| !f.reading.contexts.is_empty())
            .map(|f| f.handler.command_text())
            .collect();
        vec![ContextEntry::new(
            texts.join("\n\n"),
            format!("claude:{event}:{}", sources.join(" + ")),
        )]
    }

    /// Runs PreToolUse for a proposed call: the rewrite and the verdict the
    /// pipeline carries to this plugin's pre-execute and approval.
    async fn run_pre_tool_use(
        &self,
        ctx: &SeamContext,
        call_id: &str,
        tool: &str,
        arguments: &Value,
    ) -> CallReview {
        let tool_name = payload::cc_tool_name(tool);
        let tool_input = payload::normalize_tool_input(tool, arguments, &ctx.session.cwd);
        let common = self.common(ctx, true);
        let firing = Firing {
            subject: Some(&tool_name),
            tool_name: Some(&tool_name),
            tool_input: Some(&tool_input),
            call_id: Some(call_id),
            ..Firing::new(
                HookEvent::PreToolUse,
                payload::pre_tool_use(&common, &tool_name, &tool_input, call_id),
            )
        };
        let fired = self.fire(ctx, &firing, &|_| Vec::new()).await;
        if fired.is_empty() {
            return CallReview::keep();
        }
        let effects: Vec<&Effect> = fired.iter().map(|f| &f.reading.effect).collect();
        let winner = winning_permission(&effects);
        let label = format!("PreToolUse:{tool_name}");
        let (decision, stop_for_defer) = match winner.map(|i| &fired[i].reading.effect) {
            Some(Effect::Deny { text }) => (
                PreToolDecision::Deny {
                    reason: text.clone(),
                },
                None,
            ),
            Some(Effect::Defer { reason }) => (
                PreToolDecision::Deny {
                    reason: format!(
                        "{label} hook deferred this tool call{}",
                        reason
                            .as_deref()
                            .map(|r| format!(": {r}"))
                            .unwrap_or_default()
                    ),
                },
                Some(format!(
                    "{label} hook deferred the tool call; Claude Code ends the run here (stop_reason tool_deferred){}",
                    reason
                        .as_deref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default()
                )),
            ),
            Some(Effect::Ask { reason }) => (
                PreToolDecision::Ask {
                    reason: reason.clone(),
                },
                None,
            ),
            Some(Effect::Allow { .. } | Effect::None | Effect::Block { .. }) | None => {
                (PreToolDecision::Allow, None)
            }
        };
        let denied = matches!(decision, PreToolDecision::Deny { .. });
        let rewriters: Vec<usize> = fired
            .iter()
            .enumerate()
            .filter(|(_, f)| f.reading.updated_input.is_some())
            .map(|(i, _)| i)
            .collect();
        let rewrite_winner = if denied {
            None
        } else {
            rewriters.first().copied()
        };
        let stop = fired
            .iter()
            .find_map(|f| f.reading.stop.clone())
            .or(stop_for_defer);
        self.record(ctx, firing.event, &fired, &|i, decision| {
            if permission_rank_of(&fired[i].reading.effect) > 0 {
                decision.won = Some(Some(i) == winner);
            }
            if fired[i].reading.updated_input.is_some() {
                decision.rewrite_won = Some(Some(i) == rewrite_winner);
                if denied {
                    decision.rewrite_ignored = Some("the call is denied".to_owned());
                }
            }
        });
        let contexts = Self::joined_contexts(&fired, HookEvent::PreToolUse);
        let source = "claude:PreToolUse".to_owned();
        let verdict = PreToolVerdict {
            outcome: PreToolOutcome { decision, contexts },
            notices: stop
                .iter()
                .filter(|reason| !reason.is_empty())
                .map(|reason| UserNotice {
                    source: source.clone(),
                    text: reason.clone(),
                    level: NoticeLevel::Info,
                })
                .collect(),
            stop: stop.map(|reason| StopRequest { reason, source }),
        };
        let rewrite = match rewrite_winner {
            Some(i) => InputRewrite::Rewrite {
                arguments: fired[i]
                    .reading
                    .updated_input
                    .clone()
                    .unwrap_or(Value::Null),
                by: source_of(HookEvent::PreToolUse, &fired[i].handler.command_text()),
                conflicts: rewriters
                    .iter()
                    .filter(|&&r| r != i)
                    .map(|&r| source_of(HookEvent::PreToolUse, &fired[r].handler.command_text()))
                    .collect(),
            },
            None => InputRewrite::Keep,
        };
        CallReview {
            rewrite,
            verdict: Some(verdict),
        }
    }
}

fn permission_rank_of(effect: &Effect) -> u8 {
    crate::output::permission_rank(effect)
}

#[async_trait]
impl Plugin for ClaudePlugin {
    fn name(&self) -> &str {
        NAME
    }

    async fn session_start(
        &self,
        ctx: &SeamContext,
        source: SessionStartSource,
    ) -> Vec<ContextEntry> {
        let common = self.common(ctx, false);
        let env_dir = self
            .config
            .discovery
            .state_dir
            .join("session-env")
            .join(&ctx.session.session_id);
        // One CLAUDE_ENV_FILE per SessionStart hook (Claude Code:
        // `sessionstart-hook-<i>.sh`); stale files of an earlier start of the
        // same session are removed first.
        let env_file = {
            let env_dir = env_dir.clone();
            move |i: usize| env_dir.join(format!("sessionstart-hook-{i}.sh"))
        };
        if let Err(error) = fs_err::create_dir_all(&env_dir) {
            tracing::warn!(%error, "cannot create CLAUDE_ENV_FILE directory");
        }
        let handler_count = self.config.handlers().len();
        for i in 0..handler_count {
            let _ = std::fs::remove_file(env_file(i));
        }
        let firing = Firing {
            subject: Some(source.as_str()),
            source: Some(source.as_str()),
            ..Firing::new(
                HookEvent::SessionStart,
                payload::session_start(&common, source.as_str()),
            )
        };
        let fired = self
            .fire(ctx, &firing, &|i| {
                vec![(
                    "CLAUDE_ENV_FILE".to_owned(),
                    env_file(i).to_string_lossy().into_owned(),
                )]
            })
            .await;
        self.record(ctx, firing.event, &fired, &|_, _| {});
        for i in 0..handler_count {
            let file = env_file(i);
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let parsed = parse_env_file(&text);
            for (name, value) in parsed.vars {
                ctx.session.env.set(name, value);
            }
            for (line, text) in parsed.skipped {
                ctx.sink.tell_user(UserNotice {
                    source: "claude:SessionStart".to_owned(),
                    text: format!(
                        "CLAUDE_ENV_FILE {}:{line}: not a simple assignment, not applied: {text}",
                        file.display()
                    ),
                    level: NoticeLevel::Warning,
                });
            }
        }
        Self::joined_contexts(&fired, HookEvent::SessionStart)
    }

    async fn prompt_submit(&self, ctx: &SeamContext, prompt: &PromptInput) -> PromptDecision {
        let mut contexts = self.harvest_async(ctx);
        let common = self.common(ctx, true);
        let firing = Firing {
            prompt: Some(&prompt.content),
            ..Firing::new(
                HookEvent::UserPromptSubmit,
                payload::user_prompt_submit(&common, &prompt.content),
            )
        };
        let fired = self.fire(ctx, &firing, &|_| Vec::new()).await;
        let stop_at = fired.iter().position(|f| f.reading.stop.is_some());
        let block_at = fired
            .iter()
            .position(|f| matches!(f.reading.effect, Effect::Block { .. }));
        let decided = stop_at.or(block_at);
        self.record(ctx, firing.event, &fired, &|i, decision| {
            if fired[i].reading.stop.is_some()
                || matches!(fired[i].reading.effect, Effect::Block { .. })
            {
                decision.won = Some(Some(i) == decided);
            }
        });
        if let Some(i) = stop_at {
            let reason = fired[i].reading.stop.clone().unwrap_or_default();
            return PromptDecision::Stop {
                reason: format!("Operation stopped by hook: {reason}"),
            };
        }
        if let Some(i) = block_at
            && let Effect::Block { text } = &fired[i].reading.effect
        {
            return PromptDecision::Block {
                reason: text.clone(),
            };
        }
        contexts.extend(Self::joined_contexts(&fired, HookEvent::UserPromptSubmit));
        PromptDecision::Allow {
            rewrite: None,
            contexts,
        }
    }

    async fn rewrite_input(&self, ctx: &SeamContext, call: &ProposedCall) -> CallReview {
        self.run_pre_tool_use(ctx, &call.call_id, &call.tool, &call.arguments)
            .await
    }

    async fn approve(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        _reason: Option<&str>,
        review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        let asked_by_hook = review.is_some_and(PreToolVerdict::asks);
        if asked_by_hook && !ctx.session.interactive {
            // Claude Code in -p: a PreToolUse `ask` is denied with its raw
            // reason and PermissionRequest hooks are not called (c3, d3).
            return ApprovalDecision::Abstain;
        }
        let tool_name = payload::cc_tool_name(&exec.tool);
        let tool_input =
            payload::normalize_tool_input(&exec.tool, &exec.arguments, &ctx.session.cwd);
        let common = self.common(ctx, true);
        let firing = Firing {
            subject: Some(&tool_name),
            tool_name: Some(&tool_name),
            tool_input: Some(&tool_input),
            call_id: Some(&exec.call_id),
            ..Firing::new(
                HookEvent::PermissionRequest,
                payload::permission_request(&common, &tool_name, &tool_input),
            )
        };
        let fired = self.fire(ctx, &firing, &|_| Vec::new()).await;
        let effects: Vec<&Effect> = fired.iter().map(|f| &f.reading.effect).collect();
        let winner = winning_permission(&effects);
        self.record(ctx, firing.event, &fired, &|i, decision| {
            if permission_rank_of(&fired[i].reading.effect) > 0 {
                decision.won = Some(Some(i) == winner);
            }
            if fired[i].reading.updated_input.is_some() {
                decision.updated_input_ignored =
                    Some("the call is already sealed when approval runs".to_owned());
            }
        });
        match winner.map(|i| (i, &fired[i].reading)) {
            Some((_, interp)) => match &interp.effect {
                Effect::Deny { text } => {
                    if interp.stop.is_some() {
                        ctx.control
                            .request_stop(text.clone(), "claude:PermissionRequest");
                    }
                    ApprovalDecision::Deny {
                        message: text.clone(),
                    }
                }
                Effect::Allow { .. } => ApprovalDecision::AllowOnce,
                _ => ApprovalDecision::Abstain,
            },
            None => ApprovalDecision::Abstain,
        }
    }

    async fn post_execute(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        outcome: &ToolOutcome,
        duration: Duration,
    ) -> PostToolDecision {
        let executed = matches!(outcome.disposition, Disposition::Executed);
        let failed_body = matches!(outcome.disposition, Disposition::Failed);
        if !executed && !failed_body {
            return PostToolDecision::accept();
        }
        let duration_ms = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        let tool_name = payload::cc_tool_name(&exec.tool);
        let tool_input =
            payload::normalize_tool_input(&exec.tool, &exec.arguments, &ctx.session.cwd);
        let response = payload::tool_response(
            &exec.tool,
            outcome.value.as_ref(),
            &exec.arguments,
            &outcome.content,
            duration_ms,
        );
        let common = self.common(ctx, true);
        {
            let mut state = lock(&self.state);
            if let Some(transcript) = state.transcript.as_mut() {
                transcript
                    .tool_responses
                    .insert(exec.call_id.clone(), response.clone());
            }
        }
        let (event, payload) = if outcome.is_error {
            (
                HookEvent::PostToolUseFailure,
                payload::post_tool_use_failure(
                    &common,
                    &tool_name,
                    &tool_input,
                    &exec.call_id,
                    &outcome.content,
                    false,
                    duration_ms,
                ),
            )
        } else {
            (
                HookEvent::PostToolUse,
                payload::post_tool_use(
                    &common,
                    &tool_name,
                    &tool_input,
                    &response,
                    &exec.call_id,
                    duration_ms,
                ),
            )
        };
        let firing = Firing {
            subject: Some(&tool_name),
            tool_name: Some(&tool_name),
            tool_input: Some(&tool_input),
            call_id: Some(&exec.call_id),
            ..Firing::new(event, payload)
        };
        let fired = self.fire(ctx, &firing, &|_| Vec::new()).await;
        let replace_at = fired
            .iter()
            .position(|f| f.reading.replace_output.is_some());
        self.record(ctx, firing.event, &fired, &|i, decision| {
            if fired[i].reading.replace_output.is_some() {
                decision.replace_won = Some(Some(i) == replace_at);
            }
        });
        if let Some(reason) = fired.iter().find_map(|f| f.reading.stop.clone()) {
            ctx.control
                .request_stop(reason.clone(), format!("claude:{event}"));
            if !reason.is_empty() {
                ctx.sink.tell_user(UserNotice {
                    source: format!("claude:{event}"),
                    text: reason,
                    level: NoticeLevel::Info,
                });
            }
        }
        let action = match replace_at.and_then(|i| fired[i].reading.replace_output.clone()) {
            Some(Value::String(content)) => PostToolAction::ReplaceContent { content },
            Some(other) => PostToolAction::ReplaceContent {
                content: other.to_string(),
            },
            None => PostToolAction::Accept,
        };
        PostToolDecision {
            action,
            contexts: Self::joined_contexts(&fired, event),
        }
    }

    async fn batch_settled(&self, ctx: &SeamContext, batch: &[SettledCall]) -> Vec<ContextEntry> {
        if batch.is_empty() {
            return Vec::new();
        }
        let calls: Vec<payload::BatchCall> = batch
            .iter()
            .map(|settled| payload::BatchCall {
                tool_name: payload::cc_tool_name(&settled.call.tool),
                tool_input: payload::batch_tool_input(&settled.call.tool, &settled.call.arguments),
                tool_use_id: settled.call.call_id.clone(),
                tool_response: settled.outcome.content.clone(),
            })
            .collect();
        let common = self.common(ctx, true);
        let firing = Firing::new(
            HookEvent::PostToolBatch,
            payload::post_tool_batch(&common, &calls),
        );
        let fired = self.fire(ctx, &firing, &|_| Vec::new()).await;
        // A block (exit 2 or `decision: "block"`) or `continue: false` stops
        // the loop before the next model call; the block text still reaches
        // the conversation through the contexts. The first in configuration
        // order gives the reason.
        let stop_at = fired.iter().position(|f| {
            f.reading.stop.is_some() || matches!(f.reading.effect, Effect::Block { .. })
        });
        self.record(ctx, firing.event, &fired, &|i, decision| {
            let interp = &fired[i].reading;
            if interp.stop.is_some() || matches!(interp.effect, Effect::Block { .. }) {
                decision.won = Some(Some(i) == stop_at);
            }
        });
        if let Some(i) = stop_at {
            let interp = &fired[i].reading;
            let block_text = match &interp.effect {
                Effect::Block { text } => Some(text.clone()),
                Effect::None
                | Effect::Allow { .. }
                | Effect::Ask { .. }
                | Effect::Defer { .. }
                | Effect::Deny { .. } => None,
            };
            let reason = interp.stop.clone().or(block_text).unwrap_or_default();
            ctx.control
                .request_stop(reason, "claude:PostToolBatch".to_owned());
        }
        Self::joined_contexts(&fired, HookEvent::PostToolBatch)
    }

    async fn turn_continuation(
        &self,
        ctx: &SeamContext,
        input: &ContinuationInput,
    ) -> ContinuationDecision {
        let common = self.common(ctx, true);
        let firing = Firing::new(
            HookEvent::Stop,
            payload::stop(
                &common,
                input.forced_continuations > 0,
                &input.last_assistant_message,
            ),
        );
        let fired = self.fire(ctx, &firing, &|_| Vec::new()).await;
        let answers: Vec<&Interpretation> = fired.iter().map(|f| &f.reading).collect();
        let merged = merge_stop(
            &answers,
            input.forced_continuations,
            self.config.options.stop_block_cap,
        );
        let stop_at = fired.iter().position(|f| f.reading.stop.is_some());
        self.record(ctx, firing.event, &fired, &|i, decision| {
            let interp = &fired[i].reading;
            let forcing =
                matches!(interp.effect, Effect::Block { .. }) || !interp.steering.is_empty();
            match &merged {
                StopMerge::Halt { .. } if forcing || interp.stop.is_some() => {
                    decision.won = Some(Some(i) == stop_at);
                }
                StopMerge::CapFired { message } if forcing => {
                    decision.won = Some(false);
                    decision.overridden = Some(message.clone());
                }
                StopMerge::Continue { .. } if forcing => decision.won = Some(true),
                StopMerge::Stop
                | StopMerge::Halt { .. }
                | StopMerge::CapFired { .. }
                | StopMerge::Continue { .. } => {}
            }
        });
        match merged {
            StopMerge::Stop => ContinuationDecision::Stop,
            StopMerge::Halt { reason } => ContinuationDecision::Halt { reason },
            StopMerge::CapFired { message } => {
                ctx.sink.tell_user(UserNotice {
                    source: "claude:Stop".to_owned(),
                    text: message,
                    level: NoticeLevel::Warning,
                });
                ContinuationDecision::Stop
            }
            StopMerge::Continue {
                reason,
                by,
                context,
            } => {
                let sources: Vec<String> = by
                    .iter()
                    .map(|&i| fired[i].handler.command_text())
                    .collect();
                let source = format!("claude:Stop:{}", sources.join(" + "));
                ContinuationDecision::Continue {
                    reason: Some(reason),
                    contexts: context
                        .map(|c| vec![ContextEntry::new(c, source.clone())])
                        .unwrap_or_default(),
                    source,
                }
            }
        }
    }

    async fn session_end(&self, ctx: &SeamContext, reason: SessionEndReason) {
        let wire = match reason {
            SessionEndReason::Exit => "prompt_input_exit",
            SessionEndReason::Other => "other",
        };
        let common = self.common(ctx, true);
        let firing = Firing {
            subject: Some(wire),
            ..Firing::new(HookEvent::SessionEnd, payload::session_end(&common, wire))
        };
        let fired = self.fire(ctx, &firing, &|_| Vec::new()).await;
        self.record(ctx, firing.event, &fired, &|_, _| {});
        // Async hooks still running are killed at teardown, as Claude Code does.
        self.engine.abort_pending();
    }

    async fn notification(&self, ctx: &SeamContext, notification: &Notification) {
        let kind = match notification.kind {
            NotificationKind::PermissionPrompt => "permission_prompt",
            NotificationKind::Idle => "idle_prompt",
        };
        let common = self.common(ctx, true);
        let firing = Firing {
            subject: Some(kind),
            ..Firing::new(
                HookEvent::Notification,
                payload::notification(&common, &notification.message, kind),
            )
        };
        let fired = self.fire(ctx, &firing, &|_| Vec::new()).await;
        self.record(ctx, firing.event, &fired, &|_, _| {});
    }

    fn on_event(&self, event: &Event) {
        let mut state = lock(&self.state);
        match &event.body {
            EventBody::SessionHeader {
                session_id, cwd, ..
            } => {
                if state.transcript.is_none() {
                    state.transcript = Some(Transcript::new(
                        self.transcript_path(session_id),
                        session_id.clone(),
                        cwd.clone(),
                    ));
                }
                return;
            }
            EventBody::TurnStart { turn } => {
                let id = state
                    .prompt_ids
                    .entry(*turn)
                    .or_insert_with(|| uuid::Uuid::new_v4().to_string())
                    .clone();
                state.last_prompt_id = Some(id);
                return;
            }
            _ => {}
        }
        let prompt_id = state.last_prompt_id.clone();
        if let Some(transcript) = state.transcript.as_mut()
            && let Err(error) = transcript.append(event, prompt_id.as_deref())
        {
            tracing::warn!(%error, "cannot append to the Claude-format transcript");
        }
    }
}
