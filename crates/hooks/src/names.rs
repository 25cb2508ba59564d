//! A dialect's names for dsh's tools and their arguments, as tables read
//! both ways (dsh → dialect for payloads and matchers, dialect → dsh for a
//! hook's rewritten input and `dsh hooks test --tool`).

use serde_json::{Map, Value};

/// Pairs of (dsh name, dialect name); names in neither column are the same
/// in both vocabularies.
#[derive(Debug, Clone, Copy)]
pub struct ToolNames(pub &'static [(&'static str, &'static str)]);

impl ToolNames {
    /// The dialect's name for dsh's `tool`.
    pub fn dialect_name<'a>(&self, tool: &'a str) -> &'a str {
        self.0
            .iter()
            .find(|(dsh, _)| *dsh == tool)
            .map_or(tool, |(_, dialect)| *dialect)
    }

    /// The dsh tool the dialect's `name` stands for.
    pub fn dsh_name<'a>(&self, name: &'a str) -> &'a str {
        self.0
            .iter()
            .find(|(_, dialect)| *dialect == name)
            .map_or(name, |(dsh, _)| *dsh)
    }

    /// Whether `name` is one of the dialect's own names (not dsh's).
    pub fn is_dialect_name(&self, name: &str) -> bool {
        self.0.iter().any(|(_, dialect)| *dialect == name)
    }
}

/// Copies the keys of `from` named in `pairs` (from key, to key) into
/// `to` under their new names; absent keys stay absent.
pub fn copy_keys(from: &Value, to: &mut Map<String, Value>, pairs: &[(&str, &str)]) {
    for (key, as_key) in pairs {
        if let Some(value) = from.get(*key) {
            to.insert((*as_key).to_owned(), value.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NAMES: ToolNames = ToolNames(&[("bash", "run_shell_command"), ("read", "read_file")]);

    #[test]
    fn names_map_both_ways_and_others_pass_through() {
        assert_eq!(NAMES.dialect_name("bash"), "run_shell_command");
        assert_eq!(NAMES.dsh_name("read_file"), "read");
        assert_eq!(NAMES.dialect_name("glob"), "glob");
        assert_eq!(NAMES.dsh_name("glob"), "glob");
        assert!(NAMES.is_dialect_name("read_file"));
        assert!(!NAMES.is_dialect_name("read"));
    }

    #[test]
    fn keys_are_copied_under_their_new_names_in_table_order() {
        let mut out = Map::new();
        copy_keys(
            &json!({"content": "x", "file_path": "/a", "other": 1}),
            &mut out,
            &[
                ("file_path", "path"),
                ("content", "file_text"),
                ("missing", "m"),
            ],
        );
        assert_eq!(
            Value::Object(out).to_string(),
            r#"{"path":"/a","file_text":"x"}"#
        );
    }
}
