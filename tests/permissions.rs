//! Permissions through the real `dsh replay`: modes, rules and workspace trust
//! decide whether a call runs, and the model gets Claude Code's texts.

use crate::support::TestContext;

fn write_fixture(ctx: &TestContext, command: &str) -> std::path::PathBuf {
    let path = ctx.project().join("perm_fixture.json");
    let fixture = serde_json::json!({
        "prompts": ["Please run it"],
        "model": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
            {"text": "FINAL: all done."}
        ]
    });
    std::fs::write(&path, fixture.to_string()).unwrap();
    path
}

fn project_settings(ctx: &TestContext, json: &str) {
    let dir = ctx.project().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), json).unwrap();
}

fn replay(ctx: &TestContext, fixture: &std::path::Path, args: &[&str]) -> String {
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(fixture)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The text as it appears inside a JSON log line.
fn in_json(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap();
    quoted[1..quoted.len() - 1].to_owned()
}

#[test]
fn untrusted_project_allow_is_dropped_and_default_mode_asks_for_touch() {
    let ctx = TestContext::new();
    project_settings(&ctx, r#"{"permissions":{"allow":["Bash(touch:*)"]}}"#);
    let fixture = write_fixture(&ctx, "touch allowed.txt");
    let log = replay(&ctx, &fixture, &["--permission-mode", "manual"]);
    let project = ctx.project().canonicalize().unwrap();
    let expected = format!(
        "touch in '{p}/allowed.txt' needs approval. The path is inside the working directories for this session ('{p}'), and Claude Code asks before a shell command creates, changes or removes files there.",
        p = project.display()
    );
    assert!(log.contains(&in_json(&expected)), "{log}");
    assert!(!ctx.project().join("allowed.txt").exists());
}

#[test]
fn trusted_project_allow_runs_touch() {
    let ctx = TestContext::new();
    project_settings(&ctx, r#"{"permissions":{"allow":["Bash(touch:*)"]}}"#);
    let project = ctx.project().canonicalize().unwrap();
    let claude_json = serde_json::json!({
        "projects": {project.display().to_string(): {"hasTrustDialogAccepted": true}}
    });
    std::fs::write(ctx.home().join(".claude.json"), claude_json.to_string()).unwrap();
    let fixture = write_fixture(&ctx, "touch allowed.txt");
    replay(&ctx, &fixture, &["--permission-mode", "manual"]);
    assert!(ctx.project().join("allowed.txt").exists());
}

#[test]
fn deny_rule_applies_under_replays_default_bypass() {
    let ctx = TestContext::new();
    std::fs::write(ctx.project().join("victim.txt"), "x").unwrap();
    let fixture = write_fixture(&ctx, "rm -f victim.txt");
    let log = replay(&ctx, &fixture, &["--disallowedTools", "Bash(rm:*)"]);
    assert!(
        log.contains("Permission to use Bash with command rm -f victim.txt has been denied."),
        "{log}"
    );
    assert!(ctx.project().join("victim.txt").exists());
    // Without the rule, replay's bypassPermissions runs it.
    replay(&ctx, &fixture, &[]);
    assert!(!ctx.project().join("victim.txt").exists());
}

#[test]
fn inline_settings_json_rules_apply_as_a_settings_file_s_do() {
    // `--settings '{…}'`: Claude Code takes the argument as the settings
    // JSON itself; its deny rule binds like a `--settings` file's.
    let ctx = TestContext::new();
    std::fs::write(ctx.project().join("victim.txt"), "x").unwrap();
    let fixture = write_fixture(&ctx, "rm -f victim.txt");
    let inline = r#"{"permissions":{"deny":["Bash(rm:*)"]}}"#;
    let log = replay(&ctx, &fixture, &["--settings", inline]);
    assert!(
        log.contains("Permission to use Bash with command rm -f victim.txt has been denied."),
        "{log}"
    );
    assert!(ctx.project().join("victim.txt").exists());
}

#[test]
fn allowed_tools_pre_approves_and_prompts_none_wraps_the_reason() {
    let ctx = TestContext::new();
    let fixture = write_fixture(&ctx, "touch a.txt");
    let log = replay(
        &ctx,
        &fixture,
        &[
            "--permission-mode",
            "default",
            "--permission-prompts",
            "none",
        ],
    );
    assert!(
        log.contains("this session has no approval surface"),
        "{log}"
    );
    assert!(!ctx.project().join("a.txt").exists());
    replay(
        &ctx,
        &fixture,
        &[
            "--permission-mode",
            "default",
            "--allowed-tools",
            "Bash(touch:*)",
        ],
    );
    assert!(ctx.project().join("a.txt").exists());
}

#[test]
fn a_bad_rule_is_refused_with_its_position() {
    let ctx = TestContext::new();
    project_settings(&ctx, "{\n  \"permissions\": {\"deny\": [\"Bash(rm\"]}\n}");
    let fixture = write_fixture(&ctx, "echo hi");
    let output = ctx.dsh().arg("replay").arg(&fixture).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("settings.json:2:"), "{stderr}");
    assert!(stderr.contains("unclosed `(`"), "{stderr}");
}

#[test]
fn hooks_list_shows_the_mode_and_every_rule_with_its_source() {
    let ctx = TestContext::new();
    project_settings(
        &ctx,
        r#"{"permissions":{"defaultMode":"acceptEdits","allow":["Bash(touch:*)"],"deny":["Read(./secrets/**)"]}}"#,
    );
    let user = ctx.home().join(".claude");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("settings.json"),
        r#"{"permissions":{"defaultMode":"plan","ask":["Bash(git push:*)"]}}"#,
    )
    .unwrap();
    let output = ctx
        .dsh()
        .args(["hooks", "list", "--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let perms = &doc["permissions"];
    // The project layer outranks the user layer.
    assert_eq!(perms["mode"], "acceptEdits", "{perms}");
    assert!(
        perms["mode_from"]
            .as_str()
            .unwrap()
            .ends_with(".claude/settings.json"),
        "{perms}"
    );
    assert_eq!(perms["workspace_trusted"], false);
    let rules: Vec<(String, String, String, bool)> = perms["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["behavior"].as_str().unwrap().to_owned(),
                r["rule"].as_str().unwrap().to_owned(),
                r["source"].as_str().unwrap().to_owned(),
                r["dropped"].as_bool().unwrap(),
            )
        })
        .collect();
    let row = |b: &str, r: &str, s: &str, d: bool| (b.to_owned(), r.to_owned(), s.to_owned(), d);
    assert_eq!(
        rules,
        vec![
            row("deny", "Read(./secrets/**)", "projectSettings", false),
            row("allow", "Bash(touch:*)", "projectSettings", true),
            row("ask", "Bash(git push:*)", "userSettings", false),
        ]
    );
    let text = ctx.dsh().args(["hooks", "list"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("  mode acceptEdits (defaultMode in "),
        "{text}"
    );
    assert!(
        text.contains("  allow Bash(touch:*) [projectSettings, dropped: workspace not trusted]"),
        "{text}"
    );
}

/// Writes `$CODEX_HOME/config.toml` with `approval_policy` and
/// `sandbox_mode`, and a PermissionRequest hook that records its stdin.
fn codex_policy(ctx: &TestContext, policy: &str, sandbox: &str) -> std::path::PathBuf {
    let codex = ctx.home().join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(
        codex.join("config.toml"),
        format!("approval_policy = \"{policy}\"\nsandbox_mode = \"{sandbox}\"\n"),
    )
    .unwrap();
    let record = ctx.home().join("permission_request.json");
    std::fs::write(
        codex.join("hooks.json"),
        serde_json::json!({"hooks": {"PermissionRequest": [{"hooks": [
            {"type": "command", "command": format!("cat > '{}'", record.display())}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    record
}

/// Permission area, Codex's approval policy: under `never` a
/// call that needs approval is rejected with Codex's text and no
/// PermissionRequest hook runs; under `on-request` the hook runs and is
/// told `permission_mode: default`. The sandbox Codex would use is named,
/// in the session header and `hooks list`, as not enforced.
#[test]
fn codex_approval_policy_decides_permission_requests_and_no_sandbox_is_claimed() {
    let ctx = TestContext::new();
    let record = codex_policy(&ctx, "never", "workspace-write");
    let fixture = write_fixture(&ctx, "touch never.txt");
    let log = replay(&ctx, &fixture, &["--permission-mode", "default"]);
    assert!(
        log.contains(&in_json(dsh_hooks_codex::config::approval::NEVER_TEXT)),
        "{log}"
    );
    assert!(!record.exists(), "no PermissionRequest hook under never");
    assert!(!ctx.project().join("never.txt").exists());
    let header: serde_json::Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    let notices = header["notices"].as_array().unwrap();
    assert!(
        notices.iter().any(|n| n.as_str().unwrap().starts_with(
            "codex: sandbox_mode=workspace-write requested; no sandbox is enforced by dsh"
        )),
        "{header}"
    );
    let text = ctx.dsh().args(["hooks", "list"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("  codex: approval_policy=never (",)
            && text
                .contains("sandbox_mode=workspace-write requested; no sandbox is enforced by dsh"),
        "{text}"
    );

    codex_policy(&ctx, "on-request", "read-only");
    let log = replay(&ctx, &fixture, &["--permission-mode", "default"]);
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "PermissionRequest");
    assert_eq!(input["permission_mode"], "default");
    assert_eq!(input["tool_input"]["command"], "touch never.txt");
    // Nobody answered: replay has no person, so the ask is denied.
    assert!(!log.contains(&in_json(dsh_hooks_codex::config::approval::NEVER_TEXT)));
    assert!(!ctx.project().join("never.txt").exists());
}

/// Permission area: `dsh hooks check` parses every permission
/// rule of every settings layer with the session's own parser and reports
/// each bad one (not only the first) at `file:line:col` with the rule text,
/// and a `defaultMode` that is not a mode.
#[test]
fn hooks_check_reports_every_bad_rule_and_default_mode_with_positions() {
    let ctx = TestContext::new();
    project_settings(
        &ctx,
        "{\n  \"permissions\": {\n    \"allow\": [\"Read\", \"Bash(npm\"],\n    \"deny\": [\"\", \"Edit(./src/**)\"],\n    \"defaultMode\": \"yolo\"\n  }\n}\n",
    );
    let user = ctx.home().join(".claude");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("settings.json"),
        "{\"permissions\": {\"ask\": [\"Bash(git push:*)\", \"Bad Tool\"]}}",
    )
    .unwrap();
    let output = ctx.dsh().args(["hooks", "check"]).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{text}");
    let project = ctx.project().join(".claude/settings.json");
    let project = project.display();
    for line in [
        format!(
            "error[invalid-permission-rule]: {project}:3:28: permissions.allow[1]: rule \"Bash(npm\" in `permissions.allow`: unclosed `(`"
        ),
        format!(
            "error[invalid-permission-rule]: {project}:4:15: permissions.deny[0]: rule \"\" in `permissions.deny`: empty rule"
        ),
        format!(
            "error[invalid-default-mode]: {project}:5:5: permissions.defaultMode: `permissions.defaultMode`:"
        ),
        format!(
            "error[invalid-permission-rule]: {}:1:50: permissions.ask[1]: rule \"Bad Tool\" in `permissions.ask`: invalid character ' '",
            user.join("settings.json").display()
        ),
    ] {
        assert!(text.contains(&line), "missing {line:?} in\n{text}");
    }
    assert!(text.contains("4 error(s), 0 warning(s)"), "{text}");
    // The good rules are not reported.
    assert!(!text.contains("Edit(./src/**)"), "{text}");
    assert!(!text.contains("git push"), "{text}");
}

/// Permission area: `dsh hooks trust` (no selector) trusts the
/// workspace as a whole, as Claude Code's trust dialog does, so the
/// project's `allow` rules apply without `~/.claude.json`; `dsh hooks
/// untrust` takes it back. Trust is per directory.
#[test]
fn dsh_hooks_trust_lets_project_allow_rules_apply() {
    let ctx = TestContext::new();
    project_settings(&ctx, r#"{"permissions":{"allow":["Bash(touch:*)"]}}"#);
    let fixture = write_fixture(&ctx, "touch allowed.txt");
    let trusted_by = |ctx: &TestContext| {
        let output = ctx
            .dsh()
            .args(["hooks", "list", "--format", "json"])
            .output()
            .unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        doc["permissions"]["workspace_trusted_by"].clone()
    };
    assert_eq!(trusted_by(&ctx), serde_json::Value::Null);

    // No project hooks: the workspace is still trusted.
    let output = ctx.dsh().args(["hooks", "trust"]).output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{text}");
    assert!(text.contains("trusted the workspace"), "{text}");
    assert_eq!(trusted_by(&ctx), "dsh hooks trust");
    replay(&ctx, &fixture, &["--permission-mode", "manual"]);
    assert!(ctx.project().join("allowed.txt").exists());

    // A subdirectory is another workspace.
    let sub = ctx.project().join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let output = ctx
        .dsh()
        .current_dir(&sub)
        .args(["hooks", "list", "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["permissions"]["workspace_trusted"], false, "{doc}");

    std::fs::remove_file(ctx.project().join("allowed.txt")).unwrap();
    let output = ctx.dsh().args(["hooks", "untrust"]).output().unwrap();
    assert!(output.status.success());
    assert_eq!(trusted_by(&ctx), serde_json::Value::Null);
    replay(&ctx, &fixture, &["--permission-mode", "manual"]);
    assert!(!ctx.project().join("allowed.txt").exists());
}

/// Permission area: `dsh hooks check` on a Codex `config.toml`
/// warns about an `approval_policy` dsh ignores and names a requested
/// sandbox as not enforced (warnings: exit 0).
#[test]
fn hooks_check_warns_about_codex_policy_and_the_sandbox() {
    let ctx = TestContext::new();
    let codex = ctx.home().join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(
        codex.join("config.toml"),
        "model = \"x\"\napproval_policy = \"sometimes\"\nsandbox_mode = \"read-only\"\n",
    )
    .unwrap();
    let output = ctx.dsh().args(["hooks", "check"]).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{text}");
    let file = codex.join("config.toml");
    for line in [
        format!(
            "warning[invalid-approval-policy]: {}:2:19: approval_policy: approval_policy = \"sometimes\" is not",
            file.display()
        ),
        format!(
            "warning[sandbox-not-enforced]: {}:3:16: sandbox_mode: sandbox_mode=read-only requested; no sandbox is enforced by dsh",
            file.display()
        ),
    ] {
        assert!(text.contains(&line), "missing {line:?} in\n{text}");
    }
}

/// Writes a settings file whose `event` hook prints `answer` (a JSON
/// document) and appends a line to `ran.log` each time it runs.
fn answering_hook(ctx: &TestContext, event: &str, answer: serde_json::Value) {
    let script = ctx.project().join(format!("{event}.sh"));
    let marker = ctx.project().join(format!("{event}.ran"));
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat > /dev/null\necho run >> '{}'\ncat <<'JSON'\n{answer}\nJSON\n",
            marker.display()
        ),
    )
    .unwrap();
    let settings = serde_json::json!({
        "hooks": {event: [{"hooks": [{"type": "command", "command": format!("sh '{}'", script.display())}]}]}
    });
    project_settings(ctx, &settings.to_string());
}

fn runs_of(ctx: &TestContext, event: &str) -> usize {
    std::fs::read_to_string(ctx.project().join(format!("{event}.ran")))
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

fn two_touches(ctx: &TestContext) -> std::path::PathBuf {
    let path = ctx.project().join("two_touches.json");
    let fixture = serde_json::json!({
        "prompts": ["Please touch two files"],
        "model": [
            {"tool_calls": [{"id": "t1", "name": "bash", "arguments": {"command": "touch a.txt"}}]},
            {"tool_calls": [{"id": "t2", "name": "bash", "arguments": {"command": "touch b.txt"}}]},
            {"text": "FINAL: all done."}
        ]
    });
    std::fs::write(&path, fixture.to_string()).unwrap();
    path
}

fn events(log: &str) -> Vec<serde_json::Value> {
    log.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn result_of<'a>(events: &'a [serde_json::Value], call: &str) -> &'a serde_json::Value {
    events
        .iter()
        .find(|e| e["type"] == "tool/result" && e["call_id"] == call)
        .unwrap_or_else(|| panic!("no tool/result for {call}"))
}

#[test]
fn updated_permissions_to_local_settings_persist_and_the_next_call_skips_the_request() {
    let ctx = TestContext::new();
    answering_hook(
        &ctx,
        "PermissionRequest",
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedPermissions": [{"type": "addRules",
                "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}],
                "behavior": "allow", "destination": "localSettings"}]}}}),
    );
    let fixture = two_touches(&ctx);
    let log = replay(&ctx, &fixture, &["--permission-mode", "default"]);
    assert!(ctx.project().join("a.txt").exists());
    assert!(ctx.project().join("b.txt").exists());
    // Asked once: the rule answered the second call.
    assert_eq!(runs_of(&ctx, "PermissionRequest"), 1, "{log}");
    let local = std::fs::read_to_string(ctx.project().join(".claude/settings.local.json")).unwrap();
    let local: serde_json::Value = serde_json::from_str(&local).unwrap();
    assert_eq!(
        local["permissions"]["allow"],
        serde_json::json!(["Bash(touch:*)"])
    );
    let events = events(&log);
    let first = &result_of(&events, "t1")["decided_by"];
    assert_eq!(first["kind"], "hook", "{first}");
    assert!(
        first["source"]
            .as_str()
            .unwrap()
            .starts_with("claude:PermissionRequest"),
        "{first}"
    );
    let second = &result_of(&events, "t2")["decided_by"];
    assert_eq!(
        second,
        &serde_json::json!({"kind": "rule", "source": "session", "rule": "Bash(touch:*)"})
    );
    // The next session reads the persisted rule (a local rule is project-scoped,
    // so it needs the workspace trusted).
    let project = ctx.project().canonicalize().unwrap();
    let claude_json = serde_json::json!({
        "projects": {project.display().to_string(): {"hasTrustDialogAccepted": true}}
    });
    std::fs::write(ctx.home().join(".claude.json"), claude_json.to_string()).unwrap();
    std::fs::remove_file(ctx.project().join("a.txt")).unwrap();
    let log = replay(&ctx, &fixture, &["--permission-mode", "default"]);
    assert_eq!(runs_of(&ctx, "PermissionRequest"), 1, "{log}");
    assert!(ctx.project().join("a.txt").exists());
}

#[test]
fn a_deny_with_interrupt_stops_the_turn_with_the_hooks_message() {
    let ctx = TestContext::new();
    answering_hook(
        &ctx,
        "PermissionRequest",
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "NOT-TODAY", "interrupt": true}}}),
    );
    let fixture = two_touches(&ctx);
    let log = replay(&ctx, &fixture, &["--permission-mode", "default"]);
    let events = events(&log);
    let first = result_of(&events, "t1");
    assert_eq!(first["content"], "NOT-TODAY");
    assert_eq!(first["disposition"], "approval_rejected");
    // The turn stopped before the second call was made.
    assert!(events.iter().all(|e| e["call_id"] != "t2"), "{log}");
    let end = events.iter().find(|e| e["type"] == "turn/end").unwrap();
    assert_eq!(end["reason"], "stopped", "{end}");
    assert!(!ctx.project().join("a.txt").exists());
}

