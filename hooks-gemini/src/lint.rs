//! `dsh hooks check` for Gemini CLI settings files (`~/.gemini/settings.json`,
//! `.gemini/settings.json`): Gemini's schema (events, group and hook
//! fields, matchers, millisecond timeouts, `hooksConfig`), Claude Code event
//! names (which Gemini skips), and the command-text substitution pitfall
//! Gemini's own docs recommend. Findings carry `file:line:column`.

use std::path::{Path, PathBuf};

use dsh_hooks::lint::{
    Checker, Finding, Severity, did_you_mean, existing, nearest, open_json, path_tail,
};
use dsh_hooks::names::Tabled;
use serde_json::{Map, Value};

use crate::config::{GeminiDiscovery, claude_hint};
use crate::event::GeminiEvent;

const GROUP_FIELDS: &[&str] = &["matcher", "sequential", "hooks"];
const HOOK_FIELDS: &[&str] = &["type", "command", "name", "timeout", "env", "description"];
const SUBSTITUTED: &[&str] = &[
    "$GEMINI_PROJECT_DIR",
    "$GEMINI_CWD",
    "$CLAUDE_PROJECT_DIR",
    "$GEMINI_SESSION_ID",
    "$GEMINI_PLANS_DIR",
];

/// The Gemini settings files a session in `discovery.cwd` would load.
pub fn lint_targets(discovery: &GeminiDiscovery) -> Vec<PathBuf> {
    existing([discovery.user_settings(), discovery.project_settings()])
}

/// Whether `path` is a Gemini settings file (`.gemini/settings.json`).
pub fn is_gemini_settings(path: &Path) -> bool {
    let [name, dir, _] = path_tail(path);
    name == "settings.json" && dir == ".gemini"
}

/// Checks one Gemini settings file whose hooks run in `project`.
pub fn lint_file(file: &Path, project: &Path) -> Vec<Finding> {
    let parse = |text: &str| match text.trim() {
        "" => Ok(Value::Object(Map::new())),
        _ => serde_json::from_str(&crate::config::strip_comments(text)),
    };
    let says = |e| format!("Gemini CLI cannot parse this file (dsh refuses to start with it): {e}");
    let (mut c, document) = match open_json(file, project, parse, says) {
        Ok(opened) => opened,
        Err(findings) => return findings,
    };
    check_hooks_config(&mut c, &document);
    match document.get("hooks") {
        None => {}
        Some(Value::Object(events)) => {
            for (name, groups) in events {
                check_event(&mut c, name, groups);
            }
        }
        Some(_) => c.push(
            Severity::Error,
            "not-an-object",
            Some("hooks".into()),
            Some("hooks"),
            "`hooks` must be an object of event names".into(),
        ),
    }
    c.finish()
}

fn check_hooks_config(c: &mut Checker<'_>, document: &Value) {
    let Some(config) = document.get("hooksConfig") else {
        return;
    };
    if let Some(disabled) = config.get("disabled")
        && !disabled
            .as_array()
            .is_some_and(|names| names.iter().all(Value::is_string))
    {
        c.push(
            Severity::Warning,
            "invalid-disabled",
            Some("hooksConfig.disabled".into()),
            Some("disabled"),
            "`hooksConfig.disabled` must be a list of hook names; it is ignored".into(),
        );
    }
    if config.get("enabled") == Some(&Value::Bool(false)) {
        c.push(
            Severity::Warning,
            "hooks-disabled",
            Some("hooksConfig.enabled".into()),
            Some("enabled"),
            "`hooksConfig.enabled: false`: no Gemini hook runs (in the project file it switches off the user's hooks too)".into(),
        );
    }
}

