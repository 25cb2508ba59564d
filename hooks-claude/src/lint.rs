//! `dsh hooks check` for Claude Code settings files: the dialect's schema
//! (events, handler types and fields, matchers), the `permissions` block,
//! settings keys dsh ignores, and the files a session would load, found by
//! this crate's own discovery ([`ClaudeDiscovery`]).
//!
//! The walk over the event table and the shell-command checks are shared
//! with the Codex bridge (`dsh_hooks::lint`); this module supplies Claude
//! Code's [`Rules`].

use std::path::{Path, PathBuf};

use dsh_hooks::lint::{
    Checker, EventInfo, Finding, Rules, Severity, check_hooks, did_you_mean, nearest,
    plugin_root_of,
};
use serde_json::{Map, Value};

use crate::config::{ClaudeDiscovery, without_position};
use crate::events::{EventSupport, STOP_FAILURE_ERRORS};
use crate::output::wire::Field;
use crate::{HookEvent, Matcher};
use permission_rules::PermissionsDocument;

mod permission_rules;
mod settings_keys;

const COMMON_FIELDS: &[&str] = &["type", "timeout", "if", "statusMessage", "once"];
const COMMAND_FIELDS: &[&str] = &["command", "args", "shell", "async", "asyncRewake"];
const HTTP_FIELDS: &[&str] = &["url", "headers", "allowedEnvVars"];

/// Claude Code's schema for the shared walk.
struct ClaudeRules;

impl Rules for ClaudeRules {
    fn tool_name(&self) -> &'static str {
        "Claude Code"
    }

    fn event(&self, c: &mut Checker<'_>, name: &str, at: &str) -> Option<EventInfo> {
        let Some(event) = HookEvent::parse(name) else {
            let suggestion = nearest(name, HookEvent::ALL.iter().map(|e| e.as_str()));
            c.push(
                Severity::Error,
                "unknown-event",
                Some(at.to_owned()),
                Some(name),
                format!(
                    "unknown event `{name}`: Claude Code accepts it but never fires it{}",
                    did_you_mean(suggestion)
                ),
            );
            return None;
        };
        if let EventSupport::NotFired(why) = event.support() {
            c.push(
                Severity::Warning,
                "event-not-fired",
                Some(at.to_owned()),
                Some(name),
                format!("dsh does not fire {name} ({why}); these hooks never run in dsh"),
            );
        }
        Some(EventInfo {
            honours_matcher: event.supports_matcher(),
            exit2_blocks: event.exit2_blocks(),
        })
    }

    fn matcher_error(&self, pattern: &str) -> Option<String> {
        Matcher::compile(Some(pattern)).err().map(|e| e.message)
    }

    fn invalid_matcher_consequence(&self) -> &'static str {
        "dsh refuses to start with it"
    }

    fn matcher_matches(&self, pattern: &str, value: &str) -> bool {
        // An invalid regex is reported on its own.
        Matcher::compile(Some(pattern)).map_or(true, |matcher| matcher.matches(value))
    }

    fn closed_subjects(&self, event: &str) -> Option<(&'static str, &'static [&'static str])> {
        const TRIGGERS: &[&str] = &["manual", "auto"];
        const SOURCES: &[&str] = &["startup", "resume", "clear", "compact"];
        const SETUP_TRIGGERS: &[&str] = &["init", "maintenance"];
        // Claude Code's documented `load_reason` values (dsh sends the first
        // and `path_glob_match`).
        const LOAD_REASONS: &[&str] = &[
            "session_start",
            "nested_traversal",
            "path_glob_match",
            "include",
            "compact",
        ];
        match event {
            "StopFailure" => Some(("the error category", &STOP_FAILURE_ERRORS)),
            "PreCompact" | "PostCompact" => Some(("the trigger", TRIGGERS)),
            "SessionStart" => Some(("the source", SOURCES)),
            "InstructionsLoaded" => Some(("the load reason", LOAD_REASONS)),
            "Setup" => Some(("the trigger", SETUP_TRIGGERS)),
            _ => None,
        }
    }

    fn check_matcher(&self, c: &mut Checker<'_>, pattern: &str, at: &str) {
        if let Some(server) = bare_mcp_server(pattern) {
            c.push(
                Severity::Warning,
                "mcp-server-matcher",
                Some(at.to_owned()),
                Some(pattern),
                format!(
                    "matcher {pattern:?} matches no tool: MCP tools are named `mcp__{server}__<tool>` and a plain matcher must equal the whole name (use \"mcp__{server}__.*\")"
                ),
            );
        }
    }

    fn handler_fields(&self, kind: &str) -> Option<Vec<&'static str>> {
        match kind {
            "command" => Some([COMMON_FIELDS, COMMAND_FIELDS].concat()),
            "http" => Some([COMMON_FIELDS, HTTP_FIELDS].concat()),
            _ => None,
        }
    }

    fn check_handler(&self, c: &mut Checker<'_>, object: &Map<String, Value>, at: &str) {
        if object.get("shell").and_then(Value::as_str) == Some("powershell") {
            c.push(
                Severity::Warning,
                "unsupported-handler",
                Some(format!("{at}.shell")),
                None,
                "dsh cannot run `shell: \"powershell\"` hooks; this one never runs in dsh".into(),
            );
        }
    }

    fn is_exec_form(&self, object: &Map<String, Value>) -> bool {
        object.get("args").is_some_and(Value::is_array)
    }

    fn checks_transcript_glob(&self) -> bool {
        true
    }
}

