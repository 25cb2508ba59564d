//! In-process MCP servers of the SDK application (`createSdkMcpServer`):
//! their tools join the session's tool list under Claude Code's names
//! (`mcp__<server>__<tool>`), and each call goes to the application as an
//! `mcp_message` control request carrying the JSON-RPC `tools/call`.
//!
//! The TypeScript SDK sends each server's tool list in `initialize`
//! (`sdkMcpServerManifests`); that is what dsh offers. The Python SDK names
//! its servers in `--mcp-config` (`"type": "sdk"`) and sends no manifest:
//! dsh asks each one as Claude Code does (`initialize`,
//! `notifications/initialized`, `tools/list`, all as `mcp_message`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use dsh_protocol::ToolSpec;
use dsh_sdk_control::{CliRequest, McpAnswer, McpMessage};
use dsh_tools::{Rendered, Tool, ToolContext, ToolError};
use serde_json::{Map, Value, json};

use crate::peer::Peer;

/// One tool of one SDK MCP server.
pub struct SdkMcpTool {
    peer: Arc<Peer>,
    server: String,
    tool: String,
    spec: ToolSpec,
    ids: Arc<AtomicU64>,
}

/// The tools the manifests of `initialize` list, in order.
pub fn tools_of(
    peer: &Arc<Peer>,
    servers: &[String],
    manifests: Option<&Map<String, Value>>,
) -> Vec<Arc<dyn Tool>> {
    let ids = Arc::new(AtomicU64::new(1));
    let mut out: Vec<Arc<dyn Tool>> = Vec::new();
    for server in servers {
        let listed = manifests
            .and_then(|m| m.get(server))
            .and_then(|m| m.pointer("/toolsListResult/tools"))
            .and_then(Value::as_array);
        for def in listed.into_iter().flatten() {
            let Some(name) = def.get("name").and_then(Value::as_str) else {
                continue;
            };
            out.push(Arc::new(SdkMcpTool {
                peer: Arc::clone(peer),
                server: server.clone(),
                tool: name.to_owned(),
                spec: ToolSpec {
                    name: dsh_mcp::qualified_name(server, name),
                    description: def
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    input_schema: def
                        .get("inputSchema")
                        .cloned()
                        .unwrap_or_else(|| json!({"type": "object"})),
                },
                ids: Arc::clone(&ids),
            }));
        }
    }
    out
}

/// Asks each of `servers` for its tools over `mcp_message`, before the
/// `initialize` answer as Claude Code does, and returns manifests shaped as
/// the TypeScript SDK sends them (`{"<server>": {"initializeResult": …,
/// "toolsListResult": {"tools": […]}}}`). A server that fails to answer is
/// left out and named in the notices.
pub async fn list_tools(peer: &Peer, servers: &[String]) -> (Map<String, Value>, Vec<String>) {
    let mut manifests = Map::new();
    let mut notices = Vec::new();
    for server in servers {
        match ask_manifest(peer, server).await {
            Ok(manifest) => {
                manifests.insert(server.clone(), manifest);
            }
            Err(error) => notices.push(format!(
                "SDK MCP server `{server}` offers no tools: {error}"
            )),
        }
    }
    (manifests, notices)
}

async fn ask_manifest(peer: &Peer, server: &str) -> Result<Value, String> {
    let initialized = rpc(
        peer,
        server,
        json!({
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "dsh", "version": env!("CARGO_PKG_VERSION")},
            },
            "jsonrpc": "2.0",
            "id": 0,
        }),
    )
    .await?;
    rpc(
        peer,
        server,
        json!({"method": "notifications/initialized", "jsonrpc": "2.0"}),
    )
    .await?;
    let listed = rpc(
        peer,
        server,
        json!({"method": "tools/list", "jsonrpc": "2.0", "id": 1}),
    )
    .await?;
    if !listed.get("tools").is_some_and(Value::is_array) {
        return Err(format!(
            "`tools/list` answered without a `tools` list: {listed}"
        ));
    }
    Ok(json!({"initializeResult": initialized, "toolsListResult": listed}))
}

/// One JSON-RPC exchange with an SDK server: the reply's `result`.
async fn rpc(peer: &Peer, server: &str, message: Value) -> Result<Value, String> {
    let method = message["method"].as_str().unwrap_or_default().to_owned();
    let answer = peer
        .request(CliRequest::McpMessage(McpMessage {
            server_name: server.to_owned(),
            message,
        }))
        .await?;
    let reply: McpAnswer =
        serde_json::from_value(answer).map_err(|error| format!("`{method}`: {error}"))?;
    if let Some(error) = reply.mcp_response.get("error") {
        return Err(format!("`{method}`: MCP error {error}"));
    }
    Ok(reply
        .mcp_response
        .get("result")
        .cloned()
        .unwrap_or(Value::Null))
}

#[async_trait]
impl Tool for SdkMcpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    async fn run(&self, ctx: &ToolContext, arguments: &Value) -> Result<Value, ToolError> {
        let id = self.ids.fetch_add(1, Ordering::Relaxed);
        let request = CliRequest::McpMessage(McpMessage {
            server_name: self.server.clone(),
            message: json!({
                "method": "tools/call",
                "params": {"name": self.tool, "arguments": arguments},
                "jsonrpc": "2.0",
                "id": id,
            }),
        });
        let answer = tokio::select! {
            answer = self.peer.request(request) => answer.map_err(ToolError)?,
            () = ctx.cancel.cancelled() => return Err(ToolError("interrupted".to_owned())),
        };
        let reply: McpAnswer = serde_json::from_value(answer)
            .map_err(|error| ToolError(format!("the SDK's MCP answer: {error}")))?;
        if let Some(error) = reply.mcp_response.get("error") {
            return Err(ToolError(format!("MCP error: {error}")));
        }
        let result = reply
            .mcp_response
            .get("result")
            .cloned()
            .unwrap_or(Value::Null);
        let store = dsh_mcp::ResultStore::for_call(ctx, &self.server, &self.tool);
        Ok(dsh_mcp::bound_result(result, &store))
    }

    fn render(&self, value: &Value) -> Result<Rendered, ToolError> {
        let Some(object) = value.as_object() else {
            return Err(ToolError(
                "an MCP result must be an object with `content`".to_owned(),
            ));
        };
        let text = dsh_mcp::content_text(object.get("content").unwrap_or(&Value::Null));
        if object.get("isError").and_then(Value::as_bool) == Some(true) {
            return Ok(Rendered {
                content: format!("Error executing tool {}: {text}", self.tool),
                is_error: true,
            });
        }
        Ok(Rendered {
            content: text,
            is_error: false,
        })
    }
}
