//! The Gemini dialect as the shared hook engine sees it: how a handler is
//! selected, run (`bash -c` in the project directory, Gemini's variables,
//! the command text's `$GEMINI_PROJECT_DIR` & co. replaced shell-quoted) and
//! read, and what its run meant in the log.

use std::collections::HashMap;
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::time::Duration;

use dsh_hook_runner::{HookProgram, HookSpec, RunRecord};
use dsh_hooks::names::Tabled;
use dsh_hooks::verdict::{decided, notice, rewrite, warning};
use dsh_hooks::{Dialect, Finished, HandlerInfo, Launch, Order, Rules};
use dsh_protocol::{ExactJson, HookDecision, HookEffect, HookEntry};
use dsh_seams::{NoticeLevel, SeamContext, UserNotice};
use serde_json::Value;

use crate::config::Handler;
use crate::event::GeminiEvent;
use crate::output::{Decision, Interpretation, interpret};
use crate::payload::Payload;
use crate::tools;

/// The Gemini dialect.
pub(crate) struct Gemini {
    /// Every configured handler, in Gemini's order.
    pub handlers: Vec<Handler>,
    /// The shell (`bash`).
    pub shell: PathBuf,
    /// `$HOME`, for `GEMINI_PLANS_DIR`.
    pub home: PathBuf,
    /// What AfterModel hooks put in place of replies (for AfterAgent).
    pub shown: crate::model_events::ShownReplies,
    /// An automatic compaction fired PreCompress (`auto`) for the request
    /// about to go out, so that request does not fire it again.
    pub compress_fired: std::sync::atomic::AtomicBool,
    /// The tools each agent's last model request offered (the main agent
    /// under `None`, a subagent under its agent id), under Gemini's names
    /// and in order: the tools a `tailToolCallRequest` inside that agent
    /// may name, and Gemini's `Did you mean` suggestions when it names
    /// another (Gemini checks a subagent's tail call against the
    /// subagent's own tools: `at_tail_subagent_main_only`).
    pub offered: std::sync::Mutex<HashMap<Option<String>, Vec<String>>>,
}

impl Gemini {
    /// The offered tools' names (a poisoned lock still holds the lists).
    fn offered_lock(&self) -> std::sync::MutexGuard<'_, HashMap<Option<String>, Vec<String>>> {
        self.offered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records the tools `ctx`'s agent was just offered.
    pub(crate) fn record_offered(&self, ctx: &SeamContext, names: Vec<String>) {
        let agent = ctx.agent.as_ref().map(|agent| agent.agent_id.clone());
        self.offered_lock().insert(agent, names);
    }

    /// The tools `ctx`'s agent was last offered (empty: not known).
    pub(crate) fn offered_to(&self, ctx: &SeamContext) -> Vec<String> {
        let agent = ctx.agent.as_ref().map(|agent| agent.agent_id.clone());
        self.offered_lock().get(&agent).cloned().unwrap_or_default()
    }
}

/// The words every fail-closed reason starts with.
pub(crate) const DSH_COULD_NOT_READ: &str = "dsh could not read this hook's decision";

/// npm `shell-quote`'s `quote` for one argument, as Gemini applies it to
/// the values it substitutes into a command: unchanged when only safe
/// characters; single-quoted when it holds a double quote or whitespace
/// but no single quote; double-quoted when it holds a single quote;
/// otherwise special characters backslash-escaped.
pub fn shell_quote(value: &str) -> String {
    let has = |chars: &[char]| {
        value
            .chars()
            .any(|c| chars.contains(&c) || c.is_whitespace())
    };
    if value.is_empty() {
        return "''".to_owned();
    }
    if has(&['"']) && !value.contains('\'') {
        let escaped: String = value
            .chars()
            .flat_map(|c| match c {
                '\'' | '\\' => vec!['\\', c],
                c => vec![c],
            })
            .collect();
        return format!("'{escaped}'");
    }
    if has(&['"', '\'']) {
        let escaped: String = value
            .chars()
            .flat_map(|c| match c {
                '"' | '\\' | '$' | '`' | '!' => vec!['\\', c],
                c => vec![c],
            })
            .collect();
        return format!("\"{escaped}\"");
    }
    value
        .chars()
        .flat_map(|c| {
            if "#!\"$&'()*,:;<=>?@[\\]^`{|}".contains(c) {
                vec!['\\', c]
            } else {
                vec![c]
            }
        })
        .collect()
}

