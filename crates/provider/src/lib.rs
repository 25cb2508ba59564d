//! dsh's real model providers: Chat Completions and Anthropic Messages
//! over one shared HTTP transport.
//!
//! What this crate is for: [`HttpProvider`] implements [`dsh_model::Model`]
//! over HTTP with streaming (server-sent events) and tool calls, speaking
//! the wire API the settings choose ([`ProviderApi`]): OpenAI-compatible
//! Chat Completions (DeepSeek by default) or Anthropic's Messages API (the
//! OpenAI Responses API is chosen the same way). Retries, timeouts,
//! cancellation, key redaction, the typed failures and the event-stream
//! reading are shared (`transport`); each API supplies only its URL and
//! headers, request body, event accumulator and error types.
//! [`ProviderSettings`] resolves which API, where and how to reach it, and
//! why. Behind the `mock` feature, `mock` (the module) is a scripted
//! loopback server speaking either wire format that records every request,
//! for this crate's tests and the CLI's end-to-end tests.
//!
//! What it is not: no agent loop, no conversation state, no tool execution.
//! It maps one [`dsh_protocol::ModelRequest`] to one request and streams one
//! [`dsh_protocol::ModelReply`] back. (The one thing it remembers across
//! requests is the Anthropic thinking blocks of recent tool calls, which the
//! API wants back and dsh's messages do not carry.)
//!
//! User documentation: `docs/guide/providers.md`.
//!
//! # Settings
//!
//! Resolved by [`ProviderSettings::load`]: built-in defaults, overridden by
//! the `[provider]` table of `$DSH_HOME/config.toml` (`DSH_HOME` defaults to
//! `~/.dsh`; the file is optional; other tables in it belong to other parts
//! of dsh), overridden by environment variables. An unknown key in
//! `[provider]` is an error naming the file and the key; malformed TOML is
//! an error with line and column. An environment variable set to an empty
//! string counts as unset.
//!
//! | `config.toml` `[provider]` key | environment variable | default | meaning |
//! |---|---|---|---|
//! | `api` | `DSH_PROVIDER_API` (and `--provider-api`) | chosen from the keys present | `chat`, `anthropic` or `responses` |
//! | `base_url` | `DSH_BASE_URL`; `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL` for their API | `https://api.deepseek.com` (chat) | requests go to `{base_url}/chat/completions`, `{base_url}/v1/messages` or `{base_url}/responses` |
//! | `model` | `DSH_MODEL` | `deepseek-chat` (chat) | model name sent with each request |
//! | `api_key_env` | — | `DEEPSEEK_API_KEY` (chat) | the variable the API key is read from when `DSH_API_KEY` is unset |
//! | `thinking_budget_tokens` | — | unset | Anthropic extended thinking's budget (≥ 1024) |
//! | — (never in the file) | `DSH_API_KEY`, else `$api_key_env` | none: required | the bearer token |
//! | `request_timeout_secs` | — | `120` | idle timeout: longest wait for response headers and for each next piece of the stream |
//! | `connect_timeout_secs` | — | `10` | longest wait for a connection |
//! | `max_retries` | — | `3` | retries after the first attempt on 429, 5xx and connection failures |
//! | `max_tokens` | — | unset (Anthropic: 8192) | `max_tokens` sent with each request |
//! | `temperature` | — | unset | `temperature` sent with each request (0.0–2.0) |
//! | `max_reply_mib` | — | `16` | the most one reply may hold (text, tool-call arguments and thinking together), in MiB |
//!
//! Example:
//!
//! ```toml
//! [provider]
//! base_url = "http://localhost:11434/v1"
//! model = "qwen2.5-coder"
//! api_key_env = "OLLAMA_API_KEY"
//! max_retries = 1
//! ```
//!
//! The API key is deliberately not accepted in `config.toml`: secrets stay
//! in the environment. On Linux dsh then moves them out of its own
//! environment block at start-up (see [`key_handoff`]): hooks and tool
//! commands cannot read them from `/proc/<dsh pid>/environ`.
//!
//! Without `api`, `DSH_PROVIDER_API` or `--provider-api`: a Chat
//! Completions key (`DSH_API_KEY`, `$api_key_env`) or a configured
//! `base_url`/`model` means `chat`; else `ANTHROPIC_API_KEY` means
//! `anthropic`; else `OPENAI_API_KEY` means `responses`; else `chat`. Each
//! API has its own default base URL, model and key variable
//! ([`ProviderApi`]); [`SettingOrigins`] says where each came from.
//!
//! # Behaviour (Chat Completions; Anthropic in `anthropic.rs`)
//!
//! - Request: `model`, `messages` (system/user/assistant with
//!   `tool_calls`/tool with `tool_call_id`), `tools` (as `function` tools,
//!   omitted when empty), `stream: true`, `stream_options.include_usage`,
//!   and `max_tokens`/`temperature` when set. An assistant message that
//!   only calls tools is sent with `content: null`.
//! - Streaming: `delta.content` pieces go to [`dsh_model::StreamSink::text_delta`]
//!   as they arrive; `delta.tool_calls` are accumulated by `index` (id and
//!   name from the first fragment, `arguments` concatenated); usage from the
//!   final chunk is reported. `[DONE]` ends the reply; a body that ends after
//!   a `finish_reason` but before `[DONE]` is accepted too. SSE comments
//!   (keep-alives) are ignored. A server that answers with one
//!   `application/json` completion instead of a stream is understood.
//! - Tool-call arguments: valid JSON becomes that value; an empty string
//!   becomes `{}`; anything else is kept verbatim as a JSON **string**. Bad
//!   arguments are the model's mistake, not a transport failure: the tool
//!   registry rejects a non-object with a message the model can act on, and
//!   the original text goes back to the model unchanged in the next request.
//! - Failures, each a [`dsh_model::ModelError`]:
//!   401/403 names `DSH_API_KEY` and the configured key variable; 429 and
//!   5xx are retried up to `max_retries` times with exponential backoff
//!   (0.5 s, 1 s, 2 s, … capped at 30 s) or the server's `Retry-After`
//!   seconds (capped at 60 s; the HTTP-date form falls back to backoff),
//!   reporting each retry to [`dsh_model::StreamSink::retrying`], then fail
//!   naming the status and an excerpt of the body; connection failures
//!   before any response are retried the same way; other statuses fail at
//!   once. Timeouts are not retried (a hung server would multiply the wait).
//!   A stream that breaks, stalls past the idle timeout, ends early or
//!   carries a malformed chunk fails with the text streamed so far in
//!   `partial_text`; it is not retried, since that text already reached the
//!   sink. A reply whose text, tool-call arguments and thinking together
//!   grow past `max_reply_mib` fails the same way the moment it passes
//!   the limit ([`ProviderError::ReplyTooLarge`]'s message), on every API;
//!   the 16 MiB bound on one event-stream line is separate.
//! - Cancellation: dropping the future drops the connection.
//! - A proxy from the environment is bypassed for loopback base URLs.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

mod anthropic;
mod api;
mod client;
mod error;
pub mod key_handoff;
#[cfg(feature = "mock")]
pub mod mock;
mod responses;
mod settings;
mod stream;
mod transport;
mod wire;

pub use client::{HttpProvider, OpenAiProvider, ProviderError};
pub use settings::{
    ANTHROPIC_API_KEY_ENV, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL, CONFIG_FILE_NAME,
    DEFAULT_API_KEY_ENV, DEFAULT_BASE_URL, DEFAULT_MAX_REPLY_MIB, DEFAULT_MODEL,
    ENV_ANTHROPIC_BASE_URL, ENV_API_KEY, ENV_BASE_URL, ENV_DSH_HOME, ENV_MODEL,
    ENV_OPENAI_BASE_URL, ENV_PROVIDER_API, OPENAI_API_KEY_ENV, OPENAI_BASE_URL, OPENAI_MODEL,
    ProviderApi, ProviderSettings, SettingOrigin, SettingOrigins, SettingsError, accepted_keys,
    provider_table_keys, read_config_text, resolve_dsh_home,
};
