//! The `dsh` command line: interactive and headless sessions, fixture
//! replay, session-log rendering and hook tooling.
//!
//! This is glue: argument types, wiring and rendering. Domain logic lives in
//! the library crates.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

#[cfg(test)]
mod cli_reference;
mod headless;
mod install;
mod mcp_cmd;
mod output;
mod replay;
mod sessions;
mod wiring;

use std::path::PathBuf;

// The interactive terminal, `dsh log` and `dsh status` are dsh-tui's.
use dsh_tui::{interactive, log_view, status_cmd, steer};

// Output, exit statuses and signals are shared with the front-end crates.
use dsh_stdio::stdio::error_chain;
pub(crate) use dsh_stdio::{signals, stdio};

// `dsh hooks …` is its own crate; the old path stays for the interactive `/hooks`.
use dsh_hooktools as hooks_cmd;
use std::process::ExitCode;

use dsh_provider::key_handoff::StartupKeys;

use clap::{Parser, Subcommand};

/// dsh: an agent harness whose hook system is the product.
#[derive(Debug, Parser)]
#[command(
    name = "dsh",
    version,
    about,
    long_about = LONG_ABOUT,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// The prompt: with `-p`, the turn to run (none or `-`: read standard
    /// input); without, the interactive terminal's first prompt.
    #[arg(value_name = "PROMPT")]
    prompt: Option<String>,
    /// Claude Code's print mode: `-p`, `--output-format`, `--verbose`, ….
    #[command(flatten)]
    print: dsh_print::PrintFlags,
    /// With `-p`: answer a hook's `ask` with "allow once" instead of denying the call.
    #[arg(long, requires = "print")]
    allow_ask: bool,
    /// With `-p`: refuse untrusted project hooks instead of naming them on
    /// stderr (also `DSH_STRICT_HOOKS=1`); `dsh hooks trust` trusts them.
    #[arg(long)]
    strict_hooks: bool,
    /// Reopen the session with this id (or unambiguous id prefix); see
    /// `dsh sessions`. Without an id, the terminal lists this directory's
    /// sessions to pick from.
    #[arg(
        short = 'r',
        long,
        value_name = "ID",
        num_args = 0..=1,
        conflicts_with = "continue_session"
    )]
    resume: Option<Option<String>>,
    /// Reopen the newest session started in the current directory.
    #[arg(short = 'c', long = "continue")]
    continue_session: bool,
    /// When another dsh is writing the session, wait for it to finish
    /// instead of failing.
    #[arg(long)]
    wait: bool,
    /// Colour in the interactive session.
    #[arg(long, value_enum, default_value_t = log_view::ColorChoice::Auto)]
    color: log_view::ColorChoice,
    /// The session: settings, plugins, MCP configuration, model, permissions.
    #[command(flatten)]
    session: dsh_core::SessionFlags,
    /// Interactive: lines typed while a turn runs go to that turn before its next
    /// model request, all at once or one per request (default: `[queue] mode` of
    /// config.toml, else `all`).
    #[arg(long, value_enum, value_name = "MODE")]
    queue_mode: Option<steer::QueueModeFlag>,
    /// The Claude Agent SDK's stream-json input and control protocol.
    #[command(flatten)]
    sdk: dsh_sdk::SdkFlags,
}

/// The manual's DESCRIPTION and `dsh --help`'s opening.
const LONG_ABOUT: &str = "dsh: an agent harness whose hook system is the product.

dsh runs a coding agent on any model (DeepSeek, Anthropic, OpenAI or any \
OpenAI-compatible endpoint) and runs the hooks you wrote for Claude Code, \
Codex and Gemini CLI unchanged: it reads their settings files, sends each \
hook the payload its own tool sends, and honours its answers. Without a \
subcommand dsh opens the interactive terminal; with -p it runs one turn \
headless, as `claude -p`. Project hooks, permission rules, settings env and \
MCP servers run only once you trust the project (one question, or \
`dsh hooks trust`).";