/// The server of a bare `mcp__<server>` alternative in a plain (exact-match)
/// Claude Code matcher: it matches nothing (`mcp_basic`).
fn bare_mcp_server(pattern: &str) -> Option<&str> {
    let plain = pattern
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '|');
    if !plain {
        return None;
    }
    pattern
        .split('|')
        .filter_map(|alternative| alternative.strip_prefix("mcp__"))
        .find(|server| !server.is_empty() && !server.contains("__"))
}

/// Whether `path` is a Claude Code hook file when named on its own: a
/// plugin's `hooks/hooks.json` (next to `.claude-plugin/`) is Claude's
/// format, unlike Codex's file of the same name.
pub fn is_plugin_hook_file(path: &Path) -> bool {
    plugin_root_of(path).is_some()
}

/// Checks one Claude Code settings file (or plugin `hooks/hooks.json`)
/// whose hooks run in `project`.
pub fn lint_file(file: &Path, project: &Path) -> Vec<Finding> {
    let text = match dsh_hooks::lint::read(file) {
        Ok(text) => text,
        Err(finding) => return vec![finding],
    };
    let document = match serde_json::from_str::<Value>(&text) {
        Ok(value) => value,
        Err(error) => {
            return vec![Finding {
                severity: Severity::Error,
                code: "malformed-json",
                file: file.to_owned(),
                position: Some(format!("{}:{}", error.line(), error.column())),
                at: None,
                message: format!(
                    "not valid JSON, dsh refuses to start with it: {}",
                    without_position(&error)
                ),
            }];
        }
    };
    let mut checker = Checker::new(file, text, project);
    for key in settings_keys::ignored_keys(&Field::read(&document)) {
        checker.push(
            Severity::Warning,
            "ignored-key",
            Some(key.clone()),
            Some(&key),
            format!("dsh ignores the settings key `{key}` (Claude Code acts on it)"),
        );
    }
    let permissions: Field<PermissionsDocument> = Field::read(&document);
    permission_rules::check(&mut checker, &permissions.into_valid().unwrap_or_default());
    check_hooks(&mut checker, &ClaudeRules, &document);
    checker.finish()
}

/// The files `dsh hooks check` looks at for a discovery, as a session
/// loads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LintTargets {
    /// The settings files that exist (and every `--settings` file), in
    /// precedence order.
    pub settings: Vec<PathBuf>,
    /// The hook files of the installed and enabled plugins a session loads,
    /// in order, each once (empty when the configuration does not load).
    pub plugins: Vec<PathBuf>,
    /// What the loader says will not run: a plugin's hooks
    /// (`plugin-not-loaded`) and agent files it could not read
    /// (`agent-not-loaded`), as warnings.
    pub load_findings: Vec<Finding>,
}

