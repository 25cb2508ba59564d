//! What dsh reads of a Claude Code settings file, as serde types: every
//! key it acts on held as a [`Field`], so a key (or an entry) of the wrong
//! type is reported or skipped instead of failing the file, as Claude Code
//! reads it. A plugin's `hooks/hooks.json` and an agent's frontmatter
//! `hooks` read into the same types. How the keys are acted on is
//! elsewhere ([`crate::config`], [`crate::plugins`], [`crate::settings_env`]).

use serde::Deserialize;

use crate::output::wire::{Entries, Field, WireType};

/// A settings file as dsh reads it: the keys it acts on, each lenient (a
/// key of the wrong type is reported or skipped, never fatal). A plugin's
/// `hooks/hooks.json` and an agent's frontmatter hooks read as one too,
/// with only `hooks` set.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct SettingsWire {
    /// Per event name, in the file's order: its matcher groups.
    pub(crate) hooks: Field<HooksWire>,
    /// Variables for hooks and the bash tool.
    pub(crate) env: Field<Entries<Field<EnvText>>>,
    /// `<plugin>@<marketplace>`: on, off or (`null`) unset.
    pub(crate) enabled_plugins: Field<Entries<PluginSwitch>>,
    /// Marketplaces the settings add, by name.
    pub(crate) extra_known_marketplaces: Field<Entries<Field<MarketWire>>>,
    /// The keys that switch hooks off or limit them.
    #[serde(flatten)]
    pub(crate) keys: SettingsKeys,
}

impl WireType for SettingsWire {
    const JSON: Option<&'static str> = Some("object");
}

/// A settings `hooks` object: per event, its list of matcher groups.
pub(crate) type HooksWire = Entries<Field<Vec<Field<GroupWire>>>>;

/// An `env` value: Claude Code takes a string, and a number or boolean as
/// its JSON text.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum EnvText {
    /// A string, as written.
    Text(String),
    /// A number.
    Number(serde_json::Number),
    /// `true` / `false`.
    Flag(bool),
}

impl WireType for EnvText {
    const JSON: Option<&'static str> = None;
}

impl EnvText {
    /// The variable's value.
    pub(crate) fn text(&self) -> String {
        match self {
            EnvText::Text(text) => text.clone(),
            EnvText::Number(number) => number.to_string(),
            EnvText::Flag(flag) => flag.to_string(),
        }
    }
}

/// An `enabledPlugins` value: `true`/`false`, `null` (as if absent), or
/// anything else (a list of versions), which enables the plugin.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum PluginSwitch {
    /// A boolean or `null`.
    Switch(Option<bool>),
    /// Any other value.
    Other(serde::de::IgnoredAny),
}

impl PluginSwitch {
    /// `None` for `null`; otherwise whether it enables the plugin.
    pub(crate) fn on(&self) -> Option<bool> {
        match self {
            PluginSwitch::Switch(switch) => *switch,
            PluginSwitch::Other(_) => Some(true),
        }
    }
}

/// The keys of a settings file that switch hooks off or limit them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct SettingsKeys {
    pub(crate) disable_all_hooks: Field<bool>,
    pub(crate) allow_managed_hooks_only: Field<bool>,
    pub(crate) allowed_http_hook_urls: Field<Vec<Field<String>>>,
}

impl WireType for SettingsKeys {
    const JSON: Option<&'static str> = Some("object");
}

/// A matcher group (`hooks.<Event>[i]`).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub(crate) struct GroupWire {
    /// A string; `null` is none; anything else is reported as written.
    pub(crate) matcher: Field<String>,
    /// Its handlers, each read on its own.
    pub(crate) hooks: Field<Vec<Field<HandlerWire>>>,
}

impl WireType for GroupWire {
    const JSON: Option<&'static str> = Some("object");
}

/// A handler entry (`hooks.<Event>[i].hooks[j]`) on the wire.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct HandlerWire {
    /// `command`, `http`, `prompt`, `agent`, …
    #[serde(rename = "type")]
    pub(crate) kind: Field<String>,
    /// Seconds; `null` is the default, anything else is reported as
    /// written.
    pub(crate) timeout: Field<serde_json::Number>,
    /// A permission-rule condition.
    #[serde(rename = "if")]
    pub(crate) if_rule: Field<String>,
    pub(crate) command: Field<String>,
    #[serde(rename = "async")]
    pub(crate) is_async: Field<bool>,
    pub(crate) async_rewake: Field<bool>,
    /// Exec form: the program is `command`, these its arguments (a
    /// non-string one is passed as its JSON text).
    pub(crate) args: Field<Vec<Field<String>>>,
    pub(crate) shell: Field<String>,
    pub(crate) url: Field<String>,
    /// Header values that are not strings are skipped.
    pub(crate) headers: Field<Entries<Field<String>>>,
    /// Entries that are not strings are skipped.
    pub(crate) allowed_env_vars: Field<Vec<Field<String>>>,
}

