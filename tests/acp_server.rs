//! `dsh acp` driven as a subprocess over stdio, against the loopback mock
//! provider, with real Claude Code hooks in the project. The wire is
//! snapshotted one message per line (ids, paths and uuids normalized).

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use dsh_provider::mock::{MockProvider, MockResponse, MockToolCall};
use serde_json::{Value, json};

use crate::cli_headless::{events, mock, of_type, session_logs};
use crate::support::TestContext;

/// How long any single message may take to arrive.
const WAIT: Duration = Duration::from_secs(30);

/// A JSON-RPC client of `dsh acp` that records every line both ways.
pub(crate) struct AcpClient {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    next_id: u64,
    /// `-> {json}` for what the client sent, `<- {json}` for what dsh sent.
    pub(crate) wire: Vec<String>,
}

impl AcpClient {
    /// Starts `dsh acp` in the context's project, pointed at `mock`.
    pub(crate) fn start(ctx: &TestContext, mock: &MockProvider) -> Self {
        Self::start_with(ctx, mock, &[], &[])
    }

    /// [`AcpClient::start`] with `dsh acp ARGS` and extra variables.
    pub(crate) fn start_with(
        ctx: &TestContext,
        mock: &MockProvider,
        args: &[std::ffi::OsString],
        vars: &[(&str, &str)],
    ) -> Self {
        let mut child = Command::new(crate::support::dsh_bin())
            .arg("acp")
            .args(args)
            .current_dir(ctx.project())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", ctx.home())
            .env("DSH_HOME", ctx.home().join(".dsh"))
            .env("CODEX_HOME", ctx.home().join(".codex"))
            .env("DSH_BASE_URL", mock.base_url())
            .env("DSH_API_KEY", "sk-test")
            .env("DSH_LOG", "error")
            .env("TZ", "UTC")
            .envs(vars.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("dsh acp starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        AcpClient {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 0,
            wire: Vec::new(),
        }
    }

    /// Sends one line as it is (malformed input included).
    pub(crate) fn send_raw(&mut self, line: &str) {
        self.wire.push(format!("-> {line}"));
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    /// Sends a request; returns its id.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Answers a request dsh sent.
    pub(crate) fn respond(&mut self, to: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": to["id"].clone(), "result": result}));
    }

    /// Answers a permission request by picking an option.
    pub(crate) fn pick(&mut self, to: &Value, option: &str) {
        self.respond(
            to,
            json!({"outcome": {"outcome": "selected", "optionId": option}}),
        );
    }

    /// The next message dsh sends.
    pub(crate) fn next(&mut self) -> Value {
        let line = self.lines.recv_timeout(WAIT).unwrap_or_else(|_| {
            panic!(
                "no message from dsh acp; wire so far:\n{}",
                self.wire.join("\n")
            )
        });
        self.wire.push(format!("<- {line}"));
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line}"))
    }

    /// Messages until one matches; returns it.
    pub(crate) fn until(&mut self, mut what: impl FnMut(&Value) -> bool) -> Value {
        loop {
            let message = self.next();
            if what(&message) {
                return message;
            }
        }
    }

    /// Messages until the response to request `id`.
    pub(crate) fn response(&mut self, id: u64) -> Value {
        self.until(|m| m["id"] == id && m.get("method").is_none())
    }

    /// Sends dsh SIGTERM, as an editor closing the agent does.
    pub(crate) fn terminate(&mut self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Closes stdin and waits for dsh to exit.
    pub(crate) fn finish(mut self) -> (std::process::ExitStatus, Vec<String>) {
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Whatever dsh wrote before exiting.
                while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) {
                    self.wire.push(format!("<- {line}"));
                }
                return (status, std::mem::take(&mut self.wire));
            }
            assert!(
                Instant::now() < deadline,
                "dsh acp did not exit after stdin closed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for AcpClient {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// ACP sessions run Claude Code's permission model: in the
/// `default` mode `touch` or a redirect asks too. Tests of what the hooks'
/// questions do run in `bypassPermissions`, so only the hooks ask.
fn hooks_only() -> Vec<std::ffi::OsString> {
    vec!["--permission-mode".into(), "bypassPermissions".into()]
}

pub(crate) fn is_method(message: &Value, method: &str) -> bool {
    message["method"] == method
}

pub(crate) fn is_update(message: &Value, kind: &str) -> bool {
    message["method"] == "session/update" && message["params"]["update"]["sessionUpdate"] == kind
}

/// Project hooks (untrusted: dsh asks first): a Bash validator that blocks
/// `rm -rf` with exit 2, an `ask` for every Write, and a prompt gate that
/// blocks prompts mentioning deploys.
pub(crate) fn install_project_hooks(ctx: &TestContext) {
    let claude = ctx.project().join(".claude");
    let hooks = claude.join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::copy(
        crate::support::fixture("claude/hooks/bash_validator.sh"),
        hooks.join("bash_validator.sh"),
    )
    .unwrap();
    std::fs::write(
        hooks.join("ask_write.sh"),
        "cat >/dev/null\nprintf '%s' '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"writes need a look\"}}'\n",
    )
    .unwrap();
    std::fs::write(
        hooks.join("prompt_gate.sh"),
        "input=$(cat)\ncase \"$input\" in\n  *deploy*) printf '%s' '{\"decision\":\"block\",\"reason\":\"Deploys are not started from the editor\"}' ;;\nesac\nexit 0\n",
    )
    .unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": {
  "PreToolUse": [
    { "matcher": "Bash", "hooks": [ { "type": "command", "command": "sh \"$CLAUDE_PROJECT_DIR/.claude/hooks/bash_validator.sh\"" } ] },
    { "matcher": "Write", "hooks": [ { "type": "command", "command": "sh \"$CLAUDE_PROJECT_DIR/.claude/hooks/ask_write.sh\"" } ] }
  ],
  "UserPromptSubmit": [
    { "hooks": [ { "type": "command", "command": "sh \"$CLAUDE_PROJECT_DIR/.claude/hooks/prompt_gate.sh\"" } ] }
  ]
} }"#,
    )
    .unwrap();
}

