//! The interactive approval prompt: what the person at the terminal sees
//! when a call needs approval, and what each answer does.
//!
//! The question shows the tool, its arguments (compact), who asked (a rule
//! with its source, the permission mode, or a hook) and the reason, then
//! offers, with Claude Code's keys:
//!
//! - `1` / `y`: allow once;
//! - `2` / `a`: allow for this session — a session rule for this tool and
//!   pattern, so the next matching call does not ask;
//! - `3` / `A`: always allow — the same rule written to the project's
//!   `.claude/settings.local.json` (as Claude Code does) and kept for the
//!   session;
//! - `4` / `n`: deny, then one line of reason that the model gets in the
//!   tool result;
//! - Esc (then Enter) or Ctrl-C: cancel (the call is denied as cancelled).
//!
//! A rule can only silence a question the permission mode raised: an `ask`
//! rule or a hook asks again whatever allow rules say, so for those the
//! prompt offers allow once / deny only. The `permission_prompt`
//! Notification fires before this (the tool registry does it).

use std::path::PathBuf;
use std::sync::{Arc, PoisonError};

use async_trait::async_trait;
use dsh_permissions::{Behavior, Decider, Mode, PermissionsPlugin, Trust, Verdict};
use dsh_seams::{ApprovalResponse, ToolExecution};
use dsh_tools::ApprovalService;

use crate::input::{Input, SharedInput, TurnSlot, next_input};
use crate::terminal::{Terminal, Tone, summarize_arguments, truncate};
use crate::tui::diff;
use dsh_tools::change::FileChange;

/// Longest argument text shown on the question's line.
const ARGUMENTS_WIDTH: usize = 300;

/// Who wanted a call approved.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Asker {
    /// A permission rule (an `ask` rule).
    Rule {
        /// The rule as written.
        rule: String,
        /// Its layer (`localSettings`, `cliArg`, …).
        source: &'static str,
        /// Its file or flag.
        origin: String,
    },
    /// The permission mode's own policy.
    Mode(Mode),
    /// Not the permission model: a hook (`PreToolUse` answering `ask`).
    Hook,
}

impl Asker {
    /// Who asked, from the permission model's verdict for the same call:
    /// when the rules and mode would not ask, or the question carries
    /// another reason than theirs (a PreToolUse hook's `ask` reason comes
    /// first), a hook did.
    fn of(
        permissions: Option<&PermissionsPlugin>,
        exec: &ToolExecution,
        reason: Option<&str>,
    ) -> Asker {
        let Some(permissions) = permissions else {
            return Asker::Hook;
        };
        match permissions.verdict(&exec.tool, &exec.arguments) {
            Verdict::Ask {
                reason: own_reason, ..
            } if reason != Some(own_reason.as_str()) => Asker::Hook,
            Verdict::Ask { decider, .. } => match decider {
                Decider::Rule {
                    rule,
                    source,
                    origin,
                    ..
                } => Asker::Rule {
                    rule,
                    source: source.name(),
                    origin,
                },
                Decider::Mode(mode) => Asker::Mode(mode),
                Decider::ReadOnly => Asker::Hook,
            },
            Verdict::Allow(_) | Verdict::Deny { .. } => Asker::Hook,
        }
    }

    fn describe(&self) -> String {
        match self {
            Asker::Rule {
                rule,
                source,
                origin,
            } => format!("asked by: rule {rule} ({source}, {origin})"),
            Asker::Mode(mode) => format!("asked by: permission mode {mode}"),
            Asker::Hook => "asked by: a hook".to_owned(),
        }
    }

    /// Whether an allow rule would keep this question from coming back.
    fn can_remember(&self) -> bool {
        match self {
            Asker::Mode(_) => true,
            Asker::Rule { .. } | Asker::Hook => false,
        }
    }
}

/// What the person picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    AllowOnce,
    AllowSession,
    AlwaysAllow,
    Deny,
    Cancel,
}

