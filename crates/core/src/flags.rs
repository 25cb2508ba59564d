//! The flags of every subcommand that starts a session, declared once.

use std::path::PathBuf;

use crate::compact::{AutocompactFlag, parse as parse_autocompact};
use crate::perms::PermissionFlags;

/// What the command line says about a session: flattened into `dsh`
/// (interactive and `-p`), `dsh replay`, `dsh acp` and `dsh status`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SessionFlags {
    /// Use this model instead of the configured one.
    #[arg(long)]
    pub model: Option<String>,
    /// The model API to speak: `chat` (OpenAI-compatible Chat Completions),
    /// `anthropic` (Messages) or `responses` (OpenAI Responses); wins over
    /// `DSH_PROVIDER_API` and `[provider] api`.
    #[arg(long = "provider-api", value_name = "API", value_parser = provider_api_parser())]
    pub provider_api: Option<dsh_provider::ProviderApi>,
    /// Extra Claude Code settings file(s), as `claude --settings`.
    #[arg(long = "settings", value_name = "FILE")]
    pub settings: Vec<PathBuf>,
    /// Load a Claude Code plugin from this directory for the session, as `claude --plugin-dir`.
    #[arg(long = "plugin-dir", value_name = "DIR")]
    pub plugin_dirs: Vec<PathBuf>,
    /// Load MCP servers from this JSON file, or from this JSON text
    /// (`{"mcpServers":{…}}`), as `claude --mcp-config`.
    #[arg(long = "mcp-config", value_name = "FILE|JSON", value_parser = dsh_mcp::McpConfigArg::parse)]
    pub mcp_config: Vec<dsh_mcp::McpConfigArg>,
    /// Only the MCP servers of `--mcp-config`; every other MCP
    /// configuration is ignored, as `claude --strict-mcp-config`.
    #[arg(long)]
    pub strict_mcp_config: bool,
    /// Bound on model requests per turn (with -p, replay and acp: default 50;
    /// interactive: no bound unless given). `--max-turns` is Claude Code's name.
    #[arg(long, visible_alias = "max-turns", value_name = "N")]
    pub max_steps: Option<u64>,
    /// Compact automatically against this context window (tokens), or `off`
    /// (default: the model's window, DeepSeek's 128K).
    #[arg(long, value_name = "TOKENS|off", value_parser = parse_autocompact)]
    pub autocompact: Option<AutocompactFlag>,
    /// Offer only these built-in tools, as `claude --tools`: names separated by
    /// commas or spaces (`Bash,Read,Edit`), `default` for all of them, `""` for none.
    /// MCP tools are not affected.
    #[arg(long, value_name = "TOOLS")]
    pub tools: Option<String>,
    /// Run the Setup hooks (trigger `init`) before the session starts, as
    /// `claude --init`.
    #[arg(long, conflicts_with_all = ["init_only", "maintenance"])]
    pub init: bool,
    /// Run the Setup hooks (trigger `init`) and the session-start hooks, then
    /// exit without a prompt, as `claude --init-only`.
    #[arg(long = "init-only", conflicts_with = "maintenance")]
    pub init_only: bool,
    /// Run the Setup hooks (trigger `maintenance`) before the session starts,
    /// as `claude --maintenance`.
    #[arg(long)]
    pub maintenance: bool,
    /// Work in a worktree of the project, as `claude --worktree NAME`: the
    /// WorktreeCreate hooks of the project make it (their last stdout line is
    /// its path), else dsh runs `git worktree add` to
    /// `.claude/worktrees/NAME` on branch `worktree-NAME`. The session
    /// then runs there, with the worktree's settings; an interactive
    /// session removes a worktree without changes when it ends (`dsh`,
    /// `dsh -p`, `dsh replay`; `dsh acp` and `dsh status` refuse it).
    #[arg(long, value_name = "NAME")]
    pub worktree: Option<String>,
    /// Permission mode and rules for the session (Claude Code's `default` mode when
    /// neither the flag nor settings' `defaultMode` names one; replay: `bypassPermissions`).
    #[command(flatten)]
    pub permissions: PermissionFlags,
    /// Not a flag: the person answered the trust question "this session
    /// only", so the workspace counts as trusted until the session ends.
    #[arg(skip)]
    pub workspace_trusted_this_session: bool,
}

/// `--provider-api`: `chat`, `anthropic` or `responses`, which shell
/// completions offer.
fn provider_api_parser() -> impl clap::builder::TypedValueParser<Value = dsh_provider::ProviderApi>
{
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(["chat", "anthropic", "responses"])
        .try_map(|value| value.parse::<dsh_provider::ProviderApi>())
}

impl SessionFlags {
    /// The built-in tools `--tools` selects (all of them without the flag).
    pub fn builtin_selection(&self) -> dsh_tools::builtin::BuiltinSelection {
        self.tools
            .as_deref()
            .map(dsh_tools::builtin::BuiltinSelection::parse)
            .unwrap_or_default()
    }

    /// The set-up run the flags ask for (`--init`, `--init-only`: `init`;
    /// `--maintenance`: `maintenance`).
    pub fn setup_trigger(&self) -> Option<dsh_seams::SetupTrigger> {
        if self.init || self.init_only {
            Some(dsh_seams::SetupTrigger::Init)
        } else if self.maintenance {
            Some(dsh_seams::SetupTrigger::Maintenance)
        } else {
            None
        }
    }

    /// Refuses `--worktree` for a command that does not start a session in
    /// one (`dsh acp`, `dsh status`).
    pub fn refuse_worktree(&self, command: &str) -> crate::Result<()> {
        match &self.worktree {
            Some(_) => Err(crate::Error::msg(format!(
                "{command} does not take --worktree (dsh, dsh -p and dsh replay do)"
            ))),
            None => Ok(()),
        }
    }

    /// `--settings` paths made absolute against `cwd` (a relative path means
    /// the same file whichever directory a session later resolves in).
    pub fn absolute_settings(&self, cwd: &std::path::Path) -> Vec<PathBuf> {
        absolute_paths(&self.settings, cwd)
    }
}

/// `paths` made absolute against `cwd`: the one rule for `--settings`
/// paths, whether a session or a reading command resolves them. An
/// argument that is the settings JSON itself (`--settings '{…}'`) stays
/// as given.
pub(crate) fn absolute_paths(paths: &[PathBuf], cwd: &std::path::Path) -> Vec<PathBuf> {
    paths
        .iter()
        .map(|path| {
            if path.is_absolute() || dsh_files::settings::inline_settings(path).is_some() {
                path.clone()
            } else {
                cwd.join(path)
            }
        })
        .collect()
}
