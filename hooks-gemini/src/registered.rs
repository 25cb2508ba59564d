//! Gemini CLI as a registered hook dialect ([`dsh_hooks::registry`]).

use std::path::Path;

use dsh_hooks::lint::Finding;
use dsh_hooks::names::Tabled;
use dsh_hooks::project_settings::HeldBack;
use dsh_hooks::registry::{
    BuiltPlugin, ConfigFile, ConfiguredHook, DialectConfig, DialectSources, FileClaim, HookDialect,
    LintTargets, LoadError, SessionHooks,
};
use dsh_protocol::Dialect;

use crate::config::EntryStatus;
use crate::{GeminiConfig, GeminiDiscovery, GeminiEvent};
use dsh_hooks::entries::Layer;

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

impl DialectConfig for GeminiConfig {
    fn dialect(&self) -> Dialect {
        Dialect::Gemini
    }

    fn clone_box(&self) -> Box<dyn DialectConfig> {
        Box::new(self.clone())
    }

    fn hooks(&self) -> Vec<ConfiguredHook> {
        self.handlers()
            .iter()
            .map(|handler| ConfiguredHook {
                event: handler.event.as_str().to_owned(),
                matcher: handler.matcher.clone(),
                timeout_secs: handler.timeout_ms as f64 / 1000.0,
                file: handler.file.clone(),
                origin: handler.origin.clone(),
                identity: serde_json::to_value(handler.trust_identity())
                    .unwrap_or(serde_json::Value::Null),
                // Excluded by dsh's trust still counts: that is what asking is for.
                active: matches!(
                    handler.status,
                    EntryStatus::Active | EntryStatus::Excluded(_)
                ),
                status: handler.status.as_str().to_owned(),
                ..ConfiguredHook::command(handler.source, handler.command.clone())
            })
            .collect()
    }

    fn held_back(&self) -> Vec<HeldBack> {
        self.held_back.clone()
    }

    fn notices(&self) -> Vec<String> {
        GeminiConfig::notices(self)
    }

    fn disable_origins(&mut self, origins: &[String], reason: &str) {
        for handler in &mut self.handlers {
            if handler.is_active() && origins.contains(&handler.origin) {
                handler.status = EntryStatus::Excluded(reason.to_owned());
            }
        }
    }

    fn into_plugin(self: Box<Self>, session: &SessionHooks<'_>) -> Result<BuiltPlugin, LoadError> {
        let active = self.handlers().iter().any(|handler| handler.is_active());
        let runner = session.runner.clone();
        Ok(BuiltPlugin::when(active, || {
            GeminiConfig::into_plugin(*self, runner)
        }))
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
