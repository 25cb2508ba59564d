//! `dsh hooks check` for Gemini CLI settings files (`~/.gemini/settings.json`,
//! `.gemini/settings.json`): Gemini's schema (events, group and hook
//! fields, matchers, millisecond timeouts, `hooksConfig`), Claude Code event
//! names (which Gemini skips), and the command-text substitution pitfall
//! Gemini's own docs recommend. Findings carry `file:line:column`.

use std::path::{Path, PathBuf};

use dsh_hooks::lenient::Lenient;
use dsh_hooks::lint::{
    Checker, Finding, Severity, did_you_mean, existing, nearest, open_json, path_tail,
};
use dsh_hooks::names::Tabled;
use dsh_hooks::wire::{Entries, Present};
use serde::Deserialize;
use serde::de::IgnoredAny;

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

/// A settings file as far as the checks read it. Each key is read on its
/// own, so a key of the wrong type is reported and spoils nothing else; a
/// key read as `Lenient<Lenient<T>>` tells a missing key (`Lenient(None)`)
/// from one present with another type or `null` (`Lenient(Some(Lenient(None)))`).
/// (Each `#[serde(flatten)]` keeps serde from reading an array as the
/// struct: only an object is one.)
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Settings {
    hooks_config: Lenient<HooksConfig>,
    hooks: Lenient<Lenient<Entries<Groups>>>,
    #[serde(flatten)]
    _other: IgnoredAny,
}

/// `hooksConfig`'s keys the checks look at.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct HooksConfig {
    disabled: Lenient<Lenient<Vec<String>>>,
    enabled: Lenient<bool>,
    #[serde(flatten)]
    _other: IgnoredAny,
}

/// An event's groups (`None`: not an array), each `None` when it is not
/// an object.
type Groups = Lenient<Vec<Lenient<Group>>>;

/// A hook group, with the keys Gemini does not know in file order.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Group {
    matcher: Lenient<String>,
    sequential: IgnoredAny,
    hooks: Lenient<Vec<Lenient<Hook>>>,
    #[serde(flatten)]
    other: Entries<IgnoredAny>,
}

