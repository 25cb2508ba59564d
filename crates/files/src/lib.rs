//! dsh-files: the configuration files of one session, read from disk once.
//!
//! What this crate is for: [`ConfigFiles`] is a shared, memoizing reader.
//! `SessionSpec::resolve` makes one and hands clones to everything that
//! reads configuration (permission layers, the hook dialects, MCP
//! discovery, trust, settings `env`): the first reader of a path reads it,
//! every later one gets the same text (or the same error). So a file is
//! opened once per session, and every consumer sees the same contents —
//! the trust decision is taken on the text that runs.
//!
//! JSON and TOML files are parsed once too ([`ConfigFiles::json`],
//! [`ConfigFiles::toml`]): consumers read the one [`Json`] or [`Toml`]
//! document, and [`ConfigFiles::parses`] counts how often a file's text
//! went to a parser. [`settings`] is the Claude Code
//! settings layer stack built from those documents.
//!
//! What it is not: a watcher, or the owner of any key's meaning. It holds
//! text and documents, not settings (each consumer reads its own keys), and
//! never notices a file changing after it was read (a new session reads
//! again). Files dsh writes (`trust.json` after a trust answer,
//! `~/.claude.json` after a consent answer) are read again by whoever reads
//! them next through a fresh reader.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

mod json;
pub mod settings;
mod toml;

pub use json::{Json, JsonSyntax};
pub use toml::{Toml, TomlError};

/// One read: the text, or the error's kind and message (an error is
/// remembered too, so a missing file is looked up once).
#[derive(Debug, Clone)]
enum Read {
    Text(Arc<str>),
    Failed(io::ErrorKind, String),
}

#[derive(Debug, Default)]
struct Cache {
    reads: HashMap<PathBuf, Read>,
    /// How often each path was read from disk (tests check "once").
    disk_reads: HashMap<PathBuf, usize>,
    /// The JSON files parsed, each once.
    parsed: HashMap<PathBuf, Json>,
    /// The TOML files parsed, each once.
    parsed_toml: HashMap<PathBuf, Toml>,
    /// How often each path's text went to a parser: a [`ConfigFiles::json`]
    /// or [`ConfigFiles::toml`] parse, or text handed out (its reader
    /// parses it).
    parses: HashMap<PathBuf, usize>,
}

/// A reader of configuration files. [`ConfigFiles::new`] memoizes: clones
/// share one cache, so each file is read from disk once. The default
/// reads through to disk every time (a library caller that does not hold
/// a session's reader sees the file as it is now).
#[derive(Debug, Clone, Default)]
pub struct ConfigFiles {
    cache: Option<Arc<Mutex<Cache>>>,
}

impl ConfigFiles {
    /// A memoizing reader (nothing read yet).
    pub fn new() -> Self {
        ConfigFiles {
            cache: Some(Arc::default()),
        }
    }

