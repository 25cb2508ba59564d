//! The resolved session: everything a session in one directory is made of,
//! before anything starts.

use std::io::Write;
use std::path::{Path, PathBuf};

use dsh_agent::AutoCompact;
use dsh_agent::instructions::ContextRoots;
use dsh_mcp::{Discovered, ServerTransport};
use dsh_permissions::Mode;
use dsh_trust::UntrustedHook;

use crate::hooks::{HookConfigs, HookSources};
use crate::mcp::{ProjectServers, discover_with, tags};
use crate::perms::{self, Built, SessionMode, WorkspaceTrust, workspace_trust_with};
use crate::{DshConfig, Env, Error, Result, SessionFlags};
use dsh_hooks::project_settings::ProjectSettings;

/// What happens to project hooks nobody trusted yet and to project MCP
/// servers no user-level state approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustPolicy {
    /// A person answers (the terminal, ACP): the front end asks through
    /// [`SessionSpec::ask_in_terminal`] or its own questions, then
    /// [`SessionSpec::skip_hooks`] / [`SessionSpec::approve_servers`]. A
    /// server nobody approved never starts.
    Ask,
    /// Headless (`-p`): as `claude -p`, untrusted hooks and unapproved
    /// servers run and are named on stderr; `strict` (`--strict-hooks`,
    /// `DSH_STRICT_HOOKS=1`) refuses the hooks and skips the servers.
    Headless {
        /// Refuse instead of naming.
        strict: bool,
    },
    /// `dsh replay`: everything configured runs (the replay contract,
    /// contracts.md).
    RunAll,
    /// `dsh hooks test|replay`: as [`TrustPolicy::RunAll`], except that
    /// untrusted project hooks are decided in the resolution as
    /// [`HookToolsTrust`] says, hooks see `--permission-mode` only when it
    /// is given (otherwise each dialect's default: no permission rule runs
    /// after them here), and no MCP server is kept to start (MCP tool
    /// events still carry their server's tag).
    HookTools(HookToolsTrust),
}

/// What `dsh hooks test|replay` do with project hooks nobody trusted yet,
/// decided by [`SessionSpec::resolve`] on the parse that runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookToolsTrust {
    /// `--trust-all`: they run.
    TrustAll,
    /// On a terminal: the person is asked (on stdin, the question on
    /// stderr: stdout carries the report); a "no" leaves them out.
    Ask,
    /// Without a terminal: the resolution fails, naming them.
    Refuse,
}

impl TrustPolicy {
    /// Everything configured runs: nothing waits for trust or consent.
    fn runs_all(self) -> bool {
        match self {
            TrustPolicy::RunAll | TrustPolicy::HookTools(_) => true,
            TrustPolicy::Ask | TrustPolicy::Headless { .. } => false,
        }
    }
}

/// A project MCP server waiting for consent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpConsent {
    /// Its name.
    pub name: String,
    /// The file that configures it.
    pub origin: PathBuf,
    /// What it runs (command and arguments, or its URL).
    pub command: String,
}

/// What an "always" answer to the MCP consent question remembered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RememberedServers {
    /// The file the approval went to (none when only Codex servers waited).
    pub file: Option<PathBuf>,
    /// Servers approved for this session only: a project's Codex servers,
    /// which start for good in a trusted workspace (`dsh hooks trust`).
    pub session_only: Vec<String>,
}

impl std::fmt::Display for RememberedServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "Remembered in {}.", file.display())?;
        }
        if !self.session_only.is_empty() {
            if self.file.is_some() {
                f.write_str(" ")?;
            }
            let names: Vec<String> = self.session_only.iter().map(|n| format!("`{n}`")).collect();
            write!(
                f,
                "{} (a project's Codex server) start this session only: Codex servers start for good in a trusted workspace (`dsh hooks trust`).",
                names.join(", ")
            )?;
        }
        Ok(())
    }
}

