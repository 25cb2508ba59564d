//! What one hook run produced: how it ended, what it printed, how long it took.

use std::time::Duration;

/// How a hook process ended. Distinct values, never confused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookExit {
    /// Exited on its own with this code.
    Exited(i32),
    /// Killed by a signal dsh did not send (the signal number).
    Signaled(i32),
    /// Killed by dsh at its deadline.
    TimedOut,
    /// Killed by dsh because the guarded work was cancelled (the caller's
    /// token, or [`crate::HookRunner::kill_all`]).
    Cancelled,
    /// Never ran: the shell or program could not be started, or an HTTP
    /// hook's request got no response (bad URL, connection refused, …). The
    /// message names the executable or URL and carries the error.
    SpawnFailed(String),
    /// Never ran because dsh itself could not start it: one of dsh's own
    /// resource limits (file descriptors, processes, memory) or dsh's own
    /// machinery (no HTTP client). Distinct from [`HookExit::SpawnFailed`]
    /// because the hook is not at fault: bridges fail closed on blocking
    /// events instead of reading it as the hook's non-blocking error.
    DshLimit(String),
    /// An HTTP hook got a response with this status, 2xx or not. Its body is
    /// the run's stdout.
    Responded(u16),
}

impl From<crate::process::ProcessExit> for HookExit {
    fn from(exit: crate::process::ProcessExit) -> Self {
        use crate::process::ProcessExit;
        match exit {
            ProcessExit::Exited(code) => HookExit::Exited(code),
            ProcessExit::Signaled(signal) => HookExit::Signaled(signal),
            ProcessExit::TimedOut => HookExit::TimedOut,
            ProcessExit::Cancelled => HookExit::Cancelled,
            ProcessExit::SpawnFailed(why) => HookExit::SpawnFailed(why),
            ProcessExit::DshLimit(why) => HookExit::DshLimit(why),
        }
    }
}

impl HookExit {
    /// The exit code, when the process exited on its own.
    pub fn code(&self) -> Option<i32> {
        match self {
            HookExit::Exited(code) => Some(*code),
            HookExit::Signaled(_)
            | HookExit::TimedOut
            | HookExit::Cancelled
            | HookExit::SpawnFailed(_)
            | HookExit::DshLimit(_)
            | HookExit::Responded(_) => None,
        }
    }

    /// The HTTP status, when an HTTP hook got a response.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            HookExit::Responded(status) => Some(*status),
            HookExit::Exited(_)
            | HookExit::Signaled(_)
            | HookExit::TimedOut
            | HookExit::Cancelled
            | HookExit::SpawnFailed(_)
            | HookExit::DshLimit(_) => None,
        }
    }

    /// A short human message, e.g. `exited with code 127`. Prefer
    /// [`HookRun::describe`], which can also say how long the deadline was.
    pub fn describe(&self) -> String {
        match self {
            HookExit::Exited(code) => format!("exited with code {code}"),
            HookExit::Signaled(sig) => match signal_name(*sig) {
                Some(name) => format!("killed by signal {sig} ({name})"),
                None => format!("killed by signal {sig}"),
            },
            HookExit::TimedOut => "timed out".to_owned(),
            HookExit::Cancelled => "cancelled".to_owned(),
            HookExit::SpawnFailed(reason) => format!("failed to start: {reason}"),
            HookExit::DshLimit(reason) => format!("dsh could not start it: {reason}"),
            HookExit::Responded(status) => format!("HTTP status {status}"),
        }
    }
}

fn signal_name(sig: i32) -> Option<&'static str> {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        _ => return None,
    };
    Some(name)
}

/// One captured output stream: the first bytes up to the runner's cap, and a
/// count of everything the process wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first bytes, up to the cap.
    pub bytes: Vec<u8>,
    /// Everything the process wrote, counted even past the cap.
    pub total_bytes: u64,
}

