//! Spill files: an over-long hook output is written whole to a file and the
//! model gets the dialect's shortened text naming it. The file layout is the
//! dialect's (each mirrors its tool); writing it is shared.

use std::path::{Path, PathBuf};

/// Writes `text` to `dir/<file_name>`, creating `dir` (0700). Returns the
/// path. The file is private (0600: hook output can hold anything) and is
/// written with [`dsh_session::write_atomic`], so nothing planted at the
/// name is written through.
///
/// # Errors
/// When the directory or the file cannot be written.
pub fn write(dir: &Path, file_name: &str, text: &str) -> std::io::Result<PathBuf> {
    let path = dir.join(file_name);
    dsh_session::create_private_dir(dir)?;
    dsh_session::write_atomic(&path, text.as_bytes(), 0o600)?;
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
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "every byte");
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0);
    }

    #[test]
    fn a_link_planted_at_the_name_is_not_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let dir = tmp.path().join("spill");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("x.txt")).unwrap();
        assert!(write(&dir, "x.txt", "hook output").is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }

    #[test]
    fn an_unwritable_directory_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("plain");
        std::fs::write(&file, "").unwrap();
        assert!(write(&file.join("below"), "x.txt", "text").is_err());
    }
}
