//! A directory's configuration for the commands that read it without
//! starting a session: `dsh hooks list|check|trust|untrust`, `dsh mcp list`
//! and the terminal's `/hooks` and `/permissions`.
//!
//! [`Workspace::resolve`] is their one entry into core, as
//! [`crate::SessionSpec::resolve`] is every session's: the same hook
//! sources, the same reader (each configuration file read from disk once,
//! every consumer seeing the same text), the same trust decision
//! ([`crate::trust::hooks_of`]) and the same MCP consent rules. Unlike a
//! session it starts nothing, asks nothing, and does not fail on what
//! these commands exist to show: a configuration a session would refuse is
//! reported by the command that reads it.

use std::path::{Path, PathBuf};

use dsh_files::ConfigFiles;
use dsh_files::settings::SettingsStack;
use dsh_hooks::lint::Finding;
use dsh_hooks::project_settings::ProjectSettings;
use dsh_hooks::registry::DialectSources;
use dsh_permissions::layering::WorkspaceTrust;
use dsh_permissions::{Layer, Mode};
use dsh_protocol::Dialect;

use crate::hooks::{HookConfigs, HookSources};
use crate::mcp::{McpListing, ProjectServers};
use crate::trust::{ProjectHook, TrustStore};
use crate::{Env, Result, SessionSpec};

/// What [`Workspace::resolve`] reads a directory's configuration for.
pub struct WorkspaceInputs<'a> {
    /// The environment.
    pub env: &'a Env,
    /// The project directory.
    pub cwd: &'a Path,
    /// Extra Claude Code settings files (`--settings`); a relative path is
    /// the project directory's.
    pub settings: &'a [PathBuf],
    /// Extra MCP configuration (`--mcp-config`).
    pub mcp_config: &'a [dsh_mcp::McpConfigArg],
}

/// A directory's configuration, resolved by core for a command that reads
/// it: hooks with their trust, permission layers, MCP servers with their
/// consent.
#[derive(Debug, Clone)]
pub struct Workspace {
    sources: HookSources,
    mcp_config: Vec<dsh_mcp::McpConfigArg>,
    files: ConfigFiles,
}

/// The permission layers of a directory as a session there would start
/// without flags.
#[derive(Debug, Clone)]
pub struct PermissionView {
    /// Every settings layer, highest precedence first (as consulted).
    pub layers: Vec<Layer>,
    /// The mode a session here starts in without `--permission-mode`.
    pub mode: Mode,
    /// The file whose `defaultMode` chose [`PermissionView::mode`]; `None`:
    /// Claude Code's default.
    pub mode_from: Option<String>,
    /// Who vouched for the workspace (its project `allow` rules apply only
    /// when someone did).
    pub workspace: WorkspaceTrust,
}

impl PermissionView {
    /// Whether someone vouched for the workspace (`~/.claude.json`'s trust
    /// dialog or `dsh hooks trust`).
    pub fn workspace_trusted(&self) -> bool {
        self.workspace.trust() == dsh_permissions::Trust::Trusted
    }

    /// Whether a session here drops `rule`: a project `allow` rule in a
    /// workspace nobody trusted.
    pub fn drops(&self, rule: &dsh_permissions::SourcedRule) -> bool {
        !self.workspace_trusted()
            && rule.source.is_project_scoped()
            && rule.behavior == dsh_permissions::Behavior::Allow
    }
}

impl Workspace {
    /// Reads the configuration of `inputs.cwd` through one reader. MCP
    /// servers are only named (for the hook payloads that carry them); a
    /// configuration dsh cannot read is reported when a session starts or
    /// by [`Workspace::mcp_listing`], not here.
    pub fn resolve(inputs: WorkspaceInputs<'_>) -> Workspace {
        let WorkspaceInputs {
            env,
            cwd,
            settings,
            mcp_config,
        } = inputs;
        let settings = crate::flags::absolute_paths(settings, cwd);
        let files = ConfigFiles::new();
        let mut sources = HookSources::new(env, cwd.to_owned(), settings);
        sources.files = Some(files.clone());
        let mut workspace = Workspace {
            sources,
            mcp_config: mcp_config.to_vec(),
            files,
        };
        if let Ok(discovered) = crate::mcp::discover_with(
            env,
            cwd,
            &workspace.settings(),
            mcp_config,
            ProjectServers::StartAll,
            &workspace.files,
        ) {
            workspace.sources.mcp_servers = crate::mcp::tags(&discovered);
        }
        workspace
    }

