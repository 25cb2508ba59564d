//! The provider path's cost against the loopback mock, per wire API: time
//! to the first text delta and the whole request, for requests whose reply
//! the mock streams without delay (so what is measured is dsh's side plus
//! loopback HTTP).
//!
//! `cargo run -p dsh-provider --features mock --example provider_bench [REQUESTS]`

// A benchmark reports on stdout; a failed set-up is a failed run.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use dsh_model::{Model, StreamSink};
use dsh_protocol::{Message, ModelRequest, ToolSpec};
use dsh_provider::mock::{MockProvider, MockReply, MockResponse, MockWire};
use dsh_provider::{HttpProvider, ProviderApi, ProviderSettings};
use serde_json::json;

/// Notes when the first text arrived.
struct FirstToken {
    start: Instant,
    first: Option<Duration>,
}

impl StreamSink for FirstToken {
    fn text_delta(&mut self, _delta: &str) {
        self.first.get_or_insert_with(|| self.start.elapsed());
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

fn percentile(sorted: &[Duration], share: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * share).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn micros(duration: Duration) -> String {
    format!("{:.0} µs", duration.as_secs_f64() * 1e6)
}

async fn measure(wire: MockWire, api: ProviderApi, requests: usize) {
    let reply = || {
        MockResponse::Reply(
            MockReply::chunks(["Hello", ", ", "world", "! ", "Done."]).with_usage(1200, 5),
        )
    };
    // One warm-up request besides the measured ones.
    let mock = MockProvider::start_with(wire, (0..=requests).map(|_| reply()).collect()).unwrap();
    let settings = ProviderSettings {
        api,
        base_url: mock.base_url(),
        model: "bench".to_owned(),
        api_key: Some("bench-key".to_owned()),
        ..ProviderSettings::default()
    };
    let provider = HttpProvider::new(settings).unwrap();
    let request = request();
    let mut first = Vec::with_capacity(requests);
    let mut whole = Vec::with_capacity(requests);
    for round in 0..=requests {
        let start = Instant::now();
        let mut sink = FirstToken { start, first: None };
        provider.complete(&request, &mut sink).await.unwrap();
        if round > 0 {
            whole.push(start.elapsed());
            first.push(sink.first.expect("text streamed"));
        }
    }
    first.sort();
    whole.sort();
    println!(
        "{:<10} {requests} requests  first token p50 {} p95 {}  whole request p50 {} p95 {}",
        api.as_str(),
        micros(percentile(&first, 0.5)),
        micros(percentile(&first, 0.95)),
        micros(percentile(&whole, 0.5)),
        micros(percentile(&whole, 0.95)),
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let requests: usize = std::env::args()
        .nth(1)
        .and_then(|value| value.parse().ok())
        .unwrap_or(200);
    measure(MockWire::Chat, ProviderApi::Chat, requests).await;
    measure(MockWire::Anthropic, ProviderApi::Anthropic, requests).await;
    measure(MockWire::Responses, ProviderApi::Responses, requests).await;
}
