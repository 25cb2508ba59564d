//! Plugin discovery through `load_with_options`, in temporary HOME and
//! project directories laid out as `claude plugin marketplace add` and
//! `claude plugin install` leave them (`pl_basic`).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use dsh_hooks_claude::config::SettingsSource;
use dsh_hooks_claude::{ClaudeDiscovery, ClaudeOptions, HookEvent, PluginScope, load_with_options};
use pretty_assertions::assert_eq;
use serde_json::json;

struct Setup {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    discovery: ClaudeDiscovery,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const HOOKS: &str = r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"python3 ${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"}]}]}}"#;

/// A directory marketplace `mkt` at `~/src/mkt` with plugin `guard`, and a
/// GitHub marketplace `remote` with plugin `lint` (cache only).
fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let src = home.join("src/mkt");
    write(
        &src.join(".claude-plugin/marketplace.json"),
        &json!({"name": "mkt", "owner": {"name": "o"},
                "plugins": [{"name": "guard", "source": "./plugins/guard", "version": "1.0.0"}]})
        .to_string(),
    );
    write(&src.join("plugins/guard/hooks/hooks.json"), HOOKS);
    let plugins = home.join(".claude/plugins");
    let guard_cache = plugins.join("cache/mkt/guard/1.0.0");
    let lint_cache = plugins.join("cache/remote/lint/2.0.0");
    write(&guard_cache.join("hooks/hooks.json"), HOOKS);
    write(&lint_cache.join("hooks/hooks.json"), HOOKS);
    write(
        &plugins.join("known_marketplaces.json"),
        &json!({
            "mkt": {"source": {"source": "directory", "path": src}, "installLocation": src},
            "remote": {"source": {"source": "github", "repo": "o/remote"},
                       "installLocation": plugins.join("marketplaces/remote")}
        })
        .to_string(),
    );
    write(
        &plugins.join("installed_plugins.json"),
        &json!({"version": 2, "plugins": {
            "guard@mkt": [{"scope": "user", "installPath": guard_cache, "version": "1.0.0"}],
            "lint@remote": [{"scope": "user", "installPath": lint_cache, "version": "2.0.0"}]
        }})
        .to_string(),
    );
    let mut discovery = ClaudeDiscovery::new(&project, &home, &tmp.path().join("dsh"));
    discovery.managed_dir = tmp.path().join("managed");
    Setup {
        _tmp: tmp,
        home,
        project,
        discovery,
    }
}

fn user_settings(setup: &Setup, value: serde_json::Value) {
    write(
        &setup.home.join(".claude/settings.json"),
        &value.to_string(),
    );
}

#[test]
fn directory_marketplace_runs_from_source_and_others_from_the_cache() {
    let setup = setup();
    user_settings(
        &setup,
        json!({"enabledPlugins": {"guard@mkt": true, "lint@remote": true}}),
    );
    let config = load_with_options(&setup.discovery, ClaudeOptions::default()).unwrap();
    let selected = config.select(HookEvent::PreToolUse, Some("Bash"));
    let mut roots: Vec<(String, PathBuf, PathBuf)> = selected
        .iter()
        .map(|h| {
            let p = h.plugin.as_ref().unwrap();
            (p.id.clone(), p.root.clone(), p.data_dir.clone())
        })
        .collect();
    roots.sort();
    let plugins = setup.home.join(".claude/plugins");
    assert_eq!(
        roots,
        vec![
            (
                "guard@mkt".to_owned(),
                setup.home.join("src/mkt/plugins/guard"),
                plugins.join("data/guard-mkt")
            ),
            (
                "lint@remote".to_owned(),
                plugins.join("cache/remote/lint/2.0.0"),
                plugins.join("data/lint-remote")
            ),
        ]
    );
    // The same command in two plugins runs twice: no dedup across plugins.
    assert_eq!(selected.len(), 2);
    assert!(selected.iter().all(|h| h.is_user_installed()));
    let entries = config.entries();
    assert!(
        entries
            .iter()
            .any(|e| e.plugin.as_deref() == Some("guard@mkt")
                && e.origin
                    .ends_with("plugins/guard/hooks/hooks.json#hooks.PreToolUse[0].hooks[0]")),
        "{entries:?}"
    );
}

