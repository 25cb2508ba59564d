//! `dsh hooks list`: the effective hook set, grouped by event in the order
//! dsh's seams fire them, Claude Code hooks before Codex hooks (plugin
//! registration order), configuration order within each.

use crate::stdio::{ExitStatus, out, outln};
use serde::Serialize;
use serde_json::json;

use super::Format;
use crate::trust::{self, TrustStatus, TrustStore, show_path};
use crate::wiring::HookSources;

/// The order events are shown in: the order a session meets them.
const EVENT_ORDER: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreModelRequest",
    "PostModelRequest",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "Interrupt",
    "Notification",
    "SessionEnd",
];

/// One row of the listing.
#[derive(Debug, Serialize)]
struct Row {
    dialect: &'static str,
    event: String,
    matcher: Option<String>,
    handler: String,
    timeout_secs: f64,
    origin: String,
    status: String,
    trust: TrustStatus,
    /// `<plugin>@<marketplace>` for a plugin hook (`<plugin>@inline` for `--plugin-dir`).
    plugin: Option<String>,
}

pub(super) fn run(sources: &HookSources, format: Format) -> anyhow::Result<ExitStatus> {
    let (claude, codex) = trust::load_configs(sources)?;
    let store = TrustStore::load(&sources.dsh_home)?;
    let hooks = trust::hooks_of(sources, &claude, &codex, &store);
    let trust_of = |origin: &str| {
        hooks
            .iter()
            .find(|hook| hook.origin == origin)
            .map_or(TrustStatus::UserLevel, |hook| hook.status)
    };
    let mut rows = Vec::new();
    for entry in claude.entries() {
        rows.push(Row {
            dialect: "claude",
            trust: trust_of(&entry.origin),
            event: entry.event,
            matcher: entry.matcher,
            handler: entry.handler,
            timeout_secs: entry.timeout_secs,
            origin: entry.origin,
            status: entry.status,
            plugin: entry.plugin,
        });
    }
    for entry in codex.entries() {
        let handler = match &entry.command {
            Some(command) if entry.is_async => format!("command (async): {command}"),
            Some(command) => format!("command: {command}"),
            None => entry.handler.clone(),
        };
        let status = match &entry.status {
            dsh_hooks_codex::EntryStatus::Active => "active".to_owned(),
            dsh_hooks_codex::EntryStatus::Disabled { reason } => format!("disabled: {reason}"),
            dsh_hooks_codex::EntryStatus::Unsupported { reason } => {
                format!("unsupported: {reason}")
            }
        };
        rows.push(Row {
            dialect: "codex",
            trust: trust_of(&entry.origin),
            event: entry.event.clone(),
            matcher: entry.matcher.clone(),
            handler,
            timeout_secs: entry.timeout_secs as f64,
            origin: entry.origin.clone(),
            status,
            plugin: entry.plugin.clone(),
        });
    }
    // Stable sort: event order first; dialect and configuration order kept.
    rows.sort_by_key(|row| {
        EVENT_ORDER
            .iter()
            .position(|event| *event == row.event)
            .unwrap_or(EVENT_ORDER.len())
    });
    let mut notices: Vec<String> = claude
        .notices()
        .into_iter()
        .map(|n| format!("claude: {n}"))
        .collect();
    notices.extend(codex.notices().into_iter().map(|n| format!("codex: {n}")));

    match format {
        Format::Json => {
            let doc = json!({
                "cwd": sources.cwd,
                "hooks": rows,
                "notices": notices,
            });
            outln!("{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => out!("{}", render(&rows, &notices, sources))?,
    }
    Ok(ExitStatus::Success)
}

fn render(rows: &[Row], notices: &[String], sources: &HookSources) -> String {
    let mut out = String::new();
    if rows.is_empty() {
        out.push_str(&format!(
            "No hooks configured for {}.\n",
            sources.cwd.display()
        ));
    }
    let mut current: Option<&str> = None;
    let mut index = 0;
    for row in rows {
        if current != Some(row.event.as_str()) {
            if current.is_some() {
                out.push('\n');
            }
            out.push_str(&format!("{}\n", row.event));
            current = Some(&row.event);
            index = 0;
        }
        index += 1;
        let matcher = row
            .matcher
            .as_deref()
            .map(|m| format!(" matcher {m:?}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {index}. [{}]{matcher} {} (timeout {}s)\n",
            row.dialect, row.handler, row.timeout_secs
        ));
        let trust = match row.trust {
            TrustStatus::UserLevel => String::new(),
            other @ TrustStatus::Trusted
            | other @ TrustStatus::TrustedByCodex
            | other @ TrustStatus::Untrusted
            | other @ TrustStatus::Changed => format!(", {}", other.as_str()),
        };
        let plugin = row
            .plugin
            .as_deref()
            .map(|id| format!(", plugin {id}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "     {}{trust}{plugin} — {}\n",
            row.status,
            show_path(&row.origin, &sources.cwd)
        ));
    }
    if !notices.is_empty() {
        out.push_str("\nNotices:\n");
        for notice in notices {
            out.push_str(&format!("  {notice}\n"));
        }
    }
    out
}
