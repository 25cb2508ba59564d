//! The keys of Gemini's settings files that discovery reads, each read on
//! its own the way Gemini's JavaScript reads them: a key of the wrong type
//! counts as absent, a list entry that is not an object is skipped (but
//! keeps its place in the `hooks[j]` numbering).

use dsh_hooks::lenient::Lenient;
use dsh_hooks::wire::Present;
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
#[serde(default)]
pub(super) struct HooksConfigWire {
    pub enabled: Lenient<bool>,
    pub disabled: Lenient<Vec<Each<String>>>,
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
#[serde(default)]
pub(super) struct FolderTrustWire {
    pub enabled: Lenient<bool>,
}

/// One matcher group of an event.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct GroupWire {
    pub matcher: Lenient<String>,
    pub sequential: Lenient<bool>,
    pub hooks: Lenient<Vec<Obj<HookWire>>>,
}

/// One hook of a group.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct HookWire {
    #[serde(rename = "type")]
    pub kind: Lenient<String>,
    pub command: Lenient<String>,
    pub name: Lenient<String>,
    pub timeout: Lenient<u64>,
    /// Any JSON: `env_pairs` reads an object's values as text.
    pub env: Option<Present>,
}

/// `trustedFolders.json`: path → rule (`None`: not a string).
pub(super) type TrustedFoldersWire = Entries<Each<String>>;
