//! Typed views of a block: the code that owns a file kind declares the
//! keys it reads as a serde struct and reads it with
//! [`crate::Frontmatter::read`]. The readers here are lenient, as Claude
//! Code is with hand-written files: any YAML value reads into them, and a
//! value of a shape the key does not take reads as absent (or, for
//! [`ListField`], as [`ListField::NotAList`], so the caller can say so).
//!
//! ```
//! #[derive(Default, serde::Deserialize)]
//! #[serde(default)]
//! struct Command {
//!     #[serde(deserialize_with = "dsh_frontmatter::text")]
//!     description: Option<String>,
//!     #[serde(rename = "allowed-tools", deserialize_with = "dsh_frontmatter::list")]
//!     allowed_tools: Vec<String>,
//! }
//! let document = dsh_frontmatter::parse("---\ndescription: x\nallowed-tools: Bash, Read\n---\n")?;
//! let command: Command = document.frontmatter.unwrap_or_default().read()?;
//! assert_eq!(command.description.as_deref(), Some("x"));
//! assert_eq!(command.allowed_tools, ["Bash", "Read"]);
//! # Ok::<(), dsh_frontmatter::FrontmatterError>(())
//! ```

use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A field's value as far as text and lists go.
enum Shape {
    /// `~`, or no value after the colon.
    Null,
    /// A string, as written.
    Text(String),
    /// A number or boolean, as written.
    Scalar(String),
    /// A list: each item's text, `None` for a null or a nested list or
    /// mapping.
    List(Vec<Option<String>>),
    /// A mapping (its content is not read).
    Mapping,
}

impl Shape {
    /// The field as one text: a string as it is, a number or boolean as
    /// written, a list of scalars as `[a, b]` (what `argument-hint:
    /// [message]` means to the person who wrote it). A null, a mapping or a
    /// list holding anything but scalars has no text.
    fn text(self) -> Option<String> {
        match self {
            Shape::Text(text) | Shape::Scalar(text) => Some(text),
            Shape::List(items) => {
                let items: Option<Vec<String>> = items.into_iter().collect();
                items.map(|items| format!("[{}]", items.join(", ")))
            }
            Shape::Null | Shape::Mapping => None,
        }
    }

    /// The field as a list of texts: a list's scalar items, or a string
    /// split on commas (`allowed-tools: Bash, Read`); a number or boolean
    /// is one item; a null or a mapping none.
    fn list(self) -> Vec<String> {
        match self {
            Shape::Null | Shape::Mapping => Vec::new(),
            Shape::List(items) => items.into_iter().flatten().collect(),
            Shape::Text(text) => text
                .split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .map(str::to_owned)
                .collect(),
            Shape::Scalar(text) => vec![text],
        }
    }
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E>(self, flag: bool) -> Result<Shape, E> {
        Ok(Shape::Scalar(flag.to_string()))
    }

    fn visit_i64<E>(self, number: i64) -> Result<Shape, E> {
        Ok(Shape::Scalar(number.to_string()))
    }

    fn visit_u64<E>(self, number: u64) -> Result<Shape, E> {
        Ok(Shape::Scalar(number.to_string()))
    }

    fn visit_f64<E>(self, number: f64) -> Result<Shape, E> {
        // Written as JSON writes it (`0.5`, `1e20`), as the block's numbers
        // always were.
        Ok(Shape::Scalar(
            serde_json::Number::from_f64(number)
                .map_or_else(|| number.to_string(), |number| number.to_string()),
        ))
    }

    fn visit_str<E>(self, text: &str) -> Result<Shape, E> {
        Ok(Shape::Text(text.to_owned()))
    }

    fn visit_string<E>(self, text: String) -> Result<Shape, E> {
        Ok(Shape::Text(text))
    }

    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Null)
    }

    fn visit_none<E>(self) -> Result<Shape, E> {
        Ok(Shape::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Shape, D::Error> {
        Shape::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Shape>()? {
            items.push(match item {
                Shape::Text(text) | Shape::Scalar(text) => Some(text),
                Shape::Null | Shape::List(_) | Shape::Mapping => None,
            });
        }
        Ok(Shape::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Shape::Mapping)
    }
}

/// Reads a field as text, for `#[serde(deserialize_with)]` on an
/// `Option<String>`: a string as it is, a number or boolean as written, a
/// list of scalars as `[a, b]`; a null, a mapping or a nested list reads as
/// `None`. Never fails.
pub fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(Shape::deserialize(deserializer)?.text())
}

/// Reads a field as a list of texts, for `#[serde(deserialize_with)]` on a
/// `Vec<String>`: a list's scalar items, a string split on commas
/// (`allowed-tools: Bash, Read`), a number or boolean as one item; a null
/// or a mapping is empty. Never fails.
pub fn list<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    Ok(Shape::deserialize(deserializer)?.list())
}

/// A field that should be a list (or a comma-separated string), keeping
/// whether it was one, for a caller that refuses anything else.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ListField {
    /// Missing, or null.
    #[default]
    Absent,
    /// A list or a string: its items, as [`list`] reads them.
    Items(Vec<String>),
    /// A number, a boolean or a mapping.
    NotAList,
}

impl<'de> Deserialize<'de> for ListField {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Shape::deserialize(deserializer)? {
            Shape::Null => ListField::Absent,
            shape @ (Shape::Text(_) | Shape::List(_)) => ListField::Items(shape.list()),
            Shape::Scalar(_) | Shape::Mapping => ListField::NotAList,
        })
    }
}
