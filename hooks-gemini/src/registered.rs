//! Gemini CLI as a registered hook dialect ([`dsh_hooks::registry`]).

use std::path::Path;
use std::sync::Arc;

use dsh_hooks::lint::Finding;
use dsh_hooks::names::Tabled;
use dsh_hooks::project_settings::HeldBack;
use dsh_hooks::registry::{
    ConfigFile, ConfiguredHook, DialectConfig, DialectSources, FileClaim, HookDialect, LintTargets,
    LoadError, RunsIn, SessionHooks,
};
use dsh_protocol::Dialect;
use dsh_seams::Plugin;

use crate::config::{EntryStatus, Handler, Off};
use crate::{GeminiConfig, GeminiDiscovery, GeminiEvent};
use dsh_hooks::entries::{Entry, EntryConfig, Layer};

/// The Gemini CLI dialect.
#[derive(Debug, Clone, Copy, Default)]
pub struct GeminiDialect;

impl GeminiDialect {
    /// Gemini's discovery for `sources`.
    pub fn discovery(sources: &DialectSources) -> GeminiDiscovery {
        let mut discovery = GeminiDiscovery::new(sources.cwd.clone(), sources.home.clone());
        discovery.trust_workspace = sources.var("GEMINI_CLI_TRUST_WORKSPACE") == Some("true");
        discovery.project_settings = sources.project_settings;
        discovery.files = sources.files.clone();
        discovery
    }
}

impl HookDialect for GeminiDialect {
    fn id(&self) -> Dialect {
        Dialect::Gemini
    }

    fn display_name(&self) -> &'static str {
        "Gemini CLI"
    }

    fn config_files(&self, sources: &DialectSources) -> Vec<ConfigFile> {
        let discovery = GeminiDialect::discovery(sources);
        vec![
            ConfigFile::new(discovery.user_settings(), Layer::User),
            ConfigFile::new(discovery.project_settings(), Layer::Project),
        ]
    }

    fn load(&self, sources: &DialectSources) -> Result<Box<dyn DialectConfig>, LoadError> {
        crate::load(&GeminiDialect::discovery(sources))
            .map(|config| Box::new(config) as Box<dyn DialectConfig>)
            .map_err(|error| LoadError::loading("Gemini CLI", error))
    }

    fn lint_targets(&self, sources: &DialectSources) -> LintTargets {
        let discovery = GeminiDialect::discovery(sources);
        LintTargets {
            files: crate::lint::lint_targets(&discovery),
            findings: folder_trust_finding(&discovery, &sources.cwd)
                .into_iter()
                .collect(),
            ..LintTargets::default()
        }
    }

    fn claims_file(&self, path: &Path) -> Option<FileClaim> {
        crate::lint::is_gemini_settings(path).then_some(FileClaim::Path)
    }

    fn lint_file(&self, path: &Path, project: &Path) -> Vec<Finding> {
        crate::lint::lint_file(path, project)
    }

    fn event_names(&self) -> Vec<&'static str> {
        GeminiEvent::all().map(GeminiEvent::as_str).collect()
    }

    fn test_event(&self, event: &str) -> Option<&'static str> {
        // Gemini CLI's names for the same seams (the rest are Claude's).
        match GeminiEvent::parse(event)? {
            GeminiEvent::BeforeTool => Some("PreToolUse"),
            GeminiEvent::AfterTool => Some("PostToolUse"),
            GeminiEvent::BeforeAgent => Some("UserPromptSubmit"),
            GeminiEvent::AfterAgent => Some("Stop"),
            GeminiEvent::PreCompress => Some("PreCompact"),
            GeminiEvent::SessionStart
            | GeminiEvent::SessionEnd
            | GeminiEvent::Notification
            | GeminiEvent::BeforeModel
            | GeminiEvent::AfterModel
            | GeminiEvent::BeforeToolSelection => None,
        }
    }

    fn hook_tool_name(&self, dsh_tool: &str) -> String {
        crate::tools::hook_tool_name(dsh_tool).to_owned()
    }

    fn dsh_tool_name(&self, hook_tool: &str) -> Result<Option<String>, String> {
        let tool = crate::tools::dsh_tool_name(hook_tool);
        Ok((tool != hook_tool).then(|| tool.to_owned()))
    }

    fn dsh_arguments(
        &self,
        dsh_tool: &str,
        tool_input: &serde_json::Value,
    ) -> Option<serde_json::Value> {
        // Gemini's argument names (`start_line`, `allow_multiple`).
        Some(crate::tools::arguments_from_tool_input(
            dsh_tool,
            &serde_json::json!({}),
            tool_input,
        ))
    }
}

