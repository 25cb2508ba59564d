//! The Claude Code settings layer stack: managed → `--settings` → local →
//! project → user, in precedence order (highest first), each layer with
//! its source, its path, its document (parsed once, through the session's
//! [`ConfigFiles`]) and why it is disabled, if it is.
//!
//! Permissions, the Claude hook bridge (hooks, plugins, `env`), MCP
//! approvals and trust read these documents; nothing parses a settings
//! file a second time. Which keys mean what stays with each consumer; the
//! stack only knows the keys that switch a whole layer off.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::{ConfigFiles, Json};

/// Which settings layer a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsSource {
    /// Managed policy (`managed-settings.json`, `managed-settings.d/`).
    Managed,
    /// A `--settings` file (or the settings JSON given as the argument).
    Flag,
    /// `.claude/settings.local.json`.
    Local,
    /// `.claude/settings.json`.
    Project,
    /// `~/.claude/settings.json`.
    User,
}

impl SettingsSource {
    /// A short label.
    pub fn as_str(self) -> &'static str {
        match self {
            SettingsSource::Managed => "managed",
            SettingsSource::Flag => "flag",
            SettingsSource::Local => "local",
            SettingsSource::Project => "project",
            SettingsSource::User => "user",
        }
    }

    /// A repository's own layer (`.claude/settings.json` or
    /// `.claude/settings.local.json`).
    pub fn is_project(self) -> bool {
        match self {
            SettingsSource::Project | SettingsSource::Local => true,
            SettingsSource::Managed | SettingsSource::Flag | SettingsSource::User => false,
        }
    }
}

/// Why a layer (or what it configures) does not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DisabledReason {
    /// It cannot be read or is not JSON: nothing of it applies (the
    /// consumers report the error itself).
    Unreadable(String),
    /// `disableAllHooks: true` in this file switches the layer's hooks off.
    DisableAllHooks(PathBuf),
    /// Managed `allowManagedHooksOnly: true` (this file): only managed
    /// hooks run.
    ManagedHooksOnly(PathBuf),
    /// A repository's layer in a workspace nobody trusted: its `env`,
    /// `disableAllHooks` and allow rules wait for trust (its hooks wait
    /// one by one, `dsh hooks trust`).
    UntrustedWorkspace,
}

impl fmt::Display for DisabledReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DisabledReason::Unreadable(why) => write!(f, "unreadable: {why}"),
            DisabledReason::DisableAllHooks(path) => {
                write!(f, "hooks off: disableAllHooks in {}", path.display())
            }
            DisabledReason::ManagedHooksOnly(path) => {
                write!(f, "hooks off: allowManagedHooksOnly in {}", path.display())
            }
            DisabledReason::UntrustedWorkspace => f.write_str(
                "held back: the workspace is not trusted (env, disableAllHooks and allow rules wait)",
            ),
        }
    }
}

/// One settings layer.
#[derive(Debug, Clone)]
pub struct SettingsLayer {
    /// Which layer.
    pub source: SettingsSource,
    /// Its file (for inline `--settings` JSON, the argument).
    pub path: PathBuf,
    /// Its document, parsed once; `None`: there is no such file.
    pub json: Option<Json>,
    /// Why it does not apply, if it does not.
    pub disabled: Option<DisabledReason>,
}

/// Every Claude Code settings layer of a session, highest precedence first.
#[derive(Debug, Clone, Default)]
pub struct SettingsStack {
    layers: Vec<SettingsLayer>,
}

/// `--settings '{"env": …}'`: an argument that is not a file and starts
/// with `{` is the settings JSON itself (as `claude --settings` takes it).
pub fn inline_settings(arg: &Path) -> Option<&str> {
    let text = arg.to_str()?;
    (text.trim_start().starts_with('{') && !arg.exists()).then_some(text)
}

