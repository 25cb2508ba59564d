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
//!   entry sees it as `_meta` (mcp_meta, mcp_meta_chain). The last one
//!   is the `tools/call` request's `_meta` (`params._meta`; Copilot adds
//!   its own `progressToken` after the hook's keys, dsh's client sends
//!   none): the seam's request metadata;
//! * the matcher is tested against `<server>/<tool>` (mcp_matchers);
//! * a `preToolUse` deny means it never fires (mcp_pre_deny): dsh fires it
//!   on the before-dispatch seam, for a call every check let through
//!   (dsh's own approval and guards too).
//!
//! dsh names an MCP tool `mcp__<server>__<tool>` (crate `dsh-mcp`),
//! sanitized; the server and tool names are the real ones the call's
//! origin carries (read back from that name only when it has none, as in
//! a dry run). This module is a
//! leaf: the payload's common head is `payload`'s, the firing `plugin`'s.

use dsh_seams::{RequestMeta, ToolExecution};
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::output::Reading;

/// One MCP call as `preMcpToolCall` describes it; serializes to the
/// event's own keys (`toolCallId, serverName, toolName, arguments`, then
/// `_meta` when set).
#[derive(Debug, Clone, PartialEq)]
pub struct McpCall {
    /// The call (its id and the arguments it runs with).
    exec: ToolExecution,
    /// The configured server name.
    server: String,
    /// The server's own tool name.
    tool: String,
    /// The request's `_meta` now: the last `metaToUse` object, as the hook
    /// wrote it.
    meta: Option<RequestMeta>,
}

impl McpCall {
    /// `exec`, when it calls an MCP tool, its request carrying `meta` so
    /// far.
    pub fn of(exec: &ToolExecution, meta: Option<RequestMeta>) -> Option<Self> {
        let (server, tool) = exec.mcp_names()?;
        Some(McpCall {
            server: server.to_owned(),
            tool: tool.to_owned(),
            exec: exec.clone(),
            meta,
        })
    }

    /// What matchers are tested against: `<server>/<tool>`.
    pub fn subject(&self) -> String {
        format!("{}/{}", self.server, self.tool)
    }

    /// The call id.
    pub fn call_id(&self) -> &str {
        &self.exec.call_id
    }

    /// Applies one entry's answer: its `metaToUse` becomes the `_meta` the
    /// next entry sees (an object replaces it, `null` drops it, any other
    /// value or none keeps it).
    pub fn answer(&mut self, reading: &Reading) {
        match (reading.parsed.as_ref()).and_then(|doc| doc.get("metaToUse")) {
            Some(meta) if meta.is_null() => self.meta = None,
            Some(meta) => {
                if let Some(object) = meta.as_object() {
                    self.meta = Some(RequestMeta(object.clone()));
                }
            }
            None => {}
        }
    }

    /// The request's `_meta` once `readings` (the entries' answers, in
    /// order) are applied: what the call sends its server.
    pub fn request_meta<'r>(
        mut self,
        readings: impl IntoIterator<Item = &'r Reading>,
    ) -> Option<RequestMeta> {
        for reading in readings {
            self.answer(reading);
        }
        self.meta
    }
}

