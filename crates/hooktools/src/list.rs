//! `dsh hooks list`: the effective hook set, grouped by event in the order
//! dsh's seams fire them, Claude Code hooks before Codex hooks (plugin
//! registration order), configuration order within each.

use dsh_stdio::stdio::{ExitStatus, out, outln};
use serde::Serialize;
use serde_json::json;

use crate::common::Format;
use dsh_core::hooks::HookSources;
use dsh_core::trust::{self, TrustStatus, TrustStore, show_path};

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

fn permission_rows(sources: &HookSources) -> anyhow::Result<PermissionRows> {
    use dsh_permissions::{Permissions, Source, store};
    let mut layers = Vec::new();
    for (source, path) in store::settings_paths(Some(&sources.home), &sources.cwd) {
        layers.push(store::read_layer(source, &path)?);
    }
    for path in &sources.claude_settings {
        layers.push(store::read_layer(Source::CliArg, path)?);
    }
    let mode = Permissions::effective_mode(None, &layers);
    // The same choice as `effective_mode`: the highest-precedence layer naming one.
    let mode_from = layers
        .iter()
        .filter(|layer| layer.default_mode.is_some())
        .min_by_key(|layer| layer.source)
        .map(|layer| layer.origin.clone());
    let workspace =
        dsh_core::perms::workspace_trust(&sources.home, &sources.dsh_home, &sources.cwd);
    let trusted = workspace.trust() == dsh_permissions::Trust::Trusted;
    let mut rules = Vec::new();
    // Highest precedence first, as they are consulted.
    layers.sort_by_key(|layer| layer.source);
    for layer in &layers {
        for rule in &layer.rules {
            rules.push(RuleRow {
                behavior: rule.behavior.key(),
                rule: rule.rule.raw.clone(),
                source: rule.source.name(),
                origin: rule.origin.clone(),
                dropped: !trusted
                    && rule.source.is_project_scoped()
                    && rule.behavior == dsh_permissions::Behavior::Allow,
            });
        }
    }
    Ok(PermissionRows {
        mode: mode.to_string(),
        mode_from,
        workspace_trusted: trusted,
        workspace_trusted_by: workspace.by(),
        rules,
    })
}

pub(super) fn run(sources: &HookSources, format: Format) -> anyhow::Result<ExitStatus> {
    let permissions = permission_rows(sources)?;
    let (claude, codex, gemini) = trust::load_configs(sources)?;
    let store = TrustStore::load(&sources.dsh_home)?;
    let hooks = trust::hooks_of(sources, &claude, &codex, &gemini, &store);
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
    for handler in gemini.handlers() {
        rows.push(Row {
            dialect: "gemini",
            trust: trust_of(&handler.origin),
            event: handler.event.as_str().to_owned(),
            matcher: handler.matcher.clone(),
            handler: format!("command: {}", handler.command),
            timeout_secs: handler.timeout_ms as f64 / 1000.0,
            origin: handler.origin.clone(),
            status: handler.status.as_str().to_owned(),
            plugin: None,
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
    notices.extend(gemini.notices().into_iter().map(|n| format!("gemini: {n}")));

    // Codex's approval policy and sandbox: dsh enforces no sandbox, and
    // says so whatever the configuration asks for.
    let codex_approval = codex.approval();
    match format {
        Format::Json => {
            let doc = json!({
                "cwd": sources.cwd,
                "hooks": rows,
                "notices": notices,
                "permissions": permissions,
                "codex_approval": {
                    "approval_policy": codex_approval.policy.as_ref().map(|p| p.value.as_str()),
                    "sandbox_mode": codex_approval.sandbox.as_ref().map(|s| s.value.as_str()),
                    "sandbox_enforced": false,
                    "summary": codex_approval.describe(),
                },
            });
            outln!("{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => out!(
            "{}{}  codex: {}\n",
            render(&rows, &notices, sources),
            render_permissions(&permissions, sources),
            codex_approval.describe()
        )?,
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

/// The permission section of the listing (the interactive `/permissions`).
pub(super) fn permissions_text(sources: &HookSources) -> anyhow::Result<String> {
    Ok(render_permissions(&permission_rows(sources)?, sources))
}

fn render_permissions(permissions: &PermissionRows, sources: &HookSources) -> String {
    let mut out = String::from("\nPermissions\n");
    let from = match &permissions.mode_from {
        Some(origin) => format!("defaultMode in {}", show_path(origin, &sources.cwd)),
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
            show_path(&rule.origin, &sources.cwd)
        ));
    }
    out
}