#[derive(Debug, Subcommand)]
enum Command {
    /// Runs a fixture transcript offline through the real loop, tools and hooks.
    Replay {
        /// The fixture (JSON, see the README).
        fixture: PathBuf,
        /// Write the session log here instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write one JSON object per model request here.
        #[arg(long)]
        requests_out: Option<PathBuf>,
        /// Use this session id (reproducible snapshots).
        #[arg(long)]
        session_id: Option<String>,
        /// The session (without `--permission-mode`, replay runs `bypassPermissions`).
        #[command(flatten)]
        session: dsh_core::SessionFlags,
    },
    /// Lists stored sessions, newest first; `dsh sessions rm ID` deletes one.
    Sessions {
        /// One JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
        #[command(subcommand)]
        command: Option<sessions::SessionsCommand>,
    },
    /// Hook tooling: list, check, test, replay, log, trust, untrust.
    Hooks {
        #[command(subcommand)]
        command: hooks_cmd::HooksCommand,
    },
    /// Serves the Agent Client Protocol on stdin/stdout (for editors such as Zed).
    Acp {
        /// The sessions: settings, plugins, MCP configuration, model, permissions.
        #[command(flatten)]
        session: dsh_core::SessionFlags,
    },
    /// Shows what a session here would load: hooks and their trust, permission
    /// mode and rules, MCP servers and their consent, plugins, instruction
    /// files, compaction, provider and model (never the API key).
    Status {
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// The session flags, as a session would get them.
        #[command(flatten)]
        session: dsh_core::SessionFlags,
    },
    /// MCP servers: `dsh mcp list`.
    Mcp {
        #[command(subcommand)]
        command: mcp_cmd::McpCommand,
    },
    /// Renders a session log for people.
    Log {
        /// The session log (JSONL), or a session id or unambiguous id prefix.
        #[arg(value_name = "FILE|ID")]
        file: PathBuf,
        /// Force colour on or off.
        #[arg(long, value_enum, default_value_t = log_view::ColorChoice::Auto)]
        color: log_view::ColorChoice,
    },
    /// Prints a shell completion script: `dsh completions bash > …` (see the install guide).
    Completions {
        /// The shell the script is for.
        #[arg(value_enum)]
        shell: install::Shell,
    },
    /// Prints dsh's manual page (roff): `dsh man | man -l -`; `dsh man hooks`
    /// prints dsh-hooks(1); `--out-dir DIR` writes every page.
    Man {
        /// The subcommand whose page to print (`hooks list`: dsh-hooks-list(1)).
        #[arg(value_name = "SUBCOMMAND")]
        path: Vec<String>,
        /// Write every page (dsh.1, dsh-hooks.1, …) into this directory instead.
        #[arg(long, value_name = "DIR", conflicts_with = "path")]
        out_dir: Option<PathBuf>,
    },
    /// Codex's `exec`: one turn without a person, with `--json` events in
    /// Codex's shapes (for `codex exec --json` scripts and the Codex SDK).
    Exec(dsh_exec::ExecArgs),
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("DSH_LOG")
                // The ACP library warns about every error response it
                // sends; the client already has the error, so by default
                // only its errors reach stderr.
                .unwrap_or_else(|_| {
                    tracing_subscriber::EnvFilter::new("warn,agent_client_protocol=error")
                }),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a person at a terminal, never into a pipe or file.
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty()),
        )
        .init();
    // Provider keys leave dsh's own environment block: re-executes once
    // with them passed over a pipe (`/proc/<pid>/environ` is readable by
    // every hook and tool command).
    match dsh_provider::key_handoff::keep_keys_out_of_environment() {
        StartupKeys::Ready => {}
        StartupKeys::KeptInEnvironment(warning) => tracing::warn!("{warning}"),
        // Never run keyless after the keys were taken out of the environment.
        StartupKeys::Lost(problem) => {
            stdio::errln!("dsh: error: {problem}");
            return ExitCode::from(stdio::ExitStatus::Error);
        }
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Replay {
            fixture,
            out,
            requests_out,
            session_id,
            session,
        }) => replay::run(replay::ReplayArgs {
            fixture,
            out,
            requests_out,
            session_id,
            session,
        }),
        Some(Command::Acp { session }) => dsh_acp::run(dsh_acp::AcpArgs { session }),
        Some(Command::Status { json, session }) => status_cmd::run(&session, json),
        Some(Command::Log { file, color }) => {
            sessions::log_file(&file).and_then(|file| log_view::run(&file, color))
        }
        Some(Command::Hooks { command }) => hooks_cmd::run(command),
        Some(Command::Sessions { json, command }) => match command {
            None => sessions::run_list(json),
            Some(sessions::SessionsCommand::Rm { ids }) => sessions::run_rm(&ids),
        },
        Some(Command::Mcp { command }) => mcp_cmd::run(command),
        Some(Command::Completions { shell }) => install::completions::<Cli>(shell),
        Some(Command::Man { path, out_dir }) => install::man::<Cli>(&path, out_dir.as_deref()),
        Some(Command::Exec(args)) => dsh_exec::run(args),
        None => {
            // `-r` without an id: the terminal's picker.
            let pick_session = matches!(cli.resume, Some(None));
            if pick_session && (cli.print.print || cli.sdk.streaming()) {
                stdio::errln!(
                    "dsh: error: --resume needs a session id with -p (`dsh sessions` lists them)"
                );
                return ExitCode::from(stdio::ExitStatus::Error);
            }
            let pick = match (cli.resume.flatten(), cli.continue_session) {
                (Some(id), _) => sessions::Pick::Resume(id),
                (None, true) => sessions::Pick::Continue,
                (None, false) => sessions::Pick::New,
            };
            if cli.sdk.streaming() {
                sdk_run(cli.print, cli.sdk, pick, cli.strict_hooks, cli.session)
            } else {
                match cli.print.print {
                    true => headless::run(headless::HeadlessArgs {
                        prompt: cli.prompt,
                        print: cli.print,
                        allow_ask: cli.allow_ask,
                        strict_hooks: cli.strict_hooks,
                        pick,
                        wait: lock_wait(cli.wait),
                        session: cli.session,
                    }),
                    false => cli
                        .print
                        .check(!matches!(pick, sessions::Pick::New))
                        .map_err(anyhow::Error::from)
                        .and_then(|()| {
                            refuse_print_only(&cli.print)?;
                            interactive::run(interactive::InteractiveArgs {
                                pick,
                                wait: lock_wait(cli.wait),
                                session: cli.session,
                                color: cli.color,
                                queue_mode: cli.queue_mode,
                                hooks: interactive::HookActions {
                                    list: hooks_cmd::session::list,
                                    trust: hooks_cmd::session::trust,
                                    untrust: hooks_cmd::session::untrust,
                                    permissions: hooks_cmd::session::permissions,
                                },
                                first_prompt: cli.prompt,
                                pick_session,
                                verbose: cli.print.verbose,
                            })
                        }),
                }
            }
        }
    };
    let status = match result {
        Ok(status) => status,
        // The reader of stdout went away (`dsh hooks list | head -1`): it
        // took what it wanted, which is success.
        Err(err) if stdio::is_stdout_closed(&err) => stdio::ExitStatus::Success,
        Err(err) => {
            stdio::errln!("dsh: error: {}", error_chain(&err));
            stdio::ExitStatus::Error
        }
    };
    ExitCode::from(status)
}

