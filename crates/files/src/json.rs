//! A JSON configuration file parsed once: its text and its document.

use std::sync::Arc;

use serde::de::DeserializeOwned;

/// Where a file's text stops being JSON: serde_json's explanation without
/// its position, and the 1-based position (consumers word their own
/// errors around it, as they did when each parsed the text itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonSyntax {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// serde_json's message, without " at line L column C".
    pub message: String,
}

impl std::fmt::Display for JsonSyntax {
    /// As serde_json words it: "MESSAGE at line L column C".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at line {} column {}",
            self.message, self.line, self.column
        )
    }
}

/// One JSON file of the session, parsed once ([`crate::ConfigFiles::json`]):
/// every consumer reads this document instead of parsing the text again.
#[derive(Debug, Clone)]
pub struct Json {
    text: Arc<str>,
    document: Result<Arc<serde_json::Value>, JsonSyntax>,
}

impl Json {
    /// Parses `text` (one parse; [`crate::ConfigFiles`] keeps the result).
    pub fn parse(text: impl Into<Arc<str>>) -> Json {
        let text: Arc<str> = text.into();
        let document = serde_json::from_str(&text)
            .map(Arc::new)
            .map_err(|error| syntax(&error));
        Json { text, document }
    }

    /// The text as read.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The parsed document, or where the text is not JSON.
    pub fn document(&self) -> Result<&serde_json::Value, &JsonSyntax> {
        self.document.as_deref()
    }

    /// The document as `T`. A document that is not a `T` is explained as
    /// serde_json explains it for the text (with its line and column: the
    /// text is parsed again for the message, on this error path only).
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match &self.document {
            Ok(document) => {
                T::deserialize(document.as_ref()).or_else(|_| serde_json::from_str(&self.text))
            }
            Err(_) => serde_json::from_str(&self.text),
        }
    }
}

fn syntax(error: &serde_json::Error) -> JsonSyntax {
    let text = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    JsonSyntax {
        line: error.line(),
        column: error.column(),
        message: text
            .strip_suffix(&suffix)
            .map_or(text.clone(), str::to_owned),
    }
}
