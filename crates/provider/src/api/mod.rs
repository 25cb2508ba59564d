//! The three model APIs' wire shapes as plain serde types: request bodies
//! (serialized in declaration order, which is the order of the keys on the
//! wire) and the streamed events dsh reads. No behaviour lives here; the
//! modules beside this one (`wire`, `anthropic`, `responses`) build these
//! from dsh's messages and act on what comes back.
//!
//! Stream events are tagged enums (by `type`, with an `Other` variant for
//! the event and item types dsh skips); the keys dsh reads of what a
//! server hands out are [`Loose`], so a key of another type reads as
//! absent instead of failing the event. Thinking blocks and reasoning
//! items are typed too, with the keys dsh does not know kept to go back.
//!
//! What stays [`serde_json::Value`]: tool `input_schema`s and tool-call
//! arguments (arbitrary JSON by nature), a reasoning item's `summary` and
//! a thinking block's unknown keys (sent back as the API wrote them), the
//! session log's thinking items (the protocol's opaque values), and a
//! chat server's in-stream error object of no known shape.

use serde::Deserialize;
use serde::de::IgnoredAny;

pub(crate) mod chat;
pub(crate) mod messages;
pub(crate) mod responses;

/// A constant tag on the wire (`"type": "function"`), one value only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub(crate) enum Function {
    #[serde(rename = "function")]
    Function,
}

/// A value of the expected type, or a note that the key held another (a
/// server's error body is read as far as it has the usual shape).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum Loose<T> {
    Is(T),
    Not(IgnoredAny),
}

impl<T> Loose<T> {
    /// The value when it has the expected type.
    pub fn ok(self) -> Option<T> {
        match self {
            Loose::Is(value) => Some(value),
            Loose::Not(_) => None,
        }
    }
}

/// A refused request's body, in the shape OpenAI and Anthropic share:
/// `{"error": {"message", "type", "code"}}`, or those keys at the top.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ErrorBody {
    #[serde(default)]
    pub error: Option<Loose<ErrorFields>>,
    #[serde(flatten)]
    pub top: ErrorFields,
}

/// `message`, `type` and `code` of an error.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ErrorFields {
    #[serde(default)]
    pub message: Option<Loose<String>>,
    #[serde(rename = "type", default)]
    pub kind: Option<Loose<String>>,
    #[serde(default)]
    pub code: Option<Loose<String>>,
}

impl ErrorBody {
    /// Reads a body; `None` when it is not a JSON object.
    pub fn parse(body: &str) -> Option<Self> {
        serde_json::from_str(body).ok()
    }
}
