//! `dsh acp` driven by acpx, the headless ACP command-line client
//! (`acpx`, pinned in `tests/acpx-client/package-lock.json`): a user's
//! `acpx --agent "dsh acp" exec "…"` against the loopback mock provider and
//! real project hooks.
//!
//! `.ci/run` installs acpx (`npm ci` in `tests/acpx-client`). Locally the
//! test is skipped, with the reason printed, when `node_modules` is absent;
//! in CI (`CI=true`) a missing acpx or `node` fails it.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::path::PathBuf;
use std::process::Command;

use dsh_provider::mock::{MockResponse, MockToolCall};
use serde_json::{Value, json};

use crate::acp_server::install_project_hooks;
use crate::cli_headless::{events, mock, of_type, session_logs};
use crate::support::{TestContext, dsh_bin, repo_root};

fn client_dir() -> PathBuf {
    repo_root().join("tests").join("acpx-client")
}

/// `Some(reason)` when acpx cannot run here.
fn missing_prerequisite() -> Option<String> {
    let cli = client_dir().join("node_modules/acpx/dist/cli.js");
    if !cli.is_file() {
        return Some(format!(
            "{} is absent; run `(cd tests/acpx-client && npm ci --no-audit --no-fund)`",
            cli.display()
        ));
    }
    if Command::new("node").arg("--version").output().is_err() {
        return Some("`node` is not on PATH".to_owned());
    }
    None
}

#[test]
fn acpx_runs_a_turn_through_dsh_acp_with_the_projects_hooks() {
    if let Some(reason) = missing_prerequisite() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must run the acpx end-to-end test: {reason}"
        );
        eprintln!("skipped acpx_runs_a_turn_through_dsh_acp_with_the_projects_hooks: {reason}");
        return;
    }
    let ctx = TestContext::new();
    install_project_hooks(&ctx);
    std::fs::create_dir_all(ctx.project().join("build")).unwrap();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "Cleaning up.",
            vec![MockToolCall::new(
                "call_rm",
                "bash",
                &json!({"command": "rm -rf build"}),
            )],
        ),
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_write",
                "write",
                &json!({"file_path": "notes.txt", "content": "cleaned\n"}),
            )],
        ),
        MockResponse::text("Done."),
    ]);
    let agent = format!("{} acp", dsh_bin().display());
    let output = Command::new("node")
        .arg(client_dir().join("node_modules/acpx/dist/cli.js"))
        .args(["--agent", &agent, "--approve-all", "--format", "json"])
        .arg("--cwd")
        .arg(ctx.project())
        .args(["exec", "Clean up the build and note it"])
        .current_dir(ctx.project())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", ctx.home())
        .env("DSH_HOME", ctx.home().join(".dsh"))
        .env("CODEX_HOME", ctx.home().join(".codex"))
        .env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test")
        .env("DSH_LOG", "error")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "acpx failed:\n{stderr}");
    // `--format json`: the JSON-RPC traffic, one message a line.
    let messages: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
        .collect();
    let answer = |id: i64| {
        messages
            .iter()
            .find(|m| m["id"] == id && m.get("result").is_some())
            .unwrap_or_else(|| panic!("no answer to request {id}: {messages:?}"))
    };
    assert_eq!(answer(0)["result"]["agentInfo"]["name"], "dsh");
    assert_eq!(answer(0)["result"]["protocolVersion"], 1);
    assert_eq!(answer(2)["result"]["stopReason"], "end_turn");

    // Two permission requests, both approved by `--approve-all`: the
    // project's untrusted hooks, then the write a hook asked about.
    let asked: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "session/request_permission")
        .collect();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(
        asked[0]["params"]["toolCall"]["title"],
        "Trust this project?"
    );
    assert_eq!(asked[1]["params"]["toolCall"]["toolCallId"], "call_write");
    assert_eq!(
        asked[1]["params"]["toolCall"]["content"][0]["content"]["text"],
        "Approval needed: writes need a look"
    );

    let updates: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "session/update")
        .map(|m| &m["params"]["update"])
        .collect();
    let statuses = |call: &str| -> Vec<&str> {
        updates
            .iter()
            .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == call)
            .filter_map(|u| u["status"].as_str())
            .collect()
    };
    // The hook denied the rm -rf, and the editor was told why.
    assert_eq!(statuses("call_rm"), ["failed"]);
    let denied = updates
        .iter()
        .find(|u| u["toolCallId"] == "call_rm" && u["status"] == "failed")
        .unwrap();
    assert!(
        denied["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("is not allowed by the project's bash policy"),
        "{denied}"
    );
    assert_eq!(statuses("call_write"), ["in_progress", "completed"]);
    let said: String = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(said, "Cleaning up.Done.");

    // What happened on disk, and in the durable record.
    assert!(ctx.project().join("build").is_dir());
    assert_eq!(
        std::fs::read_to_string(ctx.project().join("notes.txt")).unwrap(),
        "cleaned\n"
    );
    let log = events(&session_logs(&ctx)[0]);
    let ends: Vec<&str> = of_type(&log, "turn/end")
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert_eq!(ends, ["completed"]);
    assert_eq!(mock.requests().len(), 3);
}
