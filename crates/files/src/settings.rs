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
    /// The error of a file that exists but could not be read (its kind
    /// and message).
    read_error: Option<(std::io::ErrorKind, String)>,
}

impl SettingsLayer {
    /// Why the file could not be read, when it exists but could not be
    /// (the same error a consumer reading it itself would get; a missing
    /// file is not an error, its `json` is `None`).
    pub fn read_error(&self) -> Option<std::io::Error> {
        self.read_error
            .as_ref()
            .map(|(kind, message)| std::io::Error::new(*kind, message.clone()))
    }
}

/// Every Claude Code settings layer of a session, highest precedence first,
/// and the one decision of which files switch hooks off.
#[derive(Debug, Clone, Default)]
pub struct SettingsStack {
    layers: Vec<SettingsLayer>,
    switches: HookSwitches,
    hold_project: bool,
}

/// Stacks compare by what they decided: each layer's source, path and
/// reason, and the hook switches (a document is its file's, read through
/// the session's reader).
impl PartialEq for SettingsStack {
    fn eq(&self, other: &Self) -> bool {
        self.switches == other.switches
            && self.hold_project == other.hold_project
            && self.layers.len() == other.layers.len()
            && self
                .layers
                .iter()
                .zip(&other.layers)
                .all(|(a, b)| a.source == b.source && a.path == b.path && a.disabled == b.disabled)
    }
}

impl Eq for SettingsStack {}

/// `--settings '{"env": …}'`: an argument that is not a file and starts
/// with `{` is the settings JSON itself (as `claude --settings` takes it).
pub fn inline_settings(arg: &Path) -> Option<&str> {
    let text = arg.to_str()?;
    (text.trim_start().starts_with('{') && !arg.exists()).then_some(text)
}

/// What one settings file sets of the keys that switch hooks off.
#[derive(Debug, Clone, Copy)]
struct SwitchesOf<'a> {
    /// Which layer the file is.
    source: SettingsSource,
    /// The file.
    path: &'a Path,
    /// Its `disableAllHooks`, when it sets a boolean there.
    disable_all_hooks: Option<bool>,
    /// Its `allowManagedHooksOnly`, when it sets a boolean there.
    allow_managed_hooks_only: Option<bool>,
}

/// Which files decide whether hooks run: each `(value, file)` of the file
/// whose setting wins. Decided once, when the stack loads
/// ([`SettingsStack::hook_switches`]): the layers' reasons and the Claude
/// bridge's hook statuses and notices read this one decision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookSwitches {
    /// Managed policy's `disableAllHooks`.
    pub managed_disable: Option<(bool, PathBuf)>,
    /// Managed policy's `allowManagedHooksOnly` (honoured only there).
    pub managed_only: Option<(bool, PathBuf)>,
    /// The other layers' `disableAllHooks`.
    pub other_disable: Option<(bool, PathBuf)>,
}

