//! `dsh hooks check` for Codex hook files (`hooks.json`, `config.toml`,
//! `requirements.toml`): the dialect's schema (events, handler fields,
//! matchers), `approval_policy` and `sandbox_mode`, the bridge's own typed
//! load, and the files a session would load, found by this crate's own
//! discovery ([`CodexDiscovery`], whose `managed_dir` is the system layer).
//!
//! The walk over the event table and the shell-command checks are shared
//! with the Claude Code bridge (`dsh_hooks::lint`); this module supplies
//! Codex's [`Rules`].

use std::path::{Path, PathBuf};

use dsh_hooks::lint::{
    Checker, EventInfo, Finding, Rules, Severity, check_hooks, did_you_mean, nearest,
};
use dsh_hooks::names::Tabled;
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};

use crate::config::{ConfigError, project_dirs, read_document};
use crate::matcher::Matcher;
use crate::{CodexDiscovery, CodexEvent};

const COMMAND_FIELDS: &[&str] = &[
    "type",
    "command",
    "commandWindows",
    "command_windows",
    "timeout",
    "async",
    "statusMessage",
    "additionalContextLimit",
];

/// Codex's schema for the shared walk.
struct CodexRules;

impl Rules for CodexRules {
    fn tool_name(&self) -> &'static str {
        "Codex"
    }

    fn skips_event(&self, name: &str) -> bool {
        name == "state" || name == "managed_dir"
    }

    fn event(&self, c: &mut Checker<'_>, name: &str, at: &str) -> Option<EventInfo> {
        match CodexEvent::from_name(name) {
            // dsh fires every Codex event (compaction and subagents included).
            Some(event) => Some(EventInfo {
                honours_matcher: event.honours_matcher(),
                exit2_blocks: event.exit2_blocks(),
            }),
            None => {
                let suggestion = nearest(name, CodexEvent::names());
                c.push(
                    Severity::Error,
                    "unknown-event",
                    Some(at.to_owned()),
                    Some(name),
                    format!(
                        "unknown event `{name}`: Codex ignores it, so these hooks never run{}",
                        did_you_mean(suggestion)
                    ),
                );
                None
            }
        }
    }

    fn matcher_error(&self, pattern: &str) -> Option<String> {
        Matcher::compile(Some(pattern)).err()
    }

    fn invalid_matcher_consequence(&self) -> &'static str {
        "Codex skips the whole group"
    }

    fn matcher_matches(&self, pattern: &str, value: &str) -> bool {
        // An invalid regex is reported on its own.
        Matcher::compile(Some(pattern)).map_or(true, |matcher| matcher.matches(value, &[]))
    }

    fn closed_subjects(&self, event: &str) -> Option<(&'static str, &'static [&'static str])> {
        const SOURCES: &[&str] = &["startup", "resume", "clear", "compact"];
        // Codex ignores matchers on its compaction events (reported as
        // `matcher-ignored`); SessionStart matches the source.
        match event {
            "SessionStart" => Some(("the source", SOURCES)),
            _ => None,
        }
    }

    fn handler_fields(&self, kind: &str) -> Option<Vec<&'static str>> {
        (kind == "command").then(|| COMMAND_FIELDS.to_vec())
    }
}

