//! `dsh hooks check` for Copilot hook files (`.github/hooks/*.json`,
//! `~/.copilot/hooks/*.json`, `.github/copilot/settings*.json`,
//! `~/.copilot/settings.json`): what Copilot would only write to its log (a
//! file it skips, an entry it drops, an event name it ignores, a matcher
//! that never matches), and the Claude Code expectations its PascalCase
//! mode does not honour.

use std::path::{Path, PathBuf};

use dsh_hooks::lint::{
    Checker, Finding, Severity, did_you_mean, existing, nearest, open_json, path_tail,
};
use dsh_hooks::names::Tabled;
use dsh_hooks::registry::LintTargets;

use crate::config::{CopilotDiscovery, Entries, FileContext, HooksDoc, parse_hooks};
use crate::event::{CopilotEvent, Mode};

/// The Copilot files a session in `discovery.cwd` would load.
pub fn lint_targets(discovery: &CopilotDiscovery) -> Vec<PathBuf> {
    existing(discovery.files().into_iter().map(|(path, _, _)| path))
}

/// For a Copilot user (a project or user with Copilot hook files): the
/// repository's `.claude/settings*.json` with hooks, which Copilot CLI runs
/// too; dsh runs them once, as Claude Code hooks.
pub fn claude_settings_findings(discovery: &CopilotDiscovery) -> LintTargets {
    let repo = discovery.repo_root();
    let mut findings = Vec::new();
    if lint_targets(discovery).is_empty() {
        return LintTargets::default();
    }
    for name in ["settings.json", "settings.local.json"] {
        let path = repo.join(".claude").join(name);
        let has_hooks = dsh_hooks::json_file::read_as::<HooksDoc>(&discovery.files, &path, Some)
            .ok()
            .flatten()
            .is_some_and(|doc| doc.hooks.0.is_some_and(|hooks| !hooks.0.is_empty()));
        if has_hooks {
            findings.push(Finding {
                severity: Severity::Warning,
                code: "copilot-claude-settings",
                file: path,
                position: None,
                at: Some("hooks".to_owned()),
                message: "GitHub Copilot CLI also runs these hooks (with its PascalCase payloads: native tool input keys such as `path` and `file_text`, no exit-2 block on Stop or UserPromptSubmit); dsh runs them once, as Claude Code hooks with Claude Code's payloads".to_owned(),
            });
        }
    }
    LintTargets {
        findings,
        ..LintTargets::default()
    }
}

/// Whether `path` is in a Copilot location (`.github/hooks/*.json`,
/// `.github/copilot/settings*.json`, `.copilot/hooks/*.json`,
/// `.copilot/settings.json`).
pub fn is_copilot_file(path: &Path) -> bool {
    let [name, dir, grand] = path_tail(path);
    match (dir.as_str(), grand.as_str()) {
        ("hooks", ".github" | ".copilot") => name.ends_with(".json"),
        ("copilot", ".github") => matches!(name.as_str(), "settings.json" | "settings.local.json"),
        (".copilot", _) => name == "settings.json",
        _ => false,
    }
}

/// Checks one Copilot file.
pub fn lint_file(file: &Path, project: &Path) -> Vec<Finding> {
    let says = |e| format!("Invalid JSON: {e}; Copilot CLI skips the whole file");
    let (mut c, doc) = match open_json(file, project, HooksDoc::parse, says) {
        Ok(opened) => opened,
        Err(findings) => return findings,
    };
    let hook_file = file
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|d| d == "hooks");
    if hook_file && let Some(version) = doc.unread_version() {
        let message = format!(
            "version is {}; Copilot CLI reads only version 1 and skips the whole file",
            version.0
        );
        c.push_at(
            Severity::Error,
            "bad-version",
            Some("version".to_owned()),
            None,
            message,
        );
        return c.finish();
    }
    if let Some(hooks) = &doc.hooks.0 {
        for (name, entries) in &hooks.0 {
            let Some((event, mode)) = CopilotEvent::parse(name) else {
                let message = format!(
                    "`{name}` is not a Copilot CLI event; Copilot ignores it silently{}",
                    did_you_mean(nearest(name, CopilotEvent::names()))
                );
                c.push_at(
                    Severity::Warning,
                    "unknown-event",
                    Some(format!("hooks.{name}")),
                    None,
                    message,
                );
                continue;
            };
            lint_entries(&mut c, name, event, mode, entries);
        }
    }
    let mut handlers = Vec::new();
    let mut problems = Vec::new();
    let context = FileContext {
        path: file,
        repo: project,
        source: dsh_hooks::entries::Layer::Project,
        hook_dir: None,
        display_file: "",
    };
    parse_hooks(&doc, &context, &mut handlers, &mut problems);
    for problem in problems {
        let (at, message) = match problem.message.split_once(": ") {
            Some((at, message)) => (Some(at.to_owned()), message.to_owned()),
            None => (None, problem.message),
        };
        c.push_at(Severity::Error, "no-command", at, None, message);
    }
    c.finish()
}

