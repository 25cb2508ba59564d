//! The one way dsh writes a whole file into a project or `$DSH_HOME`.
//!
//! A repository can plant symbolic links, FIFOs or files at any name dsh
//! might use, so [`write_atomic`] never opens an existing path for writing:
//!
//! - the bytes go to a fresh temporary file beside the target, created with
//!   `O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC` (`create_new`), so a link or file
//!   planted at a temporary name is never written through — dsh tries
//!   another name instead, and never removes what it did not create;
//! - the temporary file gets exactly the requested mode (not the umask's),
//!   is synced, and is renamed over the target, so readers see the old or
//!   the new content, never a mix; on failure it is removed;
//! - a target that is itself a symbolic link (or anything but a regular
//!   file) is refused. Writing through the link would let a repository
//!   aim dsh's write at any file the user owns; renaming over it would
//!   silently replace something the user put there with something else.
//!   Either way the user should decide, so dsh says what is there instead.
//!
//! Files the user names on the command line (`--out`, `--requests-out`)
//! are not written here: dsh writes *through* those and never replaces them.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::describe_kind;

/// How many fresh temporary names are tried before giving up (each one
/// taken means something already sits at that name).
const TEMP_ATTEMPTS: u32 = 16;

/// Replaces `path` with `bytes` atomically, as a regular file with
/// permissions `mode` (e.g. `0o600`). See the module docs for what is
/// refused. The parent directory must exist.
///
/// # Errors
/// When the target is a symbolic link or not a regular file, when no
/// temporary file can be created beside it, or when writing, syncing or
/// renaming fails. The error message names the path.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    write_atomic_named(path, bytes, mode, &mut fresh_temp_name)
}

/// [`write_atomic`] with the temporary names chosen by `temp_name`
/// (attempt number → path), so a test can plant something at them.
fn write_atomic_named(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    temp_name: &mut dyn FnMut(&Path, u32) -> PathBuf,
) -> std::io::Result<()> {
    match fs_err::symlink_metadata(path) {
        Ok(metadata) if !metadata.file_type().is_file() => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "refusing to replace {}: it is {}, not a regular file (dsh neither writes through nor replaces it)",
                    path.display(),
                    describe_kind(&metadata.file_type())
                ),
            ));
        }
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    let (tmp, mut file) = create_temp_beside(path, mode, temp_name)?;
    let written = (|| {
        // fchmod: the mode asked for, whatever the umask is.
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs_err::rename(&tmp, path)
    })();
    if let Err(error) = written {
        // create_new made this file: it is ours to remove.
        let _ = fs_err::remove_file(&tmp);
        return Err(error);
    }
    sync_dir(path.parent());
    Ok(())
}

/// Creates `dir` and its missing parents 0700 (private state). An existing
/// directory is left as it is.
///
/// # Errors
/// When a component cannot be created; the message names `dir`.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|err| std::io::Error::new(err.kind(), format!("{}: {err}", dir.display())))
}

/// `.<name>.<pid>.<count><nanos>.tmp` beside `path`: unique within the
/// process and hard to predict from outside it.
fn fresh_temp_name(path: &Path, _attempt: u32) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(
        ".{name}.{}.{count}{nanos:08x}.tmp",
        std::process::id()
    ))
}

/// A fresh temporary file beside `path`, never through a link.
fn create_temp_beside(
    path: &Path,
    mode: u32,
    temp_name: &mut dyn FnMut(&Path, u32) -> PathBuf,
) -> std::io::Result<(PathBuf, std::fs::File)> {
    let mut last = None;
    for attempt in 0..TEMP_ATTEMPTS {
        let tmp = temp_name(path, attempt);
        #[allow(clippy::disallowed_methods)] // custom_flags/mode: std's OpenOptionsExt
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp);
        match opened {
            Ok(file) => return Ok((tmp, file)),
            // Something is already there (perhaps planted): leave it alone
            // and take another name.
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                last = Some(error);
            }
            Err(error) => {
                return Err(std::io::Error::new(
                    error.kind(),
                    format!("{}: {error}", tmp.display()),
                ));
            }
        }
    }
    let error = last.unwrap_or_else(|| std::io::Error::other("no attempt made"));
    Err(std::io::Error::new(
        error.kind(),
        format!(
            "no fresh temporary file beside {} after {TEMP_ATTEMPTS} tries: {error}",
            path.display()
        ),
    ))
}

