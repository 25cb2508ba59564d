//! The `bash` tool never hands dsh's API keys to the command it runs, even
//! when they are in dsh's own environment: tested in a helper process (this
//! test binary re-run with the keys set), since a test cannot change its own
//! environment safely.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Stdio};

use dsh_hook_runner::ProcessLayer;
use dsh_tools::builtin::{BashOutput, BashTool};
use dsh_tools::{Tool, ToolContext};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const HELPER: &str = "DSH_BASH_ENV_HELPER";

/// The helper side: does nothing in a normal test run.
#[test]
// The helper process hands its `env` output to the parent test on stdout.
#[allow(clippy::print_stdout)]
fn helper() {
    if std::env::var_os(HELPER).is_none() {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = std::env::temp_dir();
    let tool = BashTool::new(ProcessLayer::new(vec![
        "DSH_API_KEY".into(),
        "DEEPSEEK_API_KEY".into(),
        "OLLAMA_API_KEY".into(),
    ]));
    let value = runtime
        .block_on(tool.run(
            &ToolContext::new(dir, CancellationToken::new()),
            &json!({"command": "env"}),
        ))
        .unwrap();
    let out: BashOutput = serde_json::from_value(value).unwrap();
    print!("{}", out.stdout);
}

#[test]
fn a_model_run_env_does_not_see_the_api_keys() {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "helper", "--nocapture", "--test-threads=1"])
        .env(HELPER, "1")
        .env("DSH_API_KEY", "sk-dsh-secret")
        .env("DEEPSEEK_API_KEY", "sk-deepseek-secret")
        .env("OLLAMA_API_KEY", "sk-configured-secret")
        .env("DSH_HARMLESS", "still-here")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success());
    let env = String::from_utf8_lossy(&output.stdout);
    assert!(env.contains("DSH_HARMLESS=still-here"), "{env}");
    assert!(!env.contains("secret"), "{env}");
}
