//! A small JSON Schema validator for the subset tool schemas use.
//!
//! Tool arguments are validated before any policy sees them, and again after
//! a hook rewrites them. The subset: `type` (string, integer, number,
//! boolean, array, object, null, or a list of them), `properties`,
//! `required`, `additionalProperties: false`, `enum`, `items`, `minimum`,
//! `maximum`. Anything else in a schema is ignored.

use serde_json::Value;

/// Checks `value` against `schema`; the error names the JSON path at fault.
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    check(schema, value, "$")
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

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn check(schema: &Value, value: &Value, path: &str) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        return Ok(());
    };
    match schema.get("type") {
        Some(Value::String(name)) if !type_matches(name, value) => {
            return Err(format!("{path}: expected {name}, got {}", kind(value)));
        }
        Some(Value::Array(names)) => {
            let ok = names
                .iter()
                .filter_map(Value::as_str)
                .any(|name| type_matches(name, value));
            if !ok {
                return Err(format!(
                    "{path}: expected one of {names:?}, got {}",
                    kind(value)
                ));
            }
        }
        _ => {}
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        return Err(format!(
            "{path}: {value} is not one of {}",
            Value::Array(allowed.clone())
        ));
    }
    if let Some(number) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && number < min
        {
            return Err(format!("{path}: {number} is below the minimum {min}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && number > max
        {
            return Err(format!("{path}: {number} is above the maximum {max}"));
        }
    }
    if let Value::Object(fields) = value {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !fields.contains_key(name) {
                    return Err(format!("{path}: missing required field `{name}`"));
                }
            }
        }
        for (name, field) in fields {
            match properties.and_then(|props| props.get(name)) {
                Some(field_schema) => check(field_schema, field, &format!("{path}.{name}"))?,
                None => {
                    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                        return Err(format!("{path}: unknown field `{name}`"));
                    }
                }
            }
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (value, schema.get("items")) {
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
}
