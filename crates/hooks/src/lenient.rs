//! [`Lenient`]: a key of a hook's JSON output (or of a dialect's settings)
//! read on its own, the way the tools' JavaScript reads it, as a field type.
//! A wire struct marked `#[serde(default)]` whose keys are `Lenient<T>`
//! needs no per-field attribute: a missing key, or one of the wrong type,
//! is `Lenient(None)` and spoils nothing else. (The per-field form is
//! [`crate::wire::lenient`].)

use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};

/// A key that is a `T`, or absent (missing, or not a `T`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Lenient<T>(pub Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::wire::lenient(deserializer).map(Lenient)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, Deserialize, PartialEq)]
    #[serde(default)]
    struct Doc {
        reason: Lenient<String>,
        stop: Lenient<bool>,
    }

    #[test]
    fn a_key_of_the_wrong_type_or_missing_reads_as_absent_and_spoils_nothing_else() {
        let doc: Doc = serde_json::from_str(r#"{"reason": 3, "stop": true}"#).unwrap();
        assert_eq!(doc.reason, Lenient(None));
        assert_eq!(doc.stop, Lenient(Some(true)));
        let doc: Doc = serde_json::from_str(r#"{"reason": "why", "stop": null}"#).unwrap();
        assert_eq!(doc.reason.0.as_deref(), Some("why"));
        assert_eq!(doc.stop, Lenient(None));
        let doc: Doc = serde_json::from_str("{}").unwrap();
        assert_eq!(doc, Doc::default());
    }
}
