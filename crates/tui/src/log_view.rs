//! `dsh log FILE`: a session log rendered for people.

use dsh_stdio::stdio::{ExitStatus, errln};
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use dsh_protocol::{
    AssistantMessageEvent, CompactionCompletedEvent, CompactionFailedEvent, CompactionStartedEvent,
    ContextMessageEvent, EventBody, HookInvokedEvent, HookOutcomeKind, HookResultEvent,
    ModelSwitchedEvent, PromptBlockedEvent, SeamNoteEvent, SessionHeaderEvent,
    SteeringMessageEvent, ToolCallEvent, ToolResultEvent, TurnEndEvent, TurnStartEvent,
    UserMessageEvent,
};

pub use crate::terminal::ColorChoice;

struct Paint {
    on: bool,
}

impl Paint {
    fn wrap(&self, style: anstyle::Style, text: &str) -> String {
        if self.on {
            // `{style}` opens the style, `{style:#}` resets it.
            format!("{style}{text}{style:#}")
        } else {
            text.to_owned()
        }
    }
    fn bold(&self, text: &str) -> String {
        self.wrap(anstyle::Style::new().bold(), text)
    }
    fn dim(&self, text: &str) -> String {
        self.wrap(anstyle::Style::new().dimmed(), text)
    }
    fn red(&self, text: &str) -> String {
        self.wrap(anstyle::AnsiColor::Red.on_default(), text)
    }
    fn green(&self, text: &str) -> String {
        self.wrap(anstyle::AnsiColor::Green.on_default(), text)
    }
    fn yellow(&self, text: &str) -> String {
        self.wrap(anstyle::AnsiColor::Yellow.on_default(), text)
    }
    fn cyan(&self, text: &str) -> String {
        self.wrap(anstyle::AnsiColor::Cyan.on_default(), text)
    }
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|line| format!("{prefix}{line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn clip(text: &str, max_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= max_lines {
        text.trim_end().to_owned()
    } else {
        format!(
            "{}\n… ({} more lines)",
            lines[..max_lines].join("\n"),
            lines.len() - max_lines
        )
    }
}

/// Renders the log at `path`.
pub fn run(path: &Path, color: ColorChoice) -> anyhow::Result<ExitStatus> {
    let loaded = dsh_session::load(path)?;
    let on = crate::terminal::color_enabled(color);
    let text = render(&loaded.events, &Paint { on });
    let mut stdout = dsh_stdio::stdio::stdout();
    stdout.write_all(text.as_bytes())?;
    if let Some(torn) = loaded.torn_tail {
        errln!(
            "dsh: warning: {}:{}: the last line is incomplete ({} bytes, left by a crash) and was not read",
            path.display(),
            torn.line,
            torn.bytes
        );
    }
    Ok(ExitStatus::Success)
}

fn render(events: &[dsh_protocol::Event], paint: &Paint) -> String {
    let mut out = String::new();
    let mut current_agent: Option<&str> = None;
    for event in events {
        let start = out.len();
        let _ = match &event.body {
            EventBody::SessionHeader(_)
            | EventBody::TurnStart(_)
            | EventBody::SessionCleared { .. }
            | EventBody::ModelSwitched(_)
            | EventBody::UserMessage(_)
            | EventBody::PromptBlocked(_)
            | EventBody::AssistantMessage(_)
            | EventBody::ToolCall(_)
            | EventBody::ToolResult(_) => render_conversation(&mut out, &event.body, paint),
            EventBody::ContextMessage(_)
            | EventBody::SteeringMessage(_)
            | EventBody::CompactionStarted(_)
            | EventBody::CompactionCompleted(_)
            | EventBody::CompactionFailed(_)
            | EventBody::TurnEnd(_)
            | EventBody::SeamNote(_)
            | EventBody::HookInvoked(_)
            | EventBody::HookResult(_) => render_activity(&mut out, &event.body, paint),
        };
        // A subagent's events (tagged with its id) are shown indented under
        // a line naming it, inside the parent's `agent` call.
        let agent = event.agent_id.as_deref();
        if let Some(agent_id) = agent {
            let rendered = out.split_off(start);
            if current_agent != agent {
                let _ = writeln!(out, "  {}", paint.dim(&format!("┌ subagent {agent_id}")));
            }
            for line in rendered.lines() {
                let _ = writeln!(out, "  {} {line}", paint.dim("│"));
            }
        }
        current_agent = agent;
    }
    out
}