/// Whether a [`Captured`] stream holds everything the process wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completeness {
    /// Every byte written was kept.
    Whole,
    /// The stream exceeded the cap: only the first `kept` of `total` bytes
    /// were kept. A reader that needs the whole output (a bridge parsing a
    /// decision) must not act on the prefix; for blocking events it fails
    /// closed.
    Cut {
        /// Bytes kept.
        kept: usize,
        /// Bytes written.
        total: u64,
    },
}

impl Captured {
    /// Whether bytes were dropped because the stream exceeded the cap.
    pub fn truncated(&self) -> bool {
        self.total_bytes > self.bytes.len() as u64
    }

    /// [`Captured::truncated`] as a typed value with the sizes.
    pub fn completeness(&self) -> Completeness {
        if self.truncated() {
            Completeness::Cut {
                kept: self.bytes.len(),
                total: self.total_bytes,
            }
        } else {
            Completeness::Whole
        }
    }

    /// Appends `chunk`, keeping at most `limit` bytes in all, and counts it.
    pub(crate) fn push_capped(&mut self, chunk: &[u8], limit: usize) {
        self.total_bytes = self.total_bytes.saturating_add(chunk.len() as u64);
        let room = limit.saturating_sub(self.bytes.len());
        if room > 0 {
            self.bytes
                .extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
    }

    /// Whether the kept bytes are not valid UTF-8, so [`Captured::text`]
    /// had to replace something. A multi-byte character merely cut in half
    /// by the cap does not count: the hook's output was fine.
    pub fn is_lossy(&self) -> bool {
        match std::str::from_utf8(&self.bytes) {
            Ok(_) => false,
            Err(err) => !(self.truncated() && err.error_len().is_none()),
        }
    }

    /// The kept bytes as text, invalid UTF-8 replaced by U+FFFD. A character
    /// cut in half by the cap is dropped rather than replaced.
    pub fn text(&self) -> String {
        let kept = match std::str::from_utf8(&self.bytes) {
            Ok(text) => return text.to_owned(),
            Err(err) if self.truncated() && err.error_len().is_none() => {
                &self.bytes[..err.valid_up_to()]
            }
            Err(_) => &self.bytes[..],
        };
        String::from_utf8_lossy(kept).into_owned()
    }

    /// [`Captured::text`] plus, when the stream was cut, a marker line such
    /// as `[dsh: output truncated: kept 1048576 of 209715200 bytes]`, so a
    /// reader never mistakes a prefix for the whole output.
    pub fn display(&self) -> String {
        self.display_within(self.bytes.len())
    }

    /// Like [`Captured::display`], showing at most the first `limit` kept
    /// bytes (what the session log stores), with the marker when anything
    /// was left out.
    pub fn display_within(&self, limit: usize) -> String {
        if limit >= self.bytes.len() {
            let mut text = self.text();
            if self.truncated() {
                text.push_str(&marker(self.bytes.len(), self.total_bytes));
            }
            return text;
        }
        let prefix = Captured {
            bytes: self.bytes[..limit].to_vec(),
            total_bytes: self.total_bytes,
        };
        let mut text = prefix.text();
        text.push_str(&marker(limit, self.total_bytes));
        text
    }
}

fn marker(kept: usize, total: u64) -> String {
    format!("\n[dsh: output truncated: kept {kept} of {total} bytes]")
}

/// A [`Captured`] that keeps at most `limit` bytes: the sink the hook
/// runner hands the process layer.
#[derive(Debug)]
pub(crate) struct CappedSink {
    pub(crate) captured: Captured,
    pub(crate) limit: usize,
}

impl CappedSink {
    pub(crate) fn new(limit: usize) -> Self {
        CappedSink {
            captured: Captured::default(),
            limit,
        }
    }
}

impl crate::process::OutputSink for CappedSink {
    fn push(&mut self, chunk: &[u8]) {
        self.captured.push_capped(chunk, self.limit);
    }
}

/// Everything one hook run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRun {
    /// How it ended.
    pub exit: HookExit,
    /// What it wrote to stdout.
    pub stdout: Captured,
    /// What it wrote to stderr.
    pub stderr: Captured,
    /// Wall time from spawn to reap (zero when it never started).
    pub duration: Duration,
    /// The process id of the hook, which is also its process-group id;
    /// `None` when it never started.
    pub pid: Option<u32>,
    /// The deadline it ran under (from [`crate::HookSpec::timeout`]).
    pub timeout: Duration,
    /// How many bytes of each stream [`crate::RunRecord::of`] stores in the
    /// session log (the runner's [`crate::RunnerConfig::capture_limit`]);
    /// `stdout` itself may hold more, for the bridges to parse.
    pub record_limit: usize,
}

