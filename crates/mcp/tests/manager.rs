//! The manager against a real stdio server (`fixtures/mcp/echo_server.py`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use dsh_hook_runner::ProcessLayer;
use dsh_mcp::{McpManager, McpOptions, ServerConfig, ServerSource, ServerStatus, ServerTransport};
use dsh_tools::{Tool, ToolContext};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Held by the tests that push megabytes through a server (CPU-heavy on a
/// shared machine) and by the one with a tight start-up bound, so that the
/// first cannot starve the second.
static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn server_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/mcp/echo_server.py")
        .canonicalize()
        .unwrap()
}

fn config(name: &str, extra: &[&str], env: &[(&str, &str)]) -> ServerConfig {
    let mut args = vec![server_script().display().to_string()];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    ServerConfig {
        name: name.to_owned(),
        source: ServerSource::Project,
        origin: PathBuf::from("/project/.mcp.json"),
        transport: ServerTransport::Stdio {
            command: "python3".to_owned(),
            args,
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
            cwd: None,
        },
        problem: None,
        startup_timeout: None,
        tool_timeout: None,
    }
}

fn options(dir: &std::path::Path, layer: &ProcessLayer) -> McpOptions {
    McpOptions {
        cwd: dir.to_path_buf(),
        startup_timeout: Duration::from_secs(20),
        tool_timeout: None,
        processes: layer.clone(),
    }
}

