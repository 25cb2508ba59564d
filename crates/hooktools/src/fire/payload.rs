//! The hook payload `dsh hooks test` is given (`--input` and the flags
//! written into it), read once into the fields a firing uses.

use std::borrow::Cow;
use std::sync::Arc;

use dsh_hooks::registry::HookDialect;
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

/// A field read leniently: a value of another type reads as absent (the
/// payload may be any dialect's, or a hand-written subset).
pub(super) fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
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
    #[serde(default, deserialize_with = "dsh_protocol::present")]
    pub tool_input: Option<Value>,
    /// What the tool returned, in the naming dialect's shape.
    #[serde(default, deserialize_with = "dsh_protocol::present")]
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

/// Why a test payload's text was not read.
#[derive(Debug)]
pub(crate) enum PayloadError {
    /// The text is not JSON.
    Syntax(serde_json::Error),
    /// The text is JSON but not an object.
    NotAnObject,
    /// An object whose fields cannot be read (a key given twice).
    Fields(serde_json::Error),
}

/// `payload` in the names [`TestPayload`] reads: the first of `dialects`
/// whose own field names it is in (Copilot's `toolArgs`) rewrites it.
fn in_test_names<'t>(payload: &'t str, dialects: &[Arc<dyn HookDialect>]) -> Cow<'t, str> {
    dialects
        .iter()
        .find_map(|dialect| dialect.test_payload(payload))
        .map_or(Cow::Borrowed(payload), Cow::Owned)
}

impl TestPayload {
    /// The fields of `payload`'s text (a recorded one, in the names of one
    /// of `dialects`); one that is not an object has none.
    pub(crate) fn of(payload: &str, dialects: &[Arc<dyn HookDialect>]) -> Self {
        if !payload.trim_start().starts_with('{') {
            return Self::default();
        }
        serde_json::from_str::<ObjectOnly<TestPayload>>(&in_test_names(payload, dialects))
            .map(|object| object.0)
            .unwrap_or_default()
    }

    /// The fields of a payload's text (`--input`), in the names of any of
    /// `dialects`.
    pub(crate) fn read(
        text: &str,
        dialects: &[Arc<dyn HookDialect>],
    ) -> Result<Self, PayloadError> {
        // The syntax first, so its error is the one any JSON reader gives.
        serde_json::from_str::<IgnoredAny>(text).map_err(PayloadError::Syntax)?;
        if !text.trim_start().starts_with('{') {
            return Err(PayloadError::NotAnObject);
        }
        // Duplicated keys are reported in the payload's own names.
        serde_json::from_str::<DistinctKeys>(text).map_err(PayloadError::Fields)?;
        serde_json::from_str::<ObjectOnly<TestPayload>>(&in_test_names(text, dialects))
            .map(|object| object.0)
            .map_err(PayloadError::Fields)
    }

    /// Writes a field given as a flag (`--agent-type` and the like) over
    /// the payload's own; a key the payload has no field for is ignored.
    pub(crate) fn set_flag(&mut self, key: &str, value: String) {
        let field = match key {
            "agent_type" => &mut self.agent_type,
            "trigger" => &mut self.trigger,
            "error" => &mut self.error,
            "command_name" => &mut self.command_name,
            _ => return,
        };
        *field = Some(value);
    }
}

/// An object whose keys are all different (serde's own check covers only
/// the fields a struct names, and only after a dialect renamed them).
struct DistinctKeys;

impl<'de> Deserialize<'de> for DistinctKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = DistinctKeys;

            fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                formatter.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DistinctKeys, A::Error> {
                let mut seen = std::collections::HashSet::new();
                while let Some(key) = map.next_key::<String>()? {
                    if !seen.insert(key.clone()) {
                        return Err(serde::de::Error::custom(format_args!(
                            "duplicate field `{key}`"
                        )));
                    }
                    map.next_value::<IgnoredAny>()?;
                }
                Ok(DistinctKeys)
            }
        }
        deserializer.deserialize_map(Keys)
    }
}

/// A `T` read only from an object (a derived struct would also read a
/// list, field by field in order).
pub(super) struct ObjectOnly<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Fields<T> {
            type Value = T;

            fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                formatter.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map))
            }
        }
        deserializer
            .deserialize_map(Fields(std::marker::PhantomData))
            .map(ObjectOnly)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_of_another_type_are_absent_and_a_null_input_is_kept() {
        let payload = TestPayload::of(
            &json!({
                "prompt": 5, "stop_hook_active": true, "tool_input": null, "source": "resume"
            })
            .to_string(),
            &[],
        );
        assert_eq!(payload.prompt, None);
        assert_eq!(payload.stop_hook_active, Some(true));
        assert_eq!(payload.tool_input, Some(Value::Null));
        assert_eq!(payload.tool_response, None);
        assert_eq!(payload.source.as_deref(), Some("resume"));
        assert_eq!(TestPayload::of("[1]", &[]).source, None);
    }

    #[test]
    fn only_an_object_has_fields() {
        // A list is not read field by field.
        assert_eq!(TestPayload::of(r#"["s1", "Bash"]"#, &[]).session_id, None);
        assert!(matches!(
            TestPayload::read(r#"["s1", "Bash"]"#, &[]),
            Err(PayloadError::NotAnObject)
        ));
        assert!(matches!(
            TestPayload::read("3", &[]),
            Err(PayloadError::NotAnObject)
        ));
        let Err(PayloadError::Syntax(error)) = TestPayload::read("{\n \"a\": ,}", &[]) else {
            panic!("not a syntax error");
        };
        assert_eq!(error.to_string(), "expected value at line 2 column 7");
        let read = TestPayload::read(
            r#"{"session_id": "s1", "tool_input": {"command": "ls"}}"#,
            &[],
        );
        let Ok(mut payload) = read else {
            panic!("not read");
        };
        assert_eq!(payload.session_id.as_deref(), Some("s1"));
        assert_eq!(payload.tool_input, Some(json!({"command": "ls"})));
        payload.set_flag("trigger", "manual".to_owned());
        payload.set_flag("unknown", "x".to_owned());
        assert_eq!(payload.trigger.as_deref(), Some("manual"));
    }

    #[test]
    fn a_key_given_twice_is_an_error_whatever_its_name() {
        for text in [
            r#"{"tool_input": {}, "tool_input": {}}"#,
            r#"{"toolArgs": {}, "toolArgs": {}}"#,
        ] {
            let Err(PayloadError::Fields(error)) = TestPayload::read(text, &[]) else {
                panic!("{text}: read");
            };
            assert!(error.to_string().starts_with("duplicate field"), "{error}");
        }
    }
}