/// Reads one answer; `None` for anything that is not an offered choice.
/// `remember` says whether options 2 and 3 are on offer.
fn parse_choice(answer: &str, remember: bool) -> Option<Choice> {
    if answer.starts_with('\u{1b}') {
        return Some(Choice::Cancel);
    }
    let choice = match answer.trim() {
        "1" | "y" | "Y" | "yes" => Choice::AllowOnce,
        "2" | "a" => Choice::AllowSession,
        "3" | "A" => Choice::AlwaysAllow,
        "4" | "n" | "N" | "no" => Choice::Deny,
        _ => return None,
    };
    match choice {
        Choice::AllowSession | Choice::AlwaysAllow if !remember => None,
        Choice::AllowOnce
        | Choice::AllowSession
        | Choice::AlwaysAllow
        | Choice::Deny
        | Choice::Cancel => Some(choice),
    }
}

use dsh_permissions::always::rule_for_call;

/// The question's lines, before the choice prompt.
fn question_lines(
    exec: &ToolExecution,
    reason: Option<&str>,
    asker: &Asker,
    remember: Option<&str>,
    cwd: &std::path::Path,
) -> Vec<(Tone, String)> {
    let arguments =
        serde_json::to_string(&*exec.arguments).unwrap_or_else(|_| exec.arguments.to_string());
    let mut lines = vec![
        (
            Tone::Warn,
            format!(
                "? {} {} needs your approval",
                exec.tool,
                summarize_arguments(&exec.tool, &exec.arguments)
            ),
        ),
        (Tone::Warn, format!("  {}", asker.describe())),
    ];
    if let Some(reason) = reason {
        lines.push((Tone::Warn, format!("  reason: {reason}")));
    }
    // A `write`/`edit`: the change it would make, as a diff; anything
    // else: its arguments.
    match FileChange::proposed(cwd, &exec.tool, &exec.arguments) {
        Some(change) => {
            lines.push((
                Tone::Plain,
                format!(
                    "  {}: {}",
                    diff::shown_path(&change, cwd),
                    if change.created() {
                        "a new file".to_owned()
                    } else {
                        diff::counts_text(&change)
                    }
                ),
            ));
            lines.extend(diff::lines(&change, "    "));
        }
        None => lines.push((
            Tone::Dim,
            format!("  arguments: {}", truncate(&arguments, ARGUMENTS_WIDTH)),
        )),
    }
    lines.push((Tone::Plain, "  1 (y) allow once".to_owned()));
    if let Some(rule) = remember {
        lines.push((
            Tone::Plain,
            format!("  2 (a) allow for this session: {rule}"),
        ));
        lines.push((
            Tone::Plain,
            format!("  3 (A) always allow: {rule} in .claude/settings.local.json"),
        ));
    }
    lines.push((
        Tone::Plain,
        "  4 (n) deny, and tell the model why".to_owned(),
    ));
    lines.push((Tone::Dim, "  Esc or Ctrl-C cancels".to_owned()));
    lines
}

/// Asks the person at the terminal.
pub(crate) struct TerminalApproval {
    /// Where the question is shown.
    pub term: Arc<Terminal>,
    /// The session's input (the question takes the next lines).
    pub input: SharedInput,
    /// Gives the question the input over the steering reader (`steer.rs`).
    pub gate: Arc<crate::steer::InputGate>,
    /// The running turn's token: Ctrl-C cancels the question with the turn.
    pub turn: TurnSlot,
    /// The session's permission stage: who asked, and where session rules go.
    pub permissions: Option<Arc<PermissionsPlugin>>,
    /// The project, whose `.claude/settings.local.json` "always allow" writes.
    pub project: PathBuf,
    /// Whether later sessions here will apply that file's allow rules.
    pub workspace: dsh_core::perms::WorkspaceTrust,
}

/// One line from the person, or why there is none.
pub(crate) enum Read {
    Line(String),
    Cancelled,
}