#[test]
fn updated_input_that_fails_the_schema_is_refused_and_logged() {
    let ctx = TestContext::new();
    answering_hook(
        &ctx,
        "PermissionRequest",
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": {"command": 7}}}}),
    );
    let fixture = write_fixture(&ctx, "touch a.txt");
    let log = replay(&ctx, &fixture, &["--permission-mode", "default"]);
    let events = events(&log);
    let result = events.iter().find(|e| e["type"] == "tool/result").unwrap();
    assert_eq!(result["disposition"], "invalid_arguments", "{result}");
    assert!(!ctx.project().join("a.txt").exists());
}

#[test]
fn updated_input_runs_and_the_result_records_the_rewrite() {
    let ctx = TestContext::new();
    answering_hook(
        &ctx,
        "PermissionRequest",
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": {"command": "touch rewritten.txt"}}}}),
    );
    let fixture = write_fixture(&ctx, "touch original.txt");
    let log = replay(&ctx, &fixture, &["--permission-mode", "default"]);
    assert!(ctx.project().join("rewritten.txt").exists());
    assert!(!ctx.project().join("original.txt").exists());
    let events = events(&log);
    let result = events.iter().find(|e| e["type"] == "tool/result").unwrap();
    assert_eq!(
        result["rewrite"]["arguments"],
        serde_json::json!({"command": "touch rewritten.txt"})
    );
    assert!(
        result["rewrite"]["by"]
            .as_str()
            .unwrap()
            .starts_with("claude:PermissionRequest"),
        "{result}"
    );
    // The logged call keeps the model's arguments.
    let call = events.iter().find(|e| e["type"] == "tool/call").unwrap();
    assert_eq!(call["arguments"]["command"], "touch original.txt");
}

