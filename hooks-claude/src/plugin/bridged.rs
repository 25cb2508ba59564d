//! The seams that run through the generic bridge plugin: Claude Code's
//! part in each is a pure plan over the bridge's state (the payload it
//! fires) and a pure reading of the runs (the seam's answer).

use std::path::Path;
use std::time::Duration;

use dsh_hook_runner::HookRun;
use dsh_hooks::{Bridge, Cx, Finished, Flow, Harvested, Record};
use dsh_protocol::{DecidedBy, DeciderKind, Event};
use dsh_seams::{
    AgentDefinition, ApprovalAsk, ApprovalDecision, CallReview, CompactionDecision,
    CompactionInput, CompactionOutcome, ConfigChange, ConfigDecision, ContextEntry,
    ContinuationDecision, ContinuationInput, CwdChange, DeniedFollowUp, DirectoryAddition,
    DisplayDecision, DisplayInput, ElicitationAnswer, ElicitationRequest, ExpansionInput,
    FileChange, InstructionFile, LoadReason, ModelSwitch, ModelSwitchDecision, NoticeLevel,
    Notification, NotificationKind, PermissionUpdate, PostToolDecision, PreToolDecision,
    PreToolVerdict, PromptDecision, PromptInput, ProposedCall, SeamContext, SessionEndReason,
    SessionStartSource, SettledCall, SetupTrigger, SubagentStartInput, SubagentStopInput,
    TaskEvent, TaskVerdict, ToolExecution, ToolOutcome, TurnFailure, UserNotice, WorktreeCreation,
    WorktreeRemoval,
};

use super::lifecycle::display_content;
use super::turns::stop_continuation;
use super::{
    Decisive, Firing, NAME, State, answer, compact, elicitation, failure, joined_contexts,
    lifecycle, prompting, tasks, tools, transcribe, turns, watch, worktree,
};
use crate::config::{HandlerStatus, HookHandler};
use crate::dialect::{
    AsyncNote, Claude, Selector, decision_of, event_source, source_of, system_message,
};
use crate::events::HookEvent;
use crate::output::{Effect, EventCtx, Interpretation, StopMerge, merge_stop, permission_rank};
use crate::payload;
use crate::transcript::Transcript;

impl Bridge for Claude {
    type State = State;
    type Key = Selector;
    type Decisive = Decisive;