impl Entry for Handler {
    type Off = Off;

    fn status(&self) -> &EntryStatus {
        &self.status
    }

    fn status_mut(&mut self) -> &mut EntryStatus {
        &mut self.status
    }

    fn row(&self) -> ConfiguredHook {
        ConfiguredHook {
            event: self.event.as_str().to_owned(),
            matcher: self.matcher.clone(),
            timeout_secs: self.timeout_ms as f64 / 1000.0,
            file: self.file.clone(),
            origin: self.origin.clone(),
            identity: serde_json::to_value(self.trust_identity()).unwrap_or_default(),
            // Trust pins what the entry's `env` names (a `BASH_ENV`, a
            // script in a variable).
            runs_in: RunsIn {
                env: self.env.clone(),
                ..RunsIn::default()
            },
            ..ConfiguredHook::command(self.source, self.command.clone())
        }
    }
}

impl EntryConfig for GeminiConfig {
    type Entry = Handler;
    const DIALECT: Dialect = Dialect::Gemini;

    fn entries(&self) -> &[Handler] {
        &self.handlers
    }

    fn entries_mut(&mut self) -> &mut [Handler] {
        &mut self.handlers
    }

    fn held_back(&self) -> Vec<HeldBack> {
        self.held_back.clone()
    }

    fn notices(&self) -> Vec<String> {
        GeminiConfig::notices(self)
    }

    fn plugin(self, session: &SessionHooks<'_>) -> Arc<dyn Plugin> {
        GeminiConfig::into_plugin(self, session.runner.clone())
    }
}

/// Gemini CLI runs no hook in a folder it does not trust: the project's
/// Gemini hooks are inactive, which the files alone do not show.
fn folder_trust_finding(discovery: &GeminiDiscovery, cwd: &Path) -> Option<Finding> {
    let config = crate::config::load(discovery).ok()?;
    let project_hooks = config
        .handlers()
        .iter()
        .filter(|handler| handler.source == Layer::Project)
        .count();
    if config.folder_trusted() || project_hooks == 0 {
        return None;
    }
    Some(Finding {
        severity: dsh_hooks::lint::Severity::Warning,
        code: "gemini-folder-untrusted",
        file: cwd.join(".gemini").join("settings.json"),
        position: None,
        at: None,
        message: format!(
            "{project_hooks} Gemini hook(s) inactive: {}",
            config.untrusted_folder_notice()
        ),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn rows(config: &dyn DialectConfig) -> Vec<(String, bool, f64)> {
        (config.hooks().into_iter())
            .map(|hook| (hook.status, hook.active, hook.timeout_secs))
            .collect()
    }

    /// `dsh hooks list` rows: Gemini's own reasons, dsh's trust reason as
    /// it is, and whether trusting the hook would make it run.
    #[test]
    fn listing_rows_say_why_a_hook_does_not_run() {
        let dir = tempfile::tempdir().unwrap();
        let (project, home) = (dir.path().join("p"), dir.path().join("h"));
        let file = project.join(".gemini/settings.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            &file,
            r#"{"hooks":{"BeforeTool":[{"hooks":[{"type":"command","command":"a","timeout":5000},{"type":"command","command":"b"}]}]}}"#,
        )
        .unwrap();
        let mut discovery = GeminiDiscovery::new(&project, &home);
        let load = |discovery: &GeminiDiscovery| -> Box<dyn DialectConfig> {
            Box::new(crate::load(discovery).unwrap())
        };
        let untrusted = "not run (folder not trusted by Gemini CLI)".to_owned();
        assert_eq!(
            rows(load(&discovery).as_ref()),
            [(untrusted.clone(), false, 5.0), (untrusted, false, 60.0)]
        );
        discovery.trust_workspace = true;
        let mut config = load(&discovery);
        assert_eq!(config.dialect(), Dialect::Gemini);
        let first = format!("{}#hooks.BeforeTool[0].hooks[0]", file.display());
        config.disable_origins(&[first], "project hook not trusted");
        assert_eq!(
            rows(config.as_ref()),
            [
                ("project hook not trusted".to_owned(), true, 5.0),
                ("active".to_owned(), true, 60.0)
            ]
        );
        let hook = &config.hooks()[1];
        assert_eq!(
            (hook.handler.as_str(), hook.identity["command"].as_str()),
            ("command: b", Some("b"))
        );
    }
}
