//! Bounds on what a repository's files can make dsh build: a YAML "billion
//! laughs" frontmatter in a command or agent file is refused before it is
//! expanded, and the file is skipped with a notice naming it.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::TestContext;

/// Nine lines of nine aliases, each naming the line before: 9^9 strings
/// once expanded, from about 500 bytes.
fn billion_laughs() -> String {
    let mut text =
        String::from("---\nname: laugh\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for level in 1..9 {
        let items = vec![format!("*a{}", level - 1); 9].join(", ");
        text.push_str(&format!("a{level}: &a{level} [{items}]\n"));
    }
    text.push_str("---\nbody\n");
    text
}

/// `dsh ARGS` in the project under a 2 GiB address-space limit (so the old
/// expansion fails fast instead of filling the machine) and a time bound.
fn run_bounded(ctx: &TestContext, args: &[&str]) -> (std::process::Output, Duration) {
    // The support module's command, for its program and environment.
    let template = ctx.dsh_std();
    let mut bounded = std::process::Command::new("sh");
    bounded
        .arg("-c")
        .arg("ulimit -v 2097152 && exec \"$0\" \"$@\"")
        .arg(template.get_program())
        .args(args)
        .current_dir(ctx.project())
        .env_clear();
    for (key, value) in template.get_envs() {
        if let Some(value) = value {
            bounded.env(key, value);
        }
    }
    let started = Instant::now();
    let output = assert_cmd::Command::from_std(bounded)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (output, started.elapsed())
}

fn write(path: &Path, text: &str) {
    fs_err::create_dir_all(path.parent().unwrap()).unwrap();
    fs_err::write(path, text).unwrap();
}

#[test]
fn a_billion_laughs_frontmatter_is_skipped_with_a_notice() {
    let ctx = TestContext::new();
    let laugh = billion_laughs();
    assert!(laugh.len() < 600, "{}", laugh.len());
    let claude = ctx.project().join(".claude");
    write(&claude.join("commands").join("laugh.md"), &laugh);
    write(&claude.join("agents").join("laugh.md"), &laugh);
    // A sound command next to it still loads.
    write(
        &claude.join("commands").join("fine.md"),
        "---\ndescription: fine\n---\nbody\n",
    );

    let (output, took) = run_bounded(&ctx, &["status"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(took < Duration::from_secs(20), "status took {took:?}");
    let command = claude.join("commands").join("laugh.md");
    assert!(
        stderr.contains(&format!(
            "{}: frontmatter line 7: more than 10000 nodes",
            command.display()
        )) && stderr.contains("the file is skipped"),
        "{stderr}"
    );

    let (output, took) = run_bounded(&ctx, &["hooks", "check"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(took < Duration::from_secs(20), "hooks check took {took:?}");
    let agent = claude.join("agents").join("laugh.md");
    assert!(
        stdout.contains(&format!(
            "warning[agent-not-loaded]: {}: the agent is skipped: frontmatter line 7: more than 10000 nodes",
            agent.display()
        )),
        "{stdout}"
    );

    let (output, took) = run_bounded(&ctx, &["hooks", "list"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(took < Duration::from_secs(20), "hooks list took {took:?}");
    assert!(
        stdout.contains(&format!("agent file {} skipped", agent.display())),
        "{stdout}"
    );
}

/// The highest resident set size `/proc` reported for `pid` (KiB).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
}

/// A model reply whose tool-call arguments stream as 48 pieces of 1 MiB is
/// cut at the 16 MiB reply limit: the turn ends with the provider's error,
/// dsh's memory stays far below the stream's size, the session log does
/// not hold the arguments and no next request carries them.
#[test]
fn a_48_mib_tool_call_ends_the_turn_at_the_reply_limit() {
    use dsh_provider::mock::{MockProvider, MockReply, MockResponse, MockToolCall};
    const MIB: usize = 1024 * 1024;
    const MARK: &str = "@PIECE@";
    let piece = "x".repeat(MIB);
    let call = MockToolCall::raw("call_1", "bash", vec![MARK.to_owned(); 48]);
    let events: Vec<String> = MockReply::default()
        .with_tool_call(call)
        .events()
        .into_iter()
        .map(|event| event.replace(MARK, &piece))
        .collect();
    let mock = MockProvider::start_blocking(vec![MockResponse::Events(events)]).unwrap();

    let ctx = TestContext::new();
    let mut child = ctx
        .dsh_std()
        .env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test")
        .args(["-p", "go"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let started = Instant::now();
    let mut peak = 0;
    // Until it exits (a zombie reports no memory), or two minutes.
    while child.try_wait().unwrap().is_none() && started.elapsed() < Duration::from_secs(120) {
        peak = peak.max(peak_rss_kib(pid).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("grew past 16777216 bytes") && stderr.contains("max_reply_mib"),
        "{stderr}"
    );
    eprintln!(
        "dsh -p over a 48 MiB tool call: peak RSS {} MiB",
        peak / 1024
    );
    assert!(peak > 0 && peak < 400 * 1024, "peak RSS {peak} KiB");
    assert_eq!(
        mock.requests().len(),
        1,
        "no request after the failed reply"
    );
    let logs = crate::cli_headless::session_logs(&ctx);
    assert_eq!(logs.len(), 1);
    let size = fs_err::metadata(&logs[0]).unwrap().len();
    assert!(size < 64 * 1024, "the session log holds {size} bytes");
    let log = fs_err::read_to_string(&logs[0]).unwrap();
    assert!(log.contains("max_reply_mib"), "{log}");
}
