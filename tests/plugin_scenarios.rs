//! Published-style Claude Code plugins installed in a scratch HOME exactly as
//! `claude plugin marketplace add` + `claude plugin install` lay them out
//! (capture `pl_basic/layout.json`), then driven through
//! `dsh replay`; the assertions are the plugins' side effects.
//!
//! Sources: `fixtures/plugins/<marketplace>/` (marketplace manifest, plugin
//! manifest, `hooks/hooks.json`, the plugin's scripts, unchanged).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{TestContext, copy_tree, events_of, repo_root};

fn plugins_fixtures() -> PathBuf {
    repo_root().join("fixtures").join("plugins")
}

fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// How a marketplace was added.
enum Marketplace {
    /// `claude plugin marketplace add ~/src/<name>`: plugins run from the source tree.
    Directory,
    /// `claude plugin marketplace add owner/repo`: a clone under
    /// `~/.claude/plugins/marketplaces/<name>`, plugins run from the cache copy.
    GitHub(&'static str),
}

/// Installs `plugin` (version `version`) from fixture marketplace `market`
/// for the user, as Claude Code's plugin commands do. Returns the root
/// Claude Code runs the plugin from.
fn install(
    ctx: &TestContext,
    market: &str,
    kind: &Marketplace,
    plugin: &str,
    version: &str,
) -> PathBuf {
    let home = ctx.home();
    let plugins = home.join(".claude").join("plugins");
    let (market_dir, source) = match kind {
        Marketplace::Directory => {
            let dir = home.join("src").join(market);
            (dir.clone(), json!({"source": "directory", "path": dir}))
        }
        Marketplace::GitHub(repo) => (
            plugins.join("marketplaces").join(market),
            json!({"source": "github", "repo": repo}),
        ),
    };
    copy_tree(&plugins_fixtures().join(market), &market_dir);
    let cache = plugins
        .join("cache")
        .join(market)
        .join(plugin)
        .join(version);
    copy_tree(&market_dir.join("plugins").join(plugin), &cache);
    write_json(
        &plugins.join("known_marketplaces.json"),
        &json!({market: {"source": source, "installLocation": market_dir,
                         "lastUpdated": "2026-11-30T23:24:55.586Z"}}),
    );
    write_json(
        &plugins.join("installed_plugins.json"),
        &json!({"version": 2, "plugins": {format!("{plugin}@{market}"): [{
            "scope": "user", "installPath": cache, "version": version,
            "installedAt": "2026-11-30T23:24:55.847Z", "lastUpdated": "2026-11-30T23:24:55.847Z"
        }]}}),
    );
    match kind {
        Marketplace::Directory => market_dir.join("plugins").join(plugin),
        Marketplace::GitHub(_) => cache,
    }
}

struct Replayed {
    log: String,
    requests: String,
}

fn replay(ctx: &TestContext, fixture: &str) -> Replayed {
    let requests_path = ctx.home().join("requests.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(plugins_fixtures().join(fixture))
        .args(["--session-id", "test-session", "--requests-out"])
        .arg(&requests_path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "replay {fixture}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Replayed {
        log: String::from_utf8_lossy(&output.stdout).into_owned(),
        requests: std::fs::read_to_string(requests_path).unwrap(),
    }
}

fn tool_results(log: &str) -> Vec<(bool, String)> {
    events_of(log, "tool/result")
        .iter()
        .map(|e| {
            (
                e["is_error"].as_bool().unwrap(),
                e["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn audit_lines(ctx: &TestContext) -> Vec<Value> {
    let path = ctx
        .home()
        .join(".claude/plugins/data/safety-guard-acme-tools/audit.jsonl");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn safety_guard_user_settings(ctx: &TestContext, env: Option<Value>) {
    let mut settings = json!({
        "extraKnownMarketplaces": {"acme-tools": {"source": {"source": "directory",
            "path": ctx.home().join("src/acme-tools")}}},
        "enabledPlugins": {"safety-guard@acme-tools": true},
    });
    if let Some(env) = env {
        settings["env"] = env;
    }
    write_json(&ctx.home().join(".claude/settings.json"), &settings);
}

/// The README route for safety-guard: add the local marketplace, install,
/// and opt into blocking with `"env": {"SAFETY_GUARD_MODE": "strict"}`.
#[test]
fn safety_guard_blocks_rm_rf_under_strict_mode_and_audits_every_call() {
    let ctx = TestContext::new();
    let root = install(
        &ctx,
        "acme-tools",
        &Marketplace::Directory,
        "safety-guard",
        "1.2.0",
    );
    safety_guard_user_settings(&ctx, Some(json!({"SAFETY_GUARD_MODE": "strict"})));
    let run = replay(&ctx, "safety_guard.json");

    let results = tool_results(&run.log);
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0], (false, "built".to_owned()));
    // Exit 2: Claude Code's text with the braced root shown as the path the
    // hook ran from (the marketplace source, not the cache) and the plugin line.
    assert_eq!(
        results[1],
        (
            true,
            format!(
                "PreToolUse:Bash hook error: [{}/scripts/guard.sh]: safety-guard: refusing destructive command: rm -rf build\n\nThis hook comes from the safety-guard@acme-tools plugin.",
                root.display()
            )
        )
    );
    assert!(ctx.project().join("build/out.txt").is_file(), "rm -rf ran");
    // PostToolUse ran for the command that ran, not for the blocked one.
    let audit = audit_lines(&ctx);
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(
        audit[0]["command"],
        "mkdir -p build && echo artifact > build/out.txt && echo built"
    );
    assert_eq!(audit[0]["session"], "test-session");
    assert_eq!(audit[0]["cwd"], ctx.project().display().to_string());
    assert!(
        run.requests
            .contains("This hook comes from the safety-guard@acme-tools plugin.")
    );
}

/// Without the settings `env` the plugin's default (warn) policy applies:
/// the same transcript deletes the directory and both calls are audited.
#[test]
fn safety_guard_without_settings_env_only_warns() {
    let ctx = TestContext::new();
    install(
        &ctx,
        "acme-tools",
        &Marketplace::Directory,
        "safety-guard",
        "1.2.0",
    );
    safety_guard_user_settings(&ctx, None);
    let run = replay(&ctx, "safety_guard.json");
    let results = tool_results(&run.log);
    assert_eq!(
        results[1],
        (false, "(Bash completed with no output)".to_owned()),
        "{results:?}"
    );
    assert!(!ctx.project().join("build").exists());
    assert_eq!(audit_lines(&ctx).len(), 2);
}

/// A project that switches the plugin off (`"enabledPlugins": {…: false}` in
/// `.claude/settings.json`) runs none of its hooks, though the user enabled it.
#[test]
fn safety_guard_disabled_by_the_project() {
    let ctx = TestContext::new();
    install(
        &ctx,
        "acme-tools",
        &Marketplace::Directory,
        "safety-guard",
        "1.2.0",
    );
    safety_guard_user_settings(&ctx, Some(json!({"SAFETY_GUARD_MODE": "strict"})));
    write_json(
        &ctx.project().join(".claude/settings.json"),
        &json!({"enabledPlugins": {"safety-guard@acme-tools": false}}),
    );
    let run = replay(&ctx, "safety_guard.json");
    assert!(events_of(&run.log, "hook/invoked").is_empty());
    assert!(!ctx.project().join("build").exists());
    assert!(audit_lines(&ctx).is_empty());
}

/// The README route for session-notes: a GitHub marketplace (cache copy runs),
/// enabled for the team in the project's `.claude/settings.json`.
#[test]
fn session_notes_injects_conventions_and_saves_a_note() {
    let ctx = TestContext::new();
    let root = install(
        &ctx,
        "notes-market",
        &Marketplace::GitHub("example/notes-market"),
        "session-notes",
        "0.3.1",
    );
    write_json(
        &ctx.project().join(".claude/settings.json"),
        &json!({"enabledPlugins": {"session-notes@notes-market": true}}),
    );
    let run = replay(&ctx, "session_notes.json");

    // additionalContext from a plugin carries no plugin attribution (`pl_context`).
    let first: Value = serde_json::from_str(run.requests.lines().next().unwrap()).unwrap();
    let contexts: Vec<&str> = first["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .filter(|text| text.starts_with("SessionStart"))
        .collect();
    assert_eq!(
        contexts,
        [
            "SessionStart hook additional context: Team conventions: run `make check` before committing; never edit generated files under gen/."
        ]
    );
    let note = std::fs::read_to_string(ctx.project().join(".session-notes/test-session.md"))
        .expect("the Stop hook saved a note");
    assert_eq!(
        note,
        "# Session note\n\nRun make check before committing.\n"
    );
    let sessions = std::fs::read_to_string(
        ctx.home()
            .join(".claude/plugins/data/session-notes-notes-market/sessions.txt"),
    )
    .unwrap();
    assert_eq!(sessions, "test-session\n");
    // The hooks ran from the cache copy, and the log says which file they came from.
    let invoked = events_of(&run.log, "hook/invoked");
    assert_eq!(invoked.len(), 2, "{invoked:?}");
    for event in &invoked {
        let origin = event["origin"].as_str().unwrap();
        assert!(
            origin.starts_with(&format!("{}/hooks/hooks.json#hooks.", root.display())),
            "{origin}"
        );
    }

    // `dsh hooks list` shows the plugin's hooks with their file; enabled only by
    // the project, they are project hooks for dsh's trust (not yet trusted).
    let listed = ctx
        .dsh()
        .args(["hooks", "list", "--format", "json"])
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let rows = listed["hooks"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{listed}");
    for row in rows {
        assert!(
            row["origin"]
                .as_str()
                .unwrap()
                .contains("plugins/cache/notes-market/session-notes/0.3.1/hooks/hooks.json"),
            "{row}"
        );
        assert_eq!(row["trust"], "untrusted", "{row}");
        assert_eq!(row["plugin"], "session-notes@notes-market", "{row}");
    }
    // The text listing names the plugin on each row.
    let text = ctx.dsh().args(["hooks", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert_eq!(
        text.matches(", plugin session-notes@notes-market — ")
            .count(),
        2,
        "{text}"
    );
}

/// A plugin the user enabled counts as user-installed: no trust prompt.
#[test]
fn a_user_enabled_plugin_is_user_level_for_trust() {
    let ctx = TestContext::new();
    install(
        &ctx,
        "acme-tools",
        &Marketplace::Directory,
        "safety-guard",
        "1.2.0",
    );
    safety_guard_user_settings(&ctx, None);
    let listed = ctx
        .dsh()
        .args(["hooks", "list", "--format", "json"])
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let rows = listed["hooks"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{listed}");
    for row in rows {
        assert_eq!(row["trust"], "user-level", "{row}");
        assert!(
            row["origin"]
                .as_str()
                .unwrap()
                .contains("src/acme-tools/plugins/safety-guard/hooks/hooks.json"),
            "{row}"
        );
    }
}

/// Codex installs the same published plugin unchanged (`codex plugin marketplace
/// add` + `codex plugin add`, docs/sources.md): the cache copy runs, with
/// `${CLAUDE_PLUGIN_ROOT}` substituted and `CLAUDE_PLUGIN_DATA` under `$CODEX_HOME`.
fn install_for_codex(ctx: &TestContext, features: &str) -> PathBuf {
    let codex_home = ctx.home().join(".codex");
    let market = ctx.home().join("src/acme-tools");
    copy_tree(&plugins_fixtures().join("acme-tools"), &market);
    let cache = codex_home.join("plugins/cache/acme-tools/safety-guard/1.2.0");
    copy_tree(&market.join("plugins/safety-guard"), &cache);
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "{features}[marketplaces.acme-tools]\nsource_type = \"local\"\nsource = \"{}\"\n\n[plugins.\"safety-guard@acme-tools\"]\nenabled = true\n",
            market.display()
        ),
    )
    .unwrap();
    codex_home
}

#[test]
fn codex_runs_the_cached_safety_guard() {
    let ctx = TestContext::new();
    let codex_home = install_for_codex(&ctx, "");
    let requests_path = ctx.home().join("requests.jsonl");
    let output = ctx
        .dsh()
        .env("SAFETY_GUARD_MODE", "strict")
        .arg("replay")
        .arg(plugins_fixtures().join("safety_guard.json"))
        .args(["--session-id", "test-session", "--requests-out"])
        .arg(&requests_path)
        .output()
        .unwrap();
    assert!(output.status.success());
    let log = String::from_utf8_lossy(&output.stdout);
    let results = tool_results(&log);
    assert_eq!(results[0], (false, "built".to_owned()));
    assert_eq!(
        results[1],
        (
            true,
            "Command blocked by PreToolUse hook: safety-guard: refusing destructive command: rm -rf build. Command: rm -rf build".to_owned()
        )
    );
    assert!(ctx.project().join("build/out.txt").is_file());
    let audit = std::fs::read_to_string(
        codex_home.join("plugins/data/safety-guard-acme-tools/audit.jsonl"),
    )
    .unwrap();
    assert_eq!(audit.lines().count(), 1, "{audit}");
    // The hook that ran is the cache copy's, command text substituted.
    let invoked = events_of(&log, "hook/invoked");
    let pre = invoked.iter().find(|e| e["event"] == "PreToolUse").unwrap();
    assert!(
        pre["origin"].as_str().unwrap().starts_with(
            &codex_home
                .join("plugins/cache/acme-tools/safety-guard/1.2.0/hooks/hooks.json")
                .display()
                .to_string()
        ),
        "{pre}"
    );
}

#[test]
fn codex_plugins_feature_off_runs_no_plugin_hook() {
    let ctx = TestContext::new();
    install_for_codex(&ctx, "[features]\nplugins = false\n\n");
    let output = ctx
        .dsh()
        .env("SAFETY_GUARD_MODE", "strict")
        .arg("replay")
        .arg(plugins_fixtures().join("safety_guard.json"))
        .args(["--session-id", "test-session"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let log = String::from_utf8_lossy(&output.stdout);
    assert!(events_of(&log, "hook/invoked").is_empty());
    assert!(!ctx.project().join("build").exists());
}