impl WireType for HandlerWire {
    const JSON: Option<&'static str> = Some("object");
}

/// A marketplace entry (`extraKnownMarketplaces.<name>`, an entry of
/// `known_marketplaces.json`).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub(crate) struct MarketWire {
    pub(crate) source: Field<MarketSourceWire>,
}

/// Its `source`: `{"source": "directory", "path": …}`, `{"source": "github", …}`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub(crate) struct MarketSourceWire {
    pub(crate) source: Field<String>,
    pub(crate) path: Field<String>,
}

impl WireType for MarketWire {
    const JSON: Option<&'static str> = Some("object");
}

impl WireType for MarketSourceWire {
    const JSON: Option<&'static str> = Some("object");
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A settings file whose keys have the wrong types still reads: each
    /// such key (or entry) is kept as invalid, the others as written, in
    /// the file's order.
    #[test]
    fn settings_read_leniently() {
        let settings: SettingsWire = serde_json::from_str(
            r#"{"env": {"A": "1", "N": 2.5, "F": true, "X": null, "L": [1], "A": "2"},
                "enabledPlugins": "all",
                "extraKnownMarketplaces": {"m": 3},
                "hooks": {"Stop": 5, "PreToolUse": [7, {"hooks": "x"}, {"hooks": [{"type": "command", "command": "c"}, 1]}]},
                "disableAllHooks": "yes", "allowManagedHooksOnly": true,
                "allowedHttpHookUrls": ["a", 2], "other": {}}"#,
        )
        .unwrap();
        let env = settings.env.valid().unwrap();
        assert_eq!(
            env.keys().collect::<Vec<_>>(),
            ["A", "N", "F", "X", "L"],
            "a repeated key keeps its first place"
        );
        let texts: Vec<Option<String>> = env
            .iter()
            .map(|(_, v)| v.valid().map(EnvText::text))
            .collect();
        assert_eq!(
            texts,
            [
                Some("2".into()),
                Some("2.5".into()),
                Some("true".into()),
                None,
                None
            ]
        );
        assert!(matches!(
            env.get("L"),
            Some(Field::Invalid {
                received: "array",
                ..
            })
        ));
        assert!(matches!(
            settings.enabled_plugins,
            Field::Invalid {
                received: "string",
                ..
            }
        ));
        let markets = settings.extra_known_marketplaces.valid().unwrap();
        assert!(markets.get("m").unwrap().valid().is_none());
        let hooks = settings.hooks.valid().unwrap();
        assert!(hooks.get("Stop").unwrap().valid().is_none());
        let groups = hooks.get("PreToolUse").unwrap().valid().unwrap();
        assert!(groups[0].valid().is_none());
        assert!(groups[1].valid().unwrap().hooks.valid().is_none());
        let handlers = groups[2].valid().unwrap().hooks.valid().unwrap();
        assert!(handlers[0].valid().is_some() && handlers[1].valid().is_none());
        assert!(settings.keys.disable_all_hooks.valid().is_none());
        assert_eq!(settings.keys.allow_managed_hooks_only.valid(), Some(&true));
        let urls = settings.keys.allowed_http_hook_urls.valid().unwrap();
        assert_eq!(
            urls.iter().filter_map(Field::as_str).collect::<Vec<_>>(),
            ["a"]
        );

        // `enabledPlugins` values: a boolean, `null` (unset), anything else on.
        let settings: SettingsWire = serde_json::from_str(
            r#"{"enabledPlugins": {"a": false, "b": null, "c": ["1.0"], "d": true}}"#,
        )
        .unwrap();
        let switches: Vec<Option<bool>> = settings
            .enabled_plugins
            .valid()
            .unwrap()
            .iter()
            .map(|(_, v)| v.on())
            .collect();
        assert_eq!(switches, [Some(false), None, Some(true), Some(true)]);
    }
}