/// Why dsh cannot read a run's decision through no fault of the hook: one
/// of dsh's own limits got in the way. A bridge must not read such a run as
/// "no decision" on an event that can block (that would turn a deny into an
/// allow); it fails closed there and warns elsewhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DshFault {
    /// Stdout exceeded the decision buffer: only a prefix was kept.
    OutputCut {
        /// Bytes kept.
        kept: usize,
        /// Bytes written.
        total: u64,
    },
    /// dsh could not start the hook ([`HookExit::DshLimit`]).
    NotStarted(String),
}

impl std::fmt::Display for DshFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DshFault::OutputCut { kept, total } => write!(
                f,
                "its output ({total} bytes) exceeded dsh's {kept}-byte decision buffer"
            ),
            DshFault::NotStarted(why) => write!(f, "dsh could not start it ({why})"),
        }
    }
}

impl HookRun {
    /// Whether one of dsh's own limits kept it from reading this run's
    /// decision: the hook could not be started for dsh's reasons, or its
    /// stdout was cut at the decision buffer.
    pub fn dsh_fault(&self) -> Option<DshFault> {
        if let HookExit::DshLimit(why) = &self.exit {
            return Some(DshFault::NotStarted(why.clone()));
        }
        match self.stdout.completeness() {
            Completeness::Cut { kept, total } => Some(DshFault::OutputCut { kept, total }),
            Completeness::Whole => None,
        }
    }

    /// A short human message, e.g. `exited with code 2` or
    /// `timed out after 2s` (the wording Codex uses).
    pub fn describe(&self) -> String {
        match &self.exit {
            HookExit::TimedOut => format!("timed out after {}", human_duration(self.timeout)),
            HookExit::Exited(_)
            | HookExit::Signaled(_)
            | HookExit::Cancelled
            | HookExit::SpawnFailed(_)
            | HookExit::DshLimit(_)
            | HookExit::Responded(_) => self.exit.describe(),
        }
    }
}

