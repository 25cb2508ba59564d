//! A hook's JSON answer as Claude Code reads it: serde structs over the
//! keys Claude Code knows, every typed key held as a [`Field`] so that a
//! value of the wrong type is kept as the fact the schema error names
//! instead of failing the whole read. Unknown keys are ignored, as Claude
//! Code ignores them.

use dsh_seams::PermissionUpdate;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// A type one key of the answer is read into.
pub(crate) trait WireType: DeserializeOwned {
    /// The JSON type the schema requires (`None`: any, or decided by the
    /// type's own deserializer, as for the string options).
    const JSON: Option<&'static str>;
}

impl WireType for bool {
    const JSON: Option<&'static str> = Some("boolean");
}

impl WireType for String {
    const JSON: Option<&'static str> = Some("string");
}

/// A JSON number as written (a handler's `timeout`).
impl WireType for serde_json::Number {
    const JSON: Option<&'static str> = Some("number");
}

/// A JSON object kept as written (`updatedInput`, elicitation `content`).
impl WireType for Map<String, Value> {
    const JSON: Option<&'static str> = Some("object");
}

/// Arbitrary JSON (`updatedMCPToolOutput`): that is the wire.
impl WireType for Value {
    const JSON: Option<&'static str> = None;
}

/// A list whose entries are each read on their own (a bad entry does not
/// spoil the list).
impl<T: WireType> WireType for Vec<Field<T>> {
    const JSON: Option<&'static str> = Some("array");
}

impl WireType for Vec<PermissionUpdate> {
    const JSON: Option<&'static str> = None;
}

/// One key of the answer.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) enum Field<T> {
    /// Not there.
    #[default]
    Absent,
    /// There, with the type the schema wants.
    Valid(T),
    /// There with another type (or, for an option, another value).
    Invalid {
        /// The JSON type it had.
        received: &'static str,
        /// Why it did not read (serde's words).
        error: String,
        /// The value as written (compact JSON), for the notices that
        /// quote it.
        written: String,
    },
}

impl<T: WireType> Field<T> {
    /// Reads `value` as a `T`, keeping what it was when it is not one.
    pub(crate) fn read(value: &Value) -> Self {
        Field::deserialize(value).unwrap_or_default()
    }
}

impl<T> Field<T> {
    /// The value, when present and of the right type.
    pub(crate) fn valid(&self) -> Option<&T> {
        match self {
            Field::Valid(value) => Some(value),
            Field::Absent | Field::Invalid { .. } => None,
        }
    }

    /// The JSON text of a value of the wrong type (`None` when absent or
    /// valid).
    pub(crate) fn written(&self) -> Option<&str> {
        match self {
            Field::Invalid { written, .. } => Some(written),
            Field::Absent | Field::Valid(_) => None,
        }
    }

    /// Whether the key is there with `null` (which most keys read as unset).
    pub(crate) fn is_null(&self) -> bool {
        matches!(
            self,
            Field::Invalid {
                received: "null",
                ..
            }
        )
    }

    /// The value itself, when present and of the right type.
    pub(crate) fn into_valid(self) -> Option<T> {
        match self {
            Field::Valid(value) => Some(value),
            Field::Absent | Field::Invalid { .. } => None,
        }
    }
}

pub(crate) use dsh_hooks::wire::Entries;

impl<T: DeserializeOwned> WireType for Entries<T> {
    const JSON: Option<&'static str> = Some("object");
}

impl Field<String> {
    /// The string, when the key holds one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        self.valid().map(String::as_str)
    }
}

impl<'de, T: WireType> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let received = dsh_hooks::wire::json_type(&value);
        if let Some(want) = T::JSON
            && want != received
        {
            return Ok(Field::Invalid {
                received,
                error: format!("expected {want}"),
                written: value.to_string(),
            });
        }
        Ok(match T::deserialize(&value) {
            Ok(read) => Field::Valid(read),
            Err(error) => Field::Invalid {
                received,
                error: error.to_string(),
                written: value.to_string(),
            },
        })
    }
}

/// The top-level legacy `decision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum TopDecision {
    /// `approve` (PreToolUse: allow).
    Approve,
    /// `block`.
    Block,
}

impl WireType for TopDecision {
    const JSON: Option<&'static str> = None;
}

/// `hookSpecificOutput.permissionDecision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum PermissionDecision {
    /// Let the call run.
    Allow,
    /// Refuse it.
    Deny,
    /// Ask the user.
    Ask,
    /// Leave it to the permission model.
    Defer,
}

impl WireType for PermissionDecision {
    const JSON: Option<&'static str> = None;
}

/// PermissionRequest's `decision.behavior`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Behavior {
    /// Approve the request.
    Allow,
    /// Refuse it.
    Deny,
}

impl WireType for Behavior {
    const JSON: Option<&'static str> = None;
}

/// A hook's whole JSON answer.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct HookOutputWire {
    /// `continue` (`false` stops).
    #[serde(rename = "continue")]
    pub keep_going: Field<bool>,
    /// `suppressOutput`.
    pub suppress_output: Field<bool>,
    /// `stopReason`.
    pub stop_reason: Field<String>,
    /// The legacy `decision`.
    pub decision: Field<TopDecision>,
    /// The legacy `reason`.
    pub reason: Field<String>,
    /// `systemMessage` (user-facing).
    pub system_message: Field<String>,
    /// `terminalSequence`.
    pub terminal_sequence: Field<String>,
    /// `hookSpecificOutput` (its shared keys; each event's own are
    /// [`super::keys::EventKeys`]).
    pub hook_specific_output: Field<SpecificHead>,
}

impl WireType for SpecificHead {
    const JSON: Option<&'static str> = Some("object");
}

/// The keys of `hookSpecificOutput` every event reads.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct SpecificHead {
    /// The event the answer claims to be for.
    pub hook_event_name: Field<String>,
    /// Text for the model.
    pub additional_context: Field<String>,
}

impl WireType for RequestDecisionWire {
    const JSON: Option<&'static str> = Some("object");
}

/// PermissionRequest's `hookSpecificOutput.decision`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct RequestDecisionWire {
    /// `allow` or `deny`.
    pub behavior: Field<Behavior>,
    /// The input to run with instead.
    pub updated_input: Field<Map<String, Value>>,
    /// Rules to add.
    pub updated_permissions: Field<Vec<PermissionUpdate>>,
    /// The deny message.
    pub message: Field<String>,
    /// Deny and stop.
    pub interrupt: Field<bool>,
}

impl HookOutputWire {
    /// Reads a parsed answer (a JSON object; anything else reads as empty).
    pub(crate) fn read(json: &Value) -> Self {
        if !json.is_object() {
            return HookOutputWire::default();
        }
        HookOutputWire::deserialize(json).unwrap_or_default()
    }

    /// `hookSpecificOutput`, when it is an object.
    pub(crate) fn specific(&self) -> Option<&SpecificHead> {
        self.hook_specific_output.valid()
    }

    /// `continue: false`.
    pub(crate) fn stops(&self) -> bool {
        self.keep_going.valid() == Some(&false)
    }

    /// `hookSpecificOutput.additionalContext`.
    pub(crate) fn context(&self) -> Option<&str> {
        self.specific().and_then(|s| s.additional_context.as_str())
    }
}