/// A hook, with the keys Gemini does not know in file order.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Hook {
    #[serde(rename = "type")]
    kind: Lenient<String>,
    command: Lenient<String>,
    name: IgnoredAny,
    description: IgnoredAny,
    /// As written (`null` too): a wrong one is shown back.
    timeout: Lenient<Present>,
    env: Lenient<Lenient<Entries<IgnoredAny>>>,
    #[serde(flatten)]
    other: Entries<IgnoredAny>,
}

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
        "" => Ok(Settings::default()),
        // Not an object: nothing to check.
        _ => serde_json::from_str(&crate::config::strip_comments(text))
            .map(|doc: Lenient<Settings>| doc.0.unwrap_or_default()),
    };
    let says = |e| format!("Gemini CLI cannot parse this file (dsh refuses to start with it): {e}");
    let (mut c, document) = match open_json(file, project, parse, says) {
        Ok(opened) => opened,
        Err(findings) => return findings,
    };
    check_hooks_config(&mut c, &document);
    match &document.hooks.0 {
        None => {}
        Some(Lenient(Some(events))) => {
            for (name, groups) in events.iter() {
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

fn check_hooks_config(c: &mut Checker<'_>, document: &Settings) {
    let Some(config) = &document.hooks_config.0 else {
        return;
    };
    if let Some(Lenient(None)) = config.disabled.0 {
        c.push(
            Severity::Warning,
            "invalid-disabled",
            Some("hooksConfig.disabled".into()),
            Some("disabled"),
            "`hooksConfig.disabled` must be a list of hook names; it is ignored".into(),
        );
    }
    if config.enabled.0 == Some(false) {
        c.push(
            Severity::Warning,
            "hooks-disabled",
            Some("hooksConfig.enabled".into()),
            Some("enabled"),
            "`hooksConfig.enabled: false`: no Gemini hook runs (in the project file it switches off the user's hooks too)".into(),
        );
    }
}

fn check_event(c: &mut Checker<'_>, name: &str, groups: &Groups) {
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
    let Some(groups) = &groups.0 else {
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
        let Some(group) = &group.0 else {
            c.push(
                Severity::Error,
                "not-an-object",
                Some(at),
                Some(name),
                "a hook group must be an object with `matcher`, `sequential` and `hooks`".into(),
            );
            continue;
        };
        for key in group.other.keys() {
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
        if let Some(matcher) = &group.matcher.0 {
            check_matcher(c, event, matcher, &at);
        }
        match &group.hooks.0 {
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

fn check_hook(c: &mut Checker<'_>, hook: &Lenient<Hook>, at: &str) {
    let Some(hook) = &hook.0 else {
        c.push(
            Severity::Error,
            "not-an-object",
            Some(at.to_owned()),
            None,
            "a hook must be an object".into(),
        );
        return;
    };
    let command = hook.command.0.as_deref();
    if hook.kind.0.as_deref() != Some("command") || command.is_none() {
        c.push(
            Severity::Warning,
            "dropped-hook",
            Some(at.to_owned()),
            command,
            "Gemini CLI runs only `\"type\": \"command\"` hooks with a `command`; it drops this one without a word".into(),
        );
    }
    for key in hook.other.keys() {
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
    if let Some(Present(timeout)) = &hook.timeout.0 {
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
    if let Some(Lenient(None)) = hook.env.0 {
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

    /// Each key is read on its own: a wrong type or `null` is reported
    /// where it is and spoils nothing else, unknown keys in file order, and
    /// a document that is not an object has nothing to check.
    #[test]
    fn wrong_types_and_nulls_are_reported_key_by_key() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        let found = |text: &str| {
            std::fs::write(&file, text).unwrap();
            lint_file(&file, dir.path())
                .into_iter()
                .map(|f| format!("{} {}", f.code, f.at.unwrap_or_default()))
                .collect::<Vec<_>>()
        };
        assert!(found("[1, 2]").is_empty());
        assert_eq!(found(r#"{"hooks": null}"#), ["not-an-object hooks"]);
        assert_eq!(
            found(r#"{"hooksConfig": {"disabled": null, "enabled": false}}"#),
            [
                "invalid-disabled hooksConfig.disabled",
                "hooks-disabled hooksConfig.enabled"
            ]
        );
        assert!(found(r#"{"hooksConfig": [{"enabled": false}], "hooks": {}}"#).is_empty());
        let text = r#"{"hooks": {
            "BeforeTool": [null, {"zz": 1, "matcher": 3, "sequential": true, "yy": 2,
                "hooks": [7, {"type": "command", "command": "c", "timeout": null, "env": [], "x": 1}]}],
            "AfterTool": {"hooks": []},
            "BeforeAgent": [{"hooks": {}}]}}"#;
        assert_eq!(
            found(text),
            [
                "not-an-object hooks.BeforeTool[0]",
                "unknown-field hooks.BeforeTool[1]",
                "unknown-field hooks.BeforeTool[1]",
                "not-an-object hooks.BeforeTool[1].hooks[0]",
                "unknown-field hooks.BeforeTool[1].hooks[1]",
                "invalid-timeout hooks.BeforeTool[1].hooks[1].timeout",
                "invalid-env hooks.BeforeTool[1].hooks[1].env",
                "not-an-array hooks.AfterTool",
                "missing-hooks hooks.BeforeAgent[0]",
            ]
        );
        let messages = lint_file(&file, dir.path());
        assert!(
            messages[1].message.contains("`zz`"),
            "{}",
            messages[1].message
        );
        assert!(
            messages[2].message.contains("`yy`"),
            "{}",
            messages[2].message
        );
        assert!(
            messages[5].message.contains("not null"),
            "{}",
            messages[5].message
        );
    }
}