impl Serialize for McpCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("toolCallId", &self.exec.call_id)?;
        map.serialize_entry("serverName", &self.server)?;
        map.serialize_entry("toolName", &self.tool)?;
        map.serialize_entry("arguments", &*self.exec.arguments)?;
        if let Some(meta) = &self.meta {
            map.serialize_entry("_meta", meta)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::*;
    use crate::Mode;
    use crate::payload::{Body, Common, build};

    fn common() -> Common {
        Common {
            session_id: "S".to_owned(),
            timestamp_ms: 1_796_597_045_453,
            cwd: "<PROJECT>".to_owned(),
            agent: None,
        }
    }

    fn exec(tool: &str, arguments: Value) -> ToolExecution {
        ToolExecution {
            execution_id: "e1".to_owned(),
            call_id: "toolu_oracle_001".to_owned(),
            tool: tool.to_owned(),
            arguments: Arc::new(arguments),
            original_arguments: None,
            rewritten_by: None,
            parent_execution_id: None,
            origin: None,
        }
    }

    fn call(arguments: Value) -> McpCall {
        McpCall::of(&exec("mcp__oracle__echo_text", arguments), None).unwrap()
    }

    fn reading(answer: Value) -> Reading {
        Reading {
            parsed: Some(answer),
            ..Reading::default()
        }
    }

    /// The captured stdin of `label`'s `call`-th run in `name`
    /// (fixtures/copilot-mcp/NAME/hooks.jsonl), after checking it is
    /// compact JSON in its key order; its session id and timestamp are
    /// `S` and ours.
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
        assert_eq!(value.to_string(), stdin);
        assert!(value["timestamp"].is_i64());
        value["sessionId"] = json!("S");
        value["timestamp"] = json!(common().timestamp_ms);
        value.to_string()
    }

    fn stdin(call: &McpCall, mode: Mode) -> String {
        build(
            &common(),
            &Body::PreMcpToolCall(Box::new(call.clone())),
            mode,
        )
        .to_string()
    }

    #[test]
    fn dsh_names_split_into_server_and_tool() {
        use dsh_seams::mcp_tool_parts;
        assert_eq!(
            mcp_tool_parts("mcp__oracle__echo_text"),
            Some(("oracle", "echo_text"))
        );
        assert_eq!(mcp_tool_parts("mcp__a__b__c"), Some(("a", "b__c")));
        assert_eq!(mcp_tool_parts("bash"), None);
        assert_eq!(mcp_tool_parts("mcp__oracle"), None);
        assert_eq!(mcp_tool_parts("mcp____x"), None);
        assert!(McpCall::of(&exec("bash", json!({})), None).is_none());
    }

    #[test]
    fn server_and_tool_are_the_origins_real_names() {
        let mut exec = exec("mcp__oracle_v2__echo_text", json!({}));
        exec.origin = Some(dsh_seams::ToolOrigin::Mcp {
            server: "oracle.v2".to_owned(),
            tool: "echo.text".to_owned(),
        });
        let call = McpCall::of(&exec, None).unwrap();
        assert_eq!(call.subject(), "oracle.v2/echo.text");
        let payload: Value = serde_json::from_str(&stdin(&call, Mode::Camel)).unwrap();
        assert_eq!(payload["serverName"], "oracle.v2");
        assert_eq!(payload["toolName"], "echo.text");
    }

    #[test]
    fn payload_is_the_captured_bytes_in_both_modes() {
        let call = call(json!({"text": "call-1"}));
        let camel = captured("mcp_rec_all", "rec_preMcpToolCall", 1);
        assert_eq!(stdin(&call, Mode::Camel), camel);
        // PreMcpToolCall gets the same camelCase payload (mcp_pascal).
        assert_eq!(stdin(&call, Mode::Pascal), captured("mcp_pascal", "mcp", 1));
        assert_eq!(stdin(&call, Mode::Pascal), camel);
    }

    #[test]
    fn meta_to_use_chains_to_the_next_entry() {
        // mcp_meta_chain: b answers {fromB: 2}; a then sees `_meta`.
        let mut call = call(json!({"text": "MODIFIED"}));
        assert_eq!(
            stdin(&call, Mode::Camel),
            captured("mcp_meta_chain", "mcp_b", 1)
        );
        call.answer(&reading(json!({"metaToUse": {"fromB": 2}})));
        assert_eq!(
            stdin(&call, Mode::Camel),
            captured("mcp_meta_chain", "mcp_a", 1)
        );
        // mcp_meta: a string is ignored, no metaToUse keeps it, null drops it.
        let kept = call.meta.clone();
        call.answer(&reading(json!({"metaToUse": "not-an-object"})));
        call.answer(&reading(json!({"permissionDecision": "deny"})));
        call.answer(&Reading::default());
        assert_eq!(call.meta, kept);
        call.answer(&reading(json!({"metaToUse": null})));
        assert_eq!(call.meta, None);
    }

    #[test]
    fn the_last_meta_to_use_is_the_request_meta() {
        // mcp_meta: an object is sent; `null` and a string leave none.
        let sent = |answers: &[Value]| {
            let readings: Vec<Reading> = answers.iter().cloned().map(reading).collect();
            call(json!({})).request_meta(&readings)
        };
        let trace = json!({"traceId": "TRACE-1", "n": 1});
        let meta = sent(&[json!({"metaToUse": trace})]).unwrap();
        assert_eq!(serde_json::to_value(&meta).unwrap(), trace);
        // The key order is the hook's.
        assert_eq!(
            serde_json::to_string(&meta).unwrap(),
            r#"{"traceId":"TRACE-1","n":1}"#
        );
        assert_eq!(sent(&[json!({"metaToUse": null})]), None);
        assert_eq!(sent(&[json!({"metaToUse": "not-an-object"})]), None);
        // mcp_meta_chain: the last entry's object wins.
        let chain = [
            json!({"metaToUse": {"fromB": 2}}),
            json!({"metaToUse": {"fromA": 1}}),
        ];
        let last = sent(&chain).unwrap();
        assert_eq!(serde_json::to_value(&last).unwrap(), json!({"fromA": 1}));
        assert_eq!(
            sent(&[json!({"metaToUse": {"x": 1}}), json!({"metaToUse": null})]),
            None
        );
    }

    #[test]
    fn the_chain_starts_from_the_meta_the_request_has() {
        // What an earlier listener set is the first entry's `_meta` (as the
        // second entry of mcp_meta_chain saw the first one's), and stays
        // when no entry sets one.
        let exec = exec("mcp__oracle__echo_text", json!({"text": "MODIFIED"}));
        let from_b = RequestMeta(json!({"fromB": 2}).as_object().unwrap().clone());
        let call = McpCall::of(&exec, Some(from_b.clone())).unwrap();
        assert_eq!(
            stdin(&call, Mode::Camel),
            captured("mcp_meta_chain", "mcp_a", 1)
        );
        assert_eq!(call.request_meta(&[Reading::default()]), Some(from_b));
    }

    #[test]
    fn matcher_subject_is_server_slash_tool() {
        // mcp_matchers: `oracle/echo_text` and `.*` fired; `echo_text`,
        // `oracle-echo_text`, `oracle`, `nomatch` did not.
        let subject = call(json!({})).subject();
        let fires = |m| crate::matcher::matches(Mode::Camel, Some(m), &subject);
        assert!(fires("oracle/echo_text") && fires(".*"));
        for m in ["echo_text", "oracle-echo_text", "oracle", "nomatch"] {
            assert!(!fires(m), "{m}");
        }
    }
}
