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

use serde_json::Value;

use crate::acp_server::{full_flow_script, install_project_hooks};
use crate::cli_headless::{events, mock, of_type, session_logs};
use crate::support::{TestContext, client_ready, dsh_bin, npm_client_missing, repo_root};

fn client_dir() -> PathBuf {
    repo_root().join("tests").join("acpx-client")
}

#[test]
fn acpx_runs_a_turn_through_dsh_acp_with_the_projects_hooks() {
    let missing = npm_client_missing(
        "acpx-client",
        "acpx/dist/cli.js",
        "npm ci --omit=optional --no-audit --no-fund",
    );
    if !client_ready(
        "acpx_runs_a_turn_through_dsh_acp_with_the_projects_hooks",
        missing,
    ) {
        return;
    }
    let ctx = TestContext::new();
    install_project_hooks(&ctx);
    std::fs::create_dir_all(ctx.project().join("build")).unwrap();
    // The editor flow's first prompt: a denied rm, a write a hook asks
    // about, then the answer.
    let mock = mock(full_flow_script().into_iter().take(3).collect());
    let agent = format!("{} acp", dsh_bin().display());
    let output = ctx
        .command("node")
        .arg(client_dir().join("node_modules/acpx/dist/cli.js"))
        .args(["--agent", &agent, "--approve-all", "--format", "json"])
        .arg("--cwd")
        .arg(ctx.project())
        .args(["exec", "Clean up the build and note it"])
        .current_dir(ctx.project())
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
