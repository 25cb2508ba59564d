//! dsh's hook tooling, the `dsh hooks …` front end: what is configured
//! (`list`), whether it will load and do what the user thinks (`check`),
//! what one event would decide (`test`), what a recorded session would
//! decide under today's configuration (`replay`), the decision ledger of a
//! session (`log`), and per-hook trust (`trust`, `untrust`); plus the same
//! listing and trust actions for the interactive session's `/hooks`.
//!
//! Everything here goes through the real bridges and the real runner; the
//! only thing never run is a model or a tool.
//!
//! What it is not: it assembles no session and runs no agent loop (that is
//! dsh-core's), and it owns no hook semantics (the bridges' and the
//! runner's). The binary only parses `dsh hooks` and calls [`run`].

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

mod check;
mod common;
mod fire;
mod ledger;
mod list;
mod replay;
mod trust_cmd;

use dsh_stdio::stdio::ExitStatus;
use std::path::PathBuf;

use clap::Subcommand;

use dsh_core::{HookToolsTrust, SessionFlags, SessionSpec, TrustPolicy};

pub use common::{Format, parse_dialect};
use common::{current_dir, resolve_session};

/// `dsh hooks` subcommands.
#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Lists the effective hooks of this directory, in the order they run.
    List {
        /// Text or JSON.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Extra Claude Code settings file(s), as `dsh --settings`.
        #[arg(long = "settings", value_name = "FILE")]
        settings: Vec<PathBuf>,
    },
    /// Validates hook configuration and warns where a user would be surprised.
    Check {
        /// Files to check (Claude `settings*.json`, Codex `hooks.json` /
        /// `config.toml`); none: every file dsh would load here.
        files: Vec<PathBuf>,
        /// Text or JSON.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Extra Claude Code settings file(s) to check with the discovered ones.
        #[arg(long = "settings", value_name = "FILE")]
        settings: Vec<PathBuf>,
    },
    /// Fires one event's hooks without a model or a tool and shows the decision.
    Test {
        /// The event (`PreToolUse`, `PostToolUse`, `PostToolUseFailure`,
        /// `PermissionRequest`, `PermissionDenied`, `UserPromptSubmit`,
        /// `UserPromptExpansion`, `SessionStart`, `InstructionsLoaded`,
        /// `Stop`, `StopFailure`, `SubagentStart`, `SubagentStop`,
        /// `PreCompact`, `PostCompact`, `SessionEnd`, `Notification`).
        event: String,
        /// The tool (Claude Code names `Bash`, `Read`, `Write`, `Edit`,
        /// `Glob`, `Grep`, or dsh names).
        #[arg(long)]
        tool: Option<String>,
        /// The hook payload (JSON, `@FILE`, or `-` for stdin, as a hook gets it); its fields (`tool_input`,
        /// `prompt`, `source`, `tool_response`, …, or a dialect's own names such as Copilot's
        /// `toolArgs`) drive the firing.
        #[arg(long)]
        input: Option<String>,
        /// SubagentStart/SubagentStop: the subagent's type (payload `agent_type`).
        #[arg(long, value_name = "TYPE")]
        agent_type: Option<String>,
        /// PreCompact/PostCompact: `manual` or `auto` (payload `trigger`).
        #[arg(long, value_name = "manual|auto", value_parser = ["manual", "auto"])]
        trigger: Option<String>,
        /// StopFailure: the error category, e.g. `rate_limit` (payload `error`).
        #[arg(long, value_name = "CATEGORY")]
        error: Option<String>,
        /// UserPromptExpansion: the command's name without the slash
        /// (payload `command_name`).
        #[arg(long, value_name = "NAME")]
        command_name: Option<String>,
        /// Only this dialect's hooks: its id (`claude`, `codex`, `gemini`,
        /// … as in `hook/*` records; `dsh hooks list` shows each hook's).
        #[arg(long, value_name = "ID", value_parser = parse_dialect)]
        dialect: Option<dsh_protocol::Dialect>,
        /// Text or JSON.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Run project hooks nobody trusted yet without asking (without a
        /// terminal they are refused otherwise).
        #[arg(long)]
        trust_all: bool,
        /// The session's flags, as `dsh` takes them: hooks load as a session
        /// here would (`--settings`, `--plugin-dir`), see its
        /// `--permission-mode` and the `--mcp-config` servers' names.
        #[command(flatten, next_help_heading = "Session")]
        flags: SessionFlags,
    },
    /// Re-runs a session's recorded hook invocations against today's
    /// configuration and shows the decisions that changed.
    Replay {
        /// A session log path, or a session id (prefix) under `$DSH_HOME/sessions`.
        session: String,
        /// Text or JSON.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Re-run project hooks nobody trusted yet without asking (without
        /// a terminal they are refused otherwise, as in `dsh hooks test`).
        #[arg(long)]
        trust_all: bool,
        /// The session's flags, as `dsh` takes them: candidate settings
        /// (`--settings`, layered as in a session), `--plugin-dir`,
        /// `--permission-mode` as hooks see it.
        #[command(flatten, next_help_heading = "Session")]
        flags: SessionFlags,
    },
    /// The decision ledger of a session: every hook result and what followed.
    Log {
        /// A session log path or id; default: the newest session of this directory.
        session: Option<String>,
        /// Only decisions that denied, blocked, asked or stopped.
        #[arg(long)]
        denied: bool,
        /// Only this event.
        #[arg(long)]
        event: Option<String>,
        /// Text or JSON.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Trusts this project's hooks (all untrusted ones, or those whose
    /// origin, command or hash contains a SELECTOR).
    Trust {
        /// Substrings of an origin, command or hash.
        selectors: Vec<String>,
        /// Extra Claude Code settings file(s), as `dsh --settings`.
        #[arg(long = "settings", value_name = "FILE")]
        settings: Vec<PathBuf>,
    },
    /// Forgets trust for this project's hooks (all, or those matching a SELECTOR).
    Untrust {
        /// Substrings of an origin, command or hash.
        selectors: Vec<String>,
        /// Extra Claude Code settings file(s), as `dsh --settings`.
        #[arg(long = "settings", value_name = "FILE")]
        settings: Vec<PathBuf>,
    },
}

