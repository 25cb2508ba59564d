//! Codex's configuration files as they are written (`hooks.json`, the
//! `[hooks]` tables of `config.toml`), and their parsers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dsh_hooks::position::{line_column, without_position};
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

use super::error::ConfigError;
use crate::event::CodexEvent;
use crate::lenient::{Lenient, lenient};

// ---------------------------------------------------------------- wire types

#[derive(Debug, Deserialize)]
pub(super) struct GroupWire {
    #[serde(default)]
    pub(super) matcher: Option<String>,
    #[serde(default)]
    pub(super) hooks: Vec<HandlerWire>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub(super) enum HandlerWire {
    #[serde(rename = "command")]
    Command {
        command: String,
        #[serde(default, rename = "commandWindows", alias = "command_windows")]
        _command_windows: Option<String>,
        #[serde(default)]
        timeout: Option<u64>,
        #[serde(default, rename = "async")]
        is_async: bool,
        #[serde(default, rename = "statusMessage")]
        status_message: Option<String>,
        #[serde(default, rename = "additionalContextLimit")]
        additional_context_limit: Option<u64>,
    },
    #[serde(rename = "prompt")]
    Prompt {},
    #[serde(rename = "agent")]
    Agent {},
    #[serde(rename = "mcp_tool")]
    McpTool {
        #[serde(default)]
        server: Option<String>,
        #[serde(default)]
        tool: Option<String>,
    },
}

/// The hook tables (same shape in `hooks.json` `hooks` and TOML `[hooks]`).
#[derive(Debug, Default, Deserialize)]
pub(super) struct EventsWire {
    #[serde(default, rename = "PreModelRequest")]
    pub(super) pre_model_request: Vec<GroupWire>,
    #[serde(default, rename = "PostModelRequest")]
    pub(super) post_model_request: Vec<GroupWire>,
    #[serde(default, rename = "PreToolUse")]
    pub(super) pre_tool_use: Vec<GroupWire>,
    #[serde(default, rename = "PermissionRequest")]
    pub(super) permission_request: Vec<GroupWire>,
    #[serde(default, rename = "PostToolUse")]
    pub(super) post_tool_use: Vec<GroupWire>,
    #[serde(default, rename = "PreCompact")]
    pub(super) pre_compact: Vec<GroupWire>,
    #[serde(default, rename = "PostCompact")]
    pub(super) post_compact: Vec<GroupWire>,
    #[serde(default, rename = "SessionStart")]
    pub(super) session_start: Vec<GroupWire>,
    #[serde(default, rename = "SessionEnd")]
    pub(super) session_end: Vec<GroupWire>,
    #[serde(default, rename = "UserPromptSubmit")]
    pub(super) user_prompt_submit: Vec<GroupWire>,
    #[serde(default, rename = "SubagentStart")]
    pub(super) subagent_start: Vec<GroupWire>,
    #[serde(default, rename = "SubagentStop")]
    pub(super) subagent_stop: Vec<GroupWire>,
    #[serde(default, rename = "Stop")]
    pub(super) stop: Vec<GroupWire>,
    #[serde(default, rename = "Interrupt")]
    pub(super) interrupt: Vec<GroupWire>,
    #[serde(default)]
    pub(super) state: BTreeMap<String, HookStateWire>,
    #[serde(default)]
    pub(super) managed_dir: Option<PathBuf>,
}

impl EventsWire {
    pub(super) fn into_groups(self) -> Vec<(CodexEvent, Vec<GroupWire>)> {
        vec![
            (CodexEvent::PreModelRequest, self.pre_model_request),
            (CodexEvent::PostModelRequest, self.post_model_request),
            (CodexEvent::PreToolUse, self.pre_tool_use),
            (CodexEvent::PermissionRequest, self.permission_request),
            (CodexEvent::PostToolUse, self.post_tool_use),
            (CodexEvent::PreCompact, self.pre_compact),
            (CodexEvent::PostCompact, self.post_compact),
            (CodexEvent::SessionStart, self.session_start),
            (CodexEvent::SessionEnd, self.session_end),
            (CodexEvent::UserPromptSubmit, self.user_prompt_submit),
            (CodexEvent::SubagentStart, self.subagent_start),
            (CodexEvent::SubagentStop, self.subagent_stop),
            (CodexEvent::Stop, self.stop),
            (CodexEvent::Interrupt, self.interrupt),
        ]
    }

