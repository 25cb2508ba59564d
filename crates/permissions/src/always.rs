//! What an "allow for this session" or "always allow" answer adds: one rule
//! for the call, kept for the session and (always) written to the
//! project's `.claude/settings.local.json`, as Claude Code does. The
//! terminal's approval prompt and the ACP server offer the same answers
//! through these functions.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::rule::{CallInput, ToolKind, real_path, tool_kind};
use crate::store::StoreError;
use crate::{Behavior, PermissionsPlugin, Rule};

/// The rule "allow for this session" / "always allow" would add for a call
/// of `dsh_tool`: `Bash(program:*)` for one simple command (the exact
/// command when it has shell operators), `Edit(./path)` / `Read(./path)`
/// for a file (`//abs/path` outside the project), the bare name for other
/// tools. `None` when no rule would say exactly this (a path or command
/// with glob characters, no command).
pub fn rule_for_call(dsh_tool: &str, arguments: &Value, project: &Path) -> Option<String> {
    let tool = crate::plugin::rule_tool_name(dsh_tool);
    let candidate = match tool_kind(tool) {
        ToolKind::Bash => {
            let command = CallInput::of(arguments).command?.trim();
            if command.is_empty() || command.contains('*') {
                return None;
            }
            let compound = command.contains([';', '&', '|', '<', '>', '$', '`', '\n', '(', ')']);
            if compound {
                format!("Bash({command})")
            } else {
                format!("Bash({}:*)", command.split_whitespace().next()?)
            }
        }
        kind @ (ToolKind::Read | ToolKind::Edit) => {
            let family = if kind == ToolKind::Edit {
                "Edit"
            } else {
                "Read"
            };
            let path = CallInput::of(arguments).path?;
            if path.contains(['*', '?', '[', ']', '{', '}']) {
                return None;
            }
            // Where the path points: an allow rule covers only that, so a
            // link leaving the project is remembered by its target.
            let absolute = real_path(&project.join(path));
            match absolute.strip_prefix(real_path(project)) {
                Ok(relative) if !relative.as_os_str().is_empty() => {
                    format!("{family}(./{})", relative.display())
                }
                Ok(_) | Err(_) => format!("{family}(/{})", absolute.display()),
            }
        }
        ToolKind::Mcp | ToolKind::Other => tool.to_owned(),
    };
    Rule::parse(&candidate).ok().map(|_| candidate)
}

/// Adds `rule` as a session allow rule; false when it does not parse.
pub fn allow_for_session(permissions: &PermissionsPlugin, rule: &str) -> bool {
    match Rule::parse(rule) {
        Ok(parsed) => {
            permissions.add_session_rule(parsed, Behavior::Allow);
            true
        }
        Err(_) => false,
    }
}

/// "Always allow": `rule` written to `project`'s
/// `.claude/settings.local.json` and kept for the session (even when the
/// file cannot be written). Returns the file written.
pub fn allow_always(
    permissions: &PermissionsPlugin,
    project: &Path,
    rule: &str,
) -> Result<PathBuf, StoreError> {
    let written = crate::store::persist_local_rule(project, rule, Behavior::Allow);
    allow_for_session(permissions, rule);
    written
}

/// Whether an allow rule would keep this question from coming back: only
/// when the permission mode itself asked (for an `ask` rule or a hook's
/// `ask` the question comes back whatever allow rules say). `reason` is
/// the question's reason; another reason than the model's own means a hook
/// asked.
pub fn can_remember(
    permissions: &PermissionsPlugin,
    dsh_tool: &str,
    arguments: &Value,
    reason: Option<&str>,
) -> bool {
    match permissions.verdict(dsh_tool, arguments) {
        crate::Verdict::Ask {
            reason: own_reason,
            decider: crate::Decider::Mode(_),
            ..
        } => reason == Some(own_reason.as_str()),
        crate::Verdict::Ask { .. } | crate::Verdict::Allow(_) | crate::Verdict::Deny { .. } => {
            false
        }
    }
}
