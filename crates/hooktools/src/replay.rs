//! `dsh hooks replay SESSION`: re-runs every recorded hook firing of a
//! session (the exact recorded stdin payload drives the canonical call) through
//! today's configuration and diffs each hook's decision with the recorded one.

use anyhow::Context as _;
use dsh_stdio::stdio::{ExitStatus, outln};
use std::path::Path;
use std::sync::Arc;

use dsh_protocol::{
    Dialect, EventBody, ExactJson, HookDecision, HookInvokedEvent, HookResultEvent,
    SessionHeaderEvent,
};
use dsh_seams::Plugin;
use serde::Serialize;
use serde_json::{Value, json};

use crate::common::{Format, excerpt, load_session};
use crate::fire::{self, Firing, RunReport, TestEvent, TestPayload};
use dsh_core::SessionSpec;

/// One recorded firing: the invocations that shared an event and a payload.
struct Recorded {
    dialect: Dialect,
    event: String,
    turn: Option<u64>,
    call_id: Option<String>,
    input: ExactJson,
    /// (command, origin, recorded decision; none while unfinished)
    runs: Vec<(String, Option<String>, Option<HookDecision>)>,
    ids: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Change {
    kind: &'static str,
    command: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    was: Option<Option<HookDecision>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    now: Option<Option<HookDecision>>,
    what: String,
}

#[derive(Debug, Serialize)]
struct FiringDiff {
    dialect: &'static str,
    event: String,
    turn: Option<u64>,
    call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<String>,
    changes: Vec<Change>,
    unchanged: usize,
}

fn group(events: &[dsh_protocol::Event]) -> Vec<Recorded> {
    let mut firings: Vec<Recorded> = Vec::new();
    for event in events {
        match &event.body {
            EventBody::HookInvoked(HookInvokedEvent {
                turn,
                invocation_id,
                dialect,
                event,
                origin,
                command,
                input,
                call_id,
                ..
            }) => {
                let same = |f: &Recorded| {
                    f.dialect == *dialect
                        && f.event == *event
                        && f.turn == *turn
                        && f.call_id == *call_id
                        && f.input == *input
                };
                let index = match firings.iter().rposition(same) {
                    Some(index) => index,
                    None => {
                        firings.push(Recorded {
                            dialect: *dialect,
                            event: event.clone(),
                            turn: *turn,
                            call_id: call_id.clone(),
                            input: input.clone(),
                            runs: Vec::new(),
                            ids: Vec::new(),
                        });
                        firings.len() - 1
                    }
                };
                firings[index]
                    .runs
                    .push((command.clone(), origin.clone(), None));
                firings[index].ids.push(invocation_id.clone());
            }
            EventBody::HookResult(HookResultEvent {
                invocation_id,
                decision,
                ..
            }) => {
                for firing in firings.iter_mut().rev() {
                    if let Some(i) = firing.ids.iter().position(|id| id == invocation_id) {
                        firing.runs[i].2 = Some((**decision).clone());
                        break;
                    }
                }
            }
            EventBody::SeamNote(_)
            | EventBody::SessionHeader(_)
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
            | EventBody::SessionCleared { .. }
            | EventBody::ModelSwitched(_)
            | EventBody::TurnEnd(_) => {}
        }
    }
    firings
}

/// A decision for people: effect and reason, plus what else it carries.
fn describe(decision: &Option<HookDecision>) -> String {
    let Some(decision) = decision else {
        return "none".to_owned();
    };
    let mut text = decision.effect.as_str().to_owned();
    if let Some(reason) = decision.best_reason().or(decision.why.as_deref()) {
        text.push_str(&format!(" ({})", excerpt(reason, 120)));
    }
    if decision.updated_input.is_some() {
        text.push_str(" + rewrite");
    }
    if !decision.contexts.is_empty() {
        text.push_str(" + context");
    }
    text
}

fn compare(was: &Option<HookDecision>, now: &Option<HookDecision>) -> String {
    let empty = HookDecision::default();
    let (was_d, now_d) = (
        was.as_ref().unwrap_or(&empty),
        now.as_ref().unwrap_or(&empty),
    );
    let mut what = Vec::new();
    if was_d.effect != now_d.effect || was.is_some() != now.is_some() {
        what.push(format!("was {} → now {}", describe(was), describe(now)));
    } else {
        let shown = |value: Option<Value>| {
            value.map_or("none".to_owned(), |v| excerpt(&v.to_string(), 100))
        };
        let nonempty = |texts: &[String]| (!texts.is_empty()).then(|| json!(texts));
        let fields = [
            (
                "reason changed",
                was_d.reason.as_ref().map(|r| json!(r)),
                now_d.reason.as_ref().map(|r| json!(r)),
            ),
            (
                "rewrite changed",
                was_d.updated_input.clone(),
                now_d.updated_input.clone(),
            ),
            (
                "context changed",
                nonempty(&was_d.contexts),
                nonempty(&now_d.contexts),
            ),
            (
                "steering changed",
                nonempty(&was_d.steering),
                nonempty(&now_d.steering),
            ),
            (
                "stop changed",
                was_d.stop_reason.as_ref().map(|r| json!(r)),
                now_d.stop_reason.as_ref().map(|r| json!(r)),
            ),
        ];
        for (label, before, after) in fields {
            if before != after {
                what.push(format!("{label}: {} → {}", shown(before), shown(after)));
            }
        }
        if what.is_empty() {
            let text = |d: &Option<HookDecision>| serde_json::to_string(d).unwrap_or_default();
            what.push(format!(
                "decision details changed: {} → {}",
                text(was),
                text(now)
            ));
        }
    }
    what.join("; ")
}

fn diff(recorded: &Recorded, new_runs: &[RunReport]) -> (Vec<Change>, usize) {
    let mut changes = Vec::new();
    let mut unchanged = 0;
    let mut used = vec![false; new_runs.len()];
    for (command, origin, was) in &recorded.runs {
        let found = new_runs
            .iter()
            .enumerate()
            .filter(|(i, run)| !used[*i] && run.command == *command)
            .min_by_key(|(_, run)| usize::from(run.origin != *origin))
            .map(|(i, _)| i);
        match found {
            Some(i) => {
                used[i] = true;
                let now = &new_runs[i].decision;
                if now == was {
                    unchanged += 1;
                } else {
                    changes.push(Change {
                        kind: "changed",
                        command: command.clone(),
                        was: Some(was.clone()),
                        now: Some(now.clone()),
                        what: compare(was, now),
                    });
                }
            }
            None => changes.push(Change {
                kind: "removed",
                command: command.clone(),
                was: Some(was.clone()),
                now: None,
                what: format!(
                    "no longer runs (removed, disabled or no longer matching); it decided {}",
                    describe(was)
                ),
            }),
        }
    }
    for (i, run) in new_runs.iter().enumerate() {
        if !used[i] {
            changes.push(Change {
                kind: "added",
                command: run.command.clone(),
                was: None,
                now: Some(run.decision.clone()),
                what: format!("now runs and decides {}", describe(&run.decision)),
            });
        }
    }
    (changes, unchanged)
}

pub(super) fn run(spec: SessionSpec, path: &Path, format: Format) -> anyhow::Result<ExitStatus> {
    let events = load_session(path)?;
    let session_id = events.iter().find_map(|e| match &e.body {
        EventBody::SessionHeader(SessionHeaderEvent { session_id, .. }) => Some(session_id.clone()),
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
    // Bridges build paths from the session id: a header's must be safe.
    if let Some(id) = &session_id {
        dsh_session::validate_session_id(id)
            .with_context(|| format!("{}: the header's session id", path.display()))?;
    }
    let recorded = group(&events);
    let registry = dsh_core::dialects::registry();
    let hooks = fire::Hooks::assemble(&spec)?;
    let runtime = fire::runtime()?;
    let mut diffs = Vec::new();
    for firing in &recorded {
        // SDK hooks were answered by the application that drove the
        // session; nothing here can ask it again (no bridge is `sdk`).
        let plugins: &[Arc<dyn Plugin>] = &hooks.of(Some(firing.dialect));
        // The recorded stdin is in its dialect's own names.
        let recorded_dialect: Vec<_> = registry
            .get(firing.dialect.as_str())
            .cloned()
            .into_iter()
            .collect();
        let mut entry = FiringDiff {
            dialect: firing.dialect.as_str(),
            event: firing.event.clone(),
            turn: firing.turn,
            call_id: firing.call_id.clone(),
            skipped: None,
            changes: Vec::new(),
            unchanged: 0,
        };
        let prepared = TestEvent::parse(&firing.event).and_then(|event| {
            if firing.dialect == Dialect::Sdk {
                anyhow::bail!("an SDK hook is answered by the application that registered it");
            }
            if event == TestEvent::StopFailure {
                // Its hooks run detached and their output is ignored: there
                // is no decision to compare.
                anyhow::bail!("StopFailure hooks decide nothing (their output is ignored)");
            }
            let fields = TestPayload::of(firing.input.text(), &recorded_dialect);
            let recorded_session = fields.session_id.is_some();
            let mut canonical = Firing::from_fields(event, None, fields)?;
            if let Some(turn) = firing.turn {
                canonical.turn = turn;
            }
            if let Some(call_id) = &firing.call_id {
                canonical.call_id = call_id.clone();
            }
            if !recorded_session && let Some(id) = &session_id {
                canonical.session_id = id.clone();
            }
            Ok(canonical)
        });
        match prepared {
            Err(error) => entry.skipped = Some(format!("{error:#}")),
            Ok(canonical) => {
                let report = runtime.block_on(fire::fire(plugins, &spec.cwd, &canonical));
                let (changes, unchanged) = diff(firing, &report.runs);
                entry.changes = changes;
                entry.unchanged = unchanged;
            }
        }
        diffs.push(entry);
    }
    hooks.runner.kill_all();

    let count = |kind: &str| {
        diffs
            .iter()
            .flat_map(|d| d.changes.iter())
            .filter(|c| c.kind == kind)
            .count()
    };
    let unchanged: usize = diffs.iter().map(|d| d.unchanged).sum();
    let skipped = diffs.iter().filter(|d| d.skipped.is_some()).count();
    let invocations: usize = recorded.iter().map(|r| r.runs.len()).sum();
    match format {
        Format::Json => {
            let doc = json!({
                "session": path,
                "invocations": invocations,
                "firings": diffs,
                "unchanged": unchanged,
                "changed": count("changed"),
                "added": count("added"),
                "removed": count("removed"),
                "skipped_firings": skipped,
            });
            outln!("{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => {
            outln!(
                "replayed {invocations} recorded hook invocation(s) in {} firing(s) from {} against the current configuration",
                recorded.len(),
                path.display()
            )?;
            for d in &diffs {
                if d.changes.is_empty() && d.skipped.is_none() {
                    continue;
                }
                let turn = d.turn.map(|t| format!("turn {t} ")).unwrap_or_default();
                let call = d
                    .call_id
                    .as_deref()
                    .map(|c| format!(" (call {c})"))
                    .unwrap_or_default();
                outln!("{turn}[{}] {}{call}:", d.dialect, d.event)?;
                if let Some(why) = &d.skipped {
                    outln!("  skipped: {why}")?;
                }
                for change in &d.changes {
                    outln!("  {} {}: {}", change.kind, change.command, change.what)?;
                }
            }
            outln!(
                "{unchanged} unchanged, {} changed, {} added, {} removed, {skipped} firing(s) skipped",
                count("changed"),
                count("added"),
                count("removed")
            )?;
        }
    }
    Ok(ExitStatus::Success)
}