/// Checks one Codex hook file whose hooks run in `project`.
pub fn lint_file(file: &Path, project: &Path) -> Vec<Finding> {
    let text = match dsh_hooks::lint::read(file) {
        Ok(text) => text,
        Err(finding) => return vec![finding],
    };
    let document = match read_document(file) {
        Ok(value) => value,
        Err(error) => {
            let (code, position, message) = match &error {
                ConfigError::Json {
                    line,
                    column,
                    message,
                    ..
                } => (
                    "malformed-json",
                    Some(format!("{line}:{column}")),
                    message.clone(),
                ),
                ConfigError::Toml {
                    line,
                    column,
                    message,
                    ..
                } => (
                    "malformed-toml",
                    Some(format!("{line}:{column}")),
                    message.clone(),
                ),
                other => ("unreadable", None, other.to_string()),
            };
            return vec![Finding {
                severity: Severity::Error,
                code,
                file: file.to_owned(),
                position,
                at: None,
                message: format!(
                    "Codex cannot parse this file (dsh refuses to start with it): {message}"
                ),
            }];
        }
    };
    let mut checker = Checker::new(file, text, project);
    // Only an object has settings (a derived struct would also read an
    // array, by position).
    let settings = match document.is_object() {
        true => Settings::deserialize(&document).unwrap_or_default(),
        false => Settings::default(),
    };
    check_settings(&mut checker, settings);
    check_hooks(&mut checker, &CodexRules, &document);
    if !checker.has_errors() {
        typed_load(&mut checker);
    }
    checker.finish()
}

/// The settings `check_settings` reads from a parsed file: present keys
/// of any shape (`null` included), each kept as its JSON text.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Settings {
    #[serde(deserialize_with = "dsh_protocol::present")]
    approval_policy: Option<Written>,
    #[serde(deserialize_with = "dsh_protocol::present")]
    sandbox_mode: Option<Written>,
}

/// A value as written in the file: its compact JSON text, and the string
/// itself when it is one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Written {
    json: String,
    string: Option<String>,
}

impl Written {
    fn of_string(text: &str) -> Self {
        Written {
            json: serde_json::to_string(text).unwrap_or_default(),
            string: Some(text.to_owned()),
        }
    }

    fn plain(json: String) -> Self {
        Written { json, string: None }
    }
}

impl<'de> Deserialize<'de> for Written {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(WrittenVisitor)
    }
}

struct WrittenVisitor;

