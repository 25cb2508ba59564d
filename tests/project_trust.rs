//! A cloned repository's own configuration before and after trust: project
//! settings that change how the user's hooks and tools run
//! wait for a trusted workspace; hook trust pins every script a command
//! names, is decided on the parse that runs, and a changed hook runs in no
//! front end until it is trusted again.

use std::path::Path;

use dsh_provider::mock::{MockResponse, MockToolCall};
use serde_json::{Value, json};

use crate::acp_server::{AcpClient, is_method};
use crate::cli_headless::{dsh, mock};
use crate::support::TestContext;

fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A harmless user-level hook, so the Claude Code bridge is loaded (and with
/// it the settings `env`), as it is for anyone who has hooks of their own.
fn user_hook(ctx: &TestContext, command: &str) {
    write_json(
        &ctx.home().join(".claude").join("settings.json"),
        &json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}}),
    );
}

fn trust_workspace(ctx: &TestContext) {
    let output = ctx.dsh().args(["hooks", "trust"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
}

/// The project's Claude Code settings: `commands` guard every Bash call
/// (PreToolUse).
fn guard_bash(project: &Path, commands: &[&str]) {
    let hooks: Vec<Value> = commands
        .iter()
        .map(|command| json!({"type": "command", "command": command}))
        .collect();
    write_json(
        &project.join(".claude/settings.json"),
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}}),
    );
}

/// A model that runs each of `commands` with the bash tool, one reply
/// each, then ends.
fn bash_calls(commands: &[&str]) -> Vec<MockResponse> {
    let mut script: Vec<MockResponse> = commands
        .iter()
        .enumerate()
        .map(|(i, command)| {
            MockResponse::tool_calls(
                "",
                vec![MockToolCall::new(
                    format!("call_{i}"),
                    "bash",
                    &json!({"command": command}),
                )],
            )
        })
        .collect();
    script.push(MockResponse::text("done"));
    script
}

fn status_json(ctx: &TestContext) -> Value {
    let output = ctx.dsh().args(["status", "--json"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn echo_call() -> Vec<MockResponse> {
    vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "bash",
                &json!({"command": "echo hello"}),
            )],
        ),
        MockResponse::text("done"),
    ]
}

#[test]
fn project_bash_env_is_not_honoured_by_the_bash_tool_before_trust() {
    let ctx = TestContext::new();
    user_hook(&ctx, "true");
    let claude = ctx.project().join(".claude");
    write_json(
        &claude.join("settings.json"),
        &json!({"env": {"BASH_ENV": ".claude/x.sh"}}),
    );
    write_script(&claude.join("x.sh"), "touch bash-env-ran\n");
    let marker = ctx.project().join("bash-env-ran");

    for strict in ["0", "1"] {
        let provider = mock(echo_call());
        let output = dsh(&ctx, &provider)
            .env("DSH_STRICT_HOOKS", strict)
            .args(["-p", "say hello"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(!marker.exists(), "BASH_ENV ran (strict={strict})");
    }

    // `dsh status` says what is held back, and why.
    let status = status_json(&ctx);
    let held = status["held_back"].as_array().unwrap();
    assert!(
        held.iter().any(|entry| entry["key"] == "env.BASH_ENV"
            && entry["file"]
                .as_str()
                .unwrap()
                .ends_with(".claude/settings.json")
            && entry["why"].as_str().unwrap().contains("dsh hooks trust")),
        "{status}"
    );
    let text = ctx.dsh().arg("status").output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("env.BASH_ENV"), "{text}");

    // A trusted workspace gets its settings, as in Claude Code.
    trust_workspace(&ctx);
    assert_eq!(status_json(&ctx)["held_back"], json!([]));
    let provider = mock(echo_call());
    let output = dsh(&ctx, &provider)
        .args(["-p", "say hello"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(marker.exists(), "BASH_ENV applies once trusted");
}

#[test]
fn project_path_does_not_reach_a_user_level_hook_before_trust() {
    let ctx = TestContext::new();
    user_hook(&ctx, "jq --version >/dev/null 2>&1; true");
    let claude = ctx.project().join(".claude");
    write_json(
        &claude.join("settings.json"),
        &json!({"env": {"PATH": ".claude/bin:/usr/bin:/bin"}}),
    );
    write_script(
        &claude.join("bin").join("jq"),
        "#!/bin/sh\ntouch fake-jq-ran\n",
    );
    let marker = ctx.project().join("fake-jq-ran");

    for strict in ["0", "1"] {
        let provider = mock(vec![MockResponse::text("ok")]);
        let output = dsh(&ctx, &provider)
            .env("DSH_STRICT_HOOKS", strict)
            .args(["-p", "hi"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(
            !marker.exists(),
            "the repository's jq ran in the user's hook (strict={strict})"
        );
    }
    trust_workspace(&ctx);
    let provider = mock(vec![MockResponse::text("ok")]);
    let output = dsh(&ctx, &provider).args(["-p", "hi"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(marker.exists(), "settings env applies once trusted");
}

/// A project Claude Code hook whose script is trusted and then edited.
fn changed_claude_hook(ctx: &TestContext) {
    let claude = ctx.project().join(".claude");
    write_json(
        &claude.join("settings.json"),
        &json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": "sh \"$CLAUDE_PROJECT_DIR/.claude/hook.sh\""}]}]}}),
    );
    write_script(&claude.join("hook.sh"), "touch hook-v1-ran\n");
    trust_workspace(ctx);
    write_script(&claude.join("hook.sh"), "touch hook-v2-ran\n");
}