    fn lock(&self) -> Option<MutexGuard<'_, Cache>> {
        self.cache
            .as_ref()
            .map(|cache| cache.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The text of `path`, read from disk the first time it is asked for.
    /// The error of a failed read (not found, not UTF-8, …) is the same
    /// kind every time, with the message of the first read.
    pub fn read_to_string(&self, path: &Path) -> io::Result<String> {
        // std, not fs-err: callers name the path in their own errors.
        #[allow(clippy::disallowed_methods)]
        self.read_with(path, |path| std::fs::read_to_string(path))
    }

    /// [`ConfigFiles::read_to_string`] with the caller's own way of
    /// reading the first time (fs-err's messages, a non-blocking open that
    /// refuses a FIFO, …).
    pub fn read_with(
        &self,
        path: &Path,
        read: impl FnOnce(&Path) -> io::Result<String>,
    ) -> io::Result<String> {
        let text = self.text_with(path, read)?;
        if let Some(mut cache) = self.lock() {
            *cache.parses.entry(path.to_owned()).or_default() += 1;
        }
        Ok(text.to_string())
    }

    /// The memoized text (nothing counted as parsed).
    fn text_with(
        &self,
        path: &Path,
        read: impl FnOnce(&Path) -> io::Result<String>,
    ) -> io::Result<Arc<str>> {
        if self.cache.is_none() {
            return read(path).map(Arc::from);
        }
        if let Some(read) = self.lock().and_then(|cache| cache.reads.get(path).cloned()) {
            return answer(&read);
        }
        let read = match read(path) {
            Ok(text) => Read::Text(Arc::from(text)),
            Err(error) => Read::Failed(error.kind(), error.to_string()),
        };
        let Some(mut cache) = self.lock() else {
            return answer(&read);
        };
        *cache.disk_reads.entry(path.to_owned()).or_default() += 1;
        let read = cache.reads.entry(path.to_owned()).or_insert(read).clone();
        answer(&read)
    }

    /// The JSON file `path`, parsed the first time it is asked for (every
    /// later caller gets the same document); `None` when it does not
    /// exist. Text that is not JSON is a [`Json`] whose document is the
    /// syntax error, so each consumer words it as before.
    pub fn json(&self, path: &Path) -> io::Result<Option<Json>> {
        // std, not fs-err: callers name the path in their own errors.
        #[allow(clippy::disallowed_methods)]
        self.json_with(path, |path| std::fs::read_to_string(path))
    }

    /// [`ConfigFiles::json`] with the caller's own way of reading the
    /// first time (as [`ConfigFiles::read_with`]).
    pub fn json_with(
        &self,
        path: &Path,
        read: impl FnOnce(&Path) -> io::Result<String>,
    ) -> io::Result<Option<Json>> {
        self.parsed_with(path, read)
    }

    /// The TOML file `path`, parsed the first time it is asked for (every
    /// later caller gets the same document); `None` when it does not
    /// exist. Text that is not TOML is a [`Toml`] whose every typed view
    /// is the syntax error, worded as `toml::from_str` words it.
    pub fn toml(&self, path: &Path) -> io::Result<Option<Toml>> {
        // std, not fs-err: callers name the path in their own errors.
        #[allow(clippy::disallowed_methods)]
        self.toml_with(path, |path| std::fs::read_to_string(path))
    }

    /// [`ConfigFiles::toml`] with the caller's own way of reading the
    /// first time (as [`ConfigFiles::read_with`]).
    pub fn toml_with(
        &self,
        path: &Path,
        read: impl FnOnce(&Path) -> io::Result<String>,
    ) -> io::Result<Option<Toml>> {
        self.parsed_with(path, read)
    }

    /// The parse-once reader behind [`ConfigFiles::json_with`] and
    /// [`ConfigFiles::toml_with`].
    fn parsed_with<D: Document>(
        &self,
        path: &Path,
        read: impl FnOnce(&Path) -> io::Result<String>,
    ) -> io::Result<Option<D>> {
        if let Some(document) = self
            .lock()
            .and_then(|mut cache| D::parsed(&mut cache).get(path).cloned())
        {
            return Ok(Some(document));
        }
        let text = match self.text_with(path, read) {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error),
        };
        let document = D::parse(text);
        if let Some(mut cache) = self.lock() {
            *cache.parses.entry(path.to_owned()).or_default() += 1;
            let document = D::parsed(&mut cache)
                .entry(path.to_owned())
                .or_insert(document)
                .clone();
            return Ok(Some(document));
        }
        Ok(Some(document))
    }

