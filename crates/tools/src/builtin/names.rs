//! Each built-in tool's name in each dialect: dsh's own (what the model is
//! offered and what the log records), Claude Code's (hook `tool_name`,
//! permission rules, `--tools`), Codex's and Gemini CLI's where those tools
//! have one.

/// One built-in tool's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolNames {
    /// dsh's name: what the model is offered.
    pub dsh: &'static str,
    /// Claude Code's name.
    pub claude: &'static str,
    /// Codex's hook `tool_name`, when Codex has the tool.
    pub codex: Option<&'static str>,
    /// Gemini CLI's name, when Gemini CLI has the tool.
    pub gemini: Option<&'static str>,
}

const fn row(
    dsh: &'static str,
    claude: &'static str,
    codex: Option<&'static str>,
    gemini: Option<&'static str>,
) -> ToolNames {
    ToolNames {
        dsh,
        claude,
        codex,
        gemini,
    }
}

/// Every built-in tool, in the order they are offered.
pub const TOOL_NAMES: &[ToolNames] = &[
    row("bash", "Bash", Some("Bash"), Some("run_shell_command")),
    row(
        "bash_output",
        "BashOutput",
        None,
        Some("read_background_output"),
    ),
    row("kill_shell", "KillShell", None, None),
    row("read", "Read", None, Some("read_file")),
    row("write", "Write", Some("apply_patch"), Some("write_file")),
    row("edit", "Edit", Some("apply_patch"), Some("replace")),
    row("notebook_edit", "NotebookEdit", None, None),
    row("glob", "Glob", None, Some("glob")),
    row("grep", "Grep", None, Some("grep_search")),
    row("web_fetch", "WebFetch", None, Some("web_fetch")),
    row("task_create", "TaskCreate", None, None),
    row("task_get", "TaskGet", None, None),
    row("task_update", "TaskUpdate", None, None),
    row("task_list", "TaskList", None, None),
    row("ask_user_question", "AskUserQuestion", None, None),
    row(
        "exit_plan_mode",
        "ExitPlanMode",
        None,
        Some("exit_plan_mode"),
    ),
    row("agent", "Agent", None, None),
];

/// Claude Code's name for a dsh tool; other names (MCP tools) pass through.
pub fn claude_name(dsh: &str) -> &str {
    TOOL_NAMES
        .iter()
        .find(|names| names.dsh == dsh)
        .map_or(dsh, |names| names.claude)
}

/// dsh's name for a Claude Code tool name (`Task` is the former name of
/// `Agent`, `MultiEdit` is `edit`, `TaskOutput`/`TaskStop` are the newer
/// names of `BashOutput`/`KillShell`); other names pass through.
pub fn dsh_name_for_claude(claude: &str) -> &str {
    match claude {
        "Task" => "agent",
        "MultiEdit" => "edit",
        "TaskOutput" => "bash_output",
        "TaskStop" => "kill_shell",
        other => TOOL_NAMES
            .iter()
            .find(|names| names.claude == other)
            .map_or(other, |names| names.dsh),
    }
}

/// Gemini CLI's name for a dsh tool, when it has one.
pub fn gemini_name(dsh: &str) -> Option<&'static str> {
    TOOL_NAMES
        .iter()
        .find(|names| names.dsh == dsh)
        .and_then(|names| names.gemini)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_names_round_trip() {
        for names in TOOL_NAMES {
            assert_eq!(dsh_name_for_claude(claude_name(names.dsh)), names.dsh);
        }
        assert_eq!(dsh_name_for_claude("Task"), "agent");
        assert_eq!(claude_name("mcp__s__t"), "mcp__s__t");
    }
}
