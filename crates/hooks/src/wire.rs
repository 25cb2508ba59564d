//! Helpers for the dialects' output wire types: hook tools read each key
//! of a hook's JSON on its own, so a key of the wrong type counts as
//! absent instead of spoiling the whole document.

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer};

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

/// Any JSON, `null` included, for a key whose mere presence counts
/// (`Option<Present>` with `#[serde(default)]`: absent is `None`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct Present(pub serde_json::Value);

#[cfg(test)]
mod tests {
    use super::*;

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
