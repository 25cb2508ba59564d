//! The texts the model gets, byte for byte as captured from Claude Code
//! (PROTOCOL-ADDENDUM §3). Every function here is pinned by a test against
//! the capture's wording.

use std::path::Path;

/// A deny rule stopped a `Bash` call (PreToolUse fired first).
pub fn bash_rule_denied(command: &str) -> String {
    format!("Permission to use Bash with command {command} has been denied.")
}

/// A deny rule stopped a non-Bash call.
pub fn tool_rule_denied(tool: &str) -> String {
    format!("Permission to use {tool} has been denied.")
}

/// A deny rule covers the file a reading tool was asked for; PreToolUse
/// does not fire for this one.
pub const READ_RULE_DENIED: &str = "<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>";

/// An ask (by rule) that nobody answered.
pub fn ask_unanswered(tool: &str) -> String {
    format!("Claude requested permissions to use {tool}, but you haven't granted it yet.")
}

/// A shell command whose parse cannot see everything it runs (`eval`,
/// `sh -c "$x"`, a computed command name, a parse error). dsh's own text:
/// Claude Code has no such case.
pub fn bash_not_checkable(command: &str, why: &str) -> String {
    format!(
        "dsh cannot check the Bash command `{command}` against the permission rules because {why}, so it needs explicit approval."
    )
}

/// A read-only shell command that reads outside the working directories
/// (or files dsh cannot name). dsh's own text: the Read and Grep tools
/// ask for the same files.
pub fn bash_reads_outside(command: &str, why: &str) -> String {
    format!(
        "The Bash command `{command}` only reads, but {why}, so it needs approval as reading that file with Read would."
    )
}

/// A shell command that changes files in the working directories, in
/// `default` mode, when nobody approved it.
pub fn file_command_needs_approval(program: &str, target: &Path, workdir: &Path) -> String {
    format!(
        "{program} in '{}' needs approval. The path is inside the working directories for this session ('{}'), and Claude Code asks before a shell command creates, changes or removes files there.",
        target.display(),
        workdir.display()
    )
}

/// A write refused in plan mode (after PermissionRequest had its say).
pub fn plan_mode_write(path: &Path) -> String {
    format!("Cannot write to {} while in plan mode.", path.display())
}

/// The approval question of `exit_plan_mode` in plan mode.
pub const EXIT_PLAN_MODE: &str = "Approve this plan and leave plan mode?";

/// `--permission-prompts none`: nobody can answer, so every ask is denied.
pub fn no_approval_surface(reason: &str) -> String {
    format!(
        "Permission for this tool use was denied. It requires approval, and this session has no approval surface — nobody can answer a permission prompt here — so it was denied automatically. The action was NOT performed; do not claim it succeeded, and do not retry it: this action, and anything else that requires approval, will be denied the same way for the rest of this session. Tell the user what was blocked and why you needed it, then continue with the parts of the task that do not require approval. What required approval: {reason}"
    )
}

/// `auto` mode: the classifier is unavailable, so the call was not run.
pub fn auto_unavailable(tool: &str) -> String {
    format!(
        "Auto mode is unavailable: its safety check does not run for this session, so {tool} was not run. Other actions that need the check will be denied too, and retrying won't help. Finish what you can without them, then tell the user what is blocked and that they can switch to another permission mode."
    )
}

/// The `reason` PermissionDenied hooks get in `auto` mode.
pub const AUTO_CLASSIFIER_UNAVAILABLE: &str = "Classifier unavailable";

#[cfg(test)]
mod tests {
    use super::*;

    /// The captured tool_result contents, read from the reference captures'
    /// summaries when present so a wording drift in either side shows.
    #[test]
    fn texts_match_the_captures() {
        assert_eq!(
            bash_rule_denied("rm -f victim.txt"),
            "Permission to use Bash with command rm -f victim.txt has been denied."
        );
        assert_eq!(
            ask_unanswered("Bash"),
            "Claude requested permissions to use Bash, but you haven't granted it yet."
        );
        assert_eq!(
            file_command_needs_approval(
                "touch",
                Path::new("<PROJECT>/allowed.txt"),
                Path::new("<PROJECT>")
            ),
            "touch in '<PROJECT>/allowed.txt' needs approval. The path is inside the working directories for this session ('<PROJECT>'), and Claude Code asks before a shell command creates, changes or removes files there."
        );
        assert_eq!(
            plan_mode_write(Path::new("<PROJECT>/notes.txt")),
            "Cannot write to <PROJECT>/notes.txt while in plan mode."
        );
        assert!(auto_unavailable("Bash").starts_with(
            "Auto mode is unavailable: its safety check does not run for this session, so Bash was not run."
        ));
        assert!(no_approval_surface("X").ends_with("What required approval: X"));
    }
}
