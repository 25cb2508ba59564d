//! Appending to and loading a JSONL session log.

use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use dsh_protocol::{Event, EventBody};

use crate::invariants::{InvariantError, InvariantState};
use crate::lock::{LockError, LockWait, SessionLock};
use crate::safe_fs::create_private_dir;

/// Why a log operation failed.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// Reading or writing the file failed (the message names the path).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The append would break the log's structure; nothing was written.
    #[error("refused to append `{kind}` at seq {seq}: {source}")]
    Invariant {
        /// The event type.
        kind: &'static str,
        /// The seq it would have had.
        seq: u64,
        /// The rule it broke.
        #[source]
        source: InvariantError,
    },
    /// A complete line in the middle of the file is not a valid event.
    #[error("{path}:{line}: not a valid session event: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The file is not valid UTF-8 or an event could not be serialized.
    #[error("{0}")]
    Encoding(String),
    /// Writing an event failed (a full disk, an I/O error). The file was cut
    /// back to its last acknowledged event when `recovered` is true; when it
    /// is false the log refuses every later append.
    #[error("cannot append `{kind}` at seq {seq} to {}: {source}{}", path.display(),
        if *recovered { " (the log was cut back to its last complete event)" }
        else { " (the log could not be repaired; nothing more is written to it)" })]
    AppendFailed {
        /// The log file.
        path: PathBuf,
        /// The event type.
        kind: &'static str,
        /// The seq it would have had.
        seq: u64,
        /// The write error.
        #[source]
        source: std::io::Error,
        /// Whether the file was cut back to its last acknowledged length.
        recovered: bool,
    },
    /// An earlier append failed and the file could not be repaired.
    #[error("{} is not written to after a failed append", path.display())]
    Broken {
        /// The log file.
        path: PathBuf,
    },
    /// The path is not a regular file (a FIFO, a device, a directory).
    #[error("{}: not a regular file ({kind}); session logs are regular files", path.display())]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// Another writer holds the session, or the lock failed.
    #[error(transparent)]
    Lock(#[from] LockError),
}

/// What kind of non-regular file a path is, in words.
pub fn describe_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    if kind.is_file() {
        "a regular file"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Whether [`load`] may follow a symbolic link at the path itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// A path the user named (`dsh log FILE`): follow it.
    Symlinks,
    /// A path dsh built under its own home: refuse a symlink.
    NoSymlinks,
}

/// Opens `path` for reading without ever blocking (a FIFO would) and
/// refuses anything but a regular file.
fn open_regular(path: &Path, follow: Follow) -> Result<std::fs::File, LogError> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if follow == Follow::NoSymlinks {
        flags |= libc::O_NOFOLLOW;
    }
    #[allow(clippy::disallowed_methods)] // custom_flags/mode: std's OpenOptionsExt
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|err| with_path(path, err))?;
    let metadata = file.metadata().map_err(|err| with_path(path, err))?;
    if !metadata.is_file() {
        return Err(LogError::NotRegular {
            path: path.to_owned(),
            kind: describe_kind(&metadata.file_type()),
        });
    }
    Ok(file)
}

fn with_path(path: &Path, err: std::io::Error) -> LogError {
    LogError::Io(std::io::Error::new(
        err.kind(),
        format!("{}: {err}", path.display()),
    ))
}

/// Where a new log's header is written before the log is linked into place.
fn staging_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".new");
    path.with_file_name(name)
}

/// How [`place_new`] put a staged log in place.
enum Placed {
    /// Hard-linked: the staging name still has to go.
    Linked,
    /// Renamed (a file system without hard links).
    Renamed,
}

/// Puts the staged file at `path` without ever replacing what is there.
/// `link` fails on an existing path or planted symlink the way `O_EXCL`
/// does; where the file system has no hard links, a rename after checking
/// the name is free is the fallback (the session lock keeps other dsh
/// processes out of that gap).
fn place_new(staging: &Path, path: &Path) -> std::io::Result<Placed> {
    match fs_err::hard_link(staging, path) {
        Ok(()) => Ok(Placed::Linked),
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::Unsupported | std::io::ErrorKind::PermissionDenied
            ) =>
        {
            match fs_err::symlink_metadata(path) {
                Ok(_) => Err(std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    format!("{}: already exists", path.display()),
                )),
                Err(missing) if missing.kind() == std::io::ErrorKind::NotFound => {
                    fs_err::rename(staging, path).map(|()| Placed::Renamed)
                }
                Err(other) => Err(other),
            }
        }
        Err(err) => Err(err),
    }
}