/// The interactive terminal takes none of print mode's output and prompt
/// flags: say so rather than ignore them.
fn refuse_print_only(print: &dsh_print::PrintFlags) -> anyhow::Result<()> {
    let given = [
        (print.system_prompt.is_some(), "--system-prompt"),
        (
            print.append_system_prompt.is_some(),
            "--append-system-prompt",
        ),
        (print.session_id.is_some(), "--session-id"),
        (print.fork_session, "--fork-session"),
    ];
    match given.iter().find(|(on, _)| *on) {
        Some((_, flag)) => anyhow::bail!("{flag} only applies with -p/--print in dsh"),
        None => Ok(()),
    }
}

/// `--input-format stream-json`: the Claude Agent SDK drives the session.
fn sdk_run(
    print: dsh_print::PrintFlags,
    sdk: dsh_sdk::SdkFlags,
    pick: sessions::Pick,
    strict_hooks: bool,
    session: dsh_core::SessionFlags,
) -> anyhow::Result<stdio::ExitStatus> {
    anyhow::ensure!(
        print.output_format == dsh_print::OutputFormat::StreamJson,
        "--input-format stream-json needs --output-format stream-json"
    );
    dsh_sdk::run(dsh_sdk::SdkArgs {
        pick,
        permission_prompt_tool: sdk.permission_prompt_tool,
        strict_hooks,
        print,
        session,
    })
}

fn lock_wait(wait: bool) -> dsh_session::LockWait {
    if wait {
        dsh_session::LockWait::Wait
    } else {
        dsh_session::LockWait::Fail
    }
}