    /// The workspace of a running session (its plugins, `--settings` files
    /// and MCP servers), read afresh: the terminal's `/hooks` after an
    /// edit. Hooks the session left out are listed as configured.
    pub fn of_session(spec: &SessionSpec) -> Workspace {
        let files = ConfigFiles::new();
        let mut sources = spec.sources.clone();
        sources.excluded_hooks.clear();
        sources.files = Some(files.clone());
        Workspace {
            sources,
            mcp_config: spec.flags.mcp_config.clone(),
            files,
        }
    }

    /// The project directory.
    pub fn cwd(&self) -> &Path {
        &self.sources.cwd
    }

    /// Where hooks come from here.
    pub fn sources(&self) -> &HookSources {
        &self.sources
    }

    /// What every dialect's discovery and lint targets read.
    pub fn dialect_sources(&self) -> DialectSources {
        self.sources.dialect_sources()
    }

    /// The hook files dsh would load here, with their dialect, and the
    /// set-up's own findings (`dsh hooks check` with no file named): each
    /// registered dialect's discovery in registration order, then the
    /// files loaded only when every configuration loads (plugins).
    pub fn hook_files(&self) -> (Vec<(PathBuf, Dialect)>, Vec<Finding>) {
        let registry = crate::dialects::registry();
        let dialect_sources = self.dialect_sources();
        let mut found: Vec<(PathBuf, Dialect)> = Vec::new();
        let mut late: Vec<(PathBuf, Dialect)> = Vec::new();
        let mut findings = Vec::new();
        for dialect in registry.iter() {
            let targets = dialect.lint_targets(&dialect_sources);
            // In the home directory the project's files are the user's:
            // each file is checked once.
            for path in targets.files {
                if !found.iter().any(|(seen, _)| *seen == path) {
                    found.push((path, dialect.id()));
                }
            }
            late.extend(
                targets
                    .loaded_files
                    .into_iter()
                    .map(|path| (path, dialect.id())),
            );
            findings.extend(targets.findings);
        }
        // Plugins are what a session loads, and a session loads nothing
        // when any dialect's configuration fails.
        if registry.load(&dialect_sources).is_err() {
            return (found, Vec::new());
        }
        for (file, dialect) in late {
            if !found.iter().any(|(path, _)| *path == file) {
                found.push((file, dialect));
            }
        }
        (found, findings)
    }

    /// Every dialect's hook configuration, in registration order, with the
    /// hook switches of [`Workspace::settings`] (the stack `dsh hooks list`
    /// shows): a repository nobody trusted cannot switch the user's hooks
    /// back on, here as in a session.
    pub fn hooks(&self) -> Result<HookConfigs> {
        let mut sources = self.sources.clone();
        if self.workspace_trust() == WorkspaceTrust::Untrusted {
            sources.project_settings = ProjectSettings::HoldBack;
        }
        sources.settings_stack = Some(self.settings());
        HookConfigs::load(&sources)
    }

    /// `$DSH_HOME/trust.json`, read through the workspace's reader.
    pub fn trust_store(&self) -> Result<TrustStore> {
        Ok(TrustStore::load_with(&self.files, &self.sources.dsh_home)?)
    }

    /// Every configured hook with its trust status, decided as a session
    /// decides it.
    pub fn project_hooks(&self, configs: &HookConfigs, store: &TrustStore) -> Vec<ProjectHook> {
        crate::trust::hooks_of(&self.sources, configs, store)
    }

