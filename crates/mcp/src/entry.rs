//! One Claude Code MCP server entry, typed: a value of `mcpServers` in
//! `.mcp.json`, a `--mcp-config` file or `~/.claude.json`. Each key is read
//! straight into its type as the entry streams by: a key of the wrong type
//! is an error naming the key, as dsh reported it before the entry had a
//! type, and an entry that is not an object is one too. The entry is read
//! to its end either way, so one bad entry is reported under its own name
//! without failing the file ([`Checked`]). Keys dsh does not read are
//! skipped: nothing passes them on.

use std::collections::BTreeMap;
use std::marker::PhantomData;

pub(crate) use dsh_tools::map_or::{FromMap, MapOr};
use serde::de::{Deserializer, Error as _, IgnoredAny, MapAccess};
use serde::{Deserialize, Serialize};

/// One `mcpServers` entry as written (variables not expanded yet).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct McpServerEntry {
    /// `type`: absent or `stdio` for a local process, else a remote kind
    /// (`http`, `sse`).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `command` of a stdio server (`None` when absent or not a string).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// `args` of a stdio server.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// `env` of a stdio server.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// `url` of a remote server (`None` when absent or not a string).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `headers` of a remote server (read, not sent yet: dsh does not
    /// connect remote servers).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

impl<'de> Deserialize<'de> for McpServerEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Checked::deserialize(deserializer)?
            .0
            .map_err(D::Error::custom)
    }
}

/// An entry read to its end whatever it holds: the entry, or why it is
/// not one (the first bad key, in the order the keys are written).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Checked(pub Result<McpServerEntry, String>);

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MapOr(PhantomData))
    }
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

/// The keys of an entry as read, before they are checked. A key written
/// twice keeps its first place and its last value, as a parsed document
/// does.
#[derive(Default)]
struct Keys {
    /// The keys dsh reads, in the order first written.
    order: Vec<Key>,
    kind: Option<Text>,
    command: Option<Text>,
    args: Option<Option<TextList>>,
    env: Option<Option<TextMap>>,
    url: Option<Text>,
    headers: Option<Option<TextMap>>,
}

/// A key dsh reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Kind,
    Command,
    Args,
    Env,
    Url,
    Headers,
}

impl Keys {
    fn read<'de, A: MapAccess<'de>>(&mut self, name: &str, map: &mut A) -> Result<(), A::Error> {
        let key = match name {
            "type" => {
                self.kind = Some(map.next_value()?);
                Key::Kind
            }
            "command" => {
                self.command = Some(map.next_value()?);
                Key::Command
            }
            "args" => {
                self.args = Some(map.next_value()?);
                Key::Args
            }
            "env" => {
                self.env = Some(map.next_value()?);
                Key::Env
            }
            "url" => {
                self.url = Some(map.next_value()?);
                Key::Url
            }
            "headers" => {
                self.headers = Some(map.next_value()?);
                Key::Headers
            }
            _ => {
                map.next_value::<IgnoredAny>()?;
                return Ok(());
            }
        };
        if !self.order.contains(&key) {
            self.order.push(key);
        }
        Ok(())
    }

    /// The entry, or the first bad key's message.
    fn check(self) -> Result<McpServerEntry, String> {
        let mut entry = McpServerEntry::default();
        let Keys {
            order,
            mut kind,
            mut command,
            mut args,
            mut env,
            mut url,
            mut headers,
        } = self;
        for key in order {
            match key {
                Key::Kind => {
                    let kind = kind.take().and_then(Text::into_string);
                    entry.kind = Some(kind.ok_or("`type` must be a string")?);
                }
                Key::Command => entry.command = command.take().and_then(Text::into_string),
                Key::Args => entry.args = text_list(args.take().flatten())?,
                Key::Env => entry.env = text_map(env.take().flatten(), "env")?,
                Key::Url => entry.url = url.take().and_then(Text::into_string),
                Key::Headers => entry.headers = text_map(headers.take().flatten(), "headers")?,
            }
        }
        Ok(entry)
    }
}

