//! A smoke suite for the binary users install. CI runs it twice: with the
//! rest of the suite against the debug build, and again with
//! `DSH_TEST_BIN` pointing at the release binary that
//! `cargo install --locked --path . --root …` put in place (named `dsh`,
//! built optimized: the key hand-off once broke there and nowhere else),
//! beside the real clients' and drop-in command lines' suites.
//!
//! Each check drives the binary the way a user does: the key in the
//! environment under the variable the docs name, a hook in the user's
//! Claude Code settings, loopback mocks for the three model APIs.

use std::path::Path;

use dsh_provider::mock::{MockProvider, MockResponse, MockWire};
use serde_json::{Value, json};

use crate::acp_server::{AcpClient, is_update};
use crate::support::{TestContext, dsh_bin, repo_root};

/// Under `DSH_TEST_BIN`, the binary must be the installed one, named as
/// users run it.
fn binary_under_test() -> std::path::PathBuf {
    let bin = dsh_bin();
    if std::env::var_os("DSH_TEST_BIN").is_some() {
        assert_eq!(
            bin.file_name().and_then(|name| name.to_str()),
            Some("dsh"),
            "DSH_TEST_BIN must name the installed `dsh`: {}",
            bin.display()
        );
        assert!(bin.is_file(), "no binary at {}", bin.display());
    }
    bin
}

/// A UserPromptSubmit hook in the user's own settings (trusted as the user's
/// own): it leaves a marker file and adds context the model must see.
fn install_user_hook(ctx: &TestContext) {
    let dir = ctx.home().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    let marker = ctx.home().join("hook-ran");
    let command = format!("touch '{}' && echo 'smoke-hook-context'", marker.display());
    let settings = json!({
        "hooks": {
            "UserPromptSubmit": [
                {"hooks": [{"type": "command", "command": command}]}
            ]
        }
    });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

/// One API as a user selects it: the key variable, and where its base URL
/// is pointed (the loopback mock).
struct Api {
    wire: MockWire,
    key_var: &'static str,
    base_url_var: &'static str,
    /// The header the key must arrive in, and the value it must have.
    header: &'static str,
    header_value: fn(&str) -> String,
}

const APIS: [Api; 3] = [
    Api {
        wire: MockWire::Anthropic,
        key_var: "ANTHROPIC_API_KEY",
        base_url_var: "ANTHROPIC_BASE_URL",
        header: "x-api-key",
        header_value: |key| key.to_owned(),
    },
    Api {
        wire: MockWire::Responses,
        key_var: "OPENAI_API_KEY",
        base_url_var: "OPENAI_BASE_URL",
        header: "authorization",
        header_value: |key| format!("Bearer {key}"),
    },
    Api {
        wire: MockWire::Chat,
        key_var: "DEEPSEEK_API_KEY",
        base_url_var: "DSH_BASE_URL",
        header: "authorization",
        header_value: |key| format!("Bearer {key}"),
    },
];

fn command(ctx: &TestContext) -> assert_cmd::Command {
    let mut cmd = ctx.dsh();
    cmd.timeout(std::time::Duration::from_secs(60));
    cmd
}

#[test]
fn a_print_turn_reaches_each_api_with_the_key_from_the_environment() {
    binary_under_test();
    for api in APIS {
        let ctx = TestContext::new();
        install_user_hook(&ctx);
        let mock =
            MockProvider::start_blocking_with(api.wire, vec![MockResponse::text("smoke answer")])
                .unwrap();
        let key = format!("sk-smoke-{}", api.key_var.to_lowercase());
        let output = command(&ctx)
            .env(api.key_var, &key)
            .env(api.base_url_var, mock.base_url())
            .args(["-p", "say hi"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "{}: dsh -p failed: {stderr}",
            api.key_var
        );
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("smoke answer"),
            "{}: stdout {:?}, stderr {stderr}",
            api.key_var,
            String::from_utf8_lossy(&output.stdout)
        );
        assert!(
            !stderr.contains("hand-off") && !stderr.contains("take over the API key"),
            "{}: {stderr}",
            api.key_var
        );
        let recorded = mock.recorded();
        assert_eq!(recorded.len(), 1, "{}: one model request", api.key_var);
        assert_eq!(
            recorded[0].header(api.header),
            Some((api.header_value)(&key).as_str()),
            "{}: the key in its header",
            api.key_var
        );
        // The hook ran, and what it said reached the model.
        assert!(ctx.home().join("hook-ran").exists(), "{}", api.key_var);
        assert!(
            recorded[0].body.to_string().contains("smoke-hook-context"),
            "{}: {}",
            api.key_var,
            recorded[0].body
        );
    }
}

#[test]
fn status_json_reports_the_key_as_set() {
    binary_under_test();
    for api in APIS {
        let ctx = TestContext::new();
        let output = command(&ctx)
            .env(api.key_var, "sk-smoke-status")
            .args(["status", "--json"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}: {}",
            api.key_var,
            String::from_utf8_lossy(&output.stderr)
        );
        let status: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(
            status["provider"]["api_key_set"], true,
            "{}: {}",
            api.key_var, status["provider"]
        );
        assert_eq!(status["provider"]["api_key_env"], api.key_var);
    }
}

#[test]
fn acp_initializes_opens_a_session_and_answers_a_prompt() {
    binary_under_test();
    let ctx = TestContext::new();
    let mock = MockProvider::start_blocking(vec![MockResponse::text("acp smoke answer")]).unwrap();
    let mut client = AcpClient::start(&ctx, &mock);
    let init = client.request(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    let init = client.response(init);
    assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
    let new = client.request(
        "session/new",
        json!({"cwd": ctx.project(), "mcpServers": []}),
    );
    let session = client.response(new)["result"]["sessionId"].clone();
    assert!(session.is_string(), "{session}");
    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}),
    );
    // The answer streams in chunks until the prompt's response.
    let mut answer = String::new();
    let done = loop {
        let message = client.next();
        if is_update(&message, "agent_message_chunk") {
            answer.push_str(
                message["params"]["update"]["content"]["text"]
                    .as_str()
                    .unwrap_or_default(),
            );
        }
        if message["id"] == prompt && message.get("method").is_none() {
            break message;
        }
    };
    assert_eq!(answer, "acp smoke answer");
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let recorded = mock.recorded();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].header("authorization"), Some("Bearer sk-test"));
    let (status, _) = client.finish();
    assert!(status.success(), "{status}");
}

#[test]
fn the_readme_demo_replays_its_fixture() {
    let bin = binary_under_test();
    let ctx = TestContext::new();
    let output = std::process::Command::new("bash")
        .arg(repo_root().join("scripts/demo.sh"))
        .env("DSH", &bin)
        .env("HOME", ctx.home())
        .env("DSH_HOME", ctx.home().join(".dsh"))
        .env("CODEX_HOME", ctx.home().join(".codex"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "demo.sh failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let first = stdout.lines().next().unwrap_or_default();
    let header: Value = serde_json::from_str(first).unwrap();
    assert_eq!(header["type"], "session/header");
    // The validator hook blocked `rm -rf`, in the log and in its rendering.
    assert!(stdout.contains("\"type\":\"hook/result\""), "{stdout}");
    assert!(stdout.contains("rm -rf"), "{stdout}");
    assert!(Path::new(&bin).exists());
}
