//! The one place the CLI writes to stdout and stderr, and the one set of
//! exit statuses it ends with.
//!
//! Rust ignores SIGPIPE, so a reader that goes away (`dsh hooks list | head
//! -1`) turns the next stdout write into an `EPIPE` error; `println!` panics
//! on it. Everything here returns that error as [`StdoutClosed`] instead,
//! and `main` ends such a run with status 0: the reader took what it wanted.
//! Stderr is best effort: when it is gone there is nobody left to tell.
//!
//! The workspace denies `clippy::print_stdout`/`print_stderr`; this module
//! writes through `std::io` handles and so needs no exception.

use std::fmt;
use std::io::{self, Write as _};
use std::process::ExitCode;

use crate::signals::Stop;

/// How a `dsh` run ends, as the shell sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: the command did its job (also when stdout's reader left early).
    Success,
    /// 1: the command ran but reports a failure (a failed turn, findings of
    /// `hooks check`).
    Failure,
    /// 2: dsh could not do what was asked (bad input, unreadable files).
    Error,
    /// 129: SIGHUP ended the session.
    Hangup,
    /// 130: SIGINT ended the session.
    Interrupt,
    /// 143: SIGTERM ended the session.
    Terminate,
}

impl ExitStatus {
    /// The numeric status (signal endings are 128 + the signal number, as a
    /// shell reports a process a signal killed).
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Error => 2,
            ExitStatus::Hangup => 129,
            ExitStatus::Interrupt => 130,
            ExitStatus::Terminate => 143,
        }
    }

    /// Ends the process now with this status, without unwinding (the second
    /// signal during shutdown).
    pub fn exit_now(self) -> ! {
        std::process::exit(i32::from(self.code()))
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> ExitCode {
        ExitCode::from(status.code())
    }
}

impl From<Stop> for ExitStatus {
    fn from(stop: Stop) -> ExitStatus {
        match stop {
            Stop::Interrupt => ExitStatus::Interrupt,
            Stop::Terminate => ExitStatus::Terminate,
            Stop::Hangup => ExitStatus::Hangup,
        }
    }
}

/// Stdout's reader closed its end; nothing more can be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StdoutClosed;

impl fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("stdout was closed by its reader")
    }
}

impl std::error::Error for StdoutClosed {}

/// Stdout as an `io::Write` whose broken-pipe errors carry [`StdoutClosed`]
/// (for code that streams into a writer, such as the session log).
pub struct Stdout(io::StdoutLock<'static>);

/// Locks stdout for a run of writes.
pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

fn mark_closed(err: io::Error) -> io::Error {
    if err.kind() == io::ErrorKind::BrokenPipe {
        io::Error::new(io::ErrorKind::BrokenPipe, StdoutClosed)
    } else {
        err
    }
}

impl io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(mark_closed)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(mark_closed)
    }
}

/// Writes formatted text to stdout and flushes it.
pub fn write_out(args: fmt::Arguments<'_>) -> io::Result<()> {
    let mut stdout = stdout();
    stdout.write_fmt(args)?;
    stdout.flush()
}

/// Writes formatted text to stderr; a failure is dropped (see module docs).
pub fn write_err(args: fmt::Arguments<'_>) {
    let mut stderr = io::stderr().lock();
    let _ = stderr.write_fmt(args);
}

/// Whether `err` (or one of its causes) is stdout's reader going away.
pub fn is_stdout_closed(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.is::<StdoutClosed>()
            || cause
                .downcast_ref::<io::Error>()
                .and_then(|io| io.get_ref())
                .is_some_and(|inner| inner.is::<StdoutClosed>())
    })
}

/// `println!` for the CLI: a line on stdout, `?`-able ([`StdoutClosed`] when
/// the reader left).
#[macro_export]
macro_rules! outln {
    () => { $crate::stdio::write_out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::stdio::write_out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` for the CLI, as [`outln!`] without the newline.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::stdio::write_out(format_args!($($arg)*)) };
}

/// `eprintln!` for the CLI that never panics.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => { $crate::stdio::write_err(format_args!("{}\n", format_args!($($arg)*))) };
}

pub use crate::{errln, out, outln};

/// An error and its causes on one line, each cause once (a cause whose text
/// the message already holds is not repeated).
pub fn error_chain(err: &anyhow::Error) -> String {
    let mut message = err.to_string();
    for cause in err.chain().skip(1) {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_stdout_is_recognised_through_io_and_anyhow_layers() {
        let io_err = mark_closed(io::Error::from(io::ErrorKind::BrokenPipe));
        let err = anyhow::Error::from(io_err).context("writing the list");
        assert!(is_stdout_closed(&err));
    }

    #[test]
    fn other_broken_pipes_are_not_mistaken_for_stdout() {
        // A hook that closed its stdin early is the hook's business, not a
        // reason to end dsh quietly with status 0.
        let err = anyhow::Error::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(!is_stdout_closed(&err));
        let other = mark_closed(io::Error::from(io::ErrorKind::PermissionDenied));
        assert!(!is_stdout_closed(&anyhow::Error::from(other)));
    }

    #[test]
    fn exit_statuses_are_the_shell_codes() {
        let codes: Vec<u8> = [
            ExitStatus::Success,
            ExitStatus::Failure,
            ExitStatus::Error,
            ExitStatus::Hangup,
            ExitStatus::Interrupt,
            ExitStatus::Terminate,
        ]
        .into_iter()
        .map(ExitStatus::code)
        .collect();
        assert_eq!(codes, [0, 1, 2, 129, 130, 143]);
        assert_eq!(ExitStatus::from(Stop::Interrupt), ExitStatus::Interrupt);
    }
}
