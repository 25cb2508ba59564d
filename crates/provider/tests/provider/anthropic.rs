//! The Anthropic Messages API against the loopback mock speaking it:
//! streaming, tools, thinking, cache usage, the error taxonomy, cancellation.

use std::time::Duration;

use dsh_model::{FailureCategory, Model};
use dsh_protocol::{Message, ModelRequest, TokenUsage, ToolCall};
use dsh_provider::mock::{MockProvider, MockReply, MockResponse, MockToolCall, MockWire};
use dsh_provider::{HttpProvider, ProviderApi, ProviderSettings};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{RecordingSink, eventually, request, settings_for};

fn anthropic(script: Vec<MockResponse>) -> (MockProvider, ProviderSettings) {
    let mock = MockProvider::start_with(MockWire::Anthropic, script).unwrap();
    let settings = ProviderSettings {
        api: ProviderApi::Anthropic,
        api_key_env: "ANTHROPIC_API_KEY".to_owned(),
        api_key: Some("sk-ant-test-key".to_owned()),
        ..settings_for(&mock)
    };
    (mock, settings)
}

/// `request` followed by the reply's tool calls and their results.
fn continued(reply_calls: &[ToolCall], results: &[(&str, &str)]) -> ModelRequest {
    let mut next = request("go");
    next.step = 2;
    next.messages.push(Message::Assistant {
        content: String::new(),
        tool_calls: reply_calls.to_vec(),
        thinking: None,
    });
    for (id, content) in results {
        next.messages.push(Message::Tool {
            tool_call_id: (*id).to_owned(),
            content: (*content).to_owned(),
            is_error: false,
            blocks: None,
        });
    }
    next
}

#[tokio::test]
async fn streamed_text_arrives_in_order_with_the_api_headers() {
    let (mock, settings) = anthropic(vec![MockResponse::Reply(
        MockReply::chunks(["Hel", "lo", " there"]).with_usage(40, 3),
    )]);
    let provider = HttpProvider::new(settings).unwrap();
    let mut sink = RecordingSink::default();

    let reply = provider.complete(&request("hi"), &mut sink).await.unwrap();

    assert_eq!(sink.texts(), ["Hel", "lo", " there"]);
    assert_eq!(reply.text, "Hello there");
    assert!(reply.tool_calls.is_empty());
    assert_eq!(
        reply.usage,
        Some(TokenUsage {
            input_tokens: 40,
            output_tokens: 3,
            ..TokenUsage::default()
        })
    );
    let recorded = mock.recorded();
    assert_eq!(recorded[0].path, "/v1/messages");
    assert_eq!(recorded[0].header("x-api-key"), Some("sk-ant-test-key"));
    assert_eq!(recorded[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(recorded[0].header("authorization"), None);
    let body = &recorded[0].body;
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["system"][0]["text"], "You are a test.");
    assert_eq!(body["messages"][0]["role"], "user");
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
}

#[tokio::test]
async fn a_tool_round_trip_with_parallel_calls() {
    let (mock, settings) = anthropic(vec![
        MockResponse::Reply(
            MockReply::text("Both at once.")
                .with_tool_call(MockToolCall::new(
                    "toolu_a",
                    "bash",
                    &json!({"command": "ls"}),
                ))
                .with_tool_call(MockToolCall::new(
                    "toolu_b",
                    "bash",
                    &json!({"command": "pwd"}),
                )),
        ),
        MockResponse::text("done"),
    ]);
    let provider = HttpProvider::new(settings).unwrap();
    let mut sink = RecordingSink::default();

    let reply = provider.complete(&request("go"), &mut sink).await.unwrap();
    assert_eq!(reply.text, "Both at once.");
    assert_eq!(
        reply.tool_calls,
        vec![
            ToolCall {
                id: "toolu_a".into(),
                name: "bash".into(),
                arguments: json!({"command": "ls"}),
            },
            ToolCall {
                id: "toolu_b".into(),
                name: "bash".into(),
                arguments: json!({"command": "pwd"}),
            },
        ]
    );

    let next = continued(
        &reply.tool_calls,
        &[("toolu_a", "a.txt"), ("toolu_b", "/w")],
    );
    let second = provider.complete(&next, &mut sink).await.unwrap();
    assert_eq!(second.text, "done");

    let body = &mock.requests()[1];
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{body}");
    assert_eq!(messages[1]["role"], "assistant");
    let kinds: Vec<&str> = messages[1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["tool_use", "tool_use"]);
    // Both results in one user message, the cache breakpoint on the last.
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "a.txt", "is_error": false},
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": "/w", "is_error": false,
             "cache_control": {"type": "ephemeral"}},
        ]})
    );
}

