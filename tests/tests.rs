//! End-to-end tests: the real `dsh` binary and the real loop over fixtures.

#![allow(clippy::unwrap_used)]

mod support;

mod acp_sdk;
mod acp_server;
mod cli_headless;
mod cli_interactive;
mod cli_replay;
mod cli_sessions_safety;
mod cli_signals;
mod conformance_claude;
mod conformance_codex;
mod durability;
mod hook_scenarios;
mod hooks_cmd;
mod native_fixtures;
mod permissions;
mod plugin_scenarios;
mod replay_fixtures;
