//! `dsh hooks log [SESSION]`: the decision ledger of a session — every hook
//! result, what it decided and why, and what the runtime did next.

use dsh_stdio::stdio::{ExitStatus, errln, outln};
use std::path::PathBuf;

use dsh_protocol::{
    Event, EventBody, HookDecision, HookEffect, HookInvokedEvent, HookResultEvent,
    PromptBlockedEvent, Seam, SessionHeaderEvent, SteeringMessageEvent, ToolCallEvent,
    ToolResultEvent, TurnEndEvent, UserMessageEvent,
};
use serde::Serialize;
use serde_json::json;

use crate::common::{Format, excerpt, load_session, resolve_session};

#[derive(Debug, Serialize)]
struct Entry {
    ts: String,
    turn: Option<u64>,
    dialect: String,
    event: String,
    seam: Seam,
    command: String,
    origin: Option<String>,
    call_id: Option<String>,
    outcome: String,
    exit_code: Option<i32>,
    decision: HookDecision,
    effect: String,
    why: Option<String>,
    then: String,
}

/// The effects that mean "no" (or "stop").
fn is_denial(decision: &HookDecision) -> bool {
    let says_no = match decision.effect {
        HookEffect::Deny
        | HookEffect::Block
        | HookEffect::Ask
        | HookEffect::Defer
        | HookEffect::Stop => true,
        HookEffect::None | HookEffect::Allow | HookEffect::Rewrite => false,
    };
    says_no || decision.stops()
}

/// A call's `tool/result`, as the ledger shows it.
fn result_line(result: &ToolResultEvent) -> String {
    format!(
        "tool/result {}{}: {}",
        result.disposition.as_deref().unwrap_or("executed"),
        if result.is_error { " (error)" } else { "" },
        excerpt(&result.content, 120)
    )
}

/// What the runtime did after the hook result at `index`.
fn what_followed(
    events: &[Event],
    index: usize,
    turn: Option<u64>,
    seam: Seam,
    call_id: Option<&str>,
) -> String {
    let later = &events[index + 1..];
    if let Some(call_id) = call_id {
        let mut parts = Vec::new();
        for event in later {
            match &event.body {
                EventBody::ToolCall(ToolCallEvent {
                    call_id: id,
                    rewritten_by: Some(by),
                    ..
                }) if id == call_id && seam == Seam::PreExecute => {
                    parts.push(format!("call arguments rewritten by {by}"));
                }
                EventBody::ToolResult(result) if result.call_id == call_id => {
                    parts.push(result_line(result));
                    break;
                }
                EventBody::SessionHeader(_)
                | EventBody::TurnStart(_)
                | EventBody::CompactionStarted(_)
                | EventBody::CompactionCompleted(_)
                | EventBody::CompactionFailed(_)
                | EventBody::UserMessage(_)
                | EventBody::PromptBlocked(_)
                | EventBody::AssistantMessage(_)
                | EventBody::ToolCall(_)
                | EventBody::ToolResult(_)
                | EventBody::ContextMessage(_)
                | EventBody::SteeringMessage(_)
                | EventBody::TurnEnd(_)
                | EventBody::HookInvoked(_)
                | EventBody::HookResult(_)
                | EventBody::SeamNote(_)
                | EventBody::SessionCleared { .. }
                | EventBody::ModelSwitched(_) => {}
            }
        }
        // A hook fired once the call's batch settled comes after the
        // result (Copilot's postToolUseFailure for a rejected rewrite).
        let earlier = events[..index].iter().rev();
        let result = earlier.filter(|_| seam != Seam::PreExecute).find_map(|e| {
            let EventBody::ToolResult(result) = &e.body else {
                return None;
            };
            (result.call_id == call_id).then_some(result)
        });
        parts.extend(result.filter(|_| parts.is_empty()).map(result_line));
        if parts.is_empty() {
            return "no tool result recorded for this call".to_owned();
        }
        return parts.join("; ");
    }
    for event in later {
        match &event.body {
            EventBody::PromptBlocked(PromptBlockedEvent { reason, .. })
                if seam == Seam::PromptSubmit =>
            {
                return format!("prompt blocked: {}", excerpt(reason, 120));
            }
            EventBody::UserMessage(UserMessageEvent { content, .. })
                if seam == Seam::PromptSubmit =>
            {
                return format!("prompt sent to the model: {}", excerpt(content, 80));
            }
            EventBody::SteeringMessage(SteeringMessageEvent { content, .. })
                if seam == Seam::TurnContinuation =>
            {
                return format!("turn continued: {}", excerpt(content, 120));
            }
            EventBody::TurnEnd(TurnEndEvent {
                turn: ended,
                reason,
                message,
            }) if turn.is_none_or(|t| t == *ended) => {
                return format!(
                    "turn {ended} ended {}{}",
                    reason.as_str(),
                    message
                        .as_deref()
                        .map(|m| format!(": {}", excerpt(m, 120)))
                        .unwrap_or_default()
                );
            }
            EventBody::TurnStart(_) if turn.is_none() => {
                return "session went on".to_owned();
            }
            EventBody::SessionHeader(_)
            | EventBody::TurnStart(_)
            | EventBody::CompactionStarted(_)
            | EventBody::CompactionCompleted(_)
            | EventBody::CompactionFailed(_)
            | EventBody::UserMessage(_)
            | EventBody::PromptBlocked(_)
            | EventBody::AssistantMessage(_)
            | EventBody::ToolCall(_)
            | EventBody::ToolResult(_)
            | EventBody::ContextMessage(_)
            | EventBody::SteeringMessage(_)
            | EventBody::TurnEnd(_)
            | EventBody::HookInvoked(_)
            | EventBody::HookResult(_)
            | EventBody::SeamNote(_)
            | EventBody::SessionCleared { .. }
            | EventBody::ModelSwitched(_) => {}
        }
    }
    "nothing followed (end of log)".to_owned()
}

