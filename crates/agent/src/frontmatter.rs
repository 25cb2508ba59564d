//! The small YAML-frontmatter subset command, skill, prompt and rule files
//! use: a leading `---` block of `key: value` lines, where a key with no
//! value may be followed by `- item` lines (a list).

/// A parsed frontmatter block and the body after it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Frontmatter {
    /// `key: value` pairs in order; list values are joined with `\n`.
    pub fields: Vec<(String, FieldValue)>,
}

/// One frontmatter value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldValue {
    /// `key: value` (quotes removed).
    Scalar(String),
    /// `key:` followed by `- item` lines, or `key: [a, b]`.
    List(Vec<String>),
}

impl Frontmatter {
    /// The scalar value of `key`, if present.
    pub fn scalar(&self, key: &str) -> Option<&str> {
        self.fields.iter().find_map(|(k, v)| match v {
            FieldValue::Scalar(s) if k == key => Some(s.as_str()),
            FieldValue::Scalar(_) | FieldValue::List(_) => None,
        })
    }

    /// The values of `key` as a list (a scalar is split on commas).
    pub fn list(&self, key: &str) -> Vec<String> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| match v {
                FieldValue::List(items) => items.clone(),
                FieldValue::Scalar(s) => s
                    .split(',')
                    .map(|item| unquote(item.trim()).to_owned())
                    .filter(|item| !item.is_empty())
                    .collect(),
            })
            .unwrap_or_default()
    }
}

fn unquote(text: &str) -> &str {
    let text = text.trim();
    for quote in ['"', '\''] {
        if let Some(inner) = text
            .strip_prefix(quote)
            .and_then(|rest| rest.strip_suffix(quote))
        {
            return inner;
        }
    }
    text
}

/// Splits `text` into its frontmatter and body. Text without a leading
/// `---` line (or with an unclosed block) has no frontmatter and is all body.
pub(crate) fn split(text: &str) -> (Frontmatter, &str) {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (Frontmatter::default(), text);
    };
    let mut offset = 0;
    let mut block_end = None;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            block_end = Some((offset, offset + line.len()));
            break;
        }
        offset += line.len();
    }
    let Some((end, body_start)) = block_end else {
        return (Frontmatter::default(), text);
    };
    let mut fields: Vec<(String, FieldValue)> = Vec::new();
    for line in rest[..end].lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(item) = trimmed.strip_prefix("- ") {
            if let Some((_, FieldValue::List(items))) = fields.last_mut() {
                items.push(unquote(item).to_owned());
            }
            continue;
        }
        let Some((key, value)) = trimmed.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let parsed = if value.is_empty() {
            FieldValue::List(Vec::new())
        } else if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            FieldValue::List(
                inner
                    .split(',')
                    .map(|item| unquote(item).to_owned())
                    .filter(|item| !item.is_empty())
                    .collect(),
            )
        } else {
            FieldValue::Scalar(unquote(value).to_owned())
        };
        fields.push((key.trim().to_owned(), parsed));
    }
    (Frontmatter { fields }, &rest[body_start..])
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn scalars_lists_and_body() {
        let (front, body) = split(
            "---\ndescription: \"do x\"\npaths:\n  - \"**/*.py\"\n  - src/**\nallowed-tools: Bash, Read\n---\nBODY $1\n",
        );
        assert_eq!(front.scalar("description"), Some("do x"));
        assert_eq!(front.list("paths"), vec!["**/*.py", "src/**"]);
        assert_eq!(front.list("allowed-tools"), vec!["Bash", "Read"]);
        assert_eq!(body, "BODY $1\n");
    }

    #[test]
    fn no_or_unclosed_frontmatter_is_all_body() {
        assert_eq!(split("hello\n").1, "hello\n");
        assert_eq!(split("---\nkey: v\nno end\n").1, "---\nkey: v\nno end\n");
        assert_eq!(split("---\n---\nx").1, "x");
    }
}