/// Makes the rename durable; best effort (some file systems refuse).
fn sync_dir(dir: Option<&Path>) {
    let dir = match dir {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if let Ok(handle) = fs_err::File::open(dir) {
        let _ = handle.sync_all();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn mode_of(path: &Path) -> u32 {
        std::fs::symlink_metadata(path)
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn creates_and_replaces_with_the_exact_mode_leaving_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("state.json");
        write_atomic(&target, b"one", 0o600).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "one");
        assert_eq!(mode_of(&target), 0o600);
        // An existing file with a looser mode is replaced by a 0600 one.
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o666)).unwrap();
        write_atomic(&target, b"two", 0o600).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "two");
        assert_eq!(mode_of(&target), 0o600);
        // Other modes are honoured exactly, whatever the umask.
        write_atomic(&target, b"three", 0o640).unwrap();
        assert_eq!(mode_of(&target), 0o640);
        assert_eq!(names(dir.path()), vec!["state.json"]);
    }

    #[test]
    fn replacement_is_a_rename_so_an_open_reader_keeps_the_old_content() {
        use std::io::Read as _;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("f");
        write_atomic(&target, b"old content", 0o600).unwrap();
        let mut reader = std::fs::File::open(&target).unwrap();
        let before = std::fs::metadata(&target).unwrap();
        write_atomic(&target, b"new", 0o600).unwrap();
        let after = std::fs::metadata(&target).unwrap();
        use std::os::unix::fs::MetadataExt as _;
        // A new inode took the name; the old one was never truncated.
        assert_ne!(before.ino(), after.ino());
        let mut old = String::new();
        reader.read_to_string(&mut old).unwrap();
        assert_eq!(old, "old content");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    #[test]
    fn a_symlinked_target_is_refused_and_neither_side_changes() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let target = dir.path().join("settings.json");
        symlink(&victim, &target).unwrap();
        let error = write_atomic(&target, b"evil", 0o600).unwrap_err();
        assert!(error.to_string().contains("a symbolic link"), "{error}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(
            std::fs::symlink_metadata(&target)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // A dangling link is refused too (no file appears at its target).
        let dangling = dir.path().join("dangling");
        symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(write_atomic(&dangling, b"evil", 0o600).is_err());
        assert!(!dir.path().join("nowhere").exists());
        assert_eq!(
            names(dir.path()),
            vec!["dangling", "settings.json", "victim"]
        );
    }

    #[test]
    fn a_fifo_or_directory_target_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let error = write_atomic(&sub, b"x", 0o600).unwrap_err();
        assert!(error.to_string().contains("a directory"), "{error}");
        assert!(sub.is_dir());
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let error = write_atomic(&fifo, b"x", 0o600).unwrap_err();
        assert!(error.to_string().contains("a FIFO"), "{error}");
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(
            &std::fs::symlink_metadata(&fifo).unwrap().file_type()
        ));
    }

    #[test]
    fn planted_links_at_temp_names_are_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let target = dir.path().join("trust.json");
        // Plant links at every name this process could pick for a while:
        // the counter's next values, with any nanos, are unguessable, so
        // also plant the old predictable names (`<name>.<pid>.tmp`).
        let pid = std::process::id();
        for planted in [
            format!("trust.json.{pid}.tmp"),
            format!(".trust.json.{pid}.tmp"),
            format!("json.{pid}.tmp"),
        ] {
            symlink(&victim, dir.path().join(planted)).unwrap();
        }
        write_atomic(&target, b"fresh", 0o600).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "fresh");
        // The planted links are still there (not ours to remove).
        assert_eq!(names(dir.path()).len(), 5);
    }

    #[test]
    fn a_link_planted_at_the_chosen_temp_name_is_skipped_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let target = dir.path().join("t");
        let planted = |i: u32| dir.path().join(format!("planted{i}"));
        for i in 0..3 {
            symlink(&victim, planted(i)).unwrap();
        }
        // A dangling link too: O_CREAT would create its target.
        symlink(dir.path().join("would-appear"), planted(3)).unwrap();
        let mut tried = Vec::new();
        write_atomic_named(&target, b"x", 0o600, &mut |_, attempt| {
            tried.push(attempt);
            planted(attempt)
        })
        .unwrap();
        assert_eq!(tried, vec![0, 1, 2, 3, 4]);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(!dir.path().join("would-appear").exists());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "x");
        assert_eq!(mode_of(&target), 0o600);
        // When every name is taken it gives up, and removes nothing.
        let error = write_atomic_named(&target, b"y", 0o600, &mut |_, _| planted(0)).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::AlreadyExists, "{error}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "x");
        assert!(std::fs::symlink_metadata(planted(0)).is_ok());
    }

    #[test]
    fn a_missing_directory_fails_without_creating_anything() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("missing/x.json");
        assert!(write_atomic(&target, b"x", 0o600).is_err());
        assert!(!dir.path().join("missing").exists());
    }

    #[test]
    fn private_dirs_are_0700() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b");
        create_private_dir(&deep).unwrap();
        assert_eq!(mode_of(&deep) & 0o077, 0);
        assert_eq!(mode_of(&dir.path().join("a")) & 0o077, 0);
        create_private_dir(&deep).unwrap();
    }
}
