//! One reply is bounded in size on every API: text, tool-call arguments and
//! thinking together past `max_reply_bytes` fail with
//! `ProviderError::ReplyTooLarge`'s message, and the connection is dropped
//! there rather than read to its end.

use std::time::{Duration, Instant};

use dsh_model::Model;
use dsh_provider::mock::{MockProvider, MockReply, MockResponse, MockToolCall, MockWire};
use dsh_provider::{HttpProvider, ProviderApi, ProviderError, ProviderSettings};

use crate::support::{RecordingSink, eventually, request, settings_for};

const MIB: usize = 1024 * 1024;

/// The limit these tests set (the default is 16 MiB).
const LIMIT: usize = 4 * MIB;

const WIRES: [(MockWire, ProviderApi); 3] = [
    (MockWire::Chat, ProviderApi::Chat),
    (MockWire::Anthropic, ProviderApi::Anthropic),
    (MockWire::Responses, ProviderApi::Responses),
];

fn provider(
    wire: MockWire,
    api: ProviderApi,
    script: Vec<MockResponse>,
) -> (MockProvider, HttpProvider) {
    let mock = MockProvider::start_with(wire, script).unwrap();
    let settings = ProviderSettings {
        api,
        max_reply_bytes: LIMIT,
        // Debug builds take a while over megabytes of JSON.
        request_timeout: Duration::from_secs(60),
        ..settings_for(&mock)
    };
    (mock, HttpProvider::new(settings).unwrap())
}

/// A tool call whose arguments stream as `pieces` pieces of 1 MiB each.
fn huge_call(pieces: usize) -> MockToolCall {
    let piece = "x".repeat(MIB);
    MockToolCall::raw("call_1", "bash", vec![piece; pieces])
}

fn too_large() -> String {
    ProviderError::ReplyTooLarge { limit: LIMIT }.to_string()
}

/// The events of a tool call whose arguments stream as `pieces` pieces of
/// 1 MiB each, in `wire`'s format, up to the last piece: what follows
/// (the finished items holding all of it) is never reached.
fn huge_call_events(wire: MockWire, pieces: usize) -> Vec<String> {
    const MARK: &str = "@PIECE@";
    let call = MockToolCall::raw("call_1", "bash", vec![MARK.to_owned(); pieces]);
    let piece = "x".repeat(MIB);
    MockReply::default()
        .with_tool_call(call)
        .events_for(wire)
        .into_iter()
        .take_while(|event| event.matches(MARK).count() <= 1)
        .map(|event| event.replace(MARK, &piece))
        .collect()
}

/// A 48 MiB argument stream is cut once the limit is passed, on every API:
/// the error names the limit and the setting, the client hangs up long
/// before the server has sent it all, and nothing of the arguments is
/// kept as partial text.
#[tokio::test]
async fn a_48_mib_tool_call_is_cut_at_the_limit_on_every_api() {
    for (wire, api) in WIRES {
        let events = huge_call_events(wire, 48);
        assert_eq!(events.iter().map(String::len).sum::<usize>() / MIB, 48);
        let (mock, provider) = provider(wire, api, vec![MockResponse::Events(events)]);
        let mut sink = RecordingSink::default();
        let started = Instant::now();
        let error = provider
            .complete(&request("go"), &mut sink)
            .await
            .unwrap_err();
        assert_eq!(error.message, too_large(), "{api:?}");
        assert!(error.message.contains("4194304 bytes"), "{}", error.message);
        assert!(error.message.contains("max_reply_mib"), "{}", error.message);
        assert!(error.partial_text.is_empty(), "{api:?}");
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{api:?}: {:?}",
            started.elapsed()
        );
        // The server was still writing when the client hung up.
        assert!(
            eventually(Duration::from_secs(10), || mock.disconnects() == 1).await,
            "{api:?}: the stream was read to its end"
        );
        // A reply that fails this way is not asked for again.
        assert_eq!(mock.requests().len(), 1, "{api:?}");
    }
}

/// The limit is on the reply as a whole: text and arguments each under it
/// but together over it fail too; the text that streamed is kept as the
/// partial text and stays under the limit.
#[tokio::test]
async fn text_and_arguments_count_together() {
    for (wire, api) in WIRES {
        let mut reply = MockReply::chunks(vec!["t".repeat(MIB); 3]);
        reply = reply.with_tool_call(huge_call(2));
        let (_mock, provider) = provider(wire, api, vec![MockResponse::Reply(reply)]);
        let mut sink = RecordingSink::default();
        let error = provider
            .complete(&request("go"), &mut sink)
            .await
            .unwrap_err();
        assert_eq!(error.message, too_large(), "{api:?}");
        assert_eq!(error.partial_text.len(), 3 * MIB, "{api:?}");
    }
}

/// Thinking counts: a thinking block (a reasoning item on the Responses
/// API) past the limit fails the reply.
#[tokio::test]
async fn thinking_counts_towards_the_limit() {
    for (wire, api) in [
        (MockWire::Anthropic, ProviderApi::Anthropic),
        (MockWire::Responses, ProviderApi::Responses),
    ] {
        let reply = MockReply::text("hi").with_thinking(&"h".repeat(LIMIT + 1), "sig");
        let (_mock, provider) = provider(wire, api, vec![MockResponse::Reply(reply)]);
        let error = provider
            .complete(&request("go"), &mut RecordingSink::default())
            .await
            .unwrap_err();
        assert_eq!(error.message, too_large(), "{api:?}");
    }
}

/// Under the limit nothing changes: a 3 MiB tool call arrives whole.
#[tokio::test]
async fn a_reply_under_the_limit_arrives_whole() {
    for (wire, api) in WIRES {
        let arguments = format!("{{\"command\":\"{}\"}}", "y".repeat(3 * MIB));
        let call = MockToolCall::raw("call_1", "bash", vec![arguments.clone()]);
        let reply = MockReply::text("ok").with_tool_call(call);
        let (_mock, provider) = provider(wire, api, vec![MockResponse::Reply(reply)]);
        let reply = provider
            .complete(&request("go"), &mut RecordingSink::default())
            .await
            .unwrap();
        assert_eq!(reply.tool_calls.len(), 1, "{api:?}");
        assert_eq!(
            reply.tool_calls[0].arguments["command"]
                .as_str()
                .map(str::len),
            Some(3 * MIB),
            "{api:?}"
        );
    }
}

/// A reply sent as one JSON document is bounded by its body.
#[tokio::test]
async fn a_json_reply_over_the_limit_is_refused() {
    let completion = serde_json::json!({
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "z".repeat(LIMIT + 1)}}],
    });
    let (_mock, provider) = provider(
        MockWire::Chat,
        ProviderApi::Chat,
        vec![MockResponse::status(200, completion.to_string())],
    );
    let error = provider
        .complete(&request("go"), &mut RecordingSink::default())
        .await
        .unwrap_err();
    assert_eq!(error.message, too_large());
}
