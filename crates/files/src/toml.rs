//! A TOML configuration file parsed once: its text and its document.
//!
//! The document is the tree `toml` 0.8 builds on every `toml::from_str`
//! (toml_edit's, spans kept): each consumer deserializes its own typed view
//! from a copy of it, through the same deserializer `toml::from_str` uses,
//! so a syntax or shape error carries the same message, position and
//! rendered excerpt as when each consumer parsed the text itself.

use std::ops::Range;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use toml_edit::ImDocument;

/// Why a TOML file, or a typed view of it, could not be read: the error
/// `toml::from_str` gives for the same text and type.
#[derive(Clone, PartialEq, Eq)]
pub struct TomlError(toml_edit::de::Error);

impl TomlError {
    /// What the parser said, without position or excerpt.
    pub fn message(&self) -> &str {
        self.0.message()
    }

    /// The byte range of the text the error is about, when known.
    pub fn span(&self) -> Option<Range<usize>> {
        self.0.span()
    }
}

impl std::fmt::Display for TomlError {
    /// As toml words it: "TOML parse error at line L, column C", the
    /// line with a caret under the column, then the message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::fmt::Debug for TomlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.0, f)
    }
}

impl std::error::Error for TomlError {}

/// One TOML file of the session, parsed once ([`crate::ConfigFiles::toml`]):
/// every consumer reads its keys from this document instead of parsing the
/// text again.
#[derive(Clone)]
pub struct Toml {
    text: Arc<str>,
    document: Result<Arc<ImDocument<String>>, TomlError>,
}

impl Toml {
    /// Parses `text` (one parse; [`crate::ConfigFiles`] keeps the result).
    pub fn parse(text: impl Into<Arc<str>>) -> Toml {
        let text: Arc<str> = text.into();
        let document = ImDocument::parse(text.to_string())
            .map(Arc::new)
            .map_err(|error| TomlError(error.into()));
        Toml { text, document }
    }

    /// The text as read.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Where the text is not TOML, if it is not.
    pub fn syntax(&self) -> Option<&TomlError> {
        self.document.as_ref().err()
    }

    /// The document as `T`, or the error `toml::from_str::<T>` gives for
    /// the text (the syntax error, or where the document is not a `T`).
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, TomlError> {
        let document = self.document.as_ref().map_err(Clone::clone)?;
        let deserializer = toml_edit::de::Deserializer::from(ImDocument::clone(document));
        T::deserialize(deserializer).map_err(TomlError)
    }
}

impl std::fmt::Debug for Toml {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toml")
            .field("text", &self.text)
            .field("syntax", &self.syntax())
            .finish()
    }
}
