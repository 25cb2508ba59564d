//! An MCP tool in dsh's registry: `mcp__<server>__<tool>`.
//!
//! The canonical value of a call is the MCP result object, camelCase, with
//! `isError` always present: `{"content":[…],"structuredContent":…,
//! "isError":false}` (the bridges derive their payload shapes from it).
//! What the model sees is what Claude Code shows it: the structured content
//! as compact JSON when there is one, else the content blocks' text; an
//! `isError` result is an error outcome reading `Error executing tool
//! <tool>: <text>`.
//!
//! Results are bounded as Claude Code bounds them ([`crate::limit`]): an
//! oversized result is saved to a file and the value becomes one text block
//! naming it (`structuredContent` dropped). Hooks, the model and the
//! session log all see that value.

use std::sync::Arc;

use async_trait::async_trait;
use dsh_protocol::ToolSpec;
use dsh_seams::ToolOrigin;
use dsh_tools::{Rendered, Tool, ToolContext, ToolError};
use rmcp::model::{CallToolResult, Tool as ToolDef};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::limit::{ResultStore, limited_text};
use crate::manager::{McpManager, Server};

/// Claude Code's name part rule: anything but `[A-Za-z0-9_-]` becomes `_`.
pub fn name_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The model-facing name of `tool` on `server`.
pub fn qualified_name(server: &str, tool: &str) -> String {
    format!("mcp__{}__{}", name_part(server), name_part(tool))
}

/// One server tool, offered under its qualified name.
#[derive(Debug)]
pub struct McpTool {
    server: Arc<Server>,
    tool: String,
    spec: ToolSpec,
}

impl McpTool {
    /// The tool `def` of `server`.
    pub fn new(server: Arc<Server>, def: &ToolDef) -> Self {
        let spec = ToolSpec {
            name: qualified_name(&server.config().name, &def.name),
            description: def.description.as_deref().unwrap_or_default().to_owned(),
            input_schema: Value::Object((*def.input_schema).clone()),
        };
        McpTool {
            server,
            tool: def.name.to_string(),
            spec,
        }
    }
}

/// A call's canonical result (see the module docs): MCP's result object,
/// camelCase, with `isError` always written. Field order is wire order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallResult {
    /// The content blocks as the server sent them: they reach the model
    /// and the hooks unchanged.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// The structured content (arbitrary JSON), when the server gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed.
    #[serde(default)]
    pub is_error: bool,
}

/// One MCP content block: a text block (read for the model's text), or
/// any other block (image, audio, resource) as the server sent it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ContentBlock {
    /// `{"type": "text", "text": …}`.
    Text(TextBlock),
    /// Any other block, passed on unchanged.
    Other(Value),
}

/// A text block: `type`, `text`, then whatever else it carries
/// (`annotations`, `_meta`) in its order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextBlock {
    #[serde(rename = "type")]
    kind: TextKind,
    /// The text.
    pub text: String,
    /// The block's other keys, kept as they came.
    #[serde(flatten)]
    pub rest: serde_json::Map<String, Value>,
}

/// The one `type` a [`TextBlock`] has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum TextKind {
    Text,
}

impl TextBlock {
    /// A block of `text` alone.
    pub fn new(text: String) -> Self {
        TextBlock {
            kind: TextKind::Text,
            text,
            rest: serde_json::Map::new(),
        }
    }
}

impl CallResult {
    /// The canonical form of an rmcp result.
    pub fn of(result: &CallToolResult) -> Self {
        CallResult {
            content: result
                .content
                .iter()
                .filter_map(|block| {
                    serde_json::to_value(block)
                        .and_then(serde_json::from_value)
                        .ok()
                })
                .collect(),
            structured_content: result.structured_content.clone(),
            is_error: result.is_error.unwrap_or(false),
        }
    }

    /// Reads a canonical value; `None` when `value` is not one.
    pub fn read(value: &Value) -> Option<Self> {
        Self::deserialize(value).ok()
    }

    /// The value tools return, hooks read and the session log keeps.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// The text the model is shown (before the error prefix): the
    /// structured content as compact JSON when the call succeeded and has
    /// one, else the content blocks' text.
    pub fn model_text(&self) -> String {
        match &self.structured_content {
            Some(structured) if !self.is_error => structured.to_string(),
            Some(_) | None => content_text(&self.content),
        }
    }

