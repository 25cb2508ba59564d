//! The three model APIs' wire shapes as plain serde types: request bodies
//! (serialized in declaration order, which is the order of the keys on the
//! wire) and the streamed events dsh reads. No behaviour lives here; the
//! modules beside this one (`wire`, `anthropic`, `responses`) build these
//! from dsh's messages and act on what comes back.
//!
//! What stays [`serde_json::Value`]: tool `input_schema`s and tool-call
//! arguments (arbitrary JSON by nature), MCP content blocks, and the
//! opaque thinking and reasoning items an API hands out to get back
//! unchanged.

pub(crate) mod chat;
pub(crate) mod messages;
pub(crate) mod responses;

/// A constant tag on the wire (`"type": "function"`), one value only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub(crate) enum Function {
    #[serde(rename = "function")]
    Function,
}
