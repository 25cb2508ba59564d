//! The OpenAI Responses API against the loopback mock: streaming, tool
//! calls, reasoning carried across a tool call, usage, the error taxonomy,
//! cancellation, and the request's shape next to Codex's own.

use std::collections::BTreeSet;
use std::time::Duration;

use dsh_model::{FailureCategory, Model};
use dsh_protocol::{Message, ModelRequest, ToolCall, ToolSpec};
use dsh_provider::mock::{
    MockProvider, MockReply, MockResponse, MockToolCall, MockWire, responses_events,
    responses_failed,
};
use dsh_provider::{HttpProvider, ProviderApi, ProviderSettings};
use serde_json::{Value, json};

use crate::support::{RecordingSink, eventually, request, settings_for};

fn settings(mock: &MockProvider) -> ProviderSettings {
    ProviderSettings {
        api: ProviderApi::Responses,
        model: "gpt-4.1".to_owned(),
        ..settings_for(mock)
    }
}

fn start(script: Vec<MockResponse>) -> std::io::Result<MockProvider> {
    MockProvider::start_with(MockWire::Responses, script)
}

fn reply(reply: MockReply) -> MockResponse {
    MockResponse::Reply(reply)
}

/// The request after `first` called `calls` and each call answered `out:ID`.
fn follow_up(first: &ModelRequest, text: &str, calls: &[ToolCall]) -> ModelRequest {
    let mut next = first.clone();
    next.step += 1;
    next.messages.push(Message::Assistant {
        content: text.to_owned(),
        tool_calls: calls.to_vec(),
        thinking: None,
    });
    for call in calls {
        next.messages.push(Message::Tool {
            tool_call_id: call.id.clone(),
            content: format!("out:{}", call.id),
            is_error: false,
            blocks: None,
        });
    }
    next
}

fn kinds(input: &Value) -> Vec<String> {
    input
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            let kind = item["type"].as_str().unwrap_or("?");
            match item["role"].as_str() {
                Some(role) => format!("{kind}:{role}"),
                None => kind.to_owned(),
            }
        })
        .collect()
}

#[tokio::test]
async fn streamed_text_arrives_in_pieces_at_the_responses_endpoint() {
    let mock = start(vec![reply(MockReply::chunks(["Hello", ", ", "world!"]))]).unwrap();
    let provider = HttpProvider::new(settings(&mock)).unwrap();
    let mut sink = RecordingSink::default();

    let answer = provider.complete(&request("hi"), &mut sink).await.unwrap();

    assert_eq!(answer.text, "Hello, world!");
    assert_eq!(sink.texts(), ["Hello", ", ", "world!"]);
    assert!(answer.tool_calls.is_empty());
    let recorded = mock.recorded();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].path, "/responses");
    assert_eq!(recorded[0].header("authorization"), Some("Bearer test-key"));
    let body = &recorded[0].body;
    assert_eq!(body["stream"], json!(true));
    assert_eq!(body["store"], json!(false));
    assert_eq!(body["model"], json!("gpt-4.1"));
    // gpt-4.1 does not reason: no encrypted reasoning is asked for.
    assert_eq!(body.get("include"), None);
    assert_eq!(kinds(&body["input"]), ["message:developer", "message:user"]);
}

#[tokio::test]
async fn parallel_tool_calls_round_trip() {
    let calls = vec![
        MockToolCall::new("call_a", "bash", &json!({"command": "ls"})),
        MockToolCall::new("call_b", "bash", &json!({"command": "pwd"})),
    ];
    let mut first_reply = MockReply::text("Two at once.");
    first_reply.tool_calls = calls;
    let mock = start(vec![reply(first_reply), reply(MockReply::text("done"))]).unwrap();
    let provider = HttpProvider::new(settings(&mock)).unwrap();
    let first = request("list and locate");

    let answer = provider
        .complete(&first, &mut RecordingSink::default())
        .await
        .unwrap();
    assert_eq!(answer.text, "Two at once.");
    assert_eq!(
        answer.tool_calls,
        vec![
            ToolCall {
                id: "call_a".into(),
                name: "bash".into(),
                arguments: json!({"command": "ls"}),
            },
            ToolCall {
                id: "call_b".into(),
                name: "bash".into(),
                arguments: json!({"command": "pwd"}),
            },
        ]
    );

    let second = follow_up(&first, &answer.text, &answer.tool_calls);
    let done = provider
        .complete(&second, &mut RecordingSink::default())
        .await
        .unwrap();
    assert_eq!(done.text, "done");

    let body = &mock.requests()[1];
    assert_eq!(body["parallel_tool_calls"], json!(true));
    assert_eq!(
        kinds(&body["input"]),
        [
            "message:developer",
            "message:user",
            "message:assistant",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
        ]
    );
    let input = body["input"].as_array().unwrap();
    assert_eq!(
        input[3],
        json!({"type": "function_call", "call_id": "call_a", "name": "bash",
               "arguments": "{\"command\":\"ls\"}"})
    );
    assert_eq!(
        input[6],
        json!({"type": "function_call_output", "call_id": "call_b", "output": "out:call_b"})
    );
}

