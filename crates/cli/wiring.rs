//! The binary's side of a session: the current directory, stdout lines and
//! stderr notices. Hook loading and the environment scrub are dsh-core's.

use crate::stdio::errln;
use std::io::Write as _;
use std::sync::Arc;

use dsh_agent::{EventCallback, NoticeCallback};
use dsh_protocol::Event;
use dsh_seams::{NoticeLevel, UserNotice};
use dsh_session::encode;

/// The current directory, canonicalized (dsh-core's, kept here for the
/// other front ends).
pub use dsh_core::current_dir;

/// Writes one line to stdout and flushes it (stdout's own lock keeps
/// concurrent lines whole).
pub fn stdout_line(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}

/// Streams each appended session event to stdout as one JSON line.
pub fn stdout_events() -> EventCallback {
    Arc::new(|event: &Event| {
        if let Ok(line) = encode(event) {
            stdout_line(&line);
        }
    })
}

/// Prints user notices from plugins and hooks on stderr.
pub fn stderr_notices() -> NoticeCallback {
    Arc::new(|notice: &UserNotice| {
        let level = match notice.level {
            NoticeLevel::Info => "",
            NoticeLevel::Warning => "warning: ",
        };
        errln!("dsh: {level}[{}] {}", notice.source, notice.text);
    })
}
