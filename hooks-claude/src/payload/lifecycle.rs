//! Payloads of the lifecycle events: Setup, MessageDisplay, CwdChanged,
//! the model switch, ConfigChange, FileChanged, Elicitation/ElicitationResult.

use serde::Serialize;
use serde_json::Value;

use super::{Common, Head};

/// `Setup`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SetupInput<'a> {
    /// The head (no prompt id, mode or effort).
    #[serde(flatten)]
    pub head: Head<'a>,
    /// `init` or `maintenance`.
    pub trigger: &'a str,
}

/// `Setup` (`ev_setup_*` captures): the bare head, then `trigger`.
pub fn setup<'a>(common: &'a Common, trigger: &'a str) -> SetupInput<'a> {
    SetupInput {
        head: common.head("Setup"),
        trigger,
    }
}

/// `MessageDisplay`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MessageDisplayInput<'a> {
    /// The head with the prompt id.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// The turn's id (not the prompt id).
    pub turn_id: &'a str,
    /// The message's id.
    pub message_id: &'a str,
    /// The chunk's index within the message (dsh shows a message whole: 0).
    pub index: u64,
    /// Whether this is the message's last chunk (always, for dsh).
    #[serde(rename = "final")]
    pub is_final: bool,
    /// The text shown.
    pub delta: &'a str,
}

/// `MessageDisplay` (`ev_message_display`): the head with the prompt id,
/// then the turn and message ids, `index` 0, `final` true and the whole text.
pub fn message_display<'a>(
    common: &'a Common,
    turn_id: &'a str,
    message_id: &'a str,
    text: &'a str,
) -> MessageDisplayInput<'a> {
    MessageDisplayInput {
        head: common.head_prompt("MessageDisplay"),
        turn_id,
        message_id,
        index: 0,
        is_final: true,
        delta: text,
    }
}

/// `CwdChanged`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CwdChangedInput<'a> {
    /// The head with the prompt id (its `cwd` is already the new one).
    #[serde(flatten)]
    pub head: Head<'a>,
    /// The directory before.
    pub old_cwd: &'a str,
    /// The directory now.
    pub new_cwd: &'a str,
}

/// `CwdChanged` (`ev_cwd_changed`): the head with the prompt id, then the
/// old and new directories.
pub fn cwd_changed<'a>(
    common: &'a Common,
    old_cwd: &'a str,
    new_cwd: &'a str,
) -> CwdChangedInput<'a> {
    CwdChangedInput {
        head: common.head_prompt("CwdChanged"),
        old_cwd,
        new_cwd,
    }
}

/// `PreModelSwitch` / `PostModelSwitch`'s stdin (`ev_model_sdk`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelSwitchInput<'a> {
    /// The head with the prompt id.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// The model until now.
    pub from_model: &'a str,
    /// The model from now on.
    pub to_model: &'a str,
    /// What was asked for.
    pub requested_model: &'a str,
    /// `command` (`/model`) or `sdk` (`set_model`).
    pub source: &'a str,
    /// What the next request re-sends: the last response's input and
    /// output tokens (0 before the first response).
    pub context_tokens: u64,
    /// Whether the prompt cache is likely still warm (last response within
    /// `cache_ttl`).
    pub prompt_cache_warm: bool,
    /// The cache lifetime assumed (`5m`).
    pub cache_ttl: &'a str,
    /// Re-caching `context_tokens` on `to_model` at its cache-write rate.
    pub estimated_cache_write_usd: f64,
    /// `catalog` (a list price dsh knows) or `default` (assumed).
    pub pricing: &'a str,
}

/// The facts of one switch, as the payload reports them.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchFacts<'a> {
    /// The model until now.
    pub from: &'a str,
    /// The model from now on.
    pub to: &'a str,
    /// What was asked for.
    pub requested: &'a str,
    /// `command` or `sdk`.
    pub source: &'a str,
    /// The last response's input + output tokens.
    pub context_tokens: u64,
    /// The last response came within the cache lifetime.
    pub cache_warm: bool,
}

/// Claude's 5-minute cache-write list prices (USD per million tokens) by
/// model family; any other model is priced as Sonnet (`pricing: default`).
fn cache_write_price(model: &str) -> (f64, &'static str) {
    let model = model.to_ascii_lowercase();
    if !model.starts_with("claude-") {
        (3.75, "default")
    } else if model.contains("haiku") {
        (1.25, "catalog")
    } else if model.contains("opus-4-1") || model.contains("opus-4-0") || model == "claude-opus-4" {
        (18.75, "catalog")
    } else if model.contains("opus") {
        (6.25, "catalog")
    } else {
        (3.75, "catalog")
    }
}