/// `2s`, `1.5s`, `250ms`: whole seconds without decimals, sub-second values
/// in milliseconds.
fn human_duration(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        format!("{}s", duration.as_secs())
    } else if duration < Duration::from_secs(1) {
        format!("{}ms", duration.as_millis())
    } else {
        let text = format!("{:.3}", duration.as_secs_f64());
        format!("{}s", text.trim_end_matches('0').trim_end_matches('.'))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn run_with(exit: HookExit, timeout: Duration) -> HookRun {
        HookRun {
            exit,
            stdout: Captured::default(),
            stderr: Captured::default(),
            duration: Duration::ZERO,
            pid: None,
            timeout,
            record_limit: 1024,
        }
    }

    #[test]
    fn dsh_faults_are_limits_and_cut_output_only() {
        let t = Duration::from_secs(2);
        assert_eq!(run_with(HookExit::Exited(0), t).dsh_fault(), None);
        // A missing program is the hook's own failure, not dsh's.
        assert_eq!(
            run_with(HookExit::SpawnFailed("command not found: x".into()), t).dsh_fault(),
            None
        );
        assert_eq!(
            run_with(HookExit::DshLimit("too many open files".into()), t).dsh_fault(),
            Some(DshFault::NotStarted("too many open files".into()))
        );
        let mut cut = run_with(HookExit::Exited(0), t);
        cut.stdout.push_capped(b"0123456789", 4);
        assert_eq!(
            cut.dsh_fault(),
            Some(DshFault::OutputCut { kept: 4, total: 10 })
        );
    }

    #[test]
    fn describes_each_outcome() {
        let t = Duration::from_secs(2);
        assert_eq!(
            run_with(HookExit::Exited(127), t).describe(),
            "exited with code 127"
        );
        assert_eq!(
            run_with(HookExit::TimedOut, t).describe(),
            "timed out after 2s"
        );
        assert_eq!(
            run_with(HookExit::TimedOut, Duration::from_millis(1500)).describe(),
            "timed out after 1.5s"
        );
        assert_eq!(
            run_with(HookExit::TimedOut, Duration::from_millis(250)).describe(),
            "timed out after 250ms"
        );
        assert_eq!(
            run_with(HookExit::Signaled(libc::SIGSEGV), t).describe(),
            format!("killed by signal {} (SIGSEGV)", libc::SIGSEGV)
        );
        assert_eq!(run_with(HookExit::Cancelled, t).describe(), "cancelled");
        assert_eq!(
            run_with(HookExit::SpawnFailed("command not found: x".into()), t).describe(),
            "failed to start: command not found: x"
        );
        assert_eq!(
            run_with(HookExit::Responded(404), t).describe(),
            "HTTP status 404"
        );
        assert_eq!(HookExit::Responded(404).http_status(), Some(404));
        assert_eq!(HookExit::Responded(200).code(), None);
        assert_eq!(HookExit::Exited(0).http_status(), None);
        assert_eq!(HookExit::Exited(3).code(), Some(3));
        assert_eq!(HookExit::TimedOut.code(), None);
    }

    #[test]
    fn cut_character_is_not_lossy_but_invalid_bytes_are() {
        // "é" is C3 A9; keep only C3 of a longer stream.
        let cut = Captured {
            bytes: b"ab\xC3".to_vec(),
            total_bytes: 10,
        };
        assert!(cut.truncated());
        assert!(!cut.is_lossy());
        assert_eq!(cut.text(), "ab");
        assert_eq!(
            cut.display(),
            "ab\n[dsh: output truncated: kept 3 of 10 bytes]"
        );

        let bad = Captured {
            bytes: b"a\xFFb\xC3".to_vec(),
            total_bytes: 4,
        };
        assert!(!bad.truncated());
        assert!(bad.is_lossy());
        assert_eq!(bad.text(), "a\u{FFFD}b\u{FFFD}");
        assert_eq!(bad.display(), bad.text());
    }

    #[test]
    fn display_within_bounds_the_text_and_says_so() {
        let mut captured = Captured::default();
        captured.push_capped(b"hello ", 8);
        captured.push_capped("wörld".as_bytes(), 8);
        assert_eq!(captured.bytes, b"hello w\xC3".to_vec());
        assert_eq!(captured.total_bytes, 12);
        assert_eq!(
            captured.completeness(),
            Completeness::Cut { kept: 8, total: 12 }
        );
        assert_eq!(
            captured.display_within(7),
            "hello w\n[dsh: output truncated: kept 7 of 12 bytes]"
        );
        assert_eq!(
            captured.display_within(100),
            "hello w\n[dsh: output truncated: kept 8 of 12 bytes]"
        );
        let whole = Captured {
            bytes: b"ok".to_vec(),
            total_bytes: 2,
        };
        assert_eq!(whole.completeness(), Completeness::Whole);
        assert_eq!(
            whole.display_within(1),
            "o\n[dsh: output truncated: kept 1 of 2 bytes]"
        );
    }
}
