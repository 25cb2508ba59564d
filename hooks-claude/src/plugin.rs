//! The Claude Code bridge as a [`Plugin`]: per seam it selects the matching
//! handlers (deduplicated), records `hook/invoked` for each, runs them in
//! parallel (cancelled by `ctx.cancel`), interprets every answer, merges the
//! decisions in configuration order (never completion order) and records
//! `hook/result` for each, in configuration order.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use dsh_hook_runner::{HookExit, HookProgram, HookRun, HookRunner, HookSpec, RunRecord};
use dsh_protocol::{Dialect, Event, EventBody, HookDecision, HookOutcomeKind};
use dsh_seams::{
    ApprovalDecision, CallReview, ContextEntry, ContinuationDecision, ContinuationInput,
    Disposition, InputRewrite, NoticeLevel, Notification, NotificationKind, Plugin, PostToolAction,
    PostToolDecision, PreToolDecision, PreToolOutcome, PreToolVerdict, PromptDecision, PromptInput,
    ProposedCall, SeamContext, SessionEndReason, SessionStartSource, SettledCall, StopRequest,
    ToolExecution, ToolOutcome, UserNotice,
};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::config::{ClaudeConfig, CommandForm, HandlerKind, HookHandler, wildcard};
use crate::envfile::parse_env_file;
use crate::events::HookEvent;
use crate::output::{
    Effect, EventCtx, ExitFact, HookFacts, Interpretation, StopMerge, interpret, merge_stop,
    winning_permission,
};
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
    runner: HookRunner,
    http: reqwest::Client,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    prompt_ids: HashMap<u64, String>,
    last_prompt_id: Option<String>,
    pending_async: Vec<PendingAsync>,
    transcript: Option<Transcript>,
}

struct PendingAsync {
    invocation_id: String,
    turn: Option<u64>,
    label: String,
    event: HookEvent,
    tool_name: Option<String>,
    command: String,
    handle: JoinHandle<HookRun>,
}

/// One handler's run, interpreted.
struct Fired {
    handler: HookHandler,
    invocation_id: String,
    result: RunResult,
    interpretation: Interpretation,
}

/// What running one handler produced, process or HTTP.
struct RunResult {
    facts: HookFacts,
    record: RunRecord,
}

impl RunResult {
    fn from_run(run: &HookRun) -> Self {
        let exit = match &run.exit {
            HookExit::Exited(code) => ExitFact::Exited(*code),
            HookExit::Signaled(signal) => ExitFact::Signaled(*signal),
            HookExit::TimedOut => ExitFact::TimedOut,
            HookExit::Cancelled => ExitFact::Cancelled,
            HookExit::SpawnFailed(why) => ExitFact::Failed(why.clone()),
        };
        RunResult {
            facts: HookFacts {
                exit,
                stdout: run.stdout.text(),
                stderr: run.stderr.text(),
            },
            record: RunRecord::of(run),
        }
    }
}

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

fn source_of(event: HookEvent, command: &str) -> String {
    format!("claude:{event}:{command}")
}

