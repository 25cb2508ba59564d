//! End-to-end conformance of the Gemini dialect's model events (BeforeModel,
//! BeforeToolSelection, AfterModel) against the Gemini CLI 0.61 captures
//! `bm_deny_exit2`, `bm_modify_request`, `am_replace_response`,
//! `bts_allowed_names` and `a_streaming_chunks`, plus one scenario the
//! captures do not show but PROTOCOL.md §6 describes from the CLI source
//! (`bm_deny_synthetic_response`: a deny with `llm_response`).
//!
//! Each scenario under `fixtures/gemini/model/` holds a `dsh replay` fixture
//! (the capture's prompt and mock model replies, in dsh's tool names) and a
//! project whose `.gemini/settings.json` configures the capture's hooks.
//! Every hook is `fixtures/gemini/model/hook.sh LABEL`, which keeps the stdin
//! it read and answers as the capture's hook did (`behaviors/`). Each test
//! runs the real `dsh replay` and checks:
//!
//! 1. which hooks fired, in order, and their stdin: key order, the exact
//!    bytes the hook read equal the `hook/invoked` input (compact JSON, no
//!    trailing newline), and the values the capture shows;
//! 2. what the model was sent (`--requests-out`);
//! 3. how the turn ended.
//!
//! ## Normalized or not expressible (with the reason)
//!
//! | field | dsh | why |
//! |---|---|---|
//! | `session_id`, `transcript_path`, `cwd`, `timestamp` | not compared | per-run values (the other conformance suite compares them) |
//! | `llm_request.model` | dsh's model name | the scripted model's name vs `gemini-3.8-flash` |
//! | `llm_request.messages[0]` | the prompt alone | Gemini prepends its `<session_context>` block to the first user content; dsh has no such block |
//! | `llm_request.config` | `{}` | dsh's request has no sampling settings; BeforeModel's `config` is not applied (warned) |
//! | `llm_response.usageMetadata` | zeros | the scripted model reports no usage |
//! | AfterModel per chunk | once per reply, `finishReason: "STOP"` | dsh hands hooks the complete reply (a_streaming_chunks: Gemini fired 4 times) |
//! | am_replace_response's second replacement (`REDACTED-B`, chunk 2) | not scripted | one chunk per reply: the hook's first answer replaces the whole first reply |
//! | bm_deny_exit2's AfterAgent (`[no response text]`) | does not fire | the turn ends `stopped`; AfterAgent runs at a natural stop |
//! | bts_allowed_names' tool declarations | only the allowed tools are offered | dsh has no function-calling mode; Gemini sends all 15 and `toolConfig` |
//! | the model router's side request, Gemini's system instruction | absent | Gemini internals; dsh sends its own system prompt first |

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{TestContext, copy_tree, json_lines, repo_root};

const SESSION_ID: &str = "gemini-model-conformance";

fn scenarios() -> PathBuf {
    repo_root().join("fixtures/gemini/model")
}

struct Replayed {
    log: Vec<Value>,
    requests: Vec<Value>,
    gemini_dir: PathBuf,
    _ctx: TestContext,
}

