//! Claude Code as a registered hook dialect ([`dsh_hooks::registry`]).

use std::path::Path;
use std::sync::Arc;

use dsh_hooks::lint::Finding;
use dsh_hooks::project_settings::HeldBack;
use dsh_hooks::registry::{
    BuiltPlugin, ConfigFile, ConfiguredHook, DialectConfig, DialectSources, FileClaim, HookDialect,
    HookScope, LintTargets, LoadError, SessionHooks,
};
use dsh_protocol::Dialect;

use crate::events::HookEvent;
use crate::{ClaudeConfig, ClaudeDiscovery, SdkHookSet};

/// The Claude Code dialect. A front end hands it the Claude Agent SDK's
/// registered callbacks as an attachment ([`SdkHookSet`], keyed `claude`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaudeDialect;

const NAME: &str = "Claude Code";

impl ClaudeDialect {
    /// Claude Code's discovery for `sources` (`--settings` and
    /// `--plugin-dir` are Claude Code's flags).
    pub fn discovery(sources: &DialectSources) -> ClaudeDiscovery {
        let mut discovery =
            ClaudeDiscovery::new(sources.cwd.clone(), sources.home.clone(), &sources.dsh_home);
        discovery.extra_settings = sources.settings_files.clone();
        discovery.plugin_dirs = sources.plugin_dirs.clone();
        discovery.project_settings = sources.project_settings;
        discovery.files = sources.files.clone();
        discovery.settings = sources.settings_stack.clone();
        discovery
    }
}

impl HookDialect for ClaudeDialect {
    fn id(&self) -> Dialect {
        Dialect::Claude
    }

    fn display_name(&self) -> &'static str {
        NAME
    }

    fn config_files(&self, sources: &DialectSources) -> Vec<ConfigFile> {
        let mut files: Vec<ConfigFile> = ClaudeDialect::discovery(sources)
            .candidates()
            .into_iter()
            .map(|(path, source)| ConfigFile {
                path,
                layer: source.as_str(),
            })
            .collect();
        // Lowest precedence first.
        files.reverse();
        files
    }

    fn load(&self, sources: &DialectSources) -> Result<Box<dyn DialectConfig>, LoadError> {
        crate::load(&ClaudeDialect::discovery(sources))
            .map(|config| Box::new(config) as Box<dyn DialectConfig>)
            .map_err(|error| LoadError::loading(NAME, error))
    }

    fn lint_targets(&self, sources: &DialectSources) -> LintTargets {
        let targets = crate::lint::lint_targets(&ClaudeDialect::discovery(sources));
        LintTargets {
            files: targets.settings,
            loaded_files: targets.plugins,
            findings: targets.load_findings,
        }
    }

    fn claims_file(&self, path: &Path) -> Option<FileClaim> {
        // A plugin's `hooks/hooks.json` is Claude's format, not Codex's
        // file of the same name; any other file nobody claims is settings.
        Some(if crate::lint::is_plugin_hook_file(path) {
            FileClaim::Path
        } else {
            FileClaim::Fallback
        })
    }

    fn lint_file(&self, path: &Path, project: &Path) -> Vec<Finding> {
        crate::lint::lint_file(path, project)
    }

    fn event_names(&self) -> Vec<&'static str> {
        HookEvent::ALL.iter().map(|event| event.as_str()).collect()
    }

    fn hook_tool_name(&self, dsh_tool: &str) -> String {
        crate::payload::cc_tool_name(dsh_tool)
    }

    fn dsh_tool_name(&self, hook_tool: &str) -> Result<Option<String>, String> {
        let tool = crate::payload::dsh_tool_name(hook_tool);
        Ok((tool != hook_tool).then(|| tool.to_owned()))
    }
}

impl DialectConfig for ClaudeConfig {
    fn dialect(&self) -> Dialect {
        Dialect::Claude
    }

    fn clone_box(&self) -> Box<dyn DialectConfig> {
        Box::new(self.clone())
    }

    fn hooks(&self) -> Vec<ConfiguredHook> {
        self.handlers()
            .iter()
            .zip(self.entries())
            .map(|(handler, entry)| ConfiguredHook {
                command: handler.command_text(),
                identity: serde_json::to_value(handler.trust_identity()).unwrap_or_default(),
                scope: if handler.source.is_project() {
                    HookScope::Project
                } else {
                    HookScope::User
                },
                file: handler.file.clone(),
                active: entry.status == "active",
                event: entry.event,
                matcher: entry.matcher,
                handler: entry.handler,
                timeout_secs: entry.timeout_secs,
                origin: entry.origin,
                status: entry.status,
                plugin: entry.plugin,
                runs_in: Default::default(),
            })
            .collect()
    }

    fn held_back(&self) -> Vec<HeldBack> {
        self.held_back.clone()
    }

    fn notices(&self) -> Vec<String> {
        ClaudeConfig::notices(self)
    }

    fn disable_origins(&mut self, origins: &[String], reason: &str) {
        ClaudeConfig::disable_origins(self, origins, reason);
    }

    fn into_plugin(
        mut self: Box<Self>,
        session: &SessionHooks<'_>,
    ) -> Result<BuiltPlugin, LoadError> {
        if let Some(mode) = session.permission_mode {
            self.options.permission_mode = mode.to_owned();
        }
        self.options.mcp_servers = session.mcp_servers.to_vec();
        let mut notices = Vec::new();
        if let Some(sdk) = session.attachments.get::<SdkHookSet>(Dialect::Claude) {
            let sdk_notices = self
                .add_sdk_hooks(&sdk.hooks, Arc::clone(&sdk.transport))
                .map_err(|error| LoadError::new("cannot register the SDK's hooks", error))?;
            notices.extend(
                sdk_notices
                    .into_iter()
                    .map(|notice| format!("sdk: {notice}")),
            );
        }
        // Custom agents (`.claude/agents/*.md`) reach the `agent` tool
        // through the bridge, so it is registered for them too.
        let plugin = (!self.handlers().is_empty() || !self.agents.is_empty())
            .then(|| ClaudeConfig::into_plugin(*self, session.runner.clone()));
        Ok(BuiltPlugin { plugin, notices })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_nobody_else_claims_is_claude_settings() {
        let dir = std::env::temp_dir();
        assert_eq!(
            ClaudeDialect.claims_file(&dir.join("settings.json")),
            Some(FileClaim::Fallback)
        );
    }
}