impl ClaudePlugin {
    /// The plugin for `config`, running hooks through `runner`.
    pub fn new(config: ClaudeConfig, runner: HookRunner) -> Self {
        ClaudePlugin {
            config,
            runner,
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

    /// Spills an over-long model-facing string to a file, as Claude Code
    /// does: the model gets a preview and the path.
    fn cap_text(&self, session_id: &str, text: &str) -> String {
        let limit = self.config.options.output_cap_chars;
        let count = text.chars().count();
        if count <= limit {
            return text.to_owned();
        }
        let dir = self
            .config
            .discovery
            .state_dir
            .join("tool-results")
            .join(session_id);
        let path = dir.join(format!("hook-{}-stdout.txt", uuid::Uuid::new_v4()));
        let written = fs_err::create_dir_all(&dir).and_then(|()| fs_err::write(&path, text));
        if let Err(error) = written {
            tracing::warn!(%error, "could not spill long hook output; passing it whole");
            return text.to_owned();
        }
        let preview: String = text.chars().take(2000).collect();
        format!(
            "<persisted-output>\nOutput too large ({count} characters). Full output saved to: {}\n\nPreview (first 2KB):\n{preview}\n...\n</persisted-output>",
            path.display()
        )
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

    /// Selects, records, runs and interprets the handlers for one firing.
    /// `extra_env(i)` adds variables for the i-th selected handler.
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
        let label = EventCtx {
            event: firing.event,
            tool_name: firing.tool_name,
            source: firing.source,
            prompt: firing.prompt,
            command: "",
        }
        .label();

        let mut sync: Vec<(usize, &HookHandler, String)> = Vec::new();
        for (index, handler) in selected.iter().enumerate() {
            let invocation_id = uuid::Uuid::new_v4().to_string();
            ctx.sink.record(EventBody::HookInvoked {
                turn: ctx.turn,
                invocation_id: invocation_id.clone(),
                dialect: Dialect::Claude,
                event: firing.event.as_str().to_owned(),
                seam: firing.event.seam(),
                matcher: handler.matcher.clone(),
                origin: Some(handler.origin.clone()),
                command: handler.command_text(),
                input: firing.payload.clone(),
                call_id: firing.call_id.map(str::to_owned),
            });
            let timeout = self.timeout_for(handler, firing.event, &selected);
            match &handler.kind {
                HandlerKind::Command { is_async: true, .. } => {
                    if let Some(spec) =
                        self.spec_for(ctx, handler, firing, extra_env(index), timeout)
                    {
                        let handle = self.runner.spawn_detached(spec);
                        ctx.sink.record(RunRecord::detached().into_event(
                            ctx.turn,
                            invocation_id.clone(),
                            None,
                            HookDecision {
                                why: Some("async hook: not awaited; its additionalContext/systemMessage reach the model on the next turn".to_owned()),
                                ..HookDecision::default()
                            },
                        ));
                        lock(&self.state).pending_async.push(PendingAsync {
                            invocation_id,
                            turn: ctx.turn,
                            label: label.clone(),
                            event: firing.event,
                            tool_name: firing.tool_name.map(str::to_owned),
                            command: handler.command_text(),
                            handle,
                        });
                    }
                }
                _ => sync.push((index, handler, invocation_id)),
            }
        }

        let mut command_specs = Vec::new();
        let mut command_slots = Vec::new();
        let mut http_futures = Vec::new();
        let mut http_slots = Vec::new();
        for (slot, (index, handler, _)) in sync.iter().enumerate() {
            let timeout = self.timeout_for(handler, firing.event, &selected);
            match &handler.kind {
                HandlerKind::Command { .. } => {
                    if let Some(spec) =
                        self.spec_for(ctx, handler, firing, extra_env(*index), timeout)
                    {
                        command_specs.push(spec);
                        command_slots.push(slot);
                    }
                }
                HandlerKind::Http {
                    url,
                    headers,
                    allowed_env_vars,
                } => {
                    http_futures.push(self.http_call(
                        url.clone(),
                        headers.clone(),
                        allowed_env_vars.clone(),
                        payload::to_stdin(&firing.payload),
                        timeout,
                        ctx.cancel.clone(),
                    ));
                    http_slots.push(slot);
                }
                HandlerKind::Unsupported { .. } => {}
            }
        }
        let (command_runs, http_runs) = futures::join!(
            self.runner.run_all(command_specs, &ctx.cancel),
            futures::future::join_all(http_futures)
        );
        let mut results: Vec<Option<RunResult>> = (0..sync.len()).map(|_| None).collect();
        for (slot, run) in command_slots.into_iter().zip(command_runs.iter()) {
            results[slot] = Some(RunResult::from_run(run));
        }
        for (slot, run) in http_slots.into_iter().zip(http_runs) {
            results[slot] = Some(run);
        }

        let session_id = ctx.session.session_id.clone();
        let cap = |text: &str| self.cap_text(&session_id, text);
        sync.into_iter()
            .zip(results)
            .filter_map(|((_, handler, invocation_id), result)| {
                let result = result?;
                let command = handler.command_text();
                let event_ctx = EventCtx {
                    event: firing.event,
                    tool_name: firing.tool_name,
                    source: firing.source,
                    prompt: firing.prompt,
                    command: &command,
                };
                let interpretation = interpret(&event_ctx, &result.facts, &cap);
                Some(Fired {
                    handler: handler.clone(),
                    invocation_id,
                    result,
                    interpretation,
                })
            })
            .collect()
    }

    async fn http_call(
        &self,
        url: String,
        headers: Vec<(String, String)>,
        allowed_env_vars: Vec<String>,
        body: Vec<u8>,
        timeout: Duration,
        cancel: dsh_seams::CancellationToken,
    ) -> RunResult {
        let started = Instant::now();
        let mut request = self
            .http
            .post(&url)
            .header("Content-Type", "application/json")
            .timeout(timeout)
            .body(body);
        for (name, value) in &headers {
            request = request.header(name.as_str(), interpolate_header(value, &allowed_env_vars));
        }
        let outcome = tokio::select! {
            () = cancel.cancelled() => Err(None),
            response = async {
                let response = request.send().await?;
                let status = response.status();
                let text = response.text().await?;
                Ok::<_, reqwest::Error>((status, text))
            } => response.map_err(Some),
        };
        let duration = started.elapsed();
        let record =
            |outcome: HookOutcomeKind, exit_code: Option<i32>, stdout: String, error| RunRecord {
                outcome,
                exit_code,
                signal: None,
                timed_out: outcome == HookOutcomeKind::TimedOut,
                duration,
                stdout,
                stderr: String::new(),
                error,
            };
        let failed = |exit: ExitFact, outcome: HookOutcomeKind, error: String| RunResult {
            facts: HookFacts {
                exit,
                stdout: String::new(),
                stderr: String::new(),
            },
            record: record(outcome, None, String::new(), Some(error)),
        };
        match outcome {
            Ok((status, text)) if status.is_success() => RunResult {
                facts: HookFacts {
                    exit: ExitFact::Exited(0),
                    stdout: text.clone(),
                    stderr: String::new(),
                },
                record: record(HookOutcomeKind::Exited, Some(0), text, None),
            },
            Ok((status, text)) => RunResult {
                facts: HookFacts {
                    exit: ExitFact::Failed(format!("HTTP status {status}")),
                    stdout: String::new(),
                    stderr: String::new(),
                },
                record: record(
                    HookOutcomeKind::Exited,
                    None,
                    text,
                    Some(format!(
                        "HTTP status {status} from {url} (non-blocking error)"
                    )),
                ),
            },
            Err(None) => failed(
                ExitFact::Cancelled,
                HookOutcomeKind::Cancelled,
                "cancelled".to_owned(),
            ),
            Err(Some(error)) if error.is_timeout() => failed(
                ExitFact::TimedOut,
                HookOutcomeKind::TimedOut,
                format!("HTTP hook {url} timed out after {timeout:?}"),
            ),
            Err(Some(error)) => failed(
                ExitFact::Failed(error.to_string()),
                HookOutcomeKind::SpawnFailed,
                format!("HTTP hook {url} failed: {error}"),
            ),
        }
    }

    /// Records `hook/result` for every fired handler, in configuration order,
    /// and shows user notices. `decisions[i]` extends the default decision.
    fn record_results(
        &self,
        ctx: &SeamContext,
        fired: &[Fired],
        extra: &dyn Fn(usize, &mut HookDecision),
    ) {
        for (index, run) in fired.iter().enumerate() {
            let mut decision = decision_of(&run.interpretation);
            extra(index, &mut decision);
            ctx.sink.record(run.result.record.clone().into_event(
                ctx.turn,
                run.invocation_id.clone(),
                run.interpretation.parsed.json().cloned(),
                decision,
            ));
            for notice in &run.interpretation.user_notices {
                ctx.sink.tell_user(UserNotice {
                    source: source_of(
                        run.handler.event.unwrap_or(HookEvent::Stop),
                        &run.handler.command_text(),
                    ),
                    text: notice.text.clone(),
                    level: notice.level,
                });
            }
        }
    }

    /// Collects finished async hooks: their contexts for the model, their
    /// results for the log.
    fn harvest_async(&self, ctx: &SeamContext) -> Vec<ContextEntry> {
        let finished: Vec<PendingAsync> = {
            let mut state = lock(&self.state);
            let (done, pending): (Vec<_>, Vec<_>) = std::mem::take(&mut state.pending_async)
                .into_iter()
                .partition(|p| p.handle.is_finished());
            state.pending_async = pending;
            done
        };
        let mut contexts = Vec::new();
        for pending in finished {
            let Some(run) = futures::FutureExt::now_or_never(pending.handle).and_then(Result::ok)
            else {
                continue;
            };
            let result = RunResult::from_run(&run);
            let event_ctx = EventCtx {
                event: pending.event,
                tool_name: pending.tool_name.as_deref(),
                source: None,
                prompt: None,
                command: &pending.command,
            };
            let session_id = ctx.session.session_id.clone();
            let interpretation = interpret(&event_ctx, &result.facts, &|t: &str| {
                self.cap_text(&session_id, t)
            });
            let mut texts = interpretation.contexts.clone();
            if let Some(message) = result_system_message(&interpretation) {
                texts.push(format!("{} says: {message}", pending.label));
            }
            let mut decision = decision_of(&interpretation);
            decision.is_async = true;
            decision.delivered_in_turn = ctx.turn;
            decision.note = Some(
                "async hook finished; decisions are ignored, contexts reach the model now"
                    .to_owned(),
            );
            ctx.sink.record(result.record.into_event(
                pending.turn,
                pending.invocation_id,
                interpretation.parsed.json().cloned(),
                decision,
            ));
            if !texts.is_empty() {
                contexts.push(ContextEntry::new(
                    texts.join("\n\n"),
                    source_of(pending.event, &pending.command),
                ));
            }
        }
        contexts
    }

    fn joined_contexts(fired: &[Fired], event: HookEvent) -> Vec<ContextEntry> {
        let texts: Vec<&str> = fired
            .iter()
            .flat_map(|f| f.interpretation.contexts.iter().map(String::as_str))
            .collect();
        if texts.is_empty() {
            return Vec::new();
        }
        let sources: Vec<String> = fired
            .iter()
            .filter(|f| !f.interpretation.contexts.is_empty())
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
        let effects: Vec<&Effect> = fired.iter().map(|f| &f.interpretation.effect).collect();
        let winner = winning_permission(&effects);
        let label = format!("PreToolUse:{tool_name}");
        let (decision, stop_for_defer) = match winner.map(|i| &fired[i].interpretation.effect) {
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
            .filter(|(_, f)| f.interpretation.updated_input.is_some())
            .map(|(i, _)| i)
            .collect();
        let rewrite_winner = if denied {
            None
        } else {
            rewriters.first().copied()
        };
        let stop = fired
            .iter()
            .find_map(|f| f.interpretation.stop.clone())
            .or(stop_for_defer);
        self.record_results(ctx, &fired, &|i, decision| {
            if permission_rank_of(&fired[i].interpretation.effect) > 0 {
                decision.won = Some(Some(i) == winner);
            }
            if fired[i].interpretation.updated_input.is_some() {
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
                    .interpretation
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

fn result_system_message(interpretation: &Interpretation) -> Option<String> {
    interpretation
        .parsed
        .json()
        .and_then(|j| j.get("systemMessage"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn decision_of(interpretation: &Interpretation) -> HookDecision {
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
    if let Some(stop) = &interpretation.stop {
        decision.continues = Some(false);
        decision.stop_reason = Some(stop.clone());
    }
    decision.user_notices = interpretation.notice_texts();
    decision.ignored = interpretation.ignored.clone();
    decision.why = interpretation.why.clone();
    decision
}

fn interpolate_header(value: &str, allowed: &[String]) -> String {
    let mut out = value.to_owned();
    for name in allowed {
        let replacement = std::env::var(name).unwrap_or_default();
        out = out
            .replace(&format!("${{{name}}}"), &replacement)
            .replace(&format!("${name}"), &replacement);
    }
    out
}

/// Evaluates a handler's `if` permission rule (`Tool` or `Tool(pattern)`)
/// against a tool call. For Bash the pattern is matched against each
/// subcommand (split on `&&`, `||`, `;`, `|`, leading `VAR=value` stripped),
/// `prefix:*` meaning "starts with prefix"; for file tools against the
/// absolute or project-relative `file_path`. Unparseable rules fail open.
pub fn if_rule_matches(rule: &str, tool_name: &str, tool_input: &Value, cwd: &str) -> bool {
    let rule = rule.trim();
    let (tool, pattern) = match rule.split_once('(') {
        Some((tool, rest)) => match rest.strip_suffix(')') {
            Some(pattern) => (tool.trim(), Some(pattern.trim())),
            None => return true,
        },
        None => (rule, None),
    };
    if tool != tool_name {
        return false;
    }
    let Some(pattern) = pattern else {
        return true;
    };
    let glob = |text: &str| -> bool {
        match pattern.strip_suffix(":*") {
            Some(prefix) => text == prefix || text.starts_with(&format!("{prefix} ")),
            None => wildcard(pattern, text),
        }
    };
    if let Some(command) = tool_input.get("command").and_then(Value::as_str) {
        return command
            .split("&&")
            .flat_map(|p| p.split("||"))
            .flat_map(|p| p.split(';'))
            .flat_map(|p| p.split('|'))
            .map(|sub| {
                let mut sub = sub.trim();
                while let Some((first, rest)) = sub.split_once(char::is_whitespace) {
                    let is_assignment = first.split_once('=').is_some_and(|(n, _)| {
                        !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    });
                    if !is_assignment {
                        break;
                    }
                    sub = rest.trim_start();
                }
                sub.to_owned()
            })
            .any(|sub| glob(&sub));
    }
    if let Some(path) = tool_input.get("file_path").and_then(Value::as_str) {
        let relative = path
            .strip_prefix(cwd)
            .map(|r| r.trim_start_matches('/'))
            .unwrap_or(path);
        let pattern_rel = pattern.trim_start_matches("./");
        return wildcard(pattern, path) || wildcard(pattern_rel, relative);
    }
    true
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
        self.record_results(ctx, &fired, &|_, _| {});
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
        let stop_at = fired.iter().position(|f| f.interpretation.stop.is_some());
        let block_at = fired
            .iter()
            .position(|f| matches!(f.interpretation.effect, Effect::Block { .. }));
        let decided = stop_at.or(block_at);
        self.record_results(ctx, &fired, &|i, decision| {
            if fired[i].interpretation.stop.is_some()
                || matches!(fired[i].interpretation.effect, Effect::Block { .. })
            {
                decision.won = Some(Some(i) == decided);
            }
        });
        if let Some(i) = stop_at {
            let reason = fired[i].interpretation.stop.clone().unwrap_or_default();
            return PromptDecision::Stop {
                reason: format!("Operation stopped by hook: {reason}"),
            };
        }
        if let Some(i) = block_at
            && let Effect::Block { text } = &fired[i].interpretation.effect
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
        let effects: Vec<&Effect> = fired.iter().map(|f| &f.interpretation.effect).collect();
        let winner = winning_permission(&effects);
        self.record_results(ctx, &fired, &|i, decision| {
            if permission_rank_of(&fired[i].interpretation.effect) > 0 {
                decision.won = Some(Some(i) == winner);
            }
            if fired[i].interpretation.updated_input.is_some() {
                decision.updated_input_ignored =
                    Some("the call is already sealed when approval runs".to_owned());
            }
        });
        match winner.map(|i| (i, &fired[i].interpretation)) {
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
            .position(|f| f.interpretation.replace_output.is_some());
        self.record_results(ctx, &fired, &|i, decision| {
            if fired[i].interpretation.replace_output.is_some() {
                decision.replace_won = Some(Some(i) == replace_at);
            }
        });
        if let Some(reason) = fired.iter().find_map(|f| f.interpretation.stop.clone()) {
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
        let action = match replace_at.and_then(|i| fired[i].interpretation.replace_output.clone()) {
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
            f.interpretation.stop.is_some()
                || matches!(f.interpretation.effect, Effect::Block { .. })
        });
        self.record_results(ctx, &fired, &|i, decision| {
            let interp = &fired[i].interpretation;
            if interp.stop.is_some() || matches!(interp.effect, Effect::Block { .. }) {
                decision.won = Some(Some(i) == stop_at);
            }
        });
        if let Some(i) = stop_at {
            let interp = &fired[i].interpretation;
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
        let answers: Vec<&Interpretation> = fired.iter().map(|f| &f.interpretation).collect();
        let merged = merge_stop(
            &answers,
            input.forced_continuations,
            self.config.options.stop_block_cap,
        );
        let stop_at = fired.iter().position(|f| f.interpretation.stop.is_some());
        self.record_results(ctx, &fired, &|i, decision| {
            let interp = &fired[i].interpretation;
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
        self.record_results(ctx, &fired, &|_, _| {});
        // Async hooks still running are killed at teardown, as Claude Code does.
        let pending = std::mem::take(&mut lock(&self.state).pending_async);
        for async_hook in pending {
            async_hook.handle.abort();
        }
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
        self.record_results(ctx, &fired, &|_, _| {});
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn if_rules() {
        let bash = json!({"command": "FOO=1 git push origin && echo ok"});
        assert!(if_rule_matches("Bash(git *)", "Bash", &bash, "/p"));
        assert!(if_rule_matches("Bash(git push:*)", "Bash", &bash, "/p"));
        assert!(!if_rule_matches("Bash(rm *)", "Bash", &bash, "/p"));
        assert!(!if_rule_matches("Edit(*.ts)", "Bash", &bash, "/p"));
        let edit = json!({"file_path": "/p/src/a.ts"});
        assert!(if_rule_matches("Edit(*.ts)", "Edit", &edit, "/p"));
        assert!(if_rule_matches("Edit(src/*)", "Edit", &edit, "/p"));
        assert!(!if_rule_matches("Edit(*.rs)", "Edit", &edit, "/p"));
    }
}