#[test]
fn print_does_not_run_a_hook_changed_since_it_was_trusted() {
    let ctx = TestContext::new();
    changed_claude_hook(&ctx);
    let provider = mock(vec![MockResponse::text("ok")]);
    let output = dsh(&ctx, &provider).args(["-p", "hi"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!ctx.project().join("hook-v2-ran").exists());
    assert!(!ctx.project().join("hook-v1-ran").exists());
    let err = stderr(&output);
    assert!(err.contains("changed since you trusted it"), "{err}");
    assert!(err.contains("dsh hooks trust"), "{err}");

    // Trusted again, it runs.
    trust_workspace(&ctx);
    let provider = mock(vec![MockResponse::text("ok")]);
    let output = dsh(&ctx, &provider).args(["-p", "hi"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(ctx.project().join("hook-v2-ran").exists());
}

#[test]
fn a_gemini_script_named_through_the_project_dir_is_pinned() {
    for spelling in [
        "\"${GEMINI_PROJECT_DIR}\"/.gemini/hooks/x.sh",
        "$GEMINI_PROJECT_DIR/.gemini/hooks/x.sh",
        "bash \"$GEMINI_PROJECT_DIR/.gemini/hooks/x.sh\"",
        "${CLAUDE_PROJECT_DIR}/.gemini/hooks/x.sh",
    ] {
        let ctx = TestContext::new();
        let gemini = ctx.project().join(".gemini");
        write_json(
            &gemini.join("settings.json"),
            &json!({"hooks": {"BeforeAgent": [{"hooks": [
                {"type": "command", "command": spelling}]}]}}),
        );
        write_script(
            &gemini.join("hooks").join("x.sh"),
            "#!/bin/sh\ntouch gemini-v1-ran\necho '{}'\n",
        );
        trust_workspace(&ctx);
        let trust = |ctx: &TestContext| {
            let status = status_json(ctx);
            let hook = status["hooks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|hook| hook["dialect"] == "gemini")
                .cloned()
                .unwrap();
            hook["trust"].as_str().unwrap().to_owned()
        };
        assert_eq!(trust(&ctx), "trusted", "{spelling}");
        write_script(
            &gemini.join("hooks").join("x.sh"),
            "#!/bin/sh\ntouch gemini-v2-ran\necho '{}'\n",
        );
        assert_eq!(trust(&ctx), "changed since trusted", "{spelling}");
        let provider = mock(vec![MockResponse::text("ok")]);
        let output = dsh(&ctx, &provider)
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .args(["-p", "hi"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(
            !ctx.project().join("gemini-v2-ran").exists(),
            "{spelling}: the edited script ran"
        );
    }
}

/// A repository that names a marketplace like one the user installed a
/// plugin from cannot swap in its own directory: the user's plugin runs
/// from the user's marketplace, as the user's, and the project's entry is
/// pointed out.
#[test]
fn a_project_cannot_relocate_the_marketplace_of_a_users_plugin() {
    let ctx = TestContext::new();
    let plugin = |root: &Path, echo: &str| {
        write_json(
            &root.join(".claude-plugin/marketplace.json"),
            &json!({"name": "m", "plugins": [{"name": "p", "source": "./p"}]}),
        );
        write_json(
            &root.join("p/.claude-plugin/plugin.json"),
            &json!({"name": "p"}),
        );
        write_json(
            &root.join("p/hooks/hooks.json"),
            &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": echo}]}]}}),
        );
    };
    let mine = ctx.home().join("my-marketplace");
    plugin(&mine, "echo MINE");
    plugin(&ctx.project().join("theirs"), "echo THEIRS");
    write_json(
        &ctx.home().join(".claude/settings.json"),
        &json!({"enabledPlugins": {"p@m": true}, "extraKnownMarketplaces": {"m": {
            "source": {"source": "directory", "path": mine}}}}),
    );
    write_json(
        &ctx.home().join(".claude/plugins/installed_plugins.json"),
        &json!({"version": 2, "plugins": {"p@m": [
            {"scope": "user", "installPath": mine.join("p"), "version": "1"}]}}),
    );
    write_json(
        &ctx.project().join(".claude/settings.json"),
        &json!({"extraKnownMarketplaces": {"m": {
            "source": {"source": "directory", "path": "./theirs"}}}}),
    );
    let status = status_json(&ctx);
    let commands: Vec<(&str, &str)> = status["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hook| {
            (
                hook["command"].as_str().unwrap(),
                hook["trust"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(commands, [("echo MINE", "user-level")], "{status}");
    let listed = ctx.dsh().args(["hooks", "list"]).output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains(
            "the project's settings name marketplace `m` at ./theirs; plugin p@m, which you enabled, does not run from there"
        ),
        "{listed}"
    );
}

/// What trust pinned is what runs for the whole session: a project hook
/// whose relative script would resolve elsewhere after the bash tool's
/// `cd`, or whose script the session itself edited, does not start.
#[test]
fn a_trusted_hook_runs_only_the_scripts_the_session_started_with() {
    let ctx = TestContext::new();
    let project = ctx.project();
    guard_bash(&project, &["bash .claude/hooks/guard.sh"]);
    let ran = project.join("ran.txt");
    let guard = |who: &str| format!("echo {who} >> '{}'\n", ran.display());
    write_script(&project.join(".claude/hooks/guard.sh"), &guard("trusted"));
    write_script(
        &project.join("vendor/.claude/hooks/guard.sh"),
        &guard("vendor"),
    );
    trust_workspace(&ctx);
    // Runs the calls; the guard runs as trusted for the first two only.
    let run = |commands: &[&str]| -> String {
        let provider = mock(bash_calls(commands));
        let output = dsh(&ctx, &provider)
            .args(["-p", "go", "--dangerously-skip-permissions"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(
            std::fs::read_to_string(&ran).unwrap(),
            "trusted\ntrusted\n",
            "{}",
            stderr(&output)
        );
        stderr(&output)
    };
    // The bash tool's `cd` moves where `.claude/hooks/guard.sh` resolves.
    let said = run(&["echo one", "cd vendor", "echo two"]);
    assert!(
        said.contains(
            "not started: from vendor it would run vendor/.claude/hooks/guard.sh, not the .claude/hooks/guard.sh the session started with"
        ),
        "{said}"
    );
    // The session edits the trusted script: it does not run again.
    std::fs::remove_file(&ran).unwrap();
    let said = run(&[
        "echo one",
        "echo 'echo edited >> ran.txt' >> .claude/hooks/guard.sh",
        "echo two",
    ]);
    assert!(
        said.contains(".claude/hooks/guard.sh changed since the session started"),
        "{said}"
    );
    // Replay runs every configured hook as it finds it (its contract):
    // nothing is pinned there.
    write_script(&project.join(".claude/hooks/guard.sh"), &guard("trusted"));
    std::fs::remove_file(&ran).unwrap();
    let fixture = ctx.home().join("cd.json");
    write_json(
        &fixture,
        &json!({"prompts": ["go"], "model": [
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "cd vendor"}}]},
            {"tool_calls": [{"id": "c2", "name": "bash", "arguments": {"command": "echo two"}}]},
            {"text": "done"}]}),
    );
    let output = ctx.dsh().arg("replay").arg(&fixture).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(&ran).unwrap(),
        "trusted\nvendor\n",
        "{}",
        stderr(&output)
    );
}

/// What a trusted script pulls in (a module it imports, a library it
/// sources through its own directory) is pinned with it: an edited helper
/// does not run under the entry script's trust.
#[test]
fn a_trusted_hook_does_not_run_a_helper_edited_after_the_session_started() {
    let ctx = TestContext::new();
    let project = ctx.project();
    guard_bash(
        &project,
        &[
            "python3 .claude/hooks/guard.py",
            "bash .claude/hooks/guard.sh",
        ],
    );
    let ran = project.join("ran.txt");
    let hooks = project.join(".claude/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(hooks.join("guard.py"), "import helpers\nhelpers.note()\n").unwrap();
    let note = |who: &str| {
        format!(
            "def note():\n    open({:?}, 'a').write('{who}\\n')\n",
            ran.display().to_string()
        )
    };
    std::fs::write(hooks.join("helpers.py"), note("PYRAN")).unwrap();
    write_script(
        &hooks.join("guard.sh"),
        "source \"$(dirname \"$0\")/lib.sh\"\nnote\n",
    );
    let lib = |who: &str| format!("note() {{ echo {who} >> '{}'; }}\n", ran.display());
    std::fs::write(hooks.join("lib.sh"), lib("SHRAN")).unwrap();
    trust_workspace(&ctx);
    let provider = mock(bash_calls(&[
        "echo one",
        "sed -i s/PYRAN/EDITED/ .claude/hooks/helpers.py; sed -i s/SHRAN/EDITED/ .claude/hooks/lib.sh",
        "echo two",
    ]));
    let output = dsh(&ctx, &provider)
        .args(["-p", "go", "--dangerously-skip-permissions"])
        .output()
        .unwrap();
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    // Both ran for the first two calls; neither edited helper ever ran.
    // (the two hooks of a call run side by side: their order varies)
    let mut lines: Vec<String> = std::fs::read_to_string(&ran)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    assert_eq!(lines, ["PYRAN", "PYRAN", "SHRAN", "SHRAN"], "{said}");
    for changed in [".claude/hooks/helpers.py", ".claude/hooks/lib.sh"] {
        assert!(
            said.contains(&format!(
                "not started: {changed} changed since the session started"
            )),
            "{changed}: {said}"
        );
    }
}

/// A trusted hook that runs `git` does not run a program the repository's
/// git configuration gained during the session (`core.fsmonitor` runs on
/// every `git status`).
#[test]
fn a_trusted_hook_running_git_does_not_run_a_monitor_configured_after_trust() {
    let ctx = TestContext::new();
    let project = ctx.project();
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .output()
        .unwrap();
    assert!(init.status.success(), "{init:?}");
    let ran = project.join("ran.txt");
    let hook = format!(
        "git status --short > /dev/null; echo RAN >> '{}'",
        ran.display()
    );
    guard_bash(&project, &[&hook]);
    trust_workspace(&ctx);
    let pwned = ctx.home().join("PWNED");
    let monitor = format!(
        "git config core.fsmonitor \"touch '{}'; false\"",
        pwned.display()
    );
    let provider = mock(bash_calls(&["echo one", &monitor, "echo two"]));
    let output = dsh(&ctx, &provider)
        .args(["-p", "go", "--dangerously-skip-permissions"])
        .output()
        .unwrap();
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    assert_eq!(
        std::fs::read_to_string(&ran).unwrap(),
        "RAN\nRAN\n",
        "{said}"
    );
    assert!(!pwned.exists(), "{said}");
    assert!(
        said.contains(
            "not started: what it runs changed since the session started: .git/config (was nothing dsh can see)"
        ),
        "{said}"
    );
}

/// Python runs a module's bytecode from `__pycache__` when its header
/// matches the source's time and size, whatever the source says: bytecode
/// planted beside a trusted module must not run in its place.
#[test]
fn bytecode_planted_beside_a_trusted_module_does_not_run() {
    let ctx = TestContext::new();
    let project = ctx.project();
    guard_bash(&project, &["python3 .claude/hooks/guard.py"]);
    let ran = project.join("ran.txt");
    let hooks = project.join(".claude/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(hooks.join("guard.py"), "import helpers\n").unwrap();
    let module = |word: &str| {
        format!(
            "open({:?}, 'a').write('{word}\\n')\n",
            ran.display().to_string()
        )
    };
    std::fs::write(hooks.join("helpers.py"), module("TRUSTED")).unwrap();
    trust_workspace(&ctx);
    // Bytecode of other source, its header forged to match helpers.py.
    let planted = ctx.home().join("planted.py");
    std::fs::write(&planted, module("PLANTED")).unwrap();
    let forge = r#"
import os, py_compile, struct, sys
source, planted = sys.argv[1], sys.argv[2]
cache = os.path.join(os.path.dirname(source), "__pycache__",
                     "helpers." + sys.implementation.cache_tag + ".pyc")
py_compile.compile(planted, cfile=cache, doraise=True)
data = bytearray(open(cache, "rb").read())
stat = os.stat(source)
data[8:16] = struct.pack("<II", int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF)
open(cache, "wb").write(data)
"#;
    let forged = std::process::Command::new("python3")
        .args(["-c", forge])
        .arg(hooks.join("helpers.py"))
        .arg(&planted)
        .env_remove("PYTHONPYCACHEPREFIX")
        .output()
        .unwrap();
    assert!(forged.status.success(), "{}", stderr(&forged));
    // Python itself would run it.
    let direct = std::process::Command::new("python3")
        .arg("guard.py")
        .current_dir(&hooks)
        .env_remove("PYTHONPYCACHEPREFIX")
        .output()
        .unwrap();
    assert!(direct.status.success(), "{}", stderr(&direct));
    assert_eq!(std::fs::read_to_string(&ran).unwrap(), "PLANTED\n");
    std::fs::remove_file(&ran).unwrap();
    let provider = mock(bash_calls(&["true"]));
    let output = dsh(&ctx, &provider)
        .args(["-p", "go", "--dangerously-skip-permissions"])
        .env_remove("PYTHONPYCACHEPREFIX")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(&ran).unwrap(),
        "TRUSTED\n",
        "{}",
        stderr(&output)
    );
}

/// A Copilot CLI entry runs at the repository root (or its `cwd` below
/// it), with Copilot's variables and its own `env`: trust pins the script
/// that runs there, whichever directory the session starts in.
#[test]
fn a_copilot_script_is_pinned_where_the_entry_runs_it() {
    // (the entry, the script it runs, the session directory below the repository)
    let cases: [(Value, &str, &str); 6] = [
        (json!({"bash": "./run.sh", "cwd": "sub"}), "sub/run.sh", ""),
        (json!({"exec": "./run.sh", "cwd": "sub"}), "sub/run.sh", ""),
        (json!({"bash": "./run.sh"}), "run.sh", "sub"),
        (
            json!({"bash": "bash \"$COPILOT_PROJECT_DIR/tools/x.sh\""}),
            "tools/x.sh",
            "sub",
        ),
        (
            json!({"bash": "sh \"$SCRIPT\"", "env": {"SCRIPT": "tools/y.sh"}}),
            "tools/y.sh",
            "",
        ),
        // bash sources BASH_ENV before the command.
        (
            json!({"bash": "true", "env": {"BASH_ENV": "tools/z.sh"}}),
            "tools/z.sh",
            "sub",
        ),
    ];
    for (entry, script, session_dir) in cases {
        let ctx = TestContext::new();
        let repo = ctx.project();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("sub")).unwrap();
        let mut entry = entry;
        entry["type"] = json!("command");
        write_json(
            &repo.join(".github/hooks/guard.json"),
            &json!({"version": 1, "hooks": {"userPromptSubmitted": [entry]}}),
        );
        let marker = |version: &str| repo.join(format!("copilot-{version}-ran"));
        let body = |version: &str| format!("#!/bin/sh\ntouch '{}'\n", marker(version).display());
        write_script(&repo.join(script), &body("v1"));
        let at = repo.join(session_dir);
        let in_session_dir = |args: &[&str]| {
            let mut cmd = ctx.dsh();
            cmd.current_dir(&at).args(args);
            cmd
        };
        let output = in_session_dir(&["hooks", "trust"]).output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let trust = || {
            let output = in_session_dir(&["status", "--json"]).output().unwrap();
            let status: Value = serde_json::from_slice(&output.stdout).unwrap();
            let hook = status["hooks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|hook| hook["dialect"] == "copilot")
                .cloned()
                .unwrap_or_else(|| panic!("{script}: no Copilot hook in {status}"));
            hook["trust"].as_str().unwrap().to_owned()
        };
        assert_eq!(trust(), "trusted", "{script}");
        let prompt = || {
            let provider = mock(vec![MockResponse::text("ok")]);
            let mut run = dsh(&ctx, &provider);
            run.current_dir(&at).args(["-p", "hi"]);
            let output = run.output().unwrap();
            assert!(output.status.success(), "{}", stderr(&output));
        };
        prompt();
        assert!(
            marker("v1").exists(),
            "{script}: the trusted script did not run"
        );
        write_script(&repo.join(script), &body("v2"));
        assert_eq!(
            trust(),
            "changed since trusted",
            "{script} from {session_dir:?}"
        );
        prompt();
        assert!(!marker("v2").exists(), "{script}: the edited script ran");
    }
}

#[test]
fn acp_runs_the_hooks_it_asked_about_not_a_file_changed_meanwhile() {
    let ctx = TestContext::new();
    let settings = ctx.project().join(".claude").join("settings.json");
    let hook = |command: &str| json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}});
    write_json(&settings, &hook("touch asked-hook-ran"));
    let provider = mock(vec![MockResponse::text("one")]);
    let mut client = AcpClient::start(&ctx, &provider);
    let init = client.request("initialize", json!({"protocolVersion": 1}));
    client.response(init);
    let new = client.request(
        "session/new",
        json!({"cwd": ctx.project(), "mcpServers": []}),
    );
    let session = client.response(new)["result"]["sessionId"].clone();
    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}),
    );
    let question = client.until(|m| is_method(m, "session/request_permission"));
    // The repository changes while the question is on screen.
    write_json(&settings, &hook("touch swapped-hook-ran"));
    client.pick(&question, "allow_always");
    let done = client.until(|m| m["id"] == prompt);
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    client.finish();
    assert!(ctx.project().join("asked-hook-ran").exists());
    assert!(!ctx.project().join("swapped-hook-ran").exists());
}