/// Everything resolved for a session in one directory.
#[derive(Clone)]
pub struct SessionSpec {
    /// The environment, read once.
    pub env: Env,
    /// `config.toml`, read once.
    pub config: DshConfig,
    /// The command line.
    pub flags: SessionFlags,
    /// The project directory.
    pub cwd: PathBuf,
    /// Trust and consent handling.
    pub policy: TrustPolicy,
    /// Where hooks come from (plugins, excluded origins, MCP tags, mode).
    pub sources: HookSources,
    /// The Claude Code settings layers (managed → `--settings` → local →
    /// project → user), each parsed once, with why a layer is disabled:
    /// permissions, the Claude bridge (hooks, plugins, `env`), MCP
    /// approvals and trust read these same documents.
    pub settings: dsh_files::settings::SettingsStack,
    /// Permission layers (the stage starts in [`SessionSpec::mode`]).
    pub permissions: Built,
    /// The session's permission mode, decided once (everyone reads it).
    pub mode: SessionMode,
    /// Who vouched for the workspace.
    pub workspace: WorkspaceTrust,
    /// MCP servers to start (consent applied once decided).
    pub mcp: Discovered,
    /// Project servers waiting for consent.
    pub consent: Vec<McpConsent>,
    /// Project servers started without consent (headless, named on stderr).
    pub unconsented: Vec<McpConsent>,
    /// Project hooks nobody trusted yet (empty under [`TrustPolicy::RunAll`]).
    pub untrusted_hooks: Vec<UntrustedHook>,
    /// The dialects of the project hooks `trust.json` did not trust when
    /// the session was last resolved (`None`: trust was not decided, as in
    /// replay). A trust answer that writes the store resolves again, so
    /// this stays true through the answer that leaves hooks out.
    pub untrusted_dialects: Option<Vec<dsh_protocol::Dialect>>,
    /// Every dialect's hook configuration, parsed once: trust was decided
    /// on it and [`crate::assemble`] runs it.
    pub hooks: HookConfigs,
    /// Automatic compaction.
    pub compaction: AutoCompact,
    /// The reader the resolution read every configuration file through
    /// (`disk_reads` says how often each was read: once).
    pub read: dsh_files::ConfigFiles,
    /// The provider settings (`None` for replay, whose model is scripted).
    pub provider: Option<dsh_provider::ProviderSettings>,
    /// `hook/*` records made before the session log existed (the
    /// WorktreeCreate runs of `--worktree`): written right after its header.
    pub(crate) early_records: Vec<dsh_protocol::EventBody>,
}

/// What [`SessionSpec::resolve`] needs besides flags.
pub struct Inputs<'a> {
    /// The environment.
    pub env: &'a Env,
    /// `config.toml`.
    pub config: &'a DshConfig,
    /// The command line.
    pub flags: &'a SessionFlags,
    /// The project directory.
    pub cwd: &'a Path,
    /// Trust and consent handling.
    pub policy: TrustPolicy,
}