/// Runs a `dsh hooks` subcommand.
pub fn run(command: HooksCommand) -> anyhow::Result<ExitStatus> {
    match command {
        HooksCommand::List { format, settings } => list::run(&workspace(&settings)?, format),
        HooksCommand::Check {
            files,
            format,
            settings,
        } => check::run(&workspace(&settings)?, &files, format),
        HooksCommand::Test {
            event,
            tool,
            input,
            agent_type,
            trigger,
            error,
            command_name,
            dialect,
            format,
            trust_all,
            flags,
        } => {
            let fields = [
                ("agent_type", agent_type),
                ("trigger", trigger),
                ("error", error),
                ("command_name", command_name),
            ]
            .into_iter()
            .filter_map(|(key, value)| value.map(|value| (key, value)))
            .collect();
            fire::run_test(
                || test_spec(flags, trust_all),
                fire::TestArgs {
                    event,
                    tool,
                    input,
                    dialect,
                    format,
                    fields,
                },
            )
        }
        HooksCommand::Replay {
            session,
            format,
            trust_all,
            flags,
        } => {
            // A session that is not there is the first thing to say, before
            // any question about trusting hooks.
            let path = resolve_session(&session)?;
            replay::run(test_spec(flags, trust_all)?, &path, format)
        }
        HooksCommand::Log {
            session,
            denied,
            event,
            format,
        } => ledger::run(session.as_deref(), denied, event.as_deref(), format),
        HooksCommand::Trust {
            selectors,
            settings,
        } => trust_cmd::trust(&workspace(&settings)?, &selectors),
        HooksCommand::Untrust {
            selectors,
            settings,
        } => trust_cmd::untrust(&workspace(&settings)?, &selectors),
    }
}

