//! The keys of Gemini's settings files that discovery reads, each read on
//! its own the way Gemini's JavaScript reads them: a key of the wrong type
//! counts as absent, a list entry that is not an object is skipped (but
//! keeps its place in the `hooks[j]` numbering).

use dsh_hooks::wire::{Present, lenient};
use serde::Deserialize;

use crate::wire::{Each, Entries, Obj, object};

/// A `settings.json`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SettingsWire {
    #[serde(default, deserialize_with = "object")]
    pub hooks_config: Option<HooksConfigWire>,
    #[serde(default, deserialize_with = "object")]
    pub security: Option<SecurityWire>,
    /// Event name → its matcher groups (`None`: not a list).
    #[serde(default, deserialize_with = "object")]
    pub hooks: Option<Entries<Each<Vec<Obj<GroupWire>>>>>,
}

/// `hooksConfig`.
#[derive(Debug, Default, Deserialize)]
pub(super) struct HooksConfigWire {
    #[serde(default, deserialize_with = "lenient")]
    pub enabled: Option<bool>,
    #[serde(default, deserialize_with = "lenient")]
    pub disabled: Option<Vec<Each<String>>>,
}

/// `security`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SecurityWire {
    #[serde(default, deserialize_with = "object")]
    pub folder_trust: Option<FolderTrustWire>,
}

/// `security.folderTrust`.
#[derive(Debug, Default, Deserialize)]
pub(super) struct FolderTrustWire {
    #[serde(default, deserialize_with = "lenient")]
    pub enabled: Option<bool>,
}

/// One matcher group of an event.
#[derive(Debug, Default, Deserialize)]
pub(super) struct GroupWire {
    #[serde(default, deserialize_with = "lenient")]
    pub matcher: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub sequential: Option<bool>,
    #[serde(default, deserialize_with = "lenient")]
    pub hooks: Option<Vec<Obj<HookWire>>>,
}

/// One hook of a group.
#[derive(Debug, Default, Deserialize)]
pub(super) struct HookWire {
    #[serde(default, rename = "type", deserialize_with = "lenient")]
    pub kind: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub command: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub timeout: Option<u64>,
    /// Any JSON: `env_pairs` reads an object's values as text.
    #[serde(default)]
    pub env: Option<Present>,
}

/// `trustedFolders.json`: path → rule (`None`: not a string).
pub(super) type TrustedFoldersWire = Entries<Each<String>>;
