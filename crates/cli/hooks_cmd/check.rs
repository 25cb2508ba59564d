//! `dsh hooks check`: validates hook configuration as the real tools load it
//! and warns where a user would be surprised. Errors make the exit status 1;
//! warnings alone leave it 0.

use crate::stdio::{ExitStatus, outln};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use dsh_hooks_claude::events::EventSupport;
use dsh_hooks_claude::{ClaudeDiscovery, HookEvent};
use dsh_hooks_codex::{CodexDiscovery, CodexEvent};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::resolve::{ShellVars, Word, resolve};

/// Permission rules, `defaultMode` and `additionalDirectories` (issue 14).
mod permission_rules;
mod subjects;
use super::{Format, nearest};
use crate::trust::{named_scripts, words};
use crate::wiring::HookSources;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Severity {
    Error,
    Warning,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Claude,
    Codex,
}

#[derive(Debug, Clone, Serialize)]
struct Diagnostic {
    severity: Severity,
    code: &'static str,
    file: PathBuf,
    /// `line:column` when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    position: Option<String>,
    /// Where in the document (`hooks.PreToolUse[0].hooks[1]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<String>,
    message: String,
}

struct Checker<'a> {
    file: &'a Path,
    text: String,
    kind: Kind,
    project: &'a Path,
    out: Vec<Diagnostic>,
    scripts_seen: HashSet<PathBuf>,
    /// Where the event being checked starts in the text (positions are
    /// searched from there).
    event_offset: usize,
    /// What the shell will know when a hook runs (`resolve.rs`).
    vars: ShellVars,
}

impl Checker<'_> {
    /// A diagnostic whose `line:column` the caller computed.
    fn push_at(
        &mut self,
        severity: Severity,
        code: &'static str,
        at: Option<String>,
        position: Option<String>,
        message: String,
    ) {
        self.out.push(Diagnostic {
            severity,
            code,
            file: self.file.to_owned(),
            position,
            at,
            message,
        });
    }

    fn push(
        &mut self,
        severity: Severity,
        code: &'static str,
        at: Option<String>,
        needle: Option<&str>,
        message: String,
    ) {
        let position = needle.and_then(|n| {
            locate(&self.text, n, self.event_offset).or_else(|| locate(&self.text, n, 0))
        });
        self.out.push(Diagnostic {
            severity,
            code,
            file: self.file.to_owned(),
            position,
            at,
            message,
        });
    }
}

/// `line:column` of the first occurrence of `needle` (as a JSON string) in
/// `text` at or after byte `from`.
fn locate(text: &str, needle: &str, from: usize) -> Option<String> {
    let quoted = serde_json::to_string(needle).ok()?;
    let offset = from + text.get(from..)?.find(&quoted)?;
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(1, |tail| tail.chars().count() + 1);
    Some(format!("{line}:{column}"))
}

fn kind_of(path: &Path) -> Kind {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let in_codex_dir = path
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|dir| dir == ".codex");
    // A Claude Code plugin's `hooks/hooks.json` (next to `.claude-plugin/`) is
    // Claude's format, not Codex's file of the same name.
    if super::resolve::plugin_root_of(path).is_some() {
        Kind::Claude
    } else if name == "hooks.json" || name.ends_with(".toml") || in_codex_dir {
        Kind::Codex
    } else {
        Kind::Claude
    }
}

/// The files dsh would load in this directory, with their dialect.
fn discovered(sources: &HookSources) -> Vec<(PathBuf, Kind)> {
    // The bridge's own list, so `check` looks exactly where a session loads.
    let mut claude = ClaudeDiscovery::new(&sources.cwd, &sources.home, &sources.dsh_home);
    claude.extra_settings = sources.claude_settings.clone();
    let files = claude.candidates().into_iter().map(|(path, _)| path);
    let mut out: Vec<(PathBuf, Kind)> = files
        .into_iter()
        .filter(|p| p.is_file() || sources.claude_settings.contains(p))
        .map(|p| (p, Kind::Claude))
        .collect();

    let codex = CodexDiscovery::from_env(sources.cwd.clone(), sources.home.clone());
    let mut dirs = vec![PathBuf::from("/etc/codex"), codex.codex_home()];
    let mut chain = Vec::new();
    let mut rooted = false;
    for dir in sources.cwd.ancestors() {
        chain.push(dir.to_owned());
        if dir.join(".git").exists() {
            rooted = true;
            break;
        }
    }
    if !rooted {
        chain = vec![sources.cwd.clone()];
    }
    chain.reverse();
    dirs.extend(chain.into_iter().map(|d| d.join(".codex")));
    let mut seen = HashSet::new();
    for (index, dir) in dirs.iter().enumerate() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        let mut names = vec!["hooks.json", "config.toml"];
        if index == 0 {
            names.insert(0, "requirements.toml");
        }
        for name in names {
            let path = dir.join(name);
            if path.is_file() {
                out.push((path, Kind::Codex));
            }
        }
    }
    out
}