    /// The result cut to one text block naming the file it was saved to,
    /// when it is over the MCP output limits of `store` (see
    /// [`crate::limit`]); `None` when it is within them.
    pub fn limited(&self, store: &ResultStore) -> Option<Self> {
        let pretty_content = || serde_json::to_string_pretty(&self.content).unwrap_or_default();
        let text = limited_text(&self.model_text(), pretty_content, store)?;
        Some(CallResult {
            content: vec![ContentBlock::Text(TextBlock::new(text))],
            structured_content: None,
            is_error: self.is_error,
        })
    }
}

/// `value` (a canonical result) within the MCP output limits of `store`
/// (see [`crate::limit`]); a value within them, or not a result, is
/// returned unchanged.
pub fn bound_result(value: Value, store: &ResultStore) -> Value {
    match CallResult::read(&value).and_then(|result| result.limited(store)) {
        Some(cut) => cut.to_value(),
        None => value,
    }
}

/// The text of the content blocks: text blocks as they are, any other
/// block as its JSON.
pub fn content_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => text.text.clone(),
            ContentBlock::Other(other) => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How a tool renders a canonical result for the model: `tool` names the
/// tool in the error prefix.
pub fn render_result(tool: &str, value: &Value) -> Result<Rendered, ToolError> {
    let Some(result) = CallResult::read(value) else {
        return Err(ToolError(
            "an MCP result must be an object with `content`".to_owned(),
        ));
    };
    let text = result.model_text();
    if result.is_error {
        return Ok(Rendered {
            content: format!("Error executing tool {tool}: {text}"),
            is_error: true,
        });
    }
    Ok(Rendered {
        content: text,
        is_error: false,
    })
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn origin(&self) -> Option<ToolOrigin> {
        Some(ToolOrigin::Mcp {
            server: self.server.config().name.clone(),
            tool: self.tool.clone(),
        })
    }

    async fn run(&self, ctx: &ToolContext, arguments: &Value) -> Result<Value, ToolError> {
        // The server's questions during this call (MCP elicitation) are
        // answered here, on the session's runtime, while the call runs.
        let (_open, mut questions) = self.server.elicit.open();
        let meta = ctx.request_meta.as_ref();
        let call = self.server.call(&self.tool, arguments, meta, &ctx.cancel);
        tokio::pin!(call);
        let result = loop {
            tokio::select! {
                result = &mut call => break result,
                Some((request, reply)) = questions.recv() => {
                    let answer = ctx.elicit(&request).await;
                    // The server may have given up waiting: nothing to tell.
                    let _ = reply.send(answer);
                }
            }
        }
        .map_err(|err| ToolError(err.0))?;
        let store = ResultStore::for_call(ctx, &self.server.config().name, &self.tool);
        let result = CallResult::of(&result);
        Ok(result.limited(&store).unwrap_or(result).to_value())
    }

    fn render(&self, value: &Value) -> Result<Rendered, ToolError> {
        render_result(&self.tool, value)
    }
}

/// An MCP tool name with no server behind it, for dry runs (`dsh hooks
/// test --tool mcp__…`): it accepts any object as arguments so hooks and
/// rules can be asked about the call, and fails if it is ever dispatched.
#[derive(Debug)]
pub struct McpStandIn {
    spec: ToolSpec,
}

impl McpStandIn {
    /// A stand-in named `name` (`mcp__<server>__<tool>`).
    pub fn new(name: &str) -> Self {
        McpStandIn {
            spec: ToolSpec {
                name: name.to_owned(),
                description: "An MCP tool (no server connected in this dry run).".to_owned(),
                input_schema: json!({"type": "object"}),
            },
        }
    }
}

#[async_trait]
impl Tool for McpStandIn {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    async fn run(&self, _ctx: &ToolContext, _arguments: &Value) -> Result<Value, ToolError> {
        Err(ToolError(format!(
            "`{}` has no MCP server in this dry run",
            self.spec.name
        )))
    }

    fn render(&self, _value: &Value) -> Result<Rendered, ToolError> {
        Err(ToolError("a dry-run MCP tool has no results".to_owned()))
    }
}