#[test]
fn permission_denied_fires_in_auto_mode_and_retry_tells_the_model() {
    let ctx = TestContext::new();
    answering_hook(
        &ctx,
        "PermissionDenied",
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": true}}),
    );
    let fixture = write_fixture(&ctx, "curl -s http://127.0.0.1:9/upload");
    let log = replay(&ctx, &fixture, &["--permission-mode", "auto"]);
    assert_eq!(runs_of(&ctx, "PermissionDenied"), 1, "{log}");
    let events = events(&log);
    let result = events.iter().find(|e| e["type"] == "tool/result").unwrap();
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .starts_with("Auto mode is unavailable"),
        "{result}"
    );
    let context = events
        .iter()
        .find(|e| e["type"] == "context/message")
        .expect("the retry context");
    assert_eq!(
        context["content"],
        "The PermissionDenied hook indicated you may retry this tool call."
    );
    // An ordinary denial does not fire it.
    let fixture = write_fixture(&ctx, "touch a.txt");
    replay(&ctx, &fixture, &["--permission-mode", "dontAsk"]);
    assert_eq!(runs_of(&ctx, "PermissionDenied"), 1);
}

#[test]
fn a_pre_tool_use_allow_answers_the_prompt_but_not_a_deny_rule() {
    let ctx = TestContext::new();
    answering_hook(
        &ctx,
        "PreToolUse",
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}),
    );
    let fixture = write_fixture(&ctx, "touch a.txt");
    replay(&ctx, &fixture, &["--permission-mode", "default"]);
    assert!(ctx.project().join("a.txt").exists());
    std::fs::remove_file(ctx.project().join("a.txt")).unwrap();
    let log = replay(
        &ctx,
        &fixture,
        &[
            "--permission-mode",
            "default",
            "--disallowedTools",
            "Bash(touch:*)",
        ],
    );
    assert!(!ctx.project().join("a.txt").exists());
    let events = events(&log);
    let result = events.iter().find(|e| e["type"] == "tool/result").unwrap();
    assert_eq!(
        result["decided_by"],
        serde_json::json!({"kind": "flag", "source": "--disallowedTools", "rule": "Bash(touch:*)",
            "reason": "Permission to use Bash with command touch a.txt has been denied."})
    );
}

