//! The fixture transcript format (the README's fixture format).

use std::path::{Path, PathBuf};
use std::time::Duration;

use dsh_model::{ModelError, ProviderFailure};

use dsh_protocol::{ModelReply, TokenUsage, ToolCall};
use serde::Deserialize;
use serde_json::Value;

use crate::ScriptStep;

/// A scripted session: prompts to send and the model's replies.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    /// One line saying what the scenario shows.
    #[serde(default)]
    pub description: String,
    /// The sends, queued in order; each is its own turn.
    pub prompts: Vec<FixturePrompt>,
    /// The model's replies, one per request, across the whole session.
    pub model: Vec<FixtureStep>,
}

/// A queued send.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum FixturePrompt {
    /// Plain text from the user.
    Text(String),
    /// Text with an explicit source.
    Full(FixturePromptObject),
}

/// A queued send with its source.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixturePromptObject {
    /// The prompt.
    pub text: String,
    /// Who sent it.
    #[serde(default = "default_source")]
    pub source: String,
}

fn default_source() -> String {
    "user".to_owned()
}

impl FixturePrompt {
    /// The prompt text.
    pub fn text(&self) -> &str {
        match self {
            FixturePrompt::Text(text) => text,
            FixturePrompt::Full(full) => &full.text,
        }
    }

    /// Who sent it.
    pub fn source(&self) -> &str {
        match self {
            FixturePrompt::Text(_) => "user",
            FixturePrompt::Full(full) => &full.source,
        }
    }
}

/// One scripted model reply.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureStep {
    /// Reply text.
    #[serde(default)]
    pub text: Option<String>,
    /// Tool calls.
    #[serde(default)]
    pub tool_calls: Option<Vec<FixtureToolCall>>,
    /// A simulated provider failure instead of a reply.
    #[serde(default)]
    pub error: Option<FixtureStepError>,
    /// The token usage the provider reports for this reply (contracts §6),
    /// so a replay can cross the context threshold and compact.
    #[serde(default)]
    pub usage: Option<TokenUsage>,
}

/// A scripted provider failure: a message, or what the provider answered.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum FixtureStepError {
    /// A failure dsh reports with this message and no provider answer (a
    /// broken connection, a timeout).
    Message(String),
    /// The provider refused the request with an HTTP status.
    Provider(FixtureProviderError),
}

/// `{"status": 429, "message": "…"}`: the provider's refusal, typed as the
/// real provider client types it (category from the status).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureProviderError {
    /// The HTTP status.
    pub status: u16,
    /// The provider's own error message (the body's `error.message`).
    #[serde(default)]
    pub message: String,
    /// The `Retry-After` the provider sent, in seconds.
    #[serde(default)]
    pub retry_after_secs: Option<f64>,
    /// The endpoint's `host:port`, as a real provider would name it.
    #[serde(default)]
    pub gateway: Option<String>,
}

impl FixtureStepError {
    /// The model error the scripted model returns for this step.
    pub fn to_model_error(&self) -> ModelError {
        match self {
            FixtureStepError::Message(message) => ModelError::new(message.clone()),
            FixtureStepError::Provider(provider) => {
                let detail = if provider.message.is_empty() {
                    String::new()
                } else {
                    format!(": {}", provider.message)
                };
                let retry_after = provider
                    .retry_after_secs
                    .filter(|secs| secs.is_finite() && *secs >= 0.0)
                    .map(Duration::from_secs_f64);
                ModelError::new(format!(
                    "HTTP {} from the provider{detail}",
                    provider.status
                ))
                .with_failure(
                    ProviderFailure::from_status(provider.status, provider.message.clone())
                        .with_retry_after(retry_after)
                        .with_gateway(provider.gateway.clone()),
                )
            }
        }
    }
}

/// A scripted tool call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureToolCall {
    /// Call id; defaults to `call_N` in session order.
    #[serde(default)]
    pub id: Option<String>,
    /// dsh's native tool name.
    pub name: String,
    /// Arguments.
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// Why a fixture could not be read. Messages name the file and the JSON path.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// The file could not be read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The file is not valid JSON or does not fit the format.
    #[error("{path}: at `{json_path}`: {message}")]
    Invalid {
        /// The fixture file.
        path: PathBuf,
        /// Where in the document (`model[2].tool_calls[0].name`).
        json_path: String,
        /// What is wrong (with line and column for syntax errors).
        message: String,
    },
}

