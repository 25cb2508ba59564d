//! `dsh hooks check`: validates hook configuration as the real tools load it
//! and warns where a user would be surprised. Errors make the exit status 1;
//! warnings alone leave it 0.
//!
//! The checks are the registered dialects' ([`dsh_hooks::registry::HookDialect`]:
//! their lint targets, file claims and lints, on the walk they share in
//! `dsh_hooks::lint`); this module picks the files and prints what they
//! find.

use dsh_stdio::stdio::{ExitStatus, outln};
use std::path::{Path, PathBuf};

use dsh_hooks::lint::{Finding, Severity};
use dsh_hooks::registry::{FileClaim, Registry};
use dsh_protocol::Dialect;
use serde_json::json;

use crate::common::Format;
use dsh_core::Workspace;

/// The dialect whose format a file named on the command line is in: the
/// strongest claim of the registered dialects, the first registered on a
/// tie (Claude Code settings take any file nobody else claims).
fn kind_of(registry: &Registry, path: &Path) -> Option<Dialect> {
    let mut best: Option<(FileClaim, Dialect)> = None;
    for dialect in registry.iter() {
        if let Some(claim) = dialect.claims_file(path)
            && best.is_none_or(|(held, _)| claim > held)
        {
            best = Some((claim, dialect.id()));
        }
    }
    best.map(|(_, dialect)| dialect)
}

/// The files dsh would load in this directory, with their dialect, and the
/// setup's own findings: each dialect's discovery in registration order,
/// then the files loaded only when every configuration loads (plugins).
fn discovered(
    registry: &Registry,
    workspace: &Workspace,
) -> (Vec<(PathBuf, Dialect)>, Vec<Finding>) {
    let dialect_sources = workspace.dialect_sources();
    let mut found: Vec<(PathBuf, Dialect)> = Vec::new();
    let mut late: Vec<(PathBuf, Dialect)> = Vec::new();
    let mut findings = Vec::new();
    for dialect in registry.iter() {
        let targets = dialect.lint_targets(&dialect_sources);
        // In the home directory the project's files are the user's: each
        // file is checked once.
        for path in targets.files {
            if !found.iter().any(|(seen, _)| *seen == path) {
                found.push((path, dialect.id()));
            }
        }
        late.extend(
            targets
                .loaded_files
                .into_iter()
                .map(|path| (path, dialect.id())),
        );
        findings.extend(targets.findings);
    }
    // Plugins are what a session loads, and a session loads nothing when
    // any dialect's configuration fails.
    if registry.load(&dialect_sources).is_err() {
        return (found, Vec::new());
    }
    for (file, dialect) in late {
        if !found.iter().any(|(path, _)| *path == file) {
            found.push((file, dialect));
        }
    }
    (found, findings)
}

pub(super) fn run(
    workspace: &Workspace,
    files: &[PathBuf],
    format: Format,
) -> anyhow::Result<ExitStatus> {
    let registry = dsh_core::dialects::registry();
    let (targets, setup_findings) = if files.is_empty() {
        discovered(&registry, workspace)
    } else {
        let named = files
            .iter()
            .map(|f| {
                let path = if f.is_absolute() {
                    f.clone()
                } else {
                    workspace.cwd().join(f)
                };
                let kind = kind_of(&registry, &path).unwrap_or(Dialect::Claude);
                (path, kind)
            })
            .collect();
        // Named files say nothing about installed plugins.
        (named, Vec::new())
    };
    let mut diagnostics = Vec::new();
    for (file, kind) in &targets {
        if let Some(dialect) = registry.get(kind.as_str()) {
            diagnostics.extend(dialect.lint_file(file, workspace.cwd()));
        }
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
                outln!(
                    "No hook configuration found for {}.",
                    workspace.cwd().display()
                )?;
            }
            for (file, kind) in &targets {
                outln!("checked {} ({kind})", file.display())?;
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