fn default_session() -> anyhow::Result<PathBuf> {
    let home = dsh_core::Env::from_process().dsh_home()?;
    let cwd = crate::common::current_dir()?.display().to_string();
    let sessions = dsh_session::store::list(&home, &mut |warning| errln!("{warning}"))?;
    match sessions.into_iter().find(|s| s.cwd == cwd) {
        Some(session) => Ok(session.path),
        None => anyhow::bail!(
            "no session of {cwd} under {}; give a session log or id",
            dsh_session::store::sessions_dir(&home).display()
        ),
    }
}

pub(super) fn run(
    session: Option<&str>,
    denied: bool,
    event_filter: Option<&str>,
    format: Format,
) -> anyhow::Result<ExitStatus> {
    let path = match session {
        Some(session) => resolve_session(session)?,
        None => default_session()?,
    };
    let events = load_session(&path)?;
    let cwd = events.iter().find_map(|e| match &e.body {
        EventBody::SessionHeader(SessionHeaderEvent { cwd, .. }) => Some(PathBuf::from(cwd)),
        EventBody::TurnStart(_)
        | EventBody::UserMessage(_)
        | EventBody::CompactionStarted(_)
        | EventBody::CompactionCompleted(_)
        | EventBody::CompactionFailed(_)
        | EventBody::PromptBlocked(_)
        | EventBody::AssistantMessage(_)
        | EventBody::ToolCall(_)
        | EventBody::ToolResult(_)
        | EventBody::ContextMessage(_)
        | EventBody::SteeringMessage(_)
        | EventBody::TurnEnd(_)
        | EventBody::HookInvoked(_)
        | EventBody::HookResult(_)
        | EventBody::SeamNote(_)
        | EventBody::SessionCleared { .. }
        | EventBody::ModelSwitched(_) => None,
    });
    let mut entries = Vec::new();
    for (index, event) in events.iter().enumerate() {
        let EventBody::HookResult(HookResultEvent {
            invocation_id,
            outcome,
            exit_code,
            decision,
            error,
            ..
        }) = &event.body
        else {
            continue;
        };
        let invoked = events[..index].iter().rev().find_map(|e| match &e.body {
            EventBody::HookInvoked(HookInvokedEvent {
                invocation_id: id, ..
            }) if id == invocation_id => Some(&e.body),
            EventBody::SessionHeader(_)
            | EventBody::TurnStart(_)
            | EventBody::CompactionStarted(_)
            | EventBody::CompactionCompleted(_)
            | EventBody::CompactionFailed(_)
            | EventBody::UserMessage(_)
            | EventBody::PromptBlocked(_)
            | EventBody::AssistantMessage(_)
            | EventBody::ToolCall(_)
            | EventBody::ToolResult(_)
            | EventBody::ContextMessage(_)
            | EventBody::SteeringMessage(_)
            | EventBody::TurnEnd(_)
            | EventBody::HookInvoked(_)
            | EventBody::HookResult(_)
            | EventBody::SeamNote(_)
            | EventBody::SessionCleared { .. }
            | EventBody::ModelSwitched(_) => None,
        });
        let Some(EventBody::HookInvoked(HookInvokedEvent {
            turn,
            dialect,
            event: hook_event,
            seam,
            origin,
            command,
            call_id,
            ..
        })) = invoked
        else {
            continue;
        };
        if let Some(filter) = event_filter
            && !hook_event.eq_ignore_ascii_case(filter)
        {
            continue;
        }
        if denied && !is_denial(decision) {
            continue;
        }
        let effect = decision.effect.as_str().to_owned();
        let why = decision
            .best_reason()
            .or(decision.why.as_deref())
            .or(decision.override_text())
            .map(str::to_owned)
            .or_else(|| error.clone());
        entries.push(Entry {
            ts: event.ts.clone(),
            turn: *turn,
            dialect: dialect.as_str().to_owned(),
            event: hook_event.clone(),
            seam: *seam,
            command: command.clone(),
            origin: origin.clone(),
            call_id: call_id.clone(),
            outcome: serde_json::to_value(outcome)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            exit_code: *exit_code,
            decision: (**decision).clone(),
            effect,
            why,
            then: what_followed(&events, index, *turn, *seam, call_id.as_deref()),
        });
    }
    match format {
        Format::Json => {
            let doc = json!({"session": path, "decisions": entries});
            outln!("{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => {
            outln!("hook decisions in {}", path.display())?;
            if entries.is_empty() {
                outln!(
                    "  none{}",
                    if denied || event_filter.is_some() {
                        " (matching the filters)"
                    } else {
                        ""
                    }
                )?;
            }
            for entry in &entries {
                let turn = entry.turn.map(|t| format!(" turn {t}")).unwrap_or_default();
                let call = entry
                    .call_id
                    .as_deref()
                    .map(|c| format!(" call {c}"))
                    .unwrap_or_default();
                outln!(
                    "{}{turn} [{}] {}{call}: {}",
                    entry.ts,
                    entry.dialect,
                    entry.event,
                    entry.command
                )?;
                if let Some(origin) = &entry.origin {
                    let shown = match &cwd {
                        Some(cwd) => dsh_core::trust::show_path(origin, cwd),
                        None => origin.clone(),
                    };
                    outln!("    from {shown}")?;
                }
                let exit = entry
                    .exit_code
                    .map_or(entry.outcome.clone(), |code| format!("exit {code}"));
                let won = match entry.decision.won {
                    Some(true) => ", won",
                    Some(false) => ", overruled by another hook",
                    None => "",
                };
                outln!(
                    "    decided: {}{won} ({exit}){}",
                    entry.effect,
                    entry
                        .why
                        .as_deref()
                        .map(|w| format!(" — {}", excerpt(w, 160)))
                        .unwrap_or_default()
                )?;
                outln!("    then: {}", entry.then)?;
            }
        }
    }
    Ok(ExitStatus::Success)
}
