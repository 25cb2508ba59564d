//! A small JSON Schema validator for the subset tool schemas use.
//!
//! Tool arguments are validated before any policy sees them, and again after
//! a hook rewrites them. The subset: `type` (string, integer, number,
//! boolean, array, object, null, or a list of them), `properties`,
//! `required`, `additionalProperties: false`, `enum`, `items`, `minimum`,
//! `maximum`. Anything else in a schema is ignored.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, IgnoredAny, MapAccess};
use serde_json::Value;

use crate::describe::lenient;
use crate::map_or::{FromMap, MapOr};

/// Checks `value` against `schema`; the error names the JSON path at fault.
/// The schema is read leniently: a keyword of another shape is
/// ignored, as is a schema that is not an object.
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    let schema = Schema::deserialize(schema).unwrap_or_default();
    check(&schema, value, "$")
}

/// One (sub)schema: the keywords the validator checks, when it is an
/// object. A schema that is not an object checks nothing.
#[derive(Debug, Default)]
struct Schema(Keywords);

/// The keywords as written, each read leniently: a keyword of another
/// shape than the subset expects is absent.
#[derive(Debug, Default, Deserialize)]
struct Keywords {
    #[serde(rename = "type", default, deserialize_with = "lenient")]
    types: Option<Types>,
    /// `enum`: the allowed values (any JSON).
    #[serde(rename = "enum", default, deserialize_with = "lenient")]
    allowed: Option<Vec<Value>>,
    #[serde(default, deserialize_with = "lenient")]
    minimum: Option<f64>,
    #[serde(default, deserialize_with = "lenient")]
    maximum: Option<f64>,
    /// `None` when absent or not an object.
    #[serde(default, deserialize_with = "lenient")]
    properties: Option<BTreeMap<String, Schema>>,
    /// The names given as text count.
    #[serde(default, deserialize_with = "lenient")]
    required: Option<Vec<Text>>,
    /// Only `false` closes the object.
    #[serde(rename = "additionalProperties", default, deserialize_with = "lenient")]
    additional_properties: Option<bool>,
    #[serde(default)]
    items: Option<Box<Schema>>,
}

/// `type`: one name, or a list of them (entries that are not text never
/// match).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Types {
    One(String),
    Any(Vec<Text>),
}

/// A list entry: text, or anything else (not kept).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Text {
    Text(String),
    Other(IgnoredAny),
}

/// The entries of `list` that are text.
fn texts(list: &[Text]) -> impl Iterator<Item = &str> {
    list.iter().filter_map(|entry| match entry {
        Text::Text(text) => Some(text.as_str()),
        Text::Other(_) => None,
    })
}

impl<'de> Deserialize<'de> for Schema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MapOr(PhantomData))
    }
}

impl FromMap for Schema {
    const EXPECTING: &'static str = "a JSON Schema";

    fn from_map<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        Keywords::deserialize(MapAccessDeserializer::new(map)).map(Schema)
    }

    fn other() -> Self {
        Schema::default()
    }
}

fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// The type name `value` has: the first of the names that matches it
/// (`integer` before `number`).
fn kind(value: &Value) -> &'static str {
    const NAMES: [&str; 7] = [
        "null", "boolean", "integer", "number", "string", "array", "object",
    ];
    NAMES
        .into_iter()
        .find(|name| type_matches(name, value))
        .unwrap_or("object")
}

/// A list of type names as the validator has always shown it (the list's
/// debug form: `[String("a"), String("b")]`).
fn shown_names(names: &[Text]) -> String {
    let shown: Vec<String> = texts(names)
        .map(|name| format!("String({name:?})"))
        .collect();
    format!("[{}]", shown.join(", "))
}

