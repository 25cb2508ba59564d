//! One Claude Code MCP server entry, typed: a value of `mcpServers` in
//! `.mcp.json`, a `--mcp-config` file or `~/.claude.json`. A key of the
//! wrong type is an error naming the key, as dsh reported it before the
//! entry had a type; keys dsh does not read (`headers`, …) are kept.

use std::collections::BTreeMap;

use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One `mcpServers` entry as written (variables not expanded yet).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpServerEntry {
    /// `type`: absent or `stdio` for a local process, else a remote kind
    /// (`http`, `sse`).
    #[serde(
        rename = "type",
        default,
        deserialize_with = "kind",
        skip_serializing_if = "Option::is_none"
    )]
    pub kind: Option<String>,
    /// `command` of a stdio server (`None` when absent or not a string).
    #[serde(
        default,
        deserialize_with = "lenient_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub command: Option<String>,
    /// `args` of a stdio server.
    #[serde(
        default,
        deserialize_with = "args",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub args: Vec<String>,
    /// `env` of a stdio server.
    #[serde(
        default,
        deserialize_with = "env",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub env: BTreeMap<String, String>,
    /// `url` of a remote server (`None` when absent or not a string).
    #[serde(
        default,
        deserialize_with = "lenient_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub url: Option<String>,
    /// Every other key, as written.
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

fn kind<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::String(kind) => Ok(Some(kind)),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_) => {
            Err(D::Error::custom("`type` must be a string"))
        }
    }
}

/// A string, or `None` for anything else: what is missing is named where
/// the transport needs it.
fn lenient_string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::String(text) => Ok(Some(text)),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_) => {
            Ok(None)
        }
    }
}

fn args<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    let not_a_list = || D::Error::custom("`args` must be a list of strings");
    match Value::deserialize(deserializer)? {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .into_iter()
            .map(|item| match item {
                Value::String(text) => Ok(text),
                Value::Null
                | Value::Bool(_)
                | Value::Number(_)
                | Value::Array(_)
                | Value::Object(_) => Err(not_a_list()),
            })
            .collect(),
        Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Object(_) => {
            Err(not_a_list())
        }
    }
}

fn env<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, String>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::Null => Ok(BTreeMap::new()),
        Value::Object(map) => map
            .into_iter()
            .map(|(name, value)| match value {
                Value::String(text) => Ok((name, text)),
                Value::Null
                | Value::Bool(_)
                | Value::Number(_)
                | Value::Array(_)
                | Value::Object(_) => {
                    Err(D::Error::custom(format!("`env.{name}` must be a string")))
                }
            })
            .collect(),
        Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_) => {
            Err(D::Error::custom("`env` must be an object of strings"))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_mcp_json_entry_parses_and_keeps_what_dsh_does_not_read() {
        let file = json!({"mcpServers": {
            "echo": {"command": "python3", "args": ["s.py", "-v"], "env": {"B": "2", "A": "1"}},
            "web": {"type": "http", "url": "https://example.test/mcp", "headers": {"X": "y"}}
        }});
        let servers = file["mcpServers"].as_object().unwrap();
        let echo = McpServerEntry::deserialize(&servers["echo"]).unwrap();
        assert_eq!(echo.kind, None);
        assert_eq!(echo.command.as_deref(), Some("python3"));
        assert_eq!(echo.args, ["s.py", "-v"]);
        assert_eq!(echo.env.keys().collect::<Vec<_>>(), ["A", "B"]);
        let web = McpServerEntry::deserialize(&servers["web"]).unwrap();
        assert_eq!(web.kind.as_deref(), Some("http"));
        assert_eq!(web.url.as_deref(), Some("https://example.test/mcp"));
        assert_eq!(web.rest["headers"], json!({"X": "y"}));
        // What it serializes back to parses to the same entry.
        for entry in [echo, web] {
            let again = serde_json::to_value(&entry).unwrap();
            assert_eq!(McpServerEntry::deserialize(&again).unwrap(), entry);
        }
    }

    #[test]
    fn a_key_of_the_wrong_type_is_named() {
        let error = |entry: Value| McpServerEntry::deserialize(&entry).unwrap_err().to_string();
        assert_eq!(error(json!({"type": 1})), "`type` must be a string");
        assert_eq!(
            error(json!({"command": "x", "args": "a b"})),
            "`args` must be a list of strings"
        );
        assert_eq!(
            error(json!({"command": "x", "args": ["a", 2]})),
            "`args` must be a list of strings"
        );
        assert_eq!(
            error(json!({"command": "x", "env": {"A": 1}})),
            "`env.A` must be a string"
        );
        assert_eq!(
            error(json!({"command": "x", "env": []})),
            "`env` must be an object of strings"
        );
        // Not a string: named later, where the transport needs it.
        let entry = McpServerEntry::deserialize(&json!({"command": 7})).unwrap();
        assert_eq!(entry.command, None);
    }
}