/// A new file, 0600, never through a symlink.
fn create_private_file(path: &Path) -> Result<std::fs::File, LogError> {
    #[allow(clippy::disallowed_methods)] // custom_flags/mode: std's OpenOptionsExt
    std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|err| with_path(path, err))
}

/// Where an on-disk log's bytes go. A trait so a test can make writes fail
/// the way a full disk does.
pub trait LogWriter: Send + std::fmt::Debug {
    /// Writes one whole line (the event and its newline).
    fn write_line(&mut self, line: &[u8]) -> std::io::Result<()>;
    /// Cuts the file back to `len` bytes and positions the next write there.
    fn truncate_to(&mut self, len: u64) -> std::io::Result<()>;
}

impl LogWriter for std::fs::File {
    fn write_line(&mut self, line: &[u8]) -> std::io::Result<()> {
        // One write call per event: the kernel has the whole line once
        // `write_all` returns, so the event survives the process dying.
        self.write_all(line)
    }

    fn truncate_to(&mut self, len: u64) -> std::io::Result<()> {
        self.set_len(len)?;
        self.seek(SeekFrom::Start(len))?;
        Ok(())
    }
}

/// A torn last line: bytes a crash left without their newline, or a final
/// line that does not parse. It is reported and dropped, never parsed as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// 1-based line number of the torn line.
    pub line: usize,
    /// How many bytes were dropped.
    pub bytes: usize,
}

/// What [`load`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The events, in file order.
    pub events: Vec<Event>,
    /// A torn last line that was dropped, if any.
    pub torn_tail: Option<TornTail>,
    /// Byte length of the valid prefix.
    valid_len: u64,
}

/// Reads a session log. Every complete line must be a valid event whose
/// `seq` equals its line index; an incomplete or unparsable last line is
/// reported in [`Loaded::torn_tail`] and dropped.
pub fn load(path: &Path) -> Result<Loaded, LogError> {
    load_with(path, Follow::Symlinks)
}

/// [`load`], choosing whether a symlink at `path` is followed. Either way a
/// FIFO or device is refused at once instead of blocking or never ending.
pub fn load_with(path: &Path, follow: Follow) -> Result<Loaded, LogError> {
    let mut bytes = Vec::new();
    open_regular(path, follow)?
        .read_to_end(&mut bytes)
        .map_err(|err| with_path(path, err))?;
    parse(path, &bytes)
}

fn parse(path: &Path, bytes: &[u8]) -> Result<Loaded, LogError> {
    let mut events = Vec::new();
    let mut offset = 0usize;
    let mut line_no = 0usize;
    while offset < bytes.len() {
        line_no += 1;
        let rest = &bytes[offset..];
        let (line, complete) = match rest.iter().position(|b| *b == b'\n') {
            Some(end) => (&rest[..end], true),
            None => (rest, false),
        };
        let parsed = std::str::from_utf8(line)
            .map_err(|err| err.to_string())
            .and_then(|text| serde_json::from_str::<Event>(text).map_err(|err| err.to_string()));
        let is_last = offset + line.len() + usize::from(complete) >= bytes.len();
        match parsed {
            Ok(event) if complete => {
                if event.seq != events.len() as u64 {
                    return Err(LogError::Corrupt {
                        path: path.to_owned(),
                        line: line_no,
                        message: format!("seq {} where {} was expected", event.seq, events.len()),
                    });
                }
                events.push(event);
                offset += line.len() + 1;
            }
            // A last line without its newline was never acknowledged, even
            // if it happens to parse: that is a torn tail. A complete line
            // that does not parse is corruption, wherever it is.
            _ if is_last && !complete => {
                return Ok(Loaded {
                    events,
                    torn_tail: Some(TornTail {
                        line: line_no,
                        bytes: rest.len(),
                    }),
                    valid_len: offset as u64,
                });
            }
            Ok(_) => {
                return Err(LogError::Corrupt {
                    path: path.to_owned(),
                    line: line_no,
                    message: "incomplete line".to_owned(),
                });
            }
            Err(message) => {
                return Err(LogError::Corrupt {
                    path: path.to_owned(),
                    line: line_no,
                    message,
                });
            }
        }
    }
    Ok(Loaded {
        events,
        torn_tail: None,
        valid_len: offset as u64,
    })
}

