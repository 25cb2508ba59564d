//! Replays are reproducible and bounded: two `dsh replay --session-id S`
//! runs of one fixture write logs that differ only in times, and a hook's
//! long or binary output goes to a spill file named in the log instead of
//! into the log.

use serde_json::Value;

use crate::support::TestContext;

/// Claude Code hooks on several events, one of them printing far more than
/// the log keeps inline (and NUL bytes on stderr).
const SETTINGS: &str = r#"{ "hooks": {
  "UserPromptSubmit": [ { "hooks": [ { "type": "command", "command": "echo context from the prompt hook" } ] } ],
  "PreToolUse": [ { "matcher": "Bash", "hooks": [
    { "type": "command", "command": "cat > /dev/null; echo pre-one" },
    { "type": "command", "command": "cat > /dev/null; head -c 300000 /dev/zero | tr '\\0' y; head -c 50000 /dev/zero >&2" } ] } ],
  "PostToolUse": [ { "hooks": [ { "type": "command", "command": "cat > /dev/null; echo post" } ] } ],
  "SubagentStop": [ { "hooks": [ { "type": "command", "command": "cat > /dev/null; true" } ] } ],
  "Stop": [ { "hooks": [ { "type": "command", "command": "cat > /dev/null; true" } ] } ]
} }"#;

/// Two prompts, tool calls in both, and a subagent (its id is generated).
/// Calls of one reply may run at once, and PostToolUse fires as each one
/// finishes; a replay repeats its log when a batch's calls finish in the
/// same order. The first reply's second call is a `cd`, which never
/// overlaps another call (it may move the kept directory), so both runs
/// see one order without depending on timing.
const FIXTURE: &str = r#"{
  "description": "generated ids in every place they occur",
  "prompts": ["first", "second"],
  "model": [
    { "tool_calls": [ { "name": "bash", "arguments": { "command": "echo one" } },
                      { "name": "bash", "arguments": { "command": "cd . && echo two" } } ] },
    { "tool_calls": [ { "name": "agent", "arguments": { "description": "sub", "prompt": "run echo sub", "subagent_type": "general-purpose" } } ] },
    { "tool_calls": [ { "name": "bash", "arguments": { "command": "echo sub" } } ] },
    { "text": "sub done" },
    { "text": "first done" },
    { "tool_calls": [ { "name": "bash", "arguments": { "command": "echo three" } } ] },
    { "text": "second done" }
  ]
}"#;

/// Runs the replay with session id `s-fixed` and returns the log's lines
/// with the times taken out.
fn run(ctx: &TestContext) -> Vec<Value> {
    let out = ctx.home().join("replay.jsonl");
    let output = ctx
        .dsh()
        .args(["replay", "fixture.json", "--session-id", "s-fixed", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|line| {
            let mut event: Value = serde_json::from_str(line).unwrap();
            drop_times(&mut event);
            event
        })
        .collect()
}

/// Takes out every time, at any depth (a hook's input carries the tool's
/// duration too).
fn drop_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for key in ["ts", "duration_ms", "durationMs", "timestamp"] {
                map.remove(key);
            }
            map.values_mut().for_each(drop_times);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_times),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

#[test]
fn two_replays_with_one_session_id_write_the_same_log_but_for_times() {
    let ctx = TestContext::new();
    std::fs::create_dir_all(ctx.project().join(".claude")).unwrap();
    std::fs::write(ctx.project().join(".claude/settings.json"), SETTINGS).unwrap();
    std::fs::write(ctx.project().join("fixture.json"), FIXTURE).unwrap();

    let first = run(&ctx);
    let second = run(&ctx);

    // The generated ids are there, and distinct within a run.
    let executions: Vec<&str> = of_type(&first, "tool/call")
        .iter()
        .map(|e| e["execution_id"].as_str().unwrap())
        .collect();
    assert_eq!(executions.len(), 5, "{first:#?}");
    let unique: std::collections::HashSet<&&str> = executions.iter().collect();
    assert_eq!(unique.len(), executions.len(), "{executions:?}");
    let invocations = of_type(&first, "hook/invoked");
    assert!(invocations.len() >= 10, "{}", invocations.len());
    assert!(
        first.iter().any(|e| e["agent_id"].is_string()),
        "a subagent ran"
    );

    assert_eq!(first.len(), second.len());
    for (a, b) in first.iter().zip(&second) {
        pretty_assertions::assert_eq!(a, b);
    }
}

#[test]
fn long_and_binary_hook_output_is_spilled_not_kept_in_the_log() {
    let ctx = TestContext::new();
    std::fs::create_dir_all(ctx.project().join(".claude")).unwrap();
    std::fs::write(ctx.project().join(".claude/settings.json"), SETTINGS).unwrap();
    std::fs::write(ctx.project().join("fixture.json"), FIXTURE).unwrap();
    let events = run(&ctx);
    let log_len = std::fs::metadata(ctx.home().join("replay.jsonl"))
        .unwrap()
        .len();
    // Four chatty runs of 300 kB stdout and 50 kB of NULs (300 kB as JSON).
    assert!(log_len < 200_000, "the log is {log_len} bytes");

    let spill_dir = ctx.home().join("replay.hook-output");
    let chatty: Vec<&Value> = of_type(&events, "hook/result")
        .into_iter()
        .filter(|e| {
            e["stdout"]
                .as_str()
                .is_some_and(|s| s.contains("the whole stdout is in"))
        })
        .collect();
    assert_eq!(chatty.len(), 4, "one per bash call");
    for result in chatty {
        let id = result["invocation_id"].as_str().unwrap();
        let stdout = result["stdout"].as_str().unwrap();
        let file = spill_dir.join(format!("{id}.stdout"));
        assert!(stdout.starts_with("yyyy"), "{stdout}");
        assert!(
            stdout.ends_with(&format!(
                "of 300000 bytes; the whole stdout is in {}]",
                file.display()
            )),
            "{stdout}"
        );
        let spilled = std::fs::read(&file).unwrap();
        assert_eq!(spilled.len(), 300_000);
        assert!(spilled.iter().all(|&b| b == b'y'));
        let stderr = result["stderr"].as_str().unwrap();
        assert!(stderr.contains("the whole stderr is in"), "{stderr}");
        let nuls = std::fs::read(spill_dir.join(format!("{id}.stderr"))).unwrap();
        assert_eq!(nuls.len(), 50_000, "NULs are stored as bytes");
        assert!(nuls.iter().all(|&b| b == 0));
        // What the hook decided is still in the log whole.
        assert!(result["decision"].is_object(), "{result}");
    }
}
