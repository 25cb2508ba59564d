//! The hook payload `dsh hooks test` is given (`--input` and the flags
//! written into it), read once into the fields a firing uses.

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny};
use serde_json::Value;

/// A field read leniently: a value of another type reads as absent (the
/// payload may be any dialect's, or a hand-written subset).
fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either<T> {
        Wanted(T),
        Other(IgnoredAny),
    }
    Ok(match Either::deserialize(deserializer)? {
        Either::Wanted(wanted) => Some(wanted),
        Either::Other(_) => None,
    })
}

/// A field kept as given, `null` included (absent only when missing).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// The fields of a test payload, in Claude Code's or Codex's names; each is
/// absent when missing or of another type. A payload that is not an object
/// has none.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct TestPayload {
    #[serde(default, deserialize_with = "lenient")]
    pub session_id: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub tool_name: Option<String>,
    /// The tool's arguments, in the naming dialect's shape.
    #[serde(default, deserialize_with = "present")]
    pub tool_input: Option<Value>,
    /// What the tool returned, in the naming dialect's shape.
    #[serde(default, deserialize_with = "present")]
    pub tool_response: Option<Value>,
    #[serde(default, deserialize_with = "lenient")]
    pub tool_use_id: Option<String>,
    /// A tool's error text, or StopFailure's category.
    #[serde(default, deserialize_with = "lenient")]
    pub error: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub prompt: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub source: Option<String>,
    /// SessionEnd's reason, or PermissionDenied's.
    #[serde(default, deserialize_with = "lenient")]
    pub reason: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub stop_hook_active: Option<bool>,
    #[serde(default, deserialize_with = "lenient")]
    pub last_assistant_message: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub notification_type: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub message: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub trigger: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub custom_instructions: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub compact_summary: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub agent_id: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub agent_type: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub command_name: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub command_args: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub file_path: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub memory_type: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub load_reason: Option<String>,
}

impl TestPayload {
    /// The fields of `payload`.
    pub(crate) fn of(payload: &Value) -> Self {
        TestPayload::deserialize(payload).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_of_another_type_are_absent_and_a_null_input_is_kept() {
        let payload = TestPayload::of(&json!({
            "prompt": 5, "stop_hook_active": true, "tool_input": null, "source": "resume"
        }));
        assert_eq!(payload.prompt, None);
        assert_eq!(payload.stop_hook_active, Some(true));
        assert_eq!(payload.tool_input, Some(Value::Null));
        assert_eq!(payload.tool_response, None);
        assert_eq!(payload.source.as_deref(), Some("resume"));
        assert_eq!(TestPayload::of(&json!([1])).source, None);
    }
}
