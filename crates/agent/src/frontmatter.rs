//! How command, skill, prompt and rule files take a frontmatter block that
//! is not YAML (`dsh-frontmatter` reads it): the file still loads, without
//! its fields, and the problem is logged naming the file and line, so one
//! typo does not hide a command. A block over `dsh-frontmatter`'s bounds
//! (a YAML "billion laughs") is different: the file is skipped whole, with
//! the same kind of notice naming it, so it cannot stand in for a command
//! or rule of the same name with its body intact.

use std::path::Path;

pub(crate) use dsh_frontmatter::Frontmatter;

/// The frontmatter of the file at `path` (empty when it has none or it is
/// not YAML) and its body; `None` (after a notice) when the block is over
/// the reader's bounds and the file is skipped.
pub(crate) fn split<'a>(path: &Path, text: &'a str) -> Option<(Frontmatter, &'a str)> {
    match dsh_frontmatter::parse(text) {
        Ok(document) => Some((document.frontmatter.unwrap_or_default(), document.body)),
        Err(error @ dsh_frontmatter::FrontmatterError::TooLarge { .. }) => {
            tracing::warn!("{}: {error}; the file is skipped", path.display());
            None
        }
        Err(error) => {
            tracing::warn!("{}: {error}; its fields are ignored", path.display());
            let body = dsh_frontmatter::split(text).map_or(text, |(_, body)| body);
            Some((Frontmatter::default(), body))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_block_that_is_not_yaml_leaves_the_body() {
        let (front, body) = split(Path::new("c.md"), "---\na: 1\n   b: 2\n---\nBODY\n").unwrap();
        assert_eq!(front, Frontmatter::default());
        assert_eq!(body, "BODY\n");
        let (front, body) = split(Path::new("c.md"), "---\ndescription: x\n---\nBODY\n").unwrap();
        assert_eq!(front.text("description").as_deref(), Some("x"));
        assert_eq!(body, "BODY\n");
    }

    #[test]
    fn a_block_over_the_bounds_skips_the_file() {
        let nested = format!(
            "---\nx: {}1{}\n---\nBODY\n",
            "[".repeat(100),
            "]".repeat(100)
        );
        assert_eq!(split(Path::new("c.md"), &nested), None);
    }
}
