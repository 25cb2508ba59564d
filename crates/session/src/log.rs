//! Appending to and loading a JSONL session log.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use dsh_protocol::{Event, EventBody};
use serde_json::{Map, Value};

use crate::invariants::{InvariantError, InvariantState};

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
    let mut bytes = Vec::new();
    fs_err::File::open(path)?.read_to_end(&mut bytes)?;
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
    file: Option<fs_err::File>,
    events: Vec<Event>,
    state: InvariantState,
}

impl SessionLog {
    /// Creates a new log at `path` (which must not exist) and appends the header.
    pub fn create(path: &Path, header: EventBody) -> Result<Self, LogError> {
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            fs_err::create_dir_all(parent)?;
        }
        let file = fs_err::OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(path)?;
        let mut log = SessionLog {
            path: Some(path.to_owned()),
            file: Some(file),
            events: Vec::new(),
            state: InvariantState::default(),
        };
        log.append(header)?;
        Ok(log)
    }

    /// A log kept only in memory (tests, and `dsh replay` writing to stdout,
    /// which copies events out as they are appended).
    pub fn in_memory(header: EventBody) -> Result<Self, LogError> {
        let mut log = SessionLog {
            path: None,
            file: None,
            events: Vec::new(),
            state: InvariantState::default(),
        };
        log.append(header)?;
        Ok(log)
    }

    /// Reopens an existing log for appending. A torn tail is cut off the file
    /// (and reported) so new lines never join it.
    pub fn open(path: &Path) -> Result<(Self, Option<TornTail>), LogError> {
        let loaded = load(path)?;
        let mut state = InvariantState::default();
        for event in &loaded.events {
            state
                .accept(event.seq, &event.body)
                .map_err(|source| LogError::Invariant {
                    kind: event.body.type_name(),
                    seq: event.seq,
                    source,
                })?;
        }
        let mut file = fs_err::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)?;
        if loaded.torn_tail.is_some() {
            file.set_len(loaded.valid_len)?;
        }
        file.seek(SeekFrom::End(0))?;
        Ok((
            SessionLog {
                path: Some(path.to_owned()),
                file: Some(file),
                events: loaded.events,
                state,
            },
            loaded.torn_tail,
        ))
    }

    /// Checks the invariants, then writes the event as one line with a single
    /// write and returns it. On error nothing is written.
    pub fn append(&mut self, body: EventBody) -> Result<&Event, LogError> {
        let seq = self.events.len() as u64;
        self.state
            .accept(seq, &body)
            .map_err(|source| LogError::Invariant {
                kind: body.type_name(),
                seq,
                source,
            })?;
        let event = Event {
            seq,
            ts: now(),
            body,
        };
        if let Some(file) = self.file.as_mut() {
            let mut line = encode(&event)?;
            line.push('\n');
            // One write call per event: the kernel has the whole line once
            // `write_all` returns, so the event survives the process dying.
            file.write_all(line.as_bytes())?;
            file.flush()?;
        }
        self.events.push(event);
        let last = self.events.len() - 1;
        Ok(&self.events[last])
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

/// Serializes an event as one JSON line with `type`, `seq` and `ts` first.
pub fn encode(event: &Event) -> Result<String, LogError> {
    let body =
        serde_json::to_value(&event.body).map_err(|err| LogError::Encoding(err.to_string()))?;
    let Value::Object(fields) = body else {
        return Err(LogError::Encoding("event body is not an object".to_owned()));
    };
    let mut ordered = Map::new();
    let mut fields = fields;
    if let Some(kind) = fields.shift_remove("type") {
        ordered.insert("type".to_owned(), kind);
    }
    ordered.insert("seq".to_owned(), Value::from(event.seq));
    ordered.insert("ts".to_owned(), Value::from(event.ts.clone()));
    ordered.extend(fields);
    serde_json::to_string(&Value::Object(ordered))
        .map_err(|err| LogError::Encoding(err.to_string()))
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
