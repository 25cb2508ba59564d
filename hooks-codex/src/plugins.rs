//! Codex 0.169 plugin hooks (capture `plugin_hooks`).
//!
//! A plugin is active when a Codex config layer says
//! `[plugins."<name>@<marketplace>"] enabled = true` (a later layer — project
//! over user over system — overrides an earlier one per plugin). Codex runs
//! the **cache copy** `$CODEX_HOME/plugins/cache/<marketplace>/<name>/<version>`
//! that `codex plugin add` made, reading its `hooks/hooks.json` (Claude
//! Code's plugin layout). Plugin hooks are trusted like user hooks: the
//! hooks file is their trust source.
//!
//! Unlike Claude Code, Codex substitutes `${CLAUDE_PLUGIN_ROOT}` and
//! `${PLUGIN_ROOT}` in the command text before the shell sees it (also inside
//! single quotes), and sets `PLUGIN_ROOT`, `CLAUDE_PLUGIN_ROOT`, `PLUGIN_DATA`
//! and `CLAUDE_PLUGIN_DATA` for plugin hooks only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::Handler;
use crate::lenient::{Lenient, lenient};

/// Which plugin a Codex hook came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexPluginOrigin {
    /// `<name>@<marketplace>`.
    pub id: String,
    /// The cache copy the hooks run from (`PLUGIN_ROOT`).
    pub root: PathBuf,
    /// `$CODEX_HOME/plugins/data/<name>-<marketplace>` (`PLUGIN_DATA`).
    pub data_dir: PathBuf,
}

/// An enabled plugin whose hooks file exists.
pub(crate) struct FoundPlugin {
    pub origin: CodexPluginOrigin,
    pub hooks_file: PathBuf,
}

/// The plugin switches of one config.toml, as written; a switch of another
/// shape is not set.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct PluginSwitches {
    /// `[plugins."<name>@<marketplace>"]`, by id.
    #[serde(default, deserialize_with = "lenient")]
    plugins: Option<BTreeMap<String, Lenient<PluginWire>>>,
    /// `[features]`.
    #[serde(default, deserialize_with = "lenient")]
    features: Option<FeaturesWire>,
}

#[derive(Debug, Deserialize)]
struct PluginWire {
    #[serde(default, deserialize_with = "lenient")]
    enabled: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct FeaturesWire {
    #[serde(default, deserialize_with = "lenient")]
    plugins: Option<bool>,
}

impl PluginSwitches {
    /// `enabled` per plugin id, in id order.
    pub(crate) fn enabled(self) -> Vec<(String, bool)> {
        self.plugins
            .into_iter()
            .flatten()
            .filter_map(|(id, plugin)| Some((id, plugin.read()?.enabled?)))
            .collect()
    }

