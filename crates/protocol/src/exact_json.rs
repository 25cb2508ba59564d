//! JSON text produced once and only ever written out again.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

/// JSON text produced once and only ever written out again, never
/// inspected: a hook's stdin as it was sent (`hook/invoked.input`). dsh
/// serializes a dialect's typed payload to this text once; the hook reads
/// these bytes and the log writes the same bytes, so the record is the
/// exact JSON sent. Compared by its text; `null` by default.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(transparent)]
pub struct ExactJson(Box<RawValue>);

impl ExactJson {
    /// `payload`, serialized as compact JSON. A payload that cannot be
    /// serialized (a map with non-string keys; dsh's payloads have none)
    /// is `null`.
    pub fn of(payload: &(impl Serialize + ?Sized)) -> Self {
        let raw = serde_json::value::to_raw_value(payload);
        ExactJson(raw.unwrap_or_else(|_| RawValue::NULL.to_owned()))
    }

    /// `text` as it is, if it is one JSON value.
    pub fn from_text(text: String) -> Result<Self, serde_json::Error> {
        RawValue::from_string(text).map(ExactJson)
    }

    /// The JSON text.
    pub fn text(&self) -> &str {
        self.0.get()
    }

    /// The text read as a `T` (for a reader of the log, not the writer).
    pub fn read<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.text())
    }
}

impl PartialEq for ExactJson {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl std::fmt::Display for ExactJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

/// A log line's body reaches this field through serde's buffer (the body
/// is tagged by `type` and flattened into the line), from which no raw
/// text can be borrowed: it is read as JSON and written compactly again,
/// which for any JSON dsh wrote is the text it wrote (keys keep their
/// order; `line::tests` checks every recorded line).
impl<'de> Deserialize<'de> for ExactJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let read = serde_json::Value::deserialize(deserializer)?;
        Ok(ExactJson::of(&read))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Payload {
        b: u8,
        a: &'static str,
    }

    /// The text is the payload's compact JSON in field order, and it is
    /// written out unchanged inside another document.
    #[test]
    fn the_text_is_written_as_it_was_produced() {
        let exact = ExactJson::of(&Payload { b: 1, a: "x\u{e9}" });
        assert_eq!(exact.text(), r#"{"b":1,"a":"xé"}"#);
        let doc = serde_json::to_string(&[("input", &exact)]).unwrap();
        assert_eq!(doc, r#"[["input",{"b":1,"a":"xé"}]]"#);
    }

    /// Read back from a tagged, flattened log body, it is the same text.
    #[test]
    fn it_reads_back_from_a_buffered_body() {
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        #[serde(tag = "type")]
        enum Body {
            Sent { input: ExactJson },
        }
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        struct Line {
            seq: u64,
            #[serde(flatten)]
            body: Body,
        }
        let line = r#"{"seq":1,"type":"Sent","input":{"z":[1,2.5,"\n"],"a":null}}"#;
        let read: Line = serde_json::from_str(line).unwrap();
        let Body::Sent { input } = &read.body;
        assert_eq!(input.text(), r#"{"z":[1,2.5,"\n"],"a":null}"#);
        assert_eq!(serde_json::to_string(&read).unwrap(), line);
        assert!(ExactJson::from_text("{".to_owned()).is_err());
    }
}