    pub(super) fn is_empty(&self) -> bool {
        self.handler_groups() == 0
    }

    pub(super) fn handler_groups(&self) -> usize {
        [
            &self.pre_model_request,
            &self.post_model_request,
            &self.pre_tool_use,
            &self.permission_request,
            &self.post_tool_use,
            &self.pre_compact,
            &self.post_compact,
            &self.session_start,
            &self.session_end,
            &self.user_prompt_submit,
            &self.subagent_start,
            &self.subagent_stop,
            &self.stop,
            &self.interrupt,
        ]
        .iter()
        .map(|groups| groups.len())
        .sum()
    }
}

#[derive(Debug, Default, Clone, Deserialize)]
pub(super) struct HookStateWire {
    #[serde(default)]
    pub(super) enabled: Option<bool>,
    #[serde(default)]
    pub(super) trusted_hash: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct HooksFileWire {
    #[serde(default)]
    pub(super) hooks: EventsWire,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct ProjectWire {
    #[serde(default)]
    pub(super) trust_level: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct ConfigTomlWire {
    #[serde(default)]
    pub(super) hooks: Option<EventsWire>,
    #[serde(default)]
    pub(super) notify: Option<Vec<String>>,
    #[serde(default)]
    pub(super) projects: BTreeMap<String, ProjectWire>,
    #[serde(default)]
    pub(super) allow_managed_hooks_only: Option<bool>,
    /// Codex's `approval_policy` (see `approval.rs`); a non-string value
    /// is a type error naming the line, as Codex would refuse it.
    #[serde(default)]
    pub(super) approval_policy: Option<String>,
    /// Codex's `sandbox_mode`.
    #[serde(default)]
    pub(super) sandbox_mode: Option<String>,
}

// ------------------------------------------------------------------ parsing

/// The session's one parse of a `hooks.json`, `None` when there is no
/// such file (`ConfigError::Read` names the path).
pub(super) fn read_json_if_exists(
    files: &dsh_files::ConfigFiles,
    path: &Path,
) -> Result<Option<dsh_files::Json>, ConfigError> {
    if !path.is_file() {
        return Ok(None);
    }
    files.json(path).map_err(|source| ConfigError::Read {
        path: path.to_owned(),
        source,
    })
}

/// The session's one parse of a `config.toml` (or `requirements.toml`),
/// `None` when there is no such file.
pub(super) fn read_toml_if_exists(
    files: &dsh_files::ConfigFiles,
    path: &Path,
) -> Result<Option<dsh_files::Toml>, ConfigError> {
    if !path.is_file() {
        return Ok(None);
    }
    files.toml(path).map_err(|source| ConfigError::Read {
        path: path.to_owned(),
        source,
    })
}

pub(super) fn json_error(path: &Path, err: &serde_json::Error) -> ConfigError {
    ConfigError::Json {
        path: path.to_owned(),
        line: err.line(),
        column: err.column(),
        message: without_position(err),
    }
}

/// serde_json's message without its trailing " at line L column C": the
/// error already names the file, line and column once.
pub(super) fn toml_error(path: &Path, text: &str, err: &dsh_files::TomlError) -> ConfigError {
    let (line, column) = err
        .span()
        .map(|span| line_column(text, span.start))
        .unwrap_or((1, 1));
    ConfigError::Toml {
        path: path.to_owned(),
        line,
        column,
        message: err.message().to_owned(),
    }
}

/// The keys of a table or object, in order, each once; their values are
/// not read.
#[derive(Debug, Default)]
struct Keys(Vec<String>);

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeysVisitor;
        impl<'de> Visitor<'de> for KeysVisitor {
            type Value = Keys;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    if !keys.contains(&key) {
                        keys.push(key);
                    }
                }
                Ok(Keys(keys))
            }
        }
        deserializer.deserialize_map(KeysVisitor)
    }
}

