//! Shared helpers.

use std::time::{Duration, Instant};

use dsh_model::StreamSink;
use dsh_protocol::{Message, ModelRequest, ToolSpec};
use dsh_provider::ProviderSettings;
use dsh_provider::mock::MockProvider;
use serde_json::json;

/// Settings pointing at a mock, with short timeouts and fast backoff.
pub fn settings_for(mock: &MockProvider) -> ProviderSettings {
    ProviderSettings {
        base_url: mock.base_url(),
        model: "mock-model".to_owned(),
        api_key: Some("test-key".to_owned()),
        request_timeout: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(5),
        max_retries: 2,
        retry_base_delay: Duration::from_millis(10),
        ..ProviderSettings::default()
    }
}

/// A one-prompt request offering one tool.
pub fn request(prompt: &str) -> ModelRequest {
    ModelRequest {
        turn: 1,
        step: 1,
        messages: vec![
            Message::System {
                content: "You are a test.".to_owned(),
            },
            Message::User {
                content: prompt.to_owned(),
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

/// A sink that records what it was told, with arrival times.
#[derive(Debug, Default)]
pub struct RecordingSink {
    pub deltas: Vec<(String, Instant)>,
    pub retries: Vec<(u32, String)>,
}

impl RecordingSink {
    pub fn texts(&self) -> Vec<String> {
        self.deltas.iter().map(|(text, _)| text.clone()).collect()
    }
}

impl StreamSink for RecordingSink {
    fn text_delta(&mut self, delta: &str) {
        self.deltas.push((delta.to_owned(), Instant::now()));
    }
    fn retrying(&mut self, attempt: u32, reason: &str) {
        self.retries.push((attempt, reason.to_owned()));
    }
}

/// Polls `condition` until it holds or `limit` passes.
pub async fn eventually(limit: Duration, condition: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    condition()
}
