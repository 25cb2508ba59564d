//! Where a tool that is not dsh's own comes from, under its source's names.

use serde::{Deserialize, Serialize};

/// Where a tool that is not dsh's own comes from, under the names its
/// source gives it: dsh's tool name may have them changed. Logged on
/// `tool/call` as `"origin": {"kind": "mcp", "server": …, "tool": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolOrigin {
    /// A tool of an MCP server: the server's configured name and the
    /// tool's own name (dsh offers it as `mcp__<server>__<tool>`, each
    /// with what is not `[A-Za-z0-9_-]` made `_`).
    Mcp {
        /// The configured server name.
        server: String,
        /// The server's own tool name.
        tool: String,
    },
}

/// The server and tool of a dsh MCP tool name (`mcp__<server>__<tool>`,
/// as `dsh-mcp` names them, sanitized); `None` for any other tool.
pub fn mcp_tool_parts(tool: &str) -> Option<(&str, &str)> {
    let (server, name) = tool.strip_prefix("mcp__")?.split_once("__")?;
    (!server.is_empty() && !name.is_empty()).then_some((server, name))
}

/// The server and tool of the MCP tool `tool` from `origin`, else read
/// back from dsh's name (a call no server stands behind, as in a dry run,
/// or a log written before calls recorded their origin); `None` for any
/// other tool.
pub fn mcp_names<'a>(tool: &'a str, origin: Option<&'a ToolOrigin>) -> Option<(&'a str, &'a str)> {
    match origin {
        Some(ToolOrigin::Mcp { server, tool }) => Some((server, tool)),
        None => mcp_tool_parts(tool),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_wins_over_the_sanitized_name() {
        let origin = ToolOrigin::Mcp {
            server: "oracle.v2".into(),
            tool: "echo.text".into(),
        };
        assert_eq!(
            mcp_names("mcp__oracle_v2__echo_text", Some(&origin)),
            Some(("oracle.v2", "echo.text"))
        );
        assert_eq!(
            mcp_names("mcp__oracle_v2__echo_text", None),
            Some(("oracle_v2", "echo_text"))
        );
        assert_eq!(mcp_names("bash", None), None);
        assert_eq!(mcp_tool_parts("mcp__server"), None);
    }

    #[test]
    fn an_origin_is_logged_with_its_kind() {
        let origin = ToolOrigin::Mcp {
            server: "oracle.v2".into(),
            tool: "echo".into(),
        };
        let text = serde_json::to_string(&origin).unwrap();
        assert_eq!(text, r#"{"kind":"mcp","server":"oracle.v2","tool":"echo"}"#);
        assert_eq!(serde_json::from_str::<ToolOrigin>(&text).unwrap(), origin);
    }
}