fn check_event(c: &mut Checker<'_>, name: &str, groups: &Value) {
    let at = format!("hooks.{name}");
    let Some(event) = GeminiEvent::parse(name) else {
        let hint = claude_hint(name);
        let (code, message) = if hint.is_empty() {
            (
                "unknown-event",
                format!(
                    "unknown event `{name}`: Gemini CLI skips it (`Invalid hook event name`), so these hooks never run{}",
                    did_you_mean(nearest(name, GeminiEvent::all().map(GeminiEvent::as_str)))
                ),
            )
        } else {
            (
                "claude-event-name",
                format!(
                    "`{name}` is not a Gemini CLI event: Gemini skips it (`Invalid hook event name`), so these hooks never run{hint}"
                ),
            )
        };
        c.push(Severity::Warning, code, Some(at), Some(name), message);
        return;
    };
    let Some(groups) = groups.as_array() else {
        c.push(
            Severity::Error,
            "not-an-array",
            Some(at),
            Some(name),
            format!("`{name}` must be a list of hook groups"),
        );
        return;
    };
    for (gi, group) in groups.iter().enumerate() {
        let at = format!("{at}[{gi}]");
        let Some(group) = group.as_object() else {
            c.push(
                Severity::Error,
                "not-an-object",
                Some(at),
                Some(name),
                "a hook group must be an object with `matcher`, `sequential` and `hooks`".into(),
            );
            continue;
        };
        for key in group.keys() {
            if !GROUP_FIELDS.contains(&key.as_str()) {
                c.push(
                    Severity::Warning,
                    "unknown-field",
                    Some(at.clone()),
                    Some(key),
                    format!(
                        "unknown field `{key}` in a hook group is ignored{}",
                        did_you_mean(nearest(key, GROUP_FIELDS.iter().copied()))
                    ),
                );
            }
        }
        if let Some(matcher) = group.get("matcher").and_then(Value::as_str) {
            check_matcher(c, event, matcher, &at);
        }
        match group.get("hooks").and_then(Value::as_array) {
            Some(hooks) => {
                for (hi, hook) in hooks.iter().enumerate() {
                    check_hook(c, hook, &format!("{at}.hooks[{hi}]"));
                }
            }
            None => c.push(
                Severity::Warning,
                "missing-hooks",
                Some(at),
                None,
                "the group has no `hooks` list; nothing runs".into(),
            ),
        }
    }
}

fn check_matcher(c: &mut Checker<'_>, event: GeminiEvent, matcher: &str, at: &str) {
    let at = format!("{at}.matcher");
    if matcher.is_empty() || matcher == "*" {
        return;
    }
    if !crate::matcher::honours_matcher(event) {
        c.push(
            Severity::Warning,
            "matcher-ignored",
            Some(at),
            Some(matcher),
            format!(
                "Gemini CLI ignores matchers on {}: the hooks run every time",
                event.as_str()
            ),
        );
    } else if event.matches_tools() {
        if regex::Regex::new(matcher).is_err() {
            c.push(
                Severity::Warning,
                "invalid-matcher",
                Some(at),
                Some(matcher),
                format!("`{matcher}` is not a valid regular expression; Gemini CLI then compares it to the tool name exactly"),
            );
        }
    } else {
        let values: &[&str] = match event {
            GeminiEvent::SessionStart => &["startup", "resume", "clear"],
            GeminiEvent::SessionEnd => &["exit", "clear", "logout", "prompt_input_exit", "other"],
            GeminiEvent::PreCompress => &["auto", "manual"],
            GeminiEvent::BeforeAgent
            | GeminiEvent::BeforeModel
            | GeminiEvent::BeforeToolSelection
            | GeminiEvent::AfterModel
            | GeminiEvent::BeforeTool
            | GeminiEvent::AfterTool
            | GeminiEvent::AfterAgent
            | GeminiEvent::Notification => &[],
        };
        if !values.contains(&matcher) {
            c.push(
                Severity::Warning,
                "matcher-never-matches",
                Some(at),
                Some(matcher),
                format!(
                    "{} matchers are compared exactly (not as a regex) with one of {}; `{matcher}` never matches",
                    event.as_str(),
                    values.join(", ")
                ),
            );
        }
    }
}

