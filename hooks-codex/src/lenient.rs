//! Fields read leniently: a value of another shape reads as absent instead
//! of failing what holds it (a payload is built even from arguments a tool's
//! schema would reject; Codex skips a config entry it cannot read).

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny};

/// A value as it was read: the wanted shape, or anything else.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum Lenient<T> {
    /// The wanted shape.
    Read(T),
    /// Anything else (not kept).
    Other(IgnoredAny),
}

impl<T> Lenient<T> {
    /// The value, when it had the wanted shape.
    pub(crate) fn read(self) -> Option<T> {
        match self {
            Lenient::Read(value) => Some(value),
            Lenient::Other(_) => None,
        }
    }
}

/// `deserialize_with` for an `Option` field (with `#[serde(default)]`): a
/// value of another shape is `None`.
pub(crate) fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Lenient::deserialize(deserializer).map(Lenient::read)
}
