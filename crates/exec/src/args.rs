//! Codex's `exec` command line, as `codex exec --help` names it.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// `--sandbox` / `-c sandbox_mode=…`: Codex's sandbox modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SandboxMode {
    /// Commands may read anything and write nothing (refused: dsh cannot enforce it).
    ReadOnly,
    /// Commands may write inside the workspace only (refused: dsh cannot enforce it).
    WorkspaceWrite,
    /// No sandbox: what dsh does.
    DangerFullAccess,
}

impl SandboxMode {
    /// The name Codex spells.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::DangerFullAccess => "danger-full-access",
        }
    }

    /// The mode named `value` (Codex's spelling).
    pub fn parse(value: &str) -> Option<SandboxMode> {
        [
            SandboxMode::ReadOnly,
            SandboxMode::WorkspaceWrite,
            SandboxMode::DangerFullAccess,
        ]
        .into_iter()
        .find(|mode| mode.as_str() == value)
    }
}

/// `dsh exec`: runs one turn without a person, as `codex exec` does.
#[derive(Debug, Clone, Args)]
pub struct ExecArgs {
    /// `resume`: continue a stored session.
    #[command(subcommand)]
    pub command: Option<ExecCommand>,
    /// The prompt; read from stdin when absent or `-`.
    #[arg(value_name = "PROMPT")]
    pub prompt: Option<String>,
    /// Print Codex's JSONL events on stdout (`thread.started`, `turn.*`, `item.*`).
    #[arg(
        id = "exec_json",
        long = "json",
        alias = "experimental-json",
        global = true
    )]
    pub json: bool,
    /// The model to use.
    #[arg(
        id = "exec_model",
        short = 'm',
        long = "model",
        value_name = "MODEL",
        global = true
    )]
    pub model: Option<String>,
    /// A Codex configuration override, `key=value` with a TOML value
    /// (`model`, `model_provider`, `approval_policy`, `sandbox_mode`,
    /// `openai_base_url`, …; see the Codex exec guide). Repeatable.
    #[arg(
        id = "exec_config",
        short = 'c',
        long = "config",
        value_name = "key=value",
        global = true
    )]
    pub config: Vec<String>,
    /// The sandbox: only `danger-full-access` (no sandbox) runs; dsh refuses
    /// `read-only` and `workspace-write`, which it cannot enforce.
    #[arg(
        id = "exec_sandbox",
        short = 's',
        long = "sandbox",
        value_enum,
        value_name = "MODE",
        global = true
    )]
    pub sandbox: Option<SandboxMode>,
    /// Codex's `--sandbox workspace-write` with on-request approvals: refused
    /// (dsh cannot enforce the workspace sandbox).
    #[arg(id = "exec_full_auto", long = "full-auto", global = true)]
    pub full_auto: bool,
    /// No sandbox and no approvals (`--yolo`): tools run in
    /// `bypassPermissions` mode; deny rules and hooks still decide.
    #[arg(
        id = "exec_dangerously_bypass_approvals_and_sandbox",
        long = "dangerously-bypass-approvals-and-sandbox",
        alias = "yolo",
        global = true
    )]
    pub dangerously_bypass_approvals_and_sandbox: bool,
    /// Run in this directory.
    #[arg(
        id = "exec_cd",
        short = 'C',
        long = "cd",
        value_name = "DIR",
        global = true
    )]
    pub cd: Option<PathBuf>,
    /// Run outside a git repository.
    #[arg(
        id = "exec_skip_git_repo_check",
        long = "skip-git-repo-check",
        global = true
    )]
    pub skip_git_repo_check: bool,
    /// A JSON Schema the final answer must follow (the Responses API's
    /// structured output).
    #[arg(
        id = "exec_output_schema",
        long = "output-schema",
        value_name = "FILE",
        global = true
    )]
    pub output_schema: Option<PathBuf>,
    /// Also write the final message to this file (written through, never replaced).
    #[arg(
        id = "exec_output_last_message",
        short = 'o',
        long = "output-last-message",
        value_name = "FILE",
        global = true
    )]
    pub output_last_message: Option<PathBuf>,
    /// Extra writable directories (Codex's workspace sandbox): without a
    /// sandbox every directory is reachable already.
    #[arg(
        id = "exec_add_dir",
        long = "add-dir",
        value_name = "DIR",
        global = true
    )]
    pub add_dir: Vec<PathBuf>,
    /// Images to attach: refused (dsh sends text only).
    #[arg(
        id = "exec_image",
        short = 'i',
        long = "image",
        value_name = "FILE",
        global = true
    )]
    pub image: Vec<PathBuf>,
    /// Colour of the human output (accepted; dsh's exec output has none).
    #[arg(id = "exec_color", long = "color", value_name = "WHEN", global = true, value_parser = ["always", "never", "auto"])]
    pub color: Option<String>,
    /// The Codex SDK's thread classification: accepted and not used.
    #[arg(
        id = "exec_thread_source",
        long = "thread-source",
        value_name = "SOURCE",
        global = true,
        hide = true
    )]
    pub thread_source: Option<String>,
}

/// `dsh exec resume`.
#[derive(Debug, Clone, Subcommand)]
pub enum ExecCommand {
    /// Continues a stored session (a dsh session id, or unambiguous prefix)
    /// with a new turn.
    Resume {
        /// The session (thread) id; with `--last`, this is the prompt.
        #[arg(value_name = "SESSION_ID")]
        session_id: Option<String>,
        /// The prompt; read from stdin when absent or `-`.
        #[arg(value_name = "PROMPT")]
        prompt: Option<String>,
        /// Continue the newest session started in this directory.
        #[arg(long)]
        last: bool,
    },
}
