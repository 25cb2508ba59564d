//! A question an MCP server puts to the user during one of its tool calls
//! (MCP `elicitation/create`), and the answer that goes back to it.
//!
//! The order is Claude Code's (`ev_elicit_*` captures): the elicitation
//! seam first, where a listener may answer in the user's place (then nobody
//! is asked and the result seam does not fire); else the user is asked
//! (a headless session cannot ask: its answer is `cancel`); then the result
//! seam, where a listener may change or refuse the answer before it is sent.

use serde::Serialize;
use serde_json::Value;

/// How the server wants the answer given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ElicitationMode {
    /// Fill in a form (`requested_schema`).
    Form,
    /// Open a URL and finish there.
    Url,
}

impl ElicitationMode {
    /// The wire name (`form`, `url`).
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitationMode::Form => "form",
            ElicitationMode::Url => "url",
        }
    }
}

/// What an MCP server asked.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    /// The server's configured name.
    pub server: String,
    /// The question.
    pub message: String,
    /// Form or URL.
    pub mode: ElicitationMode,
    /// The form's JSON schema (an object of primitive properties), in form mode.
    pub requested_schema: Option<Value>,
    /// Where to go, in URL mode.
    pub url: Option<String>,
    /// The server's id for a URL elicitation.
    pub elicitation_id: Option<String>,
}

/// The three answers MCP knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ElicitationAction {
    /// The user answered (`content` holds the form's values).
    Accept,
    /// The user said no.
    Decline,
    /// The user dismissed the question (or nobody could answer it).
    Cancel,
}

impl ElicitationAction {
    /// The wire name (`accept`, `decline`, `cancel`).
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitationAction::Accept => "accept",
            ElicitationAction::Decline => "decline",
            ElicitationAction::Cancel => "cancel",
        }
    }

    /// Reads a wire name.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "accept" => Some(ElicitationAction::Accept),
            "decline" => Some(ElicitationAction::Decline),
            "cancel" => Some(ElicitationAction::Cancel),
            _ => None,
        }
    }
}

/// An answer to an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationAnswer {
    /// What was answered.
    pub action: ElicitationAction,
    /// The form's values (with `accept`).
    pub content: Option<Value>,
}

impl ElicitationAnswer {
    /// An answer without content.
    pub fn bare(action: ElicitationAction) -> Self {
        ElicitationAnswer {
            action,
            content: None,
        }
    }
}