/// `PreModelSwitch` / `PostModelSwitch` (`event`): the head with the prompt
/// id, then the switch; the estimate is rounded to 4 decimals as captured.
pub fn model_switch<'a>(
    common: &'a Common,
    event: &'a str,
    facts: &SwitchFacts<'a>,
) -> ModelSwitchInput<'a> {
    let (price, pricing) = cache_write_price(facts.to);
    // Token counts stay far below 2^52, where f64 is exact.
    #[allow(clippy::cast_precision_loss)]
    let usd = facts.context_tokens as f64 * price / 1_000_000.0;
    ModelSwitchInput {
        head: common.head_prompt(event),
        from_model: facts.from,
        to_model: facts.to,
        requested_model: facts.requested,
        source: facts.source,
        context_tokens: facts.context_tokens,
        prompt_cache_warm: facts.cache_warm,
        cache_ttl: "5m",
        estimated_cache_write_usd: (usd * 10_000.0).round() / 10_000.0,
        pricing,
    }
}

/// `ConfigChange`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigChangeInput<'a> {
    /// The head with the prompt id.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// `user_settings`, `project_settings`, `local_settings`.
    pub source: &'a str,
    /// The settings file.
    pub file_path: &'a str,
}

/// `ConfigChange` (`ev_config_change`): the head with the prompt id, then
/// the layer and the file.
pub fn config_change<'a>(
    common: &'a Common,
    source: &'a str,
    file_path: &'a str,
) -> ConfigChangeInput<'a> {
    ConfigChangeInput {
        head: common.head_prompt("ConfigChange"),
        source,
        file_path,
    }
}

/// `FileChanged`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChangedInput<'a> {
    /// The head with the prompt id.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// The file.
    pub file_path: &'a str,
    /// `change`, `add` or `unlink`.
    pub event: &'a str,
}

/// `FileChanged` (`ev_file_changed`, `ev_file_changed_watch`): the head with
/// the prompt id, then the file and how it changed.
pub fn file_changed<'a>(
    common: &'a Common,
    file_path: &'a str,
    event: &'a str,
) -> FileChangedInput<'a> {
    FileChangedInput {
        head: common.head_prompt("FileChanged"),
        file_path,
        event,
    }
}

/// `Elicitation`'s stdin.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ElicitationInput<'a> {
    /// The head with the prompt id.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// The MCP server that asks.
    pub mcp_server_name: &'a str,
    /// Its question.
    pub message: &'a str,
    /// `form` or `url`.
    pub mode: &'a str,
    /// Where to go (URL mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<&'a str>,
    /// The server's id for a URL elicitation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<&'a str>,
    /// The form (form mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<&'a Value>,
}

/// `Elicitation` (`ev_elicit_plain`): the head with the prompt id, then the
/// server, its message, the mode and the form's schema.
pub fn elicitation<'a>(
    common: &'a Common,
    request: &'a dsh_seams::ElicitationRequest,
) -> ElicitationInput<'a> {
    ElicitationInput {
        head: common.head_prompt("Elicitation"),
        mcp_server_name: &request.server,
        message: &request.message,
        mode: request.mode.as_str(),
        url: request.url.as_deref(),
        elicitation_id: request.elicitation_id.as_deref(),
        requested_schema: request.requested_schema.as_ref(),
    }
}

/// `ElicitationResult`'s stdin.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ElicitationResultInput<'a> {
    /// The head with the prompt id.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// The MCP server that asked.
    pub mcp_server_name: &'a str,
    /// `form` or `url`.
    pub mode: &'a str,
    /// The server's id for a URL elicitation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<&'a str>,
    /// `accept`, `decline` or `cancel`.
    pub action: &'a str,
    /// The form's values (with `accept`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<&'a Value>,
}

/// `ElicitationResult` (`ev_elicit_result_*`): the head with the prompt id,
/// then the server, the mode, the user's action and content.
pub fn elicitation_result<'a>(
    common: &'a Common,
    request: &'a dsh_seams::ElicitationRequest,
    answer: &'a dsh_seams::ElicitationAnswer,
) -> ElicitationResultInput<'a> {
    ElicitationResultInput {
        head: common.head_prompt("ElicitationResult"),
        mcp_server_name: &request.server,
        mode: request.mode.as_str(),
        elicitation_id: request.elicitation_id.as_deref(),
        action: answer.action.as_str(),
        content: answer.content.as_ref(),
    }
}
