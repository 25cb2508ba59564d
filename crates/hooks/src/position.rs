//! Positions in configuration files, shared by both bridges' config
//! errors: each names the file, line and column once.

/// serde_json's message without its trailing " at line L column C" (the
/// error that carries it already names the position).
pub fn without_position(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    text.strip_suffix(&suffix)
        .map_or(text.clone(), str::to_owned)
}

/// The 1-based line and column (in characters) of byte `offset` in `text`;
/// an offset past the end counts as the end.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map(|tail| tail.chars().count() + 1)
        .unwrap_or(1);
    (line, column)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_position_is_named_once() {
        let err = serde_json::from_str::<serde_json::Value>("{\n  \"a\": }").unwrap_err();
        let text = without_position(&err);
        assert!(!text.contains("line"), "{text}");
        assert!(err.to_string().starts_with(&text));
    }

    #[test]
    fn lines_and_columns_count_characters() {
        let text = "ab\nçd\nx";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 3), (2, 1));
        assert_eq!(line_column(text, 5), (2, 2));
        assert_eq!(line_column(text, 4), (2, 1));
        assert_eq!(line_column(text, 99), (3, 2));
    }
}