fn describe_transport(transport: &ServerTransport) -> String {
    match transport {
        ServerTransport::Stdio { command, args, .. } => std::iter::once(command.as_str())
            .chain(args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        ServerTransport::Remote { url, .. } => url.clone(),
    }
}

impl SessionSpec {
    /// What the session's project hooks run, pinned as it starts (the
    /// runner refuses a hook that would run other or changed files): where
    /// trust applies. Replay runs every configured hook as it finds it, as
    /// its contract says, so nothing is pinned there.
    pub(crate) fn launch_pins(&self) -> crate::trust::LaunchPins {
        match self.policy {
            TrustPolicy::RunAll => crate::trust::LaunchPins::none(&self.sources),
            TrustPolicy::Ask | TrustPolicy::Headless { .. } | TrustPolicy::HookTools(_) => {
                crate::trust::launch_pins(&self.hooks, &self.sources)
            }
        }
    }

    /// Resolves a session in `inputs.cwd`: reads every configuration layer,
    /// decides trust and consent as far as they can be decided without
    /// asking anyone. Nothing starts.
    pub fn resolve(inputs: Inputs<'_>) -> Result<SessionSpec> {
        let Inputs {
            env,
            config,
            flags,
            cwd,
            policy,
        } = inputs;
        let settings = flags.settings.clone();
        let mut sources = HookSources::new(env, cwd.to_owned(), settings.clone());
        sources.plugin_dirs = flags.plugin_dirs.clone();
        // One reader for the whole resolution: permissions, MCP, trust and
        // every dialect read each configuration file from disk once, and
        // see the same text.
        let files = dsh_files::ConfigFiles::new();
        sources.files = Some(files.clone());
        let workspace = if flags.workspace_trusted_this_session {
            WorkspaceTrust::ThisSession
        } else {
            workspace_trust_with(&files, &sources.home, &sources.dsh_home, cwd)
        };
        // A repository's settings that change how the user's own hooks and
        // tools run (`env`, `disableAllHooks`, `hooksConfig`, Codex's
        // `approval_policy`) wait for a trusted workspace; replay runs
        // everything configured.
        sources.project_settings = match (policy, workspace) {
            (TrustPolicy::RunAll | TrustPolicy::HookTools(_), _)
            | (_, WorkspaceTrust::ClaudeJson)
            | (_, WorkspaceTrust::DshTrust)
            | (_, WorkspaceTrust::ThisSession) => ProjectSettings::Apply,
            (TrustPolicy::Ask | TrustPolicy::Headless { .. }, WorkspaceTrust::Untrusted) => {
                ProjectSettings::HoldBack
            }
        };
        // The settings layer stack: each Claude Code settings file parsed
        // once, through the reader every consumer reads it through.
        let mut claude =
            dsh_hooks_claude::config::ClaudeDiscovery::new(cwd, &sources.home, &sources.dsh_home);
        claude.extra_settings = settings.clone();
        let settings_stack = dsh_files::settings::SettingsStack::load(
            &files,
            &claude.candidates(),
            sources.project_settings == ProjectSettings::HoldBack,
        );
        // The Claude bridge takes its hook switches from this stack.
        sources.settings_stack = Some(settings_stack.clone());
        let mut mcp = discover_with(
            env,
            cwd,
            &settings_stack,
            &flags.mcp_config,
            ProjectServers::StartAll,
            &files,
        )?;
        if flags.strict_mcp_config {
            // `--strict-mcp-config`: the `--mcp-config` files' servers only.
            mcp.servers
                .retain(|server| server.source == dsh_mcp::ServerSource::Dynamic);
            let kept: Vec<String> = mcp.servers.iter().map(|s| s.name.clone()).collect();
            mcp.unapproved.retain(|name| kept.contains(name));
        }
        sources.mcp_servers = tags(&mcp);
        // Replay is the offline harness: without --permission-mode it runs
        // bypassPermissions (contracts §6), so only deny and ask rules bite.
        // Other sessions run Claude Code's `default` mode when neither the
        // flag nor a settings `defaultMode` names one.
        let fallback = policy.runs_all().then_some(Mode::BypassPermissions);
        let permissions = perms::build_with(
            &flags.permissions,
            &dsh_permissions::layering::Where {
                cwd,
                home: &sources.home,
                dsh_home: &sources.dsh_home,
                settings: &settings_stack,
                fallback,
                trusted_this_session: flags.workspace_trusted_this_session,
            },
            &files,
        )?;
        // The session's one permission-mode fact; everything else reads it.
        let mode = match flags.permissions.requested_mode() {
            Some(_) => SessionMode::Requested(permissions.mode),
            None => SessionMode::Configured(permissions.mode),
        };
        sources.permission_mode = match (policy, mode) {
            // The hook tools show hooks a mode only when one is given.
            (TrustPolicy::HookTools(_), SessionMode::Configured(_)) => None,
            (TrustPolicy::HookTools(_), SessionMode::Requested(_))
            | (TrustPolicy::RunAll | TrustPolicy::Ask | TrustPolicy::Headless { .. }, _) => {
                Some(mode)
            }
        };
        let hooks = HookConfigs::load(&sources)?;
        let untrusted_hooks = match policy {
            TrustPolicy::RunAll | TrustPolicy::HookTools(_) => Vec::new(),
            TrustPolicy::Ask | TrustPolicy::Headless { .. } => {
                crate::trust::untrusted_of(&sources, &hooks)?
            }
        };
        // Consent: a trusted workspace approves its servers; replay runs
        // everything; otherwise each unapproved project server waits.
        let consent = match (policy, workspace) {
            (TrustPolicy::RunAll | TrustPolicy::HookTools(_), _)
            | (_, WorkspaceTrust::ClaudeJson)
            | (_, WorkspaceTrust::DshTrust)
            | (_, WorkspaceTrust::ThisSession) => Vec::new(),
            (TrustPolicy::Ask | TrustPolicy::Headless { .. }, WorkspaceTrust::Untrusted) => mcp
                .servers
                .iter()
                .filter(|server| mcp.unapproved.contains(&server.name))
                .map(|server| McpConsent {
                    name: server.name.clone(),
                    origin: server.origin.clone(),
                    command: describe_transport(&server.transport),
                })
                .collect(),
        };
        mcp.unapproved
            .retain(|name| consent.iter().any(|c| c.name == *name));
        if matches!(policy, TrustPolicy::HookTools(_)) {
            // The tags are in `sources`; nothing starts.
            mcp.servers.clear();
        }
        let provider = match policy {
            TrustPolicy::RunAll | TrustPolicy::HookTools(_) => None,
            TrustPolicy::Ask | TrustPolicy::Headless { .. } => {
                Some(config.provider_for(env, flags.model.as_deref(), flags.provider_api)?)
            }
        };
        let compaction = match &provider {
            None => crate::compact::auto_compact(flags.autocompact, "scripted"),
            Some(provider) => config.compaction(flags.autocompact, &provider.model)?,
        };
        // Resolved: later reads (a trust answer written, the terminal's
        // `/hooks`) read the files afresh.
        sources.files = None;
        sources.settings_stack = None;
        let mut spec = SessionSpec {
            read: files,
            env: env.clone(),
            config: config.clone(),
            flags: flags.clone(),
            cwd: cwd.to_owned(),
            policy,
            sources,
            settings: settings_stack,
            permissions,
            mode,
            workspace,
            mcp,
            consent,
            unconsented: Vec::new(),
            untrusted_dialects: matches!(policy, TrustPolicy::Ask | TrustPolicy::Headless { .. })
                .then(|| untrusted_hooks.iter().map(|hook| hook.dialect).collect()),
            untrusted_hooks,
            hooks,
            compaction,
            provider,
            early_records: Vec::new(),
        };
        if let TrustPolicy::HookTools(trust) = policy {
            let stdin = std::io::stdin();
            spec.decide_hook_tools(trust, &mut stdin.lock(), &mut std::io::stderr())?;
        }
        Ok(spec)
    }

    /// The hook tools' trust step: `trust` says whether untrusted project
    /// hooks run, are asked about on `input` (the question on `output`;
    /// a "no" leaves them out), or refused with an error naming them.
    pub fn decide_hook_tools(
        &mut self,
        trust: HookToolsTrust,
        input: &mut dyn std::io::BufRead,
        output: &mut dyn Write,
    ) -> Result<()> {
        if trust == HookToolsTrust::TrustAll {
            return Ok(());
        }
        let untrusted = crate::trust::untrusted_of(&self.sources, &self.hooks)?;
        match trust {
            HookToolsTrust::TrustAll => Ok(()),
            HookToolsTrust::Ask => {
                let mut store = crate::trust::TrustStore::load(&self.sources.dsh_home)?;
                if let crate::trust::TrustAnswer::Skipped(origins) =
                    crate::trust::ask(&untrusted, &mut store, &self.cwd, input, output)?
                {
                    self.skip_hooks(&origins);
                }
                Ok(())
            }
            HookToolsTrust::Refuse if untrusted.is_empty() => Ok(()),
            HookToolsTrust::Refuse => {
                let mut text = Vec::new();
                crate::trust::describe(&mut text, &untrusted, &self.cwd)?;
                Err(Error::msg(format!(
                    "refusing to run {} untrusted project hook(s) without a terminal to ask on:\n{}pass --trust-all to run them anyway, or trust them with `dsh hooks trust`",
                    untrusted.len(),
                    String::from_utf8_lossy(&text)
                )))
            }
        }
    }

    /// Where instruction files and commands are looked up.
    pub fn context_roots(&self) -> ContextRoots {
        ContextRoots {
            cwd: self.cwd.clone(),
            home: self.env.home(),
            codex_home: Some(self.env.codex_home()),
        }
    }

    /// The model the provider settings point at (a missing key is an error).
    pub fn model(&self) -> Result<std::sync::Arc<dyn dsh_model::Model>> {
        let settings = self.provider.clone().ok_or_else(|| {
            Error::msg("this session has no provider (replay runs a scripted model)")
        })?;
        Ok(std::sync::Arc::new(dsh_provider::HttpProvider::new(
            settings,
        )?))
    }

    /// Leaves these hook origins out of the session (declined trust).
    pub fn skip_hooks(&mut self, origins: &[String]) {
        self.sources.excluded_hooks.extend(origins.iter().cloned());
        self.untrusted_hooks.clear();
    }

    /// The person approved the waiting servers for good. A `.mcp.json`
    /// server is remembered where Claude Code's approval dialog records it
    /// (`~/.claude.json` `projects[<cwd>].enabledMcpjsonServers`), so either
    /// tool starts it here from now on without asking. A project's Codex
    /// server has no such record (Codex starts them in a trusted project),
    /// so it starts for this session only. All of them start in this
    /// session even when remembering fails (the error says why).
    pub fn remember_servers(&mut self) -> Result<RememberedServers> {
        let (mcp_json, session_only): (Vec<McpConsent>, Vec<McpConsent>) = self
            .consent
            .iter()
            .cloned()
            .partition(|c| c.origin.file_name().is_some_and(|name| name == ".mcp.json"));
        self.approve_servers();
        let names: Vec<String> = mcp_json.into_iter().map(|c| c.name).collect();
        let file = if names.is_empty() {
            None
        } else {
            Some(dsh_mcp::config::remember_approved(
                &self.sources.home,
                &self.cwd,
                &names,
            )?)
        };
        Ok(RememberedServers {
            file,
            session_only: session_only.into_iter().map(|c| c.name).collect(),
        })
    }

    /// The person allowed the waiting servers for this session.
    pub fn approve_servers(&mut self) {
        self.consent.clear();
        self.mcp.unapproved.clear();
    }

    /// The waiting servers do not start; each is named in a notice.
    pub fn skip_servers(&mut self) {
        let skipped: Vec<McpConsent> = std::mem::take(&mut self.consent);
        self.mcp
            .servers
            .retain(|server| !skipped.iter().any(|c| c.name == server.name));
        self.sources.mcp_servers = tags(&self.mcp);
        self.mcp.unapproved.clear();
        for server in skipped {
            self.mcp.notices.push(format!(
                "MCP server `{}` ({}) not started: the project configured it and nobody approved it (the workspace is not trusted: `dsh hooks trust` trusts it)",
                server.name,
                server.origin.display()
            ));
        }
    }

    /// Headless trust: untrusted project hooks and unapproved project
    /// servers are named on `err` and run, or (strict) the hooks are
    /// refused (an error) and the servers skipped.
    pub fn decide_headless(&mut self, err: &mut dyn Write) -> Result<()> {
        let strict = matches!(self.policy, TrustPolicy::Headless { strict: true });
        self.name_held_back(err)?;
        let changed = crate::trust::headless(&self.untrusted_hooks, strict, &self.cwd, err)?;
        self.skip_hooks(&changed);
        if self.consent.is_empty() {
            return Ok(());
        }
        if strict {
            writeln!(
                err,
                "dsh: not starting {} project MCP server(s) nobody approved (strict hooks: --strict-hooks / DSH_STRICT_HOOKS; `dsh hooks trust` trusts the workspace):",
                self.consent.len()
            )?;
            self.describe_consent(err)?;
            self.skip_servers();
        } else {
            writeln!(
                err,
                "dsh: starting {} project MCP server(s) nobody approved (headless runs start them, as Claude Code does; `dsh hooks trust` trusts the workspace, DSH_STRICT_HOOKS=1 skips them):",
                self.consent.len()
            )?;
            self.describe_consent(err)?;
            self.unconsented = std::mem::take(&mut self.consent);
            self.mcp.unapproved.clear();
        }
        Ok(())
    }

    fn describe_consent(&self, out: &mut dyn Write) -> Result<()> {
        for server in &self.consent {
            writeln!(
                out,
                "  mcp server `{}`: {}\n      from {}",
                server.name,
                server.command,
                crate::trust::show_path(&server.origin.display().to_string(), &self.cwd)
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, Env, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("project");
        let home = root.path().join("home");
        fs_err::create_dir_all(cwd.join(".claude")).unwrap();
        fs_err::create_dir_all(&home).unwrap();
        fs_err::write(
            cwd.join(".mcp.json"),
            r#"{"mcpServers":{"echo":{"command":"python3","args":["s.py"]}}}"#,
        )
        .unwrap();
        // The project approving itself counts for nothing.
        fs_err::write(
            cwd.join(".claude/settings.json"),
            r#"{"enableAllProjectMcpServers":true}"#,
        )
        .unwrap();
        let env = Env::from_vars([("HOME".to_owned(), home.display().to_string())]);
        (root, env, cwd)
    }

    fn resolve(env: &Env, cwd: &Path, policy: TrustPolicy) -> SessionSpec {
        let config = DshConfig::empty(&env.dsh_home().unwrap());
        SessionSpec::resolve(Inputs {
            env,
            config: &config,
            flags: &SessionFlags::default(),
            cwd,
            policy,
        })
        .unwrap()
    }

    #[test]
    fn project_servers_wait_for_consent_unless_replayed() {
        let (_root, env, cwd) = project();
        let mut spec = resolve(&env, &cwd, TrustPolicy::Ask);
        assert_eq!(spec.consent.len(), 1);
        assert_eq!(spec.consent[0].name, "echo");
        assert_eq!(spec.consent[0].command, "python3 s.py");
        spec.skip_servers();
        assert!(spec.mcp.servers.is_empty());
        assert!(spec.mcp.notices[0].contains("nobody approved"));

        assert!(resolve(&env, &cwd, TrustPolicy::RunAll).consent.is_empty());

        let mut strict = resolve(&env, &cwd, TrustPolicy::Headless { strict: true });
        let mut err = Vec::new();
        strict.decide_headless(&mut err).unwrap();
        assert!(strict.mcp.servers.is_empty());
        assert!(String::from_utf8(err).unwrap().contains("not starting 1"));

        let mut lenient = resolve(&env, &cwd, TrustPolicy::Headless { strict: false });
        lenient.decide_headless(&mut Vec::new()).unwrap();
        assert_eq!(lenient.mcp.servers.len(), 1);
        assert_eq!(lenient.unconsented.len(), 1);
    }

    #[test]
    fn the_hook_tools_start_no_server_and_show_only_a_given_permission_mode() {
        let (_root, env, cwd) = project();
        let replay = resolve(&env, &cwd, TrustPolicy::RunAll);
        assert_eq!(replay.mcp.servers.len(), 1);
        assert_eq!(
            replay.sources.permission_mode,
            Some(SessionMode::Configured(Mode::BypassPermissions))
        );
        assert_eq!(replay.mode.mode(), Mode::BypassPermissions);

        let tools = resolve(&env, &cwd, TrustPolicy::HookTools(HookToolsTrust::TrustAll));
        assert!(tools.consent.is_empty());
        assert!(tools.untrusted_hooks.is_empty());
        // No server starts, but MCP tool events still name theirs.
        assert!(tools.mcp.servers.is_empty());
        assert_eq!(tools.sources.mcp_servers.len(), 1);
        // The permission stage runs replay's fallback; hooks do not see it.
        assert_eq!(tools.mode, SessionMode::Configured(Mode::BypassPermissions));
        assert_eq!(tools.sources.permission_mode, None);

        let mut flags = SessionFlags::default();
        flags.permissions.permission_mode = Some(Mode::Plan);
        let config = DshConfig::empty(&env.dsh_home().unwrap());
        let given = SessionSpec::resolve(Inputs {
            env: &env,
            config: &config,
            flags: &flags,
            cwd: &cwd,
            policy: TrustPolicy::HookTools(HookToolsTrust::TrustAll),
        })
        .unwrap();
        assert_eq!(given.mode, SessionMode::Requested(Mode::Plan));
        assert_eq!(
            given.sources.permission_mode,
            Some(SessionMode::Requested(Mode::Plan))
        );
        // `--dangerously-skip-permissions` is the same request.
        let mut flags = SessionFlags::default();
        flags.permissions.dangerously_skip_permissions = true;
        let skip = SessionSpec::resolve(Inputs {
            env: &env,
            config: &config,
            flags: &flags,
            cwd: &cwd,
            policy: TrustPolicy::Ask,
        })
        .unwrap();
        assert_eq!(skip.mode, SessionMode::Requested(Mode::BypassPermissions));
        assert_eq!(skip.permissions.permissions.mode(), skip.mode.mode());
    }

    #[test]
    fn the_hook_tools_decide_untrusted_hooks_in_the_resolution() {
        let (_root, env, cwd) = project();
        fs_err::write(
            cwd.join(".claude/settings.json"),
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo project-stop"}]}]}}"#,
        )
        .unwrap();
        let config = DshConfig::empty(&env.dsh_home().unwrap());
        let tools = |trust| {
            SessionSpec::resolve(Inputs {
                env: &env,
                config: &config,
                flags: &SessionFlags::default(),
                cwd: &cwd,
                policy: TrustPolicy::HookTools(trust),
            })
        };
        let refused = tools(HookToolsTrust::Refuse).err().unwrap().to_string();
        assert!(
            refused.starts_with("refusing to run 1 untrusted project hook(s) without a terminal"),
            "{refused}"
        );
        assert!(refused.contains("echo project-stop"), "{refused}");
        let mut all = tools(HookToolsTrust::TrustAll).unwrap();
        assert!(all.sources.excluded_hooks.is_empty());
        let mut question = Vec::new();
        all.decide_hook_tools(HookToolsTrust::Ask, &mut &b"n\n"[..], &mut question)
            .unwrap();
        let question = String::from_utf8(question).unwrap();
        assert!(question.contains("Trust and run them?"), "{question}");
        assert_eq!(all.sources.excluded_hooks.len(), 1);
    }

    #[test]
    fn the_terminal_question_names_everything_and_this_session_stores_nothing() {
        let (_root, env, cwd) = project();
        fs_err::write(
            cwd.join(".claude/settings.json"),
            r#"{"enableAllProjectMcpServers":true,"permissions":{"allow":["Bash(ls:*)"]},"env":{"PROJECT_VAR":"1"}}"#,
        )
        .unwrap();
        let mut spec = resolve(&env, &cwd, TrustPolicy::Ask);
        let mut out = Vec::new();
        spec.ask_in_terminal(&mut std::io::Cursor::new("maybe\ns\n"), &mut out)
            .unwrap();
        let shown = String::from_utf8(out).unwrap();
        assert!(shown.contains("`echo`: python3 s.py"), "{shown}");
        assert!(shown.contains("allow Bash(ls:*)"), "{shown}");
        assert!(shown.contains("PROJECT_VAR"), "{shown}");
        assert!(shown.contains("Please answer y, s or n."), "{shown}");
        assert!(spec.consent.is_empty());
        assert_eq!(spec.mcp.servers.len(), 1);
        assert_eq!(spec.workspace, WorkspaceTrust::ThisSession);
        // For this session only: the next one asks again.
        assert_eq!(resolve(&env, &cwd, TrustPolicy::Ask).consent.len(), 1);
    }

    #[test]
    fn yes_trusts_the_workspace_as_dsh_hooks_trust_does() {
        let (_root, env, cwd) = project();
        fs_err::write(
            cwd.join(".claude/settings.json"),
            r#"{"permissions":{"allow":["Bash(ls:*)"]},"hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}"#,
        )
        .unwrap();
        let mut spec = resolve(&env, &cwd, TrustPolicy::Ask);
        assert_eq!(spec.untrusted_hooks.len(), 1);
        let mut out = Vec::new();
        spec.ask_in_terminal(&mut std::io::Cursor::new("y\n"), &mut out)
            .unwrap();
        let shown = String::from_utf8(out).unwrap();
        assert!(shown.contains("hooks (1 claude)"), "{shown}");
        assert!(shown.contains("Trusted"), "{shown}");
        // This session: the workspace is trusted and the servers start.
        assert_eq!(spec.workspace, WorkspaceTrust::DshTrust);
        assert!(spec.untrusted_hooks.is_empty());
        assert_eq!(spec.mcp.servers.len(), 1);
        // The next session: nothing to ask.
        let next = resolve(&env, &cwd, TrustPolicy::Ask);
        assert_eq!(next.workspace, WorkspaceTrust::DshTrust);
        assert!(
            next.project_offer().is_empty(),
            "{:?}",
            next.project_offer()
        );
    }

    #[test]
    fn no_declines_hooks_and_servers() {
        let (_root, env, cwd) = project();
        let mut spec = resolve(&env, &cwd, TrustPolicy::Ask);
        let mut out = Vec::new();
        spec.ask_in_terminal(&mut std::io::Cursor::new(""), &mut out)
            .unwrap();
        assert!(spec.mcp.servers.is_empty());
        assert_eq!(spec.workspace, WorkspaceTrust::Untrusted);
        assert!(String::from_utf8(out).unwrap().contains("Not trusted"));
    }

    #[test]
    fn resolve_reads_every_configuration_file_from_disk_once() {
        let (root, env, cwd) = project();
        let home = root.path().join("home");
        for (path, text) in [
            (
                home.join(".claude/settings.json"),
                r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]},"permissions":{"allow":["Read"]}}"#,
            ),
            (
                cwd.join(".claude/settings.local.json"),
                r#"{"permissions":{"deny":["Bash(rm:*)"]},"env":{"A":"1"}}"#,
            ),
            (home.join(".claude.json"), r#"{"projects":{}}"#),
            (
                home.join(".codex/config.toml"),
                "[mcp_servers.c]\ncommand = \"true\"\n",
            ),
            (home.join(".codex/hooks.json"), r#"{"hooks":{}}"#),
            (home.join(".gemini/settings.json"), "{}"),
            (home.join(".dsh/trust.json"), r#"{"version":1,"hooks":{}}"#),
        ] {
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(&path, text).unwrap();
        }
        for policy in [
            TrustPolicy::Ask,
            TrustPolicy::Headless { strict: false },
            TrustPolicy::RunAll,
        ] {
            let spec = resolve(&env, &cwd, policy);
            let reads = spec.read.all_disk_reads();
            let read: Vec<&PathBuf> = reads.iter().map(|(path, _)| path).collect();
            // Permissions, MCP, trust and the dialects all read these.
            for shared in [
                cwd.join(".claude/settings.json"),
                home.join(".claude/settings.json"),
                home.join(".claude.json"),
                home.join(".codex/config.toml"),
            ] {
                assert!(
                    read.contains(&&shared),
                    "{} not read: {reads:?}",
                    shared.display()
                );
            }
            let twice: Vec<_> = reads.iter().filter(|(_, count)| *count > 1).collect();
            assert!(
                twice.is_empty(),
                "{policy:?}: read more than once: {twice:?}"
            );
            // And each JSON file is parsed once: the settings layer stack
            // is the one parse permissions, hooks, `env`, MCP and trust read.
            let parses = spec.read.all_parses();
            for settings in [
                cwd.join(".claude/settings.json"),
                cwd.join(".claude/settings.local.json"),
                home.join(".claude/settings.json"),
                home.join(".claude.json"),
                home.join(".dsh/trust.json"),
                home.join(".codex/hooks.json"),
                // TOML too: the Codex hooks and MCP read one parse.
                home.join(".codex/config.toml"),
            ] {
                assert_eq!(
                    spec.read.parses(&settings),
                    1,
                    "{policy:?}: {} not parsed exactly once: {parses:?}",
                    settings.display()
                );
            }
            let local = spec
                .settings
                .get(&cwd.join(".claude/settings.local.json"))
                .unwrap();
            assert!(local.json.is_some());
            // The workspace is trusted by nobody: the local layer's `env`
            // waits, except where everything configured runs.
            let held = matches!(
                local.disabled,
                Some(dsh_files::settings::DisabledReason::UntrustedWorkspace)
            );
            assert_eq!(held, !policy.runs_all(), "{policy:?}");
        }
    }
}
