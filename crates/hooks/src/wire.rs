//! Helpers for the dialects' wire types (hook outputs and hook files):
//! the tools read each key of a hook's JSON on its own, so a key of the
//! wrong type counts as absent instead of spoiling the whole document, and
//! they keep an object's keys in the order the file gives them.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, MapAccess, Visitor};

/// A JSON value's type by its JSON name (`null`, `boolean`, `number`,
/// `string`, `array`, `object`), as the tools' own input errors name it
/// (Claude Code's schema errors, Copilot's `Expected JSON object but got …`).
pub fn json_type(value: &serde_json::Value) -> &'static str {
    if value.is_null() {
        "null"
    } else if value.is_boolean() {
        "boolean"
    } else if value.is_number() {
        "number"
    } else if value.is_string() {
        "string"
    } else if value.is_array() {
        "array"
    } else {
        "object"
    }
}

/// `deserialize_with` for an `Option<T>` key (with `#[serde(default)]`): a
/// value that is not a `T` reads as `None`.
pub fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let raw = serde_json::Value::deserialize(deserializer)?;
    Ok(T::deserialize(raw).ok())
}

/// Any JSON, for a key whose mere presence counts. As
/// `Lenient<Present>` a present `null` is kept (`Present(Null)`); as
/// `Option<Present>` with `#[serde(default)]`, serde reads a `null` as
/// absent (`None`), the same as a missing key. Each field picks the one its
/// tool shows: Copilot CLI 1.0.102 puts a preToolUse `modifiedArgs: null`
/// in place of the arguments (`Lenient`), but reads a PascalCase
/// `hookSpecificOutput.updatedInput: null` as no answer (`Option`)
/// (fixtures/copilot-null/).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct Present(pub serde_json::Value);

/// A JSON object whose every value reads as a `T`, its keys kept in the
/// file's order (hook events, `env` names: the tools run and show them in
/// that order). A key written twice keeps its first place and its last
/// value, as a parsed document does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entries<T>(pub Vec<(String, T)>);

impl<T> Default for Entries<T> {
    fn default() -> Self {
        Entries(Vec::new())
    }
}

impl<T> Entries<T> {
    /// The entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &T)> {
        self.0.iter().map(|(key, value)| (key, value))
    }

    /// The entry of `key`.
    pub fn get(&self, key: &str) -> Option<&T> {
        self.iter()
            .find(|(name, _)| *name == key)
            .map(|(_, value)| value)
    }

    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(key, _)| key)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Entries<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(InOrder(PhantomData))
    }
}

/// Reads an object into [`Entries`].
struct InOrder<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for InOrder<T> {
    type Value = Entries<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries<T>, A::Error> {
        let mut entries: Vec<(String, T)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, T>()? {
            match entries.iter_mut().find(|(known, _)| *known == key) {
                Some(slot) => slot.1 = value,
                None => entries.push((key, value)),
            }
        }
        Ok(Entries(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_present_null_is_kept_by_lenient_and_absent_as_an_option() {
        #[derive(Debug, Default, Deserialize)]
        #[serde(default)]
        struct Doc {
            kept: crate::lenient::Lenient<Present>,
            optional: Option<Present>,
        }
        let doc: Doc = serde_json::from_str(r#"{"kept": null, "optional": null}"#).unwrap();
        assert_eq!(doc.kept.0, Some(Present(serde_json::Value::Null)));
        assert_eq!(doc.optional, None);
    }

    #[test]
    fn entries_keep_the_file_order_and_a_repeated_key_its_first_place() {
        let read: Entries<u8> =
            serde_json::from_str(r#"{"b": 1, "a": 2, "b": 3}"#).unwrap_or_default();
        assert_eq!(read.0, vec![("b".to_owned(), 3), ("a".to_owned(), 2)]);
        assert_eq!(read.get("a"), Some(&2));
        assert_eq!(read.keys().collect::<Vec<_>>(), ["b", "a"]);
        assert!(serde_json::from_str::<Entries<u8>>("[1]").is_err());
    }

    #[derive(Debug, Default, Deserialize, PartialEq)]
    struct Doc {
        #[serde(default, deserialize_with = "lenient")]
        reason: Option<String>,
        #[serde(default, deserialize_with = "lenient")]
        stop: Option<bool>,
    }

    #[test]
    fn a_key_of_the_wrong_type_reads_as_absent_and_spoils_nothing_else() {
        let doc: Doc = serde_json::from_str(r#"{"reason": 3, "stop": true}"#).unwrap_or_default();
        assert_eq!(
            doc,
            Doc {
                reason: None,
                stop: Some(true)
            }
        );
        let doc: Doc = serde_json::from_str("{}").unwrap_or_default();
        assert_eq!(doc, Doc::default());
    }
}
