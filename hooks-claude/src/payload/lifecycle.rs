//! Payloads of the lifecycle events: Setup, MessageDisplay, CwdChanged.

use serde::Serialize;
use serde_json::Value;

use super::{Common, Head, value_of};

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
pub fn setup(common: &Common, trigger: &str) -> Value {
    value_of(&SetupInput {
        head: common.head("Setup"),
        trigger,
    })
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
pub fn message_display(common: &Common, turn_id: &str, message_id: &str, text: &str) -> Value {
    value_of(&MessageDisplayInput {
        head: common.head_prompt("MessageDisplay"),
        turn_id,
        message_id,
        index: 0,
        is_final: true,
        delta: text,
    })
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
pub fn cwd_changed(common: &Common, old_cwd: &str, new_cwd: &str) -> Value {
    value_of(&CwdChangedInput {
        head: common.head_prompt("CwdChanged"),
        old_cwd,
        new_cwd,
    })
}
