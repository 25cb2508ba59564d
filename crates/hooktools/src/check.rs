//! `dsh hooks check`: validates hook configuration as the real tools load it
//! and warns where a user would be surprised. Errors make the exit status 1;
//! warnings alone leave it 0.
//!
//! The checks are the bridges' (`dsh_hooks_claude::lint`,
//! `dsh_hooks_codex::lint`, on the walk they share in `dsh_hooks::lint`;
//! `dsh_hooks_gemini::lint` for Gemini CLI settings);
//! this module picks the files and prints what they find.

use dsh_stdio::stdio::{ExitStatus, outln};
use std::path::{Path, PathBuf};

use dsh_hooks::lint::{Finding, Severity};
use dsh_hooks_claude::ClaudeDiscovery;
use dsh_hooks_codex::CodexDiscovery;
use serde::Serialize;
use serde_json::json;

use crate::common::Format;
use dsh_core::hooks::HookSources;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Claude,
    Codex,
    Gemini,
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
    if dsh_hooks_claude::lint::is_plugin_hook_file(path) {
        Kind::Claude
    } else if dsh_hooks_gemini::lint::is_gemini_settings(path) {
        Kind::Gemini
    } else if name == "hooks.json" || name.ends_with(".toml") || in_codex_dir {
        Kind::Codex
    } else {
        Kind::Claude
    }
}

fn claude_discovery(sources: &HookSources) -> ClaudeDiscovery {
    let mut discovery =
        ClaudeDiscovery::new(sources.cwd.clone(), sources.home.clone(), &sources.dsh_home);
    discovery.extra_settings = sources.claude_settings.clone();
    discovery.plugin_dirs = sources.claude_plugin_dirs.clone();
    discovery
}

/// The files dsh would load in this directory, with their dialect, and the
/// setup's own findings: the bridges' discovery, in the order the check
/// has always listed them (Claude Code settings, Codex layers, plugins).
fn discovered(sources: &HookSources) -> (Vec<(PathBuf, Kind)>, Vec<Finding>) {
    let claude = dsh_hooks_claude::lint::lint_targets(&claude_discovery(sources));
    let codex_discovery = CodexDiscovery::from_env(sources.cwd.clone(), sources.home.clone());
    let mut found: Vec<(PathBuf, Kind)> = claude
        .settings
        .into_iter()
        .map(|path| (path, Kind::Claude))
        .collect();
    found.extend(
        dsh_hooks_codex::lint::lint_targets(&codex_discovery)
            .into_iter()
            .map(|path| (path, Kind::Codex)),
    );
    found.extend(
        dsh_hooks_gemini::lint::lint_targets(&sources.gemini_discovery())
            .into_iter()
            .map(|path| (path, Kind::Gemini)),
    );
    // Plugins are what a session loads, and a session loads nothing when
    // either dialect's configuration fails.
    if dsh_hooks_codex::load(&codex_discovery).is_err() {
        return (found, Vec::new());
    }
    for file in claude.plugins {
        if !found.iter().any(|(path, _)| *path == file) {
            found.push((file, Kind::Claude));
        }
    }
    (found, claude.load_findings)
}

pub(super) fn run(
    sources: &HookSources,
    files: &[PathBuf],
    format: Format,
) -> anyhow::Result<ExitStatus> {
    let (targets, setup_findings) = if files.is_empty() {
        discovered(sources)
    } else {
        let named = files
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
            .collect();
        // Named files say nothing about installed plugins.
        (named, Vec::new())
    };
    let mut diagnostics = Vec::new();
    for (file, kind) in &targets {
        diagnostics.extend(match kind {
            Kind::Claude => dsh_hooks_claude::lint::lint_file(file, &sources.cwd),
            Kind::Codex => dsh_hooks_codex::lint::lint_file(file, &sources.cwd),
            Kind::Gemini => dsh_hooks_gemini::lint::lint_file(file, &sources.cwd),
        });
    }
    diagnostics.extend(setup_findings);
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
                    Kind::Gemini => "gemini",
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