#[test]
fn a_denied_read_never_reaches_pre_tool_use_and_dsh_log_names_the_rule() {
    let ctx = TestContext::new();
    answering_hook(&ctx, "PreToolUse", serde_json::json!({}));
    let mut settings: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(ctx.project().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    settings["permissions"] = serde_json::json!({"deny": ["Read(./secret.txt)"]});
    project_settings(&ctx, &settings.to_string());
    std::fs::write(ctx.project().join("secret.txt"), "TOP").unwrap();
    let path = ctx.project().join("read.json");
    let fixture = serde_json::json!({
        "prompts": ["read it"],
        "model": [
            {"tool_calls": [{"name": "read", "arguments": {"file_path": "secret.txt"}}]},
            {"text": "done"}
        ]
    });
    std::fs::write(&path, fixture.to_string()).unwrap();
    let log = replay(&ctx, &path, &[]);
    assert_eq!(runs_of(&ctx, "PreToolUse"), 0, "{log}");
    assert!(log.contains("File is in a directory that is denied by your permission settings."));
    let log_file = ctx.project().join("session.jsonl");
    std::fs::write(&log_file, &log).unwrap();
    let shown = ctx.dsh().arg("log").arg(&log_file).output().unwrap();
    let shown = String::from_utf8(shown.stdout).unwrap();
    assert!(
        shown.contains("decided by rule `Read(./secret.txt)` from "),
        "{shown}"
    );
}

/// A repository's committed links do not carry a read past a deny
/// rule, and acceptEdits does not auto-approve a write that a link carries
/// out of the project.
#[test]
fn symlinks_are_judged_where_they_point() {
    let ctx = TestContext::new();
    let ssh = ctx.home().join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("id_rsa"), "PRIVATE KEY").unwrap();
    let bashrc = ctx.home().join(".bashrc");
    std::fs::write(&bashrc, "# mine\n").unwrap();
    let outside = ctx.home().join("outside.txt");
    std::fs::write(&outside, "untouched\n").unwrap();
    std::os::unix::fs::symlink(&ssh, ctx.project().join("notes")).unwrap();
    std::os::unix::fs::symlink(&bashrc, ctx.project().join("rc")).unwrap();
    std::os::unix::fs::symlink(&outside, ctx.project().join("link")).unwrap();
    project_settings(
        &ctx,
        r#"{"permissions":{"deny":["Read(~/.ssh/**)","Edit(~/.bashrc)"]}}"#,
    );
    let path = ctx.project().join("links.json");
    let call = |id: &str, name: &str, args: serde_json::Value| serde_json::json!({"id": id, "name": name, "arguments": args});
    let fixture = serde_json::json!({
        "prompts": ["go"],
        "model": [
            {"tool_calls": [call("r1", "read", serde_json::json!({"file_path": "notes/id_rsa"}))]},
            {"tool_calls": [call("w1", "write", serde_json::json!({"file_path": "rc", "content": "evil\n"}))]},
            {"tool_calls": [call("w2", "write", serde_json::json!({"file_path": "link", "content": "evil\n"}))]},
            {"tool_calls": [call("w3", "write", serde_json::json!({"file_path": "inside.txt", "content": "ok\n"}))]},
            {"text": "done"}
        ]
    });
    std::fs::write(&path, fixture.to_string()).unwrap();
    let log = replay(&ctx, &path, &["--permission-mode", "acceptEdits"]);
    let events = events(&log);
    let text_of = |id: &str| result_of(&events, id).to_string();
    // The read through `notes` hits the `~/.ssh` deny rule.
    assert!(
        text_of("r1")
            .contains("File is in a directory that is denied by your permission settings."),
        "{log}"
    );
    assert!(!log.contains("PRIVATE KEY"), "{log}");
    // The write through `rc` hits the `~/.bashrc` deny rule.
    assert!(text_of("w1").contains("Permission to use Write"), "{log}");
    assert_eq!(std::fs::read_to_string(&bashrc).unwrap(), "# mine\n");
    // The write through `link` leaves the project: acceptEdits asks, and
    // headless replay has nobody to answer.
    assert!(
        text_of("w2").contains("you haven't granted it yet"),
        "{log}"
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "untouched\n");
    // A plain file inside the project still runs unasked.
    assert_eq!(
        std::fs::read_to_string(ctx.project().join("inside.txt")).unwrap(),
        "ok\n"
    );
}

