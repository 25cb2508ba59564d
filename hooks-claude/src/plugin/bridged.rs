//! The seams that run through the generic bridge plugin: Claude Code's
//! part in each is a pure plan over the bridge's state (the payload it
//! fires) and a pure reading of the runs (the seam's answer).

use std::convert::Infallible;
use std::path::Path;

use dsh_hooks::{Bridge, Cx, Flow, Record};
use dsh_seams::{
    CompactionDecision, CompactionInput, ConfigChange, ConfigDecision, ContextEntry,
    ContinuationDecision, CwdChange, DisplayDecision, DisplayInput, ElicitationAnswer,
    ElicitationRequest, FileChange, ModelSwitch, ModelSwitchDecision, NoticeLevel, Notification,
    NotificationKind, SetupTrigger, SubagentStartInput, SubagentStopInput, TaskEvent, TaskVerdict,
    UserNotice, WorktreeCreation, WorktreeRemoval,
};

use super::lifecycle::display_content;
use super::{
    ClaudePlugin, Firing, NAME, State, answer, compact, elicitation, lifecycle, tasks, watch,
    worktree,
};
use crate::config::HandlerStatus;
use crate::dialect::{Claude, Selector};
use crate::events::HookEvent;
use crate::output::{Interpretation, StopMerge, merge_stop};
use crate::payload;
use crate::transcript::Transcript;

impl Bridge for Claude {
    type State = State;
    type Key = Selector;
    /// No seam ported yet marks a winner among its runs.
    type Decisive = Infallible;

    fn plugin_name(&self) -> &'static str {
        NAME
    }

    fn subject<'k>(&self, key: &'k Selector) -> &'k Selector {
        key
    }

    fn holds(&self, decisive: Infallible, _reading: &Interpretation) -> bool {
        match decisive {}
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
                source: "claude:SubagentStart".to_owned(),
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
            ClaudePlugin::joined_contexts(fired, HookEvent::SubagentStart)
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
                    Flow::Done(ClaudePlugin::stop_continuation(cx.ctx, event, &[], merged))
                }),
                merged
                @ (StopMerge::Stop | StopMerge::Halt { .. } | StopMerge::Continue { .. }) => {
                    Flow::Done(ClaudePlugin::stop_continuation(
                        cx.ctx, event, fired, merged,
                    ))
                }
            };
            (Record::AsRead, next)
        })
    }
}
