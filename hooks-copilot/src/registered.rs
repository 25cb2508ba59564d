//! GitHub Copilot CLI as a registered hook dialect
//! ([`dsh_hooks::registry`]).

use std::path::Path;

use dsh_hooks::BridgePlugin;
use dsh_hooks::lint::Finding;
use dsh_hooks::names::Tabled;
use dsh_hooks::registry::{
    BuiltPlugin, ConfigFile, ConfiguredHook, DialectConfig, DialectSources, FileClaim, HookDialect,
    LintTargets, LoadError, SessionHooks,
};
use dsh_protocol::Dialect;
use serde_json::json;

use crate::config::{EntryStatus, Handler, Program};
use crate::dialect::Copilot;
use crate::{CopilotConfig, CopilotDiscovery};

/// The GitHub Copilot CLI dialect.
#[derive(Debug, Clone, Copy, Default)]
pub struct CopilotDialect;

impl CopilotDialect {
    /// Copilot's discovery for `sources`.
    pub fn discovery(sources: &DialectSources) -> CopilotDiscovery {
        let mut discovery = CopilotDiscovery::new(sources.cwd.clone(), sources.home.clone());
        discovery.copilot_home = sources.var("COPILOT_HOME").map(Into::into);
        discovery.files = sources.files.clone();
        discovery
    }
}

impl HookDialect for CopilotDialect {
    fn id(&self) -> Dialect {
        Dialect::Copilot
    }

    fn display_name(&self) -> &'static str {
        "GitHub Copilot CLI"
    }

    fn config_files(&self, sources: &DialectSources) -> Vec<ConfigFile> {
        CopilotDialect::discovery(sources)
            .files()
            .into_iter()
            .map(|(path, _, layer)| ConfigFile::new(path, layer))
            .collect()
    }

    fn load(&self, sources: &DialectSources) -> Result<Box<dyn DialectConfig>, LoadError> {
        // Never fails: Copilot skips a file it cannot use and so does dsh
        // (with a notice; `dsh hooks check` reports it as an error).
        Ok(Box::new(crate::load(&CopilotDialect::discovery(sources))))
    }

    fn lint_targets(&self, sources: &DialectSources) -> LintTargets {
        let discovery = CopilotDialect::discovery(sources);
        LintTargets {
            files: crate::lint::lint_targets(&discovery),
            ..crate::lint::claude_settings_findings(&discovery)
        }
    }

    fn claims_file(&self, path: &Path) -> Option<FileClaim> {
        crate::lint::is_copilot_file(path).then_some(FileClaim::Path)
    }

    fn lint_file(&self, path: &Path, project: &Path) -> Vec<Finding> {
        crate::lint::lint_file(path, project)
    }

    fn event_names(&self) -> Vec<&'static str> {
        crate::CopilotEvent::all()
            .map(crate::CopilotEvent::as_str)
            .collect()
    }

    fn test_event(&self, event: &str) -> Option<&'static str> {
        use crate::CopilotEvent as E;
        // The camelCase names of the events the bridge fires; their
        // PascalCase names are Claude Code's.
        let (event, mode) = crate::CopilotEvent::parse(event)?;
        let unfired = matches!(
            event,
            E::UserPromptTransformed
                | E::SubagentStart
                | E::SubagentStop
                | E::Notification
                | E::ErrorOccurred
                | E::PreMcpToolCall
        );
        (mode == crate::Mode::Camel && !unfired).then(|| event.alias())?
    }

    fn hook_tool_name(&self, dsh_tool: &str) -> String {
        crate::tools::native_name(dsh_tool).into_owned()
    }

    fn dsh_tool_name(&self, hook_tool: &str) -> Result<Option<String>, String> {
        // Copilot's own names; `bash`, `edit`, `glob`, `grep` are dsh's too.
        Ok(crate::tools::NATIVE
            .is_dialect_name(hook_tool)
            .then(|| crate::tools::dsh_name(hook_tool).to_owned()))
    }

    fn dsh_arguments(
        &self,
        dsh_tool: &str,
        tool_input: &serde_json::Value,
    ) -> Option<serde_json::Value> {
        Some(crate::tools::arguments_from(dsh_tool, tool_input))
    }
}

/// What `dsh hooks trust` pins of an entry: change any of it and the hook
/// asks again.
fn identity(handler: &Handler) -> serde_json::Value {
    let program = match &handler.program {
        Program::Bash(command) => json!({"bash": command}),
        Program::Exec { program, args } => json!({"exec": program, "args": args}),
        Program::Powershell(command) => json!({"powershell": command}),
    };
    json!({
        "dialect": "copilot",
        "file": handler.file.display().to_string(),
        "event": handler.event_name(),
        "matcher": handler.matcher,
        "program": program,
        "cwd": handler.cwd,
        "env": handler.env,
        "timeout_sec": handler.timeout_sec,
    })
}

impl DialectConfig for CopilotConfig {
    fn dialect(&self) -> Dialect {
        Dialect::Copilot
    }

    fn clone_box(&self) -> Box<dyn DialectConfig> {
        Box::new(self.clone())
    }

    fn hooks(&self) -> Vec<ConfiguredHook> {
        self.handlers
            .iter()
            .map(|handler| ConfiguredHook {
                event: handler.event_name().to_owned(),
                matcher: handler.matcher.clone(),
                timeout_secs: handler.timeout_sec as f64,
                file: handler.file.clone(),
                origin: handler.origin.clone(),
                identity: identity(handler),
                // Excluded by dsh's trust still counts: that is what asking
                // is for.
                active: handler.status != EntryStatus::Disabled,
                status: match &handler.status {
                    EntryStatus::Active => "active".to_owned(),
                    EntryStatus::Disabled => "disabled: disableAllHooks".to_owned(),
                    EntryStatus::Excluded(why) => format!("disabled: {why}"),
                },
                ..ConfiguredHook::command(handler.source, handler.program.text())
            })
            .collect()
    }

    fn notices(&self) -> Vec<String> {
        let skipped = |fatal| match fatal {
            true => " (the file is not loaded, as Copilot CLI skips it)",
            false => "",
        };
        let mut notices: Vec<String> = (self.problems.iter())
            .map(|p| format!("{}: {}{}", p.file.display(), p.message, skipped(p.fatal)))
            .collect();
        if let Some(file) = &self.disabled_by {
            notices.push(format!(
                "disableAllHooks in {} turns every Copilot hook off",
                file.display()
            ));
        }
        notices
    }

    fn disable_origins(&mut self, origins: &[String], reason: &str) {
        for handler in &mut self.handlers {
            if handler.is_active() && origins.contains(&handler.origin) {
                handler.status = EntryStatus::Excluded(reason.to_owned());
            }
        }
    }

    fn into_plugin(self: Box<Self>, session: &SessionHooks<'_>) -> Result<BuiltPlugin, LoadError> {
        let runner = session.runner.clone();
        Ok(BuiltPlugin::when(self.has_active(), || {
            let copilot = Copilot {
                user_dir: self.discovery.user_dir(),
                repo: self.discovery.repo_root(),
                shell: self.discovery.shell.clone(),
                handlers: self.handlers,
            };
            BridgePlugin::shared(copilot, runner)
        }))
    }
}
