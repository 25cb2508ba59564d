//! Prompts as Claude Code treats them: `@path` mentions
//! reach hooks as typed while the model gets the file, and lines typed
//! while a turn runs go to that turn's next model request.

use dsh_provider::mock::{MockResponse, MockToolCall};
use rexpect::process::WaitStatus;
use serde_json::{Value, json};

use crate::cli_headless::{dsh, events, mock, of_type, session_logs};
use crate::cli_interactive::{expect, spawn_dsh_with};
use crate::support::TestContext;

const FILE_TEXT: &str = "the secret word is fennel";

/// A user-level UserPromptSubmit hook that appends its stdin to
/// `prompt-inputs.jsonl` in the project.
fn install_prompt_recorder(ctx: &TestContext) {
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "UserPromptSubmit": [ { "hooks": [ { "type": "command", "command": "cat >> prompt-inputs.jsonl; echo >> prompt-inputs.jsonl" } ] } ] } }"#,
    )
    .unwrap();
}

fn recorded_prompts(ctx: &TestContext) -> Vec<String> {
    let text = std::fs::read_to_string(ctx.project().join("prompt-inputs.jsonl"))
        .expect("the UserPromptSubmit hook ran");
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let input: Value = serde_json::from_str(line).unwrap();
            input["prompt"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// Every message of a request as (role, content).
fn messages(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_owned(),
                m["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_mention_reaches_hooks_as_typed_and_the_model_as_context() {
    let ctx = TestContext::new();
    install_prompt_recorder(&ctx);
    std::fs::write(ctx.project().join("notes.txt"), format!("{FILE_TEXT}\n")).unwrap();
    let mock = mock(vec![MockResponse::text("Fennel, then.")]);
    let output = dsh(&ctx, &mock)
        .args(["-p", "what does @notes.txt say?"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );

    // The hook saw the prompt as typed, without the file.
    assert_eq!(recorded_prompts(&ctx), ["what does @notes.txt say?"]);
    // The model got the typed prompt and, after it, the file.
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let sent = messages(&requests[0]);
    let user = sent
        .iter()
        .position(|(role, content)| role == "user" && content == "what does @notes.txt say?")
        .unwrap_or_else(|| panic!("the typed prompt in {sent:?}"));
    let file = sent
        .iter()
        .position(|(_, content)| content.contains(FILE_TEXT) && content.contains("notes.txt"))
        .unwrap_or_else(|| panic!("the file in {sent:?}"));
    assert!(user < file, "{sent:?}");
    // Durably: a context message naming the mention.
    let events = events(&session_logs(&ctx)[0]);
    let users = of_type(&events, "user/message");
    assert_eq!(users[0]["content"], "what does @notes.txt say?");
    let contexts = of_type(&events, "context/message");
    assert!(
        contexts.iter().any(|c| c["source"] == "mention:notes.txt"
            && c["content"].as_str().unwrap().contains(FILE_TEXT)),
        "{contexts:?}"
    );
}

#[test]
fn a_line_typed_during_a_tool_reaches_the_next_request_of_the_same_turn() {
    let ctx = TestContext::new();
    install_prompt_recorder(&ctx);
    std::fs::write(ctx.project().join("notes.txt"), format!("{FILE_TEXT}\n")).unwrap();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "Napping first.",
            vec![MockToolCall::new(
                "call_1",
                "bash",
                &json!({ "command": "sleep 3" }),
            )],
        ),
        MockResponse::text("Rested, and noted."),
    ]);
    let mut session = spawn_dsh_with(&ctx, &mock, &[], &["--allowedTools", "Bash(sleep:*)"]);
    expect(&mut session, "Ctrl-D exits", "the banner");
    expect(&mut session, "> ", "the prompt");
    session.send_line("nap, then read @notes.txt").unwrap();
    expect(&mut session, "$ sleep 3", "the running tool");
    session.send_line("also water the plants").unwrap();
    expect(
        &mut session,
        "queued for the running turn: also water the plants",
        "the queued notice",
    );
    expect(&mut session, "Rested, and noted.", "the model's answer");
    expect(&mut session, "> ", "the prompt after the turn");
    session.send_control('d').unwrap();
    session.exp_eof().expect("dsh exits on Ctrl-D");
    let status = session.process().wait().expect("wait for dsh");
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "exit status {status:?}"
    );

    // One prompt, as typed; the queued line is no prompt of its own.
    assert_eq!(recorded_prompts(&ctx), ["nap, then read @notes.txt"]);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let first = messages(&requests[0]);
    assert!(
        first.iter().any(|(_, content)| content.contains(FILE_TEXT)),
        "{first:?}"
    );
    assert!(
        !first.iter().any(|(_, content)| content.contains("water")),
        "{first:?}"
    );
    let second = messages(&requests[1]);
    let (role, content) = second.last().unwrap();
    assert_eq!(
        (role.as_str(), content.as_str()),
        ("user", "also water the plants"),
        "{second:?}"
    );
    let events = events(&session_logs(&ctx)[0]);
    assert_eq!(of_type(&events, "turn/end").len(), 1, "no extra turn");
    let steering = of_type(&events, "steering/message");
    assert_eq!(steering.len(), 1, "{steering:?}");
    assert_eq!(steering[0]["content"], "also water the plants");
}

#[test]
fn a_replayed_fixture_prompt_attaches_its_mentions_too() {
    let ctx = TestContext::new();
    install_prompt_recorder(&ctx);
    std::fs::write(ctx.project().join("notes.txt"), format!("{FILE_TEXT}\n")).unwrap();
    std::fs::write(
        ctx.project().join("mention.json"),
        r#"{"prompts": ["what does @notes.txt say?"], "model": [{"text": "Fennel."}]}"#,
    )
    .unwrap();
    let out = ctx.home().join("replayed.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg("mention.json")
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(recorded_prompts(&ctx), ["what does @notes.txt say?"]);
    let events = events(&out);
    let users = of_type(&events, "user/message");
    assert_eq!(users[0]["content"], "what does @notes.txt say?");
    let contexts = of_type(&events, "context/message");
    assert!(
        contexts.iter().any(|c| c["source"] == "mention:notes.txt"
            && c["content"].as_str().unwrap().contains(FILE_TEXT)),
        "{contexts:?}"
    );
}

#[test]
fn piped_lines_stay_one_turn_each() {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "bash",
                &json!({ "command": "sleep 1" }),
            )],
        ),
        MockResponse::text("One."),
        MockResponse::text("Two."),
    ]);
    let output = dsh(&ctx, &mock)
        .args(["--allowedTools", "Bash(sleep:*)"])
        .write_stdin("take a nap\nsecond prompt\n")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    let third = messages(&requests[2]);
    assert_eq!(
        third.last().unwrap(),
        &("user".to_owned(), "second prompt".to_owned())
    );
    let events = events(&session_logs(&ctx)[0]);
    assert_eq!(of_type(&events, "turn/end").len(), 2);
    assert!(of_type(&events, "steering/message").is_empty());
}
