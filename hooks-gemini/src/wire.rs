//! Helpers for reading a hook's JSON output the way Gemini's JavaScript
//! reads it: a key is looked up on an object only (an array never stands
//! for an object, as serde's derived readers would let it), and a key of
//! the wrong type counts as absent without spoiling its neighbours.

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer};
use serde_json::Value;

/// `deserialize_with` for an `Option<T>` key (with `#[serde(default)]`)
/// whose value Gemini reads as an object: anything else, or an object
/// that is not a `T`, reads as `None`.
pub(crate) fn object<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    Ok(as_object(Value::deserialize(deserializer)?))
}

/// `deserialize_with` for an array key of which Gemini reads only the
/// first element, as an object (`candidates[0]`).
pub(crate) fn first_object<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let Value::Array(items) = Value::deserialize(deserializer)? else {
        return Ok(None);
    };
    Ok(items.into_iter().next().and_then(as_object))
}

fn as_object<T: DeserializeOwned>(value: Value) -> Option<T> {
    if value.is_object() {
        T::deserialize(value).ok()
    } else {
        None
    }
}

/// One element of a list read element by element: `None` when the
/// element is not a `T` (the others still count).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Each<T>(pub Option<T>);

impl<'de, T: DeserializeOwned> Deserialize<'de> for Each<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        dsh_hooks::wire::lenient(deserializer).map(Each)
    }
}

/// A part of a model content: a string, or an object whose `text` is its
/// text; any other part (a function call, …) carries no text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct TextPart(pub Option<String>);

impl<'de> Deserialize<'de> for TextPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Texted {
            #[serde(default, deserialize_with = "dsh_hooks::wire::lenient")]
            text: Option<String>,
        }
        let part = Value::deserialize(deserializer)?;
        let text = match part.as_str() {
            Some(text) => Some(text.to_owned()),
            None => as_object::<Texted>(part).and_then(|part| part.text),
        };
        Ok(TextPart(text))
    }
}

/// An element Gemini reads as an object: `None` when it is not one, or
/// not a `T`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Obj<T>(pub Option<T>);

impl<'de, T: DeserializeOwned> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Obj(as_object(Value::deserialize(deserializer)?)))
    }
}

pub(crate) use dsh_hooks::wire::Entries;