impl HookSwitches {
    /// Decides from `files` in precedence order. The highest-precedence
    /// file that sets a key wins; managed drop-ins come after their base
    /// file and override it, so among managed files the last one wins.
    /// `hold_project`: a repository's own layers wait for a trusted
    /// workspace, so their switch does not count.
    fn decide(files: &[SwitchesOf<'_>], hold_project: bool) -> HookSwitches {
        let managed = |key: fn(&SwitchesOf<'_>) -> Option<bool>| {
            files
                .iter()
                .filter(|file| file.source == SettingsSource::Managed)
                .filter_map(|file| key(file).map(|on| (on, file.path.to_owned())))
                .next_back()
        };
        HookSwitches {
            managed_disable: managed(|file| file.disable_all_hooks),
            managed_only: managed(|file| file.allow_managed_hooks_only),
            other_disable: files
                .iter()
                .filter(|file| file.source != SettingsSource::Managed)
                .filter(|file| !(hold_project && file.source.is_project()))
                .find_map(|file| file.disable_all_hooks.map(|on| (on, file.path.to_owned()))),
        }
    }
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
                let (json, disabled, read_error) = match read {
                    Ok(json) => {
                        let syntax = json
                            .as_ref()
                            .and_then(|json| json.document().err().map(ToString::to_string));
                        (json, syntax.map(DisabledReason::Unreadable), None)
                    }
                    Err(error) => (
                        None,
                        Some(DisabledReason::Unreadable(error.to_string())),
                        Some((error.kind(), error.to_string())),
                    ),
                };
                SettingsLayer {
                    source: *source,
                    path: path.clone(),
                    json,
                    disabled,
                    read_error,
                }
            })
            .collect();
        let switch = |layer: &SettingsLayer, key: &str| {
            let document = layer.json.as_ref()?.document().ok()?;
            document.get(key).and_then(|on| on.as_bool())
        };
        let switches = HookSwitches::decide(
            &layers
                .iter()
                .map(|layer| SwitchesOf {
                    source: layer.source,
                    path: &layer.path,
                    disable_all_hooks: switch(layer, "disableAllHooks"),
                    allow_managed_hooks_only: switch(layer, "allowManagedHooksOnly"),
                })
                .collect::<Vec<_>>(),
            hold_project,
        );
        let HookSwitches {
            managed_disable,
            managed_only,
            other_disable,
        } = &switches;
        for layer in &mut layers {
            if layer.disabled.is_some() {
                continue;
            }
            let managed = layer.source == SettingsSource::Managed;
            layer.disabled = match (managed_disable, managed_only, other_disable) {
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
        SettingsStack {
            layers,
            switches,
            hold_project,
        }
    }

    /// Whether a repository's layers were held back when it loaded.
    pub fn holds_project(&self) -> bool {
        self.hold_project
    }

    /// Whether this stack is the one [`SettingsStack::load`] makes of
    /// `candidates` with `hold_project`.
    pub fn is_of(&self, candidates: &[(PathBuf, SettingsSource)], hold_project: bool) -> bool {
        self.hold_project == hold_project
            && self.layers.len() == candidates.len()
            && self
                .layers
                .iter()
                .zip(candidates)
                .all(|(layer, (path, source))| layer.path == *path && layer.source == *source)
    }

    /// Which files switch hooks off, as decided when the stack loaded
    /// (with its held-back layers not counting). A layer's reason names
    /// only the most decisive file; this keeps each key's own (managed
    /// `allowManagedHooksOnly` and a user's `disableAllHooks` both on: the
    /// Claude bridge's notice still names the user's file).
    pub fn hook_switches(&self) -> &HookSwitches {
        &self.switches
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
    fn the_deciding_switch_is_the_highest_layer_or_the_last_managed_drop_in() {
        let file = |source, path: &'static str, disable, only| SwitchesOf {
            source,
            path: Path::new(path),
            disable_all_hooks: disable,
            allow_managed_hooks_only: only,
        };
        let files = [
            file(
                SettingsSource::Managed,
                "/m/base.json",
                Some(true),
                Some(false),
            ),
            file(SettingsSource::Managed, "/m/d/10.json", Some(false), None),
            file(SettingsSource::Local, "/p/local.json", Some(true), None),
            file(
                SettingsSource::Project,
                "/p/project.json",
                Some(false),
                None,
            ),
            file(SettingsSource::User, "/u/settings.json", Some(false), None),
        ];
        let on = |value: bool, path: &str| Some((value, PathBuf::from(path)));
        let trusted = HookSwitches::decide(&files, false);
        assert_eq!(trusted.managed_disable, on(false, "/m/d/10.json"));
        assert_eq!(trusted.managed_only, on(false, "/m/base.json"));
        assert_eq!(trusted.other_disable, on(true, "/p/local.json"));
        // Held back, the repository's layers do not decide.
        let held = HookSwitches::decide(&files, true);
        assert_eq!(held.other_disable, on(false, "/u/settings.json"));
    }

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

    #[test]
    fn the_stack_keeps_each_switch_s_deciding_file_not_only_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let managed = dir.path().join("managed.json");
        let user = dir.path().join("user.json");
        std::fs::write(&managed, r#"{"allowManagedHooksOnly": true}"#).unwrap();
        std::fs::write(&user, r#"{"disableAllHooks": true}"#).unwrap();
        let candidates = [
            (managed.clone(), SettingsSource::Managed),
            (user.clone(), SettingsSource::User),
        ];
        let stack = SettingsStack::load(&ConfigFiles::new(), &candidates, false);
        // The user's layer shows the most decisive reason …
        assert_eq!(
            stack.get(&user).unwrap().disabled,
            Some(DisabledReason::ManagedHooksOnly(managed.clone()))
        );
        assert_eq!(stack.get(&managed).unwrap().disabled, None);
        // … and the decision still names the user's `disableAllHooks`.
        let switches = stack.hook_switches();
        assert_eq!(switches.managed_only, Some((true, managed.clone())));
        assert_eq!(switches.other_disable, Some((true, user.clone())));
        assert_eq!(switches.managed_disable, None);
    }
}