fn lint_entries(c: &mut Checker<'_>, name: &str, event: CopilotEvent, mode: Mode, list: &Entries) {
    for (i, entry) in list.0.iter().flatten().enumerate() {
        let at = format!("hooks.{name}[{i}]");
        let matcher = (entry.0.as_ref()).and_then(|e| e.matcher.0.as_deref());
        if let Some(matcher) = matcher
            && !(mode == Mode::Pascal && matcher == "*")
            && regex::Regex::new(&format!("^(?:{matcher})$")).is_err()
        {
            c.push_at(Severity::Warning, "invalid-matcher", Some(format!("{at}.matcher")), None, format!("`{matcher}` is not a valid regular expression; Copilot CLI never runs this entry"));
        }
        if mode == Mode::Camel
            && let Some(matcher) = matcher
            && event.matches_tools()
            && matcher.chars().next().is_some_and(char::is_uppercase)
        {
            c.push_at(Severity::Warning, "claude-tool-name", Some(format!("{at}.matcher")), None, format!("camelCase events match Copilot's own tool names (`bash`, `view`, `create`, `edit`, …), case-sensitively; `{matcher}` looks like a Claude Code name"));
        }
        if mode == Mode::Pascal
            && matches!(
                event,
                CopilotEvent::AgentStop
                    | CopilotEvent::UserPromptSubmitted
                    | CopilotEvent::PostToolUse
            )
        {
            c.push_at(Severity::Warning, "pascal-expectations", Some(at), None, format!("Copilot CLI runs PascalCase `{name}` with Claude-style payloads but its own output rules: exit 2 only warns, `hookSpecificOutput.additionalContext` is ignored (use a top-level `additionalContext`), `continue: false` is ignored"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_name_what_copilot_would_skip() {
        let dir = tempfile::tempdir().unwrap();
        let hooks = dir.path().join(".github/hooks");
        fs_err::create_dir_all(&hooks).unwrap();
        let file = hooks.join("h.json");
        fs_err::write(
            &file,
            r#"{"version":1,"hooks":{"preTooluse":[{"bash":"x"}],"preToolUse":[{"bash":"x","matcher":"Bash"},{"timeoutSec":1},{"bash":"y","matcher":"("}],"Stop":[{"bash":"z"}]}}"#,
        )
        .unwrap();
        let codes: Vec<&str> = lint_file(&file, dir.path())
            .iter()
            .map(|f| f.code)
            .collect();
        assert_eq!(
            codes,
            [
                "unknown-event",
                "claude-tool-name",
                "invalid-matcher",
                "pascal-expectations",
                "no-command"
            ]
        );
        fs_err::write(&file, r#"{"version":2,"hooks":{}}"#).unwrap();
        assert_eq!(lint_file(&file, dir.path())[0].code, "bad-version");
        assert!(is_copilot_file(&file));
        assert!(is_copilot_file(Path::new("/h/.copilot/settings.json")));
        assert!(is_copilot_file(Path::new(
            "/p/.github/copilot/settings.local.json"
        )));
        assert!(!is_copilot_file(Path::new("/p/.claude/settings.json")));
        assert!(!is_copilot_file(Path::new("/p/.codex/hooks.json")));
    }

    /// Only a Copilot user hears that `.claude/settings.json` hooks run
    /// once, as Claude Code's.
    #[test]
    fn claude_settings_are_pointed_out_to_copilot_users_only() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        fs_err::create_dir_all(project.join(".claude")).unwrap();
        fs_err::write(
            project.join(".claude/settings.json"),
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}}"#,
        )
        .unwrap();
        let discovery = || CopilotDiscovery::new(&project, dir.path().join("h"));
        assert!(claude_settings_findings(&discovery()).findings.is_empty());
        fs_err::create_dir_all(project.join(".github/hooks")).unwrap();
        fs_err::write(project.join(".github/hooks/a.json"), r#"{"version":1}"#).unwrap();
        let findings = claude_settings_findings(&discovery()).findings;
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].code, "copilot-claude-settings");
    }
}