#[test]
fn a_project_false_disables_and_a_project_only_enable_is_a_project_hook() {
    let setup = setup();
    user_settings(&setup, json!({"enabledPlugins": {"guard@mkt": true}}));
    write(
        &setup.project.join(".claude/settings.json"),
        &json!({"enabledPlugins": {"guard@mkt": false, "lint@remote": true}}).to_string(),
    );
    let config = load_with_options(&setup.discovery, ClaudeOptions::default()).unwrap();
    let selected = config.select(HookEvent::PreToolUse, Some("Bash"));
    assert_eq!(selected.len(), 1);
    let plugin = selected[0].plugin.as_ref().unwrap();
    assert_eq!(plugin.id, "lint@remote");
    assert_eq!(plugin.scope, PluginScope::Project);
    assert_eq!(selected[0].source, SettingsSource::Project);
    assert!(!selected[0].is_user_installed());
}

#[test]
fn unloadable_plugins_are_notices_naming_the_file() {
    let setup = setup();
    user_settings(
        &setup,
        json!({"enabledPlugins": {"guard@mkt": true, "lint@remote": true, "ghost@mkt": true}}),
    );
    // guard: invalid JSON in the source tree; lint: hooks file removed.
    let guard_hooks = setup.home.join("src/mkt/plugins/guard/hooks/hooks.json");
    write(&guard_hooks, "{\"hooks\": {\n  \"PreToolUse\": [,]\n}}");
    let lint_hooks = setup
        .home
        .join(".claude/plugins/cache/remote/lint/2.0.0/hooks/hooks.json");
    std::fs::remove_file(&lint_hooks).unwrap();
    let config = load_with_options(&setup.discovery, ClaudeOptions::default()).unwrap();
    assert!(config.handlers().is_empty());
    let notices = config.notices().join("\n");
    assert!(
        notices.contains(&format!(
            "plugin guard@mkt not loaded: invalid JSON in {}:2:18",
            guard_hooks.display()
        )),
        "{notices}"
    );
    assert!(
        notices.contains(&format!(
            "plugin lint@remote has no hooks file {}",
            lint_hooks.display()
        )),
        "{notices}"
    );
    assert!(
        notices.contains("plugin ghost@mkt is enabled in") && notices.contains("but not installed"),
        "{notices}"
    );
}

#[test]
fn plugin_dir_loads_one_plugin_inline() {
    let setup = setup();
    let mut discovery = setup.discovery.clone();
    discovery.plugin_dirs = vec![setup.home.join("src/mkt/plugins/guard")];
    write(
        &setup
            .home
            .join("src/mkt/plugins/guard/.claude-plugin/plugin.json"),
        r#"{"name": "guard", "version": "1.0.0"}"#,
    );
    let config = load_with_options(&discovery, ClaudeOptions::default()).unwrap();
    let selected = config.select(HookEvent::PreToolUse, Some("Bash"));
    assert_eq!(selected.len(), 1);
    let plugin = selected[0].plugin.as_ref().unwrap();
    assert_eq!(plugin.id, "guard@inline");
    assert_eq!(
        plugin.data_dir,
        setup.home.join(".claude/plugins/data/guard-inline")
    );
    assert!(selected[0].is_user_installed());
}

#[test]
fn settings_env_merges_with_inline_cli_settings() {
    let setup = setup();
    user_settings(&setup, json!({"env": {"A": "user", "B": "user"}}));
    write(
        &setup.project.join(".claude/settings.json"),
        &json!({"env": {"A": "project", "C": "project"}}).to_string(),
    );
    let mut discovery = setup.discovery.clone();
    discovery.extra_settings = vec![PathBuf::from(r#"{"env": {"C": "cli"}}"#)];
    let config = load_with_options(&discovery, ClaudeOptions::default()).unwrap();
    let mut env = config.settings_env.clone();
    env.sort();
    assert_eq!(
        env,
        [("A", "project"), ("B", "user"), ("C", "cli")].map(|(k, v)| (k.to_owned(), v.to_owned()))
    );
}
