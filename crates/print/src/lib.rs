//! Claude Code's print mode: its command line, its output messages.
//!
//! What this crate is for: speaking `claude -p` to scripts and SDKs on top
//! of a dsh session.
//! - [`PrintFlags`] / [`OutputFormat`]: `-p` as a switch, `--output-format
//!   text|json|stream-json`, `--verbose`, `--include-partial-messages`,
//!   `--system-prompt`, `--append-system-prompt`, `--session-id`,
//!   `--fork-session`, `--fallback-model`, `--setting-sources`, with
//!   Claude Code's checks ([`PrintFlags::check`]).
//! - [`Translator`]: dsh's session events (what the agent's `on_event`
//!   observer receives) and streamed text (`on_text`) → Claude Code's stdout
//!   [`Message`]s: `system`/`init` on each `turn/start`, one `assistant`
//!   line per content block, `user` tool results, `system`/
//!   `permission_denied`, `stream_event` with partial messages, and the
//!   [`ResultMessage`] on each `turn/end`.
//! - [`PrintModel`]: wraps the session's model so that the model sees
//!   Claude Code's tool names ([`ToolNaming::ClaudeCode`]: `Bash`, `Read`,
//!   …; dsh's canonical names stay inside the session), every request's
//!   tokens, API time and error land in a [`Meter`] (the translator's
//!   `usage`, `modelUsage`, `total_cost_usd`, `duration_api_ms`,
//!   `api_error_status`), and `--fallback-model` is asked when the provider
//!   is overloaded.
//!
//! A front end wires them like this:
//! ```no_run
//! # use std::sync::{Arc, Mutex};
//! # fn wire(model: Arc<dyn dsh_model::Model>, id: &str, init: dsh_print::InitInfo) {
//! use dsh_print::{Meter, Options, PrintModel, ToolNaming, Translator};
//! let meter = Meter::new();
//! let model = PrintModel::wrap(model, ToolNaming::ClaudeCode, meter.clone(), None);
//! let options = Options { partial_messages: false, naming: ToolNaming::ClaudeCode };
//! let translator = Arc::new(Mutex::new(Translator::new(id, init, options, meter, Some(50))));
//! // on_event: for message in translator.lock()?.event(&event) { write(message.to_line()) }
//! // on_text:  for message in translator.lock()?.text_delta(delta) { write(message.to_line()) }
//! # }
//! ```
//!
//! Prices come from `dsh_model::pricing`; a model without a known price
//! costs 0 with `costBasis: "unknown"` in its `modelUsage` row
//! ([`Translator::unpriced_models`] names them for a note).
//!
//! What it is not: the session itself (dsh-core assembles it, dsh-agent
//! runs it), the stdin side (`--input-format stream-json` and the SDK
//! control protocol), or Codex's `exec`.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

mod flags;
pub mod lines;
mod messages;
mod model;
mod translate;

pub use flags::{FlagError, OutputFormat, PrintFlags};
pub use messages::{
    CLAUDE_CODE_VERSION, Message, ModelUsage, ModelUsageRows, PermissionDenial, ResultMessage,
    ServerToolUse, Usage,
};
pub use model::{ApiError, Meter, ModelTokens, PrintModel, ToolNaming};
pub use translate::{InitInfo, Options, Translator};
