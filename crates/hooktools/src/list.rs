//! `dsh hooks list`: the effective hook set, grouped by event in the order
//! dsh's seams fire them, Claude Code hooks before Codex hooks (plugin
//! registration order), configuration order within each.

use dsh_stdio::stdio::{ExitStatus, out, outln};
use serde::Serialize;
use serde_json::json;

use crate::common::Format;
use std::path::Path;

use dsh_core::DisabledReason;
use dsh_core::Workspace;
use dsh_core::trust::{TrustStatus, show_path};
use dsh_hooks::registry::ListFact;

/// The order events are shown in: the order a session meets them.
const EVENT_ORDER: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "BeforeAgent",
    "PreModelRequest",
    "BeforeModel",
    "BeforeToolSelection",
    "PostModelRequest",
    "AfterModel",
    "PreToolUse",
    "BeforeTool",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "AfterTool",
    "Stop",
    "AfterAgent",
    "Interrupt",
    "PreCompress",
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

/// One permission rule as `hooks list` shows it.
#[derive(Debug, Serialize)]
struct RuleRow {
    behavior: &'static str,
    rule: String,
    /// `localSettings`, `projectSettings`, `userSettings`, `cliArg`.
    source: &'static str,
    origin: String,
    /// A project `allow` rule in a workspace the user has not trusted.
    dropped: bool,
}

/// One Claude Code settings layer, as `dsh status` shows it: highest
/// precedence first, with why a session here leaves it out, if it does.
#[derive(Debug, Serialize)]
struct LayerRow {
    /// `managed`, `flag`, `local`, `project`, `user`.
    source: &'static str,
    path: std::path::PathBuf,
    exists: bool,
    /// Why it does not apply (`hooks off: disableAllHooks in FILE`,
    /// `held back: …`, `unreadable: …`); `None`: it applies.
    disabled: Option<String>,
    /// Held back until the workspace is trusted.
    #[serde(skip)]
    held_back: bool,
}

fn layer_rows(workspace: &Workspace) -> Vec<LayerRow> {
    workspace
        .settings()
        .layers()
        .iter()
        .map(|layer| LayerRow {
            source: layer.source.as_str(),
            path: layer.path.clone(),
            exists: layer.json.is_some() || layer.read_error().is_some(),
            disabled: layer.disabled.as_ref().map(ToString::to_string),
            held_back: layer.disabled == Some(DisabledReason::UntrustedWorkspace),
        })
        .collect()
}

/// The permission mode a session here starts in (without flags) and the
/// rules with their sources.
#[derive(Debug, Serialize)]
struct PermissionRows {
    mode: String,
    /// Which settings file's `defaultMode` chose the mode; `None`: the default.
    mode_from: Option<String>,
    workspace_trusted: bool,
    /// `~/.claude.json` or `dsh hooks trust`, when trusted.
    workspace_trusted_by: Option<&'static str>,
    rules: Vec<RuleRow>,
}

fn permission_rows(workspace: &Workspace) -> anyhow::Result<PermissionRows> {
    let view = workspace.permissions()?;
    let mut rules = Vec::new();
    // Highest precedence first, as they are consulted.
    for layer in &view.layers {
        for rule in &layer.rules {
            rules.push(RuleRow {
                behavior: rule.behavior.key(),
                rule: rule.rule.raw.clone(),
                source: rule.source.name(),
                origin: rule.origin.clone(),
                dropped: view.drops(rule),
            });
        }
    }
    Ok(PermissionRows {
        mode: view.mode.to_string(),
        workspace_trusted: view.workspace_trusted(),
        mode_from: view.mode_from,
        workspace_trusted_by: view.workspace.by(),
        rules,
    })
}

