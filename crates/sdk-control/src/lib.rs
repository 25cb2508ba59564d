//! The Claude Agent SDK's control protocol, as plain serde types.
//!
//! What this crate is for: the shapes that travel between an application
//! built on the official Claude Agent SDK (TypeScript
//! `@anthropic-ai/claude-agent-sdk`, Python `claude-agent-sdk`) and the CLI
//! it spawns with `--input-format stream-json --output-format stream-json`:
//! the user-message lines the SDK writes, the `control_request` /
//! `control_response` envelopes in both directions, and the payloads of
//! `initialize`, `can_use_tool`, `hook_callback`, `mcp_message`,
//! `interrupt`, `set_permission_mode` and `set_model`. The facts come from
//! the captures of Claude Code 2.1.328 under both SDKs
//! (`shared/reference/claude-agent-sdk/PROTOCOL.md`); key order on the wire
//! follows them.
//!
//! What it is not: no I/O, no tokio, no session. Reading stdin, running
//! turns and acting on a request is the driver's job (`dsh-sdk`). Where the
//! SDK is lenient this crate is too (unknown keys are kept or ignored);
//! where a line cannot be a protocol message, [`parse_line`] says why.

#![deny(missing_docs)]

mod inbound;
mod mcp;
mod outbound;

pub use inbound::*;
pub use mcp::*;
pub use outbound::*;

/// The version of Claude Code whose protocol dsh speaks: what
/// `system/init.claude_code_version` and the initialize answer report
/// (the Python SDK reads the CLI's version from there).
pub const CLAUDE_CODE_PROTOCOL_VERSION: &str = "2.1.328";