/// The mock's script for [`full_flow_over_stdio`] (and the Node client).
pub(crate) fn full_flow_script() -> Vec<MockResponse> {
    vec![
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
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_slow",
                "bash",
                &json!({"command": "echo $$ > slow.pid && exec sleep 30"}),
            )],
        ),
    ]
}

/// Waits for the pid a command wrote to `file` in the project.
fn wait_for_pid(ctx: &TestContext, file: &str) -> i32 {
    let path = ctx.project().join(file);
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(pid) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| text.trim().parse::<i32>().ok())
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (a few seconds at most) for `pid` to be gone.
fn assert_gone(pid: i32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while pid_alive(pid) {
        assert!(Instant::now() < deadline, "process {pid} lives on");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pid_alive(pid: i32) -> bool {
    // A reaped process has no /proc entry; a zombie is not running.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.contains(") Z "))
        .unwrap_or(false)
}

/// The wire as a snapshot: one message per line, session ids and paths
/// replaced.
fn normalized(ctx: &TestContext, wire: &[String]) -> String {
    let mut out = String::new();
    for line in wire {
        out.push_str(&ctx.redact(line));
        out.push('\n');
    }
    out
}

#[test]
fn full_flow_over_stdio() {
    let ctx = TestContext::new();
    install_project_hooks(&ctx);
    std::fs::create_dir_all(ctx.project().join("build")).unwrap();
    let mock = mock(full_flow_script());
    let mut client = AcpClient::start_with(&ctx, &mock, &hooks_only(), &[]);

    let init = client.request(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    let init = client.response(init);
    assert_eq!(init["result"]["protocolVersion"], 1);
    assert_eq!(init["result"]["agentCapabilities"]["loadSession"], true);

    let new = client.request(
        "session/new",
        json!({"cwd": ctx.project(), "mcpServers": []}),
    );
    let session = client.response(new)["result"]["sessionId"].clone();
    assert!(session.is_string());

    // Turn 1: the trust question first, naming the hook commands.
    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "Clean the build directory"}]}),
    );
    let trust = client.until(|m| is_method(m, "session/request_permission"));
    let trust_text = trust["params"]["toolCall"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(trust_text.contains("bash_validator.sh"), "{trust_text}");
    assert!(trust_text.contains("prompt_gate.sh"), "{trust_text}");
    client.pick(&trust, "allow_once");

    // The hook blocks `rm -rf`; the write asks, with the exact call id.
    let ask = client.until(|m| is_method(m, "session/request_permission"));
    assert_eq!(ask["params"]["toolCall"]["toolCallId"], "call_write");
    let options: Vec<&str> = ask["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["allow_once", "reject_once"]);
    client.pick(&ask, "allow_once");
    let done = client.response(prompt);
    assert_eq!(done["result"]["stopReason"], "end_turn");
    assert!(ctx.project().join("build").is_dir(), "the hook kept build/");
    assert_eq!(
        std::fs::read_to_string(ctx.project().join("notes.txt")).unwrap(),
        "cleaned\n"
    );

    // Turn 2: the prompt gate blocks; the prompt settles end_turn.
    let blocked = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "deploy to production"}]}),
    );
    let blocked = client.response(blocked);
    assert_eq!(blocked["result"]["stopReason"], "end_turn");

    // Turn 3: a slow command, cancelled once it runs.
    let slow = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "Run the slow job"}]}),
    );
    let pid = wait_for_pid(&ctx, "slow.pid");
    let started = Instant::now();
    client.notify("session/cancel", json!({"sessionId": session}));
    let cancelled = client.response(slow);
    assert_eq!(cancelled["result"]["stopReason"], "cancelled");
    let settled = started.elapsed();
    eprintln!("acp: session/cancel to the cancelled answer: {settled:?}");
    assert!(settled < Duration::from_secs(10));
    let deadline = Instant::now() + Duration::from_secs(5);
    while pid_alive(pid) {
        assert!(
            Instant::now() < deadline,
            "the cancelled command's process lives on"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    let (status, wire) = client.finish();
    assert!(status.success(), "{status}");
    assert_eq!(mock.remaining(), 0);

    // The log: turn 2 is a durable zero-step `rejected` turn, turn 3 interrupted.
    let logs = session_logs(&ctx);
    assert_eq!(logs.len(), 1);
    let log = events(&logs[0]);
    let ends: Vec<&str> = of_type(&log, "turn/end")
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert_eq!(ends, ["completed", "rejected", "interrupted"]);
    assert_eq!(of_type(&log, "prompt/blocked").len(), 1);
    assert!(
        of_type(&log, "assistant/message")
            .iter()
            .all(|m| m["turn"] != 2),
        "a rejected turn has no steps"
    );
    let results: Vec<(&str, bool)> = of_type(&log, "tool/result")
        .iter()
        .map(|r| (r["disposition"].as_str().unwrap(), r["is_error"] == true))
        .collect();
    // The killed command's result is the bash tool's own (an error).
    assert_eq!(
        results,
        [("denied", true), ("executed", false), ("executed", true)]
    );

    // What an editor sees of each call, in order.
    let sent: Vec<Value> = wire
        .iter()
        .filter_map(|line| line.strip_prefix("<- "))
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let trail = |id: &str| -> Vec<String> {
        sent.iter()
            .filter_map(|m| {
                let update = &m["params"]["update"];
                let tool_call = &m["params"]["toolCall"];
                if is_method(m, "session/request_permission") && tool_call["toolCallId"] == id {
                    Some("ask".to_owned())
                } else if update["toolCallId"] == id {
                    Some(format!(
                        "{}:{}",
                        update["sessionUpdate"].as_str().unwrap(),
                        update["status"].as_str().unwrap_or("pending")
                    ))
                } else {
                    None
                }
            })
            .collect()
    };
    // The trust question is announced as a call before it is asked, and settled.
    let trust_id = trust["params"]["toolCall"]["toolCallId"].as_str().unwrap();
    assert_eq!(
        trail(trust_id),
        ["tool_call:pending", "ask", "tool_call_update:completed"]
    );
    // A call runs `in_progress` from when it starts; a denied one never runs.
    assert_eq!(
        trail("call_rm"),
        ["tool_call:pending", "tool_call_update:failed"]
    );
    assert_eq!(
        trail("call_write"),
        [
            "tool_call:pending",
            "ask",
            "tool_call_update:in_progress",
            "tool_call_update:completed"
        ]
    );
    assert_eq!(
        trail("call_slow"),
        [
            "tool_call:pending",
            "tool_call_update:in_progress",
            "tool_call_update:failed"
        ]
    );
    // The hook's denial is shown once, by the failed call, not as a message too.
    let messages: Vec<&str> = sent
        .iter()
        .filter(|m| is_update(m, "agent_message_chunk"))
        .filter_map(|m| m["params"]["update"]["content"]["text"].as_str())
        .collect();
    assert!(
        messages.iter().all(|text| !text.contains("bash policy")),
        "{messages:?}"
    );

    insta::assert_snapshot!(normalized(&ctx, &wire));
}

/// An editor's mistakes get JSON-RPC errors on stdout and nothing on
/// stderr (the error is the client's to show).
#[test]
fn error_responses_write_nothing_to_stderr() {
    let ctx = TestContext::new();
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
        "this is not json",
        r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":42}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"nobody","prompt":[{"type":"text","text":"hi"}]}}"#,
    ]
    .join("\n");
    let output = ctx
        .dsh()
        .arg("acp")
        .env("DSH_BASE_URL", "http://127.0.0.1:9")
        .env("DSH_API_KEY", "sk-test")
        .write_stdin(format!("{input}\n"))
        .timeout(WAIT)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let errors = stdout.lines().filter(|l| l.contains("\"error\"")).count();
    assert_eq!(errors, 4, "{stdout}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.trim().is_empty(), "stderr: {stderr}");
}

/// Writes the same ask hook as [`install_project_hooks`] at user level
/// (trusted: no trust question).
fn install_user_ask_hook(ctx: &TestContext) {
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("ask.sh"),
        "cat >/dev/null\nprintf '%s' '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"a person must approve\"}}'\n",
    )
    .unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "PreToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "sh \"$HOME/.claude/ask.sh\"" } ] } ] } }"#,
    )
    .unwrap();
}

