//! What a firing recorded and decided, and how `dsh hooks test` shows it.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use dsh_protocol::{EventBody, HookInvokedEvent, HookResultEvent};
use dsh_seams::{SessionSink, UserNotice};
use serde::Serialize;
use serde_json::Value;

use super::decided::Decided;
use crate::common::excerpt;

/// A sink that keeps everything.
#[derive(Default)]
pub(crate) struct Recorder {
    pub(super) events: Mutex<Vec<EventBody>>,
    pub(super) notices: Mutex<Vec<UserNotice>>,
}

impl SessionSink for Recorder {
    fn record(&self, body: EventBody) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(body);
    }

    fn tell_user(&self, notice: UserNotice) {
        self.notices
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(notice);
    }
}

/// One hook run, as recorded.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RunReport {
    pub dialect: String,
    pub event: String,
    pub matcher: Option<String>,
    pub origin: Option<String>,
    pub command: String,
    pub input: Value,
    pub outcome: String,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub stdout: String,
    pub stderr: String,
    pub error: Option<String>,
    pub decision: Option<dsh_protocol::HookDecision>, // none until the run ends
}

/// What one firing decided.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FireReport {
    pub event: String,
    pub tool: Option<String>,
    pub arguments: Option<Value>,
    pub runs: Vec<RunReport>,
    /// The combined seam decision.
    pub decision: Decided,
    /// One line.
    pub summary: String,
    pub model_sees: Vec<String>,
    pub user_sees: Vec<String>,
}

/// Pairs `hook/invoked` with `hook/result` in record order.
pub(crate) fn pair_runs(events: &[EventBody]) -> Vec<RunReport> {
    let mut runs: Vec<RunReport> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    for body in events {
        match body {
            EventBody::HookInvoked(HookInvokedEvent {
                invocation_id,
                dialect,
                event,
                matcher,
                origin,
                command,
                input,
                ..
            }) => {
                ids.push(invocation_id.clone());
                runs.push(RunReport {
                    dialect: dialect.as_str().to_owned(),
                    event: event.clone(),
                    matcher: matcher.clone(),
                    origin: origin.clone(),
                    command: command.clone(),
                    // Shown as JSON, pretty in `--format json`.
                    input: input.read().unwrap_or_default(),
                    outcome: "not finished".to_owned(),
                    exit_code: None,
                    duration_ms: 0,
                    stdout: String::new(),
                    stderr: String::new(),
                    error: None,
                    decision: None,
                });
            }
            EventBody::HookResult(HookResultEvent {
                invocation_id,
                outcome,
                exit_code,
                duration_ms,
                stdout,
                stderr,
                error,
                decision,
                ..
            }) => {
                if let Some(index) = ids.iter().rposition(|id| id == invocation_id) {
                    let run = &mut runs[index];
                    run.outcome = serde_json::to_value(outcome)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default();
                    run.exit_code = *exit_code;
                    run.duration_ms = *duration_ms;
                    run.stdout = stdout.clone();
                    run.stderr = stderr.clone();
                    run.error = error.clone();
                    run.decision = Some((**decision).clone());
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
    runs
}

/// A hook run for people.
pub(super) fn render_run(out: &mut String, index: usize, run: &RunReport, project: &Path) {
    let matcher = run
        .matcher
        .as_deref()
        .map(|m| format!(" matcher {m:?}"))
        .unwrap_or_default();
    out.push_str(&format!(
        "  {index}. [{}] {}{matcher}: {}\n",
        run.dialect, run.event, run.command
    ));
    if let Some(origin) = &run.origin {
        out.push_str(&format!(
            "     from {}\n",
            dsh_core::trust::show_path(origin, project)
        ));
    }
    let exit = match run.exit_code {
        Some(code) => format!("exit {code}"),
        None => run.outcome.clone(),
    };
    out.push_str(&format!("     {exit} in {} ms\n", run.duration_ms));
    if !run.stdout.trim().is_empty() {
        out.push_str(&format!("     stdout: {}\n", excerpt(&run.stdout, 240)));
    }
    if !run.stderr.trim().is_empty() {
        out.push_str(&format!("     stderr: {}\n", excerpt(&run.stderr, 240)));
    }
    if let Some(error) = &run.error {
        out.push_str(&format!("     error: {}\n", excerpt(error, 240)));
    }
    let decision = serde_json::to_string(&run.decision).unwrap_or_default();
    out.push_str(&format!("     decision: {decision}\n"));
}

pub(super) fn render(report: &FireReport, project: &Path) -> String {
    let mut out = String::new();
    out.push_str(&format!("event: {}", report.event));
    if let Some(tool) = &report.tool {
        out.push_str(&format!(" (tool {tool})"));
    }
    out.push('\n');
    if let Some(arguments) = &report.arguments {
        out.push_str(&format!("arguments: {arguments}\n"));
    }
    if report.runs.is_empty() {
        out.push_str("hooks run: none (no configured hook matches)\n");
    } else {
        out.push_str(&format!("hooks run: {}\n", report.runs.len()));
        for (index, run) in report.runs.iter().enumerate() {
            render_run(&mut out, index + 1, run, project);
        }
    }
    out.push_str(&format!("decision: {}\n", report.summary));
    out.push_str("the model sees:\n");
    if report.model_sees.is_empty() {
        out.push_str("  nothing\n");
    }
    for line in &report.model_sees {
        out.push_str(&format!("  {}\n", display_line(line)));
    }
    out.push_str("the user sees:\n");
    if report.user_sees.is_empty() {
        out.push_str("  nothing\n");
    }
    for line in &report.user_sees {
        out.push_str(&format!("  {}\n", display_line(line)));
    }
    out
}

/// One "sees" entry as shown: continuation lines indented under the first.
/// Hook output is kept verbatim in the report (it is what the model gets);
/// only this rendering drops trailing whitespace, so a newline-terminated
/// stderr does not end the section with an indented empty line.
fn display_line(line: &str) -> String {
    line.trim_end().replace('\n', "\n    ")
}