    /// The text of `path`, `None` when it does not exist.
    pub fn read_if_exists(&self, path: &Path) -> io::Result<Option<String>> {
        match self.read_to_string(path) {
            Ok(text) => Ok(Some(text)),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// How many times `path` was read from disk through this reader (and
    /// its clones).
    pub fn disk_reads(&self, path: &Path) -> usize {
        self.lock()
            .and_then(|cache| cache.disk_reads.get(path).copied())
            .unwrap_or(0)
    }

    /// How many times the text of `path` went to a parser through this
    /// reader (and its clones): its [`ConfigFiles::json`] parse, plus every
    /// copy of its text handed out (whoever asked for the text parses it).
    pub fn parses(&self, path: &Path) -> usize {
        self.lock()
            .and_then(|cache| cache.parses.get(path).copied())
            .unwrap_or(0)
    }

    /// Every path whose text went to a parser, with how often (tests).
    pub fn all_parses(&self) -> Vec<(PathBuf, usize)> {
        let mut all: Vec<(PathBuf, usize)> = self
            .lock()
            .map(|cache| {
                cache
                    .parses
                    .iter()
                    .map(|(path, count)| (path.clone(), *count))
                    .collect()
            })
            .unwrap_or_default();
        all.sort();
        all
    }

    /// Every path read from disk, with how often (tests).
    pub fn all_disk_reads(&self) -> Vec<(PathBuf, usize)> {
        let mut all: Vec<(PathBuf, usize)> = self
            .lock()
            .map(|cache| {
                cache
                    .disk_reads
                    .iter()
                    .map(|(path, count)| (path.clone(), *count))
                    .collect()
            })
            .unwrap_or_default();
        all.sort();
        all
    }

    /// Forgets `path` (dsh wrote it): the next reader reads it again.
    pub fn forget(&self, path: &Path) {
        if let Some(mut cache) = self.lock() {
            cache.reads.remove(path);
            cache.parsed.remove(path);
            cache.parsed_toml.remove(path);
        }
    }
}

/// Readers compare equal: which reader a discovery reads through is not
/// part of what it describes (its paths and options are).
impl PartialEq for ConfigFiles {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl Eq for ConfigFiles {}

/// A parsed file kind the cache keeps: its parse and its slot.
trait Document: Clone {
    fn parse(text: Arc<str>) -> Self;
    fn parsed(cache: &mut Cache) -> &mut HashMap<PathBuf, Self>;
}

impl Document for Json {
    fn parse(text: Arc<str>) -> Self {
        Json::parse(text)
    }
    fn parsed(cache: &mut Cache) -> &mut HashMap<PathBuf, Self> {
        &mut cache.parsed
    }
}

impl Document for Toml {
    fn parse(text: Arc<str>) -> Self {
        Toml::parse(text)
    }
    fn parsed(cache: &mut Cache) -> &mut HashMap<PathBuf, Self> {
        &mut cache.parsed_toml
    }
}

fn answer(read: &Read) -> io::Result<Arc<str>> {
    match read {
        Read::Text(text) => Ok(Arc::clone(text)),
        Read::Failed(kind, message) => Err(io::Error::new(*kind, message.clone())),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_from_disk_once_and_clones_share_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{\"a\":1}").unwrap();
        let files = ConfigFiles::new();
        let other = files.clone();
        assert_eq!(files.read_to_string(&path).unwrap(), "{\"a\":1}");
        // Changed on disk: the session keeps the text it read.
        std::fs::write(&path, "{\"a\":2}").unwrap();
        assert_eq!(other.read_to_string(&path).unwrap(), "{\"a\":1}");
        assert_eq!(files.disk_reads(&path), 1);
        // A fresh reader reads again; the default reads through.
        assert_eq!(
            ConfigFiles::new().read_to_string(&path).unwrap(),
            "{\"a\":2}"
        );
        let through = ConfigFiles::default();
        assert_eq!(through.read_to_string(&path).unwrap(), "{\"a\":2}");
        std::fs::write(&path, "{\"a\":3}").unwrap();
        assert_eq!(through.read_to_string(&path).unwrap(), "{\"a\":3}");
    }

    #[test]
    fn a_missing_file_is_looked_up_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing.toml");
        let files = ConfigFiles::new();
        assert!(files.read_if_exists(&path).unwrap().is_none());
        assert_eq!(
            files.read_to_string(&path).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert_eq!(files.disk_reads(&path), 1);
        files.forget(&path);
        std::fs::write(&path, "x").unwrap();
        assert_eq!(files.read_to_string(&path).unwrap(), "x");
        assert_eq!(files.disk_reads(&path), 2);
    }

    #[test]
    fn a_json_file_is_parsed_once_and_its_errors_keep_their_position() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{\"a\": 1}").unwrap();
        let files = ConfigFiles::new();
        let first = files.json(&path).unwrap().unwrap();
        let again = files.clone().json(&path).unwrap().unwrap();
        assert_eq!(first.document().unwrap()["a"], 1);
        assert!(std::ptr::eq(
            first.document().unwrap(),
            again.document().unwrap()
        ));
        assert_eq!((files.parses(&path), files.disk_reads(&path)), (1, 1));
        // Text handed out is text someone parses again.
        files.read_to_string(&path).unwrap();
        assert_eq!(files.parses(&path), 2);
        assert!(files.json(&dir.path().join("none.json")).unwrap().is_none());

        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{\n  \"a\": [1,\n}").unwrap();
        let json = files.json(&bad).unwrap().unwrap();
        let syntax = json.document().unwrap_err();
        let direct = serde_json::from_str::<serde_json::Value>(json.text()).unwrap_err();
        assert_eq!(
            (syntax.line, syntax.column),
            (direct.line(), direct.column())
        );
        assert_eq!(syntax.to_string(), direct.to_string());
        // A document of the wrong shape is explained as for the text.
        #[derive(Debug, serde::Deserialize)]
        struct Shape {
            #[allow(dead_code)]
            a: String,
        }
        let typed = files.json(&path).unwrap().unwrap().deserialize::<Shape>();
        let direct = serde_json::from_str::<Shape>("{\"a\": 1}").unwrap_err();
        assert_eq!(typed.unwrap_err().to_string(), direct.to_string());
    }

    #[test]
    fn a_toml_file_is_parsed_once_and_its_errors_read_as_toml_words_them() {
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct Server {
            command: String,
        }
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct Servers {
            mcp_servers: std::collections::BTreeMap<String, Server>,
        }
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct Notify {
            #[serde(default)]
            notify: Option<Vec<String>>,
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let text = "notify = [\"n\"]\n[mcp_servers.b]\ncommand = \"x\"\n[mcp_servers.a]\ncommand = \"y\"\n";
        std::fs::write(&path, text).unwrap();
        let files = ConfigFiles::new();
        let first = files.toml(&path).unwrap().unwrap();
        let again = files.clone().toml(&path).unwrap().unwrap();
        // Two typed views of the one parse, each as `toml::from_str` reads it.
        assert_eq!(
            first.deserialize::<Servers>().unwrap(),
            ::toml::from_str::<Servers>(text).unwrap()
        );
        assert_eq!(
            again.deserialize::<Notify>().unwrap(),
            ::toml::from_str::<Notify>(text).unwrap()
        );
        assert_eq!((files.parses(&path), files.disk_reads(&path)), (1, 1));
        assert!(files.toml(&dir.path().join("none.toml")).unwrap().is_none());

        // A syntax error: the same message, span and rendered excerpt.
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "a = 1\n[hooks\n").unwrap();
        let toml = files.toml(&bad).unwrap().unwrap();
        let direct = ::toml::from_str::<Notify>(toml.text()).unwrap_err();
        for error in [
            toml.syntax().unwrap().clone(),
            toml.deserialize::<Notify>().unwrap_err(),
        ] {
            assert_eq!(error.to_string(), direct.to_string());
            assert_eq!(error.message(), direct.message());
            assert_eq!(error.span(), direct.span());
            assert!(error.span().is_some());
        }
        // A document of the wrong shape: where `toml::from_str` puts it.
        let shape = dir.path().join("shape.toml");
        std::fs::write(&shape, "x = 1\nnotify = 5\n").unwrap();
        let toml = files.toml(&shape).unwrap().unwrap();
        assert!(toml.syntax().is_none());
        let typed = toml.deserialize::<Notify>().unwrap_err();
        let direct = ::toml::from_str::<Notify>(toml.text()).unwrap_err();
        assert_eq!(typed.to_string(), direct.to_string());
        assert_eq!(typed.span(), direct.span());
        assert!(typed.to_string().contains("line 2"), "{typed}");
        // Forgotten (dsh wrote it): parsed again.
        files.forget(&path);
        files.toml(&path).unwrap().unwrap();
        assert_eq!(files.parses(&path), 2);
    }
}