fn touch_calls(files: &[&str]) -> Vec<MockResponse> {
    let mut script = Vec::new();
    for (i, file) in files.iter().enumerate() {
        script.push(MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                format!("call_{i}"),
                "bash",
                &json!({"command": format!("touch {file}")}),
            )],
        ));
    }
    script.push(MockResponse::text("Finished."));
    script
}

fn start_session(client: &mut AcpClient, cwd: &Path) -> Value {
    let init = client.request("initialize", json!({"protocolVersion": 1}));
    client.response(init);
    let new = client.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
    client.response(new)["result"]["sessionId"].clone()
}

#[test]
fn every_answer_but_allow_once_is_a_denial_with_its_own_disposition() {
    let ctx = TestContext::new();
    install_user_ask_hook(&ctx);
    let mock = mock(touch_calls(&[
        "rejected",
        "cancelled",
        "unknown",
        "errored",
        "allowed",
    ]));
    let mut client = AcpClient::start_with(&ctx, &mock, &hooks_only(), &[]);
    let session = start_session(&mut client, &ctx.project());
    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "touch them"}]}),
    );
    let ask = client.until(|m| is_method(m, "session/request_permission"));
    client.pick(&ask, "reject_once");
    let ask = client.until(|m| is_method(m, "session/request_permission"));
    client.respond(&ask, json!({"outcome": {"outcome": "cancelled"}}));
    let ask = client.until(|m| is_method(m, "session/request_permission"));
    client.pick(&ask, "allow_always");
    let ask = client.until(|m| is_method(m, "session/request_permission"));
    client.send_raw(
        &json!({"jsonrpc": "2.0", "id": ask["id"].clone(), "error": {"code": -32603, "message": "the editor broke"}})
            .to_string(),
    );
    let ask = client.until(|m| is_method(m, "session/request_permission"));
    client.pick(&ask, "allow_once");
    let done = client.response(prompt);
    assert_eq!(done["result"]["stopReason"], "end_turn");
    let (status, _) = client.finish();
    assert!(status.success());

    for file in ["rejected", "cancelled", "unknown", "errored"] {
        assert!(!ctx.project().join(file).exists(), "{file} ran");
    }
    assert!(ctx.project().join("allowed").exists());
    let log = events(&session_logs(&ctx)[0]);
    let dispositions: Vec<&str> = of_type(&log, "tool/result")
        .iter()
        .map(|r| r["disposition"].as_str().unwrap())
        .collect();
    assert_eq!(
        dispositions,
        [
            "approval_rejected",
            "approval_cancelled",
            "approval_rejected",
            "approval_unavailable",
            "executed"
        ]
    );
}