    fn plugin_name(&self) -> &'static str {
        NAME
    }

    fn subject<'k>(&self, key: &'k Selector) -> &'k Selector {
        key
    }

    fn holds(&self, decisive: Decisive, reading: &Interpretation) -> bool {
        match decisive {
            Decisive::Halting => {
                reading.stop.is_some() || matches!(reading.effect, Effect::Block { .. })
            }
            Decisive::Permission => permission_rank(&reading.effect) > 0,
        }
    }

    /// An async hook's late result: its decisions are ignored, its
    /// contexts (and system message) reach the model now. Claude Code
    /// ignores a StopFailure hook's output: the turn has already failed.
    fn read_detached(
        &self,
        ctx: &SeamContext,
        _handler: &HookHandler,
        note: &AsyncNote,
        run: &HookRun,
    ) -> Harvested {
        let event_ctx = EventCtx {
            event: note.event,
            tool_name: note.tool_name.as_deref(),
            source: None,
            prompt: None,
            command: &note.command,
        };
        let reading = self.read_run(&ctx.session.session_id, &event_ctx, Finished::Process(run));
        let mut decision = decision_of(&reading);
        decision.is_async = true;
        let parsed = reading.parsed.json().cloned();
        if note.event == HookEvent::StopFailure {
            decision.note = Some("StopFailure hook finished; its output is ignored".to_owned());
            return Harvested {
                decision,
                parsed,
                context: None,
            };
        }
        let mut texts = reading.contexts.clone();
        if let Some(message) = system_message(&reading) {
            texts.push(format!("{} says: {message}", note.label));
        }
        decision.delivered_in_turn = ctx.turn;
        decision.note = Some(
            "async hook finished; decisions are ignored, contexts reach the model now".to_owned(),
        );
        Harvested {
            decision,
            parsed,
            context: (!texts.is_empty()).then(|| {
                ContextEntry::new(texts.join("\n\n"), source_of(note.event, &note.command))
            }),
        }
    }

    fn agent_definitions(&self) -> Vec<AgentDefinition> {
        self.config
            .agents
            .iter()
            .map(|agent| agent.definition.clone())
            .collect()
    }

    fn on_event(&self, state: &mut State, event: &Event) {
        transcribe::on_event(self, state, event);
    }

    /// Only a PreToolUse deny or ask is this bridge's own decision; an
    /// allow here is "no objection" (the permission model still decides).
    fn explain(&self, _exec: &ToolExecution, review: Option<&PreToolVerdict>) -> Option<DecidedBy> {
        review
            .filter(|v| !matches!(v.outcome.decision, PreToolDecision::Allow))
            .map(|v| {
                v.decided_by.clone().unwrap_or_else(|| {
                    DecidedBy::new(DeciderKind::Hook, event_source(HookEvent::PreToolUse))
                })
            })
    }

    /// SessionStart, then the `.claude/rules` files held back for it.
    fn session_start<'a>(
        cx: Cx<'_, Self>,
        source: SessionStartSource,
    ) -> Flow<'a, Self, Vec<ContextEntry>> {
        turns::session_start(cx, source).and_then(|cx, contexts| {
            prompting::pending_rules(cx).and_then(move |_, ()| Flow::Done(contexts))
        })
    }

    fn session_compacted<'a>(
        cx: Cx<'_, Self>,
        outcome: &'a CompactionOutcome,
    ) -> Flow<'a, Self, Vec<ContextEntry>> {
        compact::compacted(cx, outcome)
    }

    fn instructions_loaded<'a>(
        cx: Cx<'_, Self>,
        files: &'a [InstructionFile],
        reason: LoadReason,
    ) -> Flow<'a, Self, ()> {
        prompting::instructions_loaded(cx, files, reason)
    }

    fn prompt_expansion<'a>(
        cx: Cx<'_, Self>,
        input: &'a ExpansionInput,
    ) -> Flow<'a, Self, PromptDecision> {
        prompting::prompt_expansion(cx, input)
    }

    fn prompt_submit<'a>(
        cx: Cx<'_, Self>,
        prompt: &'a PromptInput,
    ) -> Flow<'a, Self, PromptDecision> {
        turns::prompt_submit(cx, prompt)
    }

    fn rewrite_input<'a>(cx: Cx<'_, Self>, call: &'a ProposedCall) -> Flow<'a, Self, CallReview> {
        tools::pre_tool_use(cx, call)
    }

    fn approve<'a>(
        cx: Cx<'_, Self>,
        exec: &'a ToolExecution,
        ask: &'a ApprovalAsk,
        review: Option<&'a PreToolVerdict>,
    ) -> Flow<'a, Self, ApprovalDecision> {
        tools::approve(cx, exec, ask, review)
    }

    /// Hooks are told the mode in effect: an accepted `setMode` changes
    /// every later payload's `permission_mode`.
    fn permissions_updated<'a>(
        cx: Cx<'_, Self>,
        updates: &'a [PermissionUpdate],
    ) -> Flow<'a, Self, ()> {
        for update in updates {
            if let PermissionUpdate::SetMode { mode, .. } = update {
                cx.state.mode = Some(mode.clone());
            }
        }
        Flow::Done(())
    }

    fn permission_denied<'a>(
        cx: Cx<'_, Self>,
        exec: &'a ToolExecution,
        check_reason: &'a str,
    ) -> Flow<'a, Self, DeniedFollowUp> {
        tools::permission_denied(cx, exec, check_reason)
    }

    fn post_execute<'a>(
        cx: Cx<'_, Self>,
        exec: &'a ToolExecution,
        outcome: &'a ToolOutcome,
        duration: Duration,
    ) -> Flow<'a, Self, PostToolDecision> {
        tools::post_execute(cx, exec, outcome, duration)
    }

    fn batch_settled<'a>(
        cx: Cx<'_, Self>,
        batch: &'a [SettledCall],
    ) -> Flow<'a, Self, Vec<ContextEntry>> {
        tools::batch_settled(cx, batch)
    }

    fn turn_continuation<'a>(
        cx: Cx<'_, Self>,
        input: &'a ContinuationInput,
    ) -> Flow<'a, Self, ContinuationDecision> {
        turns::turn_continuation(cx, input)
    }

    fn turn_failed<'a>(cx: Cx<'_, Self>, failure: &'a TurnFailure) -> Flow<'a, Self, ()> {
        failure::turn_failed(cx, failure)
    }

    /// SessionEnd; then StopFailure hooks still running get their grace,
    /// and the async hooks still running are killed at teardown, as
    /// Claude Code does.
    fn session_end<'a>(cx: Cx<'_, Self>, reason: SessionEndReason) -> Flow<'a, Self, ()> {
        let wire = match reason {
            SessionEndReason::Exit => "prompt_input_exit",
            SessionEndReason::Other => "other",
            SessionEndReason::Clear => "clear",
        };
        let common = cx.bridge.common(cx.state, cx.ctx, true);
        let firing = Firing {
            subject: Some(wire),
            ..Firing::new(HookEvent::SessionEnd, &payload::session_end(&common, wire))
        };
        Flow::notify(Self::fire_of(&cx, &firing), ())
            .and_then(|cx, ()| failure::settle_stop_failure(cx))
            .and_then(|_, ()| Flow::abort_pending(Flow::Done(())))
    }

    fn config_applied<'a>(cx: Cx<'_, Self>, change: &'a ConfigChange) -> Flow<'a, Self, ()> {
        watch::config_applied(cx, change)
    }

    fn directory_added<'a>(
        cx: Cx<'_, Self>,
        added: &'a DirectoryAddition,
    ) -> Flow<'a, Self, Vec<String>> {
        worktree::directory_added(cx, added)
    }

    /// Notification: matcher on the kind; advisory.
    fn notification<'a>(cx: Cx<'_, Self>, notification: &'a Notification) -> Flow<'a, Self, ()> {
        let kind = match notification.kind {
            NotificationKind::PermissionPrompt => "permission_prompt",
            NotificationKind::Idle => "idle_prompt",
            NotificationKind::ElicitationResponse => "elicitation_response",
        };
        let common = cx.bridge.common(cx.state, cx.ctx, true);
        let firing = Firing {
            subject: Some(kind),
            ..Firing::new(
                HookEvent::Notification,
                &payload::notification(&common, &notification.message, kind),
            )
        };
        Flow::notify(Self::fire_of(&cx, &firing), ())
    }

    /// MessageDisplay: the whole text of one assistant message; the first
    /// `hookSpecificOutput.displayContent` in configuration order is shown
    /// instead (display only).
    fn message_display<'a>(
        cx: Cx<'_, Self>,
        input: &'a DisplayInput,
    ) -> Flow<'a, Self, DisplayDecision> {
        let common = cx.bridge.common(cx.state, cx.ctx, true);
        let turn_id = dsh_seams::derived_id(&format!(
            "{}:turn:{}",
            cx.ctx.session.session_id, input.turn
        ));
        let firing = Firing::new(
            HookEvent::MessageDisplay,
            &payload::message_display(&common, &turn_id, &input.message_id, &input.text),
        );
        answer(&cx, &firing, |fired| {
            fired
                .iter()
                .find_map(display_content)
                .map_or(DisplayDecision::Keep, |text| DisplayDecision::Replace {
                    text,
                })
        })
    }

    fn session_before_compact<'a>(
        cx: Cx<'_, Self>,
        input: &'a CompactionInput,
    ) -> Flow<'a, Self, CompactionDecision> {
        compact::before_compact(cx, input)
    }

    fn elicitation<'a>(
        cx: Cx<'_, Self>,
        request: &'a ElicitationRequest,
    ) -> Flow<'a, Self, Option<ElicitationAnswer>> {
        elicitation::elicitation(cx, request)
    }

    fn elicitation_result<'a>(
        cx: Cx<'_, Self>,
        request: &'a ElicitationRequest,
        answer: &'a ElicitationAnswer,
    ) -> Flow<'a, Self, Option<ElicitationAnswer>> {
        elicitation::elicitation_result(cx, request, answer)
    }

    fn task_event<'a>(cx: Cx<'_, Self>, task: &'a TaskEvent) -> Flow<'a, Self, TaskVerdict> {
        tasks::task_event(cx, task)
    }

    fn before_model_switch<'a>(
        cx: Cx<'_, Self>,
        switch: &'a ModelSwitch,
    ) -> Flow<'a, Self, ModelSwitchDecision> {
        lifecycle::before_model_switch(cx, switch)
    }

    fn model_switched<'a>(cx: Cx<'_, Self>, switch: &'a ModelSwitch) -> Flow<'a, Self, ()> {
        lifecycle::model_switched(cx, switch)
    }

    fn worktree_create<'a>(cx: Cx<'_, Self>, name: &'a str) -> Flow<'a, Self, WorktreeCreation> {
        worktree::worktree_create(cx, name)
    }

    fn worktree_remove<'a>(cx: Cx<'_, Self>, path: &'a Path) -> Flow<'a, Self, WorktreeRemoval> {
        worktree::worktree_remove(cx, path)
    }

    fn setup<'a>(cx: Cx<'_, Self>, trigger: SetupTrigger) -> Flow<'a, Self, ()> {
        lifecycle::setup(cx, trigger)
    }

    fn cwd_changed<'a>(cx: Cx<'_, Self>, change: &'a CwdChange) -> Flow<'a, Self, ()> {
        lifecycle::cwd_changed(cx, change)
    }

    fn config_change<'a>(
        cx: Cx<'_, Self>,
        change: &'a ConfigChange,
    ) -> Flow<'a, Self, ConfigDecision> {
        watch::config_change(cx, change)
    }

    fn file_changed<'a>(cx: Cx<'_, Self>, change: &'a FileChange) -> Flow<'a, Self, ()> {
        watch::file_changed(cx, change)
    }

    /// SubagentStart: matcher on the agent type; its `additionalContext`
    /// goes into the subagent's first request.
    fn subagent_start<'a>(
        cx: Cx<'_, Self>,
        input: &'a SubagentStartInput,
    ) -> Flow<'a, Self, Vec<ContextEntry>> {
        let agent_type = input.identity.agent_type.as_str();
        // An agent whose frontmatter hooks may not run (an untrusted
        // project) says so, in Claude Code's words.
        if cx
            .bridge
            .config
            .handlers()
            .iter()
            .any(|h| h.agent.as_deref() == Some(agent_type) && h.status != HandlerStatus::Active)
        {
            cx.ctx.sink.tell_user(UserNotice {
                source: event_source(HookEvent::SubagentStart),
                text: crate::agents::skipped_hooks_notice(agent_type),
                level: NoticeLevel::Info,
            });
        }
        let common = cx.bridge.common(cx.state, cx.ctx, true);
        let firing = Firing {
            subject: Some(agent_type),
            ..Firing::new(HookEvent::SubagentStart, &payload::subagent_start(&common))
        };
        answer(&cx, &firing, |fired| {
            joined_contexts(fired, HookEvent::SubagentStart)
        })
    }

    /// SubagentStop: Stop's rules (the same feedback text, the same block
    /// cap), with the subagent's sidechain transcript.
    fn subagent_stop<'a>(
        cx: Cx<'_, Self>,
        input: &'a SubagentStopInput,
    ) -> Flow<'a, Self, ContinuationDecision> {
        let common = cx.bridge.common(cx.state, cx.ctx, true);
        let agent_transcript = Transcript::agent_path(
            &cx.bridge.transcript_path(&cx.ctx.session.session_id),
            &input.identity.agent_id,
        );
        let firing = Firing {
            subject: Some(&input.identity.agent_type),
            ..Firing::new(
                HookEvent::SubagentStop,
                &payload::subagent_stop(
                    &common,
                    input.stop_hook_active,
                    &agent_transcript.to_string_lossy(),
                    &input.last_assistant_message,
                ),
            )
        };
        let forced = input.forced_continuations;
        Flow::fire(Self::fire_of(&cx, &firing), move |cx, fired| {
            let answers: Vec<&Interpretation> = fired.iter().map(|f| &f.reading).collect();
            let merged = merge_stop(&answers, forced, cx.bridge.config.options.stop_block_cap);
            let event = HookEvent::SubagentStop;
            let next = match merged {
                // The cap's notice follows the runs' results.
                StopMerge::CapFired { message } => Flow::later(move |cx| {
                    let merged = StopMerge::CapFired { message };
                    Flow::Done(stop_continuation(cx.ctx, event, &[], merged))
                }),
                merged
                @ (StopMerge::Stop | StopMerge::Halt { .. } | StopMerge::Continue { .. }) => {
                    Flow::Done(stop_continuation(cx.ctx, event, fired, merged))
                }
            };
            (Record::AsRead, next)
        })
    }
}
