//! How command, skill, prompt and rule files take a frontmatter block that
//! is not YAML (`dsh-frontmatter` reads it): the file still loads, without
//! its fields, and the problem is logged naming the file and line, so one
//! typo does not hide a command. A block over `dsh-frontmatter`'s bounds
//! (a YAML "billion laughs") is different: the file is skipped whole, with
//! the same kind of notice naming it, so it cannot stand in for a command
//! or rule of the same name with its body intact.

//!
//! Each file kind reads its frontmatter as a typed view (a serde struct of
//! the keys it knows, with `dsh-frontmatter`'s lenient readers).

use std::path::Path;

use serde::de::DeserializeOwned;

/// The frontmatter of the file at `path` read as the view `T` (its default
/// when there is none or it is not YAML) and its body; `None` (after a
/// notice) when the block is over the reader's bounds and the file is
/// skipped.
pub(crate) fn split<'a, T: DeserializeOwned + Default>(
    path: &Path,
    text: &'a str,
) -> Option<(T, &'a str)> {
    let read = dsh_frontmatter::parse(text).and_then(|document| {
        let view = match document.frontmatter {
            Some(front) => front.read()?,
            None => T::default(),
        };
        Ok((view, document.body))
    });
    match read {
        Ok(read) => Some(read),
        Err(error @ dsh_frontmatter::FrontmatterError::TooLarge { .. }) => {
            tracing::warn!("{}: {error}; the file is skipped", path.display());
            None
        }
        Err(error) => {
            tracing::warn!("{}: {error}; its fields are ignored", path.display());
            let body = dsh_frontmatter::split(text).map_or(text, |(_, body)| body);
            Some((T::default(), body))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq, serde::Deserialize)]
    #[serde(default)]
    struct View {
        #[serde(deserialize_with = "dsh_frontmatter::text")]
        description: Option<String>,
    }

    #[test]
    fn a_block_that_is_not_yaml_leaves_the_body() {
        let (front, body) =
            split::<View>(Path::new("c.md"), "---\na: 1\n   b: 2\n---\nBODY\n").unwrap();
        assert_eq!(front, View::default());
        assert_eq!(body, "BODY\n");
        let (front, body) =
            split::<View>(Path::new("c.md"), "---\ndescription: x\n---\nBODY\n").unwrap();
        assert_eq!(front.description.as_deref(), Some("x"));
        assert_eq!(body, "BODY\n");
        let (front, body) = split::<View>(Path::new("c.md"), "BODY\n").unwrap();
        assert_eq!(front, View::default());
        assert_eq!(body, "BODY\n");
    }

    #[test]
    fn a_block_over_the_bounds_skips_the_file() {
        let nested = format!(
            "---\nx: {}1{}\n---\nBODY\n",
            "[".repeat(100),
            "]".repeat(100)
        );
        assert_eq!(split::<View>(Path::new("c.md"), &nested), None);
    }
}