fn check_hook(c: &mut Checker<'_>, hook: &Value, at: &str) {
    let Some(object) = hook.as_object() else {
        c.push(
            Severity::Error,
            "not-an-object",
            Some(at.to_owned()),
            None,
            "a hook must be an object".into(),
        );
        return;
    };
    let command = object.get("command").and_then(Value::as_str);
    if object.get("type").and_then(Value::as_str) != Some("command") || command.is_none() {
        c.push(
            Severity::Warning,
            "dropped-hook",
            Some(at.to_owned()),
            command,
            "Gemini CLI runs only `\"type\": \"command\"` hooks with a `command`; it drops this one without a word".into(),
        );
    }
    for key in object.keys() {
        if !HOOK_FIELDS.contains(&key.as_str()) {
            c.push(
                Severity::Warning,
                "unknown-field",
                Some(at.to_owned()),
                Some(key),
                format!(
                    "field `{key}` is not a Gemini hook field; it is ignored{}",
                    did_you_mean(nearest(key, HOOK_FIELDS.iter().copied()))
                ),
            );
        }
    }
    if let Some(timeout) = object.get("timeout") {
        match timeout.as_u64() {
            Some(ms) if ms > 0 && ms < 100 => c.push(
                Severity::Warning,
                "timeout-seconds",
                Some(format!("{at}.timeout")),
                command,
                format!("timeout {ms} is in milliseconds in Gemini CLI; did you mean {}?", ms * 1000),
            ),
            Some(ms) if ms > 0 => {}
            _ => c.push(
                Severity::Warning,
                "invalid-timeout",
                Some(format!("{at}.timeout")),
                command,
                format!("timeout must be a positive number of milliseconds, not {timeout}; the default (60000) applies"),
            ),
        }
    }
    if let Some(env) = object.get("env")
        && !env.is_object()
    {
        c.push(
            Severity::Warning,
            "invalid-env",
            Some(format!("{at}.env")),
            command,
            "`env` must be an object of variables".into(),
        );
    }
    if let Some(command) = command {
        for name in SUBSTITUTED {
            if command.contains(&format!("\"{name}")) || command.contains(&format!("'{name}")) {
                c.push(
                    Severity::Warning,
                    "quoted-substitution",
                    Some(format!("{at}.command")),
                    Some(command),
                    format!(
                        "Gemini CLI replaces `{name}` in the command text with an already shell-quoted value, so quotes around it become literal when the path needs quoting (a space); write `\"${{{}}}\"` instead",
                        name.trim_start_matches('$')
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn claude_names_ms_timeouts_and_quoted_substitutions_are_reported_with_lines() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(
            &file,
            "{\n  \"hooks\": {\n    \"PreToolUse\": [],\n    \"BeforeTool\": [{\"matcher\": \"(\", \"hooks\": [\n      {\"type\": \"command\", \"command\": \"bash \\\"$GEMINI_PROJECT_DIR/x.sh\\\"\", \"timeout\": 30}]}],\n    \"BeforeAgent\": [{\"matcher\": \"x\", \"hooks\": []}]\n  }\n}\n",
        )
        .unwrap();
        let findings = lint_file(&file, dir.path());
        let codes: Vec<(&str, Option<&str>)> = findings
            .iter()
            .map(|f| (f.code, f.position.as_deref()))
            .collect();
        assert_eq!(
            codes,
            [
                ("claude-event-name", Some("3:5")),
                ("invalid-matcher", Some("4:32")),
                ("timeout-seconds", Some("5:38")),
                ("quoted-substitution", Some("5:38")),
                ("matcher-ignored", Some("6:33")),
            ]
        );
        assert!(
            findings[0].message.contains("BeforeTool"),
            "{}",
            findings[0].message
        );
    }
}
