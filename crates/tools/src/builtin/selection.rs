//! Which built-in tools a session offers: Claude Code's `--tools` list.

use std::collections::BTreeSet;

/// The built-in tools a session offers (MCP tools are not affected).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum BuiltinSelection {
    /// Every built-in tool (no `--tools`, or `--tools default`).
    #[default]
    All,
    /// Only these, by dsh's tool names; empty offers none (`--tools ""`).
    Only(BTreeSet<String>),
}

impl BuiltinSelection {
    /// Reads a `--tools` value as Claude Code does: `default` keeps every
    /// built-in tool, an empty value none, otherwise the tools named,
    /// separated by commas or spaces. Claude Code's names (`Bash`, `Read`,
    /// `Write`, `Edit`, `Glob`, `Grep`, `Agent`, `Task`) and dsh's own
    /// (`bash`, …) both work; a name no built-in tool has selects nothing
    /// (Claude Code's tools dsh does not offer, such as `WebSearch`).
    pub fn parse(list: &str) -> Self {
        let names: Vec<&str> = list
            .split([',', ' '])
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .collect();
        if names
            .iter()
            .any(|name| name.eq_ignore_ascii_case("default"))
        {
            return BuiltinSelection::All;
        }
        BuiltinSelection::Only(names.into_iter().map(dsh_name).collect())
    }

    /// Whether the built-in tool `name` (dsh's name) is offered.
    pub fn keeps(&self, name: &str) -> bool {
        match self {
            BuiltinSelection::All => true,
            BuiltinSelection::Only(names) => names.contains(name),
        }
    }
}

/// dsh's name for a tool named in a `--tools` list.
fn dsh_name(name: &str) -> String {
    super::names::dsh_name_for_claude(name).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_names_select_dsh_tools() {
        let selection = BuiltinSelection::parse("Bash,Read Edit");
        assert!(selection.keeps("bash"));
        assert!(selection.keeps("read"));
        assert!(selection.keeps("edit"));
        assert!(!selection.keeps("write"));
        assert!(!selection.keeps("agent"));
    }

    #[test]
    fn empty_selects_none_and_default_selects_all() {
        assert!(!BuiltinSelection::parse("").keeps("bash"));
        assert_eq!(BuiltinSelection::parse("default"), BuiltinSelection::All);
        assert!(BuiltinSelection::parse("Task,WebFetch").keeps("agent"));
        assert!(!BuiltinSelection::parse("WebFetch").keeps("bash"));
    }
}