fn tool(manager: &McpManager, name: &str) -> std::sync::Arc<dyn Tool> {
    manager
        .tools()
        .into_iter()
        .find(|tool| tool.spec().name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

async fn call(
    manager: &McpManager,
    name: &str,
    args: serde_json::Value,
) -> Result<serde_json::Value, String> {
    let dir = std::env::temp_dir();
    let ctx = ToolContext::new(dir, CancellationToken::new());
    tool(manager, name).run(&ctx, &args).await.map_err(|e| e.0)
}

#[tokio::test]
async fn tools_are_offered_and_results_keep_their_shape() {
    let dir = tempfile::tempdir().unwrap();
    let layer = ProcessLayer::default();
    let log = dir.path().join("calls.jsonl");
    let manager = McpManager::start(
        vec![config(
            "echo",
            &[],
            &[("MCP_ECHO_LOG", log.to_str().unwrap())],
        )],
        options(dir.path(), &layer),
    )
    .await;
    let report = &manager.reports()[0];
    assert_eq!(report.status, ServerStatus::Connected, "{}", report.line());
    assert_eq!(
        report.tools,
        ["echo", "echo_text", "fail", "crash", "env", "slow"]
    );
    assert_eq!(layer.live_groups(), 1);

    let echo = tool(&manager, "mcp__echo__echo");
    assert_eq!(echo.spec().input_schema["required"], json!(["text"]));
    let value = call(&manager, "mcp__echo__echo", json!({"text": "hello"}))
        .await
        .unwrap();
    assert_eq!(
        value,
        json!({"content":[{"type":"text","text":"ECHO: hello"}],"structuredContent":{"result":"ECHO: hello"},"isError":false})
    );
    assert_eq!(
        echo.render(&value).unwrap().content,
        r#"{"result":"ECHO: hello"}"#
    );

    let text = call(&manager, "mcp__echo__echo_text", json!({"text": "plain"}))
        .await
        .unwrap();
    let rendered = tool(&manager, "mcp__echo__echo_text")
        .render(&text)
        .unwrap();
    assert_eq!(
        (rendered.content.as_str(), rendered.is_error),
        ("ECHO-TEXT: plain", false)
    );

    let failed = call(&manager, "mcp__echo__fail", json!({"text": "boom"}))
        .await
        .unwrap();
    let rendered = tool(&manager, "mcp__echo__fail").render(&failed).unwrap();
    assert_eq!(
        (rendered.content.as_str(), rendered.is_error),
        ("Error executing tool fail: FAIL: boom", true)
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(logged.lines().count(), 3, "{logged}");

    manager.shutdown().await;
    assert_eq!(manager.reports()[0].status, ServerStatus::Closed);
    assert_eq!(layer.live_groups(), 0);
}

#[tokio::test]
async fn a_crashed_server_fails_its_call_and_is_restarted_once() {
    let dir = tempfile::tempdir().unwrap();
    let layer = ProcessLayer::default();
    let log = dir.path().join("calls.jsonl");
    let manager = McpManager::start(
        vec![config(
            "echo",
            &[],
            &[("MCP_ECHO_LOG", log.to_str().unwrap())],
        )],
        options(dir.path(), &layer),
    )
    .await;
    let error = call(&manager, "mcp__echo__crash", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(
        error.contains("MCP server `echo` failed during `crash`"),
        "{error}"
    );
    assert!(error.contains("exit status: 3"), "{error}");
    assert!(matches!(
        manager.reports()[0].status,
        ServerStatus::Failed { .. }
    ));

    // The next call restarts it (a new pid answers).
    let value = call(&manager, "mcp__echo__echo", json!({"text": "again"}))
        .await
        .unwrap();
    assert_eq!(value["structuredContent"]["result"], "ECHO: again");
    assert_eq!(manager.reports()[0].status, ServerStatus::Connected);
    let pids: Vec<u64> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["pid"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(pids.len(), 2);
    assert_ne!(pids[0], pids[1]);

    // A second crash is final.
    call(&manager, "mcp__echo__crash", json!({"text": "x"}))
        .await
        .unwrap_err();
    let error = call(&manager, "mcp__echo__echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(error.contains("not restarted again"), "{error}");
    manager.shutdown().await;
    assert_eq!(layer.live_groups(), 0);
}

#[tokio::test]
async fn start_up_is_bounded_and_failures_name_the_server() {
    let _heavy = HEAVY.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let layer = ProcessLayer::default();
    let mut opts = options(dir.path(), &layer);
    opts.startup_timeout = Duration::from_millis(1500);
    let mut missing = config("gone", &[], &[]);
    missing.transport = ServerTransport::Stdio {
        command: "/nonexistent/server".to_owned(),
        args: Vec::new(),
        env: BTreeMap::new(),
        cwd: None,
    };
    let started = std::time::Instant::now();
    let manager = McpManager::start(
        vec![
            config("slow", &["--hang"], &[]),
            missing,
            config("ok", &[], &[]),
        ],
        opts,
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let reports = manager.reports();
    let ServerStatus::Failed { reason } = &reports[0].status else {
        panic!("{:?}", reports[0])
    };
    assert!(
        reason.contains("`slow`") && reason.contains("did not start within 1500 ms"),
        "{reason}"
    );
    let ServerStatus::Failed { reason } = &reports[1].status else {
        panic!("{:?}", reports[1])
    };
    assert!(
        reason.contains("`gone`") && reason.contains("/nonexistent/server"),
        "{reason}"
    );
    assert_eq!(reports[2].status, ServerStatus::Connected);
    // Only the connected server's tools are offered; the hung one is gone.
    assert!(
        manager
            .tools()
            .iter()
            .all(|t| t.spec().name.starts_with("mcp__ok__"))
    );
    assert_eq!(layer.live_groups(), 1);
    manager.shutdown().await;
    assert_eq!(layer.live_groups(), 0);
}

#[tokio::test]
async fn servers_do_not_see_scrubbed_variables() {
    let dir = tempfile::tempdir().unwrap();
    let layer = ProcessLayer::new(vec!["DSH_TEST_SECRET".to_owned()]);
    let manager = McpManager::start(
        vec![config(
            "echo",
            &[],
            &[("DSH_TEST_SECRET", "leak"), ("VISIBLE", "yes")],
        )],
        options(dir.path(), &layer),
    )
    .await;
    let secret = call(
        &manager,
        "mcp__echo__env",
        json!({"name": "DSH_TEST_SECRET"}),
    )
    .await
    .unwrap();
    assert_eq!(secret["content"][0]["text"], "");
    let visible = call(&manager, "mcp__echo__env", json!({"name": "VISIBLE"}))
        .await
        .unwrap();
    assert_eq!(visible["content"][0]["text"], "yes");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_call_is_bounded_by_the_servers_tool_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let layer = ProcessLayer::default();
    let mut slow = config("echo", &[], &[]);
    slow.tool_timeout = Some(Duration::from_millis(300));
    let manager = McpManager::start(vec![slow], options(dir.path(), &layer)).await;
    let started = std::time::Instant::now();
    let error = call(&manager, "mcp__echo__slow", json!({"seconds": 5}))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(
        error,
        "MCP tool `slow` on server `echo` did not answer within 300 ms"
    );
    // A timed-out call does not fail the server.
    assert_eq!(manager.reports()[0].status, ServerStatus::Connected);
    manager.shutdown().await;
    assert_eq!(layer.live_groups(), 0);
}

#[test]
fn the_tool_timeout_is_mcp_tool_timeout_with_claude_codes_default() {
    let dir = std::env::temp_dir();
    let none = McpOptions::new(dir.clone(), ProcessLayer::default(), &|_| None);
    assert_eq!(none.tool_timeout, Some(Duration::from_millis(100_000_000)));
    assert_eq!(none.tool_timeout, Some(dsh_mcp::DEFAULT_TOOL_TIMEOUT));
    let set = McpOptions::new(dir.clone(), ProcessLayer::default(), &|name| {
        (name == "MCP_TOOL_TIMEOUT").then(|| "250".to_owned())
    });
    assert_eq!(set.tool_timeout, Some(Duration::from_millis(250)));
    let junk = McpOptions::new(dir, ProcessLayer::default(), &|name| {
        (name == "MCP_TOOL_TIMEOUT").then(|| "soon".to_owned())
    });
    assert_eq!(junk.tool_timeout, Some(dsh_mcp::DEFAULT_TOOL_TIMEOUT));
}

#[tokio::test]
async fn mcp_tool_timeout_bounds_a_call_and_names_the_server_and_tool() {
    let dir = tempfile::tempdir().unwrap();
    let layer = ProcessLayer::default();
    let options = McpOptions::new(dir.path().to_path_buf(), layer.clone(), &|name| {
        (name == "MCP_TOOL_TIMEOUT").then(|| "300".to_owned())
    });
    let manager = McpManager::start(vec![config("echo", &[], &[])], options).await;
    let started = std::time::Instant::now();
    let error = call(&manager, "mcp__echo__slow", json!({"seconds": 10}))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        error,
        "MCP tool `slow` on server `echo` did not answer within 300 ms"
    );
    // A timed-out call does not fail the server (which is still sleeping:
    // it answers one request at a time).
    assert_eq!(manager.reports()[0].status, ServerStatus::Connected);
    manager.shutdown().await;
    assert_eq!(layer.live_groups(), 0);
}

/// Over rmcp's 16 MiB line limit.
const OVER_LIMIT: u64 = 17 * 1024 * 1024;

#[tokio::test]
async fn an_answer_the_client_drops_fails_the_call_instead_of_hanging() {
    let _heavy = HEAVY.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let layer = ProcessLayer::default();
    // No tool timeout at all: only the oversize watch can end the call.
    let manager = McpManager::start(
        vec![config("big", &["--big"], &[])],
        options(dir.path(), &layer),
    )
    .await;
    for id_last in [false, true] {
        let started = std::time::Instant::now();
        let error = tokio::time::timeout(
            Duration::from_secs(60),
            call(
                &manager,
                "mcp__big__big",
                json!({"bytes": OVER_LIMIT, "id_last": id_last}),
            ),
        )
        .await
        .expect("the call must not hang")
        .unwrap_err();
        assert_eq!(
            error,
            "MCP server `big` answered `big` with a message of 16 MiB or more, which the MCP \
             client drops; no result (ask the tool for less)",
            "id_last: {id_last}"
        );
        assert!(started.elapsed() < Duration::from_secs(60));
        // The connection stays usable for the next call.
        let value = call(
            &manager,
            "mcp__big__echo_text",
            json!({"text": "still here"}),
        )
        .await
        .unwrap();
        assert_eq!(value["content"][0]["text"], "ECHO-TEXT: still here");
        assert_eq!(manager.reports()[0].status, ServerStatus::Connected);
    }
    manager.shutdown().await;
    assert_eq!(layer.live_groups(), 0);
}

#[tokio::test]
async fn a_five_megabyte_answer_is_saved_and_the_model_gets_a_preview() {
    let _heavy = HEAVY.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let layer = ProcessLayer::default();
    let manager = McpManager::start(
        vec![config("big", &["--big"], &[])],
        options(dir.path(), &layer),
    )
    .await;
    let value = call(&manager, "mcp__big__big", json!({"bytes": 5_000_000}))
        .await
        .unwrap();
    assert_eq!(value["isError"], false);
    let blocks = value["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 1);
    let text = blocks[0]["text"].as_str().unwrap();
    // Claude Code's default limit: over 50,000 characters the whole result
    // goes to a file and the model reads a 2 KB preview.
    let head = "<persisted-output>\nOutput too large (";
    assert!(text.starts_with(head), "{}", &text[..200.min(text.len())]);
    assert!(text.ends_with("\n...\n</persisted-output>"));
    let saved = text
        .split_once("Full output saved to: ")
        .and_then(|(_, rest)| rest.split_once('\n'))
        .map(|(path, _)| std::path::PathBuf::from(path))
        .unwrap();
    let kept = fs_err::read_to_string(&saved).unwrap();
    let _ = fs_err::remove_file(&saved);
    let full = format!("<{}>", "x".repeat(5_000_000 - 2));
    assert!(
        kept.contains(&full),
        "the saved file holds the whole answer"
    );
    assert!(
        text.len() < 3_000,
        "the preview is about 2 KB: {}",
        text.len()
    );
    let rendered = tool(&manager, "mcp__big__big").render(&value).unwrap();
    assert_eq!(rendered.content, text);
    manager.shutdown().await;
}
