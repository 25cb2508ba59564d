//! The provider-neutral model interface.
//!
//! What this crate is for: the [`Model`] trait the agent loop calls once per
//! step, the streaming callback it passes, and the error a provider returns.
//! Implementations live elsewhere: the scripted model in `dsh-agent`, the
//! OpenAI-compatible HTTP client in `dsh-provider`.
//!
//! What it is not: no HTTP, no retries, no loop logic.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

use async_trait::async_trait;
use dsh_protocol::{ModelReply, ModelRequest};

/// Receives a reply while it streams. Every method has a no-op default.
pub trait StreamSink: Send {
    /// A piece of assistant text arrived.
    fn text_delta(&mut self, _delta: &str) {}
    /// The provider is retrying after a transient failure.
    fn retrying(&mut self, _attempt: u32, _reason: &str) {}
}

/// A sink that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoStream;

impl StreamSink for NoStream {}

/// Why a model request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ModelError {
    /// What went wrong, for people (names the key variable on 401, etc.).
    pub message: String,
    /// Assistant text that streamed before the failure; kept in the log.
    pub partial_text: String,
    /// What the provider answered, when the failure was the provider's
    /// answer (an HTTP status) rather than dsh's own (a timeout, a broken
    /// stream). Hook bridges and the terminal read the category from here.
    pub failure: Option<ProviderFailure>,
}

impl ModelError {
    /// An error with no partial text.
    pub fn new(message: impl Into<String>) -> Self {
        ModelError {
            message: message.into(),
            partial_text: String::new(),
            failure: None,
        }
    }

    /// This error, carrying what the provider answered.
    pub fn with_failure(mut self, failure: ProviderFailure) -> Self {
        self.failure = Some(failure);
        self
    }

    /// The failure's category: the provider's when it answered, otherwise
    /// [`FailureCategory::Unknown`].
    pub fn category(&self) -> FailureCategory {
        self.failure
            .as_ref()
            .map_or(FailureCategory::Unknown, |failure| failure.category)
    }
}

mod failure;
pub use failure::{FailureCategory, ProviderFailure};

pub mod pricing;

/// The context window of well-known models, in tokens, by name prefix;
/// `None` when dsh does not know the model.
pub fn context_window(model: &str) -> Option<u64> {
    let model = model.to_ascii_lowercase();
    // Longer prefixes first where one model family's name starts another's.
    let known: &[(&str, u64)] = &[
        ("deepseek-chat", 128_000),
        ("deepseek-reasoner", 128_000),
        ("gpt-4.1", 1_047_576),
        ("gpt-4o", 128_000),
        // The chat-tuned gpt-5 snapshots have the smaller window.
        ("gpt-5-chat", 128_000),
        ("gpt-5", 400_000),
        ("codex-mini", 200_000),
        ("o1-mini", 128_000),
        ("o1", 200_000),
        ("o3", 200_000),
        ("o4-mini", 200_000),
        // Every Claude model of the Messages API: 200K without the
        // long-context beta.
        ("claude", 200_000),
    ];
    known
        .iter()
        .find(|(prefix, _)| model.starts_with(prefix))
        .map(|(_, window)| *window)
}

/// A model provider: one request in, one reply out.
///
/// Cancellation is by dropping the returned future; implementations must
/// release their connection when dropped.
#[async_trait]
pub trait Model: Send + Sync {
    /// Answers one request, streaming text to `sink` as it arrives.
    async fn complete(
        &self,
        request: &ModelRequest,
        sink: &mut dyn StreamSink,
    ) -> Result<ModelReply, ModelError>;

    /// The model's name as hooks see it (`model` payload fields).
    fn name(&self) -> String;

    /// The same provider asking for another model (a custom subagent's
    /// `model`); `None` when this provider cannot switch (a scripted model).
    fn with_model(&self, _name: &str) -> Option<std::sync::Arc<dyn Model>> {
        None
    }
}
