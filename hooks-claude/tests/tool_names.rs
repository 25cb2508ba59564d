//! hooks-claude's tool names agree with dsh-tools' name table.

use dsh_hooks_claude::payload::{cc_tool_name, dsh_tool_name};
use dsh_tools::builtin::names::{TOOL_NAMES, claude_name, dsh_name_for_claude};

#[test]
fn the_claude_names_match_the_name_table() {
    for names in TOOL_NAMES {
        assert_eq!(cc_tool_name(names.dsh), names.claude);
        assert_eq!(cc_tool_name(names.dsh), claude_name(names.dsh));
        assert_eq!(dsh_tool_name(names.claude), names.dsh);
    }
    for alias in ["Task", "MultiEdit", "TaskOutput", "TaskStop"] {
        assert_eq!(dsh_tool_name(alias), dsh_name_for_claude(alias));
    }
}
