//! dsh's MCP client.
//!
//! What this crate is for: reading MCP server configuration where Claude
//! Code and Codex users keep it ([`config`]), starting and supervising the
//! servers for one session on the official Rust SDK (`rmcp`) ([`manager`]),
//! and offering each server tool to the model through dsh's tool registry as
//! `mcp__<server>__<tool>` ([`tool`]).
//!
//! What it is not: it does not decide anything about a call (permission
//! rules and hooks see MCP calls through the registry like any other tool),
//! it does not build hook payloads (the bridges derive Claude Code's and
//! Codex's shapes from the canonical result value, see [`tool`]), and it
//! does not serve MCP. Only stdio servers are connected; remote (`http`,
//! `sse`) entries are listed and reported as unsupported.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

pub mod config;
mod elicit;
mod entry;
mod expand;
mod files;
pub mod limit;
pub mod manager;
pub mod oversize;
mod session;
pub mod tool;

pub use config::{
    ConfigError, DisabledServer, Discovered, McpConfigArg, McpDiscovery, Recorded, ServerConfig,
    ServerSource, ServerTransport, discover,
};
pub use entry::McpServerEntry;
pub use limit::{MAX_TOKENS_VAR, ResultStore};
pub use manager::{
    CallError, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, McpManager, McpOptions, Server,
    ServerReport, ServerStatus,
};
pub use session::McpSession;
pub use tool::{
    CallResult, ContentBlock, McpStandIn, McpTool, TextBlock, bound_result, content_text,
    qualified_name, render_result,
};
