//! `dsh hooks check` for Copilot hook files (`.github/hooks/*.json`,
//! `~/.copilot/hooks/*.json`, `.github/copilot/settings*.json`,
//! `~/.copilot/settings.json`): what Copilot would only write to its log (a
//! file it skips, an entry it drops, an event name it ignores, a matcher
//! that never matches), and the Claude Code expectations its PascalCase
//! mode does not honour.

use std::path::{Path, PathBuf};

use dsh_hooks::lint::{
    Checker, Finding, Severity, ShellVars, did_you_mean, existing, nearest, open_json, path_tail,
};
use dsh_hooks::names::Tabled;
use dsh_hooks::registry::LintTargets;

use crate::config::{
    CopilotDiscovery, Entries, EntryWire, FileContext, Handler, HooksDoc, Program, UNREAD_EVENT,
    parse_hooks,
};
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
        let at = Some("version".to_owned());
        c.push(Severity::Error, "bad-version", at, Some("version"), message);
        return c.finish();
    }
    if let Some(name) = doc.unread_event().filter(|_| hook_file) {
        let message = format!("{}; Copilot CLI skips the whole file", UNREAD_EVENT);
        c.push(
            Severity::Error,
            "bad-event",
            Some(format!("hooks.{name}")),
            Some(name),
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
                let at = Some(format!("hooks.{name}"));
                c.push(Severity::Warning, "unknown-event", at, Some(name), message);
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
    let env = [("COPILOT_PROJECT_DIR".into(), project.display().to_string())];
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let settings_env = env.into();
    let vars = ShellVars {
        project: project.into(),
        home,
        plugin_root: None,
        settings_env,
    };
    c.set_vars(vars);
    // What each entry runs, from the repository root (its `cwd` aside).
    let from_root = |h: &&Handler| h.cwd.as_deref().is_none_or(|cwd| cwd == ".");
    for handler in handlers.iter().filter(from_root) {
        let at = handler.origin.rsplit('#').next().unwrap_or_default();
        c.enter_event(event_of(at));
        match &handler.program {
            Program::Bash(command) => c.check_command(command, false, at),
            Program::Exec { program, .. } => c.check_command(program, true, at),
            Program::Powershell(_) => {}
        }
    }
    for problem in problems {
        let (at, message) = match problem.message.split_once(": ") {
            Some((at, message)) => (Some(at.to_owned()), message.to_owned()),
            None => (None, problem.message),
        };
        let event = event_of(at.as_deref().unwrap_or_default()).to_owned();
        c.enter_event(&event);
        c.push(Severity::Error, "skipped-entry", at, Some(&event), message);
    }
    c.finish()
}

/// The event of a JSON path (`hooks.preToolUse[0].bash`: `preToolUse`).
fn event_of(at: &str) -> &str {
    let path = at.trim_start_matches("hooks.");
    path.split(['[', '.']).next().unwrap_or_default()
}

fn lint_entries(c: &mut Checker<'_>, name: &str, event: CopilotEvent, mode: Mode, list: &Entries) {
    c.enter_event(name);
    for (i, entry) in list.0.iter().flatten().enumerate() {
        let at = format!("hooks.{name}[{i}]");
        let matcher = entry.0.as_ref().and_then(EntryWire::matcher);
        if let Some(matcher) = matcher
            && !(mode == Mode::Pascal && matcher == "*")
            && regex::Regex::new(&format!("^(?:{matcher})$")).is_err()
        {
            c.push(Severity::Warning, "invalid-matcher", Some(format!("{at}.matcher")), Some(matcher), format!("`{matcher}` is not a valid regular expression; Copilot CLI never runs this entry"));
        }
        if mode == Mode::Camel
            && let Some(matcher) = matcher
            && event.matches_tools()
            && matcher.chars().next().is_some_and(char::is_uppercase)
        {
            c.push(Severity::Warning, "claude-tool-name", Some(format!("{at}.matcher")), Some(matcher), format!("camelCase events match Copilot's own tool names (`bash`, `view`, `create`, `edit`, …), case-sensitively; `{matcher}` looks like a Claude Code name"));
        }
        if mode == Mode::Pascal
            && matches!(
                event,
                CopilotEvent::AgentStop
                    | CopilotEvent::UserPromptSubmitted
                    | CopilotEvent::PostToolUse
            )
        {
            c.push(Severity::Warning, "pascal-expectations", Some(at), Some(name), format!("Copilot CLI runs PascalCase `{name}` with Claude-style payloads but its own output rules: exit 2 only warns, `hookSpecificOutput.additionalContext` is ignored (use a top-level `additionalContext`), `continue: false` is ignored"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A missing script is named with its file position, from the
    /// repository root (an entry with its own `cwd` is not checked).
    #[test]
    fn a_missing_script_is_found_where_it_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".github/hooks/h.json");
        fs_err::create_dir_all(file.parent().unwrap()).unwrap();
        let text = r#"{"version":1,"hooks":{
  "preToolUse":[{"bash":"./ok.sh"},{"bash":"./gone.sh"},{"bash":"./gone.sh","cwd":"sub"},
    {"exec":"$COPILOT_PROJECT_DIR/gone"}]}}"#;
        fs_err::write(&file, text).unwrap();
        fs_err::write(dir.path().join("ok.sh"), "").unwrap();
        let found: Vec<_> = lint_file(&file, dir.path())
            .into_iter()
            .map(|f| {
                (
                    f.code,
                    f.at.unwrap_or_default(),
                    f.position.unwrap_or_default(),
                )
            })
            .collect();
        let at = |i: usize| format!("hooks.preToolUse[{i}]");
        #[rustfmt::skip]
        assert_eq!(found, [
            ("not-executable", at(0), "2:25".to_owned()),
            ("command-not-found", at(1), "2:44".to_owned()),
            ("command-not-found", at(3), "3:13".to_owned()),
        ]);
    }

    #[test]
    fn findings_name_what_copilot_would_skip() {
        let dir = tempfile::tempdir().unwrap();
        let hooks = dir.path().join(".github/hooks");
        fs_err::create_dir_all(&hooks).unwrap();
        let file = hooks.join("h.json");
        fs_err::write(
            &file,
            r#"{"version":1,"hooks":{"preTooluse":[{"bash":"x"}],"preToolUse":[{"bash":"echo x","matcher":"Bash"},{"timeoutSec":1},{"bash":"echo y","matcher":"("}],"Stop":[{"bash":"true"}]}}"#,
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
                "skipped-entry"
            ]
        );
        fs_err::write(&file, r#"{"version":2,"hooks":{}}"#).unwrap();
        assert_eq!(lint_file(&file, dir.path())[0].code, "bad-version");
        // x_wrong_types: an event that is not an array skips the file.
        fs_err::write(&file, r#"{"version":1,"hooks":{"agentStop":{"bash":"x"}}}"#).unwrap();
        let found = lint_file(&file, dir.path());
        assert_eq!((found.len(), found[0].code), (1, "bad-event"));
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