impl TerminalApproval {
    pub(crate) async fn read(&self, prompt: &str) -> Read {
        let token = self
            .turn
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or_default();
        self.term.prompt(prompt);
        let _asking = self.gate.ask();
        let answer = tokio::select! {
            answer = next_input(&self.input) => answer,
            () = token.cancelled() => {
                self.term.lines(Tone::Warn, "  approval cancelled");
                return Read::Cancelled;
            }
        };
        match answer {
            Input::Line(line) => Read::Line(line),
            Input::Eof => {
                self.term
                    .lines(Tone::Warn, "  approval cancelled (end of input)");
                Read::Cancelled
            }
            Input::Stopped => Read::Cancelled,
        }
    }

    /// Adds `rule` as a session allow rule; false (and a warning) when the
    /// session has no permission stage.
    fn allow_for_session(&self, rule: &str) -> bool {
        match &self.permissions {
            Some(permissions) if dsh_permissions::always::allow_for_session(permissions, rule) => {
                true
            }
            Some(_) | None => {
                self.term.lines(
                    Tone::Warn,
                    &format!("  cannot add {rule} for this session; allowed once"),
                );
                false
            }
        }
    }
}

#[async_trait]
impl ApprovalService for TerminalApproval {
    async fn elicit(
        &self,
        request: &dsh_seams::ElicitationRequest,
    ) -> dsh_seams::ElicitationAnswer {
        self.elicit_here(request).await
    }

    async fn ask_questions(
        &self,
        questions: &[dsh_tools::builtin::interaction::Question],
    ) -> Option<std::collections::BTreeMap<String, String>> {
        self.ask_here(questions).await
    }

