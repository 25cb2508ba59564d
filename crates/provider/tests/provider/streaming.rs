//! Successful replies: text deltas, tool calls, usage, and what was sent.

use std::time::Duration;

use dsh_model::Model;
use dsh_protocol::{Message, TokenUsage, ToolCall};
use dsh_provider::OpenAiProvider;
use dsh_provider::mock::{MockProvider, MockReply, MockResponse, MockToolCall};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{RecordingSink, request, settings_for};

#[tokio::test]
async fn plain_streamed_answer_arrives_in_order() {
    let mock = MockProvider::start(vec![MockResponse::Reply(
        MockReply::chunks(["Hel", "lo, ", "wor", "ld!"]).with_usage(12, 4),
    )])
    .unwrap();
    let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();
    let mut sink = RecordingSink::default();

    let reply = provider
        .complete(&request("Say hello"), &mut sink)
        .await
        .unwrap();

    assert_eq!(sink.texts(), vec!["Hel", "lo, ", "wor", "ld!"]);
    assert_eq!(reply.text, "Hello, world!");
    assert_eq!(reply.tool_calls, vec![]);
    assert_eq!(
        reply.usage,
        Some(TokenUsage {
            input_tokens: 12,
            output_tokens: 4,
            ..TokenUsage::default()
        })
    );
    assert!(sink.retries.is_empty());
    assert_eq!(provider.name(), "mock-model");

    let recorded = mock.recorded();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].method, "POST");
    assert_eq!(recorded[0].path, "/chat/completions");
    assert_eq!(recorded[0].header("authorization"), Some("Bearer test-key"));
    assert_eq!(recorded[0].header("accept"), Some("text/event-stream"));
    assert_eq!(
        mock.requests(),
        vec![json!({
            "model": "mock-model",
            "messages": [
                {"role": "system", "content": "You are a test."},
                {"role": "user", "content": "Say hello"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "bash",
                "description": "Runs a command",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
            }}],
            "stream": true,
            "stream_options": {"include_usage": true},
        })]
    );
}

#[tokio::test]
async fn deltas_reach_the_sink_while_the_reply_streams() {
    let delay = Duration::from_millis(300);
    let mock = MockProvider::start(vec![MockResponse::Reply(
        MockReply::chunks(["one ", "two ", "three ", "four"]).with_delay(delay),
    )])
    .unwrap();
    let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();
    let mut sink = RecordingSink::default();

    provider
        .complete(&request("count"), &mut sink)
        .await
        .unwrap();

    assert_eq!(sink.texts(), vec!["one ", "two ", "three ", "four"]);
    // Buffered delivery would hand all four over at once; streamed delivery
    // spreads them over roughly three delays. Generous bound: one delay.
    let first = sink.deltas[0].1;
    let last = sink.deltas[3].1;
    assert!(
        last.duration_since(first) >= delay,
        "deltas arrived within {:?}",
        last.duration_since(first)
    );
}

#[tokio::test]
async fn tool_calls_split_across_chunks_are_reassembled() {
    let mock = MockProvider::start(vec![MockResponse::Reply(
        MockReply::text("Let me look.")
            .with_tool_call(MockToolCall::raw(
                "call_a",
                "bash",
                vec!["{\"comm".into(), "and\": \"ls".into(), " -la\"}".into()],
            ))
            .with_tool_call(MockToolCall::new(
                "call_b",
                "read",
                &json!({"file_path": "/tmp/x", "limit": 10}),
            ))
            .with_usage(30, 20),
    )])
    .unwrap();
    let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();
    let mut sink = RecordingSink::default();

    let reply = provider
        .complete(&request("list"), &mut sink)
        .await
        .unwrap();

    assert_eq!(reply.text, "Let me look.");
    assert_eq!(
        reply.tool_calls,
        vec![
            ToolCall {
                id: "call_a".into(),
                name: "bash".into(),
                arguments: json!({"command": "ls -la"}),
            },
            ToolCall {
                id: "call_b".into(),
                name: "read".into(),
                arguments: json!({"file_path": "/tmp/x", "limit": 10}),
            },
        ]
    );
}