#[test]
fn rejected_trust_keeps_project_hooks_from_running() {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "UserPromptSubmit": [ { "hooks": [ { "type": "command", "command": "touch hook-ran" } ] } ] } }"#,
    )
    .unwrap();
    let mock = mock(vec![MockResponse::text("Hi.")]);
    let mut client = AcpClient::start(&ctx, &mock);
    let session = start_session(&mut client, &ctx.project());
    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}),
    );
    let trust = client.until(|m| is_method(m, "session/request_permission"));
    let text = trust["params"]["toolCall"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.contains("touch hook-ran"), "{text}");
    client.pick(&trust, "reject_once");
    let done = client.response(prompt);
    assert_eq!(done["result"]["stopReason"], "end_turn");
    let (status, _) = client.finish();
    assert!(status.success());
    assert!(!ctx.project().join("hook-ran").exists());
    // Nothing was stored: the next session asks again.
    assert!(!ctx.home().join(".dsh").join("trust.json").exists());
}

#[test]
fn session_load_replays_history_then_continues_the_session() {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "Looking.",
            vec![MockToolCall::new(
                "call_1",
                "bash",
                &json!({"command": "echo hi"}),
            )],
        ),
        MockResponse::text("It said hi."),
        MockResponse::text("Second answer."),
    ]);
    let mut client = AcpClient::start(&ctx, &mock);
    let session = start_session(&mut client, &ctx.project());
    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "say hi"}]}),
    );
    client.response(prompt);
    let (status, _) = client.finish();
    assert!(status.success());

    let mut client = AcpClient::start(&ctx, &mock);
    let init = client.request("initialize", json!({"protocolVersion": 1}));
    client.response(init);
    let load = client.request(
        "session/load",
        json!({"sessionId": session, "cwd": ctx.project(), "mcpServers": []}),
    );
    let mut replayed = Vec::new();
    let loaded = client.until(|m| {
        if m["method"] == "session/update" {
            replayed.push(m["params"]["update"].clone());
        }
        m["id"] == load && m.get("method").is_none()
    });
    assert!(loaded.get("error").is_none(), "{loaded}");
    let kinds: Vec<&str> = replayed
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "agent_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk"
        ]
    );
    assert_eq!(replayed[0]["content"]["text"], "say hi");
    assert_eq!(replayed[3]["status"], "completed");

    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "again"}]}),
    );
    assert_eq!(client.response(prompt)["result"]["stopReason"], "end_turn");
    let (status, _) = client.finish();
    assert!(status.success());
    // The same log goes on, and the model saw the earlier turn.
    let log = events(&session_logs(&ctx)[0]);
    assert_eq!(of_type(&log, "turn/start").len(), 2);
    let last = mock.requests().last().unwrap().clone();
    assert!(last.to_string().contains("It said hi."), "{last}");

    // An unknown session is a JSON-RPC error naming it.
    let mut client = AcpClient::start(&ctx, &mock);
    let init = client.request("initialize", json!({"protocolVersion": 1}));
    client.response(init);
    let load = client.request(
        "session/load",
        json!({"sessionId": "no-such-session", "cwd": ctx.project(), "mcpServers": []}),
    );
    let error = client.response(load);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no-such-session"),
        "{error}"
    );
    client.finish();
}

