//! Opening an output file the user named (`--out`, `--requests-out`).
//!
//! dsh never deletes or replaces what is at such a path: an existing
//! regular file is truncated and written in place, a symlink is written
//! through, and anything that is not a regular file (a device, a FIFO, a
//! directory) is refused before a byte is written.

use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use anyhow::bail;

/// Opens `path` for writing as described in the module docs.
pub fn open(path: &Path, what: &str) -> anyhow::Result<std::fs::File> {
    // First look (following symlinks) for a clear refusal without opening:
    // opening a FIFO or some devices has effects of its own.
    // std: the refusal below names the path itself.
    #[allow(clippy::disallowed_methods)]
    let look = std::fs::metadata(path);
    match look {
        Ok(metadata) if !metadata.is_file() => refuse(path, what, &metadata)?,
        Ok(_) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => bail!("cannot write the {what} to {}: {err}", path.display()),
    }
    // O_NONBLOCK: a path swapped for a FIFO since the look cannot block the
    // open. No O_TRUNC yet: the kind is checked again on the open handle
    // first, so a device is never truncated or written.
    #[allow(clippy::disallowed_methods)] // custom_flags/mode: std's OpenOptionsExt
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|err| anyhow::anyhow!("cannot write the {what} to {}: {err}", path.display()))?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        refuse(path, what, &metadata)?;
    }
    file.set_len(0)
        .map_err(|err| anyhow::anyhow!("cannot truncate {}: {err}", path.display()))?;
    Ok(file)
}

fn refuse(path: &Path, what: &str, metadata: &std::fs::Metadata) -> anyhow::Result<()> {
    bail!(
        "refusing to write the {what} to {}: it is {}, not a regular file (dsh writes only regular files and never replaces what is there)",
        path.display(),
        dsh_session::describe_kind(&metadata.file_type())
    )
}
