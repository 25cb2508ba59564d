//! `dsh hooks check`: validates hook configuration as the real tools load it
//! and warns where a user would be surprised. Errors make the exit status 1;
//! warnings alone leave it 0.
//!
//! The checks are the registered dialects' ([`dsh_hooks::registry::HookDialect`]:
//! their lint targets, file claims and lints, on the walk they share in
//! `dsh_hooks::lint`); which files dsh would load here is core's
//! ([`dsh_core::Workspace::hook_files`]); this module lints them and prints
//! what it finds.

use dsh_stdio::stdio::{ExitStatus, outln};
use std::path::{Path, PathBuf};

use dsh_hooks::lint::Severity;
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

pub(super) fn run(
    workspace: &Workspace,
    files: &[PathBuf],
    format: Format,
) -> anyhow::Result<ExitStatus> {
    let registry = dsh_core::dialects::registry();
    let (targets, setup_findings) = if files.is_empty() {
        workspace.hook_files()
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