/// A whole configuration document, read only for the keys of its `hooks`
/// (a document of any shape reads; only its syntax can fail).
#[derive(Debug, Default, Deserialize)]
struct HooksKeys {
    #[serde(default, deserialize_with = "lenient")]
    hooks: Option<Keys>,
}

impl HooksKeys {
    fn of(document: Lenient<HooksKeys>) -> Vec<String> {
        document
            .read()
            .and_then(|document| document.hooks)
            .unwrap_or_default()
            .0
    }
}

/// Reads a `hooks.json` document (one parse of it). Unknown event keys are
/// returned for notices, in file order.
pub(super) fn parse_hooks_json(
    path: &Path,
    json: &dsh_files::Json,
) -> Result<(EventsWire, Vec<String>), ConfigError> {
    // Syntax first, then shape: the error a broken file gets.
    let keys: Lenient<HooksKeys> = json.deserialize().map_err(|err| json_error(path, &err))?;
    let file: HooksFileWire = json.deserialize().map_err(|err| json_error(path, &err))?;
    let unknown = HooksKeys::of(keys)
        .into_iter()
        .filter(|key| CodexEvent::from_name(key).is_none())
        .collect();
    Ok((file.hooks, unknown))
}

/// Reads a `config.toml` document (the session's one parse of it) as
/// Codex's configuration. Unknown `[hooks]` keys are returned for notices.
pub(super) fn parse_config_toml(
    path: &Path,
    toml: &dsh_files::Toml,
) -> Result<(ConfigTomlWire, Vec<String>), ConfigError> {
    let error = |err: dsh_files::TomlError| toml_error(path, toml.text(), &err);
    let keys: Lenient<HooksKeys> = toml.deserialize().map_err(error)?;
    let config: ConfigTomlWire = toml.deserialize().map_err(error)?;
    let mut unknown: Vec<String> = HooksKeys::of(keys)
        .into_iter()
        .filter(|key| {
            CodexEvent::from_name(key).is_none()
                && key.as_str() != "state"
                && key.as_str() != "managed_dir"
        })
        .collect();
    // In key order, as a TOML table lists them.
    unknown.sort();
    Ok((config, unknown))
}

// -------------------------------------------------------------------- hash

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Result<Vec<String>, String> {
        parse_hooks_json(Path::new("h.json"), &dsh_files::Json::parse(text))
            .map(|(_, unknown)| unknown)
            .map_err(|err| err.to_string())
    }

    fn toml_keys(text: &str) -> Result<Vec<String>, String> {
        parse_config_toml(Path::new("c.toml"), &dsh_files::Toml::parse(text))
            .map(|(_, unknown)| unknown)
            .map_err(|err| err.to_string())
    }

    #[test]
    fn unknown_event_keys_come_in_file_order_once() {
        assert_eq!(
            json(r#"{"hooks": {"Zed": [], "Stop": [], "Alpha": [], "Zed": []}}"#),
            Ok(vec!["Zed".to_owned(), "Alpha".to_owned()])
        );
        assert_eq!(json(r#"{"other": 1}"#), Ok(Vec::new()));
        assert_eq!(
            toml_keys("[hooks]\nZed = []\nstate = {}\nAlpha = []\n"),
            Ok(vec!["Alpha".to_owned(), "Zed".to_owned()])
        );
    }

    /// A broken file gets the parser's syntax error first, then the shape
    /// error of the typed file (not one about the keys).
    #[test]
    fn errors_name_the_syntax_then_the_shape() {
        let syntax = json(r#"{"hooks": 5, "#).unwrap_err();
        assert!(syntax.contains("EOF while parsing"), "{syntax}");
        let shape = json("5").unwrap_err();
        assert!(shape.contains("expected struct HooksFileWire"), "{shape}");
        let shape = json(r#"{"hooks": 5}"#).unwrap_err();
        assert!(shape.contains("expected struct EventsWire"), "{shape}");
        let toml_syntax = toml_keys("[hooks\n").unwrap_err();
        assert!(toml_syntax.starts_with("c.toml:1:"), "{toml_syntax}");
    }
}