/// The variables Gemini gives every hook (before the hook's own `env`).
pub fn gemini_vars(cwd: &Path, session_id: &str, home: &Path) -> Vec<(String, String)> {
    let project = cwd.display().to_string();
    // Gemini's project slug: the folder name, lower-case, each run of other
    // characters than letters and digits one `-` (`my proj` → `my-proj`).
    let mut slug = String::new();
    for c in cwd
        .file_name()
        .map(|name| name.to_string_lossy().to_lowercase())
        .unwrap_or_default()
        .chars()
    {
        if c.is_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let plans = home
        .join(".gemini/tmp")
        .join(slug)
        .join(session_id)
        .join("plans")
        .display()
        .to_string();
    vec![
        ("GEMINI_PROJECT_DIR".to_owned(), project.clone()),
        ("GEMINI_CWD".to_owned(), project.clone()),
        ("CLAUDE_PROJECT_DIR".to_owned(), project),
        ("GEMINI_SESSION_ID".to_owned(), session_id.to_owned()),
        ("GEMINI_PLANS_DIR".to_owned(), plans),
    ]
}

/// The command text bash runs: each literal `$NAME` of Gemini's variables
/// replaced by its value, shell-quoted (`${NAME}` is left to bash).
pub fn expand_command(command: &str, vars: &[(String, String)]) -> String {
    let mut text = command.to_owned();
    // Longest names first, so no name replaces part of a longer one.
    let mut ordered: Vec<&(String, String)> = vars.iter().collect();
    ordered.sort_by_key(|(name, _)| std::cmp::Reverse(name.len()));
    for (name, value) in ordered {
        text = text.replace(&format!("${name}"), &shell_quote(value));
    }
    text
}

impl Rules for Gemini {
    type Payload = Payload;

    /// In parallel, or one at a time in configuration order when any
    /// selected group is `sequential`.
    fn order(&self, _event: GeminiEvent, selected: &[Handler]) -> Order {
        if selected.iter().any(|handler| handler.sequential) {
            Order::Sequential
        } else {
            Order::Parallel
        }
    }

    fn wire(
        &self,
        _ctx: &SeamContext,
        _event: GeminiEvent,
        payload: &Payload,
        _handler: &Handler,
    ) -> ExactJson {
        ExactJson::of(payload)
    }

    fn launch<'a>(
        &'a self,
        ctx: &'a SeamContext,
        handler: &Handler,
        stdin: &[u8],
    ) -> Launch<'a, Self> {
        let cwd = ctx.session.cwd.clone();
        let mut env = gemini_vars(&cwd, &ctx.session.session_id, &self.home);
        let command = expand_command(&handler.command, &env);
        env.extend(handler.env.iter().cloned());
        Launch::Process(HookSpec {
            program: HookProgram::Shell {
                shell: self.shell.clone(),
                command,
            },
            cwd,
            env,
            stdin: stdin.to_vec(),
            timeout: Duration::from_millis(handler.timeout_ms),
        })
    }

    fn read(
        &self,
        _ctx: &SeamContext,
        event: GeminiEvent,
        handler: &Handler,
        finished: Finished<'_, Infallible>,
    ) -> Interpretation {
        let run = finished.process();
        if let Some(fault) = run.dsh_fault() {
            return Interpretation::unreadable(
                format!("{DSH_COULD_NOT_READ}: {fault}"),
                blocks(event),
            );
        }
        interpret(
            (&run.exit, handler.timeout_ms),
            &run.stdout.text(),
            &run.stderr.text(),
        )
    }

    /// A sequential group's next hook sees the previous hook's changes:
    /// BeforeTool's `tool_input` merged, BeforeAgent's prompt with the
    /// context appended.
    fn chain(&self, _event: GeminiEvent, payload: &mut Payload, reading: &Interpretation) {
        match payload {
            Payload::BeforeTool(before) => {
                if let Some(update) = reading.tool_input.given() {
                    before.tool_input = tools::merge_input(&before.tool_input, update);
                }
            }
            Payload::BeforeAgent(before) => {
                if let Some(context) = &reading.additional_context {
                    before.prompt.push_str("\n\n");
                    before.prompt.push_str(context);
                }
            }
            Payload::SessionStart(_)
            | Payload::SessionEnd(_)
            | Payload::AfterAgent(_)
            | Payload::AfterTool(_)
            | Payload::PreCompress(_)
            | Payload::Notification(_)
            | Payload::Model(_) => {}
        }
    }
}

/// Whether a deny on `event` blocks something (dsh's own faults fail closed
/// there).
fn blocks(event: GeminiEvent) -> bool {
    matches!(
        event,
        GeminiEvent::BeforeTool
            | GeminiEvent::AfterTool
            | GeminiEvent::BeforeAgent
            | GeminiEvent::BeforeModel
    )
}

