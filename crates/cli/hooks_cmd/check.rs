//! `dsh hooks check`: validates hook configuration as the real tools load it
//! and warns where a user would be surprised. Errors make the exit status 1;
//! warnings alone leave it 0.

use crate::stdio::{ExitStatus, outln};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use dsh_hooks_claude::ClaudeDiscovery;
use dsh_hooks_codex::CodexDiscovery;
use serde::Serialize;
use serde_json::{Value, json};

use super::resolve::ShellVars;

use super::Format;
use crate::wiring::HookSources;
use events::walk;

/// A handler's command: what the shell runs.
mod commands;
/// The event table: events, matcher groups, matchers.
mod events;
/// One handler's fields and timeout.
mod handlers;
/// Permission rules, `defaultMode` and `additionalDirectories` (issue 14).
mod permission_rules;
/// Matchers the closed-subject events never match.
mod subjects;

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
