//! The `env` block of Claude Code settings (docs/sources.md,
//! captures `env_hooks_and_bash`, `env_precedence`, `env_cli_settings`).
//!
//! Merged per key: managed > `--settings` > `.claude/settings.local.json` >
//! `.claude/settings.json` > `~/.claude/settings.json`. The result is
//! exported to every hook and to the bash tool and overrides what dsh
//! inherited from its own environment.

use std::path::Path;

use dsh_files::settings::SettingsSource;

use crate::output::wire::Field;
use crate::settings_wire::SettingsWire;

/// One settings layer's `env` as read, in configuration order.
pub(crate) struct EnvLayer<'a> {
    pub path: &'a Path,
    pub source: SettingsSource,
    pub settings: &'a SettingsWire,
}

/// The merged variables, in the order their keys were first seen from the
/// lowest-precedence layer up (stable for logs and tests), plus notices for
/// entries that are not strings.
pub(crate) fn merge(layers: &[EnvLayer<'_>], notices: &mut Vec<String>) -> Vec<(String, String)> {
    // Lowest precedence first, so a later layer overrides: user, project,
    // local, `--settings` (the last flag is applied first: the first flag
    // wins, as configuration order lists them), managed (drop-ins in name
    // order, the last wins).
    let mut ordered: Vec<&EnvLayer<'_>> = layers
        .iter()
        .filter(|l| l.source != SettingsSource::Managed)
        .rev()
        .collect();
    ordered.extend(
        layers
            .iter()
            .filter(|l| l.source == SettingsSource::Managed),
    );

    let mut out: Vec<(String, String)> = Vec::new();
    for layer in ordered {
        let env = match &layer.settings.env {
            Field::Absent => continue,
            Field::Valid(env) => env,
            Field::Invalid { .. } => {
                notices.push(format!(
                    "`env` in {} is not an object; ignored",
                    layer.path.display()
                ));
                continue;
            }
        };
        for (name, value) in env.iter() {
            // Claude Code stringifies numbers and booleans; anything else
            // cannot be an environment value.
            let value = match value {
                Field::Valid(value) => value.text(),
                Field::Invalid { received, .. } => {
                    notices.push(format!(
                        "env.{name} in {} is not a string, number or boolean ({received}); ignored",
                        layer.path.display()
                    ));
                    continue;
                }
                Field::Absent => continue,
            };
            if name.is_empty() || name.contains('=') || name.contains('\0') || value.contains('\0')
            {
                notices.push(format!(
                    "env.{name:?} in {} cannot be an environment variable; ignored",
                    layer.path.display()
                ));
                continue;
            }
            match out.iter_mut().find(|(existing, _)| *existing == *name) {
                Some(slot) => slot.1 = value,
                None => out.push((name.clone(), value)),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn settings(json: Value) -> SettingsWire {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn per_key_precedence_as_captured() {
        // env_precedence + env_cli_settings: --settings > local > project > user.
        let flag = settings(json!({"env": {"X": "cli", "U": "cli"}}));
        let local = settings(json!({"env": {"X": "local", "L": "local"}}));
        let project = settings(json!({"env": {"X": "project", "P": "project"}}));
        let user = settings(json!({"env": {"X": "user", "P": "user", "U": "user", "N": 3}}));
        let path = Path::new("/s.json");
        let layers = [
            EnvLayer {
                path,
                source: SettingsSource::Flag,
                settings: &flag,
            },
            EnvLayer {
                path,
                source: SettingsSource::Local,
                settings: &local,
            },
            EnvLayer {
                path,
                source: SettingsSource::Project,
                settings: &project,
            },
            EnvLayer {
                path,
                source: SettingsSource::User,
                settings: &user,
            },
        ];
        let mut notices = Vec::new();
        let mut merged = merge(&layers, &mut notices);
        merged.sort();
        assert_eq!(
            merged,
            [
                ("L", "local"),
                ("N", "3"),
                ("P", "project"),
                ("U", "cli"),
                ("X", "cli")
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
        assert!(notices.is_empty());
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn an_untrusted_workspace_keeps_its_env_and_disable_all_hooks_to_itself() {
        use dsh_hooks::project_settings::ProjectSettings;
        let root = tempfile::tempdir().unwrap();
        let (cwd, home) = (root.path().join("p"), root.path().join("h"));
        std::fs::create_dir_all(cwd.join(".claude")).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::write(
            home.join(".claude/settings.json"),
            json!({"env": {"U": "user"}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}).to_string(),
        )
        .unwrap();
        std::fs::write(
            cwd.join(".claude/settings.json"),
            json!({"env": {"PATH": ".claude/bin", "U": "project"}, "disableAllHooks": true})
                .to_string(),
        )
        .unwrap();
        std::fs::write(
            cwd.join(".claude/settings.local.json"),
            json!({"env": {"BASH_ENV": ".claude/x.sh"}}).to_string(),
        )
        .unwrap();
        let mut discovery = crate::ClaudeDiscovery::new(&cwd, &home, &root.path().join("d"));
        discovery.managed_dir = root.path().join("no-managed");
        let load = |discovery: &crate::ClaudeDiscovery| {
            crate::load_with_options(discovery, crate::ClaudeOptions::default()).unwrap()
        };
        let applied = load(&discovery);
        assert!(applied.held_back.is_empty());
        assert!(applied.settings_env.iter().any(|(k, _)| k == "PATH"));
        assert!(applied.entries()[0].status.contains("disableAllHooks"));

        discovery.project_settings = ProjectSettings::HoldBack;
        let held = load(&discovery);
        assert_eq!(held.settings_env, [("U".to_owned(), "user".to_owned())]);
        let mut keys: Vec<&str> = held.held_back.iter().map(|h| h.key.as_str()).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["disableAllHooks", "env.BASH_ENV", "env.PATH", "env.U"]
        );
        assert_eq!(held.entries()[0].status, "active");
    }

    #[test]
    fn managed_wins_and_odd_values_are_notices() {
        let managed = settings(json!({"env": {"X": "managed"}}));
        let flag = settings(json!({"env": {"X": "cli", "BAD": {"a": 1}}}));
        let path = Path::new("/s.json");
        let layers = [
            EnvLayer {
                path,
                source: SettingsSource::Managed,
                settings: &managed,
            },
            EnvLayer {
                path,
                source: SettingsSource::Flag,
                settings: &flag,
            },
        ];
        let mut notices = Vec::new();
        let merged = merge(&layers, &mut notices);
        assert_eq!(merged, vec![("X".to_owned(), "managed".to_owned())]);
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert_eq!(
            notices[0],
            "env.BAD in /s.json is not a string, number or boolean (object); ignored"
        );
    }
}
