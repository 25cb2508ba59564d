//! What the configured entries of every dialect share, whatever their
//! file format: the layer an entry comes from (which decides whether dsh's
//! project trust gates it and what the log's `trust` says), whether it
//! runs ([`EntryStatus`], with the dialect's own reasons for being off),
//! a file or part of one left out ([`FileProblem`]), the listing row of a
//! command hook, and the session plugin that is built
//! only when an entry runs.
//!
//! A dialect whose configuration is a list of entries implements
//! [`Entry`] on its entry and [`EntryConfig`] on its configuration, and
//! gets [`DialectConfig`] from them: the listing's status, excluding
//! untrusted origins and building the plugin only when something runs are
//! written once, here.
//!
//! What it is not: no discovery and no file format; those stay with each
//! dialect.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_protocol::Dialect;
use dsh_seams::Plugin;

use crate::project_settings::HeldBack;
use crate::registry::{
    BuiltPlugin, ConfigFile, ConfiguredHook, DialectConfig, HookScope, LoadError, SessionHooks,
};

/// The layer a configured entry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    /// The user's own files: always trusted.
    User,
    /// The project's (repository's) files: gated by dsh's project trust.
    Project,
}

impl Layer {
    /// `user` / `project`: the listing's word and `hook/result.trust`.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::User => "user",
            Layer::Project => "project",
        }
    }
}

impl From<Layer> for HookScope {
    fn from(layer: Layer) -> Self {
        match layer {
            Layer::User => HookScope::User,
            Layer::Project => HookScope::Project,
        }
    }
}

impl ConfigFile {
    /// The file at `path`, of `layer`.
    pub fn new(path: PathBuf, layer: Layer) -> Self {
        ConfigFile {
            path,
            layer: layer.as_str(),
        }
    }
}

impl ConfiguredHook {
    /// The row of a command hook from `layer` that runs `command`, active,
    /// with the other fields empty for the dialect to fill in.
    pub fn command(layer: Layer, command: String) -> Self {
        ConfiguredHook {
            event: String::new(),
            matcher: None,
            handler: format!("command: {command}"),
            command,
            timeout_secs: 0.0,
            file: Default::default(),
            origin: String::new(),
            identity: Default::default(),
            scope: layer.into(),
            active: true,
            status: "active".to_owned(),
            plugin: None,
            runs_in: Default::default(),
        }
    }
}

/// A configuration file, or part of one, a dialect leaves out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblem {
    /// The file.
    pub file: PathBuf,
    /// What is wrong (and what the tool does about it).
    pub message: String,
}

impl FileProblem {
    /// `file`'s problem `message`.
    pub fn new(file: &Path, message: impl Into<String>) -> Self {
        FileProblem {
            file: file.to_path_buf(),
            message: message.into(),
        }
    }

    /// The start-up notice: `<file>: <message>`.
    pub fn notice(&self) -> String {
        format!("{}: {}", self.file.display(), self.message)
    }
}

/// Whether a configured entry runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryStatus<R> {
    /// It runs.
    Active,
    /// The dialect's own configuration switches it off, for reason `R`.
    Off(R),
    /// Left out by dsh's trust (an untrusted project hook), with why.
    Excluded(String),
}

/// A dialect's reason for an entry being off, as `dsh hooks list` shows it.
pub trait OffReason {
    /// The listing's status of an entry off for this reason.
    fn listing(&self) -> String;

    /// The listing's status of an entry dsh's trust left out for `why`.
    fn excluded(why: &str) -> String {
        format!("disabled: {why}")
    }
}

/// An entry switched off by the setting named (`disabled: <setting>`).
impl OffReason for &'static str {
    fn listing(&self) -> String {
        format!("disabled: {self}")
    }
}

/// Why an entry does not run, in the words most dialects list it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Off {
    /// Configured off (`disabled: <why>`).
    Disabled(String),
    /// dsh cannot honour it (`unsupported: <why>`).
    Unsupported(String),
}

impl OffReason for Off {
    fn listing(&self) -> String {
        match self {
            Off::Disabled(why) => format!("disabled: {why}"),
            Off::Unsupported(why) => format!("unsupported: {why}"),
        }
    }
}

