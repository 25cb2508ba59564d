//! Helpers for reading a hook's JSON output the way Gemini's JavaScript
//! reads it: a key is looked up on an object only (an array never stands
//! for an object, as serde's derived readers would let it), and a key of
//! the wrong type counts as absent without spoiling its neighbours (each
//! read through the shared [`dsh_hooks::wire::lenient`]).

use dsh_hooks::wire::lenient;
use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, IgnoredAny};

/// A `T` read from an object only: flattening makes serde read it as a map,
/// so a JSON array is not read into `T` field by field.
#[derive(Debug, Deserialize)]
struct ObjectOf<T> {
    #[serde(flatten)]
    inner: T,
}

/// `deserialize_with` for an `Option<T>` key (with `#[serde(default)]`)
/// whose value Gemini reads as an object: anything else, or an object
/// that is not a `T`, reads as `None`.
pub(crate) fn object<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    Ok(lenient::<D, ObjectOf<T>>(deserializer)?.map(|object| object.inner))
}

/// A `hookSpecificOutput` key that Gemini's merge of several runs copies
/// over the earlier runs' whatever its value, `null` included (it spreads
/// each run's `hookSpecificOutput` in configuration order): absent, or
/// present with its value read as a `T` object (`None`: not one).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Keyed<T> {
    /// The run's output has no such key.
    #[default]
    Absent,
    /// The key is there; `None` when its value is not a `T` object.
    Present(Option<T>),
}

impl<T> Keyed<T> {
    /// The object the run gave, if any.
    pub fn given(&self) -> Option<&T> {
        match self {
            Keyed::Present(Some(given)) => Some(given),
            Keyed::Present(None) | Keyed::Absent => None,
        }
    }

    /// `f` over the object.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Keyed<U> {
        match self {
            Keyed::Absent => Keyed::Absent,
            Keyed::Present(given) => Keyed::Present(given.map(f)),
        }
    }
}

/// `deserialize_with` for a [`Keyed`] key (with `#[serde(default)]`, so
/// an absent key is [`Keyed::Absent`]).
pub(crate) fn keyed<'de, D, T>(deserializer: D) -> Result<Keyed<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    object(deserializer).map(Keyed::Present)
}

/// `deserialize_with` for an array key of which Gemini reads only the
/// first element, as an object (`candidates[0]`).
pub(crate) fn first_object<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let items = lenient::<D, Vec<Obj<T>>>(deserializer)?;
    Ok(items
        .and_then(|items| items.into_iter().next())
        .and_then(|Obj(first)| first))
}

/// One element of a list read element by element: `None` when the
/// element is not a `T` (the others still count).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Each<T>(pub Option<T>);

impl<'de, T: DeserializeOwned> Deserialize<'de> for Each<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        lenient(deserializer).map(Each)
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
            #[serde(default, deserialize_with = "lenient")]
            text: Option<String>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Part {
            Text(String),
            Object(ObjectOf<Texted>),
            Other(IgnoredAny),
        }
        Ok(TextPart(match Part::deserialize(deserializer)? {
            Part::Text(text) => Some(text),
            Part::Object(part) => part.inner.text,
            Part::Other(_) => None,
        }))
    }
}

/// An element Gemini reads as an object: `None` when it is not one, or
/// not a `T`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Obj<T>(pub Option<T>);

impl<'de, T: DeserializeOwned> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        object(deserializer).map(Obj)
    }
}

pub(crate) use dsh_hooks::wire::Entries;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq, Deserialize)]
    struct Pair {
        #[serde(default, deserialize_with = "lenient")]
        a: Option<String>,
        #[serde(default, deserialize_with = "lenient")]
        b: Option<u8>,
    }

    #[derive(Debug, Default, Deserialize)]
    struct Doc {
        #[serde(default, deserialize_with = "object")]
        one: Option<Pair>,
        #[serde(default, deserialize_with = "first_object")]
        first: Option<Pair>,
        #[serde(default)]
        parts: Vec<TextPart>,
        #[serde(default)]
        each: Vec<Obj<Pair>>,
    }

    fn pair(a: &str, b: Option<u8>) -> Option<Pair> {
        Some(Pair {
            a: Some(a.to_owned()),
            b,
        })
    }

    /// Objects count only as objects, a wrong-typed key is absent, and
    /// nothing here fails the document: the same from text and from a
    /// parsed value.
    #[test]
    fn objects_are_read_as_objects_only_and_spoil_nothing() {
        let read = |text: &str| {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            let from_value = Doc::deserialize(&value).unwrap();
            let from_text: Doc = serde_json::from_str(text).unwrap();
            assert_eq!(format!("{from_value:?}"), format!("{from_text:?}"));
            from_text
        };
        let doc = read(
            r#"{"one": {"a": "x", "b": "no"}, "first": [{"a": "y", "b": 2}, 3],
                "parts": ["t", {"text": "u"}, {"text": 1}, ["v"], 4, {"functionCall": {}}],
                "each": [{"a": "z"}, ["z", 1], "z", {"a": 1}]}"#,
        );
        assert_eq!(doc.one, pair("x", None));
        assert_eq!(doc.first, pair("y", Some(2)));
        let texts: Vec<Option<&str>> = doc.parts.iter().map(|p| p.0.as_deref()).collect();
        assert_eq!(texts, [Some("t"), Some("u"), None, None, None, None]);
        let each: Vec<Option<Pair>> = doc.each.into_iter().map(|o| o.0).collect();
        assert_eq!(
            each,
            [pair("z", None), None, None, Some(Pair { a: None, b: None })]
        );
        // An array never stands for an object, field by field.
        let doc = read(r#"{"one": ["x", 1], "first": [["y", 2]]}"#);
        assert_eq!((doc.one, doc.first), (None, None));
        let doc = read(r#"{"one": "x", "first": {"a": "y"}}"#);
        assert_eq!((doc.one, doc.first), (None, None));
        let doc = read(r#"{"first": [3, {"a": "y"}]}"#);
        assert_eq!(doc.first, None);
    }
}