#[tokio::test]
async fn invalid_tool_arguments_are_kept_verbatim_and_sent_back_unchanged() {
    let mock = MockProvider::start(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::raw(
                "call_1",
                "bash",
                vec!["{\"command\": ".into(), "\"ls\"".into()],
            )],
        ),
        MockResponse::text("ok"),
    ])
    .unwrap();
    let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();
    let mut sink = RecordingSink::default();

    let reply = provider.complete(&request("go"), &mut sink).await.unwrap();
    assert_eq!(reply.text, "");
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(
        reply.tool_calls[0].arguments,
        Value::String("{\"command\": \"ls\"".into())
    );

    let mut next = request("go");
    next.messages.push(Message::Assistant {
        content: reply.text.clone(),
        tool_calls: reply.tool_calls.clone(),
        thinking: None,
    });
    next.messages.push(Message::Tool {
        tool_call_id: "call_1".into(),
        content: "invalid arguments".into(),
        is_error: false,
        blocks: None,
    });
    provider.complete(&next, &mut sink).await.unwrap();

    let sent = &mock.requests()[1]["messages"];
    assert_eq!(
        sent[2],
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "bash", "arguments": "{\"command\": \"ls\""}}
        ]})
    );
    assert_eq!(
        sent[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "invalid arguments"})
    );
}

#[tokio::test]
async fn settings_reach_the_request_body() {
    let mock = MockProvider::start(vec![MockResponse::text("fine")]).unwrap();
    let mut settings = settings_for(&mock);
    settings.max_tokens = Some(256);
    settings.temperature = Some(0.5);
    let provider = OpenAiProvider::new(settings).unwrap();

    let mut no_tools = request("hi");
    no_tools.tools.clear();
    provider
        .complete(&no_tools, &mut RecordingSink::default())
        .await
        .unwrap();

    let body = &mock.requests()[0];
    assert_eq!(body["max_tokens"], json!(256));
    assert_eq!(body["temperature"], json!(0.5));
    assert!(
        body.get("tools").is_none(),
        "empty tools must be omitted: {body}"
    );
}

#[tokio::test]
async fn a_body_ending_after_finish_reason_without_done_is_complete() {
    let mock = MockProvider::start(vec![MockResponse::Events(vec![
        json!({"choices":[{"index":0,"delta":{"content":"All done"},"finish_reason":null}]})
            .to_string(),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}).to_string(),
    ])])
    .unwrap();
    let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();

    let reply = provider
        .complete(&request("hi"), &mut RecordingSink::default())
        .await
        .unwrap();
    assert_eq!(reply.text, "All done");
    assert_eq!(reply.usage, None);
}

#[tokio::test]
async fn a_non_streamed_json_completion_is_understood() {
    let completion = json!({
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Checking.",
            "tool_calls": [{"id": "call_9", "type": "function",
                            "function": {"name": "glob", "arguments": "{\"pattern\":\"*.rs\"}"}}]
        }}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11}
    });
    let mock =
        MockProvider::start(vec![MockResponse::status(200, completion.to_string())]).unwrap();
    let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();
    let mut sink = RecordingSink::default();

    let reply = provider
        .complete(&request("find"), &mut sink)
        .await
        .unwrap();
    assert_eq!(sink.texts(), vec!["Checking."]);
    assert_eq!(
        reply.tool_calls,
        vec![ToolCall {
            id: "call_9".into(),
            name: "glob".into(),
            arguments: json!({"pattern": "*.rs"}),
        }]
    );
    assert_eq!(
        reply.usage,
        Some(TokenUsage {
            input_tokens: 5,
            output_tokens: 6,
            ..TokenUsage::default()
        })
    );
}