impl EntryStatus<Off> {
    /// Configured off, for `why`.
    pub fn disabled(why: impl Into<String>) -> Self {
        EntryStatus::Off(Off::Disabled(why.into()))
    }

    /// dsh cannot honour it, for `why`.
    pub fn unsupported(why: impl Into<String>) -> Self {
        EntryStatus::Off(Off::Unsupported(why.into()))
    }
}

impl<R: OffReason> EntryStatus<R> {
    /// Whether it runs.
    pub fn is_active(&self) -> bool {
        matches!(self, EntryStatus::Active)
    }

    /// The status as `dsh hooks list` shows it.
    pub fn listing(&self) -> String {
        match self {
            EntryStatus::Active => "active".to_owned(),
            EntryStatus::Off(reason) => reason.listing(),
            EntryStatus::Excluded(why) => R::excluded(why),
        }
    }
}

/// One configured entry of an [`EntryConfig`].
pub trait Entry {
    /// Why the dialect switches an entry off.
    type Off: OffReason;

    /// Whether it runs.
    fn status(&self) -> &EntryStatus<Self::Off>;

    /// Whether it runs, to change.
    fn status_mut(&mut self) -> &mut EntryStatus<Self::Off>;

    /// Its `dsh hooks list` row (and `origin`, what trust keys it by);
    /// `active` and `status` are set from [`Entry::status`].
    fn row(&self) -> ConfiguredHook;
}

/// A dialect configuration that is a list of [`Entry`]s; its
/// [`DialectConfig`] is written once, below.
pub trait EntryConfig: Clone + fmt::Debug + Send + Sync + 'static {
    /// The entry type.
    type Entry: Entry;

    /// The dialect it belongs to.
    const DIALECT: Dialect;

    /// Every entry, in configuration order.
    fn entries(&self) -> &[Self::Entry];

    /// Every entry, to change.
    fn entries_mut(&mut self) -> &mut [Self::Entry];

    /// Start-up notices.
    fn notices(&self) -> Vec<String>;

    /// Project settings left out because the workspace is not trusted.
    fn held_back(&self) -> Vec<HeldBack> {
        Vec::new()
    }

    /// The session's plugin; built only when some entry is active.
    fn plugin(self, session: &SessionHooks<'_>) -> Arc<dyn Plugin>;
}

impl<C: EntryConfig> DialectConfig for C {
    fn dialect(&self) -> Dialect {
        C::DIALECT
    }

    fn clone_box(&self) -> Box<dyn DialectConfig> {
        Box::new(self.clone())
    }

    fn hooks(&self) -> Vec<ConfiguredHook> {
        (self.entries().iter())
            .map(|entry| ConfiguredHook {
                // Excluded by dsh's trust still counts: that is what asking
                // is for.
                active: !matches!(entry.status(), EntryStatus::Off(_)),
                status: entry.status().listing(),
                ..entry.row()
            })
            .collect()
    }

    fn held_back(&self) -> Vec<HeldBack> {
        EntryConfig::held_back(self)
    }

    fn notices(&self) -> Vec<String> {
        EntryConfig::notices(self)
    }

    fn disable_origins(&mut self, origins: &[String], reason: &str) {
        for entry in self.entries_mut() {
            if entry.status().is_active() && origins.contains(&entry.row().origin) {
                *entry.status_mut() = EntryStatus::Excluded(reason.to_owned());
            }
        }
    }

    fn into_plugin(self: Box<Self>, session: &SessionHooks<'_>) -> Result<BuiltPlugin, LoadError> {
        let active = self
            .entries()
            .iter()
            .any(|entry| entry.status().is_active());
        let plugin = active.then(|| self.plugin(session));
        Ok(BuiltPlugin {
            plugin,
            notices: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_name_their_trust_and_scope() {
        assert_eq!(
            [Layer::User, Layer::Project].map(Layer::as_str),
            ["user", "project"]
        );
        assert_eq!(HookScope::from(Layer::Project), HookScope::Project);
        assert_eq!(
            ConfigFile::new("/p".into(), Layer::Project).layer,
            "project"
        );
        let row = ConfiguredHook::command(Layer::User, "echo hi".to_owned());
        assert_eq!(
            (row.handler.as_str(), row.command.as_str(), row.scope),
            ("command: echo hi", "echo hi", HookScope::User)
        );
    }
}