fn replay(name: &str) -> Replayed {
    let ctx = TestContext::new();
    let scenario = scenarios().join(name);
    copy_tree(&scenario.join("project"), &ctx.project());
    let gemini_dir = ctx.project().join(".gemini");
    std::fs::copy(scenarios().join("hook.sh"), gemini_dir.join("hook.sh")).unwrap();
    // Trusted as in the captures: Gemini runs no hook in an untrusted folder.
    std::fs::create_dir_all(ctx.home().join(".gemini")).unwrap();
    std::fs::write(
        ctx.home().join(".gemini/trustedFolders.json"),
        json!({ ctx.project().display().to_string(): "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    let requests_path = ctx.home().join("requests.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(scenario.join("fixture.json"))
        .args(["--session-id", SESSION_ID, "--requests-out"])
        .arg(&requests_path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "dsh replay {name} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Replayed {
        log: json_lines(&String::from_utf8_lossy(&output.stdout)),
        requests: json_lines(&std::fs::read_to_string(&requests_path).unwrap_or_default()),
        gemini_dir,
        _ctx: ctx,
    }
}

impl Replayed {
    fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.log.iter().filter(|e| e["type"] == kind).collect()
    }

    /// The Gemini hooks that fired, in order: (event, label, stdin).
    fn fired(&self) -> Vec<(String, String, Value)> {
        self.of_type("hook/invoked")
            .into_iter()
            .filter(|e| e["dialect"] == "gemini")
            .map(|e| {
                let command = e["command"].as_str().unwrap_or_default();
                let label = command.rsplit(' ').next().unwrap_or_default().to_owned();
                let input = match &e["input"] {
                    Value::String(text) => serde_json::from_str(text).unwrap(),
                    other => other.clone(),
                };
                (e["event"].as_str().unwrap().to_owned(), label, input)
            })
            .collect()
    }

    fn events_fired(&self) -> Vec<String> {
        self.fired()
            .into_iter()
            .map(|(event, _, _)| event)
            .collect()
    }

    /// The stdin of call `n` (1-based) of the hook labelled `label`.
    fn stdin(&self, label: &str, n: usize) -> Value {
        let (_, _, input) = self
            .fired()
            .into_iter()
            .filter(|(_, l, _)| l == label)
            .nth(n - 1)
            .unwrap_or_else(|| panic!("{label} call {n} did not fire"));
        // What the hook read is, byte for byte, what the log says was sent.
        let read = std::fs::read_to_string(self.gemini_dir.join(format!("runs/{label}.{n}.stdin")))
            .unwrap();
        assert_eq!(
            read,
            serde_json::to_string(&input).unwrap(),
            "{label} call {n}"
        );
        assert!(!read.ends_with('\n'));
        input
    }

    fn turn_end(&self) -> &Value {
        self.of_type("turn/end")[0]
    }

    /// The request's messages without dsh's system prompt.
    fn sent(&self, index: usize) -> Vec<Value> {
        self.requests[index]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .skip(1)
            .cloned()
            .collect()
    }
}

fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

/// The common keys, then the event's own, in Gemini's order.
fn assert_keys(input: &Value, own: &[&str]) {
    let mut expected = vec![
        "session_id",
        "transcript_path",
        "cwd",
        "hook_event_name",
        "timestamp",
    ];
    expected.extend_from_slice(own);
    assert_eq!(keys(input), expected);
    assert_eq!(
        keys(&input["llm_request"]),
        vec!["model", "messages", "config"]
    );
    assert_eq!(input["llm_request"]["config"], json!({}));
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn model(text: &str) -> Value {
    json!({"role": "model", "content": text})
}

/// The hook-facing reply, as Gemini shows a reply's last chunk.
fn response(text: &str) -> Value {
    let parts = if text.is_empty() {
        json!([])
    } else {
        json!([text])
    };
    json!({
        "text": text,
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 0, "candidatesTokenCount": 0, "totalTokenCount": 0}
    })
}

#[test]
fn bm_deny_exit2_blocks_the_request_without_a_synthetic_response() {
    let run = replay("bm_deny_exit2");
    assert_eq!(
        run.events_fired(),
        vec!["BeforeAgent", "BeforeModel", "SessionEnd"],
        "no AfterModel (nothing was sent) and no AfterAgent (not a natural stop)"
    );
    let input = run.stdin("bm", 1);
    assert_keys(&input, &["llm_request"]);
    assert_eq!(input["hook_event_name"], "BeforeModel");
    assert_eq!(
        input["llm_request"]["messages"],
        json!([user("Just say something")])
    );
    assert!(run.requests.is_empty(), "the model was not asked");
    assert!(
        run.of_type("assistant/message").is_empty(),
        "no synthetic reply"
    );
    let end = run.turn_end();
    assert_eq!(end["reason"], "stopped");
    assert_eq!(
        end["message"],
        "Agent execution blocked: BM-EXIT2: model call refused"
    );
    let notes = run.of_type("seam/note");
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0]["kind"], "request_blocked");
}

#[test]
fn bm_modify_request_rewrites_one_request_and_keeps_the_history() {
    let run = replay("bm_modify_request");
    assert_eq!(
        run.events_fired(),
        vec![
            "BeforeAgent",
            "BeforeModel",
            "BeforeToolSelection",
            "AfterModel",
            "BeforeModel",
            "BeforeToolSelection",
            "AfterModel",
            "AfterAgent",
        ]
    );
    let first = run.stdin("bm", 1);
    assert_keys(&first, &["llm_request"]);
    assert_eq!(
        first["llm_request"]["messages"],
        json!([user("Please run echo hi")])
    );
    // Later hooks of the same request see it rewritten (capture: BTS and
    // AfterModel call 1).
    let rewritten = json!([user("REWRITTEN-PROMPT by BeforeModel")]);
    let bts = run.stdin("rec_BeforeToolSelection", 1);
    assert_keys(&bts, &["llm_request"]);
    assert_eq!(bts["llm_request"]["messages"], rewritten);
    let after = run.stdin("rec_AfterModel", 1);
    assert_keys(&after, &["llm_request", "llm_response"]);
    assert_eq!(after["llm_request"]["messages"], rewritten);
    assert_eq!(after["llm_response"], response("I'll run it."));
    // The second request is built from the history, which is unchanged.
    let second = run.stdin("bm", 2);
    assert_eq!(
        second["llm_request"]["messages"],
        json!([user("Please run echo hi"), model("I'll run it.")])
    );
    assert_eq!(
        run.stdin("rec_AfterModel", 2)["llm_response"],
        response("FINAL: all done.")
    );
    // What the model saw.
    assert_eq!(
        run.sent(0),
        vec![json!({"role": "user", "content": "REWRITTEN-PROMPT by BeforeModel"})]
    );
    let second_sent = run.sent(1);
    assert_eq!(
        second_sent[0],
        json!({"role": "user", "content": "Please run echo hi"})
    );
    assert_eq!(second_sent[1]["content"], "I'll run it.");
    assert_eq!(second_sent[2]["role"], "tool");
    assert_eq!(
        run.stdin("rec_AfterAgent", 1)["prompt_response"],
        "I'll run it.\nFINAL: all done."
    );
    assert_eq!(run.turn_end()["reason"], "completed");
    let notes: Vec<&Value> = run.of_type("seam/note");
    assert_eq!(notes.len(), 1, "one request replaced");
    assert_eq!(notes[0]["kind"], "request_replaced");
}

