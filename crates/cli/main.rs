//! The `dsh` command line: interactive and headless sessions, fixture
//! replay, session-log rendering and hook tooling.
//!
//! This is glue: argument types, wiring and rendering. Domain logic lives in
//! the library crates.

mod log_view;
mod replay;
mod wiring;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// dsh: an agent harness whose hook system is the product.
#[derive(Debug, Parser)]
#[command(name = "dsh", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

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
        /// Extra Claude Code settings file(s), as `claude --settings`.
        #[arg(long = "settings")]
        settings: Vec<PathBuf>,
        /// Bound on model requests per turn.
        #[arg(long, default_value_t = dsh_agent::DEFAULT_MAX_STEPS)]
        max_steps: u64,
    },
    /// Renders a session log for people.
    Log {
        /// The session log (JSONL).
        file: PathBuf,
        /// Force colour on or off.
        #[arg(long, value_enum, default_value_t = log_view::ColorChoice::Auto)]
        color: log_view::ColorChoice,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("DSH_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Replay {
            fixture,
            out,
            requests_out,
            session_id,
            settings,
            max_steps,
        }) => replay::run(replay::ReplayArgs {
            fixture,
            out,
            requests_out,
            session_id,
            settings,
            max_steps,
        }),
        Some(Command::Log { file, color }) => log_view::run(&file, color),
        None => Err(anyhow::anyhow!(
            "interactive mode is not available yet; try `dsh replay FIXTURE` or `dsh --help`"
        )),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("dsh: error: {err:#}");
            ExitCode::from(2)
        }
    }
}
