//! A Copilot hook's payload in the field names `dsh hooks test` and `dsh
//! hooks replay` fire with (Claude Code's): a payload a user copies from a
//! Copilot hook, or a recorded stdin replayed, drives the firing with its
//! own tool, arguments and result instead of the defaults.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

/// Copilot's own keys (camelCase payloads, and the PascalCase payloads'
/// `tool_result`) and the name `dsh hooks test` reads for each.
const RENAMED: [(&str, &str); 11] = [
    ("sessionId", "session_id"),
    ("toolName", "tool_name"),
    ("toolArgs", "tool_input"),
    // permissionRequest's name for the arguments, in both modes.
    ("toolInput", "tool_input"),
    ("toolCallId", "tool_use_id"),
    ("toolResult", "tool_response"),
    ("tool_result", "tool_response"),
    ("agentId", "agent_id"),
    ("agentType", "agent_type"),
    ("customInstructions", "custom_instructions"),
    // subagentStop's final text.
    ("response", "last_assistant_message"),
];

/// A tool result as Copilot writes it: the text the model was shown is
/// what the firing's tool returned.
#[derive(Deserialize)]
struct ToolResult {
    #[serde(rename = "textResultForLlm", alias = "text_result_for_llm")]
    text: Box<RawValue>,
}

/// `payload` in `dsh hooks test`'s names, when it has any of Copilot's
/// own keys; a key the payload already has in that name is kept.
pub(crate) fn in_test_names(payload: &str) -> Option<String> {
    let fields: BTreeMap<String, Box<RawValue>> = serde_json::from_str(payload).ok()?;
    if !RENAMED.iter().any(|(own, _)| fields.contains_key(*own)) {
        return None;
    }
    let mut renamed = BTreeMap::new();
    let mut kept = BTreeMap::new();
    for (key, value) in fields {
        match RENAMED.iter().find(|(own, _)| *own == key) {
            Some((_, name)) => {
                let value = match *name {
                    "tool_response" => serde_json::from_str::<ToolResult>(value.get())
                        .map_or(value, |result| result.text),
                    _ => value,
                };
                renamed.insert((*name).to_owned(), value);
            }
            None => {
                kept.insert(key, value);
            }
        }
    }
    for (name, value) in renamed {
        kept.entry(name).or_insert(value);
    }
    serde_json::to_string(&kept).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn fields(text: &str) -> BTreeMap<String, String> {
        let raw: BTreeMap<String, Box<RawValue>> = serde_json::from_str(text).unwrap();
        raw.into_iter()
            .map(|(key, value)| (key, value.get().to_owned()))
            .collect()
    }

    #[test]
    fn a_camel_case_tool_payload_gets_the_test_names() {
        let payload = r#"{"sessionId":"s1","timestamp":1796623081099,"cwd":"/p","toolName":"bash","toolArgs":{"command":"rm -rf build"},"toolResult":{"resultType":"success","textResultForLlm":"gone"}}"#;
        let read = fields(&in_test_names(payload).unwrap());
        assert_eq!(read["session_id"], r#""s1""#);
        assert_eq!(read["tool_name"], r#""bash""#);
        assert_eq!(read["tool_input"], r#"{"command":"rm -rf build"}"#);
        assert_eq!(read["tool_response"], r#""gone""#);
        assert_eq!(read["cwd"], r#""/p""#);
        assert!(!read.contains_key("toolArgs"));
    }

    #[test]
    fn a_pascal_case_result_and_a_permission_request_are_read_too() {
        let post = r#"{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_result":{"result_type":"success","text_result_for_llm":"a.txt"}}"#;
        let read = fields(&in_test_names(post).unwrap());
        assert_eq!(read["tool_response"], r#""a.txt""#);
        assert_eq!(read["tool_input"], r#"{"command":"ls"}"#);
        let asked = r#"{"hookName":"permissionRequest","sessionId":"s","toolName":"edit","toolInput":{"file_path":"a","diff":""}}"#;
        assert_eq!(
            fields(&in_test_names(asked).unwrap())["tool_input"],
            r#"{"file_path":"a","diff":""}"#
        );
    }

    #[test]
    fn other_payloads_are_not_claimed_and_given_names_win() {
        let claude = r#"{"session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"x"}}"#;
        assert_eq!(in_test_names(claude), None);
        let both = r#"{"toolArgs":{"command":"a"},"tool_input":{"command":"b"}}"#;
        assert_eq!(
            fields(&in_test_names(both).unwrap())["tool_input"],
            r#"{"command":"b"}"#
        );
        // A result that is not Copilot's object is handed on as it is.
        let odd = r#"{"toolResult":"plain"}"#;
        assert_eq!(
            fields(&in_test_names(odd).unwrap())["tool_response"],
            r#""plain""#
        );
    }
}
