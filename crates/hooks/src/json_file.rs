//! Hook configuration files in JSON, as every dialect reads them: through
//! the session's reader (each file read from disk once), a syntax error
//! named by line and column, and the value conversions entry parsers
//! share (`env` objects, arguments given as any JSON).

use std::path::Path;

use dsh_files::ConfigFiles;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::position::without_position;

/// `message at line L column C` for a JSON syntax error.
pub fn syntax_message(error: &serde_json::Error) -> String {
    format!(
        "{} at line {} column {}",
        without_position(error),
        error.line(),
        error.column()
    )
}

/// A hook file that exists but cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JsonFileError {
    /// It could not be read.
    #[error("{0}")]
    Read(std::io::Error),
    /// It is not JSON (the message names line and column).
    #[error("Invalid JSON: {0}")]
    Syntax(String),
}

/// Reads `path` as a `T`: `None` when it does not exist. Its text goes
/// through `prepare` first (a dialect that allows comments strips them;
/// `None`: no document, read as `T::default()`). Only a syntax error is an
/// error: JSON that is not an object, or not a `T`, reads as
/// `T::default()`.
pub fn read_as<T: DeserializeOwned + Default>(
    files: &ConfigFiles,
    path: &Path,
    prepare: impl FnOnce(String) -> Option<String>,
) -> Result<Option<T>, JsonFileError> {
    let Some(text) = files.read_if_exists(path).map_err(JsonFileError::Read)? else {
        return Ok(None);
    };
    let Some(text) = prepare(text) else {
        return Ok(Some(T::default()));
    };
    // Parsed whole first: a syntax error is an error, a shape is not.
    let doc: Value = serde_json::from_str(&text)
        .map_err(|error| JsonFileError::Syntax(syntax_message(&error)))?;
    Ok(Some(match doc.is_object() {
        true => T::deserialize(doc).unwrap_or_default(),
        false => T::default(),
    }))
}

/// A JSON value as a string: strings as they are, others as JSON text.
pub fn text(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

/// An `env` object's pairs in file order, values as [`text`]; anything
/// else is no variables.
pub fn env_pairs(value: Option<&Value>) -> Vec<(String, String)> {
    value
        .and_then(Value::as_object)
        .map(|env| env.iter().map(|(k, v)| (k.clone(), text(v))).collect())
        .unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn env_values_keep_file_order_and_become_text() {
        let env = json!({"B": "x", "A": 3, "C": true});
        assert_eq!(
            env_pairs(Some(&env)),
            [("B", "x"), ("A", "3"), ("C", "true")].map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
        assert!(env_pairs(Some(&json!([1]))).is_empty());
        assert!(env_pairs(None).is_empty());
    }

    #[derive(Debug, Default, serde::Deserialize, PartialEq)]
    #[serde(default)]
    struct Doc {
        a: u8,
    }

    #[test]
    fn a_missing_file_is_none_a_broken_one_names_its_position_a_shape_is_default() {
        let dir = tempfile::tempdir().unwrap();
        let files = ConfigFiles::new();
        let read = |name: &str, text: Option<&str>| {
            let path = dir.path().join(name);
            if let Some(text) = text {
                fs_err::write(&path, text).unwrap();
            }
            read_as::<Doc>(&files, &path, |text| (!text.is_empty()).then_some(text))
        };
        assert!(read("absent.json", None).unwrap().is_none());
        let error = read("broken.json", Some("{\n  \"a\": ,\n}")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "Invalid JSON: expected value at line 2 column 8"
        );
        assert_eq!(
            read("ok.json", Some(r#"{"a": 2}"#)).unwrap(),
            Some(Doc { a: 2 })
        );
        for (name, text) in [
            ("array.json", "[1]"),
            ("shape.json", r#"{"a": "x"}"#),
            ("blank.json", ""),
        ] {
            assert_eq!(
                read(name, Some(text)).unwrap(),
                Some(Doc::default()),
                "{name}"
            );
        }
    }
}