/// The conversation: the header, turns, prompts, replies and tool calls.
fn render_conversation(out: &mut String, body: &EventBody, paint: &Paint) -> std::fmt::Result {
    match body {
        EventBody::SessionHeader(SessionHeaderEvent {
            session_id,
            cwd,
            version,
            notices,
            provider_api,
        }) => {
            let _ = writeln!(
                out,
                "{} {session_id}  {}  dsh {version}",
                paint.bold("session"),
                cwd
            );
            if let Some(api) = provider_api {
                let _ = writeln!(out, "  {} {api} API", paint.dim("model:"));
            }
            for notice in notices {
                let _ = writeln!(out, "  {} {notice}", paint.yellow("notice:"));
            }
            Ok(())
        }
        EventBody::TurnStart(TurnStartEvent { turn }) => {
            writeln!(out, "\n{}", paint.bold(&format!("── turn {turn} ──")))
        }
        EventBody::SessionCleared {} => writeln!(
            out,
            "\n{}",
            paint.bold("── /clear: the conversation starts again ──")
        ),
        EventBody::ModelSwitched(ModelSwitchedEvent { from, to }) => {
            writeln!(out, "{} {from} → {to}", paint.bold("/model"))
        }
        EventBody::UserMessage(UserMessageEvent {
            content,
            source,
            original_content,
            ..
        }) => {
            let _ = writeln!(
                out,
                "{} {}",
                paint.cyan(&format!("{source} ›")),
                indent(content, "  ").trim_start()
            );
            if let Some(original) = original_content {
                let _ = writeln!(out, "  {} {}", paint.dim("(rewritten from)"), original);
            }
            Ok(())
        }
        EventBody::PromptBlocked(PromptBlockedEvent {
            content,
            source,
            reason,
            ..
        }) => writeln!(
            out,
            "{} {}\n{}",
            paint.red(&format!("{source} › [blocked]")),
            content,
            indent(reason, "  ")
        ),
        EventBody::AssistantMessage(AssistantMessageEvent {
            content,
            tool_calls,
            step,
            ..
        }) => {
            if !content.is_empty() {
                let _ = writeln!(
                    out,
                    "{} {}",
                    paint.green(&format!("assistant (step {step}) ›")),
                    content
                );
            }
            for call in tool_calls {
                let _ = writeln!(
                    out,
                    "  {} {} {}",
                    paint.bold("call"),
                    call.name,
                    call.arguments
                );
            }
            Ok(())
        }
        EventBody::ToolCall(ToolCallEvent {
            call_id,
            tool,
            arguments,
            original_arguments,
            rewritten_by,
            ..
        }) => {
            if let (Some(original), Some(by)) = (original_arguments, rewritten_by) {
                let _ = writeln!(
                    out,
                    "  {} {tool} [{call_id}] rewritten by {by}\n    was: {original}\n    now: {arguments}",
                    paint.yellow("rewrite")
                );
            }
            Ok(())
        }
        EventBody::ToolResult(ToolResultEvent {
            call_id,
            is_error,
            content,
            disposition,
            decided_by,
            rewrite,
            ..
        }) => {
            let label = if *is_error {
                paint.red(&format!("  error [{call_id}]"))
            } else {
                paint.dim(&format!("  result [{call_id}]"))
            };
            let ran = matches!(disposition.as_deref(), Some("executed") | None);
            let extra = match disposition.as_deref() {
                Some("executed") | None => String::new(),
                Some(other) => format!(" ({other})"),
            };
            // The mode letting a call run is the everyday case; every
            // other decider is worth a line.
            let decider = decided_by
                .as_ref()
                .filter(|d| !(ran && d.kind == dsh_protocol::DeciderKind::Mode))
                .map(|d| {
                    format!(
                        " {}",
                        paint.dim(&format!("decided by {}", describe_decider(d)))
                    )
                })
                .unwrap_or_default();
            if let Some(rewrite) = rewrite {
                let _ = writeln!(
                    out,
                    "  {} [{call_id}] approved with new arguments by {}\n    now: {}",
                    paint.yellow("rewrite"),
                    rewrite.by,
                    rewrite.arguments
                );
            }
            writeln!(
                out,
                "{label}{extra}{decider}\n{}",
                indent(&clip(content, 8), "    ")
            )
        }
        EventBody::ContextMessage(_)
        | EventBody::SteeringMessage(_)
        | EventBody::CompactionStarted(_)
        | EventBody::CompactionCompleted(_)
        | EventBody::CompactionFailed(_)
        | EventBody::TurnEnd(_)
        | EventBody::SeamNote(_)
        | EventBody::HookInvoked(_)
        | EventBody::HookResult(_) => Ok(()),
    }
}

