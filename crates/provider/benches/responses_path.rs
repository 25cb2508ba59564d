//! The provider path per wire API against the loopback mock: time to first
//! token (request sent → first text delta) and the whole request, for a
//! short streamed answer and for a reply with two tool calls, Chat
//! Completions next to the Responses API. The mock answers at once, so the
//! figures are dsh's own overhead (HTTP, SSE decoding, accumulation) plus
//! loopback. Prints a table; run with
//! `cargo bench -p dsh-provider --features mock --bench responses_path`.
#![allow(clippy::print_stdout, clippy::expect_used, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use dsh_model::{Model, StreamSink};
use dsh_protocol::{Message, ModelRequest, ToolSpec};
use dsh_provider::mock::{MockProvider, MockReply, MockResponse, MockToolCall, MockWire};
use dsh_provider::{HttpProvider, ProviderApi, ProviderSettings};
use serde_json::json;

const REQUESTS: usize = 300;

/// Records when the first delta arrived.
struct FirstToken {
    first: Option<Instant>,
}

impl StreamSink for FirstToken {
    fn text_delta(&mut self, _delta: &str) {
        self.first.get_or_insert_with(Instant::now);
    }
}

fn request() -> ModelRequest {
    ModelRequest {
        turn: 1,
        step: 1,
        messages: vec![
            Message::System {
                content: "You are a benchmark.".repeat(50),
            },
            Message::User {
                content: "Say hello.".to_owned(),
            },
        ],
        tools: vec![ToolSpec {
            name: "bash".to_owned(),
            description: "Runs a command".to_owned(),
            input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
        }],
        model: None,
    }
}

fn text_reply() -> MockReply {
    MockReply::text("Hello there, this is a short streamed answer of a dozen words or so.")
        .with_usage(1200, 16)
}

fn tool_reply() -> MockReply {
    MockReply::text("Running two.")
        .with_tool_call(MockToolCall::new(
            "call_a",
            "bash",
            &json!({"command": "ls -la"}),
        ))
        .with_tool_call(MockToolCall::new(
            "call_b",
            "bash",
            &json!({"command": "git status"}),
        ))
        .with_usage(1200, 40)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1e6
}

async fn measure(
    api: ProviderApi,
    wire: MockWire,
    reply: fn() -> MockReply,
) -> (Vec<Duration>, Vec<Duration>) {
    let script = (0..REQUESTS)
        .map(|_| MockResponse::Reply(reply()))
        .collect();
    let mock = MockProvider::start_with(wire, script).expect("mock");
    let settings = ProviderSettings {
        api,
        base_url: mock.base_url(),
        model: "gpt-5".to_owned(),
        api_key: Some("bench-key".to_owned()),
        max_retries: 0,
        ..ProviderSettings::default()
    };
    let provider = HttpProvider::new(settings).expect("provider");
    let request = request();
    let mut first = Vec::with_capacity(REQUESTS);
    let mut whole = Vec::with_capacity(REQUESTS);
    for _ in 0..REQUESTS {
        let mut sink = FirstToken { first: None };
        let start = Instant::now();
        provider.complete(&request, &mut sink).await.expect("reply");
        whole.push(start.elapsed());
        first.push(sink.first.expect("a text delta").duration_since(start));
    }
    first.sort();
    whole.sort();
    (first, whole)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    println!("{REQUESTS} requests each against the loopback mock; microseconds (median / p90)");
    println!(
        "{:<10} {:<6} {:>22} {:>22}",
        "api", "reply", "time to first token", "whole request"
    );
    let cases: [(&str, ProviderApi, MockWire); 2] = [
        ("chat", ProviderApi::Chat, MockWire::Chat),
        ("responses", ProviderApi::Responses, MockWire::Responses),
    ];
    let replies: [(&str, fn() -> MockReply); 2] = [("text", text_reply), ("tools", tool_reply)];
    for (reply_name, reply) in replies {
        for (name, api, wire) in cases {
            let (first, whole) = runtime.block_on(measure(api, wire, reply));
            println!(
                "{name:<10} {reply_name:<6} {:>10.0} / {:>9.0} {:>10.0} / {:>9.0}",
                percentile(&first, 0.5),
                percentile(&first, 0.9),
                percentile(&whole, 0.5),
                percentile(&whole, 0.9),
            );
        }
    }
}
