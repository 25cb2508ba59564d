//! Hook configuration files in JSON, as every dialect reads them: through
//! the session's reader (each file read from disk once), a syntax error
//! named by line and column, and the value conversions entry parsers
//! share (`env` objects, arguments given as any JSON).

use std::path::Path;

use dsh_files::ConfigFiles;
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

/// Reads and parses `path`: `None` when it does not exist.
pub fn read(files: &ConfigFiles, path: &Path) -> Result<Option<Value>, JsonFileError> {
    let Some(text) = files.read_if_exists(path).map_err(JsonFileError::Read)? else {
        return Ok(None);
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|error| JsonFileError::Syntax(syntax_message(&error)))
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

    #[test]
    fn a_missing_file_is_none_and_a_broken_one_names_its_position() {
        let dir = tempfile::tempdir().unwrap();
        let files = ConfigFiles::new();
        assert!(
            read(&files, &dir.path().join("absent.json"))
                .unwrap()
                .is_none()
        );
        let broken = dir.path().join("broken.json");
        fs_err::write(&broken, "{\n  \"a\": ,\n}").unwrap();
        let error = read(&files, &broken).unwrap_err().to_string();
        assert_eq!(error, "Invalid JSON: expected value at line 2 column 8");
    }
}