#[test]
fn malformed_input_gets_errors_and_the_server_keeps_serving() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("Still here.")]);
    let mut client = AcpClient::start(&ctx, &mock);
    let init = client.request("initialize", json!({"protocolVersion": 1}));
    client.response(init);

    client.send_raw("this is not json");
    let parse = client.next();
    assert_eq!(parse["error"]["code"], -32700);
    client.send_raw("[1, 2, 3]");
    assert_eq!(client.next()["error"]["code"], -32600);
    let unknown = client.request("no/such/method", json!({}));
    assert_eq!(client.response(unknown)["error"]["code"], -32601);
    let bad = client.request("session/new", json!({"cwd": 42}));
    assert_eq!(client.response(bad)["error"]["code"], -32602);
    let relative = client.request(
        "session/new",
        json!({"cwd": "relative/dir", "mcpServers": []}),
    );
    let relative = client.response(relative);
    assert!(
        relative["error"]["message"]
            .as_str()
            .unwrap()
            .contains("absolute"),
        "{relative}"
    );
    let nobody = client.request(
        "session/prompt",
        json!({"sessionId": "nobody", "prompt": [{"type": "text", "text": "hi"}]}),
    );
    let nobody = client.response(nobody);
    assert!(
        nobody["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nobody")
    );

    // MCP servers are accepted and named as unsupported, not refused.
    let new = client.request(
        "session/new",
        json!({"cwd": ctx.project(), "mcpServers": [{"name": "files", "command": "mcp-files", "args": [], "env": []}]}),
    );
    let session = client.response(new)["result"]["sessionId"].clone();
    let notice = client.until(|m| is_update(m, "agent_message_chunk"));
    assert!(
        notice["params"]["update"]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("MCP"),
        "{notice}"
    );
    let image = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]}),
    );
    assert_eq!(client.response(image)["error"]["code"], -32602);
    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "still there?"}]}),
    );
    assert_eq!(client.response(prompt)["result"]["stopReason"], "end_turn");
    let (status, _) = client.finish();
    assert!(status.success());
}