impl McpManager {
    /// The connected servers' tools, for the registry.
    pub fn tools(&self) -> Vec<Arc<dyn dsh_tools::Tool>> {
        let mut out: Vec<Arc<dyn dsh_tools::Tool>> = Vec::new();
        for server in self.servers() {
            for def in server.tool_defs() {
                out.push(Arc::new(McpTool::new(Arc::clone(server), &def)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_claude_code() {
        assert_eq!(qualified_name("echo", "echo_text"), "mcp__echo__echo_text");
        assert_eq!(qualified_name("my server", "a.b"), "mcp__my_server__a_b");
    }

    #[test]
    fn the_structured_text_is_what_is_limited() {
        let dir = tempfile::tempdir().unwrap();
        let store = ResultStore {
            dir: dir.path().to_path_buf(),
            max_tokens: Some(10),
            server: "s".into(),
            tool: "t".into(),
            call_id: "c".into(),
        };
        // Short content, long structured content: the model sees the
        // structured JSON, so that is what is measured and saved.
        let structured = json!({"result": "z".repeat(100)});
        let value = json!({
            "content": [{"type": "text", "text": "ok"}],
            "structuredContent": structured,
            "isError": false,
        });
        let cut = bound_result(value, &store);
        assert!(cut.get("structuredContent").is_none());
        let text = cut["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("Error: result (113 characters across 1 line)"),
            "{text}"
        );
        let saved = fs_err::read_dir(dir.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(
            fs_err::read_to_string(saved.path()).unwrap(),
            structured.to_string()
        );
    }

    #[test]
    fn content_text_joins_blocks() {
        let content = json!([{"type":"text","text":"a"},{"type":"image","data":"x","mimeType":"image/png"},
            {"type":"text","text":3},{"text":"b","type":"text","annotations":{"priority":1}}]);
        let blocks: Vec<ContentBlock> = serde_json::from_value(content).unwrap();
        assert_eq!(
            content_text(&blocks),
            "a\n{\"type\":\"image\",\"data\":\"x\",\"mimeType\":\"image/png\"}\n{\"type\":\"text\",\"text\":3}\nb"
        );
        // The other keys of a text block are kept.
        assert_eq!(
            serde_json::to_string(&blocks[3]).unwrap(),
            r#"{"type":"text","text":"b","annotations":{"priority":1}}"#
        );
    }

    /// The canonical value of an rmcp result, in the order and bytes the
    /// hooks and the session log have always had.
    #[test]
    fn canonical_results_keep_their_wire_bytes() {
        let result = CallToolResult::structured(json!({"n": 1}));
        assert_eq!(
            CallResult::of(&result).to_value().to_string(),
            r#"{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1},"isError":false}"#
        );
        let plain = CallToolResult::success(vec![rmcp::model::ContentBlock::text("hi")]);
        assert_eq!(
            CallResult::of(&plain).to_value().to_string(),
            r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#
        );
    }

    /// A result within the limits (from an SDK server, with keys of its
    /// own) is passed on as it came; one over them is cut to a text block.
    #[test]
    fn results_within_limits_pass_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let store = ResultStore {
            dir: dir.path().to_path_buf(),
            max_tokens: Some(10),
            server: "s".into(),
            tool: "t".into(),
            call_id: "c".into(),
        };
        let small = json!({"isError": false, "_meta": {"k": 1}, "content": [{"type": "text", "text": "ok"}]});
        assert_eq!(
            bound_result(small.clone(), &store).to_string(),
            small.to_string()
        );
        assert_eq!(
            bound_result(json!("not a result"), &store),
            json!("not a result")
        );
        let big = json!({"content": [{"type": "text", "text": "y".repeat(400)}], "isError": true});
        let cut = bound_result(big, &store);
        assert_eq!(
            cut.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["content", "isError"]
        );
        assert_eq!(cut["isError"], json!(true));
        let rendered = render_result("t", &cut).unwrap();
        assert!(
            rendered.is_error
                && rendered
                    .content
                    .starts_with("Error executing tool t: Error: result"),
            "{}",
            rendered.content
        );
        assert!(render_result("t", &json!(3)).is_err());
    }
}