    /// Who vouches for this directory (`~/.claude.json`'s trust dialog or
    /// `dsh hooks trust`), read through the workspace's reader.
    pub fn workspace_trust(&self) -> WorkspaceTrust {
        dsh_permissions::layering::workspace_trust_with(
            &self.files,
            &self.sources.home,
            &self.sources.dsh_home,
            &self.sources.cwd,
        )
    }

    /// The Claude Code settings layer stack a session here (asking for
    /// trust) starts with: each file parsed once through the workspace's
    /// reader, the repository's layers held back when nobody trusted it.
    pub fn settings(&self) -> SettingsStack {
        let mut claude = dsh_hooks_claude::config::ClaudeDiscovery::new(
            &self.sources.cwd,
            &self.sources.home,
            &self.sources.dsh_home,
        );
        claude.extra_settings = self.sources.settings_files.clone();
        let hold = self.workspace_trust() == WorkspaceTrust::Untrusted;
        SettingsStack::load(&self.files, &claude.candidates(), hold)
    }

    /// The permission layers and the mode a session here starts in.
    pub fn permissions(&self) -> Result<PermissionView> {
        let mut layers = dsh_permissions::store::stack_layers(&self.settings())?;
        let mode = dsh_permissions::Permissions::effective_mode(None, &layers);
        // The same choice as `effective_mode`: the highest-precedence layer
        // naming one.
        let mode_from = layers
            .iter()
            .filter(|layer| layer.default_mode.is_some())
            .min_by_key(|layer| layer.source)
            .map(|layer| layer.origin.clone());
        layers.sort_by_key(|layer| layer.source);
        Ok(PermissionView {
            layers,
            mode,
            mode_from,
            workspace: self.workspace_trust(),
        })
    }

    /// Every configured MCP server with its consent state (see
    /// [`crate::mcp::listing_with`]); a configuration dsh cannot read is an
    /// error here.
    pub fn mcp_listing(&self) -> Result<McpListing> {
        crate::mcp::listing_with(
            &self.sources.env,
            &self.sources.cwd,
            &self.settings(),
            &self.mcp_config,
            &self.files,
        )
    }

    /// Starts the servers a session here starts without asking
    /// (`listing.startable`), their processes kept from dsh's key
    /// variables as a session's are. Must be called outside any async
    /// runtime.
    pub fn start_servers(&self, listing: &McpListing) -> Result<crate::mcp::McpSession> {
        let dsh_home = &self.sources.dsh_home;
        // The configuration only names the provider's key variable to
        // scrub; one dsh cannot read scrubs the defaults.
        let config =
            crate::DshConfig::load(dsh_home).unwrap_or_else(|_| crate::DshConfig::empty(dsh_home));
        let processes = dsh_hook_runner::ProcessLayer::new(crate::hooks::scrubbed_env_for(
            &self.sources.env,
            &config,
        ));
        Ok(crate::mcp::McpSession::start(
            &self.sources.env.lookup(),
            &listing.startable,
            &self.sources.cwd,
            &processes,
        )?)
    }