impl<'de> Visitor<'de> for WrittenVisitor {
    type Value = Written;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Written, E> {
        Ok(Written::plain(v.to_string()))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Written, E> {
        Ok(Written::plain(v.to_string()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Written, E> {
        Ok(Written::plain(v.to_string()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Written, E> {
        Ok(Written::plain(
            serde_json::to_string(&v).unwrap_or_default(),
        ))
    }

    fn visit_str<E>(self, v: &str) -> Result<Written, E> {
        Ok(Written::of_string(v))
    }

    fn visit_unit<E>(self) -> Result<Written, E> {
        Ok(Written::plain("null".to_owned()))
    }

    fn visit_none<E>(self) -> Result<Written, E> {
        Ok(Written::plain("null".to_owned()))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Written, D::Error> {
        Written::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Written, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Written>()? {
            items.push(item.json);
        }
        Ok(Written::plain(format!("[{}]", items.join(","))))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Written, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Written>()? {
            entries.push(format!("{}:{}", Written::of_string(&key).json, value.json));
        }
        Ok(Written::plain(format!("{{{}}}", entries.join(","))))
    }
}

/// Checks a Codex `config.toml`'s `approval_policy` and `sandbox_mode`:
/// a value Codex would not accept is ignored by dsh (a warning: the session
/// still starts, with the notice). A confining sandbox is named as not
/// enforced.
fn check_settings(c: &mut Checker<'_>, settings: Settings) {
    use crate::config::approval::{ApprovalPolicy, SandboxMode};
    if let Some(policy) = settings.approval_policy {
        let text = policy.string.as_deref();
        if text.and_then(ApprovalPolicy::parse).is_none() {
            c.push(
                Severity::Warning,
                "invalid-approval-policy",
                Some("approval_policy".to_owned()),
                text,
                format!(
                    "approval_policy = {} is not untrusted, on-request, on-failure or never; dsh ignores it",
                    policy.json
                ),
            );
        }
    }
    if let Some(sandbox) = settings.sandbox_mode {
        let text = sandbox.string.as_deref();
        match text.and_then(SandboxMode::parse) {
            None => c.push(
                Severity::Warning,
                "invalid-sandbox-mode",
                Some("sandbox_mode".to_owned()),
                text,
                format!(
                    "sandbox_mode = {} is not read-only, workspace-write or danger-full-access; dsh ignores it",
                    sandbox.json
                ),
            ),
            Some(mode) if mode.confines() => c.push(
                Severity::Warning,
                "sandbox-not-enforced",
                Some("sandbox_mode".to_owned()),
                text,
                format!(
                    "sandbox_mode={} requested; no sandbox is enforced by dsh",
                    mode.as_str()
                ),
            ),
            Some(_) => {}
        }
    }
}

/// Runs the bridge's own loader on the file alone (typed fields: a string
/// `timeout`, an unknown handler `type` …), in an empty sandbox.
fn typed_load(checker: &mut Checker<'_>) {
    let file = checker.file().to_owned();
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name != "hooks.json" && name != "config.toml" {
        return;
    }
    let sandbox = std::env::temp_dir().join(format!(
        "dsh-hooks-check-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4()
    ));
    let home = sandbox.join("home");
    let codex_home = sandbox.join("codex");
    if fs_err::create_dir_all(&home).is_err() || fs_err::create_dir_all(&codex_home).is_err() {
        return;
    }
    if fs_err::copy(&file, codex_home.join(&name)).is_ok() {
        let mut discovery = CodexDiscovery::new(home.clone(), home.clone());
        discovery.codex_home = Some(codex_home.clone());
        discovery.managed_dir = None;
        if let Err(error) = crate::load(&discovery) {
            let text = error
                .to_string()
                .replace(&codex_home.join(&name).display().to_string(), "");
            let text = text.trim_start_matches(':').to_owned();
            let (position, message) = match text.split_once(": ") {
                Some((pos, rest)) if pos.chars().all(|c| c.is_ascii_digit() || c == ':') => {
                    (Some(pos.to_owned()), rest.to_owned())
                }
                _ => (None, text),
            };
            checker.push_at(
                Severity::Error,
                "invalid-config",
                None,
                position,
                format!("Codex cannot load this file: {message}"),
            );
        }
    }
    let _ = fs_err::remove_dir_all(&sandbox);
}

/// The hook files a session in `discovery` reads, in layer order: the
/// system layer (`managed_dir`: `requirements.toml`, `hooks.json`,
/// `config.toml`), the user layer (`$CODEX_HOME`), then every project
/// `.codex` from the repository root down to the cwd. Only files that
/// exist, each once.
pub fn lint_targets(discovery: &CodexDiscovery) -> Vec<PathBuf> {
    let mut dirs: Vec<(PathBuf, bool)> = Vec::new();
    if let Some(managed) = &discovery.managed_dir {
        dirs.push((managed.clone(), true));
    }
    dirs.push((discovery.codex_home(), false));
    dirs.extend(
        project_dirs(&discovery.cwd)
            .into_iter()
            .map(|dir| (dir.join(".codex"), false)),
    );
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    for (dir, managed) in dirs {
        if seen.contains(&dir) {
            continue;
        }
        let mut names = vec!["hooks.json", "config.toml"];
        if managed {
            names.insert(0, "requirements.toml");
        }
        for name in names {
            let path = dir.join(name);
            if path.is_file() {
                out.push(path);
            }
        }
        seen.push(dir);
    }
    out
}

/// What `dsh hooks check` reports for a whole Codex setup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lint {
    /// The files checked, in order.
    pub files: Vec<PathBuf>,
    /// The findings, file by file.
    pub findings: Vec<Finding>,
}

/// Checks every Codex hook file a session in `discovery` loads.
pub fn lint(discovery: &CodexDiscovery) -> Lint {
    let files = lint_targets(discovery);
    let findings = files
        .iter()
        .flat_map(|file| lint_file(file, &discovery.cwd))
        .collect();
    Lint { files, findings }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_system_layer_is_the_discovery_managed_dir() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("project");
        let system = root.path().join("system");
        let codex_home = root.path().join("codex-home");
        for dir in [
            project.join(".git"),
            project.join(".codex"),
            system.clone(),
            codex_home.clone(),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(
            system.join("requirements.toml"),
            "allow_managed_hooks_only = false\n",
        )
        .unwrap();
        std::fs::write(
            codex_home.join("hooks.json"),
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
        )
        .unwrap();
        std::fs::write(
            project.join(".codex/hooks.json"),
            "{\"hooks\": {\n  \"Stp\": [{\"hooks\": [{\"type\": \"http\", \"command\": \"true\"}]}]\n}}",
        )
        .unwrap();
        let mut discovery = CodexDiscovery::new(&project, root.path());
        discovery.codex_home = Some(codex_home.clone());
        discovery.managed_dir = Some(system.clone());
        let lint = lint(&discovery);
        assert_eq!(
            lint.files,
            vec![
                system.join("requirements.toml"),
                codex_home.join("hooks.json"),
                project.join(".codex/hooks.json"),
            ]
        );
        let codes: Vec<_> = lint.findings.iter().map(|f| f.code).collect();
        assert_eq!(codes, vec!["unknown-event", "unknown-handler-type"]);
        assert_eq!(lint.findings[0].position.as_deref(), Some("2:3"));
        assert!(lint.findings[0].message.contains("did you mean `Stop`?"));

        discovery.managed_dir = None;
        assert_eq!(lint_targets(&discovery)[0], codex_home.join("hooks.json"));
    }

    #[test]
    fn approval_policy_and_sandbox_mode_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(
            &file,
            "approval_policy = \"sometimes\"\nsandbox_mode = \"read-only\"\n",
        )
        .unwrap();
        let codes: Vec<_> = lint_file(&file, dir.path())
            .iter()
            .map(|f| f.code)
            .collect();
        assert_eq!(
            codes,
            vec!["invalid-approval-policy", "sandbox-not-enforced"]
        );
    }

    #[test]
    fn a_written_value_is_its_compact_json_and_its_string() {
        let values = serde_json::json!([
            "on-\"request\"\n", 3, -2, 1.5, true, null, [], {},
            [1, "a", {"z": [null], "a": 0.25}],
            {"b": 1, "a": {"c": "d"}}
        ]);
        for value in values.as_array().unwrap() {
            let written = Written::deserialize(value).unwrap();
            assert_eq!(written.json, value.to_string());
            assert_eq!(written.string.as_deref(), value.as_str());
        }
    }

    #[test]
    fn settings_of_another_shape_are_shown_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "approval_policy = 3\nsandbox_mode = [\"x\", 1]\n").unwrap();
        let messages: Vec<_> = lint_file(&file, dir.path())
            .into_iter()
            .filter(|f| f.code.starts_with("invalid-") && f.code != "invalid-config")
            .map(|f| f.message)
            .collect();
        assert_eq!(
            messages,
            [
                "approval_policy = 3 is not untrusted, on-request, on-failure or never; dsh ignores it",
                "sandbox_mode = [\"x\",1] is not read-only, workspace-write or danger-full-access; dsh ignores it",
            ]
        );
        let file = dir.path().join("hooks.json");
        std::fs::write(&file, r#"{"approval_policy": null, "hooks": {}}"#).unwrap();
        let findings = lint_file(&file, dir.path());
        let policy = findings
            .iter()
            .find(|f| f.code == "invalid-approval-policy")
            .unwrap();
        assert!(policy.message.starts_with("approval_policy = null is not"));
        // An array has no keys, even where a struct would read it by position.
        std::fs::write(&file, r#"["sometimes", "read-only"]"#).unwrap();
        let findings = lint_file(&file, dir.path());
        assert!(
            findings
                .iter()
                .all(|f| !matches!(f.code, "invalid-approval-policy" | "sandbox-not-enforced")),
            "{findings:?}"
        );
    }
}
