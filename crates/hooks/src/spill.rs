//! Spill files: an over-long hook output is written whole to a file and the
//! model gets the dialect's shortened text naming it. The file layout is the
//! dialect's (each mirrors its tool); writing it is shared.

use std::path::{Path, PathBuf};

/// Writes `text` to `dir/<file_name>`, creating `dir`. Returns the path.
///
/// # Errors
/// When the directory or the file cannot be written.
pub fn write(dir: &Path, file_name: &str, text: &str) -> std::io::Result<PathBuf> {
    let path = dir.join(file_name);
    fs_err::create_dir_all(dir)?;
    fs_err::write(&path, text)?;
    Ok(path)
}

/// A fresh, unique spill file name: `<prefix><uuid><suffix>`.
pub fn unique_name(prefix: &str, suffix: &str) -> String {
    format!("{prefix}{}{suffix}", uuid::Uuid::new_v4())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_whole_text_under_a_fresh_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        let name = unique_name("hook-", ".txt");
        assert!(name.starts_with("hook-") && name.ends_with(".txt"));
        assert_ne!(name, unique_name("hook-", ".txt"));
        let path = write(&dir, &name, "every byte").unwrap();
        assert_eq!(path, dir.join(&name));
        assert_eq!(std::fs::read_to_string(path).unwrap(), "every byte");
    }

    #[test]
    fn an_unwritable_directory_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("plain");
        std::fs::write(&file, "").unwrap();
        assert!(write(&file.join("below"), "x.txt", "text").is_err());
    }
}