pub(super) fn run(workspace: &Workspace, format: Format) -> anyhow::Result<ExitStatus> {
    let permissions = permission_rows(workspace)?;
    let layers = layer_rows(workspace);
    let configs = workspace.hooks()?;
    let store = workspace.trust_store()?;
    let hooks = workspace.project_hooks(&configs, &store);
    let cwd = workspace.cwd();
    let trust_of = |origin: &str| {
        hooks
            .iter()
            .find(|hook| hook.origin == origin)
            .map_or(TrustStatus::UserLevel, |hook| hook.status)
    };
    let mut rows = Vec::new();
    for config in configs.iter() {
        let dialect = config.dialect().as_str();
        for hook in config.hooks() {
            rows.push(Row {
                dialect,
                trust: trust_of(&hook.origin),
                event: hook.event,
                matcher: hook.matcher,
                handler: hook.handler,
                timeout_secs: hook.timeout_secs,
                origin: hook.origin,
                status: hook.status,
                plugin: hook.plugin,
            });
        }
    }
    // Stable sort: event order first (a dialect's own name, such as
    // Copilot's `preToolUse`, placed by the event it fires as); dialect
    // and configuration order kept.
    let dialects = dsh_core::dialects::registry();
    rows.sort_by_key(|row| {
        let own = dialects
            .get(row.dialect)
            .and_then(|d| d.test_event(&row.event));
        let event = own.unwrap_or(&row.event);
        (EVENT_ORDER.iter())
            .position(|known| *known == event)
            .unwrap_or(EVENT_ORDER.len())
    });
    let notices = configs.notices();
    // Facts a dialect adds (Codex's approval policy and sandbox, which
    // dsh does not enforce).
    let facts: Vec<ListFact> = configs.iter().flat_map(|c| c.list_facts()).collect();
    match format {
        Format::Json => {
            let mut doc = json!({
                "cwd": cwd,
                "hooks": rows,
                "notices": notices,
                "permissions": permissions,
                "settings_layers": layers,
            });
            for fact in facts {
                doc[fact.key.as_str()] = fact.json;
            }
            outln!("{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => {
            let mut text = render(&rows, &notices, cwd);
            text.push_str(&render_layers(&layers, cwd));
            text.push_str(&render_permissions(&permissions, cwd));
            // A fact with no text is for `--json` only.
            for fact in facts.iter().filter(|fact| !fact.text.is_empty()) {
                text.push_str(&format!("  {}\n", fact.text));
            }
            out!("{text}")?;
        }
    }
    Ok(ExitStatus::Success)
}

fn render(rows: &[Row], notices: &[String], cwd: &Path) -> String {
    let mut out = String::new();
    if rows.is_empty() {
        out.push_str(&format!("No hooks configured for {}.\n", cwd.display()));
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
            show_path(&row.origin, cwd)
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

/// The settings layers a session here switches off whole, as `dsh status`
/// names them (a layer held back for trust is not listed: its hooks are
/// marked untrusted and its allow rules dropped below).
fn render_layers(layers: &[LayerRow], cwd: &Path) -> String {
    let mut out = String::new();
    for layer in layers
        .iter()
        .filter(|layer| layer.exists && !layer.held_back)
    {
        let Some(why) = &layer.disabled else {
            continue;
        };
        if out.is_empty() {
            out.push_str("\nSettings layers switched off:\n");
        }
        out.push_str(&format!(
            "  {} ({}): {why}\n",
            show_path(&layer.path.display().to_string(), cwd),
            layer.source
        ));
    }
    out
}

/// The permission section of the listing (the interactive `/permissions`).
pub(super) fn permissions_text(workspace: &Workspace) -> anyhow::Result<String> {
    Ok(render_permissions(
        &permission_rows(workspace)?,
        workspace.cwd(),
    ))
}

fn render_permissions(permissions: &PermissionRows, cwd: &Path) -> String {
    let mut out = String::from("\nPermissions\n");
    let from = match &permissions.mode_from {
        Some(origin) => format!("defaultMode in {}", show_path(origin, cwd)),
        None => "no flag or defaultMode".to_owned(),
    };
    out.push_str(&format!("  mode {} ({from})\n", permissions.mode));
    if permissions.rules.is_empty() {
        out.push_str("  no rules\n");
    }
    for rule in &permissions.rules {
        let dropped = if rule.dropped {
            ", dropped: workspace not trusted"
        } else {
            ""
        };
        out.push_str(&format!(
            "  {} {} [{}{dropped}] — {}\n",
            rule.behavior,
            rule.rule,
            rule.source,
            show_path(&rule.origin, cwd)
        ));
    }
    out
}
