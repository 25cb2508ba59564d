//! What the configured entries of every dialect share, whatever their
//! file format: the layer an entry comes from (which decides whether dsh's
//! project trust gates it and what the log's `trust` says), the listing
//! row of a command hook, and the session plugin that is built only when
//! an entry runs.
//!
//! What it is not: no discovery, no file format and no status vocabulary;
//! those stay with each dialect.

use std::path::PathBuf;
use std::sync::Arc;

use dsh_seams::Plugin;

use crate::registry::{BuiltPlugin, ConfigFile, ConfiguredHook, HookScope};

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
        }
    }
}

impl BuiltPlugin {
    /// The plugin `build` makes, when `active` (some entry runs); else no
    /// plugin. No notices.
    pub fn when(active: bool, build: impl FnOnce() -> Arc<dyn Plugin>) -> Self {
        BuiltPlugin {
            plugin: active.then(build),
            notices: Vec::new(),
        }
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
        assert!(BuiltPlugin::when(false, || unreachable!()).plugin.is_none());
    }
}
