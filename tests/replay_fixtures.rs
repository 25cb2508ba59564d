//! `dsh replay` over every plugin-free fixture: one snapshot of the session
//! log and one of the model requests per fixture.

use crate::support::{TestContext, events_of, fixture, normalize_jsonl};

struct Replayed {
    log: String,
    requests: String,
    stderr: String,
    ctx: TestContext,
}

fn replay(name: &str, extra: &[&str]) -> Replayed {
    let ctx = TestContext::new();
    let requests_path = ctx.home().join("requests.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(fixture(name))
        .args(["--session-id", "test-session", "--requests-out"])
        .arg(&requests_path)
        .args(extra)
        .output()
        .expect("dsh runs");
    assert!(
        output.status.success(),
        "dsh replay {name} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let log = normalize_jsonl(&String::from_utf8_lossy(&output.stdout), &ctx);
    let requests = normalize_jsonl(
        &std::fs::read_to_string(&requests_path).expect("requests"),
        &ctx,
    );
    let stderr = ctx.redact(&String::from_utf8_lossy(&output.stderr));
    Replayed {
        log,
        requests,
        stderr,
        ctx,
    }
}

macro_rules! fixture_snapshots {
    ($($test:ident => $file:literal $(, [$($arg:literal),*])?;)*) => {
        $(
            #[test]
            fn $test() {
                let replayed = replay($file, &[$($($arg),*)?]);
                insta::assert_snapshot!(concat!(stringify!($test), "__log"), replayed.log);
                insta::assert_snapshot!(concat!(stringify!($test), "__requests"), replayed.requests);
            }
        )*
    };
}

fixture_snapshots! {
    plain_answer => "plain_answer.json";
    multi_step_tools => "multi_step_tools.json";
    parallel_calls_one_step => "parallel_calls_one_step.json";
    failing_bash => "failing_bash.json";
    unknown_tool => "unknown_tool.json";
    invalid_arguments => "invalid_arguments.json";
    file_round_trip => "file_round_trip.json";
    search_tools => "search_tools.json";
    max_steps => "max_steps.json", ["--max-steps", "3"];
    model_error => "model_error.json";
    script_runs_out => "script_runs_out.json";
}

#[test]
fn file_round_trip_changes_the_file_on_disk() {
    let replayed = replay("file_round_trip.json", &[]);
    let text = std::fs::read_to_string(replayed.ctx.project().join("notes.txt")).unwrap();
    assert_eq!(text, "alpha\ngamma\n");
}

#[test]
fn results_stay_adjacent_to_their_calls_in_call_order() {
    let replayed = replay("parallel_calls_one_step.json", &[]);
    let results = events_of(&replayed.log, "tool/result");
    let contents: Vec<&str> = results
        .iter()
        .map(|r| r["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents, vec!["one", "two", "three"]);
    let request = replayed.requests.lines().nth(1).unwrap();
    let request: serde_json::Value = serde_json::from_str(request).unwrap();
    let roles: Vec<&str> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        vec!["system", "user", "assistant", "tool", "tool", "tool"]
    );
}

#[test]
fn max_steps_ends_the_turn_with_max_steps() {
    let replayed = replay("max_steps.json", &["--max-steps", "3"]);
    let end = &events_of(&replayed.log, "turn/end")[0];
    assert_eq!(end["reason"], "max_steps");
    assert_eq!(replayed.requests.lines().count(), 3);
}

#[test]
fn a_model_error_ends_the_turn_error_and_the_next_send_runs() {
    let replayed = replay("model_error.json", &[]);
    let ends = events_of(&replayed.log, "turn/end");
    assert_eq!(ends[0]["reason"], "error");
    assert!(ends[0]["message"].as_str().unwrap().contains("overloaded"));
    assert_eq!(ends[1]["reason"], "completed");
}

#[test]
fn a_script_that_runs_out_names_the_fixture_and_step() {
    let replayed = replay("script_runs_out.json", &[]);
    let end = &events_of(&replayed.log, "turn/end")[0];
    assert_eq!(end["reason"], "error");
    let message = end["message"].as_str().unwrap();
    assert!(message.contains("script_runs_out.json"), "{message}");
    assert!(message.contains("turn 1, step 2"), "{message}");
    assert!(
        replayed.stderr.contains("ran out of model steps"),
        "{}",
        replayed.stderr
    );
}

#[test]
fn replaying_twice_gives_identical_logs_after_redaction() {
    for name in [
        "multi_step_tools.json",
        "file_round_trip.json",
        "failing_bash.json",
    ] {
        let first = replay(name, &[]);
        let second = replay(name, &[]);
        pretty_assertions::assert_eq!(first.log, second.log, "{name}");
        pretty_assertions::assert_eq!(first.requests, second.requests, "{name}");
    }
}

#[test]
fn every_fixture_parses_and_has_a_description() {
    let dir = crate::support::repo_root().join("fixtures");
    let mut count = 0;
    for entry in walk_json(&dir) {
        if entry.components().any(|part| part.as_os_str() == "bad") {
            continue; // malformed on purpose (hook-tooling error tests)
        }
        let text = std::fs::read_to_string(&entry).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        if value.get("prompts").is_none() {
            continue; // not a transcript (e.g. hook settings)
        }
        let fixture = dsh_agent::Fixture::load(&entry).unwrap_or_else(|err| panic!("{err}"));
        assert!(
            !fixture.description.is_empty(),
            "{} has no description",
            entry.display()
        );
        count += 1;
    }
    assert!(count >= 15, "only {count} fixtures");
}

fn walk_json(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk_json(&path));
        } else if path.extension().is_some_and(|ext| ext == "json") {
            out.push(path);
        }
    }
    out
}