fn check(Schema(schema): &Schema, value: &Value, path: &str) -> Result<(), String> {
    match &schema.types {
        Some(Types::One(name)) if !type_matches(name, value) => {
            return Err(format!("{path}: expected {name}, got {}", kind(value)));
        }
        Some(Types::Any(names)) if !texts(names).any(|name| type_matches(name, value)) => {
            return Err(format!(
                "{path}: expected one of {}, got {}",
                shown_names(names),
                kind(value)
            ));
        }
        Some(Types::One(_) | Types::Any(_)) | None => {}
    }
    if let Some(allowed) = &schema.allowed
        && !allowed.contains(value)
    {
        let allowed = serde_json::to_string(allowed).unwrap_or_default();
        return Err(format!("{path}: {value} is not one of {allowed}"));
    }
    if let Some(number) = value.as_f64() {
        if let Some(min) = schema.minimum
            && number < min
        {
            return Err(format!("{path}: {number} is below the minimum {min}"));
        }
        if let Some(max) = schema.maximum
            && number > max
        {
            return Err(format!("{path}: {number} is above the maximum {max}"));
        }
    }
    if let Value::Object(fields) = value {
        for name in texts(schema.required.as_deref().unwrap_or_default()) {
            if !fields.contains_key(name) {
                return Err(format!("{path}: missing required field `{name}`"));
            }
        }
        for (name, field) in fields {
            match schema.properties.as_ref().and_then(|props| props.get(name)) {
                Some(field_schema) => check(field_schema, field, &format!("{path}.{name}"))?,
                None if schema.additional_properties == Some(false) => {
                    return Err(format!("{path}: unknown field `{name}`"));
                }
                None => {}
            }
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (value, &schema.items) {
        for (index, item) in items.iter().enumerate() {
            check(item_schema, item, &format!("{path}[{index}]"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_path_at_fault() {
        let schema = json!({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false});
        assert_eq!(validate(&schema, &json!({"a": 1})), Ok(()));
        assert_eq!(
            validate(&schema, &json!({"a": "x"})).unwrap_err(),
            "$.a: expected integer, got string"
        );
        assert_eq!(
            validate(&schema, &json!({})).unwrap_err(),
            "$: missing required field `a`"
        );
        assert_eq!(
            validate(&schema, &json!({"a": 1, "b": 2})).unwrap_err(),
            "$: unknown field `b`"
        );
        assert_eq!(
            validate(&schema, &json!([])).unwrap_err(),
            "$: expected object, got array"
        );
    }

    #[test]
    fn messages_for_lists_enums_and_bounds_keep_their_text() {
        let schema = json!({"properties": {
            "kind": {"type": ["string", "null"]},
            "mode": {"enum": ["a", 1, null]},
            "size": {"type": "integer", "minimum": 1, "maximum": 9.5},
            "tags": {"type": "array", "items": {"type": "string"}},
        }});
        let fails = |value: Value| validate(&schema, &value).unwrap_err();
        assert_eq!(
            fails(json!({"kind": 3})),
            r#"$.kind: expected one of [String("string"), String("null")], got integer"#
        );
        assert_eq!(
            fails(json!({"mode": "b"})),
            r#"$.mode: "b" is not one of ["a",1,null]"#
        );
        assert_eq!(
            fails(json!({"size": 0})),
            "$.size: 0 is below the minimum 1"
        );
        assert_eq!(
            fails(json!({"size": 10})),
            "$.size: 10 is above the maximum 9.5"
        );
        assert_eq!(
            fails(json!({"tags": ["x", 2]})),
            "$.tags[1]: expected string, got integer"
        );
        assert_eq!(
            validate(
                &schema,
                &json!({"kind": null, "mode": 1, "size": 3, "tags": [], "x": 1})
            ),
            Ok(())
        );
    }

    #[test]
    fn every_kind_is_named() {
        let schema = json!({"type": "boolean"});
        for (value, kind) in [
            (json!(null), "null"),
            (json!(1), "integer"),
            (json!(-1), "integer"),
            (json!(1.5), "number"),
            (json!("x"), "string"),
            (json!([]), "array"),
            (json!({}), "object"),
        ] {
            assert_eq!(
                validate(&schema, &value).unwrap_err(),
                format!("$: expected boolean, got {kind}")
            );
        }
        let schema = json!({"type": "null"});
        assert_eq!(
            validate(&schema, &json!(true)).unwrap_err(),
            "$: expected null, got boolean"
        );
    }

    #[test]
    fn keywords_of_another_shape_are_ignored_and_leave_the_others() {
        // Not an object: checks nothing.
        for schema in [json!(true), json!(["string"]), json!("object"), json!(null)] {
            assert_eq!(validate(&schema, &json!({"a": 1})), Ok(()));
        }
        let schema = json!({
            "type": 7,
            "enum": "a",
            "minimum": "1",
            "required": ["a", 2],
            "additionalProperties": "no",
            "properties": {"a": ["integer"], "b": {"type": "string", "maximum": true}},
            "items": 3,
        });
        assert_eq!(validate(&schema, &json!({"a": "x", "c": 0})), Ok(()));
        assert_eq!(
            validate(&schema, &json!({})).unwrap_err(),
            "$: missing required field `a`"
        );
        assert_eq!(
            validate(&schema, &json!({"a": 1, "b": 2})).unwrap_err(),
            "$.b: expected string, got integer"
        );
        // Properties that are not an object: every field is unknown to a closed schema.
        let closed = json!({"properties": [1], "additionalProperties": false});
        assert_eq!(
            validate(&closed, &json!({"a": 1})).unwrap_err(),
            "$: unknown field `a`"
        );
        // A type list with entries that are not names: those never match.
        let listed = json!({"type": [1, "string"]});
        assert_eq!(validate(&listed, &json!("x")), Ok(()));
    }
}