/// `git status` only reads, but git runs what the repository's own
/// configuration names (`core.fsmonitor` on every status): in a repository
/// whose `.git` sets a program, the read-only shortcut does not hold.
#[test]
fn a_repository_whose_git_config_runs_a_program_loses_the_read_only_shortcut() {
    let ctx = TestContext::new();
    let project = ctx.project();
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git")
            .args(args)
            .current_dir(&project)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
    };
    git(&["init", "-q"]);
    let fixture = write_fixture(&ctx, "git status --short");
    // A plain repository: the shortcut runs it in manual mode.
    let log = replay(&ctx, &fixture, &["--permission-mode", "manual"]);
    assert!(log.contains("perm_fixture.json"), "{log}");
    let pwned = ctx.home().join("PWNED");
    git(&[
        "config",
        "core.fsmonitor",
        &format!("touch '{}'; false", pwned.display()),
    ]);
    // Git itself would run it.
    git(&["status", "--short"]);
    assert!(pwned.exists());
    std::fs::remove_file(&pwned).unwrap();
    let log = replay(&ctx, &fixture, &["--permission-mode", "manual"]);
    let config = project.canonicalize().unwrap().join(".git/config");
    let expected = format!(
        "dsh cannot check the Bash command `git status --short` against the permission rules because the repository's git configuration sets `core.fsmonitor` ({}), which can make git run a program, so it needs explicit approval.",
        config.display()
    );
    assert!(log.contains(&in_json(&expected)), "{log}");
    assert!(!pwned.exists());
}
