//! `dsh acp` driven by a client nobody on this project wrote: the official
//! ACP TypeScript SDK (`@agentclientprotocol/sdk`, pinned in
//! `tests/acp-client/package-lock.json`), against the loopback mock provider
//! and real project hooks.
//!
//! `.ci/run` installs the SDK (`npm ci` in `tests/acp-client`). Locally the
//! test is skipped, with the reason printed, when `node_modules` is absent;
//! in CI (`CI=true`) a missing SDK or `node` fails it.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::path::PathBuf;

use serde_json::Value;

use crate::acp_server::{full_flow_script, install_project_hooks};
use crate::cli_headless::{events, mock, of_type, session_logs};
use crate::support::{TestContext, client_ready, npm_client_missing, repo_root};

fn client_dir() -> PathBuf {
    repo_root().join("tests").join("acp-client")
}

/// Why the SDK client cannot run here.
fn missing_prerequisite() -> Option<String> {
    npm_client_missing(
        "acp-client",
        "@agentclientprotocol/sdk/package.json",
        "npm ci --no-audit --no-fund",
    )
}

#[test]
fn the_official_typescript_sdk_drives_a_session() {
    if !client_ready(
        "the_official_typescript_sdk_drives_a_session",
        missing_prerequisite(),
    ) {
        return;
    }
    let ctx = TestContext::new();
    install_project_hooks(&ctx);
    std::fs::create_dir_all(ctx.project().join("build")).unwrap();
    let mock = mock(full_flow_script());

    let output = ctx
        .command("node")
        .arg(client_dir().join("client.mjs"))
        .current_dir(client_dir())
        .env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test")
        .env("DSH_LOG", "error")
        .env("DSH_BIN", crate::support::dsh_bin())
        .env("ACP_PROJECT", ctx.project())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "client.mjs failed:\n{stderr}");
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "client.mjs printed no JSON:\n{}",
            String::from_utf8_lossy(&output.stdout)
        )
    });

    assert_eq!(seen["protocolVersion"], 1);
    assert_eq!(seen["loadSession"], true);
    assert_eq!(
        seen["stopReasons"],
        serde_json::json!(["end_turn", "end_turn", "cancelled"])
    );
    assert_eq!(seen["exit"]["code"], 0, "dsh acp exit: {}", seen["exit"]);

    // Two permission requests: the untrusted project hooks (which may be
    // trusted for good, as in the terminal), then the Write a hook asked
    // about, under its exact tool call id, with one-shot options only (a
    // hook's ask has no rule an "always" could add).
    let permissions = seen["permissions"].as_array().unwrap();
    assert_eq!(permissions.len(), 2, "{permissions:?}");
    assert!(
        permissions[0]["toolCall"]["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("bash_validator.sh")
    );
    assert_eq!(permissions[1]["toolCall"]["toolCallId"], "call_write");
    let kinds = |permission: &Value| -> Vec<String> {
        permission["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["kind"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        kinds(&permissions[0]),
        ["allow_always", "allow_once", "reject_once"]
    );
    assert_eq!(kinds(&permissions[1]), ["allow_once", "reject_once"]);

    // What the editor showed.
    let updates = seen["updates"].as_array().unwrap();
    // The last update of a kind for a call (a call settles after it runs).
    let find = |kind: &str, call: &str| {
        updates
            .iter()
            .rev()
            .find(|u| u["sessionUpdate"] == kind && u["toolCallId"] == call)
            .unwrap_or_else(|| panic!("no {kind} for {call} in {updates:?}"))
    };
    let statuses = |call: &str| -> Vec<&str> {
        updates
            .iter()
            .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == call)
            .filter_map(|u| u["status"].as_str())
            .collect()
    };
    assert_eq!(find("tool_call", "call_rm")["kind"], "execute");
    assert_eq!(statuses("call_rm"), ["failed"]);
    let rm = find("tool_call_update", "call_rm");
    assert!(
        rm["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("PreToolUse:Bash hook error"),
        "{rm}"
    );
    let write = find("tool_call_update", "call_write");
    assert_eq!(statuses("call_write"), ["in_progress", "completed"]);
    assert_eq!(write["content"][0]["type"], "diff");
    assert_eq!(write["content"][0]["newText"], "cleaned\n");
    assert_eq!(statuses("call_slow"), ["in_progress", "failed"]);
    let said: String = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    // The hook's denial is shown once, by the failed call.
    assert!(!said.contains("PreToolUse:Bash hook error"), "{said}");
    assert!(
        said.contains("Deploys are not started from the editor"),
        "{said}"
    );
    assert!(said.contains("Done."), "{said}");

    // And the durable record agrees.
    let log = events(&session_logs(&ctx)[0]);
    let ends: Vec<&str> = of_type(&log, "turn/end")
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert_eq!(ends, ["completed", "rejected", "interrupted"]);
    assert!(ctx.project().join("build").is_dir());
}

#[test]
fn the_official_typescript_sdk_fills_in_an_mcp_elicitation_form() {
    // A client that declares form elicitation gets the MCP server's form as
    // `elicitation/create` (which the SDK validates against ACP's schema),
    // and the values it accepts with reach the server.
    if !client_ready(
        "the_official_typescript_sdk_fills_in_an_mcp_elicitation_form",
        missing_prerequisite(),
    ) {
        return;
    }
    let ctx = TestContext::new();
    let log = ctx.home().join("elicit.jsonl");
    let config = serde_json::json!({"mcpServers": {"elicit": {
        "command": "python3",
        "args": [repo_root().join("fixtures/mcp/elicit_server.py")],
        "env": {"MCP_ELICIT_LOG": log},
    }}})
    .to_string();
    let mock = mock(vec![
        dsh_provider::mock::MockResponse::tool_calls(
            "",
            vec![dsh_provider::mock::MockToolCall::new(
                "call_1",
                "mcp__elicit__ask",
                &serde_json::json!({"question": "What is your name?"}),
            )],
        ),
        dsh_provider::mock::MockResponse::text("Fine."),
    ]);
    let output = ctx
        .command("node")
        .arg(client_dir().join("elicit.mjs"))
        .current_dir(client_dir())
        .env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test")
        .env("DSH_LOG", "error")
        .env("DSH_BIN", crate::support::dsh_bin())
        .env("ACP_PROJECT", ctx.project())
        .env("MCP_CONFIG", &config)
        .env("ELICIT_CONTENT", r#"{"name":"Ada","ok":false}"#)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "elicit.mjs failed:\n{stderr}");
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "elicit.mjs printed no JSON:\n{}",
            String::from_utf8_lossy(&output.stdout)
        )
    });
    assert_eq!(seen["stopReason"], "end_turn");
    assert_eq!(seen["exit"]["code"], 0, "dsh acp exit: {}", seen["exit"]);
    assert_eq!(seen["permissions"], serde_json::json!([]));
    let elicitations = seen["elicitations"].as_array().unwrap();
    assert_eq!(elicitations.len(), 1, "{elicitations:?}");
    let form = &elicitations[0];
    assert_eq!(form["mode"], "form");
    assert_eq!(form["sessionId"], seen["sessionId"]);
    assert_eq!(
        form["requestedSchema"]["required"],
        serde_json::json!(["name"])
    );
    let answers: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["dir"] == "in" && line["msg"]["id"] == 1001)
        .map(|line| line["msg"]["result"].clone())
        .collect();
    assert_eq!(
        answers,
        [serde_json::json!({"action": "accept", "content": {"name": "Ada", "ok": false}})]
    );
}