    /// How often each configuration file was read from disk (once).
    pub fn disk_reads(&self) -> Vec<(PathBuf, usize)> {
        self.files.all_disk_reads()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::mcp::ServerConsent;
    use crate::trust::TrustStatus;

    /// A project with a hook, a permission rule, a `defaultMode` and a
    /// server, and a user who trusted nothing.
    fn project() -> (tempfile::TempDir, Env, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("project");
        let home = root.path().join("home");
        fs_err::create_dir_all(cwd.join(".claude")).unwrap();
        fs_err::create_dir_all(home.join(".dsh")).unwrap();
        fs_err::write(
            cwd.join(".mcp.json"),
            r#"{"mcpServers":{"echo":{"command":"python3","args":["s.py"]}}}"#,
        )
        .unwrap();
        fs_err::write(
            cwd.join(".claude/settings.json"),
            r#"{"permissions":{"allow":["Bash(ls:*)"],"defaultMode":"plan"},
               "hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo hi"}]}]}}"#,
        )
        .unwrap();
        let env = Env::from_vars([
            ("HOME".to_owned(), home.display().to_string()),
            (
                "DSH_HOME".to_owned(),
                home.join(".dsh").display().to_string(),
            ),
        ]);
        (root, env, cwd)
    }

    #[test]
    fn every_reading_command_sees_one_parse_of_each_file() {
        let (_root, env, cwd) = project();
        let workspace = Workspace::resolve(WorkspaceInputs {
            env: &env,
            cwd: &cwd,
            settings: &[],
            mcp_config: &[],
        });
        // What `dsh hooks list` reads: hooks, their trust, permissions.
        let configs = workspace.hooks().unwrap();
        let store = workspace.trust_store().unwrap();
        let hooks = workspace.project_hooks(&configs, &store);
        assert_eq!(hooks.len(), 1);
        assert_eq!(hooks[0].status, TrustStatus::Untrusted);
        let permissions = workspace.permissions().unwrap();
        assert_eq!(permissions.mode, Mode::Plan);
        assert!(
            permissions
                .mode_from
                .as_deref()
                .is_some_and(|from| from.ends_with(".claude/settings.json"))
        );
        assert_eq!(permissions.workspace, WorkspaceTrust::Untrusted);
        // The project's allow rule is dropped in a workspace nobody trusted.
        let rules: Vec<_> = permissions.layers.iter().flat_map(|l| &l.rules).collect();
        assert_eq!(rules.len(), 1);
        assert!(permissions.drops(rules[0]));
        // The files `dsh hooks check` lints: the project's settings.
        let (files, _) = workspace.hook_files();
        assert!(
            files
                .iter()
                .any(|(path, dialect)| path.ends_with(".claude/settings.json")
                    && *dialect == Dialect::Claude)
        );
        // What `dsh mcp list` reads: the project server waits.
        let listing = workspace.mcp_listing().unwrap();
        assert_eq!(listing.servers.len(), 1);
        assert_eq!(listing.servers[0].consent, ServerConsent::NotApproved);
        // MCP tool events name the server.
        assert_eq!(workspace.sources().mcp_servers.len(), 1);
        // Each file was read from disk once, whoever asked for it.
        let reads = workspace.disk_reads();
        assert!(
            reads
                .iter()
                .any(|(path, _)| path.ends_with(".claude/settings.json"))
        );
        for (path, count) in &reads {
            assert_eq!(*count, 1, "{} read {count} times", path.display());
        }
    }

    #[test]
    fn a_session_workspace_lists_the_hooks_it_left_out_and_reads_afresh() {
        let (_root, env, cwd) = project();
        let config = crate::DshConfig::empty(&env.dsh_home().unwrap());
        let mut spec = SessionSpec::resolve(crate::Inputs {
            env: &env,
            config: &config,
            flags: &crate::SessionFlags::default(),
            cwd: &cwd,
            policy: crate::TrustPolicy::RunAll,
        })
        .unwrap();
        let origin = spec.untrusted_hooks.first().map(|h| h.origin.clone());
        assert!(origin.is_none(), "replay decides no trust");
        let all = Workspace::of_session(&spec);
        let origins: Vec<String> = all
            .project_hooks(&all.hooks().unwrap(), &all.trust_store().unwrap())
            .into_iter()
            .map(|hook| hook.origin)
            .collect();
        spec.skip_hooks(&origins);
        // An edit after the session started is seen.
        fs_err::write(cwd.join(".claude/settings.json"), "{}").unwrap();
        let workspace = Workspace::of_session(&spec);
        assert!(workspace.sources().excluded_hooks.is_empty());
        let store = workspace.trust_store().unwrap();
        assert!(
            workspace
                .project_hooks(&workspace.hooks().unwrap(), &store)
                .is_empty()
        );
    }
}