#[test]
fn sigterm_ends_the_session_and_kills_the_running_command() {
    let ctx = TestContext::new();
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "SessionEnd": [ { "hooks": [ { "type": "command", "command": "cat > session-end.json" } ] } ] } }"#,
    )
    .unwrap();
    let mock = mock(vec![MockResponse::tool_calls(
        "",
        vec![MockToolCall::new(
            "call_slow",
            "bash",
            &json!({"command": "echo $$ > slow.pid && exec sleep 30"}),
        )],
    )]);
    let mut client = AcpClient::start_with(&ctx, &mock, &hooks_only(), &[]);
    let session = start_session(&mut client, &ctx.project());
    client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "slow"}]}),
    );
    let pid = wait_for_pid(&ctx, "slow.pid");
    let started = Instant::now();
    client.terminate();
    let (status, _) = client.finish();
    assert!(status.success(), "{status}");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_gone(pid);
    let log = events(&session_logs(&ctx)[0]);
    let ends: Vec<&str> = of_type(&log, "turn/end")
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert_eq!(ends, ["interrupted"]);
    // The session-end seam ran before dsh exited.
    let input = std::fs::read_to_string(ctx.project().join("session-end.json")).unwrap();
    assert!(input.contains("SessionEnd"), "{input}");
}

#[test]
fn ask_user_question_is_a_permission_request_with_the_questions_options() {
    let ctx = TestContext::new();
    let ask = MockToolCall::new(
        "call_1",
        "ask_user_question",
        &json!({"questions": [{
            "question": "Which database?",
            "header": "Database",
            "options": [
                {"label": "Postgres", "description": "the usual"},
                {"label": "SQLite", "description": "one file"}
            ]
        }]}),
    );
    let mock = mock(vec![
        MockResponse::tool_calls("", vec![ask.clone()]),
        MockResponse::tool_calls("", vec![ask]),
        MockResponse::text("Noted."),
    ]);
    let mut client = AcpClient::start(&ctx, &mock);
    let session = start_session(&mut client, &ctx.project());
    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "pick one"}]}),
    );
    let question = client.until(|m| is_method(m, "session/request_permission"));
    let options: Vec<(&str, &str)> = question["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["optionId"].as_str().unwrap(), o["name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        options,
        [
            ("option_1", "Postgres"),
            ("option_2", "SQLite"),
            ("reject_once", "Skip")
        ]
    );
    assert_eq!(
        question["params"]["toolCall"]["title"],
        "Database: Which database?"
    );
    client.pick(&question, "option_2");
    // The second time the question is skipped: nobody answered.
    let question = client.until(|m| is_method(m, "session/request_permission"));
    client.pick(&question, "reject_once");
    let done = client.response(prompt);
    assert_eq!(done["result"]["stopReason"], "end_turn");
    let (status, _) = client.finish();
    assert!(status.success());

    let results: Vec<String> = mock
        .requests()
        .iter()
        .filter_map(|r| {
            r["messages"]
                .as_array()?
                .iter()
                .rev()
                .find(|m| m["role"] == "tool")
                .and_then(|m| m["content"].as_str().map(str::to_owned))
        })
        .collect();
    assert!(
        results[0].contains("\"Which database?\" = \"SQLite\""),
        "{results:?}"
    );
    assert!(
        results[1].starts_with("No one could answer these questions"),
        "{results:?}"
    );
}

