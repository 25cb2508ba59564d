//! One Claude Code MCP server entry, typed: a value of `mcpServers` in
//! `.mcp.json`, a `--mcp-config` file or `~/.claude.json`. A key of the
//! wrong type is an error naming the key, as dsh reported it before the
//! entry had a type; keys dsh does not read are kept.

use std::collections::BTreeMap;

use serde::de::{Deserializer, Error as _, IgnoredAny};
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
    /// `headers` of a remote server (read, not sent yet: dsh does not
    /// connect remote servers).
    #[serde(
        default,
        deserialize_with = "headers",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub headers: BTreeMap<String, String>,
    /// Every other key, as written.
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// A value read only as far as dsh needs it: a string, or anything else.
#[derive(Deserialize)]
#[serde(untagged)]
enum Text {
    Text(String),
    Other(IgnoredAny),
}

impl Text {
    fn into_string(self) -> Option<String> {
        match self {
            Text::Text(text) => Some(text),
            Text::Other(_) => None,
        }
    }
}

/// A list whose items are read as [`Text`], or anything else.
#[derive(Deserialize)]
#[serde(untagged)]
enum TextList {
    List(Vec<Text>),
    Other(IgnoredAny),
}

/// An object whose values are read as [`Text`], or anything else.
#[derive(Deserialize)]
#[serde(untagged)]
enum TextMap {
    Map(BTreeMap<String, Text>),
    Other(IgnoredAny),
}

fn kind<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Text::deserialize(deserializer)?
        .into_string()
        .map(Some)
        .ok_or_else(|| D::Error::custom("`type` must be a string"))
}

/// A string, or `None` for anything else: what is missing is named where
/// the transport needs it.
fn lenient_string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(Text::deserialize(deserializer)?.into_string())
}

fn args<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    let not_a_list = || D::Error::custom("`args` must be a list of strings");
    match Option::<TextList>::deserialize(deserializer)? {
        None => Ok(Vec::new()),
        Some(TextList::List(items)) => items
            .into_iter()
            .map(|item| item.into_string().ok_or_else(not_a_list))
            .collect(),
        Some(TextList::Other(_)) => Err(not_a_list()),
    }
}

/// An object of strings under `key` (`null` is none).
fn strings<'de, D: Deserializer<'de>>(
    deserializer: D,
    key: &str,
) -> Result<BTreeMap<String, String>, D::Error> {
    match Option::<TextMap>::deserialize(deserializer)? {
        None => Ok(BTreeMap::new()),
        Some(TextMap::Map(map)) => map
            .into_iter()
            .map(|(name, value)| match value.into_string() {
                Some(text) => Ok((name, text)),
                None => Err(D::Error::custom(format!("`{key}.{name}` must be a string"))),
            })
            .collect(),
        Some(TextMap::Other(_)) => Err(D::Error::custom(format!(
            "`{key}` must be an object of strings"
        ))),
    }
}

fn env<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, String>, D::Error> {
    strings(deserializer, "env")
}

fn headers<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    strings(deserializer, "headers")
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
        assert_eq!(web.headers["X"], "y");
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
        assert_eq!(
            error(json!({"type": "http", "url": "u", "headers": {"X": 1}})),
            "`headers.X` must be a string"
        );
        assert_eq!(
            error(json!({"type": "http", "url": "u", "headers": "X: y"})),
            "`headers` must be an object of strings"
        );
        // Not a string: named later, where the transport needs it.
        let entry = McpServerEntry::deserialize(&json!({"command": 7})).unwrap();
        assert_eq!(entry.command, None);
    }
}
