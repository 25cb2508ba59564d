//! The slash commands that only read the session (`/help`, `/status`,
//! `/hooks`, `/permissions`, `/model`, `/resume ID`, `/last`, `/exit`); the
//! prompt loop runs those that act on it.

use crate::restart::{Next, resume};
use crate::terminal::{Terminal, Tone};
use crate::tui::slash::{self, HooksAction, SlashCommand};
use crate::tui::status::StatusInfo;
use dsh_core::Workspace;

/// The hook tooling behind `/hooks` and `/permissions` (`dsh hooks list`,
/// `trust`, `untrust` and the permission rules), for the session's
/// workspace as core resolves it ([`Workspace::of_session`]).
#[derive(Debug, Clone, Copy)]
pub struct HookActions {
    /// `/hooks`: prints the hook listing.
    pub list: fn(&Workspace) -> anyhow::Result<()>,
    /// `/hooks trust [SELECTOR…]`.
    pub trust: fn(&Workspace, &[String]) -> anyhow::Result<()>,
    /// `/hooks untrust [SELECTOR…]`.
    pub untrust: fn(&Workspace, &[String]) -> anyhow::Result<()>,
    /// `/permissions`: the rules and where they come from.
    pub permissions: fn(&Workspace) -> anyhow::Result<String>,
}

/// What a slash command can see.
pub(crate) struct SlashContext<'a> {
    pub term: &'a Terminal,
    pub status: &'a StatusInfo,
    /// What the session resolved (its hook sources carry plugins and MCP tags).
    pub spec: &'a dsh_core::SessionSpec,
    /// Bound on model requests per turn.
    pub max_steps: u64,
    pub cwd: &'a std::path::Path,
    pub log_path: Option<&'a std::path::Path>,
    /// The hook tooling `/hooks` and `/permissions` run.
    pub hooks: HookActions,
}

/// Runs a slash command; `Some` when it ends this session.
pub(crate) fn run_slash(
    context: &SlashContext<'_>,
    command: SlashCommand,
) -> anyhow::Result<Option<Next>> {
    let term = context.term;
    // Read afresh each time: `/hooks` after an edit shows the edit.
    let sources = || Workspace::of_session(context.spec);
    match command {
        SlashCommand::Help => term.lines(Tone::Plain, &slash::help()),
        SlashCommand::Exit => return Ok(Some(Next::Exit)),
        SlashCommand::Status => {
            let mut text = format!("{}\n", context.status.line());
            if let Some(cache) = context.status.cache_line() {
                text.push_str(&cache);
                text.push('\n');
            }
            text.push_str(&format!("session {}\n", context.status.session_id));
            text.push_str(&format!("directory {}\n", context.cwd.display()));
            if let Some(path) = context.log_path {
                text.push_str(&format!("log {}\n", path.display()));
            }
            text.push_str(&format!(
                "steps per turn: {}\n",
                match context.max_steps {
                    u64::MAX => "no bound (Ctrl-C interrupts)".to_owned(),
                    bound => bound.to_string(),
                }
            ));
            // What `dsh status` shows for this session.
            text.push_str(dsh_core::Status::of(context.spec)?.text().trim_end());
            term.lines(Tone::Plain, &text);
        }
        SlashCommand::Hooks(HooksAction::List) => (context.hooks.list)(&sources())?,
        SlashCommand::Hooks(HooksAction::Trust(selectors)) => {
            (context.hooks.trust)(&sources(), &selectors)?;
            term.lines(Tone::Dim, "(trust applies from the next session on)");
        }
        SlashCommand::Hooks(HooksAction::Untrust(selectors)) => {
            (context.hooks.untrust)(&sources(), &selectors)?;
            term.lines(Tone::Dim, "(trust applies from the next session on)");
        }
        SlashCommand::Permissions => {
            let rules = (context.hooks.permissions)(&sources())?;
            term.lines(
                Tone::Plain,
                &format!(
                    "this session: {} mode{}",
                    context.status.mode,
                    rules.trim_end().replacen("\nPermissions", "", 1)
                ),
            );
        }
        SlashCommand::Model(None) => term.lines(
            Tone::Plain,
            &format!(
                "model {} (/model NAME reopens this session with another model)",
                context.status.model
            ),
        ),
        // The session loop hands these to the agent before `run_slash`.
        SlashCommand::Model(Some(_))
        | SlashCommand::Clear
        | SlashCommand::Compact(_)
        | SlashCommand::Mcp
        | SlashCommand::Cost
        | SlashCommand::Verbose
        | SlashCommand::Mode(_)
        | SlashCommand::AddDir(_)
        | SlashCommand::Resume(None) => {}
        SlashCommand::Resume(Some(id)) => return Ok(Some(resume(id))),
        SlashCommand::Last => match term.last_detail() {
            Some(detail) => term.lines(Tone::Plain, &detail),
            None => term.lines(
                Tone::Dim,
                "nothing yet: no hook has blocked, asked or failed",
            ),
        },
    }
    Ok(None)
}
