//! The JSON-RPC that `mcp_message` carries to an in-process SDK MCP server
//! and back: the messages the CLI sends (`initialize`,
//! `notifications/initialized`, `tools/list`, `tools/call`, keys in Claude
//! Code's order: `method`, `params`, `jsonrpc`, `id`), the replies it
//! reads, and the per-server manifest the TypeScript SDK sends in
//! `initialize`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The MCP protocol version the CLI offers in `initialize`.
pub const MCP_PROTOCOL_VERSION: &str = "2025-11-25";

/// One JSON-RPC request or notification (a notification has no `id`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcMessage {
    /// `initialize`, `tools/call`, …
    pub method: &'static str,
    /// The method's parameters, when it has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<RpcParams>,
    /// Always `2.0`.
    pub jsonrpc: &'static str,
    /// The request id; absent on a notification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
}

impl RpcMessage {
    /// `initialize` (id 0), naming the client `dsh` at `version`.
    pub fn initialize(version: &'static str) -> Self {
        RpcMessage::request(
            "initialize",
            Some(RpcParams::Initialize(InitializeParams {
                protocol_version: MCP_PROTOCOL_VERSION,
                capabilities: ClientCapabilities {},
                client_info: ClientInfo {
                    name: "dsh",
                    version,
                },
            })),
            0,
        )
    }

    /// `notifications/initialized`.
    pub fn initialized() -> Self {
        RpcMessage {
            method: "notifications/initialized",
            params: None,
            jsonrpc: "2.0",
            id: None,
        }
    }

    /// `tools/list` (id 1).
    pub fn list_tools() -> Self {
        RpcMessage::request("tools/list", None, 1)
    }

    /// `tools/call` of `name` with the model's `arguments`.
    pub fn call_tool(id: u64, name: &str, arguments: Value) -> Self {
        RpcMessage::request(
            "tools/call",
            Some(RpcParams::CallTool(CallToolParams {
                name: name.to_owned(),
                arguments,
            })),
            id,
        )
    }

    fn request(method: &'static str, params: Option<RpcParams>, id: u64) -> Self {
        RpcMessage {
            method,
            params,
            jsonrpc: "2.0",
            id: Some(id),
        }
    }
}

/// The `params` of a message, by method.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RpcParams {
    /// `initialize`.
    Initialize(InitializeParams),
    /// `tools/call`.
    CallTool(CallToolParams),
}

/// `initialize` params.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// [`MCP_PROTOCOL_VERSION`].
    pub protocol_version: &'static str,
    /// None offered: `{}`.
    pub capabilities: ClientCapabilities,
    /// `{"name": "dsh", "version": …}`.
    pub client_info: ClientInfo,
}

/// The client's capabilities: none (`{}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ClientCapabilities {}

/// The client's name and version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ClientInfo {
    /// `dsh`.
    pub name: &'static str,
    /// dsh's version.
    pub version: &'static str,
}

/// `tools/call` params.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallToolParams {
    /// The server's own name of the tool.
    pub name: String,
    /// The call's arguments: arbitrary JSON, as the model made them.
    pub arguments: Value,
}

/// A JSON-RPC reply: its `result` (of the method's type `R`) or its
/// `error`, kept whole to be shown.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RpcReply<R> {
    /// The result, when the call succeeded.
    pub result: Option<R>,
    /// The server's error object, as it sent it.
    pub error: Option<Value>,
}

/// A `tools/list` result: `{"tools": […]}`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ToolsList {
    /// The server's tools, in its order.
    pub tools: Vec<ListedTool>,
}

/// One tool of a `tools/list` result. A tool without a name is not
/// offered.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedTool {
    /// The tool's name on its server.
    #[serde(default)]
    pub name: Option<String>,
    /// What the model is told the tool does.
    #[serde(default)]
    pub description: Option<String>,
    /// The tool's JSON Schema: arbitrary JSON.
    #[serde(default)]
    pub input_schema: Option<Value>,
}

/// One server's entry of `initialize.sdkMcpServerManifests` (TypeScript),
/// or what the CLI learned by asking (Python): its tools. The
/// `initializeResult` beside them is not read.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerManifest {
    /// The server's `tools/list` result.
    #[serde(default)]
    pub tools_list_result: ToolsList,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    /// The bytes Claude Code writes (and dsh wrote from `json!` before
    /// these types): key order and all.
    #[test]
    fn messages_serialize_in_wire_order() {
        let line = |message: RpcMessage| serde_json::to_string(&message).unwrap();
        assert_eq!(
            line(RpcMessage::initialize("9.8.7")),
            r#"{"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"dsh","version":"9.8.7"}},"jsonrpc":"2.0","id":0}"#
        );
        assert_eq!(
            line(RpcMessage::initialized()),
            r#"{"method":"notifications/initialized","jsonrpc":"2.0"}"#
        );
        assert_eq!(
            line(RpcMessage::list_tools()),
            r#"{"method":"tools/list","jsonrpc":"2.0","id":1}"#
        );
        assert_eq!(
            line(RpcMessage::call_tool(3, "add", json!({"b": 2, "a": 1}))),
            r#"{"method":"tools/call","params":{"name":"add","arguments":{"b":2,"a":1}},"jsonrpc":"2.0","id":3}"#
        );
    }

    #[test]
    fn replies_and_manifests_read_typed() {
        let reply: RpcReply<ToolsList> = serde_json::from_value(json!({
            "jsonrpc": "2.0", "id": 1,
            "result": {"tools": [
                {"name": "add", "description": "Adds", "inputSchema": {"type": "object"}},
                {"description": "nameless"}
            ]}
        }))
        .unwrap();
        let tools = reply.result.unwrap().tools;
        assert_eq!(tools[0].name.as_deref(), Some("add"));
        assert_eq!(tools[0].input_schema, Some(json!({"type": "object"})));
        assert_eq!(tools[1].name, None);
        let failed: RpcReply<ToolsList> =
            serde_json::from_value(json!({"error": {"code": -1, "message": "no"}})).unwrap();
        assert_eq!((failed.result, failed.error.is_some()), (None, true));
        // A result without `tools` is not a tools list.
        assert!(serde_json::from_value::<RpcReply<ToolsList>>(json!({"result": {}})).is_err());
        let manifest: ServerManifest = serde_json::from_value(json!({
            "initializeResult": {"serverInfo": {"name": "calc"}},
            "toolsListResult": {"tools": [{"name": "add"}]}
        }))
        .unwrap();
        assert_eq!(manifest.tools_list_result.tools.len(), 1);
    }
}
