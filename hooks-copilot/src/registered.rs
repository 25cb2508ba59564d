//! GitHub Copilot CLI as a registered hook dialect
//! ([`dsh_hooks::registry`]).

use std::path::Path;
use std::sync::Arc;

use dsh_hooks::BridgePlugin;
use dsh_hooks::entries::{Entry, EntryConfig, EntryStatus, FileProblem};
use dsh_hooks::lint::Finding;
use dsh_hooks::names::Tabled;
use dsh_hooks::registry::{
    ConfigFile, ConfiguredHook, DialectConfig, DialectSources, FileClaim, HookDialect, LintTargets,
    LoadError, RunsIn, SessionHooks,
};
use dsh_protocol::Dialect;
use dsh_seams::Plugin;
use serde_json::json;

use crate::config::{Handler, Program};
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

    fn test_payload(&self, payload: &str) -> Option<String> {
        crate::test_payload::in_test_names(payload)
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

impl Entry for Handler {
    type Off = &'static str;

    fn status(&self) -> &EntryStatus<&'static str> {
        &self.status
    }

    fn status_mut(&mut self) -> &mut EntryStatus<&'static str> {
        &mut self.status
    }

    fn row(&self) -> ConfiguredHook {
        ConfiguredHook {
            event: self.event_name().to_owned(),
            matcher: self.matcher.clone(),
            timeout_secs: self.timeout_sec as f64,
            file: self.file.clone(),
            origin: self.origin.clone(),
            identity: identity(self),
            // Trust pins what runs there, with Copilot's variables.
            runs_in: RunsIn {
                dir: Some(self.working_dir()),
                project: Some(self.repo.clone()),
                env: self.vars(),
            },
            ..ConfiguredHook::command(self.source, self.program.text())
        }
    }
}

impl EntryConfig for CopilotConfig {
    type Entry = Handler;
    const DIALECT: Dialect = Dialect::Copilot;

    fn entries(&self) -> &[Handler] {
        &self.handlers
    }

    fn entries_mut(&mut self) -> &mut [Handler] {
        &mut self.handlers
    }

    fn notices(&self) -> Vec<String> {
        let mut notices: Vec<String> = self.problems.iter().map(FileProblem::notice).collect();
        if let Some(file) = &self.disabled_by {
            notices.push(format!(
                "disableAllHooks in {} turns every Copilot hook off",
                file.display()
            ));
        }
        notices
    }

    fn plugin(self, session: &SessionHooks<'_>) -> Arc<dyn Plugin> {
        let copilot = Copilot {
            user_dir: self.discovery.user_dir(),
            shell: self.discovery.shell.clone(),
            handlers: self.handlers,
        };
        BridgePlugin::shared(copilot, session.runner.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_hooks::registry::HookScope;
    use pretty_assertions::assert_eq;

    fn write(path: &Path, text: &str) {
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, text).unwrap();
    }

    fn rows(config: &dyn DialectConfig) -> Vec<(String, bool, String)> {
        (config.hooks().into_iter())
            .map(|hook| (hook.status, hook.active, hook.identity.to_string()))
            .collect()
    }

    /// `dsh hooks list` rows and trust identities: the identity bytes are
    /// what `trust.json` files hold hashes of, so they never change.
    #[test]
    fn listing_rows_statuses_and_trust_identities() {
        let dir = tempfile::tempdir().unwrap();
        let (project, home) = (dir.path().join("p"), dir.path().join("h"));
        fs_err::create_dir_all(project.join(".git")).unwrap();
        let file = project.join(".github/hooks/h.json");
        write(
            &file,
            r#"{"version":1,"hooks":{"preToolUse":[{"bash":"a","cwd":"s","env":{"K":"v"},"timeoutSec":5}],
                "PostToolUse":[{"matcher":"Bash","hooks":[{"exec":"/bin/x","args":["1"]}]}]}}"#,
        );
        let mut config: Box<dyn DialectConfig> =
            Box::new(crate::load(&CopilotDiscovery::new(&project, &home)));
        assert_eq!(config.dialect(), Dialect::Copilot);
        let first = format!("{}#hooks.preToolUse[0]", file.display());
        config.disable_origins(&[first.clone(), "elsewhere".to_owned()], "not trusted");
        let hooks = config.hooks();
        assert_eq!(
            (hooks[0].origin.as_str(), hooks[0].handler.as_str()),
            (first.as_str(), "command: a")
        );
        assert_eq!(
            (hooks[1].timeout_secs, hooks[1].scope),
            (30.0, HookScope::Project)
        );
        let f = file.display();
        assert_eq!(
            rows(config.as_ref()),
            [
                (
                    "disabled: not trusted".to_owned(),
                    true,
                    format!(
                        r#"{{"dialect":"copilot","file":"{f}","event":"preToolUse","matcher":null,"program":{{"bash":"a"}},"cwd":"s","env":[["K","v"]],"timeout_sec":5}}"#
                    )
                ),
                (
                    "active".to_owned(),
                    true,
                    format!(
                        r#"{{"dialect":"copilot","file":"{f}","event":"PostToolUse","matcher":"Bash","program":{{"exec":"/bin/x","args":["1"]}},"cwd":null,"env":[],"timeout_sec":30}}"#
                    )
                ),
            ]
        );
        write(
            &home.join(".copilot/settings.json"),
            r#"{"disableAllHooks":true}"#,
        );
        let config = crate::load(&CopilotDiscovery::new(&project, &home));
        let statuses: Vec<_> = rows(&config).into_iter().map(|(s, a, _)| (s, a)).collect();
        assert_eq!(
            statuses,
            vec![("disabled: disableAllHooks".to_owned(), false); 2]
        );
        assert!(DialectConfig::notices(&config)[0].starts_with("disableAllHooks in "));
        assert!(!config.handlers.iter().any(|h| h.status.is_active()));
    }
}