impl SettingsStack {
    /// Reads and parses `candidates` (precedence order, as the Claude
    /// bridge's discovery lists them) through `files`; `hold_project`: the
    /// workspace is not trusted, so a repository's layers are held back.
    pub fn load(
        files: &ConfigFiles,
        candidates: &[(PathBuf, SettingsSource)],
        hold_project: bool,
    ) -> SettingsStack {
        let mut layers: Vec<SettingsLayer> = candidates
            .iter()
            .map(|(path, source)| {
                let read = match inline_settings(path) {
                    Some(text) if *source == SettingsSource::Flag => Ok(Some(Json::parse(text))),
                    Some(_) | None => files.json(path),
                };
                let (json, disabled) = match read {
                    Ok(json) => {
                        let syntax = json
                            .as_ref()
                            .and_then(|json| json.document().err().map(ToString::to_string));
                        (json, syntax.map(DisabledReason::Unreadable))
                    }
                    Err(error) => (None, Some(DisabledReason::Unreadable(error.to_string()))),
                };
                SettingsLayer {
                    source: *source,
                    path: path.clone(),
                    json,
                    disabled,
                }
            })
            .collect();
        let switch = |layer: &SettingsLayer, key: &str| {
            let document = layer.json.as_ref()?.document().ok()?;
            document.get(key).and_then(|on| on.as_bool())
        };
        let managed = |key: &str| {
            layers
                .iter()
                .filter(|layer| layer.source == SettingsSource::Managed)
                .filter_map(|layer| switch(layer, key).map(|on| (on, layer.path.clone())))
                .next_back()
        };
        let managed_disable = managed("disableAllHooks");
        let managed_only = managed("allowManagedHooksOnly");
        let other_disable = layers
            .iter()
            .filter(|layer| layer.source != SettingsSource::Managed)
            .filter(|layer| !(hold_project && layer.source.is_project()))
            .find_map(|layer| switch(layer, "disableAllHooks").map(|on| (on, layer.path.clone())));
        for layer in &mut layers {
            if layer.disabled.is_some() {
                continue;
            }
            let managed = layer.source == SettingsSource::Managed;
            layer.disabled = match (&managed_disable, &managed_only, &other_disable) {
                (Some((true, path)), _, _) => Some(DisabledReason::DisableAllHooks(path.clone())),
                (_, Some((true, path)), _) if !managed => {
                    Some(DisabledReason::ManagedHooksOnly(path.clone()))
                }
                (_, _, Some((true, path))) if !managed => {
                    Some(DisabledReason::DisableAllHooks(path.clone()))
                }
                _ if hold_project && layer.source.is_project() && layer.json.is_some() => {
                    Some(DisabledReason::UntrustedWorkspace)
                }
                _ => None,
            };
        }
        SettingsStack { layers }
    }

    /// The layers, highest precedence first.
    pub fn layers(&self) -> &[SettingsLayer] {
        &self.layers
    }

    /// The layer of `path`.
    pub fn get(&self, path: &Path) -> Option<&SettingsLayer> {
        self.layers.iter().find(|layer| layer.path == path)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn layers_keep_their_order_parse_and_reasons() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user.json");
        let project = dir.path().join("project.json");
        let local = dir.path().join("local.json");
        std::fs::write(&user, r#"{"disableAllHooks": false}"#).unwrap();
        std::fs::write(&project, r#"{"disableAllHooks": true}"#).unwrap();
        std::fs::write(&local, "{ not json").unwrap();
        let candidates = [
            (PathBuf::from(r#"{"env":{"A":"1"}}"#), SettingsSource::Flag),
            (local.clone(), SettingsSource::Local),
            (project.clone(), SettingsSource::Project),
            (dir.path().join("missing.json"), SettingsSource::Managed),
            (user.clone(), SettingsSource::User),
        ];
        let files = ConfigFiles::new();
        let held = SettingsStack::load(&files, &candidates, true);
        let reasons: Vec<Option<&DisabledReason>> = held
            .layers()
            .iter()
            .map(|layer| layer.disabled.as_ref())
            .collect();
        assert!(matches!(reasons[1], Some(DisabledReason::Unreadable(_))));
        assert_eq!(reasons[2], Some(&DisabledReason::UntrustedWorkspace));
        assert_eq!([reasons[0], reasons[3], reasons[4]], [None, None, None]);
        assert!(held.layers()[3].json.is_none());
        // Trusted: the project's switch turns every non-managed layer off.
        let trusted = SettingsStack::load(&files, &candidates, false);
        assert_eq!(
            trusted.get(&user).unwrap().disabled,
            Some(DisabledReason::DisableAllHooks(project.clone()))
        );
        // Each file was parsed once for both stacks.
        for path in [&user, &project, &local] {
            assert_eq!(files.parses(path), 1, "{}", path.display());
        }
    }
}