    /// `[features] plugins`, when set (Codex's default is on).
    pub(crate) fn feature(&self) -> Option<bool> {
        self.features.as_ref()?.plugins
    }
}

/// The installed version directory of `name` in `marketplace`: the one
/// directory under `cache/<marketplace>/<name>/`, or the highest-sorting
/// name when several versions are cached.
fn cached_version(codex_home: &Path, marketplace: &str, name: &str) -> Option<PathBuf> {
    let dir = codex_home
        .join("plugins")
        .join("cache")
        .join(marketplace)
        .join(name);
    let mut versions: Vec<PathBuf> = fs_err::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    versions.sort();
    versions.pop()
}

/// Resolves the enabled plugins (`enabled` merged over layers, lowest
/// first) to their cache copies; a plugin that cannot be found becomes a
/// notice.
pub(crate) fn find(
    codex_home: &Path,
    layers: &[(PathBuf, Vec<(String, bool)>)],
    notices: &mut Vec<String>,
) -> Vec<FoundPlugin> {
    let mut merged: BTreeMap<String, (bool, PathBuf)> = BTreeMap::new();
    for (path, entries) in layers {
        for (id, enabled) in entries {
            merged.insert(id.clone(), (*enabled, path.clone()));
        }
    }
    let mut found = Vec::new();
    for (id, (enabled, path)) in merged {
        if !enabled {
            continue;
        }
        let Some((name, marketplace)) = id.rsplit_once('@') else {
            notices.push(format!(
                "plugin key `{id}` in {} is not `<name>@<marketplace>`; ignored",
                path.display()
            ));
            continue;
        };
        let Some(root) = cached_version(codex_home, marketplace, name) else {
            notices.push(format!(
                "plugin {id} is enabled in {} but not installed (no {}); its hooks do not run",
                path.display(),
                codex_home
                    .join("plugins/cache")
                    .join(marketplace)
                    .join(name)
                    .display()
            ));
            continue;
        };
        let hooks_file = root.join("hooks").join("hooks.json");
        if !hooks_file.is_file() {
            notices.push(format!(
                "plugin {id} has no hooks file {}; none of its hooks run",
                hooks_file.display()
            ));
            continue;
        }
        found.push(FoundPlugin {
            origin: CodexPluginOrigin {
                data_dir: codex_home
                    .join("plugins")
                    .join("data")
                    .join(format!("{name}-{marketplace}")),
                id,
                root,
            },
            hooks_file,
        });
    }
    found
}

/// The command the shell runs: a plugin hook's `${CLAUDE_PLUGIN_ROOT}` and
/// `${PLUGIN_ROOT}` replaced by the root path (Codex substitutes the text,
/// so even `'${PLUGIN_ROOT}'` and a command that unsets the variables
/// first see the path).
pub(crate) fn command_for(handler: &Handler) -> String {
    match &handler.plugin {
        Some(plugin) => {
            let root = plugin.root.to_string_lossy();
            handler
                .command
                .replace("${CLAUDE_PLUGIN_ROOT}", &root)
                .replace("${PLUGIN_ROOT}", &root)
        }
        None => handler.command.clone(),
    }
}

/// The variables a plugin hook runs with (none for other hooks). The data
/// directory is created so a hook can write there on its first run.
pub(crate) fn hook_env(handler: &Handler) -> Vec<(String, String)> {
    let Some(plugin) = &handler.plugin else {
        return Vec::new();
    };
    if let Err(error) = fs_err::create_dir_all(&plugin.data_dir) {
        tracing::warn!(%error, plugin = %plugin.id, "cannot create PLUGIN_DATA");
    }
    let root = plugin.root.to_string_lossy().into_owned();
    let data = plugin.data_dir.to_string_lossy().into_owned();
    vec![
        ("PLUGIN_ROOT".to_owned(), root.clone()),
        ("CLAUDE_PLUGIN_ROOT".to_owned(), root),
        ("PLUGIN_DATA".to_owned(), data.clone()),
        ("CLAUDE_PLUGIN_DATA".to_owned(), data),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_of_another_shape_are_not_set_and_leave_the_others() {
        let text = r#"
            model = "m"
            [features]
            plugins = false
            [plugins."z@mkt"]
            enabled = true
            [plugins."a@mkt"]
            enabled = "yes"
            [plugins."b@mkt"]
            enabled = false
            [plugins."c@mkt"]
            other = 1
        "#;
        let switches: PluginSwitches = toml::from_str(text).unwrap();
        assert_eq!(switches.feature(), Some(false));
        assert_eq!(
            switches.enabled(),
            [("b@mkt".to_owned(), false), ("z@mkt".to_owned(), true)]
        );
        let odd: PluginSwitches = toml::from_str("plugins = 3\nfeatures = []").unwrap();
        assert_eq!((odd.feature(), odd.enabled()), (None, Vec::new()));
        let entry: PluginSwitches =
            toml::from_str("[plugins]\n\"x@m\" = 1\n\"y@m\" = { enabled = true }").unwrap();
        assert_eq!(entry.enabled(), [("y@m".to_owned(), true)]);
    }

    #[test]
    fn a_later_layer_switches_a_plugin_off_and_a_missing_cache_is_a_notice() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        let cache = home.join("plugins/cache/mkt/guard/1.0.0/hooks");
        std::fs::create_dir_all(&cache).unwrap();
        std::fs::write(cache.join("hooks.json"), "{}").unwrap();
        let user = PathBuf::from("/u/config.toml");
        let project = PathBuf::from("/p/.codex/config.toml");
        let layers = vec![
            (
                user.clone(),
                vec![("guard@mkt".to_owned(), true), ("off@mkt".to_owned(), true)],
            ),
            (project, vec![("off@mkt".to_owned(), false)]),
            (user, vec![("ghost@mkt".to_owned(), true)]),
        ];
        let mut notices = Vec::new();
        let found = find(home, &layers, &mut notices);
        let ids: Vec<&str> = found.iter().map(|f| f.origin.id.as_str()).collect();
        assert_eq!(ids, ["guard@mkt"]);
        assert_eq!(
            found[0].origin.root,
            home.join("plugins/cache/mkt/guard/1.0.0")
        );
        assert_eq!(
            found[0].origin.data_dir,
            home.join("plugins/data/guard-mkt")
        );
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(
            notices[0]
                .starts_with("plugin ghost@mkt is enabled in /u/config.toml but not installed")
        );
    }
}
