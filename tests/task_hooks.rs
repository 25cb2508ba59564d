//! Claude Code's TaskCreated and TaskCompleted hooks fired by dsh's task
//! tools through `dsh replay`: a blocking TaskCreated rolls the task back
//! and the model reads the hook's feedback; TaskCompleted gets its stdin.

use serde_json::{Value, json};

use crate::cli_headless::events;
use crate::support::TestContext;

/// A project whose TaskCreated hook records every stdin and refuses a task
/// whose payload mentions `forbidden` (exit 2), and whose TaskCompleted
/// hook records its stdin.
fn project() -> TestContext {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let created = r#"p=$(cat); printf '%s\n' \"$p\" >> \"$CLAUDE_PROJECT_DIR/created.jsonl\"; case \"$p\" in *forbidden*) echo 'no forbidden tasks' >&2; exit 2;; esac"#;
    std::fs::write(
        claude.join("settings.json"),
        format!(
            r#"{{"hooks": {{
                "TaskCreated": [{{"hooks": [{{"type": "command", "command": "{created}"}}]}}],
                "TaskCompleted": [{{"hooks": [{{"type": "command",
                    "command": "cat > \"$CLAUDE_PROJECT_DIR/completed.json\""}}]}}]
            }}}}"#
        ),
    )
    .unwrap();
    ctx
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn a_blocking_task_created_rolls_back_and_task_completed_gets_its_payload() {
    let ctx = project();
    let fixture = ctx.home().join("fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "prompts": ["Plan the work"],
            "model": [
                {"tool_calls": [{"id": "call_bad", "name": "task_create", "arguments":
                    {"subject": "forbidden work", "description": "not allowed"}}]},
                {"tool_calls": [{"id": "call_good", "name": "task_create", "arguments":
                    {"subject": "Write tests", "description": "Cover the hooks"}}]},
                {"tool_calls": [{"id": "call_done", "name": "task_update", "arguments":
                    {"taskId": "1", "status": "completed"}}]},
                {"tool_calls": [{"id": "call_list", "name": "task_list", "arguments": {}}]},
                {"text": "DONE"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let out = ctx.home().join("session.jsonl");
    let requests = ctx.home().join("requests.jsonl");
    ctx.dsh()
        .arg("replay")
        .arg(&fixture)
        .args(["--session-id", "task-session", "--out"])
        .arg(&out)
        .arg("--requests-out")
        .arg(&requests)
        .assert()
        .success();

    let log = events(&out);
    let result = |call: &str| -> Value {
        log.iter()
            .find(|e| e["type"] == "tool/result" && e["call_id"] == call)
            .unwrap_or_else(|| panic!("no result for {call}: {log:?}"))
            .clone()
    };
    // The blocked creation failed with the hook's stderr as its text.
    let bad = result("call_bad");
    assert_eq!(bad["is_error"], true, "{bad}");
    assert!(bad.to_string().contains("no forbidden tasks"), "{bad}");
    // Rolled back: the next task takes id 1, and is the only one listed.
    let good = result("call_good");
    assert_ne!(good["is_error"], true, "{good}");
    assert!(good.to_string().contains("Task #1"), "{good}");
    let listed = result("call_list").to_string();
    assert!(listed.contains("Write tests"), "{listed}");
    assert!(!listed.contains("forbidden"), "{listed}");

    // The model saw the feedback in the tool result of its next request.
    let requests = std::fs::read_to_string(&requests).unwrap();
    let second = requests.lines().nth(1).unwrap();
    assert!(second.contains("no forbidden tasks"), "{second}");

    // Both TaskCreated payloads, in Claude Code's fields.
    let created = lines(&ctx.project().join("created.jsonl"));
    assert_eq!(created.len(), 2);
    assert_eq!(created[0]["hook_event_name"], "TaskCreated");
    assert_eq!(created[0]["task_subject"], "forbidden work");
    assert_eq!(created[1]["task_id"], "1");
    assert_eq!(created[1]["task_description"], "Cover the hooks");
    assert_eq!(created[1]["session_id"], "task-session");

    // TaskCompleted's stdin.
    let completed: Value = serde_json::from_str(
        &std::fs::read_to_string(ctx.project().join("completed.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(completed["hook_event_name"], "TaskCompleted");
    assert_eq!(completed["task_id"], "1");
    assert_eq!(completed["task_subject"], "Write tests");
    assert_eq!(completed["task_description"], "Cover the hooks");
    assert!(
        completed["transcript_path"].as_str().is_some(),
        "{completed}"
    );

    // hook/* records: an invoked and a result for each firing, the block
    // recorded as one.
    let hook_results: Vec<&Value> = log.iter().filter(|e| e["type"] == "hook/result").collect();
    let invoked = log.iter().filter(|e| e["type"] == "hook/invoked").count();
    assert_eq!(invoked, 3, "{log:?}");
    assert_eq!(hook_results.len(), 3, "{hook_results:?}");
    assert_eq!(hook_results[0]["exit_code"], 2);
    assert_eq!(hook_results[0]["decision"]["effect"], "block");
    assert_eq!(hook_results[1]["decision"]["effect"], "none");
    let names: Vec<&str> = log
        .iter()
        .filter(|e| e["type"] == "hook/invoked")
        .map(|e| e["event"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["TaskCreated", "TaskCreated", "TaskCompleted"]);
    assert!(
        log.iter()
            .filter(|e| e["type"] == "hook/invoked")
            .all(|e| e["seam"] == "task")
    );
}

/// `dsh hooks check` knows both events: fired, so no `event-not-fired`
/// warning, and exit 2 blocks on them.
#[test]
fn hooks_check_knows_the_task_events() {
    let ctx = project();
    let output = ctx
        .dsh()
        .current_dir(ctx.project())
        .args([
            "hooks",
            "check",
            ".claude/settings.json",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{doc}");
    let codes: Vec<&str> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert!(!codes.contains(&"event-not-fired"), "{doc}");
    assert!(!codes.contains(&"unknown-event"), "{doc}");
}