/// What `dsh hooks check` looks at for `discovery`.
pub fn lint_targets(discovery: &ClaudeDiscovery) -> LintTargets {
    let settings = discovery
        .candidates()
        .into_iter()
        .map(|(path, _)| path)
        .filter(|path| path.is_file() || discovery.extra_settings.contains(path))
        .collect();
    let Ok(config) = crate::load(discovery) else {
        return LintTargets {
            settings,
            ..LintTargets::default()
        };
    };
    let mut plugins: Vec<PathBuf> = Vec::new();
    for entry in config.entries().iter().filter(|e| e.plugin.is_some()) {
        let file = PathBuf::from(entry.origin.split('#').next().unwrap_or_default());
        if !plugins.contains(&file) {
            plugins.push(file);
        }
    }
    let mut load_findings: Vec<Finding> = settings_keys::plugin_notices(&config.notices())
        .into_iter()
        .map(|notice| Finding {
            severity: Severity::Warning,
            code: "plugin-not-loaded",
            file: discovery.home.join(".claude/plugins"),
            position: None,
            at: None,
            message: notice,
        })
        .collect();
    load_findings.extend(config.skipped_agents.iter().map(|(path, why)| Finding {
        severity: Severity::Warning,
        code: "agent-not-loaded",
        file: path.clone(),
        position: None,
        at: None,
        message: format!("the agent is skipped: {why}"),
    }));
    LintTargets {
        settings,
        plugins,
        load_findings,
    }
}

/// What `dsh hooks check` reports for a whole setup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lint {
    /// The files checked, in order.
    pub files: Vec<PathBuf>,
    /// The findings, file by file, then the setup's own.
    pub findings: Vec<Finding>,
}

/// Checks every Claude Code hook file a session in `discovery` loads:
/// settings files, then plugin hook files, then plugins that do not load.
pub fn lint(discovery: &ClaudeDiscovery) -> Lint {
    let targets = lint_targets(discovery);
    let mut files = targets.settings;
    for plugin in targets.plugins {
        if !files.contains(&plugin) {
            files.push(plugin);
        }
    }
    let mut findings: Vec<Finding> = files
        .iter()
        .flat_map(|file| lint_file(file, &discovery.cwd))
        .collect();
    findings.extend(targets.load_findings);
    Lint { files, findings }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn setup(settings: &str) -> (tempfile::TempDir, tempfile::TempDir, ClaudeDiscovery) {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(project.path().join(".claude")).unwrap();
        std::fs::write(project.path().join(".claude/settings.json"), settings).unwrap();
        let mut discovery =
            ClaudeDiscovery::new(project.path(), home.path(), &home.path().join(".dsh"));
        discovery.managed_dir = home.path().join("managed");
        (project, home, discovery)
    }

    fn codes(lint: &Lint) -> Vec<&'static str> {
        lint.findings.iter().map(|f| f.code).collect()
    }

    #[test]
    fn finds_the_project_settings_and_reports_schema_problems_at_their_line() {
        let (project, _home, discovery) = setup(
            "{\"hooks\": {\n  \"PreToolUs\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}],\n  \"Stop\": [{\"matcher\": \"x\", \"hooks\": [{\"type\": \"command\", \"command\": \"true\", \"timeot\": 5}]}]\n}, \"model\": \"opus\"}",
        );
        let lint = lint(&discovery);
        assert_eq!(
            lint.files,
            vec![project.path().join(".claude/settings.json")]
        );
        assert_eq!(
            codes(&lint),
            vec![
                "ignored-key",
                "unknown-event",
                "matcher-ignored",
                "unknown-field"
            ]
        );
        let unknown = &lint.findings[1];
        assert_eq!(unknown.position.as_deref(), Some("2:3"));
        assert!(
            unknown.message.contains("did you mean `PreToolUse`?"),
            "{}",
            unknown.message
        );
        assert!(
            lint.findings[3]
                .message
                .contains("not a Claude Code hook field")
        );
    }

    #[test]
    fn exec_form_powershell_and_bare_mcp_matchers_are_claude_rules() {
        let (_project, _home, discovery) = setup(
            r#"{"hooks": {"PreToolUse": [{"matcher": "mcp__github", "hooks": [
                {"type": "command", "command": "true", "shell": "powershell"}]}]}}"#,
        );
        assert_eq!(
            codes(&lint(&discovery)),
            vec!["mcp-server-matcher", "unsupported-handler"]
        );
    }

    #[test]
    fn an_unreadable_or_malformed_file_is_one_error() {
        let (project, _home, _discovery) = setup("{\"hooks\": ");
        let file = project.path().join(".claude/settings.json");
        let findings = lint_file(&file, project.path());
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].code, "malformed-json");
        let missing = lint_file(&project.path().join("nope.json"), project.path());
        assert_eq!(missing[0].code, "unreadable");
    }
}