#[tokio::test]
async fn thinking_is_kept_across_a_tool_call() {
    let (mock, mut settings) = anthropic(vec![
        MockResponse::Reply(
            MockReply::default()
                .with_thinking("I should list files.", "sig-123")
                .with_tool_call(MockToolCall::new(
                    "toolu_t",
                    "bash",
                    &json!({"command": "ls"}),
                )),
        ),
        MockResponse::text("listed"),
    ]);
    settings.thinking_budget_tokens = Some(2048);
    let provider = HttpProvider::new(settings).unwrap();
    let mut sink = RecordingSink::default();

    let reply = provider.complete(&request("go"), &mut sink).await.unwrap();
    assert!(sink.deltas.is_empty(), "thinking is not reply text");
    let next = continued(&reply.tool_calls, &[("toolu_t", "a.txt")]);
    // A copy of the provider for another model (as `/model` makes) shares
    // what it remembers.
    let switched = provider.with_model("claude-other").unwrap();
    switched.complete(&next, &mut sink).await.unwrap();

    let requests = mock.requests();
    assert_eq!(
        requests[0]["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(requests[1]["model"], "claude-other");
    assert_eq!(requests[1]["thinking"], requests[0]["thinking"]);
    assert_eq!(
        requests[1]["messages"][1]["content"],
        json!([
            {"type": "thinking", "thinking": "I should list files.", "signature": "sig-123"},
            {"type": "tool_use", "id": "toolu_t", "name": "bash", "input": {"command": "ls"}},
        ])
    );
}

#[tokio::test]
async fn cache_reads_and_writes_are_reported() {
    let (_mock, settings) = anthropic(vec![MockResponse::Reply(
        MockReply::text("cached")
            .with_usage(12_000, 20)
            .with_cache(11_000, 900),
    )]);
    let provider = HttpProvider::new(settings).unwrap();
    let reply = provider
        .complete(&request("hi"), &mut RecordingSink::default())
        .await
        .unwrap();
    assert_eq!(
        reply.usage,
        Some(TokenUsage {
            // The whole prompt: what fills the context window.
            input_tokens: 12_000,
            output_tokens: 20,
            cache_read_input_tokens: 11_000,
            cache_creation_input_tokens: 900,
        })
    );
}

fn anthropic_error(kind: &str, message: &str) -> String {
    json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
}

#[tokio::test]
async fn rate_limit_error_honours_retry_after() {
    let (mock, settings) = anthropic(vec![
        MockResponse::status_retry_after(429, "1", anthropic_error("rate_limit_error", "slow")),
        MockResponse::text("finally"),
    ]);
    let provider = HttpProvider::new(settings).unwrap();
    let mut sink = RecordingSink::default();
    let reply = provider.complete(&request("hi"), &mut sink).await.unwrap();
    assert_eq!(reply.text, "finally");
    assert_eq!(sink.retries.len(), 1);
    assert!(
        sink.retries[0].1.contains("retrying in 1.0s"),
        "{:?}",
        sink.retries
    );
    let recorded = mock.recorded();
    let gap = recorded[1]
        .received_at
        .duration_since(recorded[0].received_at);
    assert!(gap >= Duration::from_millis(900), "retried after {gap:?}");
}

#[tokio::test]
async fn overloaded_is_retried_then_a_typed_server_error() {
    let overloaded =
        || MockResponse::status(529, anthropic_error("overloaded_error", "Overloaded"));
    let (mock, settings) = anthropic(vec![overloaded(), overloaded(), overloaded()]);
    let provider = HttpProvider::new(settings).unwrap();
    let mut sink = RecordingSink::default();
    let error = provider
        .complete(&request("hi"), &mut sink)
        .await
        .unwrap_err();
    assert_eq!(mock.recorded().len(), 3, "max_retries = 2");
    assert_eq!(error.category(), FailureCategory::ServerError);
    assert_eq!(error.failure.as_ref().unwrap().status, Some(529));
    assert!(
        error.message.contains("HTTP 529 Overloaded"),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("gave up after 3 attempts"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn an_overloaded_event_before_any_content_is_retried() {
    let (mock, settings) = anthropic(vec![
        MockResponse::Events(vec![
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 1}}}).to_string(),
            anthropic_error("overloaded_error", "Overloaded"),
        ]),
        MockResponse::text("recovered"),
    ]);
    let provider = HttpProvider::new(settings).unwrap();
    let mut sink = RecordingSink::default();
    let reply = provider.complete(&request("hi"), &mut sink).await.unwrap();
    assert_eq!(reply.text, "recovered");
    assert_eq!(mock.recorded().len(), 2);
    assert!(
        sink.retries[0].1.contains("overloaded_error"),
        "{:?}",
        sink.retries
    );
}

#[tokio::test]
async fn authentication_error_names_the_key_variable_and_is_not_retried() {
    let (mock, settings) = anthropic(vec![MockResponse::status(
        401,
        anthropic_error("authentication_error", "invalid x-api-key"),
    )]);
    let provider = HttpProvider::new(settings).unwrap();
    let error = provider
        .complete(&request("hi"), &mut RecordingSink::default())
        .await
        .unwrap_err();
    assert_eq!(mock.recorded().len(), 1);
    assert_eq!(error.category(), FailureCategory::AuthenticationFailed);
    assert!(
        error.message.contains("ANTHROPIC_API_KEY"),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("invalid x-api-key"),
        "{}",
        error.message
    );
    assert!(
        !error.message.contains("sk-ant-test-key"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn dropping_the_future_mid_stream_closes_the_connection() {
    let chunks: Vec<String> = (0..100).map(|n| format!("{n} ")).collect();
    let (mock, settings) = anthropic(vec![MockResponse::Reply(
        MockReply::chunks(chunks).with_delay(Duration::from_millis(50)),
    )]);
    let provider = HttpProvider::new(settings).unwrap();
    let mut sink = RecordingSink::default();
    let request = request("q");
    {
        let pending = provider.complete(&request, &mut sink);
        let outcome = tokio::time::timeout(Duration::from_millis(400), pending).await;
        assert!(outcome.is_err(), "the slow reply finished early");
    }
    assert!(!sink.deltas.is_empty(), "nothing streamed before the drop");
    assert!(
        eventually(Duration::from_secs(5), || mock.disconnects() == 1).await,
        "the mock kept streaming into a dropped request"
    );
}

#[tokio::test]
async fn a_stream_cut_mid_reply_keeps_the_partial_text() {
    let (_mock, settings) = anthropic(vec![MockResponse::CutAfter {
        reply: MockReply::chunks(["par", "tial", " more"]),
        // message_start, ping, block start, two deltas.
        events: 5,
    }]);
    let provider = HttpProvider::new(settings).unwrap();
    let error = provider
        .complete(&request("q"), &mut RecordingSink::default())
        .await
        .unwrap_err();
    assert_eq!(error.partial_text, "partial");
}
