//! Session lifecycle points outside the turn loop's tool pipeline: the
//! set-up run (`--init` / `--maintenance`), the assistant text as it is
//! displayed, the working directory the bash tool moved to, the worktree
//! a session works in (`--worktree`) and directories added mid-session.

use std::path::PathBuf;

use serde::Serialize;

/// Why the set-up seam fires (`dsh --init`, `--init-only`, `--maintenance`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SetupTrigger {
    /// `--init` or `--init-only`: first-time set-up of the repository.
    Init,
    /// `--maintenance`: periodic upkeep.
    Maintenance,
}

impl SetupTrigger {
    /// The wire name, as Claude Code spells it (`init`, `maintenance`).
    pub fn as_str(self) -> &'static str {
        match self {
            SetupTrigger::Init => "init",
            SetupTrigger::Maintenance => "maintenance",
        }
    }
}

/// Assistant text about to be shown to the user (once per assistant message
/// with text, when the message is complete).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisplayInput {
    /// The turn.
    pub turn: u64,
    /// The step whose reply this is.
    pub step: u64,
    /// A stable id for the message (derived from the session, turn and step).
    pub message_id: String,
    /// The text as the model wrote it.
    pub text: String,
}

/// What the display seam answers: show the text as written, or instead
/// show `text` (display only: the history keeps what the model wrote).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DisplayDecision {
    /// Show the model's text.
    #[default]
    Keep,
    /// Show this instead.
    Replace {
        /// The text to show.
        text: String,
    },
}

/// The session's working directory moved (a `cd` in the bash tool, which
/// keeps its working directory from one call to the next).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CwdChange {
    /// The directory before.
    pub old: PathBuf,
    /// The directory now.
    pub new: PathBuf,
}

/// Who asked for a model switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelSwitchSource {
    /// `/model NAME` typed in a session.
    Command,
    /// A host's `set_model` (the Agent SDK control protocol).
    Sdk,
}

impl ModelSwitchSource {
    /// The wire name, as Claude Code spells it (`command`, `sdk`).
    pub fn as_str(self) -> &'static str {
        match self {
            ModelSwitchSource::Command => "command",
            ModelSwitchSource::Sdk => "sdk",
        }
    }
}

/// A model switch about to happen (or that just happened).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSwitch {
    /// The model used until now.
    pub from: String,
    /// The model used from now on.
    pub to: String,
    /// What was asked for.
    pub requested: String,
    /// Who asked.
    pub source: ModelSwitchSource,
    /// The usage of the session's last model response (what the next
    /// request re-sends), if there was one.
    pub last_usage: Option<dsh_protocol::TokenUsage>,
    /// How long ago that response came, if there was one.
    pub since_last_response: Option<std::time::Duration>,
}

/// What the model-switch seam answers before the switch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ModelSwitchDecision {
    /// The switch goes ahead.
    #[default]
    Allow,
    /// The switch is refused; the session keeps its model.
    Deny {
        /// Why (shown to whoever asked).
        reason: String,
    },
}

/// What the worktree-creation seam answers (`--worktree NAME`): the first
/// listener that handles it decides where the session works.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WorktreeCreation {
    /// Nobody creates worktrees: dsh makes a git worktree itself.
    #[default]
    NotHandled,
    /// The worktree is at `path`; the session moves there.
    Created {
        /// The worktree's directory.
        path: PathBuf,
    },
    /// A listener tried and failed; the session does not start.
    Failed {
        /// Why (shown to the user).
        message: String,
    },
}

/// What the worktree-removal seam answers when a session that created a
/// worktree ends.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WorktreeRemoval {
    /// Nobody removes worktrees made this way: the worktree is kept.
    #[default]
    NotHandled,
    /// A listener removed it.
    Removed,
}

/// Why a working directory was added during a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DirectorySource {
    /// `/add-dir PATH` typed in the terminal.
    SlashCommand,
}

impl DirectorySource {
    /// The wire name, as Claude Code spells it (`slash_command`).
    pub fn as_str(self) -> &'static str {
        match self {
            DirectorySource::SlashCommand => "slash_command",
        }
    }
}

/// How a watched file changed between two looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChangeKind {
    /// It did not exist and now does.
    Add,
    /// It existed and was written.
    Change,
    /// It existed and is gone.
    Unlink,
}

impl FileChangeKind {
    /// The wire name, as Claude Code spells it (`add`, `change`, `unlink`).
    pub fn as_str(self) -> &'static str {
        match self {
            FileChangeKind::Add => "add",
            FileChangeKind::Change => "change",
            FileChangeKind::Unlink => "unlink",
        }
    }
}

/// A working directory added during a session (`--add-dir` at start-up is
/// not one: it is part of the session from the start).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectoryAddition {
    /// The directory, absolute.
    pub directory: PathBuf,
    /// Who added it.
    pub source: DirectorySource,
}

/// A watched file changed (one per file per look, however many writes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The file, absolute.
    pub path: PathBuf,
    /// How it changed.
    pub kind: FileChangeKind,
}

/// Which settings file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfigSource {
    /// `~/.claude/settings.json`.
    UserSettings,
    /// `.claude/settings.json`.
    ProjectSettings,
    /// `.claude/settings.local.json`.
    LocalSettings,
}

impl ConfigSource {
    /// The wire name, as Claude Code spells it (`user_settings`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ConfigSource::UserSettings => "user_settings",
            ConfigSource::ProjectSettings => "project_settings",
            ConfigSource::LocalSettings => "local_settings",
        }
    }
}

/// A settings file changed during the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigChange {
    /// Which layer.
    pub source: ConfigSource,
    /// The file, absolute.
    pub path: PathBuf,
}

/// What the config-change seam answers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ConfigDecision {
    /// Re-read the file: listeners apply it ([`crate::Plugin::config_applied`]).
    #[default]
    Apply,
    /// Keep the settings the session has.
    Keep {
        /// Why (logged).
        reason: String,
    },
}

/// What a session's file watcher saw since it last looked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionChange {
    /// A file a listener asked to watch ([`crate::SessionEnv::watch_names`] and
    /// friends).
    File(FileChange),
    /// A settings file.
    Config(ConfigChange),
}