impl Fixture {
    /// Reads and validates a fixture file.
    pub fn load(path: &Path) -> Result<Fixture, FixtureError> {
        let text = fs_err::read_to_string(path)?;
        Fixture::parse(path, &text)
    }

    /// Parses fixture text; `path` is used in errors only.
    pub fn parse(path: &Path, text: &str) -> Result<Fixture, FixtureError> {
        let deserializer = &mut serde_json::Deserializer::from_str(text);
        let fixture: Fixture = serde_path_to_error::deserialize(deserializer).map_err(|err| {
            FixtureError::Invalid {
                path: path.to_owned(),
                json_path: err.path().to_string(),
                message: err.inner().to_string(),
            }
        })?;
        for (index, step) in fixture.model.iter().enumerate() {
            if step.error.is_some() && (step.text.is_some() || step.tool_calls.is_some()) {
                return Err(FixtureError::Invalid {
                    path: path.to_owned(),
                    json_path: format!("model[{index}]"),
                    message: "a step with `error` cannot also have `text` or `tool_calls`".into(),
                });
            }
            for (call_index, call) in step.tool_calls.iter().flatten().enumerate() {
                if !call.arguments.is_object() {
                    return Err(FixtureError::Invalid {
                        path: path.to_owned(),
                        json_path: format!("model[{index}].tool_calls[{call_index}].arguments"),
                        message: "arguments must be a JSON object".into(),
                    });
                }
            }
        }
        Ok(fixture)
    }

    /// The model steps as a script, with call ids defaulted to `call_1`,
    /// `call_2`, … in session order.
    pub fn script(&self) -> Vec<ScriptStep> {
        let mut next_id = 0usize;
        self.model
            .iter()
            .map(|step| match &step.error {
                Some(error) => ScriptStep::Error(error.to_model_error()),
                None => ScriptStep::Reply(ModelReply {
                    text: step.text.clone().unwrap_or_default(),
                    tool_calls: step
                        .tool_calls
                        .iter()
                        .flatten()
                        .map(|call| {
                            next_id += 1;
                            ToolCall {
                                id: call.id.clone().unwrap_or_else(|| format!("call_{next_id}")),
                                name: call.name.clone(),
                                arguments: call.arguments.clone(),
                            }
                        })
                        .collect(),
                    usage: step.usage,
                    thinking: None,
                }),
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_model::FailureCategory;

    #[test]
    fn an_error_step_is_a_message_or_a_typed_provider_refusal() {
        let fixture = Fixture::parse(
            Path::new("f.json"),
            r#"{"prompts": ["hi"], "model": [
                {"error": "the stream broke"},
                {"error": {"status": 429, "message": "slow down", "retry_after_secs": 2}},
                {"error": {"status": 529, "gateway": "127.0.0.1:9"}}
            ]}"#,
        )
        .unwrap();
        let errors: Vec<ModelError> = fixture
            .script()
            .into_iter()
            .map(|step| match step {
                ScriptStep::Error(error) => error,
                ScriptStep::Reply(reply) => panic!("a reply: {reply:?}"),
            })
            .collect();
        assert_eq!(errors[0].message, "the stream broke");
        assert_eq!(errors[0].failure, None);
        assert_eq!(errors[0].category(), FailureCategory::Unknown);
        assert_eq!(errors[1].message, "HTTP 429 from the provider: slow down");
        let rate = errors[1].failure.clone().unwrap();
        assert_eq!(rate.category, FailureCategory::RateLimit);
        assert_eq!(rate.retry_after, Some(Duration::from_secs(2)));
        assert_eq!(errors[2].message, "HTTP 529 from the provider");
        let server = errors[2].failure.clone().unwrap();
        assert_eq!(server.category, FailureCategory::ServerError);
        assert_eq!(server.gateway.as_deref(), Some("127.0.0.1:9"));
    }

    #[test]
    fn an_error_object_with_an_unknown_key_is_refused() {
        let err = Fixture::parse(
            Path::new("f.json"),
            r#"{"prompts": ["hi"], "model": [{"error": {"status": 500, "mesage": "x"}}]}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("model[0]"), "{err}");
    }
}
