//! How command, skill, prompt and rule files take a frontmatter block that
//! is not YAML (`dsh-frontmatter` reads it): the file still loads, without
//! its fields, and the problem is logged naming the file and line, so one
//! typo does not hide a command.

use std::path::Path;

pub(crate) use dsh_frontmatter::Frontmatter;

/// The frontmatter of the file at `path` (empty when it has none or it is
/// not YAML) and its body.
pub(crate) fn split<'a>(path: &Path, text: &'a str) -> (Frontmatter, &'a str) {
    match dsh_frontmatter::parse(text) {
        Ok(document) => (document.frontmatter.unwrap_or_default(), document.body),
        Err(error) => {
            tracing::warn!("{}: {error}; its fields are ignored", path.display());
            let body = dsh_frontmatter::split(text).map_or(text, |(_, body)| body);
            (Frontmatter::default(), body)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_block_that_is_not_yaml_leaves_the_body() {
        let (front, body) = split(Path::new("c.md"), "---\na: 1\n   b: 2\n---\nBODY\n");
        assert_eq!(front, Frontmatter::default());
        assert_eq!(body, "BODY\n");
        let (front, body) = split(Path::new("c.md"), "---\ndescription: x\n---\nBODY\n");
        assert_eq!(front.text("description").as_deref(), Some("x"));
        assert_eq!(body, "BODY\n");
    }
}
