//! Codex as a registered hook dialect ([`dsh_hooks::registry`]).

use std::path::{Path, PathBuf};

use dsh_hooks::lint::Finding;
use dsh_hooks::names::Tabled;
use dsh_hooks::project_settings::HeldBack;
use dsh_hooks::registry::{
    BuiltPlugin, ConfigFile, ConfiguredHook, DialectConfig, DialectSources, FileClaim, HookDialect,
    HookScope, LintTargets, ListFact, LoadError, SessionHooks,
};
use dsh_protocol::Dialect;

use crate::{CodexConfig, CodexDiscovery, CodexEvent, LayerSource, TrustPolicy, TrustState};

/// The Codex dialect.
#[derive(Debug, Clone, Copy, Default)]
pub struct CodexDialect;

const NAME: &str = "Codex";

impl CodexDialect {
    /// Codex's discovery for `sources` (`CODEX_HOME` from the session's
    /// environment).
    pub fn discovery(sources: &DialectSources) -> CodexDiscovery {
        let mut discovery = CodexDiscovery::new(sources.cwd.clone(), sources.home.clone());
        discovery.codex_home = Some(
            sources
                .var("CODEX_HOME")
                .map_or_else(|| sources.home.join(".codex"), PathBuf::from),
        );
        discovery.project_settings = sources.project_settings;
        discovery.files = sources.files.clone();
        discovery
    }
}

impl HookDialect for CodexDialect {
    fn id(&self) -> Dialect {
        Dialect::Codex
    }

    fn display_name(&self) -> &'static str {
        NAME
    }

    fn config_files(&self, sources: &DialectSources) -> Vec<ConfigFile> {
        let discovery = CodexDialect::discovery(sources);
        let codex_home = discovery.codex_home();
        crate::lint::lint_targets(&discovery)
            .into_iter()
            .map(|path| {
                let layer = if discovery
                    .managed_dir
                    .as_ref()
                    .is_some_and(|dir| path.starts_with(dir))
                {
                    "managed"
                } else if path.starts_with(&codex_home) {
                    "user"
                } else {
                    "project"
                };
                ConfigFile { path, layer }
            })
            .collect()
    }

    fn load(&self, sources: &DialectSources) -> Result<Box<dyn DialectConfig>, LoadError> {
        crate::load(&CodexDialect::discovery(sources))
            .map(|config| Box::new(config) as Box<dyn DialectConfig>)
            .map_err(|error| LoadError::loading(NAME, error))
    }

    fn lint_targets(&self, sources: &DialectSources) -> LintTargets {
        LintTargets {
            files: crate::lint::lint_targets(&CodexDialect::discovery(sources)),
            ..LintTargets::default()
        }
    }

    fn claims_file(&self, path: &Path) -> Option<FileClaim> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let in_codex_dir = path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|dir| dir == ".codex");
        (name == "hooks.json" || name.ends_with(".toml") || in_codex_dir).then_some(FileClaim::Name)
    }

    fn lint_file(&self, path: &Path, project: &Path) -> Vec<Finding> {
        crate::lint::lint_file(path, project)
    }

    fn event_names(&self) -> Vec<&'static str> {
        CodexEvent::all().map(CodexEvent::as_str).collect()
    }

    fn hook_tool_name(&self, dsh_tool: &str) -> String {
        crate::tools::hook_tool_name(dsh_tool).to_owned()
    }

    fn dsh_tool_name(&self, hook_tool: &str) -> Result<Option<String>, String> {
        match crate::tools::dsh_tool(hook_tool) {
            crate::tools::DshTool::Tool(tool) => Ok((tool != hook_tool).then(|| tool.to_owned())),
            crate::tools::DshTool::WriteOrEdit => Err(
                "`apply_patch` payloads cannot be mapped back to a dsh call; use --tool Write or --tool Edit with their arguments".to_owned(),
            ),
        }
    }
}

impl DialectConfig for CodexConfig {
    fn dialect(&self) -> Dialect {
        Dialect::Codex
    }

    fn clone_box(&self) -> Box<dyn DialectConfig> {
        Box::new(self.clone())
    }

    fn hooks(&self) -> Vec<ConfiguredHook> {
        self.entries()
            .into_iter()
            .map(|entry| {
                let command = entry
                    .command
                    .clone()
                    .unwrap_or_else(|| format!("<{} hook>", entry.handler));
                let handler = match &entry.command {
                    Some(command) if entry.is_async => format!("command (async): {command}"),
                    Some(command) => format!("command: {command}"),
                    None => entry.handler.clone(),
                };
                ConfiguredHook {
                    identity: serde_json::to_value(entry.trust_identity()).unwrap_or_default(),
                    file: entry.file(),
                    scope: if entry.source != LayerSource::Project {
                        HookScope::User
                    } else if entry.trust == TrustState::Trusted {
                        HookScope::TrustedByDialect
                    } else {
                        HookScope::Project
                    },
                    active: entry.status.is_active(),
                    status: entry.status.listing(),
                    event: entry.event,
                    matcher: entry.matcher,
                    command,
                    handler,
                    timeout_secs: entry.timeout_secs as f64,
                    origin: entry.origin,
                    plugin: entry.plugin,
                    runs_in: Default::default(),
                }
            })
            .collect()
    }

    fn held_back(&self) -> Vec<HeldBack> {
        self.held_back.clone()
    }

    fn notices(&self) -> Vec<String> {
        CodexConfig::notices(self)
    }

    fn disable_origins(&mut self, origins: &[String], reason: &str) {
        CodexConfig::disable_origins(self, origins, reason);
    }

    fn list_facts(&self) -> Vec<ListFact> {
        // Codex's approval policy and sandbox: dsh enforces no sandbox, and
        // says so whatever the configuration asks for.
        let approval = self.approval();
        // The line only where Codex configuration says something (hooks, an
        // approval policy or a sandbox mode).
        let configured =
            approval.policy.is_some() || approval.sandbox.is_some() || !self.is_empty();
        vec![ListFact {
            key: "codex_approval".to_owned(),
            json: serde_json::json!({
                "approval_policy": approval.policy.as_ref().map(|p| p.value.as_str()),
                "sandbox_mode": approval.sandbox.as_ref().map(|s| s.value.as_str()),
                "sandbox_enforced": false,
                "summary": approval.describe(),
            }),
            text: if configured {
                format!("codex: {}", approval.describe())
            } else {
                String::new()
            },
        }]
    }

    fn into_plugin(self: Box<Self>, session: &SessionHooks<'_>) -> Result<BuiltPlugin, LoadError> {
        let policy = if session.run_untrusted {
            TrustPolicy::RunAll
        } else {
            TrustPolicy::TrustedOnly
        };
        // The session's mode when it was asked for; otherwise Codex's own
        // (from its approval policy).
        let mode = session
            .permission_mode
            .filter(|_| session.permission_mode_requested);
        let plugin = (!self.is_empty())
            .then(|| self.plugin(session.runner.clone(), policy, mode.map(str::to_owned)));
        Ok(BuiltPlugin {
            plugin,
            notices: Vec::new(),
        })
    }
}