/// An open session log: the only way events are written.
#[derive(Debug)]
pub struct SessionLog {
    path: Option<PathBuf>,
    writer: Option<Box<dyn LogWriter>>,
    /// Bytes of the file that hold acknowledged events; a failed write is
    /// cut back to this.
    acked_len: u64,
    /// A failed write could not be cut back: nothing more is appended.
    broken: bool,
    events: Vec<Event>,
    state: InvariantState,
    /// Held for as long as the log is open (on-disk session logs only).
    lock: Option<SessionLock>,
}

impl SessionLog {
    /// Creates a new log at `path` (which must not exist) and appends the
    /// header. Fails at once if another process holds the session.
    pub fn create(path: &Path, header: EventBody) -> Result<Self, LogError> {
        Self::create_with(path, header, LockWait::Fail)
    }

    /// [`SessionLog::create`]: missing parent directories are made 0700, the
    /// file 0600 (never through a symlink), under the session lock.
    pub fn create_with(path: &Path, header: EventBody, wait: LockWait) -> Result<Self, LogError> {
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            create_private_dir(parent)?;
        }
        let lock = SessionLock::acquire(path, wait)?;
        // The header is written to a staging file that is then linked into
        // place, so the log never exists without its header: a process killed
        // in between leaves no empty `.jsonl` that `--resume` would refuse.
        let staging = staging_path(path);
        // Left by a create killed before it cleaned up (we hold the lock, so
        // no live create owns it); removing a symlink never touches its target.
        match fs_err::remove_file(&staging) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(LogError::Io(err)),
        }
        let file = create_private_file(&staging)?;
        let mut log = SessionLog::with_writer(Some(path.to_owned()), Box::new(file), 0);
        let placed = log
            .append(header)
            .and_then(|_| place_new(&staging, path).map_err(LogError::Io));
        match placed {
            Ok(Placed::Linked) => fs_err::remove_file(&staging).map_err(LogError::Io)?,
            Ok(Placed::Renamed) => {}
            Err(err) => {
                let _ = fs_err::remove_file(&staging);
                return Err(err);
            }
        }
        log.lock = Some(lock);
        Ok(log)
    }

    /// A new log written through `writer`, which the caller opened (an
    /// output file the user named, or a test's failing writer). `path` is
    /// what errors and [`SessionLog::path`] name. No lock is taken.
    pub fn over_writer(
        path: &Path,
        writer: Box<dyn LogWriter>,
        header: EventBody,
    ) -> Result<Self, LogError> {
        let mut log = SessionLog::with_writer(Some(path.to_owned()), writer, 0);
        log.append(header)?;
        Ok(log)
    }

    fn with_writer(path: Option<PathBuf>, writer: Box<dyn LogWriter>, acked_len: u64) -> Self {
        SessionLog {
            path,
            writer: Some(writer),
            acked_len,
            broken: false,
            events: Vec::new(),
            state: InvariantState::default(),
            lock: None,
        }
    }

    /// A log kept only in memory (tests, and `dsh replay` writing to stdout,
    /// which copies events out as they are appended).
    pub fn in_memory(header: EventBody) -> Result<Self, LogError> {
        let mut log = SessionLog {
            path: None,
            writer: None,
            acked_len: 0,
            broken: false,
            events: Vec::new(),
            state: InvariantState::default(),
            lock: None,
        };
        log.append(header)?;
        Ok(log)
    }

    /// Reopens an existing log for appending. A torn tail is cut off the file
    /// (and reported) so new lines never join it. Fails at once if another
    /// process holds the session.
    pub fn open(path: &Path) -> Result<(Self, Option<TornTail>), LogError> {
        Self::open_with(path, LockWait::Fail)
    }

    /// [`SessionLog::open`], waiting for the session lock when `wait` says
    /// so. The lock is taken before the log is read, so nothing another
    /// writer appends is missed; a symlink at `path` is refused.
    pub fn open_with(path: &Path, wait: LockWait) -> Result<(Self, Option<TornTail>), LogError> {
        let lock = SessionLock::acquire(path, wait)?;
        let loaded = load_with(path, Follow::NoSymlinks)?;
        let mut state = InvariantState::default();
        for event in &loaded.events {
            state
                .accept_event(event)
                .map_err(|source| LogError::Invariant {
                    kind: event.body.type_name(),
                    seq: event.seq,
                    source,
                })?;
        }
        #[allow(clippy::disallowed_methods)] // custom_flags/mode: std's OpenOptionsExt
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(|err| with_path(path, err))?;
        // Cut a torn tail, and anything after the valid prefix, so new lines
        // start on a line boundary.
        file.truncate_to(loaded.valid_len)
            .map_err(|err| with_path(path, err))?;
        Ok((
            SessionLog {
                path: Some(path.to_owned()),
                writer: Some(Box::new(file)),
                acked_len: loaded.valid_len,
                broken: false,
                events: loaded.events,
                state,
                lock: Some(lock),
            },
            loaded.torn_tail,
        ))
    }

    /// Checks the invariants, then writes the event as one line with a single
    /// write and returns it. On error nothing is acknowledged: an invariant
    /// failure writes nothing, and a failed write is cut back off the file.
    pub fn append(&mut self, body: EventBody) -> Result<&Event, LogError> {
        self.append_as(body, None)
    }

    /// [`SessionLog::append`] for an event of a subagent's nested run: the
    /// event is tagged with `agent_id` and checked against that run's own
    /// batch rules (inside the parent's open turn).
    pub fn append_as(
        &mut self,
        body: EventBody,
        agent_id: Option<&str>,
    ) -> Result<&Event, LogError> {
        let seq = self.events.len() as u64;
        if self.broken {
            return Err(LogError::Broken {
                path: self.path.clone().unwrap_or_default(),
            });
        }
        let before = self.state.clone();
        let accepted = match agent_id {
            Some(agent) => self.state.accept_nested(agent, &body),
            None => self.state.accept(seq, &body),
        };
        accepted.map_err(|source| LogError::Invariant {
            kind: body.type_name(),
            seq,
            source,
        })?;
        let event = Event {
            seq,
            ts: now(),
            body,
            agent_id: agent_id.map(str::to_owned),
        };
        if let Some(writer) = self.writer.as_mut() {
            let mut line = match encode(&event) {
                Ok(line) => line,
                Err(err) => {
                    self.state = before;
                    return Err(err);
                }
            };
            line.push('\n');
            if let Err(source) = writer.write_line(line.as_bytes()) {
                // A partial line would glue the next event onto it and make
                // the file unreadable: cut back to the last whole event.
                let recovered = writer.truncate_to(self.acked_len).is_ok();
                self.broken = !recovered;
                self.state = before;
                return Err(LogError::AppendFailed {
                    path: self.path.clone().unwrap_or_default(),
                    kind: event.body.type_name(),
                    seq,
                    source,
                    recovered,
                });
            }
            self.acked_len += line.len() as u64;
        }
        self.events.push(event);
        let last = self.events.len() - 1;
        Ok(&self.events[last])
    }

    /// The session lock this log holds, if any.
    pub fn lock(&self) -> Option<&SessionLock> {
        self.lock.as_ref()
    }

    /// Every event so far.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The file, if the log is on disk.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The open turn, if any.
    pub fn open_turn(&self) -> Option<u64> {
        self.state.open_turn()
    }

    /// The number of the last turn opened (0 before the first).
    pub fn last_turn(&self) -> u64 {
        self.state.last_turn()
    }

    /// Calls of the current batch with no result yet (what a crash left open).
    pub fn unresolved_calls(&self) -> Vec<String> {
        self.state.unresolved_calls()
    }

    /// Announced calls of the current batch with no `tool/call` yet.
    pub fn uncalled(&self) -> Vec<String> {
        self.state.uncalled()
    }
}

/// Serializes an event as one JSON line with `type`, `seq` and `ts` first
/// (then `agent_id`, then the body's fields).
pub fn encode(event: &Event) -> Result<String, LogError> {
    serde_json::to_string(&crate::line::Line(event))
        .map_err(|err| LogError::Encoding(err.to_string()))
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
