//! Copilot CLI's `preMcpToolCall` (`PreMcpToolCall`): fired for a call of
//! an MCP server's tool right before the request goes to the server, after
//! `preToolUse` and the permission flow (mcp_rec_all). Captured facts
//! (`fixtures/copilot-mcp/`, from Copilot CLI 1.0.102):
//!
//! * the payload is camelCase in both modes: `sessionId, timestamp (epoch
//!   ms), cwd, toolCallId, serverName, toolName, arguments`, then `_meta`
//!   only when an earlier entry's `metaToUse` set one (mcp_pascal,
//!   mcp_meta_chain). `toolName` is the server's own tool name and
//!   `arguments` are the ones the call runs with (after a `modifiedArgs`);
//! * nothing it answers blocks the call or reaches the model: a deny, exit
//!   2 and exit 1 all let it run (mcp_deny_forms);
//! * its one output, `metaToUse`, sets the request's `_meta` (an object
//!   replaces it, `null` drops it, anything else is ignored) and the next
//!   entry sees it as `_meta` (mcp_meta, mcp_meta_chain). dsh's MCP client
//!   offers no seam for a request's `_meta`, so the last value is worked
//!   out and recorded but not sent;
//! * the matcher is tested against `<server>/<tool>` (mcp_matchers);
//! * a `preToolUse` deny means it never fires (mcp_pre_deny).
//!
//! dsh names an MCP tool `mcp__<server>__<tool>` (crate `dsh-mcp`); the
//! server and tool names are read back from that name.

use dsh_hooks::Flow;
use dsh_seams::{PreToolDecision, PreToolOutcome, SeamContext, ToolExecution};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::dialect::Copilot;
use crate::output::Reading;
use crate::payload::{Body, Common};

/// The prefix of dsh's MCP tool names.
const PREFIX: &str = "mcp__";

/// One MCP call as `preMcpToolCall` describes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpCall {
    /// The model's call id.
    pub tool_call_id: String,
    /// The configured server name.
    pub server_name: String,
    /// The server's own tool name.
    pub tool_name: String,
    /// The arguments the call runs with.
    pub arguments: Value,
    /// The request's hook-controlled `_meta` so far (set by an earlier
    /// entry's `metaToUse`).
    pub meta: Option<Map<String, Value>>,
}

/// The server and tool of a dsh MCP tool name (`mcp__<server>__<tool>`).
pub fn split(tool: &str) -> Option<(&str, &str)> {
    let (server, name) = tool.strip_prefix(PREFIX)?.split_once("__")?;
    (!server.is_empty() && !name.is_empty()).then_some((server, name))
}

impl McpCall {
    /// The call `call_id` of the dsh tool `tool`, when it is an MCP tool.
    pub fn of(call_id: &str, tool: &str, arguments: &Value) -> Option<Self> {
        let (server, name) = split(tool)?;
        Some(McpCall {
            tool_call_id: call_id.to_owned(),
            server_name: server.to_owned(),
            tool_name: name.to_owned(),
            arguments: arguments.clone(),
            meta: None,
        })
    }

    /// What matchers are tested against: `<server>/<tool>`.
    pub fn subject(&self) -> String {
        format!("{}/{}", self.server_name, self.tool_name)
    }

    /// The stdin payload, the same for camelCase and PascalCase entries.
    pub fn payload(&self, common: &Common) -> Value {
        let mut map = Map::new();
        map.insert("sessionId".into(), common.session_id.clone().into());
        map.insert("timestamp".into(), common.timestamp_ms.into());
        map.insert("cwd".into(), common.cwd.clone().into());
        map.insert("toolCallId".into(), self.tool_call_id.clone().into());
        map.insert("serverName".into(), self.server_name.clone().into());
        map.insert("toolName".into(), self.tool_name.clone().into());
        map.insert("arguments".into(), self.arguments.clone());
        if let Some(meta) = &self.meta {
            map.insert("_meta".into(), Value::Object(meta.clone()));
        }
        if let Some(agent) = &common.agent {
            map.insert("agentId".into(), agent.agent_id.clone().into());
            map.insert("agentType".into(), agent.agent_type.clone().into());
            map.insert("parentAgentId".into(), agent.parent_id.clone().into());
        }
        Value::Object(map)
    }

    /// Applies one entry's answer: its `metaToUse` becomes the `_meta` the
    /// next entry sees (an object replaces it, `null` drops it, any other
    /// value or none keeps it).
    pub fn answer(&mut self, parsed: Option<&Value>) {
        match parsed.and_then(|doc| doc.get("metaToUse")) {
            Some(Value::Object(meta)) => self.meta = Some(meta.clone()),
            Some(Value::Null) => self.meta = None,
            Some(_) | None => {}
        }
    }
}

/// The `chain` step for `preMcpToolCall` (other bodies are left alone).
pub(crate) fn chain(body: &mut Body, reading: &Reading) {
    if let Body::PreMcpToolCall(call) = body {
        call.answer(reading.parsed.as_ref());
    }
}

