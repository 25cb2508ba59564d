//! What the `dsh hooks` subcommands share: the output format and dialect
//! arguments (checked against the registry), finding and reading a session log, excerpts.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::ValueEnum;
use dsh_session::store::PrefixMatch;
use dsh_stdio::stdio::errln;

/// Output format of the hooks commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people.
    Text,
    /// One JSON document (for CI and scripts).
    Json,
}

/// A hook dialect on the command line (`--dialect <id>`), checked against
/// the registered dialects; the error lists the known ids.
pub fn parse_dialect(id: &str) -> Result<dsh_protocol::Dialect, String> {
    dsh_core::dialects::registry()
        .parse(id)
        .map_err(|error| error.to_string())
}

/// A session log named by a path or an id (prefix) under `$DSH_HOME/sessions`.
pub(crate) fn resolve_session(session: &str) -> anyhow::Result<PathBuf> {
    let path = Path::new(session);
    if path.is_file() {
        return Ok(path.to_owned());
    }
    let home = dsh_core::Env::from_process().dsh_home()?;
    let dir = dsh_session::store::sessions_dir(&home);
    let looks_like_path = session.contains('/') || session.ends_with(".jsonl");
    if !looks_like_path {
        // An id builds a path under the sessions directory: only safe ids.
        dsh_session::validate_session_id(session)
            .with_context(|| format!("no session log {session}"))?;
    }
    let exact = dir.join(format!("{session}.jsonl"));
    if exact.is_file() {
        return Ok(exact);
    }
    let mut logs: Vec<(String, PathBuf)> = fs_err::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|p| p.extension().is_some_and(|ext| ext == "jsonl"))
                .filter_map(|p| Some((p.file_stem()?.to_string_lossy().into_owned(), p)))
                .collect()
        })
        .unwrap_or_default();
    logs.sort();
    // The store's one id-prefix resolver, over the log names (no log is
    // read to find one).
    match dsh_session::store::resolve_prefix(logs, |(id, _)| id, session) {
        PrefixMatch::One((_, path)) if !looks_like_path => Ok(path),
        PrefixMatch::One(_) | PrefixMatch::None => anyhow::bail!(
            "no session log {session}: not a file, and no session with that id in {} (`dsh sessions` lists them)",
            dir.display()
        ),
        PrefixMatch::Ambiguous(n) => {
            anyhow::bail!("{n} sessions start with {session}; give more of the id")
        }
    }
}

/// The current directory, canonicalized.
pub(crate) fn current_dir() -> anyhow::Result<PathBuf> {
    dsh_core::current_dir().context("cannot read the current directory")
}

/// The session events of `path`, with a torn tail reported.
pub(crate) fn load_session(path: &Path) -> anyhow::Result<Vec<dsh_protocol::Event>> {
    let loaded = dsh_session::load(path)
        .with_context(|| format!("cannot read the session log {}", path.display()))?;
    if let Some(torn) = loaded.torn_tail {
        errln!(
            "dsh: warning: {}:{}: incomplete last line ({} bytes) ignored",
            path.display(),
            torn.line,
            torn.bytes
        );
    }
    Ok(loaded.events)
}

/// First `max` characters of `text` on one line, for excerpts.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let flat = text.trim_end().replace('\n', "⏎");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    format!("{cut}…")
}