#[test]
fn am_replace_response_changes_what_is_shown_not_the_history() {
    let run = replay("am_replace_response");
    assert_eq!(
        run.events_fired(),
        vec!["BeforeAgent", "AfterModel", "AfterModel", "AfterAgent"]
    );
    let first = run.stdin("am", 1);
    assert_keys(&first, &["llm_request", "llm_response"]);
    assert_eq!(
        first["llm_response"],
        response("ORIGINAL TEXT with secret-1234")
    );
    // The call in the replaced reply still ran.
    assert_eq!(run.of_type("tool/result").len(), 1);
    // The model gets its original text back.
    assert_eq!(run.sent(1)[1]["content"], "ORIGINAL TEXT with secret-1234");
    let replies = run.of_type("assistant/message");
    assert_eq!(replies[0]["content"], "ORIGINAL TEXT with secret-1234");
    // AfterAgent sees what was shown.
    assert_eq!(
        run.stdin("rec_AfterAgent", 1)["prompt_response"],
        "REDACTED-A \nFINAL: all done."
    );
    assert_eq!(run.turn_end()["reason"], "completed");
}

#[test]
fn bts_allowed_names_unions_the_names_and_offers_only_those_tools() {
    let run = replay("bts_allowed_names");
    let input = run.stdin("bts1", 1);
    assert_keys(&input, &["llm_request"]);
    assert_eq!(
        input,
        run.stdin("bts2", 1),
        "both hooks read the same stdin"
    );
    // read_file ∪ glob, as dsh's tools, for every request.
    for request in &run.requests {
        let mut tools: Vec<&str> = request["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        tools.sort_unstable();
        assert_eq!(tools, vec!["glob", "read"]);
    }
    assert_eq!(run.requests.len(), 2);
    // The model called a tool outside the list anyway: it still runs, as
    // in Gemini (the capture's run_shell_command call ran).
    assert_eq!(
        run.events_fired(),
        vec![
            "BeforeToolSelection",
            "BeforeToolSelection",
            "BeforeTool",
            "BeforeToolSelection",
            "BeforeToolSelection",
            "AfterAgent",
        ]
    );
    assert_eq!(
        run.stdin("rec_BeforeTool", 1)["tool_name"],
        "run_shell_command"
    );
    assert_eq!(run.of_type("tool/result")[0]["content"], "hi");
    assert_eq!(run.turn_end()["reason"], "completed");
}

#[test]
fn a_streaming_chunks_after_model_fires_once_per_reply() {
    let run = replay("a_streaming_chunks");
    assert_eq!(
        run.events_fired(),
        vec!["BeforeModel", "AfterModel", "AfterAgent"]
    );
    let after = run.stdin("rec_AfterModel", 1);
    assert_keys(&after, &["llm_request", "llm_response"]);
    assert_eq!(
        after["llm_response"],
        response("Once upon a time there was a tiny oracle.")
    );
    assert_eq!(
        run.stdin("rec_AfterAgent", 1)["prompt_response"],
        "Once upon a time there was a tiny oracle."
    );
    assert_eq!(run.turn_end()["reason"], "completed");
}

/// Not a capture (PROTOCOL.md §6, read in the CLI source): a deny that
/// carries `llm_response` answers in the model's place.
#[test]
fn a_deny_with_a_synthetic_response_answers_without_the_model() {
    let run = replay("bm_deny_synthetic_response");
    assert!(run.requests.is_empty(), "the model was not asked");
    let replies = run.of_type("assistant/message");
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0]["content"], "CANNED ANSWER");
    assert_eq!(
        run.events_fired(),
        vec!["BeforeModel", "AfterAgent"],
        "no AfterModel: no request was sent"
    );
    assert_eq!(
        run.stdin("rec_AfterAgent", 1)["prompt_response"],
        "CANNED ANSWER"
    );
    assert_eq!(run.turn_end()["reason"], "completed");
    let notes = run.of_type("seam/note");
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0]["kind"], "request_answered");
    assert_eq!(notes[0]["detail"]["text"], "CANNED ANSWER");
}