#[tokio::test]
async fn reasoning_is_sent_back_with_the_tool_call_it_led_to() {
    let first_reply = MockReply::default().with_tool_call(MockToolCall::new(
        "call_r",
        "bash",
        &json!({"command": "ls"}),
    ));
    let mock = start(vec![
        reply(first_reply.with_thinking("I should list.", "ENCRYPTED-1")),
        reply(MockReply::text("listed")),
        reply(MockReply::text("again")),
    ])
    .unwrap();
    let mut settings = settings(&mock);
    settings.model = "gpt-5".into();
    let provider = HttpProvider::new(settings).unwrap();
    let first = request("list");

    let answer = provider
        .complete(&first, &mut RecordingSink::default())
        .await
        .unwrap();
    let second = follow_up(&first, "", &answer.tool_calls);
    provider
        .complete(&second, &mut RecordingSink::default())
        .await
        .unwrap();
    // A switched model (a subagent's) shares what was kept.
    let switched = provider.with_model("gpt-5-mini").unwrap();
    switched
        .complete(&second, &mut RecordingSink::default())
        .await
        .unwrap();

    let requests = mock.requests();
    assert_eq!(
        requests[0]["include"],
        json!(["reasoning.encrypted_content"])
    );
    for body in &requests[1..] {
        assert_eq!(
            kinds(&body["input"]),
            [
                "message:developer",
                "message:user",
                "reasoning",
                "function_call",
                "function_call_output",
            ]
        );
        assert_eq!(
            body["input"][2],
            json!({"type": "reasoning",
                   "summary": [{"type": "summary_text", "text": "I should list."}],
                   "encrypted_content": "ENCRYPTED-1"})
        );
    }
}

#[tokio::test]
async fn usage_is_reported_with_cached_tokens_counted_in_the_input() {
    let mock = start(vec![reply(
        MockReply::text("ok")
            .with_usage(1500, 20)
            .with_cache(1024, 0),
    )])
    .unwrap();
    let provider = HttpProvider::new(settings(&mock)).unwrap();

    let answer = provider
        .complete(&request("hi"), &mut RecordingSink::default())
        .await
        .unwrap();

    let usage = answer.usage.unwrap();
    // OpenAI's input_tokens already include the cached ones, as dsh's do.
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_input_tokens
        ),
        (1500, 20, 1024)
    );
    assert_eq!(usage.cache_creation_input_tokens, 0);
}

#[tokio::test]
async fn rate_limit_waits_for_retry_after_then_succeeds() {
    let mock = start(vec![
        MockResponse::status_retry_after(
            429,
            "0.2",
            r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
        ),
        reply(MockReply::text("after the wait")),
    ])
    .unwrap();
    let provider = HttpProvider::new(settings(&mock)).unwrap();
    let mut sink = RecordingSink::default();

    let answer = provider.complete(&request("hi"), &mut sink).await.unwrap();

    assert_eq!(answer.text, "after the wait");
    assert_eq!(sink.retries.len(), 1);
    assert!(
        sink.retries[0].1.contains("HTTP 429"),
        "{}",
        sink.retries[0].1
    );
    let times: Vec<_> = mock.recorded().iter().map(|r| r.received_at).collect();
    assert!(times[1].duration_since(times[0]) >= Duration::from_millis(180));
}