impl Dialect for Gemini {
    type Event = GeminiEvent;
    type Handler = Handler;
    /// The tool name, session-start source, session-end reason or
    /// compression trigger the matcher is tested against.
    type Subject<'s> = Option<&'s str>;
    type Custom = Infallible;
    type Reading = Interpretation;
    type Note = ();

    fn dialect(&self) -> dsh_protocol::Dialect {
        dsh_protocol::Dialect::Gemini
    }

    fn candidates(&self, event: GeminiEvent, subject: &Option<&str>) -> Vec<&Handler> {
        self.handlers
            .iter()
            .filter(|handler| handler.event == event && handler.status.is_active())
            .filter(|handler| crate::matcher::matches(event, handler.matcher.as_deref(), *subject))
            .collect()
    }

    fn dedup_key(&self, handler: &Handler) -> Option<String> {
        Some(handler.dedup_key())
    }

    fn describe(&self, handler: &Handler) -> HandlerInfo {
        HandlerInfo::new(&handler.matcher, &handler.origin, &handler.command)
    }

    fn adjust_record(&self, reading: &Interpretation, record: RunRecord) -> RunRecord {
        match &reading.error {
            Some(error) if record.error.is_none() => RunRecord {
                error: Some(error.clone()),
                ..record
            },
            Some(_) | None => record,
        }
    }

    fn decision(&self, handler: &Handler, reading: &Interpretation) -> HookDecision {
        let mut entries = Vec::new();
        if let Some(message) = &reading.system_message {
            entries.push(HookEntry {
                kind: "system_message".to_owned(),
                text: message.clone(),
            });
        }
        if let Some(error) = &reading.error {
            entries.push(HookEntry {
                kind: "error".to_owned(),
                text: error.clone(),
            });
        }
        let base = if let Some(stop) = &reading.stop {
            decided(HookEffect::Stop, stop.clone())
        } else {
            match &reading.decision {
                Decision::Deny { reason } => decided(HookEffect::Block, reason.clone()),
                Decision::Ask { reason } => decided(HookEffect::Ask, reason.clone()),
                Decision::Allow => match reading.tool_input.given() {
                    Some(input) => rewrite(input.clone()),
                    None => HookDecision::of(HookEffect::None),
                },
            }
        };
        HookDecision {
            status: Some(reading.status.hook_status()),
            entries: Some(entries),
            contexts: reading
                .additional_context
                .iter()
                .map(|c| crate::output::hook_context(c))
                .collect(),
            trust: Some(handler.source.as_str().to_owned()),
            ..base
        }
    }

    fn parsed_output(&self, reading: &Interpretation) -> Option<Value> {
        reading.parsed.clone()
    }

    fn notices(
        &self,
        event: GeminiEvent,
        handler: &Handler,
        reading: &Interpretation,
    ) -> Vec<UserNotice> {
        let source = self.source(event);
        let mut notices = Vec::new();
        if let Some(message) = &reading.system_message {
            notices.push(notice(&source, message.clone(), NoticeLevel::Info));
        }
        if reading.status == crate::output::RunStatus::Failed {
            notices.push(warning(
                source,
                format!(
                    "Hook(s) [{}] failed for event {}{}",
                    handler.display_name(),
                    event.as_str(),
                    reading
                        .error
                        .as_deref()
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default()
                ),
            ));
        }
        notices
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x_env_and_expansion`: the project path with a space becomes one
    /// single-quoted word; braces are left to bash.
    #[test]
    fn substituted_variables_are_shell_quoted_like_npm_shell_quote() {
        assert_eq!(shell_quote("/w/proj"), "/w/proj");
        assert_eq!(shell_quote("/w/my proj"), "'/w/my proj'");
        assert_eq!(shell_quote("it's"), "\"it's\"");
        assert_eq!(shell_quote("a$b"), "a\\$b");
        let vars = gemini_vars(Path::new("/w/my proj"), "S", Path::new("/h"));
        assert_eq!(
            expand_command(
                "cat $GEMINI_PROJECT_DIR/x \"$CLAUDE_PROJECT_DIR\" ${GEMINI_PROJECT_DIR} $GEMINI_SESSION_ID $GEMINI_CWD",
                &vars
            ),
            "cat '/w/my proj'/x \"'/w/my proj'\" ${GEMINI_PROJECT_DIR} S '/w/my proj'"
        );
        assert!(vars.contains(&(
            "GEMINI_PLANS_DIR".into(),
            "/h/.gemini/tmp/my-proj/S/plans".into()
        )));
    }
}