    async fn request(&self, exec: &ToolExecution, reason: Option<&str>) -> ApprovalResponse {
        let asker = Asker::of(self.permissions.as_deref(), exec, reason);
        let remember = asker
            .can_remember()
            .then(|| rule_for_call(&exec.tool, &exec.arguments, &self.project))
            .flatten();
        for (tone, line) in question_lines(exec, reason, &asker, remember.as_deref(), &self.project)
        {
            self.term.lines(tone, &line);
        }
        let choices = if remember.is_some() { "1-4" } else { "1/4" };
        let choice = loop {
            let line = match self.read(&format!("  choice [{choices}]: ")).await {
                Read::Line(line) => line,
                Read::Cancelled => return ApprovalResponse::Cancelled,
            };
            match parse_choice(&line, remember.is_some()) {
                Some(choice) => break choice,
                None => self.term.lines(
                    Tone::Dim,
                    if remember.is_some() {
                        "  answer 1, 2, 3 or 4 (y, a, A, n); Esc cancels"
                    } else {
                        "  answer 1 or 4 (y, n); Esc cancels"
                    },
                ),
            }
        };
        match (choice, remember) {
            (Choice::AllowOnce, _) => {
                self.term.lines(Tone::Good, "  allowed once");
                ApprovalResponse::AllowedOnce
            }
            (Choice::AllowSession, Some(rule)) => {
                if self.allow_for_session(&rule) {
                    self.term
                        .lines(Tone::Good, &format!("  allowed for this session: {rule}"));
                }
                ApprovalResponse::AllowedOnce
            }
            (Choice::AlwaysAllow, Some(rule)) => {
                match dsh_permissions::store::persist_local_rule(
                    &self.project,
                    &rule,
                    Behavior::Allow,
                ) {
                    Ok(path) => {
                        self.term.lines(
                            Tone::Good,
                            &format!("  always allowed: {rule} (saved to {})", path.display()),
                        );
                        match self.workspace.trust() {
                            Trust::Trusted => {}
                            // Project allow rules are dropped in an
                            // untrusted workspace: say so now, not later.
                            Trust::Untrusted => self.term.lines(
                                Tone::Warn,
                                "  this workspace is not trusted: later sessions drop project allow rules until `dsh hooks trust`",
                            ),
                        }
                    }
                    Err(error) => self.term.lines(
                        Tone::Bad,
                        &format!("  cannot save {rule}: {error}; allowed for this session"),
                    ),
                }
                self.allow_for_session(&rule);
                ApprovalResponse::AllowedOnce
            }
            // parse_choice never offers 2 or 3 without a rule.
            (Choice::AllowSession | Choice::AlwaysAllow, None) => ApprovalResponse::AllowedOnce,
            (Choice::Deny, _) => {
                let reason = match self.read("  reason for the model (Enter for none): ").await {
                    Read::Line(line) => line.trim().to_owned(),
                    Read::Cancelled => return ApprovalResponse::Cancelled,
                };
                self.term.lines(Tone::Bad, "  denied");
                if reason.is_empty() {
                    ApprovalResponse::Rejected
                } else {
                    ApprovalResponse::RejectedWithReason { reason }
                }
            }
            (Choice::Cancel, _) => {
                self.term.lines(Tone::Warn, "  approval cancelled");
                ApprovalResponse::Cancelled
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_permissions::{PathContext, Permissions, PromptSurface, Rule};
    use serde_json::{Value, json};
    use std::path::Path;

    fn exec(tool: &str, arguments: Value) -> ToolExecution {
        ToolExecution {
            execution_id: "e1".into(),
            call_id: "c1".into(),
            tool: tool.into(),
            arguments: Arc::new(arguments),
            original_arguments: None,
            rewritten_by: None,
            parent_execution_id: None,
            origin: None,
        }
    }

    #[test]
    fn keys_follow_claude_code_and_unoffered_choices_are_refused() {
        assert_eq!(parse_choice("1", true), Some(Choice::AllowOnce));
        assert_eq!(parse_choice(" y ", false), Some(Choice::AllowOnce));
        assert_eq!(parse_choice("a", true), Some(Choice::AllowSession));
        assert_eq!(parse_choice("A", true), Some(Choice::AlwaysAllow));
        assert_eq!(parse_choice("3", true), Some(Choice::AlwaysAllow));
        assert_eq!(parse_choice("n", true), Some(Choice::Deny));
        assert_eq!(parse_choice("4", false), Some(Choice::Deny));
        assert_eq!(parse_choice("\u{1b}", true), Some(Choice::Cancel));
        assert_eq!(parse_choice("2", false), None);
        assert_eq!(parse_choice("A", false), None);
        assert_eq!(parse_choice("", true), None);
        assert_eq!(parse_choice("maybe", true), None);
    }

    #[test]
    fn rules_for_calls_name_the_pattern_and_parse() {
        let project = Path::new("/proj");
        let rule = |tool: &str, args: Value| rule_for_call(tool, &args, project);
        assert_eq!(
            rule("bash", json!({"command": "touch a.txt"})).as_deref(),
            Some("Bash(touch:*)")
        );
        assert_eq!(
            rule("bash", json!({"command": "make && rm -rf out"})).as_deref(),
            Some("Bash(make && rm -rf out)")
        );
        assert_eq!(rule("bash", json!({"command": "rm *.o"})), None);
        assert_eq!(rule("bash", json!({"command": "  "})), None);
        assert_eq!(
            rule("write", json!({"file_path": "src/a.rs"})).as_deref(),
            Some("Edit(./src/a.rs)")
        );
        assert_eq!(
            rule("edit", json!({"file_path": "/etc/hosts"})).as_deref(),
            Some("Edit(//etc/hosts)")
        );
        assert_eq!(
            rule("read", json!({"file_path": "../other/x"})).as_deref(),
            Some("Read(//other/x)")
        );
        assert_eq!(rule("write", json!({"file_path": "a[1].txt"})), None);
        assert_eq!(
            rule("mcp__srv__tool", json!({})).as_deref(),
            Some("mcp__srv__tool")
        );
        // Each suggested rule matches the call it was made for.
        let ctx = PathContext {
            cwd: project.to_owned(),
            home: None,
            base: None,
        };
        for (tool, args) in [
            ("bash", json!({"command": "touch a.txt"})),
            ("write", json!({"file_path": "src/a.rs"})),
            ("edit", json!({"file_path": "/etc/hosts"})),
        ] {
            let text = rule_for_call(tool, &args, project).unwrap();
            let parsed = Rule::parse(&text).unwrap();
            assert!(
                parsed.matches_for(
                    Behavior::Allow,
                    dsh_permissions::plugin::rule_tool_name(tool),
                    &args,
                    &ctx
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn a_remembered_path_rule_names_where_a_link_points() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let project = root.join("proj");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::write(root.join("outside"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("outside"), project.join("out")).unwrap();
        let args = json!({"file_path": "out"});
        let text = rule_for_call("write", &args, &project).unwrap();
        assert_eq!(text, format!("Edit(/{})", root.join("outside").display()));
        let ctx = PathContext {
            cwd: project.clone(),
            home: None,
            base: None,
        };
        let parsed = Rule::parse(&text).unwrap();
        assert!(parsed.matches_for(Behavior::Allow, "Write", &args, &ctx));
        // Inside the project nothing changes.
        assert_eq!(
            rule_for_call("write", &json!({"file_path": "src/new.rs"}), &project).as_deref(),
            Some("Edit(./src/new.rs)")
        );
    }

    #[test]
    fn the_asker_is_the_rule_the_mode_or_a_hook() {
        let ctx = PathContext {
            cwd: PathBuf::from("/proj"),
            home: None,
            base: None,
        };
        let mut permissions = Permissions::new(Mode::Default, ctx);
        permissions.add_session_rule(Rule::parse("Bash(echo:*)").unwrap(), Behavior::Ask);
        let plugin = PermissionsPlugin::new(permissions, PromptSurface::Headless);
        // The reason the permission model gives for a call.
        let own = |call: &ToolExecution| match plugin.verdict(&call.tool, &call.arguments) {
            Verdict::Ask { reason, .. } => reason,
            other => panic!("expected an ask, got {other:?}"),
        };
        let touch = exec("bash", json!({"command": "touch a"}));
        let touch_reason = own(&touch);
        let asker = Asker::of(Some(&plugin), &touch, Some(&touch_reason));
        assert_eq!(asker, Asker::Mode(Mode::Default));
        assert!(asker.can_remember());
        // A hook's reason came first: the hook asked.
        assert_eq!(
            Asker::of(Some(&plugin), &touch, Some("a hook wants a person")),
            Asker::Hook
        );
        let echo = exec("bash", json!({"command": "echo hi"}));
        let asker = Asker::of(Some(&plugin), &echo, Some(&own(&echo)));
        assert_eq!(
            asker,
            Asker::Rule {
                rule: "Bash(echo:*)".into(),
                source: "session",
                origin: "session".into()
            }
        );
        assert!(!asker.can_remember());
        // `ls` runs by the rules: only a hook can have asked.
        let ls = exec("bash", json!({"command": "ls"}));
        assert_eq!(Asker::of(Some(&plugin), &ls, Some("x")), Asker::Hook);
        assert_eq!(Asker::of(None, &touch, Some(&touch_reason)), Asker::Hook);

        let lines = question_lines(
            &echo,
            Some("why not"),
            &asker,
            rule_for_call("bash", &echo.arguments, Path::new("/proj")).as_deref(),
            Path::new("/proj"),
        );
        let text: Vec<&str> = lines.iter().map(|(_, line)| line.as_str()).collect();
        assert_eq!(text[0], "? bash $ echo hi needs your approval");
        assert_eq!(text[1], "  asked by: rule Bash(echo:*) (session, session)");
        assert_eq!(text[2], "  reason: why not");
        assert_eq!(text[3], r#"  arguments: {"command":"echo hi"}"#);
        assert!(text.contains(&"  2 (a) allow for this session: Bash(echo:*)"));
    }
}