/// What happened around it: context, steering, compaction, turn ends, seam notes and hooks.
fn render_activity(out: &mut String, body: &EventBody, paint: &Paint) -> std::fmt::Result {
    match body {
        EventBody::ContextMessage(ContextMessageEvent {
            content, source, ..
        }) => writeln!(
            out,
            "  {} {}",
            paint.dim(&format!("context from {source}:")),
            indent(&clip(content, 6), "    ").trim_start()
        ),
        EventBody::SteeringMessage(SteeringMessageEvent {
            content, source, ..
        }) => writeln!(
            out,
            "  {} {}",
            paint.yellow(&format!("steering from {source}:")),
            content
        ),
        EventBody::CompactionStarted(CompactionStartedEvent {
            trigger,
            custom_instructions,
            estimated_tokens,
            ..
        }) => {
            let label = paint.yellow(&format!("compaction ({}):", trigger.as_str()));
            match custom_instructions {
                Some(text) => writeln!(
                    out,
                    "  {label} started at ~{estimated_tokens} tokens, instructions: {text}"
                ),
                None => writeln!(out, "  {label} started at ~{estimated_tokens} tokens"),
            }
        }
        EventBody::CompactionCompleted(CompactionCompletedEvent {
            trigger,
            summary,
            summarized_by,
            kept_from_seq,
            contexts,
            ..
        }) => {
            let kept = match kept_from_seq {
                Some(seq) => format!("kept verbatim from event {seq}"),
                None => "nothing kept verbatim".to_owned(),
            };
            let _ = writeln!(
                out,
                "  {} summary by {summarized_by}, {kept}\n{}",
                paint.yellow(&format!("compaction ({}) completed:", trigger.as_str())),
                indent(&clip(summary, 8), "    ")
            );
            for context in contexts {
                let _ = writeln!(
                    out,
                    "    {} {}",
                    paint.dim(&format!("context from {}:", context.source)),
                    indent(&clip(&context.content, 4), "      ").trim_start()
                );
            }
            Ok(())
        }
        EventBody::CompactionFailed(CompactionFailedEvent {
            trigger, reason, ..
        }) => writeln!(
            out,
            "  {} {reason}",
            paint.red(&format!(
                "compaction ({}) did not happen:",
                trigger.as_str()
            ))
        ),
        EventBody::TurnEnd(TurnEndEvent {
            turn,
            reason,
            message,
        }) => {
            let text = format!("── turn {turn} ended: {}", reason.as_str());
            let text = match reason {
                dsh_protocol::TurnEndReason::Completed => paint.bold(&text),
                dsh_protocol::TurnEndReason::Rejected
                | dsh_protocol::TurnEndReason::Interrupted
                | dsh_protocol::TurnEndReason::Error
                | dsh_protocol::TurnEndReason::MaxSteps
                | dsh_protocol::TurnEndReason::Stopped => paint.red(&text),
            };
            match message {
                Some(message) => writeln!(out, "{text} — {message}"),
                None => writeln!(out, "{text}"),
            }
        }
        EventBody::SeamNote(SeamNoteEvent {
            seam,
            plugin,
            kind,
            message,
            ..
        }) => writeln!(
            out,
            "  {} {seam} [{plugin}] {}: {message}",
            paint.yellow("seam note"),
            serde_json::to_value(kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        ),
        EventBody::HookInvoked(HookInvokedEvent {
            dialect,
            event: hook_event,
            command,
            invocation_id,
            ..
        }) => writeln!(
            out,
            "  {} {} {hook_event} `{command}` [{}]",
            paint.dim("hook"),
            dialect.as_str(),
            short(invocation_id)
        ),
        EventBody::HookResult(HookResultEvent {
            invocation_id,
            outcome,
            exit_code,
            duration_ms,
            decision,
            stderr,
            http_status,
            ..
        }) => {
            let how = match outcome {
                HookOutcomeKind::HttpError => {
                    format!("HTTP status {}", http_status.unwrap_or_default())
                }
                HookOutcomeKind::Exited => format!("exit {}", exit_code.unwrap_or(-1)),
                HookOutcomeKind::Signaled => "killed by a signal".to_owned(),
                HookOutcomeKind::TimedOut => "timed out".to_owned(),
                HookOutcomeKind::Cancelled => "cancelled".to_owned(),
                HookOutcomeKind::SpawnFailed => "failed to start".to_owned(),
                HookOutcomeKind::Detached => "running in the background".to_owned(),
            };
            let decision = serde_json::to_string(decision).unwrap_or_default();
            let _ = writeln!(
                out,
                "  {} [{}] {how} in {duration_ms} ms → {decision}",
                paint.dim("hook result"),
                short(invocation_id)
            );
            if !stderr.trim().is_empty() {
                let _ = writeln!(out, "{}", indent(&clip(stderr, 4), "    stderr: "));
            }
            Ok(())
        }
        EventBody::SessionHeader(_)
        | EventBody::TurnStart(_)
        | EventBody::SessionCleared { .. }
        | EventBody::ModelSwitched(_)
        | EventBody::UserMessage(_)
        | EventBody::PromptBlocked(_)
        | EventBody::AssistantMessage(_)
        | EventBody::ToolCall(_)
        | EventBody::ToolResult(_) => Ok(()),
    }
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// `rule `Bash(rm:*)` from /p/.claude/settings.json`, `mode plan`, `person user`.
fn describe_decider(d: &dsh_protocol::DecidedBy) -> String {
    let kind = match d.kind {
        dsh_protocol::DeciderKind::Rule => "rule",
        dsh_protocol::DeciderKind::Mode => "mode",
        dsh_protocol::DeciderKind::Hook => "hook",
        dsh_protocol::DeciderKind::Person => "person",
        dsh_protocol::DeciderKind::Flag => "flag",
    };
    match &d.rule {
        Some(rule) => format!("{kind} `{rule}` from {}", d.source),
        None => format!("{kind} {}", d.source),
    }
}
