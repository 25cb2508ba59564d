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

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use dsh_protocol::ToolSpec;
use dsh_sdk_control::{CliRequest, McpAnswer, McpMessage, RpcMessage, ServerManifest, ToolsList};
use dsh_tools::{Rendered, Tool, ToolContext, ToolError};
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::{Value, json};

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
    manifests: &BTreeMap<String, ServerManifest>,
) -> Vec<Arc<dyn Tool>> {
    let ids = Arc::new(AtomicU64::new(1));
    let mut out: Vec<Arc<dyn Tool>> = Vec::new();
    for server in servers {
        let listed = manifests
            .get(server)
            .map(|manifest| manifest.tools_list_result.tools.as_slice());
        for def in listed.into_iter().flatten() {
            let Some(name) = &def.name else {
                continue;
            };
            out.push(Arc::new(SdkMcpTool {
                peer: Arc::clone(peer),
                server: server.clone(),
                tool: name.clone(),
                spec: ToolSpec {
                    name: dsh_mcp::qualified_name(server, name),
                    description: def.description.clone().unwrap_or_default(),
                    input_schema: def
                        .input_schema
                        .clone()
                        .unwrap_or_else(|| json!({"type": "object"})),
                },
                ids: Arc::clone(&ids),
            }));
        }
    }
    out
}

/// Asks each of `servers` for its tools over `mcp_message`, before the
/// `initialize` answer as Claude Code does, and returns their manifests
/// as the TypeScript SDK would have sent them. A server that fails to
/// answer is left out and named in the notices.
pub async fn list_tools(
    peer: &Peer,
    servers: &[String],
) -> (BTreeMap<String, ServerManifest>, Vec<String>) {
    let mut manifests = BTreeMap::new();
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

async fn ask_manifest(peer: &Peer, server: &str) -> Result<ServerManifest, String> {
    rpc::<IgnoredAny>(
        peer,
        server,
        RpcMessage::initialize(env!("CARGO_PKG_VERSION")),
    )
    .await?;
    rpc::<IgnoredAny>(peer, server, RpcMessage::initialized()).await?;
    let listed = rpc::<ToolsList>(peer, server, RpcMessage::list_tools())
        .await?
        .ok_or("`tools/list` answered without a `tools` list")?;
    Ok(ServerManifest {
        tools_list_result: listed,
    })
}

/// One JSON-RPC exchange with an SDK server: the reply's `result`, when
/// it has one.
async fn rpc<R: DeserializeOwned>(
    peer: &Peer,
    server: &str,
    message: RpcMessage,
) -> Result<Option<R>, String> {
    let method = message.method;
    let answer = peer
        .request(CliRequest::McpMessage(McpMessage {
            server_name: server.to_owned(),
            message,
        }))
        .await?;
    let reply: McpAnswer<R> = answer
        .read()
        .map_err(|error| format!("`{method}`: {error}"))?;
    if let Some(error) = reply.mcp_response.error {
        return Err(format!("`{method}`: MCP error {error}"));
    }
    Ok(reply.mcp_response.result)
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
            message: RpcMessage::call_tool(id, &self.tool, arguments.clone()),
        });
        let answer = tokio::select! {
            answer = self.peer.request(request) => answer.map_err(ToolError)?,
            () = ctx.cancel.cancelled() => return Err(ToolError("interrupted".to_owned())),
        };
        // An MCP tool's result is arbitrary JSON.
        let reply: McpAnswer<Value> = answer
            .read()
            .map_err(|error| ToolError(format!("the SDK's MCP answer: {error}")))?;
        if let Some(error) = reply.mcp_response.error {
            return Err(ToolError(format!("MCP error: {error}")));
        }
        let result = reply.mcp_response.result.unwrap_or_default();
        let store = dsh_mcp::ResultStore::for_call(ctx, &self.server, &self.tool);
        Ok(dsh_mcp::bound_result(result, &store))
    }

    fn render(&self, value: &Value) -> Result<Rendered, ToolError> {
        dsh_mcp::render_result(&self.tool, value)
    }
}
