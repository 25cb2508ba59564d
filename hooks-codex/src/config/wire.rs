//! Codex's configuration files as they are written (`hooks.json`, the
//! `[hooks]` tables of `config.toml`), and their parsers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dsh_hooks::position::{line_column, without_position};
use serde::Deserialize;
use serde_json::Value;

use super::error::ConfigError;
use crate::event::CodexEvent;

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

pub(super) fn read_if_exists(
    files: &dsh_files::ConfigFiles,
    path: &Path,
) -> Result<Option<String>, ConfigError> {
    if !path.is_file() {
        return Ok(None);
    }
    // Through the session's reader: `ConfigError::Read` names the path.
    files
        .read_to_string(path)
        .map(Some)
        .map_err(|source| ConfigError::Read {
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
pub(super) fn toml_error(path: &Path, text: &str, err: &toml::de::Error) -> ConfigError {
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

/// Parses a `hooks.json` text. Unknown event keys are returned for notices.
pub(super) fn parse_hooks_json(
    path: &Path,
    text: &str,
) -> Result<(EventsWire, Vec<String>), ConfigError> {
    let raw: Value = serde_json::from_str(text).map_err(|err| json_error(path, &err))?;
    let file: HooksFileWire = serde_json::from_str(text).map_err(|err| json_error(path, &err))?;
    let unknown = raw
        .get("hooks")
        .and_then(Value::as_object)
        .map(|hooks| {
            hooks
                .keys()
                .filter(|key| CodexEvent::from_name(key).is_none())
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    Ok((file.hooks, unknown))
}

pub(super) fn parse_config_toml(
    path: &Path,
    text: &str,
) -> Result<(ConfigTomlWire, Vec<String>), ConfigError> {
    let raw: toml::Table = toml::from_str(text).map_err(|err| toml_error(path, text, &err))?;
    let config: ConfigTomlWire =
        toml::from_str(text).map_err(|err| toml_error(path, text, &err))?;
    let unknown = raw
        .get("hooks")
        .and_then(toml::Value::as_table)
        .map(|hooks| {
            hooks
                .keys()
                .filter(|key| {
                    CodexEvent::from_name(key).is_none()
                        && key.as_str() != "state"
                        && key.as_str() != "managed_dir"
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    Ok((config, unknown))
}

// -------------------------------------------------------------------- hash