#[test]
fn an_mcp_elicitation_with_a_required_field_can_only_be_declined_in_acp() {
    let ctx = TestContext::new();
    let log = ctx.home().join("elicit.jsonl");
    let config = json!({"mcpServers": {"elicit": {
        "command": "python3",
        "args": [crate::support::repo_root().join("fixtures/mcp/elicit_server.py")],
        "env": {"MCP_ELICIT_LOG": log},
    }}})
    .to_string();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "mcp__elicit__ask",
                &json!({"question": "What is your name?"}),
            )],
        ),
        MockResponse::text("Fine."),
    ]);
    let mut args = hooks_only();
    args.extend(["--mcp-config".into(), config.into()]);
    let mut client = AcpClient::start_with(&ctx, &mock, &args, &[]);
    let session = start_session(&mut client, &ctx.project());
    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "ask me"}]}),
    );
    let question = client.until(|m| is_method(m, "session/request_permission"));
    let options: Vec<&str> = question["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["reject_once"], "{question}");
    assert_eq!(
        question["params"]["toolCall"]["title"],
        "MCP server elicit asks"
    );
    client.pick(&question, "reject_once");
    let done = client.response(prompt);
    assert_eq!(done["result"]["stopReason"], "end_turn");
    let (status, _) = client.finish();
    assert!(status.success());
    // What the server got back.
    let answers: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["dir"] == "in" && line["msg"]["id"] == 1001)
        .map(|line| line["msg"]["result"].clone())
        .collect();
    assert_eq!(answers, [json!({"action": "decline"})]);
}

#[test]
fn an_mcp_elicitation_form_goes_to_a_client_that_shows_forms_as_elicitation_create() {
    // The client declares form elicitation at `initialize`: the server's
    // form (a required `name`) goes to it as ACP's `elicitation/create`, with
    // the schema as the server sent it, and the values typed there reach the
    // server.
    let ctx = TestContext::new();
    let log = ctx.home().join("elicit.jsonl");
    let config = json!({"mcpServers": {"elicit": {
        "command": "python3",
        "args": [crate::support::repo_root().join("fixtures/mcp/elicit_server.py")],
        "env": {"MCP_ELICIT_LOG": log},
    }}})
    .to_string();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "mcp__elicit__ask",
                &json!({"question": "What is your name?"}),
            )],
        ),
        MockResponse::text("Fine."),
    ]);
    let mut args = hooks_only();
    args.extend(["--mcp-config".into(), config.into()]);
    let mut client = AcpClient::start_with(&ctx, &mock, &args, &[]);
    let init = client.request(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"elicitation": {"form": {}}}}),
    );
    client.response(init);
    let new = client.request(
        "session/new",
        json!({"cwd": ctx.project(), "mcpServers": []}),
    );
    let session = client.response(new)["result"]["sessionId"].clone();
    let prompt = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "ask me"}]}),
    );
    let question = client.until(|m| {
        is_method(m, "elicitation/create") || is_method(m, "session/request_permission")
    });
    assert!(is_method(&question, "elicitation/create"), "{question}");
    let params = &question["params"];
    assert_eq!(params["mode"], "form");
    assert_eq!(params["sessionId"], session);
    assert_eq!(
        params["message"],
        "MCP server elicit asks: What is your name?"
    );
    let schema = &params["requestedSchema"];
    assert_eq!(schema["required"], json!(["name"]));
    assert_eq!(schema["properties"]["name"]["type"], "string");
    assert_eq!(schema["properties"]["ok"]["type"], "boolean");
    client.respond(
        &question,
        json!({"action": "accept", "content": {"name": "Ada", "ok": true}}),
    );
    let done = client.response(prompt);
    assert_eq!(done["result"]["stopReason"], "end_turn");
    let (status, wire) = client.finish();
    assert!(status.success());
    assert!(
        !wire
            .iter()
            .any(|line| line.contains("session/request_permission")),
        "no permission request stood in for the form"
    );
    // What the server got back.
    let answers: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["dir"] == "in" && line["msg"]["id"] == 1001)
        .map(|line| line["msg"]["result"].clone())
        .collect();
    assert_eq!(
        answers,
        [json!({"action": "accept", "content": {"name": "Ada", "ok": true}})]
    );
}