#[tokio::test]
async fn insufficient_quota_is_a_billing_error_and_not_retried() {
    let mock = start(vec![MockResponse::status(
        429,
        r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
    )])
    .unwrap();
    let provider = HttpProvider::new(settings(&mock)).unwrap();
    let mut sink = RecordingSink::default();

    let error = provider
        .complete(&request("hi"), &mut sink)
        .await
        .unwrap_err();

    assert_eq!(error.category(), FailureCategory::BillingError);
    assert!(error.message.contains("current quota"), "{}", error.message);
    assert!(sink.retries.is_empty());
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn server_errors_are_retried_then_reported_as_server_errors() {
    let body = r#"{"error":{"message":"The server had an error","type":"server_error"}}"#;
    let mock = start(vec![
        MockResponse::status(500, body),
        MockResponse::status(503, body),
        MockResponse::status(502, body),
    ])
    .unwrap();
    let provider = HttpProvider::new(settings(&mock)).unwrap();
    let mut sink = RecordingSink::default();

    let error = provider
        .complete(&request("hi"), &mut sink)
        .await
        .unwrap_err();

    assert_eq!(error.category(), FailureCategory::ServerError);
    assert_eq!(sink.retries.len(), 2);
    assert!(error.message.contains("HTTP 502"), "{}", error.message);
    assert!(
        error.message.contains("gave up after 3 attempts"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn unauthorized_is_an_authentication_failure_naming_the_key() {
    let mock = start(vec![MockResponse::status(
        401,
        r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#,
    )])
    .unwrap();
    let mut settings = settings(&mock);
    settings.api_key_env = "OPENAI_API_KEY".into();
    let provider = HttpProvider::new(settings).unwrap();
    let mut sink = RecordingSink::default();

    let error = provider
        .complete(&request("hi"), &mut sink)
        .await
        .unwrap_err();

    assert_eq!(error.category(), FailureCategory::AuthenticationFailed);
    assert!(
        error.message.contains("OPENAI_API_KEY"),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("Incorrect API key"),
        "{}",
        error.message
    );
    assert!(sink.retries.is_empty());
}

#[tokio::test]
async fn a_failed_response_before_any_output_is_retried_and_after_text_is_final() {
    let mock = start(vec![
        MockResponse::Events(responses_failed("server_error", "try again")),
        reply(MockReply::text("second time lucky")),
    ])
    .unwrap();
    let provider = HttpProvider::new(settings(&mock)).unwrap();
    let mut sink = RecordingSink::default();
    let answer = provider.complete(&request("hi"), &mut sink).await.unwrap();
    assert_eq!(answer.text, "second time lucky");
    assert_eq!(sink.retries.len(), 1);

    // Text already streamed: the failure ends the reply, keeping the text.
    let mut events = responses_events(&MockReply::text("partial"));
    events.pop();
    events.push(
        json!({"type": "error", "code": "rate_limit_exceeded", "message": "slow down"}).to_string(),
    );
    let mock = start(vec![MockResponse::Events(events)]).unwrap();
    let provider = HttpProvider::new(settings(&mock)).unwrap();
    let error = provider
        .complete(&request("hi"), &mut RecordingSink::default())
        .await
        .unwrap_err();
    assert_eq!(error.partial_text, "partial");
    assert_eq!(error.category(), FailureCategory::RateLimit);
    assert!(error.message.contains("slow down"), "{}", error.message);
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_without_response_completed_is_incomplete() {
    let mut events = responses_events(&MockReply::text("cut short"));
    events.pop();
    let mock = start(vec![MockResponse::Events(events)]).unwrap();
    let provider = HttpProvider::new(settings(&mock)).unwrap();
    let error = provider
        .complete(&request("hi"), &mut RecordingSink::default())
        .await
        .unwrap_err();
    assert_eq!(error.partial_text, "cut short");
    assert!(
        error.message.contains("response.completed"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn dropping_the_future_mid_stream_closes_the_connection() {
    let chunks: Vec<String> = (0..200).map(|n| format!("w{n} ")).collect();
    let slow = MockReply::chunks(chunks).with_delay(Duration::from_millis(50));
    let mock = start(vec![reply(slow)]).unwrap();
    let provider = HttpProvider::new(settings(&mock)).unwrap();
    let mut sink = RecordingSink::default();
    let outcome = tokio::time::timeout(
        Duration::from_millis(400),
        provider.complete(&request("hi"), &mut sink),
    )
    .await;
    assert!(outcome.is_err(), "the reply should still be streaming");
    assert!(
        !sink.deltas.is_empty(),
        "some text streamed before the drop"
    );
    assert!(
        eventually(Duration::from_secs(5), || mock.disconnects() == 1).await,
        "the mock saw no disconnect"
    );
}

/// Codex's first two requests of its `baseline` capture ("please run echo
/// hi": one shell call, then the answer), with its built-in prompts elided.
fn codex_baseline() -> Vec<Value> {
    let text = include_str!("data/codex_baseline_requests.json");
    let records: Vec<Value> = serde_json::from_str(text).unwrap();
    records
        .into_iter()
        .map(|record| record["body"].clone())
        .collect()
}

/// The (type, role) sequence of the items after the built-in preamble,
/// and each item's keys apart from the ids Codex generates for its log.
fn conversation_shape(input: &Value, skip_developer: bool) -> Vec<(String, BTreeSet<String>)> {
    input
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item.get("_elided_builtin_preamble").is_none())
        .filter(|item| !(skip_developer && item["role"] == "developer"))
        .map(|item| {
            let kind = match item["role"].as_str() {
                Some(role) => format!("{}:{role}", item["type"].as_str().unwrap_or("?")),
                None => item["type"].as_str().unwrap_or("?").to_owned(),
            };
            let keys = item
                .as_object()
                .unwrap()
                .keys()
                .filter(|key| *key != "id")
                .cloned()
                .collect();
            (kind, keys)
        })
        .collect()
}

#[tokio::test]
async fn requests_have_the_shape_codex_sends() {
    let codex = codex_baseline();
    let first_reply = MockReply::default().with_tool_call(MockToolCall::new(
        "call_1",
        "bash",
        &json!({"command": "echo hi"}),
    ));
    let mock = start(vec![reply(first_reply), reply(MockReply::text("done"))]).unwrap();
    let mut settings = settings(&mock);
    // Codex's captured model: a reasoning model.
    settings.model = codex[0]["model"].as_str().unwrap().to_owned();
    let provider = HttpProvider::new(settings).unwrap();
    let first = ModelRequest {
        turn: 1,
        step: 1,
        messages: vec![
            Message::System {
                content: "dsh's system prompt".into(),
            },
            Message::User {
                content: "please run echo hi".into(),
            },
        ],
        tools: vec![ToolSpec {
            name: "bash".into(),
            description: "Runs a shell command".into(),
            input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}},
                                 "required": ["command"]}),
        }],
        model: None,
    };
    let answer = provider
        .complete(&first, &mut RecordingSink::default())
        .await
        .unwrap();
    let second = follow_up(&first, "", &answer.tool_calls);
    provider
        .complete(&second, &mut RecordingSink::default())
        .await
        .unwrap();
    let dsh = mock.requests();

    for (ours, theirs) in dsh.iter().zip(&codex) {
        // The conversation: same item types, roles and fields (texts and
        // Codex's log ids aside). dsh's system prompt is its developer
        // message; Codex's built-in developer messages are elided.
        assert_eq!(
            conversation_shape(&ours["input"], true),
            conversation_shape(&theirs["input"], false)
        );
        // The request's own fields: Codex's, apart from its reasoning
        // effort, verbosity and cache key, which dsh leaves to the API's
        // defaults.
        let keys = |body: &Value| -> BTreeSet<String> {
            body.as_object().unwrap().keys().cloned().collect()
        };
        let mut expected = keys(theirs);
        for codex_only in ["reasoning", "text", "prompt_cache_key"] {
            expected.remove(codex_only);
        }
        assert_eq!(keys(ours), expected);
        for field in [
            "stream",
            "store",
            "include",
            "tool_choice",
            "parallel_tool_calls",
        ] {
            assert_eq!(ours[field], theirs[field], "{field}");
        }
        // Tools are function tools named at the top level (the captures
        // keep only names; the shape is the API's).
        let tool = &ours["tools"][0];
        assert_eq!(tool["type"], json!("function"));
        assert_eq!(tool["name"], json!("bash"));
        assert_eq!(tool["parameters"]["type"], json!("object"));
        assert!(tool.get("function").is_none());
    }
}