/// For the interactive session's `/hooks` and `/permissions`:
/// the same listing and trust actions as `dsh hooks …`, for the session's
/// workspace ([`dsh_core::Workspace::of_session`]).
pub mod session {
    use super::{Format, list, trust_cmd};
    use dsh_core::Workspace;

    /// `/hooks`: `dsh hooks list`.
    pub fn list(workspace: &Workspace) -> anyhow::Result<()> {
        list::run(workspace, Format::Text).map(drop)
    }

    /// `/hooks trust [SELECTOR…]`.
    pub fn trust(workspace: &Workspace, selectors: &[String]) -> anyhow::Result<()> {
        trust_cmd::trust(workspace, selectors).map(drop)
    }

    /// `/hooks untrust [SELECTOR…]`.
    pub fn untrust(workspace: &Workspace, selectors: &[String]) -> anyhow::Result<()> {
        trust_cmd::untrust(workspace, selectors).map(drop)
    }

    /// `/permissions`: the rules and where they come from.
    pub fn permissions(workspace: &Workspace) -> anyhow::Result<String> {
        list::permissions_text(workspace)
    }
}

/// `dsh hooks test` and `dsh hooks replay` fire hooks as a session would,
/// so their session is resolved by dsh-core like every other front end's
/// (and assembled by [`fire::Hooks::assemble`]). The resolution applies
/// the same trust rules as a session, on the parse that runs: on a
/// terminal it asks about untrusted project hooks (a "no" leaves them
/// out); without one it refuses them unless `--trust-all`.
fn test_spec(mut flags: SessionFlags, trust_all: bool) -> anyhow::Result<SessionSpec> {
    use std::io::IsTerminal as _;
    let cwd = current_dir()?;
    let env = dsh_core::Env::from_process();
    let dsh_home = env.dsh_home_or_default();
    // The configuration only names the provider's key variable to scrub
    // from hook environments; one dsh cannot read scrubs the defaults.
    let config = dsh_core::DshConfig::load(&dsh_home)
        .unwrap_or_else(|_| dsh_core::DshConfig::empty(&dsh_home));
    flags.settings = flags.absolute_settings(&cwd);
    let trust = if trust_all {
        HookToolsTrust::TrustAll
    } else if std::io::stdin().is_terminal() {
        HookToolsTrust::Ask
    } else {
        HookToolsTrust::Refuse
    };
    Ok(SessionSpec::resolve(dsh_core::Inputs {
        env: &env,
        config: &config,
        flags: &flags,
        cwd: &cwd,
        // Hooks see `--permission-mode` only when it is given; MCP tool
        // events carry their server's tag, and no server starts.
        policy: TrustPolicy::HookTools(trust),
    })?)
}

/// The workspace of this directory, resolved by dsh-core as every
/// command that reads configuration resolves it.
fn workspace(settings: &[PathBuf]) -> anyhow::Result<dsh_core::Workspace> {
    let cwd = current_dir()?;
    let env = dsh_core::Env::from_process();
    Ok(dsh_core::Workspace::resolve(dsh_core::WorkspaceInputs {
        env: &env,
        cwd: &cwd,
        settings,
        mcp_config: &[],
    }))
}

#[cfg(test)]
mod tests {
    use dsh_hooks::lint::nearest;

    #[test]
    fn nearest_suggests_close_event_names_only() {
        let events = ["PreToolUse", "PostToolUse", "Stop"];
        assert_eq!(nearest("PreToolUs", events), Some("PreToolUse"));
        assert_eq!(nearest("pretooluse", events), Some("PreToolUse"));
        assert_eq!(nearest("Completely", events), None);
        assert_eq!(nearest("Stp", events), Some("Stop"));
    }
}