/// After the permission flow: `preMcpToolCall` for a call of an MCP tool
/// that is going to run (advisory: its answers change nothing dsh sends),
/// then `outcome`.
pub(crate) fn then<'a>(
    ctx: &SeamContext,
    exec: &ToolExecution,
    outcome: PreToolOutcome,
) -> Flow<'a, Copilot, PreToolOutcome> {
    let denied = matches!(outcome.decision, PreToolDecision::Deny { .. });
    let call = McpCall::of(&exec.call_id, &exec.tool, &exec.arguments);
    match call {
        Some(call) if !denied => {
            let subject = call.subject();
            let firing = crate::plugin::fire(ctx, Body::PreMcpToolCall(call), Some(subject));
            Flow::notify(firing.call(&exec.call_id), outcome)
        }
        Some(_) | None => Flow::Done(outcome),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn common() -> Common {
        Common {
            session_id: "S".to_owned(),
            timestamp_ms: 1_796_597_045_453,
            cwd: "<PROJECT>".to_owned(),
            agent: None,
        }
    }

    /// The captured stdin of `name`'s `call`-th preMcpToolCall run, with
    /// the session id set to `S` (fixtures/copilot-mcp/NAME/hooks.jsonl).
    fn captured(name: &str, label: &str, call: u64) -> String {
        let path = format!(
            "{}/../fixtures/copilot-mcp/{name}/hooks.jsonl",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(path).unwrap();
        let record: Value = text
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .find(|r| r["label"] == label && r["call_no"] == call)
            .unwrap();
        let stdin = record["stdin_raw"].as_str().unwrap();
        let mut value: Value = serde_json::from_str(stdin).unwrap();
        // The capture's own bytes are compact JSON in this key order.
        assert_eq!(value.to_string(), stdin);
        value["sessionId"] = json!("S");
        value.to_string()
    }

    fn with_timestamp(payload: &str, ms: i64) -> String {
        let mut value: Value = serde_json::from_str(payload).unwrap();
        value["timestamp"] = json!(ms);
        value.to_string()
    }

    #[test]
    fn dsh_names_split_into_server_and_tool() {
        assert_eq!(split("mcp__oracle__echo_text"), Some(("oracle", "echo_text")));
        assert_eq!(split("mcp__a__b__c"), Some(("a", "b__c")));
        assert_eq!(split("bash"), None);
        assert_eq!(split("mcp__oracle"), None);
        assert_eq!(split("mcp____x"), None);
    }

    #[test]
    fn payload_is_the_captured_bytes() {
        // mcp_rec_all: camelCase entry; mcp_pascal: the same shape.
        for (name, label) in [("mcp_rec_all", "rec_preMcpToolCall"), ("mcp_pascal", "mcp")] {
            let want = captured(name, label, 1);
            let call = McpCall::of("toolu_oracle_001", "mcp__oracle__echo_text", &json!({"text": "call-1"}))
                .unwrap();
            let got = call.payload(&common()).to_string();
            let ms = serde_json::from_str::<Value>(&want).unwrap()["timestamp"].as_i64().unwrap();
            assert_eq!(with_timestamp(&got, ms), want, "{name}");
        }
    }

    #[test]
    fn meta_to_use_chains_to_the_next_entry() {
        // mcp_meta_chain: b answers {fromB: 2}; a then sees `_meta`.
        let mut call =
            McpCall::of("toolu_oracle_001", "mcp__oracle__echo_text", &json!({"text": "MODIFIED"}))
                .unwrap();
        call.answer(Some(&json!({"metaToUse": {"fromB": 2}})));
        let want = captured("mcp_meta_chain", "mcp_a", 1);
        let got = call.payload(&common()).to_string();
        let ms = serde_json::from_str::<Value>(&want).unwrap()["timestamp"].as_i64().unwrap();
        assert_eq!(with_timestamp(&got, ms), want);
        // mcp_meta: null drops it, a string is ignored, no answer keeps it.
        call.answer(Some(&json!({"metaToUse": "not-an-object"})));
        assert_eq!(call.meta, Some(json!({"fromB": 2}).as_object().unwrap().clone()));
        call.answer(None);
        assert!(call.meta.is_some());
        call.answer(Some(&json!({"metaToUse": null})));
        assert_eq!(call.meta, None);
    }

    #[test]
    fn matcher_subject_is_server_slash_tool() {
        // mcp_matchers: `oracle/echo_text` and `.*` fired; `echo_text`,
        // `oracle-echo_text`, `oracle`, `nomatch` did not.
        let call = McpCall::of("t", "mcp__oracle__echo_text", &json!({})).unwrap();
        let subject = call.subject();
        let fires = |m| crate::matcher::matches(crate::Mode::Camel, Some(m), &subject);
        assert!(fires("oracle/echo_text") && fires(".*"));
        for m in ["echo_text", "oracle-echo_text", "oracle", "nomatch"] {
            assert!(!fires(m), "{m}");
        }
    }
}