/// `args`: a list of strings (`null` is none).
fn text_list(list: Option<TextList>) -> Result<Vec<String>, String> {
    let not_a_list = || "`args` must be a list of strings".to_owned();
    match list {
        None => Ok(Vec::new()),
        Some(TextList::List(items)) => items
            .into_iter()
            .map(|item| item.into_string().ok_or_else(not_a_list))
            .collect(),
        Some(TextList::Other(_)) => Err(not_a_list()),
    }
}

/// An object of strings under `key` (`null` is none).
fn text_map(map: Option<TextMap>, key: &str) -> Result<BTreeMap<String, String>, String> {
    match map {
        None => Ok(BTreeMap::new()),
        Some(TextMap::Map(map)) => map
            .into_iter()
            .map(|(name, value)| match value.into_string() {
                Some(text) => Ok((name, text)),
                None => Err(format!("`{key}.{name}` must be a string")),
            })
            .collect(),
        Some(TextMap::Other(_)) => Err(format!("`{key}` must be an object of strings")),
    }
}

impl FromMap for Checked {
    const EXPECTING: &'static str = "an MCP server entry";

    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut keys = Keys::default();
        while let Some(name) = map.next_key::<String>()? {
            keys.read(&name, &mut map)?;
        }
        Ok(Checked(keys.check()))
    }

    fn other() -> Self {
        Checked(Err("an entry must be an object".to_owned()))
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
        assert_eq!(web.headers["X"], "y");
        // What it serializes back to parses to the same entry.
        for entry in [echo, web] {
            let again = serde_json::to_value(&entry).unwrap();
            assert_eq!(McpServerEntry::deserialize(&again).unwrap(), entry);
        }
    }

    #[test]
    fn a_key_of_the_wrong_type_is_named() {
        let error =
            |entry: serde_json::Value| McpServerEntry::deserialize(&entry).unwrap_err().to_string();
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

    /// Entries read straight from the text and from a parsed document give
    /// the same answers: anything but an object is not an entry, the first
    /// bad key in written order is the one named, a key written twice
    /// counts with its last value, and keys dsh does not read are skipped
    /// whatever they hold. None of it fails the neighbours.
    #[test]
    fn entries_are_read_key_by_key_and_a_bad_one_spoils_nothing_else() {
        let text = r#"[
            "npx server", 3, null, true, ["python3", "s.py"],
            {"env": {"A": 1}, "args": "x"},
            {"args": "x", "env": {"A": 1}},
            {"command": "a", "args": 1, "command": "b", "args": ["-v"]},
            {"type": "http", "url": "u", "extra": {"deep": [1, {"x": null}]}, "type": "sse"},
            {"command": "ok", "timeout": 5, "disabled": [true]}
        ]"#;
        let from_text: Vec<Checked> = serde_json::from_str(text).unwrap();
        let document: serde_json::Value = serde_json::from_str(text).unwrap();
        let from_document = Vec::<Checked>::deserialize(&document).unwrap();
        for read in [from_text, from_document] {
            let answers: Vec<Result<McpServerEntry, String>> =
                read.into_iter().map(|checked| checked.0).collect();
            let not_an_entry = Err("an entry must be an object".to_owned());
            assert_eq!(answers[..5], vec![not_an_entry; 5][..]);
            assert_eq!(answers[5], Err("`env.A` must be a string".to_owned()));
            assert_eq!(
                answers[6],
                Err("`args` must be a list of strings".to_owned())
            );
            let twice = McpServerEntry {
                command: Some("b".into()),
                args: vec!["-v".into()],
                ..McpServerEntry::default()
            };
            assert_eq!(answers[7], Ok(twice));
            let remote = McpServerEntry {
                kind: Some("sse".into()),
                url: Some("u".into()),
                ..McpServerEntry::default()
            };
            assert_eq!(answers[8], Ok(remote));
            let plain = McpServerEntry {
                command: Some("ok".into()),
                ..McpServerEntry::default()
            };
            assert_eq!(answers[9], Ok(plain));
        }
        // On its own, an entry that is not one is an error too.
        assert!(serde_json::from_str::<McpServerEntry>("[\"x\"]").is_err());
    }
}