pub(super) fn run(
    sources: &HookSources,
    files: &[PathBuf],
    format: Format,
) -> anyhow::Result<ExitStatus> {
    let targets: Vec<(PathBuf, Kind)> = if files.is_empty() {
        let mut found = discovered(sources);
        // Installed and enabled plugins' hook files, as the session loads them.
        if let Ok((claude, _)) = crate::trust::load_configs(sources) {
            for file in super::resolve::plugin_hook_files(&claude.entries()) {
                if !found.iter().any(|(path, _)| *path == file) {
                    found.push((file, Kind::Claude));
                }
            }
        }
        found
    } else {
        files
            .iter()
            .map(|f| {
                let path = if f.is_absolute() {
                    f.clone()
                } else {
                    sources.cwd.join(f)
                };
                let kind = kind_of(&path);
                (path, kind)
            })
            .collect()
    };
    let mut diagnostics = Vec::new();
    for (file, kind) in &targets {
        diagnostics.extend(check_file(file, *kind, &sources.cwd));
    }
    // Plugins the session would not load, as the loader says (discovered mode only:
    // named files say nothing about installed plugins).
    if files.is_empty()
        && let Ok((claude, _)) = crate::trust::load_configs(sources)
    {
        for notice in super::settings_keys::plugin_notices(&claude.notices()) {
            diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                code: "plugin-not-loaded",
                file: sources.home.join(".claude/plugins"),
                position: None,
                at: None,
                message: notice,
            });
        }
    }
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diagnostics.len() - errors;
    match format {
        Format::Json => {
            let doc = json!({
                "files": targets.iter().map(|(p, k)| json!({"file": p, "dialect": k})).collect::<Vec<_>>(),
                "diagnostics": diagnostics,
                "errors": errors,
                "warnings": warnings,
            });
            outln!("{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => {
            if targets.is_empty() {
                outln!("No hook configuration found for {}.", sources.cwd.display())?;
            }
            for (file, kind) in &targets {
                let label = match kind {
                    Kind::Claude => "claude",
                    Kind::Codex => "codex",
                };
                outln!("checked {} ({label})", file.display())?;
            }
            for d in &diagnostics {
                let position = d
                    .position
                    .as_deref()
                    .map(|p| format!(":{p}"))
                    .unwrap_or_default();
                let at =
                    d.at.as_deref()
                        .map(|a| format!(" {a}:"))
                        .unwrap_or_default();
                let severity = match d.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                };
                outln!(
                    "{severity}[{}]: {}{position}:{at} {}",
                    d.code,
                    d.file.display(),
                    d.message.replace('\n', "\n    ")
                )?;
            }
            outln!("{errors} error(s), {warnings} warning(s)")?;
        }
    }
    Ok(if errors > 0 {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}

fn check_file(file: &Path, kind: Kind, project: &Path) -> Vec<Diagnostic> {
    // std: the diagnostic names the file itself.
    #[allow(clippy::disallowed_methods)]
    let read = std::fs::read_to_string(file);
    let text = match read {
        Ok(text) => text,
        Err(error) => {
            return vec![Diagnostic {
                severity: Severity::Error,
                code: "unreadable",
                file: file.to_owned(),
                position: None,
                at: None,
                message: format!("cannot read the file: {error}"),
            }];
        }
    };
    let mut checker = Checker {
        file,
        text,
        kind,
        project,
        out: Vec::new(),
        scripts_seen: HashSet::new(),
        event_offset: 0,
        vars: ShellVars::default(),
    };
    let document = match kind {
        Kind::Claude => match serde_json::from_str::<Value>(&checker.text) {
            Ok(value) => value,
            Err(error) => {
                checker.out.push(Diagnostic {
                    severity: Severity::Error,
                    code: "malformed-json",
                    file: file.to_owned(),
                    position: Some(format!("{}:{}", error.line(), error.column())),
                    at: None,
                    message: format!(
                        "not valid JSON, dsh refuses to start with it: {}",
                        dsh_hooks_claude::config::without_position(&error)
                    ),
                });
                return checker.out;
            }
        },
        Kind::Codex => match dsh_hooks_codex::config::read_document(file) {
            Ok(value) => value,
            Err(error) => {
                let (code, position, message) = match &error {
                    dsh_hooks_codex::ConfigError::Json {
                        line,
                        column,
                        message,
                        ..
                    } => (
                        "malformed-json",
                        Some(format!("{line}:{column}")),
                        message.clone(),
                    ),
                    dsh_hooks_codex::ConfigError::Toml {
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
                checker.out.push(Diagnostic {
                    severity: Severity::Error,
                    code,
                    file: file.to_owned(),
                    position,
                    at: None,
                    message: format!(
                        "Codex cannot parse this file (dsh refuses to start with it): {message}"
                    ),
                });
                return checker.out;
            }
        },
    };
    checker.vars = ShellVars::for_settings(project.to_owned(), &document);
    checker.vars.plugin_root = super::resolve::plugin_root_of(file);
    if kind == Kind::Claude {
        for key in super::settings_keys::ignored_keys(&document) {
            checker.push(
                Severity::Warning,
                "ignored-key",
                Some(key.clone()),
                Some(&key),
                format!("dsh ignores the settings key `{key}` (Claude Code acts on it)"),
            );
        }
        permission_rules::check(&mut checker, &document);
    }
    if kind == Kind::Codex {
        permission_rules::check_codex(&mut checker, &document);
    }
    walk(&mut checker, &document);
    if kind == Kind::Codex && checker.out.iter().all(|d| d.severity != Severity::Error) {
        codex_typed_load(&mut checker);
    }
    checker.out
}

/// Runs the Codex bridge's own loader on the file alone (typed fields: a
/// string `timeout`, an unknown handler `type` …), in an empty sandbox.
fn codex_typed_load(checker: &mut Checker<'_>) {
    let name = checker
        .file
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
    if fs_err::copy(checker.file, codex_home.join(&name)).is_ok() {
        let mut discovery = CodexDiscovery::new(home.clone(), home.clone());
        discovery.codex_home = Some(codex_home.clone());
        discovery.managed_dir = None;
        if let Err(error) = dsh_hooks_codex::load(&discovery) {
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
            checker.out.push(Diagnostic {
                severity: Severity::Error,
                code: "invalid-config",
                file: checker.file.to_owned(),
                position,
                at: None,
                message: format!("Codex cannot load this file: {message}"),
            });
        }
    }
    let _ = fs_err::remove_dir_all(&sandbox);
}

fn walk(c: &mut Checker<'_>, document: &Value) {
    let Some(hooks) = document.get("hooks") else {
        return;
    };
    let Some(hooks) = hooks.as_object() else {
        c.push(
            Severity::Error,
            "not-an-object",
            Some("hooks".into()),
            Some("hooks"),
            "`hooks` must be an object of event names; it is ignored".into(),
        );
        return;
    };
    for (event_name, groups) in hooks {
        if c.kind == Kind::Codex && (event_name == "state" || event_name == "managed_dir") {
            continue;
        }
        let at = format!("hooks.{event_name}");
        c.event_offset = 0;
        c.event_offset = serde_json::to_string(event_name)
            .ok()
            .and_then(|quoted| c.text.find(&quoted))
            .or_else(|| c.text.find(&format!("hooks.{event_name}")))
            .unwrap_or(0);
        let event = check_event(c, event_name, &at);
        let Some(groups) = groups.as_array() else {
            c.push(
                Severity::Error,
                "not-an-array",
                Some(at),
                Some(event_name),
                format!("hooks.{event_name} must be an array of matcher groups; it is ignored"),
            );
            continue;
        };
        for (gi, group) in groups.iter().enumerate() {
            let at = format!("hooks.{event_name}[{gi}]");
            check_group(c, event.as_ref(), event_name, group, &at);
        }
    }
}

/// What the checker knows about an event, whatever the dialect.
struct EventInfo {
    honours_matcher: bool,
    exit2_blocks: bool,
}

fn check_event(c: &mut Checker<'_>, name: &str, at: &str) -> Option<EventInfo> {
    match c.kind {
        Kind::Claude => match HookEvent::parse(name) {
            Some(event) => {
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
            None => {
                let suggestion = nearest(name, HookEvent::ALL.iter().map(|e| e.as_str()));
                c.push(
                    Severity::Error,
                    "unknown-event",
                    Some(at.to_owned()),
                    Some(name),
                    format!(
                        "unknown event `{name}`: Claude Code accepts it but never fires it{}",
                        suggestion
                            .map(|s| format!(" (did you mean `{s}`?)"))
                            .unwrap_or_default()
                    ),
                );
                None
            }
        },
        Kind::Codex => match CodexEvent::from_name(name) {
            Some(event) => {
                if !event.fired_by_dsh() {
                    c.push(
                        Severity::Warning,
                        "event-not-fired",
                        Some(at.to_owned()),
                        Some(name),
                        format!("dsh does not fire {name}; these hooks never run in dsh"),
                    );
                }
                Some(EventInfo {
                    honours_matcher: event.honours_matcher(),
                    exit2_blocks: event.exit2_blocks(),
                })
            }
            None => {
                let suggestion = nearest(name, CodexEvent::ALL.iter().map(|e| e.as_str()));
                c.push(
                    Severity::Error,
                    "unknown-event",
                    Some(at.to_owned()),
                    Some(name),
                    format!(
                        "unknown event `{name}`: Codex ignores it, so these hooks never run{}",
                        suggestion
                            .map(|s| format!(" (did you mean `{s}`?)"))
                            .unwrap_or_default()
                    ),
                );
                None
            }
        },
    }
}

fn check_group(
    c: &mut Checker<'_>,
    event: Option<&EventInfo>,
    event_name: &str,
    group: &Value,
    at: &str,
) {
    let Some(object) = group.as_object() else {
        c.push(
            Severity::Error,
            "not-an-object",
            Some(at.to_owned()),
            None,
            "a matcher group must be an object with `matcher` and `hooks`".into(),
        );
        return;
    };
    for key in object.keys() {
        if key != "matcher" && key != "hooks" {
            c.push(
                Severity::Warning,
                "unknown-field",
                Some(at.to_owned()),
                Some(key),
                format!(
                    "unknown field `{key}` in a matcher group is ignored{}",
                    nearest(key, ["matcher", "hooks"])
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default()
                ),
            );
        }
    }
    match object.get("matcher") {
        None | Some(Value::Null) => {}
        Some(Value::String(pattern)) => check_matcher(c, event, event_name, pattern, at),
        Some(other) => c.push(
            Severity::Error,
            "invalid-matcher",
            Some(format!("{at}.matcher")),
            None,
            format!("`matcher` must be a string, not {other}; the group is ignored"),
        ),
    }
    match object.get("hooks") {
        Some(Value::Array(handlers)) => {
            for (hi, handler) in handlers.iter().enumerate() {
                check_handler(c, event, handler, &format!("{at}.hooks[{hi}]"));
            }
        }
        _ => c.push(
            Severity::Error,
            "no-hooks",
            Some(at.to_owned()),
            None,
            "the group has no `hooks` array; nothing runs".into(),
        ),
    }
}

fn check_matcher(
    c: &mut Checker<'_>,
    event: Option<&EventInfo>,
    event_name: &str,
    pattern: &str,
    at: &str,
) {
    let at = format!("{at}.matcher");
    let error = match c.kind {
        Kind::Claude => dsh_hooks_claude::Matcher::compile(Some(pattern))
            .err()
            .map(|e| e.message),
        Kind::Codex => dsh_hooks_codex::matcher::Matcher::compile(Some(pattern)).err(),
    };
    if let Some(message) = error {
        let consequence = match c.kind {
            Kind::Claude => "dsh refuses to start with it",
            Kind::Codex => "Codex skips the whole group",
        };
        c.push(
            Severity::Error,
            "invalid-regex",
            Some(at),
            Some(pattern),
            format!("matcher {pattern:?} is not a valid regex ({consequence}): {message}"),
        );
        return;
    }
    // Only where the dialect honours the matcher (else `matcher-ignored`).
    if event.is_none_or(|info| info.honours_matcher) {
        subjects::check(c, event_name, pattern, &at);
    }
    if c.kind == Kind::Claude
        && let Some(server) = bare_mcp_server(pattern)
    {
        c.push(
            Severity::Warning,
            "mcp-server-matcher",
            Some(at.clone()),
            Some(pattern),
            format!(
                "matcher {pattern:?} matches no tool: MCP tools are named `mcp__{server}__<tool>` and a plain matcher must equal the whole name (use \"mcp__{server}__.*\")"
            ),
        );
    }
    if let Some(info) = event
        && !info.honours_matcher
        && !pattern.is_empty()
        && pattern != "*"
    {
        c.push(
            Severity::Warning,
            "matcher-ignored",
            Some(at),
            Some(pattern),
            format!("{event_name} ignores matchers: matcher {pattern:?} has no effect, these hooks run every time"),
        );
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

const CLAUDE_COMMON_FIELDS: &[&str] = &["type", "timeout", "if", "statusMessage", "once"];
const CLAUDE_COMMAND_FIELDS: &[&str] = &["command", "args", "shell", "async", "asyncRewake"];
const CLAUDE_HTTP_FIELDS: &[&str] = &["url", "headers", "allowedEnvVars"];
const CODEX_COMMAND_FIELDS: &[&str] = &[
    "type",
    "command",
    "commandWindows",
    "command_windows",
    "timeout",
    "async",
    "statusMessage",
    "additionalContextLimit",
];

fn check_handler(c: &mut Checker<'_>, event: Option<&EventInfo>, handler: &Value, at: &str) {
    let Some(object) = handler.as_object() else {
        c.push(
            Severity::Error,
            "not-an-object",
            Some(at.to_owned()),
            None,
            "a hook handler must be an object".into(),
        );
        return;
    };
    let kind = object.get("type").and_then(Value::as_str).unwrap_or("");
    let known: Vec<&str> = match (c.kind, kind) {
        (Kind::Claude, "command") => [CLAUDE_COMMON_FIELDS, CLAUDE_COMMAND_FIELDS].concat(),
        (Kind::Claude, "http") => [CLAUDE_COMMON_FIELDS, CLAUDE_HTTP_FIELDS].concat(),
        (Kind::Codex, "command") => CODEX_COMMAND_FIELDS.to_vec(),
        (_, "") => {
            c.push(
                Severity::Error,
                "missing-type",
                Some(at.to_owned()),
                None,
                "the handler has no `type` (\"command\"); it is ignored".into(),
            );
            return;
        }
        (Kind::Claude, "prompt" | "agent" | "mcp_tool")
        | (Kind::Codex, "prompt" | "agent" | "mcp_tool") => {
            c.push(
                Severity::Warning,
                "unsupported-handler",
                Some(at.to_owned()),
                Some(kind),
                format!("dsh cannot run `{kind}` hooks; this one never runs in dsh"),
            );
            return;
        }
        (_, other) => {
            c.push(
                Severity::Error,
                "unknown-handler-type",
                Some(at.to_owned()),
                Some(other),
                format!(
                    "unknown handler type `{other}`{}",
                    nearest(other, ["command", "http"])
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default()
                ),
            );
            return;
        }
    };
    let unknown: Vec<String> = object
        .keys()
        .filter(|key| !known.contains(&key.as_str()))
        .cloned()
        .collect();
    for key in unknown {
        c.push(
            Severity::Warning,
            "unknown-field",
            Some(at.to_owned()),
            Some(&key),
            format!(
                "field `{key}` is not a {} hook field; it is ignored{}",
                match c.kind {
                    Kind::Claude => "Claude Code",
                    Kind::Codex => "Codex",
                },
                nearest(&key, known.iter().copied())
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default()
            ),
        );
    }
    if c.kind == Kind::Claude && object.get("shell").and_then(Value::as_str) == Some("powershell") {
        c.push(
            Severity::Warning,
            "unsupported-handler",
            Some(format!("{at}.shell")),
            None,
            "dsh cannot run `shell: \"powershell\"` hooks; this one never runs in dsh".into(),
        );
    }
    check_timeout(c, object, at, object.get("command").and_then(Value::as_str));
    if kind == "command" {
        match object.get("command").and_then(Value::as_str) {
            Some(command) => {
                let exec_form =
                    c.kind == Kind::Claude && object.get("args").is_some_and(Value::is_array);
                check_command(c, command, exec_form, at);
                if !exec_form && crate::exec_scan::scan(command, c.project).computed {
                    c.push(
                        Severity::Warning,
                        "computed-command",
                        Some(format!("{at}.command")),
                        Some(command),
                        crate::trust::COMPUTED_NOTICE.into(),
                    );
                }
                if event.is_some_and(|e| e.exit2_blocks) {
                    check_exit_one(c, command, at);
                }
                if c.kind == Kind::Claude {
                    check_transcript_glob(c, command, at);
                }
            }
            None => c.push(
                Severity::Error,
                "missing-command",
                Some(at.to_owned()),
                None,
                "the command handler has no `command` string; it is ignored".into(),
            ),
        }
    }
}

fn check_timeout(c: &mut Checker<'_>, object: &Map<String, Value>, at: &str, needle: Option<&str>) {
    let Some(value) = object.get("timeout") else {
        return;
    };
    let at = format!("{at}.timeout");
    match value.as_f64() {
        // The dialect loaders refuse such a file (no deadline can hold it).
        Some(secs) if secs > 0.0 && std::time::Duration::try_from_secs_f64(secs).is_err() => c
            .push(
                Severity::Error,
                "invalid-timeout",
                Some(at),
                needle,
                format!("timeout {value} is more than a deadline can hold; dsh refuses this file"),
            ),
        Some(secs) if secs >= 1000.0 => c.push(
            Severity::Warning,
            "timeout-milliseconds",
            Some(at),
            needle,
            format!(
                "timeout {value} is in seconds ({:.0} minutes); did you mean {} (milliseconds → seconds)?",
                secs / 60.0,
                secs / 1000.0
            ),
        ),
        Some(secs) if secs > 0.0 => {}
        _ => c.push(
            Severity::Error,
            "invalid-timeout",
            Some(at),
            needle,
            format!("timeout must be a positive number of seconds, not {value}"),
        ),
    }
}

const BUILTINS: &[&str] = &[
    ".", ":", "[", "[[", "alias", "cd", "command", "echo", "eval", "exec", "exit", "export",
    "false", "printf", "read", "set", "source", "test", "true", "type", "if", "for", "while",
    "case", "{", "(", "!", "time", "env",
];
const INTERPRETERS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "python", "python3", "node", "ruby", "perl", "deno", "bun", "uv",
];

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    fs_err::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| is_executable(&dir.join(name)))
    })
}

fn check_command(c: &mut Checker<'_>, command: &str, exec_form: bool, at: &str) {
    let at = format!("{at}.command");
    let all = if exec_form {
        vec![command.to_owned()]
    } else {
        words(command)
    };
    let mut rest = all
        .iter()
        .skip_while(|w| {
            w.split_once('=').is_some_and(|(name, _)| {
                !name.is_empty()
                    && name
                        .chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
            })
        })
        .peekable();
    let Some(first) = rest.next() else {
        c.push(
            Severity::Error,
            "empty-command",
            Some(at),
            None,
            "the command is empty".into(),
        );
        return;
    };
    if BUILTINS.contains(&first.as_str()) {
        return;
    }
    // `$VAR` forms are checked only when the variable is known here.
    let Some(program) = checkable(c, first, command, &at) else {
        return;
    };
    if program.contains('/') {
        let path = c.project.join(program.trim_start_matches("./"));
        if !path.exists() {
            c.push(
                Severity::Error,
                "command-not-found",
                Some(at),
                Some(command),
                format!("`{first}` does not exist ({})", path.display()),
            );
        } else if !is_executable(&path) {
            c.push(
                Severity::Error,
                "not-executable",
                Some(at),
                Some(command),
                format!(
                    "`{first}` is not executable ({}): `chmod +x` it or run it through its interpreter",
                    path.display()
                ),
            );
        }
        return;
    }
    if !on_path(&program) {
        c.push(
            Severity::Error,
            "command-not-found",
            Some(at),
            Some(command),
            format!("`{program}` is not a shell builtin and is not on PATH"),
        );
        return;
    }
    if INTERPRETERS.contains(&program.as_str()) {
        let Some(script) = rest.find(|w| !w.starts_with('-')) else {
            return;
        };
        if all.iter().any(|w| w == "-c" || w == "-e") {
            return;
        }
        let Some(expanded) = checkable(c, script, command, &at) else {
            return;
        };
        let path = c.project.join(expanded.trim_start_matches("./"));
        if (expanded.contains('/') || expanded.contains('.')) && !path.exists() {
            c.push(
                Severity::Error,
                "script-not-found",
                Some(at),
                Some(command),
                format!(
                    "`{program}` is asked to run `{script}`, which does not exist ({})",
                    path.display()
                ),
            );
        }
    }
}

/// The word as the shell will read it, or `None` (with a note when the path
/// is computed at run time) when it cannot be checked now.
fn checkable(c: &mut Checker<'_>, word: &str, command: &str, at: &str) -> Option<String> {
    match resolve(word, &c.vars) {
        Word::Known(text) => Some(text),
        Word::RunTime => {
            c.push(
                Severity::Warning,
                "not-checkable",
                Some(at.to_owned()),
                Some(command),
                format!(
                    "`{word}` is computed when the hook runs (command substitution): not checkable statically"
                ),
            );
            None
        }
        // The shell may have it at run time: nothing to say.
        Word::UnknownVariable(_) => None,
    }
}

/// A hook that finds its transcript by globbing `~/.claude/projects` will not
/// find dsh's: dsh writes its Claude-format transcript under `$DSH_HOME`
/// (hooks-claude README, "Transcripts") and passes it as `transcript_path`.
fn check_transcript_glob(c: &mut Checker<'_>, command: &str, at: &str) {
    let scripts = named_scripts(command, c.project);
    if let Some(place) =
        super::resolve::reads_claude_projects(command, &words(command), &scripts, &c.vars)
    {
        c.push(
            Severity::Warning,
            "transcript-glob",
            Some(format!("{at}.command")),
            Some(command),
            format!(
                "{place} reads Claude Code's transcripts under ~/.claude/projects; dsh does not write there (its transcript is $DSH_HOME/claude/projects/<slug>/<session>.jsonl): read `transcript_path` from the hook's input instead"
            ),
        );
    }
}

const BLOCK_WORDS: &[&str] = &[
    "deny",
    "denied",
    "block",
    "forbid",
    "forbidden",
    "reject",
    "refuse",
    "not allowed",
    "dangerous",
    "prohibit",
    "disallow",
];

/// Heuristic: `exit 1` near words that say "block" in a script a
/// blocking-capable hook runs.
fn check_exit_one(c: &mut Checker<'_>, command: &str, at: &str) {
    for script in named_scripts(command, c.project) {
        if !c.scripts_seen.insert(script.clone()) {
            continue;
        }
        let Ok(text) = fs_err::read_to_string(&script) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        for (index, line) in lines.iter().enumerate() {
            let Some(at_exit) = line.find("exit 1") else {
                continue;
            };
            let after = line[at_exit + 6..].chars().next();
            if after.is_some_and(|ch| ch.is_ascii_digit()) || line.trim_start().starts_with('#') {
                continue;
            }
            let window = lines[index.saturating_sub(3)..(index + 2).min(lines.len())]
                .join("\n")
                .to_ascii_lowercase();
            if let Some(word) = BLOCK_WORDS.iter().find(|w| window.contains(*w)) {
                c.push(
                    Severity::Warning,
                    "exit-1-not-blocking",
                    Some(at.to_owned()),
                    Some(command),
                    format!(
                        "heuristic: {}:{}: `exit 1` next to \"{word}\" — exit 1 is a non-blocking error (the action goes ahead); exit 2 blocks",
                        script.display(),
                        index + 1
                    ),
                );
                break;
            }
        }
    }
}
